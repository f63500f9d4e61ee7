/* symfonic-json-string-private.h: the plain runs of a JSON string
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <string.h>

#include <glib.h>

G_BEGIN_DECLS

/* Eight bytes at a time: the high bit of each byte that is a quote, a
 * backslash or below 0x20. (x - n·ones) & ~x marks the lowest byte below n
 * (n up to 0x80) exactly, and never one where no byte is; bytes above it
 * may be marked too, so only the lowest mark is read. A zero byte after an
 * XOR is a byte below 1. */
static inline guint64
symfonic_json_word_stops (guint64 word)
{
  const guint64 ones = G_GUINT64_CONSTANT (0x0101010101010101);
  guint64 quote = word ^ (ones * '"');
  guint64 backslash = word ^ (ones * '\\');

  return (((word - ones * 0x20) & ~word) |
          ((quote - ones) & ~quote) |
          ((backslash - ones) & ~backslash)) & (ones * 0x80);
}

/* Steps from @pos over whole words of bytes that a JSON string holds as
 * they are, ORing them into @high, and returns the first quote, backslash
 * or control character, or where fewer than eight bytes are left. For
 * long strings (the whole text of a terminal): not inlined, so that the
 * byte loops around it, which short strings take, stay small enough to
 * be. */
G_GNUC_UNUSED static G_GNUC_NO_INLINE gsize
symfonic_json_plain_words (const guchar *data,
                           gsize         pos,
                           gsize         length,
                           guint64      *high)
{
  while (length - pos >= sizeof (guint64))
    {
      guint64 word;
      guint64 stops;

      memcpy (&word, data + pos, sizeof word);
      /* the first byte in memory is the lowest */
      word = GUINT64_FROM_LE (word);
      stops = symfonic_json_word_stops (word);
      if (stops != 0)
        {
          /* GCC and clang: the index of the lowest bit set */
          guint before = (guint) __builtin_ctzll (stops) / 8;

          *high |= word & ((G_GUINT64_CONSTANT (1) << (8 * before)) - 1);
          return pos + before;
        }
      *high |= word;
      pos += sizeof word;
    }

  return pos;
}

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
