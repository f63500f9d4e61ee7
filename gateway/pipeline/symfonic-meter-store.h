/* symfonic-meter-store.h: where the metering stages keep their shared state
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <gio/gio.h>

G_BEGIN_DECLS

/**
 * SymfonicMeterScope:
 * @key: the budget's key, opaque to the store
 * @limit: what the budget allows per window
 * @window_us: the window's length, in microseconds
 *
 * One budget a reservation counts against. A stage that meters several
 * scopes at once (a tenant's budget and its principal's) reserves against
 * all of them in one lease, all or nothing.
 */
typedef struct
{
  const char *key;
  guint64     limit;
  gint64      window_us;
} SymfonicMeterScope;

#define SYMFONIC_TYPE_METER_STORE (symfonic_meter_store_get_type ())

G_DECLARE_INTERFACE (SymfonicMeterStore, symfonic_meter_store, SYMFONIC, METER_STORE, GObject)

/**
 * SymfonicMeterStoreInterface:
 * @parent_iface: the parent interface
 * @get_time: the store's clock, in microseconds. Every `now_us` handed to
 *   the store must come from it, so that all callers sharing the store agree
 *   on time (a store shared by several instances uses a clock they share).
 * @take_async: one GCRA admission, see symfonic_meter_store_take_async().
 *   Optional for a store that implements @try_take, which then answers it.
 * @take_finish: completes @take_async.
 * @reserve_async: a budget reservation as a lease, see
 *   symfonic_meter_store_reserve_async(). Optional with @try_reserve.
 * @reserve_finish: completes @reserve_async.
 * @settle_async: settles a lease, see symfonic_meter_store_settle_async().
 * @settle_finish: completes @settle_async.
 * @try_take: @take_async decided at once, see
 *   symfonic_meter_store_try_take(). Optional: without it the wrapper
 *   fails with %G_IO_ERROR_WOULD_BLOCK, so that the caller goes through
 *   @take_async.
 * @try_reserve: @reserve_async decided at once, see
 *   symfonic_meter_store_try_reserve(). Optional, as @try_take.
 * @charge_async: charges a lease with usage while its stream runs, see
 *   symfonic_meter_store_charge_async(). Optional with @try_charge.
 * @charge_finish: completes @charge_async.
 * @try_charge: @charge_async decided at once. Optional, as @try_take.
 * @renew_async: extends a lease by the store's lease TTL, see
 *   symfonic_meter_store_renew_async().
 * @renew_finish: completes @renew_async.
 *
 * The operations the rate-limit and budget stages need from the state they
 * share across streams, workers and (for a networked store) instances. Each
 * is one atomic read-modify-write, so a store answers it in one round trip
 * (a Redis store: one Lua script) and the stages never hold a lock across
 * calls. They are asynchronous because a networked store does I/O. A store
 * that can decide without waiting (its state is in this process) says so
 * by implementing @try_take, @try_reserve and @try_charge: the stages ask
 * those first, and an admission then costs the request no main-loop turn.
 * Such a store may leave out the asynchronous methods they stand for:
 * their wrappers then complete with what the try_ method answered.
 *
 * A budget reservation is a lease (see #SymfonicStore): it has an id the
 * store chooses, lives for the store's lease TTL unless renewed, and is
 * settled by id. Every call about a lease names its scopes again, so a
 * store keeps a lease under its budgets' keys and needs no index of its
 * own from lease to key.
 *
 * A refusal is an answer, not an error: errors mean the store could not
 * answer at all.
 */
struct _SymfonicMeterStoreInterface
{
  GTypeInterface parent_iface;

  gint64   (*get_time)       (SymfonicMeterStore        *self);

  void     (*take_async)     (SymfonicMeterStore        *self,
                              const char                *key,
                              gint64                     emission_interval_us,
                              gint64                     burst_tolerance_us,
                              gint64                     now_us,
                              GCancellable              *cancellable,
                              GAsyncReadyCallback        callback,
                              gpointer                   user_data);
  gboolean (*take_finish)    (SymfonicMeterStore        *self,
                              GAsyncResult              *result,
                              gboolean                  *allowed,
                              gint64                    *retry_after_us,
                              GError                   **error);

  void     (*reserve_async)  (SymfonicMeterStore        *self,
                              const SymfonicMeterScope  *scopes,
                              guint                      n_scopes,
                              guint64                    amount,
                              gint64                     now_us,
                              GCancellable              *cancellable,
                              GAsyncReadyCallback        callback,
                              gpointer                   user_data);
  gboolean (*reserve_finish) (SymfonicMeterStore        *self,
                              GAsyncResult              *result,
                              gboolean                  *reserved,
                              guint64                   *lease_id,
                              gint64                    *retry_after_us,
                              guint64                   *allowance,
                              GError                   **error);

  void     (*settle_async)   (SymfonicMeterStore        *self,
                              guint64                    lease_id,
                              const SymfonicMeterScope  *scopes,
                              guint                      n_scopes,
                              guint64                    actual,
                              gint64                     now_us,
                              GCancellable              *cancellable,
                              GAsyncReadyCallback        callback,
                              gpointer                   user_data);
  gboolean (*settle_finish)  (SymfonicMeterStore        *self,
                              GAsyncResult              *result,
                              GError                   **error);

  gboolean (*try_take)       (SymfonicMeterStore        *self,
                              const char                *key,
                              gint64                     emission_interval_us,
                              gint64                     burst_tolerance_us,
                              gint64                     now_us,
                              gboolean                  *allowed,
                              gint64                    *retry_after_us,
                              GError                   **error);
  gboolean (*try_reserve)    (SymfonicMeterStore        *self,
                              const SymfonicMeterScope  *scopes,
                              guint                      n_scopes,
                              guint64                    amount,
                              gint64                     now_us,
                              gboolean                  *reserved,
                              guint64                   *lease_id,
                              gint64                    *retry_after_us,
                              guint64                   *allowance,
                              GError                   **error);

  void     (*charge_async)   (SymfonicMeterStore        *self,
                              guint64                    lease_id,
                              const SymfonicMeterScope  *scopes,
                              guint                      n_scopes,
                              guint64                    used,
                              gint64                     now_us,
                              GCancellable              *cancellable,
                              GAsyncReadyCallback        callback,
                              gpointer                   user_data);
  gboolean (*charge_finish)  (SymfonicMeterStore        *self,
                              GAsyncResult              *result,
                              gboolean                  *exhausted,
                              guint64                   *allowance,
                              GError                   **error);
  gboolean (*try_charge)     (SymfonicMeterStore        *self,
                              guint64                    lease_id,
                              const SymfonicMeterScope  *scopes,
                              guint                      n_scopes,
                              guint64                    used,
                              gint64                     now_us,
                              gboolean                  *exhausted,
                              guint64                   *allowance,
                              GError                   **error);

  void     (*renew_async)    (SymfonicMeterStore        *self,
                              guint64                    lease_id,
                              const SymfonicMeterScope  *scopes,
                              guint                      n_scopes,
                              gint64                     now_us,
                              GCancellable              *cancellable,
                              GAsyncReadyCallback        callback,
                              gpointer                   user_data);
  gboolean (*renew_finish)   (SymfonicMeterStore        *self,
                              GAsyncResult              *result,
                              gboolean                  *renewed,
                              GError                   **error);
};

gint64   symfonic_meter_store_get_time       (SymfonicMeterStore        *self);

void     symfonic_meter_store_take_async     (SymfonicMeterStore        *self,
                                              const char                *key,
                                              gint64                     emission_interval_us,
                                              gint64                     burst_tolerance_us,
                                              gint64                     now_us,
                                              GCancellable              *cancellable,
                                              GAsyncReadyCallback        callback,
                                              gpointer                   user_data);
gboolean symfonic_meter_store_take_finish    (SymfonicMeterStore        *self,
                                              GAsyncResult              *result,
                                              gboolean                  *allowed,
                                              gint64                    *retry_after_us,
                                              GError                   **error);
gboolean symfonic_meter_store_try_take       (SymfonicMeterStore        *self,
                                              const char                *key,
                                              gint64                     emission_interval_us,
                                              gint64                     burst_tolerance_us,
                                              gint64                     now_us,
                                              gboolean                  *allowed,
                                              gint64                    *retry_after_us,
                                              GError                   **error);

void     symfonic_meter_store_reserve_async  (SymfonicMeterStore        *self,
                                              const SymfonicMeterScope  *scopes,
                                              guint                      n_scopes,
                                              guint64                    amount,
                                              gint64                     now_us,
                                              GCancellable              *cancellable,
                                              GAsyncReadyCallback        callback,
                                              gpointer                   user_data);
gboolean symfonic_meter_store_reserve_finish (SymfonicMeterStore        *self,
                                              GAsyncResult              *result,
                                              gboolean                  *reserved,
                                              guint64                   *lease_id,
                                              gint64                    *retry_after_us,
                                              guint64                   *allowance,
                                              GError                   **error);
gboolean symfonic_meter_store_try_reserve    (SymfonicMeterStore        *self,
                                              const SymfonicMeterScope  *scopes,
                                              guint                      n_scopes,
                                              guint64                    amount,
                                              gint64                     now_us,
                                              gboolean                  *reserved,
                                              guint64                   *lease_id,
                                              gint64                    *retry_after_us,
                                              guint64                   *allowance,
                                              GError                   **error);

void     symfonic_meter_store_charge_async   (SymfonicMeterStore        *self,
                                              guint64                    lease_id,
                                              const SymfonicMeterScope  *scopes,
                                              guint                      n_scopes,
                                              guint64                    used,
                                              gint64                     now_us,
                                              GCancellable              *cancellable,
                                              GAsyncReadyCallback        callback,
                                              gpointer                   user_data);
gboolean symfonic_meter_store_charge_finish  (SymfonicMeterStore        *self,
                                              GAsyncResult              *result,
                                              gboolean                  *exhausted,
                                              guint64                   *allowance,
                                              GError                   **error);
gboolean symfonic_meter_store_try_charge     (SymfonicMeterStore        *self,
                                              guint64                    lease_id,
                                              const SymfonicMeterScope  *scopes,
                                              guint                      n_scopes,
                                              guint64                    used,
                                              gint64                     now_us,
                                              gboolean                  *exhausted,
                                              guint64                   *allowance,
                                              GError                   **error);

void     symfonic_meter_store_renew_async    (SymfonicMeterStore        *self,
                                              guint64                    lease_id,
                                              const SymfonicMeterScope  *scopes,
                                              guint                      n_scopes,
                                              gint64                     now_us,
                                              GCancellable              *cancellable,
                                              GAsyncReadyCallback        callback,
                                              gpointer                   user_data);
gboolean symfonic_meter_store_renew_finish   (SymfonicMeterStore        *self,
                                              GAsyncResult              *result,
                                              gboolean                  *renewed,
                                              GError                   **error);

void     symfonic_meter_store_settle_async   (SymfonicMeterStore        *self,
                                              guint64                    lease_id,
                                              const SymfonicMeterScope  *scopes,
                                              guint                      n_scopes,
                                              guint64                    actual,
                                              gint64                     now_us,
                                              GCancellable              *cancellable,
                                              GAsyncReadyCallback        callback,
                                              gpointer                   user_data);
gboolean symfonic_meter_store_settle_finish  (SymfonicMeterStore        *self,
                                              GAsyncResult              *result,
                                              GError                   **error);

G_END_DECLS
