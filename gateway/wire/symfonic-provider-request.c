/* symfonic-provider-request.c: OpenAI chat and Anthropic messages request bodies
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-error.h"
#include "symfonic-invocation-private.h"
#include "symfonic-json-private.h"
#include "symfonic-provider-request-private.h"
#include "symfonic-provider-translate-private.h"

/* Both formats decode into the invocation's one conversation shape
 * (OpenAI's), so that any source can serve either route. Validation is
 * strict and names only the rule that broke, never the client's value.
 * The body is already bounded in size and depth by the exchange. */

#define MAX_STOP_SEQUENCES 4

static gboolean
refuse (GError    **error,
        const char *format,
        ...) G_GNUC_PRINTF (2, 3);

static gboolean
refuse (GError    **error,
        const char *format,
        ...)
{
  va_list args;

  va_start (args, format);
  g_propagate_error (error, g_error_new_valist (SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST, format, args));
  va_end (args);

  return FALSE;
}

static gboolean
holds_string (JsonNode *node)
{
  return node != NULL && JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING;
}

static gboolean
holds_number (JsonNode *node)
{
  return node != NULL && JSON_NODE_HOLDS_VALUE (node) &&
         (json_node_get_value_type (node) == G_TYPE_INT64 || json_node_get_value_type (node) == G_TYPE_DOUBLE);
}

static gboolean
holds_boolean (JsonNode *node)
{
  return node != NULL && JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_BOOLEAN;
}

/* A member's string, "" when it is missing or not a string: a client's
 * `"type": null` or `"type": 7` is just not a type. */
static const char *
string_member (JsonObject *object,
               const char *name)
{
  JsonNode *node = json_object_get_member (object, name);

  return holds_string (node) ? json_node_get_string (node) : "";
}

static JsonNode *
copy_member (JsonObject *object,
             const char *name)
{
  return symfonic_json_node_deep_copy (json_object_get_member (object, name));
}

/* A member that is absent or null is not given. */
static JsonNode *
get_given (JsonObject *object,
           const char *name)
{
  JsonNode *node = json_object_get_member (object, name);

  return node != NULL && !JSON_NODE_HOLDS_NULL (node) ? node : NULL;
}

static gboolean
read_model (JsonObject  *body,
            JsonObject  *parameters,
            GError     **error)
{
  JsonNode *model = json_object_get_member (body, "model");

  if (!holds_string (model) || *json_node_get_string (model) == '\0')
    return refuse (error, "“model” is required and must be a non-empty string");

  json_object_set_string_member (parameters, "model", json_node_get_string (model));
  return TRUE;
}

/* @name, if given, must be a number in [@min, @max]; it is kept as
 * @parameter. */
static gboolean
read_number (JsonObject  *body,
             const char  *name,
             double       min,
             double       max,
             JsonObject  *parameters,
             GError     **error)
{
  JsonNode *node = get_given (body, name);

  if (node == NULL)
    return TRUE;
  if (!holds_number (node) || json_node_get_double (node) < min || json_node_get_double (node) > max)
    return refuse (error, "“%s” must be a number from %g to %g", name, min, max);

  json_object_set_member (parameters, name, symfonic_json_node_deep_copy (node));
  return TRUE;
}

/* A token limit, kept as `max_tokens`: at most the source's cap, which
 * a request asking for more is told, rather than cut short unawares. */
static gboolean
read_max_tokens (JsonObject                   *body,
                 const char                   *name,
                 gboolean                      required,
                 const SymfonicProviderTarget *target,
                 JsonObject                   *parameters,
                 GError                      **error)
{
  JsonNode *node = get_given (body, name);

  if (node == NULL)
    return required ? refuse (error, "“%s” is required", name) : TRUE;
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64 ||
      json_node_get_int (node) < 1)
    return refuse (error, "“%s” must be a positive integer", name);
  if (target->max_tokens > 0 && (guint64) json_node_get_int (node) > target->max_tokens)
    return refuse (error, "“%s” may be at most %" G_GUINT64_FORMAT ", this route's limit", name, target->max_tokens);

  json_object_set_int_member (parameters, "max_tokens", json_node_get_int (node));
  return TRUE;
}

/* @name, if given, must hold a value of @type (G_TYPE_INT64, G_TYPE_STRING,
 * G_TYPE_BOOLEAN), or an object or a list with JSON_NODE_OBJECT and
 * JSON_NODE_ARRAY as @type: the options passed on are checked as much as
 * their meaning needs, the provider checks the rest. */
static gboolean
check_type (JsonObject  *body,
            const char  *name,
            GType        type,
            const char  *what,
            GError     **error)
{
  JsonNode *node = get_given (body, name);

  if (node == NULL)
    return TRUE;
  if (type == JSON_NODE_OBJECT ? JSON_NODE_HOLDS_OBJECT (node)
      : type == JSON_NODE_ARRAY ? JSON_NODE_HOLDS_ARRAY (node)
      : JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == type)
    return TRUE;

  return refuse (error, "“%s” must be %s", name, what);
}

/* One answer per request: the encoders and the text filters carry one
 * choice. */
static gboolean
read_n (JsonObject  *body,
        GError     **error)
{
  JsonNode *node = get_given (body, "n");

  if (node == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64 || json_node_get_int (node) < 1)
    return refuse (error, "“n” must be a positive integer");
  if (json_node_get_int (node) > 1)
    return refuse (error, "“n” may only be 1: the gateway cleans and meters one answer per request");

  return TRUE;
}

/* Stop sequences, a string or a list of them, kept as the list `stop`. */
static gboolean
read_stop (JsonObject  *body,
           const char  *name,
           gboolean     allow_string,
           JsonObject  *parameters,
           GError     **error)
{
  JsonNode *node = get_given (body, name);
  g_autoptr(JsonArray) stop = json_array_new ();
  JsonArray *list;

  if (node == NULL)
    return TRUE;
  if (allow_string && holds_string (node))
    json_array_add_string_element (stop, json_node_get_string (node));
  else if (JSON_NODE_HOLDS_ARRAY (node) && json_array_get_length (list = json_node_get_array (node)) <= MAX_STOP_SEQUENCES)
    {
      for (guint i = 0; i < json_array_get_length (list); i++)
        {
          if (!holds_string (json_array_get_element (list, i)))
            return refuse (error, "“%s” must be a list of at most %d strings", name, MAX_STOP_SEQUENCES);
          json_array_add_string_element (stop, json_array_get_string_element (list, i));
        }
    }
  else
    return refuse (error, "“%s” must be a list of at most %d strings", name, MAX_STOP_SEQUENCES);

  json_object_set_array_member (parameters, "stop", g_steal_pointer (&stop));
  return TRUE;
}

static gboolean
read_stream (JsonObject  *body,
             GError     **error)
{
  JsonNode *node = get_given (body, "stream");

  if (node != NULL && !holds_boolean (node))
    return refuse (error, "“stream” must be a boolean");

  return TRUE;
}

static gboolean
wants_stream (JsonObject *body)
{
  JsonNode *node = get_given (body, "stream");

  return node != NULL && json_node_get_boolean (node);
}

/* The text of a content given as a string or a list of text parts
 * (OpenAI's `{"type":"text","text":…}` and Anthropic's text blocks alike).
 * Returns %NULL if it is neither. */
static char *
dup_text_content (JsonNode *content)
{
  GString *text;
  JsonArray *parts;

  if (holds_string (content))
    return g_strdup (json_node_get_string (content));
  if (content == NULL || !JSON_NODE_HOLDS_ARRAY (content))
    return NULL;

  parts = json_node_get_array (content);
  text = g_string_new (NULL);
  for (guint i = 0; i < json_array_get_length (parts); i++)
    {
      JsonNode *part = json_array_get_element (parts, i);
      JsonObject *object = JSON_NODE_HOLDS_OBJECT (part) ? json_node_get_object (part) : NULL;

      if (object == NULL || !g_str_equal (string_member (object, "type"), "text") ||
          !holds_string (json_object_get_member (object, "text")))
        {
          g_string_free (text, TRUE);
          return NULL;
        }
      g_string_append (text, json_object_get_string_member (object, "text"));
    }

  return g_string_free (text, FALSE);
}

/* The text of a content given as a string or a list of blocks of any
 * type (text, images), of which the text blocks count; NULL if it is
 * neither. */
static char *
dup_block_text (JsonNode *content)
{
  g_autoptr(GString) text = g_string_new (NULL);
  JsonArray *blocks;

  if (holds_string (content))
    return g_strdup (json_node_get_string (content));
  if (!JSON_NODE_HOLDS_ARRAY (content))
    return NULL;

  blocks = json_node_get_array (content);
  for (guint i = 0; i < json_array_get_length (blocks); i++)
    {
      JsonNode *node = json_array_get_element (blocks, i);
      JsonObject *block = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;

      if (block == NULL || !holds_string (json_object_get_member (block, "type")))
        return NULL;
      if (g_str_equal (string_member (block, "type"), "text") && holds_string (json_object_get_member (block, "text")))
        g_string_append (text, json_object_get_string_member (block, "text"));
    }

  return g_string_free (g_steal_pointer (&text), FALSE);
}

static void
append_system (GString    **system,
               const char  *text)
{
  if (*system == NULL)
    *system = g_string_new (NULL);
  else
    g_string_append (*system, "\n\n");
  g_string_append (*system, text);
}

static JsonObject *
new_message (const char *role)
{
  JsonObject *message = json_object_new ();

  json_object_set_string_member (message, "role", role);
  return message;
}

/* Converts one tool to the OpenAI shape; NULL if it is not valid. */
typedef JsonObject *(*ToolReader) (JsonObject *tool);

/* `tools`, if given, in the OpenAI shape; @rule says what @read_tool
 * wants of each. */
static gboolean
read_tools (JsonObject  *body,
            ToolReader   read_tool,
            const char  *rule,
            JsonArray  **tools,
            GError     **error)
{
  JsonNode *node = get_given (body, "tools");
  JsonArray *list;

  if (node == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_ARRAY (node))
    return refuse (error, "“tools” must be a list");

  list = json_node_get_array (node);
  *tools = json_array_new ();
  for (guint i = 0; i < json_array_get_length (list); i++)
    {
      JsonNode *tool = json_array_get_element (list, i);
      JsonObject *converted = JSON_NODE_HOLDS_OBJECT (tool) ? read_tool (json_node_get_object (tool)) : NULL;

      if (converted == NULL)
        return refuse (error, "“tools[%u]” %s", i, rule);
      json_array_add_object_element (*tools, converted);
    }

  return TRUE;
}

/* ---- OpenAI ------------------------------------------------------------ */

/* A user or tool content: a string or a list of typed parts. */
static gboolean
openai_content_is_valid (JsonNode *content)
{
  JsonArray *parts;

  if (holds_string (content))
    return TRUE;
  if (content == NULL || !JSON_NODE_HOLDS_ARRAY (content))
    return FALSE;

  parts = json_node_get_array (content);
  for (guint i = 0; i < json_array_get_length (parts); i++)
    {
      JsonNode *part = json_array_get_element (parts, i);

      if (!JSON_NODE_HOLDS_OBJECT (part) || !holds_string (json_object_get_member (json_node_get_object (part), "type")))
        return FALSE;
    }

  return TRUE;
}

static gboolean
openai_tool_calls_are_valid (JsonNode *node)
{
  JsonArray *calls;

  if (!JSON_NODE_HOLDS_ARRAY (node))
    return FALSE;

  calls = json_node_get_array (node);
  for (guint i = 0; i < json_array_get_length (calls); i++)
    {
      JsonNode *call = json_array_get_element (calls, i);
      JsonObject *object = JSON_NODE_HOLDS_OBJECT (call) ? json_node_get_object (call) : NULL;
      JsonNode *function = object != NULL ? json_object_get_member (object, "function") : NULL;

      if (object == NULL || !holds_string (json_object_get_member (object, "id")) ||
          function == NULL || !JSON_NODE_HOLDS_OBJECT (function) ||
          !holds_string (json_object_get_member (json_node_get_object (function), "name")) ||
          !holds_string (json_object_get_member (json_node_get_object (function), "arguments")))
        return FALSE;
    }

  return TRUE;
}

static gboolean
openai_read_message (JsonNode   *node,
                     guint       index,
                     JsonArray  *messages,
                     GString   **system,
                     GError    **error)
{
  JsonObject *object = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
  JsonNode *role = object != NULL ? json_object_get_member (object, "role") : NULL;
  JsonNode *content = object != NULL ? get_given (object, "content") : NULL;
  JsonNode *tool_calls = object != NULL ? get_given (object, "tool_calls") : NULL;
  const char *name;
  JsonObject *message;

  if (!holds_string (role))
    return refuse (error, "“messages[%u]” must be an object with a string “role”", index);
  name = json_node_get_string (role);

  if (g_str_equal (name, "system") || g_str_equal (name, "developer"))
    {
      g_autofree char *text = dup_text_content (content);

      if (text == NULL)
        return refuse (error, "“messages[%u].content” must be a string or a list of text parts", index);
      append_system (system, text);
      return TRUE;
    }

  if (g_str_equal (name, "assistant"))
    {
      if (content != NULL && !openai_content_is_valid (content))
        return refuse (error, "“messages[%u].content” must be a string, a list of parts or null", index);
      if (tool_calls != NULL && !openai_tool_calls_are_valid (tool_calls))
        return refuse (error, "“messages[%u].tool_calls” must be a list of function calls with "
                              "“id”, “function.name” and “function.arguments”", index);
      if (content == NULL && tool_calls == NULL)
        return refuse (error, "“messages[%u]” needs “content” or “tool_calls”", index);
    }
  else if (g_str_equal (name, "user") || g_str_equal (name, "tool"))
    {
      if (!openai_content_is_valid (content))
        return refuse (error, "“messages[%u].content” must be a string or a list of parts", index);
      if (g_str_equal (name, "tool") && !holds_string (json_object_get_member (object, "tool_call_id")))
        return refuse (error, "“messages[%u].tool_call_id” is required and must be a string", index);
    }
  else
    return refuse (error, "“messages[%u].role” must be one of system, developer, user, assistant, tool", index);

  message = new_message (name);
  json_object_set_member (message, "content", content != NULL ? symfonic_json_node_deep_copy (content)
                                                              : json_node_new (JSON_NODE_NULL));
  if (tool_calls != NULL)
    json_object_set_member (message, "tool_calls", symfonic_json_node_deep_copy (tool_calls));
  if (json_object_has_member (object, "tool_call_id"))
    json_object_set_member (message, "tool_call_id", copy_member (object, "tool_call_id"));
  json_array_add_object_element (messages, message);

  return TRUE;
}

/* An OpenAI tool as it is, or NULL if it is not one. */
static JsonObject *
openai_tool (JsonObject *tool)
{
  JsonNode *function = json_object_get_member (tool, "function");
  JsonObject *function_object = function != NULL && JSON_NODE_HOLDS_OBJECT (function) ? json_node_get_object (function) : NULL;
  JsonNode *parameters = function_object != NULL ? get_given (function_object, "parameters") : NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(JsonNode) copy = NULL;

  if (!g_str_equal (string_member (tool, "type"), "function") ||
      function_object == NULL || !holds_string (json_object_get_member (function_object, "name")) ||
      (parameters != NULL && !JSON_NODE_HOLDS_OBJECT (parameters)))
    return NULL;

  node = json_node_new (JSON_NODE_OBJECT);
  json_node_set_object (node, tool);
  copy = symfonic_json_node_deep_copy (node);
  return json_node_dup_object (copy);
}

/* Readies the request for the route's source: the body as the client
 * sent it for a source of the client's API, translated for a source of
 * the other, nothing for a source that speaks none (an agent, which
 * takes the conversation). */
static gboolean
ready_for_source (JsonObject                   *object,
                  SymfonicProviderApi           api,
                  const SymfonicProviderTarget *target,
                  SymfonicInvocation           *invocation,
                  GError                      **error)
{
  g_autoptr(JsonObject) body = NULL;

  if (target->api == SYMFONIC_PROVIDER_API_NONE)
    return TRUE;
  if (target->api == api)
    body = json_object_ref (object);
  else if (target->api == SYMFONIC_PROVIDER_API_ANTHROPIC)
    body = symfonic_provider_translate_chat_to_anthropic (object, error);
  else
    body = symfonic_provider_translate_anthropic_to_chat (object, error);
  if (body == NULL)
    return FALSE;

  symfonic_invocation_set_provider_body (invocation, target->api, body);
  return TRUE;
}

static gboolean read_tool_choice (JsonObject  *body,
                                  GError     **error);

/* The members a translation reads are checked as it reads them; a
 * request passed on as it came is the provider's to judge, and an agent
 * takes none of them. */
static gboolean
check_translated_types (JsonObject                   *object,
                        const SymfonicProviderTarget *target,
                        GError                      **error)
{
  if (target->api != SYMFONIC_PROVIDER_API_ANTHROPIC)
    return TRUE;

  return check_type (object, "parallel_tool_calls", G_TYPE_BOOLEAN, "a boolean", error) &&
         check_type (object, "response_format", JSON_NODE_OBJECT, "an object", error) &&
         check_type (object, "user", G_TYPE_STRING, "a string", error) &&
         read_tool_choice (object, error);
}

/* `tool_choice`: auto, none, required, or an object of a type */
static gboolean
read_tool_choice (JsonObject  *body,
                  GError     **error)
{
  JsonNode *node = get_given (body, "tool_choice");

  if (node == NULL || (JSON_NODE_HOLDS_OBJECT (node) && holds_string (json_object_get_member (json_node_get_object (node), "type"))))
    return TRUE;
  if (holds_string (node) && (g_str_equal (json_node_get_string (node), "auto") ||
                              g_str_equal (json_node_get_string (node), "none") ||
                              g_str_equal (json_node_get_string (node), "required")))
    return TRUE;

  return refuse (error, "“tool_choice” must be auto, none, required or an object with a “type”");
}

/* A chat completions request, from the route's client or translated from
 * the Responses API: checked, made the invocation's conversation, and
 * readied for the route's source in that source's API. */
static gboolean
decode_chat (JsonObject                   *object,
             const SymfonicProviderTarget *target,
             SymfonicInvocation           *invocation,
             gboolean                     *stream,
             gboolean                     *include_usage,
             GError                      **error)
{
  g_autoptr(JsonObject) parameters = json_object_new ();
  g_autoptr(JsonArray) messages = json_array_new ();
  g_autoptr(JsonArray) tools = NULL;
  g_autoptr(GString) system = NULL;
  JsonNode *list;
  JsonNode *options;

  if (!read_model (object, parameters, error))
    return FALSE;
  list = json_object_get_member (object, "messages");
  if (list == NULL || !JSON_NODE_HOLDS_ARRAY (list) || json_array_get_length (json_node_get_array (list)) == 0)
    return refuse (error, "“messages” is required and must be a non-empty list");
  for (guint i = 0; i < json_array_get_length (json_node_get_array (list)); i++)
    if (!openai_read_message (json_array_get_element (json_node_get_array (list), i), i, messages, &system, error))
      return FALSE;
  if (json_array_get_length (messages) == 0)
    return refuse (error, "“messages” needs a message besides system prompts");

  if (!read_stream (object, error) ||
      !read_max_tokens (object, "max_tokens", FALSE, target, parameters, error) ||
      !read_max_tokens (object, "max_completion_tokens", FALSE, target, parameters, error) ||
      !read_n (object, error) ||
      !check_translated_types (object, target, error) ||
      !read_number (object, "temperature", 0, 2, parameters, error) ||
      !read_number (object, "top_p", 0, 1, parameters, error) ||
      !read_stop (object, "stop", TRUE, parameters, error) ||
      !read_tools (object, openai_tool, "must be a function with a string “name” and object “parameters”",
                   &tools, error))
    return FALSE;

  options = get_given (object, "stream_options");
  if (options != NULL &&
      (!JSON_NODE_HOLDS_OBJECT (options) ||
       (get_given (json_node_get_object (options), "include_usage") != NULL &&
        !holds_boolean (json_object_get_member (json_node_get_object (options), "include_usage")))))
    return refuse (error, "“stream_options” must be an object whose “include_usage” is a boolean");

  *stream = wants_stream (object);
  *include_usage = options != NULL &&
                   json_object_get_boolean_member_with_default (json_node_get_object (options), "include_usage", FALSE);

  if (!ready_for_source (object, SYMFONIC_PROVIDER_API_OPENAI_CHAT, target, invocation, error))
    return FALSE;
  symfonic_invocation_set_conversation (invocation, messages, system != NULL ? system->str : NULL, tools, parameters);
  return TRUE;
}

gboolean
symfonic_openai_request_decode (JsonNode                     *body,
                                const SymfonicProviderTarget *target,
                                SymfonicInvocation           *invocation,
                                SymfonicEncoderFlags         *flags,
                                GError                      **error)
{
  gboolean stream, include_usage;

  if (!JSON_NODE_HOLDS_OBJECT (body))
    return refuse (error, "The request body must be a JSON object");
  if (!decode_chat (json_node_get_object (body), target, invocation, &stream, &include_usage, error))
    return FALSE;

  *flags = stream ? SYMFONIC_ENCODER_FLAGS_NONE : SYMFONIC_ENCODER_ANSWER;
  if (include_usage)
    *flags |= SYMFONIC_ENCODER_INCLUDE_USAGE;
  return TRUE;
}

/* The Responses API's request is a chat request in other words: it is
 * translated, and then is one (no source speaks the Responses API). */
gboolean
symfonic_responses_request_decode (JsonNode                     *body,
                                   const SymfonicProviderTarget *target,
                                   SymfonicInvocation           *invocation,
                                   SymfonicEncoderFlags         *flags,
                                   GError                      **error)
{
  g_autoptr(JsonObject) chat = NULL;
  JsonObject *object;
  gboolean stream, include_usage;
  JsonNode *node;

  if (!JSON_NODE_HOLDS_OBJECT (body))
    return refuse (error, "The request body must be a JSON object");
  object = json_node_get_object (body);
  if (!read_stream (object, error) ||
      !check_type (object, "background", G_TYPE_BOOLEAN, "a boolean", error) ||
      !check_type (object, "store", G_TYPE_BOOLEAN, "a boolean", error))
    return FALSE;
  node = get_given (object, "max_output_tokens");
  if (node != NULL && (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64 ||
                       json_node_get_int (node) < 1))
    return refuse (error, "“%s” must be a positive integer", "max_output_tokens");
  if (node != NULL && target->max_tokens > 0 && (guint64) json_node_get_int (node) > target->max_tokens)
    return refuse (error, "“%s” may be at most %" G_GUINT64_FORMAT ", this route's limit", "max_output_tokens",
                   target->max_tokens);

  chat = symfonic_provider_translate_responses_to_chat (object, error);
  if (chat == NULL || !decode_chat (chat, target, invocation, &stream, &include_usage, error))
    return FALSE;

  *flags = SYMFONIC_ENCODER_RESPONSES | (wants_stream (object) ? 0 : SYMFONIC_ENCODER_ANSWER);
  if (json_object_get_boolean_member_with_default (object, "background", FALSE))
    *flags |= SYMFONIC_ENCODER_BACKGROUND;
  return TRUE;
}

/* ---- Anthropic --------------------------------------------------------- */

/* A `tool_use` block of an assistant message, as an OpenAI tool call. */
static gboolean
anthropic_read_tool_use (JsonObject  *block,
                         JsonArray   *tool_calls,
                         guint        index,
                         GError     **error)
{
  JsonNode *input = json_object_get_member (block, "input");
  JsonObject *call;
  JsonObject *function;
  GString *arguments;

  if (!holds_string (json_object_get_member (block, "id")) || !holds_string (json_object_get_member (block, "name")) ||
      input == NULL || !JSON_NODE_HOLDS_OBJECT (input))
    return refuse (error, "a “tool_use” block of “messages[%u]” needs a string “id” and “name” and an object “input”",
                   index);

  arguments = g_string_new (NULL);
  symfonic_json_append_node (arguments, input);
  function = json_object_new ();
  json_object_set_member (function, "name", copy_member (block, "name"));
  json_object_set_string_member (function, "arguments", arguments->str);
  g_string_free (arguments, TRUE);
  call = json_object_new ();
  json_object_set_member (call, "id", copy_member (block, "id"));
  json_object_set_string_member (call, "type", "function");
  json_object_set_object_member (call, "function", function);
  json_array_add_object_element (tool_calls, call);

  return TRUE;
}

/* A `tool_result` block of a user message, as an OpenAI tool message. */
static gboolean
anthropic_read_tool_result (JsonObject  *block,
                            JsonArray   *messages,
                            guint        index,
                            GError     **error)
{
  JsonNode *content = get_given (block, "content");
  g_autofree char *text = content != NULL ? dup_block_text (content) : g_strdup ("");
  JsonObject *message;

  if (!holds_string (json_object_get_member (block, "tool_use_id")) || text == NULL)
    return refuse (error, "a “tool_result” block of “messages[%u]” needs a string “tool_use_id” and a string or "
                          "blocks as its content", index);

  message = new_message ("tool");
  json_object_set_member (message, "tool_call_id", copy_member (block, "tool_use_id"));
  json_object_set_string_member (message, "content", text);
  json_array_add_object_element (messages, message);

  return TRUE;
}

/* The blocks the Messages API takes in each role's turns; tool_use,
 * tool_result and text are read above. */
static const char * const anthropic_user_blocks[] = {
  "image", "document", "search_result", NULL
};
static const char * const anthropic_assistant_blocks[] = {
  "thinking", "redacted_thinking", "server_tool_use", "web_search_tool_result", "web_fetch_tool_result",
  "code_execution_tool_result", "mcp_tool_use", "mcp_tool_result", "container_upload", NULL
};

static gboolean
anthropic_read_message (JsonNode   *node,
                        guint       index,
                        JsonArray  *messages,
                        GError    **error)
{
  JsonObject *object = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
  JsonNode *role = object != NULL ? json_object_get_member (object, "role") : NULL;
  JsonNode *content = object != NULL ? json_object_get_member (object, "content") : NULL;
  g_autoptr(JsonArray) parts = json_array_new ();
  g_autoptr(JsonArray) tool_calls = json_array_new ();
  gboolean assistant;
  JsonArray *blocks;
  JsonObject *message;

  if (!holds_string (role) ||
      !(g_str_equal (json_node_get_string (role), "user") || g_str_equal (json_node_get_string (role), "assistant")))
    return refuse (error, "“messages[%u].role” must be user or assistant", index);
  assistant = g_str_equal (json_node_get_string (role), "assistant");

  if (holds_string (content))
    {
      message = new_message (json_node_get_string (role));
      json_object_set_member (message, "content", symfonic_json_node_deep_copy (content));
      json_array_add_object_element (messages, message);
      return TRUE;
    }
  if (content == NULL || !JSON_NODE_HOLDS_ARRAY (content))
    return refuse (error, "“messages[%u].content” must be a string or a list of content blocks", index);

  blocks = json_node_get_array (content);
  for (guint i = 0; i < json_array_get_length (blocks); i++)
    {
      JsonNode *block_node = json_array_get_element (blocks, i);
      JsonObject *block = JSON_NODE_HOLDS_OBJECT (block_node) ? json_node_get_object (block_node) : NULL;
      const char *type = block != NULL ? string_member (block, "type") : "";

      if (g_str_equal (type, "text") && holds_string (json_object_get_member (block, "text")))
        {
          JsonObject *part = json_object_new ();

          json_object_set_string_member (part, "type", "text");
          json_object_set_member (part, "text", copy_member (block, "text"));
          json_array_add_object_element (parts, part);
        }
      else if (g_str_equal (type, "tool_use") && assistant)
        {
          if (!anthropic_read_tool_use (block, tool_calls, index, error))
            return FALSE;
        }
      else if (g_str_equal (type, "tool_result") && !assistant)
        {
          /* tool results answer the previous turn: they come first */
          if (!anthropic_read_tool_result (block, messages, index, error))
            return FALSE;
        }
      else if (!g_strv_contains (assistant ? anthropic_assistant_blocks : anthropic_user_blocks, type))
        return refuse (error, "“messages[%u].content[%u]” is not a block the Messages API takes from the %s",
                       index, i, assistant ? "assistant" : "user");
      /* the rest (images, documents, an assistant's earlier thinking and
       * server tools) goes to an Anthropic source as it came, is
       * translated for another or refused there; the conversation an
       * agent takes is the text */
    }

  if (json_array_get_length (parts) == 0 && json_array_get_length (tool_calls) == 0)
    return TRUE;

  message = new_message (json_node_get_string (role));
  if (json_array_get_length (parts) > 0)
    json_object_set_array_member (message, "content", g_steal_pointer (&parts));
  else
    json_object_set_null_member (message, "content");
  if (json_array_get_length (tool_calls) > 0)
    json_object_set_array_member (message, "tool_calls", g_steal_pointer (&tool_calls));
  json_array_add_object_element (messages, message);

  return TRUE;
}

/* An Anthropic tool in the OpenAI shape, or NULL if it is not one. */
static JsonObject *
anthropic_tool (JsonObject *tool)
{
  JsonNode *schema = json_object_get_member (tool, "input_schema");
  JsonNode *description = get_given (tool, "description");
  JsonObject *function;
  JsonObject *wrapper;

  if (!holds_string (json_object_get_member (tool, "name")) || schema == NULL || !JSON_NODE_HOLDS_OBJECT (schema) ||
      (description != NULL && !holds_string (description)))
    return NULL;

  function = json_object_new ();
  json_object_set_member (function, "name", copy_member (tool, "name"));
  if (description != NULL)
    json_object_set_member (function, "description", symfonic_json_node_deep_copy (description));
  json_object_set_member (function, "parameters", symfonic_json_node_deep_copy (schema));
  wrapper = json_object_new ();
  json_object_set_string_member (wrapper, "type", "function");
  json_object_set_object_member (wrapper, "function", function);

  return wrapper;
}

gboolean
symfonic_anthropic_request_decode (JsonNode                     *body,
                                   const SymfonicProviderTarget *target,
                                   SymfonicInvocation           *invocation,
                                   SymfonicEncoderFlags         *flags,
                                   GError                      **error)
{
  g_autoptr(JsonObject) parameters = json_object_new ();
  g_autoptr(JsonArray) messages = json_array_new ();
  g_autoptr(JsonArray) tools = NULL;
  g_autofree char *system = NULL;
  JsonObject *object;
  JsonNode *list;
  JsonNode *system_node;

  if (!JSON_NODE_HOLDS_OBJECT (body))
    return refuse (error, "The request body must be a JSON object");
  object = json_node_get_object (body);

  if (!read_model (object, parameters, error) ||
      !read_max_tokens (object, "max_tokens", TRUE, target, parameters, error))
    return FALSE;
  list = json_object_get_member (object, "messages");
  if (list == NULL || !JSON_NODE_HOLDS_ARRAY (list) || json_array_get_length (json_node_get_array (list)) == 0)
    return refuse (error, "“messages” is required and must be a non-empty list");
  for (guint i = 0; i < json_array_get_length (json_node_get_array (list)); i++)
    if (!anthropic_read_message (json_array_get_element (json_node_get_array (list), i), i, messages, error))
      return FALSE;
  if (json_array_get_length (messages) == 0)
    return refuse (error, "“messages” has no text or tool content");

  system_node = get_given (object, "system");
  if (system_node != NULL && (system = dup_text_content (system_node)) == NULL)
    return refuse (error, "“system” must be a string or a list of text blocks");

  if (!read_stream (object, error) ||
      !read_number (object, "temperature", 0, 1, parameters, error) ||
      !read_number (object, "top_p", 0, 1, parameters, error) ||
      !read_stop (object, "stop_sequences", FALSE, parameters, error) ||
      !read_tools (object, anthropic_tool, "needs a string “name” and an object “input_schema”", &tools, error) ||
      (target->api == SYMFONIC_PROVIDER_API_OPENAI_CHAT &&
       (!check_type (object, "metadata", JSON_NODE_OBJECT, "an object", error) ||
        !check_type (object, "thinking", JSON_NODE_OBJECT, "an object", error))) ||
      !ready_for_source (object, SYMFONIC_PROVIDER_API_ANTHROPIC, target, invocation, error))
    return FALSE;

  *flags = wants_stream (object) ? SYMFONIC_ENCODER_FLAGS_NONE : SYMFONIC_ENCODER_ANSWER;
  symfonic_invocation_set_conversation (invocation, messages, system, tools, parameters);
  return TRUE;
}
