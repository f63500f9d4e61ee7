/* symfonic-store.h: what every shared store has, whatever roles it plays
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
 * SYMFONIC_STORE_DEFAULT_LEASE_TTL_MS:
 *
 * How long a lease lives unless its holder renews it, by default: the
 * longest a dead instance's reservations and stream slots stay counted.
 */
#define SYMFONIC_STORE_DEFAULT_LEASE_TTL_MS 30000

#define SYMFONIC_TYPE_STORE (symfonic_store_get_type ())

G_DECLARE_INTERFACE (SymfonicStore, symfonic_store, SYMFONIC, STORE, GObject)

/**
 * SymfonicStoreInterface:
 * @parent_iface: the parent interface
 * @get_lease_ttl: how long a lease the store grants lives unless renewed,
 *   in microseconds; 0 when its leases never expire. The default is
 *   %SYMFONIC_STORE_DEFAULT_LEASE_TTL_MS.
 * @check_async: checks that the store can be reached and answers, see
 *   symfonic_store_check_async(). The default succeeds at once.
 * @check_finish: completes @check_async.
 *
 * What a store shares whatever roles it plays (#SymfonicMeterStore,
 * #SymfonicStreamCapStore, #SymfonicRunStore). Implementing it is
 * optional: a store that does not is taken to grant leases of
 * %SYMFONIC_STORE_DEFAULT_LEASE_TTL_MS and to need no connection.
 */
struct _SymfonicStoreInterface
{
  GTypeInterface parent_iface;

  gint64   (*get_lease_ttl) (SymfonicStore        *self);
  void     (*check_async)   (SymfonicStore        *self,
                             GCancellable         *cancellable,
                             GAsyncReadyCallback   callback,
                             gpointer              user_data);
  gboolean (*check_finish)  (SymfonicStore        *self,
                             GAsyncResult         *result,
                             GError              **error);
};

gint64   symfonic_store_get_lease_ttl (SymfonicStore        *self);
void     symfonic_store_check_async   (SymfonicStore        *self,
                                       GCancellable         *cancellable,
                                       GAsyncReadyCallback   callback,
                                       gpointer              user_data);
gboolean symfonic_store_check_finish  (SymfonicStore        *self,
                                       GAsyncResult         *result,
                                       GError              **error);

gint64   symfonic_store_lease_ttl_of  (GObject              *store);
gboolean symfonic_store_type_plays_a_role (GType            type);

G_END_DECLS
