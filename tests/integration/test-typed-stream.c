/* test-typed-stream.c: the typed SSE stream and the HTTP edge, end to end
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One in-process server with two workers on an ephemeral port serves two
 * replay routes at full speed (time-scale 0): the fixtures of
 * tests/integration/transcripts and the repository's data/transcripts.
 * Expected values come from reading the transcripts here, never from what
 * the server reports about itself.
 */
#include <string.h>

#include "symfonic-test-support.h"

#define DEMO_PATH "/demo/stream/typed"
#define QUERY "{\"query\":\"Why is the sky blue?\"}"

/* a second route plays the repository's own transcripts */
static const char demo_route_format[] =
  "[route:demo]\n"
  "path=" DEMO_PATH "\n"
  "kind=typed\n"
  "source=demo\n"
  "\n"
  "[source:demo]\n"
  "type=replay\n"
  "transcripts=%s\n"
  "default-transcript=plain\n"
  "time-scale=0\n";

static SymfonicServer *server;
static SoupSession *session;
static char *base_url;

static const char *
data_dir (void)
{
  const char *dir = g_getenv ("SYMFONIC_TEST_DATA_DIR");

  return dir != NULL ? dir : SYMFONIC_TEST_DATA_DIR;
}

static char *
fixture_path (const char *name)
{
  g_autofree char *file = g_strconcat (name, ".jsonl", NULL);

  return g_test_build_filename (G_TEST_DIST, "integration", "transcripts", file, NULL);
}

static char *
url_for (const char *path)
{
  return g_strconcat (base_url, path, NULL);
}

static const char *
entry_event (JsonNode *entry)
{
  return json_object_get_string_member (json_node_get_object (entry), "event");
}

static JsonNode *
entry_data (JsonNode *entry)
{
  return json_object_get_member (json_node_get_object (entry), "data");
}

/* The frame's data must be one line of strict JSON; returns it parsed. */
static JsonNode *
frame_json (SymfonicTestFrame *frame)
{
  g_autoptr(GError) error = NULL;

  g_assert_cmpuint (frame->n_data_lines, ==, 1);
  symfonic_test_json_is_strict (frame->data, -1, &error);
  g_assert_no_error (error);

  return symfonic_test_json_parse (frame->data);
}

static void
assert_json_equal (JsonNode   *actual,
                   JsonNode   *expected,
                   const char *what)
{
  if (!json_node_equal (actual, expected))
    {
      g_autofree char *a = json_to_string (actual, FALSE);
      g_autofree char *e = json_to_string (expected, FALSE);

      g_error ("%s: got %s, expected %s", what, a, e);
    }
}

static void
assert_stream_headers (SymfonicTestStream *stream)
{
  SoupMessageHeaders *headers = soup_message_get_response_headers (stream->message);

  g_assert_cmpuint (stream->status, ==, 200);
  g_assert_cmpstr (soup_message_headers_get_content_type (headers, NULL), ==, "text/event-stream");
  g_assert_cmpstr (soup_message_headers_get_one (headers, "Cache-Control"), ==, "no-cache");
  g_assert_cmpstr (soup_message_headers_get_one (headers, "X-Accel-Buffering"), ==, "no");
}

/* The stream ended cleanly, on a frame boundary, in the exact wire format
 * of DESIGN 4 and 7a: "id: N\nevent: NAME\ndata: JSON\n\n", ids 1, 2, 3 …,
 * and nothing else. */
static void
assert_stream_wire (SymfonicTestStream *stream)
{
  g_autoptr(GString) expected = g_string_new (NULL);

  g_assert_true (stream->done);
  g_assert_no_error (stream->error);
  g_assert_true (symfonic_test_sse_parser_is_between_frames (stream->parser));
  g_assert_cmpuint (symfonic_test_sse_parser_get_comments (stream->parser), ==, 0);

  for (guint i = 0; i < stream->frames->len; i++)
    {
      SymfonicTestFrame *frame = g_ptr_array_index (stream->frames, i);

      g_string_append_printf (expected, "id: %u\nevent: %s\ndata: %s\n\n", i + 1, frame->event, frame->data);
    }
  g_assert_cmpstr (stream->raw->str, ==, expected->str);
}

static guint
count_frames (SymfonicTestStream *stream,
              const char         *event)
{
  guint n = 0;

  for (guint i = 0; i < stream->frames->len; i++)
    {
      SymfonicTestFrame *frame = g_ptr_array_index (stream->frames, i);

      n += g_str_equal (frame->event, event);
    }

  return n;
}

/* A successful stream plays the transcript's events in order, each with
 * the recorded payload, and ends with exactly one ResponseCompleteEvent of
 * its own (the upstream's terminal is not forwarded) whose text is the
 * concatenation of the deltas. */
static void
assert_stream_matches_transcript (SymfonicTestStream *stream,
                                  const char         *transcript_path)
{
  g_autoptr(GPtrArray) entries = symfonic_test_load_transcript (transcript_path);
  g_autoptr(GString) transcript_text = g_string_new (NULL);
  g_autoptr(GString) frames_text = g_string_new (NULL);
  g_autoptr(JsonNode) terminal = NULL;
  SymfonicTestFrame *last;
  JsonObject *object;
  JsonNode *duration;
  guint n_expected = 0;

  assert_stream_headers (stream);
  assert_stream_wire (stream);

  for (guint i = 0; i < entries->len; i++)
    {
      JsonNode *entry = g_ptr_array_index (entries, i);
      const char *name = entry_event (entry);
      SymfonicTestFrame *frame;
      g_autoptr(JsonNode) data = NULL;
      g_autofree char *what = NULL;

      g_assert_cmpstr (name, !=, "error");
      if (g_str_equal (name, "ResponseCompleteEvent"))
        continue;

      g_assert_cmpuint (n_expected, <, stream->frames->len);
      frame = g_ptr_array_index (stream->frames, n_expected++);
      g_assert_cmpstr (frame->event, ==, name);
      data = frame_json (frame);
      what = g_strdup_printf ("frame %u (%s)", n_expected - 1, name);
      assert_json_equal (data, entry_data (entry), what);

      if (g_str_equal (name, "TextDeltaEvent"))
        {
          g_string_append (transcript_text,
                           json_object_get_string_member (json_node_get_object (entry_data (entry)), "text"));
          g_string_append (frames_text,
                           json_object_get_string_member (json_node_get_object (data), "text"));
        }
    }

  g_assert_cmpuint (stream->frames->len, ==, n_expected + 1);
  g_assert_cmpuint (count_frames (stream, "ResponseCompleteEvent"), ==, 1);
  g_assert_cmpuint (count_frames (stream, "error"), ==, 0);

  last = g_ptr_array_index (stream->frames, stream->frames->len - 1);
  g_assert_cmpstr (last->event, ==, "ResponseCompleteEvent");
  terminal = frame_json (last);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (terminal));
  object = json_node_get_object (terminal);
  g_assert_cmpuint (json_object_get_size (object), ==, 3);
  g_assert_true (json_object_has_member (object, "text"));
  /* a transcript has no reason of its own: it stopped, or called tools */
  g_assert_cmpstr (json_object_get_string_member (object, "finish_reason"), ==,
                   count_frames (stream, "ToolCallStartEvent") > 0 ? "tool_calls" : "stop");
  g_assert_cmpstr (json_object_get_string_member (object, "text"), ==, frames_text->str);
  g_assert_cmpstr (json_object_get_string_member (object, "text"), ==, transcript_text->str);
  duration = json_object_get_member (object, "duration_ms");
  g_assert_nonnull (duration);
  g_assert_true (JSON_NODE_HOLDS_VALUE (duration));
  g_assert_true (json_node_get_value_type (duration) == G_TYPE_INT64);
  g_assert_cmpint (json_node_get_int (duration), >=, 0);
  g_assert_cmpint (json_node_get_int (duration), <, SYMFONIC_TEST_WAIT_MS);
}

/* An error stream: DESIGN 3, exactly one terminal, the error frame, and
 * no success terminal. Returns the error frame's payload. */
static JsonNode *
assert_stream_ends_in_error (SymfonicTestStream *stream,
                             guint               n_frames_before)
{
  SymfonicTestFrame *last;
  JsonNode *payload;
  JsonObject *object;

  assert_stream_headers (stream);
  assert_stream_wire (stream);
  g_assert_cmpuint (stream->frames->len, ==, n_frames_before + 1);
  g_assert_cmpuint (count_frames (stream, "error"), ==, 1);
  g_assert_cmpuint (count_frames (stream, "ResponseCompleteEvent"), ==, 0);

  last = g_ptr_array_index (stream->frames, stream->frames->len - 1);
  g_assert_cmpstr (last->event, ==, "error");
  payload = frame_json (last);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (payload));
  object = json_node_get_object (payload);
  g_assert_true (json_object_has_member (object, "detail"));
  g_assert_true (json_node_get_value_type (json_object_get_member (object, "detail")) == G_TYPE_STRING);
  g_assert_true (json_object_has_member (object, "status"));
  g_assert_true (json_node_get_value_type (json_object_get_member (object, "status")) == G_TYPE_INT64);

  return payload;
}

static SymfonicTestStream *
run_stream (const char *path,
            const char *body,
            const char *transcript)
{
  g_autofree char *url = url_for (path);
  SymfonicTestStream *stream;

  if (transcript != NULL)
    stream = symfonic_test_stream_post (session, url, body, "X-Symfonic-Transcript", transcript, NULL);
  else
    stream = symfonic_test_stream_post (session, url, body, NULL);
  symfonic_test_stream_wait_done (stream);

  return stream;
}

static void
test_typed_every_event (void)
{
  g_autoptr(SymfonicTestStream) stream = run_stream (SYMFONIC_TEST_TYPED_PATH, QUERY, "typed");
  g_autofree char *path = fixture_path ("typed");

  assert_stream_matches_transcript (stream, path);
}

static void
test_typed_default_transcript (void)
{
  /* no header: the source's default-transcript, "typed", plays */
  g_autoptr(SymfonicTestStream) stream = run_stream (SYMFONIC_TEST_TYPED_PATH, QUERY, NULL);
  g_autofree char *path = fixture_path ("typed");

  assert_stream_matches_transcript (stream, path);
}

static void
test_typed_demo_transcript (void)
{
  g_autoptr(SymfonicTestStream) stream = run_stream (DEMO_PATH, QUERY, NULL);
  g_autofree char *path = g_build_filename (data_dir (), "transcripts", "plain.jsonl", NULL);

  assert_stream_matches_transcript (stream, path);
}

static void
test_typed_session_id (void)
{
  /* colons, and fields the gateway must ignore (tenant_id never comes from
   * the body) */
  static const char * const bodies[] = {
    "{\"query\":\"hi\",\"session_id\":\"tenant:acme:session:42:\"}",
    "{\"query\":\"hi\",\"session_id\":\"::\",\"attachments\":[],\"tenant_id\":\"evil:corp\"}",
    "{\"query\":\"hi\",\"session_id\":null,\"attachments\":null,\"unknown\":{\"a\":[1]}}",
  };
  g_autofree char *path = fixture_path ("typed");

  for (guint i = 0; i < G_N_ELEMENTS (bodies); i++)
    {
      g_autoptr(SymfonicTestStream) stream = run_stream (SYMFONIC_TEST_TYPED_PATH, bodies[i], "typed");

      g_test_message ("body %s", bodies[i]);
      assert_stream_matches_transcript (stream, path);
    }
}

static void
test_typed_concurrent (void)
{
  g_autoptr(GPtrArray) streams = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_test_stream_free);
  g_autofree char *typed_url = url_for (SYMFONIC_TEST_TYPED_PATH);
  g_autofree char *demo_url = url_for (DEMO_PATH);
  g_autofree char *typed_path = fixture_path ("typed");
  g_autofree char *demo_path = g_build_filename (data_dir (), "transcripts", "plain.jsonl", NULL);

  /* all in flight at once, on separate connections */
  for (guint i = 0; i < 20; i++)
    {
      if (i % 2 == 0)
        g_ptr_array_add (streams, symfonic_test_stream_post (session, typed_url, QUERY,
                                                             "X-Symfonic-Transcript", "typed", NULL));
      else
        g_ptr_array_add (streams, symfonic_test_stream_post (session, demo_url, QUERY, NULL));
    }

  for (guint i = 0; i < streams->len; i++)
    symfonic_test_stream_wait_done (g_ptr_array_index (streams, i));

  for (guint i = 0; i < streams->len; i++)
    assert_stream_matches_transcript (g_ptr_array_index (streams, i),
                                      i % 2 == 0 ? typed_path : demo_path);
}

/* The whole stream is literal but for the duration the gateway measures. */
static void
assert_typed_stream (const char *transcript,
                     const char *frames,
                     const char *text)
{
  g_autoptr(SymfonicTestStream) stream = run_stream (SYMFONIC_TEST_TYPED_PATH, QUERY, transcript);
  g_autofree char *terminal = g_strdup_printf ("event: ResponseCompleteEvent\ndata: {\"text\":\"%s\",\"duration_ms\":", text);
  const char *rest;

  assert_stream_headers (stream);
  assert_stream_wire (stream);
  if (!g_str_has_prefix (stream->raw->str, frames))
    g_test_message ("stream: %s", stream->raw->str);
  g_assert_true (g_str_has_prefix (stream->raw->str, frames));
  rest = stream->raw->str + strlen (frames);
  g_assert_true (g_str_has_prefix (rest, terminal));
  rest += strlen (terminal);
  g_assert_cmpuint (strspn (rest, "0123456789"), >, 0);
  /* a transcript has no reason of its own: it stopped, or called tools */
  g_assert_cmpstr (rest + strspn (rest, "0123456789"), ==,
                   strstr (frames, "ToolCallStartEvent") != NULL ? ",\"finish_reason\":\"tool_calls\"}\n\n"
                                                                 : ",\"finish_reason\":\"stop\"}\n\n");
}

/* Exactly one consolidation per stream, scheduled by the gateway when the
 * upstream sent none, and one JSON shape whoever made it: `report` an
 * object, `graph_mutations` a count (seed 001's transcripts). */
static void
test_typed_consolidation_scheduled (void)
{
  assert_typed_stream ("no-consolidation",
                       "id: 1\nevent: TextDeltaEvent\ndata: {\"text\":\"Blue \"}\n\n"
                       "id: 2\nevent: TextDeltaEvent\ndata: {\"text\":\"sky.\"}\n\n"
                       "id: 3\nevent: ConsolidationScheduledEvent\ndata: {\"report\":{},\"graph_mutations\":0}\n\n"
                       "id: 4\n",
                       "Blue sky.");
  assert_typed_stream ("listed-mutations",
                       "id: 1\nevent: TextDeltaEvent\ndata: {\"text\":\"Paris.\"}\n\n"
                       "id: 2\nevent: ConsolidationScheduledEvent\ndata: {\"report\":{\"scheduled\":true},\"graph_mutations\":2}\n\n"
                       "id: 3\n",
                       "Paris.");
}

static void
test_typed_midstream_error (void)
{
  g_autoptr(SymfonicTestStream) stream = run_stream (SYMFONIC_TEST_TYPED_PATH, QUERY, "midstream-error");
  g_autofree char *path = fixture_path ("midstream-error");
  g_autoptr(GPtrArray) entries = symfonic_test_load_transcript (path);
  g_autoptr(JsonNode) payload = NULL;
  JsonObject *object;
  JsonObject *recorded = NULL;
  guint n_before = 0;

  /* what precedes the recorded failure is played; nothing after it */
  for (guint i = 0; i < entries->len; i++)
    {
      JsonNode *entry = g_ptr_array_index (entries, i);

      if (g_str_equal (entry_event (entry), "error"))
        {
          recorded = json_node_get_object (entry_data (entry));
          break;
        }
      n_before++;
    }
  g_assert_nonnull (recorded);
  g_assert_cmpuint (n_before, ==, 2);

  payload = assert_stream_ends_in_error (stream, n_before);
  for (guint i = 0; i < n_before; i++)
    {
      SymfonicTestFrame *frame = g_ptr_array_index (stream->frames, i);
      g_autoptr(JsonNode) data = frame_json (frame);

      g_assert_cmpstr (frame->event, ==, entry_event (g_ptr_array_index (entries, i)));
      assert_json_equal (data, entry_data (g_ptr_array_index (entries, i)), "delta before the failure");
    }

  /* DESIGN 6: upstream unavailable is still active 500 without an error
   * map; a 5xx never echoes the upstream's message */
  object = json_node_get_object (payload);
  g_assert_cmpint (json_object_get_int_member (object, "status"), ==, 500);
  g_assert_cmpstr (json_object_get_string_member (object, "code"), ==, "upstream_unavailable");
  g_assert_cmpstr (json_object_get_string_member (object, "detail"), ==, SYMFONIC_OPAQUE_DETAIL);
  g_assert_null (strstr (stream->raw->str, json_object_get_string_member (recorded, "detail")));
  g_assert_null (strstr (stream->raw->str, "never sent"));
  g_assert_cmpuint (json_object_get_size (object), ==, 3);
}

static void
test_typed_error_first (void)
{
  g_autoptr(SymfonicTestStream) stream = run_stream (SYMFONIC_TEST_TYPED_PATH, QUERY, "error-first");
  g_autoptr(JsonNode) payload = assert_stream_ends_in_error (stream, 0);
  JsonObject *object = json_node_get_object (payload);

  g_assert_cmpint (json_object_get_int_member (object, "status"), ==, 502);
  g_assert_cmpstr (json_object_get_string_member (object, "code"), ==, "upstream_error");
  g_assert_cmpstr (json_object_get_string_member (object, "detail"), ==, SYMFONIC_OPAQUE_DETAIL);
  g_assert_null (strstr (stream->raw->str, "secret"));
}

/* The source knows before the stream starts: a JSON 404, not an error
 * frame after a 200, and the client's header is not repeated. */
static void
test_typed_unknown_transcript (void)
{
  g_autofree char *url = url_for (SYMFONIC_TEST_TYPED_PATH);
  g_autoptr(SymfonicTestResponse) response =
    symfonic_test_request (session, "POST", url, "application/json", QUERY, "X-Symfonic-Transcript", "nope", NULL);

  g_assert_cmpuint (response->status, ==, 404);
  g_assert_cmpstr (soup_message_headers_get_content_type (response->headers, NULL), ==, "application/json");
  g_assert_cmpstr (symfonic_test_response_get_text (response), ==,
                   "{\"detail\":\"No transcript of that name\",\"status\":404,\"code\":\"not_found\"}");
}

static void
test_http_healthz (void)
{
  g_autofree char *url = url_for ("/healthz");
  g_autoptr(SymfonicTestResponse) response = symfonic_test_request (session, "GET", url, NULL, NULL, NULL);
  g_autoptr(JsonNode) body = NULL;
  g_autoptr(JsonNode) expected = symfonic_test_json_parse ("{\"status\":\"ok\"}");

  g_assert_cmpuint (response->status, ==, 200);
  g_assert_cmpstr (soup_message_headers_get_content_type (response->headers, NULL), ==, "application/json");
  body = symfonic_test_response_dup_json (response);
  assert_json_equal (body, expected, "/healthz");
}

static void
test_http_metrics (void)
{
  g_autofree char *url = url_for ("/metrics");
  g_autoptr(SymfonicTestResponse) response = NULL;
  g_autoptr(GRegex) sample = NULL;
  g_autoptr(GRegex) comment = NULL;
  g_auto(GStrv) lines = NULL;
  const char *type;
  double before, after, active, value;

  before = symfonic_test_fetch_metric (session, base_url, "symfonic_streams_completed_total");
  {
    g_autoptr(SymfonicTestStream) stream = run_stream (SYMFONIC_TEST_TYPED_PATH, QUERY, "typed");

    assert_stream_headers (stream);
  }
  after = symfonic_test_fetch_metric (session, base_url, "symfonic_streams_completed_total");
  g_assert_cmpfloat (after - before, ==, 1);
  active = symfonic_test_fetch_metric (session, base_url, "symfonic_streams_active");
  g_assert_cmpfloat (active, ==, 0);

  /* the Prometheus text exposition format, line by line */
  response = symfonic_test_request (session, "GET", url, NULL, NULL, NULL);
  g_assert_cmpuint (response->status, ==, 200);
  type = soup_message_headers_get_content_type (response->headers, NULL);
  g_assert_cmpstr (type, ==, "text/plain");
  g_assert_cmpstr (soup_message_headers_get_one (response->headers, "Content-Type"), ==,
                   "text/plain; version=0.0.4; charset=utf-8");

  sample = g_regex_new ("^[a-zA-Z_:][a-zA-Z0-9_:]*"
                        "(\\{([a-zA-Z_][a-zA-Z0-9_]*=\"([^\"\\\\\\n]|\\\\[\\\\\"n])*\",?)*\\})?"
                        " [-+]?([0-9]+(\\.[0-9]*)?([eE][-+]?[0-9]+)?|NaN|Inf)$",
                        0, 0, NULL);
  comment = g_regex_new ("^# (HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*|TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (counter|gauge|histogram|summary|untyped))$",
                         0, 0, NULL);
  g_assert_true (g_str_has_suffix (symfonic_test_response_get_text (response), "\n"));
  lines = g_strsplit (symfonic_test_response_get_text (response), "\n", -1);
  for (guint i = 0; lines[i] != NULL && lines[i + 1] != NULL; i++)
    {
      if (lines[i][0] == '#')
        {
          if (!g_regex_match (comment, lines[i], 0, NULL))
            g_error ("Not a Prometheus comment line: “%s”", lines[i]);
        }
      else if (!g_regex_match (sample, lines[i], 0, NULL))
        {
          g_error ("Not a Prometheus sample line: “%s”", lines[i]);
        }
    }

  g_assert_nonnull (strstr (symfonic_test_response_get_text (response),
                            "# TYPE symfonic_streams_completed_total counter\n"));
  g_assert_true (symfonic_test_metrics_lookup (symfonic_test_response_get_text (response),
                                               "symfonic_streams_completed_total", &value));
  g_assert_cmpfloat (value, ==, after);
}

/* A refusal is a JSON error body, never SSE (DESIGN 3). */
static void
assert_refusal (SymfonicTestResponse *response,
                guint                 status,
                const char           *code)
{
  g_autoptr(JsonNode) body = NULL;
  JsonObject *object;

  g_assert_cmpuint (response->status, ==, status);
  g_assert_cmpstr (soup_message_headers_get_content_type (response->headers, NULL), ==, "application/json");
  body = symfonic_test_response_dup_json (response);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (body));
  object = json_node_get_object (body);
  g_assert_cmpint (json_object_get_int_member_with_default (object, "status", -1), ==, status);
  g_assert_nonnull (json_object_get_string_member_with_default (object, "detail", NULL));
  g_assert_cmpstr (json_object_get_string_member_with_default (object, "code", NULL), ==, code);
}

static void
test_http_not_found (void)
{
  static const char * const methods[] = { "GET", "POST" };
  static const char * const paths[] = { "/nope", "/api/v1/stream/typed/", "/api/v1/stream/typedx", "/" };

  for (guint m = 0; m < G_N_ELEMENTS (methods); m++)
    for (guint p = 0; p < G_N_ELEMENTS (paths); p++)
      {
        g_autofree char *url = url_for (paths[p]);
        g_autoptr(SymfonicTestResponse) response = NULL;

        g_test_message ("%s %s", methods[m], paths[p]);
        if (g_str_equal (methods[m], "POST"))
          response = symfonic_test_request (session, "POST", url, "application/json", QUERY, NULL);
        else
          response = symfonic_test_request (session, "GET", url, NULL, NULL, NULL);
        assert_refusal (response, 404, "not_found");
      }
}

static void
test_http_method_not_allowed (void)
{
  static const char * const methods[] = { "GET", "PUT", "DELETE" };

  for (guint i = 0; i < G_N_ELEMENTS (methods); i++)
    {
      g_autofree char *url = url_for (SYMFONIC_TEST_TYPED_PATH);
      g_autoptr(SymfonicTestResponse) response =
        symfonic_test_request (session, methods[i], url, NULL, NULL, NULL);

      g_test_message ("%s %s", methods[i], SYMFONIC_TEST_TYPED_PATH);
      assert_refusal (response, 405, "method_not_allowed");
      g_assert_cmpstr (soup_message_headers_get_one (response->headers, "Allow"), ==, "POST");
    }
}

static void
test_http_unsupported_media_type (void)
{
  static const char * const types[] = { "text/plain", "application/x-www-form-urlencoded", "application/jsonx" };
  g_autofree char *url = url_for (SYMFONIC_TEST_TYPED_PATH);

  for (guint i = 0; i < G_N_ELEMENTS (types); i++)
    {
      g_autoptr(SymfonicTestResponse) response =
        symfonic_test_request (session, "POST", url, types[i], QUERY, NULL);

      g_test_message ("Content-Type: %s", types[i]);
      assert_refusal (response, 415, "unsupported_media_type");
    }

  /* no Content-Type at all */
  {
    g_autoptr(SymfonicTestResponse) response =
      symfonic_test_request (session, "POST", url, NULL, NULL, NULL);

    assert_refusal (response, 415, "unsupported_media_type");
  }
}

static void
test_http_bad_request (void)
{
  static const char * const bodies[] = {
    "",
    "{",
    "not json",
    "{\"query\":\"hi\"",
    "[\"query\"]",
    "\"query\"",
    "null",
    "{}",
    "{\"query\":\"\"}",
    "{\"query\":null}",
    "{\"query\":42}",
    "{\"query\":[\"hi\"]}",
    "{\"session_id\":\"s\"}",
    "{\"query\":\"hi\",\"session_id\":5}",
    "{\"query\":\"hi\",\"attachments\":\"a\"}",
  };
  g_autofree char *url = url_for (SYMFONIC_TEST_TYPED_PATH);

  for (guint i = 0; i < G_N_ELEMENTS (bodies); i++)
    {
      g_autoptr(SymfonicTestResponse) response =
        symfonic_test_request (session, "POST", url, "application/json", bodies[i], NULL);

      g_test_message ("body “%s”", bodies[i]);
      assert_refusal (response, 400, "bad_request");
    }
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *pipeline = NULL;
  g_autofree char *typed = NULL;
  g_autofree char *demo = NULL;
  g_autofree char *transcripts = NULL;
  g_autofree char *base_dir = NULL;
  int ret;

  symfonic_test_init (&argc, &argv);

  transcripts = g_build_filename (data_dir (), "transcripts", NULL);
  typed = symfonic_test_replay_pipeline ("transcripts", "typed", 0);
  demo = g_strdup_printf (demo_route_format, transcripts);
  pipeline = g_strconcat (typed, demo, NULL);
  base_dir = g_test_build_filename (G_TEST_DIST, "integration", NULL);
  server = symfonic_test_server_new (pipeline, base_dir, 2);
  session = symfonic_test_session_new ();
  base_url = g_strdup_printf ("http://127.0.0.1:%u", symfonic_server_get_port (server));

  g_test_add_func ("/typed/every-event", test_typed_every_event);
  g_test_add_func ("/typed/default-transcript", test_typed_default_transcript);
  g_test_add_func ("/typed/demo-transcript", test_typed_demo_transcript);
  g_test_add_func ("/typed/session-id", test_typed_session_id);
  g_test_add_func ("/typed/concurrent", test_typed_concurrent);
  g_test_add_func ("/typed/consolidation-scheduled", test_typed_consolidation_scheduled);
  g_test_add_func ("/typed/midstream-error", test_typed_midstream_error);
  g_test_add_func ("/typed/error-first", test_typed_error_first);
  g_test_add_func ("/typed/unknown-transcript", test_typed_unknown_transcript);
  g_test_add_func ("/http/healthz", test_http_healthz);
  g_test_add_func ("/http/metrics", test_http_metrics);
  g_test_add_func ("/http/not-found", test_http_not_found);
  g_test_add_func ("/http/method-not-allowed", test_http_method_not_allowed);
  g_test_add_func ("/http/unsupported-media-type", test_http_unsupported_media_type);
  g_test_add_func ("/http/bad-request", test_http_bad_request);

  ret = g_test_run ();

  g_clear_object (&session);
  symfonic_server_stop (server);
  g_clear_object (&server);
  g_free (base_url);

  return ret;
}
