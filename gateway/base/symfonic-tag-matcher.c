/* symfonic-tag-matcher.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-tag-matcher.h"

/**
 * symfonic_tag_matcher_init: (skip)
 * @self: a #SymfonicTagMatcher to set up
 * @tag: the tag to look for, not empty
 *
 * Prepares @self to find @tag. Clear it with symfonic_tag_matcher_clear().
 */
void
symfonic_tag_matcher_init (SymfonicTagMatcher *self,
                           const char         *tag)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (tag != NULL && *tag != '\0');

  /* Knuth–Morris–Pratt: the borders make each byte's match state follow
   * from the one before it, without looking back at the text. */
  self->text = g_strdup (tag);
  self->len = strlen (tag);
  self->border = g_new0 (gsize, self->len);
  for (gsize i = 1, k = 0; i < self->len; i++)
    {
      while (k > 0 && tag[i] != tag[k])
        k = self->border[k - 1];
      if (tag[i] == tag[k])
        k++;
      self->border[i] = k;
    }
}

/**
 * symfonic_tag_matcher_clear: (skip)
 * @self: a #SymfonicTagMatcher
 *
 * Frees what symfonic_tag_matcher_init() allocated. Clearing a matcher
 * twice, or one that is all zeroes, does nothing.
 */
void
symfonic_tag_matcher_clear (SymfonicTagMatcher *self)
{
  g_return_if_fail (self != NULL);

  g_clear_pointer (&self->text, g_free);
  g_clear_pointer (&self->border, g_free);
  self->len = 0;
}
