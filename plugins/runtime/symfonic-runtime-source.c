/* symfonic-runtime-source.c: an agent runtime behind HTTP
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <sys/resource.h>
#include <glib/gi18n-lib.h>
#include <libsoup/soup.h>

#include "symfonic-runtime-source.h"
#include "../common/symfonic-upstream-config.h"
#include "../common/symfonic-upstream-failure.h"
#include "../common/symfonic-usage.h"
#include "../common/symfonic-upstream-reader.h"

/* POSTs each invocation as JSON to an agent runtime (or another gateway)
 * and reads the typed event stream back, so the runtime's events travel
 * through the pipeline as if they were produced here.
 *
 * The source object is shared by every worker thread, so everything it
 * holds is set at construction and read-only afterwards; what a request
 * needs lives in its Request, on the thread that started it. */
struct _SymfonicRuntimeSource
{
  GObject   parent_instance;

  char     *url;
  GUri     *uri;
  /* for the log: no user info or query, which may carry secrets */
  char     *display_url;
  guint     timeout;
  char    **request_headers;
  guint     max_event_bytes;
  gboolean  follow_redirects;
  guint     max_connections;
  char     *tls_ca_file;

  /* the effective max-connections, and the connections held against it
   * by streams of every worker thread (atomic) */
  guint     connection_cap;
  int       connections;

  /* the head lines of every request: request-headers and Accept */
  char     *header_lines;
  SymfonicUpstream *upstream;
};

static void symfonic_runtime_source_initable_init (GInitableIface *iface);
static void symfonic_runtime_source_source_init (SymfonicSourceInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SymfonicRuntimeSource, symfonic_runtime_source, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, symfonic_runtime_source_initable_init)
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_SOURCE, symfonic_runtime_source_source_init))

enum {
  PROP_0,
  PROP_URL,
  PROP_TIMEOUT,
  PROP_REQUEST_HEADERS,
  PROP_MAX_EVENT_BYTES,
  PROP_FOLLOW_REDIRECTS,
  PROP_MAX_CONNECTIONS,
  PROP_TLS_CA_FILE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

#define DEFAULT_TIMEOUT 60
#define DEFAULT_MAX_EVENT_BYTES (8 * 1024 * 1024)
/* a same-origin redirect loop ends here */
#define MAX_REDIRECTS 5
/* what a refusal at the connection cap tells the client: streams end all
 * the time, so a slot is usually free again soon */
#define CAP_RETRY_AFTER "1"

/* The process's limit on open files: no more upstream connections than
 * that can exist, so it is also as many as a session may open. */
static guint
fd_limit (void)
{
  struct rlimit limit;

  if (getrlimit (RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > G_MAXINT)
    return G_MAXINT;

  return (guint) limit.rlim_cur;
}

/* --- connection slots --------------------------------------------------- */

/* the stream's slot, from admission until the request holds it */
static GQuark connection_quark;

static void
release_connection (gpointer data)
{
  SymfonicRuntimeSource *self = data;

  g_atomic_int_add (&self->connections, -1);
  g_object_unref (self);
}

/* Past the cap a stream is refused at once: a session would queue it
 * behind the running ones for as long as they last, silently. */
static gboolean
symfonic_runtime_source_admit (SymfonicSource  *source,
                               SymfonicStream  *stream,
                               GError         **error)
{
  SymfonicRuntimeSource *self = SYMFONIC_RUNTIME_SOURCE (source);

  if ((guint) g_atomic_int_add (&self->connections, 1) >= self->connection_cap)
    {
      g_atomic_int_add (&self->connections, -1);
      symfonic_stream_set_response_header (stream, "Retry-After", CAP_RETRY_AFTER);
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_OVERLOADED,
                           _("Every upstream connection is in use"));
      return FALSE;
    }

  /* held until the request ends, or with the stream if it never starts */
  g_object_set_qdata_full (G_OBJECT (stream), connection_quark, g_object_ref (self), release_connection);

  return TRUE;
}

/* --- one request ------------------------------------------------------- */

typedef struct
{
  SymfonicUpstreamReader   reader;
  SymfonicRuntimeSource   *source;
  GBytes                  *payload;
  /* where the request went, for a relative redirect */
  GUri                    *uri;
  guint                    redirects;
  /* the connection slot taken at admission, or NULL */
  gpointer                 connection;
} Request;

static void
request_free (SymfonicUpstreamReader *reader)
{
  Request *req = (Request *) reader;

  g_uri_unref (req->uri);
  g_bytes_unref (req->payload);
  g_clear_pointer (&req->connection, release_connection);
  g_object_unref (req->source);
  g_free (req);
}

static const char *
run_id (Request *req)
{
  return symfonic_invocation_get_run_id (symfonic_stream_get_invocation (req->reader.stream));
}

/* Upstream text only ever reaches the log, and only a little of it. */
static char *
quote_upstream (const char *text)
{
  g_autofree char *cut = g_strndup (text, 64);

  return g_strescape (cut, NULL);
}

static GError *
transport_failure (SymfonicUpstreamReader *reader,
                   const GError           *error)
{
  Request *req = (Request *) reader;

  return symfonic_upstream_failure_for_transport (run_id (req), req->source->display_url, error,
                                                  req->source->timeout);
}

/* Anthropic-style (input/output) or OpenAI-style (prompt/completion)
 * counts, each report what was used since the last; FALSE with @error set
 * when the report is a lie. */
static gboolean
add_usage (Request     *req,
           JsonObject  *usage,
           GError     **error)
{
  SymfonicUsageCounts counts;

  symfonic_usage_read_counts (usage, &counts);

  return symfonic_usage_add (req->reader.stream, req->source->display_url, &counts, error);
}

static JsonObject *
get_usage_member (JsonNode *data)
{
  JsonNode *usage;

  /* NULL for an event read without a tree, which has no usage member */
  if (data == NULL || !JSON_NODE_HOLDS_OBJECT (data))
    return NULL;
  usage = json_object_get_member (json_node_get_object (data), "usage");

  return usage != NULL && JSON_NODE_HOLDS_OBJECT (usage) ? json_node_get_object (usage) : NULL;
}

/* Strict and depth-bounded: an upstream's nesting must not exhaust the
 * worker's stack and end every stream it serves. */
static JsonNode *
parse_json (const char  *data,
            gsize        data_length,
            GError     **error)
{
  return symfonic_json_parse (data, data_length, SYMFONIC_JSON_MAX_DEPTH, error);
}

static JsonNode *
parse_data (const char  *event,
            const char  *data,
            gsize        data_length,
            GError     **error)
{
  g_autoptr(GError) parse_error = NULL;
  JsonNode *root = parse_json (data, data_length, &parse_error);

  if (root == NULL)
    g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM,
                 _("The upstream sent a %s whose data is not JSON (%s)"), event, parse_error->message);

  return root;
}

static gboolean
handle_error_frame (const char  *data,
                    gsize        data_length,
                    GError     **error)
{
  g_autoptr(JsonNode) root = parse_json (data, data_length, NULL);
  JsonNode *status = NULL;

  if (root != NULL && JSON_NODE_HOLDS_OBJECT (root))
    status = json_object_get_member (json_node_get_object (root), "status");

  /* the runtime's detail is its own business: only its status is kept */
  if (status != NULL && JSON_NODE_HOLDS_VALUE (status) && json_node_get_value_type (status) == G_TYPE_INT64)
    g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM,
                 _("The upstream reported an error with status %" G_GINT64_FORMAT),
                 json_node_get_int (status));
  else
    g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM,
                         _("The upstream reported an error"));

  return FALSE;
}

/* A report that is not JSON says nothing and is ignored; one that gives
 * counts must give true ones. */
static gboolean
handle_usage_frame (Request     *req,
                    const char  *data,
                    gsize        data_length,
                    GError     **error)
{
  g_autoptr(JsonNode) root = parse_json (data, data_length, NULL);
  JsonObject *usage;

  if (root == NULL)
    {
      g_debug ("Ignoring a usage report that is not JSON");
      return TRUE;
    }
  usage = get_usage_member (root);
  if (usage == NULL && JSON_NODE_HOLDS_OBJECT (root))
    usage = json_node_get_object (root);

  return usage == NULL || add_usage (req, usage, error);
}

/* Returns FALSE with @error set when the frame breaks the stream. */
static gboolean
handle_frame (Request     *req,
              const char  *event,
              const char  *data,
              gsize        data_length,
              GError     **error)
{
  g_autoptr(SymfonicEvent) parsed = NULL;
  g_autoptr(JsonNode) root = NULL;

  /* most frames are deltas, read without a JSON tree, and their name is
   * looked up once, there */
  parsed = symfonic_event_try_new_from_data (event, data, data_length);
  if (parsed == NULL)
    {
      SymfonicEventKind kind;

      if (strcmp (event, "error") == 0)
        return handle_error_frame (data, data_length, error);
      if (strcmp (event, "usage") == 0)
        return handle_usage_frame (req, data, data_length, error);

      if (!symfonic_event_kind_from_name (event, &kind) || kind == SYMFONIC_EVENT_KIND_CHUNK)
        {
          g_autofree char *quoted = quote_upstream (event);

          g_propagate_error (error, symfonic_upstream_failure_new (run_id (req), req->source->display_url, SYMFONIC_ERROR_UPSTREAM,
                                                      _("The upstream sent an unknown event"),
                                                      "unknown event “%s”", quoted));
          return FALSE;
        }

      root = parse_data (event, data, data_length, error);
      if (root == NULL)
        return FALSE;

      /* sealed, the tree becomes the event's own instead of a copy */
      json_node_seal (root);
      parsed = symfonic_event_new_from_json (event, root, error);
      if (parsed == NULL)
        return FALSE;
    }

  if (symfonic_event_get_kind (parsed) == SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE)
    {
      JsonObject *usage = get_usage_member (root);

      /* before the push, so stages that see the terminal see the usage */
      if (usage != NULL && !add_usage (req, usage, error))
        return FALSE;
      req->reader.completed = TRUE;
    }

  symfonic_upstream_reader_push (&req->reader, parsed);

  return TRUE;
}

static gboolean
read_frame (SymfonicUpstreamReader  *reader,
            const char              *event,
            const char              *data,
            gsize                    data_length,
            GError                 **error)
{
  return handle_frame ((Request *) reader, event, data, data_length, error);
}

static GError *
truncated (SymfonicUpstreamReader *reader)
{
  return g_error_new_literal (SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM,
                              _("The upstream closed the stream without a ResponseCompleteEvent"));
}

static void send_message (Request *req,
                          GUri    *uri);

static int
uri_port (GUri *uri)
{
  int port = g_uri_get_port (uri);

  if (port != -1)
    return port;

  return g_ascii_strcasecmp (g_uri_get_scheme (uri), "https") == 0 ? 443 : 80;
}

static gboolean
same_origin (GUri *a,
             GUri *b)
{
  return g_ascii_strcasecmp (g_uri_get_scheme (a), g_uri_get_scheme (b)) == 0 &&
         g_ascii_strcasecmp (g_uri_get_host (a), g_uri_get_host (b)) == 0 &&
         uri_port (a) == uri_port (b);
}

/* What goes on the request line: the path and query, encoded. */
static char *
request_target (GUri *uri)
{
  const char *path = g_uri_get_path (uri);
  const char *query = g_uri_get_query (uri);

  return g_strconcat (*path != '\0' ? path : "/", query != NULL ? "?" : "", query != NULL ? query : "", NULL);
}

static gboolean
is_clean_target (const char *target)
{
  for (const char *p = target; *p != '\0'; p++)
    {
      if ((guchar) *p <= ' ' || (guchar) *p >= 0x7f)
        return FALSE;
    }

  return TRUE;
}

/* A redirect the source may follow: allowed by follow-redirects, to the
 * runtime's own origin (the request headers may carry its credentials,
 * which are for no other host), and not one hop too many. Returns the
 * target, or NULL. */
static GUri *
redirect_target (Request *req,
                 guint    status)
{
  const char *location;
  g_autoptr(GUri) target = NULL;
  g_autofree char *line = NULL;

  if (!req->source->follow_redirects || req->redirects >= MAX_REDIRECTS ||
      (status != SOUP_STATUS_MOVED_PERMANENTLY && status != SOUP_STATUS_FOUND &&
       status != SOUP_STATUS_SEE_OTHER && status != SOUP_STATUS_TEMPORARY_REDIRECT &&
       status != SOUP_STATUS_PERMANENT_REDIRECT))
    return NULL;

  location = symfonic_upstream_request_get_header (req->reader.upstream, "Location");
  if (location == NULL)
    return NULL;
  target = g_uri_parse_relative (req->uri, location, SOUP_HTTP_URI_FLAGS, NULL);
  if (target == NULL || g_uri_get_host (target) == NULL || !same_origin (target, req->source->uri))
    return NULL;
  /* it goes on the request line as it is */
  line = request_target (target);
  if (!is_clean_target (line))
    return NULL;

  return g_steal_pointer (&target);
}

static void
read_head (SymfonicUpstreamReader *reader,
           guint                   status)
{
  Request *req = (Request *) reader;
  const char *content_type;

  if (SOUP_STATUS_IS_REDIRECTION (status))
    {
      g_autoptr(GUri) target = redirect_target (req, status);

      if (target != NULL)
        {
          /* the invocation again, as a POST: the runtime answers nothing
           * else, whatever a browser would make of the status */
          symfonic_upstream_request_cancel (reader->upstream);
          g_clear_pointer (&reader->upstream, symfonic_upstream_request_free);
          req->redirects++;
          send_message (req, target);
          return;
        }
    }

  if (!SOUP_STATUS_IS_SUCCESSFUL (status))
    {
      /* the status's standard phrase: the runtime's body and reason
       * phrase stay out of even the log */
      symfonic_upstream_reader_finish (reader,
                                       symfonic_upstream_failure_new (run_id (req), req->source->display_url,
                                                                      SYMFONIC_ERROR_UPSTREAM,
                                                                      _("The upstream refused the request"),
                                                                      "answered HTTP %u %s", status,
                                                                      soup_status_get_phrase (status)));
      return;
    }

  content_type = symfonic_upstream_request_get_header (reader->upstream, "Content-Type");
  if (!symfonic_upstream_is_event_stream (content_type))
    {
      g_autofree char *quoted = quote_upstream (content_type != NULL ? content_type : "");

      symfonic_upstream_reader_finish (reader,
                                       symfonic_upstream_failure_new (run_id (req), req->source->display_url,
                                                                      SYMFONIC_ERROR_UPSTREAM,
                                                                      _("The upstream did not answer with an event stream"),
                                                                      "answered “%s” instead of an event stream",
                                                                      quoted));
    }
}

static const SymfonicUpstreamReaderVTable reader_vtable = {
  .head = read_head,
  .frame = read_frame,
  .transport_failure = transport_failure,
  .truncated = truncated,
  .free = request_free,
};

static void
send_message (Request *req,
              GUri    *uri)
{
  SymfonicRuntimeSource *self = req->source;
  g_autofree char *target = request_target (uri);

  g_uri_unref (req->uri);
  req->uri = g_uri_ref (uri);
  req->reader.upstream = symfonic_upstream_send (self->upstream, "POST", target, self->header_lines,
                                                 "application/json", req->payload,
                                                 &symfonic_upstream_reader_handlers, &req->reader);
  symfonic_upstream_request_set_timeout (req->reader.upstream, self->timeout);
}

static GBytes *
build_body (SymfonicStream *stream)
{
  gsize length;
  char *text = symfonic_invocation_to_data (symfonic_stream_get_invocation (stream), &length);

  if (symfonic_route_get_kind (symfonic_stream_get_route (stream)) == SYMFONIC_ROUTE_KIND_RESUME)
    {
      /* one more member before the object's closing brace */
      GString *body = g_string_new_len (text, length - 1);

      g_free (text);
      g_string_append (body, ",\"resume\":true}");
      return g_string_free_to_bytes (body);
    }

  return g_bytes_new_take (text, length);
}

static void
symfonic_runtime_source_start (SymfonicSource *source,
                               SymfonicStream *stream,
                               GCancellable   *cancellable)
{
  SymfonicRuntimeSource *self = SYMFONIC_RUNTIME_SOURCE (source);
  Request *req;

  req = g_new0 (Request, 1);
  req->source = g_object_ref (self);
  req->payload = build_body (stream);
  req->uri = g_uri_ref (self->uri);
  req->connection = g_object_steal_qdata (G_OBJECT (stream), connection_quark);
  symfonic_upstream_reader_init (&req->reader, &reader_vtable, stream, cancellable, self->max_event_bytes);
  send_message (req, self->uri);
  symfonic_upstream_reader_watch (&req->reader);
}

static void
symfonic_runtime_source_source_init (SymfonicSourceInterface *iface)
{
  iface->admit = symfonic_runtime_source_admit;
  iface->start = symfonic_runtime_source_start;
}

/* --- configuration ------------------------------------------------------- */

/* Headers the source sets itself, or that would break the message's
 * framing if an operator overrode them. */
static const char * const reserved_headers[] = {
  "Accept", "Connection", "Content-Length", "Content-Type", "Host",
  "Keep-Alive", "TE", "Trailer", "Transfer-Encoding", "Upgrade", NULL,
};

static gboolean
parse_request_headers (SymfonicRuntimeSource  *self,
                       GError                **error)
{
  g_autofree char *lines = symfonic_header_lines_parse ("request-headers",
                                                        (const char * const *) self->request_headers,
                                                        reserved_headers, error);

  if (lines == NULL)
    return FALSE;

  /* no Accept-Encoding: the runtime sends identity, since a compressor
   * between frames would hold them back until its block fills */
  self->header_lines = g_strconcat (lines, "Accept: text/event-stream\r\n", NULL);

  return TRUE;
}

static gboolean
symfonic_runtime_source_initable_init_impl (GInitable     *initable,
                                            GCancellable  *cancellable,
                                            GError       **error)
{
  SymfonicRuntimeSource *self = SYMFONIC_RUNTIME_SOURCE (initable);
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GUri) uri = NULL;

  uri = symfonic_upstream_parse_url ("url", self->url, error);
  if (uri == NULL)
    return FALSE;

  if (!parse_request_headers (self, error))
    return FALSE;

  /* each stream holds two descriptors: the client's connection and the
   * upstream's */
  self->connection_cap = self->max_connections != 0 ? self->max_connections : MAX (fd_limit () / 2, 1);
  if (self->connection_cap > fd_limit ())
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("max-connections: %u is above the process’s limit of %u open files"),
                   self->connection_cap, fd_limit ());
      return FALSE;
    }

  /* on every worker, its own kept-alive connections to the runtime */
  self->upstream = g_initable_new (SYMFONIC_TYPE_UPSTREAM, NULL, &local_error,
                                   "origin", self->url, "tls-ca-file", self->tls_ca_file, NULL);
  if (self->upstream == NULL)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("tls-ca-file: “%s” cannot be read as PEM certificates"), self->tls_ca_file);
      return FALSE;
    }

  self->display_url = g_uri_to_string_partial (uri, G_URI_HIDE_USERINFO | G_URI_HIDE_QUERY |
                                                     G_URI_HIDE_FRAGMENT);
  self->uri = g_steal_pointer (&uri);

  return TRUE;
}

static void
symfonic_runtime_source_initable_init (GInitableIface *iface)
{
  iface->init = symfonic_runtime_source_initable_init_impl;
}

static void
symfonic_runtime_source_finalize (GObject *object)
{
  SymfonicRuntimeSource *self = (SymfonicRuntimeSource *) object;

  g_free (self->url);
  g_clear_pointer (&self->uri, g_uri_unref);
  g_free (self->display_url);
  g_strfreev (self->request_headers);
  g_free (self->header_lines);
  g_free (self->tls_ca_file);
  g_clear_object (&self->upstream);

  G_OBJECT_CLASS (symfonic_runtime_source_parent_class)->finalize (object);
}

static void
symfonic_runtime_source_get_property (GObject    *object,
                                      guint       prop_id,
                                      GValue     *value,
                                      GParamSpec *pspec)
{
  SymfonicRuntimeSource *self = SYMFONIC_RUNTIME_SOURCE (object);

  switch (prop_id)
    {
    case PROP_URL:
      g_value_set_string (value, self->url);
      break;
    case PROP_TIMEOUT:
      g_value_set_uint (value, self->timeout);
      break;
    case PROP_REQUEST_HEADERS:
      g_value_set_boxed (value, self->request_headers);
      break;
    case PROP_MAX_EVENT_BYTES:
      g_value_set_uint (value, self->max_event_bytes);
      break;
    case PROP_FOLLOW_REDIRECTS:
      g_value_set_boolean (value, self->follow_redirects);
      break;
    case PROP_MAX_CONNECTIONS:
      g_value_set_uint (value, self->max_connections);
      break;
    case PROP_TLS_CA_FILE:
      g_value_set_string (value, self->tls_ca_file);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_runtime_source_set_property (GObject      *object,
                                      guint         prop_id,
                                      const GValue *value,
                                      GParamSpec   *pspec)
{
  SymfonicRuntimeSource *self = SYMFONIC_RUNTIME_SOURCE (object);

  switch (prop_id)
    {
    case PROP_URL:
      g_free (self->url);
      self->url = g_value_dup_string (value);
      break;
    case PROP_TIMEOUT:
      self->timeout = g_value_get_uint (value);
      break;
    case PROP_REQUEST_HEADERS:
      g_strfreev (self->request_headers);
      self->request_headers = g_value_dup_boxed (value);
      break;
    case PROP_MAX_EVENT_BYTES:
      self->max_event_bytes = g_value_get_uint (value);
      break;
    case PROP_FOLLOW_REDIRECTS:
      self->follow_redirects = g_value_get_boolean (value);
      break;
    case PROP_MAX_CONNECTIONS:
      self->max_connections = g_value_get_uint (value);
      break;
    case PROP_TLS_CA_FILE:
      g_free (self->tls_ca_file);
      self->tls_ca_file = g_value_dup_string (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_runtime_source_class_init (SymfonicRuntimeSourceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = symfonic_runtime_source_finalize;
  object_class->get_property = symfonic_runtime_source_get_property;
  connection_quark = g_quark_from_static_string ("symfonic-runtime-connection");
  object_class->set_property = symfonic_runtime_source_set_property;

  properties[PROP_URL] =
    g_param_spec_string ("url", "URL",
                         "The runtime's http or https endpoint; each invocation is POSTed to it as JSON",
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_TIMEOUT] =
    g_param_spec_uint ("timeout", "Timeout",
                       "Seconds the runtime may stay silent, while connecting or between reads, "
                       "before the stream fails; 0 waits forever",
                       0, G_MAXUINT, DEFAULT_TIMEOUT,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_REQUEST_HEADERS] =
    g_param_spec_boxed ("request-headers", "Request headers",
                        "Extra headers sent to the runtime, each as “Name: value”",
                        G_TYPE_STRV,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_MAX_EVENT_BYTES] =
    g_param_spec_uint ("max-event-bytes", "Maximum event bytes",
                       "The largest event the runtime may send; a larger one fails the stream. "
                       "0 for no limit",
                       0, G_MAXUINT, DEFAULT_MAX_EVENT_BYTES,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_FOLLOW_REDIRECTS] =
    g_param_spec_boolean ("follow-redirects", "Follow redirects",
                          "Follow the runtime's redirects to its own origin (scheme, host and port), "
                          "POSTing the invocation again; a redirect elsewhere always fails the stream",
                          FALSE,
                          G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_MAX_CONNECTIONS] =
    g_param_spec_uint ("max-connections", "Maximum connections",
                       "Streams the source serves at once, over all workers, each on its own upstream "
                       "connection; one more is refused with 503 and Retry-After. "
                       "0 for half the process's open-file limit",
                       0, G_MAXUINT, 0,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  properties[PROP_TLS_CA_FILE] =
    g_param_spec_string ("tls-ca-file", "TLS CA file",
                         "A PEM file of the certificate authorities an https runtime is checked against, "
                         "instead of the system's trust",
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
symfonic_runtime_source_init (SymfonicRuntimeSource *self)
{
  self->timeout = DEFAULT_TIMEOUT;
  self->max_event_bytes = DEFAULT_MAX_EVENT_BYTES;
}
