/* symfonic-encoder.c: what every route shape shares
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-event-private.h"
#include "symfonic-encoder-private.h"
#include "symfonic-json-private.h"
#include "symfonic-string-private.h"
#include "symfonic-usage-private.h"

/* A provider route answers in one of two shapes, as its client asked. */
static const SymfonicEncoderVTable *
vtable_for (SymfonicRouteKind    kind,
            SymfonicEncoderFlags flags)
{
  gboolean answer = (flags & SYMFONIC_ENCODER_ANSWER) != 0;

  switch (kind)
    {
    case SYMFONIC_ROUTE_KIND_TYPED:
      return &symfonic_typed_encoder;
    case SYMFONIC_ROUTE_KIND_CHUNKS:
      return &symfonic_chunk_encoder;
    case SYMFONIC_ROUTE_KIND_OPENAI:
      if (flags & SYMFONIC_ENCODER_RESPONSES)
        return answer ? &symfonic_responses_answer_encoder : &symfonic_responses_stream_encoder;
      return answer ? &symfonic_openai_answer_encoder : &symfonic_openai_stream_encoder;
    case SYMFONIC_ROUTE_KIND_ANTHROPIC:
      return answer ? &symfonic_anthropic_answer_encoder : &symfonic_anthropic_stream_encoder;
    case SYMFONIC_ROUTE_KIND_CHAT:
    case SYMFONIC_ROUTE_KIND_RESUME:
    default:
      return &symfonic_answer_encoder;
    }
}

SymfonicEncoder *
symfonic_encoder_new (SymfonicRouteKind    kind,
                      SymfonicStream      *stream,
                      SymfonicEncoderFlags flags)
{
  const SymfonicEncoderVTable *vtable = vtable_for (kind, flags);
  SymfonicEncoder *self;

  g_assert (vtable->instance_size >= sizeof (SymfonicEncoder));
  self = g_malloc0 (vtable->instance_size);
  self->vtable = vtable;
  self->kind = kind;
  self->flags = flags;
  self->stream = g_object_ref (stream);
  self->invocation = g_object_ref (symfonic_stream_get_invocation (stream));
  self->text = g_string_new (NULL);
  if (vtable->init != NULL)
    vtable->init (self);

  return self;
}

void
symfonic_encoder_free (SymfonicEncoder *self)
{
  if (self->vtable->clear != NULL)
    self->vtable->clear (self);
  g_object_unref (self->invocation);
  g_object_unref (self->stream);
  g_string_free (self->text, TRUE);
  g_free (self->fallback);
  g_clear_pointer (&self->terminal, symfonic_event_unref);
  g_clear_pointer (&self->tool_ids, g_ptr_array_unref);
  g_free (self);
}

gboolean
symfonic_encoder_is_streaming (SymfonicEncoder *self)
{
  return self->vtable->streaming;
}

SymfonicFrameClass
symfonic_encoder_event (SymfonicEncoder *self,
                        SymfonicEvent   *event,
                        GString         *out)
{
  return self->vtable->event (self, event, out);
}

void
symfonic_encoder_success (SymfonicEncoder *self,
                          gint64           duration_ms,
                          GString         *out)
{
  self->vtable->success (self, duration_ms, out);
}

/* A refusal or a failed answer as the route's clients parse it: the
 * provider kinds in their provider's error shape, the others as the
 * frame's own JSON. */
void
symfonic_encoder_error_body (SymfonicRouteKind   kind,
                             SymfonicErrorFrame *frame,
                             GString            *out)
{
  g_autofree char *json = NULL;

  switch (kind)
    {
    case SYMFONIC_ROUTE_KIND_OPENAI:
      symfonic_openai_error_body (frame, out);
      return;
    case SYMFONIC_ROUTE_KIND_ANTHROPIC:
      symfonic_anthropic_error_body (frame, out);
      return;
    case SYMFONIC_ROUTE_KIND_TYPED:
    case SYMFONIC_ROUTE_KIND_CHUNKS:
    case SYMFONIC_ROUTE_KIND_CHAT:
    case SYMFONIC_ROUTE_KIND_RESUME:
    default:
      json = symfonic_error_frame_to_json (frame);
      g_string_append (out, json);
      return;
    }
}

/* The error types each provider's API answers with, by status; an
 * overloaded upstream is Anthropic's overloaded_error whatever its status,
 * as an Anthropic provider said it. */
const char *
symfonic_encoder_provider_error_type (SymfonicRouteKind  kind,
                                      guint              status,
                                      const char        *code)
{
  static const struct
  {
    guint       status;
    const char *openai;
    const char *anthropic;
  } types[] = {
    { 401, "authentication_error", "authentication_error" },
    { 403, "permission_error", "permission_error" },
    { 404, "not_found_error", "not_found_error" },
    { 413, "invalid_request_error", "request_too_large" },
    { 429, "rate_limit_error", "rate_limit_error" },
    { 503, "server_error", "overloaded_error" },
    { 529, "server_error", "overloaded_error" },
  };
  gboolean anthropic = kind == SYMFONIC_ROUTE_KIND_ANTHROPIC;

  if (anthropic && g_strcmp0 (code, "upstream_unavailable") == 0)
    return "overloaded_error";
  for (guint i = 0; i < G_N_ELEMENTS (types); i++)
    {
      if (types[i].status == status)
        return anthropic ? types[i].anthropic : types[i].openai;
    }
  if (status >= 500)
    return anthropic ? "api_error" : "server_error";

  return "invalid_request_error";
}

/* The same frame before the handshake is a JSON body, after it the
 * stream's one error terminal. */
void
symfonic_encoder_error (SymfonicEncoder    *self,
                        SymfonicErrorFrame *frame,
                        GString            *out)
{
  if (!self->vtable->streaming)
    {
      symfonic_encoder_error_body (self->kind, frame, out);
      return;
    }
  if (self->vtable->error != NULL)
    {
      self->vtable->error (self, frame, out);
      return;
    }

  symfonic_encoder_begin_frame (self, out, "error");
  symfonic_encoder_error_body (self->kind, frame, out);
  g_string_append (out, "\n\n");
}

#define ID_FIELD "id: "
#define EVENT_FIELD "event: "
#define DATA_FIELD "\ndata: "

/* Starts a frame with the next id of the run (DESIGN 7a: a client that
 * reconnects names the last one it got in Last-Event-ID), then, unless
 * @name is %NULL, the `event:` line and the `data: ` its payload follows:
 * one resize at most, and no printf. */
void
symfonic_encoder_begin_frame (SymfonicEncoder *self,
                              GString         *out,
                              const char      *name)
{
  gsize name_len = name != NULL ? strlen (name) : 0;
  char *p = symfonic_string_reserve (out, strlen (ID_FIELD) + SYMFONIC_JSON_UINT_MAX + 1 +
                                          strlen (EVENT_FIELD) + name_len + strlen (DATA_FIELD));

  memcpy (p, ID_FIELD, strlen (ID_FIELD));
  p = symfonic_json_write_uint (p + strlen (ID_FIELD), ++self->seq);
  *p++ = '\n';
  if (name != NULL)
    {
      memcpy (p, EVENT_FIELD, strlen (EVENT_FIELD));
      p += strlen (EVENT_FIELD);
      memcpy (p, name, name_len);
      p += name_len;
      memcpy (p, DATA_FIELD, strlen (DATA_FIELD));
      p += strlen (DATA_FIELD);
    }
  symfonic_string_commit (out, p);
}

guint64
symfonic_encoder_get_seq (SymfonicEncoder *self)
{
  return self->seq;
}

const char *
symfonic_encoder_final_text (SymfonicEncoder *self)
{
  if (self->text->len == 0 && self->fallback != NULL)
    return self->fallback;

  return self->text->str;
}

/* Only the first terminal counts: an upstream that sends two does not get
 * to change its mind. */
void
symfonic_encoder_keep_fallback (SymfonicEncoder *self,
                                SymfonicEvent   *terminal)
{
  if (self->fallback != NULL)
    return;
  self->fallback = g_strdup (symfonic_event_get_text (terminal, NULL));
  self->terminal = symfonic_event_ref (terminal);
}

/* A string the upstream's terminal carries besides its text (a provider
 * source's finish_reason, stop_reason, stop_sequence), or NULL. */
const char *
symfonic_encoder_terminal_string (SymfonicEncoder *self,
                                  const char      *name)
{
  JsonObject *extras = self->terminal != NULL ? symfonic_event_get_payload (self->terminal) : NULL;
  JsonNode *node = extras != NULL ? json_object_get_member (extras, name) : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;

  return json_node_get_string (node);
}

/* Why the answer ended, in the typed stream's words: stop, length,
 * tool_calls, content_filter or refusal. A terminal that says so is
 * believed (OpenAI's legacy function_call is a tool call); without one
 * the answer stopped, calling tools if it did. */
const char *
symfonic_encoder_finish_reason (SymfonicEncoder *self)
{
  static const char * const reasons[] = { "stop", "length", "tool_calls", "content_filter", "refusal" };
  const char *said = symfonic_encoder_terminal_string (self, "finish_reason");

  for (guint i = 0; said != NULL && i < G_N_ELEMENTS (reasons); i++)
    {
      if (strcmp (said, reasons[i]) == 0)
        return reasons[i];
    }
  if (g_strcmp0 (said, "function_call") == 0)
    return "tool_calls";

  return self->n_tool_calls > 0 ? "tool_calls" : "stop";
}

guint64
symfonic_encoder_get_dropped (SymfonicEncoder *self)
{
  return self->dropped;
}

static const char *
payload_string (JsonObject *payload,
                const char *name)
{
  JsonNode *node = json_object_get_member (payload, name);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;

  return json_node_get_string (node);
}

static gint64
payload_index (JsonObject *payload)
{
  JsonNode *index = json_object_get_member (payload, "index");

  if (index != NULL && JSON_NODE_HOLDS_VALUE (index) && json_node_get_value_type (index) == G_TYPE_INT64 &&
      json_node_get_int (index) >= 0)
    return json_node_get_int (index);

  return -1;
}

/* Reads a ToolCallStartEvent. A typed runtime sends only the name and id:
 * its calls are numbered in order and carry no arguments. */
void
symfonic_encoder_read_tool_call (SymfonicEncoder  *self,
                                 SymfonicEvent    *event,
                                 SymfonicToolCall *call)
{
  JsonObject *payload = symfonic_event_get_payload (event);
  const char *name = payload_string (payload, "tool_name");
  const char *id = payload_string (payload, "tool_call_id");
  gint64 index = payload_index (payload);

  call->name = name != NULL ? name : "";
  call->id = id != NULL ? id : "";
  call->arguments = payload_string (payload, "arguments");
  call->ordinal = self->n_tool_calls++;
  call->index = index >= 0 ? index : call->ordinal;
  if (self->tool_ids == NULL)
    self->tool_ids = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (self->tool_ids, g_strdup (call->id));
}

/* Reads a ToolCallDeltaEvent, for a call that started: FALSE for a
 * fragment of no call the stream saw start. The latest call of an id is
 * the one meant. */
gboolean
symfonic_encoder_read_tool_delta (SymfonicEncoder  *self,
                                  SymfonicEvent    *event,
                                  SymfonicToolCall *call)
{
  JsonObject *payload = symfonic_event_get_payload (event);
  const char *id = payload_string (payload, "tool_call_id");
  gint64 index = payload_index (payload);
  guint ordinal;

  if (id == NULL || self->tool_ids == NULL)
    return FALSE;
  for (ordinal = self->tool_ids->len; ordinal > 0; ordinal--)
    {
      if (strcmp (g_ptr_array_index (self->tool_ids, ordinal - 1), id) == 0)
        break;
    }
  if (ordinal == 0)
    return FALSE;

  call->name = "";
  call->id = id;
  call->arguments = payload_string (payload, "arguments");
  call->ordinal = ordinal - 1;
  call->index = index >= 0 ? index : call->ordinal;

  return call->arguments != NULL;
}

/* Adds a text delta's text to the text sent, which the success terminal
 * carries. */
void
symfonic_encoder_keep_text (SymfonicEncoder *self,
                            SymfonicEvent   *delta)
{
  gsize length;
  const char *text = symfonic_event_peek_text (delta, &length);

  symfonic_string_append_len (self->text, text, length);
}

/* Sorts @event for a provider's format, which has text, thinking and tool
 * calls and nothing else; it keeps the text sent and the terminal's text
 * on the way. @call is filled for a tool call. */
SymfonicProviderPart
symfonic_encoder_provider_part (SymfonicEncoder  *self,
                                SymfonicEvent    *event,
                                SymfonicToolCall *call)
{
  switch (symfonic_event_peek_kind (event))
    {
    case SYMFONIC_EVENT_KIND_TEXT_DELTA:
      symfonic_encoder_keep_text (self, event);
      return SYMFONIC_PROVIDER_PART_TEXT;

    case SYMFONIC_EVENT_KIND_THINKING_DELTA:
      if (*symfonic_event_get_text (event, NULL) != '\0')
        return SYMFONIC_PROVIDER_PART_THINKING;
      return symfonic_event_get_payload (event) != NULL ? SYMFONIC_PROVIDER_PART_THINKING_EXTRAS
                                                        : SYMFONIC_PROVIDER_PART_NONE;

    case SYMFONIC_EVENT_KIND_TOOL_CALL_START:
      symfonic_encoder_read_tool_call (self, event, call);
      return SYMFONIC_PROVIDER_PART_TOOL_CALL;

    case SYMFONIC_EVENT_KIND_TOOL_CALL_DELTA:
      return symfonic_encoder_read_tool_delta (self, event, call) ? SYMFONIC_PROVIDER_PART_TOOL_CALL_DELTA
                                                                 : SYMFONIC_PROVIDER_PART_NONE;

    case SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE:
      symfonic_encoder_keep_fallback (self, event);
      return SYMFONIC_PROVIDER_PART_NONE;

    case SYMFONIC_EVENT_KIND_ACTIVATION:
    case SYMFONIC_EVENT_KIND_TOOL_RESULT:
    case SYMFONIC_EVENT_KIND_MEMORY_EXTRACTED:
    case SYMFONIC_EVENT_KIND_CONSOLIDATION_SCHEDULED:
    case SYMFONIC_EVENT_KIND_GRAPH_NODE_CREATED:
    case SYMFONIC_EVENT_KIND_GRAPH_EDGE_CREATED:
    case SYMFONIC_EVENT_KIND_CHUNK:
    default:
      return SYMFONIC_PROVIDER_PART_NONE;
    }
}

/* The upstream's own final text when no delta streamed, which a stream
 * then sends as its one delta; %NULL otherwise. */
const char *
symfonic_encoder_unstreamed_text (SymfonicEncoder *self)
{
  if (self->text->len > 0 || self->fallback == NULL || *self->fallback == '\0')
    return NULL;

  return self->fallback;
}

/* The model a provider answer names: the one that answered, as the
 * upstream named it, or the one the client asked for. */
const char *
symfonic_encoder_get_model (SymfonicEncoder *self)
{
  SymfonicUpstreamFacts *facts = symfonic_upstream_facts_peek (self->stream);
  JsonObject *parameters = symfonic_invocation_get_parameters (self->invocation);
  const char *model = parameters != NULL ? payload_string (parameters, "model") : NULL;

  if (facts != NULL && facts->model != NULL)
    return facts->model;

  return model != NULL ? model : "symfonic";
}

/* The stream's metered counts, which the upstream reported (0 when it
 * reported none), with the details it gave besides. */
void
symfonic_encoder_get_usage (SymfonicEncoder      *self,
                            SymfonicEncoderUsage *usage)
{
  SymfonicUpstreamFacts *facts = symfonic_upstream_facts_peek (self->stream);

  symfonic_stream_get_usage (self->stream, &usage->input, &usage->output, NULL);
  usage->cache_read = usage->cache_creation = usage->reasoning = -1;
  if (facts == NULL)
    return;

  usage->cache_read = facts->cache_read;
  usage->cache_creation = facts->cache_creation;
  usage->reasoning = facts->reasoning;
  if (facts->input_excludes_cache)
    usage->input += MAX (facts->cache_read, 0) + MAX (facts->cache_creation, 0);
}
