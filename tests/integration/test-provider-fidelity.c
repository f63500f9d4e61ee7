/* test-provider-fidelity.c: what a client asks reaches the model, what the model says reaches the client
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The provider routes in front of the openai and anthropic sources, each
 * source a loopback provider of the support library that records what it
 * was sent: every request field passed on as sent to a source of the
 * client's API, translated for the other or refused naming the field; the
 * provider's finish reason, usage details and model name, its tool-call
 * fragments and rate-limit headers, on every route; the Responses API and
 * its background runs; Anthropic's model listing and token count; the
 * request ids and error shapes the SDKs read. Expected values are written
 * here from the providers' API references.
 */
#include <string.h>

#include <glib/gstdio.h>

#include "symfonic-test-raw-upstream.h"
#include "symfonic-test-support.h"
#include "symfonic-test-upstream.h"

#define OPENAI_UPSTREAM "/v1/chat/completions"
#define ANTHROPIC_UPSTREAM "/v1/messages"
#define COUNT_UPSTREAM "/v1/messages/count_tokens"
#define OPERATOR_PROMPT "You are terse."
#define CAP "1000"

#define OPENAI_CHUNK(choices, extra) \
  "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-real-0613\"," \
  "\"choices\":[" choices "]" extra "}\n\n"
#define OPENAI_DELTA(delta) OPENAI_CHUNK ("{\"index\":0,\"delta\":" delta ",\"finish_reason\":null}", "")

/* thinking, text, a call in three fragments, a finish reason, the usage
 * with its details */
#define OPENAI_TURN(finish) \
  OPENAI_DELTA ("{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null}") \
  OPENAI_DELTA ("{\"reasoning_content\":\"Hmm.\"}") \
  OPENAI_DELTA ("{\"content\":\"Hello\"}") \
  OPENAI_DELTA ("{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"f\"," \
                "\"arguments\":\"\"}}]}") \
  OPENAI_DELTA ("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"a\\\":\"}}]}") \
  OPENAI_DELTA ("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"1}\"}}]}") \
  OPENAI_CHUNK ("{\"index\":0,\"delta\":{},\"finish_reason\":\"" finish "\"}", "") \
  OPENAI_CHUNK ("", ",\"usage\":{\"prompt_tokens\":20,\"completion_tokens\":7,\"total_tokens\":27," \
                "\"prompt_tokens_details\":{\"cached_tokens\":5},\"completion_tokens_details\":{\"reasoning_tokens\":3}}") \
  "data: [DONE]\n\n"

#define ANTHROPIC_EVENT(name, data) "event: " name "\ndata: " data "\n\n"
#define ANTHROPIC_TURN(stop, sequence) \
  ANTHROPIC_EVENT ("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\"," \
                   "\"role\":\"assistant\",\"content\":[],\"model\":\"claude-real-1\",\"stop_reason\":null," \
                   "\"stop_sequence\":null,\"usage\":{\"input_tokens\":11,\"cache_creation_input_tokens\":7," \
                   "\"cache_read_input_tokens\":100,\"output_tokens\":1}}}") \
  ANTHROPIC_EVENT ("content_block_start", "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}") \
  ANTHROPIC_EVENT ("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi there\"}}") \
  ANTHROPIC_EVENT ("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}") \
  ANTHROPIC_EVENT ("content_block_start", "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\"," \
                   "\"id\":\"toolu_1\",\"name\":\"f\",\"input\":{}}}") \
  ANTHROPIC_EVENT ("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\"," \
                   "\"partial_json\":\"{\\\"a\\\":\"}}") \
  ANTHROPIC_EVENT ("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\"," \
                   "\"partial_json\":\"1}\"}}") \
  ANTHROPIC_EVENT ("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":1}") \
  ANTHROPIC_EVENT ("message_delta", "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"" stop "\"," \
                   "\"stop_sequence\":" sequence "},\"usage\":{\"output_tokens\":9}}") \
  ANTHROPIC_EVENT ("message_stop", "{\"type\":\"message_stop\"}")

typedef struct
{
  SymfonicTestUpstream *provider;
  SymfonicServer       *server;
  SoupSession          *session;
} Fixture;

typedef struct
{
  const char *openai;
  const char *anthropic;
  /* seconds without a byte before a heartbeat on every route, 0 for none */
  guint       heartbeat;
  /* a pause after the provider's head, before its events */
  guint       pause_ms;
} Setup;

static const Setup default_setup = {
  OPENAI_TURN ("length"),
  ANTHROPIC_TURN ("max_tokens", "null"),
  0, 0,
};

static void
add_scenario (SymfonicTestUpstream *provider,
              const char           *path,
              const char           *content_type,
              const char           *body,
              guint                 pause_ms)
{
  g_autofree char *with_pause = pause_ms > 0 ? g_strconcat ("\n", body, NULL) : g_strdup (body);
  g_autoptr(GBytes) bytes = g_bytes_new (with_pause, strlen (with_pause));
  SymfonicTestScenario scenario = {
    .content_type = content_type,
    .body = bytes,
    .split = SYMFONIC_TEST_SPLIT_RANDOM,
    .seed = g_test_rand_int (),
    /* the head and an empty line, then silence */
    .pause_at = pause_ms > 0 ? 1 : 0,
    .pause_ms = pause_ms,
  };
  g_autofree char *url = symfonic_test_upstream_add (provider, path, &scenario);
}

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

static void
route (GString    *text,
       const char *name,
       const char *kind,
       const char *source,
       const char *stages,
       guint       heartbeat)
{
  g_string_append_printf (text, "[route:%s]\npath=/%s\nkind=%s\nsource=%s\nstages=%s\n", name, name, kind, source, stages);
  if (heartbeat > 0)
    g_string_append_printf (text, "heartbeat-seconds=%u\n", heartbeat);
  g_string_append_c (text, '\n');
}

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  user_data)
{
  const Setup *setup = user_data != NULL ? user_data : &default_setup;
  g_autoptr(GString) text = g_string_new ("[gateway]\nlisten=127.0.0.1:8080\nworkers=1\n\n");
  g_autofree char *prompt = write_file ("system.txt", OPERATOR_PROMPT "\n");
  g_autofree char *base = NULL;
  g_autofree char *transcripts = g_test_build_filename (G_TEST_DIST, "integration", "transcripts", NULL);

  fixture->provider = symfonic_test_upstream_new ();
  add_scenario (fixture->provider, OPENAI_UPSTREAM, NULL, setup->openai, setup->pause_ms);
  add_scenario (fixture->provider, ANTHROPIC_UPSTREAM, NULL, setup->anthropic, setup->pause_ms);
  add_scenario (fixture->provider, COUNT_UPSTREAM, "application/json", "{\"input_tokens\":42}", 0);
  base = symfonic_test_upstream_dup_url (fixture->provider, "/v1");

  route (text, "oa", "openai", "oa", "auth;errors", setup->heartbeat);
  route (text, "an", "anthropic", "an", "auth;errors", setup->heartbeat);
  route (text, "oa-an", "openai", "an", "auth;errors", setup->heartbeat);
  route (text, "an-oa", "anthropic", "oa", "auth;errors", setup->heartbeat);
  route (text, "typed-oa", "typed", "oa", "auth;errors", setup->heartbeat);
  route (text, "typed-an", "typed", "an", "auth;errors", setup->heartbeat);
  route (text, "chunks", "chunks", "oa", "auth;projection;errors", 0);
  route (text, "chunks-10", "chunks", "oa", "auth;line-10;projection;errors", 0);
  route (text, "chat", "chat", "an", "auth;errors", 0);
  route (text, "replay", "anthropic", "replay", "auth;errors", 0);
  g_string_append_printf (text,
                          "[source:oa]\ntype=openai\nbase-url=%s\nmodel=gpt-src\nmax-tokens=" CAP "\nsystem-prompt-file=%s\n\n"
                          "[source:an]\ntype=anthropic\nbase-url=%s\nmodel=claude-src\nmax-tokens=" CAP "\nsystem-prompt-file=%s\n\n"
                          "[source:replay]\ntype=replay\ntranscripts=%s\ndefault-transcript=provider-text\ntime-scale=0\n\n"
                          "[stage:auth]\ntype=auth\ntokens-file=" SYMFONIC_TEST_DATA_DIR "/demo-tokens.ini\n\n"
                          "[stage:projection]\ntype=projection\n\n"
                          "[stage:line-10]\ntype=release-line\nrelease-line=10.4.9\n\n"
                          "[stage:errors]\ntype=error-map\ntable=" SYMFONIC_TEST_DATA_DIR "/error-map.ini\n",
                          base, prompt, base, prompt, transcripts);
  fixture->server = symfonic_test_server_new (text->str, symfonic_test_private_dir (), 1);
  fixture->session = symfonic_test_session_new ();
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  user_data)
{
  g_object_unref (fixture->session);
  symfonic_server_stop (fixture->server);
  g_object_unref (fixture->server);
  symfonic_test_upstream_free (fixture->provider);
}

static SymfonicTestResponse *
post (Fixture    *fixture,
      const char *path,
      const char *body)
{
  g_autofree char *url = symfonic_test_server_dup_url (fixture->server, path);

  return symfonic_test_request (fixture->session, "POST", url, "application/json", body,
                                "Authorization", "Bearer demo-token-alice", "X-Tenant-ID", "acme", NULL);
}

static SymfonicTestResponse *
get (Fixture    *fixture,
     const char *path)
{
  g_autofree char *url = symfonic_test_server_dup_url (fixture->server, path);

  return symfonic_test_request (fixture->session, "GET", url, NULL, NULL,
                                "Authorization", "Bearer demo-token-alice", "X-Tenant-ID", "acme", NULL);
}

static void
assert_json (const char *actual,
             const char *expected)
{
  g_autoptr(JsonNode) a = json_from_string (actual, NULL);
  g_autoptr(JsonNode) e = json_from_string (expected, NULL);

  g_assert_nonnull (a);
  g_assert_nonnull (e);
  if (!json_node_equal (a, e))
    g_error ("JSON differs:\n  got      %s\n  expected %s", actual, expected);
}

/* What the provider received on @path, the last time. */
static char *
sent (Fixture    *fixture,
      const char *path,
      guint       n)
{
  SymfonicTestUpstreamRecord *record = NULL;

  for (guint i = 0; i < 200 && symfonic_test_upstream_count_records (fixture->provider, path, NULL) < n; i++)
    g_usleep (10000);
  g_assert_cmpuint (symfonic_test_upstream_count_records (fixture->provider, path, NULL), ==, n);
  record = symfonic_test_upstream_find_record (fixture->provider, path, NULL);
  g_assert_nonnull (record);
  return json_to_string (record->body, FALSE);
}

/* The data of each frame of an event stream, by event name (OpenAI's
 * `data:` lines are "message"). */
static GPtrArray *
frames_of (SymfonicTestResponse *response)
{
  g_autoptr(SymfonicTestSseParser) parser = symfonic_test_sse_parser_new ();
  GPtrArray *frames = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_test_frame_free);
  gsize length;
  const char *data = g_bytes_get_data (response->body, &length);

  g_assert_cmpuint (response->status, ==, 200);
  symfonic_test_sse_parser_feed (parser, data, length, frames);
  return frames;
}

static SymfonicTestFrame *
frame_at (GPtrArray *frames,
          guint      i)
{
  return g_ptr_array_index (frames, i);
}

/* The last frame named @event, or NULL. */
static JsonObject *
last_frame (GPtrArray  *frames,
            const char *event,
            JsonNode  **keep)
{
  for (guint i = frames->len; i > 0; i--)
    {
      SymfonicTestFrame *frame = frame_at (frames, i - 1);

      if (g_str_equal (frame->event, event))
        {
          *keep = symfonic_test_json_parse (frame->data);
          return json_node_get_object (*keep);
        }
    }

  return NULL;
}

static gboolean
has_frame (GPtrArray  *frames,
           const char *event)
{
  for (guint i = 0; i < frames->len; i++)
    if (g_str_equal (frame_at (frames, i)->event, event))
      return TRUE;
  return FALSE;
}

/* --- requests: passed on, translated, or refused --------------------------- */

/* Same family: as sent, but for the model, the stream and the operator's
 * system prompt. */
static void
test_openai_passthrough (Fixture       *fixture,
                         gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) response =
    post (fixture, "/oa/chat/completions",
          "{\"model\":\"gpt-client\",\"messages\":[{\"role\":\"developer\",\"content\":\"Be brief.\"},"
          "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Hi\"},"
          "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/png;base64,iVBO\",\"detail\":\"low\"}}]}],"
          "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"strict\":true,\"parameters\":{\"type\":\"object\"}}}],"
          "\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"f\"}},\"parallel_tool_calls\":false,"
          "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"o\",\"schema\":{\"type\":\"object\"},\"strict\":true}},"
          "\"n\":1,\"seed\":7,\"logprobs\":true,\"top_logprobs\":2,\"user\":\"u-1\",\"metadata\":{\"k\":\"v\"},"
          "\"reasoning_effort\":\"low\",\"max_completion_tokens\":300,\"stream\":false,\"service_tier\":\"flex\"}");
  g_autofree char *body = sent (fixture, OPENAI_UPSTREAM, 1);

  g_assert_cmpuint (response->status, ==, 200);
  assert_json (body,
               "{\"model\":\"gpt-src\",\"messages\":[{\"role\":\"system\",\"content\":\"" OPERATOR_PROMPT "\"},"
               "{\"role\":\"developer\",\"content\":\"Be brief.\"},"
               "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Hi\"},"
               "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/png;base64,iVBO\",\"detail\":\"low\"}}]}],"
               "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"strict\":true,\"parameters\":{\"type\":\"object\"}}}],"
               "\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"f\"}},\"parallel_tool_calls\":false,"
               "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"o\",\"schema\":{\"type\":\"object\"},\"strict\":true}},"
               "\"n\":1,\"seed\":7,\"logprobs\":true,\"top_logprobs\":2,\"user\":\"u-1\",\"metadata\":{\"k\":\"v\"},"
               "\"reasoning_effort\":\"low\",\"max_completion_tokens\":300,\"service_tier\":\"flex\",\"stream\":true,"
               "\"stream_options\":{\"include_usage\":true}}");
}

static void
test_anthropic_passthrough (Fixture       *fixture,
                            gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) response =
    post (fixture, "/an/messages",
          "{\"model\":\"claude-client\",\"max_tokens\":500,\"stream\":false,"
          "\"system\":[{\"type\":\"text\",\"text\":\"Be brief.\",\"cache_control\":{\"type\":\"ephemeral\"}}],"
          "\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":200},\"top_k\":5,"
          "\"tool_choice\":{\"type\":\"any\",\"disable_parallel_tool_use\":true},\"metadata\":{\"user_id\":\"u-1\"},"
          "\"tools\":[{\"name\":\"f\",\"input_schema\":{\"type\":\"object\"},\"cache_control\":{\"type\":\"ephemeral\"}}],"
          "\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image\",\"source\":{\"type\":\"base64\","
          "\"media_type\":\"image/png\",\"data\":\"iVBO\"}},{\"type\":\"document\",\"source\":{\"type\":\"url\","
          "\"url\":\"https://example.com/a.pdf\"}},{\"type\":\"text\",\"text\":\"Hi\",\"cache_control\":{\"type\":\"ephemeral\"}}]},"
          "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"t\",\"signature\":\"sig\"},"
          "{\"type\":\"tool_use\",\"id\":\"toolu_0\",\"name\":\"f\",\"input\":{}}]},"
          "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_0\",\"content\":[{\"type\":\"text\","
          "\"text\":\"ok\"},{\"type\":\"image\",\"source\":{\"type\":\"url\",\"url\":\"https://example.com/b.png\"}}]}]}]}");
  g_autofree char *body = sent (fixture, ANTHROPIC_UPSTREAM, 1);

  g_assert_cmpuint (response->status, ==, 200);
  assert_json (body,
               "{\"model\":\"claude-src\",\"max_tokens\":500,"
               "\"system\":[{\"type\":\"text\",\"text\":\"" OPERATOR_PROMPT "\"},"
               "{\"type\":\"text\",\"text\":\"Be brief.\",\"cache_control\":{\"type\":\"ephemeral\"}}],"
               "\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":200},\"top_k\":5,"
               "\"tool_choice\":{\"type\":\"any\",\"disable_parallel_tool_use\":true},\"metadata\":{\"user_id\":\"u-1\"},"
               "\"tools\":[{\"name\":\"f\",\"input_schema\":{\"type\":\"object\"},\"cache_control\":{\"type\":\"ephemeral\"}}],"
               "\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image\",\"source\":{\"type\":\"base64\","
               "\"media_type\":\"image/png\",\"data\":\"iVBO\"}},{\"type\":\"document\",\"source\":{\"type\":\"url\","
               "\"url\":\"https://example.com/a.pdf\"}},{\"type\":\"text\",\"text\":\"Hi\",\"cache_control\":{\"type\":\"ephemeral\"}}]},"
               "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"t\",\"signature\":\"sig\"},"
               "{\"type\":\"tool_use\",\"id\":\"toolu_0\",\"name\":\"f\",\"input\":{}}]},"
               "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_0\",\"content\":[{\"type\":\"text\","
               "\"text\":\"ok\"},{\"type\":\"image\",\"source\":{\"type\":\"url\",\"url\":\"https://example.com/b.png\"}}]}]}],"
               "\"stream\":true}");
}

static void
test_openai_to_anthropic (Fixture       *fixture,
                          gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) response =
    post (fixture, "/oa-an/chat/completions",
          "{\"model\":\"gpt-client\",\"max_completion_tokens\":300,\"temperature\":0.5,\"stop\":\"END\",\"user\":\"u-1\","
          "\"tool_choice\":\"required\",\"parallel_tool_calls\":false,\"n\":1,\"response_format\":{\"type\":\"text\"},"
          "\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},"
          "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Hi\"},"
          "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/png;base64,iVBO\"}},"
          "{\"type\":\"image_url\",\"image_url\":{\"url\":\"https://example.com/b.png\"}},"
          "{\"type\":\"file\",\"file\":{\"filename\":\"a.pdf\",\"file_data\":\"data:application/pdf;base64,JVBE\"}}]},"
          "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
          "\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":1}\"}}]},"
          "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"ok\"}],"
          "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"description\":\"d\",\"parameters\":{\"type\":\"object\"}}}]}");
  g_autofree char *body = sent (fixture, ANTHROPIC_UPSTREAM, 1);

  g_assert_cmpuint (response->status, ==, 200);
  assert_json (body,
               "{\"model\":\"claude-src\",\"system\":\"" OPERATOR_PROMPT "\\n\\nBe brief.\","
               "\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Hi\"},"
               "{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"iVBO\"}},"
               "{\"type\":\"image\",\"source\":{\"type\":\"url\",\"url\":\"https://example.com/b.png\"}},"
               "{\"type\":\"document\",\"source\":{\"type\":\"base64\",\"media_type\":\"application/pdf\",\"data\":\"JVBE\"},"
               "\"title\":\"a.pdf\"}]},"
               "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"c1\",\"name\":\"f\",\"input\":{\"a\":1}}]},"
               "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"c1\",\"content\":\"ok\"}]}],"
               "\"max_tokens\":300,\"temperature\":0.5,\"stop_sequences\":[\"END\"],"
               "\"tools\":[{\"name\":\"f\",\"description\":\"d\",\"input_schema\":{\"type\":\"object\"}}],"
               "\"tool_choice\":{\"type\":\"any\",\"disable_parallel_tool_use\":true},\"metadata\":{\"user_id\":\"u-1\"},"
               "\"stream\":true}");
}

static void
test_anthropic_to_openai (Fixture       *fixture,
                          gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) response =
    post (fixture, "/an-oa/messages",
          "{\"model\":\"claude-client\",\"max_tokens\":300,\"stop_sequences\":[\"END\"],\"metadata\":{\"user_id\":\"u-1\"},"
          "\"tool_choice\":{\"type\":\"tool\",\"name\":\"f\",\"disable_parallel_tool_use\":true},\"thinking\":{\"type\":\"disabled\"},"
          "\"system\":[{\"type\":\"text\",\"text\":\"Be brief.\"}],"
          "\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Hi\"},"
          "{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"iVBO\"}},"
          "{\"type\":\"document\",\"source\":{\"type\":\"base64\",\"media_type\":\"application/pdf\",\"data\":\"JVBE\"}}]},"
          "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"t\",\"signature\":\"s\"},"
          "{\"type\":\"text\",\"text\":\"Calling.\"},{\"type\":\"tool_use\",\"id\":\"toolu_0\",\"name\":\"f\",\"input\":{\"a\":1}}]},"
          "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_0\",\"content\":\"ok\"},"
          "{\"type\":\"text\",\"text\":\"Thanks\"}]}],"
          "\"tools\":[{\"name\":\"f\",\"input_schema\":{\"type\":\"object\"}}]}");
  g_autofree char *body = sent (fixture, OPENAI_UPSTREAM, 1);

  g_assert_cmpuint (response->status, ==, 200);
  assert_json (body,
               "{\"model\":\"gpt-src\",\"messages\":[{\"role\":\"system\",\"content\":\"" OPERATOR_PROMPT "\"},"
               "{\"role\":\"system\",\"content\":\"Be brief.\"},"
               "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Hi\"},"
               "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/png;base64,iVBO\"}},"
               "{\"type\":\"file\",\"file\":{\"filename\":\"document.pdf\",\"file_data\":\"data:application/pdf;base64,JVBE\"}}]},"
               "{\"role\":\"assistant\",\"content\":\"Calling.\",\"tool_calls\":[{\"id\":\"toolu_0\",\"type\":\"function\","
               "\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":1}\"}}]},"
               "{\"role\":\"tool\",\"tool_call_id\":\"toolu_0\",\"content\":\"ok\"},"
               "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Thanks\"}]}],"
               "\"max_tokens\":300,\"stop\":[\"END\"],"
               "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":{\"type\":\"object\"}}}],"
               "\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"f\"}},\"parallel_tool_calls\":false,"
               "\"user\":\"u-1\",\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
}

/* The Responses API is translated for either source. */
static void
test_responses_request (Fixture       *fixture,
                        gconstpointer  user_data)
{
  static const char request[] =
    "{\"model\":\"gpt-client\",\"instructions\":\"Be brief.\",\"max_output_tokens\":300,\"store\":true,"
    "\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"Hi\"},"
    "{\"type\":\"input_image\",\"image_url\":\"data:image/png;base64,iVBO\"}]},"
    "{\"type\":\"reasoning\",\"id\":\"rs_0\",\"summary\":[]},"
    "{\"type\":\"function_call\",\"call_id\":\"c1\",\"name\":\"f\",\"arguments\":\"{}\"},"
    "{\"type\":\"function_call_output\",\"call_id\":\"c1\",\"output\":\"ok\"}],"
    "\"tools\":[{\"type\":\"function\",\"name\":\"f\",\"parameters\":{\"type\":\"object\"},\"strict\":false}],"
    "\"tool_choice\":{\"type\":\"function\",\"name\":\"f\"},\"user\":\"u-1\"%s}";
  g_autofree char *to_openai = g_strdup_printf (request, ",\"text\":{\"format\":{\"type\":\"json_schema\",\"name\":\"o\","
                                                         "\"schema\":{\"type\":\"object\"},\"strict\":true}},"
                                                         "\"reasoning\":{\"effort\":\"low\",\"summary\":\"auto\"}");
  g_autofree char *to_anthropic = g_strdup_printf (request, "");
  g_autoptr(SymfonicTestResponse) openai = post (fixture, "/oa/responses", to_openai);
  g_autoptr(SymfonicTestResponse) anthropic = post (fixture, "/oa-an/responses", to_anthropic);
  g_autofree char *openai_body = sent (fixture, OPENAI_UPSTREAM, 1);
  g_autofree char *anthropic_body = sent (fixture, ANTHROPIC_UPSTREAM, 1);

  g_assert_cmpuint (openai->status, ==, 200);
  g_assert_cmpuint (anthropic->status, ==, 200);
  assert_json (openai_body,
               "{\"model\":\"gpt-src\",\"messages\":[{\"role\":\"system\",\"content\":\"" OPERATOR_PROMPT "\"},"
               "{\"role\":\"developer\",\"content\":\"Be brief.\"},"
               "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Hi\"},"
               "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/png;base64,iVBO\"}}]},"
               "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
               "\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},"
               "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"ok\"}],"
               "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":{\"type\":\"object\"},\"strict\":false}}],"
               "\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"f\"}},"
               "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"o\",\"schema\":{\"type\":\"object\"},\"strict\":true}},"
               "\"max_completion_tokens\":300,\"reasoning_effort\":\"low\",\"user\":\"u-1\",\"stream\":true,"
               "\"stream_options\":{\"include_usage\":true}}");
  assert_json (anthropic_body,
               "{\"model\":\"claude-src\",\"system\":\"" OPERATOR_PROMPT "\\n\\nBe brief.\","
               "\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Hi\"},"
               "{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"iVBO\"}}]},"
               "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"c1\",\"name\":\"f\",\"input\":{}}]},"
               "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"c1\",\"content\":\"ok\"}]}],"
               "\"max_tokens\":300,\"tools\":[{\"name\":\"f\",\"input_schema\":{\"type\":\"object\"}}],"
               "\"tool_choice\":{\"type\":\"tool\",\"name\":\"f\"},\"metadata\":{\"user_id\":\"u-1\"},\"stream\":true}");
}

/* What cannot be translated faithfully is a 400 in the route's shape,
 * naming the member; and nothing reaches the provider. */
typedef struct
{
  const char *path;
  const char *body;
  const char *named;
} Refusal;

#define CHAT(extra) "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]" extra "}"
#define MESSAGES(extra) "{\"model\":\"m\",\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]" extra "}"
#define RESPONSES(extra) "{\"model\":\"m\",\"input\":\"Hi\"" extra "}"

static const Refusal refusals[] = {
  { "/oa-an/chat/completions", CHAT (",\"seed\":1"), "“seed”" },
  { "/oa-an/chat/completions", CHAT (",\"logprobs\":true"), "“logprobs”" },
  { "/oa-an/chat/completions", CHAT (",\"top_logprobs\":2"), "“top_logprobs”" },
  { "/oa-an/chat/completions", CHAT (",\"reasoning_effort\":\"low\""), "“reasoning_effort”" },
  { "/oa-an/chat/completions", CHAT (",\"frequency_penalty\":0.5"), "“frequency_penalty”" },
  { "/oa-an/chat/completions", CHAT (",\"metadata\":{\"k\":\"v\"}"), "“metadata”" },
  { "/oa-an/chat/completions", CHAT (",\"temperature\":1.5"), "“temperature”" },
  { "/oa-an/chat/completions", CHAT (",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"o\",\"schema\":{}}}"),
    "“response_format”" },
  { "/oa-an/chat/completions",
    "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_audio\",\"input_audio\":{}}]}]}",
    "“messages[0].content[0]”" },
  { "/oa/chat/completions", CHAT (",\"n\":2"), "“n”" },
  { "/oa/chat/completions", CHAT (",\"max_tokens\":1001"), "“max_tokens” may be at most " CAP },
  { "/oa/chat/completions", CHAT (",\"max_completion_tokens\":5000"), "“max_completion_tokens” may be at most " CAP },
  { "/an/messages", "{\"model\":\"m\",\"max_tokens\":1001,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}",
    "“max_tokens” may be at most " CAP },
  { "/an-oa/messages", MESSAGES (",\"top_k\":5"), "“top_k”" },
  { "/an-oa/messages", MESSAGES (",\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":100}"), "“thinking”" },
  { "/an-oa/messages", MESSAGES (",\"system\":[{\"type\":\"text\",\"text\":\"s\",\"cache_control\":{\"type\":\"ephemeral\"}}]"),
    "“system[0].cache_control”" },
  { "/an-oa/messages", MESSAGES (",\"metadata\":{\"other\":\"x\"}"), "“metadata.other”" },
  { "/an-oa/messages", MESSAGES (",\"stop_sequences\":[\"a\",\"b\",\"c\",\"d\",\"e\"]"), "“stop_sequences”" },
  { "/an-oa/messages", MESSAGES (",\"tools\":[{\"type\":\"web_search_20250305\",\"name\":\"web_search\"}]"), "“tools[0]”" },
  { "/oa/responses", RESPONSES (",\"previous_response_id\":\"resp_1\""), "“previous_response_id”" },
  { "/oa/responses", RESPONSES (",\"include\":[\"reasoning.encrypted_content\"]"), "“include”" },
  { "/oa/responses", RESPONSES (",\"tools\":[{\"type\":\"web_search\"}]"), "“tools[0]”" },
  { "/oa/responses", RESPONSES (",\"max_output_tokens\":5000"), "“max_output_tokens” may be at most " CAP },
  { "/oa-an/responses", RESPONSES (",\"text\":{\"format\":{\"type\":\"json_object\"}}"), "“response_format”" },
};

static void
test_refusals (Fixture       *fixture,
               gconstpointer  user_data)
{
  for (guint i = 0; i < G_N_ELEMENTS (refusals); i++)
    {
      const Refusal *r = &refusals[i];
      g_autoptr(SymfonicTestResponse) response = post (fixture, r->path, r->body);
      g_autoptr(JsonNode) root = symfonic_test_response_dup_json (response);
      JsonObject *object = json_node_get_object (root);
      JsonObject *error = json_object_get_object_member (object, "error");

      g_test_message ("%s %s: %s", r->path, r->body, symfonic_test_response_get_text (response));
      g_assert_cmpuint (response->status, ==, 400);
      g_assert_cmpstr (json_object_get_string_member (error, "type"), ==, "invalid_request_error");
      g_assert_nonnull (strstr (json_object_get_string_member (error, "message"), r->named));
      if (g_str_has_prefix (r->path, "/an"))
        g_assert_cmpstr (json_object_get_string_member (object, "type"), ==, "error");
      else
        g_assert_cmpstr (json_object_get_string_member (error, "code"), ==, "bad_request");
    }
  g_assert_cmpuint (symfonic_test_upstream_count_records (fixture->provider, OPENAI_UPSTREAM, NULL), ==, 0);
  g_assert_cmpuint (symfonic_test_upstream_count_records (fixture->provider, ANTHROPIC_UPSTREAM, NULL), ==, 0);
}

/* --- answers: whole ----------------------------------------------------------- */

/* The OpenAI route publishes its upstream's reason, model and usage
 * details, and the call's arguments in the fragments they came in. */
static void
test_openai_answer (Fixture       *fixture,
                    gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) response =
    post (fixture, "/oa/chat/completions", CHAT (",\"stream\":true,\"stream_options\":{\"include_usage\":true}"));
  g_autoptr(GPtrArray) frames = frames_of (response);
  g_autoptr(GString) arguments = g_string_new (NULL);
  const char *finish = NULL;
  JsonNode *usage = NULL;
  g_autoptr(JsonNode) keep_usage = NULL;
  guint fragments = 0;

  for (guint i = 0; i + 1 < frames->len; i++)
    {
      g_autoptr(JsonNode) root = symfonic_test_json_parse (frame_at (frames, i)->data);
      JsonObject *chunk = json_node_get_object (root);
      JsonArray *choices = json_object_get_array_member (chunk, "choices");

      g_assert_cmpstr (json_object_get_string_member (chunk, "model"), ==, "gpt-real-0613");
      if (json_object_has_member (chunk, "usage"))
        {
          usage = keep_usage = json_node_copy (json_object_get_member (chunk, "usage"));
          continue;
        }
      for (guint j = 0; j < json_array_get_length (choices); j++)
        {
          JsonObject *choice = json_array_get_object_element (choices, j);
          JsonObject *delta = json_object_get_object_member (choice, "delta");

          if (json_object_has_member (delta, "tool_calls"))
            {
              JsonObject *call = json_array_get_object_element (json_object_get_array_member (delta, "tool_calls"), 0);
              JsonObject *function = json_object_get_object_member (call, "function");

              g_assert_cmpint (json_object_get_int_member (call, "index"), ==, 0);
              g_string_append (arguments, json_object_get_string_member (function, "arguments"));
              fragments++;
            }
          if (!JSON_NODE_HOLDS_NULL (json_object_get_member (choice, "finish_reason")))
            finish = g_intern_string (json_object_get_string_member (choice, "finish_reason"));
        }
    }

  g_assert_cmpstr (frame_at (frames, frames->len - 1)->data, ==, "[DONE]");
  g_assert_cmpstr (finish, ==, "length");
  g_assert_cmpstr (arguments->str, ==, "{\"a\":1}");
  g_assert_cmpuint (fragments, ==, 3);
  g_assert_nonnull (usage);
  {
    g_autofree char *text = json_to_string (usage, FALSE);

    assert_json (text, "{\"prompt_tokens\":20,\"completion_tokens\":7,\"total_tokens\":27,"
                       "\"prompt_tokens_details\":{\"cached_tokens\":5},\"completion_tokens_details\":{\"reasoning_tokens\":3}}");
  }
  /* the request's id is the run's */
  g_assert_cmpstr (soup_message_headers_get_one (response->headers, "x-request-id"), ==,
                   soup_message_headers_get_one (response->headers, "X-Symfonic-Run-ID"));
}

/* The Anthropic route's message_start carries the input tokens the
 * provider reported, with its cache counts; its end the provider's own
 * stop reason and stop sequence. */
static void
test_anthropic_answer (Fixture       *fixture,
                       gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) response = post (fixture, "/an/messages", MESSAGES (",\"stream\":true"));
  g_autoptr(GPtrArray) frames = frames_of (response);
  g_autoptr(JsonNode) keep_start = NULL;
  g_autoptr(JsonNode) keep_delta = NULL;
  JsonObject *start = last_frame (frames, "message_start", &keep_start);
  JsonObject *delta = last_frame (frames, "message_delta", &keep_delta);
  g_autofree char *usage = json_to_string (json_object_get_member (json_object_get_object_member (start, "message"), "usage"),
                                           FALSE);
  g_autofree char *end = json_to_string (json_object_get_member (delta, "delta"), FALSE);
  g_autofree char *end_usage = json_to_string (json_object_get_member (delta, "usage"), FALSE);
  g_autoptr(GString) input = g_string_new (NULL);

  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (start, "message"), "model"), ==,
                   "claude-real-1");
  assert_json (usage, "{\"input_tokens\":11,\"cache_creation_input_tokens\":7,\"cache_read_input_tokens\":100,"
                      "\"output_tokens\":0}");
  assert_json (end, "{\"stop_reason\":\"max_tokens\",\"stop_sequence\":null}");
  assert_json (end_usage, "{\"input_tokens\":11,\"cache_creation_input_tokens\":7,\"cache_read_input_tokens\":100,"
                          "\"output_tokens\":9}");
  for (guint i = 0; i < frames->len; i++)
    {
      g_autoptr(JsonNode) root = NULL;
      JsonObject *fragment;

      if (!g_str_equal (frame_at (frames, i)->event, "content_block_delta"))
        continue;
      root = symfonic_test_json_parse (frame_at (frames, i)->data);
      fragment = json_object_get_object_member (json_node_get_object (root), "delta");
      if (g_strcmp0 (json_object_get_string_member (fragment, "type"), "input_json_delta") == 0)
        g_string_append (input, json_object_get_string_member (fragment, "partial_json"));
    }
  g_assert_cmpstr (input->str, ==, "{\"a\":1}");
  g_assert_cmpstr (soup_message_headers_get_one (response->headers, "request-id"), ==,
                   soup_message_headers_get_one (response->headers, "X-Symfonic-Run-ID"));
}

/* Across: each route's own words for the other provider's reason and
 * usage. */
static void
test_cross_answers (Fixture       *fixture,
                    gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) openai = post (fixture, "/oa-an/chat/completions", CHAT (""));
  g_autoptr(SymfonicTestResponse) anthropic = post (fixture, "/an-oa/messages", MESSAGES (""));
  g_autoptr(JsonNode) openai_root = symfonic_test_response_dup_json (openai);
  g_autoptr(JsonNode) anthropic_root = symfonic_test_response_dup_json (anthropic);
  JsonObject *choice = json_array_get_object_element (json_object_get_array_member (json_node_get_object (openai_root),
                                                                                    "choices"), 0);
  JsonObject *message = json_node_get_object (anthropic_root);
  g_autofree char *openai_usage = json_to_string (json_object_get_member (json_node_get_object (openai_root), "usage"), FALSE);
  g_autofree char *anthropic_usage = json_to_string (json_object_get_member (message, "usage"), FALSE);

  g_assert_cmpstr (json_object_get_string_member (choice, "finish_reason"), ==, "length");
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (openai_root), "model"), ==, "claude-real-1");
  assert_json (openai_usage, "{\"prompt_tokens\":118,\"completion_tokens\":9,\"total_tokens\":127,"
                             "\"prompt_tokens_details\":{\"cached_tokens\":100}}");
  g_assert_cmpstr (json_object_get_string_member (message, "stop_reason"), ==, "max_tokens");
  g_assert_cmpstr (json_object_get_string_member (message, "model"), ==, "gpt-real-0613");
  assert_json (anthropic_usage, "{\"input_tokens\":15,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":5,"
                                "\"output_tokens\":7}");
}

static const Setup anthropic_refusal = {
  OPENAI_TURN ("content_filter"),
  ANTHROPIC_TURN ("refusal", "null"),
  0, 0,
};

static const Setup anthropic_stop_sequence = {
  OPENAI_TURN ("stop"),
  ANTHROPIC_TURN ("stop_sequence", "\"END\""),
  0, 0,
};

/* Log probabilities the client asked for come with their deltas on the
 * OpenAI route, and with the whole answer; the typed stream keeps its
 * frozen payload. */
#define LOGPROB(token) "{\"token\":\"" token "\",\"logprob\":-0.5,\"bytes\":null,\"top_logprobs\":[]}"
static const Setup with_logprobs = {
  OPENAI_CHUNK ("{\"index\":0,\"delta\":{\"content\":\"Hel\"},\"logprobs\":{\"content\":[" LOGPROB ("Hel") "]},"
                "\"finish_reason\":null}", "")
  OPENAI_CHUNK ("{\"index\":0,\"delta\":{\"content\":\"lo\"},\"logprobs\":{\"content\":[" LOGPROB ("lo") "]},"
                "\"finish_reason\":\"stop\"}", "")
  "data: [DONE]\n\n",
  ANTHROPIC_TURN ("end_turn", "null"),
  0, 0,
};

static void
test_logprobs (Fixture       *fixture,
               gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) streamed = post (fixture, "/oa/chat/completions", CHAT (",\"logprobs\":true,\"stream\":true"));
  g_autoptr(SymfonicTestResponse) answer = post (fixture, "/oa/chat/completions", CHAT (",\"logprobs\":true"));
  g_autoptr(SymfonicTestResponse) typed = post (fixture, "/typed-oa", "{\"query\":\"Hi\"}");
  g_autoptr(GPtrArray) frames = frames_of (streamed);
  g_autoptr(GPtrArray) typed_frames = frames_of (typed);
  g_autoptr(JsonNode) root = symfonic_test_response_dup_json (answer);
  JsonObject *choice = json_array_get_object_element (json_object_get_array_member (json_node_get_object (root), "choices"), 0);
  g_autofree char *all = json_to_string (json_object_get_member (choice, "logprobs"), FALSE);
  g_autoptr(JsonNode) first = symfonic_test_json_parse (frame_at (frames, 0)->data);
  JsonObject *first_choice = json_array_get_object_element (json_object_get_array_member (json_node_get_object (first), "choices"), 0);
  g_autofree char *first_logprobs = json_to_string (json_object_get_member (first_choice, "logprobs"), FALSE);

  assert_json (first_logprobs, "{\"content\":[" LOGPROB ("Hel") "]}");
  assert_json (all, "{\"content\":[" LOGPROB ("Hel") "," LOGPROB ("lo") "]}");
  g_assert_cmpstr (frame_at (typed_frames, 0)->event, ==, "TextDeltaEvent");
  g_assert_cmpstr (frame_at (typed_frames, 0)->data, ==, "{\"text\":\"Hel\"}");
}

/* The typed terminal says why the answer ended, in its own words. */
static void
check_typed_reason (Fixture    *fixture,
                    const char *path,
                    const char *reason)
{
  g_autoptr(SymfonicTestResponse) response = post (fixture, path, "{\"query\":\"Hi\"}");
  g_autoptr(GPtrArray) frames = frames_of (response);
  g_autoptr(JsonNode) keep = NULL;
  JsonObject *terminal = last_frame (frames, "ResponseCompleteEvent", &keep);
  g_autoptr(JsonNode) keep_start = NULL;
  JsonObject *start = last_frame (frames, "ToolCallStartEvent", &keep_start);
  g_autoptr(GString) arguments = g_string_new (json_object_get_string_member (start, "arguments"));

  g_assert_cmpstr (json_object_get_string_member (terminal, "finish_reason"), ==, reason);
  for (guint i = 0; i < frames->len; i++)
    {
      g_autoptr(JsonNode) root = NULL;

      if (!g_str_equal (frame_at (frames, i)->event, "ToolCallDeltaEvent"))
        continue;
      root = symfonic_test_json_parse (frame_at (frames, i)->data);
      g_assert_cmpstr (json_object_get_string_member (json_node_get_object (root), "tool_call_id"), ==,
                       json_object_get_string_member (start, "tool_call_id"));
      g_string_append (arguments, json_object_get_string_member (json_node_get_object (root), "arguments"));
    }
  g_assert_cmpstr (arguments->str, ==, "{\"a\":1}");
}

static void
test_typed_reasons (Fixture       *fixture,
                    gconstpointer  user_data)
{
  check_typed_reason (fixture, "/typed-oa", "length");
  check_typed_reason (fixture, "/typed-an", "length");
}

static void
test_refusal_reasons (Fixture       *fixture,
                      gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) anthropic = post (fixture, "/an/messages", MESSAGES (""));
  g_autoptr(SymfonicTestResponse) openai = post (fixture, "/oa-an/chat/completions", CHAT (""));
  g_autoptr(JsonNode) anthropic_root = symfonic_test_response_dup_json (anthropic);
  g_autoptr(JsonNode) openai_root = symfonic_test_response_dup_json (openai);
  JsonObject *choice = json_array_get_object_element (json_object_get_array_member (json_node_get_object (openai_root),
                                                                                    "choices"), 0);

  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (anthropic_root), "stop_reason"), ==, "refusal");
  g_assert_cmpstr (json_object_get_string_member (choice, "finish_reason"), ==, "content_filter");
  check_typed_reason (fixture, "/typed-an", "refusal");
  check_typed_reason (fixture, "/typed-oa", "content_filter");
}

static void
test_stop_sequence (Fixture       *fixture,
                    gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) anthropic = post (fixture, "/an/messages", MESSAGES (""));
  g_autoptr(JsonNode) root = symfonic_test_response_dup_json (anthropic);

  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (root), "stop_reason"), ==, "stop_sequence");
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (root), "stop_sequence"), ==, "END");
  check_typed_reason (fixture, "/typed-an", "stop");
}

/* The chunks route carries each call whole, the chat route lists them. */
static void
test_tool_calls_elsewhere (Fixture       *fixture,
                           gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) chunks = post (fixture, "/chunks", "{\"query\":\"Hi\"}");
  g_autoptr(SymfonicTestResponse) chat = post (fixture, "/chat", "{\"query\":\"Hi\"}");
  g_autoptr(GPtrArray) frames = frames_of (chunks);
  g_autoptr(JsonNode) chat_root = symfonic_test_response_dup_json (chat);
  g_autofree char *chat_calls = json_to_string (json_object_get_member (json_node_get_object (chat_root), "tool_calls"),
                                                FALSE);
  guint calls = 0;

  for (guint i = 0; i < frames->len; i++)
    {
      g_autoptr(JsonNode) root = symfonic_test_json_parse (frame_at (frames, i)->data);
      JsonObject *chunk = json_node_get_object (root);
      g_autofree char *data = NULL;

      if (!g_str_equal (json_object_get_string_member (chunk, "event_type"), "tool_call"))
        continue;
      data = json_to_string (json_object_get_member (chunk, "data"), FALSE);
      assert_json (data, "{\"tool_name\":\"f\",\"tool_call_id\":\"call_1\",\"arguments\":\"{\\\"a\\\":1}\"}");
      calls++;
    }
  g_assert_cmpuint (calls, ==, 1);
  /* the 9.x/10.x line: the answer's AI message carries the call */
  {
    g_autoptr(SymfonicTestResponse) old = post (fixture, "/chunks-10", "{\"query\":\"Hi\"}");
    g_autoptr(GPtrArray) old_frames = frames_of (old);
    gboolean found = FALSE;

    for (guint i = 0; i < old_frames->len; i++)
      {
        g_autoptr(JsonNode) root = symfonic_test_json_parse (frame_at (old_frames, i)->data);
        JsonObject *chunk = json_node_get_object (root);
        g_autofree char *data = NULL;

        if (!g_str_equal (json_object_get_string_member (chunk, "event_type"), "update"))
          continue;
        data = json_to_string (json_object_get_member (chunk, "data"), FALSE);
        assert_json (data, "{\"agent\":{\"messages\":[{\"type\":\"ai\",\"content\":\"Hello\","
                           "\"tool_calls\":[{\"name\":\"f\",\"args\":{\"a\":1},\"id\":\"call_1\",\"type\":\"tool_call\"}]}]}}");
        found = TRUE;
      }
    g_assert_true (found);
  }
  assert_json (chat_calls, "[{\"tool_name\":\"f\",\"tool_call_id\":\"toolu_1\",\"arguments\":\"{\\\"a\\\":1}\"}]");
}

/* --- the Responses API ---------------------------------------------------------- */

static void
test_responses_stream (Fixture       *fixture,
                       gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) response = post (fixture, "/oa/responses", RESPONSES (",\"stream\":true"));
  g_autoptr(GPtrArray) frames = frames_of (response);
  g_autoptr(JsonNode) keep = NULL;
  JsonObject *last;
  JsonObject *usage;
  g_autoptr(GString) summary = g_string_new (NULL);
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GString) arguments = g_string_new (NULL);

  for (guint i = 0; i < frames->len; i++)
    {
      SymfonicTestFrame *frame = frame_at (frames, i);
      g_autoptr(JsonNode) root = symfonic_test_json_parse (frame->data);
      JsonObject *event = json_node_get_object (root);

      /* every frame is the event its type names, numbered as its id */
      g_assert_cmpstr (json_object_get_string_member (event, "type"), ==, frame->event);
      g_assert_cmpint (json_object_get_int_member (event, "sequence_number"), ==, i + 1);
      if (g_str_equal (frame->event, "response.reasoning_summary_text.delta"))
        g_string_append (summary, json_object_get_string_member (event, "delta"));
      else if (g_str_equal (frame->event, "response.output_text.delta"))
        g_string_append (text, json_object_get_string_member (event, "delta"));
      else if (g_str_equal (frame->event, "response.function_call_arguments.delta"))
        g_string_append (arguments, json_object_get_string_member (event, "delta"));
    }
  g_assert_cmpstr (frame_at (frames, 0)->event, ==, "response.created");
  g_assert_cmpstr (summary->str, ==, "Hmm.");
  g_assert_cmpstr (text->str, ==, "Hello");
  g_assert_cmpstr (arguments->str, ==, "{\"a\":1}");
  g_assert_true (has_frame (frames, "response.function_call_arguments.done"));

  /* cut short: incomplete, with the reason and every item */
  last = json_object_get_object_member (last_frame (frames, "response.incomplete", &keep), "response");
  g_assert_cmpstr (json_object_get_string_member (last, "status"), ==, "incomplete");
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (last, "incomplete_details"), "reason"), ==,
                   "max_output_tokens");
  g_assert_cmpstr (json_object_get_string_member (last, "model"), ==, "gpt-real-0613");
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (last, "output")), ==, 3);
  usage = json_object_get_object_member (last, "usage");
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (usage, "input_tokens_details"),
                                               "cached_tokens"), ==, 5);
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (usage, "output_tokens_details"),
                                               "reasoning_tokens"), ==, 3);
}

static JsonObject *
wait_response (Fixture    *fixture,
               const char *id,
               const char *status,
               JsonNode  **keep)
{
  g_autofree char *path = g_strdup_printf ("/oa/responses/%s", id);

  for (guint i = 0; i < 300; i++)
    {
      g_autoptr(SymfonicTestResponse) response = get (fixture, path);

      g_assert_cmpuint (response->status, ==, 200);
      g_clear_pointer (keep, json_node_unref);
      *keep = symfonic_test_response_dup_json (response);
      if (g_strcmp0 (json_object_get_string_member (json_node_get_object (*keep), "status"), status) == 0)
        return json_node_get_object (*keep);
      g_usleep (10000);
    }
  g_error ("response %s never was %s", id, status);
}

/* A background response is answered at once, runs without its client, is
 * read again whole, or as its events after a sequence number; only by
 * whoever started it. */
static void
test_responses_background (Fixture       *fixture,
                           gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) queued = post (fixture, "/oa/responses", RESPONSES (",\"background\":true"));
  g_autoptr(JsonNode) queued_root = symfonic_test_response_dup_json (queued);
  const char *id = json_object_get_string_member (json_node_get_object (queued_root), "id");
  g_autoptr(JsonNode) keep = NULL;
  JsonObject *done;
  g_autofree char *resume_path = g_strdup_printf ("/oa/responses/%s?stream=true&starting_after=16", id);
  g_autoptr(SymfonicTestResponse) resumed = NULL;
  g_autoptr(GPtrArray) frames = NULL;
  g_autofree char *bob_url = g_strdup_printf ("/oa/responses/%s", id);
  g_autofree char *url = NULL;
  g_autoptr(SymfonicTestResponse) other = NULL;

  g_assert_cmpuint (queued->status, ==, 200);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (queued_root), "status"), ==, "queued");
  g_assert_true (json_object_get_boolean_member (json_node_get_object (queued_root), "background"));

  done = wait_response (fixture, id, "incomplete", &keep);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (done, "output")), ==, 3);

  resumed = get (fixture, resume_path);
  frames = frames_of (resumed);
  g_assert_cmpuint (frames->len, ==, 4);
  for (guint i = 0; i < frames->len; i++)
    {
      g_autoptr(JsonNode) root = symfonic_test_json_parse (frame_at (frames, i)->data);

      g_assert_cmpint (json_object_get_int_member (json_node_get_object (root), "sequence_number"), ==, 17 + i);
    }
  g_assert_cmpstr (frame_at (frames, 3)->event, ==, "response.incomplete");

  url = symfonic_test_server_dup_url (fixture->server, bob_url);
  other = symfonic_test_request (fixture->session, "GET", url, NULL, NULL, "Authorization", "Bearer demo-token-bob",
                                 "X-Tenant-ID", "globex", NULL);
  g_assert_cmpuint (other->status, ==, 404);
}

/* --- the endpoints and errors the SDKs call ---------------------------------------- */

static void
test_models (Fixture       *fixture,
             gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) list = get (fixture, "/an/models");
  g_autoptr(SymfonicTestResponse) one = get (fixture, "/an/models/claude-src");
  g_autoptr(SymfonicTestResponse) openai_one = get (fixture, "/oa/models/gpt-src");
  g_autoptr(SymfonicTestResponse) unknown = get (fixture, "/an/models/other");

  g_assert_cmpuint (list->status, ==, 200);
  assert_json (symfonic_test_response_get_text (list),
               "{\"data\":[{\"type\":\"model\",\"id\":\"claude-src\",\"display_name\":\"claude-src\","
               "\"created_at\":\"1970-01-01T00:00:00Z\"}],\"has_more\":false,\"first_id\":\"claude-src\",\"last_id\":\"claude-src\"}");
  assert_json (symfonic_test_response_get_text (one),
               "{\"type\":\"model\",\"id\":\"claude-src\",\"display_name\":\"claude-src\",\"created_at\":\"1970-01-01T00:00:00Z\"}");
  assert_json (symfonic_test_response_get_text (openai_one),
               "{\"id\":\"gpt-src\",\"object\":\"model\",\"created\":0,\"owned_by\":\"symfonic-gateway\"}");
  g_assert_cmpuint (unknown->status, ==, 404);
  g_assert_nonnull (soup_message_headers_get_one (list->headers, "request-id"));
  assert_json (symfonic_test_response_get_text (unknown),
               "{\"type\":\"error\",\"error\":{\"type\":\"not_found_error\",\"message\":\"No such model\"}}");
}

static void
test_count_tokens (Fixture       *fixture,
                   gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) counted =
    post (fixture, "/an/messages/count_tokens",
          "{\"model\":\"m\",\"system\":\"Be brief.\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],"
          "\"tools\":[{\"name\":\"f\",\"input_schema\":{\"type\":\"object\"}}]}");
  g_autoptr(SymfonicTestResponse) estimated =
    post (fixture, "/an-oa/messages/count_tokens", "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi there\"}]}");
  g_autoptr(SymfonicTestResponse) malformed = post (fixture, "/an/messages/count_tokens", "{\"model\":\"m\"}");
  g_autofree char *body = sent (fixture, COUNT_UPSTREAM, 1);

  g_assert_cmpuint (counted->status, ==, 200);
  assert_json (symfonic_test_response_get_text (counted), "{\"input_tokens\":42}");
  g_assert_cmpstr (soup_message_headers_get_one (counted->headers, "X-Symfonic-Token-Count"), ==, "provider");
  assert_json (body, "{\"model\":\"claude-src\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],"
                     "\"system\":\"" OPERATOR_PROMPT "\\n\\nBe brief.\",\"tools\":[{\"name\":\"f\",\"input_schema\":{\"type\":\"object\"}}]}");
  g_assert_cmpuint (estimated->status, ==, 200);
  g_assert_cmpstr (soup_message_headers_get_one (estimated->headers, "X-Symfonic-Token-Count"), ==, "estimate");
  /* one token per 4 bytes of `[{"role":"user","content":"Hi there"}]` */
  assert_json (symfonic_test_response_get_text (estimated), "{\"input_tokens\":10}");
  g_assert_cmpuint (malformed->status, ==, 400);
}

/* Refusals in the provider's shape, 404 included, with a request id. */
static void
test_error_shapes (Fixture       *fixture,
                   gconstpointer  user_data)
{
  g_autoptr(SymfonicTestResponse) openai = post (fixture, "/oa/embeddings", "{}");
  g_autoptr(SymfonicTestResponse) anthropic = get (fixture, "/an/files");
  g_autoptr(SymfonicTestResponse) bad = post (fixture, "/an/messages", "{\"model\":\"m\"}");

  g_assert_cmpuint (openai->status, ==, 404);
  assert_json (symfonic_test_response_get_text (openai),
               "{\"error\":{\"message\":\"No route serves this path\",\"type\":\"not_found_error\",\"param\":null,"
               "\"code\":\"not_found\"}}");
  g_assert_nonnull (soup_message_headers_get_one (openai->headers, "x-request-id"));
  g_assert_cmpuint (anthropic->status, ==, 404);
  assert_json (symfonic_test_response_get_text (anthropic),
               "{\"type\":\"error\",\"error\":{\"type\":\"not_found_error\",\"message\":\"No route serves this path\"}}");
  g_assert_nonnull (soup_message_headers_get_one (anthropic->headers, "request-id"));
  /* the refused run's id */
  g_assert_cmpuint (bad->status, ==, 400);
  g_assert_true (g_uuid_string_is_valid (soup_message_headers_get_one (bad->headers, "request-id")));
}

/* The provider's rate-limit headers reach the client. */
static void
test_rate_limit_headers (void)
{
  g_autoptr(SymfonicTestRawUpstream) raw = symfonic_test_raw_upstream_new ();
  static const char body[] =
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":null}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
    "data: [DONE]\n\n";
  g_autofree char *head = g_strdup_printf ("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                           "x-ratelimit-limit-requests: 100\r\nx-ratelimit-limit-tokens: 5000\r\n"
                                           "x-ratelimit-remaining-requests: 99\r\nx-ratelimit-remaining-tokens: 4000\r\n"
                                           "x-ratelimit-reset-requests: 1s\r\nx-ratelimit-reset-tokens: 6m0s\r\n"
                                           "x-other: no\r\nContent-Length: %zu\r\n\r\n%s", strlen (body), body);
  const char *answer[] = { head, NULL };
  g_autofree char *url = symfonic_test_raw_upstream_dup_url (raw);
  g_autofree char *pipeline = NULL;
  g_autoptr(SymfonicServer) server = NULL;
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestResponse) response = NULL;
  g_autofree char *gateway_url = NULL;

  symfonic_test_raw_upstream_set_answer (raw, answer, TRUE);
  pipeline = g_strdup_printf ("[gateway]\nlisten=127.0.0.1:8080\nworkers=1\n\n"
                              "[route:oa]\npath=/oa\nkind=openai\nsource=oa\nstages=errors\n\n"
                              "[source:oa]\ntype=openai\nbase-url=%s\nmodel=m\n\n"
                              "[stage:errors]\ntype=error-map\ntable=" SYMFONIC_TEST_DATA_DIR "/error-map.ini\n", url);
  server = symfonic_test_server_new (pipeline, symfonic_test_private_dir (), 1);
  gateway_url = symfonic_test_server_dup_url (server, "/oa/chat/completions");
  response = symfonic_test_request (session, "POST", gateway_url, "application/json", CHAT (",\"stream\":true"), NULL);

  g_assert_cmpuint (response->status, ==, 200);
  g_assert_cmpstr (soup_message_headers_get_one (response->headers, "x-ratelimit-limit-requests"), ==, "100");
  g_assert_cmpstr (soup_message_headers_get_one (response->headers, "x-ratelimit-remaining-requests"), ==, "99");
  g_assert_cmpstr (soup_message_headers_get_one (response->headers, "x-ratelimit-reset-tokens"), ==, "6m0s");
  g_assert_null (soup_message_headers_get_one (response->headers, "x-other"));
  symfonic_server_stop (server);
}

/* With heartbeats, the client's head goes out once the provider's is in,
 * and heartbeats cover the model's silence before its first token. */
static const Setup thinking_first = {
  OPENAI_TURN ("stop"),
  ANTHROPIC_TURN ("end_turn", "null"),
  1, 2500,
};

static void
test_heartbeat_before_first_token (Fixture       *fixture,
                                   gconstpointer  user_data)
{
  g_autofree char *url = symfonic_test_server_dup_url (fixture->server, "/an/messages");
  g_autoptr(SymfonicTestStream) stream =
    symfonic_test_stream_post (fixture->session, url, MESSAGES (",\"stream\":true"),
                               "Authorization", "Bearer demo-token-alice", "X-Tenant-ID", "acme", NULL);
  const char *first_frame;
  const char *heartbeat;

  symfonic_test_stream_wait_done (stream);
  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, 200);
  /* the head came long before the first event */
  g_assert_cmpint (stream->headers_us - stream->start_us, <, 2 * G_USEC_PER_SEC);
  g_assert_cmpint (stream->end_us - stream->start_us, >=, 2400 * G_TIME_SPAN_MILLISECOND);
  heartbeat = strstr (stream->raw->str, ": keepalive");
  first_frame = strstr (stream->raw->str, "event: message_start");
  g_assert_nonnull (heartbeat);
  g_assert_nonnull (first_frame);
  g_assert_true (heartbeat < first_frame);
}

int
main (int    argc,
      char **argv)
{
  symfonic_test_init (&argc, &argv);

#define ADD(name, setup, func) \
  g_test_add ("/provider-fidelity/" name, Fixture, setup, fixture_set_up, func, fixture_tear_down)
  ADD ("request/openai-passthrough", NULL, test_openai_passthrough);
  ADD ("request/anthropic-passthrough", NULL, test_anthropic_passthrough);
  ADD ("request/openai-to-anthropic", NULL, test_openai_to_anthropic);
  ADD ("request/anthropic-to-openai", NULL, test_anthropic_to_openai);
  ADD ("request/responses", NULL, test_responses_request);
  ADD ("request/refusals", NULL, test_refusals);
  ADD ("answer/openai", NULL, test_openai_answer);
  ADD ("answer/anthropic", NULL, test_anthropic_answer);
  ADD ("answer/across", NULL, test_cross_answers);
  ADD ("answer/typed-reasons", NULL, test_typed_reasons);
  ADD ("answer/refusal", &anthropic_refusal, test_refusal_reasons);
  ADD ("answer/stop-sequence", &anthropic_stop_sequence, test_stop_sequence);
  ADD ("answer/tool-calls-elsewhere", NULL, test_tool_calls_elsewhere);
  ADD ("answer/logprobs", &with_logprobs, test_logprobs);
  ADD ("responses/stream", NULL, test_responses_stream);
  ADD ("responses/background", NULL, test_responses_background);
  ADD ("endpoints/models", NULL, test_models);
  ADD ("endpoints/count-tokens", NULL, test_count_tokens);
  ADD ("endpoints/error-shapes", NULL, test_error_shapes);
  ADD ("heartbeat-before-first-token", &thinking_first, test_heartbeat_before_first_token);
#undef ADD
  g_test_add_func ("/provider-fidelity/rate-limit-headers", test_rate_limit_headers);

  return g_test_run ();
}
