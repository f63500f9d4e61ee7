/* test-resume.c: frame ids, run ids, and runs read again after a drop
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Issue 11, item 2 (DESIGN 7a): every typed and chunk frame carries
 * `id: <seq>`, 1, 2, 3 … per run, the terminal and error frames too; the
 * response carries X-Symfonic-Run-ID. A route with resume=true keeps its
 * runs' recent frames; `GET /api/v1/runs/{run_id}/stream` on a route of
 * kind runs sends those after Last-Event-ID, then the live rest, to the
 * principal and tenant that started the run only. A run whose client left
 * goes on, for resume-seconds at most after it, or after the last reader
 * that came back, left.
 *
 * The clients here speak HTTP/1.1 on plain sockets, so that they can drop
 * a connection at any byte, and reconnect as a browser's EventSource does:
 * with Last-Event-ID set to the id of the last whole frame they got.
 */
#include <string.h>

#include "symfonic-test-support.h"

#define RUNS_PATH "/api/v1/runs"
#define ALICE "Authorization: Bearer demo-token-alice\r\nX-Tenant-ID: acme\r\n"
#define BOB "Authorization: Bearer demo-token-bob\r\nX-Tenant-ID: globex\r\n"
#define ALICE_OTHER_TENANT "Authorization: Bearer demo-token-alice\r\nX-Tenant-ID: demo\r\n"

#define CHUNKS_PATH "/api/v1/stream"

static char *
pipeline_text (const char *extra_route_lines)
{
  return g_strdup_printf ("[gateway]\n"
                          "listen=127.0.0.1:8080\n"
                          "workers=2\n"
                          "\n"
                          "[route:typed]\n"
                          "path=" SYMFONIC_TEST_TYPED_PATH "\n"
                          "kind=typed\n"
                          "source=fixtures\n"
                          "%s\n"
                          "\n"
                          "[route:chunks]\n"
                          "path=" CHUNKS_PATH "\n"
                          "kind=chunks\n"
                          "source=fixtures\n"
                          "stages=projection\n"
                          "%s\n"
                          "\n"
                          "[source:fixtures]\n"
                          "type=replay\n"
                          "transcripts=transcripts\n"
                          "default-transcript=typed\n"
                          "transcript-header=X-Symfonic-Transcript\n"
                          "\n"
                          "[stage:projection]\n"
                          "type=projection\n",
                          extra_route_lines, extra_route_lines);
}

static SymfonicServer *
start_server (const char *extra_route_lines)
{
  g_autofree char *base_dir = g_test_build_filename (G_TEST_DIST, "integration", NULL);
  g_autofree char *text = pipeline_text (extra_route_lines);

  return symfonic_test_server_new (text, base_dir, 2);
}

static SymfonicTestStream *
run_whole (SymfonicServer *server,
           const char     *path,
           const char     *transcript)
{
  g_autofree char *url = symfonic_test_server_dup_url (server, path);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  SymfonicTestStream *stream = symfonic_test_stream_post (session, url, "{\"query\":\"q\"}",
                                                          "X-Symfonic-Transcript", transcript, NULL);

  symfonic_test_stream_wait_done (stream);
  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, 200);

  return stream;
}

static const char *
run_id_of (SymfonicTestStream *stream)
{
  return soup_message_headers_get_one (soup_message_get_response_headers (stream->message), "X-Symfonic-Run-ID");
}

/* ids 1..n, in order, on every frame, the terminal included */
static void
assert_ids (SymfonicTestStream *stream,
            guint               n_frames)
{
  g_assert_cmpuint (stream->frames->len, ==, n_frames);
  for (guint i = 0; i < stream->frames->len; i++)
    {
      SymfonicTestFrame *frame = g_ptr_array_index (stream->frames, i);
      g_autofree char *id = g_strdup_printf ("%u", i + 1);

      g_assert_cmpstr (frame->id, ==, id);
    }
}

static void
test_ids_typed (void)
{
  g_autoptr(SymfonicServer) server = start_server ("");
  g_autoptr(SymfonicTestStream) stream = run_whole (server, SYMFONIC_TEST_TYPED_PATH, "typed");
  SymfonicTestFrame *last;

  /* the typed transcript's fourteen events, the terminal last */
  assert_ids (stream, 14);
  last = g_ptr_array_index (stream->frames, 13);
  g_assert_cmpstr (last->event, ==, "ResponseCompleteEvent");
  g_assert_true (g_str_has_prefix (stream->raw->str, "id: 1\nevent: ActivationEvent\ndata: "));
  g_assert_true (g_uuid_string_is_valid (run_id_of (stream)));
}

static void
test_ids_chunks (void)
{
  g_autoptr(SymfonicServer) server = start_server ("");
  g_autoptr(SymfonicTestStream) stream = run_whole (server, CHUNKS_PATH, "paced");
  g_autofree char *run_id_member = NULL;
  SymfonicTestFrame *last;

  /* seven text_delta chunks and done */
  assert_ids (stream, 8);
  last = g_ptr_array_index (stream->frames, 7);
  g_assert_true (g_str_has_prefix (last->data, "{\"event_type\":\"done\""));
  g_assert_true (g_str_has_prefix (stream->raw->str, "id: 1\ndata: {\"event_type\":\"text_delta\",\"data\":\"one \""));
  g_assert_true (g_uuid_string_is_valid (run_id_of (stream)));
  /* the header names the run whose id every chunk carries */
  run_id_member = g_strdup_printf ("\"run_id\":\"%s\"}", run_id_of (stream));
  g_assert_true (g_str_has_suffix (last->data, run_id_member));
}

/* The error terminal is numbered like any frame. */
static void
test_ids_error_terminal (void)
{
  g_autoptr(SymfonicServer) server = start_server ("");
  g_autoptr(SymfonicTestStream) stream = run_whole (server, SYMFONIC_TEST_TYPED_PATH, "midstream-error");
  SymfonicTestFrame *last = g_ptr_array_index (stream->frames, stream->frames->len - 1);

  g_assert_cmpstr (last->event, ==, "error");
  assert_ids (stream, stream->frames->len);
}

/* Two runs, two ids. */
static void
test_run_ids_differ (void)
{
  g_autoptr(SymfonicServer) server = start_server ("");
  g_autoptr(SymfonicTestStream) a = run_whole (server, SYMFONIC_TEST_TYPED_PATH, "paced");
  g_autoptr(SymfonicTestStream) b = run_whole (server, SYMFONIC_TEST_TYPED_PATH, "paced");

  g_assert_cmpstr (run_id_of (a), !=, run_id_of (b));
}

/* Run ids come from the kernel, not from GLib's generator: seeded with 33,
 * that generator's first three UUIDs are the ones below, and whoever
 * learns its state (it is a Mersenne Twister) could name runs not yet
 * started. */
static void
test_run_ids_unpredictable (void)
{
  static const char * const seeded[] = {
    "145c9e3f-8709-4fb0-9896-3173420256ab",
    "926a3369-c96c-42eb-b900-a342c328251c",
    "6640d2de-3d88-4cc0-93c6-5e2f8eb5ea9c",
  };
  g_autoptr(SymfonicServer) server = start_server ("");

  g_random_set_seed (33);
  for (guint i = 0; i < G_N_ELEMENTS (seeded); i++)
    {
      g_autoptr(SymfonicTestStream) stream = run_whole (server, SYMFONIC_TEST_TYPED_PATH, "paced");
      const char *run_id = run_id_of (stream);

      g_assert_true (g_uuid_string_is_valid (run_id));
      /* a random (version 4) UUID, as before */
      g_assert_cmpint (run_id[14], ==, '4');
      g_assert_nonnull (strchr ("89ab", run_id[19]));
      g_assert_cmpstr (run_id, !=, seeded[i]);
    }
}

/* --- a store whose runs end late ----------------------------------------- */

/* A memory store that holds back each run's end until the test lets it
 * go: a reader then reads the terminal frame of a run that has not ended,
 * as it can whenever the end lands a moment after the last frame. */
#define TEST_TYPE_LATE_CLOSE_STORE (test_late_close_store_get_type ())

G_DECLARE_FINAL_TYPE (TestLateCloseStore, test_late_close_store, TEST, LATE_CLOSE_STORE, GObject)

struct _TestLateCloseStore
{
  GObject           parent_instance;

  SymfonicRunStore *inner;
  /* run ids whose end is held, as workers called close_run() */
  GMutex            lock;
  GPtrArray        *held;
  guint             keep_seconds;
};

static void test_late_close_store_run_store_init (SymfonicRunStoreInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (TestLateCloseStore, test_late_close_store, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_RUN_STORE,
                                                      test_late_close_store_run_store_init))

static void
test_late_close_store_finalize (GObject *object)
{
  TestLateCloseStore *self = TEST_LATE_CLOSE_STORE (object);

  g_object_unref (self->inner);
  g_ptr_array_unref (self->held);
  g_mutex_clear (&self->lock);

  G_OBJECT_CLASS (test_late_close_store_parent_class)->finalize (object);
}

static void
test_late_close_store_class_init (TestLateCloseStoreClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = test_late_close_store_finalize;
}

static void
test_late_close_store_init (TestLateCloseStore *self)
{
  self->inner = SYMFONIC_RUN_STORE (g_object_new (SYMFONIC_TYPE_MEMORY_RUN_STORE, NULL));
  self->held = g_ptr_array_new_with_free_func (g_free);
  g_mutex_init (&self->lock);
}

static gboolean
late_open_run (SymfonicRunStore  *store,
               const char        *run_id,
               const char        *principal_id,
               const char        *tenant_id,
               guint              max_frames,
               guint64            max_bytes,
               GError           **error)
{
  return symfonic_run_store_try_open_run (TEST_LATE_CLOSE_STORE (store)->inner, run_id, principal_id, tenant_id,
                                      max_frames, max_bytes, error);
}

static void
late_append (SymfonicRunStore *store,
             const char       *run_id,
             guint64           seq,
             const char       *frame,
             gsize             length)
{
  symfonic_run_store_append (TEST_LATE_CLOSE_STORE (store)->inner, run_id, seq, frame, length);
}

static void
late_close_run (SymfonicRunStore *store,
                const char       *run_id,
                guint             keep_seconds)
{
  TestLateCloseStore *self = TEST_LATE_CLOSE_STORE (store);

  g_mutex_lock (&self->lock);
  g_ptr_array_add (self->held, g_strdup (run_id));
  self->keep_seconds = keep_seconds;
  g_mutex_unlock (&self->lock);
}

static GPtrArray *
late_read (SymfonicRunStore  *store,
           const char        *run_id,
           const char        *principal_id,
           const char        *tenant_id,
           guint64            after,
           gboolean          *ended,
           GError           **error)
{
  return symfonic_run_store_try_read (TEST_LATE_CLOSE_STORE (store)->inner, run_id, principal_id, tenant_id, after,
                                  ended, error);
}

static void
late_wait_async (SymfonicRunStore    *store,
                 const char          *run_id,
                 const char          *principal_id,
                 const char          *tenant_id,
                 guint64              after,
                 GCancellable        *cancellable,
                 GAsyncReadyCallback  callback,
                 gpointer             user_data)
{
  symfonic_run_store_wait_async (TEST_LATE_CLOSE_STORE (store)->inner, run_id, principal_id, tenant_id, after,
                                 cancellable, callback, user_data);
}

static gboolean
late_wait_finish (SymfonicRunStore  *store,
                  GAsyncResult      *result,
                  GError           **error)
{
  return symfonic_run_store_wait_finish (TEST_LATE_CLOSE_STORE (store)->inner, result, error);
}

static void
test_late_close_store_run_store_init (SymfonicRunStoreInterface *iface)
{
  iface->try_open_run = late_open_run;
  iface->append = late_append;
  iface->close_run = late_close_run;
  iface->try_read = late_read;
  iface->wait_async = late_wait_async;
  iface->wait_finish = late_wait_finish;
}

/* Ends the runs whose end was held; returns how many. */
static guint
test_late_close_store_release (TestLateCloseStore *self)
{
  g_autoptr(GPtrArray) held = NULL;

  g_mutex_lock (&self->lock);
  held = g_steal_pointer (&self->held);
  self->held = g_ptr_array_new_with_free_func (g_free);
  g_mutex_unlock (&self->lock);

  for (guint i = 0; i < held->len; i++)
    symfonic_run_store_close_run (self->inner, g_ptr_array_index (held, i), self->keep_seconds);

  return held->len;
}

/* --- a store that answers later ------------------------------------------ */

/* A memory store that answers opens and reads only asynchronously, in a
 * later main-loop turn, as a store across the network does: its try
 * methods are the interface's, which would block. */
#define TEST_TYPE_LATER_STORE (test_later_store_get_type ())

G_DECLARE_FINAL_TYPE (TestLaterStore, test_later_store, TEST, LATER_STORE, GObject)

struct _TestLaterStore
{
  GObject           parent_instance;

  SymfonicRunStore *inner;
  /* what the gateway asked later, rather than at once */
  gint              opens;
  gint              reads;
};

static void test_later_store_run_store_init (SymfonicRunStoreInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (TestLaterStore, test_later_store, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_RUN_STORE, test_later_store_run_store_init))

static void
test_later_store_finalize (GObject *object)
{
  g_object_unref (TEST_LATER_STORE (object)->inner);

  G_OBJECT_CLASS (test_later_store_parent_class)->finalize (object);
}

static void
test_later_store_class_init (TestLaterStoreClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = test_later_store_finalize;
}

static void
test_later_store_init (TestLaterStore *self)
{
  self->inner = SYMFONIC_RUN_STORE (g_object_new (SYMFONIC_TYPE_MEMORY_RUN_STORE, NULL));
}

static void
later_open_run_async (SymfonicRunStore    *store,
                      const char          *run_id,
                      const char          *principal_id,
                      const char          *tenant_id,
                      guint                max_frames,
                      guint64              max_bytes,
                      GCancellable        *cancellable,
                      GAsyncReadyCallback  callback,
                      gpointer             user_data)
{
  TestLaterStore *self = TEST_LATER_STORE (store);
  g_autoptr(GTask) task = g_task_new (store, cancellable, callback, user_data);
  GError *error = NULL;

  g_atomic_int_inc (&self->opens);
  /* returned in the turn it was asked in: GTask answers in a later one */
  if (symfonic_run_store_try_open_run (self->inner, run_id, principal_id, tenant_id, max_frames, max_bytes, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static gboolean
later_open_run_finish (SymfonicRunStore  *store,
                       GAsyncResult      *result,
                       GError           **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
later_append (SymfonicRunStore *store,
              const char       *run_id,
              guint64           seq,
              const char       *frame,
              gsize             length)
{
  symfonic_run_store_append (TEST_LATER_STORE (store)->inner, run_id, seq, frame, length);
}

static void
later_close_run (SymfonicRunStore *store,
                 const char       *run_id,
                 guint             keep_seconds)
{
  symfonic_run_store_close_run (TEST_LATER_STORE (store)->inner, run_id, keep_seconds);
}

typedef struct
{
  GPtrArray *frames;
  gboolean   ended;
} LaterRead;

static void
later_read_free (gpointer data)
{
  LaterRead *read = data;

  g_ptr_array_unref (read->frames);
  g_free (read);
}

static void
later_read_async (SymfonicRunStore    *store,
                  const char          *run_id,
                  const char          *principal_id,
                  const char          *tenant_id,
                  guint64              after,
                  GCancellable        *cancellable,
                  GAsyncReadyCallback  callback,
                  gpointer             user_data)
{
  TestLaterStore *self = TEST_LATER_STORE (store);
  g_autoptr(GTask) task = g_task_new (store, cancellable, callback, user_data);
  LaterRead *read = g_new0 (LaterRead, 1);
  GError *error = NULL;

  g_atomic_int_inc (&self->reads);
  read->frames = symfonic_run_store_try_read (self->inner, run_id, principal_id, tenant_id, after, &read->ended,
                                              &error);
  if (read->frames == NULL)
    {
      g_free (read);
      g_task_return_error (task, error);
      return;
    }
  g_task_return_pointer (task, read, later_read_free);
}

static GPtrArray *
later_read_finish (SymfonicRunStore  *store,
                   GAsyncResult      *result,
                   gboolean          *ended,
                   GError           **error)
{
  LaterRead *read = g_task_propagate_pointer (G_TASK (result), error);
  GPtrArray *frames;

  if (read == NULL)
    return NULL;
  frames = g_steal_pointer (&read->frames);
  *ended = read->ended;
  g_free (read);

  return frames;
}

static void
later_wait_async (SymfonicRunStore    *store,
                  const char          *run_id,
                  const char          *principal_id,
                  const char          *tenant_id,
                  guint64              after,
                  GCancellable        *cancellable,
                  GAsyncReadyCallback  callback,
                  gpointer             user_data)
{
  symfonic_run_store_wait_async (TEST_LATER_STORE (store)->inner, run_id, principal_id, tenant_id, after,
                                 cancellable, callback, user_data);
}

static gboolean
later_wait_finish (SymfonicRunStore  *store,
                   GAsyncResult      *result,
                   GError           **error)
{
  return symfonic_run_store_wait_finish (TEST_LATER_STORE (store)->inner, result, error);
}

static void
test_later_store_run_store_init (SymfonicRunStoreInterface *iface)
{
  iface->open_run_async = later_open_run_async;
  iface->open_run_finish = later_open_run_finish;
  iface->append = later_append;
  iface->close_run = later_close_run;
  iface->read_async = later_read_async;
  iface->read_finish = later_read_finish;
  iface->wait_async = later_wait_async;
  iface->wait_finish = later_wait_finish;
}

/* --- resumable runs ------------------------------------------------------ */

static char *
resume_pipeline (guint       resume_frames,
                 guint       resume_bytes,
                 guint       resume_seconds,
                 double      time_scale,
                 const char *extra_stages,
                 const char *extra_groups)
{
  g_autofree char *tokens = g_test_build_filename (G_TEST_DIST, "..", "data", "demo-tokens.ini", NULL);
  char scale[G_ASCII_DTOSTR_BUF_SIZE];

  g_ascii_dtostr (scale, sizeof scale, time_scale);
  return g_strdup_printf ("[gateway]\nlisten=127.0.0.1:8080\nworkers=2\n\n"
                          "[route:typed]\npath=" SYMFONIC_TEST_TYPED_PATH "\nkind=typed\nsource=fixtures\n"
                          "stages=auth%s\nresume=true\nresume-frames=%u\nresume-bytes=%u\nresume-seconds=%u\n\n"
                          "[route:chunks]\npath=" CHUNKS_PATH "\nkind=chunks\nsource=fixtures\n"
                          "stages=auth;projection\nresume=true\nresume-frames=%u\nresume-bytes=%u\nresume-seconds=%u\n\n"
                          "[route:runs]\npath=" RUNS_PATH "\nkind=runs\nsource=fixtures\nstages=auth\n\n"
                          "[source:fixtures]\ntype=replay\ntranscripts=transcripts\ndefault-transcript=long\n"
                          "transcript-header=X-Symfonic-Transcript\ntime-scale=%s\n\n"
                          "[stage:auth]\ntype=auth\ntokens-file=%s\n\n"
                          "[stage:projection]\ntype=projection\n\n%s",
                          extra_stages, resume_frames, resume_bytes, resume_seconds, resume_frames, resume_bytes,
                          resume_seconds,
                          scale, tokens, extra_groups);
}

static SymfonicServer *
resume_server (guint       resume_frames,
               guint       resume_bytes,
               guint       resume_seconds,
               double      time_scale,
               const char *extra_stages,
               const char *extra_groups)
{
  g_autofree char *base_dir = g_test_build_filename (G_TEST_DIST, "integration", NULL);
  g_autofree char *text = resume_pipeline (resume_frames, resume_bytes, resume_seconds, time_scale, extra_stages,
                                           extra_groups);

  return symfonic_test_server_new (text, base_dir, 2);
}

/* Restarts @server on @store, so that a test sees what the store holds. */
static void
serve_from (SymfonicServer *server,
            gpointer        store)
{
  g_autoptr(GError) error = NULL;

  symfonic_server_stop (server);
  symfonic_server_set_run_store (server, SYMFONIC_RUN_STORE (store));
  g_assert_true (symfonic_server_start (server, &error));
  g_assert_no_error (error);
}

typedef struct
{
  GSocket               *socket;
  GString               *raw;
  gsize                  head_end;
  gsize                  pos;
  guint                  status;
  gssize                 content_length;
  gboolean               ended;
  gboolean               closed;
  GString               *body;
  SymfonicTestSseParser *parser;
  GPtrArray             *frames;
} Client;

static void
client_free (Client *self)
{
  g_clear_object (&self->socket);
  g_string_free (self->raw, TRUE);
  g_string_free (self->body, TRUE);
  symfonic_test_sse_parser_free (self->parser);
  g_ptr_array_unref (self->frames);
  g_free (self);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Client, client_free)

static Client *
client_send (SymfonicServer *server,
             const char     *request)
{
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) address = g_inet_socket_address_new (loopback, symfonic_server_get_port (server));
  g_autoptr(GError) error = NULL;
  Client *self = g_new0 (Client, 1);

  self->socket = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &error);
  g_assert_no_error (error);
  g_socket_set_timeout (self->socket, SYMFONIC_TEST_WAIT_MS / 1000);
  g_assert_true (g_socket_connect (self->socket, address, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_socket_send (self->socket, request, strlen (request), NULL, &error), ==, strlen (request));
  self->raw = g_string_new (NULL);
  self->body = g_string_new (NULL);
  self->content_length = -1;
  self->parser = symfonic_test_sse_parser_new ();
  self->frames = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_test_frame_free);

  return self;
}

/* POSTs a run of @transcript to @path as alice. */
static Client *
client_post (SymfonicServer *server,
             const char     *path,
             const char     *transcript)
{
  g_autofree char *request = g_strdup_printf ("POST %s HTTP/1.1\r\nHost: gateway\r\n" ALICE
                                              "X-Symfonic-Transcript: %s\r\nContent-Type: application/json\r\n"
                                              "Content-Length: 13\r\n\r\n{\"query\":\"q\"}",
                                              path, transcript);

  return client_send (server, request);
}

/* GETs a run's stream with @credentials, from after @last_event_id (NULL
 * for no header). */
static Client *
client_get (SymfonicServer *server,
            const char     *run_id,
            const char     *credentials,
            const char     *last_event_id)
{
  g_autofree char *last = last_event_id != NULL ? g_strdup_printf ("Last-Event-ID: %s\r\n", last_event_id)
                                                : g_strdup ("");
  g_autofree char *request = g_strdup_printf ("GET " RUNS_PATH "/%s/stream HTTP/1.1\r\nHost: gateway\r\n%s%s"
                                              "Accept: text/event-stream\r\n\r\n",
                                              run_id, credentials, last);

  return client_send (server, request);
}

static const char *
client_header (Client     *self,
               const char *name,
               char      **value)
{
  g_autofree char *needle = g_strdup_printf ("\r\n%s: ", name);
  const char *p = g_strstr_len (self->raw->str, self->head_end, needle);

  g_clear_pointer (value, g_free);
  if (p != NULL)
    {
      p += strlen (needle);
      *value = g_strndup (p, strcspn (p, "\r"));
    }

  return *value;
}

/* Decodes what came in: the head, then chunks or a sized body. */
static void
client_decode (Client *self)
{
  if (self->head_end == 0)
    {
      const char *end = strstr (self->raw->str, "\r\n\r\n");
      g_autofree char *length = NULL;

      if (end == NULL)
        return;
      self->head_end = end + 4 - self->raw->str;
      self->pos = self->head_end;
      g_assert_true (g_str_has_prefix (self->raw->str, "HTTP/1.1 "));
      self->status = g_ascii_strtoull (self->raw->str + strlen ("HTTP/1.1 "), NULL, 10);
      if (client_header (self, "Content-Length", &length) != NULL)
        self->content_length = g_ascii_strtoll (length, NULL, 10);
      /* a 204 has no body, whatever its head says (RFC 9110, 15.3.5) */
      if (self->status == 204)
        self->content_length = 0;
    }

  if (self->content_length >= 0)
    {
      if (self->raw->len >= self->head_end + self->content_length)
        {
          g_string_append_len (self->body, self->raw->str + self->head_end, self->content_length);
          self->ended = TRUE;
        }
      return;
    }

  while (!self->ended)
    {
      const char *line = self->raw->str + self->pos;
      const char *line_end = g_strstr_len (line, self->raw->len - self->pos, "\r\n");
      guint64 size;

      if (line_end == NULL)
        return;
      size = g_ascii_strtoull (line, NULL, 16);
      if (self->raw->len < (gsize) (line_end + 2 - self->raw->str) + size + 2)
        return;
      if (size == 0)
        {
          self->ended = TRUE;
          return;
        }
      g_string_append_len (self->body, line_end + 2, size);
      symfonic_test_sse_parser_feed (self->parser, line_end + 2, size, self->frames);
      self->pos = line_end + 2 - self->raw->str + size + 2;
    }
}

/* Reads once; FALSE when the peer closed. */
static gboolean
client_pump (Client *self)
{
  g_autoptr(GError) error = NULL;
  char buffer[4096];
  gssize n = g_socket_receive (self->socket, buffer, sizeof buffer, NULL, &error);

  g_assert_no_error (error);
  if (n == 0)
    {
      self->closed = TRUE;
      return FALSE;
    }
  g_string_append_len (self->raw, buffer, n);
  client_decode (self);

  return TRUE;
}

static void
client_read_frames (Client *self,
                    guint   n_frames)
{
  while (!self->ended && self->frames->len < n_frames && client_pump (self))
    ;
}

static void
client_read_to_end (Client *self)
{
  while (!self->ended && client_pump (self))
    ;
  g_assert_true (self->ended);
}

static char *
client_run_id (Client *self)
{
  char *run_id = NULL;

  client_read_frames (self, 0);
  while (self->head_end == 0 && client_pump (self))
    ;
  g_assert_cmpuint (self->status, ==, 200);
  g_assert_nonnull (client_header (self, "X-Symfonic-Run-ID", &run_id));

  return run_id;
}

static SymfonicTestFrame *
frame_at (GPtrArray *frames,
          guint      i)
{
  return g_ptr_array_index (frames, i);
}

/* The body of a refusal: JSON with the status and code, nothing else. */
static void
assert_refused (Client     *self,
                guint       status,
                const char *code)
{
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *type = NULL;
  JsonObject *object;

  client_read_to_end (self);
  g_test_message ("refusal: %s", self->raw->str);
  g_assert_cmpuint (self->status, ==, status);
  g_assert_cmpstr (client_header (self, "Content-Type", &type), ==, "application/json");
  node = symfonic_test_json_parse (self->body->str);
  object = json_node_get_object (node);
  g_assert_cmpint (json_object_get_int_member (object, "status"), ==, status);
  g_assert_cmpstr (json_object_get_string_member (object, "code"), ==, code);
  g_assert_true (JSON_NODE_HOLDS_VALUE (json_object_get_member (object, "detail")));
}

/* A chunk's data without the id of its run, which differs between runs. */
static char *
without_run_id (const char *data)
{
  g_autoptr(GRegex) run_id = g_regex_new (",\"run_id\":\"[0-9a-f-]{36}\"}$", 0, 0, NULL);

  return g_regex_replace_literal (run_id, data, -1, 0, "}", 0, NULL);
}

/* Frames equal but for the gateway's measured duration in the terminal
 * and the run ids. */
static void
assert_same_frames (GPtrArray *got,
                    GPtrArray *expected)
{
  g_assert_cmpuint (got->len, ==, expected->len);
  for (guint i = 0; i < got->len; i++)
    {
      SymfonicTestFrame *a = frame_at (got, i);
      SymfonicTestFrame *b = frame_at (expected, i);
      g_autofree char *id = g_strdup_printf ("%u", i + 1);

      g_assert_cmpstr (a->id, ==, id);
      g_assert_cmpstr (b->id, ==, id);
      g_assert_cmpstr (a->event, ==, b->event);
      if (g_str_equal (a->event, "ResponseCompleteEvent"))
        g_assert_cmpint (strcspn (a->data, "0123456789"), ==, strcspn (b->data, "0123456789"));
      else
        {
          g_autofree char *a_data = without_run_id (a->data);
          g_autofree char *b_data = without_run_id (b->data);

          g_assert_cmpstr (a_data, ==, b_data);
        }
    }
}

/* As a browser's EventSource: whenever the connection drops, reconnect
 * with the id of the last whole frame in Last-Event-ID, until the
 * terminal. @drops are counts of frames after which to hang up, rising. */
static GPtrArray *
read_as_event_source (SymfonicServer *server,
                      const char     *path,
                      const guint    *drops,
                      guint           n_drops)
{
  GPtrArray *all = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_test_frame_free);
  g_autoptr(Client) client = client_post (server, path, "long");
  g_autofree char *run_id = client_run_id (client);

  for (guint d = 0;; d++)
    {
      guint target = d < n_drops ? drops[d] : G_MAXUINT;
      const char *last_id;

      client_read_frames (client, target - all->len);
      /* what the client has whole is what it keeps; a partial frame goes */
      while (client->frames->len > 0 && all->len < target)
        g_ptr_array_add (all, g_ptr_array_steal_index (client->frames, 0));
      if (d >= n_drops)
        break;
      last_id = frame_at (all, all->len - 1)->id;
      g_clear_pointer (&client, client_free);
      client = client_get (server, run_id, ALICE, last_id);
    }
  g_assert_true (client->ended);

  return all;
}

static GPtrArray *
read_uninterrupted (SymfonicServer *server,
                    const char     *path)
{
  g_autoptr(Client) client = client_post (server, path, "long");

  client_read_to_end (client);
  g_assert_cmpuint (client->status, ==, 200);

  return g_ptr_array_ref (client->frames);
}

/* On the server's own store, or on @store. */
static void
resume_at_random_points (const char *path,
                         gpointer    store)
{
  g_autoptr(SymfonicServer) server = resume_server (4096, SYMFONIC_ROUTE_DEFAULT_RESUME_BYTES, 300, 0.3, "", "");
  guint32 seed = g_test_rand_int ();
  g_autoptr(GRand) rand = g_rand_new_with_seed (seed);
  g_autoptr(GPtrArray) expected = NULL;
  g_autoptr(GPtrArray) got = NULL;
  guint drops[20];
  guint n = 0;

  if (store != NULL)
    serve_from (server, store);
  expected = read_uninterrupted (server, path);
  g_test_message ("seed %u", seed);
  /* twenty distinct points before the terminal, in order */
  while (n < G_N_ELEMENTS (drops))
    {
      guint point = g_rand_int_range (rand, 1, expected->len);
      guint i;

      for (i = 0; i < n && drops[i] != point; i++)
        ;
      if (i == n)
        drops[n++] = point;
    }
  for (guint i = 1; i < n; i++)
    for (guint j = i; j > 0 && drops[j - 1] > drops[j]; j--)
      {
        guint t = drops[j];

        drops[j] = drops[j - 1];
        drops[j - 1] = t;
      }

  got = read_as_event_source (server, path, drops, n);
  assert_same_frames (got, expected);
}

static void
test_resume_typed_random_drops (void)
{
  resume_at_random_points (SYMFONIC_TEST_TYPED_PATH, NULL);
}

static void
test_resume_chunks_random_drops (void)
{
  resume_at_random_points (CHUNKS_PATH, NULL);
}

/* A store that answers opens and reads in a later main-loop turn (as a
 * store across the network does) serves the same frames, every one once:
 * the run waits for its opening, and each reader for its reads. */
static void
test_resume_store_answers_later (void)
{
  g_autoptr(TestLaterStore) store = g_object_new (TEST_TYPE_LATER_STORE, NULL);

  resume_at_random_points (SYMFONIC_TEST_TYPED_PATH, store);
  /* the uninterrupted run and the one read again */
  g_assert_cmpint (g_atomic_int_get (&store->opens), ==, 2);
  g_assert_cmpint (g_atomic_int_get (&store->reads), >=, 20);
}

/* Without Last-Event-ID the run is read from its first frame; a run is
 * read by the principal and tenant that started it only, and 404 is all
 * anyone else learns. */
static void
test_resume_from_start_and_owner_only (void)
{
  g_autoptr(SymfonicServer) server = resume_server (4096, SYMFONIC_ROUTE_DEFAULT_RESUME_BYTES, 300, 0.1, "", "");
  g_autoptr(Client) run = client_post (server, SYMFONIC_TEST_TYPED_PATH, "paced");
  g_autofree char *run_id = client_run_id (run);
  g_autofree char *header = NULL;

  client_read_to_end (run);
  {
    g_autoptr(Client) again = client_get (server, run_id, ALICE, NULL);

    client_read_to_end (again);
    g_assert_cmpuint (again->status, ==, 200);
    g_assert_cmpstr (client_header (again, "X-Symfonic-Run-ID", &header), ==, run_id);
    g_assert_cmpstr (client_header (again, "Cache-Control", &header), ==, "no-cache");
    g_assert_cmpstr (client_header (again, "X-Accel-Buffering", &header), ==, "no");
    g_assert_cmpstr (again->body->str, ==, strstr (run->raw->str, "\r\n\r\n") != NULL ? run->body->str : NULL);
    g_assert_cmpuint (again->frames->len, ==, 9);
  }
  {
    g_autoptr(Client) other = client_get (server, run_id, BOB, NULL);

    assert_refused (other, 404, "not_found");
  }
  {
    g_autoptr(Client) other = client_get (server, run_id, ALICE_OTHER_TENANT, "3");

    assert_refused (other, 404, "not_found");
  }
  {
    g_autoptr(Client) unknown = client_get (server, "0b1e2a4c-5d6f-4a8b-9c0d-1e2f3a4b5c6d", ALICE, NULL);

    assert_refused (unknown, 404, "not_found");
  }
  {
    g_autoptr(Client) anonymous = client_get (server, run_id, "", NULL);

    assert_refused (anonymous, 401, "unauthorized");
  }
}

static void
test_resume_malformed (void)
{
  static const char * const bad_ids[] = { "x1", "-1", "1.0", "1 2", "123456789012345678901", "0x10" };
  g_autoptr(SymfonicServer) server = resume_server (4096, SYMFONIC_ROUTE_DEFAULT_RESUME_BYTES, 300, 0.1, "", "");
  g_autoptr(Client) run = client_post (server, SYMFONIC_TEST_TYPED_PATH, "paced");
  g_autofree char *run_id = client_run_id (run);

  client_read_to_end (run);
  for (guint i = 0; i < G_N_ELEMENTS (bad_ids); i++)
    {
      g_autoptr(Client) client = client_get (server, run_id, ALICE, bad_ids[i]);

      assert_refused (client, 400, "bad_request");
    }
  {
    g_autoptr(Client) client = client_get (server, "not-a-run", ALICE, NULL);

    assert_refused (client, 400, "bad_request");
  }
}

/* Every Last-Event-ID a client may send, against a run of nine frames
 * that ended: a frame id it got reads on after it; anything else is 400,
 * whatever libsoup makes of it. */
static void
test_resume_last_event_id (void)
{
  static const struct
  {
    const char *name;
    /* the request's Last-Event-ID lines, whole */
    const char *lines;
    guint       status;
    /* the frames a 200 sends */
    guint       frames;
  } cases[] = {
    { "none", "", 200, 9 },
    { "zero", "Last-Event-ID: 0\r\n", 200, 9 },
    { "first", "Last-Event-ID: 1\r\n", 200, 8 },
    { "leading zero", "Last-Event-ID: 03\r\n", 200, 6 },
    /* optional whitespace around a field value is not part of it */
    { "surrounding spaces", "Last-Event-ID:   3  \r\n", 200, 6 },
    /* the terminal's: the reader has every frame, and an EventSource
     * stops on 204 where an empty stream has it come back */
    { "last", "Last-Event-ID: 9\r\n", 204, 0 },
    { "empty", "Last-Event-ID:\r\n", 400, 0 },
    { "blank", "Last-Event-ID:   \r\n", 400, 0 },
    { "plus", "Last-Event-ID: +3\r\n", 400, 0 },
    { "minus", "Last-Event-ID: -3\r\n", 400, 0 },
    { "minus zero", "Last-Event-ID: -0\r\n", 400, 0 },
    { "inner space", "Last-Event-ID: 1 2\r\n", 400, 0 },
    { "inner tab", "Last-Event-ID: 1\t2\r\n", 400, 0 },
    { "folded", "Last-Event-ID: 3\r\n 4\r\n", 400, 0 },
    { "list", "Last-Event-ID: 3,4\r\n", 400, 0 },
    { "twice", "Last-Event-ID: 3\r\nLast-Event-ID: 4\r\n", 400, 0 },
    { "twice, one bad", "Last-Event-ID: x\r\nLast-Event-ID: 3\r\n", 400, 0 },
    { "hex", "Last-Event-ID: 0x3\r\n", 400, 0 },
    { "decimal point", "Last-Event-ID: 3.0\r\n", 400, 0 },
    { "non-ASCII digit", "Last-Event-ID: \xd9\xa3\r\n", 400, 0 },
    { "past the last", "Last-Event-ID: 10\r\n", 400, 0 },
    { "far past the last", "Last-Event-ID: 1000\r\n", 400, 0 },
    { "largest id", "Last-Event-ID: 18446744073709551615\r\n", 400, 0 },
    { "overflow", "Last-Event-ID: 18446744073709551616\r\n", 400, 0 },
    { "21 digits", "Last-Event-ID: 123456789012345678901\r\n", 400, 0 },
  };
  g_autoptr(SymfonicServer) server = resume_server (4096, SYMFONIC_ROUTE_DEFAULT_RESUME_BYTES, 300, 0.1, "", "");
  g_autoptr(Client) run = client_post (server, SYMFONIC_TEST_TYPED_PATH, "paced");
  g_autofree char *run_id = client_run_id (run);

  client_read_to_end (run);
  g_assert_cmpuint (run->frames->len, ==, 9);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *request = g_strdup_printf ("GET " RUNS_PATH "/%s/stream HTTP/1.1\r\nHost: gateway\r\n" ALICE
                                                  "%sAccept: text/event-stream\r\n\r\n",
                                                  run_id, cases[i].lines);
      g_autoptr(Client) client = client_send (server, request);

      g_test_message ("case %s", cases[i].name);
      if (cases[i].status >= 400)
        {
          assert_refused (client, cases[i].status, "bad_request");
          continue;
        }
      client_read_to_end (client);
      g_assert_cmpuint (client->status, ==, cases[i].status);
      g_assert_cmpuint (client->frames->len, ==, cases[i].frames);
    }
}

/* A run still going has no frame past the one it sent last: an id beyond
 * it is 400 at once, not a wait for the run's end and an empty body. */
static void
test_resume_last_event_id_live (void)
{
  g_autoptr(SymfonicServer) server = resume_server (4096, SYMFONIC_ROUTE_DEFAULT_RESUME_BYTES, 300, 1, "", "");
  g_autoptr(Client) run = client_post (server, SYMFONIC_TEST_TYPED_PATH, "long");
  g_autofree char *run_id = client_run_id (run);
  gint64 asked_us;

  client_read_frames (run, 2);
  asked_us = g_get_monotonic_time ();
  {
    g_autoptr(Client) ahead = client_get (server, run_id, ALICE, "1000");

    assert_refused (ahead, 400, "bad_request");
  }
  /* the transcript lasts 5 s */
  g_assert_cmpint (g_get_monotonic_time () - asked_us, <, 2 * G_USEC_PER_SEC);
  client_read_to_end (run);
  g_assert_cmpstr (frame_at (run->frames, run->frames->len - 1)->event, ==, "ResponseCompleteEvent");
}

/* A run keeps its last resume-frames frames: older ones are 410. */
static void
test_resume_gone (void)
{
  g_autoptr(SymfonicServer) server = resume_server (4, SYMFONIC_ROUTE_DEFAULT_RESUME_BYTES, 300, 0.1, "", "");
  g_autoptr(Client) run = client_post (server, SYMFONIC_TEST_TYPED_PATH, "paced");
  g_autofree char *run_id = client_run_id (run);

  client_read_to_end (run);
  g_assert_cmpuint (run->frames->len, ==, 9);
  {
    g_autoptr(Client) late = client_get (server, run_id, ALICE, "4");

    assert_refused (late, 410, "gone");
  }
  {
    g_autoptr(Client) in_time = client_get (server, run_id, ALICE, "5");

    client_read_to_end (in_time);
    g_assert_cmpuint (in_time->status, ==, 200);
    g_assert_cmpuint (in_time->frames->len, ==, 4);
    g_assert_cmpstr (frame_at (in_time->frames, 0)->id, ==, "6");
    g_assert_cmpstr (frame_at (in_time->frames, 3)->event, ==, "ResponseCompleteEvent");
  }
}

/* The client leaves; nobody comes back within resume-seconds: the run
 * ends early with its one error frame, which a late reader gets. */
static void
test_resume_detached_cancelled (void)
{
  g_autoptr(SymfonicServer) server = resume_server (4096, SYMFONIC_ROUTE_DEFAULT_RESUME_BYTES, 2, 1, "", "");
  g_autoptr(Client) run = client_post (server, SYMFONIC_TEST_TYPED_PATH, "long");
  g_autofree char *run_id = client_run_id (run);
  gint64 dropped_us;
  SymfonicTestFrame *last;

  client_read_frames (run, 2);
  g_clear_pointer (&run, client_free);
  dropped_us = g_get_monotonic_time ();
  /* cut 2 s after the drop, readable for 2 s more */
  g_usleep (3000 * G_TIME_SPAN_MILLISECOND);
  {
    g_autoptr(Client) late = client_get (server, run_id, ALICE, "2");

    client_read_to_end (late);
    /* the transcript lasts 5 s: it was cut, not played out */
    g_assert_cmpint (g_get_monotonic_time () - dropped_us, <, 4500 * G_TIME_SPAN_MILLISECOND);
    g_assert_cmpuint (late->status, ==, 200);
    g_assert_cmpuint (late->frames->len, >=, 1);
    last = frame_at (late->frames, late->frames->len - 1);
    g_assert_cmpstr (last->event, ==, "error");
    g_assert_cmpstr (last->data, ==,
                     "{\"detail\":\"Nobody read the run for 2 seconds\",\"status\":408,\"code\":\"slow_client\"}");
    g_assert_cmpstr (frame_at (late->frames, 0)->id, ==, "3");
    g_assert_cmpuint (late->frames->len, <, 48);
  }
}

/* Reads what comes until @deadline_us (monotonic), or the end. */
static void
client_read_until (Client *self,
                   gint64  deadline_us)
{
  while (!self->ended && g_get_monotonic_time () < deadline_us && client_pump (self))
    ;
}

static void
sleep_until (gint64 deadline_us)
{
  gint64 now = g_get_monotonic_time ();

  if (deadline_us > now)
    g_usleep (deadline_us - now);
}

static void
assert_no_error_frame (Client *self)
{
  for (guint i = 0; i < self->frames->len; i++)
    g_assert_cmpstr (frame_at (self->frames, i)->event, !=, "error");
}

/* A reader that comes back restarts a detached run's resume-seconds: the
 * run goes on while it follows, and for resume-seconds after it left;
 * nobody back by then, it ends with its error frame. The run (fifty
 * deltas 200 ms apart, 10 s) is cut after 2 frames at t0, resume-seconds
 * 2: read again from 1.5 s to 3 s and from 4.5 s to 5 s, it is still
 * running each time, then ends about 7 s after t0, before its end. With
 * @data, a memory store group's run role (which hands the calls on to a
 * store of its own) rather than the server's own store. */
static void
test_resume_reader_restarts_clock (gconstpointer data)
{
  g_autoptr(SymfonicServer) server = resume_server (4096, SYMFONIC_ROUTE_DEFAULT_RESUME_BYTES, 2, 2, "", "");
  g_autoptr(Client) run = NULL;
  g_autofree char *run_id = NULL;
  g_autofree char *first_last = NULL;
  g_autofree char *second_last = NULL;
  SymfonicTestFrame *last;
  gint64 t0;

  if (data != NULL)
    {
      g_autoptr(SymfonicMemoryStore) store = symfonic_memory_store_new (0);

      serve_from (server, store);
    }
  run = client_post (server, SYMFONIC_TEST_TYPED_PATH, "long");
  run_id = client_run_id (run);
  client_read_frames (run, 2);
  g_clear_pointer (&run, client_free);
  t0 = g_get_monotonic_time ();

  sleep_until (t0 + 1500 * G_TIME_SPAN_MILLISECOND);
  {
    g_autoptr(Client) first = client_get (server, run_id, ALICE, "2");

    /* past the 2 s the run had when its client left */
    client_read_until (first, t0 + 3000 * G_TIME_SPAN_MILLISECOND);
    g_assert_cmpuint (first->status, ==, 200);
    g_assert_false (first->ended);
    g_assert_cmpuint (first->frames->len, >, 0);
    assert_no_error_frame (first);
    first_last = g_strdup (frame_at (first->frames, first->frames->len - 1)->id);
  }
  /* 1.5 s after that reader left */
  sleep_until (t0 + 4500 * G_TIME_SPAN_MILLISECOND);
  {
    g_autoptr(Client) second = client_get (server, run_id, ALICE, first_last);

    client_read_until (second, t0 + 5000 * G_TIME_SPAN_MILLISECOND);
    g_assert_cmpuint (second->status, ==, 200);
    g_assert_false (second->ended);
    assert_no_error_frame (second);
    second_last = g_strdup (second->frames->len > 0 ? frame_at (second->frames, second->frames->len - 1)->id
                                                    : first_last);
  }
  /* nobody for 2 s after the last reader left: the run ended */
  sleep_until (t0 + 8000 * G_TIME_SPAN_MILLISECOND);
  {
    g_autoptr(Client) late = client_get (server, run_id, ALICE, second_last);

    client_read_to_end (late);
    g_assert_cmpuint (late->status, ==, 200);
    g_test_message ("read again up to %s, then %s; the late reader got %u frames", first_last, second_last,
                    late->frames->len);
    /* it went on after the last reader left, and was cut before its end */
    g_assert_cmpuint (late->frames->len, >=, 3);
    last = frame_at (late->frames, late->frames->len - 1);
    g_assert_cmpstr (last->event, ==, "error");
    g_assert_cmpstr (last->data, ==,
                     "{\"detail\":\"Nobody read the run for 2 seconds\",\"status\":408,\"code\":\"slow_client\"}");
    g_assert_cmpuint (g_ascii_strtoull (last->id, NULL, 10), <, 52);
  }
}

/* A run store built without the reader methods gets the interface's:
 * it keeps working, and a detached run in it ends resume-seconds after
 * its client left, though a reader came back and follows it. */
static void
test_resume_reader_untracked (void)
{
  g_autoptr(SymfonicServer) server = resume_server (4096, SYMFONIC_ROUTE_DEFAULT_RESUME_BYTES, 2, 2, "", "");
  g_autoptr(TestLaterStore) store = g_object_new (TEST_TYPE_LATER_STORE, NULL);
  g_autoptr(Client) run = NULL;
  g_autoptr(Client) reader = NULL;
  g_autofree char *run_id = NULL;
  SymfonicTestFrame *last;
  gint64 t0;

  serve_from (server, store);
  run = client_post (server, SYMFONIC_TEST_TYPED_PATH, "long");
  run_id = client_run_id (run);
  client_read_frames (run, 2);
  g_clear_pointer (&run, client_free);
  t0 = g_get_monotonic_time ();

  sleep_until (t0 + 1000 * G_TIME_SPAN_MILLISECOND);
  reader = client_get (server, run_id, ALICE, "2");
  client_read_to_end (reader);
  g_assert_cmpuint (reader->status, ==, 200);
  g_assert_cmpint (g_get_monotonic_time () - t0, <, 3500 * G_TIME_SPAN_MILLISECOND);
  last = frame_at (reader->frames, reader->frames->len - 1);
  g_assert_cmpstr (last->event, ==, "error");
  g_assert_cmpstr (last->data, ==,
                   "{\"detail\":\"Nobody read the run for 2 seconds\",\"status\":408,\"code\":\"slow_client\"}");
}

/* A detached run holds its budget reservation until it ends, and settles
 * it then, once: another run is refused meanwhile and admitted after. */
static void
test_resume_detached_settles_budget (void)
{
  g_autoptr(SymfonicServer) server =
    resume_server (4096, SYMFONIC_ROUTE_DEFAULT_RESUME_BYTES, 300, 0.6, ";budget",
                   "[stage:budget]\ntype=budget\ntokens-per-window=1500\nreserve-tokens=1000\nwindow-seconds=60\n");
  g_autoptr(Client) run = client_post (server, SYMFONIC_TEST_TYPED_PATH, "long");
  g_autofree char *run_id = client_run_id (run);

  client_read_frames (run, 2);
  g_clear_pointer (&run, client_free);
  {
    g_autoptr(Client) second = client_post (server, SYMFONIC_TEST_TYPED_PATH, "paced");

    assert_refused (second, 429, "budget_exceeded");
  }
  {
    /* the run went on to its end without a client */
    g_autoptr(Client) rest = client_get (server, run_id, ALICE, "2");
    SymfonicTestFrame *last;

    client_read_to_end (rest);
    g_assert_cmpuint (rest->frames->len, ==, 50);
    last = frame_at (rest->frames, rest->frames->len - 1);
    g_assert_cmpstr (last->id, ==, "52");
    g_assert_cmpstr (last->event, ==, "ResponseCompleteEvent");
  }
  {
    g_autoptr(Client) third = client_post (server, SYMFONIC_TEST_TYPED_PATH, "paced");

    /* settling happens as the run ends, just before its last frame: give
     * it a moment on a loaded machine */
    client_read_frames (third, 1);
    if (third->status == 429)
      {
        g_clear_pointer (&third, client_free);
        g_usleep (500 * G_TIME_SPAN_MILLISECOND);
        third = client_post (server, SYMFONIC_TEST_TYPED_PATH, "paced");
      }
    client_read_to_end (third);
    g_assert_cmpuint (third->status, ==, 200);
  }
}

/* A reader that read the terminal before the run ended still ends the
 * stream when the run does: the terminal, then the end of the body. */
static void
test_resume_terminal_before_end (void)
{
  g_autoptr(SymfonicServer) server = resume_server (4096, SYMFONIC_ROUTE_DEFAULT_RESUME_BYTES, 300, 0.1, "", "");
  g_autoptr(TestLateCloseStore) store = g_object_new (TEST_TYPE_LATE_CLOSE_STORE, NULL);
  g_autoptr(Client) run = NULL;
  g_autoptr(Client) reader = NULL;
  g_autofree char *run_id = NULL;
  g_autofree char *before_last = NULL;
  SymfonicTestFrame *terminal;

  serve_from (server, store);

  run = client_post (server, SYMFONIC_TEST_TYPED_PATH, "paced");
  run_id = client_run_id (run);
  client_read_to_end (run);
  g_assert_cmpuint (run->frames->len, >=, 2);
  terminal = frame_at (run->frames, run->frames->len - 1);
  g_assert_cmpstr (terminal->event, ==, "ResponseCompleteEvent");
  before_last = g_strdup_printf ("%u", run->frames->len - 1);

  reader = client_get (server, run_id, ALICE, before_last);
  client_read_frames (reader, 1);
  g_assert_cmpuint (reader->status, ==, 200);
  g_assert_false (reader->ended);
  g_assert_cmpuint (reader->frames->len, ==, 1);
  g_assert_cmpstr (frame_at (reader->frames, 0)->event, ==, "ResponseCompleteEvent");
  g_assert_cmpstr (frame_at (reader->frames, 0)->data, ==, terminal->data);

  g_assert_cmpuint (test_late_close_store_release (store), ==, 1);
  client_read_to_end (reader);
  g_assert_cmpuint (reader->frames->len, ==, 1);
}

/* A store at its bound refuses new resumable runs before the handshake. */
static void
test_resume_store_bound (void)
{
  g_autoptr(SymfonicServer) server = resume_server (4096, SYMFONIC_ROUTE_DEFAULT_RESUME_BYTES, 300, 0.1, "", "");
  g_autoptr(GObject) store = g_object_new (SYMFONIC_TYPE_MEMORY_RUN_STORE, "max-runs-per-tenant", 1, NULL);

  serve_from (server, store);
  {
    g_autoptr(Client) first = client_post (server, SYMFONIC_TEST_TYPED_PATH, "paced");
    g_autoptr(Client) second = NULL;

    client_read_to_end (first);
    g_assert_cmpuint (first->status, ==, 200);
    second = client_post (server, SYMFONIC_TEST_TYPED_PATH, "paced");
    assert_refused (second, 503, "overloaded");
  }
  g_assert_cmpuint (symfonic_memory_run_store_get_n_runs (SYMFONIC_MEMORY_RUN_STORE (store)), ==, 1);
}

/* The large-result transcript's frames, in bytes as kept: the tool call
 * (86), the 20,000-byte result (20,074), the answer's delta (56) and the
 * consolidation (82); the terminal's length varies with its duration,
 * and holds its finish reason (about 130 bytes). */
#define LARGE_RESULT_FRAME 20074
#define LARGE_RESULT_AFTER 138

static void
assert_large_result_whole (Client *run)
{
  g_autofree char *result = g_strnfill (20000, 'r');
  g_autofree char *data = g_strdup_printf ("{\"tool_call_id\":\"call-1\",\"result\":\"%s\"}", result);

  client_read_to_end (run);
  g_assert_cmpuint (run->frames->len, ==, 5);
  g_assert_cmpstr (frame_at (run->frames, 1)->data, ==, data);
  g_assert_cmpstr (frame_at (run->frames, 4)->event, ==, "ResponseCompleteEvent");
}

/* A run keeps resume-bytes of its recent frames at most: a frame larger
 * than that is sent whole to the run's own client, but not kept, nor is
 * what came before it; reading from there is 410, from after it 200. */
static void
test_resume_bytes_per_run (void)
{
  g_autoptr(SymfonicServer) server = resume_server (4096, 8192, 300, 0.1, "", "");
  g_autoptr(SymfonicMemoryRunStore) store = symfonic_memory_run_store_new ();
  g_autoptr(Client) run = NULL;
  g_autofree char *run_id = NULL;
  guint64 held;

  serve_from (server, store);
  run = client_post (server, SYMFONIC_TEST_TYPED_PATH, "large-result");
  run_id = client_run_id (run);
  assert_large_result_whole (run);

  held = symfonic_memory_run_store_get_n_bytes (store);
  g_test_message ("bytes held: %" G_GUINT64_FORMAT, held);
  g_assert_cmpuint (held, >, LARGE_RESULT_AFTER);
  g_assert_cmpuint (held, <, LARGE_RESULT_AFTER + 140);
  {
    g_autoptr(Client) from_start = client_get (server, run_id, ALICE, NULL);

    assert_refused (from_start, 410, "gone");
  }
  {
    g_autoptr(Client) before_result = client_get (server, run_id, ALICE, "1");

    assert_refused (before_result, 410, "gone");
  }
  {
    g_autoptr(Client) after_result = client_get (server, run_id, ALICE, "2");

    client_read_to_end (after_result);
    g_assert_cmpuint (after_result->status, ==, 200);
    g_assert_cmpuint (after_result->frames->len, ==, 3);
    g_assert_cmpstr (frame_at (after_result->frames, 0)->id, ==, "3");
    g_assert_cmpstr (frame_at (after_result->frames, 2)->event, ==, "ResponseCompleteEvent");
  }
}

/* A store without room for a new run's resume-bytes refuses it before
 * the handshake; the runs it holds stay readable. */
static void
test_resume_bytes_store_full (void)
{
  g_autoptr(SymfonicServer) server = resume_server (4096, 24576, 300, 0.1, "", "");
  g_autoptr(GObject) store = g_object_new (SYMFONIC_TYPE_MEMORY_RUN_STORE, "max-bytes", G_GUINT64_CONSTANT (30000),
                                           NULL);
  g_autoptr(Client) first = NULL;
  g_autofree char *run_id = NULL;
  guint64 held;

  serve_from (server, store);
  first = client_post (server, SYMFONIC_TEST_TYPED_PATH, "large-result");
  run_id = client_run_id (first);
  assert_large_result_whole (first);
  held = symfonic_memory_run_store_get_n_bytes (SYMFONIC_MEMORY_RUN_STORE (store));
  g_test_message ("bytes held: %" G_GUINT64_FORMAT, held);
  g_assert_cmpuint (held, >, 86 + LARGE_RESULT_FRAME + LARGE_RESULT_AFTER);
  {
    g_autoptr(Client) second = client_post (server, SYMFONIC_TEST_TYPED_PATH, "large-result");

    assert_refused (second, 503, "overloaded");
  }
  g_assert_cmpuint (symfonic_memory_run_store_get_n_runs (SYMFONIC_MEMORY_RUN_STORE (store)), ==, 1);
  g_assert_cmpuint (symfonic_memory_run_store_get_n_bytes (SYMFONIC_MEMORY_RUN_STORE (store)), ==, held);
  {
    g_autoptr(Client) again = client_get (server, run_id, ALICE, NULL);

    client_read_to_end (again);
    g_assert_cmpuint (again->status, ==, 200);
    g_assert_cmpuint (again->frames->len, ==, 5);
  }
}

/* A run that grows past what the store holds lets its own frames go: the
 * store never holds more than max-bytes, and the run's client gets all. */
static void
test_resume_bytes_store_bound_while_running (void)
{
  g_autoptr(SymfonicServer) server = resume_server (4096, 24576, 300, 0.1, "", "");
  g_autoptr(GObject) store = g_object_new (SYMFONIC_TYPE_MEMORY_RUN_STORE, "max-bytes", G_GUINT64_CONSTANT (10000),
                                           NULL);
  g_autoptr(Client) run = NULL;
  g_autofree char *run_id = NULL;

  serve_from (server, store);
  run = client_post (server, SYMFONIC_TEST_TYPED_PATH, "large-result");
  run_id = client_run_id (run);
  assert_large_result_whole (run);
  g_assert_cmpuint (symfonic_memory_run_store_get_n_bytes (SYMFONIC_MEMORY_RUN_STORE (store)), <=, 10000);
  {
    g_autoptr(Client) before_result = client_get (server, run_id, ALICE, "1");

    assert_refused (before_result, 410, "gone");
  }
  {
    g_autoptr(Client) after_result = client_get (server, run_id, ALICE, "2");

    client_read_to_end (after_result);
    g_assert_cmpuint (after_result->status, ==, 200);
    g_assert_cmpuint (after_result->frames->len, ==, 3);
  }
}

/* One principal at its bound of runs does not lock out the other
 * principals of its tenant. */
static void
test_resume_principal_bound (void)
{
  g_autoptr(SymfonicServer) server = resume_server (4096, SYMFONIC_ROUTE_DEFAULT_RESUME_BYTES, 300, 0.1, "", "");
  g_autoptr(GObject) store = g_object_new (SYMFONIC_TYPE_MEMORY_RUN_STORE, "max-runs-per-principal", 1, NULL);
  g_autoptr(Client) first = NULL;
  g_autoptr(Client) second = NULL;
  g_autoptr(Client) other = NULL;

  serve_from (server, store);
  first = client_post (server, SYMFONIC_TEST_TYPED_PATH, "paced");
  client_read_to_end (first);
  g_assert_cmpuint (first->status, ==, 200);
  second = client_post (server, SYMFONIC_TEST_TYPED_PATH, "paced");
  assert_refused (second, 503, "overloaded");
  other = client_send (server, "POST " SYMFONIC_TEST_TYPED_PATH " HTTP/1.1\r\nHost: gateway\r\n"
                               "Authorization: Bearer demo-token-admin\r\nX-Tenant-ID: acme\r\n"
                               "X-Symfonic-Transcript: paced\r\nContent-Type: application/json\r\n"
                               "Content-Length: 13\r\n\r\n{\"query\":\"q\"}");
  client_read_to_end (other);
  g_assert_cmpuint (other->status, ==, 200);
  g_assert_cmpuint (other->frames->len, ==, 9);
  g_assert_cmpuint (symfonic_memory_run_store_get_n_runs (SYMFONIC_MEMORY_RUN_STORE (store)), ==, 2);
}

int
main (int    argc,
      char **argv)
{
  symfonic_test_init (&argc, &argv);

  g_test_add_func ("/resume/ids/typed", test_ids_typed);
  g_test_add_func ("/resume/ids/chunks", test_ids_chunks);
  g_test_add_func ("/resume/ids/error-terminal", test_ids_error_terminal);
  g_test_add_func ("/resume/run-ids-differ", test_run_ids_differ);
  g_test_add_func ("/resume/run-ids-unpredictable", test_run_ids_unpredictable);
  g_test_add_func ("/resume/typed-random-drops", test_resume_typed_random_drops);
  g_test_add_func ("/resume/chunks-random-drops", test_resume_chunks_random_drops);
  g_test_add_func ("/resume/store-answers-later", test_resume_store_answers_later);
  g_test_add_func ("/resume/from-start-and-owner-only", test_resume_from_start_and_owner_only);
  g_test_add_func ("/resume/malformed", test_resume_malformed);
  g_test_add_func ("/resume/last-event-id", test_resume_last_event_id);
  g_test_add_func ("/resume/last-event-id-live", test_resume_last_event_id_live);
  g_test_add_func ("/resume/gone", test_resume_gone);
  g_test_add_func ("/resume/detached-cancelled", test_resume_detached_cancelled);
  g_test_add_func ("/resume/detached-settles-budget", test_resume_detached_settles_budget);
  g_test_add_data_func ("/resume/reader-restarts-clock/server", NULL, test_resume_reader_restarts_clock);
  g_test_add_data_func ("/resume/reader-restarts-clock/memory-store", "memory", test_resume_reader_restarts_clock);
  g_test_add_func ("/resume/reader-untracked", test_resume_reader_untracked);
  g_test_add_func ("/resume/store-bound", test_resume_store_bound);
  g_test_add_func ("/resume/bytes-per-run", test_resume_bytes_per_run);
  g_test_add_func ("/resume/bytes-store-full", test_resume_bytes_store_full);
  g_test_add_func ("/resume/bytes-store-bound-while-running", test_resume_bytes_store_bound_while_running);
  g_test_add_func ("/resume/principal-bound", test_resume_principal_bound);
  g_test_add_func ("/resume/terminal-before-end", test_resume_terminal_before_end);

  return g_test_run ();
}
