/* test-heartbeat.c: a quiet stream gets keepalive comments, between frames
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Issue 11, item 1: after `heartbeat-seconds` without a frame the gateway
 * writes `: keepalive`, also before the upstream's first event and while a
 * stage holds text back, and never inside a frame. Every stream response
 * carries Cache-Control: no-cache and X-Accel-Buffering: no.
 */
#include <string.h>

#include "symfonic-test-support.h"
#include "symfonic-test-upstream.h"

#define KEEPALIVE ": keepalive\n\n"

static char *
replay_pipeline (const char *transcript,
                 guint       heartbeat_seconds)
{
  return g_strdup_printf ("[gateway]\n"
                          "listen=127.0.0.1:8080\n"
                          "workers=1\n"
                          "\n"
                          "[route:typed]\n"
                          "path=" SYMFONIC_TEST_TYPED_PATH "\n"
                          "kind=typed\n"
                          "source=fixtures\n"
                          "heartbeat-seconds=%u\n"
                          "stages=extraction\n"
                          "\n"
                          "[source:fixtures]\n"
                          "type=replay\n"
                          "transcripts=transcripts\n"
                          "default-transcript=%s\n"
                          "\n"
                          "[stage:extraction]\n"
                          "type=extraction\n",
                          heartbeat_seconds, transcript);
}

/* Counts the keepalives of @raw, and checks that each sits where a frame
 * could begin: at the start, or after a frame's blank line, and that the
 * frames around them are whole. */
static guint
check_keepalives (const char *raw)
{
  guint n = 0;

  for (const char *p = strstr (raw, KEEPALIVE); p != NULL; p = strstr (p + 1, KEEPALIVE))
    {
      const char *after = p + strlen (KEEPALIVE);

      g_assert_true (p == raw || (p - raw >= 2 && p[-1] == '\n' && p[-2] == '\n'));
      g_assert_true (*after == '\0' || g_str_has_prefix (after, "id: ") || g_str_has_prefix (after, KEEPALIVE));
      n++;
    }

  return n;
}

static SymfonicTestStream *
run (SymfonicServer *server)
{
  g_autofree char *url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  SymfonicTestStream *stream = symfonic_test_stream_post (session, url, "{\"query\":\"q\"}", NULL);
  SoupMessageHeaders *headers;

  symfonic_test_stream_wait_done (stream);
  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, 200);
  headers = soup_message_get_response_headers (stream->message);
  g_assert_cmpstr (soup_message_headers_get_one (headers, "Cache-Control"), ==, "no-cache");
  g_assert_cmpstr (soup_message_headers_get_one (headers, "X-Accel-Buffering"), ==, "no");
  g_assert_true (symfonic_test_sse_parser_is_between_frames (stream->parser));

  return stream;
}

static SymfonicServer *
replay_server (const char *transcript,
               guint       heartbeat_seconds)
{
  g_autofree char *base_dir = g_test_build_filename (G_TEST_DIST, "integration", NULL);
  g_autofree char *text = replay_pipeline (transcript, heartbeat_seconds);

  return symfonic_test_server_new (text, base_dir, 1);
}

static const char *
frame_event (SymfonicTestStream *stream,
             guint               i)
{
  return ((SymfonicTestFrame *) g_ptr_array_index (stream->frames, i))->event;
}

static const char *
frame_data (SymfonicTestStream *stream,
            guint               i)
{
  return ((SymfonicTestFrame *) g_ptr_array_index (stream->frames, i))->data;
}

/* 2.5 s before the first event and 3 s between two deltas, at one second:
 * keepalives in both silences, none once the stream is over. */
static void
test_heartbeat_upstream_pause (void)
{
  g_autoptr(SymfonicServer) server = replay_server ("pause", 1);
  g_autoptr(SymfonicTestStream) stream = run (server);
  const char *first = strstr (stream->raw->str, "event: TextDeltaEvent\ndata: {\"text\":\"before \"}");
  const char *second = strstr (stream->raw->str, "event: TextDeltaEvent\ndata: {\"text\":\"after\"}");
  guint before_first = 0, between = 0;

  g_test_message ("stream: %s", stream->raw->str);
  g_assert_nonnull (first);
  g_assert_nonnull (second);
  g_assert_cmpuint (check_keepalives (stream->raw->str), >=, 3);
  for (const char *p = strstr (stream->raw->str, KEEPALIVE); p != NULL; p = strstr (p + 1, KEEPALIVE))
    {
      if (p < first)
        before_first++;
      else if (p < second)
        between++;
    }
  g_assert_cmpuint (before_first, >=, 1);
  g_assert_cmpuint (between, >=, 2);
  g_assert_true (g_str_has_prefix (stream->raw->str, KEEPALIVE));

  g_assert_cmpuint (stream->frames->len, ==, 4);
  g_assert_cmpstr (frame_data (stream, 0), ==, "{\"text\":\"before \"}");
  g_assert_cmpstr (frame_data (stream, 1), ==, "{\"text\":\"after\"}");
  g_assert_cmpstr (frame_event (stream, 3), ==, "ResponseCompleteEvent");
}

/* heartbeat-seconds=0: the same silences stay silent. */
static void
test_heartbeat_off (void)
{
  g_autoptr(SymfonicServer) server = replay_server ("pause", 0);
  g_autoptr(SymfonicTestStream) stream = run (server);

  g_assert_cmpuint (check_keepalives (stream->raw->str), ==, 0);
  g_assert_cmpuint (symfonic_test_sse_parser_get_comments (stream->parser), ==, 0);
  g_assert_cmpuint (stream->frames->len, ==, 4);
}

/* The extraction stage withholds an open memory block for 3 s: the client
 * gets keepalives, then the cleaned text and the ops. */
static void
test_heartbeat_while_withheld (void)
{
  g_autoptr(SymfonicServer) server = replay_server ("withheld", 1);
  g_autoptr(SymfonicTestStream) stream = run (server);
  const char *noted = strstr (stream->raw->str, "data: {\"text\":\"Noted. \"}");
  const char *done = strstr (stream->raw->str, "data: {\"text\":\"Done.\"}");
  guint held = 0;

  g_test_message ("stream: %s", stream->raw->str);
  g_assert_nonnull (noted);
  g_assert_nonnull (done);
  check_keepalives (stream->raw->str);
  for (const char *p = strstr (noted, KEEPALIVE); p != NULL && p < done; p = strstr (p + 1, KEEPALIVE))
    held++;
  g_assert_cmpuint (held, >=, 2);
  g_assert_nonnull (strstr (stream->raw->str,
                            "event: MemoryExtractedEvent\ndata: {\"ops\":[{\"op\":\"add\",\"fact\":\"tea\"}]}\n\n"));
}

/* A runtime upstream stops for 3 s in the middle of a frame: the gateway
 * sends keepalives meanwhile, and the frame whole once its end came. */
static void
test_heartbeat_frame_split_across_pause (void)
{
  static const char body[] =
    "event: TextDeltaEvent\ndata: {\"text\":\"one \"}\n\n"
    "event: TextDeltaEvent\ndata: {\"text\":\"tw"
    "o\"}\n\n"
    "event: ResponseCompleteEvent\ndata: {\"text\":\"one two\",\"duration_ms\":3000}\n\n";
  g_autoptr(SymfonicTestUpstream) upstream = symfonic_test_upstream_new ();
  g_autoptr(GBytes) bytes = g_bytes_new_static (body, strlen (body));
  g_autofree char *base_dir = g_test_build_filename (G_TEST_DIST, "integration", NULL);
  g_autofree char *url = NULL;
  g_autofree char *text = NULL;
  g_autoptr(SymfonicServer) server = NULL;
  g_autoptr(SymfonicTestStream) stream = NULL;
  SymfonicTestScenario scenario = { 0, };
  const char *one, *two;
  guint between = 0;

  scenario.body = bytes;
  scenario.pause_at = strstr (body, "\"tw") + 3 - body;
  scenario.pause_ms = 3000;
  url = symfonic_test_upstream_add (upstream, "/run", &scenario);
  text = g_strdup_printf ("[gateway]\nlisten=127.0.0.1:8080\nworkers=1\n\n"
                          "[route:typed]\npath=" SYMFONIC_TEST_TYPED_PATH "\nkind=typed\nsource=up\n"
                          "heartbeat-seconds=1\n\n"
                          "[source:up]\ntype=runtime\nurl=%s\n", url);
  server = symfonic_test_server_new (text, base_dir, 1);
  stream = run (server);

  g_test_message ("stream: %s", stream->raw->str);
  one = strstr (stream->raw->str, "id: 1\nevent: TextDeltaEvent\ndata: {\"text\":\"one \"}\n\n");
  two = strstr (stream->raw->str, "id: 2\nevent: TextDeltaEvent\ndata: {\"text\":\"two\"}\n\n");
  g_assert_nonnull (one);
  g_assert_nonnull (two);
  check_keepalives (stream->raw->str);
  for (const char *p = strstr (one, KEEPALIVE); p != NULL && p < two; p = strstr (p + 1, KEEPALIVE))
    between++;
  g_assert_cmpuint (between, >=, 2);
  g_assert_cmpuint (stream->frames->len, ==, 4);
}

/* heartbeat-seconds and the resume keys are validated at load, naming
 * the file, the line and the key. */
static void
test_route_keys_validated (void)
{
  static const struct {
    const char *line;
    const char *key;
  } cases[] = {
    { "heartbeat-seconds=-1", "heartbeat-seconds" },
    { "heartbeat-seconds=soon", "heartbeat-seconds" },
    { "heartbeat-seconds=604801", "heartbeat-seconds" },
    { "resume=maybe", "resume" },
    { "resume-frames=0", "resume-frames" },
    { "resume-frames=1000001", "resume-frames" },
    { "resume-bytes=1023", "resume-bytes" },
    { "resume-bytes=1073741825", "resume-bytes" },
    { "resume-bytes=4M", "resume-bytes" },
    { "resume-seconds=0", "resume-seconds" },
  };
  g_autoptr(SymfonicRegistry) registry = symfonic_registry_new ();
  g_autofree char *base_dir = g_test_build_filename (G_TEST_DIST, "integration", NULL);
  g_autoptr(GFile) base = g_file_new_for_path (base_dir);
  g_autoptr(GError) plugin_error = NULL;

  g_assert_true (symfonic_registry_scan (registry, &plugin_error));
  g_assert_no_error (plugin_error);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *text = g_strdup_printf ("[route:typed]\npath=/t\nkind=typed\nsource=up\n%s\n\n"
                                               "[source:up]\ntype=replay\ntranscripts=transcripts\n"
                                               "default-transcript=pause\n", cases[i].line);
      g_autofree char *where = g_strdup_printf ("h.pipeline:5: [route:typed] %s:", cases[i].key);
      g_autoptr(GError) error = NULL;
      g_autoptr(SymfonicPipeline) pipeline =
        symfonic_pipeline_new_from_data (registry, text, -1, base, "h.pipeline", &error);

      g_test_message ("%s: %s", cases[i].line, error != NULL ? error->message : "loads");
      g_assert_null (pipeline);
      g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
      g_assert_true (g_str_has_prefix (error->message, where));
    }
}

int
main (int    argc,
      char **argv)
{
  symfonic_test_init (&argc, &argv);

  g_test_add_func ("/heartbeat/upstream-pause", test_heartbeat_upstream_pause);
  g_test_add_func ("/heartbeat/off", test_heartbeat_off);
  g_test_add_func ("/heartbeat/while-withheld", test_heartbeat_while_withheld);
  g_test_add_func ("/heartbeat/frame-split-across-pause", test_heartbeat_frame_split_across_pause);
  g_test_add_func ("/heartbeat/route-keys-validated", test_route_keys_validated);

  return g_test_run ();
}
