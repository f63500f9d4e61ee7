/* test-metering-http.c: rate limits and budgets, over HTTP, on two workers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * DESIGN 3 and 6: a refusal is a 429 with a JSON body and Retry-After,
 * before any SSE; the shared state holds across worker threads; a budget
 * never admits more reservations than it has, however many requests race,
 * and a client that hangs up still settles its reservation.
 */
#include <string.h>

#include "symfonic-test-support.h"

/* A meter needs a principal: every metered route authenticates, and every
 * request but the refused ones below acts for alice in acme. */
#define AUTH_GROUP "[stage:auth]\ntype=auth\ntokens-file=" SYMFONIC_TEST_DATA_DIR "/demo-tokens.ini\n"
#define AUTH_HEADERS "Authorization", "Bearer demo-token-alice", "X-Tenant-ID", "acme"

#define QUERY "{\"query\":\"count me\"}"
/* the bytes of "count me" */
#define QUERY_BYTES 8

/* A pipeline whose one route runs @stages, defined by @groups. */
static char *
pipeline_with_stages (const char *transcript,
                      double      time_scale,
                      const char *stages,
                      const char *groups)
{
  g_autofree char *base = symfonic_test_replay_pipeline ("transcripts", transcript, time_scale);
  g_autofree char *route_lines = g_strdup_printf ("source=fixtures\nstages=%s\n", stages);
  GString *text = g_string_new (base);

  g_assert_cmpuint (g_string_replace (text, "source=fixtures\n", route_lines, 1), ==, 1);
  g_string_append (text, groups);

  return g_string_free (text, FALSE);
}

/* A server whose one route runs @stages, defined by @groups. */
static SymfonicServer *
server_new_with_stages (const char *transcript,
                        double      time_scale,
                        const char *stages,
                        const char *groups)
{
  g_autofree char *base_dir = g_test_build_filename (G_TEST_DIST, "integration", NULL);
  g_autofree char *text = pipeline_with_stages (transcript, time_scale, stages, groups);

  return symfonic_test_server_new (text, base_dir, 2);
}

/* A server whose one route runs one metering stage, [stage:meter], after
 * the auth stage it needs. */
static SymfonicServer *
server_new (const char *transcript,
            double      time_scale,
            const char *stage_group)
{
  g_autofree char *groups = g_strconcat (AUTH_GROUP "[stage:meter]\n", stage_group, NULL);

  return server_new_with_stages (transcript, time_scale, "auth;meter", groups);
}

/* A refusal: 429 before any SSE, the error frame as JSON, Retry-After. */
static void
assert_refusal (guint               status,
                SoupMessageHeaders *headers,
                const char         *data,
                gsize               length,
                const char         *code,
                const char         *retry_after)
{
  /* the body is not NUL-terminated */
  g_autofree char *body = g_strndup (data, length);
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GError) error = NULL;
  JsonObject *object;

  g_assert_cmpuint (status, ==, 429);
  g_assert_cmpstr (soup_message_headers_get_content_type (headers, NULL), ==, "application/json");
  g_assert_cmpstr (soup_message_headers_get_one (headers, "Retry-After"), ==, retry_after);

  symfonic_test_json_is_strict (body, -1, &error);
  g_assert_no_error (error);
  node = symfonic_test_json_parse (body);
  object = json_node_get_object (node);
  g_assert_cmpint (json_object_get_int_member (object, "status"), ==, 429);
  g_assert_cmpstr (json_object_get_string_member (object, "code"), ==, code);
  g_assert_cmpuint (strlen (json_object_get_string_member (object, "detail")), >, 0);
}

static void
assert_response_refused (SymfonicTestResponse *response,
                         const char           *code,
                         const char           *retry_after)
{
  gsize length;
  const char *data = g_bytes_get_data (response->body, &length);

  assert_refusal (response->status, response->headers, data, length, code, retry_after);
}

static SymfonicTestResponse *
post (SoupSession *session,
      const char  *url,
      const char  *transcript)
{
  return symfonic_test_request (session, "POST", url, "application/json", QUERY,
                                AUTH_HEADERS, "X-Symfonic-Transcript", transcript, NULL);
}

static void
test_rate_limit_refusal (void)
{
  /* one admission every 2 s: the second request waits 1 to 2 s, "2" */
  g_autoptr(SymfonicServer) server = server_new ("typed", 0, "type=rate-limit\nrate=0.5\nburst=1\n");
  g_autofree char *url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestResponse) first = post (session, url, "typed");
  g_autoptr(SymfonicTestResponse) second = post (session, url, "typed");

  g_assert_cmpuint (first->status, ==, 200);
  g_assert_null (soup_message_headers_get_one (first->headers, "Retry-After"));
  assert_response_refused (second, "rate_limited", "2");

  symfonic_server_stop (server);
}

/* A route may list its meter before auth: authentication still runs
 * first, on the request head, and the meter only counts authenticated,
 * well-formed requests, each under its own tenant. */
static void
test_rate_limit_after_auth (void)
{
  g_autoptr(SymfonicServer) server =
    server_new_with_stages ("typed", 0, "meter;auth",
                            "[stage:meter]\n"
                            "type=rate-limit\n"
                            "key=tenant\n"
                            "rate=0.5\n"
                            "burst=3\n"
                            "[stage:auth]\n"
                            "type=auth\n"
                            "tokens-file=" SYMFONIC_TEST_DATA_DIR "/demo-tokens.ini\n");
  g_autofree char *url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestResponse) limited = NULL;

  for (guint i = 0; i < 10; i++)
    {
      g_autoptr(SymfonicTestResponse) nobody =
        symfonic_test_request (session, "POST", url, "application/json", QUERY, "X-Tenant-ID", "acme", NULL);
      g_autoptr(SymfonicTestResponse) outsider =
        symfonic_test_request (session, "POST", url, "application/json", QUERY,
                               "Authorization", "Bearer demo-token-alice", "X-Tenant-ID", "globex", NULL);
      g_autoptr(SymfonicTestResponse) malformed =
        symfonic_test_request (session, "POST", url, "application/json", "{\"query\":",
                               "Authorization", "Bearer demo-token-alice", "X-Tenant-ID", "acme", NULL);

      g_assert_cmpuint (nobody->status, ==, 401);
      g_assert_cmpuint (outsider->status, ==, 403);
      g_assert_cmpuint (malformed->status, ==, 400);
    }

  /* acme's burst is whole */
  for (guint i = 0; i < 3; i++)
    {
      g_autoptr(SymfonicTestResponse) admitted =
        symfonic_test_request (session, "POST", url, "application/json", QUERY,
                               "Authorization", "Bearer demo-token-alice", "X-Tenant-ID", "acme", NULL);

      g_assert_cmpuint (admitted->status, ==, 200);
    }
  limited = symfonic_test_request (session, "POST", url, "application/json", QUERY,
                                   "Authorization", "Bearer demo-token-alice", "X-Tenant-ID", "acme", NULL);
  assert_response_refused (limited, "rate_limited", "2");

  symfonic_server_stop (server);
}

/* Waits until every stream has its status. */
static gboolean
all_answered (gpointer data)
{
  GPtrArray *streams = data;

  for (guint i = 0; i < streams->len; i++)
    {
      SymfonicTestStream *stream = g_ptr_array_index (streams, i);

      if (!stream->got_headers && !stream->done)
        return FALSE;
    }

  return TRUE;
}

static gboolean
never (gpointer data)
{
  return FALSE;
}

/* Polls until a request is admitted; returns how long that took, or -1. */
static gint64
wait_admitted (SoupSession *session,
               const char  *url,
               guint        limit_ms)
{
  gint64 start = g_get_monotonic_time ();

  while (g_get_monotonic_time () - start < limit_ms * (gint64) 1000)
    {
      g_autoptr(SymfonicTestResponse) response = post (session, url, "typed");

      if (response->status == 200)
        return g_get_monotonic_time () - start;
      g_assert_cmpuint (response->status, ==, 429);
      symfonic_test_iterate_until (NULL, never, NULL, 20);
    }

  return -1;
}

/* A hundred requests at once against a budget with room for exactly
 * seven reservations: seven streams, ninety-three 429s. The admitted
 * streams play for 20 s, so none settles while the others arrive, even on
 * a loaded machine under the sanitizers. */
#define N_REQUESTS 100
#define N_FIT 7

static void
test_budget_concurrent (void)
{
  g_autofree char *group = g_strdup_printf ("type=budget\ntokens-per-window=%u\nreserve-tokens=100\n"
                                            "window-seconds=3600\n", N_FIT * 100);
  g_autoptr(SymfonicServer) server = server_new ("long", 4, group);
  g_autofree char *url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SoupSession) later = symfonic_test_session_new ();
  g_autoptr(GPtrArray) streams = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_test_stream_free);
  guint ok = 0, refused = 0;
  gint64 start, answered, readmitted;

  start = g_get_monotonic_time ();
  for (guint i = 0; i < N_REQUESTS; i++)
    g_ptr_array_add (streams, symfonic_test_stream_post (session, url, QUERY,
                                                         AUTH_HEADERS, "X-Symfonic-Transcript", "long", NULL));
  g_assert_true (symfonic_test_iterate_until (NULL, all_answered, streams, SYMFONIC_TEST_WAIT_MS));
  answered = g_get_monotonic_time () - start;

  for (guint i = 0; i < streams->len; i++)
    {
      SymfonicTestStream *stream = g_ptr_array_index (streams, i);
      SoupMessageHeaders *headers = soup_message_get_response_headers (stream->message);

      g_assert_no_error (stream->error);
      if (stream->status == 200)
        {
          ok++;
          g_assert_cmpstr (soup_message_headers_get_content_type (headers, NULL), ==, "text/event-stream");
        }
      else
        {
          refused++;
          symfonic_test_stream_wait_done (stream);
          /* only reservations in flight are in the way */
          assert_refusal (stream->status, headers, stream->raw->str, stream->raw->len, "budget_exceeded", "1");
        }
    }
  g_test_message ("%u requests answered in %" G_GINT64_FORMAT " ms: %u admitted, %u refused",
                  N_REQUESTS, answered / 1000, ok, refused);
  g_assert_cmpint (answered, <, 15 * G_USEC_PER_SEC);
  g_assert_cmpuint (ok, ==, N_FIT);
  g_assert_cmpuint (refused, ==, N_REQUESTS - N_FIT);

  /* every admitted client hangs up mid-stream: their reservations settle
   * (a few tokens each), and the budget admits again */
  for (guint i = 0; i < streams->len; i++)
    symfonic_test_stream_close (g_ptr_array_index (streams, i));
  soup_session_abort (session);
  readmitted = wait_admitted (later, url, 2000);
  g_test_message ("admitted again %" G_GINT64_FORMAT " ms after the hang-ups", readmitted / 1000);
  g_assert_cmpint (readmitted, >=, 0);

  g_ptr_array_set_size (streams, 0);
  symfonic_server_stop (server);
}

/* One stream in flight takes the whole room; a client that hangs up in the
 * middle of it still gives it back. */
static void
test_budget_disconnect_settles (void)
{
  g_autoptr(SymfonicServer) server = server_new ("long", 1,
                                                 "type=budget\ntokens-per-window=1500\nreserve-tokens=1000\n");
  g_autofree char *url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);
  g_autoptr(SoupSession) stream_session = symfonic_test_session_new ();
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = NULL;
  gint64 readmitted;

  stream = symfonic_test_stream_post (stream_session, url, QUERY,
                                      AUTH_HEADERS, "X-Symfonic-Transcript", "long", NULL);
  symfonic_test_stream_wait_frames (stream, 3);
  g_assert_cmpuint (stream->status, ==, 200);
  g_assert_false (stream->done);

  {
    g_autoptr(SymfonicTestResponse) response = post (session, url, "typed");

    assert_response_refused (response, "budget_exceeded", "1");
  }

  symfonic_test_stream_close (stream);
  soup_session_abort (stream_session);
  readmitted = wait_admitted (session, url, 2000);
  g_test_message ("admitted again %" G_GINT64_FORMAT " ms after the hang-up", readmitted / 1000);
  g_assert_cmpint (readmitted, >=, 0);

  symfonic_server_stop (server);
}

/* The bytes of text and thinking deltas in a transcript. */
static guint64
transcript_text_bytes (const char *name)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "integration", "transcripts", name, NULL);
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;
  guint64 n = 0;

  g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr(JsonNode) node = NULL;
      JsonObject *object;
      const char *event;

      if (lines[i][0] != '{')
        continue;
      node = json_from_string (lines[i], NULL);
      g_assert_nonnull (node);
      object = json_node_get_object (node);
      event = json_object_get_string_member (object, "event");
      if (g_str_equal (event, "TextDeltaEvent") || g_str_equal (event, "ThinkingDeltaEvent"))
        n += strlen (json_object_get_string_member (json_object_get_object_member (object, "data"), "text"));
    }

  return n;
}

/* Without reported usage, a stream is charged ceil (query / 4) +
 * ceil (text / 4): a window of exactly that plus one reservation admits a
 * second request, one token less does not (and says to wait for the next
 * window, not for streams in flight). */
static void
test_budget_estimate (void)
{
  guint64 text_bytes = transcript_text_bytes ("typed.jsonl");
  guint64 charge = (QUERY_BYTES + 3) / 4 + (text_bytes + 3) / 4;

  g_test_message ("typed.jsonl: %" G_GUINT64_FORMAT " bytes of text; a stream is charged %" G_GUINT64_FORMAT
                  " tokens", text_bytes, charge);

  for (guint slack = 0; slack < 2; slack++)
    {
      g_autofree char *group = g_strdup_printf ("type=budget\nreserve-tokens=1000\nwindow-seconds=3600\n"
                                                "tokens-per-window=%" G_GUINT64_FORMAT "\n",
                                                charge + 1000 - 1 + slack);
      g_autoptr(SymfonicServer) server = server_new ("typed", 0, group);
      g_autofree char *url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);
      g_autoptr(SoupSession) session = symfonic_test_session_new ();
      g_autoptr(SymfonicTestResponse) first = post (session, url, "typed");
      g_autoptr(SymfonicTestResponse) second = post (session, url, "typed");

      g_assert_cmpuint (first->status, ==, 200);
      if (slack == 1)
        g_assert_cmpuint (second->status, ==, 200);
      else
        assert_response_refused (second, "budget_exceeded", "3600");

      symfonic_server_stop (server);
    }
}

/* A body whose query is @n_bytes long: an estimate of ceil (n / 4) tokens. */
static char *
query_of_size (gsize n_bytes)
{
  g_autofree char *query = g_strnfill (n_bytes, 'x');

  return g_strdup_printf ("{\"query\":\"%s\"}", query);
}

static SymfonicTestResponse *
post_query (SoupSession *session,
            const char  *url,
            const char  *body)
{
  return symfonic_test_request (session, "POST", url, "application/json", body,
                                AUTH_HEADERS, "X-Symfonic-Transcript", "typed", NULL);
}

/* The reservation covers the query's own estimate, not just reserve-tokens:
 * a 15,000-token query on a 20,000-token window leaves no room for a second
 * one (which 100-token reservations would have admitted), and the advice is
 * the rest of the 60 s window, which opened at the first request. A query
 * estimated above the whole window is too large, never worth a retry. */
static void
test_budget_query_size (void)
{
  g_autoptr(SymfonicServer) server = server_new ("typed", 0,
                                                 "type=budget\ntokens-per-window=20000\nreserve-tokens=100\n"
                                                 "window-seconds=60\n");
  g_autofree char *url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autofree char *large = query_of_size (60000);
  g_autofree char *too_large = query_of_size (80004);
  g_autoptr(SymfonicTestResponse) first = post_query (session, url, large);
  g_autoptr(SymfonicTestResponse) second = post_query (session, url, large);
  g_autoptr(SymfonicTestResponse) third = post_query (session, url, too_large);
  g_autoptr(JsonNode) node = NULL;
  JsonObject *object;

  g_assert_cmpuint (first->status, ==, 200);
  assert_response_refused (second, "budget_exceeded", "60");

  g_assert_cmpuint (third->status, ==, 413);
  g_assert_null (soup_message_headers_get_one (third->headers, "Retry-After"));
  node = symfonic_test_response_dup_json (third);
  object = json_node_get_object (node);
  g_assert_cmpint (json_object_get_int_member (object, "status"), ==, 413);
  g_assert_cmpstr (json_object_get_string_member (object, "code"), ==, "payload_too_large");

  symfonic_server_stop (server);
}

/* A long answer on a small budget ends with its error frame when its usage
 * passes what the budget had left, instead of running on. "count me" is 2
 * tokens of the 30, leaving 28 tokens = 112 bytes of text: "w1 " to "w9 "
 * are 27 bytes, "w10 " to "w30 " 84 more (111), and "w31 " passes 112, so
 * 30 deltas reach the client, then one budget_exceeded frame. The stream
 * is charged what reached its client, 2 + ceil (111 / 4) = 30: a 28-token
 * query then waits for the next 60 s window. */
static void
test_budget_midstream (void)
{
  g_autoptr(SymfonicServer) server = server_new ("long", 0,
                                                 "type=budget\ntokens-per-window=30\nreserve-tokens=10\n"
                                                 "window-seconds=60\n");
  g_autofree char *url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = NULL;
  g_autoptr(SymfonicTestResponse) next = NULL;
  g_autofree char *next_query = query_of_size (112);
  g_autoptr(JsonNode) node = NULL;
  SymfonicTestFrame *last;
  JsonObject *object;
  guint n_deltas = 0;

  stream = symfonic_test_stream_post (session, url, QUERY, AUTH_HEADERS, "X-Symfonic-Transcript", "long", NULL);
  symfonic_test_stream_wait_done (stream);
  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, 200);

  for (guint i = 0; i + 1 < stream->frames->len; i++)
    {
      SymfonicTestFrame *frame = g_ptr_array_index (stream->frames, i);
      g_autoptr(JsonNode) delta = NULL;
      g_autofree char *expected = NULL;

      g_assert_cmpstr (frame->event, ==, "TextDeltaEvent");
      delta = symfonic_test_json_parse (frame->data);
      expected = g_strdup_printf ("w%u ", ++n_deltas);
      g_assert_cmpstr (json_object_get_string_member (json_node_get_object (delta), "text"), ==, expected);
    }
  g_assert_cmpuint (n_deltas, ==, 30);

  last = g_ptr_array_index (stream->frames, stream->frames->len - 1);
  g_assert_cmpstr (last->event, ==, "error");
  node = symfonic_test_json_parse (last->data);
  object = json_node_get_object (node);
  g_assert_cmpint (json_object_get_int_member (object, "status"), ==, 429);
  g_assert_cmpstr (json_object_get_string_member (object, "code"), ==, "budget_exceeded");

  next = post_query (session, url, next_query);
  assert_response_refused (next, "budget_exceeded", "60");

  symfonic_server_stop (server);
}

typedef struct
{
  SoupSession *session;
  const char  *url;
  GPtrArray   *streams;
  guint        n;
} Volley;

static gboolean
volley_fire (gpointer data)
{
  Volley *volley = data;

  g_ptr_array_add (volley->streams, symfonic_test_stream_post (volley->session, volley->url, QUERY,
                                                               AUTH_HEADERS, "X-Symfonic-Transcript", "typed", NULL));
  return volley->streams->len < volley->n ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

static gboolean
volley_answered (gpointer data)
{
  Volley *volley = data;

  return volley->streams->len == volley->n && all_answered (volley->streams);
}

/* rate 5, burst 5, across two workers: 40 requests spread over a second
 * get at most burst + rate × elapsed through, and at least the burst. */
static void
test_rate_limit_two_workers (void)
{
  g_autoptr(SymfonicServer) server = server_new ("typed", 0, "type=rate-limit\nrate=5\nburst=5\n");
  g_autofree char *url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(GPtrArray) streams = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_test_stream_free);
  Volley volley = { session, url, streams, 40 };
  gint64 start, elapsed;
  guint ok = 0, refused = 0;
  double bound;

  start = g_get_monotonic_time ();
  g_timeout_add (25, volley_fire, &volley);
  g_assert_true (symfonic_test_iterate_until (NULL, volley_answered, &volley, SYMFONIC_TEST_WAIT_MS));
  elapsed = g_get_monotonic_time () - start;

  for (guint i = 0; i < streams->len; i++)
    {
      SymfonicTestStream *stream = g_ptr_array_index (streams, i);

      symfonic_test_stream_wait_done (stream);
      g_assert_no_error (stream->error);
      if (stream->status == 200)
        {
          ok++;
        }
      else
        {
          refused++;
          /* T = 200 ms: never more than that to wait */
          assert_refusal (stream->status, soup_message_get_response_headers (stream->message),
                          stream->raw->str, stream->raw->len, "rate_limited", "1");
        }
    }

  bound = 5 + 5.0 * elapsed / G_USEC_PER_SEC;
  g_test_message ("40 requests over %" G_GINT64_FORMAT " ms: %u admitted (bound %.1f), %u refused",
                  elapsed / 1000, ok, bound, refused);
  g_assert_cmpuint (ok + refused, ==, 40);
  g_assert_cmpuint (ok, >=, 5);
  g_assert_cmpfloat (ok, <=, bound);

  symfonic_server_stop (server);
}

/* The over-reservation notices the stages made, and those of them that
 * reached the log at their own level rather than debug's. */
static gint notices_made;
static gint notices_logged;
/* how many the line at the server's stop says were held back */
static gint notices_flushed;

static GLogWriterOutput
count_notices (GLogLevelFlags   level,
               const GLogField *fields,
               gsize            n_fields,
               gpointer         user_data)
{
  const char *domain = NULL;
  const char *run_id = NULL;
  const char *suppressed = NULL;
  gboolean notice = FALSE;

  for (gsize i = 0; i < n_fields; i++)
    {
      if (g_str_equal (fields[i].key, "GLIB_DOMAIN"))
        domain = fields[i].value;
      if (g_str_equal (fields[i].key, "SYMFONIC_RUN_ID"))
        run_id = fields[i].value;
      if (g_str_equal (fields[i].key, "SYMFONIC_SUPPRESSED"))
        suppressed = fields[i].value;
      if (g_str_equal (fields[i].key, "SYMFONIC_KIND") && g_str_equal (fields[i].value, "budget: over reservation"))
        notice = TRUE;
    }
  if (notice && run_id == NULL && suppressed != NULL)
    {
      g_atomic_int_add (&notices_flushed, (gint) g_ascii_strtoll (suppressed, NULL, 10));
      return G_LOG_WRITER_HANDLED;
    }
  if (notice)
    {
      g_atomic_int_inc (&notices_made);
      if (level & G_LOG_LEVEL_MESSAGE)
        g_atomic_int_inc (&notices_logged);
      return G_LOG_WRITER_HANDLED;
    }
  /* the stage's debug lines are on for the notices only */
  if ((level & G_LOG_LEVEL_DEBUG) && g_strcmp0 (domain, "symfonic-metering") == 0)
    return G_LOG_WRITER_HANDLED;

  return g_log_writer_default (level, fields, n_fields, user_data);
}

/* Streams that use more than they reserved are worth one notice to the
 * operator every interval, not one log line each: a busy gateway would
 * write a line per request. Each stream makes its notice; those within
 * the interval of the last are for a debugging session only. */
static void
test_budget_notice_bounded (void)
{
  g_autoptr(SymfonicServer) server = server_new ("typed", 0,
                                                 "type=budget\ntokens-per-window=1000000\nreserve-tokens=1\n");
  g_autofree char *url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  gint64 deadline;

  g_atomic_int_set (&notices_made, 0);
  g_atomic_int_set (&notices_logged, 0);
  g_atomic_int_set (&notices_flushed, 0);
  for (guint i = 0; i < 5; i++)
    {
      g_autoptr(SymfonicTestResponse) response = post (session, url, "typed");

      g_assert_cmpuint (response->status, ==, 200);
    }

  /* settled as each stream closes, around its last byte */
  deadline = g_get_monotonic_time () + SYMFONIC_TEST_WAIT_MS * G_TIME_SPAN_MILLISECOND;
  while (g_atomic_int_get (&notices_made) < 5 && g_get_monotonic_time () < deadline)
    g_usleep (10 * 1000);
  symfonic_server_stop (server);

  g_assert_cmpint (g_atomic_int_get (&notices_made), ==, 5);
  /* an earlier test's stream may have had the interval's line */
  g_assert_cmpint (g_atomic_int_get (&notices_logged), <=, 1);
  /* and the server's stop says how many were not logged */
  g_assert_cmpint (g_atomic_int_get (&notices_flushed), ==,
                   g_atomic_int_get (&notices_made) - g_atomic_int_get (&notices_logged));
}

/* A store from another plugin, named by the stage's `store` key: the
 * stage asks it, not a memory store of its own, which would admit all
 * three requests at this rate. */
static void
test_store_from_plugin (void)
{
  g_autoptr(SymfonicServer) server =
    server_new ("typed", 0, "type=rate-limit\nrate=1000\nburst=1000\nstore=test-counting\n");
  g_autofree char *url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  SymfonicStage *stage = symfonic_pipeline_get_stage (symfonic_server_get_pipeline (server), "meter");
  g_autoptr(SymfonicMeterStore) store = NULL;
  guint calls;

  for (guint i = 0; i < 2; i++)
    {
      g_autoptr(SymfonicTestResponse) admitted = post (session, url, "typed");

      g_assert_cmpuint (admitted->status, ==, 200);
    }
  {
    g_autoptr(SymfonicTestResponse) refused = post (session, url, "typed");

    assert_response_refused (refused, "rate_limited", "3");
  }

  g_object_get (stage, "store", &store, NULL);
  g_assert_cmpstr (G_OBJECT_TYPE_NAME (store), ==, "TestCountingStore");
  g_object_get (store, "calls", &calls, NULL);
  g_assert_cmpuint (calls, ==, 3);

  symfonic_server_stop (server);
}

typedef struct
{
  const char *name;
  const char *stage_group;
  const char *message;
} BadStoreCase;

/* [stage:meter] opens on line 18 of these pipelines, its store= is line 20 */
static const BadStoreCase bad_store_cases[] = {
  { "unknown", "type=rate-limit\nstore=memcached\nrate=1\n",
    "test.pipeline:20: [stage:meter] store: expected a [store:NAME] of this file or a registered "
    "SymfonicMeterStore type (symfonic-inspect lists them), found “memcached”" },
  { "a-stage-type", "type=budget\nstore=auth\nwindow-seconds=60\n",
    "test.pipeline:20: [stage:meter] store: expected a [store:NAME] of this file or a registered "
    "SymfonicMeterStore type (symfonic-inspect lists them), found “auth”" },
  { "empty", "type=budget\nstore=\n",
    "test.pipeline:20: [stage:meter] store: expected a [store:NAME] of this file or a registered "
    "SymfonicMeterStore type (symfonic-inspect lists them), found “”" },
};

static void
test_store_refused (gconstpointer data)
{
  const BadStoreCase *c = data;
  g_autofree char *groups = g_strconcat ("[stage:meter]\n", c->stage_group, NULL);
  g_autofree char *text = pipeline_with_stages ("typed", 0, "meter", groups);
  g_autofree char *base_dir = g_test_build_filename (G_TEST_DIST, "integration", NULL);
  g_autoptr(GFile) base = g_file_new_for_path (base_dir);
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(GError) error = NULL;

  pipeline = symfonic_pipeline_new_from_data (symfonic_test_get_registry (), text, -1, base,
                                              "test.pipeline", &error);
  g_assert_null (pipeline);
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==, c->message);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;

  symfonic_test_init (&argc, &argv);
  /* before any thread exists */
  g_setenv ("G_MESSAGES_DEBUG", "symfonic-metering", TRUE);
  g_log_set_writer_func (count_notices, NULL, NULL);
  symfonic_registry_load_directory (symfonic_registry_get_default (), TEST_PLUGIN_COUNTING_STORE_DIR, &error);
  g_assert_no_error (error);

  g_test_add_func ("/metering-http/rate-limit/refusal", test_rate_limit_refusal);
  g_test_add_func ("/metering-http/rate-limit/two-workers", test_rate_limit_two_workers);
  g_test_add_func ("/metering-http/rate-limit/after-auth", test_rate_limit_after_auth);
  g_test_add_func ("/metering-http/budget/concurrent", test_budget_concurrent);
  g_test_add_func ("/metering-http/budget/disconnect-settles", test_budget_disconnect_settles);
  g_test_add_func ("/metering-http/budget/estimate", test_budget_estimate);
  g_test_add_func ("/metering-http/budget/query-size", test_budget_query_size);
  g_test_add_func ("/metering-http/budget/midstream", test_budget_midstream);
  g_test_add_func ("/metering-http/budget/notice-bounded", test_budget_notice_bounded);
  g_test_add_func ("/metering-http/store/from-plugin", test_store_from_plugin);
  for (guint i = 0; i < G_N_ELEMENTS (bad_store_cases); i++)
    {
      g_autofree char *path = g_strconcat ("/metering-http/store/refused/", bad_store_cases[i].name, NULL);

      g_test_add_data_func (path, &bad_store_cases[i], test_store_refused);
    }

  return g_test_run ();
}
