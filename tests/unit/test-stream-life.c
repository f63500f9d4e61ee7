/* test-stream-life.c: a stream's life and its admission, through the
 * executor's own interface
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The server asks a stream to admit a phase and hears the outcome at once
 * when every stage decides at once, or later, through its callback, when
 * one has to wait: the metering stages on a store in the process must
 * decide at once, and on a store that answers later must admit and refuse
 * as they do at once. A move the stream's table does not list is a
 * programming error, reported as one.
 */
#include "config.h"

#include <string.h>

#include "symfonic-budget-stage.h"
#include "symfonic-rate-limit-stage.h"
#include "symfonic-route-private.h"
#include "symfonic-stream-private.h"

#define SEC ((gint64) G_USEC_PER_SEC)

/* --- a source that produces nothing: the test ends the upstream --------- */

#define TEST_TYPE_IDLE_SOURCE (test_idle_source_get_type ())
G_DECLARE_FINAL_TYPE (TestIdleSource, test_idle_source, TEST, IDLE_SOURCE, GObject)

struct _TestIdleSource
{
  GObject parent_instance;
};

static void
test_idle_source_start (SymfonicSource *source,
                        SymfonicStream *stream,
                        GCancellable   *cancellable)
{
}

static void
test_idle_source_source_init (SymfonicSourceInterface *iface)
{
  iface->start = test_idle_source_start;
}

G_DEFINE_FINAL_TYPE_WITH_CODE (TestIdleSource, test_idle_source, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_SOURCE, test_idle_source_source_init))

static void
test_idle_source_class_init (TestIdleSourceClass *klass)
{
}

static void
test_idle_source_init (TestIdleSource *self)
{
}

/* --- a head-phase stage that answers on a later turn --------------------- */

/* The gate opens for `X-Gate: open`; it counts the streams it closes. */
#define TEST_TYPE_GATE_STAGE (test_gate_stage_get_type ())
G_DECLARE_FINAL_TYPE (TestGateStage, test_gate_stage, TEST, GATE_STAGE, GObject)

struct _TestGateStage
{
  GObject parent_instance;

  guint   closed;
};

static SymfonicAdmissionPhase
test_gate_stage_get_admission_phase (SymfonicStage *stage)
{
  return SYMFONIC_ADMISSION_PHASE_HEAD;
}

static gboolean
gate_decides (gpointer data)
{
  GTask *task = data;
  SymfonicStream *stream = g_task_get_task_data (task);
  const char *gate = symfonic_invocation_get_header (symfonic_stream_get_invocation (stream), "X-Gate");

  if (g_strcmp0 (gate, "open") == 0)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_new_error (task, SYMFONIC_ERROR, SYMFONIC_ERROR_UNAUTHORIZED, "The gate is closed");

  return G_SOURCE_REMOVE;
}

static void
test_gate_stage_admit_async (SymfonicStage       *stage,
                             SymfonicStream      *stream,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  GTask *task = g_task_new (stage, cancellable, callback, user_data);

  /* what it decided holds, whatever became of the stream meanwhile */
  g_task_set_check_cancellable (task, FALSE);
  g_task_set_task_data (task, g_object_ref (stream), g_object_unref);
  g_idle_add_full (G_PRIORITY_DEFAULT, gate_decides, task, g_object_unref);
}

static gboolean
test_gate_stage_admit_finish (SymfonicStage  *stage,
                              GAsyncResult   *result,
                              GError        **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
test_gate_stage_close (SymfonicStage  *stage,
                       SymfonicStream *stream)
{
  TEST_GATE_STAGE (stage)->closed++;
}

static void
test_gate_stage_stage_init (SymfonicStageInterface *iface)
{
  iface->get_admission_phase = test_gate_stage_get_admission_phase;
  iface->admit_async = test_gate_stage_admit_async;
  iface->admit_finish = test_gate_stage_admit_finish;
  iface->close = test_gate_stage_close;
}

G_DEFINE_FINAL_TYPE_WITH_CODE (TestGateStage, test_gate_stage, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_STAGE, test_gate_stage_stage_init))

static void
test_gate_stage_class_init (TestGateStageClass *klass)
{
}

static void
test_gate_stage_init (TestGateStage *self)
{
}

/* --- a stage whose hooks run on a context of their own ------------------- */

#define TEST_TYPE_ELSEWHERE_STAGE (test_elsewhere_stage_get_type ())
G_DECLARE_FINAL_TYPE (TestElsewhereStage, test_elsewhere_stage, TEST, ELSEWHERE_STAGE, GObject)

struct _TestElsewhereStage
{
  GObject parent_instance;
};

static gboolean
test_elsewhere_stage_process (SymfonicStage   *stage,
                              SymfonicStream  *stream,
                              SymfonicEvent   *event,
                              GError         **error)
{
  symfonic_stream_emit (stream, event);
  return TRUE;
}

static void
test_elsewhere_stage_stage_init (SymfonicStageInterface *iface)
{
  iface->process = test_elsewhere_stage_process;
}

G_DEFINE_FINAL_TYPE_WITH_CODE (TestElsewhereStage, test_elsewhere_stage, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_STAGE, test_elsewhere_stage_stage_init))

static void
test_elsewhere_stage_class_init (TestElsewhereStageClass *klass)
{
}

static void
test_elsewhere_stage_init (TestElsewhereStage *self)
{
}

/* --- a meter store that answers on a later turn -------------------------- */

/* As a store across the network: it cannot decide at once (it keeps the
 * interface's try_take and try_reserve), admits the first TEST_LATER_ADMITS
 * takes and reservations, and counts what it is asked. Its state changes
 * when it is asked, whatever becomes of the caller, as a remote store's
 * would. */
#define TEST_LATER_ADMITS 2
#define TEST_LATER_RETRY_US (3 * G_USEC_PER_SEC)

#define TEST_TYPE_LATER_STORE (test_later_store_get_type ())
G_DECLARE_FINAL_TYPE (TestLaterStore, test_later_store, TEST, LATER_STORE, GObject)

struct _TestLaterStore
{
  GObject parent_instance;

  guint   takes;
  guint   reserves;
  guint   settles;
};

static void test_later_store_meter_store_init (SymfonicMeterStoreInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (TestLaterStore, test_later_store, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_METER_STORE, test_later_store_meter_store_init))

static gboolean
answer_later (gpointer data)
{
  GTask *task = data;

  g_task_return_boolean (task, GPOINTER_TO_UINT (g_task_get_task_data (task)) <= TEST_LATER_ADMITS);
  return G_SOURCE_REMOVE;
}

/* Answers whether arrival @n is admitted, on a later turn. */
static void
answer (TestLaterStore      *self,
        guint                n,
        GCancellable        *cancellable,
        GAsyncReadyCallback  callback,
        gpointer             user_data)
{
  GTask *task = g_task_new (self, cancellable, callback, user_data);

  g_task_set_check_cancellable (task, FALSE);
  g_task_set_task_data (task, GUINT_TO_POINTER (n), NULL);
  g_idle_add_full (G_PRIORITY_DEFAULT, answer_later, task, g_object_unref);
}

static void
test_later_store_take_async (SymfonicMeterStore  *store,
                             const char          *key,
                             gint64               emission_interval_us,
                             gint64               burst_tolerance_us,
                             gint64               now_us,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  TestLaterStore *self = TEST_LATER_STORE (store);

  answer (self, ++self->takes, cancellable, callback, user_data);
}

static gboolean
test_later_store_take_finish (SymfonicMeterStore  *store,
                              GAsyncResult        *result,
                              gboolean            *allowed,
                              gint64              *retry_after_us,
                              GError             **error)
{
  *allowed = g_task_propagate_boolean (G_TASK (result), error);
  *retry_after_us = TEST_LATER_RETRY_US;
  return TRUE;
}

static void
test_later_store_reserve_async (SymfonicMeterStore        *store,
                                const SymfonicMeterScope  *scopes,
                                guint                      n_scopes,
                                guint64                    amount,
                                gint64                     now_us,
                                GCancellable              *cancellable,
                                GAsyncReadyCallback        callback,
                                gpointer                   user_data)
{
  TestLaterStore *self = TEST_LATER_STORE (store);

  answer (self, ++self->reserves, cancellable, callback, user_data);
}

static gboolean
test_later_store_reserve_finish (SymfonicMeterStore  *store,
                                 GAsyncResult        *result,
                                 gboolean            *reserved,
                                 guint64             *lease_id,
                                 gint64              *retry_after_us,
                                 guint64             *allowance,
                                 GError             **error)
{
  *reserved = g_task_propagate_boolean (G_TASK (result), error);
  *lease_id = GPOINTER_TO_UINT (g_task_get_task_data (G_TASK (result)));
  *retry_after_us = TEST_LATER_RETRY_US;
  *allowance = G_MAXUINT32;
  return TRUE;
}

static void
test_later_store_settle_async (SymfonicMeterStore        *store,
                               guint64                    lease_id,
                               const SymfonicMeterScope  *scopes,
                               guint                      n_scopes,
                               guint64                    actual,
                               gint64                     now_us,
                               GCancellable              *cancellable,
                               GAsyncReadyCallback        callback,
                               gpointer                   user_data)
{
  TestLaterStore *self = TEST_LATER_STORE (store);

  self->settles++;
  answer (self, 0, cancellable, callback, user_data);
}

static gboolean
test_later_store_settle_finish (SymfonicMeterStore  *store,
                                GAsyncResult        *result,
                                GError             **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
test_later_store_meter_store_init (SymfonicMeterStoreInterface *iface)
{
  iface->take_async = test_later_store_take_async;
  iface->take_finish = test_later_store_take_finish;
  iface->reserve_async = test_later_store_reserve_async;
  iface->reserve_finish = test_later_store_reserve_finish;
  iface->settle_async = test_later_store_settle_async;
  iface->settle_finish = test_later_store_settle_finish;
}

static void
test_later_store_class_init (TestLaterStoreClass *klass)
{
}

static void
test_later_store_init (TestLaterStore *self)
{
}

/* --- helpers --------------------------------------------------------------- */

static SymfonicRoute *
route_new (SymfonicStage *first,
           ...)
{
  g_autoptr(GObject) source = g_object_new (TEST_TYPE_IDLE_SOURCE, NULL);
  SymfonicRoute *route = symfonic_route_new ("r", "/r", SYMFONIC_ROUTE_KIND_TYPED, SYMFONIC_SOURCE (source));
  va_list args;

  va_start (args, first);
  for (SymfonicStage *stage = first; stage != NULL; stage = va_arg (args, SymfonicStage *))
    symfonic_route_add_stage (route, stage);
  va_end (args);

  return route;
}

static SymfonicStream *
stream_new (SymfonicRoute *route,
            const char    *gate)
{
  g_autoptr(SymfonicInvocation) invocation = symfonic_invocation_new ("why is the sky blue?");

  symfonic_invocation_set_scope (invocation, "acme", "alice", FALSE);
  if (gate != NULL)
    symfonic_invocation_set_header (invocation, "X-Gate", gate);

  return symfonic_stream_new (route, invocation);
}

static SymfonicStage *
metering_stage_new (GType               type,
                    SymfonicMeterStore *store)
{
  g_autoptr(GError) error = NULL;
  GObject *stage;

  if (type == SYMFONIC_TYPE_RATE_LIMIT_STAGE)
    stage = g_initable_new (type, NULL, &error, "rate", 1000.0, "burst", 1000, "store", store, NULL);
  else
    stage = g_initable_new (type, NULL, &error, "tokens-per-window", (guint64) 1000000, "reserve-tokens",
                            (guint64) 100, "store", store, NULL);
  g_assert_no_error (error);

  return SYMFONIC_STAGE (stage);
}

/* What an admission that waited told its callback. */
typedef struct
{
  guint   calls;
  GError *error;
} Outcome;

static void
outcome_clear (Outcome *outcome)
{
  g_clear_error (&outcome->error);
  outcome->calls = 0;
}

static void
decided (gpointer      data,
         const GError *error)
{
  Outcome *outcome = data;

  outcome->calls++;
  g_clear_error (&outcome->error);
  outcome->error = error != NULL ? g_error_copy (error) : NULL;
}

static void
wait_for (Outcome *outcome)
{
  while (outcome->calls == 0)
    g_main_context_iteration (NULL, TRUE);
}

static void
drain (void)
{
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

/* Runs the stage's context and the stream's until neither has anything
 * left to do: the hops go out and come back. */
static void
pump (GMainContext *elsewhere)
{
  gboolean busy = TRUE;

  while (busy)
    {
      busy = FALSE;
      while (g_main_context_iteration (elsewhere, FALSE))
        busy = TRUE;
      while (g_main_context_iteration (NULL, FALSE))
        busy = TRUE;
    }
}

/* Admits @phase of @stream through stages that answer later: the stream
 * waits, and its callback hears the outcome once. */
static void
admit_later (SymfonicStream         *stream,
             SymfonicAdmissionPhase  phase,
             Outcome                *outcome)
{
  g_autoptr(GError) error = NULL;

  outcome_clear (outcome);
  g_assert_cmpint (symfonic_stream_admit (stream, phase, decided, outcome, &error), ==, SYMFONIC_ADMIT_PENDING);
  g_assert_no_error (error);
  g_assert_cmpuint (outcome->calls, ==, 0);
  wait_for (outcome);
  drain ();
  g_assert_cmpuint (outcome->calls, ==, 1);
}

typedef struct
{
  guint  events;
  guint  ends;
  GError *error;
} Sink;

static SymfonicSinkResult
sink_event (gpointer       data,
            SymfonicEvent *event)
{
  ((Sink *) data)->events++;
  return SYMFONIC_SINK_TAKEN;
}

static void
sink_end (gpointer      data,
          const GError *error)
{
  Sink *sink = data;

  sink->ends++;
  sink->error = error != NULL ? g_error_copy (error) : NULL;
}

static const SymfonicStreamSink sink_funcs = { sink_event, sink_end };

/* --- the tests ------------------------------------------------------------- */

/* The metering stages on their store in the process decide in the call
 * that asks them: no callback, nothing left for a later turn of the loop,
 * and the budget's reservation is made. */
static void
test_memory_store_at_once (void)
{
  g_autoptr(SymfonicMeterStore) store = SYMFONIC_METER_STORE (symfonic_memory_store_new (0));
  g_autoptr(SymfonicStage) rate = metering_stage_new (SYMFONIC_TYPE_RATE_LIMIT_STAGE, NULL);
  g_autoptr(SymfonicStage) budget = metering_stage_new (SYMFONIC_TYPE_BUDGET_STAGE, store);
  g_autoptr(SymfonicRoute) route = route_new (rate, budget, NULL);
  g_autoptr(SymfonicStream) stream = stream_new (route, NULL);
  g_autoptr(GError) error = NULL;
  Outcome outcome = { 0, NULL };
  guint64 outstanding = 0;

  drain ();
  g_assert_cmpint (symfonic_stream_admit (stream, SYMFONIC_ADMISSION_PHASE_HEAD, decided, &outcome, &error), ==,
                   SYMFONIC_ADMIT_PASSED);
  g_assert_no_error (error);
  g_assert_cmpint (symfonic_stream_admit (stream, SYMFONIC_ADMISSION_PHASE_BODY, decided, &outcome, &error), ==,
                   SYMFONIC_ADMIT_PASSED);
  g_assert_no_error (error);
  g_assert_false (g_main_context_pending (NULL));
  g_assert_cmpuint (outcome.calls, ==, 0);
  g_assert_true (symfonic_memory_store_peek_budget (SYMFONIC_MEMORY_STORE (store), "t:acme", NULL,
                                                          &outstanding));
  g_assert_cmpuint (outstanding, ==, 100);

  /* let go before it started: the reservation goes back */
  symfonic_stream_cancel (stream);
  drain ();
  g_assert_true (symfonic_memory_store_peek_budget (SYMFONIC_MEMORY_STORE (store), "t:acme", NULL,
                                                          &outstanding));
  g_assert_cmpuint (outstanding, ==, 0);
}

/* The meter store decides at once when it can, and says when it cannot,
 * having changed nothing. */
static void
test_store_try (void)
{
  g_autoptr(SymfonicMeterStore) memory = SYMFONIC_METER_STORE (symfonic_memory_store_new (0));
  g_autoptr(TestLaterStore) later = g_object_new (TEST_TYPE_LATER_STORE, NULL);
  g_autoptr(GError) error = NULL;
  const SymfonicMeterScope budget = { "b", 100, SEC };
  const SymfonicMeterScope tiny = { "b", 1, SEC };
  gboolean allowed = FALSE;
  gint64 retry = -1;
  guint64 allowance = 0;
  guint64 lease_id = 0;

  for (guint i = 0; i < 2; i++)
    {
      g_assert_true (symfonic_meter_store_try_take (memory, "k", SEC, SEC, 0,
                                                    &allowed, &retry, &error));
      g_assert_no_error (error);
      g_assert_true (allowed);
      /* the room left, told below zero: a second's burst, then none */
      g_assert_cmpint (retry, ==, i == 0 ? -1 - SEC : -1);
    }
  g_assert_true (symfonic_meter_store_try_take (memory, "k", SEC, SEC, 0, &allowed,
                                                &retry, &error));
  g_assert_false (allowed);
  g_assert_cmpint (retry, ==, SEC);

  g_assert_true (symfonic_meter_store_try_reserve (memory, &budget, 1, 60, 0, &allowed, &lease_id, &retry,
                                                   &allowance, &error));
  g_assert_true (allowed);
  g_assert_cmpuint (lease_id, !=, 0);
  g_assert_cmpuint (allowance, ==, 100);
  g_assert_true (symfonic_meter_store_try_reserve (memory, &budget, 1, 60, 0, &allowed, &lease_id, &retry,
                                                   &allowance, &error));
  g_assert_false (allowed);
  g_assert_cmpuint (lease_id, ==, 0);
  g_assert_cmpuint (allowance, ==, 0);
  g_assert_cmpint (retry, ==, SYMFONIC_METER_IN_FLIGHT_RETRY_US);

  g_assert_false (symfonic_meter_store_try_take (SYMFONIC_METER_STORE (later), "k", SEC, 0, 0,
                                                 &allowed, &retry, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK);
  g_clear_error (&error);
  g_assert_false (symfonic_meter_store_try_reserve (SYMFONIC_METER_STORE (later), &tiny, 1, 1, 0,
                                                    &allowed, &lease_id, &retry, &allowance, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK);
  g_assert_cmpuint (later->takes + later->reserves + later->settles, ==, 0);
}

/* A head-phase stage and two metering stages that all answer later: each
 * phase waits and then admits, or refuses with what a store at once would
 * have said, and a phase refused asks nothing further. */
static void
test_later_store (void)
{
  g_autoptr(TestLaterStore) rate_store = g_object_new (TEST_TYPE_LATER_STORE, NULL);
  g_autoptr(TestLaterStore) budget_store = g_object_new (TEST_TYPE_LATER_STORE, NULL);
  g_autoptr(SymfonicStage) gate = g_object_new (TEST_TYPE_GATE_STAGE, NULL);
  g_autoptr(SymfonicStage) rate = metering_stage_new (SYMFONIC_TYPE_RATE_LIMIT_STAGE,
                                                      SYMFONIC_METER_STORE (rate_store));
  g_autoptr(SymfonicStage) budget = metering_stage_new (SYMFONIC_TYPE_BUDGET_STAGE,
                                                        SYMFONIC_METER_STORE (budget_store));
  g_autoptr(SymfonicRoute) route = route_new (gate, rate, budget, NULL);
  g_autoptr(GPtrArray) admitted = g_ptr_array_new_with_free_func (g_object_unref);
  Outcome outcome = { 0, NULL };

  /* the stores admit two each */
  for (guint i = 0; i < TEST_LATER_ADMITS; i++)
    {
      SymfonicStream *stream = stream_new (route, "open");

      g_ptr_array_add (admitted, stream);
      admit_later (stream, SYMFONIC_ADMISSION_PHASE_HEAD, &outcome);
      g_assert_no_error (outcome.error);
      admit_later (stream, SYMFONIC_ADMISSION_PHASE_BODY, &outcome);
      g_assert_no_error (outcome.error);
      g_assert_false (symfonic_stream_is_over (stream));
      g_assert_nonnull (symfonic_stream_get_stage_data (stream, budget));
    }
  g_assert_cmpuint (rate_store->takes, ==, 2);
  g_assert_cmpuint (budget_store->reserves, ==, 2);

  /* the rate limit refuses the third, after the gate admitted it: the
   * budget is not asked, and the gate is closed */
  {
    g_autoptr(SymfonicStream) stream = stream_new (route, "open");

    admit_later (stream, SYMFONIC_ADMISSION_PHASE_HEAD, &outcome);
    g_assert_no_error (outcome.error);
    admit_later (stream, SYMFONIC_ADMISSION_PHASE_BODY, &outcome);
    g_assert_error (outcome.error, SYMFONIC_ERROR, SYMFONIC_ERROR_RATE_LIMITED);
    g_assert_cmpstr (symfonic_stream_get_response_header (stream, "Retry-After"), ==, "3");
    g_assert_true (symfonic_stream_is_over (stream));
    g_assert_cmpuint (TEST_GATE_STAGE (gate)->closed, ==, 1);
    g_assert_cmpuint (rate_store->takes, ==, 3);
    g_assert_cmpuint (budget_store->reserves, ==, 2);
  }

  /* a closed gate refuses on the head: nothing of the body phase runs */
  {
    g_autoptr(SymfonicStream) stream = stream_new (route, "closed");

    admit_later (stream, SYMFONIC_ADMISSION_PHASE_HEAD, &outcome);
    g_assert_error (outcome.error, SYMFONIC_ERROR, SYMFONIC_ERROR_UNAUTHORIZED);
    g_assert_true (symfonic_stream_is_over (stream));
    g_assert_cmpuint (rate_store->takes, ==, 3);
    g_assert_cmpuint (TEST_GATE_STAGE (gate)->closed, ==, 1);
  }

  /* the budget refuses once its store does, with the store's advice */
  {
    g_autoptr(TestLaterStore) spent = g_object_new (TEST_TYPE_LATER_STORE, NULL);
    g_autoptr(SymfonicStage) spent_budget = metering_stage_new (SYMFONIC_TYPE_BUDGET_STAGE,
                                                                SYMFONIC_METER_STORE (spent));
    g_autoptr(SymfonicRoute) budget_route = route_new (spent_budget, NULL);

    spent->reserves = TEST_LATER_ADMITS;
    {
      g_autoptr(SymfonicStream) stream = stream_new (budget_route, NULL);
      g_autoptr(GError) error = NULL;

      g_assert_cmpint (symfonic_stream_admit (stream, SYMFONIC_ADMISSION_PHASE_HEAD, decided, &outcome, &error),
                       ==, SYMFONIC_ADMIT_PASSED);
      admit_later (stream, SYMFONIC_ADMISSION_PHASE_BODY, &outcome);
      g_assert_error (outcome.error, SYMFONIC_ERROR, SYMFONIC_ERROR_BUDGET_EXCEEDED);
      g_assert_cmpstr (symfonic_stream_get_response_header (stream, "Retry-After"), ==, "3");
    }
    drain ();
    g_assert_cmpuint (spent->settles, ==, 0);
  }

  /* the admitted streams end: each budget reservation is settled once */
  g_ptr_array_set_size (admitted, 0);
  drain ();
  g_assert_cmpuint (budget_store->settles, ==, 2);
  g_assert_cmpuint (TEST_GATE_STAGE (gate)->closed, ==, 3);
  outcome_clear (&outcome);
}

/* The client leaves while a stage decides: nobody hears the answer, and a
 * stage that admitted all the same is closed, so that the reservation the
 * store made goes back. */
static void
test_cancel_while_waiting (void)
{
  g_autoptr(TestLaterStore) store = g_object_new (TEST_TYPE_LATER_STORE, NULL);
  g_autoptr(SymfonicStage) gate = g_object_new (TEST_TYPE_GATE_STAGE, NULL);
  g_autoptr(SymfonicStage) budget = metering_stage_new (SYMFONIC_TYPE_BUDGET_STAGE, SYMFONIC_METER_STORE (store));
  g_autoptr(SymfonicRoute) route = route_new (gate, budget, NULL);
  g_autoptr(GError) error = NULL;
  Outcome outcome = { 0, NULL };

  /* in the body phase: the budget's store grants after the cancel */
  {
    g_autoptr(SymfonicStream) stream = stream_new (route, "open");

    admit_later (stream, SYMFONIC_ADMISSION_PHASE_HEAD, &outcome);
    g_assert_no_error (outcome.error);
    outcome_clear (&outcome);
    g_assert_cmpint (symfonic_stream_admit (stream, SYMFONIC_ADMISSION_PHASE_BODY, decided, &outcome, &error), ==,
                     SYMFONIC_ADMIT_PENDING);
    symfonic_stream_cancel (stream);
    g_assert_true (symfonic_stream_is_over (stream));
    /* the gate, which had admitted, is closed at once */
    g_assert_cmpuint (TEST_GATE_STAGE (gate)->closed, ==, 1);
  }
  drain ();
  g_assert_cmpuint (outcome.calls, ==, 0);
  g_assert_cmpuint (store->reserves, ==, 1);
  g_assert_cmpuint (store->settles, ==, 1);

  /* in the head phase: the gate admits after the cancel, and is closed */
  {
    g_autoptr(SymfonicStream) stream = stream_new (route, "open");

    g_assert_cmpint (symfonic_stream_admit (stream, SYMFONIC_ADMISSION_PHASE_HEAD, decided, &outcome, &error), ==,
                     SYMFONIC_ADMIT_PENDING);
    symfonic_stream_cancel (stream);
  }
  drain ();
  g_assert_cmpuint (outcome.calls, ==, 0);
  g_assert_cmpuint (TEST_GATE_STAGE (gate)->closed, ==, 2);
  g_assert_cmpuint (store->reserves, ==, 1);
}

/* Moves the table does not list are reported, and change nothing. */
static void
test_invalid_transitions (void)
{
  g_autoptr(SymfonicRoute) route = route_new (NULL);
  g_autoptr(SymfonicStream) stream = stream_new (route, NULL);
  g_autoptr(SymfonicEvent) event = symfonic_event_new_text_delta ("x");
  g_autoptr(GError) error = NULL;
  Outcome outcome = { 0, NULL };
  Sink sink = { 0, 0, NULL };

  /* the body phase before the head phase */
  g_test_expect_message ("Symfonic", G_LOG_LEVEL_CRITICAL, "A stream in state new cannot admit in the body phase");
  g_assert_cmpint (symfonic_stream_admit (stream, SYMFONIC_ADMISSION_PHASE_BODY, decided, &outcome, &error), ==,
                   SYMFONIC_ADMIT_REFUSED);
  g_test_assert_expected_messages ();
  g_assert_no_error (error);

  /* a source driven on its own, on a stream never started: what it
   * pushes goes nowhere, and its end is no end of the stream */
  g_assert_cmpint (symfonic_stream_push (stream, event), ==, SYMFONIC_FLOW_OVER);
  symfonic_stream_push_end (stream, NULL);
  g_assert_false (symfonic_stream_is_over (stream));

  g_assert_cmpint (symfonic_stream_admit (stream, SYMFONIC_ADMISSION_PHASE_HEAD, decided, &outcome, &error), ==,
                   SYMFONIC_ADMIT_PASSED);

  /* the head phase twice */
  g_test_expect_message ("Symfonic", G_LOG_LEVEL_CRITICAL,
                         "A stream in state head-admitted cannot admit in the head phase");
  g_assert_cmpint (symfonic_stream_admit (stream, SYMFONIC_ADMISSION_PHASE_HEAD, decided, &outcome, &error), ==,
                   SYMFONIC_ADMIT_REFUSED);
  g_test_assert_expected_messages ();

  /* starting before the body phase admitted it */
  symfonic_stream_set_sink (stream, &sink_funcs, &sink);
  g_test_expect_message ("Symfonic", G_LOG_LEVEL_CRITICAL,
                         "A stream in state head-admitted got the event start, which is not allowed there");
  symfonic_stream_start (stream);
  g_test_assert_expected_messages ();
  g_assert_cmpuint (sink.ends, ==, 0);

  /* the stream runs, and its upstream ends: it is over, once */
  g_assert_cmpint (symfonic_stream_admit (stream, SYMFONIC_ADMISSION_PHASE_BODY, decided, &outcome, &error), ==,
                   SYMFONIC_ADMIT_PASSED);
  symfonic_stream_start (stream);
  g_assert_cmpint (symfonic_stream_push (stream, event), ==, SYMFONIC_FLOW_OK);
  symfonic_stream_push_end (stream, NULL);
  g_assert_true (symfonic_stream_is_over (stream));
  g_assert_cmpuint (sink.events, ==, 1);
  g_assert_cmpuint (sink.ends, ==, 1);
  g_assert_no_error (sink.error);

  /* what a source does once it heard the stream is over is no error */
  g_assert_cmpint (symfonic_stream_push (stream, event), ==, SYMFONIC_FLOW_OVER);
  symfonic_stream_push_end (stream, NULL);
  symfonic_stream_cancel (stream);
  g_assert_cmpuint (sink.ends, ==, 1);

  /* starting what is over */
  g_test_expect_message ("Symfonic", G_LOG_LEVEL_CRITICAL,
                         "A stream in state over got the event start, which is not allowed there");
  symfonic_stream_start (stream);
  g_test_assert_expected_messages ();
  g_assert_cmpuint (sink.ends, ==, 1);
  outcome_clear (&outcome);
}

/* An upstream that ends twice, while a batch is on a stage's thread: the
 * second end, and a push after the first, are reported; the stream still
 * finishes once with what the source sent before its end. */
static void
test_upstream_ends_twice (void)
{
  g_autoptr(GMainContext) elsewhere = g_main_context_new ();
  g_autoptr(SymfonicStage) stage = NULL;
  g_autoptr(SymfonicRoute) route = NULL;
  g_autoptr(SymfonicStream) stream = NULL;
  g_autoptr(SymfonicEvent) event = symfonic_event_new_text_delta ("x");
  g_autoptr(GError) error = NULL;
  Outcome outcome = { 0, NULL };
  Sink sink = { 0, 0, NULL };

  symfonic_stage_type_set_main_context (TEST_TYPE_ELSEWHERE_STAGE, elsewhere);
  stage = g_object_new (TEST_TYPE_ELSEWHERE_STAGE, NULL);
  route = route_new (stage, NULL);
  stream = stream_new (route, NULL);
  g_assert_cmpint (symfonic_stream_admit (stream, SYMFONIC_ADMISSION_PHASE_HEAD, decided, &outcome, &error), ==,
                   SYMFONIC_ADMIT_PASSED);
  /* a stage on a context of its own answers later, even when it could at
   * once */
  g_assert_cmpint (symfonic_stream_admit (stream, SYMFONIC_ADMISSION_PHASE_BODY, decided, &outcome, &error), ==,
                   SYMFONIC_ADMIT_PENDING);
  pump (elsewhere);
  g_assert_cmpuint (outcome.calls, ==, 1);
  g_assert_no_error (outcome.error);
  symfonic_stream_set_sink (stream, &sink_funcs, &sink);
  symfonic_stream_start (stream);
  /* its begin hook too */
  pump (elsewhere);

  /* the event goes to the stage's context, which nobody runs yet */
  g_assert_cmpint (symfonic_stream_push (stream, event), ==, SYMFONIC_FLOW_OK);
  symfonic_stream_push_end (stream, NULL);
  g_test_expect_message ("Symfonic", G_LOG_LEVEL_CRITICAL,
                         "A stream in state ending got the event upstream-end, which is not allowed there");
  symfonic_stream_push_end (stream, NULL);
  g_test_assert_expected_messages ();
  g_test_expect_message ("Symfonic", G_LOG_LEVEL_CRITICAL, "*assertion*upstream_ended*failed*");
  g_assert_cmpint (symfonic_stream_push (stream, event), ==, SYMFONIC_FLOW_OVER);
  g_test_assert_expected_messages ();
  g_assert_false (symfonic_stream_is_over (stream));

  /* the stage answers: the stream finishes with the one event */
  pump (elsewhere);
  g_assert_true (symfonic_stream_is_over (stream));
  g_assert_cmpuint (sink.events, ==, 1);
  g_assert_cmpuint (sink.ends, ==, 1);
  g_assert_no_error (sink.error);

  /* the stage's close hook runs on its context too */
  g_clear_object (&stream);
  pump (elsewhere);
  symfonic_stage_type_set_main_context (TEST_TYPE_ELSEWHERE_STAGE, NULL);
  outcome_clear (&outcome);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/stream-life/memory-store-at-once", test_memory_store_at_once);
  g_test_add_func ("/stream-life/store-try", test_store_try);
  g_test_add_func ("/stream-life/later-store", test_later_store);
  g_test_add_func ("/stream-life/cancel-while-waiting", test_cancel_while_waiting);
  g_test_add_func ("/stream-life/invalid-transitions", test_invalid_transitions);
  g_test_add_func ("/stream-life/upstream-ends-twice", test_upstream_ends_twice);

  return g_test_run ();
}
