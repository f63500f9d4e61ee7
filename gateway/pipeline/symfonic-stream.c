/* symfonic-stream.c: the per-request executor
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-error.h"
#include "symfonic-header-list-private.h"
#include "symfonic-poller-private.h"
#include "symfonic-route-private.h"
#include "symfonic-stage-private.h"
#include "symfonic-stream-private.h"
#include "symfonic-event-private.h"

/**
 * SymfonicStream:
 *
 * One request's journey through a route: its invocation, the state every
 * stage keeps for it, and the executor that carries each upstream event
 * through the stages in order.
 *
 * A stream is driven from one thread at a time. Stages run breadth-first
 * over small reusable batches: everything one stage emitted for an event is
 * handed to the next stage before the next upstream event is looked at, so
 * order is kept without a per-event allocation beyond the events
 * themselves.
 *
 * A stage whose type has a main context of its own
 * (symfonic_stage_type_set_main_context()) gets its batch there: the
 * stream is "out" until the answer comes back to the stream's thread, and
 * meanwhile its source fills the next batch, up to a bound, then is told
 * to wait, and its other hooks queue up. The stage's thread borrows the
 * batch arrays, which the stream leaves alone while it is out, and a hop
 * holds a reference on the stream.
 */

/* A stream's life is one state machine; every change of state goes
 * through advance(), which refuses a move the table does not list:
 *
 *   state \ event WAIT          PASS           REFUSE   START     OPEN     UPSTREAM_END  DRAINED    END   CANCEL
 *   NEW           HEAD_WAITING  HEAD_ADMITTED  REFUSED  -         -        -             -          -     OVER
 *   HEAD_WAITING  HEAD_WAITING  HEAD_ADMITTED  REFUSED  -         -        -             -          -     OVER
 *   HEAD_ADMITTED BODY_WAITING  ADMITTED       REFUSED  -         -        -             -          -     OVER
 *   BODY_WAITING  BODY_WAITING  ADMITTED       REFUSED  -         -        -             -          -     OVER
 *   ADMITTED      -             -              -        STARTING  -        -             -          -     OVER
 *   STARTING      -             -              -        -         RUNNING  -             -          OVER  OVER
 *   RUNNING       -             -              -        -         -        ENDING        -          OVER  OVER
 *   ENDING        -             -              -        -         -        -             FINISHING  OVER  OVER
 *   FINISHING     -             -              -        -         -        -             -          OVER  OVER
 *   REFUSED       -             -              -        -         -        -             -          -     -
 *   OVER          -             -              -        -         -        -             -          -     -
 *
 * Admission is tracked here and nowhere else: the server asks for a phase
 * (symfonic_stream_admit()) and hears the outcome.
 * NEW: the stream has its request head; the head phase is next.
 * WAIT: a stage of the phase answers later (its admit_async, or a hop to
 *   its own context); the stages after it wait for that answer
 *   (HEAD_WAITING, BODY_WAITING).
 * PASS: every stage of the phase admitted the stream (and, in the body
 *   phase, the route's caps and the source): the body phase is next
 *   (HEAD_ADMITTED), or the stream may start (ADMITTED).
 * REFUSE: a stage, the route's caps or the source refused: the stages
 *   that had admitted it are closed (REFUSED).
 * START: the begin hooks run, in order (STARTING); OPEN: they all did, and
 *   the source starts (RUNNING).
 * UPSTREAM_END: the source ended its upstream successfully; the events
 *   queued behind a batch that is on a stage's thread go first (ENDING).
 *   DRAINED: none is left, and the finish hooks run (FINISHING).
 * END: the stream ends with its outcome, which the sink hears (OVER): the
 *   finish hooks all ran, or something failed (a hook, the upstream, the
 *   stream's deadline, the gateway aborting it).
 * CANCEL: the client went away, or the server let go of the stream before
 *   it started: no outcome is told, and an answer a stage still owes is
 *   dropped when it comes (the stage is closed if it admitted). */
typedef enum {
  STREAM_NEW,
  STREAM_HEAD_WAITING,
  STREAM_HEAD_ADMITTED,
  STREAM_BODY_WAITING,
  STREAM_ADMITTED,
  STREAM_STARTING,
  STREAM_RUNNING,
  STREAM_ENDING,
  STREAM_FINISHING,
  /* the two states a stream is over in; last, so that a comparison tells */
  STREAM_REFUSED,
  STREAM_OVER,
  N_STREAM_STATES
} StreamState;

typedef enum {
  STREAM_WAIT,
  STREAM_PASS,
  STREAM_REFUSE,
  STREAM_START,
  STREAM_OPEN,
  STREAM_UPSTREAM_END,
  STREAM_DRAINED,
  STREAM_END,
  STREAM_CANCEL,
  N_STREAM_EVENTS
} StreamEvent;

/* NEW is where every stream starts and never a next state: here it marks a
 * move that is not allowed. */
#define ILLEGAL STREAM_NEW

/* Both phases of admission, the head's and the body's, move alike: from
 * the phase's start or while waiting in it, a stage that waits keeps it
 * @waiting, and the phase passes on to @passed. */
#define ADMISSION(waiting, passed) { \
    [STREAM_WAIT] = (waiting), \
    [STREAM_PASS] = (passed), \
    [STREAM_REFUSE] = STREAM_REFUSED, \
    [STREAM_CANCEL] = STREAM_OVER, \
  }

static const StreamState transitions[N_STREAM_STATES][N_STREAM_EVENTS] = {
  [STREAM_NEW] = ADMISSION (STREAM_HEAD_WAITING, STREAM_HEAD_ADMITTED),
  [STREAM_HEAD_WAITING] = ADMISSION (STREAM_HEAD_WAITING, STREAM_HEAD_ADMITTED),
  [STREAM_HEAD_ADMITTED] = ADMISSION (STREAM_BODY_WAITING, STREAM_ADMITTED),
  [STREAM_BODY_WAITING] = ADMISSION (STREAM_BODY_WAITING, STREAM_ADMITTED),
  [STREAM_ADMITTED] = {
    [STREAM_START] = STREAM_STARTING,
    [STREAM_CANCEL] = STREAM_OVER,
  },
  [STREAM_STARTING] = {
    [STREAM_OPEN] = STREAM_RUNNING,
    [STREAM_END] = STREAM_OVER,
    [STREAM_CANCEL] = STREAM_OVER,
  },
  [STREAM_RUNNING] = {
    [STREAM_UPSTREAM_END] = STREAM_ENDING,
    [STREAM_END] = STREAM_OVER,
    [STREAM_CANCEL] = STREAM_OVER,
  },
  [STREAM_ENDING] = {
    [STREAM_DRAINED] = STREAM_FINISHING,
    [STREAM_END] = STREAM_OVER,
    [STREAM_CANCEL] = STREAM_OVER,
  },
  [STREAM_FINISHING] = {
    [STREAM_END] = STREAM_OVER,
    [STREAM_CANCEL] = STREAM_OVER,
  },
};

static const char * const state_names[] = {
  "new", "head-waiting", "head-admitted", "body-waiting", "admitted", "starting", "running", "ending",
  "finishing", "refused", "over",
};

static const char * const event_names[] = {
  "wait", "pass", "refuse", "start", "open", "upstream-end", "drained", "end", "cancel",
};

G_STATIC_ASSERT (G_N_ELEMENTS (state_names) == N_STREAM_STATES);
G_STATIC_ASSERT (G_N_ELEMENTS (event_names) == N_STREAM_EVENTS);

/* A stage's alarm on the stream: one worker timer, made when first set
 * and moved afterwards, so that arming it again allocates nothing. */
typedef struct
{
  SymfonicStream *stream;
  guint           index;
  SymfonicTimer  *timer;
} Alarm;

typedef struct
{
  SymfonicStage            *stage;
  gpointer                  data;
  GDestroyNotify            destroy;
  /* as the route read it (the route keeps its context); events go past a
   * stage without a process hook untouched */
  SymfonicRouteStage        info;
  /* its admission succeeded: it is closed once at the end */
  gboolean                  admitted;
  /* the next slot that has a process hook, or n_stages: events skip the
   * ones between */
  guint                     next_process;
  /* When each of its phases ran, in telemetry ticks (0: it did not), for
   * the metrics and the trace: one clock read at each boundary. Its
   * events are summed: from the start of the first to the end of the
   * last, and how long the hook itself took over all of them. */
  guint64                   admit_start;
  guint64                   admit_end;
  guint64                   events_first;
  guint64                   events_last;
  guint64                   events_busy;
  guint64                   events;
  guint64                   finish_start;
  guint64                   finish_end;
} StageSlot;

/* The events a source may push while a batch is out: they make the next
 * batch. Bounds what a stream holds for a stage on another thread. */
#define PENDING_MAX 64

typedef enum {
  HOP_ADMIT,
  HOP_BEGIN,
  HOP_PROCESS,
  HOP_FINISH,
  HOP_CLOSE,
} HopKind;

/* One call of a stage's hooks on its own context. */
typedef struct
{
  SymfonicStream *stream;
  HopKind         kind;
  guint           index;
  GError         *error;
  /* its number on the stage's lane once it runs there, 0 before (set on
   * the stage's thread, read on the stream's) */
  guint           serial;
} Hop;

/* The events of one batch. The executor empties a batch once per stage
 * and event, so this is a bare vector rather than a GPtrArray, whose
 * generic removal costs more than the stage that ran. A slot is NULL once
 * its event was handed on. */
typedef struct
{
  SymfonicEvent **events;
  guint           len;
  guint           size;
} EventList;

/* Takes @event's reference. */
static inline void
event_list_add (EventList     *list,
                SymfonicEvent *event)
{
  if (G_UNLIKELY (list->len == list->size))
    {
      list->size = MAX (8, list->size * 2);
      list->events = g_renew (SymfonicEvent *, list->events, list->size);
    }
  list->events[list->len++] = event;
}

static inline void
event_list_clear (EventList *list)
{
  for (guint i = 0; i < list->len; i++)
    {
      if (list->events[i] != NULL)
        symfonic_event_unref (list->events[i]);
    }
  list->len = 0;
}

static void
event_list_free (EventList *list)
{
  event_list_clear (list);
  g_free (list->events);
  g_free (list);
}

struct _SymfonicStream
{
  GObject                   parent_instance;

  SymfonicRoute            *route;
  SymfonicInvocation       *invocation;
  GCancellable             *cancellable;
  gint64                    start_time;
  /* see the transition table: changed by advance() only */
  StreamState               state;
  char                     *release_line;
  GPtrArray                *response_headers;
  guint64                   input_tokens;
  guint64                   output_tokens;
  /* the most output tokens the source asked its upstream for */
  guint64                   max_output_tokens;
  /* what the upstream reported, whatever the state the report came in */
  gboolean                  usage_reported;
  /* a report was past the bounds: no later one is believed */
  gboolean                  usage_lied;
  /* a setting the source makes while admitting, which the server reads
   * once the stream starts */
  gboolean                  holds_head;

  /* what the metrics count for the route, and what the stream tells them
   * and its trace: when the source started and its upstream ended, when
   * the first token came (g_get_monotonic_time(), 0 until then), how many
   * deltas did; and the trace context sent upstream */
  SymfonicRouteStats       *stats;
  /* the stats' shard of the thread that runs the stream, found once */
  SymfonicRouteShard       *shard;
  guint                     shard_index;
  gint64                    source_start_us;
  gint64                    upstream_end_us;
  gint64                    first_token_us;
  guint64                   n_deltas;
  /* the admission stage that runs said it admitted with little room */
  gboolean                  near_limit;
  char                      traceparent[SYMFONIC_TRACEPARENT_SIZE];

  StageSlot                *slots;
  guint                     n_stages;
  /* the admission in progress: the next slot to look at, and who hears
   * the outcome of a phase that waited for a stage */
  guint                     admit_next;
  SymfonicStreamAdmitFunc   admit_func;
  gpointer                  admit_data;
  /* ends a stream that runs longer than its route's max-duration */
  SymfonicTimer            *deadline;
  /* the stages' alarms (symfonic_stream_set_alarm()), one per slot, made
   * when the first is set: apart from the slots, which the executor walks
   * for every event */
  Alarm                    *alarms;

  /* the executor's two reusable batches, and where symfonic_stream_emit()
   * appends while a hook runs */
  EventList                *batch;
  EventList                *spare;
  EventList                *emit_target;
  /* the batch's slot of the event the running process hook was given:
   * emitting that event hands the batch's reference on */
  SymfonicEvent           **handed;
  /* the slot whose process hook runs: the stage's own data is looked up
   * once per event, and found here without a search */
  StageSlot                *running;
  /* the next begin hook to run while STARTING, or finish hook while
   * FINISHING */
  guint                     hook_next;

  /* The flags below are facts beside the state, not states: each holds
   * across several states, and changes without the stream's life moving.
   *
   * A stage's thread has the batch arrays: in any state from STARTING on,
   * and still after the stream ended, until that stage answers. What is
   * pushed meanwhile waits in @pending. */
  gboolean                  out;
  /* the hop that has them, and the route's hook-timeout on its answer */
  Hop                      *out_hop;
  SymfonicTimer            *hook_deadline;
  EventList                *pending;
  /* where the answers of a stage's thread come back to */
  GMainContext             *home;

  const SymfonicStreamSink *sink;
  gpointer                  sink_data;
  /* Flow control, between the sink and the source, event by event. The
   * sink was over its bound when an event was pushed */
  gboolean                  sink_busy;
  /* the sink sent the first delta: the source reads on after the poll */
  gboolean                  sink_yields;
  /* the source was told to wait for the ready function */
  gboolean                  source_waits;
  SymfonicStreamReadyFunc   ready_func;
  gpointer                  ready_data;
  GDestroyNotify            ready_destroy;
  /* counts symfonic_stream_set_ready_func() calls */
  guint                     ready_generation;
  /* the ready function runs from here, outside the writer's own I/O, and
   * the deadline fires from here */
  SymfonicPoller           *poller;
  SymfonicDeferred          ready;
};

/**
 * SymfonicStreamClass:
 * @parent_class: the parent class
 *
 * The class of #SymfonicStream, a final type: there is nothing to override.
 */
G_DEFINE_FINAL_TYPE (SymfonicStream, symfonic_stream, G_TYPE_OBJECT)

/* Moves the stream on @event. A move the table does not list is a bug:
 * it is reported and ignored, and the caller does nothing more for it. */
static gboolean
advance (SymfonicStream *self,
         StreamEvent     event)
{
  StreamState next = transitions[self->state][event];

  if (G_UNLIKELY (next == ILLEGAL))
    {
      g_critical ("A stream in state %s got the event %s, which is not allowed there",
                  state_names[self->state], event_names[event]);
      return FALSE;
    }

  self->state = next;
  return TRUE;
}

static inline gboolean
is_over (SymfonicStream *self)
{
  return self->state >= STREAM_REFUSED;
}

/* The source ended its upstream, and what it sent is still worked
 * through. */
static inline gboolean
upstream_ended (SymfonicStream *self)
{
  return self->state == STREAM_ENDING || self->state == STREAM_FINISHING;
}

/* Events go from the source through the stages to the sink: the source
 * runs, or what it sent before its end is still worked through. */
static inline gboolean
flows (SymfonicStream *self)
{
  return self->state >= STREAM_RUNNING && self->state <= STREAM_FINISHING;
}

static void
run_ready_func (gpointer data)
{
  SymfonicStream *self = data;
  g_autoptr(SymfonicStream) alive = NULL;
  gpointer user_data = self->ready_data;
  GDestroyNotify destroy = self->ready_destroy;
  guint generation = self->ready_generation;

  if (self->ready_func == NULL)
    return;

  /* the function may drop or replace itself, as a source written in
   * Python does once it ended the stream: its data, a binding's closure,
   * is freed once it returned, not while it runs; and ending the stream
   * may let go of the stream's last other reference */
  alive = g_object_ref (self);
  self->ready_destroy = NULL;
  self->ready_func (self, user_data);
  if (self->ready_generation == generation)
    self->ready_destroy = destroy;
  else if (destroy != NULL)
    destroy (user_data);
}

/* Whether the hooks of slot @i must hop to a context another thread
 * owns. One pointer test for the stages that run inline. */
static inline gboolean
runs_elsewhere (SymfonicStream *self,
                guint           i)
{
  GMainContext *context = self->slots[i].info.context;

  return G_UNLIKELY (context != NULL) && !g_main_context_is_owner (context);
}

static void hop_send (SymfonicStream *self,
                      HopKind         kind,
                      guint           index);

static void
close_stage (SymfonicStream *self,
             guint           i)
{
  if (runs_elsewhere (self, i))
    hop_send (self, HOP_CLOSE, i);
  else
    symfonic_stage_close (self->slots[i].stage, self);
}

static void
close_admitted_stages (SymfonicStream *self)
{
  for (guint i = 0; i < self->n_stages; i++)
    {
      if (!self->slots[i].admitted)
        continue;
      self->slots[i].admitted = FALSE;
      close_stage (self, i);
    }
  symfonic_route_release_stream (self->route, self);
}

static void
clear_deadline (SymfonicStream *self)
{
  g_clear_pointer (&self->deadline, symfonic_timer_remove);
  g_clear_pointer (&self->hook_deadline, symfonic_timer_remove);
  for (guint i = 0; self->alarms != NULL && i < self->n_stages; i++)
    g_clear_pointer (&self->alarms[i].timer, symfonic_timer_remove);
}

/* The worker's poller, taken on first use by the thread that runs the
 * stream. */
static SymfonicPoller *
get_poller (SymfonicStream *self)
{
  if (self->poller == NULL)
    {
      self->poller = symfonic_poller_ref (symfonic_poller_get_thread_default ());
      self->ready.func = run_ready_func;
      self->ready.data = self;
    }

  return self->poller;
}

static void
symfonic_stream_dispose (GObject *object)
{
  SymfonicStream *self = (SymfonicStream *) object;

  clear_deadline (self);
  close_admitted_stages (self);

  G_OBJECT_CLASS (symfonic_stream_parent_class)->dispose (object);
}

static void
symfonic_stream_finalize (GObject *object)
{
  SymfonicStream *self = (SymfonicStream *) object;

  for (guint i = 0; i < self->n_stages; i++)
    {
      if (self->slots[i].destroy != NULL && self->slots[i].data != NULL)
        self->slots[i].destroy (self->slots[i].data);
    }
  g_free (self->slots);
  g_free (self->alarms);
  if (self->poller != NULL)
    {
      symfonic_poller_cancel_deferred (self->poller, &self->ready);
      symfonic_poller_unref (self->poller);
    }
  if (self->ready_destroy != NULL)
    self->ready_destroy (self->ready_data);
  g_free (self->release_line);
  g_ptr_array_unref (self->response_headers);
  event_list_free (self->batch);
  event_list_free (self->spare);
  g_clear_pointer (&self->pending, event_list_free);
  g_clear_pointer (&self->home, g_main_context_unref);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->invocation);
  g_clear_object (&self->route);
  /* a stage that owes an answer holds a reference */
  g_assert (self->admit_func == NULL);

  G_OBJECT_CLASS (symfonic_stream_parent_class)->finalize (object);
}

static void
symfonic_stream_class_init (SymfonicStreamClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = symfonic_stream_dispose;
  object_class->finalize = symfonic_stream_finalize;
}

static void
symfonic_stream_init (SymfonicStream *self)
{
  self->cancellable = g_cancellable_new ();
  self->start_time = g_get_monotonic_time ();
  self->batch = g_new0 (EventList, 1);
  self->spare = g_new0 (EventList, 1);
  self->response_headers = symfonic_header_list_new ();
}

/**
 * symfonic_stream_new:
 * @route: the route the request arrived on
 * @invocation: the request: the server creates the stream from the request
 *   head, and decodes the body into @invocation once the head-phase stages
 *   admitted it
 *
 * Creates the stream of one request. The server does this for every
 * request; tests and embedders may too.
 *
 * Returns: (transfer full): a new #SymfonicStream
 */
SymfonicStream *
symfonic_stream_new (SymfonicRoute      *route,
                     SymfonicInvocation *invocation)
{
  SymfonicStream *self;

  g_return_val_if_fail (SYMFONIC_IS_ROUTE (route), NULL);
  g_return_val_if_fail (SYMFONIC_IS_INVOCATION (invocation), NULL);

  self = g_object_new (SYMFONIC_TYPE_STREAM, NULL);
  self->route = g_object_ref (route);
  self->invocation = g_object_ref (invocation);
  self->max_output_tokens = G_MAXUINT64;
  self->n_stages = symfonic_route_get_n_stages (route);
  self->release_line = g_strdup (symfonic_route_get_release_line (route));
  self->slots = g_new0 (StageSlot, self->n_stages);
  self->stats = symfonic_route_get_stats (route);
  self->shard_index = G_MAXUINT;
  for (guint i = 0; i < self->n_stages; i++)
    {
      self->slots[i].stage = symfonic_route_get_stage (route, i);
      self->slots[i].info = *symfonic_route_get_stage_info (route, i);
    }
  for (guint i = self->n_stages, next = self->n_stages; i-- > 0;)
    {
      self->slots[i].next_process = next;
      if (self->slots[i].info.process != NULL)
        next = i;
    }

  return self;
}

/**
 * symfonic_stream_get_route:
 * @self: a #SymfonicStream
 *
 * Gets the route the stream runs on.
 *
 * Returns: (transfer none): the route
 */
SymfonicRoute *
symfonic_stream_get_route (SymfonicStream *self)
{
  g_return_val_if_fail (SYMFONIC_IS_STREAM (self), NULL);

  return self->route;
}

/**
 * symfonic_stream_get_invocation:
 * @self: a #SymfonicStream
 *
 * Gets the invocation the stream serves: the request, and who made it once
 * authenticated.
 *
 * Returns: (transfer none): the invocation
 */
SymfonicInvocation *
symfonic_stream_get_invocation (SymfonicStream *self)
{
  g_return_val_if_fail (SYMFONIC_IS_STREAM (self), NULL);

  return self->invocation;
}

/**
 * symfonic_stream_get_cancellable:
 * @self: a #SymfonicStream
 *
 * The stream's cancellable: cancelled when the client goes away or the
 * stream fails, so every I/O done for the stream should use it.
 *
 * Returns: (transfer none): the cancellable
 */
GCancellable *
symfonic_stream_get_cancellable (SymfonicStream *self)
{
  g_return_val_if_fail (SYMFONIC_IS_STREAM (self), NULL);

  return self->cancellable;
}

/**
 * symfonic_stream_get_start_time:
 * @self: a #SymfonicStream
 *
 * Gets when the stream's request arrived, which timeouts and durations
 * count from.
 *
 * Returns: when the request arrived, in g_get_monotonic_time() microseconds
 */
gint64
symfonic_stream_get_start_time (SymfonicStream *self)
{
  g_return_val_if_fail (SYMFONIC_IS_STREAM (self), 0);

  return self->start_time;
}

/**
 * symfonic_stream_is_over:
 * @self: a #SymfonicStream
 *
 * Whether the stream has ended or was cancelled; a source should stop
 * producing once it is.
 *
 * Returns: %TRUE if nothing more will be delivered
 */
gboolean
symfonic_stream_is_over (SymfonicStream *self)
{
  g_return_val_if_fail (SYMFONIC_IS_STREAM (self), TRUE);

  return is_over (self);
}

/**
 * symfonic_stream_get_release_line:
 * @self: a #SymfonicStream
 *
 * The release line whose contract this stream publishes: the route's,
 * unless a stage chose another for this request.
 *
 * Returns: the release line, such as `"11.0.0"`
 */
const char *
symfonic_stream_get_release_line (SymfonicStream *self)
{
  g_return_val_if_fail (SYMFONIC_IS_STREAM (self), NULL);

  return self->release_line;
}

/**
 * symfonic_stream_set_release_line:
 * @self: a #SymfonicStream
 * @release_line: a release line
 *
 * Chooses the release line of this stream. Only admission and begin hooks
 * may, before anything is projected.
 */
void
symfonic_stream_set_release_line (SymfonicStream *self,
                                  const char     *release_line)
{
  g_return_if_fail (SYMFONIC_IS_STREAM (self));
  g_return_if_fail (release_line != NULL);
  g_return_if_fail (self->state < STREAM_RUNNING);

  g_free (self->release_line);
  self->release_line = g_strdup (release_line);
}

/**
 * symfonic_stream_hold_head:
 * @self: a #SymfonicStream not started yet
 *
 * Keeps a streaming response's head back until the first event leaves
 * the pipeline, so that a failure before it is answered with a real HTTP
 * status and a JSON body instead of an event stream that holds only an
 * error. A source whose upstream can still refuse after admission calls
 * this from its admission hook; it bounds the wait itself.
 */
void
symfonic_stream_hold_head (SymfonicStream *self)
{
  g_return_if_fail (SYMFONIC_IS_STREAM (self));
  g_return_if_fail (self->state < STREAM_RUNNING);

  self->holds_head = TRUE;
}

/**
 * symfonic_stream_get_holds_head:
 * @self: a #SymfonicStream
 *
 * Gets whether a stage held the response's head back until the first event.
 *
 * Returns: whether the response's head waits for the first event, see
 *   symfonic_stream_hold_head()
 */
gboolean
symfonic_stream_get_holds_head (SymfonicStream *self)
{
  g_return_val_if_fail (SYMFONIC_IS_STREAM (self), FALSE);

  return self->holds_head;
}

/**
 * symfonic_stream_set_response_header:
 * @self: a #SymfonicStream
 * @name: a header name
 * @value: its value
 *
 * Adds a header to the response, whichever it is: a refusal (such as
 * `Retry-After` with a 429) or the stream's own headers. Headers set after
 * the response started are not sent.
 */
void
symfonic_stream_set_response_header (SymfonicStream *self,
                                     const char     *name,
                                     const char     *value)
{
  g_return_if_fail (SYMFONIC_IS_STREAM (self));
  g_return_if_fail (name != NULL);
  g_return_if_fail (value != NULL);

  symfonic_header_list_set (self->response_headers, name, value);
}

/**
 * symfonic_stream_get_response_header:
 * @self: a #SymfonicStream
 * @name: a header name, in any case
 *
 * Gets a response header a stage set with
 * symfonic_stream_set_response_header().
 *
 * Returns: (nullable): the value a stage set for @name
 */
const char *
symfonic_stream_get_response_header (SymfonicStream *self,
                                     const char     *name)
{
  g_return_val_if_fail (SYMFONIC_IS_STREAM (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);

  return symfonic_header_list_get (self->response_headers, name);
}

/**
 * symfonic_stream_list_response_headers:
 * @self: a #SymfonicStream
 *
 * Lists the response headers stages set with
 * symfonic_stream_set_response_header().
 *
 * Returns: (transfer full) (array zero-terminated=1): the names of the
 *   headers stages set
 */
char **
symfonic_stream_list_response_headers (SymfonicStream *self)
{
  g_return_val_if_fail (SYMFONIC_IS_STREAM (self), NULL);

  return symfonic_header_list_names (self->response_headers);
}

/**
 * symfonic_stream_limit_output_tokens:
 * @self: a #SymfonicStream
 * @max_tokens: the most output tokens the source asked its upstream for
 *
 * A source that tells its upstream how many tokens it may produce (a
 * provider's `max_tokens`) says so here: a usage report of more output
 * is then a lie, as one past #SymfonicRoute:max-usage-tokens is.
 */
void
symfonic_stream_limit_output_tokens (SymfonicStream *self,
                                     guint64         max_tokens)
{
  g_return_if_fail (SYMFONIC_IS_STREAM (self));

  self->max_output_tokens = MIN (self->max_output_tokens, max_tokens);
}

/**
 * symfonic_stream_discard_usage:
 * @self: a #SymfonicStream
 *
 * The upstream's usage reports turned out to be lies: the stream's usage
 * is as if never reported, so metering falls back on its own measure of
 * what the stream let through, and symfonic_stream_add_usage() refuses
 * every later report. A source that finds a report it cannot believe
 * calls this, then ends the stream with an upstream failure.
 */
void
symfonic_stream_discard_usage (SymfonicStream *self)
{
  g_return_if_fail (SYMFONIC_IS_STREAM (self));

  self->usage_lied = TRUE;
  self->usage_reported = FALSE;
  self->input_tokens = self->output_tokens = 0;
}

/**
 * symfonic_stream_add_usage:
 * @self: a #SymfonicStream
 * @input_tokens: tokens the upstream read
 * @output_tokens: tokens the upstream produced
 * @error: return location for a #GError
 *
 * Records usage the upstream reported; sources call this, metering stages
 * read it with symfonic_stream_get_usage(). Reports add up.
 *
 * The upstream is not trusted: reports that add up to more than the
 * route's #SymfonicRoute:max-usage-tokens, or to more output than
 * symfonic_stream_limit_output_tokens() allows, are a lie, and the
 * stream's usage is discarded (see symfonic_stream_discard_usage()). The
 * source must end the stream with @error, an upstream failure.
 *
 * Returns: %TRUE if the report is within the stream's bounds
 */
gboolean
symfonic_stream_add_usage (SymfonicStream  *self,
                           guint64          input_tokens,
                           guint64          output_tokens,
                           GError         **error)
{
  guint64 max_usage;
  guint64 input, output, total;

  g_return_val_if_fail (SYMFONIC_IS_STREAM (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  max_usage = symfonic_route_get_max_usage_tokens (self->route);
  if (self->usage_lied ||
      !g_uint64_checked_add (&input, self->input_tokens, input_tokens) ||
      !g_uint64_checked_add (&output, self->output_tokens, output_tokens) ||
      !g_uint64_checked_add (&total, input, output) ||
      total > max_usage || output > self->max_output_tokens)
    {
      symfonic_stream_discard_usage (self);
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM,
                   "The upstream reported more usage than the stream allows (at most %" G_GUINT64_FORMAT
                   " tokens, %" G_GUINT64_FORMAT " of them output)",
                   max_usage, MIN (max_usage, self->max_output_tokens));
      return FALSE;
    }

  self->input_tokens = input;
  self->output_tokens = output;
  self->usage_reported = TRUE;

  return TRUE;
}

/**
 * symfonic_stream_get_usage:
 * @self: a #SymfonicStream
 * @input_tokens: (out) (optional): tokens the upstream read
 * @output_tokens: (out) (optional): tokens the upstream produced
 * @reported: (out) (optional): whether the upstream reported usage at all
 *
 * The usage the upstream reported so far.
 */
void
symfonic_stream_get_usage (SymfonicStream *self,
                           guint64        *input_tokens,
                           guint64        *output_tokens,
                           gboolean       *reported)
{
  g_return_if_fail (SYMFONIC_IS_STREAM (self));

  if (input_tokens != NULL)
    *input_tokens = self->input_tokens;
  if (output_tokens != NULL)
    *output_tokens = self->output_tokens;
  if (reported != NULL)
    *reported = self->usage_reported;
}

static StageSlot *
find_slot (SymfonicStream *self,
           SymfonicStage  *stage)
{
  if (self->running != NULL && self->running->stage == stage)
    return self->running;

  for (guint i = 0; i < self->n_stages; i++)
    {
      if (self->slots[i].stage == stage)
        return &self->slots[i];
    }

  return NULL;
}

/**
 * symfonic_stream_get_stage_data: (skip)
 * @self: a #SymfonicStream
 * @stage: a stage of the stream's route
 *
 * Gets what a stage keeps for this stream, set with
 * symfonic_stream_set_stage_data(): the per-stream state of a stage object
 * that all streams of its route share.
 *
 * Returns: (nullable): the data @stage keeps for this stream
 */
gpointer
symfonic_stream_get_stage_data (SymfonicStream *self,
                                SymfonicStage  *stage)
{
  StageSlot *slot;

  g_return_val_if_fail (SYMFONIC_IS_STREAM (self), NULL);

  slot = find_slot (self, stage);
  g_return_val_if_fail (slot != NULL, NULL);

  return slot->data;
}

/**
 * symfonic_stream_set_stage_data: (skip)
 * @self: a #SymfonicStream
 * @stage: a stage of the stream's route
 * @data: (nullable): the stage's per-stream state
 * @destroy: (nullable): frees @data when replaced or when the stream is freed
 *
 * Keeps per-stream state for @stage. Stages are shared by every stream of
 * a route, so this is where what belongs to one request lives.
 */
void
symfonic_stream_set_stage_data (SymfonicStream *self,
                                SymfonicStage  *stage,
                                gpointer        data,
                                GDestroyNotify  destroy)
{
  StageSlot *slot;

  g_return_if_fail (SYMFONIC_IS_STREAM (self));

  slot = find_slot (self, stage);
  g_return_if_fail (slot != NULL);

  if (slot->destroy != NULL && slot->data != NULL)
    slot->destroy (slot->data);
  slot->data = data;
  slot->destroy = destroy;
}

/**
 * symfonic_stream_get_stage_state:
 * @self: a #SymfonicStream
 * @stage: a stage of the stream's route
 *
 * The binding-friendly form of symfonic_stream_get_stage_data().
 *
 * Returns: (transfer none) (nullable): the state object
 */
GObject *
symfonic_stream_get_stage_state (SymfonicStream *self,
                                 SymfonicStage  *stage)
{
  gpointer data = symfonic_stream_get_stage_data (self, stage);

  return G_IS_OBJECT (data) ? data : NULL;
}

/**
 * symfonic_stream_set_stage_state:
 * @self: a #SymfonicStream
 * @stage: a stage of the stream's route
 * @state: (nullable): a state object
 *
 * The binding-friendly form of symfonic_stream_set_stage_data(): the
 * stream keeps a reference on @state until it is replaced or the stream is
 * freed.
 */
void
symfonic_stream_set_stage_state (SymfonicStream *self,
                                 SymfonicStage  *stage,
                                 GObject        *state)
{
  g_return_if_fail (state == NULL || G_IS_OBJECT (state));

  symfonic_stream_set_stage_data (self, stage,
                                  state != NULL ? g_object_ref (state) : NULL,
                                  g_object_unref);
}

/**
 * symfonic_stream_emit:
 * @self: a #SymfonicStream
 * @event: an event
 *
 * Emits @event from the stage whose hook is running; the next stage sees
 * it after the hook returns. Only valid inside a process or finish hook.
 */
void
symfonic_stream_emit (SymfonicStream *self,
                      SymfonicEvent  *event)
{
  g_return_if_fail (SYMFONIC_IS_STREAM (self));
  g_return_if_fail (event != NULL);

  symfonic_stream_emit_checked (self, event);
}

void
symfonic_stream_emit_checked (SymfonicStream *self,
                              SymfonicEvent  *event)
{
  g_return_if_fail (self->emit_target != NULL);

  /* a stage that passes on the event it was given, as most do with most
   * events, passes the reference on too rather than taking one more */
  if (self->handed != NULL && *self->handed == event)
    {
      *self->handed = NULL;
      self->handed = NULL;
      event_list_add (self->emit_target, event);
      return;
    }

  event_list_add (self->emit_target, symfonic_event_ref (event));
}

/* Whether the source may push on: the sink is below its bound, and no
 * batch is out or the next one still has room. Letting the source fill the
 * next batch while one is out is what gives a stage on another thread many
 * events per hop instead of one. */
static inline gboolean
takes_more (SymfonicStream *self)
{
  if (self->sink_busy)
    return FALSE;

  return !self->out || self->pending == NULL || self->pending->len < PENDING_MAX;
}

/* A source told to wait hears that it may read on (the sink is below its
 * bound and the next batch has room), or that the stream ended (and it should end
 * too), once the sink's own I/O has returned. */
static void
wake_source (SymfonicStream *self)
{
  if (!self->source_waits)
    return;
  if (flows (self) && !takes_more (self))
    return;

  self->source_waits = FALSE;
  symfonic_poller_defer (get_poller (self), &self->ready);
}

/* However the stream ends: it keeps no deadline and no event (a batch
 * that is out is the stage thread's until it answers), and its upstream
 * stops if it was still producing. */
static void
stop_flow (SymfonicStream *self)
{
  clear_deadline (self);
  if (!self->out)
    event_list_clear (self->batch);
  if (self->pending != NULL)
    event_list_clear (self->pending);
  g_cancellable_cancel (self->cancellable);
  wake_source (self);
}

static void
stream_end (SymfonicStream *self,
            const GError   *error)
{
  if (!advance (self, STREAM_END))
    return;

  if (self->upstream_end_us == 0)
    self->upstream_end_us = g_get_monotonic_time ();
  stop_flow (self);
  if (self->sink != NULL)
    self->sink->end (self->sink_data, error);
  close_admitted_stages (self);
}

/* The calling thread's shard of the route's counts: the stream's own
 * thread keeps it at hand; a stage's thread looks its own up. */
static inline SymfonicRouteShard *
get_shard (SymfonicStream *self)
{
  guint index = symfonic_telemetry_thread_shard ();

  if (G_LIKELY (index == self->shard_index))
    return self->shard;
  if (self->shard_index == G_MAXUINT)
    {
      self->shard = symfonic_route_stats_get_shard (self->stats);
      self->shard_index = index;
      return self->shard;
    }

  return symfonic_route_stats_get_shard (self->stats);
}

/* Stage @i took @n events since @start: the one clock read at the end of
 * its batch (which the next stage takes as its start), and the sums a
 * trace reads; each event is observed as the batch's mean. */
static inline guint64
count_events (SymfonicStream *self,
              guint           i,
              guint64         start,
              guint           n)
{
  StageSlot *slot = &self->slots[i];
  guint64 end = symfonic_telemetry_ticks ();

  if (slot->events_first == 0)
    slot->events_first = start;
  slot->events_last = end;
  slot->events_busy += end - start;
  slot->events += n;
  symfonic_route_stats_observe_phase (self->stats, get_shard (self), i, SYMFONIC_STAGE_PHASE_EVENT, end - start, n);

  return end;
}

/* Runs stage @i over self->batch into self->spare, then makes the output
 * the batch; on the stream's thread or, @hopped, on the stage's own, where
 * a stream that ended meanwhile (its deadline, its client gone, an error)
 * gets none of its events past the one the stage has: a slow stage would
 * otherwise go on with a whole batch of a stream nobody reads, holding
 * every stream behind it on its thread. */
static gboolean
process_batch (SymfonicStream  *self,
               guint            i,
               gboolean         hopped,
               guint64         *clock,
               GError         **error)
{
  EventList *in = self->batch;
  StageSlot *slot = &self->slots[i];
  guint64 start = *clock != 0 ? *clock : symfonic_telemetry_ticks ();
  guint n_events = in->len;

  self->emit_target = self->spare;
  self->running = slot;
  for (guint j = 0; j < in->len; j++)
    {
      SymfonicEvent *event = in->events[j];
      gboolean ok;

      if (hopped && g_cancellable_set_error_if_cancelled (self->cancellable, error))
        ok = FALSE;
      else
        {
          self->handed = &in->events[j];
          ok = symfonic_stage_run_process (slot->stage, slot->info.process, self, event, error);
        }
      if (!ok)
        {
          self->handed = NULL;
          self->emit_target = NULL;
          self->running = NULL;
          event_list_clear (self->spare);
          *clock = count_events (self, i, start, j + 1);
          return FALSE;
        }
    }
  self->handed = NULL;
  self->emit_target = NULL;
  self->running = NULL;
  event_list_clear (in);
  self->batch = self->spare;
  self->spare = in;
  *clock = count_events (self, i, start, n_events);

  return TRUE;
}

/* Runs stage @i's begin or finish hook, its output going to self->batch. */
static gboolean
run_edge_hook (SymfonicStream  *self,
               HopKind          kind,
               guint            i,
               GError         **error)
{
  gboolean ok;

  self->emit_target = self->batch;
  if (kind == HOP_BEGIN)
    ok = symfonic_stage_begin (self->slots[i].stage, self, error);
  else
    {
      StageSlot *slot = &self->slots[i];

      slot->finish_start = symfonic_telemetry_ticks ();
      ok = symfonic_stage_finish (slot->stage, self, error);
      slot->finish_end = symfonic_telemetry_ticks ();
      if (slot->info.finishes)
        symfonic_route_stats_observe_phase (self->stats, get_shard (self), i, SYMFONIC_STAGE_PHASE_FINISH,
                                            slot->finish_end - slot->finish_start, 1);
    }
  self->emit_target = NULL;

  return ok;
}

/* Carries self->batch through stages [first, n) and into the sink, unless
 * a stage on its own context takes it on the way. */
static gboolean
run_stages (SymfonicStream  *self,
            guint            first,
            GError         **error)
{
  guint64 clock = 0;

  if (first < self->n_stages && self->slots[first].info.process == NULL)
    first = self->slots[first].next_process;
  for (guint i = first; i < self->n_stages && self->batch->len > 0; i = self->slots[i].next_process)
    {
      if (runs_elsewhere (self, i))
        {
          hop_send (self, HOP_PROCESS, i);
          return TRUE;
        }
      if (!process_batch (self, i, FALSE, &clock, error))
        return FALSE;
    }

  for (guint j = 0; j < self->batch->len && !is_over (self); j++)
    {
      switch (self->sink->event (self->sink_data, self->batch->events[j]))
        {
        case SYMFONIC_SINK_FULL:
          self->sink_busy = TRUE;
          break;
        case SYMFONIC_SINK_YIELD:
          self->sink_yields = TRUE;
          break;
        case SYMFONIC_SINK_TAKEN:
          break;
        }
    }
  event_list_clear (self->batch);

  return TRUE;
}

/* Runs stage @i's begin or finish hook and carries its output on. */
static gboolean
run_hook (SymfonicStream  *self,
          HopKind          kind,
          guint            i,
          GError         **error)
{
  if (runs_elsewhere (self, i))
    {
      hop_send (self, kind, i);
      return TRUE;
    }

  return run_edge_hook (self, kind, i, error) && run_stages (self, i + 1, error);
}

static void
deadline_reached (gpointer data)
{
  SymfonicStream *self = data;
  g_autoptr(GError) error = g_error_new (SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM_TIMEOUT,
                                         "The stream ran longer than %u seconds",
                                         symfonic_route_get_max_duration (self->route));

  stream_end (self, error);
}

/* An upstream that keeps dripping would hold the connection and its
 * upstream forever; the route bounds the whole stream. */
static void
arm_deadline (SymfonicStream *self)
{
  guint seconds = symfonic_route_get_max_duration (self->route);

  if (seconds == 0)
    return;

  self->deadline = symfonic_poller_timer (get_poller (self), deadline_reached, self);
  symfonic_timer_set_deadline (self->deadline, g_get_monotonic_time () + (gint64) seconds * G_USEC_PER_SEC);
}

static void
alarm_rang (gpointer data)
{
  Alarm *alarm = data;
  SymfonicStream *self = alarm->stream;
  g_autoptr(GError) error = NULL;
  g_autoptr(SymfonicStream) alive = g_object_ref (self);

  if (is_over (self) || self->state < STREAM_STARTING)
    return;
  if (!symfonic_stage_alarm (self->slots[alarm->index].stage, self, &error))
    stream_end (self, error);
}

/**
 * symfonic_stream_set_alarm:
 * @self: a #SymfonicStream
 * @stage: a stage of the stream's route whose hooks run on the stream's
 *   thread
 * @deadline_us: when, in g_get_monotonic_time() microseconds; -1 to
 *   disarm
 *
 * Calls @stage's alarm hook for this stream at @deadline_us, once, if the
 * stream still runs then: a stage that holds a lease for the stream
 * renews it there, one that batches what it reports flushes the batch. A
 * stage has one alarm per stream; setting it again moves it. Arming it
 * allocates nothing once the stream has it, and no alarm rings once the
 * stream ended.
 */
void
symfonic_stream_set_alarm (SymfonicStream *self,
                           SymfonicStage  *stage,
                           gint64          deadline_us)
{
  StageSlot *slot;
  Alarm *alarm;

  g_return_if_fail (SYMFONIC_IS_STREAM (self));

  slot = find_slot (self, stage);
  g_return_if_fail (slot != NULL);
  g_return_if_fail (slot->info.context == NULL);

  if (is_over (self))
    return;

  if (self->alarms == NULL)
    {
      if (deadline_us < 0)
        return;
      self->alarms = g_new0 (Alarm, self->n_stages);
    }
  alarm = &self->alarms[slot - self->slots];
  if (alarm->timer == NULL)
    {
      if (deadline_us < 0)
        return;
      alarm->stream = self;
      alarm->index = slot - self->slots;
      alarm->timer = symfonic_poller_timer (get_poller (self), alarm_rang, alarm);
    }
  symfonic_timer_set_deadline (alarm->timer, deadline_us);
}

static void
start_source (SymfonicStream *self)
{
  if (!advance (self, STREAM_OPEN))
    return;
  /* a runs route made without a source serves its runs from the store:
   * a stream that asks it for an upstream fails rather than crashes */
  if (symfonic_route_get_source (self->route) == NULL)
    {
      g_autoptr(GError) error = g_error_new_literal (SYMFONIC_ERROR, SYMFONIC_ERROR_FAILED,
                                                     "The route has no source");

      stream_end (self, error);
      return;
    }
  self->source_start_us = g_get_monotonic_time ();
  arm_deadline (self);
  symfonic_source_start (symfonic_route_get_source (self->route), self, self->cancellable);
}

/* Goes on with the begin hooks, the events that queued while a batch was
 * out, or the finish hooks, until a batch is out again or there is nothing
 * left to do. */
static void
resume (SymfonicStream *self)
{
  g_autoptr(GError) error = NULL;

  while (!self->out)
    {
      gboolean ok = TRUE;

      switch (self->state)
        {
        case STREAM_STARTING:
          if (self->hook_next == self->n_stages)
            {
              start_source (self);
              return;
            }
          ok = run_hook (self, HOP_BEGIN, self->hook_next++, &error);
          break;

        case STREAM_RUNNING:
        case STREAM_ENDING:
          if (self->pending != NULL && self->pending->len > 0)
            {
              EventList *queued = self->pending;

              self->pending = self->batch;
              self->batch = queued;
              ok = run_stages (self, 0, &error);
              /* the source fills the next batch while this one is out */
              wake_source (self);
            }
          else if (self->state == STREAM_ENDING)
            {
              advance (self, STREAM_DRAINED);
              self->hook_next = 0;
            }
          else
            {
              wake_source (self);
              return;
            }
          break;

        case STREAM_FINISHING:
          if (self->hook_next == self->n_stages)
            {
              stream_end (self, NULL);
              return;
            }
          ok = run_hook (self, HOP_FINISH, self->hook_next++, &error);
          break;

        case STREAM_NEW:
        case STREAM_HEAD_WAITING:
        case STREAM_HEAD_ADMITTED:
        case STREAM_BODY_WAITING:
        case STREAM_ADMITTED:
        case STREAM_REFUSED:
        case STREAM_OVER:
        case N_STREAM_STATES:
        default:
          /* over: a hook or the sink ended it on the way */
          return;
        }

      if (!ok)
        {
          stream_end (self, error);
          return;
        }
    }
}

static void admission_decided (SymfonicStream *self,
                               GError         *error);

static void
hop_free (gpointer data)
{
  Hop *hop = data;

  g_clear_error (&hop->error);
  g_object_unref (hop->stream);
  g_free (hop);
}

/* Back on the stream's thread. */
static gboolean
hop_answered (gpointer data)
{
  Hop *hop = data;
  SymfonicStream *self = hop->stream;

  switch (hop->kind)
    {
    case HOP_CLOSE:
      break;

    case HOP_ADMIT:
      admission_decided (self, g_steal_pointer (&hop->error));
      break;

    case HOP_BEGIN:
    case HOP_PROCESS:
    case HOP_FINISH:
      self->out = FALSE;
      self->out_hop = NULL;
      if (self->hook_deadline != NULL)
        symfonic_timer_set_deadline (self->hook_deadline, -1);
      if (is_over (self))
        {
          event_list_clear (self->batch);
          event_list_clear (self->spare);
          break;
        }
      if (hop->error != NULL || !run_stages (self, hop->index + 1, &hop->error))
        {
          stream_end (self, hop->error);
          break;
        }
      resume (self);
      break;
    }

  return G_SOURCE_REMOVE;
}

/* Never inline, even from a thread that could acquire @context: the
 * caller is in the middle of the executor. The hop is freed, and the
 * stream unreferenced, on the stream's thread, or with the stream's
 * context if that goes first. */
static void
hop_post (Hop            *hop,
          GMainContext   *context,
          GSourceFunc     func,
          GDestroyNotify  destroy)
{
  GSource *source = g_idle_source_new ();

  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, func, hop, destroy);
  g_source_set_static_name (source, "[symfonic] stage hop");
  g_source_attach (source, context);
  g_source_unref (source);
}

static void
hop_answer (Hop *hop)
{
  hop_post (hop, hop->stream->home, hop_answered, hop_free);
}

static void
hop_admitted (GObject      *object,
              GAsyncResult *result,
              gpointer      data)
{
  Hop *hop = data;

  symfonic_stage_admit_finish (SYMFONIC_STAGE (object), result, &hop->error);
  hop_answer (hop);
}

/* On the stage's context. A stream that ended meanwhile runs no more of
 * its events; its close hook still runs. */
static gboolean
hop_run (gpointer data)
{
  Hop *hop = data;
  SymfonicStream *self = hop->stream;
  SymfonicStage *stage = self->slots[hop->index].stage;
  SymfonicStageLane *lane = self->slots[hop->index].info.lane;
  gboolean ended = g_cancellable_is_cancelled (self->cancellable);

  switch (hop->kind)
    {
    case HOP_ADMIT:
      symfonic_stage_admit_async (stage, self, self->cancellable, hop_admitted, hop);
      return G_SOURCE_REMOVE;

    case HOP_CLOSE:
      symfonic_stage_close (stage, self);
      break;

    case HOP_BEGIN:
    case HOP_PROCESS:
    case HOP_FINISH:
      if (ended)
        break;
      /* numbered, so that an overrun stops this hook and no later one */
      g_atomic_int_set (&hop->serial, symfonic_stage_lane_enter (lane));
      if (hop->kind == HOP_PROCESS)
        {
          guint64 clock = 0;

          process_batch (self, hop->index, TRUE, &clock, &hop->error);
        }
      else
        run_edge_hook (self, hop->kind, hop->index, &hop->error);
      symfonic_stage_lane_leave (lane);
      break;
    }

  hop_answer (hop);
  return G_SOURCE_REMOVE;
}

/* The stage that has the batch did not answer within the route's
 * hook-timeout: the stream ends with its error frame, and the hook is
 * interrupted if it still runs, so that the streams behind it on the
 * stage's thread are not held too. The batch stays the stage thread's
 * until it answers. */
static void
hook_overran (gpointer data)
{
  SymfonicStream *self = data;
  Hop *hop = self->out_hop;
  StageSlot *slot = &self->slots[hop->index];
  g_autoptr(GError) error = NULL;

  error = g_error_new (SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM_TIMEOUT,
                       "Stage %s did not answer within %u seconds", G_OBJECT_TYPE_NAME (slot->stage),
                       symfonic_route_get_hook_timeout (self->route));
  symfonic_stage_lane_interrupt (slot->info.lane, g_atomic_int_get (&hop->serial));
  stream_end (self, error);
}

/* Armed on the stream's thread whenever a batch goes out; the timer is
 * made once per stream and moved from hop to hop. */
static void
arm_hook_deadline (SymfonicStream *self)
{
  guint seconds = symfonic_route_get_hook_timeout (self->route);

  if (seconds == 0 || is_over (self))
    return;

  if (self->hook_deadline == NULL)
    self->hook_deadline = symfonic_poller_timer (get_poller (self), hook_overran, self);
  symfonic_timer_set_deadline (self->hook_deadline,
                               g_get_monotonic_time () + (gint64) seconds * G_USEC_PER_SEC);
}

/* Hands a hook of stage @index to the stage's context. */
static void
hop_send (SymfonicStream *self,
          HopKind         kind,
          guint           index)
{
  Hop *hop = g_new0 (Hop, 1);

  hop->stream = g_object_ref (self);
  hop->kind = kind;
  hop->index = index;
  if (self->home == NULL)
    self->home = g_main_context_ref_thread_default ();
  if (kind == HOP_BEGIN || kind == HOP_PROCESS || kind == HOP_FINISH)
    {
      self->out = TRUE;
      self->out_hop = hop;
      arm_hook_deadline (self);
    }

  hop_post (hop, self->slots[index].info.context, hop_run, NULL);
}

/**
 * symfonic_stream_push:
 * @self: a #SymfonicStream
 * @event: an upstream event
 *
 * Hands one upstream event to the stream; sources call this. Ignored
 * unless the stream runs: once it is over, and before it started (a
 * source driven on its own). A source that ended its upstream pushes
 * nothing more.
 *
 * Returns: whether the source may push on, should stop reading its
 *   upstream until the stream's ready function runs, or should stop
 */
SymfonicFlowReturn
symfonic_stream_push (SymfonicStream *self,
                      SymfonicEvent  *event)
{
  g_autoptr(GError) error = NULL;

  g_return_val_if_fail (SYMFONIC_IS_STREAM (self), SYMFONIC_FLOW_OVER);
  g_return_val_if_fail (event != NULL, SYMFONIC_FLOW_OVER);

  if (G_UNLIKELY (self->state != STREAM_RUNNING))
    {
      g_return_val_if_fail (!upstream_ended (self), SYMFONIC_FLOW_OVER);
      return SYMFONIC_FLOW_OVER;
    }

  /* what the upstream produced, as the source gave it: the time to its
   * first token, and how many it sent when it reports no usage */
  switch (symfonic_event_peek_kind (event))
    {
    case SYMFONIC_EVENT_KIND_TEXT_DELTA:
    case SYMFONIC_EVENT_KIND_THINKING_DELTA:
    case SYMFONIC_EVENT_KIND_TOOL_CALL_START:
      if (G_UNLIKELY (self->first_token_us == 0))
        self->first_token_us = g_get_monotonic_time ();
      self->n_deltas++;
      break;
    default:
      break;
    }

  if (G_UNLIKELY (self->out))
    {
      /* carried on with the next batch */
      if (self->pending == NULL)
        self->pending = g_new0 (EventList, 1);
      event_list_add (self->pending, symfonic_event_ref (event));
    }
  else
    {
      event_list_add (self->batch, symfonic_event_ref (event));
      if (!run_stages (self, 0, &error))
        stream_end (self, error);
      if (self->state != STREAM_RUNNING)
        return SYMFONIC_FLOW_OVER;
    }

  if (!takes_more (self))
    {
      self->source_waits = TRUE;
      return SYMFONIC_FLOW_WAIT;
    }
  /* the ready function is due already: nothing else is to wake the source */
  if (G_UNLIKELY (self->sink_yields))
    {
      self->sink_yields = FALSE;
      symfonic_poller_defer_after_poll (get_poller (self), &self->ready);
      return SYMFONIC_FLOW_WAIT;
    }

  return SYMFONIC_FLOW_OK;
}

/**
 * symfonic_stream_set_ready_func:
 * @self: a #SymfonicStream
 * @func: (nullable) (scope notified) (closure user_data) (destroy destroy):
 *   called when the stream can take events again, or %NULL to drop the
 *   one set
 * @user_data: data for @func
 * @destroy: (nullable): frees @user_data with the stream, or when
 *   replaced
 *
 * Sets what the stream calls after symfonic_stream_push() returned
 * %SYMFONIC_FLOW_WAIT, once the client caught up, or once the stream
 * ended while the source waited. A source sets it when it starts, and
 * drops it once it ended the stream, letting go of @user_data.
 */
void
symfonic_stream_set_ready_func (SymfonicStream          *self,
                                SymfonicStreamReadyFunc  func,
                                gpointer                 user_data,
                                GDestroyNotify           destroy)
{
  g_return_if_fail (SYMFONIC_IS_STREAM (self));

  if (self->ready_destroy != NULL)
    self->ready_destroy (self->ready_data);
  self->ready_func = func;
  self->ready_data = user_data;
  self->ready_destroy = destroy;
  self->ready_generation++;
}

/* The sink drained below its bound. */
void
symfonic_stream_sink_ready (SymfonicStream *self)
{
  self->sink_busy = FALSE;
  if (flows (self))
    wake_source (self);
}

/**
 * symfonic_stream_push_end:
 * @self: a #SymfonicStream
 * @error: (nullable): why the upstream failed, or %NULL when it completed
 *
 * Ends the upstream; sources call this exactly once. On success every stage
 * finishes in order, and what a stage releases passes through the stages
 * after it before they finish (so withheld text is still cleaned).
 *
 * From Python, `stream.push_end()` ends a stream that completed:
 * PyGObject before 3.47 refuses an explicit `None` for a #GError, nullable
 * or not (the loader of `.py` plugins lets its scripts pass it).
 */
void
symfonic_stream_push_end (SymfonicStream *self,
                          const GError   *error)
{
  g_return_if_fail (SYMFONIC_IS_STREAM (self));

  /* a source ends its upstream also once it heard that the stream is
   * over, and a source driven on its own ends a stream never started */
  if (!flows (self))
    return;

  self->upstream_end_us = g_get_monotonic_time ();
  if (error != NULL)
    {
      stream_end (self, error);
      return;
    }

  /* the events still queued behind a batch that is out go first */
  if (advance (self, STREAM_UPSTREAM_END))
    resume (self);
}

/* The source's upstream answered, and its first event is still to come:
 * a response head held for it (symfonic_stream_hold_head()) may go out
 * now, so that the route's heartbeats cover a model's silence before its
 * first token. The sink decides whether it does. */
void
symfonic_stream_release_head (SymfonicStream *self)
{
  g_return_if_fail (SYMFONIC_IS_STREAM (self));

  if (!self->holds_head || self->sink == NULL || self->sink->head == NULL || symfonic_stream_is_over (self))
    return;

  self->sink->head (self->sink_data);
}

void
symfonic_stream_set_sink (SymfonicStream           *self,
                          const SymfonicStreamSink *sink,
                          gpointer                  data)
{
  g_return_if_fail (SYMFONIC_IS_STREAM (self));

  self->sink = sink;
  self->sink_data = data;
}

/* The phase whose stages the stream asks now. */
static inline SymfonicAdmissionPhase
admitting_phase (SymfonicStream *self)
{
  return self->state <= STREAM_HEAD_WAITING ? SYMFONIC_ADMISSION_PHASE_HEAD : SYMFONIC_ADMISSION_PHASE_BODY;
}

/* Stage @i decided its admission (@error, its refusal, or NULL), which
 * it began at @start: timed for its phase, and, for a stage that meters
 * (its hook runs once the body is in), counted by outcome. */
static void
count_admission (SymfonicStream *self,
                 guint           i,
                 guint64         start,
                 const GError   *error)
{
  StageSlot *slot = &self->slots[i];
  gboolean body = slot->info.phase == SYMFONIC_ADMISSION_PHASE_BODY;
  SymfonicLimitOutcome outcome;

  slot->admit_start = start;
  slot->admit_end = symfonic_telemetry_ticks ();
  if (!slot->info.admits)
    return;

  symfonic_route_stats_observe_phase (self->stats, get_shard (self), i,
                                      body ? SYMFONIC_STAGE_PHASE_BODY : SYMFONIC_STAGE_PHASE_HEAD,
                                      slot->admit_end - start, 1);
  if (!body)
    return;
  if (error == NULL)
    outcome = self->near_limit ? SYMFONIC_LIMIT_NEAR_LIMIT : SYMFONIC_LIMIT_ADMITTED;
  else if (error->domain == SYMFONIC_ERROR &&
           (error->code == SYMFONIC_ERROR_STORE_UNAVAILABLE || error->code == SYMFONIC_ERROR_STORE_TIMEOUT))
    outcome = SYMFONIC_LIMIT_STORE_ERROR;
  else
    outcome = SYMFONIC_LIMIT_REFUSED;
  self->near_limit = FALSE;
  symfonic_route_stats_count_limit (self->stats, i, outcome);
}

static void
refuse_admission (SymfonicStream *self)
{
  advance (self, STREAM_REFUSE);
  close_admitted_stages (self);
}

static void caps_decided (SymfonicStream *self,
                          GError         *error);

/* Every stage of the phase admitted the stream. The body phase ends with
 * the route's caps, which come after every stage so that the tenant is
 * known, and the source's own admission: last, so that a source reserves
 * nothing for a stream a stage refused. A cap store that answers later
 * makes the stream wait for it (caps_decided()). */
static SymfonicAdmitResult
pass_phase (SymfonicStream  *self,
            GError         **error)
{
  if (admitting_phase (self) == SYMFONIC_ADMISSION_PHASE_BODY)
    {
      switch (symfonic_route_claim_stream (self->route, self, caps_decided, error))
        {
        case SYMFONIC_ADMIT_PENDING:
          advance (self, STREAM_WAIT);
          return SYMFONIC_ADMIT_PENDING;
        case SYMFONIC_ADMIT_REFUSED:
          refuse_admission (self);
          return SYMFONIC_ADMIT_REFUSED;
        case SYMFONIC_ADMIT_PASSED:
        default:
          break;
        }
      /* a runs route has no source, and reads its run at this point */
      if (symfonic_route_get_source (self->route) != NULL &&
          !symfonic_source_admit (symfonic_route_get_source (self->route), self, error))
        {
          refuse_admission (self);
          return SYMFONIC_ADMIT_REFUSED;
        }
    }

  advance (self, STREAM_PASS);
  return SYMFONIC_ADMIT_PASSED;
}

/* The route's cap store, which the stream waited for, decided (@error,
 * taken, is the refusal); the source's admission is next. Not called for
 * a stream cancelled meanwhile. */
static void
caps_decided (SymfonicStream *self,
              GError         *error)
{
  SymfonicStreamAdmitFunc func = self->admit_func;
  gpointer data = self->admit_data;

  if (error == NULL && symfonic_route_get_source (self->route) != NULL)
    symfonic_source_admit (symfonic_route_get_source (self->route), self, &error);
  if (error != NULL)
    refuse_admission (self);
  else
    advance (self, STREAM_PASS);

  self->admit_func = NULL;
  self->admit_data = NULL;
  func (data, error);
  g_clear_error (&error);
}

static void
admit_cb (GObject      *object,
          GAsyncResult *result,
          gpointer      user_data)
{
  g_autoptr(SymfonicStream) self = user_data;
  GError *error = NULL;

  symfonic_stage_admit_finish (SYMFONIC_STAGE (object), result, &error);
  admission_decided (self, error);
}

/* Asks the stages of the phase, in route order from admit_next on. Each
 * is tried in place first, since going through a stage's asynchronous
 * hook would cost the request a main-loop turn; the first that cannot
 * decide at once (G_IO_ERROR_WOULD_BLOCK, or it admits asynchronously
 * only, or on a thread of its own) is asked to answer later. */
static SymfonicAdmitResult
admit_from_next (SymfonicStream  *self,
                 GError         **error)
{
  SymfonicAdmissionPhase phase = admitting_phase (self);

  for (; self->admit_next < self->n_stages; self->admit_next++)
    {
      StageSlot *slot = &self->slots[self->admit_next];
      GError *local_error = NULL;
      guint64 start;

      if (slot->info.phase != phase)
        continue;

      start = slot->admit_start = symfonic_telemetry_ticks ();
      if (runs_elsewhere (self, self->admit_next))
        {
          advance (self, STREAM_WAIT);
          hop_send (self, HOP_ADMIT, self->admit_next);
          return SYMFONIC_ADMIT_PENDING;
        }
      if (slot->info.admit != NULL)
        {
          if (symfonic_stage_run_admit (slot->stage, slot->info.admit, self, &local_error))
            {
              count_admission (self, self->admit_next, start, NULL);
              slot->admitted = TRUE;
              continue;
            }
          if (!g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
            {
              count_admission (self, self->admit_next, start, local_error);
              g_propagate_error (error, local_error);
              refuse_admission (self);
              return SYMFONIC_ADMIT_REFUSED;
            }
          g_error_free (local_error);
        }

      advance (self, STREAM_WAIT);
      symfonic_stage_admit_async (slot->stage, self, self->cancellable, admit_cb, g_object_ref (self));
      return SYMFONIC_ADMIT_PENDING;
    }

  return pass_phase (self, error);
}

/* The stage at admit_next, which the stream waited for, decided: the next
 * stages' turn, or the refusal (@error, taken). */
static void
admission_decided (SymfonicStream *self,
                   GError         *error)
{
  SymfonicStreamAdmitFunc func = self->admit_func;
  gpointer data = self->admit_data;

  /* cancelled meanwhile: nobody waits for the answer, but a stage that
   * admitted the stream is closed like any other (a budget gives its
   * reservation back) */
  if (is_over (self))
    {
      if (error == NULL)
        close_stage (self, self->admit_next);
      g_clear_error (&error);
      return;
    }

  count_admission (self, self->admit_next, self->slots[self->admit_next].admit_start, error);
  if (error != NULL)
    refuse_admission (self);
  else
    {
      self->slots[self->admit_next++].admitted = TRUE;
      if (admit_from_next (self, &error) == SYMFONIC_ADMIT_PENDING)
        return;
    }

  self->admit_func = NULL;
  self->admit_data = NULL;
  func (data, error);
  g_clear_error (&error);
}

/* Runs the admission hooks of the stages that admit in @phase, in route
 * order, and then, after the body phase, the route's caps and the source's
 * admission; the first refusal wins. The head phase comes first, then the
 * body phase, each once.
 *
 * Returns %SYMFONIC_ADMIT_PASSED or %SYMFONIC_ADMIT_REFUSED (with @error
 * set) when every stage decided at once; otherwise
 * %SYMFONIC_ADMIT_PENDING, and @func hears the outcome once the stages
 * that answer later did, unless the stream is cancelled first. */
SymfonicAdmitResult
symfonic_stream_admit (SymfonicStream           *self,
                       SymfonicAdmissionPhase    phase,
                       SymfonicStreamAdmitFunc   func,
                       gpointer                  data,
                       GError                  **error)
{
  SymfonicAdmitResult result;

  g_return_val_if_fail (SYMFONIC_IS_STREAM (self), SYMFONIC_ADMIT_REFUSED);
  g_return_val_if_fail (func != NULL, SYMFONIC_ADMIT_REFUSED);
  g_return_val_if_fail (error == NULL || *error == NULL, SYMFONIC_ADMIT_REFUSED);

  if (G_UNLIKELY (self->state != (phase == SYMFONIC_ADMISSION_PHASE_HEAD ? STREAM_NEW : STREAM_HEAD_ADMITTED)))
    {
      g_critical ("A stream in state %s cannot admit in the %s phase", state_names[self->state],
                  phase == SYMFONIC_ADMISSION_PHASE_HEAD ? "head" : "body");
      return SYMFONIC_ADMIT_REFUSED;
    }

  /* set before a stage is asked, whenever it answers */
  self->admit_func = func;
  self->admit_data = data;
  self->admit_next = 0;
  result = admit_from_next (self, error);
  if (result != SYMFONIC_ADMIT_PENDING)
    {
      self->admit_func = NULL;
      self->admit_data = NULL;
    }

  return result;
}

/* Runs the begin hooks, then opens the upstream. The sink must be set. */
void
symfonic_stream_start (SymfonicStream *self)
{
  g_return_if_fail (SYMFONIC_IS_STREAM (self));
  g_return_if_fail (self->sink != NULL);

  if (!advance (self, STREAM_START))
    return;
  self->hook_next = 0;
  resume (self);
}

/* The gateway ends a running stream itself (it is shutting down): the
 * client still gets its one terminal frame. */
void
symfonic_stream_abort (SymfonicStream *self,
                       const GError   *error)
{
  g_return_if_fail (SYMFONIC_IS_STREAM (self));
  g_return_if_fail (error != NULL);

  if (flows (self))
    stream_end (self, error);
}

/* The client went away, or the server lets go of a stream it did not
 * start: no more output, the upstream is told to stop, and the stages
 * settle. Not an error; nothing once the stream is over. */
void
symfonic_stream_cancel (SymfonicStream *self)
{
  g_return_if_fail (SYMFONIC_IS_STREAM (self));

  if (is_over (self))
    return;

  advance (self, STREAM_CANCEL);
  /* an admission answer still owed is dropped when it comes */
  self->admit_func = NULL;
  self->admit_data = NULL;
  self->sink = NULL;
  stop_flow (self);
  close_admitted_stages (self);
}

/**
 * symfonic_stream_mark_near_limit:
 * @self: a #SymfonicStream being admitted
 *
 * A metering stage that admits the stream with little room left under its
 * limit (its last tenth, say) calls this from its admission hook, before
 * it returns: the gateway's metrics count the admission as near the
 * limit instead of plainly admitted.
 */
void
symfonic_stream_mark_near_limit (SymfonicStream *self)
{
  g_return_if_fail (SYMFONIC_IS_STREAM (self));

  self->near_limit = TRUE;
}

/* What the stage at @i did, for a trace: its phases' boundaries in
 * telemetry ticks (0 where it did not run the phase). */
void
symfonic_stream_get_stage_timing (SymfonicStream      *self,
                                  guint                i,
                                  SymfonicStageTiming *timing)
{
  StageSlot *slot = &self->slots[i];

  timing->admits = slot->info.admits;
  timing->finishes = slot->info.finishes;
  timing->processes = slot->info.process != NULL;
  timing->phase = slot->info.phase;
  timing->admit_start = slot->admit_start;
  timing->admit_end = slot->admit_end;
  timing->events_first = slot->events_first;
  timing->events_last = slot->events_last;
  timing->events_busy = slot->events_busy;
  timing->events = slot->events;
  timing->finish_start = slot->finish_start;
  timing->finish_end = slot->finish_end;
}

guint
symfonic_stream_get_n_stages (SymfonicStream *self)
{
  return self->n_stages;
}

/* When the source started and its upstream ended (0: not yet), when the
 * first token came (0: none), and how many deltas the source pushed. */
void
symfonic_stream_get_times (SymfonicStream *self,
                           gint64         *source_start_us,
                           gint64         *upstream_end_us,
                           gint64         *first_token_us,
                           guint64        *n_deltas)
{
  *source_start_us = self->source_start_us;
  *upstream_end_us = self->upstream_end_us;
  *first_token_us = self->first_token_us;
  *n_deltas = self->n_deltas;
}

/* The W3C traceparent to send upstream (`00-TRACE-SPAN-FLAGS`), or NULL
 * for none: the stream's own, as the server set it before it started. */
void
symfonic_stream_set_traceparent (SymfonicStream *self,
                                 const char     *traceparent)
{
  if (traceparent == NULL || strlen (traceparent) >= sizeof self->traceparent)
    self->traceparent[0] = '\0';
  else
    g_strlcpy (self->traceparent, traceparent, sizeof self->traceparent);
}

const char *
symfonic_stream_get_traceparent (SymfonicStream *self)
{
  return self->traceparent[0] != '\0' ? self->traceparent : NULL;
}
