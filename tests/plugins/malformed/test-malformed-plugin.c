/* test-malformed-plugin.c: a plugin whose info holds garbage strings
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <symfonic.h>

/* The registry must refuse the module before calling its entry point; if
 * it ever calls this, the test process dies here. */
static gboolean
malformed_plugin_init (SymfonicPlugin  *plugin,
                       GError         **error)
{
  g_error ("the init of a plugin with a malformed info ran");

  return FALSE;
}

/* By hand, not SYMFONIC_PLUGIN_DEFINE(): a name that would forge a log
 * line and a description that is not UTF-8. */
G_MODULE_EXPORT const SymfonicPluginInfo symfonic_plugin_info = {
  SYMFONIC_PLUGIN_API_VERSION,
  "replay\nsymfonic-gateway: all plugins loaded",
  SYMFONIC_VERSION,
  "LGPL-2.1-or-later",
  "\xff\xfe not text",
  malformed_plugin_init,
};
