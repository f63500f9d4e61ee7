/* symfonic-plugin.h: what a plugin module exports
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <gmodule.h>
#include <glib-object.h>

#include "symfonic-version.h"

G_BEGIN_DECLS

#define SYMFONIC_TYPE_PLUGIN (symfonic_plugin_get_type ())

G_DECLARE_FINAL_TYPE (SymfonicPlugin, symfonic_plugin, SYMFONIC, PLUGIN, GObject)

/**
 * SymfonicPluginInitFunc:
 * @plugin: the plugin being loaded
 * @error: return location for a #GError
 *
 * A plugin's entry point: registers its stage and source types with
 * symfonic_plugin_register_type(). Runs once, after the registry checked
 * the plugin's API version.
 *
 * Returns: %TRUE on success
 */
typedef gboolean (*SymfonicPluginInitFunc) (SymfonicPlugin  *plugin,
                                            GError         **error);

/**
 * SymfonicPluginInfo:
 * @api_version: the %SYMFONIC_PLUGIN_API_VERSION the plugin was built against
 * @name: the plugin's name
 * @version: the plugin's own version
 * @license: the plugin's license, an SPDX identifier
 * @description: one line on what it provides
 * @init: the entry point
 *
 * What a plugin module exports under the symbol `symfonic_plugin_info`;
 * use SYMFONIC_PLUGIN_DEFINE().
 */
typedef struct
{
  guint                   api_version;
  const char             *name;
  const char             *version;
  const char             *license;
  const char             *description;
  SymfonicPluginInitFunc  init;
} SymfonicPluginInfo;

/**
 * SymfonicScriptLoadFunc:
 * @filename: the script file to run
 * @user_data: the data given to symfonic_registry_add_script_loader()
 * @error: return location for a #GError
 *
 * Runs one script plugin, which registers its types with
 * symfonic_register_stage_type() while this runs. A failure names the
 * file and the line.
 *
 * Returns: %TRUE on success
 */
typedef gboolean (*SymfonicScriptLoadFunc) (const char  *filename,
                                            gpointer     user_data,
                                            GError     **error);

/**
 * SymfonicScriptTypeFunc:
 * @type: a type the script being loaded registers
 * @name: the name it registers it under
 * @user_data: the data given to symfonic_registry_add_script_loader()
 * @error: return location for a #GError
 *
 * Told of each type a script plugin registers with
 * symfonic_register_stage_type() while its #SymfonicScriptLoadFunc runs,
 * before the type is registered, on the thread that runs the script.
 * The loader knows the script's language, and the core does not: here it
 * declares the thread affinity of the script's stage types
 * (symfonic_stage_type_set_main_context()), and refuses a type its
 * language cannot serve, with an error that names it.
 *
 * Returns: %TRUE to register the type
 */
typedef gboolean (*SymfonicScriptTypeFunc) (GType        type,
                                            const char  *name,
                                            gpointer     user_data,
                                            GError     **error);

/**
 * SymfonicScriptPathFunc:
 * @folder: an absolute folder
 * @user_data: the data given to symfonic_registry_add_script_loader()
 * @error: return location for a #GError
 *
 * Adds @folder to where the scripts of a language loader import their
 * modules from, such as a Python virtualenv's `site-packages`. Called by
 * symfonic_registry_add_script_path(), for the folders a pipeline file
 * names (`[gateway] python-path`), before the scripts of its plugin
 * folders load.
 *
 * Returns: %TRUE on success
 */
typedef gboolean (*SymfonicScriptPathFunc) (const char  *folder,
                                            gpointer     user_data,
                                            GError     **error);

/**
 * SYMFONIC_PLUGIN_DEFINE:
 * @name: the plugin's name, a string
 * @version: the plugin's own version, a string
 * @license: the plugin's license, an SPDX identifier such as
 *   `"LGPL-2.1-or-later"`
 * @description: one line, a string
 * @init: the #SymfonicPluginInitFunc
 *
 * Declares a plugin module's entry point.
 */
#define SYMFONIC_PLUGIN_DEFINE(name, version, license, description, init) \
  G_MODULE_EXPORT const SymfonicPluginInfo symfonic_plugin_info = { \
    SYMFONIC_PLUGIN_API_VERSION, name, version, license, description, init \
  }

const char *symfonic_plugin_get_name        (SymfonicPlugin  *self);
const char *symfonic_plugin_get_filename    (SymfonicPlugin  *self);
const char *symfonic_plugin_get_version     (SymfonicPlugin  *self);
const char *symfonic_plugin_get_license     (SymfonicPlugin  *self);
const char *symfonic_plugin_get_description (SymfonicPlugin  *self);
gboolean    symfonic_plugin_register_type   (SymfonicPlugin  *self,
                                             GType            type,
                                             const char      *name,
                                             GError         **error);
void        symfonic_plugin_add_script_loader (SymfonicPlugin         *self,
                                               const char             *suffix,
                                               const char             *language,
                                               SymfonicScriptLoadFunc  load,
                                               SymfonicScriptTypeFunc  adopt,
                                               gpointer                user_data);
void        symfonic_plugin_set_script_path_func (SymfonicPlugin         *self,
                                                  const char             *suffix,
                                                  SymfonicScriptPathFunc  add_path);

G_END_DECLS
