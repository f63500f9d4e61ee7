/* fuzz-text-filter.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "fuzz-common.h"
#include "fuzz-text-filter.h"

static GString *
filter_pieces (const FuzzTextFilter *filter,
               FuzzSplit            *split)
{
  gpointer state = filter->new ();
  GString *out = g_string_new (NULL);
  const guint8 *piece;
  gsize length;

  while (fuzz_split_next (split, &piece, &length))
    filter->feed (state, (const char *) piece, length, out);
  filter->flush (state, out);
  filter->free (state);

  return out;
}

/* Filters the payload in the input's pieces and again in one piece, and
 * aborts unless both give the same text: the filters promise an output
 * that does not depend on where the upstream cut its deltas. */
static GString *
filter_both_ways (const FuzzTextFilter *filter,
                  const guint8         *data,
                  gsize                 size)
{
  g_autoptr(GString) whole = NULL;
  GString *pieces;
  FuzzSplit split;

  fuzz_split_init (&split, data, size);
  pieces = filter_pieces (filter, &split);

  fuzz_split_init (&split, data, size);
  split.n_lengths = 0;
  whole = filter_pieces (filter, &split);

  if (!g_string_equal (pieces, whole))
    g_error ("The output depends on the split: %" G_GSIZE_FORMAT " bytes in pieces, "
             "%" G_GSIZE_FORMAT " in one", pieces->len, whole->len);

  return pieces;
}

/* Compiled on first use and kept: the check runs once per input. */
static void
assert_no_match (GRegex            **regex,
                 const char         *pattern,
                 GRegexCompileFlags  flags,
                 const GString      *text,
                 const char         *what)
{
  g_autoptr(GMatchInfo) match = NULL;

  /* raw: the filters take bytes, not necessarily UTF-8 */
  if (*regex == NULL)
    *regex = g_regex_new (pattern, G_REGEX_RAW | G_REGEX_OPTIMIZE | flags, 0, NULL);
  g_assert (*regex != NULL);

  if (g_regex_match_full (*regex, text->str, text->len, 0, 0, &match, NULL))
    {
      g_autofree char *found = g_match_info_fetch (match, 0);
      g_autofree char *escaped = g_strescape (found, NULL);

      g_error ("The filtered text holds %s: %s", what, escaped);
    }
}

/* A tag of the citation stage's default kinds, which match in any case. */
static void
assert_no_citation_tag (const GString *text)
{
  static GRegex *tag;

  assert_no_match (&tag, "\\[(semantic|episodic|procedural)(:[A-Za-z0-9_.-]{1,64})?\\]",
                   G_REGEX_CASELESS, text, "a citation tag");
}

/* The extraction stage's default open tag: whatever follows it is a
 * block's content, released or not. */
static void
assert_no_memory_block (const GString *text)
{
  static GRegex *open_tag;

  assert_no_match (&open_tag, "<memory_ops>", 0, text, "a memory block");
}

int
LLVMFuzzerTestOneInput (const guint8 *data,
                        size_t        size)
{
  g_autoptr(GString) out = filter_both_ways (&fuzz_text_filter, data, size);

  if (fuzz_text_filter.no_memory_block)
    assert_no_memory_block (out);
  if (fuzz_text_filter.no_citation_tag)
    assert_no_citation_tag (out);

  return 0;
}
