/* symfonic-meter-store.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>

#include "symfonic-memory-meter-store.h"
#include "symfonic-meter-store.h"

/**
 * SymfonicMeterStore:
 *
 * The state the metering stages share, behind one small interface so the
 * stages do not know where it lives: in this process (`memory`), or later
 * in a store every gateway instance shares (DESIGN 8, scale-out).
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

static void
symfonic_meter_store_default_init (SymfonicMeterStoreInterface *iface)
{
  iface->get_time = symfonic_meter_store_real_get_time;
}

/**
 * symfonic_meter_store_new_for_name:
 * @name: a store name, as the stages' `store` property spells it
 * @error: return location for a #GError
 *
 * Creates a new, empty store. Each call creates its own: two stages given
 * the same name do not share state unless the store itself is shared (a
 * networked store is; `memory` is not).
 *
 * Returns: (transfer full): a new store, or %NULL for an unknown name
 */
SymfonicMeterStore *
symfonic_meter_store_new_for_name (const char  *name,
                                   GError     **error)
{
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (g_str_equal (name, "memory"))
    return SYMFONIC_METER_STORE (symfonic_memory_meter_store_new ());

  g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
               _("store: unknown store “%s” (known: memory)"), name);
  return NULL;
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
 *   be granted (> 0): the rest of the window, and as many more windows as
 *   a debt carried into them needs, when settled usage alone leaves no
 *   room; 0 when granted
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
 * @reserved is charged in full: the window may then end above its limit,
 * and the excess is carried into the windows after it, which admit that
 * much less.
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

/**
 * symfonic_meter_saturating_add:
 * @a: a count of tokens
 * @b: another
 *
 * Budgets add counts that a configuration or an upstream's report can make
 * huge; a sum that does not fit stays at the maximum rather than wrapping
 * round to a small number that would admit everything.
 *
 * Returns: @a + @b, or %G_MAXUINT64 if that overflows
 */
guint64
symfonic_meter_saturating_add (guint64 a,
                               guint64 b)
{
  return a > G_MAXUINT64 - b ? G_MAXUINT64 : a + b;
}

/**
 * symfonic_meter_saturating_mul:
 * @a: a count
 * @b: another
 *
 * Returns: @a × @b, or %G_MAXUINT64 if that overflows
 */
guint64
symfonic_meter_saturating_mul (guint64 a,
                               guint64 b)
{
  return b != 0 && a > G_MAXUINT64 / b ? G_MAXUINT64 : a * b;
}

/**
 * symfonic_meter_retry_after_seconds:
 * @retry_after_us: a wait, in microseconds
 *
 * Retry-After carries whole seconds; rounding up keeps the advice honest
 * (a client that waits that long succeeds), and a refusal never says 0.
 *
 * Returns: @retry_after_us in seconds, rounded up, at least 1
 */
guint64
symfonic_meter_retry_after_seconds (gint64 retry_after_us)
{
  if (retry_after_us <= G_USEC_PER_SEC)
    return 1;

  return ((guint64) retry_after_us + G_USEC_PER_SEC - 1) / G_USEC_PER_SEC;
}

/**
 * symfonic_meter_set_retry_after:
 * @stream: the refused stream
 * @retry_after_us: how long until a retry could succeed
 *
 * Sets `Retry-After` on the refusal about to be returned.
 */
void
symfonic_meter_set_retry_after (SymfonicStream *stream,
                                gint64          retry_after_us)
{
  char value[32];

  g_snprintf (value, sizeof value, "%" G_GUINT64_FORMAT,
              symfonic_meter_retry_after_seconds (retry_after_us));
  symfonic_stream_set_response_header (stream, "Retry-After", value);
}

/**
 * symfonic_meter_get_tenant:
 * @stream: a stream
 *
 * Returns: the tenant the auth stage set, or `"anonymous"` when no auth
 *   stage ran, so unauthenticated traffic shares one key instead of none
 */
const char *
symfonic_meter_get_tenant (SymfonicStream *stream)
{
  const char *tenant = symfonic_invocation_get_tenant_id (symfonic_stream_get_invocation (stream));

  return tenant != NULL ? tenant : "anonymous";
}

/**
 * symfonic_meter_get_principal:
 * @stream: a stream
 *
 * Returns: the principal the auth stage set, or `"anonymous"`
 */
const char *
symfonic_meter_get_principal (SymfonicStream *stream)
{
  const char *principal = symfonic_invocation_get_principal_id (symfonic_stream_get_invocation (stream));

  return principal != NULL ? principal : "anonymous";
}

static void
keep_result (GObject      *object,
             GAsyncResult *result,
             gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

/**
 * symfonic_meter_admit_sync:
 * @stage: a metering stage
 * @stream: the stream asking for admission
 * @error: return location for a #GError
 *
 * The synchronous admission hook of the metering stages, for callers that
 * cannot wait asynchronously: runs the asynchronous hook to completion on
 * a private main context, as GIO's synchronous wrappers do, so a networked
 * store blocks only this caller. The gateway itself admits asynchronously.
 *
 * Returns: %TRUE if @stage admits @stream
 */
gboolean
symfonic_meter_admit_sync (SymfonicStage   *stage,
                           SymfonicStream  *stream,
                           GError         **error)
{
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(GAsyncResult) result = NULL;
  SymfonicStageInterface *iface = SYMFONIC_STAGE_GET_IFACE (stage);

  g_main_context_push_thread_default (context);
  iface->admit_async (stage, stream, NULL, keep_result, &result);
  while (result == NULL)
    g_main_context_iteration (context, TRUE);
  g_main_context_pop_thread_default (context);

  return iface->admit_finish (stage, result, error);
}
