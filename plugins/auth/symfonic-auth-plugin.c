/* symfonic-auth-plugin.c: the auth plugin's entry point
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-auth-stage.h"

static gboolean
auth_plugin_init (SymfonicPlugin  *plugin,
                  GError         **error)
{
  return symfonic_plugin_register_type (plugin, SYMFONIC_TYPE_AUTH_STAGE, "auth", error);
}

SYMFONIC_PLUGIN_DEFINE ("auth", SYMFONIC_VERSION, "LGPL-2.1-or-later", "Admits requests with a bearer token (tokens file or JWT) acting for a tenant", auth_plugin_init);
