/* symfonic-answer-encoder.c: one AgentResponse for /chat and /resume
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-encoder-private.h"
#include "symfonic-json-private.h"

/* The same pipeline as the streams, accumulated: the cleaned text the
 * stages let through and the memory ops they extracted. */
typedef struct
{
  SymfonicEncoder  parent;
  JsonArray       *memory_ops;
} AnswerEncoder;

static SymfonicFrameClass
answer_event (SymfonicEncoder *encoder,
              SymfonicEvent   *event,
              GString         *out)
{
  AnswerEncoder *self = (AnswerEncoder *) encoder;

  switch (symfonic_event_get_kind (event))
    {
    case SYMFONIC_EVENT_KIND_TEXT_DELTA:
      g_string_append (encoder->text, symfonic_event_get_text (event, NULL));
      break;

    case SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE:
      symfonic_encoder_keep_fallback (encoder, event);
      break;

    case SYMFONIC_EVENT_KIND_MEMORY_EXTRACTED:
      {
        JsonArray *ops = json_object_get_array_member (symfonic_event_get_payload (event), "ops");
        guint n = json_array_get_length (ops);

        if (self->memory_ops == NULL)
          self->memory_ops = json_array_new ();
        for (guint i = 0; i < n; i++)
          json_array_add_element (self->memory_ops, symfonic_json_node_deep_copy (json_array_get_element (ops, i)));
      }
      break;

    case SYMFONIC_EVENT_KIND_ACTIVATION:
    case SYMFONIC_EVENT_KIND_THINKING_DELTA:
    case SYMFONIC_EVENT_KIND_TOOL_CALL_START:
    case SYMFONIC_EVENT_KIND_TOOL_CALL_DELTA:
    case SYMFONIC_EVENT_KIND_TOOL_RESULT:
    case SYMFONIC_EVENT_KIND_CONSOLIDATION_SCHEDULED:
    case SYMFONIC_EVENT_KIND_GRAPH_NODE_CREATED:
    case SYMFONIC_EVENT_KIND_GRAPH_EDGE_CREATED:
    case SYMFONIC_EVENT_KIND_CHUNK:
    default:
      break;
    }

  return SYMFONIC_FRAME_NONE;
}

static void
answer_success (SymfonicEncoder *encoder,
                gint64           duration_ms,
                GString         *out)
{
  AnswerEncoder *self = (AnswerEncoder *) encoder;
  const char *session_id = symfonic_invocation_get_session_id (encoder->invocation);

  g_string_append (out, "{\"response\":");
  symfonic_json_append_string (out, symfonic_encoder_final_text (encoder), -1);
  g_string_append (out, ",\"run_id\":");
  symfonic_json_append_string (out, symfonic_invocation_get_run_id (encoder->invocation), -1);
  g_string_append (out, ",\"session_id\":");
  if (session_id != NULL)
    symfonic_json_append_string (out, session_id, -1);
  else
    g_string_append (out, "null");
  g_string_append (out, ",\"memory_ops\":");
  symfonic_json_append_array (out, self->memory_ops, "[]");
  g_string_append_c (out, '}');
}

static void
answer_clear (SymfonicEncoder *encoder)
{
  AnswerEncoder *self = (AnswerEncoder *) encoder;

  g_clear_pointer (&self->memory_ops, json_array_unref);
}

const SymfonicEncoderVTable symfonic_answer_encoder = {
  .instance_size = sizeof (AnswerEncoder),
  .streaming = FALSE,
  .event = answer_event,
  .success = answer_success,
  .clear = answer_clear,
};
