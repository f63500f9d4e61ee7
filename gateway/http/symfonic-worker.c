/* symfonic-worker.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <sys/resource.h>
#include <libsoup/soup.h>

#include "symfonic-acceptor-private.h"
#include "symfonic-cors-private.h"
#include "symfonic-early-refusal-private.h"
#include "symfonic-error.h"
#include "symfonic-exchange-private.h"
#include "symfonic-model-listing-private.h"
#include "symfonic-playground-private.h"
#include "symfonic-poller-private.h"
#include "symfonic-route-private.h"
#include "symfonic-version.h"
#include "symfonic-worker-private.h"

/* How long a stopping worker lets the error frames of its running streams
 * reach their clients. */
#define SHUTDOWN_GRACE_MS 1000
/* How often a draining worker looks whether its exchanges are over: only
 * while it drains, so that the request path keeps no count for it. */
#define DRAIN_CHECK_MS 50
/* Descriptors a process needs besides its client connections: listening
 * sockets, each worker's wake-up and epoll descriptors, logs, plugin and
 * pipeline files. */
#define RESERVED_DESCRIPTORS 64
#define MAX_CONNECTIONS_LIMIT 1000000

/* A worker is a thread with its own main context and its own SoupServer,
 * accepting from the listening socket all workers share: a connection
 * never leaves the thread that accepted it, so nothing on the request path
 * is shared but the read-only pipeline and atomic counters. */
struct _SymfonicWorker
{
  guint                       index;
  SymfonicPipeline           *pipeline;
  SymfonicMetrics            *metrics;
  SymfonicRunStore           *run_store;
  GSocket                    *socket;
  GMainContext               *context;
  GMainLoop                  *loop;
  GThread                    *thread;
  SymfonicAcceptor           *acceptor;
  /* exchanges in flight on this worker */
  GHashTable                 *live;
  SymfonicWorkerReleasedFunc  released;
  gpointer                    released_data;

  /* draining: told once no exchange is left */
  SymfonicWorkerDrainedFunc   drained;
  gpointer                    drained_data;
  GDestroyNotify              drained_destroy;
  SymfonicTimer              *drain_check;

  /* start-up handshake with the thread */
  GMutex                      lock;
  GCond                       cond;
  gboolean                    ready;
  GError                     *error;
};

static void
respond_error (SoupServerMessage *message,
               SymfonicRoute     *route,
               SymfonicError      code,
               const char        *detail)
{
  g_autoptr(GError) error = g_error_new_literal (SYMFONIC_ERROR, code, detail);
  g_autoptr(SymfonicErrorFrame) frame = route != NULL ? symfonic_route_map_error (route, error)
                                                      : symfonic_error_frame_new_for_error (error);

  symfonic_exchange_respond_error (message, route, frame);
}

/* The provider route whose API root @path is under, for a path it does
 * not serve: its clients get its error shape. */
static SymfonicRoute *
find_provider_root (SymfonicWorker *self,
                    const char     *path)
{
  const char *rest;

  for (guint i = 0; i < symfonic_pipeline_get_n_routes (self->pipeline); i++)
    {
      SymfonicRoute *route = symfonic_pipeline_get_route (self->pipeline, i);

      if (symfonic_route_serves_under (route, path, &rest))
        return route;
    }

  return NULL;
}

/* The route serving @path: a route of its own path, a route of kind runs
 * serving `{path}/{run_id}/stream` under it, or a provider route serving
 * an item (`…/responses/{id}`, `…/models/{id}`) under one of its paths. */
static SymfonicRoute *
find_route (SymfonicWorker *self,
            const char     *path)
{
  SymfonicRoute *route = symfonic_pipeline_lookup_route (self->pipeline, path);
  g_autofree char *run = NULL;
  g_autofree char *parent = NULL;

  if (route != NULL)
    return route;

  if (g_str_has_suffix (path, "/stream"))
    {
      run = g_path_get_dirname (path);
      parent = g_path_get_dirname (run);
      route = symfonic_pipeline_lookup_route (self->pipeline, parent);
      if (route != NULL && symfonic_route_get_kind (route) == SYMFONIC_ROUTE_KIND_RUNS)
        return route;
    }

  route = find_provider_root (self, path);
  if (route != NULL && symfonic_route_get_endpoint (route, path) != SYMFONIC_ENDPOINT_INVOKE)
    return route;

  return NULL;
}

static const char *
method_of (SymfonicRoute *route,
           const char    *path)
{
  return symfonic_route_endpoint_method (route, symfonic_route_get_endpoint (route, path));
}

/* The endpoints whose requests an exchange takes from their head: the
 * route's stages admit them before any of the body is read. */
static gboolean
is_exchanged (SymfonicEndpoint endpoint)
{
  return endpoint == SYMFONIC_ENDPOINT_INVOKE || endpoint == SYMFONIC_ENDPOINT_RESPONSES ||
         endpoint == SYMFONIC_ENDPOINT_RESPONSE || endpoint == SYMFONIC_ENDPOINT_COUNT_TOKENS;
}

/* A request that is no invocation takes no body: one announcing more than
 * this is refused before libsoup reads any of it. */
#define NO_BODY_BYTES 1024

/* libsoup reads a whole body before the handler runs, however large and
 * from whoever sent it: a body a request cannot use is refused at once,
 * unread, on a connection then closed. */
static void
refuse_unused_body (SoupServerMessage *message)
{
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (message);
  g_autoptr(GError) error = NULL;
  g_autoptr(SymfonicErrorFrame) frame = NULL;

  switch (soup_message_headers_get_encoding (headers))
    {
    case SOUP_ENCODING_CHUNKED:
      break;
    case SOUP_ENCODING_CONTENT_LENGTH:
      if (soup_message_headers_get_content_length (headers) <= NO_BODY_BYTES)
        return;
      break;
    default:
      return;
    }

  error = g_error_new_literal (SYMFONIC_ERROR, SYMFONIC_ERROR_PAYLOAD_TOO_LARGE, "This request takes no body");
  frame = symfonic_error_frame_new_for_error (error);
  symfonic_early_refusal_send (message, frame, NULL);
}

/* Runs once the request headers are in, before any body byte is read: an
 * invocation request starts its exchange, which authenticates it before
 * libsoup reads the body. Anything else waits for handle_request(), unless
 * it came with a body. */
static void
handle_headers (SoupServer        *server,
                SoupServerMessage *message,
                const char        *path,
                GHashTable        *query,
                gpointer           user_data)
{
  SymfonicWorker *self = user_data;
  SymfonicRoute *route = find_route (self, path);
  SymfonicEndpoint endpoint = route != NULL ? symfonic_route_get_endpoint (route, path) : SYMFONIC_ENDPOINT_INVOKE;

  /* No handler reads a body from libsoup, which would otherwise keep all
   * of it, however large, for a request it then refuses. */
  soup_message_body_set_accumulate (soup_server_message_get_request_body (message), FALSE);
  if (route != NULL)
    symfonic_cors_apply (message, route);

  if (route == NULL || !is_exchanged (endpoint) ||
      strcmp (soup_server_message_get_method (message), symfonic_route_endpoint_method (route, endpoint)) != 0)
    {
      refuse_unused_body (message);
      return;
    }

  symfonic_exchange_open (message, route, endpoint, symfonic_pipeline_get_max_body_bytes (self->pipeline),
                          self->metrics, self->run_store, self->live);
}

static void
handle_request (SoupServer        *server,
                SoupServerMessage *message,
                const char        *path,
                GHashTable        *query,
                gpointer           user_data)
{
  SymfonicWorker *self = user_data;
  const char *method = soup_server_message_get_method (message);
  g_autofree char *detail = NULL;
  SymfonicEndpoint endpoint;
  SymfonicRoute *route;

  if (g_str_equal (path, "/healthz") || g_str_equal (path, "/metrics"))
    {
      if (method != SOUP_METHOD_GET && method != SOUP_METHOD_HEAD)
        {
          soup_message_headers_replace (soup_server_message_get_response_headers (message), "Allow", "GET, HEAD");
          respond_error (message, NULL, SYMFONIC_ERROR_METHOD_NOT_ALLOWED, "Use GET");
          return;
        }

      if (g_str_equal (path, "/healthz"))
        {
          symfonic_exchange_respond_json (message, SOUP_STATUS_OK, "{\"status\":\"ok\"}");
        }
      else
        {
          /* rendered off this thread: a scrape never holds the worker */
          symfonic_metrics_respond (self->metrics, self->pipeline, message);
        }
      return;
    }

  /* the route its head arrived for, whatever a reload since did */
  if (symfonic_exchange_is_open (message))
    {
      symfonic_exchange_run (message);
      return;
    }

  /* a static page, on a pipeline that serves it (no route may be there) */
  if (symfonic_playground_serves (self->pipeline, path))
    {
      symfonic_playground_respond (message, self->pipeline, path);
      return;
    }

  /* a request a route's exchange would have taken at its head arrived
   * before a reload added that route: it is not one */
  route = find_route (self, path);
  if (route == NULL ||
      (g_strcmp0 (method, method_of (route, path)) == 0 && is_exchanged (symfonic_route_get_endpoint (route, path))))
    {
      /* under a provider route's API root, in that provider's shape */
      respond_error (message, route != NULL ? route : find_provider_root (self, path), SYMFONIC_ERROR_NOT_FOUND,
                     "No route serves this path");
      return;
    }

  /* a page of another origin asks first, with its head alone */
  if (symfonic_cors_answer_preflight (message, route, method_of (route, path)))
    return;

  endpoint = symfonic_route_get_endpoint (route, path);
  if (endpoint == SYMFONIC_ENDPOINT_MODELS || endpoint == SYMFONIC_ENDPOINT_MODEL)
    {
      if (method != SOUP_METHOD_GET && method != SOUP_METHOD_HEAD)
        {
          soup_message_headers_replace (soup_server_message_get_response_headers (message), "Allow", "GET, HEAD");
          respond_error (message, route, SYMFONIC_ERROR_METHOD_NOT_ALLOWED, "Use GET");
          return;
        }
      symfonic_model_listing_respond (message, route, path);
      return;
    }

  /* what is left asks for the route with another method */
  detail = g_strdup_printf ("Use %s", method_of (route, path));
  soup_message_headers_replace (soup_server_message_get_response_headers (message), "Allow", method_of (route, path));
  respond_error (message, route, SYMFONIC_ERROR_METHOD_NOT_ALLOWED, detail);
}

static void
grace_over (gpointer data)
{
  *(gboolean *) data = TRUE;
}

/* Stopping: running streams end with their error frame, and get a short
 * grace to reach their clients before the connections close. */
static void
drain (SymfonicWorker *self)
{
  SymfonicTimer *grace;
  gboolean over = FALSE;

  symfonic_exchange_end_all (self->live);
  grace = symfonic_poller_timer (symfonic_poller_get_thread_default (), grace_over, &over);
  symfonic_timer_set_deadline (grace, g_get_monotonic_time () + SHUTDOWN_GRACE_MS * 1000);
  while (!over && g_hash_table_size (self->live) > 0)
    g_main_context_iteration (self->context, TRUE);
  symfonic_timer_remove (grace);
}

/* The drain is over, or the worker stops before it is. */
static void
forget_drain (SymfonicWorker *self)
{
  g_clear_pointer (&self->drain_check, symfonic_timer_remove);
  if (self->drained_destroy != NULL)
    self->drained_destroy (self->drained_data);
  self->drained = NULL;
  self->drained_data = NULL;
  self->drained_destroy = NULL;
}

/* The default max-connections: every descriptor the process may open but
 * its reserve. Each worker may use them all (streams need not spread
 * evenly); past the limit accepting itself fails, and pauses. */
static guint
derived_max_connections (void)
{
  struct rlimit limit;

  if (getrlimit (RLIMIT_NOFILE, &limit) != 0)
    return MAX_CONNECTIONS_LIMIT;
  if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= MAX_CONNECTIONS_LIMIT + RESERVED_DESCRIPTORS)
    return MAX_CONNECTIONS_LIMIT;
  /* a limit too small for the reserve: half of it */
  if (limit.rlim_cur <= 2 * RESERVED_DESCRIPTORS)
    return MAX (limit.rlim_cur / 2, 1);

  return limit.rlim_cur - RESERVED_DESCRIPTORS;
}

static SymfonicAcceptor *
accept_connections (SymfonicWorker  *self,
                    SoupServer      *server,
                    GError         **error)
{
  SymfonicConnectionTimeouts timeouts;
  guint header, body, keepalive, max_connections;

  g_object_get (self->pipeline,
                "header-timeout", &header,
                "body-timeout", &body,
                "keepalive-timeout", &keepalive,
                "max-connections", &max_connections,
                NULL);
  timeouts.header = header * G_USEC_PER_SEC;
  timeouts.body = body * G_USEC_PER_SEC;
  timeouts.keepalive = keepalive * G_USEC_PER_SEC;
  if (max_connections == 0)
    max_connections = derived_max_connections ();

  return symfonic_acceptor_new (server, self->socket, &timeouts, max_connections, self->released,
                                self->released_data, error);
}

static gpointer
worker_thread (gpointer data)
{
  SymfonicWorker *self = data;
  g_autoptr(SoupServer) server = NULL;
  GError *error = NULL;

  g_main_context_push_thread_default (self->context);

  server = soup_server_new ("server-header", "symfonic-gateway/" SYMFONIC_VERSION " ", NULL);
  soup_server_add_early_handler (server, NULL, handle_headers, self, NULL);
  soup_server_add_handler (server, NULL, handle_request, self, NULL);
  self->acceptor = accept_connections (self, server, &error);
  /* the acceptor has a descriptor of its own: once every worker let go of
   * this one, closing the acceptors closes the port */
  g_clear_object (&self->socket);

  g_mutex_lock (&self->lock);
  self->ready = TRUE;
  self->error = error;
  g_cond_signal (&self->cond);
  g_mutex_unlock (&self->lock);

  if (error == NULL)
    {
      g_main_loop_run (self->loop);
      drain (self);
      forget_drain (self);
      /* closes every connection left */
      soup_server_disconnect (server);
      g_clear_pointer (&self->acceptor, symfonic_acceptor_free);
      symfonic_exchange_abandon_all (self->live);
      while (g_main_context_pending (self->context))
        g_main_context_iteration (self->context, FALSE);
    }

  g_clear_object (&server);
  while (g_main_context_pending (self->context))
    g_main_context_iteration (self->context, FALSE);
  g_main_context_pop_thread_default (self->context);

  return NULL;
}

SymfonicWorker *
symfonic_worker_new (guint                        index,
                     SymfonicPipeline            *pipeline,
                     SymfonicMetrics             *metrics,
                     SymfonicRunStore            *run_store,
                     GSocket                     *socket,
                     SymfonicWorkerReleasedFunc   released,
                     gpointer                     released_data,
                     GError                     **error)
{
  SymfonicWorker *self = g_new0 (SymfonicWorker, 1);
  g_autofree char *name = g_strdup_printf ("worker-%u", index);

  self->index = index;
  self->pipeline = g_object_ref (pipeline);
  self->metrics = metrics;
  self->run_store = g_object_ref (run_store);
  self->socket = g_object_ref (socket);
  self->released = released;
  self->released_data = released_data;
  self->context = g_main_context_new ();
  self->loop = g_main_loop_new (self->context, FALSE);
  g_mutex_init (&self->lock);
  g_cond_init (&self->cond);
  self->live = g_hash_table_new (NULL, NULL);

  self->thread = g_thread_new (name, worker_thread, self);

  g_mutex_lock (&self->lock);
  while (!self->ready)
    g_cond_wait (&self->cond, &self->lock);
  g_mutex_unlock (&self->lock);

  if (self->error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&self->error));
      symfonic_worker_stop (self);
      return NULL;
    }

  return self;
}

static gboolean
quit_cb (gpointer data)
{
  g_main_loop_quit (data);
  return G_SOURCE_REMOVE;
}

typedef struct
{
  SymfonicWorker   *worker;
  SymfonicPipeline *pipeline;
} Swap;

/* On the worker's thread, between two requests: a request takes its route
 * (and with it its stages and source) from the pipeline current when it
 * arrived, and keeps them to its end. */
static gboolean
swap_cb (gpointer data)
{
  Swap *swap = data;
  SymfonicWorker *self = swap->worker;

  g_mutex_lock (&self->lock);
  g_set_object (&self->pipeline, swap->pipeline);
  swap->worker = NULL;
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->lock);

  return G_SOURCE_REMOVE;
}

/* Serves @pipeline from the next request on; returns once the worker
 * took it. */
void
symfonic_worker_set_pipeline (SymfonicWorker   *self,
                              SymfonicPipeline *pipeline)
{
  Swap swap = { self, pipeline };

  g_main_context_invoke (self->context, swap_cb, &swap);

  g_mutex_lock (&self->lock);
  while (swap.worker != NULL)
    g_cond_wait (&self->cond, &self->lock);
  g_mutex_unlock (&self->lock);
}

static void
check_drained (gpointer data)
{
  SymfonicWorker *self = data;

  if (g_hash_table_size (self->live) > 0)
    {
      symfonic_timer_set_deadline (self->drain_check, g_get_monotonic_time () + DRAIN_CHECK_MS * 1000);
      return;
    }

  self->drained (self->drained_data);
  forget_drain (self);
}

static gboolean
drain_cb (gpointer data)
{
  SymfonicWorker *self = data;

  if (self->acceptor != NULL)
    symfonic_acceptor_drain (self->acceptor);

  self->drain_check = symfonic_poller_timer (symfonic_poller_get_thread_default (), check_drained, self);
  symfonic_timer_set_deadline (self->drain_check, g_get_monotonic_time () + DRAIN_CHECK_MS * 1000);

  return G_SOURCE_REMOVE;
}

/* Stops accepting and closes idle connections; @drained runs on the
 * worker's thread once no exchange is left. @destroy frees @user_data
 * then, or when the worker stops first. */
void
symfonic_worker_drain (SymfonicWorker            *self,
                       SymfonicWorkerDrainedFunc  drained,
                       gpointer                   user_data,
                       GDestroyNotify             destroy)
{
  self->drained = drained;
  self->drained_data = user_data;
  self->drained_destroy = destroy;
  g_main_context_invoke (self->context, drain_cb, self);
}

static gboolean
end_streams_cb (gpointer data)
{
  SymfonicWorker *self = data;

  symfonic_exchange_end_all (self->live);
  return G_SOURCE_REMOVE;
}

/* Ends every running stream with its error frame. */
void
symfonic_worker_end_streams (SymfonicWorker *self)
{
  g_main_context_invoke (self->context, end_streams_cb, self);
}

void
symfonic_worker_stop (SymfonicWorker *self)
{
  g_main_context_invoke (self->context, quit_cb, self->loop);
  g_thread_join (self->thread);

  g_main_loop_unref (self->loop);
  g_main_context_unref (self->context);
  g_object_unref (self->pipeline);
  g_object_unref (self->run_store);
  g_hash_table_unref (self->live);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->cond);
  g_free (self);
}
