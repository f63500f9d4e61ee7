/* symfonic-test-redis.h: a redis-server of the test's own
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>
#include <hiredis/hiredis.h>

G_BEGIN_DECLS

typedef struct _SymfonicTestRedis SymfonicTestRedis;

typedef enum {
  SYMFONIC_TEST_REDIS_TCP,
  SYMFONIC_TEST_REDIS_UNIX,
} SymfonicTestRedisTransport;

gboolean           symfonic_test_redis_skip_unless_available (void);

SymfonicTestRedis *symfonic_test_redis_start    (SymfonicTestRedisTransport  transport,
                                                 const char                 *password);
void               symfonic_test_redis_free     (SymfonicTestRedis          *self);
const char        *symfonic_test_redis_get_url  (SymfonicTestRedis          *self);
void               symfonic_test_redis_signal   (SymfonicTestRedis          *self,
                                                 int                         signum);
void               symfonic_test_redis_kill     (SymfonicTestRedis          *self);
void               symfonic_test_redis_restart  (SymfonicTestRedis          *self);
redisReply        *symfonic_test_redis_call     (SymfonicTestRedis          *self,
                                                 const char                 *format,
                                                 ...);
gint64             symfonic_test_redis_integer  (SymfonicTestRedis          *self,
                                                 const char                 *format,
                                                 ...);
char              *symfonic_test_redis_string   (SymfonicTestRedis          *self,
                                                 const char                 *format,
                                                 ...);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicTestRedis, symfonic_test_redis_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (redisReply, freeReplyObject)

G_END_DECLS
