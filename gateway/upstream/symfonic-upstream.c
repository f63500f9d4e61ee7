/* symfonic-upstream.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "symfonic-version.h"
#include "symfonic-json-private.h"
#include "symfonic-string-private.h"
#include "symfonic-upstream-private.h"
#include "symfonic-http-response-private.h"
#include "symfonic-poller-private.h"
#include "symfonic-recording-private.h"

/* SymfonicUpstream:
 *
 * An HTTP/1.1 origin (scheme, host and port) that streaming sources
 * send requests to, built for many long responses per worker thread.
 *
 * Each worker thread keeps its own pool of kept-alive connections per
 * origin, so a request rides an idle connection when there is one and
 * never crosses threads. Sockets and deadlines live on the worker's
 * poller: a connection costs one epoll entry, not a GSource, and reading
 * a response costs one wake-up and one read() into a buffer the worker
 * shares between all its connections. Host names are resolved once per
 * minute per worker, IP literals never; there is no proxy lookup.
 *
 * Every byte an upstream sends is hostile: the head, chunk-size lines and
 * trailers are bounded and parsed without recursion, and errors carry
 * texts of this file only (for logs: a source maps them to fixed public
 * texts).
 *
 * An object is shared by every worker and read-only once built.
 */

#define READ_BUFFER_SIZE (64 * 1024)
#define RESOLVE_TTL_US (60 * G_USEC_PER_SEC)
/* what a dropped request may still read so its connection is reused */
#define LINGER_US (200 * G_TIME_SPAN_MILLISECOND)
#define LINGER_BYTES (64 * 1024)

#define DEFAULT_CONNECT_TIMEOUT 10
#define DEFAULT_IDLE_TIMEOUT 20
#define DEFAULT_MAX_IDLE 256

static guint64 connections_opened;
static guint64 connections_closed;
static guint64 requests_sent;
static guint64 requests_reused;

struct _SymfonicUpstream
{
  GObject       parent_instance;

  char         *origin;
  char         *tls_ca_file;
  guint         connect_timeout;
  guint         idle_timeout;
  guint         max_idle;

  gboolean      tls;
  char         *host;
  guint16       port;
  /* "host" or "host:port", for the Host header */
  char         *authority;
  /* what the worker pools are keyed on */
  char         *pool_key;
  GTlsDatabase *database;
};

static void symfonic_upstream_initable_init (GInitableIface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SymfonicUpstream, symfonic_upstream, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, symfonic_upstream_initable_init))

enum {
  PROP_0,
  PROP_ORIGIN,
  PROP_TLS_CA_FILE,
  PROP_CONNECT_TIMEOUT,
  PROP_IDLE_TIMEOUT,
  PROP_MAX_IDLE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

typedef struct _Worker Worker;
typedef struct _Pool   Pool;
typedef struct _Conn   Conn;

struct _Worker
{
  GMainContext   *context;
  SymfonicPoller *poller;
  /* pool_key -> Pool */
  GHashTable     *pools;
  /* every read of this thread lands here: no buffer per request */
  guint8         *buffer;
};

struct _Pool
{
  Worker                  *worker;
  char                    *host;
  guint16                  port;
  gboolean                 tls;
  /* idle connections, the most recently used first */
  GQueue                   idle;
  struct sockaddr_storage  address;
  socklen_t                address_length;
  /* when the address must be looked up again; 0 before the first */
  gint64                   address_expiry;
  gboolean                 resolving;
  /* requests waiting for the lookup */
  GQueue                   waiting;
  /* dropped requests whose connections read their bodies to the end */
  GQueue                   lingering;
};

struct _Conn
{
  Pool                    *pool;
  int                      fd;
  /* https: the TLS stream over a GSocket that owns fd */
  GSocket                 *socket;
  GIOStream               *tls;
  GCancellable            *handshake;
  SymfonicWatch           *watch;
  /* the connect or handshake deadline, the request's idle timeout, or
   * when an idle connection expires */
  SymfonicTimer           *timer;
  SymfonicDeferred         read_later;
  GList                    link;
  SymfonicUpstreamRequest *request;
  /* a request waiting for the lingering one to leave the connection */
  SymfonicUpstreamRequest *next;
  gboolean                 connecting;
  /* it served a request before, so its peer may have closed it */
  gboolean                 reused;
};

typedef enum {
  STATE_CONNECT,
  STATE_WRITE,
  STATE_HEAD,
  STATE_BODY,
  STATE_DONE,
} State;

struct _SymfonicUpstreamRequest
{
  guint                     ref_count;
  SymfonicUpstream         *upstream;
  Pool                     *pool;
  Conn                     *conn;
  SymfonicUpstreamHandlers  handlers;
  gpointer                  user_data;
  GBytes                   *message;
  gsize                     written;
  /* in its pool's waiting or lingering queue */
  GList                     link;
  /* the connection it is to take once its lingering request is done */
  Conn                     *waiting_on;
  SymfonicDeferred          report;
  GError                   *error;
  guint                     timeout;
  /* monotonic time by which the request fails whatever arrives, or 0 */
  gint64                    deadline;

  State                     state;
  /* nobody listens any more: its handlers are never called again */
  gboolean                  dropped;
  /* dropped, but its connection holds it (and a reference) until the
   * body ended, so the connection is reused */
  gboolean                  lingering;
  gint64                    linger_until;
  gsize                     linger_bytes;
  gboolean                  paused;
  gboolean                  retried;
  /* a byte of the response arrived */
  gboolean                  answered;

  SymfonicHttpResponse      response;

  /* a recording played in place of a connection, or NULL */
  struct _Playback         *playback;
};

static void conn_update_watch (Conn *conn);
static void playback_clear    (struct _Playback *playback);
static void request_detach    (SymfonicUpstreamRequest *req,
                               gboolean                 reusable);
static void linger_over       (SymfonicUpstreamRequest *req);
static void conn_arm_timeout  (Conn *conn);
static void conn_close        (Conn *conn);
static void open_connection   (SymfonicUpstreamRequest *req);
static void start_write       (SymfonicUpstreamRequest *req);

/* --- the worker's pools -------------------------------------------------- */

static void
worker_free (gpointer data)
{
  Worker *worker = data;
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, worker->pools);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      Pool *pool = value;

      while (pool->lingering.head != NULL)
        {
          SymfonicUpstreamRequest *req = pool->lingering.head->data;

          request_detach (req, FALSE);
          linger_over (req);
        }
      while (pool->idle.head != NULL)
        conn_close (pool->idle.head->data);
      g_free (pool->host);
      g_free (pool);
    }
  g_hash_table_unref (worker->pools);
  symfonic_poller_unref (worker->poller);
  g_main_context_unref (worker->context);
  g_free (worker->buffer);
  g_free (worker);
}

static GPrivate thread_worker = G_PRIVATE_INIT (worker_free);

static Worker *
worker_get (void)
{
  Worker *worker = g_private_get (&thread_worker);
  GMainContext *context = g_main_context_get_thread_default ();

  if (context == NULL)
    context = g_main_context_default ();
  if (worker != NULL && worker->context == context)
    return worker;

  worker = g_new0 (Worker, 1);
  worker->context = g_main_context_ref (context);
  worker->poller = symfonic_poller_ref (symfonic_poller_get_thread_default ());
  worker->pools = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  worker->buffer = g_malloc (READ_BUFFER_SIZE);
  g_private_replace (&thread_worker, worker);

  return worker;
}

static Pool *
pool_get (SymfonicUpstream *upstream)
{
  Worker *worker = worker_get ();
  Pool *pool = g_hash_table_lookup (worker->pools, upstream->pool_key);

  if (pool != NULL)
    return pool;

  pool = g_new0 (Pool, 1);
  pool->worker = worker;
  pool->host = g_strdup (upstream->host);
  pool->port = upstream->port;
  pool->tls = upstream->tls;
  g_queue_init (&pool->idle);
  g_queue_init (&pool->waiting);
  g_queue_init (&pool->lingering);
  g_hash_table_insert (worker->pools, g_strdup (upstream->pool_key), pool);

  return pool;
}

/* --- requests: references and reports ----------------------------------- */

static SymfonicUpstreamRequest *
request_ref (SymfonicUpstreamRequest *req)
{
  req->ref_count++;
  return req;
}

static void
request_unref (SymfonicUpstreamRequest *req)
{
  if (--req->ref_count > 0)
    return;

  g_clear_error (&req->error);
  g_clear_pointer (&req->message, g_bytes_unref);
  symfonic_http_response_clear (&req->response);
  g_clear_object (&req->upstream);
  if (req->playback != NULL)
    playback_clear (req->playback);
  g_free (req);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicUpstreamRequest, request_unref)

/* Whether the request is still the connection's, after a handler ran. */
static gboolean
still_reading (SymfonicUpstreamRequest *req,
               Conn                    *conn)
{
  return req->conn == conn && req->state != STATE_DONE;
}

static void
report_done (gpointer data)
{
  SymfonicUpstreamRequest *req = data;
  G_GNUC_UNUSED g_autoptr(SymfonicUpstreamRequest) keep = request_ref (req);

  if (!req->dropped && req->handlers.done != NULL)
    req->handlers.done (req, req->error, req->user_data);
}

/* Leaves the request's connection: back to the pool when it may carry
 * another request, else closed. */
static void
request_detach (SymfonicUpstreamRequest *req,
                gboolean                 reusable)
{
  Conn *conn = req->conn;
  SymfonicUpstream *upstream = req->upstream;
  SymfonicUpstreamRequest *next;

  req->conn = NULL;
  req->state = STATE_DONE;
  if (conn == NULL)
    return;
  conn->request = NULL;
  next = g_steal_pointer (&conn->next);
  if (next != NULL)
    next->waiting_on = NULL;

  if (!reusable || (next == NULL && conn->pool->idle.length >= upstream->max_idle))
    {
      conn_close (conn);
      if (next != NULL)
        open_connection (next);
      return;
    }

  conn->reused = TRUE;
  if (next != NULL)
    {
      conn->request = next;
      next->conn = conn;
      conn_arm_timeout (conn);
      start_write (next);
      return;
    }
  conn->link.data = conn;
  g_queue_push_head_link (&conn->pool->idle, &conn->link);
  symfonic_timer_set_deadline (conn->timer, upstream->idle_timeout > 0
                               ? g_get_monotonic_time () + (gint64) upstream->idle_timeout * G_USEC_PER_SEC
                               : -1);
  conn_update_watch (conn);
}

static void
stop_waiting (SymfonicUpstreamRequest *req)
{
  if (req->waiting_on == NULL)
    return;
  req->waiting_on->next = NULL;
  req->waiting_on = NULL;
}

static void
linger_over (SymfonicUpstreamRequest *req)
{
  if (!req->lingering)
    return;
  req->lingering = FALSE;
  g_queue_unlink (&req->pool->lingering, &req->link);
  req->link.data = NULL;
  request_unref (req);
}

/* Ends the request with @error (taken), reported at the end of this
 * main-loop iteration: never from inside a call of the sender. */
static void
request_fail (SymfonicUpstreamRequest *req,
              GError                  *error)
{
  if (req->state == STATE_DONE)
    {
      g_error_free (error);
      return;
    }

  if (req->link.data != NULL && !req->lingering)
    {
      g_queue_unlink (&req->pool->waiting, &req->link);
      req->link.data = NULL;
    }
  stop_waiting (req);
  request_detach (req, FALSE);
  if (req->dropped)
    {
      g_error_free (error);
      linger_over (req);
      return;
    }
  req->error = error;
  symfonic_poller_defer (req->pool->worker->poller, &req->report);
}

static void
request_complete (SymfonicUpstreamRequest *req,
                  gboolean                 reusable)
{
  request_detach (req, reusable && req->response.keep_alive);
  if (req->dropped)
    linger_over (req);
  else
    req->handlers.done (req, NULL, req->user_data);
}

/* A reused connection the peer had closed fails before any byte of the
 * answer: the request never reached it, so it is sent once more on a
 * new connection. Anything else is the request's failure. */
static void
transport_failed (SymfonicUpstreamRequest *req,
                  GError                  *error)
{
  Conn *conn = req->conn;

  if (conn != NULL && conn->reused && !req->answered && !req->retried &&
      (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED) ||
       g_error_matches (error, G_TLS_ERROR, G_TLS_ERROR_EOF)))
    {
      g_error_free (error);
      req->retried = TRUE;
      req->conn = NULL;
      conn->request = NULL;
      conn_close (conn);
      open_connection (req);
      return;
    }

  request_fail (req, error);
}

static GError *
errno_error (int         saved_errno,
             const char *what)
{
  return g_error_new (G_IO_ERROR, g_io_error_from_errno (saved_errno), "%s: %s", what, g_strerror (saved_errno));
}

/* --- connections --------------------------------------------------------- */

static void on_conn_ready (gpointer     data,
                           GIOCondition condition);

/* A request that waits for its client to drain reads nothing meanwhile. */
static gboolean
request_paused (SymfonicUpstreamRequest *req)
{
  return req != NULL && req->paused && !req->lingering;
}

static void
conn_update_watch (Conn *conn)
{
  SymfonicUpstreamRequest *req = conn->request;
  GIOCondition events;

  if (conn->handshake != NULL)
    {
      g_clear_pointer (&conn->watch, symfonic_watch_remove);
      return;
    }
  if (conn->connecting || (req != NULL && req->state == STATE_WRITE))
    events = G_IO_OUT;
  else if (request_paused (req))
    /* A paused request is not watched at all: a peer's reset would report
     * G_IO_HUP on every iteration until it is read. But most pauses end
     * within the iteration, once the writer drained: the watch stays, and
     * goes only if it reports while the request is still paused
     * (on_conn_ready), which spares two epoll_ctl() calls a pause. */
    return;
  else
    events = G_IO_IN;

  if (conn->watch == NULL)
    conn->watch = symfonic_poller_watch (conn->pool->worker->poller, conn->fd, events, on_conn_ready, conn);
  else
    symfonic_watch_set_events (conn->watch, events);
}

/* The request's idle deadline, armed while it waits for the upstream. */
static void
conn_arm_timeout (Conn *conn)
{
  SymfonicUpstreamRequest *req = conn->request;

  gint64 idle = -1;

  if (req != NULL && req->lingering)
    {
      symfonic_timer_set_deadline (conn->timer, req->linger_until);
      return;
    }
  if (req != NULL && req->timeout != 0 && !req->paused)
    idle = g_get_monotonic_time () + (gint64) req->timeout * G_USEC_PER_SEC;
  /* what arrives moves the idle deadline, never the request's own */
  if (req != NULL && req->deadline != 0 && (idle < 0 || req->deadline < idle))
    idle = req->deadline;
  symfonic_timer_set_deadline (conn->timer, idle);
}

static void
conn_close (Conn *conn)
{
  Pool *pool = conn->pool;

  if (conn->link.data != NULL)
    {
      g_queue_unlink (&pool->idle, &conn->link);
      conn->link.data = NULL;
    }
  g_clear_pointer (&conn->watch, symfonic_watch_remove);
  g_clear_pointer (&conn->timer, symfonic_timer_remove);
  symfonic_poller_cancel_deferred (pool->worker->poller, &conn->read_later);

  if (conn->handshake != NULL)
    {
      /* the handshake's callback frees the connection */
      g_cancellable_cancel (conn->handshake);
      conn->request = NULL;
      return;
    }

  if (conn->socket != NULL)
    {
      /* closed under the TLS stream first, so dropping the stream cannot
       * block on a close_notify */
      g_socket_close (conn->socket, NULL);
      g_clear_object (&conn->tls);
      g_clear_object (&conn->socket);
    }
  else
    close (conn->fd);
  __atomic_fetch_add (&connections_closed, 1, __ATOMIC_RELAXED);
  g_free (conn);
}

static void
on_conn_timer (gpointer data)
{
  Conn *conn = data;
  SymfonicUpstreamRequest *req = conn->request;

  if (req == NULL)
    {
      /* idle too long: its peer would close it soon anyway */
      conn_close (conn);
      return;
    }

  request_fail (req, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                                          conn->connecting || conn->handshake != NULL ? "connecting timed out"
                                          : req->deadline != 0 && g_get_monotonic_time () >= req->deadline
                                          ? "no answer in time" : "silent for too long"));
}

/* A plain read() or send() result as GIO reports it; errno is still the
 * call's. */
static gssize
io_result (gssize       n,
           const char  *doing,
           GError     **error)
{
  int saved_errno = errno;

  if (n >= 0)
    return n;
  if (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK)
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK, "would block");
  else
    g_propagate_error (error, errno_error (saved_errno, doing));

  return n;
}

static gssize
conn_read (Conn    *conn,
           guint8  *buffer,
           gsize    size,
           GError **error)
{
  gssize n;

  if (conn->tls != NULL)
    {
      GInputStream *in = g_io_stream_get_input_stream (conn->tls);

      return g_pollable_input_stream_read_nonblocking (G_POLLABLE_INPUT_STREAM (in), buffer, size, NULL, error);
    }

  do
    n = read (conn->fd, buffer, size);
  while (n < 0 && errno == EINTR);

  return io_result (n, "reading the response", error);
}

static gssize
conn_write (Conn        *conn,
            const void  *data,
            gsize        size,
            GError     **error)
{
  gssize n;

  if (conn->tls != NULL)
    {
      GOutputStream *out = g_io_stream_get_output_stream (conn->tls);

      return g_pollable_output_stream_write_nonblocking (G_POLLABLE_OUTPUT_STREAM (out), data, size, NULL, error);
    }

  do
    n = send (conn->fd, data, size, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);

  return io_result (n, "sending the request", error);
}

static void
deliver_body (SymfonicUpstreamRequest *req,
              const guint8            *data,
              gsize                    length)
{
  if (length == 0)
    return;

  if (req->dropped)
    {
      req->linger_bytes += length;
      return;
    }
  req->handlers.body (req, data, length, req->user_data);
}

/* Everything one read brought. */
static void
feed (SymfonicUpstreamRequest *req,
      guint8                  *data,
      gsize                    length)
{
  Conn *conn = req->conn;
  GError *error = NULL;
  gsize in = 0;
  gsize out = 0;
  /* where the body starts in @data: it is handed on where it lies, and
   * only chunk lines between its pieces make it move */
  gsize start = 0;
  gboolean complete = FALSE;

  req->answered = TRUE;
  if (req->state == STATE_HEAD)
    {
      if (!symfonic_http_response_read_head (&req->response, data, length, &in, &error))
        {
          request_fail (req, error);
          return;
        }
      if (!req->response.head_done)
        return;
      req->state = STATE_BODY;
      if (!req->dropped && req->handlers.head != NULL)
        req->handlers.head (req, req->response.status, req->user_data);
      /* Its headers were the handler's to read, during that call only;
       * the request, all written before any answer is read, is sent again
       * only when no answer came. A held stream keeps neither. */
      symfonic_http_response_forget_head (&req->response);
      g_clear_pointer (&req->message, g_bytes_unref);
      if (!still_reading (req, conn))
        return;
      complete = req->response.framing == SYMFONIC_HTTP_FRAMING_NONE;
      start = out = in;
    }

  if (!symfonic_http_response_read_body (&req->response, data, length, &in, &out, &complete, &error))
    {
      deliver_body (req, data + start, out - start);
      if (still_reading (req, conn))
        request_fail (req, error);
      else
        g_error_free (error);
      return;
    }
  deliver_body (req, data + start, out - start);
  if (!still_reading (req, conn))
    return;

  if (req->dropped && req->linger_bytes > LINGER_BYTES)
    request_fail (req, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED, "dropped"));
  else if (complete)
    /* bytes past the response are no answer to anything: the connection
     * cannot be trusted with another request */
    request_complete (req, in == length);
}

static void
read_ended (SymfonicUpstreamRequest *req)
{
  if (req->state == STATE_BODY && req->response.framing == SYMFONIC_HTTP_FRAMING_CLOSE)
    {
      request_complete (req, FALSE);
      return;
    }

  transport_failed (req, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED,
                                              req->answered ? "the response was cut short"
                                                            : "closed before answering"));
}

/* One read (TLS: until it would block, since the TLS layer may hold
 * decrypted bytes that epoll cannot see) into the worker's buffer. */
static void
conn_readable (Conn *conn)
{
  SymfonicUpstreamRequest *req = conn->request;
  G_GNUC_UNUSED g_autoptr(SymfonicUpstreamRequest) keep = request_ref (req);
  guint8 *buffer = conn->pool->worker->buffer;

  do
    {
      g_autoptr(GError) error = NULL;
      gssize n = conn_read (conn, buffer, READ_BUFFER_SIZE, &error);

      if (n < 0)
        {
          if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
            transport_failed (req, g_steal_pointer (&error));
          return;
        }
      if (n == 0)
        {
          read_ended (req);
          return;
        }

      conn_arm_timeout (conn);
      feed (req, buffer, n);
    }
  while (still_reading (req, conn) && conn->tls != NULL && !request_paused (req));
}

static void
conn_read_later (gpointer data)
{
  Conn *conn = data;

  if (conn->request != NULL && conn->request->state >= STATE_HEAD)
    conn_readable (conn);
}

static void
continue_write (SymfonicUpstreamRequest *req)
{
  Conn *conn = req->conn;
  gsize length;
  const guint8 *data = g_bytes_get_data (req->message, &length);

  while (req->written < length)
    {
      g_autoptr(GError) error = NULL;
      gssize n = conn_write (conn, data + req->written, length - req->written, &error);

      if (n < 0)
        {
          if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
            conn_update_watch (conn);
          else
            transport_failed (req, g_steal_pointer (&error));
          return;
        }
      req->written += n;
    }

  req->state = STATE_HEAD;
  conn_update_watch (conn);
}

static void
connected (Conn *conn)
{
  SymfonicUpstreamRequest *req = conn->request;

  conn->connecting = FALSE;
  conn_arm_timeout (conn);
  start_write (req);
}

static void
handshake_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      data)
{
  Conn *conn = data;
  g_autoptr(GError) error = NULL;
  gboolean ok = g_tls_connection_handshake_finish (G_TLS_CONNECTION (object), result, &error);

  g_clear_object (&conn->handshake);
  if (conn->request == NULL)
    {
      /* closed while shaking hands */
      conn_close (conn);
      return;
    }
  if (!ok)
    {
      request_fail (conn->request, g_steal_pointer (&error));
      return;
    }
  connected (conn);
}

static void
start_handshake (Conn             *conn,
                 SymfonicUpstream *upstream)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocketConnection) base = NULL;
  g_autoptr(GSocketConnectable) identity = NULL;

  conn->socket = g_socket_new_from_fd (conn->fd, &error);
  if (conn->socket == NULL)
    {
      request_fail (conn->request, g_steal_pointer (&error));
      return;
    }
  base = g_socket_connection_factory_create_connection (conn->socket);
  identity = g_network_address_new (upstream->host, upstream->port);
  conn->tls = g_tls_client_connection_new (G_IO_STREAM (base), identity, &error);
  if (conn->tls == NULL)
    {
      request_fail (conn->request, g_steal_pointer (&error));
      return;
    }
  if (upstream->database != NULL)
    g_tls_connection_set_database (G_TLS_CONNECTION (conn->tls), upstream->database);

  /* once per connection, so GIO's own sources are fine here */
  conn->handshake = g_cancellable_new ();
  conn_update_watch (conn);
  g_tls_connection_handshake_async (G_TLS_CONNECTION (conn->tls), G_PRIORITY_DEFAULT, conn->handshake,
                                    handshake_cb, conn);
}

static void
on_conn_ready (gpointer     data,
               GIOCondition condition)
{
  Conn *conn = data;
  SymfonicUpstreamRequest *req = conn->request;

  if (req == NULL)
    {
      /* idle: the peer closed it, or sent what nobody asked for */
      conn_close (conn);
      return;
    }

  if (conn->connecting)
    {
      int error = 0;
      socklen_t length = sizeof error;

      if (getsockopt (conn->fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0)
        error = errno;
      if (error != 0)
        {
          request_fail (req, errno_error (error, "connecting"));
          return;
        }
      if (conn->pool->tls)
        {
          conn->connecting = FALSE;
          start_handshake (conn, req->upstream);
          return;
        }
      connected (conn);
      return;
    }

  if (req->state == STATE_WRITE)
    continue_write (req);
  else if (request_paused (req))
    g_clear_pointer (&conn->watch, symfonic_watch_remove);
  else
    conn_readable (conn);
}

static void
connect_to (SymfonicUpstreamRequest *req)
{
  Pool *pool = req->pool;
  SymfonicUpstream *upstream = req->upstream;
  Conn *conn;
  int fd;
  int one = 1;

  fd = socket (pool->address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    {
      request_fail (req, errno_error (errno, "opening a socket"));
      return;
    }
  /* each frame goes out as soon as it is written */
  setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (connect (fd, (struct sockaddr *) &pool->address, pool->address_length) != 0 && errno != EINPROGRESS)
    {
      int saved_errno = errno;

      close (fd);
      request_fail (req, errno_error (saved_errno, "connecting"));
      return;
    }

  __atomic_fetch_add (&connections_opened, 1, __ATOMIC_RELAXED);
  conn = g_new0 (Conn, 1);
  conn->pool = pool;
  conn->fd = fd;
  conn->connecting = TRUE;
  conn->request = req;
  conn->read_later.func = conn_read_later;
  conn->read_later.data = conn;
  conn->timer = symfonic_poller_timer (pool->worker->poller, on_conn_timer, conn);
  req->conn = conn;
  req->state = STATE_CONNECT;
  if (upstream->connect_timeout > 0)
    symfonic_timer_set_deadline (conn->timer,
                                 g_get_monotonic_time () + (gint64) upstream->connect_timeout * G_USEC_PER_SEC);
  conn_update_watch (conn);
}

static void
resolve_cb (GObject      *object,
            GAsyncResult *result,
            gpointer      data)
{
  Pool *pool = data;
  g_autoptr(GError) error = NULL;
  GList *addresses = g_resolver_lookup_by_name_finish (G_RESOLVER (object), result, &error);

  pool->resolving = FALSE;
  if (addresses != NULL)
    {
      g_autoptr(GSocketAddress) address = g_inet_socket_address_new (addresses->data, pool->port);

      g_resolver_free_addresses (addresses);
      pool->address_length = g_socket_address_get_native_size (address);
      if (g_socket_address_to_native (address, &pool->address, sizeof pool->address, &error))
        pool->address_expiry = g_get_monotonic_time () + RESOLVE_TTL_US;
    }

  while (pool->waiting.head != NULL)
    {
      GList *link = g_queue_pop_head_link (&pool->waiting);
      SymfonicUpstreamRequest *req = link->data;

      link->data = NULL;
      if (error != NULL)
        request_fail (req, g_error_copy (error));
      else
        connect_to (req);
    }
}

static void
open_connection (SymfonicUpstreamRequest *req)
{
  Pool *pool = req->pool;
  g_autoptr(GInetAddress) literal = NULL;

  req->state = STATE_CONNECT;
  req->written = 0;
  if (pool->address_expiry > g_get_monotonic_time ())
    {
      connect_to (req);
      return;
    }

  literal = g_inet_address_new_from_string (pool->host);
  if (literal != NULL)
    {
      g_autoptr(GSocketAddress) address = g_inet_socket_address_new (literal, pool->port);

      pool->address_length = g_socket_address_get_native_size (address);
      g_socket_address_to_native (address, &pool->address, sizeof pool->address, NULL);
      pool->address_expiry = G_MAXINT64;
      connect_to (req);
      return;
    }

  req->link.data = req;
  g_queue_push_tail_link (&pool->waiting, &req->link);
  if (!pool->resolving)
    {
      pool->resolving = TRUE;
      g_resolver_lookup_by_name_async (g_resolver_get_default (), pool->host, NULL, resolve_cb, pool);
    }
}

static void
start_write (SymfonicUpstreamRequest *req)
{
  if (req->conn->reused)
    __atomic_fetch_add (&requests_reused, 1, __ATOMIC_RELAXED);
  req->state = STATE_WRITE;
  req->written = 0;
  continue_write (req);
}

/* --- a recording in place of a connection ---------------------------------- */

/* A recorded response, played to the same handlers a connection would
 * call: its head at its time, each read of its body at its time (one read
 * per main-loop iteration at most, as reads come), and its end as it
 * ended, so that everything above the transport, the SSE parser and the
 * source's frames above all, reads it as it read the upstream. */
typedef struct _Playback
{
  SymfonicRecording *recording;
  double             time_scale;
  gint64             start;
  SymfonicTimer     *timer;
  /* the next read, or the head when !head_done */
  guint              position;
  gboolean           head_done;
  /* a cancel() turned the end into G_IO_ERROR_CANCELLED */
  gboolean           cancelled;
} Playback;

static gint64
playback_due (SymfonicUpstreamRequest *req,
              gint64                   offset_us)
{
  Playback *playback = req->playback;

  return playback->start + (gint64) (offset_us * playback->time_scale);
}

static GError *
playback_end_error (Playback *playback)
{
  if (playback->cancelled)
    return g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");

  switch (symfonic_recording_get_transport (playback->recording))
    {
    case SYMFONIC_RECORDING_TRANSPORT_CLOSED:
      return g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED,
                                  playback->head_done ? "the response was cut short" : "closed before answering");
    case SYMFONIC_RECORDING_TRANSPORT_TIMEOUT:
      return g_error_new_literal (G_IO_ERROR, G_IO_ERROR_TIMED_OUT, "timed out");
    case SYMFONIC_RECORDING_TRANSPORT_REFUSED:
      return g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED, "connection refused");
    case SYMFONIC_RECORDING_TRANSPORT_FAILED:
      return g_error_new_literal (G_IO_ERROR, G_IO_ERROR_FAILED, "the connection failed");
    case SYMFONIC_RECORDING_TRANSPORT_EOF:
    case SYMFONIC_RECORDING_TRANSPORT_STOPPED:
    default:
      /* the gateway stopped reading there: what it read is all there is,
       * and a reader that still wants more meets the body's end */
      return playback->head_done ? NULL
                                 : g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED,
                                                        "closed before answering");
    }
}

static void
playback_step (gpointer data)
{
  SymfonicUpstreamRequest *req = data;
  Playback *playback = req->playback;
  /* a handler may free the request: what it reads stays until it returns */
  G_GNUC_UNUSED g_autoptr(SymfonicUpstreamRequest) keep = request_ref (req);
  g_autoptr(SymfonicRecording) recording = symfonic_recording_ref (playback->recording);
  const SymfonicRecordingChunk *chunk;
  gsize start;

  if (req->state == STATE_DONE || req->dropped)
    return;

  if (!playback->head_done && !playback->cancelled && recording->status != 0)
    {
      playback->head_done = TRUE;
      req->answered = TRUE;
      req->state = STATE_BODY;
      if (req->handlers.head != NULL)
        req->handlers.head (req, recording->status, req->user_data);
      if (req->state == STATE_DONE || req->dropped)
        return;
      symfonic_timer_set_deadline (playback->timer, g_get_monotonic_time ());
      return;
    }

  if (req->paused && !playback->cancelled)
    return;

  if (!playback->cancelled && playback->position < recording->chunks->len)
    {
      chunk = &g_array_index (recording->chunks, SymfonicRecordingChunk, playback->position);
      if (playback_due (req, chunk->offset_us) > g_get_monotonic_time ())
        {
          symfonic_timer_set_deadline (playback->timer, playback_due (req, chunk->offset_us));
          return;
        }
      start = playback->position > 0
        ? g_array_index (recording->chunks, SymfonicRecordingChunk, playback->position - 1).end
        : 0;
      playback->position++;
      req->handlers.body (req, (const guint8 *) g_bytes_get_data (recording->body, NULL) + start,
                          chunk->end - start, req->user_data);
      if (req->state == STATE_DONE || req->dropped)
        return;
      /* the next read in a later iteration, as a socket's would come */
      symfonic_timer_set_deadline (playback->timer,
                                   playback->position < recording->chunks->len
                                   ? MAX (g_get_monotonic_time (),
                                          playback_due (req, g_array_index (recording->chunks, SymfonicRecordingChunk,
                                                                            playback->position).offset_us))
                                   : MAX (g_get_monotonic_time (), playback_due (req, recording->duration_us)));
      return;
    }

  if (!playback->cancelled && playback_due (req, recording->duration_us) > g_get_monotonic_time ())
    {
      symfonic_timer_set_deadline (playback->timer, playback_due (req, recording->duration_us));
      return;
    }

  req->state = STATE_DONE;
  g_clear_pointer (&playback->timer, symfonic_timer_remove);
  {
    g_autoptr(GError) error = playback_end_error (playback);

    req->handlers.done (req, error, req->user_data);
  }
}

/* symfonic_upstream_play
 * @recording: what an upstream sent
 * @time_scale: multiplies every recorded pause; 0 plays as fast as reads
 *   can come, one per main-loop iteration
 * @handlers: what to call as the response arrives; kept by value
 * @user_data: data for @handlers
 *
 * A request answered by @recording instead of a connection: its head,
 * each read of its body and its end reach @handlers as a connection's
 * would, at the recorded times. Pausing holds the reads back; the
 * timeouts of a connection do not apply, since the recording carries its
 * own. Nothing is called before this returns.
 *
 * Returns: the request, for symfonic_upstream_request_free()
 */
SymfonicUpstreamRequest *
symfonic_upstream_play (SymfonicRecording              *recording,
                        double                          time_scale,
                        const SymfonicUpstreamHandlers *handlers,
                        gpointer                        user_data)
{
  SymfonicUpstreamRequest *req;
  Playback *playback;

  g_return_val_if_fail (recording != NULL, NULL);
  g_return_val_if_fail (time_scale >= 0, NULL);
  g_return_val_if_fail (handlers != NULL && handlers->body != NULL && handlers->done != NULL, NULL);

  req = g_new0 (SymfonicUpstreamRequest, 1);
  req->ref_count = 1;
  req->handlers = *handlers;
  req->user_data = user_data;
  req->state = STATE_HEAD;

  playback = g_new0 (Playback, 1);
  playback->recording = symfonic_recording_ref (recording);
  playback->time_scale = time_scale;
  playback->start = g_get_monotonic_time ();
  playback->timer = symfonic_timer_new (playback_step, req);
  req->playback = playback;
  symfonic_timer_set_deadline (playback->timer, playback_due (req, recording->head_us));

  return req;
}

static const char *
playback_get_header (SymfonicUpstreamRequest *req,
                     const char              *name)
{
  return symfonic_recording_get_response_header (req->playback->recording, name);
}

static void
playback_resume (SymfonicUpstreamRequest *req)
{
  if (!req->paused)
    return;
  req->paused = FALSE;
  if (req->state != STATE_DONE && req->playback->timer != NULL)
    symfonic_timer_set_deadline (req->playback->timer, g_get_monotonic_time ());
}

static void
playback_cancel (SymfonicUpstreamRequest *req)
{
  if (req->state == STATE_DONE)
    return;
  req->playback->cancelled = TRUE;
  /* reported from the main loop, as a connection's cancel is */
  symfonic_timer_set_deadline (req->playback->timer, g_get_monotonic_time ());
}

static void
playback_free (SymfonicUpstreamRequest *req)
{
  req->dropped = TRUE;
  req->state = STATE_DONE;
  g_clear_pointer (&req->playback->timer, symfonic_timer_remove);
  request_unref (req);
}

static void
playback_clear (Playback *playback)
{
  g_clear_pointer (&playback->timer, symfonic_timer_remove);
  symfonic_recording_unref (playback->recording);
  g_free (playback);
}

/* --- the public API ------------------------------------------------------ */

/* A connection whose dropped request is reading its body to the end,
 * that no other request waits for yet. */
static Conn *
find_lingering (Pool *pool)
{
  for (GList *l = pool->lingering.head; l != NULL; l = l->next)
    {
      SymfonicUpstreamRequest *req = l->data;

      if (req->conn != NULL && req->conn->next == NULL)
        return req->conn;
    }

  return NULL;
}

static GBytes *
build_message (SymfonicUpstream *self,
               const char       *method,
               const char       *target,
               const char       *header_lines,
               const char       *content_type,
               GBytes           *body)
{
  GString *message = g_string_sized_new (512 + (body != NULL ? g_bytes_get_size (body) : 0));

  /* once per request: appended, not formatted */
  g_string_append (message, method);
  g_string_append_c (message, ' ');
  g_string_append (message, target);
  symfonic_string_append_literal (message, " HTTP/1.1\r\nHost: ");
  g_string_append (message, self->authority);
  symfonic_string_append_literal (message, "\r\nUser-Agent: symfonic-gateway/" SYMFONIC_VERSION "\r\n");
  if (header_lines != NULL)
    g_string_append (message, header_lines);
  if (body != NULL)
    {
      gsize length;
      const char *data = g_bytes_get_data (body, &length);

      if (content_type != NULL)
        {
          symfonic_string_append_literal (message, "Content-Type: ");
          g_string_append (message, content_type);
          symfonic_string_append_literal (message, "\r\n");
        }
      symfonic_string_append_literal (message, "Content-Length: ");
      symfonic_string_commit (message, symfonic_json_write_uint (symfonic_string_reserve (message, SYMFONIC_JSON_UINT_MAX),
                                                                 length));
      symfonic_string_append_literal (message, "\r\n\r\n");
      g_string_append_len (message, data, length);
    }
  else
    symfonic_string_append_literal (message, "\r\n");

  return g_string_free_to_bytes (message);
}

/* symfonic_upstream_send
 * @self: a #SymfonicUpstream
 * @method: the request method, such as "POST"
 * @target: the request target: the path and query
 * @header_lines: (nullable): more request headers, each "Name: value\r\n";
 *   Host, User-Agent, Content-Type and Content-Length are set here
 * @content_type: (nullable): the type of @body
 * @body: (nullable): the request body
 * @handlers: what to call as the response arrives; kept by value
 * @user_data: data for @handlers
 *
 * Sends a request on an idle connection of the calling thread's pool, or
 * on a new one. The head and body go out in one write when the socket
 * takes them. Nothing is called before this returns: even a failure to
 * connect is reported from the main loop.
 *
 * Returns: the request, for symfonic_upstream_request_free()
 */
SymfonicUpstreamRequest *
symfonic_upstream_send (SymfonicUpstream               *self,
                        const char                     *method,
                        const char                     *target,
                        const char                     *header_lines,
                        const char                     *content_type,
                        GBytes                         *body,
                        const SymfonicUpstreamHandlers *handlers,
                        gpointer                        user_data)
{
  SymfonicUpstreamRequest *req;
  GList *link;

  g_return_val_if_fail (SYMFONIC_IS_UPSTREAM (self), NULL);
  g_return_val_if_fail (method != NULL && target != NULL, NULL);
  g_return_val_if_fail (handlers != NULL && handlers->body != NULL && handlers->done != NULL, NULL);

  req = g_new0 (SymfonicUpstreamRequest, 1);
  req->ref_count = 1;
  req->upstream = g_object_ref (self);
  req->pool = pool_get (self);
  req->handlers = *handlers;
  req->user_data = user_data;
  req->message = build_message (self, method, target, header_lines, content_type, body);
  req->report.func = report_done;
  req->report.data = req;
  req->response.head = g_string_sized_new (512);
  __atomic_fetch_add (&requests_sent, 1, __ATOMIC_RELAXED);

  link = g_queue_pop_head_link (&req->pool->idle);
  if (link == NULL)
    {
      Conn *lingering = find_lingering (req->pool);

      if (lingering != NULL)
        {
          /* its response is ending (the sender saw all it wanted):
           * waiting for it beats opening a connection */
          lingering->next = req;
          req->waiting_on = lingering;
          req->state = STATE_CONNECT;
        }
      else
        open_connection (req);
      return req;
    }

  req->conn = link->data;
  link->data = NULL;
  req->conn->request = req;
  conn_arm_timeout (req->conn);
  start_write (req);

  return req;
}

/* symfonic_upstream_request_get_header
 * @request: a request whose head arrived
 * @name: a header name, in any case
 *
 * Returns: the first value of the header @name of the
 *   response, or %NULL
 */
const char *
symfonic_upstream_request_get_header (SymfonicUpstreamRequest *request,
                                      const char              *name)
{
  g_return_val_if_fail (request != NULL, NULL);
  g_return_val_if_fail (name != NULL, NULL);

  if (G_UNLIKELY (request->playback != NULL))
    return playback_get_header (request, name);

  return symfonic_http_response_get_header (&request->response, name);
}

/* symfonic_upstream_request_get_message
 * @request: a request
 *
 * Returns: (nullable): the request as it went out, head and body, until
 *   its response's head arrived; %NULL for a recording's
 */
GBytes *
symfonic_upstream_request_get_message (SymfonicUpstreamRequest *request)
{
  g_return_val_if_fail (request != NULL, NULL);

  return request->message;
}

/* symfonic_upstream_request_get_header_at
 * @request: a request whose head arrived
 * @index: a header, from 0
 * @name: (out): its name
 * @value: (out): its value
 *
 * The response's headers in the order they came, during the head
 * handler only.
 *
 * Returns: %FALSE past the last
 */
gboolean
symfonic_upstream_request_get_header_at (SymfonicUpstreamRequest  *request,
                                         guint                     index,
                                         const char              **name,
                                         const char              **value)
{
  g_return_val_if_fail (request != NULL, FALSE);

  if (G_UNLIKELY (request->playback != NULL))
    {
      GPtrArray *headers = request->playback->recording->response_headers;

      if (2 * index + 1 >= headers->len)
        return FALSE;
      *name = g_ptr_array_index (headers, 2 * index);
      *value = g_ptr_array_index (headers, 2 * index + 1);
      return TRUE;
    }

  return symfonic_http_response_get_header_at (&request->response, index, name, value);
}

/* symfonic_upstream_request_set_timeout
 * @request: a request
 * @seconds: how long the upstream may stay silent, or 0 for ever
 *
 * Fails the request with %G_IO_ERROR_TIMED_OUT when nothing arrives for
 * @seconds, from now on, while it is not paused: a paused request waits
 * on its sender, not on its upstream.
 */
void
symfonic_upstream_request_set_timeout (SymfonicUpstreamRequest *request,
                                       guint                    seconds)
{
  g_return_if_fail (request != NULL);

  /* a recording keeps its own time: what timed out then times out again */
  if (G_UNLIKELY (request->playback != NULL))
    return;

  request->timeout = seconds;
  if (request->conn != NULL && !request->conn->connecting && request->conn->handshake == NULL)
    conn_arm_timeout (request->conn);
}

/* symfonic_upstream_request_set_deadline
 * @request: a request
 * @seconds: how long from now the request may run, or 0 for no deadline
 *
 * Fails the request with %G_IO_ERROR_TIMED_OUT @seconds from now, however
 * much arrives before: unlike the idle timeout, bytes that carry nothing
 * (keep-alive comments, interim `1xx` heads) do not move it. Setting 0
 * takes the deadline away.
 */
void
symfonic_upstream_request_set_deadline (SymfonicUpstreamRequest *request,
                                        guint                    seconds)
{
  g_return_if_fail (request != NULL);

  /* a recording keeps its own time: what timed out then times out again */
  if (G_UNLIKELY (request->playback != NULL))
    return;

  request->deadline = seconds != 0 ? g_get_monotonic_time () + (gint64) seconds * G_USEC_PER_SEC : 0;
  if (request->conn != NULL && !request->conn->connecting && request->conn->handshake == NULL)
    conn_arm_timeout (request->conn);
}

/* As symfonic_upstream_request_set_deadline(), at a monotonic time: a
 * request sent again (a redirect) keeps the first one's deadline. */
void
symfonic_upstream_request_set_deadline_at (SymfonicUpstreamRequest *request,
                                           gint64                   deadline)
{
  g_return_if_fail (request != NULL);

  /* a recording keeps its own time: what timed out then times out again */
  if (G_UNLIKELY (request->playback != NULL))
    return;

  request->deadline = deadline;
  if (request->conn != NULL && !request->conn->connecting && request->conn->handshake == NULL)
    conn_arm_timeout (request->conn);
}

/* symfonic_upstream_request_pause
 * @request: a request
 *
 * Stops reading the response: the upstream's writes then fill the
 * kernel's buffers and block.
 */
void
symfonic_upstream_request_pause (SymfonicUpstreamRequest *request)
{
  g_return_if_fail (request != NULL);

  if (G_UNLIKELY (request->playback != NULL))
    {
      request->paused = TRUE;
      return;
    }

  if (request->paused)
    return;
  request->paused = TRUE;
  if (request->conn != NULL && request->state >= STATE_HEAD)
    {
      conn_update_watch (request->conn);
      conn_arm_timeout (request->conn);
    }
}

/* symfonic_upstream_request_resume
 * @request: a paused request
 *
 * Reads the response on; its idle timeout starts again.
 */
void
symfonic_upstream_request_resume (SymfonicUpstreamRequest *request)
{
  g_return_if_fail (request != NULL);

  if (G_UNLIKELY (request->playback != NULL))
    {
      playback_resume (request);
      return;
    }

  if (!request->paused)
    return;
  request->paused = FALSE;
  if (request->conn != NULL && request->state >= STATE_HEAD)
    {
      conn_update_watch (request->conn);
      conn_arm_timeout (request->conn);
      if (request->conn->tls != NULL)
        symfonic_poller_defer (request->pool->worker->poller, &request->conn->read_later);
    }
}

/* symfonic_upstream_request_cancel
 * @request: a request
 *
 * Closes the request's connection now, so the upstream sees it go, and
 * reports %G_IO_ERROR_CANCELLED to the done handler from the main loop.
 * Nothing happens if the request already ended.
 */
void
symfonic_upstream_request_cancel (SymfonicUpstreamRequest *request)
{
  g_return_if_fail (request != NULL);

  if (G_UNLIKELY (request->playback != NULL))
    {
      playback_cancel (request);
      return;
    }

  request_fail (request, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled"));
}

/* symfonic_upstream_request_free
 * @request: (nullable): a request
 *
 * Drops the request: no handler is called any more. A response still
 * arriving is read on for a moment and discarded when its framing allows
 * the connection to be reused; otherwise the connection is closed.
 */
void
symfonic_upstream_request_free (SymfonicUpstreamRequest *request)
{
  if (request == NULL)
    return;
  if (G_UNLIKELY (request->playback != NULL))
    {
      playback_free (request);
      return;
    }

  request->dropped = TRUE;
  symfonic_poller_cancel_deferred (request->pool->worker->poller, &request->report);
  if (request->conn != NULL)
    {
      if (request->state == STATE_BODY && request->response.framing != SYMFONIC_HTTP_FRAMING_CLOSE &&
          request->response.keep_alive)
        {
          request_ref (request);
          request->lingering = TRUE;
          request->link.data = request;
          g_queue_push_tail_link (&request->pool->lingering, &request->link);
          request->linger_until = g_get_monotonic_time () + LINGER_US;
          conn_arm_timeout (request->conn);
          conn_update_watch (request->conn);
        }
      else
        request_detach (request, FALSE);
    }
  else if (request->link.data != NULL)
    {
      g_queue_unlink (&request->pool->waiting, &request->link);
      request->link.data = NULL;
    }
  stop_waiting (request);
  request_unref (request);
}

/* --- counters ------------------------------------------------------------ */

guint64
symfonic_upstream_count_connections_opened (void)
{
  return __atomic_load_n (&connections_opened, __ATOMIC_RELAXED);
}

/* connections open now, on every thread */
guint64
symfonic_upstream_count_connections_open (void)
{
  guint64 closed = __atomic_load_n (&connections_closed, __ATOMIC_RELAXED);
  guint64 opened = __atomic_load_n (&connections_opened, __ATOMIC_RELAXED);

  return opened > closed ? opened - closed : 0;
}

/* requests sent over a connection that served one before */
guint64
symfonic_upstream_count_requests_reused (void)
{
  return __atomic_load_n (&requests_reused, __ATOMIC_RELAXED);
}

guint64
symfonic_upstream_count_requests (void)
{
  return __atomic_load_n (&requests_sent, __ATOMIC_RELAXED);
}

/* --- the object ---------------------------------------------------------- */

static gboolean
symfonic_upstream_initable_init_impl (GInitable     *initable,
                                      GCancellable  *cancellable,
                                      GError       **error)
{
  SymfonicUpstream *self = SYMFONIC_UPSTREAM (initable);
  g_autoptr(GUri) uri = NULL;
  const char *scheme;
  int port;

  uri = self->origin != NULL ? g_uri_parse (self->origin, G_URI_FLAGS_NONE, NULL) : NULL;
  scheme = uri != NULL ? g_uri_get_scheme (uri) : NULL;
  if (uri == NULL || g_uri_get_host (uri) == NULL || *g_uri_get_host (uri) == '\0' ||
      (g_ascii_strcasecmp (scheme, "http") != 0 && g_ascii_strcasecmp (scheme, "https") != 0))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           "origin: not an http or https URL");
      return FALSE;
    }

  self->tls = g_ascii_strcasecmp (scheme, "https") == 0;
  self->host = g_strdup (g_uri_get_host (uri));
  port = g_uri_get_port (uri);
  self->port = port != -1 ? port : (self->tls ? 443 : 80);
  if (port == -1)
    self->authority = strchr (self->host, ':') != NULL ? g_strdup_printf ("[%s]", self->host)
                                                       : g_strdup (self->host);
  else
    self->authority = strchr (self->host, ':') != NULL ? g_strdup_printf ("[%s]:%d", self->host, port)
                                                       : g_strdup_printf ("%s:%d", self->host, port);
  self->pool_key = g_strdup_printf ("%s://%s:%u\n%s", self->tls ? "https" : "http", self->host, self->port,
                                    self->tls_ca_file != NULL ? self->tls_ca_file : "");

  if (self->tls && self->tls_ca_file != NULL)
    {
      self->database = g_tls_file_database_new (self->tls_ca_file, error);
      if (self->database == NULL)
        return FALSE;
    }

  return TRUE;
}

static void
symfonic_upstream_initable_init (GInitableIface *iface)
{
  iface->init = symfonic_upstream_initable_init_impl;
}

/* symfonic_upstream_new:
 * @origin: an http or https URL: only its scheme, host and port are used
 * @error: return location for a #GError
 *
 * Returns: the upstream, or %NULL when
 *   @origin is no http or https URL
 */
SymfonicUpstream *
symfonic_upstream_new (const char  *origin,
                       GError     **error)
{
  g_return_val_if_fail (origin != NULL, NULL);

  return g_initable_new (SYMFONIC_TYPE_UPSTREAM, NULL, error, "origin", origin, NULL);
}

/* symfonic_upstream_get_origin:
 * @self: a #SymfonicUpstream
 *
 * Returns: the URL it was made from
 */
const char *
symfonic_upstream_get_origin (SymfonicUpstream *self)
{
  g_return_val_if_fail (SYMFONIC_IS_UPSTREAM (self), NULL);

  return self->origin;
}

static void
symfonic_upstream_finalize (GObject *object)
{
  SymfonicUpstream *self = (SymfonicUpstream *) object;

  g_free (self->origin);
  g_free (self->tls_ca_file);
  g_free (self->host);
  g_free (self->authority);
  g_free (self->pool_key);
  g_clear_object (&self->database);

  G_OBJECT_CLASS (symfonic_upstream_parent_class)->finalize (object);
}

static void
symfonic_upstream_get_property (GObject    *object,
                                guint       prop_id,
                                GValue     *value,
                                GParamSpec *pspec)
{
  SymfonicUpstream *self = SYMFONIC_UPSTREAM (object);

  switch (prop_id)
    {
    case PROP_ORIGIN:
      g_value_set_string (value, self->origin);
      break;
    case PROP_TLS_CA_FILE:
      g_value_set_string (value, self->tls_ca_file);
      break;
    case PROP_CONNECT_TIMEOUT:
      g_value_set_uint (value, self->connect_timeout);
      break;
    case PROP_IDLE_TIMEOUT:
      g_value_set_uint (value, self->idle_timeout);
      break;
    case PROP_MAX_IDLE:
      g_value_set_uint (value, self->max_idle);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_upstream_set_property (GObject      *object,
                                guint         prop_id,
                                const GValue *value,
                                GParamSpec   *pspec)
{
  SymfonicUpstream *self = SYMFONIC_UPSTREAM (object);

  switch (prop_id)
    {
    case PROP_ORIGIN:
      g_free (self->origin);
      self->origin = g_value_dup_string (value);
      break;
    case PROP_TLS_CA_FILE:
      g_free (self->tls_ca_file);
      self->tls_ca_file = g_value_dup_string (value);
      break;
    case PROP_CONNECT_TIMEOUT:
      self->connect_timeout = g_value_get_uint (value);
      break;
    case PROP_IDLE_TIMEOUT:
      self->idle_timeout = g_value_get_uint (value);
      break;
    case PROP_MAX_IDLE:
      self->max_idle = g_value_get_uint (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_upstream_class_init (SymfonicUpstreamClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = symfonic_upstream_finalize;
  object_class->get_property = symfonic_upstream_get_property;
  object_class->set_property = symfonic_upstream_set_property;

  properties[PROP_ORIGIN] =
    g_param_spec_string ("origin", "Origin",
                         "The upstream's http or https URL; only its scheme, host and port are used",
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_TLS_CA_FILE] =
    g_param_spec_string ("tls-ca-file", "TLS CA file",
                         "A PEM file of the certificate authorities an https upstream is checked "
                         "against, instead of the system's trust",
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_CONNECT_TIMEOUT] =
    g_param_spec_uint ("connect-timeout", "Connect timeout",
                       "Seconds a new connection (and its TLS handshake) may take; 0 waits forever",
                       0, G_MAXUINT, DEFAULT_CONNECT_TIMEOUT,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_IDLE_TIMEOUT] =
    g_param_spec_uint ("idle-timeout", "Idle timeout",
                       "Seconds an unused kept-alive connection stays open; 0 keeps it until the upstream "
                       "closes it",
                       0, G_MAXUINT, DEFAULT_IDLE_TIMEOUT,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_MAX_IDLE] =
    g_param_spec_uint ("max-idle", "Maximum idle connections",
                       "Unused kept-alive connections each worker thread keeps to the origin; "
                       "0 keeps none",
                       0, G_MAXUINT, DEFAULT_MAX_IDLE,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
symfonic_upstream_init (SymfonicUpstream *self)
{
  self->connect_timeout = DEFAULT_CONNECT_TIMEOUT;
  self->idle_timeout = DEFAULT_IDLE_TIMEOUT;
  self->max_idle = DEFAULT_MAX_IDLE;
}
