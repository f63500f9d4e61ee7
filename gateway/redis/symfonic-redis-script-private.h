/* symfonic-redis-script-private.h: Lua scripts run by EVALSHA, and the keys they touch
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

#include "symfonic-redis-client-private.h"

G_BEGIN_DECLS

/**
 * SymfonicRedisScriptId:
 * @SYMFONIC_REDIS_SCRIPT_GCRA_TAKE: symfonic-gcra-take.lua
 * @SYMFONIC_REDIS_SCRIPT_BUDGET_RESERVE: symfonic-budget-reserve.lua
 * @SYMFONIC_REDIS_SCRIPT_BUDGET_CHARGE: symfonic-budget-charge.lua
 * @SYMFONIC_REDIS_SCRIPT_BUDGET_SETTLE: symfonic-budget-settle.lua
 * @SYMFONIC_REDIS_SCRIPT_LEASE_RENEW: symfonic-lease-renew.lua
 * @SYMFONIC_REDIS_SCRIPT_CAP_ACQUIRE: symfonic-cap-acquire.lua
 * @SYMFONIC_REDIS_SCRIPT_CAP_RELEASE: symfonic-cap-release.lua
 * @SYMFONIC_REDIS_SCRIPT_RUN_NOTE: symfonic-run-note.lua
 * @SYMFONIC_REDIS_SCRIPT_RUN_READ: symfonic-run-read.lua
 * @SYMFONIC_REDIS_SCRIPT_RUN_READERS: symfonic-run-readers.lua
 *
 * The shared stores' scripts, built into the library. Each file says at
 * its top which keys and arguments it takes and what it returns.
 */
typedef enum {
  SYMFONIC_REDIS_SCRIPT_GCRA_TAKE,
  SYMFONIC_REDIS_SCRIPT_BUDGET_RESERVE,
  SYMFONIC_REDIS_SCRIPT_BUDGET_CHARGE,
  SYMFONIC_REDIS_SCRIPT_BUDGET_SETTLE,
  SYMFONIC_REDIS_SCRIPT_LEASE_RENEW,
  SYMFONIC_REDIS_SCRIPT_CAP_ACQUIRE,
  SYMFONIC_REDIS_SCRIPT_CAP_RELEASE,
  SYMFONIC_REDIS_SCRIPT_RUN_NOTE,
  SYMFONIC_REDIS_SCRIPT_RUN_READ,
  SYMFONIC_REDIS_SCRIPT_RUN_READERS,
  SYMFONIC_REDIS_N_SCRIPTS
} SymfonicRedisScriptId;

/* Amounts the scripts count exactly: Lua's numbers are doubles. */
#define SYMFONIC_REDIS_MAX_AMOUNT ((G_GINT64_CONSTANT (1) << 53) - 1)

G_GNUC_INTERNAL
SymfonicRedisScript *symfonic_redis_script_new         (const char          *source,
                                                        gssize               length);
G_GNUC_INTERNAL
SymfonicRedisScript *symfonic_redis_script_ref         (SymfonicRedisScript *self);
G_GNUC_INTERNAL
void                 symfonic_redis_script_unref       (SymfonicRedisScript *self);
G_GNUC_INTERNAL
const char          *symfonic_redis_script_get_sha1    (SymfonicRedisScript *self);
G_GNUC_INTERNAL
const char          *symfonic_redis_script_get_source  (SymfonicRedisScript *self,
                                                        gsize               *length);
G_GNUC_INTERNAL
SymfonicRedisScript *symfonic_redis_script_get_builtin (SymfonicRedisScriptId id);

G_GNUC_INTERNAL
void                 symfonic_redis_append_tag         (GString             *key,
                                                        const char          *id,
                                                        gsize                length);
G_GNUC_INTERNAL
char                *symfonic_redis_tenant_key         (const char          *prefix,
                                                        const char          *tenant,
                                                        const char          *suffix);
G_GNUC_INTERNAL
char                *symfonic_redis_route_key          (const char          *prefix,
                                                        const char          *route,
                                                        const char          *suffix);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicRedisScript, symfonic_redis_script_unref)

G_END_DECLS
