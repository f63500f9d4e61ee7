/* symfonic-stage.h: the interface every pipeline stage implements
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <gio/gio.h>

#include "symfonic-event.h"
#include "symfonic-types.h"

G_BEGIN_DECLS

#define SYMFONIC_TYPE_STAGE (symfonic_stage_get_type ())

G_DECLARE_INTERFACE (SymfonicStage, symfonic_stage, SYMFONIC, STAGE, GObject)

/**
 * SymfonicStageInterface:
 * @admit: admission before the handshake: may refuse the request with a
 *   #GError (mapped to a 4xx). The default accepts.
 * @admit_async: asynchronous admission, for stages that need I/O (a shared
 *   rate-limit store). The default runs @admit inline.
 * @admit_finish: completes @admit_async.
 * @begin: the stream was admitted and its upstream is about to open: emit
 *   what must precede any upstream event. The default emits nothing.
 * @process: consumes one event and emits zero or more with
 *   symfonic_stream_emit(). The default emits the event unchanged.
 * @finish: the upstream ended successfully: emit whatever is still withheld.
 * @close: the stream is over (success, error or client gone). Called once
 *   for every stream this stage admitted; settle per-stream accounting here.
 *
 * The hooks of a stage. A stage object is shared by every stream of its
 * route, possibly on several threads at once: per-stream state belongs in
 * the stream (symfonic_stream_set_stage_data()), and shared state must be
 * thread-safe.
 */
struct _SymfonicStageInterface
{
  GTypeInterface parent_iface;

  gboolean (*admit)        (SymfonicStage        *self,
                            SymfonicStream       *stream,
                            GError              **error);
  void     (*admit_async)  (SymfonicStage        *self,
                            SymfonicStream       *stream,
                            GCancellable         *cancellable,
                            GAsyncReadyCallback   callback,
                            gpointer              user_data);
  gboolean (*admit_finish) (SymfonicStage        *self,
                            GAsyncResult         *result,
                            GError              **error);
  gboolean (*begin)        (SymfonicStage        *self,
                            SymfonicStream       *stream,
                            GError              **error);
  gboolean (*process)      (SymfonicStage        *self,
                            SymfonicStream       *stream,
                            SymfonicEvent        *event,
                            GError              **error);
  gboolean (*finish)       (SymfonicStage        *self,
                            SymfonicStream       *stream,
                            GError              **error);
  void     (*close)        (SymfonicStage        *self,
                            SymfonicStream       *stream);
};

gboolean symfonic_stage_admit        (SymfonicStage        *self,
                                      SymfonicStream       *stream,
                                      GError              **error);
void     symfonic_stage_admit_async  (SymfonicStage        *self,
                                      SymfonicStream       *stream,
                                      GCancellable         *cancellable,
                                      GAsyncReadyCallback   callback,
                                      gpointer              user_data);
gboolean symfonic_stage_admit_finish (SymfonicStage        *self,
                                      GAsyncResult         *result,
                                      GError              **error);
gboolean symfonic_stage_begin        (SymfonicStage        *self,
                                      SymfonicStream       *stream,
                                      GError              **error);
gboolean symfonic_stage_process      (SymfonicStage        *self,
                                      SymfonicStream       *stream,
                                      SymfonicEvent        *event,
                                      GError              **error);
gboolean symfonic_stage_finish       (SymfonicStage        *self,
                                      SymfonicStream       *stream,
                                      GError              **error);
void     symfonic_stage_close        (SymfonicStage        *self,
                                      SymfonicStream       *stream);

G_END_DECLS
