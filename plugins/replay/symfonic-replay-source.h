/* symfonic-replay-source.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

G_BEGIN_DECLS

#define SYMFONIC_TYPE_REPLAY_SOURCE (symfonic_replay_source_get_type ())

G_DECLARE_FINAL_TYPE (SymfonicReplaySource, symfonic_replay_source, SYMFONIC, REPLAY_SOURCE, GObject)

G_END_DECLS
