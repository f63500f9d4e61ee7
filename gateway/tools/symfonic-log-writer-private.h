/* symfonic-log-writer-private.h: where the gateway binary's log lines go
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The process's log writer is the program's to choose: the library only
 * logs. @format is `journal`, `json`, `text`, or NULL for the journal when
 * stderr is the journal's stream (under systemd) and text otherwise. */
gboolean symfonic_log_writer_install (const char  *format,
                                      GError     **error);

/* One line of JSON for @fields, as --log-format=json writes it, without
 * its newline: for tests. */
char    *symfonic_log_writer_format_json (GLogLevelFlags   log_level,
                                          const GLogField *fields,
                                          gsize            n_fields,
                                          gint64           real_time_us);

G_END_DECLS
