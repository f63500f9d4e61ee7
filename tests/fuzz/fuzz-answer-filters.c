/* fuzz-answer-filters.c: extraction then citation, in a route's order,
 * release neither a block nor a tag: removing one must not make the other
 *
 * The input is a FuzzSplit: one answer, cut into deltas.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "fuzz-common.h"
#include "fuzz-text-filter.h"
#include "symfonic-citation-filter.h"
#include "symfonic-extraction-filter.h"

static const char * const kinds[] = { "semantic", "episodic", "procedural", NULL };

typedef struct
{
  SymfonicExtractionFilter *extraction;
  SymfonicCitationFilter   *citation;
  GString                  *between;
} Chain;

static gpointer
chain_new (void)
{
  Chain *chain = g_new0 (Chain, 1);

  chain->extraction = symfonic_extraction_filter_new ("<memory_ops>", "</memory_ops>", 256);
  chain->citation = symfonic_citation_filter_new (kinds, "<memory_ops>", "</memory_ops>");
  chain->between = g_string_new (NULL);

  return chain;
}

static void
chain_feed (gpointer    state,
            const char *text,
            gsize       length,
            GString    *out)
{
  Chain *chain = state;

  g_string_truncate (chain->between, 0);
  symfonic_extraction_filter_feed (chain->extraction, text, length, chain->between);
  symfonic_citation_filter_feed (chain->citation, chain->between->str, chain->between->len, out);
}

static void
chain_flush (gpointer  state,
             GString  *out)
{
  Chain *chain = state;

  g_string_truncate (chain->between, 0);
  symfonic_extraction_filter_flush (chain->extraction, chain->between);
  symfonic_citation_filter_feed (chain->citation, chain->between->str, chain->between->len, out);
  symfonic_citation_filter_flush (chain->citation, out);
}

static void
chain_free (gpointer state)
{
  Chain *chain = state;

  symfonic_extraction_filter_free (chain->extraction);
  symfonic_citation_filter_free (chain->citation);
  g_string_free (chain->between, TRUE);
  g_free (chain);
}

const FuzzTextFilter fuzz_text_filter = {
  .new = chain_new,
  .feed = chain_feed,
  .flush = chain_flush,
  .free = chain_free,
  .no_citation_tag = TRUE,
  .no_memory_block = TRUE,
};
