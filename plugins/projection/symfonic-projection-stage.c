/* symfonic-projection-stage.c: typed events onto untyped chunks
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-projection-stage.h"

/* The untyped stream has two published shapes, chosen by the stream's
 * release line (DESIGN section 5):
 *
 * 11.0 and later, the text-delta contract: each cleaned text delta is a
 * `text_delta` chunk carrying the delta as a string, thinking text a
 * `thinking` chunk only when there is some, each tool call one
 * `tool_call` chunk once its arguments are whole and each tool result a
 * `tool_result` chunk (the typed payloads), and nothing else is
 * projected, so a plain turn has exactly the kinds {text_delta, done}. The
 * upstream's ResponseCompleteEvent goes on to the encoder, which builds
 * `done` from the deltas and uses that text only when no delta streamed.
 *
 * Before 11.0: an unconditional `thinking` chunk with null data before any
 * upstream I/O, activations as `spreading_activation`, and the answer as
 * one LangGraph-style `agent` node mapping with the full text (and the
 * tool calls the model made, as LangChain's AI messages carry them),
 * followed by a ResponseCompleteEvent with that text so `done` carries it
 * too; tool results are `tools` node mappings as they come.
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
  char    *name;
  char    *id;
  /* NULL when the call's source gave none (a typed runtime's) */
  GString *arguments;
} ToolCall;

typedef struct
{
  gboolean  text_deltas;
  /* before 11.0: the answer so far, the upstream's own final text, and
   * whether the `update` went out */
  GString  *text;
  char     *upstream_text;
  gint64    upstream_duration_ms;
  gboolean  answered;
  /* 11.0: the call whose arguments still stream, NULL when none; before
   * 11.0: every call, for the answer's message */
  GPtrArray *tool_calls;
  gboolean   call_pending;
} StreamState;

static void
tool_call_free (gpointer data)
{
  ToolCall *call = data;

  g_free (call->name);
  g_free (call->id);
  if (call->arguments != NULL)
    g_string_free (call->arguments, TRUE);
  g_free (call);
}

static void symfonic_projection_stage_stage_init (SymfonicStageInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SymfonicProjectionStage, symfonic_projection_stage, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_STAGE, symfonic_projection_stage_stage_init))

static void
stream_state_free (gpointer data)
{
  StreamState *state = data;

  g_string_free (state->text, TRUE);
  g_free (state->upstream_text);
  g_clear_pointer (&state->tool_calls, g_ptr_array_unref);
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

static const char *
payload_string (SymfonicEvent *event,
                const char    *name)
{
  JsonObject *payload = symfonic_event_get_payload (event);
  JsonNode *node = payload != NULL ? json_object_get_member (payload, name) : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;

  return json_node_get_string (node);
}

/* A tool call as it starts: its arguments follow in fragments. */
static void
start_tool_call (StreamState   *state,
                 SymfonicEvent *event)
{
  ToolCall *call = g_new0 (ToolCall, 1);
  const char *arguments = payload_string (event, "arguments");

  call->name = g_strdup (payload_string (event, "tool_name") ?: "");
  call->id = g_strdup (payload_string (event, "tool_call_id") ?: "");
  call->arguments = arguments != NULL ? g_string_new (arguments) : NULL;
  if (state->tool_calls == NULL)
    state->tool_calls = g_ptr_array_new_with_free_func (tool_call_free);
  g_ptr_array_add (state->tool_calls, call);
  state->call_pending = TRUE;
}

/* The next fragment of the latest call of its id. */
static void
continue_tool_call (StreamState   *state,
                    SymfonicEvent *event)
{
  const char *id = payload_string (event, "tool_call_id");
  const char *fragment = payload_string (event, "arguments");

  for (guint i = state->tool_calls != NULL ? state->tool_calls->len : 0; i > 0 && id != NULL && fragment != NULL; i--)
    {
      ToolCall *call = g_ptr_array_index (state->tool_calls, i - 1);

      if (strcmp (call->id, id) != 0)
        continue;
      if (call->arguments == NULL)
        call->arguments = g_string_new (NULL);
      g_string_append (call->arguments, fragment);
      return;
    }
}

/* 11.0: the call whose arguments were streaming goes out whole, as its
 * typed start and fragments together say it. */
static void
emit_tool_call (SymfonicStream *stream,
                StreamState    *state)
{
  g_autoptr(JsonBuilder) builder = NULL;
  g_autoptr(JsonNode) data = NULL;
  ToolCall *call;

  if (!state->call_pending)
    return;
  state->call_pending = FALSE;
  call = g_ptr_array_index (state->tool_calls, state->tool_calls->len - 1);

  builder = json_builder_new_immutable ();
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "tool_name");
  json_builder_add_string_value (builder, call->name);
  json_builder_set_member_name (builder, "tool_call_id");
  json_builder_add_string_value (builder, call->id);
  if (call->arguments != NULL)
    {
      json_builder_set_member_name (builder, "arguments");
      json_builder_add_string_value (builder, call->arguments->str);
    }
  json_builder_end_object (builder);
  data = json_builder_get_root (builder);
  emit_chunk (stream, "tool_call", data);
  /* only the pending one is kept */
  g_ptr_array_set_size (state->tool_calls, 0);
}

/* Before 11.0: the model's calls in the answer's AI message, as
 * LangChain's `tool_calls` (`args` an object). */
static void
add_tool_calls (JsonBuilder *builder,
                StreamState *state)
{
  if (state->tool_calls == NULL || state->tool_calls->len == 0)
    return;

  json_builder_set_member_name (builder, "tool_calls");
  json_builder_begin_array (builder);
  for (guint i = 0; i < state->tool_calls->len; i++)
    {
      ToolCall *call = g_ptr_array_index (state->tool_calls, i);
      const char *text = call->arguments != NULL ? call->arguments->str : "";
      g_autoptr(JsonNode) args = symfonic_json_parse (text, strlen (text), SYMFONIC_JSON_MAX_DEPTH, NULL);

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "name");
      json_builder_add_string_value (builder, call->name);
      json_builder_set_member_name (builder, "args");
      if (args != NULL && JSON_NODE_HOLDS_OBJECT (args))
        json_builder_add_value (builder, g_steal_pointer (&args));
      else
        {
          json_builder_begin_object (builder);
          json_builder_end_object (builder);
        }
      json_builder_set_member_name (builder, "id");
      json_builder_add_string_value (builder, call->id);
      json_builder_set_member_name (builder, "type");
      json_builder_add_string_value (builder, "tool_call");
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
}

/* Before 11.0: a tool's answer as the `tools` node's ToolMessage. */
static void
emit_tool_result (SymfonicStream *stream,
                  SymfonicEvent  *event)
{
  g_autoptr(JsonBuilder) builder = json_builder_new_immutable ();
  g_autoptr(JsonNode) update = NULL;
  JsonObject *payload = symfonic_event_get_payload (event);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "tools");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "messages");
  json_builder_begin_array (builder);
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, "tool");
  json_builder_set_member_name (builder, "content");
  json_builder_add_value (builder, json_node_copy (json_object_get_member (payload, "result")));
  json_builder_set_member_name (builder, "tool_call_id");
  json_builder_add_value (builder, json_node_copy (json_object_get_member (payload, "tool_call_id")));
  json_builder_end_object (builder);
  json_builder_end_array (builder);
  json_builder_end_object (builder);
  json_builder_end_object (builder);
  update = json_builder_get_root (builder);
  emit_chunk (stream, "update", update);
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
  add_tool_calls (builder, state);
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
                     StreamState    *state,
                     SymfonicEvent  *event)
{
  SymfonicEventKind kind = symfonic_event_get_kind (event);
  const char *text;

  /* a call's fragments come right after its start: any other event
   * says its arguments are whole */
  if (kind == SYMFONIC_EVENT_KIND_TOOL_CALL_DELTA)
    {
      if (state->call_pending)
        continue_tool_call (state, event);
      return;
    }
  if (G_UNLIKELY (state->call_pending))
    emit_tool_call (stream, state);

  switch (kind)
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

    case SYMFONIC_EVENT_KIND_TOOL_CALL_START:
      start_tool_call (state, event);
      break;

    case SYMFONIC_EVENT_KIND_TOOL_RESULT:
      emit_chunk (stream, "tool_result", symfonic_event_get_data (event));
      break;

    /* the typed stream's alone: 11.0 has no convergent form for them */
    case SYMFONIC_EVENT_KIND_ACTIVATION:
    case SYMFONIC_EVENT_KIND_TOOL_CALL_DELTA:
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

    case SYMFONIC_EVENT_KIND_TOOL_CALL_START:
      start_tool_call (state, event);
      break;

    case SYMFONIC_EVENT_KIND_TOOL_CALL_DELTA:
      continue_tool_call (state, event);
      break;

    case SYMFONIC_EVENT_KIND_TOOL_RESULT:
      emit_tool_result (stream, event);
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
    project_text_deltas (stream, state, event);
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
  else
    emit_tool_call (stream, state);

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
