/* symfonic-http-source.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <sys/resource.h>
#include <glib/gi18n-lib.h>
#include <libsoup/soup.h>

#include "symfonic-config-file.h"
#include "symfonic-http-source-private.h"
#include "symfonic-init-once.h"
#include "symfonic-param-spec.h"
#include "symfonic-recorder-private.h"
#include "symfonic-registry.h"
#include "symfonic-source.h"
#include "symfonic-stream.h"
#include "symfonic-upstream-private.h"

/**
 * SymfonicHttpSource:
 *
 * The base class of sources that stream their events from an HTTP
 * upstream: an agent runtime, an LLM provider's API, another gateway.
 *
 * One implementation of what every such source does alike: its settings
 * (the upstream's URL, extra request headers, timeouts, redirects, TLS
 * trust, the size of an event, the cap on streams at once), the requests
 * on the worker's kept-alive connections, back-pressure (the upstream is
 * not read while the client is behind), the client going away (the
 * upstream's connection is closed at once), Server-Sent-Events parsing,
 * what a broken or silent connection is for the client, and usage
 * reports. A subclass, like an element over GStreamer's `GstBaseSrc`,
 * supplies only what is its own: the request body
 * ([vfunc@Symfonic.HttpSource.write_request]), what an event-stream frame
 * means ([vfunc@Symfonic.HttpSource.handle_frame]), and optionally how to
 * judge the response head ([vfunc@Symfonic.HttpSource.check_head]) and
 * what a body that ends early means ([vfunc@Symfonic.HttpSource.end]).
 *
 * ## Settings
 *
 * Every HTTP source has these properties, so pipeline files set them the
 * same way on every source type: [property@Symfonic.HttpSource:url]
 * (also `base-url`), [property@Symfonic.HttpSource:request-headers] (also
 * `extra-headers`), [property@Symfonic.HttpSource:headers-file],
 * [property@Symfonic.HttpSource:max-connections],
 * [property@Symfonic.HttpSource:connect-timeout],
 * [property@Symfonic.HttpSource:timeout],
 * [property@Symfonic.HttpSource:idle-timeout],
 * [property@Symfonic.HttpSource:follow-redirects],
 * [property@Symfonic.HttpSource:tls-ca-file] and
 * [property@Symfonic.HttpSource:max-event-bytes]. Files are read when the
 * source is initialised ([method@Gio.Initable.init]), so that a wrong one
 * fails the pipeline's load, not a request.
 *
 * ## Recording
 *
 * With [property@Symfonic.HttpSource:record] set, the source writes what
 * its upstream really sent for each run (a share of them with
 * [property@Symfonic.HttpSource:record-ratio]) into that folder, one
 * [struct@Symfonic.Recording] file per run named by its run id: the
 * request as sent, each read of the body with its arrival time, the
 * status and how the run ended, with every secret taken out before
 * anything is written (see [property@Symfonic.HttpSource:record-redact]).
 * Recording is off the stream's path: a read costs the stream a copy into
 * a block of its run, handed to a bounded queue when full, and when the
 * queue is full that run goes unrecorded, never slowed. [method@Symfonic.HttpSource.play] serves a stream from
 * such a recording through the same reading, for replays and tests.
 *
 * ## Timeouts
 *
 * A new connection has `connect-timeout` seconds, its TLS handshake
 * included. Then the upstream may stay silent for `timeout` seconds until
 * its response head, and for `idle-timeout` seconds between bytes after
 * it; a source without an `idle-timeout` of its own, set or defaulted by
 * its type, allows `timeout` throughout. A source that holds the client's
 * response head until its first event
 * ([method@Symfonic.HttpSource.set_holds_head]) also gives that event
 * `timeout` seconds from the request, however many bytes without an
 * event (comments, pings, interim heads) come before it. While the
 * client is behind, the upstream is not read and no timeout runs.
 *
 * ## Failures
 *
 * What reaches the client is fixed text of the library's or the
 * subclass's; the upstream's address (without user info or query) and
 * what went wrong go to the log only, with the stream's run id
 * ([method@Symfonic.HttpRequest.new_failure]). A refused or unresolvable
 * host is %SYMFONIC_ERROR_UPSTREAM_UNAVAILABLE, silence
 * %SYMFONIC_ERROR_UPSTREAM_TIMEOUT, anything else
 * %SYMFONIC_ERROR_UPSTREAM.
 *
 * ## A subclass
 *
 * This source POSTs the query and reads a stream of `data: text` frames,
 * ending with `event: done`:
 *
 * ```c
 * #include <symfonic.h>
 *
 * G_DECLARE_FINAL_TYPE (MyEchoSource, my_echo_source, MY, ECHO_SOURCE, SymfonicHttpSource)
 *
 * struct _MyEchoSource { SymfonicHttpSource parent_instance; };
 *
 * G_DEFINE_FINAL_TYPE (MyEchoSource, my_echo_source, SYMFONIC_TYPE_HTTP_SOURCE)
 *
 * static gboolean
 * my_echo_source_write_request (SymfonicHttpSource *source, SymfonicHttpRequest *request,
 *                               GString *path, GString *body, GError **error)
 * {
 *   SymfonicStream *stream = symfonic_http_request_get_stream (request);
 *   SymfonicInvocation *invocation = symfonic_stream_get_invocation (stream);
 *
 *   g_string_append (body, "{\"prompt\":");
 *   symfonic_json_append_string (body, symfonic_invocation_get_query (invocation), -1);
 *   g_string_append_c (body, '}');
 *
 *   return TRUE;
 * }
 *
 * static gboolean
 * my_echo_source_handle_frame (SymfonicHttpSource *source, SymfonicHttpRequest *request,
 *                              const char *event, const char *data, gsize data_length,
 *                              GError **error)
 * {
 *   g_autoptr(SymfonicEvent) out = NULL;
 *
 *   if (g_str_equal (event, "done"))
 *     {
 *       out = symfonic_event_new_response_complete ("", 0);
 *       symfonic_http_request_complete (request);
 *     }
 *   else
 *     out = symfonic_event_new_text_delta (data);
 *   symfonic_http_request_push (request, out);
 *
 *   return TRUE;
 * }
 *
 * static void
 * my_echo_source_class_init (MyEchoSourceClass *klass)
 * {
 *   SymfonicHttpSourceClass *http_class = SYMFONIC_HTTP_SOURCE_CLASS (klass);
 *
 *   http_class->write_request = my_echo_source_write_request;
 *   http_class->handle_frame = my_echo_source_handle_frame;
 * }
 *
 * static void my_echo_source_init (MyEchoSource *self) { }
 * ```
 *
 * Registered by a plugin with symfonic_plugin_register_type(), it is a
 * pipeline's `type=` with every setting above. The `runtime` plugin is a
 * complete one.
 *
 * A source object serves every stream of its routes on every worker
 * thread: what it holds is set when it is initialised and read-only after;
 * what a stream needs lives in its [struct@Symfonic.HttpRequest].
 */

typedef struct
{
  char      *url;
  char     **request_headers;
  GFile     *headers_file;
  guint      max_connections;
  guint      connect_timeout;
  guint      timeout;
  guint      idle_timeout;
  gboolean   follow_redirects;
  GFile     *tls_ca_file;
  guint      max_event_bytes;
  GFile     *record;
  double     record_ratio;
  guint64    record_max_bytes;
  char     **record_redact;

  /* which name set the url and the headers, so that an error names the
   * key the pipeline file used */
  const char *url_key;
  const char *headers_key;
  guint      url_keys_set;
  guint      headers_keys_set;
  /* idle-timeout was set, or defaulted by the subclass: without it,
   * timeout bounds every silence */
  gboolean   idle_timeout_set;
  gboolean   holds_head;
  /* the header names the subclass sets itself */
  GPtrArray *reserved;

  /* GInitable: done once, and its outcome */
  SymfonicInitOnce init;
  /* the subclass's prepare runs: it may add request headers */
  gboolean   preparing;
  GString   *own_lines;

  GUri      *uri;
  /* for the log: no user info or query, which may carry secrets */
  char      *display_url;
  /* the head lines of every request, and the client of every worker */
  char      *header_lines;
  SymfonicUpstream *upstream;
  /* with record set: what every stream tees into, and the values of the
   * headers-file, which are secrets whatever their names */
  SymfonicRecorder *recorder;
  GPtrArray *file_values;

  /* the effective max-connections, and the connections held against it
   * by streams of every worker thread (atomic) */
  guint      connection_cap;
  int        connections;
} SymfonicHttpSourcePrivate;

static void symfonic_http_source_initable_init (GInitableIface *iface);
static void symfonic_http_source_source_init (SymfonicSourceInterface *iface);
static gboolean start_recording (SymfonicHttpSource  *self,
                                 GError             **error);

G_DEFINE_ABSTRACT_TYPE_WITH_CODE (SymfonicHttpSource, symfonic_http_source, G_TYPE_OBJECT,
                                  G_ADD_PRIVATE (SymfonicHttpSource)
                                  G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, symfonic_http_source_initable_init)
                                  G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_SOURCE, symfonic_http_source_source_init))

enum {
  PROP_0,
  PROP_URL,
  PROP_BASE_URL,
  PROP_REQUEST_HEADERS,
  PROP_EXTRA_HEADERS,
  PROP_HEADERS_FILE,
  PROP_MAX_CONNECTIONS,
  PROP_CONNECT_TIMEOUT,
  PROP_TIMEOUT,
  PROP_IDLE_TIMEOUT,
  PROP_FOLLOW_REDIRECTS,
  PROP_TLS_CA_FILE,
  PROP_MAX_EVENT_BYTES,
  PROP_RECORD,
  PROP_RECORD_RATIO,
  PROP_RECORD_MAX_BYTES,
  PROP_RECORD_REDACT,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

#define DEFAULT_CONNECT_TIMEOUT 10
#define DEFAULT_TIMEOUT 60
#define DEFAULT_MAX_EVENT_BYTES (8 * 1024 * 1024)
/* a recording is read back whole: well under a transcript file's cap
 * once escaped */
#define DEFAULT_RECORD_MAX_BYTES (4 * 1024 * 1024)
/* a run's recording still written at the source's end */
#define RECORD_FLUSH_US (5 * G_USEC_PER_SEC)
/* headers, not a document: a larger file is a wrong one */
#define MAX_HEADERS_FILE_BYTES (64 * 1024)
/* what a refusal at the connection cap tells the client: streams end all
 * the time, so a slot is usually free again soon */
#define CAP_RETRY_AFTER "1"

/* Headers the base class sets itself, or that would break the message's
 * framing if an operator overrode them. */
static const char * const reserved_headers[] = {
  "Accept", "Connection", "Content-Length", "Content-Type", "Host",
  "Keep-Alive", "TE", "Trailer", "Transfer-Encoding", "Upgrade", NULL,
};

/* The process's limit on open files: no more upstream connections than
 * that can exist, so it is also as many as a source may open. */
static guint
fd_limit (void)
{
  struct rlimit limit;

  if (getrlimit (RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > G_MAXINT)
    return G_MAXINT;

  return (guint) limit.rlim_cur;
}

/* --- connection slots --------------------------------------------------- */

/* the stream's slot, from admission until its request holds it */
static GQuark connection_quark;

void
symfonic_http_source_release_connection (gpointer slot)
{
  SymfonicHttpSource *self = slot;
  SymfonicHttpSourcePrivate *priv = symfonic_http_source_get_instance_private (self);

  g_atomic_int_add (&priv->connections, -1);
  g_object_unref (self);
}

/* Past the cap a stream is refused at once: a connection pool would
 * queue it behind the running ones for as long as they last, silently.
 * A source whose client waits for its first event holds the head here,
 * before any stage could start the response. */
static gboolean
symfonic_http_source_admit (SymfonicSource  *source,
                            SymfonicStream  *stream,
                            GError         **error)
{
  SymfonicHttpSource *self = SYMFONIC_HTTP_SOURCE (source);
  SymfonicHttpSourcePrivate *priv = symfonic_http_source_get_instance_private (self);

  if ((guint) g_atomic_int_add (&priv->connections, 1) >= priv->connection_cap)
    {
      g_atomic_int_add (&priv->connections, -1);
      symfonic_stream_set_response_header (stream, "Retry-After", CAP_RETRY_AFTER);
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_OVERLOADED,
                           "Every upstream connection is in use");
      return FALSE;
    }

  /* held until the request ends, or with the stream if it never starts */
  g_object_set_qdata_full (G_OBJECT (stream), connection_quark, g_object_ref (self),
                           symfonic_http_source_release_connection);
  if (priv->holds_head)
    symfonic_stream_hold_head (stream);

  return TRUE;
}

static void
symfonic_http_source_start (SymfonicSource *source,
                            SymfonicStream *stream,
                            GCancellable   *cancellable)
{
  SymfonicHttpSource *self = SYMFONIC_HTTP_SOURCE (source);
  SymfonicHttpSourcePrivate *priv = symfonic_http_source_get_instance_private (self);

  g_return_if_fail (priv->upstream != NULL);

  symfonic_http_request_start (self, stream, cancellable,
                               g_object_steal_qdata (G_OBJECT (stream), connection_quark), NULL, 0);
}

static void
symfonic_http_source_source_init (SymfonicSourceInterface *iface)
{
  iface->admit = symfonic_http_source_admit;
  iface->start = symfonic_http_source_start;
}

/* --- configuration ------------------------------------------------------- */

/* An absolute http or https URL with a host, or a config error naming
 * @key. */
static GUri *
parse_url (const char  *key,
           const char  *url,
           GError     **error)
{
  g_autoptr(GUri) uri = NULL;
  const char *scheme;
  const char *host;

  if (url == NULL || *url == '\0')
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("%s: expected an http or https URL, found none"), key);
      return NULL;
    }

  /* a URL may carry a password: an error shows none of it */
  uri = g_uri_parse (url, SOUP_HTTP_URI_FLAGS, NULL);
  if (uri == NULL)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, _("%s: expected an http or https URL, found text that is not a URL"),
                   key);
      return NULL;
    }
  scheme = g_uri_get_scheme (uri);
  host = g_uri_get_host (uri);
  if ((g_ascii_strcasecmp (scheme, "http") != 0 && g_ascii_strcasecmp (scheme, "https") != 0) ||
      host == NULL || *host == '\0')
    {
      g_autofree char *shown = g_uri_to_string_partial (uri, G_URI_HIDE_USERINFO | G_URI_HIDE_QUERY |
                                                        G_URI_HIDE_FRAGMENT);

      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("%s: expected an http or https URL, found “%s”"), key, shown);
      return NULL;
    }

  return g_steal_pointer (&uri);
}

static gboolean
is_token (const char *text,
          gsize       length)
{
  if (length == 0)
    return FALSE;

  for (gsize i = 0; i < length; i++)
    {
      if (!g_ascii_isalnum (text[i]) && strchr ("!#$%&'*+-.^_`|~", text[i]) == NULL)
        return FALSE;
    }

  return TRUE;
}

static gboolean
is_reserved (SymfonicHttpSourcePrivate *priv,
             const char                *name)
{
  for (guint i = 0; reserved_headers[i] != NULL; i++)
    {
      if (g_ascii_strcasecmp (name, reserved_headers[i]) == 0)
        return TRUE;
    }
  for (guint i = 0; i < priv->reserved->len; i++)
    {
      if (g_ascii_strcasecmp (name, g_ptr_array_index (priv->reserved, i)) == 0)
        return TRUE;
    }

  return FALSE;
}

/* One "Name: value" setting as a head line ending in CRLF, appended to
 * @lines; @where says which entry it is. The line may hold a secret: an
 * error names only its place, or its name once the name is known to be
 * one. */
static gboolean
append_header (SymfonicHttpSourcePrivate  *priv,
               GString                    *lines,
               const char                 *key,
               const char                 *where,
               const char                 *line,
               GError                    **error)
{
  const char *colon = strchr (line, ':');
  g_autofree char *name = NULL;
  g_autofree char *value = NULL;

  if (colon == NULL || !is_token (line, colon - line))
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("%s: expected “Name: value”, found something else at %s"), key, where);
      return FALSE;
    }

  name = g_strndup (line, colon - line);
  value = g_strstrip (g_strdup (colon + 1));
  for (const char *p = value; *p != '\0'; p++)
    {
      if (g_ascii_iscntrl (*p) && *p != '\t')
        {
          g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                       _("%s: expected a header value without control characters, found one in “%s”"), key, name);
          return FALSE;
        }
    }
  if (is_reserved (priv, name))
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("%s: expected headers the source does not set itself, found “%s”"), key, name);
      return FALSE;
    }

  g_string_append (lines, name);
  g_string_append (lines, ": ");
  g_string_append (lines, value);
  g_string_append (lines, "\r\n");
  memset (value, 0, strlen (value));

  return TRUE;
}

static gboolean
append_setting_headers (SymfonicHttpSourcePrivate  *priv,
                        GString                    *lines,
                        GError                    **error)
{
  for (guint i = 0; priv->request_headers != NULL && priv->request_headers[i] != NULL; i++)
    {
      g_autofree char *where = g_strdup_printf (_("entry %u"), i + 1);

      if (!append_header (priv, lines, priv->headers_key, where, priv->request_headers[i], error))
        return FALSE;
    }

  return TRUE;
}

/* One "Name: value" per line; blank lines and those starting with '#'
 * say nothing. Read through the one checked loader, so that a FIFO or a
 * device is refused without blocking; errors name the file and the line,
 * never what it holds. */
static gboolean
append_file_headers (SymfonicHttpSourcePrivate  *priv,
                     GString                    *lines,
                     GError                    **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *contents = NULL;
  g_autofree char *name = NULL;
  gboolean ok = TRUE;
  gsize length;
  char *line;
  char *next;
  guint number = 0;

  if (priv->headers_file == NULL)
    return TRUE;

  if (!symfonic_config_file_load (priv->headers_file, MAX_HEADERS_FILE_BYTES, &contents, &length, &local_error))
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, "headers-file: %s", local_error->message);
      return FALSE;
    }
  name = g_file_get_parse_name (priv->headers_file);
  if (!g_utf8_validate (contents, length, NULL) || memchr (contents, '\0', length) != NULL)
    {
      memset (contents, 0, length);
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("headers-file: expected UTF-8 text in “%s”, found other bytes"), name);
      return FALSE;
    }

  for (line = contents; ok && line != NULL; line = next)
    {
      char *end = strchr (line, '\n');
      const char *text;

      next = end != NULL ? end + 1 : NULL;
      if (end != NULL)
        *end = '\0';
      number++;
      text = g_strstrip (line);
      if (*text == '\0' || *text == '#')
        continue;

      {
        g_autofree char *where = g_strdup_printf (_("%s line %u"), name, number);
        const char *colon = strchr (text, ':');

        ok = append_header (priv, lines, "headers-file", where, text, error);
        /* what the file holds is a credential, whatever its header */
        if (ok && priv->record != NULL && colon != NULL)
          g_ptr_array_add (priv->file_values, g_strstrip (g_strdup (colon + 1)));
      }
    }
  memset (contents, 0, length);

  return ok;
}

/* Loaded through the checked loader before GTlsFileDatabase reads it,
 * which would block on a FIFO or read a device without end. */
static gboolean
check_tls_ca_file (SymfonicHttpSourcePrivate  *priv,
                   GError                    **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *contents = NULL;

  if (priv->tls_ca_file == NULL)
    return TRUE;

  if (!symfonic_config_file_load (priv->tls_ca_file, SYMFONIC_CONFIG_FILE_MAX_SIZE, &contents, NULL, &local_error))
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, "tls-ca-file: %s", local_error->message);
      return FALSE;
    }

  return TRUE;
}

static gboolean
initable_init (GInitable     *initable,
               GCancellable  *cancellable,
               GError       **error)
{
  SymfonicHttpSource *self = SYMFONIC_HTTP_SOURCE (initable);
  SymfonicHttpSourcePrivate *priv = symfonic_http_source_get_instance_private (self);
  SymfonicHttpSourceClass *klass = SYMFONIC_HTTP_SOURCE_GET_CLASS (self);
  g_autoptr(GString) lines = g_string_new (NULL);
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GUri) uri = NULL;
  const char *tls_ca_path;
  gboolean prepared;

  g_return_val_if_fail (klass->write_request != NULL && klass->handle_frame != NULL, FALSE);

  /* one setting under two names: set twice, which one was meant? */
  if (priv->url_keys_set == 3)
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                           _("base-url: expected url or base-url, found both (one is another name for the other)"));
      return FALSE;
    }
  if (priv->headers_keys_set == 3)
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                           _("extra-headers: expected request-headers or extra-headers, found both (one is another "
                             "name for the other)"));
      return FALSE;
    }

  uri = parse_url (priv->url_key != NULL ? priv->url_key : "url or base-url", priv->url, error);
  if (uri == NULL)
    return FALSE;

  if (!append_setting_headers (priv, lines, error) || !append_file_headers (priv, lines, error))
    {
      memset (lines->str, 0, lines->len);
      return FALSE;
    }

  /* each stream holds two descriptors: the client's connection and the
   * upstream's */
  priv->connection_cap = priv->max_connections != 0 ? priv->max_connections : MAX (fd_limit () / 2, 1);
  if (priv->connection_cap > fd_limit ())
    {
      memset (lines->str, 0, lines->len);
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("max-connections: expected at most the process’s limit of %u open files, found %u"),
                   fd_limit (), priv->connection_cap);
      return FALSE;
    }

  if (!check_tls_ca_file (priv, error))
    {
      memset (lines->str, 0, lines->len);
      return FALSE;
    }

  priv->display_url = g_uri_to_string_partial (uri, G_URI_HIDE_USERINFO | G_URI_HIDE_QUERY |
                                                    G_URI_HIDE_FRAGMENT);
  priv->uri = g_steal_pointer (&uri);

  priv->own_lines = g_string_new (NULL);
  priv->preparing = TRUE;
  prepared = klass->prepare == NULL || klass->prepare (self, cancellable, error);
  priv->preparing = FALSE;
  g_string_append_len (lines, priv->own_lines->str, priv->own_lines->len);
  memset (priv->own_lines->str, 0, priv->own_lines->len);
  g_string_free (g_steal_pointer (&priv->own_lines), TRUE);
  if (!prepared)
    {
      memset (lines->str, 0, lines->len);
      return FALSE;
    }

  /* no Accept-Encoding: the upstream sends identity, since a compressor
   * between frames would hold them back until its block fills */
  g_string_append (lines, "Accept: text/event-stream\r\n");
  priv->header_lines = g_string_free (g_steal_pointer (&lines), FALSE);

  if (priv->record != NULL && !start_recording (self, error))
    return FALSE;

  /* on every worker, its own kept-alive connections to the upstream */
  tls_ca_path = priv->tls_ca_file != NULL ? g_file_peek_path (priv->tls_ca_file) : NULL;
  priv->upstream = g_initable_new (SYMFONIC_TYPE_UPSTREAM, cancellable, &local_error,
                                   "origin", priv->url,
                                   "tls-ca-file", tls_ca_path,
                                   "connect-timeout", priv->connect_timeout,
                                   NULL);
  if (priv->upstream == NULL)
    {
      /* the URL was checked above: what is left is the certificates */
      g_propagate_prefixed_error (error, g_steal_pointer (&local_error), "tls-ca-file: ");
      return FALSE;
    }

  return TRUE;
}

/* Once only: a second call gives the first one's answer, as GInitable
 * wants, whatever was set in between. */
static gboolean
symfonic_http_source_initable_init_impl (GInitable     *initable,
                                         GCancellable  *cancellable,
                                         GError       **error)
{
  SymfonicHttpSourcePrivate *priv = symfonic_http_source_get_instance_private (SYMFONIC_HTTP_SOURCE (initable));

  return symfonic_init_once (&priv->init, initable_init, initable, cancellable, error);
}

static void
symfonic_http_source_initable_init (GInitableIface *iface)
{
  iface->init = symfonic_http_source_initable_init_impl;
}

/* --- what the requests read ---------------------------------------------- */

SymfonicUpstream *
symfonic_http_source_get_upstream (SymfonicHttpSource *self)
{
  SymfonicHttpSourcePrivate *priv = symfonic_http_source_get_instance_private (self);

  return priv->upstream;
}

const char *
symfonic_http_source_get_header_lines (SymfonicHttpSource *self)
{
  SymfonicHttpSourcePrivate *priv = symfonic_http_source_get_instance_private (self);

  return priv->header_lines;
}

gboolean
symfonic_http_source_get_follow_redirects (SymfonicHttpSource *self)
{
  SymfonicHttpSourcePrivate *priv = symfonic_http_source_get_instance_private (self);

  return priv->follow_redirects;
}

guint
symfonic_http_source_get_timeout_seconds (SymfonicHttpSource *self)
{
  SymfonicHttpSourcePrivate *priv = symfonic_http_source_get_instance_private (self);

  return priv->timeout;
}

/* Once the head is in. */
guint
symfonic_http_source_get_idle_seconds (SymfonicHttpSource *self)
{
  SymfonicHttpSourcePrivate *priv = symfonic_http_source_get_instance_private (self);

  return priv->idle_timeout_set ? priv->idle_timeout : priv->timeout;
}

gsize
symfonic_http_source_get_event_bytes (SymfonicHttpSource *self)
{
  SymfonicHttpSourcePrivate *priv = symfonic_http_source_get_instance_private (self);

  return priv->max_event_bytes;
}

gboolean
symfonic_http_source_get_holds_head (SymfonicHttpSource *self)
{
  SymfonicHttpSourcePrivate *priv = symfonic_http_source_get_instance_private (self);

  return priv->holds_head;
}

const char *
symfonic_http_source_get_url_key (SymfonicHttpSource *self)
{
  SymfonicHttpSourcePrivate *priv = symfonic_http_source_get_instance_private (self);

  return priv->url_key != NULL ? priv->url_key : "url";
}

/* --- recording ------------------------------------------------------------ */

/* The name pipelines give the source's type, which plays its recordings
 * back: a type registers under one. */
static char *
dup_type_name (SymfonicHttpSource *self)
{
  SymfonicRegistry *registry = symfonic_registry_get_default ();
  const char * const *builtin = symfonic_registry_list_builtin_types ();
  g_auto(GStrv) names = symfonic_registry_list_types (registry);

  for (guint i = 0; builtin[i] != NULL; i++)
    {
      if (symfonic_registry_lookup (registry, builtin[i]) == G_OBJECT_TYPE (self))
        return g_strdup (builtin[i]);
    }
  for (guint i = 0; names[i] != NULL; i++)
    {
      if (symfonic_registry_lookup (registry, names[i]) == G_OBJECT_TYPE (self))
        return g_strdup (names[i]);
    }

  return g_strdup (G_OBJECT_TYPE_NAME (self));
}

static const char *
wire_format_of (const char *type_name)
{
  static const struct { const char *type, *wire; } wires[] = {
    { "runtime", "symfonic-typed-sse" },
    { "openai", "openai-chat-completions" },
    { "anthropic", "anthropic-messages" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (wires); i++)
    {
      if (g_str_equal (type_name, wires[i].type))
        return wires[i].wire;
    }

  return "sse";
}

static gboolean
start_recording (SymfonicHttpSource  *self,
                 GError             **error)
{
  SymfonicHttpSourcePrivate *priv = symfonic_http_source_get_instance_private (self);
  GParamSpec *model_pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (self), "model");
  g_autofree char *type_name = dup_type_name (self);
  g_autofree char *model = NULL;

  /* a provider's model: its recordings play back through a source that
   * asks for it */
  if (model_pspec != NULL && G_PARAM_SPEC_VALUE_TYPE (model_pspec) == G_TYPE_STRING)
    g_object_get (self, "model", &model, NULL);

  priv->recorder = symfonic_recorder_new (priv->record, priv->record_ratio, priv->record_max_bytes,
                                          (const char * const *) priv->record_redact, type_name,
                                          wire_format_of (type_name), model, error);
  if (priv->recorder == NULL)
    return FALSE;

  /* the source's own credentials: those its head lines name as such
   * (its configured key among them), and all of the headers-file */
  symfonic_recorder_add_header_secrets (priv->recorder, priv->header_lines);
  for (guint i = 0; i < priv->file_values->len; i++)
    {
      char *value = g_ptr_array_index (priv->file_values, i);

      symfonic_recorder_add_secret (priv->recorder, value);
      memset (value, 0, strlen (value));
    }
  g_ptr_array_set_size (priv->file_values, 0);

  return TRUE;
}

SymfonicRecorder *
symfonic_http_source_get_recorder (SymfonicHttpSource *self)
{
  SymfonicHttpSourcePrivate *priv = symfonic_http_source_get_instance_private (self);

  return priv->recorder;
}

/**
 * symfonic_http_source_play:
 * @self: an initialised #SymfonicHttpSource
 * @stream: a stream @self admitted ([method@Symfonic.Source.admit])
 * @cancellable: (nullable): the stream's cancellable, as
 *   [method@Symfonic.Source.start] takes it
 * @recording: what an upstream of @self's type sent
 * @time_scale: multiplies every recorded pause: 1 plays in real time, 0
 *   as fast as reads can come, one per main-loop iteration
 *
 * Serves @stream as [method@Symfonic.Source.start] does, but with
 * @recording in place of the upstream: the source writes its request as
 * ever, and reads the recorded response through the same reading as a
 * live one (its head, each recorded read of the body as one read, its
 * frames, back-pressure, how it ended). A recording thus shows what this
 * source makes of what an upstream once sent, chunking and timing
 * included. The `replay` source plays recordings this way.
 */
void
symfonic_http_source_play (SymfonicHttpSource *self,
                           SymfonicStream     *stream,
                           GCancellable       *cancellable,
                           SymfonicRecording  *recording,
                           double              time_scale)
{
  SymfonicHttpSourcePrivate *priv;

  g_return_if_fail (SYMFONIC_IS_HTTP_SOURCE (self));
  g_return_if_fail (SYMFONIC_IS_STREAM (stream));
  g_return_if_fail (recording != NULL);
  g_return_if_fail (time_scale >= 0);

  priv = symfonic_http_source_get_instance_private (self);
  g_return_if_fail (priv->upstream != NULL);

  symfonic_http_request_start (self, stream, cancellable,
                               g_object_steal_qdata (G_OBJECT (stream), connection_quark),
                               recording, time_scale);
}

/* --- what a subclass uses ------------------------------------------------ */

/**
 * symfonic_http_source_set_holds_head:
 * @self: a #SymfonicHttpSource
 * @holds_head: whether the client's response head waits for the first event
 *
 * Makes the client's response head wait for the upstream's first event
 * (symfonic_stream_hold_head()), so that a failure before it, a refusal
 * above all, reaches the client as a real status with a JSON body rather
 * than as an error frame. [property@Symfonic.HttpSource:timeout] then
 * bounds the wait for that event, which bytes without an event do not
 * extend. For a subclass's instance init.
 */
void
symfonic_http_source_set_holds_head (SymfonicHttpSource *self,
                                     gboolean            holds_head)
{
  SymfonicHttpSourcePrivate *priv;

  g_return_if_fail (SYMFONIC_IS_HTTP_SOURCE (self));

  priv = symfonic_http_source_get_instance_private (self);
  g_return_if_fail (!symfonic_init_once_is_done (&priv->init));

  priv->holds_head = holds_head;
}

/**
 * symfonic_http_source_set_default_idle_timeout:
 * @self: a #SymfonicHttpSource
 * @seconds: the default of [property@Symfonic.HttpSource:idle-timeout],
 *   0 for none
 *
 * Gives the subclass an idle timeout of its own, which the pipeline file
 * may still change; without one, [property@Symfonic.HttpSource:timeout]
 * bounds every silence. For a subclass's instance init.
 */
void
symfonic_http_source_set_default_idle_timeout (SymfonicHttpSource *self,
                                               guint               seconds)
{
  SymfonicHttpSourcePrivate *priv;

  g_return_if_fail (SYMFONIC_IS_HTTP_SOURCE (self));

  priv = symfonic_http_source_get_instance_private (self);
  g_return_if_fail (!symfonic_init_once_is_done (&priv->init));

  priv->idle_timeout = seconds;
  priv->idle_timeout_set = TRUE;
}

/**
 * symfonic_http_source_set_default_max_event_bytes:
 * @self: a #SymfonicHttpSource
 * @max_bytes: the default of [property@Symfonic.HttpSource:max-event-bytes]
 *
 * Gives the subclass its own bound on one event, which the pipeline file
 * may still change. For a subclass's instance init.
 */
void
symfonic_http_source_set_default_max_event_bytes (SymfonicHttpSource *self,
                                                  guint               max_bytes)
{
  SymfonicHttpSourcePrivate *priv;

  g_return_if_fail (SYMFONIC_IS_HTTP_SOURCE (self));

  priv = symfonic_http_source_get_instance_private (self);
  g_return_if_fail (!symfonic_init_once_is_done (&priv->init));

  priv->max_event_bytes = max_bytes;
}

/**
 * symfonic_http_source_reserve_header:
 * @self: a #SymfonicHttpSource
 * @name: a request header's name
 *
 * Makes @name one the subclass sets itself (a key, a version), which
 * [property@Symfonic.HttpSource:request-headers] and
 * [property@Symfonic.HttpSource:headers-file] may not set, in any case.
 * The framing headers, `Host` and `Accept` are always reserved. For a
 * subclass's instance init.
 */
void
symfonic_http_source_reserve_header (SymfonicHttpSource *self,
                                     const char         *name)
{
  SymfonicHttpSourcePrivate *priv;

  g_return_if_fail (SYMFONIC_IS_HTTP_SOURCE (self));
  g_return_if_fail (name != NULL && is_token (name, strlen (name)));

  priv = symfonic_http_source_get_instance_private (self);
  g_return_if_fail (!symfonic_init_once_is_done (&priv->init));

  g_ptr_array_add (priv->reserved, g_strdup (name));
}

/**
 * symfonic_http_source_add_request_header:
 * @self: a #SymfonicHttpSource
 * @name: a header name
 * @value: its value, without line breaks
 *
 * Adds a header to every request of the source, after those of the
 * settings: a key read from a file, an API version. Only from
 * [vfunc@Symfonic.HttpSource.prepare]. The value may be a secret: it goes
 * into no log or error.
 */
void
symfonic_http_source_add_request_header (SymfonicHttpSource *self,
                                         const char         *name,
                                         const char         *value)
{
  SymfonicHttpSourcePrivate *priv;

  g_return_if_fail (SYMFONIC_IS_HTTP_SOURCE (self));
  g_return_if_fail (name != NULL && is_token (name, strlen (name)));
  g_return_if_fail (value != NULL && strpbrk (value, "\r\n") == NULL);

  priv = symfonic_http_source_get_instance_private (self);
  g_return_if_fail (priv->preparing);

  g_string_append (priv->own_lines, name);
  g_string_append (priv->own_lines, ": ");
  g_string_append (priv->own_lines, value);
  g_string_append (priv->own_lines, "\r\n");
}

/**
 * symfonic_http_source_get_uri:
 * @self: a #SymfonicHttpSource
 *
 * The upstream's URL, parsed, once [property@Symfonic.HttpSource:url] has
 * been checked: from [vfunc@Symfonic.HttpSource.prepare] on.
 *
 * Returns: (transfer none) (nullable): the URL, or %NULL before
 */
GUri *
symfonic_http_source_get_uri (SymfonicHttpSource *self)
{
  SymfonicHttpSourcePrivate *priv;

  g_return_val_if_fail (SYMFONIC_IS_HTTP_SOURCE (self), NULL);

  priv = symfonic_http_source_get_instance_private (self);

  return priv->uri;
}

/**
 * symfonic_http_source_get_display_url:
 * @self: a #SymfonicHttpSource
 *
 * The upstream's URL as logs show it: without user info, query or
 * fragment, which may carry secrets. From
 * [vfunc@Symfonic.HttpSource.prepare] on.
 *
 * Returns: (nullable): the URL for the log, or %NULL before
 */
const char *
symfonic_http_source_get_display_url (SymfonicHttpSource *self)
{
  SymfonicHttpSourcePrivate *priv;

  g_return_val_if_fail (SYMFONIC_IS_HTTP_SOURCE (self), NULL);

  priv = symfonic_http_source_get_instance_private (self);

  return priv->display_url;
}

/* --- the object ---------------------------------------------------------- */

static void
symfonic_http_source_finalize (GObject *object)
{
  SymfonicHttpSourcePrivate *priv =
    symfonic_http_source_get_instance_private (SYMFONIC_HTTP_SOURCE (object));

  g_free (priv->url);
  g_strfreev (priv->request_headers);
  g_clear_object (&priv->headers_file);
  g_clear_object (&priv->tls_ca_file);
  g_clear_object (&priv->record);
  g_strfreev (priv->record_redact);
  if (priv->recorder != NULL)
    {
      /* the runs that ended reach their files before the source goes */
      symfonic_recorder_flush (RECORD_FLUSH_US);
      symfonic_recorder_unref (priv->recorder);
    }
  for (guint i = 0; i < priv->file_values->len; i++)
    {
      char *value = g_ptr_array_index (priv->file_values, i);

      memset (value, 0, strlen (value));
    }
  g_ptr_array_unref (priv->file_values);
  g_ptr_array_unref (priv->reserved);
  symfonic_init_once_clear (&priv->init);
  g_clear_pointer (&priv->uri, g_uri_unref);
  g_free (priv->display_url);
  if (priv->header_lines != NULL)
    memset (priv->header_lines, 0, strlen (priv->header_lines));
  g_free (priv->header_lines);
  g_clear_object (&priv->upstream);

  G_OBJECT_CLASS (symfonic_http_source_parent_class)->finalize (object);
}

static void
symfonic_http_source_get_property (GObject    *object,
                                   guint       prop_id,
                                   GValue     *value,
                                   GParamSpec *pspec)
{
  SymfonicHttpSource *self = SYMFONIC_HTTP_SOURCE (object);
  SymfonicHttpSourcePrivate *priv = symfonic_http_source_get_instance_private (self);

  switch (prop_id)
    {
    case PROP_URL:
    case PROP_BASE_URL:
      g_value_set_string (value, priv->url);
      break;
    case PROP_REQUEST_HEADERS:
    case PROP_EXTRA_HEADERS:
      g_value_set_boxed (value, priv->request_headers);
      break;
    case PROP_HEADERS_FILE:
      g_value_set_object (value, priv->headers_file);
      break;
    case PROP_MAX_CONNECTIONS:
      g_value_set_uint (value, priv->max_connections);
      break;
    case PROP_CONNECT_TIMEOUT:
      g_value_set_uint (value, priv->connect_timeout);
      break;
    case PROP_TIMEOUT:
      g_value_set_uint (value, priv->timeout);
      break;
    case PROP_IDLE_TIMEOUT:
      /* what applies: timeout itself when there is no idle timeout */
      g_value_set_uint (value, symfonic_http_source_get_idle_seconds (self));
      break;
    case PROP_FOLLOW_REDIRECTS:
      g_value_set_boolean (value, priv->follow_redirects);
      break;
    case PROP_TLS_CA_FILE:
      g_value_set_object (value, priv->tls_ca_file);
      break;
    case PROP_MAX_EVENT_BYTES:
      g_value_set_uint (value, priv->max_event_bytes);
      break;
    case PROP_RECORD:
      g_value_set_object (value, priv->record);
      break;
    case PROP_RECORD_RATIO:
      g_value_set_double (value, priv->record_ratio);
      break;
    case PROP_RECORD_MAX_BYTES:
      g_value_set_uint64 (value, priv->record_max_bytes);
      break;
    case PROP_RECORD_REDACT:
      g_value_set_boxed (value, priv->record_redact);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

/* The settings are not construct-only properties, since GObject would
 * set those it was not given to their defaults: then neither a setting
 * left unset (idle-timeout) nor a subclass's own default could be told
 * apart. They are settable until the source is initialised all the same,
 * since a source serves every worker thread at once once it is. */
static void
symfonic_http_source_set_property (GObject      *object,
                                   guint         prop_id,
                                   const GValue *value,
                                   GParamSpec   *pspec)
{
  SymfonicHttpSourcePrivate *priv =
    symfonic_http_source_get_instance_private (SYMFONIC_HTTP_SOURCE (object));

  if (symfonic_init_once_is_done (&priv->init))
    {
      g_critical ("%s: “%s” is set before the source is initialised, not after",
                  G_OBJECT_TYPE_NAME (object), g_param_spec_get_name (pspec));
      return;
    }

  switch (prop_id)
    {
    case PROP_URL:
    case PROP_BASE_URL:
      g_free (priv->url);
      priv->url = g_value_dup_string (value);
      priv->url_key = g_param_spec_get_name (pspec);
      priv->url_keys_set |= prop_id == PROP_URL ? 1 : 2;
      break;
    case PROP_REQUEST_HEADERS:
    case PROP_EXTRA_HEADERS:
      g_strfreev (priv->request_headers);
      priv->request_headers = g_value_dup_boxed (value);
      priv->headers_key = g_param_spec_get_name (pspec);
      priv->headers_keys_set |= prop_id == PROP_REQUEST_HEADERS ? 1 : 2;
      break;
    case PROP_HEADERS_FILE:
      g_set_object (&priv->headers_file, g_value_get_object (value));
      break;
    case PROP_MAX_CONNECTIONS:
      priv->max_connections = g_value_get_uint (value);
      break;
    case PROP_CONNECT_TIMEOUT:
      priv->connect_timeout = g_value_get_uint (value);
      break;
    case PROP_TIMEOUT:
      priv->timeout = g_value_get_uint (value);
      break;
    case PROP_IDLE_TIMEOUT:
      priv->idle_timeout = g_value_get_uint (value);
      priv->idle_timeout_set = TRUE;
      break;
    case PROP_FOLLOW_REDIRECTS:
      priv->follow_redirects = g_value_get_boolean (value);
      break;
    case PROP_TLS_CA_FILE:
      g_set_object (&priv->tls_ca_file, g_value_get_object (value));
      break;
    case PROP_MAX_EVENT_BYTES:
      priv->max_event_bytes = g_value_get_uint (value);
      break;
    case PROP_RECORD:
      g_set_object (&priv->record, g_value_get_object (value));
      break;
    case PROP_RECORD_RATIO:
      priv->record_ratio = g_value_get_double (value);
      break;
    case PROP_RECORD_MAX_BYTES:
      priv->record_max_bytes = g_value_get_uint64 (value);
      break;
    case PROP_RECORD_REDACT:
      g_strfreev (priv->record_redact);
      priv->record_redact = g_value_dup_boxed (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static gboolean
symfonic_http_source_real_end (SymfonicHttpSource   *self,
                               SymfonicHttpRequest  *request,
                               GError              **error)
{
  g_propagate_error (error, symfonic_http_request_new_failure (request, SYMFONIC_ERROR_UPSTREAM,
                                                               "The upstream closed the stream early",
                                                               "the body ended before the stream's end"));

  return FALSE;
}

/* Upstream text only ever reaches the log, and only a little of it. */
static char *
quote_upstream (const char *text)
{
  g_autofree char *cut = g_strndup (text, 64);

  return g_strescape (cut, NULL);
}

static gboolean
symfonic_http_source_real_check_head (SymfonicHttpSource   *self,
                                      SymfonicHttpRequest  *request,
                                      guint                 status,
                                      GError              **error)
{
  const char *content_type;

  if (!SOUP_STATUS_IS_SUCCESSFUL (status))
    {
      /* the status's standard phrase: the upstream's body and reason
       * phrase stay out of even the log */
      g_propagate_error (error, symfonic_http_request_new_failure (request, SYMFONIC_ERROR_UPSTREAM,
                                                                   "The upstream refused the request",
                                                                   "answered HTTP %u %s", status,
                                                                   soup_status_get_phrase (status)));
      return FALSE;
    }

  content_type = symfonic_http_request_get_response_header (request, "Content-Type");
  if (!symfonic_http_is_event_stream (content_type))
    {
      g_autofree char *quoted = quote_upstream (content_type != NULL ? content_type : "");

      g_propagate_error (error, symfonic_http_request_new_failure (request, SYMFONIC_ERROR_UPSTREAM,
                                                                   "The upstream did not answer with an event stream",
                                                                   "answered “%s” instead of an event stream",
                                                                   quoted));
      return FALSE;
    }

  return TRUE;
}

static void
symfonic_http_source_class_init (SymfonicHttpSourceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = symfonic_http_source_finalize;
  object_class->get_property = symfonic_http_source_get_property;
  object_class->set_property = symfonic_http_source_set_property;
  klass->check_head = symfonic_http_source_real_check_head;
  klass->end = symfonic_http_source_real_end;
  connection_quark = g_quark_from_static_string ("symfonic-http-source-connection");

  /**
   * SymfonicHttpSource:url:
   *
   * The upstream's `http` or `https` URL: where each stream's request
   * goes, or the root a source type adds its own path to. Required.
   */
  properties[PROP_URL] =
    g_param_spec_string ("url", "URL",
                         "The upstream's http or https URL: the endpoint each request is POSTed to, or the "
                         "API root the source adds its own path to",
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicHttpSource:base-url:
   *
   * Another name for [property@Symfonic.HttpSource:url], the one the
   * provider sources were first configured with.
   */
  properties[PROP_BASE_URL] =
    g_param_spec_string ("base-url", "Base URL",
                         "Another name for url, such as https://api.openai.com/v1",
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicHttpSource:request-headers:
   *
   * Headers sent with every request, each as `Name: value`. Neither the
   * framing headers nor those the source sets itself may be among them.
   */
  properties[PROP_REQUEST_HEADERS] =
    g_param_spec_boxed ("request-headers", "Request headers",
                        "Extra headers sent to the upstream, each as “Name: value”",
                        G_TYPE_STRV,
                        G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicHttpSource:extra-headers:
   *
   * Another name for [property@Symfonic.HttpSource:request-headers].
   */
  properties[PROP_EXTRA_HEADERS] =
    g_param_spec_boxed ("extra-headers", "Extra headers",
                        "Another name for request-headers",
                        G_TYPE_STRV,
                        G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicHttpSource:headers-file:
   *
   * A file of headers sent with every request, one `Name: value` per line
   * (blank lines and lines starting with `#` are skipped), after those of
   * [property@Symfonic.HttpSource:request-headers]: credentials kept out
   * of the pipeline file. Read when the source is initialised; what it
   * holds goes into no log or error.
   */
  properties[PROP_HEADERS_FILE] =
    g_param_spec_object ("headers-file", "Headers file",
                         "A file of extra headers, one “Name: value” per line (# starts a comment line), "
                         "read at load; its values are never logged or shown",
                         G_TYPE_FILE,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicHttpSource:max-connections:
   *
   * How many streams the source serves at once, over all workers, each on
   * a connection of its own; the stream past it is refused before it
   * starts, %SYMFONIC_ERROR_OVERLOADED with `Retry-After: 1`. 0 is half
   * the process's open-file limit, since each stream holds a client's
   * descriptor and an upstream's.
   */
  properties[PROP_MAX_CONNECTIONS] =
    g_param_spec_uint ("max-connections", "Maximum connections",
                       "Streams the source serves at once, over all workers, each on its own upstream "
                       "connection; one more is refused with 503 and Retry-After. "
                       "0 for half the process's open-file limit",
                       0, G_MAXUINT, 0,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicHttpSource:connect-timeout:
   *
   * Seconds a new connection to the upstream may take, its TLS handshake
   * included; 0 waits forever.
   */
  properties[PROP_CONNECT_TIMEOUT] =
    g_param_spec_uint ("connect-timeout", "Connect timeout",
                       "Seconds a new upstream connection, its TLS handshake included, may take; "
                       "0 waits forever",
                       0, G_MAXUINT, DEFAULT_CONNECT_TIMEOUT,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicHttpSource:timeout:
   *
   * Seconds the upstream may stay silent until its response head, and
   * then between bytes too unless the source has an
   * [property@Symfonic.HttpSource:idle-timeout]. A source whose client
   * waits for its first event ([method@Symfonic.HttpSource.set_holds_head])
   * gives that event this long from the request, however many bytes
   * without an event came before it. 0 waits forever.
   */
  properties[PROP_TIMEOUT] =
    g_param_spec_uint ("timeout", "Timeout",
                       "Seconds the upstream may stay silent, until its head and, without idle-timeout, "
                       "between bytes; where the client waits for the first event, the seconds that event "
                       "may take, pings and comments not counting. 0 waits forever",
                       0, G_MAXUINT, DEFAULT_TIMEOUT,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicHttpSource:idle-timeout:
   *
   * Seconds the upstream may stay silent between bytes once its response
   * head is in; 0 waits forever. Unless it is set here or by the source
   * type, [property@Symfonic.HttpSource:timeout] applies, and reading the
   * property gives that.
   */
  properties[PROP_IDLE_TIMEOUT] =
    g_param_spec_uint ("idle-timeout", "Idle timeout",
                       "Seconds the upstream may stay silent between bytes once its head is in; "
                       "0 waits forever. Unless set here or by the source type, timeout applies",
                       0, G_MAXUINT, DEFAULT_TIMEOUT,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicHttpSource:follow-redirects:
   *
   * Whether a redirect to the upstream's own origin (scheme, host and
   * port) is followed, up to five times, sending the request again; the
   * request headers never go to another origin, and a redirect elsewhere
   * fails the stream.
   */
  properties[PROP_FOLLOW_REDIRECTS] =
    g_param_spec_boolean ("follow-redirects", "Follow redirects",
                          "Follow the upstream's redirects to its own origin (scheme, host and port), "
                          "POSTing the request again; a redirect elsewhere always fails the stream",
                          FALSE,
                          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicHttpSource:tls-ca-file:
   *
   * A PEM file of the certificate authorities an `https` upstream is
   * checked against, instead of the system's trust. A pipeline file's
   * relative path is relative to that file; the file is checked when the
   * source is initialised.
   */
  properties[PROP_TLS_CA_FILE] =
    g_param_spec_object ("tls-ca-file", "TLS CA file",
                         "A PEM file of the certificate authorities an https upstream is checked against, "
                         "instead of the system's trust",
                         G_TYPE_FILE,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicHttpSource:max-event-bytes:
   *
   * The largest event-stream frame the upstream may send; a larger one
   * fails the stream. 0 for no limit.
   */
  properties[PROP_MAX_EVENT_BYTES] =
    g_param_spec_uint ("max-event-bytes", "Maximum event bytes",
                       "The largest event the upstream may send; a larger one fails the stream. "
                       "0 for no limit",
                       0, G_MAXUINT, DEFAULT_MAX_EVENT_BYTES,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);

  /**
   * SymfonicHttpSource:record:
   *
   * A folder the source records its runs into, one
   * [struct@Symfonic.Recording] per run, `RUN_ID.jsonl`, mode 0600,
   * written whole (a temporary file renamed) once the run ended, marked
   * truncated when bytes are missing. A pipeline file's relative path is
   * relative to that file; the folder must exist and be writable when the
   * source is initialised. Unset, nothing is recorded, at no cost.
   */
  properties[PROP_RECORD] =
    symfonic_param_spec_folder ("record", "Record",
                                "A folder where each run's upstream answer is recorded, one RUN_ID.jsonl per run, "
                                "its secrets removed; unset records nothing",
                                G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicHttpSource:record-ratio:
   *
   * The share of runs recorded, from 0 to 1, decided by each run's id:
   * 0.01 records about one run in a hundred.
   */
  properties[PROP_RECORD_RATIO] =
    g_param_spec_double ("record-ratio", "Record ratio",
                         "The share of runs recorded, from 0 to 1, decided by each run's id",
                         0.0, 1.0, 1.0,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicHttpSource:record-max-bytes:
   *
   * The most body bytes a run's recording keeps; past it the recording
   * is marked truncated and keeps what came before.
   */
  properties[PROP_RECORD_MAX_BYTES] =
    g_param_spec_uint64 ("record-max-bytes", "Record max bytes",
                         "The most body bytes one run's recording keeps; past it the recording is marked "
                         "truncated",
                         1024, G_MAXUINT32, DEFAULT_RECORD_MAX_BYTES,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicHttpSource:record-redact:
   *
   * Regular expressions (PCRE, matched on bytes) whose matches are masked
   * in every recording, in the request and in the body, besides what the
   * recorder always removes: credential headers, the source's own key and
   * headers-file values, and key-shaped strings (`sk-…`, bearer and
   * basic credentials, JWTs, AWS, Google, GitHub and Slack keys). A
   * pattern that does not compile fails the load.
   */
  properties[PROP_RECORD_REDACT] =
    g_param_spec_boxed ("record-redact", "Record redact",
                        "Regular expressions whose matches are masked in recordings, besides credential "
                        "headers, the source's key and key-shaped strings",
                        G_TYPE_STRV,
                        G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
symfonic_http_source_init (SymfonicHttpSource *self)
{
  SymfonicHttpSourcePrivate *priv = symfonic_http_source_get_instance_private (self);

  priv->connect_timeout = DEFAULT_CONNECT_TIMEOUT;
  priv->timeout = DEFAULT_TIMEOUT;
  priv->max_event_bytes = DEFAULT_MAX_EVENT_BYTES;
  priv->record_ratio = 1.0;
  priv->record_max_bytes = DEFAULT_RECORD_MAX_BYTES;
  priv->file_values = g_ptr_array_new_with_free_func (g_free);
  priv->reserved = g_ptr_array_new_with_free_func (g_free);
  priv->url_key = NULL;
  priv->headers_key = "request-headers";
}
