/* symfonic-worker-private.h: one serving thread
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

#include "symfonic-metrics-private.h"
#include "symfonic-pipeline.h"
#include "symfonic-run-store.h"

G_BEGIN_DECLS

typedef struct _SymfonicWorker SymfonicWorker;

typedef void (*SymfonicWorkerDrainedFunc) (gpointer user_data);
/* Called on the worker's thread each time a burst of its connections is
 * over: what they held is free. */
typedef void (*SymfonicWorkerReleasedFunc) (gpointer user_data);

G_GNUC_INTERNAL
SymfonicWorker *symfonic_worker_new  (guint                        index,
                                      SymfonicPipeline            *pipeline,
                                      SymfonicMetrics             *metrics,
                                      SymfonicRunStore            *run_store,
                                      GSocket                     *socket,
                                      SymfonicWorkerReleasedFunc   released,
                                      gpointer                     released_data,
                                      GError                     **error);
G_GNUC_INTERNAL
void            symfonic_worker_set_pipeline (SymfonicWorker            *self,
                                              SymfonicPipeline          *pipeline);
G_GNUC_INTERNAL
void            symfonic_worker_drain        (SymfonicWorker            *self,
                                              SymfonicWorkerDrainedFunc  drained,
                                              gpointer                   user_data,
                                              GDestroyNotify             destroy);
G_GNUC_INTERNAL
void            symfonic_worker_end_streams  (SymfonicWorker            *self);
G_GNUC_INTERNAL
void            symfonic_worker_stop (SymfonicWorker    *self);

G_END_DECLS
