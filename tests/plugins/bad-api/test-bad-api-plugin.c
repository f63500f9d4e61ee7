/* test-bad-api-plugin.c: a plugin built for a future plugin API, or
 * (built again in old-api/) for the one before this gateway's
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <symfonic.h>

#ifndef TEST_PLUGIN_API_VERSION
#define TEST_PLUGIN_API_VERSION (SYMFONIC_PLUGIN_API_VERSION + 1)
#define TEST_PLUGIN_NAME "test-bad-api"
#endif

/* The registry must refuse the module before running any of its code; if
 * it ever calls this, the test process dies here. */
static gboolean
bad_api_plugin_init (SymfonicPlugin  *plugin,
                     GError         **error)
{
  g_error ("the init of a plugin with a mismatched API version ran");

  return FALSE;
}

/* By hand, not SYMFONIC_PLUGIN_DEFINE(), to declare another API version. */
G_MODULE_EXPORT const SymfonicPluginInfo symfonic_plugin_info = {
  TEST_PLUGIN_API_VERSION,
  TEST_PLUGIN_NAME,
  SYMFONIC_VERSION,
  "LGPL-2.1-or-later",
  "Declares a plugin API this gateway does not provide",
  bad_api_plugin_init,
};
