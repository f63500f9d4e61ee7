/* symfonic-server.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <sys/socket.h>
#include <glib/gi18n-lib.h>

#include "symfonic-error.h"
#include "symfonic-memory-run-store.h"
#include "symfonic-metrics-private.h"
#include "symfonic-server.h"
#include "symfonic-worker-private.h"

/**
 * SymfonicServer:
 *
 * Serves a #SymfonicPipeline over HTTP.
 *
 * The server runs #SymfonicServer:workers threads, each with its own main
 * context and SoupServer accepting from one listening socket they share,
 * so no request ever crosses threads and no other process can join the
 * port. Starting and stopping happen on the caller's thread.
 */
struct _SymfonicServer
{
  GObject           parent_instance;

  SymfonicPipeline *pipeline;
  char             *listen;
  guint             workers;
  guint16           port;
  gboolean          allow_demo_credentials;
  GInetAddress     *address;
  SymfonicMetrics  *metrics;
  GPtrArray        *running;
  /* the server's, not the pipeline's: resumable runs outlive a reload */
  SymfonicRunStore *run_store;
};

G_DEFINE_FINAL_TYPE (SymfonicServer, symfonic_server, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_PIPELINE,
  PROP_LISTEN,
  PROP_WORKERS,
  PROP_ALLOW_DEMO_CREDENTIALS,
  PROP_RUN_STORE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
symfonic_server_finalize (GObject *object)
{
  SymfonicServer *self = (SymfonicServer *) object;

  symfonic_server_stop (self);
  g_ptr_array_unref (self->running);
  g_clear_object (&self->address);
  g_clear_object (&self->pipeline);
  g_clear_object (&self->run_store);
  g_free (self->listen);
  symfonic_metrics_free (self->metrics);

  G_OBJECT_CLASS (symfonic_server_parent_class)->finalize (object);
}

static void
symfonic_server_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  SymfonicServer *self = SYMFONIC_SERVER (object);

  switch (prop_id)
    {
    case PROP_PIPELINE:
      g_value_set_object (value, self->pipeline);
      break;
    case PROP_LISTEN:
      g_value_set_string (value, self->listen);
      break;
    case PROP_WORKERS:
      g_value_set_uint (value, self->workers);
      break;
    case PROP_ALLOW_DEMO_CREDENTIALS:
      g_value_set_boolean (value, self->allow_demo_credentials);
      break;
    case PROP_RUN_STORE:
      g_value_set_object (value, self->run_store);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_server_set_property (GObject      *object,
                              guint         prop_id,
                              const GValue *value,
                              GParamSpec   *pspec)
{
  SymfonicServer *self = SYMFONIC_SERVER (object);

  switch (prop_id)
    {
    case PROP_PIPELINE:
      self->pipeline = g_value_dup_object (value);
      break;
    case PROP_LISTEN:
      symfonic_server_set_listen (self, g_value_get_string (value));
      break;
    case PROP_WORKERS:
      symfonic_server_set_workers (self, g_value_get_uint (value));
      break;
    case PROP_ALLOW_DEMO_CREDENTIALS:
      symfonic_server_set_allow_demo_credentials (self, g_value_get_boolean (value));
      break;
    case PROP_RUN_STORE:
      symfonic_server_set_run_store (self, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_server_class_init (SymfonicServerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = symfonic_server_finalize;
  object_class->get_property = symfonic_server_get_property;
  object_class->set_property = symfonic_server_set_property;

  properties[PROP_PIPELINE] =
    g_param_spec_object ("pipeline", "Pipeline", "The pipeline to serve",
                         SYMFONIC_TYPE_PIPELINE,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_LISTEN] =
    g_param_spec_string ("listen", "Listen", "HOST:PORT to serve on; NULL uses the pipeline's",
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_WORKERS] =
    g_param_spec_uint ("workers", "Workers", "Worker threads; 0 uses the pipeline's",
                       0, 256, 0,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  properties[PROP_ALLOW_DEMO_CREDENTIALS] =
    g_param_spec_boolean ("allow-demo-credentials", "Allow demo credentials",
                          "Serve a pipeline that accepts the published demo tokens on a non-loopback address",
                          FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicServer:run-store:
   *
   * Where routes with #SymfonicRoute:resume keep their runs' frames. The
   * server holds it for its whole life, across pipeline reloads; by
   * default an in-process #SymfonicMemoryRunStore. Takes effect at the
   * next start.
   */
  properties[PROP_RUN_STORE] =
    g_param_spec_object ("run-store", "Run store", "Where resumable runs keep their recent frames",
                         SYMFONIC_TYPE_RUN_STORE,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
symfonic_server_init (SymfonicServer *self)
{
  self->metrics = symfonic_metrics_new ();
  self->running = g_ptr_array_new ();
  self->run_store = SYMFONIC_RUN_STORE (symfonic_memory_run_store_new ());
}

/**
 * symfonic_server_get_run_store:
 * @self: a #SymfonicServer
 *
 * Returns: (transfer none): where resumable runs keep their frames
 */
SymfonicRunStore *
symfonic_server_get_run_store (SymfonicServer *self)
{
  g_return_val_if_fail (SYMFONIC_IS_SERVER (self), NULL);

  return self->run_store;
}

/**
 * symfonic_server_set_run_store:
 * @self: a #SymfonicServer
 * @store: the store, such as one shared between instances
 *
 * Replaces the in-process store of resumable runs. Takes effect at the
 * next start.
 */
void
symfonic_server_set_run_store (SymfonicServer   *self,
                               SymfonicRunStore *store)
{
  g_return_if_fail (SYMFONIC_IS_SERVER (self));
  g_return_if_fail (SYMFONIC_IS_RUN_STORE (store));

  if (g_set_object (&self->run_store, store))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RUN_STORE]);
}

/**
 * symfonic_server_new:
 * @pipeline: the pipeline to serve
 *
 * Returns: (transfer full): a new, stopped #SymfonicServer
 */
SymfonicServer *
symfonic_server_new (SymfonicPipeline *pipeline)
{
  g_return_val_if_fail (SYMFONIC_IS_PIPELINE (pipeline), NULL);

  return g_object_new (SYMFONIC_TYPE_SERVER, "pipeline", pipeline, NULL);
}

/**
 * symfonic_server_get_pipeline:
 * @self: a #SymfonicServer
 *
 * Returns: (transfer none): the pipeline
 */
SymfonicPipeline *
symfonic_server_get_pipeline (SymfonicServer *self)
{
  g_return_val_if_fail (SYMFONIC_IS_SERVER (self), NULL);

  return self->pipeline;
}

/**
 * symfonic_server_set_listen:
 * @self: a #SymfonicServer
 * @listen: (nullable): `HOST:PORT`; port 0 picks a free port
 *
 * Overrides the pipeline's listen address. Takes effect at the next start.
 */
void
symfonic_server_set_listen (SymfonicServer *self,
                            const char     *listen)
{
  g_return_if_fail (SYMFONIC_IS_SERVER (self));

  if (g_strcmp0 (self->listen, listen) == 0)
    return;

  g_free (self->listen);
  self->listen = g_strdup (listen);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LISTEN]);
}

/**
 * symfonic_server_set_workers:
 * @self: a #SymfonicServer
 * @workers: worker threads, 0 to use the pipeline's setting
 *
 * Overrides the pipeline's worker count. Takes effect at the next start.
 */
void
symfonic_server_set_workers (SymfonicServer *self,
                             guint           workers)
{
  g_return_if_fail (SYMFONIC_IS_SERVER (self));

  if (self->workers == workers)
    return;

  self->workers = workers;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_WORKERS]);
}

/**
 * symfonic_server_set_allow_demo_credentials:
 * @self: a #SymfonicServer
 * @allow: whether to allow it
 *
 * The published demo tokens let anyone in, so by default the server only
 * serves a pipeline that accepts them on a loopback address. Takes effect
 * at the next start.
 */
void
symfonic_server_set_allow_demo_credentials (SymfonicServer *self,
                                            gboolean        allow)
{
  g_return_if_fail (SYMFONIC_IS_SERVER (self));

  allow = !!allow;
  if (self->allow_demo_credentials == allow)
    return;

  self->allow_demo_credentials = allow;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ALLOW_DEMO_CREDENTIALS]);
}

static gboolean
parse_listen (const char    *listen,
              GInetAddress **address,
              guint16       *port,
              GError       **error)
{
  g_autofree char *host = NULL;
  g_autoptr(GResolver) resolver = NULL;
  g_autolist(GInetAddress) addresses = NULL;
  const char *colon = strrchr (listen, ':');
  guint64 number;

  if (colon == NULL || colon == listen ||
      !g_ascii_string_to_unsigned (colon + 1, 10, 0, 65535, &number, NULL))
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("Listen address “%s” is not HOST:PORT"), listen);
      return FALSE;
    }

  host = g_strndup (listen, colon - listen);
  if (host[0] == '[' && host[strlen (host) - 1] == ']')
    {
      char *inner = g_strndup (host + 1, strlen (host) - 2);

      g_free (host);
      host = inner;
    }
  *port = number;

  if (g_str_equal (host, "*"))
    {
      *address = g_inet_address_new_any (G_SOCKET_FAMILY_IPV4);
      return TRUE;
    }

  *address = g_inet_address_new_from_string (host);
  if (*address != NULL)
    return TRUE;

  resolver = g_resolver_get_default ();
  addresses = g_resolver_lookup_by_name (resolver, host, NULL, error);
  if (addresses == NULL)
    return FALSE;

  *address = g_object_ref (addresses->data);
  return TRUE;
}

/* One socket for all workers, without SO_REUSEPORT: with it, any process
 * of the same user could bind the port too and take part of the traffic.
 * The address is bound on the raw descriptor to tell "in use" apart. */
static GSocket *
open_socket (GInetAddress  *address,
             guint16        port,
             GError       **error)
{
  g_autoptr(GSocketAddress) socket_address = g_inet_socket_address_new (address, port);
  g_autoptr(GSocket) socket = NULL;
  struct sockaddr_storage native;
  gsize native_len = g_socket_address_get_native_size (socket_address);
  int one = 1;
  int fd;

  socket = g_socket_new (g_inet_address_get_family (address), G_SOCKET_TYPE_STREAM,
                         G_SOCKET_PROTOCOL_TCP, error);
  if (socket == NULL)
    return NULL;

  /* only lets a restarted gateway bind over its old TIME_WAIT connections */
  fd = g_socket_get_fd (socket);
  if (setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0)
    {
      int saved = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   _("Cannot set up the listening socket: %s"), g_strerror (saved));
      return NULL;
    }

  if (!g_socket_address_to_native (socket_address, &native, native_len, error))
    return NULL;

  if (bind (fd, (struct sockaddr *) &native, native_len) != 0)
    {
      int saved = errno;
      g_autofree char *where = g_inet_address_to_string (address);

      if (saved == EADDRINUSE)
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_ADDRESS_IN_USE,
                     _("Cannot listen on %s port %u: address in use"), where, port);
      else
        g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                     _("Cannot listen on %s port %u: %s"), where, port, g_strerror (saved));
      return NULL;
    }

  /* a burst of clients waits in the backlog rather than being reset; the
   * kernel clamps this to net.core.somaxconn, the operator's setting */
  g_socket_set_listen_backlog (socket, SOMAXCONN);
  if (!g_socket_listen (socket, error))
    return NULL;

  return g_steal_pointer (&socket);
}

/**
 * symfonic_server_check:
 * @self: a #SymfonicServer
 * @error: return location for a #GError
 *
 * Checks what symfonic_server_start() would refuse before binding anything:
 * the listen address, and demo credentials on a non-loopback address.
 *
 * Returns: %TRUE if the server may start
 */
gboolean
symfonic_server_check (SymfonicServer  *self,
                       GError         **error)
{
  const char *listen;

  g_return_val_if_fail (SYMFONIC_IS_SERVER (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  listen = self->listen != NULL ? self->listen : symfonic_pipeline_get_listen (self->pipeline);
  g_clear_object (&self->address);
  if (!parse_listen (listen, &self->address, &self->port, error))
    return FALSE;

  if (!self->allow_demo_credentials && !g_inet_address_get_is_loopback (self->address) &&
      symfonic_pipeline_uses_demo_credentials (self->pipeline))
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("Refusing to serve the demo tokens on %s, which is not a loopback address: "
                     "configure real credentials, or allow it explicitly (--allow-demo-tokens)"),
                   listen);
      return FALSE;
    }

  return TRUE;
}

/**
 * symfonic_server_start:
 * @self: a #SymfonicServer
 * @error: return location for a #GError
 *
 * Binds the listening socket and starts the worker threads. Returns when
 * every worker is accepting.
 *
 * Returns: %TRUE on success
 */
gboolean
symfonic_server_start (SymfonicServer  *self,
                       GError         **error)
{
  g_autoptr(GSocket) socket = NULL;
  guint workers;

  g_return_val_if_fail (SYMFONIC_IS_SERVER (self), FALSE);
  g_return_val_if_fail (self->running->len == 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!symfonic_server_check (self, error))
    return FALSE;

  workers = self->workers > 0 ? self->workers : symfonic_pipeline_get_workers (self->pipeline);
  socket = open_socket (self->address, self->port, error);
  if (socket == NULL)
    return FALSE;

  /* port 0: the kernel picked one */
  if (self->port == 0)
    {
      g_autoptr(GSocketAddress) local = g_socket_get_local_address (socket, error);

      if (local == NULL)
        return FALSE;
      self->port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (local));
    }

  for (guint i = 0; i < workers; i++)
    {
      SymfonicWorker *worker = symfonic_worker_new (i, self->pipeline, self->metrics, self->run_store, socket, error);

      if (worker == NULL)
        {
          symfonic_server_stop (self);
          return FALSE;
        }
      g_ptr_array_add (self->running, worker);
    }

  return TRUE;
}

/**
 * symfonic_server_stop:
 * @self: a #SymfonicServer
 *
 * Closes the listening socket and every connection, cancels the streams
 * in flight and joins the workers. Does nothing on a stopped server.
 */
void
symfonic_server_stop (SymfonicServer *self)
{
  g_return_if_fail (SYMFONIC_IS_SERVER (self));

  for (guint i = 0; i < self->running->len; i++)
    symfonic_worker_stop (g_ptr_array_index (self->running, i));
  g_ptr_array_set_size (self->running, 0);
}

/**
 * symfonic_server_get_port:
 * @self: a #SymfonicServer
 *
 * Returns: the port served on, once started
 */
guint16
symfonic_server_get_port (SymfonicServer *self)
{
  g_return_val_if_fail (SYMFONIC_IS_SERVER (self), 0);

  return self->port;
}

/**
 * symfonic_server_dup_uri:
 * @self: a #SymfonicServer
 *
 * Returns: (transfer full) (nullable): `http://HOST:PORT/` of a started server
 */
char *
symfonic_server_dup_uri (SymfonicServer *self)
{
  g_autofree char *host = NULL;

  g_return_val_if_fail (SYMFONIC_IS_SERVER (self), NULL);

  if (self->running->len == 0)
    return NULL;

  host = g_inet_address_to_string (self->address);
  if (g_inet_address_get_family (self->address) == G_SOCKET_FAMILY_IPV6)
    return g_strdup_printf ("http://[%s]:%u/", host, self->port);

  return g_strdup_printf ("http://%s:%u/", host, self->port);
}
