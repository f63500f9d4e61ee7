/* symfonic-redis-store.c: the store that instances share through Redis
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "symfonic-error.h"
#include "symfonic-memory-store.h"
#include "symfonic-meter-store.h"
#include "symfonic-poller-private.h"
#include "symfonic-redis-client-private.h"
#include "symfonic-redis-run-store-private.h"
#include "symfonic-redis-script-private.h"
#include "symfonic-redis-store-private.h"
#include "symfonic-store.h"
#include "symfonic-run-store.h"
#include "symfonic-stream-cap-store.h"
#include "symfonic-store-result-private.h"

/**
 * SymfonicRedisStore:
 *
 * Registered as `redis`: rate-limit cells, budgets and stream slots in a
 * Redis server that every instance of the gateway shares, so that limits
 * hold for the cluster as a whole. Each decision is one EVALSHA of a
 * built-in script, timed by Redis' own clock (TIME), so instances need not
 * agree on the time and a decision costs one round trip.
 *
 * The store object is shared by every worker and immutable once
 * initialized. Its connections are not: each worker thread has one of its
 * own, made the first time the worker asks the store anything, driven by
 * that worker's poller and used only there. So no lock is taken to talk to
 * Redis, no thread waits on a socket, and a worker pipelines whatever its
 * streams ask in one main-loop iteration into one write.
 *
 * Every command has the store's deadline (`timeout-ms`). A command with
 * no answer by then, or one asked while there is no connection, is a
 * failure, and `on-failure` says what the asker gets: a refusal with
 * Retry-After (`deny`), an admission (`allow`), or the verdict of a store
 * in this process that enforces this instance's share of each limit
 * (`local`: limit ÷ `instances`). Streams already running go on either
 * way. What a running stream owes the shared state when it ends (its
 * budget settlement, its stream slot's release) is queued, within a
 * bound, and sent once the connection is back; a settlement sent twice
 * counts nothing twice (see symfonic-budget-settle.lua).
 *
 * A command's cost to the worker is kept to what Redis needs: the keys
 * of a lease are built once, when it is granted, and kept with it; the
 * command is formatted in place in the client's journal; its op comes
 * from the worker's pool; the answer reaches its asker through a pooled
 * GAsyncResult (symfonic-store-result.c). Measured with callgrind on 400
 * paced streams, a charge went from about 18000 instructions of the
 * gateway's to about 5000, hiredis' parsing and the budget stage's own
 * work included.
 *
 * Keys: the stages' keys are opaque to stores, but each names the tenant
 * it counts for in one of a few shapes ("t:TENANT",
 * "tp:LENGTH:TENANT:PRINCIPAL", a route's per-tenant slot set
 * "streams:ROUTE:LENGTH:TENANT"). Every Redis key of a tenant goes under
 * the tenant's hash tag, so that a script may touch them all on a Redis
 * Cluster too; a route's own slot set under the route's tag; any other
 * key is a tag of its own.
 */

/* lease ids are chosen here: those a store in this process granted
 * while Redis did not answer carry this bit, so that their settlement
 * goes where they were granted */
#define LOCAL_LEASE (G_GUINT64_CONSTANT (1) << 63)
/* what is queued for Redis while it does not answer, per worker */
#define BACKLOG_MAX 4096
/* the Retry-After of a refusal for want of an answer: about the time a
 * reconnection takes to be tried again */
#define DOWN_RETRY_AFTER_US G_USEC_PER_SEC
/* what a reservation refused for in-flight reservations advises: they
 * may settle unused any moment */
#define IN_FLIGHT_RETRY_US G_USEC_PER_SEC
/* a check's wait for the connection, at least */
#define CHECK_TIMEOUT_MS 2000

typedef struct _Conn  Conn;
typedef struct _Lease Lease;

struct _SymfonicRedisStore
{
  GObject                 parent_instance;

  char                   *url;
  GFile                  *password_file;
  char                   *key_prefix;
  guint                   timeout_ms;
  SymfonicRedisOnFailure  on_failure;
  guint                   instances;
  guint                   lease_ttl_ms;

  SymfonicRedisAddress    address;
  gboolean                initialized;
  char                   *password;
  /* decides for this instance while Redis does not answer
   * (on-failure=local) */
  SymfonicMemoryStore    *local;
  guint64                 last_lease;
  /* the run role, with connections of its own (see
   * symfonic-redis-run-store.c) */
  SymfonicRedisRunStore  *runs;
  /* tells this store's connections from those of a store that was freed
   * at the same address, for the worker's cache (get_conn()) */
  guint                   serial;

  GMutex                  lock;
  /* SymfonicPoller -> Conn: one per worker thread */
  GHashTable             *conns;
  /* every Conn made, in order, for the metrics: their counters live as
   * long as the store */
  GPtrArray              *all_conns;
  /* whether this outage's first admission by on-failure=allow was logged */
  gint                    allow_logged;
};

struct _Conn
{
  /* not a reference: the store closes its connections when it goes */
  SymfonicRedisStore      *store;
  GMainContext            *context;
  SymfonicPoller          *poller;
  SymfonicRedisClient     *client;
  SymfonicRedisStats       stats;
  guint64                  outcomes[SYMFONIC_REDIS_N_OUTCOMES];
  guint64                  backlog_dropped;
  gint                     backlog_length;
  gboolean                 ever_up;
  gboolean                 start_over;
  /* commands asked before the first connection was up, sent then */
  GQueue                   starting;
  SymfonicTimer           *start_timer;
  /* settlements and releases to send once Redis answers again */
  GQueue                   backlog;
  /* lease id -> Lease, while its stream runs */
  GHashTable              *leases;
  /* ops done with, for the next ones to ask */
  GList                   *spare_ops;
  guint                    n_spare_ops;
  /* the answers handed to the askers */
  SymfonicStoreResultPool *results;
  /* the store's calls under way on this worker: an answer ready within
   * one waits for a later main-loop iteration */
  guint                    in_call;
  /* where a Redis key is built */
  GString                 *scratch;
};

/* What this worker keeps of a lease while its stream runs, made when it
 * is granted (or first named): the scopes it was asked for and the Redis
 * keys they live under, built once rather than for each charge, and what
 * Redis acknowledged of the stream's usage. A charge, renewal or
 * settlement that names the same scopes again uses them as they are.
 * One allocation; ops hold references. */
struct _Lease
{
  guint64                 id;
  guint                   ref_count;
  guint                   n_scopes;
  /* of stream slots, not of a budget */
  gboolean                slots;
  /* the usage Redis acknowledged, and when a charge last renewed it */
  guint64                 acked;
  gint64                  renewed_at;
  /* copies, their keys in this block */
  SymfonicMeterScope     *scopes;
  SymfonicStreamCapScope *caps;
  /* in the scripts' order: B1 L1 B2 L2 ... for a budget, S1 S2 ... for
   * slots */
  guint                   n_keys;
  const char            **keys;
  gsize                  *key_lengths;
};

typedef enum {
  OP_TAKE,
  OP_RESERVE,
  OP_CHARGE,
  OP_SETTLE,
  OP_RENEW,
  OP_ACQUIRE,
  OP_CAP_RENEW,
  OP_RELEASE,
} OpKind;

typedef struct
{
  gboolean granted;
  gint64   retry_after_us;
  guint64  lease_id;
  guint64  allowance;
  guint    refused_scope;
  gboolean renewed;
} Verdict;

G_STATIC_ASSERT (sizeof (Verdict) <= SYMFONIC_STORE_RESULT_MAX_VALUE);

/* One command for Redis, what it is built from, and who waits for its
 * answer. The command is built from the op whenever it is sent: at once,
 * or once a connection is up (the backlog, the first connection), so an
 * op holds what it names (its lease, its key) rather than the command.
 * Backlog entries are ops without an asker or store. */
typedef struct
{
  OpKind                  kind;
  SymfonicRedisScriptId   script;
  SymfonicRedisStore     *store;
  Conn                   *conn;
  /* a reservation's, charge's, settlement's, renewal's, slot's */
  Lease                  *lease;
  guint64                 lease_id;
  /* the usage charged or settled, and what Redis had acknowledged */
  guint64                 used;
  guint64                 acked;
  /* a take's cell */
  char                   *key;
  gint64                  interval_us;
  gint64                  tolerance_us;
  /* a reservation's */
  guint64                 amount;
  /* the asker */
  GAsyncReadyCallback     callback;
  gpointer                user_data;
  GCancellable           *cancellable;
  gpointer                source_tag;
  gboolean                check_cancellable;
  gint64                  sent_at;
  /* refused by the client at once: Redis never saw it */
  gboolean                never_sent;
  GList                   link;
} Op;

enum {
  PROP_0,
  PROP_URL,
  PROP_PASSWORD_FILE,
  PROP_KEY_PREFIX,
  PROP_TIMEOUT_MS,
  PROP_ON_FAILURE,
  PROP_INSTANCES,
  PROP_LEASE_TTL_MS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void symfonic_redis_store_initable_init (GInitableIface *iface);
static void symfonic_redis_store_store_init (SymfonicStoreInterface *iface);
static void symfonic_redis_store_meter_init (SymfonicMeterStoreInterface *iface);
static void symfonic_redis_store_cap_init (SymfonicStreamCapStoreInterface *iface);
static void symfonic_redis_store_run_init (SymfonicRunStoreInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SymfonicRedisStore, symfonic_redis_store, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, symfonic_redis_store_initable_init)
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_STORE, symfonic_redis_store_store_init)
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_METER_STORE, symfonic_redis_store_meter_init)
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_STREAM_CAP_STORE, symfonic_redis_store_cap_init)
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_RUN_STORE, symfonic_redis_store_run_init))

GType
symfonic_redis_on_failure_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    { SYMFONIC_REDIS_ON_FAILURE_DENY, "SYMFONIC_REDIS_ON_FAILURE_DENY", "deny" },
    { SYMFONIC_REDIS_ON_FAILURE_ALLOW, "SYMFONIC_REDIS_ON_FAILURE_ALLOW", "allow" },
    { SYMFONIC_REDIS_ON_FAILURE_LOCAL, "SYMFONIC_REDIS_ON_FAILURE_LOCAL", "local" },
    { 0, NULL, NULL },
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type, g_enum_register_static (g_intern_static_string ("SymfonicRedisOnFailure"), values));

  return type;
}

static const char * const outcome_names[SYMFONIC_REDIS_N_OUTCOMES] = {
  [SYMFONIC_REDIS_OUTCOME_ADMITTED] = "admitted",
  [SYMFONIC_REDIS_OUTCOME_REFUSED] = "refused",
  [SYMFONIC_REDIS_OUTCOME_DENIED] = "denied_on_failure",
  [SYMFONIC_REDIS_OUTCOME_ALLOWED] = "allowed_on_failure",
  [SYMFONIC_REDIS_OUTCOME_LOCAL_ADMITTED] = "local_admitted",
  [SYMFONIC_REDIS_OUTCOME_LOCAL_REFUSED] = "local_refused",
};

/* --- keys ---------------------------------------------------------------- */

/* The tenant a stage's key counts for: the shapes the metering stages and
 * the routes' stream caps make (see the top of this file). Lengths keep
 * ids with colons apart. */
static gboolean
key_tenant (const char  *key,
            const char **tenant,
            gsize       *length)
{
  if (g_str_has_prefix (key, "t:"))
    {
      *tenant = key + 2;
      *length = strlen (key + 2);
      return TRUE;
    }

  if (g_str_has_prefix (key, "tp:"))
    {
      char *end;
      guint64 n = g_ascii_strtoull (key + 3, &end, 10);

      if (end != key + 3 && *end == ':' && strlen (end + 1) > n && end[1 + n] == ':')
        {
          *tenant = end + 1;
          *length = n;
          return TRUE;
        }
      return FALSE;
    }

  if (g_str_has_prefix (key, "streams:"))
    {
      /* "streams:ROUTE:LENGTH:TENANT": the one ":LENGTH:" whose tenant
       * is exactly that long */
      for (const char *p = strchr (key + 8, ':'); p != NULL; p = strchr (p + 1, ':'))
        {
          char *end;
          guint64 n;

          if (!g_ascii_isdigit (p[1]))
            continue;
          n = g_ascii_strtoull (p + 1, &end, 10);
          if (*end == ':' && strlen (end + 1) == n)
            {
              *tenant = end + 1;
              *length = n;
              return TRUE;
            }
        }
    }

  return FALSE;
}

/* Appends the Redis key of a stage's @key for @kind of state ("rate",
 * "budget", "leases", "slots"): "PREFIX{TENANT}:KIND:KEY", a route's own
 * slot set "PREFIX{route:ROUTE}:KIND:KEY". The stage's key stays whole
 * after the tag, so that no two of them meet. */
static void
append_redis_key (GString            *out,
                  SymfonicRedisStore *self,
                  const char         *kind,
                  const char         *key)
{
  const char *tenant;
  gsize length;

  g_string_append (out, self->key_prefix);
  if (key_tenant (key, &tenant, &length))
    {
      g_string_append_c (out, '{');
      symfonic_redis_append_tag (out, tenant, length);
    }
  else if (g_str_has_prefix (key, "streams:") && strchr (key + 8, ':') == NULL)
    {
      g_string_append (out, "{route:");
      symfonic_redis_append_tag (out, key + 8, strlen (key + 8));
    }
  else
    {
      g_string_append_c (out, '{');
      symfonic_redis_append_tag (out, key, strlen (key));
    }
  g_string_append (out, "}:");
  g_string_append (out, kind);
  g_string_append_c (out, ':');
  g_string_append (out, key);
}

static guint64
amount_of (guint64 value)
{
  return MIN (value, (guint64) SYMFONIC_REDIS_MAX_AMOUNT);
}

/* --- lease ids ----------------------------------------------------------- */

/* Ids go on from a random start, so that instances sharing the store do
 * not meet (two of them would have to start within as many leases of
 * each other, out of 2^63). */
static guint64
next_lease_id (SymfonicRedisStore *self)
{
  guint64 id = __atomic_add_fetch (&self->last_lease, 1, __ATOMIC_RELAXED) & ~LOCAL_LEASE;

  return id != 0 ? id : next_lease_id (self);
}

/* --- leases -------------------------------------------------------------- */

static Lease *
lease_ref (Lease *lease)
{
  lease->ref_count++;
  return lease;
}

static void
lease_unref (Lease *lease)
{
  if (lease != NULL && --lease->ref_count == 0)
    g_free (lease);
}

/* A lease of @n scopes, budgets (@scopes) or slot sets (@caps), its Redis
 * keys built now, all in one block. */
static Lease *
lease_new (Conn                         *conn,
           guint64                       id,
           const SymfonicMeterScope     *scopes,
           const SymfonicStreamCapScope *caps,
           guint                         n)
{
  SymfonicRedisStore *self = conn->store;
  GString *text = conn->scratch;
  guint n_keys = caps != NULL ? n : 2 * n;
  gsize head = sizeof (Lease);
  gsize size;
  gsize stage_bytes = 0;
  gsize *ends;
  Lease *lease;
  char *p;

  /* the Redis keys back to back, each with its nul, and where each ends */
  ends = g_newa (gsize, n_keys);
  g_string_truncate (text, 0);
  for (guint i = 0; i < n; i++)
    {
      const char *key = caps != NULL ? caps[i].key : scopes[i].key;

      stage_bytes += strlen (key) + 1;
      if (caps != NULL)
        {
          append_redis_key (text, self, "slots", key);
          g_string_append_c (text, '\0');
          ends[i] = text->len;
          continue;
        }
      append_redis_key (text, self, "budget", key);
      g_string_append_c (text, '\0');
      ends[2 * i] = text->len;
      append_redis_key (text, self, "leases", key);
      g_string_append_c (text, '\0');
      ends[2 * i + 1] = text->len;
    }

  size = head;
  size += caps != NULL ? n * sizeof (SymfonicStreamCapScope) : n * sizeof (SymfonicMeterScope);
  size += n_keys * (sizeof (char *) + sizeof (gsize));
  size += stage_bytes + text->len;
  lease = g_malloc0 (size);
  lease->id = id;
  lease->ref_count = 1;
  lease->n_scopes = n;
  lease->slots = caps != NULL;
  lease->n_keys = n_keys;
  p = (char *) lease + head;
  if (caps != NULL)
    {
      lease->caps = (SymfonicStreamCapScope *) p;
      memcpy (lease->caps, caps, n * sizeof *caps);
      p += n * sizeof *caps;
    }
  else
    {
      lease->scopes = (SymfonicMeterScope *) p;
      memcpy (lease->scopes, scopes, n * sizeof *scopes);
      p += n * sizeof *scopes;
    }
  lease->keys = (const char **) p;
  p += n_keys * sizeof (char *);
  lease->key_lengths = (gsize *) p;
  p += n_keys * sizeof (gsize);
  memcpy (p, text->str, text->len);
  for (guint i = 0; i < n_keys; i++)
    {
      gsize start = i > 0 ? ends[i - 1] : 0;

      lease->keys[i] = p + start;
      lease->key_lengths[i] = ends[i] - start - 1;
    }
  p += text->len;
  for (guint i = 0; i < n; i++)
    {
      const char *key = caps != NULL ? caps[i].key : scopes[i].key;
      gsize length = strlen (key) + 1;

      memcpy (p, key, length);
      if (caps != NULL)
        lease->caps[i].key = p;
      else
        lease->scopes[i].key = p;
      p += length;
    }

  return lease;
}

/* Whether a call about @lease names the scopes it was made for. */
static gboolean
lease_names (Lease                        *lease,
             const SymfonicMeterScope     *scopes,
             const SymfonicStreamCapScope *caps,
             guint                         n)
{
  if (lease->n_scopes != n || lease->slots != (caps != NULL))
    return FALSE;
  for (guint i = 0; i < n; i++)
    {
      const char *key = caps != NULL ? caps[i].key : scopes[i].key;
      const char *kept = caps != NULL ? lease->caps[i].key : lease->scopes[i].key;

      if (strcmp (key, kept) != 0)
        return FALSE;
    }

  return TRUE;
}

/* This worker's record of lease @id, made if it has none for those
 * scopes; the limits are the call's (they are arguments, not keys). */
static Lease *
lease_get (Conn                         *conn,
           guint64                       id,
           const SymfonicMeterScope     *scopes,
           const SymfonicStreamCapScope *caps,
           guint                         n)
{
  Lease *lease = g_hash_table_lookup (conn->leases, &id);

  if (lease == NULL || !lease_names (lease, scopes, caps, n))
    {
      Lease *made = lease_new (conn, id, scopes, caps, n);

      /* what Redis acknowledged stays known */
      if (lease != NULL)
        {
          made->acked = lease->acked;
          made->renewed_at = lease->renewed_at;
        }
      g_hash_table_replace (conn->leases, &made->id, made);
      return made;
    }
  for (guint i = 0; i < n; i++)
    {
      if (caps != NULL)
        lease->caps[i].cap = caps[i].cap;
      else
        {
          lease->scopes[i].limit = scopes[i].limit;
          lease->scopes[i].window_us = scopes[i].window_us;
        }
    }

  return lease;
}

/* The lease is over on this worker: its settlement or release holds
 * what it still needs. */
static void
lease_forget (Conn  *conn,
              Lease *lease)
{
  if (g_hash_table_lookup (conn->leases, &lease->id) == lease)
    g_hash_table_remove (conn->leases, &lease->id);
}

/* --- ops ----------------------------------------------------------------- */

/* Spare ops a worker keeps, at most */
#define SPARE_OPS 256

static Op *
op_new (SymfonicRedisStore    *self,
        Conn                  *conn,
        OpKind                 kind,
        SymfonicRedisScriptId  script)
{
  Op *op;

  if (conn->spare_ops != NULL)
    {
      GList *link = conn->spare_ops;

      conn->spare_ops = link->next;
      conn->n_spare_ops--;
      op = link->data;
      memset (op, 0, sizeof *op);
    }
  else
    {
      op = g_new0 (Op, 1);
    }
  op->kind = kind;
  op->script = script;
  op->store = g_object_ref (self);
  op->conn = conn;
  op->link.data = op;

  return op;
}

static void
op_set_asker (Op                  *op,
              GCancellable        *cancellable,
              gpointer             source_tag,
              gboolean             check_cancellable,
              GAsyncReadyCallback  callback,
              gpointer             user_data)
{
  op->cancellable = cancellable != NULL ? g_object_ref (cancellable) : NULL;
  op->source_tag = source_tag;
  op->check_cancellable = check_cancellable;
  op->callback = callback;
  op->user_data = user_data;
}

static void
op_free (Op *op)
{
  Conn *conn = op->conn;

  g_clear_object (&op->store);
  g_clear_object (&op->cancellable);
  g_clear_pointer (&op->lease, lease_unref);
  g_clear_pointer (&op->key, g_free);
  if (conn != NULL && conn->n_spare_ops < SPARE_OPS)
    {
      op->link.data = op;
      op->link.prev = NULL;
      op->link.next = conn->spare_ops;
      conn->spare_ops = &op->link;
      conn->n_spare_ops++;
      return;
    }
  g_free (op);
}

/* Builds @op's command in its connection's client, ready to send. */
static void
op_build (Op *op)
{
  SymfonicRedisClient *client = op->conn->client;
  SymfonicRedisScript *script = symfonic_redis_script_get_builtin (op->script);
  Lease *lease = op->lease;
  guint n_scopes = lease != NULL ? lease->n_scopes : 0;
  guint n_keys = lease != NULL ? lease->n_keys : 1;
  guint n_args;

  switch (op->kind)
    {
    case OP_TAKE:
      n_args = 2;
      break;
    case OP_RESERVE:
      n_args = 4 + 2 * n_scopes;
      break;
    case OP_CHARGE:
      n_args = 4 + 2 * n_scopes;
      break;
    case OP_SETTLE:
      n_args = 3 + 2 * n_scopes;
      break;
    case OP_RENEW:
    case OP_CAP_RENEW:
      n_args = 3;
      break;
    case OP_ACQUIRE:
      n_args = 2 + n_scopes;
      break;
    case OP_RELEASE:
    default:
      n_args = 1;
      break;
    }

  symfonic_redis_client_build_eval (client, script, n_keys, n_args);
  if (op->kind == OP_TAKE)
    {
      GString *text = op->conn->scratch;

      g_string_truncate (text, 0);
      append_redis_key (text, op->conn->store, "rate", op->key);
      symfonic_redis_client_build_arg (client, text->str, text->len);
      symfonic_redis_client_build_int (client, MAX (op->interval_us, 1));
      symfonic_redis_client_build_int (client, MAX (op->tolerance_us, 0));
      return;
    }

  for (guint i = 0; i < n_keys; i++)
    symfonic_redis_client_build_arg (client, lease->keys[i], lease->key_lengths[i]);
  symfonic_redis_client_build_uint (client, op->lease_id);
  switch (op->kind)
    {
    case OP_RESERVE:
      symfonic_redis_client_build_uint (client, amount_of (op->amount));
      symfonic_redis_client_build_uint (client, op->store->lease_ttl_ms);
      symfonic_redis_client_build_int (client, IN_FLIGHT_RETRY_US);
      break;
    case OP_CHARGE:
    case OP_SETTLE:
      symfonic_redis_client_build_uint (client, op->used);
      symfonic_redis_client_build_uint (client, op->acked);
      break;
    case OP_RENEW:
      symfonic_redis_client_build_uint (client, op->store->lease_ttl_ms);
      symfonic_redis_client_build_uint (client, n_scopes);
      return;
    case OP_CAP_RENEW:
      symfonic_redis_client_build_uint (client, op->store->lease_ttl_ms);
      symfonic_redis_client_build_uint (client, 0);
      return;
    case OP_ACQUIRE:
      symfonic_redis_client_build_uint (client, op->store->lease_ttl_ms);
      for (guint i = 0; i < n_scopes; i++)
        symfonic_redis_client_build_uint (client, lease->caps[i].cap);
      return;
    case OP_RELEASE:
    default:
      return;
    }
  for (guint i = 0; i < n_scopes; i++)
    {
      symfonic_redis_client_build_uint (client, amount_of (lease->scopes[i].limit));
      symfonic_redis_client_build_int (client, MAX (lease->scopes[i].window_us, 1));
    }
  /* a charge renews the lease too: a stream that charges every 250 ms
   * costs no renewal round trip */
  if (op->kind == OP_CHARGE)
    symfonic_redis_client_build_uint (client, op->store->lease_ttl_ms);
}

/* Tells @op's asker: @verdict, or @error. Within the call that asked, the
 * answer goes through a GTask, which holds it for a later main-loop
 * iteration; from the main loop, through the worker's pool of results. */
static void
op_answer (Op            *op,
           const Verdict *verdict,
           const GError  *error)
{
  GAsyncReadyCallback callback = op->callback;

  if (callback == NULL)
    return;
  op->callback = NULL;

  if (op->conn->in_call > 0)
    {
      GTask *task = g_task_new (op->store, op->cancellable, callback, op->user_data);

      g_task_set_source_tag (task, op->source_tag);
      g_task_set_check_cancellable (task, op->check_cancellable);
      if (error != NULL)
        g_task_return_error (task, g_error_copy (error));
      else
        g_task_return_pointer (task, g_memdup2 (verdict, sizeof *verdict), g_free);
      g_object_unref (task);
      return;
    }

  symfonic_store_result_pool_complete (op->conn->results, op->store, op->source_tag, op->cancellable,
                                       op->check_cancellable, callback, op->user_data,
                                       verdict, error == NULL ? sizeof *verdict : 0, error);
}

static void
count_outcome (Conn                 *conn,
               SymfonicRedisOutcome  outcome)
{
  __atomic_fetch_add (&conn->outcomes[outcome], 1, __ATOMIC_RELAXED);
}

/* --- deciding without Redis ---------------------------------------------- */

/* A limit shared by @instances, as one of them enforces it. */
static guint64
share_of (guint64 limit,
          guint   instances)
{
  return limit / MAX (instances, 1);
}

static gboolean
local_take (SymfonicRedisStore  *self,
            const char          *key,
            gint64               interval_us,
            gint64               tolerance_us,
            Verdict             *verdict)
{
  SymfonicMeterStore *local = SYMFONIC_METER_STORE (self->local);
  guint n = MAX (self->instances, 1);
  /* the burst the tolerance allows, and this instance's share of it and
   * of the rate */
  gint64 burst = interval_us > 0 ? tolerance_us / interval_us + 1 : 1;
  gint64 share_burst = MAX (burst / n, 1);
  gint64 share_interval = interval_us * n;

  return symfonic_meter_store_try_take (local, key, share_interval, (share_burst - 1) * share_interval,
                                        symfonic_meter_store_get_time (local), &verdict->granted,
                                        &verdict->retry_after_us, NULL);
}

static gboolean
local_reserve (SymfonicRedisStore       *self,
               const SymfonicMeterScope *scopes,
               guint                     n_scopes,
               guint64                   amount,
               Verdict                  *verdict)
{
  SymfonicMeterStore *local = SYMFONIC_METER_STORE (self->local);
  g_autofree SymfonicMeterScope *shares = g_memdup2 (scopes, sizeof *scopes * n_scopes);
  guint64 lease_id = 0;

  for (guint i = 0; i < n_scopes; i++)
    shares[i].limit = share_of (scopes[i].limit, self->instances);
  if (!symfonic_meter_store_try_reserve (local, shares, n_scopes, amount, symfonic_meter_store_get_time (local),
                                         &verdict->granted, &lease_id, &verdict->retry_after_us,
                                         &verdict->allowance, NULL))
    return FALSE;
  verdict->lease_id = verdict->granted ? lease_id | LOCAL_LEASE : 0;

  return TRUE;
}

static gboolean
local_acquire (SymfonicRedisStore           *self,
               const SymfonicStreamCapScope *caps,
               guint                         n_caps,
               Verdict                      *verdict)
{
  SymfonicStreamCapStore *local = SYMFONIC_STREAM_CAP_STORE (self->local);
  g_autofree SymfonicStreamCapScope *shares = g_memdup2 (caps, sizeof *caps * n_caps);
  guint64 lease_id = 0;

  for (guint i = 0; i < n_caps; i++)
    shares[i].cap = MAX (share_of (caps[i].cap, self->instances), 1);
  if (!symfonic_stream_cap_store_try_acquire (local, shares, n_caps, symfonic_stream_cap_store_get_time (local),
                                              &verdict->granted, &verdict->refused_scope, &lease_id, NULL))
    return FALSE;
  verdict->lease_id = verdict->granted ? lease_id | LOCAL_LEASE : 0;

  return TRUE;
}

/* An admission Redis did not answer, as on-failure says. */
static void
decide_without_redis (Op      *op,
                      Verdict *verdict)
{
  SymfonicRedisStore *self = op->store;

  *verdict = (Verdict) { 0, };
  switch (self->on_failure)
    {
    case SYMFONIC_REDIS_ON_FAILURE_ALLOW:
      verdict->granted = TRUE;
      /* the lease is Redis': its settlement, queued, counts the usage
       * there once it answers */
      verdict->lease_id = op->kind == OP_TAKE ? 0 : next_lease_id (self);
      verdict->allowance = op->amount;
      if (g_atomic_int_compare_and_exchange (&self->allow_logged, 0, 1))
        g_message ("The shared store %s does not answer: admitting without it (on-failure=allow)",
                   symfonic_redis_client_get_display (op->conn->client));
      count_outcome (op->conn, SYMFONIC_REDIS_OUTCOME_ALLOWED);
      break;

    case SYMFONIC_REDIS_ON_FAILURE_LOCAL:
      {
        gboolean decided = FALSE;

        if (op->kind == OP_TAKE)
          decided = local_take (self, op->key, op->interval_us, op->tolerance_us, verdict);
        else if (op->kind == OP_RESERVE)
          decided = local_reserve (self, op->lease->scopes, op->lease->n_scopes, op->amount, verdict);
        else
          decided = local_acquire (self, op->lease->caps, op->lease->n_scopes, verdict);
        if (decided)
          {
            count_outcome (op->conn, verdict->granted ? SYMFONIC_REDIS_OUTCOME_LOCAL_ADMITTED
                                                      : SYMFONIC_REDIS_OUTCOME_LOCAL_REFUSED);
            break;
          }
      }
      G_GNUC_FALLTHROUGH;

    case SYMFONIC_REDIS_ON_FAILURE_DENY:
    default:
      *verdict = (Verdict) { .granted = FALSE, .retry_after_us = DOWN_RETRY_AFTER_US };
      count_outcome (op->conn, SYMFONIC_REDIS_OUTCOME_DENIED);
      break;
    }
}

/* --- connections --------------------------------------------------------- */

static void send_op (Op *op);

static void
backlog_push (Conn *conn,
              Op   *op)
{
  /* the store may go before the backlog is sent: entries hold none, and
   * are built again from what they name */
  g_clear_object (&op->store);
  g_clear_object (&op->cancellable);
  op->callback = NULL;
  if (conn->backlog.length >= BACKLOG_MAX)
    {
      Op *oldest = g_queue_pop_head_link (&conn->backlog)->data;

      op_free (oldest);
      __atomic_fetch_add (&conn->backlog_dropped, 1, __ATOMIC_RELAXED);
    }
  g_queue_push_tail_link (&conn->backlog, &op->link);
  g_atomic_int_set (&conn->backlog_length, conn->backlog.length);
}

static void backlog_reply (SymfonicRedisClient      *client,
                           const SymfonicRedisReply *reply,
                           const GError             *error,
                           gpointer                  user_data);

static gboolean
backlog_send_one (Conn *conn,
                  Op   *op)
{
  op_build (op);
  return symfonic_redis_client_send_built (conn->client, backlog_reply, op, NULL);
}

static void
backlog_reply (SymfonicRedisClient      *client,
               const SymfonicRedisReply *reply,
               const GError             *error,
               gpointer                  user_data)
{
  Op *op = user_data;
  Conn *conn = op->conn;

  /* down again: kept for the next time; a server's error reply is final */
  if (error != NULL && !g_error_matches (error, SYMFONIC_ERROR, SYMFONIC_ERROR_FAILED) &&
      !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      backlog_push (conn, op);
      return;
    }
  op_free (op);
}

/* What waited for Redis goes out, in the order it was queued. */
static void
backlog_flush (Conn *conn)
{
  while (conn->backlog.length > 0 && symfonic_redis_client_is_up (conn->client))
    {
      Op *op = g_queue_pop_head_link (&conn->backlog)->data;

      if (!backlog_send_one (conn, op))
        {
          g_queue_push_head_link (&conn->backlog, &op->link);
          break;
        }
    }
  g_atomic_int_set (&conn->backlog_length, conn->backlog.length);
}

static void
starting_fail (Conn *conn)
{
  conn->start_over = TRUE;
  g_clear_pointer (&conn->start_timer, symfonic_timer_remove);
  while (conn->starting.length > 0)
    {
      Op *op = g_queue_pop_head_link (&conn->starting)->data;

      /* fails at once, as any command does while no connection is up */
      send_op (op);
    }
}

static void
start_timeout (gpointer data)
{
  starting_fail (data);
}

static void
conn_state (SymfonicRedisClient *client,
            gboolean             up,
            gpointer             user_data)
{
  Conn *conn = user_data;

  if (!up)
    return;

  if (conn->store != NULL)
    g_atomic_int_set (&conn->store->allow_logged, 0);
  conn->ever_up = TRUE;
  conn->start_over = TRUE;
  g_clear_pointer (&conn->start_timer, symfonic_timer_remove);
  while (conn->starting.length > 0)
    send_op (g_queue_pop_head_link (&conn->starting)->data);
  backlog_flush (conn);
}

static void
conn_free (Conn *conn)
{
  g_clear_pointer (&conn->start_timer, symfonic_timer_remove);
  if (conn->client != NULL)
    {
      symfonic_redis_client_set_state_func (conn->client, NULL, NULL);
      symfonic_redis_client_close (conn->client);
    }
  g_queue_clear_full (&conn->backlog, (GDestroyNotify) op_free);
  g_clear_pointer (&conn->leases, g_hash_table_unref);
  /* the ops freed above went to the spares */
  while (conn->spare_ops != NULL)
    {
      GList *link = conn->spare_ops;

      conn->spare_ops = link->next;
      g_free (link->data);
    }
  conn->n_spare_ops = 0;
  g_clear_pointer (&conn->client, symfonic_redis_client_unref);
  g_clear_pointer (&conn->results, symfonic_store_result_pool_free);
  if (conn->scratch != NULL)
    g_string_free (g_steal_pointer (&conn->scratch), TRUE);
  g_clear_pointer (&conn->context, g_main_context_unref);
}

static gboolean
conn_close_cb (gpointer data)
{
  conn_free (data);
  return G_SOURCE_REMOVE;
}

static Conn *
conn_new (SymfonicRedisStore *self,
          SymfonicPoller     *poller)
{
  Conn *conn = g_new0 (Conn, 1);

  conn->store = self;
  conn->poller = poller;
  conn->context = g_main_context_ref_thread_default ();
  conn->leases = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL, (GDestroyNotify) lease_unref);
  conn->results = symfonic_store_result_pool_new ();
  conn->scratch = g_string_sized_new (128);
  conn->client = symfonic_redis_client_new (&self->address);
  if (self->password != NULL)
    symfonic_redis_client_set_credentials (conn->client, NULL, self->password);
  symfonic_redis_client_set_timeout (conn->client, self->timeout_ms);
  symfonic_redis_client_set_stats (conn->client, &conn->stats);
  symfonic_redis_client_set_state_func (conn->client, conn_state, conn);
  for (guint i = 0; i < SYMFONIC_REDIS_N_SCRIPTS; i++)
    symfonic_redis_client_add_script (conn->client, symfonic_redis_script_get_builtin (i));

  return conn;
}

/* The connection of the store a worker last asked, so that a command
 * takes no lock to find it: a store's connections live as long as it,
 * and a poller as long as the connections made on it. */
static _Thread_local struct
{
  guint           serial;
  SymfonicPoller *poller;
  Conn           *conn;
} last_conn;

static guint last_serial;

/* This worker's connection, made and started on first use. */
static Conn *
get_conn (SymfonicRedisStore *self)
{
  SymfonicPoller *poller = symfonic_poller_get_thread_default ();
  Conn *conn;

  if (G_LIKELY (last_conn.serial == self->serial && last_conn.poller == poller))
    return last_conn.conn;

  g_mutex_lock (&self->lock);
  conn = g_hash_table_lookup (self->conns, poller);
  if (conn == NULL)
    {
      conn = conn_new (self, poller);
      g_hash_table_insert (self->conns, poller, conn);
      g_ptr_array_add (self->all_conns, conn);
      g_mutex_unlock (&self->lock);
      symfonic_redis_client_start (conn->client);
    }
  else
    {
      g_mutex_unlock (&self->lock);
    }
  last_conn.serial = self->serial;
  last_conn.poller = poller;
  last_conn.conn = conn;

  return conn;
}

/* --- replies ------------------------------------------------------------- */

/* Whether a charge sent at most a third of the TTL ago renewed the lease
 * (it counts from when the charge was sent, not answered). A charge on
 * its way renews the lease as it counts: a renewal due at the same alarm
 * need not follow it. One that fails leaves the lease to the next
 * renewal, two more before it expires. */
static gboolean
renewed_lately (Conn    *conn,
                guint64  lease_id,
                gint64   ttl_us)
{
  Lease *lease = g_hash_table_lookup (conn->leases, &lease_id);

  return lease != NULL && lease->renewed_at != 0 && g_get_monotonic_time () - lease->renewed_at < ttl_us / 3;
}

/* What undoes @op, a reservation or a slot Redis may have granted
 * without its answer reaching us: a settlement of nothing, a release. */
static Op *
give_back_op (Op *op)
{
  Op *back;

  if (op->kind == OP_RESERVE)
    back = op_new (op->store, op->conn, OP_SETTLE, SYMFONIC_REDIS_SCRIPT_BUDGET_SETTLE);
  else
    back = op_new (op->store, op->conn, OP_RELEASE, SYMFONIC_REDIS_SCRIPT_CAP_RELEASE);
  back->lease = lease_ref (op->lease);
  back->lease_id = op->lease_id;

  return back;
}

/* No answer for @op: an admission is decided as on-failure says; what a
 * stream owes the shared state waits for Redis; the rest fails. */
static void
op_failed (Op           *op,
           const GError *error)
{
  Verdict verdict = { 0, };

  switch (op->kind)
    {
    case OP_TAKE:
    case OP_RESERVE:
    case OP_ACQUIRE:
      if (op->lease != NULL)
        lease_forget (op->conn, op->lease);
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        break;
      /* a reservation or slot that timed out may have been granted all
       * the same: it is given back once Redis answers again, rather than
       * held until its lease expires */
      if (op->kind != OP_TAKE && !op->never_sent && !g_error_matches (error, SYMFONIC_ERROR, SYMFONIC_ERROR_FAILED))
        backlog_push (op->conn, give_back_op (op));
      decide_without_redis (op, &verdict);
      op_answer (op, &verdict, NULL);
      op_free (op);
      return;

    case OP_SETTLE:
    case OP_RELEASE:
      if (g_error_matches (error, SYMFONIC_ERROR, SYMFONIC_ERROR_FAILED) ||
          g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        break;
      op_answer (op, &verdict, NULL);
      backlog_push (op->conn, op);
      return;

    case OP_CHARGE:
    case OP_RENEW:
    case OP_CAP_RENEW:
    default:
      break;
    }

  op_answer (op, NULL, error);
  op_free (op);
}

static void
op_reply (SymfonicRedisClient      *client,
          const SymfonicRedisReply *reply,
          const GError             *error,
          gpointer                  user_data)
{
  Op *op = user_data;
  Verdict verdict = { 0, };
  gint64 v[3] = { 0, };

  if (error != NULL)
    {
      op_failed (op, error);
      return;
    }

  switch (op->kind)
    {
    case OP_TAKE:
      if (!symfonic_redis_reply_read_integers (reply, v, 2))
        goto malformed;
      verdict.granted = v[0] == 1;
      verdict.retry_after_us = v[1];
      break;
    case OP_RESERVE:
      if (!symfonic_redis_reply_read_integers (reply, v, 3))
        goto malformed;
      verdict.granted = v[0] == 1;
      if (verdict.granted)
        {
          verdict.lease_id = op->lease_id;
          verdict.allowance = MAX (v[1], 0);
        }
      else
        {
          lease_forget (op->conn, op->lease);
          verdict.retry_after_us = v[1];
          verdict.refused_scope = v[2] > 0 ? v[2] - 1 : 0;
        }
      break;
    case OP_CHARGE:
      if (!symfonic_redis_reply_read_integers (reply, v, 3))
        goto malformed;
      /* the script says what the stream may still use; the stage wants
       * what it may use in all */
      verdict.allowance = op->used + (guint64) MAX (v[1], 0);
      verdict.granted = TRUE;
      op->lease->acked = op->used;
      op->lease->renewed_at = op->sent_at;
      break;
    case OP_SETTLE:
      verdict.granted = TRUE;
      break;
    case OP_RENEW:
    case OP_CAP_RENEW:
      if (!symfonic_redis_reply_read_integers (reply, v, 2))
        goto malformed;
      verdict.renewed = v[1] == 0;
      break;
    case OP_ACQUIRE:
      if (!symfonic_redis_reply_read_integers (reply, v, 2))
        goto malformed;
      verdict.granted = v[0] == 1;
      verdict.lease_id = verdict.granted ? op->lease_id : 0;
      verdict.refused_scope = v[1] > 0 ? v[1] - 1 : 0;
      if (!verdict.granted)
        lease_forget (op->conn, op->lease);
      break;
    case OP_RELEASE:
    default:
      verdict.granted = TRUE;
      break;
    }

  if (op->kind == OP_TAKE || op->kind == OP_RESERVE || op->kind == OP_ACQUIRE)
    count_outcome (op->conn, verdict.granted ? SYMFONIC_REDIS_OUTCOME_ADMITTED : SYMFONIC_REDIS_OUTCOME_REFUSED);
  op_answer (op, &verdict, NULL);
  op_free (op);
  return;

malformed:
  {
    g_autoptr(GError) local_error = g_error_new_literal (SYMFONIC_ERROR, SYMFONIC_ERROR_FAILED,
                                                          "The shared store answered in an unexpected shape");

    op_failed (op, local_error);
  }
}

/* Sends @op on this worker's connection, or decides it as if Redis had
 * failed. Before the worker's first connection is up, commands wait for
 * it, at most the store's deadline. */
static void
send_op (Op *op)
{
  g_autoptr(GError) error = NULL;
  Conn *conn = op->conn;

  if (!conn->start_over && !symfonic_redis_client_is_up (conn->client))
    {
      g_queue_push_tail_link (&conn->starting, &op->link);
      if (conn->start_timer == NULL)
        {
          conn->start_timer = symfonic_poller_timer (symfonic_poller_get_thread_default (), start_timeout, conn);
          symfonic_timer_set_deadline (conn->start_timer,
                                       g_get_monotonic_time () + (gint64) op->store->timeout_ms * 1000);
        }
      return;
    }

  op->sent_at = g_get_monotonic_time ();
  op_build (op);
  if (!symfonic_redis_client_send_built (conn->client, op_reply, op, &error))
    {
      op->never_sent = TRUE;
      op_failed (op, error);
    }
}

/* Whether an op asked now would fail at once: this worker's connection
 * is down after having been tried. */
static gboolean
known_down (SymfonicRedisStore *self,
            Conn              **conn_out)
{
  Conn *conn = get_conn (self);

  *conn_out = conn;
  return conn->start_over && !symfonic_redis_client_is_up (conn->client);
}

static gboolean
propagate_verdict (GAsyncResult  *result,
                   gpointer       source,
                   Verdict       *verdict,
                   GError       **error)
{
  g_autofree Verdict *value = NULL;

  if (symfonic_store_result_is_valid (result, source))
    return symfonic_store_result_propagate (result, verdict, sizeof *verdict, error);

  g_return_val_if_fail (g_task_is_valid (result, source), FALSE);

  value = g_task_propagate_pointer (G_TASK (result), error);
  if (value == NULL)
    return FALSE;
  *verdict = *value;

  return TRUE;
}

/* An answer known within the call, given as a GTask gives it: in a later
 * main-loop iteration. */
static void
answer_now (SymfonicRedisStore  *self,
            GCancellable        *cancellable,
            gpointer             source_tag,
            gboolean             check_cancellable,
            GAsyncReadyCallback  callback,
            gpointer             user_data,
            const Verdict       *verdict,
            GError              *error)
{
  GTask *task = g_task_new (self, cancellable, callback, user_data);

  g_task_set_source_tag (task, source_tag);
  g_task_set_check_cancellable (task, check_cancellable);
  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, g_memdup2 (verdict, sizeof *verdict), g_free);
  g_object_unref (task);
}

/* Sends @op, answered through its asker's callback: never within this
 * call, as a GTask would not. */
static void
ask (Op *op)
{
  Conn *conn = op->conn;

  conn->in_call++;
  send_op (op);
  conn->in_call--;
}

/* --- SymfonicMeterStore -------------------------------------------------- */

static gint64
symfonic_redis_store_get_time (SymfonicMeterStore *store)
{
  /* the scripts read Redis' clock; this one only dates the asking */
  return g_get_real_time ();
}

static Op *
take_op (SymfonicRedisStore *self,
         Conn               *conn,
         const char         *key,
         gint64              interval_us,
         gint64              tolerance_us)
{
  Op *op = op_new (self, conn, OP_TAKE, SYMFONIC_REDIS_SCRIPT_GCRA_TAKE);

  op->key = g_strdup (key);
  op->interval_us = interval_us;
  op->tolerance_us = tolerance_us;

  return op;
}

static void
symfonic_redis_store_take_async (SymfonicMeterStore  *store,
                                 const char          *key,
                                 gint64               emission_interval_us,
                                 gint64               burst_tolerance_us,
                                 gint64               now_us,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  SymfonicRedisStore *self = SYMFONIC_REDIS_STORE (store);
  Op *op = take_op (self, get_conn (self), key, emission_interval_us, burst_tolerance_us);

  /* a decision Redis made is kept even if its asker left meanwhile */
  op_set_asker (op, cancellable, symfonic_redis_store_take_async, FALSE, callback, user_data);
  ask (op);
}

static gboolean
symfonic_redis_store_take_finish (SymfonicMeterStore  *store,
                                  GAsyncResult        *result,
                                  gboolean            *allowed,
                                  gint64              *retry_after_us,
                                  GError             **error)
{
  Verdict verdict;

  if (!propagate_verdict (result, store, &verdict, error))
    return FALSE;
  *allowed = verdict.granted;
  *retry_after_us = verdict.retry_after_us;

  return TRUE;
}

/* Decided at once only while this worker's connection is down: then no
 * main-loop turn is waited for a failure known in advance. */
static gboolean
symfonic_redis_store_try_take (SymfonicMeterStore  *store,
                               const char          *key,
                               gint64               emission_interval_us,
                               gint64               burst_tolerance_us,
                               gint64               now_us,
                               gboolean            *allowed,
                               gint64              *retry_after_us,
                               GError             **error)
{
  SymfonicRedisStore *self = SYMFONIC_REDIS_STORE (store);
  Verdict verdict;
  Conn *conn;
  Op *op;

  if (!known_down (self, &conn))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK, "Asks Redis");
      return FALSE;
    }

  op = take_op (self, conn, key, emission_interval_us, burst_tolerance_us);
  decide_without_redis (op, &verdict);
  op_free (op);
  *allowed = verdict.granted;
  *retry_after_us = verdict.retry_after_us;

  return TRUE;
}

static Op *
reserve_op (SymfonicRedisStore       *self,
            Conn                     *conn,
            const SymfonicMeterScope *scopes,
            guint                     n_scopes,
            guint64                   amount)
{
  Op *op = op_new (self, conn, OP_RESERVE, SYMFONIC_REDIS_SCRIPT_BUDGET_RESERVE);

  op->lease_id = next_lease_id (self);
  op->amount = amount;
  op->lease = lease_ref (lease_get (conn, op->lease_id, scopes, NULL, n_scopes));

  return op;
}

static void
symfonic_redis_store_reserve_async (SymfonicMeterStore       *store,
                                    const SymfonicMeterScope *scopes,
                                    guint                     n_scopes,
                                    guint64                   amount,
                                    gint64                    now_us,
                                    GCancellable             *cancellable,
                                    GAsyncReadyCallback       callback,
                                    gpointer                  user_data)
{
  SymfonicRedisStore *self = SYMFONIC_REDIS_STORE (store);
  Op *op = reserve_op (self, get_conn (self), scopes, n_scopes, amount);

  /* a lease Redis granted must reach its asker, to be settled */
  op_set_asker (op, cancellable, symfonic_redis_store_reserve_async, FALSE, callback, user_data);
  ask (op);
}

static gboolean
symfonic_redis_store_reserve_finish (SymfonicMeterStore  *store,
                                     GAsyncResult        *result,
                                     gboolean            *reserved,
                                     guint64             *lease_id,
                                     gint64              *retry_after_us,
                                     guint64             *allowance,
                                     GError             **error)
{
  Verdict verdict;

  if (!propagate_verdict (result, store, &verdict, error))
    return FALSE;
  *reserved = verdict.granted;
  *lease_id = verdict.lease_id;
  *retry_after_us = verdict.retry_after_us;
  *allowance = verdict.allowance;

  return TRUE;
}

static gboolean
symfonic_redis_store_try_reserve (SymfonicMeterStore        *store,
                                  const SymfonicMeterScope  *scopes,
                                  guint                      n_scopes,
                                  guint64                    amount,
                                  gint64                     now_us,
                                  gboolean                  *reserved,
                                  guint64                   *lease_id,
                                  gint64                    *retry_after_us,
                                  guint64                   *allowance,
                                  GError                   **error)
{
  SymfonicRedisStore *self = SYMFONIC_REDIS_STORE (store);
  Verdict verdict;
  Conn *conn;
  Op *op;

  if (!known_down (self, &conn))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK, "Asks Redis");
      return FALSE;
    }

  op = reserve_op (self, conn, scopes, n_scopes, amount);
  lease_forget (conn, op->lease);
  decide_without_redis (op, &verdict);
  op_free (op);
  *reserved = verdict.granted;
  *lease_id = verdict.lease_id;
  *retry_after_us = verdict.retry_after_us;
  *allowance = verdict.allowance;

  return TRUE;
}

/* Charge and settle name the usage so far; "acked", what Redis last
 * acknowledged of it, lets a scope that lost the lease count only the
 * rest. */
static Op *
usage_op (SymfonicRedisStore       *self,
          OpKind                    kind,
          guint64                   lease_id,
          const SymfonicMeterScope *scopes,
          guint                     n_scopes,
          guint64                   used)
{
  Conn *conn = get_conn (self);
  Op *op = op_new (self, conn, kind,
                   kind == OP_CHARGE ? SYMFONIC_REDIS_SCRIPT_BUDGET_CHARGE : SYMFONIC_REDIS_SCRIPT_BUDGET_SETTLE);

  op->lease = lease_ref (lease_get (conn, lease_id, scopes, NULL, n_scopes));
  op->lease_id = lease_id;
  op->used = amount_of (used);
  op->acked = op->lease->acked;
  /* a charge on its way renews the lease as it counts */
  if (kind == OP_CHARGE)
    op->lease->renewed_at = g_get_monotonic_time ();
  else
    lease_forget (conn, op->lease);

  return op;
}

/* A lease granted in this process goes on there, with the shares it was
 * granted under. */
static SymfonicMeterScope *
local_shares (SymfonicRedisStore       *self,
              const SymfonicMeterScope *scopes,
              guint                     n_scopes)
{
  SymfonicMeterScope *shares = g_memdup2 (scopes, sizeof *scopes * n_scopes);

  for (guint i = 0; i < n_scopes; i++)
    shares[i].limit = share_of (scopes[i].limit, self->instances);

  return shares;
}

static void
symfonic_redis_store_charge_async (SymfonicMeterStore       *store,
                                   guint64                   lease_id,
                                   const SymfonicMeterScope *scopes,
                                   guint                     n_scopes,
                                   guint64                   used,
                                   gint64                    now_us,
                                   GCancellable             *cancellable,
                                   GAsyncReadyCallback       callback,
                                   gpointer                  user_data)
{
  SymfonicRedisStore *self = SYMFONIC_REDIS_STORE (store);
  Op *op;

  if (lease_id & LOCAL_LEASE)
    {
      SymfonicMeterStore *local = SYMFONIC_METER_STORE (self->local);
      g_autofree SymfonicMeterScope *shares = local_shares (self, scopes, n_scopes);
      Verdict verdict = { .granted = TRUE };
      gboolean exhausted = FALSE;
      GError *error = NULL;

      if (symfonic_meter_store_try_charge (local, lease_id & ~LOCAL_LEASE, shares, n_scopes, used,
                                           symfonic_meter_store_get_time (local), &exhausted,
                                           &verdict.allowance, &error))
        verdict.granted = !exhausted;
      answer_now (self, cancellable, symfonic_redis_store_charge_async, TRUE, callback, user_data, &verdict, error);
      return;
    }

  op = usage_op (self, OP_CHARGE, lease_id, scopes, n_scopes, used);
  op_set_asker (op, cancellable, symfonic_redis_store_charge_async, TRUE, callback, user_data);
  ask (op);
}

static gboolean
symfonic_redis_store_charge_finish (SymfonicMeterStore  *store,
                                    GAsyncResult        *result,
                                    gboolean            *exhausted,
                                    guint64             *allowance,
                                    GError             **error)
{
  Verdict verdict;

  if (!propagate_verdict (result, store, &verdict, error))
    return FALSE;
  /* a shared budget spent by others shows as an allowance no larger than
   * the usage: the stream's next event past it ends it */
  *exhausted = !verdict.granted;
  *allowance = verdict.allowance;

  return TRUE;
}

static void
symfonic_redis_store_settle_async (SymfonicMeterStore       *store,
                                   guint64                   lease_id,
                                   const SymfonicMeterScope *scopes,
                                   guint                     n_scopes,
                                   guint64                   actual,
                                   gint64                    now_us,
                                   GCancellable             *cancellable,
                                   GAsyncReadyCallback       callback,
                                   gpointer                  user_data)
{
  SymfonicRedisStore *self = SYMFONIC_REDIS_STORE (store);
  Op *op;

  if (lease_id & LOCAL_LEASE)
    {
      SymfonicMeterStore *local = SYMFONIC_METER_STORE (self->local);
      g_autofree SymfonicMeterScope *shares = local_shares (self, scopes, n_scopes);
      Verdict verdict = { 0, };

      symfonic_meter_store_settle_async (local, lease_id & ~LOCAL_LEASE, shares, n_scopes, actual,
                                         symfonic_meter_store_get_time (local), NULL, NULL, NULL);
      answer_now (self, cancellable, symfonic_redis_store_settle_async, FALSE, callback, user_data, &verdict, NULL);
      return;
    }

  op = usage_op (self, OP_SETTLE, lease_id, scopes, n_scopes, actual);
  op_set_asker (op, cancellable, symfonic_redis_store_settle_async, FALSE, callback, user_data);
  ask (op);
}

static gboolean
symfonic_redis_store_settle_finish (SymfonicMeterStore  *store,
                                    GAsyncResult        *result,
                                    GError             **error)
{
  Verdict verdict;

  return propagate_verdict (result, store, &verdict, error);
}

static Op *
renew_op (SymfonicRedisStore           *self,
          Conn                         *conn,
          OpKind                        kind,
          guint64                       lease_id,
          const SymfonicMeterScope     *scopes,
          const SymfonicStreamCapScope *caps,
          guint                         n_scopes)
{
  Op *op = op_new (self, conn, kind, SYMFONIC_REDIS_SCRIPT_LEASE_RENEW);

  op->lease_id = lease_id;
  op->lease = lease_ref (lease_get (conn, lease_id, scopes, caps, n_scopes));

  return op;
}

static void
symfonic_redis_store_renew_async (SymfonicMeterStore       *store,
                                  guint64                   lease_id,
                                  const SymfonicMeterScope *scopes,
                                  guint                     n_scopes,
                                  gint64                    now_us,
                                  GCancellable             *cancellable,
                                  GAsyncReadyCallback       callback,
                                  gpointer                  user_data)
{
  SymfonicRedisStore *self = SYMFONIC_REDIS_STORE (store);
  const Verdict renewed = { .renewed = TRUE };
  Conn *conn;
  Op *op;

  if (lease_id & LOCAL_LEASE)
    {
      SymfonicMeterStore *local = SYMFONIC_METER_STORE (self->local);
      g_autofree SymfonicMeterScope *shares = local_shares (self, scopes, n_scopes);

      /* in this process, renewing answers at once */
      symfonic_meter_store_renew_async (local, lease_id & ~LOCAL_LEASE, shares, n_scopes,
                                        symfonic_meter_store_get_time (local), NULL, NULL, NULL);
      answer_now (self, cancellable, symfonic_redis_store_renew_async, TRUE, callback, user_data, &renewed, NULL);
      return;
    }

  /* the stream's last charge renewed it: no round trip */
  conn = get_conn (self);
  if (renewed_lately (conn, lease_id, (gint64) self->lease_ttl_ms * 1000))
    {
      answer_now (self, cancellable, symfonic_redis_store_renew_async, TRUE, callback, user_data, &renewed, NULL);
      return;
    }

  op = renew_op (self, conn, OP_RENEW, lease_id, scopes, NULL, n_scopes);
  op_set_asker (op, cancellable, symfonic_redis_store_renew_async, TRUE, callback, user_data);
  ask (op);
}

static gboolean
symfonic_redis_store_renew_finish (SymfonicMeterStore  *store,
                                   GAsyncResult        *result,
                                   gboolean            *renewed,
                                   GError             **error)
{
  Verdict verdict;

  if (!propagate_verdict (result, store, &verdict, error))
    return FALSE;
  *renewed = verdict.renewed;

  return TRUE;
}

static void
symfonic_redis_store_meter_init (SymfonicMeterStoreInterface *iface)
{
  iface->get_time = symfonic_redis_store_get_time;
  iface->take_async = symfonic_redis_store_take_async;
  iface->take_finish = symfonic_redis_store_take_finish;
  iface->try_take = symfonic_redis_store_try_take;
  iface->reserve_async = symfonic_redis_store_reserve_async;
  iface->reserve_finish = symfonic_redis_store_reserve_finish;
  iface->try_reserve = symfonic_redis_store_try_reserve;
  iface->charge_async = symfonic_redis_store_charge_async;
  iface->charge_finish = symfonic_redis_store_charge_finish;
  iface->settle_async = symfonic_redis_store_settle_async;
  iface->settle_finish = symfonic_redis_store_settle_finish;
  iface->renew_async = symfonic_redis_store_renew_async;
  iface->renew_finish = symfonic_redis_store_renew_finish;
}

/* --- SymfonicStreamCapStore ---------------------------------------------- */

static gint64
symfonic_redis_store_cap_get_time (SymfonicStreamCapStore *store)
{
  return g_get_real_time ();
}

/* Every set in one script, so that a stream takes a slot in all or
 * none: one server (hiredis 0.14 speaks no Cluster) takes keys of any
 * slot in one script. */
static Op *
acquire_op (SymfonicRedisStore           *self,
            Conn                         *conn,
            const SymfonicStreamCapScope *caps,
            guint                         n_caps)
{
  Op *op = op_new (self, conn, OP_ACQUIRE, SYMFONIC_REDIS_SCRIPT_CAP_ACQUIRE);

  op->lease_id = next_lease_id (self);
  op->lease = lease_ref (lease_get (conn, op->lease_id, NULL, caps, n_caps));

  return op;
}

static void
symfonic_redis_store_acquire_async (SymfonicStreamCapStore       *store,
                                    const SymfonicStreamCapScope *scopes,
                                    guint                         n_scopes,
                                    gint64                        now_us,
                                    GCancellable                 *cancellable,
                                    GAsyncReadyCallback           callback,
                                    gpointer                      user_data)
{
  SymfonicRedisStore *self = SYMFONIC_REDIS_STORE (store);
  Op *op = acquire_op (self, get_conn (self), scopes, n_scopes);

  op_set_asker (op, cancellable, symfonic_redis_store_acquire_async, FALSE, callback, user_data);
  ask (op);
}

static gboolean
symfonic_redis_store_acquire_finish (SymfonicStreamCapStore  *store,
                                     GAsyncResult            *result,
                                     gboolean                *acquired,
                                     guint                   *refused_scope,
                                     guint64                 *lease_id,
                                     GError                 **error)
{
  Verdict verdict;

  if (!propagate_verdict (result, store, &verdict, error))
    return FALSE;
  *acquired = verdict.granted;
  *refused_scope = verdict.refused_scope;
  *lease_id = verdict.lease_id;

  return TRUE;
}

static gboolean
symfonic_redis_store_try_acquire (SymfonicStreamCapStore        *store,
                                  const SymfonicStreamCapScope  *scopes,
                                  guint                          n_scopes,
                                  gint64                         now_us,
                                  gboolean                      *acquired,
                                  guint                         *refused_scope,
                                  guint64                       *lease_id,
                                  GError                       **error)
{
  SymfonicRedisStore *self = SYMFONIC_REDIS_STORE (store);
  Verdict verdict;
  Conn *conn;
  Op *op;

  if (!known_down (self, &conn))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK, "Asks Redis");
      return FALSE;
    }

  op = acquire_op (self, conn, scopes, n_scopes);
  lease_forget (conn, op->lease);
  decide_without_redis (op, &verdict);
  op_free (op);
  *acquired = verdict.granted;
  *refused_scope = verdict.refused_scope;
  *lease_id = verdict.lease_id;

  return TRUE;
}

static SymfonicStreamCapScope *
local_cap_shares (SymfonicRedisStore           *self,
                  const SymfonicStreamCapScope *caps,
                  guint                         n_caps)
{
  SymfonicStreamCapScope *shares = g_memdup2 (caps, sizeof *caps * n_caps);

  for (guint i = 0; i < n_caps; i++)
    shares[i].cap = MAX (share_of (caps[i].cap, self->instances), 1);

  return shares;
}

static void
symfonic_redis_store_cap_renew_async (SymfonicStreamCapStore       *store,
                                      guint64                       lease_id,
                                      const SymfonicStreamCapScope *scopes,
                                      guint                         n_scopes,
                                      gint64                        now_us,
                                      GCancellable                 *cancellable,
                                      GAsyncReadyCallback           callback,
                                      gpointer                      user_data)
{
  SymfonicRedisStore *self = SYMFONIC_REDIS_STORE (store);
  Op *op;

  if (lease_id & LOCAL_LEASE)
    {
      SymfonicStreamCapStore *local = SYMFONIC_STREAM_CAP_STORE (self->local);
      g_autofree SymfonicStreamCapScope *shares = local_cap_shares (self, scopes, n_scopes);
      const Verdict renewed = { .renewed = TRUE };

      symfonic_stream_cap_store_renew_async (local, lease_id & ~LOCAL_LEASE, shares, n_scopes,
                                             symfonic_stream_cap_store_get_time (local), NULL, NULL, NULL);
      answer_now (self, cancellable, symfonic_redis_store_cap_renew_async, TRUE, callback, user_data, &renewed,
                  NULL);
      return;
    }

  op = renew_op (self, get_conn (self), OP_CAP_RENEW, lease_id, NULL, scopes, n_scopes);
  op_set_asker (op, cancellable, symfonic_redis_store_cap_renew_async, TRUE, callback, user_data);
  ask (op);
}

static gboolean
symfonic_redis_store_cap_renew_finish (SymfonicStreamCapStore  *store,
                                       GAsyncResult            *result,
                                       gboolean                *renewed,
                                       GError                 **error)
{
  Verdict verdict;

  if (!propagate_verdict (result, store, &verdict, error))
    return FALSE;
  *renewed = verdict.renewed;

  return TRUE;
}

static void
symfonic_redis_store_release_async (SymfonicStreamCapStore       *store,
                                    guint64                       lease_id,
                                    const SymfonicStreamCapScope *scopes,
                                    guint                         n_scopes,
                                    gint64                        now_us,
                                    GCancellable                 *cancellable,
                                    GAsyncReadyCallback           callback,
                                    gpointer                      user_data)
{
  SymfonicRedisStore *self = SYMFONIC_REDIS_STORE (store);
  Conn *conn;
  Op *op;

  if (lease_id & LOCAL_LEASE)
    {
      SymfonicStreamCapStore *local = SYMFONIC_STREAM_CAP_STORE (self->local);
      g_autofree SymfonicStreamCapScope *shares = local_cap_shares (self, scopes, n_scopes);
      const Verdict released = { 0, };

      symfonic_stream_cap_store_release_async (local, lease_id & ~LOCAL_LEASE, shares, n_scopes,
                                               symfonic_stream_cap_store_get_time (local), NULL, NULL, NULL);
      answer_now (self, cancellable, symfonic_redis_store_release_async, FALSE, callback, user_data, &released,
                  NULL);
      return;
    }

  conn = get_conn (self);
  op = op_new (self, conn, OP_RELEASE, SYMFONIC_REDIS_SCRIPT_CAP_RELEASE);
  op->lease_id = lease_id;
  op->lease = lease_ref (lease_get (conn, lease_id, NULL, scopes, n_scopes));
  lease_forget (conn, op->lease);
  op_set_asker (op, cancellable, symfonic_redis_store_release_async, FALSE, callback, user_data);
  ask (op);
}

static gboolean
symfonic_redis_store_release_finish (SymfonicStreamCapStore  *store,
                                     GAsyncResult            *result,
                                     GError                 **error)
{
  Verdict verdict;

  return propagate_verdict (result, store, &verdict, error);
}

static void
symfonic_redis_store_cap_init (SymfonicStreamCapStoreInterface *iface)
{
  iface->get_time = symfonic_redis_store_cap_get_time;
  iface->acquire_async = symfonic_redis_store_acquire_async;
  iface->acquire_finish = symfonic_redis_store_acquire_finish;
  iface->try_acquire = symfonic_redis_store_try_acquire;
  iface->renew_async = symfonic_redis_store_cap_renew_async;
  iface->renew_finish = symfonic_redis_store_cap_renew_finish;
  iface->release_async = symfonic_redis_store_release_async;
  iface->release_finish = symfonic_redis_store_release_finish;
}

/* --- SymfonicRunStore --------------------------------------------------- */

/* The run role is symfonic-redis-run-store.c's: the store hands it on. */
#define RUNS(store) SYMFONIC_RUN_STORE (SYMFONIC_REDIS_STORE (store)->runs)

static gboolean
run_try_open (SymfonicRunStore  *store,
              const char        *run_id,
              const char        *principal_id,
              const char        *tenant_id,
              guint              max_frames,
              guint64            max_bytes,
              GError           **error)
{
  return symfonic_run_store_try_open_run (RUNS (store), run_id, principal_id, tenant_id, max_frames, max_bytes, error);
}

static void
run_append (SymfonicRunStore *store,
            const char       *run_id,
            guint64           seq,
            const char       *frame,
            gsize             length)
{
  symfonic_run_store_append (RUNS (store), run_id, seq, frame, length);
}

static void
run_close (SymfonicRunStore *store,
           const char       *run_id,
           guint             keep_seconds)
{
  symfonic_run_store_close_run (RUNS (store), run_id, keep_seconds);
}

static GPtrArray *
run_try_read (SymfonicRunStore  *store,
              const char        *run_id,
              const char        *principal_id,
              const char        *tenant_id,
              guint64            after,
              gboolean          *ended,
              GError           **error)
{
  return symfonic_run_store_try_read (RUNS (store), run_id, principal_id, tenant_id, after, ended, error);
}

static void
run_read_async (SymfonicRunStore    *store,
                const char          *run_id,
                const char          *principal_id,
                const char          *tenant_id,
                guint64              after,
                GCancellable        *cancellable,
                GAsyncReadyCallback  callback,
                gpointer             user_data)
{
  symfonic_run_store_read_async (RUNS (store), run_id, principal_id, tenant_id, after, cancellable, callback,
                                 user_data);
}

static GPtrArray *
run_read_finish (SymfonicRunStore  *store,
                 GAsyncResult      *result,
                 gboolean          *ended,
                 GError           **error)
{
  return symfonic_run_store_read_finish (RUNS (store), result, ended, error);
}

static void
run_wait_async (SymfonicRunStore    *store,
                const char          *run_id,
                const char          *principal_id,
                const char          *tenant_id,
                guint64              after,
                GCancellable        *cancellable,
                GAsyncReadyCallback  callback,
                gpointer             user_data)
{
  symfonic_run_store_wait_async (RUNS (store), run_id, principal_id, tenant_id, after, cancellable, callback,
                                 user_data);
}

static gboolean
run_wait_finish (SymfonicRunStore  *store,
                 GAsyncResult      *result,
                 GError           **error)
{
  return symfonic_run_store_wait_finish (RUNS (store), result, error);
}

static void
run_note_reader (SymfonicRunStore *store,
                 const char       *run_id,
                 const char       *principal_id,
                 const char       *tenant_id,
                 gboolean          following)
{
  symfonic_run_store_note_reader (RUNS (store), run_id, principal_id, tenant_id, following);
}

static void
run_get_unread_async (SymfonicRunStore    *store,
                      const char          *run_id,
                      const char          *principal_id,
                      const char          *tenant_id,
                      GCancellable        *cancellable,
                      GAsyncReadyCallback  callback,
                      gpointer             user_data)
{
  symfonic_run_store_get_unread_async (RUNS (store), run_id, principal_id, tenant_id, cancellable, callback,
                                       user_data);
}

static gboolean
run_get_unread_finish (SymfonicRunStore  *store,
                       GAsyncResult      *result,
                       gint64            *unread_ms,
                       GError           **error)
{
  return symfonic_run_store_get_unread_finish (RUNS (store), result, unread_ms, error);
}

static void
symfonic_redis_store_run_init (SymfonicRunStoreInterface *iface)
{
  iface->try_open_run = run_try_open;
  iface->append = run_append;
  iface->close_run = run_close;
  iface->try_read = run_try_read;
  iface->read_async = run_read_async;
  iface->read_finish = run_read_finish;
  iface->wait_async = run_wait_async;
  iface->wait_finish = run_wait_finish;
  iface->note_reader = run_note_reader;
  iface->get_unread_async = run_get_unread_async;
  iface->get_unread_finish = run_get_unread_finish;
}

/* --- SymfonicStore ------------------------------------------------------- */

static gint64
symfonic_redis_store_get_lease_ttl (SymfonicStore *store)
{
  return (gint64) SYMFONIC_REDIS_STORE (store)->lease_ttl_ms * 1000;
}

/* A check has a connection of its own, on the caller's main context,
 * closed once it answered: the workers' connections are theirs. */
typedef struct
{
  SymfonicRedisClient *client;
  SymfonicRedisStats   stats;
  GSource             *timeout;
  GTask               *task;
} Check;

static void
check_done (Check  *check,
            GError *error)
{
  GTask *task = g_steal_pointer (&check->task);

  if (task == NULL)
    return;
  if (check->timeout != NULL)
    {
      g_source_destroy (check->timeout);
      g_clear_pointer (&check->timeout, g_source_unref);
    }
  symfonic_redis_client_set_state_func (check->client, NULL, NULL);
  symfonic_redis_client_close (check->client);
  g_clear_pointer (&check->client, symfonic_redis_client_unref);
  g_free (check);

  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
  g_object_unref (task);
}

static void
check_state (SymfonicRedisClient *client,
             gboolean             up,
             gpointer             user_data)
{
  if (up)
    check_done (user_data, NULL);
}

static gboolean
check_timeout (gpointer user_data)
{
  Check *check = user_data;
  const char *display = symfonic_redis_client_get_display (check->client);
  GError *error;

  g_clear_pointer (&check->timeout, g_source_unref);
  if (check->stats.failures[SYMFONIC_REDIS_FAILURE_AUTH] > 0)
    error = g_error_new (SYMFONIC_ERROR, SYMFONIC_ERROR_STORE_UNAVAILABLE,
                         _("Redis at %s refused the credentials of password-file"), display);
  else
    error = g_error_new (SYMFONIC_ERROR, SYMFONIC_ERROR_STORE_UNAVAILABLE,
                         _("Could not connect to Redis at %s within %u ms"), display, CHECK_TIMEOUT_MS);
  check_done (check, error);

  return G_SOURCE_REMOVE;
}

static void
symfonic_redis_store_check_async (SymfonicStore       *store,
                                  GCancellable        *cancellable,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data)
{
  SymfonicRedisStore *self = SYMFONIC_REDIS_STORE (store);
  Check *check = g_new0 (Check, 1);

  check->task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (check->task, symfonic_redis_store_check_async);
  check->client = symfonic_redis_client_new (&self->address);
  if (self->password != NULL)
    symfonic_redis_client_set_credentials (check->client, NULL, self->password);
  symfonic_redis_client_set_timeout (check->client, self->timeout_ms);
  symfonic_redis_client_set_connect_timeout (check->client, CHECK_TIMEOUT_MS);
  symfonic_redis_client_set_stats (check->client, &check->stats);
  symfonic_redis_client_set_state_func (check->client, check_state, check);
  check->timeout = g_timeout_source_new (CHECK_TIMEOUT_MS);
  g_source_set_callback (check->timeout, check_timeout, check, NULL);
  g_source_attach (check->timeout, g_main_context_get_thread_default ());
  symfonic_redis_client_start (check->client);
}

static gboolean
symfonic_redis_store_check_finish (SymfonicStore  *store,
                                   GAsyncResult   *result,
                                   GError        **error)
{
  g_return_val_if_fail (g_task_is_valid (result, store), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
symfonic_redis_store_store_init (SymfonicStoreInterface *iface)
{
  iface->get_lease_ttl = symfonic_redis_store_get_lease_ttl;
  iface->check_async = symfonic_redis_store_check_async;
  iface->check_finish = symfonic_redis_store_check_finish;
}

/* --- metrics ------------------------------------------------------------- */

static void
append_label (GString    *out,
              const char *value)
{
  for (const char *p = value; *p != '\0'; p++)
    {
      if (*p == '\\' || *p == '"')
        g_string_append_c (out, '\\');
      if (*p == '\n')
        g_string_append (out, "\\n");
      else
        g_string_append_c (out, *p);
    }
}

/* The HELP and TYPE lines of the store metrics, once per scrape. */
void
symfonic_redis_store_render_help (GString *out)
{
  g_string_append (out,
                   "# HELP symfonic_store_up Whether every connection of a shared store is up (1) or not (0)\n"
                   "# TYPE symfonic_store_up gauge\n"
                   "# HELP symfonic_store_errors_total Failed store commands and connections, by kind\n"
                   "# TYPE symfonic_store_errors_total counter\n"
                   "# HELP symfonic_store_command_duration_seconds Round-trip time of answered store commands\n"
                   "# TYPE symfonic_store_command_duration_seconds histogram\n"
                   "# HELP symfonic_store_decisions_total Admissions a shared store decided, by outcome\n"
                   "# TYPE symfonic_store_decisions_total counter\n"
                   "# HELP symfonic_store_backlog Settlements and releases waiting for the store to answer\n"
                   "# TYPE symfonic_store_backlog gauge\n"
                   "# HELP symfonic_store_backlog_dropped_total Settlements and releases dropped from a full backlog\n"
                   "# TYPE symfonic_store_backlog_dropped_total counter\n");
}

/* The per-worker counters summed: read without a lock (relaxed atomics);
 * the lock only keeps the list of connections still while it is read. */
void
symfonic_redis_store_render_metrics (SymfonicRedisStore *self,
                                     const char         *name,
                                     GString            *out)
{
  SymfonicRedisStats sum = { 0, };
  guint64 outcomes[SYMFONIC_REDIS_N_OUTCOMES] = { 0, };
  guint64 dropped = 0, backlog = 0, cumulative = 0;
  guint n_conns;
  g_autoptr(GString) label = g_string_new ("store=\"");

  append_label (label, name);
  g_string_append_c (label, '"');

  g_mutex_lock (&self->lock);
  n_conns = self->all_conns->len;
  for (guint i = 0; i < n_conns; i++)
    {
      Conn *conn = g_ptr_array_index (self->all_conns, i);

      symfonic_redis_stats_add (&sum, &conn->stats);
      for (guint j = 0; j < SYMFONIC_REDIS_N_OUTCOMES; j++)
        outcomes[j] += __atomic_load_n (&conn->outcomes[j], __ATOMIC_RELAXED);
      dropped += __atomic_load_n (&conn->backlog_dropped, __ATOMIC_RELAXED);
      backlog += (guint) g_atomic_int_get (&conn->backlog_length);
    }
  g_mutex_unlock (&self->lock);
  if (self->runs != NULL)
    symfonic_redis_run_store_add_stats (self->runs, &sum, &n_conns);

  g_string_append_printf (out, "symfonic_store_up{%s} %d\n", label->str,
                          n_conns > 0 && (guint) sum.up == n_conns);
  for (guint i = 0; i < SYMFONIC_REDIS_N_FAILURES; i++)
    g_string_append_printf (out, "symfonic_store_errors_total{%s,kind=\"%s\"} %" G_GUINT64_FORMAT "\n",
                            label->str, symfonic_redis_failure_get_name (i), sum.failures[i]);
  for (guint i = 0; i < SYMFONIC_REDIS_N_LATENCY_BUCKETS; i++)
    {
      cumulative += sum.latency[i];
      if (i + 1 < SYMFONIC_REDIS_N_LATENCY_BUCKETS)
        g_string_append_printf (out, "symfonic_store_command_duration_seconds_bucket{%s,le=\"%g\"} %"
                                G_GUINT64_FORMAT "\n", label->str,
                                symfonic_redis_stats_get_bound (i) / 1e6, cumulative);
      else
        g_string_append_printf (out, "symfonic_store_command_duration_seconds_bucket{%s,le=\"+Inf\"} %"
                                G_GUINT64_FORMAT "\n", label->str, cumulative);
    }
  g_string_append_printf (out, "symfonic_store_command_duration_seconds_sum{%s} %.6f\n"
                          "symfonic_store_command_duration_seconds_count{%s} %" G_GUINT64_FORMAT "\n",
                          label->str, sum.latency_sum_us / 1e6, label->str, cumulative);
  for (guint i = 0; i < SYMFONIC_REDIS_N_OUTCOMES; i++)
    g_string_append_printf (out, "symfonic_store_decisions_total{%s,outcome=\"%s\"} %" G_GUINT64_FORMAT "\n",
                            label->str, outcome_names[i], outcomes[i]);
  g_string_append_printf (out, "symfonic_store_backlog{%s} %" G_GUINT64_FORMAT "\n"
                          "symfonic_store_backlog_dropped_total{%s} %" G_GUINT64_FORMAT "\n",
                          label->str, backlog, label->str, dropped);
}

/* --- GObject ------------------------------------------------------------- */

static gboolean
read_password (SymfonicRedisStore  *self,
               GError             **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *contents = NULL;
  g_autofree char *path = NULL;
  gsize length = 0;

  if (self->password_file == NULL)
    return TRUE;

  path = g_file_get_parse_name (self->password_file);
  if (!g_file_load_contents (self->password_file, NULL, &contents, &length, NULL, &local_error))
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, _("password-file: %s"), local_error->message);
      return FALSE;
    }
  /* one line; its newline is the editor's, not the password's */
  while (length > 0 && (contents[length - 1] == '\n' || contents[length - 1] == '\r'))
    contents[--length] = '\0';
  if (length == 0 || memchr (contents, '\0', length) != NULL || memchr (contents, '\n', length) != NULL)
    {
      memset (contents, 0, length);
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("password-file: %s must hold the password on one line"), path);
      return FALSE;
    }
  self->password = g_steal_pointer (&contents);

  return TRUE;
}

static gboolean
symfonic_redis_store_initable_init_impl (GInitable     *initable,
                                         GCancellable  *cancellable,
                                         GError       **error)
{
  SymfonicRedisStore *self = SYMFONIC_REDIS_STORE (initable);
  g_autoptr(GError) local_error = NULL;

  if (self->initialized)
    return TRUE;

  if (!symfonic_redis_address_parse (&self->address, self->url, &local_error))
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, "url: %s", local_error->message);
      return FALSE;
    }
  if (!read_password (self, error))
    return FALSE;
  if (self->lease_ttl_ms < 3 * self->timeout_ms)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("lease-ttl-ms (%u) must be at least three times timeout-ms (%u): leases are renewed "
                     "every third of their TTL"), self->lease_ttl_ms, self->timeout_ms);
      return FALSE;
    }

  self->local = symfonic_memory_store_new (self->lease_ttl_ms);
  self->runs = symfonic_redis_run_store_new (&self->address, self->password, self->key_prefix, self->timeout_ms,
                                             self->lease_ttl_ms);
  self->initialized = TRUE;

  return TRUE;
}

static void
symfonic_redis_store_initable_init (GInitableIface *iface)
{
  iface->init = symfonic_redis_store_initable_init_impl;
}

static void
symfonic_redis_store_finalize (GObject *object)
{
  SymfonicRedisStore *self = SYMFONIC_REDIS_STORE (object);

  /* a worker's connection is closed on its worker's thread; a worker
   * already gone runs nothing any more, so closing it here is safe */
  for (guint i = 0; i < self->all_conns->len; i++)
    {
      Conn *conn = g_ptr_array_index (self->all_conns, i);

      conn->store = NULL;
      symfonic_redis_close_on (conn->context, conn_close_cb, conn);
    }
  g_ptr_array_unref (self->all_conns);
  g_hash_table_unref (self->conns);
  g_mutex_clear (&self->lock);
  g_clear_object (&self->local);
  g_clear_object (&self->runs);
  if (self->password != NULL)
    {
      memset (self->password, 0, strlen (self->password));
      g_free (self->password);
    }
  symfonic_redis_address_clear (&self->address);
  g_free (self->url);
  g_clear_object (&self->password_file);
  g_free (self->key_prefix);

  G_OBJECT_CLASS (symfonic_redis_store_parent_class)->finalize (object);
}

static void
symfonic_redis_store_get_property (GObject    *object,
                                   guint       prop_id,
                                   GValue     *value,
                                   GParamSpec *pspec)
{
  SymfonicRedisStore *self = SYMFONIC_REDIS_STORE (object);

  switch (prop_id)
    {
    case PROP_URL:
      g_value_set_string (value, self->url);
      break;
    case PROP_PASSWORD_FILE:
      g_value_set_object (value, self->password_file);
      break;
    case PROP_KEY_PREFIX:
      g_value_set_string (value, self->key_prefix);
      break;
    case PROP_TIMEOUT_MS:
      g_value_set_uint (value, self->timeout_ms);
      break;
    case PROP_ON_FAILURE:
      g_value_set_enum (value, self->on_failure);
      break;
    case PROP_INSTANCES:
      g_value_set_uint (value, self->instances);
      break;
    case PROP_LEASE_TTL_MS:
      g_value_set_uint (value, self->lease_ttl_ms);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_redis_store_set_property (GObject      *object,
                                   guint         prop_id,
                                   const GValue *value,
                                   GParamSpec   *pspec)
{
  SymfonicRedisStore *self = SYMFONIC_REDIS_STORE (object);

  switch (prop_id)
    {
    case PROP_URL:
      g_free (self->url);
      self->url = g_value_dup_string (value);
      break;
    case PROP_PASSWORD_FILE:
      g_set_object (&self->password_file, g_value_get_object (value));
      break;
    case PROP_KEY_PREFIX:
      g_free (self->key_prefix);
      self->key_prefix = g_value_dup_string (value);
      if (self->key_prefix == NULL)
        self->key_prefix = g_strdup ("");
      break;
    case PROP_TIMEOUT_MS:
      self->timeout_ms = g_value_get_uint (value);
      break;
    case PROP_ON_FAILURE:
      self->on_failure = g_value_get_enum (value);
      break;
    case PROP_INSTANCES:
      self->instances = g_value_get_uint (value);
      break;
    case PROP_LEASE_TTL_MS:
      self->lease_ttl_ms = g_value_get_uint (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_redis_store_class_init (SymfonicRedisStoreClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS;

  object_class->finalize = symfonic_redis_store_finalize;
  object_class->get_property = symfonic_redis_store_get_property;
  object_class->set_property = symfonic_redis_store_set_property;

  properties[PROP_URL] =
    g_param_spec_string ("url", "URL",
                         "The Redis server: redis://HOST[:PORT][/DB] or redis+unix:///PATH[?db=N]; "
                         "never a password",
                         "redis://127.0.0.1:6379/0", flags);
  properties[PROP_PASSWORD_FILE] =
    g_param_spec_object ("password-file", "Password file",
                         "A file holding the password sent with AUTH, on one line (never logged)",
                         G_TYPE_FILE, flags);
  properties[PROP_KEY_PREFIX] =
    g_param_spec_string ("key-prefix", "Key prefix",
                         "What every key of this store starts with, so that several gateways may share "
                         "one Redis database",
                         "symfonic:", flags);
  properties[PROP_TIMEOUT_MS] =
    g_param_spec_uint ("timeout-ms", "Timeout",
                       "The deadline of every command, in milliseconds: no request waits on Redis longer",
                       1, 60000, 50, flags);
  properties[PROP_ON_FAILURE] =
    g_param_spec_enum ("on-failure", "On failure",
                       "What an admission gets while Redis does not answer: deny (refused with Retry-After), "
                       "allow (admitted), local (each instance enforces limit ÷ instances)",
                       SYMFONIC_TYPE_REDIS_ON_FAILURE, SYMFONIC_REDIS_ON_FAILURE_DENY, flags);
  properties[PROP_INSTANCES] =
    g_param_spec_uint ("instances", "Instances",
                       "How many instances share the store: with on-failure=local each enforces this "
                       "share of every limit",
                       1, 10000, 1, flags);
  properties[PROP_LEASE_TTL_MS] =
    g_param_spec_uint ("lease-ttl-ms", "Lease TTL",
                       "How long a budget reservation, stream slot or resumable run's producer lease lives "
                       "unless its instance renews it, in milliseconds: the longest a dead instance's holdings "
                       "stay counted, and its runs' readers wait",
                       100, G_MAXINT / 1000, SYMFONIC_STORE_DEFAULT_LEASE_TTL_MS, flags);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
symfonic_redis_store_init (SymfonicRedisStore *self)
{
  self->url = g_strdup ("redis://127.0.0.1:6379/0");
  self->key_prefix = g_strdup ("symfonic:");
  self->timeout_ms = 50;
  self->instances = 1;
  self->lease_ttl_ms = SYMFONIC_STORE_DEFAULT_LEASE_TTL_MS;
  self->last_lease = ((guint64) g_random_int () << 32 | g_random_int ()) & ~LOCAL_LEASE;
  self->serial = (guint) g_atomic_int_add (&last_serial, 1) + 1;
  g_mutex_init (&self->lock);
  self->conns = g_hash_table_new (NULL, NULL);
  self->all_conns = g_ptr_array_new ();
}
