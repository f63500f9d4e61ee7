/* symfonic-run-store.h: where resumable runs keep their recent frames
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <gio/gio.h>

G_BEGIN_DECLS

#define SYMFONIC_TYPE_RUN_STORE (symfonic_run_store_get_type ())

G_DECLARE_INTERFACE (SymfonicRunStore, symfonic_run_store, SYMFONIC, RUN_STORE, GObject)

/**
 * SymfonicRunStoreInterface:
 * @g_iface: the parent interface
 * @try_open_run: starts keeping the frames of a run at once, or fails
 *   with %G_IO_ERROR_WOULD_BLOCK for a store that must be asked
 *   asynchronously
 * @open_run_async: starts keeping the frames of a run
 * @open_run_finish: finishes @open_run_async
 * @append: keeps the next frame of a run
 * @close_run: says the run's last frame is in
 * @try_read: returns the frames kept after an id at once, or fails with
 *   %G_IO_ERROR_WOULD_BLOCK for a store that must be asked
 *   asynchronously
 * @read_async: reads the frames kept after an id
 * @read_finish: finishes @read_async
 * @wait_async: waits for a frame after an id, or the run's end
 * @wait_finish: finishes @wait_async
 * @note_reader: says a reader started or stopped following a run
 * @get_unread_async: asks how long a run has gone without a reader
 * @get_unread_finish: finishes @get_unread_async; the default takes an
 *   answer returned with g_task_return_int() on a #GTask whose source
 *   object is the store
 *
 * What a store of resumable runs implements. Every method may be called
 * from any worker thread at once. A store whose runs are in the process
 * implements the try methods and gets the asynchronous ones from them; a
 * store across the network implements the asynchronous ones, and its try
 * methods answer when they can without I/O. The reader methods, last in
 * the structure, default to a store that does not track readers: a store
 * built without them keeps working, and a detached run in it ends
 * resume-seconds after its client left, whoever came back.
 */
struct _SymfonicRunStoreInterface
{
  GTypeInterface g_iface;

  gboolean   (*try_open_run)    (SymfonicRunStore     *self,
                                 const char           *run_id,
                                 const char           *principal_id,
                                 const char           *tenant_id,
                                 guint                 max_frames,
                                 guint64               max_bytes,
                                 GError              **error);
  void       (*open_run_async)  (SymfonicRunStore     *self,
                                 const char           *run_id,
                                 const char           *principal_id,
                                 const char           *tenant_id,
                                 guint                 max_frames,
                                 guint64               max_bytes,
                                 GCancellable         *cancellable,
                                 GAsyncReadyCallback   callback,
                                 gpointer              user_data);
  gboolean   (*open_run_finish) (SymfonicRunStore     *self,
                                 GAsyncResult         *result,
                                 GError              **error);
  void       (*append)          (SymfonicRunStore     *self,
                                 const char           *run_id,
                                 guint64               seq,
                                 const char           *frame,
                                 gsize                 length);
  void       (*close_run)       (SymfonicRunStore     *self,
                                 const char           *run_id,
                                 guint                 keep_seconds);
  GPtrArray *(*try_read)        (SymfonicRunStore     *self,
                                 const char           *run_id,
                                 const char           *principal_id,
                                 const char           *tenant_id,
                                 guint64               after,
                                 gboolean             *ended,
                                 GError              **error);
  void       (*read_async)      (SymfonicRunStore     *self,
                                 const char           *run_id,
                                 const char           *principal_id,
                                 const char           *tenant_id,
                                 guint64               after,
                                 GCancellable         *cancellable,
                                 GAsyncReadyCallback   callback,
                                 gpointer              user_data);
  GPtrArray *(*read_finish)     (SymfonicRunStore     *self,
                                 GAsyncResult         *result,
                                 gboolean             *ended,
                                 GError              **error);
  void       (*wait_async)      (SymfonicRunStore     *self,
                                 const char           *run_id,
                                 const char           *principal_id,
                                 const char           *tenant_id,
                                 guint64               after,
                                 GCancellable         *cancellable,
                                 GAsyncReadyCallback   callback,
                                 gpointer              user_data);
  gboolean   (*wait_finish)     (SymfonicRunStore     *self,
                                 GAsyncResult         *result,
                                 GError              **error);
  void       (*note_reader)     (SymfonicRunStore     *self,
                                 const char           *run_id,
                                 const char           *principal_id,
                                 const char           *tenant_id,
                                 gboolean              following);
  void       (*get_unread_async) (SymfonicRunStore    *self,
                                  const char          *run_id,
                                  const char          *principal_id,
                                  const char          *tenant_id,
                                  GCancellable        *cancellable,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data);
  gboolean   (*get_unread_finish) (SymfonicRunStore   *self,
                                   GAsyncResult       *result,
                                   gint64             *unread_ms,
                                   GError            **error);
};

gboolean   symfonic_run_store_try_open_run    (SymfonicRunStore     *self,
                                               const char           *run_id,
                                               const char           *principal_id,
                                               const char           *tenant_id,
                                               guint                 max_frames,
                                               guint64               max_bytes,
                                               GError              **error);
void       symfonic_run_store_open_run_async  (SymfonicRunStore     *self,
                                               const char           *run_id,
                                               const char           *principal_id,
                                               const char           *tenant_id,
                                               guint                 max_frames,
                                               guint64               max_bytes,
                                               GCancellable         *cancellable,
                                               GAsyncReadyCallback   callback,
                                               gpointer              user_data);
gboolean   symfonic_run_store_open_run_finish (SymfonicRunStore     *self,
                                               GAsyncResult         *result,
                                               GError              **error);
void       symfonic_run_store_append          (SymfonicRunStore     *self,
                                               const char           *run_id,
                                               guint64               seq,
                                               const char           *frame,
                                               gsize                 length);
void       symfonic_run_store_close_run       (SymfonicRunStore     *self,
                                               const char           *run_id,
                                               guint                 keep_seconds);
GPtrArray *symfonic_run_store_try_read        (SymfonicRunStore     *self,
                                               const char           *run_id,
                                               const char           *principal_id,
                                               const char           *tenant_id,
                                               guint64               after,
                                               gboolean             *ended,
                                               GError              **error);
void       symfonic_run_store_read_async      (SymfonicRunStore     *self,
                                               const char           *run_id,
                                               const char           *principal_id,
                                               const char           *tenant_id,
                                               guint64               after,
                                               GCancellable         *cancellable,
                                               GAsyncReadyCallback   callback,
                                               gpointer              user_data);
GPtrArray *symfonic_run_store_read_finish     (SymfonicRunStore     *self,
                                               GAsyncResult         *result,
                                               gboolean             *ended,
                                               GError              **error);
void       symfonic_run_store_wait_async      (SymfonicRunStore     *self,
                                               const char           *run_id,
                                               const char           *principal_id,
                                               const char           *tenant_id,
                                               guint64               after,
                                               GCancellable         *cancellable,
                                               GAsyncReadyCallback   callback,
                                               gpointer              user_data);
gboolean   symfonic_run_store_wait_finish     (SymfonicRunStore     *self,
                                               GAsyncResult         *result,
                                               GError              **error);
void       symfonic_run_store_note_reader     (SymfonicRunStore     *self,
                                               const char           *run_id,
                                               const char           *principal_id,
                                               const char           *tenant_id,
                                               gboolean              following);
void       symfonic_run_store_get_unread_async (SymfonicRunStore    *self,
                                                const char          *run_id,
                                                const char          *principal_id,
                                                const char          *tenant_id,
                                                GCancellable        *cancellable,
                                                GAsyncReadyCallback  callback,
                                                gpointer             user_data);
gboolean   symfonic_run_store_get_unread_finish (SymfonicRunStore   *self,
                                                 GAsyncResult       *result,
                                                 gint64             *unread_ms,
                                                 GError            **error);

G_END_DECLS
