/* symfonic-exchange.c: decode, admit, stream, terminate
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <sys/socket.h>
#include <glib/gi18n-lib.h>

#include "symfonic-connection-private.h"
#include "symfonic-encoder-private.h"
#include "symfonic-error.h"
#include "symfonic-error-mapper.h"
#include "symfonic-exchange-private.h"
#include "symfonic-sse-writer-private.h"
#include "symfonic-stream-private.h"

/* An exchange lives from the request until libsoup says the message
 * finished. Everything in it runs on the worker thread that accepted the
 * connection. */
typedef struct
{
  SoupServerMessage *message;
  SymfonicRoute     *route;
  SymfonicMetrics   *metrics;
  GMainContext      *context;
  /* the worker's set of exchanges in flight */
  GHashTable        *live;
  SymfonicStream    *stream;
  SymfonicEncoder   *encoder;
  SymfonicSseWriter *writer;
  GSource           *hangup_source;
  gulong             finished_id;
  gboolean           admitting;
  gboolean           finished;
  gboolean           running;
} Exchange;

static void
exchange_free (Exchange *self)
{
  g_hash_table_remove (self->live, self);
  if (self->hangup_source != NULL)
    {
      g_source_destroy (self->hangup_source);
      g_source_unref (self->hangup_source);
    }
  g_clear_signal_handler (&self->finished_id, self->message);
  g_clear_pointer (&self->writer, symfonic_sse_writer_free);
  g_clear_pointer (&self->encoder, symfonic_encoder_free);
  g_clear_object (&self->stream);
  g_clear_object (&self->route);
  g_clear_object (&self->message);
  g_main_context_unref (self->context);
  g_free (self);
}

void
symfonic_exchange_respond_json (SoupServerMessage *message,
                                guint              status,
                                const char        *body)
{
  soup_server_message_set_status (message, status, NULL);
  soup_server_message_set_response (message, "application/json", SOUP_MEMORY_COPY, body, strlen (body));
}

void
symfonic_exchange_respond_error (SoupServerMessage  *message,
                                 SymfonicErrorFrame *frame)
{
  SoupMessageHeaders *headers = soup_server_message_get_response_headers (message);
  g_autofree char *json = symfonic_error_frame_to_json (frame);
  g_auto(GStrv) names = symfonic_error_frame_list_headers (frame);

  for (guint i = 0; names[i] != NULL; i++)
    soup_message_headers_replace (headers, names[i], symfonic_error_frame_get_header (frame, names[i]));
  symfonic_exchange_respond_json (message, symfonic_error_frame_get_status (frame), json);
}

static void
apply_stream_headers (Exchange *self)
{
  SoupMessageHeaders *headers = soup_server_message_get_response_headers (self->message);
  g_auto(GStrv) names = symfonic_stream_list_response_headers (self->stream);

  for (guint i = 0; names[i] != NULL; i++)
    soup_message_headers_replace (headers, names[i], symfonic_stream_get_response_header (self->stream, names[i]));
}

/* The end of an answer route: one JSON body, whatever the outcome. */
static void
respond (Exchange           *self,
         SymfonicErrorFrame *frame,
         GString            *body)
{
  guint status = frame != NULL ? symfonic_error_frame_get_status (frame) : SOUP_STATUS_OK;

  /* a mapped frame already carries the stream's headers (map_error) */
  if (frame != NULL)
    symfonic_exchange_respond_error (self->message, frame);
  else
    {
      apply_stream_headers (self);
      symfonic_exchange_respond_json (self->message, status, body->str);
    }
  symfonic_metrics_count_response (self->metrics, symfonic_route_get_name (self->route), status);
  soup_server_message_unpause (self->message);
}

/* The last stage of the route that maps errors decides; without one the
 * built-in mapping applies. */
SymfonicErrorFrame *
symfonic_exchange_map_error (SymfonicRoute *route,
                             const GError  *error)
{
  for (guint i = symfonic_route_get_n_stages (route); i > 0; i--)
    {
      SymfonicStage *stage = symfonic_route_get_stage (route, i - 1);

      if (SYMFONIC_IS_ERROR_MAPPER (stage))
        return symfonic_error_mapper_map (SYMFONIC_ERROR_MAPPER (stage), error, route);
    }

  return symfonic_error_frame_new_for_error (error);
}

static SymfonicErrorFrame *
map_error (Exchange     *self,
           const GError *error)
{
  SymfonicErrorFrame *frame = symfonic_exchange_map_error (self->route, error);
  g_auto(GStrv) names = symfonic_stream_list_response_headers (self->stream);

  /* the real message of a server-side fault goes to the log only */
  if (symfonic_error_frame_get_status (frame) >= 500)
    g_message ("Route %s, run %s failed: %s",
               symfonic_route_get_name (self->route),
               symfonic_invocation_get_run_id (symfonic_stream_get_invocation (self->stream)),
               error->message);

  /* what a stage said about this refusal (Retry-After) */
  for (guint i = 0; names[i] != NULL; i++)
    symfonic_error_frame_set_header (frame, names[i], symfonic_stream_get_response_header (self->stream, names[i]));

  return frame;
}

static void
sink_event (gpointer       data,
            SymfonicEvent *event)
{
  Exchange *self = data;
  GString *out;
  SymfonicFrameClass frame_class;

  if (self->writer == NULL)
    {
      symfonic_encoder_event (self->encoder, event, NULL);
      return;
    }

  out = symfonic_sse_writer_begin_frame (self->writer);
  frame_class = symfonic_encoder_event (self->encoder, event, out);
  if (frame_class != SYMFONIC_FRAME_NONE)
    symfonic_sse_writer_end_frame (self->writer, frame_class == SYMFONIC_FRAME_DROPPABLE);
}

static void
sink_end (gpointer      data,
          const GError *error)
{
  Exchange *self = data;
  g_autoptr(SymfonicErrorFrame) frame = NULL;
  g_autoptr(GString) body = NULL;
  GString *out;

  if (error == NULL)
    symfonic_metrics_add (self->metrics, SYMFONIC_COUNTER_STREAMS_COMPLETED, 1);
  else
    {
      frame = map_error (self, error);
      symfonic_metrics_add (self->metrics, SYMFONIC_COUNTER_STREAMS_FAILED, 1);
    }

  out = self->writer != NULL ? symfonic_sse_writer_begin_frame (self->writer) : (body = g_string_new (NULL));
  if (frame == NULL)
    {
      gint64 elapsed = g_get_monotonic_time () - symfonic_stream_get_start_time (self->stream);

      symfonic_encoder_success (self->encoder, elapsed / 1000, out);
    }
  else
    symfonic_encoder_error (self->encoder, frame, out);

  if (self->writer != NULL)
    {
      symfonic_sse_writer_end_frame (self->writer, FALSE);
      symfonic_sse_writer_close (self->writer);
      return;
    }

  respond (self, frame, body);
}

static const SymfonicStreamSink sink = {
  sink_event,
  sink_end,
};

static void
client_gone (Exchange *self)
{
  if (!symfonic_stream_is_over (self->stream))
    {
      symfonic_stream_cancel (self->stream);
      symfonic_metrics_add (self->metrics, SYMFONIC_COUNTER_STREAMS_CANCELLED, 1);
    }
}

/* libsoup notices a dead client only when it next writes; an upstream that
 * is slow to produce would keep running for nothing. A peer that closed
 * makes its socket readable with nothing to read. */
static gboolean
on_socket_readable (GSocket      *socket,
                    GIOCondition  condition,
                    gpointer      user_data)
{
  Exchange *self = user_data;
  char byte;
  gssize n;

  n = recv (g_socket_get_fd (socket), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
    return G_SOURCE_CONTINUE;

  g_clear_pointer (&self->hangup_source, g_source_unref);
  if (n <= 0)
    {
      client_gone (self);
      /* let libsoup try to answer, fail, and finish the message */
      if (self->writer != NULL)
        symfonic_sse_writer_close (self->writer);
      else
        soup_server_message_unpause (self->message);
    }

  /* n > 0: the client pipelined another request; it is alive */
  return G_SOURCE_REMOVE;
}

static void
watch_hangup (Exchange *self)
{
  GSocket *socket = symfonic_connection_get_message_socket (self->message);

  if (socket == NULL)
    return;

  self->hangup_source = g_socket_create_source (socket, G_IO_IN | G_IO_HUP | G_IO_ERR, NULL);
  g_source_set_callback (self->hangup_source, G_SOURCE_FUNC (on_socket_readable), self, NULL);
  g_source_set_static_name (self->hangup_source, "[symfonic] client hangup");
  g_source_attach (self->hangup_source, self->context);
}

static void
on_finished (SoupServerMessage *message,
             gpointer           user_data)
{
  Exchange *self = user_data;

  /* finished may come before disconnected: stop every handler first */
  g_clear_signal_handler (&self->finished_id, self->message);
  if (self->writer != NULL)
    {
      symfonic_metrics_add (self->metrics, SYMFONIC_COUNTER_FRAMES_WRITTEN, symfonic_sse_writer_get_frames (self->writer));
      symfonic_metrics_add (self->metrics, SYMFONIC_COUNTER_FRAMES_SHED, symfonic_sse_writer_get_shed (self->writer));
      symfonic_metrics_add (self->metrics, SYMFONIC_COUNTER_BYTES_WRITTEN, symfonic_sse_writer_get_bytes (self->writer));
      symfonic_sse_writer_detach (self->writer);
    }
  if (self->encoder != NULL)
    symfonic_metrics_add (self->metrics, SYMFONIC_COUNTER_EVENTS_DROPPED, symfonic_encoder_get_dropped (self->encoder));
  if (self->running)
    {
      client_gone (self);
      symfonic_metrics_stream_closed (self->metrics);
    }

  /* an admission hook still running owns the exchange until it answers */
  self->finished = TRUE;
  if (!self->admitting)
    exchange_free (self);
}

static void
begin_stream (Exchange *self)
{
  SoupMessageHeaders *headers = soup_server_message_get_response_headers (self->message);

  self->encoder = symfonic_encoder_new (symfonic_route_get_kind (self->route),
                                        symfonic_stream_get_invocation (self->stream));
  self->running = TRUE;
  symfonic_metrics_stream_opened (self->metrics);
  symfonic_stream_set_sink (self->stream, &sink, self);
  watch_hangup (self);

  if (symfonic_encoder_is_streaming (self->encoder))
    {
      soup_server_message_set_status (self->message, SOUP_STATUS_OK, NULL);
      apply_stream_headers (self);
      soup_message_headers_set_content_type (headers, "text/event-stream", NULL);
      soup_message_headers_replace (headers, "Cache-Control", "no-cache");
      soup_message_headers_replace (headers, "X-Accel-Buffering", "no");
      /* HTTP/1.0 has no chunked encoding: the stream ends with the connection */
      if (soup_server_message_get_http_version (self->message) == SOUP_HTTP_1_0)
        {
          soup_message_headers_set_encoding (headers, SOUP_ENCODING_EOF);
          soup_message_headers_replace (headers, "Connection", "close");
        }
      else
        soup_message_headers_set_encoding (headers, SOUP_ENCODING_CHUNKED);
      symfonic_metrics_count_response (self->metrics, symfonic_route_get_name (self->route), SOUP_STATUS_OK);
      self->writer = symfonic_sse_writer_new (self->message, self->context);
      /* the headers go out now, before the upstream produced anything */
      soup_server_message_unpause (self->message);
    }

  symfonic_stream_start (self->stream);
}

static void
admitted_cb (GObject      *object,
             GAsyncResult *result,
             gpointer      user_data)
{
  Exchange *self = user_data;
  g_autoptr(GError) error = NULL;

  self->admitting = FALSE;
  if (self->finished)
    {
      symfonic_stream_cancel (self->stream);
      exchange_free (self);
      return;
    }

  if (!symfonic_stream_admit_finish (self->stream, result, &error))
    {
      g_autoptr(SymfonicErrorFrame) frame = map_error (self, error);

      symfonic_metrics_count_response (self->metrics, symfonic_route_get_name (self->route),
                                       symfonic_error_frame_get_status (frame));
      symfonic_exchange_respond_error (self->message, frame);
      soup_server_message_unpause (self->message);
      return;
    }

  begin_stream (self);
}

static gboolean
content_type_is_json (SoupServerMessage *message)
{
  const char *type = soup_message_headers_get_content_type (soup_server_message_get_request_headers (message), NULL);

  return type != NULL && g_ascii_strcasecmp (type, "application/json") == 0;
}

static void
copy_header (const char *name,
             const char *value,
             gpointer    user_data)
{
  symfonic_invocation_set_header (user_data, name, value);
}

static SymfonicInvocation *
decode (SoupServerMessage  *message,
        GBytes             *bytes,
        GError            **error)
{
  g_autoptr(JsonParser) parser = json_parser_new_immutable ();
  g_autoptr(GError) parse_error = NULL;
  SymfonicInvocation *invocation;
  gsize length;
  const char *data;

  if (!content_type_is_json (message))
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UNSUPPORTED_MEDIA_TYPE,
                           _("The request body must be application/json"));
      return NULL;
    }

  data = g_bytes_get_data (bytes, &length);
  if (length == 0 || !json_parser_load_from_data (parser, data, length, &parse_error))
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST,
                   _("The request body is not valid JSON: %s"),
                   parse_error != NULL ? parse_error->message : _("it is empty"));
      return NULL;
    }

  invocation = symfonic_invocation_new_from_json (json_parser_get_root (parser), error);
  if (invocation == NULL)
    return NULL;

  soup_message_headers_foreach (soup_server_message_get_request_headers (message), copy_header, invocation);

  return invocation;
}

/* Serves one request to an invocation route. Refusals (bad request,
 * admission) are JSON and happen before any byte of the event stream. */
void
symfonic_exchange_run (SoupServerMessage *message,
                       GBytes            *body,
                       SymfonicRoute     *route,
                       SymfonicMetrics   *metrics,
                       GMainContext      *context,
                       GHashTable        *live)
{
  g_autoptr(SymfonicInvocation) invocation = NULL;
  g_autoptr(GError) error = NULL;
  Exchange *self;

  invocation = decode (message, body, &error);
  if (invocation == NULL)
    {
      g_autoptr(SymfonicErrorFrame) frame = symfonic_exchange_map_error (route, error);

      symfonic_metrics_count_response (metrics, symfonic_route_get_name (route),
                                       symfonic_error_frame_get_status (frame));
      symfonic_exchange_respond_error (message, frame);
      return;
    }

  self = g_new0 (Exchange, 1);
  self->message = g_object_ref (message);
  self->route = g_object_ref (route);
  self->metrics = metrics;
  self->context = g_main_context_ref (context);
  self->live = live;
  g_hash_table_add (live, self);
  self->stream = symfonic_stream_new (route, invocation);
  self->finished_id = g_signal_connect (message, "finished", G_CALLBACK (on_finished), self);

  soup_server_message_pause (message);
  self->admitting = TRUE;
  symfonic_stream_admit_async (self->stream, admitted_cb, self);
}

/* The worker is stopping: every running stream ends with its one error
 * frame, which the worker then gives a moment to reach the client. */
void
symfonic_exchange_end_all (GHashTable *live)
{
  g_autoptr(GError) error = g_error_new_literal (SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM_UNAVAILABLE,
                                                 _("The gateway is shutting down"));
  g_autoptr(GList) exchanges = g_hash_table_get_keys (live);

  for (GList *l = exchanges; l != NULL; l = l->next)
    {
      Exchange *self = l->data;

      if (self->running)
        symfonic_stream_abort (self->stream, error);
    }
}

/* What did not finish in time is dropped with its connection: nothing of
 * it may run once the server is gone. */
void
symfonic_exchange_abandon_all (GHashTable *live)
{
  g_autoptr(GList) exchanges = g_hash_table_get_keys (live);

  for (GList *l = exchanges; l != NULL; l = l->next)
    {
      Exchange *self = l->data;

      if (self->running)
        {
          client_gone (self);
          symfonic_metrics_stream_closed (self->metrics);
        }
      if (self->admitting)
        {
          /* the admission callback frees it when it answers */
          self->finished = TRUE;
          g_clear_signal_handler (&self->finished_id, self->message);
          continue;
        }
      exchange_free (self);
    }
}
