/* test-runtime.c: the runtime source against a fake agent runtime
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * DESIGN 7: the runtime source POSTs the invocation as JSON and reads the
 * typed wire format of section 4 back. The fake runtime is the support
 * library's test upstream, a SoupServer on its own thread that records
 * what it was sent and answers with the frames scripted here, split
 * adversarially (one byte per chunk, random chunks, every line ending,
 * comments and retry lines in between, multi-line data, no final blank
 * line). The gateway runs in its worker threads; the test's client runs
 * on the main thread.
 */
#include <string.h>

#include "symfonic-test-support.h"
#include "symfonic-test-upstream.h"

#define SECRET "SECRET-UPSTREAM-DETAIL"
#define CLOSE_NOTICE_LIMIT_US (1 * G_USEC_PER_SEC)
/* a client's hang-up closes the upstream connection within this */
#define HANG_UP_LIMIT_US (100 * G_TIME_SPAN_MILLISECOND)
#define CLIENT_BODY \
  "{\"query\":\"hello there\",\"session_id\":\"a:b:c\"," \
  "\"attachments\":[{\"name\":\"notes.txt\",\"size\":3},\"plain\"]," \
  "\"tenant_id\":\"evil\",\"principal_id\":\"evil-too\",\"unknown\":1}"

/* --- the fake runtime ------------------------------------------------- */

/* Serves @body at @path from the shared test upstream; returns the URL. */
static char *
fake_runtime_add (SymfonicTestUpstream *fake,
                  const char           *path,
                  guint                 status,
                  const char           *content_type,
                  GBytes               *body,
                  SymfonicTestSplit     split,
                  guint                 delay_ms,
                  SymfonicTestAfter     after)
{
  SymfonicTestScenario scenario = {
    .status = status,
    .content_type = content_type,
    .body = body,
    .split = split,
    /* the test's seed, so --seed replays a failure */
    .seed = g_test_rand_int (),
    .delay_ms = delay_ms,
    .after = after,
  };

  return symfonic_test_upstream_add (fake, path, &scenario);
}

/* --- scripts ------------------------------------------------------------- */

typedef struct
{
  const char *event;
  const char *data;
} ScriptEvent;

/* One turn of an agent runtime, in the published order. The texts hold
 * what would confuse a careless reader: escaped line ends, field names,
 * colons, non-ASCII. */
static const ScriptEvent turn[] = {
  { "ActivationEvent", "{\"node_id\":\"n1\",\"node_label\":\"Paris\",\"score\":0.5,\"layer\":1,\"source_node_id\":null}" },
  { "ThinkingDeltaEvent", "{\"text\":\"hmm\\nlet me think: data: no\"}" },
  { "TextDeltaEvent", "{\"text\":\"Hel\"}" },
  { "ToolCallStartEvent", "{\"tool_name\":\"search\",\"tool_call_id\":\"t1\"}" },
  { "ToolResultEvent", "{\"tool_call_id\":\"t1\",\"result\":{\"hits\":[1,2,3],\"q\":\"caf\\u00e9\"}}" },
  { "TextDeltaEvent", "{\"text\":\"lo, \\\"w\\u00f6rld\\\" \\u20ac\"}" },
  { "usage", "{\"input_tokens\":3,\"output_tokens\":4}" },
  { "TextDeltaEvent", "{\"text\":\"!\\r\\n\\revent: x\\n\\nid: 9\"}" },
  { "MemoryExtractedEvent", "{\"ops\":[{\"op\":\"add\",\"text\":\"likes Paris\"}]}" },
  { "ConsolidationScheduledEvent", "{\"report\":{\"scheduled\":true},\"graph_mutations\":2}" },
  { "GraphNodeCreatedEvent", "{\"node_id\":\"n2\",\"label\":\"Paris\",\"layer\":2}" },
  { "GraphEdgeCreatedEvent", "{\"source\":\"n1\",\"target\":\"n2\",\"relationship\":\"about\"}" },
  { "ResponseCompleteEvent", "{\"text\":\"Hello, \\\"w\\u00f6rld\\\" \\u20ac!\\r\\n\\revent: x\\n\\nid: 9\",\"duration_ms\":12}" },
};

#define TURN_TEXT "Hello, \"w\xC3\xB6rld\" \xE2\x82\xAC!\r\n\revent: x\n\nid: 9"

/* Writes @events as an event stream that uses every liberty the format
 * allows: a byte-order mark, each line ending in turn, comments and retry
 * and id lines between fields, data split over several lines (pretty
 * printed JSON) or without the space after the colon, and @tail after the
 * last data line instead of the blank line. */
static GBytes *
encode_adversarially (const ScriptEvent *events,
                      guint              n_events,
                      const char        *tail)
{
  static const char * const ends[] = { "\n", "\r\n", "\r" };
  GString *out = g_string_new ("\xEF\xBB\xBF: fake runtime\r\nretry: 2500\n");

  for (guint i = 0; i < n_events; i++)
    {
      const char *eol = ends[i % G_N_ELEMENTS (ends)];
      g_autoptr(JsonNode) node = json_from_string (events[i].data, NULL);

      g_assert_nonnull (node);
      if (i % 2 == 0)
        g_string_append_printf (out, ": comment %u%s", i, eol);
      if (i % 4 == 1)
        g_string_append_printf (out, "retry: 1000%s", eol);
      if (i % 3 == 2)
        g_string_append_printf (out, "id: %u%s", i, eol);
      g_string_append_printf (out, "event: %s%s", events[i].event, eol);
      if (i % 4 == 3)
        g_string_append_printf (out, ":between fields%s", eol);

      if (i % 2 == 1)
        {
          g_autofree char *pretty = json_to_string (node, TRUE);
          g_auto(GStrv) lines = g_strsplit (pretty, "\n", -1);

          for (guint j = 0; lines[j] != NULL; j++)
            g_string_append_printf (out, "data: %s%s", lines[j], eol);
        }
      else
        {
          g_string_append_printf (out, "data:%s", events[i].data);
          if (i + 1 < n_events)
            g_string_append (out, eol);
        }

      if (i + 1 < n_events)
        g_string_append (out, eol);
      else
        g_string_append (out, tail);
    }

  return g_string_free_to_bytes (out);
}

static GBytes *
plain_bytes (const char *text)
{
  return g_bytes_new (text, strlen (text));
}

/* --- the gateway ------------------------------------------------------- */

static SymfonicServer *
gateway_new (const char *url,
             const char *extra_source_lines)
{
  g_autofree char *text = NULL;
  g_autofree char *base_dir = g_test_build_filename (G_TEST_DIST, "integration", NULL);

  text = g_strdup_printf ("[gateway]\n"
                          "listen=127.0.0.1:8080\n"
                          "workers=2\n"
                          "\n"
                          "[route:typed]\n"
                          "path=" SYMFONIC_TEST_TYPED_PATH "\n"
                          "kind=typed\n"
                          "source=up\n"
                          "\n"
                          "[route:resume]\n"
                          "path=/api/v1/resume\n"
                          "kind=resume\n"
                          "source=up\n"
                          "\n"
                          "[source:up]\n"
                          "type=runtime\n"
                          "url=%s\n"
                          "request-headers=X-Runtime-Key: k-123;X-Trace:  t 1 \n"
                          "%s\n",
                          url, extra_source_lines != NULL ? extra_source_lines : "");

  return symfonic_test_server_new (text, base_dir, 2);
}

static SymfonicTestStream *
post_query (SymfonicServer *server,
            SoupSession    *session,
            const char     *body)
{
  g_autofree char *url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);

  return symfonic_test_stream_post (session, url, body,
                                    "Authorization", "Bearer client-token",
                                    "X-Tenant-ID", "acme",
                                    NULL);
}

static SymfonicTestStream *
post_typed (SymfonicServer *server,
            SoupSession    *session)
{
  return post_query (server, session, CLIENT_BODY);
}

static void
assert_json_equal (const char *actual,
                   const char *expected)
{
  g_autoptr(JsonNode) a = NULL;
  g_autoptr(JsonNode) e = NULL;
  g_autoptr(GError) error = NULL;

  symfonic_test_json_is_strict (actual, -1, &error);
  g_assert_no_error (error);
  a = json_from_string (actual, NULL);
  e = json_from_string (expected, NULL);
  if (!json_node_equal (a, e))
    g_error ("JSON differs:\n  got      %s\n  expected %s", actual, expected);
}

static SymfonicTestFrame *
frame_at (SymfonicTestStream *stream,
          guint               i)
{
  return g_ptr_array_index (stream->frames, i);
}

/* --- a whole turn, split every way ---------------------------------------- */

static void
check_turn (SymfonicTestSplit chunking,
            guint       delay_ms,
            const char *tail)
{
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autoptr(GBytes) body = encode_adversarially (turn, G_N_ELEMENTS (turn), tail);
  g_autofree char *url = fake_runtime_add (fake, "/turn", 200, "text/event-stream; charset=utf-8",
                                           body, chunking, delay_ms, SYMFONIC_TEST_AFTER_CLOSE);
  g_autoptr(SymfonicServer) server = gateway_new (url, NULL);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = NULL;
  SymfonicTestFrame *last;
  guint n = 0;

  stream = post_typed (server, session);
  symfonic_test_stream_wait_done (stream);
  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, 200);
  g_test_message ("%" G_GSIZE_FORMAT " bytes upstream, turn took %" G_GINT64_FORMAT " ms",
                  g_bytes_get_size (body), (stream->end_us - stream->start_us) / 1000);

  /* every scripted event but usage reports and the runtime's own terminal,
   * in order and equal as JSON */
  for (guint i = 0; i < G_N_ELEMENTS (turn); i++)
    {
      SymfonicTestFrame *frame;

      if (g_str_equal (turn[i].event, "usage") || g_str_equal (turn[i].event, "ResponseCompleteEvent"))
        continue;
      g_assert_cmpuint (n, <, stream->frames->len);
      frame = frame_at (stream, n++);
      g_assert_cmpstr (frame->event, ==, turn[i].event);
      assert_json_equal (frame->data, turn[i].data);
    }

  /* then exactly the terminal, whose text is the deltas', with the usage
   * the runtime reported */
  g_assert_cmpuint (stream->frames->len, ==, n + 1);
  last = frame_at (stream, n);
  g_assert_cmpstr (last->event, ==, "ResponseCompleteEvent");
  {
    g_autoptr(JsonNode) data = symfonic_test_json_parse (last->data);
    JsonObject *usage = json_object_get_object_member (json_node_get_object (data), "usage");

    g_assert_cmpstr (json_object_get_string_member (json_node_get_object (data), "text"), ==, TURN_TEXT);
    g_assert_nonnull (usage);
    g_assert_cmpint (json_object_get_int_member (usage, "input_tokens"), ==, 3);
    g_assert_cmpint (json_object_get_int_member (usage, "output_tokens"), ==, 4);
    g_assert_cmpuint (json_object_get_size (usage), ==, 2);
  }

  g_assert_true (symfonic_test_upstream_wait_over (fake, symfonic_test_upstream_wait_record (fake, "/turn", NULL)));
  symfonic_server_stop (server);
}

static void
test_runtime_turn_whole (void)
{
  check_turn (SYMFONIC_TEST_SPLIT_WHOLE, 0, "\n\n");
}

static void
test_runtime_turn_one_byte (void)
{
  /* and no line end at all after the last data line */
  check_turn (SYMFONIC_TEST_SPLIT_ONE_BYTE, 1, "");
}

static void
test_runtime_turn_random (void)
{
  /* a lone CR last: the reader must not wait for an LF that never comes */
  check_turn (SYMFONIC_TEST_SPLIT_RANDOM, 1, "\r");
}

/* --- what the runtime is sent ------------------------------------------ */

static const char *
member_string (JsonObject *object,
               const char *name)
{
  JsonNode *node = json_object_get_member (object, name);

  g_assert_nonnull (node);
  return JSON_NODE_HOLDS_NULL (node) ? NULL : json_node_get_string (node);
}

static void
test_runtime_request (void)
{
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autoptr(GBytes) body = plain_bytes ("event: TextDeltaEvent\ndata: {\"text\":\"hi\"}\n\n"
                                        "event: ResponseCompleteEvent\ndata: {\"text\":\"hi\",\"duration_ms\":1}\n\n");
  g_autofree char *url = fake_runtime_add (fake, "/request", 200, "text/event-stream", body,
                                           SYMFONIC_TEST_SPLIT_WHOLE, 0, SYMFONIC_TEST_AFTER_CLOSE);
  g_autoptr(SymfonicServer) server = gateway_new (url, NULL);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = post_typed (server, session);
  g_autoptr(JsonNode) attachments = json_from_string ("[{\"name\":\"notes.txt\",\"size\":3},\"plain\"]", NULL);
  SymfonicTestUpstreamRecord *record;
  JsonObject *sent;

  symfonic_test_stream_wait_done (stream);
  g_assert_cmpuint (stream->frames->len, >=, 1);
  g_assert_cmpstr (frame_at (stream, stream->frames->len - 1)->event, ==, "ResponseCompleteEvent");

  record = symfonic_test_upstream_wait_record (fake, "/request", NULL);
  g_assert_nonnull (record->body);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (record->body));
  sent = json_node_get_object (record->body);
  g_assert_cmpstr (member_string (sent, "query"), ==, "hello there");
  g_assert_cmpstr (member_string (sent, "session_id"), ==, "a:b:c");
  g_assert_true (json_node_equal (json_object_get_member (sent, "attachments"), attachments));
  /* identity never comes from the body; without an auth stage there is
   * none at all */
  g_assert_cmpstr (member_string (sent, "tenant_id"), ==, NULL);
  g_assert_cmpstr (member_string (sent, "principal_id"), ==, NULL);
  g_assert_false (json_object_has_member (sent, "resume"));
  g_assert_false (json_object_has_member (sent, "unknown"));

  g_assert_cmpstr (soup_message_headers_get_one (record->headers, "Accept"), ==, "text/event-stream");
  g_assert_cmpstr (soup_message_headers_get_content_type (record->headers, NULL), ==, "application/json");
  g_assert_cmpstr (soup_message_headers_get_one (record->headers, "X-Runtime-Key"), ==, "k-123");
  g_assert_cmpstr (soup_message_headers_get_one (record->headers, "X-Trace"), ==, "t 1");
  /* identity, so frames are not held back in a compressor */
  g_assert_null (soup_message_headers_get_one (record->headers, "Accept-Encoding"));
  /* the client's credentials are not the runtime's business */
  g_assert_null (soup_message_headers_get_one (record->headers, "Authorization"));
  g_assert_null (soup_message_headers_get_one (record->headers, "X-Tenant-ID"));

  symfonic_server_stop (server);
}

static void
test_runtime_resume (void)
{
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autoptr(GBytes) body = plain_bytes ("event: TextDeltaEvent\ndata: {\"text\":\"resumed\"}\n\n"
                                        "event: ResponseCompleteEvent\ndata: {\"text\":\"resumed\",\"duration_ms\":1}\n\n");
  g_autofree char *url = fake_runtime_add (fake, "/resume", 200, "text/event-stream", body,
                                           SYMFONIC_TEST_SPLIT_WHOLE, 0, SYMFONIC_TEST_AFTER_CLOSE);
  g_autoptr(SymfonicServer) server = gateway_new (url, NULL);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autofree char *resume_url = symfonic_test_server_dup_url (server, "/api/v1/resume");
  g_autoptr(SymfonicTestResponse) response = NULL;
  JsonObject *sent;

  response = symfonic_test_request (session, "POST", resume_url, "application/json", CLIENT_BODY, NULL);
  g_test_message ("resume answered %u: %s", response->status, symfonic_test_response_get_text (response));

  sent = json_node_get_object (symfonic_test_upstream_wait_record (fake, "/resume", NULL)->body);
  g_assert_true (json_object_get_boolean_member (sent, "resume"));
  g_assert_cmpstr (member_string (sent, "query"), ==, "hello there");
  g_assert_cmpstr (member_string (sent, "session_id"), ==, "a:b:c");

  symfonic_server_stop (server);
}

/* --- failures: exactly one error frame, never a terminal ------------------ */

typedef struct
{
  const char *name;
  guint       status;
  const char *content_type;
  const char *body;
  SymfonicTestAfter after;
  /* extra [source:up] lines */
  const char *settings;
  const char *code;
} FailureCase;

#define ONE_DELTA "event: TextDeltaEvent\ndata: {\"text\":\"partial\"}\n\n"
#define TERMINAL "event: ResponseCompleteEvent\ndata: {\"text\":\"partial\",\"duration_ms\":1}\n\n"

static const FailureCase failures[] = {
  { "http-500", 500, "application/json", "{\"detail\":\"" SECRET "\"}", SYMFONIC_TEST_AFTER_CLOSE, NULL, "upstream_error" },
  { "http-404", 404, "text/event-stream", ONE_DELTA TERMINAL, SYMFONIC_TEST_AFTER_CLOSE, NULL, "upstream_error" },
  { "text-plain", 200, "text/plain", SECRET "\n" ONE_DELTA TERMINAL, SYMFONIC_TEST_AFTER_CLOSE, NULL, "upstream_error" },
  { "malformed-json", 200, "text/event-stream",
    ONE_DELTA "event: TextDeltaEvent\ndata: {\"text\": " SECRET "}\n\n" TERMINAL, SYMFONIC_TEST_AFTER_CLOSE, NULL, "upstream_error" },
  { "data-not-an-object", 200, "text/event-stream",
    ONE_DELTA "event: TextDeltaEvent\ndata: [\"" SECRET "\"]\n\n" TERMINAL, SYMFONIC_TEST_AFTER_CLOSE, NULL, "upstream_error" },
  { "missing-field", 200, "text/event-stream",
    ONE_DELTA "event: ToolCallStartEvent\ndata: {\"tool_name\":\"" SECRET "\"}\n\n" TERMINAL, SYMFONIC_TEST_AFTER_CLOSE, NULL, "upstream_error" },
  /* json-glib kept the last of two names and cut a string at \u0000 */
  { "duplicate-member", 200, "text/event-stream",
    ONE_DELTA "event: TextDeltaEvent\ndata: {\"text\":\"a\",\"text\":\"" SECRET "\"}\n\n" TERMINAL,
    SYMFONIC_TEST_AFTER_CLOSE, NULL, "upstream_error" },
  { "nul-in-string", 200, "text/event-stream",
    ONE_DELTA "event: TextDeltaEvent\ndata: {\"text\":\"a\\u0000" SECRET "\"}\n\n" TERMINAL,
    SYMFONIC_TEST_AFTER_CLOSE, NULL, "upstream_error" },
  { "empty-data", 200, "text/event-stream",
    ONE_DELTA "event: TextDeltaEvent\ndata:\n\n" TERMINAL, SYMFONIC_TEST_AFTER_CLOSE, NULL, "upstream_error" },
  { "unknown-event", 200, "text/event-stream",
    ONE_DELTA "event: " SECRET "\ndata: {}\n\n" TERMINAL, SYMFONIC_TEST_AFTER_CLOSE, NULL, "upstream_error" },
  { "unnamed-event", 200, "text/event-stream",
    ONE_DELTA "data: {\"text\":\"" SECRET "\"}\n\n" TERMINAL, SYMFONIC_TEST_AFTER_CLOSE, NULL, "upstream_error" },
  { "upstream-error", 200, "text/event-stream",
    ONE_DELTA "event: error\ndata: {\"detail\":\"" SECRET "\",\"status\":503,\"code\":\"x\"}\n\n" TERMINAL,
    SYMFONIC_TEST_AFTER_CLOSE, NULL, "upstream_error" },
  { "eof-without-terminal", 200, "text/event-stream", ONE_DELTA ONE_DELTA, SYMFONIC_TEST_AFTER_CLOSE, NULL, "upstream_error" },
  /* the upstream dies in the middle of a frame */
  { "eof-mid-frame", 200, "text/event-stream", ONE_DELTA "event: TextDeltaEvent\ndata: {\"text\":\"par",
    SYMFONIC_TEST_AFTER_CLOSE, NULL, "upstream_error" },
  { "event-too-large", 200, "text/event-stream",
    ONE_DELTA "event: TextDeltaEvent\ndata: {\"text\":\"" SECRET SECRET SECRET SECRET "\"}\n\n" TERMINAL,
    SYMFONIC_TEST_AFTER_CLOSE, "max-event-bytes=64", "upstream_error" },
  { "stall", 200, "text/event-stream", ONE_DELTA, SYMFONIC_TEST_AFTER_STALL, "timeout=1", "upstream_timeout" },
};

static void
assert_one_error_frame (SymfonicTestStream *stream,
                        const char         *code)
{
  SymfonicTestFrame *last;
  g_autoptr(JsonNode) data = NULL;
  JsonObject *error;

  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, 200);
  g_assert_cmpuint (stream->frames->len, >=, 1);
  for (guint i = 0; i + 1 < stream->frames->len; i++)
    {
      g_assert_cmpstr (frame_at (stream, i)->event, !=, "error");
      g_assert_cmpstr (frame_at (stream, i)->event, !=, "ResponseCompleteEvent");
    }

  last = frame_at (stream, stream->frames->len - 1);
  g_assert_cmpstr (last->event, ==, "error");
  data = symfonic_test_json_parse (last->data);
  error = json_node_get_object (data);
  g_assert_true (json_object_has_member (error, "status"));
  g_assert_cmpstr (json_object_get_string_member_with_default (error, "code", NULL), ==, code);
  /* what the runtime said stays out of what the client sees */
  g_assert_null (strstr (stream->raw->str, SECRET));
}

static void
test_runtime_failure (gconstpointer data)
{
  const FailureCase *c = data;
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autoptr(GBytes) body = plain_bytes (c->body);
  g_autofree char *path = g_strconcat ("/", c->name, NULL);
  g_autofree char *url = fake_runtime_add (fake, path, c->status, c->content_type, body,
                                           SYMFONIC_TEST_SPLIT_WHOLE, 0, c->after);
  g_autoptr(SymfonicServer) server = gateway_new (url, c->settings);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = post_typed (server, session);

  symfonic_test_stream_wait_done (stream);
  g_test_message ("%s: error frame after %" G_GINT64_FORMAT " ms", c->name,
                  (stream->end_us - stream->headers_us) / 1000);
  assert_one_error_frame (stream, c->code);
  symfonic_test_upstream_wait_record (fake, path, NULL);

  if (c->after == SYMFONIC_TEST_AFTER_STALL)
    {
      /* timeout=1: not before a second of silence, and not much after */
      g_assert_cmpint (stream->end_us - stream->headers_us, >=, 900 * G_TIME_SPAN_MILLISECOND);
      g_assert_cmpint (stream->end_us - stream->headers_us, <, 3 * G_USEC_PER_SEC);
    }

  symfonic_server_stop (server);
}

/* Whole events before one that is too large reach the client whether or
 * not they came in the same read as it: here all of it comes at once. */
static void
test_runtime_too_large_after_events (void)
{
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GBytes) body = NULL;
  g_autofree char *url = NULL;
  g_autoptr(SymfonicServer) server = NULL;
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = NULL;

  for (guint i = 0; i < 40; i++)
    g_string_append (text, ONE_DELTA);
  g_string_append (text, "event: TextDeltaEvent\ndata: {\"text\":\"");
  for (guint i = 0; i < 200; i++)
    g_string_append (text, SECRET);
  g_string_append (text, "\"}\n\n" TERMINAL);
  body = g_bytes_new (text->str, text->len);
  url = fake_runtime_add (fake, "/too-large", 200, "text/event-stream", body, SYMFONIC_TEST_SPLIT_WHOLE, 0,
                          SYMFONIC_TEST_AFTER_CLOSE);
  server = gateway_new (url, "max-event-bytes=2048");
  stream = post_typed (server, session);

  symfonic_test_stream_wait_done (stream);
  assert_one_error_frame (stream, "upstream_error");
  g_assert_cmpuint (stream->frames->len, ==, 41);
  for (guint i = 0; i < 40; i++)
    g_assert_cmpstr (frame_at (stream, i)->event, ==, "TextDeltaEvent");

  symfonic_server_stop (server);
}

static void
test_runtime_connection_refused (void)
{
  g_autofree char *url = g_strdup_printf ("http://127.0.0.1:%u/nobody", symfonic_test_closed_port ());
  g_autoptr(SymfonicServer) server = gateway_new (url, NULL);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = post_typed (server, session);

  symfonic_test_stream_wait_done (stream);
  g_test_message ("refused: error frame after %" G_GINT64_FORMAT " ms",
                  (stream->end_us - stream->headers_us) / 1000);
  assert_one_error_frame (stream, "upstream_unavailable");
  g_assert_cmpuint (stream->frames->len, ==, 1);

  symfonic_server_stop (server);
}

/* A runtime whose kernel accepts the connection but which never reads nor
 * answers: the timeout covers the wait for the response headers too. */
static void
test_runtime_no_answer (void)
{
  g_autoptr(GSocket) socket = NULL;
  g_autofree char *url = NULL;
  g_autoptr(SymfonicServer) server = NULL;
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = NULL;
  guint16 port;

  /* the kernel accepts into the backlog; nothing ever reads */
  socket = symfonic_test_loopback_socket (TRUE, &port);
  url = g_strdup_printf ("http://127.0.0.1:%u/run", port);

  server = gateway_new (url, "timeout=1");
  stream = post_typed (server, session);
  symfonic_test_stream_wait_done (stream);
  g_test_message ("no answer: error frame after %" G_GINT64_FORMAT " ms",
                  (stream->end_us - stream->headers_us) / 1000);
  assert_one_error_frame (stream, "upstream_timeout");
  g_assert_cmpuint (stream->frames->len, ==, 1);
  g_assert_cmpint (stream->end_us - stream->headers_us, >=, 900 * G_TIME_SPAN_MILLISECOND);
  g_assert_cmpint (stream->end_us - stream->headers_us, <, 3 * G_USEC_PER_SEC);

  symfonic_server_stop (server);
}

/* --- the client goes away ------------------------------------------------ */

static gboolean
tick_cb (gpointer data)
{
  return G_SOURCE_CONTINUE;
}

static void
test_runtime_client_disconnect (void)
{
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autoptr(GBytes) body = plain_bytes (ONE_DELTA ONE_DELTA);
  g_autofree char *url = fake_runtime_add (fake, "/forever", 200, "text/event-stream", body,
                                           SYMFONIC_TEST_SPLIT_WHOLE, 0, SYMFONIC_TEST_AFTER_KEEPALIVE);
  g_autoptr(SymfonicServer) server = gateway_new (url, NULL);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = post_typed (server, session);
  gint64 took;
  SymfonicTestUpstreamRecord *record;

  symfonic_test_stream_wait_frames (stream, 2);
  g_assert_false (stream->done);
  g_assert_cmpuint (stream->frames->len, ==, 2);
  record = symfonic_test_upstream_wait_record (fake, "/forever", NULL);

  took = symfonic_test_upstream_time_hang_up (fake, record, stream, g_steal_pointer (&session));
  g_test_message ("the runtime saw its connection close %" G_GINT64_FORMAT " ms after the client hung up",
                  took >= 0 ? took / 1000 : -1);
  g_assert_cmpint (took, >=, 0);
  g_assert_cmpint (took, <, HANG_UP_LIMIT_US);
  g_assert_false (symfonic_test_upstream_get_completed (fake, record));

  symfonic_server_stop (server);
}

/* After its terminal the runtime has nothing more to say: the stream ends
 * at once, successfully, and the connection is let go even though the
 * runtime keeps it open and keeps talking. */
static void
test_runtime_terminal_ends_stream (void)
{
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autoptr(GBytes) body = plain_bytes (ONE_DELTA TERMINAL ONE_DELTA);
  g_autofree char *url = fake_runtime_add (fake, "/chatty", 200, "text/event-stream", body,
                                           SYMFONIC_TEST_SPLIT_WHOLE, 0, SYMFONIC_TEST_AFTER_KEEPALIVE);
  g_autoptr(SymfonicServer) server = gateway_new (url, NULL);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = post_typed (server, session);
  GSource *tick = g_timeout_source_new (5);
  gint64 deadline;
  gint64 closed_us;
  SymfonicTestUpstreamRecord *record;

  symfonic_test_stream_wait_done (stream);
  g_assert_no_error (stream->error);
  /* the delta after the terminal was never read */
  g_assert_cmpuint (stream->frames->len, >=, 2);
  g_assert_cmpstr (frame_at (stream, 0)->event, ==, "TextDeltaEvent");
  for (guint i = 1; i + 1 < stream->frames->len; i++)
    g_assert_cmpstr (frame_at (stream, i)->event, ==, "ConsolidationScheduledEvent");
  g_assert_cmpstr (frame_at (stream, stream->frames->len - 1)->event, ==, "ResponseCompleteEvent");
  record = symfonic_test_upstream_wait_record (fake, "/chatty", NULL);

  deadline = stream->end_us + 5 * G_USEC_PER_SEC;
  g_source_set_callback (tick, tick_cb, NULL, NULL);
  g_source_attach (tick, NULL);
  do
    {
      g_main_context_iteration (NULL, TRUE);
      closed_us = symfonic_test_upstream_get_closed_us (fake, record);
    }
  while (closed_us == 0 && g_get_monotonic_time () < deadline);
  g_source_destroy (tick);
  g_source_unref (tick);

  g_test_message ("the runtime saw its connection close %" G_GINT64_FORMAT " ms after the terminal",
                  closed_us > 0 ? (closed_us - stream->end_us) / 1000 : -1);
  g_assert_cmpint (closed_us, >, 0);
  g_assert_cmpint (closed_us - stream->end_us, <, CLOSE_NOTICE_LIMIT_US);

  symfonic_server_stop (server);
}

/* --- hostile nesting ------------------------------------------------------ */

#define DEEP_NESTING 200000

/* Data nested 200,000 deep once overflowed the worker's stack inside
 * json-glib and took the process down with every stream it served. Now it
 * ends its own stream with one error frame, while a stream beside it, still
 * being written, completes. */
static void
test_runtime_deep_nesting (void)
{
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  GString *deep = g_string_new (ONE_DELTA "event: TextDeltaEvent\ndata: ");
  g_autoptr(GBytes) deep_body = NULL;
  /* one byte every 20 ms: seconds in flight, around the deep one */
  g_autoptr(GBytes) calm_body = plain_bytes (ONE_DELTA ONE_DELTA ONE_DELTA TERMINAL);
  SymfonicTestScenario calm = { .body = calm_body, .split = SYMFONIC_TEST_SPLIT_ONE_BYTE, .delay_ms = 20 };
  SymfonicTestScenario hostile = { 0, };
  g_autofree char *url = NULL;
  g_autofree char *healthz = NULL;
  g_autoptr(SymfonicServer) server = NULL;
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) calm_stream = NULL;
  g_autoptr(SymfonicTestStream) deep_stream = NULL;
  g_autoptr(SymfonicTestResponse) health = NULL;

  for (guint i = 0; i < DEEP_NESTING; i++)
    g_string_append_c (deep, '[');
  for (guint i = 0; i < DEEP_NESTING; i++)
    g_string_append_c (deep, ']');
  g_string_append (deep, "\n\n" TERMINAL);
  deep_body = g_string_free_to_bytes (deep);
  hostile.body = deep_body;

  symfonic_test_upstream_add_for_query (fake, "/nest", "calm", &calm);
  symfonic_test_upstream_add_for_query (fake, "/nest", "deep", &hostile);
  url = symfonic_test_upstream_dup_url (fake, "/nest");
  server = gateway_new (url, NULL);

  calm_stream = post_query (server, session, "{\"query\":\"calm\"}");
  symfonic_test_stream_wait_frames (calm_stream, 1);
  deep_stream = post_query (server, session, "{\"query\":\"deep\"}");

  symfonic_test_stream_wait_done (deep_stream);
  assert_one_error_frame (deep_stream, "upstream_error");
  g_assert_cmpuint (deep_stream->frames->len, ==, 2);
  g_assert_false (calm_stream->done);

  symfonic_test_stream_wait_done (calm_stream);
  g_assert_no_error (calm_stream->error);
  g_assert_cmpuint (calm_stream->frames->len, >=, 4);
  for (guint i = 0; i < 3; i++)
    g_assert_cmpstr (frame_at (calm_stream, i)->event, ==, "TextDeltaEvent");
  g_assert_cmpstr (frame_at (calm_stream, calm_stream->frames->len - 1)->event, ==, "ResponseCompleteEvent");
  g_test_message ("the deep stream ended %" G_GINT64_FORMAT " ms before the calm one",
                  (calm_stream->end_us - deep_stream->end_us) / 1000);

  healthz = symfonic_test_server_dup_url (server, "/healthz");
  health = symfonic_test_request (session, "GET", healthz, NULL, NULL, NULL);
  g_assert_cmpuint (health->status, ==, 200);

  symfonic_server_stop (server);
}

/* --- usage reports ------------------------------------------------------- */

typedef struct
{
  const char *name;
  const char *body;
  guint64     input;
  guint64     output;
} UsageCase;

static const UsageCase usage_cases[] = {
  { "in-terminal",
    "event: TextDeltaEvent\ndata: {\"text\":\"a\"}\n\n"
    "event: ResponseCompleteEvent\ndata: {\"text\":\"a\",\"duration_ms\":1,"
    "\"usage\":{\"input_tokens\":12,\"output_tokens\":34}}\n\n", 12, 34 },
  { "usage-frame-openai-names",
    "event: TextDeltaEvent\ndata: {\"text\":\"a\"}\n\n"
    "event: usage\ndata: {\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":7}}\n\n"
    "event: ResponseCompleteEvent\ndata: {\"text\":\"a\",\"duration_ms\":1}\n\n", 5, 7 },
  { "usage-frame-bare",
    "event: usage\ndata: {\"input_tokens\":1,\"output_tokens\":2}\n\n"
    "event: usage\ndata: {\"input_tokens\":10,\"output_tokens\":20}\n\n"
    "event: ResponseCompleteEvent\ndata: {\"text\":\"\",\"duration_ms\":1}\n\n", 11, 22 },
  /* a report that is not JSON says nothing, and is ignored; one with
   * wrong counts is a lie (test-usage-bounds) */
  { "broken-report-ignored",
    "event: usage\ndata: {\"input_tokens\":\n\n"
    "event: usage\ndata:\n\n"
    "event: ResponseCompleteEvent\ndata: {\"text\":\"\",\"duration_ms\":1,"
    "\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":3}}\n\n", 2, 3 },
};

/* The source on its own, on this thread: the stream is never started, so
 * what it is pushed goes nowhere, but the usage it is told is kept. */
static void
test_runtime_usage (gconstpointer data)
{
  const UsageCase *c = data;
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autoptr(GBytes) body = plain_bytes (c->body);
  g_autofree char *path = g_strconcat ("/usage-", c->name, NULL);
  g_autofree char *url = fake_runtime_add (fake, path, 200, "text/event-stream", body,
                                           SYMFONIC_TEST_SPLIT_ONE_BYTE, 0, SYMFONIC_TEST_AFTER_CLOSE);
  g_autoptr(SymfonicRegistry) registry = symfonic_registry_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SymfonicSource) source = NULL;
  g_autoptr(SymfonicRoute) route = NULL;
  g_autoptr(SymfonicInvocation) invocation = symfonic_invocation_new ("count me");
  g_autoptr(SymfonicStream) stream = NULL;
  g_autoptr(GCancellable) cancellable = NULL;
  GSource *tick = g_timeout_source_new (5);
  gint64 deadline = g_get_monotonic_time () + SYMFONIC_TEST_WAIT_MS * G_TIME_SPAN_MILLISECOND;
  guint64 input = 0, output = 0;
  gboolean completed = FALSE;
  SymfonicTestUpstreamRecord *record;

  symfonic_registry_scan (registry, &error);
  g_assert_no_error (error);
  source = g_initable_new (symfonic_registry_lookup (registry, "runtime"), NULL, &error,
                           "url", url, NULL);
  g_assert_no_error (error);
  route = symfonic_route_new ("usage", "/usage", SYMFONIC_ROUTE_KIND_TYPED, source);
  stream = symfonic_stream_new (route, invocation);
  cancellable = g_object_ref (symfonic_stream_get_cancellable (stream));

  g_source_set_callback (tick, tick_cb, NULL, NULL);
  g_source_attach (tick, NULL);
  symfonic_source_start (source, stream, cancellable);

  /* done when the runtime finished writing and the last report is in */
  while (g_get_monotonic_time () < deadline)
    {
      record = symfonic_test_upstream_find_record (fake, path, NULL);
      completed = record != NULL && symfonic_test_upstream_get_completed (fake, record);
      symfonic_stream_get_usage (stream, &input, &output, NULL);
      if (completed && input == c->input && output == c->output)
        break;
      g_main_context_iteration (NULL, TRUE);
    }
  /* let the source see the end and let go of the stream */
  for (guint i = 0; i < 20; i++)
    g_main_context_iteration (NULL, TRUE);
  g_cancellable_cancel (cancellable);
  for (guint i = 0; i < 20; i++)
    g_main_context_iteration (NULL, TRUE);
  g_source_destroy (tick);
  g_source_unref (tick);

  g_assert_true (completed);
  g_assert_cmpuint (input, ==, c->input);
  g_assert_cmpuint (output, ==, c->output);
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
  { "minimal", "url=http://127.0.0.1:9/run", NULL },
  { "https", "url=https://runtime.example/v1/run\ntimeout=5\nmax-event-bytes=1024", NULL },
  { "headers", "url=http://127.0.0.1:9/\nrequest-headers=Authorization: Bearer x;X-A:b", NULL },
  { "no-url", "timeout=5", "url" },
  { "empty-url", "url=", "url" },
  { "ftp-url", "url=ftp://127.0.0.1/run", "url" },
  { "relative-url", "url=/run", "url" },
  { "no-host", "url=http:///run", "url" },
  { "not-a-url", "url=not a url", "url" },
  { "negative-timeout", "url=http://127.0.0.1:9/\ntimeout=-1", "timeout" },
  { "header-without-colon", "url=http://127.0.0.1:9/\nrequest-headers=X-A b", "request-headers" },
  { "header-bad-name", "url=http://127.0.0.1:9/\nrequest-headers=X A: b", "request-headers" },
  { "header-empty-name", "url=http://127.0.0.1:9/\nrequest-headers=: b", "request-headers" },
  { "header-newline", "url=http://127.0.0.1:9/\nrequest-headers=X-A: b\\nX-B: c", "request-headers" },
  { "header-content-length", "url=http://127.0.0.1:9/\nrequest-headers=Content-Length: 3", "request-headers" },
  { "header-accept", "url=http://127.0.0.1:9/\nrequest-headers=accept: text/html", "request-headers" },
  { "unknown-key", "url=http://127.0.0.1:9/\nretries=3", "retries" },
  { "redirects", "url=http://127.0.0.1:9/\nfollow-redirects=true\nmax-connections=16", NULL },
  { "redirects-not-boolean", "url=http://127.0.0.1:9/\nfollow-redirects=maybe", "follow-redirects" },
  { "connections-over-open-files", "url=http://127.0.0.1:9/\nmax-connections=4000000000", "max-connections" },
};

static SymfonicRegistry *
scanned_registry (void)
{
  SymfonicRegistry *registry = symfonic_registry_new ();
  g_autoptr(GError) error = NULL;

  symfonic_registry_scan (registry, &error);
  g_assert_no_error (error);
  g_assert_true (symfonic_registry_lookup (registry, "runtime") != G_TYPE_INVALID);

  return registry;
}

static void
test_runtime_config (void)
{
  g_autoptr(SymfonicRegistry) registry = scanned_registry ();

  for (guint i = 0; i < G_N_ELEMENTS (config_cases); i++)
    {
      g_autofree char *lines = g_strconcat ("type=runtime\n", config_cases[i].lines, NULL);

      symfonic_test_check_source_config (registry, lines, config_cases[i].key);
    }
}

static void
test_runtime_properties (void)
{
  g_autoptr(SymfonicRegistry) registry = scanned_registry ();
  GType type = symfonic_registry_lookup (registry, "runtime");
  g_autoptr(GTypeClass) klass = g_type_class_ref (type);
  static const char * const names[] = {
    "url", "timeout", "request-headers", "max-event-bytes", "follow-redirects", "max-connections",
  };
  GParamSpec *pspec;

  g_assert_true (g_type_is_a (type, SYMFONIC_TYPE_SOURCE));
  g_assert_true (g_type_is_a (type, G_TYPE_INITABLE));
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      pspec = g_object_class_find_property (G_OBJECT_CLASS (klass), names[i]);
      g_assert_nonnull (pspec);
      g_assert_nonnull (g_param_spec_get_nick (pspec));
      g_assert_cmpstr (g_param_spec_get_blurb (pspec), !=, g_param_spec_get_nick (pspec));
    }

  pspec = g_object_class_find_property (G_OBJECT_CLASS (klass), "timeout");
  g_assert_cmpuint (G_PARAM_SPEC_UINT (pspec)->default_value, ==, 60);
  pspec = g_object_class_find_property (G_OBJECT_CLASS (klass), "max-event-bytes");
  g_assert_cmpuint (G_PARAM_SPEC_UINT (pspec)->default_value, ==, 8 * 1024 * 1024);
  pspec = g_object_class_find_property (G_OBJECT_CLASS (klass), "request-headers");
  g_assert_true (G_PARAM_SPEC_VALUE_TYPE (pspec) == G_TYPE_STRV);
}

int
main (int   argc,
      char *argv[])
{
  symfonic_test_init (&argc, &argv);

  g_test_add_func ("/runtime/properties", test_runtime_properties);
  g_test_add_func ("/runtime/config", test_runtime_config);
  g_test_add_func ("/runtime/turn/whole", test_runtime_turn_whole);
  g_test_add_func ("/runtime/turn/one-byte", test_runtime_turn_one_byte);
  g_test_add_func ("/runtime/turn/random", test_runtime_turn_random);
  g_test_add_func ("/runtime/request", test_runtime_request);
  g_test_add_func ("/runtime/resume", test_runtime_resume);
  g_test_add_func ("/runtime/failure/connection-refused", test_runtime_connection_refused);
  g_test_add_func ("/runtime/failure/no-answer", test_runtime_no_answer);
  g_test_add_func ("/runtime/failure/too-large-after-events", test_runtime_too_large_after_events);
  for (guint i = 0; i < G_N_ELEMENTS (failures); i++)
    {
      g_autofree char *path = g_strdup_printf ("/runtime/failure/%s", failures[i].name);

      g_test_add_data_func (path, &failures[i], test_runtime_failure);
    }
  g_test_add_func ("/runtime/client-disconnect", test_runtime_client_disconnect);
  g_test_add_func ("/runtime/terminal-ends-stream", test_runtime_terminal_ends_stream);
  g_test_add_func ("/runtime/deep-nesting", test_runtime_deep_nesting);
  for (guint i = 0; i < G_N_ELEMENTS (usage_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/runtime/usage/%s", usage_cases[i].name);

      g_test_add_data_func (path, &usage_cases[i], test_runtime_usage);
    }

  return g_test_run ();
}
