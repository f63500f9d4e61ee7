/* symfonic-chunk-encoder.c: the untyped stream of StreamChunks
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-encoder-private.h"
#include "symfonic-json-private.h"

/* `data: {"event_type":...,"data":...,"run_id":...}`. Which chunks a
 * stream carries is the projection stage's decision (it knows the release
 * line); typed events that reach this encoder were not projected and are
 * not part of the untyped contract. */
static void
append_chunk (SymfonicEncoder *self,
              GString         *out,
              const char      *event_type,
              JsonNode        *data)
{
  symfonic_encoder_begin_frame (self, out, NULL);
  g_string_append (out, "data: {\"event_type\":");
  symfonic_json_append_string (out, event_type, -1);
  g_string_append (out, ",\"data\":");
  symfonic_json_append_node (out, data);
  g_string_append (out, ",\"run_id\":");
  symfonic_json_append_string (out, symfonic_invocation_get_run_id (self->invocation), -1);
  g_string_append (out, "}\n\n");
}

static SymfonicFrameClass
chunk_event (SymfonicEncoder *self,
             SymfonicEvent   *event,
             GString         *out)
{
  const char *event_type;
  JsonNode *data;

  switch (symfonic_event_get_kind (event))
    {
    case SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE:
      symfonic_encoder_keep_fallback (self, event);
      return SYMFONIC_FRAME_NONE;

    case SYMFONIC_EVENT_KIND_CHUNK:
      break;

    case SYMFONIC_EVENT_KIND_ACTIVATION:
    case SYMFONIC_EVENT_KIND_THINKING_DELTA:
    case SYMFONIC_EVENT_KIND_TEXT_DELTA:
    case SYMFONIC_EVENT_KIND_TOOL_CALL_START:
    case SYMFONIC_EVENT_KIND_TOOL_CALL_DELTA:
    case SYMFONIC_EVENT_KIND_TOOL_RESULT:
    case SYMFONIC_EVENT_KIND_MEMORY_EXTRACTED:
    case SYMFONIC_EVENT_KIND_CONSOLIDATION_SCHEDULED:
    case SYMFONIC_EVENT_KIND_GRAPH_NODE_CREATED:
    case SYMFONIC_EVENT_KIND_GRAPH_EDGE_CREATED:
    default:
      return SYMFONIC_FRAME_NONE;
    }

  event_type = symfonic_event_get_name (event);
  data = symfonic_event_get_data (event);
  append_chunk (self, out, event_type, data);

  if (g_str_equal (event_type, "text_delta"))
    {
      if (JSON_NODE_HOLDS_VALUE (data) && json_node_get_value_type (data) == G_TYPE_STRING)
        g_string_append (self->text, json_node_get_string (data));
      return SYMFONIC_FRAME_DROPPABLE;
    }

  return g_str_equal (event_type, "thinking") ? SYMFONIC_FRAME_DROPPABLE : SYMFONIC_FRAME_KEPT;
}

static void
chunk_success (SymfonicEncoder *self,
               gint64           duration_ms,
               GString         *out)
{
  g_autoptr(JsonNode) data = json_node_new (JSON_NODE_OBJECT);
  g_autoptr(JsonObject) object = json_object_new ();

  /* final_response is exactly the concatenated text_delta data; the
   * upstream's own text only when no delta streamed (seed 000) */
  json_object_set_string_member (object, "final_response", symfonic_encoder_final_text (self));
  json_node_set_object (data, object);
  append_chunk (self, out, "done", data);
}

const SymfonicEncoderVTable symfonic_chunk_encoder = {
  .instance_size = sizeof (SymfonicEncoder),
  .streaming = TRUE,
  .event = chunk_event,
  .success = chunk_success,
};
