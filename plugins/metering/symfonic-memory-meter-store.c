/* symfonic-memory-meter-store.c: the in-process meter store
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>

#include "symfonic-memory-meter-store.h"

/* The single-node default: every cell and budget in two hash tables behind
 * one mutex. A stage takes it once per admission and once per settlement,
 * never per event, and holds it for a few arithmetic operations, so the
 * workers do not contend on it in any way that shows.
 *
 * Its clock is the monotonic clock: one process needs no clock shared with
 * anyone, and a wall-clock step must neither grant a burst nor lock a
 * tenant out. Tests may inject their own.
 *
 * Entries that carry no information any more (a GCRA cell whose TAT is
 * past, a budget with nothing in flight whose window closed without debt)
 * behave exactly like absent ones, so they are swept, each time a table
 * has doubled since the last sweep: amortized O(1) per operation, and the
 * tables stay proportional to the keys active in the last window. */

typedef struct
{
  gint64  window_start;
  gint64  window_us;
  guint64 limit;
  /* usage settled in the current window, at most @limit */
  guint64 charged;
  /* reservations granted and not settled yet, whatever their window */
  guint64 outstanding;
} Budget;

struct _SymfonicMemoryMeterStore
{
  GObject                 parent_instance;

  GMutex                  mutex;
  /* key -> gint64 TAT */
  GHashTable             *cells;
  /* key -> Budget */
  GHashTable             *budgets;
  guint                   cells_sweep_at;
  guint                   budgets_sweep_at;

  SymfonicMeterClockFunc  clock;
  gpointer                clock_data;
};

typedef struct
{
  gboolean granted;
  gint64   retry_after_us;
  /* a granted reservation's room: see symfonic_meter_store_reserve_finish() */
  guint64  allowance;
} Verdict;

static void symfonic_memory_meter_store_iface_init (SymfonicMeterStoreInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SymfonicMemoryMeterStore, symfonic_memory_meter_store, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_METER_STORE,
                                                      symfonic_memory_meter_store_iface_init))

/* Closes the window if it is over and opens one at @now: a window owes
 * nothing to the one before it. */
static void
budget_roll (Budget *budget,
             gint64  now_us)
{
  if (now_us - budget->window_start < budget->window_us)
    return;

  budget->charged = 0;
  budget->window_start = now_us;
}

static gboolean
cell_is_spent (gpointer key,
               gpointer value,
               gpointer user_data)
{
  return *(gint64 *) value <= *(gint64 *) user_data;
}

static gboolean
budget_is_spent (gpointer key,
                 gpointer value,
                 gpointer user_data)
{
  Budget *budget = value;

  if (budget->outstanding > 0)
    return FALSE;
  budget_roll (budget, *(gint64 *) user_data);

  return budget->charged == 0;
}

/* Called with the mutex held. */
static void
maybe_sweep (GHashTable *table,
             guint      *sweep_at,
             GHRFunc     is_spent,
             gint64      now_us)
{
  if (g_hash_table_size (table) < *sweep_at)
    return;

  g_hash_table_foreach_remove (table, is_spent, &now_us);
  *sweep_at = MAX (SYMFONIC_MEMORY_METER_STORE_MIN_SWEEP, 2 * g_hash_table_size (table));
}

static gint64
symfonic_memory_meter_store_get_time (SymfonicMeterStore *store)
{
  SymfonicMemoryMeterStore *self = SYMFONIC_MEMORY_METER_STORE (store);

  if (self->clock != NULL)
    return self->clock (self->clock_data);

  return g_get_monotonic_time ();
}

static void
return_verdict (gpointer             source,
                gpointer             tag,
                GCancellable        *cancellable,
                GAsyncReadyCallback  callback,
                gpointer             user_data,
                const Verdict       *verdict)
{
  g_autoptr(GTask) task = g_task_new (source, cancellable, callback, user_data);

  g_task_set_source_tag (task, tag);
  /* the state changed already; a cancellation must not report otherwise */
  g_task_set_check_cancellable (task, FALSE);
  g_task_return_pointer (task, g_memdup2 (verdict, sizeof *verdict), g_free);
}

static Verdict *
propagate_verdict (GAsyncResult  *result,
                   gpointer       source,
                   gpointer       tag,
                   GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, source), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == tag, NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static Verdict
take (SymfonicMemoryMeterStore *self,
      const char               *key,
      gint64                    emission_interval_us,
      gint64                    burst_tolerance_us,
      gint64                    now_us)
{
  Verdict verdict = { FALSE, 0, 0 };
  gint64 *tat;
  gint64 start;

  g_mutex_lock (&self->mutex);

  tat = g_hash_table_lookup (self->cells, key);
  start = tat != NULL ? MAX (*tat, now_us) : now_us;
  /* conforming iff now ≥ TAT − τ; written so that nothing overflows */
  verdict.granted = start - now_us <= burst_tolerance_us;
  if (verdict.granted)
    {
      if (tat == NULL)
        {
          maybe_sweep (self->cells, &self->cells_sweep_at, cell_is_spent, now_us);
          tat = g_new (gint64, 1);
          g_hash_table_insert (self->cells, g_strdup (key), tat);
        }
      *tat = start + emission_interval_us;
    }
  else
    {
      verdict.retry_after_us = start - burst_tolerance_us - now_us;
    }

  g_mutex_unlock (&self->mutex);

  return verdict;
}

/* The state is in this process: the store always decides at once. */
static gboolean
symfonic_memory_meter_store_try_take (SymfonicMeterStore  *store,
                                      const char          *key,
                                      gint64               emission_interval_us,
                                      gint64               burst_tolerance_us,
                                      gint64               now_us,
                                      gboolean            *allowed,
                                      gint64              *retry_after_us,
                                      GError             **error)
{
  Verdict verdict = take (SYMFONIC_MEMORY_METER_STORE (store), key, emission_interval_us, burst_tolerance_us,
                          now_us);

  *allowed = verdict.granted;
  *retry_after_us = verdict.retry_after_us;

  return TRUE;
}

static void
symfonic_memory_meter_store_take_async (SymfonicMeterStore  *store,
                                        const char          *key,
                                        gint64               emission_interval_us,
                                        gint64               burst_tolerance_us,
                                        gint64               now_us,
                                        GCancellable        *cancellable,
                                        GAsyncReadyCallback  callback,
                                        gpointer             user_data)
{
  SymfonicMemoryMeterStore *self = SYMFONIC_MEMORY_METER_STORE (store);
  Verdict verdict = take (self, key, emission_interval_us, burst_tolerance_us, now_us);

  return_verdict (self, symfonic_memory_meter_store_take_async, cancellable, callback, user_data, &verdict);
}

static gboolean
symfonic_memory_meter_store_take_finish (SymfonicMeterStore  *store,
                                         GAsyncResult        *result,
                                         gboolean            *allowed,
                                         gint64              *retry_after_us,
                                         GError             **error)
{
  g_autofree Verdict *verdict = propagate_verdict (result, store, symfonic_memory_meter_store_take_async, error);

  if (verdict == NULL)
    return FALSE;
  *allowed = verdict->granted;
  *retry_after_us = verdict->retry_after_us;

  return TRUE;
}

static Verdict
reserve (SymfonicMemoryMeterStore *self,
         const char               *key,
         guint64                   amount,
         guint64                   limit,
         gint64                    window_us,
         gint64                    now_us)
{
  Verdict verdict = { FALSE, 0, 0 };
  Budget *budget;

  g_mutex_lock (&self->mutex);

  budget = g_hash_table_lookup (self->budgets, key);
  if (budget == NULL)
    {
      maybe_sweep (self->budgets, &self->budgets_sweep_at, budget_is_spent, now_us);
      budget = g_new0 (Budget, 1);
      budget->window_start = now_us;
      g_hash_table_insert (self->budgets, g_strdup (key), budget);
    }
  /* the caller's settings win, so a changed configuration applies at once */
  budget->window_us = window_us;
  budget->limit = limit;
  budget_roll (budget, now_us);

  verdict.granted = symfonic_meter_saturating_add (symfonic_meter_saturating_add (budget->charged, budget->outstanding), amount) <= limit;
  if (verdict.granted)
    {
      verdict.allowance = limit - budget->charged - budget->outstanding;
      budget->outstanding += amount;
    }
  else if (symfonic_meter_saturating_add (budget->charged, amount) > limit)
    {
      /* settled usage alone leaves no room: the next window has it all */
      verdict.retry_after_us = MAX (budget->window_start + budget->window_us - now_us, 1);
    }
  else
    {
      verdict.retry_after_us = SYMFONIC_METER_IN_FLIGHT_RETRY_US;
    }

  g_mutex_unlock (&self->mutex);

  return verdict;
}

static gboolean
symfonic_memory_meter_store_try_reserve (SymfonicMeterStore  *store,
                                         const char          *key,
                                         guint64              amount,
                                         guint64              limit,
                                         gint64               window_us,
                                         gint64               now_us,
                                         gboolean            *reserved,
                                         gint64              *retry_after_us,
                                         guint64             *allowance,
                                         GError             **error)
{
  Verdict verdict = reserve (SYMFONIC_MEMORY_METER_STORE (store), key, amount, limit, window_us, now_us);

  *reserved = verdict.granted;
  *retry_after_us = verdict.retry_after_us;
  *allowance = verdict.allowance;

  return TRUE;
}

static void
symfonic_memory_meter_store_reserve_async (SymfonicMeterStore  *store,
                                           const char          *key,
                                           guint64              amount,
                                           guint64              limit,
                                           gint64               window_us,
                                           gint64               now_us,
                                           GCancellable        *cancellable,
                                           GAsyncReadyCallback  callback,
                                           gpointer             user_data)
{
  SymfonicMemoryMeterStore *self = SYMFONIC_MEMORY_METER_STORE (store);
  Verdict verdict = reserve (self, key, amount, limit, window_us, now_us);

  return_verdict (self, symfonic_memory_meter_store_reserve_async, cancellable, callback, user_data, &verdict);
}

static gboolean
symfonic_memory_meter_store_reserve_finish (SymfonicMeterStore  *store,
                                            GAsyncResult        *result,
                                            gboolean            *reserved,
                                            gint64              *retry_after_us,
                                            guint64             *allowance,
                                            GError             **error)
{
  g_autofree Verdict *verdict = propagate_verdict (result, store, symfonic_memory_meter_store_reserve_async,
                                                   error);

  if (verdict == NULL)
    return FALSE;
  *reserved = verdict->granted;
  *retry_after_us = verdict->retry_after_us;
  *allowance = verdict->allowance;

  return TRUE;
}

static void
symfonic_memory_meter_store_settle_async (SymfonicMeterStore  *store,
                                          const char          *key,
                                          guint64              reserved,
                                          guint64              actual,
                                          gint64               now_us,
                                          GCancellable        *cancellable,
                                          GAsyncReadyCallback  callback,
                                          gpointer             user_data)
{
  SymfonicMemoryMeterStore *self = SYMFONIC_MEMORY_METER_STORE (store);
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  Budget *budget;
  gboolean known;

  g_task_set_source_tag (task, symfonic_memory_meter_store_settle_async);
  g_task_set_check_cancellable (task, FALSE);

  g_mutex_lock (&self->mutex);

  /* a budget with a reservation in flight is never swept */
  budget = g_hash_table_lookup (self->budgets, key);
  known = budget != NULL && budget->outstanding >= reserved;
  if (known)
    {
      budget_roll (budget, now_us);
      budget->outstanding -= reserved;
      /* Overruns (streams admitted together, a reserve-tokens below the
       * real worst case) spend the window, never the ones after it: a
       * refusal then never waits longer than a window, whatever an
       * upstream claimed. */
      budget->charged = MIN (symfonic_meter_saturating_add (budget->charged, actual), budget->limit);
    }

  g_mutex_unlock (&self->mutex);

  if (known)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                             _("No reservation of %" G_GUINT64_FORMAT " for “%s” to settle"),
                             reserved, key);
}

static gboolean
symfonic_memory_meter_store_settle_finish (SymfonicMeterStore  *store,
                                           GAsyncResult        *result,
                                           GError             **error)
{
  g_return_val_if_fail (g_task_is_valid (result, store), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
symfonic_memory_meter_store_iface_init (SymfonicMeterStoreInterface *iface)
{
  iface->get_time = symfonic_memory_meter_store_get_time;
  iface->take_async = symfonic_memory_meter_store_take_async;
  iface->take_finish = symfonic_memory_meter_store_take_finish;
  iface->reserve_async = symfonic_memory_meter_store_reserve_async;
  iface->reserve_finish = symfonic_memory_meter_store_reserve_finish;
  iface->settle_async = symfonic_memory_meter_store_settle_async;
  iface->settle_finish = symfonic_memory_meter_store_settle_finish;
  iface->try_take = symfonic_memory_meter_store_try_take;
  iface->try_reserve = symfonic_memory_meter_store_try_reserve;
}

static void
symfonic_memory_meter_store_finalize (GObject *object)
{
  SymfonicMemoryMeterStore *self = (SymfonicMemoryMeterStore *) object;

  g_hash_table_unref (self->cells);
  g_hash_table_unref (self->budgets);
  g_mutex_clear (&self->mutex);

  G_OBJECT_CLASS (symfonic_memory_meter_store_parent_class)->finalize (object);
}

static void
symfonic_memory_meter_store_class_init (SymfonicMemoryMeterStoreClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = symfonic_memory_meter_store_finalize;
}

static void
symfonic_memory_meter_store_init (SymfonicMemoryMeterStore *self)
{
  g_mutex_init (&self->mutex);
  self->cells = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->budgets = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->cells_sweep_at = SYMFONIC_MEMORY_METER_STORE_MIN_SWEEP;
  self->budgets_sweep_at = SYMFONIC_MEMORY_METER_STORE_MIN_SWEEP;
}

/**
 * symfonic_memory_meter_store_new:
 *
 * Returns: (transfer full): a new, empty in-process store
 */
SymfonicMemoryMeterStore *
symfonic_memory_meter_store_new (void)
{
  return g_object_new (SYMFONIC_TYPE_MEMORY_METER_STORE, NULL);
}

/**
 * symfonic_memory_meter_store_set_clock:
 * @self: a #SymfonicMemoryMeterStore
 * @clock: (nullable) (scope forever): the clock, or %NULL for the monotonic clock
 * @user_data: data for @clock
 *
 * Replaces the store's clock, for tests that step time by hand. Set it
 * before the store is used.
 */
void
symfonic_memory_meter_store_set_clock (SymfonicMemoryMeterStore *self,
                                       SymfonicMeterClockFunc    clock,
                                       gpointer                  user_data)
{
  g_return_if_fail (SYMFONIC_IS_MEMORY_METER_STORE (self));

  self->clock = clock;
  self->clock_data = user_data;
}

/**
 * symfonic_memory_meter_store_get_n_keys:
 * @self: a #SymfonicMemoryMeterStore
 *
 * Returns: how many cells and budgets the store holds, swept or not yet
 */
guint
symfonic_memory_meter_store_get_n_keys (SymfonicMemoryMeterStore *self)
{
  guint n;

  g_return_val_if_fail (SYMFONIC_IS_MEMORY_METER_STORE (self), 0);

  g_mutex_lock (&self->mutex);
  n = g_hash_table_size (self->cells) + g_hash_table_size (self->budgets);
  g_mutex_unlock (&self->mutex);

  return n;
}

/**
 * symfonic_memory_meter_store_peek_budget:
 * @self: a #SymfonicMemoryMeterStore
 * @key: a budget
 * @charged: (out) (optional): usage charged to its current window
 * @outstanding: (out) (optional): reservations not settled yet
 *
 * Reads a budget as it stands, without rolling its window; for tests and
 * diagnostics.
 *
 * Returns: %TRUE if the store has a budget for @key
 */
gboolean
symfonic_memory_meter_store_peek_budget (SymfonicMemoryMeterStore *self,
                                         const char               *key,
                                         guint64                  *charged,
                                         guint64                  *outstanding)
{
  Budget *budget;

  g_return_val_if_fail (SYMFONIC_IS_MEMORY_METER_STORE (self), FALSE);
  g_return_val_if_fail (key != NULL, FALSE);

  g_mutex_lock (&self->mutex);
  budget = g_hash_table_lookup (self->budgets, key);
  if (budget != NULL)
    {
      if (charged != NULL)
        *charged = budget->charged;
      if (outstanding != NULL)
        *outstanding = budget->outstanding;
    }
  g_mutex_unlock (&self->mutex);

  return budget != NULL;
}
