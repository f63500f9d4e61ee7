/* symfonic-stage-private.h: what the executor asks of a stage
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-stage.h"

G_BEGIN_DECLS

/* the hooks given the stream alone: admit, begin, finish, alarm */
typedef gboolean (*SymfonicStageStreamFunc)  (SymfonicStage   *self,
                                              SymfonicStream  *stream,
                                              GError         **error);

G_GNUC_INTERNAL
SymfonicStageStreamFunc  symfonic_stage_get_admit_func   (SymfonicStage             *self);
G_GNUC_INTERNAL
gboolean                 symfonic_stage_run_admit        (SymfonicStage             *self,
                                                          SymfonicStageStreamFunc    admit,
                                                          SymfonicStream            *stream,
                                                          GError                   **error);

typedef gboolean (*SymfonicStageProcessFunc) (SymfonicStage   *self,
                                              SymfonicStream  *stream,
                                              SymfonicEvent   *event,
                                              GError         **error);

G_GNUC_INTERNAL
SymfonicStageProcessFunc symfonic_stage_get_process_func (SymfonicStage *self);
G_GNUC_INTERNAL
gboolean                 symfonic_stage_admits           (SymfonicStage *self);
G_GNUC_INTERNAL
gboolean                 symfonic_stage_finishes         (SymfonicStage *self);
G_GNUC_INTERNAL
gboolean                 symfonic_stage_run_process      (SymfonicStage             *self,
                                                          SymfonicStageProcessFunc   process,
                                                          SymfonicStream            *stream,
                                                          SymfonicEvent             *event,
                                                          GError                   **error);

G_END_DECLS
