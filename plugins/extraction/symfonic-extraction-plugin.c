/* symfonic-extraction-plugin.c: the extraction plugin's entry point
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-extraction-stage.h"

static gboolean
extraction_plugin_init (SymfonicPlugin  *plugin,
                        GError         **error)
{
  return symfonic_plugin_register_type (plugin, SYMFONIC_TYPE_EXTRACTION_STAGE, "extraction", error);
}

SYMFONIC_PLUGIN_DEFINE ("extraction", SYMFONIC_VERSION, "LGPL-2.1-or-later", "Lifts memory-extraction blocks out of the answer", extraction_plugin_init);
