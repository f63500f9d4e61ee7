/* symfonic-stream-log.h: log lines about one request, with its fields
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <glib.h>

#include "symfonic-types.h"

G_BEGIN_DECLS

void symfonic_log_stream_full    (const char     *log_domain,
                                  GLogLevelFlags  log_level,
                                  const char     *file,
                                  const char     *line,
                                  const char     *func,
                                  SymfonicStream *stream,
                                  const char     *stage,
                                  const char     *kind,
                                  const char     *format,
                                  ...) G_GNUC_PRINTF (9, 10);
void symfonic_log_stream_message (const char     *log_domain,
                                  GLogLevelFlags  log_level,
                                  SymfonicStream *stream,
                                  const char     *stage,
                                  const char     *kind,
                                  const char     *message);

/**
 * symfonic_log_stream:
 * @log_level: the line's level
 * @stream: (nullable): the request the line is about
 * @stage: (nullable): what speaks: a stage's type name, such as `"budget"`
 * @kind: (nullable): the kind of failure, for the limit on how often it is
 *   logged, or %NULL to log every line
 * @...: a printf()-style format and its arguments
 *
 * Logs a structured line about @stream in the caller's `G_LOG_DOMAIN`,
 * with the request's fields and the caller's file, line and function: see
 * symfonic_log_stream_full().
 */
#define symfonic_log_stream(log_level, stream, stage, kind, ...) \
  symfonic_log_stream_full (G_LOG_DOMAIN, (log_level), __FILE__, G_STRINGIFY (__LINE__), G_STRFUNC, \
                            (stream), (stage), (kind), __VA_ARGS__)

G_END_DECLS
