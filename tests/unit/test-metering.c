/* test-metering.c: the metering plugin's store and stages
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The plugin's sources are compiled into this test, so it reaches the
 * store's test clock without exporting it from the module. Nothing here
 * loads the metering module itself, which would register the same types
 * twice.
 */
#include "config.h"

#include <string.h>

#include <symfonic.h>

#include "symfonic-budget-stage.h"
#include "symfonic-meter.h"
#include "symfonic-rate-limit-stage.h"

/* The stages' notices: they log structured lines, which GLib's expected
 * messages do not see. */
static char *notices;
static GMutex notices_lock;

static GLogWriterOutput
keep_notice (GLogLevelFlags   level,
             const GLogField *fields,
             gsize            n_fields,
             gpointer         user_data)
{
  if (level & G_LOG_LEVEL_MESSAGE)
    for (gsize i = 0; i < n_fields; i++)
      if (g_str_equal (fields[i].key, "MESSAGE"))
        {
          g_mutex_lock (&notices_lock);
          g_free (notices);
          notices = g_strdup (fields[i].value);
          g_mutex_unlock (&notices_lock);
        }

  return g_log_writer_default (level, fields, n_fields, user_data);
}

#define SEC ((gint64) G_USEC_PER_SEC)
#define MS (SEC / 1000)

/* --- a clock the tests step by hand ------------------------------------ */

static gint64 fake_now;

static gint64
fake_clock (gpointer user_data)
{
  return fake_now;
}

static void
use_fake_clock (SymfonicMeterStore *store,
                gint64              now)
{
  fake_now = now;
  symfonic_memory_store_set_clock (SYMFONIC_MEMORY_STORE (store), fake_clock, NULL);
}

/* --- a source that never produces: the stages are driven by hand ------- */

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

static SymfonicRoute *
route_new (SymfonicStage *stage)
{
  g_autoptr(GObject) source = g_object_new (TEST_TYPE_IDLE_SOURCE, NULL);
  SymfonicRoute *route = symfonic_route_new ("r", "/r", SYMFONIC_ROUTE_KIND_TYPED, SYMFONIC_SOURCE (source));

  symfonic_route_add_stage (route, stage);

  return route;
}

/* @tenant NULL: no auth stage ran */
static SymfonicStream *
stream_new (SymfonicRoute *route,
            const char    *query,
            const char    *tenant,
            const char    *principal)
{
  g_autoptr(SymfonicInvocation) invocation = symfonic_invocation_new (query);

  if (tenant != NULL)
    symfonic_invocation_set_scope (invocation, tenant, principal, FALSE);

  return symfonic_stream_new (route, invocation);
}

/* Runs whatever the stores queued (their answers arrive from an idle). */
static void
drain (GMainContext *context)
{
  while (g_main_context_iteration (context, FALSE))
    ;
}

/* --- the store, synchronously ------------------------------------------- */

static void
keep (GObject      *object,
      GAsyncResult *result,
      gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

static GAsyncResult *
wait_result (GAsyncResult **slot)
{
  GMainContext *context = g_main_context_get_thread_default ();

  while (*slot == NULL)
    g_main_context_iteration (context, TRUE);

  return *slot;
}

/* Returns the retry-after, 0 when allowed. */
static gint64
take (SymfonicMeterStore *store,
      const char         *key,
      gint64              interval,
      gint64              tolerance)
{
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  gboolean allowed = FALSE;
  gint64 retry = -1;

  symfonic_meter_store_take_async (store, key, interval, tolerance, symfonic_meter_store_get_time (store),
                                   NULL, keep, &result);
  symfonic_meter_store_take_finish (store, wait_result (&result), &allowed, &retry, &error);
  g_assert_no_error (error);
  /* an admission tells the room left below zero, a refusal the wait */
  g_assert_true (allowed == (retry < 0));

  return MAX (retry, 0);
}

/* The leases reserve() was granted and settle() has not settled yet: the
 * tests speak of reservations by key and amount, as a stage knows its own. */
typedef struct
{
  char    *key;
  guint64  amount;
  guint64  limit;
  gint64   window;
  guint64  lease_id;
} Held;

static GPtrArray *held_leases;

static void
held_free (gpointer data)
{
  Held *held = data;

  g_free (held->key);
  g_free (held);
}

static GPtrArray *
get_held (void)
{
  if (held_leases == NULL)
    held_leases = g_ptr_array_new_with_free_func (held_free);

  return held_leases;
}

static gint64
reserve (SymfonicMeterStore *store,
         const char         *key,
         guint64             amount,
         guint64             limit,
         gint64              window)
{
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  SymfonicMeterScope scope = { key, limit, window };
  gboolean reserved = FALSE;
  guint64 lease_id = G_MAXUINT64;
  gint64 retry = -1;

  symfonic_meter_store_reserve_async (store, &scope, 1, amount, symfonic_meter_store_get_time (store),
                                      NULL, keep, &result);
  symfonic_meter_store_reserve_finish (store, wait_result (&result), &reserved, &lease_id, &retry, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (reserved == (retry == 0));
  g_assert_true (reserved == (lease_id != 0));
  g_assert_cmpint (retry, >=, 0);

  if (reserved)
    {
      Held *held = g_new0 (Held, 1);

      held->key = g_strdup (key);
      held->amount = amount;
      held->limit = limit;
      held->window = window;
      held->lease_id = lease_id;
      g_ptr_array_add (get_held (), held);
    }

  return retry;
}

/* Settles the oldest lease reserve() got for @reserved on @key; one that
 * was never granted is settled by an id no store granted. */
static gboolean
settle (SymfonicMeterStore  *store,
        const char          *key,
        guint64              reserved,
        guint64              actual,
        GError             **error)
{
  g_autoptr(GAsyncResult) result = NULL;
  GPtrArray *held = get_held ();
  SymfonicMeterScope scope = { key, 1, SEC };
  guint64 lease_id = G_MAXUINT64;

  for (guint i = 0; i < held->len; i++)
    {
      Held *h = g_ptr_array_index (held, i);

      if (g_str_equal (h->key, key) && h->amount == reserved)
        {
          lease_id = h->lease_id;
          scope.limit = h->limit;
          scope.window_us = h->window;
          g_ptr_array_remove_index (held, i);
          break;
        }
    }

  symfonic_meter_store_settle_async (store, lease_id, &scope, 1, actual, symfonic_meter_store_get_time (store),
                                     NULL, keep, &result);
  return symfonic_meter_store_settle_finish (store, wait_result (&result), error);
}

static void
assert_budget (SymfonicMeterStore *store,
               const char         *key,
               guint64             charged,
               guint64             outstanding)
{
  guint64 c = G_MAXUINT64, o = G_MAXUINT64;

  g_assert_true (symfonic_memory_store_peek_budget (SYMFONIC_MEMORY_STORE (store), key, &c, &o));
  g_assert_cmpuint (c, ==, charged);
  g_assert_cmpuint (o, ==, outstanding);
}

/* --- Retry-After --------------------------------------------------------- */

static void
test_retry_after_rounding (void)
{
  static const struct { gint64 us; guint64 seconds; } cases[] = {
    { 1, 1 },
    { 200 * MS, 1 },
    { SEC - 1, 1 },
    { SEC, 1 },
    { SEC + 1, 2 },
    { 1010 * MS, 2 },
    { 2 * SEC, 2 },
    { 2 * SEC + 1, 3 },
    { 3600 * SEC, 3600 },
    { 3599 * SEC + 999999, 3600 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_test_message ("%" G_GINT64_FORMAT " us", cases[i].us);
      g_assert_cmpuint (symfonic_meter_retry_after_seconds (cases[i].us), ==, cases[i].seconds);
    }
}

/* --- GCRA ---------------------------------------------------------------- */

/* rate 5/s, burst 5: T = 200 ms, τ = 800 ms */
#define T_5 (200 * MS)
#define TAU_5 (4 * T_5)

static void
test_gcra_burst_then_rate (void)
{
  g_autoptr(SymfonicMeterStore) store = SYMFONIC_METER_STORE (symfonic_memory_store_new (0));

  use_fake_clock (store, 1000 * SEC);

  /* a quiet key admits the burst at once, then nothing */
  for (guint i = 0; i < 5; i++)
    g_assert_cmpint (take (store, "k", T_5, TAU_5), ==, 0);
  g_assert_cmpint (take (store, "k", T_5, TAU_5), ==, T_5);
  /* a refusal does not consume anything */
  g_assert_cmpint (take (store, "k", T_5, TAU_5), ==, T_5);

  /* one emission interval later, exactly one more */
  fake_now += T_5 - 1;
  g_assert_cmpint (take (store, "k", T_5, TAU_5), ==, 1);
  fake_now += 1;
  g_assert_cmpint (take (store, "k", T_5, TAU_5), ==, 0);
  g_assert_cmpint (take (store, "k", T_5, TAU_5), ==, T_5);

  /* halfway through an interval, the wait is the rest of it */
  fake_now += T_5 / 2;
  g_assert_cmpint (take (store, "k", T_5, TAU_5), ==, T_5 / 2);

  /* after a quiet spell the whole burst is back, and no more than that */
  fake_now += 60 * SEC;
  for (guint i = 0; i < 5; i++)
    g_assert_cmpint (take (store, "k", T_5, TAU_5), ==, 0);
  g_assert_cmpint (take (store, "k", T_5, TAU_5), >, 0);

  /* burst 1 (τ = 0): strictly one per interval */
  for (guint i = 0; i < 3; i++)
    {
      g_assert_cmpint (take (store, "strict", SEC, 0), ==, 0);
      g_assert_cmpint (take (store, "strict", SEC, 0), ==, SEC);
      fake_now += SEC;
    }
}

/* A client offering far more than the rate, for ten seconds, gets exactly
 * burst + rate × time; and waiting the advised time always works. */
static void
test_gcra_long_run (void)
{
  g_autoptr(SymfonicMeterStore) store = SYMFONIC_METER_STORE (symfonic_memory_store_new (0));
  guint admitted = 0;
  gint64 start = 5 * SEC;

  use_fake_clock (store, start);
  for (fake_now = start; fake_now < start + 10 * SEC; fake_now += MS)
    {
      if (take (store, "k", T_5, TAU_5) == 0)
        admitted++;
    }
  /* 5 at t = 0, then one every 200 ms from t = 200 ms to 9.8 s */
  g_assert_cmpuint (admitted, ==, 5 + 49);

  fake_now += 30 * SEC;
  for (guint i = 0; i < 100; i++)
    {
      gint64 retry = take (store, "obedient", T_5, TAU_5);

      if (retry > 0)
        {
          fake_now += retry - 1;
          g_assert_cmpint (take (store, "obedient", T_5, TAU_5), ==, 1);
          fake_now += 1;
          g_assert_cmpint (take (store, "obedient", T_5, TAU_5), ==, 0);
        }
    }
}

static void
test_gcra_keys_independent (void)
{
  g_autoptr(SymfonicMeterStore) store = SYMFONIC_METER_STORE (symfonic_memory_store_new (0));

  use_fake_clock (store, SEC);
  g_assert_cmpint (take (store, "a", SEC, 0), ==, 0);
  g_assert_cmpint (take (store, "a", SEC, 0), >, 0);
  g_assert_cmpint (take (store, "b", SEC, 0), ==, 0);
  g_assert_cmpint (take (store, "b", SEC, 0), >, 0);
}

/* Spent cells and budgets are forgotten, so the tables follow the active
 * keys instead of every key ever seen. */
static void
test_store_sweeps (void)
{
  g_autoptr(SymfonicMeterStore) store = SYMFONIC_METER_STORE (symfonic_memory_store_new (0));
  SymfonicMemoryStore *memory = SYMFONIC_MEMORY_STORE (store);

  use_fake_clock (store, SEC);
  for (guint i = 0; i < 3000; i++)
    {
      g_autofree char *key = g_strdup_printf ("k%u", i);

      g_assert_cmpint (take (store, key, MS, 0), ==, 0);
      g_assert_cmpint (reserve (store, key, 1, 10, SEC), ==, 0);
      g_assert_true (settle (store, key, 1, 1, NULL));
    }
  g_assert_cmpuint (symfonic_memory_store_get_n_keys (memory), >=, 2 * SYMFONIC_MEMORY_STORE_MIN_SWEEP);

  /* everything is spent two seconds later; new keys trigger the sweeps */
  fake_now += 2 * SEC;
  for (guint i = 0; i < 3000; i++)
    {
      g_autofree char *key = g_strdup_printf ("n%u", i);

      g_assert_cmpint (take (store, key, MS, 0), ==, 0);
      g_assert_cmpint (reserve (store, key, 1, 10, SEC), ==, 0);
    }
  g_assert_cmpuint (symfonic_memory_store_get_n_keys (memory), <=, 2 * 3000);

  /* a budget with a reservation in flight is never swept */
  fake_now += 10 * SEC;
  for (guint i = 0; i < 3000; i++)
    {
      g_autofree char *key = g_strdup_printf ("m%u", i);

      g_assert_cmpint (reserve (store, key, 1, 10, SEC), ==, 0);
    }
  for (guint i = 0; i < 3000; i++)
    {
      g_autofree char *key = g_strdup_printf ("n%u", i);

      g_assert_true (settle (store, key, 1, 1, NULL));
    }
}

/* --- budget arithmetic --------------------------------------------------- */

static void
test_budget_reserve_settle (void)
{
  g_autoptr(SymfonicMeterStore) store = SYMFONIC_METER_STORE (symfonic_memory_store_new (0));
  g_autoptr(GError) error = NULL;
  const gint64 window = 60 * SEC;

  use_fake_clock (store, 7 * SEC);

  g_assert_cmpint (reserve (store, "t", 300, 1000, window), ==, 0);
  g_assert_cmpint (reserve (store, "t", 300, 1000, window), ==, 0);
  g_assert_cmpint (reserve (store, "t", 300, 1000, window), ==, 0);
  assert_budget (store, "t", 0, 900);
  /* only reservations in flight are in the way: they may end any time */
  g_assert_cmpint (reserve (store, "t", 300, 1000, window), ==, SYMFONIC_METER_IN_FLIGHT_RETRY_US);
  assert_budget (store, "t", 0, 900);

  /* settling releases the difference, to the token */
  g_assert_true (settle (store, "t", 300, 100, &error));
  g_assert_no_error (error);
  assert_budget (store, "t", 100, 600);
  g_assert_cmpint (reserve (store, "t", 300, 1000, window), ==, 0);
  assert_budget (store, "t", 100, 900);
  /* 100 + 900 + 1 > 1000 */
  g_assert_cmpint (reserve (store, "t", 1, 1000, window), >, 0);

  /* nothing used: everything comes back */
  g_assert_true (settle (store, "t", 300, 0, &error));
  assert_budget (store, "t", 100, 600);

  /* used in full: the window is spent, and only the next one helps */
  fake_now += 10 * SEC;
  g_assert_true (settle (store, "t", 300, 300, &error));
  g_assert_true (settle (store, "t", 300, 300, &error));
  assert_budget (store, "t", 700, 0);
  g_assert_cmpint (reserve (store, "t", 300, 1000, window), ==, 0);
  g_assert_true (settle (store, "t", 300, 300, &error));
  assert_budget (store, "t", 1000, 0);
  g_assert_cmpint (reserve (store, "t", 1, 1000, window), ==, 50 * SEC);

  /* other tenants are not affected */
  g_assert_cmpint (reserve (store, "u", 1000, 1000, window), ==, 0);

  /* a settlement nobody reserved is an error, and changes nothing */
  g_assert_false (settle (store, "ghost", 10, 10, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_false (settle (store, "u", 1001, 10, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  assert_budget (store, "u", 0, 1000);
}

static void
test_budget_window_rollover (void)
{
  g_autoptr(SymfonicMeterStore) store = SYMFONIC_METER_STORE (symfonic_memory_store_new (0));
  g_autoptr(GError) error = NULL;
  const gint64 window = 60 * SEC;
  gint64 opened;

  use_fake_clock (store, 100 * SEC);
  opened = fake_now;

  g_assert_cmpint (reserve (store, "t", 400, 1000, window), ==, 0);
  g_assert_true (settle (store, "t", 400, 400, &error));
  g_assert_cmpint (reserve (store, "t", 600, 1000, window), ==, 0);
  g_assert_true (settle (store, "t", 600, 600, &error));

  /* the advice is the time left in the window, which opened at the first
   * reservation */
  fake_now = opened + 20 * SEC + 250 * MS;
  g_assert_cmpint (reserve (store, "t", 1, 1000, window), ==, 39 * SEC + 750 * MS);
  fake_now = opened + window - 1;
  g_assert_cmpint (reserve (store, "t", 1, 1000, window), ==, 1);
  fake_now = opened + window;
  g_assert_cmpint (reserve (store, "t", 1000, 1000, window), ==, 0);
  assert_budget (store, "t", 0, 1000);

  /* a reservation in flight across the boundary is charged to the window
   * it settles in, and held against every window until then */
  fake_now = opened + 2 * window + 5 * SEC;
  g_assert_cmpint (reserve (store, "t", 1, 1000, window), ==, SYMFONIC_METER_IN_FLIGHT_RETRY_US);
  g_assert_true (settle (store, "t", 1000, 10, &error));
  assert_budget (store, "t", 10, 0);

  /* an overrun spends the window, never the next: 1500 in a 1000 window
   * charges 1000, and the next window opens with all of it */
  fake_now = opened + 10 * window;
  g_assert_cmpint (reserve (store, "t", 1000, 1000, window), ==, 0);
  g_assert_true (settle (store, "t", 1000, 1500, &error));
  assert_budget (store, "t", 1000, 0);
  g_assert_cmpint (reserve (store, "t", 1, 1000, window), ==, window);
  fake_now += window;
  g_assert_cmpint (reserve (store, "t", 1000, 1000, window), ==, 0);
  assert_budget (store, "t", 0, 1000);
  g_assert_true (settle (store, "t", 1000, 0, &error));

  /* however much is claimed, a refusal waits for this window's rest at
   * most */
  fake_now += 5 * SEC;
  g_assert_cmpint (reserve (store, "t", 500, 1000, window), ==, 0);
  g_assert_true (settle (store, "t", 500, G_MAXUINT64, &error));
  assert_budget (store, "t", 1000, 0);
  g_assert_cmpint (reserve (store, "t", 1, 1000, window), ==, window - 5 * SEC);
  fake_now += window - 5 * SEC;
  g_assert_cmpint (reserve (store, "t", 500, 1000, window), ==, 0);
  assert_budget (store, "t", 0, 500);
}

/* --- concurrency ---------------------------------------------------------- */

#define N_THREADS 100
#define N_FIT 37
#define RESERVE 100

typedef struct
{
  SymfonicStage *stage;
  SymfonicRoute *route;
  gint           ready;
  gint           go;
  guint64        used;
  GMutex         mutex;
  GPtrArray     *held;
} Race;

static gpointer
race_budget (gpointer data)
{
  Race *race = data;
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(SymfonicStream) stream = stream_new (race->route, "race", "acme", NULL);
  g_autoptr(GError) error = NULL;
  gboolean admitted;

  g_main_context_push_thread_default (context);
  g_atomic_int_inc (&race->ready);
  while (!g_atomic_int_get (&race->go))
    g_thread_yield ();

  admitted = symfonic_stage_admit (race->stage, stream, &error);
  if (admitted)
    {
      g_assert_no_error (error);
      g_assert_nonnull (symfonic_stream_get_stage_data (stream, race->stage));
      /* then the stream runs and uses a little: the close hook settles */
      g_assert_true (symfonic_stage_begin (race->stage, stream, NULL));
      g_assert_true (symfonic_stream_add_usage (stream, 0, race->used, NULL));
      symfonic_stage_close (race->stage, stream);
    }
  else
    {
      g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BUDGET_EXCEEDED);
    }
  drain (context);
  g_main_context_pop_thread_default (context);

  return GINT_TO_POINTER (admitted);
}

static guint
run_race (Race        *race,
          GThreadFunc  func)
{
  GThread *threads[N_THREADS];
  guint admitted = 0;

  race->ready = 0;
  race->go = 0;
  for (guint i = 0; i < N_THREADS; i++)
    threads[i] = g_thread_new ("race", func, race);
  while (g_atomic_int_get (&race->ready) < N_THREADS)
    g_thread_yield ();
  g_atomic_int_set (&race->go, 1);
  for (guint i = 0; i < N_THREADS; i++)
    admitted += GPOINTER_TO_INT (g_thread_join (threads[i]));

  return admitted;
}

/* A hundred threads ask at once for a budget that fits exactly N_FIT
 * reservations; nothing settles before everyone asked (the first round
 * holds its reservations), so exactly N_FIT get in. */
static gpointer
race_hold (gpointer data)
{
  Race *race = data;
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(SymfonicStream) stream = stream_new (race->route, "race", "acme", NULL);
  gboolean admitted;

  g_main_context_push_thread_default (context);
  g_atomic_int_inc (&race->ready);
  while (!g_atomic_int_get (&race->go))
    g_thread_yield ();

  admitted = symfonic_stage_admit (race->stage, stream, NULL);
  if (admitted)
    {
      /* keep it in flight: the stream outlives the thread */
      g_mutex_lock (&race->mutex);
      g_ptr_array_add (race->held, g_object_ref (stream));
      g_mutex_unlock (&race->mutex);
    }
  g_main_context_pop_thread_default (context);

  return GINT_TO_POINTER (admitted);
}

static void
test_budget_concurrency (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GObject) object = g_initable_new (SYMFONIC_TYPE_BUDGET_STAGE, NULL, &error,
                                              "tokens-per-window", (guint64) (N_FIT * RESERVE),
                                              "window-seconds", 3600,
                                              "reserve-tokens", (guint64) RESERVE,
                                              NULL);
  SymfonicStage *stage = SYMFONIC_STAGE (object);
  g_autoptr(SymfonicRoute) route = route_new (stage);
  g_autoptr(GPtrArray) held = g_ptr_array_new_with_free_func (g_object_unref);
  SymfonicMeterStore *store = symfonic_budget_stage_get_store (SYMFONIC_BUDGET_STAGE (stage));
  Race race = { stage, route, 0, 0, 0, { 0 }, held };
  guint admitted;

  g_assert_no_error (error);

  for (guint round = 0; round < 3; round++)
    {
      admitted = run_race (&race, race_hold);
      g_test_message ("%u of %u admitted against a budget for %u", admitted, N_THREADS, N_FIT);
      g_assert_cmpuint (admitted, ==, N_FIT);
      g_assert_cmpuint (held->len, ==, N_FIT);
      assert_budget (store, "t:acme", 0, N_FIT * RESERVE);

      /* the streams end before reaching their upstream: all is released */
      for (guint i = 0; i < held->len; i++)
        symfonic_stage_close (stage, g_ptr_array_index (held, i));
      drain (NULL);
      g_ptr_array_set_size (held, 0);
      assert_budget (store, "t:acme", 0, 0);
    }
}

static void
test_budget_concurrency_settle (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GObject) object = g_initable_new (SYMFONIC_TYPE_BUDGET_STAGE, NULL, &error,
                                              "tokens-per-window", (guint64) (N_FIT * RESERVE),
                                              "window-seconds", 3600,
                                              "reserve-tokens", (guint64) RESERVE,
                                              NULL);
  SymfonicStage *stage = SYMFONIC_STAGE (object);
  g_autoptr(SymfonicRoute) route = route_new (stage);
  SymfonicMeterStore *store = symfonic_budget_stage_get_store (SYMFONIC_BUDGET_STAGE (stage));
  Race race = { stage, route, 0, 0, 7, { 0 }, NULL };
  guint admitted, total = 0;

  g_assert_no_error (error);

  /* each admitted stream uses 7 tokens and settles at once, so later
   * threads may get in too, but never fewer than fit in what is left;
   * what is charged is exactly 7 per admission */
  for (guint round = 0; round < 5; round++)
    {
      guint64 left = N_FIT * RESERVE - total * race.used;

      admitted = run_race (&race, race_budget);
      total += admitted;
      g_assert_cmpuint (admitted, >=, left / RESERVE);
      assert_budget (store, "t:acme", total * race.used, 0);
    }
  g_test_message ("%u admitted over 5 rounds, %" G_GUINT64_FORMAT " tokens charged", total, total * race.used);
}

/* The same for the rate limit: a burst of 10 at one instant, 100 takers. */
static gpointer
race_rate (gpointer data)
{
  Race *race = data;
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(SymfonicStream) stream = stream_new (race->route, "race", "acme", "alice");
  gboolean admitted;

  g_main_context_push_thread_default (context);
  g_atomic_int_inc (&race->ready);
  while (!g_atomic_int_get (&race->go))
    g_thread_yield ();

  admitted = symfonic_stage_admit (race->stage, stream, NULL);
  drain (context);
  g_main_context_pop_thread_default (context);

  return GINT_TO_POINTER (admitted);
}

static void
test_rate_limit_concurrency (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GObject) object = g_initable_new (SYMFONIC_TYPE_RATE_LIMIT_STAGE, NULL, &error,
                                              "rate", 0.001, "burst", 10, NULL);
  SymfonicStage *stage = SYMFONIC_STAGE (object);
  g_autoptr(SymfonicRoute) route = route_new (stage);
  Race race = { stage, route, 0, 0, 0, { 0 }, NULL };

  g_assert_no_error (error);
  use_fake_clock (symfonic_rate_limit_stage_get_store (SYMFONIC_RATE_LIMIT_STAGE (stage)), 50 * SEC);
  g_assert_cmpuint (run_race (&race, race_rate), ==, 10);
}

/* --- the stages ------------------------------------------------------------ */

static void
test_rate_limit_keys (void)
{
  static const struct {
    const char *key;
    const char *tenant;
    const char *principal;
    const char *expected;
  } cases[] = {
    { "tenant", NULL, NULL, "t:anonymous" },
    { "principal", NULL, NULL, "p:anonymous" },
    { "tenant-principal", NULL, NULL, "tp:9:anonymous:anonymous" },
    { "tenant", "acme", "alice", "t:acme" },
    { "principal", "acme", "alice", "p:alice" },
    { "tenant-principal", "acme", "alice", "tp:4:acme:alice" },
    /* ids that would collide if simply joined */
    { "tenant-principal", "a:b", "c", "tp:3:a:b:c" },
    { "tenant-principal", "a", "b:c", "tp:1:a:b:c" },
    /* a nameless principal is its tenant */
    { "principal", "acme", NULL, "p:acme" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GEnumClass) keys = g_type_class_ref (SYMFONIC_TYPE_RATE_LIMIT_KEY);
      GEnumValue *value = g_enum_get_value_by_nick (keys, cases[i].key);
      g_autoptr(GError) error = NULL;
      g_autoptr(GObject) object = NULL;
      g_autoptr(SymfonicRoute) route = NULL;
      g_autoptr(SymfonicStream) stream = NULL;
      g_autofree char *key = NULL;

      g_assert_nonnull (value);
      object = g_initable_new (SYMFONIC_TYPE_RATE_LIMIT_STAGE, NULL, &error, "key", value->value, NULL);
      g_assert_no_error (error);
      route = route_new (SYMFONIC_STAGE (object));
      stream = stream_new (route, "q", cases[i].tenant, cases[i].principal);
      key = symfonic_rate_limit_stage_dup_key (SYMFONIC_RATE_LIMIT_STAGE (object), stream);
      g_assert_cmpstr (key, ==, cases[i].expected);
    }
}

/* Key modes decide who shares a limit: rate 1/s, burst 1. */
static void
test_rate_limit_key_modes (void)
{
  static const struct {
    const char *key;
    /* (acme, alice) first; then whether each of these still gets in */
    gboolean acme_bob;
    gboolean other_alice;
    gboolean acme_alice;
  } cases[] = {
    { "tenant", FALSE, TRUE, FALSE },
    { "principal", TRUE, FALSE, FALSE },
    { "tenant-principal", TRUE, TRUE, FALSE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GEnumClass) keys = g_type_class_ref (SYMFONIC_TYPE_RATE_LIMIT_KEY);
      GEnumValue *value = g_enum_get_value_by_nick (keys, cases[i].key);
      g_autoptr(GObject) object = g_initable_new (SYMFONIC_TYPE_RATE_LIMIT_STAGE, NULL, NULL,
                                                  "key", value->value, "rate", 1.0, "burst", 1, NULL);
      SymfonicStage *stage = SYMFONIC_STAGE (object);
      g_autoptr(SymfonicRoute) route = route_new (stage);
      g_autoptr(SymfonicStream) first = stream_new (route, "q", "acme", "alice");
      g_autoptr(SymfonicStream) acme_bob = stream_new (route, "q", "acme", "bob");
      g_autoptr(SymfonicStream) other_alice = stream_new (route, "q", "other", "alice");
      g_autoptr(SymfonicStream) acme_alice = stream_new (route, "q", "acme", "alice");

      g_test_message ("key=%s", cases[i].key);
      use_fake_clock (symfonic_rate_limit_stage_get_store (SYMFONIC_RATE_LIMIT_STAGE (stage)), SEC);
      g_assert_true (symfonic_stage_admit (stage, first, NULL));
      g_assert_true (symfonic_stage_admit (stage, acme_bob, NULL) == cases[i].acme_bob);
      g_assert_true (symfonic_stage_admit (stage, other_alice, NULL) == cases[i].other_alice);
      g_assert_true (symfonic_stage_admit (stage, acme_alice, NULL) == cases[i].acme_alice);
    }
}

/* The refusal: the right code, a detail, and Retry-After set before it. */
static void
test_rate_limit_refusal (void)
{
  static const struct { double rate; guint burst; gint64 elapsed; const char *retry_after; } cases[] = {
    { 5.0, 1, 0, "1" },          /* 0.2 s */
    { 1.0, 1, 0, "1" },          /* 1.0 s */
    { 1.0, 1, 1, "1" },          /* 0.999999 s */
    { 0.99, 1, 0, "2" },         /* 1.0101 s */
    { 0.5, 1, 0, "2" },          /* 2 s */
    { 0.5, 1, SEC / 2, "2" },    /* 1.5 s */
    { 0.4, 3, 0, "3" },          /* 2.5 s */
    { 1.0 / 60, 1, 0, "60" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GObject) object = g_initable_new (SYMFONIC_TYPE_RATE_LIMIT_STAGE, NULL, &error,
                                                  "rate", cases[i].rate, "burst", cases[i].burst, NULL);
      SymfonicStage *stage = SYMFONIC_STAGE (object);
      g_autoptr(SymfonicRoute) route = route_new (stage);
      g_autoptr(SymfonicStream) refused = stream_new (route, "q", NULL, NULL);

      g_assert_no_error (error);
      use_fake_clock (symfonic_rate_limit_stage_get_store (SYMFONIC_RATE_LIMIT_STAGE (stage)), 3 * SEC);
      for (guint j = 0; j < cases[i].burst; j++)
        {
          g_autoptr(SymfonicStream) stream = stream_new (route, "q", NULL, NULL);

          g_assert_true (symfonic_stage_admit (stage, stream, &error));
          g_assert_null (symfonic_stream_get_response_header (stream, "Retry-After"));
        }
      fake_now += cases[i].elapsed;
      g_assert_false (symfonic_stage_admit (stage, refused, &error));
      g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_RATE_LIMITED);
      g_assert_nonnull (strstr (error->message, "retry after"));
      g_assert_cmpstr (symfonic_stream_get_response_header (refused, "Retry-After"), ==, cases[i].retry_after);
    }
}

static void
test_budget_lifecycle (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GObject) object = g_initable_new (SYMFONIC_TYPE_BUDGET_STAGE, NULL, &error,
                                              "tokens-per-window", (guint64) 1000,
                                              "window-seconds", 60,
                                              "reserve-tokens", (guint64) 300,
                                              NULL);
  SymfonicStage *stage = SYMFONIC_STAGE (object);
  g_autoptr(SymfonicRoute) route = route_new (stage);
  SymfonicMeterStore *store = symfonic_budget_stage_get_store (SYMFONIC_BUDGET_STAGE (stage));
  g_autoptr(SymfonicStream) estimated = stream_new (route, "abcde", "acme", NULL);
  g_autoptr(SymfonicStream) reported = stream_new (route, "abcde", "acme", NULL);
  g_autoptr(SymfonicStream) unstarted = stream_new (route, "abcde", "acme", NULL);
  g_autoptr(SymfonicStream) refused = stream_new (route, "abcde", "acme", NULL);
  g_autoptr(SymfonicStream) other = stream_new (route, "abcde", NULL, NULL);

  g_assert_no_error (error);
  use_fake_clock (store, 10 * SEC);

  g_assert_true (symfonic_stage_admit (stage, estimated, &error));
  g_assert_true (symfonic_stage_admit (stage, reported, &error));
  g_assert_true (symfonic_stage_admit (stage, unstarted, &error));
  g_assert_no_error (error);
  assert_budget (store, "t:acme", 0, 900);

  /* 300 more would overshoot: refused with the in-flight advice */
  g_assert_false (symfonic_stage_admit (stage, refused, &error));
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BUDGET_EXCEEDED);
  g_assert_cmpstr (symfonic_stream_get_response_header (refused, "Retry-After"), ==, "1");
  g_assert_null (symfonic_stream_get_stage_data (refused, stage));
  g_clear_error (&error);
  /* the anonymous tenant has its own budget */
  g_assert_true (symfonic_stage_admit (stage, other, &error));
  assert_budget (store, "t:anonymous", 0, 300);

  /* the estimate: ceil (5 / 4) = 2 input, no text streamed; the text
   * count is the process hook's, exercised over HTTP */
  g_assert_true (symfonic_stage_begin (stage, estimated, NULL));
  symfonic_stage_close (stage, estimated);
  assert_budget (store, "t:acme", 2, 600);
  /* closing twice settles once */
  symfonic_stage_close (stage, estimated);
  assert_budget (store, "t:acme", 2, 600);

  /* the upstream's report wins over the estimate (2): 11 + 20 + 9 */
  g_assert_true (symfonic_stage_begin (stage, reported, NULL));
  g_assert_true (symfonic_stream_add_usage (reported, 11, 20, NULL));
  g_assert_true (symfonic_stream_add_usage (reported, 0, 9, NULL));
  symfonic_stage_close (stage, reported);
  assert_budget (store, "t:acme", 42, 300);

  /* a stream that never reached its upstream used nothing */
  symfonic_stage_close (stage, unstarted);
  assert_budget (store, "t:acme", 42, 0);

  /* an overrun is charged up to the window's limit (and logged) */
  {
    g_autoptr(SymfonicStream) greedy = stream_new (route, "abcde", "acme", NULL);

    g_assert_true (symfonic_stage_admit (stage, greedy, &error));
    g_assert_true (symfonic_stage_begin (stage, greedy, NULL));
    g_assert_true (symfonic_stream_add_usage (greedy, 400, 600, NULL));
    g_clear_pointer (&notices, g_free);
    symfonic_stage_close (stage, greedy);
    g_assert_nonnull (notices);
    g_assert_nonnull (strstr (notices, "more than the 300 reserved"));
    assert_budget (store, "t:acme", 1000, 0);
    g_clear_object (&refused);
    refused = stream_new (route, "abcde", "acme", NULL);
    g_assert_false (symfonic_stage_admit (stage, refused, &error));
    g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BUDGET_EXCEEDED);
    g_assert_cmpstr (symfonic_stream_get_response_header (refused, "Retry-After"), ==, "60");
  }

  drain (NULL);
}

static void
test_config_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GObject) budget = NULL;

  budget = g_initable_new (SYMFONIC_TYPE_BUDGET_STAGE, NULL, &error,
                           "tokens-per-window", (guint64) 100,
                           "reserve-tokens", (guint64) 101,
                           NULL);
  g_assert_null (budget);
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
  g_assert_nonnull (strstr (error->message, "reserve-tokens"));
  g_clear_error (&error);

  /* each stage object has its own memory store */
  {
    g_autoptr(GObject) a = g_initable_new (SYMFONIC_TYPE_RATE_LIMIT_STAGE, NULL, NULL, NULL);
    g_autoptr(GObject) b = g_initable_new (SYMFONIC_TYPE_RATE_LIMIT_STAGE, NULL, NULL, NULL);

    g_assert_true (symfonic_rate_limit_stage_get_store (SYMFONIC_RATE_LIMIT_STAGE (a)) !=
                   symfonic_rate_limit_stage_get_store (SYMFONIC_RATE_LIMIT_STAGE (b)));
  }
}

/* Stages run on the real clock unless a test says otherwise. */
static void
test_default_clock (void)
{
  g_autoptr(SymfonicMeterStore) store = SYMFONIC_METER_STORE (symfonic_memory_store_new (0));
  gint64 before = g_get_monotonic_time ();
  gint64 now = symfonic_meter_store_get_time (store);

  g_assert_cmpint (now, >=, before);
  g_assert_cmpint (now, <=, g_get_monotonic_time ());
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_log_set_writer_func (keep_notice, NULL, NULL);

  g_test_add_func ("/metering/retry-after/rounding", test_retry_after_rounding);
  g_test_add_func ("/metering/gcra/burst-then-rate", test_gcra_burst_then_rate);
  g_test_add_func ("/metering/gcra/long-run", test_gcra_long_run);
  g_test_add_func ("/metering/gcra/keys-independent", test_gcra_keys_independent);
  g_test_add_func ("/metering/store/sweeps", test_store_sweeps);
  g_test_add_func ("/metering/store/default-clock", test_default_clock);
  g_test_add_func ("/metering/budget/reserve-settle", test_budget_reserve_settle);
  g_test_add_func ("/metering/budget/window-rollover", test_budget_window_rollover);
  g_test_add_func ("/metering/budget/concurrency", test_budget_concurrency);
  g_test_add_func ("/metering/budget/concurrency-settle", test_budget_concurrency_settle);
  g_test_add_func ("/metering/rate-limit/concurrency", test_rate_limit_concurrency);
  g_test_add_func ("/metering/rate-limit/keys", test_rate_limit_keys);
  g_test_add_func ("/metering/rate-limit/key-modes", test_rate_limit_key_modes);
  g_test_add_func ("/metering/rate-limit/refusal", test_rate_limit_refusal);
  g_test_add_func ("/metering/budget/lifecycle", test_budget_lifecycle);
  g_test_add_func ("/metering/config-errors", test_config_errors);

  return g_test_run ();
}
