/* test-disconnect.c: a client that hangs up cancels its stream, promptly
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * DESIGN 3: a client disconnect is a cancellation, not an error, and the
 * upstream is cancelled promptly. Each case gets its own server so the
 * counters start at zero, reads them from /metrics over a separate
 * connection, and measures how long the hang-up took to be noticed.
 */
#include <string.h>

#include "symfonic-test-support.h"

#define NOTICE_LIMIT_US (1 * G_USEC_PER_SEC)
#define POLL_LIMIT_US (2 * G_USEC_PER_SEC)

typedef struct
{
  double started;
  double completed;
  double failed;
  double cancelled;
  double active;
} Counters;

static void
fetch_counters (SoupSession *session,
                const char  *base_url,
                Counters    *counters)
{
  g_autofree char *url = g_strconcat (base_url, "/metrics", NULL);
  g_autoptr(SymfonicTestResponse) response = symfonic_test_request (session, "GET", url, NULL, NULL, NULL);
  const char *text = symfonic_test_response_get_text (response);

  g_assert_cmpuint (response->status, ==, 200);
  g_assert_true (symfonic_test_metrics_lookup (text, "symfonic_streams_started_total", &counters->started));
  g_assert_true (symfonic_test_metrics_lookup (text, "symfonic_streams_completed_total", &counters->completed));
  g_assert_true (symfonic_test_metrics_lookup (text, "symfonic_streams_failed_total", &counters->failed));
  g_assert_true (symfonic_test_metrics_lookup (text, "symfonic_streams_cancelled_total", &counters->cancelled));
  g_assert_true (symfonic_test_metrics_lookup (text, "symfonic_streams_active", &counters->active));
}

static gboolean
sleep_done (gpointer data)
{
  return FALSE;
}

/* Sleeps while still dispatching whatever the test's context has. */
static void
pause_ms (guint ms)
{
  symfonic_test_iterate_until (NULL, sleep_done, NULL, ms);
}

/* Polls the counters until the hang-up shows, and returns how long after
 * @closed_us it did, or -1. */
static gint64
wait_cancelled (SoupSession *session,
                const char  *base_url,
                gint64       closed_us,
                Counters    *counters)
{
  while (g_get_monotonic_time () - closed_us < POLL_LIMIT_US)
    {
      fetch_counters (session, base_url, counters);
      if (counters->active == 0 && counters->cancelled == 1)
        return g_get_monotonic_time () - closed_us;
      pause_ms (5);
    }

  return -1;
}

/* Opens a stream of @transcript, waits until @n_frames frames arrived (0:
 * only the headers), hangs up, and checks the server counted a
 * cancellation, and nothing else, within a second. */
static void
hang_up_after (const char *transcript,
               guint       n_frames)
{
  g_autofree char *base_dir = g_test_build_filename (G_TEST_DIST, "integration", NULL);
  g_autofree char *pipeline_text = symfonic_test_replay_pipeline ("transcripts", "long", 1);
  g_autoptr(SymfonicServer) server = symfonic_test_server_new (pipeline_text, base_dir, 2);
  g_autofree char *base_url = g_strdup_printf ("http://127.0.0.1:%u", symfonic_server_get_port (server));
  g_autofree char *url = g_strconcat (base_url, SYMFONIC_TEST_TYPED_PATH, NULL);
  g_autoptr(SoupSession) metrics_session = symfonic_test_session_new ();
  g_autoptr(SoupSession) stream_session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = NULL;
  Counters counters;
  gint64 closed_us, noticed;

  stream = symfonic_test_stream_post (stream_session, url, "{\"query\":\"talk for a while\"}",
                                      "X-Symfonic-Transcript", transcript, NULL);
  symfonic_test_stream_wait_headers (stream);
  g_assert_cmpuint (stream->status, ==, 200);
  if (n_frames > 0)
    {
      SymfonicTestFrame *first;

      symfonic_test_stream_wait_frames (stream, n_frames);
      g_assert_false (stream->done);
      g_assert_cmpuint (stream->frames->len, >=, n_frames);
      first = g_ptr_array_index (stream->frames, 0);
      g_assert_cmpstr (first->event, ==, "TextDeltaEvent");
      g_assert_cmpstr (first->data, ==, "{\"text\":\"w1 \"}");
    }
  else
    {
      g_assert_cmpuint (stream->frames->len, ==, 0);
    }

  fetch_counters (metrics_session, base_url, &counters);
  g_assert_cmpfloat (counters.started, ==, 1);
  g_assert_cmpfloat (counters.active, ==, 1);
  g_assert_cmpfloat (counters.cancelled, ==, 0);

  /* hang up: stop reading, close the body, drop every connection */
  closed_us = g_get_monotonic_time ();
  symfonic_test_stream_close (stream);
  soup_session_abort (stream_session);
  g_clear_object (&stream_session);

  noticed = wait_cancelled (metrics_session, base_url, closed_us, &counters);

  g_test_message ("hang-up after %u frame(s) noticed after %" G_GINT64_FORMAT " us "
                  "(active %g, cancelled %g, completed %g, failed %g)",
                  n_frames, noticed, counters.active, counters.cancelled, counters.completed, counters.failed);

  g_assert_cmpint (noticed, >=, 0);
  g_assert_cmpint (noticed, <, NOTICE_LIMIT_US);
  g_assert_cmpfloat (counters.completed, ==, 0);
  g_assert_cmpfloat (counters.failed, ==, 0);

  /* the upstream really stopped: later events do not complete (or fail) a
   * stream nobody reads */
  pause_ms (350);
  fetch_counters (metrics_session, base_url, &counters);
  g_assert_cmpfloat (counters.started, ==, 1);
  g_assert_cmpfloat (counters.cancelled, ==, 1);
  g_assert_cmpfloat (counters.completed, ==, 0);
  g_assert_cmpfloat (counters.failed, ==, 0);
  g_assert_cmpfloat (counters.active, ==, 0);

  /* and the server still serves */
  {
    g_autofree char *healthz = g_strconcat (base_url, "/healthz", NULL);
    g_autoptr(SymfonicTestResponse) response =
      symfonic_test_request (metrics_session, "GET", healthz, NULL, NULL, NULL);

    g_assert_cmpuint (response->status, ==, 200);
  }

  symfonic_server_stop (server);
}

/* A JSON answer is only written at the end: while the upstream is silent
 * only the watch on the socket can notice the client left. */
static void
test_disconnect_chat_while_upstream_silent (void)
{
  g_autofree char *base_dir = g_test_build_filename (G_TEST_DIST, "integration", NULL);
  g_autofree char *replay = symfonic_test_replay_pipeline ("transcripts", "silent", 1);
  g_autofree char *pipeline_text = g_strconcat (replay,
                                                "[route:chat]\n"
                                                "path=/api/v1/chat\n"
                                                "kind=chat\n"
                                                "source=fixtures\n", NULL);
  g_autoptr(SymfonicServer) server = symfonic_test_server_new (pipeline_text, base_dir, 1);
  g_autofree char *base_url = g_strdup_printf ("http://127.0.0.1:%u", symfonic_server_get_port (server));
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) address = g_inet_socket_address_new (loopback, symfonic_server_get_port (server));
  g_autoptr(GSocket) socket = NULL;
  g_autoptr(GError) error = NULL;
  static const char request[] = "POST /api/v1/chat HTTP/1.1\r\n"
                                "Host: 127.0.0.1\r\n"
                                "Content-Type: application/json\r\n"
                                "Content-Length: 14\r\n"
                                "\r\n{\"query\":\"hi\"}";
  Counters counters = { 0 };
  gint64 closed_us, noticed;

  socket = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &error);
  g_assert_no_error (error);
  g_socket_connect (socket, address, NULL, &error);
  g_assert_no_error (error);
  g_socket_send (socket, request, strlen (request), NULL, &error);
  g_assert_no_error (error);

  while (counters.active == 0)
    {
      fetch_counters (session, base_url, &counters);
      pause_ms (5);
    }
  g_assert_cmpfloat (counters.started, ==, 1);

  closed_us = g_get_monotonic_time ();
  g_socket_close (socket, &error);
  g_assert_no_error (error);
  noticed = wait_cancelled (session, base_url, closed_us, &counters);
  g_test_message ("hang-up of a JSON answer noticed after %" G_GINT64_FORMAT " us", noticed);

  g_assert_cmpint (noticed, >=, 0);
  g_assert_cmpint (noticed, <, NOTICE_LIMIT_US);
  g_assert_cmpfloat (counters.completed, ==, 0);
  g_assert_cmpfloat (counters.failed, ==, 0);

  symfonic_server_stop (server);
}

static void
test_disconnect_after_first_frame (void)
{
  /* 50 deltas 100 ms apart: the hang-up lands in the middle */
  hang_up_after ("long", 1);
}

static void
test_disconnect_while_upstream_silent (void)
{
  /* nothing is written for 5 s, so only watching the socket can notice */
  hang_up_after ("silent", 0);
}

int
main (int   argc,
      char *argv[])
{
  symfonic_test_init (&argc, &argv);

  g_test_add_func ("/disconnect/after-first-frame", test_disconnect_after_first_frame);
  g_test_add_func ("/disconnect/while-upstream-silent", test_disconnect_while_upstream_silent);
  g_test_add_func ("/disconnect/chat-while-upstream-silent", test_disconnect_chat_while_upstream_silent);

  return g_test_run ();
}
