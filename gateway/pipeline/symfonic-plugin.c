/* symfonic-plugin.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-plugin-private.h"

/**
 * SymfonicPlugin:
 *
 * A loaded plugin module: its name, file and the types it registered.
 * Plugins stay resident: the types they registered live as long as the
 * process.
 */
struct _SymfonicPlugin
{
  GObject           parent_instance;

  /* weak: the registry owns its plugins */
  SymfonicRegistry *registry;
  char             *name;
  char             *filename;
  char             *version;
  char             *license;
  char             *description;
};

/**
 * SymfonicPluginClass:
 * @parent_class: the parent class
 *
 * The class of #SymfonicPlugin, a final type: there is nothing to override.
 */
G_DEFINE_FINAL_TYPE (SymfonicPlugin, symfonic_plugin, G_TYPE_OBJECT)

static void
symfonic_plugin_finalize (GObject *object)
{
  SymfonicPlugin *self = (SymfonicPlugin *) object;

  g_free (self->name);
  g_free (self->filename);
  g_free (self->version);
  g_free (self->license);
  g_free (self->description);

  G_OBJECT_CLASS (symfonic_plugin_parent_class)->finalize (object);
}

static void
symfonic_plugin_class_init (SymfonicPluginClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = symfonic_plugin_finalize;
}

static void
symfonic_plugin_init (SymfonicPlugin *self)
{
}

SymfonicPlugin *
symfonic_plugin_new (SymfonicRegistry         *registry,
                     const SymfonicPluginInfo *info,
                     const char               *filename)
{
  SymfonicPlugin *self = g_object_new (SYMFONIC_TYPE_PLUGIN, NULL);

  self->registry = registry;
  self->name = g_strdup (info->name);
  self->filename = g_strdup (filename);
  self->version = g_strdup (info->version);
  self->license = g_strdup (info->license);
  self->description = g_strdup (info->description);

  return self;
}

/**
 * symfonic_plugin_get_name:
 * @self: a #SymfonicPlugin
 *
 * Gets the plugin's name, unique in its registry.
 *
 * Returns: the plugin's name
 */
const char *
symfonic_plugin_get_name (SymfonicPlugin *self)
{
  g_return_val_if_fail (SYMFONIC_IS_PLUGIN (self), NULL);

  return self->name;
}

/**
 * symfonic_plugin_get_filename:
 * @self: a #SymfonicPlugin
 *
 * Gets the file the plugin was loaded from: a module or a script.
 *
 * Returns: (nullable): the module's file, %NULL for types registered in process
 */
const char *
symfonic_plugin_get_filename (SymfonicPlugin *self)
{
  g_return_val_if_fail (SYMFONIC_IS_PLUGIN (self), NULL);

  return self->filename;
}

/**
 * symfonic_plugin_get_version:
 * @self: a #SymfonicPlugin
 *
 * Gets the plugin's own version, as its info declares it.
 *
 * Returns: (nullable): the plugin's version
 */
const char *
symfonic_plugin_get_version (SymfonicPlugin *self)
{
  g_return_val_if_fail (SYMFONIC_IS_PLUGIN (self), NULL);

  return self->version;
}

/**
 * symfonic_plugin_get_license:
 * @self: a #SymfonicPlugin
 *
 * Gets the license the plugin declares.
 *
 * Returns: (nullable): the plugin's license, an SPDX identifier
 */
const char *
symfonic_plugin_get_license (SymfonicPlugin *self)
{
  g_return_val_if_fail (SYMFONIC_IS_PLUGIN (self), NULL);

  return self->license;
}

/**
 * symfonic_plugin_get_description:
 * @self: a #SymfonicPlugin
 *
 * Gets the one line on what the plugin provides, as its info declares it.
 *
 * Returns: (nullable): what the plugin provides
 */
const char *
symfonic_plugin_get_description (SymfonicPlugin *self)
{
  g_return_val_if_fail (SYMFONIC_IS_PLUGIN (self), NULL);

  return self->description;
}

/**
 * symfonic_plugin_register_type:
 * @self: a #SymfonicPlugin
 * @type: a type implementing #SymfonicStage, #SymfonicSource or
 *   #SymfonicMeterStore
 * @name: the name pipeline files use in `type=`
 * @error: return location for a #GError
 *
 * Registers a stage, source or meter store type provided by this plugin.
 *
 * Returns: %TRUE on success; %FALSE if @name is taken
 */
gboolean
symfonic_plugin_register_type (SymfonicPlugin  *self,
                               GType            type,
                               const char      *name,
                               GError         **error)
{
  g_return_val_if_fail (SYMFONIC_IS_PLUGIN (self), FALSE);
  g_return_val_if_fail (SYMFONIC_IS_REGISTRY (self->registry), FALSE);

  return symfonic_registry_register_type (self->registry, type, name, self, error);
}

/**
 * symfonic_plugin_add_script_loader: (skip)
 * @self: a #SymfonicPlugin
 * @suffix: the end of the file names it loads, such as ".py"
 * @language: the scripts' language, as symfonic-inspect shows it
 * @load: runs one script
 * @adopt: (nullable): told of each type a script registers
 * @user_data: data for @load and @adopt
 *
 * Makes this plugin the loader of the script plugins ending in @suffix in
 * its registry's plugin folders. See
 * symfonic_registry_add_script_loader().
 */
void
symfonic_plugin_add_script_loader (SymfonicPlugin         *self,
                                   const char             *suffix,
                                   const char             *language,
                                   SymfonicScriptLoadFunc  load,
                                   SymfonicScriptTypeFunc  adopt,
                                   gpointer                user_data)
{
  g_return_if_fail (SYMFONIC_IS_PLUGIN (self));
  g_return_if_fail (SYMFONIC_IS_REGISTRY (self->registry));

  symfonic_registry_add_script_loader (self->registry, suffix, language, load, adopt, user_data);
}

/**
 * symfonic_plugin_set_script_path_func: (skip)
 * @self: a #SymfonicPlugin
 * @suffix: the suffix this plugin loads scripts of, as given to
 *   symfonic_plugin_add_script_loader()
 * @add_path: adds a folder its scripts import from
 *
 * Lets the scripts this plugin loads import from folders a pipeline file
 * names. See symfonic_registry_set_script_path_func().
 */
void
symfonic_plugin_set_script_path_func (SymfonicPlugin         *self,
                                      const char             *suffix,
                                      SymfonicScriptPathFunc  add_path)
{
  g_return_if_fail (SYMFONIC_IS_PLUGIN (self));
  g_return_if_fail (SYMFONIC_IS_REGISTRY (self->registry));

  symfonic_registry_set_script_path_func (self->registry, suffix, add_path);
}
