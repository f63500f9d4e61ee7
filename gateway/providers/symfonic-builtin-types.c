/* symfonic-builtin-types.c: the types built into the library
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-anthropic-source-private.h"
#include "symfonic-builtin-private.h"
#include "symfonic-memory-store.h"
#include "symfonic-openai-source-private.h"
#include "symfonic-redis-store-private.h"

/* The in-process store, which the embedded default needs without any
 * plugin, the store instances share through Redis, which uses the
 * library's private Redis client, and the provider sources, which decode their frames with the
 * library's private JSON scan. Pipeline files name them as they name a
 * plugin's types; no plugin may take their names. */
const SymfonicBuiltinType symfonic_builtin_types[] = {
  { "memory", symfonic_memory_store_get_type },
  { "redis", symfonic_redis_store_get_type },
  { "openai", symfonic_openai_source_get_type },
  { "anthropic", symfonic_anthropic_source_get_type },
  { NULL, NULL },
};
