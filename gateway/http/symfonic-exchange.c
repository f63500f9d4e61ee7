/* symfonic-exchange.c: authenticate, read, decode, admit, stream, terminate
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-connection-private.h"
#include "symfonic-cors-private.h"
#include "symfonic-early-refusal-private.h"
#include "symfonic-encoder-private.h"
#include "symfonic-error.h"
#include "symfonic-event-private.h"
#include "symfonic-exchange-private.h"
#include "symfonic-json.h"
#include "symfonic-poller-private.h"
#include "symfonic-provider-request-private.h"
#include "symfonic-provider-source-private.h"
#include "symfonic-resume-token-private.h"
#include "symfonic-route-private.h"
#include "symfonic-run-reader-private.h"
#include "symfonic-sse-writer-private.h"
#include "symfonic-status-private.h"
#include "symfonic-stream-log-private.h"
#include "symfonic-stream-private.h"
#include "symfonic-tracer-private.h"
#include "symfonic-usage-private.h"

/* An exchange lives from the request head until libsoup says the message
 * finished, or until the exchange took the connection (to refuse it, or
 * to stream on it) and let it go.
 * Everything in it runs on the worker thread that accepted the
 * connection.
 *
 * Its life is one state machine; every change of state goes through
 * advance(), which refuses a move the table does not list:
 *
 *   state \ event  ADMITTED   GOT_BODY  REFUSED  END    FINISHED  WRITTEN  RELEASED  DETACH    ANSWER
 *   HEAD           BODY       -         REFUSED  -      DONE      -        DONE      -         -
 *   BODY           -          BODY_IN   -        -      DONE      -        DONE      -         -
 *   BODY_IN        STREAMING  -         REFUSED  -      DONE      -        DONE      -         REFUSED
 *   STREAMING      -          -         -        ENDED  DONE      DONE     DONE      DETACHED  -
 *   ENDED          -          -         -        -      DONE      DONE     DONE      -         -
 *   REFUSED        -          -         -        -      DONE      -        DONE      -         -
 *   DETACHED       -          -         -        ENDED  -         -        DONE      -         -
 *
 * What the admission stages decide, and whether the stream waits for one
 * of them, is the stream's to track (symfonic_stream_admit()); the
 * exchange follows the HTTP message, and keeps libsoup from reading while
 * the stream waits.
 * HEAD: the head is in, nothing of the body is read; the head-phase stages
 *   (authentication) decide. ADMITTED: they admitted the request, and
 *   libsoup reads the body, bounded (BODY).
 * GOT_BODY: the body is in; libsoup is paused while it is decoded (415,
 *   400, 413) and the body-phase stages (metering) decide (BODY_IN).
 *   ADMITTED: the stream starts (STREAMING).
 * REFUSED: a JSON refusal is handed to libsoup, before any byte of a
 *   stream. ANSWER: so is a JSON answer that needs no stream (a token
 *   count, a background response read again). END: the stream's terminal
 *   (or its JSON answer) is handed over.
 * FINISHED: libsoup finished the message (answered, or the client left,
 *   also while a stage decided): the exchange is freed (DONE), and with it
 *   the stream, which drops an admission answer still owed.
 * WRITTEN: an event stream's writer, which took the connection from
 *   libsoup when the stream started (libsoup then finishes nothing), let
 *   it go: the body went out whole, or the client left or stalled.
 * RELEASED: the exchange lets go of its message at once: an early refusal
 *   took the connection, a detached run ended, or the worker stops.
 * DETACH: the client of a resumable run left before its terminal: the run
 *   goes on without a writer, its frames to the run store only, until it
 *   ends (ENDED, then RELEASED) or nobody came back for resume-seconds. */
typedef enum {
  EXCHANGE_HEAD,
  EXCHANGE_BODY,
  EXCHANGE_BODY_IN,
  EXCHANGE_STREAMING,
  EXCHANGE_ENDED,
  EXCHANGE_REFUSED,
  EXCHANGE_DETACHED,
  EXCHANGE_DONE,
  N_EXCHANGE_STATES
} ExchangeState;

typedef enum {
  EXCHANGE_ADMITTED,
  EXCHANGE_GOT_BODY,
  EXCHANGE_REFUSE,
  EXCHANGE_END,
  EXCHANGE_FINISHED,
  EXCHANGE_WRITTEN,
  EXCHANGE_RELEASED,
  EXCHANGE_DETACH,
  EXCHANGE_ANSWER,
  N_EXCHANGE_EVENTS
} ExchangeEvent;

/* HEAD is where every exchange starts and never a next state: here it
 * marks a move that is not allowed. */
#define ILLEGAL EXCHANGE_HEAD

static const ExchangeState transitions[N_EXCHANGE_STATES][N_EXCHANGE_EVENTS] = {
  [EXCHANGE_HEAD] = {
    [EXCHANGE_ADMITTED] = EXCHANGE_BODY,
    [EXCHANGE_REFUSE] = EXCHANGE_REFUSED,
    [EXCHANGE_FINISHED] = EXCHANGE_DONE,
    [EXCHANGE_RELEASED] = EXCHANGE_DONE,
  },
  [EXCHANGE_BODY] = {
    [EXCHANGE_GOT_BODY] = EXCHANGE_BODY_IN,
    [EXCHANGE_FINISHED] = EXCHANGE_DONE,
    [EXCHANGE_RELEASED] = EXCHANGE_DONE,
  },
  [EXCHANGE_BODY_IN] = {
    [EXCHANGE_ADMITTED] = EXCHANGE_STREAMING,
    [EXCHANGE_REFUSE] = EXCHANGE_REFUSED,
    [EXCHANGE_ANSWER] = EXCHANGE_REFUSED,
    [EXCHANGE_FINISHED] = EXCHANGE_DONE,
    [EXCHANGE_RELEASED] = EXCHANGE_DONE,
  },
  [EXCHANGE_STREAMING] = {
    [EXCHANGE_END] = EXCHANGE_ENDED,
    [EXCHANGE_FINISHED] = EXCHANGE_DONE,
    [EXCHANGE_WRITTEN] = EXCHANGE_DONE,
    [EXCHANGE_RELEASED] = EXCHANGE_DONE,
    [EXCHANGE_DETACH] = EXCHANGE_DETACHED,
  },
  [EXCHANGE_ENDED] = {
    [EXCHANGE_FINISHED] = EXCHANGE_DONE,
    [EXCHANGE_WRITTEN] = EXCHANGE_DONE,
    [EXCHANGE_RELEASED] = EXCHANGE_DONE,
  },
  [EXCHANGE_REFUSED] = {
    [EXCHANGE_FINISHED] = EXCHANGE_DONE,
    [EXCHANGE_RELEASED] = EXCHANGE_DONE,
  },
  [EXCHANGE_DETACHED] = {
    [EXCHANGE_END] = EXCHANGE_ENDED,
    [EXCHANGE_RELEASED] = EXCHANGE_DONE,
  },
};

static const char * const state_names[] = {
  "head", "body", "body-in", "streaming", "ended", "refused", "detached", "done",
};

static const char * const event_names[] = {
  "admitted", "body-in", "refuse", "end", "finished", "written", "released", "detach", "answer",
};

G_STATIC_ASSERT (G_N_ELEMENTS (state_names) == N_EXCHANGE_STATES);
G_STATIC_ASSERT (G_N_ELEMENTS (event_names) == N_EXCHANGE_EVENTS);

typedef struct
{
  ExchangeState      state;
  /* NULL once a stream's writer took the connection */
  SoupServerMessage *message;
  SymfonicRoute     *route;
  /* which of the route's endpoints the request is for */
  SymfonicEndpoint   endpoint;
  SymfonicMetrics   *metrics;
  /* the worker's set of exchanges in flight */
  GHashTable        *live;
  SymfonicStream    *stream;
  SymfonicEncoder   *encoder;
  /* what a provider route's client asked of the answer's shape */
  SymfonicEncoderFlags encoder_flags;
  SymfonicSseWriter *writer;
  /* the stream starts before its event stream opens (begin_stream) */
  gboolean           starting;
  /* the client's socket while an answer is prepared (a streaming answer's
   * writer watches it itself) */
  SymfonicWatch     *hangup;
  /* the request body, kept up to the limit: past it nothing more is kept,
   * whatever the client sends */
  GByteArray        *body;
  guint64            max_body_bytes;
  gboolean           body_too_large;
  gulong             finished_id;
  gulong             got_chunk_id;

  SymfonicRunStore  *run_store;
  /* the run's frames also go to the run store (the route's resume) */
  gboolean           keeps_run;
  /* the success terminal is queued: the stream counts as completed once
   * it starts to go out */
  gboolean           success_unsent;
  /* the stream was counted as ended for a slow client */
  gboolean           slow_counted;
  /* where a detached run's frames are built, for the store only */
  GString           *scratch;
  /* a detached run ends when nobody came back in time */
  SymfonicTimer     *detach_timer;
  SymfonicDeferred   release;
  /* the message whose connection the writer took, let go after the
   * iteration that sent the first frames */
  SoupServerMessage *taken_message;
  SymfonicDeferred   let_go;
  /* a runs route: the client reads a run again */
  SymfonicRunReader *reader;
  /* a background response: its client got its queued object at once, and
   * the run goes on to its end for the run store alone */
  gboolean           background;
  gboolean           background_answer;
  /* a token count the provider is asked for */
  SymfonicTokenCount *count;

  /* how the stream ended and when, told to the metrics once it is over */
  SymfonicStreamOutcome outcome;
  gint64             ended_us;
  gboolean           recorded;

  /* a traced request's context, NULL for any other; what its spans say
   * that only the exchange sees: the status answered, the failure's
   * code and detail, and why the answer ended */
  SymfonicTraceContext *trace;
  guint              status;
  char              *error_code;
  char              *error_detail;
  char              *finish_reason;
  gboolean           refused;
  /* what a run store's later answer finds the exchange by: cleared when
   * the exchange goes first */
  struct _Ticket    *ticket;
} Exchange;

/* A run store may answer after the exchange went (its client left): the
 * answer's callback holds a ticket, not the exchange. */
typedef struct _Ticket
{
  Exchange *exchange;
} Ticket;

static Ticket *
ticket_for (Exchange *self)
{
  if (self->ticket == NULL)
    {
      self->ticket = g_rc_box_new0 (Ticket);
      self->ticket->exchange = self;
    }

  return g_rc_box_acquire (self->ticket);
}

/* The exchange a ticket was given for, or %NULL if it went. Releases the
 * ticket. */
static Exchange *
ticket_redeem (Ticket *ticket)
{
  Exchange *self = ticket->exchange;

  g_rc_box_release (ticket);
  return self;
}

#define EXCHANGE_KEY "symfonic-exchange"

static void trace_finish (Exchange *self);

/* What a traced request's span says of its answer's status. */
static inline void
note_status (Exchange *self,
             guint     status)
{
  if (self->trace != NULL)
    self->status = status;
}

static void
note_failure (Exchange           *self,
              SymfonicErrorFrame *frame)
{
  const char *code;

  if (self->trace == NULL || self->error_code != NULL)
    return;
  code = symfonic_error_frame_get_code (frame);
  self->error_code = code != NULL ? g_strdup (code)
                                  : g_strdup_printf ("%u", symfonic_error_frame_get_status (frame));
  self->error_detail = g_strdup (symfonic_error_frame_get_detail (frame));
}

/* Moves the exchange on @event. A move the table does not list is a bug:
 * it is reported and ignored, and the caller does nothing more for it. */
static gboolean
advance (Exchange      *self,
         ExchangeEvent  event)
{
  ExchangeState next = transitions[self->state][event];

  if (next == ILLEGAL)
    {
      g_critical ("An exchange in state %s got the event %s, which is not allowed there",
                  state_names[self->state], event_names[event]);
      return FALSE;
    }

  self->state = next;
  return TRUE;
}

/* The stream was opened: it is counted as closed once. */
static gboolean
has_stream (Exchange *self)
{
  return self->reader == NULL &&
         (self->state == EXCHANGE_STREAMING || self->state == EXCHANGE_ENDED || self->state == EXCHANGE_DETACHED);
}

static void
forget_message (Exchange *self)
{
  g_clear_signal_handler (&self->finished_id, self->message);
  g_clear_signal_handler (&self->got_chunk_id, self->message);
  g_object_set_data (G_OBJECT (self->message), EXCHANGE_KEY, NULL);
  g_clear_object (&self->message);
}

static void
let_go_of_message (gpointer data)
{
  Exchange *self = data;

  g_clear_object (&self->taken_message);
}

static void
exchange_free (Exchange *self)
{
  if (self->trace != NULL)
    trace_finish (self);
  if (self->ticket != NULL)
    {
      self->ticket->exchange = NULL;
      g_clear_pointer (&self->ticket, g_rc_box_release);
    }
  g_hash_table_remove (self->live, self);
  g_clear_pointer (&self->hangup, symfonic_watch_remove);
  if (self->message != NULL)
    forget_message (self);
  g_clear_pointer (&self->body, g_byte_array_unref);
  g_clear_pointer (&self->writer, symfonic_sse_writer_free);
  g_clear_pointer (&self->reader, symfonic_run_reader_free);
  g_clear_pointer (&self->count, symfonic_token_count_cancel);
  g_clear_pointer (&self->detach_timer, symfonic_timer_remove);
  symfonic_poller_cancel_deferred (symfonic_poller_get_thread_default (), &self->release);
  symfonic_poller_cancel_deferred (symfonic_poller_get_thread_default (), &self->let_go);
  g_clear_object (&self->taken_message);
  if (self->scratch != NULL)
    g_string_free (self->scratch, TRUE);
  g_clear_object (&self->run_store);
  g_clear_pointer (&self->encoder, symfonic_encoder_free);
  /* a stream still admitting drops the answer a stage owes it, and the
   * stages that admitted it settle */
  symfonic_stream_cancel (self->stream);
  g_clear_object (&self->stream);
  g_clear_object (&self->route);
  g_free (self->trace);
  g_free (self->error_code);
  g_free (self->error_detail);
  g_free (self->finish_reason);
  g_free (self);
}

void
symfonic_exchange_respond_json (SoupServerMessage *message,
                                guint              status,
                                const char        *body)
{
  soup_server_message_set_status (message, status, symfonic_status_get_phrase (status));
  soup_server_message_set_response (message, "application/json", SOUP_MEMORY_COPY, body, strlen (body));
}

/* The error body in the shape the clients of @route parse. */
char *
symfonic_exchange_dup_error_body (SymfonicRoute      *route,
                                  SymfonicErrorFrame *frame)
{
  GString *body = g_string_new (NULL);

  symfonic_encoder_error_body (route != NULL ? symfonic_route_get_kind (route) : SYMFONIC_ROUTE_KIND_TYPED,
                               frame, body);
  return g_string_free (body, FALSE);
}

/* The header a provider's SDK reads the request's id from. */
static const char *
request_id_header (SymfonicRoute *route)
{
  switch (route != NULL ? symfonic_route_get_kind (route) : SYMFONIC_ROUTE_KIND_TYPED)
    {
    case SYMFONIC_ROUTE_KIND_OPENAI:
      return "x-request-id";
    case SYMFONIC_ROUTE_KIND_ANTHROPIC:
      return "request-id";
    case SYMFONIC_ROUTE_KIND_TYPED:
    case SYMFONIC_ROUTE_KIND_CHUNKS:
    case SYMFONIC_ROUTE_KIND_CHAT:
    case SYMFONIC_ROUTE_KIND_RESUME:
    case SYMFONIC_ROUTE_KIND_RUNS:
    default:
      return NULL;
    }
}

/* A provider route's answers name their request in the header its SDK
 * reads (`x-request-id`, `request-id`): the run's id, so that what a
 * client reports finds the gateway's log lines. */
void
symfonic_exchange_set_request_id (SoupServerMessage *message,
                                  SymfonicRoute     *route,
                                  const char        *id)
{
  const char *name = request_id_header (route);

  if (name != NULL)
    soup_message_headers_replace (soup_server_message_get_response_headers (message), name, id);
}

void
symfonic_exchange_respond_error (SoupServerMessage  *message,
                                 SymfonicRoute      *route,
                                 SymfonicErrorFrame *frame)
{
  SoupMessageHeaders *headers = soup_server_message_get_response_headers (message);
  g_autofree char *json = symfonic_exchange_dup_error_body (route, frame);
  g_auto(GStrv) names = symfonic_error_frame_list_headers (frame);
  const char *id_header = request_id_header (route);

  /* a refusal that is no run's has an id of its own */
  if (id_header != NULL && soup_message_headers_get_one (headers, id_header) == NULL)
    {
      g_autofree char *id = g_uuid_string_random ();

      soup_message_headers_replace (headers, id_header, id);
    }

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
    symfonic_exchange_respond_error (self->message, self->route, frame);
  else
    {
      apply_stream_headers (self);
      symfonic_exchange_respond_json (self->message, status, body->str);
    }
  symfonic_metrics_count_response (self->metrics, symfonic_route_get_name (self->route), status);
  note_status (self, status);
  soup_server_message_unpause (self->message);
}

static const char *
run_id_of (Exchange *self)
{
  return symfonic_invocation_get_run_id (symfonic_stream_get_invocation (self->stream));
}

/* One line per request that failed or was refused. The real message of a
 * server-side fault goes to the log only, once per route and kind of
 * failure every interval: an upstream or a store that is down fails every
 * request. A refusal's message is the client's own detail, for a
 * debugging session. */
static void
log_failure (Exchange     *self,
             const GError *error,
             guint         status)
{
  SymfonicLogRequest request = SYMFONIC_LOG_REQUEST_INIT;
  gboolean refused = self->state < EXCHANGE_STREAMING;
  g_autofree char *what = NULL;
  g_autofree char *kind = NULL;

  symfonic_stream_describe (self->stream, &request);
  request.stage = refused ? "admission" : "stream";
  request.outcome = refused ? "refused" : "failed";
  request.status = status;

  /* A drain that outlasted drain-seconds ended the stream: the gateway
   * stopped, the stream did not fail. Every stream in flight meets it,
   * so it is one line per route every interval, as a failure is. */
  if (!refused && g_error_matches (error, SYMFONIC_ERROR, SYMFONIC_ERROR_SHUTTING_DOWN))
    {
      request.outcome = "drained";
      kind = g_strdup_printf ("route %s: drained", request.route);
      symfonic_log_request (G_LOG_LEVEL_MESSAGE, &request, kind,
                            "Route %s, run %s drained: the gateway stopped before the stream ended",
                            request.route, request.run_id);
      return;
    }

  if (status < 500)
    {
      symfonic_log_request (G_LOG_LEVEL_DEBUG, &request, NULL, "Route %s, run %s %s with %u: %s",
                            request.route, request.run_id, request.outcome, status, error->message);
      return;
    }

  what = symfonic_log_error_kind (error);
  kind = g_strdup_printf ("route %s: %s, %s", request.route, request.outcome, what);
  symfonic_log_request (G_LOG_LEVEL_MESSAGE, &request, kind, "Route %s, run %s %s: %s",
                        request.route, request.run_id, request.outcome, error->message);
}

/* A stream that ended without an error frame, for a debugging session. */
static void
log_end (Exchange   *self,
         const char *outcome)
{
  SymfonicLogRequest request = SYMFONIC_LOG_REQUEST_INIT;

  symfonic_stream_describe (self->stream, &request);
  request.stage = "stream";
  request.outcome = outcome;
  if (g_str_equal (outcome, "completed"))
    request.status = SOUP_STATUS_OK;
  symfonic_log_request (G_LOG_LEVEL_DEBUG, &request, NULL, "Route %s, run %s %s",
                        request.route, request.run_id, outcome);
}

static SymfonicErrorFrame *
map_error (Exchange     *self,
           const GError *error)
{
  SymfonicErrorFrame *frame = symfonic_route_map_error (self->route, error);
  g_auto(GStrv) names = symfonic_stream_list_response_headers (self->stream);

  log_failure (self, error, symfonic_error_frame_get_status (frame));

  /* what a stage said about this refusal (Retry-After) */
  for (guint i = 0; names[i] != NULL; i++)
    symfonic_error_frame_set_header (frame, names[i], symfonic_stream_get_response_header (self->stream, names[i]));
  note_failure (self, frame);

  return frame;
}

static void
count_slow_client (Exchange *self)
{
  if (self->slow_counted)
    return;
  self->slow_counted = TRUE;
  symfonic_metrics_add (self->metrics, SYMFONIC_COUNTER_STREAMS_SLOW_CLIENT, 1);
}

/* How a stream ended, counted once what its client gets is certain. */
static void
count_end (Exchange     *self,
           const GError *error)
{
  if (error == NULL)
    {
      symfonic_metrics_add (self->metrics, SYMFONIC_COUNTER_STREAMS_COMPLETED, 1);
      log_end (self, "completed");
      return;
    }

  symfonic_metrics_add (self->metrics, SYMFONIC_COUNTER_STREAMS_FAILED, 1);
  if (g_error_matches (error, SYMFONIC_ERROR, SYMFONIC_ERROR_SLOW_CLIENT))
    count_slow_client (self);
}

/* The client is too slow for the stream to go on: it ends with its one
 * error frame, whose room the writer keeps. A stream that had ended
 * already lost its terminal with what the stalled client did not take,
 * and gets the error frame in its place. */
static void
end_for_slow_client (Exchange   *self,
                     const char *why)
{
  g_autoptr(GError) error = g_error_new_literal (SYMFONIC_ERROR, SYMFONIC_ERROR_SLOW_CLIENT, why);
  g_autoptr(SymfonicErrorFrame) frame = NULL;

  symfonic_log_stream (G_LOG_LEVEL_DEBUG, self->stream, "stream", NULL, "Route %s, run %s: %s",
                       symfonic_route_get_name (self->route), run_id_of (self), why);
  if (!symfonic_stream_is_over (self->stream))
    {
      symfonic_stream_abort (self->stream, error);
      return;
    }

  /* an error terminal was counted as a failure already */
  if (self->success_unsent)
    count_end (self, error);
  else
    count_slow_client (self);
  self->success_unsent = FALSE;
  frame = map_error (self, error);
  symfonic_encoder_error (self->encoder, frame, symfonic_sse_writer_begin_frame (self->writer));
  symfonic_sse_writer_close (self->writer);
}

static void open_event_stream (Exchange *self);

/* Gives the store the frames from @start of @out, as the client gets them,
 * one by one: the typed success writes two at once. Ids follow on from
 * @first_seq. */
static void
keep_frames (Exchange *self,
             GString  *out,
             gsize     start,
             guint64   first_seq)
{
  const char *p = out->str + start;
  const char *end = out->str + out->len;
  guint64 seq = first_seq;

  while (p < end)
    {
      const char *boundary = g_strstr_len (p, end - p, "\n\n");
      gsize length = boundary != NULL ? (gsize) (boundary + 2 - p) : (gsize) (end - p);

      symfonic_run_store_append (self->run_store, run_id_of (self), seq++, p, length);
      p += length;
    }
}

/* Where the next frame is built: the writer's buffer, or, once a resumable
 * run's client left, the scratch buffer its frames go to the store from. */
static GString *
begin_frame (Exchange *self)
{
  if (self->writer != NULL)
    return symfonic_sse_writer_begin_frame (self->writer);

  g_string_truncate (self->scratch, 0);
  return self->scratch;
}

/* A provider format keeps its deltas, which it cannot make up for, but
 * its first delta is as urgent as a typed one. */
static SymfonicSseFrameFlags
frame_flags (SymfonicFrameClass  frame_class,
             SymfonicEvent      *event)
{
  SymfonicSseFrameFlags flags = SYMFONIC_SSE_FRAME_KEPT;
  SymfonicEventKind kind = symfonic_event_peek_kind (event);

  if (frame_class == SYMFONIC_FRAME_DROPPABLE)
    flags |= SYMFONIC_SSE_FRAME_DROPPABLE;
  if (kind == SYMFONIC_EVENT_KIND_TEXT_DELTA || kind == SYMFONIC_EVENT_KIND_THINKING_DELTA)
    flags |= SYMFONIC_SSE_FRAME_DELTA;

  return flags;
}

static SymfonicSinkResult
sink_event (gpointer       data,
            SymfonicEvent *event)
{
  Exchange *self = data;
  GString *out;
  SymfonicFrameClass frame_class;
  SymfonicSseFrameResult result;
  guint64 seq;
  gsize start;

  /* why the answer ended, for a traced request's span */
  if (G_UNLIKELY (self->trace != NULL) && symfonic_event_peek_kind (event) == SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE)
    {
      JsonObject *payload = symfonic_event_get_payload (event);
      JsonNode *reason = payload != NULL ? json_object_get_member (payload, "finish_reason") : NULL;

      if (reason != NULL && JSON_NODE_HOLDS_VALUE (reason) && json_node_get_value_type (reason) == G_TYPE_STRING)
        {
          g_free (self->finish_reason);
          self->finish_reason = g_strndup (json_node_get_string (reason), 64);
        }
    }

  /* the first event releases a held head */
  if (self->writer == NULL && self->message != NULL && symfonic_encoder_is_streaming (self->encoder))
    open_event_stream (self);
  if (self->writer == NULL && !self->keeps_run)
    {
      symfonic_encoder_event (self->encoder, event, NULL);
      return SYMFONIC_SINK_TAKEN;
    }

  out = begin_frame (self);
  start = out->len;
  seq = symfonic_encoder_get_seq (self->encoder);
  frame_class = symfonic_encoder_event (self->encoder, event, out);
  if (frame_class != SYMFONIC_FRAME_NONE && self->keeps_run)
    keep_frames (self, out, start, seq + 1);
  if (self->writer == NULL || frame_class == SYMFONIC_FRAME_NONE)
    return SYMFONIC_SINK_TAKEN;

  result = symfonic_sse_writer_end_frame (self->writer, frame_flags (frame_class, event));
  if (result == SYMFONIC_SSE_FRAME_OVERFLOW)
    {
      /* a source that does not wait cannot make the gateway hold more */
      end_for_slow_client (self, "The client fell further behind than the stream may hold");
      return SYMFONIC_SINK_FULL;
    }
  if (symfonic_sse_writer_is_full (self->writer))
    return SYMFONIC_SINK_FULL;

  return result == SYMFONIC_SSE_FRAME_SENT ? SYMFONIC_SINK_YIELD : SYMFONIC_SINK_TAKEN;
}

static void
sink_end (gpointer      data,
          const GError *error)
{
  Exchange *self = data;
  g_autoptr(SymfonicErrorFrame) frame = NULL;
  g_autoptr(GString) body = NULL;
  GString *out;
  gboolean held;
  guint64 seq;
  gsize start;

  if (!advance (self, EXCHANGE_END))
    return;
  self->ended_us = g_get_monotonic_time ();
  self->outcome = error != NULL ? SYMFONIC_STREAM_OUTCOME_FAILED : SYMFONIC_STREAM_OUTCOME_COMPLETED;
  if (error != NULL)
    {
      frame = map_error (self, error);
      count_end (self, error);
    }

  /* a held head that no event released: a success still streams, a
   * failure is a plain JSON answer (and no frame of the run); a head that
   * was not held goes out whatever the end */
  held = self->writer == NULL && self->message != NULL;
  if (held && (self->starting || (frame == NULL && symfonic_encoder_is_streaming (self->encoder))))
    {
      open_event_stream (self);
      held = FALSE;
    }

  out = !held && (self->writer != NULL || self->keeps_run) ? begin_frame (self) : (body = g_string_new (NULL));
  start = out->len;
  seq = symfonic_encoder_get_seq (self->encoder);
  if (frame == NULL)
    {
      gint64 elapsed = g_get_monotonic_time () - symfonic_stream_get_start_time (self->stream);

      symfonic_encoder_success (self->encoder, elapsed / 1000, out);
    }
  else
    symfonic_encoder_error (self->encoder, frame, out);

  if (self->keeps_run)
    {
      if (!held)
        keep_frames (self, out, start, seq + 1);
      symfonic_run_store_close_run (self->run_store, run_id_of (self), symfonic_route_get_resume_seconds (self->route));
    }
  if (self->writer != NULL)
    {
      self->success_unsent = frame == NULL;
      symfonic_sse_writer_close (self->writer);
      return;
    }
  if (frame == NULL)
    count_end (self, NULL);
  if (self->keeps_run && !held)
    {
      /* a detached run: nothing goes out, and the exchange ends once the
       * stream returned from this call */
      symfonic_poller_defer (symfonic_poller_get_thread_default (), &self->release);
      return;
    }

  respond (self, frame, body);
}

/* The upstream answered, its first event still to come: a route with
 * heartbeats opens its event stream now, so that they flow while the
 * model thinks; without them the head waits for the first event, and a
 * failure before it is a real status. */
static void
sink_head (gpointer data)
{
  Exchange *self = data;

  if (self->writer == NULL && self->message != NULL && symfonic_encoder_is_streaming (self->encoder) &&
      symfonic_route_get_heartbeat_seconds (self->route) > 0)
    open_event_stream (self);
}

static const SymfonicStreamSink sink = {
  sink_event,
  sink_end,
  sink_head,
};

static void
client_gone (Exchange *self)
{
  if (!symfonic_stream_is_over (self->stream))
    {
      symfonic_stream_cancel (self->stream);
      symfonic_metrics_add (self->metrics, SYMFONIC_COUNTER_STREAMS_CANCELLED, 1);
      self->outcome = SYMFONIC_STREAM_OUTCOME_CANCELLED;
      self->ended_us = g_get_monotonic_time ();
      log_end (self, "cancelled");
    }
}

/* A stream that started is over, however it ended: its GenAI figures. */
static void
record_stream (Exchange *self)
{
  if (self->recorded)
    return;
  self->recorded = TRUE;
  symfonic_metrics_record_stream (self->metrics, self->stream, self->outcome,
                                  self->ended_us != 0 ? self->ended_us : g_get_monotonic_time ());
}

static void
writer_drained (gpointer data)
{
  Exchange *self = data;

  symfonic_stream_sink_ready (self->stream);
}

static void
writer_ending (gpointer data)
{
  Exchange *self = data;

  if (self->success_unsent)
    count_end (self, NULL);
  self->success_unsent = FALSE;
}

static void
writer_stalled (gpointer data)
{
  Exchange *self = data;
  g_autofree char *why = g_strdup_printf ("The client read nothing for %u seconds",
                                          symfonic_route_get_stall_timeout (self->route));

  end_for_slow_client (self, why);
}

/* What the writer sent, counted once: when the response ends, or when a
 * resumable run's client left. */
static void
count_writer (Exchange *self)
{
  if (self->writer == NULL)
    return;

  symfonic_metrics_add (self->metrics, SYMFONIC_COUNTER_FRAMES_WRITTEN, symfonic_sse_writer_get_frames (self->writer));
  symfonic_metrics_add (self->metrics, SYMFONIC_COUNTER_FRAMES_SHED, symfonic_sse_writer_get_shed (self->writer));
  symfonic_metrics_add (self->metrics, SYMFONIC_COUNTER_BYTES_WRITTEN, symfonic_sse_writer_get_bytes (self->writer));
}

/* The stream's response is over: counted, and the exchange ends. */
static void
stream_closed (Exchange *self)
{
  /* a success whose terminal did not start to go out: the client left or
   * was let go as too slow before */
  if (self->success_unsent)
    {
      if (symfonic_sse_writer_is_stalled (self->writer))
        count_slow_client (self);
      else
        symfonic_metrics_add (self->metrics, SYMFONIC_COUNTER_STREAMS_CANCELLED, 1);
      self->success_unsent = FALSE;
    }
  count_writer (self);
  if (self->encoder != NULL)
    symfonic_metrics_add (self->metrics, SYMFONIC_COUNTER_EVENTS_DROPPED, symfonic_encoder_get_dropped (self->encoder));
  if (has_stream (self))
    {
      client_gone (self);
      symfonic_metrics_stream_closed (self->metrics);
      record_stream (self);
    }
}

/* A detached run ended, its terminal in the store. */
static void
release_detached (gpointer data)
{
  Exchange *self = data;

  stream_closed (self);
  if (advance (self, EXCHANGE_RELEASED))
    exchange_free (self);
}

/* The store said how long the detached run has gone without a reader
 * (-1: nobody ever came back). A reader that came back restarted its
 * clock, which runs from when the last one left and not at all while one
 * follows it. Nobody for resume-seconds, and it ends with its one error
 * frame, for a reader that comes late, its stages settling as for any
 * run. */
static void
unread_answered (GObject      *object,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  Exchange *self = ticket_redeem (user_data);
  gint64 keep_ms;
  gint64 unread_ms = -1;
  g_autoptr(GError) failure = NULL;
  g_autoptr(GError) error = NULL;

  if (!symfonic_run_store_get_unread_finish (SYMFONIC_RUN_STORE (object), result, &unread_ms, &failure) &&
      self != NULL)
    symfonic_log_stream (G_LOG_LEVEL_DEBUG, self->stream, "store", NULL,
                         "Run %s: the run store did not say whether a reader came back: %s",
                         run_id_of (self), failure->message);
  /* the run ended meanwhile */
  if (self == NULL || self->state != EXCHANGE_DETACHED || symfonic_stream_is_over (self->stream))
    return;

  keep_ms = (gint64) symfonic_route_get_resume_seconds (self->route) * 1000;
  if (unread_ms >= 0 && unread_ms < keep_ms)
    {
      symfonic_timer_set_deadline (self->detach_timer, g_get_monotonic_time () + (keep_ms - unread_ms) * 1000);
      return;
    }

  error = g_error_new (SYMFONIC_ERROR, SYMFONIC_ERROR_SLOW_CLIENT, "Nobody read the run for %u seconds",
                       symfonic_route_get_resume_seconds (self->route));
  symfonic_stream_abort (self->stream, error);
}

/* resume-seconds after its client left, or after the store last said a
 * reader came back: whether one did since decides. */
static void
detached_too_long (gpointer data)
{
  Exchange *self = data;
  SymfonicInvocation *invocation = symfonic_stream_get_invocation (self->stream);

  symfonic_run_store_get_unread_async (self->run_store, run_id_of (self),
                                       symfonic_invocation_get_principal_id (invocation),
                                       symfonic_invocation_get_tenant_id (invocation), NULL, unread_answered,
                                       ticket_for (self));
}

/* The client of a resumable run left before its end: the run goes on,
 * its frames to the store only, instead of being cancelled, until nobody
 * read it for resume-seconds. */
static gboolean
detach (Exchange *self)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) symfonic_route_get_resume_seconds (self->route) * G_USEC_PER_SEC;

  if (!self->keeps_run || self->state != EXCHANGE_STREAMING || symfonic_stream_is_over (self->stream))
    return FALSE;

  symfonic_log_stream (G_LOG_LEVEL_DEBUG, self->stream, "stream", NULL, "Route %s, run %s goes on without its client",
                       symfonic_route_get_name (self->route), run_id_of (self));
  count_writer (self);
  g_clear_pointer (&self->writer, symfonic_sse_writer_free);
  advance (self, EXCHANGE_DETACH);
  self->scratch = g_string_new (NULL);
  /* a background response runs to its end (or the route's max-duration)
   * whoever reads it */
  if (!self->background)
    {
      self->detach_timer = symfonic_poller_timer (symfonic_poller_get_thread_default (), detached_too_long, self);
      symfonic_timer_set_deadline (self->detach_timer, deadline);
    }
  /* a source that waited for the client reads on */
  symfonic_stream_sink_ready (self->stream);

  return TRUE;
}

static void
writer_finished (gpointer data)
{
  Exchange *self = data;

  if (detach (self))
    return;
  stream_closed (self);
  if (advance (self, EXCHANGE_WRITTEN))
    exchange_free (self);
}

static const SymfonicSseWriterCallbacks writer_callbacks = {
  writer_drained,
  writer_ending,
  writer_stalled,
  writer_finished,
};

static void
on_socket (gpointer     data,
           GIOCondition condition)
{
  Exchange *self = data;
  GSocket *socket = symfonic_connection_get_message_socket (self->message);

  switch (symfonic_connection_peek_peer (g_socket_get_fd (socket)))
    {
    case SYMFONIC_PEER_QUIET:
      return;
    case SYMFONIC_PEER_LEFT:
      client_gone (self);
      /* let libsoup try to answer, fail, and finish the message */
      soup_server_message_unpause (self->message);
      break;
    case SYMFONIC_PEER_SENT:
      /* a pipelined request: the client is alive */
      break;
    }
  g_clear_pointer (&self->hangup, symfonic_watch_remove);
}

static void
watch_hangup (Exchange *self)
{
  GSocket *socket = symfonic_connection_get_message_socket (self->message);

  if (socket == NULL)
    return;

  self->hangup = symfonic_poller_watch (symfonic_poller_get_thread_default (), g_socket_get_fd (socket),
                                        G_IO_IN, on_socket, self);
}

static void
on_finished (SoupServerMessage *message,
             gpointer           user_data)
{
  Exchange *self = user_data;

  /* finished may come before disconnected: stop every handler first */
  g_clear_signal_handler (&self->finished_id, self->message);
  stream_closed (self);

  if (advance (self, EXCHANGE_FINISHED))
    exchange_free (self);
}

/* The head of an event stream the gateway writes itself. */
static void
set_event_stream_head (Exchange *self)
{
  SoupMessageHeaders *headers = soup_server_message_get_response_headers (self->message);

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
  note_status (self, SOUP_STATUS_OK);
}

/* Writes the event stream's head and hands the connection to its writer. */
static void
open_event_stream (Exchange *self)
{
  set_event_stream_head (self);
  /* the writer watches the client from now on, through the same watch */
  self->writer = symfonic_sse_writer_new (self->message, g_steal_pointer (&self->hangup),
                                          symfonic_route_get_stall_timeout (self->route),
                                          symfonic_route_get_heartbeat_seconds (self->route),
                                          &writer_callbacks, self);
  /* the writer took the connection: libsoup freed its state for the
   * message, which is let go too, but only after this iteration: its
   * finalizing costs about as much as building the head, and the first
   * frames are on their way in this one */
  self->taken_message = g_object_ref (self->message);
  forget_message (self);
  symfonic_poller_defer (symfonic_poller_get_thread_default (), &self->let_go);
}

/* A background response's client gets its queued object at once; the
 * run goes on without it, its frames to the run store only, until its
 * end, and is read again with `GET …/responses/{id}`. */
static void
answer_background (Exchange *self)
{
  g_autoptr(GString) body = g_string_new (NULL);

  symfonic_responses_encoder_write_queued (self->encoder, body);
  apply_stream_headers (self);
  symfonic_exchange_respond_json (self->message, SOUP_STATUS_OK, body->str);
  symfonic_metrics_count_response (self->metrics, symfonic_route_get_name (self->route), SOUP_STATUS_OK);
  soup_server_message_unpause (self->message);
  forget_message (self);
  advance (self, EXCHANGE_DETACH);
  self->scratch = g_string_new (NULL);
  symfonic_stream_start (self->stream);
}

/* A kept run's client gets the token with which a browser's EventSource,
 * which cannot send the credentials, reads the run again; only for an
 * authenticated run, which has a tenant and principal to stand for. */
static void
give_resume_token (Exchange *self)
{
  SymfonicInvocation *invocation = symfonic_stream_get_invocation (self->stream);
  GBytes *secret = symfonic_route_get_resume_secret (self->route);
  const char *tenant = symfonic_invocation_get_tenant_id (invocation);
  g_autofree char *token = NULL;
  gint64 expires;

  if (!self->keeps_run || secret == NULL || tenant == NULL)
    return;
  expires = g_get_real_time () / G_USEC_PER_SEC + symfonic_route_get_resume_token_seconds (self->route);
  token = symfonic_resume_token_new (secret, run_id_of (self), tenant,
                                     symfonic_invocation_get_principal_id (invocation), expires);
  soup_message_headers_replace (soup_server_message_get_response_headers (self->message),
                                SYMFONIC_RESUME_TOKEN_HEADER, token);
}

static void
begin_stream (Exchange *self)
{
  if (!advance (self, EXCHANGE_ADMITTED))
    return;
  self->encoder = symfonic_encoder_new (symfonic_route_get_kind (self->route), self->stream,
                                        self->encoder_flags);
  symfonic_metrics_stream_opened (self->metrics);
  symfonic_stream_set_sink (self->stream, &sink, self);
  soup_message_headers_replace (soup_server_message_get_response_headers (self->message), "X-Symfonic-Run-ID",
                                run_id_of (self));
  give_resume_token (self);

  if (self->background_answer)
    {
      answer_background (self);
      return;
    }

  /* a held head waits for the first event (sink_event) or the end */
  if (!symfonic_encoder_is_streaming (self->encoder) || symfonic_stream_get_holds_head (self->stream))
    {
      watch_hangup (self);
      symfonic_stream_start (self->stream);
      return;
    }

  /* The upstream is asked first: taking the connection from libsoup and
   * building the head would only delay it, and the head goes out at the
   * end of this iteration either way. What the begin hooks emit, or an
   * end they cause, opens the event stream on the way. */
  self->starting = TRUE;
  symfonic_stream_start (self->stream);
  self->starting = FALSE;
  if (self->writer == NULL && self->message != NULL)
    open_event_stream (self);
}

/* A request body the client is still to send, or is sending. */
static gboolean
body_pending (SoupServerMessage *message)
{
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (message);

  switch (soup_message_headers_get_encoding (headers))
    {
    case SOUP_ENCODING_CONTENT_LENGTH:
      return soup_message_headers_get_content_length (headers) > 0;
    case SOUP_ENCODING_NONE:
      return FALSE;
    default:
      return TRUE;
    }
}

/* Answers a request that is not admitted. libsoup reads nothing while
 * the request is decided (@paused): after the body always
 * (symfonic_exchange_run() pauses it), on the head only once the stream
 * waited for a stage. */
static void
refuse (Exchange     *self,
        const GError *error,
        gboolean      paused)
{
  g_autoptr(SymfonicErrorFrame) frame = map_error (self, error);
  g_autofree char *body = NULL;
  gboolean body_unread = self->state == EXCHANGE_HEAD;
  const char *id_header = request_id_header (self->route);

  /* the early refusal writes the frame's headers alone */
  if (id_header != NULL)
    symfonic_error_frame_set_header (frame, id_header, run_id_of (self));
  symfonic_metrics_count_response (self->metrics, symfonic_route_get_name (self->route),
                                   symfonic_error_frame_get_status (frame));
  note_status (self, symfonic_error_frame_get_status (frame));
  self->refused = TRUE;

  if (body_unread && body_pending (self->message))
    {
      /* libsoup would read the whole body before answering: the answer
       * goes out on the connection without it, and the connection with it */
      g_clear_signal_handler (&self->finished_id, self->message);
      body = symfonic_exchange_dup_error_body (self->route, frame);
      symfonic_cors_add_to_frame (self->message, self->route, frame);
      symfonic_early_refusal_send (self->message, frame, body);
      if (advance (self, EXCHANGE_RELEASED))
        exchange_free (self);
      return;
    }

  if (!advance (self, EXCHANGE_REFUSE))
    return;
  symfonic_exchange_respond_error (self->message, self->route, frame);
  if (paused)
    soup_server_message_unpause (self->message);
}

/* Whether the route keeps this stream's run for readers to come back. */
static gboolean
wants_run (Exchange *self)
{
  SymfonicRouteKind kind = symfonic_route_get_kind (self->route);

  /* a background response is a resumable run whatever the route's
   * resume, with its bounds */
  return self->background ||
         (symfonic_route_get_resume (self->route) &&
          (kind == SYMFONIC_ROUTE_KIND_TYPED || kind == SYMFONIC_ROUTE_KIND_CHUNKS));
}

static void run_opened (GObject      *object,
                        GAsyncResult *result,
                        gpointer      user_data);

/* An opening asked of the store: a run the store opened after its
 * exchange went is closed again at once. */
typedef struct
{
  Ticket *ticket;
  char   *run_id;
} Opening;

/* A stream of a resumable route keeps its frames in the store from its
 * first; a store at its bounds refuses the run before the handshake. A
 * store in the process answers at once (the stream starts in this
 * main-loop turn); one that must be asked answers in run_opened(). */
static SymfonicAdmitResult
open_run (Exchange  *self,
          GError   **error)
{
  SymfonicInvocation *invocation = symfonic_stream_get_invocation (self->stream);
  g_autoptr(GError) local_error = NULL;

  if (!wants_run (self))
    return SYMFONIC_ADMIT_PASSED;
  if (symfonic_run_store_try_open_run (self->run_store, run_id_of (self),
                                       symfonic_invocation_get_principal_id (invocation),
                                       symfonic_invocation_get_tenant_id (invocation),
                                       symfonic_route_get_resume_frames (self->route),
                                       symfonic_route_get_resume_bytes (self->route), &local_error))
    {
      self->keeps_run = TRUE;
      return SYMFONIC_ADMIT_PASSED;
    }
  if (!g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return SYMFONIC_ADMIT_REFUSED;
    }

  symfonic_run_store_open_run_async (self->run_store, run_id_of (self),
                                     symfonic_invocation_get_principal_id (invocation),
                                     symfonic_invocation_get_tenant_id (invocation),
                                     symfonic_route_get_resume_frames (self->route),
                                     symfonic_route_get_resume_bytes (self->route), NULL, run_opened,
                                     g_memdup2 (&(Opening) { ticket_for (self), g_strdup (run_id_of (self)) },
                                                sizeof (Opening)));
  return SYMFONIC_ADMIT_PENDING;
}

static void
run_opened (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  Opening *opening = user_data;
  g_autofree char *run_id = opening->run_id;
  Exchange *self = ticket_redeem (opening->ticket);
  g_autoptr(GError) error = NULL;
  gboolean opened = symfonic_run_store_open_run_finish (SYMFONIC_RUN_STORE (object), result, &error);

  g_free (opening);
  if (self == NULL)
    {
      /* the client left first: the run never starts */
      if (opened)
        symfonic_run_store_close_run (SYMFONIC_RUN_STORE (object), run_id, 0);
      return;
    }
  if (!opened)
    {
      refuse (self, error, TRUE);
      return;
    }
  self->keeps_run = TRUE;
  begin_stream (self);
}

/* Every stage admitted the request: its run opens, and it streams. */
static void
body_admitted (Exchange *self)
{
  g_autoptr(GError) error = NULL;

  switch (open_run (self, &error))
    {
    case SYMFONIC_ADMIT_PASSED:
      begin_stream (self);
      break;
    case SYMFONIC_ADMIT_REFUSED:
      refuse (self, error, TRUE);
      break;
    case SYMFONIC_ADMIT_PENDING:
      break;
    }
}

/* The body-phase stages that the stream waited for decided. */
static void
body_decided (gpointer      data,
              const GError *error)
{
  Exchange *self = data;

  if (error != NULL)
    refuse (self, error, TRUE);
  else
    body_admitted (self);
}

/* The first frames of a run read again are in: its event stream starts.
 * A reader that has every frame of a run that ended gets 204, which
 * tells an EventSource to stop reconnecting (WHATWG HTML, "Server-sent
 * events"), where an empty stream would have it come back forever. */
static void
start_reader (Exchange *self)
{
  if (symfonic_run_reader_has_all (self->reader))
    {
      if (!advance (self, EXCHANGE_ANSWER))
        return;
      soup_message_headers_replace (soup_server_message_get_response_headers (self->message), "X-Symfonic-Run-ID",
                                    symfonic_run_reader_get_run_id (self->reader));
      g_clear_pointer (&self->reader, symfonic_run_reader_free);
      soup_server_message_set_status (self->message, SOUP_STATUS_NO_CONTENT, NULL);
      symfonic_metrics_count_response (self->metrics, symfonic_route_get_name (self->route), SOUP_STATUS_NO_CONTENT);
      note_status (self, SOUP_STATUS_NO_CONTENT);
      soup_server_message_unpause (self->message);
      return;
    }

  if (!advance (self, EXCHANGE_ADMITTED))
    return;

  soup_message_headers_replace (soup_server_message_get_response_headers (self->message), "X-Symfonic-Run-ID",
                                symfonic_run_reader_get_run_id (self->reader));
  set_event_stream_head (self);
  symfonic_run_reader_start (self->reader, self->message, symfonic_route_get_stall_timeout (self->route),
                             symfonic_route_get_heartbeat_seconds (self->route), writer_finished, self);
  forget_message (self);
}

/* A store that answered the first read later: the reader goes with the
 * exchange, so the exchange is still there. */
static void
reader_opened (const GError *error,
               gpointer      data)
{
  Exchange *self = data;

  if (error != NULL)
    {
      g_clear_pointer (&self->reader, symfonic_run_reader_free);
      refuse (self, error, TRUE);
      return;
    }
  start_reader (self);
}

/* Reads the first frames of a run again (before the head: a refusal is a
 * status of its own), then streams it. */
static void
open_reader (Exchange *self)
{
  g_autoptr(GError) error = NULL;

  switch (symfonic_run_reader_open (self->reader, reader_opened, self, &error))
    {
    case SYMFONIC_RUN_READER_READY:
      start_reader (self);
      break;
    case SYMFONIC_RUN_READER_REFUSED:
      g_clear_pointer (&self->reader, symfonic_run_reader_free);
      refuse (self, error, TRUE);
      break;
    case SYMFONIC_RUN_READER_PENDING:
      break;
    }
}

/* A runs route: after authentication, the run asked for is read from
 * the store, from the frame after Last-Event-ID. */
static void
start_reading (Exchange *self)
{
  g_autoptr(GError) error = NULL;

  self->reader = symfonic_run_reader_new (self->run_store, self->message, symfonic_route_get_path (self->route),
                                          symfonic_stream_get_invocation (self->stream), &error);
  if (self->reader == NULL)
    {
      refuse (self, error, TRUE);
      return;
    }
  open_reader (self);
}

static GError *
payload_too_large (Exchange *self)
{
  return g_error_new (SYMFONIC_ERROR, SYMFONIC_ERROR_PAYLOAD_TOO_LARGE,
                      "The request body is larger than %" G_GUINT64_FORMAT " bytes", self->max_body_bytes);
}

/* The head-phase stages admitted the request: the body may be read, if
 * its declared length is within the limit. Only an authenticated client
 * learns about the limit. libsoup was @paused while the stream waited for
 * a stage. */
static void
head_admitted (Exchange *self,
               gboolean  paused)
{
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (self->message);

  if (soup_message_headers_get_encoding (headers) == SOUP_ENCODING_CONTENT_LENGTH &&
      (guint64) soup_message_headers_get_content_length (headers) > self->max_body_bytes)
    {
      g_autoptr(GError) error = payload_too_large (self);

      refuse (self, error, paused);
      return;
    }

  if (advance (self, EXCHANGE_ADMITTED) && paused)
    soup_server_message_unpause (self->message);
}

/* The head-phase stages that the stream waited for decided. */
static void
head_decided (gpointer      data,
              const GError *error)
{
  Exchange *self = data;

  if (error != NULL)
    refuse (self, error, TRUE);
  else
    head_admitted (self, TRUE);
}

static void
on_got_chunk (SoupServerMessage *message,
              GBytes            *chunk,
              gpointer           user_data)
{
  Exchange *self = user_data;
  gsize length = g_bytes_get_size (chunk);

  if (self->body_too_large || self->body->len + length > self->max_body_bytes)
    {
      self->body_too_large = TRUE;
      return;
    }
  g_byte_array_append (self->body, g_bytes_get_data (chunk, NULL), length);
}

static gboolean
content_type_is_json (SoupServerMessage *message)
{
  const char *type = soup_message_headers_get_content_type (soup_server_message_get_request_headers (message), NULL);

  return type != NULL && g_ascii_strcasecmp (type, "application/json") == 0;
}

/* Fills the stream's invocation from the request body, in the format of
 * the route's kind. */
static gboolean
decode (Exchange  *self,
        GBytes    *bytes,
        GError   **error)
{
  SoupServerMessage *message = self->message;
  SymfonicInvocation *invocation = symfonic_stream_get_invocation (self->stream);
  g_autoptr(JsonNode) body = NULL;
  g_autoptr(GError) parse_error = NULL;
  SymfonicProviderTarget target;
  gsize length;
  const char *data;

  if (!content_type_is_json (message))
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UNSUPPORTED_MEDIA_TYPE,
                           "The request body must be application/json");
      return FALSE;
    }

  data = g_bytes_get_data (bytes, &length);
  body = symfonic_json_parse (data, length, SYMFONIC_JSON_MAX_DEPTH, &parse_error);
  if (body == NULL)
    {
      /* the client gets the rule, the log gets what broke it */
      symfonic_log_stream (G_LOG_LEVEL_DEBUG, self->stream, "admission", NULL, "Refusing a request body: %s",
                           parse_error->message);
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST,
                   "The request body must be one strict JSON document (RFC 8259) nested at most %d levels deep",
                   SYMFONIC_JSON_MAX_DEPTH);
      return FALSE;
    }

  /* a provider route's request is readied for its source's API */
  symfonic_provider_source_describe (symfonic_route_get_source (self->route), &target);
  switch (symfonic_route_get_kind (self->route))
    {
    case SYMFONIC_ROUTE_KIND_OPENAI:
      if (self->endpoint == SYMFONIC_ENDPOINT_RESPONSES)
        return symfonic_responses_request_decode (body, &target, invocation, &self->encoder_flags, error);
      return symfonic_openai_request_decode (body, &target, invocation, &self->encoder_flags, error);
    case SYMFONIC_ROUTE_KIND_ANTHROPIC:
      return symfonic_anthropic_request_decode (body, &target, invocation, &self->encoder_flags, error);
    case SYMFONIC_ROUTE_KIND_TYPED:
    case SYMFONIC_ROUTE_KIND_CHUNKS:
    case SYMFONIC_ROUTE_KIND_CHAT:
    case SYMFONIC_ROUTE_KIND_RESUME:
    default:
      return symfonic_invocation_set_body (invocation, body, error);
    }
}

/* A JSON answer that needs no stream. */
static void
answer_json (Exchange   *self,
             const char *body)
{
  if (!advance (self, EXCHANGE_ANSWER))
    return;
  symfonic_exchange_respond_json (self->message, SOUP_STATUS_OK, body);
  symfonic_metrics_count_response (self->metrics, symfonic_route_get_name (self->route), SOUP_STATUS_OK);
  note_status (self, SOUP_STATUS_OK);
  soup_server_message_unpause (self->message);
}

static void answer_response (Exchange     *self,
                             const char   *run_id,
                             GPtrArray    *frames,
                             const GError *error);

static void
response_read (GObject      *object,
               GAsyncResult *result,
               gpointer      user_data)
{
  Exchange *self = ticket_redeem (user_data);
  g_autoptr(GError) error = NULL;
  gboolean ended;
  GPtrArray *frames;
  g_autofree char *run_id = NULL;

  if (self == NULL)
    return;
  frames = symfonic_run_store_read_finish (self->run_store, result, &ended, &error);
  run_id = symfonic_responses_run_for_id (strrchr (g_uri_get_path (soup_server_message_get_uri (self->message)),
                                                   '/') + 1);
  answer_response (self, run_id, frames, error);
}

/* `GET {root}/responses/{id}`: a background response read again, as the
 * object its latest event carried, or with `stream=true` as its events
 * after `starting_after`, then the ones it goes on to send. Only the
 * principal and tenant that started it may. */
static void
read_response (Exchange *self)
{
  SymfonicInvocation *invocation = symfonic_stream_get_invocation (self->stream);
  GUri *uri = soup_server_message_get_uri (self->message);
  const char *path = g_uri_get_path (uri);
  g_autofree char *run_id = symfonic_responses_run_for_id (strrchr (path, '/') + 1);
  g_autoptr(GHashTable) query = NULL;
  g_autoptr(GPtrArray) frames = NULL;
  g_autoptr(GError) error = NULL;
  const char *after_text;
  guint64 after = 0;
  gboolean ended;

  if (g_uri_get_query (uri) != NULL)
    query = g_uri_parse_params (g_uri_get_query (uri), -1, "&", G_URI_PARAMS_NONE, NULL);
  if (run_id == NULL)
    {
      error = g_error_new_literal (SYMFONIC_ERROR, SYMFONIC_ERROR_NOT_FOUND, "No such response");
      refuse (self, error, TRUE);
      return;
    }
  after_text = query != NULL ? g_hash_table_lookup (query, "starting_after") : NULL;
  if (after_text != NULL &&
      (strspn (after_text, "0123456789") != strlen (after_text) || *after_text == '\0' ||
       !g_ascii_string_to_unsigned (after_text, 10, 0, G_MAXUINT64, &after, NULL)))
    {
      error = g_error_new_literal (SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST,
                                   "“starting_after” must be the sequence number of an event of the response");
      refuse (self, error, TRUE);
      return;
    }

  if (query != NULL && g_strcmp0 (g_hash_table_lookup (query, "stream"), "true") == 0)
    {
      self->reader = symfonic_run_reader_new_for_run (self->run_store, run_id, after, invocation);
      open_reader (self);
      return;
    }

  frames = symfonic_run_store_try_read (self->run_store, run_id, symfonic_invocation_get_principal_id (invocation),
                                        symfonic_invocation_get_tenant_id (invocation), 0, &ended, &error);
  if (frames == NULL && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
    {
      symfonic_run_store_read_async (self->run_store, run_id, symfonic_invocation_get_principal_id (invocation),
                                     symfonic_invocation_get_tenant_id (invocation), 0, NULL, response_read,
                                     ticket_for (self));
      return;
    }
  answer_response (self, run_id, g_steal_pointer (&frames), error);
}

/* A background response's frames (transfer full), read again for its
 * object; or why they could not be. */
static void
answer_response (Exchange     *self,
                 const char   *run_id,
                 GPtrArray    *frames,
                 const GError *error)
{
  if (frames == NULL)
    {
      refuse (self, error, TRUE);
      return;
    }

  /* the response as the latest event that carried it says it */
  for (guint i = frames->len; i > 0; i--)
    {
      gsize length;
      const char *frame = g_bytes_get_data (g_ptr_array_index (frames, i - 1), &length);
      const char *data = g_strstr_len (frame, length, "\ndata: ");
      g_autoptr(JsonNode) root = NULL;
      JsonNode *response;
      g_autoptr(GString) body = NULL;

      if (data == NULL)
        continue;
      data += strlen ("\ndata: ");
      root = symfonic_json_parse (data, frame + length - data, SYMFONIC_JSON_MAX_DEPTH, NULL);
      response = root != NULL && JSON_NODE_HOLDS_OBJECT (root) ? json_object_get_member (json_node_get_object (root),
                                                                                          "response") : NULL;
      if (response == NULL || !JSON_NODE_HOLDS_OBJECT (response))
        continue;
      body = g_string_new (NULL);
      symfonic_json_append_node (body, response);
      answer_json (self, body->str);
      g_ptr_array_unref (frames);
      return;
    }
  g_ptr_array_unref (frames);

  /* nothing yet: it waits for its source */
  {
    g_autoptr(GString) body = g_string_new ("{\"id\":");
    g_autofree char *id = symfonic_responses_id_for_run (run_id);

    symfonic_json_append_string (body, id, -1);
    g_string_append (body, ",\"object\":\"response\",\"status\":\"queued\",\"background\":true,\"output\":[]}");
    answer_json (self, body->str);
  }
}

static void
counted (gint64        input_tokens,
         const GError *error,
         gpointer      data)
{
  Exchange *self = data;
  g_autofree char *body = NULL;

  self->count = NULL;
  if (error != NULL)
    {
      refuse (self, error, TRUE);
      return;
    }
  soup_message_headers_replace (soup_server_message_get_response_headers (self->message), "X-Symfonic-Token-Count",
                                "provider");
  body = g_strdup_printf ("{\"input_tokens\":%" G_GINT64_FORMAT "}", input_tokens);
  answer_json (self, body);
}

/* `POST {root}/messages/count_tokens`: a messages request without its
 * token limit, counted by an Anthropic source's provider; behind any
 * other source the count is an estimate, one token per 4 bytes of the
 * request's messages, system prompt and tools, and the answer says so. */
static void
count_tokens (Exchange *self,
              GBytes   *bytes)
{
  SymfonicInvocation *invocation = symfonic_stream_get_invocation (self->stream);
  SymfonicSource *source = symfonic_route_get_source (self->route);
  g_autoptr(JsonNode) body = NULL;
  g_autoptr(GError) error = NULL;
  SymfonicEncoderFlags flags;
  SymfonicProviderTarget target;
  JsonObject *object;
  gsize length;
  const char *data = g_bytes_get_data (bytes, &length);
  guint64 estimate = 0;
  g_autofree char *answer = NULL;

  if (!content_type_is_json (self->message))
    error = g_error_new_literal (SYMFONIC_ERROR, SYMFONIC_ERROR_UNSUPPORTED_MEDIA_TYPE,
                                 "The request body must be application/json");
  else if ((body = symfonic_json_parse (data, length, SYMFONIC_JSON_MAX_DEPTH, NULL)) == NULL ||
           !JSON_NODE_HOLDS_OBJECT (body))
    error = g_error_new (SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST,
                         "The request body must be one strict JSON document (RFC 8259) nested at most %d levels deep",
                         SYMFONIC_JSON_MAX_DEPTH);
  if (error != NULL)
    {
      refuse (self, error, TRUE);
      return;
    }

  /* checked as a messages request, which has a token limit */
  object = json_node_get_object (body);
  if (!json_object_has_member (object, "max_tokens"))
    json_object_set_int_member (object, "max_tokens", 1);
  symfonic_provider_source_describe (source, &target);
  if (target.api != SYMFONIC_PROVIDER_API_ANTHROPIC)
    target.api = SYMFONIC_PROVIDER_API_NONE;
  target.max_tokens = 0;
  if (!symfonic_anthropic_request_decode (body, &target, invocation, &flags, &error))
    {
      refuse (self, error, TRUE);
      return;
    }

  if (target.api == SYMFONIC_PROVIDER_API_ANTHROPIC)
    {
      self->count = symfonic_provider_source_count_tokens (source, invocation, counted, self);
      return;
    }

  for (const char * const *member = (const char * const[]) { "messages", "system", "tools", NULL }; *member != NULL; member++)
    {
      g_autoptr(GString) text = g_string_new (NULL);

      if (json_object_has_member (object, *member))
        symfonic_json_append_node (text, json_object_get_member (object, *member));
      estimate += (text->len + 3) / 4;
    }
  soup_message_headers_replace (soup_server_message_get_response_headers (self->message), "X-Symfonic-Token-Count",
                                "estimate");
  answer = g_strdup_printf ("{\"input_tokens\":%" G_GUINT64_FORMAT "}", estimate);
  answer_json (self, answer);
}

static void
copy_header (const char *name,
             const char *value,
             gpointer    user_data)
{
  symfonic_invocation_set_header (user_data, name, value);
}

/* An invocation that knows the request's headers and nothing else yet:
 * what the head-phase stages decide on. */
SymfonicInvocation *
symfonic_exchange_new_invocation (SoupServerMessage *message)
{
  SymfonicInvocation *invocation = g_object_new (SYMFONIC_TYPE_INVOCATION, NULL);

  soup_message_headers_foreach (soup_server_message_get_request_headers (message), copy_header, invocation);
  return invocation;
}

/* The resume token a request to a runs route carries in its query
 * (`?token=`), if the route checks tokens at all (its pipeline has a
 * secret). */
static char *
dup_resume_token (Exchange *self)
{
  GUri *uri = soup_server_message_get_uri (self->message);
  g_autoptr(GHashTable) params = NULL;

  if (symfonic_route_get_resume_secret (self->route) == NULL ||
      symfonic_route_get_kind (self->route) != SYMFONIC_ROUTE_KIND_RUNS ||
      self->endpoint != SYMFONIC_ENDPOINT_INVOKE || g_uri_get_query (uri) == NULL)
    return NULL;
  params = g_uri_parse_params (g_uri_get_query (uri), -1, "&", G_URI_PARAMS_NONE, NULL);

  return params != NULL ? g_strdup (g_hash_table_lookup (params, "token")) : NULL;
}

/* A browser's EventSource, which cannot send headers, reads a run with
 * the resume token the run's start gave, in place of the route's
 * authentication, whose stages then do not run. Whatever is wrong with
 * the token is answered as a run that is not the asker's, so that a
 * token tells nothing a guess would not. */
static gboolean
admit_resume_token (Exchange    *self,
                    const char  *token,
                    GError     **error)
{
  GUri *uri = soup_server_message_get_uri (self->message);
  g_autofree char *run_id = NULL;
  g_autofree char *tenant = NULL;
  g_autofree char *principal = NULL;

  run_id = symfonic_run_reader_parse_run_id (g_uri_get_path (uri), symfonic_route_get_path (self->route), NULL);
  if (run_id == NULL ||
      !symfonic_resume_token_check (symfonic_route_get_resume_secret (self->route), token, run_id,
                                    g_get_real_time () / G_USEC_PER_SEC, &tenant, &principal))
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_NOT_FOUND, "No such run");
      return FALSE;
    }
  symfonic_invocation_set_scope (symfonic_stream_get_invocation (self->stream), tenant, principal, FALSE);

  return TRUE;
}

/* A request head for an invocation route is in, and nothing of its body
 * was read: the head-phase stages (authentication) decide before libsoup
 * reads any of it. Refusals are JSON and happen before any byte of the
 * event stream. */
void
symfonic_exchange_open (SoupServerMessage *message,
                        SymfonicRoute     *route,
                        SymfonicEndpoint   endpoint,
                        guint64            max_body_bytes,
                        SymfonicMetrics   *metrics,
                        SymfonicRunStore  *run_store,
                        GHashTable        *live)
{
  g_autoptr(SymfonicInvocation) invocation = symfonic_exchange_new_invocation (message);
  g_autoptr(GError) error = NULL;
  g_autofree char *token = NULL;
  Exchange *self;

  self = g_new0 (Exchange, 1);
  self->message = g_object_ref (message);
  self->route = g_object_ref (route);
  self->endpoint = endpoint;
  self->metrics = metrics;
  self->run_store = g_object_ref (run_store);
  self->release.func = release_detached;
  self->release.data = self;
  self->let_go.func = let_go_of_message;
  self->let_go.data = self;
  self->live = live;
  g_hash_table_add (live, self);
  self->stream = symfonic_stream_new (route, invocation);
  self->body = g_byte_array_new ();
  {
    char forward[SYMFONIC_TRACEPARENT_SIZE];

    /* decided once, here; a request not traced allocates nothing for it */
    self->trace = symfonic_tracer_start (symfonic_metrics_get_tracer (metrics),
                                         symfonic_invocation_get_header (invocation, "traceparent"), forward);
    if (forward[0] != '\0')
      symfonic_stream_set_traceparent (self->stream, forward);
  }
  self->max_body_bytes = max_body_bytes;
  g_object_set_data (G_OBJECT (message), EXCHANGE_KEY, self);
  self->finished_id = g_signal_connect (message, "finished", G_CALLBACK (on_finished), self);
  self->got_chunk_id = g_signal_connect (message, "got-chunk", G_CALLBACK (on_got_chunk), self);
  symfonic_exchange_set_request_id (message, route, symfonic_invocation_get_run_id (invocation));

  token = dup_resume_token (self);
  if (token != NULL)
    {
      if (admit_resume_token (self, token, &error))
        head_admitted (self, FALSE);
      else
        refuse (self, error, FALSE);
      return;
    }

  /* libsoup reads on once this handler returns: stages that decide at
   * once do so here, and a stage that answers later has it wait */
  switch (symfonic_stream_admit (self->stream, SYMFONIC_ADMISSION_PHASE_HEAD, head_decided, self, &error))
    {
    case SYMFONIC_ADMIT_PASSED:
      head_admitted (self, FALSE);
      break;
    case SYMFONIC_ADMIT_REFUSED:
      refuse (self, error, FALSE);
      break;
    case SYMFONIC_ADMIT_PENDING:
      soup_server_message_pause (message);
      break;
    }
}

/* Whether symfonic_exchange_open() started an exchange for @message. */
gboolean
symfonic_exchange_is_open (SoupServerMessage *message)
{
  return g_object_get_data (G_OBJECT (message), EXCHANGE_KEY) != NULL;
}

/* The body of a request that symfonic_exchange_open() admitted is in:
 * decode it, then run the body-phase stages (metering) and the stream. */
void
symfonic_exchange_run (SoupServerMessage *message)
{
  Exchange *self = g_object_get_data (G_OBJECT (message), EXCHANGE_KEY);
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GError) error = NULL;

  g_return_if_fail (self != NULL);

  if (!advance (self, EXCHANGE_GOT_BODY))
    return;
  g_clear_signal_handler (&self->got_chunk_id, self->message);
  soup_server_message_pause (message);

  if (self->body_too_large)
    {
      /* the client may still be sending: do not keep the connection */
      soup_message_headers_replace (soup_server_message_get_response_headers (message), "Connection", "close");
      error = payload_too_large (self);
      refuse (self, error, TRUE);
      return;
    }

  if (symfonic_route_get_kind (self->route) == SYMFONIC_ROUTE_KIND_RUNS)
    {
      start_reading (self);
      return;
    }
  if (self->endpoint == SYMFONIC_ENDPOINT_RESPONSE)
    {
      read_response (self);
      return;
    }

  bytes = g_byte_array_free_to_bytes (g_steal_pointer (&self->body));
  if (self->endpoint == SYMFONIC_ENDPOINT_COUNT_TOKENS)
    {
      count_tokens (self, bytes);
      return;
    }
  if (!decode (self, bytes, &error))
    {
      refuse (self, error, TRUE);
      return;
    }
  if (self->encoder_flags & SYMFONIC_ENCODER_BACKGROUND)
    {
      /* its client is answered at once; the run streams for the store */
      self->background = TRUE;
      self->background_answer = (self->encoder_flags & SYMFONIC_ENCODER_ANSWER) != 0;
      self->encoder_flags &= ~SYMFONIC_ENCODER_ANSWER;
    }

  /* metering on a store in the process decides at once: deferring that to
   * a later main-loop turn would delay the first delta of every stream */
  switch (symfonic_stream_admit (self->stream, SYMFONIC_ADMISSION_PHASE_BODY, body_decided, self, &error))
    {
    case SYMFONIC_ADMIT_PASSED:
      body_admitted (self);
      break;
    case SYMFONIC_ADMIT_REFUSED:
      refuse (self, error, TRUE);
      break;
    case SYMFONIC_ADMIT_PENDING:
      break;
    }
}

/* The worker is stopping: every running stream ends with its one error
 * frame, which the worker then gives a moment to reach the client. */
void
symfonic_exchange_end_all (GHashTable *live)
{
  g_autoptr(GError) error = g_error_new_literal (SYMFONIC_ERROR, SYMFONIC_ERROR_SHUTTING_DOWN,
                                                 "The gateway is shutting down");
  g_autoptr(GList) exchanges = g_hash_table_get_keys (live);

  for (GList *l = exchanges; l != NULL; l = l->next)
    {
      Exchange *self = l->data;

      if (self->state == EXCHANGE_STREAMING || self->state == EXCHANGE_DETACHED)
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

      if (has_stream (self))
        {
          client_gone (self);
          symfonic_metrics_stream_closed (self->metrics);
          record_stream (self);
        }
      /* a stream that waits for an admission stage drops its answer */
      if (advance (self, EXCHANGE_RELEASED))
        exchange_free (self);
    }
}

/* --- a traced request's spans ---------------------------------------------- */

static const char * const phase_span_names[] = { "head", "body", "events", "finish" };

static void
stage_span (SymfonicTraceRecord        *record,
            const SymfonicTraceContext *context,
            const char                 *stage,
            guint                       phase,
            guint64                     start,
            guint64                     end,
            const SymfonicStageTiming  *timing)
{
  g_autofree char *name = g_strdup_printf ("stage %s %s", stage, phase_span_names[phase]);
  guint8 id[8];

  if (start == 0 || end < start)
    return;
  symfonic_trace_new_span_id (id);
  symfonic_trace_span_begin (record, context, id, context->span_id, name, SYMFONIC_SPAN_INTERNAL,
                             symfonic_telemetry_ticks_to_monotonic_us (start),
                             symfonic_telemetry_ticks_to_monotonic_us (end));
  symfonic_trace_attr_string (record, "symfonic.stage", stage);
  symfonic_trace_attr_string (record, "symfonic.stage.phase", phase_span_names[phase]);
  if (phase == SYMFONIC_STAGE_PHASE_EVENT)
    {
      symfonic_trace_attr_int (record, "symfonic.stage.events", timing->events);
      symfonic_trace_attr_double (record, "symfonic.stage.busy_seconds",
                                  symfonic_telemetry_ticks_to_ns (timing->events_busy) / 1e9);
    }
  symfonic_trace_span_end (record, NULL);
}

/* The request is over: its span (`chat {model}`, as the GenAI
 * conventions name a chat), a span for each phase a stage ran, and one
 * for the upstream call, which the upstream's traceparent names. */
static void
trace_finish (Exchange *self)
{
  SymfonicTraceContext *context = self->trace;
  SymfonicTraceRecord *record = g_new0 (SymfonicTraceRecord, 1);
  SymfonicRoute *route = self->route;
  SymfonicInvocation *invocation = symfonic_stream_get_invocation (self->stream);
  SymfonicUpstreamFacts *facts = symfonic_upstream_facts_peek (self->stream);
  const char *model = symfonic_route_get_model (route);
  g_autofree char *name = model != NULL ? g_strconcat ("chat ", model, NULL) : g_strdup ("chat");
  gint64 end_us = self->ended_us != 0 ? self->ended_us : g_get_monotonic_time ();
  gint64 source_start_us, upstream_end_us, first_token_us;
  guint64 input, output, n_deltas;
  gboolean reported;
  const char *outcome;
  const char *failure = NULL;

  self->trace = NULL;
  record->json = g_string_sized_new (4096);
  symfonic_stream_get_times (self->stream, &source_start_us, &upstream_end_us, &first_token_us, &n_deltas);
  symfonic_stream_get_usage (self->stream, &input, &output, &reported);

  if (self->refused)
    outcome = "refused";
  else if (source_start_us == 0 && self->outcome == SYMFONIC_STREAM_OUTCOME_COMPLETED)
    outcome = "answered";
  else
    outcome = self->outcome == SYMFONIC_STREAM_OUTCOME_FAILED ? "failed"
              : self->outcome == SYMFONIC_STREAM_OUTCOME_CANCELLED ? "cancelled" : "completed";
  /* a refusal is the client's error, not the server's (4xx) */
  if (self->error_code != NULL && (!self->refused || self->status >= 500))
    failure = self->error_detail != NULL ? self->error_detail : self->error_code;

  symfonic_trace_span_begin (record, context, context->span_id, context->has_parent ? context->parent_id : NULL,
                             name, SYMFONIC_SPAN_SERVER, context->start_us, end_us);
  symfonic_trace_attr_string (record, "gen_ai.operation.name", "chat");
  symfonic_trace_attr_string (record, "gen_ai.provider.name", symfonic_route_get_provider_name (route));
  symfonic_trace_attr_string (record, "gen_ai.request.model", model);
  if (facts != NULL)
    symfonic_trace_attr_string (record, "gen_ai.response.model", facts->model);
  if (reported)
    {
      symfonic_trace_attr_int (record, "gen_ai.usage.input_tokens", input);
      symfonic_trace_attr_int (record, "gen_ai.usage.output_tokens", output);
    }
  if (self->finish_reason != NULL)
    symfonic_trace_attr_strings (record, "gen_ai.response.finish_reasons",
                                 (const char * const[]) { self->finish_reason, NULL });
  if (self->encoder != NULL)
    symfonic_trace_attr_bool (record, "gen_ai.request.stream", symfonic_encoder_is_streaming (self->encoder));
  if (first_token_us != 0)
    symfonic_trace_attr_double (record, "gen_ai.response.time_to_first_chunk",
                                (first_token_us - symfonic_stream_get_start_time (self->stream)) / 1e6);
  symfonic_trace_attr_string (record, "symfonic.tenant.id", symfonic_invocation_get_tenant_id (invocation));
  symfonic_trace_attr_string (record, "symfonic.route", symfonic_route_get_name (route));
  symfonic_trace_attr_string (record, "http.route", symfonic_route_get_path (route));
  symfonic_trace_attr_string (record, "symfonic.run.id", symfonic_invocation_get_run_id (invocation));
  symfonic_trace_attr_string (record, "symfonic.outcome", outcome);
  if (self->status != 0)
    symfonic_trace_attr_int (record, "http.response.status_code", self->status);
  symfonic_trace_attr_string (record, "error.type", self->error_code);
  symfonic_trace_span_end (record, failure);

  for (guint i = 0; i < symfonic_stream_get_n_stages (self->stream); i++)
    {
      const char *stage = symfonic_route_get_stage_name (route, i);
      SymfonicStageTiming timing;

      symfonic_stream_get_stage_timing (self->stream, i, &timing);
      if (timing.admits)
        stage_span (record, context, stage,
                    timing.phase == SYMFONIC_ADMISSION_PHASE_HEAD ? SYMFONIC_STAGE_PHASE_HEAD : SYMFONIC_STAGE_PHASE_BODY,
                    timing.admit_start, timing.admit_end, &timing);
      if (timing.processes)
        stage_span (record, context, stage, SYMFONIC_STAGE_PHASE_EVENT, timing.events_first, timing.events_last,
                    &timing);
      if (timing.finishes)
        stage_span (record, context, stage, SYMFONIC_STAGE_PHASE_FINISH, timing.finish_start, timing.finish_end,
                    &timing);
    }

  if (source_start_us != 0)
    {
      g_autofree char *upstream = g_strconcat ("upstream ", symfonic_route_get_source_name (route), NULL);

      symfonic_trace_span_begin (record, context, context->upstream_id, context->span_id, upstream,
                                 SYMFONIC_SPAN_CLIENT, source_start_us, upstream_end_us != 0 ? upstream_end_us : end_us);
      symfonic_trace_attr_string (record, "gen_ai.operation.name", "chat");
      symfonic_trace_attr_string (record, "gen_ai.provider.name", symfonic_route_get_provider_name (route));
      symfonic_trace_attr_string (record, "gen_ai.request.model", model);
      symfonic_trace_attr_string (record, "symfonic.source", symfonic_route_get_source_name (route));
      if (first_token_us != 0)
        symfonic_trace_attr_double (record, "gen_ai.response.time_to_first_chunk",
                                    (first_token_us - source_start_us) / 1e6);
      symfonic_trace_span_end (record, self->outcome == SYMFONIC_STREAM_OUTCOME_FAILED ? failure : NULL);
    }

  if (symfonic_metrics_get_tracer (self->metrics) != NULL)
    symfonic_tracer_submit (symfonic_metrics_get_tracer (self->metrics), record);
  else
    symfonic_trace_record_free (record);
  g_free (context);
}
