/* test-slow-client.c: deltas shed for a client that reads too slowly
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * DESIGN 8: a connection queues at most 256 frames; beyond that deltas are
 * shed and counted, and the terminal, which carries the whole text (seed
 * 002: text_reconstruction='terminal-only'), is always delivered. Where
 * deltas went missing, a `: shed N` comment comes before the next frame.
 *
 * The client is a plain socket with a small receive buffer (so the kernel
 * cannot absorb the stream for it) that reads nothing while the upstream
 * sends most of the answer, then reads everything, while the upstream
 * sends the last deltas. Each delta says its own number, so the test knows
 * which ones are missing and checks every comment against the gap it
 * stands for.
 */
#include <string.h>
#include <sys/socket.h>

#include <glib/gstdio.h>

#include "symfonic-test-support.h"

/* N_DELTAS at full speed, then LATE_DELTAS after a pause that outlasts the
 * client's stall, so they come after it caught up, just after a gap */
#define N_DELTAS 100000
#define LATE_DELTAS 3
#define PAUSE_MS 5000
#define RECEIVE_BUFFER 4096
/* ample for the first deltas to be produced, on a loaded machine too */
#define STALL_US (3 * G_USEC_PER_SEC)

static char *
write_transcript (const char *dir,
                  GString    *text)
{
  g_autofree char *path = g_build_filename (dir, "slow.jsonl", NULL);
  g_autoptr(GString) lines = g_string_new (NULL);
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < N_DELTAS + LATE_DELTAS; i++)
    {
      g_autofree char *delta = g_strdup_printf ("d%06u ", i);

      g_string_append (text, delta);
      g_string_append_printf (lines, "{\"event\":\"TextDeltaEvent\",\"data\":{\"text\":\"%s\"},\"delay_ms\":%u}\n",
                              delta, i == N_DELTAS ? PAUSE_MS : 0);
    }
  g_string_append_printf (lines, "{\"event\":\"ResponseCompleteEvent\",\"data\":{\"text\":\"%s\",\"duration_ms\":1}}\n",
                          text->str);
  g_file_set_contents (path, lines->str, lines->len, &error);
  g_assert_no_error (error);

  return g_steal_pointer (&path);
}

static GSocket *
connect_slow (guint16 port)
{
  g_autoptr(GSocket) socket = NULL;
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) address = g_inet_socket_address_new (loopback, port);
  g_autoptr(GError) error = NULL;

  socket = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &error);
  g_assert_no_error (error);
  /* set before connecting, which also turns the kernel's autotuning off */
  g_socket_set_option (socket, SOL_SOCKET, SO_RCVBUF, RECEIVE_BUFFER, &error);
  g_assert_no_error (error);
  g_socket_set_timeout (socket, SYMFONIC_TEST_WAIT_MS / 1000);
  g_socket_connect (socket, address, NULL, &error);
  g_assert_no_error (error);

  return g_steal_pointer (&socket);
}

/* The body of a chunked HTTP/1.1 response. */
static GString *
dechunk (const char *raw,
         gsize       length)
{
  const char *end = raw + length;
  const char *p = g_strstr_len (raw, length, "\r\n\r\n");
  GString *body = g_string_new (NULL);

  g_assert_nonnull (p);
  g_assert_nonnull (g_strstr_len (raw, p - raw, "Transfer-Encoding: chunked"));
  p += 4;
  for (;;)
    {
      char *line_end;
      guint64 size = g_ascii_strtoull (p, &line_end, 16);

      g_assert_true (line_end + 2 <= end && memcmp (line_end, "\r\n", 2) == 0);
      p = line_end + 2;
      if (size == 0)
        break;
      g_assert_cmpuint (size + 2, <=, (guint64) (end - p));
      g_string_append_len (body, p, size);
      p += size + 2;
    }

  return body;
}

static void
test_slow_client_sheds_with_marks (void)
{
  g_autofree char *dir = g_dir_make_tmp ("symfonic-slow-XXXXXX", NULL);
  g_autoptr(GString) text = g_string_new (NULL);
  g_autofree char *transcript = write_transcript (dir, text);
  g_autofree char *pipeline_text = symfonic_test_replay_pipeline (dir, "slow", 1);
  g_autoptr(SymfonicServer) server = symfonic_test_server_new (pipeline_text, dir, 1);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autofree char *base_url = g_strdup_printf ("http://127.0.0.1:%u", symfonic_server_get_port (server));
  static const char body[] = "{\"query\":\"hi\"}";
  g_autofree char *request = g_strdup_printf ("POST " SYMFONIC_TEST_TYPED_PATH " HTTP/1.1\r\n"
                                              "Host: 127.0.0.1\r\n"
                                              "Connection: close\r\n"
                                              "Content-Type: application/json\r\n"
                                              "Content-Length: %zu\r\n"
                                              "\r\n%s", strlen (body), body);
  g_autoptr(GSocket) socket = NULL;
  g_autoptr(GString) raw = g_string_new (NULL);
  g_autoptr(GString) sse = NULL;
  g_autoptr(SymfonicTestSseParser) parser = symfonic_test_sse_parser_new ();
  g_autoptr(GPtrArray) frames = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_test_frame_free);
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) lines = NULL;
  g_autoptr(JsonNode) terminal = NULL;
  double shed_before, shed_after;
  guint64 shed_marked = 0;
  guint n_marks = 0;
  guint delivered = 0;
  guint next = 0;
  gint64 deadline;
  char buffer[65536];
  gssize n;

  shed_before = symfonic_test_fetch_metric (session, base_url, "symfonic_frames_shed_total");

  socket = connect_slow (symfonic_server_get_port (server));
  g_socket_send (socket, request, strlen (request), NULL, &error);
  g_assert_no_error (error);
  g_usleep (STALL_US);
  while ((n = g_socket_receive (socket, buffer, sizeof buffer, NULL, &error)) > 0)
    g_string_append_len (raw, buffer, n);
  g_assert_no_error (error);

  g_assert_true (g_str_has_prefix (raw->str, "HTTP/1.1 200 "));
  sse = dechunk (raw->str, raw->len);
  symfonic_test_sse_parser_feed (parser, sse->str, sse->len, frames);
  g_assert_true (symfonic_test_sse_parser_is_between_frames (parser));

  /* Each comment sits on a frame boundary, before a frame, and counts
   * exactly the deltas missing there; with the deltas delivered it
   * accounts for every one. */
  lines = g_strsplit (sse->str, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *line = lines[i];

      if (line[0] == ':')
        {
          guint64 gap;

          g_assert_true (g_str_has_prefix (line, ": shed "));
          gap = g_ascii_strtoull (line + strlen (": shed "), NULL, 10);
          g_assert_cmpuint (gap, >, 0);
          g_assert_true (i > 0 && lines[i - 1][0] == '\0');
          g_assert_true (lines[i + 1] != NULL && g_str_has_prefix (lines[i + 1], "event: "));
          n_marks++;
          shed_marked += gap;
          next += gap;
        }
      else if (g_str_equal (line, "event: TextDeltaEvent"))
        {
          g_autofree char *expected = g_strdup_printf ("data: {\"text\":\"d%06u \"}", next);

          g_assert_cmpstr (lines[i + 1], ==, expected);
          next++;
          delivered++;
        }
    }
  g_test_message ("%u deltas delivered, %" G_GUINT64_FORMAT " shed in %u gaps",
                  delivered, shed_marked, n_marks);
  g_assert_cmpuint (n_marks, >, 0);
  g_assert_cmpuint (next, ==, N_DELTAS + LATE_DELTAS);

  /* the terminal carries the whole text, shed deltas included */
  g_assert_cmpuint (frames->len, ==, delivered + 2);
  g_assert_cmpstr (((SymfonicTestFrame *) g_ptr_array_index (frames, frames->len - 2))->event, ==,
                   "ConsolidationScheduledEvent");
  g_assert_cmpstr (((SymfonicTestFrame *) g_ptr_array_index (frames, frames->len - 1))->event, ==,
                   "ResponseCompleteEvent");
  terminal = symfonic_test_json_parse (((SymfonicTestFrame *) g_ptr_array_index (frames, frames->len - 1))->data);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (terminal), "text"), ==, text->str);

  /* counted when libsoup finishes the message, just after the last byte */
  deadline = g_get_monotonic_time () + SYMFONIC_TEST_WAIT_MS * G_TIME_SPAN_MILLISECOND;
  do
    shed_after = symfonic_test_fetch_metric (session, base_url, "symfonic_frames_shed_total");
  while (shed_after == shed_before && g_get_monotonic_time () < deadline);
  g_assert_cmpfloat (shed_after - shed_before, ==, (double) shed_marked);

  symfonic_server_stop (server);
  g_unlink (transcript);
  g_rmdir (dir);
}

int
main (int   argc,
      char *argv[])
{
  symfonic_test_init (&argc, &argv);

  g_test_add_func ("/sse/slow-client/sheds-with-marks", test_slow_client_sheds_with_marks);

  return g_test_run ();
}
