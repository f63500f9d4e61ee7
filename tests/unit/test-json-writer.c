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

/* Plain text is checked and copied eight bytes at a time: a byte to
 * escape, or one past ASCII, must come out right wherever it falls in or
 * across those words, also with a second one further on. */
static void
test_json_writer_string_every_position (void)
{
  static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN";
  static const struct { const char *in; const char *out; } bytes[] = {
    { "\"", "\\\"" },
    { "\\", "\\\\" },
    { "\n", "\\n" },
    { "\x01", "\\u0001" },
    { "\x1f", "\\u001f" },
    { "\x7f", "\x7f" },
    { " ", " " },
    { "\xc3\xa9", "\xc3\xa9" },
    { "\xe2\x82\xac", "\xe2\x82\xac" },
  };
  gsize n = strlen (letters);

  for (guint b = 0; b < G_N_ELEMENTS (bytes); b++)
    for (gsize at = 0; at < n; at++)
      for (guint twice = 0; twice < 2; twice++)
        {
          /* alone, or again a word and a bit further on */
          gsize second = twice ? at + 11 : G_MAXSIZE;
          g_autoptr(GString) text = g_string_new (NULL);
          g_autoptr(GString) expected = g_string_new ("x:\"");

          for (gsize i = 0; i < n; i++)
            {
              gboolean special = i == at || i == second;

              g_string_append (text, special ? bytes[b].in : (char[]) { letters[i], '\0' });
              g_string_append (expected, special ? bytes[b].out : (char[]) { letters[i], '\0' });
            }
          g_string_append_c (expected, '"');

          g_test_message ("byte %u at %" G_GSIZE_FORMAT ", twice: %u", b, at, twice);
          assert_appended (text->str, text->len, expected->str);
        }
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

/* A tree built in code, so the expectation does not come from a reader:
 * members in the order they were set (not the hash's), integers at both
 * ends of their range, and containers nested in each other. */
static void
test_json_writer_node (void)
{
  g_autoptr(JsonObject) object = json_object_new ();
  g_autoptr(JsonArray) array = json_array_new ();
  g_autoptr(JsonNode) root = json_node_new (JSON_NODE_OBJECT);
  g_autoptr(GString) out = g_string_new ("x:");
  const char * const names[] = { "zeta", "alpha", "mid", "b", "a", "yy", "c", "q", "k" };

  json_array_add_int_element (array, G_MININT64);
  json_array_add_int_element (array, -1);
  json_array_add_int_element (array, 0);
  json_array_add_int_element (array, G_MAXINT64);
  json_array_add_null_element (array);
  json_array_add_boolean_element (array, TRUE);
  json_array_add_boolean_element (array, FALSE);
  json_array_add_object_element (array, json_object_new ());
  json_array_add_array_element (array, json_array_new ());
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    json_object_set_int_member (object, names[i], i);
  json_object_set_array_member (object, "list", g_steal_pointer (&array));
  json_object_set_string_member (object, "s", "t\"u");
  json_node_set_object (root, object);

  symfonic_json_append_node (out, root);
  g_assert_cmpstr (out->str, ==,
                   "x:{\"zeta\":0,\"alpha\":1,\"mid\":2,\"b\":3,\"a\":4,\"yy\":5,\"c\":6,\"q\":7,\"k\":8,"
                   "\"list\":[-9223372036854775808,-1,0,9223372036854775807,null,true,false,{},[]],"
                   "\"s\":\"t\\\"u\"}");
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/json-writer/string", test_json_writer_string);
  g_test_add_func ("/json-writer/string-every-position", test_json_writer_string_every_position);
  g_test_add_func ("/json-writer/string-grows", test_json_writer_string_grows);
  g_test_add_func ("/json-writer/uint", test_json_writer_uint);
  g_test_add_func ("/json-writer/node", test_json_writer_node);

  return g_test_run ();
}
