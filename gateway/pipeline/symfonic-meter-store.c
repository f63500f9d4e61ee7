/* symfonic-meter-store.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>

#include "symfonic-meter-store.h"

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
 * a binding); a metering stage's `store` key in a pipeline file then names
 * it, and the pipeline creates one store for that stage.
 *
 * Keys are opaque strings chosen by the stages; the store keeps one GCRA
 * cell or one budget per key. Durations and instants are microseconds on
 * the store's clock (symfonic_meter_store_get_time()).
 */
G_DEFINE_INTERFACE (SymfonicMeterStore, symfonic_meter_store, G_TYPE_OBJECT)

static gint64
symfonic_meter_store_real_get_time (SymfonicMeterStore *self)
{
  return g_get_monotonic_time ();
}

/* A store that does not say otherwise needs I/O to answer. */
static gboolean
would_block (GError **error)
{
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK, _("The meter store answers asynchronously"));
  return FALSE;
}

static gboolean
symfonic_meter_store_real_try_take (SymfonicMeterStore  *self,
                                    const char          *key,
                                    gint64               emission_interval_us,
                                    gint64               burst_tolerance_us,
                                    gint64               now_us,
                                    gboolean            *allowed,
                                    gint64              *retry_after_us,
                                    GError             **error)
{
  return would_block (error);
}

static gboolean
symfonic_meter_store_real_try_reserve (SymfonicMeterStore  *self,
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
  return would_block (error);
}

static void
symfonic_meter_store_default_init (SymfonicMeterStoreInterface *iface)
{
  iface->get_time = symfonic_meter_store_real_get_time;
  iface->try_take = symfonic_meter_store_real_try_take;
  iface->try_reserve = symfonic_meter_store_real_try_reserve;
}

/**
 * symfonic_meter_store_get_time:
 * @self: a #SymfonicMeterStore
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
  g_return_if_fail (SYMFONIC_IS_METER_STORE (self));
  g_return_if_fail (key != NULL);
  g_return_if_fail (emission_interval_us > 0);
  g_return_if_fail (burst_tolerance_us >= 0);
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  SYMFONIC_METER_STORE_GET_IFACE (self)->take_async (self, key, emission_interval_us, burst_tolerance_us,
                                                     now_us, cancellable, callback, user_data);
}

/**
 * symfonic_meter_store_take_finish:
 * @self: a #SymfonicMeterStore
 * @result: the #GAsyncResult
 * @allowed: (out): whether the arrival conforms
 * @retry_after_us: (out) (optional): when refused, how long until an
 *   arrival would conform (> 0); 0 when allowed
 * @error: return location for a #GError
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
  gboolean local_allowed = FALSE;
  gint64 local_retry = 0;

  g_return_val_if_fail (SYMFONIC_IS_METER_STORE (self), FALSE);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), FALSE);
  g_return_val_if_fail (allowed != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!SYMFONIC_METER_STORE_GET_IFACE (self)->take_finish (self, result, &local_allowed, &local_retry, error))
    return FALSE;

  *allowed = local_allowed;
  if (retry_after_us != NULL)
    *retry_after_us = local_allowed ? 0 : local_retry;

  return TRUE;
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
 *   arrival would conform (> 0); 0 when allowed
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
  gboolean local_allowed = FALSE;
  gint64 local_retry = 0;

  g_return_val_if_fail (SYMFONIC_IS_METER_STORE (self), FALSE);
  g_return_val_if_fail (key != NULL, FALSE);
  g_return_val_if_fail (emission_interval_us > 0, FALSE);
  g_return_val_if_fail (burst_tolerance_us >= 0, FALSE);
  g_return_val_if_fail (allowed != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!SYMFONIC_METER_STORE_GET_IFACE (self)->try_take (self, key, emission_interval_us, burst_tolerance_us,
                                                        now_us, &local_allowed, &local_retry, error))
    return FALSE;

  *allowed = local_allowed;
  if (retry_after_us != NULL)
    *retry_after_us = local_allowed ? 0 : local_retry;

  return TRUE;
}

/**
 * symfonic_meter_store_reserve_async:
 * @self: a #SymfonicMeterStore
 * @key: the budget
 * @amount: what to reserve, the worst case of one request
 * @limit: what the budget allows per window; at least @amount
 * @window_us: the window's length
 * @now_us: now, from symfonic_meter_store_get_time()
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called with the answer
 * @user_data: data for @callback
 *
 * Reserves @amount if it fits: the usage charged to the current window
 * plus every reservation not yet settled plus @amount must not exceed
 * @limit. So the reservations a budget ever admits never exceed it,
 * whatever runs concurrently. A granted reservation must be settled once
 * with symfonic_meter_store_settle_async().
 *
 * The window is fixed, @window_us long, and opens at the first reservation
 * after the previous one closed (windows are per key, not aligned on the
 * clock). Usage is charged to the window current when it settles.
 */
void
symfonic_meter_store_reserve_async (SymfonicMeterStore  *self,
                                    const char          *key,
                                    guint64              amount,
                                    guint64              limit,
                                    gint64               window_us,
                                    gint64               now_us,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data)
{
  g_return_if_fail (SYMFONIC_IS_METER_STORE (self));
  g_return_if_fail (key != NULL);
  g_return_if_fail (amount <= limit);
  g_return_if_fail (window_us > 0);
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  SYMFONIC_METER_STORE_GET_IFACE (self)->reserve_async (self, key, amount, limit, window_us, now_us,
                                                        cancellable, callback, user_data);
}

/**
 * symfonic_meter_store_reserve_finish:
 * @self: a #SymfonicMeterStore
 * @result: the #GAsyncResult
 * @reserved: (out): whether the reservation was granted
 * @retry_after_us: (out) (optional): when refused, how long until it could
 *   be granted (> 0), never longer than the window: its rest, when
 *   settled usage alone leaves no room; 0 when granted
 * @allowance: (out) (optional): when granted, what the request may use in
 *   all before the budget is spent: @limit less the usage charged and the
 *   other reservations in flight (at least the amount reserved); 0 when
 *   refused
 * @error: return location for a #GError
 *
 * Returns: %TRUE if the store answered, %FALSE with @error set if it could not
 */
gboolean
symfonic_meter_store_reserve_finish (SymfonicMeterStore  *self,
                                     GAsyncResult        *result,
                                     gboolean            *reserved,
                                     gint64              *retry_after_us,
                                     guint64             *allowance,
                                     GError             **error)
{
  gboolean local_reserved = FALSE;
  gint64 local_retry = 0;
  guint64 local_allowance = 0;

  g_return_val_if_fail (SYMFONIC_IS_METER_STORE (self), FALSE);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), FALSE);
  g_return_val_if_fail (reserved != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!SYMFONIC_METER_STORE_GET_IFACE (self)->reserve_finish (self, result, &local_reserved, &local_retry,
                                                              &local_allowance, error))
    return FALSE;

  *reserved = local_reserved;
  if (retry_after_us != NULL)
    *retry_after_us = local_reserved ? 0 : local_retry;
  if (allowance != NULL)
    *allowance = local_reserved ? local_allowance : 0;

  return TRUE;
}

/**
 * symfonic_meter_store_try_reserve:
 * @self: a #SymfonicMeterStore
 * @key: the budget
 * @amount: what to reserve, as for symfonic_meter_store_reserve_async()
 * @limit: what the budget allows per window; at least @amount
 * @window_us: the window's length
 * @now_us: now, from symfonic_meter_store_get_time()
 * @reserved: (out): whether the reservation was granted
 * @retry_after_us: (out) (optional): as for
 *   symfonic_meter_store_reserve_finish()
 * @allowance: (out) (optional): as for
 *   symfonic_meter_store_reserve_finish()
 * @error: return location for a #GError
 *
 * The reservation of symfonic_meter_store_reserve_async(), decided at once
 * if the store can, as symfonic_meter_store_try_take() is. A granted
 * reservation is settled with symfonic_meter_store_settle_async() like
 * any other.
 *
 * Returns: %TRUE if the store answered, in @reserved; %FALSE with @error
 *   set if it must be asked asynchronously (%G_IO_ERROR_WOULD_BLOCK) or
 *   could not answer at all
 */
gboolean
symfonic_meter_store_try_reserve (SymfonicMeterStore  *self,
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
  gboolean local_reserved = FALSE;
  gint64 local_retry = 0;
  guint64 local_allowance = 0;

  g_return_val_if_fail (SYMFONIC_IS_METER_STORE (self), FALSE);
  g_return_val_if_fail (key != NULL, FALSE);
  g_return_val_if_fail (amount <= limit, FALSE);
  g_return_val_if_fail (window_us > 0, FALSE);
  g_return_val_if_fail (reserved != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!SYMFONIC_METER_STORE_GET_IFACE (self)->try_reserve (self, key, amount, limit, window_us, now_us,
                                                           &local_reserved, &local_retry, &local_allowance,
                                                           error))
    return FALSE;

  *reserved = local_reserved;
  if (retry_after_us != NULL)
    *retry_after_us = local_reserved ? 0 : local_retry;
  if (allowance != NULL)
    *allowance = local_reserved ? local_allowance : 0;

  return TRUE;
}

/**
 * symfonic_meter_store_settle_async:
 * @self: a #SymfonicMeterStore
 * @key: the budget
 * @reserved: what symfonic_meter_store_reserve_async() granted
 * @actual: what the request really used
 * @now_us: now, from symfonic_meter_store_get_time()
 * @cancellable: (nullable): a #GCancellable
 * @callback: (nullable) (scope async): called when done
 * @user_data: data for @callback
 *
 * Settles a reservation: it stops counting and @actual is charged to the
 * current window, so `reserved − actual` is released. An @actual above
 * @reserved is charged up to the window's limit: an overrun spends the
 * window, never the windows after it, so no usage claimed, true or not,
 * locks a budget for longer than a window.
 */
void
symfonic_meter_store_settle_async (SymfonicMeterStore  *self,
                                   const char          *key,
                                   guint64              reserved,
                                   guint64              actual,
                                   gint64               now_us,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  g_return_if_fail (SYMFONIC_IS_METER_STORE (self));
  g_return_if_fail (key != NULL);
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  SYMFONIC_METER_STORE_GET_IFACE (self)->settle_async (self, key, reserved, actual, now_us,
                                                       cancellable, callback, user_data);
}

/**
 * symfonic_meter_store_settle_finish:
 * @self: a #SymfonicMeterStore
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Returns: %TRUE if the reservation was settled
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
