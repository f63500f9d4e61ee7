/* symfonic-usage-private.h: the token counts an upstream reports
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* An upstream's token counts, each -1 where it did not give one; invalid
 * when a count was there but was not a count. */
typedef struct
{
  gint64   input;
  gint64   output;
  gboolean invalid;
} SymfonicUsageCounts;

G_GNUC_INTERNAL
gboolean symfonic_usage_read_count  (JsonObject          *object,
                                     const char          *name,
                                     guint64             *count);
G_GNUC_INTERNAL
void     symfonic_usage_read_counts (JsonObject          *usage,
                                     SymfonicUsageCounts *counts);

G_END_DECLS
