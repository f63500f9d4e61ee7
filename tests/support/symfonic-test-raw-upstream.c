/* symfonic-test-raw-upstream.c: an upstream that writes exact bytes
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A plain TCP server on 127.0.0.1 with a thread per connection and
 * blocking I/O: it reads each request (head and Content-Length body) and
 * answers with scripted bytes, written piece by piece, so a test decides
 * the response's framing byte for byte, hostile or not. It counts the
 * connections it accepted, the requests it read, and the writes that
 * found the connection's send buffer full (the peer had stopped reading).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gio/gio.h>

#include "symfonic-test-support.h"
#include "symfonic-test-raw-upstream.h"

#define MAX_REQUEST_BYTES (256 * 1024)
/* between pieces, so the reader sees them in separate reads */
#define PIECE_GAP_US (2 * G_TIME_SPAN_MILLISECOND)

struct _SymfonicTestRawUpstream
{
  GSocket   *listener;
  guint16    port;
  GThread   *acceptor;

  GMutex     lock;
  GCond      cond;
  GPtrArray *pieces;
  gboolean   close_after;
  gsize      send_buffer;
  gboolean   drop_reused;
  gboolean   stopping;
  guint      connections;
  guint      requests;
  guint      blocked_writes;
  guint      answers_written;
  /* connections waiting for their next request, as int fds */
  GArray    *idle;
  GPtrArray *threads;
};

typedef struct
{
  SymfonicTestRawUpstream *upstream;
  int                      fd;
} Connection;

static void
set_idle (SymfonicTestRawUpstream *self,
          int                      fd,
          gboolean                 idle)
{
  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->idle->len; i++)
    {
      if (g_array_index (self->idle, int, i) == fd)
        {
          g_array_remove_index_fast (self->idle, i);
          break;
        }
    }
  if (idle)
    g_array_append_val (self->idle, fd);
  g_mutex_unlock (&self->lock);
}

/* Reads one request; FALSE when the peer closed first. */
static gboolean
read_request (int fd)
{
  g_autoptr(GString) request = g_string_new (NULL);
  char buffer[4096];
  const char *end = NULL;
  gsize body_length = 0;

  while ((end = strstr (request->str, "\r\n\r\n")) == NULL)
    {
      gssize n = read (fd, buffer, sizeof buffer);

      if (n <= 0 || request->len > MAX_REQUEST_BYTES)
        return FALSE;
      g_string_append_len (request, buffer, n);
    }

  for (const char *p = request->str; p < end; p = strstr (p, "\r\n") + 2)
    {
      if (g_ascii_strncasecmp (p, "Content-Length:", 15) == 0)
        body_length = g_ascii_strtoull (p + 15, NULL, 10);
    }
  while (request->len < (gsize) (end + 4 - request->str) + body_length)
    {
      gssize n = read (fd, buffer, sizeof buffer);

      if (n <= 0)
        return FALSE;
      g_string_append_len (request, buffer, n);
      end = strstr (request->str, "\r\n\r\n");
    }

  return TRUE;
}

/* Writes all of @data; a full send buffer is counted, then waited out. */
static gboolean
write_all (SymfonicTestRawUpstream *self,
           int                      fd,
           const char              *data,
           gsize                    length)
{
  while (length > 0)
    {
      gssize n = send (fd, data, length, MSG_NOSIGNAL | MSG_DONTWAIT);

      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        {
          struct pollfd pfd = { .fd = fd, .events = POLLOUT };
          gboolean stopping;

          g_mutex_lock (&self->lock);
          self->blocked_writes++;
          g_cond_broadcast (&self->cond);
          stopping = self->stopping;
          g_mutex_unlock (&self->lock);
          if (stopping)
            return FALSE;
          poll (&pfd, 1, 100);
          continue;
        }
      if (n <= 0)
        return FALSE;
      data += n;
      length -= n;
    }

  return TRUE;
}

static gpointer
connection_thread (gpointer data)
{
  Connection *connection = data;
  SymfonicTestRawUpstream *self = connection->upstream;
  int fd = connection->fd;
  guint served = 0;

  for (;;)
    {
      g_autoptr(GPtrArray) pieces = NULL;
      gboolean close_after;
      gboolean drop;
      gboolean ok = TRUE;

      set_idle (self, fd, TRUE);
      if (!read_request (fd))
        break;
      set_idle (self, fd, FALSE);

      g_mutex_lock (&self->lock);
      self->requests++;
      pieces = g_ptr_array_ref (self->pieces);
      close_after = self->close_after;
      drop = self->drop_reused && served > 0;
      g_cond_broadcast (&self->cond);
      g_mutex_unlock (&self->lock);
      served++;

      /* as a server does whose idle timeout raced the request */
      if (drop)
        break;

      for (guint i = 0; ok && i < pieces->len; i++)
        {
          gsize length;
          const char *piece = g_bytes_get_data (pieces->pdata[i], &length);

          if (i > 0)
            g_usleep (PIECE_GAP_US);
          /* a kept connection is idle once its client can have the whole
           * answer: marked only when this thread came round again, it could
           * miss a test that closes the idle connections right after its
           * stream ended */
          if (i + 1 == pieces->len && !close_after)
            set_idle (self, fd, TRUE);
          ok = write_all (self, fd, piece, length);
        }

      g_mutex_lock (&self->lock);
      self->answers_written++;
      g_cond_broadcast (&self->cond);
      g_mutex_unlock (&self->lock);
      if (!ok || close_after)
        break;
    }

  set_idle (self, fd, FALSE);
  close (fd);
  g_free (connection);

  return NULL;
}

static gpointer
acceptor_thread (gpointer data)
{
  SymfonicTestRawUpstream *self = data;
  int listen_fd = g_socket_get_fd (self->listener);

  /* GSocket made it nonblocking; this thread waits in accept () */
  fcntl (listen_fd, F_SETFL, fcntl (listen_fd, F_GETFL) & ~O_NONBLOCK);

  for (;;)
    {
      int fd = accept (listen_fd, NULL, NULL);
      Connection *connection;
      gsize send_buffer;

      if (fd < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }

      g_mutex_lock (&self->lock);
      if (self->stopping)
        {
          g_mutex_unlock (&self->lock);
          close (fd);
          break;
        }
      self->connections++;
      send_buffer = self->send_buffer;
      g_mutex_unlock (&self->lock);

      if (send_buffer > 0)
        {
          int size = send_buffer;

          setsockopt (fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
        }
      connection = g_new0 (Connection, 1);
      connection->upstream = self;
      connection->fd = fd;
      g_mutex_lock (&self->lock);
      g_ptr_array_add (self->threads, g_thread_new ("raw-upstream", connection_thread, connection));
      g_mutex_unlock (&self->lock);
    }

  return NULL;
}

/* Starts it on an ephemeral port of 127.0.0.1; it answers nothing until
 * told what. */
SymfonicTestRawUpstream *
symfonic_test_raw_upstream_new (void)
{
  SymfonicTestRawUpstream *self = g_new0 (SymfonicTestRawUpstream, 1);

  g_mutex_init (&self->lock);
  g_cond_init (&self->cond);
  self->pieces = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  self->idle = g_array_new (FALSE, FALSE, sizeof (int));
  self->threads = g_ptr_array_new ();
  self->listener = symfonic_test_loopback_socket (TRUE, &self->port);
  self->acceptor = g_thread_new ("raw-upstream-accept", acceptor_thread, self);

  return self;
}

void
symfonic_test_raw_upstream_free (SymfonicTestRawUpstream *self)
{
  g_mutex_lock (&self->lock);
  self->stopping = TRUE;
  g_mutex_unlock (&self->lock);

  /* wakes the acceptor; then every connection still waiting to read */
  shutdown (g_socket_get_fd (self->listener), SHUT_RDWR);
  g_thread_join (self->acceptor);
  symfonic_test_raw_upstream_close_idle (self);
  for (guint i = 0; i < self->threads->len; i++)
    g_thread_join (self->threads->pdata[i]);

  g_object_unref (self->listener);
  g_ptr_array_unref (self->pieces);
  g_ptr_array_unref (self->threads);
  g_array_unref (self->idle);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->cond);
  g_free (self);
}

char *
symfonic_test_raw_upstream_dup_url (SymfonicTestRawUpstream *self)
{
  return g_strdup_printf ("http://127.0.0.1:%u/raw", self->port);
}

/* Every request from now on is answered with @pieces (NULL-terminated),
 * each its own write; then the connection is closed or kept for the
 * next request. */
void
symfonic_test_raw_upstream_set_answer (SymfonicTestRawUpstream *self,
                                       const char * const      *pieces,
                                       gboolean                 close_after)
{
  g_autoptr(GPtrArray) array = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);

  for (guint i = 0; pieces[i] != NULL; i++)
    g_ptr_array_add (array, g_bytes_new (pieces[i], strlen (pieces[i])));

  g_mutex_lock (&self->lock);
  g_ptr_array_unref (self->pieces);
  self->pieces = g_steal_pointer (&array);
  self->close_after = close_after;
  g_mutex_unlock (&self->lock);
}

/* Every request is answered with @answer in one write, kept alive, on
 * connections whose send buffer is @send_buffer bytes (0: the system's),
 * so a peer that stops reading soon blocks the writes. */
void
symfonic_test_raw_upstream_set_answer_bytes (SymfonicTestRawUpstream *self,
                                             GBytes                  *answer,
                                             gsize                    send_buffer)
{
  g_mutex_lock (&self->lock);
  g_ptr_array_set_size (self->pieces, 0);
  g_ptr_array_add (self->pieces, g_bytes_ref (answer));
  self->close_after = FALSE;
  self->send_buffer = send_buffer;
  g_mutex_unlock (&self->lock);
}

/* A request that is not the first on its connection gets the connection
 * closed instead of an answer. */
void
symfonic_test_raw_upstream_set_drop_reused (SymfonicTestRawUpstream *self,
                                            gboolean                 drop)
{
  g_mutex_lock (&self->lock);
  self->drop_reused = drop;
  g_mutex_unlock (&self->lock);
}

/* Closes every connection that waits for its next request, as a server's
 * keep-alive timeout does. */
void
symfonic_test_raw_upstream_close_idle (SymfonicTestRawUpstream *self)
{
  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->idle->len; i++)
    shutdown (g_array_index (self->idle, int, i), SHUT_RDWR);
  g_mutex_unlock (&self->lock);
}

static guint
get_locked (SymfonicTestRawUpstream *self,
            const guint             *field)
{
  guint value;

  g_mutex_lock (&self->lock);
  value = *field;
  g_mutex_unlock (&self->lock);

  return value;
}

guint
symfonic_test_raw_upstream_get_connections (SymfonicTestRawUpstream *self)
{
  return get_locked (self, &self->connections);
}

guint
symfonic_test_raw_upstream_get_requests (SymfonicTestRawUpstream *self)
{
  return get_locked (self, &self->requests);
}

guint
symfonic_test_raw_upstream_get_blocked_writes (SymfonicTestRawUpstream *self)
{
  return get_locked (self, &self->blocked_writes);
}

/* Waits (bounded) until an answer was written to its end. */
gboolean
symfonic_test_raw_upstream_wait_written (SymfonicTestRawUpstream *self)
{
  gint64 deadline = g_get_monotonic_time () + SYMFONIC_TEST_WAIT_MS * G_TIME_SPAN_MILLISECOND;
  gboolean written;

  g_mutex_lock (&self->lock);
  while (self->answers_written == 0 && g_cond_wait_until (&self->cond, &self->lock, deadline))
    ;
  written = self->answers_written > 0;
  g_mutex_unlock (&self->lock);

  return written;
}
