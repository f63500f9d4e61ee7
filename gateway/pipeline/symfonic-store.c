/* symfonic-store.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-meter-store.h"
#include "symfonic-run-store.h"
#include "symfonic-store-private.h"
#include "symfonic-stream-cap-store.h"

/**
 * SymfonicStore:
 *
 * A store holds what gateway instances share: rate-limit cells and
 * budgets (#SymfonicMeterStore), the slots of capped routes
 * (#SymfonicStreamCapStore), resumable runs (#SymfonicRunStore). A
 * pipeline file declares one with a `[store:NAME]` group, and every stage
 * or route that names it shares it.
 *
 * What a holder keeps across a stream (a budget reservation, a stream
 * slot) is a lease: it has an id, and lives for the store's lease TTL
 * unless renewed. The holder renews it every third of the TTL while the
 * stream runs and gives it back by id when the stream ends, so that the
 * leases of an instance that died without giving them back are reclaimed
 * within one TTL.
 */
G_DEFINE_INTERFACE (SymfonicStore, symfonic_store, G_TYPE_OBJECT)

static gint64
symfonic_store_real_get_lease_ttl (SymfonicStore *self)
{
  return (gint64) SYMFONIC_STORE_DEFAULT_LEASE_TTL_MS * 1000;
}

static void
symfonic_store_real_check_async (SymfonicStore       *self,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);

  g_task_set_source_tag (task, symfonic_store_real_check_async);
  g_task_return_boolean (task, TRUE);
}

static gboolean
symfonic_store_real_check_finish (SymfonicStore  *self,
                                  GAsyncResult   *result,
                                  GError        **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
symfonic_store_default_init (SymfonicStoreInterface *iface)
{
  iface->get_lease_ttl = symfonic_store_real_get_lease_ttl;
  iface->check_async = symfonic_store_real_check_async;
  iface->check_finish = symfonic_store_real_check_finish;
}

/**
 * symfonic_store_get_lease_ttl:
 * @self: a #SymfonicStore
 *
 * Gets how long a lease of the store lives unless its holder renews it,
 * which holders renew every third of.
 *
 * Returns: how long a lease lives unless renewed, in microseconds; 0 when
 *   the store's leases never expire (and need no renewal)
 */
gint64
symfonic_store_get_lease_ttl (SymfonicStore *self)
{
  g_return_val_if_fail (SYMFONIC_IS_STORE (self), 0);

  return MAX (SYMFONIC_STORE_GET_IFACE (self)->get_lease_ttl (self), 0);
}

/**
 * symfonic_store_check_async:
 * @self: a #SymfonicStore
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called with the answer
 * @user_data: data for @callback
 *
 * Checks that the store can serve: a networked store connects,
 * authenticates and asks once. `symfonic-gateway --check --connect` calls
 * this for every store of a pipeline; loading a pipeline never does, so
 * that `--check` validates a file on a machine that cannot reach the
 * store.
 */
void
symfonic_store_check_async (SymfonicStore       *self,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  g_return_if_fail (SYMFONIC_IS_STORE (self));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  SYMFONIC_STORE_GET_IFACE (self)->check_async (self, cancellable, callback, user_data);
}

/**
 * symfonic_store_check_finish:
 * @self: a #SymfonicStore
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes a symfonic_store_check_async().
 *
 * Returns: %TRUE if the store can serve, %FALSE with @error set saying why
 *   not
 */
gboolean
symfonic_store_check_finish (SymfonicStore  *self,
                             GAsyncResult   *result,
                             GError        **error)
{
  g_return_val_if_fail (SYMFONIC_IS_STORE (self), FALSE);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return SYMFONIC_STORE_GET_IFACE (self)->check_finish (self, result, error);
}

/**
 * symfonic_store_lease_ttl_of:
 * @store: a store of any role
 *
 * The lease TTL of a store that may not implement #SymfonicStore.
 *
 * Returns: symfonic_store_get_lease_ttl() if @store implements
 *   #SymfonicStore, else the default
 */
gint64
symfonic_store_lease_ttl_of (GObject *store)
{
  g_return_val_if_fail (G_IS_OBJECT (store), 0);

  if (SYMFONIC_IS_STORE (store))
    return symfonic_store_get_lease_ttl (SYMFONIC_STORE (store));

  return (gint64) SYMFONIC_STORE_DEFAULT_LEASE_TTL_MS * 1000;
}

/**
 * symfonic_store_type_plays_a_role:
 * @type: a type
 *
 * Checks whether objects of @type can serve as a store: a `[store:NAME]`
 * group's type must play a role.
 *
 * Returns: whether @type implements a store role: #SymfonicMeterStore,
 *   #SymfonicStreamCapStore or #SymfonicRunStore
 */
gboolean
symfonic_store_type_plays_a_role (GType type)
{
  return g_type_is_a (type, SYMFONIC_TYPE_METER_STORE) || g_type_is_a (type, SYMFONIC_TYPE_STREAM_CAP_STORE) ||
         g_type_is_a (type, SYMFONIC_TYPE_RUN_STORE);
}

/* What a role's try_ wrapper answers for a store without the try_ method:
 * it needs I/O to answer, and the caller goes through the asynchronous
 * call instead. */
gboolean
symfonic_store_would_block (GError **error)
{
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK, "The store answers asynchronously");
  return FALSE;
}

/* A task for an answer the store decided already: the state changed, so
 * a cancellation must not report otherwise. */
GTask *
symfonic_store_task_new (gpointer             source,
                         gpointer             source_tag,
                         GCancellable        *cancellable,
                         GAsyncReadyCallback  callback,
                         gpointer             user_data)
{
  GTask *task = g_task_new (source, cancellable, callback, user_data);

  g_task_set_source_tag (task, source_tag);
  g_task_set_check_cancellable (task, FALSE);

  return task;
}

/* Completes an asynchronous call with an answer decided at once: @error
 * (taken) if it is set, else @answer. */
void
symfonic_store_return_answer (gpointer                   source,
                              gpointer                   source_tag,
                              GCancellable              *cancellable,
                              GAsyncReadyCallback        callback,
                              gpointer                   user_data,
                              const SymfonicStoreAnswer *answer,
                              GError                    *error)
{
  g_autoptr(GTask) task = symfonic_store_task_new (source, source_tag, cancellable, callback, user_data);

  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, g_memdup2 (answer, sizeof *answer), g_free);
}

gboolean
symfonic_store_propagate_answer (GAsyncResult         *result,
                                 gpointer              source,
                                 SymfonicStoreAnswer  *answer,
                                 GError              **error)
{
  g_autofree SymfonicStoreAnswer *value = NULL;

  g_return_val_if_fail (g_task_is_valid (result, source), FALSE);

  value = g_task_propagate_pointer (G_TASK (result), error);
  if (value == NULL)
    return FALSE;
  *answer = *value;

  return TRUE;
}
