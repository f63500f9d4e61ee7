/* test-refusals.c: the status line and body of a refusal
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A refusal names its status with the registered reason phrase on every
 * path (libsoup 3.2 has none for 429), and an unknown transcript is a 404
 * before the response begins that does not repeat the client's header.
 * Status lines are read off a raw socket, as a client sees them.
 */
#include <string.h>

#include "symfonic-test-support.h"

#define BODY "{\"query\":\"hello\"}"
#define BODY_LIMIT 1024

static SymfonicServer *
gateway_new (void)
{
  g_autofree char *odd_table = g_build_filename (g_get_user_cache_dir (), "odd-errors.ini", NULL);
  g_autofree char *text = NULL;
  g_autoptr(GError) error = NULL;

  /* a table may give any status; this one refuses large bodies with a
   * status libsoup has no phrase for */
  g_assert_cmpint (g_mkdir_with_parents (g_get_user_cache_dir (), 0700), ==, 0);
  g_file_set_contents (odd_table,
                       "[code:payload_too_large]\nstatus=429\n\n"
                       "[policy:all]\nkinds=typed;chunks;chat;resume;openai;anthropic;runs\n", -1, &error);
  g_assert_no_error (error);

  text = g_strdup_printf ("[gateway]\nlisten=127.0.0.1:8080\nworkers=2\nmax-body-bytes=%u\n\n"
                          "[route:typed]\npath=/typed\nkind=typed\nsource=demo\nstages=errors\n\n"
                          "[route:chat]\npath=/chat\nkind=chat\nsource=demo\nstages=errors\n\n"
                          "[route:limited]\npath=/limited\nkind=chat\nsource=demo\nstages=auth;limit;errors\n\n"
                          "[route:odd]\npath=/odd\nkind=chat\nsource=demo\nstages=odd-errors\n\n"
                          "[source:demo]\ntype=replay\ntranscripts=transcripts\ndefault-transcript=plain\n"
                          "transcript-header=X-Symfonic-Transcript\ntime-scale=0\n\n"
                          "[stage:auth]\ntype=auth\ntokens-file=demo-tokens.ini\n\n"
                          "[stage:limit]\ntype=rate-limit\nrate=0.001\nburst=1\n\n"
                          "[stage:errors]\ntype=error-map\ntable=error-map.ini\n\n"
                          "[stage:odd-errors]\ntype=error-map\ntable=%s\n",
                          BODY_LIMIT, odd_table);

  /* relative paths resolve against the data folder */
  return symfonic_test_server_new (text, SYMFONIC_TEST_DATA_DIR, 2);
}

/* Sends @request on a connection of its own; returns the status line. */
static char *
status_line (SymfonicServer *server,
             const char     *request)
{
  g_autoptr(GSocketClient) client = g_socket_client_new ();
  g_autoptr(GSocketConnection) connection = NULL;
  g_autoptr(GDataInputStream) input = NULL;
  g_autoptr(GError) error = NULL;
  char *line;

  connection = g_socket_client_connect_to_host (client, "127.0.0.1", symfonic_server_get_port (server),
                                                NULL, &error);
  g_assert_no_error (error);
  g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (connection)),
                             request, strlen (request), NULL, NULL, &error);
  g_assert_no_error (error);

  input = g_data_input_stream_new (g_io_stream_get_input_stream (G_IO_STREAM (connection)));
  g_data_input_stream_set_newline_type (input, G_DATA_STREAM_NEWLINE_TYPE_CR_LF);
  line = g_data_input_stream_read_line (input, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (line);

  return line;
}

static char *
post_request (const char *path,
              gsize       declared_length,
              const char *body)
{
  /* the credentials the metered route's auth stage needs; the other
   * routes do not look at them */
  return g_strdup_printf ("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                          "Authorization: Bearer demo-token-alice\r\nX-Tenant-ID: acme\r\n"
                          "Content-Length: %" G_GSIZE_FORMAT "\r\nConnection: close\r\n\r\n%s",
                          path, declared_length, body);
}

static void
test_reason_phrase_rate_limited (void)
{
  g_autoptr(SymfonicServer) server = gateway_new ();
  g_autofree char *request = post_request ("/limited", strlen (BODY), BODY);
  g_autofree char *first = status_line (server, request);
  g_autofree char *second = status_line (server, request);

  g_assert_cmpstr (first, ==, "HTTP/1.1 200 OK");
  g_assert_cmpstr (second, ==, "HTTP/1.1 429 Too Many Requests");

  symfonic_server_stop (server);
}

/* A body declared over the limit is refused before it is read, on a path
 * that writes the status line itself. */
static void
test_reason_phrase_early_refusal (void)
{
  g_autoptr(SymfonicServer) server = gateway_new ();
  g_autofree char *request = post_request ("/odd", BODY_LIMIT * 100, "");
  g_autofree char *line = status_line (server, request);

  g_assert_cmpstr (line, ==, "HTTP/1.1 429 Too Many Requests");

  symfonic_server_stop (server);
}

static void
test_unknown_transcript (void)
{
  static const char * const paths[] = { "/typed", "/chat" };
  g_autoptr(SymfonicServer) server = gateway_new ();
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  /* nearly as long as the gateway lets a request head be */
  g_autofree char *long_name = g_strnfill (30 * 1024, 'q');
  const char * const names[] = { "nope", long_name };

  for (guint i = 0; i < G_N_ELEMENTS (paths); i++)
    {
      g_autofree char *url = symfonic_test_server_dup_url (server, paths[i]);

      for (guint j = 0; j < G_N_ELEMENTS (names); j++)
        {
          g_autoptr(SymfonicTestResponse) response =
            symfonic_test_request (session, "POST", url, "application/json", BODY,
                                   "X-Symfonic-Transcript", names[j], NULL);

          g_test_message ("%s with a %" G_GSIZE_FORMAT "-byte name: %u", paths[i], strlen (names[j]),
                          response->status);
          g_assert_cmpuint (response->status, ==, 404);
          g_assert_cmpstr (soup_message_headers_get_content_type (response->headers, NULL), ==,
                           "application/json");
          g_assert_cmpstr (symfonic_test_response_get_text (response), ==,
                           "{\"detail\":\"No transcript of that name\",\"status\":404,\"code\":\"not_found\"}");
        }
    }

  symfonic_server_stop (server);
}

int
main (int   argc,
      char *argv[])
{
  symfonic_test_init (&argc, &argv);

  g_test_add_func ("/refusals/reason-phrase/rate-limited", test_reason_phrase_rate_limited);
  g_test_add_func ("/refusals/reason-phrase/early-refusal", test_reason_phrase_early_refusal);
  g_test_add_func ("/refusals/unknown-transcript", test_unknown_transcript);

  return g_test_run ();
}
