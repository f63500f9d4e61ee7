/* symfonic-stage-lane-private.h: the hooks that run on a stage context
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _SymfonicStageLane SymfonicStageLane;

G_GNUC_INTERNAL
SymfonicStageLane *symfonic_stage_lane_get       (GMainContext      *context);
G_GNUC_INTERNAL
guint              symfonic_stage_lane_enter     (SymfonicStageLane *lane);
G_GNUC_INTERNAL
void               symfonic_stage_lane_leave     (SymfonicStageLane *lane);
G_GNUC_INTERNAL
void               symfonic_stage_lane_interrupt (SymfonicStageLane *lane,
                                                  guint              serial);

G_END_DECLS
