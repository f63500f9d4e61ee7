/* symfonic-metering-plugin.c: the metering plugin's entry point
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-budget-stage.h"
#include "symfonic-rate-limit-stage.h"

static gboolean
metering_plugin_init (SymfonicPlugin  *plugin,
                      GError         **error)
{
  return symfonic_plugin_register_type (plugin, SYMFONIC_TYPE_RATE_LIMIT_STAGE, "rate-limit", error) &&
         symfonic_plugin_register_type (plugin, SYMFONIC_TYPE_BUDGET_STAGE, "budget", error);
}

SYMFONIC_PLUGIN_DEFINE ("metering", SYMFONIC_VERSION, "LGPL-2.1-or-later", "Admission rate limits and token budgets per tenant", metering_plugin_init);
