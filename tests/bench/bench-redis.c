/* bench-redis.c: what one metering decision in Redis costs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A shared store makes each metering decision with one EVALSHA, so its
 * round trip is what admission waits for. This starts a redis-server of
 * its own on loopback and times, through the gateway's client on a real
 * poller and main context:
 *
 * - one EVALSHA at a time, 10,000 times, for the GCRA script and the
 *   budget reservation (with a settle after each, so the budget never
 *   fills), and PING beside them for the bare round trip: median, p99
 *   and mean of the wall-clock time from the call to its callback;
 * - 64 GCRA EVALSHAs kept in flight on the one connection, as a busy
 *   worker's streams would: decisions per second and the client's CPU
 *   time per decision.
 *
 * On two cores the server and the client share the machine, so figures
 * move with whatever else runs; build with -Dbuildtype=release for
 * numbers worth comparing.
 */
#include "config.h"

#include <time.h>

#include "symfonic-redis-client-private.h"
#include "symfonic-redis-script-private.h"
#include "symfonic-test-redis.h"

#define N_SEQUENTIAL 10000
#define N_PIPELINED  200000
#define WINDOW       64

typedef struct
{
  SymfonicRedisClient *client;
  SymfonicRedisScript *script;
  const char * const  *keys;
  guint                n_keys;
  const char * const  *args;
  guint                n_args;
  /* the settle after each reservation */
  SymfonicRedisScript *then;
  const char * const  *then_args;
  guint                n_then_args;

  guint                done;
  gboolean             answered;
  gint64               sent;
  gint64              *times;
  guint                failed;
} Run;

static double
cpu_seconds (void)
{
  struct timespec now;

  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &now);
  return now.tv_sec + now.tv_nsec / 1e9;
}

static void
on_answer (SymfonicRedisClient      *client,
           const SymfonicRedisReply *reply,
           const GError             *error,
           gpointer                  user_data)
{
  Run *run = user_data;

  if (error != NULL)
    run->failed++;
  run->answered = TRUE;
}

static void
iterate_until_answered (Run *run)
{
  while (!run->answered)
    g_main_context_iteration (NULL, TRUE);
  run->answered = FALSE;
}

static void
send_one (Run                 *run,
          SymfonicRedisScript *script,
          const char * const  *args,
          guint                n_args)
{
  g_autoptr(GError) error = NULL;
  static const char * const ping[] = { "PING" };
  gboolean sent;

  if (script == NULL)
    sent = symfonic_redis_client_command (run->client, 1, ping, NULL, on_answer, run, &error);
  else
    sent = symfonic_redis_client_eval (run->client, script, run->n_keys, run->keys, n_args, args, on_answer, run,
                                       &error);
  if (!sent)
    g_error ("%s", error->message);
}

static int
compare (gconstpointer a,
         gconstpointer b)
{
  gint64 x = *(const gint64 *) a;
  gint64 y = *(const gint64 *) b;

  return x < y ? -1 : x > y;
}

static void
sequential (Run        *run,
            const char *name)
{
  double sum = 0;

  run->times = g_new (gint64, N_SEQUENTIAL);
  /* the script is loaded and the connection warm before timing */
  for (guint i = 0; i < 100; i++)
    {
      send_one (run, run->script, run->args, run->n_args);
      iterate_until_answered (run);
      if (run->then != NULL)
        {
          send_one (run, run->then, run->then_args, run->n_then_args);
          iterate_until_answered (run);
        }
    }

  for (guint i = 0; i < N_SEQUENTIAL; i++)
    {
      gint64 sent = g_get_monotonic_time ();

      send_one (run, run->script, run->args, run->n_args);
      iterate_until_answered (run);
      run->times[i] = g_get_monotonic_time () - sent;
      if (run->then != NULL)
        {
          send_one (run, run->then, run->then_args, run->n_then_args);
          iterate_until_answered (run);
        }
    }

  qsort (run->times, N_SEQUENTIAL, sizeof (gint64), compare);
  for (guint i = 0; i < N_SEQUENTIAL; i++)
    sum += run->times[i];
  g_print ("%-22s one at a time, %u round trips: median %" G_GINT64_FORMAT " us, p99 %" G_GINT64_FORMAT
           " us, mean %.1f us, max %" G_GINT64_FORMAT " us%s\n",
           name, N_SEQUENTIAL, run->times[N_SEQUENTIAL / 2], run->times[N_SEQUENTIAL * 99 / 100],
           sum / N_SEQUENTIAL, run->times[N_SEQUENTIAL - 1], run->failed > 0 ? " (FAILURES)" : "");
  g_clear_pointer (&run->times, g_free);
}

static void
on_pipelined (SymfonicRedisClient      *client,
              const SymfonicRedisReply *reply,
              const GError             *error,
              gpointer                  user_data)
{
  Run *run = user_data;

  if (error != NULL)
    run->failed++;
  run->done++;
}

static void
pipelined (Run        *run,
           const char *name)
{
  guint sent = 0;
  gint64 start = g_get_monotonic_time ();
  double cpu = cpu_seconds ();
  double seconds;

  run->done = 0;
  while (run->done < N_PIPELINED)
    {
      while (sent < N_PIPELINED && sent - run->done < WINDOW)
        {
          g_autoptr(GError) error = NULL;

          if (!symfonic_redis_client_eval (run->client, run->script, run->n_keys, run->keys, run->n_args, run->args,
                                           on_pipelined, run, &error))
            g_error ("%s", error->message);
          sent++;
        }
      g_main_context_iteration (NULL, TRUE);
    }
  seconds = (g_get_monotonic_time () - start) / 1e6;
  cpu = cpu_seconds () - cpu;
  g_print ("%-22s %u in flight: %.0f decisions/s; CPU of this process %.2f us per decision "
           "(the server's is on the other core)%s\n",
           name, WINDOW, N_PIPELINED / seconds, cpu * 1e6 / N_PIPELINED, run->failed > 0 ? " (FAILURES)" : "");
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *server_path = g_find_program_in_path ("redis-server");
  g_autoptr(SymfonicTestRedis) server = NULL;
  g_autoptr(SymfonicRedisClient) client = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *cell = symfonic_redis_tenant_key ("symfonic:", "acme", "rl:bench");
  g_autofree char *budget = symfonic_redis_tenant_key ("symfonic:", "acme", "budget:bench");
  g_autofree char *leases = symfonic_redis_tenant_key ("symfonic:", "acme", "budget:bench:leases");
  const char * const gcra_keys[] = { cell };
  /* a limit that never refuses: each decision writes */
  const char * const gcra_args[] = { "1", "1000000000000" };
  const char * const budget_keys[] = { budget, leases };
  const char * const reserve_args[] = { "lease", "100", "30000", "1000000", "1000000000", "60000000" };
  const char * const settle_args[] = { "lease", "40", "0", "1000000000", "60000000" };
  SymfonicRedisAddress address;
  Run run = { 0 };

  if (server_path == NULL)
    {
      g_print ("redis-server is not installed (Debian: apt-get install redis-server): nothing to measure\n");
      return 77;
    }

  server = symfonic_test_redis_start (SYMFONIC_TEST_REDIS_TCP, NULL);
  if (!symfonic_redis_address_parse (&address, symfonic_test_redis_get_url (server), &error))
    g_error ("%s", error->message);
  client = symfonic_redis_client_new (&address);
  symfonic_redis_address_clear (&address);
  symfonic_redis_client_set_timeout (client, 1000);
  symfonic_redis_client_start (client);
  while (!symfonic_redis_client_is_up (client))
    g_main_context_iteration (NULL, TRUE);
  run.client = client;

  sequential (&run, "PING");

  run.script = symfonic_redis_script_get_builtin (SYMFONIC_REDIS_SCRIPT_GCRA_TAKE);
  run.keys = gcra_keys;
  run.n_keys = G_N_ELEMENTS (gcra_keys);
  run.args = gcra_args;
  run.n_args = G_N_ELEMENTS (gcra_args);
  sequential (&run, "EVALSHA gcra-take");

  run.script = symfonic_redis_script_get_builtin (SYMFONIC_REDIS_SCRIPT_BUDGET_RESERVE);
  run.keys = budget_keys;
  run.n_keys = G_N_ELEMENTS (budget_keys);
  run.args = reserve_args;
  run.n_args = G_N_ELEMENTS (reserve_args);
  run.then = symfonic_redis_script_get_builtin (SYMFONIC_REDIS_SCRIPT_BUDGET_SETTLE);
  run.then_args = settle_args;
  run.n_then_args = G_N_ELEMENTS (settle_args);
  sequential (&run, "EVALSHA budget-reserve");
  run.then = NULL;

  run.script = symfonic_redis_script_get_builtin (SYMFONIC_REDIS_SCRIPT_GCRA_TAKE);
  run.keys = gcra_keys;
  run.n_keys = G_N_ELEMENTS (gcra_keys);
  run.args = gcra_args;
  run.n_args = G_N_ELEMENTS (gcra_args);
  pipelined (&run, "EVALSHA gcra-take");

  return run.failed > 0;
}
