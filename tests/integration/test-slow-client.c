/* test-slow-client.c: a client that reads too slowly holds its upstream
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * DESIGN 8: a connection queues at most 256 frames. Well before that the
 * source is told to wait, and the runtime source stops reading its
 * upstream until the client caught up: nothing is shed, every delta
 * arrives in order and the terminal carries the whole text. (Had any delta
 * been shed, a `: shed N` comment would come before the next frame; the
 * test checks those too.)
 *
 * The upstream is a real runtime over HTTP. The client is a plain socket
 * with a small receive buffer and small segments (so the kernel cannot
 * absorb the stream for it) that reads nothing while the upstream sends
 * most of the answer, then reads everything, while the upstream sends the
 * last deltas. Each delta says its own number, so the test knows which
 * ones are missing and checks every comment against the gap it stands for.
 *
 * A source that ignores back-pressure (the test-flood plugin) cannot make
 * the gateway hold more than the declared bound either: its deltas are
 * shed with their marks, and frames that may not be shed end the stream
 * with its one error frame. A client that takes nothing for the route's
 * stall-timeout ends its stream the same way, also when its whole answer
 * was queued already: what it reads ends at a frame boundary with that
 * error frame. A client that reads at 30 KB/s, slower than the stream but
 * steadily, is never taken for stalled.
 */
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "symfonic-test-support.h"
#include "symfonic-test-upstream.h"

/* N_DELTAS at full speed, then LATE_DELTAS after a pause that outlasts the
 * client's stall. The kernel holds some 50 KB for the client and the
 * gateway 256 frames at most: about 600 deltas, well under N_DELTAS, so
 * without back-pressure most of them would be shed. */
#define N_DELTAS 2000
#define DELTA_PADDING 100
#define LATE_DELTAS 3
#define PAUSE_MS 5000
#define RECEIVE_BUFFER 4096
#define SEGMENT_SIZE 536
/* ample for the first deltas to be produced, on a loaded machine too */
#define STALL_US (3 * G_USEC_PER_SEC)
/* the declared bound of DESIGN 8 */
#define SYMFONIC_TEST_SSE_MAX_FRAMES 256

static char *
delta_text (guint i)
{
  g_autofree char *padding = g_strnfill (DELTA_PADDING, '.');

  return g_strdup_printf ("d%05u%s ", i, padding);
}

/* Deltas so large that a whole answer of them fits the frames the gateway
 * holds for a client, and only part of it the kernel's buffers. */
#define LARGE_DELTA_PADDING 3000
#define LARGE_DELTAS 60

static char *
large_delta_text (guint i)
{
  g_autofree char *padding = g_strnfill (LARGE_DELTA_PADDING, '.');

  return g_strdup_printf ("d%05u%s ", i, padding);
}

typedef char *(*DeltaText) (guint i);

/* The upstream's answer: @n_deltas deltas and LATE_DELTAS more, each
 * @text_of its number; @pause_at is where the late deltas start. */
static GBytes *
runtime_body (GString   *text,
              guint      n_deltas,
              DeltaText  text_of,
              gsize     *pause_at)
{
  GString *body = g_string_new (NULL);

  for (guint i = 0; i < n_deltas + LATE_DELTAS; i++)
    {
      g_autofree char *delta = text_of (i);

      if (i == n_deltas)
        *pause_at = body->len;
      g_string_append (text, delta);
      g_string_append_printf (body, "event: TextDeltaEvent\ndata: {\"text\":\"%s\"}\n\n", delta);
    }
  /* its text stands in only when no delta streamed */
  g_string_append (body, "event: ResponseCompleteEvent\ndata: {\"text\":\"\",\"duration_ms\":1}\n\n");

  return g_string_free_to_bytes (body);
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
  /* set before connecting, which also turns the kernel's autotuning off;
   * small segments keep the server's send buffer small too (loopback's
   * 64 KiB segments let it grow to megabytes) */
  g_socket_set_option (socket, SOL_SOCKET, SO_RCVBUF, RECEIVE_BUFFER, &error);
  g_assert_no_error (error);
  g_socket_set_option (socket, IPPROTO_TCP, TCP_MAXSEG, SEGMENT_SIZE, &error);
  g_assert_no_error (error);
  g_socket_set_timeout (socket, SYMFONIC_TEST_WAIT_MS / 1000);
  g_socket_connect (socket, address, NULL, &error);
  g_assert_no_error (error);

  return g_steal_pointer (&socket);
}

/* The line at *@p, which moves past it. */
static char *
take_line (const char **p,
           const char  *end)
{
  const char *newline = memchr (*p, '\n', end - *p);
  const char *line_end = newline != NULL ? newline : end;
  char *line = g_strndup (*p, line_end - *p);

  *p = newline != NULL ? newline + 1 : end;

  return line;
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

#define FLOOD_EVENTS 3000

static char *
request_text (void)
{
  static const char body[] = "{\"query\":\"hi\"}";

  return g_strdup_printf ("POST " SYMFONIC_TEST_TYPED_PATH " HTTP/1.1\r\n"
                          "Host: 127.0.0.1\r\n"
                          "Connection: close\r\n"
                          "Content-Type: application/json\r\n"
                          "Content-Length: %zu\r\n"
                          "\r\n%s", strlen (body), body);
}

/* Sends the request, reads nothing until @ready says so (or for
 * STALL_US when it is NULL), then reads the response until the server
 * closes the connection. */
static GString *
stall_then_read_raw (guint16    port,
                     gboolean (*ready) (gpointer data),
                     gpointer   ready_data)
{
  g_autoptr(GSocket) socket = connect_slow (port);
  g_autofree char *request = request_text ();
  GString *raw = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  char buffer[65536];
  gssize n;

  g_socket_send (socket, request, strlen (request), NULL, &error);
  g_assert_no_error (error);
  if (ready == NULL)
    g_usleep (STALL_US);
  else
    g_assert_true (symfonic_test_iterate_until (NULL, ready, ready_data, SYMFONIC_TEST_WAIT_MS));
  while ((n = g_socket_receive (socket, buffer, sizeof buffer, NULL, &error)) > 0)
    g_string_append_len (raw, buffer, n);
  g_assert_no_error (error);

  return raw;
}

/* As stall_then_read_raw(), for a whole chunked response: returns its
 * frames and, in @sse, its event stream. */
static GPtrArray *
stall_then_read (guint16    port,
                 gboolean (*ready) (gpointer data),
                 gpointer   ready_data,
                 GString  **sse)
{
  g_autoptr(GString) raw = stall_then_read_raw (port, ready, ready_data);
  g_autoptr(SymfonicTestSseParser) parser = symfonic_test_sse_parser_new ();
  GPtrArray *frames = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_test_frame_free);

  g_assert_true (g_str_has_prefix (raw->str, "HTTP/1.1 200 "));
  *sse = dechunk (raw->str, raw->len);
  symfonic_test_sse_parser_feed (parser, (*sse)->str, (*sse)->len, frames);
  g_assert_true (symfonic_test_sse_parser_is_between_frames (parser));

  return frames;
}

/* Checks that the events named @event carry `data: @prefix TEXT @suffix`,
 * TEXT being @text_of their number, in order, and that each `: shed N` comment sits on a frame
 * boundary, before a frame, and counts exactly the deltas missing there.
 * Returns how many were delivered; @shed gets the total of the marks. */
static guint
check_numbered (GString    *sse,
                const char *event,
                const char *prefix,
                DeltaText   text_of,
                const char *suffix,
                guint64    *shed,
                guint      *marks)
{
  g_autofree char *event_line = g_strconcat ("event: ", event, NULL);
  gboolean after_blank = FALSE;
  guint delivered = 0;
  guint next = 0;

  *shed = 0;
  *marks = 0;
  for (const char *p = sse->str, *end = sse->str + sse->len; p < end;)
    {
      g_autofree char *line = take_line (&p, end);

      if (line[0] == ':')
        {
          guint64 gap;

          g_assert_true (g_str_has_prefix (line, ": shed "));
          gap = g_ascii_strtoull (line + strlen (": shed "), NULL, 10);
          g_assert_cmpuint (gap, >, 0);
          g_assert_true (after_blank);
          /* the mark precedes a whole frame, which starts with its id */
          g_assert_true (g_str_has_prefix (p, "id: "));
          (*marks)++;
          *shed += gap;
          next += gap;
        }
      else if (g_str_equal (line, event_line))
        {
          g_autofree char *data = take_line (&p, end);
          g_autofree char *text = text_of (next);
          g_autofree char *expected = g_strconcat ("data: ", prefix, text, suffix, NULL);

          g_assert_cmpstr (data, ==, expected);
          next++;
          delivered++;
        }
      after_blank = line[0] == '\0';
    }
  g_assert_cmpuint (next, ==, delivered + *shed);

  return delivered;
}

static const char *
frame_event (GPtrArray *frames,
             guint      from_end)
{
  return ((SymfonicTestFrame *) g_ptr_array_index (frames, frames->len - from_end))->event;
}

static JsonObject *
frame_object (GPtrArray *frames,
              guint      from_end,
              JsonNode **node)
{
  *node = symfonic_test_json_parse (((SymfonicTestFrame *) g_ptr_array_index (frames, frames->len - from_end))->data);

  return json_node_get_object (*node);
}

static SymfonicServer *
flood_server (gboolean droppable)
{
  static gsize loaded = 0;
  g_autofree char *pipeline_text = g_strdup_printf ("[gateway]\n"
                                                    "listen=127.0.0.1:8080\n"
                                                    "workers=1\n"
                                                    "\n"
                                                    "[route:typed]\n"
                                                    "path=" SYMFONIC_TEST_TYPED_PATH "\n"
                                                    "kind=typed\n"
                                                    "source=flood\n"
                                                    "\n"
                                                    "[source:flood]\n"
                                                    "type=test-flood\n"
                                                    "events=%u\n"
                                                    "per-tick=20\n"
                                                    "interval-ms=1\n"
                                                    "droppable=%s\n",
                                                    FLOOD_EVENTS, droppable ? "true" : "false");

  if (g_once_init_enter (&loaded))
    {
      g_autoptr(GError) error = NULL;

      symfonic_registry_load_directory (symfonic_registry_get_default (), TEST_PLUGIN_FLOOD_DIR, &error);
      g_assert_no_error (error);
      g_once_init_leave (&loaded, 1);
    }

  return symfonic_test_server_new (pipeline_text, g_get_tmp_dir (), 1);
}

static char *
flood_delta (guint i)
{
  return g_strdup_printf ("f%05u ", i);
}

static char *
flood_tool_call (guint i)
{
  return g_strdup_printf ("t%05u", i);
}

/* Deltas a source pushes past the bound regardless are shed, each gap
 * marked; the terminal still carries every delta's text. */
static void
test_slow_client_sheds_from_uncooperative_source (void)
{
  g_autoptr(SymfonicServer) server = flood_server (TRUE);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autofree char *base_url = g_strdup_printf ("http://127.0.0.1:%u", symfonic_server_get_port (server));
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GString) sse = NULL;
  g_autoptr(GPtrArray) frames = NULL;
  g_autoptr(JsonNode) terminal = NULL;
  double shed_before, shed_after;
  guint64 shed;
  guint marks, delivered;

  shed_before = symfonic_test_fetch_metric (session, base_url, "symfonic_frames_shed_total");
  frames = stall_then_read (symfonic_server_get_port (server), NULL, NULL, &sse);
  delivered = check_numbered (sse, "TextDeltaEvent", "{\"text\":\"", flood_delta, "\"}", &shed, &marks);
  g_test_message ("%u deltas delivered, %" G_GUINT64_FORMAT " shed in %u gaps", delivered, shed, marks);

  g_assert_cmpuint (marks, >, 0);
  g_assert_cmpuint (delivered + shed, ==, FLOOD_EVENTS);
  /* what was held at once never passed the declared frame bound */
  g_assert_cmpuint (delivered, >=, SYMFONIC_TEST_SSE_MAX_FRAMES / 2);

  for (guint i = 0; i < FLOOD_EVENTS; i++)
    {
      g_autofree char *delta = flood_delta (i);

      g_string_append (text, delta);
    }
  g_assert_cmpuint (frames->len, ==, delivered + 2);
  g_assert_cmpstr (frame_event (frames, 2), ==, "ConsolidationScheduledEvent");
  g_assert_cmpstr (frame_event (frames, 1), ==, "ResponseCompleteEvent");
  g_assert_cmpstr (json_object_get_string_member (frame_object (frames, 1, &terminal), "text"), ==, text->str);

  shed_after = symfonic_test_fetch_metric (session, base_url, "symfonic_frames_shed_total");
  g_assert_cmpfloat (shed_after - shed_before, ==, (double) shed);

  symfonic_server_stop (server);
}

/* Frames that may not be shed do not queue past the bound: the stream
 * ends with its one error frame instead, after the frames that fit. */
static void
test_slow_client_overflow_ends_stream (void)
{
  g_autoptr(SymfonicServer) server = flood_server (FALSE);
  g_autoptr(GString) sse = NULL;
  g_autoptr(GPtrArray) frames = NULL;
  g_autoptr(JsonNode) terminal = NULL;
  JsonObject *error;
  guint64 shed;
  guint marks, delivered;

  frames = stall_then_read (symfonic_server_get_port (server), NULL, NULL, &sse);
  delivered = check_numbered (sse, "ToolCallStartEvent", "{\"tool_name\":\"flood\",\"tool_call_id\":\"",
                              flood_tool_call, "\"}", &shed, &marks);
  g_test_message ("%u tool calls delivered before the stream ended", delivered);

  g_assert_cmpuint (marks, ==, 0);
  g_assert_cmpuint (delivered, >=, SYMFONIC_TEST_SSE_MAX_FRAMES);
  g_assert_cmpuint (delivered, <, FLOOD_EVENTS);
  g_assert_cmpuint (frames->len, ==, delivered + 1);
  g_assert_cmpstr (frame_event (frames, 1), ==, "error");
  error = frame_object (frames, 1, &terminal);
  g_assert_cmpint (json_object_get_int_member (error, "status"), ==, 408);
  g_assert_cmpstr (json_object_get_string_member (error, "code"), ==, "slow_client");
  g_assert_cmpstr (json_object_get_string_member (error, "detail"), ==,
                   "The client fell further behind than the stream may hold");

  symfonic_server_stop (server);
}

typedef struct
{
  SoupSession *session;
  const char  *base_url;
} MetricWait;

static gboolean
stream_failed (gpointer data)
{
  MetricWait *wait = data;

  return symfonic_test_fetch_metric (wait->session, wait->base_url, "symfonic_streams_failed_total") >= 1;
}

/* A route with a one-second stall-timeout in front of a runtime whose
 * answer of @n_deltas (and the late) deltas, @text, is far larger than
 * what the kernel holds for a client; @pause_ms before the late ones. */
static SymfonicServer *
stall_server (SymfonicTestUpstream *upstream,
              guint                 n_deltas,
              DeltaText             text_of,
              guint                 pause_ms,
              GString              *text,
              GBytes              **answer)
{
  g_autofree char *upstream_url = symfonic_test_upstream_dup_url (upstream, "/run");
  g_autofree char *pipeline_text = g_strdup_printf ("[gateway]\n"
                                                    "listen=127.0.0.1:8080\n"
                                                    "workers=1\n"
                                                    "\n"
                                                    "[route:typed]\n"
                                                    "path=" SYMFONIC_TEST_TYPED_PATH "\n"
                                                    "kind=typed\n"
                                                    "source=up\n"
                                                    "stall-timeout=1\n"
                                                    "\n"
                                                    "[source:up]\n"
                                                    "type=runtime\n"
                                                    "url=%s\n", upstream_url);
  SymfonicTestScenario scenario = { .pause_ms = pause_ms };

  *answer = runtime_body (text, n_deltas, text_of, &scenario.pause_at);
  scenario.body = *answer;
  g_free (symfonic_test_upstream_add (upstream, "/run", &scenario));

  return symfonic_test_server_new (pipeline_text, g_get_tmp_dir (), 1);
}

/* A client that takes nothing for the stall-timeout ends its stream with
 * the one error frame, which it still gets when it reads on in the
 * grace; the upstream is let go. */
static void
test_slow_client_stall_timeout (void)
{
  g_autoptr(SymfonicTestUpstream) upstream = symfonic_test_upstream_new ();
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GBytes) answer = NULL;
  g_autoptr(SymfonicServer) server = stall_server (upstream, N_DELTAS, delta_text, PAUSE_MS, text, &answer);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autofree char *base_url = g_strdup_printf ("http://127.0.0.1:%u", symfonic_server_get_port (server));
  MetricWait wait = { session, base_url };
  g_autoptr(GString) sse = NULL;
  g_autoptr(GPtrArray) frames = NULL;
  g_autoptr(JsonNode) terminal = NULL;
  JsonObject *error;
  gint64 start_us = g_get_monotonic_time ();
  guint64 shed;
  guint marks, delivered;

  frames = stall_then_read (symfonic_server_get_port (server), stream_failed, &wait, &sse);
  g_test_message ("the stall ended the stream after %" G_GINT64_FORMAT " ms",
                  (g_get_monotonic_time () - start_us) / 1000);
  delivered = check_numbered (sse, "TextDeltaEvent", "{\"text\":\"", delta_text, "\"}", &shed, &marks);

  g_assert_cmpuint (marks, ==, 0);
  g_assert_cmpuint (delivered, >, 0);
  g_assert_cmpuint (delivered, <, N_DELTAS);
  g_assert_cmpuint (frames->len, ==, delivered + 1);
  g_assert_cmpstr (frame_event (frames, 1), ==, "error");
  error = frame_object (frames, 1, &terminal);
  g_assert_cmpint (json_object_get_int_member (error, "status"), ==, 408);
  g_assert_cmpstr (json_object_get_string_member (error, "code"), ==, "slow_client");
  g_assert_cmpstr (json_object_get_string_member (error, "detail"), ==, "The client read nothing for 1 seconds");
  g_assert_cmpfloat (symfonic_test_fetch_metric (session, base_url, "symfonic_streams_completed_total"), ==, 0);

  symfonic_server_stop (server);
}

/* A client that reads at STEADY_RATE bytes a second, in small reads,
 * through a small receive buffer: it takes the stream far slower than the
 * gateway produces it, but never stops. */
#define STEADY_DELTAS 1500
#define STEADY_READ 1536
#define STEADY_RATE (30 * 1024)

static GString *
read_steadily (GSocket *socket)
{
  GString *raw = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  char buffer[STEADY_READ];
  gssize n;

  while ((n = g_socket_receive (socket, buffer, sizeof buffer, NULL, &error)) > 0)
    {
      g_string_append_len (raw, buffer, n);
      g_usleep ((gulong) n * G_USEC_PER_SEC / STEADY_RATE);
    }
  g_assert_no_error (error);

  return raw;
}

/* A client that reads slowly but steadily is never taken for stalled,
 * however long its answer and however full the buffers between: it gets
 * every delta and the terminal. */
static void
test_slow_client_steady_reader (void)
{
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(SymfonicTestUpstream) upstream = symfonic_test_upstream_new ();
  g_autoptr(GBytes) answer = NULL;
  g_autoptr(SymfonicServer) server = stall_server (upstream, STEADY_DELTAS, delta_text, 0, text, &answer);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autofree char *base_url = g_strdup_printf ("http://127.0.0.1:%u", symfonic_server_get_port (server));
  g_autoptr(GSocket) socket = connect_slow (symfonic_server_get_port (server));
  g_autofree char *request = request_text ();
  g_autoptr(SymfonicTestSseParser) parser = symfonic_test_sse_parser_new ();
  g_autoptr(GPtrArray) frames = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_test_frame_free);
  g_autoptr(GString) raw = NULL;
  g_autoptr(GString) sse = NULL;
  g_autoptr(JsonNode) terminal = NULL;
  g_autoptr(GError) error = NULL;
  gint64 start_us = g_get_monotonic_time ();
  guint64 shed;
  guint marks, delivered;

  g_socket_send (socket, request, strlen (request), NULL, &error);
  g_assert_no_error (error);
  raw = read_steadily (socket);
  g_test_message ("%" G_GSIZE_FORMAT " bytes read in %" G_GINT64_FORMAT " ms", raw->len,
                  (g_get_monotonic_time () - start_us) / 1000);

  g_assert_true (g_str_has_prefix (raw->str, "HTTP/1.1 200 "));
  sse = dechunk (raw->str, raw->len);
  symfonic_test_sse_parser_feed (parser, sse->str, sse->len, frames);
  g_assert_true (symfonic_test_sse_parser_is_between_frames (parser));
  delivered = check_numbered (sse, "TextDeltaEvent", "{\"text\":\"", delta_text, "\"}", &shed, &marks);
  g_test_message ("%u deltas delivered of %u, %u frames", delivered, STEADY_DELTAS + LATE_DELTAS, frames->len);

  g_assert_cmpuint (marks, ==, 0);
  g_assert_cmpuint (delivered, ==, STEADY_DELTAS + LATE_DELTAS);
  g_assert_cmpuint (frames->len, ==, STEADY_DELTAS + LATE_DELTAS + 2);
  g_assert_cmpstr (frame_event (frames, 1), ==, "ResponseCompleteEvent");
  g_assert_cmpstr (json_object_get_string_member (frame_object (frames, 1, &terminal), "text"), ==, text->str);
  g_assert_cmpfloat (symfonic_test_fetch_metric (session, base_url, "symfonic_streams_completed_total"), ==, 1);
  g_assert_cmpfloat (symfonic_test_fetch_metric (session, base_url, "symfonic_streams_failed_total"), ==, 0);

  symfonic_server_stop (server);
}

static gboolean
slow_client_ended (gpointer data)
{
  MetricWait *wait = data;

  return symfonic_test_fetch_metric (wait->session, wait->base_url, "symfonic_streams_slow_client_total") >= 1;
}

/* A client that stops reading after its whole answer, terminal and all,
 * was queued for it is ended like one that stops earlier: the frames it
 * did not start to take go, the error frame takes the place of the
 * success terminal, and what it reads when it reads on, however slowly,
 * ends with that one error frame at a frame boundary. */
static void
test_slow_client_stalls_after_terminal (void)
{
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(SymfonicTestUpstream) upstream = symfonic_test_upstream_new ();
  g_autoptr(GBytes) answer = NULL;
  g_autoptr(SymfonicServer) server = stall_server (upstream, LARGE_DELTAS, large_delta_text, 0, text, &answer);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autofree char *base_url = g_strdup_printf ("http://127.0.0.1:%u", symfonic_server_get_port (server));
  MetricWait wait = { session, base_url };
  g_autoptr(GSocket) socket = connect_slow (symfonic_server_get_port (server));
  g_autofree char *request = request_text ();
  g_autoptr(SymfonicTestSseParser) parser = symfonic_test_sse_parser_new ();
  g_autoptr(GPtrArray) frames = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_test_frame_free);
  g_autoptr(GString) raw = NULL;
  g_autoptr(GString) sse = NULL;
  g_autoptr(JsonNode) terminal = NULL;
  g_autoptr(GError) error = NULL;
  JsonObject *payload;
  guint64 shed;
  guint marks, delivered;

  g_socket_send (socket, request, strlen (request), NULL, &error);
  g_assert_no_error (error);
  /* reads nothing until the stream was ended, or for long if it never is */
  symfonic_test_iterate_until (NULL, slow_client_ended, &wait, SYMFONIC_TEST_WAIT_MS);
  raw = read_steadily (socket);
  g_test_message ("%" G_GSIZE_FORMAT " bytes read after the stall", raw->len);

  g_assert_true (g_str_has_prefix (raw->str, "HTTP/1.1 200 "));
  sse = dechunk (raw->str, raw->len);
  symfonic_test_sse_parser_feed (parser, sse->str, sse->len, frames);
  g_assert_true (symfonic_test_sse_parser_is_between_frames (parser));
  delivered = check_numbered (sse, "TextDeltaEvent", "{\"text\":\"", large_delta_text, "\"}", &shed, &marks);
  g_test_message ("%u deltas delivered of %u, %u frames", delivered, LARGE_DELTAS + LATE_DELTAS, frames->len);

  g_assert_cmpuint (marks, ==, 0);
  g_assert_cmpuint (delivered, >, 0);
  g_assert_cmpuint (delivered, <, LARGE_DELTAS + LATE_DELTAS);
  g_assert_cmpuint (frames->len, ==, delivered + 1);
  g_assert_cmpstr (frame_event (frames, 1), ==, "error");
  payload = frame_object (frames, 1, &terminal);
  g_assert_cmpint (json_object_get_int_member (payload, "status"), ==, 408);
  g_assert_cmpstr (json_object_get_string_member (payload, "code"), ==, "slow_client");
  g_assert_cmpstr (json_object_get_string_member (payload, "detail"), ==, "The client read nothing for 1 seconds");
  g_assert_cmpfloat (symfonic_test_fetch_metric (session, base_url, "symfonic_streams_slow_client_total"), ==, 1);
  g_assert_cmpfloat (symfonic_test_fetch_metric (session, base_url, "symfonic_streams_failed_total"), ==, 1);
  g_assert_cmpfloat (symfonic_test_fetch_metric (session, base_url, "symfonic_streams_completed_total"), ==, 0);

  symfonic_server_stop (server);
}

static void
test_slow_client_holds_upstream (void)
{
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(SymfonicTestUpstream) upstream = symfonic_test_upstream_new ();
  g_autofree char *upstream_url = symfonic_test_upstream_dup_url (upstream, "/run");
  g_autofree char *pipeline_text = g_strdup_printf ("[gateway]\n"
                                                    "listen=127.0.0.1:8080\n"
                                                    "workers=1\n"
                                                    "\n"
                                                    "[route:typed]\n"
                                                    "path=" SYMFONIC_TEST_TYPED_PATH "\n"
                                                    "kind=typed\n"
                                                    "source=up\n"
                                                    "\n"
                                                    "[source:up]\n"
                                                    "type=runtime\n"
                                                    "url=%s\n", upstream_url);
  g_autoptr(SymfonicServer) server = symfonic_test_server_new (pipeline_text, g_get_tmp_dir (), 1);
  SymfonicTestScenario scenario = { .pause_ms = PAUSE_MS };
  g_autoptr(GBytes) answer = runtime_body (text, N_DELTAS, delta_text, &scenario.pause_at);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autofree char *base_url = g_strdup_printf ("http://127.0.0.1:%u", symfonic_server_get_port (server));
  g_autoptr(GString) sse = NULL;
  g_autoptr(GPtrArray) frames = NULL;
  g_autoptr(JsonNode) terminal = NULL;
  double shed_before, shed_after;
  guint64 shed;
  guint marks, delivered;

  scenario.body = answer;
  g_free (symfonic_test_upstream_add (upstream, "/run", &scenario));
  shed_before = symfonic_test_fetch_metric (session, base_url, "symfonic_frames_shed_total");

  frames = stall_then_read (symfonic_server_get_port (server), NULL, NULL, &sse);
  delivered = check_numbered (sse, "TextDeltaEvent", "{\"text\":\"", delta_text, "\"}", &shed, &marks);
  g_test_message ("%u deltas delivered, %" G_GUINT64_FORMAT " shed in %u gaps", delivered, shed, marks);
  g_assert_cmpuint (marks, ==, 0);
  g_assert_cmpuint (delivered, ==, N_DELTAS + LATE_DELTAS);

  /* the terminal carries the whole text */
  g_assert_cmpuint (frames->len, ==, delivered + 2);
  g_assert_cmpstr (frame_event (frames, 2), ==, "ConsolidationScheduledEvent");
  g_assert_cmpstr (frame_event (frames, 1), ==, "ResponseCompleteEvent");
  g_assert_cmpstr (json_object_get_string_member (frame_object (frames, 1, &terminal), "text"), ==, text->str);

  shed_after = symfonic_test_fetch_metric (session, base_url, "symfonic_frames_shed_total");
  g_assert_cmpfloat (shed_after, ==, shed_before);

  /* a terminal whose text is larger than the buffer a worker keeps for
   * decoding events: the worker lets that buffer go, and decodes the next
   * stream's events as before */
  {
    static const char next_answer[] = "event: TextDeltaEvent\ndata: {\"text\":\"after\"}\n\n"
                                      "event: ResponseCompleteEvent\ndata: {\"text\":\"after\",\"duration_ms\":1}\n\n";
    g_autofree char *large_text = g_strnfill (100 * 1024, 'x');
    g_autofree char *large_answer = g_strdup_printf ("event: ResponseCompleteEvent\n"
                                                     "data: {\"text\":\"%s\",\"duration_ms\":1}\n\n", large_text);
    SymfonicTestScenario large = { .body = g_bytes_new_static (large_answer, strlen (large_answer)) };
    SymfonicTestScenario next = { .body = g_bytes_new_static (next_answer, strlen (next_answer)) };
    g_autofree char *url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);
    g_autoptr(SymfonicTestResponse) first = NULL;
    g_autoptr(SymfonicTestResponse) second = NULL;

    symfonic_test_upstream_add_for_query (upstream, "/run", "large", &large);
    symfonic_test_upstream_add_for_query (upstream, "/run", "next", &next);
    first = symfonic_test_request (session, "POST", url, "application/json", "{\"query\":\"large\"}", NULL);
    g_assert_cmpuint (first->status, ==, 200);
    g_assert_nonnull (strstr (symfonic_test_response_get_text (first), large_text));

    second = symfonic_test_request (session, "POST", url, "application/json", "{\"query\":\"next\"}", NULL);
    g_assert_cmpuint (second->status, ==, 200);
    /* the duration is the gateway's own measure */
    g_assert_true (g_str_has_prefix (symfonic_test_response_get_text (second),
                                     "id: 1\nevent: TextDeltaEvent\ndata: {\"text\":\"after\"}\n\n"
                                     "id: 2\nevent: ConsolidationScheduledEvent\n"
                                     "data: {\"report\":{},\"graph_mutations\":0}\n\n"
                                     "id: 3\nevent: ResponseCompleteEvent\ndata: {\"text\":\"after\",\"duration_ms\":"));
    g_assert_true (g_str_has_suffix (symfonic_test_response_get_text (second), "}\n\n"));
    g_bytes_unref (large.body);
    g_bytes_unref (next.body);
  }

  symfonic_server_stop (server);
}

int
main (int   argc,
      char *argv[])
{
  symfonic_test_init (&argc, &argv);

  g_test_add_func ("/sse/slow-client/holds-upstream", test_slow_client_holds_upstream);
  g_test_add_func ("/sse/slow-client/sheds-from-uncooperative-source", test_slow_client_sheds_from_uncooperative_source);
  g_test_add_func ("/sse/slow-client/overflow-ends-stream", test_slow_client_overflow_ends_stream);
  g_test_add_func ("/sse/slow-client/stall-timeout", test_slow_client_stall_timeout);
  g_test_add_func ("/sse/slow-client/steady-reader", test_slow_client_steady_reader);
  g_test_add_func ("/sse/slow-client/stalls-after-terminal", test_slow_client_stalls_after_terminal);

  return g_test_run ();
}
