/* symfonic-provider-translate.c: one model API's request in another's words
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-error.h"
#include "symfonic-json.h"
#include "symfonic-json-private.h"
#include "symfonic-provider-translate-private.h"

/* A provider route whose source speaks the other API sends that source
 * the client's request in its words. Every member is either translated
 * to what means the same there, or refused with a 400 that names it:
 * nothing the client asked for is dropped on the way. The one exception
 * is said in the README: earlier reasoning in a conversation's history
 * (Anthropic's thinking blocks, the Responses API's reasoning items),
 * which no other API takes back, is left out.
 *
 * The input was checked by its route's decoder: the members it requires
 * are there with their types. What that decoder does not check (the
 * members only a translation reads) is checked here. */

#define CHAT_API "OpenAI's chat completions API"
#define ANTHROPIC_API "Anthropic's Messages API"
/* OpenAI's chat completions take at most this many stop sequences */
#define MAX_CHAT_STOP 4

static gpointer
refuse (GError    **error,
        const char *format,
        ...) G_GNUC_PRINTF (2, 3);

static gpointer
refuse (GError    **error,
        const char *format,
        ...)
{
  va_list args;

  va_start (args, format);
  g_propagate_error (error, g_error_new_valist (SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST, format, args));
  va_end (args);

  return NULL;
}

/* A member that has no counterpart in @api. */
static gpointer
refuse_member (GError    **error,
               const char *member,
               const char *api)
{
  return refuse (error, "“%s” cannot be passed on: this route's source speaks %s, which has no such option",
                 member, api);
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

/* A member that is absent or null is not given. */
static JsonNode *
get_given (JsonObject *object,
           const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;

  return node != NULL && !JSON_NODE_HOLDS_NULL (node) ? node : NULL;
}

static const char *
get_string (JsonObject *object,
            const char *name)
{
  JsonNode *node = get_given (object, name);

  return holds_string (node) ? json_node_get_string (node) : NULL;
}

static JsonObject *
get_object (JsonObject *object,
            const char *name)
{
  JsonNode *node = get_given (object, name);

  return node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

static JsonObject *
element_object (JsonArray *array,
                guint      i)
{
  JsonNode *node = json_array_get_element (array, i);

  return JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

static void
copy_member (JsonObject *to,
             const char *to_name,
             JsonObject *from,
             const char *from_name)
{
  json_object_set_member (to, to_name, symfonic_json_node_deep_copy (json_object_get_member (from, from_name)));
}

static JsonObject *
text_part (const char *type,
           const char *text)
{
  JsonObject *part = json_object_new ();

  json_object_set_string_member (part, "type", type);
  json_object_set_string_member (part, "text", text);
  return part;
}

/* Whether a member given with this value asks for nothing: false, 0, an
 * empty list or object. */
static gboolean
is_default (JsonNode *node)
{
  if (node == NULL)
    return TRUE;
  if (holds_boolean (node))
    return !json_node_get_boolean (node);
  if (holds_number (node))
    return json_node_get_double (node) == 0;
  if (JSON_NODE_HOLDS_OBJECT (node))
    return json_object_get_size (json_node_get_object (node)) == 0;
  if (JSON_NODE_HOLDS_ARRAY (node))
    return json_array_get_length (json_node_get_array (node)) == 0;

  return FALSE;
}

/* `data:MEDIA;base64,DATA`: the media type and the data, or FALSE. */
static gboolean
parse_data_url (const char  *url,
                char       **media_type,
                const char **data)
{
  const char *marker;

  if (!g_str_has_prefix (url, "data:") || (marker = strstr (url, ";base64,")) == NULL || marker == url + 5)
    return FALSE;

  *media_type = g_strndup (url + 5, marker - (url + 5));
  *data = marker + strlen (";base64,");
  return TRUE;
}

static gboolean
is_web_url (const char *url)
{
  return g_str_has_prefix (url, "https://") || g_str_has_prefix (url, "http://");
}

/* Text given as a string or as a list of text parts/blocks (`type` @type
 * with a string `text`), joined; NULL, with @error set naming @member, if
 * it is neither. Blocks with `cache_control` are refused: it has no
 * counterpart in OpenAI's API. */
static char *
dup_text (JsonNode    *content,
          const char  *type,
          const char  *member,
          GError     **error)
{
  g_autoptr(GString) text = g_string_new (NULL);
  JsonArray *parts;

  if (holds_string (content))
    return g_strdup (json_node_get_string (content));
  if (content == NULL || !JSON_NODE_HOLDS_ARRAY (content))
    return refuse (error, "“%s” must be text here", member);

  parts = json_node_get_array (content);
  for (guint i = 0; i < json_array_get_length (parts); i++)
    {
      JsonObject *part = element_object (parts, i);

      if (part == NULL || g_strcmp0 (get_string (part, "type"), type) != 0 || get_string (part, "text") == NULL)
        return refuse (error, "“%s[%u]” must be a text part here", member, i);
      if (get_given (part, "cache_control") != NULL)
        return refuse (error, "“%s[%u].cache_control” cannot be passed on: this route's source speaks %s, "
                              "which caches prompts by itself", member, i, CHAT_API);
      g_string_append (text, get_string (part, "text"));
    }

  return g_string_free (g_steal_pointer (&text), FALSE);
}

/* Checks that every member of @object is one of @known, so that a member
 * this translation does not know is refused rather than dropped. */
static gboolean
only_known (JsonObject         *object,
            const char * const *known,
            const char         *where,
            const char         *api,
            GError            **error)
{
  g_autoptr(GList) members = json_object_get_members (object);

  for (GList *l = members; l != NULL; l = l->next)
    {
      if (!g_strv_contains (known, l->data) && get_given (object, l->data) != NULL)
        {
          g_autofree char *name = where != NULL ? g_strdup_printf ("%s.%s", where, (char *) l->data) : g_strdup (l->data);

          refuse_member (error, name, api);
          return FALSE;
        }
    }

  return TRUE;
}

/* ---- OpenAI chat → Anthropic messages ---------------------------------- */

/* An image_url part as an Anthropic image block. */
static JsonObject *
chat_image_block (JsonObject  *part,
                  const char  *member,
                  GError     **error)
{
  JsonObject *image = get_object (part, "image_url");
  const char *url = get_string (image, "url");
  const char *detail = get_string (image, "detail");
  g_autofree char *media_type = NULL;
  const char *data;
  JsonObject *source = json_object_new ();
  JsonObject *block;

  if (url == NULL)
    {
      json_object_unref (source);
      return refuse (error, "“%s.image_url.url” is required", member);
    }
  if (detail != NULL && strcmp (detail, "auto") != 0)
    {
      g_autofree char *name = g_strdup_printf ("%s.image_url.detail", member);

      json_object_unref (source);
      return refuse_member (error, name, ANTHROPIC_API);
    }
  if (parse_data_url (url, &media_type, &data))
    {
      json_object_set_string_member (source, "type", "base64");
      json_object_set_string_member (source, "media_type", media_type);
      json_object_set_string_member (source, "data", data);
    }
  else if (is_web_url (url))
    {
      json_object_set_string_member (source, "type", "url");
      json_object_set_string_member (source, "url", url);
    }
  else
    {
      json_object_unref (source);
      return refuse (error, "“%s.image_url.url” must be a data: or http(s) URL", member);
    }

  block = json_object_new ();
  json_object_set_string_member (block, "type", "image");
  json_object_set_object_member (block, "source", source);
  return block;
}

/* A file part (a PDF as a data: URL) as an Anthropic document block. */
static JsonObject *
chat_document_block (JsonObject  *part,
                     const char  *member,
                     GError     **error)
{
  JsonObject *file = get_object (part, "file");
  const char *file_data = get_string (file, "file_data");
  g_autofree char *media_type = NULL;
  const char *data;
  JsonObject *source;
  JsonObject *block;

  if (file_data == NULL || !parse_data_url (file_data, &media_type, &data))
    return refuse (error, "“%s.file” must carry its “file_data” as a data: URL: this route's source cannot "
                          "fetch a stored file", member);

  source = json_object_new ();
  json_object_set_string_member (source, "type", "base64");
  json_object_set_string_member (source, "media_type", media_type);
  json_object_set_string_member (source, "data", data);
  block = json_object_new ();
  json_object_set_string_member (block, "type", "document");
  json_object_set_object_member (block, "source", source);
  if (get_string (file, "filename") != NULL)
    json_object_set_string_member (block, "title", get_string (file, "filename"));
  return block;
}

/* A user or assistant content as Anthropic blocks, appended to @blocks. */
static gboolean
chat_content_blocks (JsonNode    *content,
                     JsonArray   *blocks,
                     guint        index,
                     GError     **error)
{
  JsonArray *parts;

  if (content == NULL)
    return TRUE;
  if (holds_string (content))
    {
      if (*json_node_get_string (content) != '\0')
        json_array_add_object_element (blocks, text_part ("text", json_node_get_string (content)));
      return TRUE;
    }

  parts = json_node_get_array (content);
  for (guint i = 0; i < json_array_get_length (parts); i++)
    {
      JsonObject *part = element_object (parts, i);
      const char *type = get_string (part, "type");
      g_autofree char *member = g_strdup_printf ("messages[%u].content[%u]", index, i);
      JsonObject *block = NULL;

      if (g_strcmp0 (type, "text") == 0 && get_string (part, "text") != NULL)
        block = text_part ("text", get_string (part, "text"));
      else if (g_strcmp0 (type, "image_url") == 0)
        block = chat_image_block (part, member, error);
      else if (g_strcmp0 (type, "file") == 0)
        block = chat_document_block (part, member, error);
      else
        return refuse_member (error, member, ANTHROPIC_API) != NULL;
      if (block == NULL)
        return FALSE;
      json_array_add_object_element (blocks, block);
    }

  return TRUE;
}

static gboolean
chat_tool_uses (JsonNode   *tool_calls,
                JsonArray  *blocks,
                guint       index,
                GError    **error)
{
  JsonArray *calls = tool_calls != NULL ? json_node_get_array (tool_calls) : NULL;

  for (guint i = 0; calls != NULL && i < json_array_get_length (calls); i++)
    {
      JsonObject *call = element_object (calls, i);
      JsonObject *function = get_object (call, "function");
      const char *arguments = get_string (function, "arguments");
      g_autoptr(JsonNode) input = symfonic_json_parse (arguments, strlen (arguments), SYMFONIC_JSON_MAX_DEPTH, NULL);
      JsonObject *block;

      /* an empty text is the call of a tool without parameters */
      if (input == NULL && *arguments == '\0')
        {
          g_autoptr(JsonObject) empty = json_object_new ();

          input = json_node_init_object (json_node_alloc (), empty);
        }
      if (input == NULL || !JSON_NODE_HOLDS_OBJECT (input))
        return refuse (error, "“messages[%u].tool_calls[%u].function.arguments” must be a JSON object to pass on",
                       index, i) != NULL;
      block = json_object_new ();
      json_object_set_string_member (block, "type", "tool_use");
      copy_member (block, "id", call, "id");
      copy_member (block, "name", function, "name");
      json_object_set_member (block, "input", g_steal_pointer (&input));
      json_array_add_object_element (blocks, block);
    }

  return TRUE;
}

/* Appends a turn, merged into the last when it has the same role, as
 * the API wants turns to alternate. */
static void
add_turn (JsonArray  *messages,
          const char *role,
          JsonArray  *blocks)
{
  guint n = json_array_get_length (messages);
  JsonObject *last = n > 0 ? element_object (messages, n - 1) : NULL;
  JsonObject *turn;

  if (json_array_get_length (blocks) == 0)
    return;
  if (last != NULL && g_strcmp0 (get_string (last, "role"), role) == 0)
    {
      JsonArray *merged = json_object_get_array_member (last, "content");

      for (guint i = 0; i < json_array_get_length (blocks); i++)
        json_array_add_element (merged, symfonic_json_node_deep_copy (json_array_get_element (blocks, i)));
      return;
    }

  turn = json_object_new ();
  json_object_set_string_member (turn, "role", role);
  json_object_set_array_member (turn, "content", json_array_ref (blocks));
  json_array_add_object_element (messages, turn);
}

static gboolean
chat_messages (JsonArray   *list,
               JsonArray   *messages,
               GString    **system,
               GError     **error)
{
  static const char * const known[] = { "role", "content", "tool_calls", "tool_call_id", "refusal", NULL };

  for (guint i = 0; i < json_array_get_length (list); i++)
    {
      JsonObject *message = element_object (list, i);
      const char *role = get_string (message, "role");
      g_autoptr(JsonArray) blocks = json_array_new ();
      g_autofree char *where = g_strdup_printf ("messages[%u]", i);

      if (!only_known (message, known, where, ANTHROPIC_API, error))
        return FALSE;
      if (g_strcmp0 (role, "system") == 0 || g_strcmp0 (role, "developer") == 0)
        {
          g_autofree char *member = g_strdup_printf ("messages[%u].content", i);
          g_autofree char *text = dup_text (get_given (message, "content"), "text", member, error);

          if (text == NULL)
            return FALSE;
          if (*system == NULL)
            *system = g_string_new (text);
          else
            g_string_append_printf (*system, "\n\n%s", text);
          continue;
        }
      if (g_strcmp0 (role, "tool") == 0)
        {
          g_autofree char *member = g_strdup_printf ("messages[%u].content", i);
          g_autofree char *text = dup_text (get_given (message, "content"), "text", member, error);
          JsonObject *result;

          if (text == NULL)
            return FALSE;
          result = json_object_new ();
          json_object_set_string_member (result, "type", "tool_result");
          copy_member (result, "tool_use_id", message, "tool_call_id");
          json_object_set_string_member (result, "content", text);
          json_array_add_object_element (blocks, result);
          add_turn (messages, "user", blocks);
          continue;
        }
      if (get_given (message, "refusal") != NULL)
        return refuse_member (error, "refusal", ANTHROPIC_API) != NULL;
      if (!chat_content_blocks (get_given (message, "content"), blocks, i, error) ||
          !chat_tool_uses (get_given (message, "tool_calls"), blocks, i, error))
        return FALSE;
      add_turn (messages, g_strcmp0 (role, "assistant") == 0 ? "assistant" : "user", blocks);
    }

  return TRUE;
}

static JsonArray *
chat_tools (JsonNode  *node,
            GError   **error)
{
  g_autoptr(JsonArray) tools = json_array_new ();
  JsonArray *list = json_node_get_array (node);

  for (guint i = 0; i < json_array_get_length (list); i++)
    {
      JsonObject *function = get_object (element_object (list, i), "function");
      JsonObject *parameters = get_object (function, "parameters");
      JsonNode *strict = get_given (function, "strict");
      JsonObject *tool;

      if (strict != NULL && !is_default (strict))
        {
          g_autofree char *member = g_strdup_printf ("tools[%u].function.strict", i);

          return refuse_member (error, member, ANTHROPIC_API);
        }
      tool = json_object_new ();
      copy_member (tool, "name", function, "name");
      if (get_string (function, "description") != NULL)
        copy_member (tool, "description", function, "description");
      if (parameters != NULL)
        copy_member (tool, "input_schema", function, "parameters");
      else
        {
          JsonObject *schema = json_object_new ();

          json_object_set_string_member (schema, "type", "object");
          json_object_set_object_member (tool, "input_schema", schema);
        }
      json_array_add_object_element (tools, tool);
    }

  return g_steal_pointer (&tools);
}

/* OpenAI's tool_choice, and parallel_tool_calls, as Anthropic's one
 * tool_choice object; NULL with nothing to say. */
static JsonObject *
chat_tool_choice (JsonObject  *chat,
                  gboolean    *failed,
                  GError     **error)
{
  JsonNode *node = get_given (chat, "tool_choice");
  JsonNode *parallel = get_given (chat, "parallel_tool_calls");
  JsonObject *choice = json_object_new ();
  gboolean none = FALSE;

  *failed = FALSE;
  if (node == NULL || (holds_string (node) && g_str_equal (json_node_get_string (node), "auto")))
    json_object_set_string_member (choice, "type", "auto");
  else if (holds_string (node) && g_str_equal (json_node_get_string (node), "required"))
    json_object_set_string_member (choice, "type", "any");
  else if (holds_string (node) && g_str_equal (json_node_get_string (node), "none"))
    {
      json_object_set_string_member (choice, "type", "none");
      none = TRUE;
    }
  else if (JSON_NODE_HOLDS_OBJECT (node) && g_strcmp0 (get_string (json_node_get_object (node), "type"), "function") == 0 &&
           get_string (get_object (json_node_get_object (node), "function"), "name") != NULL)
    {
      json_object_set_string_member (choice, "type", "tool");
      json_object_set_string_member (choice, "name", get_string (get_object (json_node_get_object (node), "function"), "name"));
    }
  else
    {
      json_object_unref (choice);
      *failed = TRUE;
      return refuse (error, "“tool_choice” must be auto, none, required or a function to pass on");
    }

  if (parallel != NULL && !holds_boolean (parallel))
    {
      json_object_unref (choice);
      *failed = TRUE;
      return refuse (error, "“parallel_tool_calls” must be a boolean");
    }
  if (parallel != NULL && !json_node_get_boolean (parallel) && !none)
    json_object_set_boolean_member (choice, "disable_parallel_tool_use", TRUE);

  /* the default, which need not be said */
  if (node == NULL && json_object_get_size (choice) == 1)
    {
      json_object_unref (choice);
      return NULL;
    }

  return choice;
}

JsonObject *
symfonic_provider_translate_chat_to_anthropic (JsonObject  *chat,
                                               GError     **error)
{
  /* what this translation knows; the sampling options Anthropic lacks are
   * accepted only with the value that asks for nothing */
  static const char * const known[] = {
    "model", "messages", "max_tokens", "max_completion_tokens", "temperature", "top_p", "stop", "tools",
    "tool_choice", "parallel_tool_calls", "user", "n", "response_format", "stream", "stream_options",
    "logprobs", "frequency_penalty", "presence_penalty", "logit_bias", "metadata", "store", "modalities", NULL
  };
  static const char * const asking_nothing[] = {
    "logprobs", "frequency_penalty", "presence_penalty", "logit_bias", "metadata", "store",
  };
  g_autoptr(JsonObject) out = json_object_new ();
  g_autoptr(JsonArray) messages = json_array_new ();
  g_autoptr(GString) system = NULL;
  JsonNode *node;
  JsonObject *choice;
  gboolean failed;

  if (!only_known (chat, known, NULL, ANTHROPIC_API, error))
    return NULL;
  for (guint i = 0; i < G_N_ELEMENTS (asking_nothing); i++)
    {
      if (!is_default (get_given (chat, asking_nothing[i])))
        return refuse_member (error, asking_nothing[i], ANTHROPIC_API);
    }
  node = get_given (chat, "modalities");
  if (node != NULL && !(JSON_NODE_HOLDS_ARRAY (node) && json_array_get_length (json_node_get_array (node)) == 1 &&
                        g_strcmp0 (json_array_get_string_element (json_node_get_array (node), 0), "text") == 0))
    return refuse_member (error, "modalities", ANTHROPIC_API);
  node = get_given (chat, "response_format");
  if (node != NULL && g_strcmp0 (get_string (JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL, "type"),
                                 "text") != 0)
    return refuse (error, "“response_format” cannot be passed on: this route's source speaks %s, which has no "
                          "structured output; ask for it with a forced tool call", ANTHROPIC_API);

  copy_member (out, "model", chat, "model");
  if (!chat_messages (json_object_get_array_member (chat, "messages"), messages, &system, error))
    return NULL;
  if (system != NULL)
    json_object_set_string_member (out, "system", system->str);
  json_object_set_array_member (out, "messages", g_steal_pointer (&messages));

  if ((node = get_given (chat, "max_completion_tokens")) != NULL || (node = get_given (chat, "max_tokens")) != NULL)
    json_object_set_member (out, "max_tokens", symfonic_json_node_deep_copy (node));
  node = get_given (chat, "temperature");
  if (node != NULL && json_node_get_double (node) > 1)
    return refuse (error, "“temperature” must be at most 1 to pass on: this route's source speaks %s",
                   ANTHROPIC_API);
  if (node != NULL)
    copy_member (out, "temperature", chat, "temperature");
  if (get_given (chat, "top_p") != NULL)
    copy_member (out, "top_p", chat, "top_p");
  if ((node = get_given (chat, "stop")) != NULL)
    {
      JsonArray *stop = json_array_new ();

      if (holds_string (node))
        json_array_add_string_element (stop, json_node_get_string (node));
      else
        for (guint i = 0; i < json_array_get_length (json_node_get_array (node)); i++)
          json_array_add_string_element (stop, json_array_get_string_element (json_node_get_array (node), i));
      json_object_set_array_member (out, "stop_sequences", stop);
    }
  if ((node = get_given (chat, "tools")) != NULL && json_array_get_length (json_node_get_array (node)) > 0)
    {
      JsonArray *tools = chat_tools (node, error);

      if (tools == NULL)
        return NULL;
      json_object_set_array_member (out, "tools", tools);
    }
  choice = chat_tool_choice (chat, &failed, error);
  if (failed)
    return NULL;
  if (choice != NULL)
    json_object_set_object_member (out, "tool_choice", choice);
  if (get_string (chat, "user") != NULL)
    {
      JsonObject *metadata = json_object_new ();

      copy_member (metadata, "user_id", chat, "user");
      json_object_set_object_member (out, "metadata", metadata);
    }

  return g_steal_pointer (&out);
}

/* ---- Anthropic messages → OpenAI chat ---------------------------------- */

static gboolean
refuse_cache_control (JsonObject  *block,
                      const char  *member,
                      GError     **error)
{
  g_autofree char *name = NULL;

  if (get_given (block, "cache_control") == NULL)
    return TRUE;
  name = g_strdup_printf ("%s.cache_control", member);
  refuse (error, "“%s” cannot be passed on: this route's source speaks %s, which caches prompts by itself",
          name, CHAT_API);
  return FALSE;
}

/* An image or PDF block as an OpenAI content part. */
static JsonObject *
anthropic_media_part (JsonObject  *block,
                      gboolean     image,
                      const char  *member,
                      GError     **error)
{
  JsonObject *source = get_object (block, "source");
  const char *type = get_string (source, "type");
  const char *media_type = get_string (source, "media_type");
  JsonObject *part = json_object_new ();
  JsonObject *inner = json_object_new ();
  g_autofree char *url = NULL;

  if (g_strcmp0 (type, "base64") == 0 && media_type != NULL && get_string (source, "data") != NULL)
    url = g_strdup_printf ("data:%s;base64,%s", media_type, get_string (source, "data"));
  else if (image && g_strcmp0 (type, "url") == 0 && get_string (source, "url") != NULL)
    url = g_strdup (get_string (source, "url"));
  if (url == NULL || (!image && g_strcmp0 (media_type, "application/pdf") != 0))
    {
      json_object_unref (part);
      json_object_unref (inner);
      return refuse (error, "“%s.source” cannot be passed on: this route's source speaks %s, which takes %s",
                     member, CHAT_API,
                     image ? "images as base64 data or a URL" : "documents as base64 PDF data");
    }

  if (image)
    {
      json_object_set_string_member (part, "type", "image_url");
      json_object_set_string_member (inner, "url", url);
      json_object_set_object_member (part, "image_url", inner);
    }
  else
    {
      json_object_set_string_member (part, "type", "file");
      json_object_set_string_member (inner, "filename", get_string (block, "title") != NULL ? get_string (block, "title")
                                                                                             : "document.pdf");
      json_object_set_string_member (inner, "file_data", url);
      json_object_set_object_member (part, "file", inner);
    }

  return part;
}

static JsonObject *
new_message (const char *role)
{
  JsonObject *message = json_object_new ();

  json_object_set_string_member (message, "role", role);
  return message;
}

static gboolean
anthropic_tool_result (JsonObject  *block,
                       JsonArray   *messages,
                       const char  *member,
                       GError     **error)
{
  g_autofree char *content_member = g_strdup_printf ("%s.content", member);
  JsonNode *content = get_given (block, "content");
  g_autofree char *text = content != NULL ? dup_text (content, "text", content_member, error) : g_strdup ("");
  JsonObject *message;

  if (text == NULL)
    return FALSE;
  if (!is_default (get_given (block, "is_error")))
    {
      g_autofree char *name = g_strdup_printf ("%s.is_error", member);

      return refuse_member (error, name, CHAT_API) != NULL;
    }

  message = new_message ("tool");
  copy_member (message, "tool_call_id", block, "tool_use_id");
  json_object_set_string_member (message, "content", text);
  json_array_add_object_element (messages, message);
  return TRUE;
}

static gboolean
anthropic_message (JsonObject  *message,
                   guint        index,
                   JsonArray   *messages,
                   GError     **error)
{
  const char *role = get_string (message, "role");
  gboolean assistant = g_strcmp0 (role, "assistant") == 0;
  JsonNode *content = get_given (message, "content");
  g_autoptr(JsonArray) parts = json_array_new ();
  g_autoptr(JsonArray) tool_calls = json_array_new ();
  gboolean all_text = TRUE;
  JsonArray *blocks;
  JsonObject *out;

  if (holds_string (content))
    {
      out = new_message (role);
      copy_member (out, "content", message, "content");
      json_array_add_object_element (messages, out);
      return TRUE;
    }

  blocks = json_node_get_array (content);
  for (guint i = 0; i < json_array_get_length (blocks); i++)
    {
      JsonObject *block = element_object (blocks, i);
      const char *type = get_string (block, "type");
      g_autofree char *member = g_strdup_printf ("messages[%u].content[%u]", index, i);
      JsonObject *part = NULL;

      if (!refuse_cache_control (block, member, error))
        return FALSE;
      if (g_strcmp0 (type, "text") == 0)
        part = text_part ("text", get_string (block, "text"));
      else if (g_strcmp0 (type, "image") == 0 && !assistant)
        part = anthropic_media_part (block, TRUE, member, error);
      else if (g_strcmp0 (type, "document") == 0 && !assistant)
        part = anthropic_media_part (block, FALSE, member, error);
      else if (g_strcmp0 (type, "tool_use") == 0 && assistant)
        {
          g_autoptr(GString) arguments = g_string_new (NULL);
          JsonObject *call = json_object_new ();
          JsonObject *function = json_object_new ();

          symfonic_json_append_node (arguments, json_object_get_member (block, "input"));
          copy_member (function, "name", block, "name");
          json_object_set_string_member (function, "arguments", arguments->str);
          copy_member (call, "id", block, "id");
          json_object_set_string_member (call, "type", "function");
          json_object_set_object_member (call, "function", function);
          json_array_add_object_element (tool_calls, call);
          continue;
        }
      else if (g_strcmp0 (type, "tool_result") == 0 && !assistant)
        {
          /* a tool's answer is a message of its own, which comes first */
          if (!anthropic_tool_result (block, messages, member, error))
            return FALSE;
          continue;
        }
      else if ((g_strcmp0 (type, "thinking") == 0 || g_strcmp0 (type, "redacted_thinking") == 0) && assistant)
        continue;
      else
        return refuse_member (error, member, CHAT_API) != NULL;

      if (part == NULL)
        return FALSE;
      all_text &= g_str_equal (get_string (part, "type"), "text");
      json_array_add_object_element (parts, part);
    }

  if (json_array_get_length (parts) == 0 && json_array_get_length (tool_calls) == 0)
    return TRUE;
  out = new_message (role);
  if (json_array_get_length (parts) == 0)
    json_object_set_null_member (out, "content");
  else if (assistant && all_text)
    {
      /* an assistant's content is text: its parts joined */
      g_autoptr(GString) text = g_string_new (NULL);

      for (guint i = 0; i < json_array_get_length (parts); i++)
        g_string_append (text, get_string (element_object (parts, i), "text"));
      json_object_set_string_member (out, "content", text->str);
    }
  else
    json_object_set_array_member (out, "content", g_steal_pointer (&parts));
  if (json_array_get_length (tool_calls) > 0)
    json_object_set_array_member (out, "tool_calls", g_steal_pointer (&tool_calls));
  json_array_add_object_element (messages, out);

  return TRUE;
}

static JsonArray *
anthropic_tools (JsonNode  *node,
                 GError   **error)
{
  static const char * const known[] = { "name", "description", "input_schema", "type", NULL };
  g_autoptr(JsonArray) tools = json_array_new ();
  JsonArray *list = json_node_get_array (node);

  for (guint i = 0; i < json_array_get_length (list); i++)
    {
      JsonObject *tool = element_object (list, i);
      const char *type = get_string (tool, "type");
      g_autofree char *where = g_strdup_printf ("tools[%u]", i);
      JsonObject *function;
      JsonObject *wrapper;

      if (!refuse_cache_control (tool, where, error))
        return NULL;
      /* server tools (web search, code execution) run at Anthropic */
      if (type != NULL && strcmp (type, "custom") != 0)
        return refuse_member (error, where, CHAT_API);
      if (!only_known (tool, known, where, CHAT_API, error))
        return NULL;
      function = json_object_new ();
      copy_member (function, "name", tool, "name");
      if (get_string (tool, "description") != NULL)
        copy_member (function, "description", tool, "description");
      copy_member (function, "parameters", tool, "input_schema");
      wrapper = json_object_new ();
      json_object_set_string_member (wrapper, "type", "function");
      json_object_set_object_member (wrapper, "function", function);
      json_array_add_object_element (tools, wrapper);
    }

  return g_steal_pointer (&tools);
}

static gboolean
anthropic_tool_choice (JsonObject  *anthropic,
                       JsonObject  *out,
                       GError     **error)
{
  JsonObject *choice = get_object (anthropic, "tool_choice");
  const char *type = get_string (choice, "type");

  if (get_given (anthropic, "tool_choice") == NULL)
    return TRUE;
  if (g_strcmp0 (type, "auto") == 0)
    json_object_set_string_member (out, "tool_choice", "auto");
  else if (g_strcmp0 (type, "any") == 0)
    json_object_set_string_member (out, "tool_choice", "required");
  else if (g_strcmp0 (type, "none") == 0)
    json_object_set_string_member (out, "tool_choice", "none");
  else if (g_strcmp0 (type, "tool") == 0 && get_string (choice, "name") != NULL)
    {
      JsonObject *forced = json_object_new ();
      JsonObject *function = json_object_new ();

      copy_member (function, "name", choice, "name");
      json_object_set_string_member (forced, "type", "function");
      json_object_set_object_member (forced, "function", function);
      json_object_set_object_member (out, "tool_choice", forced);
    }
  else
    return refuse (error, "“tool_choice” must be auto, any, tool or none") != NULL;

  if (!is_default (get_given (choice, "disable_parallel_tool_use")))
    json_object_set_boolean_member (out, "parallel_tool_calls", FALSE);
  return TRUE;
}

JsonObject *
symfonic_provider_translate_anthropic_to_chat (JsonObject  *anthropic,
                                               GError     **error)
{
  static const char * const known[] = {
    "model", "messages", "max_tokens", "system", "temperature", "top_p", "stop_sequences", "tools",
    "tool_choice", "metadata", "thinking", "stream", NULL
  };
  g_autoptr(JsonObject) out = json_object_new ();
  g_autoptr(JsonArray) messages = json_array_new ();
  JsonArray *list = json_object_get_array_member (anthropic, "messages");
  JsonObject *metadata = get_object (anthropic, "metadata");
  JsonObject *thinking = get_object (anthropic, "thinking");
  JsonNode *node;

  if (!only_known (anthropic, known, NULL, CHAT_API, error))
    return NULL;
  if (thinking != NULL && g_strcmp0 (get_string (thinking, "type"), "disabled") != 0)
    return refuse (error, "“thinking” cannot be passed on: this route's source speaks %s, whose models choose "
                          "their own reasoning", CHAT_API);
  if (metadata != NULL)
    {
      static const char * const metadata_known[] = { "user_id", NULL };

      if (!only_known (metadata, metadata_known, "metadata", CHAT_API, error))
        return NULL;
    }

  copy_member (out, "model", anthropic, "model");
  if ((node = get_given (anthropic, "system")) != NULL)
    {
      g_autofree char *text = dup_text (node, "text", "system", error);
      JsonObject *message;

      if (text == NULL)
        return NULL;
      message = new_message ("system");
      json_object_set_string_member (message, "content", text);
      json_array_add_object_element (messages, message);
    }
  for (guint i = 0; i < json_array_get_length (list); i++)
    if (!anthropic_message (element_object (list, i), i, messages, error))
      return NULL;
  json_object_set_array_member (out, "messages", g_steal_pointer (&messages));

  copy_member (out, "max_tokens", anthropic, "max_tokens");
  if (get_given (anthropic, "temperature") != NULL)
    copy_member (out, "temperature", anthropic, "temperature");
  if (get_given (anthropic, "top_p") != NULL)
    copy_member (out, "top_p", anthropic, "top_p");
  if ((node = get_given (anthropic, "stop_sequences")) != NULL && json_array_get_length (json_node_get_array (node)) > 0)
    {
      if (json_array_get_length (json_node_get_array (node)) > MAX_CHAT_STOP)
        return refuse (error, "“stop_sequences” may hold at most %d sequences to pass on: this route's source "
                              "speaks %s", MAX_CHAT_STOP, CHAT_API);
      copy_member (out, "stop", anthropic, "stop_sequences");
    }
  if ((node = get_given (anthropic, "tools")) != NULL && json_array_get_length (json_node_get_array (node)) > 0)
    {
      JsonArray *tools = anthropic_tools (node, error);

      if (tools == NULL)
        return NULL;
      json_object_set_array_member (out, "tools", tools);
    }
  if (!anthropic_tool_choice (anthropic, out, error))
    return NULL;
  if (get_string (metadata, "user_id") != NULL)
    copy_member (out, "user", metadata, "user_id");

  return g_steal_pointer (&out);
}

/* ---- OpenAI Responses → OpenAI chat ------------------------------------ */

#define RESPONSES_TO_CHAT "OpenAI's chat completions API"

/* The content parts of an input message as chat content parts. */
static JsonNode *
responses_content (JsonNode    *content,
                   const char  *member,
                   GError     **error)
{
  g_autoptr(JsonArray) parts = json_array_new ();
  JsonArray *list;

  if (holds_string (content))
    return symfonic_json_node_deep_copy (content);
  if (content == NULL || !JSON_NODE_HOLDS_ARRAY (content))
    return refuse (error, "“%s” must be a string or a list of content parts", member);

  list = json_node_get_array (content);
  for (guint i = 0; i < json_array_get_length (list); i++)
    {
      JsonObject *part = element_object (list, i);
      const char *type = get_string (part, "type");
      g_autofree char *where = g_strdup_printf ("%s[%u]", member, i);

      if ((g_strcmp0 (type, "input_text") == 0 || g_strcmp0 (type, "output_text") == 0) &&
          get_string (part, "text") != NULL)
        json_array_add_object_element (parts, text_part ("text", get_string (part, "text")));
      else if (g_strcmp0 (type, "input_image") == 0 && get_string (part, "image_url") != NULL)
        {
          JsonObject *chat_part = json_object_new ();
          JsonObject *image = json_object_new ();

          copy_member (image, "url", part, "image_url");
          if (get_string (part, "detail") != NULL)
            copy_member (image, "detail", part, "detail");
          json_object_set_string_member (chat_part, "type", "image_url");
          json_object_set_object_member (chat_part, "image_url", image);
          json_array_add_object_element (parts, chat_part);
        }
      else if (g_strcmp0 (type, "input_file") == 0 && get_string (part, "file_data") != NULL)
        {
          JsonObject *chat_part = json_object_new ();
          JsonObject *file = json_object_new ();

          copy_member (file, "file_data", part, "file_data");
          json_object_set_string_member (file, "filename", get_string (part, "filename") != NULL
                                                           ? get_string (part, "filename") : "document.pdf");
          json_object_set_string_member (chat_part, "type", "file");
          json_object_set_object_member (chat_part, "file", file);
          json_array_add_object_element (parts, chat_part);
        }
      else
        return refuse (error, "“%s” cannot be passed on: the gateway keeps no stored files and takes text, "
                              "images and inline files", where);
    }

  return json_node_init_array (json_node_alloc (), parts);
}

/* The assistant message that the function calls at the end of @messages
 * join, made if the last message is another. */
static JsonArray *
assistant_tool_calls (JsonArray *messages)
{
  guint n = json_array_get_length (messages);
  JsonObject *last = n > 0 ? element_object (messages, n - 1) : NULL;
  JsonObject *message;

  if (last == NULL || g_strcmp0 (get_string (last, "role"), "assistant") != 0)
    {
      message = new_message ("assistant");
      json_object_set_null_member (message, "content");
      json_array_add_object_element (messages, message);
      last = message;
    }
  if (get_given (last, "tool_calls") == NULL)
    json_object_set_array_member (last, "tool_calls", json_array_new ());

  return json_object_get_array_member (last, "tool_calls");
}

static gboolean
responses_input (JsonNode   *input,
                 JsonArray  *messages,
                 GError    **error)
{
  JsonArray *items;

  if (holds_string (input))
    {
      JsonObject *message = new_message ("user");

      json_object_set_member (message, "content", symfonic_json_node_deep_copy (input));
      json_array_add_object_element (messages, message);
      return TRUE;
    }
  if (input == NULL || !JSON_NODE_HOLDS_ARRAY (input))
    return refuse (error, "“input” is required and must be a string or a list of items") != NULL;

  items = json_node_get_array (input);
  for (guint i = 0; i < json_array_get_length (items); i++)
    {
      JsonObject *item = element_object (items, i);
      const char *type = get_string (item, "type");
      const char *role = get_string (item, "role");
      g_autofree char *where = g_strdup_printf ("input[%u]", i);

      if (item == NULL)
        return refuse (error, "“%s” must be an object", where) != NULL;
      if ((type == NULL || strcmp (type, "message") == 0) && role != NULL)
        {
          g_autofree char *member = g_strdup_printf ("input[%u].content", i);
          JsonNode *content;
          JsonObject *message;

          if (strcmp (role, "user") != 0 && strcmp (role, "assistant") != 0 && strcmp (role, "system") != 0 &&
              strcmp (role, "developer") != 0)
            return refuse (error, "“input[%u].role” must be user, assistant, system or developer", i) != NULL;
          content = responses_content (get_given (item, "content"), member, error);
          if (content == NULL)
            return FALSE;
          message = new_message (role);
          json_object_set_member (message, "content", content);
          json_array_add_object_element (messages, message);
        }
      else if (g_strcmp0 (type, "function_call") == 0)
        {
          JsonObject *call = json_object_new ();
          JsonObject *function = json_object_new ();

          if (get_string (item, "call_id") == NULL || get_string (item, "name") == NULL ||
              get_string (item, "arguments") == NULL)
            {
              json_object_unref (call);
              json_object_unref (function);
              return refuse (error, "“input[%u]” needs a string “call_id”, “name” and “arguments”", i) != NULL;
            }
          copy_member (function, "name", item, "name");
          copy_member (function, "arguments", item, "arguments");
          copy_member (call, "id", item, "call_id");
          json_object_set_string_member (call, "type", "function");
          json_object_set_object_member (call, "function", function);
          json_array_add_object_element (assistant_tool_calls (messages), call);
        }
      else if (g_strcmp0 (type, "function_call_output") == 0)
        {
          g_autofree char *member = g_strdup_printf ("input[%u].output", i);
          JsonNode *output = get_given (item, "output");
          g_autofree char *text = NULL;
          JsonObject *message;

          if (get_string (item, "call_id") == NULL)
            return refuse (error, "“input[%u].call_id” is required", i) != NULL;
          if (holds_string (output))
            text = g_strdup (json_node_get_string (output));
          else
            {
              g_autoptr(JsonNode) parts = responses_content (output, member, error);

              if (parts == NULL || (text = dup_text (parts, "text", member, error)) == NULL)
                return FALSE;
            }
          message = new_message ("tool");
          copy_member (message, "tool_call_id", item, "call_id");
          json_object_set_string_member (message, "content", text);
          json_array_add_object_element (messages, message);
        }
      /* earlier reasoning is the model's own, which no chat API takes back */
      else if (g_strcmp0 (type, "reasoning") == 0)
        continue;
      else
        return refuse (error, "“%s” cannot be passed on: the gateway takes messages, function calls and their "
                              "outputs", where) != NULL;
    }

  return TRUE;
}

static JsonArray *
responses_tools (JsonNode  *node,
                 GError   **error)
{
  g_autoptr(JsonArray) tools = json_array_new ();
  JsonArray *list;

  if (!JSON_NODE_HOLDS_ARRAY (node))
    return refuse (error, "“tools” must be a list");
  list = json_node_get_array (node);
  for (guint i = 0; i < json_array_get_length (list); i++)
    {
      JsonObject *tool = element_object (list, i);
      JsonObject *function;
      JsonObject *wrapper;

      if (g_strcmp0 (get_string (tool, "type"), "function") != 0 || get_string (tool, "name") == NULL)
        return refuse (error, "“tools[%u]” must be a function with a string “name”: the gateway runs no "
                              "hosted tools", i);
      function = json_object_new ();
      copy_member (function, "name", tool, "name");
      if (get_string (tool, "description") != NULL)
        copy_member (function, "description", tool, "description");
      if (get_object (tool, "parameters") != NULL)
        copy_member (function, "parameters", tool, "parameters");
      if (get_given (tool, "strict") != NULL)
        copy_member (function, "strict", tool, "strict");
      wrapper = json_object_new ();
      json_object_set_string_member (wrapper, "type", "function");
      json_object_set_object_member (wrapper, "function", function);
      json_array_add_object_element (tools, wrapper);
    }

  return g_steal_pointer (&tools);
}

static gboolean
responses_tool_choice (JsonNode    *node,
                       JsonObject  *out,
                       GError     **error)
{
  if (node == NULL)
    return TRUE;
  if (holds_string (node) && (g_str_equal (json_node_get_string (node), "auto") ||
                              g_str_equal (json_node_get_string (node), "none") ||
                              g_str_equal (json_node_get_string (node), "required")))
    {
      json_object_set_member (out, "tool_choice", symfonic_json_node_deep_copy (node));
      return TRUE;
    }
  if (JSON_NODE_HOLDS_OBJECT (node) && g_strcmp0 (get_string (json_node_get_object (node), "type"), "function") == 0 &&
      get_string (json_node_get_object (node), "name") != NULL)
    {
      JsonObject *forced = json_object_new ();
      JsonObject *function = json_object_new ();

      copy_member (function, "name", json_node_get_object (node), "name");
      json_object_set_string_member (forced, "type", "function");
      json_object_set_object_member (forced, "function", function);
      json_object_set_object_member (out, "tool_choice", forced);
      return TRUE;
    }

  return refuse (error, "“tool_choice” must be auto, none, required or a function") != NULL;
}

/* text.format as chat's response_format */
static gboolean
responses_text (JsonObject  *text,
                JsonObject  *out,
                GError     **error)
{
  static const char * const known[] = { "format", "verbosity", NULL };
  JsonObject *format = get_object (text, "format");
  const char *type = get_string (format, "type");

  if (text == NULL)
    return TRUE;
  if (!only_known (text, known, "text", RESPONSES_TO_CHAT, error))
    return FALSE;
  if (get_given (text, "verbosity") != NULL)
    copy_member (out, "verbosity", text, "verbosity");
  if (format == NULL || g_strcmp0 (type, "text") == 0)
    return TRUE;
  if (g_strcmp0 (type, "json_object") == 0)
    {
      JsonObject *response_format = json_object_new ();

      json_object_set_string_member (response_format, "type", "json_object");
      json_object_set_object_member (out, "response_format", response_format);
      return TRUE;
    }
  if (g_strcmp0 (type, "json_schema") == 0 && get_string (format, "name") != NULL && get_object (format, "schema") != NULL)
    {
      JsonObject *response_format = json_object_new ();
      JsonObject *schema = json_object_new ();

      copy_member (schema, "name", format, "name");
      copy_member (schema, "schema", format, "schema");
      if (get_given (format, "strict") != NULL)
        copy_member (schema, "strict", format, "strict");
      if (get_string (format, "description") != NULL)
        copy_member (schema, "description", format, "description");
      json_object_set_string_member (response_format, "type", "json_schema");
      json_object_set_object_member (response_format, "json_schema", schema);
      json_object_set_object_member (out, "response_format", response_format);
      return TRUE;
    }

  return refuse (error, "“text.format” must be text, json_object or a json_schema with a “name” and a “schema”") != NULL;
}

JsonObject *
symfonic_provider_translate_responses_to_chat (JsonObject  *responses,
                                               GError     **error)
{
  /* what the gateway does itself (stream, background, store: it keeps
   * what it keeps, see the README) and what translates */
  static const char * const known[] = {
    "model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls", "max_output_tokens",
    "temperature", "top_p", "text", "reasoning", "metadata", "user", "safety_identifier", "prompt_cache_key",
    "service_tier", "store", "background", "stream", "stream_options", "include", "truncation", NULL
  };
  static const char * const same_name[] = {
    "parallel_tool_calls", "temperature", "top_p", "metadata", "user", "safety_identifier", "prompt_cache_key",
    "service_tier",
  };
  g_autoptr(JsonObject) out = json_object_new ();
  g_autoptr(JsonArray) messages = json_array_new ();
  JsonObject *reasoning = get_object (responses, "reasoning");
  const char *truncation = get_string (responses, "truncation");
  JsonNode *node;

  if (!only_known (responses, known, NULL, RESPONSES_TO_CHAT, error))
    return NULL;
  if (!is_default (get_given (responses, "include")))
    return refuse (error, "“include” cannot be passed on: the gateway adds nothing to a response");
  if (truncation != NULL && strcmp (truncation, "disabled") != 0)
    return refuse_member (error, "truncation", RESPONSES_TO_CHAT);
  if (reasoning != NULL)
    {
      static const char * const reasoning_known[] = { "effort", "summary", "generate_summary", NULL };

      if (!only_known (reasoning, reasoning_known, "reasoning", RESPONSES_TO_CHAT, error))
        return NULL;
    }

  if (get_string (responses, "model") == NULL || *get_string (responses, "model") == '\0')
    return refuse (error, "“model” is required and must be a non-empty string");
  copy_member (out, "model", responses, "model");
  if ((node = get_given (responses, "instructions")) != NULL)
    {
      JsonObject *system = new_message ("developer");

      if (!holds_string (node))
        return refuse (error, "“instructions” must be a string");
      json_object_set_member (system, "content", symfonic_json_node_deep_copy (node));
      json_array_add_object_element (messages, system);
    }
  if (!responses_input (get_given (responses, "input"), messages, error))
    return NULL;
  json_object_set_array_member (out, "messages", g_steal_pointer (&messages));

  if ((node = get_given (responses, "tools")) != NULL && !(JSON_NODE_HOLDS_ARRAY (node) &&
                                                          json_array_get_length (json_node_get_array (node)) == 0))
    {
      JsonArray *tools = responses_tools (node, error);

      if (tools == NULL)
        return NULL;
      json_object_set_array_member (out, "tools", tools);
    }
  if (!responses_tool_choice (get_given (responses, "tool_choice"), out, error) ||
      !responses_text (get_object (responses, "text"), out, error))
    return NULL;
  if ((node = get_given (responses, "max_output_tokens")) != NULL)
    json_object_set_member (out, "max_completion_tokens", symfonic_json_node_deep_copy (node));
  if (get_string (reasoning, "effort") != NULL)
    copy_member (out, "reasoning_effort", reasoning, "effort");
  for (guint i = 0; i < G_N_ELEMENTS (same_name); i++)
    {
      if (get_given (responses, same_name[i]) != NULL)
        copy_member (out, same_name[i], responses, same_name[i]);
    }

  return g_steal_pointer (&out);
}
