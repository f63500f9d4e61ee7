/* symfonic-store-private.h: what the store roles share in their wrappers
 * and the stores of this process
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-store.h"

G_BEGIN_DECLS

/* A store's answer to an admission (take, reserve, charge, acquire), as a
 * task carries it when the store decided at once. */
typedef struct
{
  /* the answer to the call's question: allowed? reserved? exhausted?
   * acquired? */
  gboolean yes;
  gint64   retry_after_us;
  guint64  lease_id;
  guint64  allowance;
  guint    refused_scope;
} SymfonicStoreAnswer;

G_GNUC_INTERNAL
gboolean symfonic_store_would_block      (GError                     **error);
G_GNUC_INTERNAL
GTask   *symfonic_store_task_new         (gpointer                     source,
                                          gpointer                     source_tag,
                                          GCancellable                *cancellable,
                                          GAsyncReadyCallback          callback,
                                          gpointer                     user_data);
G_GNUC_INTERNAL
void     symfonic_store_return_answer    (gpointer                     source,
                                          gpointer                     source_tag,
                                          GCancellable                *cancellable,
                                          GAsyncReadyCallback          callback,
                                          gpointer                     user_data,
                                          const SymfonicStoreAnswer   *answer,
                                          GError                      *error);
G_GNUC_INTERNAL
gboolean symfonic_store_propagate_answer (GAsyncResult                *result,
                                          gpointer                     source,
                                          SymfonicStoreAnswer         *answer,
                                          GError                     **error);

/* A run store's answer to a read, in the shape the run store role's
 * default read_finish() takes apart: a store answering later returns its
 * frames through this and needs no finish of its own. */
G_GNUC_INTERNAL
void     symfonic_run_store_return_read  (GTask                       *task,
                                          GPtrArray                   *frames,
                                          gboolean                     ended);

G_END_DECLS
