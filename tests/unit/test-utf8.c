/* test-utf8.c: withholding half a character
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <symfonic.h>

typedef struct
{
  const char *text;
  gsize       unfinished;
} Case;

static void
test_utf8_unfinished_suffix (void)
{
  static const Case cases[] = {
    { "", 0 },
    { "abc", 0 },
    { "na\xC3\xAF", 0 },                  /* ï, whole */
    { "na\xC3", 1 },                      /* ï, lead byte only */
    { "\xE2\x80\x94", 0 },                /* em dash, whole */
    { "a\xE2\x80", 2 },                   /* em dash, two of three */
    { "a\xE2", 1 },
    { "\xF0\x9F\x8E\x89", 0 },            /* 🎉, whole */
    { "x\xF0\x9F\x8E", 3 },               /* 🎉, three of four */
    { "x\xF0\x9F", 2 },
    { "x\xF0", 1 },
    { "\x80\x80\x80\x80", 0 },            /* no lead byte: nothing to wait for */
    { "a\xC3\xA9\xE6\x97", 2 },           /* é whole, then 日 cut */
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_test_message ("case %u", i);
      g_assert_cmpuint (symfonic_utf8_unfinished_suffix (cases[i].text, strlen (cases[i].text)), ==,
                        cases[i].unfinished);
    }
}

/* Every cut of a text with characters of every width withholds exactly
 * what keeps the released prefix valid. */
static void
test_utf8_every_cut (void)
{
  static const char text[] = "a\xC3\xA9\xE2\x80\x94\xF0\x9F\x8E\x89z";
  gsize length = strlen (text);

  for (gsize cut = 0; cut <= length; cut++)
    {
      gsize keep = cut - symfonic_utf8_unfinished_suffix (text, cut);

      g_assert_true (g_utf8_validate_len (text, keep, NULL));
      /* and nothing more than the cut character is held back */
      g_assert_true (keep == cut || !g_utf8_validate_len (text, cut, NULL));
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/utf8/unfinished-suffix", test_utf8_unfinished_suffix);
  g_test_add_func ("/utf8/every-cut", test_utf8_every_cut);

  return g_test_run ();
}
