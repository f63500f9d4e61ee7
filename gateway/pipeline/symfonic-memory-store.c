/* symfonic-memory-store.c: the in-process store
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-memory-run-store-private.h"
#include "symfonic-memory-store.h"
#include "symfonic-store-private.h"

/**
 * SymfonicMemoryStore:
 *
 * The single-node default, registered as `memory`: rate-limit cells,
 * budgets, stream slots and resumable runs in this process, so that the
 * gateway serves with no external service at all. It plays every store
 * role; a `[store:NAME]` group of `type=memory` is one store that every
 * stage and route naming it shares.
 *
 * Cells, budgets and slot sets are in hash tables behind one mutex. A
 * stage takes it once per admission, once per batch of usage charged and
 * once per settlement, never per event, and holds it for a few arithmetic
 * operations, so the workers do not contend on it in any way that shows.
 * Runs are kept by a #SymfonicMemoryRunStore of its own, configured by the
 * same properties.
 *
 * Its clock is the monotonic clock: one process needs no clock shared with
 * anyone, and a wall-clock step must neither grant a burst nor lock a
 * tenant out. Tests may inject their own.
 *
 * Its leases expire like any store's when nobody renews them (see
 * #SymfonicMemoryStore:lease-ttl-ms), so that a pipeline behaves the same
 * whether its store is in this process or shared. The store a stage or a
 * route makes for itself when it names none grants leases that never
 * expire: its holders live and die with it.
 */

/* Entries that carry no information any more (a GCRA cell whose TAT is
 * past, a budget with no lease whose window closed without debt, a slot
 * set with no slot) behave exactly like absent ones, so they are swept,
 * each time a table has doubled since the last sweep: amortized O(1) per
 * operation, and the tables stay proportional to the keys active in the
 * last window. */

/* A lease: a budget's reservation or a stream's slot. Its own key in its
 * set's table, so that a lease costs one allocation. */
typedef struct
{
  guint64 id;
  gint64  expires;
  /* a reservation's amount, and the usage charged to it while its stream
   * runs, at most what fitted; 0 for a slot */
  guint64 reserved;
  guint64 used;
} Lease;

/* The leases held under one key: a slot set, or the head of a budget. */
typedef struct
{
  /* lease id -> Lease, or NULL while there is none */
  GHashTable *leases;
  /* no lease expires before this */
  gint64      next_expiry;
} LeaseSet;

typedef struct
{
  LeaseSet    set;
  gint64      window_start;
  gint64      window_us;
  guint64     limit;
  /* usage settled (or left by expired leases) in the current window, at
   * most @limit */
  guint64     charged;
  /* the leases not settled yet, whatever their window, each counting
   * MAX (reserved, used) */
  guint64     outstanding;
} Budget;

struct _SymfonicMemoryStore
{
  GObject                 parent_instance;

  guint                   lease_ttl_ms;
  /* of the run store it makes */
  SymfonicRunBounds       run_bounds;

  GMutex                  mutex;
  guint64                 last_lease;
  /* key -> gint64 TAT */
  GHashTable             *cells;
  /* key -> Budget */
  GHashTable             *budgets;
  /* key -> LeaseSet */
  GHashTable             *slots;
  guint                   cells_sweep_at;
  guint                   budgets_sweep_at;

  SymfonicMeterClockFunc  clock;
  gpointer                clock_data;

  /* made when first used: most memory stores keep no runs */
  SymfonicRunStore       *runs;
  GMutex                  runs_lock;
};

enum {
  PROP_0,
  PROP_LEASE_TTL_MS,
  PROP_FIRST_RUN_BOUND,
  N_PROPS = PROP_FIRST_RUN_BOUND + SYMFONIC_RUN_N_BOUNDS
};

static GParamSpec *properties[N_PROPS];

static void symfonic_memory_store_store_init (SymfonicStoreInterface *iface);
static void symfonic_memory_store_meter_init (SymfonicMeterStoreInterface *iface);
static void symfonic_memory_store_cap_init (SymfonicStreamCapStoreInterface *iface);
static void symfonic_memory_store_run_init (SymfonicRunStoreInterface *iface);

/**
 * SymfonicMemoryStoreClass:
 * @parent_class: the parent class
 *
 * The class of #SymfonicMemoryStore, a final type: there is nothing to override.
 */
G_DEFINE_FINAL_TYPE_WITH_CODE (SymfonicMemoryStore, symfonic_memory_store, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_STORE, symfonic_memory_store_store_init)
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_METER_STORE, symfonic_memory_store_meter_init)
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_STREAM_CAP_STORE, symfonic_memory_store_cap_init)
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_RUN_STORE, symfonic_memory_store_run_init))

static guint64
saturating_add (guint64 a,
                guint64 b)
{
  return a > G_MAXUINT64 - b ? G_MAXUINT64 : a + b;
}

static gint64
clock_now (SymfonicMemoryStore *self)
{
  if (self->clock != NULL)
    return self->clock (self->clock_data);

  return g_get_monotonic_time ();
}

/* When a lease taken or renewed at @now_us expires. */
static gint64
expiry_from (SymfonicMemoryStore *self,
             gint64               now_us)
{
  if (self->lease_ttl_ms == 0)
    return G_MAXINT64;

  return now_us + (gint64) self->lease_ttl_ms * 1000;
}

static guint64
next_lease_id (SymfonicMemoryStore *self)
{
  return ++self->last_lease;
}

/* Operations on leases look at each of their scopes; a stage meters one
 * or two, so their budgets are kept on the stack, not allocated per call. */
#define STACK_SCOPES 4

#define SCOPE_ARRAY(type, name, n) \
  type name##_stack[STACK_SCOPES]; \
  g_autofree type *name##_heap = (n) > STACK_SCOPES ? g_new (type, (n)) : NULL; \
  type *name = name##_heap != NULL ? name##_heap : name##_stack

/* --- leases -------------------------------------------------------------- */

/* Frees a slot set or a budget, whose lease set comes first. */
static void
lease_set_free (gpointer data)
{
  LeaseSet *set = data;

  g_clear_pointer (&set->leases, g_hash_table_unref);
  g_free (set);
}

static guint
lease_set_size (LeaseSet *set)
{
  return set->leases != NULL ? g_hash_table_size (set->leases) : 0;
}

static Lease *
lease_set_find (LeaseSet *set,
                guint64   lease_id)
{
  return set != NULL && set->leases != NULL ? g_hash_table_lookup (set->leases, &lease_id) : NULL;
}

static Lease *
lease_set_add (LeaseSet *set,
               guint64   lease_id,
               gint64    expires)
{
  Lease *lease = g_new0 (Lease, 1);

  lease->id = lease_id;
  lease->expires = expires;
  if (set->leases == NULL)
    set->leases = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL, g_free);
  g_hash_table_insert (set->leases, &lease->id, lease);
  set->next_expiry = MIN (set->next_expiry, expires);

  return lease;
}

static gboolean
lease_set_is_due (LeaseSet *set,
                  gint64    now_us)
{
  return set->leases != NULL && now_us >= set->next_expiry;
}

/* Forgets the leases whose holders stopped renewing them, each handed to
 * @expire first when it is set. */
static void
lease_set_prune (LeaseSet *set,
                 gint64    now_us,
                 void    (*expire) (Lease *lease, gpointer data),
                 gpointer  data)
{
  GHashTableIter iter;
  gpointer value;
  gint64 next = G_MAXINT64;

  if (!lease_set_is_due (set, now_us))
    return;

  g_hash_table_iter_init (&iter, set->leases);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      Lease *lease = value;

      if (lease->expires > now_us)
        {
          next = MIN (next, lease->expires);
          continue;
        }
      if (expire != NULL)
        expire (lease, data);
      g_hash_table_iter_remove (&iter);
    }
  set->next_expiry = next;
}

/* --- budgets ------------------------------------------------------------- */

static inline guint64
lease_share (const Lease *lease)
{
  return MAX (lease->reserved, lease->used);
}

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

/* A lease goes: it stops counting, and @actual is charged to the current
 * window, up to its limit: an overrun spends the window, never the ones
 * after it. */
static void
budget_drop_lease (Budget  *budget,
                   Lease   *lease,
                   guint64  actual)
{
  budget->outstanding -= lease_share (lease);
  budget->charged = MIN (saturating_add (budget->charged, actual), budget->limit);
}

static void
budget_expire_lease (Lease    *lease,
                     gpointer  budget)
{
  budget_drop_lease (budget, lease, lease->used);
}

/* The leases whose holders stopped renewing them release their
 * reservations; what was charged to them stays charged, in the window
 * current now. */
static void
budget_prune (Budget *budget,
              gint64  now_us)
{
  if (!lease_set_is_due (&budget->set, now_us))
    return;

  budget_roll (budget, now_us);
  lease_set_prune (&budget->set, now_us, budget_expire_lease, budget);
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
  gint64 now_us = *(gint64 *) user_data;

  budget_prune (budget, now_us);
  if (lease_set_size (&budget->set) > 0)
    return FALSE;
  budget_roll (budget, now_us);

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
  *sweep_at = MAX (SYMFONIC_MEMORY_STORE_MIN_SWEEP, 2 * g_hash_table_size (table));
}

static gint64
symfonic_memory_store_get_time (SymfonicMeterStore *store)
{
  return clock_now (SYMFONIC_MEMORY_STORE (store));
}

/* The state is in this process: the store always decides at once, and
 * answers symfonic_meter_store_take_async() from here too. */
static gboolean
symfonic_memory_store_try_take (SymfonicMeterStore  *store,
                                const char          *key,
                                gint64               emission_interval_us,
                                gint64               burst_tolerance_us,
                                gint64               now_us,
                                gboolean            *allowed,
                                gint64              *retry_after_us,
                                GError             **error)
{
  SymfonicMemoryStore *self = SYMFONIC_MEMORY_STORE (store);
  G_GNUC_UNUSED g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);
  gint64 *tat = g_hash_table_lookup (self->cells, key);
  gint64 start = tat != NULL ? MAX (*tat, now_us) : now_us;

  /* conforming iff now ≥ TAT − τ; written so that nothing overflows */
  *allowed = start - now_us <= burst_tolerance_us;
  if (!*allowed)
    {
      *retry_after_us = start - burst_tolerance_us - now_us;
      return TRUE;
    }

  if (tat == NULL)
    {
      maybe_sweep (self->cells, &self->cells_sweep_at, cell_is_spent, now_us);
      tat = g_new (gint64, 1);
      g_hash_table_insert (self->cells, g_strdup (key), tat);
    }
  *tat = start + emission_interval_us;
  /* the room left, which the rate limit tells the metrics about */
  *retry_after_us = -1 - (burst_tolerance_us - (start - now_us));

  return TRUE;
}

/* The budget of @scope, as it stands at @now_us, made if it is new.
 * Called with the mutex held, after the one sweep of the operation: a
 * sweep frees budgets, and the caller holds some. */
static Budget *
budget_for (SymfonicMemoryStore      *self,
            const SymfonicMeterScope *scope,
            gint64                    now_us)
{
  Budget *budget = g_hash_table_lookup (self->budgets, scope->key);

  if (budget == NULL)
    {
      budget = g_new0 (Budget, 1);
      budget->window_start = now_us;
      budget->set.next_expiry = G_MAXINT64;
      g_hash_table_insert (self->budgets, g_strdup (scope->key), budget);
    }
  /* the caller's settings win, so a changed configuration applies at once */
  budget->window_us = scope->window_us;
  budget->limit = scope->limit;
  budget_prune (budget, now_us);
  budget_roll (budget, now_us);

  return budget;
}

static gboolean
symfonic_memory_store_try_reserve (SymfonicMeterStore        *store,
                                   const SymfonicMeterScope  *scopes,
                                   guint                      n_scopes,
                                   guint64                    amount,
                                   gint64                     now_us,
                                   gboolean                  *reserved,
                                   guint64                   *lease_id,
                                   gint64                    *retry_after_us,
                                   guint64                   *allowance,
                                   GError                   **error)
{
  SymfonicMemoryStore *self = SYMFONIC_MEMORY_STORE (store);
  G_GNUC_UNUSED g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);
  SCOPE_ARRAY (Budget *, budgets, n_scopes);
  gint64 expires;

  *allowance = G_MAXUINT64;
  maybe_sweep (self->budgets, &self->budgets_sweep_at, budget_is_spent, now_us);
  for (guint i = 0; i < n_scopes; i++)
    {
      Budget *budget = budgets[i] = budget_for (self, &scopes[i], now_us);
      guint64 committed = saturating_add (budget->charged, budget->outstanding);

      if (saturating_add (committed, amount) <= budget->limit)
        {
          *allowance = MIN (*allowance, budget->limit - committed);
          continue;
        }

      *reserved = FALSE;
      if (saturating_add (budget->charged, amount) > budget->limit)
        /* usage charged alone leaves no room: the next window has it all */
        *retry_after_us = MAX (budget->window_start + budget->window_us - now_us, 1);
      else
        *retry_after_us = SYMFONIC_METER_IN_FLIGHT_RETRY_US;
      return TRUE;
    }

  *reserved = TRUE;
  *lease_id = next_lease_id (self);
  expires = expiry_from (self, now_us);
  for (guint i = 0; i < n_scopes; i++)
    {
      lease_set_add (&budgets[i]->set, *lease_id, expires)->reserved = amount;
      budgets[i]->outstanding += amount;
    }

  return TRUE;
}

/* The lease @lease_id's part in the budget of each scope, or FALSE with
 * @error set when one of them lacks it. Called with the mutex held. */
static gboolean
find_lease (SymfonicMemoryStore       *self,
            guint64                    lease_id,
            const SymfonicMeterScope  *scopes,
            guint                      n_scopes,
            gint64                     now_us,
            Budget                   **budgets,
            Lease                    **leases,
            GError                   **error)
{
  for (guint i = 0; i < n_scopes; i++)
    {
      budgets[i] = g_hash_table_lookup (self->budgets, scopes[i].key);
      if (budgets[i] != NULL)
        budget_prune (budgets[i], now_us);
      leases[i] = lease_set_find ((LeaseSet *) budgets[i], lease_id);
      if (leases[i] == NULL)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                       "No lease %" G_GUINT64_FORMAT " on the budget “%s”", lease_id, scopes[i].key);
          return FALSE;
        }
      budget_roll (budgets[i], now_us);
    }

  return TRUE;
}

static gboolean
symfonic_memory_store_try_charge (SymfonicMeterStore        *store,
                                  guint64                    lease_id,
                                  const SymfonicMeterScope  *scopes,
                                  guint                      n_scopes,
                                  guint64                    used,
                                  gint64                     now_us,
                                  gboolean                  *exhausted,
                                  guint64                   *allowance,
                                  GError                   **error)
{
  SymfonicMemoryStore *self = SYMFONIC_MEMORY_STORE (store);
  G_GNUC_UNUSED g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);
  SCOPE_ARRAY (Budget *, budgets, n_scopes);
  SCOPE_ARRAY (Lease *, leases, n_scopes);
  guint64 room = G_MAXUINT64;

  if (!find_lease (self, lease_id, scopes, n_scopes, now_us, budgets, leases, error))
    return FALSE;

  /* what the lease may count in all: its own share plus what nobody
   * else holds, in the tightest scope */
  for (guint i = 0; i < n_scopes; i++)
    {
      guint64 others = saturating_add (budgets[i]->charged, budgets[i]->outstanding - lease_share (leases[i]));

      room = MIN (room, budgets[i]->limit > others ? budgets[i]->limit - others : 0);
    }

  for (guint i = 0; i < n_scopes; i++)
    {
      guint64 before = lease_share (leases[i]);

      leases[i]->used = MAX (leases[i]->used, MIN (used, room));
      budgets[i]->outstanding += lease_share (leases[i]) - before;
    }

  *exhausted = used > room;
  *allowance = room;

  return TRUE;
}

static void
symfonic_memory_store_renew_async (SymfonicMeterStore        *store,
                                   guint64                    lease_id,
                                   const SymfonicMeterScope  *scopes,
                                   guint                      n_scopes,
                                   gint64                     now_us,
                                   GCancellable              *cancellable,
                                   GAsyncReadyCallback        callback,
                                   gpointer                   user_data)
{
  SymfonicMemoryStore *self = SYMFONIC_MEMORY_STORE (store);
  SCOPE_ARRAY (Budget *, budgets, n_scopes);
  SCOPE_ARRAY (Lease *, leases, n_scopes);
  g_autoptr(GTask) task = symfonic_store_task_new (self, symfonic_memory_store_renew_async, cancellable, callback,
                                                   user_data);
  gboolean renewed;

  g_mutex_lock (&self->mutex);
  renewed = find_lease (self, lease_id, scopes, n_scopes, now_us, budgets, leases, NULL);
  for (guint i = 0; renewed && i < n_scopes; i++)
    leases[i]->expires = expiry_from (self, now_us);
  g_mutex_unlock (&self->mutex);

  g_task_return_boolean (task, renewed);
}

static gboolean
symfonic_memory_store_renew_finish (SymfonicMeterStore  *store,
                                    GAsyncResult        *result,
                                    gboolean            *renewed,
                                    GError             **error)
{
  g_return_val_if_fail (g_task_is_valid (result, store), FALSE);

  *renewed = g_task_propagate_boolean (G_TASK (result), NULL);
  return TRUE;
}

static void
symfonic_memory_store_settle_async (SymfonicMeterStore        *store,
                                    guint64                    lease_id,
                                    const SymfonicMeterScope  *scopes,
                                    guint                      n_scopes,
                                    guint64                    actual,
                                    gint64                     now_us,
                                    GCancellable              *cancellable,
                                    GAsyncReadyCallback        callback,
                                    gpointer                   user_data)
{
  SymfonicMemoryStore *self = SYMFONIC_MEMORY_STORE (store);
  SCOPE_ARRAY (Budget *, budgets, n_scopes);
  SCOPE_ARRAY (Lease *, leases, n_scopes);
  g_autoptr(GTask) task = symfonic_store_task_new (self, symfonic_memory_store_settle_async, cancellable, callback,
                                                   user_data);
  GError *error = NULL;

  g_mutex_lock (&self->mutex);
  if (find_lease (self, lease_id, scopes, n_scopes, now_us, budgets, leases, &error))
    {
      for (guint i = 0; i < n_scopes; i++)
        {
          budget_drop_lease (budgets[i], leases[i], actual);
          g_hash_table_remove (budgets[i]->set.leases, &lease_id);
        }
    }
  g_mutex_unlock (&self->mutex);

  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

static gboolean
symfonic_memory_store_settle_finish (SymfonicMeterStore  *store,
                                     GAsyncResult        *result,
                                     GError             **error)
{
  g_return_val_if_fail (g_task_is_valid (result, store), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

/* Asked at once (try_), the store needs no asynchronous take, reserve or
 * charge: their wrappers answer with what the try_ methods decide. */
static void
symfonic_memory_store_meter_init (SymfonicMeterStoreInterface *iface)
{
  iface->get_time = symfonic_memory_store_get_time;
  iface->try_take = symfonic_memory_store_try_take;
  iface->try_reserve = symfonic_memory_store_try_reserve;
  iface->try_charge = symfonic_memory_store_try_charge;
  iface->renew_async = symfonic_memory_store_renew_async;
  iface->renew_finish = symfonic_memory_store_renew_finish;
  iface->settle_async = symfonic_memory_store_settle_async;
  iface->settle_finish = symfonic_memory_store_settle_finish;
}

/* --- stream slots -------------------------------------------------------- */

static gint64
symfonic_memory_store_cap_get_time (SymfonicStreamCapStore *store)
{
  return clock_now (SYMFONIC_MEMORY_STORE (store));
}

static gboolean
symfonic_memory_store_try_acquire (SymfonicStreamCapStore        *store,
                                   const SymfonicStreamCapScope  *scopes,
                                   guint                          n_scopes,
                                   gint64                         now_us,
                                   gboolean                      *acquired,
                                   guint                         *refused_scope,
                                   guint64                       *lease_id,
                                   GError                       **error)
{
  SymfonicMemoryStore *self = SYMFONIC_MEMORY_STORE (store);
  G_GNUC_UNUSED g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);
  gint64 expires;

  for (guint i = 0; i < n_scopes; i++)
    {
      LeaseSet *set = g_hash_table_lookup (self->slots, scopes[i].key);

      if (set == NULL || lease_set_size (set) < scopes[i].cap)
        continue;
      /* slots whose holders stopped renewing them go to other streams */
      lease_set_prune (set, now_us, NULL, NULL);
      if (lease_set_size (set) < scopes[i].cap)
        continue;

      *acquired = FALSE;
      *refused_scope = i;
      return TRUE;
    }

  *acquired = TRUE;
  *lease_id = next_lease_id (self);
  expires = expiry_from (self, now_us);
  for (guint i = 0; i < n_scopes; i++)
    {
      LeaseSet *set = g_hash_table_lookup (self->slots, scopes[i].key);

      /* a set lives while it has slots, so the table is as large as the
       * keys streaming right now */
      if (set == NULL)
        {
          set = g_new0 (LeaseSet, 1);
          set->next_expiry = G_MAXINT64;
          g_hash_table_insert (self->slots, g_strdup (scopes[i].key), set);
        }
      lease_set_add (set, *lease_id, expires);
    }

  return TRUE;
}

/* Renews (@expires > 0) or releases (0) a slot in every scope; FALSE if
 * one of them does not have it. */
static gboolean
update_slot (SymfonicMemoryStore           *self,
             guint64                        lease_id,
             const SymfonicStreamCapScope  *scopes,
             guint                          n_scopes,
             gint64                         expires)
{
  G_GNUC_UNUSED g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);
  gboolean found = TRUE;

  for (guint i = 0; i < n_scopes; i++)
    {
      LeaseSet *set = g_hash_table_lookup (self->slots, scopes[i].key);
      Lease *slot = lease_set_find (set, lease_id);

      if (slot == NULL)
        {
          found = FALSE;
          continue;
        }
      if (expires > 0)
        {
          slot->expires = expires;
          continue;
        }
      g_hash_table_remove (set->leases, &lease_id);
      if (lease_set_size (set) == 0)
        g_hash_table_remove (self->slots, scopes[i].key);
    }

  return found;
}

static void
symfonic_memory_store_cap_renew_async (SymfonicStreamCapStore        *store,
                                       guint64                        lease_id,
                                       const SymfonicStreamCapScope  *scopes,
                                       guint                          n_scopes,
                                       gint64                         now_us,
                                       GCancellable                  *cancellable,
                                       GAsyncReadyCallback            callback,
                                       gpointer                       user_data)
{
  SymfonicMemoryStore *self = SYMFONIC_MEMORY_STORE (store);
  g_autoptr(GTask) task = symfonic_store_task_new (self, symfonic_memory_store_cap_renew_async, cancellable,
                                                   callback, user_data);

  g_task_return_boolean (task, update_slot (self, lease_id, scopes, n_scopes, expiry_from (self, now_us)));
}

static gboolean
symfonic_memory_store_cap_renew_finish (SymfonicStreamCapStore  *store,
                                        GAsyncResult            *result,
                                        gboolean                *renewed,
                                        GError                 **error)
{
  g_return_val_if_fail (g_task_is_valid (result, store), FALSE);

  *renewed = g_task_propagate_boolean (G_TASK (result), NULL);
  return TRUE;
}

static void
symfonic_memory_store_release_async (SymfonicStreamCapStore        *store,
                                     guint64                        lease_id,
                                     const SymfonicStreamCapScope  *scopes,
                                     guint                          n_scopes,
                                     gint64                         now_us,
                                     GCancellable                  *cancellable,
                                     GAsyncReadyCallback            callback,
                                     gpointer                       user_data)
{
  SymfonicMemoryStore *self = SYMFONIC_MEMORY_STORE (store);
  gboolean found = update_slot (self, lease_id, scopes, n_scopes, 0);
  g_autoptr(GTask) task = NULL;

  /* given back already; the answer is for a caller that wants one */
  if (callback == NULL)
    return;

  task = symfonic_store_task_new (self, symfonic_memory_store_release_async, cancellable, callback, user_data);
  if (found)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                             "No stream slot %" G_GUINT64_FORMAT " to release", lease_id);
}

static gboolean
symfonic_memory_store_release_finish (SymfonicStreamCapStore  *store,
                                      GAsyncResult            *result,
                                      GError                 **error)
{
  g_return_val_if_fail (g_task_is_valid (result, store), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
symfonic_memory_store_cap_init (SymfonicStreamCapStoreInterface *iface)
{
  iface->get_time = symfonic_memory_store_cap_get_time;
  iface->try_acquire = symfonic_memory_store_try_acquire;
  iface->renew_async = symfonic_memory_store_cap_renew_async;
  iface->renew_finish = symfonic_memory_store_cap_renew_finish;
  iface->release_async = symfonic_memory_store_release_async;
  iface->release_finish = symfonic_memory_store_release_finish;
}

/* --- resumable runs ------------------------------------------------------ */

static SymfonicRunStore *
get_runs (SymfonicMemoryStore *self)
{
  SymfonicRunStore *runs = g_atomic_pointer_get (&self->runs);

  if (G_LIKELY (runs != NULL))
    return runs;

  g_mutex_lock (&self->runs_lock);
  if (self->runs == NULL)
    g_atomic_pointer_set (&self->runs,
                          g_object_new (SYMFONIC_TYPE_MEMORY_RUN_STORE,
                                        "max-runs", self->run_bounds.max_runs,
                                        "max-runs-per-tenant", self->run_bounds.max_runs_per_tenant,
                                        "max-runs-per-principal", self->run_bounds.max_runs_per_principal,
                                        "max-bytes", self->run_bounds.max_bytes,
                                        NULL));
  g_mutex_unlock (&self->runs_lock);

  return self->runs;
}

static gboolean
run_open (SymfonicRunStore  *store,
          const char        *run_id,
          const char        *principal_id,
          const char        *tenant_id,
          guint              max_frames,
          guint64            max_bytes,
          GError           **error)
{
  return symfonic_run_store_try_open_run (get_runs (SYMFONIC_MEMORY_STORE (store)), run_id, principal_id, tenant_id,
                                      max_frames, max_bytes, error);
}

static void
run_append (SymfonicRunStore *store,
            const char       *run_id,
            guint64           seq,
            const char       *frame,
            gsize             length)
{
  symfonic_run_store_append (get_runs (SYMFONIC_MEMORY_STORE (store)), run_id, seq, frame, length);
}

static void
run_close (SymfonicRunStore *store,
           const char       *run_id,
           guint             keep_seconds)
{
  symfonic_run_store_close_run (get_runs (SYMFONIC_MEMORY_STORE (store)), run_id, keep_seconds);
}

static GPtrArray *
run_read (SymfonicRunStore  *store,
          const char        *run_id,
          const char        *principal_id,
          const char        *tenant_id,
          guint64            after,
          gboolean          *ended,
          GError           **error)
{
  return symfonic_run_store_try_read (get_runs (SYMFONIC_MEMORY_STORE (store)), run_id, principal_id, tenant_id, after,
                                  ended, error);
}

static void
run_wait_async (SymfonicRunStore    *store,
                const char          *run_id,
                const char          *principal_id,
                const char          *tenant_id,
                guint64              after,
                GCancellable        *cancellable,
                GAsyncReadyCallback  callback,
                gpointer             user_data)
{
  symfonic_run_store_wait_async (get_runs (SYMFONIC_MEMORY_STORE (store)), run_id, principal_id, tenant_id, after,
                                 cancellable, callback, user_data);
}

static gboolean
run_wait_finish (SymfonicRunStore  *store,
                 GAsyncResult      *result,
                 GError           **error)
{
  return symfonic_run_store_wait_finish (get_runs (SYMFONIC_MEMORY_STORE (store)), result, error);
}

static void
run_note_reader (SymfonicRunStore *store,
                 const char       *run_id,
                 const char       *principal_id,
                 const char       *tenant_id,
                 gboolean          following)
{
  symfonic_run_store_note_reader (get_runs (SYMFONIC_MEMORY_STORE (store)), run_id, principal_id, tenant_id,
                                  following);
}

static void
run_get_unread_async (SymfonicRunStore    *store,
                      const char          *run_id,
                      const char          *principal_id,
                      const char          *tenant_id,
                      GCancellable        *cancellable,
                      GAsyncReadyCallback  callback,
                      gpointer             user_data)
{
  symfonic_run_store_get_unread_async (get_runs (SYMFONIC_MEMORY_STORE (store)), run_id, principal_id, tenant_id,
                                       cancellable, callback, user_data);
}

static gboolean
run_get_unread_finish (SymfonicRunStore  *store,
                       GAsyncResult      *result,
                       gint64            *unread_ms,
                       GError           **error)
{
  return symfonic_run_store_get_unread_finish (get_runs (SYMFONIC_MEMORY_STORE (store)), result, unread_ms, error);
}

static void
symfonic_memory_store_run_init (SymfonicRunStoreInterface *iface)
{
  iface->try_open_run = run_open;
  iface->append = run_append;
  iface->close_run = run_close;
  iface->try_read = run_read;
  iface->wait_async = run_wait_async;
  iface->wait_finish = run_wait_finish;
  iface->note_reader = run_note_reader;
  iface->get_unread_async = run_get_unread_async;
  iface->get_unread_finish = run_get_unread_finish;
}

/* --- the object ---------------------------------------------------------- */

static gint64
symfonic_memory_store_get_lease_ttl (SymfonicStore *store)
{
  return (gint64) SYMFONIC_MEMORY_STORE (store)->lease_ttl_ms * 1000;
}

static void
symfonic_memory_store_store_init (SymfonicStoreInterface *iface)
{
  /* the default check suits a store with nothing to connect to */
  iface->get_lease_ttl = symfonic_memory_store_get_lease_ttl;
}

static void
symfonic_memory_store_finalize (GObject *object)
{
  SymfonicMemoryStore *self = (SymfonicMemoryStore *) object;

  g_hash_table_unref (self->cells);
  g_hash_table_unref (self->budgets);
  g_hash_table_unref (self->slots);
  g_clear_object (&self->runs);
  g_mutex_clear (&self->mutex);
  g_mutex_clear (&self->runs_lock);

  G_OBJECT_CLASS (symfonic_memory_store_parent_class)->finalize (object);
}

static void
symfonic_memory_store_get_property (GObject    *object,
                                    guint       prop_id,
                                    GValue     *value,
                                    GParamSpec *pspec)
{
  SymfonicMemoryStore *self = SYMFONIC_MEMORY_STORE (object);

  if (prop_id == PROP_LEASE_TTL_MS)
    g_value_set_uint (value, self->lease_ttl_ms);
  else if (!symfonic_run_bounds_get_property (&self->run_bounds, prop_id - PROP_FIRST_RUN_BOUND, value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
symfonic_memory_store_set_property (GObject      *object,
                                    guint         prop_id,
                                    const GValue *value,
                                    GParamSpec   *pspec)
{
  SymfonicMemoryStore *self = SYMFONIC_MEMORY_STORE (object);

  if (prop_id == PROP_LEASE_TTL_MS)
    self->lease_ttl_ms = g_value_get_uint (value);
  else if (!symfonic_run_bounds_set_property (&self->run_bounds, prop_id - PROP_FIRST_RUN_BOUND, value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
symfonic_memory_store_class_init (SymfonicMemoryStoreClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = symfonic_memory_store_finalize;
  object_class->get_property = symfonic_memory_store_get_property;
  object_class->set_property = symfonic_memory_store_set_property;

  /**
   * SymfonicMemoryStore:lease-ttl-ms:
   *
   * How long a budget reservation or a stream slot lives unless its holder
   * renews it, in milliseconds; holders renew every third of it. 0: leases
   * never expire, and are not renewed.
   */
  properties[PROP_LEASE_TTL_MS] =
    g_param_spec_uint ("lease-ttl-ms", "Lease TTL (ms)",
                       "How long a reservation or stream slot lives unless renewed, in ms; 0 for ever",
                       0, 24 * 3600 * 1000, SYMFONIC_STORE_DEFAULT_LEASE_TTL_MS,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicMemoryStore:max-runs:
   *
   * As #SymfonicMemoryRunStore:max-runs, for the runs this store keeps.
   */
  /**
   * SymfonicMemoryStore:max-runs-per-tenant:
   *
   * As #SymfonicMemoryRunStore:max-runs-per-tenant.
   */
  /**
   * SymfonicMemoryStore:max-runs-per-principal:
   *
   * As #SymfonicMemoryRunStore:max-runs-per-principal.
   */
  /**
   * SymfonicMemoryStore:max-bytes:
   *
   * As #SymfonicMemoryRunStore:max-bytes.
   */
  symfonic_run_bounds_param_specs (&properties[PROP_FIRST_RUN_BOUND]);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
symfonic_memory_store_init (SymfonicMemoryStore *self)
{
  g_mutex_init (&self->mutex);
  g_mutex_init (&self->runs_lock);
  self->cells = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->budgets = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, lease_set_free);
  self->slots = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, lease_set_free);
  self->cells_sweep_at = SYMFONIC_MEMORY_STORE_MIN_SWEEP;
  self->budgets_sweep_at = SYMFONIC_MEMORY_STORE_MIN_SWEEP;
}

/**
 * symfonic_memory_store_new:
 * @lease_ttl_ms: how long its leases live unless renewed, in
 *   milliseconds; 0 for ever
 *
 * Creates an empty in-process store. A stage or route that names no store
 * makes one for itself with leases that never expire: they live and die
 * with their holders, so renewing them would be work for nothing.
 *
 * Returns: (transfer full): a new #SymfonicMemoryStore
 */
SymfonicMemoryStore *
symfonic_memory_store_new (guint lease_ttl_ms)
{
  return g_object_new (SYMFONIC_TYPE_MEMORY_STORE, "lease-ttl-ms", lease_ttl_ms, NULL);
}

/**
 * symfonic_memory_store_set_clock:
 * @self: a #SymfonicMemoryStore
 * @clock: (nullable) (scope forever): the clock, or %NULL for the monotonic clock
 * @user_data: data for @clock
 *
 * Replaces the store's clock, for tests that step time by hand. Set it
 * before the store is used.
 */
void
symfonic_memory_store_set_clock (SymfonicMemoryStore    *self,
                                 SymfonicMeterClockFunc  clock,
                                 gpointer                user_data)
{
  g_return_if_fail (SYMFONIC_IS_MEMORY_STORE (self));

  self->clock = clock;
  self->clock_data = user_data;
}

/**
 * symfonic_memory_store_get_n_keys:
 * @self: a #SymfonicMemoryStore
 *
 * Gets how many rate-limit cells and budgets the store holds; an idle one
 * is swept once it has nothing left to remember.
 *
 * Returns: how many cells and budgets the store holds, swept or not yet
 */
guint
symfonic_memory_store_get_n_keys (SymfonicMemoryStore *self)
{
  guint n;

  g_return_val_if_fail (SYMFONIC_IS_MEMORY_STORE (self), 0);

  g_mutex_lock (&self->mutex);
  n = g_hash_table_size (self->cells) + g_hash_table_size (self->budgets);
  g_mutex_unlock (&self->mutex);

  return n;
}

/**
 * symfonic_memory_store_peek_budget:
 * @self: a #SymfonicMemoryStore
 * @key: a budget
 * @charged: (out) (optional): usage charged to its current window
 * @outstanding: (out) (optional): what its leases not settled yet hold,
 *   each the larger of its reservation and what was charged to it
 *
 * Reads a budget as it stands, without rolling its window or expiring its
 * leases; for tests and diagnostics.
 *
 * Returns: %TRUE if the store has a budget for @key
 */
gboolean
symfonic_memory_store_peek_budget (SymfonicMemoryStore *self,
                                   const char          *key,
                                   guint64             *charged,
                                   guint64             *outstanding)
{
  Budget *budget;

  g_return_val_if_fail (SYMFONIC_IS_MEMORY_STORE (self), FALSE);
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

/**
 * symfonic_memory_store_peek_slots:
 * @self: a #SymfonicMemoryStore
 * @key: a set of stream slots
 *
 * Counts the slots of a set as it stands, without expiring any; for tests
 * and diagnostics.
 *
 * Returns: how many slots @key holds
 */
guint
symfonic_memory_store_peek_slots (SymfonicMemoryStore *self,
                                  const char          *key)
{
  LeaseSet *set;
  guint n;

  g_return_val_if_fail (SYMFONIC_IS_MEMORY_STORE (self), 0);
  g_return_val_if_fail (key != NULL, 0);

  g_mutex_lock (&self->mutex);
  set = g_hash_table_lookup (self->slots, key);
  n = set != NULL ? lease_set_size (set) : 0;
  g_mutex_unlock (&self->mutex);

  return n;
}
