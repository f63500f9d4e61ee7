/* symfonic-metering-plugin.c: the metering plugin's entry point
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-budget-stage.h"
#include "symfonic-memory-meter-store.h"
#include "symfonic-rate-limit-stage.h"

static gboolean
metering_plugin_init (SymfonicPlugin  *plugin,
                      GError         **error)
{
  return symfonic_plugin_register_type (plugin, "rate-limit", SYMFONIC_TYPE_RATE_LIMIT_STAGE, error) &&
         symfonic_plugin_register_type (plugin, "budget", SYMFONIC_TYPE_BUDGET_STAGE, error) &&
         symfonic_plugin_register_type (plugin, "memory", SYMFONIC_TYPE_MEMORY_METER_STORE, error);
}

SYMFONIC_PLUGIN_DEFINE ("metering", "Admission rate limits and token budgets per tenant", metering_plugin_init);
