/* symfonic-usage.h: the token counts an upstream reports
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

G_BEGIN_DECLS

/* An upstream's token counts, each -1 where it did not give one. */
typedef struct
{
  gint64 input;
  gint64 output;
} SymfonicUsageCounts;

gboolean symfonic_usage_read_count  (JsonObject          *object,
                                     const char          *name,
                                     guint64             *count);
void     symfonic_usage_read_counts (JsonObject          *usage,
                                     SymfonicUsageCounts *counts);

G_END_DECLS
