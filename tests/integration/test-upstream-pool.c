/* test-upstream-pool.c: how the gateway talks HTTP/1.1 to an upstream
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The runtime source rides kept-alive connections: sequential and
 * concurrent streams to one upstream reuse them instead of opening one
 * per request, and a kept connection the upstream closed is replaced
 * without the client noticing. A response reads the same whatever its
 * framing (Content-Length, chunked split anywhere, or closed), and a
 * hostile one ends its stream with the gateway's own fixed text. A paused
 * stream stops reading, so the upstream's writes block.
 *
 * A real gateway runs in-process against real upstreams over TCP: the
 * support library's SoupServer, and a raw server that writes exact bytes.
 */
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "symfonic-test-support.h"
#include "symfonic-test-upstream.h"
#include "symfonic-test-raw-upstream.h"

#define BODY "{\"query\":\"hello\"}"
#define TURN \
  "event: TextDeltaEvent\ndata: {\"text\":\"Hel\"}\n\n" \
  "event: TextDeltaEvent\ndata: {\"text\":\"lo\"}\n\n" \
  "event: ResponseCompleteEvent\ndata: {\"text\":\"Hello\",\"duration_ms\":3}\n\n"
#define BROKEN_TEXT "{\"detail\":\"Internal server error\",\"status\":502,\"code\":\"upstream_error\"}"
#define SEQUENTIAL 200
#define ROUNDS 50
#define CONCURRENT 4

static SymfonicServer *
gateway_new_with (const char *url,
                  const char *extra_source_lines)
{
  g_autofree char *text = NULL;
  g_autofree char *base_dir = g_test_build_filename (G_TEST_DIST, "integration", NULL);

  text = g_strdup_printf ("[gateway]\nlisten=127.0.0.1:8080\nworkers=1\n\n"
                          "[route:typed]\npath=" SYMFONIC_TEST_TYPED_PATH "\nkind=typed\nsource=up\n\n"
                          "[source:up]\ntype=runtime\nurl=%s\ntimeout=20\n%s\n",
                          url, extra_source_lines);

  return symfonic_test_server_new (text, base_dir, 1);
}

static SymfonicServer *
gateway_new (const char *url)
{
  return gateway_new_with (url, "");
}

static SymfonicTestStream *
post (SymfonicServer *server,
      SoupSession    *session)
{
  g_autofree char *url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);

  return symfonic_test_stream_post (session, url, BODY, NULL);
}

static SymfonicTestFrame *
frame_at (SymfonicTestStream *stream,
          guint               i)
{
  return g_ptr_array_index (stream->frames, i);
}

/* The frames of the turn: two deltas, the contract's consolidation
 * report, then the terminal. */
static void
assert_turn (SymfonicTestStream *stream)
{
  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, 200);
  g_assert_cmpuint (stream->frames->len, ==, 4);
  g_assert_cmpstr (frame_at (stream, 0)->event, ==, "TextDeltaEvent");
  g_assert_cmpstr (frame_at (stream, 0)->data, ==, "{\"text\":\"Hel\"}");
  g_assert_cmpstr (frame_at (stream, 1)->data, ==, "{\"text\":\"lo\"}");
  /* the typed contract's consolidation report, empty: the turn had none */
  g_assert_cmpstr (frame_at (stream, 2)->event, ==, "ConsolidationScheduledEvent");
  g_assert_cmpstr (frame_at (stream, 3)->event, ==, "ResponseCompleteEvent");
  /* the duration is the gateway's own measure */
  g_assert_true (g_str_has_prefix (frame_at (stream, 3)->data, "{\"text\":\"Hello\",\"duration_ms\":"));
}

static void
assert_one_turn (SymfonicServer *server,
                 SoupSession    *session)
{
  g_autoptr(SymfonicTestStream) stream = post (server, session);

  symfonic_test_stream_wait_done (stream);
  assert_turn (stream);
}

/* The one error frame a broken upstream answer ends in, after a 200. */
static void
assert_broken (SymfonicServer *server,
               SoupSession    *session)
{
  g_autoptr(SymfonicTestStream) stream = post (server, session);
  SymfonicTestFrame *last;

  symfonic_test_stream_wait_done (stream);
  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->frames->len, >=, 1);
  last = frame_at (stream, stream->frames->len - 1);
  g_assert_cmpstr (last->event, ==, "error");
  g_assert_cmpstr (last->data, ==, BROKEN_TEXT);
}

/* --- reuse ----------------------------------------------------------------- */

static void
test_sequential_reuse (void)
{
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autoptr(GBytes) body = g_bytes_new_static (TURN, strlen (TURN));
  SymfonicTestScenario scenario = { .body = body };
  g_autofree char *url = symfonic_test_upstream_add (fake, "/turn", &scenario);
  g_autoptr(SymfonicServer) server = gateway_new (url);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();

  for (guint i = 0; i < SEQUENTIAL; i++)
    assert_one_turn (server, session);

  g_assert_cmpuint (symfonic_test_upstream_count_records (fake, "/turn", NULL), ==, SEQUENTIAL);
  g_test_message ("%u sequential requests came on %u connections", SEQUENTIAL,
                  symfonic_test_upstream_count_connections (fake));
  g_assert_cmpuint (symfonic_test_upstream_count_connections (fake), ==, 1);

  symfonic_server_stop (server);
}

static void
test_concurrent_reuse (void)
{
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autoptr(GBytes) body = g_bytes_new_static (TURN, strlen (TURN));
  /* held back, so the streams of a round overlap */
  SymfonicTestScenario scenario = { .body = body, .hold_ms = 20 };
  g_autofree char *url = symfonic_test_upstream_add (fake, "/turn", &scenario);
  g_autoptr(SymfonicServer) server = gateway_new (url);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autofree char *metrics_url = symfonic_test_server_dup_url (server, "");
  double opened;
  double sent;

  for (guint round = 0; round < ROUNDS; round++)
    {
      SymfonicTestStream *streams[CONCURRENT];

      for (guint i = 0; i < CONCURRENT; i++)
        streams[i] = post (server, session);
      for (guint i = 0; i < CONCURRENT; i++)
        {
          symfonic_test_stream_wait_done (streams[i]);
          assert_turn (streams[i]);
          symfonic_test_stream_free (streams[i]);
        }
    }

  g_assert_cmpuint (symfonic_test_upstream_count_records (fake, "/turn", NULL), ==, ROUNDS * CONCURRENT);
  g_test_message ("%u requests, %u at a time, came on %u connections", ROUNDS * CONCURRENT, CONCURRENT,
                  symfonic_test_upstream_count_connections (fake));
  if (symfonic_test_upstream_count_connections (fake) > CONCURRENT)
    {
      g_autofree char *described = symfonic_test_upstream_describe_connections (fake);

      g_printerr ("%s", described);
    }
  g_assert_cmpuint (symfonic_test_upstream_count_connections (fake), <=, CONCURRENT);

  /* the counters say so too (they are the process's: earlier cases count) */
  opened = symfonic_test_fetch_metric (session, metrics_url, "symfonic_upstream_connections_opened_total");
  sent = symfonic_test_fetch_metric (session, metrics_url, "symfonic_upstream_requests_total");
  g_assert_cmpfloat (sent, >=, ROUNDS * CONCURRENT);
  g_assert_cmpfloat (opened, <, sent / 10);

  symfonic_server_stop (server);
}

/* --- framing ------------------------------------------------------------- */

#define SSE_HEAD "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"

/* A gateway in front of a raw upstream, and a client. */
typedef struct
{
  SymfonicTestRawUpstream *raw;
  SymfonicServer          *server;
  SoupSession             *session;
} Rig;

static void
rig_setup (Rig           *rig,
           gconstpointer  data)
{
  g_autofree char *url = NULL;

  rig->raw = symfonic_test_raw_upstream_new ();
  url = symfonic_test_raw_upstream_dup_url (rig->raw);
  rig->server = gateway_new (url);
  rig->session = symfonic_test_session_new ();
}

static void
rig_teardown (Rig           *rig,
              gconstpointer  data)
{
  symfonic_server_stop (rig->server);
  g_object_unref (rig->server);
  g_object_unref (rig->session);
  symfonic_test_raw_upstream_free (rig->raw);
}

/* The turn with a Content-Length, kept alive. */
static void
set_length_answer (SymfonicTestRawUpstream *raw)
{
  g_autofree char *head = g_strdup_printf (SSE_HEAD "Content-Length: %zu\r\n\r\n", strlen (TURN));
  const char *pieces[] = { head, TURN, NULL };

  symfonic_test_raw_upstream_set_answer (raw, pieces, FALSE);
}

static void
test_framing_length (Rig           *rig,
                     gconstpointer  data)
{
  set_length_answer (rig->raw);
  assert_one_turn (rig->server, rig->session);
  assert_one_turn (rig->server, rig->session);
  g_assert_cmpuint (symfonic_test_raw_upstream_get_connections (rig->raw), ==, 1);
}

static void
test_framing_close (Rig           *rig,
                    gconstpointer  data)
{
  const char *pieces[] = { SSE_HEAD "Connection: close\r\n\r\n", TURN, NULL };

  symfonic_test_raw_upstream_set_answer (rig->raw, pieces, TRUE);
  assert_one_turn (rig->server, rig->session);
  assert_one_turn (rig->server, rig->session);
  g_assert_cmpuint (symfonic_test_raw_upstream_get_connections (rig->raw), ==, 2);
}

/* The chunked answer split after every byte: the head, the size lines,
 * the data and the CRLFs are each cut everywhere once. */
static void
test_framing_chunked_split (Rig           *rig,
                            gconstpointer  data)
{
  /* a chunk extension and a trailer, which mean nothing */
  g_autofree char *answer = g_strdup_printf (SSE_HEAD "Transfer-Encoding: chunked\r\n\r\n"
                                             "10;ext=1\r\n%.16s\r\n%zx\r\n%s\r\n0\r\nX-Trailer: t\r\n\r\n",
                                             TURN, strlen (TURN) - 16, &TURN[16]);
  gsize length = strlen (answer);

  for (gsize at = 1; at < length; at++)
    {
      g_autofree char *first = g_strndup (answer, at);
      const char *pieces[] = { first, answer + at, NULL };

      symfonic_test_raw_upstream_set_answer (rig->raw, pieces, FALSE);
      assert_one_turn (rig->server, rig->session);
    }
  /* and every request rode the first connection */
  g_assert_cmpuint (symfonic_test_raw_upstream_get_connections (rig->raw), ==, 1);
}

/* --- kept connections the upstream closed -------------------------------- */

/* The upstream's keep-alive timeout closed the idle connection: the next
 * stream opens another. */
static void
test_idle_closed (Rig           *rig,
                  gconstpointer  data)
{
  set_length_answer (rig->raw);
  assert_one_turn (rig->server, rig->session);
  symfonic_test_raw_upstream_close_idle (rig->raw);
  g_usleep (50 * G_TIME_SPAN_MILLISECOND);
  assert_one_turn (rig->server, rig->session);
  g_assert_cmpuint (symfonic_test_raw_upstream_get_connections (rig->raw), ==, 2);
}

/* The upstream closed the kept connection as the request arrived, before
 * answering: it is sent once more, on a new connection. */
static void
test_reused_closed_retried (Rig           *rig,
                            gconstpointer  data)
{
  set_length_answer (rig->raw);
  symfonic_test_raw_upstream_set_drop_reused (rig->raw, TRUE);
  assert_one_turn (rig->server, rig->session);
  assert_one_turn (rig->server, rig->session);
  assert_one_turn (rig->server, rig->session);
  /* each second request on a connection was dropped and sent again */
  g_assert_cmpuint (symfonic_test_raw_upstream_get_requests (rig->raw), ==, 5);
  g_assert_cmpuint (symfonic_test_raw_upstream_get_connections (rig->raw), ==, 3);
}

/* A new connection closed before any answer is the upstream's failure:
 * nothing is sent twice. */
static void
test_fresh_closed_not_retried (Rig           *rig,
                               gconstpointer  data)
{
  const char *pieces[] = { NULL };

  symfonic_test_raw_upstream_set_answer (rig->raw, pieces, TRUE);
  assert_broken (rig->server, rig->session);
  g_assert_cmpuint (symfonic_test_raw_upstream_get_requests (rig->raw), ==, 1);
}

/* --- hostile answers ----------------------------------------------------- */

typedef struct
{
  const char *name;
  /* the head's first line, then lines; NULL-terminated pieces */
  const char *pieces[4];
  gsize       filler;
} HostileCase;

static const HostileCase hostile_cases[] = {
  /* the head alone is over 32 KiB: a header of @filler bytes */
  { "head-too-large", { SSE_HEAD "X-Filler: ", "%FILL%", "\r\n\r\n" TURN, NULL }, 40 * 1024 },
  { "chunk-line-10k", { SSE_HEAD "Transfer-Encoding: chunked\r\n\r\n5;", "%FILL%", "\r\nhello\r\n0\r\n\r\n", NULL }, 10 * 1024 },
  { "chunk-size-negative", { SSE_HEAD "Transfer-Encoding: chunked\r\n\r\n", "-5\r\nhello\r\n0\r\n\r\n", NULL }, 0 },
  { "chunk-size-overflow", { SSE_HEAD "Transfer-Encoding: chunked\r\n\r\n", "10000000000000001\r\nhello\r\n", NULL }, 0 },
  { "content-length-2^64", { SSE_HEAD "Content-Length: 18446744073709551616\r\n\r\n", TURN, NULL }, 0 },
  { "content-length-twice", { SSE_HEAD "Content-Length: 5\r\nContent-Length: 6\r\n\r\n", "hello!", NULL }, 0 },
  { "length-and-chunked", { SSE_HEAD "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", "5\r\nhello\r\n0\r\n\r\n", NULL }, 0 },
  { "gzip-coding", { SSE_HEAD "Transfer-Encoding: gzip, chunked\r\n\r\n", "5\r\nhello\r\n0\r\n\r\n", NULL }, 0 },
  { "folded-header", { "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n folded\r\n\r\n", TURN, NULL }, 0 },
  { "bad-status", { "HTTP/1.1 2x0 OK\r\nContent-Type: text/event-stream\r\n\r\n", TURN, NULL }, 0 },
  { "not-http", { "SSH-2.0-OpenSSH\r\n\r\n", NULL }, 0 },
  { "too-many-headers", { SSE_HEAD, "%HEADERS%", "\r\n" TURN, NULL }, 200 },
  { "data-past-chunk", { SSE_HEAD "Transfer-Encoding: chunked\r\n\r\n", "2\r\nhello\r\n0\r\n\r\n", NULL }, 0 },
  { "cut-short", { SSE_HEAD "Content-Length: 1000\r\n\r\n", "event: TextDeltaEvent\n", NULL }, 0 },
};

static char *
expand_piece (const char *piece,
              gsize       filler)
{
  GString *text;

  if (g_strcmp0 (piece, "%FILL%") == 0)
    {
      text = g_string_sized_new (filler);
      for (gsize i = 0; i < filler; i++)
        g_string_append_c (text, 'a');
      return g_string_free (text, FALSE);
    }
  if (g_strcmp0 (piece, "%HEADERS%") == 0)
    {
      text = g_string_new (NULL);
      for (gsize i = 0; i < filler; i++)
        g_string_append_printf (text, "X-H%zu: v\r\n", i);
      return g_string_free (text, FALSE);
    }

  return g_strdup (piece);
}

static void
test_hostile (Rig           *rig,
              gconstpointer  data)
{
  const HostileCase *test_case = data;
  g_autoptr(GPtrArray) pieces = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; test_case->pieces[i] != NULL; i++)
    g_ptr_array_add (pieces, expand_piece (test_case->pieces[i], test_case->filler));
  g_ptr_array_add (pieces, NULL);

  symfonic_test_raw_upstream_set_answer (rig->raw, (const char * const *) pieces->pdata, TRUE);
  assert_broken (rig->server, rig->session);
  /* the gateway is still fine, and the broken connection was not kept */
  set_length_answer (rig->raw);
  assert_one_turn (rig->server, rig->session);
  g_assert_cmpuint (symfonic_test_raw_upstream_get_connections (rig->raw), ==, 2);
}

/* --- a paused stream ----------------------------------------------------- */

#define PAUSE_EVENTS 4000
#define PAUSE_DELTA "event: TextDeltaEvent\ndata: {\"text\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}\n\n"

static gboolean
blocked_cb (gpointer data)
{
  return symfonic_test_raw_upstream_get_blocked_writes (data) > 0;
}

/* A client that stops reading holds the stream back; the gateway stops
 * reading its upstream, whose writes block; once the client reads again,
 * everything arrives, to the terminal. */
static void
test_paused_upstream_blocks (Rig           *rig,
                             gconstpointer  data)
{
  SymfonicTestRawUpstream *raw = rig->raw;
  g_autoptr(GString) answer = g_string_new (NULL);
  g_autoptr(GString) body = g_string_new (NULL);
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GSocket) client = NULL;
  g_autoptr(GSocketAddress) address = NULL;
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) received = g_string_new (NULL);
  g_autofree char *gateway_url = symfonic_test_server_dup_url (rig->server, "/");
  g_autoptr(GUri) gateway_uri = g_uri_parse (gateway_url, G_URI_FLAGS_NONE, NULL);
  g_autofree char *request = NULL;
  int small = 4096;
  char buffer[16384];
  guint deltas = 0;

  for (guint i = 0; i < PAUSE_EVENTS; i++)
    g_string_append (body, PAUSE_DELTA);
  g_string_append (body, "event: ResponseCompleteEvent\ndata: {\"text\":\"x\",\"duration_ms\":1}\n\n");
  g_string_append_printf (answer, SSE_HEAD "Content-Length: %zu\r\n\r\n%s", body->len, body->str);
  bytes = g_bytes_new (answer->str, answer->len);
  symfonic_test_raw_upstream_set_answer_bytes (raw, bytes, 16384);

  /* a client whose receive buffer is small, and who does not read yet */
  client = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &error);
  g_assert_no_error (error);
  setsockopt (g_socket_get_fd (client), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  address = g_inet_socket_address_new (loopback, g_uri_get_port (gateway_uri));
  g_socket_connect (client, address, NULL, &error);
  g_assert_no_error (error);
  request = g_strdup_printf ("POST " SYMFONIC_TEST_TYPED_PATH " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                             "Content-Type: application/json\r\nContent-Length: %zu\r\n"
                             "Connection: close\r\n\r\n%s", strlen (BODY), BODY);
  g_socket_send (client, request, strlen (request), NULL, &error);
  g_assert_no_error (error);

  g_assert_true (symfonic_test_iterate_until (NULL, blocked_cb, raw, SYMFONIC_TEST_WAIT_MS));
  g_test_message ("the upstream's writes blocked %u times while the client did not read",
                  symfonic_test_raw_upstream_get_blocked_writes (raw));

  for (;;)
    {
      gssize n;

      while (!g_socket_condition_check (client, G_IO_IN))
        g_main_context_iteration (NULL, FALSE);
      n = g_socket_receive (client, buffer, sizeof buffer, NULL, &error);
      g_assert_no_error (error);
      if (n == 0)
        break;
      g_string_append_len (received, buffer, n);
    }

  for (const char *p = received->str; (p = strstr (p, "event: TextDeltaEvent\n")) != NULL; p++)
    deltas++;
  g_assert_cmpuint (deltas, ==, PAUSE_EVENTS);
  g_assert_nonnull (strstr (received->str, "event: ResponseCompleteEvent\n"));
  g_assert_true (symfonic_test_raw_upstream_wait_written (raw));
}

/* --- https ----------------------------------------------------------------- */

static SymfonicTestUpstream *
tls_upstream_new (void)
{
  g_autofree char *cert = g_test_build_filename (G_TEST_DIST, "integration", "tls", "upstream-cert.pem", NULL);
  g_autofree char *key = g_test_build_filename (G_TEST_DIST, "integration", "tls", "upstream-key.pem", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GTlsCertificate) certificate = g_tls_certificate_new_from_files (cert, key, &error);

  g_assert_no_error (error);

  return symfonic_test_upstream_new_tls (certificate);
}

/* Streams over https, on kept connections, trusting the configured CA. */
static void
test_https (void)
{
  g_autoptr(SymfonicTestUpstream) fake = tls_upstream_new ();
  g_autoptr(GBytes) body = g_bytes_new_static (TURN, strlen (TURN));
  SymfonicTestScenario scenario = { .body = body, .split = SYMFONIC_TEST_SPLIT_RANDOM };
  g_autofree char *url = symfonic_test_upstream_add (fake, "/turn", &scenario);
  g_autofree char *cert = g_test_build_filename (G_TEST_DIST, "integration", "tls", "upstream-cert.pem", NULL);
  g_autofree char *lines = g_strdup_printf ("tls-ca-file=%s", cert);
  g_autoptr(SymfonicServer) server = gateway_new_with (url, lines);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();

  g_assert_true (g_str_has_prefix (url, "https://"));
  for (guint i = 0; i < 20; i++)
    assert_one_turn (server, session);
  g_assert_cmpuint (symfonic_test_upstream_count_connections (fake), ==, 1);

  symfonic_server_stop (server);
}

/* A certificate the system does not trust fails the stream. */
static void
test_https_untrusted (void)
{
  g_autoptr(SymfonicTestUpstream) fake = tls_upstream_new ();
  g_autoptr(GBytes) body = g_bytes_new_static (TURN, strlen (TURN));
  SymfonicTestScenario scenario = { .body = body };
  g_autofree char *url = symfonic_test_upstream_add (fake, "/turn", &scenario);
  g_autoptr(SymfonicServer) server = gateway_new (url);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();

  assert_broken (server, session);
  g_assert_cmpuint (symfonic_test_upstream_count_records (fake, "/turn", NULL), ==, 0);

  symfonic_server_stop (server);
}

int
main (int   argc,
      char *argv[])
{
  symfonic_test_init (&argc, &argv);

  g_test_add_func ("/upstream-pool/reuse/sequential", test_sequential_reuse);
  g_test_add_func ("/upstream-pool/reuse/concurrent", test_concurrent_reuse);
  g_test_add ("/upstream-pool/framing/length", Rig, NULL, rig_setup, test_framing_length, rig_teardown);
  g_test_add ("/upstream-pool/framing/close", Rig, NULL, rig_setup, test_framing_close, rig_teardown);
  g_test_add ("/upstream-pool/framing/chunked-split", Rig, NULL, rig_setup, test_framing_chunked_split,
              rig_teardown);
  g_test_add ("/upstream-pool/kept/idle-closed", Rig, NULL, rig_setup, test_idle_closed, rig_teardown);
  g_test_add ("/upstream-pool/kept/closed-retried", Rig, NULL, rig_setup, test_reused_closed_retried,
              rig_teardown);
  g_test_add ("/upstream-pool/kept/fresh-not-retried", Rig, NULL, rig_setup, test_fresh_closed_not_retried,
              rig_teardown);
  for (guint i = 0; i < G_N_ELEMENTS (hostile_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/upstream-pool/hostile/%s", hostile_cases[i].name);

      g_test_add (path, Rig, &hostile_cases[i], rig_setup, test_hostile, rig_teardown);
    }
  g_test_add_func ("/upstream-pool/https/trusted", test_https);
  g_test_add_func ("/upstream-pool/https/untrusted", test_https_untrusted);
  g_test_add ("/upstream-pool/paused-upstream-blocks", Rig, NULL, rig_setup, test_paused_upstream_blocks,
              rig_teardown);

  return g_test_run ();
}
