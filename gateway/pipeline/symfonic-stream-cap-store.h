/* symfonic-stream-cap-store.h: where capped routes count their running streams
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
 * SymfonicStreamCapScope:
 * @key: the set of slots, opaque to the store
 * @cap: how many slots the set has, at least 1
 *
 * One cap a stream slot counts against: a route's `max-streams`, or its
 * `max-streams-per-tenant` for one tenant.
 */
typedef struct
{
  const char *key;
  guint       cap;
} SymfonicStreamCapScope;

#define SYMFONIC_TYPE_STREAM_CAP_STORE (symfonic_stream_cap_store_get_type ())

G_DECLARE_INTERFACE (SymfonicStreamCapStore, symfonic_stream_cap_store, SYMFONIC, STREAM_CAP_STORE, GObject)

/**
 * SymfonicStreamCapStoreInterface:
 * @parent_iface: the parent interface
 * @get_time: the store's clock, in microseconds, as
 *   symfonic_meter_store_get_time() is the meter store's. The default is
 *   the monotonic clock.
 * @acquire_async: takes a slot in every scope, see
 *   symfonic_stream_cap_store_acquire_async(). Optional for a store that
 *   implements @try_acquire, which then answers it.
 * @acquire_finish: completes @acquire_async.
 * @try_acquire: @acquire_async decided at once. Optional: without it the
 *   wrapper fails with %G_IO_ERROR_WOULD_BLOCK.
 * @renew_async: extends a slot's lease, see
 *   symfonic_stream_cap_store_renew_async().
 * @renew_finish: completes @renew_async.
 * @release_async: gives a slot back, see
 *   symfonic_stream_cap_store_release_async().
 * @release_finish: completes @release_async.
 *
 * The operations a route with `max-streams` or `max-streams-per-tenant`
 * needs to count its running streams in a store, which several instances
 * may share: then the caps hold for the whole cluster. Each scope is a
 * set of leases (see #SymfonicStore); a slot is taken only while the set
 * holds fewer live leases than its cap, expired ones pruned first, and is
 * given back by its lease id.
 */
struct _SymfonicStreamCapStoreInterface
{
  GTypeInterface parent_iface;

  gint64   (*get_time)       (SymfonicStreamCapStore        *self);

  void     (*acquire_async)  (SymfonicStreamCapStore        *self,
                              const SymfonicStreamCapScope  *scopes,
                              guint                          n_scopes,
                              gint64                         now_us,
                              GCancellable                  *cancellable,
                              GAsyncReadyCallback            callback,
                              gpointer                       user_data);
  gboolean (*acquire_finish) (SymfonicStreamCapStore        *self,
                              GAsyncResult                  *result,
                              gboolean                      *acquired,
                              guint                         *refused_scope,
                              guint64                       *lease_id,
                              GError                       **error);
  gboolean (*try_acquire)    (SymfonicStreamCapStore        *self,
                              const SymfonicStreamCapScope  *scopes,
                              guint                          n_scopes,
                              gint64                         now_us,
                              gboolean                      *acquired,
                              guint                         *refused_scope,
                              guint64                       *lease_id,
                              GError                       **error);

  void     (*renew_async)    (SymfonicStreamCapStore        *self,
                              guint64                        lease_id,
                              const SymfonicStreamCapScope  *scopes,
                              guint                          n_scopes,
                              gint64                         now_us,
                              GCancellable                  *cancellable,
                              GAsyncReadyCallback            callback,
                              gpointer                       user_data);
  gboolean (*renew_finish)   (SymfonicStreamCapStore        *self,
                              GAsyncResult                  *result,
                              gboolean                      *renewed,
                              GError                       **error);

  void     (*release_async)  (SymfonicStreamCapStore        *self,
                              guint64                        lease_id,
                              const SymfonicStreamCapScope  *scopes,
                              guint                          n_scopes,
                              gint64                         now_us,
                              GCancellable                  *cancellable,
                              GAsyncReadyCallback            callback,
                              gpointer                       user_data);
  gboolean (*release_finish) (SymfonicStreamCapStore        *self,
                              GAsyncResult                  *result,
                              GError                       **error);
};

gint64   symfonic_stream_cap_store_get_time       (SymfonicStreamCapStore        *self);
void     symfonic_stream_cap_store_acquire_async  (SymfonicStreamCapStore        *self,
                                                   const SymfonicStreamCapScope  *scopes,
                                                   guint                          n_scopes,
                                                   gint64                         now_us,
                                                   GCancellable                  *cancellable,
                                                   GAsyncReadyCallback            callback,
                                                   gpointer                       user_data);
gboolean symfonic_stream_cap_store_acquire_finish (SymfonicStreamCapStore        *self,
                                                   GAsyncResult                  *result,
                                                   gboolean                      *acquired,
                                                   guint                         *refused_scope,
                                                   guint64                       *lease_id,
                                                   GError                       **error);
gboolean symfonic_stream_cap_store_try_acquire    (SymfonicStreamCapStore        *self,
                                                   const SymfonicStreamCapScope  *scopes,
                                                   guint                          n_scopes,
                                                   gint64                         now_us,
                                                   gboolean                      *acquired,
                                                   guint                         *refused_scope,
                                                   guint64                       *lease_id,
                                                   GError                       **error);
void     symfonic_stream_cap_store_renew_async    (SymfonicStreamCapStore        *self,
                                                   guint64                        lease_id,
                                                   const SymfonicStreamCapScope  *scopes,
                                                   guint                          n_scopes,
                                                   gint64                         now_us,
                                                   GCancellable                  *cancellable,
                                                   GAsyncReadyCallback            callback,
                                                   gpointer                       user_data);
gboolean symfonic_stream_cap_store_renew_finish   (SymfonicStreamCapStore        *self,
                                                   GAsyncResult                  *result,
                                                   gboolean                      *renewed,
                                                   GError                       **error);
void     symfonic_stream_cap_store_release_async  (SymfonicStreamCapStore        *self,
                                                   guint64                        lease_id,
                                                   const SymfonicStreamCapScope  *scopes,
                                                   guint                          n_scopes,
                                                   gint64                         now_us,
                                                   GCancellable                  *cancellable,
                                                   GAsyncReadyCallback            callback,
                                                   gpointer                       user_data);
gboolean symfonic_stream_cap_store_release_finish (SymfonicStreamCapStore        *self,
                                                   GAsyncResult                  *result,
                                                   GError                       **error);

G_END_DECLS
