/* symfonic-utf8.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-utf8.h"

/**
 * symfonic_utf8_unfinished_suffix:
 * @text: (array length=length) (element-type guint8): bytes of UTF-8 text,
 *   possibly cut anywhere
 * @length: how many
 *
 * How many bytes at the end of @text begin a character that is not
 * complete yet. A stage that withholds them until the next piece arrives
 * never releases half a character, however an upstream split its text.
 *
 * Returns: 0 to 3
 */
gsize
symfonic_utf8_unfinished_suffix (const char *text,
                                 gsize       length)
{
  gsize back = 0;
  guchar lead;
  gsize need;

  g_return_val_if_fail (text != NULL || length == 0, 0);

  /* at most three continuation bytes can follow a lead byte */
  while (back < length && back < 3 && ((guchar) text[length - 1 - back] & 0xC0) == 0x80)
    back++;
  if (back == length)
    return 0;

  lead = text[length - 1 - back];
  need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;

  return need > back + 1 ? back + 1 : 0;
}
