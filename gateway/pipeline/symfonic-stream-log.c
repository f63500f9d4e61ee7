/* symfonic-stream-log.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-invocation.h"
#include "symfonic-route.h"
#include "symfonic-stream-log-private.h"
#include "symfonic-stream-private.h"

/* The request's W3C trace id (32 lower-case hex digits) for
 * SYMFONIC_TRACE_ID, or NULL when the request is not traced: the second
 * field of its traceparent, `00-TRACEID-SPANID-FLAGS`. */
static const char *
stream_trace_id (SymfonicStream *stream,
                 char            buffer[33])
{
  const char *traceparent = symfonic_stream_get_traceparent (stream);

  if (traceparent == NULL || strlen (traceparent) < 3 + 32)
    return NULL;
  memcpy (buffer, traceparent + 3, 32);
  buffer[32] = '\0';

  return buffer;
}

void
symfonic_stream_describe (SymfonicStream     *stream,
                          SymfonicLogRequest *request)
{
  SymfonicInvocation *invocation = symfonic_stream_get_invocation (stream);
  SymfonicRoute *route = symfonic_stream_get_route (stream);

  request->route = route != NULL ? symfonic_route_get_name (route) : NULL;
  request->tenant = invocation != NULL ? symfonic_invocation_get_tenant_id (invocation) : NULL;
  request->run_id = invocation != NULL ? symfonic_invocation_get_run_id (invocation) : NULL;
  request->trace_id = stream_trace_id (stream, request->trace_id_buffer);
  request->duration_ms = (g_get_monotonic_time () - symfonic_stream_get_start_time (stream)) / 1000;
}

/**
 * symfonic_log_stream_full: (skip)
 * @log_domain: (nullable): the log domain, usually `G_LOG_DOMAIN`
 * @log_level: the line's level
 * @file: the caller's source file
 * @line: the caller's line in @file, as text
 * @func: the caller's function
 * @stream: (nullable): the request the line is about
 * @stage: (nullable): what speaks: a stage's type name, such as `"budget"`
 * @kind: (nullable): the kind of failure, for the limit on how often it is
 *   logged, or %NULL to log every line
 * @format: printf()-style format of the message
 * @...: arguments for @format
 *
 * Logs a structured line (g_log_structured()) about a request: besides
 * GLib's `MESSAGE`, `PRIORITY`, `GLIB_DOMAIN`, `CODE_FILE`, `CODE_LINE` and
 * `CODE_FUNC`, it carries @stream's `SYMFONIC_ROUTE`, `SYMFONIC_TENANT`,
 * `SYMFONIC_RUN_ID`, `SYMFONIC_TRACE_ID` (when the request has a trace) and
 * `SYMFONIC_DURATION_MS` (since the request arrived), and
 * `SYMFONIC_STAGE` = @stage and `SYMFONIC_KIND` = @kind when given.
 *
 * A failure that every request can meet (a store or an upstream that does
 * not answer) would write a line per request: give it a @kind. A kind is
 * logged at @log_level at most once every ten seconds, over the whole
 * process; the lines in between go out at debug level only (for a
 * debugging session, `G_MESSAGES_DEBUG`), and the next line of the kind
 * says how many there were (`SYMFONIC_SUPPRESSED`). Name a kind by what
 * failed and where, never by anything a request chose.
 *
 * The line goes to the writer the program installed: the journal, JSON
 * lines or text for `symfonic-gateway` (`--log-format`). Never put a
 * credential, a request's text or an upstream's body in the message.
 *
 * In C, use symfonic_log_stream(), which fills in the caller's domain and
 * place.
 */
void
symfonic_log_stream_full (const char     *log_domain,
                          GLogLevelFlags  log_level,
                          const char     *file,
                          const char     *line,
                          const char     *func,
                          SymfonicStream *stream,
                          const char     *stage,
                          const char     *kind,
                          const char     *format,
                          ...)
{
  SymfonicLogRequest request = SYMFONIC_LOG_REQUEST_INIT;
  va_list args;

  g_return_if_fail (stream == NULL || SYMFONIC_IS_STREAM (stream));
  g_return_if_fail (format != NULL);

  if (stream != NULL)
    symfonic_stream_describe (stream, &request);
  request.stage = stage;

  va_start (args, format);
  symfonic_log_request_valist (log_domain, log_level, file, line, func, &request, kind, format, args);
  va_end (args);
}

/**
 * symfonic_log_stream_message:
 * @log_domain: (nullable): the log domain
 * @log_level: the line's level
 * @stream: (nullable): the request the line is about
 * @stage: (nullable): what speaks: a stage's type name
 * @kind: (nullable): the kind of failure, for the limit on how often it is
 *   logged, or %NULL to log every line
 * @message: the message
 *
 * As symfonic_log_stream_full(), with the message whole and no place in
 * the code: for a stage written in Python or JavaScript.
 */
void
symfonic_log_stream_message (const char     *log_domain,
                             GLogLevelFlags  log_level,
                             SymfonicStream *stream,
                             const char     *stage,
                             const char     *kind,
                             const char     *message)
{
  g_return_if_fail (message != NULL);

  symfonic_log_stream_full (log_domain, log_level, NULL, NULL, NULL, stream, stage, kind, "%s", message);
}
