/* symfonic-json.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>
#include <glib/gi18n-lib.h>

#include "symfonic-error.h"
#include "symfonic-json.h"
#include "symfonic-json-private.h"
#include "symfonic-json-string-private.h"
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
  const guchar *data;
  gsize         length;
  gsize         pos;
  /* the text of the string being read; an object's member name stays at
   * its start, NUL-terminated, while the member's value is read after it */
  GString      *text;
  GError      **error;
} Reader;

/* Every message names what is wrong and where, and never quotes the input. */
static gboolean
fail_at (Reader     *r,
         gsize       offset,
         const char *what)
{
  g_set_error (r->error, SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST,
               _("Invalid JSON at byte %" G_GSIZE_FORMAT ": %s"), offset, what);
  return FALSE;
}

static gboolean
fail (Reader     *r,
      const char *what)
{
  return fail_at (r, r->pos, what);
}

static void
skip_space (Reader *r)
{
  while (r->pos < r->length)
    {
      guchar c = r->data[r->pos];

      if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
        break;
      r->pos++;
    }
}

/* The next byte after whitespace, or 0 at the end: a raw NUL is never
 * valid there, so the callers need no separate end check. */
static inline guchar
peek (Reader *r)
{
  /* compact JSON, as upstreams write it, has no whitespace to skip */
  if (G_LIKELY (r->pos < r->length && r->data[r->pos] > ' '))
    return r->data[r->pos];
  skip_space (r);
  return r->pos < r->length ? r->data[r->pos] : 0;
}

/* Steps over @c if it is the next byte after whitespace. */
static gboolean
skip_char (Reader *r,
           guchar  c)
{
  if (peek (r) != c)
    return FALSE;
  r->pos++;
  return TRUE;
}

/* @what is marked with N_(): it is translated only when it is needed,
 * since a lookup of the message catalog on every member name costs more
 * than reading the name. */
static gboolean
expect (Reader     *r,
        guchar      c,
        const char *what)
{
  return skip_char (r, c) || fail (r, _(what));
}

/* Reads the four hex digits of a \u escape that starts at r->pos. */
static gboolean
read_hex4 (Reader   *r,
           gunichar *out)
{
  gunichar value = 0;

  if (r->length - r->pos < 6 || r->data[r->pos] != '\\' || r->data[r->pos + 1] != 'u')
    return FALSE;
  for (guint i = 2; i < 6; i++)
    {
      int digit = g_ascii_xdigit_value (r->data[r->pos + i]);

      if (digit < 0)
        return FALSE;
      value = value << 4 | digit;
    }
  *out = value;
  r->pos += 6;
  return TRUE;
}

static gboolean
read_unicode_escape (Reader *r)
{
  gsize start = r->pos;
  gunichar c;
  gunichar low;

  if (!read_hex4 (r, &c))
    return fail_at (r, start, _("invalid escape in a string"));
  if (c == 0)
    return fail_at (r, start, _("NUL character in a string"));
  if (c >= 0xDC00 && c <= 0xDFFF)
    return fail_at (r, start, _("unpaired UTF-16 surrogate"));
  if (c >= 0xD800 && c <= 0xDBFF)
    {
      if (!read_hex4 (r, &low) || low < 0xDC00 || low > 0xDFFF)
        return fail_at (r, start, _("unpaired UTF-16 surrogate"));
      c = 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00);
    }
  g_string_append_unichar (r->text, c);
  return TRUE;
}

/* Most strings, a token of text or a name, end within this many bytes. */
#define LEAD_BYTES 16

/* Where the run of plain bytes from r->pos ends, as
 * symfonic_json_string_run() finds it: its first LEAD_BYTES a byte at a
 * time, and what goes on past them, such as a terminal's whole text, a
 * word at a time. */
static gsize
read_run (Reader   *r,
          gboolean *ascii)
{
  gsize lead = r->length - r->pos > LEAD_BYTES ? r->pos + LEAD_BYTES : r->length;
  gsize pos = symfonic_json_string_run (r->data, r->pos, lead, ascii);
  guint64 high = 0;
  gboolean rest_ascii;

  if (pos < lead || pos == r->length)
    return pos;

  pos = symfonic_json_plain_words (r->data, pos, r->length, &high);
  pos = symfonic_json_string_run (r->data, pos, r->length, &rest_ascii);
  *ascii = *ascii && rest_ascii && (high & G_GUINT64_CONSTANT (0x8080808080808080)) == 0;

  return pos;
}

/* Appends the string that starts at r->pos (on its quote) to r->text. */
static gboolean
read_string (Reader *r)
{
  r->pos++;
  for (;;)
    {
      gsize start = r->pos;
      const char *invalid;
      gboolean ascii;
      guchar c = 0;

      r->pos = read_run (r, &ascii);
      if (r->pos < r->length)
        c = r->data[r->pos];
      if (!ascii && !g_utf8_validate_len ((const char *) r->data + start, r->pos - start, &invalid))
        return fail_at (r, invalid - (const char *) r->data, _("invalid UTF-8"));
      symfonic_string_append_len (r->text, (const char *) r->data + start, r->pos - start);

      if (r->pos == r->length)
        return fail (r, _("the input ends inside a string"));
      if (c == '"')
        {
          r->pos++;
          return TRUE;
        }
      if (c < 0x20)
        return fail (r, _("control character in a string"));

      if (r->pos + 1 < r->length && r->data[r->pos + 1] == 'u')
        {
          if (!read_unicode_escape (r))
            return FALSE;
          continue;
        }

      switch (r->pos + 1 < r->length ? r->data[r->pos + 1] : 0)
        {
        case '"': c = '"'; break;
        case '\\': c = '\\'; break;
        case '/': c = '/'; break;
        case 'b': c = '\b'; break;
        case 'f': c = '\f'; break;
        case 'n': c = '\n'; break;
        case 'r': c = '\r'; break;
        case 't': c = '\t'; break;
        default:
          return fail (r, _("invalid escape in a string"));
        }
      g_string_append_c (r->text, c);
      r->pos += 2;
    }
}

static gsize
skip_digits (Reader *r)
{
  gsize start = r->pos;

  while (r->pos < r->length && g_ascii_isdigit (r->data[r->pos]))
    r->pos++;
  return r->pos - start;
}

/* Steps over one number (RFC 8259 §6); @integral tells whether it has
 * neither a fraction nor an exponent. */
static gboolean
skip_number (Reader   *r,
             gboolean *integral)
{
  if (r->data[r->pos] == '-')
    r->pos++;
  if (r->pos < r->length && r->data[r->pos] == '0')
    {
      r->pos++;
      if (r->pos < r->length && g_ascii_isdigit (r->data[r->pos]))
        return fail (r, _("leading zero in a number"));
    }
  else if (skip_digits (r) == 0)
    return fail (r, _("invalid number"));

  *integral = TRUE;
  if (r->pos < r->length && r->data[r->pos] == '.')
    {
      *integral = FALSE;
      r->pos++;
      if (skip_digits (r) == 0)
        return fail (r, _("invalid number"));
    }
  if (r->pos < r->length && (r->data[r->pos] == 'e' || r->data[r->pos] == 'E'))
    {
      *integral = FALSE;
      r->pos++;
      if (r->pos < r->length && (r->data[r->pos] == '+' || r->data[r->pos] == '-'))
        r->pos++;
      if (skip_digits (r) == 0)
        return fail (r, _("invalid number"));
    }

  return TRUE;
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

/* Integers that fit are gint64, every other number a double, as JsonParser
 * reads them. */
static JsonNode *
read_number (Reader *r)
{
  gsize start = r->pos;
  gboolean integral;
  gint64 integer;
  char buffer[64];
  g_autofree char *long_text = NULL;
  char *text = buffer;
  gsize length;
  double value;

  if (!skip_number (r, &integral))
    return NULL;
  length = r->pos - start;
  if (integral && to_int64 (r->data + start, length, &integer))
    return json_node_init_int (json_node_alloc (), integer);

  /* strtod needs a NUL-terminated copy */
  if (length >= sizeof buffer)
    text = long_text = g_malloc (length + 1);
  memcpy (text, r->data + start, length);
  text[length] = '\0';
  value = g_ascii_strtod (text, NULL);
  if (!isfinite (value))
    {
      fail_at (r, start, _("number out of range"));
      return NULL;
    }

  return json_node_init_double (json_node_alloc (), value);
}

static gboolean
read_literal (Reader     *r,
              const char *word)
{
  gsize length = strlen (word);

  if (r->length - r->pos < length || memcmp (r->data + r->pos, word, length) != 0)
    return fail (r, _("expected a value"));
  r->pos += length;
  return TRUE;
}

/* One value at r->pos; an array or object comes back empty, to be filled
 * by the caller. */
static JsonNode *
read_value (Reader *r)
{
  gsize start = r->text->len;
  JsonNode *node;

  switch (peek (r))
    {
    case '{':
      r->pos++;
      node = json_node_new (JSON_NODE_OBJECT);
      json_node_take_object (node, json_object_new ());
      return node;
    case '[':
      r->pos++;
      node = json_node_new (JSON_NODE_ARRAY);
      json_node_take_array (node, json_array_new ());
      return node;
    case '"':
      if (!read_string (r))
        return NULL;
      node = json_node_init_string (json_node_alloc (), r->text->str + start);
      g_string_truncate (r->text, start);
      return node;
    case 't':
      return read_literal (r, "true") ? json_node_init_boolean (json_node_alloc (), TRUE) : NULL;
    case 'f':
      return read_literal (r, "false") ? json_node_init_boolean (json_node_alloc (), FALSE) : NULL;
    case 'n':
      return read_literal (r, "null") ? json_node_init_null (json_node_alloc ()) : NULL;
    case '-':
    case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
      return read_number (r);
    default:
      fail (r, r->pos == r->length ? _("the input ends where a value belongs") : _("expected a value"));
      return NULL;
    }
}

/* Reads `"name":` into the start of r->text and refuses a repeated name:
 * which of two values a reader keeps is not defined (RFC 8259 §4). */
static gboolean
read_member_name (Reader     *r,
                  JsonObject *object)
{
  gsize start;

  if (peek (r) != '"')
    return fail (r, _("expected a member name"));
  start = r->pos;
  g_string_truncate (r->text, 0);
  if (!read_string (r))
    return FALSE;
  if (json_object_has_member (object, r->text->str))
    return fail_at (r, start, _("duplicate member name"));
  /* values are read after the name's NUL */
  g_string_append_c (r->text, '\0');

  return expect (r, ':', N_("expected a colon after a member name"));
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
  Reader reader = { (const guchar *) data, length, 0, text, NULL };
  Reader *r = &reader;

  symfonic_string_clear (text);
  if (!skip_char (r, '{') || peek (r) != '"')
    return FALSE;
  /* the member's name as upstreams write it, without escapes, is
   * compared where it lies */
  if (r->length - r->pos > member_length + 1 && memcmp (r->data + r->pos + 1, member, member_length) == 0 &&
      r->data[r->pos + 1 + member_length] == '"')
    r->pos += member_length + 2;
  else if (!read_string (r) || text->len != member_length || memcmp (text->str, member, member_length) != 0)
    return FALSE;

  symfonic_string_clear (text);
  if (!skip_char (r, ':') || peek (r) != '"' || !read_string (r) || !skip_char (r, '}'))
    return FALSE;
  skip_space (r);

  return r->pos == r->length;
}

/* An integer as the strict reader reads one, of at most 18 digits so
 * that it cannot overflow; FALSE for anything else, fractions and
 * exponents included, which are left to the general way. */
static gboolean
read_small_int (Reader *r,
                gint64 *value)
{
  gboolean negative = FALSE;
  gsize start;
  gint64 v = 0;

  if (peek (r) == '-')
    {
      negative = TRUE;
      r->pos++;
    }
  start = r->pos;
  while (r->pos < r->length && g_ascii_isdigit (r->data[r->pos]) && r->pos - start < 18)
    v = v * 10 + (r->data[r->pos++] - '0');
  if (r->pos == start || (r->data[start] == '0' && r->pos - start > 1))
    return FALSE;
  if (r->pos < r->length && (g_ascii_isdigit (r->data[r->pos]) || r->data[r->pos] == '.' ||
                             r->data[r->pos] == 'e' || r->data[r->pos] == 'E'))
    return FALSE;

  *value = negative ? -v : v;
  return TRUE;
}

/* Steps over the member name @name if it stands next, unescaped, as
 * upstreams write it. */
static gboolean
skip_name (Reader     *r,
           const char *name)
{
  gsize length = strlen (name);

  if (peek (r) != '"' || r->length - r->pos < length + 2 ||
      memcmp (r->data + r->pos + 1, name, length) != 0 || r->data[r->pos + 1 + length] != '"')
    return FALSE;
  r->pos += length + 2;
  return skip_char (r, ':');
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
  Reader reader = { (const guchar *) data, length, 0, text, NULL };
  Reader *r = &reader;
  gboolean have_string = FALSE;
  gboolean have_int = FALSE;

  symfonic_string_clear (text);
  if (!skip_char (r, '{'))
    return FALSE;
  for (guint i = 0; i < 2; i++)
    {
      if (i > 0 && !skip_char (r, ','))
        return FALSE;
      if (!have_string && skip_name (r, string_member))
        {
          if (peek (r) != '"' || !read_string (r))
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
  if (!skip_char (r, '}'))
    return FALSE;
  skip_space (r);

  return r->pos == r->length;
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

static gboolean
copy_literal (Reader     *r,
              const char *word,
              GString    *out)
{
  if (!read_literal (r, word))
    return FALSE;
  symfonic_string_append_len (out, word, strlen (word));
  return TRUE;
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

/* One scalar value at r->pos, written to @out as symfonic_json_append_node()
 * writes what read_value() makes of it. */
static gboolean
write_scalar (Reader  *r,
              GString *out)
{
  gsize mark = r->text->len;

  switch (peek (r))
    {
    case '"':
      if (!read_string (r))
        return FALSE;
      symfonic_json_append_string (out, r->text->str + mark, r->text->len - mark);
      g_string_truncate (r->text, mark);
      return TRUE;
    case 't':
      return copy_literal (r, "true", out);
    case 'f':
      return copy_literal (r, "false", out);
    case 'n':
      return copy_literal (r, "null", out);
    case '-':
    case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
      {
        gsize start = r->pos;
        g_autoptr(JsonNode) number = read_number (r);

        if (number == NULL)
          return FALSE;
        if (json_node_get_value_type (number) == G_TYPE_INT64)
          symfonic_json_append_int (out, json_node_get_int (number));
        else if (is_written_decimal ((const char *) r->data + start, r->pos - start))
          symfonic_string_append_len (out, (const char *) r->data + start, r->pos - start);
        else
          symfonic_json_append_double (out, json_node_get_double (number));
        return TRUE;
      }
    default:
      return FALSE;
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
  Reader reader = { (const guchar *) data, length, 0, text, NULL };
  Reader *r = &reader;
  guint n = 0;

  if (!skip_char (r, '{'))
    return FALSE;
  g_string_append_c (out, '{');
  if (peek (r) != '}')
    {
      do
        {
          gsize start = text->len;

          if (n == FLAT_MAX_MEMBERS || peek (r) != '"' || !read_string (r) || repeats_name (r, start, n))
            return FALSE;
          if (n > 0)
            g_string_append_c (out, ',');
          symfonic_json_append_string (out, text->str + start, text->len - start);
          g_string_append_c (out, ':');
          /* the name stays, NUL-terminated, for the ones after it */
          g_string_append_c (text, '\0');
          n++;
          if (!skip_char (r, ':') || !write_scalar (r, out))
            return FALSE;
        }
      while (skip_char (r, ','));
    }
  if (!skip_char (r, '}'))
    return FALSE;
  g_string_append_c (out, '}');
  skip_space (r);
  if (r->pos != r->length)
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
  Reader reader = { (const guchar *) data, length, 0, text, error };
  Reader *r = &reader;
  g_autoptr(JsonNode) root = NULL;
  JsonNode *current = NULL;
  guint depth = 0;

  g_return_val_if_fail (data != NULL || length == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  for (;;)
    {
      guchar c = peek (r);
      JsonNode *node;

      if ((c == '[' || c == '{') && depth == max_depth)
        {
          g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST,
                       _("Invalid JSON at byte %" G_GSIZE_FORMAT ": nesting deeper than %u levels"),
                       r->pos, max_depth);
          return NULL;
        }
      node = read_value (r);
      if (node == NULL)
        return NULL;
      if (current == NULL)
        root = node;
      else
        attach (r, current, node);

      if (c == '[' || c == '{')
        {
          depth++;
          current = node;
          if (peek (r) != (c == '[' ? ']' : '}'))
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

          c = peek (r);
          if (c == ',')
            {
              r->pos++;
              if (!is_array && !read_member_name (r, json_node_get_object (current)))
                return NULL;
              break;
            }
          if (c != (is_array ? ']' : '}'))
            {
              fail (r, r->pos == r->length ? _("the input ends inside an array or object")
                                           : is_array ? _("expected a comma or ']'")
                                                      : _("expected a comma or '}'"));
              return NULL;
            }
          r->pos++;
          depth--;
          current = json_node_get_parent (current);
        }
      if (current == NULL)
        break;
    }

  skip_space (r);
  if (r->pos < r->length)
    {
      fail (r, _("text after the document"));
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
