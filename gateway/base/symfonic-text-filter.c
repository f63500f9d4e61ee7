/* symfonic-text-filter.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-telemetry-private.h"
#include "symfonic-text-filter.h"
#include "symfonic-text-filter-private.h"
#include "symfonic-event-private.h"
#include "symfonic-scratch-private.h"
#include "symfonic-stream-private.h"
#include "symfonic-utf8.h"

/* A filter is per stream, and most of its deltas go through unchanged:
 * such a delta is passed on as it is, and the filter writes into a buffer
 * of its thread's, so that the common case costs no allocation at all.
 * The unfinished character a piece may end with is at most three bytes,
 * kept in the object, so nothing here grows with the stream. */

#define N_CHANNELS 2

typedef struct
{
  /* the beginning of a character that the next piece may complete */
  char   pending[N_CHANNELS][4];
  guint8 n_pending[N_CHANNELS];
  /* what the metrics were last told this filter holds back */
  gsize  held;
} SymfonicTextFilterPrivate;

/**
 * SymfonicTextFilter:
 *
 * The filter of one stream's split text, which a [class@Symfonic.FilterStage]
 * makes for each stream: it is fed the answer and the thinking (two
 * channels) piece by piece, as the deltas arrive, and appends what can no
 * longer change, withholding what could (the beginning of a tag split
 * across deltas) until the next piece or the end of its channel.
 *
 * A subclass implements [vfunc@Symfonic.TextFilter.filter] and, if it
 * withholds, [vfunc@Symfonic.TextFilter.flush]. The base class withholds an
 * unfinished UTF-8 character, so a subclass only sees whole characters.
 */
G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (SymfonicTextFilter, symfonic_text_filter, G_TYPE_OBJECT)

SYMFONIC_SCRATCH_DEFINE (scratch);

/* Tells the metrics how much of its text the filter holds back now: an
 * unfinished character, and what the subclass withholds. Only when a
 * piece went through the filter, not for one that passed whole. */
static void
update_held (SymfonicTextFilter *self)
{
  SymfonicTextFilterPrivate *priv = symfonic_text_filter_get_instance_private (self);
  SymfonicTextFilterClass *klass = SYMFONIC_TEXT_FILTER_GET_CLASS (self);
  gsize held = priv->n_pending[0] + priv->n_pending[1];

  if (klass->withheld != NULL)
    held += klass->withheld (self);
  if (held != priv->held)
    symfonic_telemetry_gauge_add (SYMFONIC_GAUGE_FILTER_HELD_BYTES, (gint64) held - (gint64) priv->held);
  priv->held = held;
}

static void
symfonic_text_filter_finalize (GObject *object)
{
  SymfonicTextFilterPrivate *priv = symfonic_text_filter_get_instance_private (SYMFONIC_TEXT_FILTER (object));

  if (priv->held != 0)
    symfonic_telemetry_gauge_add (SYMFONIC_GAUGE_FILTER_HELD_BYTES, -(gint64) priv->held);

  G_OBJECT_CLASS (symfonic_text_filter_parent_class)->finalize (object);
}

/* Every delta passes symfonic_text_filter_process() once per filtering
 * stage, and a filter is always a subclass, which misses the inline fast
 * path of a type check: about a hundred instructions a call. Builds that
 * drop GLib's cast checks drop this one with them. */
#ifdef G_DISABLE_CAST_CHECKS
#define IS_FILTER_FAST(self) ((self) != NULL)
#else
#define IS_FILTER_FAST(self) SYMFONIC_IS_TEXT_FILTER (self)
#endif

static void
symfonic_text_filter_real_flush (SymfonicTextFilter  *self,
                                 SymfonicTextChannel  channel,
                                 GString             *out)
{
}

static void
symfonic_text_filter_class_init (SymfonicTextFilterClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = symfonic_text_filter_finalize;
  klass->flush = symfonic_text_filter_real_flush;
}

static void
symfonic_text_filter_init (SymfonicTextFilter *self)
{
}

static void
filter_whole (SymfonicTextFilter  *self,
              SymfonicTextChannel  channel,
              const char          *text,
              gsize                length,
              GString             *out)
{
  if (length > 0)
    SYMFONIC_TEXT_FILTER_GET_CLASS (self)->filter (self, channel, text, length, out);
}

/* The feed of process() too, where the checks were made once already. */
static void
feed_channel (SymfonicTextFilter  *self,
              SymfonicTextChannel  channel,
              const char          *text,
              gsize                length,
              GString             *out)
{
  SymfonicTextFilterPrivate *priv = symfonic_text_filter_get_instance_private (self);
  char *pending = priv->pending[channel];
  gsize keep;

  /* complete the character under way a byte at a time: it is over once
   * its lead byte is no longer the start of an unfinished one */
  while (priv->n_pending[channel] > 0 && length > 0)
    {
      guint8 n = priv->n_pending[channel];

      pending[n++] = *text++;
      length--;
      keep = symfonic_utf8_unfinished_suffix (pending, n);
      filter_whole (self, channel, pending, n - keep, out);
      memmove (pending, pending + n - keep, keep);
      priv->n_pending[channel] = keep;
    }
  if (length == 0)
    return;

  keep = symfonic_utf8_unfinished_suffix (text, length);
  filter_whole (self, channel, text, length - keep, out);
  memcpy (pending, text + length - keep, keep);
  priv->n_pending[channel] = keep;
}

/**
 * symfonic_text_filter_feed:
 * @self: a #SymfonicTextFilter
 * @channel: the text @text belongs to
 * @text: (array length=length) (element-type guint8): the next piece of
 *   that text, cut anywhere
 * @length: its length in bytes
 * @out: where the text that can no longer change is appended
 *
 * Feeds one delta's text. An unfinished UTF-8 character at its end is
 * withheld until the next piece completes it (or the channel is flushed),
 * so the filter only appends whole characters to @out (given valid input).
 */
void
symfonic_text_filter_feed (SymfonicTextFilter  *self,
                           SymfonicTextChannel  channel,
                           const char          *text,
                           gsize                length,
                           GString             *out)
{
  g_return_if_fail (SYMFONIC_IS_TEXT_FILTER (self));
  g_return_if_fail (channel < N_CHANNELS);
  g_return_if_fail (text != NULL || length == 0);
  g_return_if_fail (out != NULL);

  feed_channel (self, channel, text, length, out);
}

/**
 * symfonic_text_filter_flush:
 * @self: a #SymfonicTextFilter
 * @channel: the text that is over
 * @out: where the withheld text is appended
 *
 * @channel's text is over: appends what was withheld, an unfinished
 * character included. The channel can be fed again afterwards.
 */
void
symfonic_text_filter_flush (SymfonicTextFilter  *self,
                            SymfonicTextChannel  channel,
                            GString             *out)
{
  SymfonicTextFilterPrivate *priv = symfonic_text_filter_get_instance_private (self);

  g_return_if_fail (SYMFONIC_IS_TEXT_FILTER (self));
  g_return_if_fail (channel < N_CHANNELS);
  g_return_if_fail (out != NULL);

  filter_whole (self, channel, priv->pending[channel], priv->n_pending[channel], out);
  priv->n_pending[channel] = 0;
  SYMFONIC_TEXT_FILTER_GET_CLASS (self)->flush (self, channel, out);
}

/* The common delta: nothing is under way in its channel, and the filter
 * would release it whole and unchanged, so it goes on as it is. */
static gboolean
passes_whole (SymfonicTextFilter  *self,
              SymfonicTextChannel  channel,
              const char          *text,
              gsize                length)
{
  SymfonicTextFilterPrivate *priv = symfonic_text_filter_get_instance_private (self);
  SymfonicTextFilterClass *klass = SYMFONIC_TEXT_FILTER_GET_CLASS (self);

  /* a piece that ends in ASCII ends with a whole character */
  return klass->passes != NULL && length > 0 && priv->n_pending[channel] == 0 &&
         ((guchar) text[length - 1] < 0x80 || symfonic_utf8_unfinished_suffix (text, length) == 0) &&
         klass->passes (self, channel, text, length);
}

static SymfonicEvent *
new_delta (SymfonicTextChannel  channel,
           const char          *text)
{
  return channel == SYMFONIC_TEXT_CHANNEL_THINKING
    ? symfonic_event_new_thinking_delta (text)
    : symfonic_event_new_text_delta (text);
}

/* The body of symfonic_text_filter_process() for a delta of @channel,
 * checked by the caller. Returns whether the filter was fed: a delta that
 * passed whole left the filter as it was. */
gboolean
symfonic_text_filter_take_delta (SymfonicTextFilter  *self,
                                 SymfonicStream      *stream,
                                 SymfonicEvent       *delta,
                                 SymfonicTextChannel  channel)
{
  const char *text;
  gsize length;
  GString *clean;
  g_autoptr(SymfonicEvent) changed = NULL;

  text = symfonic_event_peek_text (delta, &length);
  if (passes_whole (self, channel, text, length))
    {
      symfonic_stream_emit_checked (stream, delta);
      return FALSE;
    }

  clean = symfonic_scratch_get (scratch);
  feed_channel (self, channel, text, length, clean);
  update_held (self);
  if (clean->len == 0 && (length != 0 || symfonic_event_get_payload (delta) == NULL))
    return TRUE;

  if (clean->len == length && memcmp (text, clean->str, length) == 0)
    {
      symfonic_stream_emit_checked (stream, delta);
      return TRUE;
    }

  changed = new_delta (channel, clean->str);
  symfonic_stream_emit_checked (stream, changed);

  return TRUE;
}

/**
 * symfonic_text_filter_process:
 * @self: a #SymfonicTextFilter, the one of @stream
 * @stream: the stream @event travels on
 * @event: an event
 *
 * The per-event hook of a stage that filters text: a text or thinking
 * delta is fed to its channel, and what the filter released is emitted on
 * @stream, as @event itself when the filter left it unchanged, as a new
 * delta when it changed it, and not at all when it withheld all of it.
 * An empty delta that carries more than text (a thinking signature) goes
 * on as it is.
 *
 * Returns: whether @event was a delta, which the filter took; any other
 *   event is left to the caller
 */
gboolean
symfonic_text_filter_process (SymfonicTextFilter *self,
                              SymfonicStream     *stream,
                              SymfonicEvent      *event)
{
  g_return_val_if_fail (IS_FILTER_FAST (self), FALSE);
  g_return_val_if_fail (SYMFONIC_IS_STREAM (stream), FALSE);
  g_return_val_if_fail (event != NULL, FALSE);

  switch (symfonic_event_peek_kind (event))
    {
    case SYMFONIC_EVENT_KIND_TEXT_DELTA:
      symfonic_text_filter_take_delta (self, stream, event, SYMFONIC_TEXT_CHANNEL_ANSWER);
      return TRUE;
    case SYMFONIC_EVENT_KIND_THINKING_DELTA:
      symfonic_text_filter_take_delta (self, stream, event, SYMFONIC_TEXT_CHANNEL_THINKING);
      return TRUE;
    default:
      return FALSE;
    }
}

/**
 * symfonic_text_filter_drain:
 * @self: a #SymfonicTextFilter, the one of @stream
 * @stream: the stream whose texts are over
 *
 * Flushes the thinking, then the answer, and emits on @stream what each
 * released as one last delta. A stage calls it when the answer closes:
 * before the first event that must come after the text, or in its finish
 * hook.
 */
void
symfonic_text_filter_drain (SymfonicTextFilter *self,
                            SymfonicStream     *stream)
{
  static const SymfonicTextChannel order[] = {
    SYMFONIC_TEXT_CHANNEL_THINKING,
    SYMFONIC_TEXT_CHANNEL_ANSWER,
  };

  g_return_if_fail (SYMFONIC_IS_TEXT_FILTER (self));
  g_return_if_fail (SYMFONIC_IS_STREAM (stream));

  for (guint i = 0; i < G_N_ELEMENTS (order); i++)
    {
      GString *rest = symfonic_scratch_get (scratch);
      g_autoptr(SymfonicEvent) delta = NULL;

      symfonic_text_filter_flush (self, order[i], rest);
      if (rest->len == 0)
        continue;
      delta = new_delta (order[i], rest->str);
      symfonic_stream_emit (stream, delta);
    }
  update_held (self);
}

/**
 * symfonic_text_filter_clean_terminal:
 * @self: a #SymfonicTextFilter that was not fed yet
 * @terminal: a `ResponseCompleteEvent`
 *
 * The upstream's terminal carries its own whole answer, which encoders
 * fall back on when no delta streamed: it must be filtered like the
 * deltas. Filters that text in one piece with @self.
 *
 * Returns: (transfer full): @terminal itself when the filter left its text
 *   unchanged, else a new terminal with the filtered text
 */
SymfonicEvent *
symfonic_text_filter_clean_terminal (SymfonicTextFilter *self,
                                     SymfonicEvent      *terminal)
{
  const char *text;
  gsize length;
  g_autoptr(GString) clean = NULL;

  g_return_val_if_fail (SYMFONIC_IS_TEXT_FILTER (self), NULL);
  g_return_val_if_fail (terminal != NULL, NULL);
  g_return_val_if_fail (symfonic_event_get_kind (terminal) == SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE, NULL);

  text = symfonic_event_get_text (terminal, &length);
  clean = g_string_sized_new (length);
  symfonic_text_filter_feed (self, SYMFONIC_TEXT_CHANNEL_ANSWER, text, length, clean);
  symfonic_text_filter_flush (self, SYMFONIC_TEXT_CHANNEL_ANSWER, clean);
  if (clean->len == length && memcmp (clean->str, text, length) == 0)
    return symfonic_event_ref (terminal);

  /* what the upstream said besides (why the answer ended) stays */
  return symfonic_event_new_response_complete_like (terminal, clean->str);
}
