/* redis-test-common.h: what the Redis client's and the scripts' tests share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

#include "symfonic-error.h"
#include "symfonic-redis-client-private.h"
#include "symfonic-redis-script-private.h"
#include "symfonic-test-redis.h"

G_BEGIN_DECLS

/* every wait is bounded: a hang fails the test, not meson's timeout */
#define REDIS_TEST_WAIT_US (10 * G_USEC_PER_SEC)

void                 redis_test_init          (int                  *argc,
                                               char               ***argv);
void                 redis_test_logs_clear    (void);
GPtrArray           *redis_test_logs_dup      (void);

SymfonicRedisClient *redis_test_client_new    (const char           *url,
                                               guint                 timeout_ms);
gboolean             redis_test_wait          (gboolean            (*done) (gpointer),
                                               gpointer              data,
                                               gint64                timeout_us);
void                 redis_test_wait_up       (SymfonicRedisClient  *client);
char                *redis_test_format_reply  (const SymfonicRedisReply *reply);

/* runs a command or script on @client, iterating the thread-default main
 * context until it is answered; the reply as redis_test_format_reply()
 * writes it, or %NULL with @error set */
char                *redis_test_call          (SymfonicRedisClient  *client,
                                               GError              **error,
                                               ...) G_GNUC_NULL_TERMINATED;
char                *redis_test_eval          (SymfonicRedisClient  *client,
                                               SymfonicRedisScript  *script,
                                               const char * const   *keys,
                                               const char * const   *args,
                                               GError              **error);

G_END_DECLS
