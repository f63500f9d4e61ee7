/* symfonic-server.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <sys/socket.h>
#include <glib/gi18n-lib.h>

#include "symfonic-error.h"
#include "symfonic-log-private.h"
#include "symfonic-memory-run-store.h"
#include "symfonic-config-file.h"
#include "symfonic-memory-store.h"
#include "symfonic-metrics-private.h"
#include "symfonic-pipeline-private.h"
#include "symfonic-playground-private.h"
#include "symfonic-route-private.h"
#include "symfonic-server.h"
#include "symfonic-tracer-private.h"
#include "symfonic-worker-private.h"

/* How long streams ended by a drain get to take their error frame before
 * the drain is over anyway. */
#define DRAIN_GRACE_S 2

/**
 * SymfonicServer:
 *
 * Serves a #SymfonicPipeline over HTTP.
 *
 * The server runs #SymfonicServer:workers threads, each with its own main
 * context and SoupServer accepting from one listening socket they share,
 * so no request ever crosses threads and no other process can join the
 * port. Starting, reloading, draining and stopping happen on the caller's
 * thread.
 *
 * A reload hands each worker the new pipeline as a message, which it takes
 * between two requests: a request looks its route up in the pipeline
 * current when it arrived, and its stream holds that route (its stages and
 * source) to its end, so nothing is locked per request or per event.
 *
 * The server knows nothing of the process it runs in: a host that owns
 * its process may act on #SymfonicServer::burst-closed.
 */

/* How the workers tell the thread that started the server that a burst
 * closed. The workers hold it, not the server, which may be going away
 * while a worker tells: @server is cleared, under @lock, once the server
 * is disposed or stopped. */
typedef struct
{
  gatomicrefcount  ref_count;
  GMutex           lock;
  SymfonicServer  *server;
  GMainContext    *context;
  /* told and not emitted yet: bursts that end meanwhile are told once */
  gint             pending;
} Announcer;

struct _SymfonicServer
{
  GObject           parent_instance;

  SymfonicPipeline *pipeline;
  char             *listen;
  guint             workers;
  guint16           port;
  gboolean          allow_demo_credentials;
  GInetAddress     *address;
  /* a socket listening already (socket activation), or NULL */
  GSocket          *socket;
  SymfonicMetrics  *metrics;
  GPtrArray        *running;
  /* the drain in flight, or NULL */
  GTask            *drain;
  /* the server's, not the pipeline's: resumable runs outlive a reload */
  SymfonicRunStore *run_store;
  /* the server's too: where routes without a cap-store count their
   * streams, so that the counts outlive a reload */
  SymfonicMemoryStore *cap_store;
  /* while started */
  Announcer        *announcer;
  /* while started, as the pipeline's [gateway] asks: /metrics on an
   * address of its own, and the spans' exporter */
  SymfonicMetricsListener *metrics_listener;
  SymfonicTracer   *tracer;
};

/**
 * SymfonicServerClass:
 * @parent_class: the parent class
 *
 * The class of #SymfonicServer, a final type: there is nothing to override.
 */
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

enum {
  BURST_CLOSED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static Announcer *
announcer_new (SymfonicServer *server)
{
  Announcer *self = g_new0 (Announcer, 1);

  g_atomic_ref_count_init (&self->ref_count);
  g_mutex_init (&self->lock);
  self->server = server;
  self->context = g_main_context_ref_thread_default ();

  return self;
}

static Announcer *
announcer_ref (Announcer *self)
{
  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

static void
announcer_unref (gpointer data)
{
  Announcer *self = data;

  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;

  g_mutex_clear (&self->lock);
  g_main_context_unref (self->context);
  g_free (self);
}

static void
announcer_detach (Announcer *self)
{
  g_mutex_lock (&self->lock);
  self->server = NULL;
  g_mutex_unlock (&self->lock);
}

/* on the thread that started the server */
static gboolean
announce_burst_closed (gpointer data)
{
  Announcer *self = data;
  g_autoptr(SymfonicServer) server = NULL;

  g_atomic_int_set (&self->pending, FALSE);
  g_mutex_lock (&self->lock);
  if (self->server != NULL)
    server = g_object_ref (self->server);
  g_mutex_unlock (&self->lock);

  if (server != NULL)
    g_signal_emit (server, signals[BURST_CLOSED], 0);

  return G_SOURCE_REMOVE;
}

/* on a worker's thread */
static void
worker_released (gpointer data)
{
  Announcer *self = data;

  if (!g_atomic_int_compare_and_exchange (&self->pending, FALSE, TRUE))
    return;

  g_main_context_invoke_full (self->context, G_PRIORITY_DEFAULT, announce_burst_closed,
                              announcer_ref (self), announcer_unref);
}

static void
symfonic_server_dispose (GObject *object)
{
  SymfonicServer *self = (SymfonicServer *) object;

  /* a worker may still tell until it is joined: nobody hears it now */
  if (self->announcer != NULL)
    announcer_detach (self->announcer);

  G_OBJECT_CLASS (symfonic_server_parent_class)->dispose (object);
}

static void
symfonic_server_finalize (GObject *object)
{
  SymfonicServer *self = (SymfonicServer *) object;

  symfonic_server_stop (self);
  g_ptr_array_unref (self->running);
  g_clear_object (&self->address);
  g_clear_object (&self->socket);
  g_clear_object (&self->pipeline);
  g_clear_object (&self->run_store);
  g_clear_object (&self->cap_store);
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

  object_class->dispose = symfonic_server_dispose;
  object_class->finalize = symfonic_server_finalize;
  object_class->get_property = symfonic_server_get_property;
  object_class->set_property = symfonic_server_set_property;

  /**
   * SymfonicServer:pipeline:
   *
   * The pipeline the server serves; symfonic_server_reload() replaces it.
   */
  properties[PROP_PIPELINE] =
    g_param_spec_object ("pipeline", "Pipeline", "The pipeline to serve",
                         SYMFONIC_TYPE_PIPELINE,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicServer:listen:
   *
   * The `HOST:PORT` to serve on instead of the pipeline's
   * #SymfonicPipeline:listen; %NULL uses the pipeline's.
   */
  properties[PROP_LISTEN] =
    g_param_spec_string ("listen", "Listen", "HOST:PORT to serve on; NULL uses the pipeline's",
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicServer:workers:
   *
   * How many worker threads serve instead of the pipeline's
   * #SymfonicPipeline:workers; 0 uses the pipeline's.
   */
  properties[PROP_WORKERS] =
    g_param_spec_uint ("workers", "Workers", "Worker threads; 0 uses the pipeline's",
                       0, 256, 0,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * SymfonicServer:allow-demo-credentials:
   *
   * Whether the server may serve a pipeline that accepts the published
   * demo tokens (symfonic_pipeline_uses_demo_credentials()) on an
   * address other than loopback. Off, symfonic_server_start() refuses.
   */
  properties[PROP_ALLOW_DEMO_CREDENTIALS] =
    g_param_spec_boolean ("allow-demo-credentials", "Allow demo credentials",
                          "Serve a pipeline that accepts the published demo tokens on a non-loopback address, "
                          "or from the system's configuration",
                          FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicServer:run-store:
   *
   * Where routes with #SymfonicRoute:resume keep their runs' frames. The
   * server holds it for its whole life, across pipeline reloads; by
   * default an in-process #SymfonicMemoryRunStore. A pipeline whose
   * `[gateway]` names a `run-store` uses that one instead (a store kept
   * across reloads while its `[store:NAME]` group says the same). Takes
   * effect at the next start.
   */
  properties[PROP_RUN_STORE] =
    g_param_spec_object ("run-store", "Run store", "Where resumable runs keep their recent frames",
                         SYMFONIC_TYPE_RUN_STORE,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * SymfonicServer::burst-closed:
   * @self: the server
   *
   * A burst of connections is over: a second ago, a worker's open
   * connections fell to half the most it held since it last said so (by
   * at least 256 of them), or to none (then at most every two seconds);
   * the second lets their streams let go of their upstreams too. What
   * those connections held is free, but the process's allocator keeps it
   * for reuse, so the process stays at its peak size. A host that owns
   * its process may hand that memory back to the system here, as
   * `symfonic-gateway` does with `malloc_trim (0)`; the library never
   * does, since its host may be a Python or JavaScript program whose heap
   * is not the library's to trim.
   *
   * Emitted on the thread-default main context of the thread that called
   * symfonic_server_start(), never on a worker's thread; bursts that end
   * on several workers before it runs are told once.
   */
  signals[BURST_CLOSED] =
    g_signal_new ("burst-closed",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 0);
}

static void
symfonic_server_init (SymfonicServer *self)
{
  self->metrics = symfonic_metrics_new ();
  self->running = g_ptr_array_new ();
  self->run_store = SYMFONIC_RUN_STORE (symfonic_memory_run_store_new ());
  self->cap_store = symfonic_memory_store_new (0);
}

/**
 * symfonic_server_get_run_store:
 * @self: a #SymfonicServer
 *
 * Gets the store resumable runs keep their frames in when the pipeline
 * names none.
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
 * Creates a server for @pipeline. Nothing is bound until
 * symfonic_server_start().
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
 * Gets the pipeline the server serves now: after a
 * symfonic_server_reload(), the new one.
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
 * serves a pipeline that accepts them on a loopback address, and never one
 * whose file is in the system's configuration (the build's configuration
 * folder, or `/etc`), which is what a service serves. Takes effect at the
 * next start.
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

/**
 * symfonic_server_set_listen_socket:
 * @self: a #SymfonicServer
 * @socket: (nullable): a bound TCP socket that listens already
 *
 * Serves on @socket, handed over by whoever started the gateway (systemd's
 * socket activation), instead of binding the listen address. Takes effect
 * at the next start.
 */
void
symfonic_server_set_listen_socket (SymfonicServer *self,
                                   GSocket        *socket)
{
  g_return_if_fail (SYMFONIC_IS_SERVER (self));
  g_return_if_fail (socket == NULL || G_IS_SOCKET (socket));

  g_set_object (&self->socket, socket);
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

/* Before @pipeline serves: its capped routes without a cap-store count
 * their streams in the server's store, where those of the pipeline it
 * replaces still count, under the same route names. */
static void
share_cap_store (SymfonicServer   *self,
                 SymfonicPipeline *pipeline)
{
  for (guint i = 0; i < symfonic_pipeline_get_n_routes (pipeline); i++)
    symfonic_route_share_cap_store (symfonic_pipeline_get_route (pipeline, i),
                                    SYMFONIC_STREAM_CAP_STORE (self->cap_store));
}

/* Whether @file is part of the system's configuration: a pipeline there is
 * what a service serves (the shipped units read one from there), not a
 * demonstration. */
static gboolean
is_system_configuration (GFile *file)
{
  static const char * const folders[] = { SYMFONIC_SYSCONF_DIR, "/etc" };

  for (guint i = 0; file != NULL && i < G_N_ELEMENTS (folders); i++)
    {
      g_autoptr(GFile) folder = g_file_new_for_path (folders[i]);

      if (g_file_has_prefix (file, folder))
        return TRUE;
    }

  return FALSE;
}

static gboolean
check_demo_credentials (SymfonicServer    *self,
                        SymfonicPipeline  *pipeline,
                        GError           **error)
{
  GFile *file = symfonic_pipeline_get_file (pipeline);
  const char *stage;

  if (self->allow_demo_credentials)
    return TRUE;

  /* The demo tokens are in the README: an installed service that still
   * authenticates with them lets anyone in, on whatever address. */
  stage = is_system_configuration (file) ? symfonic_pipeline_find_demo_credentials (pipeline) : NULL;
  if (stage != NULL)
    {
      g_autofree char *display = g_file_get_parse_name (file);

      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("Refusing to serve the demo tokens, which anyone can use: [stage:%s] authenticates with "
                     "them, and %s is in the system’s configuration, which serves real credentials only; point "
                     "the stage’s tokens-file at a tokens file of your own "
                     "(such as ${CREDENTIALS_DIRECTORY}/symfonic.tokens), or allow it explicitly (--allow-demo-tokens)"),
                   stage, display);
      return FALSE;
    }

  if (!g_inet_address_get_is_loopback (self->address) && symfonic_pipeline_uses_demo_credentials (pipeline))
    {
      g_autofree char *where = g_inet_address_to_string (self->address);

      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("Refusing to serve the demo tokens on %s, which is not a loopback address: "
                     "configure real credentials, or allow it explicitly (--allow-demo-tokens)"),
                   where);
      return FALSE;
    }

  return TRUE;
}

/* The bearer token of /metrics: the first line of the file the pipeline
 * names, which must hold one. */
static gboolean
read_metrics_token (SymfonicPipeline  *pipeline,
                    char             **token,
                    GError           **error)
{
  g_autoptr(GFile) file = NULL;
  g_autofree char *contents = NULL;
  gsize length;
  char *line;

  *token = NULL;
  g_object_get (pipeline, "metrics-token-file", &file, NULL);
  if (file == NULL)
    return TRUE;
  if (!symfonic_config_file_load (file, 4096, &contents, &length, error))
    return FALSE;
  line = g_strstrip (g_strndup (contents, strcspn (contents, "\r\n")));
  if (*line == '\0' || strlen (line) != strspn (line, "!#$%&'*+-.^_`|~0123456789"
                                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ/="))
    {
      g_autofree char *display = g_file_get_parse_name (file);

      g_free (line);
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("%s: the metrics token file's first line must be one token"), display);
      return FALSE;
    }
  *token = line;

  return TRUE;
}

/* What [gateway] says of the metrics and traces, checked before anything
 * is bound: the metrics address, the token, the OTLP endpoint. */
static gboolean
check_telemetry (SymfonicPipeline  *pipeline,
                 GError           **error)
{
  g_autofree char *metrics_listen = NULL;
  g_autofree char *endpoint = NULL;
  g_autofree char *token = NULL;
  g_autoptr(GInetAddress) address = NULL;
  guint16 port;

  g_object_get (pipeline, "metrics-listen", &metrics_listen, "otlp-endpoint", &endpoint, NULL);
  if (metrics_listen != NULL && !parse_listen (metrics_listen, &address, &port, error))
    return FALSE;
  if (!read_metrics_token (pipeline, &token, error))
    return FALSE;
  if (endpoint != NULL)
    {
      g_autoptr(GUri) uri = g_uri_parse (endpoint, SOUP_HTTP_URI_FLAGS, NULL);

      if (uri == NULL || g_uri_get_host (uri) == NULL || *g_uri_get_host (uri) == '\0' ||
          (g_strcmp0 (g_uri_get_scheme (uri), "http") != 0 && g_strcmp0 (g_uri_get_scheme (uri), "https") != 0))
        {
          g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                       _("otlp-endpoint “%s” is not an http or https URL"), endpoint);
          return FALSE;
        }
    }

  return TRUE;
}

/* A pipeline that serves the playground needs its page's files: a broken
 * install refuses to start, or to reload, rather than answer 404. */
static gboolean
check_playground (SymfonicPipeline  *pipeline,
                  GError           **error)
{
  gboolean playground = FALSE;

  g_object_get (pipeline, "playground", &playground, NULL);
  return !playground || symfonic_playground_load (error);
}

/* Starts what [gateway] asks for besides the workers. */
static gboolean
start_telemetry (SymfonicServer  *self,
                 GError         **error)
{
  g_autofree char *metrics_listen = NULL;
  g_autofree char *endpoint = NULL;
  g_autofree char *service_name = NULL;
  g_autofree char *token = NULL;
  gboolean tenant_label;
  guint tenants;
  double ratio;

  g_object_get (self->pipeline,
                "metrics-listen", &metrics_listen,
                "metrics-tenant-label", &tenant_label,
                "metrics-tenants", &tenants,
                "otlp-endpoint", &endpoint,
                "trace-sample-ratio", &ratio,
                "service-name", &service_name,
                NULL);
  if (!read_metrics_token (self->pipeline, &token, error))
    return FALSE;
  symfonic_metrics_set_tenants (self->metrics, tenant_label, tenants);
  symfonic_metrics_set_access (self->metrics, token, metrics_listen != NULL);
  symfonic_metrics_set_pipeline (self->metrics, self->pipeline);

  if (metrics_listen != NULL)
    {
      g_autoptr(GInetAddress) address = NULL;
      g_autoptr(GSocket) socket = NULL;
      guint16 port;

      if (!parse_listen (metrics_listen, &address, &port, error))
        return FALSE;
      socket = open_socket (address, port, error);
      if (socket == NULL)
        return FALSE;
      self->metrics_listener = symfonic_metrics_listener_new (self->metrics, socket, error);
      if (self->metrics_listener == NULL)
        return FALSE;
    }

  if (endpoint != NULL)
    {
      self->tracer = symfonic_tracer_new (endpoint, service_name, ratio, self->metrics, error);
      if (self->tracer == NULL)
        return FALSE;
    }
  symfonic_metrics_set_tracer (self->metrics, self->tracer);

  return TRUE;
}

static void
stop_telemetry (SymfonicServer *self)
{
  g_clear_pointer (&self->metrics_listener, symfonic_metrics_listener_free);
  symfonic_metrics_set_tracer (self->metrics, NULL);
  g_clear_pointer (&self->tracer, symfonic_tracer_free);
}

/**
 * symfonic_server_check:
 * @self: a #SymfonicServer
 * @error: return location for a #GError
 *
 * Checks what symfonic_server_start() would refuse before binding anything:
 * the listen address, the metrics and traces settings, the playground's
 * files when the pipeline serves it, and demo credentials on a
 * non-loopback address or in a pipeline file of the system's
 * configuration (unless #SymfonicServer:allow-demo-credentials).
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

  g_clear_object (&self->address);
  if (self->socket != NULL)
    {
      g_autoptr(GSocketAddress) local = g_socket_get_local_address (self->socket, error);

      if (local == NULL)
        return FALSE;
      if (!G_IS_INET_SOCKET_ADDRESS (local))
        {
          g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                               _("The listening socket handed over is not a TCP socket"));
          return FALSE;
        }
      self->address = g_object_ref (g_inet_socket_address_get_address (G_INET_SOCKET_ADDRESS (local)));
      self->port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (local));
    }
  else
    {
      listen = self->listen != NULL ? self->listen : symfonic_pipeline_get_listen (self->pipeline);
      if (!parse_listen (listen, &self->address, &self->port, error))
        return FALSE;
    }

  return check_telemetry (self->pipeline, error) && check_playground (self->pipeline, error) &&
         check_demo_credentials (self, self->pipeline, error);
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
  SymfonicRunStore *run_store;
  guint workers;

  g_return_val_if_fail (SYMFONIC_IS_SERVER (self), FALSE);
  g_return_val_if_fail (self->running->len == 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!symfonic_server_check (self, error))
    return FALSE;

  workers = self->workers > 0 ? self->workers : symfonic_pipeline_get_workers (self->pipeline);
  socket = self->socket != NULL ? g_object_ref (self->socket) : open_socket (self->address, self->port, error);
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

  /* the pipeline's, when its file names one: a store other instances share */
  run_store = symfonic_pipeline_get_run_store (self->pipeline);
  if (run_store == NULL)
    run_store = self->run_store;
  if (!start_telemetry (self, error))
    {
      stop_telemetry (self);
      return FALSE;
    }
  share_cap_store (self, self->pipeline);
  self->announcer = announcer_new (self);
  for (guint i = 0; i < workers; i++)
    {
      SymfonicWorker *worker = symfonic_worker_new (i, self->pipeline, self->metrics, run_store, socket,
                                                    worker_released, self->announcer, error);

      if (worker == NULL)
        {
          symfonic_server_stop (self);
          return FALSE;
        }
      g_ptr_array_add (self->running, worker);
    }

  return TRUE;
}

/* [gateway] settings the running workers and sockets were made with: a
 * reload cannot apply them. */
static const char * const restart_settings[] = {
  "listen", "workers", "header-timeout", "body-timeout", "keepalive-timeout", "max-connections", "run-store",
  "metrics-listen", "metrics-token-file", "metrics-tenant-label", "metrics-tenants", "otlp-endpoint",
  "trace-sample-ratio", "service-name",
};

static void
warn_restart_settings (SymfonicServer   *self,
                       SymfonicPipeline *pipeline)
{
  g_autofree char *display = g_file_get_parse_name (symfonic_pipeline_get_file (pipeline));

  for (guint i = 0; i < G_N_ELEMENTS (restart_settings); i++)
    {
      GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (pipeline), restart_settings[i]);
      g_auto(GValue) old_value = G_VALUE_INIT;
      g_auto(GValue) new_value = G_VALUE_INIT;

      g_value_init (&old_value, pspec->value_type);
      g_value_init (&new_value, pspec->value_type);
      g_object_get_property (G_OBJECT (self->pipeline), pspec->name, &old_value);
      g_object_get_property (G_OBJECT (pipeline), pspec->name, &new_value);
      /* a file is the same file when both name it */
      if (pspec->value_type == G_TYPE_FILE && g_value_get_object (&old_value) != NULL &&
          g_value_get_object (&new_value) != NULL &&
          g_file_equal (g_value_get_object (&old_value), g_value_get_object (&new_value)))
        continue;
      if (g_param_values_cmp (pspec, &old_value, &new_value) != 0)
        g_warning ("%s: [gateway] %s changed; it takes effect only when the gateway is restarted",
                   display, pspec->name);
    }
}

/**
 * symfonic_server_reload:
 * @self: a #SymfonicServer
 * @registry: where the pipeline's `type=` names are resolved
 * @error: return location for a #GError
 *
 * Loads the server's pipeline file again (see symfonic_pipeline_reload())
 * and serves it from each worker's next request on. Streams in flight end
 * on the pipeline they started with. A file that fails to load changes
 * nothing: the error names its file, line and key. The streams its
 * routes' caps count stay counted: a route without a cap-store counts in
 * the server's store, by its name, across reloads. Settings of `[gateway]`
 * that the workers and the listening socket were made with (listen,
 * workers, timeouts, max-connections) take effect only at the next start;
 * a warning says so when they changed.
 *
 * Returns: %TRUE if the new pipeline is served
 */
gboolean
symfonic_server_reload (SymfonicServer    *self,
                        SymfonicRegistry  *registry,
                        GError           **error)
{
  g_autoptr(SymfonicPipeline) pipeline = NULL;

  g_return_val_if_fail (SYMFONIC_IS_SERVER (self), FALSE);
  g_return_val_if_fail (SYMFONIC_IS_REGISTRY (registry), FALSE);
  g_return_val_if_fail (symfonic_pipeline_get_file (self->pipeline) != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  pipeline = symfonic_pipeline_reload (self->pipeline, registry, error);
  if (pipeline == NULL || !check_playground (pipeline, error))
    return FALSE;

  if (self->running->len > 0)
    {
      if (!check_demo_credentials (self, pipeline, error))
        return FALSE;
      warn_restart_settings (self, pipeline);
    }

  share_cap_store (self, pipeline);
  for (guint i = 0; i < self->running->len; i++)
    symfonic_worker_set_pipeline (g_ptr_array_index (self->running, i), pipeline);
  g_set_object (&self->pipeline, pipeline);
  if (self->running->len > 0)
    symfonic_metrics_set_pipeline (self->metrics, pipeline);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PIPELINE]);

  return TRUE;
}

/* What a drain waits for; everything in it runs on the thread that
 * started the drain, but the workers' "drained" calls, which hop there. */
typedef struct
{
  SymfonicServer *server;
  guint           busy;
  gboolean        ending;
  GSource        *timer;
  GCancellable   *cancellable;
  gulong          cancelled_id;
} Drain;

static void
drain_free (gpointer data)
{
  Drain *drain = data;

  g_clear_object (&drain->cancellable);
  g_free (drain);
}

static void
drain_set_timer (Drain       *drain,
                 guint        seconds,
                 GSourceFunc  callback,
                 GTask       *task)
{
  if (drain->timer != NULL)
    {
      g_source_destroy (drain->timer);
      g_source_unref (drain->timer);
    }
  /* A GLib source, not a poller timer: a drain is one timer in the life
   * of a server, on the context of whoever started it (the host's, or
   * symfonic-gateway's stop thread), where no worker's poller runs, and
   * making one there would cost that context a descriptor and a source
   * for good. Not _seconds(): it may fire up to a second early. */
  drain->timer = g_timeout_source_new (seconds * 1000);
  g_source_set_callback (drain->timer, callback, task, NULL);
  g_source_set_static_name (drain->timer, "[symfonic] drain");
  g_source_attach (drain->timer, g_task_get_context (task));
}

static void
drain_complete (GTask *task)
{
  Drain *drain = g_task_get_task_data (task);
  SymfonicServer *self = drain->server;

  if (self->drain != task)
    return;

  if (drain->timer != NULL)
    {
      g_source_destroy (drain->timer);
      g_clear_pointer (&drain->timer, g_source_unref);
    }
  /* not g_cancellable_disconnect(): this may run in the handler itself */
  if (drain->cancelled_id != 0)
    g_signal_handler_disconnect (drain->cancellable, drain->cancelled_id);
  drain->cancelled_id = 0;
  self->drain = NULL;
  g_task_return_boolean (task, TRUE);
  g_object_unref (task);
}

static gboolean
drain_grace_over (gpointer data)
{
  drain_complete (data);
  return G_SOURCE_REMOVE;
}

/* Streams still running end with their error frame, which they get a
 * moment to deliver. */
static void
drain_end_streams (GTask *task)
{
  Drain *drain = g_task_get_task_data (task);

  if (drain->ending)
    return;

  drain->ending = TRUE;
  for (guint i = 0; i < drain->server->running->len; i++)
    symfonic_worker_end_streams (g_ptr_array_index (drain->server->running, i));
  drain_set_timer (drain, DRAIN_GRACE_S, drain_grace_over, task);
}

static gboolean
drain_time_over (gpointer data)
{
  drain_end_streams (data);
  return G_SOURCE_REMOVE;
}

static void
drain_cancelled (GCancellable *cancellable,
                 gpointer      data)
{
  drain_end_streams (data);
}

static gboolean
worker_drained_cb (gpointer data)
{
  GTask *task = data;
  Drain *drain = g_task_get_task_data (task);

  if (--drain->busy == 0)
    drain_complete (task);
  return G_SOURCE_REMOVE;
}

/* on a worker's thread */
static void
worker_drained (gpointer data)
{
  GTask *task = data;

  g_main_context_invoke_full (g_task_get_context (task), G_PRIORITY_DEFAULT, worker_drained_cb,
                              g_object_ref (task), g_object_unref);
}

/**
 * symfonic_server_drain_async:
 * @self: a started #SymfonicServer
 * @cancellable: (nullable): cancel (on the calling thread) to end the
 *   streams in flight at once
 * @callback: (scope async): called when the drain is over
 * @user_data: data for @callback
 *
 * Begins stopping: the listening socket is closed at once, so new clients
 * are refused, and connections close as soon as they are idle. Requests in
 * flight run on for the pipeline's #SymfonicPipeline:drain-seconds; streams
 * still running then end with their one error frame (`shutting_down`, 503).
 * Cancelling @cancellable ends them at once. The drain is over when no
 * request is left, or a short grace after the streams were ended; then
 * call symfonic_server_stop().
 */
void
symfonic_server_drain_async (SymfonicServer      *self,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  Drain *drain;
  guint seconds;

  g_return_if_fail (SYMFONIC_IS_SERVER (self));
  g_return_if_fail (self->drain == NULL);
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, symfonic_server_drain_async);
  /* cancelling hastens the drain; it still ends as a drain */
  g_task_set_check_cancellable (task, FALSE);

  if (self->running->len == 0)
    {
      g_task_return_boolean (task, TRUE);
      return;
    }

  drain = g_new0 (Drain, 1);
  drain->server = self;
  drain->busy = self->running->len;
  g_task_set_task_data (task, drain, drain_free);
  self->drain = g_object_ref (task);

  for (guint i = 0; i < self->running->len; i++)
    symfonic_worker_drain (g_ptr_array_index (self->running, i), worker_drained,
                           g_object_ref (task), g_object_unref);

  g_object_get (self->pipeline, "drain-seconds", &seconds, NULL);
  drain_set_timer (drain, seconds, drain_time_over, task);
  if (cancellable != NULL)
    {
      drain->cancellable = g_object_ref (cancellable);
      drain->cancelled_id = g_cancellable_connect (cancellable, G_CALLBACK (drain_cancelled), task, NULL);
    }
}

/**
 * symfonic_server_drain_finish:
 * @self: a #SymfonicServer
 * @result: the result given to the callback
 * @error: return location for a #GError
 *
 * Finishes a symfonic_server_drain_async().
 *
 * Returns: %TRUE once the drain is over
 */
gboolean
symfonic_server_drain_finish (SymfonicServer  *self,
                              GAsyncResult    *result,
                              GError         **error)
{
  g_return_val_if_fail (SYMFONIC_IS_SERVER (self), FALSE);
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
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

  /* a drain in flight is over: nothing is left to wait for */
  if (self->drain != NULL)
    drain_complete (self->drain);
  for (guint i = 0; i < self->running->len; i++)
    symfonic_worker_stop (g_ptr_array_index (self->running, i));
  g_ptr_array_set_size (self->running, 0);
  stop_telemetry (self);
  /* the workers that told it are joined */
  if (self->announcer != NULL)
    {
      announcer_detach (self->announcer);
      g_clear_pointer (&self->announcer, announcer_unref);
    }
  /* no line is lost at the end: how many of each kind were held back */
  symfonic_log_limit_flush ();
}

/**
 * symfonic_server_get_port:
 * @self: a #SymfonicServer
 *
 * Gets the port the server listens on, the one the kernel chose when asked
 * for port 0.
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
 * Gets the URI a started server answers on, with the port the kernel chose
 * for port 0.
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
