/* symfonic-stream-private.h: the executor's side of a stream
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-stage.h"
#include "symfonic-stream.h"

G_BEGIN_DECLS

/* What the sink tells the stream of one event it took. */
typedef enum {
  /* the source reads on */
  SYMFONIC_SINK_TAKEN,
  /* the sink sent what its reader waits for first: the source reads on
   * once the context polled again, letting what became ready meanwhile
   * (a new client's request) go before the rest of its read */
  SYMFONIC_SINK_YIELD,
  /* the connection is over its bound: the source is told to wait until
   * symfonic_stream_sink_ready() */
  SYMFONIC_SINK_FULL,
} SymfonicSinkResult;

/* Where a stream's output goes: the route's encoder and the connection.
 * @event receives every event that left the last stage, in order; @end is
 * called exactly once with the outcome (NULL on success), unless the stream
 * was cancelled, in which case neither is called again. @head (optional)
 * hears that the upstream answered while the response's head is held
 * (symfonic_stream_release_head()). */
typedef struct
{
  SymfonicSinkResult (*event) (gpointer       data,
                               SymfonicEvent *event);
  void               (*end)   (gpointer       data,
                               const GError  *error);
  void               (*head)  (gpointer       data);
} SymfonicStreamSink;

/* How an admission phase went, as symfonic_stream_admit() returns it. */
typedef enum {
  /* every stage decided at once, and admitted the stream */
  SYMFONIC_ADMIT_PASSED,
  /* every stage decided at once, and one refused: the error says why */
  SYMFONIC_ADMIT_REFUSED,
  /* a stage answers later: the admission's callback hears the outcome */
  SYMFONIC_ADMIT_PENDING,
} SymfonicAdmitResult;

/* The outcome of an admission phase that waited for a stage: @error is
 * %NULL if it passed, or why it was refused. */
typedef void (*SymfonicStreamAdmitFunc) (gpointer      data,
                                         const GError *error);

/* `00-` 32 hex `-` 16 hex `-` 2 hex, and a NUL */
#define SYMFONIC_TRACEPARENT_SIZE 56

/* What a stage did for a stream, for its trace (see StageSlot). */
typedef struct
{
  gboolean               admits;
  gboolean               processes;
  gboolean               finishes;
  SymfonicAdmissionPhase phase;
  guint64                admit_start;
  guint64                admit_end;
  guint64                events_first;
  guint64                events_last;
  guint64                events_busy;
  guint64                events;
  guint64                finish_start;
  guint64                finish_end;
} SymfonicStageTiming;

G_GNUC_INTERNAL
guint    symfonic_stream_get_n_stages (SymfonicStream            *self);
G_GNUC_INTERNAL
void     symfonic_stream_get_stage_timing (SymfonicStream        *self,
                                           guint                  i,
                                           SymfonicStageTiming   *timing);
G_GNUC_INTERNAL
void     symfonic_stream_get_times    (SymfonicStream            *self,
                                       gint64                    *source_start_us,
                                       gint64                    *upstream_end_us,
                                       gint64                    *first_token_us,
                                       guint64                   *n_deltas);
G_GNUC_INTERNAL
void     symfonic_stream_set_traceparent (SymfonicStream         *self,
                                          const char             *traceparent);
G_GNUC_INTERNAL
const char *symfonic_stream_get_traceparent (SymfonicStream      *self);

G_GNUC_INTERNAL
void     symfonic_stream_set_sink     (SymfonicStream            *self,
                                       const SymfonicStreamSink  *sink,
                                       gpointer                   data);
G_GNUC_INTERNAL
void     symfonic_stream_sink_ready   (SymfonicStream            *self);
/* symfonic_stream_emit() for the library's own stages, which checked
 * their stream once per event already */
G_GNUC_INTERNAL
void     symfonic_stream_emit_checked (SymfonicStream            *self,
                                       SymfonicEvent             *event);
G_GNUC_INTERNAL
SymfonicAdmitResult symfonic_stream_admit (SymfonicStream           *self,
                                           SymfonicAdmissionPhase    phase,
                                           SymfonicStreamAdmitFunc   func,
                                           gpointer                  data,
                                           GError                  **error);
G_GNUC_INTERNAL
void     symfonic_stream_release_head (SymfonicStream            *self);
G_GNUC_INTERNAL
void     symfonic_stream_start        (SymfonicStream            *self);
G_GNUC_INTERNAL
void     symfonic_stream_cancel       (SymfonicStream            *self);
G_GNUC_INTERNAL
void     symfonic_stream_abort        (SymfonicStream            *self,
                                       const GError              *error);

G_END_DECLS
