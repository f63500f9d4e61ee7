/* symfonic-release-line.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-release-line.h"

/**
 * symfonic_numeric_release_line:
 * @version: a version string, such as `"11.0.0.dev3+local"`
 *
 * The leading numeric release segment of @version. Left to right, each
 * dot-separated part contributes its leading digits; the scan stops at the
 * first part without leading digits, and after the first part that had
 * anything after its digits. Tolerant on purpose: `"11.0rc1"` is on the
 * 11.0 line, not on the fallback's.
 *
 * `"11.0.0.dev3+local"` → `"11.0.0"`, `"11.0rc1"` → `"11.0"`,
 * `"9.13.0.dev0"` → `"9.13.0"`, `"abc"` → `"0"`.
 *
 * Returns: (transfer full): the digits joined with `.`, or `"0"`
 */
char *
symfonic_numeric_release_line (const char *version)
{
  g_autoptr(GString) line = g_string_new (NULL);
  const char *part;

  g_return_val_if_fail (version != NULL, NULL);

  part = version;
  for (;;)
    {
      const char *end = strchr (part, '.');
      gsize part_len = end != NULL ? (gsize) (end - part) : strlen (part);
      gsize digits = 0;

      while (digits < part_len && g_ascii_isdigit (part[digits]))
        digits++;
      if (digits == 0)
        break;

      if (line->len > 0)
        g_string_append_c (line, '.');
      g_string_append_len (line, part, digits);

      if (digits != part_len || end == NULL)
        break;
      part = end + 1;
    }

  if (line->len == 0)
    g_string_append_c (line, '0');

  return g_string_free (g_steal_pointer (&line), FALSE);
}

static int
compare_part (const char *a,
              const char *b)
{
  gsize la, lb;
  int cmp;

  /* numbers of any length, without overflow: drop leading zeros, then the
   * longer is larger, then digit by digit */
  while (*a == '0')
    a++;
  while (*b == '0')
    b++;
  la = strlen (a);
  lb = strlen (b);
  if (la != lb)
    return la < lb ? -1 : 1;

  cmp = strcmp (a, b);
  return (cmp > 0) - (cmp < 0);
}

/**
 * symfonic_compare_release_lines:
 * @a: a version
 * @b: another version
 *
 * Compares the numeric release lines of two versions, zero-padded, so that
 * `"11"`, `"11.0"` and `"11.0.0rc1"` are equal.
 *
 * Returns: negative, 0 or positive as @a is before, on or after @b's line
 */
int
symfonic_compare_release_lines (const char *a,
                                const char *b)
{
  g_autofree char *line_a = NULL;
  g_autofree char *line_b = NULL;
  g_auto(GStrv) parts_a = NULL;
  g_auto(GStrv) parts_b = NULL;
  guint na, nb;

  g_return_val_if_fail (a != NULL, 0);
  g_return_val_if_fail (b != NULL, 0);

  line_a = symfonic_numeric_release_line (a);
  line_b = symfonic_numeric_release_line (b);
  parts_a = g_strsplit (line_a, ".", -1);
  parts_b = g_strsplit (line_b, ".", -1);
  na = g_strv_length (parts_a);
  nb = g_strv_length (parts_b);

  /* the shorter line is padded with zeros */
  for (guint i = 0; i < MAX (na, nb); i++)
    {
      int cmp = compare_part (i < na ? parts_a[i] : "0", i < nb ? parts_b[i] : "0");

      if (cmp != 0)
        return cmp;
    }

  return 0;
}

/**
 * symfonic_publishes_text_deltas:
 * @version: a version or release line
 *
 * Whether @version's line publishes the text-delta chunk contract, that is,
 * is at or after %SYMFONIC_TEXT_DELTA_CONTRACT_VERSION. At or after, not
 * equal: 11.1 and 12.0 keep the contract they inherited.
 *
 * Returns: %TRUE for 11.0 and later
 */
gboolean
symfonic_publishes_text_deltas (const char *version)
{
  g_return_val_if_fail (version != NULL, FALSE);

  return symfonic_compare_release_lines (version, SYMFONIC_TEXT_DELTA_CONTRACT_VERSION) >= 0;
}
