/* symfonic-error-map-plugin.c: the error-map plugin's entry point
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-error-map-stage.h"

static gboolean
error_map_plugin_init (SymfonicPlugin  *plugin,
                       GError         **error)
{
  return symfonic_plugin_register_type (plugin, SYMFONIC_TYPE_ERROR_MAP_STAGE, "error-map", error);
}

SYMFONIC_PLUGIN_DEFINE ("error-map", SYMFONIC_VERSION, "LGPL-2.1-or-later", "Maps every failure to the status, detail and code clients see",
                        error_map_plugin_init);
