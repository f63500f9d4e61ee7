/* symfonic-stream-log-private.h: a request's fields, for the library's
 * own log lines
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-log-private.h"
#include "symfonic-stream.h"
#include "symfonic-stream-log.h"

G_BEGIN_DECLS

/* Fills @request with @stream's route, tenant, run id, trace id and the
 * time since it was admitted; borrowed from @stream, which outlives the
 * line. Leaves stage, outcome and status as they were. */
G_GNUC_INTERNAL
void symfonic_stream_describe (SymfonicStream     *stream,
                               SymfonicLogRequest *request);

G_END_DECLS
