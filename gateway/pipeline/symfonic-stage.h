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

/**
 * SymfonicAdmissionPhase:
 * @SYMFONIC_ADMISSION_PHASE_HEAD: on the request head, before any byte of
 *   the body is read; the invocation has its headers but no query yet.
 *   For authentication: a client refused here never has its body read.
 * @SYMFONIC_ADMISSION_PHASE_BODY: once the body is read and decoded, after
 *   every head-phase stage admitted the request. For metering, which must
 *   only count authenticated, well-formed requests.
 *
 * When a stage's admission hook runs. Head-phase stages run first, in
 * route order; then the body-phase stages, in route order.
 */
typedef enum {
  SYMFONIC_ADMISSION_PHASE_HEAD,
  SYMFONIC_ADMISSION_PHASE_BODY,
} SymfonicAdmissionPhase;

#define SYMFONIC_TYPE_STAGE (symfonic_stage_get_type ())

G_DECLARE_INTERFACE (SymfonicStage, symfonic_stage, SYMFONIC, STAGE, GObject)

/**
 * SymfonicStageInterface:
 * @parent_iface: the parent interface
 * @admit: admission before the handshake: may refuse the request with a
 *   #GError (mapped to a 4xx). The default accepts. The gateway calls it
 *   on the worker, so it must not block. A stage that also implements
 *   @admit_async makes @admit its non-blocking form: the gateway tries it
 *   first, and it fails with %G_IO_ERROR_WOULD_BLOCK when it cannot decide
 *   without waiting (its store is across the network), and only then is
 *   @admit_async called. A stage that decides at once so costs the request
 *   no main-loop turn.
 * @admit_async: asynchronous admission, for stages that need I/O (a shared
 *   rate-limit store). The default runs @admit inline. A stage that
 *   implements @admit_async and keeps the default @admit always admits
 *   through @admit_async.
 * @admit_finish: completes @admit_async.
 * @get_admission_phase: when the admission hooks run; a constant of the
 *   stage, read once, when it is added to a route. The default is
 *   %SYMFONIC_ADMISSION_PHASE_BODY.
 * @begin: the stream was admitted and its upstream is about to open: emit
 *   what must precede any upstream event. The default emits nothing.
 * @process: consumes one event and emits zero or more with
 *   symfonic_stream_emit(). The default emits the event unchanged.
 * @finish: the upstream ended successfully: emit whatever is still withheld.
 * @close: the stream is over (success, error or client gone). Called once
 *   for every stream this stage admitted; settle per-stream accounting here.
 * @alarm: the instant the stage set with symfonic_stream_set_alarm() came
 *   while the stream runs: renew what the stage holds for the stream,
 *   flush what it batched. Returning %FALSE ends the stream with @error,
 *   its one error frame. Called on the stream's thread, only for a stage
 *   whose hooks run there. The default does nothing.
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
  SymfonicAdmissionPhase (*get_admission_phase) (SymfonicStage *self);
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
  gboolean (*alarm)        (SymfonicStage        *self,
                            SymfonicStream       *stream,
                            GError              **error);
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
SymfonicAdmissionPhase symfonic_stage_get_admission_phase (SymfonicStage *self);
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
gboolean symfonic_stage_alarm        (SymfonicStage        *self,
                                      SymfonicStream       *stream,
                                      GError              **error);

void          symfonic_stage_type_set_main_context (GType         stage_type,
                                                    GMainContext *context);
GMainContext *symfonic_stage_type_get_main_context (GType         stage_type);

/**
 * SymfonicStageInterruptFunc:
 * @user_data: the data given to symfonic_stage_context_set_interrupt()
 *
 * Asks the thread of a stage context to stop the hook it runs; see
 * symfonic_stage_context_set_interrupt(). Called on another thread.
 */
typedef void (*SymfonicStageInterruptFunc) (gpointer user_data);

void     symfonic_stage_context_set_interrupt (GMainContext               *context,
                                               SymfonicStageInterruptFunc  func,
                                               gpointer                    user_data);
gboolean symfonic_stage_context_hook_overdue  (GMainContext               *context);

G_END_DECLS
