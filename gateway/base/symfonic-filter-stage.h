/* symfonic-filter-stage.h: a stage that runs a text filter over the answer
 * and the thinking of each stream
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <glib-object.h>

#include "symfonic-event.h"
#include "symfonic-text-filter.h"
#include "symfonic-types.h"

G_BEGIN_DECLS

/**
 * SymfonicFilterUse:
 * @SYMFONIC_FILTER_USE_STREAM: the stream's filter: it takes the stream's
 *   text and thinking deltas, as they arrive
 * @SYMFONIC_FILTER_USE_TERMINAL: a filter of its own for the text the
 *   stream's `ResponseCompleteEvent` carries, which it is fed in one piece
 *
 * What a filter made by #SymfonicFilterStageClass.create_filter is for.
 */
typedef enum {
  SYMFONIC_FILTER_USE_STREAM,
  SYMFONIC_FILTER_USE_TERMINAL,
} SymfonicFilterUse;

#define SYMFONIC_TYPE_FILTER_STAGE (symfonic_filter_stage_get_type ())

/**
 * SymfonicFilterStageClass::create_filter:
 * @self: a #SymfonicFilterStage
 * @stream: the stream the filter is for
 * @use: what the filter is for
 *
 * Makes a filter that was not fed yet: the one of @stream, at its first
 * event, or one that cleans the text of @stream's terminal.
 *
 * Returns: (transfer full): a new filter
 */

/**
 * SymfonicFilterStageClass::before_filter:
 * @self: a #SymfonicFilterStage
 * @stream: the stream @delta travels on
 * @delta: a text or thinking delta, as the upstream sent it
 * @error: return location for a #GError
 *
 * Looks at a delta before the stream's filter takes it.
 *
 * Returns: %TRUE to go on, %FALSE with @error set to end the stream
 */

/**
 * SymfonicFilterStageClass::after_filter:
 * @self: a #SymfonicFilterStage
 * @stream: the stream whose filter took text
 * @filter: @stream's filter
 *
 * The stream's filter took a delta, or released what it withheld.
 */

/**
 * SymfonicFilterStageClass::close_answer:
 * @self: a #SymfonicFilterStage
 * @stream: the stream whose answer closed
 * @closing: (nullable): the event that closed the answer, or %NULL at the
 *   terminal (which follows) and when the upstream finished
 * @error: return location for a #GError
 *
 * No text may follow: the stream's filter released what it withheld.
 *
 * Returns: %TRUE to go on, %FALSE with @error set to end the stream
 */

G_DECLARE_DERIVABLE_TYPE (SymfonicFilterStage, symfonic_filter_stage, SYMFONIC, FILTER_STAGE, GObject)

/**
 * SymfonicFilterStageClass:
 * @parent_class: the parent class
 * @create_filter: makes a new filter; required. Called at a stream's first
 *   event for the stream's own filter, and again for each terminal that
 *   carries text, so that the terminal's text is cleaned by a filter that
 *   saw nothing else. It may run on several threads at once.
 * @before_filter: optional: looks at each text and thinking delta before
 *   the filter takes it, and may end the stream with an error (a stage
 *   that refuses some text, say). Deltas do not pass it when it is unset.
 * @after_filter: optional: the stream's filter took a delta's text, or
 *   released what it withheld because the answer closed; a stage counts
 *   here what its filter removed (symfonic_filter_stage_add_count()). A
 *   delta that the filter's #SymfonicTextFilterClass.passes let through
 *   whole left the filter as it was, and is not reported.
 * @close_answer: the answer closed: the stream's filter released what it
 *   withheld (its deltas are emitted already), and @closing is the event
 *   that closed it: the first of `MemoryExtractedEvent`,
 *   `ConsolidationScheduledEvent`, the graph events, or %NULL for the
 *   terminal (emitted after this hook) and when the upstream finished
 *   without any. Called for every such event, and once more in the finish
 *   hook. The default emits @closing; a stage that publishes something of
 *   its own after the text emits it, then chains up (or emits @closing
 *   itself, or takes it in).
 *
 * What a subclass implements. Everything else a filtering stage does with
 * an event is the base class's: see #SymfonicFilterStage.
 */
struct _SymfonicFilterStageClass
{
  GObjectClass parent_class;

  SymfonicTextFilter *(*create_filter) (SymfonicFilterStage  *self,
                                        SymfonicStream       *stream,
                                        SymfonicFilterUse     use);
  gboolean            (*before_filter) (SymfonicFilterStage  *self,
                                        SymfonicStream       *stream,
                                        SymfonicEvent        *delta,
                                        GError              **error);
  void                (*after_filter)  (SymfonicFilterStage  *self,
                                        SymfonicStream       *stream,
                                        SymfonicTextFilter   *filter);
  gboolean            (*close_answer)  (SymfonicFilterStage  *self,
                                        SymfonicStream       *stream,
                                        SymfonicEvent        *closing,
                                        GError              **error);

  /*< private >*/
  gpointer padding[12];
};

SymfonicTextFilter *symfonic_filter_stage_get_filter              (SymfonicFilterStage      *self,
                                                                   SymfonicStream           *stream);
void                symfonic_filter_stage_class_set_stream_state_size (SymfonicFilterStageClass *klass,
                                                                   gsize                     size);
gpointer            symfonic_filter_stage_get_stream_state        (SymfonicFilterStage      *self,
                                                                   SymfonicStream           *stream);
void                symfonic_filter_stage_add_count               (guint64                  *total,
                                                                   guint64                  *counted,
                                                                   guint64                   count);

G_END_DECLS
