/* symfonic-string-private.h: appending to a GString on the per-event path
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <string.h>

#include <glib.h>

G_BEGIN_DECLS

/* A frame is a handful of short pieces, written on the per-event path:
 * the hot path writes into the string's room itself (an escaped string,
 * a number), and appends without a call where it can. */

/* Room for @n more bytes at the end of @out, grown only when short, to be
 * written and then closed with symfonic_string_commit(). */
static inline char *
symfonic_string_reserve (GString *out,
                         gsize    n)
{
  if (G_UNLIKELY (out->len + n >= out->allocated_len))
    {
      gsize len = out->len;

      g_string_set_size (out, len + n);
      g_string_truncate (out, len);
    }

  return out->str + out->len;
}

/* Ends @out at @end, within the room symfonic_string_reserve() gave. */
static inline void
symfonic_string_commit (GString *out,
                        char    *end)
{
  out->len = end - out->str;
  *end = '\0';
}

#if GLIB_CHECK_VERSION (2, 76, 0)

/* GLib 2.76 inlines both */

static inline void
symfonic_string_clear (GString *out)
{
  g_string_truncate (out, 0);
}

static inline void
symfonic_string_append_len (GString    *out,
                            const char *s,
                            gsize       len)
{
  g_string_append_len (out, s, len);
}

#else

/* GLib before 2.76 (fixed in 2.76) truncates and appends only through
 * out-of-line calls that re-check their arguments. */

/* g_string_truncate (out, 0), without its call and checks. */
static inline void
symfonic_string_clear (GString *out)
{
  out->len = 0;
  out->str[0] = '\0';
}

static inline void
symfonic_string_append_len (GString    *out,
                            const char *s,
                            gsize       len)
{
  char *end = symfonic_string_reserve (out, len);

  memcpy (end, s, len);
  symfonic_string_commit (out, end + len);
}

#endif

/* Appends a string literal, whose length the compiler knows. */
#define symfonic_string_append_literal(out, literal) \
  symfonic_string_append_len ((out), "" literal "", sizeof (literal) - 1)

G_END_DECLS
