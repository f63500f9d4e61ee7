/* symfonic-projection-stage.c: typed events onto untyped chunks
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-projection-stage.h"

/* The untyped stream has two published shapes, chosen by the stream's
 * release line (DESIGN section 5):
 *
 * 11.0 and later, the text-delta contract: each cleaned text delta is a
 * `text_delta` chunk carrying the delta as a string, thinking text a
 * `thinking` chunk only when there is some, and nothing else is projected,
 * so a plain turn has exactly the kinds {text_delta, done}. The upstream's
 * ResponseCompleteEvent goes on to the encoder, which builds `done` from
 * the deltas and uses that text only when no delta streamed.
 *
 * Before 11.0: an unconditional `thinking` chunk with null data before any
 * upstream I/O, activations as `spreading_activation`, and the answer as
 * one LangGraph-style `agent` node mapping with the full text, followed by
 * a ResponseCompleteEvent with that text so `done` carries it too.
 *
 * `consolidating` chunks (and any other chunk an earlier stage projected)
 * pass through untouched on both lines.
 *
 * It is not a SymfonicFilterStage, though it reads the same deltas: it
 * withholds nothing that a later event could release (it turns each delta
 * into a chunk at once, or gathers the whole answer before 11.0), it
 * emits chunks rather than deltas, and its terminal is the encoder's or
 * its own, never a cleaned copy of the upstream's. What it shares with
 * the filtering stages is the notion of the events that close the answer,
 * after which the 9.x/10.x answer goes out. */

struct _SymfonicProjectionStage
{
  GObject parent_instance;
};

typedef struct
{
  gboolean  text_deltas;
  /* before 11.0: the answer so far, the upstream's own final text, and
   * whether the `update` went out */
  GString  *text;
  char     *upstream_text;
  gint64    upstream_duration_ms;
  gboolean  answered;
} StreamState;

static void symfonic_projection_stage_stage_init (SymfonicStageInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SymfonicProjectionStage, symfonic_projection_stage, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_STAGE, symfonic_projection_stage_stage_init))

static void
stream_state_free (gpointer data)
{
  StreamState *state = data;

  g_string_free (state->text, TRUE);
  g_free (state->upstream_text);
  g_free (state);
}

/* The line is read once per stream: stages may only change it during
 * admission and begin, which are over before the first event. */
static StreamState *
get_state (SymfonicProjectionStage *self,
           SymfonicStream          *stream)
{
  StreamState *state = symfonic_stream_get_stage_data (stream, SYMFONIC_STAGE (self));

  if (state == NULL)
    {
      state = g_new0 (StreamState, 1);
      state->text_deltas = symfonic_publishes_text_deltas (symfonic_stream_get_release_line (stream));
      state->text = g_string_new (NULL);
      state->upstream_duration_ms = -1;
      symfonic_stream_set_stage_data (stream, SYMFONIC_STAGE (self), state, stream_state_free);
    }

  return state;
}

static void
emit_chunk (SymfonicStream *stream,
            const char     *event_type,
            JsonNode       *data)
{
  g_autoptr(SymfonicEvent) chunk = symfonic_event_new_chunk (event_type, data);

  symfonic_stream_emit (stream, chunk);
}

static void
emit_string_chunk (SymfonicStream *stream,
                   const char     *event_type,
                   const char     *text)
{
  g_autoptr(JsonNode) data = json_node_init_string (json_node_alloc (), text);

  emit_chunk (stream, event_type, data);
}

/* Before 11.0: the one `agent` node mapping, then the terminal text. */
static void
emit_answer (SymfonicStream *stream,
             StreamState    *state)
{
  g_autoptr(JsonBuilder) builder = json_builder_new_immutable ();
  g_autoptr(JsonNode) update = NULL;
  g_autoptr(SymfonicEvent) complete = NULL;
  const char *text;
  gint64 duration_ms;

  if (state->answered)
    return;
  state->answered = TRUE;

  /* a provider that sent its answer whole, with no delta, still answers */
  text = state->text->len > 0 || state->upstream_text == NULL ? state->text->str : state->upstream_text;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "agent");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "messages");
  json_builder_begin_array (builder);
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, "ai");
  json_builder_set_member_name (builder, "content");
  json_builder_add_string_value (builder, text);
  json_builder_end_object (builder);
  json_builder_end_array (builder);
  json_builder_end_object (builder);
  json_builder_end_object (builder);
  update = json_builder_get_root (builder);
  emit_chunk (stream, "update", update);

  duration_ms = state->upstream_duration_ms >= 0
    ? state->upstream_duration_ms
    : (g_get_monotonic_time () - symfonic_stream_get_start_time (stream)) / 1000;
  complete = symfonic_event_new_response_complete (text, duration_ms);
  symfonic_stream_emit (stream, complete);
}

static void
project_text_deltas (SymfonicStream *stream,
                     SymfonicEvent  *event)
{
  const char *text;

  switch (symfonic_event_get_kind (event))
    {
    case SYMFONIC_EVENT_KIND_TEXT_DELTA:
      text = symfonic_event_get_text (event, NULL);
      if (*text != '\0')
        emit_string_chunk (stream, "text_delta", text);
      break;

    case SYMFONIC_EVENT_KIND_THINKING_DELTA:
      /* only real thinking text, so a plain turn is {text_delta, done} */
      text = symfonic_event_get_text (event, NULL);
      if (*text != '\0')
        emit_string_chunk (stream, "thinking", text);
      break;

    case SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE:
    case SYMFONIC_EVENT_KIND_CHUNK:
      symfonic_stream_emit (stream, event);
      break;

    /* the typed stream's alone: 11.0 has no convergent form for them */
    case SYMFONIC_EVENT_KIND_ACTIVATION:
    case SYMFONIC_EVENT_KIND_TOOL_CALL_START:
    case SYMFONIC_EVENT_KIND_TOOL_CALL_DELTA:
    case SYMFONIC_EVENT_KIND_TOOL_RESULT:
    case SYMFONIC_EVENT_KIND_MEMORY_EXTRACTED:
    case SYMFONIC_EVENT_KIND_CONSOLIDATION_SCHEDULED:
    case SYMFONIC_EVENT_KIND_GRAPH_NODE_CREATED:
    case SYMFONIC_EVENT_KIND_GRAPH_EDGE_CREATED:
    default:
      break;
    }
}

static void
project_node_mappings (SymfonicStream *stream,
                       StreamState    *state,
                       SymfonicEvent  *event)
{
  SymfonicEventKind kind = symfonic_event_get_kind (event);

  switch (kind)
    {
    case SYMFONIC_EVENT_KIND_ACTIVATION:
      emit_chunk (stream, "spreading_activation", symfonic_event_get_data (event));
      break;

    case SYMFONIC_EVENT_KIND_TEXT_DELTA:
      if (state->answered)
        g_debug ("Dropped a text delta after the answer was sent");
      else
        g_string_append (state->text, symfonic_event_get_text (event, NULL));
      break;

    case SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE:
      /* replaced by ours, which carries the full text */
      if (state->upstream_text == NULL)
        {
          state->upstream_text = g_strdup (symfonic_event_get_text (event, NULL));
          state->upstream_duration_ms = symfonic_event_get_duration_ms (event);
        }
      emit_answer (stream, state);
      break;

    case SYMFONIC_EVENT_KIND_CHUNK:
      symfonic_stream_emit (stream, event);
      break;

    default:
      /* The answer is complete; but with nothing streamed yet, wait for
       * the upstream's terminal, whose text is the answer. The 9.x/10.x
       * stream never carried these events, nor thinking and tools. */
      if (symfonic_event_kind_closes_answer (kind) && state->text->len > 0)
        emit_answer (stream, state);
      break;
    }
}

static gboolean
symfonic_projection_stage_begin (SymfonicStage   *stage,
                                 SymfonicStream  *stream,
                                 GError         **error)
{
  StreamState *state = get_state (SYMFONIC_PROJECTION_STAGE (stage), stream);

  if (!state->text_deltas)
    emit_chunk (stream, "thinking", NULL);

  return TRUE;
}

static gboolean
symfonic_projection_stage_process (SymfonicStage   *stage,
                                   SymfonicStream  *stream,
                                   SymfonicEvent   *event,
                                   GError         **error)
{
  StreamState *state = get_state (SYMFONIC_PROJECTION_STAGE (stage), stream);

  if (state->text_deltas)
    project_text_deltas (stream, event);
  else
    project_node_mappings (stream, state, event);

  return TRUE;
}

static gboolean
symfonic_projection_stage_finish (SymfonicStage   *stage,
                                  SymfonicStream  *stream,
                                  GError         **error)
{
  StreamState *state = get_state (SYMFONIC_PROJECTION_STAGE (stage), stream);

  if (!state->text_deltas)
    emit_answer (stream, state);

  return TRUE;
}

static void
symfonic_projection_stage_stage_init (SymfonicStageInterface *iface)
{
  iface->begin = symfonic_projection_stage_begin;
  iface->process = symfonic_projection_stage_process;
  iface->finish = symfonic_projection_stage_finish;
}

static void
symfonic_projection_stage_class_init (SymfonicProjectionStageClass *klass)
{
  /* what a chunks route needs: only this stage knows the chunk shapes of
   * the stream's release line */
  symfonic_stage_type_declare_order (G_TYPE_FROM_CLASS (klass), (const char * const[]) { "projection", NULL },
                                     NULL, NULL, NULL);
}

static void
symfonic_projection_stage_init (SymfonicProjectionStage *self)
{
}
