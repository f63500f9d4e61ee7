/* symfonic-citation-filter.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <symfonic.h>

#include "symfonic-citation-filter.h"

/* A tag is `[kind]` or `[kind:id]`: kind one of the configured words (ASCII,
 * any case), id 1 to 64 of [A-Za-z0-9_.-]. It goes together with at most one
 * ASCII space right before it, so "blue [semantic]." reads "blue.".
 *
 * Removing a tag joins the text on either side, and that join may itself
 * be a tag: `[semantic:n [episodic]]` loses `[episodic]` and then reads
 * `[semantic:n]`. So removal is repeated until no tag is left, which a
 * stack does in one pass: the text not yet released is a stack of
 * unfinished tags, each `[` opening a level; a `]` that completes the top
 * level removes it, and the level below continues where it stopped.
 *
 * Since `[` is in no kind and no id, a tag always starts at the last `[`
 * before its `]`, and a level can only still become a tag if its text is a
 * tag's beginning, possibly followed by the one space a nested tag takes
 * with it. When the top level can no longer become a tag, none below it
 * can either (each needs the top removed first), so everything withheld is
 * released at once. What is withheld is thus exactly what could still
 * become a tag, plus a trailing space and an incomplete UTF-8 sequence, so
 * every piece released is whole UTF-8 whatever the upstream's split.
 *
 * A stream of nested unfinished tags (`[[[[`...) would be withheld without
 * end, so the depth is bounded: past MAX_LEVELS the oldest half of the
 * levels is dropped, never released, so no tag can be completed around it.
 * Each byte is looked at once; a level's state is kept, not recomputed. */

#define MAX_ID 64
#define MAX_LEVELS 64

typedef struct
{
  /* where the level's `[` is in withheld */
  gsize    start;
  /* the kinds (sorted) whose spelling still agrees with the word so far */
  guint    lo;
  guint    hi;
  /* bytes of the word, then of the id once the colon came */
  guint    matched;
  gboolean in_id;
  /* ends with the space a nested tag would take with it */
  gboolean spaced;
} Level;

struct _SymfonicCitationFilter
{
  /* lower case, sorted, so the kinds sharing a prefix are a range */
  GStrv    kinds;
  guint    n_kinds;

  /* input held back: an incomplete UTF-8 sequence */
  GString *input;
  /* the unfinished tags, or the one space that may precede a tag */
  GString *withheld;
  Level    levels[MAX_LEVELS];
  guint    depth;
  guint64  removed;
};

static int
compare_kinds (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

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
  guint n = 0;

  g_return_val_if_fail (kinds != NULL, NULL);

  self = g_new0 (SymfonicCitationFilter, 1);
  self->kinds = g_new0 (char *, g_strv_length ((char **) kinds) + 1);
  for (guint i = 0; kinds[i] != NULL; i++)
    {
      if (*kinds[i] != '\0')
        self->kinds[n++] = g_ascii_strdown (kinds[i], -1);
    }
  qsort (self->kinds, n, sizeof (char *), compare_kinds);
  self->n_kinds = n;
  self->input = g_string_new (NULL);
  self->withheld = g_string_new (NULL);

  return self;
}

void
symfonic_citation_filter_free (SymfonicCitationFilter *self)
{
  g_return_if_fail (self != NULL);

  g_strfreev (self->kinds);
  g_string_free (self->input, TRUE);
  g_string_free (self->withheld, TRUE);
  g_free (self);
}

static inline gboolean
is_id_char (char c)
{
  return g_ascii_isalnum (c) || c == '_' || c == '.' || c == '-';
}

static void
release_withheld (SymfonicCitationFilter *self,
                  GString                *out)
{
  g_string_append_len (out, self->withheld->str, self->withheld->len);
  g_string_truncate (self->withheld, 0);
  self->depth = 0;
}

static void
open_level (SymfonicCitationFilter *self)
{
  Level *level;

  if (self->depth == MAX_LEVELS)
    {
      /* keep the space the first kept level's tag would take with it */
      gsize cut = self->levels[MAX_LEVELS / 2].start;

      if (self->withheld->str[cut - 1] == ' ')
        cut--;
      g_debug ("Dropped %" G_GSIZE_FORMAT " bytes of nested unfinished citation tags", cut);
      g_string_erase (self->withheld, 0, cut);
      memmove (self->levels, self->levels + MAX_LEVELS / 2, (MAX_LEVELS / 2) * sizeof (Level));
      self->depth = MAX_LEVELS / 2;
      for (guint i = 0; i < self->depth; i++)
        self->levels[i].start -= cut;
    }

  level = &self->levels[self->depth++];
  *level = (Level) { .start = self->withheld->len, .lo = 0, .hi = self->n_kinds };
  g_string_append_c (self->withheld, '[');
}

/* The top level is a whole tag: remove it and the space before it. */
static void
close_level (SymfonicCitationFilter *self)
{
  gsize start = self->levels[--self->depth].start;

  if (start > 0 && self->withheld->str[start - 1] == ' ')
    start--;
  g_string_truncate (self->withheld, start);
  if (self->depth > 0)
    self->levels[self->depth - 1].spaced = FALSE;
  self->removed++;
}

/* Narrows the top level's kinds to those with @c after the word so far. */
static gboolean
extend_word (SymfonicCitationFilter *self,
             Level                  *level,
             char                    c)
{
  guchar lc = g_ascii_tolower (c);
  guint p = level->matched;
  guint hi;

  while (level->lo < level->hi &&
         (self->kinds[level->lo][p] == '\0' || (guchar) self->kinds[level->lo][p] < lc))
    level->lo++;
  for (hi = level->lo; hi < level->hi && (guchar) self->kinds[hi][p] == lc; hi++)
    ;
  level->hi = hi;
  level->matched++;

  return level->lo < level->hi;
}

/* Whether @c continues the top level as the beginning of a tag; closes the
 * level when @c completes it. */
static gboolean
push_in_level (SymfonicCitationFilter *self,
               char                    c)
{
  Level *level = &self->levels[self->depth - 1];
  gboolean word_is_kind;

  if (level->spaced)
    return FALSE;
  if (c == ' ')
    {
      level->spaced = TRUE;
      g_string_append_c (self->withheld, c);
      return TRUE;
    }

  /* the shortest kind in the range sorts first */
  word_is_kind = !level->in_id && level->matched > 0 && level->lo < level->hi &&
                 self->kinds[level->lo][level->matched] == '\0';
  if (c == ']' && (word_is_kind || (level->in_id && level->matched > 0)))
    {
      close_level (self);
      return TRUE;
    }
  if (c == ':' && word_is_kind)
    {
      level->in_id = TRUE;
      level->matched = 0;
    }
  else if (level->in_id)
    {
      if (!is_id_char (c) || level->matched == MAX_ID)
        return FALSE;
      level->matched++;
    }
  else if (!extend_word (self, level, c))
    {
      return FALSE;
    }

  g_string_append_c (self->withheld, c);
  return TRUE;
}

static void
process (SymfonicCitationFilter *self,
         const char             *s,
         gsize                   len,
         GString                *out)
{
  gsize i = 0;

  while (i < len)
    {
      gsize run;

      if (s[i] == '[')
        {
          open_level (self);
          i++;
          continue;
        }
      if (self->depth > 0 && push_in_level (self, s[i]))
        {
          i++;
          continue;
        }

      /* s[i] is plain text, and so is what was withheld before it: the
       * levels can no longer become tags, or the space precedes none */
      release_withheld (self, out);
      for (run = i; run < len && s[run] != '[' && s[run] != ' '; run++)
        ;
      if (run < len && s[run] == ' ')
        {
          /* only the last of a run of spaces may precede a tag */
          g_string_append_len (out, s + i, run - i);
          g_string_append_c (self->withheld, ' ');
          run++;
        }
      else
        {
          g_string_append_len (out, s + i, run - i);
        }
      i = run;
    }
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
  gsize whole;

  g_return_if_fail (self != NULL);
  g_return_if_fail (text != NULL || length == 0);
  g_return_if_fail (out != NULL);

  g_string_append_len (self->input, text, length);
  whole = self->input->len - symfonic_utf8_unfinished_suffix (self->input->str, self->input->len);
  process (self, self->input->str, whole, out);
  g_string_erase (self->input, 0, whole);
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

  process (self, self->input->str, self->input->len, out);
  g_string_truncate (self->input, 0);
  release_withheld (self, out);
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
