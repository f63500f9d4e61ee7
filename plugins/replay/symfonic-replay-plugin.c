/* symfonic-replay-plugin.c: the replay plugin's entry point
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-replay-source.h"

static gboolean
replay_plugin_init (SymfonicPlugin  *plugin,
                    GError         **error)
{
  return symfonic_plugin_register_type (plugin, SYMFONIC_TYPE_REPLAY_SOURCE, "replay", error);
}

SYMFONIC_PLUGIN_DEFINE ("replay", SYMFONIC_VERSION, "LGPL-2.1-or-later", "Plays recorded JSON-lines transcripts as an upstream", replay_plugin_init);
