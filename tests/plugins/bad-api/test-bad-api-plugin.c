/* test-bad-api-plugin.c: a plugin built for another plugin API
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <symfonic.h>

/* By default a future API; the old-api build declares the one before,
 * as a plugin built against an older library does. */
#ifndef TEST_DECLARED_API_VERSION
#define TEST_DECLARED_API_VERSION (SYMFONIC_PLUGIN_API_VERSION + 1)
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
  TEST_DECLARED_API_VERSION,
  TEST_PLUGIN_NAME,
  SYMFONIC_VERSION,
  "LGPL-2.1-or-later",
  "Declares a plugin API this gateway does not provide",
  bad_api_plugin_init,
};
