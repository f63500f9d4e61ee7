/* test-upstream-lies.c: what an upstream claims is not trusted
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each source (runtime, openai, anthropic) streams a delta from a fake
 * upstream, then a usage report that cannot be true: past the route's
 * max-usage-tokens, past the max_tokens the provider was sent, negative,
 * not an integer, or a running total that shrinks. The client must get
 * the delta and then exactly one error frame, an opaque 502; and the
 * budget its route shares with another route must still admit the
 * tenant there, at once. A provider's tool call whose arguments pass the
 * bound ends the stream the same way, rather than going on cut short.
 */
#include <string.h>

#include "symfonic-test-support.h"
#include "symfonic-test-upstream.h"

#define AUTH_HEADERS "Authorization", "Bearer demo-token-alice", "X-Tenant-ID", "acme"
#define QUERY "{\"query\":\"count me\"}"
#define LIE_FRAME "{\"detail\":\"Internal server error\",\"status\":502,\"code\":\"upstream_error\"}"

#define RUNTIME_DELTA "event: TextDeltaEvent\ndata: {\"text\":\"Hi\"}\n\n"
#define RUNTIME_USAGE(usage) "event: usage\ndata: " usage "\n\n"
#define RUNTIME_END "event: ResponseCompleteEvent\ndata: {\"text\":\"Hi\",\"duration_ms\":1}\n\n"

#define OPENAI_CHUNK(rest) "data: {\"id\":\"c-1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\"," rest "}\n\n"
#define OPENAI_DELTA OPENAI_CHUNK ("\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":null}]")
#define OPENAI_USAGE(usage) OPENAI_CHUNK ("\"choices\":[],\"usage\":" usage)
#define OPENAI_END "data: [DONE]\n\n"

#define ANTHROPIC_EVENT(name, data) "event: " name "\ndata: " data "\n\n"
#define ANTHROPIC_START(usage) \
  ANTHROPIC_EVENT ("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\"," \
                   "\"role\":\"assistant\",\"content\":[],\"model\":\"m\",\"usage\":" usage "}}")
#define ANTHROPIC_DELTA \
  ANTHROPIC_EVENT ("content_block_start", "{\"type\":\"content_block_start\",\"index\":0," \
                   "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}") \
  ANTHROPIC_EVENT ("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0," \
                   "\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}") \
  ANTHROPIC_EVENT ("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}")
#define ANTHROPIC_USAGE(usage) \
  ANTHROPIC_EVENT ("message_delta", "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}," \
                   "\"usage\":" usage "}")
#define ANTHROPIC_END ANTHROPIC_EVENT ("message_stop", "{\"type\":\"message_stop\"}")

typedef struct
{
  const char *name;
  /* the source type, and the upstream's path it reads */
  const char *type;
  const char *path;
  const char *body;
  /* more keys of the lying route */
  const char *route_lines;
} LieCase;

static const LieCase lie_cases[] = {
  /* 2^63 - 1 tokens, as the finding had it */
  { "runtime/huge", "runtime", "/run",
    RUNTIME_DELTA RUNTIME_USAGE ("{\"input_tokens\":9223372036854775807,\"output_tokens\":0}") RUNTIME_END, "" },
  { "openai/huge", "openai", "/v1/chat/completions",
    OPENAI_DELTA OPENAI_USAGE ("{\"prompt_tokens\":3,\"completion_tokens\":9223372036854775807}") OPENAI_END, "" },
  { "anthropic/huge", "anthropic", "/v1/messages",
    ANTHROPIC_START ("{\"input_tokens\":3,\"output_tokens\":1}") ANTHROPIC_DELTA
    ANTHROPIC_USAGE ("{\"output_tokens\":9223372036854775807}") ANTHROPIC_END, "" },
  /* two reports that only overflow together */
  { "runtime/overflow", "runtime", "/run",
    RUNTIME_DELTA RUNTIME_USAGE ("{\"input_tokens\":9223372036854775807,\"output_tokens\":9223372036854775807}")
    RUNTIME_USAGE ("{\"input_tokens\":9223372036854775807,\"output_tokens\":9223372036854775807}") RUNTIME_END,
    "max-usage-tokens=1000000000000\n" },
  /* within the default cap, past this route's */
  { "runtime/past-route-cap", "runtime", "/run",
    RUNTIME_DELTA RUNTIME_USAGE ("{\"input_tokens\":700,\"output_tokens\":400}") RUNTIME_END,
    "max-usage-tokens=1000\n" },
  /* the source asked for at most max-tokens=256 */
  { "openai/past-max-tokens", "openai", "/v1/chat/completions",
    OPENAI_DELTA OPENAI_USAGE ("{\"prompt_tokens\":3,\"completion_tokens\":257}") OPENAI_END, "" },
  { "runtime/negative", "runtime", "/run",
    RUNTIME_DELTA RUNTIME_USAGE ("{\"input_tokens\":-4,\"output_tokens\":2}") RUNTIME_END, "" },
  { "runtime/not-a-number", "runtime", "/run",
    RUNTIME_DELTA RUNTIME_USAGE ("{\"input_tokens\":2,\"output_tokens\":\"many\"}") RUNTIME_END, "" },
  { "openai/fraction", "openai", "/v1/chat/completions",
    OPENAI_DELTA OPENAI_USAGE ("{\"prompt_tokens\":3,\"completion_tokens\":1.5}") OPENAI_END, "" },
  { "openai/past-int64", "openai", "/v1/chat/completions",
    OPENAI_DELTA OPENAI_USAGE ("{\"prompt_tokens\":3,\"completion_tokens\":18446744073709551616}") OPENAI_END, "" },
  /* Anthropic's output count is a running total */
  { "anthropic/shrinking-total", "anthropic", "/v1/messages",
    ANTHROPIC_START ("{\"input_tokens\":3,\"output_tokens\":40}") ANTHROPIC_DELTA
    ANTHROPIC_USAGE ("{\"output_tokens\":20}") ANTHROPIC_END, "" },
};

static char *
write_key_file (void)
{
  char *path = g_build_filename (symfonic_test_private_dir (), "provider.key", NULL);
  g_autoptr(GError) error = NULL;

  g_file_set_contents (path, "sk-test\n", -1, &error);
  g_assert_no_error (error);

  return path;
}

/* Two routes share one budget: /lied reads the fake upstream at @url,
 * /other replays a transcript. */
static SymfonicServer *
gateway_new (const LieCase *c,
             const char    *url)
{
  g_autofree char *key_file = write_key_file ();
  g_autofree char *source_lines = NULL;
  g_autofree char *text = NULL;

  if (g_str_equal (c->type, "runtime"))
    source_lines = g_strdup_printf ("url=%s\n", url);
  else
    source_lines = g_strdup_printf ("base-url=%s\nmodel=m\napi-key-file=%s\nmax-tokens=256\n", url, key_file);

  text = g_strdup_printf ("[gateway]\nlisten=127.0.0.1:8080\nworkers=1\n\n"
                          "[route:lied]\npath=/lied\nkind=typed\nsource=up\nstages=auth;budget;errors\n%s\n"
                          "[route:other]\npath=/other\nkind=typed\nsource=replay\nstages=auth;budget;errors\n\n"
                          "[source:up]\ntype=%s\n%s\n"
                          "[source:replay]\ntype=replay\ntranscripts=" SYMFONIC_TEST_DATA_DIR "/transcripts\n"
                          "default-transcript=plain\ntime-scale=0\n\n"
                          "[stage:auth]\ntype=auth\ntokens-file=" SYMFONIC_TEST_DATA_DIR "/demo-tokens.ini\n\n"
                          "[stage:budget]\ntype=budget\ntokens-per-window=100000\nwindow-seconds=60\n"
                          "reserve-tokens=1000\n\n"
                          "[stage:errors]\ntype=error-map\ntable=" SYMFONIC_TEST_DATA_DIR "/error-map.ini\n",
                          c->route_lines, c->type, source_lines);

  return symfonic_test_server_new (text, symfonic_test_private_dir (), 1);
}

static SymfonicTestFrame *
frame_at (SymfonicTestStream *stream,
          guint               i)
{
  return g_ptr_array_index (stream->frames, i);
}

static void
test_lie (gconstpointer data)
{
  const LieCase *c = data;
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autoptr(GBytes) body = g_bytes_new_static (c->body, strlen (c->body));
  SymfonicTestScenario scenario = { .body = body, .split = SYMFONIC_TEST_SPLIT_WHOLE };
  g_autofree char *url = symfonic_test_upstream_add (fake, c->path, &scenario);
  g_autofree char *base_url = NULL;
  g_autoptr(SymfonicServer) server = NULL;
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) lied = NULL;
  g_autoptr(SymfonicTestStream) other = NULL;
  g_autofree char *lied_url = NULL;
  g_autofree char *other_url = NULL;
  g_autofree char *root = NULL;
  const char *retry_after;
  double failed_before;
  guint n_errors = 0;

  /* a provider's base URL is the root its endpoint is under */
  if (!g_str_equal (c->type, "runtime"))
    url[strlen (url) - strlen (c->path) + strlen ("/v1")] = '\0';
  server = gateway_new (c, url);
  lied_url = symfonic_test_server_dup_url (server, "/lied");
  other_url = symfonic_test_server_dup_url (server, "/other");
  root = symfonic_test_server_dup_url (server, "");
  failed_before = symfonic_test_fetch_metric (session, root, "symfonic_streams_failed_total");

  lied = symfonic_test_stream_post (session, lied_url, QUERY, AUTH_HEADERS, NULL);
  symfonic_test_stream_wait_done (lied);
  other = symfonic_test_stream_post (session, other_url, QUERY, AUTH_HEADERS, NULL);
  symfonic_test_stream_wait_done (other);
  retry_after = soup_message_headers_get_one (soup_message_get_response_headers (other->message), "Retry-After");
  g_test_message ("%s: the lying stream: HTTP %u, %u frames, last %s; the other route: HTTP %u, Retry-After %s",
                  c->name, lied->status, lied->frames->len,
                  lied->frames->len > 0 ? frame_at (lied, lied->frames->len - 1)->event : "none",
                  other->status, retry_after != NULL ? retry_after : "none");

  /* the delta, then the one error frame, opaque */
  g_assert_no_error (lied->error);
  g_assert_cmpuint (lied->status, ==, 200);
  g_assert_cmpuint (lied->frames->len, ==, 2);
  g_assert_cmpstr (frame_at (lied, 0)->event, ==, "TextDeltaEvent");
  for (guint i = 0; i < lied->frames->len; i++)
    {
      g_assert_cmpstr (frame_at (lied, i)->event, !=, "ResponseCompleteEvent");
      n_errors += g_str_equal (frame_at (lied, i)->event, "error");
    }
  g_assert_cmpuint (n_errors, ==, 1);
  g_assert_cmpstr (frame_at (lied, 1)->event, ==, "error");
  g_assert_cmpstr (frame_at (lied, 1)->data, ==, LIE_FRAME);
  g_assert_cmpfloat (symfonic_test_fetch_metric (session, root, "symfonic_streams_failed_total"), ==,
                     failed_before + 1);

  /* the budget the routes share admits the tenant at once */
  g_assert_no_error (other->error);
  g_assert_cmpuint (other->status, ==, 200);
  g_assert_null (retry_after);
  g_assert_cmpuint (other->frames->len, >, 0);
  g_assert_cmpstr (frame_at (other, other->frames->len - 1)->event, ==, "ResponseCompleteEvent");

  symfonic_server_stop (server);
}

/* A budget of 100 tokens: "count me" is 2 of them, leaving 392 bytes of
 * text. The first delta (4 bytes) passes, the second (400) would not: the
 * stream ends with budget_exceeded after one delta, and is charged
 * 2 + ceil (4 / 4) = 3 tokens, not the 103 its refused delta would make.
 * So another stream's reservation of 90 still fits. */
static void
test_refused_delta_not_charged (void)
{
  g_autofree char *dir = g_build_filename (symfonic_test_private_dir (), "cut", NULL);
  g_autofree char *transcript = g_build_filename (dir, "cut.jsonl", NULL);
  g_autoptr(GString) lines = g_string_new ("{\"event\":\"TextDeltaEvent\",\"data\":{\"text\":\"abcd\"}}\n"
                                           "{\"event\":\"TextDeltaEvent\",\"data\":{\"text\":\"");
  g_autofree char *text = NULL;
  g_autoptr(SymfonicServer) server = NULL;
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) cut = NULL;
  g_autoptr(SymfonicTestStream) next = NULL;
  g_autofree char *url = NULL;
  g_autoptr(GError) error = NULL;
  SymfonicTestFrame *last;

  for (guint i = 0; i < 400; i++)
    g_string_append_c (lines, 'x');
  g_string_append (lines, "\"}}\n{\"event\":\"ResponseCompleteEvent\",\"data\":{\"text\":\"\",\"duration_ms\":1}}\n");
  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_file_set_contents (transcript, lines->str, -1, &error);
  g_assert_no_error (error);

  text = g_strdup_printf ("[gateway]\nlisten=127.0.0.1:8080\nworkers=1\n\n"
                          "[route:cut]\npath=/cut\nkind=typed\nsource=replay\nstages=auth;budget;errors\n\n"
                          "[source:replay]\ntype=replay\ntranscripts=%s\ndefault-transcript=cut\n\n"
                          "[stage:auth]\ntype=auth\ntokens-file=" SYMFONIC_TEST_DATA_DIR "/demo-tokens.ini\n\n"
                          "[stage:budget]\ntype=budget\ntokens-per-window=100\nwindow-seconds=60\n"
                          "reserve-tokens=90\n\n"
                          "[stage:errors]\ntype=error-map\ntable=" SYMFONIC_TEST_DATA_DIR "/error-map.ini\n",
                          dir);
  server = symfonic_test_server_new (text, symfonic_test_private_dir (), 1);
  url = symfonic_test_server_dup_url (server, "/cut");

  cut = symfonic_test_stream_post (session, url, QUERY, AUTH_HEADERS, NULL);
  symfonic_test_stream_wait_done (cut);
  next = symfonic_test_stream_post (session, url, QUERY, AUTH_HEADERS, NULL);
  symfonic_test_stream_wait_headers (next);
  g_test_message ("after the cut stream: HTTP %u", next->status);

  g_assert_no_error (cut->error);
  g_assert_cmpuint (cut->frames->len, ==, 2);
  g_assert_cmpstr (frame_at (cut, 0)->data, ==, "{\"text\":\"abcd\"}");
  last = frame_at (cut, 1);
  g_assert_cmpstr (last->event, ==, "error");
  g_assert_nonnull (strstr (last->data, "\"status\":429,\"code\":\"budget_exceeded\""));
  g_assert_cmpuint (next->status, ==, 200);

  symfonic_server_stop (server);
}

typedef struct
{
  const char *type;
  const char *path;
  /* the frames before and after the arguments, which are written as
   * fragments, each a run of 'a's between @open and @close */
  const char *before;
  const char *open;
  const char *close;
  const char *after;
} ToolCase;

static const ToolCase tool_cases[] = {
  { "openai", "/v1/chat/completions",
    OPENAI_DELTA
    OPENAI_CHUNK ("\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\","
                  "\"type\":\"function\",\"function\":{\"name\":\"lookup\",\"arguments\":\"\"}}]}}]"),
    "data: {\"id\":\"c-1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,"
    "\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"",
    "\"}}]}}]}\n\n",
    OPENAI_CHUNK ("\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]") OPENAI_END },
  { "anthropic", "/v1/messages",
    ANTHROPIC_START ("{\"input_tokens\":3,\"output_tokens\":1}") ANTHROPIC_DELTA
    ANTHROPIC_EVENT ("content_block_start", "{\"type\":\"content_block_start\",\"index\":1,"
                     "\"content_block\":{\"type\":\"tool_use\",\"id\":\"call_a\",\"name\":\"lookup\",\"input\":{}}}"),
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,"
    "\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"",
    "\"}}\n\n",
    ANTHROPIC_EVENT ("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":1}")
    ANTHROPIC_USAGE ("{\"output_tokens\":5}") ANTHROPIC_END },
};

/* Five fragments of 256 KiB: 1.25 MiB of arguments, each frame within
 * the 1 MiB a provider's event may have. */
static void
test_tool_arguments_too_large (gconstpointer data)
{
  const ToolCase *c = data;
  LieCase route = { NULL, c->type, c->path, NULL, "" };
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  GString *body = g_string_new (c->before);
  g_autofree char *run = g_strnfill (256 * 1024, 'a');
  g_autoptr(GBytes) bytes = NULL;
  SymfonicTestScenario scenario = { .split = SYMFONIC_TEST_SPLIT_WHOLE };
  g_autofree char *url = NULL;
  g_autoptr(SymfonicServer) server = NULL;
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = NULL;
  g_autofree char *typed_url = NULL;

  for (guint i = 0; i < 5; i++)
    {
      g_string_append (body, c->open);
      g_string_append (body, run);
      g_string_append (body, c->close);
    }
  g_string_append (body, c->after);
  bytes = g_string_free_to_bytes (body);
  scenario.body = bytes;
  url = symfonic_test_upstream_add (fake, c->path, &scenario);
  url[strlen (url) - strlen (c->path) + strlen ("/v1")] = '\0';
  server = gateway_new (&route, url);
  typed_url = symfonic_test_server_dup_url (server, "/lied");

  stream = symfonic_test_stream_post (session, typed_url, QUERY, AUTH_HEADERS, NULL);
  symfonic_test_stream_wait_done (stream);
  g_test_message ("%s: HTTP %u, %u frames, last %s", c->type, stream->status, stream->frames->len,
                  stream->frames->len > 0 ? frame_at (stream, stream->frames->len - 1)->event : "none");

  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, 200);
  /* the call and its fragments up to the 1 MiB it may have go out as
   * they come; the one past it ends the stream, which a client sees cut
   * short rather than complete */
  g_assert_cmpuint (stream->frames->len, ==, 7);
  g_assert_cmpstr (frame_at (stream, 0)->event, ==, "TextDeltaEvent");
  g_assert_cmpstr (frame_at (stream, 1)->event, ==, "ToolCallStartEvent");
  for (guint i = 2; i < 6; i++)
    g_assert_cmpstr (frame_at (stream, i)->event, ==, "ToolCallDeltaEvent");
  g_assert_cmpstr (frame_at (stream, 6)->event, ==, "error");
  g_assert_cmpstr (frame_at (stream, 6)->data, ==, LIE_FRAME);

  symfonic_server_stop (server);
}

/* On an OpenAI route the client's own max_tokens (10, below the source's
 * 256) bounds what the provider may claim to have written. */
static void
test_request_max_tokens (void)
{
  static const char * const reports[] = { "10", "11" };

  for (guint i = 0; i < G_N_ELEMENTS (reports); i++)
    {
      g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
      g_autofree char *usage = g_strdup_printf ("{\"prompt_tokens\":3,\"completion_tokens\":%s}", reports[i]);
      g_autofree char *text = g_strconcat (OPENAI_DELTA "data: {\"id\":\"c-1\",\"object\":\"chat.completion.chunk\","
                                           "\"model\":\"m\",\"choices\":[],\"usage\":", usage, "}\n\n" OPENAI_END, NULL);
      g_autoptr(GBytes) body = g_bytes_new (text, strlen (text));
      SymfonicTestScenario scenario = { .body = body, .split = SYMFONIC_TEST_SPLIT_WHOLE };
      g_autofree char *url = symfonic_test_upstream_add (fake, "/v1/chat/completions", &scenario);
      g_autofree char *key_file = write_key_file ();
      g_autofree char *pipeline = NULL;
      g_autofree char *route_url = NULL;
      g_autoptr(SymfonicServer) server = NULL;
      g_autoptr(SoupSession) session = symfonic_test_session_new ();
      g_autoptr(SymfonicTestResponse) response = NULL;
      const char *answer;

      url[strlen (url) - strlen ("/chat/completions")] = '\0';
      pipeline = g_strdup_printf ("[gateway]\nlisten=127.0.0.1:8080\nworkers=1\n\n"
                                  "[route:p]\npath=/p\nkind=openai\nsource=up\nstages=auth;errors\n\n"
                                  "[source:up]\ntype=openai\nbase-url=%s\nmodel=m\napi-key-file=%s\nmax-tokens=256\n\n"
                                  "[stage:auth]\ntype=auth\ntokens-file=" SYMFONIC_TEST_DATA_DIR "/demo-tokens.ini\n\n"
                                  "[stage:errors]\ntype=error-map\ntable=" SYMFONIC_TEST_DATA_DIR "/error-map.ini\n",
                                  url, key_file);
      server = symfonic_test_server_new (pipeline, symfonic_test_private_dir (), 1);
      route_url = symfonic_test_server_dup_url (server, "/p/chat/completions");
      response = symfonic_test_request (session, "POST", route_url, "application/json",
                                        "{\"model\":\"m\",\"max_tokens\":10,\"stream\":true,"
                                        "\"messages\":[{\"role\":\"user\",\"content\":\"Why?\"}]}",
                                        AUTH_HEADERS, NULL);
      answer = symfonic_test_response_get_text (response);
      g_test_message ("%s output tokens: HTTP %u, %s", reports[i], response->status, answer);

      g_assert_cmpuint (response->status, ==, 200);
      g_assert_nonnull (strstr (answer, "\"content\":\"Hi\""));
      if (i == 0)
        g_assert_null (strstr (answer, "\"error\""));
      else
        g_assert_nonnull (strstr (answer, "\"error\":{\"message\":\"Internal server error\",\"type\":\"server_error\","
                                          "\"param\":null,\"code\":\"upstream_error\"}"));

      symfonic_server_stop (server);
    }
}

int
main (int    argc,
      char **argv)
{
  symfonic_test_init (&argc, &argv);

  for (guint i = 0; i < G_N_ELEMENTS (lie_cases); i++)
    {
      g_autofree char *path = g_strconcat ("/upstream-lies/lie/", lie_cases[i].name, NULL);

      g_test_add_data_func (path, &lie_cases[i], test_lie);
    }

  g_test_add_func ("/upstream-lies/budget/refused-delta-not-charged", test_refused_delta_not_charged);
  g_test_add_func ("/upstream-lies/lie/openai/past-request-max-tokens", test_request_max_tokens);
  g_test_add_data_func ("/upstream-lies/tool-call/openai-too-large", &tool_cases[0], test_tool_arguments_too_large);
  g_test_add_data_func ("/upstream-lies/tool-call/anthropic-too-large", &tool_cases[1], test_tool_arguments_too_large);

  return g_test_run ();
}
