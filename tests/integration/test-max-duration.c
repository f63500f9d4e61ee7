/* test-max-duration.c: a route's max-duration ends a stream that runs too long
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An upstream that keeps producing, however slowly, would hold a stream
 * for ever. With `max-duration=1`, a transcript of fifty deltas 100 ms
 * apart (5 s) must end about a second in with exactly one terminal frame,
 * the mapped upstream timeout, and the upstream must stop: nothing of it
 * completes the stream later.
 */
#include <string.h>

#include "symfonic-test-support.h"

#define DEADLINE_US (1 * G_USEC_PER_SEC)
/* the transcript lasts 5 s: a stream that ends before 4 s was cut */
#define CUT_BEFORE_US (4 * G_USEC_PER_SEC)

static gboolean
sleep_done (gpointer data)
{
  return FALSE;
}

typedef struct
{
  SymfonicServer *server;
  char           *base_url;
  char           *url;
  SoupSession    *session;
  /* metrics go over their own connection */
  SoupSession    *metrics_session;
} Fixture;

static double
fetch (Fixture    *fixture,
       const char *name)
{
  return symfonic_test_fetch_metric (fixture->metrics_session, fixture->base_url, name);
}

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  g_autofree char *base_dir = g_test_build_filename (G_TEST_DIST, "integration", NULL);
  g_autofree char *base = symfonic_test_replay_pipeline ("transcripts", "long", 1);
  g_autoptr(GString) text = g_string_new (base);

  g_assert_cmpuint (g_string_replace (text, "source=fixtures\n",
                                      "source=fixtures\nmax-duration=1\nstages=errors\n", 1), ==, 1);
  g_string_append (text, "[stage:errors]\n"
                         "type=error-map\n"
                         "table=" SYMFONIC_TEST_DATA_DIR "/error-map.ini\n"
                         "use-target-statuses=true\n");

  fixture->server = symfonic_test_server_new (text->str, base_dir, 1);
  fixture->base_url = g_strdup_printf ("http://127.0.0.1:%u", symfonic_server_get_port (fixture->server));
  fixture->url = g_strconcat (fixture->base_url, SYMFONIC_TEST_TYPED_PATH, NULL);
  fixture->session = symfonic_test_session_new ();
  fixture->metrics_session = symfonic_test_session_new ();
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  symfonic_server_stop (fixture->server);
  g_object_unref (fixture->server);
  g_free (fixture->base_url);
  g_free (fixture->url);
  g_object_unref (fixture->session);
  g_object_unref (fixture->metrics_session);
}

static void
test_max_duration_ends_stream (Fixture       *fixture,
                               gconstpointer  data)
{
  g_autoptr(SymfonicTestStream) stream = NULL;
  g_autoptr(JsonNode) root = NULL;
  SymfonicTestFrame *last;
  JsonObject *object;
  gint64 ended_after_us;
  guint n_errors = 0;

  stream = symfonic_test_stream_post (fixture->session, fixture->url, "{\"query\":\"talk for a while\"}", NULL);
  symfonic_test_stream_wait_done (stream);
  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, 200);

  ended_after_us = stream->end_us - stream->headers_us;
  g_test_message ("%u frames, ended %" G_GINT64_FORMAT " ms after the headers",
                  stream->frames->len, ended_after_us / 1000);

  /* deltas flowed until the deadline, then exactly one terminal */
  g_assert_cmpuint (stream->frames->len, >=, 2);
  for (guint i = 0; i < stream->frames->len; i++)
    {
      SymfonicTestFrame *frame = g_ptr_array_index (stream->frames, i);

      g_assert_cmpstr (frame->event, !=, "ResponseCompleteEvent");
      if (g_str_equal (frame->event, "error"))
        n_errors++;
      else
        g_assert_cmpstr (frame->event, ==, "TextDeltaEvent");
    }
  g_assert_cmpuint (n_errors, ==, 1);
  last = g_ptr_array_index (stream->frames, stream->frames->len - 1);
  g_assert_cmpstr (last->event, ==, "error");
  root = symfonic_test_json_parse (last->data);
  object = json_node_get_object (root);
  g_assert_cmpint (json_object_get_int_member (object, "status"), ==, 504);
  g_assert_cmpstr (json_object_get_string_member (object, "code"), ==, "upstream_timeout");
  g_assert_cmpstr (json_object_get_string_member (object, "detail"), ==, "Internal server error");

  /* about a second in: never before it, and well before the transcript's end */
  g_assert_cmpint (last->time_us - stream->headers_us, >=, DEADLINE_US - 50000);
  g_assert_cmpint (ended_after_us, <, CUT_BEFORE_US);

  /* the upstream was cancelled: by the transcript's own end nothing of it
   * completed the stream, and it is counted once, as a failure */
  symfonic_test_iterate_until (NULL, sleep_done, NULL, 4500);
  g_assert_cmpfloat (fetch (fixture, "symfonic_streams_failed_total"), ==, 1);
  g_assert_cmpfloat (fetch (fixture, "symfonic_streams_completed_total"), ==, 0);
  g_assert_cmpfloat (fetch (fixture, "symfonic_streams_active"), ==, 0);
}

/* A stream that ends before its deadline is not touched by it. */
static void
test_max_duration_spares_short_stream (Fixture       *fixture,
                                       gconstpointer  data)
{
  g_autoptr(SymfonicTestStream) stream = NULL;
  SymfonicTestFrame *last;

  stream = symfonic_test_stream_post (fixture->session, fixture->url, "{\"query\":\"be quick\"}",
                                      "X-Symfonic-Transcript", "typed", NULL);
  symfonic_test_stream_wait_done (stream);
  g_assert_cmpuint (stream->status, ==, 200);
  last = g_ptr_array_index (stream->frames, stream->frames->len - 1);
  g_assert_cmpstr (last->event, ==, "ResponseCompleteEvent");

  /* past the deadline, the finished stream stays a success */
  symfonic_test_iterate_until (NULL, sleep_done, NULL, 1500);
  g_assert_cmpfloat (fetch (fixture, "symfonic_streams_completed_total"), ==, 1);
  g_assert_cmpfloat (fetch (fixture, "symfonic_streams_failed_total"), ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  symfonic_test_init (&argc, &argv);

  g_test_add ("/max-duration/ends-stream", Fixture, NULL,
              fixture_set_up, test_max_duration_ends_stream, fixture_tear_down);
  g_test_add ("/max-duration/spares-short-stream", Fixture, NULL,
              fixture_set_up, test_max_duration_spares_short_stream, fixture_tear_down);

  return g_test_run ();
}
