/* test-faults.c: streams through a reload, a drain and a storm of hang-ups
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each case runs a server in-process from a pipeline file, holds
 * N_STREAMS streams open at once, and does to the server what an operator
 * or a crowd of clients does: reloads its file, drains it, or connects and
 * hangs up a thousand times. Every stream must end with exactly one
 * terminal frame, the one the case expects.
 */
#include <string.h>
#include <glib/gstdio.h>

#include "symfonic-test-support.h"

#define N_STREAMS 100
#define N_CYCLES 1000
/* what the process may keep after N_CYCLES streams came and went (3 MB
 * was seen, the allocator's arenas): a held stream costs 14 KB, so a
 * stream's own memory that stayed would show */
#define MAX_CYCLES_GROWTH (8 * 1024 * 1024)
#define REASONING_START "Bread goes stale mainly because its starch recrystallizes"
#define PLAIN_TEXT "The sky looks blue because air molecules scatter short wavelengths of sunlight more than long ones."

/* A pipeline file whose typed route plays @transcript (or the one a
 * request names) of @transcripts, a folder of the source tree,
 * @time_scale times slower than recorded, through the shipped error
 * table. */
static char *
write_pipeline (const char *transcripts,
                const char *transcript,
                guint       time_scale,
                guint       drain_seconds)
{
  g_autofree char *table = g_test_build_filename (G_TEST_DIST, "..", "data", "error-map.ini", NULL);
  g_autofree char *folder = g_test_build_filename (G_TEST_DIST, "..", transcripts, NULL);
  g_autofree char *text = NULL;
  g_autoptr(GError) error = NULL;
  char *path = g_build_filename (g_get_user_cache_dir (), "faults.pipeline", NULL);

  text = g_strdup_printf ("[gateway]\n"
                          "drain-seconds=%u\n"
                          "\n"
                          "[route:typed]\n"
                          "path=" SYMFONIC_TEST_TYPED_PATH "\n"
                          "kind=typed\n"
                          "source=demo\n"
                          "stages=errors\n"
                          "\n"
                          "[source:demo]\n"
                          "type=replay\n"
                          "transcripts=%s\n"
                          "default-transcript=%s\n"
                          "transcript-header=X-Symfonic-Transcript\n"
                          "time-scale=%u\n"
                          "\n"
                          "[stage:errors]\n"
                          "type=error-map\n"
                          "table=%s\n",
                          drain_seconds, folder, transcript, time_scale, table);
  g_assert_cmpint (g_mkdir_with_parents (g_get_user_cache_dir (), 0700), ==, 0);
  g_file_set_contents (path, text, -1, &error);
  g_assert_no_error (error);

  return path;
}

static SymfonicTestStream *
open_stream (SoupSession    *session,
             SymfonicServer *server,
             const char     *transcript)
{
  g_autofree char *url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);

  return symfonic_test_stream_post (session, url, "{\"query\":\"why?\"}",
                                    "X-Symfonic-Transcript", transcript, NULL);
}

/* The stream ended with exactly one terminal frame, its last, and that is
 * @event; returns its data. */
static const char *
terminal_data (SymfonicTestStream *stream,
               const char         *event)
{
  SymfonicTestFrame *last;
  guint n_terminal = 0;

  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, 200);
  g_assert_cmpuint (stream->frames->len, >, 0);
  for (guint i = 0; i < stream->frames->len; i++)
    {
      SymfonicTestFrame *frame = g_ptr_array_index (stream->frames, i);

      n_terminal += g_str_equal (frame->event, "error") || g_str_equal (frame->event, "ResponseCompleteEvent");
    }
  last = g_ptr_array_index (stream->frames, stream->frames->len - 1);
  g_assert_cmpuint (n_terminal, ==, 1);
  g_assert_cmpstr (last->event, ==, event);

  return last->data;
}

static void
assert_final_text (SymfonicTestStream *stream,
                   const char         *prefix)
{
  g_autoptr(JsonNode) node = symfonic_test_json_parse (terminal_data (stream, "ResponseCompleteEvent"));
  const char *text = json_object_get_string_member (json_node_get_object (node), "text");

  g_assert_true (g_str_has_prefix (text, prefix));
}

/* A reload under N_STREAMS streams breaks none: each finishes on the
 * pipeline it started with (the old transcript), and a request after the
 * reload gets the new one. */
static void
test_reload_under_streams (void)
{
  g_autofree char *path = write_pipeline ("data/transcripts", "reasoning", 3, 30);
  g_autoptr(SymfonicServer) server = symfonic_test_server_new_from_file (path, 2);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(GPtrArray) streams = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_test_stream_free);
  g_autoptr(SymfonicTestStream) fresh = NULL;
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < N_STREAMS; i++)
    g_ptr_array_add (streams, open_stream (session, server, "reasoning"));
  for (guint i = 0; i < N_STREAMS; i++)
    symfonic_test_stream_wait_frames (g_ptr_array_index (streams, i), 1);

  g_free (write_pipeline ("data/transcripts", "plain", 0, 30));
  g_assert_true (symfonic_server_reload (server, symfonic_registry_get_default (), &error));
  g_assert_no_error (error);

  fresh = open_stream (session, server, "plain");
  symfonic_test_stream_wait_done (fresh);
  assert_final_text (fresh, PLAIN_TEXT);

  for (guint i = 0; i < N_STREAMS; i++)
    {
      SymfonicTestStream *stream = g_ptr_array_index (streams, i);

      symfonic_test_stream_wait_done (stream);
      assert_final_text (stream, REASONING_START);
    }

  symfonic_server_stop (server);
  g_unlink (path);
}

static void
drained_cb (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (symfonic_server_drain_finish (SYMFONIC_SERVER (object), result, &error));
  g_assert_no_error (error);
  *(gboolean *) user_data = TRUE;
}

static gboolean
is_set (gpointer data)
{
  return *(gboolean *) data;
}

/* A drain under N_STREAMS streams: half of them end within drain-seconds
 * and complete, the other half are ended by the drain; each gets exactly
 * one terminal frame, and the drain reports when they all did. */
static void
test_drain_under_streams (void)
{
  g_autofree char *path = write_pipeline ("data/transcripts", "reasoning", 20, 8);
  g_autoptr(SymfonicServer) server = symfonic_test_server_new_from_file (path, 2);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(GPtrArray) streams = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_test_stream_free);
  gboolean drained = FALSE;

  /* even: 18 s of reasoning, more than the 8 s of drain; odd: plain,
   * 3.4 s at this scale */
  for (guint i = 0; i < N_STREAMS; i++)
    g_ptr_array_add (streams, open_stream (session, server, i % 2 == 0 ? "reasoning" : "plain"));
  for (guint i = 0; i < N_STREAMS; i++)
    symfonic_test_stream_wait_frames (g_ptr_array_index (streams, i), 1);

  symfonic_server_drain_async (server, NULL, drained_cb, &drained);
  g_assert_true (symfonic_test_iterate_until (NULL, is_set, &drained, SYMFONIC_TEST_WAIT_MS));

  for (guint i = 0; i < N_STREAMS; i++)
    {
      SymfonicTestStream *stream = g_ptr_array_index (streams, i);

      symfonic_test_stream_wait_done (stream);
      if (i % 2 == 0)
        g_assert_cmpstr (terminal_data (stream, "error"), ==,
                         "{\"detail\":\"The gateway is shutting down; retry later\",\"status\":503,"
                         "\"code\":\"shutting_down\"}");
      else
        terminal_data (stream, "ResponseCompleteEvent");
    }

  symfonic_server_stop (server);
  g_unlink (path);
}

/* @n clients, one after the other, open a stream and hang up after its
 * first frame. Plain sockets: a thousand of them through libsoup would
 * take longer than the rest of the suite. */
static void
hang_up_cycles (SymfonicServer *server,
                guint           n)
{
  static const char request[] = "POST " SYMFONIC_TEST_TYPED_PATH " HTTP/1.1\r\n"
                                "Host: gateway\r\n"
                                "Content-Type: application/json\r\n"
                                "Content-Length: 16\r\n"
                                "\r\n"
                                "{\"query\":\"why?\"}";

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GString) received = g_string_new (NULL);
      g_autoptr(GSocketConnection) connection =
        symfonic_test_raw_request (symfonic_server_get_port (server), request, "data: ", received);

      g_assert_true (g_str_has_prefix (received->str, "HTTP/1.1 200"));
      g_io_stream_close (G_IO_STREAM (connection), NULL, NULL);
      /* the streams held meanwhile are read too, so that none times out */
      while (g_main_context_iteration (NULL, FALSE))
        ;
    }
}

typedef struct
{
  SoupSession *session;
  guint        fds;
} Bound;

/* The kept-alive connections of the streams that ended are no hang-ups:
 * the session closes them once they went back to it, which takes an
 * iteration or two. */
static gboolean
idle_closed_fds_at_most (gpointer data)
{
  Bound *bound = data;

  soup_session_abort (bound->session);
  return symfonic_test_count_fds () <= bound->fds;
}

/* N_CYCLES clients open a stream and hang up after its first frame while
 * N_STREAMS others stream on: once they are gone, the process holds no
 * more descriptors than before and (but under AddressSanitizer, whose
 * quarantine keeps freed memory) not much more memory; the streams that
 * stayed end as they should. Every stream is held: its first delta comes
 * at once, its second 10 s later. */
static void
test_hangup_cycles (void)
{
  g_autofree char *path = write_pipeline ("tests/integration/transcripts", "held", 10, 30);
  g_autoptr(SymfonicServer) server = symfonic_test_server_new_from_file (path, 2);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(GPtrArray) streams = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_test_stream_free);
  gsize rss_before;
  gsize rss_after;
  guint fds_before;
  Bound bound;

  /* no connection is open yet */
  fds_before = symfonic_test_count_fds ();
  /* warm: the allocator's arenas */
  hang_up_cycles (server, 50);
  rss_before = symfonic_test_memory_bytes ("VmRSS");

  for (guint i = 0; i < N_STREAMS; i++)
    g_ptr_array_add (streams, open_stream (session, server, "held"));
  for (guint i = 0; i < N_STREAMS; i++)
    symfonic_test_stream_wait_frames (g_ptr_array_index (streams, i), 1);
  hang_up_cycles (server, N_CYCLES);

  for (guint i = 0; i < N_STREAMS; i++)
    {
      SymfonicTestStream *stream = g_ptr_array_index (streams, i);

      symfonic_test_stream_wait_done (stream);
      assert_final_text (stream, "first second");
    }
  g_ptr_array_set_size (streams, 0);

  /* the workers notice each hang-up on their own schedule */
  bound = (Bound) { session, fds_before + 16 };
  if (!symfonic_test_iterate_until (NULL, idle_closed_fds_at_most, &bound, SYMFONIC_TEST_WAIT_MS))
    g_assert_cmpuint (symfonic_test_count_fds (), <=, fds_before + 16);

  rss_after = symfonic_test_memory_bytes ("VmRSS");
  g_test_message ("resident: %zu KB before, %zu KB after %u hang-ups", rss_before / 1024, rss_after / 1024,
                  N_CYCLES);
#ifndef SYMFONIC_TEST_UNDER_ASAN
  g_assert_cmpuint (rss_after, <=, rss_before + MAX_CYCLES_GROWTH);
#endif

  symfonic_server_stop (server);
  g_unlink (path);
}

int
main (int   argc,
      char *argv[])
{
  symfonic_test_init (&argc, &argv);

  g_test_add_func ("/faults/reload-under-streams", test_reload_under_streams);
  g_test_add_func ("/faults/drain-under-streams", test_drain_under_streams);
  g_test_add_func ("/faults/hangup-cycles", test_hangup_cycles);

  return g_test_run ();
}
