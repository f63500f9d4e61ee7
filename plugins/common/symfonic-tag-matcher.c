/* symfonic-tag-matcher.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-tag-matcher.h"

/* Knuth–Morris–Pratt: the borders make each byte's match state follow
 * from the one before it, without looking back at the text. */
void
symfonic_tag_matcher_init (SymfonicTagMatcher *tag,
                           const char         *text)
{
  g_return_if_fail (tag != NULL);
  g_return_if_fail (text != NULL && *text != '\0');

  tag->text = g_strdup (text);
  tag->len = strlen (text);
  tag->border = g_new0 (gsize, tag->len);
  for (gsize i = 1, k = 0; i < tag->len; i++)
    {
      while (k > 0 && text[i] != text[k])
        k = tag->border[k - 1];
      if (text[i] == text[k])
        k++;
      tag->border[i] = k;
    }
}

void
symfonic_tag_matcher_clear (SymfonicTagMatcher *tag)
{
  g_return_if_fail (tag != NULL);

  g_clear_pointer (&tag->text, g_free);
  g_clear_pointer (&tag->border, g_free);
}
