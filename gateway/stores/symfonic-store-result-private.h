/* symfonic-store-result-private.h: a store's answers, without a GTask each
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* What an answer carries at most, copied in and out. */
#define SYMFONIC_STORE_RESULT_MAX_VALUE 64

typedef struct _SymfonicStoreResultPool SymfonicStoreResultPool;

G_GNUC_INTERNAL
SymfonicStoreResultPool *symfonic_store_result_pool_new      (void);
G_GNUC_INTERNAL
void                     symfonic_store_result_pool_free     (SymfonicStoreResultPool *pool);

G_GNUC_INTERNAL
void                     symfonic_store_result_pool_complete (SymfonicStoreResultPool *pool,
                                                              gpointer                 source,
                                                              gpointer                 source_tag,
                                                              GCancellable            *cancellable,
                                                              gboolean                 check_cancellable,
                                                              GAsyncReadyCallback      callback,
                                                              gpointer                 user_data,
                                                              gconstpointer            value,
                                                              gsize                    size,
                                                              const GError            *error);

G_GNUC_INTERNAL
gboolean                 symfonic_store_result_is_valid      (GAsyncResult            *result,
                                                              gpointer                 source);
G_GNUC_INTERNAL
gboolean                 symfonic_store_result_propagate     (GAsyncResult            *result,
                                                              gpointer                 value,
                                                              gsize                    size,
                                                              GError                 **error);

G_END_DECLS
