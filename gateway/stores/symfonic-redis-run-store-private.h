/* symfonic-redis-run-store-private.h: resumable runs in Redis, read from any instance
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

#include "symfonic-redis-client-private.h"

G_BEGIN_DECLS

#define SYMFONIC_TYPE_REDIS_RUN_STORE (symfonic_redis_run_store_get_type ())

G_GNUC_INTERNAL
G_DECLARE_FINAL_TYPE (SymfonicRedisRunStore, symfonic_redis_run_store, SYMFONIC, REDIS_RUN_STORE, GObject)

G_GNUC_INTERNAL
SymfonicRedisRunStore *symfonic_redis_run_store_new       (const SymfonicRedisAddress *address,
                                                           const char                 *password,
                                                           const char                 *key_prefix,
                                                           guint                       timeout_ms,
                                                           guint                       lease_ttl_ms);
G_GNUC_INTERNAL
void                   symfonic_redis_run_store_add_stats (SymfonicRedisRunStore      *self,
                                                           SymfonicRedisStats         *sum,
                                                           guint                      *n_conns);

G_END_DECLS
