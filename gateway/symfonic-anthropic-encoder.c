/* symfonic-anthropic-encoder.c: Anthropic's messages wire format
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-encoder-private.h"
#include "symfonic-json.h"
#include "symfonic-json-private.h"

/* What an Anthropic SDK parses: `message_start`, a `ping`, content blocks
 * (`content_block_start`, `_delta`, `_stop`) for text, thinking and
 * tool_use, `message_delta` with the stop reason and usage, and
 * `message_stop`; or one `message` object. */
typedef enum {
  BLOCK_NONE,
  BLOCK_TEXT,
  BLOCK_THINKING,
} Block;

typedef struct
{
  SymfonicEncoder  parent;
  /* message_start went out */
  gboolean         started;
  /* the content block a delta of the same type continues */
  Block            open;
  guint            n_blocks;
  /* one answer: the thinking, and the tool_use blocks as JSON array
   * elements */
  GString         *thinking;
  GString         *tool_uses;
} AnthropicEncoder;

static void
write_id (SymfonicEncoder *encoder,
          GString         *out)
{
  const char *run_id = symfonic_invocation_get_run_id (encoder->invocation);

  g_string_append (out, "\"id\":\"msg_");
  /* Anthropic's ids are one token: the run's UUID without its dashes */
  for (const char *c = run_id; *c != '\0'; c++)
    if (*c != '-')
      g_string_append_c (out, *c);
  g_string_append (out, "\",\"type\":\"message\",\"role\":\"assistant\",\"model\":");
  symfonic_json_append_string (out, symfonic_encoder_get_model (encoder), -1);
}

static const char *
stop_reason (SymfonicEncoder *encoder)
{
  return encoder->n_tool_calls > 0 ? "tool_use" : "end_turn";
}

static void
begin_event (GString    *out,
             const char *type)
{
  g_string_append (out, "event: ");
  g_string_append (out, type);
  g_string_append (out, "\ndata: {\"type\":\"");
  g_string_append (out, type);
  g_string_append_c (out, '"');
}

static void
end_event (GString *out)
{
  g_string_append (out, "}\n\n");
}

/* The message opens with the first frame of the stream, with the input
 * usage a provider upstream reported by then. */
static void
ensure_started (AnthropicEncoder *self,
                GString          *out)
{
  SymfonicEncoder *encoder = &self->parent;
  guint64 input;

  if (self->started)
    return;
  self->started = TRUE;

  symfonic_encoder_get_usage (encoder, &input, NULL);
  begin_event (out, "message_start");
  g_string_append (out, ",\"message\":{");
  write_id (encoder, out);
  g_string_append_printf (out, ",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,"
                          "\"usage\":{\"input_tokens\":%" G_GUINT64_FORMAT ",\"output_tokens\":0}}", input);
  end_event (out);
  begin_event (out, "ping");
  end_event (out);
}

static void
close_block (AnthropicEncoder *self,
             GString          *out)
{
  if (self->open == BLOCK_NONE)
    return;

  begin_event (out, "content_block_stop");
  g_string_append_printf (out, ",\"index\":%u", self->n_blocks - 1);
  end_event (out);
  self->open = BLOCK_NONE;
}

/* Opens a block of @block's type unless one is open, then begins its
 * delta. */
static void
begin_delta (AnthropicEncoder *self,
             Block             block,
             GString          *out)
{
  ensure_started (self, out);
  if (self->open != block)
    {
      close_block (self, out);
      begin_event (out, "content_block_start");
      g_string_append_printf (out, ",\"index\":%u,\"content_block\":", self->n_blocks++);
      g_string_append (out, block == BLOCK_TEXT ? "{\"type\":\"text\",\"text\":\"\"}"
                                                : "{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}");
      end_event (out);
      self->open = block;
    }

  begin_event (out, "content_block_delta");
  g_string_append_printf (out, ",\"index\":%u,\"delta\":", self->n_blocks - 1);
  g_string_append (out, block == BLOCK_TEXT ? "{\"type\":\"text_delta\",\"text\":"
                                            : "{\"type\":\"thinking_delta\",\"thinking\":");
}

static void
write_text_delta (AnthropicEncoder *self,
                  Block             block,
                  const char       *text,
                  GString          *out)
{
  begin_delta (self, block, out);
  symfonic_json_append_string (out, text, -1);
  g_string_append_c (out, '}');
  end_event (out);
}

/* A whole tool call is one block: start, its input as one delta, stop. */
static void
write_tool_use (AnthropicEncoder       *self,
                const SymfonicToolCall *call,
                GString                *out)
{
  ensure_started (self, out);
  close_block (self, out);

  begin_event (out, "content_block_start");
  g_string_append_printf (out, ",\"index\":%u,\"content_block\":{\"type\":\"tool_use\",\"id\":", self->n_blocks);
  symfonic_json_append_string (out, call->id, -1);
  g_string_append (out, ",\"name\":");
  symfonic_json_append_string (out, call->name, -1);
  g_string_append (out, ",\"input\":{}}");
  end_event (out);

  begin_event (out, "content_block_delta");
  g_string_append_printf (out, ",\"index\":%u,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":",
                          self->n_blocks);
  symfonic_json_append_string (out, call->arguments, -1);
  g_string_append_c (out, '}');
  end_event (out);

  begin_event (out, "content_block_stop");
  g_string_append_printf (out, ",\"index\":%u", self->n_blocks);
  end_event (out);
  self->n_blocks++;
}

static SymfonicFrameClass
anthropic_stream_event (SymfonicEncoder *encoder,
                        SymfonicEvent   *event,
                        GString         *out)
{
  AnthropicEncoder *self = (AnthropicEncoder *) encoder;
  SymfonicToolCall call;

  switch (symfonic_event_get_kind (event))
    {
    case SYMFONIC_EVENT_TEXT_DELTA:
      g_string_append (encoder->text, symfonic_event_get_text (event));
      write_text_delta (self, BLOCK_TEXT, symfonic_event_get_text (event), out);
      /* the provider format has no terminal that carries the whole text:
       * a shed delta would be lost without a word */
      return SYMFONIC_FRAME_KEPT;

    case SYMFONIC_EVENT_THINKING_DELTA:
      if (*symfonic_event_get_text (event) == '\0')
        return SYMFONIC_FRAME_NONE;
      write_text_delta (self, BLOCK_THINKING, symfonic_event_get_text (event), out);
      return SYMFONIC_FRAME_KEPT;

    case SYMFONIC_EVENT_TOOL_CALL_START:
      symfonic_encoder_read_tool_call (encoder, event, &call);
      write_tool_use (self, &call, out);
      return SYMFONIC_FRAME_KEPT;

    case SYMFONIC_EVENT_RESPONSE_COMPLETE:
      symfonic_encoder_keep_fallback (encoder, event);
      return SYMFONIC_FRAME_NONE;

    case SYMFONIC_EVENT_ACTIVATION:
    case SYMFONIC_EVENT_TOOL_RESULT:
    case SYMFONIC_EVENT_MEMORY_EXTRACTED:
    case SYMFONIC_EVENT_CONSOLIDATION_SCHEDULED:
    case SYMFONIC_EVENT_GRAPH_NODE_CREATED:
    case SYMFONIC_EVENT_GRAPH_EDGE_CREATED:
    case SYMFONIC_EVENT_CHUNK:
    default:
      /* not part of the provider's format */
      return SYMFONIC_FRAME_NONE;
    }
}

static void
write_usage (SymfonicEncoder *encoder,
             GString         *out)
{
  guint64 input, output;

  symfonic_encoder_get_usage (encoder, &input, &output);
  g_string_append_printf (out, "\"usage\":{\"input_tokens\":%" G_GUINT64_FORMAT ",\"output_tokens\":%"
                          G_GUINT64_FORMAT "}", input, output);
}

static void
anthropic_stream_success (SymfonicEncoder *encoder,
                          gint64           duration_ms,
                          GString         *out)
{
  AnthropicEncoder *self = (AnthropicEncoder *) encoder;

  ensure_started (self, out);
  /* an upstream that streamed no delta still gives its final text */
  if (encoder->text->len == 0 && encoder->fallback != NULL && *encoder->fallback != '\0')
    write_text_delta (self, BLOCK_TEXT, encoder->fallback, out);
  close_block (self, out);

  begin_event (out, "message_delta");
  g_string_append (out, ",\"delta\":{\"stop_reason\":\"");
  g_string_append (out, stop_reason (encoder));
  g_string_append (out, "\",\"stop_sequence\":null},");
  write_usage (encoder, out);
  end_event (out);
  begin_event (out, "message_stop");
  end_event (out);
}

static SymfonicFrameClass
anthropic_answer_event (SymfonicEncoder *encoder,
                        SymfonicEvent   *event,
                        GString         *out)
{
  AnthropicEncoder *self = (AnthropicEncoder *) encoder;
  SymfonicToolCall call;
  g_autoptr(JsonNode) input = NULL;

  switch (symfonic_event_get_kind (event))
    {
    case SYMFONIC_EVENT_TEXT_DELTA:
      g_string_append (encoder->text, symfonic_event_get_text (event));
      break;

    case SYMFONIC_EVENT_THINKING_DELTA:
      if (self->thinking == NULL)
        self->thinking = g_string_new (NULL);
      g_string_append (self->thinking, symfonic_event_get_text (event));
      break;

    case SYMFONIC_EVENT_TOOL_CALL_START:
      symfonic_encoder_read_tool_call (encoder, event, &call);
      if (self->tool_uses == NULL)
        self->tool_uses = g_string_new (NULL);
      g_string_append (self->tool_uses, ",{\"type\":\"tool_use\",\"id\":");
      symfonic_json_append_string (self->tool_uses, call.id, -1);
      g_string_append (self->tool_uses, ",\"name\":");
      symfonic_json_append_string (self->tool_uses, call.name, -1);
      g_string_append (self->tool_uses, ",\"input\":");
      /* the input is an object in this shape; arguments that are not one
       * (a source's fault) become an empty one */
      input = symfonic_json_parse (call.arguments, strlen (call.arguments), SYMFONIC_JSON_MAX_DEPTH, NULL);
      if (input != NULL && JSON_NODE_HOLDS_OBJECT (input))
        symfonic_json_append_node (self->tool_uses, input);
      else
        g_string_append (self->tool_uses, "{}");
      g_string_append_c (self->tool_uses, '}');
      break;

    case SYMFONIC_EVENT_RESPONSE_COMPLETE:
      symfonic_encoder_keep_fallback (encoder, event);
      break;

    case SYMFONIC_EVENT_ACTIVATION:
    case SYMFONIC_EVENT_TOOL_RESULT:
    case SYMFONIC_EVENT_MEMORY_EXTRACTED:
    case SYMFONIC_EVENT_CONSOLIDATION_SCHEDULED:
    case SYMFONIC_EVENT_GRAPH_NODE_CREATED:
    case SYMFONIC_EVENT_GRAPH_EDGE_CREATED:
    case SYMFONIC_EVENT_CHUNK:
    default:
      break;
    }

  return SYMFONIC_FRAME_NONE;
}

static void
anthropic_answer_success (SymfonicEncoder *encoder,
                          gint64           duration_ms,
                          GString         *out)
{
  AnthropicEncoder *self = (AnthropicEncoder *) encoder;
  const char *text = symfonic_encoder_final_text (encoder);
  g_autoptr(GString) content = g_string_new (NULL);

  /* every block with a leading comma, the first one's dropped below */
  if (self->thinking != NULL)
    {
      g_string_append (content, ",{\"type\":\"thinking\",\"thinking\":");
      symfonic_json_append_string (content, self->thinking->str, self->thinking->len);
      g_string_append (content, ",\"signature\":\"\"}");
    }
  /* a turn that only calls tools has no text block, as Anthropic answers it */
  if (*text != '\0' || self->tool_uses == NULL)
    {
      g_string_append (content, ",{\"type\":\"text\",\"text\":");
      symfonic_json_append_string (content, text, -1);
      g_string_append_c (content, '}');
    }
  if (self->tool_uses != NULL)
    g_string_append_len (content, self->tool_uses->str, self->tool_uses->len);

  g_string_append_c (out, '{');
  write_id (encoder, out);
  g_string_append (out, ",\"content\":[");
  g_string_append (out, content->str + 1);
  g_string_append (out, "],\"stop_reason\":\"");
  g_string_append (out, stop_reason (encoder));
  g_string_append (out, "\",\"stop_sequence\":null,");
  write_usage (encoder, out);
  g_string_append_c (out, '}');
}

static void
anthropic_clear (SymfonicEncoder *encoder)
{
  AnthropicEncoder *self = (AnthropicEncoder *) encoder;

  if (self->thinking != NULL)
    g_string_free (self->thinking, TRUE);
  if (self->tool_uses != NULL)
    g_string_free (self->tool_uses, TRUE);
}

/* The error types Anthropic's API answers with, by status. */
static const char *
error_type (guint status)
{
  switch (status)
    {
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 503:
    case 529:
      return "overloaded_error";
    default:
      return status >= 500 ? "api_error" : "invalid_request_error";
    }
}

/* `{"type":"error","error":{"type":…,"message":…}}` */
void
symfonic_anthropic_error_body (SymfonicErrorFrame *frame,
                               GString            *out)
{
  g_string_append (out, "{\"type\":\"error\",\"error\":{\"type\":\"");
  g_string_append (out, error_type (symfonic_error_frame_get_status (frame)));
  g_string_append (out, "\",\"message\":");
  symfonic_json_append_string (out, symfonic_error_frame_get_detail (frame), -1);
  g_string_append (out, "}}");
}

const SymfonicEncoderVTable symfonic_anthropic_stream_encoder = {
  .instance_size = sizeof (AnthropicEncoder),
  .streaming = TRUE,
  .event = anthropic_stream_event,
  .success = anthropic_stream_success,
  .clear = anthropic_clear,
};

const SymfonicEncoderVTable symfonic_anthropic_answer_encoder = {
  .instance_size = sizeof (AnthropicEncoder),
  .streaming = FALSE,
  .event = anthropic_answer_event,
  .success = anthropic_answer_success,
  .clear = anthropic_clear,
};
