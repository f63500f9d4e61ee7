/* symfonic-redis-store-private.h: the store that instances share through Redis
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/**
 * SymfonicRedisOnFailure:
 * @SYMFONIC_REDIS_ON_FAILURE_DENY: refuse what needs the store, with
 *   Retry-After, until it answers again
 * @SYMFONIC_REDIS_ON_FAILURE_ALLOW: admit as if the store had said yes
 * @SYMFONIC_REDIS_ON_FAILURE_LOCAL: decide in this instance, each instance
 *   enforcing its share (limit ÷ #SymfonicRedisStore:instances)
 *
 * What an admission gets while Redis does not answer.
 */
typedef enum {
  SYMFONIC_REDIS_ON_FAILURE_DENY,
  SYMFONIC_REDIS_ON_FAILURE_ALLOW,
  SYMFONIC_REDIS_ON_FAILURE_LOCAL,
} SymfonicRedisOnFailure;

/**
 * SymfonicRedisOutcome:
 * @SYMFONIC_REDIS_OUTCOME_ADMITTED: Redis admitted
 * @SYMFONIC_REDIS_OUTCOME_REFUSED: Redis refused
 * @SYMFONIC_REDIS_OUTCOME_DENIED: no answer; refused by on-failure=deny
 * @SYMFONIC_REDIS_OUTCOME_ALLOWED: no answer; admitted by on-failure=allow
 * @SYMFONIC_REDIS_OUTCOME_LOCAL_ADMITTED: no answer; admitted by this
 *   instance's share (on-failure=local)
 * @SYMFONIC_REDIS_OUTCOME_LOCAL_REFUSED: no answer; refused by this
 *   instance's share (on-failure=local)
 *
 * What `symfonic_store_decisions_total` counts, by its `outcome` label.
 */
typedef enum {
  SYMFONIC_REDIS_OUTCOME_ADMITTED,
  SYMFONIC_REDIS_OUTCOME_REFUSED,
  SYMFONIC_REDIS_OUTCOME_DENIED,
  SYMFONIC_REDIS_OUTCOME_ALLOWED,
  SYMFONIC_REDIS_OUTCOME_LOCAL_ADMITTED,
  SYMFONIC_REDIS_OUTCOME_LOCAL_REFUSED,
  SYMFONIC_REDIS_N_OUTCOMES
} SymfonicRedisOutcome;

#define SYMFONIC_TYPE_REDIS_ON_FAILURE (symfonic_redis_on_failure_get_type ())
G_GNUC_INTERNAL
GType symfonic_redis_on_failure_get_type (void) G_GNUC_CONST;

#define SYMFONIC_TYPE_REDIS_STORE (symfonic_redis_store_get_type ())

G_DECLARE_FINAL_TYPE (SymfonicRedisStore, symfonic_redis_store, SYMFONIC, REDIS_STORE, GObject)

G_GNUC_INTERNAL
void symfonic_redis_store_render_metrics (SymfonicRedisStore *self,
                                          const char         *name,
                                          GString            *out);
G_GNUC_INTERNAL
void symfonic_redis_store_render_help    (GString            *out);

G_END_DECLS
