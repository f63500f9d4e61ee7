/* symfonic-scratch.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-scratch-private.h"
#include "symfonic-string-private.h"

/* one rare large event does not leave its size behind for the thread's life */
#define KEPT_BYTES (64 * 1024)

void
symfonic_scratch_free (gpointer scratch)
{
  g_string_free (scratch, TRUE);
}

/* An empty buffer, valid until the next call with @key on this thread:
 * what is written there is copied out before the hook returns. */
GString *
symfonic_scratch_get (GPrivate *key)
{
  GString *text = g_private_get (key);

  if (text == NULL || text->allocated_len > KEPT_BYTES)
    {
      text = g_string_sized_new (256);
      g_private_replace (key, text);
    }
  symfonic_string_clear (text);

  return text;
}
