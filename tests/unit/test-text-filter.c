/* test-text-filter.c: the text-filter helper, with a small filter of its own
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <symfonic.h>

/* The filter under test removes every "<cut>" and withholds a trailing
 * beginning of one, the way the extraction and citation filters withhold
 * a possible tag. It also counts the pieces it is given that are not whole
 * UTF-8 characters: with valid input, the helper promises there are none. */

#define TAG "<cut>"

G_DECLARE_FINAL_TYPE (TestCutFilter, test_cut_filter, TEST, CUT_FILTER, SymfonicTextFilter)

struct _TestCutFilter
{
  SymfonicTextFilter  parent_instance;

  GString            *withheld[2];
  guint               n_pieces;
  guint               n_invalid;
};

G_DEFINE_FINAL_TYPE (TestCutFilter, test_cut_filter, SYMFONIC_TYPE_TEXT_FILTER)

/* How long a tail of @text could still grow into the tag. */
static gsize
tag_prefix_at_end (const GString *text)
{
  for (gsize n = MIN (text->len, strlen (TAG) - 1); n > 0; n--)
    {
      if (memcmp (text->str + text->len - n, TAG, n) == 0)
        return n;
    }

  return 0;
}

static void
test_cut_filter_filter (SymfonicTextFilter  *filter,
                        SymfonicTextChannel  channel,
                        const char          *text,
                        gsize                length,
                        GString             *out)
{
  TestCutFilter *self = TEST_CUT_FILTER (filter);
  GString *withheld = self->withheld[channel];
  const char *found;
  gsize keep;

  g_assert_cmpuint (length, >, 0);
  if (!g_utf8_validate (text, length, NULL))
    self->n_invalid++;
  self->n_pieces++;

  g_string_append_len (withheld, text, length);
  while ((found = strstr (withheld->str, TAG)) != NULL)
    g_string_erase (withheld, found - withheld->str, strlen (TAG));
  keep = tag_prefix_at_end (withheld);
  g_string_append_len (out, withheld->str, withheld->len - keep);
  g_string_erase (withheld, 0, withheld->len - keep);
}

static void
test_cut_filter_flush (SymfonicTextFilter  *filter,
                       SymfonicTextChannel  channel,
                       GString             *out)
{
  TestCutFilter *self = TEST_CUT_FILTER (filter);

  g_string_append_len (out, self->withheld[channel]->str, self->withheld[channel]->len);
  g_string_truncate (self->withheld[channel], 0);
}

static void
test_cut_filter_finalize (GObject *object)
{
  TestCutFilter *self = TEST_CUT_FILTER (object);

  for (guint i = 0; i < G_N_ELEMENTS (self->withheld); i++)
    g_string_free (self->withheld[i], TRUE);

  G_OBJECT_CLASS (test_cut_filter_parent_class)->finalize (object);
}

static void
test_cut_filter_class_init (TestCutFilterClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = test_cut_filter_finalize;
  SYMFONIC_TEXT_FILTER_CLASS (klass)->filter = test_cut_filter_filter;
  SYMFONIC_TEXT_FILTER_CLASS (klass)->flush = test_cut_filter_flush;
}

static void
test_cut_filter_init (TestCutFilter *self)
{
  for (guint i = 0; i < G_N_ELEMENTS (self->withheld); i++)
    self->withheld[i] = g_string_new (NULL);
}

/* Feeds @piece and checks that what came out of it is whole characters. */
static void
feed (SymfonicTextFilter  *filter,
      SymfonicTextChannel  channel,
      const char          *piece,
      gsize                length,
      GString             *output)
{
  g_autoptr(GString) out = g_string_new (NULL);

  symfonic_text_filter_feed (filter, channel, piece, length, out);
  g_assert_true (g_utf8_validate (out->str, out->len, NULL));
  g_string_append_len (output, out->str, out->len);
}

static char *
filter_split (const char  *input,
              const gsize *cuts,
              guint        n_cuts)
{
  g_autoptr(TestCutFilter) filter = g_object_new (test_cut_filter_get_type (), NULL);
  GString *output = g_string_new (NULL);
  gsize at = 0;

  for (guint i = 0; i <= n_cuts; i++)
    {
      gsize next = i < n_cuts ? cuts[i] : strlen (input);

      feed (SYMFONIC_TEXT_FILTER (filter), SYMFONIC_TEXT_CHANNEL_ANSWER, input + at, next - at, output);
      at = next;
    }
  symfonic_text_filter_flush (SYMFONIC_TEXT_FILTER (filter), SYMFONIC_TEXT_CHANNEL_ANSWER, output);
  g_assert_cmpuint (filter->n_invalid, ==, 0);

  return g_string_free (output, FALSE);
}

/* Cut in two at every byte offset, and byte by byte: always the same text. */
static void
test_text_filter_every_split (void)
{
  /* é and ö are two bytes, ✓ three, 😀 four; the tag is cut around them */
  const char *input = "h\xC3\xA9llo <cut>w\xC3\xB6rld<cu\xE2\x9C\x93 <cut>\xF0\x9F\x98\x80<cut";
  const char *expected = "h\xC3\xA9llo w\xC3\xB6rld<cu\xE2\x9C\x93 \xF0\x9F\x98\x80<cut";
  gsize len = strlen (input);
  g_autofree gsize *every = g_new (gsize, len);

  for (gsize cut = 0; cut <= len; cut++)
    {
      g_autofree char *output = filter_split (input, &cut, 1);

      g_test_message ("cut at %" G_GSIZE_FORMAT, cut);
      g_assert_cmpstr (output, ==, expected);
    }

  for (gsize i = 0; i < len; i++)
    every[i] = i;
  {
    g_autofree char *output = filter_split (input, every, len);

    g_assert_cmpstr (output, ==, expected);
  }
}

/* Half a character is withheld until the rest arrives; the filter never
 * sees it. */
static void
test_text_filter_utf8_split (void)
{
  g_autoptr(TestCutFilter) filter = g_object_new (test_cut_filter_get_type (), NULL);
  SymfonicTextFilter *text_filter = SYMFONIC_TEXT_FILTER (filter);
  g_autoptr(GString) out = g_string_new (NULL);

  symfonic_text_filter_feed (text_filter, SYMFONIC_TEXT_CHANNEL_ANSWER, "ab\xF0\x9F", 4, out);
  g_assert_cmpstr (out->str, ==, "ab");
  symfonic_text_filter_feed (text_filter, SYMFONIC_TEXT_CHANNEL_ANSWER, "\x98", 1, out);
  g_assert_cmpstr (out->str, ==, "ab");
  g_assert_cmpuint (filter->n_pieces, ==, 1);
  symfonic_text_filter_feed (text_filter, SYMFONIC_TEXT_CHANNEL_ANSWER, "\x80" "c", 2, out);
  g_assert_cmpstr (out->str, ==, "ab\xF0\x9F\x98\x80" "c");

  /* an empty piece changes nothing */
  symfonic_text_filter_feed (text_filter, SYMFONIC_TEXT_CHANNEL_ANSWER, "\xC3", 1, out);
  symfonic_text_filter_feed (text_filter, SYMFONIC_TEXT_CHANNEL_ANSWER, "", 0, out);
  g_assert_cmpstr (out->str, ==, "ab\xF0\x9F\x98\x80" "c");
  symfonic_text_filter_feed (text_filter, SYMFONIC_TEXT_CHANNEL_ANSWER, "\xA9", 1, out);
  g_assert_cmpstr (out->str, ==, "ab\xF0\x9F\x98\x80" "c\xC3\xA9");
  g_assert_cmpuint (filter->n_invalid, ==, 0);
}

/* A character the text ends in the middle of is released by the flush as
 * it stands: nothing is lost, and the channel starts afresh. */
static void
test_text_filter_flush_unfinished (void)
{
  g_autoptr(TestCutFilter) filter = g_object_new (test_cut_filter_get_type (), NULL);
  SymfonicTextFilter *text_filter = SYMFONIC_TEXT_FILTER (filter);
  g_autoptr(GString) out = g_string_new (NULL);

  symfonic_text_filter_feed (text_filter, SYMFONIC_TEXT_CHANNEL_ANSWER, "x\xE2\x9C", 3, out);
  g_assert_cmpstr (out->str, ==, "x");
  symfonic_text_filter_flush (text_filter, SYMFONIC_TEXT_CHANNEL_ANSWER, out);
  g_assert_cmpstr (out->str, ==, "x\xE2\x9C");

  g_string_truncate (out, 0);
  symfonic_text_filter_feed (text_filter, SYMFONIC_TEXT_CHANNEL_ANSWER, "\x93", 1, out);
  symfonic_text_filter_flush (text_filter, SYMFONIC_TEXT_CHANNEL_ANSWER, out);
  g_assert_cmpstr (out->str, ==, "\x93");
}

/* "<cu" at the end may become the tag; "p" shows it is not one. */
static void
test_text_filter_tag_prefix_not_a_tag (void)
{
  g_autoptr(TestCutFilter) filter = g_object_new (test_cut_filter_get_type (), NULL);
  SymfonicTextFilter *text_filter = SYMFONIC_TEXT_FILTER (filter);
  g_autoptr(GString) out = g_string_new (NULL);

  symfonic_text_filter_feed (text_filter, SYMFONIC_TEXT_CHANNEL_ANSWER, "a <cu", 5, out);
  g_assert_cmpstr (out->str, ==, "a ");
  symfonic_text_filter_feed (text_filter, SYMFONIC_TEXT_CHANNEL_ANSWER, "p of tea", 8, out);
  g_assert_cmpstr (out->str, ==, "a <cup of tea");

  /* and a prefix still open at the end is released by the flush */
  symfonic_text_filter_feed (text_filter, SYMFONIC_TEXT_CHANNEL_ANSWER, " <cut", 5, out);
  g_assert_cmpstr (out->str, ==, "a <cup of tea ");
  symfonic_text_filter_flush (text_filter, SYMFONIC_TEXT_CHANNEL_ANSWER, out);
  g_assert_cmpstr (out->str, ==, "a <cup of tea <cut");
}

/* The answer and the thinking are split apart: neither completes the
 * other's tag or character. */
static void
test_text_filter_channels_apart (void)
{
  g_autoptr(TestCutFilter) filter = g_object_new (test_cut_filter_get_type (), NULL);
  SymfonicTextFilter *text_filter = SYMFONIC_TEXT_FILTER (filter);
  g_autoptr(GString) answer = g_string_new (NULL);
  g_autoptr(GString) thinking = g_string_new (NULL);

  symfonic_text_filter_feed (text_filter, SYMFONIC_TEXT_CHANNEL_ANSWER, "one <cu", 7, answer);
  symfonic_text_filter_feed (text_filter, SYMFONIC_TEXT_CHANNEL_THINKING, "t> two\xC3", 7, thinking);
  g_assert_cmpstr (answer->str, ==, "one ");
  g_assert_cmpstr (thinking->str, ==, "t> two");

  symfonic_text_filter_feed (text_filter, SYMFONIC_TEXT_CHANNEL_ANSWER, "t>\xE2\x9C", 4, answer);
  g_assert_cmpstr (answer->str, ==, "one ");
  symfonic_text_filter_feed (text_filter, SYMFONIC_TEXT_CHANNEL_ANSWER, "\x93", 1, answer);
  symfonic_text_filter_feed (text_filter, SYMFONIC_TEXT_CHANNEL_THINKING, "\xA9", 1, thinking);
  g_assert_cmpstr (answer->str, ==, "one \xE2\x9C\x93");
  g_assert_cmpstr (thinking->str, ==, "t> two\xC3\xA9");
  g_assert_cmpuint (filter->n_invalid, ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/text-filter/every-split", test_text_filter_every_split);
  g_test_add_func ("/text-filter/utf8-split", test_text_filter_utf8_split);
  g_test_add_func ("/text-filter/flush-unfinished", test_text_filter_flush_unfinished);
  g_test_add_func ("/text-filter/tag-prefix-not-a-tag", test_text_filter_tag_prefix_not_a_tag);
  g_test_add_func ("/text-filter/channels-apart", test_text_filter_channels_apart);

  return g_test_run ();
}
