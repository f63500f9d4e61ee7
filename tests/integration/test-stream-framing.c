/* test-stream-framing.c: a streaming body on the wire, byte for byte
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The gateway takes a streaming response's connection from libsoup and
 * writes its head and body itself, then hands a kept-alive connection
 * back. These tests read the raw bytes: on HTTP/1.1 every chunk is well
 * formed and holds whole frames, the last chunk follows the terminal
 * frame, and the connection then serves the next request (two streams
 * back to back on one socket, or two requests sent at once); a client
 * that said `Connection: close` sees the connection close after the last
 * chunk; on HTTP/1.0 the frames go raw and the connection closes after
 * them.
 */
#include <string.h>

#include "symfonic-test-support.h"

/* paced.jsonl, its pauses scaled down so that the deltas still arrive in
 * separate main-loop iterations */
#define TIME_SCALE 0.2

static const char paced_frames[] =
  "id: 1\nevent: TextDeltaEvent\ndata: {\"text\":\"one \"}\n\n"
  "id: 2\nevent: TextDeltaEvent\ndata: {\"text\":\"two \"}\n\n"
  "id: 3\nevent: TextDeltaEvent\ndata: {\"text\":\"three \"}\n\n"
  "id: 4\nevent: TextDeltaEvent\ndata: {\"text\":\"four \"}\n\n"
  "id: 5\nevent: TextDeltaEvent\ndata: {\"text\":\"five \"}\n\n"
  "id: 6\nevent: TextDeltaEvent\ndata: {\"text\":\"six \"}\n\n"
  "id: 7\nevent: TextDeltaEvent\ndata: {\"text\":\"seven\"}\n\n"
  "id: 8\nevent: ConsolidationScheduledEvent\ndata: {\"report\":{},\"graph_mutations\":0}\n\n"
  "id: 9\nevent: ResponseCompleteEvent\ndata: {\"text\":\"one two three four five six seven\",\"duration_ms\":";

static SymfonicServer *
paced_server (void)
{
  g_autofree char *base_dir = g_test_build_filename (G_TEST_DIST, "integration", NULL);
  g_autofree char *pipeline_text = symfonic_test_replay_pipeline ("transcripts", "paced", TIME_SCALE);

  return symfonic_test_server_new (pipeline_text, base_dir, 1);
}

static GSocket *
connect_to (SymfonicServer *server)
{
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) address = g_inet_socket_address_new (loopback, symfonic_server_get_port (server));
  g_autoptr(GSocket) socket = NULL;
  g_autoptr(GError) error = NULL;

  socket = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &error);
  g_assert_no_error (error);
  g_socket_set_timeout (socket, SYMFONIC_TEST_WAIT_MS / 1000);
  g_socket_connect (socket, address, NULL, &error);
  g_assert_no_error (error);

  return g_steal_pointer (&socket);
}

static char *
request_text (const char *version,
              const char *extra_header)
{
  static const char body[] = "{\"query\":\"count to seven\"}";

  return g_strdup_printf ("POST " SYMFONIC_TEST_TYPED_PATH " %s\r\n"
                          "Host: 127.0.0.1\r\n"
                          "Content-Type: application/json\r\n"
                          "Content-Length: %zu\r\n"
                          "%s"
                          "\r\n%s", version, strlen (body), extra_header, body);
}

static void
send_text (GSocket    *socket,
           const char *text)
{
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (g_socket_send (socket, text, strlen (text), NULL, &error), ==, strlen (text));
  g_assert_no_error (error);
}

static void
send_request (GSocket    *socket,
              const char *version)
{
  g_autofree char *request = request_text (version, "");

  send_text (socket, request);
}

/* Reads until @raw holds @length bytes; FALSE at end of file. */
static gboolean
read_at_least (GSocket *socket,
               GString *raw,
               gsize    length)
{
  while (raw->len < length)
    {
      g_autoptr(GError) error = NULL;
      char buffer[4096];
      gssize n = g_socket_receive (socket, buffer, sizeof buffer, NULL, &error);

      g_assert_no_error (error);
      if (n == 0)
        return FALSE;
      g_string_append_len (raw, buffer, n);
    }

  return TRUE;
}

/* Reads one response head; returns it, and leaves in @raw what followed. */
static char *
read_head (GSocket *socket,
           GString *raw)
{
  const char *end;
  char *head;

  while ((end = g_strstr_len (raw->str, raw->len, "\r\n\r\n")) == NULL)
    g_assert_true (read_at_least (socket, raw, raw->len + 1));

  head = g_strndup (raw->str, end + 4 - raw->str);
  g_string_erase (raw, 0, end + 4 - raw->str);

  return head;
}

/* The terminal's duration varies: everything else is literal. */
static void
assert_paced_body (const char *body)
{
  const char *rest;

  g_assert_true (g_str_has_prefix (body, paced_frames));
  rest = body + strlen (paced_frames);
  g_assert_cmpuint (strspn (rest, "0123456789"), >, 0);
  g_assert_cmpstr (rest + strspn (rest, "0123456789"), ==, ",\"finish_reason\":\"stop\"}\n\n");
}

/* Reads one chunked body exactly up to its last chunk, checking every
 * chunk's framing and that each holds whole frames. Returns the body. */
static char *
read_chunked_body (GSocket *socket,
                   GString *raw,
                   guint   *n_chunks)
{
  GString *body = g_string_new (NULL);

  *n_chunks = 0;
  for (;;)
    {
      const char *line_end;
      char *size_end;
      guint64 size;
      gsize line;

      while ((line_end = g_strstr_len (raw->str, raw->len, "\r\n")) == NULL)
        g_assert_true (read_at_least (socket, raw, raw->len + 1));
      line = line_end + 2 - raw->str;
      size = g_ascii_strtoull (raw->str, &size_end, 16);
      /* a bare hexadecimal size, no extension */
      g_assert_true (size_end == line_end);
      g_assert_true (size_end > raw->str);
      g_assert_true (read_at_least (socket, raw, line + size + 2));
      g_assert_cmpmem (raw->str + line + size, 2, "\r\n", 2);
      if (size == 0)
        {
          g_string_erase (raw, 0, line + 2);
          break;
        }
      g_assert_cmpmem (raw->str + line + size - 2, 2, "\n\n", 2);
      g_string_append_len (body, raw->str + line, size);
      g_string_erase (raw, 0, line + size + 2);
      (*n_chunks)++;
    }

  return g_string_free (body, FALSE);
}

/* Reads one whole HTTP/1.1 event stream, head and chunked body. */
static void
read_paced_stream (GSocket *socket,
                   GString *raw)
{
  g_autofree char *head = read_head (socket, raw);
  g_autofree char *body = NULL;
  guint n_chunks;

  g_assert_true (g_str_has_prefix (head, "HTTP/1.1 200 OK\r\n"));
  g_assert_nonnull (strstr (head, "\r\nTransfer-Encoding: chunked\r\n"));
  g_assert_nonnull (strstr (head, "\r\nContent-Type: text/event-stream\r\n"));
  g_assert_nonnull (strstr (head, "\r\nDate: "));
  g_assert_null (strstr (head, "Content-Length"));
  g_assert_null (strstr (head, "Connection: close"));

  body = read_chunked_body (socket, raw, &n_chunks);
  assert_paced_body (body);
  /* the deltas are paced: they leave one chunk each, not all at once */
  g_assert_cmpuint (n_chunks, >=, 7);
}

static void
test_framing_keepalive (void)
{
  g_autoptr(SymfonicServer) server = paced_server ();
  g_autoptr(GSocket) socket = connect_to (server);
  g_autoptr(GString) raw = g_string_new (NULL);

  for (guint round = 0; round < 2; round++)
    {
      send_request (socket, "HTTP/1.1");
      read_paced_stream (socket, raw);
      /* nothing follows the last chunk: the next response starts clean */
      g_assert_cmpuint (raw->len, ==, 0);
    }

  symfonic_server_stop (server);
}

/* Both requests arrive at once, so the gateway reads the second with the
 * first: it is answered once the first stream ended. */
static void
test_framing_pipelined (void)
{
  g_autoptr(SymfonicServer) server = paced_server ();
  g_autoptr(GSocket) socket = connect_to (server);
  g_autoptr(GString) raw = g_string_new (NULL);
  g_autofree char *request = request_text ("HTTP/1.1", "");
  g_autofree char *both = g_strconcat (request, request, NULL);

  send_text (socket, both);
  read_paced_stream (socket, raw);
  read_paced_stream (socket, raw);
  g_assert_cmpuint (raw->len, ==, 0);

  symfonic_server_stop (server);
}

static void
test_framing_client_closes (void)
{
  g_autoptr(SymfonicServer) server = paced_server ();
  g_autoptr(GSocket) socket = connect_to (server);
  g_autoptr(GString) raw = g_string_new (NULL);
  g_autofree char *request = request_text ("HTTP/1.1", "Connection: close\r\n");

  send_text (socket, request);
  read_paced_stream (socket, raw);
  /* the connection ends right after the last chunk */
  g_assert_false (read_at_least (socket, raw, 1));
  g_assert_cmpuint (raw->len, ==, 0);

  symfonic_server_stop (server);
}

static void
test_framing_http_1_0 (void)
{
  g_autoptr(SymfonicServer) server = paced_server ();
  g_autoptr(GSocket) socket = connect_to (server);
  g_autoptr(GString) raw = g_string_new (NULL);
  g_autofree char *head = NULL;

  send_request (socket, "HTTP/1.0");
  head = read_head (socket, raw);
  g_assert_true (g_str_has_prefix (head, "HTTP/1.0 200 OK\r\n"));
  g_assert_null (strstr (head, "Transfer-Encoding"));
  g_assert_nonnull (strstr (head, "\r\nConnection: close\r\n"));

  /* the body ends with the connection */
  g_assert_false (read_at_least (socket, raw, G_MAXSIZE));
  assert_paced_body (raw->str);

  symfonic_server_stop (server);
}

int
main (int   argc,
      char *argv[])
{
  symfonic_test_init (&argc, &argv);

  g_test_add_func ("/stream-framing/keepalive", test_framing_keepalive);
  g_test_add_func ("/stream-framing/pipelined", test_framing_pipelined);
  g_test_add_func ("/stream-framing/client-closes", test_framing_client_closes);
  g_test_add_func ("/stream-framing/http-1.0", test_framing_http_1_0);

  return g_test_run ();
}
