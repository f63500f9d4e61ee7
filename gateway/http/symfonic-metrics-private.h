/* symfonic-metrics-private.h: the counters behind GET /metrics
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

#include "symfonic-pipeline.h"

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

G_END_DECLS
