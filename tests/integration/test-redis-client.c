/* test-redis-client.c: the Redis client on a real poller against a real server
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <signal.h>
#include <string.h>

#include "redis-test-common.h"

typedef struct
{
  GMainContext *context;
} Fixture;

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  f->context = g_main_context_new ();
  g_main_context_push_thread_default (f->context);
  redis_test_logs_clear ();
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  g_main_context_pop_thread_default (f->context);
  while (g_main_context_iteration (f->context, FALSE))
    ;
  g_main_context_unref (f->context);
}

/* Runs the context for @ms milliseconds. */
static gboolean
never (gpointer data)
{
  return FALSE;
}

static void
run_for (guint ms)
{
  redis_test_wait (never, NULL, (gint64) ms * 1000);
}

static guint64
failures (const SymfonicRedisStats *stats,
          SymfonicRedisFailure      failure)
{
  return __atomic_load_n (&stats->failures[failure], __ATOMIC_RELAXED);
}

static gint64
info_field (SymfonicTestRedis *server,
            const char        *section,
            const char        *field)
{
  g_autofree char *info = symfonic_test_redis_string (server, "INFO %s", section);
  g_autofree char *prefix = g_strconcat (field, ":", NULL);
  const char *line = strstr (info, prefix);

  g_assert_nonnull (line);
  return g_ascii_strtoll (line + strlen (prefix), NULL, 10);
}

/* --- addresses and keys -------------------------------------------------- */

static void
test_address (void)
{
  static const struct
  {
    const char *url;
    const char *host;
    guint       port;
    const char *path;
    guint       db;
    const char *display;
  } good[] = {
    { "redis://127.0.0.1:6379/0", "127.0.0.1", 6379, NULL, 0, "127.0.0.1:6379" },
    { "redis://localhost", "localhost", 6379, NULL, 0, "localhost:6379" },
    { "redis://[::1]:7000/2", "::1", 7000, NULL, 2, "[::1]:7000" },
    { "redis://cache.internal/15", "cache.internal", 6379, NULL, 15, "cache.internal:6379" },
    { "redis+unix:///run/redis/redis.sock", NULL, 0, "/run/redis/redis.sock", 0, "/run/redis/redis.sock" },
    { "redis+unix:///run/redis/redis.sock?db=3", NULL, 0, "/run/redis/redis.sock", 3, "/run/redis/redis.sock" },
  };
  static const char * const bad[] = {
    "", "redis:", "redis://", "http://127.0.0.1:6379", "redis://h:0", "redis://h:99999", "redis://h/x",
    "redis://h/1/2", "redis://h/-1", "redis://h?db=1", "redis://h#x", "redis+unix://host/run/r.sock",
    "redis+unix:///r.sock?db=", "redis+unix:///r.sock?db=x", "redis+unix:///r.sock?timeout=1",
    "redis+unix:relative.sock", "redis://user:hunter2@h:6379", "redis://:hunter2@h",
    "redis+unix://:hunter2@/r.sock",
  };

  for (guint i = 0; i < G_N_ELEMENTS (good); i++)
    {
      SymfonicRedisAddress address;
      g_autoptr(GError) error = NULL;
      g_autofree char *display = NULL;

      g_test_message ("%s", good[i].url);
      g_assert_true (symfonic_redis_address_parse (&address, good[i].url, &error));
      g_assert_no_error (error);
      g_assert_cmpstr (address.host, ==, good[i].host);
      if (good[i].host != NULL)
        g_assert_cmpuint (address.port, ==, good[i].port);
      g_assert_cmpstr (address.path, ==, good[i].path);
      g_assert_cmpuint (address.db, ==, good[i].db);
      display = symfonic_redis_address_dup_display (&address);
      g_assert_cmpstr (display, ==, good[i].display);
      symfonic_redis_address_clear (&address);
    }

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      SymfonicRedisAddress address;
      g_autoptr(GError) error = NULL;

      g_test_message ("%s", bad[i]);
      g_assert_false (symfonic_redis_address_parse (&address, bad[i], &error));
      g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
      /* a URL may carry a password by mistake: never repeated */
      g_assert_null (strstr (error->message, "hunter2"));
    }
}

static void
test_keys (void)
{
  static const struct
  {
    const char *tenant;
    const char *key;
  } tenants[] = {
    { "acme", "symfonic:{acme}:rl:typed" },
    { "a}b{c:d%e", "symfonic:{a%7Db%7Bc%3Ad%25e}:rl:typed" },
    { "", "symfonic:{%}:rl:typed" },
    { "tab\there", "symfonic:{tab%09here}:rl:typed" },
    { "route:typed", "symfonic:{route%3Atyped}:rl:typed" },
  };
  g_autofree char *route = symfonic_redis_route_key ("symfonic:", "typed", "cap");
  g_autoptr(SymfonicRedisScript) script = symfonic_redis_script_new ("return 1", -1);

  for (guint i = 0; i < G_N_ELEMENTS (tenants); i++)
    {
      g_autofree char *key = symfonic_redis_tenant_key ("symfonic:", tenants[i].tenant, "rl:typed");

      g_assert_cmpstr (key, ==, tenants[i].key);
    }
  g_assert_cmpstr (route, ==, "symfonic:{route:typed}:cap");

  /* the name Redis gives `return 1` (SCRIPT LOAD) */
  g_assert_cmpstr (symfonic_redis_script_get_sha1 (script), ==, "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
  for (guint i = 0; i < SYMFONIC_REDIS_N_SCRIPTS; i++)
    {
      gsize length;
      const char *source = symfonic_redis_script_get_source (symfonic_redis_script_get_builtin (i), &length);

      g_assert_cmpuint (length, >, 200);
      g_assert_cmpuint (strlen (source), ==, length);
      g_assert_cmpuint (strlen (symfonic_redis_script_get_sha1 (symfonic_redis_script_get_builtin (i))), ==, 40);
    }
  /* the lease scripts start with the rules they share */
  g_assert_nonnull (strstr (symfonic_redis_script_get_source (
                      symfonic_redis_script_get_builtin (SYMFONIC_REDIS_SCRIPT_CAP_ACQUIRE), NULL),
                      "local function prune_slots"));
  g_assert_null (strstr (symfonic_redis_script_get_source (
                   symfonic_redis_script_get_builtin (SYMFONIC_REDIS_SCRIPT_GCRA_TAKE), NULL),
                   "local function prune_slots"));
}

/* --- commands ------------------------------------------------------------ */

static void
on_ok (SymfonicRedisClient      *client,
       const SymfonicRedisReply *reply,
       const GError             *error,
       gpointer                  user_data)
{
  g_assert_no_error (error);
  g_assert_cmpint (symfonic_redis_reply_get_kind (reply), ==, SYMFONIC_REDIS_REPLY_STATUS);
  g_assert_cmpstr (symfonic_redis_reply_get_string (reply, NULL), ==, "OK");
  *(gboolean *) user_data = TRUE;
}

static gboolean
flag_is_set (gpointer data)
{
  return *(gboolean *) data;
}

static void
test_commands (Fixture       *f,
               gconstpointer  data)
{
  SymfonicRedisStats stats = { 0 };
  g_autoptr(SymfonicTestRedis) server = symfonic_test_redis_start (SYMFONIC_TEST_REDIS_TCP, NULL);
  g_autoptr(SymfonicRedisClient) client = redis_test_client_new (symfonic_test_redis_get_url (server), 1000);
  g_autoptr(GError) error = NULL;
  static const char * const binary[] = { "SET", "bin", "a\0b" };
  static const gsize binary_len[] = { 3, 3, 3 };
  char *reply;

  symfonic_redis_client_set_stats (client, &stats);
  symfonic_redis_client_start (client);
  /* nothing is queued before the connection is up */
  g_assert_false (symfonic_redis_client_is_up (client));
  g_assert_null (redis_test_call (client, &error, "PING", NULL));
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_STORE_UNAVAILABLE);
  g_clear_error (&error);
  redis_test_wait_up (client);
  g_assert_cmpint (stats.up, ==, 1);

  reply = redis_test_call (client, &error, "SET", "greeting", "hello", NULL);
  g_assert_no_error (error);
  g_assert_cmpstr (reply, ==, "\"OK\"");
  g_free (reply);
  reply = redis_test_call (client, &error, "GET", "greeting", NULL);
  g_assert_cmpstr (reply, ==, "\"hello\"");
  g_free (reply);
  reply = redis_test_call (client, &error, "GET", "nothing", NULL);
  g_assert_cmpstr (reply, ==, "nil");
  g_free (reply);
  reply = redis_test_call (client, &error, "RPUSH", "list", "a", "b", NULL);
  g_assert_cmpstr (reply, ==, "2");
  g_free (reply);
  reply = redis_test_call (client, &error, "LRANGE", "list", "0", "-1", NULL);
  g_assert_cmpstr (reply, ==, "[\"a\",\"b\"]");
  g_free (reply);
  g_assert_no_error (error);

  /* arguments are binary-safe with their lengths */
  {
    gboolean done = FALSE;

    g_assert_true (symfonic_redis_client_command (client, 3, binary, binary_len, on_ok, &done, &error));
    g_assert_true (redis_test_wait (flag_is_set, &done, REDIS_TEST_WAIT_US));
  }
  reply = redis_test_call (client, &error, "STRLEN", "bin", NULL);
  g_assert_cmpstr (reply, ==, "3");
  g_free (reply);

  /* an error reply is the command's, not the connection's: it names the
   * kind of error and nothing the server said */
  g_assert_null (redis_test_call (client, &error, "INCR", "greeting", NULL));
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_FAILED);
  g_assert_cmpstr (error->message, ==, "The shared store answered with an error (ERR)");
  g_clear_error (&error);
  g_assert_cmpuint (failures (&stats, SYMFONIC_REDIS_FAILURE_REPLY), ==, 1);
  g_assert_true (symfonic_redis_client_is_up (client));
  reply = redis_test_call (client, &error, "ECHO", "still here", NULL);
  g_assert_no_error (error);
  g_assert_cmpstr (reply, ==, "\"still here\"");
  g_free (reply);

  g_assert_cmpuint (failures (&stats, SYMFONIC_REDIS_FAILURE_TIMEOUT), ==, 0);
  g_assert_cmpuint (failures (&stats, SYMFONIC_REDIS_FAILURE_CONNECT), ==, 0);
  /* the PING before the connection was up was refused; nine were sent */
  g_assert_cmpuint (failures (&stats, SYMFONIC_REDIS_FAILURE_UNAVAILABLE), ==, 1);
  g_assert_cmpuint (stats.commands, ==, 9);
  g_assert_cmpuint (stats.latency_sum_us, >, 0);
  {
    guint64 answered = 0;

    for (guint i = 0; i < SYMFONIC_REDIS_N_LATENCY_BUCKETS; i++)
      answered += stats.latency[i];
    /* the error reply has no latency: it is counted as a failure */
    g_assert_cmpuint (answered, ==, 8);
  }
}

typedef struct
{
  guint   answered;
  guint   out_of_order;
  GError *error;
} Pipeline;

static void
on_incr (SymfonicRedisClient      *client,
         const SymfonicRedisReply *reply,
         const GError             *error,
         gpointer                  user_data)
{
  Pipeline *pipeline = user_data;

  if (error != NULL)
    {
      if (pipeline->error == NULL)
        pipeline->error = g_error_copy (error);
      pipeline->answered++;
      return;
    }
  /* the n-th INCR answers n */
  if (symfonic_redis_reply_get_integer (reply) != pipeline->answered + 1)
    pipeline->out_of_order++;
  pipeline->answered++;
}

static gboolean
all_answered (gpointer data)
{
  return ((Pipeline *) data)->answered == 1000;
}

/* A thousand commands sent in one main-loop iteration go in one write
 * (the server reads them in a handful of reads, not a thousand) and are
 * answered in order. */
static void
test_pipelining (Fixture       *f,
                 gconstpointer  data)
{
  g_autoptr(SymfonicTestRedis) server = symfonic_test_redis_start (SYMFONIC_TEST_REDIS_TCP, NULL);
  g_autoptr(SymfonicRedisClient) client = redis_test_client_new (symfonic_test_redis_get_url (server), 1000);
  static const char * const incr[] = { "INCR", "counter" };
  Pipeline pipeline = { 0 };
  gint64 reads_before;
  gint64 reads;

  symfonic_redis_client_start (client);
  redis_test_wait_up (client);
  reads_before = info_field (server, "stats", "total_reads_processed");

  for (guint i = 0; i < 1000; i++)
    {
      g_autoptr(GError) error = NULL;

      g_assert_true (symfonic_redis_client_command (client, 2, incr, NULL, on_incr, &pipeline, &error));
      g_assert_no_error (error);
    }
  g_assert_cmpuint (symfonic_redis_client_get_n_pending (client), ==, 1000);
  g_assert_cmpuint (pipeline.answered, ==, 0);
  g_assert_true (redis_test_wait (all_answered, &pipeline, REDIS_TEST_WAIT_US));
  g_assert_no_error (pipeline.error);
  g_assert_cmpuint (pipeline.out_of_order, ==, 0);
  g_assert_cmpuint (symfonic_redis_client_get_n_pending (client), ==, 0);

  /* 28 KB of commands: the server reads 16 KB at a time; the INFO calls
   * of this test are a read each */
  reads = info_field (server, "stats", "total_reads_processed") - reads_before;
  g_test_message ("the server read the thousand commands in %" G_GINT64_FORMAT " reads", reads);
  g_assert_cmpint (reads, <=, 10);
  {
    g_autofree char *counter = symfonic_test_redis_string (server, "GET counter");

    g_assert_cmpstr (counter, ==, "1000");
  }
}

/* --- on a worker thread -------------------------------------------------- */

#define WORKER_COMMANDS 10000
#define WORKER_WINDOW   64

typedef struct
{
  const char          *url;
  SymfonicRedisStats  *stats;
  GMainContext        *context;
  GMainLoop           *loop;
  SymfonicRedisClient *client;
  guint                sent;
  guint                answered;
  guint                failed;
} Worker;

static void send_more (Worker *worker);

static void
on_worker_reply (SymfonicRedisClient      *client,
                 const SymfonicRedisReply *reply,
                 const GError             *error,
                 gpointer                  user_data)
{
  Worker *worker = user_data;

  worker->answered++;
  if (error != NULL)
    worker->failed++;
  send_more (worker);
}

/* keeps a window of commands in flight, as a worker's streams would */
static void
send_more (Worker *worker)
{
  static const char * const incr[] = { "INCR", "worker" };

  while (worker->sent < WORKER_COMMANDS && worker->sent - worker->answered < WORKER_WINDOW)
    {
      g_autoptr(GError) error = NULL;

      g_assert_true (symfonic_redis_client_command (worker->client, 2, incr, NULL, on_worker_reply, worker, &error));
      worker->sent++;
    }
}

static void
on_worker_state (SymfonicRedisClient *client,
                 gboolean             up,
                 gpointer             user_data)
{
  if (up)
    send_more (user_data);
}

static gpointer
worker_main (gpointer data)
{
  Worker *worker = data;

  g_main_context_push_thread_default (worker->context);
  worker->client = redis_test_client_new (worker->url, 1000);
  symfonic_redis_client_set_stats (worker->client, worker->stats);
  symfonic_redis_client_set_state_func (worker->client, on_worker_state, worker);
  symfonic_redis_client_start (worker->client);
  g_main_loop_run (worker->loop);
  g_clear_pointer (&worker->client, symfonic_redis_client_unref);
  while (g_main_context_iteration (worker->context, FALSE))
    ;
  g_main_context_pop_thread_default (worker->context);

  return NULL;
}

static gboolean
quit_worker (gpointer data)
{
  Worker *worker = data;

  g_main_loop_quit (worker->loop);
  return G_SOURCE_REMOVE;
}

/* The client on a worker thread's own main context, as the gateway runs
 * it; its counters read from another thread while it runs. */
static void
test_worker_thread (void)
{
  g_autoptr(SymfonicTestRedis) server = symfonic_test_redis_start (SYMFONIC_TEST_REDIS_TCP, NULL);
  SymfonicRedisStats stats = { 0 };
  Worker worker = { 0 };
  GThread *thread;
  gint64 until = g_get_monotonic_time () + REDIS_TEST_WAIT_US;
  guint64 answered = 0;
  g_autofree char *value = NULL;

  worker.url = symfonic_test_redis_get_url (server);
  worker.stats = &stats;
  worker.context = g_main_context_new ();
  worker.loop = g_main_loop_new (worker.context, FALSE);
  thread = g_thread_new ("redis-worker", worker_main, &worker);

  while (g_get_monotonic_time () < until)
    {
      SymfonicRedisStats sum = { 0 };

      symfonic_redis_stats_add (&sum, &stats);
      answered = 0;
      for (guint i = 0; i < SYMFONIC_REDIS_N_LATENCY_BUCKETS; i++)
        answered += sum.latency[i];
      if (answered == WORKER_COMMANDS)
        {
          g_assert_cmpint (sum.up, ==, 1);
          g_assert_cmpuint (sum.commands, ==, WORKER_COMMANDS);
          break;
        }
      g_usleep (1000);
    }
  g_assert_cmpuint (answered, ==, WORKER_COMMANDS);

  g_main_context_invoke (worker.context, quit_worker, &worker);
  g_thread_join (thread);
  g_main_loop_unref (worker.loop);
  g_main_context_unref (worker.context);

  g_assert_cmpuint (worker.answered, ==, WORKER_COMMANDS);
  g_assert_cmpuint (worker.failed, ==, 0);
  g_assert_cmpint (g_atomic_int_get (&stats.up), ==, 0);
  value = symfonic_test_redis_string (server, "GET worker");
  g_assert_cmpstr (value, ==, "10000");
}

/* --- scripts ------------------------------------------------------------- */

typedef struct
{
  guint  answered;
  GPtrArray *replies;
} Evals;

static void
on_eval (SymfonicRedisClient      *client,
         const SymfonicRedisReply *reply,
         const GError             *error,
         gpointer                  user_data)
{
  Evals *evals = user_data;

  g_assert_no_error (error);
  g_ptr_array_add (evals->replies, redis_test_format_reply (reply));
  evals->answered++;
}

static gboolean
three_answered (gpointer data)
{
  return ((Evals *) data)->answered == 3;
}

/* EVALSHA of a script the server does not know (never loaded, or gone
 * with SCRIPT FLUSH) is sent once more as EVAL, and the caller only sees
 * the answer. */
static void
test_noscript (Fixture       *f,
               gconstpointer  data)
{
  SymfonicRedisStats stats = { 0 };
  g_autoptr(SymfonicTestRedis) server = symfonic_test_redis_start (SYMFONIC_TEST_REDIS_TCP, NULL);
  g_autoptr(SymfonicRedisClient) client = redis_test_client_new (symfonic_test_redis_get_url (server), 1000);
  g_autoptr(SymfonicRedisScript) script = symfonic_redis_script_new ("return {KEYS[1], ARGV[1], #ARGV}", -1);
  g_autoptr(SymfonicRedisScript) broken = symfonic_redis_script_new ("return redis.call ('INCR', KEYS[1])", -1);
  static const char * const keys[] = { "{t}:k", NULL };
  static const char * const args[] = { "first", "second", NULL };
  Evals evals = { 0, g_ptr_array_new_with_free_func (g_free) };
  g_autoptr(GError) error = NULL;
  g_autoptr(redisReply) exists = NULL;
  char *reply;

  symfonic_redis_client_set_stats (client, &stats);
  symfonic_redis_client_start (client);
  redis_test_wait_up (client);

  reply = redis_test_eval (client, script, keys, args, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (reply, ==, "[\"{t}:k\",\"first\",2]");
  g_free (reply);
  exists = symfonic_test_redis_call (server, "SCRIPT EXISTS %s", symfonic_redis_script_get_sha1 (script));
  g_assert_cmpint (exists->element[0]->integer, ==, 1);

  /* three in one go after a flush: each learns of it on its own */
  g_clear_pointer (&exists, freeReplyObject);
  exists = symfonic_test_redis_call (server, "SCRIPT FLUSH");
  for (guint i = 0; i < 3; i++)
    g_assert_true (symfonic_redis_client_eval (client, script, 1, keys, 2, args, on_eval, &evals, &error));
  g_assert_true (redis_test_wait (three_answered, &evals, REDIS_TEST_WAIT_US));
  for (guint i = 0; i < 3; i++)
    g_assert_cmpstr (evals.replies->pdata[i], ==, "[\"{t}:k\",\"first\",2]");

  /* once loaded, EVALSHA alone */
  reply = redis_test_eval (client, script, keys, args, &error);
  g_assert_cmpstr (reply, ==, "[\"{t}:k\",\"first\",2]");
  g_free (reply);
  g_assert_cmpuint (failures (&stats, SYMFONIC_REDIS_FAILURE_REPLY), ==, 0);

  /* a script's own error is an error, said without the server's text */
  freeReplyObject (symfonic_test_redis_call (server, "SET {t}:k text"));
  g_assert_null (redis_test_eval (client, broken, keys, NULL, &error));
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_FAILED);
  g_assert_cmpstr (error->message, ==, "The shared store answered with an error (ERR)");
  g_assert_cmpuint (failures (&stats, SYMFONIC_REDIS_FAILURE_REPLY), ==, 1);
  g_ptr_array_unref (evals.replies);
}

/* A script the client is to load goes with every connection's handshake:
 * a server that never saw it knows it before the first EVALSHA, and
 * again after a restart, without a NOSCRIPT round trip. */
static void
test_scripts_loaded (Fixture       *f,
                     gconstpointer  data)
{
  SymfonicRedisStats stats = { 0 };
  g_autoptr(SymfonicTestRedis) server = symfonic_test_redis_start (SYMFONIC_TEST_REDIS_TCP, NULL);
  g_autoptr(SymfonicRedisClient) client = redis_test_client_new (symfonic_test_redis_get_url (server), 1000);
  g_autoptr(SymfonicRedisScript) script = symfonic_redis_script_new ("return ARGV[1]", -1);
  static const char * const args[] = { "loaded", NULL };
  g_autoptr(redisReply) exists = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *reply = NULL;

  symfonic_redis_client_set_stats (client, &stats);
  symfonic_redis_client_add_script (client, script);
  symfonic_redis_client_start (client);
  redis_test_wait_up (client);

  exists = symfonic_test_redis_call (server, "SCRIPT EXISTS %s", symfonic_redis_script_get_sha1 (script));
  g_assert_cmpint (exists->element[0]->integer, ==, 1);
  reply = redis_test_eval (client, script, NULL, args, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (reply, ==, "\"loaded\"");
  g_assert_cmpuint (failures (&stats, SYMFONIC_REDIS_FAILURE_REPLY), ==, 0);
}

/* --- deadlines and reconnection ------------------------------------------ */

typedef struct
{
  gint64  sent;
  gint64  answered;
  GError *error;
} Timed;

static void
on_timed (SymfonicRedisClient      *client,
          const SymfonicRedisReply *reply,
          const GError             *error,
          gpointer                  user_data)
{
  Timed *timed = user_data;

  timed->answered = g_get_monotonic_time ();
  if (error != NULL)
    timed->error = g_error_copy (error);
}

static gboolean
timed_answered (gpointer data)
{
  return ((Timed *) data)->answered != 0;
}

static void
send_timed (SymfonicRedisClient *client,
            Timed               *timed)
{
  static const char * const ping[] = { "PING" };
  g_autoptr(GError) error = NULL;

  timed->sent = g_get_monotonic_time ();
  g_assert_true (symfonic_redis_client_command (client, 1, ping, NULL, on_timed, timed, &error));
  g_assert_no_error (error);
}

#define TIMEOUT_MS 50
/* how late a deadline may be noticed on a busy machine */
#define MARGIN_MS  100

/* A server that stops answering (SIGSTOP: its sockets stay open, so only
 * a deadline notices) fails a command at its deadline, never later; the
 * client comes back by itself once the server answers again. */
static void
test_deadline (Fixture       *f,
               gconstpointer  data)
{
  SymfonicRedisStats stats = { 0 };
  g_autoptr(SymfonicTestRedis) server = symfonic_test_redis_start (SYMFONIC_TEST_REDIS_TCP, NULL);
  g_autoptr(SymfonicRedisClient) client = redis_test_client_new (symfonic_test_redis_get_url (server), TIMEOUT_MS);
  g_autoptr(GError) error = NULL;
  Timed first = { 0 };
  Timed second = { 0 };
  gint64 took;
  gint64 sent;
  char *reply;

  symfonic_redis_client_set_stats (client, &stats);
  symfonic_redis_client_set_connect_timeout (client, 200);
  symfonic_redis_client_set_backoff (client, 10, 100);
  symfonic_redis_client_start (client);
  redis_test_wait_up (client);

  symfonic_test_redis_signal (server, SIGSTOP);
  send_timed (client, &first);
  run_for (20);
  send_timed (client, &second);
  g_assert_true (redis_test_wait (timed_answered, &first, REDIS_TEST_WAIT_US));
  g_assert_true (timed_answered (&second));

  took = (first.answered - first.sent) / 1000;
  g_test_message ("the command failed after %" G_GINT64_FORMAT " ms (deadline %d ms)", took, TIMEOUT_MS);
  g_assert_error (first.error, SYMFONIC_ERROR, SYMFONIC_ERROR_STORE_TIMEOUT);
  g_assert_cmpint (took, >=, TIMEOUT_MS);
  g_assert_cmpint (took, <, TIMEOUT_MS + MARGIN_MS);
  /* the one behind it on the connection could not be answered either:
   * it fails with it, before its own deadline */
  g_assert_error (second.error, SYMFONIC_ERROR, SYMFONIC_ERROR_STORE_UNAVAILABLE);
  g_assert_cmpint (second.answered - first.answered, <, 1000);
  g_assert_cmpuint (failures (&stats, SYMFONIC_REDIS_FAILURE_TIMEOUT), ==, 1);
  g_assert_false (symfonic_redis_client_is_up (client));
  g_assert_cmpint (stats.up, ==, 0);

  /* while it is down, commands fail at once */
  sent = g_get_monotonic_time ();
  g_assert_null (redis_test_call (client, &error, "PING", NULL));
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_STORE_UNAVAILABLE);
  g_assert_cmpint (g_get_monotonic_time () - sent, <, 5000);
  g_clear_error (&error);
  g_clear_error (&first.error);
  g_clear_error (&second.error);

  /* it keeps trying: connect() succeeds, the handshake times out */
  run_for (500);
  g_assert_false (symfonic_redis_client_is_up (client));
  g_assert_cmpuint (failures (&stats, SYMFONIC_REDIS_FAILURE_CONNECT), >=, 1);

  symfonic_test_redis_signal (server, SIGCONT);
  redis_test_wait_up (client);
  reply = redis_test_call (client, &error, "PING", NULL);
  g_assert_no_error (error);
  g_assert_cmpstr (reply, ==, "\"PONG\"");
  g_free (reply);
  g_assert_cmpint (stats.up, ==, 1);
}

/* A server killed and started again on its port: the client notices,
 * retries at a growing interval, and is back soon after the server. */
static void
test_reconnect (Fixture       *f,
                gconstpointer  data)
{
  SymfonicRedisStats stats = { 0 };
  g_autoptr(SymfonicTestRedis) server = symfonic_test_redis_start (SYMFONIC_TEST_REDIS_TCP, NULL);
  g_autoptr(SymfonicRedisClient) client = redis_test_client_new (symfonic_test_redis_get_url (server), TIMEOUT_MS);
  g_autoptr(GError) error = NULL;
  guint64 attempts;
  gint64 restarted;
  char *reply;

  symfonic_redis_client_set_stats (client, &stats);
  symfonic_redis_client_set_backoff (client, 10, 200);
  symfonic_redis_client_start (client);
  redis_test_wait_up (client);
  reply = redis_test_call (client, &error, "SET", "before", "1", NULL);
  g_free (reply);

  symfonic_test_redis_kill (server);
  /* the kernel closed the server's end: the client reads that at once */
  run_for (50);
  g_assert_false (symfonic_redis_client_is_up (client));
  g_assert_cmpuint (failures (&stats, SYMFONIC_REDIS_FAILURE_DISCONNECT), ==, 1);
  g_assert_null (redis_test_call (client, &error, "PING", NULL));
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_STORE_UNAVAILABLE);
  g_clear_error (&error);

  /* refused connections, at intervals of 5-10, 10-20, 20-40, 40-80,
   * 80-160, then 100-200 ms: not a busy loop, not a long silence */
  attempts = failures (&stats, SYMFONIC_REDIS_FAILURE_CONNECT);
  run_for (1000);
  attempts = failures (&stats, SYMFONIC_REDIS_FAILURE_CONNECT) - attempts;
  g_test_message ("%" G_GUINT64_FORMAT " attempts in a second", attempts);
  g_assert_cmpuint (attempts, >=, 5);
  g_assert_cmpuint (attempts, <=, 14);

  symfonic_test_redis_restart (server);
  restarted = g_get_monotonic_time ();
  redis_test_wait_up (client);
  g_test_message ("up %" G_GINT64_FORMAT " ms after the server", (g_get_monotonic_time () - restarted) / 1000);
  g_assert_cmpint (g_get_monotonic_time () - restarted, <, 400 * G_TIME_SPAN_MILLISECOND);
  reply = redis_test_call (client, &error, "GET", "before", NULL);
  g_assert_no_error (error);
  /* a new server, empty */
  g_assert_cmpstr (reply, ==, "nil");
  g_free (reply);
  g_assert_cmpuint (failures (&stats, SYMFONIC_REDIS_FAILURE_DISCONNECT), ==, 1);
}

/* A command the server holds on purpose (XREAD BLOCK, as the reader of
 * resumable runs will send) gets its blocking time on top of the
 * client's deadline, and is answered when the stream grows. */
static void
test_blocking_read (Fixture       *f,
                    gconstpointer  data)
{
  g_autoptr(SymfonicTestRedis) server = symfonic_test_redis_start (SYMFONIC_TEST_REDIS_TCP, NULL);
  g_autoptr(SymfonicRedisClient) reader = redis_test_client_new (symfonic_test_redis_get_url (server), TIMEOUT_MS);
  g_autoptr(SymfonicRedisClient) writer = redis_test_client_new (symfonic_test_redis_get_url (server), TIMEOUT_MS);
  static const char * const xread[] = { "XREAD", "BLOCK", "1000", "STREAMS", "{run}:frames", "$" };
  g_autoptr(GError) error = NULL;
  Timed read = { 0 };
  char *reply;

  symfonic_redis_client_start (reader);
  symfonic_redis_client_start (writer);
  redis_test_wait_up (reader);
  redis_test_wait_up (writer);

  read.sent = g_get_monotonic_time ();
  g_assert_true (symfonic_redis_client_command_full (reader, G_N_ELEMENTS (xread), xread, NULL,
                                                     1000 * G_TIME_SPAN_MILLISECOND, on_timed, &read, &error));
  /* well past the client's own 50 ms */
  run_for (200);
  g_assert_false (timed_answered (&read));
  reply = redis_test_call (writer, &error, "XADD", "{run}:frames", "1-1", "frame", "id: 1", NULL);
  g_assert_no_error (error);
  g_assert_cmpstr (reply, ==, "\"1-1\"");
  g_free (reply);
  g_assert_true (redis_test_wait (timed_answered, &read, REDIS_TEST_WAIT_US));
  g_assert_no_error (read.error);
  /* woken by the entry, not by the end of its second of blocking */
  g_assert_cmpint (read.answered - read.sent, <, 900 * G_TIME_SPAN_MILLISECOND);
  g_assert_true (symfonic_redis_client_is_up (reader));
}

/* --- credentials --------------------------------------------------------- */

#define PASSWORD "Rd-pass-4711"
#define WRONG    "not-the-other-one"

static void
assert_secret_free (const char *text)
{
  g_assert_null (strstr (text, PASSWORD));
  g_assert_null (strstr (text, WRONG));
}

static gboolean
failed_auth (gpointer data)
{
  return failures (data, SYMFONIC_REDIS_FAILURE_AUTH) >= 2;
}

static void
test_auth (Fixture       *f,
           gconstpointer  data)
{
  SymfonicRedisStats none_stats = { 0 };
  SymfonicRedisStats wrong_stats = { 0 };
  g_autoptr(SymfonicTestRedis) server = symfonic_test_redis_start (SYMFONIC_TEST_REDIS_TCP, PASSWORD);
  const char *url = symfonic_test_redis_get_url (server);
  g_autoptr(SymfonicRedisClient) right = redis_test_client_new (url, 1000);
  g_autoptr(SymfonicRedisClient) wrong = redis_test_client_new (url, 1000);
  g_autoptr(SymfonicRedisClient) none = redis_test_client_new (url, 1000);
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) logs = NULL;
  gboolean refused = FALSE;
  char *reply;

  symfonic_redis_client_set_credentials (right, NULL, PASSWORD);
  symfonic_redis_client_start (right);
  redis_test_wait_up (right);
  reply = redis_test_call (right, &error, "SET", "k", "v", NULL);
  g_assert_no_error (error);
  g_assert_cmpstr (reply, ==, "\"OK\"");
  g_free (reply);

  symfonic_redis_client_set_credentials (wrong, NULL, WRONG);
  symfonic_redis_client_set_stats (wrong, &wrong_stats);
  symfonic_redis_client_set_backoff (wrong, 10, 50);
  symfonic_redis_client_start (wrong);
  symfonic_redis_client_set_stats (none, &none_stats);
  symfonic_redis_client_set_backoff (none, 10, 50);
  symfonic_redis_client_start (none);

  g_assert_true (redis_test_wait (failed_auth, &wrong_stats, REDIS_TEST_WAIT_US));
  g_assert_true (redis_test_wait (failed_auth, &none_stats, REDIS_TEST_WAIT_US));
  g_assert_false (symfonic_redis_client_is_up (wrong));
  g_assert_false (symfonic_redis_client_is_up (none));
  g_assert_cmpuint (failures (&wrong_stats, SYMFONIC_REDIS_FAILURE_CONNECT), ==, 0);
  g_assert_null (redis_test_call (wrong, &error, "GET", "k", NULL));
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_STORE_UNAVAILABLE);
  assert_secret_free (error->message);
  g_clear_error (&error);

  /* the one that knew it is still fine */
  reply = redis_test_call (right, &error, "GET", "k", NULL);
  g_assert_cmpstr (reply, ==, "\"v\"");
  g_free (reply);

  logs = redis_test_logs_dup ();
  for (guint i = 0; i < logs->len; i++)
    {
      assert_secret_free (logs->pdata[i]);
      /* one line for both clients: the first to fail says WRONGPASS or
       * NOAUTH, the other is held back */
      refused |= strstr (logs->pdata[i], "refused the credentials (WRONGPASS)") != NULL ||
                 strstr (logs->pdata[i], "refused the credentials (NOAUTH)") != NULL;
    }
  g_assert_true (refused);
}

/* --- a host name, a unix socket, a database ------------------------------ */

/* A name is looked up off the worker's thread, then connected to. */
static void
test_host_name (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(SymfonicTestRedis) server = symfonic_test_redis_start (SYMFONIC_TEST_REDIS_TCP, NULL);
  const char *port = strrchr (symfonic_test_redis_get_url (server), ':') + 1;
  g_autofree char *url = g_strconcat ("redis://localhost:", port, "/2", NULL);
  g_autoptr(SymfonicRedisClient) client = redis_test_client_new (url, 1000);
  g_autofree char *display = g_strconcat ("localhost:", port, NULL);
  g_autoptr(GError) error = NULL;
  char *reply;

  g_assert_cmpstr (symfonic_redis_client_get_display (client), ==, display);
  symfonic_redis_client_start (client);
  redis_test_wait_up (client);
  reply = redis_test_call (client, &error, "ECHO", "by name", NULL);
  g_assert_no_error (error);
  g_assert_cmpstr (reply, ==, "\"by name\"");
  g_free (reply);
}

static void
test_unix_socket (Fixture       *f,
                  gconstpointer  data)
{
  g_autoptr(SymfonicTestRedis) server = symfonic_test_redis_start (SYMFONIC_TEST_REDIS_UNIX, NULL);
  g_autofree char *url = g_strconcat (symfonic_test_redis_get_url (server), "?db=3", NULL);
  g_autoptr(SymfonicRedisClient) client = redis_test_client_new (url, 1000);
  g_autoptr(GError) error = NULL;
  char *reply;

  g_assert_true (g_str_has_prefix (url, "redis+unix:///"));
  symfonic_redis_client_start (client);
  redis_test_wait_up (client);
  reply = redis_test_call (client, &error, "SET", "in-three", "yes", NULL);
  g_assert_no_error (error);
  g_free (reply);
  reply = redis_test_call (client, &error, "DBSIZE", NULL);
  g_assert_cmpstr (reply, ==, "1");
  g_free (reply);
  /* database 0 has nothing */
  g_assert_cmpint (symfonic_test_redis_integer (server, "DBSIZE"), ==, 0);
  g_assert_cmpint (symfonic_test_redis_integer (server, "EXISTS in-three"), ==, 0);
}

/* --- closing ------------------------------------------------------------- */

typedef struct
{
  SymfonicRedisClient *client;
  guint                answered;
  guint                cancelled;
  gboolean             close_on_first;
  GArray              *states;
} Closing;

static void
on_closing_reply (SymfonicRedisClient      *client,
                  const SymfonicRedisReply *reply,
                  const GError             *error,
                  gpointer                  user_data)
{
  Closing *closing = user_data;

  closing->answered++;
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    closing->cancelled++;
  if (closing->close_on_first && closing->answered == 1)
    {
      g_assert_no_error (error);
      symfonic_redis_client_close (client);
      /* nothing is taken any more */
      g_assert_false (symfonic_redis_client_is_up (client));
    }
}

static void
on_closing_state (SymfonicRedisClient *client,
                  gboolean             up,
                  gpointer             user_data)
{
  Closing *closing = user_data;

  g_array_append_val (closing->states, up);
}

static void
send_three (SymfonicRedisClient *client,
            Closing             *closing)
{
  static const char * const ping[] = { "PING" };

  for (guint i = 0; i < 3; i++)
    {
      g_autoptr(GError) error = NULL;

      g_assert_true (symfonic_redis_client_command (client, 1, ping, NULL, on_closing_reply, closing, &error));
    }
}

static gboolean
three_done (gpointer data)
{
  return ((Closing *) data)->answered == 3;
}

/* Closing fails what is in flight with a cancellation, whoever closes:
 * the owner, a callback, the last unref. */
static void
test_close (Fixture       *f,
            gconstpointer  data)
{
  g_autoptr(SymfonicTestRedis) server = symfonic_test_redis_start (SYMFONIC_TEST_REDIS_TCP, NULL);
  const char *url = symfonic_test_redis_get_url (server);
  SymfonicRedisClient *client;
  Closing closing = { 0 };
  SymfonicRedisStats stats = { 0 };

  /* by its owner, with three commands waiting for a stopped server */
  client = redis_test_client_new (url, 5000);
  closing.states = g_array_new (FALSE, FALSE, sizeof (gboolean));
  symfonic_redis_client_set_stats (client, &stats);
  symfonic_redis_client_set_state_func (client, on_closing_state, &closing);
  symfonic_redis_client_start (client);
  redis_test_wait_up (client);
  symfonic_test_redis_signal (server, SIGSTOP);
  send_three (client, &closing);
  run_for (20);
  g_assert_cmpuint (closing.answered, ==, 0);
  symfonic_redis_client_close (client);
  g_assert_cmpuint (closing.answered, ==, 3);
  g_assert_cmpuint (closing.cancelled, ==, 3);
  g_assert_cmpuint (closing.states->len, ==, 2);
  g_assert_true (g_array_index (closing.states, gboolean, 0));
  g_assert_false (g_array_index (closing.states, gboolean, 1));
  g_assert_cmpint (stats.up, ==, 0);
  /* a closed client takes nothing and never comes back */
  g_assert_false (symfonic_redis_client_is_up (client));
  run_for (50);
  g_assert_false (symfonic_redis_client_is_up (client));
  symfonic_redis_client_unref (client);
  symfonic_test_redis_signal (server, SIGCONT);
  g_array_unref (closing.states);

  /* from the first reply's callback: the two behind it are cancelled */
  memset (&closing, 0, sizeof closing);
  closing.close_on_first = TRUE;
  client = redis_test_client_new (url, 1000);
  symfonic_redis_client_start (client);
  redis_test_wait_up (client);
  send_three (client, &closing);
  g_assert_true (redis_test_wait (three_done, &closing, REDIS_TEST_WAIT_US));
  g_assert_cmpuint (closing.cancelled, ==, 2);
  symfonic_redis_client_unref (client);

  /* by the last unref */
  memset (&closing, 0, sizeof closing);
  client = redis_test_client_new (url, 1000);
  symfonic_redis_client_start (client);
  redis_test_wait_up (client);
  send_three (client, &closing);
  symfonic_redis_client_unref (client);
  g_assert_cmpuint (closing.answered, ==, 3);
  g_assert_cmpuint (closing.cancelled, ==, 3);

  /* never started */
  client = redis_test_client_new (url, 1000);
  symfonic_redis_client_unref (client);
}

int
main (int   argc,
      char *argv[])
{
  redis_test_init (&argc, &argv);
  if (symfonic_test_redis_skip_unless_available ())
    return 0;

  g_test_add_func ("/redis/client/address", test_address);
  g_test_add_func ("/redis/client/keys-and-scripts", test_keys);
  g_test_add ("/redis/client/commands", Fixture, NULL, fixture_set_up, test_commands, fixture_tear_down);
  g_test_add ("/redis/client/pipelining", Fixture, NULL, fixture_set_up, test_pipelining, fixture_tear_down);
  g_test_add_func ("/redis/client/worker-thread", test_worker_thread);
  g_test_add ("/redis/client/noscript", Fixture, NULL, fixture_set_up, test_noscript, fixture_tear_down);
  g_test_add ("/redis/client/scripts-loaded", Fixture, NULL, fixture_set_up, test_scripts_loaded, fixture_tear_down);
  g_test_add ("/redis/client/deadline", Fixture, NULL, fixture_set_up, test_deadline, fixture_tear_down);
  g_test_add ("/redis/client/reconnect", Fixture, NULL, fixture_set_up, test_reconnect, fixture_tear_down);
  g_test_add ("/redis/client/blocking-read", Fixture, NULL, fixture_set_up, test_blocking_read, fixture_tear_down);
  g_test_add ("/redis/client/auth", Fixture, NULL, fixture_set_up, test_auth, fixture_tear_down);
  g_test_add ("/redis/client/host-name", Fixture, NULL, fixture_set_up, test_host_name, fixture_tear_down);
  g_test_add ("/redis/client/unix-socket", Fixture, NULL, fixture_set_up, test_unix_socket, fixture_tear_down);
  g_test_add ("/redis/client/close", Fixture, NULL, fixture_set_up, test_close, fixture_tear_down);

  return g_test_run ();
}
