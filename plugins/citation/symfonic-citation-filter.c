/* symfonic-citation-filter.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <symfonic.h>

#include "symfonic-citation-filter.h"

/* A tag is `[kind]` or `[kind:id]`: kind one of the configured words (ASCII,
 * any case), id 1 to 64 of [A-Za-z0-9_.-]. It goes together with at most one
 * ASCII space right before it, so "blue [semantic]." reads "blue.".
 *
 * The filter works on bytes and withholds only what is still undecided: a
 * trailing space (a tag may follow), an unfinished `[...` that could still
 * become a tag, and an incomplete UTF-8 sequence at the very end, so every
 * piece it releases is whole UTF-8 whatever the upstream's split. */

#define MAX_ID 64

struct _SymfonicCitationFilter
{
  GStrv    kinds;
  GString *pending;
  guint64  removed;
};

typedef enum {
  TAG_NO,
  TAG_PARTIAL,
  TAG_YES,
} TagMatch;

/**
 * symfonic_citation_filter_new:
 * @kinds: (array zero-terminated=1): the tag words, matched in any ASCII
 *   case; empty words are ignored
 *
 * Returns: (transfer full): a new filter, for one stream
 */
SymfonicCitationFilter *
symfonic_citation_filter_new (const char * const *kinds)
{
  SymfonicCitationFilter *self;

  g_return_val_if_fail (kinds != NULL, NULL);

  self = g_new0 (SymfonicCitationFilter, 1);
  self->kinds = g_strdupv ((char **) kinds);
  self->pending = g_string_new (NULL);

  return self;
}

void
symfonic_citation_filter_free (SymfonicCitationFilter *self)
{
  g_return_if_fail (self != NULL);

  g_strfreev (self->kinds);
  g_string_free (self->pending, TRUE);
  g_free (self);
}

static inline gboolean
is_id_char (char c)
{
  return g_ascii_isalnum (c) || c == '_' || c == '.' || c == '-';
}

/* Matches a tag at s[0] == '[' against what is available so far; on
 * TAG_YES sets *length. TAG_PARTIAL means the bytes so far could still
 * become a tag, so they must be withheld until more arrive. */
static TagMatch
match_tag (SymfonicCitationFilter *self,
           const char             *s,
           gsize                   available,
           gsize                  *length)
{
  gboolean any_prefix = FALSE;

  for (guint k = 0; self->kinds[k] != NULL; k++)
    {
      const char *kind = self->kinds[k];
      gsize kind_len = strlen (kind);
      gsize id_start, n;

      if (kind_len == 0)
        continue;

      if (available - 1 < kind_len)
        {
          if (g_ascii_strncasecmp (s + 1, kind, available - 1) == 0)
            any_prefix = TRUE;
          continue;
        }
      if (g_ascii_strncasecmp (s + 1, kind, kind_len) != 0)
        continue;

      if (1 + kind_len == available)
        {
          any_prefix = TRUE;
          continue;
        }
      if (s[1 + kind_len] == ']')
        {
          *length = kind_len + 2;
          return TAG_YES;
        }
      if (s[1 + kind_len] != ':')
        continue;

      /* at most MAX_ID id characters, then `]` */
      id_start = kind_len + 2;
      for (n = 0; id_start + n < available && n < MAX_ID && is_id_char (s[id_start + n]); n++)
        ;
      if (id_start + n == available)
        {
          any_prefix = TRUE;
          continue;
        }
      if (n > 0 && s[id_start + n] == ']')
        {
          *length = id_start + n + 1;
          return TAG_YES;
        }
    }

  return any_prefix ? TAG_PARTIAL : TAG_NO;
}

static void
process (SymfonicCitationFilter *self,
         GString                *out,
         gboolean                at_end)
{
  const char *s = self->pending->str;
  gsize len = self->pending->len - (at_end ? 0 : symfonic_utf8_unfinished_suffix (s, self->pending->len));
  gsize keep_from = len;
  gsize i = 0;

  while (i < len)
    {
      const char *bracket = memchr (s + i, '[', len - i);
      gsize tag_len = 0;
      gsize text_end;
      TagMatch match;
      gsize j;

      if (bracket == NULL)
        {
          /* a final space may still turn out to precede a tag */
          keep_from = (!at_end && s[len - 1] == ' ') ? len - 1 : len;
          g_string_append_len (out, s + i, keep_from - i);
          break;
        }

      j = bracket - s;
      match = match_tag (self, s + j, len - j, &tag_len);
      if (match == TAG_PARTIAL && at_end)
        match = TAG_NO;

      if (match == TAG_NO)
        {
          g_string_append_len (out, s + i, j + 1 - i);
          i = j + 1;
          continue;
        }

      text_end = (j > i && s[j - 1] == ' ') ? j - 1 : j;
      g_string_append_len (out, s + i, text_end - i);
      if (match == TAG_PARTIAL)
        {
          keep_from = text_end;
          break;
        }

      self->removed++;
      i = j + tag_len;
    }

  /* bytes past len (an unfinished character) stay pending too */
  g_string_erase (self->pending, 0, keep_from);
}

/**
 * symfonic_citation_filter_feed:
 * @self: a filter
 * @text: the next piece of text
 * @length: its length in bytes
 * @out: where the text known to be free of tags is appended
 *
 * Feeds one delta. Appends to @out only whole UTF-8 characters (given
 * valid input) that can no longer be part of a tag or the space before one.
 */
void
symfonic_citation_filter_feed (SymfonicCitationFilter *self,
                               const char             *text,
                               gsize                   length,
                               GString                *out)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (text != NULL || length == 0);
  g_return_if_fail (out != NULL);

  g_string_append_len (self->pending, text, length);
  process (self, out, FALSE);
}

/**
 * symfonic_citation_filter_flush:
 * @self: a filter
 * @out: where the withheld text is appended
 *
 * The text is over: what was withheld is not followed by a tag, so it is
 * released. The filter can be fed again afterwards.
 */
void
symfonic_citation_filter_flush (SymfonicCitationFilter *self,
                                GString                *out)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (out != NULL);

  process (self, out, TRUE);
  g_string_truncate (self->pending, 0);
}

/**
 * symfonic_citation_filter_get_removed:
 * @self: a filter
 *
 * Returns: how many tags this filter removed
 */
guint64
symfonic_citation_filter_get_removed (SymfonicCitationFilter *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->removed;
}
