/* symfonic-tag-matcher.h: finds a fixed tag in text that arrives a byte at
 * a time, and may be cut back to where the match stood earlier
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A tag and, for each of its prefixes, its longest proper border: what is
 * still matched when the next byte does not continue the match. */
typedef struct
{
  char  *text;
  gsize  len;
  gsize *border;
} SymfonicTagMatcher;

void symfonic_tag_matcher_init  (SymfonicTagMatcher *tag,
                                 const char         *text);
void symfonic_tag_matcher_clear (SymfonicTagMatcher *tag);

/* How much of @tag ends at @c, given that @matched (less than all of it)
 * ended just before. Inline: it runs for every byte of a stream. */
static inline gsize
symfonic_tag_matcher_advance (const SymfonicTagMatcher *tag,
                              gsize                     matched,
                              char                      c)
{
  while (matched > 0 && tag->text[matched] != c)
    matched = tag->border[matched - 1];

  return tag->text[matched] == c ? matched + 1 : 0;
}

G_END_DECLS
