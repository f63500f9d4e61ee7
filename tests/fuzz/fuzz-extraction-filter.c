/* fuzz-extraction-filter.c: the extraction filter never releases a block
 *
 * The input is a FuzzSplit: one answer, cut into deltas.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "fuzz-common.h"
#include "fuzz-text-filter.h"
#include "symfonic-extraction-filter.h"

/* the stage's default tags; a small limit so inputs reach it */
static gpointer
extraction_new (void)
{
  return symfonic_extraction_filter_new ("<memory_ops>", "</memory_ops>", 256);
}

const FuzzTextFilter fuzz_text_filter = {
  .new = extraction_new,
  .feed = (FuzzFilterFeedFunc) symfonic_extraction_filter_feed,
  .flush = (FuzzFilterFlushFunc) symfonic_extraction_filter_flush,
  .free = (GDestroyNotify) symfonic_extraction_filter_free,
  .no_memory_block = TRUE,
};
