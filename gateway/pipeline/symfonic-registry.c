/* symfonic-registry.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdlib.h>

#include <glib/gi18n-lib.h>

#include "symfonic-builtin-private.h"
#include "symfonic-error.h"
#include "symfonic-paths-private.h"
#include "symfonic-plugin-private.h"
#include "symfonic-registry.h"
#include "symfonic-source.h"
#include "symfonic-stage.h"
#include "symfonic-store.h"

/**
 * SymfonicRegistry:
 *
 * Stage, source and store types by the name pipeline files use, and the
 * plugins that provided them.
 *
 * The library's own store type, `memory` (#SymfonicMemoryStore), is built
 * in: every registry finds it, none lists it among the registered types,
 * and no plugin may take its name.
 *
 * Plugins are shared modules exporting a #SymfonicPluginInfo (see
 * SYMFONIC_PLUGIN_DEFINE()). Loading a module runs its constructors; the
 * registry checks its API version and the sanity of its info before it
 * calls the entry point, keeps every loaded module resident, and refuses a
 * second type or plugin of a name already taken, naming both owners.
 */
struct _SymfonicRegistry
{
  GObject     parent_instance;

  GMutex      lock;
  /* name -> Entry */
  GHashTable *types;
  GPtrArray  *plugins;
  /* canonical file names already loaded */
  GHashTable *files;
  /* ScriptLoader, in the order added */
  GPtrArray  *script_loaders;
  /* the library's own types were registered by a scan */
};

typedef struct
{
  char                   *suffix;
  char                   *language;
  SymfonicScriptLoadFunc  load;
  SymfonicScriptTypeFunc  adopt;
  SymfonicScriptPathFunc  add_path;
  gpointer                user_data;
} ScriptLoader;

/* The script plugin being loaded: the types it registers, on whatever
 * thread its interpreter runs, are its own, and its loader is told of
 * each. Loads happen one at a time. */
static GMutex script_load_lock;
static struct
{
  SymfonicRegistry *registry;
  SymfonicPlugin   *plugin;
  ScriptLoader     *loader;
} script_load;

typedef struct
{
  GType           type;
  SymfonicPlugin *plugin;
} Entry;

/**
 * SymfonicRegistryClass:
 * @parent_class: the parent class
 *
 * The class of #SymfonicRegistry, a final type: there is nothing to override.
 */
G_DEFINE_FINAL_TYPE (SymfonicRegistry, symfonic_registry, G_TYPE_OBJECT)

static void
entry_free (gpointer data)
{
  Entry *entry = data;

  g_clear_object (&entry->plugin);
  g_free (entry);
}

static void
script_loader_free (gpointer data)
{
  ScriptLoader *loader = data;

  g_free (loader->suffix);
  g_free (loader->language);
  g_free (loader);
}

static void
symfonic_registry_finalize (GObject *object)
{
  SymfonicRegistry *self = (SymfonicRegistry *) object;

  g_ptr_array_unref (self->script_loaders);
  g_hash_table_unref (self->types);
  g_ptr_array_unref (self->plugins);
  g_hash_table_unref (self->files);
  g_mutex_clear (&self->lock);

  G_OBJECT_CLASS (symfonic_registry_parent_class)->finalize (object);
}

static void
symfonic_registry_class_init (SymfonicRegistryClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = symfonic_registry_finalize;
}

static void
symfonic_registry_init (SymfonicRegistry *self)
{
  g_mutex_init (&self->lock);
  self->types = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, entry_free);
  self->plugins = g_ptr_array_new_with_free_func (g_object_unref);
  self->files = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->script_loaders = g_ptr_array_new_with_free_func (script_loader_free);
}

/**
 * symfonic_registry_new:
 *
 * Creates an empty registry. Most hosts want
 * symfonic_registry_get_default().
 *
 * Returns: (transfer full): a new #SymfonicRegistry
 */
SymfonicRegistry *
symfonic_registry_new (void)
{
  return g_object_new (SYMFONIC_TYPE_REGISTRY, NULL);
}

/**
 * symfonic_registry_get_default:
 *
 * The process-wide registry, which pipeline files resolve `type=` in.
 *
 * Returns: (transfer none): the default registry
 */
SymfonicRegistry *
symfonic_registry_get_default (void)
{
  static gsize instance = 0;

  if (g_once_init_enter (&instance))
    g_once_init_leave (&instance, (gsize) symfonic_registry_new ());

  return (SymfonicRegistry *) instance;
}

/* Symlinks resolved, so one module reached by two paths (a merged /usr, a
 * linked plugin folder) is loaded once rather than refused as a twin. */
static char *
resolve_path (const char *path)
{
  char *resolved = realpath (path, NULL);
  char *copy;

  if (resolved == NULL)
    return g_canonicalize_filename (path, NULL);

  copy = g_strdup (resolved);
  free (resolved);
  return copy;
}

/* Bounds on what a plugin's info may hold: a name is what pipeline authors
 * and logs see, so it is a short identifier; the rest is one line of text. */
#define MAX_NAME_LENGTH 64
#define MAX_TEXT_LENGTH 1024

static gboolean
is_plugin_name (const char *name)
{
  gsize length = strnlen (name, MAX_NAME_LENGTH + 1);

  if (length == 0 || length > MAX_NAME_LENGTH || !g_ascii_isalnum (name[0]))
    return FALSE;
  for (gsize i = 0; i < length; i++)
    {
      if (!g_ascii_isalnum (name[i]) && name[i] != '-' && name[i] != '_' && name[i] != '.')
        return FALSE;
    }

  return TRUE;
}

/* One line of UTF-8, read no further than the bound. */
static gboolean
is_text_line (const char *text)
{
  gsize length;

  if (text == NULL)
    return TRUE;
  length = strnlen (text, MAX_TEXT_LENGTH + 1);
  if (length > MAX_TEXT_LENGTH || !g_utf8_validate_len (text, length, NULL))
    return FALSE;
  for (const char *p = text; *p != '\0'; p = g_utf8_next_char (p))
    {
      if (g_unichar_iscntrl (g_utf8_get_char (p)))
        return FALSE;
    }

  return TRUE;
}

static const char *
owner_name (SymfonicPlugin *plugin)
{
  if (plugin == NULL)
    return _("the application");

  return symfonic_plugin_get_filename (plugin) != NULL
    ? symfonic_plugin_get_filename (plugin)
    : symfonic_plugin_get_name (plugin);
}

/* The library's own types, which every pipeline file can name without a
 * plugin: the embedded default must need nothing loaded. */
static GType
builtin_type (const char *name)
{
  for (const SymfonicBuiltinType *builtin = symfonic_builtin_types; builtin->name != NULL; builtin++)
    {
      if (g_str_equal (name, builtin->name))
        return builtin->get_type ();
    }

  return G_TYPE_INVALID;
}

static gpointer
list_builtin_names (gpointer data)
{
  g_autoptr(GStrvBuilder) names = g_strv_builder_new ();

  for (const SymfonicBuiltinType *builtin = symfonic_builtin_types; builtin->name != NULL; builtin++)
    g_strv_builder_add (names, builtin->name);

  return g_strv_builder_end (names);
}

/**
 * symfonic_registry_list_builtin_types:
 *
 * Lists the types built into the library, which every registry finds by
 * name without listing them: `memory`, the in-process store, and the
 * `openai` and `anthropic` sources.
 *
 * Returns: (transfer none) (array zero-terminated=1): the built-in names
 */
const char * const *
symfonic_registry_list_builtin_types (void)
{
  static GOnce names = G_ONCE_INIT;

  return g_once (&names, list_builtin_names, NULL);
}

/**
 * symfonic_registry_register_type:
 * @self: a #SymfonicRegistry
 * @type: a type implementing #SymfonicStage, #SymfonicSource, or a store
 *   role (#SymfonicMeterStore, #SymfonicStreamCapStore, #SymfonicRunStore)
 * @name: the name pipeline files use in `type=`
 * @plugin: (nullable): the plugin providing @type
 * @error: return location for a #GError
 *
 * Registers @type under @name.
 *
 * Returns: %TRUE on success; %FALSE with %SYMFONIC_ERROR_PLUGIN if @name is
 *   already registered
 */
gboolean
symfonic_registry_register_type (SymfonicRegistry  *self,
                                 GType              type,
                                 const char        *name,
                                 SymfonicPlugin    *plugin,
                                 GError           **error)
{
  g_autoptr(GMutexLocker) locker = NULL;
  Entry *existing;
  Entry *entry;

  g_return_val_if_fail (SYMFONIC_IS_REGISTRY (self), FALSE);
  g_return_val_if_fail (name != NULL && *name != '\0', FALSE);
  g_return_val_if_fail (g_type_is_a (type, SYMFONIC_TYPE_STAGE) ||
                        g_type_is_a (type, SYMFONIC_TYPE_SOURCE) ||
                        symfonic_store_type_plays_a_role (type), FALSE);
  g_return_val_if_fail (G_TYPE_IS_INSTANTIATABLE (type) && !G_TYPE_IS_ABSTRACT (type), FALSE);
  g_return_val_if_fail (plugin == NULL || SYMFONIC_IS_PLUGIN (plugin), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (builtin_type (name) != G_TYPE_INVALID)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN,
                   _("Type “%s” from %s is built into the library"), name, owner_name (plugin));
      return FALSE;
    }

  locker = g_mutex_locker_new (&self->lock);
  existing = g_hash_table_lookup (self->types, name);
  if (existing != NULL)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN,
                   _("Type “%s” from %s is already registered by %s"),
                   name, owner_name (plugin), owner_name (existing->plugin));
      return FALSE;
    }

  entry = g_new0 (Entry, 1);
  entry->type = type;
  entry->plugin = plugin != NULL ? g_object_ref (plugin) : NULL;
  g_hash_table_insert (self->types, g_strdup (name), entry);

  return TRUE;
}

/* Whether @name, the name of the plugin in @filename, is free. A plugin is
 * known by its name in symfonic-inspect, logs and errors, whatever its
 * language, so a C module and a script may not share one either; when one
 * has it already, it is returned in @earlier. */
static gboolean
claim_plugin_name (SymfonicRegistry  *self,
                   const char        *name,
                   const char        *filename,
                   SymfonicPlugin   **earlier,
                   GError           **error)
{
  G_GNUC_UNUSED g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  for (guint i = 0; i < self->plugins->len; i++)
    {
      SymfonicPlugin *other = g_ptr_array_index (self->plugins, i);

      if (g_strcmp0 (symfonic_plugin_get_name (other), name) == 0)
        {
          if (earlier != NULL)
            *earlier = other;
          g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN,
                       _("Plugin “%s” of %s is already loaded from %s"),
                       name, filename, owner_name (other));
          return FALSE;
        }
    }

  return TRUE;
}

/* As symfonic_registry_load_plugin(); when a plugin of the same name is
 * loaded already, also returns it in @earlier. */
static SymfonicPlugin *
load_plugin (SymfonicRegistry  *self,
             const char        *filename,
             SymfonicPlugin   **earlier,
             GError           **error)
{
  g_autofree char *canonical = NULL;
  g_autoptr(SymfonicPlugin) plugin = NULL;
  const SymfonicPluginInfo *info = NULL;
  GModule *module;

  canonical = resolve_path (filename);
  g_mutex_lock (&self->lock);
  plugin = g_hash_table_lookup (self->files, canonical);
  g_mutex_unlock (&self->lock);
  if (plugin != NULL)
    return g_steal_pointer (&plugin);

  module = g_module_open (canonical, G_MODULE_BIND_LAZY | G_MODULE_BIND_LOCAL);
  if (module == NULL)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN,
                   _("Cannot load plugin %s: %s"), canonical, g_module_error ());
      return NULL;
    }

  if (!g_module_symbol (module, "symfonic_plugin_info", (gpointer *) &info) || info == NULL)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN,
                   _("%s is not a plugin: it exports no symfonic_plugin_info"), canonical);
      g_module_close (module);
      return NULL;
    }

  /* Checked before any of the module's code runs: a plugin built against
   * another interface would misread every struct we hand it. */
  if (info->api_version != SYMFONIC_PLUGIN_API_VERSION)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN,
                   _("Plugin %s was built for plugin API %u, this gateway provides %u"),
                   canonical, info->api_version, SYMFONIC_PLUGIN_API_VERSION);
      g_module_close (module);
      return NULL;
    }

  if (info->name == NULL || info->init == NULL)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN,
                   _("Plugin %s declares no name or no entry point"), canonical);
      g_module_close (module);
      return NULL;
    }

  /* Its strings reach logs, symfonic-inspect and error messages: a module
   * that garbles them would garble those, and is no plugin to trust. */
  if (!is_plugin_name (info->name) || !is_text_line (info->version) ||
      !is_text_line (info->license) || !is_text_line (info->description))
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN,
                   _("Plugin %s declares a malformed name, version, license or description (a name is up to %u "
                     "letters, digits, “-”, “_” or “.”; the rest one line of UTF-8 up to %u bytes)"),
                   canonical, MAX_NAME_LENGTH, MAX_TEXT_LENGTH);
      g_module_close (module);
      return NULL;
    }

  if (!claim_plugin_name (self, info->name, canonical, earlier, error))
    {
      g_module_close (module);
      return NULL;
    }

  /* Types a module registers can never be unregistered. */
  g_module_make_resident (module);
  plugin = symfonic_plugin_new (self, info, canonical);
  if (!info->init (plugin, error))
    return NULL;

  g_mutex_lock (&self->lock);
  g_ptr_array_add (self->plugins, g_object_ref (plugin));
  g_hash_table_insert (self->files, g_steal_pointer (&canonical), plugin);
  g_mutex_unlock (&self->lock);

  return plugin;
}

/**
 * symfonic_registry_load_plugin:
 * @self: a #SymfonicRegistry
 * @filename: a plugin module
 * @error: return location for a #GError
 *
 * Loads one plugin module, checks its API version and runs its entry point.
 * Loading a file that is already loaded does nothing.
 *
 * Returns: (transfer none) (nullable): the plugin, or %NULL with @error set
 */
SymfonicPlugin *
symfonic_registry_load_plugin (SymfonicRegistry  *self,
                               const char        *filename,
                               GError           **error)
{
  g_return_val_if_fail (SYMFONIC_IS_REGISTRY (self), NULL);
  g_return_val_if_fail (filename != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return load_plugin (self, filename, NULL, error);
}

static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* The files of @directory whose names end in @suffix, in name order;
 * none for a missing directory. */
static GPtrArray *
list_files (const char  *directory,
            const char  *suffix,
            GError     **error)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GDir) dir = NULL;
  g_autoptr(GError) local_error = NULL;
  const char *name;

  dir = g_dir_open (directory, 0, &local_error);
  if (dir == NULL)
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return g_steal_pointer (&names);
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }

  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = NULL;

      if (!g_str_has_suffix (name, suffix))
        continue;
      path = g_build_filename (directory, name, NULL);
      /* opening a FIFO or a device would block the scan, or read forever */
      if (!g_file_test (path, G_FILE_TEST_IS_REGULAR))
        {
          g_warning (_("Skipping %s: not a regular file"), path);
          continue;
        }
      g_ptr_array_add (names, g_steal_pointer (&path));
    }
  g_ptr_array_sort (names, compare_names);

  return g_steal_pointer (&names);
}

/**
 * symfonic_registry_add_script_loader: (skip)
 * @self: a #SymfonicRegistry
 * @suffix: the end of the file names it loads, such as ".py"
 * @language: the scripts' language, as symfonic-inspect shows it
 * @load: runs one script
 * @adopt: (nullable): told of each type a script registers, before it is
 *   registered; %NULL registers them all as they are
 * @user_data: data for @load and @adopt, kept for the life of the process
 *
 * Lets a language-loader plugin take the script plugins of plugin folders:
 * after the modules of every folder are loaded, each file ending in
 * @suffix is given to @load. A script is listed as a plugin named after
 * its file. The core knows no language: @adopt is where the loader
 * declares the thread affinity of the stage types its scripts register
 * (symfonic_stage_type_set_main_context()), and refuses those its language
 * cannot serve. The folder of the library's own typelib, the build's or
 * the installed one, goes first on the introspection search path, so that
 * scripts find `Symfonic` without `GI_TYPELIB_PATH`.
 */
void
symfonic_registry_add_script_loader (SymfonicRegistry       *self,
                                     const char             *suffix,
                                     const char             *language,
                                     SymfonicScriptLoadFunc  load,
                                     SymfonicScriptTypeFunc  adopt,
                                     gpointer                user_data)
{
  ScriptLoader *loader;

  g_return_if_fail (SYMFONIC_IS_REGISTRY (self));
  g_return_if_fail (suffix != NULL && *suffix != '\0');
  g_return_if_fail (language != NULL);
  g_return_if_fail (load != NULL);

  symfonic_paths_prepend_typelib_dir ();

  loader = g_new0 (ScriptLoader, 1);
  loader->suffix = g_strdup (suffix);
  loader->language = g_strdup (language);
  loader->load = load;
  loader->adopt = adopt;
  loader->user_data = user_data;

  g_mutex_lock (&self->lock);
  g_ptr_array_add (self->script_loaders, loader);
  g_mutex_unlock (&self->lock);
}

static ScriptLoader *
find_script_loader (SymfonicRegistry *self,
                    const char       *suffix)
{
  ScriptLoader *found = NULL;

  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->script_loaders->len && found == NULL; i++)
    {
      ScriptLoader *loader = g_ptr_array_index (self->script_loaders, i);

      if (g_str_equal (loader->suffix, suffix))
        found = loader;
    }
  g_mutex_unlock (&self->lock);

  return found;
}

/**
 * symfonic_registry_set_script_path_func: (skip)
 * @self: a #SymfonicRegistry
 * @suffix: the suffix of a script loader added with
 *   symfonic_registry_add_script_loader()
 * @add_path: adds a folder the loader's scripts import from
 *
 * Lets the loader of the scripts ending in @suffix take the folders a
 * pipeline file names for them (`[gateway] python-path` for `.py`): the
 * pipeline loader calls symfonic_registry_add_script_path() with each one
 * before the scripts of the file's plugin folders load.
 */
void
symfonic_registry_set_script_path_func (SymfonicRegistry       *self,
                                        const char             *suffix,
                                        SymfonicScriptPathFunc  add_path)
{
  ScriptLoader *loader;

  g_return_if_fail (SYMFONIC_IS_REGISTRY (self));
  g_return_if_fail (suffix != NULL);

  loader = find_script_loader (self, suffix);
  g_return_if_fail (loader != NULL);
  loader->add_path = add_path;
}

/**
 * symfonic_registry_add_script_path:
 * @self: a #SymfonicRegistry
 * @suffix: the suffix of the scripts, such as ".py"
 * @folder: an absolute folder they may import from, such as a Python
 *   virtualenv's `site-packages`
 * @error: return location for a #GError
 *
 * Hands @folder to the loader of the scripts ending in @suffix, for the
 * scripts that load from then on; it stays for the life of the process.
 *
 * Returns: %TRUE on success; %FALSE with @error set when no loader of
 *   @suffix takes folders or it refused this one
 */
gboolean
symfonic_registry_add_script_path (SymfonicRegistry  *self,
                                   const char        *suffix,
                                   const char        *folder,
                                   GError           **error)
{
  ScriptLoader *loader;

  g_return_val_if_fail (SYMFONIC_IS_REGISTRY (self), FALSE);
  g_return_val_if_fail (suffix != NULL, FALSE);
  g_return_val_if_fail (folder != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  loader = find_script_loader (self, suffix);
  if (loader == NULL || loader->add_path == NULL)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN,
                   _("expected a loader of %s scripts that takes folders to import from, found none"), suffix);
      return FALSE;
    }

  return loader->add_path (folder, loader->user_data, error);
}

/* As load_plugin(), for a script: its name, which is its file's, is
 * checked before it runs, since what it registers cannot be taken back. */
static gboolean
load_script (SymfonicRegistry  *self,
             ScriptLoader      *loader,
             const char        *filename,
             SymfonicPlugin   **earlier,
             GError           **error)
{
  g_autofree char *canonical = resolve_path (filename);
  g_autofree char *basename = g_path_get_basename (canonical);
  g_autofree char *description = g_strdup_printf (_("%s stages"), loader->language);
  g_autoptr(SymfonicPlugin) plugin = NULL;
  SymfonicPluginInfo info = {
    .api_version = SYMFONIC_PLUGIN_API_VERSION,
    .version = "",
    .description = description,
  };
  gboolean ok;

  g_mutex_lock (&self->lock);
  ok = g_hash_table_contains (self->files, canonical);
  g_mutex_unlock (&self->lock);
  if (ok)
    return TRUE;

  basename[strlen (basename) - strlen (loader->suffix)] = '\0';
  if (!claim_plugin_name (self, basename, canonical, earlier, error))
    return FALSE;
  info.name = basename;
  plugin = symfonic_plugin_new (self, &info, canonical);

  g_mutex_lock (&script_load_lock);
  script_load.registry = self;
  script_load.plugin = plugin;
  script_load.loader = loader;
  ok = loader->load (canonical, loader->user_data, error);
  script_load.registry = NULL;
  script_load.plugin = NULL;
  script_load.loader = NULL;
  g_mutex_unlock (&script_load_lock);
  if (!ok)
    return FALSE;

  g_mutex_lock (&self->lock);
  g_ptr_array_add (self->plugins, g_object_ref (plugin));
  g_hash_table_insert (self->files, g_steal_pointer (&canonical), plugin);
  g_mutex_unlock (&self->lock);

  return TRUE;
}

/* A scan meets a plugin of a name already loaded: a development copy
 * before the installed one, say. The first one serves. */
static void
note_twin (const char     *filename,
           SymfonicPlugin *earlier)
{
  g_message (_("Not loading %s: plugin “%s” is already loaded from %s"),
             filename, symfonic_plugin_get_name (earlier), owner_name (earlier));
}

/* The script plugins of @directory, each with the loader of its suffix. A
 * script that fails to load is an error: unlike a stray module, it is
 * nothing but a plugin, and its author wants to hear where it broke. In a
 * scan, a script named like a plugin loaded before it is a twin, noted
 * and left alone as a module would be. */
static gboolean
load_scripts (SymfonicRegistry  *self,
              const char        *directory,
              gboolean           scanning,
              GError           **error)
{
  for (guint i = 0; i < self->script_loaders->len; i++)
    {
      ScriptLoader *loader = g_ptr_array_index (self->script_loaders, i);
      g_autoptr(GPtrArray) paths = list_files (directory, loader->suffix, error);

      if (paths == NULL)
        return FALSE;
      for (guint j = 0; j < paths->len; j++)
        {
          const char *path = g_ptr_array_index (paths, j);
          g_autoptr(GError) local_error = NULL;
          SymfonicPlugin *earlier = NULL;

          if (load_script (self, loader, path, &earlier, &local_error))
            continue;
          if (scanning && earlier != NULL)
            {
              note_twin (path, earlier);
              continue;
            }
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
    }

  return TRUE;
}

/**
 * symfonic_registry_load_directory:
 * @self: a #SymfonicRegistry
 * @directory: a directory of plugin modules
 * @error: return location for a #GError
 *
 * Loads every `*.so` module in @directory, in name order, then its script
 * plugins (see symfonic_registry_add_script_loader()). A missing directory
 * is not an error; a module or script that cannot be loaded is, and stops
 * the load (symfonic_registry_scan() skips such a module instead).
 *
 * Returns: %TRUE on success
 */
gboolean
symfonic_registry_load_directory (SymfonicRegistry  *self,
                                  const char        *directory,
                                  GError           **error)
{
  g_autoptr(GPtrArray) paths = NULL;

  g_return_val_if_fail (SYMFONIC_IS_REGISTRY (self), FALSE);
  g_return_val_if_fail (directory != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  paths = list_files (directory, "." G_MODULE_SUFFIX, error);
  if (paths == NULL)
    return FALSE;

  for (guint i = 0; i < paths->len; i++)
    {
      if (load_plugin (self, g_ptr_array_index (paths, i), NULL, error) == NULL)
        return FALSE;
    }

  return load_scripts (self, directory, FALSE, error);
}

/* Plugin folders hold whatever was put there: as GStreamer does, a module
 * that cannot be loaded is skipped with a warning naming it, and the rest
 * serve. A plugin met again further down the path (a development copy
 * before the installed one) is not loaded twice: the first one wins. */
static gboolean
scan_directory (SymfonicRegistry  *self,
                const char        *directory,
                GError           **error)
{
  g_autoptr(GPtrArray) paths = list_files (directory, "." G_MODULE_SUFFIX, error);

  if (paths == NULL)
    return FALSE;

  for (guint i = 0; i < paths->len; i++)
    {
      const char *path = g_ptr_array_index (paths, i);
      g_autoptr(GError) local_error = NULL;
      SymfonicPlugin *earlier = NULL;

      if (load_plugin (self, path, &earlier, &local_error) != NULL)
        continue;

      if (earlier != NULL)
        note_twin (path, earlier);
      else
        g_warning (_("Skipping plugin %s: %s"), path, local_error->message);
    }

  return TRUE;
}

/**
 * symfonic_registry_scan:
 * @self: a #SymfonicRegistry
 * @error: return location for a #GError
 *
 * Loads the plugins of every directory in `$SYMFONIC_PLUGIN_PATH` (a colon
 * separated list), then those of the build's or installation's plugin
 * directory. A directory listed twice is read once. A module that cannot
 * be loaded is skipped with a warning; of two plugins of one name, the
 * first loaded serves and the other is skipped with a message. The script
 * plugins of every directory load last, so that every language loader is
 * there: of two modules, or of two scripts, of one name the first on the
 * path serves, and a module wins over a script wherever they are. A
 * script that fails to load fails the scan.
 *
 * Returns: %TRUE on success, %FALSE if a directory could not be read or
 *   a script failed
 */
gboolean
symfonic_registry_scan (SymfonicRegistry  *self,
                        GError           **error)
{
  g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func (g_free);
  const char *env = g_getenv ("SYMFONIC_PLUGIN_PATH");

  g_return_val_if_fail (SYMFONIC_IS_REGISTRY (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (env != NULL)
    {
      g_auto(GStrv) parts = g_strsplit (env, G_SEARCHPATH_SEPARATOR_S, -1);

      for (guint i = 0; parts[i] != NULL; i++)
        {
          if (*parts[i] != '\0')
            g_ptr_array_add (dirs, resolve_path (parts[i]));
        }
    }
  g_ptr_array_add (dirs, resolve_path (symfonic_paths_plugin_dir ()));

  for (guint i = 0; i < dirs->len; i++)
    {
      const char *dir = g_ptr_array_index (dirs, i);
      gboolean seen = FALSE;

      for (guint j = 0; j < i && !seen; j++)
        seen = g_str_equal (dir, g_ptr_array_index (dirs, j));

      if (seen)
        g_ptr_array_remove_index (dirs, i--);
      else if (!scan_directory (self, dir, error))
        return FALSE;
    }

  for (guint i = 0; i < dirs->len; i++)
    {
      if (!load_scripts (self, g_ptr_array_index (dirs, i), TRUE, error))
        return FALSE;
    }

  return TRUE;
}

/**
 * symfonic_registry_lookup:
 * @self: a #SymfonicRegistry
 * @name: a type name as pipeline files use it
 *
 * Finds the type a pipeline file's `type=` names.
 *
 * Returns: the registered or built-in type, or %G_TYPE_INVALID
 */
GType
symfonic_registry_lookup (SymfonicRegistry *self,
                          const char       *name)
{
  g_autoptr(GMutexLocker) locker = NULL;
  Entry *entry;

  g_return_val_if_fail (SYMFONIC_IS_REGISTRY (self), G_TYPE_INVALID);
  g_return_val_if_fail (name != NULL, G_TYPE_INVALID);

  locker = g_mutex_locker_new (&self->lock);
  entry = g_hash_table_lookup (self->types, name);

  return entry != NULL ? entry->type : builtin_type (name);
}

/**
 * symfonic_registry_get_type_plugin:
 * @self: a #SymfonicRegistry
 * @name: a registered type name
 *
 * Finds the plugin that registered a type name.
 *
 * Returns: (transfer none) (nullable): the plugin that registered @name,
 *   %NULL if the application did or nothing did
 */
SymfonicPlugin *
symfonic_registry_get_type_plugin (SymfonicRegistry *self,
                                   const char       *name)
{
  g_autoptr(GMutexLocker) locker = NULL;
  Entry *entry;

  g_return_val_if_fail (SYMFONIC_IS_REGISTRY (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);

  locker = g_mutex_locker_new (&self->lock);
  entry = g_hash_table_lookup (self->types, name);

  return entry != NULL ? entry->plugin : NULL;
}

/**
 * symfonic_registry_list_types:
 * @self: a #SymfonicRegistry
 *
 * Lists the names of the types plugins and the application registered; the
 * library's own (symfonic_registry_list_builtin_types()) are not among
 * them.
 *
 * Returns: (transfer full) (array zero-terminated=1): the registered names, sorted
 */
char **
symfonic_registry_list_types (SymfonicRegistry *self)
{
  g_autoptr(GMutexLocker) locker = NULL;
  char **names;

  g_return_val_if_fail (SYMFONIC_IS_REGISTRY (self), NULL);

  locker = g_mutex_locker_new (&self->lock);
  names = (char **) g_hash_table_get_keys_as_array (self->types, NULL);
  for (guint i = 0; names[i] != NULL; i++)
    names[i] = g_strdup (names[i]);
  qsort (names, g_strv_length (names), sizeof (char *), compare_names);

  return names;
}

/**
 * symfonic_registry_list_plugins:
 * @self: a #SymfonicRegistry
 *
 * Lists the plugins loaded into the registry, modules and scripts, in the
 * order they loaded.
 *
 * Returns: (transfer container) (element-type SymfonicPlugin): the loaded plugins
 */
GPtrArray *
symfonic_registry_list_plugins (SymfonicRegistry *self)
{
  g_autoptr(GMutexLocker) locker = NULL;
  GPtrArray *plugins;

  g_return_val_if_fail (SYMFONIC_IS_REGISTRY (self), NULL);

  locker = g_mutex_locker_new (&self->lock);
  plugins = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < self->plugins->len; i++)
    g_ptr_array_add (plugins, g_object_ref (g_ptr_array_index (self->plugins, i)));

  return plugins;
}

/**
 * symfonic_register_stage_type:
 * @type: a type implementing #SymfonicStage, #SymfonicSource, or a store
 *   role (#SymfonicMeterStore, #SymfonicStreamCapStore, #SymfonicRunStore)
 * @name: the name pipeline files use in `type=` (or, for a store, also in
 *   a `store=`, `cap-store=` or `run-store=` key)
 * @error: return location for a #GError
 *
 * Registers a type defined by the application, or by Python or JavaScript
 * code, in the default registry; or, from a script plugin as it loads, in
 * the registry loading it, as the script's type, once the script's loader
 * took it (see symfonic_registry_add_script_loader()).
 *
 * An application that defines a stage type in a language bound to one
 * thread (a gjs program) declares the type's affinity itself, with
 * symfonic_stage_type_set_main_context().
 *
 * Returns: %TRUE on success
 */
gboolean
symfonic_register_stage_type (GType        type,
                              const char  *name,
                              GError     **error)
{
  /* set, and read, while the loading thread waits for the script */
  SymfonicRegistry *registry = script_load.registry;
  ScriptLoader *loader = script_load.loader;

  g_return_val_if_fail (name != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (registry == NULL)
    return symfonic_registry_register_type (symfonic_registry_get_default (), type, name, NULL, error);

  if (loader->adopt != NULL && !loader->adopt (type, name, loader->user_data, error))
    return FALSE;

  return symfonic_registry_register_type (registry, type, name, script_load.plugin, error);
}
