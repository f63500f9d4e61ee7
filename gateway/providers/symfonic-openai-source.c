/* symfonic-openai-source.c: an OpenAI-compatible chat completions API
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-json.h"
#include "symfonic-openai-source-private.h"
#include "symfonic-usage-private.h"

/* Streams `POST {base-url}/chat/completions`: OpenAI's API, and the many
 * servers that copy it (vLLM, llama.cpp, DeepSeek, OpenRouter), whose
 * `reasoning_content` deltas are the model's thinking. */
struct _SymfonicOpenaiSource
{
  SymfonicProviderSource parent_instance;
};

G_DEFINE_FINAL_TYPE (SymfonicOpenaiSource, symfonic_openai_source, SYMFONIC_TYPE_PROVIDER_SOURCE)

static void
symfonic_openai_source_add_headers (SymfonicProviderSource *source,
                                    const char             *api_key)
{
  g_autofree char *value = NULL;

  if (api_key == NULL)
    return;
  value = g_strconcat ("Bearer ", api_key, NULL);
  symfonic_http_source_add_request_header (SYMFONIC_HTTP_SOURCE (source), "Authorization", value);
  memset (value, 0, strlen (value));
}

static void
symfonic_openai_source_write_body (SymfonicProviderSource *source,
                                   SymfonicInvocation     *invocation,
                                   GString                *out)
{
  g_autofree char *system = NULL;
  SymfonicProviderApi api;
  JsonObject *body = symfonic_invocation_get_provider_body (invocation, &api);

  if (body != NULL && api == SYMFONIC_PROVIDER_API_OPENAI_CHAT)
    {
      symfonic_provider_source_write_passthrough (source, invocation, body, out);
      return;
    }

  /* an agent route's invocation: its query as the one user message */
  system = symfonic_provider_source_dup_system (source, invocation);
  g_string_append (out, "{\"model\":");
  symfonic_json_append_string (out, symfonic_provider_source_get_model (source), -1);
  g_string_append (out, ",\"messages\":[");
  if (system != NULL)
    {
      g_string_append (out, "{\"role\":\"system\",\"content\":");
      symfonic_json_append_string (out, system, -1);
      g_string_append_c (out, '}');
    }
  /* already in this API's shape */
  symfonic_provider_source_write_elements (out, symfonic_invocation_get_messages (invocation), system != NULL);
  g_string_append_c (out, ']');
  symfonic_provider_source_write_settings (source, invocation, symfonic_invocation_get_tools (invocation), "stop", out);
  /* the last chunk then carries the usage, with no choices */
  g_string_append (out, ",\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
}

/* A call's id comes with its first fragment; later fragments carry only
 * its index and more of its arguments. */
static gboolean
read_tool_calls (SymfonicProviderRequest  *request,
                 JsonArray                *calls,
                 GError                  **error)
{
  for (guint i = 0; i < json_array_get_length (calls); i++)
    {
      JsonNode *node = json_array_get_element (calls, i);
      JsonObject *call = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
      JsonObject *function = symfonic_provider_json_object (call, "function");
      const char *id = symfonic_provider_json_string (call, "id");
      const char *arguments = symfonic_provider_json_string (function, "arguments");
      gint64 index = i;

      if (call == NULL)
        continue;
      if (json_object_has_member (call, "index") &&
          json_node_get_value_type (json_object_get_member (call, "index")) == G_TYPE_INT64)
        index = json_object_get_int_member (call, "index");

      if (id != NULL)
        {
          if (!symfonic_provider_request_tool_start (request, index, id, symfonic_provider_json_string (function, "name"),
                                                     arguments, error))
            return FALSE;
        }
      else if (arguments != NULL && !symfonic_provider_request_tool_arguments (request, index, arguments, error))
        return FALSE;
    }

  return TRUE;
}

static gboolean
apply_chunk (SymfonicProviderRequest    *request,
             const SymfonicOpenaiChunk  *chunk,
             GError                    **error)
{
  symfonic_provider_request_set_model (request, chunk->model);
  if (!symfonic_provider_request_set_usage (request, &chunk->usage, error))
    return FALSE;
  /* prompt_tokens holds the cached tokens; the usage chunk alone has
   * details */
  if (G_UNLIKELY (chunk->cached_tokens >= 0 || chunk->reasoning_tokens >= 0))
    symfonic_provider_request_set_usage_details (request, chunk->cached_tokens, -1, chunk->reasoning_tokens, FALSE);
  if (chunk->thinking != NULL)
    symfonic_provider_request_thinking (request, chunk->thinking, NULL);
  if (chunk->text != NULL && chunk->logprobs != NULL && *chunk->text != '\0')
    symfonic_provider_request_text_with_logprobs (request, chunk->text, chunk->logprobs);
  else if (chunk->text != NULL)
    symfonic_provider_request_text (request, chunk->text);
  /* what the model said instead of an answer is its answer */
  if (chunk->refusal != NULL)
    symfonic_provider_request_text (request, chunk->refusal);
  if (chunk->tool_calls != NULL && !read_tool_calls (request, chunk->tool_calls, error))
    return FALSE;
  /* OpenAI's reasons are the typed stream's, as the provider said them */
  if (chunk->finish_reason != NULL)
    symfonic_provider_request_set_finish_reason (request, chunk->finish_reason, NULL, NULL);

  return TRUE;
}

static gboolean
symfonic_openai_source_handle_frame (SymfonicProviderSource   *source,
                                     SymfonicProviderRequest  *request,
                                     const char               *event,
                                     const char               *data,
                                     gsize                     data_length,
                                     GError                  **error)
{
  g_autoptr(JsonNode) root = NULL;
  SymfonicOpenaiChunk chunk;

  if (symfonic_openai_chunk_scan (data, data_length, symfonic_provider_request_get_memo (request),
                                  symfonic_provider_request_get_scratch (request), &chunk))
    return apply_chunk (request, &chunk, error);

  root = symfonic_provider_parse_json (data, data_length, error);
  if (root == NULL)
    return FALSE;
  /* an error after the head: what it says is the provider's business */
  if (!symfonic_openai_chunk_read (json_node_get_object (root), &chunk))
    {
      g_propagate_error (error, symfonic_provider_request_failure (request, SYMFONIC_ERROR_UPSTREAM,
                                                                   "The upstream failed while streaming",
                                                                   "sent an error frame"));
      return FALSE;
    }

  return apply_chunk (request, &chunk, error);
}

static void
symfonic_openai_source_class_init (SymfonicOpenaiSourceClass *klass)
{
  SymfonicProviderSourceClass *provider_class = SYMFONIC_PROVIDER_SOURCE_CLASS (klass);

  provider_class->endpoint = "/chat/completions";
  provider_class->api = SYMFONIC_PROVIDER_API_OPENAI_CHAT;
  provider_class->add_headers = symfonic_openai_source_add_headers;
  provider_class->write_body = symfonic_openai_source_write_body;
  provider_class->handle_frame = symfonic_openai_source_handle_frame;
}

static void
symfonic_openai_source_init (SymfonicOpenaiSource *self)
{
}
