/* symfonic-openai-encoder.c: OpenAI's chat completions wire format
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-encoder-private.h"
#include "symfonic-event-private.h"
#include "symfonic-json-private.h"
#include "symfonic-string-private.h"

/* What an OpenAI SDK parses: `chat.completion.chunk`s with `delta.content`,
 * `delta.reasoning_content` (the convention of vLLM, llama.cpp, DeepSeek
 * and OpenRouter) and `delta.tool_calls`, a last chunk with the
 * finish_reason, the usage chunk (`choices: []`) when the client asked for
 * it, and `data: [DONE]`; or one `chat.completion` object. */
typedef struct
{
  SymfonicEncoder  parent;
  /* every chunk's opening, up to the choices: written once per stream */
  GString         *prefix;
  /* the assistant role went out, with the first delta */
  gboolean         role_sent;
  /* one answer: the reasoning, and each tool call by its ordinal, its
   * arguments gathered from its fragments */
  GString         *reasoning;
  GPtrArray       *tool_calls;
  /* the log probabilities of the answer's tokens, when the upstream gave
   * them, as one answer's `logprobs.content` */
  JsonArray       *logprobs;
} OpenaiEncoder;

typedef struct
{
  char    *id;
  char    *name;
  GString *arguments;
} AnswerCall;

static void
answer_call_free (gpointer data)
{
  AnswerCall *call = data;

  g_free (call->id);
  g_free (call->name);
  g_string_free (call->arguments, TRUE);
  g_free (call);
}

static void
write_head (OpenaiEncoder *self,
            GString       *out,
            const char    *object)
{
  SymfonicEncoder *encoder = &self->parent;

  g_string_append (out, "{\"id\":\"chatcmpl-");
  g_string_append (out, symfonic_invocation_get_run_id (encoder->invocation));
  g_string_append (out, "\",\"object\":\"");
  g_string_append (out, object);
  g_string_append_printf (out, "\",\"created\":%" G_GINT64_FORMAT ",\"model\":",
                          g_get_real_time () / G_USEC_PER_SEC);
  symfonic_json_append_string (out, symfonic_encoder_get_model (encoder), -1);
  g_string_append (out, ",\"choices\":[");
}

/* The counts, and the details the upstream gave: the cached part of the
 * prompt, the reasoning part of the completion. */
static void
write_usage (SymfonicEncoder *encoder,
             GString         *out)
{
  SymfonicEncoderUsage usage;

  symfonic_encoder_get_usage (encoder, &usage);
  g_string_append_printf (out, "\"usage\":{\"prompt_tokens\":%" G_GUINT64_FORMAT ",\"completion_tokens\":%"
                          G_GUINT64_FORMAT ",\"total_tokens\":%" G_GUINT64_FORMAT,
                          usage.input, usage.output, usage.input + usage.output);
  if (usage.cache_read >= 0)
    g_string_append_printf (out, ",\"prompt_tokens_details\":{\"cached_tokens\":%" G_GINT64_FORMAT "}",
                            usage.cache_read);
  if (usage.reasoning >= 0)
    g_string_append_printf (out, ",\"completion_tokens_details\":{\"reasoning_tokens\":%" G_GINT64_FORMAT "}",
                            usage.reasoning);
  g_string_append_c (out, '}');
}

/* The upstream's own reason when it is OpenAI's; else the typed one, of
 * which OpenAI has all but refusal, a content filter to its clients. */
static const char *
finish_reason (SymfonicEncoder *encoder)
{
  static const char * const openai_reasons[] = { "stop", "length", "tool_calls", "content_filter", "function_call" };
  const char *said = symfonic_encoder_terminal_string (encoder, "finish_reason");
  const char *reason;

  for (guint i = 0; said != NULL && i < G_N_ELEMENTS (openai_reasons); i++)
    {
      if (strcmp (said, openai_reasons[i]) == 0)
        return openai_reasons[i];
    }
  reason = symfonic_encoder_finish_reason (encoder);

  return strcmp (reason, "refusal") == 0 ? "content_filter" : reason;
}

/* `{"index":i,"id":…,"type":"function","function":{…}}`: a call's start,
 * with the arguments it came with; a typed runtime's call, which has
 * none, is one without arguments */
static void
write_tool_call_start (const SymfonicToolCall *call,
                       GString                *out)
{
  g_string_append_printf (out, "{\"index\":%u,\"id\":", call->ordinal);
  symfonic_json_append_string (out, call->id, -1);
  g_string_append (out, ",\"type\":\"function\",\"function\":{\"name\":");
  symfonic_json_append_string (out, call->name, -1);
  g_string_append (out, ",\"arguments\":");
  symfonic_json_append_string (out, call->arguments != NULL ? call->arguments : "{}", -1);
  g_string_append (out, "}}");
}

/* `{"index":i,"function":{"arguments":…}}`: the next fragment */
static void
write_tool_call_delta (const SymfonicToolCall *call,
                       GString                *out)
{
  g_string_append_printf (out, "{\"index\":%u,\"function\":{\"arguments\":", call->ordinal);
  symfonic_json_append_string (out, call->arguments, -1);
  g_string_append (out, "}}");
}

/* One chunk: the delta's members are written between these two. */
static void
begin_chunk (OpenaiEncoder *self,
             GString       *out)
{
  if (self->prefix == NULL)
    {
      self->prefix = g_string_new ("data: ");
      write_head (self, self->prefix, "chat.completion.chunk");
    }
  symfonic_string_append_len (out, self->prefix->str, self->prefix->len);
  symfonic_string_append_literal (out, "{\"index\":0,\"delta\":{");
  if (!self->role_sent)
    {
      symfonic_string_append_literal (out, "\"role\":\"assistant\"");
      self->role_sent = TRUE;
    }
}

/* A provider delta's log probabilities, which its client asked for. */
static JsonNode *
logprobs_of (SymfonicEvent *event)
{
  JsonObject *extras = symfonic_event_get_payload (event);

  return extras != NULL ? json_object_get_member (extras, "logprobs") : NULL;
}

static void
end_chunk_with (GString    *out,
                const char *finish,
                JsonNode   *logprobs)
{
  symfonic_string_append_literal (out, "},\"logprobs\":");
  symfonic_json_append_node (out, logprobs);
  symfonic_string_append_literal (out, ",\"finish_reason\":");
  if (finish != NULL)
    {
      g_string_append_c (out, '"');
      symfonic_string_append_len (out, finish, strlen (finish));
      g_string_append_c (out, '"');
    }
  else
    symfonic_string_append_literal (out, "null");
  symfonic_string_append_literal (out, "}]}\n\n");
}

static void
end_chunk (GString    *out,
           const char *finish)
{
  symfonic_string_append_literal (out, "},\"logprobs\":null,\"finish_reason\":");
  if (finish != NULL)
    {
      g_string_append_c (out, '"');
      symfonic_string_append_len (out, finish, strlen (finish));
      g_string_append_c (out, '"');
    }
  else
    symfonic_string_append_literal (out, "null");
  symfonic_string_append_literal (out, "}]}\n\n");
}

/* The first delta also carries the role: a comma only after it. */
static void
begin_member (GString    *out,
              const char *member)
{
  if (out->str[out->len - 1] != '{')
    g_string_append_c (out, ',');
  symfonic_string_append_len (out, member, strlen (member));
}

static void
write_delta (OpenaiEncoder *self,
             const char    *member,
             const char    *text,
             gssize         length,
             GString       *out)
{
  begin_chunk (self, out);
  begin_member (out, member);
  symfonic_json_append_string (out, text, length);
  end_chunk (out, NULL);
}

static void
write_event_delta (OpenaiEncoder *self,
                   const char    *member,
                   SymfonicEvent *event,
                   GString       *out)
{
  gsize length;
  const char *text = symfonic_event_peek_text (event, &length);

  write_delta (self, member, text, length, out);
}

static SymfonicFrameClass
openai_stream_event (SymfonicEncoder *encoder,
                     SymfonicEvent   *event,
                     GString         *out)
{
  OpenaiEncoder *self = (OpenaiEncoder *) encoder;
  SymfonicToolCall call;

  switch (symfonic_encoder_provider_part (encoder, event, &call))
    {
    case SYMFONIC_PROVIDER_PART_TEXT:
      if (G_UNLIKELY (event->payload != NULL && logprobs_of (event) != NULL))
        {
          gsize length;
          const char *text = symfonic_event_peek_text (event, &length);

          begin_chunk (self, out);
          begin_member (out, "\"content\":");
          symfonic_json_append_string (out, text, length);
          end_chunk_with (out, NULL, logprobs_of (event));
        }
      else
        write_event_delta (self, "\"content\":", event, out);
      break;
    case SYMFONIC_PROVIDER_PART_THINKING:
      write_event_delta (self, "\"reasoning_content\":", event, out);
      break;
    case SYMFONIC_PROVIDER_PART_TOOL_CALL:
    case SYMFONIC_PROVIDER_PART_TOOL_CALL_DELTA:
      begin_chunk (self, out);
      begin_member (out, "\"tool_calls\":[");
      if (symfonic_event_peek_kind (event) == SYMFONIC_EVENT_KIND_TOOL_CALL_START)
        write_tool_call_start (&call, out);
      else
        write_tool_call_delta (&call, out);
      g_string_append_c (out, ']');
      end_chunk (out, NULL);
      break;
    case SYMFONIC_PROVIDER_PART_THINKING_EXTRAS:
    case SYMFONIC_PROVIDER_PART_NONE:
    default:
      return SYMFONIC_FRAME_NONE;
    }

  /* the provider format has no terminal that carries the whole text: a
   * shed delta would be lost without a word */
  return SYMFONIC_FRAME_KEPT;
}

static void
openai_stream_success (SymfonicEncoder *encoder,
                       gint64           duration_ms,
                       GString         *out)
{
  OpenaiEncoder *self = (OpenaiEncoder *) encoder;
  const char *unstreamed = symfonic_encoder_unstreamed_text (encoder);

  if (unstreamed != NULL)
    write_delta (self, "\"content\":", unstreamed, -1, out);

  begin_chunk (self, out);
  end_chunk (out, finish_reason (encoder));
  if (encoder->flags & SYMFONIC_ENCODER_INCLUDE_USAGE)
    {
      g_string_append_len (out, self->prefix->str, self->prefix->len);
      g_string_append (out, "],");
      write_usage (encoder, out);
      g_string_append (out, "}\n\n");
    }
  g_string_append (out, "data: [DONE]\n\n");
}

/* The SDKs raise an APIError for a chunk with an `error` member; [DONE]
 * closes the stream for any other client. */
static void
openai_stream_error (SymfonicEncoder    *encoder,
                     SymfonicErrorFrame *frame,
                     GString            *out)
{
  g_string_append (out, "data: ");
  symfonic_openai_error_body (frame, out);
  g_string_append (out, "\n\ndata: [DONE]\n\n");
}

static SymfonicFrameClass
openai_answer_event (SymfonicEncoder *encoder,
                     SymfonicEvent   *event,
                     GString         *out)
{
  OpenaiEncoder *self = (OpenaiEncoder *) encoder;
  SymfonicToolCall call;

  switch (symfonic_encoder_provider_part (encoder, event, &call))
    {
    case SYMFONIC_PROVIDER_PART_THINKING:
      if (self->reasoning == NULL)
        self->reasoning = g_string_new (NULL);
      g_string_append (self->reasoning, symfonic_event_get_text (event, NULL));
      break;
    case SYMFONIC_PROVIDER_PART_TOOL_CALL:
      {
        AnswerCall *answer_call = g_new0 (AnswerCall, 1);

        answer_call->id = g_strdup (call.id);
        answer_call->name = g_strdup (call.name);
        answer_call->arguments = g_string_new (call.arguments);
        if (self->tool_calls == NULL)
          self->tool_calls = g_ptr_array_new_with_free_func (answer_call_free);
        g_ptr_array_add (self->tool_calls, answer_call);
      }
      break;
    case SYMFONIC_PROVIDER_PART_TOOL_CALL_DELTA:
      if (self->tool_calls != NULL && call.ordinal < self->tool_calls->len)
        g_string_append (((AnswerCall *) g_ptr_array_index (self->tool_calls, call.ordinal))->arguments, call.arguments);
      break;
    case SYMFONIC_PROVIDER_PART_TEXT:
      if (G_UNLIKELY (event->payload != NULL && logprobs_of (event) != NULL))
        {
          JsonNode *logprobs = logprobs_of (event);
          JsonNode *content = JSON_NODE_HOLDS_OBJECT (logprobs) ? json_object_get_member (json_node_get_object (logprobs), "content")
                                                                : NULL;

          if (self->logprobs == NULL)
            self->logprobs = json_array_new ();
          for (guint i = 0; content != NULL && JSON_NODE_HOLDS_ARRAY (content) &&
                            i < json_array_get_length (json_node_get_array (content)); i++)
            json_array_add_element (self->logprobs, json_node_copy (json_array_get_element (json_node_get_array (content), i)));
        }
      break;
    case SYMFONIC_PROVIDER_PART_THINKING_EXTRAS:
    case SYMFONIC_PROVIDER_PART_NONE:
    default:
      break;
    }

  return SYMFONIC_FRAME_NONE;
}

static void
openai_answer_success (SymfonicEncoder *encoder,
                       gint64           duration_ms,
                       GString         *out)
{
  OpenaiEncoder *self = (OpenaiEncoder *) encoder;
  const char *text = symfonic_encoder_final_text (encoder);

  write_head (self, out, "chat.completion");
  g_string_append (out, "{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":");
  /* a turn that only calls tools has no content, as OpenAI answers it */
  if (*text == '\0' && self->tool_calls != NULL)
    g_string_append (out, "null");
  else
    symfonic_json_append_string (out, text, -1);
  if (self->reasoning != NULL)
    {
      g_string_append (out, ",\"reasoning_content\":");
      symfonic_json_append_string (out, self->reasoning->str, self->reasoning->len);
    }
  if (self->tool_calls != NULL)
    {
      g_string_append (out, ",\"tool_calls\":[");
      for (guint i = 0; i < self->tool_calls->len; i++)
        {
          AnswerCall *call = g_ptr_array_index (self->tool_calls, i);

          if (i > 0)
            g_string_append_c (out, ',');
          g_string_append (out, "{\"id\":");
          symfonic_json_append_string (out, call->id, -1);
          g_string_append (out, ",\"type\":\"function\",\"function\":{\"name\":");
          symfonic_json_append_string (out, call->name, -1);
          g_string_append (out, ",\"arguments\":");
          /* a typed runtime's call gives no arguments */
          symfonic_json_append_string (out, call->arguments->len > 0 ? call->arguments->str : "{}", -1);
          g_string_append (out, "}}");
        }
      g_string_append_c (out, ']');
    }
  g_string_append (out, "},\"logprobs\":");
  if (self->logprobs != NULL)
    {
      g_string_append (out, "{\"content\":");
      symfonic_json_append_array (out, self->logprobs, "[]");
      g_string_append_c (out, '}');
    }
  else
    g_string_append (out, "null");
  g_string_append (out, ",\"finish_reason\":\"");
  g_string_append (out, finish_reason (encoder));
  g_string_append (out, "\"}],");
  write_usage (encoder, out);
  g_string_append_c (out, '}');
}

static void
openai_clear (SymfonicEncoder *encoder)
{
  OpenaiEncoder *self = (OpenaiEncoder *) encoder;

  if (self->prefix != NULL)
    g_string_free (self->prefix, TRUE);
  if (self->reasoning != NULL)
    g_string_free (self->reasoning, TRUE);
  if (self->tool_calls != NULL)
    g_ptr_array_unref (self->tool_calls);
  if (self->logprobs != NULL)
    json_array_unref (self->logprobs);
}

/* `{"error":{"message":…,"type":…,"param":null,"code":…}}` */
void
symfonic_openai_error_body (SymfonicErrorFrame *frame,
                            GString            *out)
{
  g_string_append (out, "{\"error\":");
  symfonic_openai_error_object (frame, out);
  g_string_append_c (out, '}');
}

/* `{"message":…,"type":…,"param":null,"code":…}` */
void
symfonic_openai_error_object (SymfonicErrorFrame *frame,
                              GString            *out)
{
  const char *code = symfonic_error_frame_get_code (frame);

  g_string_append (out, "{\"message\":");
  symfonic_json_append_string (out, symfonic_error_frame_get_detail (frame), -1);
  g_string_append (out, ",\"type\":\"");
  g_string_append (out, symfonic_encoder_provider_error_type (SYMFONIC_ROUTE_KIND_OPENAI, symfonic_error_frame_get_status (frame),
                                                              code));
  g_string_append (out, "\",\"param\":null,\"code\":");
  /* OpenAI's own code of a rate limit, which its SDK users match on */
  if (g_strcmp0 (code, "rate_limited") == 0)
    code = "rate_limit_exceeded";
  if (code != NULL)
    symfonic_json_append_string (out, code, -1);
  else
    g_string_append (out, "null");
  g_string_append_c (out, '}');
}

const SymfonicEncoderVTable symfonic_openai_stream_encoder = {
  .instance_size = sizeof (OpenaiEncoder),
  .streaming = TRUE,
  .event = openai_stream_event,
  .success = openai_stream_success,
  .clear = openai_clear,
  .error = openai_stream_error,
};

const SymfonicEncoderVTable symfonic_openai_answer_encoder = {
  .instance_size = sizeof (OpenaiEncoder),
  .streaming = FALSE,
  .event = openai_answer_event,
  .success = openai_answer_success,
  .clear = openai_clear,
};
