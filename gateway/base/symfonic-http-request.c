/* symfonic-http-request.c: one stream's request of an HTTP source
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <libsoup/soup.h>

#include "symfonic-stream-private.h"
#include "symfonic-http-source-private.h"
#include "symfonic-invocation.h"
#include "symfonic-log-private.h"
#include "symfonic-scratch-private.h"
#include "symfonic-stream.h"
#include "symfonic-stream-log.h"
#include "symfonic-upstream-private.h"

/**
 * SymfonicHttpRequest:
 *
 * The request a [class@Symfonic.HttpSource] sends for one stream, from
 * its first byte to the stream's end, as its subclass sees it: where its
 * events go ([method@Symfonic.HttpRequest.push]), where its upstream's
 * end is said ([method@Symfonic.HttpRequest.complete]), what it has to
 * say about usage and failures, and the subclass's own state for the
 * stream ([method@Symfonic.HttpRequest.set_data]).
 *
 * A request lives on its stream's thread and is used from there only.
 * Once its stream ended, a reference a binding kept only tells that: it
 * pushes nothing more.
 */

G_DEFINE_BOXED_TYPE (SymfonicHttpRequest, symfonic_http_request, symfonic_http_request_ref,
                     symfonic_http_request_unref)

/* a same-origin redirect loop ends here */
#define MAX_REDIRECTS 5

/* where each request's path and body are written, before the body is
 * copied into the bytes the request keeps: no growing per request */
SYMFONIC_SCRATCH_DEFINE (path_scratch);
SYMFONIC_SCRATCH_DEFINE (body_scratch);
SYMFONIC_SCRATCH_DEFINE (header_scratch);

/* The reading every HTTP source does alike: bytes from the worker's read
 * buffer into the SSE parser, frames to the subclass, events to the
 * stream as far as the client keeps up (the upstream is paused otherwise,
 * so a slow client slows it down), and one end of the stream whatever
 * happens: the upstream's end, a failure, or the client leaving. */

static const char *
run_id (SymfonicHttpRequest *req)
{
  return symfonic_invocation_get_run_id (symfonic_stream_get_invocation (req->stream));
}

/* --- failures ------------------------------------------------------------ */

GError *
symfonic_http_request_new_failure_valist (SymfonicHttpRequest *req,
                                          SymfonicError        code,
                                          const char          *public_text,
                                          const char          *format,
                                          va_list              args)
{
  g_autofree char *why = g_strdup_vprintf (format, args);
  const char *url = symfonic_http_source_get_display_url (req->source);
  g_autofree char *kind = NULL;
  g_autoptr(GError) failure = g_error_new_literal (SYMFONIC_ERROR, code, public_text);
  g_autofree char *what = symfonic_log_error_kind (failure);

  /* an upstream that is down fails every request the same way: one line
   * per upstream and kind of failure every interval */
  kind = g_strdup_printf ("upstream %s: %s", url, what);
  symfonic_log_stream (G_LOG_LEVEL_MESSAGE, req->stream, "source", kind, "Run %s: the upstream %s failed: %s",
                       run_id (req), url, why);

  return g_steal_pointer (&failure);
}

/**
 * symfonic_http_request_new_failure: (skip)
 * @request: a #SymfonicHttpRequest
 * @code: the failure's code
 * @public_text: what a client may be shown: fixed text, never the
 *   upstream's
 * @format: printf()-style format of what went wrong, for the log
 * @...: arguments for @format
 *
 * A failure of the upstream whose message is @public_text, since an
 * error's message can reach a client (the error map echoes some). Where
 * the upstream is and what went wrong goes to the log only, with the
 * stream's run id: keep the upstream's words, and secrets, out of
 * @format's arguments, or quote a few bytes of them escaped.
 *
 * Returns: (transfer full): a new %SYMFONIC_ERROR
 */
GError *
symfonic_http_request_new_failure (SymfonicHttpRequest *request,
                                   SymfonicError        code,
                                   const char          *public_text,
                                   const char          *format,
                                   ...)
{
  GError *error;
  va_list args;

  g_return_val_if_fail (request != NULL, NULL);
  g_return_val_if_fail (public_text != NULL && format != NULL, NULL);

  va_start (args, format);
  error = symfonic_http_request_new_failure_valist (request, code, public_text, format, args);
  va_end (args);

  return error;
}

/**
 * symfonic_http_request_new_failure_literal: (rename-to symfonic_http_request_new_failure)
 * @request: a #SymfonicHttpRequest
 * @code: the failure's code
 * @public_text: what a client may be shown: fixed text, never the
 *   upstream's
 * @detail: what went wrong, for the log only
 *
 * As symfonic_http_request_new_failure(), with the log's text given whole.
 *
 * Returns: (transfer full): a new %SYMFONIC_ERROR
 */
GError *
symfonic_http_request_new_failure_literal (SymfonicHttpRequest *request,
                                           SymfonicError        code,
                                           const char          *public_text,
                                           const char          *detail)
{
  g_return_val_if_fail (detail != NULL, NULL);

  return symfonic_http_request_new_failure (request, code, public_text, "%s", detail);
}

/* A transport failure as the client sees it; @timeout is the silence, in
 * seconds, that counts as one. */
static GError *
transport_failure (SymfonicHttpRequest *req,
                   const GError        *error)
{
  SymfonicHttpSource *source = req->source;
  gboolean first_event_late = !req->answering && req->deadline != 0 && g_get_monotonic_time () >= req->deadline;
  guint timeout = req->head_in && !first_event_late ? symfonic_http_source_get_idle_seconds (source)
                                                    : symfonic_http_source_get_timeout_seconds (source);

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
    return symfonic_http_request_new_failure (req, SYMFONIC_ERROR_UPSTREAM_TIMEOUT,
                                              "The upstream did not answer in time", "silent for %u s", timeout);

  if (error->domain == G_RESOLVER_ERROR ||
      g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED) ||
      g_error_matches (error, G_IO_ERROR, G_IO_ERROR_HOST_NOT_FOUND) ||
      g_error_matches (error, G_IO_ERROR, G_IO_ERROR_HOST_UNREACHABLE) ||
      g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE))
    return symfonic_http_request_new_failure (req, SYMFONIC_ERROR_UPSTREAM_UNAVAILABLE,
                                              "The upstream cannot be reached", "%s", error->message);

  return symfonic_http_request_new_failure (req, SYMFONIC_ERROR_UPSTREAM,
                                            "The connection to the upstream failed", "%s", error->message);
}

/* Whether a Content-Type names an event stream, whatever its parameters. */
gboolean
symfonic_http_is_event_stream (const char *content_type)
{
  gsize length;

  if (content_type == NULL)
    return FALSE;
  length = strcspn (content_type, ";");
  while (length > 0 && (content_type[length - 1] == ' ' || content_type[length - 1] == '\t'))
    length--;

  return length == strlen ("text/event-stream") &&
         g_ascii_strncasecmp (content_type, "text/event-stream", length) == 0;
}

static GError *
stream_over (void)
{
  return g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                              "The stream ended while the upstream was still talking");
}

/* --- the request's life -------------------------------------------------- */

/**
 * symfonic_http_request_ref:
 * @request: a #SymfonicHttpRequest
 *
 * Takes a reference: a binding may keep a request past its stream's end,
 * when it only tells that it is over.
 *
 * Returns: (transfer full): @request
 */
SymfonicHttpRequest *
symfonic_http_request_ref (SymfonicHttpRequest *request)
{
  g_return_val_if_fail (request != NULL, NULL);

  g_ref_count_inc (&request->ref_count);

  return request;
}

/**
 * symfonic_http_request_unref:
 * @request: (transfer full): a #SymfonicHttpRequest
 *
 * Drops a reference.
 */
void
symfonic_http_request_unref (SymfonicHttpRequest *request)
{
  g_return_if_fail (request != NULL);

  if (!g_ref_count_dec (&request->ref_count))
    return;

  g_object_unref (request->stream);
  g_object_unref (request->source);
  g_free (request);
}

/* The subclass hears once that the request is over. */
static void
request_close (SymfonicHttpRequest *req)
{
  if (req->closed)
    return;
  req->closed = TRUE;
  if (req->klass->close != NULL)
    req->klass->close (req->source, req);
}

/* Ends the reading, then the stream, exactly once. A failed request's
 * connection is closed, which is how the upstream learns to stop; after a
 * completed one the rest of the body is read so the connection is
 * reused. */
static void
request_finish (SymfonicHttpRequest *req,
                GError              *error)
{
  g_autoptr(SymfonicStream) stream = g_object_ref (req->stream);
  g_autoptr(GError) owned_error = error;

  if (G_UNLIKELY (req->capture != NULL))
    symfonic_capture_finish (g_steal_pointer (&req->capture), owned_error);
  request_close (req);
  if (owned_error != NULL && req->upstream != NULL)
    symfonic_upstream_request_cancel (req->upstream);

  req->over = TRUE;
  symfonic_stream_set_ready_func (req->stream, NULL, NULL, NULL);
  g_cancellable_disconnect (req->stream_cancellable, req->cancelled_id);
  req->cancelled_id = 0;
  g_clear_object (&req->stream_cancellable);
  g_clear_pointer (&req->upstream, symfonic_upstream_request_free);
  g_clear_error (&req->parse_error);
  g_clear_object (&req->parser);
  g_clear_pointer (&req->payload, g_bytes_unref);
  g_clear_pointer (&req->uri, g_uri_unref);
  g_clear_pointer (&req->playback, symfonic_recording_unref);
  g_clear_pointer (&req->connection, symfonic_http_source_release_connection);
  if (req->data_destroy != NULL)
    req->data_destroy (req->data);
  req->data = NULL;
  req->data_destroy = NULL;
  symfonic_http_request_unref (req);

  symfonic_stream_push_end (stream, owned_error);
}

/**
 * symfonic_http_request_push:
 * @request: a #SymfonicHttpRequest
 * @event: the next event of the stream
 *
 * Hands @event to the stream. When the client is behind, the request
 * reads nothing more of its upstream once the current frame is done,
 * until the stream is ready again: the subclass need not care.
 */
void
symfonic_http_request_push (SymfonicHttpRequest *request,
                            SymfonicEvent       *event)
{
  g_return_if_fail (request != NULL);
  g_return_if_fail (event != NULL);

  if (G_UNLIKELY (request->over))
    return;
  request->answered = TRUE;
  if (symfonic_stream_push (request->stream, event) == SYMFONIC_FLOW_WAIT)
    request->waiting = TRUE;
}

/**
 * symfonic_http_request_complete:
 * @request: a #SymfonicHttpRequest
 *
 * Says the upstream's answer is complete: once the current frame is done
 * the stream ends successfully, and nothing more of the body is read for
 * it. Push the terminal event, if the subclass sends one, as well.
 */
void
symfonic_http_request_complete (SymfonicHttpRequest *request)
{
  g_return_if_fail (request != NULL);

  request->completed = TRUE;
}

/* Hands every complete frame to the subclass. Returns TRUE to read on,
 * or FALSE when the reading is over: completed, or with @error set. */
static gboolean
drain (SymfonicHttpRequest  *req,
       GError              **error)
{
  const char *event;
  const char *data;
  gsize data_length;

  while (!req->waiting)
    {
      /* valid until the parser is next called */
      if (!symfonic_sse_parser_next_borrowed (req->parser, &event, &data, &data_length, NULL))
        return TRUE;
      if (!req->klass->handle_frame (req->source, req, event, data, data_length, error))
        {
          if (error != NULL && *error == NULL)
            {
              g_critical ("%s's handle_frame() returned FALSE without setting an error",
                          G_OBJECT_TYPE_NAME (req->source));
              g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM,
                                   "The upstream failed while streaming");
            }
          return FALSE;
        }
      /* the first event: the client's head goes out with it, and the
       * deadline that kept it from waiting forever is over */
      if (G_UNLIKELY (!req->answering && req->answered))
        {
          req->answering = TRUE;
          if (req->deadline != 0)
            symfonic_upstream_request_set_deadline (req->upstream, 0);
        }
      if (req->completed)
        return FALSE;
      /* a stage failed the stream (which cancelled it): stop reading */
      if (symfonic_stream_is_over (req->stream))
        {
          g_propagate_error (error, stream_over ());
          return FALSE;
        }
    }

  return TRUE;
}

static void
body_ended (SymfonicHttpRequest *req)
{
  GError *error = NULL;

  if (req->klass->end (req->source, req, &error))
    {
      if (!req->completed)
        {
          g_critical ("%s's end() returned TRUE without completing the request",
                      G_OBJECT_TYPE_NAME (req->source));
          error = g_error_new_literal (SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM,
                                       "The upstream closed the stream early");
        }
      request_finish (req, error);
      return;
    }
  if (error == NULL)
    {
      g_critical ("%s's end() returned FALSE without setting an error", G_OBJECT_TYPE_NAME (req->source));
      error = g_error_new_literal (SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM,
                                   "The upstream closed the stream early");
    }
  request_finish (req, error);
}

static void
pump (SymfonicHttpRequest *req)
{
  GError *error = NULL;

  if (!drain (req, &error))
    {
      request_finish (req, error);
      return;
    }
  if (req->waiting)
    {
      /* the upstream's writes now block in its kernel buffers; a quiet
       * upstream is not at fault while the client holds it back */
      symfonic_upstream_request_pause (req->upstream);
      return;
    }
  if (req->parse_error != NULL)
    {
      request_finish (req, g_steal_pointer (&req->parse_error));
      return;
    }
  if (req->upstream_ended)
    {
      body_ended (req);
      return;
    }
  symfonic_upstream_request_resume (req->upstream);
}

/* The client caught up: the frames already read go first, then the
 * upstream is read again. */
static void
on_stream_ready (SymfonicStream *stream,
                 gpointer        data)
{
  SymfonicHttpRequest *req = data;

  req->waiting = FALSE;
  /* the client went away, or a stage ended the stream */
  if (symfonic_stream_is_over (stream))
    {
      request_finish (req, stream_over ());
      return;
    }
  pump (req);
}

/* The reading ends from the main loop with G_IO_ERROR_CANCELLED: not
 * from inside the stream's cancellation. */
static void
on_stream_cancelled (GCancellable *stream_cancellable,
                     gpointer      data)
{
  SymfonicHttpRequest *req = data;

  request_close (req);
  symfonic_upstream_request_cancel (req->upstream);
}

/* --- what the upstream says ---------------------------------------------- */

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
static void
append_target (GString *out,
               GUri    *uri)
{
  const char *path = g_uri_get_path (uri);
  const char *query = g_uri_get_query (uri);

  g_string_append (out, *path != '\0' ? path : "/");
  if (query != NULL)
    {
      g_string_append_c (out, '?');
      g_string_append (out, query);
    }
}

static char *
request_target (GUri *uri)
{
  GString *target = g_string_new (NULL);

  append_target (target, uri);

  return g_string_free (target, FALSE);
}

static gboolean
is_clean_target (const char *target)
{
  if (*target == '\0')
    return FALSE;
  for (const char *p = target; *p != '\0'; p++)
    {
      if ((guchar) *p <= ' ' || (guchar) *p >= 0x7f)
        return FALSE;
    }

  return TRUE;
}

/* A redirect the source may follow: allowed by follow-redirects, to the
 * upstream's own origin (the request headers may carry its credentials,
 * which are for no other host), and not one hop too many. Returns the
 * target, or NULL. */
static GUri *
redirect_target (SymfonicHttpRequest *req,
                 guint                status)
{
  const char *location;
  g_autoptr(GUri) target = NULL;
  g_autofree char *line = NULL;

  if (!symfonic_http_source_get_follow_redirects (req->source) || req->redirects >= MAX_REDIRECTS ||
      (status != SOUP_STATUS_MOVED_PERMANENTLY && status != SOUP_STATUS_FOUND &&
       status != SOUP_STATUS_SEE_OTHER && status != SOUP_STATUS_TEMPORARY_REDIRECT &&
       status != SOUP_STATUS_PERMANENT_REDIRECT))
    return NULL;

  location = symfonic_upstream_request_get_header (req->upstream, "Location");
  if (location == NULL)
    return NULL;
  target = g_uri_parse_relative (req->uri, location, SOUP_HTTP_URI_FLAGS, NULL);
  if (target == NULL || g_uri_get_host (target) == NULL ||
      !same_origin (target, symfonic_http_source_get_uri (req->source)))
    return NULL;
  /* it goes on the request line as it is */
  line = request_target (target);
  if (!is_clean_target (line))
    return NULL;

  return g_steal_pointer (&target);
}

static const SymfonicUpstreamHandlers handlers;

/* Sends the request to @target (a path and query), which @uri names in
 * full, for a redirect's relative Location. Each hop has the silence
 * allowed before a head, and the deadline of the first event runs on
 * from the first hop. */
static void
send_request (SymfonicHttpRequest *req,
              GUri                *uri,
              const char          *target)
{
  SymfonicHttpSource *source = req->source;
  const char *header_lines = symfonic_http_source_get_header_lines (source);
  const char *traceparent = symfonic_stream_get_traceparent (req->stream);

  if (req->uri != uri)
    {
      g_clear_pointer (&req->uri, g_uri_unref);
      req->uri = g_uri_ref (uri);
    }
  /* the trace goes on upstream: its call's span, or the client's own
   * traceparent when the gateway traces nothing */
  if (traceparent != NULL)
    {
      GString *lines = symfonic_scratch_get (header_scratch);

      if (header_lines != NULL)
        g_string_append (lines, header_lines);
      g_string_append (lines, "traceparent: ");
      g_string_append (lines, traceparent);
      g_string_append (lines, "\r\n");
      header_lines = lines->str;
    }
  if (G_UNLIKELY (req->playback != NULL))
    req->upstream = symfonic_upstream_play (req->playback, req->playback_scale, &handlers, req);
  else
    req->upstream = symfonic_upstream_send (symfonic_http_source_get_upstream (source), "POST", target,
                                            header_lines, "application/json", req->payload, &handlers, req);
  symfonic_upstream_request_set_timeout (req->upstream, symfonic_http_source_get_timeout_seconds (source));
  if (req->deadline != 0)
    symfonic_upstream_request_set_deadline_at (req->upstream, req->deadline);
}

static void
on_head (SymfonicUpstreamRequest *upstream,
         guint                    status,
         gpointer                 data)
{
  SymfonicHttpRequest *req = data;
  GError *error = NULL;

  if (G_UNLIKELY (req->capture != NULL))
    symfonic_capture_head (req->capture, upstream, status);

  if (SOUP_STATUS_IS_REDIRECTION (status))
    {
      g_autoptr(GUri) target = redirect_target (req, status);

      if (target != NULL)
        {
          g_autofree char *line = request_target (target);

          /* the request again, as a POST: the upstream answers nothing
           * else, whatever a browser would make of the status */
          symfonic_upstream_request_cancel (req->upstream);
          g_clear_pointer (&req->upstream, symfonic_upstream_request_free);
          req->redirects++;
          send_request (req, target, line);
          return;
        }
    }

  if (!req->klass->check_head (req->source, req, status, &error))
    {
      if (error == NULL)
        {
          g_critical ("%s's check_head() returned FALSE without setting an error", G_OBJECT_TYPE_NAME (req->source));
          error = g_error_new_literal (SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM, "The upstream refused the request");
        }
      request_finish (req, error);
      return;
    }

  /* the upstream answers: from now on it may only pause between bytes,
   * and still has until the deadline for its first event */
  req->head_in = TRUE;
  symfonic_upstream_request_set_timeout (req->upstream, symfonic_http_source_get_idle_seconds (req->source));
  /* a refusal would have been the status: a held head may go, so that
   * heartbeats cover the model's thinking */
  if (symfonic_http_source_get_holds_head (req->source))
    symfonic_stream_release_head (req->stream);
}

/* A read is parsed a slice at a time, each slice's events handed on before
 * the next is parsed, so the first events of a large read (a whole answer
 * at once) leave without waiting for the parsing of the rest. Once the
 * stream waits, the rest is parsed whole and its events kept. Events
 * parsed before a failure go on first either way. */
#define PARSE_SLICE 1024

static void
on_body (SymfonicUpstreamRequest *upstream,
         const guint8            *data,
         gsize                    length,
         gpointer                 user_data)
{
  SymfonicHttpRequest *req = user_data;
  GError *error = NULL;

  if (G_UNLIKELY (req->capture != NULL))
    symfonic_capture_chunk (req->capture, data, length);

  while (length > PARSE_SLICE && !req->waiting)
    {
      if (!symfonic_sse_parser_feed (req->parser, data, PARSE_SLICE, &req->parse_error))
        {
          pump (req);
          return;
        }
      if (!drain (req, &error))
        {
          request_finish (req, error);
          return;
        }
      data += PARSE_SLICE;
      length -= PARSE_SLICE;
    }

  symfonic_sse_parser_feed (req->parser, data, length, &req->parse_error);
  pump (req);
}

static void
on_done (SymfonicUpstreamRequest *upstream,
         const GError            *error,
         gpointer                 data)
{
  SymfonicHttpRequest *req = data;

  if (G_UNLIKELY (req->capture != NULL))
    symfonic_capture_transport_ended (req->capture, error);

  if (error != NULL)
    {
      if (g_cancellable_is_cancelled (req->stream_cancellable))
        request_finish (req, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED, "The client went away"));
      else
        request_finish (req, transport_failure (req, error));
      return;
    }

  req->upstream_ended = TRUE;
  /* a parser that failed takes nothing more */
  if (req->parse_error == NULL)
    symfonic_sse_parser_end (req->parser);
  pump (req);
}

static const SymfonicUpstreamHandlers handlers = {
  .head = on_head,
  .body = on_body,
  .done = on_done,
};

/* Writes the subclass's request and sends it; the stream ends exactly
 * once from here on, whatever happens. */
void
symfonic_http_request_start (SymfonicHttpSource *source,
                             SymfonicStream     *stream,
                             GCancellable       *cancellable,
                             gpointer            connection,
                             SymfonicRecording  *playback,
                             double              playback_scale)
{
  SymfonicHttpRequest *req = g_new0 (SymfonicHttpRequest, 1);
  GUri *uri = symfonic_http_source_get_uri (source);
  GString *path = symfonic_scratch_get (path_scratch);
  GString *body = symfonic_scratch_get (body_scratch);
  GError *error = NULL;
  guint timeout;

  g_ref_count_init (&req->ref_count);
  req->source = g_object_ref (source);
  req->klass = SYMFONIC_HTTP_SOURCE_GET_CLASS (source);
  req->stream = g_object_ref (stream);
  req->parser = symfonic_sse_parser_new (symfonic_http_source_get_event_bytes (source));
  req->stream_cancellable = cancellable != NULL ? g_object_ref (cancellable) : g_cancellable_new ();
  req->connection = connection;
  req->uri = g_uri_ref (uri);
  req->playback = playback != NULL ? symfonic_recording_ref (playback) : NULL;
  req->playback_scale = playback_scale;

  append_target (path, uri);
  if (!req->klass->write_request (source, req, path, body, &error))
    {
      if (error == NULL)
        {
          g_critical ("%s's write_request() returned FALSE without setting an error", G_OBJECT_TYPE_NAME (source));
          error = g_error_new_literal (SYMFONIC_ERROR, SYMFONIC_ERROR_FAILED, "The request could not be written");
        }
      request_finish (req, error);
      return;
    }
  if (!is_clean_target (path->str))
    {
      g_critical ("%s's write_request() wrote a path that is not encoded", G_OBJECT_TYPE_NAME (source));
      request_finish (req, g_error_new_literal (SYMFONIC_ERROR, SYMFONIC_ERROR_FAILED,
                                                "The request could not be written"));
      return;
    }
  req->payload = g_bytes_new (body->str, body->len);

  /* the client's head waits for the first event: pings, comments and
   * interim heads do not hold it past `timeout` */
  timeout = symfonic_http_source_get_timeout_seconds (source);
  if (symfonic_http_source_get_holds_head (source) && timeout != 0)
    req->deadline = g_get_monotonic_time () + (gint64) timeout * G_USEC_PER_SEC;

  send_request (req, uri, path->str);
  /* a run the source records: the request as it went out, then what
   * comes back (a replay is no new run) */
  if (G_UNLIKELY (symfonic_http_source_get_recorder (source) != NULL) && req->playback == NULL)
    req->capture = symfonic_recorder_start (symfonic_http_source_get_recorder (source), run_id (req),
                                            symfonic_upstream_request_get_message (req->upstream));

  /* from now on the reading follows the stream's back-pressure and
   * cancellation (at once if the client is already gone) */
  symfonic_stream_set_ready_func (req->stream, on_stream_ready, req, NULL);
  req->cancelled_id = g_cancellable_connect (req->stream_cancellable, G_CALLBACK (on_stream_cancelled), req, NULL);
}

/* --- what a subclass reads and keeps ------------------------------------- */

/**
 * symfonic_http_request_get_source:
 * @request: a #SymfonicHttpRequest
 *
 * The source whose request this is.
 *
 * Returns: (transfer none): the source that sent @request
 */
SymfonicHttpSource *
symfonic_http_request_get_source (SymfonicHttpRequest *request)
{
  g_return_val_if_fail (request != NULL, NULL);

  return request->source;
}

/**
 * symfonic_http_request_get_stream:
 * @request: a #SymfonicHttpRequest
 *
 * The stream the request serves: its invocation, its route, where events
 * go. From [vfunc@Symfonic.HttpSource.write_request] on.
 *
 * Returns: (transfer none): the stream @request serves, with its
 *   invocation
 */
SymfonicStream *
symfonic_http_request_get_stream (SymfonicHttpRequest *request)
{
  g_return_val_if_fail (request != NULL, NULL);

  return request->stream;
}

/**
 * symfonic_http_request_get_data: (skip)
 * @request: a #SymfonicHttpRequest
 *
 * The subclass's own state for the stream.
 *
 * Returns: (nullable): what the subclass keeps for this request, set with
 *   symfonic_http_request_set_data()
 */
gpointer
symfonic_http_request_get_data (SymfonicHttpRequest *request)
{
  g_return_val_if_fail (request != NULL, NULL);

  return request->data;
}

/**
 * symfonic_http_request_set_data: (skip)
 * @request: a #SymfonicHttpRequest
 * @data: (nullable): what the subclass keeps for this request
 * @destroy: (nullable): frees @data when the request is over
 *
 * Keeps the subclass's state for one stream (what its frames accumulate),
 * usually set in [vfunc@Symfonic.HttpSource.write_request]. A source
 * object serves many streams at once: per-stream state never goes into
 * the object.
 */
void
symfonic_http_request_set_data (SymfonicHttpRequest *request,
                                gpointer             data,
                                GDestroyNotify       destroy)
{
  g_return_if_fail (request != NULL);

  if (request->data_destroy != NULL)
    request->data_destroy (request->data);
  request->data = data;
  request->data_destroy = destroy;
}

/**
 * symfonic_http_request_get_response_header:
 * @request: a #SymfonicHttpRequest
 * @name: a header name, in any case
 *
 * A header of the response, while its head is judged
 * ([vfunc@Symfonic.HttpSource.check_head]); the head is not kept after.
 *
 * Returns: (nullable): the header's first value, or %NULL
 */
const char *
symfonic_http_request_get_response_header (SymfonicHttpRequest *request,
                                           const char          *name)
{
  g_return_val_if_fail (request != NULL, NULL);
  g_return_val_if_fail (name != NULL, NULL);

  if (request->upstream == NULL)
    return NULL;

  return symfonic_upstream_request_get_header (request->upstream, name);
}

/* --- usage ------------------------------------------------------------ */

/* A lie in a usage report is an upstream failure like any other: the
 * client learns nothing of it, the log learns why, and metering believes
 * none of the upstream's reports. */
static GError *
usage_failure (SymfonicHttpRequest *req,
               const char          *why)
{
  symfonic_stream_discard_usage (req->stream);

  return symfonic_http_request_new_failure (req, SYMFONIC_ERROR_UPSTREAM,
                                            "The upstream sent a usage report that cannot be true", "%s", why);
}

/* Adds @counts, what the upstream used since its last report. */
static gboolean
add_counts (SymfonicHttpRequest        *req,
            const SymfonicUsageCounts  *counts,
            GError                    **error)
{
  g_autoptr(GError) lie = NULL;

  if (counts->invalid)
    {
      g_propagate_error (error, usage_failure (req, "a token count that is not a non-negative integer"));
      return FALSE;
    }
  if (counts->input < 0 && counts->output < 0)
    return TRUE;
  req->usage_seen = TRUE;
  if (!symfonic_stream_add_usage (req->stream, MAX (counts->input, 0), MAX (counts->output, 0), &lie))
    {
      g_propagate_error (error, usage_failure (req, lie->message));
      return FALSE;
    }

  return TRUE;
}

/**
 * symfonic_http_request_add_usage:
 * @request: a #SymfonicHttpRequest
 * @usage: (nullable): a usage report: `input_tokens` and `output_tokens`,
 *   or OpenAI's `prompt_tokens` and `completion_tokens`, each optional
 * @error: return location for a #GError
 *
 * Adds what the upstream used since its last report to the stream's
 * usage, which metering settles on. A report is not trusted: a count that
 * is not a non-negative integer, or more than the stream may use, is a
 * lie, and the stream then ends with an upstream failure and settles on
 * an estimate.
 *
 * Returns: %TRUE, or %FALSE with the failure that ends the stream
 */
gboolean
symfonic_http_request_add_usage (SymfonicHttpRequest  *request,
                                 JsonObject           *usage,
                                 GError              **error)
{
  SymfonicUsageCounts counts;

  g_return_val_if_fail (request != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  symfonic_usage_read_counts (usage, &counts);

  return add_counts (request, &counts, error);
}

/* Providers report running totals (Anthropic's message_delta) or one
 * final count (OpenAI's usage chunk): what a report adds to the stream is
 * its growth since the last, and a total that shrinks is a lie. */
gboolean
symfonic_http_request_update_usage_counts (SymfonicHttpRequest        *request,
                                           const SymfonicUsageCounts  *counts,
                                           GError                    **error)
{
  SymfonicUsageCounts growth = { -1, -1, counts->invalid };

  if ((counts->input >= 0 && (guint64) counts->input < request->input_tokens) ||
      (counts->output >= 0 && (guint64) counts->output < request->output_tokens))
    {
      g_propagate_error (error, usage_failure (request, "a running token total that went down"));
      return FALSE;
    }
  if (counts->input >= 0)
    {
      growth.input = counts->input - request->input_tokens;
      request->input_tokens = counts->input;
      request->usage_seen = TRUE;
    }
  if (counts->output >= 0)
    {
      growth.output = counts->output - request->output_tokens;
      request->output_tokens = counts->output;
      request->usage_seen = TRUE;
    }

  return add_counts (request, &growth, error);
}

/**
 * symfonic_http_request_update_usage:
 * @request: a #SymfonicHttpRequest
 * @usage: (nullable): a usage report of running totals, named as for
 *   symfonic_http_request_add_usage()
 * @error: return location for a #GError
 *
 * As symfonic_http_request_add_usage(), for an upstream whose reports are
 * the totals so far: what a report adds is its growth since the last one,
 * and a total that goes down is a lie.
 *
 * Returns: %TRUE, or %FALSE with the failure that ends the stream
 */
gboolean
symfonic_http_request_update_usage (SymfonicHttpRequest  *request,
                                    JsonObject           *usage,
                                    GError              **error)
{
  SymfonicUsageCounts counts;

  g_return_val_if_fail (request != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  symfonic_usage_read_counts (usage, &counts);

  return symfonic_http_request_update_usage_counts (request, &counts, error);
}

/**
 * symfonic_http_request_has_usage:
 * @request: a #SymfonicHttpRequest
 *
 * Whether the upstream reported a token count for the stream; without
 * one, metering settles on an estimate of what the client received.
 *
 * Returns: %TRUE once a report gave a count
 */
gboolean
symfonic_http_request_has_usage (SymfonicHttpRequest *request)
{
  g_return_val_if_fail (request != NULL, FALSE);

  return request->usage_seen;
}
