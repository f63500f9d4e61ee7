/* symfonic-redis-script.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <gio/gio.h>

#include "symfonic-redis-script-private.h"

/* A script is its source and the SHA1 of it, computed here rather than
 * asked of the server (SCRIPT LOAD): EVALSHA can go on a connection's
 * first round trip, and every server, every instance and every restart
 * agree on the name. Immutable once made, so every worker shares one. */
struct _SymfonicRedisScript
{
  gatomicrefcount  ref_count;
  char            *source;
  gsize            length;
  char             sha1[41];
};

#define RESOURCE_DIR "/org/symfonic/gateway/redis/"

/* Scripts that hold leases start with the rules they share. */
static const struct
{
  const char *file;
  gboolean    leases;
} builtin_files[SYMFONIC_REDIS_N_SCRIPTS] = {
  [SYMFONIC_REDIS_SCRIPT_GCRA_TAKE] = { "symfonic-gcra-take.lua", FALSE },
  [SYMFONIC_REDIS_SCRIPT_BUDGET_RESERVE] = { "symfonic-budget-reserve.lua", TRUE },
  [SYMFONIC_REDIS_SCRIPT_BUDGET_CHARGE] = { "symfonic-budget-charge.lua", TRUE },
  [SYMFONIC_REDIS_SCRIPT_BUDGET_SETTLE] = { "symfonic-budget-settle.lua", TRUE },
  [SYMFONIC_REDIS_SCRIPT_LEASE_RENEW] = { "symfonic-lease-renew.lua", TRUE },
  [SYMFONIC_REDIS_SCRIPT_CAP_ACQUIRE] = { "symfonic-cap-acquire.lua", TRUE },
  [SYMFONIC_REDIS_SCRIPT_CAP_RELEASE] = { "symfonic-cap-release.lua", TRUE },
  [SYMFONIC_REDIS_SCRIPT_RUN_NOTE] = { "symfonic-run-note.lua", FALSE },
  [SYMFONIC_REDIS_SCRIPT_RUN_READ] = { "symfonic-run-read.lua", FALSE },
  [SYMFONIC_REDIS_SCRIPT_RUN_READERS] = { "symfonic-run-readers.lua", FALSE },
};

SymfonicRedisScript *
symfonic_redis_script_new (const char *source,
                           gssize      length)
{
  g_autoptr(GChecksum) checksum = g_checksum_new (G_CHECKSUM_SHA1);
  SymfonicRedisScript *self;

  g_return_val_if_fail (source != NULL, NULL);

  if (length < 0)
    length = strlen (source);
  self = g_new0 (SymfonicRedisScript, 1);
  g_atomic_ref_count_init (&self->ref_count);
  self->source = g_strndup (source, length);
  self->length = length;
  g_checksum_update (checksum, (const guchar *) source, length);
  g_strlcpy (self->sha1, g_checksum_get_string (checksum), sizeof self->sha1);

  return self;
}

SymfonicRedisScript *
symfonic_redis_script_ref (SymfonicRedisScript *self)
{
  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

void
symfonic_redis_script_unref (SymfonicRedisScript *self)
{
  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;

  g_free (self->source);
  g_free (self);
}

/* The lower-case hex SHA1 that EVALSHA names the script by. */
const char *
symfonic_redis_script_get_sha1 (SymfonicRedisScript *self)
{
  return self->sha1;
}

const char *
symfonic_redis_script_get_source (SymfonicRedisScript *self,
                                  gsize               *length)
{
  if (length != NULL)
    *length = self->length;

  return self->source;
}

static GBytes *
lookup (const char *file)
{
  g_autofree char *path = g_strconcat (RESOURCE_DIR, file, NULL);
  g_autoptr(GError) error = NULL;
  GBytes *bytes = g_resources_lookup_data (path, G_RESOURCE_LOOKUP_FLAGS_NONE, &error);

  /* built into the library: missing means a broken build */
  if (bytes == NULL)
    g_error ("The built-in script %s is missing: %s", file, error->message);

  return bytes;
}

/* One of the stores' scripts, made once per process and never freed. */
SymfonicRedisScript *
symfonic_redis_script_get_builtin (SymfonicRedisScriptId id)
{
  static SymfonicRedisScript *builtins[SYMFONIC_REDIS_N_SCRIPTS];
  static gsize made = 0;

  g_return_val_if_fail ((guint) id < SYMFONIC_REDIS_N_SCRIPTS, NULL);

  if (g_once_init_enter (&made))
    {
      g_autoptr(GBytes) prelude = lookup ("symfonic-lease.lua");

      for (guint i = 0; i < SYMFONIC_REDIS_N_SCRIPTS; i++)
        {
          g_autoptr(GBytes) body = lookup (builtin_files[i].file);
          g_autoptr(GString) source = g_string_new (NULL);
          gsize length;
          const char *data;

          if (builtin_files[i].leases)
            {
              data = g_bytes_get_data (prelude, &length);
              g_string_append_len (source, data, length);
            }
          data = g_bytes_get_data (body, &length);
          g_string_append_len (source, data, length);
          builtins[i] = symfonic_redis_script_new (source->str, source->len);
        }
      g_once_init_leave (&made, 1);
    }

  return builtins[id];
}

/* A tenant id in a hash tag: a '}' in it would end the tag early and ':'
 * could make it look like another kind of tag (see
 * symfonic_redis_route_key()), so those, '{', '%' and control bytes are
 * %-escaped; an empty id is "%", which no escaped id is. */
void
symfonic_redis_append_tag (GString    *key,
                           const char *id,
                           gsize       length)
{
  static const char hex[] = "0123456789ABCDEF";

  if (length == 0)
    {
      g_string_append_c (key, '%');
      return;
    }
  for (const guchar *p = (const guchar *) id; p < (const guchar *) id + length; p++)
    {
      if (*p == '{' || *p == '}' || *p == '%' || *p == ':' || *p < 0x20 || *p == 0x7f)
        {
          g_string_append_c (key, '%');
          g_string_append_c (key, hex[*p >> 4]);
          g_string_append_c (key, hex[*p & 0xf]);
        }
      else
        g_string_append_c (key, *p);
    }
}

static void
append_tag (GString    *key,
            const char *id)
{
  symfonic_redis_append_tag (key, id, strlen (id));
}

/* "PREFIX{TENANT}:SUFFIX": every key of a tenant under one hash tag, so
 * that a script may touch any of them in a Redis Cluster, where a
 * script's keys must all hash to one slot. */
char *
symfonic_redis_tenant_key (const char *prefix,
                           const char *tenant,
                           const char *suffix)
{
  GString *key;

  g_return_val_if_fail (prefix != NULL, NULL);
  g_return_val_if_fail (tenant != NULL, NULL);
  g_return_val_if_fail (suffix != NULL, NULL);

  key = g_string_new (prefix);
  g_string_append_c (key, '{');
  append_tag (key, tenant);
  g_string_append (key, "}:");
  g_string_append (key, suffix);

  return g_string_free (key, FALSE);
}

/* "PREFIX{route:ROUTE}:SUFFIX": what a route keeps for all its tenants
 * (its cluster-wide stream cap), in a slot of its own; an escaped tenant
 * holds no ':', so no tenant's tag is a route's. */
char *
symfonic_redis_route_key (const char *prefix,
                          const char *route,
                          const char *suffix)
{
  GString *key;

  g_return_val_if_fail (prefix != NULL, NULL);
  g_return_val_if_fail (route != NULL, NULL);
  g_return_val_if_fail (suffix != NULL, NULL);

  key = g_string_new (prefix);
  g_string_append (key, "{route:");
  append_tag (key, route);
  g_string_append (key, "}:");
  g_string_append (key, suffix);

  return g_string_free (key, FALSE);
}
