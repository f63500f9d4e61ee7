/* symfonic-stream-cap.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <glib/gi18n-lib.h>

#include "symfonic-error.h"
#include "symfonic-stream-cap-private.h"

/* A route's streams of every worker, counted against its max-streams and,
 * per tenant, its max-streams-per-tenant. A stream claims its place once,
 * when it is admitted, and gives it back once, when it ends: the counts
 * change twice per stream and never per event. The route total is an
 * atomic; the tenants' counts take a lock, and only when the route has a
 * per-tenant cap. A tenant's entry lives while it has streams, so the
 * table is as large as the tenants streaming right now. */

/* What a refusal tells the client: streams end all the time, so a place
 * is usually free again soon. */
#define CAP_RETRY_AFTER "1"

typedef struct
{
  guint streams;
  char  tenant[];
} TenantCount;

struct _SymfonicStreamCap
{
  guint       limits[SYMFONIC_STREAM_CAP_N_KINDS];
  int         streams;
  guint64     refused[SYMFONIC_STREAM_CAP_N_KINDS];
  GMutex      lock;
  /* tenant name -> TenantCount */
  GHashTable *tenants;
};

/* A stream's place, kept on the stream from its claim to its release. */
typedef struct
{
  SymfonicStreamCap *cap;
  TenantCount       *tenant;
} Claim;

static G_DEFINE_QUARK (symfonic-stream-cap-claim, claim)

SymfonicStreamCap *
symfonic_stream_cap_new (void)
{
  SymfonicStreamCap *self = g_new0 (SymfonicStreamCap, 1);

  g_mutex_init (&self->lock);
  self->tenants = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free);

  return self;
}

void
symfonic_stream_cap_free (SymfonicStreamCap *self)
{
  /* a stream releases its claim by its dispose, and holds its route,
   * which owns this, until then */
  g_assert (g_hash_table_size (self->tenants) == 0);

  g_hash_table_unref (self->tenants);
  g_mutex_clear (&self->lock);
  g_free (self);
}

/* Only while the route is assembled, before it serves. */
void
symfonic_stream_cap_set_limit (SymfonicStreamCap     *self,
                               SymfonicStreamCapKind  kind,
                               guint                  limit)
{
  self->limits[kind] = limit;
}

guint
symfonic_stream_cap_get_limit (SymfonicStreamCap     *self,
                               SymfonicStreamCapKind  kind)
{
  return self->limits[kind];
}

guint64
symfonic_stream_cap_get_refused (SymfonicStreamCap     *self,
                                 SymfonicStreamCapKind  kind)
{
  return __atomic_load_n (&self->refused[kind], __ATOMIC_RELAXED);
}

/* Takes a place for @tenant, or returns NULL when it has all of its own. */
static TenantCount *
claim_tenant (SymfonicStreamCap *self,
              const char        *tenant)
{
  G_GNUC_UNUSED g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  TenantCount *count = g_hash_table_lookup (self->tenants, tenant);

  if (count == NULL)
    {
      gsize length = strlen (tenant);

      count = g_malloc0 (sizeof (TenantCount) + length + 1);
      memcpy (count->tenant, tenant, length);
      g_hash_table_insert (self->tenants, count->tenant, count);
    }
  else if (count->streams >= self->limits[SYMFONIC_STREAM_CAP_TENANT])
    {
      return NULL;
    }

  count->streams++;
  return count;
}

static void
release_tenant (SymfonicStreamCap *self,
                TenantCount       *count)
{
  G_GNUC_UNUSED g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  if (--count->streams == 0)
    g_hash_table_remove (self->tenants, count->tenant);
}

static void
claim_free (gpointer data)
{
  Claim *claim = data;

  if (claim->tenant != NULL)
    release_tenant (claim->cap, claim->tenant);
  g_atomic_int_add (&claim->cap->streams, -1);
  g_free (claim);
}

static gboolean
refuse (SymfonicStreamCap      *self,
        SymfonicStream         *stream,
        SymfonicStreamCapKind   kind,
        GError                **error)
{
  __atomic_fetch_add (&self->refused[kind], 1, __ATOMIC_RELAXED);
  symfonic_stream_set_response_header (stream, "Retry-After", CAP_RETRY_AFTER);
  g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_OVERLOADED,
                       kind == SYMFONIC_STREAM_CAP_ROUTE ? _("The route has all the streams its max-streams allows")
                                                         : _("The tenant has all the streams the route’s max-streams-per-tenant allows"));
  return FALSE;
}

/* Counts @stream against the caps until symfonic_stream_cap_release(), or
 * refuses it with an overloaded error and a Retry-After. Streams without a
 * tenant (a route without authentication) share one count. A route without
 * caps counts nothing. */
gboolean
symfonic_stream_cap_claim (SymfonicStreamCap  *self,
                           SymfonicStream     *stream,
                           GError            **error)
{
  guint route_limit = self->limits[SYMFONIC_STREAM_CAP_ROUTE];
  guint tenant_limit = self->limits[SYMFONIC_STREAM_CAP_TENANT];
  TenantCount *tenant = NULL;
  Claim *claim;

  if (route_limit == 0 && tenant_limit == 0)
    return TRUE;

  if ((guint) g_atomic_int_add (&self->streams, 1) >= route_limit && route_limit != 0)
    {
      g_atomic_int_add (&self->streams, -1);
      return refuse (self, stream, SYMFONIC_STREAM_CAP_ROUTE, error);
    }

  if (tenant_limit != 0)
    {
      const char *name = symfonic_invocation_get_tenant_id (symfonic_stream_get_invocation (stream));

      tenant = claim_tenant (self, name != NULL ? name : "");
      if (tenant == NULL)
        {
          g_atomic_int_add (&self->streams, -1);
          return refuse (self, stream, SYMFONIC_STREAM_CAP_TENANT, error);
        }
    }

  claim = g_new (Claim, 1);
  claim->cap = self;
  claim->tenant = tenant;
  g_object_set_qdata_full (G_OBJECT (stream), claim_quark (), claim, claim_free);

  return TRUE;
}

/* Gives back the place @stream claimed, if it holds one; the stream calls
 * this however it ends, and may more than once. */
void
symfonic_stream_cap_release (SymfonicStream *stream)
{
  g_object_set_qdata (G_OBJECT (stream), claim_quark (), NULL);
}
