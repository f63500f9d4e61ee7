/* symfonic-filter-stage.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stddef.h>

#include "symfonic-error.h"
#include "symfonic-event-private.h"
#include "symfonic-filter-stage.h"
#include "symfonic-stage.h"
#include "symfonic-stream-private.h"
#include "symfonic-text-filter-private.h"

/**
 * SymfonicFilterStage:
 *
 * A stage that runs a [class@Symfonic.TextFilter] over the answer and the
 * thinking of each stream: what a redactor, a tag remover or a guardrail
 * builds on, the way a GStreamer element builds on `GstBaseTransform`.
 *
 * A subclass supplies the filter ([vfunc@Symfonic.FilterStage.create_filter]);
 * the base class does the rest, for every stream on every worker:
 *
 * - it keeps one filter per stream, made at the stream's first event, in
 *   the stream's state: what else the stage knows of one stream lives on
 *   that filter ([method@Symfonic.FilterStage.get_filter]) or, from C, in
 *   the few bytes `symfonic_filter_stage_class_set_stream_state_size()`
 *   gives each stream;
 * - it passes every text and thinking delta through the filter, emitting
 *   the delta itself when the filter left it unchanged, a new one when it
 *   changed it, nothing when it withheld all of it;
 * - when the answer closes, before the first event no text may follow
 *   ([func@Symfonic.EventKind.closes_answer]) and when the upstream
 *   finishes, it releases what the filter withholds, so that no delta
 *   comes after the memory, consolidation or terminal event;
 * - it cleans the text the terminal carries (encoders fall back on it
 *   when no delta streamed) with a fresh filter, in one piece, so that it
 *   stays the concatenation of the deltas sent; a terminal without text
 *   (those of the provider sources) passes as it is;
 * - every other event passes unchanged.
 *
 * It may also look at each delta before it is filtered
 * ([vfunc@Symfonic.FilterStage.before_filter]), count what the filter did
 * ([vfunc@Symfonic.FilterStage.after_filter]) and add its own events when
 * the answer closes ([vfunc@Symfonic.FilterStage.close_answer]). Its other
 * hooks ([vfunc@Symfonic.Stage.admit], the admission phase) are those of
 * [iface@Symfonic.Stage], which it may implement as any stage does (a
 * JavaScript class that does lists `Symfonic.Stage` in its `Implements`,
 * as gjs wants of a subclass that overrides an interface's methods).
 *
 * A stage that upper-cases every e-mail address's domain would be, given
 * a filter `MyDomainFilter` that does it on split text:
 *
 * ```c
 * G_DECLARE_FINAL_TYPE (MyDomainStage, my_domain_stage, MY, DOMAIN_STAGE, SymfonicFilterStage)
 *
 * struct _MyDomainStage { SymfonicFilterStage parent_instance; };
 *
 * G_DEFINE_FINAL_TYPE (MyDomainStage, my_domain_stage, SYMFONIC_TYPE_FILTER_STAGE)
 *
 * static SymfonicTextFilter *
 * my_domain_stage_create_filter (SymfonicFilterStage *stage,
 *                                SymfonicStream      *stream,
 *                                SymfonicFilterUse    use)
 * {
 *   return g_object_new (MY_TYPE_DOMAIN_FILTER, NULL);
 * }
 *
 * static void
 * my_domain_stage_class_init (MyDomainStageClass *klass)
 * {
 *   SYMFONIC_FILTER_STAGE_CLASS (klass)->create_filter = my_domain_stage_create_filter;
 * }
 *
 * static void my_domain_stage_init (MyDomainStage *self) { }
 * ```
 *
 * From Python, subclass `Symfonic.FilterStage` and define
 * `do_create_filter(self, stream, use)`; from JavaScript, extend it and
 * define `vfunc_create_filter(stream, use)`; then register the type with
 * [func@Symfonic.register_stage_type] as any stage. C filters that look
 * for fixed tags build on `SymfonicTagMatcher`, a plain structure of
 * `symfonic-tag-matcher.h` that introspection leaves out.
 *
 * The per-event path stays in C: a delta that the filter passes costs a
 * script stage no call into its language unless the filter itself is
 * written in it.
 */

typedef struct
{
  /* of the subclass's part of a stream's state */
  gsize stream_state_size;
} SymfonicFilterStageClassPrivate;

/* One stream's state: its filter, then the subclass's part, aligned as
 * malloc() aligns. */
typedef struct
{
  SymfonicTextFilter *filter;
  max_align_t         subclass[];
} StreamState;

static void symfonic_filter_stage_stage_init (SymfonicStageInterface *iface);

G_DEFINE_ABSTRACT_TYPE_WITH_CODE (SymfonicFilterStage, symfonic_filter_stage, G_TYPE_OBJECT,
                                  g_type_add_class_private (g_define_type_id,
                                                            sizeof (SymfonicFilterStageClassPrivate));
                                  G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_STAGE, symfonic_filter_stage_stage_init))

#define GET_CLASS_PRIVATE(klass) \
  G_TYPE_CLASS_GET_PRIVATE ((klass), SYMFONIC_TYPE_FILTER_STAGE, SymfonicFilterStageClassPrivate)

/* The stage is always a subclass, which misses the inline fast path of a
 * type check (see symfonic-text-filter.c): builds that drop GLib's cast
 * checks drop the checks of the per-event path with them. */
#ifdef G_DISABLE_CAST_CHECKS
#define IS_FILTER_STAGE_FAST(self) ((self) != NULL)
#else
#define IS_FILTER_STAGE_FAST(self) SYMFONIC_IS_FILTER_STAGE (self)
#endif

static void
stream_state_free (gpointer data)
{
  StreamState *state = data;

  g_object_unref (state->filter);
  g_free (state);
}

static SymfonicTextFilter *
create_filter (SymfonicFilterStage  *self,
               SymfonicStream       *stream,
               SymfonicFilterUse     use,
               GError              **error)
{
  SymfonicFilterStageClass *klass = SYMFONIC_FILTER_STAGE_GET_CLASS (self);
  SymfonicTextFilter *filter = NULL;

  if (klass->create_filter != NULL)
    filter = klass->create_filter (self, stream, use);

  /* a bug of the subclass (or an exception in a script's hook): its
   * streams fail rather than pass their text unfiltered */
  if (!SYMFONIC_IS_TEXT_FILTER (filter))
    {
      g_warning ("%s made no text filter", G_OBJECT_TYPE_NAME (self));
      if (filter != NULL)
        g_object_unref (filter);
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_FAILED,
                   "The stage %s made no text filter", G_OBJECT_TYPE_NAME (self));
      return NULL;
    }

  return filter;
}

/* The stream's state, made at its first event. (A plain cast: a checked
 * one to an interface takes the slow path on every event.) */
static StreamState *
get_state (SymfonicFilterStage  *self,
           SymfonicStream       *stream,
           GError              **error)
{
  StreamState *state = symfonic_stream_get_stage_data (stream, (SymfonicStage *) self);
  SymfonicTextFilter *filter;

  if (G_LIKELY (state != NULL))
    return state;

  filter = create_filter (self, stream, SYMFONIC_FILTER_USE_STREAM, error);
  if (filter == NULL)
    return NULL;

  state = g_malloc0 (sizeof (StreamState) + GET_CLASS_PRIVATE (SYMFONIC_FILTER_STAGE_GET_CLASS (self))->stream_state_size);
  state->filter = filter;
  symfonic_stream_set_stage_data (stream, (SymfonicStage *) self, state, stream_state_free);

  return state;
}

/* Releases what the stream's filter withholds, then lets the subclass
 * follow the text. @closing is %NULL at the terminal and at finish. */
static gboolean
close_answer (SymfonicFilterStage       *self,
              SymfonicFilterStageClass  *klass,
              SymfonicStream            *stream,
              StreamState               *state,
              SymfonicEvent             *closing,
              GError                   **error)
{
  symfonic_text_filter_drain (state->filter, stream);
  if (klass->after_filter != NULL)
    klass->after_filter (self, stream, state->filter);

  if (klass->close_answer == NULL)
    {
      if (closing != NULL)
        symfonic_stream_emit_checked (stream, closing);
      return TRUE;
    }

  return klass->close_answer (self, stream, closing, error);
}

/* Most terminals carry no text (those of the provider sources never do):
 * they pass as they are, without a filter made for nothing. */
static gboolean
emit_terminal (SymfonicFilterStage  *self,
               SymfonicStream       *stream,
               SymfonicEvent        *terminal,
               GError              **error)
{
  g_autoptr(SymfonicTextFilter) fresh = NULL;
  g_autoptr(SymfonicEvent) clean = NULL;
  gsize length;

  symfonic_event_peek_text (terminal, &length);
  if (length == 0)
    {
      symfonic_stream_emit_checked (stream, terminal);
      return TRUE;
    }

  fresh = create_filter (self, stream, SYMFONIC_FILTER_USE_TERMINAL, error);
  if (fresh == NULL)
    return FALSE;
  clean = symfonic_text_filter_clean_terminal (fresh, terminal);
  symfonic_stream_emit_checked (stream, clean);

  return TRUE;
}

/* For every event of every stream: the deltas go through the filter with
 * no call beyond the filter's own unless the subclass hooks them (and
 * after_filter only when the filter took text: most deltas hold nothing
 * to filter and pass whole), and an event that neither carries text nor
 * closes the answer passes after one test of its kind. */
static gboolean
symfonic_filter_stage_process (SymfonicStage   *stage,
                               SymfonicStream  *stream,
                               SymfonicEvent   *event,
                               GError         **error)
{
  SymfonicFilterStage *self = (SymfonicFilterStage *) stage;
  SymfonicFilterStageClass *klass = SYMFONIC_FILTER_STAGE_GET_CLASS (self);
  SymfonicEventKind kind = symfonic_event_peek_kind (event);
  StreamState *state = get_state (self, stream, error);

  if (G_UNLIKELY (state == NULL))
    return FALSE;

  if (kind == SYMFONIC_EVENT_KIND_TEXT_DELTA || kind == SYMFONIC_EVENT_KIND_THINKING_DELTA)
    {
      SymfonicTextChannel channel = kind == SYMFONIC_EVENT_KIND_TEXT_DELTA ? SYMFONIC_TEXT_CHANNEL_ANSWER
                                                                          : SYMFONIC_TEXT_CHANNEL_THINKING;

      if (klass->before_filter != NULL && !klass->before_filter (self, stream, event, error))
        return FALSE;
      /* a delta the filter passed whole left it as it was: there is
       * nothing new to count */
      if (symfonic_text_filter_take_delta (state->filter, stream, event, channel) && klass->after_filter != NULL)
        klass->after_filter (self, stream, state->filter);
      return TRUE;
    }

  if (!symfonic_event_kind_peek_closes_answer (kind))
    {
      symfonic_stream_emit_checked (stream, event);
      return TRUE;
    }

  if (kind != SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE)
    return close_answer (self, klass, stream, state, event, error);

  if (!close_answer (self, klass, stream, state, NULL, error))
    return FALSE;
  return emit_terminal (self, stream, event, error);
}

/* The upstream finished without closing the answer by an event, or
 * after it did: what the filter still withholds goes now. */
static gboolean
symfonic_filter_stage_finish (SymfonicStage   *stage,
                              SymfonicStream  *stream,
                              GError         **error)
{
  SymfonicFilterStage *self = (SymfonicFilterStage *) stage;
  StreamState *state = get_state (self, stream, error);

  if (state == NULL)
    return FALSE;

  return close_answer (self, SYMFONIC_FILTER_STAGE_GET_CLASS (self), stream, state, NULL, error);
}

static void
symfonic_filter_stage_stage_init (SymfonicStageInterface *iface)
{
  iface->process = symfonic_filter_stage_process;
  iface->finish = symfonic_filter_stage_finish;
}

static gboolean
symfonic_filter_stage_real_close_answer (SymfonicFilterStage  *self,
                                         SymfonicStream       *stream,
                                         SymfonicEvent        *closing,
                                         GError              **error)
{
  if (closing != NULL)
    symfonic_stream_emit (stream, closing);

  return TRUE;
}

static void
symfonic_filter_stage_class_init (SymfonicFilterStageClass *klass)
{
  klass->close_answer = symfonic_filter_stage_real_close_answer;
}

static void
symfonic_filter_stage_init (SymfonicFilterStage *self)
{
}

/**
 * symfonic_filter_stage_get_filter:
 * @self: a #SymfonicFilterStage
 * @stream: a stream of one of @self's routes
 *
 * The filter of @stream, made now if the stream had no event yet. A stage
 * written in Python or JavaScript keeps what it knows of one stream on its
 * filter object, and reaches it here from its other hooks.
 *
 * Returns: (transfer none) (nullable): the stream's filter, or %NULL if
 *   #SymfonicFilterStageClass.create_filter made none
 */
SymfonicTextFilter *
symfonic_filter_stage_get_filter (SymfonicFilterStage *self,
                                  SymfonicStream      *stream)
{
  StreamState *state;

  g_return_val_if_fail (IS_FILTER_STAGE_FAST (self), NULL);
  g_return_val_if_fail (SYMFONIC_IS_STREAM (stream), NULL);

  state = get_state (self, stream, NULL);

  return state != NULL ? state->filter : NULL;
}

/**
 * symfonic_filter_stage_class_set_stream_state_size: (skip)
 * @klass: a #SymfonicFilterStageClass
 * @size: the size of the state a stage of the class keeps per stream
 *
 * Gives each stream @size bytes of state for stages of @klass, beside its
 * filter: zeroed when the stream's filter is made, freed with the stream,
 * found with symfonic_filter_stage_get_stream_state(). The state is plain
 * data: nothing in it is freed or unreferenced. Call it from the class's
 * `class_init`; subclasses inherit the size.
 */
void
symfonic_filter_stage_class_set_stream_state_size (SymfonicFilterStageClass *klass,
                                                   gsize                     size)
{
  g_return_if_fail (SYMFONIC_IS_FILTER_STAGE_CLASS (klass));

  GET_CLASS_PRIVATE (klass)->stream_state_size = size;
}

/**
 * symfonic_filter_stage_get_stream_state: (skip)
 * @self: a #SymfonicFilterStage
 * @stream: a stream of one of @self's routes
 *
 * The state @stream keeps for @self, of the size the class set with
 * symfonic_filter_stage_class_set_stream_state_size(), made with the
 * stream's filter. C only: a stage written in another language keeps its
 * state on its filter.
 *
 * Returns: (nullable): the state, or %NULL if the class made no filter
 */
gpointer
symfonic_filter_stage_get_stream_state (SymfonicFilterStage *self,
                                        SymfonicStream      *stream)
{
  StreamState *state;

  g_return_val_if_fail (IS_FILTER_STAGE_FAST (self), NULL);
  g_return_val_if_fail (SYMFONIC_IS_STREAM (stream), NULL);

  /* a stage's after_filter hook asks for every delta */
  state = get_state (self, stream, NULL);

  return state != NULL ? state->subclass : NULL;
}

/**
 * symfonic_filter_stage_add_count: (skip)
 * @total: a count of the stage's, for all its streams; read it with an
 *   atomic load (`__atomic_load_n (total, __ATOMIC_RELAXED)`)
 * @counted: (inout): the part of @count that the stream added to @total
 *   before, kept in its state
 * @count: what the stream's filter counted so far
 *
 * Adds to a stage's @total what one stream's filter count grew by since
 * the stream last added to it, atomically: every worker's streams add to
 * the same total. A stage counts what its filters did this way in its
 * #SymfonicFilterStageClass.after_filter hook.
 */
void
symfonic_filter_stage_add_count (guint64 *total,
                                 guint64 *counted,
                                 guint64  count)
{
  g_return_if_fail (total != NULL && counted != NULL);

  if (count != *counted)
    {
      __atomic_fetch_add (total, count - *counted, __ATOMIC_RELAXED);
      *counted = count;
    }
}
