/* test-tag-matcher.c: the public tag matcher against a plain search
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <symfonic.h>

/* Tags whose prefixes overlap themselves in every way the borders must
 * get right, and the library's own. */
static const char * const tags[] = {
  "a", "aa", "ab", "aab", "aba", "abab", "abaab", "aabaaab", "abcabd", "<memory_ops>", "</memory_ops>",
  "[semantic", "\xC3\xA9\xC3\xA9t\xC3\xA9",
};

/* How many bytes of @tag end at @text[@end - 1], found by trying every
 * length from the longest; with @proper, less than all @end bytes. */
static gsize
naive_matched (const char *tag,
               const char *text,
               gsize       end,
               gboolean    proper)
{
  gsize n = strlen (tag);

  for (gsize k = MIN (n, proper ? end - 1 : end); k > 0; k--)
    {
      if (memcmp (text + end - k, tag, k) == 0)
        return k;
    }

  return 0;
}

static void
check_text (const SymfonicTagMatcher *matcher,
            const char               *text)
{
  gsize matched = 0;
  gsize length = strlen (text);

  for (gsize i = 0; i < length; i++)
    {
      matched = symfonic_tag_matcher_advance (matcher, matched, text[i]);
      g_assert_cmpuint (matched, ==, naive_matched (matcher->text, text, i + 1, FALSE));
      /* overlapping matches go on from the border, as documented */
      if (matched == matcher->len)
        matched = matcher->border[matcher->len - 1];
    }
}

static void
test_tag_matcher_borders (void)
{
  for (guint t = 0; t < G_N_ELEMENTS (tags); t++)
    {
      g_auto(SymfonicTagMatcher) matcher = { 0 };
      gsize n = strlen (tags[t]);

      g_test_message ("tag “%s”", tags[t]);
      symfonic_tag_matcher_init (&matcher, tags[t]);
      g_assert_cmpstr (matcher.text, ==, tags[t]);
      g_assert_true (matcher.text != tags[t]);
      g_assert_cmpuint (matcher.len, ==, n);
      for (gsize i = 0; i < n; i++)
        g_assert_cmpuint (matcher.border[i], ==, naive_matched (tags[t], tags[t], i + 1, TRUE));
    }
}

/* Every tag over random texts of its own bytes and a stranger, where
 * partial matches abound; and over texts built of its own prefixes. */
static void
test_tag_matcher_random_texts (void)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (42);

  for (guint t = 0; t < G_N_ELEMENTS (tags); t++)
    {
      g_auto(SymfonicTagMatcher) matcher = { 0 };
      gsize n = strlen (tags[t]);

      symfonic_tag_matcher_init (&matcher, tags[t]);
      for (guint round = 0; round < 200; round++)
        {
          g_autoptr(GString) text = g_string_new (NULL);
          guint length = g_rand_int_range (rand, 0, 64);

          for (guint i = 0; i < length; i++)
            {
              if (g_rand_int_range (rand, 0, 5) == 0)
                g_string_append_c (text, 'z');
              else if (g_rand_boolean (rand))
                g_string_append_len (text, tags[t], g_rand_int_range (rand, 1, n + 1));
              else
                g_string_append_c (text, tags[t][g_rand_int_range (rand, 0, n)]);
            }
          check_text (&matcher, text->str);
        }
    }
}

static void
test_tag_matcher_clear (void)
{
  SymfonicTagMatcher matcher = { 0 };

  symfonic_tag_matcher_clear (&matcher);
  symfonic_tag_matcher_init (&matcher, "<tag>");
  symfonic_tag_matcher_clear (&matcher);
  g_assert_null (matcher.text);
  g_assert_null (matcher.border);
  g_assert_cmpuint (matcher.len, ==, 0);
  symfonic_tag_matcher_clear (&matcher);
}

static void
test_tag_matcher_empty_tag (void)
{
  SymfonicTagMatcher matcher = { 0 };

  if (!g_test_undefined ())
    return;

  g_test_expect_message ("Symfonic", G_LOG_LEVEL_CRITICAL, "*tag != NULL*");
  symfonic_tag_matcher_init (&matcher, "");
  g_test_assert_expected_messages ();
  g_assert_null (matcher.text);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/tag-matcher/borders", test_tag_matcher_borders);
  g_test_add_func ("/tag-matcher/random-texts", test_tag_matcher_random_texts);
  g_test_add_func ("/tag-matcher/clear", test_tag_matcher_clear);
  g_test_add_func ("/tag-matcher/empty-tag", test_tag_matcher_empty_tag);

  return g_test_run ();
}
