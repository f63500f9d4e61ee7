/* symfonic-test-support.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdarg.h>
#include <string.h>

#include "symfonic-test-support.h"

/* g_test_init() with isolated directories, for a process that makes HTTP
 * requests. GSocketClient asks for the default proxy resolver even when
 * told to use another, and the desktop's reads GSettings, which the
 * isolated XDG dirs hide: a fatal error. A proxy has no business between a
 * test and 127.0.0.1, so the environment says "no proxy" before any thread
 * starts. */
void
symfonic_test_init (int    *argc,
                    char ***argv)
{
  g_setenv ("GIO_USE_PROXY_RESOLVER", "dummy", TRUE);
  g_test_init (argc, argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
}

/* --- the server, in-process ------------------------------------------- */

/* Plugins are loaded once per process: the registry keeps them resident. */
static void
scan_registry_once (void)
{
  static gsize scanned = 0;

  if (g_once_init_enter (&scanned))
    {
      g_autoptr(GError) error = NULL;

      symfonic_registry_scan (symfonic_registry_get_default (), &error);
      g_assert_no_error (error);
      /* say so plainly rather than as an unknown type in a pipeline line */
      if (symfonic_registry_lookup (symfonic_registry_get_default (), "replay") == G_TYPE_INVALID)
        g_error ("The replay plugin was not found: is the build's plugin directory "
                 "complete? Rebuild with ninja (something may have emptied it).");
      g_once_init_leave (&scanned, 1);
    }
}

/* The default registry, with the build's plugins loaded. */
SymfonicRegistry *
symfonic_test_get_registry (void)
{
  scan_registry_once ();

  return symfonic_registry_get_default ();
}

/* The one typed route the tests serve from a replay source; a test may
 * append groups of its own. */
char *
symfonic_test_replay_pipeline (const char *transcripts,
                               const char *default_transcript,
                               double      time_scale)
{
  char scale[G_ASCII_DTOSTR_BUF_SIZE];

  g_ascii_dtostr (scale, sizeof scale, time_scale);
  return g_strdup_printf ("[gateway]\n"
                          "listen=127.0.0.1:8080\n"
                          "workers=1\n"
                          "\n"
                          "[route:typed]\n"
                          "path=" SYMFONIC_TEST_TYPED_PATH "\n"
                          "kind=typed\n"
                          "source=fixtures\n"
                          "\n"
                          "[source:fixtures]\n"
                          "type=replay\n"
                          "transcripts=%s\n"
                          "default-transcript=%s\n"
                          "transcript-header=X-Symfonic-Transcript\n"
                          "time-scale=%s\n"
                          "\n",
                          transcripts, default_transcript, scale);
}

static SymfonicServer *
start_server (SymfonicPipeline *pipeline,
              guint             workers)
{
  g_autoptr(SymfonicServer) server = NULL;
  g_autoptr(GError) error = NULL;

  server = symfonic_server_new (pipeline);
  symfonic_server_set_listen (server, "127.0.0.1:0");
  symfonic_server_set_workers (server, workers);
  symfonic_server_start (server, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (symfonic_server_get_port (server), !=, 0);

  return g_steal_pointer (&server);
}

/* Starts a server for @pipeline_text, whose relative paths resolve against
 * @base_dir, on an ephemeral port of 127.0.0.1. Any failure fails the
 * test. */
SymfonicServer *
symfonic_test_server_new (const char *pipeline_text,
                          const char *base_dir,
                          guint       workers)
{
  g_autoptr(GFile) base = g_file_new_for_path (base_dir);
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(GError) error = NULL;

  scan_registry_once ();

  pipeline = symfonic_pipeline_new_from_data (symfonic_registry_get_default (),
                                              pipeline_text, -1, base,
                                              "test.pipeline", &error);
  g_assert_no_error (error);
  g_assert_nonnull (pipeline);

  return start_server (pipeline, workers);
}

/* The same for the pipeline file @path, which the server can reload. */
SymfonicServer *
symfonic_test_server_new_from_file (const char *path,
                                    guint       workers)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(GError) error = NULL;

  scan_registry_once ();

  pipeline = symfonic_pipeline_new_from_file (symfonic_registry_get_default (), file, &error);
  g_assert_no_error (error);
  g_assert_nonnull (pipeline);

  return start_server (pipeline, workers);
}

char *
symfonic_test_server_dup_url (SymfonicServer *server,
                              const char     *path)
{
  /* built from the port alone, so a wrong dup_uri() cannot hide here */
  return g_strdup_printf ("http://127.0.0.1:%u%s",
                          symfonic_server_get_port (server), path);
}

/* Loads a pipeline whose one route reads a source of @source_lines
 * (its type and settings): it loads when @error_key is NULL, and
 * otherwise fails with an error that names @error_key. */
void
symfonic_test_check_source_config (SymfonicRegistry *registry,
                                   const char       *source_lines,
                                   const char       *error_key)
{
  g_autoptr(GFile) base = g_file_new_for_path (g_get_tmp_dir ());
  g_autofree char *text = g_strdup_printf ("[route:typed]\npath=/t\nkind=typed\nsource=up\n\n"
                                           "[source:up]\n%s\n", source_lines);
  g_autoptr(GError) error = NULL;
  g_autoptr(SymfonicPipeline) pipeline =
    symfonic_pipeline_new_from_data (registry, text, -1, base, "source.pipeline", &error);

  g_test_message ("%s: %s", source_lines, error != NULL ? error->message : "loads");
  if (error_key == NULL)
    {
      g_assert_no_error (error);
      g_assert_nonnull (pipeline);
    }
  else
    {
      g_assert_null (pipeline);
      g_assert_nonnull (error);
      g_assert_nonnull (strstr (error->message, error_key));
    }
}

/* --- SSE, parsed incrementally ----------------------------------------- */

/* The event-stream interpretation of the HTML standard: lines end in CRLF,
 * LF or CR, and any of them may be split between two reads; a blank line
 * dispatches; a line starting with ':' is a comment; "field: value" loses
 * one leading space; a field without a colon has an empty value; a frame
 * without data is not dispatched. */
struct _SymfonicTestSseParser
{
  GString  *line;
  gboolean  skip_lf;
  gboolean  started;
  GString  *data;
  guint     n_data_lines;
  char     *event;
  char     *id;
  guint     comments;
};

void
symfonic_test_frame_free (SymfonicTestFrame *frame)
{
  g_free (frame->event);
  g_free (frame->data);
  g_free (frame->id);
  g_free (frame);
}

SymfonicTestSseParser *
symfonic_test_sse_parser_new (void)
{
  SymfonicTestSseParser *self = g_new0 (SymfonicTestSseParser, 1);

  self->line = g_string_new (NULL);
  self->data = g_string_new (NULL);

  return self;
}

void
symfonic_test_sse_parser_free (SymfonicTestSseParser *self)
{
  g_string_free (self->line, TRUE);
  g_string_free (self->data, TRUE);
  g_free (self->event);
  g_free (self->id);
  g_free (self);
}

static void
reset_frame (SymfonicTestSseParser *self)
{
  g_string_truncate (self->data, 0);
  self->n_data_lines = 0;
  g_clear_pointer (&self->event, g_free);
  g_clear_pointer (&self->id, g_free);
}

static void
dispatch (SymfonicTestSseParser *self,
          GPtrArray             *frames)
{
  SymfonicTestFrame *frame;

  if (self->n_data_lines == 0)
    {
      reset_frame (self);
      return;
    }

  frame = g_new0 (SymfonicTestFrame, 1);
  /* every data line appended a "\n"; the last one is not part of the data */
  g_string_truncate (self->data, self->data->len - 1);
  frame->data = g_strndup (self->data->str, self->data->len);
  frame->event = self->event != NULL ? g_steal_pointer (&self->event) : g_strdup ("message");
  frame->id = g_steal_pointer (&self->id);
  frame->n_data_lines = self->n_data_lines;
  frame->time_us = g_get_monotonic_time ();
  g_ptr_array_add (frames, frame);

  reset_frame (self);
}

static void
process_line (SymfonicTestSseParser *self,
              GPtrArray             *frames)
{
  const char *line = self->line->str;
  gsize length = self->line->len;
  const char *colon;
  g_autofree char *field = NULL;
  const char *value;
  gsize value_length;

  /* a UTF-8 BOM may open the stream and is not part of the first field */
  if (!self->started)
    {
      self->started = TRUE;
      if (length >= 3 && memcmp (line, "\xEF\xBB\xBF", 3) == 0)
        {
          line += 3;
          length -= 3;
        }
    }

  if (length == 0)
    {
      dispatch (self, frames);
      return;
    }

  if (line[0] == ':')
    {
      self->comments++;
      return;
    }

  colon = memchr (line, ':', length);
  if (colon != NULL)
    {
      field = g_strndup (line, colon - line);
      value = colon + 1;
      if (value < line + length && *value == ' ')
        value++;
      value_length = line + length - value;
    }
  else
    {
      field = g_strndup (line, length);
      value = line + length;
      value_length = 0;
    }

  if (g_str_equal (field, "event"))
    {
      g_free (self->event);
      self->event = g_strndup (value, value_length);
    }
  else if (g_str_equal (field, "data"))
    {
      g_string_append_len (self->data, value, value_length);
      g_string_append_c (self->data, '\n');
      self->n_data_lines++;
    }
  else if (g_str_equal (field, "id"))
    {
      if (memchr (value, '\0', value_length) == NULL)
        {
          g_free (self->id);
          self->id = g_strndup (value, value_length);
        }
    }
  /* "retry" and unknown fields are ignored */
}

/* Feeds @length bytes of the stream, split anywhere; every frame completed
 * by them is appended to @frames (which frees with
 * symfonic_test_frame_free()), stamped with the time it was parsed. */
void
symfonic_test_sse_parser_feed (SymfonicTestSseParser *self,
                               const char            *data,
                               gsize                  length,
                               GPtrArray             *frames)
{
  for (gsize i = 0; i < length; i++)
    {
      char c = data[i];

      if (self->skip_lf)
        {
          self->skip_lf = FALSE;
          if (c == '\n')
            continue;
        }

      if (c == '\r' || c == '\n')
        {
          process_line (self, frames);
          g_string_truncate (self->line, 0);
          self->skip_lf = c == '\r';
        }
      else
        {
          g_string_append_c (self->line, c);
        }
    }
}

guint
symfonic_test_sse_parser_get_comments (SymfonicTestSseParser *self)
{
  return self->comments;
}

/* Whether everything fed so far ended with a complete frame: no partial
 * line and no field waiting for its blank line. */
gboolean
symfonic_test_sse_parser_is_between_frames (SymfonicTestSseParser *self)
{
  return self->line->len == 0 && self->n_data_lines == 0 &&
         self->event == NULL && self->id == NULL;
}


/* A memory figure of this process from /proc/self/status: "VmRSS"
 * (resident now) or "VmHWM" (the peak of resident), in bytes. */
gsize
symfonic_test_memory_bytes (const char *field)
{
  g_autofree char *status = NULL;
  g_autofree char *key = g_strdup_printf ("\n%s:", field);
  const char *line;

  g_assert_true (g_file_get_contents ("/proc/self/status", &status, NULL, NULL));
  line = strstr (status, key);
  g_assert_nonnull (line);

  return g_ascii_strtoull (line + strlen (key), NULL, 10) * 1024;
}

guint
symfonic_test_count_fds (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc/self/fd", 0, NULL);
  guint n = 0;

  g_assert_nonnull (dir);
  while (g_dir_read_name (dir) != NULL)
    n++;

  return n;
}

/* for symfonic_test_iterate_until(): @data is the most descriptors */
gboolean
symfonic_test_fds_at_most (gpointer data)
{
  return symfonic_test_count_fds () <= GPOINTER_TO_UINT (data);
}

/* --- HTTP clients -------------------------------------------------------- */

/* Sends @request on a new connection to 127.0.0.1:@port and reads until
 * what came back holds @until, then returns the connection, still open;
 * @received gets what came back. */
GSocketConnection *
symfonic_test_raw_request (guint16     port,
                           const char *request,
                           const char *until,
                           GString    *received)
{
  g_autoptr(GSocketClient) client = g_socket_client_new ();
  g_autoptr(GSocketConnection) connection = NULL;
  g_autoptr(GError) error = NULL;

  g_socket_client_set_enable_proxy (client, FALSE);
  g_socket_client_set_timeout (client, SYMFONIC_TEST_WAIT_MS / 1000);
  connection = g_socket_client_connect_to_host (client, "127.0.0.1", port, NULL, &error);
  g_assert_no_error (error);
  g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (connection)),
                             request, strlen (request), NULL, NULL, &error);
  g_assert_no_error (error);
  /* the answer may come in more than one read */
  while (strstr (received->str, until) == NULL)
    {
      char buffer[4096];
      gssize n = g_input_stream_read (g_io_stream_get_input_stream (G_IO_STREAM (connection)),
                                      buffer, sizeof buffer, NULL, &error);

      g_assert_no_error (error);
      g_assert_cmpint (n, >, 0);
      g_string_append_len (received, buffer, n);
    }

  return g_steal_pointer (&connection);
}

SoupSession *
symfonic_test_session_new (void)
{
  /* no proxy between a test and 127.0.0.1, see symfonic_test_init() */
  g_autoptr(GProxyResolver) direct = g_simple_proxy_resolver_new (NULL, NULL);

  /* the default of 2 connections per host would serialize parallel streams */
  return soup_session_new_with_options ("max-conns", 256,
                                        "max-conns-per-host", 256,
                                        "timeout", 30,
                                        "proxy-resolver", direct,
                                        NULL);
}

GSocket *
symfonic_test_loopback_socket (gboolean  listen,
                               guint16  *port)
{
  g_autoptr(GSocket) socket = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
                                            G_SOCKET_PROTOCOL_TCP, NULL);
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) any = g_inet_socket_address_new (loopback, 0);
  g_autoptr(GSocketAddress) bound = NULL;
  g_autoptr(GError) error = NULL;

  g_socket_bind (socket, any, FALSE, &error);
  g_assert_no_error (error);
  if (listen)
    {
      g_socket_listen (socket, &error);
      g_assert_no_error (error);
    }
  bound = g_socket_get_local_address (socket, &error);
  g_assert_no_error (error);
  *port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));

  return g_steal_pointer (&socket);
}

/* A folder of the running test's own (the isolated cache folder), for
 * files a test writes: test binaries run in parallel, and one writing
 * where another reads races it. */
const char *
symfonic_test_private_dir (void)
{
  const char *dir = g_get_user_cache_dir ();

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  return dir;
}

guint
symfonic_test_closed_port (void)
{
  guint16 port;

  /* bound but never listening, then closed: connecting is refused */
  g_object_unref (symfonic_test_loopback_socket (FALSE, &port));
  return port;
}

static gboolean
flag_cb (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Iterates @context until @done says so or @timeout_ms passed. Returns
 * what @done finally says. */
gboolean
symfonic_test_iterate_until (GMainContext *context,
                             gboolean    (*done) (gpointer data),
                             gpointer      data,
                             guint         timeout_ms)
{
  gboolean timed_out = FALSE;
  GSource *timeout = g_timeout_source_new (timeout_ms);

  g_source_set_callback (timeout, flag_cb, &timed_out, NULL);
  g_source_attach (timeout, context);

  while (!done (data) && !timed_out)
    g_main_context_iteration (context, TRUE);

  g_source_destroy (timeout);
  g_source_unref (timeout);

  return done (data);
}

static void
add_headers (SoupMessage *message,
             const char  *first_name,
             va_list      args)
{
  SoupMessageHeaders *headers = soup_message_get_request_headers (message);

  for (const char *name = first_name; name != NULL; name = va_arg (args, const char *))
    {
      const char *value = va_arg (args, const char *);

      soup_message_headers_replace (headers, name, value);
    }
}

static void stream_read_next (SymfonicTestStream *self);

static void
stream_finish (SymfonicTestStream *self,
               GError             *error)
{
  self->done = TRUE;
  self->end_us = g_get_monotonic_time ();
  if (self->error == NULL)
    self->error = error;
  else
    g_clear_error (&error);
}

static void
stream_read_cb (GObject      *object,
                GAsyncResult *result,
                gpointer      user_data)
{
  SymfonicTestStream *self = user_data;
  GError *error = NULL;
  gssize n;

  self->pending = FALSE;
  n = g_input_stream_read_finish (G_INPUT_STREAM (object), result, &error);
  if (n < 0)
    {
      stream_finish (self, error);
      return;
    }
  if (n == 0)
    {
      stream_finish (self, NULL);
      return;
    }

  g_string_append_len (self->raw, self->buffer, n);
  symfonic_test_sse_parser_feed (self->parser, self->buffer, n, self->frames);
  stream_read_next (self);
}

static void
stream_read_next (SymfonicTestStream *self)
{
  self->pending = TRUE;
  g_input_stream_read_async (self->body, self->buffer, sizeof self->buffer,
                             G_PRIORITY_DEFAULT, self->cancellable,
                             stream_read_cb, self);
}

static void
stream_sent_cb (GObject      *object,
                GAsyncResult *result,
                gpointer      user_data)
{
  SymfonicTestStream *self = user_data;
  GError *error = NULL;

  self->pending = FALSE;
  self->body = soup_session_send_finish (SOUP_SESSION (object), result, &error);
  if (self->body == NULL)
    {
      stream_finish (self, error);
      return;
    }

  self->got_headers = TRUE;
  self->headers_us = g_get_monotonic_time ();
  self->status = soup_message_get_status (self->message);
  stream_read_next (self);
}

/* POSTs @json_body with `Content-Type: application/json` and the extra
 * header name/value pairs, on the thread-default main context, which the
 * caller iterates (the wait functions do). */
SymfonicTestStream *
symfonic_test_stream_post (SoupSession *session,
                           const char  *url,
                           const char  *json_body,
                           const char  *first_header_name,
                           ...)
{
  SymfonicTestStream *self = g_new0 (SymfonicTestStream, 1);
  g_autoptr(GBytes) body = g_bytes_new (json_body, strlen (json_body));
  va_list args;

  self->message = soup_message_new (SOUP_METHOD_POST, url);
  g_assert_nonnull (self->message);
  soup_message_set_request_body_from_bytes (self->message, "application/json", body);
  va_start (args, first_header_name);
  add_headers (self->message, first_header_name, args);
  va_end (args);

  self->cancellable = g_cancellable_new ();
  self->context = g_main_context_ref_thread_default ();
  self->parser = symfonic_test_sse_parser_new ();
  self->frames = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_test_frame_free);
  self->raw = g_string_new (NULL);
  self->start_us = g_get_monotonic_time ();
  self->pending = TRUE;
  soup_session_send_async (session, self->message, G_PRIORITY_DEFAULT,
                           self->cancellable, stream_sent_cb, self);

  return self;
}

static gboolean
stream_has_headers (gpointer data)
{
  SymfonicTestStream *self = data;

  return self->got_headers || self->done;
}

void
symfonic_test_stream_wait_headers (SymfonicTestStream *self)
{
  g_assert_true (symfonic_test_iterate_until (self->context, stream_has_headers, self,
                                              SYMFONIC_TEST_WAIT_MS));
  g_assert_no_error (self->error);
}

typedef struct
{
  SymfonicTestStream *stream;
  guint               n_frames;
} FramesWait;

static gboolean
stream_has_frames (gpointer data)
{
  FramesWait *wait = data;

  return wait->stream->frames->len >= wait->n_frames || wait->stream->done;
}

/* Waits until @n_frames frames arrived (or the stream ended: the caller
 * checks how many it got). */
void
symfonic_test_stream_wait_frames (SymfonicTestStream *self,
                                  guint               n_frames)
{
  FramesWait wait = { self, n_frames };

  g_assert_true (symfonic_test_iterate_until (self->context, stream_has_frames, &wait,
                                              SYMFONIC_TEST_WAIT_MS));
}

static gboolean
stream_is_done (gpointer data)
{
  return ((SymfonicTestStream *) data)->done;
}

/* Waits for the end of the body; fails the test if it did not come. */
void
symfonic_test_stream_wait_done (SymfonicTestStream *self)
{
  g_assert_true (symfonic_test_iterate_until (self->context, stream_is_done, self,
                                              SYMFONIC_TEST_WAIT_MS));
}

static gboolean
stream_is_idle (gpointer data)
{
  return !((SymfonicTestStream *) data)->pending;
}

/* Hangs up: stops reading and closes the response body, which closes the
 * connection (libsoup cannot reuse one whose body was not read to the
 * end). */
void
symfonic_test_stream_close (SymfonicTestStream *self)
{
  g_cancellable_cancel (self->cancellable);
  g_assert_true (symfonic_test_iterate_until (self->context, stream_is_idle, self,
                                              SYMFONIC_TEST_WAIT_MS));
  if (self->body != NULL)
    g_input_stream_close (self->body, NULL, NULL);
  if (!self->done)
    stream_finish (self, NULL);
}

void
symfonic_test_stream_free (SymfonicTestStream *self)
{
  if (self->pending)
    {
      g_cancellable_cancel (self->cancellable);
      symfonic_test_iterate_until (self->context, stream_is_idle, self, SYMFONIC_TEST_WAIT_MS);
    }
  g_clear_object (&self->body);
  g_clear_object (&self->message);
  g_clear_object (&self->cancellable);
  g_main_context_unref (self->context);
  symfonic_test_sse_parser_free (self->parser);
  g_ptr_array_unref (self->frames);
  g_string_free (self->raw, TRUE);
  g_clear_error (&self->error);
  g_free (self);
}

typedef struct
{
  GBytes   *body;
  GError   *error;
  gboolean  done;
} RequestState;

static void
request_cb (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  RequestState *state = user_data;

  state->body = soup_session_send_and_read_finish (SOUP_SESSION (object), result, &state->error);
  state->done = TRUE;
}

static gboolean
request_is_done (gpointer data)
{
  return ((RequestState *) data)->done;
}

/* Sends one request and reads the whole response. @content_type and @body
 * may be NULL for a request without a body. Transport failures fail the
 * test; HTTP statuses are the caller's to check. */
SymfonicTestResponse *
symfonic_test_request (SoupSession *session,
                       const char  *method,
                       const char  *url,
                       const char  *content_type,
                       const char  *body,
                       const char  *first_header_name,
                       ...)
{
  g_autoptr(SoupMessage) message = soup_message_new (method, url);
  g_autoptr(GMainContext) context = g_main_context_ref_thread_default ();
  SymfonicTestResponse *response;
  RequestState state = { NULL, NULL, FALSE };
  va_list args;

  g_assert_nonnull (message);
  if (body != NULL)
    {
      g_autoptr(GBytes) bytes = g_bytes_new (body, strlen (body));

      soup_message_set_request_body_from_bytes (message, content_type, bytes);
    }
  va_start (args, first_header_name);
  add_headers (message, first_header_name, args);
  va_end (args);

  soup_session_send_and_read_async (session, message, G_PRIORITY_DEFAULT, NULL, request_cb, &state);
  g_assert_true (symfonic_test_iterate_until (context, request_is_done, &state, SYMFONIC_TEST_WAIT_MS));
  g_assert_no_error (state.error);

  response = g_new0 (SymfonicTestResponse, 1);
  response->status = soup_message_get_status (message);
  response->headers = soup_message_headers_ref (soup_message_get_response_headers (message));
  response->body = state.body;

  return response;
}

/* The body, NUL-terminated (GBytes from libsoup are). */
const char *
symfonic_test_response_get_text (SymfonicTestResponse *self)
{
  gsize length;
  const char *data = g_bytes_get_data (self->body, &length);

  return data != NULL ? data : "";
}

/* The body as JSON; fails the test unless it is strict JSON. */
JsonNode *
symfonic_test_response_dup_json (SymfonicTestResponse *self)
{
  gsize length;
  const char *data = g_bytes_get_data (self->body, &length);
  g_autofree char *text = g_strndup (data, length);
  g_autoptr(GError) error = NULL;

  symfonic_test_json_is_strict (text, length, &error);
  g_assert_no_error (error);

  return symfonic_test_json_parse (text);
}

void
symfonic_test_response_free (SymfonicTestResponse *self)
{
  g_clear_pointer (&self->headers, soup_message_headers_unref);
  g_clear_pointer (&self->body, g_bytes_unref);
  g_free (self);
}

/* --- metrics, JSON, transcripts ----------------------------------------- */

/* Finds the unlabelled sample `NAME VALUE` in Prometheus text. */
gboolean
symfonic_test_metrics_lookup (const char *text,
                              const char *name,
                              double     *value)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  gsize name_length = strlen (name);

  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *line = lines[i];
      char *end;

      if (line[0] == '#' || strncmp (line, name, name_length) != 0 || line[name_length] != ' ')
        continue;

      *value = g_ascii_strtod (line + name_length + 1, &end);
      return end != line + name_length + 1 && *end == '\0';
    }

  return FALSE;
}

double
symfonic_test_fetch_metric (SoupSession *session,
                            const char  *base_url,
                            const char  *name)
{
  g_autofree char *url = g_strconcat (base_url, "/metrics", NULL);
  g_autoptr(SymfonicTestResponse) response = symfonic_test_request (session, "GET", url, NULL, NULL, NULL);
  double value = -1;

  g_assert_cmpuint (response->status, ==, 200);
  if (!symfonic_test_metrics_lookup (symfonic_test_response_get_text (response), name, &value))
    g_error ("No sample %s in:\n%s", name, symfonic_test_response_get_text (response));

  return value;
}

/* A validator for RFC 8259 JSON, stricter than json-glib's parser (which
 * takes comments, single quotes and trailing garbage in some versions):
 * exactly one value, the grammar's whitespace only, strings of valid UTF-8
 * without raw control characters, escapes from the grammar with paired
 * surrogates, numbers without leading zeros or bare dots. */
typedef struct
{
  const guchar *p;
  const guchar *end;
  const char   *problem;
} StrictJson;

static gboolean strict_value (StrictJson *j, guint depth);

static void
strict_ws (StrictJson *j)
{
  while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
    j->p++;
}

static gboolean
strict_fail (StrictJson *j,
             const char *problem)
{
  if (j->problem == NULL)
    j->problem = problem;
  return FALSE;
}

static gboolean
strict_hex4 (StrictJson *j,
             guint      *code)
{
  *code = 0;
  for (guint i = 0; i < 4; i++, j->p++)
    {
      if (j->p >= j->end || !g_ascii_isxdigit (*j->p))
        return strict_fail (j, "\\u needs four hex digits");
      *code = *code * 16 + g_ascii_xdigit_value (*j->p);
    }

  return TRUE;
}

static gboolean
strict_string (StrictJson *j)
{
  if (j->p >= j->end || *j->p != '"')
    return strict_fail (j, "expected a string");
  j->p++;

  while (j->p < j->end)
    {
      guchar c = *j->p;

      if (c == '"')
        {
          j->p++;
          return TRUE;
        }
      if (c < 0x20)
        return strict_fail (j, "raw control character in a string");
      if (c != '\\')
        {
          j->p++;
          continue;
        }

      j->p++;
      if (j->p >= j->end)
        break;
      if (strchr ("\"\\/bfnrt", *j->p) != NULL && *j->p != '\0')
        {
          j->p++;
          continue;
        }
      if (*j->p != 'u')
        return strict_fail (j, "invalid escape");
      j->p++;
      {
        guint code;
        guint low;

        if (!strict_hex4 (j, &code))
          return FALSE;
        if (code >= 0xDC00 && code <= 0xDFFF)
          return strict_fail (j, "unpaired low surrogate");
        if (code >= 0xD800 && code <= 0xDBFF)
          {
            if (j->end - j->p < 2 || j->p[0] != '\\' || j->p[1] != 'u')
              return strict_fail (j, "unpaired high surrogate");
            j->p += 2;
            if (!strict_hex4 (j, &low))
              return FALSE;
            if (low < 0xDC00 || low > 0xDFFF)
              return strict_fail (j, "unpaired high surrogate");
          }
      }
    }

  return strict_fail (j, "unterminated string");
}

static gboolean
strict_digits (StrictJson *j)
{
  const guchar *start = j->p;

  while (j->p < j->end && g_ascii_isdigit (*j->p))
    j->p++;

  return j->p > start;
}

static gboolean
strict_number (StrictJson *j)
{
  if (j->p < j->end && *j->p == '-')
    j->p++;
  if (j->p < j->end && *j->p == '0')
    j->p++;
  else if (!(j->p < j->end && *j->p >= '1' && *j->p <= '9') || !strict_digits (j))
    return strict_fail (j, "invalid number");

  if (j->p < j->end && *j->p == '.')
    {
      j->p++;
      if (!strict_digits (j))
        return strict_fail (j, "a fraction needs digits");
    }
  if (j->p < j->end && (*j->p == 'e' || *j->p == 'E'))
    {
      j->p++;
      if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
        j->p++;
      if (!strict_digits (j))
        return strict_fail (j, "an exponent needs digits");
    }

  return TRUE;
}

static gboolean
strict_literal (StrictJson *j,
                const char *word)
{
  gsize length = strlen (word);

  if ((gsize) (j->end - j->p) < length || memcmp (j->p, word, length) != 0)
    return strict_fail (j, "unexpected character");
  j->p += length;

  return TRUE;
}

static gboolean
strict_container (StrictJson *j,
                  guint       depth,
                  gboolean    object)
{
  const guchar close = object ? '}' : ']';

  j->p++;
  strict_ws (j);
  if (j->p < j->end && *j->p == close)
    {
      j->p++;
      return TRUE;
    }

  for (;;)
    {
      if (object)
        {
          if (!strict_string (j))
            return FALSE;
          strict_ws (j);
          if (j->p >= j->end || *j->p != ':')
            return strict_fail (j, "expected ':'");
          j->p++;
          strict_ws (j);
        }
      if (!strict_value (j, depth + 1))
        return FALSE;
      strict_ws (j);
      if (j->p < j->end && *j->p == ',')
        {
          j->p++;
          strict_ws (j);
          continue;
        }
      if (j->p < j->end && *j->p == close)
        {
          j->p++;
          return TRUE;
        }
      return strict_fail (j, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static gboolean
strict_value (StrictJson *j,
              guint       depth)
{
  if (depth > 512)
    return strict_fail (j, "nested too deeply");
  if (j->p >= j->end)
    return strict_fail (j, "expected a value");

  switch (*j->p)
    {
    case '{':
      return strict_container (j, depth, TRUE);
    case '[':
      return strict_container (j, depth, FALSE);
    case '"':
      return strict_string (j);
    case 't':
      return strict_literal (j, "true");
    case 'f':
      return strict_literal (j, "false");
    case 'n':
      return strict_literal (j, "null");
    default:
      return strict_number (j);
    }
}

gboolean
symfonic_test_json_is_strict (const char  *text,
                              gssize       length,
                              GError     **error)
{
  StrictJson j;

  if (length < 0)
    length = strlen (text);

  if (!g_utf8_validate_len (text, length, NULL))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "not valid UTF-8 (or a NUL byte): %s", text);
      return FALSE;
    }

  j.p = (const guchar *) text;
  j.end = j.p + length;
  j.problem = NULL;

  strict_ws (&j);
  if (strict_value (&j, 0))
    {
      strict_ws (&j);
      if (j.p != j.end)
        strict_fail (&j, "trailing characters after the value");
    }

  if (j.problem != NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "not strict JSON (%s at offset %" G_GSIZE_FORMAT "): %s",
                   j.problem, (gsize) (j.p - (const guchar *) text), text);
      return FALSE;
    }

  return TRUE;
}

/* Parses @text with json-glib; fails the test if it does not parse. */
JsonNode *
symfonic_test_json_parse (const char *text)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  json_parser_load_from_data (parser, text, -1, &error);
  g_assert_no_error (error);

  return json_node_ref (json_parser_get_root (parser));
}

/* Reads a JSON-lines transcript the way its format is documented (one
 * object per line, blank and '#' lines skipped), independently of the
 * replay plugin. Returns its lines as JSON object nodes. */
GPtrArray *
symfonic_test_load_transcript (const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;
  GPtrArray *entries = g_ptr_array_new_with_free_func ((GDestroyNotify) json_node_unref);

  g_file_get_contents (path, &contents, NULL, &error);
  g_assert_no_error (error);

  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *line = g_strstrip (lines[i]);
      JsonNode *node;

      if (*line == '\0' || *line == '#')
        continue;

      node = symfonic_test_json_parse (line);
      g_assert_true (JSON_NODE_HOLDS_OBJECT (node));
      g_ptr_array_add (entries, node);
    }

  return entries;
}
