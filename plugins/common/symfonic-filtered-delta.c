/* symfonic-filtered-delta.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Most deltas go through a text filter unchanged: such a delta is passed
 * on as it is, and the filter writes into a buffer of its thread's, so
 * that the common case costs no allocation at all.
 */
#include "config.h"

#include "symfonic-filtered-delta.h"

/* one rare large delta does not leave its size behind for the thread's life */
#define KEPT_BYTES (64 * 1024)

static void
free_scratch (gpointer data)
{
  g_string_free (data, TRUE);
}

static GPrivate scratch = G_PRIVATE_INIT (free_scratch);

/* An empty buffer for a filter's output, valid until the next call on
 * this thread: a stage uses it within one hook. */
GString *
symfonic_filtered_delta_scratch (void)
{
  GString *text = g_private_get (&scratch);

  if (text == NULL || text->allocated_len > KEPT_BYTES)
    {
      text = g_string_sized_new (256);
      g_private_replace (&scratch, text);
    }
  g_string_truncate (text, 0);

  return text;
}

/* Emits @delta itself when @clean is its text, a new delta of its kind
 * when the filter changed the text, nothing when it withheld all of it.
 * An empty delta that carries more than text (a thinking signature) goes
 * on as it is. */
void
symfonic_filtered_delta_emit (SymfonicStream *stream,
                              SymfonicEvent  *delta,
                              GString        *clean)
{
  const char *text = symfonic_event_get_text (delta);
  g_autoptr(SymfonicEvent) changed = NULL;

  if (clean->len == 0 && (*text != '\0' || symfonic_event_get_payload (delta) == NULL))
    return;

  if (strlen (text) == clean->len && memcmp (text, clean->str, clean->len) == 0)
    {
      symfonic_stream_emit (stream, delta);
      return;
    }

  changed = symfonic_event_get_kind (delta) == SYMFONIC_EVENT_THINKING_DELTA
    ? symfonic_event_new_thinking_delta (clean->str)
    : symfonic_event_new_text_delta (clean->str);
  symfonic_stream_emit (stream, changed);
}
