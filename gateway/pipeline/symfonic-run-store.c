/* symfonic-run-store.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-run-store.h"

/**
 * SymfonicRunStore:
 *
 * Where a route with #SymfonicRoute:resume keeps the recent frames of each
 * run, so that a client whose connection broke reads on from the frame
 * after the last one it got (`Last-Event-ID`), on any worker, or, with a
 * store shared between instances, on any gateway.
 *
 * A run is opened once with the principal and tenant that started it, gets
 * its frames in order, numbered from 1 with no gap, and is closed after its
 * terminal frame; it stays readable for a while after that. A store keeps
 * its own copy of each frame and hands frames out as #GBytes: every
 * reader shares them.
 * The server owns one store for its lifetime (#SymfonicServer:run-store),
 * so runs outlive a reload of the pipeline. #SymfonicMemoryRunStore is the
 * in-process default.
 */

G_DEFINE_INTERFACE (SymfonicRunStore, symfonic_run_store, G_TYPE_OBJECT)

static void
symfonic_run_store_default_init (SymfonicRunStoreInterface *iface)
{
}

/**
 * symfonic_run_store_open_run:
 * @self: a #SymfonicRunStore
 * @run_id: the run's id
 * @principal_id: (nullable): the principal that started the run
 * @tenant_id: (nullable): the tenant it runs for
 * @max_frames: how many of its most recent frames to keep, at least 1
 * @max_bytes: how many bytes of its most recent frames to keep, at least 1
 * @error: return location for a #GError
 *
 * Starts keeping the frames of a run. A store at its capacity (in runs,
 * or without room for @max_bytes more) refuses with
 * %SYMFONIC_ERROR_OVERLOADED.
 *
 * Returns: %TRUE if the run is kept
 */
gboolean
symfonic_run_store_open_run (SymfonicRunStore  *self,
                             const char        *run_id,
                             const char        *principal_id,
                             const char        *tenant_id,
                             guint              max_frames,
                             guint64            max_bytes,
                             GError           **error)
{
  g_return_val_if_fail (SYMFONIC_IS_RUN_STORE (self), FALSE);
  g_return_val_if_fail (run_id != NULL, FALSE);
  g_return_val_if_fail (max_frames >= 1 && max_bytes >= 1, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return SYMFONIC_RUN_STORE_GET_IFACE (self)->open_run (self, run_id, principal_id, tenant_id, max_frames, max_bytes,
                                                        error);
}

/**
 * symfonic_run_store_append:
 * @self: a #SymfonicRunStore
 * @run_id: an open run's id
 * @seq: the frame's id: one more than the previous frame's, 1 for the first
 * @frame: (array length=length) (element-type guint8): the frame's bytes,
 *   whole, as the client gets them; the store copies what it keeps
 * @length: the frame's length in bytes, at least 1
 *
 * Keeps the next frame of a run; the oldest go when the run would hold
 * more than its `max_frames` or `max_bytes`. A frame larger than
 * `max_bytes` is not kept: the run is then readable from the next one.
 */
void
symfonic_run_store_append (SymfonicRunStore *self,
                           const char       *run_id,
                           guint64           seq,
                           const char       *frame,
                           gsize             length)
{
  g_return_if_fail (SYMFONIC_IS_RUN_STORE (self));
  g_return_if_fail (run_id != NULL && seq >= 1 && frame != NULL && length >= 1);

  SYMFONIC_RUN_STORE_GET_IFACE (self)->append (self, run_id, seq, frame, length);
}

/**
 * symfonic_run_store_close_run:
 * @self: a #SymfonicRunStore
 * @run_id: an open run's id
 * @keep_seconds: how long the run stays readable
 *
 * Says that the run's last frame, its terminal, is in. Readers that wait
 * are told; after @keep_seconds the run may be forgotten.
 */
void
symfonic_run_store_close_run (SymfonicRunStore *self,
                              const char       *run_id,
                              guint             keep_seconds)
{
  g_return_if_fail (SYMFONIC_IS_RUN_STORE (self));
  g_return_if_fail (run_id != NULL);

  SYMFONIC_RUN_STORE_GET_IFACE (self)->close_run (self, run_id, keep_seconds);
}

/**
 * symfonic_run_store_read:
 * @self: a #SymfonicRunStore
 * @run_id: the run's id
 * @principal_id: (nullable): the principal asking
 * @tenant_id: (nullable): the tenant asking
 * @after: the id of the last frame the reader has; 0 for none
 * @ended: (out): whether the last frame returned is the run's last
 * @error: return location for a #GError
 *
 * Returns the frames kept after @after, in order: the first has the id
 * @after + 1. A run that does not exist, or that another principal or
 * tenant started, is %SYMFONIC_ERROR_NOT_FOUND (the store does not say
 * which); @after past the id of the run's last frame so far is
 * %SYMFONIC_ERROR_BAD_REQUEST (no client got such a frame); a run that no
 * longer keeps the frame after @after is %SYMFONIC_ERROR_GONE.
 *
 * Returns: (transfer full) (element-type GBytes): the frames, possibly
 *   none
 */
GPtrArray *
symfonic_run_store_read (SymfonicRunStore  *self,
                         const char        *run_id,
                         const char        *principal_id,
                         const char        *tenant_id,
                         guint64            after,
                         gboolean          *ended,
                         GError           **error)
{
  g_return_val_if_fail (SYMFONIC_IS_RUN_STORE (self), NULL);
  g_return_val_if_fail (run_id != NULL && ended != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return SYMFONIC_RUN_STORE_GET_IFACE (self)->read (self, run_id, principal_id, tenant_id, after, ended, error);
}

/**
 * symfonic_run_store_wait_async:
 * @self: a #SymfonicRunStore
 * @run_id: the run's id
 * @after: the id of the last frame the reader has
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when a frame after @after is in, the
 *   run ended, or it was forgotten
 * @user_data: data for @callback
 *
 * Waits for the run to go on past @after. The callback runs in the
 * thread-default main context of the caller.
 */
void
symfonic_run_store_wait_async (SymfonicRunStore    *self,
                               const char          *run_id,
                               guint64              after,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_return_if_fail (SYMFONIC_IS_RUN_STORE (self));
  g_return_if_fail (run_id != NULL);

  SYMFONIC_RUN_STORE_GET_IFACE (self)->wait_async (self, run_id, after, cancellable, callback, user_data);
}

/**
 * symfonic_run_store_wait_finish:
 * @self: a #SymfonicRunStore
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes a symfonic_run_store_wait_async().
 *
 * Returns: %TRUE if there may be more to read; %FALSE with @error set if
 *   the wait was cancelled
 */
gboolean
symfonic_run_store_wait_finish (SymfonicRunStore  *self,
                                GAsyncResult      *result,
                                GError           **error)
{
  g_return_val_if_fail (SYMFONIC_IS_RUN_STORE (self), FALSE);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), FALSE);

  return SYMFONIC_RUN_STORE_GET_IFACE (self)->wait_finish (self, result, error);
}
