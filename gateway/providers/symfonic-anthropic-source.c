/* symfonic-anthropic-source.c: Anthropic's Messages API
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-json.h"
#include "symfonic-anthropic-source-private.h"
#include "symfonic-usage-private.h"

/* Streams `POST {base-url}/messages`. The invocation's conversation is in
 * the OpenAI chat shape, so it is turned into Anthropic's: the system
 * prompt on its own, tool calls and results as content blocks, and
 * consecutive turns of one role merged, as the API wants them to
 * alternate. */
struct _SymfonicAnthropicSource
{
  SymfonicProviderSource parent_instance;

  char *anthropic_version;
};

G_DEFINE_FINAL_TYPE (SymfonicAnthropicSource, symfonic_anthropic_source, SYMFONIC_TYPE_PROVIDER_SOURCE)

enum {
  PROP_0,
  PROP_ANTHROPIC_VERSION,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

#define DEFAULT_ANTHROPIC_VERSION "2023-06-01"

static void
symfonic_anthropic_source_add_headers (SymfonicProviderSource *source,
                                       const char             *api_key)
{
  SymfonicAnthropicSource *self = SYMFONIC_ANTHROPIC_SOURCE (source);

  if (api_key != NULL)
    symfonic_http_source_add_request_header (SYMFONIC_HTTP_SOURCE (source), "x-api-key", api_key);
  symfonic_http_source_add_request_header (SYMFONIC_HTTP_SOURCE (source), "anthropic-version",
                                           self->anthropic_version);
}

static JsonObject *
text_block (const char *text)
{
  JsonObject *block = json_object_new ();

  json_object_set_string_member (block, "type", "text");
  json_object_set_string_member (block, "text", text);

  return block;
}

/* A message's content as blocks: a string is one text block; of a list of
 * parts, the text parts. */
static void
add_content (JsonArray *blocks,
             JsonNode  *content)
{
  if (content == NULL)
    return;

  if (JSON_NODE_HOLDS_VALUE (content) && json_node_get_value_type (content) == G_TYPE_STRING)
    {
      if (*json_node_get_string (content) != '\0')
        json_array_add_object_element (blocks, text_block (json_node_get_string (content)));
      return;
    }

  if (!JSON_NODE_HOLDS_ARRAY (content))
    return;
  for (guint i = 0; i < json_array_get_length (json_node_get_array (content)); i++)
    {
      JsonNode *part = json_array_get_element (json_node_get_array (content), i);
      const char *text = JSON_NODE_HOLDS_OBJECT (part)
                         ? symfonic_provider_json_string (json_node_get_object (part), "text") : NULL;

      if (text != NULL)
        json_array_add_object_element (blocks, text_block (text));
    }
}

static void
add_tool_uses (JsonArray *blocks,
               JsonArray *calls)
{
  for (guint i = 0; calls != NULL && i < json_array_get_length (calls); i++)
    {
      JsonNode *node = json_array_get_element (calls, i);
      JsonObject *call = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
      JsonObject *function = symfonic_provider_json_object (call, "function");
      const char *arguments = symfonic_provider_json_string (function, "arguments");
      g_autoptr(JsonNode) input = arguments != NULL ? symfonic_provider_parse_json (arguments, strlen (arguments), NULL) : NULL;
      JsonObject *block;

      if (call == NULL || symfonic_provider_json_string (call, "id") == NULL)
        continue;
      block = json_object_new ();
      json_object_set_string_member (block, "type", "tool_use");
      json_object_set_string_member (block, "id", symfonic_provider_json_string (call, "id"));
      json_object_set_string_member (block, "name", symfonic_provider_json_string (function, "name") ?: "");
      /* arguments that are not an object are no input Anthropic takes */
      if (input != NULL)
        json_object_set_member (block, "input", json_node_ref (input));
      else
        json_object_set_object_member (block, "input", json_object_new ());
      json_array_add_object_element (blocks, block);
    }
}

static JsonArray *
convert_messages (JsonArray *conversation)
{
  JsonArray *messages = json_array_new ();
  JsonObject *last = NULL;

  for (guint i = 0; conversation != NULL && i < json_array_get_length (conversation); i++)
    {
      JsonNode *node = json_array_get_element (conversation, i);
      JsonObject *message = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
      const char *role = symfonic_provider_json_string (message, "role");
      g_autoptr(JsonArray) blocks = json_array_new ();
      const char *anthropic_role;

      if (role == NULL)
        continue;
      if (strcmp (role, "tool") == 0)
        {
          JsonObject *result = json_object_new ();
          g_autoptr(JsonArray) content = json_array_new ();

          add_content (content, json_object_get_member (message, "content"));
          json_object_set_string_member (result, "type", "tool_result");
          json_object_set_string_member (result, "tool_use_id",
                                         symfonic_provider_json_string (message, "tool_call_id") ?: "");
          json_object_set_array_member (result, "content", g_steal_pointer (&content));
          json_array_add_object_element (blocks, result);
          anthropic_role = "user";
        }
      else
        {
          add_content (blocks, json_object_get_member (message, "content"));
          add_tool_uses (blocks, symfonic_provider_json_array (message, "tool_calls"));
          anthropic_role = strcmp (role, "assistant") == 0 ? "assistant" : "user";
        }
      if (json_array_get_length (blocks) == 0)
        continue;

      if (last != NULL && strcmp (json_object_get_string_member (last, "role"), anthropic_role) == 0)
        {
          JsonArray *merged = json_object_get_array_member (last, "content");

          for (guint j = 0; j < json_array_get_length (blocks); j++)
            json_array_add_element (merged, json_node_copy (json_array_get_element (blocks, j)));
          continue;
        }
      last = json_object_new ();
      json_object_set_string_member (last, "role", anthropic_role);
      json_object_set_array_member (last, "content", g_steal_pointer (&blocks));
      json_array_add_object_element (messages, last);
    }

  return messages;
}

/* OpenAI's {"type":"function","function":{name, description, parameters}}
 * as Anthropic's {name, description, input_schema}. */
static JsonArray *
convert_tools (JsonArray *tools)
{
  JsonArray *converted = json_array_new ();

  for (guint i = 0; i < json_array_get_length (tools); i++)
    {
      JsonNode *node = json_array_get_element (tools, i);
      JsonObject *function = JSON_NODE_HOLDS_OBJECT (node)
                             ? symfonic_provider_json_object (json_node_get_object (node), "function") : NULL;
      JsonObject *parameters = symfonic_provider_json_object (function, "parameters");
      JsonObject *tool;

      if (symfonic_provider_json_string (function, "name") == NULL)
        continue;
      tool = json_object_new ();
      json_object_set_string_member (tool, "name", symfonic_provider_json_string (function, "name"));
      if (symfonic_provider_json_string (function, "description") != NULL)
        json_object_set_string_member (tool, "description", symfonic_provider_json_string (function, "description"));
      if (parameters != NULL)
        json_object_set_object_member (tool, "input_schema", json_object_ref (parameters));
      else
        {
          JsonObject *schema = json_object_new ();

          json_object_set_string_member (schema, "type", "object");
          json_object_set_object_member (tool, "input_schema", schema);
        }
      json_array_add_object_element (converted, tool);
    }

  return converted;
}

static void
symfonic_anthropic_source_write_body (SymfonicProviderSource *source,
                                      SymfonicInvocation     *invocation,
                                      GString                *out)
{
  g_autofree char *system = NULL;
  g_autoptr(JsonArray) messages = NULL;
  g_autoptr(JsonArray) tools = NULL;
  JsonArray *requested;
  SymfonicProviderApi api;
  JsonObject *body = symfonic_invocation_get_provider_body (invocation, &api);

  if (body != NULL && api == SYMFONIC_PROVIDER_API_ANTHROPIC)
    {
      symfonic_provider_source_write_passthrough (source, invocation, body, out);
      return;
    }

  /* an agent route's invocation: its query as the one user message */
  system = symfonic_provider_source_dup_system (source, invocation);
  messages = convert_messages (symfonic_invocation_get_messages (invocation));
  requested = symfonic_invocation_get_tools (invocation);
  tools = requested != NULL ? convert_tools (requested) : NULL;

  g_string_append (out, "{\"model\":");
  symfonic_json_append_string (out, symfonic_provider_source_get_model (source), -1);
  if (system != NULL)
    {
      g_string_append (out, ",\"system\":");
      symfonic_json_append_string (out, system, -1);
    }
  g_string_append (out, ",\"messages\":[");
  symfonic_provider_source_write_elements (out, messages, FALSE);
  g_string_append_c (out, ']');
  symfonic_provider_source_write_settings (source, invocation, tools, "stop_sequences", out);
  g_string_append (out, ",\"stream\":true}");
}

static gint64
get_index (JsonObject *frame)
{
  JsonNode *node = json_object_get_member (frame, "index");

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64)
    return -1;

  return json_node_get_int (node);
}

/* Anthropic's stop reasons in the typed stream's words; its own go on to
 * the anthropic route as they came. */
static const char *
finish_reason_for (const char *stop_reason)
{
  static const struct {
    const char *stop_reason;
    const char *finish_reason;
  } reasons[] = {
    { "end_turn", "stop" },
    { "stop_sequence", "stop" },
    { "pause_turn", "stop" },
    { "max_tokens", "length" },
    { "model_context_window_exceeded", "length" },
    { "tool_use", "tool_calls" },
    { "refusal", "refusal" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (reasons); i++)
    {
      if (strcmp (stop_reason, reasons[i].stop_reason) == 0)
        return reasons[i].finish_reason;
    }

  return "stop";
}

/* An `error` event's type, as the gateway's codes: only the type is
 * kept, its message is the provider's. */
static GError *
stream_error (SymfonicProviderRequest *request,
              JsonObject              *frame)
{
  const char *type = symfonic_provider_json_string (symfonic_provider_json_object (frame, "error"), "type");
  g_autofree char *quoted = g_strescape (type != NULL ? type : "", NULL);

  if (g_strcmp0 (type, "rate_limit_error") == 0)
    return symfonic_provider_request_failure (request, SYMFONIC_ERROR_RATE_LIMITED,
                                              "The upstream is rate limiting requests; retry later",
                                              "sent a %s event", "rate_limit_error");
  if (g_strcmp0 (type, "overloaded_error") == 0)
    return symfonic_provider_request_failure (request, SYMFONIC_ERROR_UPSTREAM_UNAVAILABLE,
                                              "The upstream is overloaded",
                                              "sent an %s event", "overloaded_error");
  if (g_strcmp0 (type, "timeout_error") == 0)
    return symfonic_provider_request_failure (request, SYMFONIC_ERROR_UPSTREAM_TIMEOUT,
                                              "The upstream did not answer in time",
                                              "sent a %s event", "timeout_error");

  return symfonic_provider_request_failure (request, SYMFONIC_ERROR_UPSTREAM,
                                            "The upstream failed while streaming",
                                            "sent an error event of type “%.32s”", quoted);
}

/* A tool_use block starts with an empty input, which its
 * input_json_deltas then stream; one that starts with its input whole
 * passes it on as the start's arguments. */
static gboolean
read_block_start (SymfonicProviderRequest  *request,
                  JsonObject               *frame,
                  GError                  **error)
{
  JsonObject *block = symfonic_provider_json_object (frame, "content_block");
  JsonObject *input = symfonic_provider_json_object (block, "input");
  g_autoptr(GString) arguments = g_string_new (NULL);

  if (g_strcmp0 (symfonic_provider_json_string (block, "type"), "tool_use") != 0 ||
      symfonic_provider_json_string (block, "id") == NULL)
    return TRUE;
  if (input != NULL && json_object_get_size (input) > 0)
    {
      g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), input);

      symfonic_json_append_node (arguments, node);
    }

  return symfonic_provider_request_tool_start (request, get_index (frame), symfonic_provider_json_string (block, "id"),
                                               symfonic_provider_json_string (block, "name"), arguments->str, error);
}

static gboolean
read_block_delta (SymfonicProviderRequest  *request,
                  JsonObject               *frame,
                  GError                  **error)
{
  JsonObject *delta = symfonic_provider_json_object (frame, "delta");
  const char *type = symfonic_provider_json_string (delta, "type");
  const char *text;

  /* text and thinking deltas are read by symfonic_anthropic_delta_read() */
  if (type == NULL)
    return TRUE;
  if (strcmp (type, "signature_delta") == 0 && (text = symfonic_provider_json_string (delta, "signature")) != NULL)
    symfonic_provider_request_thinking (request, "", text);
  else if (strcmp (type, "input_json_delta") == 0 && (text = symfonic_provider_json_string (delta, "partial_json")) != NULL)
    return symfonic_provider_request_tool_arguments (request, get_index (frame), text, error);

  return TRUE;
}

static void
apply_delta (SymfonicProviderRequest      *request,
             const SymfonicAnthropicDelta *delta)
{
  if (delta->thinking != NULL)
    symfonic_provider_request_thinking (request, delta->thinking, NULL);
  if (delta->text != NULL)
    symfonic_provider_request_text (request, delta->text);
}

/* input_tokens leaves out the tokens read from or written to the cache,
 * which have counts of their own */
static gboolean
set_usage (SymfonicProviderRequest  *request,
           JsonObject               *usage,
           GError                  **error)
{
  SymfonicUsageCounts counts;
  guint64 cache_read, cache_creation;

  symfonic_usage_read_counts (usage, &counts);
  symfonic_provider_request_set_usage_details (request,
                                               symfonic_usage_read_count (usage, "cache_read_input_tokens", &cache_read)
                                               ? (gint64) cache_read : -1,
                                               symfonic_usage_read_count (usage, "cache_creation_input_tokens",
                                                                          &cache_creation)
                                               ? (gint64) cache_creation : -1,
                                               -1, TRUE);

  return symfonic_provider_request_set_usage (request, &counts, error);
}

static gboolean
symfonic_anthropic_source_handle_frame (SymfonicProviderSource   *source,
                                        SymfonicProviderRequest  *request,
                                        const char               *event,
                                        const char               *data,
                                        gsize                     data_length,
                                        GError                  **error)
{
  g_autoptr(JsonNode) root = NULL;
  SymfonicAnthropicDelta delta;
  JsonObject *frame;
  const char *type;
  JsonObject *message;
  const char *stop_reason;

  if (symfonic_anthropic_delta_scan (data, data_length, symfonic_provider_request_get_memo (request),
                                     symfonic_provider_request_get_scratch (request), &delta))
    {
      apply_delta (request, &delta);
      return TRUE;
    }

  root = symfonic_provider_parse_json (data, data_length, error);
  if (root == NULL)
    return FALSE;
  frame = json_node_get_object (root);
  if (symfonic_anthropic_delta_read (frame, &delta))
    {
      apply_delta (request, &delta);
      return TRUE;
    }
  type = symfonic_provider_json_string (frame, "type");
  if (type == NULL)
    return TRUE;

  if (strcmp (type, "content_block_delta") == 0)
    return read_block_delta (request, frame, error);
  else if (strcmp (type, "content_block_start") == 0)
    return read_block_start (request, frame, error);
  else if (strcmp (type, "message_start") == 0)
    {
      message = symfonic_provider_json_object (frame, "message");
      symfonic_provider_request_set_model (request, symfonic_provider_json_string (message, "model"));
      return set_usage (request, symfonic_provider_json_object (message, "usage"), error);
    }
  else if (strcmp (type, "message_delta") == 0)
    {
      JsonObject *delta = symfonic_provider_json_object (frame, "delta");

      stop_reason = symfonic_provider_json_string (delta, "stop_reason");
      if (stop_reason != NULL)
        symfonic_provider_request_set_finish_reason (request, finish_reason_for (stop_reason), stop_reason,
                                                     symfonic_provider_json_string (delta, "stop_sequence"));
      return set_usage (request, symfonic_provider_json_object (frame, "usage"), error);
    }
  else if (strcmp (type, "message_stop") == 0)
    symfonic_provider_request_complete (request);
  else if (strcmp (type, "error") == 0)
    {
      g_propagate_error (error, stream_error (request, frame));
      return FALSE;
    }
  /* ping, and event types added after this was written */

  return TRUE;
}

static void
symfonic_anthropic_source_finalize (GObject *object)
{
  SymfonicAnthropicSource *self = SYMFONIC_ANTHROPIC_SOURCE (object);

  g_free (self->anthropic_version);

  G_OBJECT_CLASS (symfonic_anthropic_source_parent_class)->finalize (object);
}

static void
symfonic_anthropic_source_get_property (GObject    *object,
                                        guint       prop_id,
                                        GValue     *value,
                                        GParamSpec *pspec)
{
  SymfonicAnthropicSource *self = SYMFONIC_ANTHROPIC_SOURCE (object);

  switch (prop_id)
    {
    case PROP_ANTHROPIC_VERSION:
      g_value_set_string (value, self->anthropic_version);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_anthropic_source_set_property (GObject      *object,
                                        guint         prop_id,
                                        const GValue *value,
                                        GParamSpec   *pspec)
{
  SymfonicAnthropicSource *self = SYMFONIC_ANTHROPIC_SOURCE (object);

  switch (prop_id)
    {
    case PROP_ANTHROPIC_VERSION:
      g_free (self->anthropic_version);
      self->anthropic_version = g_value_dup_string (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_anthropic_source_class_init (SymfonicAnthropicSourceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  SymfonicProviderSourceClass *provider_class = SYMFONIC_PROVIDER_SOURCE_CLASS (klass);

  object_class->finalize = symfonic_anthropic_source_finalize;
  object_class->get_property = symfonic_anthropic_source_get_property;
  object_class->set_property = symfonic_anthropic_source_set_property;
  provider_class->endpoint = "/messages";
  provider_class->api = SYMFONIC_PROVIDER_API_ANTHROPIC;
  provider_class->add_headers = symfonic_anthropic_source_add_headers;
  provider_class->write_body = symfonic_anthropic_source_write_body;
  provider_class->handle_frame = symfonic_anthropic_source_handle_frame;

  properties[PROP_ANTHROPIC_VERSION] =
    g_param_spec_string ("anthropic-version", "Anthropic version",
                         "The API version sent as the anthropic-version header",
                         DEFAULT_ANTHROPIC_VERSION,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
symfonic_anthropic_source_init (SymfonicAnthropicSource *self)
{
  self->anthropic_version = g_strdup (DEFAULT_ANTHROPIC_VERSION);
}
