/* symfonic-json.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "symfonic-error.h"
#include "symfonic-json.h"
#include "symfonic-json-lexer-private.h"
#include "symfonic-json-private.h"
#include "symfonic-string-private.h"

/* JSON from outside is read here in one pass, without recursion, straight
 * into an ordinary json-glib tree: strict RFC 8259 and bounded in depth,
 * so that hostile input can neither be read two ways nor exhaust a
 * worker's stack. json-glib 1.6 has neither a strict mode nor a depth
 * limit, and recurses once per nesting level; its strict mode (1.10) would
 * not bound the depth either, so this is the gateway's own bound, kept
 * whatever the version, and no JSON_CHECK_VERSION fences it. */

typedef struct
{
  SymfonicJsonLexer lex;
  /* the text of the string being read; an object's member name stays at
   * its start, NUL-terminated, while the member's value is read after it */
  GString          *text;
  GError          **error;
} Reader;

/* Every message names what is wrong and where, and never quotes the input. */
static gboolean
fail_at (Reader     *r,
         gsize       offset,
         const char *what)
{
  g_set_error (r->error, SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST,
               "Invalid JSON at byte %" G_GSIZE_FORMAT ": %s", offset, what);
  return FALSE;
}

static gboolean
fail (Reader     *r,
      const char *what)
{
  return fail_at (r, r->lex.pos, what);
}

/* Says what the lexer refused. Like every message a client reads in an
 * error body, these stay in English whatever the gateway's locale:
 * clients parse them. */
static gboolean
fail_token (Reader *r)
{
  static const char * const what[] = {
    [SYMFONIC_JSON_LEX_EXPECTED_VALUE] = "expected a value",
    [SYMFONIC_JSON_LEX_END_WHERE_VALUE] = "the input ends where a value belongs",
    [SYMFONIC_JSON_LEX_END_IN_STRING] = "the input ends inside a string",
    [SYMFONIC_JSON_LEX_CONTROL_CHARACTER] = "control character in a string",
    [SYMFONIC_JSON_LEX_INVALID_ESCAPE] = "invalid escape in a string",
    [SYMFONIC_JSON_LEX_NUL_CHARACTER] = "NUL character in a string",
    [SYMFONIC_JSON_LEX_UNPAIRED_SURROGATE] = "unpaired UTF-16 surrogate",
    [SYMFONIC_JSON_LEX_INVALID_UTF8] = "invalid UTF-8",
    [SYMFONIC_JSON_LEX_LEADING_ZERO] = "leading zero in a number",
    [SYMFONIC_JSON_LEX_INVALID_NUMBER] = "invalid number",
  };
  SymfonicJsonLexer *lex = &r->lex;

  if (lex->error == SYMFONIC_JSON_LEX_TOO_DEEP)
    {
      g_set_error (r->error, SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST,
                   "Invalid JSON at byte %" G_GSIZE_FORMAT ": nesting deeper than %u levels",
                   lex->error_at, lex->max_depth);
      return FALSE;
    }
  g_assert (lex->error > SYMFONIC_JSON_LEX_OK && lex->error < G_N_ELEMENTS (what));

  return fail_at (r, lex->error_at, what[lex->error]);
}

static gboolean
expect (Reader     *r,
        guchar      c,
        const char *what)
{
  return symfonic_json_lexer_skip_char (&r->lex, c) || fail (r, what);
}

/* Appends the string that starts at the lexer's pos (on its quote) to
 * r->text. */
static gboolean
read_string (Reader *r)
{
  return symfonic_json_lexer_read_string (&r->lex, r->text) || fail_token (r);
}

/* FALSE when the integer does not fit in a gint64. */
static gboolean
to_int64 (const guchar *text,
          gsize         length,
          gint64       *out)
{
  gboolean negative = text[0] == '-';
  guint64 limit = negative ? (guint64) G_MAXINT64 + 1 : (guint64) G_MAXINT64;
  guint64 magnitude = 0;

  for (gsize i = negative; i < length; i++)
    {
      guint digit = text[i] - '0';

      if (magnitude > (limit - digit) / 10)
        return FALSE;
      magnitude = magnitude * 10 + digit;
    }
  *out = negative ? -(gint64) (magnitude - 1) - 1 : (gint64) magnitude;
  return TRUE;
}

/* The number @token, just read: integers that fit are gint64, every
 * other number a double, as JsonParser reads them. */
static JsonNode *
number_node (Reader                  *r,
             const SymfonicJsonToken *token)
{
  const guchar *start = r->lex.data + token->start;
  gsize length = r->lex.pos - token->start;
  gboolean integral = (token->shape & (SYMFONIC_JSON_NUMBER_FRACTION | SYMFONIC_JSON_NUMBER_EXPONENT)) == 0;
  gint64 integer;
  char buffer[64];
  g_autofree char *long_text = NULL;
  char *text = buffer;
  double value;

  if (integral && to_int64 (start, length, &integer))
    return json_node_init_int (json_node_alloc (), integer);

  /* strtod needs a NUL-terminated copy */
  if (length >= sizeof buffer)
    text = long_text = g_malloc (length + 1);
  memcpy (text, start, length);
  text[length] = '\0';
  value = g_ascii_strtod (text, NULL);
  if (!isfinite (value))
    {
      fail_at (r, token->start, "number out of range");
      return NULL;
    }

  return json_node_init_double (json_node_alloc (), value);
}

/* One value at the lexer's pos; an array or object comes back empty, to
 * be filled by the caller. */
static JsonNode *
read_value (Reader *r)
{
  gsize start = r->text->len;
  guchar c = symfonic_json_lexer_peek (&r->lex);
  SymfonicJsonToken token;
  JsonNode *node;

  switch (c)
    {
    case '{':
    case '[':
      if (!symfonic_json_lexer_open (&r->lex))
        break;
      node = json_node_new (c == '{' ? JSON_NODE_OBJECT : JSON_NODE_ARRAY);
      if (c == '{')
        json_node_take_object (node, json_object_new ());
      else
        json_node_take_array (node, json_array_new ());
      return node;
    default:
      if (!symfonic_json_lexer_read_scalar (&r->lex, r->text, &token))
        break;
      switch (token.kind)
        {
        case SYMFONIC_JSON_TOKEN_STRING:
          node = json_node_init_string (json_node_alloc (), r->text->str + start);
          g_string_truncate (r->text, start);
          return node;
        case SYMFONIC_JSON_TOKEN_NUMBER:
          return number_node (r, &token);
        case SYMFONIC_JSON_TOKEN_TRUE:
          return json_node_init_boolean (json_node_alloc (), TRUE);
        case SYMFONIC_JSON_TOKEN_FALSE:
          return json_node_init_boolean (json_node_alloc (), FALSE);
        case SYMFONIC_JSON_TOKEN_NULL:
        default:
          return json_node_init_null (json_node_alloc ());
        }
    }

  fail_token (r);
  return NULL;
}

/* Reads `"name":` into the start of r->text and refuses a repeated name:
 * which of two values a reader keeps is not defined (RFC 8259 §4). */
static gboolean
read_member_name (Reader     *r,
                  JsonObject *object)
{
  gsize start;

  if (symfonic_json_lexer_peek (&r->lex) != '"')
    return fail (r, "expected a member name");
  start = r->lex.pos;
  g_string_truncate (r->text, 0);
  if (!read_string (r))
    return FALSE;
  if (json_object_has_member (object, r->text->str))
    return fail_at (r, start, "duplicate member name");
  /* values are read after the name's NUL */
  g_string_append_c (r->text, '\0');

  return expect (r, ':', "expected a colon after a member name");
}

static void
attach (Reader   *r,
        JsonNode *parent,
        JsonNode *node)
{
  json_node_set_parent (node, parent);
  if (JSON_NODE_HOLDS_ARRAY (parent))
    {
      json_array_add_element (json_node_get_array (parent), node);
    }
  else
    {
      json_object_set_member (json_node_get_object (parent), r->text->str, node);
      g_string_truncate (r->text, 0);
    }
}

/* The common shape of an upstream delta's data, read with the strict
 * reader's own rules but without building a tree: TRUE when @data is
 * exactly one object whose only member is @member (of @member_length
 * bytes, known where it is a literal) with a string value, which is left
 * decoded in @text. FALSE says nothing about validity: only
 * symfonic_json_parse() tells what else @data is. */
gboolean
symfonic_json_read_string_object (const char *data,
                                  gsize       length,
                                  const char *member,
                                  gsize       member_length,
                                  GString    *text)
{
  Reader reader = { .text = text };
  Reader *r = &reader;
  SymfonicJsonLexer *lex = &r->lex;

  symfonic_json_lexer_init (lex, data, length, SYMFONIC_JSON_MAX_DEPTH);
  symfonic_string_clear (text);
  if (!symfonic_json_lexer_skip_char (lex, '{') || symfonic_json_lexer_peek (lex) != '"')
    return FALSE;
  /* the member's name as upstreams write it, without escapes, is
   * compared where it lies */
  if (!symfonic_json_lexer_skip_name (lex, member, member_length) &&
      (!read_string (r) || text->len != member_length || memcmp (text->str, member, member_length) != 0))
    return FALSE;

  symfonic_string_clear (text);
  if (!symfonic_json_lexer_skip_char (lex, ':') || symfonic_json_lexer_peek (lex) != '"' || !read_string (r) ||
      !symfonic_json_lexer_skip_char (lex, '}'))
    return FALSE;

  return symfonic_json_lexer_at_end (lex);
}

/* An integer as the strict reader reads one, of at most 18 digits so
 * that it cannot overflow; FALSE for anything else, fractions and
 * exponents included, which are left to the general way. */
static gboolean
read_small_int (Reader *r,
                gint64 *value)
{
  SymfonicJsonToken token;
  gboolean negative;
  gint64 v = 0;

  if (!symfonic_json_lexer_read_scalar (&r->lex, NULL, &token) || token.kind != SYMFONIC_JSON_TOKEN_NUMBER ||
      (token.shape & (SYMFONIC_JSON_NUMBER_FRACTION | SYMFONIC_JSON_NUMBER_EXPONENT)) != 0)
    return FALSE;
  negative = (token.shape & SYMFONIC_JSON_NUMBER_NEGATIVE) != 0;
  if (r->lex.pos - token.start - negative > 18)
    return FALSE;
  for (gsize i = token.start + negative; i < r->lex.pos; i++)
    v = v * 10 + (r->lex.data[i] - '0');

  *value = negative ? -v : v;
  return TRUE;
}

/* Steps over `"name":` if the name stands next, unescaped, as upstreams
 * write it. */
static gboolean
skip_name (Reader     *r,
           const char *name)
{
  return symfonic_json_lexer_skip_name (&r->lex, name, strlen (name)) &&
         symfonic_json_lexer_skip_char (&r->lex, ':');
}

/* The shape of a terminal's data, `{"text":"...","duration_ms":N}` in
 * either order, read like symfonic_json_read_string_object(): TRUE when
 * @data is exactly one object with the string member @string_member and
 * the integer member @int_member, their names unescaped, and nothing
 * else. The string is left decoded in @text. A terminal carries the whole
 * answer: as a tree it would be copied once more and hashed whole when
 * sealed. */
gboolean
symfonic_json_read_string_int_object (const char *data,
                                      gsize       length,
                                      const char *string_member,
                                      const char *int_member,
                                      GString    *text,
                                      gint64     *value)
{
  Reader reader = { .text = text };
  Reader *r = &reader;
  SymfonicJsonLexer *lex = &r->lex;
  gboolean have_string = FALSE;
  gboolean have_int = FALSE;

  symfonic_json_lexer_init (lex, data, length, SYMFONIC_JSON_MAX_DEPTH);
  symfonic_string_clear (text);
  if (!symfonic_json_lexer_skip_char (lex, '{'))
    return FALSE;
  for (guint i = 0; i < 2; i++)
    {
      if (i > 0 && !symfonic_json_lexer_skip_char (lex, ','))
        return FALSE;
      if (!have_string && skip_name (r, string_member))
        {
          if (symfonic_json_lexer_peek (lex) != '"' || !read_string (r))
            return FALSE;
          have_string = TRUE;
        }
      else if (!have_int && skip_name (r, int_member))
        {
          if (!read_small_int (r, value))
            return FALSE;
          have_int = TRUE;
        }
      else
        {
          return FALSE;
        }
    }
  if (!symfonic_json_lexer_skip_char (lex, '}'))
    return FALSE;

  return symfonic_json_lexer_at_end (lex);
}

/* Objects with more members are read the general way: their names are
 * told apart by comparing each with those before it. */
#define FLAT_MAX_MEMBERS 16

/* Whether the name at r->text[start, len) is one of the @n before it,
 * which lie NUL-terminated from the front of r->text. */
static gboolean
repeats_name (Reader *r,
              gsize   start,
              guint   n)
{
  const char *name = r->text->str;

  for (guint i = 0; i < n; i++)
    {
      if (strcmp (name, r->text->str + start) == 0)
        return TRUE;
      name += strlen (name) + 1;
    }

  return FALSE;
}

/* Whether @text, a JSON number with a fraction or an exponent, is already
 * what symfonic_json_append_double() writes of its value, which can then
 * be copied without printf and strtod (an activation's score, 0.5): a
 * plain decimal whose fraction does not end in 0, with at most 15
 * significant digits, which DBL_DIG says come back from the double as
 * they were, and at most three zeros after the point before the first
 * digit, past which %g writes an exponent. */
static gboolean
is_written_decimal (const char *text,
                    gsize       length)
{
  guint significant = 0;
  guint leading_zeros = 0;
  gboolean fraction = FALSE;

  for (gsize i = text[0] == '-' ? 1 : 0; i < length; i++)
    {
      if (text[i] == '.')
        fraction = TRUE;
      else if (!g_ascii_isdigit (text[i]))
        return FALSE;
      else if (significant > 0 || text[i] != '0')
        significant++;
      else if (fraction)
        leading_zeros++;
    }

  return fraction && text[length - 1] != '0' && significant <= 15 && leading_zeros <= 3;
}

/* One scalar value at the lexer's pos, written to @out as
 * symfonic_json_append_node() writes what read_value() makes of it. */
static gboolean
write_scalar (Reader  *r,
              GString *out)
{
  gsize mark = r->text->len;
  const guchar *data = r->lex.data;
  SymfonicJsonToken token;

  if (!symfonic_json_lexer_read_scalar (&r->lex, r->text, &token))
    return FALSE;

  switch (token.kind)
    {
    case SYMFONIC_JSON_TOKEN_STRING:
      symfonic_json_append_string (out, r->text->str + mark, r->text->len - mark);
      g_string_truncate (r->text, mark);
      return TRUE;
    case SYMFONIC_JSON_TOKEN_NUMBER:
      {
        g_autoptr(JsonNode) number = number_node (r, &token);
        gsize length = r->lex.pos - token.start;

        if (number == NULL)
          return FALSE;
        if (json_node_get_value_type (number) == G_TYPE_INT64)
          symfonic_json_append_int (out, json_node_get_int (number));
        else if (is_written_decimal ((const char *) data + token.start, length))
          symfonic_string_append_len (out, (const char *) data + token.start, length);
        else
          symfonic_json_append_double (out, json_node_get_double (number));
        return TRUE;
      }
    case SYMFONIC_JSON_TOKEN_TRUE:
      symfonic_string_append_literal (out, "true");
      return TRUE;
    case SYMFONIC_JSON_TOKEN_FALSE:
      symfonic_string_append_literal (out, "false");
      return TRUE;
    case SYMFONIC_JSON_TOKEN_NULL:
    default:
      symfonic_string_append_literal (out, "null");
      return TRUE;
    }
}

/* The shape of most structured events an upstream sends (an activation, a
 * graph node): one object whose members are strings, numbers, true, false
 * or null. When @data is exactly such an object, as symfonic_json_parse()
 * reads it, with a member of each name in @required (NULL-terminated),
 * this appends to @out what symfonic_json_append_node() would write of the
 * parsed tree, and returns TRUE, without building the tree. FALSE says
 * nothing about validity, and @out may then hold a part. */
gboolean
symfonic_json_write_flat_object (const char         *data,
                                 gsize               length,
                                 const char * const *required,
                                 GString            *out)
{
  g_autoptr(GString) text = g_string_sized_new (64);
  Reader reader = { .text = text };
  Reader *r = &reader;
  SymfonicJsonLexer *lex = &r->lex;
  guint n = 0;

  symfonic_json_lexer_init (lex, data, length, SYMFONIC_JSON_MAX_DEPTH);
  if (!symfonic_json_lexer_skip_char (lex, '{'))
    return FALSE;
  g_string_append_c (out, '{');
  if (symfonic_json_lexer_peek (lex) != '}')
    {
      do
        {
          gsize start = text->len;

          if (n == FLAT_MAX_MEMBERS || symfonic_json_lexer_peek (lex) != '"' || !read_string (r) ||
              repeats_name (r, start, n))
            return FALSE;
          if (n > 0)
            g_string_append_c (out, ',');
          symfonic_json_append_string (out, text->str + start, text->len - start);
          g_string_append_c (out, ':');
          /* the name stays, NUL-terminated, for the ones after it */
          g_string_append_c (text, '\0');
          n++;
          if (!symfonic_json_lexer_skip_char (lex, ':') || !write_scalar (r, out))
            return FALSE;
        }
      while (symfonic_json_lexer_skip_char (lex, ','));
    }
  if (!symfonic_json_lexer_skip_char (lex, '}'))
    return FALSE;
  g_string_append_c (out, '}');
  if (!symfonic_json_lexer_at_end (lex))
    return FALSE;

  for (guint i = 0; required[i] != NULL; i++)
    {
      gsize start = text->len;

      symfonic_string_append_len (text, required[i], strlen (required[i]));
      if (!repeats_name (r, start, n))
        return FALSE;
      g_string_truncate (text, start);
    }

  return TRUE;
}

/**
 * symfonic_json_parse:
 * @data: (array length=length) (element-type guint8): the text
 * @length: its size in bytes
 * @max_depth: how many arrays and objects may nest, usually
 *   %SYMFONIC_JSON_MAX_DEPTH
 * @error: return location for a #GError
 *
 * Reads exactly one strict RFC 8259 JSON document, with surrounding
 * whitespace only. Comments, single quotes, trailing commas, NaN and
 * Infinity, leading zeros, raw control characters in strings, invalid UTF-8
 * and unpaired surrogates are refused, and so are what json-glib cannot
 * hold faithfully: a repeated member name in one object, and `\u0000` in a
 * string. Nesting deeper than @max_depth is refused before any deeper node
 * is built, and the reader never recurses, so hostile input cannot exhaust
 * the stack.
 *
 * Members keep their document order; integers that fit are #gint64, other
 * numbers doubles.
 *
 * The error, in the %SYMFONIC_ERROR domain with
 * %SYMFONIC_ERROR_BAD_REQUEST, names the problem and its byte offset and
 * never quotes the input.
 *
 * Returns: (transfer full): the document's root, or %NULL with @error set
 */
JsonNode *
symfonic_json_parse (const char  *data,
                     gsize        length,
                     guint        max_depth,
                     GError     **error)
{
  g_autoptr(GString) text = g_string_sized_new (64);
  Reader reader = { .text = text, .error = error };
  Reader *r = &reader;
  SymfonicJsonLexer *lex = &r->lex;
  g_autoptr(JsonNode) root = NULL;
  JsonNode *current = NULL;

  g_return_val_if_fail (data != NULL || length == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  symfonic_json_lexer_init (lex, data, length, max_depth);
  for (;;)
    {
      guchar c = symfonic_json_lexer_peek (lex);
      JsonNode *node;

      /* the lexer refuses a container past the depth before it is built */
      node = read_value (r);
      if (node == NULL)
        return NULL;
      if (current == NULL)
        root = node;
      else
        attach (r, current, node);

      if (c == '[' || c == '{')
        {
          current = node;
          if (symfonic_json_lexer_peek (lex) != (c == '[' ? ']' : '}'))
            {
              if (c == '{' && !read_member_name (r, json_node_get_object (current)))
                return NULL;
              continue;
            }
          /* an empty one closes below */
        }

      /* after a value: a comma goes on, a bracket closes, perhaps several */
      while (current != NULL)
        {
          gboolean is_array = JSON_NODE_HOLDS_ARRAY (current);

          c = symfonic_json_lexer_peek (lex);
          if (c == ',')
            {
              lex->pos++;
              if (!is_array && !read_member_name (r, json_node_get_object (current)))
                return NULL;
              break;
            }
          if (!symfonic_json_lexer_close (lex, is_array ? ']' : '}'))
            {
              fail (r, lex->pos == lex->length ? "the input ends inside an array or object"
                                               : is_array ? "expected a comma or ']'"
                                                          : "expected a comma or '}'");
              return NULL;
            }
          current = json_node_get_parent (current);
        }
      if (current == NULL)
        break;
    }

  if (!symfonic_json_lexer_at_end (lex))
    {
      fail (r, "text after the document");
      return NULL;
    }

  return g_steal_pointer (&root);
}

/**
 * symfonic_json_write:
 * @node: a JSON node, as symfonic_json_parse() makes them
 * @length: (out) (optional): the length of the text
 *
 * Writes @node as compact JSON text: no whitespace, members in their
 * order, strings escaped as RFC 8259 requires and UTF-8 left as it is,
 * integers exactly, doubles so that they read back the same. This is how
 * the gateway writes every event it streams; a source writes its upstream
 * request the same way, without json-glib's generator.
 *
 * Returns: (transfer full): the text
 */
char *
symfonic_json_write (JsonNode *node,
                     gsize    *length)
{
  GString *out = g_string_sized_new (256);

  symfonic_json_append_node (out, node);
  if (length != NULL)
    *length = out->len;

  return g_string_free (out, FALSE);
}
