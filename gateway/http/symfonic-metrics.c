/* symfonic-metrics.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-metrics-private.h"
#include "symfonic-recorder-private.h"
#include "symfonic-redis-store-private.h"
#include "symfonic-route-private.h"
#include "symfonic-stream-private.h"
#include "symfonic-upstream-private.h"
#include "symfonic-usage-private.h"

/* Counters are plain atomics, bumped once per stream (frames are summed by
 * the connection and added when it closes), so the per-event path never
 * touches shared memory. Responses by route and status take a lock once
 * per request. What the stages and streams of a route count is the
 * route's (SymfonicRouteStats), written by each thread in its own shard;
 * per-tenant tokens are counted here, also per thread.
 *
 * The scrape reads all of it without a lock a worker takes on its event
 * path, off the workers' threads. */

/* the tenant counts of one thread: max_tenants + 1 rows ("other" last) */
typedef guint64 TenantRow[SYMFONIC_N_TOKEN_TYPES];

#define MAX_TENANTS_LIMIT 10000

struct _SymfonicMetrics
{
  guint64     counters[SYMFONIC_N_COUNTERS];
  gint        active;
  GMutex      lock;
  /* "route\nstatus" -> count */
  GHashTable *responses;

  /* per-tenant tokens: the tenants named, in the order they came (each
   * set once, never changed), and each thread's counts */
  gboolean    tenants_enabled;
  guint       max_tenants;
  char      **tenant_names;
  TenantRow  *tenant_rows[SYMFONIC_TELEMETRY_MAX_SHARDS];

  /* how /metrics is served */
  char       *token;
  gboolean    apart;
  /* what the listener of its own reports on: the only lock a scrape
   * takes that a worker does not */
  GMutex      pipeline_lock;
  SymfonicPipeline *pipeline;
  gpointer    tracer;
};

static const char * const token_type_names[SYMFONIC_N_TOKEN_TYPES] = {
  [SYMFONIC_TOKEN_INPUT] = "input",
  [SYMFONIC_TOKEN_OUTPUT] = "output",
  [SYMFONIC_TOKEN_REASONING] = "reasoning",
  [SYMFONIC_TOKEN_CACHE_READ] = "cache_read",
  [SYMFONIC_TOKEN_CACHE_CREATION] = "cache_creation",
};

static const char * const phase_names[SYMFONIC_N_STAGE_PHASES] = {
  [SYMFONIC_STAGE_PHASE_HEAD] = "head",
  [SYMFONIC_STAGE_PHASE_BODY] = "body",
  [SYMFONIC_STAGE_PHASE_EVENT] = "event",
  [SYMFONIC_STAGE_PHASE_FINISH] = "finish",
};

static const char * const limit_names[SYMFONIC_N_LIMIT_OUTCOMES] = {
  [SYMFONIC_LIMIT_ADMITTED] = "admitted",
  [SYMFONIC_LIMIT_REFUSED] = "refused",
  [SYMFONIC_LIMIT_NEAR_LIMIT] = "near_limit",
  [SYMFONIC_LIMIT_STORE_ERROR] = "store_error",
};

static const char * const outcome_names[SYMFONIC_N_STREAM_OUTCOMES] = {
  [SYMFONIC_STREAM_OUTCOME_COMPLETED] = "completed",
  [SYMFONIC_STREAM_OUTCOME_FAILED] = "failed",
  [SYMFONIC_STREAM_OUTCOME_CANCELLED] = "cancelled",
};

static const struct
{
  const char *name;
  const char *help;
} counter_info[SYMFONIC_N_COUNTERS] = {
  [SYMFONIC_COUNTER_STREAMS_STARTED] = { "symfonic_streams_started_total", "Streams that passed admission and opened their upstream" },
  [SYMFONIC_COUNTER_STREAMS_COMPLETED] = { "symfonic_streams_completed_total", "Streams that ended with their success terminal" },
  [SYMFONIC_COUNTER_STREAMS_FAILED] = { "symfonic_streams_failed_total", "Streams that ended with an error frame" },
  [SYMFONIC_COUNTER_STREAMS_CANCELLED] = { "symfonic_streams_cancelled_total", "Streams whose client went away before the end" },
  [SYMFONIC_COUNTER_STREAMS_SLOW_CLIENT] = { "symfonic_streams_slow_client_total", "Streams ended because their client read too slowly" },
  [SYMFONIC_COUNTER_FRAMES_WRITTEN] = { "symfonic_frames_written_total", "Frames handed to connections" },
  [SYMFONIC_COUNTER_FRAMES_SHED] = { "symfonic_frames_shed_total", "Droppable frames shed because a client read too slowly" },
  [SYMFONIC_COUNTER_EVENTS_DROPPED] = { "symfonic_events_dropped_total", "Upstream events dropped because they would break the stream contract" },
  [SYMFONIC_COUNTER_BYTES_WRITTEN] = { "symfonic_response_bytes_total", "Response body bytes handed to connections" },
  [SYMFONIC_COUNTER_SPANS_EXPORTED] = { "symfonic_trace_spans_exported_total", "Spans the trace exporter delivered to its OTLP endpoint" },
  [SYMFONIC_COUNTER_SPANS_DROPPED] = { "symfonic_trace_spans_dropped_total", "Spans dropped: the exporter's queue was full, or their export failed" },
  [SYMFONIC_COUNTER_EXPORTS_FAILED] = { "symfonic_trace_exports_failed_total", "Exports to the OTLP endpoint that failed" },
};

SymfonicMetrics *
symfonic_metrics_new (void)
{
  SymfonicMetrics *self = g_new0 (SymfonicMetrics, 1);

  g_mutex_init (&self->lock);
  g_mutex_init (&self->pipeline_lock);
  self->responses = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);

  return self;
}

static void
clear_tenants (SymfonicMetrics *self)
{
  for (guint i = 0; self->tenant_names != NULL && i < self->max_tenants; i++)
    g_free (self->tenant_names[i]);
  g_clear_pointer (&self->tenant_names, g_free);
  for (guint i = 0; i < SYMFONIC_TELEMETRY_MAX_SHARDS; i++)
    g_clear_pointer (&self->tenant_rows[i], g_free);
}

void
symfonic_metrics_set_tenants (SymfonicMetrics *self,
                              gboolean         enabled,
                              guint            max_tenants)
{
  clear_tenants (self);
  self->tenants_enabled = enabled;
  self->max_tenants = CLAMP (max_tenants, 1, MAX_TENANTS_LIMIT);
  if (enabled)
    self->tenant_names = g_new0 (char *, self->max_tenants);
}

void
symfonic_metrics_free (SymfonicMetrics *self)
{
  clear_tenants (self);
  g_free (self->token);
  g_clear_object (&self->pipeline);
  g_mutex_clear (&self->pipeline_lock);
  g_hash_table_unref (self->responses);
  g_mutex_clear (&self->lock);
  g_free (self);
}

void
symfonic_metrics_add (SymfonicMetrics *self,
                      SymfonicCounter  counter,
                      guint64          amount)
{
  __atomic_fetch_add (&self->counters[counter], amount, __ATOMIC_RELAXED);
}

guint64
symfonic_metrics_get (SymfonicMetrics *self,
                      SymfonicCounter  counter)
{
  return __atomic_load_n (&self->counters[counter], __ATOMIC_RELAXED);
}

void
symfonic_metrics_stream_opened (SymfonicMetrics *self)
{
  g_atomic_int_inc (&self->active);
  symfonic_metrics_add (self, SYMFONIC_COUNTER_STREAMS_STARTED, 1);
}

void
symfonic_metrics_stream_closed (SymfonicMetrics *self)
{
  g_atomic_int_add (&self->active, -1);
}

void
symfonic_metrics_count_response (SymfonicMetrics *self,
                                 const char      *route,
                                 guint            status)
{
  g_autofree char *key = g_strdup_printf ("%s\n%u", route, status);
  G_GNUC_UNUSED g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  guint64 *count = g_hash_table_lookup (self->responses, key);

  if (count == NULL)
    {
      count = g_new0 (guint64, 1);
      g_hash_table_insert (self->responses, g_steal_pointer (&key), count);
    }
  (*count)++;
}

/* Label values escape backslash, quote and newline (a tenant's id may
 * hold any of them). */
static void
append_label_value (GString    *out,
                    const char *value,
                    gsize       length)
{
  for (gsize i = 0; i < length; i++)
    {
      if (value[i] == '\n')
        {
          g_string_append (out, "\\n");
          continue;
        }
      if (value[i] == '\\' || value[i] == '"')
        g_string_append_c (out, '\\');
      g_string_append_c (out, value[i]);
    }
}

static void
append_label (GString    *out,
              const char *name,
              const char *value)
{
  if (out->len > 0 && out->str[out->len - 1] != '{')
    g_string_append_c (out, ',');
  g_string_append (out, name);
  g_string_append (out, "=\"");
  append_label_value (out, value, strlen (value));
  g_string_append_c (out, '"');
}

/* --- one stream's end ------------------------------------------------------ */

/* The slot of @tenant, given one the first time it is seen while there is
 * room: looked up once per stream, never on the event path, and with no
 * lock, so that a scrape holds no worker back. */
static guint
tenant_slot (SymfonicMetrics *self,
             const char      *tenant)
{
  g_autofree char *copy = NULL;

  for (guint i = 0; i < self->max_tenants; i++)
    {
      char *name = __atomic_load_n (&self->tenant_names[i], __ATOMIC_ACQUIRE);
      char *expected = NULL;

      if (name == NULL)
        {
          if (copy == NULL)
            copy = g_strdup (tenant);
          if (__atomic_compare_exchange_n (&self->tenant_names[i], &expected, copy, FALSE, __ATOMIC_ACQ_REL,
                                           __ATOMIC_ACQUIRE))
            {
              copy = NULL;
              return i;
            }
          name = expected;
        }
      if (strcmp (name, tenant) == 0)
        return i;
    }

  return self->max_tenants;
}

static void
count_tenant_tokens (SymfonicMetrics *self,
                     const char      *tenant,
                     const gint64     tokens[SYMFONIC_N_TOKEN_TYPES])
{
  guint shard = symfonic_telemetry_thread_shard ();
  gboolean shared = symfonic_telemetry_shard_is_shared (shard);
  TenantRow *rows = __atomic_load_n (&self->tenant_rows[shard], __ATOMIC_ACQUIRE);
  guint slot = tenant_slot (self, tenant);

  if (rows == NULL)
    {
      TenantRow *expected = NULL;

      rows = g_new0 (TenantRow, self->max_tenants + 1);
      if (!__atomic_compare_exchange_n (&self->tenant_rows[shard], &expected, rows, FALSE, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
        {
          g_free (rows);
          rows = expected;
        }
    }
  for (guint i = 0; i < SYMFONIC_N_TOKEN_TYPES; i++)
    {
      if (tokens[i] > 0)
        symfonic_telemetry_counter_add (&rows[slot][i], tokens[i], shared);
    }
}

void
symfonic_metrics_record_stream (SymfonicMetrics       *self,
                                SymfonicStream        *stream,
                                SymfonicStreamOutcome  outcome,
                                gint64                 end_us)
{
  SymfonicRoute *route = symfonic_stream_get_route (stream);
  SymfonicRouteStats *stats = symfonic_route_get_stats (route);
  SymfonicRouteShard *shard = symfonic_route_stats_get_shard (stats);
  SymfonicUpstreamFacts *facts = symfonic_upstream_facts_peek (stream);
  gint64 start_us = symfonic_stream_get_start_time (stream);
  gint64 source_start_us, upstream_end_us, first_token_us;
  gint64 tokens[SYMFONIC_N_TOKEN_TYPES] = { -1, -1, -1, -1, -1 };
  guint64 input, output, n_deltas, produced;
  gboolean reported;

  symfonic_stream_get_times (stream, &source_start_us, &upstream_end_us, &first_token_us, &n_deltas);
  symfonic_stream_get_usage (stream, &input, &output, &reported);

  symfonic_histogram_observe (&shard->duration[outcome], SYMFONIC_BUCKETS_DURATION,
                              (end_us - start_us) * 1000, 1, (end_us - start_us) * 1000);
  if (first_token_us != 0)
    symfonic_histogram_observe (&shard->ttft, SYMFONIC_BUCKETS_TTFT, (first_token_us - start_us) * 1000, 1,
                                (first_token_us - start_us) * 1000);

  /* what came after the first token, per token after it: the upstream's
   * count where it gave one, the deltas it sent otherwise */
  produced = reported && output > 0 ? output : n_deltas;
  if (first_token_us != 0 && produced > 1)
    {
      gint64 last_us = upstream_end_us != 0 ? upstream_end_us : end_us;
      guint64 each = (guint64) MAX (last_us - first_token_us, 0) * 1000 / (produced - 1);

      symfonic_histogram_observe (&shard->tpot, SYMFONIC_BUCKETS_TPOT, each, 1, each);
    }

  if (reported)
    {
      tokens[SYMFONIC_TOKEN_INPUT] = input;
      tokens[SYMFONIC_TOKEN_OUTPUT] = output;
    }
  if (facts != NULL)
    {
      tokens[SYMFONIC_TOKEN_REASONING] = facts->reasoning;
      tokens[SYMFONIC_TOKEN_CACHE_READ] = facts->cache_read;
      tokens[SYMFONIC_TOKEN_CACHE_CREATION] = facts->cache_creation;
    }
  for (guint i = 0; i < SYMFONIC_N_TOKEN_TYPES; i++)
    {
      if (tokens[i] >= 0)
        symfonic_histogram_observe (&shard->tokens[i], SYMFONIC_BUCKETS_TOKENS, tokens[i], 1, tokens[i]);
    }

  if (self->tenants_enabled)
    {
      const char *tenant = symfonic_invocation_get_tenant_id (symfonic_stream_get_invocation (stream));

      count_tenant_tokens (self, tenant != NULL ? tenant : "anonymous", tokens);
    }
}

/* --- the scrape -------------------------------------------------------------- */

static void
append_u64 (GString *out,
            guint64  value)
{
  char digits[24];
  guint n = sizeof digits;

  do
    {
      digits[--n] = '0' + value % 10;
      value /= 10;
    }
  while (value > 0);
  g_string_append_len (out, digits + n, sizeof digits - n);
}

/* `{labels}`, or nothing for none */
static void
append_braced (GString    *out,
               const char *labels,
               gsize       length)
{
  if (length == 0)
    return;
  g_string_append_c (out, '{');
  g_string_append_len (out, labels, length);
  g_string_append_c (out, '}');
}

static void
append_double (GString *out,
               double   value)
{
  char text[G_ASCII_DTOSTR_BUF_SIZE];

  g_string_append (out, g_ascii_formatd (text, sizeof text, "%.9g", value));
}

static void
append_family (GString    *out,
               const char *name,
               const char *type,
               const char *help)
{
  g_string_append_printf (out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One histogram's series: @labels ("a=\"b\",c=\"d\"", maybe empty), its
 * buckets' bounds given by @set as counted, its sum times @scale. The
 * bucket bounds' texts are made once per set. A histogram that never
 * observed anything has no series, as a client library's labelled child
 * appears with its first observation: a scrape of many idle routes stays
 * short. */
static void
append_histogram (GString                 *out,
                  const char              *name,
                  const char              *labels,
                  const SymfonicHistogram *histogram,
                  SymfonicBucketSet        set,
                  double                   bound_scale,
                  double                   sum_scale)
{
  static char *bound_texts[SYMFONIC_N_BUCKET_SETS][SYMFONIC_HISTOGRAM_MAX_BUCKETS];
  static gsize made[SYMFONIC_N_BUCKET_SETS];
  guint n_bounds;
  const guint64 *bounds = symfonic_telemetry_get_bounds (set, &n_bounds);
  guint64 cumulative = 0;
  gsize name_length = strlen (name);
  gsize labels_length = strlen (labels);
  guint64 count = 0;

  for (guint i = 0; i <= n_bounds; i++)
    count += histogram->buckets[i];
  if (count == 0)
    return;

  if (g_once_init_enter (&made[set]))
    {
      for (guint i = 0; i < n_bounds; i++)
        {
          char text[G_ASCII_DTOSTR_BUF_SIZE];

          bound_texts[set][i] = g_strdup (g_ascii_formatd (text, sizeof text, "%g", bounds[i] * bound_scale));
        }
      bound_texts[set][n_bounds] = g_strdup ("+Inf");
      g_once_init_leave (&made[set], 1);
    }

  for (guint i = 0; i <= n_bounds; i++)
    {
      cumulative += histogram->buckets[i];
      g_string_append_len (out, name, name_length);
      g_string_append_len (out, "_bucket{", 8);
      if (labels_length > 0)
        {
          g_string_append_len (out, labels, labels_length);
          g_string_append_c (out, ',');
        }
      g_string_append_len (out, "le=\"", 4);
      g_string_append (out, bound_texts[set][i]);
      g_string_append_len (out, "\"} ", 3);
      append_u64 (out, cumulative);
      g_string_append_c (out, '\n');
    }
  g_string_append_len (out, name, name_length);
  g_string_append_len (out, "_sum", 4);
  append_braced (out, labels, labels_length);
  g_string_append_c (out, ' ');
  append_double (out, histogram->sum * sum_scale);
  g_string_append_c (out, '\n');
  g_string_append_len (out, name, name_length);
  g_string_append_len (out, "_count", 6);
  append_braced (out, labels, labels_length);
  g_string_append_c (out, ' ');
  append_u64 (out, cumulative);
  g_string_append_c (out, '\n');
}

/* Whether the stage at @i has @phase at all: a stage is timed in the
 * phases it has hooks for. */
static gboolean
stage_has_phase (SymfonicRoute      *route,
                 guint               i,
                 SymfonicStagePhase  phase)
{
  const SymfonicRouteStage *info = symfonic_route_get_stage_info (route, i);

  switch (phase)
    {
    case SYMFONIC_STAGE_PHASE_HEAD:
      return info->admits && info->phase == SYMFONIC_ADMISSION_PHASE_HEAD;
    case SYMFONIC_STAGE_PHASE_BODY:
      return info->admits && info->phase == SYMFONIC_ADMISSION_PHASE_BODY;
    case SYMFONIC_STAGE_PHASE_EVENT:
      return info->process != NULL;
    case SYMFONIC_STAGE_PHASE_FINISH:
      return info->finishes;
    case SYMFONIC_N_STAGE_PHASES:
    default:
      return FALSE;
    }
}

/* the GenAI labels of a route: fixed by its pipeline file */
static void
genai_labels (GString       *labels,
              SymfonicRoute *route)
{
  const char *model = symfonic_route_get_model (route);

  g_string_truncate (labels, 0);
  append_label (labels, "route", symfonic_route_get_name (route));
  append_label (labels, "source", symfonic_route_get_source_name (route));
  append_label (labels, "gen_ai_operation_name", "chat");
  append_label (labels, "gen_ai_provider_name", symfonic_route_get_provider_name (route));
  append_label (labels, "gen_ai_request_model", model != NULL ? model : "");
}

/* The routes' own counts: the stages' phases, the limiters' decisions,
 * and the GenAI instruments, each family whole before the next. */
static void
render_routes (GString          *out,
               SymfonicPipeline *pipeline)
{
  guint n_routes = symfonic_pipeline_get_n_routes (pipeline);
  g_autoptr(GPtrArray) sums = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_route_shard_free);
  g_autoptr(GString) labels = g_string_new (NULL);
  double tick_seconds = symfonic_telemetry_ticks_to_ns (1000000000) / 1e18;

  for (guint r = 0; r < n_routes; r++)
    {
      SymfonicRouteStats *stats = symfonic_route_get_stats (symfonic_pipeline_get_route (pipeline, r));
      SymfonicRouteShard *sum = symfonic_route_shard_new (symfonic_route_stats_get_n_stages (stats));

      symfonic_route_stats_sum (stats, sum);
      g_ptr_array_add (sums, sum);
    }

  append_family (out, "symfonic_stage_duration_seconds", "histogram",
                 "Time a route's stage took in one phase: head or body admission, per event, finish");
  for (guint r = 0; r < n_routes; r++)
    {
      SymfonicRoute *route = symfonic_pipeline_get_route (pipeline, r);
      SymfonicRouteShard *sum = g_ptr_array_index (sums, r);

      for (guint i = 0; i < symfonic_route_get_n_stages (route); i++)
        for (guint p = 0; p < SYMFONIC_N_STAGE_PHASES; p++)
          {
            if (!stage_has_phase (route, i, p))
              continue;
            g_string_truncate (labels, 0);
            append_label (labels, "route", symfonic_route_get_name (route));
            append_label (labels, "stage", symfonic_route_get_stage_name (route, i));
            append_label (labels, "phase", phase_names[p]);
            append_histogram (out, "symfonic_stage_duration_seconds", labels->str,
                              &sum->phases[i * SYMFONIC_N_STAGE_PHASES + p], SYMFONIC_BUCKETS_STAGE, 1e-9,
                              tick_seconds);
          }
    }

  append_family (out, "symfonic_limiter_decisions_total", "counter",
                 "Decisions of the stages that meter once the body is in (rate limits, budgets), by outcome");
  for (guint r = 0; r < n_routes; r++)
    {
      SymfonicRoute *route = symfonic_pipeline_get_route (pipeline, r);
      SymfonicRouteShard *sum = g_ptr_array_index (sums, r);

      for (guint i = 0; i < symfonic_route_get_n_stages (route); i++)
        {
          if (!stage_has_phase (route, i, SYMFONIC_STAGE_PHASE_BODY))
            continue;
          for (guint o = 0; o < SYMFONIC_N_LIMIT_OUTCOMES; o++)
            {
              g_string_append (out, "symfonic_limiter_decisions_total{");
              g_string_truncate (labels, 0);
              append_label (labels, "route", symfonic_route_get_name (route));
              append_label (labels, "stage", symfonic_route_get_stage_name (route, i));
              append_label (labels, "outcome", limit_names[o]);
              g_string_append (out, labels->str);
              g_string_append (out, "} ");
              append_u64 (out, sum->limits[i * SYMFONIC_N_LIMIT_OUTCOMES + o]);
              g_string_append_c (out, '\n');
            }
        }
    }

  append_family (out, "gen_ai_server_time_to_first_token", "histogram",
                 "Seconds from a request's arrival to the first token its upstream streamed");
  for (guint r = 0; r < n_routes; r++)
    {
      SymfonicRouteShard *sum = g_ptr_array_index (sums, r);

      genai_labels (labels, symfonic_pipeline_get_route (pipeline, r));
      append_histogram (out, "gen_ai_server_time_to_first_token", labels->str, &sum->ttft, SYMFONIC_BUCKETS_TTFT,
                        1e-9, 1e-9);
    }

  append_family (out, "gen_ai_server_time_per_output_token", "histogram",
                 "Seconds per output token after the first, per stream");
  for (guint r = 0; r < n_routes; r++)
    {
      SymfonicRouteShard *sum = g_ptr_array_index (sums, r);

      genai_labels (labels, symfonic_pipeline_get_route (pipeline, r));
      append_histogram (out, "gen_ai_server_time_per_output_token", labels->str, &sum->tpot, SYMFONIC_BUCKETS_TPOT,
                        1e-9, 1e-9);
    }

  append_family (out, "gen_ai_server_request_duration", "histogram",
                 "Seconds from a request's arrival to its stream's end, by outcome");
  for (guint r = 0; r < n_routes; r++)
    {
      SymfonicRouteShard *sum = g_ptr_array_index (sums, r);

      for (guint o = 0; o < SYMFONIC_N_STREAM_OUTCOMES; o++)
        {
          genai_labels (labels, symfonic_pipeline_get_route (pipeline, r));
          append_label (labels, "outcome", outcome_names[o]);
          append_histogram (out, "gen_ai_server_request_duration", labels->str, &sum->duration[o],
                            SYMFONIC_BUCKETS_DURATION, 1e-9, 1e-9);
        }
    }

  append_family (out, "gen_ai_client_token_usage", "histogram",
                 "Tokens per stream, as the upstream reported them, by gen_ai_token_type");
  for (guint r = 0; r < n_routes; r++)
    {
      SymfonicRouteShard *sum = g_ptr_array_index (sums, r);

      for (guint t = 0; t < SYMFONIC_N_TOKEN_TYPES; t++)
        {
          genai_labels (labels, symfonic_pipeline_get_route (pipeline, r));
          append_label (labels, "gen_ai_token_type", token_type_names[t]);
          append_histogram (out, "gen_ai_client_token_usage", labels->str, &sum->tokens[t], SYMFONIC_BUCKETS_TOKENS,
                            1, 1);
        }
    }
}

static void
render_tenants (SymfonicMetrics *self,
                GString         *out)
{
  g_autoptr(GString) labels = g_string_new (NULL);

  append_family (out, "symfonic_tenant_tokens_total", "counter",
                 "Tokens by tenant and gen_ai_token_type, with [gateway] metrics-tenant-label=true; "
                 "tenants past metrics-tenants count as other");
  if (!self->tenants_enabled)
    return;

  for (guint slot = 0; slot <= self->max_tenants; slot++)
    {
      const char *name = slot < self->max_tenants ? __atomic_load_n (&self->tenant_names[slot], __ATOMIC_ACQUIRE)
                                                  : "other";
      guint64 totals[SYMFONIC_N_TOKEN_TYPES] = { 0, };
      gboolean any = slot == self->max_tenants;

      if (name == NULL)
        continue;
      for (guint shard = 0; shard < SYMFONIC_TELEMETRY_MAX_SHARDS; shard++)
        {
          TenantRow *rows = __atomic_load_n (&self->tenant_rows[shard], __ATOMIC_ACQUIRE);

          if (rows == NULL)
            continue;
          for (guint t = 0; t < SYMFONIC_N_TOKEN_TYPES; t++)
            totals[t] += __atomic_load_n (&rows[slot][t], __ATOMIC_RELAXED);
          any = TRUE;
        }
      if (!any)
        continue;
      for (guint t = 0; t < SYMFONIC_N_TOKEN_TYPES; t++)
        {
          g_string_truncate (labels, 0);
          append_label (labels, "tenant", name);
          append_label (labels, "gen_ai_token_type", token_type_names[t]);
          g_string_append_printf (out, "symfonic_tenant_tokens_total{%s} ", labels->str);
          append_u64 (out, totals[t]);
          g_string_append_c (out, '\n');
        }
    }
}

/* Each route counts its own refusals, on its own, since every worker
 * shares the route. */
static void
render_refusals (GString          *out,
                 SymfonicPipeline *pipeline)
{
  static const char * const caps[] = { "max-streams", "max-streams-per-tenant" };

  g_string_append (out, "# HELP symfonic_streams_refused_total Streams refused at a route's max-streams or max-streams-per-tenant\n"
                        "# TYPE symfonic_streams_refused_total counter\n");
  for (guint i = 0; i < symfonic_pipeline_get_n_routes (pipeline); i++)
    {
      SymfonicRoute *route = symfonic_pipeline_get_route (pipeline, i);
      const char *name = symfonic_route_get_name (route);

      for (guint j = 0; j < G_N_ELEMENTS (caps); j++)
        {
          g_string_append (out, "symfonic_streams_refused_total{route=\"");
          append_label_value (out, name, strlen (name));
          g_string_append_printf (out, "\",cap=\"%s\"} %" G_GUINT64_FORMAT "\n",
                                  caps[j], symfonic_route_get_refused_streams (route, j == 1));
        }
    }
}

/* The shared stores count per worker connection; the sums are made here,
 * at scrape, so that no command pays for a shared counter. */
static void
render_stores (GString          *out,
               SymfonicPipeline *pipeline)
{
  g_auto(GStrv) names = symfonic_pipeline_dup_store_names (pipeline);

  /* declared whether or not a shared store is there, so that the names
   * a scrape shows do not depend on the file */
  symfonic_redis_store_render_help (out);
  for (guint i = 0; names[i] != NULL; i++)
    {
      GObject *store = symfonic_pipeline_get_store (pipeline, names[i]);

      if (!SYMFONIC_IS_REDIS_STORE (store))
        continue;
      symfonic_redis_store_render_metrics (SYMFONIC_REDIS_STORE (store), names[i], out);
    }
}

char *
symfonic_metrics_render (SymfonicMetrics  *self,
                         SymfonicPipeline *pipeline)
{
  GString *out = g_string_new (NULL);
  GHashTableIter iter;
  gpointer key, value;

  /* room for every route's series at once: growing by doubling would
   * copy a large scrape several times */
  g_string_set_size (out, 64 * 1024 + symfonic_pipeline_get_n_routes (pipeline) * 32 * 1024);
  g_string_truncate (out, 0);
  for (guint i = 0; i < SYMFONIC_N_COUNTERS; i++)
    g_string_append_printf (out, "# HELP %s %s\n# TYPE %s counter\n%s %" G_GUINT64_FORMAT "\n",
                            counter_info[i].name, counter_info[i].help,
                            counter_info[i].name, counter_info[i].name,
                            symfonic_metrics_get (self, i));

  g_string_append_printf (out, "# HELP symfonic_streams_active Streams open right now\n"
                          "# TYPE symfonic_streams_active gauge\nsymfonic_streams_active %d\n",
                          g_atomic_int_get (&self->active));

  /* the upstream client's pools are per thread, not per server */
  g_string_append_printf (out, "# HELP symfonic_upstream_connections_opened_total Connections opened to upstreams\n"
                          "# TYPE symfonic_upstream_connections_opened_total counter\n"
                          "symfonic_upstream_connections_opened_total %" G_GUINT64_FORMAT "\n"
                          "# HELP symfonic_upstream_requests_total Requests sent to upstreams\n"
                          "# TYPE symfonic_upstream_requests_total counter\n"
                          "symfonic_upstream_requests_total %" G_GUINT64_FORMAT "\n",
                          symfonic_upstream_count_connections_opened (),
                          symfonic_upstream_count_requests ());
  g_string_append_printf (out, "# HELP symfonic_upstream_connections_open Connections to upstreams open now\n"
                          "# TYPE symfonic_upstream_connections_open gauge\n"
                          "symfonic_upstream_connections_open %" G_GUINT64_FORMAT "\n"
                          "# HELP symfonic_upstream_connections_reused_total Requests sent to upstreams over a "
                          "connection kept from an earlier one\n"
                          "# TYPE symfonic_upstream_connections_reused_total counter\n"
                          "symfonic_upstream_connections_reused_total %" G_GUINT64_FORMAT "\n",
                          symfonic_upstream_count_connections_open (),
                          symfonic_upstream_count_requests_reused ());
  g_string_append_printf (out, "# HELP symfonic_filter_held_bytes Bytes of answer text the text filters hold "
                          "back right now, over all streams\n"
                          "# TYPE symfonic_filter_held_bytes gauge\n"
                          "symfonic_filter_held_bytes %" G_GINT64_FORMAT "\n",
                          MAX (symfonic_telemetry_gauge_get (SYMFONIC_GAUGE_FILTER_HELD_BYTES), 0));
  /* the HTTP sources' recordings share one writer in the process */
  g_string_append_printf (out, "# HELP symfonic_recordings_written_total Runs recorded into a source's record folder\n"
                          "# TYPE symfonic_recordings_written_total counter\n"
                          "symfonic_recordings_written_total %" G_GUINT64_FORMAT "\n"
                          "# HELP symfonic_recordings_dropped_total Runs left unrecorded: the recorder's queue was full "
                          "or the file could not be written\n"
                          "# TYPE symfonic_recordings_dropped_total counter\n"
                          "symfonic_recordings_dropped_total %" G_GUINT64_FORMAT "\n",
                          symfonic_recorder_count_written (),
                          symfonic_recorder_count_dropped ());

  g_string_append (out, "# HELP symfonic_responses_total Responses by route and HTTP status\n"
                        "# TYPE symfonic_responses_total counter\n");
  g_mutex_lock (&self->lock);
  g_hash_table_iter_init (&iter, self->responses);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      const char *nl = strchr (key, '\n');

      g_string_append (out, "symfonic_responses_total{route=\"");
      append_label_value (out, key, nl - (const char *) key);
      g_string_append_printf (out, "\",status=\"%s\"} %" G_GUINT64_FORMAT "\n",
                              nl + 1, *(guint64 *) value);
    }
  g_mutex_unlock (&self->lock);

  render_refusals (out, pipeline);
  render_stores (out, pipeline);
  render_routes (out, pipeline);
  render_tenants (self, out);

  return g_string_free (out, FALSE);
}

/* --- serving /metrics ---------------------------------------------------------- */

void
symfonic_metrics_set_access (SymfonicMetrics *self,
                             const char      *token,
                             gboolean         apart)
{
  g_free (self->token);
  self->token = g_strdup (token);
  self->apart = apart;
}

void
symfonic_metrics_set_pipeline (SymfonicMetrics  *self,
                               SymfonicPipeline *pipeline)
{
  g_mutex_lock (&self->pipeline_lock);
  g_set_object (&self->pipeline, pipeline);
  g_mutex_unlock (&self->pipeline_lock);
}

void
symfonic_metrics_set_tracer (SymfonicMetrics *self,
                             gpointer         tracer)
{
  self->tracer = tracer;
}

gpointer
symfonic_metrics_get_tracer (SymfonicMetrics *self)
{
  return self->tracer;
}

/* The same time whatever the guess: a token is compared whole. */
static gboolean
token_matches (const char *expected,
               const char *header)
{
  gsize length = strlen (expected);
  guint8 diff = 0;

  if (header == NULL || g_ascii_strncasecmp (header, "Bearer ", 7) != 0)
    return FALSE;
  header += 7;
  if (strlen (header) != length)
    return FALSE;
  for (gsize i = 0; i < length; i++)
    diff |= expected[i] ^ header[i];

  return diff == 0;
}

static void
respond_refusal (SoupServerMessage *message,
                 guint              status,
                 const char        *code,
                 const char        *detail)
{
  g_autofree char *body = g_strdup_printf ("{\"detail\":\"%s\",\"status\":%u,\"code\":\"%s\"}", detail, status, code);

  if (status == SOUP_STATUS_UNAUTHORIZED)
    soup_message_headers_replace (soup_server_message_get_response_headers (message), "WWW-Authenticate", "Bearer");
  soup_server_message_set_status (message, status, NULL);
  soup_server_message_set_response (message, "application/json", SOUP_MEMORY_COPY, body, strlen (body));
}

/* Whether @message may have the metrics; answers it when not. */
static gboolean
check_token (SymfonicMetrics   *self,
             SoupServerMessage *message)
{
  const char *header;

  if (self->token == NULL)
    return TRUE;
  header = soup_message_headers_get_one (soup_server_message_get_request_headers (message), "Authorization");
  if (token_matches (self->token, header))
    return TRUE;
  respond_refusal (message, SOUP_STATUS_UNAUTHORIZED, "unauthorized", "A scrape of /metrics needs its bearer token");

  return FALSE;
}

static void
set_text (SoupServerMessage *message,
          char              *text)
{
  soup_server_message_set_status (message, SOUP_STATUS_OK, NULL);
  soup_server_message_set_response (message, "text/plain; version=0.0.4; charset=utf-8", SOUP_MEMORY_TAKE, text,
                                    strlen (text));
}

typedef struct
{
  SymfonicMetrics  *metrics;
  SymfonicPipeline *pipeline;
} Scrape;

static void
scrape_free (gpointer data)
{
  Scrape *scrape = data;

  g_object_unref (scrape->pipeline);
  g_free (scrape);
}

static void
render_in_thread (GTask        *task,
                  gpointer      source_object,
                  gpointer      task_data,
                  GCancellable *cancellable)
{
  Scrape *scrape = task_data;

  g_task_return_pointer (task, symfonic_metrics_render (scrape->metrics, scrape->pipeline), g_free);
}

/* back on the worker */
static void
rendered (GObject      *object,
          GAsyncResult *result,
          gpointer      data)
{
  g_autoptr(SoupServerMessage) message = data;
  char *text = g_task_propagate_pointer (G_TASK (result), NULL);

  set_text (message, text);
  soup_server_message_unpause (message);
}

void
symfonic_metrics_respond (SymfonicMetrics   *self,
                          SymfonicPipeline  *pipeline,
                          SoupServerMessage *message)
{
  g_autoptr(GTask) task = NULL;
  Scrape *scrape;

  if (self->apart)
    {
      respond_refusal (message, SOUP_STATUS_NOT_FOUND, "not_found",
                       "The metrics are served on the metrics-listen address");
      return;
    }
  if (!check_token (self, message))
    return;

  scrape = g_new0 (Scrape, 1);
  scrape->metrics = self;
  scrape->pipeline = g_object_ref (pipeline);
  task = g_task_new (NULL, NULL, rendered, g_object_ref (message));
  g_task_set_task_data (task, scrape, scrape_free);
  g_task_set_source_tag (task, symfonic_metrics_respond);
  soup_server_message_pause (message);
  g_task_run_in_thread (task, render_in_thread);
}

struct _SymfonicMetricsListener
{
  SymfonicMetrics *metrics;
  GSocket         *socket;
  GMainContext    *context;
  GMainLoop       *loop;
  GThread         *thread;
  GMutex           lock;
  GCond            cond;
  gboolean         ready;
  GError          *error;
};

static void
handle_scrape (SoupServer        *server,
               SoupServerMessage *message,
               const char        *path,
               GHashTable        *query,
               gpointer           user_data)
{
  SymfonicMetricsListener *self = user_data;
  const char *method = soup_server_message_get_method (message);
  g_autoptr(SymfonicPipeline) pipeline = NULL;

  /* libsoup 3.2 keeps the descriptor of a kept-alive connection that its
   * client closes: a scraper's connection closes with each answer */
  soup_message_headers_replace (soup_server_message_get_response_headers (message), "Connection", "close");
  if (!g_str_equal (path, "/metrics") && !g_str_equal (path, "/healthz"))
    {
      respond_refusal (message, SOUP_STATUS_NOT_FOUND, "not_found", "This address serves /metrics only");
      return;
    }
  if (method != SOUP_METHOD_GET && method != SOUP_METHOD_HEAD)
    {
      soup_message_headers_replace (soup_server_message_get_response_headers (message), "Allow", "GET, HEAD");
      respond_refusal (message, SOUP_STATUS_METHOD_NOT_ALLOWED, "method_not_allowed", "Use GET");
      return;
    }
  if (g_str_equal (path, "/healthz"))
    {
      soup_server_message_set_status (message, SOUP_STATUS_OK, NULL);
      soup_server_message_set_response (message, "application/json", SOUP_MEMORY_STATIC, "{\"status\":\"ok\"}", 15);
      return;
    }
  if (!check_token (self->metrics, message))
    return;

  g_mutex_lock (&self->metrics->pipeline_lock);
  pipeline = g_object_ref (self->metrics->pipeline);
  g_mutex_unlock (&self->metrics->pipeline_lock);
  set_text (message, symfonic_metrics_render (self->metrics, pipeline));
}

static gpointer
listener_thread (gpointer data)
{
  SymfonicMetricsListener *self = data;
  g_autoptr(SoupServer) server = NULL;
  GError *error = NULL;

  g_main_context_push_thread_default (self->context);
  server = soup_server_new ("server-header", "symfonic-gateway ", NULL);
  soup_server_add_handler (server, NULL, handle_scrape, self, NULL);
  soup_server_listen_socket (server, self->socket, 0, &error);

  g_mutex_lock (&self->lock);
  self->ready = TRUE;
  self->error = error;
  g_cond_signal (&self->cond);
  g_mutex_unlock (&self->lock);

  if (error == NULL)
    g_main_loop_run (self->loop);
  soup_server_disconnect (server);
  g_clear_object (&server);
  while (g_main_context_pending (self->context))
    g_main_context_iteration (self->context, FALSE);
  g_main_context_pop_thread_default (self->context);

  return NULL;
}

SymfonicMetricsListener *
symfonic_metrics_listener_new (SymfonicMetrics  *metrics,
                               GSocket          *socket,
                               GError          **error)
{
  SymfonicMetricsListener *self = g_new0 (SymfonicMetricsListener, 1);

  self->metrics = metrics;
  self->socket = g_object_ref (socket);
  self->context = g_main_context_new ();
  self->loop = g_main_loop_new (self->context, FALSE);
  g_mutex_init (&self->lock);
  g_cond_init (&self->cond);
  self->thread = g_thread_new ("metrics", listener_thread, self);

  g_mutex_lock (&self->lock);
  while (!self->ready)
    g_cond_wait (&self->cond, &self->lock);
  g_mutex_unlock (&self->lock);

  if (self->error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&self->error));
      symfonic_metrics_listener_free (self);
      return NULL;
    }

  return self;
}

static gboolean
quit_listener (gpointer data)
{
  g_main_loop_quit (data);
  return G_SOURCE_REMOVE;
}

void
symfonic_metrics_listener_free (SymfonicMetricsListener *self)
{
  g_main_context_invoke (self->context, quit_listener, self->loop);
  g_thread_join (self->thread);
  g_main_loop_unref (self->loop);
  g_main_context_unref (self->context);
  g_object_unref (self->socket);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->cond);
  g_free (self);
}
