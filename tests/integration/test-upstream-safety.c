/* test-upstream-safety.c: what a client learns of an upstream, and what
 * an upstream learns of the gateway
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * DESIGN 6: a client reads details from the error table or fixed text of
 * the gateway's own, never the upstream's address, its words, or a
 * library's error text. The runtime's credentials (request-headers) go
 * to the runtime's origin only. A source at its connection cap refuses at
 * once with 503 and Retry-After instead of queueing silently. Every route
 * of the shipped default pipeline that answers text cleans it.
 *
 * Every case runs a real gateway in-process against the support
 * library's fake runtime, over real HTTP.
 */
#include <string.h>

#include "symfonic-test-support.h"
#include "symfonic-test-upstream.h"

#define SECRET "SECRET-UPSTREAM-WORDS"
#define SECRET_PATH "/secret-runtime-path"
#define RUNTIME_KEY "k-runtime-secret"
#define OPAQUE "Internal server error"
#define BODY "{\"query\":\"hello\"}"
#define ONE_DELTA "event: TextDeltaEvent\ndata: {\"text\":\"partial\"}\n\n"
#define TURN \
  "event: TextDeltaEvent\ndata: {\"text\":\"fine\"}\n\n" \
  "event: ResponseCompleteEvent\ndata: {\"text\":\"fine\",\"duration_ms\":1}\n\n"

typedef enum {
  ROUTE_TYPED,
  ROUTE_CHUNKS,
  ROUTE_CHAT,
  ROUTE_RESUME,
  N_ROUTES
} Route;

static const char * const route_paths[N_ROUTES] = { "/typed", "/chunks", "/chat", "/resume" };

/* Every route kind behind one runtime, errors mapped by the shipped
 * table. */
static SymfonicServer *
gateway_new (const char *url,
             const char *extra_source_lines)
{
  g_autofree char *text = NULL;

  text = g_strdup_printf ("[gateway]\nlisten=127.0.0.1:8080\nworkers=2\n\n"
                          "[route:typed]\npath=/typed\nkind=typed\nsource=up\nstages=errors\n\n"
                          "[route:chunks]\npath=/chunks\nkind=chunks\nsource=up\nstages=projection;errors\n\n"
                          "[route:chat]\npath=/chat\nkind=chat\nsource=up\nstages=errors\n\n"
                          "[route:resume]\npath=/resume\nkind=resume\nsource=up\nstages=errors\n\n"
                          "[source:up]\ntype=runtime\nurl=%s\n"
                          "request-headers=X-Runtime-Key: " RUNTIME_KEY "\n%s\n\n"
                          "[stage:projection]\ntype=projection\n\n"
                          "[stage:errors]\ntype=error-map\ntable=error-map.ini\n",
                          url, extra_source_lines != NULL ? extra_source_lines : "");

  /* relative paths resolve against the data folder: the shipped table */
  return symfonic_test_server_new (text, SYMFONIC_TEST_DATA_DIR, 2);
}

static char *
add_scenario (SymfonicTestUpstream *fake,
              const char           *path,
              guint                 status,
              const char           *body,
              SymfonicTestAfter     after,
              const char           *location)
{
  g_autoptr(GBytes) bytes = g_bytes_new (body, strlen (body));
  SymfonicTestScenario scenario = {
    .status = status,
    .body = bytes,
    .after = after,
    .location = location,
  };

  return symfonic_test_upstream_add (fake, path, &scenario);
}

static void
append_header (const char *name,
               const char *value,
               gpointer    user_data)
{
  g_string_append_printf (user_data, "%s: %s\n", name, value);
}

/* The whole response a client saw, headers and body, as one text. */
static char *
response_text (SoupMessageHeaders *headers,
               const char         *body)
{
  GString *text = g_string_new (NULL);

  soup_message_headers_foreach (headers, append_header, text);
  g_string_append (text, body);

  return g_string_free (text, FALSE);
}

/* The status and the literal error JSON a client got on @route: the JSON
 * body, or the last SSE frame after a 200. Returns the whole response. */
static char *
request_error (SymfonicServer *server,
               Route           route,
               guint          *status,
               char          **error_json)
{
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autofree char *url = symfonic_test_server_dup_url (server, route_paths[route]);

  if (route == ROUTE_TYPED || route == ROUTE_CHUNKS)
    {
      g_autoptr(SymfonicTestStream) stream = symfonic_test_stream_post (session, url, BODY, NULL);
      SymfonicTestFrame *last;

      symfonic_test_stream_wait_done (stream);
      g_assert_no_error (stream->error);
      g_assert_cmpuint (stream->frames->len, >=, 1);
      last = g_ptr_array_index (stream->frames, stream->frames->len - 1);
      g_assert_cmpstr (last->event, ==, "error");
      *status = stream->status;
      *error_json = g_strdup (last->data);

      return response_text (soup_message_get_response_headers (stream->message), stream->raw->str);
    }
  else
    {
      g_autoptr(SymfonicTestResponse) response =
        symfonic_test_request (session, "POST", url, "application/json", BODY, NULL);

      *status = response->status;
      *error_json = g_strdup (symfonic_test_response_get_text (response));

      return response_text (response->headers, symfonic_test_response_get_text (response));
    }
}

/* --- item: no internals in an error ------------------------------------- */

typedef enum {
  FAILURE_UNRESOLVABLE,
  FAILURE_REFUSED,
  FAILURE_HTTP_500,
  FAILURE_GARBAGE,
  FAILURE_TIMEOUT,
} Failure;

typedef struct
{
  const char *name;
  Failure     failure;
  const char *code;
  /* on typed, chunks and chat; /resume collapses it to 400 */
  guint       status;
} FailureCase;

static const FailureCase failure_cases[] = {
  { "unresolvable-host", FAILURE_UNRESOLVABLE, "upstream_unavailable", 500 },
  { "refused-port", FAILURE_REFUSED, "upstream_unavailable", 500 },
  { "http-500-secret-body", FAILURE_HTTP_500, "upstream_error", 502 },
  { "garbage-stream", FAILURE_GARBAGE, "upstream_error", 502 },
  { "timeout", FAILURE_TIMEOUT, "upstream_timeout", 500 },
};

static void
test_failure_leaks_nothing (gconstpointer data)
{
  const FailureCase *c = data;
  g_autoptr(SymfonicTestUpstream) fake = NULL;
  g_autoptr(SymfonicServer) server = NULL;
  g_autoptr(GPtrArray) secrets = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *url = NULL;
  const char *settings = NULL;
  guint port = 0;

  switch (c->failure)
    {
    case FAILURE_UNRESOLVABLE:
      url = g_strdup ("http://secret-runtime-host.invalid:4711" SECRET_PATH);
      g_ptr_array_add (secrets, g_strdup ("secret-runtime-host"));
      g_ptr_array_add (secrets, g_strdup (".invalid"));
      g_ptr_array_add (secrets, g_strdup ("4711"));
      break;
    case FAILURE_REFUSED:
      port = symfonic_test_closed_port ();
      url = g_strdup_printf ("http://127.0.0.1:%u" SECRET_PATH, port);
      break;
    case FAILURE_HTTP_500:
      fake = symfonic_test_upstream_new ();
      url = add_scenario (fake, SECRET_PATH, 500, "{\"detail\":\"" SECRET "\"}", SYMFONIC_TEST_AFTER_CLOSE, NULL);
      port = symfonic_test_upstream_get_port (fake);
      break;
    case FAILURE_GARBAGE:
      fake = symfonic_test_upstream_new ();
      url = add_scenario (fake, SECRET_PATH, 200,
                          "\x01garbage " SECRET "\nevent: " SECRET "\ndata: {\"" SECRET "\":1}\n\n" TURN,
                          SYMFONIC_TEST_AFTER_CLOSE, NULL);
      port = symfonic_test_upstream_get_port (fake);
      break;
    case FAILURE_TIMEOUT:
      fake = symfonic_test_upstream_new ();
      url = add_scenario (fake, SECRET_PATH, 200, ": " SECRET "\n", SYMFONIC_TEST_AFTER_STALL, NULL);
      port = symfonic_test_upstream_get_port (fake);
      settings = "timeout=1";
      break;
    default:
      g_assert_not_reached ();
    }
  if (port != 0)
    {
      g_ptr_array_add (secrets, g_strdup ("127.0.0.1"));
      g_ptr_array_add (secrets, g_strdup_printf (":%u", port));
    }
  g_ptr_array_add (secrets, g_strdup (SECRET));
  g_ptr_array_add (secrets, g_strdup (SECRET_PATH));
  g_ptr_array_add (secrets, g_strdup ("secret-runtime"));
  g_ptr_array_add (secrets, g_strdup (RUNTIME_KEY));
  g_ptr_array_add (secrets, g_strdup ("http:"));
  /* what GIO and libsoup say about these failures */
  g_ptr_array_add (secrets, g_strdup ("resolving"));
  g_ptr_array_add (secrets, g_strdup ("Connection refused"));
  g_ptr_array_add (secrets, g_strdup ("Could not connect"));
  g_ptr_array_add (secrets, g_strdup ("HTTP 500"));
  g_ptr_array_add (secrets, g_strdup ("Internal Server Error"));
  g_ptr_array_add (secrets, g_strdup ("silent"));

  server = gateway_new (url, settings);

  for (Route route = 0; route < N_ROUTES; route++)
    {
      guint status = 0;
      g_autofree char *json = NULL;
      g_autofree char *expected = NULL;
      g_autofree char *seen = request_error (server, route, &status, &json);
      guint frame_status = route == ROUTE_RESUME ? 400 : c->status;

      g_test_message ("%s on %s: HTTP %u %s", c->name, route_paths[route], status, json);
      /* the streams had begun: the error is their terminal frame */
      g_assert_cmpuint (status, ==, route == ROUTE_TYPED || route == ROUTE_CHUNKS ? 200 : frame_status);
      expected = g_strdup_printf ("{\"detail\":\"" OPAQUE "\",\"status\":%u,\"code\":\"%s\"}",
                                  frame_status, c->code);
      g_assert_cmpstr (json, ==, expected);

      for (guint i = 0; i < secrets->len; i++)
        {
          if (strstr (seen, g_ptr_array_index (secrets, i)) != NULL)
            g_error ("%s on %s shows “%s”:\n%s", c->name, route_paths[route],
                     (const char *) g_ptr_array_index (secrets, i), seen);
        }
    }

  symfonic_server_stop (server);
}

/* --- item: redirects ---------------------------------------------------- */

/* One typed request; returns the last frame's event name. */
static char *
stream_last_event (SymfonicServer *server)
{
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autofree char *url = symfonic_test_server_dup_url (server, "/typed");
  g_autoptr(SymfonicTestStream) stream = symfonic_test_stream_post (session, url, BODY, NULL);
  SymfonicTestFrame *last;

  symfonic_test_stream_wait_done (stream);
  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, 200);
  g_assert_cmpuint (stream->frames->len, >=, 1);
  last = g_ptr_array_index (stream->frames, stream->frames->len - 1);
  if (g_str_equal (last->event, "error"))
    g_assert_cmpstr (last->data, ==, "{\"detail\":\"" OPAQUE "\",\"status\":502,\"code\":\"upstream_error\"}");

  return g_strdup (last->event);
}

/* A runtime that points elsewhere gets no request there: not the POST,
 * not a GET, not the runtime's key. */
static void
test_redirect_refused (void)
{
  static const guint statuses[] = { 301, 302, 303, 307, 308 };
  g_autoptr(SymfonicTestUpstream) runtime = symfonic_test_upstream_new ();
  g_autoptr(SymfonicTestUpstream) other = symfonic_test_upstream_new ();
  g_autofree char *elsewhere = add_scenario (other, "/steal", 200, TURN, SYMFONIC_TEST_AFTER_CLOSE, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (statuses); i++)
    {
      g_autofree char *path = g_strdup_printf ("/moved-%u", statuses[i]);
      g_autofree char *url = add_scenario (runtime, path, statuses[i], "", SYMFONIC_TEST_AFTER_CLOSE, elsewhere);
      g_autoptr(SymfonicServer) server = gateway_new (url, NULL);
      g_autofree char *event = stream_last_event (server);

      g_test_message ("%u to another port: %s", statuses[i], event);
      g_assert_cmpstr (event, ==, "error");
      g_assert_cmpuint (symfonic_test_upstream_count_records (runtime, path, NULL), ==, 1);
      symfonic_server_stop (server);
    }

  g_assert_cmpuint (symfonic_test_upstream_count_records (other, "/steal", NULL), ==, 0);
}

/* follow-redirects=true follows the runtime's own origin, with the
 * invocation and the key, and still refuses any other. */
static void
test_redirect_same_origin (void)
{
  g_autoptr(SymfonicTestUpstream) runtime = symfonic_test_upstream_new ();
  g_autoptr(SymfonicTestUpstream) other = symfonic_test_upstream_new ();
  g_autofree char *elsewhere = add_scenario (other, "/steal", 200, TURN, SYMFONIC_TEST_AFTER_CLOSE, NULL);
  g_autofree char *same = add_scenario (runtime, "/run", 302, "", SYMFONIC_TEST_AFTER_CLOSE, "/v2/run");
  g_autofree char *cross = add_scenario (runtime, "/cross", 307, "", SYMFONIC_TEST_AFTER_CLOSE, elsewhere);
  g_autofree char *loop = add_scenario (runtime, "/loop", 308, "", SYMFONIC_TEST_AFTER_CLOSE, "/loop");
  SymfonicTestUpstreamRecord *record;

  /* reached only through the redirect from /run */
  g_free (add_scenario (runtime, "/v2/run", 200, TURN, SYMFONIC_TEST_AFTER_CLOSE, NULL));

  {
    g_autoptr(SymfonicServer) server = gateway_new (same, "follow-redirects=true");
    g_autofree char *event = stream_last_event (server);

    g_assert_cmpstr (event, ==, "ResponseCompleteEvent");
    record = symfonic_test_upstream_wait_record (runtime, "/v2/run", NULL);
    g_assert_cmpstr (record->query, ==, "hello");
    g_assert_cmpstr (soup_message_headers_get_one (record->headers, "X-Runtime-Key"), ==, RUNTIME_KEY);
    symfonic_server_stop (server);
  }

  {
    g_autoptr(SymfonicServer) server = gateway_new (cross, "follow-redirects=true");
    g_autofree char *event = stream_last_event (server);

    g_assert_cmpstr (event, ==, "error");
    g_assert_cmpuint (symfonic_test_upstream_count_records (other, "/steal", NULL), ==, 0);
    symfonic_server_stop (server);
  }

  /* a loop ends, in a handful of hops */
  {
    g_autoptr(SymfonicServer) server = gateway_new (loop, "follow-redirects=true");
    g_autofree char *event = stream_last_event (server);

    g_assert_cmpstr (event, ==, "error");
    g_assert_cmpuint (symfonic_test_upstream_count_records (runtime, "/loop", NULL), <=, 6);
    symfonic_server_stop (server);
  }
}

/* --- item: the connection cap ------------------------------------------- */

#define CAP 2

static SymfonicTestStream *
open_stream (SoupSession    *session,
             SymfonicServer *server)
{
  g_autofree char *url = symfonic_test_server_dup_url (server, "/typed");
  SymfonicTestStream *stream = symfonic_test_stream_post (session, url, BODY, NULL);

  symfonic_test_stream_wait_frames (stream, 1);
  g_assert_cmpuint (stream->status, ==, 200);
  g_assert_false (stream->done);

  return stream;
}

static void
test_connection_cap (void)
{
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autofree char *url = add_scenario (fake, "/forever", 200, ONE_DELTA, SYMFONIC_TEST_AFTER_KEEPALIVE, NULL);
  g_autofree char *settings = g_strdup_printf ("max-connections=%u", CAP);
  g_autoptr(SymfonicServer) server = gateway_new (url, settings);
  g_autofree char *typed = symfonic_test_server_dup_url (server, "/typed");
  g_autofree char *chat = symfonic_test_server_dup_url (server, "/chat");
  SoupSession *sessions[CAP];
  SymfonicTestStream *streams[CAP];
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  gint64 deadline;
  gboolean served = FALSE;

  for (guint i = 0; i < CAP; i++)
    {
      sessions[i] = symfonic_test_session_new ();
      streams[i] = open_stream (sessions[i], server);
    }

  /* one more: refused before any byte of a stream, at once */
  for (guint i = 0; i < 2; i++)
    {
      const char *url_i = i == 0 ? typed : chat;
      gint64 start = g_get_monotonic_time ();
      g_autoptr(SymfonicTestResponse) refused =
        symfonic_test_request (session, "POST", url_i, "application/json", BODY, NULL);
      gint64 took = g_get_monotonic_time () - start;

      g_test_message ("%s at the cap: %u after %" G_GINT64_FORMAT " ms", url_i, refused->status, took / 1000);
      g_assert_cmpuint (refused->status, ==, 503);
      g_assert_cmpstr (soup_message_headers_get_one (refused->headers, "Retry-After"), ==, "1");
      g_assert_cmpstr (soup_message_headers_get_content_type (refused->headers, NULL), ==, "application/json");
      g_assert_cmpstr (symfonic_test_response_get_text (refused), ==,
                       "{\"detail\":\"The gateway is busy; retry later\",\"status\":503,\"code\":\"overloaded\"}");
      g_assert_cmpint (took, <, 5 * G_USEC_PER_SEC);
    }
  g_assert_cmpuint (symfonic_test_upstream_count_records (fake, "/forever", NULL), ==, CAP);

  /* the running streams were not disturbed */
  for (guint i = 0; i < CAP; i++)
    g_assert_false (streams[i]->done);

  /* a stream that ends gives its connection back */
  symfonic_test_stream_close (streams[0]);
  soup_session_abort (sessions[0]);
  deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while (!served && g_get_monotonic_time () < deadline)
    {
      g_autoptr(SymfonicTestStream) next = symfonic_test_stream_post (session, typed, BODY, NULL);

      symfonic_test_stream_wait_headers (next);
      served = next->status == 200;
      if (!served)
        g_usleep (50 * G_TIME_SPAN_MILLISECOND);
      symfonic_test_stream_close (next);
    }
  soup_session_abort (session);
  g_assert_true (served);

  for (guint i = 0; i < CAP; i++)
    {
      symfonic_test_stream_free (streams[i]);
      g_object_unref (sessions[i]);
    }
  symfonic_server_stop (server);
}

/* --- item: the shipped pipeline cleans every answer ------------------------ */

#define CLEAN_TEXT "Tea is calm."
#define MEMORY_TURN \
  "event: TextDeltaEvent\ndata: {\"text\":\"Tea is calm [sem\"}\n\n" \
  "event: TextDeltaEvent\ndata: {\"text\":\"antic:n1].<memory_\"}\n\n" \
  "event: TextDeltaEvent\ndata: {\"text\":\"ops>[{\\\"op\\\":\\\"add\\\"}]</memory_ops>\"}\n\n" \
  "event: ResponseCompleteEvent\ndata: {\"text\":\"Tea is calm [semantic:n1].<memory_ops>" \
  "[{\\\"op\\\":\\\"add\\\"}]</memory_ops>\",\"duration_ms\":1}\n\n"
/* the extraction stage sees no block here; removing the tag makes one */
#define FORMED_TURN \
  "event: TextDeltaEvent\ndata: {\"text\":\"Tea is calm <memory[sem\"}\n\n" \
  "event: TextDeltaEvent\ndata: {\"text\":\"antic]_ops>[{\\\"op\\\":\\\"add\\\",\\\"v\\\":\\\"XYZZY\\\"}]</memory\"}\n\n" \
  "event: TextDeltaEvent\ndata: {\"text\":\"_ops>.\"}\n\n" \
  "event: ResponseCompleteEvent\ndata: {\"text\":\"Tea is calm <memory[semantic]_ops>" \
  "[{\\\"op\\\":\\\"add\\\",\\\"v\\\":\\\"XYZZY\\\"}]</memory_ops>.\",\"duration_ms\":1}\n\n"

typedef struct
{
  const char *turn;
  const char *clean;
  guint       n_ops;
} CleanCase;

static const CleanCase clean_cases[] = {
  { MEMORY_TURN, CLEAN_TEXT, 1 },
  { FORMED_TURN, "Tea is calm .", 0 },
};

/* data/pipelines/default.pipeline as shipped, its source replaced by a
 * runtime at @url. */
static SymfonicServer *
default_pipeline_new (const char *url)
{
  g_autofree char *dir = g_build_filename (SYMFONIC_TEST_DATA_DIR, "pipelines", NULL);
  g_autofree char *path = g_build_filename (dir, "default.pipeline", NULL);
  g_autoptr(GKeyFile) key_file = g_key_file_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;

  g_key_file_load_from_file (key_file, path, G_KEY_FILE_KEEP_COMMENTS, &error);
  g_assert_no_error (error);
  g_assert_true (g_key_file_remove_group (key_file, "source:demo", NULL));
  g_key_file_set_string (key_file, "source:demo", "type", "runtime");
  g_key_file_set_string (key_file, "source:demo", "url", url);
  text = g_key_file_to_data (key_file, NULL, NULL);

  return symfonic_test_server_new (text, dir, 2);
}

static void
test_default_pipeline_cleans (gconstpointer data)
{
  const CleanCase *c = data;
  static const char * const paths[] = {
    "/api/v1/stream/typed", "/api/v1/stream", "/api/v1/chat", "/api/v1/resume",
  };
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autofree char *url = add_scenario (fake, "/run", 200, c->turn, SYMFONIC_TEST_AFTER_CLOSE, NULL);
  g_autoptr(SymfonicServer) server = default_pipeline_new (url);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();

  for (guint i = 0; i < G_N_ELEMENTS (paths); i++)
    {
      g_autofree char *route_url = symfonic_test_server_dup_url (server, paths[i]);
      g_autofree char *seen = NULL;

      if (i < 2)
        {
          g_autoptr(SymfonicTestStream) stream =
            symfonic_test_stream_post (session, route_url, BODY, "Authorization", "Bearer demo-token-alice",
                                       "X-Tenant-ID", "acme", NULL);

          symfonic_test_stream_wait_done (stream);
          g_assert_cmpuint (stream->status, ==, 200);
          seen = g_strdup (stream->raw->str);
          g_assert_nonnull (strstr (seen, c->clean));
        }
      else
        {
          g_autoptr(SymfonicTestResponse) response =
            symfonic_test_request (session, "POST", route_url, "application/json", BODY,
                                   "Authorization", "Bearer demo-token-alice", "X-Tenant-ID", "acme", NULL);
          g_autoptr(JsonNode) answer = NULL;
          JsonObject *object;

          g_assert_cmpuint (response->status, ==, 200);
          seen = g_strdup (symfonic_test_response_get_text (response));
          answer = symfonic_test_json_parse (seen);
          object = json_node_get_object (answer);
          g_assert_cmpstr (json_object_get_string_member (object, "response"), ==, c->clean);
          g_assert_cmpuint (json_array_get_length (json_object_get_array_member (object, "memory_ops")), ==, c->n_ops);
        }

      g_test_message ("%s: %s", paths[i], seen);
      g_assert_null (strstr (seen, "<memory_ops>"));
      g_assert_null (strstr (seen, "</memory_ops>"));
      g_assert_null (strstr (seen, "[semantic"));
      g_assert_null (strstr (seen, "XYZZY"));
    }

  symfonic_server_stop (server);
}

int
main (int   argc,
      char *argv[])
{
  symfonic_test_init (&argc, &argv);

  for (guint i = 0; i < G_N_ELEMENTS (failure_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/upstream-safety/failure/%s", failure_cases[i].name);

      g_test_add_data_func (path, &failure_cases[i], test_failure_leaks_nothing);
    }
  g_test_add_func ("/upstream-safety/redirect/refused", test_redirect_refused);
  g_test_add_func ("/upstream-safety/redirect/same-origin", test_redirect_same_origin);
  g_test_add_func ("/upstream-safety/connection-cap", test_connection_cap);
  g_test_add_data_func ("/upstream-safety/default-pipeline-cleans", &clean_cases[0], test_default_pipeline_cleans);
  g_test_add_data_func ("/upstream-safety/default-pipeline-drops-formed-block", &clean_cases[1],
                        test_default_pipeline_cleans);

  return g_test_run ();
}
