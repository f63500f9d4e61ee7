/* symfonic-runtime-plugin.c: the runtime plugin's entry point
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-runtime-source.h"

static gboolean
runtime_plugin_init (SymfonicPlugin  *plugin,
                     GError         **error)
{
  return symfonic_plugin_register_type (plugin, SYMFONIC_TYPE_RUNTIME_SOURCE, "runtime", error);
}

SYMFONIC_PLUGIN_DEFINE ("runtime", SYMFONIC_VERSION, "LGPL-2.1-or-later", "Streams from an agent runtime that speaks the typed event stream over HTTP", runtime_plugin_init);
