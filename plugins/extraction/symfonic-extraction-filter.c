/* symfonic-extraction-filter.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <symfonic.h>

#include "symfonic-extraction-filter.h"

/* Outside a block the filter releases text as it comes, withholding only
 * what could still be part of an open tag (and an unfinished UTF-8
 * sequence). Inside a block nothing is released: the content is collected
 * until the close tag, then parsed as a JSON list of op objects. A block
 * that is malformed, too large or never closed is dropped, never released
 * as text.
 *
 * Removing a block joins the text on either side, and that join may itself
 * open a block: `<memory_<memory_ops>[]</memory_ops>ops>` leaves
 * `<memory_ops>`. So the withheld text is a stack: each byte carries how
 * much of the open tag ends there (the KMP state), a completed open tag is
 * taken off the stack, and once its block is over, matching resumes from
 * the state of the byte below it, as if the block had never been there.
 * A byte is withheld while that state is not zero; the first byte whose
 * state is zero cannot be part of any open tag, even after blocks are
 * removed after it, and neither can anything before it, so all of it is
 * released. Each byte is matched once, in amortised constant time.
 *
 * A stream of nested unfinished open tags (`<<<<`...) would be withheld
 * without end, so at most MAX_WITHHELD_TAGS open tags' worth is: past that,
 * the oldest half is dropped, never released, and the rest matched afresh.
 *
 * Every decision depends only on the bytes seen so far, never on where the
 * upstream split them, so the output is the same for any split. In
 * particular the size limit applies to the block's content as a whole:
 * the content collected so far only grows, so a block that is over the
 * limit is over it whether it is seen in one piece or byte by byte. */

#define MAX_WITHHELD_TAGS 64

typedef enum {
  OUTSIDE,
  INSIDE,
  /* inside a block already dropped for its size: wait for its end */
  SKIPPING,
} Mode;

/* One channel's text: the answer's and the thinking's are split apart. */
typedef struct
{
  Mode                mode;
  /* outside: the text that may still be part of an open tag, and for each
   * of its bytes how much of the open tag ends there */
  GString            *withheld;
  GArray             *matched;
  /* inside: how much of the close tag the block ends with */
  gsize               close_matched;
  GString            *block;
} Text;

/* The block tags' matchers, made once for a stage and shared by the
 * filters of all its streams. */
struct _SymfonicExtractionSpec
{
  SymfonicTagMatcher  open;
  SymfonicTagMatcher  close;
};

struct _SymfonicExtractionFilter
{
  SymfonicTextFilter      parent_instance;

  SymfonicExtractionSpec *spec;
  gsize                   max_block;

  /* a text's buffers are made on its first piece: most answers never
   * think aloud */
  Text                    texts[2];
  /* the answer's: a block in the thinking is removed too, but its ops are
   * not the answer's, so they are never published */
  JsonArray              *ops;
  guint                   dropped;
  /* FALSE: a closed block is removed unread */
  gboolean                reads_ops;
};

G_DEFINE_FINAL_TYPE (SymfonicExtractionFilter, symfonic_extraction_filter, SYMFONIC_TYPE_TEXT_FILTER)

static void
symfonic_extraction_filter_finalize (GObject *object)
{
  SymfonicExtractionFilter *self = SYMFONIC_EXTRACTION_FILTER (object);

  g_clear_pointer (&self->spec, symfonic_extraction_spec_unref);
  for (guint i = 0; i < G_N_ELEMENTS (self->texts); i++)
    {
      if (self->texts[i].withheld == NULL)
        continue;
      g_string_free (self->texts[i].withheld, TRUE);
      g_array_unref (self->texts[i].matched);
      g_string_free (self->texts[i].block, TRUE);
    }
  json_array_unref (self->ops);

  G_OBJECT_CLASS (symfonic_extraction_filter_parent_class)->finalize (object);
}

static void
drop_block (SymfonicExtractionFilter *self,
            Text                     *text,
            const char               *why)
{
  g_debug ("Dropped a memory-extraction block: %s", why);
  self->dropped++;
  g_string_truncate (text->block, 0);
}

static void
parse_block (SymfonicExtractionFilter *self,
             Text                     *text)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) root = NULL;
  JsonArray *list;
  guint n;

  if (!self->reads_ops)
    {
      g_string_truncate (text->block, 0);
      return;
    }

  /* the ops are the model's word on what to remember: strict JSON only,
   * and a hostile `[[[[...` is refused before it is built */
  root = symfonic_json_parse (text->block->str, text->block->len, SYMFONIC_JSON_MAX_DEPTH, &error);
  if (root == NULL)
    {
      drop_block (self, text, error->message);
      return;
    }

  if (!JSON_NODE_HOLDS_ARRAY (root))
    {
      drop_block (self, text, "not a list");
      return;
    }

  /* all or nothing: a block with one bad op is not half applied */
  list = json_node_get_array (root);
  n = json_array_get_length (list);
  for (guint i = 0; i < n; i++)
    {
      if (!JSON_NODE_HOLDS_OBJECT (json_array_get_element (list, i)))
        {
          drop_block (self, text, "an op is not an object");
          return;
        }
    }
  g_string_truncate (text->block, 0);
  if (text != &self->texts[SYMFONIC_TEXT_CHANNEL_ANSWER])
    {
      g_debug ("Not publishing %u memory ops found in thinking text", n);
      return;
    }
  for (guint i = 0; i < n; i++)
    json_array_add_element (self->ops, json_node_copy (json_array_get_element (list, i)));
}

/* Adds content to the open block, dropping it once it is over the limit;
 * the block's last close_matched bytes may yet be its close tag. */
static void
collect (SymfonicExtractionFilter *self,
         Text                     *text,
         const char               *s,
         gsize                     len)
{
  if (text->mode != INSIDE)
    return;

  g_string_append_len (text->block, s, len);
  if (self->max_block > 0 && text->block->len - text->close_matched > self->max_block)
    {
      drop_block (self, text, "over max-block-bytes");
      text->mode = SKIPPING;
    }
}

static void
release_withheld (Text    *text,
                  GString *out,
                  gsize    len)
{
  g_string_append_len (out, text->withheld->str, len);
  g_string_erase (text->withheld, 0, len);
  g_array_remove_range (text->matched, 0, len);
}

static void
withhold (Text  *text,
          char   c,
          gsize  matched)
{
  g_string_append_c (text->withheld, c);
  g_array_append_val (text->matched, matched);
}

/* Too much is withheld: drops the oldest half and matches the rest as if
 * it followed released prose, which ends where no open tag is under way. */
static void
drop_oldest (SymfonicExtractionFilter *self,
             Text                     *text,
             GString                  *out)
{
  gsize cut = text->withheld->len / 2;
  gsize matched = 0;
  gsize prose = 0;

  g_debug ("Dropped %" G_GSIZE_FORMAT " bytes of nested unfinished open tags", cut);
  g_string_erase (text->withheld, 0, cut);
  g_array_set_size (text->matched, text->withheld->len);
  for (gsize i = 0; i < text->withheld->len; i++)
    {
      /* a part of withheld text never holds a whole open tag */
      matched = symfonic_tag_matcher_advance (&self->spec->open, matched, text->withheld->str[i]);
      g_array_index (text->matched, gsize, i) = matched;
      if (matched == 0)
        prose = i + 1;
    }
  release_withheld (text, out, prose);
}

/* How many bytes of @s come before the first @c. */
static inline gsize
run_before (const char *s,
            gsize       len,
            char        c)
{
  const char *first = memchr (s, c, len);

  return first != NULL ? (gsize) (first - s) : len;
}

/* Takes prose from @s until a block opens; returns the bytes used. */
static gsize
take_prose (SymfonicExtractionFilter *self,
            Text                     *text,
            const char               *s,
            gsize                     len,
            GString                  *out)
{
  for (gsize i = 0; i < len; i++)
    {
      gsize below = text->withheld->len;
      gsize matched;

      if (below == 0)
        {
          /* nothing is under way: the run before the tag's first byte is prose */
          gsize run = run_before (s + i, len - i, self->spec->open.text[0]);

          g_string_append_len (out, s + i, run);
          i += run;
          if (i == len)
            break;
        }

      matched = symfonic_tag_matcher_advance (&self->spec->open, below > 0 ? g_array_index (text->matched, gsize, below - 1) : 0, s[i]);
      if (matched == self->spec->open.len)
        {
          /* the tag is s[i] and the last bytes withheld */
          g_string_truncate (text->withheld, below - (self->spec->open.len - 1));
          g_array_set_size (text->matched, text->withheld->len);
          g_string_truncate (text->block, 0);
          text->close_matched = 0;
          text->mode = INSIDE;
          return i + 1;
        }
      if (matched == 0)
        {
          release_withheld (text, out, below);
          g_string_append_c (out, s[i]);
          continue;
        }

      withhold (text, s[i], matched);
      if (text->withheld->len > MAX_WITHHELD_TAGS * self->spec->open.len)
        drop_oldest (self, text, out);
    }

  return len;
}

/* Takes block content from @s until the block closes; returns the bytes
 * used. */
static gsize
take_block (SymfonicExtractionFilter *self,
            Text                     *text,
            const char               *s,
            gsize                     len)
{
  for (gsize i = 0; i < len; i++)
    {
      if (text->close_matched == 0)
        {
          gsize run = run_before (s + i, len - i, self->spec->close.text[0]);

          collect (self, text, s + i, run);
          i += run;
          if (i == len)
            break;
        }

      text->close_matched = symfonic_tag_matcher_advance (&self->spec->close, text->close_matched, s[i]);
      if (text->close_matched == self->spec->close.len)
        {
          if (text->mode == INSIDE)
            {
              /* the block ends with the rest of the close tag */
              g_string_truncate (text->block, text->block->len - (self->spec->close.len - 1));
              parse_block (self, text);
            }
          text->close_matched = 0;
          text->mode = OUTSIDE;
          return i + 1;
        }
      collect (self, text, s + i, 1);
    }

  return len;
}

static void
symfonic_extraction_filter_filter (SymfonicTextFilter  *filter,
                                   SymfonicTextChannel  channel,
                                   const char          *s,
                                   gsize                len,
                                   GString             *out)
{
  SymfonicExtractionFilter *self = (SymfonicExtractionFilter *) filter;
  Text *text = &self->texts[channel];
  gsize i = 0;

  if (text->withheld == NULL)
    {
      text->withheld = g_string_new (NULL);
      text->matched = g_array_new (FALSE, FALSE, sizeof (gsize));
      text->block = g_string_new (NULL);
    }

  while (i < len)
    {
      if (text->mode == OUTSIDE)
        i += take_prose (self, text, s + i, len - i, out);
      else
        i += take_block (self, text, s + i, len - i);
    }
}

/* Prose with nothing withheld before it and no byte that may start the
 * open tag. */
static gboolean
symfonic_extraction_filter_passes (SymfonicTextFilter  *filter,
                                   SymfonicTextChannel  channel,
                                   const char          *s,
                                   gsize                len)
{
  SymfonicExtractionFilter *self = (SymfonicExtractionFilter *) filter;
  Text *text = &self->texts[channel];

  return text->mode == OUTSIDE && (text->withheld == NULL || text->withheld->len == 0) &&
         run_before (s, len, self->spec->open.text[0]) == len;
}

/* The text is over: releases the withheld prose and drops a block that was
 * never closed. */
static void
symfonic_extraction_filter_flush_text (SymfonicTextFilter  *filter,
                                       SymfonicTextChannel  channel,
                                       GString             *out)
{
  SymfonicExtractionFilter *self = (SymfonicExtractionFilter *) filter;
  Text *text = &self->texts[channel];

  /* never fed: nothing withheld, no block open */
  if (text->withheld == NULL)
    return;
  if (text->mode == INSIDE)
    drop_block (self, text, "unterminated");
  text->mode = OUTSIDE;
  text->close_matched = 0;
  release_withheld (text, out, text->withheld->len);
}

/* What may still be part of an open tag, held back until it is known. */
static gsize
symfonic_extraction_filter_withheld (SymfonicTextFilter *filter)
{
  SymfonicExtractionFilter *self = (SymfonicExtractionFilter *) filter;
  gsize held = 0;

  for (guint i = 0; i < G_N_ELEMENTS (self->texts); i++)
    {
      if (self->texts[i].withheld != NULL)
        held += self->texts[i].withheld->len;
    }

  return held;
}

static void
symfonic_extraction_filter_class_init (SymfonicExtractionFilterClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  SymfonicTextFilterClass *filter_class = SYMFONIC_TEXT_FILTER_CLASS (klass);

  object_class->finalize = symfonic_extraction_filter_finalize;
  filter_class->filter = symfonic_extraction_filter_filter;
  filter_class->flush = symfonic_extraction_filter_flush_text;
  filter_class->passes = symfonic_extraction_filter_passes;
  filter_class->withheld = symfonic_extraction_filter_withheld;
}

static void
symfonic_extraction_filter_init (SymfonicExtractionFilter *self)
{
  self->ops = json_array_new ();
  self->reads_ops = TRUE;
}

static void
spec_clear (gpointer data)
{
  SymfonicExtractionSpec *spec = data;

  symfonic_tag_matcher_clear (&spec->open);
  symfonic_tag_matcher_clear (&spec->close);
}

/* The tags as symfonic_extraction_filter_new() takes them. */
SymfonicExtractionSpec *
symfonic_extraction_spec_new (const char *open_tag,
                              const char *close_tag)
{
  SymfonicExtractionSpec *spec;

  g_return_val_if_fail (open_tag != NULL && *open_tag != '\0', NULL);
  g_return_val_if_fail (close_tag != NULL && *close_tag != '\0', NULL);

  spec = g_atomic_rc_box_new0 (SymfonicExtractionSpec);
  symfonic_tag_matcher_init (&spec->open, open_tag);
  symfonic_tag_matcher_init (&spec->close, close_tag);

  return spec;
}

SymfonicExtractionSpec *
symfonic_extraction_spec_ref (SymfonicExtractionSpec *spec)
{
  return g_atomic_rc_box_acquire (spec);
}

void
symfonic_extraction_spec_unref (SymfonicExtractionSpec *spec)
{
  g_atomic_rc_box_release_full (spec, spec_clear);
}

/* A filter of @spec, which it keeps a reference to. */
SymfonicExtractionFilter *
symfonic_extraction_filter_new_for_spec (SymfonicExtractionSpec *spec,
                                         gsize                   max_block)
{
  SymfonicExtractionFilter *self;

  g_return_val_if_fail (spec != NULL, NULL);

  self = g_object_new (SYMFONIC_TYPE_EXTRACTION_FILTER, NULL);
  self->spec = symfonic_extraction_spec_ref (spec);
  self->max_block = max_block;

  return self;
}

/**
 * symfonic_extraction_filter_new:
 * @open_tag: the tag that opens a block, such as `<memory_ops>`
 * @close_tag: the tag that closes it
 * @max_block: the most bytes of content a block may have; 0 for no limit
 *
 * Returns: (transfer full): a new filter, for one stream
 */
SymfonicExtractionFilter *
symfonic_extraction_filter_new (const char *open_tag,
                                const char *close_tag,
                                gsize       max_block)
{
  g_autoptr(SymfonicExtractionSpec) spec = symfonic_extraction_spec_new (open_tag, close_tag);

  return spec != NULL ? symfonic_extraction_filter_new_for_spec (spec, max_block) : NULL;
}

void
symfonic_extraction_filter_free (SymfonicExtractionFilter *self)
{
  g_object_unref (self);
}

/**
 * symfonic_extraction_filter_feed:
 * @self: a filter
 * @text: the next piece of the answer
 * @length: its length in bytes
 * @out: where the text that is known to be prose is appended
 *
 * Feeds one delta of the answer. Appends to @out only whole UTF-8
 * characters (given valid input) that can no longer belong to a block.
 */
void
symfonic_extraction_filter_feed (SymfonicExtractionFilter *self,
                                 const char               *text,
                                 gsize                     length,
                                 GString                  *out)
{
  symfonic_text_filter_feed (SYMFONIC_TEXT_FILTER (self), SYMFONIC_TEXT_CHANNEL_ANSWER, text, length, out);
}

/**
 * symfonic_extraction_filter_flush:
 * @self: a filter
 * @out: where the withheld prose is appended
 *
 * The answer is over: releases the withheld prose and drops a block that
 * was never closed. The filter can be fed again afterwards.
 */
void
symfonic_extraction_filter_flush (SymfonicExtractionFilter *self,
                                  GString                  *out)
{
  symfonic_text_filter_flush (SYMFONIC_TEXT_FILTER (self), SYMFONIC_TEXT_CHANNEL_ANSWER, out);
}

/**
 * symfonic_extraction_filter_get_ops:
 * @self: a filter
 *
 * Returns: (transfer none): the ops parsed from the answer so far and not
 *   yet taken
 */
JsonArray *
symfonic_extraction_filter_get_ops (SymfonicExtractionFilter *self)
{
  g_return_val_if_fail (SYMFONIC_IS_EXTRACTION_FILTER (self), NULL);

  return self->ops;
}

/**
 * symfonic_extraction_filter_take_ops:
 * @self: a filter
 *
 * Returns: (transfer full): the ops parsed from the answer so far; the
 *   filter starts a new empty list
 */
JsonArray *
symfonic_extraction_filter_take_ops (SymfonicExtractionFilter *self)
{
  JsonArray *ops;

  g_return_val_if_fail (SYMFONIC_IS_EXTRACTION_FILTER (self), NULL);

  ops = g_steal_pointer (&self->ops);
  self->ops = json_array_new ();

  return ops;
}

/**
 * symfonic_extraction_filter_get_dropped:
 * @self: a filter
 *
 * Returns: how many blocks this filter dropped (malformed, too large or
 *   unterminated), in the answer and the thinking
 */
guint
symfonic_extraction_filter_get_dropped (SymfonicExtractionFilter *self)
{
  g_return_val_if_fail (SYMFONIC_IS_EXTRACTION_FILTER (self), 0);

  return self->dropped;
}

/**
 * symfonic_extraction_filter_set_reads_ops:
 * @self: a filter
 * @reads_ops: whether a closed block's ops are read
 *
 * A filter that only has to remove blocks, such as one cleaning a text
 * whose ops were read already, need not parse them: without reading, a
 * closed block is removed as it is, never counted as dropped, and
 * symfonic_extraction_filter_get_ops() stays empty. What the filter
 * releases is the same either way. Filters read ops by default.
 */
void
symfonic_extraction_filter_set_reads_ops (SymfonicExtractionFilter *self,
                                          gboolean                  reads_ops)
{
  g_return_if_fail (SYMFONIC_IS_EXTRACTION_FILTER (self));

  self->reads_ops = reads_ops;
}
