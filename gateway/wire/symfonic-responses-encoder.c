/* symfonic-responses-encoder.c: OpenAI's Responses API wire format
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-encoder-private.h"
#include "symfonic-event-private.h"
#include "symfonic-json.h"
#include "symfonic-json-private.h"
#include "symfonic-string-private.h"

/* What the OpenAI SDKs' Responses clients parse: typed events, each an SSE
 * frame named by its type, whose `sequence_number` is the frame's id (so
 * that a background response read again from `starting_after=N` is its
 * frames after id N), in the order OpenAI sends them: response.created and
 * .in_progress; for each output item .output_item.added, its parts and
 * deltas (.reasoning_summary_text.delta for the thinking,
 * .output_text.delta for the answer, .function_call_arguments.delta for a
 * call's arguments), their .done events and .output_item.done; then
 * response.completed, or response.incomplete when the answer was cut
 * short, whose response carries every item and the usage. Or the same
 * response object, whole, as one JSON answer. */
typedef enum {
  ITEM_NONE,
  ITEM_REASONING,
  ITEM_MESSAGE,
  ITEM_CALLS,
} ItemKind;

typedef struct
{
  char    *id;
  char    *call_id;
  char    *name;
  GString *arguments;
  guint    output_index;
  gboolean done;
} Call;

typedef struct
{
  SymfonicEncoder  parent;
  gboolean         started;
  gint64           created_at;
  char            *response_id;
  /* the item the next delta of its kind continues */
  ItemKind         open;
  guint            n_items;
  /* the open reasoning or message item: its id and its text so far */
  char            *item_id;
  GString         *item_text;
  /* every item done, as the final response's `output` elements */
  GString         *output;
  /* the calls, by ordinal; those not done yet are open */
  GPtrArray       *calls;
} ResponsesEncoder;

static void
call_free (gpointer data)
{
  Call *call = data;

  g_free (call->id);
  g_free (call->call_id);
  g_free (call->name);
  g_string_free (call->arguments, TRUE);
  g_free (call);
}

/* `resp_` and the run's UUID without its dashes: one token, as OpenAI's */
char *
symfonic_responses_id_for_run (const char *run_id)
{
  GString *id = g_string_new ("resp_");

  for (const char *c = run_id; *c != '\0'; c++)
    if (*c != '-')
      g_string_append_c (id, *c);

  return g_string_free (id, FALSE);
}

/* The run a response id names, or NULL when it is none the gateway gave. */
char *
symfonic_responses_run_for_id (const char *response_id)
{
  const char *hex;
  g_autofree char *run_id = NULL;

  if (!g_str_has_prefix (response_id, "resp_") || strlen (response_id) != strlen ("resp_") + 32)
    return NULL;
  hex = response_id + strlen ("resp_");
  run_id = g_strdup_printf ("%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16, hex + 20);

  return g_uuid_string_is_valid (run_id) ? g_steal_pointer (&run_id) : NULL;
}

static void
begin_event (ResponsesEncoder *self,
             GString          *out,
             const char       *type)
{
  symfonic_encoder_begin_frame (&self->parent, out, type);
  g_string_append (out, "{\"type\":\"");
  g_string_append (out, type);
  g_string_append_c (out, '"');
}

static void
end_event (ResponsesEncoder *self,
           GString          *out)
{
  g_string_append_printf (out, ",\"sequence_number\":%" G_GUINT64_FORMAT "}\n\n",
                          symfonic_encoder_get_seq (&self->parent));
}

static void
write_usage (ResponsesEncoder *self,
             GString          *out)
{
  SymfonicEncoderUsage usage;

  symfonic_encoder_get_usage (&self->parent, &usage);
  g_string_append_printf (out, "{\"input_tokens\":%" G_GUINT64_FORMAT ",\"input_tokens_details\":{\"cached_tokens\":%"
                          G_GINT64_FORMAT "},\"output_tokens\":%" G_GUINT64_FORMAT ",\"output_tokens_details\":"
                          "{\"reasoning_tokens\":%" G_GINT64_FORMAT "},\"total_tokens\":%" G_GUINT64_FORMAT "}",
                          usage.input, MAX (usage.cache_read, 0), usage.output, MAX (usage.reasoning, 0),
                          usage.input + usage.output);
}

/* Why the answer ended, as the Responses API says it: complete, or
 * incomplete for the output limit or a filter. */
static const char *
incomplete_reason (SymfonicEncoder *encoder)
{
  const char *reason = symfonic_encoder_finish_reason (encoder);

  if (strcmp (reason, "length") == 0)
    return "max_output_tokens";
  if (strcmp (reason, "content_filter") == 0 || strcmp (reason, "refusal") == 0)
    return "content_filter";

  return NULL;
}

/* The response object: @status, and with @final its items and usage. */
static void
write_response (ResponsesEncoder *self,
                const char       *status,
                gboolean          final,
                GString          *out)
{
  SymfonicEncoder *encoder = &self->parent;
  const char *incomplete = final ? incomplete_reason (encoder) : NULL;

  g_string_append (out, "{\"id\":");
  symfonic_json_append_string (out, self->response_id, -1);
  g_string_append_printf (out, ",\"object\":\"response\",\"created_at\":%" G_GINT64_FORMAT ",\"status\":\"%s\","
                          "\"background\":%s,\"error\":null,\"incomplete_details\":",
                          self->created_at, incomplete != NULL ? "incomplete" : status,
                          (encoder->flags & SYMFONIC_ENCODER_BACKGROUND) ? "true" : "false");
  if (incomplete != NULL)
    g_string_append_printf (out, "{\"reason\":\"%s\"}", incomplete);
  else
    g_string_append (out, "null");
  g_string_append (out, ",\"model\":");
  symfonic_json_append_string (out, symfonic_encoder_get_model (encoder), -1);
  g_string_append (out, ",\"output\":[");
  if (final && self->output->len > 0)
    g_string_append_len (out, self->output->str + 1, self->output->len - 1);
  g_string_append (out, "],\"parallel_tool_calls\":true,\"tool_choice\":\"auto\",\"tools\":[],\"metadata\":{},"
                        "\"text\":{\"format\":{\"type\":\"text\"}},\"usage\":");
  if (final)
    write_usage (self, out);
  else
    g_string_append (out, "null");
  g_string_append_c (out, '}');
}

static void
ensure_started (ResponsesEncoder *self,
                GString          *out)
{
  if (self->started)
    return;
  self->started = TRUE;

  begin_event (self, out, "response.created");
  g_string_append (out, ",\"response\":");
  write_response (self, "in_progress", FALSE, out);
  end_event (self, out);
  begin_event (self, out, "response.in_progress");
  g_string_append (out, ",\"response\":");
  write_response (self, "in_progress", FALSE, out);
  end_event (self, out);
}

static void
write_item_head (ResponsesEncoder *self,
                 const char       *id,
                 guint             output_index,
                 GString          *out)
{
  g_string_append (out, ",\"item_id\":");
  symfonic_json_append_string (out, id, -1);
  g_string_append_printf (out, ",\"output_index\":%u", output_index);
}

/* A call's item as it is when done. */
static void
append_call_item (GString    *out,
                  const Call *call,
                  const char *status)
{
  g_string_append (out, "{\"id\":");
  symfonic_json_append_string (out, call->id, -1);
  g_string_append (out, ",\"type\":\"function_call\",\"status\":\"");
  g_string_append (out, status);
  g_string_append (out, "\",\"call_id\":");
  symfonic_json_append_string (out, call->call_id, -1);
  g_string_append (out, ",\"name\":");
  symfonic_json_append_string (out, call->name, -1);
  g_string_append (out, ",\"arguments\":");
  symfonic_json_append_string (out, call->arguments->str, call->arguments->len);
  g_string_append_c (out, '}');
}

/* A reasoning or message item as it is when done. */
static void
append_text_item (GString    *out,
                  ItemKind    kind,
                  const char *id,
                  GString    *text)
{
  g_string_append (out, "{\"id\":");
  symfonic_json_append_string (out, id, -1);
  if (kind == ITEM_REASONING)
    g_string_append (out, ",\"type\":\"reasoning\",\"summary\":[{\"type\":\"summary_text\",\"text\":");
  else
    g_string_append (out, ",\"type\":\"message\",\"status\":\"completed\",\"role\":\"assistant\","
                          "\"content\":[{\"type\":\"output_text\",\"annotations\":[],\"logprobs\":[],\"text\":");
  symfonic_json_append_string (out, text->str, text->len);
  g_string_append (out, "}]}");
}

/* Ends the open item: its done events, and its place in the output. */
static void
close_item (ResponsesEncoder *self,
            GString          *out)
{
  guint index = self->n_items - 1;

  switch (self->open)
    {
    case ITEM_REASONING:
      begin_event (self, out, "response.reasoning_summary_text.done");
      write_item_head (self, self->item_id, index, out);
      g_string_append (out, ",\"summary_index\":0,\"text\":");
      symfonic_json_append_string (out, self->item_text->str, self->item_text->len);
      end_event (self, out);
      begin_event (self, out, "response.reasoning_summary_part.done");
      write_item_head (self, self->item_id, index, out);
      g_string_append (out, ",\"summary_index\":0,\"part\":{\"type\":\"summary_text\",\"text\":");
      symfonic_json_append_string (out, self->item_text->str, self->item_text->len);
      g_string_append_c (out, '}');
      end_event (self, out);
      break;

    case ITEM_MESSAGE:
      begin_event (self, out, "response.output_text.done");
      write_item_head (self, self->item_id, index, out);
      g_string_append (out, ",\"content_index\":0,\"text\":");
      symfonic_json_append_string (out, self->item_text->str, self->item_text->len);
      g_string_append (out, ",\"logprobs\":[]");
      end_event (self, out);
      begin_event (self, out, "response.content_part.done");
      write_item_head (self, self->item_id, index, out);
      g_string_append (out, ",\"content_index\":0,\"part\":{\"type\":\"output_text\",\"annotations\":[],"
                            "\"logprobs\":[],\"text\":");
      symfonic_json_append_string (out, self->item_text->str, self->item_text->len);
      g_string_append_c (out, '}');
      end_event (self, out);
      break;

    case ITEM_CALLS:
      /* each call whose arguments were streaming is whole now */
      for (guint i = 0; i < self->calls->len; i++)
        {
          Call *call = g_ptr_array_index (self->calls, i);

          if (call->done)
            continue;
          call->done = TRUE;
          begin_event (self, out, "response.function_call_arguments.done");
          write_item_head (self, call->id, call->output_index, out);
          g_string_append (out, ",\"name\":");
          symfonic_json_append_string (out, call->name, -1);
          g_string_append (out, ",\"arguments\":");
          symfonic_json_append_string (out, call->arguments->str, call->arguments->len);
          end_event (self, out);
          begin_event (self, out, "response.output_item.done");
          g_string_append_printf (out, ",\"output_index\":%u,\"item\":", call->output_index);
          append_call_item (out, call, "completed");
          end_event (self, out);
          g_string_append_c (self->output, ',');
          append_call_item (self->output, call, "completed");
        }
      self->open = ITEM_NONE;
      return;

    case ITEM_NONE:
    default:
      return;
    }

  /* the reasoning or message item itself */
  begin_event (self, out, "response.output_item.done");
  g_string_append_printf (out, ",\"output_index\":%u,\"item\":", index);
  append_text_item (out, self->open, self->item_id, self->item_text);
  end_event (self, out);
  g_string_append_c (self->output, ',');
  append_text_item (self->output, self->open, self->item_id, self->item_text);
  self->open = ITEM_NONE;
}

static void
open_text_item (ResponsesEncoder *self,
                ItemKind          kind,
                GString          *out)
{
  const char *run_id = symfonic_invocation_get_run_id (self->parent.invocation);
  guint index;

  ensure_started (self, out);
  if (self->open == kind)
    return;
  close_item (self, out);

  index = self->n_items++;
  g_free (self->item_id);
  self->item_id = g_strdup_printf ("%s_%.8s%u", kind == ITEM_MESSAGE ? "msg" : "rs", run_id, index);
  g_string_truncate (self->item_text, 0);
  self->open = kind;

  begin_event (self, out, "response.output_item.added");
  g_string_append_printf (out, ",\"output_index\":%u,\"item\":{\"id\":", index);
  symfonic_json_append_string (out, self->item_id, -1);
  if (kind == ITEM_MESSAGE)
    {
      g_string_append (out, ",\"type\":\"message\",\"status\":\"in_progress\",\"role\":\"assistant\",\"content\":[]}");
      end_event (self, out);
      begin_event (self, out, "response.content_part.added");
      write_item_head (self, self->item_id, index, out);
      g_string_append (out, ",\"content_index\":0,\"part\":{\"type\":\"output_text\",\"text\":\"\",\"annotations\":[],"
                            "\"logprobs\":[]}");
    }
  else
    {
      g_string_append (out, ",\"type\":\"reasoning\",\"summary\":[]}");
      end_event (self, out);
      begin_event (self, out, "response.reasoning_summary_part.added");
      write_item_head (self, self->item_id, index, out);
      g_string_append (out, ",\"summary_index\":0,\"part\":{\"type\":\"summary_text\",\"text\":\"\"}");
    }
  end_event (self, out);
}

static void
write_text_delta (ResponsesEncoder *self,
                  ItemKind          kind,
                  const char       *text,
                  gsize             length,
                  GString          *out)
{
  open_text_item (self, kind, out);
  g_string_append_len (self->item_text, text, length);
  begin_event (self, out, kind == ITEM_MESSAGE ? "response.output_text.delta" : "response.reasoning_summary_text.delta");
  write_item_head (self, self->item_id, self->n_items - 1, out);
  g_string_append (out, kind == ITEM_MESSAGE ? ",\"content_index\":0,\"delta\":" : ",\"summary_index\":0,\"delta\":");
  symfonic_json_append_string (out, text, length);
  if (kind == ITEM_MESSAGE)
    g_string_append (out, ",\"logprobs\":[]");
  end_event (self, out);
}

static void
write_arguments_delta (ResponsesEncoder *self,
                       Call             *call,
                       const char       *fragment,
                       GString          *out)
{
  if (*fragment == '\0')
    return;
  g_string_append (call->arguments, fragment);
  begin_event (self, out, "response.function_call_arguments.delta");
  write_item_head (self, call->id, call->output_index, out);
  g_string_append (out, ",\"delta\":");
  symfonic_json_append_string (out, fragment, -1);
  end_event (self, out);
}

static void
write_call_start (ResponsesEncoder       *self,
                  const SymfonicToolCall *tool_call,
                  GString                *out)
{
  Call *call = g_new0 (Call, 1);

  ensure_started (self, out);
  if (self->open != ITEM_CALLS)
    close_item (self, out);
  self->open = ITEM_CALLS;

  call->output_index = self->n_items++;
  call->id = g_strdup_printf ("fc_%s", tool_call->id);
  call->call_id = g_strdup (tool_call->id);
  call->name = g_strdup (tool_call->name);
  call->arguments = g_string_new (NULL);
  g_ptr_array_add (self->calls, call);

  begin_event (self, out, "response.output_item.added");
  g_string_append_printf (out, ",\"output_index\":%u,\"item\":", call->output_index);
  append_call_item (out, call, "in_progress");
  end_event (self, out);
  /* a typed runtime's call gives no arguments: an empty object */
  write_arguments_delta (self, call, tool_call->arguments != NULL ? tool_call->arguments : "{}", out);
}

static SymfonicFrameClass
responses_event (SymfonicEncoder *encoder,
                 SymfonicEvent   *event,
                 GString         *out)
{
  ResponsesEncoder *self = (ResponsesEncoder *) encoder;
  SymfonicToolCall call;
  gsize start = out->len;
  gsize length;
  const char *text;

  switch (symfonic_encoder_provider_part (encoder, event, &call))
    {
    case SYMFONIC_PROVIDER_PART_TEXT:
      text = symfonic_event_peek_text (event, &length);
      write_text_delta (self, ITEM_MESSAGE, text, length, out);
      break;
    case SYMFONIC_PROVIDER_PART_THINKING:
      text = symfonic_event_peek_text (event, &length);
      write_text_delta (self, ITEM_REASONING, text, length, out);
      break;
    case SYMFONIC_PROVIDER_PART_TOOL_CALL:
      write_call_start (self, &call, out);
      break;
    case SYMFONIC_PROVIDER_PART_TOOL_CALL_DELTA:
      if (call.ordinal >= self->calls->len)
        return SYMFONIC_FRAME_NONE;
      write_arguments_delta (self, g_ptr_array_index (self->calls, call.ordinal), call.arguments, out);
      break;
    case SYMFONIC_PROVIDER_PART_THINKING_EXTRAS:
    case SYMFONIC_PROVIDER_PART_NONE:
    default:
      return SYMFONIC_FRAME_NONE;
    }

  /* the format has no terminal that carries the whole text */
  return out->len > start ? SYMFONIC_FRAME_KEPT : SYMFONIC_FRAME_NONE;
}

/* Ends the stream's items and writes the response's last event. */
static void
finish (ResponsesEncoder *self,
        GString          *out)
{
  const char *unstreamed = symfonic_encoder_unstreamed_text (&self->parent);
  gboolean incomplete;

  ensure_started (self, out);
  if (unstreamed != NULL)
    write_text_delta (self, ITEM_MESSAGE, unstreamed, strlen (unstreamed), out);
  close_item (self, out);

  incomplete = incomplete_reason (&self->parent) != NULL;
  begin_event (self, out, incomplete ? "response.incomplete" : "response.completed");
  g_string_append (out, ",\"response\":");
  write_response (self, "completed", TRUE, out);
  end_event (self, out);
}

static void
responses_stream_success (SymfonicEncoder *encoder,
                          gint64           duration_ms,
                          GString         *out)
{
  finish ((ResponsesEncoder *) encoder, out);
}

/* The SDKs raise an APIError for an event with an `error` member. */
static void
responses_stream_error (SymfonicEncoder    *encoder,
                        SymfonicErrorFrame *frame,
                        GString            *out)
{
  ResponsesEncoder *self = (ResponsesEncoder *) encoder;
  const char *code = symfonic_error_frame_get_code (frame);

  begin_event (self, out, "error");
  g_string_append (out, ",\"code\":");
  if (code != NULL)
    symfonic_json_append_string (out, g_strcmp0 (code, "rate_limited") == 0 ? "rate_limit_exceeded" : code, -1);
  else
    g_string_append (out, "null");
  g_string_append (out, ",\"message\":");
  symfonic_json_append_string (out, symfonic_error_frame_get_detail (frame), -1);
  g_string_append (out, ",\"param\":null,\"error\":");
  symfonic_openai_error_object (frame, out);
  end_event (self, out);
}

/* One answer: the events are run through the same state, unsent, and the
 * final response object is the body. */
static SymfonicFrameClass
responses_answer_event (SymfonicEncoder *encoder,
                        SymfonicEvent   *event,
                        GString         *out)
{
  g_autoptr(GString) unsent = g_string_new (NULL);

  responses_event (encoder, event, unsent);
  return SYMFONIC_FRAME_NONE;
}

static void
responses_answer_success (SymfonicEncoder *encoder,
                          gint64           duration_ms,
                          GString         *out)
{
  ResponsesEncoder *self = (ResponsesEncoder *) encoder;
  g_autoptr(GString) unsent = g_string_new (NULL);

  finish (self, unsent);
  write_response (self, "completed", TRUE, out);
}

static void
responses_init (SymfonicEncoder *encoder)
{
  ResponsesEncoder *self = (ResponsesEncoder *) encoder;

  self->output = g_string_new (NULL);
  self->item_text = g_string_new (NULL);
  self->calls = g_ptr_array_new_with_free_func (call_free);
  self->created_at = g_get_real_time () / G_USEC_PER_SEC;
  self->response_id = symfonic_responses_id_for_run (symfonic_invocation_get_run_id (self->parent.invocation));
}

static void
responses_clear (SymfonicEncoder *encoder)
{
  ResponsesEncoder *self = (ResponsesEncoder *) encoder;

  g_string_free (self->output, TRUE);
  g_string_free (self->item_text, TRUE);
  g_ptr_array_unref (self->calls);
  g_free (self->item_id);
  g_free (self->response_id);
}

/* The object a background response answers with at once, before any of
 * its events: queued. */
void
symfonic_responses_encoder_write_queued (SymfonicEncoder *encoder,
                                         GString         *out)
{
  write_response ((ResponsesEncoder *) encoder, "queued", FALSE, out);
}

const SymfonicEncoderVTable symfonic_responses_stream_encoder = {
  .instance_size = sizeof (ResponsesEncoder),
  .streaming = TRUE,
  .init = responses_init,
  .event = responses_event,
  .success = responses_stream_success,
  .clear = responses_clear,
  .error = responses_stream_error,
};

const SymfonicEncoderVTable symfonic_responses_answer_encoder = {
  .instance_size = sizeof (ResponsesEncoder),
  .streaming = FALSE,
  .init = responses_init,
  .event = responses_answer_event,
  .success = responses_answer_success,
  .clear = responses_clear,
};
