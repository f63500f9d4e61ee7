/* symfonic-answer-encoder.c: one AgentResponse for /chat and /resume
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-encoder-private.h"
#include "symfonic-json-private.h"

/* The same pipeline as the streams, accumulated: the cleaned text the
 * stages let through, the memory ops they extracted and, on a turn that
 * called tools, the calls (with what each returned, when the upstream
 * said). A turn without tool calls answers exactly as before. */
typedef struct
{
  char     *name;
  char     *id;
  GString  *arguments;
  JsonNode *result;
} AnswerCall;

typedef struct
{
  SymfonicEncoder  parent;
  JsonArray       *memory_ops;
  GPtrArray       *tool_calls;
} AnswerEncoder;

static void
answer_call_free (gpointer data)
{
  AnswerCall *call = data;

  g_free (call->name);
  g_free (call->id);
  if (call->arguments != NULL)
    g_string_free (call->arguments, TRUE);
  g_clear_pointer (&call->result, json_node_unref);
  g_free (call);
}

static void
keep_tool_event (AnswerEncoder *self,
                 SymfonicEvent *event)
{
  SymfonicEncoder *encoder = &self->parent;
  SymfonicToolCall call;

  switch (symfonic_event_get_kind (event))
    {
    case SYMFONIC_EVENT_KIND_TOOL_CALL_START:
      {
        AnswerCall *kept = g_new0 (AnswerCall, 1);

        symfonic_encoder_read_tool_call (encoder, event, &call);
        kept->name = g_strdup (call.name);
        kept->id = g_strdup (call.id);
        kept->arguments = call.arguments != NULL ? g_string_new (call.arguments) : NULL;
        if (self->tool_calls == NULL)
          self->tool_calls = g_ptr_array_new_with_free_func (answer_call_free);
        g_ptr_array_add (self->tool_calls, kept);
      }
      break;

    case SYMFONIC_EVENT_KIND_TOOL_CALL_DELTA:
      if (symfonic_encoder_read_tool_delta (encoder, event, &call) && self->tool_calls != NULL &&
          call.ordinal < self->tool_calls->len)
        {
          AnswerCall *kept = g_ptr_array_index (self->tool_calls, call.ordinal);

          if (kept->arguments == NULL)
            kept->arguments = g_string_new (NULL);
          g_string_append (kept->arguments, call.arguments);
        }
      break;

    case SYMFONIC_EVENT_KIND_TOOL_RESULT:
      {
        JsonObject *payload = symfonic_event_get_payload (event);
        const char *id = json_object_get_string_member_with_default (payload, "tool_call_id", NULL);

        for (guint i = self->tool_calls != NULL ? self->tool_calls->len : 0; i > 0 && id != NULL; i--)
          {
            AnswerCall *kept = g_ptr_array_index (self->tool_calls, i - 1);

            if (g_strcmp0 (kept->id, id) == 0 && kept->result == NULL)
              {
                kept->result = json_node_ref (json_object_get_member (payload, "result"));
                break;
              }
          }
      }
      break;

    default:
      break;
    }
}

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

    case SYMFONIC_EVENT_KIND_TOOL_CALL_START:
    case SYMFONIC_EVENT_KIND_TOOL_CALL_DELTA:
    case SYMFONIC_EVENT_KIND_TOOL_RESULT:
      keep_tool_event (self, event);
      break;

    case SYMFONIC_EVENT_KIND_ACTIVATION:
    case SYMFONIC_EVENT_KIND_THINKING_DELTA:
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
  if (self->tool_calls != NULL)
    {
      g_string_append (out, ",\"tool_calls\":[");
      for (guint i = 0; i < self->tool_calls->len; i++)
        {
          AnswerCall *call = g_ptr_array_index (self->tool_calls, i);

          g_string_append (out, i > 0 ? ",{\"tool_name\":" : "{\"tool_name\":");
          symfonic_json_append_string (out, call->name, -1);
          g_string_append (out, ",\"tool_call_id\":");
          symfonic_json_append_string (out, call->id, -1);
          if (call->arguments != NULL)
            {
              g_string_append (out, ",\"arguments\":");
              symfonic_json_append_string (out, call->arguments->str, call->arguments->len);
            }
          if (call->result != NULL)
            {
              g_string_append (out, ",\"result\":");
              symfonic_json_append_node (out, call->result);
            }
          g_string_append_c (out, '}');
        }
      g_string_append_c (out, ']');
    }
  g_string_append_c (out, '}');
}

static void
answer_clear (SymfonicEncoder *encoder)
{
  AnswerEncoder *self = (AnswerEncoder *) encoder;

  g_clear_pointer (&self->memory_ops, json_array_unref);
  g_clear_pointer (&self->tool_calls, g_ptr_array_unref);
}

const SymfonicEncoderVTable symfonic_answer_encoder = {
  .instance_size = sizeof (AnswerEncoder),
  .streaming = FALSE,
  .event = answer_event,
  .success = answer_success,
  .clear = answer_clear,
};
