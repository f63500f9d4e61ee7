/* test-redis-scripts.c: what the shared stores' Lua scripts decide
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "redis-test-common.h"

/* Each script is run as a store runs it, EVALSHA through the client, on a
 * server of the test's own; the expected answers are worked out by hand
 * from the script's rules, in the comments beside them. */

#define PREFIX "symfonic:"
#define MINUTE_US "60000000"
#define IN_FLIGHT_RETRY_US "1000000"

typedef struct
{
  GMainContext        *context;
  SymfonicTestRedis   *server;
  SymfonicRedisClient *client;
} Fixture;

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  f->context = g_main_context_new ();
  g_main_context_push_thread_default (f->context);
  f->server = symfonic_test_redis_start (SYMFONIC_TEST_REDIS_TCP, NULL);
  f->client = redis_test_client_new (symfonic_test_redis_get_url (f->server), 1000);
  symfonic_redis_client_start (f->client);
  redis_test_wait_up (f->client);
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  g_clear_pointer (&f->client, symfonic_redis_client_unref);
  g_clear_pointer (&f->server, symfonic_test_redis_free);
  g_main_context_pop_thread_default (f->context);
  while (g_main_context_iteration (f->context, FALSE))
    ;
  g_main_context_unref (f->context);
}

static char *
run (Fixture               *f,
     SymfonicRedisScriptId  id,
     const char * const    *keys,
     const char * const    *args)
{
  g_autoptr(GError) error = NULL;
  char *reply = redis_test_eval (f->client, symfonic_redis_script_get_builtin (id), keys, args, &error);

  g_assert_no_error (error);
  return reply;
}

#define KEYS(...) ((const char * const[]) { __VA_ARGS__, NULL })
#define ARGS(...) ((const char * const[]) { __VA_ARGS__, NULL })

#define assert_run(f, id, keys, args, expected) \
  G_STMT_START { \
    g_autofree char *reply_ = run ((f), (id), (keys), (args)); \
    g_assert_cmpstr (reply_, ==, (expected)); \
  } G_STMT_END

/* The second number of a "[0,N]" or "[0,N,S]" answer. */
static gint64
refused_retry (const char *reply)
{
  long long retry = -1;

  g_assert_true (g_str_has_prefix (reply, "[0,"));
  g_assert_cmpint (sscanf (reply, "[0,%lld", &retry), ==, 1);

  return retry;
}

static char *
field (Fixture    *f,
       const char *key,
       const char *name)
{
  return symfonic_test_redis_string (f->server, "HGET %s %s", key, name);
}

#define assert_field(f, key, name, expected) \
  G_STMT_START { \
    g_autofree char *value_ = field ((f), (key), (name)); \
    g_assert_cmpstr (value_, ==, (expected)); \
  } G_STMT_END

/* --- GCRA ---------------------------------------------------------------- */

/* T = 100 ms, burst 5 (τ = 4 T): five at once, the sixth refused for what
 * is left of T; a refusal moves nothing. */
static void
test_gcra (Fixture       *f,
           gconstpointer  data)
{
  g_autofree char *cell = symfonic_redis_tenant_key (PREFIX, "acme", "rl:typed");
  const char * const *args = ARGS ("100000", "400000");
  g_autofree char *refused = NULL;
  g_autofree char *again = NULL;
  g_autofree char *tat_before = NULL;
  g_autofree char *tat_after = NULL;
  gint64 retry;
  gint64 pttl;

  for (guint i = 0; i < 5; i++)
    assert_run (f, SYMFONIC_REDIS_SCRIPT_GCRA_TAKE, KEYS (cell), args, "[1,0]");

  tat_before = symfonic_test_redis_string (f->server, "GET %s", cell);
  refused = run (f, SYMFONIC_REDIS_SCRIPT_GCRA_TAKE, KEYS (cell), args);
  retry = refused_retry (refused);
  g_test_message ("retry after %" G_GINT64_FORMAT " us", retry);
  /* TAT = t0 + 5 T; conforming again at TAT − τ = t0 + T: a little less
   * than T from now, the five calls having taken a little time */
  g_assert_cmpint (retry, >, 80000);
  g_assert_cmpint (retry, <=, 100000);

  again = run (f, SYMFONIC_REDIS_SCRIPT_GCRA_TAKE, KEYS (cell), args);
  g_assert_cmpint (refused_retry (again), <=, retry);
  tat_after = symfonic_test_redis_string (f->server, "GET %s", cell);
  g_assert_cmpstr (tat_after, ==, tat_before);

  /* the cell lives until its TAT, about 500 ms from now */
  pttl = symfonic_test_redis_integer (f->server, "PTTL %s", cell);
  g_assert_cmpint (pttl, >, 300);
  g_assert_cmpint (pttl, <=, 501);

  /* one more after T, then refused again */
  g_usleep (110 * 1000);
  assert_run (f, SYMFONIC_REDIS_SCRIPT_GCRA_TAKE, KEYS (cell), args, "[1,0]");
  g_clear_pointer (&refused, g_free);
  refused = run (f, SYMFONIC_REDIS_SCRIPT_GCRA_TAKE, KEYS (cell), args);
  g_assert_cmpint (refused_retry (refused), >, 0);

  /* another tenant's cell is another cell */
  {
    g_autofree char *other = symfonic_redis_tenant_key (PREFIX, "globex", "rl:typed");

    assert_run (f, SYMFONIC_REDIS_SCRIPT_GCRA_TAKE, KEYS (other), args, "[1,0]");
  }
}

/* --- budgets ------------------------------------------------------------- */

typedef struct
{
  char *b;
  char *l;
} Scope;

static void
scope_init (Scope      *scope,
            const char *tenant,
            const char *name)
{
  g_autofree char *leases = g_strconcat (name, ":leases", NULL);

  scope->b = symfonic_redis_tenant_key (PREFIX, tenant, name);
  scope->l = symfonic_redis_tenant_key (PREFIX, tenant, leases);
}

static void
scope_clear (Scope *scope)
{
  g_free (scope->b);
  g_free (scope->l);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Scope, scope_clear)

typedef struct
{
  guint      answered;
  guint      granted;
  gint64     allowances;
  GPtrArray *refusals;
} Race;

static void
on_race_reply (SymfonicRedisClient      *client,
               const SymfonicRedisReply *reply,
               const GError             *error,
               gpointer                  user_data)
{
  Race *race = user_data;
  gint64 values[3];

  g_assert_no_error (error);
  g_assert_true (symfonic_redis_reply_read_integers (reply, values, 3));
  race->answered++;
  if (values[0] == 1)
    {
      race->granted++;
      race->allowances += values[1];
    }
  else
    {
      g_ptr_array_add (race->refusals, redis_test_format_reply (reply));
    }
}

static gboolean
race_over (gpointer data)
{
  return ((Race *) data)->answered == 200;
}

/* 200 reservations of 100 against 2,000 tokens, sent together on four
 * connections: exactly 20 are granted. */
static void
test_budget_race (Fixture       *f,
                  gconstpointer  data)
{
  g_auto(Scope) day = { 0 };
  SymfonicRedisClient *clients[4];
  Race race = { 0, 0, 0, g_ptr_array_new_with_free_func (g_free) };
  SymfonicRedisScript *reserve = symfonic_redis_script_get_builtin (SYMFONIC_REDIS_SCRIPT_BUDGET_RESERVE);

  scope_init (&day, "acme", "budget:day");
  clients[0] = symfonic_redis_client_ref (f->client);
  for (guint c = 1; c < G_N_ELEMENTS (clients); c++)
    {
      clients[c] = redis_test_client_new (symfonic_test_redis_get_url (f->server), 1000);
      symfonic_redis_client_start (clients[c]);
      redis_test_wait_up (clients[c]);
    }

  for (guint i = 0; i < 50; i++)
    for (guint c = 0; c < G_N_ELEMENTS (clients); c++)
      {
        g_autofree char *id = g_strdup_printf ("lease-%u-%u", c, i);
        const char * const keys[] = { day.b, day.l };
        const char * const args[] = { id, "100", "30000", IN_FLIGHT_RETRY_US, "2000", MINUTE_US };
        g_autoptr(GError) error = NULL;

        g_assert_true (symfonic_redis_client_eval (clients[c], reserve, 2, keys, 6, args, on_race_reply, &race,
                                                   &error));
      }
  g_assert_true (redis_test_wait (race_over, &race, REDIS_TEST_WAIT_US));

  g_assert_cmpuint (race.granted, ==, 20);
  /* the k-th had 2000 − 100 (k − 1) of room: 2000 + 1900 + … + 100 */
  g_assert_cmpint (race.allowances, ==, 21000);
  g_assert_cmpuint (race.refusals->len, ==, 180);
  for (guint i = 0; i < race.refusals->len; i++)
    /* only reservations in flight are in the way: the advice is theirs */
    g_assert_cmpstr (race.refusals->pdata[i], ==, "[0,1000000,1]");
  assert_field (f, day.b, "held", "2000");
  assert_field (f, day.b, "charged", "0");
  g_assert_cmpint (symfonic_test_redis_integer (f->server, "ZCARD %s", day.l), ==, 20);

  for (guint c = 0; c < G_N_ELEMENTS (clients); c++)
    symfonic_redis_client_unref (clients[c]);
  g_ptr_array_unref (race.refusals);
}

/* A reservation is taken in every scope or in none. */
static void
test_budget_scopes (Fixture       *f,
                    gconstpointer  data)
{
  g_auto(Scope) tenant = { 0 };
  g_auto(Scope) principal = { 0 };
  gint64 pttl;

  scope_init (&tenant, "acme", "budget:tenant");
  scope_init (&principal, "acme", "budget:principal:alice");

  assert_run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_RESERVE, KEYS (tenant.b, tenant.l, principal.b, principal.l),
              ARGS ("one", "100", "30000", IN_FLIGHT_RETRY_US, "1000", MINUTE_US, "150", MINUTE_US),
              /* the least room: the principal's 150 */
              "[1,150,0]");
  /* the tenant has room, the principal (50 left) does not */
  assert_run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_RESERVE, KEYS (tenant.b, tenant.l, principal.b, principal.l),
              ARGS ("two", "100", "30000", IN_FLIGHT_RETRY_US, "1000", MINUTE_US, "150", MINUTE_US),
              "[0,1000000,2]");
  assert_field (f, tenant.b, "held", "100");
  assert_field (f, principal.b, "held", "100");
  g_assert_cmpint (symfonic_test_redis_integer (f->server, "HEXISTS %s l:two", tenant.b), ==, 0);

  /* a reservation sent again (its answer lost) reserves nothing twice */
  assert_run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_RESERVE, KEYS (tenant.b, tenant.l, principal.b, principal.l),
              ARGS ("one", "100", "30000", IN_FLIGHT_RETRY_US, "1000", MINUTE_US, "150", MINUTE_US),
              "[1,150,0]");
  assert_field (f, tenant.b, "held", "100");

  /* the keys live for the window, and vanish by themselves */
  pttl = symfonic_test_redis_integer (f->server, "PTTL %s", tenant.b);
  g_assert_cmpint (pttl, >, 59000);
  g_assert_cmpint (pttl, <=, 61000);
  pttl = symfonic_test_redis_integer (f->server, "PTTL %s", tenant.l);
  g_assert_cmpint (pttl, >, 29000);
  g_assert_cmpint (pttl, <=, 31000);
}

/* Charges count a running stream's usage against its lease first, then
 * against the room left; the stream is told when nothing is left. */
static void
test_budget_charge (Fixture       *f,
                    gconstpointer  data)
{
  g_auto(Scope) day = { 0 };
  g_auto(Scope) big = { 0 };

  scope_init (&day, "acme", "budget:day");
  scope_init (&big, "acme", "budget:big");

  /* 250 per window; 100 reserved */
  assert_run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_RESERVE, KEYS (day.b, day.l),
              ARGS ("s1", "100", "30000", IN_FLIGHT_RETRY_US, "250", MINUTE_US), "[1,250,0]");
  /* 200 used: the lease's 100, and 100 of the 150 left: 50 remain */
  assert_run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_CHARGE, KEYS (day.b, day.l), ARGS ("s1", "200", "0", "250", MINUTE_US),
              "[0,50,0]");
  assert_field (f, day.b, "charged", "200");
  assert_field (f, day.b, "held", "0");
  /* 250 used: exhausted */
  assert_run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_CHARGE, KEYS (day.b, day.l), ARGS ("s1", "250", "200", "250", MINUTE_US),
              "[1,0,0]");
  /* the same charge again (its answer lost) counts nothing twice */
  assert_run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_CHARGE, KEYS (day.b, day.l), ARGS ("s1", "250", "200", "250", MINUTE_US),
              "[1,0,0]");
  assert_field (f, day.b, "charged", "250");
  /* and nobody else gets in before the window ends, a minute after the
   * first reservation */
  {
    g_autofree char *refused = run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_RESERVE, KEYS (day.b, day.l),
                                    ARGS ("s2", "1", "30000", IN_FLIGHT_RETRY_US, "250", MINUTE_US));
    gint64 retry = refused_retry (refused);

    g_assert_true (g_str_has_suffix (refused, ",1]"));
    g_assert_cmpint (retry, >, 59000000);
    g_assert_cmpint (retry, <=, 60000000);
  }

  /* within the lease: 300 reserved of 1000, 100 used: the lease holds
   * 200 more, and 700 are free: 900 remain */
  assert_run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_RESERVE, KEYS (big.b, big.l),
              ARGS ("s3", "300", "30000", IN_FLIGHT_RETRY_US, "1000", MINUTE_US), "[1,1000,0]");
  assert_run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_CHARGE, KEYS (big.b, big.l), ARGS ("s3", "100", "0", "1000", MINUTE_US),
              "[0,900,0]");
  assert_field (f, big.b, "held", "200");
  assert_field (f, big.b, "charged", "100");
}

/* Settling counts the real usage and gives back what the lease held and
 * did not use. */
static void
test_budget_settle (Fixture       *f,
                    gconstpointer  data)
{
  g_auto(Scope) day = { 0 };

  scope_init (&day, "acme", "budget:day");

  assert_run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_RESERVE, KEYS (day.b, day.l),
              ARGS ("s1", "300", "30000", IN_FLIGHT_RETRY_US, "1000", MINUTE_US), "[1,1000,0]");
  assert_run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_CHARGE, KEYS (day.b, day.l), ARGS ("s1", "100", "0", "1000", MINUTE_US),
              "[0,900,0]");
  /* 120 in all: 180 of the 300 unused */
  assert_run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_SETTLE, KEYS (day.b, day.l), ARGS ("s1", "120", "100", "1000", MINUTE_US),
              "[180,0]");
  assert_field (f, day.b, "held", "0");
  assert_field (f, day.b, "charged", "120");
  /* settled twice: nothing more */
  assert_run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_SETTLE, KEYS (day.b, day.l), ARGS ("s1", "120", "100", "1000", MINUTE_US),
              "[0,0]");
  assert_field (f, day.b, "charged", "120");
  /* the 880 left are there for the next */
  assert_run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_RESERVE, KEYS (day.b, day.l),
              ARGS ("s2", "880", "30000", IN_FLIGHT_RETRY_US, "1000", MINUTE_US), "[1,880,0]");
  assert_run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_RESERVE, KEYS (day.b, day.l),
              ARGS ("s3", "1", "30000", IN_FLIGHT_RETRY_US, "1000", MINUTE_US), "[0,1000000,1]");
}

/* A lease its holder stops renewing (the instance died) expires, and what
 * it held comes back to the budget; a renewed one lives on. */
static void
test_budget_leases (Fixture       *f,
                    gconstpointer  data)
{
  g_auto(Scope) day = { 0 };
  g_auto(Scope) week = { 0 };
  g_autofree char *refused = NULL;

  scope_init (&day, "acme", "budget:day");
  scope_init (&week, "acme", "budget:week");

  /* a lease of 200 ms holding the whole budget */
  assert_run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_RESERVE, KEYS (day.b, day.l),
              ARGS ("dead", "100", "200", IN_FLIGHT_RETRY_US, "100", MINUTE_US), "[1,100,0]");
  assert_run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_RESERVE, KEYS (day.b, day.l),
              ARGS ("next", "100", "30000", IN_FLIGHT_RETRY_US, "100", MINUTE_US), "[0,1000000,1]");
  g_usleep (300 * 1000);
  assert_run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_RESERVE, KEYS (day.b, day.l),
              ARGS ("next", "100", "30000", IN_FLIGHT_RETRY_US, "100", MINUTE_US), "[1,100,0]");
  assert_field (f, day.b, "held", "100");
  g_assert_cmpint (symfonic_test_redis_integer (f->server, "HEXISTS %s l:dead", day.b), ==, 0);
  g_assert_cmpint (symfonic_test_redis_integer (f->server, "ZCARD %s", day.l), ==, 1);
  /* too late to renew: it is not brought back */
  assert_run (f, SYMFONIC_REDIS_SCRIPT_LEASE_RENEW, KEYS (day.b, day.l), ARGS ("dead", "30000", "1"), "[0,1]");
  /* its usage still counts, past what was acknowledged: 150 − 50 */
  assert_run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_SETTLE, KEYS (day.b, day.l), ARGS ("dead", "150", "50", "100", MINUTE_US),
              /* charged min (100, 100) = 100: the window is spent */
              "[0,1]");
  assert_field (f, day.b, "charged", "100");

  /* renewed at 200 ms for a second: alive at 1,050 ms, past the first
   * expiry; gone at 1,350 */
  assert_run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_RESERVE, KEYS (week.b, week.l),
              ARGS ("kept", "100", "1000", IN_FLIGHT_RETRY_US, "100", MINUTE_US), "[1,100,0]");
  g_usleep (200 * 1000);
  assert_run (f, SYMFONIC_REDIS_SCRIPT_LEASE_RENEW, KEYS (week.b, week.l), ARGS ("kept", "1000", "1"), "[1,0]");
  g_usleep (850 * 1000);
  assert_run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_RESERVE, KEYS (week.b, week.l),
              ARGS ("other", "100", "30000", IN_FLIGHT_RETRY_US, "100", MINUTE_US), "[0,1000000,1]");
  g_usleep (300 * 1000);
  assert_run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_RESERVE, KEYS (week.b, week.l),
              ARGS ("other", "100", "30000", IN_FLIGHT_RETRY_US, "100", MINUTE_US), "[1,100,0]");
}

/* Usage spends the window it is counted in; the next window starts
 * from nothing, and a refusal says when it starts. */
static void
test_budget_window (Fixture       *f,
                    gconstpointer  data)
{
  g_auto(Scope) short_window = { 0 };
  g_autofree char *refused = NULL;
  gint64 retry;

  scope_init (&short_window, "acme", "budget:burst");

  /* 100 per 300 ms, all of it used */
  assert_run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_RESERVE, KEYS (short_window.b, short_window.l),
              ARGS ("a", "100", "30000", IN_FLIGHT_RETRY_US, "100", "300000"), "[1,100,0]");
  assert_run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_SETTLE, KEYS (short_window.b, short_window.l),
              ARGS ("a", "100", "0", "100", "300000"), "[0,0]");
  refused = run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_RESERVE, KEYS (short_window.b, short_window.l),
                 ARGS ("b", "50", "30000", IN_FLIGHT_RETRY_US, "100", "300000"));
  retry = refused_retry (refused);
  g_assert_true (g_str_has_suffix (refused, ",1]"));
  g_assert_cmpint (retry, >, 200000);
  g_assert_cmpint (retry, <=, 300000);
  g_usleep (350 * 1000);
  assert_run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_RESERVE, KEYS (short_window.b, short_window.l),
              ARGS ("b", "50", "30000", IN_FLIGHT_RETRY_US, "100", "300000"), "[1,100,0]");
  assert_field (f, short_window.b, "charged", "0");
}

/* --- stream caps --------------------------------------------------------- */

static void
test_caps (Fixture       *f,
           gconstpointer  data)
{
  g_autofree char *route = symfonic_redis_route_key (PREFIX, "typed", "streams");
  g_autofree char *tenant = symfonic_redis_tenant_key (PREFIX, "acme", "streams:typed");
  g_autofree char *brief = symfonic_redis_tenant_key (PREFIX, "acme", "streams:brief");
  g_autofree char *wide = symfonic_redis_tenant_key (PREFIX, "acme", "streams:wide");
  g_auto(Scope) day = { 0 };

  scope_init (&day, "acme", "budget:day");

  /* a cap of 3: exactly three slots */
  assert_run (f, SYMFONIC_REDIS_SCRIPT_CAP_ACQUIRE, KEYS (route), ARGS ("a", "30000", "3"), "[1,0]");
  assert_run (f, SYMFONIC_REDIS_SCRIPT_CAP_ACQUIRE, KEYS (route), ARGS ("b", "30000", "3"), "[1,0]");
  assert_run (f, SYMFONIC_REDIS_SCRIPT_CAP_ACQUIRE, KEYS (route), ARGS ("c", "30000", "3"), "[1,0]");
  assert_run (f, SYMFONIC_REDIS_SCRIPT_CAP_ACQUIRE, KEYS (route), ARGS ("d", "30000", "3"), "[0,1]");
  /* a holder asking again keeps its one slot */
  assert_run (f, SYMFONIC_REDIS_SCRIPT_CAP_ACQUIRE, KEYS (route), ARGS ("a", "30000", "3"), "[1,0]");
  g_assert_cmpint (symfonic_test_redis_integer (f->server, "ZCARD %s", route), ==, 3);
  /* released by id */
  assert_run (f, SYMFONIC_REDIS_SCRIPT_CAP_RELEASE, KEYS (route), ARGS ("b"), "1");
  assert_run (f, SYMFONIC_REDIS_SCRIPT_CAP_RELEASE, KEYS (route), ARGS ("b"), "0");
  assert_run (f, SYMFONIC_REDIS_SCRIPT_CAP_ACQUIRE, KEYS (route), ARGS ("d", "30000", "3"), "[1,0]");
  g_assert_cmpint (symfonic_test_redis_integer (f->server, "ZCARD %s", route), ==, 3);

  /* expired slots are pruned: a cap of 1 held for 200 ms */
  assert_run (f, SYMFONIC_REDIS_SCRIPT_CAP_ACQUIRE, KEYS (brief), ARGS ("e", "200", "1"), "[1,0]");
  assert_run (f, SYMFONIC_REDIS_SCRIPT_CAP_ACQUIRE, KEYS (brief), ARGS ("f", "30000", "1"), "[0,1]");
  g_usleep (300 * 1000);
  assert_run (f, SYMFONIC_REDIS_SCRIPT_CAP_ACQUIRE, KEYS (brief), ARGS ("f", "30000", "1"), "[1,0]");
  {
    g_autofree char *score = symfonic_test_redis_string (f->server, "ZSCORE %s e", brief);

    g_assert_null (score);
  }

  /* several sets in one slot: all or nothing */
  assert_run (f, SYMFONIC_REDIS_SCRIPT_CAP_ACQUIRE, KEYS (wide, tenant), ARGS ("g", "30000", "10", "1"), "[1,0]");
  assert_run (f, SYMFONIC_REDIS_SCRIPT_CAP_ACQUIRE, KEYS (wide, tenant), ARGS ("h", "30000", "10", "1"), "[0,2]");
  g_assert_cmpint (symfonic_test_redis_integer (f->server, "ZCARD %s", wide), ==, 1);

  /* one renewal for a stream's budget lease and its slot, both alive */
  assert_run (f, SYMFONIC_REDIS_SCRIPT_BUDGET_RESERVE, KEYS (day.b, day.l),
              ARGS ("g", "10", "30000", IN_FLIGHT_RETRY_US, "1000", MINUTE_US), "[1,1000,0]");
  assert_run (f, SYMFONIC_REDIS_SCRIPT_LEASE_RENEW, KEYS (day.b, day.l, wide, tenant), ARGS ("g", "30000", "1"),
              "[3,0]");
  assert_run (f, SYMFONIC_REDIS_SCRIPT_LEASE_RENEW, KEYS (day.b, day.l, wide, tenant), ARGS ("h", "30000", "1"),
              "[0,3]");
}

int
main (int   argc,
      char *argv[])
{
  redis_test_init (&argc, &argv);
  if (symfonic_test_redis_skip_unless_available ())
    return 0;

  g_test_add ("/redis/scripts/gcra", Fixture, NULL, fixture_set_up, test_gcra, fixture_tear_down);
  g_test_add ("/redis/scripts/budget-race", Fixture, NULL, fixture_set_up, test_budget_race, fixture_tear_down);
  g_test_add ("/redis/scripts/budget-scopes", Fixture, NULL, fixture_set_up, test_budget_scopes, fixture_tear_down);
  g_test_add ("/redis/scripts/budget-charge", Fixture, NULL, fixture_set_up, test_budget_charge, fixture_tear_down);
  g_test_add ("/redis/scripts/budget-settle", Fixture, NULL, fixture_set_up, test_budget_settle, fixture_tear_down);
  g_test_add ("/redis/scripts/budget-leases", Fixture, NULL, fixture_set_up, test_budget_leases, fixture_tear_down);
  g_test_add ("/redis/scripts/budget-window", Fixture, NULL, fixture_set_up, test_budget_window, fixture_tear_down);
  g_test_add ("/redis/scripts/caps", Fixture, NULL, fixture_set_up, test_caps, fixture_tear_down);

  return g_test_run ();
}
