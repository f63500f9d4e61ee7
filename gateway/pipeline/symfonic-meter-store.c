/* symfonic-meter-store.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-meter-store.h"
#include "symfonic-store-private.h"

/**
 * SymfonicMeterStore:
 *
 * The state the metering stages share, behind one small interface so the
 * stages do not know where it lives: in this process (`memory`, the
 * default), or in a store every gateway instance shares (DESIGN 8,
 * scale-out), which a plugin provides.
 *
 * A plugin registers its store type by name like a stage type, with
 * symfonic_plugin_register_type() (or symfonic_register_stage_type() from
 * a binding). A metering stage's `store` key in a pipeline file names
 * either a `[store:NAME]` group of the file, one store that every stage
 * naming it shares, or a registered store type, of which the pipeline
 * then creates one store for that stage alone.
 *
 * Keys are opaque strings chosen by the stages; the store keeps one GCRA
 * cell or one budget per key. Durations and instants are microseconds on
 * the store's clock (symfonic_meter_store_get_time()).
 *
 * A budget reservation is a lease (#SymfonicStore): the budget stage
 * reserves its worst case at admission, charges what the stream used
 * while it runs (so that streams of other workers and instances see it),
 * renews the lease every third of the store's lease TTL, and settles it
 * once, by id, when the stream ends. A lease nobody renews any more (its
 * instance died) expires: its reservation is released, and what was
 * charged to it stays charged.
 */
G_DEFINE_INTERFACE (SymfonicMeterStore, symfonic_meter_store, G_TYPE_OBJECT)

static gint64
symfonic_meter_store_real_get_time (SymfonicMeterStore *self)
{
  return g_get_monotonic_time ();
}

static void
symfonic_meter_store_default_init (SymfonicMeterStoreInterface *iface)
{
  iface->get_time = symfonic_meter_store_real_get_time;
}

/* What the caller of a take learns: how long to wait when refused, and
 * when allowed the room left, as a wait of zero or less. */
static gboolean
give_take (const SymfonicStoreAnswer *answer,
           gboolean                  *allowed,
           gint64                    *retry_after_us)
{
  *allowed = answer->yes;
  if (retry_after_us != NULL)
    *retry_after_us = answer->yes ? MIN (answer->retry_after_us, 0) : answer->retry_after_us;

  return TRUE;
}

/* What the caller of a reservation learns: a lease and its allowance only
 * when granted, how long to wait only when refused. */
static gboolean
give_reservation (const SymfonicStoreAnswer *answer,
                  gboolean                  *reserved,
                  guint64                   *lease_id,
                  gint64                    *retry_after_us,
                  guint64                   *allowance)
{
  *reserved = answer->yes;
  if (lease_id != NULL)
    *lease_id = answer->yes ? answer->lease_id : 0;
  if (retry_after_us != NULL)
    *retry_after_us = answer->yes ? 0 : answer->retry_after_us;
  if (allowance != NULL)
    *allowance = answer->yes ? answer->allowance : 0;

  return TRUE;
}

static gboolean
give_charge (const SymfonicStoreAnswer *answer,
             gboolean                  *exhausted,
             guint64                   *allowance)
{
  *exhausted = answer->yes;
  if (allowance != NULL)
    *allowance = answer->allowance;

  return TRUE;
}

/**
 * symfonic_meter_store_get_time:
 * @self: a #SymfonicMeterStore
 *
 * Gets the time on the store's clock, which every metering decision uses: a
 * shared store's, so that instances agree.
 *
 * Returns: now on the store's clock, in microseconds
 */
gint64
symfonic_meter_store_get_time (SymfonicMeterStore *self)
{
  g_return_val_if_fail (SYMFONIC_IS_METER_STORE (self), 0);

  return SYMFONIC_METER_STORE_GET_IFACE (self)->get_time (self);
}

/**
 * symfonic_meter_store_take_async:
 * @self: a #SymfonicMeterStore
 * @key: the cell
 * @emission_interval_us: T, the time one admission costs (1 / rate)
 * @burst_tolerance_us: τ, how far ahead of its schedule a cell may run;
 *   `(burst - 1) * T` lets `burst` admissions through at once
 * @now_us: now, from symfonic_meter_store_get_time()
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called with the answer
 * @user_data: data for @callback
 *
 * One admission by the generic cell rate algorithm: the cell keeps a
 * theoretical arrival time TAT; an arrival at @now_us conforms if
 * `now ≥ TAT − τ`, and then TAT becomes `max (TAT, now) + T`. A refused
 * arrival does not change the cell; it could conform after `TAT − τ − now`.
 */
void
symfonic_meter_store_take_async (SymfonicMeterStore  *self,
                                 const char          *key,
                                 gint64               emission_interval_us,
                                 gint64               burst_tolerance_us,
                                 gint64               now_us,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  SymfonicMeterStoreInterface *iface;
  SymfonicStoreAnswer answer = { 0, };
  GError *error = NULL;

  g_return_if_fail (SYMFONIC_IS_METER_STORE (self));
  g_return_if_fail (key != NULL);
  g_return_if_fail (emission_interval_us > 0);
  g_return_if_fail (burst_tolerance_us >= 0);
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  iface = SYMFONIC_METER_STORE_GET_IFACE (self);
  if (iface->take_async != NULL)
    {
      iface->take_async (self, key, emission_interval_us, burst_tolerance_us, now_us, cancellable, callback,
                         user_data);
      return;
    }

  symfonic_meter_store_try_take (self, key, emission_interval_us, burst_tolerance_us, now_us, &answer.yes,
                                 &answer.retry_after_us, &error);
  symfonic_store_return_answer (self, symfonic_meter_store_take_async, cancellable, callback, user_data, &answer,
                                error);
}

/**
 * symfonic_meter_store_take_finish:
 * @self: a #SymfonicMeterStore
 * @result: the #GAsyncResult
 * @allowed: (out): whether the arrival conforms
 * @retry_after_us: (out) (optional): when refused, how long until an
 *   arrival would conform (> 0); when allowed, 0, or below zero for a
 *   store that tells the room left under the limit: minus one more than
 *   the microseconds by which the next arrival could come earlier than
 *   one emission interval from now (-1: the next one now would be refused)
 * @error: return location for a #GError
 *
 * Finishes a symfonic_meter_store_take_async().
 *
 * Returns: %TRUE if the store answered, %FALSE with @error set if it could not
 */
gboolean
symfonic_meter_store_take_finish (SymfonicMeterStore  *self,
                                  GAsyncResult        *result,
                                  gboolean            *allowed,
                                  gint64              *retry_after_us,
                                  GError             **error)
{
  SymfonicStoreAnswer answer = { 0, };

  g_return_val_if_fail (SYMFONIC_IS_METER_STORE (self), FALSE);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), FALSE);
  g_return_val_if_fail (allowed != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (g_async_result_is_tagged (result, symfonic_meter_store_take_async)
        ? !symfonic_store_propagate_answer (result, self, &answer, error)
        : !SYMFONIC_METER_STORE_GET_IFACE (self)->take_finish (self, result, &answer.yes, &answer.retry_after_us,
                                                               error))
    return FALSE;

  return give_take (&answer, allowed, retry_after_us);
}

/**
 * symfonic_meter_store_try_take:
 * @self: a #SymfonicMeterStore
 * @key: the cell
 * @emission_interval_us: T, as for symfonic_meter_store_take_async()
 * @burst_tolerance_us: τ, as for symfonic_meter_store_take_async()
 * @now_us: now, from symfonic_meter_store_get_time()
 * @allowed: (out): whether the arrival conforms
 * @retry_after_us: (out) (optional): when refused, how long until an
 *   arrival would conform (> 0); when allowed, 0, or below zero for a
 *   store that tells the room left under the limit: minus one more than
 *   the microseconds by which the next arrival could come earlier than
 *   one emission interval from now (-1: the next one now would be refused)
 * @error: return location for a #GError
 *
 * The admission of symfonic_meter_store_take_async(), decided at once if
 * the store can: a store whose state is in this process answers here, and
 * a metering stage then admits a request without making it wait a
 * main-loop turn. A store that needs I/O to answer fails with
 * %G_IO_ERROR_WOULD_BLOCK, having changed nothing, and the caller asks
 * symfonic_meter_store_take_async() instead.
 *
 * Returns: %TRUE if the store answered, in @allowed; %FALSE with @error
 *   set if it must be asked asynchronously (%G_IO_ERROR_WOULD_BLOCK) or
 *   could not answer at all
 */
gboolean
symfonic_meter_store_try_take (SymfonicMeterStore  *self,
                               const char          *key,
                               gint64               emission_interval_us,
                               gint64               burst_tolerance_us,
                               gint64               now_us,
                               gboolean            *allowed,
                               gint64              *retry_after_us,
                               GError             **error)
{
  SymfonicMeterStoreInterface *iface;
  SymfonicStoreAnswer answer = { 0, };

  g_return_val_if_fail (SYMFONIC_IS_METER_STORE (self), FALSE);
  g_return_val_if_fail (key != NULL, FALSE);
  g_return_val_if_fail (emission_interval_us > 0, FALSE);
  g_return_val_if_fail (burst_tolerance_us >= 0, FALSE);
  g_return_val_if_fail (allowed != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  iface = SYMFONIC_METER_STORE_GET_IFACE (self);
  if (iface->try_take == NULL)
    return symfonic_store_would_block (error);
  if (!iface->try_take (self, key, emission_interval_us, burst_tolerance_us, now_us, &answer.yes,
                        &answer.retry_after_us, error))
    return FALSE;

  return give_take (&answer, allowed, retry_after_us);
}

/* What every call about budgets checks of its scopes. */
static gboolean
scopes_are_valid (const SymfonicMeterScope *scopes,
                  guint                     n_scopes)
{
  if (scopes == NULL || n_scopes == 0)
    return FALSE;

  for (guint i = 0; i < n_scopes; i++)
    {
      if (scopes[i].key == NULL || scopes[i].window_us <= 0)
        return FALSE;
    }

  return TRUE;
}

static gboolean
amount_fits (const SymfonicMeterScope *scopes,
             guint                     n_scopes,
             guint64                   amount)
{
  for (guint i = 0; i < n_scopes; i++)
    {
      if (amount > scopes[i].limit)
        return FALSE;
    }

  return TRUE;
}

/**
 * symfonic_meter_store_reserve_async:
 * @self: a #SymfonicMeterStore
 * @scopes: (array length=n_scopes): the budgets to reserve against
 * @n_scopes: how many, at least 1
 * @amount: what to reserve, the worst case of one request; at most every
 *   scope's limit
 * @now_us: now, from symfonic_meter_store_get_time()
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called with the answer
 * @user_data: data for @callback
 *
 * Reserves @amount in every scope if it fits in all of them, or in none:
 * in each, the usage charged to the current window plus every lease not
 * yet settled (each counting the larger of its reservation and what was
 * charged to it) plus @amount must not exceed the scope's limit. So the
 * reservations a budget ever admits never exceed it, whatever runs
 * concurrently. A granted reservation is a lease with an id, which lives
 * for the store's lease TTL unless renewed with
 * symfonic_meter_store_renew_async(), and must be settled once with
 * symfonic_meter_store_settle_async().
 *
 * A scope's window is fixed, `window_us` long, and opens at the first
 * reservation after the previous one closed (windows are per key, not
 * aligned on the clock). Usage is charged to the window current when it
 * is charged.
 */
void
symfonic_meter_store_reserve_async (SymfonicMeterStore        *self,
                                    const SymfonicMeterScope  *scopes,
                                    guint                      n_scopes,
                                    guint64                    amount,
                                    gint64                     now_us,
                                    GCancellable              *cancellable,
                                    GAsyncReadyCallback        callback,
                                    gpointer                   user_data)
{
  SymfonicMeterStoreInterface *iface;
  SymfonicStoreAnswer answer = { 0, };
  GError *error = NULL;

  g_return_if_fail (SYMFONIC_IS_METER_STORE (self));
  g_return_if_fail (scopes_are_valid (scopes, n_scopes));
  g_return_if_fail (amount_fits (scopes, n_scopes, amount));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  iface = SYMFONIC_METER_STORE_GET_IFACE (self);
  if (iface->reserve_async != NULL)
    {
      iface->reserve_async (self, scopes, n_scopes, amount, now_us, cancellable, callback, user_data);
      return;
    }

  symfonic_meter_store_try_reserve (self, scopes, n_scopes, amount, now_us, &answer.yes, &answer.lease_id,
                                    &answer.retry_after_us, &answer.allowance, &error);
  symfonic_store_return_answer (self, symfonic_meter_store_reserve_async, cancellable, callback, user_data,
                                &answer, error);
}

/**
 * symfonic_meter_store_reserve_finish:
 * @self: a #SymfonicMeterStore
 * @result: the #GAsyncResult
 * @reserved: (out): whether the reservation was granted
 * @lease_id: (out) (optional): when granted, the lease's id, never 0; 0
 *   when refused
 * @retry_after_us: (out) (optional): when refused, how long until it could
 *   be granted (> 0), never longer than a window: its rest, when usage
 *   charged alone leaves no room; 0 when granted
 * @allowance: (out) (optional): when granted, what the request may use in
 *   all before a budget is spent: in the tightest scope, its limit less
 *   the usage charged and the other leases in flight (at least the amount
 *   reserved); 0 when refused
 * @error: return location for a #GError
 *
 * Finishes a symfonic_meter_store_reserve_async().
 *
 * Returns: %TRUE if the store answered, %FALSE with @error set if it could not
 */
gboolean
symfonic_meter_store_reserve_finish (SymfonicMeterStore  *self,
                                     GAsyncResult        *result,
                                     gboolean            *reserved,
                                     guint64             *lease_id,
                                     gint64              *retry_after_us,
                                     guint64             *allowance,
                                     GError             **error)
{
  SymfonicStoreAnswer answer = { 0, };

  g_return_val_if_fail (SYMFONIC_IS_METER_STORE (self), FALSE);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), FALSE);
  g_return_val_if_fail (reserved != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (g_async_result_is_tagged (result, symfonic_meter_store_reserve_async)
        ? !symfonic_store_propagate_answer (result, self, &answer, error)
        : !SYMFONIC_METER_STORE_GET_IFACE (self)->reserve_finish (self, result, &answer.yes, &answer.lease_id,
                                                                  &answer.retry_after_us, &answer.allowance,
                                                                  error))
    return FALSE;

  return give_reservation (&answer, reserved, lease_id, retry_after_us, allowance);
}

/**
 * symfonic_meter_store_try_reserve:
 * @self: a #SymfonicMeterStore
 * @scopes: (array length=n_scopes): the budgets to reserve against
 * @n_scopes: how many, at least 1
 * @amount: what to reserve, as for symfonic_meter_store_reserve_async()
 * @now_us: now, from symfonic_meter_store_get_time()
 * @reserved: (out): whether the reservation was granted
 * @lease_id: (out) (optional): as for symfonic_meter_store_reserve_finish()
 * @retry_after_us: (out) (optional): as for
 *   symfonic_meter_store_reserve_finish()
 * @allowance: (out) (optional): as for
 *   symfonic_meter_store_reserve_finish()
 * @error: return location for a #GError
 *
 * The reservation of symfonic_meter_store_reserve_async(), decided at once
 * if the store can, as symfonic_meter_store_try_take() is. A granted
 * lease is renewed and settled like any other.
 *
 * Returns: %TRUE if the store answered, in @reserved; %FALSE with @error
 *   set if it must be asked asynchronously (%G_IO_ERROR_WOULD_BLOCK) or
 *   could not answer at all
 */
gboolean
symfonic_meter_store_try_reserve (SymfonicMeterStore        *self,
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
  SymfonicMeterStoreInterface *iface;
  SymfonicStoreAnswer answer = { 0, };

  g_return_val_if_fail (SYMFONIC_IS_METER_STORE (self), FALSE);
  g_return_val_if_fail (scopes_are_valid (scopes, n_scopes), FALSE);
  g_return_val_if_fail (amount_fits (scopes, n_scopes, amount), FALSE);
  g_return_val_if_fail (reserved != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  iface = SYMFONIC_METER_STORE_GET_IFACE (self);
  if (iface->try_reserve == NULL)
    return symfonic_store_would_block (error);
  if (!iface->try_reserve (self, scopes, n_scopes, amount, now_us, &answer.yes, &answer.lease_id,
                           &answer.retry_after_us, &answer.allowance, error))
    return FALSE;

  return give_reservation (&answer, reserved, lease_id, retry_after_us, allowance);
}

/**
 * symfonic_meter_store_charge_async:
 * @self: a #SymfonicMeterStore
 * @lease_id: a lease symfonic_meter_store_reserve_async() granted
 * @scopes: (array length=n_scopes): the lease's scopes, as reserved
 * @n_scopes: how many
 * @used: what the lease's stream used so far, in all (not since the last
 *   charge: a charge repeated or overtaken by a later one changes nothing)
 * @now_us: now, from symfonic_meter_store_get_time()
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called with the answer
 * @user_data: data for @callback
 *
 * Charges a running stream's usage to its lease, so that every stream
 * sharing a budget sees it before the stream ends: the lease then counts
 * the larger of its reservation and @used. What does not fit in a scope
 * (its limit less the usage charged and the other leases) is not charged,
 * and the answer says the budget is exhausted: the stream must end. A
 * stream charges in batches (every 256 tokens or 250 ms), so it overruns
 * a budget by one batch at most.
 */
void
symfonic_meter_store_charge_async (SymfonicMeterStore        *self,
                                   guint64                    lease_id,
                                   const SymfonicMeterScope  *scopes,
                                   guint                      n_scopes,
                                   guint64                    used,
                                   gint64                     now_us,
                                   GCancellable              *cancellable,
                                   GAsyncReadyCallback        callback,
                                   gpointer                   user_data)
{
  SymfonicMeterStoreInterface *iface;
  SymfonicStoreAnswer answer = { 0, };
  GError *error = NULL;

  g_return_if_fail (SYMFONIC_IS_METER_STORE (self));
  g_return_if_fail (lease_id != 0);
  g_return_if_fail (scopes_are_valid (scopes, n_scopes));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  iface = SYMFONIC_METER_STORE_GET_IFACE (self);
  if (iface->charge_async != NULL)
    {
      iface->charge_async (self, lease_id, scopes, n_scopes, used, now_us, cancellable, callback, user_data);
      return;
    }

  symfonic_meter_store_try_charge (self, lease_id, scopes, n_scopes, used, now_us, &answer.yes, &answer.allowance,
                                   &error);
  symfonic_store_return_answer (self, symfonic_meter_store_charge_async, cancellable, callback, user_data,
                                &answer, error);
}

/**
 * symfonic_meter_store_charge_finish:
 * @self: a #SymfonicMeterStore
 * @result: the #GAsyncResult
 * @exhausted: (out): whether @used did not fit: the stream must end
 * @allowance: (out) (optional): what the lease's stream may use in all
 *   from now on: the larger of its reservation and what is charged to it,
 *   plus the room left in its tightest scope
 * @error: return location for a #GError
 *
 * Finishes a symfonic_meter_store_charge_async().
 *
 * Returns: %TRUE if the store answered; %FALSE with @error set if it could
 *   not, %G_IO_ERROR_NOT_FOUND when it has no such lease (it expired)
 */
gboolean
symfonic_meter_store_charge_finish (SymfonicMeterStore  *self,
                                    GAsyncResult        *result,
                                    gboolean            *exhausted,
                                    guint64             *allowance,
                                    GError             **error)
{
  SymfonicStoreAnswer answer = { 0, };

  g_return_val_if_fail (SYMFONIC_IS_METER_STORE (self), FALSE);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), FALSE);
  g_return_val_if_fail (exhausted != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (g_async_result_is_tagged (result, symfonic_meter_store_charge_async)
        ? !symfonic_store_propagate_answer (result, self, &answer, error)
        : !SYMFONIC_METER_STORE_GET_IFACE (self)->charge_finish (self, result, &answer.yes, &answer.allowance,
                                                                 error))
    return FALSE;

  return give_charge (&answer, exhausted, allowance);
}

/**
 * symfonic_meter_store_try_charge:
 * @self: a #SymfonicMeterStore
 * @lease_id: a lease symfonic_meter_store_reserve_async() granted
 * @scopes: (array length=n_scopes): the lease's scopes, as reserved
 * @n_scopes: how many
 * @used: what the lease's stream used so far, in all
 * @now_us: now, from symfonic_meter_store_get_time()
 * @exhausted: (out): as for symfonic_meter_store_charge_finish()
 * @allowance: (out) (optional): as for symfonic_meter_store_charge_finish()
 * @error: return location for a #GError
 *
 * The charge of symfonic_meter_store_charge_async(), decided at once if
 * the store can: the budget stage charges from its per-event hook, which
 * must not wait.
 *
 * Returns: %TRUE if the store answered; %FALSE with @error set if it must
 *   be asked asynchronously (%G_IO_ERROR_WOULD_BLOCK), has no such lease
 *   (%G_IO_ERROR_NOT_FOUND) or could not answer at all
 */
gboolean
symfonic_meter_store_try_charge (SymfonicMeterStore        *self,
                                 guint64                    lease_id,
                                 const SymfonicMeterScope  *scopes,
                                 guint                      n_scopes,
                                 guint64                    used,
                                 gint64                     now_us,
                                 gboolean                  *exhausted,
                                 guint64                   *allowance,
                                 GError                   **error)
{
  SymfonicMeterStoreInterface *iface;
  SymfonicStoreAnswer answer = { 0, };

  g_return_val_if_fail (SYMFONIC_IS_METER_STORE (self), FALSE);
  g_return_val_if_fail (lease_id != 0, FALSE);
  g_return_val_if_fail (scopes_are_valid (scopes, n_scopes), FALSE);
  g_return_val_if_fail (exhausted != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  iface = SYMFONIC_METER_STORE_GET_IFACE (self);
  if (iface->try_charge == NULL)
    return symfonic_store_would_block (error);
  if (!iface->try_charge (self, lease_id, scopes, n_scopes, used, now_us, &answer.yes, &answer.allowance, error))
    return FALSE;

  return give_charge (&answer, exhausted, allowance);
}

/**
 * symfonic_meter_store_renew_async:
 * @self: a #SymfonicMeterStore
 * @lease_id: a lease symfonic_meter_store_reserve_async() granted
 * @scopes: (array length=n_scopes): the lease's scopes, as reserved
 * @n_scopes: how many
 * @now_us: now, from symfonic_meter_store_get_time()
 * @cancellable: (nullable): a #GCancellable
 * @callback: (nullable) (scope async): called with the answer
 * @user_data: data for @callback
 *
 * Extends a lease to the store's lease TTL from @now_us. The budget stage
 * renews its streams' leases every third of the TTL while they run.
 */
void
symfonic_meter_store_renew_async (SymfonicMeterStore        *self,
                                  guint64                    lease_id,
                                  const SymfonicMeterScope  *scopes,
                                  guint                      n_scopes,
                                  gint64                     now_us,
                                  GCancellable              *cancellable,
                                  GAsyncReadyCallback        callback,
                                  gpointer                   user_data)
{
  g_return_if_fail (SYMFONIC_IS_METER_STORE (self));
  g_return_if_fail (lease_id != 0);
  g_return_if_fail (scopes_are_valid (scopes, n_scopes));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  SYMFONIC_METER_STORE_GET_IFACE (self)->renew_async (self, lease_id, scopes, n_scopes, now_us,
                                                      cancellable, callback, user_data);
}

/**
 * symfonic_meter_store_renew_finish:
 * @self: a #SymfonicMeterStore
 * @result: the #GAsyncResult
 * @renewed: (out): %TRUE if the lease was renewed; %FALSE if the store
 *   has it no more (it expired, and its reservation was released)
 * @error: return location for a #GError
 *
 * Finishes a symfonic_meter_store_renew_async().
 *
 * Returns: %TRUE if the store answered, %FALSE with @error set if it could not
 */
gboolean
symfonic_meter_store_renew_finish (SymfonicMeterStore  *self,
                                   GAsyncResult        *result,
                                   gboolean            *renewed,
                                   GError             **error)
{
  gboolean local_renewed = FALSE;

  g_return_val_if_fail (SYMFONIC_IS_METER_STORE (self), FALSE);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), FALSE);
  g_return_val_if_fail (renewed != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!SYMFONIC_METER_STORE_GET_IFACE (self)->renew_finish (self, result, &local_renewed, error))
    return FALSE;

  *renewed = local_renewed;
  return TRUE;
}

/**
 * symfonic_meter_store_settle_async:
 * @self: a #SymfonicMeterStore
 * @lease_id: a lease symfonic_meter_store_reserve_async() granted
 * @scopes: (array length=n_scopes): the lease's scopes, as reserved
 * @n_scopes: how many
 * @actual: what the request really used, in all
 * @now_us: now, from symfonic_meter_store_get_time()
 * @cancellable: (nullable): a #GCancellable
 * @callback: (nullable) (scope async): called when done
 * @user_data: data for @callback
 *
 * Settles a lease, once: it stops counting and @actual is charged to each
 * scope's current window, so what was reserved beyond it is released. An
 * @actual above what fits is charged up to the window's limit: an
 * overrun spends the window, never the windows after it, so no usage
 * claimed, true or not, locks a budget for longer than a window.
 */
void
symfonic_meter_store_settle_async (SymfonicMeterStore        *self,
                                   guint64                    lease_id,
                                   const SymfonicMeterScope  *scopes,
                                   guint                      n_scopes,
                                   guint64                    actual,
                                   gint64                     now_us,
                                   GCancellable              *cancellable,
                                   GAsyncReadyCallback        callback,
                                   gpointer                   user_data)
{
  g_return_if_fail (SYMFONIC_IS_METER_STORE (self));
  g_return_if_fail (scopes_are_valid (scopes, n_scopes));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  SYMFONIC_METER_STORE_GET_IFACE (self)->settle_async (self, lease_id, scopes, n_scopes, actual, now_us,
                                                       cancellable, callback, user_data);
}

/**
 * symfonic_meter_store_settle_finish:
 * @self: a #SymfonicMeterStore
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes a symfonic_meter_store_settle_async().
 *
 * Returns: %TRUE if the lease was settled; %FALSE with @error set if not,
 *   %G_IO_ERROR_NOT_FOUND when the store has no such lease
 */
gboolean
symfonic_meter_store_settle_finish (SymfonicMeterStore  *self,
                                    GAsyncResult        *result,
                                    GError             **error)
{
  g_return_val_if_fail (SYMFONIC_IS_METER_STORE (self), FALSE);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return SYMFONIC_METER_STORE_GET_IFACE (self)->settle_finish (self, result, error);
}
