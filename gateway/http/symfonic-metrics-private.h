/* symfonic-metrics-private.h: the counters behind GET /metrics
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>
#include <libsoup/soup.h>

#include "symfonic-pipeline.h"
#include "symfonic-stream.h"
#include "symfonic-telemetry-private.h"

G_BEGIN_DECLS

typedef struct _SymfonicMetrics SymfonicMetrics;

typedef enum {
  SYMFONIC_COUNTER_STREAMS_STARTED,
  SYMFONIC_COUNTER_STREAMS_COMPLETED,
  SYMFONIC_COUNTER_STREAMS_FAILED,
  SYMFONIC_COUNTER_STREAMS_CANCELLED,
  SYMFONIC_COUNTER_STREAMS_SLOW_CLIENT,
  SYMFONIC_COUNTER_FRAMES_WRITTEN,
  SYMFONIC_COUNTER_FRAMES_SHED,
  SYMFONIC_COUNTER_EVENTS_DROPPED,
  SYMFONIC_COUNTER_BYTES_WRITTEN,
  SYMFONIC_COUNTER_SPANS_EXPORTED,
  SYMFONIC_COUNTER_SPANS_DROPPED,
  SYMFONIC_COUNTER_EXPORTS_FAILED,
  SYMFONIC_N_COUNTERS
} SymfonicCounter;

G_GNUC_INTERNAL
SymfonicMetrics *symfonic_metrics_new            (void);
G_GNUC_INTERNAL
void             symfonic_metrics_free           (SymfonicMetrics *self);
G_GNUC_INTERNAL
void             symfonic_metrics_add            (SymfonicMetrics *self,
                                                  SymfonicCounter  counter,
                                                  guint64          amount);
G_GNUC_INTERNAL
guint64          symfonic_metrics_get            (SymfonicMetrics *self,
                                                  SymfonicCounter  counter);
G_GNUC_INTERNAL
void             symfonic_metrics_stream_opened  (SymfonicMetrics *self);
G_GNUC_INTERNAL
void             symfonic_metrics_stream_closed  (SymfonicMetrics *self);
G_GNUC_INTERNAL
void             symfonic_metrics_count_response (SymfonicMetrics *self,
                                                  const char      *route,
                                                  guint            status);
G_GNUC_INTERNAL
char            *symfonic_metrics_render         (SymfonicMetrics  *self,
                                                  SymfonicPipeline *pipeline);
/* Per-tenant token counts: off, or for at most @max_tenants tenants, the
 * rest counted as `other`. Set while no worker runs. */
G_GNUC_INTERNAL
void             symfonic_metrics_set_tenants    (SymfonicMetrics  *self,
                                                  gboolean          enabled,
                                                  guint             max_tenants);
/* A stream that started is over (@end_us, g_get_monotonic_time()): its
 * GenAI figures, for failed and cut streams too. On the stream's thread. */
G_GNUC_INTERNAL
void             symfonic_metrics_record_stream  (SymfonicMetrics       *self,
                                                  SymfonicStream        *stream,
                                                  SymfonicStreamOutcome  outcome,
                                                  gint64                 end_us);
/* How /metrics is served: @token (or NULL) is the bearer token a scrape
 * must send; @apart, whether a listener of its own serves it (the main
 * address then does not). Set while no worker runs. */
G_GNUC_INTERNAL
void             symfonic_metrics_set_access     (SymfonicMetrics  *self,
                                                  const char       *token,
                                                  gboolean          apart);
/* The pipeline a scrape off the workers reports on, changed at a reload. */
G_GNUC_INTERNAL
void             symfonic_metrics_set_pipeline   (SymfonicMetrics  *self,
                                                  SymfonicPipeline *pipeline);
/* The exporter of the spans, or NULL; set while no worker runs. */
G_GNUC_INTERNAL
void             symfonic_metrics_set_tracer     (SymfonicMetrics  *self,
                                                  gpointer          tracer);
G_GNUC_INTERNAL
gpointer         symfonic_metrics_get_tracer     (SymfonicMetrics  *self);
/* Answers `GET /metrics` on a worker's main address: refused when served
 * apart or without the token, else rendered on another thread while the
 * message waits, paused, so that the worker goes on. */
G_GNUC_INTERNAL
void             symfonic_metrics_respond        (SymfonicMetrics   *self,
                                                  SymfonicPipeline  *pipeline,
                                                  SoupServerMessage *message);
/* The listener of its own, on @socket (listening), on a thread of its own. */
typedef struct _SymfonicMetricsListener SymfonicMetricsListener;
G_GNUC_INTERNAL
SymfonicMetricsListener *symfonic_metrics_listener_new  (SymfonicMetrics  *metrics,
                                                         GSocket          *socket,
                                                         GError          **error);
G_GNUC_INTERNAL
void                     symfonic_metrics_listener_free (SymfonicMetricsListener *self);

G_END_DECLS
