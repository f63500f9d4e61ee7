/* test-json-writer.c: the JSON strings and numbers frames are written with
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-json-private.h"

static void
assert_appended (const char *text,
                 gssize      len,
                 const char *expected)
{
  g_autoptr(GString) out = g_string_new ("x:");
  gsize n = len < 0 ? strlen (text) : (gsize) len;

  symfonic_json_append_string (out, text, len);
  g_assert_cmpstr (out->str, ==, expected);
  g_assert_cmpuint (out->len, ==, strlen (expected));
  g_assert_cmpuint (symfonic_json_string_length (text, n), ==, out->len - strlen ("x:"));
}

static void
test_json_writer_string (void)
{
  assert_appended ("", -1, "x:\"\"");
  assert_appended (" sky looks blue", -1, "x:\" sky looks blue\"");
  assert_appended ("a\"b\\c/d", -1, "x:\"a\\\"b\\\\c/d\"");
  assert_appended ("\n\r\t\b\f", -1, "x:\"\\n\\r\\t\\b\\f\"");
  assert_appended ("\x01\x0b\x1f\x7f", -1, "x:\"\\u0001\\u000b\\u001f\x7f\"");
  assert_appended ("a\0b", 3, "x:\"a\\u0000b\"");
  assert_appended ("blue \xc3\xa9 \xe2\x9c\x93", -1, "x:\"blue \xc3\xa9 \xe2\x9c\x93\"");
  /* only the first @len bytes */
  assert_appended ("plain\"quote", 5, "x:\"plain\"");
}

/* The room is taken at once, whatever the string held before. */
static void
test_json_writer_string_grows (void)
{
  g_autoptr(GString) out = g_string_sized_new (4);
  g_autofree char *quotes = g_strnfill (1000, '"');

  symfonic_json_append_string (out, quotes, -1);
  g_assert_cmpuint (out->len, ==, 2002);
  g_assert_cmpint (out->str[0], ==, '"');
  g_assert_cmpint (out->str[1], ==, '\\');
  g_assert_cmpint (out->str[2], ==, '"');
  g_assert_cmpint (out->str[2000], ==, '"');
  g_assert_cmpint (out->str[2001], ==, '"');
  g_assert_cmpint (out->str[2002], ==, '\0');
}

static void
assert_uint (guint64     value,
             const char *expected)
{
  char buffer[SYMFONIC_JSON_UINT_MAX + 1];
  char *end = symfonic_json_write_uint (buffer, value);

  *end = '\0';
  g_assert_cmpstr (buffer, ==, expected);
}

static void
test_json_writer_uint (void)
{
  assert_uint (0, "0");
  assert_uint (7, "7");
  assert_uint (10, "10");
  assert_uint (99, "99");
  assert_uint (1234567890, "1234567890");
  assert_uint (G_MAXUINT64, "18446744073709551615");
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/json-writer/string", test_json_writer_string);
  g_test_add_func ("/json-writer/string-grows", test_json_writer_string_grows);
  g_test_add_func ("/json-writer/uint", test_json_writer_uint);

  return g_test_run ();
}
