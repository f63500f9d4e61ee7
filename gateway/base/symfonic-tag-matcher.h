/* symfonic-tag-matcher.h: finds a fixed tag in text that arrives a byte at
 * a time, and may be cut back to where the match stood earlier
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <glib.h>

G_BEGIN_DECLS

/**
 * SymfonicTagMatcher: (skip)
 * @text: the tag, NUL-terminated
 * @len: its length in bytes, never 0
 * @border: for each prefix of @text (`border[i]` for the first `i + 1`
 *   bytes), the length of its longest proper prefix that is also its suffix
 *
 * A fixed tag prepared for matching a byte at a time (Knuth–Morris–Pratt),
 * for a text filter that looks for tags in deltas split anywhere.
 *
 * The state of a match is one number, how many bytes of the tag end at
 * the byte seen last: it follows from the state before and the next byte
 * alone (symfonic_tag_matcher_advance()), so a filter keeps it across
 * deltas without keeping their text, and keeps one per position it may
 * cut its output back to. A matcher never changes once initialised: the
 * filters of every stream may share one. Embed it in a structure and set
 * it up with symfonic_tag_matcher_init(); the fields are read-only.
 *
 * ```c
 * g_auto(SymfonicTagMatcher) tag = { 0 };
 * gsize matched = 0;
 *
 * symfonic_tag_matcher_init (&tag, "</memory_ops>");
 * for (const char *p = text; *p != '\0'; p++)
 *   {
 *     matched = symfonic_tag_matcher_advance (&tag, matched, *p);
 *     if (matched == tag.len)
 *       {
 *         g_print ("a tag ends at byte %td\n", p - text);
 *         matched = 0;
 *       }
 *   }
 * ```
 *
 * It is a plain C structure with an inline function, not introspectable:
 * a Python or JavaScript filter has its language's own string search.
 */
typedef struct
{
  char  *text;
  gsize  len;
  gsize *border;
} SymfonicTagMatcher;

void symfonic_tag_matcher_init  (SymfonicTagMatcher *self,
                                 const char         *tag);
void symfonic_tag_matcher_clear (SymfonicTagMatcher *self);

/**
 * symfonic_tag_matcher_advance: (skip)
 * @self: an initialised #SymfonicTagMatcher
 * @matched: how many bytes of the tag ended at the byte before @c, less
 *   than all of it (0 at the start of a text)
 * @c: the next byte of the text
 *
 * How much of the tag ends at @c. Inline: it runs for every byte of a
 * stream's text. When it returns @self's `len`, the whole tag ends at @c;
 * continue from 0 after it (or from `border[len - 1]` to find tags that
 * overlap).
 *
 * Returns: the number of bytes of the tag that end at @c
 */
static inline gsize
symfonic_tag_matcher_advance (const SymfonicTagMatcher *self,
                              gsize                     matched,
                              char                      c)
{
  while (matched > 0 && self->text[matched] != c)
    matched = self->border[matched - 1];

  return self->text[matched] == c ? matched + 1 : 0;
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SymfonicTagMatcher, symfonic_tag_matcher_clear)

G_END_DECLS
