/* symfonic-log-private.h: structured log lines about a request, and the
 * limit on how often one kind of failure is logged
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The fields a line about a request carries besides GLib's own (MESSAGE,
 * PRIORITY, GLIB_DOMAIN, CODE_FILE, CODE_LINE, CODE_FUNC). Their names are
 * public: operators query the journal and the JSON lines by them. */
#define SYMFONIC_LOG_FIELD_ROUTE       "SYMFONIC_ROUTE"
#define SYMFONIC_LOG_FIELD_TENANT      "SYMFONIC_TENANT"
#define SYMFONIC_LOG_FIELD_RUN_ID      "SYMFONIC_RUN_ID"
#define SYMFONIC_LOG_FIELD_TRACE_ID    "SYMFONIC_TRACE_ID"
#define SYMFONIC_LOG_FIELD_STAGE       "SYMFONIC_STAGE"
#define SYMFONIC_LOG_FIELD_OUTCOME     "SYMFONIC_OUTCOME"
#define SYMFONIC_LOG_FIELD_STATUS      "SYMFONIC_STATUS"
#define SYMFONIC_LOG_FIELD_DURATION_MS "SYMFONIC_DURATION_MS"
#define SYMFONIC_LOG_FIELD_KIND        "SYMFONIC_KIND"
#define SYMFONIC_LOG_FIELD_SUPPRESSED  "SYMFONIC_SUPPRESSED"

/* A kind of failure is logged at most once per interval: a failure that
 * every request meets (an upstream or a store down, a cap reached) is a
 * line every ten seconds, not thousands, and the next line says how many
 * were not logged. */
#define SYMFONIC_LOG_INTERVAL_US (10 * G_USEC_PER_SEC)

/* What a line knows of its request; every member may be NULL (or -1, 0)
 * and is then left out. Borrowed for the call only. */
typedef struct
{
  const char *route;
  const char *tenant;
  const char *run_id;
  const char *trace_id;
  /* what speaks: a stage's type ("budget"), or the gateway's part
   * ("source", "stream", "admission") */
  const char *stage;
  /* how the request ended, when the line says so: "completed",
   * "failed", "refused", "cancelled" */
  const char *outcome;
  /* the status its client got, when the line says so */
  guint       status;
  /* since the request was admitted, or -1 */
  gint64      duration_ms;
  /* where @trace_id is kept when it is read out of a traceparent */
  char        trace_id_buffer[33];
} SymfonicLogRequest;

#define SYMFONIC_LOG_REQUEST_INIT { NULL, NULL, NULL, NULL, NULL, NULL, 0, -1, { 0 } }

G_GNUC_INTERNAL
gboolean symfonic_log_limit_take         (const char               *kind,
                                          gint64                    now_us,
                                          guint64                  *suppressed,
                                          gint64                   *since_us);
G_GNUC_INTERNAL
void     symfonic_log_limit_flush        (void);
G_GNUC_INTERNAL
void     symfonic_log_limit_forget       (void);
G_GNUC_INTERNAL
char    *symfonic_log_error_kind         (const GError             *error);

G_GNUC_INTERNAL G_GNUC_PRINTF (8, 0)
void     symfonic_log_request_valist     (const char               *log_domain,
                                          GLogLevelFlags            log_level,
                                          const char               *file,
                                          const char               *line,
                                          const char               *func,
                                          const SymfonicLogRequest *request,
                                          const char               *kind,
                                          const char               *format,
                                          va_list                   args);
G_GNUC_INTERNAL G_GNUC_PRINTF (8, 9)
void     symfonic_log_request_full       (const char               *log_domain,
                                          GLogLevelFlags            log_level,
                                          const char               *file,
                                          const char               *line,
                                          const char               *func,
                                          const SymfonicLogRequest *request,
                                          const char               *kind,
                                          const char               *format,
                                          ...);

/* Logs a line with @request's fields, at @log_level, or, when @kind (if
 * not NULL) was logged less than SYMFONIC_LOG_INTERVAL_US ago, at debug
 * level only, counted for the next line of its kind. */
#define symfonic_log_request(log_level, request, kind, ...) \
  symfonic_log_request_full (G_LOG_DOMAIN, (log_level), __FILE__, G_STRINGIFY (__LINE__), G_STRFUNC, \
                             (request), (kind), __VA_ARGS__)

G_END_DECLS
