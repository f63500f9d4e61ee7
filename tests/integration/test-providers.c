/* test-providers.c: the openai and anthropic sources against loopback providers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The providers are the support library's test upstreams, playing streams
 * written from OpenAI's chat completions and Anthropic's Messages
 * streaming references, split at random byte boundaries (the seed is
 * printed: --seed replays it). The gateway serves them on the typed route
 * with authentication, a budget, both text filters and the error map, as
 * a deployment would; the client is real HTTP on the main thread.
 */
#include <string.h>
#include <sys/stat.h>

#include <glib/gstdio.h>

#include "symfonic-test-raw-upstream.h"
#include "symfonic-test-support.h"
#include "symfonic-test-upstream.h"

#define API_KEY "sk-test-KEY-7f3a9c"
/* in every provider error body: it must reach neither client nor log */
#define SECRET "PROVIDER-INTERNAL-DETAIL-4411"
#define CLIENT_BODY "{\"query\":\"hello there\"}"
/* issue 10: the provider sees its connection closed within 100 ms */
#define CLOSE_LIMIT_US (100 * G_TIME_SPAN_MILLISECOND)

static GMutex log_lock;
static GPtrArray *log_lines;

static GLogWriterOutput
record_log (GLogLevelFlags   log_level,
            const GLogField *fields,
            gsize            n_fields,
            gpointer         user_data)
{
  for (gsize i = 0; i < n_fields; i++)
    {
      if (g_str_equal (fields[i].key, "MESSAGE") && fields[i].length < 0)
        {
          g_mutex_lock (&log_lock);
          g_ptr_array_add (log_lines, g_strdup (fields[i].value));
          g_mutex_unlock (&log_lock);
        }
    }

  return g_log_writer_default (log_level, fields, n_fields, user_data);
}

static gboolean
log_contains (const char *needle)
{
  gboolean found = FALSE;

  g_mutex_lock (&log_lock);
  for (guint i = 0; i < log_lines->len && !found; i++)
    found = strstr (g_ptr_array_index (log_lines, i), needle) != NULL;
  g_mutex_unlock (&log_lock);

  return found;
}

/* --- provider streams, from the public API references -------------------- */

#define OPENAI_CHUNK(choice) \
  "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test-0613\"," \
  "\"system_fingerprint\":\"fp_1\",\"choices\":[" choice "]}\n\n"
#define OPENAI_DELTA(delta) OPENAI_CHUNK ("{\"index\":0,\"delta\":" delta ",\"logprobs\":null,\"finish_reason\":null}")

/* reasoning (the vLLM/DeepSeek convention), text with a citation tag and a
 * memory block, two parallel tool calls, the finish, the usage-only chunk */
static const char openai_turn[] =
  ": keep-alive comment\n\n"
  OPENAI_DELTA ("{\"role\":\"assistant\",\"content\":\"\"}")
  OPENAI_DELTA ("{\"reasoning_content\":\"Think\"}")
  OPENAI_DELTA ("{\"reasoning_content\":\"ing.\"}")
  OPENAI_DELTA ("{\"content\":\"Tea is calm [semantic:n1].\"}")
  OPENAI_DELTA ("{\"content\":\"<memory_ops>[{\\\"op\\\":\\\"add\\\",\\\"text\\\":\\\"likes tea\\\"}]</memory_ops> Really, caf\\u00e9.\"}")
  OPENAI_DELTA ("{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\","
                "\"function\":{\"name\":\"lookup\",\"arguments\":\"\"}}]}")
  OPENAI_DELTA ("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"q\\\":\"}}]}")
  /* as some compatible servers do, the id again */
  OPENAI_DELTA ("{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"function\":{\"arguments\":\"\\\"tea\\\"}\"}}]}")
  OPENAI_DELTA ("{\"tool_calls\":[{\"index\":1,\"id\":\"call_b\",\"type\":\"function\","
                "\"function\":{\"name\":\"clock\",\"arguments\":\"{}\"}}]}")
  OPENAI_CHUNK ("{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"tool_calls\"}")
  "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test-0613\","
  "\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":34,\"total_tokens\":46}}\n\n"
  "data: [DONE]\n\n";

#define ANTHROPIC_EVENT(name, data) "event: " name "\ndata: " data "\n\n"
#define ANTHROPIC_DELTA(index, delta) \
  ANTHROPIC_EVENT ("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":" index ",\"delta\":" delta "}")
#define ANTHROPIC_START \
  ANTHROPIC_EVENT ("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\"," \
                   "\"role\":\"assistant\",\"content\":[],\"model\":\"claude-test-1\",\"stop_reason\":null," \
                   "\"stop_sequence\":null,\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}")
#define ANTHROPIC_TEXT_BLOCK(index) \
  ANTHROPIC_EVENT ("content_block_start", "{\"type\":\"content_block_start\",\"index\":" index \
                   ",\"content_block\":{\"type\":\"text\",\"text\":\"\"}}")
#define ANTHROPIC_STOP(index) \
  ANTHROPIC_EVENT ("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":" index "}")
#define ANTHROPIC_PING ANTHROPIC_EVENT ("ping", "{\"type\": \"ping\"}")

static const char anthropic_turn[] =
  ANTHROPIC_START
  ANTHROPIC_EVENT ("content_block_start", "{\"type\":\"content_block_start\",\"index\":0,"
                   "\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}")
  ANTHROPIC_DELTA ("0", "{\"type\":\"thinking_delta\",\"thinking\":\"Think\"}")
  ANTHROPIC_PING
  ANTHROPIC_DELTA ("0", "{\"type\":\"thinking_delta\",\"thinking\":\"ing.\"}")
  ANTHROPIC_DELTA ("0", "{\"type\":\"signature_delta\",\"signature\":\"EqQBCgIYAhIM1gbcDa9GJwZA\"}")
  ANTHROPIC_STOP ("0")
  ANTHROPIC_TEXT_BLOCK ("1")
  ANTHROPIC_DELTA ("1", "{\"type\":\"text_delta\",\"text\":\"Tea is calm [semantic:n1].\"}")
  ANTHROPIC_DELTA ("1", "{\"type\":\"text_delta\",\"text\":\"<memory_ops>[{\\\"op\\\":\\\"add\\\",\\\"text\\\":"
                   "\\\"likes tea\\\"}]</memory_ops> Really, caf\\u00e9.\"}")
  ANTHROPIC_STOP ("1")
  ANTHROPIC_EVENT ("content_block_start", "{\"type\":\"content_block_start\",\"index\":2,"
                   "\"content_block\":{\"type\":\"tool_use\",\"id\":\"call_a\",\"name\":\"lookup\",\"input\":{}}}")
  ANTHROPIC_DELTA ("2", "{\"type\":\"input_json_delta\",\"partial_json\":\"\"}")
  ANTHROPIC_DELTA ("2", "{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"q\\\":\"}")
  ANTHROPIC_DELTA ("2", "{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"tea\\\"}\"}")
  ANTHROPIC_STOP ("2")
  ANTHROPIC_EVENT ("content_block_start", "{\"type\":\"content_block_start\",\"index\":3,"
                   "\"content_block\":{\"type\":\"tool_use\",\"id\":\"call_b\",\"name\":\"clock\",\"input\":{}}}")
  ANTHROPIC_DELTA ("3", "{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}")
  ANTHROPIC_STOP ("3")
  ANTHROPIC_EVENT ("message_delta", "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\","
                   "\"stop_sequence\":null},\"usage\":{\"output_tokens\":34}}")
  ANTHROPIC_EVENT ("message_stop", "{\"type\":\"message_stop\"}");

/* what the client gets of either turn, the filters having run */
#define TURN_THINKING "Thinking."
#define TURN_TEXT "Tea is calm. Really, caf\xC3\xA9."

/* --- the gateway ------------------------------------------------------- */

typedef struct
{
  const char *type;
  const char *path;
  const char *turn;
  /* the provider's index of the turn's first tool call */
  guint       first_tool_index;
} Provider;

static const Provider openai = { "openai", "/v1/chat/completions", openai_turn, 0 };
static const Provider anthropic = { "anthropic", "/v1/messages", anthropic_turn, 2 };

static char *
write_file (const char *name,
            const char *contents)
{
  char *path = g_build_filename (symfonic_test_private_dir (), name, NULL);
  g_autoptr(GError) error = NULL;

  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);

  return path;
}

/* @base_url is the provider's root; @budget_lines configure the budget. */
static SymfonicServer *
gateway_new (const Provider *provider,
             const char     *base_url,
             const char     *source_lines,
             const char     *budget_lines)
{
  g_autofree char *key_file = write_file ("provider.key", API_KEY "\n");
  g_autofree char *prompt_file = write_file ("system.txt", "You are terse.\n");
  g_autofree char *text = NULL;

  text = g_strdup_printf ("[gateway]\nlisten=127.0.0.1:8080\nworkers=2\n\n"
                          "[route:typed]\npath=" SYMFONIC_TEST_TYPED_PATH "\nkind=typed\nsource=up\n"
                          "stages=auth;budget;extraction;citation;errors\n\n"
                          "[route:provider]\npath=/p\nkind=%s\nsource=up\n"
                          "stages=auth;budget;extraction;citation;errors\n\n"
                          "[source:up]\ntype=%s\nbase-url=%s\nmodel=test-model\napi-key-file=%s\n"
                          "system-prompt-file=%s\nmax-tokens=256\nextra-headers=X-Org: o-1\n%s\n\n"
                          "[stage:auth]\ntype=auth\ntokens-file=" SYMFONIC_TEST_DATA_DIR "/demo-tokens.ini\n\n"
                          "[stage:budget]\ntype=budget\n%s\n\n"
                          "[stage:extraction]\ntype=extraction\n\n"
                          "[stage:citation]\ntype=citation\n\n"
                          "[stage:errors]\ntype=error-map\ntable=" SYMFONIC_TEST_DATA_DIR "/error-map.ini\n",
                          provider->type, provider->type, base_url, key_file, prompt_file,
                          source_lines != NULL ? source_lines : "",
                          budget_lines != NULL ? budget_lines : "tokens-per-window=1000000");

  return symfonic_test_server_new (text, symfonic_test_private_dir (), 2);
}

static SymfonicTestStream *
post_typed (SymfonicServer *server,
            SoupSession    *session)
{
  g_autofree char *url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);

  return symfonic_test_stream_post (session, url, CLIENT_BODY,
                                    "Authorization", "Bearer demo-token-alice",
                                    "X-Tenant-ID", "acme",
                                    NULL);
}

/* Serves @body at the provider's endpoint under /v1; returns the base URL. */
static char *
provider_add (SymfonicTestUpstream *fake,
              const Provider       *provider,
              guint                 status,
              const char           *content_type,
              const char           *body,
              SymfonicTestSplit     split,
              SymfonicTestAfter     after,
              guint                 hold_ms)
{
  g_autoptr(GBytes) bytes = g_bytes_new (body, strlen (body));
  SymfonicTestScenario scenario = {
    .status = status,
    .content_type = content_type,
    .body = bytes,
    .split = split,
    .seed = g_test_rand_int (),
    .delay_ms = split == SYMFONIC_TEST_SPLIT_WHOLE ? 0 : 1,
    .hold_ms = hold_ms,
    .after = after,
  };
  g_autofree char *url = NULL;

  g_test_message ("%s stream split with seed %u", provider->type, scenario.seed);
  url = symfonic_test_upstream_add (fake, provider->path, &scenario);
  g_assert_true (g_str_has_suffix (url, provider->path));

  return g_strndup (url, strlen (url) - strlen (provider->path) + strlen ("/v1"));
}

static SymfonicTestFrame *
frame_at (SymfonicTestStream *stream,
          guint               i)
{
  return g_ptr_array_index (stream->frames, i);
}

static void
assert_json_equal (const char *actual,
                   const char *expected)
{
  g_autoptr(JsonNode) a = json_from_string (actual, NULL);
  g_autoptr(JsonNode) e = json_from_string (expected, NULL);

  g_assert_nonnull (a);
  if (!json_node_equal (a, e))
    g_error ("JSON differs:\n  got      %s\n  expected %s", actual, expected);
}

static const char *
frame_text (SymfonicTestFrame *frame)
{
  static char *text;
  g_autoptr(JsonNode) data = symfonic_test_json_parse (frame->data);

  g_free (text);
  text = g_strdup (json_object_get_string_member (json_node_get_object (data), "text"));

  return text;
}

/* Neither the key nor the provider's own words reach the client or the log. */
static void
assert_nothing_leaked (const char *client_output)
{
  g_assert_null (strstr (client_output, API_KEY));
  g_assert_null (strstr (client_output, SECRET));
  g_assert_false (log_contains (API_KEY));
  g_assert_false (log_contains (SECRET));
}

/* --- a whole turn ----------------------------------------------------------- */

/* The same turn through the provider's own route: the arguments, in the
 * fragments the provider streamed, and Anthropic's thinking signature
 * reach it, as that provider's wire writes them. */
static void
check_turn_on_provider_route (const Provider *provider,
                              SoupSession    *session,
                              SymfonicServer *server)
{
  gboolean is_anthropic = g_str_equal (provider->type, "anthropic");
  g_autofree char *url = symfonic_test_server_dup_url (server, is_anthropic ? "/p/messages" : "/p/chat/completions");
  g_autoptr(SymfonicTestStream) stream =
    symfonic_test_stream_post (session, url,
                               "{\"model\":\"m\",\"max_tokens\":64,\"stream\":true,"
                               "\"messages\":[{\"role\":\"user\",\"content\":\"Why?\"}]}",
                               "Authorization", "Bearer demo-token-alice", "X-Tenant-ID", "acme", NULL);

  symfonic_test_stream_wait_done (stream);
  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, 200);
  if (is_anthropic)
    {
      g_assert_nonnull (strstr (stream->raw->str, "\"partial_json\":\"{\\\"q\\\":\"}"));
      g_assert_nonnull (strstr (stream->raw->str, "\"partial_json\":\"\\\"tea\\\"}\"}"));
      g_assert_nonnull (strstr (stream->raw->str, "\"signature\":\"EqQBCgIYAhIM1gbcDa9GJwZA\""));
    }
  else
    {
      g_assert_nonnull (strstr (stream->raw->str, "\"arguments\":\"{\\\"q\\\":\"}"));
      g_assert_nonnull (strstr (stream->raw->str, "\"arguments\":\"\\\"tea\\\"}\"}"));
      g_assert_null (strstr (stream->raw->str, "signature"));
    }
  g_assert_nonnull (strstr (stream->raw->str, "\"id\":\"call_a\""));
  g_assert_nonnull (strstr (stream->raw->str, "\"id\":\"call_b\""));
  assert_nothing_leaked (stream->raw->str);
}

static void
string_free (gpointer data)
{
  g_string_free (data, TRUE);
}

static void
check_turn (const Provider    *provider,
            SymfonicTestSplit  split)
{
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autofree char *base_url = provider_add (fake, provider, 200, "text/event-stream", provider->turn,
                                            split, SYMFONIC_TEST_AFTER_CLOSE, 0);
  g_autoptr(SymfonicServer) server = gateway_new (provider, base_url, NULL, NULL);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = post_typed (server, session);
  g_autoptr(GString) thinking = g_string_new (NULL);
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GPtrArray) tools = g_ptr_array_new_with_free_func ((GDestroyNotify) json_node_unref);
  g_autoptr(GHashTable) arguments = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, string_free);
  guint signatures = 0;
  SymfonicTestFrame *last;
  g_autoptr(JsonNode) terminal = NULL;

  symfonic_test_stream_wait_done (stream);
  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, 200);

  for (guint i = 0; i + 1 < stream->frames->len; i++)
    {
      SymfonicTestFrame *frame = frame_at (stream, i);

      g_assert_cmpstr (frame->event, !=, "error");
      if (g_str_equal (frame->event, "ThinkingDeltaEvent"))
        {
          g_string_append (thinking, frame_text (frame));
          /* Anthropic's signature is for the Anthropic route only */
          signatures += strstr (frame->data, "signature") != NULL;
        }
      else if (g_str_equal (frame->event, "TextDeltaEvent"))
        {
          /* the answer comes before the tool calls, as the provider sent it */
          g_assert_cmpuint (tools->len, ==, 0);
          g_string_append (text, frame_text (frame));
        }
      else if (g_str_equal (frame->event, "ToolCallStartEvent"))
        {
          JsonNode *start = symfonic_test_json_parse (frame->data);
          JsonObject *object = json_node_get_object (start);

          g_ptr_array_add (tools, start);
          g_hash_table_insert (arguments, g_strdup (json_object_get_string_member (object, "tool_call_id")),
                               g_string_new (json_object_get_string_member (object, "arguments")));
        }
      else if (g_str_equal (frame->event, "ToolCallDeltaEvent"))
        {
          g_autoptr(JsonNode) delta = symfonic_test_json_parse (frame->data);
          JsonObject *object = json_node_get_object (delta);
          GString *so_far = g_hash_table_lookup (arguments, json_object_get_string_member (object, "tool_call_id"));

          /* a fragment follows its call's start, and is never empty */
          g_assert_nonnull (so_far);
          g_assert_cmpstr (json_object_get_string_member (object, "arguments"), !=, "");
          g_string_append (so_far, json_object_get_string_member (object, "arguments"));
        }
    }
  g_assert_cmpstr (thinking->str, ==, TURN_THINKING);
  g_assert_cmpuint (signatures, ==, 0);
  g_assert_cmpstr (text->str, ==, TURN_TEXT);
  /* each call once, in the provider's order, as it starts, with the
   * provider's index; its arguments follow in fragments, as the provider
   * streamed them */
  g_assert_cmpuint (tools->len, ==, 2);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (g_ptr_array_index (tools, 0)), "tool_name"), ==, "lookup");
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (g_ptr_array_index (tools, 0)), "tool_call_id"), ==, "call_a");
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (g_ptr_array_index (tools, 0)), "index"), ==,
                   provider->first_tool_index);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (g_ptr_array_index (tools, 1)), "tool_name"), ==, "clock");
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (g_ptr_array_index (tools, 1)), "index"), ==,
                   provider->first_tool_index + 1);
  g_assert_cmpstr (((GString *) g_hash_table_lookup (arguments, "call_a"))->str, ==, "{\"q\":\"tea\"}");
  g_assert_cmpstr (((GString *) g_hash_table_lookup (arguments, "call_b"))->str, ==, "{}");

  last = frame_at (stream, stream->frames->len - 1);
  g_assert_cmpstr (last->event, ==, "ResponseCompleteEvent");
  g_assert_cmpstr (frame_text (last), ==, TURN_TEXT);
  /* why it ended, in the typed stream's words, whatever the provider */
  terminal = symfonic_test_json_parse (last->data);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (terminal), "finish_reason"), ==, "tool_calls");
  /* the filters ran on this source's text too */
  g_assert_null (strstr (stream->raw->str, "[semantic"));
  g_assert_null (strstr (stream->raw->str, "memory_ops"));
  assert_nothing_leaked (stream->raw->str);

  check_turn_on_provider_route (provider, session, server);
  symfonic_server_stop (server);
}

static void
test_openai_turn_whole (void)
{
  check_turn (&openai, SYMFONIC_TEST_SPLIT_WHOLE);
}

static void
test_openai_turn_random (void)
{
  check_turn (&openai, SYMFONIC_TEST_SPLIT_RANDOM);
}

static void
test_anthropic_turn_whole (void)
{
  check_turn (&anthropic, SYMFONIC_TEST_SPLIT_WHOLE);
}

static void
test_anthropic_turn_random (void)
{
  check_turn (&anthropic, SYMFONIC_TEST_SPLIT_RANDOM);
}

/* --- what the provider is sent -------------------------------------------- */

typedef struct
{
  const Provider *provider;
  const char     *body;
  /* header name, value (NULL: absent), ..., NULL */
  const char     *headers[12];
} RequestCase;

static const RequestCase requests[] = {
  { &openai,
    "{\"model\":\"test-model\",\"messages\":[{\"role\":\"system\",\"content\":\"You are terse.\"},"
    "{\"role\":\"user\",\"content\":\"hello there\"}],\"max_tokens\":256,\"stream\":true,"
    "\"stream_options\":{\"include_usage\":true}}",
    { "Authorization", "Bearer " API_KEY, "X-Org", "o-1", "Accept", "text/event-stream", "x-api-key", NULL,
      /* the client's identity is not the provider's business */
      "X-Tenant-ID", NULL, NULL } },
  { &anthropic,
    "{\"model\":\"test-model\",\"system\":\"You are terse.\",\"messages\":[{\"role\":\"user\","
    "\"content\":[{\"type\":\"text\",\"text\":\"hello there\"}]}],\"max_tokens\":256,\"stream\":true}",
    { "x-api-key", API_KEY, "anthropic-version", "2023-06-01", "X-Org", "o-1", "Authorization", NULL,
      "X-Tenant-ID", NULL, NULL } },
};

static void
test_request (gconstpointer data)
{
  const RequestCase *c = data;
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autofree char *base_url = provider_add (fake, c->provider, 200, "text/event-stream", c->provider->turn,
                                            SYMFONIC_TEST_SPLIT_WHOLE, SYMFONIC_TEST_AFTER_CLOSE, 0);
  g_autoptr(SymfonicServer) server = gateway_new (c->provider, base_url, NULL, NULL);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = post_typed (server, session);
  SymfonicTestUpstreamRecord *record;
  g_autofree char *sent = NULL;

  symfonic_test_stream_wait_done (stream);
  record = symfonic_test_upstream_wait_record (fake, c->provider->path, NULL);
  sent = json_to_string (record->body, FALSE);
  assert_json_equal (sent, c->body);
  for (guint i = 0; c->headers[i] != NULL; i += 2)
    g_assert_cmpstr (soup_message_headers_get_one (record->headers, c->headers[i]), ==, c->headers[i + 1]);

  symfonic_server_stop (server);
}

/* --- usage settles the budget ------------------------------------------- */

/* A window of 100 tokens and 50 reserved per request: the provider's
 * report (12 + 34 = 46, or 25 + 34 = 59) is what each turn costs. A
 * source that reported nothing would be charged its estimate, a handful of
 * tokens, and a third turn would still fit. */
static void
check_usage (const Provider *provider,
             guint           admitted)
{
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autofree char *base_url = provider_add (fake, provider, 200, "text/event-stream", provider->turn,
                                            SYMFONIC_TEST_SPLIT_RANDOM, SYMFONIC_TEST_AFTER_CLOSE, 0);
  g_autoptr(SymfonicServer) server =
    gateway_new (provider, base_url, NULL, "tokens-per-window=100\nreserve-tokens=50\nwindow-seconds=3600");
  g_autoptr(SoupSession) session = symfonic_test_session_new ();

  for (guint i = 0; i <= admitted; i++)
    {
      g_autoptr(SymfonicTestStream) stream = post_typed (server, session);

      symfonic_test_stream_wait_done (stream);
      g_test_message ("turn %u: HTTP %u", i, stream->status);
      if (i < admitted)
        {
          g_assert_cmpuint (stream->status, ==, 200);
          g_assert_cmpstr (frame_at (stream, stream->frames->len - 1)->event, ==, "ResponseCompleteEvent");
        }
      else
        {
          g_assert_cmpuint (stream->status, ==, 429);
          g_assert_nonnull (strstr (stream->raw->str, "\"budget_exceeded\""));
        }
    }

  symfonic_server_stop (server);
}

static void
test_openai_usage (void)
{
  check_usage (&openai, 2);
}

static void
test_anthropic_usage (void)
{
  check_usage (&anthropic, 1);
}

/* --- failures ----------------------------------------------------------------- */

typedef struct
{
  const char        *name;
  const Provider    *provider;
  guint              status;
  const char        *content_type;
  const char        *body;
  SymfonicTestAfter  after;
  const char        *settings;
  /* what the client gets: a refusal before any event (an HTTP status and
   * a JSON body), or 200 and one error frame after the streamed ones */
  guint              client_status;
  const char        *code;
} FailureCase;

#define OPENAI_ONE_DELTA OPENAI_DELTA ("{\"content\":\"partial\"}")
#define ANTHROPIC_ONE_DELTA ANTHROPIC_START ANTHROPIC_TEXT_BLOCK ("0") \
  ANTHROPIC_DELTA ("0", "{\"type\":\"text_delta\",\"text\":\"partial\"}")
#define ANTHROPIC_ERROR(type) \
  ANTHROPIC_EVENT ("error", "{\"type\":\"error\",\"error\":{\"type\":\"" type "\",\"message\":\"" SECRET "\"}}")

static const FailureCase failures[] = {
  { "openai/http-500", &openai, 500, "application/json",
    "{\"error\":{\"message\":\"" SECRET "\",\"type\":\"server_error\"}}", SYMFONIC_TEST_AFTER_CLOSE, NULL,
    502, "upstream_error" },
  /* the gateway's own key: a status no SDK retries, and x-should-retry */
  { "openai/http-401", &openai, 401, "application/json",
    "{\"error\":{\"message\":\"Incorrect API key " SECRET "\",\"type\":\"invalid_request_error\"}}",
    SYMFONIC_TEST_AFTER_CLOSE, NULL, 403, "upstream_refused" },
  { "anthropic/http-403", &anthropic, 403, "application/json",
    "{\"type\":\"error\",\"error\":{\"type\":\"permission_error\",\"message\":\"" SECRET "\"}}",
    SYMFONIC_TEST_AFTER_CLOSE, NULL, 403, "upstream_refused" },
  { "anthropic/http-529", &anthropic, 529, "application/json",
    "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"" SECRET "\"}}",
    SYMFONIC_TEST_AFTER_CLOSE, NULL, 500, "upstream_unavailable" },
  /* the client's request, refused by the provider: the client's to fix */
  { "openai/http-400", &openai, 400, "application/json",
    "{\"error\":{\"message\":\"" SECRET "\",\"type\":\"invalid_request_error\"}}",
    SYMFONIC_TEST_AFTER_CLOSE, NULL, 400, "bad_request" },
  { "openai/not-an-event-stream", &openai, 200, "application/json", "{\"id\":\"" SECRET "\"}",
    SYMFONIC_TEST_AFTER_CLOSE, NULL, 502, "upstream_error" },
  { "openai/error-chunk", &openai, 200, "text/event-stream",
    OPENAI_ONE_DELTA "data: {\"error\":{\"message\":\"" SECRET "\",\"type\":\"server_error\"}}\n\n",
    SYMFONIC_TEST_AFTER_CLOSE, NULL, 200, "upstream_error" },
  { "openai/eof-without-done", &openai, 200, "text/event-stream", OPENAI_ONE_DELTA,
    SYMFONIC_TEST_AFTER_CLOSE, NULL, 200, "upstream_error" },
  { "openai/malformed-chunk", &openai, 200, "text/event-stream", OPENAI_ONE_DELTA "data: {\"" SECRET "\n\n",
    SYMFONIC_TEST_AFTER_CLOSE, NULL, 200, "upstream_error" },
  { "anthropic/overloaded-mid-stream", &anthropic, 200, "text/event-stream",
    ANTHROPIC_ONE_DELTA ANTHROPIC_PING ANTHROPIC_ERROR ("overloaded_error"), SYMFONIC_TEST_AFTER_CLOSE, NULL,
    200, "upstream_unavailable" },
  { "anthropic/api-error-mid-stream", &anthropic, 200, "text/event-stream",
    ANTHROPIC_ONE_DELTA ANTHROPIC_ERROR ("api_error"), SYMFONIC_TEST_AFTER_CLOSE, NULL, 200, "upstream_error" },
  /* before any event: a real status */
  { "anthropic/rate-limit-first", &anthropic, 200, "text/event-stream",
    ANTHROPIC_PING ANTHROPIC_ERROR ("rate_limit_error"), SYMFONIC_TEST_AFTER_CLOSE, NULL, 429, "rate_limited" },
  { "anthropic/overloaded-first", &anthropic, 200, "text/event-stream",
    ANTHROPIC_ERROR ("overloaded_error"), SYMFONIC_TEST_AFTER_CLOSE, NULL, 500, "upstream_unavailable" },
  { "openai/idle-stall", &openai, 200, "text/event-stream", OPENAI_ONE_DELTA,
    SYMFONIC_TEST_AFTER_STALL, "idle-timeout=1", 200, "upstream_timeout" },
  { "anthropic/stall-before-first-event", &anthropic, 200, "text/event-stream", ": nothing yet\n\n",
    SYMFONIC_TEST_AFTER_STALL, "idle-timeout=1", 500, "upstream_timeout" },
  /* bytes that carry no event do not hold the client's head past
   * `timeout`, however often they come */
  { "anthropic/only-pings", &anthropic, 200, "text/event-stream", ANTHROPIC_PING,
    SYMFONIC_TEST_AFTER_KEEPALIVE, "timeout=1\nidle-timeout=30", 500, "upstream_timeout" },
  { "openai/only-comments", &openai, 200, "text/event-stream", ": keep-alive\n\n",
    SYMFONIC_TEST_AFTER_KEEPALIVE, "timeout=1\nidle-timeout=30", 500, "upstream_timeout" },
};

static void
assert_failure (SymfonicTestStream *stream,
                guint               client_status,
                const char         *code)
{
  g_autoptr(JsonNode) data = NULL;
  g_autofree char *quoted = g_strdup_printf ("\"code\":\"%s\"", code);

  g_assert_cmpuint (stream->status, ==, client_status);
  if (client_status != 200)
    {
      /* a refusal: JSON, never an event stream */
      g_assert_cmpuint (stream->frames->len, ==, 0);
      data = symfonic_test_json_parse (stream->raw->str);
      g_assert_cmpint (json_object_get_int_member (json_node_get_object (data), "status"), ==, client_status);
      g_assert_cmpstr (json_object_get_string_member (json_node_get_object (data), "code"), ==, code);
      /* retrying what the operator must fix only costs the provider more */
      g_assert_cmpstr (soup_message_headers_get_one (soup_message_get_response_headers (stream->message),
                                                     "x-should-retry"),
                       ==, g_str_equal (code, "upstream_refused") ? "false" : NULL);
      return;
    }

  g_assert_cmpuint (stream->frames->len, >=, 2);
  for (guint i = 0; i + 1 < stream->frames->len; i++)
    {
      g_assert_cmpstr (frame_at (stream, i)->event, !=, "error");
      g_assert_cmpstr (frame_at (stream, i)->event, !=, "ResponseCompleteEvent");
    }
  g_assert_cmpstr (frame_at (stream, stream->frames->len - 1)->event, ==, "error");
  g_assert_nonnull (strstr (frame_at (stream, stream->frames->len - 1)->data, quoted));
}

static void
test_failure (gconstpointer data)
{
  const FailureCase *c = data;
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autofree char *base_url = provider_add (fake, c->provider, c->status, c->content_type, c->body,
                                            SYMFONIC_TEST_SPLIT_RANDOM, c->after, 0);
  g_autoptr(SymfonicServer) server = gateway_new (c->provider, base_url, c->settings, NULL);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = post_typed (server, session);

  symfonic_test_stream_wait_done (stream);
  g_test_message ("%s: HTTP %u after %" G_GINT64_FORMAT " ms: %s", c->name, stream->status,
                  (stream->end_us - stream->start_us) / 1000, stream->raw->str);
  g_assert_no_error (stream->error);
  assert_failure (stream, c->client_status, c->code);
  assert_nothing_leaked (stream->raw->str);

  if (c->after != SYMFONIC_TEST_AFTER_CLOSE)
    {
      /* idle-timeout=1, or timeout=1 for the first event: not before a
       * second, and not much after */
      g_assert_cmpint (stream->end_us - stream->start_us, >=, 900 * G_TIME_SPAN_MILLISECOND);
      g_assert_cmpint (stream->end_us - stream->start_us, <, 5 * G_USEC_PER_SEC);
    }

  symfonic_server_stop (server);
}

/* 429 with the provider's Retry-After, before the client's head: the
 * client gets the same status and delay, and none of the body. */
static void
test_rate_limited (void)
{
  g_autoptr(SymfonicTestRawUpstream) raw = symfonic_test_raw_upstream_new ();
  static const char * const answer[] = {
    "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nRetry-After: 17\r\n"
    "Content-Length: 49\r\n\r\n{\"error\":{\"message\":\"" SECRET "\"}}   ",
    NULL,
  };
  g_autofree char *url = symfonic_test_raw_upstream_dup_url (raw);
  g_autoptr(SymfonicServer) server = NULL;
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = NULL;

  symfonic_test_raw_upstream_set_answer (raw, answer, TRUE);
  server = gateway_new (&openai, url, NULL, NULL);
  stream = post_typed (server, session);
  symfonic_test_stream_wait_done (stream);
  g_test_message ("429: %s", stream->raw->str);

  assert_failure (stream, 429, "rate_limited");
  g_assert_cmpstr (soup_message_headers_get_one (soup_message_get_response_headers (stream->message), "Retry-After"),
                   ==, "17");
  assert_nothing_leaked (stream->raw->str);

  symfonic_server_stop (server);
}

static void
test_connection_refused (void)
{
  g_autofree char *url = g_strdup_printf ("http://127.0.0.1:%u/v1", symfonic_test_closed_port ());
  g_autoptr(SymfonicServer) server = gateway_new (&anthropic, url, NULL, NULL);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = post_typed (server, session);

  symfonic_test_stream_wait_done (stream);
  assert_failure (stream, 500, "upstream_unavailable");
  g_assert_null (strstr (stream->raw->str, "127.0.0.1"));
  assert_nothing_leaked (stream->raw->str);

  symfonic_server_stop (server);
}

/* A provider whose kernel accepts but which never answers: the client
 * waits no longer than `timeout` for the head. */
static void
test_no_first_byte (void)
{
  guint16 port;
  /* only held open: its kernel accepts, nothing reads */
  g_autoptr(GSocket) listener G_GNUC_UNUSED = symfonic_test_loopback_socket (TRUE, &port);
  g_autofree char *url = g_strdup_printf ("http://127.0.0.1:%u/v1", port);
  g_autoptr(SymfonicServer) server = gateway_new (&openai, url, "timeout=1", NULL);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = post_typed (server, session);

  symfonic_test_stream_wait_done (stream);
  g_test_message ("no first byte: HTTP %u after %" G_GINT64_FORMAT " ms", stream->status,
                  (stream->end_us - stream->start_us) / 1000);
  assert_failure (stream, 500, "upstream_timeout");
  g_assert_cmpint (stream->end_us - stream->start_us, >=, 900 * G_TIME_SPAN_MILLISECOND);
  g_assert_cmpint (stream->end_us - stream->start_us, <, 5 * G_USEC_PER_SEC);

  symfonic_server_stop (server);
}

/* A provider that answers with interim heads, one after another: each is
 * a byte of progress for the idle timeout, none an answer, so only the
 * deadline of the first event ends the wait. */
static void
test_interim_heads_forever (void)
{
  g_autoptr(SymfonicTestRawUpstream) raw = symfonic_test_raw_upstream_new ();
  g_autoptr(GPtrArray) pieces = g_ptr_array_new ();
  g_autofree char *url = symfonic_test_raw_upstream_dup_url (raw);
  g_autoptr(SymfonicServer) server = NULL;
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = NULL;

  /* at least 2 ms apart: longer than the test allows the wait */
  for (guint i = 0; i < 3000; i++)
    g_ptr_array_add (pieces, (gpointer) "HTTP/1.1 100 Continue\r\n\r\n");
  g_ptr_array_add (pieces, NULL);
  symfonic_test_raw_upstream_set_answer (raw, (const char * const *) pieces->pdata, FALSE);
  server = gateway_new (&openai, url, "timeout=1", NULL);
  stream = post_typed (server, session);

  symfonic_test_stream_wait_done (stream);
  g_test_message ("interim heads: HTTP %u after %" G_GINT64_FORMAT " ms", stream->status,
                  (stream->end_us - stream->start_us) / 1000);
  assert_failure (stream, 500, "upstream_timeout");
  g_assert_cmpint (stream->end_us - stream->start_us, >=, 900 * G_TIME_SPAN_MILLISECOND);
  g_assert_cmpint (stream->end_us - stream->start_us, <, 3 * G_USEC_PER_SEC);

  symfonic_server_stop (server);
}

/* --- the client goes away ------------------------------------------------ */

static gboolean
tick_cb (gpointer data)
{
  return G_SOURCE_CONTINUE;
}

/* Hangs up after @n_frames and returns how long the provider took to see
 * its connection close. */
static gint64
hang_up_after (SymfonicTestUpstream *fake,
               const Provider       *provider,
               SymfonicServer       *server,
               guint                 n_frames)
{
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = post_typed (server, session);
  SymfonicTestUpstreamRecord *record = NULL;
  GSource *tick = g_timeout_source_new (1);
  gint64 deadline = g_get_monotonic_time () + SYMFONIC_TEST_WAIT_MS * G_TIME_SPAN_MILLISECOND;
  gint64 took;

  g_source_set_callback (tick, tick_cb, NULL, NULL);
  g_source_attach (tick, NULL);
  /* the client's request goes out from this thread's main loop */
  while ((record = symfonic_test_upstream_find_record (fake, provider->path, NULL)) == NULL &&
         g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_source_destroy (tick);
  g_source_unref (tick);
  g_assert_nonnull (record);
  if (n_frames > 0)
    symfonic_test_stream_wait_frames (stream, n_frames);
  g_assert_false (stream->done);

  took = symfonic_test_upstream_time_hang_up (fake, record, stream, g_steal_pointer (&session));
  g_assert_cmpint (took, >=, 0);
  g_assert_false (symfonic_test_upstream_get_completed (fake, record));

  return took;
}

/* While the client waits for the first token: the provider only sends
 * comments (as OpenRouter does while it queues), the client's head is
 * still held. The provider writes every 20 ms, so it notices a close. */
static void
test_disconnect_before_first_token (void)
{
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autofree char *base_url = provider_add (fake, &openai, 200, "text/event-stream", ": PROCESSING\n\n",
                                            SYMFONIC_TEST_SPLIT_WHOLE, SYMFONIC_TEST_AFTER_KEEPALIVE, 0);
  g_autoptr(SymfonicServer) server = gateway_new (&openai, base_url, NULL, NULL);
  gint64 took = hang_up_after (fake, &openai, server, 0);

  g_test_message ("the provider saw its connection close %" G_GINT64_FORMAT " us after the hang-up", took);
  g_assert_cmpint (took, <, CLOSE_LIMIT_US);
  symfonic_server_stop (server);
}

static void
test_disconnect_mid_stream (void)
{
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autofree char *base_url = provider_add (fake, &anthropic, 200, "text/event-stream", ANTHROPIC_ONE_DELTA,
                                            SYMFONIC_TEST_SPLIT_WHOLE, SYMFONIC_TEST_AFTER_KEEPALIVE, 0);
  g_autoptr(SymfonicServer) server = gateway_new (&anthropic, base_url, NULL, NULL);
  gint64 took = hang_up_after (fake, &anthropic, server, 1);

  g_test_message ("the provider saw its connection close %" G_GINT64_FORMAT " us after the hang-up", took);
  g_assert_cmpint (took, <, CLOSE_LIMIT_US);
  symfonic_server_stop (server);
}

/* The client leaves after the provider said what the prompt cost (60 + 1
 * tokens): the budget settles on that, not on an estimate of a few
 * tokens, so the next request no longer fits its 100-token window. */
static void
test_disconnect_settles_usage (void)
{
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autofree char *base_url =
    provider_add (fake, &anthropic, 200, "text/event-stream",
                  ANTHROPIC_EVENT ("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\","
                                   "\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-test-1\","
                                   "\"usage\":{\"input_tokens\":60,\"output_tokens\":1}}}")
                  ANTHROPIC_TEXT_BLOCK ("0")
                  ANTHROPIC_DELTA ("0", "{\"type\":\"text_delta\",\"text\":\"partial\"}"),
                  SYMFONIC_TEST_SPLIT_WHOLE, SYMFONIC_TEST_AFTER_KEEPALIVE, 0);
  g_autoptr(SymfonicServer) server =
    gateway_new (&anthropic, base_url, NULL, "tokens-per-window=100\nreserve-tokens=50\nwindow-seconds=3600");
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) next = NULL;

  g_assert_cmpint (hang_up_after (fake, &anthropic, server, 1), <, CLOSE_LIMIT_US);

  next = post_typed (server, session);
  symfonic_test_stream_wait_done (next);
  g_test_message ("after the hang-up: HTTP %u %s", next->status, next->raw->str);
  g_assert_cmpuint (next->status, ==, 429);
  g_assert_nonnull (strstr (next->raw->str, "\"budget_exceeded\""));

  symfonic_server_stop (server);
}

/* --- configuration ------------------------------------------------------- */

typedef struct
{
  const char *name;
  const char *lines;
  /* the key the error must name, or NULL when the settings are valid */
  const char *key;
} ConfigCase;

static const ConfigCase config_cases[] = {
  { "minimal", "type=openai\nbase-url=http://127.0.0.1:9/v1\nmodel=m", NULL },
  { "anthropic", "type=anthropic\nbase-url=https://api.example/v1\nmodel=m\nanthropic-version=2024-01-01\n"
    "timeout=5\nidle-timeout=2\nmax-tokens=10\nextra-headers=anthropic-beta: x", NULL },
  { "no-base-url", "type=openai\nmodel=m", "base-url" },
  { "ftp-base-url", "type=anthropic\nbase-url=ftp://h/v1\nmodel=m", "base-url" },
  { "query-base-url", "type=openai\nbase-url=http://h/v1?key=x\nmodel=m", "base-url" },
  { "no-model", "type=openai\nbase-url=http://h/v1", "model" },
  { "missing-key-file", "type=openai\nbase-url=http://h/v1\nmodel=m\napi-key-file=/nonexistent/key", "api-key-file" },
  { "missing-prompt-file", "type=openai\nbase-url=http://h/v1\nmodel=m\nsystem-prompt-file=/nonexistent/p",
    "system-prompt-file" },
  { "zero-max-tokens", "type=openai\nbase-url=http://h/v1\nmodel=m\nmax-tokens=0", "max-tokens" },
  { "negative-timeout", "type=openai\nbase-url=http://h/v1\nmodel=m\ntimeout=-1", "timeout" },
  { "header-sets-key", "type=openai\nbase-url=http://h/v1\nmodel=m\nextra-headers=Authorization: Bearer x",
    "extra-headers" },
  { "header-sets-api-key", "type=anthropic\nbase-url=http://h/v1\nmodel=m\nextra-headers=X-Api-Key: x",
    "extra-headers" },
  { "header-without-colon", "type=openai\nbase-url=http://h/v1\nmodel=m\nextra-headers=X-A b", "extra-headers" },
  { "version-on-openai", "type=openai\nbase-url=http://h/v1\nmodel=m\nanthropic-version=1", "anthropic-version" },
};

static void
test_config (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (config_cases); i++)
    symfonic_test_check_source_config (symfonic_registry_get_default (), config_cases[i].lines, config_cases[i].key);
}

/* A key file's contents never appear in a load error, even a wrong one. */
static void
test_config_key_not_echoed (void)
{
  g_autoptr(GFile) base = g_file_new_for_path (symfonic_test_private_dir ());
  g_autofree char *key_file = write_file ("bad.key", API_KEY " with a space\n");
  g_autofree char *text = g_strdup_printf ("[route:typed]\npath=/t\nkind=typed\nsource=up\n\n"
                                           "[source:up]\ntype=openai\nbase-url=http://h/v1\nmodel=m\n"
                                           "api-key-file=%s\n", key_file);
  g_autoptr(GError) error = NULL;
  g_autoptr(SymfonicPipeline) pipeline =
    symfonic_pipeline_new_from_data (symfonic_registry_get_default (), text, -1, base, "p.pipeline", &error);

  g_assert_null (pipeline);
  g_assert_nonnull (strstr (error->message, "api-key-file"));
  g_assert_null (strstr (error->message, API_KEY));
}

/* A device or a FIFO named as a key or prompt is refused at once: read
 * whole, /dev/zero grew the process without end, and a FIFO blocked the
 * load (and a reload, with it the signal thread) until a writer came. */
static void
test_config_special_files (void)
{
  g_autofree char *dir = g_dir_make_tmp ("providers-XXXXXX", NULL);
  g_autofree char *fifo = g_build_filename (dir, "provider.fifo", NULL);
  static const char * const keys[] = { "api-key-file", "system-prompt-file" };

  g_assert_nonnull (dir);
  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  for (guint k = 0; k < G_N_ELEMENTS (keys); k++)
    {
      const char *paths[] = { "/dev/zero", fifo, symfonic_test_private_dir () };

      for (guint i = 0; i < G_N_ELEMENTS (paths); i++)
        {
          g_autofree char *lines = g_strdup_printf ("type=openai\nbase-url=http://h/v1\nmodel=m\n%s=%s",
                                                    keys[k], paths[i]);
          gint64 start = g_get_monotonic_time ();

          symfonic_test_check_source_config (symfonic_registry_get_default (), lines, keys[k]);
          g_assert_cmpint (g_get_monotonic_time () - start, <, G_USEC_PER_SEC);
        }
    }
  g_assert_cmpint (g_unlink (fifo), ==, 0);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

/* A password in a URL or a secret on a malformed header line never
 * appears in the load error that names it. */
static void
test_config_secrets_not_echoed (void)
{
  static const char * const cases[] = {
    "type=openai\nbase-url=ftp://user:" SECRET "@h/v1\nmodel=m",
    "type=openai\nbase-url=http://user:" SECRET "@h/v1?q=1\nmodel=m",
    "type=anthropic\nbase-url=http://user:" SECRET "@h:99999/v1\nmodel=m",
    "type=openai\nbase-url=http://h/v1\nmodel=m\nextra-headers=X-Key " SECRET,
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GFile) base = g_file_new_for_path (symfonic_test_private_dir ());
      g_autofree char *text = g_strdup_printf ("[route:typed]\npath=/t\nkind=typed\nsource=up\n\n"
                                               "[source:up]\n%s\n", cases[i]);
      g_autoptr(GError) error = NULL;
      g_autoptr(SymfonicPipeline) pipeline =
        symfonic_pipeline_new_from_data (symfonic_registry_get_default (), text, -1, base, "p.pipeline", &error);

      g_test_message ("%s", error != NULL ? error->message : "loads");
      g_assert_null (pipeline);
      g_assert_null (strstr (error->message, SECRET));
    }
}

static void
test_properties (void)
{
  static const char * const names[] = {
    "base-url", "model", "api-key-file", "timeout", "idle-timeout", "max-tokens", "system-prompt-file",
    "extra-headers",
  };
  static const char * const types[] = { "openai", "anthropic" };

  for (guint t = 0; t < G_N_ELEMENTS (types); t++)
    {
      GType type = symfonic_registry_lookup (symfonic_registry_get_default (), types[t]);
      g_autoptr(GTypeClass) klass = g_type_class_ref (type);

      g_assert_true (g_type_is_a (type, SYMFONIC_TYPE_SOURCE));
      g_assert_true (g_type_is_a (type, G_TYPE_INITABLE));
      for (guint i = 0; i < G_N_ELEMENTS (names); i++)
        {
          GParamSpec *pspec = g_object_class_find_property (G_OBJECT_CLASS (klass), names[i]);

          g_assert_nonnull (pspec);
          g_assert_cmpstr (g_param_spec_get_blurb (pspec), !=, g_param_spec_get_nick (pspec));
        }
      g_assert_true ((g_object_class_find_property (G_OBJECT_CLASS (klass), "anthropic-version") != NULL) ==
                     g_str_equal (types[t], "anthropic"));
    }
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;

  symfonic_test_init (&argc, &argv);

  /* before any worker thread exists, so no message is missed */
  log_lines = g_ptr_array_new_with_free_func (g_free);
  g_log_set_writer_func (record_log, NULL, NULL);
  symfonic_registry_scan (symfonic_registry_get_default (), &error);
  g_assert_no_error (error);

  g_test_add_func ("/providers/properties", test_properties);
  g_test_add_func ("/providers/config", test_config);
  g_test_add_func ("/providers/config/key-not-echoed", test_config_key_not_echoed);
  g_test_add_func ("/providers/config/special-files", test_config_special_files);
  g_test_add_func ("/providers/config/secrets-not-echoed", test_config_secrets_not_echoed);
  g_test_add_func ("/providers/openai/turn/whole", test_openai_turn_whole);
  g_test_add_func ("/providers/openai/turn/random", test_openai_turn_random);
  g_test_add_func ("/providers/anthropic/turn/whole", test_anthropic_turn_whole);
  g_test_add_func ("/providers/anthropic/turn/random", test_anthropic_turn_random);
  g_test_add_data_func ("/providers/openai/request", &requests[0], test_request);
  g_test_add_data_func ("/providers/anthropic/request", &requests[1], test_request);
  g_test_add_func ("/providers/openai/usage", test_openai_usage);
  g_test_add_func ("/providers/anthropic/usage", test_anthropic_usage);
  g_test_add_func ("/providers/failure/rate-limited", test_rate_limited);
  g_test_add_func ("/providers/failure/connection-refused", test_connection_refused);
  g_test_add_func ("/providers/failure/no-first-byte", test_no_first_byte);
  g_test_add_func ("/providers/failure/interim-heads-forever", test_interim_heads_forever);
  for (guint i = 0; i < G_N_ELEMENTS (failures); i++)
    {
      g_autofree char *path = g_strconcat ("/providers/failure/", failures[i].name, NULL);

      g_test_add_data_func (path, &failures[i], test_failure);
    }
  g_test_add_func ("/providers/disconnect/before-first-token", test_disconnect_before_first_token);
  g_test_add_func ("/providers/disconnect/mid-stream", test_disconnect_mid_stream);
  g_test_add_func ("/providers/disconnect/settles-usage", test_disconnect_settles_usage);

  return g_test_run ();
}
