/* fuzz-text-filter.h: the entry point of the text filter targets, which
 * run a filter the way its stage does
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef gpointer (*FuzzFilterNewFunc)   (void);
typedef void     (*FuzzFilterFeedFunc)  (gpointer     filter,
                                         const char  *text,
                                         gsize        length,
                                         GString     *out);
typedef void     (*FuzzFilterFlushFunc) (gpointer     filter,
                                         GString     *out);

typedef struct
{
  FuzzFilterNewFunc   new;
  FuzzFilterFeedFunc  feed;
  FuzzFilterFlushFunc flush;
  GDestroyNotify      free;
  /* what the filtered text must never hold */
  gboolean            no_citation_tag;
  gboolean            no_memory_block;
} FuzzTextFilter;

/* Each filter target defines it; fuzz-text-filter.c runs it on every input. */
extern const FuzzTextFilter fuzz_text_filter;

G_END_DECLS
