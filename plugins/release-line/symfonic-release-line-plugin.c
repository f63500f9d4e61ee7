/* symfonic-release-line-plugin.c: the release-line plugin's entry point
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-release-line-stage.h"

static gboolean
release_line_plugin_init (SymfonicPlugin  *plugin,
                          GError         **error)
{
  return symfonic_plugin_register_type (plugin, SYMFONIC_TYPE_RELEASE_LINE_STAGE, "release-line", error);
}

SYMFONIC_PLUGIN_DEFINE ("release-line", SYMFONIC_VERSION, "LGPL-2.1-or-later", "Chooses the release line whose stream contract a request gets", release_line_plugin_init);
