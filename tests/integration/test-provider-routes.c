/* test-provider-routes.c: the `openai` and `anthropic` route kinds over real HTTP
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The gateway answers in each provider's own wire format (OpenAI's
 * chat.completion chunks, Anthropic's message events), streamed or not,
 * with the same pipeline as the typed routes: authentication by either
 * header, the extraction and citation filters, the error map in the
 * provider's own error shape before and after the handshake. Two sources
 * feed the routes: the replay source (transcripts written here, as a
 * provider source emits its events) and the runtime source (a typed
 * upstream, split at random byte boundaries, that reports usage).
 * Expected values are written here from the providers' API references.
 */
#include <string.h>

#include "symfonic-test-support.h"
#include "symfonic-test-upstream.h"

#define OPENAI_PATH "/v1/chat/completions"
#define MODELS_PATH "/v1/models"
#define ANTHROPIC_PATH "/anthropic/v1/messages"
#define RUNTIME_OPENAI_PATH "/runtime/v1/chat/completions"
#define RUNTIME_ANTHROPIC_PATH "/runtime/anthropic/v1/messages"
#define LIMITED_PATH "/limited/v1/chat/completions"
#define TYPED_PATH "/typed"

#define OPENAI_BODY(extra) \
  "{\"model\":\"gpt-test\",\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"}," \
  "{\"role\":\"user\",\"content\":\"Hi\"}]" extra "}"
#define ANTHROPIC_BODY(extra) \
  "{\"model\":\"claude-test\",\"max_tokens\":64,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]" extra "}"

/* what the filters leave of provider-text.jsonl */
#define CLEAN_THINKING "Let me think."
#define CLEAN_TEXT "Hello world!"
/* the opaque detail of every server-side fault */
#define OPAQUE "Internal server error"

typedef struct
{
  SymfonicTestUpstream *runtime;
  SymfonicServer       *server;
  SoupSession          *session;
} Fixture;

/* A typed runtime turn, which reports usage on its terminal, and why the
 * answer ended (which the citation stage, cleaning the terminal's text,
 * leaves as it is). */
static const char runtime_turn[] =
  "event: ThinkingDeltaEvent\ndata: {\"text\":\"Hmm.\"}\n\n"
  "event: TextDeltaEvent\ndata: {\"text\":\"Sunny \\u00e9t\\u00e9\"}\n\n"
  "event: ToolCallStartEvent\ndata: {\"tool_name\":\"get_weather\",\"tool_call_id\":\"call_rt\"}\n\n"
  "event: TextDeltaEvent\ndata: {\"text\":\"[semantic] today.\"}\n\n"
  "event: ConsolidationScheduledEvent\ndata: {\"report\":{},\"graph_mutations\":0}\n\n"
  "event: ResponseCompleteEvent\ndata: {\"text\":\"Sunny \\u00e9t\\u00e9 [semantic] today.\",\"duration_ms\":5,"
  "\"finish_reason\":\"length\",\"usage\":{\"input_tokens\":12,\"output_tokens\":34}}\n\n";

static const char *
data_dir (void)
{
  const char *dir = g_getenv ("SYMFONIC_TEST_DATA_DIR");

  return dir != NULL ? dir : SYMFONIC_TEST_DATA_DIR;
}

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  user_data)
{
  g_autofree char *transcripts = g_test_build_filename (G_TEST_DIST, "integration", "transcripts", NULL);
  g_autoptr(GBytes) turn = g_bytes_new_static (runtime_turn, strlen (runtime_turn));
  SymfonicTestScenario scenario = {
    .body = turn,
    .split = SYMFONIC_TEST_SPLIT_RANDOM,
    .seed = g_test_rand_int (),
  };
  g_autofree char *url = NULL;
  g_autofree char *pipeline = NULL;

  fixture->runtime = symfonic_test_upstream_new ();
  url = symfonic_test_upstream_add (fixture->runtime, "/turn", &scenario);
  pipeline = g_strdup_printf ("[gateway]\n"
                              "listen=127.0.0.1:8080\n"
                              "workers=1\n"
                              "\n"
                              "[route:openai]\n"
                              "path=/v1\n"
                              "kind=openai\n"
                              "source=replay\n"
                              "stages=auth;extraction;citation;errors\n"
                              "\n"
                              "[route:anthropic]\n"
                              "path=/anthropic/v1\n"
                              "kind=anthropic\n"
                              "source=replay\n"
                              "stages=auth;extraction;citation;errors\n"
                              "\n"
                              "[route:runtime-openai]\n"
                              "path=/runtime/v1\n"
                              "kind=openai\n"
                              "source=runtime\n"
                              "stages=auth;citation;errors\n"
                              "\n"
                              "[route:runtime-anthropic]\n"
                              "path=/runtime/anthropic/v1\n"
                              "kind=anthropic\n"
                              "source=runtime\n"
                              "stages=auth;citation;errors\n"
                              "\n"
                              "[route:limited]\n"
                              "path=/limited/v1\n"
                              "kind=openai\n"
                              "source=replay\n"
                              "stages=auth;limit;errors\n"
                              "\n"
                              "[route:typed]\n"
                              "path=" TYPED_PATH "\n"
                              "kind=typed\n"
                              "source=replay\n"
                              "stages=auth;errors\n"
                              "\n"
                              "[source:replay]\n"
                              "type=replay\n"
                              "transcripts=%s\n"
                              "default-transcript=provider-text\n"
                              "transcript-header=X-Symfonic-Transcript\n"
                              "time-scale=0\n"
                              "\n"
                              "[source:runtime]\n"
                              "type=runtime\n"
                              "url=%s\n"
                              "\n"
                              "[stage:auth]\n"
                              "type=auth\n"
                              "tokens-file=demo-tokens.ini\n"
                              "\n"
                              "[stage:limit]\n"
                              "type=rate-limit\n"
                              "rate=0.001\n"
                              "burst=1\n"
                              "\n"
                              "[stage:extraction]\n"
                              "type=extraction\n"
                              "\n"
                              "[stage:citation]\n"
                              "type=citation\n"
                              "\n"
                              "[stage:errors]\n"
                              "type=error-map\n"
                              "table=error-map.ini\n",
                              transcripts, url);
  fixture->server = symfonic_test_server_new (pipeline, data_dir (), 1);
  fixture->session = symfonic_test_session_new ();
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  user_data)
{
  g_object_unref (fixture->session);
  symfonic_server_stop (fixture->server);
  g_object_unref (fixture->server);
  symfonic_test_upstream_free (fixture->runtime);
}

/* --- requests ------------------------------------------------------------- */

typedef enum {
  AUTH_BEARER,
  AUTH_API_KEY,
  AUTH_NONE,
  AUTH_WRONG_KEY,
} Auth;

static SymfonicTestResponse *
post (Fixture    *fixture,
      const char *path,
      const char *body,
      Auth        auth,
      const char *transcript)
{
  g_autofree char *url = symfonic_test_server_dup_url (fixture->server, path);
  const char *name = auth == AUTH_BEARER ? "Authorization" : "x-api-key";
  const char *value = auth == AUTH_BEARER ? "Bearer demo-token-alice"
                    : auth == AUTH_API_KEY ? "demo-token-alice" : "not-a-key";

  if (auth == AUTH_NONE)
    return symfonic_test_request (fixture->session, "POST", url, "application/json", body,
                                  "X-Tenant-ID", "acme", "X-Symfonic-Transcript", transcript, NULL);
  return symfonic_test_request (fixture->session, "POST", url, "application/json", body,
                                name, value, "X-Tenant-ID", "acme", "X-Symfonic-Transcript", transcript, NULL);
}

/* The SSE frames of a streamed answer, after checking its headers. */
static GPtrArray *
stream_frames (SymfonicTestResponse *response)
{
  g_autoptr(SymfonicTestSseParser) parser = symfonic_test_sse_parser_new ();
  GPtrArray *frames = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_test_frame_free);
  gsize length;
  const char *data = g_bytes_get_data (response->body, &length);

  g_assert_cmpuint (response->status, ==, 200);
  g_assert_cmpstr (soup_message_headers_get_content_type (response->headers, NULL), ==, "text/event-stream");
  g_assert_cmpstr (soup_message_headers_get_one (response->headers, "Cache-Control"), ==, "no-cache");
  symfonic_test_sse_parser_feed (parser, data, length, frames);
  g_assert_true (symfonic_test_sse_parser_is_between_frames (parser));

  return frames;
}

static JsonObject *
frame_object (SymfonicTestFrame *frame,
              JsonNode         **keep)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (symfonic_test_json_is_strict (frame->data, -1, &error));
  g_assert_no_error (error);
  *keep = symfonic_test_json_parse (frame->data);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (*keep));

  return json_node_get_object (*keep);
}

static JsonObject *
response_object (SymfonicTestResponse *response,
                 guint                 status,
                 JsonNode            **keep)
{
  g_autoptr(GError) error = NULL;

  g_assert_cmpuint (response->status, ==, status);
  g_assert_cmpstr (soup_message_headers_get_content_type (response->headers, NULL), ==, "application/json");
  g_assert_true (symfonic_test_json_is_strict (symfonic_test_response_get_text (response), -1, &error));
  g_assert_no_error (error);
  *keep = symfonic_test_response_dup_json (response);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (*keep));

  return json_node_get_object (*keep);
}

static void
assert_json_member (JsonObject *object,
                    const char *member,
                    const char *expected_json)
{
  g_autoptr(JsonNode) expected = symfonic_test_json_parse (expected_json);
  JsonNode *actual = json_object_get_member (object, member);

  g_assert_nonnull (actual);
  if (!json_node_equal (actual, expected))
    {
      g_autofree char *text = json_to_string (actual, FALSE);

      g_error ("member %s is %s, expected %s", member, text, expected_json);
    }
}

/* --- OpenAI --------------------------------------------------------------- */

/* Reads a chunk stream: every chunk before [DONE] is one object of the
 * stream, with one id, model and object type. */
typedef struct
{
  GString   *content;
  GString   *reasoning;
  GPtrArray *tool_calls;
  char      *finish_reason;
  JsonNode  *usage;
  JsonNode  *error;
  gboolean   done;
  gboolean   role_first;
} OpenaiStream;

static void
openai_stream_clear (OpenaiStream *self)
{
  g_string_free (self->content, TRUE);
  g_string_free (self->reasoning, TRUE);
  g_ptr_array_unref (self->tool_calls);
  g_free (self->finish_reason);
  g_clear_pointer (&self->usage, json_node_unref);
  g_clear_pointer (&self->error, json_node_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (OpenaiStream, openai_stream_clear)

static void
read_openai_stream (SymfonicTestResponse *response,
                    OpenaiStream         *out)
{
  g_autoptr(GPtrArray) frames = stream_frames (response);
  g_autofree char *id = NULL;

  out->content = g_string_new (NULL);
  out->reasoning = g_string_new (NULL);
  out->tool_calls = g_ptr_array_new_with_free_func ((GDestroyNotify) json_node_unref);

  for (guint i = 0; i < frames->len; i++)
    {
      SymfonicTestFrame *frame = g_ptr_array_index (frames, i);
      g_autoptr(JsonNode) keep = NULL;
      JsonObject *chunk;
      JsonArray *choices;

      g_assert_cmpstr (frame->event, ==, "message");
      g_assert_false (out->done);
      if (g_str_equal (frame->data, "[DONE]"))
        {
          g_assert_cmpuint (i, ==, frames->len - 1);
          out->done = TRUE;
          continue;
        }

      chunk = frame_object (frame, &keep);
      if (json_object_has_member (chunk, "error"))
        {
          out->error = json_node_ref (json_object_get_member (chunk, "error"));
          continue;
        }
      g_assert_null (out->error);
      g_assert_cmpstr (json_object_get_string_member (chunk, "object"), ==, "chat.completion.chunk");
      g_assert_cmpstr (json_object_get_string_member (chunk, "model"), ==, "gpt-test");
      g_assert_true (g_str_has_prefix (json_object_get_string_member (chunk, "id"), "chatcmpl-"));
      if (id == NULL)
        id = g_strdup (json_object_get_string_member (chunk, "id"));
      g_assert_cmpstr (json_object_get_string_member (chunk, "id"), ==, id);
      g_assert_cmpint (json_object_get_int_member (chunk, "created"), >, 1700000000);

      choices = json_object_get_array_member (chunk, "choices");
      if (json_array_get_length (choices) == 0)
        {
          /* the usage chunk comes last */
          g_assert_nonnull (out->finish_reason);
          out->usage = json_node_ref (json_object_get_member (chunk, "usage"));
          continue;
        }

      g_assert_cmpuint (json_array_get_length (choices), ==, 1);
      {
        JsonObject *choice = json_array_get_object_element (choices, 0);
        JsonObject *delta = json_object_get_object_member (choice, "delta");
        JsonNode *finish = json_object_get_member (choice, "finish_reason");

        g_assert_cmpint (json_object_get_int_member (choice, "index"), ==, 0);
        g_assert_null (out->finish_reason);
        if (i == 0)
          out->role_first = g_strcmp0 (json_object_get_string_member_with_default (delta, "role", NULL), "assistant") == 0;
        else
          g_assert_false (json_object_has_member (delta, "role"));
        if (json_object_has_member (delta, "content"))
          g_string_append (out->content, json_object_get_string_member (delta, "content"));
        if (json_object_has_member (delta, "reasoning_content"))
          g_string_append (out->reasoning, json_object_get_string_member (delta, "reasoning_content"));
        if (json_object_has_member (delta, "tool_calls"))
          {
            JsonArray *calls = json_object_get_array_member (delta, "tool_calls");

            for (guint j = 0; j < json_array_get_length (calls); j++)
              g_ptr_array_add (out->tool_calls, json_node_ref (json_array_get_element (calls, j)));
          }
        if (!JSON_NODE_HOLDS_NULL (finish))
          out->finish_reason = g_strdup (json_node_get_string (finish));
      }
    }
}

static void
assert_json_node (JsonNode   *actual,
                  const char *expected_json)
{
  g_autoptr(JsonNode) expected = symfonic_test_json_parse (expected_json);

  if (!json_node_equal (actual, expected))
    {
      g_autofree char *text = json_to_string (actual, FALSE);

      g_error ("got %s, expected %s", text, expected_json);
    }
}

static void
test_openai_stream_text (Fixture       *fixture,
                         gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) response =
    post (fixture, OPENAI_PATH, OPENAI_BODY (",\"stream\":true,\"stream_options\":{\"include_usage\":true}"),
          AUTH_BEARER, "provider-text");
  g_auto(OpenaiStream) stream = { 0 };

  read_openai_stream (response, &stream);
  g_assert_true (stream.role_first);
  g_assert_cmpstr (stream.reasoning->str, ==, CLEAN_THINKING);
  g_assert_cmpstr (stream.content->str, ==, CLEAN_TEXT);
  g_assert_cmpuint (stream.tool_calls->len, ==, 0);
  g_assert_cmpstr (stream.finish_reason, ==, "stop");
  g_assert_nonnull (stream.usage);
  /* the replay source reports no usage */
  assert_json_node (stream.usage, "{\"prompt_tokens\":0,\"completion_tokens\":0,\"total_tokens\":0}");
  g_assert_null (stream.error);
  g_assert_true (stream.done);
}

static void
test_openai_stream_without_usage (Fixture       *fixture,
                                  gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) response =
    post (fixture, OPENAI_PATH, OPENAI_BODY (",\"stream\":true"), AUTH_BEARER, "provider-text");
  g_auto(OpenaiStream) stream = { 0 };

  read_openai_stream (response, &stream);
  g_assert_cmpstr (stream.content->str, ==, CLEAN_TEXT);
  g_assert_cmpstr (stream.finish_reason, ==, "stop");
  g_assert_null (stream.usage);
  g_assert_true (stream.done);
}

static void
test_openai_stream_tools (Fixture       *fixture,
                          gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) response =
    post (fixture, OPENAI_PATH, OPENAI_BODY (",\"stream\":true"), AUTH_BEARER, "provider-tools");
  g_auto(OpenaiStream) stream = { 0 };

  read_openai_stream (response, &stream);
  g_assert_cmpstr (stream.content->str, ==, "Checking.");
  g_assert_cmpuint (stream.tool_calls->len, ==, 2);
  assert_json_node (g_ptr_array_index (stream.tool_calls, 0),
                    "{\"index\":0,\"id\":\"call_1\",\"type\":\"function\","
                    "\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Lisbon\\\"}\"}}");
  assert_json_node (g_ptr_array_index (stream.tool_calls, 1),
                    "{\"index\":1,\"id\":\"call_2\",\"type\":\"function\","
                    "\"function\":{\"name\":\"get_time\",\"arguments\":\"{\\\"tz\\\":\\\"WET\\\"}\"}}");
  g_assert_cmpstr (stream.finish_reason, ==, "tool_calls");
  g_assert_true (stream.done);
}

static void
test_openai_answer (Fixture       *fixture,
                    gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) text = post (fixture, OPENAI_PATH, OPENAI_BODY (""), AUTH_BEARER, "provider-text");
  g_autoptr(SymfonicTestResponse) tools =
    post (fixture, OPENAI_PATH, OPENAI_BODY (",\"stream\":false"), AUTH_BEARER, "provider-tools");
  g_autoptr(JsonNode) keep_text = NULL;
  g_autoptr(JsonNode) keep_tools = NULL;
  JsonObject *object = response_object (text, 200, &keep_text);
  JsonArray *choices = json_object_get_array_member (object, "choices");

  g_assert_cmpstr (json_object_get_string_member (object, "object"), ==, "chat.completion");
  g_assert_true (g_str_has_prefix (json_object_get_string_member (object, "id"), "chatcmpl-"));
  g_assert_cmpstr (json_object_get_string_member (object, "model"), ==, "gpt-test");
  g_assert_cmpuint (json_array_get_length (choices), ==, 1);
  assert_json_member (json_array_get_object_element (choices, 0), "message",
                      "{\"role\":\"assistant\",\"content\":\"" CLEAN_TEXT "\",\"reasoning_content\":\"" CLEAN_THINKING "\"}");
  assert_json_member (json_array_get_object_element (choices, 0), "finish_reason", "\"stop\"");
  assert_json_member (object, "usage", "{\"prompt_tokens\":0,\"completion_tokens\":0,\"total_tokens\":0}");

  object = response_object (tools, 200, &keep_tools);
  choices = json_object_get_array_member (object, "choices");
  assert_json_member (json_array_get_object_element (choices, 0), "message",
                      "{\"role\":\"assistant\",\"content\":\"Checking.\",\"tool_calls\":["
                      "{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
                      "\"arguments\":\"{\\\"city\\\":\\\"Lisbon\\\"}\"}},"
                      "{\"id\":\"call_2\",\"type\":\"function\",\"function\":{\"name\":\"get_time\","
                      "\"arguments\":\"{\\\"tz\\\":\\\"WET\\\"}\"}}]}");
  assert_json_member (json_array_get_object_element (choices, 0), "finish_reason", "\"tool_calls\"");
}

/* --- Anthropic ------------------------------------------------------------- */

typedef struct
{
  GPtrArray *names;
  GString   *text;
  GString   *thinking;
  GPtrArray *tool_uses;
  GPtrArray *inputs;
  JsonNode  *message_delta;
  JsonNode  *error;
} AnthropicStream;

static void
anthropic_stream_clear (AnthropicStream *self)
{
  g_ptr_array_unref (self->names);
  g_string_free (self->text, TRUE);
  g_string_free (self->thinking, TRUE);
  g_ptr_array_unref (self->tool_uses);
  g_ptr_array_unref (self->inputs);
  g_clear_pointer (&self->message_delta, json_node_unref);
  g_clear_pointer (&self->error, json_node_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (AnthropicStream, anthropic_stream_clear)

/* Reads an event stream, checking that blocks open, fill and close in
 * order with consecutive indexes. */
static void
read_anthropic_stream (SymfonicTestResponse *response,
                       AnthropicStream      *out)
{
  g_autoptr(GPtrArray) frames = stream_frames (response);
  g_autofree char *open_type = NULL;
  gint64 open_index = -1;
  gint64 next_index = 0;

  out->names = g_ptr_array_new_with_free_func (g_free);
  out->text = g_string_new (NULL);
  out->thinking = g_string_new (NULL);
  out->tool_uses = g_ptr_array_new_with_free_func ((GDestroyNotify) json_node_unref);
  out->inputs = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; i < frames->len; i++)
    {
      SymfonicTestFrame *frame = g_ptr_array_index (frames, i);
      g_autoptr(JsonNode) keep = NULL;
      JsonObject *event = frame_object (frame, &keep);

      g_ptr_array_add (out->names, g_strdup (frame->event));
      if (g_str_equal (frame->event, "error"))
        {
          g_assert_cmpstr (json_object_get_string_member (event, "type"), ==, "error");
          out->error = json_node_ref (json_object_get_member (event, "error"));
          continue;
        }
      g_assert_cmpstr (json_object_get_string_member (event, "type"), ==, frame->event);

      if (g_str_equal (frame->event, "message_start"))
        {
          JsonObject *message = json_object_get_object_member (event, "message");

          g_assert_cmpuint (i, ==, 0);
          g_assert_true (g_str_has_prefix (json_object_get_string_member (message, "id"), "msg_"));
          g_assert_cmpstr (json_object_get_string_member (message, "model"), ==, "claude-test");
          g_assert_cmpstr (json_object_get_string_member (message, "role"), ==, "assistant");
          g_assert_cmpuint (json_array_get_length (json_object_get_array_member (message, "content")), ==, 0);
        }
      else if (g_str_equal (frame->event, "content_block_start"))
        {
          JsonObject *block = json_object_get_object_member (event, "content_block");

          g_assert_null (open_type);
          g_assert_cmpint (json_object_get_int_member (event, "index"), ==, next_index);
          open_index = next_index++;
          open_type = g_strdup (json_object_get_string_member (block, "type"));
          if (g_str_equal (open_type, "tool_use"))
            {
              g_ptr_array_add (out->tool_uses, json_node_ref (json_object_get_member (event, "content_block")));
              g_ptr_array_add (out->inputs, g_strdup (""));
            }
        }
      else if (g_str_equal (frame->event, "content_block_delta"))
        {
          JsonObject *delta = json_object_get_object_member (event, "delta");
          const char *type = json_object_get_string_member (delta, "type");

          g_assert_nonnull (open_type);
          g_assert_cmpint (json_object_get_int_member (event, "index"), ==, open_index);
          if (g_str_equal (type, "text_delta"))
            {
              g_assert_cmpstr (open_type, ==, "text");
              g_string_append (out->text, json_object_get_string_member (delta, "text"));
            }
          else if (g_str_equal (type, "thinking_delta"))
            {
              g_assert_cmpstr (open_type, ==, "thinking");
              g_string_append (out->thinking, json_object_get_string_member (delta, "thinking"));
            }
          else
            {
              char **input = (char **) &out->inputs->pdata[out->inputs->len - 1];
              char *joined;

              g_assert_cmpstr (type, ==, "input_json_delta");
              g_assert_cmpstr (open_type, ==, "tool_use");
              joined = g_strconcat (*input, json_object_get_string_member (delta, "partial_json"), NULL);
              g_free (*input);
              *input = joined;
            }
        }
      else if (g_str_equal (frame->event, "content_block_stop"))
        {
          g_assert_nonnull (open_type);
          g_assert_cmpint (json_object_get_int_member (event, "index"), ==, open_index);
          g_clear_pointer (&open_type, g_free);
        }
      else if (g_str_equal (frame->event, "message_delta"))
        {
          g_assert_null (open_type);
          out->message_delta = json_node_ref (keep);
        }
    }
}

static guint
count_names (AnthropicStream *stream,
             const char      *name)
{
  guint n = 0;

  for (guint i = 0; i < stream->names->len; i++)
    n += g_str_equal (g_ptr_array_index (stream->names, i), name);

  return n;
}

static char *
joined_names (AnthropicStream *stream)
{
  g_ptr_array_add (stream->names, NULL);
  g_ptr_array_set_size (stream->names, stream->names->len - 1);

  return g_strjoinv (",", (char **) stream->names->pdata);
}

static void
test_anthropic_stream_text (Fixture       *fixture,
                            gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) response =
    post (fixture, ANTHROPIC_PATH, ANTHROPIC_BODY (",\"stream\":true"), AUTH_API_KEY, "provider-text");
  g_auto(AnthropicStream) stream = { 0 };
  g_autofree char *names = NULL;
  g_autofree char *prefix = NULL;

  read_anthropic_stream (response, &stream);
  names = joined_names (&stream);
  /* one thinking block, then one text block, whatever the deltas' count */
  prefix = g_strndup (names, strlen ("message_start,ping,content_block_start,content_block_delta"));
  g_assert_cmpstr (prefix, ==, "message_start,ping,content_block_start,content_block_delta");
  g_assert_true (g_str_has_suffix (names, ",content_block_stop,message_delta,message_stop"));
  g_assert_cmpuint (count_names (&stream, "content_block_start"), ==, 2);
  g_assert_cmpstr (stream.thinking->str, ==, CLEAN_THINKING);
  g_assert_cmpstr (stream.text->str, ==, CLEAN_TEXT);
  g_assert_null (stream.error);
  assert_json_node (stream.message_delta,
                    "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},"
                    "\"usage\":{\"input_tokens\":0,\"output_tokens\":0}}");
}

static void
test_anthropic_stream_tools (Fixture       *fixture,
                             gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) response =
    post (fixture, ANTHROPIC_PATH, ANTHROPIC_BODY (",\"stream\":true"), AUTH_BEARER, "provider-tools");
  g_auto(AnthropicStream) stream = { 0 };
  g_autofree char *names = NULL;

  read_anthropic_stream (response, &stream);
  names = joined_names (&stream);
  g_assert_cmpstr (names, ==,
                   "message_start,ping,"
                   "content_block_start,content_block_delta,content_block_stop,"
                   "content_block_start,content_block_delta,content_block_stop,"
                   "content_block_start,content_block_delta,content_block_stop,"
                   "message_delta,message_stop");
  g_assert_cmpstr (stream.text->str, ==, "Checking.");
  g_assert_cmpuint (stream.tool_uses->len, ==, 2);
  assert_json_node (g_ptr_array_index (stream.tool_uses, 0),
                    "{\"type\":\"tool_use\",\"id\":\"call_1\",\"name\":\"get_weather\",\"input\":{}}");
  assert_json_node (g_ptr_array_index (stream.tool_uses, 1),
                    "{\"type\":\"tool_use\",\"id\":\"call_2\",\"name\":\"get_time\",\"input\":{}}");
  g_assert_cmpstr (g_ptr_array_index (stream.inputs, 0), ==, "{\"city\":\"Lisbon\"}");
  g_assert_cmpstr (g_ptr_array_index (stream.inputs, 1), ==, "{\"tz\":\"WET\"}");
  assert_json_member (json_node_get_object (stream.message_delta), "delta",
                      "{\"stop_reason\":\"tool_use\",\"stop_sequence\":null}");
}

static void
test_anthropic_answer (Fixture       *fixture,
                       gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) text = post (fixture, ANTHROPIC_PATH, ANTHROPIC_BODY (""), AUTH_API_KEY, "provider-text");
  g_autoptr(SymfonicTestResponse) tools = post (fixture, ANTHROPIC_PATH, ANTHROPIC_BODY (""), AUTH_API_KEY, "provider-tools");
  g_autoptr(JsonNode) keep_text = NULL;
  g_autoptr(JsonNode) keep_tools = NULL;
  JsonObject *object = response_object (text, 200, &keep_text);

  g_assert_true (g_str_has_prefix (json_object_get_string_member (object, "id"), "msg_"));
  g_assert_cmpstr (json_object_get_string_member (object, "type"), ==, "message");
  g_assert_cmpstr (json_object_get_string_member (object, "role"), ==, "assistant");
  g_assert_cmpstr (json_object_get_string_member (object, "model"), ==, "claude-test");
  assert_json_member (object, "content",
                      "[{\"type\":\"thinking\",\"thinking\":\"" CLEAN_THINKING "\",\"signature\":\"\"},"
                      "{\"type\":\"text\",\"text\":\"" CLEAN_TEXT "\"}]");
  assert_json_member (object, "stop_reason", "\"end_turn\"");
  assert_json_member (object, "usage", "{\"input_tokens\":0,\"output_tokens\":0}");

  object = response_object (tools, 200, &keep_tools);
  assert_json_member (object, "content",
                      "[{\"type\":\"text\",\"text\":\"Checking.\"},"
                      "{\"type\":\"tool_use\",\"id\":\"call_1\",\"name\":\"get_weather\",\"input\":{\"city\":\"Lisbon\"}},"
                      "{\"type\":\"tool_use\",\"id\":\"call_2\",\"name\":\"get_time\",\"input\":{\"tz\":\"WET\"}}]");
  assert_json_member (object, "stop_reason", "\"tool_use\"");
}

/* --- errors ------------------------------------------------------------------ */

static void
assert_openai_error (SymfonicTestResponse *response,
                     guint                 status,
                     const char           *expected_json)
{
  g_autoptr(JsonNode) keep = NULL;
  JsonObject *object = response_object (response, status, &keep);

  g_assert_cmpuint (json_object_get_size (object), ==, 1);
  assert_json_member (object, "error", expected_json);
}

static void
assert_anthropic_error (SymfonicTestResponse *response,
                        guint                 status,
                        const char           *expected_json)
{
  g_autoptr(JsonNode) keep = NULL;
  JsonObject *object = response_object (response, status, &keep);

  g_assert_cmpuint (json_object_get_size (object), ==, 2);
  assert_json_member (object, "type", "\"error\"");
  assert_json_member (object, "error", expected_json);
}

/* Either header authenticates; without one, or with a wrong one, the
 * refusal is the provider's own 401. */
static void
test_auth (Fixture       *fixture,
           gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) openai_key = post (fixture, OPENAI_PATH, OPENAI_BODY (""), AUTH_API_KEY, "provider-text");
  g_autoptr(SymfonicTestResponse) anthropic_bearer = post (fixture, ANTHROPIC_PATH, ANTHROPIC_BODY (""), AUTH_BEARER, "provider-text");
  g_autoptr(SymfonicTestResponse) openai_none = post (fixture, OPENAI_PATH, OPENAI_BODY (""), AUTH_NONE, "provider-text");
  g_autoptr(SymfonicTestResponse) anthropic_none = post (fixture, ANTHROPIC_PATH, ANTHROPIC_BODY (""), AUTH_NONE, "provider-text");
  g_autoptr(SymfonicTestResponse) openai_wrong = post (fixture, OPENAI_PATH, OPENAI_BODY (""), AUTH_WRONG_KEY, "provider-text");
  g_autoptr(SymfonicTestResponse) anthropic_wrong = post (fixture, ANTHROPIC_PATH, ANTHROPIC_BODY (""), AUTH_WRONG_KEY, "provider-text");
  /* the typed route keeps to its published Authorization header */
  g_autoptr(SymfonicTestResponse) typed_key =
    post (fixture, TYPED_PATH, "{\"query\":\"Hi\"}", AUTH_API_KEY, "provider-text");

  g_assert_cmpuint (openai_key->status, ==, 200);
  g_assert_cmpuint (anthropic_bearer->status, ==, 200);
  assert_openai_error (openai_none, 401,
                       "{\"message\":\"Missing Authorization or x-api-key header\",\"type\":\"authentication_error\","
                       "\"param\":null,\"code\":\"unauthorized\"}");
  assert_anthropic_error (anthropic_none, 401,
                          "{\"type\":\"authentication_error\",\"message\":\"Missing Authorization or x-api-key header\"}");
  assert_openai_error (openai_wrong, 401,
                       "{\"message\":\"Invalid bearer token\",\"type\":\"authentication_error\","
                       "\"param\":null,\"code\":\"unauthorized\"}");
  assert_anthropic_error (anthropic_wrong, 401,
                          "{\"type\":\"authentication_error\",\"message\":\"Invalid bearer token\"}");
  g_assert_cmpuint (typed_key->status, ==, 401);
  g_assert_cmpstr (symfonic_test_response_get_text (typed_key), ==,
                   "{\"detail\":\"Missing Authorization header\",\"status\":401,\"code\":\"unauthorized\"}");
}

/* Malformed requests: 400 in the provider's shape, naming the rule and
 * never the value (MARK stands for what the client sent). */
#define MARK "ZZ-client-value-ZZ"

static const char * const bad_openai_bodies[] = {
  "[]",
  "{\"messages\":[{\"role\":\"user\",\"content\":\"" MARK "\"}]}",
  "{\"model\":\"\",\"messages\":[{\"role\":\"user\",\"content\":\"" MARK "\"}]}",
  "{\"model\":\"m\",\"messages\":[]}",
  "{\"model\":\"m\",\"messages\":[{\"role\":\"" MARK "\",\"content\":\"x\"}]}",
  "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":7}]}",
  "{\"model\":\"m\",\"messages\":[{\"role\":\"system\",\"content\":\"" MARK "\"}]}",
  "{\"model\":\"m\",\"messages\":[{\"role\":\"tool\",\"content\":\"" MARK "\"}]}",
  "{\"model\":\"m\",\"messages\":[{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"" MARK "\"}]}]}",
  "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"stream\":\"" MARK "\"}",
  "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"temperature\":3}",
  "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"top_p\":\"" MARK "\"}",
  "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":0}",
  "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"stop\":[\"a\",\"b\",\"c\",\"d\",\"e\"]}",
  "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"tools\":[{\"type\":\"" MARK "\"}]}",
  "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"stream_options\":{\"include_usage\":1}}",
  "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],}",
  "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"tools\":[{\"type\":null}]}",
  "{\"model\":\"m\",\"messages\":[{\"role\":\"system\",\"content\":[{\"type\":[],\"text\":\"" MARK "\"}]}]}",
};

static const char * const bad_anthropic_bodies[] = {
  "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"" MARK "\"}]}",
  "{\"model\":\"m\",\"max_tokens\":-1,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}",
  "{\"model\":\"m\",\"max_tokens\":9,\"messages\":[{\"role\":\"system\",\"content\":\"" MARK "\"}]}",
  "{\"model\":\"m\",\"max_tokens\":9,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"" MARK "\"}]}]}",
  "{\"model\":\"m\",\"max_tokens\":9,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"tool_use\",\"id\":\"a\",\"name\":\"b\",\"input\":{}}]}]}",
  "{\"model\":\"m\",\"max_tokens\":9,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"content\":\"" MARK "\"}]}]}",
  "{\"model\":\"m\",\"max_tokens\":9,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"system\":7}",
  "{\"model\":\"m\",\"max_tokens\":9,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"temperature\":1.5}",
  "{\"model\":\"m\",\"max_tokens\":9,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"stop_sequences\":\"" MARK "\"}",
  "{\"model\":\"m\",\"max_tokens\":9,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"tools\":[{\"name\":\"" MARK "\"}]}",
  "{\"model\":\"m\",\"max_tokens\":9,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":null}]}]}",
  "{\"model\":\"m\",\"max_tokens\":9,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":{},\"text\":\"" MARK "\"}]}]}",
};

static void
assert_bad_request (SymfonicTestResponse *response,
                    gboolean              openai)
{
  g_autoptr(JsonNode) keep = NULL;
  JsonObject *object = response_object (response, 400, &keep);
  JsonObject *error = json_object_get_object_member (object, "error");

  g_assert_null (strstr (symfonic_test_response_get_text (response), MARK));
  g_assert_cmpstr (json_object_get_string_member (error, "type"), ==, "invalid_request_error");
  g_assert_cmpstr (json_object_get_string_member (error, "message"), !=, "");
  if (openai)
    g_assert_cmpstr (json_object_get_string_member (error, "code"), ==, "bad_request");
  else
    g_assert_cmpstr (json_object_get_string_member (object, "type"), ==, "error");
}

static void
test_bad_requests (Fixture       *fixture,
                   gconstpointer  user_data)
{
  for (guint i = 0; i < G_N_ELEMENTS (bad_openai_bodies); i++)
    {
      g_autoptr(SymfonicTestResponse) response = post (fixture, OPENAI_PATH, bad_openai_bodies[i], AUTH_BEARER, "provider-text");

      g_test_message ("openai body %u", i);
      assert_bad_request (response, TRUE);
    }
  for (guint i = 0; i < G_N_ELEMENTS (bad_anthropic_bodies); i++)
    {
      g_autoptr(SymfonicTestResponse) response = post (fixture, ANTHROPIC_PATH, bad_anthropic_bodies[i], AUTH_API_KEY, "provider-text");

      g_test_message ("anthropic body %u", i);
      assert_bad_request (response, FALSE);
    }
}

/* The full shapes of each format decode: history with tool calls and
 * results, content parts, system blocks, tools. */
static void
test_rich_requests (Fixture       *fixture,
                    gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) openai =
    post (fixture, OPENAI_PATH,
          "{\"model\":\"gpt-test\",\"max_completion_tokens\":20,\"temperature\":0.5,\"top_p\":1,\"stop\":\"END\","
          "\"messages\":[{\"role\":\"developer\",\"content\":[{\"type\":\"text\",\"text\":\"Be brief.\"}]},"
          "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Weather?\"}]},"
          "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
          "\"function\":{\"name\":\"get_weather\",\"arguments\":\"{}\"}}]},"
          "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"sunny\"}],"
          "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"parameters\":{\"type\":\"object\"}}}]}",
          AUTH_BEARER, "provider-text");
  g_autoptr(SymfonicTestResponse) anthropic =
    post (fixture, ANTHROPIC_PATH,
          "{\"model\":\"claude-test\",\"max_tokens\":20,\"stop_sequences\":[\"END\"],"
          "\"system\":[{\"type\":\"text\",\"text\":\"Be brief.\"}],"
          "\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Weather?\"}]},"
          "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"t\",\"signature\":\"s\"},"
          "{\"type\":\"tool_use\",\"id\":\"c1\",\"name\":\"get_weather\",\"input\":{\"city\":\"Lisbon\"}}]},"
          "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"c1\","
          "\"content\":[{\"type\":\"text\",\"text\":\"sunny\"}]},{\"type\":\"text\",\"text\":\"Thanks\"}]}],"
          "\"tools\":[{\"name\":\"get_weather\",\"description\":\"d\",\"input_schema\":{\"type\":\"object\"}}]}",
          AUTH_API_KEY, "provider-text");

  g_assert_cmpuint (openai->status, ==, 200);
  g_assert_cmpuint (anthropic->status, ==, 200);
}

/* The exchange's own refusals take the provider's shape too. */
static void
test_media_type (Fixture       *fixture,
                 gconstpointer  user_data)
{
  g_autofree char *openai_url = symfonic_test_server_dup_url (fixture->server, OPENAI_PATH);
  g_autofree char *anthropic_url = symfonic_test_server_dup_url (fixture->server, ANTHROPIC_PATH);
  g_autoptr(SymfonicTestResponse) openai =
    symfonic_test_request (fixture->session, "POST", openai_url, "text/plain", OPENAI_BODY (""),
                           "Authorization", "Bearer demo-token-alice", "X-Tenant-ID", "acme", NULL);
  g_autoptr(SymfonicTestResponse) anthropic =
    symfonic_test_request (fixture->session, "POST", anthropic_url, "text/plain", ANTHROPIC_BODY (""),
                           "x-api-key", "demo-token-alice", "X-Tenant-ID", "acme", NULL);

  assert_openai_error (openai, 415,
                       "{\"message\":\"The request body must be application/json\",\"type\":\"invalid_request_error\","
                       "\"param\":null,\"code\":\"unsupported_media_type\"}");
  assert_anthropic_error (anthropic, 415,
                          "{\"type\":\"invalid_request_error\",\"message\":\"The request body must be application/json\"}");
}

/* A failure once the stream runs: the SDKs' own error frame, with the
 * server fault's opaque detail, never the upstream's words. */
static void
test_midstream_error (Fixture       *fixture,
                      gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) openai =
    post (fixture, OPENAI_PATH, OPENAI_BODY (",\"stream\":true"), AUTH_BEARER, "midstream-error");
  g_autoptr(SymfonicTestResponse) anthropic =
    post (fixture, ANTHROPIC_PATH, ANTHROPIC_BODY (",\"stream\":true"), AUTH_BEARER, "midstream-error");
  g_auto(OpenaiStream) openai_stream = { 0 };
  g_auto(AnthropicStream) anthropic_stream = { 0 };
  g_autofree char *names = NULL;

  read_openai_stream (openai, &openai_stream);
  g_assert_cmpstr (openai_stream.content->str, ==, "Partial answer");
  g_assert_null (openai_stream.finish_reason);
  g_assert_nonnull (openai_stream.error);
  assert_json_node (openai_stream.error,
                    "{\"message\":\"" OPAQUE "\",\"type\":\"server_error\",\"param\":null,"
                    "\"code\":\"upstream_unavailable\"}");
  g_assert_true (openai_stream.done);
  g_assert_null (strstr (symfonic_test_response_get_text (openai), "10.0.0.7"));

  read_anthropic_stream (anthropic, &anthropic_stream);
  names = joined_names (&anthropic_stream);
  g_assert_cmpstr (names, ==, "message_start,ping,content_block_start,content_block_delta,content_block_delta,error");
  g_assert_cmpstr (anthropic_stream.text->str, ==, "Partial answer");
  /* an overloaded upstream is Anthropic's overloaded_error, as it said */
  assert_json_node (anthropic_stream.error, "{\"type\":\"overloaded_error\",\"message\":\"" OPAQUE "\"}");
  g_assert_null (strstr (symfonic_test_response_get_text (anthropic), "10.0.0.7"));
}

/* A failure of a non-streamed answer is its status and the provider's
 * error body. */
static void
test_answer_error (Fixture       *fixture,
                   gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) openai = post (fixture, OPENAI_PATH, OPENAI_BODY (""), AUTH_BEARER, "error-first");
  g_autoptr(SymfonicTestResponse) anthropic = post (fixture, ANTHROPIC_PATH, ANTHROPIC_BODY (""), AUTH_BEARER, "error-first");

  assert_openai_error (openai, 502,
                       "{\"message\":\"" OPAQUE "\",\"type\":\"server_error\",\"param\":null,\"code\":\"upstream_error\"}");
  assert_anthropic_error (anthropic, 502, "{\"type\":\"api_error\",\"message\":\"" OPAQUE "\"}");
  g_assert_null (strstr (symfonic_test_response_get_text (openai), "secret"));
  g_assert_null (strstr (symfonic_test_response_get_text (anthropic), "secret"));
}

/* Refused by a limiter: 429 with Retry-After, which the SDKs honour. */
static void
test_rate_limited (Fixture       *fixture,
                   gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) first = post (fixture, LIMITED_PATH, OPENAI_BODY (""), AUTH_BEARER, "provider-text");
  g_autoptr(SymfonicTestResponse) second = post (fixture, LIMITED_PATH, OPENAI_BODY (""), AUTH_BEARER, "provider-text");
  g_autoptr(JsonNode) keep = NULL;
  JsonObject *error;

  g_assert_cmpuint (first->status, ==, 200);
  error = json_object_get_object_member (response_object (second, 429, &keep), "error");
  g_assert_cmpstr (json_object_get_string_member (error, "type"), ==, "rate_limit_error");
  /* OpenAI's own code, which its SDK's users match on */
  g_assert_cmpstr (json_object_get_string_member (error, "code"), ==, "rate_limit_exceeded");
  g_assert_cmpint (atoi (soup_message_headers_get_one (second->headers, "Retry-After")), >=, 1);
}

static void
test_models (Fixture       *fixture,
             gconstpointer  user_data)
{
  g_autofree char *url = symfonic_test_server_dup_url (fixture->server, MODELS_PATH);
  g_autoptr(SymfonicTestResponse) listed =
    symfonic_test_request (fixture->session, "GET", url, NULL, NULL,
                           "Authorization", "Bearer demo-token-alice", "X-Tenant-ID", "acme", NULL);
  g_autoptr(SymfonicTestResponse) anonymous =
    symfonic_test_request (fixture->session, "GET", url, NULL, NULL, "X-Tenant-ID", "acme", NULL);
  g_autoptr(SymfonicTestResponse) posted =
    symfonic_test_request (fixture->session, "POST", url, "application/json", "{}",
                           "Authorization", "Bearer demo-token-alice", "X-Tenant-ID", "acme", NULL);
  g_autoptr(JsonNode) keep = NULL;

  /* the replay source has no model: the route's name stands for it */
  g_assert_cmpstr (symfonic_test_response_get_text (listed), ==,
                   "{\"object\":\"list\",\"data\":[{\"id\":\"openai\",\"object\":\"model\",\"created\":0,"
                   "\"owned_by\":\"symfonic-gateway\"}]}");
  g_assert_cmpuint (listed->status, ==, 200);
  assert_openai_error (anonymous, 401,
                       "{\"message\":\"Missing Authorization or x-api-key header\",\"type\":\"authentication_error\","
                       "\"param\":null,\"code\":\"unauthorized\"}");
  g_assert_cmpuint (posted->status, ==, 405);
  g_assert_cmpstr (soup_message_headers_get_one (posted->headers, "Allow"), ==, "GET, HEAD");
  response_object (posted, 405, &keep);
}

/* --- a typed runtime behind the provider routes ------------------------- */

static void
test_runtime_openai (Fixture       *fixture,
                     gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) response =
    post (fixture, RUNTIME_OPENAI_PATH, OPENAI_BODY (",\"stream\":true,\"stream_options\":{\"include_usage\":true}"),
          AUTH_BEARER, "provider-text");
  g_auto(OpenaiStream) stream = { 0 };
  SymfonicTestUpstreamRecord *record;

  read_openai_stream (response, &stream);
  g_assert_cmpstr (stream.reasoning->str, ==, "Hmm.");
  g_assert_cmpstr (stream.content->str, ==, "Sunny \xC3\xA9t\xC3\xA9 today.");
  g_assert_cmpuint (stream.tool_calls->len, ==, 1);
  /* a typed runtime gives no arguments */
  assert_json_node (g_ptr_array_index (stream.tool_calls, 0),
                    "{\"index\":0,\"id\":\"call_rt\",\"type\":\"function\","
                    "\"function\":{\"name\":\"get_weather\",\"arguments\":\"{}\"}}");
  g_assert_cmpstr (stream.finish_reason, ==, "length");
  assert_json_node (stream.usage, "{\"prompt_tokens\":12,\"completion_tokens\":34,\"total_tokens\":46}");
  g_assert_true (stream.done);

  /* the runtime is asked the last user message */
  record = symfonic_test_upstream_wait_record (fixture->runtime, "/turn", "Hi");
  g_assert_nonnull (record);
}

static void
test_runtime_anthropic (Fixture       *fixture,
                        gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) response =
    post (fixture, RUNTIME_ANTHROPIC_PATH, ANTHROPIC_BODY (",\"stream\":true"), AUTH_API_KEY, "provider-text");
  g_autoptr(SymfonicTestResponse) answer =
    post (fixture, RUNTIME_ANTHROPIC_PATH, ANTHROPIC_BODY (""), AUTH_API_KEY, "provider-text");
  g_auto(AnthropicStream) stream = { 0 };
  g_autofree char *names = NULL;
  g_autoptr(JsonNode) keep = NULL;
  JsonObject *object;

  read_anthropic_stream (response, &stream);
  names = joined_names (&stream);
  g_assert_cmpstr (names, ==,
                   "message_start,ping,"
                   "content_block_start,content_block_delta,content_block_stop,"
                   "content_block_start,content_block_delta,content_block_stop,"
                   "content_block_start,content_block_delta,content_block_stop,"
                   "content_block_start,content_block_delta,content_block_stop,"
                   "message_delta,message_stop");
  g_assert_cmpstr (stream.thinking->str, ==, "Hmm.");
  g_assert_cmpstr (stream.text->str, ==, "Sunny \xC3\xA9t\xC3\xA9 today.");
  g_assert_cmpstr (g_ptr_array_index (stream.inputs, 0), ==, "{}");
  assert_json_node (stream.message_delta,
                    "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\",\"stop_sequence\":null},"
                    "\"usage\":{\"input_tokens\":12,\"output_tokens\":34}}");

  object = response_object (answer, 200, &keep);
  assert_json_member (object, "usage", "{\"input_tokens\":12,\"output_tokens\":34}");
  assert_json_member (object, "content",
                      "[{\"type\":\"thinking\",\"thinking\":\"Hmm.\",\"signature\":\"\"},"
                      "{\"type\":\"text\",\"text\":\"Sunny \u00e9t\u00e9 today.\"},"
                      "{\"type\":\"tool_use\",\"id\":\"call_rt\",\"name\":\"get_weather\",\"input\":{}}]");
}

/* A provider source's tool calls carry the provider's index and their
 * arguments on the typed stream too. */
static void
test_typed_tool_call_payload (Fixture       *fixture,
                              gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) response =
    post (fixture, TYPED_PATH, "{\"query\":\"Hi\"}", AUTH_BEARER, "provider-tools");
  g_autoptr(GPtrArray) frames = stream_frames (response);
  guint calls = 0;

  for (guint i = 0; i < frames->len; i++)
    {
      SymfonicTestFrame *frame = g_ptr_array_index (frames, i);

      if (!g_str_equal (frame->event, "ToolCallStartEvent"))
        continue;
      g_assert_cmpstr (frame->data, ==,
                       calls == 0 ? "{\"tool_name\":\"get_weather\",\"tool_call_id\":\"call_1\",\"index\":0,"
                                    "\"arguments\":\"{\\\"city\\\":\\\"Lisbon\\\"}\"}"
                                  : "{\"tool_name\":\"get_time\",\"tool_call_id\":\"call_2\",\"index\":1,"
                                    "\"arguments\":\"{\\\"tz\\\":\\\"WET\\\"}\"}");
      calls++;
    }
  g_assert_cmpuint (calls, ==, 2);
}

int
main (int    argc,
      char **argv)
{
  symfonic_test_init (&argc, &argv);

#define ADD(name, func) g_test_add ("/provider-routes/" name, Fixture, NULL, fixture_set_up, func, fixture_tear_down)
  ADD ("openai/stream-text", test_openai_stream_text);
  ADD ("openai/stream-without-usage", test_openai_stream_without_usage);
  ADD ("openai/stream-tools", test_openai_stream_tools);
  ADD ("openai/answer", test_openai_answer);
  ADD ("openai/models", test_models);
  ADD ("openai/rate-limited", test_rate_limited);
  ADD ("anthropic/stream-text", test_anthropic_stream_text);
  ADD ("anthropic/stream-tools", test_anthropic_stream_tools);
  ADD ("anthropic/answer", test_anthropic_answer);
  ADD ("auth", test_auth);
  ADD ("bad-requests", test_bad_requests);
  ADD ("media-type", test_media_type);
  ADD ("rich-requests", test_rich_requests);
  ADD ("midstream-error", test_midstream_error);
  ADD ("answer-error", test_answer_error);
  ADD ("runtime/openai", test_runtime_openai);
  ADD ("runtime/anthropic", test_runtime_anthropic);
  ADD ("typed/tool-call-payload", test_typed_tool_call_payload);
#undef ADD

  return g_test_run ();
}
