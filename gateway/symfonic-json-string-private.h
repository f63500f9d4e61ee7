/* symfonic-json-string-private.h: the plain runs of a JSON string
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Steps from @pos over a run of bytes that a JSON string holds as they
 * are, up to a quote, a backslash, a control character or @length, and
 * returns where it stopped. Those three are ASCII, so a run never splits a
 * UTF-8 sequence and validates on its own; @ascii says that it has no byte
 * past ASCII, which is valid as it is: nearly every string an upstream
 * sends. Header-only, as the library's strict reader and the provider
 * plugins' frame scan both read strings this way. */
static inline gsize
symfonic_json_string_run (const guchar *data,
                          gsize         pos,
                          gsize         length,
                          gboolean     *ascii)
{
  enum { PLAIN, STOP, HIGH };
  static const guint8 kinds[256] = {
    [0x00 ... 0x1F] = STOP,
    ['"'] = STOP,
    ['\\'] = STOP,
    [0x80 ... 0xFF] = HIGH,
  };
  guint8 seen = PLAIN;

  while (pos < length)
    {
      guint8 kind = kinds[data[pos]];

      if (kind == STOP)
        break;
      seen |= kind;
      pos++;
    }
  *ascii = seen == PLAIN;

  return pos;
}

G_END_DECLS
