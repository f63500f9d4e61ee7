/* test-admission-http.c: admission and errors, end to end, on the default pipeline
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The acceptance test of DESIGN sections 3 and 6: the real
 * data/pipelines/default.pipeline, served in-process on 127.0.0.1 by two
 * workers and asked over real HTTP. Every refusal of the table, on every
 * invocation route, must be JSON with exactly {"detail","status","code"}
 * and its headers, never an event stream; a failure after the handshake
 * must be exactly one `event: error` frame that never shows the upstream's
 * own message; a client that hangs up is a cancellation, not a failure.
 *
 * Metering state lives in the stages of the one server this file starts,
 * for the whole run, so every test that spends a limit owns its key:
 *
 *   bob on globex      the rate limit (no other test sends bob's token)
 *   admin on globex    a full burst after refusals that must spend nothing
 *   tenant demo        the token budget (no other test names demo)
 *   alice on acme      everything that must be admitted; a handful of
 *                      requests, far below the burst of 20
 *
 * Refusals that happen before admission (decode, size, media type, auth)
 * spend nothing.
 */
#include <string.h>

#include "symfonic-test-support.h"

#define ALICE "Bearer demo-token-alice"
#define BOB "Bearer demo-token-bob"
#define ADMIN "Bearer demo-token-admin"
#define QUERY "{\"query\":\"Why is the sky blue?\"}"
#define OPAQUE_DETAIL "Internal server error"
/* the error line of data/transcripts/upstream-failure.jsonl: the log's,
 * never a client's */
#define UPSTREAM_SECRET "connection to model provider reset"
#define MAX_BODY 1048576
#define NOT_JSON "The request body must be one strict JSON document (RFC 8259) nested at most 64 levels deep"

typedef enum
{
  ROUTE_TYPED,
  ROUTE_CHUNKS,
  ROUTE_CHAT,
  ROUTE_RESUME,
  N_ROUTES
} RouteIndex;

static const char * const routes[N_ROUTES] = {
  "/api/v1/stream/typed",
  "/api/v1/stream",
  "/api/v1/chat",
  "/api/v1/resume",
};

static SymfonicServer *server;
static SoupSession *session;
static char *base_url;

/* the repository's data folder: the default pipeline, and what it names */
static const char *
data_dir (void)
{
  const char *dir = g_getenv ("SYMFONIC_TEST_DATA_DIR");

  return dir != NULL ? dir : SYMFONIC_TEST_DATA_DIR;
}

/* --- what the gateway logs ---------------------------------------------- */

/* Messages of the library's domain and of its plugins ("symfonic-*"), at
 * MESSAGE and above, recorded from every worker thread. */
static GMutex log_lock;
static GPtrArray *log_lines;

static GLogWriterOutput
record_log (GLogLevelFlags   log_level,
            const GLogField *fields,
            gsize            n_fields,
            gpointer         user_data)
{
  const char *domain = NULL;
  const char *message = NULL;

  for (gsize i = 0; i < n_fields; i++)
    {
      if (g_str_equal (fields[i].key, "GLIB_DOMAIN"))
        domain = fields[i].value;
      else if (g_str_equal (fields[i].key, "MESSAGE"))
        message = fields[i].value;
    }

  if (domain != NULL && message != NULL &&
      (log_level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE)) != 0 &&
      (g_str_equal (domain, "Symfonic") ||
       (g_str_has_prefix (domain, "symfonic-") && !g_str_equal (domain, G_LOG_DOMAIN))))
    {
      g_mutex_lock (&log_lock);
      g_ptr_array_add (log_lines, g_strdup_printf ("%s: %s", domain, message));
      g_mutex_unlock (&log_lock);
    }

  return g_log_writer_default (log_level, fields, n_fields, user_data);
}

static guint
log_mark (void)
{
  guint mark;

  g_mutex_lock (&log_lock);
  mark = log_lines->len;
  g_mutex_unlock (&log_lock);

  return mark;
}

/* Counts the lines logged since @mark that contain @needle. */
static guint
log_count_since (guint       mark,
                 const char *needle)
{
  guint count = 0;

  g_mutex_lock (&log_lock);
  for (guint i = mark; i < log_lines->len; i++)
    {
      const char *line = g_ptr_array_index (log_lines, i);

      if (strstr (line, needle) != NULL)
        {
          g_test_message ("logged: %s", line);
          count++;
        }
    }
  g_mutex_unlock (&log_lock);

  return count;
}

/* --- requests through libsoup ------------------------------------------ */

typedef struct
{
  SoupMessage          *message;
  SymfonicTestResponse *response;
  guint                *pending;
} Shot;

static void
shot_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  Shot *shot = user_data;
  g_autoptr(GError) error = NULL;
  GBytes *body;

  body = soup_session_send_and_read_finish (SOUP_SESSION (object), result, &error);
  g_assert_no_error (error);

  shot->response = g_new0 (SymfonicTestResponse, 1);
  shot->response->status = soup_message_get_status (shot->message);
  shot->response->headers = soup_message_headers_ref (soup_message_get_response_headers (shot->message));
  shot->response->body = body;
  (*shot->pending)--;
}

static gboolean
none_pending (gpointer data)
{
  return *(guint *) data == 0;
}

/* Sends @n copies of one request at once, without waiting for any answer,
 * and returns the @n responses (in the order sent). @headers is a
 * NULL-terminated list of name, value pairs; @content_type and @body may
 * be NULL for a request without a body. */
static GPtrArray *
send_burst (guint               n,
            const char         *method,
            const char         *path,
            const char         *content_type,
            const char         *body,
            const char * const *headers)
{
  g_autofree char *url = g_strconcat (base_url, path, NULL);
  g_autofree Shot *shots = g_new0 (Shot, n);
  GPtrArray *responses = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_test_response_free);
  guint pending = n;

  for (guint i = 0; i < n; i++)
    {
      SoupMessageHeaders *request_headers;

      shots[i].message = soup_message_new (method, url);
      shots[i].pending = &pending;
      g_assert_nonnull (shots[i].message);
      request_headers = soup_message_get_request_headers (shots[i].message);
      if (body != NULL)
        {
          g_autoptr(GBytes) bytes = g_bytes_new (body, strlen (body));

          soup_message_set_request_body_from_bytes (shots[i].message, content_type, bytes);
        }
      for (guint h = 0; headers != NULL && headers[h] != NULL; h += 2)
        soup_message_headers_replace (request_headers, headers[h], headers[h + 1]);

      soup_session_send_and_read_async (session, shots[i].message, G_PRIORITY_DEFAULT, NULL,
                                        shot_cb, &shots[i]);
    }

  g_assert_true (symfonic_test_iterate_until (NULL, none_pending, &pending, SYMFONIC_TEST_WAIT_MS));

  for (guint i = 0; i < n; i++)
    {
      g_ptr_array_add (responses, g_steal_pointer (&shots[i].response));
      g_object_unref (shots[i].message);
    }

  return responses;
}

static SymfonicTestResponse *
send_one (const char         *method,
          const char         *path,
          const char         *content_type,
          const char         *body,
          const char * const *headers)
{
  g_autoptr(GPtrArray) responses = send_burst (1, method, path, content_type, body, headers);

  return g_ptr_array_steal_index (responses, 0);
}

/* A JSON POST with the usual credentials headers; NULL leaves one out. */
static SymfonicTestResponse *
post (const char *path,
      const char *body,
      const char *authorization,
      const char *tenant,
      const char *transcript)
{
  const char *headers[7] = { NULL, };
  guint n = 0;

  if (authorization != NULL)
    {
      headers[n++] = "Authorization";
      headers[n++] = authorization;
    }
  if (tenant != NULL)
    {
      headers[n++] = "X-Tenant-ID";
      headers[n++] = tenant;
    }
  if (transcript != NULL)
    {
      headers[n++] = "X-Symfonic-Transcript";
      headers[n++] = transcript;
    }

  return send_one ("POST", path, "application/json", body, headers);
}

/* --- requests through a raw socket ------------------------------------- */

/* What libsoup would hide: a request whose headers announce one body and
 * whose bytes are another, and a client that stops sending. Every socket
 * operation gives up after 2 s. */
static GSocketConnection *
raw_connect (void)
{
  g_autoptr(GSocketClient) client = g_socket_client_new ();
  g_autoptr(GError) error = NULL;
  GSocketConnection *connection;

  g_socket_client_set_enable_proxy (client, FALSE);
  g_socket_client_set_timeout (client, 2);
  connection = g_socket_client_connect_to_host (client, "127.0.0.1",
                                                symfonic_server_get_port (server), NULL, &error);
  g_assert_no_error (error);

  return connection;
}

/* Writes what it can of @data: the server may answer and close before
 * taking all of it, which is not a failure of a test about the answer. */
static void
raw_write (GSocketConnection *connection,
           const char        *data,
           gsize              length)
{
  g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (connection)),
                             data, length, NULL, NULL, NULL);
}

/* Reads one response with a Content-Length body. Returns %NULL if no
 * response head came. */
static SymfonicTestResponse *
raw_read_response (GSocketConnection *connection)
{
  GSocket *socket = g_socket_connection_get_socket (connection);
  g_autoptr(GString) received = g_string_new (NULL);
  g_autoptr(SoupMessageHeaders) headers = soup_message_headers_new (SOUP_MESSAGE_HEADERS_RESPONSE);
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) whole = NULL;
  SymfonicTestResponse *response;
  const char *end_of_head = NULL;
  gsize head_length = 0;
  goffset content_length = -1;
  guint status = 0;

  for (;;)
    {
      char buffer[4096];
      gssize n;

      n = g_socket_receive (socket, buffer, sizeof buffer, NULL, &error);
      if (n <= 0)
        {
          if (error != NULL)
            g_test_message ("raw read ended: %s", error->message);
          g_clear_error (&error);
          break;
        }
      g_string_append_len (received, buffer, n);

      if (end_of_head == NULL && (end_of_head = strstr (received->str, "\r\n\r\n")) != NULL)
        {
          head_length = end_of_head - received->str + 4;
          g_assert_true (soup_headers_parse_response (received->str, head_length - 2, headers,
                                                      NULL, &status, NULL));
          content_length = soup_message_headers_get_content_length (headers);
        }
      if (end_of_head != NULL && content_length >= 0 &&
          received->len >= head_length + content_length)
        break;
    }

  /* no answer at all: the caller decides whether that fails the test */
  if (end_of_head == NULL)
    return NULL;
  g_assert_cmpint (content_length, >=, 0);
  g_assert_cmpuint (received->len, ==, head_length + content_length);

  /* NUL-terminated, like libsoup's: the GString's own NUL follows */
  whole = g_bytes_new (received->str + head_length, content_length + 1);
  response = g_new0 (SymfonicTestResponse, 1);
  response->status = status;
  response->headers = soup_message_headers_ref (headers);
  response->body = g_bytes_new_from_bytes (whole, 0, content_length);

  return response;
}

static SymfonicTestResponse *
raw_exchange (const char *head,
              GBytes     *body,
              gint64     *elapsed_us)
{
  g_autoptr(GSocketConnection) connection = raw_connect ();
  SymfonicTestResponse *response;
  gint64 start_us;

  start_us = g_get_monotonic_time ();
  raw_write (connection, head, strlen (head));
  if (body != NULL)
    raw_write (connection, g_bytes_get_data (body, NULL), g_bytes_get_size (body));
  response = raw_read_response (connection);
  *elapsed_us = g_get_monotonic_time () - start_us;

  return response;
}

/* Whether the server closed @connection: its next read ends (EOF or a
 * reset) within the socket's 2 s timeout. */
static gboolean
raw_is_closed (GSocketConnection *connection)
{
  GSocket *socket = g_socket_connection_get_socket (connection);
  g_autoptr(GError) error = NULL;
  char buffer[256];
  gssize n = g_socket_receive (socket, buffer, sizeof buffer, NULL, &error);

  return n == 0 || (error != NULL && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT));
}

static gboolean
never (gpointer data)
{
  return FALSE;
}

static gsize
resident_bytes (void)
{
  return symfonic_test_memory_bytes ("VmRSS");
}

/* Asserts that @after is less than @bound over @before. Not under
 * AddressSanitizer, whose quarantine keeps freed memory resident: there
 * the figure says nothing about what the server keeps. */
static void
assert_memory_growth_below (gsize before,
                            gsize after,
                            gsize bound)
{
#ifdef SYMFONIC_TEST_UNDER_ASAN
  g_test_message ("memory growth not checked under AddressSanitizer");
#else
  g_assert_cmpuint (after, <, before + bound);
#endif
}

/* A request head as alice on acme, or without credentials. */
static char *
raw_head_as (const char *path,
             gboolean    credentials,
             const char *framing)
{
  return g_strdup_printf ("POST %s HTTP/1.1\r\n"
                          "Host: 127.0.0.1:%u\r\n"
                          "Content-Type: application/json\r\n"
                          "%s"
                          "X-Tenant-ID: acme\r\n"
                          "%s\r\n"
                          "\r\n",
                          path, symfonic_server_get_port (server),
                          credentials ? "Authorization: " ALICE "\r\n" : "", framing);
}

static char *
raw_head (const char *path,
          const char *framing)
{
  return raw_head_as (path, TRUE, framing);
}

/* A body that would be a valid AgentRequest but for its size: the
 * refusal can only be about the size. */
static GString *
padded_request (gsize length)
{
  GString *body = g_string_new ("{\"query\":\"");

  g_assert_cmpuint (length, >=, body->len + 2);
  while (body->len < length - 2)
    g_string_append_c (body, 'a');
  g_string_append (body, "\"}");

  return body;
}

/* --- assertions --------------------------------------------------------- */

/* The frozen refusal: status, a strict-JSON object of exactly "detail"
 * (@detail, or any string when NULL), "status" and "code", and never an
 * event stream. Returns the detail. */
static char *
assert_refusal (SymfonicTestResponse *response,
                guint                 status,
                const char           *code,
                const char           *detail)
{
  const char *text = symfonic_test_response_get_text (response);
  g_autoptr(JsonNode) root = NULL;
  JsonObject *object;
  JsonNode *member;

  if (response->status != status)
    g_test_message ("unexpected answer %u: %s", response->status, text);
  g_assert_cmpuint (response->status, ==, status);
  g_assert_cmpstr (soup_message_headers_get_content_type (response->headers, NULL), ==, "application/json");
  g_assert_null (strstr (text, "event:"));

  root = symfonic_test_response_dup_json (response);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (root));
  object = json_node_get_object (root);
  g_assert_cmpuint (json_object_get_size (object), ==, 3);

  member = json_object_get_member (object, "status");
  g_assert_nonnull (member);
  g_assert_true (JSON_NODE_HOLDS_VALUE (member));
  g_assert_cmpint (json_node_get_value_type (member), ==, G_TYPE_INT64);
  g_assert_cmpint (json_node_get_int (member), ==, status);

  member = json_object_get_member (object, "code");
  g_assert_nonnull (member);
  g_assert_true (JSON_NODE_HOLDS_VALUE (member));
  g_assert_cmpint (json_node_get_value_type (member), ==, G_TYPE_STRING);
  g_assert_cmpstr (json_node_get_string (member), ==, code);

  member = json_object_get_member (object, "detail");
  g_assert_nonnull (member);
  g_assert_true (JSON_NODE_HOLDS_VALUE (member));
  g_assert_cmpint (json_node_get_value_type (member), ==, G_TYPE_STRING);
  g_assert_cmpstr (json_node_get_string (member), !=, "");
  if (detail != NULL)
    g_assert_cmpstr (json_node_get_string (member), ==, detail);

  /* a 5xx never echoes the upstream's text, and nothing else should */
  g_assert_null (strstr (text, UPSTREAM_SECRET));

  return g_strdup (json_node_get_string (member));
}

static void
assert_unauthorized (SymfonicTestResponse *response,
                     const char           *detail)
{
  g_free (assert_refusal (response, 401, "unauthorized", detail));

  g_assert_cmpstr (soup_message_headers_get_one (response->headers, "WWW-Authenticate"), ==, "Bearer");
}

/* Retry-After in whole seconds, at least 1; returns it. */
static guint64
assert_retry_after (SymfonicTestResponse *response)
{
  const char *value = soup_message_headers_get_one (response->headers, "Retry-After");
  g_autoptr(GError) error = NULL;
  guint64 seconds = 0;

  g_assert_nonnull (value);
  g_ascii_string_to_unsigned (value, 10, 1, 3600, &seconds, &error);
  g_assert_no_error (error);

  return seconds;
}

/* Parses a whole event-stream body. */
static GPtrArray *
parse_frames (SymfonicTestResponse *response)
{
  g_autoptr(SymfonicTestSseParser) parser = symfonic_test_sse_parser_new ();
  GPtrArray *frames = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_test_frame_free);
  gsize length;
  const char *data = g_bytes_get_data (response->body, &length);

  symfonic_test_sse_parser_feed (parser, data, length, frames);
  g_assert_true (symfonic_test_sse_parser_is_between_frames (parser));

  return frames;
}

static void
assert_event_stream_headers (SymfonicTestResponse *response)
{
  g_assert_cmpuint (response->status, ==, 200);
  g_assert_cmpstr (soup_message_headers_get_content_type (response->headers, NULL), ==, "text/event-stream");
  g_assert_cmpstr (soup_message_headers_get_one (response->headers, "Cache-Control"), ==, "no-cache");
}

/* A typed stream that ended with its success terminal and nothing after. */
static void
assert_typed_success (SymfonicTestResponse *response)
{
  g_autoptr(GPtrArray) frames = NULL;
  SymfonicTestFrame *last;

  assert_event_stream_headers (response);
  frames = parse_frames (response);
  g_assert_cmpuint (frames->len, >, 1);
  last = g_ptr_array_index (frames, frames->len - 1);
  g_assert_cmpstr (last->event, ==, "ResponseCompleteEvent");
  for (guint i = 0; i < frames->len; i++)
    g_assert_cmpstr (((SymfonicTestFrame *) g_ptr_array_index (frames, i))->event, !=, "error");
}

static void
assert_answer_success (SymfonicTestResponse *response)
{
  g_autoptr(JsonNode) root = NULL;
  JsonObject *object;

  g_assert_cmpuint (response->status, ==, 200);
  g_assert_cmpstr (soup_message_headers_get_content_type (response->headers, NULL), ==, "application/json");
  root = symfonic_test_response_dup_json (response);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (root));
  object = json_node_get_object (root);
  g_assert_true (json_object_has_member (object, "response"));
  g_assert_true (json_object_has_member (object, "run_id"));
  g_assert_true (json_object_has_member (object, "memory_ops"));
}

/* --- the refusal table, on every route ---------------------------------- */

static void
test_missing_authorization (void)
{
  for (guint r = 0; r < N_ROUTES; r++)
    {
      g_autoptr(SymfonicTestResponse) response = post (routes[r], QUERY, NULL, "acme", NULL);

      g_test_message ("%s", routes[r]);
      assert_unauthorized (response, "Missing Authorization header");
    }
}

static void
test_invalid_token (void)
{
  static const struct
  {
    const char *authorization;
    const char *detail;
  } cases[] = {
    { "Bearer demo-token-mallory", "Invalid bearer token" },
    /* one character short of alice's */
    { "Bearer demo-token-alic", "Invalid bearer token" },
    /* the stored digest is not the token */
    { "Bearer 1159bf80f41ccf3d5efafda50135b734fe094f032809efd1a5d85455c5359b40", "Invalid bearer token" },
    { "Basic YWxpY2U6ZGVtbw==", "The Authorization header must be “Bearer <token>”" },
  };

  for (guint r = 0; r < N_ROUTES; r++)
    for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
      {
        g_autoptr(SymfonicTestResponse) response = post (routes[r], QUERY, cases[i].authorization, "acme", NULL);

        g_test_message ("%s, Authorization: %s", routes[r], cases[i].authorization);
        assert_unauthorized (response, cases[i].detail);
        /* the refusal never echoes what was presented */
        g_assert_null (strstr (symfonic_test_response_get_text (response), cases[i].authorization + 7));
      }
}

static void
test_missing_tenant (void)
{
  for (guint r = 0; r < N_ROUTES; r++)
    {
      g_autoptr(SymfonicTestResponse) response = post (routes[r], QUERY, ALICE, NULL, NULL);

      g_test_message ("%s", routes[r]);
      assert_unauthorized (response, "Missing X-Tenant-ID header");
    }
}

static void
test_forbidden_tenant (void)
{
  /* a tenant that exists and one that does not get the same answer */
  static const char * const tenants[] = { "globex", "no-such-tenant" };

  for (guint r = 0; r < N_ROUTES; r++)
    for (guint i = 0; i < G_N_ELEMENTS (tenants); i++)
      {
        g_autoptr(SymfonicTestResponse) response = post (routes[r], QUERY, ALICE, tenants[i], NULL);
        g_autofree char *detail = NULL;

        g_test_message ("%s, alice -> %s", routes[r], tenants[i]);
        detail = assert_refusal (response, 403, "forbidden", "Not permitted to act for this tenant");
        g_assert_null (soup_message_headers_get_one (response->headers, "WWW-Authenticate"));
      }
}

static void
test_bad_request (void)
{
  static const struct
  {
    const char *body;
    const char *detail;
  } cases[] = {
    { "{\"query\":", NOT_JSON },
    { "{\"query\":\"hi\",}", NOT_JSON },
    { "", NOT_JSON },
    { "[\"hi\"]", "The request body must be a JSON object" },
    { "{}", "“query” is required and must be a string" },
    { "{\"session_id\":\"web:42\"}", "“query” is required and must be a string" },
    { "{\"query\":null}", "“query” is required and must be a string" },
    { "{\"query\":42}", "“query” is required and must be a string" },
    { "{\"query\":true}", "“query” is required and must be a string" },
    { "{\"query\":[\"hi\"]}", "“query” is required and must be a string" },
    { "{\"query\":{\"text\":\"hi\"}}", "“query” is required and must be a string" },
    { "{\"query\":\"\"}", "“query” must not be empty" },
    { "{\"query\":\"hi\",\"session_id\":5}", "“session_id” must be a string or null" },
    { "{\"query\":\"hi\",\"session_id\":[\"a\"]}", "“session_id” must be a string or null" },
    { "{\"query\":\"hi\",\"attachments\":\"file.txt\"}", "“attachments” must be a list or null" },
    { "{\"query\":\"hi\",\"attachments\":{}}", "“attachments” must be a list or null" },
  };

  for (guint r = 0; r < N_ROUTES; r++)
    for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
      {
        g_autoptr(SymfonicTestResponse) response = post (routes[r], cases[i].body, ALICE, "acme", NULL);
        g_autofree char *detail = NULL;

        g_test_message ("%s, body %s", routes[r], cases[i].body);
        detail = assert_refusal (response, 400, "bad_request", cases[i].detail);
      }
}

static void
assert_alive (void)
{
  g_autoptr(SymfonicTestResponse) response = send_one ("GET", "/healthz", NULL, NULL, NULL);

  g_assert_cmpuint (response->status, ==, 200);
  g_assert_cmpstr (symfonic_test_response_get_text (response), ==, "{\"status\":\"ok\"}");
}

static char *
nest_arrays (const char *before,
             guint       depth,
             const char *after)
{
  GString *text = g_string_new (before);

  for (guint i = 0; i < depth; i++)
    g_string_append_c (text, '[');
  for (guint i = 0; i < depth; i++)
    g_string_append_c (text, ']');
  g_string_append (text, after);

  return g_string_free (text, FALSE);
}

/* Bodies that json-glib took, truncated, or crashed on. With credentials
 * each is a 400 with our own detail; without, it is refused all the same
 * (by authentication or by decoding), and the server lives on. */
static void
test_strict_json (void)
{
  g_autofree char *deep = nest_arrays ("", 100000, "");
  g_autofree char *depth_65 = nest_arrays ("{\"query\":\"hi\",\"attachments\":", 64, "}");
  g_autofree char *depth_64 = nest_arrays ("{\"query\":\"hi\",\"attachments\":", 63, "}");
  const char * const bodies[] = {
    " ",
    " \t\r\n ",
    "/* a comment */",
    "// a comment\n",
    "{\"query\":\"hi\"} /* a comment */",
    "{'query':'hi'}",
    "{\"query\":'hi'}",
    "{\"query\":\"hi\"}{\"query\":\"hi\"}",
    "{\"query\":\"hi\"} {\"query\":\"ho\"}",
    "{\"query\":\"hi\",\"query\":\"ho\"}",
    "{\"query\":\"s\\u0000t\"}",
    "{\"query\":\"hi\",\"session_id\":NaN}",
    "{\"query\":\"\xFF\"}",
    deep,
    depth_65,
  };
  g_autoptr(SymfonicTestResponse) accepted = NULL;

  g_assert_cmpuint (strlen (deep), ==, 200000);
  for (guint r = 0; r < N_ROUTES; r++)
    for (guint i = 0; i < G_N_ELEMENTS (bodies); i++)
      {
        g_autoptr(SymfonicTestResponse) response = post (routes[r], bodies[i], ALICE, "acme", NULL);
        g_autoptr(SymfonicTestResponse) anonymous = post (routes[r], bodies[i], NULL, NULL, NULL);
        g_autoptr(JsonNode) root = NULL;
        g_autofree char *detail = NULL;

        g_test_message ("%s, body %u", routes[r], i);
        detail = assert_refusal (response, 400, "bad_request", NOT_JSON);
        /* nothing of a parser's own wording reaches the client */
        g_assert_null (strstr (detail, "Invalid JSON at byte"));
        g_assert_null (strstr (detail, "<data>"));
        g_assert_null (strstr (detail, "Parse error"));

        g_assert_cmpuint (anonymous->status, >=, 400);
        g_assert_cmpuint (anonymous->status, <, 500);
        g_assert_cmpstr (soup_message_headers_get_content_type (anonymous->headers, NULL), ==, "application/json");
        root = symfonic_test_response_dup_json (anonymous);
        g_assert_true (JSON_NODE_HOLDS_OBJECT (root));

        assert_alive ();
      }

  /* the limit itself still passes */
  accepted = post ("/api/v1/chat", depth_64, ALICE, "acme", NULL);
  assert_answer_success (accepted);
}

static void
test_unsupported_media_type (void)
{
  static const char * const types[] = { "text/plain", "application/x-www-form-urlencoded", "application/jsonl", NULL };

  for (guint r = 0; r < N_ROUTES; r++)
    for (guint i = 0; i < G_N_ELEMENTS (types); i++)
      {
        const char * const headers[] = { "Authorization", ALICE, "X-Tenant-ID", "acme", NULL };
        g_autoptr(SymfonicTestResponse) response = NULL;
        g_autofree char *detail = NULL;

        g_test_message ("%s, Content-Type: %s", routes[r], types[i] != NULL ? types[i] : "(none)");
        response = send_one ("POST", routes[r], types[i], QUERY, headers);
        detail = assert_refusal (response, 415, "unsupported_media_type",
                                 "The request body must be application/json");
      }
}

/* Headers announce 50 MB, a few KB follow, the client then waits: the
 * answer must come from the headers alone, and quickly. @expect adds
 * `Expect: 100-continue`, with which a client promises to wait anyway. */
static void
refuse_declared_length (gboolean expect)
{
  g_autoptr(GString) unanswered = g_string_new (NULL);

  for (guint r = 0; r < N_ROUTES; r++)
    {
      g_autofree char *head = raw_head (routes[r], expect ? "Expect: 100-continue\r\nContent-Length: 52428800"
                                                          : "Content-Length: 52428800");
      g_autoptr(GString) prefix = padded_request (8192);
      g_autoptr(GBytes) body = g_bytes_new (prefix->str, 4096);
      g_autoptr(SymfonicTestResponse) response = NULL;
      g_autofree char *detail = NULL;
      gint64 elapsed_us;

      response = raw_exchange (head, expect ? NULL : body, &elapsed_us);
      if (response == NULL)
        {
          g_test_message ("%s: no answer %" G_GINT64_FORMAT " us after the headers", routes[r], elapsed_us);
          g_string_append_printf (unanswered, " %s", routes[r]);
          continue;
        }
      g_test_message ("%s: 413 after %" G_GINT64_FORMAT " us", routes[r], elapsed_us);
      detail = assert_refusal (response, 413, "payload_too_large",
                               "The request body is larger than 1048576 bytes");
      g_assert_cmpint (elapsed_us, <, 2 * G_USEC_PER_SEC);
    }

  /* not fatal, so that every route is tried */
  if (unanswered->len > 0)
    g_test_fail_printf ("no answer within 2 s to headers declaring 52428800 bytes, followed by "
                        "4096 bytes of body, on:%s; the server waits for the whole body before "
                        "refusing it", unanswered->str);
}

static void
test_payload_too_large_declared_expect (void)
{
  refuse_declared_length (TRUE);
}

static void
test_payload_too_large_declared (void)
{
  refuse_declared_length (FALSE);
}

/* The limit is inclusive: a body of exactly max-body-bytes is read and
 * decoded (and refused for its content), one byte more is not. */
static void
test_payload_limit_boundary (void)
{
  g_autoptr(GString) text = g_string_new ("{\"query\":42,\"pad\":\"");
  g_autoptr(GBytes) at_limit = NULL;
  g_autoptr(GBytes) over_limit = NULL;

  while (text->len < MAX_BODY - 2)
    g_string_append_c (text, 'a');
  g_string_append (text, "\"}");
  g_assert_cmpuint (text->len, ==, MAX_BODY);
  at_limit = g_bytes_new (text->str, text->len);
  g_string_insert_c (text, text->len - 2, 'a');
  over_limit = g_bytes_new (text->str, text->len);

  for (guint r = 0; r < N_ROUTES; r++)
    {
      g_autofree char *head_at = raw_head (routes[r], "Content-Length: 1048576");
      g_autofree char *head_over = raw_head (routes[r], "Content-Length: 1048577");
      g_autoptr(SymfonicTestResponse) at = NULL;
      g_autoptr(SymfonicTestResponse) over = NULL;
      g_autofree char *detail_at = NULL;
      g_autofree char *detail_over = NULL;
      gint64 elapsed_us;

      g_test_message ("%s", routes[r]);
      at = raw_exchange (head_at, at_limit, &elapsed_us);
      g_assert_nonnull (at);
      detail_at = assert_refusal (at, 400, "bad_request", "“query” is required and must be a string");
      over = raw_exchange (head_over, over_limit, &elapsed_us);
      g_assert_nonnull (over);
      detail_over = assert_refusal (over, 413, "payload_too_large",
                                    "The request body is larger than 1048576 bytes");
    }
}

/* No length in the headers: the worker counts the chunks as they come
 * and refuses once the body is over the limit. */
static void
test_payload_too_large_chunked (void)
{
  g_autoptr(GString) request = padded_request (MAX_BODY + 65536);
  g_autoptr(GString) chunked = g_string_new (NULL);
  g_autoptr(GBytes) body = NULL;

  for (gsize offset = 0; offset < request->len; offset += 16384)
    {
      gsize length = MIN (16384, request->len - offset);

      g_string_append_printf (chunked, "%" G_GSIZE_MODIFIER "x\r\n", length);
      g_string_append_len (chunked, request->str + offset, length);
      g_string_append (chunked, "\r\n");
    }
  g_string_append (chunked, "0\r\n\r\n");
  body = g_bytes_new (chunked->str, chunked->len);

  for (guint r = 0; r < N_ROUTES; r++)
    {
      g_autofree char *head = raw_head (routes[r], "Transfer-Encoding: chunked");
      g_autoptr(SymfonicTestResponse) response = NULL;
      g_autofree char *detail = NULL;
      gint64 elapsed_us;

      response = raw_exchange (head, body, &elapsed_us);
      g_assert_nonnull (response);
      g_test_message ("%s: chunked 413 after %" G_GINT64_FORMAT " us", routes[r], elapsed_us);
      detail = assert_refusal (response, 413, "payload_too_large",
                               "The request body is larger than 1048576 bytes");
    }
}

/* --- the order of admission ---------------------------------------------- */

/* Authentication comes before the body: a client without valid
 * credentials learns nothing about its body, whatever it is. */
static void
test_order_auth_before_body (void)
{
  static const char * const bodies[] = { "{\"query\":", " ", "[1,2]", "{\"query\":\"\"}" };
  static const struct
  {
    const char *authorization;
    const char *tenant;
    guint       status;
    const char *code;
    const char *detail;
  } callers[] = {
    { NULL, "acme", 401, "unauthorized", "Missing Authorization header" },
    { "Bearer demo-token-mallory", "acme", 401, "unauthorized", "Invalid bearer token" },
    { ALICE, NULL, 401, "unauthorized", "Missing X-Tenant-ID header" },
    { ALICE, "globex", 403, "forbidden", "Not permitted to act for this tenant" },
  };

  for (guint r = 0; r < N_ROUTES; r++)
    for (guint b = 0; b < G_N_ELEMENTS (bodies); b++)
      {
        for (guint c = 0; c < G_N_ELEMENTS (callers); c++)
          {
            g_autoptr(SymfonicTestResponse) response =
              post (routes[r], bodies[b], callers[c].authorization, callers[c].tenant, NULL);
            g_autofree char *detail = NULL;

            g_test_message ("%s, body '%s', %s on %s", routes[r], bodies[b],
                            callers[c].authorization != NULL ? callers[c].authorization : "nobody",
                            callers[c].tenant != NULL ? callers[c].tenant : "no tenant");
            detail = assert_refusal (response, callers[c].status, callers[c].code, callers[c].detail);
          }
      }

  /* with credentials, the same bodies are what is wrong */
  for (guint r = 0; r < N_ROUTES; r++)
    {
      g_autoptr(SymfonicTestResponse) truncated = post (routes[r], bodies[0], ALICE, "acme", NULL);
      g_autoptr(SymfonicTestResponse) list = post (routes[r], bodies[2], ALICE, "acme", NULL);
      g_autoptr(SymfonicTestResponse) empty = post (routes[r], bodies[3], ALICE, "acme", NULL);

      g_free (assert_refusal (truncated, 400, "bad_request",
                              "The request body must be one strict JSON document (RFC 8259) nested at most 64 levels deep"));
      g_free (assert_refusal (list, 400, "bad_request", "The request body must be a JSON object"));
      g_free (assert_refusal (empty, 400, "bad_request", "“query” must not be empty"));
    }
}

/* 200 MB announced without credentials: 401 from the head alone, the
 * connection closed, and what the client goes on sending is not kept. */
static void
test_order_declared_body_without_credentials (void)
{
  g_autoptr(GString) prefix = padded_request (65536);
  g_autofree char *chunk = g_malloc0 (65536);

  for (guint r = 0; r < N_ROUTES; r++)
    {
      g_autofree char *head = raw_head_as (routes[r], FALSE, "Content-Length: 209715200");
      g_autofree char *head_with = raw_head (routes[r], "Content-Length: 209715200");
      g_autoptr(GSocketConnection) connection = raw_connect ();
      g_autoptr(SymfonicTestResponse) response = NULL;
      g_autoptr(SymfonicTestResponse) with_credentials = NULL;
      g_autofree char *detail = NULL;
      g_autofree char *detail_with = NULL;
      gsize before = resident_bytes ();
      gsize after;
      gint64 elapsed_us;

      raw_write (connection, head, strlen (head));
      raw_write (connection, prefix->str, prefix->len);
      response = raw_read_response (connection);
      g_assert_nonnull (response);
      detail = assert_refusal (response, 401, "unauthorized", "Missing Authorization header");
      g_assert_cmpstr (soup_message_headers_get_one (response->headers, "Connection"), ==, "close");

      /* the client carries on regardless: 16 MiB more */
      for (guint i = 0; i < 256; i++)
        raw_write (connection, chunk, 65536);
      g_assert_true (raw_is_closed (connection));
      after = resident_bytes ();
      g_test_message ("%s: resident %" G_GSIZE_FORMAT " KiB before, %" G_GSIZE_FORMAT " KiB after",
                      routes[r], before / 1024, after / 1024);
      assert_memory_growth_below (before, after, 4 * 1024 * 1024);

      /* the same head with credentials: now the size is what is wrong */
      with_credentials = raw_exchange (head_with, NULL, &elapsed_us);
      g_assert_nonnull (with_credentials);
      detail_with = assert_refusal (with_credentials, 413, "payload_too_large",
                                    "The request body is larger than 1048576 bytes");
    }
}

/* Without a body to refuse, a refusal keeps the connection: the next
 * request on it is answered too. */
static void
test_order_no_body_keeps_connection (void)
{
  for (guint r = 0; r < N_ROUTES; r++)
    {
      g_autofree char *head = raw_head_as (routes[r], FALSE, "Content-Length: 0");
      g_autoptr(GSocketConnection) connection = raw_connect ();

      g_test_message ("%s", routes[r]);
      for (guint i = 0; i < 2; i++)
        {
          g_autoptr(SymfonicTestResponse) response = NULL;
          g_autofree char *detail = NULL;

          raw_write (connection, head, strlen (head));
          response = raw_read_response (connection);
          g_assert_nonnull (response);
          detail = assert_refusal (response, 401, "unauthorized", "Missing Authorization header");
          g_assert_null (soup_message_headers_get_one (response->headers, "Connection"));
        }
    }
}

/* A chunked body without credentials: 401 while the client is still
 * sending, and nothing of the body kept. Each of eight clients sends just
 * under the limit and never ends its body. */
#define N_CHUNKED_CLIENTS 8
#define CHUNKED_BYTES (960 * 1024)

static void
test_order_chunked_body_without_credentials (void)
{
  g_autoptr(GString) chunk = g_string_new (NULL);
  g_autoptr(GString) body = padded_request (16384);
  GSocketConnection *connections[N_CHUNKED_CLIENTS];
  gsize before = resident_bytes ();
  gsize after;

  g_string_append_printf (chunk, "%" G_GSIZE_MODIFIER "x\r\n%s\r\n", body->len, body->str);

  for (guint i = 0; i < N_CHUNKED_CLIENTS; i++)
    {
      g_autofree char *head = raw_head_as (routes[i % N_ROUTES], FALSE, "Transfer-Encoding: chunked");

      connections[i] = raw_connect ();
      raw_write (connections[i], head, strlen (head));
      for (gsize sent = 0; sent < CHUNKED_BYTES; sent += body->len)
        raw_write (connections[i], chunk->str, chunk->len);
    }
  /* what the kernel still holds is not the server's: let it read */
  symfonic_test_iterate_until (NULL, never, NULL, 500);
  after = resident_bytes ();
  g_test_message ("resident %" G_GSIZE_FORMAT " KiB before, %" G_GSIZE_FORMAT " KiB after %u unfinished bodies",
                  before / 1024, after / 1024, N_CHUNKED_CLIENTS);
  /* eight bodies of 960 KiB would be 7.5 MiB */
  assert_memory_growth_below (before, after, 2 * 1024 * 1024);

  for (guint i = 0; i < N_CHUNKED_CLIENTS; i++)
    {
      g_autoptr(SymfonicTestResponse) response = raw_read_response (connections[i]);
      g_autofree char *detail = NULL;

      g_test_message ("%s", routes[i % N_ROUTES]);
      g_assert_nonnull (response);
      detail = assert_refusal (response, 401, "unauthorized", "Missing Authorization header");
      g_assert_true (raw_is_closed (connections[i]));
      g_object_unref (connections[i]);
    }
}

/* A body sent where no route takes it (an unknown path, a wrong method)
 * is refused before it is read (413), never kept: 32 MiB each leave the
 * peak of resident memory as it was. */
static void
test_order_unrouted_body_not_kept (void)
{
  static const struct
  {
    const char *method;
    const char *path;
    guint       status;
    const char *code;
  } cases[] = {
    { "POST", "/nowhere", 413, "payload_too_large" },
    { "PUT", "/api/v1/chat", 413, "payload_too_large" },
    { "POST", "/healthz", 413, "payload_too_large" },
  };
  gsize length = 32 * 1024 * 1024;
  g_autofree char *body = g_malloc0 (length);
  gsize peak_before;
  gsize peak_after;

  /* the body buffer itself, resident before the first measure */
  memset (body, ' ', length);
  peak_before = symfonic_test_memory_bytes ("VmHWM");

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *head = g_strdup_printf ("%s %s HTTP/1.1\r\n"
                                               "Host: 127.0.0.1:%u\r\n"
                                               "Content-Type: application/json\r\n"
                                               "Content-Length: %" G_GSIZE_FORMAT "\r\n"
                                               "\r\n",
                                               cases[i].method, cases[i].path,
                                               symfonic_server_get_port (server), length);
      g_autoptr(GSocketConnection) connection = raw_connect ();
      g_autoptr(SymfonicTestResponse) response = NULL;
      g_autofree char *detail = NULL;

      g_test_message ("%s %s", cases[i].method, cases[i].path);
      raw_write (connection, head, strlen (head));
      raw_write (connection, body, length);
      response = raw_read_response (connection);
      g_assert_nonnull (response);
      detail = assert_refusal (response, cases[i].status, cases[i].code, NULL);
    }

  peak_after = symfonic_test_memory_bytes ("VmHWM");
  g_test_message ("peak resident %" G_GSIZE_FORMAT " KiB before, %" G_GSIZE_FORMAT " KiB after",
                  peak_before / 1024, peak_after / 1024);
  assert_memory_growth_below (peak_before, peak_after, 8 * 1024 * 1024);
}

/* Refusals before metering spend nothing: after a flood of requests that
 * are not authenticated, not permitted or not well-formed, admin on
 * globex (a key no other test uses) still gets its full burst of 20. */
static void
test_order_metering_last (void)
{
  const char * const admin[] = { "Authorization", ADMIN, "X-Tenant-ID", "globex", NULL };
  const char * const forged[] = { "Authorization", "Bearer demo-token-mallory", "X-Tenant-ID", "globex", NULL };
  const char * const anonymous[] = { "X-Tenant-ID", "globex", NULL };
  const char * const alice[] = { "Authorization", ALICE, "X-Tenant-ID", "globex", NULL };
  g_autoptr(GPtrArray) admitted = NULL;

  for (guint r = 0; r < N_ROUTES; r++)
    {
      g_autoptr(GPtrArray) malformed = send_burst (25, "POST", routes[r], "application/json", "{\"query\":", admin);
      g_autoptr(GPtrArray) empty = send_burst (25, "POST", routes[r], "application/json", "{\"query\":\"\"}", admin);
      g_autoptr(GPtrArray) wrong_type = send_burst (25, "POST", routes[r], "text/plain", QUERY, admin);
      g_autoptr(GPtrArray) unknown = send_burst (25, "POST", routes[r], "application/json", QUERY, forged);
      g_autoptr(GPtrArray) nobody = send_burst (25, "POST", routes[r], "application/json", QUERY, anonymous);
      g_autoptr(GPtrArray) other = send_burst (25, "POST", routes[r], "application/json", QUERY, alice);

      for (guint i = 0; i < 25; i++)
        {
          g_assert_cmpuint (((SymfonicTestResponse *) g_ptr_array_index (malformed, i))->status, ==, 400);
          g_assert_cmpuint (((SymfonicTestResponse *) g_ptr_array_index (empty, i))->status, ==, 400);
          g_assert_cmpuint (((SymfonicTestResponse *) g_ptr_array_index (wrong_type, i))->status, ==, 415);
          g_assert_cmpuint (((SymfonicTestResponse *) g_ptr_array_index (unknown, i))->status, ==, 401);
          g_assert_cmpuint (((SymfonicTestResponse *) g_ptr_array_index (nobody, i))->status, ==, 401);
          g_assert_cmpuint (((SymfonicTestResponse *) g_ptr_array_index (other, i))->status, ==, 403);
        }
    }

  admitted = send_burst (20, "POST", routes[ROUTE_CHAT], "application/json", QUERY, admin);
  for (guint i = 0; i < admitted->len; i++)
    assert_answer_success (g_ptr_array_index (admitted, i));
}

/* The admitted answer of @route to bob's plain query. */
static gboolean
is_admitted (RouteIndex            route,
             SymfonicTestResponse *response)
{
  switch (route)
    {
    case ROUTE_TYPED:
    case ROUTE_CHUNKS:
      if (response->status != 200)
        return FALSE;
      assert_event_stream_headers (response);
      return TRUE;
    case ROUTE_CHAT:
      if (response->status != 200)
        return FALSE;
      assert_answer_success (response);
      return TRUE;
    case ROUTE_RESUME:
      /* the replay source is only refused after admission */
      if (response->status != 400)
        return FALSE;
      g_free (assert_refusal (response, 400, "conflict", "The replay source cannot resume a run"));
      return TRUE;
    case N_ROUTES:
    default:
      g_assert_not_reached ();
    }
}

/* bob on globex, rate=5 burst=20 per tenant and principal: 30 requests
 * sent at once can only be admitted 20 at a time, plus one per 200 ms of
 * spread. The routes share one rate-limit stage, so after the first burst
 * the later ones are mostly refused. */
static void
test_rate_limited (void)
{
  const char * const headers[] = { "Authorization", BOB, "X-Tenant-ID", "globex", NULL };

  for (guint r = 0; r < N_ROUTES; r++)
    {
      g_autoptr(GPtrArray) responses = send_burst (30, "POST", routes[r], "application/json", QUERY, headers);
      guint admitted = 0;
      guint limited = 0;

      for (guint i = 0; i < responses->len; i++)
        {
          SymfonicTestResponse *response = g_ptr_array_index (responses, i);
          g_autofree char *detail = NULL;

          if (is_admitted (r, response))
            {
              admitted++;
              continue;
            }

          /* GCRA at 5/s: the next admission is at most 200 ms away */
          detail = assert_refusal (response, 429, "rate_limited",
                                   "Too many requests: the limit is 5 per second with bursts of 20; "
                                   "retry after 1 s");
          g_assert_cmpstr (soup_message_headers_get_one (response->headers, "Retry-After"), ==, "1");
          assert_retry_after (response);
          limited++;
        }

      g_test_message ("%s: %u admitted, %u rate limited", routes[r], admitted, limited);
      g_assert_cmpuint (admitted + limited, ==, 30);
      /* the first burst meets a full bucket */
      if (r == 0)
        g_assert_cmpuint (admitted, >=, 20);
      g_assert_cmpuint (limited, >=, 5);
    }
}

/* Tenant demo, 100000 tokens per 60 s, 2000 reserved per request. The
 * replay source reports no usage, so a stream is charged the estimate:
 * ceil (query bytes / 4) + ceil (streamed text bytes / 4). The `long`
 * transcript streams 17814 bytes of deltas (4454 tokens) and the query
 * "budget" is 6 bytes (2 tokens): 4456 tokens a stream, far over its
 * reservation, which is what makes this deterministic without parallel
 * slow streams (there are none in data/transcripts: `long` plays in 240
 * ms). After 21 streams 93576 tokens are charged and a 22nd fits
 * (93576 + 2000 <= 100000); after 22, 98032 are, and nothing fits.
 *
 * The streams run as two bursts of 11, alice's and admin's, so neither
 * key comes near the rate limit's burst of 20, and 11 reservations in
 * flight (22000) always fit next to what earlier bursts were charged. */
static void
test_budget_exceeded (void)
{
  const char * const alice[] = {
    "Authorization", ALICE, "X-Tenant-ID", "demo", "X-Symfonic-Transcript", "long", NULL
  };
  const char * const admin[] = {
    "Authorization", ADMIN, "X-Tenant-ID", "demo", "X-Symfonic-Transcript", "long", NULL
  };
  const char * const * const bursts[] = { alice, admin };
  const char *body = "{\"query\":\"budget\"}";

  for (guint b = 0; b < G_N_ELEMENTS (bursts); b++)
    {
      g_autoptr(GPtrArray) responses = send_burst (11, "POST", routes[ROUTE_CHAT], "application/json",
                                                   body, bursts[b]);

      for (guint i = 0; i < responses->len; i++)
        assert_answer_success (g_ptr_array_index (responses, i));
    }

  /* 22 streams charged: every route refuses, alice and admin alike */
  for (guint r = 0; r < N_ROUTES; r++)
    {
      g_autoptr(SymfonicTestResponse) response =
        send_one ("POST", routes[r], "application/json", body, r % 2 == 0 ? alice : admin);
      g_autofree char *detail = NULL;
      g_autofree char *expected = NULL;
      guint64 retry_after;

      detail = assert_refusal (response, 429, "budget_exceeded", NULL);
      retry_after = assert_retry_after (response);
      g_test_message ("%s: %s (Retry-After: %" G_GUINT64_FORMAT ")", routes[r], detail, retry_after);
      /* only the next window has room: it is at most 60 s away */
      g_assert_cmpuint (retry_after, <=, 60);
      expected = g_strdup_printf ("The token budget of 100000 tokens per 60 s is spent; "
                                  "retry after %" G_GUINT64_FORMAT " s", retry_after);
      g_assert_cmpstr (detail, ==, expected);
    }
}

static void
test_not_found (void)
{
  static const struct
  {
    const char *method;
    const char *path;
  } cases[] = {
    { "GET", "/nowhere" },
    { "POST", "/nowhere" },
    { "POST", "/api/v2/chat" },
    { "POST", "/api/v1/chat/extra" },
    { "GET", "/" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const char * const headers[] = { "Authorization", ALICE, "X-Tenant-ID", "acme", NULL };
      gboolean has_body = g_str_equal (cases[i].method, "POST");
      g_autoptr(SymfonicTestResponse) response = NULL;
      g_autofree char *detail = NULL;

      g_test_message ("%s %s", cases[i].method, cases[i].path);
      response = send_one (cases[i].method, cases[i].path, has_body ? "application/json" : NULL,
                           has_body ? QUERY : NULL, headers);
      detail = assert_refusal (response, 404, "not_found", "No route serves this path");
    }
}

static void
test_method_not_allowed (void)
{
  static const char * const methods[] = { "GET", "PUT", "DELETE", "PATCH" };

  for (guint r = 0; r < N_ROUTES; r++)
    for (guint i = 0; i < G_N_ELEMENTS (methods); i++)
      {
        const char * const headers[] = { "Authorization", ALICE, "X-Tenant-ID", "acme", NULL };
        gboolean has_body = !g_str_equal (methods[i], "GET") && !g_str_equal (methods[i], "DELETE");
        g_autoptr(SymfonicTestResponse) response = NULL;
        g_autofree char *detail = NULL;

        g_test_message ("%s %s", methods[i], routes[r]);
        response = send_one (methods[i], routes[r], has_body ? "application/json" : NULL,
                             has_body ? QUERY : NULL, headers);
        detail = assert_refusal (response, 405, "method_not_allowed", "Use POST");
        g_assert_cmpstr (soup_message_headers_get_one (response->headers, "Allow"), ==, "POST");
      }

  /* and the operator endpoints the other way round */
  {
    g_autoptr(SymfonicTestResponse) response = send_one ("POST", "/healthz", "application/json", QUERY, NULL);
    g_free (assert_refusal (response, 405, "method_not_allowed", "Use GET"));

    g_assert_cmpstr (soup_message_headers_get_one (response->headers, "Allow"), ==, "GET, HEAD");
  }
}

/* --- after the handshake ------------------------------------------------- */

static void
assert_single_error_terminal (GPtrArray *frames)
{
  SymfonicTestFrame *last;
  guint errors = 0;

  g_assert_cmpuint (frames->len, >, 0);
  for (guint i = 0; i < frames->len; i++)
    {
      SymfonicTestFrame *frame = g_ptr_array_index (frames, i);

      if (g_str_equal (frame->event, "error"))
        errors++;
      g_assert_cmpstr (frame->event, !=, "ResponseCompleteEvent");
    }
  g_assert_cmpuint (errors, ==, 1);

  last = g_ptr_array_index (frames, frames->len - 1);
  g_assert_cmpstr (last->event, ==, "error");
  g_assert_cmpstr (last->data, ==, "{\"detail\":\"" OPAQUE_DETAIL "\",\"status\":500,\"code\":\"upstream_unavailable\"}");
  g_assert_cmpuint (last->n_data_lines, ==, 1);
}

static void
test_upstream_failure (void)
{
  guint mark = log_mark ();
  g_autoptr(SymfonicTestResponse) typed = post (routes[ROUTE_TYPED], QUERY, ALICE, "acme", "upstream-failure");
  g_autoptr(SymfonicTestResponse) chunks = post (routes[ROUTE_CHUNKS], QUERY, ALICE, "acme", "upstream-failure");
  g_autoptr(SymfonicTestResponse) chat = post (routes[ROUTE_CHAT], QUERY, ALICE, "acme", "upstream-failure");
  g_autoptr(SymfonicTestResponse) resume = post (routes[ROUTE_RESUME], QUERY, ALICE, "acme", "upstream-failure");
  g_autoptr(GPtrArray) typed_frames = NULL;
  g_autoptr(GPtrArray) chunk_frames = NULL;
  g_autofree char *chat_detail = NULL;
  g_autofree char *resume_detail = NULL;

  /* the typed stream: three deltas, then the one error frame */
  assert_event_stream_headers (typed);
  typed_frames = parse_frames (typed);
  assert_single_error_terminal (typed_frames);
  g_assert_cmpuint (typed_frames->len, ==, 4);
  for (guint i = 0; i < 3; i++)
    g_assert_cmpstr (((SymfonicTestFrame *) g_ptr_array_index (typed_frames, i))->event, ==, "TextDeltaEvent");

  /* the untyped stream: chunks, never `done`, then the same frame */
  assert_event_stream_headers (chunks);
  chunk_frames = parse_frames (chunks);
  assert_single_error_terminal (chunk_frames);
  for (guint i = 0; i + 1 < chunk_frames->len; i++)
    {
      SymfonicTestFrame *frame = g_ptr_array_index (chunk_frames, i);
      g_autoptr(JsonNode) chunk = symfonic_test_json_parse (frame->data);

      g_assert_cmpstr (frame->event, ==, "message");
      g_assert_cmpstr (json_object_get_string_member (json_node_get_object (chunk), "event_type"), !=, "done");
    }

  /* the answer routes: the frame is the JSON body */
  chat_detail = assert_refusal (chat, 500, "upstream_unavailable", OPAQUE_DETAIL);
  g_assert_cmpstr (symfonic_test_response_get_text (chat), ==,
                   "{\"detail\":\"" OPAQUE_DETAIL "\",\"status\":500,\"code\":\"upstream_unavailable\"}");
  /* /resume collapses server errors to 400; the replay source fails it
   * before playing anything */
  resume_detail = assert_refusal (resume, 400, "conflict", "The replay source cannot resume a run");

  /* the client never sees the upstream's message; the log does, once for
   * each of the three routes that played the transcript */
  g_assert_null (strstr (symfonic_test_response_get_text (typed), UPSTREAM_SECRET));
  g_assert_null (strstr (symfonic_test_response_get_text (chunks), UPSTREAM_SECRET));
  g_assert_null (strstr (symfonic_test_response_get_text (chat), UPSTREAM_SECRET));
  g_assert_null (strstr (symfonic_test_response_get_text (resume), UPSTREAM_SECRET));
  g_assert_cmpuint (log_count_since (mark, UPSTREAM_SECRET), ==, 3);
}

static void
test_resume_replay (void)
{
  g_autoptr(SymfonicTestResponse) response = post (routes[ROUTE_RESUME], QUERY, ALICE, "acme", NULL);
  g_free (assert_refusal (response, 400, "conflict", "The replay source cannot resume a run"));

  g_assert_cmpstr (symfonic_test_response_get_text (response), ==,
                   "{\"detail\":\"The replay source cannot resume a run\",\"status\":400,\"code\":\"conflict\"}");
}

static void
test_body_tenant_ignored (void)
{
  /* alice may not act for globex; the body saying so changes nothing */
  const char *body = "{\"query\":\"hi\",\"tenant_id\":\"globex\"}";
  g_autoptr(SymfonicTestResponse) typed = post (routes[ROUTE_TYPED], body, ALICE, "acme", NULL);
  g_autoptr(SymfonicTestResponse) chat = post (routes[ROUTE_CHAT], body, ALICE, "acme", NULL);

  assert_typed_success (typed);
  assert_answer_success (chat);
}

static void
test_session_id_round_trip (void)
{
  static const struct
  {
    const char *body;
    const char *session_id;
  } cases[] = {
    { "{\"query\":\"hi\",\"session_id\":\"a:b:c:ç:🎉\"}", "a:b:c:ç:🎉" },
    /* the same, escaped: the value comes back, not the spelling */
    { "{\"query\":\"hi\",\"session_id\":\"a:b:c:\\u00e7:\\ud83c\\udf89\"}", "a:b:c:ç:🎉" },
    { "{\"query\":\"hi\",\"session_id\":\"tenant:acme:user:42::\"}", "tenant:acme:user:42::" },
    { "{\"query\":\"hi\",\"session_id\":\" web:42 \"}", " web:42 " },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(SymfonicTestResponse) response = post (routes[ROUTE_CHAT], cases[i].body, ALICE, "acme", NULL);
      g_autoptr(JsonNode) root = NULL;

      assert_answer_success (response);
      root = symfonic_test_response_dup_json (response);
      g_assert_cmpstr (json_object_get_string_member (json_node_get_object (root), "session_id"), ==,
                       cases[i].session_id);
    }
}

/* --- a client that hangs up --------------------------------------------- */

typedef struct
{
  double cancelled;
  double failed;
  double completed;
  double active;
} Counters;

static void
fetch_counters (SoupSession *metrics_session,
                const char  *url,
                Counters    *counters)
{
  counters->cancelled = symfonic_test_fetch_metric (metrics_session, url, "symfonic_streams_cancelled_total");
  counters->failed = symfonic_test_fetch_metric (metrics_session, url, "symfonic_streams_failed_total");
  counters->completed = symfonic_test_fetch_metric (metrics_session, url, "symfonic_streams_completed_total");
  counters->active = symfonic_test_fetch_metric (metrics_session, url, "symfonic_streams_active");
}

/* Opens a typed stream of @transcript as alice on acme and reads its
 * first frame: the stream is in flight, past its handshake. */
static SymfonicTestStream *
open_stream (SoupSession *stream_session,
             const char  *url,
             const char  *transcript)
{
  g_autofree char *stream_url = g_strconcat (url, routes[ROUTE_TYPED], NULL);
  SymfonicTestStream *stream;
  SymfonicTestFrame *first;

  stream = symfonic_test_stream_post (stream_session, stream_url, QUERY,
                                      "Authorization", ALICE, "X-Tenant-ID", "acme",
                                      "X-Symfonic-Transcript", transcript, NULL);
  symfonic_test_stream_wait_headers (stream);
  g_assert_cmpuint (stream->status, ==, 200);
  symfonic_test_stream_wait_frames (stream, 1);
  /* a hang-up only means something before the end of the stream */
  g_assert_false (stream->done);
  first = g_ptr_array_index (stream->frames, 0);
  g_assert_cmpstr (first->event, ==, "ThinkingDeltaEvent");

  return stream;
}

/* Hangs up @stream (stop reading, close the body, drop every connection
 * of its session) and waits until the server at @url counted one more
 * cancellation than @before and no stream is active any more than then. */
static void
hang_up (SymfonicTestStream *stream,
         SoupSession        *stream_session,
         const char         *url,
         const Counters     *before,
         Counters           *after)
{
  gint64 closed_us = g_get_monotonic_time ();

  symfonic_test_stream_close (stream);
  soup_session_abort (stream_session);

  do
    {
      fetch_counters (session, url, after);
      if (after->cancelled > before->cancelled && after->active == before->active)
        break;
      symfonic_test_iterate_until (NULL, never, NULL, 5);
    }
  while (g_get_monotonic_time () - closed_us < 2 * G_USEC_PER_SEC);

  g_test_message ("cancellation counted %" G_GINT64_FORMAT " us after the hang-up",
                  g_get_monotonic_time () - closed_us);
  g_assert_cmpfloat (after->cancelled, ==, before->cancelled + 1);
  g_assert_cmpfloat (after->active, ==, before->active);
}

/* `reasoning`, not `long`: `long` plays its 2279 deltas in 240 ms, so a
 * hang-up after its first frame would race its end; `reasoning` paces
 * its deltas about 45 ms apart over 893 ms. */
static void
test_disconnect_is_cancellation (void)
{
  g_autoptr(SoupSession) stream_session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = NULL;
  Counters before, after;
  guint mark;

  fetch_counters (session, base_url, &before);
  mark = log_mark ();
  stream = open_stream (stream_session, base_url, "reasoning");
  hang_up (stream, stream_session, base_url, &before, &after);

  /* a stream nobody reads any more neither fails nor completes later */
  symfonic_test_iterate_until (NULL, never, NULL, 1000);
  fetch_counters (session, base_url, &after);
  g_assert_cmpfloat (after.failed, ==, before.failed);
  g_assert_cmpfloat (after.completed, ==, before.completed);
  g_assert_cmpfloat (after.cancelled, ==, before.cancelled + 1);
  g_assert_cmpuint (log_count_since (mark, "failed"), ==, 0);
}

/* With the default budget one reservation is invisible, so a pipeline of
 * its own admits exactly one stream in flight: 1000 reserved of 1500. A
 * hang-up must give the reservation back (and charge the few tokens
 * really used), or the next request is refused. The replay plays
 * `reasoning` ten times slower, so the first stream is certainly still in
 * flight when it is hung up. */
static void
test_disconnect_settles_budget (void)
{
  static const char pipeline_text[] =
    "[gateway]\n"
    "listen=127.0.0.1:8080\n"
    "workers=2\n"
    "\n"
    "[route:typed]\n"
    "path=/api/v1/stream/typed\n"
    "kind=typed\n"
    "source=demo\n"
    "stages=auth;budget;errors\n"
    "\n"
    "[source:demo]\n"
    "type=replay\n"
    "transcripts=transcripts\n"
    "default-transcript=plain\n"
    "transcript-header=X-Symfonic-Transcript\n"
    "time-scale=10\n"
    "\n"
    "[stage:auth]\n"
    "type=auth\n"
    "tokens-file=demo-tokens.ini\n"
    "\n"
    "[stage:budget]\n"
    "type=budget\n"
    "tokens-per-window=1500\n"
    "window-seconds=60\n"
    "reserve-tokens=1000\n"
    "\n"
    "[stage:errors]\n"
    "type=error-map\n"
    "table=error-map.ini\n";
  const char * const headers[] = { "Authorization", ALICE, "X-Tenant-ID", "acme", NULL };
  g_autoptr(SymfonicServer) small = NULL;
  g_autoptr(SoupSession) stream_session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) held = NULL;
  g_autoptr(SymfonicTestStream) next = NULL;
  g_autoptr(SymfonicTestResponse) refused = NULL;
  g_autofree char *url = NULL;
  g_autofree char *typed_url = NULL;
  g_autofree char *detail = NULL;
  Counters before, after;
  guint mark;

  small = symfonic_test_server_new (pipeline_text, data_dir (), 2);
  url = g_strdup_printf ("http://127.0.0.1:%u", symfonic_server_get_port (small));
  typed_url = g_strconcat (url, routes[ROUTE_TYPED], NULL);

  fetch_counters (session, url, &before);
  g_assert_cmpfloat (before.cancelled, ==, 0);
  mark = log_mark ();
  held = open_stream (stream_session, url, "reasoning");

  /* while it holds the reservation, another request is refused */
  refused = symfonic_test_request (session, "POST", typed_url, "application/json", QUERY,
                                   headers[0], headers[1], headers[2], headers[3], NULL);
  detail = assert_refusal (refused, 429, "budget_exceeded",
                           "The token budget of 1500 tokens per 60 s is spent; retry after 1 s");
  /* what is in flight comes back soon: a second, not the window */
  g_assert_cmpstr (soup_message_headers_get_one (refused->headers, "Retry-After"), ==, "1");

  hang_up (held, stream_session, url, &before, &after);
  g_assert_cmpfloat (after.failed, ==, 0);
  g_assert_cmpfloat (after.completed, ==, 0);
  g_assert_cmpuint (log_count_since (mark, "failed"), ==, 0);

  /* admitted again: the reservation was settled */
  next = symfonic_test_stream_post (stream_session, typed_url, QUERY,
                                    "Authorization", ALICE, "X-Tenant-ID", "acme",
                                    "X-Symfonic-Transcript", "reasoning", NULL);
  symfonic_test_stream_wait_headers (next);
  if (next->status != 200)
    symfonic_test_stream_wait_done (next);
  g_test_message ("after the hang-up: %u %s", next->status, next->raw->str);
  g_assert_cmpuint (next->status, ==, 200);
  g_assert_cmpstr (soup_message_headers_get_content_type (soup_message_get_response_headers (next->message), NULL),
                   ==, "text/event-stream");
  /* let the server see this hang-up too before it stops: stopping it
   * with a stream in flight is not what this test is about */
  before = after;
  hang_up (next, stream_session, url, &before, &after);

  symfonic_server_stop (small);
}

/* --- the demo tokens off loopback --------------------------------------- */

static void
test_demo_tokens_refused_off_loopback (void)
{
  static const char * const listens[] = { "0.0.0.0:0", "*:0" };
  g_autofree char *path = g_build_filename (data_dir (), "pipelines", "default.pipeline", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GError) error = NULL;
  g_autoptr(SymfonicPipeline) pipeline = NULL;

  pipeline = symfonic_pipeline_new_from_file (symfonic_registry_get_default (), file, &error);
  g_assert_no_error (error);

  for (guint i = 0; i < G_N_ELEMENTS (listens); i++)
    {
      g_autoptr(SymfonicServer) exposed = symfonic_server_new (pipeline);

      g_test_message ("listen=%s", listens[i]);
      symfonic_server_set_listen (exposed, listens[i]);
      symfonic_server_set_workers (exposed, 2);
      g_assert_false (symfonic_server_start (exposed, &error));
      g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
      g_assert_nonnull (strstr (error->message, "--allow-demo-tokens"));
      g_clear_error (&error);

      symfonic_server_set_allow_demo_credentials (exposed, TRUE);
      g_assert_true (symfonic_server_start (exposed, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (symfonic_server_get_port (exposed), !=, 0);
      symfonic_server_stop (exposed);
    }
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *path = NULL;
  g_autoptr(GFile) file = NULL;
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(GError) error = NULL;
  int ret;

  symfonic_test_init (&argc, &argv);

  /* before any worker thread exists, so no message is missed */
  log_lines = g_ptr_array_new_with_free_func (g_free);
  g_log_set_writer_func (record_log, NULL, NULL);

  symfonic_registry_scan (symfonic_registry_get_default (), &error);
  g_assert_no_error (error);
  path = g_build_filename (data_dir (), "pipelines", "default.pipeline", NULL);
  file = g_file_new_for_path (path);
  pipeline = symfonic_pipeline_new_from_file (symfonic_registry_get_default (), file, &error);
  g_assert_no_error (error);

  server = symfonic_server_new (pipeline);
  symfonic_server_set_listen (server, "127.0.0.1:0");
  symfonic_server_set_workers (server, 2);
  symfonic_server_start (server, &error);
  g_assert_no_error (error);
  base_url = g_strdup_printf ("http://127.0.0.1:%u", symfonic_server_get_port (server));
  session = symfonic_test_session_new ();

  g_test_add_func ("/admission-http/missing-authorization", test_missing_authorization);
  g_test_add_func ("/admission-http/invalid-token", test_invalid_token);
  g_test_add_func ("/admission-http/missing-tenant", test_missing_tenant);
  g_test_add_func ("/admission-http/forbidden-tenant", test_forbidden_tenant);
  g_test_add_func ("/admission-http/bad-request", test_bad_request);
  g_test_add_func ("/admission-http/strict-json", test_strict_json);
  g_test_add_func ("/admission-http/unsupported-media-type", test_unsupported_media_type);
  g_test_add_func ("/admission-http/rate-limited", test_rate_limited);
  g_test_add_func ("/admission-http/budget-exceeded", test_budget_exceeded);
  g_test_add_func ("/admission-http/not-found", test_not_found);
  g_test_add_func ("/admission-http/method-not-allowed", test_method_not_allowed);
  g_test_add_func ("/admission-http/upstream-failure", test_upstream_failure);
  g_test_add_func ("/admission-http/resume-replay", test_resume_replay);
  g_test_add_func ("/admission-http/body-tenant-ignored", test_body_tenant_ignored);
  g_test_add_func ("/admission-http/session-id-round-trip", test_session_id_round_trip);
  g_test_add_func ("/admission-http/demo-tokens-off-loopback", test_demo_tokens_refused_off_loopback);
  g_test_add_func ("/admission-http/disconnect/cancellation", test_disconnect_is_cancellation);
  g_test_add_func ("/admission-http/disconnect/settles-budget", test_disconnect_settles_budget);
  g_test_add_func ("/admission-http/order/auth-before-body", test_order_auth_before_body);
  g_test_add_func ("/admission-http/order/declared-body-without-credentials",
                   test_order_declared_body_without_credentials);
  g_test_add_func ("/admission-http/order/no-body-keeps-connection", test_order_no_body_keeps_connection);
  g_test_add_func ("/admission-http/order/chunked-body-without-credentials",
                   test_order_chunked_body_without_credentials);
  g_test_add_func ("/admission-http/order/unrouted-body-not-kept", test_order_unrouted_body_not_kept);
  g_test_add_func ("/admission-http/order/metering-last", test_order_metering_last);
  g_test_add_func ("/admission-http/payload-too-large/boundary", test_payload_limit_boundary);
  g_test_add_func ("/admission-http/payload-too-large/chunked", test_payload_too_large_chunked);
  g_test_add_func ("/admission-http/payload-too-large/declared-expect-continue",
                   test_payload_too_large_declared_expect);
  /* last: a failure stops a GTest run that was not given --keep-going */
  g_test_add_func ("/admission-http/payload-too-large/declared", test_payload_too_large_declared);

  ret = g_test_run ();

  g_clear_object (&session);
  symfonic_server_stop (server);
  g_clear_object (&server);
  g_free (base_url);

  return ret;
}
