/* symfonic-stream-cap.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-error.h"
#include "symfonic-memory-store.h"
#include "symfonic-poller-private.h"
#include "symfonic-stream-cap-private.h"
#include "symfonic-stream-log.h"

/* A route's streams, counted against its max-streams and, per tenant, its
 * max-streams-per-tenant, in the route's #SymfonicStreamCapStore: its
 * `cap-store`, which other routes and instances may share, or a memory
 * store of its own. A stream takes one slot lease for both caps when it
 * is admitted and gives it back once, by id, when it ends: the store is
 * asked twice per stream (and once per renewal, for a store whose leases
 * expire) and never per event. A route without caps asks nothing. */

/* What a refusal tells the client: streams end all the time, so a place
 * is usually free again soon. */
#define CAP_RETRY_AFTER "1"

struct _SymfonicStreamCap
{
  guint                   limits[SYMFONIC_STREAM_CAP_N_KINDS];
  guint64                 refused[SYMFONIC_STREAM_CAP_N_KINDS];
  SymfonicStreamCapStore *store;
  /* the route's set of slots in the store; a tenant's set adds its name */
  char                   *route_key;
  gint64                  lease_ttl_us;
  /* @store is the default, not one the route was given: a store of its
   * own in this process, or the server's (see _share_store()) */
  gboolean                default_store;
};

/* A stream's slot, kept on the stream from its claim to its release. */
typedef struct
{
  SymfonicStreamCap      *cap;
  SymfonicStreamCapStore *store;
  guint64                 lease_id;
  SymfonicStreamCapScope  scopes[SYMFONIC_STREAM_CAP_N_KINDS];
  SymfonicStreamCapKind   kinds[SYMFONIC_STREAM_CAP_N_KINDS];
  guint                   n_scopes;
  char                   *tenant_key;
  /* the stream that holds the slot (and the claim), for the log */
  SymfonicStream         *stream;
  /* renews the lease every third of its TTL, on the stream's thread */
  SymfonicTimer          *renewal;
} Claim;

static G_DEFINE_QUARK (symfonic-stream-cap-claim, claim)

SymfonicStreamCap *
symfonic_stream_cap_new (const char *route_name)
{
  SymfonicStreamCap *self = g_new0 (SymfonicStreamCap, 1);

  self->route_key = g_strconcat ("streams:", route_name != NULL ? route_name : "", NULL);

  return self;
}

void
symfonic_stream_cap_free (SymfonicStreamCap *self)
{
  g_clear_object (&self->store);
  g_free (self->route_key);
  g_free (self);
}

/* Only while the route is assembled, before it serves. A capped route
 * with no store of its own counts in this process, alone, as if nothing
 * were shared: its leases need no renewal. */
void
symfonic_stream_cap_set_limit (SymfonicStreamCap     *self,
                               SymfonicStreamCapKind  kind,
                               guint                  limit)
{
  self->limits[kind] = limit;
  if (limit > 0 && self->store == NULL)
    {
      symfonic_stream_cap_set_store (self, SYMFONIC_STREAM_CAP_STORE (symfonic_memory_store_new (0)));
      self->default_store = TRUE;
    }
}

guint
symfonic_stream_cap_get_limit (SymfonicStreamCap     *self,
                               SymfonicStreamCapKind  kind)
{
  return self->limits[kind];
}

/* Only while the route is assembled. Takes @store. */
void
symfonic_stream_cap_set_store (SymfonicStreamCap      *self,
                               SymfonicStreamCapStore *store)
{
  g_clear_object (&self->store);
  self->store = store;
  self->lease_ttl_us = store != NULL ? symfonic_store_lease_ttl_of (G_OBJECT (store)) : 0;
  self->default_store = FALSE;
}

/* Only while the route is assembled. A capped route that names no store
 * counts in @store instead of one of its own: the server's, which
 * outlives a reload, so that the streams of a route's earlier pipeline
 * still count against the route of the same name (its key in the store)
 * in the next. A route given a store keeps it. */
void
symfonic_stream_cap_share_store (SymfonicStreamCap      *self,
                                 SymfonicStreamCapStore *store)
{
  if (!self->default_store || self->store == store)
    return;

  symfonic_stream_cap_set_store (self, g_object_ref (store));
  self->default_store = TRUE;
}

SymfonicStreamCapStore *
symfonic_stream_cap_get_store (SymfonicStreamCap *self)
{
  return self->store;
}

guint64
symfonic_stream_cap_get_refused (SymfonicStreamCap     *self,
                                 SymfonicStreamCapKind  kind)
{
  return __atomic_load_n (&self->refused[kind], __ATOMIC_RELAXED);
}

static void
claim_free (gpointer data)
{
  Claim *claim = data;

  g_clear_pointer (&claim->renewal, symfonic_timer_remove);
  if (claim->lease_id != 0)
    symfonic_stream_cap_store_release_async (claim->store, claim->lease_id, claim->scopes, claim->n_scopes,
                                             symfonic_stream_cap_store_get_time (claim->store), NULL, NULL, NULL);
  g_object_unref (claim->store);
  g_free (claim->tenant_key);
  g_free (claim);
}

static void
renewed_cb (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(SymfonicStream) stream = user_data;
  g_autoptr(GError) error = NULL;
  gboolean renewed = FALSE;

  /* a shared store that does not answer logs that itself, once per
   * kind of failure; what is left is once per kind every interval too:
   * every stream slot meets it */
  if (!symfonic_stream_cap_store_renew_finish (SYMFONIC_STREAM_CAP_STORE (object), result, &renewed, &error))
    {
      if (g_error_matches (error, SYMFONIC_ERROR, SYMFONIC_ERROR_STORE_UNAVAILABLE) ||
          g_error_matches (error, SYMFONIC_ERROR, SYMFONIC_ERROR_STORE_TIMEOUT))
        symfonic_log_stream (G_LOG_LEVEL_DEBUG, stream, "stream-cap", NULL,
                             "Could not renew a stream slot: %s", error->message);
      else
        symfonic_log_stream (G_LOG_LEVEL_WARNING, stream, "stream-cap", "stream-cap: renewal failed",
                             "Could not renew a stream slot: %s", error->message);
    }
  else if (!renewed)
    symfonic_log_stream (G_LOG_LEVEL_WARNING, stream, "stream-cap", "stream-cap: slot expired",
                         "A stream slot expired before its stream ended: the store may admit one stream too many");
}

static void
renew_due (gpointer data)
{
  Claim *claim = data;

  symfonic_stream_cap_store_renew_async (claim->store, claim->lease_id, claim->scopes, claim->n_scopes,
                                         symfonic_stream_cap_store_get_time (claim->store), NULL,
                                         renewed_cb, g_object_ref (claim->stream));
  symfonic_timer_set_deadline (claim->renewal, g_get_monotonic_time () + claim->cap->lease_ttl_us / 3);
}

static Claim *
claim_new (SymfonicStreamCap *self,
           SymfonicStream    *stream)
{
  Claim *claim = g_new0 (Claim, 1);

  claim->cap = self;
  claim->store = g_object_ref (self->store);
  if (self->limits[SYMFONIC_STREAM_CAP_ROUTE] != 0)
    {
      claim->kinds[claim->n_scopes] = SYMFONIC_STREAM_CAP_ROUTE;
      claim->scopes[claim->n_scopes++] = (SymfonicStreamCapScope) { self->route_key,
                                                                    self->limits[SYMFONIC_STREAM_CAP_ROUTE] };
    }
  if (self->limits[SYMFONIC_STREAM_CAP_TENANT] != 0)
    {
      const char *tenant = symfonic_invocation_get_tenant_id (symfonic_stream_get_invocation (stream));

      /* streams without a tenant (a route without authentication) share
       * one set; the tenant's length keeps every name apart */
      if (tenant == NULL)
        tenant = "";
      claim->tenant_key = g_strdup_printf ("%s:%" G_GSIZE_FORMAT ":%s", self->route_key, strlen (tenant), tenant);
      claim->kinds[claim->n_scopes] = SYMFONIC_STREAM_CAP_TENANT;
      claim->scopes[claim->n_scopes++] = (SymfonicStreamCapScope) { claim->tenant_key,
                                                                    self->limits[SYMFONIC_STREAM_CAP_TENANT] };
    }

  return claim;
}

/* The stream has its slot: it keeps it until symfonic_stream_cap_release(),
 * renewed meanwhile if its lease expires. */
static void
claim_keep (Claim          *claim,
            SymfonicStream *stream,
            guint64         lease_id)
{
  claim->lease_id = lease_id;
  claim->stream = stream;
  if (claim->cap->lease_ttl_us > 0)
    {
      claim->renewal = symfonic_poller_timer (symfonic_poller_get_thread_default (), renew_due, claim);
      symfonic_timer_set_deadline (claim->renewal, g_get_monotonic_time () + claim->cap->lease_ttl_us / 3);
    }
  g_object_set_qdata_full (G_OBJECT (stream), claim_quark (), claim, claim_free);
}

static void
refuse (SymfonicStreamCap      *self,
        SymfonicStream         *stream,
        SymfonicStreamCapKind   kind,
        GError                **error)
{
  __atomic_fetch_add (&self->refused[kind], 1, __ATOMIC_RELAXED);
  symfonic_stream_set_response_header (stream, "Retry-After", CAP_RETRY_AFTER);
  g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_OVERLOADED,
                       kind == SYMFONIC_STREAM_CAP_ROUTE ? "The route has all the streams its max-streams allows"
                                                         : "The tenant has all the streams the route’s max-streams-per-tenant allows");
}

typedef struct
{
  Claim                 *claim;
  SymfonicStream        *stream;
  SymfonicStreamCapFunc  func;
} Pending;

static void
acquired_cb (GObject      *object,
             GAsyncResult *result,
             gpointer      user_data)
{
  Pending *pending = user_data;
  Claim *claim = pending->claim;
  SymfonicStream *stream = pending->stream;
  GError *error = NULL;
  gboolean acquired = FALSE;
  guint refused_scope = 0;
  guint64 lease_id = 0;

  if (!symfonic_stream_cap_store_acquire_finish (SYMFONIC_STREAM_CAP_STORE (object), result, &acquired,
                                                 &refused_scope, &lease_id, &error))
    {
      claim_free (claim);
    }
  else if (symfonic_stream_is_over (stream))
    {
      /* the client left meanwhile: the slot goes back at once */
      claim->lease_id = acquired ? lease_id : 0;
      claim_free (claim);
      g_object_unref (stream);
      g_free (pending);
      return;
    }
  else if (!acquired)
    {
      refuse (claim->cap, stream, claim->kinds[MIN (refused_scope, claim->n_scopes - 1)], &error);
      claim_free (claim);
    }
  else
    {
      claim_keep (claim, stream, lease_id);
    }

  if (!symfonic_stream_is_over (stream))
    pending->func (stream, error);
  else
    g_clear_error (&error);
  g_object_unref (stream);
  g_free (pending);
}

/* Counts @stream against the caps until symfonic_stream_cap_release(), or
 * refuses it with an overloaded error and a Retry-After. A store that
 * decides at once (a memory store) answers here; another answers @func
 * later (%SYMFONIC_ADMIT_PENDING). A route without caps counts nothing. */
SymfonicAdmitResult
symfonic_stream_cap_claim (SymfonicStreamCap      *self,
                           SymfonicStream         *stream,
                           SymfonicStreamCapFunc   func,
                           GError                **error)
{
  g_autoptr(GError) local_error = NULL;
  gboolean acquired = FALSE;
  guint refused_scope = 0;
  guint64 lease_id = 0;
  Pending *pending;
  Claim *claim;
  gint64 now;

  if (self->limits[SYMFONIC_STREAM_CAP_ROUTE] == 0 && self->limits[SYMFONIC_STREAM_CAP_TENANT] == 0)
    return SYMFONIC_ADMIT_PASSED;

  claim = claim_new (self, stream);
  now = symfonic_stream_cap_store_get_time (self->store);
  if (symfonic_stream_cap_store_try_acquire (self->store, claim->scopes, claim->n_scopes, now, &acquired,
                                             &refused_scope, &lease_id, &local_error))
    {
      if (!acquired)
        {
          refuse (self, stream, claim->kinds[MIN (refused_scope, claim->n_scopes - 1)], error);
          claim_free (claim);
          return SYMFONIC_ADMIT_REFUSED;
        }
      claim_keep (claim, stream, lease_id);
      return SYMFONIC_ADMIT_PASSED;
    }
  if (!g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      claim_free (claim);
      return SYMFONIC_ADMIT_REFUSED;
    }

  pending = g_new (Pending, 1);
  pending->claim = claim;
  pending->stream = g_object_ref (stream);
  pending->func = func;
  symfonic_stream_cap_store_acquire_async (self->store, claim->scopes, claim->n_scopes, now, NULL,
                                           acquired_cb, pending);
  return SYMFONIC_ADMIT_PENDING;
}

/* Gives back the slot @stream holds, if any; the stream calls this however
 * it ends, and may more than once: the slot is released once. */
void
symfonic_stream_cap_release (SymfonicStream *stream)
{
  g_object_set_qdata (G_OBJECT (stream), claim_quark (), NULL);
}
