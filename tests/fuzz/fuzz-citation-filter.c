/* fuzz-citation-filter.c: the citation filter never releases a tag, nor
 * a memory block (it comes last, so it drops every one it meets)
 *
 * The input is a FuzzSplit: one answer, cut into deltas.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "fuzz-common.h"
#include "fuzz-text-filter.h"
#include "symfonic-citation-filter.h"

/* the stage's defaults */
static const char * const kinds[] = { "semantic", "episodic", "procedural", NULL };

static gpointer
citation_new (void)
{
  return symfonic_citation_filter_new (kinds, "<memory_ops>", "</memory_ops>");
}

const FuzzTextFilter fuzz_text_filter = {
  .new = citation_new,
  .feed = (FuzzFilterFeedFunc) symfonic_citation_filter_feed,
  .flush = (FuzzFilterFlushFunc) symfonic_citation_filter_flush,
  .free = (GDestroyNotify) symfonic_citation_filter_free,
  .no_citation_tag = TRUE,
  .no_memory_block = TRUE,
};
