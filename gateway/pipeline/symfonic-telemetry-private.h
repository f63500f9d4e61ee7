/* symfonic-telemetry-private.h: what the metrics count, where it happens
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Every thread that counts writes its own shard: a worker, or the thread
 * of a stage with a context of its own. The last shard is shared by the
 * threads past the others, which add to it atomically. */
#define SYMFONIC_TELEMETRY_MAX_SHARDS 256

/* The phases of a stage that the metrics time, as the stream runs them. */
typedef enum {
  SYMFONIC_STAGE_PHASE_HEAD,
  SYMFONIC_STAGE_PHASE_BODY,
  SYMFONIC_STAGE_PHASE_EVENT,
  SYMFONIC_STAGE_PHASE_FINISH,
  SYMFONIC_N_STAGE_PHASES
} SymfonicStagePhase;

/* How an admission stage of the body phase (a limiter) decided. */
typedef enum {
  SYMFONIC_LIMIT_ADMITTED,
  SYMFONIC_LIMIT_REFUSED,
  SYMFONIC_LIMIT_NEAR_LIMIT,
  SYMFONIC_LIMIT_STORE_ERROR,
  SYMFONIC_N_LIMIT_OUTCOMES
} SymfonicLimitOutcome;

/* How a stream ended, for the request duration. */
typedef enum {
  SYMFONIC_STREAM_OUTCOME_COMPLETED,
  SYMFONIC_STREAM_OUTCOME_FAILED,
  SYMFONIC_STREAM_OUTCOME_CANCELLED,
  SYMFONIC_N_STREAM_OUTCOMES
} SymfonicStreamOutcome;

/* The token types an upstream reports, as gen_ai_token_type names them. */
typedef enum {
  SYMFONIC_TOKEN_INPUT,
  SYMFONIC_TOKEN_OUTPUT,
  SYMFONIC_TOKEN_REASONING,
  SYMFONIC_TOKEN_CACHE_READ,
  SYMFONIC_TOKEN_CACHE_CREATION,
  SYMFONIC_N_TOKEN_TYPES
} SymfonicTokenType;

/* The bucket sets: fixed, so that a histogram is a plain array. */
typedef enum {
  SYMFONIC_BUCKETS_STAGE,
  SYMFONIC_BUCKETS_TTFT,
  SYMFONIC_BUCKETS_TPOT,
  SYMFONIC_BUCKETS_DURATION,
  SYMFONIC_BUCKETS_TOKENS,
  SYMFONIC_N_BUCKET_SETS
} SymfonicBucketSet;

#define SYMFONIC_HISTOGRAM_MAX_BUCKETS 17

/* Counts per bucket (the last one is +Inf), not cumulative, and the sum
 * of what was observed: nanoseconds, tokens, or for the stage phases
 * telemetry ticks. One thread writes a histogram; the scrape reads it. */
typedef struct
{
  guint64 buckets[SYMFONIC_HISTOGRAM_MAX_BUCKETS];
  guint64 sum;
} SymfonicHistogram;

/* What one thread counted for one route. */
typedef struct
{
  SymfonicHistogram  ttft;
  SymfonicHistogram  tpot;
  SymfonicHistogram  duration[SYMFONIC_N_STREAM_OUTCOMES];
  SymfonicHistogram  tokens[SYMFONIC_N_TOKEN_TYPES];
  /* n_stages × SYMFONIC_N_LIMIT_OUTCOMES */
  guint64           *limits;
  /* n_stages × SYMFONIC_N_STAGE_PHASES */
  SymfonicHistogram  phases[];
} SymfonicRouteShard;

typedef struct _SymfonicRouteStats SymfonicRouteStats;

/* The gauges and counters that belong to no route. */
typedef enum {
  SYMFONIC_GAUGE_FILTER_HELD_BYTES,
  SYMFONIC_N_GAUGES
} SymfonicGauge;

G_GNUC_INTERNAL
void                symfonic_telemetry_init           (void);
G_GNUC_INTERNAL
guint               symfonic_telemetry_thread_shard   (void);
G_GNUC_INTERNAL
guint64             symfonic_telemetry_ticks_slow     (void);
G_GNUC_INTERNAL
gint64              symfonic_telemetry_ticks_to_ns    (guint64 ticks);
G_GNUC_INTERNAL
gint64              symfonic_telemetry_ticks_to_monotonic_us (guint64 ticks);
G_GNUC_INTERNAL
const guint64      *symfonic_telemetry_get_bounds     (SymfonicBucketSet  set,
                                                       guint             *n_bounds);
G_GNUC_INTERNAL
void                symfonic_histogram_observe        (SymfonicHistogram *histogram,
                                                       SymfonicBucketSet  set,
                                                       guint64            value,
                                                       guint64            times,
                                                       guint64            sum);
G_GNUC_INTERNAL
void                symfonic_histogram_add_to         (const SymfonicHistogram *histogram,
                                                       SymfonicHistogram       *total);
G_GNUC_INTERNAL
void                symfonic_telemetry_gauge_add      (SymfonicGauge      gauge,
                                                       gint64             delta);
G_GNUC_INTERNAL
gint64              symfonic_telemetry_gauge_get      (SymfonicGauge      gauge);

G_GNUC_INTERNAL
SymfonicRouteStats *symfonic_route_stats_new          (guint              n_stages);
G_GNUC_INTERNAL
void                symfonic_route_stats_free         (SymfonicRouteStats *self);
G_GNUC_INTERNAL
guint               symfonic_route_stats_get_n_stages (SymfonicRouteStats *self);
G_GNUC_INTERNAL
SymfonicRouteShard *symfonic_route_stats_get_shard    (SymfonicRouteStats *self);
G_GNUC_INTERNAL
void                symfonic_route_stats_observe_phase (SymfonicRouteStats *self,
                                                        SymfonicRouteShard *shard,
                                                        guint               stage,
                                                        SymfonicStagePhase  phase,
                                                        guint64             ticks,
                                                        guint               times);
G_GNUC_INTERNAL
void                symfonic_route_stats_count_limit  (SymfonicRouteStats   *self,
                                                       guint                 stage,
                                                       SymfonicLimitOutcome  outcome);
/* Sums every thread's shard of @self into @total, which has room for
 * symfonic_route_stats_get_n_stages() stages and @limits for as many
 * limit counts. */
G_GNUC_INTERNAL
void                symfonic_route_stats_sum          (SymfonicRouteStats *self,
                                                       SymfonicRouteShard *total);
G_GNUC_INTERNAL
SymfonicRouteShard *symfonic_route_shard_new          (guint               n_stages);
G_GNUC_INTERNAL
void                symfonic_route_shard_free         (SymfonicRouteShard *shard);

/* Whether the calling thread adds to the shared last shard. */
static inline gboolean
symfonic_telemetry_shard_is_shared (guint shard)
{
  return shard == SYMFONIC_TELEMETRY_MAX_SHARDS - 1;
}

/* One writer per shard: a plain add that a concurrent reader never sees
 * torn; the shared shard adds atomically. */
static inline void
symfonic_telemetry_counter_add (guint64 *counter,
                                guint64  amount,
                                gboolean shared)
{
  if (G_UNLIKELY (shared))
    __atomic_fetch_add (counter, amount, __ATOMIC_RELAXED);
  else
    __atomic_store_n (counter, __atomic_load_n (counter, __ATOMIC_RELAXED) + amount, __ATOMIC_RELAXED);
}

#if defined(__x86_64__) || defined(__i386__)
extern gboolean symfonic_telemetry_use_tsc;

/* A time stamp for the phase timing: the processor's counter where the
 * kernel trusts it too (a few nanoseconds, where clock_gettime() takes
 * about thirty), otherwise the monotonic clock in nanoseconds. */
static inline guint64
symfonic_telemetry_ticks (void)
{
  if (G_LIKELY (symfonic_telemetry_use_tsc))
    return __builtin_ia32_rdtsc ();
  return symfonic_telemetry_ticks_slow ();
}
#else
static inline guint64
symfonic_telemetry_ticks (void)
{
  return symfonic_telemetry_ticks_slow ();
}
#endif

G_END_DECLS
