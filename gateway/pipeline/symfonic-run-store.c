/* symfonic-run-store.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-error.h"
#include "symfonic-run-store.h"
#include "symfonic-store-private.h"

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

static gboolean
would_block (GError **error)
{
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK, "The run store answers asynchronously");
  return FALSE;
}

static gboolean
symfonic_run_store_real_try_open_run (SymfonicRunStore  *self,
                                      const char        *run_id,
                                      const char        *principal_id,
                                      const char        *tenant_id,
                                      guint              max_frames,
                                      guint64            max_bytes,
                                      GError           **error)
{
  return would_block (error);
}

static GPtrArray *
symfonic_run_store_real_try_read (SymfonicRunStore  *self,
                                  const char        *run_id,
                                  const char        *principal_id,
                                  const char        *tenant_id,
                                  guint64            after,
                                  gboolean          *ended,
                                  GError           **error)
{
  would_block (error);
  return NULL;
}

/* A store that answers at once gets its asynchronous methods from its
 * try methods: the answer comes in a later main-loop turn, as any
 * asynchronous answer does. A store that implements neither says so. */
static void
symfonic_run_store_real_open_run_async (SymfonicRunStore    *self,
                                        const char          *run_id,
                                        const char          *principal_id,
                                        const char          *tenant_id,
                                        guint                max_frames,
                                        guint64              max_bytes,
                                        GCancellable        *cancellable,
                                        GAsyncReadyCallback  callback,
                                        gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  GError *error = NULL;

  g_task_set_source_tag (task, symfonic_run_store_real_open_run_async);
  if (SYMFONIC_RUN_STORE_GET_IFACE (self)->try_open_run (self, run_id, principal_id, tenant_id, max_frames, max_bytes,
                                                         &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static gboolean
symfonic_run_store_real_open_run_finish (SymfonicRunStore  *self,
                                         GAsyncResult      *result,
                                         GError           **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

typedef struct
{
  GPtrArray *frames;
  gboolean   ended;
} ReadResult;

static void
read_result_free (gpointer data)
{
  ReadResult *result = data;

  g_clear_pointer (&result->frames, g_ptr_array_unref);
  g_free (result);
}

/* takes @frames */
void
symfonic_run_store_return_read (GTask     *task,
                                GPtrArray *frames,
                                gboolean   ended)
{
  ReadResult *result = g_new0 (ReadResult, 1);

  result->frames = frames;
  result->ended = ended;
  g_task_return_pointer (task, result, read_result_free);
}

static void
symfonic_run_store_real_read_async (SymfonicRunStore    *self,
                                    const char          *run_id,
                                    const char          *principal_id,
                                    const char          *tenant_id,
                                    guint64              after,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  GPtrArray *frames;
  gboolean ended = FALSE;
  GError *error = NULL;

  g_task_set_source_tag (task, symfonic_run_store_real_read_async);
  frames = SYMFONIC_RUN_STORE_GET_IFACE (self)->try_read (self, run_id, principal_id, tenant_id, after, &ended,
                                                          &error);
  if (frames == NULL)
    g_task_return_error (task, error);
  else
    symfonic_run_store_return_read (task, frames, ended);
}

static GPtrArray *
symfonic_run_store_real_read_finish (SymfonicRunStore  *self,
                                     GAsyncResult      *result,
                                     gboolean          *ended,
                                     GError           **error)
{
  ReadResult *value;
  GPtrArray *frames;

  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  value = g_task_propagate_pointer (G_TASK (result), error);
  if (value == NULL)
    return NULL;
  frames = g_steal_pointer (&value->frames);
  *ended = value->ended;
  read_result_free (value);

  return frames;
}

/* A store that does not track its readers cannot say: a detached run
 * then ends resume-seconds after its client left, whoever came back. */
static void
symfonic_run_store_real_note_reader (SymfonicRunStore *self,
                                     const char       *run_id,
                                     const char       *principal_id,
                                     const char       *tenant_id,
                                     gboolean          following)
{
}

static void
symfonic_run_store_real_get_unread_async (SymfonicRunStore    *self,
                                          const char          *run_id,
                                          const char          *principal_id,
                                          const char          *tenant_id,
                                          GCancellable        *cancellable,
                                          GAsyncReadyCallback  callback,
                                          gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);

  g_task_set_source_tag (task, symfonic_run_store_real_get_unread_async);
  g_task_return_int (task, -1);
}

/* Takes the answer of any store that returns it with g_task_return_int(),
 * the built-in ones included. */
static gboolean
symfonic_run_store_real_get_unread_finish (SymfonicRunStore  *self,
                                           GAsyncResult      *result,
                                           gint64            *unread_ms,
                                           GError           **error)
{
  GError *local_error = NULL;
  gssize value;

  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  value = g_task_propagate_int (G_TASK (result), &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  *unread_ms = value;

  return TRUE;
}

static void
symfonic_run_store_default_init (SymfonicRunStoreInterface *iface)
{
  iface->try_open_run = symfonic_run_store_real_try_open_run;
  iface->open_run_async = symfonic_run_store_real_open_run_async;
  iface->open_run_finish = symfonic_run_store_real_open_run_finish;
  iface->try_read = symfonic_run_store_real_try_read;
  iface->read_async = symfonic_run_store_real_read_async;
  iface->read_finish = symfonic_run_store_real_read_finish;
  iface->note_reader = symfonic_run_store_real_note_reader;
  iface->get_unread_async = symfonic_run_store_real_get_unread_async;
  iface->get_unread_finish = symfonic_run_store_real_get_unread_finish;
}

/* What a store's method answered, held to the interface's rule: a value
 * or an error, never both, never neither. */
static gboolean
checked (gboolean     answered,
         GError      *local_error,
         const char  *method,
         gpointer     store,
         GError     **error)
{
  if (answered && local_error != NULL)
    {
      g_critical ("%s::%s answered and set an error: %s", G_OBJECT_TYPE_NAME (store), method, local_error->message);
      g_error_free (local_error);
      return TRUE;
    }
  if (!answered && local_error == NULL)
    {
      g_critical ("%s::%s failed without an error", G_OBJECT_TYPE_NAME (store), method);
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_FAILED, "%s::%s failed without an error",
                   G_OBJECT_TYPE_NAME (store), method);
      return FALSE;
    }
  if (local_error != NULL)
    g_propagate_error (error, local_error);

  return answered;
}

/**
 * symfonic_run_store_try_open_run:
 * @self: a #SymfonicRunStore
 * @run_id: the run's id
 * @principal_id: (nullable): the principal that started the run
 * @tenant_id: (nullable): the tenant it runs for
 * @max_frames: how many of its most recent frames to keep, at least 1
 * @max_bytes: how many bytes of its most recent frames to keep, at least 1
 * @error: return location for a #GError
 *
 * Starts keeping the frames of a run, if the store can answer without
 * waiting: a store in this process always can, and the run's stream then
 * starts without waiting a main-loop turn. A store that must ask
 * elsewhere fails with %G_IO_ERROR_WOULD_BLOCK, having changed nothing,
 * and the caller calls symfonic_run_store_open_run_async() instead. A
 * store at its capacity (in runs, or without room for @max_bytes more)
 * refuses with %SYMFONIC_ERROR_OVERLOADED.
 *
 * Returns: %TRUE if the run is kept
 */
gboolean
symfonic_run_store_try_open_run (SymfonicRunStore  *self,
                                 const char        *run_id,
                                 const char        *principal_id,
                                 const char        *tenant_id,
                                 guint              max_frames,
                                 guint64            max_bytes,
                                 GError           **error)
{
  GError *local_error = NULL;
  gboolean opened;

  g_return_val_if_fail (SYMFONIC_IS_RUN_STORE (self), FALSE);
  g_return_val_if_fail (run_id != NULL, FALSE);
  g_return_val_if_fail (max_frames >= 1 && max_bytes >= 1, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  opened = SYMFONIC_RUN_STORE_GET_IFACE (self)->try_open_run (self, run_id, principal_id, tenant_id, max_frames,
                                                              max_bytes, &local_error);
  return checked (opened, local_error, "try_open_run", self, error);
}

/**
 * symfonic_run_store_open_run_async:
 * @self: a #SymfonicRunStore
 * @run_id: the run's id
 * @principal_id: (nullable): the principal that started the run
 * @tenant_id: (nullable): the tenant it runs for
 * @max_frames: how many of its most recent frames to keep, at least 1
 * @max_bytes: how many bytes of its most recent frames to keep, at least 1
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called with the answer
 * @user_data: data for @callback
 *
 * Starts keeping the frames of a run, as symfonic_run_store_try_open_run()
 * does, for a store that must ask elsewhere. The callback runs in the
 * thread-default main context of the caller.
 */
void
symfonic_run_store_open_run_async (SymfonicRunStore    *self,
                                   const char          *run_id,
                                   const char          *principal_id,
                                   const char          *tenant_id,
                                   guint                max_frames,
                                   guint64              max_bytes,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  g_return_if_fail (SYMFONIC_IS_RUN_STORE (self));
  g_return_if_fail (run_id != NULL);
  g_return_if_fail (max_frames >= 1 && max_bytes >= 1);
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  SYMFONIC_RUN_STORE_GET_IFACE (self)->open_run_async (self, run_id, principal_id, tenant_id, max_frames, max_bytes,
                                                       cancellable, callback, user_data);
}

/**
 * symfonic_run_store_open_run_finish:
 * @self: a #SymfonicRunStore
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes symfonic_run_store_open_run_async(): the answer of a store
 * that had to be asked asynchronously whether it keeps the run.
 *
 * Returns: %TRUE if the run is kept
 */
gboolean
symfonic_run_store_open_run_finish (SymfonicRunStore  *self,
                                    GAsyncResult      *result,
                                    GError           **error)
{
  GError *local_error = NULL;
  gboolean opened;

  g_return_val_if_fail (SYMFONIC_IS_RUN_STORE (self), FALSE);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  opened = SYMFONIC_RUN_STORE_GET_IFACE (self)->open_run_finish (self, result, &local_error);
  return checked (opened, local_error, "open_run_finish", self, error);
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
 * A store that cannot keep the frame (a network store that is down) lets
 * the run go on for its client all the same: the run is then read again
 * up to the frame before at most.
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
 * symfonic_run_store_try_read:
 * @self: a #SymfonicRunStore
 * @run_id: the run's id
 * @principal_id: (nullable): the principal asking
 * @tenant_id: (nullable): the tenant asking
 * @after: the id of the last frame the reader has; 0 for none
 * @ended: (out): whether the last frame returned is the run's last
 * @error: return location for a #GError
 *
 * Returns the frames kept after @after, in order, if the store can answer
 * without waiting (a store in this process always can); a store that must
 * ask elsewhere fails with %G_IO_ERROR_WOULD_BLOCK and the caller calls
 * symfonic_run_store_read_async() instead. The first frame has the id
 * @after + 1. A run that does not exist, or that another principal or
 * tenant started, is %SYMFONIC_ERROR_NOT_FOUND (the store does not say
 * which); @after past the id of the run's last frame so far is
 * %SYMFONIC_ERROR_BAD_REQUEST (no client got such a frame); a run that no
 * longer keeps the frame after @after is %SYMFONIC_ERROR_GONE. A run
 * whose producer stopped before its end (a gateway instance that died)
 * gives the frames it kept, then, with none left after @after,
 * %SYMFONIC_ERROR_UPSTREAM_UNAVAILABLE: the run will have no more.
 *
 * Returns: (transfer full) (element-type GBytes): the frames, possibly
 *   none
 */
GPtrArray *
symfonic_run_store_try_read (SymfonicRunStore  *self,
                             const char        *run_id,
                             const char        *principal_id,
                             const char        *tenant_id,
                             guint64            after,
                             gboolean          *ended,
                             GError           **error)
{
  GError *local_error = NULL;
  GPtrArray *frames;

  g_return_val_if_fail (SYMFONIC_IS_RUN_STORE (self), NULL);
  g_return_val_if_fail (run_id != NULL && ended != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  *ended = FALSE;
  frames = SYMFONIC_RUN_STORE_GET_IFACE (self)->try_read (self, run_id, principal_id, tenant_id, after, ended,
                                                          &local_error);
  if (!checked (frames != NULL, local_error, "try_read", self, error))
    g_clear_pointer (&frames, g_ptr_array_unref);

  return frames;
}

/**
 * symfonic_run_store_read_async:
 * @self: a #SymfonicRunStore
 * @run_id: the run's id
 * @principal_id: (nullable): the principal asking
 * @tenant_id: (nullable): the tenant asking
 * @after: the id of the last frame the reader has; 0 for none
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called with the frames
 * @user_data: data for @callback
 *
 * Reads the frames kept after @after, as symfonic_run_store_try_read()
 * does, for a store that must ask elsewhere. The callback runs in the
 * thread-default main context of the caller.
 */
void
symfonic_run_store_read_async (SymfonicRunStore    *self,
                               const char          *run_id,
                               const char          *principal_id,
                               const char          *tenant_id,
                               guint64              after,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_return_if_fail (SYMFONIC_IS_RUN_STORE (self));
  g_return_if_fail (run_id != NULL);
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  SYMFONIC_RUN_STORE_GET_IFACE (self)->read_async (self, run_id, principal_id, tenant_id, after, cancellable,
                                                   callback, user_data);
}

/**
 * symfonic_run_store_read_finish:
 * @self: a #SymfonicRunStore
 * @result: the #GAsyncResult
 * @ended: (out): whether the last frame returned is the run's last
 * @error: return location for a #GError
 *
 * Finishes symfonic_run_store_read_async(): the frames a store that had
 * to be asked asynchronously keeps after the id that was given.
 *
 * Returns: (transfer full) (element-type GBytes): the frames, possibly
 *   none; %NULL with @error set as for symfonic_run_store_try_read()
 */
GPtrArray *
symfonic_run_store_read_finish (SymfonicRunStore  *self,
                                GAsyncResult      *result,
                                gboolean          *ended,
                                GError           **error)
{
  GError *local_error = NULL;
  GPtrArray *frames;

  g_return_val_if_fail (SYMFONIC_IS_RUN_STORE (self), NULL);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), NULL);
  g_return_val_if_fail (ended != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  *ended = FALSE;
  frames = SYMFONIC_RUN_STORE_GET_IFACE (self)->read_finish (self, result, ended, &local_error);
  if (!checked (frames != NULL, local_error, "read_finish", self, error))
    g_clear_pointer (&frames, g_ptr_array_unref);

  return frames;
}

/**
 * symfonic_run_store_wait_async:
 * @self: a #SymfonicRunStore
 * @run_id: the run's id
 * @principal_id: (nullable): the principal asking, who read the run
 * @tenant_id: (nullable): the tenant asking
 * @after: the id of the last frame the reader has
 * @cancellable: (nullable): a #GCancellable: a store may then forget the
 *   wait before it would have answered
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
                               const char          *principal_id,
                               const char          *tenant_id,
                               guint64              after,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_return_if_fail (SYMFONIC_IS_RUN_STORE (self));
  g_return_if_fail (run_id != NULL);
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  SYMFONIC_RUN_STORE_GET_IFACE (self)->wait_async (self, run_id, principal_id, tenant_id, after, cancellable,
                                                   callback, user_data);
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

/**
 * symfonic_run_store_note_reader:
 * @self: a #SymfonicRunStore
 * @run_id: the run's id
 * @principal_id: (nullable): the principal reading, who read the run
 * @tenant_id: (nullable): the tenant reading
 * @following: %TRUE when a reader starts following the run, %FALSE when
 *   it leaves
 *
 * Says that a reader whose first read of the run succeeded follows it
 * now, or that it left. A run whose client left is kept running for
 * #SymfonicRoute:resume-seconds without a reader: its producer asks
 * symfonic_run_store_get_unread_async() before it gives up, so a reader
 * that comes back restarts that clock. Called once with %TRUE and once
 * with %FALSE per reader, on the same thread; a store that does not
 * track readers ignores it.
 */
void
symfonic_run_store_note_reader (SymfonicRunStore *self,
                                const char       *run_id,
                                const char       *principal_id,
                                const char       *tenant_id,
                                gboolean          following)
{
  g_return_if_fail (SYMFONIC_IS_RUN_STORE (self));
  g_return_if_fail (run_id != NULL);

  SYMFONIC_RUN_STORE_GET_IFACE (self)->note_reader (self, run_id, principal_id, tenant_id, following);
}

/**
 * symfonic_run_store_get_unread_async:
 * @self: a #SymfonicRunStore
 * @run_id: the run's id
 * @principal_id: (nullable): the principal that started the run
 * @tenant_id: (nullable): the tenant it runs for
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called with the answer
 * @user_data: data for @callback
 *
 * Asks how long the run has gone without a reader, as told by
 * symfonic_run_store_note_reader(): readers of a store shared between
 * instances may follow the run from another gateway. The callback runs in
 * the thread-default main context of the caller.
 */
void
symfonic_run_store_get_unread_async (SymfonicRunStore    *self,
                                     const char          *run_id,
                                     const char          *principal_id,
                                     const char          *tenant_id,
                                     GCancellable        *cancellable,
                                     GAsyncReadyCallback  callback,
                                     gpointer             user_data)
{
  g_return_if_fail (SYMFONIC_IS_RUN_STORE (self));
  g_return_if_fail (run_id != NULL);
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  SYMFONIC_RUN_STORE_GET_IFACE (self)->get_unread_async (self, run_id, principal_id, tenant_id, cancellable,
                                                         callback, user_data);
}

/**
 * symfonic_run_store_get_unread_finish:
 * @self: a #SymfonicRunStore
 * @result: the #GAsyncResult
 * @unread_ms: (out): the milliseconds since the last reader left; 0
 *   while one follows the run, -1 when none ever did, the run is not
 *   known or the store does not track readers
 * @error: return location for a #GError
 *
 * Finishes symfonic_run_store_get_unread_async().
 *
 * Returns: %TRUE if @unread_ms was set
 */
gboolean
symfonic_run_store_get_unread_finish (SymfonicRunStore  *self,
                                      GAsyncResult      *result,
                                      gint64            *unread_ms,
                                      GError           **error)
{
  GError *local_error = NULL;
  gboolean answered;

  g_return_val_if_fail (SYMFONIC_IS_RUN_STORE (self), FALSE);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), FALSE);
  g_return_val_if_fail (unread_ms != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  *unread_ms = -1;
  answered = SYMFONIC_RUN_STORE_GET_IFACE (self)->get_unread_finish (self, result, unread_ms, &local_error);
  return checked (answered, local_error, "get_unread_finish", self, error);
}
