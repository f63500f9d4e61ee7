/* test-resume.c: frame ids, run ids, and runs read again after a drop
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Issue 11, item 2 (DESIGN 7a): every typed and chunk frame carries
 * `id: <seq>`, 1, 2, 3 … per run, the terminal and error frames too; the
 * response carries X-Symfonic-Run-ID.
 */
#include <string.h>

#include "symfonic-test-support.h"

#define CHUNKS_PATH "/api/v1/stream"

static char *
pipeline_text (const char *extra_route_lines)
{
  return g_strdup_printf ("[gateway]\n"
                          "listen=127.0.0.1:8080\n"
                          "workers=2\n"
                          "\n"
                          "[route:typed]\n"
                          "path=" SYMFONIC_TEST_TYPED_PATH "\n"
                          "kind=typed\n"
                          "source=fixtures\n"
                          "%s\n"
                          "\n"
                          "[route:chunks]\n"
                          "path=" CHUNKS_PATH "\n"
                          "kind=chunks\n"
                          "source=fixtures\n"
                          "stages=projection\n"
                          "%s\n"
                          "\n"
                          "[source:fixtures]\n"
                          "type=replay\n"
                          "transcripts=transcripts\n"
                          "default-transcript=typed\n"
                          "transcript-header=X-Symfonic-Transcript\n"
                          "\n"
                          "[stage:projection]\n"
                          "type=projection\n",
                          extra_route_lines, extra_route_lines);
}

static SymfonicServer *
start_server (const char *extra_route_lines)
{
  g_autofree char *base_dir = g_test_build_filename (G_TEST_DIST, "integration", NULL);
  g_autofree char *text = pipeline_text (extra_route_lines);

  return symfonic_test_server_new (text, base_dir, 2);
}

static SymfonicTestStream *
run_whole (SymfonicServer *server,
           const char     *path,
           const char     *transcript)
{
  g_autofree char *url = symfonic_test_server_dup_url (server, path);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  SymfonicTestStream *stream = symfonic_test_stream_post (session, url, "{\"query\":\"q\"}",
                                                          "X-Symfonic-Transcript", transcript, NULL);

  symfonic_test_stream_wait_done (stream);
  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, 200);

  return stream;
}

static const char *
run_id_of (SymfonicTestStream *stream)
{
  return soup_message_headers_get_one (soup_message_get_response_headers (stream->message), "X-Symfonic-Run-ID");
}

/* ids 1..n, in order, on every frame, the terminal included */
static void
assert_ids (SymfonicTestStream *stream,
            guint               n_frames)
{
  g_assert_cmpuint (stream->frames->len, ==, n_frames);
  for (guint i = 0; i < stream->frames->len; i++)
    {
      SymfonicTestFrame *frame = g_ptr_array_index (stream->frames, i);
      g_autofree char *id = g_strdup_printf ("%u", i + 1);

      g_assert_cmpstr (frame->id, ==, id);
    }
}

static void
test_ids_typed (void)
{
  g_autoptr(SymfonicServer) server = start_server ("");
  g_autoptr(SymfonicTestStream) stream = run_whole (server, SYMFONIC_TEST_TYPED_PATH, "typed");
  SymfonicTestFrame *last;

  /* the typed transcript's fourteen events, the terminal last */
  assert_ids (stream, 14);
  last = g_ptr_array_index (stream->frames, 13);
  g_assert_cmpstr (last->event, ==, "ResponseCompleteEvent");
  g_assert_true (g_str_has_prefix (stream->raw->str, "id: 1\nevent: ActivationEvent\ndata: "));
  g_assert_true (g_uuid_string_is_valid (run_id_of (stream)));
}

static void
test_ids_chunks (void)
{
  g_autoptr(SymfonicServer) server = start_server ("");
  g_autoptr(SymfonicTestStream) stream = run_whole (server, CHUNKS_PATH, "paced");
  g_autofree char *run_id_member = NULL;
  SymfonicTestFrame *last;

  /* seven text_delta chunks and done */
  assert_ids (stream, 8);
  last = g_ptr_array_index (stream->frames, 7);
  g_assert_true (g_str_has_prefix (last->data, "{\"event_type\":\"done\""));
  g_assert_true (g_str_has_prefix (stream->raw->str, "id: 1\ndata: {\"event_type\":\"text_delta\",\"data\":\"one \""));
  g_assert_true (g_uuid_string_is_valid (run_id_of (stream)));
  /* the header names the run whose id every chunk carries */
  run_id_member = g_strdup_printf ("\"run_id\":\"%s\"}", run_id_of (stream));
  g_assert_true (g_str_has_suffix (last->data, run_id_member));
}

/* The error terminal is numbered like any frame. */
static void
test_ids_error_terminal (void)
{
  g_autoptr(SymfonicServer) server = start_server ("");
  g_autoptr(SymfonicTestStream) stream = run_whole (server, SYMFONIC_TEST_TYPED_PATH, "midstream-error");
  SymfonicTestFrame *last = g_ptr_array_index (stream->frames, stream->frames->len - 1);

  g_assert_cmpstr (last->event, ==, "error");
  assert_ids (stream, stream->frames->len);
}

/* Two runs, two ids. */
static void
test_run_ids_differ (void)
{
  g_autoptr(SymfonicServer) server = start_server ("");
  g_autoptr(SymfonicTestStream) a = run_whole (server, SYMFONIC_TEST_TYPED_PATH, "paced");
  g_autoptr(SymfonicTestStream) b = run_whole (server, SYMFONIC_TEST_TYPED_PATH, "paced");

  g_assert_cmpstr (run_id_of (a), !=, run_id_of (b));
}

int
main (int    argc,
      char **argv)
{
  symfonic_test_init (&argc, &argv);

  g_test_add_func ("/resume/ids/typed", test_ids_typed);
  g_test_add_func ("/resume/ids/chunks", test_ids_chunks);
  g_test_add_func ("/resume/ids/error-terminal", test_ids_error_terminal);
  g_test_add_func ("/resume/run-ids-differ", test_run_ids_differ);

  return g_test_run ();
}
