/* test-json-tokens.c: what the one JSON tokenizer decides, read both ways
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <symfonic.h>

#include "symfonic-json-scan-private.h"

/* The strict reader and the provider-frame scan take their tokens from one
 * lexer. Each case is a document whose answer that lexer decides: a
 * string's escapes and surrogates, a number at a limit, a literal, the
 * whitespace and the end of the input, the depth. Each is read by
 * symfonic_json_parse() and by symfonic_json_scan(), alone and through a
 * memo of a frame it differs from in one string, and each must give the
 * literal answer of its row: the decoded string, or the strict reader's
 * message, which the scan refuses too. */

enum { SLOT_S, SLOT_N };

static const SymfonicJsonScanMember flat[] = {
  { "s", SYMFONIC_JSON_SCAN_STRING, SLOT_S, NULL },
  { "n", SYMFONIC_JSON_SCAN_COUNT, SLOT_N, NULL },
  { NULL },
};

/* A table that names itself: the scan nests as deep as the input does,
 * up to the lexer's bound. */
static const SymfonicJsonScanMember nest[] = {
  { "o", SYMFONIC_JSON_SCAN_OBJECT, 0, nest },
  { "a", SYMFONIC_JSON_SCAN_FIRST, 0, nest },
  { "s", SYMFONIC_JSON_SCAN_STRING, SLOT_S, NULL },
  { NULL },
};

typedef struct
{
  const char *data;
  gssize      length;   /* -1: up to the NUL */
  /* what both read of the member "s", when the strict reader takes it */
  const char *value;
  /* the strict reader's message, when it refuses the document */
  const char *error;
} Case;

/* The member "s" of the innermost object the tree holds in "o" and "a",
 * where the scan keeps it too. */
static const char *
innermost_s (JsonNode *node)
{
  while (node != NULL && JSON_NODE_HOLDS_OBJECT (node))
    {
      JsonObject *object = json_node_get_object (node);
      JsonArray *array;

      if (json_object_has_member (object, "s"))
        return json_object_get_string_member (object, "s");
      node = json_object_get_member (object, "o");
      if (node == NULL && json_object_has_member (object, "a"))
        {
          array = json_object_get_array_member (object, "a");
          node = json_array_get_length (array) > 0 ? json_array_get_element (array, 0) : NULL;
        }
    }

  return NULL;
}

/* Whether the scan takes @data, and if so, that its "s" is @value. */
static gboolean
scan_takes (const SymfonicJsonScanMember *members,
            SymfonicJsonScanMemo         *memo,
            const char                   *data,
            gsize                         length,
            const char                   *value)
{
  g_autoptr(GString) text = g_string_new (NULL);
  const char *slots[SYMFONIC_JSON_SCAN_SLOTS];

  if (!symfonic_json_scan (data, length, members, memo, text, slots))
    return FALSE;
  g_assert_cmpstr (slots[SLOT_S], ==, value);
  return TRUE;
}

/* @c read by the strict reader, and by the scan alone and through a memo
 * that last took @before; @taken says whether the scan takes a document
 * the strict reader takes. */
static void
assert_both (const SymfonicJsonScanMember *members,
             const Case                   *c,
             const char                   *before,
             gboolean                      taken)
{
  gsize length = c->length < 0 ? strlen (c->data) : (gsize) c->length;
  g_autoptr(SymfonicJsonScanMemo) memo = symfonic_json_scan_memo_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) root = symfonic_json_parse (c->data, length, SYMFONIC_JSON_MAX_DEPTH, &error);

  if (c->error != NULL)
    {
      g_assert_null (root);
      g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST);
      g_assert_cmpstr (error->message, ==, c->error);
      taken = FALSE;
    }
  else
    {
      g_assert_no_error (error);
      g_assert_true (JSON_NODE_HOLDS_OBJECT (root));
      g_assert_cmpstr (innermost_s (root), ==, c->value);
    }

  g_assert_cmpint (scan_takes (members, NULL, c->data, length, c->value), ==, taken);
  g_assert_true (scan_takes (members, memo, before, strlen (before), "x"));
  g_assert_cmpint (scan_takes (members, memo, c->data, length, c->value), ==, taken);
}

/* One frame with the literal @s in it, and the frame the memo takes
 * before: only that literal differs, so that the memo reads it alone, in
 * a view of the input that ends where the literal ought to. */
#define FRAME(s) "{\"s\":" s ",\"t\":1}"
#define BEFORE FRAME ("\"x\"")

static void
test_strings (void)
{
  static const Case cases[] = {
    { FRAME ("\"plain\""), -1, "plain", NULL },
    { FRAME ("\"\""), -1, "", NULL },
    { FRAME ("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\""), -1, "\"\\/\b\f\n\r\t", NULL },
    { FRAME ("\"\\u0041\\u00e9\\u20AC\""), -1, "A\xc3\xa9\xe2\x82\xac", NULL },
    { FRAME ("\"\\u0001\\u001f\\u007F\""), -1, "\x01\x1f\x7f", NULL },
    { FRAME ("\"\\u0022\""), -1, "\"", NULL },
    { FRAME ("\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\""), -1, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", NULL },
    { FRAME ("\"\x7f\""), -1, "\x7f", NULL },
    /* surrogate pairs: the least and the greatest, either case */
    { FRAME ("\"\\ud83d\\ude00\""), -1, "\xf0\x9f\x98\x80", NULL },
    { FRAME ("\"\\uD83D\\uDE00\""), -1, "\xf0\x9f\x98\x80", NULL },
    { FRAME ("\"\\ud800\\udc00\""), -1, "\xf0\x90\x80\x80", NULL },
    { FRAME ("\"\\udbff\\udfff\""), -1, "\xf4\x8f\xbf\xbf", NULL },
    /* what json-glib cannot hold, and lone halves */
    { FRAME ("\"a\\u0000b\""), -1, NULL, "Invalid JSON at byte 7: NUL character in a string" },
    { FRAME ("\"\\ud83d\""), -1, NULL, "Invalid JSON at byte 6: unpaired UTF-16 surrogate" },
    { FRAME ("\"\\ude00\""), -1, NULL, "Invalid JSON at byte 6: unpaired UTF-16 surrogate" },
    { FRAME ("\"\\ude00\\ud83d\""), -1, NULL, "Invalid JSON at byte 6: unpaired UTF-16 surrogate" },
    { FRAME ("\"\\ud83d\\ud83d\""), -1, NULL, "Invalid JSON at byte 6: unpaired UTF-16 surrogate" },
    { FRAME ("\"\\ud83d\\u0041\""), -1, NULL, "Invalid JSON at byte 6: unpaired UTF-16 surrogate" },
    { FRAME ("\"\\ud83dx\""), -1, NULL, "Invalid JSON at byte 6: unpaired UTF-16 surrogate" },
    { FRAME ("\"\\ud83d\\n\""), -1, NULL, "Invalid JSON at byte 6: unpaired UTF-16 surrogate" },
    { FRAME ("\"\\ue000\""), -1, "\xee\x80\x80", NULL },
    /* escapes that are not */
    { FRAME ("\"\\x41\""), -1, NULL, "Invalid JSON at byte 6: invalid escape in a string" },
    { FRAME ("\"\\U0041\""), -1, NULL, "Invalid JSON at byte 6: invalid escape in a string" },
    { FRAME ("\"\\u00g1\""), -1, NULL, "Invalid JSON at byte 6: invalid escape in a string" },
    { FRAME ("\"\\u+041\""), -1, NULL, "Invalid JSON at byte 6: invalid escape in a string" },
    /* raw bytes a string may not hold */
    { FRAME ("\"a\x01\""), -1, NULL, "Invalid JSON at byte 7: control character in a string" },
    { FRAME ("\"a\tb\""), -1, NULL, "Invalid JSON at byte 7: control character in a string" },
    { "{\"s\":\"a\0b\",\"t\":1}", 17, NULL, "Invalid JSON at byte 7: control character in a string" },
    { FRAME ("\"\\n\xff\""), -1, NULL, "Invalid JSON at byte 8: invalid UTF-8" },
    { FRAME ("\"\xed\xa0\xbd\""), -1, NULL, "Invalid JSON at byte 6: invalid UTF-8" },
    /* an escape at the end of the frame's literal, where the memo's view
     * of the input ends: it must not read on into the rest */
    { FRAME ("\"a\\\\\""), -1, "a\\", NULL },
    { FRAME ("\"a\\\""), -1, NULL, "Invalid JSON at byte 11: expected a comma or '}'" },
    { FRAME ("\"\\u00\""), -1, NULL, "Invalid JSON at byte 6: invalid escape in a string" },
    { FRAME ("\"\\ud83d\\ude\""), -1, NULL, "Invalid JSON at byte 6: unpaired UTF-16 surrogate" },
    /* and at the end of the input itself */
    { "{\"s\":\"ab\\", -1, NULL, "Invalid JSON at byte 8: invalid escape in a string" },
    { "{\"s\":\"ab\\u12", -1, NULL, "Invalid JSON at byte 8: invalid escape in a string" },
    { "{\"s\":\"\\ud83d\\ude0", -1, NULL, "Invalid JSON at byte 6: unpaired UTF-16 surrogate" },
    { "{\"s\":\"\\ud83d", -1, NULL, "Invalid JSON at byte 6: unpaired UTF-16 surrogate" },
    { "{\"s\":\"ab", -1, NULL, "Invalid JSON at byte 8: the input ends inside a string" },
    { "{\"s\":\"ab\\n", -1, NULL, "Invalid JSON at byte 10: the input ends inside a string" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_test_message ("case %u", i);
      assert_both (flat, &cases[i], BEFORE, TRUE);
    }
}

/* Strings are read a byte at a time for their first 16 bytes, then eight
 * at a time: an escape, a byte past ASCII or one a string may not hold,
 * and the closing quote, must be found wherever they fall across those
 * boundaries, both ways. */
static void
test_strings_every_position (void)
{
  static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN";
  static const struct { const char *in; const char *value; const char *what; } pieces[] = {
    { "\\n", "\n", NULL },
    { "\\\\", "\\", NULL },
    { "\\\"", "\"", NULL },
    { "\\u00e9", "\xc3\xa9", NULL },
    { "\\ud83d\\ude00", "\xf0\x9f\x98\x80", NULL },
    { "\xe2\x82\xac", "\xe2\x82\xac", NULL },
    { "\\u0000", NULL, "NUL character in a string" },
    { "\\ud83d", NULL, "unpaired UTF-16 surrogate" },
    { "\\q", NULL, "invalid escape in a string" },
    { "\x1f", NULL, "control character in a string" },
    { "\xc3(", NULL, "invalid UTF-8" },
  };

  for (gsize n = 0; n <= strlen (letters); n++)
    for (guint k = 0; k < G_N_ELEMENTS (pieces); k++)
      for (gsize at = 0; at <= n; at++)
        {
          g_autoptr(GString) data = g_string_new ("{\"s\":\"");
          g_autoptr(GString) value = g_string_new (NULL);
          g_autofree char *error = NULL;
          Case c = { NULL, -1, NULL, NULL };

          g_string_append_len (data, letters, at);
          g_string_append (data, pieces[k].in);
          g_string_append_len (data, letters + at, n - at);
          g_string_append (data, "\",\"t\":1}");
          c.data = data->str;
          if (pieces[k].what != NULL)
            {
              c.error = error = g_strdup_printf ("Invalid JSON at byte %" G_GSIZE_FORMAT ": %s", 6 + at,
                                                 pieces[k].what);
            }
          else
            {
              g_string_append_len (value, letters, at);
              g_string_append (value, pieces[k].value);
              g_string_append_len (value, letters + at, n - at);
              c.value = value->str;
            }

          g_test_message ("piece %u at %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT, k, at, n);
          assert_both (flat, &c, BEFORE, TRUE);
        }
}

typedef struct
{
  Case        c;
  /* whether the scan takes it, when the strict reader does */
  gboolean    taken;
  /* the count's digits, as the scan keeps them, and the integer the
   * strict reader makes of them; NULL when "n" is not a count */
  const char *count;
} NumberCase;

/* A count is a whole number the scan keeps; any other number is stepped
 * over, and only those that cannot overflow a double are taken. */
static void
test_numbers (void)
{
  static const NumberCase cases[] = {
    { { "{\"n\":0}", -1, NULL, NULL }, TRUE, "0" },
    { { "{\"n\":7,\"x\":-0}", -1, NULL, NULL }, TRUE, "7" },
    /* the most digits a count may have, and one more */
    { { "{\"n\":999999999999999999}", -1, NULL, NULL }, TRUE, "999999999999999999" },
    { { "{\"n\":1000000000000000000}", -1, NULL, NULL }, FALSE, NULL },
    { { "{\"n\":9223372036854775807}", -1, NULL, NULL }, FALSE, NULL },
    { { "{\"n\":9223372036854775808}", -1, NULL, NULL }, FALSE, NULL },
    { { "{\"n\":-1}", -1, NULL, NULL }, FALSE, NULL },
    { { "{\"n\":-0}", -1, NULL, NULL }, FALSE, NULL },
    { { "{\"n\":1.0}", -1, NULL, NULL }, FALSE, NULL },
    { { "{\"n\":1e2}", -1, NULL, NULL }, FALSE, NULL },
    { { "{\"n\":null}", -1, NULL, NULL }, TRUE, NULL },
    { { "{\"n\":\"1\"}", -1, NULL, NULL }, FALSE, NULL },
    /* numbers stepped over: none with an exponent, none longer than
     * 64 bytes, however valid */
    { { "{\"x\":-9223372036854775809,\"y\":0.5,\"z\":-0.0}", -1, NULL, NULL }, TRUE, NULL },
    { { "{\"x\":1E2}", -1, NULL, NULL }, FALSE, NULL },
    { { "{\"x\":1e-400}", -1, NULL, NULL }, FALSE, NULL },
    { { "{\"x\":0.10000000000000000000000000000000000000000000000000000000000001}", -1, NULL, NULL },
      TRUE, NULL },
    { { "{\"x\":0.100000000000000000000000000000000000000000000000000000000000001}", -1, NULL, NULL },
      FALSE, NULL },
    /* refused by both */
    { { "{\"n\":01}", -1, NULL, "Invalid JSON at byte 6: leading zero in a number" }, FALSE, NULL },
    { { "{\"x\":-01}", -1, NULL, "Invalid JSON at byte 7: leading zero in a number" }, FALSE, NULL },
    { { "{\"n\":-}", -1, NULL, "Invalid JSON at byte 6: invalid number" }, FALSE, NULL },
    { { "{\"x\":1.}", -1, NULL, "Invalid JSON at byte 7: invalid number" }, FALSE, NULL },
    { { "{\"x\":.5}", -1, NULL, "Invalid JSON at byte 5: expected a value" }, FALSE, NULL },
    { { "{\"x\":1e+}", -1, NULL, "Invalid JSON at byte 8: invalid number" }, FALSE, NULL },
    { { "{\"x\":+1}", -1, NULL, "Invalid JSON at byte 5: expected a value" }, FALSE, NULL },
    { { "{\"x\":1e400}", -1, NULL, "Invalid JSON at byte 5: number out of range" }, FALSE, NULL },
    { { "{\"n\":1", -1, NULL, "Invalid JSON at byte 6: the input ends inside an array or object" }, FALSE, NULL },
    /* literals, which both step over */
    { { "{\"x\":true,\"y\":false,\"z\":null}", -1, NULL, NULL }, TRUE, NULL },
    { { "{\"x\":tru}", -1, NULL, "Invalid JSON at byte 5: expected a value" }, FALSE, NULL },
    { { "{\"x\":nul", -1, NULL, "Invalid JSON at byte 5: expected a value" }, FALSE, NULL },
    { { "{\"x\":nulll}", -1, NULL, "Invalid JSON at byte 9: expected a comma or '}'" }, FALSE, NULL },
    { { "{\"x\":True}", -1, NULL, "Invalid JSON at byte 5: expected a value" }, FALSE, NULL },
    /* whitespace is the four bytes RFC 8259 names, and one document
     * is all there is */
    { { " \t\r\n{ \"s\" :\t\"x\" ,\r\n\"n\" : 3 }\n ", -1, "x", NULL }, TRUE, "3" },
    { { "{\f\"s\":\"x\"}", -1, NULL, "Invalid JSON at byte 1: expected a member name" }, FALSE, NULL },
    { { "{\"s\":\"x\"}\v", -1, NULL, "Invalid JSON at byte 9: text after the document" }, FALSE, NULL },
    { { "{\"s\":\"x\"}{}", -1, NULL, "Invalid JSON at byte 9: text after the document" }, FALSE, NULL },
    { { "{\"s\":\"x\"}\0", 10, NULL, "Invalid JSON at byte 9: text after the document" }, FALSE, NULL },
    { { "", -1, NULL, "Invalid JSON at byte 0: the input ends where a value belongs" }, FALSE, NULL },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const NumberCase *c = &cases[i];
      gsize length = c->c.length < 0 ? strlen (c->c.data) : (gsize) c->c.length;
      g_autoptr(GString) text = g_string_new (NULL);
      const char *slots[SYMFONIC_JSON_SCAN_SLOTS];

      g_test_message ("case %u: %s", i, c->c.data);
      assert_both (flat, &c->c, "{\"s\":\"x\"}", c->taken);
      if (c->count == NULL)
        continue;

      g_assert_true (symfonic_json_scan (c->c.data, length, flat, NULL, text, slots));
      g_assert_cmpstr (slots[SLOT_N], ==, c->count);
      {
        g_autoptr(JsonNode) root = symfonic_json_parse (c->c.data, length, SYMFONIC_JSON_MAX_DEPTH, NULL);

        g_assert_cmpint (json_object_get_int_member (json_node_get_object (root), "n"), ==,
                         g_ascii_strtoll (c->count, NULL, 10));
      }
    }
}

/* @depth containers, each an object holding the next in "o", or when
 * @arrays an array holding it too, around {"s":"deep"} or, for an array
 * last, []. */
static char *
nested (guint    depth,
        gboolean arrays)
{
  GString *text = g_string_new (NULL);
  guint i;

  for (i = 0; i + 1 < depth; i++)
    g_string_append (text, !arrays ? "{\"o\":" : i % 2 == 0 ? "{\"a\":" : "[");
  g_string_append (text, !arrays || i % 2 == 0 ? "{\"s\":\"deep\"}" : "[]");
  for (i = depth - 1; i > 0; i--)
    g_string_append (text, !arrays || (i - 1) % 2 == 0 ? "}" : "]");

  return g_string_free (text, FALSE);
}

/* The depth bound counts open containers: one at exactly the bound is
 * read, one more is refused by both, before it is read into. */
static void
test_depth (void)
{
  g_autofree char *objects_64 = nested (SYMFONIC_JSON_MAX_DEPTH, FALSE);
  g_autofree char *objects_65 = nested (SYMFONIC_JSON_MAX_DEPTH + 1, FALSE);
  g_autofree char *arrays_64 = nested (SYMFONIC_JSON_MAX_DEPTH, TRUE);
  g_autofree char *arrays_65 = nested (SYMFONIC_JSON_MAX_DEPTH + 1, TRUE);
  g_autofree char *deep = nested (100000, FALSE);
  const Case cases[] = {
    { "{\"s\":\"deep\"}", -1, "deep", NULL },
    { objects_64, -1, "deep", NULL },
    { arrays_64, -1, NULL, NULL },
    { objects_65, -1, NULL, "Invalid JSON at byte 320: nesting deeper than 64 levels" },
    { arrays_65, -1, NULL, "Invalid JSON at byte 192: nesting deeper than 64 levels" },
    { deep, -1, NULL, "Invalid JSON at byte 320: nesting deeper than 64 levels" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_test_message ("case %u", i);
      assert_both (nest, &cases[i], "{\"s\":\"x\"}", TRUE);
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/json-tokens/strings", test_strings);
  g_test_add_func ("/json-tokens/strings-every-position", test_strings_every_position);
  g_test_add_func ("/json-tokens/numbers", test_numbers);
  g_test_add_func ("/json-tokens/depth", test_depth);

  return g_test_run ();
}
