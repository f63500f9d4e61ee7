/* symfonic-text-filter.h: a filter of the answer and thinking texts of a
 * stream, as their deltas arrive
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <glib-object.h>

#include "symfonic-event.h"
#include "symfonic-types.h"

G_BEGIN_DECLS

/**
 * SymfonicTextChannel:
 * @SYMFONIC_TEXT_CHANNEL_ANSWER: the answer, carried by `TextDeltaEvent`s
 * @SYMFONIC_TEXT_CHANNEL_THINKING: the reasoning, carried by
 *   `ThinkingDeltaEvent`s
 *
 * The two texts of a stream. Each is split by the upstream its own way,
 * so a filter keeps one state for each.
 */
typedef enum {
  SYMFONIC_TEXT_CHANNEL_ANSWER,
  SYMFONIC_TEXT_CHANNEL_THINKING,
} SymfonicTextChannel;

#define SYMFONIC_TYPE_TEXT_FILTER (symfonic_text_filter_get_type ())

/**
 * SymfonicTextFilterClass::filter:
 * @self: a #SymfonicTextFilter
 * @channel: the text @text belongs to
 * @text: (array length=length) (element-type guint8): the next piece of
 *   that text, whole characters, not NUL-terminated
 * @length: its length in bytes, never 0
 * @out: where what can no longer change is appended
 *
 * Filters the next piece of @channel's text.
 */

/**
 * SymfonicTextFilterClass::passes:
 * @self: a #SymfonicTextFilter
 * @channel: the text @text belongs to
 * @text: (array length=length) (element-type guint8): the next piece of
 *   that text, whole characters, not NUL-terminated
 * @length: its length in bytes, never 0
 *
 * Whether @filter would append all of @text to its output unchanged and
 * withhold nothing, so that the piece can go on as it is, uncopied.
 *
 * Returns: %TRUE only if feeding @text would append exactly @text and
 *   leave the filter as it was
 */

/**
 * SymfonicTextFilterClass::withheld:
 * @self: a #SymfonicTextFilter
 *
 * How many bytes of text @self holds back now: fed, but not yet appended
 * to an output by #SymfonicTextFilterClass::filter, such as what could
 * still be the start of a tag.
 *
 * Returns: the bytes withheld, over both channels
 */

G_DECLARE_DERIVABLE_TYPE (SymfonicTextFilter, symfonic_text_filter, SYMFONIC, TEXT_FILTER, GObject)

/**
 * SymfonicTextFilterClass:
 * @parent_class: the parent class
 * @filter: filters the next piece of @channel's text, which holds only
 *   whole UTF-8 characters (given valid input), and appends to @out what
 *   can no longer change; it may withhold the rest, such as what could
 *   still be the beginning of a tag.
 * @flush: @channel's text is over: appends to @out whatever was withheld.
 *   The filter may be fed again afterwards. The default appends nothing.
 * @withheld: optional: how many bytes of text the filter holds back
 *   now, not yet appended by @filter (what could still be the start of a
 *   tag, say), which the gateway's metrics add up over all streams
 *   (`symfonic_filter_held_bytes`).
 * @passes: optional: whether @filter would pass the next piece of
 *   @channel's text on whole and unchanged, which it checks without
 *   copying it (most pieces hold nothing to filter). Without it, every
 *   piece goes through @filter. A subclass that overrides @filter sets
 *   its own @passes, or %NULL.
 *
 * What a subclass implements. The base class withholds an unfinished
 * UTF-8 character at the end of a piece and keeps the two channels apart,
 * so @filter sees each channel's text as one sequence of whole characters,
 * however the upstream split it.
 */
struct _SymfonicTextFilterClass
{
  GObjectClass parent_class;

  void (*filter) (SymfonicTextFilter  *self,
                  SymfonicTextChannel  channel,
                  const char          *text,
                  gsize                length,
                  GString             *out);
  void (*flush)  (SymfonicTextFilter  *self,
                  SymfonicTextChannel  channel,
                  GString             *out);
  gboolean (*passes) (SymfonicTextFilter  *self,
                      SymfonicTextChannel  channel,
                      const char          *text,
                      gsize                length);
  gsize    (*withheld) (SymfonicTextFilter *self);

  /*< private >*/
  gpointer padding[6];
};

void           symfonic_text_filter_feed            (SymfonicTextFilter  *self,
                                                     SymfonicTextChannel  channel,
                                                     const char          *text,
                                                     gsize                length,
                                                     GString             *out);
void           symfonic_text_filter_flush           (SymfonicTextFilter  *self,
                                                     SymfonicTextChannel  channel,
                                                     GString             *out);
gboolean       symfonic_text_filter_process         (SymfonicTextFilter  *self,
                                                     SymfonicStream      *stream,
                                                     SymfonicEvent       *event);
void           symfonic_text_filter_drain           (SymfonicTextFilter  *self,
                                                     SymfonicStream      *stream);
SymfonicEvent *symfonic_text_filter_clean_terminal  (SymfonicTextFilter  *self,
                                                     SymfonicEvent       *terminal);

G_END_DECLS
