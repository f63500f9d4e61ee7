/* symfonic-citation-plugin.c: the citation plugin's entry point
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-citation-stage.h"

static gboolean
citation_plugin_init (SymfonicPlugin  *plugin,
                      GError         **error)
{
  return symfonic_plugin_register_type (plugin, SYMFONIC_TYPE_CITATION_STAGE, "citation", error);
}

SYMFONIC_PLUGIN_DEFINE ("citation", SYMFONIC_VERSION, "LGPL-2.1-or-later", "Removes memory citation tags from the answer", citation_plugin_init);
