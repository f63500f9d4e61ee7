/* symfonic-extraction-filter.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <symfonic.h>

#include "symfonic-extraction-filter.h"

/* Outside a block the filter releases text as it comes, withholding only a
 * tail that could still be the start of the open tag (and an unfinished
 * UTF-8 sequence). Inside a block nothing is released: the content is
 * collected until the close tag, then parsed as a JSON list of op objects.
 * A block that is malformed, too large or never closed is dropped, never
 * released as text.
 *
 * Every decision depends only on the bytes seen so far, never on where the
 * upstream split them, so the output is the same for any split. In
 * particular the size limit applies to the block's content as a whole:
 * the content collected so far only grows, so a block that is over the
 * limit is over it whether it is seen in one piece or byte by byte. */

typedef enum {
  OUTSIDE,
  INSIDE,
  /* inside a block already dropped for its size: wait for its end */
  SKIPPING,
} Mode;

struct _SymfonicExtractionFilter
{
  char      *open_tag;
  gsize      open_len;
  char      *close_tag;
  gsize      close_len;
  gsize      max_block;

  Mode       mode;
  GString   *pending;
  GString   *block;
  JsonArray *ops;
  guint      dropped;
};

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
  SymfonicExtractionFilter *self;

  g_return_val_if_fail (open_tag != NULL && *open_tag != '\0', NULL);
  g_return_val_if_fail (close_tag != NULL && *close_tag != '\0', NULL);

  self = g_new0 (SymfonicExtractionFilter, 1);
  self->open_tag = g_strdup (open_tag);
  self->open_len = strlen (open_tag);
  self->close_tag = g_strdup (close_tag);
  self->close_len = strlen (close_tag);
  self->max_block = max_block;
  self->pending = g_string_new (NULL);
  self->block = g_string_new (NULL);
  self->ops = json_array_new ();

  return self;
}

void
symfonic_extraction_filter_free (SymfonicExtractionFilter *self)
{
  g_return_if_fail (self != NULL);

  g_free (self->open_tag);
  g_free (self->close_tag);
  g_string_free (self->pending, TRUE);
  g_string_free (self->block, TRUE);
  json_array_unref (self->ops);
  g_free (self);
}

/* memmem() is a GNU extension; the tags are short, so this is enough. */
static const char *
find_tag (const char *s,
          gsize       len,
          const char *tag,
          gsize       tag_len)
{
  const char *end = s + len;

  while ((gsize) (end - s) >= tag_len)
    {
      const char *first = memchr (s, tag[0], (end - s) - tag_len + 1);

      if (first == NULL)
        return NULL;
      if (memcmp (first, tag, tag_len) == 0)
        return first;
      s = first + 1;
    }

  return NULL;
}

/* The longest suffix of s that is a proper prefix of tag. */
static gsize
partial_tag_suffix (const char *s,
                    gsize       len,
                    const char *tag,
                    gsize       tag_len)
{
  for (gsize n = MIN (len, tag_len - 1); n > 0; n--)
    {
      if (memcmp (s + len - n, tag, n) == 0)
        return n;
    }

  return 0;
}

static void
drop_block (SymfonicExtractionFilter *self,
            const char               *why)
{
  g_debug ("Dropped a memory-extraction block: %s", why);
  self->dropped++;
  g_string_truncate (self->block, 0);
}

static void
parse_block (SymfonicExtractionFilter *self)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) root = NULL;
  JsonArray *list;
  guint n;

  /* the ops are the model's word on what to remember: strict JSON only,
   * and a hostile `[[[[...` is refused before it is built */
  root = symfonic_json_parse (self->block->str, self->block->len, SYMFONIC_JSON_MAX_DEPTH, &error);
  if (root == NULL)
    {
      drop_block (self, error->message);
      return;
    }

  if (!JSON_NODE_HOLDS_ARRAY (root))
    {
      drop_block (self, "not a list");
      return;
    }

  /* all or nothing: a block with one bad op is not half applied */
  list = json_node_get_array (root);
  n = json_array_get_length (list);
  for (guint i = 0; i < n; i++)
    {
      if (!JSON_NODE_HOLDS_OBJECT (json_array_get_element (list, i)))
        {
          drop_block (self, "an op is not an object");
          return;
        }
    }
  for (guint i = 0; i < n; i++)
    json_array_add_element (self->ops, json_node_copy (json_array_get_element (list, i)));
  g_string_truncate (self->block, 0);
}

/* Adds content to the open block, dropping it once it is over the limit. */
static void
collect (SymfonicExtractionFilter *self,
         const char               *s,
         gsize                     len)
{
  if (self->mode != INSIDE)
    return;

  g_string_append_len (self->block, s, len);
  if (self->max_block > 0 && self->block->len > self->max_block)
    {
      drop_block (self, "over max-block-bytes");
      self->mode = SKIPPING;
    }
}

static void
process (SymfonicExtractionFilter *self,
         GString                  *out,
         gboolean                  at_end)
{
  for (;;)
    {
      const char *s = self->pending->str;
      gsize len = self->pending->len;
      const char *hit;
      gsize keep;

      if (self->mode == OUTSIDE)
        {
          hit = find_tag (s, len, self->open_tag, self->open_len);
          if (hit != NULL)
            {
              g_string_append_len (out, s, hit - s);
              g_string_erase (self->pending, 0, (hit - s) + self->open_len);
              g_string_truncate (self->block, 0);
              self->mode = INSIDE;
              continue;
            }

          keep = 0;
          if (!at_end)
            keep = MAX (partial_tag_suffix (s, len, self->open_tag, self->open_len),
                        symfonic_utf8_unfinished_suffix (s, len));
          g_string_append_len (out, s, len - keep);
          g_string_erase (self->pending, 0, len - keep);
          return;
        }

      /* INSIDE or SKIPPING: look for the close tag across what is pending */
      hit = find_tag (s, len, self->close_tag, self->close_len);
      if (hit != NULL)
        {
          collect (self, s, hit - s);
          if (self->mode == INSIDE)
            parse_block (self);
          g_string_erase (self->pending, 0, (hit - s) + self->close_len);
          self->mode = OUTSIDE;
          continue;
        }

      if (at_end)
        {
          if (self->mode == INSIDE)
            drop_block (self, "unterminated");
          g_string_truncate (self->pending, 0);
          self->mode = OUTSIDE;
          return;
        }

      /* keep only what could be the start of the close tag */
      keep = partial_tag_suffix (s, len, self->close_tag, self->close_len);
      collect (self, s, len - keep);
      g_string_erase (self->pending, 0, len - keep);
      return;
    }
}

/**
 * symfonic_extraction_filter_feed:
 * @self: a filter
 * @text: the next piece of the answer
 * @length: its length in bytes
 * @out: where the text that is known to be prose is appended
 *
 * Feeds one delta. Appends to @out only whole UTF-8 characters (given
 * valid input) that can no longer belong to a block.
 */
void
symfonic_extraction_filter_feed (SymfonicExtractionFilter *self,
                                 const char               *text,
                                 gsize                     length,
                                 GString                  *out)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (text != NULL || length == 0);
  g_return_if_fail (out != NULL);

  g_string_append_len (self->pending, text, length);
  process (self, out, FALSE);
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
  g_return_if_fail (self != NULL);
  g_return_if_fail (out != NULL);

  process (self, out, TRUE);
}

/**
 * symfonic_extraction_filter_get_ops:
 * @self: a filter
 *
 * Returns: (transfer none): the ops parsed so far and not yet taken
 */
JsonArray *
symfonic_extraction_filter_get_ops (SymfonicExtractionFilter *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->ops;
}

/**
 * symfonic_extraction_filter_take_ops:
 * @self: a filter
 *
 * Returns: (transfer full): the ops parsed so far; the filter starts a new
 *   empty list
 */
JsonArray *
symfonic_extraction_filter_take_ops (SymfonicExtractionFilter *self)
{
  JsonArray *ops;

  g_return_val_if_fail (self != NULL, NULL);

  ops = g_steal_pointer (&self->ops);
  self->ops = json_array_new ();

  return ops;
}

/**
 * symfonic_extraction_filter_get_dropped:
 * @self: a filter
 *
 * Returns: how many blocks this filter dropped (malformed, too large or
 *   unterminated)
 */
guint
symfonic_extraction_filter_get_dropped (SymfonicExtractionFilter *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->dropped;
}
