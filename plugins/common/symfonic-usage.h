/* symfonic-usage.h: the token counts an upstream reports
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

G_BEGIN_DECLS

/* An upstream's token counts, each -1 where it did not give one; invalid
 * when a count was there but was not a count. */
typedef struct
{
  gint64   input;
  gint64   output;
  gboolean invalid;
} SymfonicUsageCounts;

gboolean symfonic_usage_read_count  (JsonObject          *object,
                                     const char          *name,
                                     guint64             *count);
void     symfonic_usage_read_counts (JsonObject          *usage,
                                     SymfonicUsageCounts *counts);
GError  *symfonic_usage_failure     (SymfonicStream      *stream,
                                     const char          *display_url,
                                     const char          *why);
gboolean symfonic_usage_add         (SymfonicStream            *stream,
                                     const char                *display_url,
                                     const SymfonicUsageCounts *counts,
                                     GError                   **error);

G_END_DECLS
