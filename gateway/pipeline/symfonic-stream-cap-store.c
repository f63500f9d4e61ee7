/* symfonic-stream-cap-store.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-store-private.h"
#include "symfonic-stream-cap-store.h"

/**
 * SymfonicStreamCapStore:
 *
 * Where a route counts its running streams against `max-streams` and
 * `max-streams-per-tenant`. A route's `cap-store` key in a pipeline file
 * names a `[store:NAME]` group or a registered store type; without it the
 * route counts in this process, alone.
 *
 * A stream's slot is a lease (#SymfonicStore): taken at admission in every
 * scope at once or in none, renewed every third of the store's lease TTL
 * while the stream runs, given back by id exactly once when it ends
 * (completed, failed, cancelled, its client gone). The slots of an
 * instance that died are reclaimed when their leases expire.
 */
G_DEFINE_INTERFACE (SymfonicStreamCapStore, symfonic_stream_cap_store, G_TYPE_OBJECT)

static gint64
symfonic_stream_cap_store_real_get_time (SymfonicStreamCapStore *self)
{
  return g_get_monotonic_time ();
}

static void
symfonic_stream_cap_store_default_init (SymfonicStreamCapStoreInterface *iface)
{
  iface->get_time = symfonic_stream_cap_store_real_get_time;
}

static gboolean
scopes_are_valid (const SymfonicStreamCapScope *scopes,
                  guint                         n_scopes)
{
  if (scopes == NULL || n_scopes == 0)
    return FALSE;

  for (guint i = 0; i < n_scopes; i++)
    {
      if (scopes[i].key == NULL || scopes[i].cap == 0)
        return FALSE;
    }

  return TRUE;
}

/* What the caller of an acquisition learns: the lease only when taken,
 * the scope that was full only when refused. */
static gboolean
give_slot (const SymfonicStoreAnswer *answer,
           gboolean                  *acquired,
           guint                     *refused_scope,
           guint64                   *lease_id)
{
  *acquired = answer->yes;
  if (refused_scope != NULL)
    *refused_scope = answer->yes ? 0 : answer->refused_scope;
  if (lease_id != NULL)
    *lease_id = answer->yes ? answer->lease_id : 0;

  return TRUE;
}

/**
 * symfonic_stream_cap_store_get_time:
 * @self: a #SymfonicStreamCapStore
 *
 * Gets the time on the store's clock, which leases expire by.
 *
 * Returns: now on the store's clock, in microseconds
 */
gint64
symfonic_stream_cap_store_get_time (SymfonicStreamCapStore *self)
{
  g_return_val_if_fail (SYMFONIC_IS_STREAM_CAP_STORE (self), 0);

  return SYMFONIC_STREAM_CAP_STORE_GET_IFACE (self)->get_time (self);
}

/**
 * symfonic_stream_cap_store_acquire_async:
 * @self: a #SymfonicStreamCapStore
 * @scopes: (array length=n_scopes): the caps to take a slot under
 * @n_scopes: how many, at least 1
 * @now_us: now, from symfonic_stream_cap_store_get_time()
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called with the answer
 * @user_data: data for @callback
 *
 * Takes one slot in every scope if each holds fewer live leases than its
 * cap, or none. The slot is a lease that lives for the store's lease TTL
 * unless renewed, and must be released once by its id.
 */
void
symfonic_stream_cap_store_acquire_async (SymfonicStreamCapStore        *self,
                                         const SymfonicStreamCapScope  *scopes,
                                         guint                          n_scopes,
                                         gint64                         now_us,
                                         GCancellable                  *cancellable,
                                         GAsyncReadyCallback            callback,
                                         gpointer                       user_data)
{
  SymfonicStreamCapStoreInterface *iface;
  SymfonicStoreAnswer answer = { 0, };
  GError *error = NULL;

  g_return_if_fail (SYMFONIC_IS_STREAM_CAP_STORE (self));
  g_return_if_fail (scopes_are_valid (scopes, n_scopes));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  iface = SYMFONIC_STREAM_CAP_STORE_GET_IFACE (self);
  if (iface->acquire_async != NULL)
    {
      iface->acquire_async (self, scopes, n_scopes, now_us, cancellable, callback, user_data);
      return;
    }

  symfonic_stream_cap_store_try_acquire (self, scopes, n_scopes, now_us, &answer.yes, &answer.refused_scope,
                                         &answer.lease_id, &error);
  symfonic_store_return_answer (self, symfonic_stream_cap_store_acquire_async, cancellable, callback, user_data,
                                &answer, error);
}

/**
 * symfonic_stream_cap_store_acquire_finish:
 * @self: a #SymfonicStreamCapStore
 * @result: the #GAsyncResult
 * @acquired: (out): whether the slot was taken
 * @refused_scope: (out) (optional): when refused, the index of the first
 *   scope that was full; 0 when taken
 * @lease_id: (out) (optional): when taken, the slot's lease id, never 0;
 *   0 when refused
 * @error: return location for a #GError
 *
 * Finishes a symfonic_stream_cap_store_acquire_async().
 *
 * Returns: %TRUE if the store answered, %FALSE with @error set if it could not
 */
gboolean
symfonic_stream_cap_store_acquire_finish (SymfonicStreamCapStore  *self,
                                          GAsyncResult            *result,
                                          gboolean                *acquired,
                                          guint                   *refused_scope,
                                          guint64                 *lease_id,
                                          GError                 **error)
{
  SymfonicStoreAnswer answer = { 0, };

  g_return_val_if_fail (SYMFONIC_IS_STREAM_CAP_STORE (self), FALSE);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), FALSE);
  g_return_val_if_fail (acquired != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (g_async_result_is_tagged (result, symfonic_stream_cap_store_acquire_async)
        ? !symfonic_store_propagate_answer (result, self, &answer, error)
        : !SYMFONIC_STREAM_CAP_STORE_GET_IFACE (self)->acquire_finish (self, result, &answer.yes,
                                                                       &answer.refused_scope, &answer.lease_id,
                                                                       error))
    return FALSE;

  return give_slot (&answer, acquired, refused_scope, lease_id);
}

/**
 * symfonic_stream_cap_store_try_acquire:
 * @self: a #SymfonicStreamCapStore
 * @scopes: (array length=n_scopes): the caps to take a slot under
 * @n_scopes: how many, at least 1
 * @now_us: now, from symfonic_stream_cap_store_get_time()
 * @acquired: (out): whether the slot was taken
 * @refused_scope: (out) (optional): as for
 *   symfonic_stream_cap_store_acquire_finish()
 * @lease_id: (out) (optional): as for
 *   symfonic_stream_cap_store_acquire_finish()
 * @error: return location for a #GError
 *
 * The slot of symfonic_stream_cap_store_acquire_async(), taken at once if
 * the store can (its state is in this process): a capped route then
 * admits a stream without making it wait a main-loop turn.
 *
 * Returns: %TRUE if the store answered, in @acquired; %FALSE with @error
 *   set if it must be asked asynchronously (%G_IO_ERROR_WOULD_BLOCK) or
 *   could not answer at all
 */
gboolean
symfonic_stream_cap_store_try_acquire (SymfonicStreamCapStore        *self,
                                       const SymfonicStreamCapScope  *scopes,
                                       guint                          n_scopes,
                                       gint64                         now_us,
                                       gboolean                      *acquired,
                                       guint                         *refused_scope,
                                       guint64                       *lease_id,
                                       GError                       **error)
{
  SymfonicStreamCapStoreInterface *iface;
  SymfonicStoreAnswer answer = { 0, };

  g_return_val_if_fail (SYMFONIC_IS_STREAM_CAP_STORE (self), FALSE);
  g_return_val_if_fail (scopes_are_valid (scopes, n_scopes), FALSE);
  g_return_val_if_fail (acquired != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  iface = SYMFONIC_STREAM_CAP_STORE_GET_IFACE (self);
  if (iface->try_acquire == NULL)
    return symfonic_store_would_block (error);
  if (!iface->try_acquire (self, scopes, n_scopes, now_us, &answer.yes, &answer.refused_scope, &answer.lease_id,
                           error))
    return FALSE;

  return give_slot (&answer, acquired, refused_scope, lease_id);
}

/**
 * symfonic_stream_cap_store_renew_async:
 * @self: a #SymfonicStreamCapStore
 * @lease_id: a slot's lease id
 * @scopes: (array length=n_scopes): the slot's scopes, as acquired
 * @n_scopes: how many
 * @now_us: now, from symfonic_stream_cap_store_get_time()
 * @cancellable: (nullable): a #GCancellable
 * @callback: (nullable) (scope async): called with the answer
 * @user_data: data for @callback
 *
 * Extends a slot's lease to the store's lease TTL from @now_us.
 */
void
symfonic_stream_cap_store_renew_async (SymfonicStreamCapStore        *self,
                                       guint64                        lease_id,
                                       const SymfonicStreamCapScope  *scopes,
                                       guint                          n_scopes,
                                       gint64                         now_us,
                                       GCancellable                  *cancellable,
                                       GAsyncReadyCallback            callback,
                                       gpointer                       user_data)
{
  g_return_if_fail (SYMFONIC_IS_STREAM_CAP_STORE (self));
  g_return_if_fail (lease_id != 0);
  g_return_if_fail (scopes_are_valid (scopes, n_scopes));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  SYMFONIC_STREAM_CAP_STORE_GET_IFACE (self)->renew_async (self, lease_id, scopes, n_scopes, now_us, cancellable,
                                                           callback, user_data);
}

/**
 * symfonic_stream_cap_store_renew_finish:
 * @self: a #SymfonicStreamCapStore
 * @result: the #GAsyncResult
 * @renewed: (out): %TRUE if renewed; %FALSE if the store has the lease no
 *   more (it expired and its slot went to another stream)
 * @error: return location for a #GError
 *
 * Finishes a symfonic_stream_cap_store_renew_async().
 *
 * Returns: %TRUE if the store answered, %FALSE with @error set if it could not
 */
gboolean
symfonic_stream_cap_store_renew_finish (SymfonicStreamCapStore  *self,
                                        GAsyncResult            *result,
                                        gboolean                *renewed,
                                        GError                 **error)
{
  gboolean local_renewed = FALSE;

  g_return_val_if_fail (SYMFONIC_IS_STREAM_CAP_STORE (self), FALSE);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), FALSE);
  g_return_val_if_fail (renewed != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!SYMFONIC_STREAM_CAP_STORE_GET_IFACE (self)->renew_finish (self, result, &local_renewed, error))
    return FALSE;

  *renewed = local_renewed;
  return TRUE;
}

/**
 * symfonic_stream_cap_store_release_async:
 * @self: a #SymfonicStreamCapStore
 * @lease_id: a slot's lease id
 * @scopes: (array length=n_scopes): the slot's scopes, as acquired
 * @n_scopes: how many
 * @now_us: now, from symfonic_stream_cap_store_get_time()
 * @cancellable: (nullable): a #GCancellable
 * @callback: (nullable) (scope async): called when done
 * @user_data: data for @callback
 *
 * Gives a slot back in every scope. A store whose state is in this process
 * has given it back when this returns, so the next stream finds it free.
 */
void
symfonic_stream_cap_store_release_async (SymfonicStreamCapStore        *self,
                                         guint64                        lease_id,
                                         const SymfonicStreamCapScope  *scopes,
                                         guint                          n_scopes,
                                         gint64                         now_us,
                                         GCancellable                  *cancellable,
                                         GAsyncReadyCallback            callback,
                                         gpointer                       user_data)
{
  g_return_if_fail (SYMFONIC_IS_STREAM_CAP_STORE (self));
  g_return_if_fail (lease_id != 0);
  g_return_if_fail (scopes_are_valid (scopes, n_scopes));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  SYMFONIC_STREAM_CAP_STORE_GET_IFACE (self)->release_async (self, lease_id, scopes, n_scopes, now_us,
                                                             cancellable, callback, user_data);
}

/**
 * symfonic_stream_cap_store_release_finish:
 * @self: a #SymfonicStreamCapStore
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes a symfonic_stream_cap_store_release_async().
 *
 * Returns: %TRUE if the slot was given back; %FALSE with @error set if
 *   not, %G_IO_ERROR_NOT_FOUND when the store has no such lease
 */
gboolean
symfonic_stream_cap_store_release_finish (SymfonicStreamCapStore  *self,
                                          GAsyncResult            *result,
                                          GError                 **error)
{
  g_return_val_if_fail (SYMFONIC_IS_STREAM_CAP_STORE (self), FALSE);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return SYMFONIC_STREAM_CAP_STORE_GET_IFACE (self)->release_finish (self, result, error);
}
