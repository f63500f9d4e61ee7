/* symfonic-projection-plugin.c: the projection plugin's entry point
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-projection-stage.h"

static gboolean
projection_plugin_init (SymfonicPlugin  *plugin,
                        GError         **error)
{
  return symfonic_plugin_register_type (plugin, SYMFONIC_TYPE_PROJECTION_STAGE, "projection", error);
}

SYMFONIC_PLUGIN_DEFINE ("projection", SYMFONIC_VERSION, "LGPL-2.1-or-later", "Projects typed events onto the untyped chunks of the stream's release line", projection_plugin_init);
