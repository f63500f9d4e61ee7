/* email-redactor-plugin.c: the e-mail redactor example's entry point
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "email-redactor-stage.h"

static gboolean
email_redactor_plugin_init (SymfonicPlugin  *plugin,
                            GError         **error)
{
  return symfonic_plugin_register_type (plugin, EXAMPLE_TYPE_EMAIL_REDACTOR_STAGE, "email-redactor", error);
}

SYMFONIC_PLUGIN_DEFINE ("email-redactor", "1.0.0", "LGPL-2.1-or-later", "Replaces e-mail addresses in the answer (an example)",
                        email_redactor_plugin_init);
