/* symfonic-providers-plugin.c: the LLM provider plugin's entry point
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-anthropic-source.h"
#include "symfonic-openai-source.h"

static gboolean
providers_plugin_init (SymfonicPlugin  *plugin,
                       GError         **error)
{
  return symfonic_plugin_register_type (plugin, SYMFONIC_TYPE_OPENAI_SOURCE, "openai", error) &&
         symfonic_plugin_register_type (plugin, SYMFONIC_TYPE_ANTHROPIC_SOURCE, "anthropic", error);
}

SYMFONIC_PLUGIN_DEFINE ("providers", SYMFONIC_VERSION, "LGPL-2.1-or-later", "Streams completions from OpenAI-compatible and Anthropic APIs", providers_plugin_init);
