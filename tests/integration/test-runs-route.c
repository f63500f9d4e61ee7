/* test-runs-route.c: a runs route without a source
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A route of kind runs reads runs from the server's run store, never from
 * an upstream: its group needs no `source=`. Served over real HTTP, it
 * sends a kept run again from the frame after Last-Event-ID, and its
 * metrics and traces have no upstream to name.
 */
#include <string.h>

#include "symfonic-test-support.h"

#define RUNS_PATH "/api/v1/runs"

static const char pipeline_text[] =
  "[gateway]\n"
  "listen=127.0.0.1:8080\n"
  "workers=2\n"
  "\n"
  "[route:typed]\n"
  "path=" SYMFONIC_TEST_TYPED_PATH "\n"
  "kind=typed\n"
  "source=fixtures\n"
  "resume=true\n"
  "\n"
  "[route:runs]\n"
  "path=" RUNS_PATH "\n"
  "kind=runs\n"
  "\n"
  "[source:fixtures]\n"
  "type=replay\n"
  "transcripts=transcripts\n"
  "default-transcript=typed\n";

static void
test_runs_without_source (void)
{
  g_autofree char *base_dir = g_test_build_filename (G_TEST_DIST, "integration", NULL);
  g_autoptr(SymfonicServer) server = symfonic_test_server_new (pipeline_text, base_dir, 2);
  g_autofree char *url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);
  g_autofree char *base_url = symfonic_test_server_dup_url (server, "");
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = NULL;
  g_autoptr(SymfonicTestResponse) again = NULL;
  g_autoptr(SymfonicTestResponse) metrics = NULL;
  g_autoptr(SymfonicTestSseParser) parser = symfonic_test_sse_parser_new ();
  g_autoptr(GPtrArray) frames = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_test_frame_free);
  g_autofree char *runs_url = NULL;
  g_autofree char *metrics_url = g_strconcat (base_url, "/metrics", NULL);
  const char *body;
  SymfonicTestFrame *last;
  const char *run_id;

  g_assert_null (symfonic_route_get_source (symfonic_pipeline_lookup_route (symfonic_server_get_pipeline (server),
                                                                            RUNS_PATH)));

  stream = symfonic_test_stream_post (session, url, "{\"query\":\"q\"}", NULL);
  symfonic_test_stream_wait_done (stream);
  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, 200);
  g_assert_cmpuint (stream->frames->len, ==, 14);
  run_id = soup_message_headers_get_one (soup_message_get_response_headers (stream->message), "X-Symfonic-Run-ID");
  g_assert_nonnull (run_id);

  /* the last four frames again, the terminal last, as they were sent */
  runs_url = g_strdup_printf ("%s" RUNS_PATH "/%s/stream", base_url, run_id);
  again = symfonic_test_request (session, "GET", runs_url, NULL, NULL, "Last-Event-ID", "10", NULL);
  g_assert_cmpuint (again->status, ==, 200);
  g_assert_cmpstr (soup_message_headers_get_content_type (again->headers, NULL), ==, "text/event-stream");
  body = symfonic_test_response_get_text (again);
  symfonic_test_sse_parser_feed (parser, body, strlen (body), frames);
  g_assert_cmpuint (frames->len, ==, 4);
  g_assert_cmpstr (((SymfonicTestFrame *) g_ptr_array_index (frames, 0))->id, ==, "11");
  last = g_ptr_array_index (frames, 3);
  g_assert_cmpstr (last->id, ==, "14");
  g_assert_cmpstr (last->event, ==, "ResponseCompleteEvent");
  g_assert_cmpstr (last->data, ==, ((SymfonicTestFrame *) g_ptr_array_index (stream->frames, 13))->data);

  /* a scrape names no upstream for the runs route, and still parses */
  metrics = symfonic_test_request (session, "GET", metrics_url, NULL, NULL, NULL);
  g_assert_cmpuint (metrics->status, ==, 200);
  g_assert_nonnull (strstr (symfonic_test_response_get_text (metrics), "route=\"runs\""));

  symfonic_server_stop (server);
}

int
main (int   argc,
      char *argv[])
{
  symfonic_test_init (&argc, &argv);

  g_test_add_func ("/runs-route/without-source", test_runs_without_source);

  return g_test_run ();
}
