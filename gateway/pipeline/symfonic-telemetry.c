/* symfonic-telemetry.c: per-thread counters and histograms, summed on scrape
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <time.h>

#include "symfonic-telemetry-private.h"

/* Each thread that counts has an index of its own, and writes only its
 * own shard of every route: the event path takes no lock and shares no
 * cache line, and a scrape, on any thread, reads the shards with relaxed
 * loads and adds them up. Shards are made the first time a thread counts
 * for a route, and live as long as the route. */

#if defined(__x86_64__) || defined(__i386__)
gboolean symfonic_telemetry_use_tsc;
#endif

/* ticks → nanoseconds, and where the ticks and the monotonic clock stood
 * at calibration */
static double ns_per_tick = 1.0;
static guint64 base_ticks;
static gint64 base_monotonic_ns;

static gint next_shard;
/* read for every count: the initial-exec model makes it one load off the
 * thread pointer, where the default one calls into the dynamic linker */
static _Thread_local guint thread_shard_plus_one __attribute__ ((tls_model ("initial-exec")));

/* the stage bounds in ticks, so that the event path compares ticks */
static guint64 stage_bounds_ticks[10];

/* Durations in nanoseconds, tokens in tokens. The GenAI sets are those the
 * OpenTelemetry semantic conventions advise for each instrument. */
/* a stage's phase runs from well under a microsecond (an event through a
 * filter) to seconds (an admission that asks a store, a script's hook) */
static const guint64 stage_bounds[] = {
  1000, 5000, 25000, 100000, 500000, 2500000, 10000000, 50000000, 250000000, 1000000000,
};
static const guint64 ttft_bounds[] = {
  1000000, 5000000, 10000000, 20000000, 40000000, 60000000, 80000000, 100000000, 250000000, 500000000,
  750000000, 1000000000, 2500000000, 5000000000, 7500000000, 10000000000,
};
static const guint64 tpot_bounds[] = {
  10000000, 25000000, 50000000, 75000000, 100000000, 150000000, 200000000, 300000000, 400000000,
  500000000, 750000000, 1000000000, 2500000000,
};
static const guint64 duration_bounds[] = {
  10000000, 20000000, 40000000, 80000000, 160000000, 320000000, 640000000, 1280000000, 2560000000,
  5120000000, 10240000000, 20480000000, 40960000000, 81920000000,
};
static const guint64 token_bounds[] = {
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
};

static const struct
{
  const guint64 *bounds;
  guint          n;
} bucket_sets[SYMFONIC_N_BUCKET_SETS] = {
  [SYMFONIC_BUCKETS_STAGE] = { stage_bounds, G_N_ELEMENTS (stage_bounds) },
  [SYMFONIC_BUCKETS_TTFT] = { ttft_bounds, G_N_ELEMENTS (ttft_bounds) },
  [SYMFONIC_BUCKETS_TPOT] = { tpot_bounds, G_N_ELEMENTS (tpot_bounds) },
  [SYMFONIC_BUCKETS_DURATION] = { duration_bounds, G_N_ELEMENTS (duration_bounds) },
  [SYMFONIC_BUCKETS_TOKENS] = { token_bounds, G_N_ELEMENTS (token_bounds) },
};

G_STATIC_ASSERT (G_N_ELEMENTS (ttft_bounds) < SYMFONIC_HISTOGRAM_MAX_BUCKETS);
G_STATIC_ASSERT (G_N_ELEMENTS (stage_bounds) == 10);

/* the gauges, one row per shard */
static gint64 gauges[SYMFONIC_TELEMETRY_MAX_SHARDS][SYMFONIC_N_GAUGES];

static gint64
monotonic_ns (void)
{
  struct timespec now;

  clock_gettime (CLOCK_MONOTONIC, &now);
  return (gint64) now.tv_sec * G_GINT64_CONSTANT (1000000000) + now.tv_nsec;
}

guint64
symfonic_telemetry_ticks_slow (void)
{
  return monotonic_ns ();
}

#if defined(__x86_64__) || defined(__i386__)
/* The counter is a clock only where the kernel keeps time with it: then
 * it runs at one rate on every processor. */
static gboolean
kernel_uses_tsc (void)
{
  g_autofree char *source = NULL;

  if (!g_file_get_contents ("/sys/devices/system/clocksource/clocksource0/current_clocksource", &source, NULL, NULL))
    return FALSE;

  return g_str_equal (g_strstrip (source), "tsc");
}
#endif

/* Once per process: what a tick is worth, measured against the monotonic
 * clock over a few milliseconds. */
void
symfonic_telemetry_init (void)
{
  static gsize done = 0;

  if (!g_once_init_enter (&done))
    return;

  base_monotonic_ns = monotonic_ns ();
  base_ticks = base_monotonic_ns;
#if defined(__x86_64__) || defined(__i386__)
  if (kernel_uses_tsc ())
    {
      guint64 t0 = __builtin_ia32_rdtsc ();
      gint64 n0 = monotonic_ns ();
      gint64 n1;
      guint64 t1;

      do
        n1 = monotonic_ns ();
      while (n1 - n0 < 5 * 1000 * 1000);
      t1 = __builtin_ia32_rdtsc ();
      if (t1 > t0)
        {
          ns_per_tick = (double) (n1 - n0) / (double) (t1 - t0);
          base_ticks = t1;
          base_monotonic_ns = n1;
          symfonic_telemetry_use_tsc = TRUE;
        }
    }
#endif

  for (guint i = 0; i < G_N_ELEMENTS (stage_bounds); i++)
    stage_bounds_ticks[i] = (guint64) (stage_bounds[i] / ns_per_tick);

  g_once_init_leave (&done, 1);
}

gint64
symfonic_telemetry_ticks_to_ns (guint64 ticks)
{
  return (gint64) (ticks * ns_per_tick);
}

/* A time stamp as g_get_monotonic_time() would have said it. */
gint64
symfonic_telemetry_ticks_to_monotonic_us (guint64 ticks)
{
  gint64 ns = base_monotonic_ns + (gint64) (((gint64) (ticks - base_ticks)) * ns_per_tick);

  return ns / 1000;
}

guint
symfonic_telemetry_thread_shard (void)
{
  if (G_UNLIKELY (thread_shard_plus_one == 0))
    {
      gint index = g_atomic_int_add (&next_shard, 1);

      thread_shard_plus_one = MIN (index, SYMFONIC_TELEMETRY_MAX_SHARDS - 1) + 1;
    }

  return thread_shard_plus_one - 1;
}

const guint64 *
symfonic_telemetry_get_bounds (SymfonicBucketSet  set,
                               guint             *n_bounds)
{
  *n_bounds = bucket_sets[set].n;
  return bucket_sets[set].bounds;
}

/* @times observations of @value each, adding up to @sum. */
static inline void
observe (SymfonicHistogram *histogram,
         SymfonicBucketSet  set,
         guint64            value,
         guint64            times,
         guint64            sum,
         gboolean           shared)
{
  const guint64 *bounds = bucket_sets[set].bounds;
  guint n = bucket_sets[set].n;
  guint i = 0;

  while (i < n && value > bounds[i])
    i++;
  symfonic_telemetry_counter_add (&histogram->buckets[i], times, shared);
  symfonic_telemetry_counter_add (&histogram->sum, sum, shared);
}

void
symfonic_histogram_observe (SymfonicHistogram *histogram,
                            SymfonicBucketSet  set,
                            guint64            value,
                            guint64            times,
                            guint64            sum)
{
  observe (histogram, set, value, times, sum,
           symfonic_telemetry_shard_is_shared (symfonic_telemetry_thread_shard ()));
}

void
symfonic_histogram_add_to (const SymfonicHistogram *histogram,
                           SymfonicHistogram       *total)
{
  for (guint i = 0; i < SYMFONIC_HISTOGRAM_MAX_BUCKETS; i++)
    total->buckets[i] += __atomic_load_n (&histogram->buckets[i], __ATOMIC_RELAXED);
  total->sum += __atomic_load_n (&histogram->sum, __ATOMIC_RELAXED);
}

void
symfonic_telemetry_gauge_add (SymfonicGauge gauge,
                              gint64        delta)
{
  guint shard = symfonic_telemetry_thread_shard ();

  symfonic_telemetry_counter_add ((guint64 *) &gauges[shard][gauge], (guint64) delta,
                                  symfonic_telemetry_shard_is_shared (shard));
}

/* The shards' deltas add up to the gauge; one may be below zero, when a
 * thread took back what another added. */
gint64
symfonic_telemetry_gauge_get (SymfonicGauge gauge)
{
  gint64 total = 0;

  for (guint i = 0; i < SYMFONIC_TELEMETRY_MAX_SHARDS; i++)
    total += (gint64) __atomic_load_n (&gauges[i][gauge], __ATOMIC_RELAXED);

  return total;
}

/* --- a route's counts ----------------------------------------------------- */

struct _SymfonicRouteStats
{
  guint               n_stages;
  SymfonicRouteShard *shards[SYMFONIC_TELEMETRY_MAX_SHARDS];
};

SymfonicRouteShard *
symfonic_route_shard_new (guint n_stages)
{
  gsize phases = sizeof (SymfonicHistogram) * n_stages * SYMFONIC_N_STAGE_PHASES;
  gsize limits = sizeof (guint64) * n_stages * SYMFONIC_N_LIMIT_OUTCOMES;
  SymfonicRouteShard *shard = g_malloc0 (sizeof (SymfonicRouteShard) + phases + limits);

  shard->limits = (guint64 *) ((char *) shard->phases + phases);

  return shard;
}

void
symfonic_route_shard_free (SymfonicRouteShard *shard)
{
  g_free (shard);
}

SymfonicRouteStats *
symfonic_route_stats_new (guint n_stages)
{
  SymfonicRouteStats *self = g_new0 (SymfonicRouteStats, 1);

  symfonic_telemetry_init ();
  self->n_stages = n_stages;

  return self;
}

void
symfonic_route_stats_free (SymfonicRouteStats *self)
{
  for (guint i = 0; i < SYMFONIC_TELEMETRY_MAX_SHARDS; i++)
    g_free (self->shards[i]);
  g_free (self);
}

guint
symfonic_route_stats_get_n_stages (SymfonicRouteStats *self)
{
  return self->n_stages;
}

/* The calling thread's shard, made on its first count for the route. */
SymfonicRouteShard *
symfonic_route_stats_get_shard (SymfonicRouteStats *self)
{
  guint index = symfonic_telemetry_thread_shard ();
  SymfonicRouteShard *shard = __atomic_load_n (&self->shards[index], __ATOMIC_ACQUIRE);
  SymfonicRouteShard *expected = NULL;

  if (G_LIKELY (shard != NULL))
    return shard;

  shard = symfonic_route_shard_new (self->n_stages);
  if (!__atomic_compare_exchange_n (&self->shards[index], &expected, shard, FALSE, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
    {
      /* another thread of the shared shard made it first */
      g_free (shard);
      shard = expected;
    }

  return shard;
}

/* @times events (or one admission) of stage @stage took @ticks in all,
 * counted in @shard, the calling thread's (%NULL: looked up). The stage
 * histograms count ticks, which the scrape turns into seconds: the event
 * path neither converts nor divides but for a batch of several events. */
void
symfonic_route_stats_observe_phase (SymfonicRouteStats *self,
                                    SymfonicRouteShard *shard,
                                    guint               stage,
                                    SymfonicStagePhase  phase,
                                    guint64             ticks,
                                    guint               times)
{
  guint index = symfonic_telemetry_thread_shard ();
  gboolean shared = symfonic_telemetry_shard_is_shared (index);
  SymfonicHistogram *histogram;
  guint64 each = ticks;
  guint i = 0;

  if (G_UNLIKELY (times == 0 || stage >= self->n_stages))
    return;
  if (shard == NULL)
    shard = symfonic_route_stats_get_shard (self);
  if (G_UNLIKELY (times > 1))
    each = ticks / times;
  histogram = &shard->phases[stage * SYMFONIC_N_STAGE_PHASES + phase];
  while (i < G_N_ELEMENTS (stage_bounds_ticks) && each > stage_bounds_ticks[i])
    i++;
  symfonic_telemetry_counter_add (&histogram->buckets[i], times, shared);
  symfonic_telemetry_counter_add (&histogram->sum, ticks, shared);
}

void
symfonic_route_stats_count_limit (SymfonicRouteStats   *self,
                                  guint                 stage,
                                  SymfonicLimitOutcome  outcome)
{
  SymfonicRouteShard *shard = symfonic_route_stats_get_shard (self);

  if (G_UNLIKELY (stage >= self->n_stages))
    return;
  symfonic_telemetry_counter_add (&shard->limits[stage * SYMFONIC_N_LIMIT_OUTCOMES + outcome], 1,
                                  symfonic_telemetry_shard_is_shared (symfonic_telemetry_thread_shard ()));
}

void
symfonic_route_stats_sum (SymfonicRouteStats *self,
                          SymfonicRouteShard *total)
{
  for (guint i = 0; i < SYMFONIC_TELEMETRY_MAX_SHARDS; i++)
    {
      SymfonicRouteShard *shard = __atomic_load_n (&self->shards[i], __ATOMIC_ACQUIRE);

      if (shard == NULL)
        continue;
      symfonic_histogram_add_to (&shard->ttft, &total->ttft);
      symfonic_histogram_add_to (&shard->tpot, &total->tpot);
      for (guint j = 0; j < SYMFONIC_N_STREAM_OUTCOMES; j++)
        symfonic_histogram_add_to (&shard->duration[j], &total->duration[j]);
      for (guint j = 0; j < SYMFONIC_N_TOKEN_TYPES; j++)
        symfonic_histogram_add_to (&shard->tokens[j], &total->tokens[j]);
      for (guint j = 0; j < self->n_stages * SYMFONIC_N_STAGE_PHASES; j++)
        symfonic_histogram_add_to (&shard->phases[j], &total->phases[j]);
      for (guint j = 0; j < self->n_stages * SYMFONIC_N_LIMIT_OUTCOMES; j++)
        total->limits[j] += __atomic_load_n (&shard->limits[j], __ATOMIC_RELAXED);
    }
}
