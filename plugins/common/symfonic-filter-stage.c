/* symfonic-filter-stage.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-filter-stage.h"

static void
state_free (gpointer data)
{
  SymfonicFilterStageState *state = data;

  g_object_unref (state->filter);
  g_free (state);
}

/* Makes the stream's state for @stage, at its first event. */
gpointer
symfonic_filter_stage_new_state (SymfonicStage                  *stage,
                                 const SymfonicFilterStageFuncs *funcs,
                                 SymfonicStream                 *stream)
{
  SymfonicFilterStageState *state = g_malloc0 (funcs->state_size);

  state->filter = funcs->new_filter (stage, FALSE);
  symfonic_stream_set_stage_data (stream, stage, state, state_free);

  return state;
}

/* Most terminals carry no text (those of the provider sources never do):
 * they pass as they are, without a filter built for nothing. What the
 * terminal's filter removes is not counted: when deltas streamed, what
 * they held was counted there. */
void
symfonic_filter_stage_emit_terminal (SymfonicStage                  *stage,
                                     const SymfonicFilterStageFuncs *funcs,
                                     SymfonicStream                 *stream,
                                     SymfonicEvent                  *terminal)
{
  g_autoptr(SymfonicTextFilter) fresh = NULL;
  g_autoptr(SymfonicEvent) clean = NULL;

  gsize length;

  symfonic_event_get_text (terminal, &length);
  if (length == 0)
    {
      symfonic_stream_emit (stream, terminal);
      return;
    }

  fresh = funcs->new_filter (stage, TRUE);
  clean = symfonic_text_filter_clean_terminal (fresh, terminal);
  symfonic_stream_emit (stream, clean);
}
