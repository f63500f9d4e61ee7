/* symfonic-metrics.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-metrics-private.h"
#include "symfonic-recorder-private.h"
#include "symfonic-redis-store-private.h"
#include "symfonic-route-private.h"
#include "symfonic-upstream-private.h"

/* Counters are plain atomics, bumped once per stream (frames are summed by
 * the connection and added when it closes), so the per-event path never
 * touches shared memory. Responses by route and status take a lock once
 * per request. */
struct _SymfonicMetrics
{
  guint64     counters[SYMFONIC_N_COUNTERS];
  gint        active;
  GMutex      lock;
  /* "route\nstatus" -> count */
  GHashTable *responses;
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
};

SymfonicMetrics *
symfonic_metrics_new (void)
{
  SymfonicMetrics *self = g_new0 (SymfonicMetrics, 1);

  g_mutex_init (&self->lock);
  self->responses = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);

  return self;
}

void
symfonic_metrics_free (SymfonicMetrics *self)
{
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

/* Label values escape backslash and quote; a group name has no newline. */
static void
append_label_value (GString    *out,
                    const char *value,
                    gsize       length)
{
  for (gsize i = 0; i < length; i++)
    {
      if (value[i] == '\\' || value[i] == '"')
        g_string_append_c (out, '\\');
      g_string_append_c (out, value[i]);
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
  gboolean any = FALSE;

  for (guint i = 0; names[i] != NULL; i++)
    {
      GObject *store = symfonic_pipeline_get_store (pipeline, names[i]);

      if (!SYMFONIC_IS_REDIS_STORE (store))
        continue;
      if (!any)
        symfonic_redis_store_render_help (out);
      any = TRUE;
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

  return g_string_free (out, FALSE);
}
