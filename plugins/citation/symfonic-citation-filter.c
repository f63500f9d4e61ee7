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
 * The join may also open a memory block (`<memory[semantic]_ops>`) after
 * the extraction stage has passed both halves. This filter comes last, so
 * it removes such blocks itself: a block runs from its open tag to the
 * first close tag after it (or to the end of the text), both matched on
 * the text after tag removal, and nothing of it is released. Removing a
 * block joins the text on either side too, so `[sem<memory_ops>…
 * </memory_ops>antic]` loses everything. An unfinished open tag is one
 * more kind of level: it starts at the open tag's first byte, which no tag
 * can hold, and keeps how much of the open tag it matched (the KMP state).
 * A match that starts on the last bytes of another (`<memor<memory_ops>`)
 * is a level above it, since the other resumes if this one's block goes.
 * A tag level that the next byte does not continue is not over when that
 * byte starts an open tag: the block may yet go and the tag go on. Inside
 * a block the same stack looks for the close tag, above the levels that
 * were under way when the block opened, which resume once it is over.
 *
 * Since `[` is in no kind, no id and no block tag, a tag always starts at
 * the last `[` before its `]`, and a level can only still become a tag or
 * an open tag if its text is the beginning of one, possibly followed by the
 * one space a nested tag takes with it. When the top level can no longer
 * become either, none below it can (each needs the top removed first), so
 * everything withheld is released at once. What is withheld is thus
 * exactly what could still go, plus a trailing space and an incomplete
 * UTF-8 sequence, so every piece released is whole UTF-8 whatever the
 * upstream's split.
 *
 * A stream of nested unfinished levels (`[[[[`...) would be withheld without
 * end, so the depth is bounded: past MAX_LEVELS the oldest half of the
 * levels is dropped, never released, so nothing can be completed around it.
 * A level's state is kept, not recomputed, so each byte is looked at a
 * number of times bounded by the block tags' length. */

#define MAX_ID 64
#define MAX_LEVELS 64
/* most text never nests: the stack grows from a few levels, so a new
 * channel costs no allocation past a kilobyte, each of which makes malloc
 * consolidate its small free chunks */
#define FIRST_LEVELS 4
/* doubled from FIRST_LEVELS, the stack is MAX_LEVELS when it is full */
G_STATIC_ASSERT (MAX_LEVELS % FIRST_LEVELS == 0 && ((MAX_LEVELS / FIRST_LEVELS) & (MAX_LEVELS / FIRST_LEVELS - 1)) == 0);

typedef struct
{
  /* where the level's first byte is in withheld */
  gsize    start;
  /* the beginning of a block tag, not a citation tag */
  gboolean block_tag;
  /* the kinds (sorted) whose spelling still agrees with the word so far */
  guint    lo;
  guint    hi;
  /* bytes of the word, then of the id once the colon came; of a block
   * tag, how much of it is matched */
  guint    matched;
  gboolean in_id;
  /* ends with the space a nested tag would take with it */
  gboolean spaced;
} Level;

/* One channel's text: the answer's and the thinking's are split apart. */
typedef struct
{
  /* the unfinished levels, or the one space that may precede a tag */
  GString            *withheld;
  Level              *levels;
  guint               levels_size;
  guint               depth;
  /* inside a block: its content starts at withheld[block_start], and the
   * levels from base on are its own */
  gboolean            inside;
  gsize               block_start;
  guint               base;
} Text;

/* What a filter reads and never changes, made once for a stage and
 * shared by the filters of all its streams: a stream's filter then costs
 * only its own state. */
struct _SymfonicCitationSpec
{
  /* lower case, sorted, so the kinds sharing a prefix are a range */
  GStrv               kinds;
  guint               n_kinds;
  SymfonicTagMatcher  open;
  SymfonicTagMatcher  close;
};

struct _SymfonicCitationFilter
{
  SymfonicTextFilter    parent_instance;

  SymfonicCitationSpec *spec;

  /* each holds a few KB: the thinking's, which most answers never need,
   * is made on its first piece */
  Text                 *texts[2];
  guint64               removed;
  guint64               blocks_dropped;
};

G_DEFINE_FINAL_TYPE (SymfonicCitationFilter, symfonic_citation_filter, SYMFONIC_TYPE_TEXT_FILTER)

static int
compare_kinds (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

static inline gboolean
is_id_char (char c)
{
  return g_ascii_isalnum (c) || c == '_' || c == '.' || c == '-';
}

/**
 * symfonic_citation_filter_block_tag_is_valid:
 * @tag: an open or close tag of a memory block
 * @kinds: (array zero-terminated=1): the tag words
 *
 * A block tag must start with a byte that continues no citation tag, so
 * that where one starts is never in doubt, and hold no `[` or space, which
 * would start or end a citation tag's level inside it.
 *
 * Returns: whether the filter can remove blocks opened and closed by @tag
 */
gboolean
symfonic_citation_filter_block_tag_is_valid (const char         *tag,
                                             const char * const *kinds)
{
  g_return_val_if_fail (tag != NULL, FALSE);
  g_return_val_if_fail (kinds != NULL, FALSE);

  if (*tag == '\0' || is_id_char (*tag) || strchr ("[]: ", *tag) != NULL ||
      strpbrk (tag, "[ ") != NULL)
    return FALSE;
  for (guint i = 0; kinds[i] != NULL; i++)
    {
      if (strchr (kinds[i], g_ascii_tolower (*tag)) != NULL ||
          strchr (kinds[i], g_ascii_toupper (*tag)) != NULL)
        return FALSE;
    }

  return TRUE;
}

static void
spec_clear (gpointer data)
{
  SymfonicCitationSpec *spec = data;

  g_strfreev (spec->kinds);
  symfonic_tag_matcher_clear (&spec->open);
  symfonic_tag_matcher_clear (&spec->close);
}

/* @kinds and the tags as symfonic_citation_filter_new() takes them. */
SymfonicCitationSpec *
symfonic_citation_spec_new (const char * const *kinds,
                            const char         *open_tag,
                            const char         *close_tag)
{
  SymfonicCitationSpec *spec;
  guint n = 0;

  g_return_val_if_fail (kinds != NULL, NULL);
  g_return_val_if_fail (open_tag != NULL && symfonic_citation_filter_block_tag_is_valid (open_tag, kinds), NULL);
  g_return_val_if_fail (close_tag != NULL && symfonic_citation_filter_block_tag_is_valid (close_tag, kinds), NULL);

  spec = g_atomic_rc_box_new0 (SymfonicCitationSpec);
  spec->kinds = g_new0 (char *, g_strv_length ((char **) kinds) + 1);
  for (guint i = 0; kinds[i] != NULL; i++)
    {
      if (*kinds[i] != '\0')
        spec->kinds[n++] = g_ascii_strdown (kinds[i], -1);
    }
  qsort (spec->kinds, n, sizeof (char *), compare_kinds);
  spec->n_kinds = n;
  symfonic_tag_matcher_init (&spec->open, open_tag);
  symfonic_tag_matcher_init (&spec->close, close_tag);

  return spec;
}

SymfonicCitationSpec *
symfonic_citation_spec_ref (SymfonicCitationSpec *spec)
{
  return g_atomic_rc_box_acquire (spec);
}

void
symfonic_citation_spec_unref (SymfonicCitationSpec *spec)
{
  g_atomic_rc_box_release_full (spec, spec_clear);
}

/* A filter of @spec, which it keeps a reference to. */
SymfonicCitationFilter *
symfonic_citation_filter_new_for_spec (SymfonicCitationSpec *spec)
{
  SymfonicCitationFilter *self;

  g_return_val_if_fail (spec != NULL, NULL);

  self = g_object_new (SYMFONIC_TYPE_CITATION_FILTER, NULL);
  self->spec = symfonic_citation_spec_ref (spec);

  return self;
}

/**
 * symfonic_citation_filter_new:
 * @kinds: (array zero-terminated=1): the tag words, matched in any ASCII
 *   case; empty words are ignored
 * @open_tag: the tag that opens a memory block
 * @close_tag: the tag that closes it
 *
 * Both block tags must pass symfonic_citation_filter_block_tag_is_valid().
 *
 * Returns: (transfer full): a new filter, for one stream
 */
SymfonicCitationFilter *
symfonic_citation_filter_new (const char * const *kinds,
                              const char         *open_tag,
                              const char         *close_tag)
{
  g_autoptr(SymfonicCitationSpec) spec = symfonic_citation_spec_new (kinds, open_tag, close_tag);

  return spec != NULL ? symfonic_citation_filter_new_for_spec (spec) : NULL;
}

void
symfonic_citation_filter_free (SymfonicCitationFilter *self)
{
  g_object_unref (self);
}

static void
text_free (Text *text)
{
  g_string_free (text->withheld, TRUE);
  g_free (text->levels);
  g_free (text);
}

static void
symfonic_citation_filter_finalize (GObject *object)
{
  SymfonicCitationFilter *self = SYMFONIC_CITATION_FILTER (object);

  g_clear_pointer (&self->spec, symfonic_citation_spec_unref);
  for (guint i = 0; i < G_N_ELEMENTS (self->texts); i++)
    g_clear_pointer (&self->texts[i], text_free);

  G_OBJECT_CLASS (symfonic_citation_filter_parent_class)->finalize (object);
}

/* The tag that ends what is under way: a block's close tag inside one. */
static inline const SymfonicTagMatcher *
sought (SymfonicCitationFilter *self,
        Text                   *text)
{
  return text->inside ? &self->spec->close : &self->spec->open;
}

/* Text that can no longer be removed: released, or inside a block dropped. */
static inline void
emit (Text       *text,
      const char *s,
      gsize       len,
      GString    *out)
{
  if (!text->inside)
    g_string_append_len (out, s, len);
}

/* Releases the withheld text before @end; the levels it held are over. */
static void
release_before (Text    *text,
                gsize    end,
                GString *out)
{
  gsize from = text->block_start;

  /* plain text between releases leaves nothing withheld: the usual case */
  if (end == from)
    {
      text->depth = text->base;
      return;
    }
  emit (text, text->withheld->str + from, end - from, out);
  g_string_erase (text->withheld, from, end - from);
  text->depth = text->base;
}

static void
release_withheld (Text    *text,
                  GString *out)
{
  release_before (text, text->withheld->len, out);
}

static Level *
push_level (SymfonicCitationFilter *self,
            Text                   *text,
            gboolean                block_tag)
{
  Level *level;

  if (text->depth == MAX_LEVELS)
    {
      /* keep the space the first kept level's tag would take with it */
      gsize cut = text->levels[MAX_LEVELS / 2].start;

      if (cut > 0 && text->withheld->str[cut - 1] == ' ')
        cut--;
      g_debug ("Dropped %" G_GSIZE_FORMAT " bytes of nested unfinished citation tags", cut);
      g_string_erase (text->withheld, 0, cut);
      memmove (text->levels, text->levels + MAX_LEVELS / 2, (MAX_LEVELS / 2) * sizeof (Level));
      text->depth = MAX_LEVELS / 2;
      for (guint i = 0; i < text->depth; i++)
        text->levels[i].start -= cut;
      /* a block's outside levels may go too: they were never released */
      text->block_start = text->block_start > cut ? text->block_start - cut : 0;
      text->base = text->base > MAX_LEVELS / 2 ? text->base - MAX_LEVELS / 2 : 0;
    }
  else if (text->depth == text->levels_size)
    {
      text->levels_size *= 2;
      text->levels = g_renew (Level, text->levels, text->levels_size);
    }

  level = &text->levels[text->depth++];
  *level = (Level) { .start = text->withheld->len, .block_tag = block_tag, .lo = 0, .hi = self->spec->n_kinds };

  return level;
}

/* The top level is a whole tag: remove it and the space before it. */
static void
close_level (SymfonicCitationFilter *self,
             Text                   *text)
{
  gsize start = text->levels[--text->depth].start;

  if (start > text->block_start && text->withheld->str[start - 1] == ' ')
    start--;
  g_string_truncate (text->withheld, start);
  if (text->depth > text->base)
    text->levels[text->depth - 1].spaced = FALSE;
  self->removed++;
}

/* The top level is a whole block tag: an open tag starts a block, whose
 * levels go above the ones it interrupted; a close tag drops the block,
 * and the interrupted levels resume. */
static void
complete_block_tag (SymfonicCitationFilter *self,
                    Text                   *text)
{
  gsize start = text->levels[--text->depth].start;
  Level *below = text->depth > text->base ? &text->levels[text->depth - 1] : NULL;

  g_string_truncate (text->withheld, start);
  /* an earlier match of the same tag that this one overlapped */
  if (below != NULL && below->block_tag)
    below->matched = start - below->start;
  if (!text->inside)
    {
      text->inside = TRUE;
      text->block_start = text->withheld->len;
      text->base = text->depth;
      self->blocks_dropped++;
      return;
    }

  g_debug ("Dropped a memory block that reached the citation filter");
  g_string_truncate (text->withheld, text->block_start);
  text->depth = text->base;
  text->inside = FALSE;
  text->block_start = 0;
  text->base = 0;
}

/* Narrows the top level's kinds to those with @c after the word so far;
 * the level is unchanged when none has. */
static gboolean
extend_word (SymfonicCitationFilter *self,
             Level                  *level,
             char                    c)
{
  guchar lc = g_ascii_tolower (c);
  guint p = level->matched;
  guint lo = level->lo;
  guint hi;

  while (lo < level->hi && (self->spec->kinds[lo][p] == '\0' || (guchar) self->spec->kinds[lo][p] < lc))
    lo++;
  for (hi = lo; hi < level->hi && (guchar) self->spec->kinds[hi][p] == lc; hi++)
    ;
  if (lo == hi)
    return FALSE;
  level->lo = lo;
  level->hi = hi;
  level->matched++;

  return TRUE;
}

/* A space after a level can only go with a nested tag: the level waits
 * for one. */
static gboolean
wait_for_nested_tag (Text  *text,
                     Level *level)
{
  level->spaced = TRUE;
  g_string_append_c (text->withheld, ' ');

  return TRUE;
}

/* Whether @c continues the top tag level as the beginning of a tag;
 * closes the level when @c completes it. A level that @c does not
 * continue is left as it was: an open tag may yet come between. */
static gboolean
push_in_level (SymfonicCitationFilter *self,
               Text                   *text,
               Level                  *level,
               char                    c)
{
  gboolean word_is_kind;

  if (level->spaced)
    return FALSE;
  if (c == ' ')
    return wait_for_nested_tag (text, level);

  /* the shortest kind in the range sorts first */
  word_is_kind = !level->in_id && level->matched > 0 && level->lo < level->hi &&
                 self->spec->kinds[level->lo][level->matched] == '\0';
  if (c == ']' && (word_is_kind || (level->in_id && level->matched > 0)))
    {
      close_level (self, text);
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

  g_string_append_c (text->withheld, c);
  return TRUE;
}

/* Whether @c continues the top block tag level; completes the tag when
 * @c ends it. */
static gboolean
push_in_block_tag (SymfonicCitationFilter *self,
                   Text                   *text,
                   Level                  *level,
                   char                    c)
{
  const SymfonicTagMatcher *tag = sought (self, text);
  gsize matched;

  if (level->spaced)
    return FALSE;
  /* no block tag holds a space */
  if (c == ' ')
    return wait_for_nested_tag (text, level);

  matched = symfonic_tag_matcher_advance (tag, level->matched, c);
  if (matched == 0)
    return FALSE;
  if (matched <= level->matched)
    {
      /* the tag now starts later, on the level's last bytes: one more
       * level, since the earlier match resumes if this one's block goes */
      level = push_level (self, text, TRUE);
      level->start = text->withheld->len - (matched - 1);
    }
  g_string_append_c (text->withheld, c);
  level->matched = matched;
  if (matched == tag->len)
    complete_block_tag (self, text);

  return TRUE;
}

static void
start_block_tag (SymfonicCitationFilter *self,
                 Text                   *text)
{
  Level *level = push_level (self, text, TRUE);

  g_string_append_c (text->withheld, sought (self, text)->text[0]);
  level->matched = 1;
  if (sought (self, text)->len == 1)
    complete_block_tag (self, text);
}

/* Looked for a window at a time: memchr() over the whole rest for each
 * byte would make a text full of one of them and none of the other cost
 * its length squared. */
#define PLAIN_RUN_WINDOW 256

/* How many bytes of @s come before a `[` or @block_start, which may start
 * something to remove; a space before either is counted in. A terminal
 * carries the whole answer, and most of it is such a run. */
static inline gsize
plain_run (const char *s,
           gsize       len,
           char        block_start)
{
  gsize run = 0;

  while (run < len)
    {
      gsize window = MIN (len - run, PLAIN_RUN_WINDOW);
      const char *bracket = memchr (s + run, '[', window);
      const char *block;

      if (bracket != NULL)
        window = bracket - (s + run);
      block = memchr (s + run, block_start, window);
      if (block != NULL)
        return block - s;
      if (bracket != NULL)
        return bracket - s;
      run += window;
    }

  return run;
}

static void
process (SymfonicCitationFilter *self,
         Text                   *text,
         const char             *s,
         gsize                   len,
         GString                *out)
{
  gsize i = 0;

  while (i < len)
    {
      Level *top = text->depth > text->base ? &text->levels[text->depth - 1] : NULL;
      gsize run;

      if (s[i] == '[')
        {
          push_level (self, text, FALSE);
          g_string_append_c (text->withheld, '[');
          i++;
          continue;
        }
      if (top != NULL && (top->block_tag ? push_in_block_tag (self, text, top, s[i])
                                         : push_in_level (self, text, top, s[i])))
        {
          i++;
          continue;
        }
      if (s[i] == sought (self, text)->text[0])
        {
          /* a tag level waits for the block; anything else is text now */
          if (top == NULL || top->block_tag || top->spaced)
            release_withheld (text, out);
          start_block_tag (self, text);
          i++;
          continue;
        }

      /* s[i] is plain text, and so is what was withheld before it: the
       * levels can no longer become tags, or the space precedes none */
      release_withheld (text, out);
      run = plain_run (s + i, len - i, sought (self, text)->text[0]);
      if (run > 0 && s[i + run - 1] == ' ' && (i + run == len || s[i + run] == '['))
        {
          /* only the last of a run of spaces may precede a tag */
          emit (text, s + i, run - 1, out);
          g_string_append_c (text->withheld, ' ');
        }
      else
        {
          emit (text, s + i, run, out);
        }
      i += run;
    }
}

static Text *
get_text (SymfonicCitationFilter *self,
          SymfonicTextChannel     channel)
{
  if (self->texts[channel] == NULL)
    {
      /* the levels are written when pushed: only the rest starts cleared */
      Text *text = g_new (Text, 1);

      text->withheld = g_string_new (NULL);
      text->levels = g_new (Level, FIRST_LEVELS);
      text->levels_size = FIRST_LEVELS;
      text->depth = 0;
      text->inside = FALSE;
      text->block_start = 0;
      text->base = 0;
      self->texts[channel] = text;
    }

  return self->texts[channel];
}

static void
symfonic_citation_filter_filter (SymfonicTextFilter  *filter,
                                 SymfonicTextChannel  channel,
                                 const char          *s,
                                 gsize                len,
                                 GString             *out)
{
  SymfonicCitationFilter *self = (SymfonicCitationFilter *) filter;

  process (self, get_text (self, channel), s, len, out);
}

/* Nothing withheld, nothing in the piece that may start a tag or a block,
 * and no space at its end that a tag in the next piece would take. */
static gboolean
symfonic_citation_filter_passes (SymfonicTextFilter  *filter,
                                 SymfonicTextChannel  channel,
                                 const char          *s,
                                 gsize                len)
{
  SymfonicCitationFilter *self = (SymfonicCitationFilter *) filter;
  Text *text = self->texts[channel];

  return (text == NULL || (text->withheld->len == 0 && text->depth == 0 && !text->inside)) &&
         s[len - 1] != ' ' && plain_run (s, len, self->spec->open.text[0]) == len;
}

/* The text is over: what was withheld is not followed by a tag, so it is
 * released, and a block never closed is dropped. */
static void
symfonic_citation_filter_flush_text (SymfonicTextFilter  *filter,
                                     SymfonicTextChannel  channel,
                                     GString             *out)
{
  SymfonicCitationFilter *self = (SymfonicCitationFilter *) filter;
  Text *text = self->texts[channel];

  if (text == NULL)
    return;
  if (text->inside)
    {
      /* a block never closed runs to the end */
      g_debug ("Dropped an unterminated memory block that reached the citation filter");
      release_withheld (text, out);
      text->inside = FALSE;
      text->block_start = 0;
      text->base = 0;
    }
  release_withheld (text, out);
}

/* What may still be part of an open tag, held back until it is known. */
static gsize
symfonic_citation_filter_withheld (SymfonicTextFilter *filter)
{
  SymfonicCitationFilter *self = (SymfonicCitationFilter *) filter;
  gsize held = 0;

  for (guint i = 0; i < G_N_ELEMENTS (self->texts); i++)
    {
      if (self->texts[i] != NULL && self->texts[i]->withheld != NULL)
        held += self->texts[i]->withheld->len;
    }

  return held;
}

static void
symfonic_citation_filter_class_init (SymfonicCitationFilterClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  SymfonicTextFilterClass *filter_class = SYMFONIC_TEXT_FILTER_CLASS (klass);

  object_class->finalize = symfonic_citation_filter_finalize;
  filter_class->filter = symfonic_citation_filter_filter;
  filter_class->flush = symfonic_citation_filter_flush_text;
  filter_class->passes = symfonic_citation_filter_passes;
  filter_class->withheld = symfonic_citation_filter_withheld;
}

static void
symfonic_citation_filter_init (SymfonicCitationFilter *self)
{
  get_text (self, SYMFONIC_TEXT_CHANNEL_ANSWER);
}

/**
 * symfonic_citation_filter_feed:
 * @self: a filter
 * @text: the next piece of the answer
 * @length: its length in bytes
 * @out: where the text known to be free of tags is appended
 *
 * Feeds one delta of the answer. Appends to @out only whole UTF-8
 * characters (given valid input) that can no longer be part of a tag or
 * the space before one.
 */
void
symfonic_citation_filter_feed (SymfonicCitationFilter *self,
                               const char             *text,
                               gsize                   length,
                               GString                *out)
{
  symfonic_text_filter_feed (SYMFONIC_TEXT_FILTER (self), SYMFONIC_TEXT_CHANNEL_ANSWER, text, length, out);
}

/**
 * symfonic_citation_filter_flush:
 * @self: a filter
 * @out: where the withheld text is appended
 *
 * The answer is over: releases what was withheld and drops a block never
 * closed. The filter can be fed again afterwards.
 */
void
symfonic_citation_filter_flush (SymfonicCitationFilter *self,
                                GString                *out)
{
  symfonic_text_filter_flush (SYMFONIC_TEXT_FILTER (self), SYMFONIC_TEXT_CHANNEL_ANSWER, out);
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
  g_return_val_if_fail (SYMFONIC_IS_CITATION_FILTER (self), 0);

  return self->removed;
}

/**
 * symfonic_citation_filter_get_blocks_dropped:
 * @self: a filter
 *
 * Returns: how many memory blocks this filter dropped: blocks that only
 *   tag removal formed, or that came without an extraction stage before it
 */
guint64
symfonic_citation_filter_get_blocks_dropped (SymfonicCitationFilter *self)
{
  g_return_val_if_fail (SYMFONIC_IS_CITATION_FILTER (self), 0);

  return self->blocks_dropped;
}
