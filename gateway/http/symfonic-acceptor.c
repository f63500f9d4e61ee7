/* symfonic-acceptor.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <glib/gi18n-lib.h>

#include "symfonic-acceptor-private.h"
#include "symfonic-poller-private.h"

/* Every worker accepts from the one listening socket the server bound, on
 * its own descriptor of it, and hands each connection to its SoupServer
 * through a #SymfonicConnection. Accepting here rather than in libsoup is
 * what lets the gateway cap its connections, give each phase of a request
 * a deadline and see the raw request heads. Each connection keeps its own
 * deadline on the worker's poller (see symfonic-connection.c).
 *
 * The listener is one of the worker's poller's descriptors: its I/O is
 * dispatched before the work a stream deferred to the next iteration, so
 * a client that connected while a long upstream read was being turned
 * into frames is served before the rest of that read. */

/* At most this many connections are accepted per wake-up, so one busy
 * worker does not starve its own requests. */
#define ACCEPT_BATCH 32
/* How long accepting pauses when it fails (out of descriptors, most
 * likely): the listener stays readable, and retrying at once would spin. */
#define ACCEPT_RETRY_MS 100
/* A burst is over once the open connections fell to half their peak, by
 * at least this many; after a smaller drop to none, it is told at most
 * every RELEASE_INTERVAL_US. */
#define RELEASE_MIN_DROP 256
#define RELEASE_INTERVAL_US (2 * G_USEC_PER_SEC)
/* How long after a burst is found over it is told: the streams of the
 * connections that closed let go of their upstreams a moment later, and
 * what the burst held is free only then. */
#define RELEASE_SETTLE_US (G_USEC_PER_SEC)

struct _SymfonicAcceptor
{
  SoupServer                   *server;
  GSocket                      *listener;
  SymfonicPoller               *poller;
  SymfonicWatch                *watch;
  /* the pause before the listener is watched again */
  SymfonicTimer                *retry;
  /* accepting failed and said so: once per stall, not per retry */
  gboolean                      stalled;
  SymfonicConnectionTimeouts    timeouts;
  guint                         max_connections;
  /* open connections, unowned: each removes itself when it closes */
  GHashTable                   *connections;
  SymfonicAcceptorReleasedFunc  released;
  gpointer                      released_data;
  /* when the connections that closed are told, once per batch of closes */
  SymfonicTimer                *release;
  /* the most connections open at once since a burst was last told over */
  guint                         peak;
  gint64                        released_at;
  gulong                        finished_id;
  /* the silent end of the placeholder listener's socket pair */
  GSocket                      *placeholder_peer;
};

/* What a burst of connections held is freed once they closed, but an
 * allocator keeps it for reuse, and the process stays at its peak size.
 * Giving it back to the system is the host's business, not a library's
 * (a Python or gjs host owns its heap): the acceptor only tells when a
 * burst is over. That is when the open connections fell to half their
 * peak, rarely, so a burst that closes is told in a few steps whatever its
 * size; and when the last one closed, however few were open, but at most
 * once an interval, or connections that come and go one by one would be
 * told of each. */
static gboolean
burst_over (SymfonicAcceptor *self,
            gint64            now,
            gint64           *later)
{
  guint open = g_hash_table_size (self->connections);

  *later = -1;
  if (self->peak - open >= RELEASE_MIN_DROP && open <= self->peak / 2)
    return TRUE;
  if (open > 0 || self->peak == 0)
    return FALSE;
  if (now - self->released_at >= RELEASE_INTERVAL_US)
    return TRUE;

  *later = self->released_at + RELEASE_INTERVAL_US;
  return FALSE;
}

static void
arm_release (SymfonicAcceptor *self,
             gint64            when)
{
  gint64 due = symfonic_timer_get_deadline (self->release);

  /* never later than a burst already due */
  if (due < 0 || when < due)
    symfonic_timer_set_deadline (self->release, when);
}

static void
release_due (gpointer data)
{
  SymfonicAcceptor *self = data;
  gint64 now = g_get_monotonic_time ();
  gint64 later;

  /* connections may have opened since it was armed */
  if (!burst_over (self, now, &later))
    {
      if (later >= 0)
        arm_release (self, later);
      return;
    }

  self->released_at = now;
  self->peak = g_hash_table_size (self->connections);
  self->released (self->released_data);
}

static void
connection_closed (SymfonicConnection *connection,
                   gpointer            user_data)
{
  SymfonicAcceptor *self = user_data;
  gint64 now, later;

  g_hash_table_remove (self->connections, connection);

  /* the acceptor is going: nobody is told any more */
  if (self->release == NULL || self->released == NULL)
    return;

  /* told from the timer, once for all the closes of a burst that come
   * before it, and after what they held went too */
  now = g_get_monotonic_time ();
  if (burst_over (self, now, &later))
    arm_release (self, now + RELEASE_SETTLE_US);
  else if (later >= 0)
    arm_release (self, later + RELEASE_SETTLE_US);
}

static void
accept_one (SymfonicAcceptor *self,
            GSocket          *socket)
{
  g_autoptr(GSocketConnection) base = NULL;
  g_autoptr(SymfonicConnection) connection = NULL;
  g_autoptr(GSocketAddress) local = NULL;
  g_autoptr(GError) error = NULL;

  if (g_hash_table_size (self->connections) >= self->max_connections)
    {
      g_debug ("Refusing a connection: %u are open", g_hash_table_size (self->connections));
      g_socket_close (socket, NULL);
      return;
    }

  g_socket_set_option (socket, IPPROTO_TCP, TCP_NODELAY, TRUE, NULL);
  base = g_socket_connection_factory_create_connection (socket);
  local = g_socket_connection_get_local_address (base, &error);
  connection = symfonic_connection_new (base, &self->timeouts, connection_closed, self);
  if (local == NULL || symfonic_connection_get_remote_address (connection) == NULL)
    {
      g_debug ("Dropping a connection that is already gone: %s",
               error != NULL ? error->message : "no peer address");
      g_io_stream_close (G_IO_STREAM (connection), NULL, NULL);
      return;
    }

  g_hash_table_add (self->connections, connection);
  self->peak = MAX (self->peak, g_hash_table_size (self->connections));
  symfonic_connection_serve (connection, self->server, local);
}

static void
retry_accepting (gpointer data)
{
  SymfonicAcceptor *self = data;

  symfonic_watch_set_events (self->watch, G_IO_IN);
}

static void
on_listener_readable (gpointer     data,
                      GIOCondition condition)
{
  SymfonicAcceptor *self = data;

  for (guint i = 0; i < ACCEPT_BATCH; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GSocket) socket = g_socket_accept (self->listener, NULL, &error);

      if (socket != NULL)
        {
          self->stalled = FALSE;
          accept_one (self, socket);
          continue;
        }

      /* another worker took it, or the backlog is empty */
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
        break;

      if (!self->stalled)
        g_warning ("Cannot accept connections for now: %s", error->message);
      self->stalled = TRUE;
      symfonic_watch_set_events (self->watch, 0);
      symfonic_timer_set_deadline (self->retry, g_get_monotonic_time () + ACCEPT_RETRY_MS * 1000);
      return;
    }
}

static void
on_request_finished (SoupServer        *server,
                     SoupServerMessage *message,
                     gpointer           user_data)
{
  SymfonicConnection *connection = symfonic_connection_for_message (message);

  if (connection != NULL)
    symfonic_connection_response_done (connection);
}

/* libsoup keeps a connection open after a response only while its server
 * has a listener (its design, not a bug of one release: a server without
 * listeners is taken to be closing): it gets one end of a socket pair,
 * which connects nobody and never becomes readable while this end stays
 * open. */
static gboolean
add_placeholder_listener (SymfonicAcceptor  *self,
                          GError           **error)
{
  g_autoptr(GSocket) socket = NULL;
  int fds[2];

  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    {
      int saved = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   _("Cannot create a socket pair: %s"), g_strerror (saved));
      return FALSE;
    }

  socket = g_socket_new_from_fd (fds[0], error);
  if (socket == NULL)
    {
      close (fds[0]);
      close (fds[1]);
      return FALSE;
    }
  self->placeholder_peer = g_socket_new_from_fd (fds[1], error);
  if (self->placeholder_peer == NULL)
    {
      close (fds[1]);
      return FALSE;
    }

  return soup_server_listen_socket (self->server, socket, 0, error);
}

/* Accepts from @listener into @server on the thread-default main context
 * until freed. @released, if not %NULL, is called on that context each
 * time a burst of connections is over (see burst_over()). */
SymfonicAcceptor *
symfonic_acceptor_new (SoupServer                       *server,
                       GSocket                          *listener,
                       const SymfonicConnectionTimeouts *timeouts,
                       guint                             max_connections,
                       SymfonicAcceptorReleasedFunc      released,
                       gpointer                          released_data,
                       GError                          **error)
{
  g_autoptr(SymfonicAcceptor) self = g_new0 (SymfonicAcceptor, 1);
  int fd;

  self->server = g_object_ref (server);
  self->timeouts = *timeouts;
  self->max_connections = max_connections;
  self->connections = g_hash_table_new (NULL, NULL);
  self->released = released;
  self->released_data = released_data;

  /* a descriptor of its own: GSocket is not meant to be shared by threads */
  fd = dup (g_socket_get_fd (listener));
  if (fd < 0 || (self->listener = g_socket_new_from_fd (fd, error)) == NULL)
    {
      if (fd < 0)
        g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Cannot share the listening socket"));
      else
        close (fd);
      return NULL;
    }
  g_socket_set_blocking (self->listener, FALSE);

  if (!add_placeholder_listener (self, error))
    return NULL;

  self->poller = symfonic_poller_ref (symfonic_poller_get_thread_default ());
  self->watch = symfonic_poller_watch (self->poller, g_socket_get_fd (self->listener), G_IO_IN,
                                       on_listener_readable, self);
  self->retry = symfonic_poller_timer (self->poller, retry_accepting, self);
  self->release = symfonic_poller_timer (self->poller, release_due, self);

  self->finished_id = g_signal_connect (server, "request-finished", G_CALLBACK (on_request_finished), self);

  return g_steal_pointer (&self);
}

static void
stop_accepting (SymfonicAcceptor *self)
{
  g_clear_pointer (&self->watch, symfonic_watch_remove);
  g_clear_pointer (&self->retry, symfonic_timer_remove);
}

/* The gateway is stopping: the listener is closed at once, so that a load
 * balancer sees connections refused rather than waiting in a backlog
 * nobody reads, and connections close as soon as they are idle. */
void
symfonic_acceptor_drain (SymfonicAcceptor *self)
{
  g_autoptr(GList) open = NULL;

  stop_accepting (self);
  g_socket_close (self->listener, NULL);

  /* closing may remove a connection from the table */
  open = g_hash_table_get_keys (self->connections);
  for (GList *l = open; l != NULL; l = l->next)
    symfonic_connection_close_when_idle (l->data);
}

/* Stops accepting and closes the connections still open. */
void
symfonic_acceptor_free (SymfonicAcceptor *self)
{
  GList *open;

  stop_accepting (self);
  g_clear_pointer (&self->release, symfonic_timer_remove);
  g_clear_signal_handler (&self->finished_id, self->server);

  open = g_hash_table_get_keys (self->connections);
  for (GList *l = open; l != NULL; l = l->next)
    g_io_stream_close (l->data, NULL, NULL);
  g_list_free (open);

  g_hash_table_unref (self->connections);
  g_clear_object (&self->listener);
  g_clear_object (&self->placeholder_peer);
  g_clear_object (&self->server);
  g_clear_pointer (&self->poller, symfonic_poller_unref);
  g_free (self);
}
