/* symfonic-providers-plugin.c: the library's built-in source types
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-anthropic-source-private.h"
#include "symfonic-builtin-private.h"
#include "symfonic-openai-source-private.h"

/* The provider sources decode their frames with the library's private
 * JSON scan, so they are built in rather than a plugin: the registry
 * registers them as its own plugin, `builtin`, when it scans, and
 * pipeline files name them as they always did. */
static gboolean
builtin_plugin_init (SymfonicPlugin  *plugin,
                     GError         **error)
{
  return symfonic_plugin_register_type (plugin, SYMFONIC_TYPE_OPENAI_SOURCE, "openai", error) &&
         symfonic_plugin_register_type (plugin, SYMFONIC_TYPE_ANTHROPIC_SOURCE, "anthropic", error);
}

const SymfonicPluginInfo symfonic_builtin_plugin_info = {
  SYMFONIC_PLUGIN_API_VERSION, "builtin", SYMFONIC_VERSION, "LGPL-2.1-or-later",
  "Sources built into the library: OpenAI-compatible and Anthropic APIs", builtin_plugin_init,
};
