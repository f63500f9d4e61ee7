/* symfonic-tracer-private.h: spans of requests, exported over OTLP/HTTP
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

#include "symfonic-metrics-private.h"

G_BEGIN_DECLS

typedef struct _SymfonicTracer SymfonicTracer;

/* One request's trace context, made only for a sampled request: ids are
 * raw bytes, written as hex. */
typedef struct
{
  guint8  trace_id[16];
  guint8  span_id[8];
  guint8  parent_id[8];
  gboolean has_parent;
  /* the span of the upstream call, which the upstream's traceparent names */
  guint8  upstream_id[8];
  /* g_get_real_time() - g_get_monotonic_time() when the request came */
  gint64  clock_offset_us;
  gint64  start_us;
} SymfonicTraceContext;

/* One request's spans, written as OTLP JSON span objects separated by
 * commas, made on the request's thread when it is over. */
typedef struct
{
  guint    n_spans;
  GString *json;
  /* attributes written into the span being written */
  guint    n_attrs;
} SymfonicTraceRecord;

G_GNUC_INTERNAL
SymfonicTracer *symfonic_tracer_new          (const char       *endpoint,
                                              const char       *service_name,
                                              double            ratio,
                                              SymfonicMetrics  *metrics,
                                              GError          **error);
G_GNUC_INTERNAL
void            symfonic_tracer_free         (SymfonicTracer   *self);
/* Decides once whether a request is traced, from the client's
 * traceparent (or NULL): a new context, or NULL when it is not. Fills
 * @forward with what the upstream is sent, also for a request not traced
 * (the client's own traceparent, passed on), or "" for none. @self may be
 * NULL: nothing is traced. */
G_GNUC_INTERNAL
SymfonicTraceContext *symfonic_tracer_start  (SymfonicTracer   *self,
                                              const char       *traceparent,
                                              char              forward[56]);
/* Hands a request's spans to the exporter: never blocks; when its queue
 * is full the spans are dropped and counted. Takes @record. */
G_GNUC_INTERNAL
void            symfonic_tracer_submit       (SymfonicTracer      *self,
                                              SymfonicTraceRecord *record);
G_GNUC_INTERNAL
void            symfonic_trace_record_free   (SymfonicTraceRecord *record);

/* Writing spans: a span object of @record, its attributes between
 * symfonic_trace_span_begin() and symfonic_trace_span_end(). */
G_GNUC_INTERNAL
void symfonic_trace_span_begin (SymfonicTraceRecord        *record,
                                const SymfonicTraceContext *context,
                                const guint8               *span_id,
                                const guint8               *parent_id,
                                const char                 *name,
                                guint                       kind,
                                gint64                      start_us,
                                gint64                      end_us);
G_GNUC_INTERNAL
void symfonic_trace_attr_string (SymfonicTraceRecord *record,
                                 const char          *key,
                                 const char          *value);
G_GNUC_INTERNAL
void symfonic_trace_attr_int    (SymfonicTraceRecord *record,
                                 const char          *key,
                                 gint64               value);
G_GNUC_INTERNAL
void symfonic_trace_attr_double (SymfonicTraceRecord *record,
                                 const char          *key,
                                 double               value);
G_GNUC_INTERNAL
void symfonic_trace_attr_bool   (SymfonicTraceRecord *record,
                                 const char          *key,
                                 gboolean             value);
G_GNUC_INTERNAL
void symfonic_trace_attr_strings (SymfonicTraceRecord *record,
                                  const char          *key,
                                  const char * const  *values);
/* @error_message: NULL for a span that did not fail */
G_GNUC_INTERNAL
void symfonic_trace_span_end   (SymfonicTraceRecord *record,
                                const char          *error_message);
G_GNUC_INTERNAL
void symfonic_trace_new_span_id (guint8 id[8]);

/* OTLP span kinds */
#define SYMFONIC_SPAN_INTERNAL 1
#define SYMFONIC_SPAN_SERVER 2
#define SYMFONIC_SPAN_CLIENT 3

G_END_DECLS
