/* symfonic-connection.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "symfonic-connection-private.h"
#include "symfonic-early-refusal-private.h"
#include "symfonic-poller-private.h"
#include "symfonic-request-framing-private.h"

/* libsoup reads each client connection through this stream, which stands
 * between it and the socket:
 *
 * - a request head is gathered here and checked before libsoup sees a byte
 *   of it (see symfonic-request-framing.c), and only the bytes of one
 *   request at a time reach libsoup, so a smuggled second request is read
 *   as the next head and checked in turn;
 * - it knows which phase the connection is in (waiting between requests,
 *   reading a head, reading a body, answering) and so the deadline of each,
 *   on one timer of its worker's poller, moved as the phase changes: an
 *   armed timer costs nothing until it is due, so idle connections wake
 *   nobody, and a deadline is met to the millisecond;
 * - a peer that leaves, or a connection the gateway ends, reads as end of
 *   file, and whatever libsoup writes then is dropped. Before 3.3.0,
 *   libsoup never closes a keep-alive connection whose client hung up
 *   between requests: see take_ending(). */

#define READ_SIZE (16 * 1024)

typedef enum
{
  PHASE_IDLE,
  PHASE_HEAD,
  PHASE_BODY,
  PHASE_RESPONSE,
} Phase;

struct _SymfonicConnection
{
  GIOStream                     parent_instance;

  /* NULL once a refusal owns it */
  GSocketConnection            *base;
  GSocket                      *socket;
  GSocketAddress               *remote;
  GSocketAddress               *local;
  /* unowned: the server outlives its connections (the acceptor closes
   * them before it lets the server go) */
  SoupServer                   *server;
  GInputStream                 *input;
  GOutputStream                *output;
  SymfonicConnectionTimeouts    timeouts;
  SymfonicConnectionClosedFunc  closed;
  gpointer                      closed_data;

  Phase                         phase;
  /* the current phase's deadline; NULL once the connection closed */
  SymfonicTimer                *deadline;
  /* read from the socket, not yet given to libsoup; NULL when empty */
  GByteArray                   *pending;
  /* how many bytes at the start of @pending libsoup may read */
  gsize                         deliverable;
  SymfonicBodyFraming           body;
  /* the peer left or the gateway ends the connection */
  gboolean                      ending;
#if !SOUP_CHECK_VERSION (3, 3, 0)
  gboolean                      marker_sent;
#endif
  /* the gateway is stopping: the connection closes once it is idle */
  gboolean                      closing;
};

G_DEFINE_FINAL_TYPE (SymfonicConnection, symfonic_connection, G_TYPE_IO_STREAM)

/* on the peer's address: how a message finds its connection back */
static G_DEFINE_QUARK (symfonic-connection, connection)

/* --- the state machine --------------------------------------------------- */

/* @deadline in g_get_monotonic_time() microseconds, or -1 for none */
static void
set_deadline (SymfonicConnection *self,
              gint64              deadline)
{
  if (self->deadline != NULL)
    symfonic_timer_set_deadline (self->deadline, deadline);
}

static void
enter (SymfonicConnection *self,
       Phase               phase,
       gint64              timeout)
{
  self->phase = phase;
  /* A stopping gateway closes it once it is idle: from the timer, due at
   * once, rather than from inside the read that made it idle. */
  if (self->closing && phase == PHASE_IDLE)
    set_deadline (self, g_get_monotonic_time ());
  else
    set_deadline (self, timeout > 0 ? g_get_monotonic_time () + timeout : -1);
}

static void
end (SymfonicConnection *self)
{
  self->ending = TRUE;
  set_deadline (self, -1);
  self->deliverable = 0;
  g_clear_pointer (&self->pending, g_byte_array_unref);
}

static const char *
code_for_status (guint status)
{
  switch (status)
    {
    case 414:
      return "uri_too_long";
    case 417:
      return "expectation_failed";
    case 431:
      return "headers_too_large";
    case 505:
      return "http_version_not_supported";
    default:
      return "bad_request";
    }
}

/* Answers a request libsoup must not see (its head, or the rest of its
 * body) with a JSON error on the raw connection, which the refusal then
 * owns and closes. */
static void
refuse (SymfonicConnection *self,
        guint               status,
        const char         *detail)
{
  g_autoptr(SymfonicErrorFrame) frame = symfonic_error_frame_new (status, detail, code_for_status (status));

  g_debug ("Refusing a request with %u: %s", status, detail);
  symfonic_early_refusal_send_on (G_IO_STREAM (self->base), frame, NULL);
  g_clear_object (&self->base);
  end (self);
}

/**
 * symfonic_connection_steal_base:
 * @self: a connection libsoup let go of
 *
 * Takes the socket from under the connection, for an answer written on
 * it directly: the framing checks end with it, so that what a refusal
 * reads and drops is not judged as a request and answered a second time.
 * The connection itself still has to be closed, which frees its slot.
 *
 * Returns: (transfer full) (nullable): the socket's connection, or %NULL
 *   when a refusal of the connection's own took it already
 */
GIOStream *
symfonic_connection_steal_base (SymfonicConnection *self)
{
  GIOStream *base = G_IO_STREAM (g_steal_pointer (&self->base));

  end (self);
  return base;
}

static void
follow_body (SymfonicConnection *self)
{
  /* libsoup has the head and would fail on the same bytes with a silent
   * close; what it writes once the connection ends is dropped */
  if (self->body.invalid)
    refuse (self, 400, "The request body's chunked framing is malformed");
  else if (self->body.done)
    enter (self, PHASE_RESPONSE, 0);
}

/* A chunked body's trailer section is read and checked here, like a head
 * (its size, its lines), and libsoup gets only its final blank line: the
 * body ends where it ends for the gateway. Trailer fields are dropped, as
 * libsoup drops them. This is the gateway's own bound, not only a
 * workaround, so no version fences it: libsoup 3.2.3 also ends a body
 * after one line of that section, whatever it is, and would read the rest
 * as the next request. */
static gboolean
advance_trailers (SymfonicConnection *self,
                  const guint8       *data,
                  gsize               length)
{
  gsize end = symfonic_request_trailers_end (data, length);
  const char *detail = NULL;
  guint status;
  gsize blank;

  if (end == 0)
    {
      status = symfonic_request_trailers_incomplete_status (length, &detail);
      if (status == 0)
        return FALSE;
      refuse (self, status, detail);
      return TRUE;
    }

  status = symfonic_request_trailers_check (data, end, &detail);
  if (status != 0)
    {
      refuse (self, status, detail);
      return TRUE;
    }

  blank = end >= 2 && data[end - 2] == '\r' ? 2 : 1;
  g_byte_array_remove_range (self->pending, self->deliverable, end - blank);
  self->deliverable += blank;
  self->body.trailers = FALSE;
  self->body.done = TRUE;
  follow_body (self);
  return TRUE;
}

/* Moves the framing forward over the bytes already read. Returns whether
 * it made progress. */
static gboolean
advance (SymfonicConnection *self)
{
  gsize length = self->pending != NULL ? self->pending->len : 0;
  const guint8 *data = self->pending != NULL ? self->pending->data : NULL;
  const char *detail = NULL;
  gsize head;
  guint status;

  switch (self->phase)
    {
    case PHASE_RESPONSE:
      /* libsoup reads again only for the next request */
      enter (self, PHASE_IDLE, self->timeouts.keepalive);
      return TRUE;

    case PHASE_IDLE:
      if (length == 0)
        return FALSE;
      enter (self, PHASE_HEAD, self->timeouts.header);
      return TRUE;

    case PHASE_HEAD:
      /* blank lines before a request line are ignored (RFC 9112 2.2) */
      if (length > 0 && (data[0] == '\r' || data[0] == '\n'))
        {
          gsize blank = 0;

          while (blank < length && (data[blank] == '\r' || data[blank] == '\n'))
            blank++;
          if (blank == length)
            g_clear_pointer (&self->pending, g_byte_array_unref);
          else
            g_byte_array_remove_range (self->pending, 0, blank);
          return TRUE;
        }

      head = symfonic_request_head_end (data, length);
      if (head == 0)
        {
          status = symfonic_request_head_incomplete_status (data, length, &detail);
          if (status != 0)
            {
              refuse (self, status, detail);
              return TRUE;
            }
          return FALSE;
        }

      status = symfonic_request_head_check (data, head, &self->body, &detail);
      if (status != 0)
        {
          refuse (self, status, detail);
          return TRUE;
        }

      self->deliverable = head;
#if !SOUP_CHECK_VERSION (3, 3, 0)
      self->marker_sent = FALSE;
#endif
      enter (self, PHASE_BODY, self->timeouts.body);
      follow_body (self);
      return TRUE;

    case PHASE_BODY:
      if (length <= self->deliverable)
        return FALSE;
      if (self->body.trailers)
        return advance_trailers (self, data + self->deliverable, length - self->deliverable);
      self->deliverable += symfonic_body_framing_scan (&self->body, data + self->deliverable,
                                                       length - self->deliverable);
      follow_body (self);
      return TRUE;

    default:
      g_assert_not_reached ();
    }
}

static gssize
take_pending (SymfonicConnection *self,
              guint8             *buffer,
              gsize               count)
{
  gsize n = MIN (count, self->deliverable);

  memcpy (buffer, self->pending->data, n);
  self->deliverable -= n;
  if (n == self->pending->len)
    g_clear_pointer (&self->pending, g_byte_array_unref);
  else
    g_byte_array_remove_range (self->pending, 0, n);

  return n;
}

/* What libsoup reads once the connection ends: end of file. A body cut
 * short is an error: libsoup takes end of file at a chunk boundary for the
 * end of the body, and would answer what it read of it. */
static gssize
take_ending (SymfonicConnection  *self,
             guint8              *buffer,
             GError             **error)
{
  if (self->phase == PHASE_BODY)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED, "The connection ended");
      return -1;
    }

#if !SOUP_CHECK_VERSION (3, 3, 0)
  /* libsoup 3.2.3 never closes a keep-alive connection that reads end of
   * file between requests (fixed in 3.3.0, commit d20c6601): its idle
   * message has not started, and nothing finishes it, so every client
   * that hangs up would keep a descriptor. A request that has read one
   * byte is started and cleans up when it fails: libsoup first reads one
   * byte that is no request, unless one is under way; its answer to it is
   * dropped, and it closes the connection. */
  if (!self->marker_sent)
    {
      self->marker_sent = TRUE;
      buffer[0] = '\n';
      return 1;
    }
#endif

  return 0;
}

/* A body arriving with nothing buffered is read straight into libsoup's
 * buffer; bytes past its end wait in @pending for the next head. */
static gssize
receive_body (SymfonicConnection  *self,
              guint8              *buffer,
              gsize                count,
              GError             **error)
{
  gsize limit = self->body.kind == SYMFONIC_BODY_LENGTH ? MIN (count, self->body.left) : count;
  gssize n = g_socket_receive_with_blocking (self->socket, (char *) buffer, limit, FALSE, NULL, error);
  gsize in_body;

  if (n <= 0)
    return n;

  in_body = symfonic_body_framing_scan (&self->body, buffer, n);
  if ((self->body.done || self->body.trailers) && in_body < (gsize) n)
    {
      self->pending = g_byte_array_new ();
      g_byte_array_append (self->pending, buffer + in_body, n - in_body);
    }
  follow_body (self);

  return in_body;
}

static gssize
receive_pending (SymfonicConnection  *self,
                 GError             **error)
{
  guint old;
  gssize n;

  if (self->pending == NULL)
    self->pending = g_byte_array_sized_new (READ_SIZE);
  old = self->pending->len;
  g_byte_array_set_size (self->pending, old + READ_SIZE);
  n = g_socket_receive_with_blocking (self->socket, (char *) self->pending->data + old, READ_SIZE,
                                      FALSE, NULL, error);
  g_byte_array_set_size (self->pending, old + MAX (n, 0));
  if (self->pending->len == 0)
    g_clear_pointer (&self->pending, g_byte_array_unref);

  return n;
}

/* Any error but "try again" means the peer is gone (a reset, most often),
 * and reads as the connection's end (take_ending()), which libsoup closes
 * on; libsoup 3.2.3 left a connection open on a socket error, with its
 * descriptor and its slot. That holds whatever a release makes of
 * errors, so no version fences it. */
static gboolean
peer_gone (const GError *error)
{
  return !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK);
}

static gssize
connection_read (SymfonicConnection  *self,
                 guint8              *buffer,
                 gsize                count,
                 GError             **error)
{
  if (count == 0)
    return 0;

  for (;;)
    {
      g_autoptr(GError) local = NULL;
      gssize n;

      if (self->deliverable > 0)
        return take_pending (self, buffer, count);
      if (self->ending)
        return take_ending (self, buffer, error);
      if (advance (self))
        continue;

      if (self->phase == PHASE_BODY && self->pending == NULL && !self->body.trailers)
        {
          n = receive_body (self, buffer, count, &local);
          if (n > 0)
            return n;
        }
      else
        {
          n = receive_pending (self, &local);
          if (n > 0)
            continue;
        }

      if (n < 0 && !peer_gone (local))
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return -1;
        }

      /* end of file, or the peer left */
      self->ending = TRUE;
      set_deadline (self, -1);
    }
}

static gboolean
connection_is_readable (SymfonicConnection *self)
{
  if (self->ending || self->deliverable > 0)
    return TRUE;
  if (self->pending == NULL)
    return FALSE;
  if (self->phase == PHASE_HEAD)
    return symfonic_request_head_end (self->pending->data, self->pending->len) > 0;
  if (self->phase == PHASE_BODY && self->body.trailers)
    return symfonic_request_trailers_end (self->pending->data, self->pending->len) > 0;

  return TRUE;
}

/* A stream's source: ready at once when it can make progress without the
 * socket (or its connection is gone), else when the socket is. The
 * pollable interface asks for a GSource, which libsoup attaches itself:
 * "ready at once" is GLib's own idiom for it (GMemoryInputStream's), no
 * deadline, and lives for one dispatch. */
static GSource *
connection_create_source (SymfonicConnection *self,
                          gpointer            stream,
                          GIOCondition        condition,
                          gboolean            ready,
                          GCancellable       *cancellable)
{
  g_autoptr(GSource) child = ready || self == NULL ? g_timeout_source_new (0)
                                                   : g_socket_create_source (self->socket, condition, NULL);

  return g_pollable_source_new_full (stream, child, cancellable);
}

/* --- the input stream ---------------------------------------------------- */

#define SYMFONIC_TYPE_CONNECTION_INPUT (symfonic_connection_input_get_type ())
G_DECLARE_FINAL_TYPE (SymfonicConnectionInput, symfonic_connection_input, SYMFONIC, CONNECTION_INPUT, GInputStream)

struct _SymfonicConnectionInput
{
  GInputStream        parent_instance;
  /* unowned: the connection owns this stream */
  SymfonicConnection *connection;
};

static void symfonic_connection_input_pollable_init (GPollableInputStreamInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SymfonicConnectionInput, symfonic_connection_input, G_TYPE_INPUT_STREAM,
                               G_IMPLEMENT_INTERFACE (G_TYPE_POLLABLE_INPUT_STREAM,
                                                      symfonic_connection_input_pollable_init))

static gssize
input_read_nonblocking (GPollableInputStream  *stream,
                        void                  *buffer,
                        gsize                  count,
                        GError               **error)
{
  SymfonicConnection *connection = SYMFONIC_CONNECTION_INPUT (stream)->connection;

  if (connection == NULL)
    return 0;

  return connection_read (connection, buffer, count, error);
}

static gssize
input_read (GInputStream  *stream,
            void          *buffer,
            gsize          count,
            GCancellable  *cancellable,
            GError       **error)
{
  SymfonicConnection *connection = SYMFONIC_CONNECTION_INPUT (stream)->connection;

  for (;;)
    {
      GError *local = NULL;
      gssize n = input_read_nonblocking (G_POLLABLE_INPUT_STREAM (stream), buffer, count, &local);

      if (n >= 0 || !g_error_matches (local, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
        {
          if (local != NULL)
            g_propagate_error (error, local);
          return n;
        }
      g_error_free (local);
      if (!g_socket_condition_wait (connection->socket, G_IO_IN, cancellable, error))
        return -1;
    }
}

static gboolean
input_is_readable (GPollableInputStream *stream)
{
  SymfonicConnection *connection = SYMFONIC_CONNECTION_INPUT (stream)->connection;

  return connection == NULL || connection_is_readable (connection) ||
         g_socket_condition_check (connection->socket, G_IO_IN) != 0;
}

static GSource *
input_create_source (GPollableInputStream *stream,
                     GCancellable         *cancellable)
{
  SymfonicConnection *connection = SYMFONIC_CONNECTION_INPUT (stream)->connection;

  return connection_create_source (connection, stream, G_IO_IN,
                                   connection != NULL && connection_is_readable (connection), cancellable);
}

static void
symfonic_connection_input_pollable_init (GPollableInputStreamInterface *iface)
{
  iface->is_readable = input_is_readable;
  iface->create_source = input_create_source;
  iface->read_nonblocking = input_read_nonblocking;
}

static void
symfonic_connection_input_class_init (SymfonicConnectionInputClass *klass)
{
  GInputStreamClass *stream_class = G_INPUT_STREAM_CLASS (klass);

  stream_class->read_fn = input_read;
}

static void
symfonic_connection_input_init (SymfonicConnectionInput *self)
{
}

/* --- the output stream --------------------------------------------------- */

#define SYMFONIC_TYPE_CONNECTION_OUTPUT (symfonic_connection_output_get_type ())
G_DECLARE_FINAL_TYPE (SymfonicConnectionOutput, symfonic_connection_output, SYMFONIC, CONNECTION_OUTPUT, GOutputStream)

struct _SymfonicConnectionOutput
{
  GOutputStream       parent_instance;
  /* unowned: the connection owns this stream */
  SymfonicConnection *connection;
};

static void symfonic_connection_output_pollable_init (GPollableOutputStreamInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SymfonicConnectionOutput, symfonic_connection_output, G_TYPE_OUTPUT_STREAM,
                               G_IMPLEMENT_INTERFACE (G_TYPE_POLLABLE_OUTPUT_STREAM,
                                                      symfonic_connection_output_pollable_init))

/* Once the connection ends, what libsoup writes is dropped: its answer to
 * the byte that ended it, or to a peer that is gone. */
static gssize
output_write_with_blocking (GOutputStream  *stream,
                            const void     *buffer,
                            gsize           count,
                            gboolean        blocking,
                            GCancellable   *cancellable,
                            GError        **error)
{
  SymfonicConnection *connection = SYMFONIC_CONNECTION_OUTPUT (stream)->connection;
  g_autoptr(GError) local = NULL;
  gssize n;

  if (connection == NULL || connection->ending)
    return count;

  n = g_socket_send_with_blocking (connection->socket, buffer, count, blocking, cancellable, &local);
  if (n >= 0)
    return n;
  if (!peer_gone (local) || g_cancellable_is_cancelled (cancellable))
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return -1;
    }

  /* the peer is gone: libsoup reads the end next and closes */
  end (connection);
  return count;
}

static gssize
output_write (GOutputStream  *stream,
              const void     *buffer,
              gsize           count,
              GCancellable   *cancellable,
              GError        **error)
{
  return output_write_with_blocking (stream, buffer, count, TRUE, cancellable, error);
}

static gssize
output_write_nonblocking (GPollableOutputStream  *stream,
                          const void             *buffer,
                          gsize                   count,
                          GError                **error)
{
  return output_write_with_blocking (G_OUTPUT_STREAM (stream), buffer, count, FALSE, NULL, error);
}

static gboolean
output_is_writable (GPollableOutputStream *stream)
{
  SymfonicConnection *connection = SYMFONIC_CONNECTION_OUTPUT (stream)->connection;

  return connection == NULL || connection->ending ||
         g_socket_condition_check (connection->socket, G_IO_OUT) != 0;
}

static GSource *
output_create_source (GPollableOutputStream *stream,
                      GCancellable          *cancellable)
{
  SymfonicConnection *connection = SYMFONIC_CONNECTION_OUTPUT (stream)->connection;

  return connection_create_source (connection, stream, G_IO_OUT, connection != NULL && connection->ending,
                                   cancellable);
}

static void
symfonic_connection_output_pollable_init (GPollableOutputStreamInterface *iface)
{
  iface->is_writable = output_is_writable;
  iface->create_source = output_create_source;
  iface->write_nonblocking = output_write_nonblocking;
}

static void
symfonic_connection_output_class_init (SymfonicConnectionOutputClass *klass)
{
  GOutputStreamClass *stream_class = G_OUTPUT_STREAM_CLASS (klass);

  stream_class->write_fn = output_write;
}

static void
symfonic_connection_output_init (SymfonicConnectionOutput *self)
{
}

/* --- the connection ------------------------------------------------------ */

static void
notify_closed (SymfonicConnection *self)
{
  SymfonicConnectionClosedFunc closed = g_steal_pointer (&self->closed);

  if (self->remote != NULL)
    g_object_set_qdata (G_OBJECT (self->remote), connection_quark (), NULL);
  if (closed != NULL)
    closed (self, self->closed_data);
}

static gboolean
symfonic_connection_close (GIOStream     *stream,
                           GCancellable  *cancellable,
                           GError       **error)
{
  SymfonicConnection *self = SYMFONIC_CONNECTION (stream);

  end (self);
  /* the poller is the worker's, which closes its connections before it
   * goes; a connection libsoup still holds may be finalized later */
  g_clear_pointer (&self->deadline, symfonic_timer_remove);
  if (self->base != NULL)
    g_io_stream_close (G_IO_STREAM (self->base), NULL, NULL);
  notify_closed (self);

  return TRUE;
}

/* Closing a socket does not block: the asynchronous close is the same. */
static void
symfonic_connection_close_async (GIOStream           *stream,
                                 int                  io_priority,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (stream, cancellable, callback, user_data);

  g_task_set_source_tag (task, symfonic_connection_close_async);
  g_task_return_boolean (task, symfonic_connection_close (stream, cancellable, NULL));
}

static gboolean
symfonic_connection_close_finish (GIOStream     *stream,
                                  GAsyncResult  *result,
                                  GError       **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

static GInputStream *
symfonic_connection_get_input_stream (GIOStream *stream)
{
  return SYMFONIC_CONNECTION (stream)->input;
}

static GOutputStream *
symfonic_connection_get_output_stream (GIOStream *stream)
{
  return SYMFONIC_CONNECTION (stream)->output;
}

static void
symfonic_connection_dispose (GObject *object)
{
  SymfonicConnection *self = (SymfonicConnection *) object;

  notify_closed (self);
  g_clear_pointer (&self->deadline, symfonic_timer_remove);
  if (self->input != NULL)
    SYMFONIC_CONNECTION_INPUT (self->input)->connection = NULL;
  if (self->output != NULL)
    SYMFONIC_CONNECTION_OUTPUT (self->output)->connection = NULL;

  G_OBJECT_CLASS (symfonic_connection_parent_class)->dispose (object);
}

static void
symfonic_connection_finalize (GObject *object)
{
  SymfonicConnection *self = (SymfonicConnection *) object;

  g_clear_object (&self->input);
  g_clear_object (&self->output);
  g_clear_object (&self->base);
  g_clear_object (&self->socket);
  g_clear_object (&self->remote);
  g_clear_object (&self->local);
  g_clear_pointer (&self->pending, g_byte_array_unref);

  G_OBJECT_CLASS (symfonic_connection_parent_class)->finalize (object);
}

static void
symfonic_connection_class_init (SymfonicConnectionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GIOStreamClass *stream_class = G_IO_STREAM_CLASS (klass);

  object_class->dispose = symfonic_connection_dispose;
  object_class->finalize = symfonic_connection_finalize;
  stream_class->get_input_stream = symfonic_connection_get_input_stream;
  stream_class->get_output_stream = symfonic_connection_get_output_stream;
  stream_class->close_fn = symfonic_connection_close;
  stream_class->close_async = symfonic_connection_close_async;
  stream_class->close_finish = symfonic_connection_close_finish;

}

static void
symfonic_connection_init (SymfonicConnection *self)
{
}

static void
deadline_passed (gpointer data)
{
  symfonic_connection_expire (data);
}

/* Wraps @base for libsoup, on the thread-default main context, whose
 * poller keeps its deadlines. @closed is called once when it closes. The
 * first head must arrive within the header timeout of now. */
SymfonicConnection *
symfonic_connection_new (GSocketConnection                *base,
                         const SymfonicConnectionTimeouts *timeouts,
                         SymfonicConnectionClosedFunc      closed,
                         gpointer                          user_data)
{
  SymfonicConnection *self = g_object_new (SYMFONIC_TYPE_CONNECTION, NULL);
  SymfonicConnectionInput *input = g_object_new (SYMFONIC_TYPE_CONNECTION_INPUT, NULL);
  SymfonicConnectionOutput *output = g_object_new (SYMFONIC_TYPE_CONNECTION_OUTPUT, NULL);

  self->base = g_object_ref (base);
  self->socket = g_object_ref (g_socket_connection_get_socket (base));
  self->remote = g_socket_connection_get_remote_address (base, NULL);
  self->timeouts = *timeouts;
  self->closed = closed;
  self->closed_data = user_data;
  input->connection = self;
  output->connection = self;
  self->input = G_INPUT_STREAM (input);
  self->output = G_OUTPUT_STREAM (output);
  if (self->remote != NULL)
    g_object_set_qdata (G_OBJECT (self->remote), connection_quark (), self);
  self->deadline = symfonic_poller_timer (symfonic_poller_get_thread_default (), deadline_passed, self);
  enter (self, PHASE_HEAD, timeouts->header);

  return self;
}

/* Hands the connection to @server, which reads its requests from now on,
 * and again each time it is handed back. */
void
symfonic_connection_serve (SymfonicConnection *self,
                           SoupServer         *server,
                           GSocketAddress     *local)
{
  self->server = server;
  g_set_object (&self->local, local);
  soup_server_accept_iostream (server, G_IO_STREAM (self), self->local, self->remote, NULL);
}

/* A streaming response taken from libsoup was written whole: the
 * connection waits for the next request, which the server reads as on a
 * new connection (bytes already read past the last request included). */
void
symfonic_connection_hand_back (SymfonicConnection *self)
{
  g_return_if_fail (self->server != NULL);

  symfonic_connection_response_done (self);
  soup_server_accept_iostream (self->server, G_IO_STREAM (self), self->local, self->remote, NULL);
}

/* The address libsoup is given for the connection's peer; it also finds
 * the connection back from a message. */
GSocketAddress *
symfonic_connection_get_remote_address (SymfonicConnection *self)
{
  return self->remote;
}

/* Ends a connection past its deadline: shutting the socket down wakes
 * whatever waits on it, and libsoup then reads the end. */
void
symfonic_connection_expire (SymfonicConnection *self)
{
  static const char * const phases[] = { "keep-alive", "header", "body", "response" };

  g_debug ("Closing a connection that missed its %s deadline", phases[self->phase]);
  end (self);
  if (self->base != NULL)
    g_socket_shutdown (self->socket, TRUE, TRUE, NULL);
}

/* The gateway is stopping: the connection closes now if it waits for a
 * request, else once its answer is out. */
void
symfonic_connection_close_when_idle (SymfonicConnection *self)
{
  self->closing = TRUE;
  if (self->phase == PHASE_IDLE)
    symfonic_connection_expire (self);
}

/* The answer to the current request is out: the connection waits for the
 * next one. */
void
symfonic_connection_response_done (SymfonicConnection *self)
{
  if (self->phase == PHASE_RESPONSE)
    enter (self, PHASE_IDLE, self->timeouts.keepalive);
}

/* The open connection @message came on, or NULL. */
SymfonicConnection *
symfonic_connection_for_message (SoupServerMessage *message)
{
  GSocketAddress *remote = soup_server_message_get_remote_address (message);

  return remote != NULL ? g_object_get_qdata (G_OBJECT (remote), connection_quark ()) : NULL;
}

/* libsoup knows no socket for a connection it was handed as a stream. */
GSocket *
symfonic_connection_get_message_socket (SoupServerMessage *message)
{
  SymfonicConnection *self = symfonic_connection_for_message (message);

  if (self == NULL || self->base == NULL)
    return soup_server_message_get_socket (message);

  return self->socket;
}

/* libsoup notices a dead client only when it next writes, and an upstream
 * that is slow to produce would keep running for nothing: a peer that
 * closed makes its socket readable with nothing to read. */
SymfonicPeerState
symfonic_connection_peek_peer (int fd)
{
  char byte;
  gssize n;

  do
    n = recv (fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);

  if (n > 0)
    return SYMFONIC_PEER_SENT;
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
    return SYMFONIC_PEER_QUIET;

  return SYMFONIC_PEER_LEFT;
}
