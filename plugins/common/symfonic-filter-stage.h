/* symfonic-filter-stage.h: what the stages that run a text filter over a
 * stream's answer and thinking do with each event
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <stdatomic.h>

#include <symfonic.h>

G_BEGIN_DECLS

/* The filter withholds what could still become something it removes, so
 * the stage releases it when the answer closes: before the first event
 * that comes after the text (so the last delta is not sent after the
 * memory, consolidation or terminal event), or when the upstream
 * finishes. The terminal carries the whole answer, which encoders fall
 * back on when no delta streamed, so its text is filtered too, in one
 * piece, by a filter of its own.
 *
 * The stage object is shared by every stream on every worker: the filter
 * is per stream, in the stream's state for the stage. */

/* A stage's per-stream state opens with this: the filter of that stream. */
typedef struct
{
  SymfonicTextFilter *filter;
} SymfonicFilterStageState;

/* What differs between such stages. */
typedef struct
{
  /* of the stage's own state, which opens with a SymfonicFilterStageState */
  gsize                state_size;
  /* a filter that was not fed yet: for one stream's texts or, with
   * @for_terminal, to clean the text a terminal carries */
  SymfonicTextFilter *(*new_filter)   (SymfonicStage   *stage,
                                       gboolean         for_terminal);
  /* the stream's filter took text: the stage counts what it removed */
  void                (*filtered)     (SymfonicStage   *stage,
                                       gpointer         state);
  /* No text may follow: releases what the filter withholds and then emits
   * @closing, an event that closes the answer, unless it takes it in.
   * @closing is %NULL at the terminal (emitted after it) and when the
   * upstream finished. */
  gboolean            (*close_answer) (SymfonicStage   *stage,
                                       SymfonicStream  *stream,
                                       gpointer         state,
                                       SymfonicEvent   *closing,
                                       GError         **error);
} SymfonicFilterStageFuncs;

gpointer symfonic_filter_stage_new_state      (SymfonicStage                  *stage,
                                              const SymfonicFilterStageFuncs *funcs,
                                              SymfonicStream                 *stream);
void     symfonic_filter_stage_emit_terminal  (SymfonicStage                  *stage,
                                              const SymfonicFilterStageFuncs *funcs,
                                              SymfonicStream                 *stream,
                                              SymfonicEvent                  *terminal);

/* Adds to a stage's @total what a stream's filter @count grew by since
 * @counted, the part of it added before. */
static inline void
symfonic_filter_stage_add_count (_Atomic guint64 *total,
                                 guint64         *counted,
                                 guint64          count)
{
  if (count != *counted)
    {
      atomic_fetch_add_explicit (total, count - *counted, memory_order_relaxed);
      *counted = count;
    }
}

/* The stream's state for @stage, made at its first event. */
static inline gpointer
symfonic_filter_stage_get_state (SymfonicStage                  *stage,
                                 const SymfonicFilterStageFuncs *funcs,
                                 SymfonicStream                 *stream)
{
  gpointer state = symfonic_stream_get_stage_data (stream, stage);

  return G_LIKELY (state != NULL) ? state : symfonic_filter_stage_new_state (stage, funcs, stream);
}

/* The stage's process hook. Inline: it runs for every event, and a stage
 * that passes its own constant @funcs gets its hooks called directly. */
static inline gboolean
symfonic_filter_stage_process (SymfonicStage                  *stage,
                               const SymfonicFilterStageFuncs *funcs,
                               SymfonicStream                 *stream,
                               SymfonicEvent                  *event,
                               GError                        **error)
{
  SymfonicFilterStageState *state = symfonic_filter_stage_get_state (stage, funcs, stream);

  if (symfonic_text_filter_process (state->filter, stream, event))
    {
      funcs->filtered (stage, state);
      return TRUE;
    }

  if (!symfonic_event_kind_closes_answer (symfonic_event_get_kind (event)))
    {
      symfonic_stream_emit (stream, event);
      return TRUE;
    }

  if (symfonic_event_get_kind (event) != SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE)
    return funcs->close_answer (stage, stream, state, event, error);

  if (!funcs->close_answer (stage, stream, state, NULL, error))
    return FALSE;
  symfonic_filter_stage_emit_terminal (stage, funcs, stream, event);
  return TRUE;
}

/* The stage's finish hook: the upstream finished without closing the
 * answer by an event. */
static inline gboolean
symfonic_filter_stage_finish (SymfonicStage                  *stage,
                              const SymfonicFilterStageFuncs *funcs,
                              SymfonicStream                 *stream,
                              GError                        **error)
{
  return funcs->close_answer (stage, stream, symfonic_filter_stage_get_state (stage, funcs, stream), NULL, error);
}

G_END_DECLS
