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
  /* the upstream's signature of that thinking, if it sent one */
  char            *signature;
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

/* Opens a block of @block's type unless one is open, then begins a delta
 * of it, up to the delta object. */
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
}

static void
write_text_delta (AnthropicEncoder *self,
                  Block             block,
                  const char       *text,
                  GString          *out)
{
  begin_delta (self, block, out);
  g_string_append (out, block == BLOCK_TEXT ? "{\"type\":\"text_delta\",\"text\":"
                                            : "{\"type\":\"thinking_delta\",\"thinking\":");
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

/* The signature an Anthropic upstream sent for its thinking, on an empty
 * thinking delta of its own. */
static const char *
signature_of (SymfonicEvent *event)
{
  JsonObject *extras = symfonic_event_get_payload (event);
  JsonNode *node = extras != NULL ? json_object_get_member (extras, "signature") : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;

  return json_node_get_string (node);
}

static SymfonicFrameClass
anthropic_stream_event (SymfonicEncoder *encoder,
                        SymfonicEvent   *event,
                        GString         *out)
{
  AnthropicEncoder *self = (AnthropicEncoder *) encoder;
  SymfonicToolCall call;

  switch (symfonic_encoder_provider_part (encoder, event, &call))
    {
    case SYMFONIC_PROVIDER_PART_TEXT:
      write_text_delta (self, BLOCK_TEXT, symfonic_event_get_text (event, NULL), out);
      break;
    case SYMFONIC_PROVIDER_PART_THINKING:
      write_text_delta (self, BLOCK_THINKING, symfonic_event_get_text (event, NULL), out);
      break;
    case SYMFONIC_PROVIDER_PART_THINKING_EXTRAS:
      if (signature_of (event) == NULL)
        return SYMFONIC_FRAME_NONE;
      /* the last delta of the thinking block, as Anthropic sends it */
      begin_delta (self, BLOCK_THINKING, out);
      g_string_append (out, "{\"type\":\"signature_delta\",\"signature\":");
      symfonic_json_append_string (out, signature_of (event), -1);
      g_string_append_c (out, '}');
      end_event (out);
      break;
    case SYMFONIC_PROVIDER_PART_TOOL_CALL:
      write_tool_use (self, &call, out);
      break;
    case SYMFONIC_PROVIDER_PART_NONE:
    default:
      return SYMFONIC_FRAME_NONE;
    }

  /* the provider format has no terminal that carries the whole text: a
   * shed delta would be lost without a word */
  return SYMFONIC_FRAME_KEPT;
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
  const char *unstreamed = symfonic_encoder_unstreamed_text (encoder);

  ensure_started (self, out);
  if (unstreamed != NULL)
    write_text_delta (self, BLOCK_TEXT, unstreamed, out);
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

/* A tool_use block of one answer, whose input is an object; arguments
 * that are not one (a source's fault) become an empty one. */
static void
append_tool_use (GString                *out,
                 const SymfonicToolCall *call)
{
  g_autoptr(JsonNode) input = symfonic_json_parse (call->arguments, strlen (call->arguments),
                                                   SYMFONIC_JSON_MAX_DEPTH, NULL);

  g_string_append (out, ",{\"type\":\"tool_use\",\"id\":");
  symfonic_json_append_string (out, call->id, -1);
  g_string_append (out, ",\"name\":");
  symfonic_json_append_string (out, call->name, -1);
  g_string_append (out, ",\"input\":");
  if (input != NULL && JSON_NODE_HOLDS_OBJECT (input))
    symfonic_json_append_node (out, input);
  else
    g_string_append (out, "{}");
  g_string_append_c (out, '}');
}

static SymfonicFrameClass
anthropic_answer_event (SymfonicEncoder *encoder,
                        SymfonicEvent   *event,
                        GString         *out)
{
  AnthropicEncoder *self = (AnthropicEncoder *) encoder;
  SymfonicToolCall call;

  switch (symfonic_encoder_provider_part (encoder, event, &call))
    {
    case SYMFONIC_PROVIDER_PART_THINKING:
      if (self->thinking == NULL)
        self->thinking = g_string_new (NULL);
      g_string_append (self->thinking, symfonic_event_get_text (event, NULL));
      break;
    case SYMFONIC_PROVIDER_PART_THINKING_EXTRAS:
      if (signature_of (event) != NULL)
        {
          g_free (self->signature);
          self->signature = g_strdup (signature_of (event));
        }
      break;
    case SYMFONIC_PROVIDER_PART_TOOL_CALL:
      if (self->tool_uses == NULL)
        self->tool_uses = g_string_new (NULL);
      append_tool_use (self->tool_uses, &call);
      break;
    case SYMFONIC_PROVIDER_PART_TEXT:
    case SYMFONIC_PROVIDER_PART_NONE:
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
      g_string_append (content, ",\"signature\":");
      symfonic_json_append_string (content, self->signature != NULL ? self->signature : "", -1);
      g_string_append_c (content, '}');
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
  g_free (self->signature);
  if (self->tool_uses != NULL)
    g_string_free (self->tool_uses, TRUE);
}

/* `{"type":"error","error":{"type":…,"message":…}}` */
void
symfonic_anthropic_error_body (SymfonicErrorFrame *frame,
                               GString            *out)
{
  g_string_append (out, "{\"type\":\"error\",\"error\":{\"type\":\"");
  g_string_append (out, symfonic_encoder_provider_error_type (SYMFONIC_ROUTE_KIND_ANTHROPIC, symfonic_error_frame_get_status (frame)));
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
