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
  BLOCK_TOOL_USE,
} Block;

typedef struct
{
  SymfonicEncoder  parent;
  /* message_start went out */
  gboolean         started;
  /* the content block a delta of the same type continues */
  Block            open;
  guint            n_blocks;
  /* each tool call's block index, by the call's ordinal: a fragment of
   * its input goes to its block */
  GArray          *tool_blocks;
  /* one answer: the thinking, and each tool call by its ordinal, its
   * input gathered from its fragments */
  GString         *thinking;
  /* the upstream's signature of that thinking, if it sent one */
  char            *signature;
  GPtrArray       *tool_uses;
} AnthropicEncoder;

typedef struct
{
  char    *id;
  char    *name;
  GString *input;
} AnswerToolUse;

static void
answer_tool_use_free (gpointer data)
{
  AnswerToolUse *tool_use = data;

  g_free (tool_use->id);
  g_free (tool_use->name);
  g_string_free (tool_use->input, TRUE);
  g_free (tool_use);
}

/* The counts as Anthropic splits them: input_tokens without the cached
 * tokens, which have their own members when the upstream counted them. */
static void
write_usage_members (SymfonicEncoder *encoder,
                     guint64          output_tokens,
                     GString         *out)
{
  SymfonicEncoderUsage usage;
  guint64 cached;

  symfonic_encoder_get_usage (encoder, &usage);
  cached = MAX (usage.cache_read, 0) + MAX (usage.cache_creation, 0);
  g_string_append_printf (out, "\"usage\":{\"input_tokens\":%" G_GUINT64_FORMAT,
                          usage.input > cached ? usage.input - cached : 0);
  if (usage.cache_read >= 0 || usage.cache_creation >= 0)
    g_string_append_printf (out, ",\"cache_creation_input_tokens\":%" G_GINT64_FORMAT
                            ",\"cache_read_input_tokens\":%" G_GINT64_FORMAT,
                            MAX (usage.cache_creation, 0), MAX (usage.cache_read, 0));
  g_string_append_printf (out, ",\"output_tokens\":%" G_GUINT64_FORMAT "}",
                          output_tokens == G_MAXUINT64 ? usage.output : output_tokens);
}

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

/* An Anthropic upstream's own reason (pause_turn, stop_sequence and all);
 * else the typed one in Anthropic's words. */
static const char *
stop_reason (SymfonicEncoder *encoder)
{
  static const struct {
    const char *finish_reason;
    const char *stop_reason;
  } reasons[] = {
    { "stop", "end_turn" },
    { "length", "max_tokens" },
    { "tool_calls", "tool_use" },
    { "content_filter", "refusal" },
    { "refusal", "refusal" },
  };
  const char *said = symfonic_encoder_terminal_string (encoder, "stop_reason");
  const char *reason;

  if (said != NULL)
    return said;
  reason = symfonic_encoder_finish_reason (encoder);
  for (guint i = 0; i < G_N_ELEMENTS (reasons); i++)
    {
      if (strcmp (reason, reasons[i].finish_reason) == 0)
        return reasons[i].stop_reason;
    }

  return "end_turn";
}

static void
write_stop (SymfonicEncoder *encoder,
            GString         *out)
{
  const char *sequence = symfonic_encoder_terminal_string (encoder, "stop_sequence");

  g_string_append (out, "\"stop_reason\":");
  symfonic_json_append_string (out, stop_reason (encoder), -1);
  g_string_append (out, ",\"stop_sequence\":");
  if (sequence != NULL)
    symfonic_json_append_string (out, sequence, -1);
  else
    g_string_append (out, "null");
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

  if (self->started)
    return;
  self->started = TRUE;

  begin_event (out, "message_start");
  g_string_append (out, ",\"message\":{");
  write_id (encoder, out);
  g_string_append (out, ",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,");
  write_usage_members (encoder, 0, out);
  g_string_append_c (out, '}');
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

static void
write_input_delta (guint       block,
                   const char *fragment,
                   GString    *out)
{
  begin_event (out, "content_block_delta");
  g_string_append_printf (out, ",\"index\":%u,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":", block);
  symfonic_json_append_string (out, fragment, -1);
  g_string_append_c (out, '}');
  end_event (out);
}

/* A tool call is a block of its own, open until the next block or the
 * end: its start, then its input as the fragments come (what came with
 * the start first; a typed runtime's call, which has no arguments, is
 * an empty input). */
static void
write_tool_use (AnthropicEncoder       *self,
                const SymfonicToolCall *call,
                GString                *out)
{
  guint block;

  ensure_started (self, out);
  close_block (self, out);

  block = self->n_blocks++;
  if (self->tool_blocks == NULL)
    self->tool_blocks = g_array_new (FALSE, FALSE, sizeof (guint));
  g_array_append_val (self->tool_blocks, block);
  self->open = BLOCK_TOOL_USE;

  begin_event (out, "content_block_start");
  g_string_append_printf (out, ",\"index\":%u,\"content_block\":{\"type\":\"tool_use\",\"id\":", block);
  symfonic_json_append_string (out, call->id, -1);
  g_string_append (out, ",\"name\":");
  symfonic_json_append_string (out, call->name, -1);
  g_string_append (out, ",\"input\":{}}");
  end_event (out);

  if (call->arguments == NULL || *call->arguments != '\0')
    write_input_delta (block, call->arguments != NULL ? call->arguments : "{}", out);
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
    case SYMFONIC_PROVIDER_PART_TOOL_CALL_DELTA:
      if (*call.arguments == '\0' || self->tool_blocks == NULL || call.ordinal >= self->tool_blocks->len)
        return SYMFONIC_FRAME_NONE;
      /* to the call's own block, which a fragment that came late finds
       * closed: the SDKs gather input by block index all the same */
      write_input_delta (g_array_index (self->tool_blocks, guint, call.ordinal), call.arguments, out);
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
  write_usage_members (encoder, G_MAXUINT64, out);
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
  g_string_append (out, ",\"delta\":{");
  write_stop (encoder, out);
  g_string_append (out, "},");
  write_usage (encoder, out);
  end_event (out);
  begin_event (out, "message_stop");
  end_event (out);
}

/* A tool_use block of one answer, whose input is an object; arguments
 * that are not one (a source's fault) become an empty one. */
static void
append_tool_use (GString             *out,
                 const AnswerToolUse *call)
{
  g_autoptr(JsonNode) input = symfonic_json_parse (call->input->str, call->input->len,
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
      {
        AnswerToolUse *tool_use = g_new0 (AnswerToolUse, 1);

        tool_use->id = g_strdup (call.id);
        tool_use->name = g_strdup (call.name);
        tool_use->input = g_string_new (call.arguments);
        if (self->tool_uses == NULL)
          self->tool_uses = g_ptr_array_new_with_free_func (answer_tool_use_free);
        g_ptr_array_add (self->tool_uses, tool_use);
      }
      break;
    case SYMFONIC_PROVIDER_PART_TOOL_CALL_DELTA:
      if (self->tool_uses != NULL && call.ordinal < self->tool_uses->len)
        g_string_append (((AnswerToolUse *) g_ptr_array_index (self->tool_uses, call.ordinal))->input, call.arguments);
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
  for (guint i = 0; self->tool_uses != NULL && i < self->tool_uses->len; i++)
    append_tool_use (content, g_ptr_array_index (self->tool_uses, i));

  g_string_append_c (out, '{');
  write_id (encoder, out);
  g_string_append (out, ",\"content\":[");
  g_string_append (out, content->str + 1);
  g_string_append (out, "],");
  write_stop (encoder, out);
  g_string_append_c (out, ',');
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
    g_ptr_array_unref (self->tool_uses);
  if (self->tool_blocks != NULL)
    g_array_unref (self->tool_blocks);
}

/* `{"type":"error","error":{"type":…,"message":…}}` */
void
symfonic_anthropic_error_body (SymfonicErrorFrame *frame,
                               GString            *out)
{
  g_string_append (out, "{\"type\":\"error\",\"error\":{\"type\":\"");
  g_string_append (out, symfonic_encoder_provider_error_type (SYMFONIC_ROUTE_KIND_ANTHROPIC, symfonic_error_frame_get_status (frame),
                                                              symfonic_error_frame_get_code (frame)));
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
