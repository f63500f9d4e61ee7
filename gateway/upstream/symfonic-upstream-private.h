/* symfonic-upstream-private.h: the upstream client's counters
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-upstream.h"

G_BEGIN_DECLS

G_GNUC_INTERNAL
void    symfonic_upstream_request_set_deadline_at  (SymfonicUpstreamRequest *request,
                                                    gint64                   deadline);

G_GNUC_INTERNAL
guint64 symfonic_upstream_count_connections_opened (void);
G_GNUC_INTERNAL
guint64 symfonic_upstream_count_requests           (void);

G_END_DECLS
