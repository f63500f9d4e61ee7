/* test-json.c: strict, depth-bounded JSON reading
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <symfonic.h>

static JsonNode *
parse (const char  *text,
       gsize        length,
       GError     **error)
{
  return symfonic_json_parse (text, length, SYMFONIC_JSON_MAX_DEPTH, error);
}

typedef struct
{
  const char *text;
  const char *written;  /* the tree as json-glib writes it */
} Accepted;

static void
test_json_accepts (void)
{
  static const Accepted cases[] = {
    { "{}", "{}" },
    { "[]", "[]" },
    { " \t\r\n{ } \n", "{}" },
    { "0", "0" },
    { "-0", "0" },
    { "true", "true" },
    { "false", "false" },
    { "null", "null" },
    { "\"\"", "\"\"" },
    { "[1,\"a\",true,false,null,{},[]]", "[1,\"a\",true,false,null,{},[]]" },
    { "{\"b\":1,\"a\":2,\"c\":{\"z\":[],\"y\":null}}", "{\"b\":1,\"a\":2,\"c\":{\"z\":[],\"y\":null}}" },
    { "[ 1 , [ 2 , [ ] ] , { \"k\" : \"v\" } ]", "[1,[2,[]],{\"k\":\"v\"}]" },
    { "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\\"\\\\/\\b\\f\\n\\r\\t\"" },
    { "\"\\u0041\\u00e9\\u20AC\"", "\"A\xC3\xA9\xE2\x82\xAC\"" },
    { "\"\\ud83c\\udf89\"", "\"\xF0\x9F\x8E\x89\"" },            /* a surrogate pair */
    { "\"na\xC3\xAFve \xF0\x9F\x8E\x89\"", "\"na\xC3\xAFve \xF0\x9F\x8E\x89\"" },
    { "\"\x7F\"", "\"\\u007f\"" },                                   /* DEL is no control character in JSON */
    { "{\"a\":{\"a\":{\"a\":1}}}", "{\"a\":{\"a\":{\"a\":1}}}" },   /* one name at every level */
    { "{\"a\":1,\"A\":2}", "{\"a\":1,\"A\":2}" },
    { "[\"x\",{\"k\":\"v\"},\"y\"]", "[\"x\",{\"k\":\"v\"},\"y\"]" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(JsonNode) node = NULL;
      g_autofree char *written = NULL;

      g_test_message ("case %u: %s", i, cases[i].text);
      node = parse (cases[i].text, strlen (cases[i].text), &error);
      g_assert_no_error (error);
      g_assert_nonnull (node);
      written = json_to_string (node, FALSE);
      g_assert_cmpstr (written, ==, cases[i].written);
    }
}

typedef struct
{
  const char *text;
  gssize      length;   /* -1: up to the NUL */
  gsize       offset;   /* the byte the error names */
  const char *what;
} Refused;

static void
test_json_refuses (void)
{
  static const Refused cases[] = {
    { "", -1, 0, "the input ends where a value belongs" },
    { " \t\r\n ", -1, 5, "the input ends where a value belongs" },
    { "/* comment */", -1, 0, "expected a value" },
    { "// comment\n", -1, 0, "expected a value" },
    { "# comment\n{}", -1, 0, "expected a value" },
    { "{} // comment", -1, 3, "text after the document" },
    { "[1 /* c */]", -1, 3, "expected a comma or ']'" },
    { "{}{}", -1, 2, "text after the document" },
    { "{\"a\":1} {\"a\":1}", -1, 8, "text after the document" },
    { "1 2", -1, 2, "text after the document" },
    { "{} x", -1, 3, "text after the document" },
    { "{}\0", 3, 2, "text after the document" },
    { "\xEF\xBB\xBF{}", -1, 0, "expected a value" },            /* a byte order mark */
    { "{'a':1}", -1, 1, "expected a member name" },
    { "['a']", -1, 1, "expected a value" },
    { "{a:1}", -1, 1, "expected a member name" },
    { "[1,]", -1, 3, "expected a value" },
    { "{\"a\":1,}", -1, 7, "expected a member name" },
    { "[,1]", -1, 1, "expected a value" },
    { "[1 2]", -1, 3, "expected a comma or ']'" },
    { "{\"a\" 1}", -1, 5, "expected a colon after a member name" },
    { "{\"a\":1 \"b\":2}", -1, 7, "expected a comma or '}'" },
    { "[1}", -1, 2, "expected a comma or ']'" },
    { "{\"a\":1]", -1, 6, "expected a comma or '}'" },
    { "[", -1, 1, "the input ends where a value belongs" },
    { "[1", -1, 2, "the input ends inside an array or object" },
    { "{\"a\":", -1, 5, "the input ends where a value belongs" },
    { "{\"a\":1,\"b\":2,\"a\":3}", -1, 13, "duplicate member name" },
    { "{\"a\":1,\"\\u0061\":2}", -1, 7, "duplicate member name" },
    { "{\"x\":{\"a\":[],\"a\":{}}}", -1, 13, "duplicate member name" },
    { "NaN", -1, 0, "expected a value" },
    { "Infinity", -1, 0, "expected a value" },
    { "-Infinity", -1, 1, "invalid number" },
    { "nul", -1, 0, "expected a value" },
    { "True", -1, 0, "expected a value" },
    { "truex", -1, 4, "text after the document" },
    { "01", -1, 1, "leading zero in a number" },
    { "-01", -1, 2, "leading zero in a number" },
    { "+1", -1, 0, "expected a value" },
    { "1.", -1, 2, "invalid number" },
    { ".5", -1, 0, "expected a value" },
    { "1e", -1, 2, "invalid number" },
    { "1e+", -1, 3, "invalid number" },
    { "0x10", -1, 1, "text after the document" },
    { "1e400", -1, 0, "number out of range" },
    { "[-1e400]", -1, 1, "number out of range" },
    { "\"abc", -1, 4, "the input ends inside a string" },
    { "\"a\tb\"", -1, 2, "control character in a string" },
    { "\"a\nb\"", -1, 2, "control character in a string" },
    { "\"a\0b\"", 5, 2, "control character in a string" },
    { "\"s\\u0000t\"", -1, 2, "NUL character in a string" },
    { "{\"s\\u0000t\":1}", -1, 3, "NUL character in a string" },
    { "\"\\x41\"", -1, 1, "invalid escape in a string" },
    { "\"\\'\"", -1, 1, "invalid escape in a string" },
    { "\"\\u12\"", -1, 1, "invalid escape in a string" },
    { "\"\\u12G4\"", -1, 1, "invalid escape in a string" },
    { "\"\\ud83c\"", -1, 1, "unpaired UTF-16 surrogate" },
    { "\"\\ud83cx\"", -1, 1, "unpaired UTF-16 surrogate" },
    { "\"\\ud83c\\u0041\"", -1, 1, "unpaired UTF-16 surrogate" },
    { "\"\\ud83c\\ud83c\"", -1, 1, "unpaired UTF-16 surrogate" },
    { "\"\\udf89\"", -1, 1, "unpaired UTF-16 surrogate" },
    { "\"\\udf89\\ud83c\"", -1, 1, "unpaired UTF-16 surrogate" },
    { "\"ab\xFF\"", -1, 3, "invalid UTF-8" },
    { "\"\xC3\"", -1, 1, "invalid UTF-8" },                        /* a lead byte alone */
    { "\"\x80\"", -1, 1, "invalid UTF-8" },                        /* a continuation alone */
    { "\"\xC0\xAF\"", -1, 1, "invalid UTF-8" },                    /* overlong '/' */
    { "\"\xED\xA0\x80\"", -1, 1, "invalid UTF-8" },                /* an encoded surrogate */
    { "\"\xF4\x90\x80\x80\"", -1, 1, "invalid UTF-8" },            /* above U+10FFFF */
    { "{\"\xFF\":1}", -1, 2, "invalid UTF-8" },
    { "[\xFF]", -1, 1, "expected a value" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const Refused *c = &cases[i];
      gsize length = c->length < 0 ? strlen (c->text) : (gsize) c->length;
      g_autoptr(GError) error = NULL;
      g_autoptr(JsonNode) node = NULL;
      g_autofree char *message = g_strdup_printf ("Invalid JSON at byte %" G_GSIZE_FORMAT ": %s", c->offset, c->what);

      g_test_message ("case %u", i);
      node = parse (c->text, length, &error);
      g_assert_null (node);
      g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST);
      g_assert_cmpstr (error->message, ==, message);
    }
}

static void
test_json_numbers (void)
{
  static const struct {
    const char *text;
    GType       type;
    gint64      integer;
    double      real;
  } cases[] = {
    { "0", G_TYPE_INT64, 0, 0 },
    { "-0", G_TYPE_INT64, 0, 0 },
    { "42", G_TYPE_INT64, 42, 0 },
    { "9223372036854775807", G_TYPE_INT64, G_MAXINT64, 0 },
    { "-9223372036854775808", G_TYPE_INT64, G_MININT64, 0 },
    { "9223372036854775808", G_TYPE_DOUBLE, 0, 9223372036854775808.0 },
    { "-9223372036854775809", G_TYPE_DOUBLE, 0, -9223372036854775808.0 },
    { "18446744073709551616", G_TYPE_DOUBLE, 0, 18446744073709551616.0 },
    { "0.5", G_TYPE_DOUBLE, 0, 0.5 },
    { "-1.25e2", G_TYPE_DOUBLE, 0, -125.0 },
    { "1E+2", G_TYPE_DOUBLE, 0, 100.0 },
    { "1e-2", G_TYPE_DOUBLE, 0, 0.01 },
    { "2.0", G_TYPE_DOUBLE, 0, 2.0 },
    { "1e-400", G_TYPE_DOUBLE, 0, 0.0 },
    { "1.7976931348623157e308", G_TYPE_DOUBLE, 0, 1.7976931348623157e308 },
    /* longer than any buffer a number might be copied into */
    { "0.1000000000000000000000000000000000000000000000000000000000000000000000000000000000", G_TYPE_DOUBLE, 0, 0.1 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(JsonNode) node = NULL;

      g_test_message ("case %u: %s", i, cases[i].text);
      node = parse (cases[i].text, strlen (cases[i].text), &error);
      g_assert_no_error (error);
      g_assert_true (JSON_NODE_HOLDS_VALUE (node));
      g_assert_true (json_node_get_value_type (node) == cases[i].type);
      if (cases[i].type == G_TYPE_INT64)
        g_assert_cmpint (json_node_get_int (node), ==, cases[i].integer);
      else
        g_assert_cmpfloat (json_node_get_double (node), ==, cases[i].real);
    }
}

static char *
nested (guint       depth,
        const char *open,
        const char *inner,
        const char *close)
{
  GString *text = g_string_new (NULL);

  for (guint i = 0; i < depth; i++)
    g_string_append (text, open);
  g_string_append (text, inner);
  for (guint i = 0; i < depth; i++)
    g_string_append (text, close);

  return g_string_free (text, FALSE);
}

static void
assert_depth_refused (const char *text,
                      guint       max_depth,
                      const char *message)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = symfonic_json_parse (text, strlen (text), max_depth, &error);

  g_assert_null (node);
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST);
  g_assert_cmpstr (error->message, ==, message);
}

static void
test_json_depth (void)
{
  g_autofree char *arrays_64 = nested (64, "[", "1", "]");
  g_autofree char *arrays_65 = nested (65, "[", "1", "]");
  g_autofree char *empty_65 = nested (65, "[", "", "]");
  g_autofree char *objects_64 = nested (64, "{\"a\":", "1", "}");
  g_autofree char *objects_65 = nested (65, "{\"a\":", "1", "}");
  g_autofree char *deep = nested (200000, "[", "", "]");
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(JsonNode) scalar = NULL;
  g_autoptr(GError) error = NULL;
  JsonNode *inner;
  guint levels = 0;

  node = parse (arrays_64, strlen (arrays_64), &error);
  g_assert_no_error (error);
  for (inner = node; JSON_NODE_HOLDS_ARRAY (inner); inner = json_array_get_element (json_node_get_array (inner), 0))
    levels++;
  g_assert_cmpuint (levels, ==, 64);
  g_assert_cmpint (json_node_get_int (inner), ==, 1);
  g_clear_pointer (&node, json_node_unref);

  node = parse (objects_64, strlen (objects_64), &error);
  g_assert_no_error (error);
  g_assert_nonnull (node);

  assert_depth_refused (arrays_65, SYMFONIC_JSON_MAX_DEPTH, "Invalid JSON at byte 64: nesting deeper than 64 levels");
  assert_depth_refused (empty_65, SYMFONIC_JSON_MAX_DEPTH, "Invalid JSON at byte 64: nesting deeper than 64 levels");
  assert_depth_refused (objects_65, SYMFONIC_JSON_MAX_DEPTH, "Invalid JSON at byte 320: nesting deeper than 64 levels");
  assert_depth_refused (deep, SYMFONIC_JSON_MAX_DEPTH, "Invalid JSON at byte 64: nesting deeper than 64 levels");
  /* the limit counts open containers, not siblings */
  assert_depth_refused ("[[],[[]]]", 2, "Invalid JSON at byte 5: nesting deeper than 2 levels");
  assert_depth_refused ("[]", 0, "Invalid JSON at byte 0: nesting deeper than 0 levels");

  scalar = symfonic_json_parse ("\"flat\"", 6, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (json_node_get_string (scalar), ==, "flat");
  g_clear_pointer (&node, json_node_unref);
  node = symfonic_json_parse ("[[],[],[]]", 10, 2, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (json_array_get_length (json_node_get_array (node)), ==, 3);
}

/* Without a NUL after the document, as in the middle of a request body. */
static void
test_json_length_bounds_input (void)
{
  static const char text[] = "{\"a\":[1,2]}garbage";
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *written = NULL;
  g_autofree char *cut = g_memdup2 ("[12", 3);
  g_autoptr(JsonNode) partial = NULL;

  node = parse (text, 11, &error);
  g_assert_no_error (error);
  written = json_to_string (node, FALSE);
  g_assert_cmpstr (written, ==, "{\"a\":[1,2]}");

  partial = parse (cut, 3, &error);
  g_assert_null (partial);
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST);
  g_assert_cmpstr (error->message, ==, "Invalid JSON at byte 3: the input ends inside an array or object");
}

/* A long string is read eight plain bytes at a time: an escape, a byte
 * past ASCII or one the string may not hold raw must be found wherever it
 * falls in or across those words, in the word of the closing quote, and in
 * the bytes left after the last whole word. */
static void
test_json_strings_every_position (void)
{
  static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN";
  static const struct { const char *in; const char *value; const char *what; } pieces[] = {
    { "\\n", "\n", NULL },
    { "\\\"", "\"", NULL },
    { "\\\\", "\\", NULL },
    { "\\u00e9", "\xc3\xa9", NULL },
    { "\xc3\xa9", "\xc3\xa9", NULL },
    { "\xe2\x82\xac", "\xe2\x82\xac", NULL },
    { "\x7f", "\x7f", NULL },
    { " ", " ", NULL },
    { "\x01", NULL, "control character in a string" },
    { "\x1f", NULL, "control character in a string" },
    { "\xff", NULL, "invalid UTF-8" },
    { "\xc3(", NULL, "invalid UTF-8" },
  };

  /* strings of 32 to 40 letters, so that the closing quote falls at every
   * place in a word, alone or followed by more of the document */
  for (gsize n = 32; n <= strlen (letters); n++)
    for (guint followed = 0; followed < 2; followed++)
      for (guint k = 0; k < G_N_ELEMENTS (pieces); k++)
        for (gsize at = 0; at <= n; at++)
          {
            g_autoptr(GString) text = g_string_new (followed ? "[\"" : "\"");
            g_autoptr(GString) value = g_string_new (NULL);
            g_autoptr(GError) error = NULL;
            g_autoptr(JsonNode) node = NULL;
            JsonNode *string;

            g_string_append_len (text, letters, at);
            g_string_append (text, pieces[k].in);
            g_string_append_len (text, letters + at, n - at);
            g_string_append (text, followed ? "\",\"0123456789abcdef\"]" : "\"");

            g_test_message ("piece %u at %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT ", followed: %u", k, at, n, followed);
            node = parse (text->str, text->len, &error);
            if (pieces[k].what != NULL)
              {
                g_autofree char *message = g_strdup_printf ("Invalid JSON at byte %" G_GSIZE_FORMAT ": %s",
                                                            at + 1 + followed, pieces[k].what);

                g_assert_null (node);
                g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST);
                g_assert_cmpstr (error->message, ==, message);
                continue;
              }

            g_string_append_len (value, letters, at);
            g_string_append (value, pieces[k].value);
            g_string_append_len (value, letters + at, n - at);
            g_assert_no_error (error);
            string = followed ? json_array_get_element (json_node_get_array (node), 0) : node;
            g_assert_cmpstr (json_node_get_string (string), ==, value->str);
          }
}

/* An ordinary json-glib tree: members in document order, parents set. */
static void
test_json_tree (void)
{
  static const char text[] = "{\"z\":1,\"m\":[true],\"a\":{\"k\":null}}";
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = parse (text, strlen (text), &error);
  g_autoptr(GList) members = NULL;
  JsonObject *object;
  JsonNode *m;

  g_assert_no_error (error);
  object = json_node_get_object (node);
  members = json_object_get_members (object);
  g_assert_cmpuint (g_list_length (members), ==, 3);
  g_assert_cmpstr (g_list_nth_data (members, 0), ==, "z");
  g_assert_cmpstr (g_list_nth_data (members, 1), ==, "m");
  g_assert_cmpstr (g_list_nth_data (members, 2), ==, "a");

  m = json_object_get_member (object, "m");
  g_assert_true (json_node_get_parent (m) == node);
  g_assert_true (json_node_get_parent (json_array_get_element (json_node_get_array (m), 0)) == m);
  g_assert_null (json_node_get_parent (node));
}

/* The public writer: the same text, whole, with its length; a double
 * reads back the same, and text past ASCII stays as it is. */
static void
test_json_write (void)
{
  g_autoptr(JsonNode) root = json_from_string ("{\"model\":\"m\",\"messages\":[{\"role\":\"user\","
                                               "\"content\":\"h\\u00e9\\n\\\"\"}],\"t\":0.25,"
                                               "\"n\":[1,-2],\"o\":{},\"z\":null,\"b\":false}", NULL);
  g_autofree char *text = NULL;
  gsize length = 0;

  g_assert_nonnull (root);
  text = symfonic_json_write (root, &length);
  g_assert_cmpstr (text, ==, "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hé\\n\\\"\"}],"
                             "\"t\":0.25,\"n\":[1,-2],\"o\":{},\"z\":null,\"b\":false}");
  g_assert_cmpuint (length, ==, strlen (text));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/json/accepts", test_json_accepts);
  g_test_add_func ("/json/refuses", test_json_refuses);
  g_test_add_func ("/json/strings-every-position", test_json_strings_every_position);
  g_test_add_func ("/json/numbers", test_json_numbers);
  g_test_add_func ("/json/depth", test_json_depth);
  g_test_add_func ("/json/length-bounds-input", test_json_length_bounds_input);
  g_test_add_func ("/json/tree", test_json_tree);
  g_test_add_func ("/json/write", test_json_write);

  return g_test_run ();
}
