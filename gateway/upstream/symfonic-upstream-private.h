/* symfonic-upstream-private.h: the upstream client's counters
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

G_GNUC_INTERNAL
guint64 symfonic_upstream_count_connections_opened (void);
G_GNUC_INTERNAL
guint64 symfonic_upstream_count_requests           (void);

G_END_DECLS
