/* symfonic-json-writer.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-json-private.h"
#include "symfonic-json-string-private.h"
#include "symfonic-string-private.h"

/* What a byte costs in a JSON string beyond itself: a short escape one
 * more byte, \u00XX five more, and the rest (all of UTF-8 past ASCII too)
 * nothing. */
static const guint8 escape_extra[256] = {
  5, 5, 5, 5, 5, 5, 5, 5, 1, 1, 1, 5, 1, 1, 5, 5,
  5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
  ['"'] = 1,
  ['\\'] = 1,
};

/* The letter after the backslash of a short escape. */
static const char short_escape[256] = {
  ['"'] = '"',
  ['\\'] = '\\',
  ['\b'] = 'b',
  ['\f'] = 'f',
  ['\n'] = 'n',
  ['\r'] = 'r',
  ['\t'] = 't',
};

/* The length of @str as a JSON string, quotes included. */
gsize
symfonic_json_string_length (const char *str,
                             gsize       len)
{
  guint64 high = 0;
  gsize n = len + 2;
  gsize i = 0;

  /* a long string (a whole answer) is mostly plain words; a short one, a
   * token of text, is quicker summed as it is */
  if (len >= 2 * sizeof (guint64))
    i = symfonic_json_plain_words ((const guchar *) str, 0, len, &high);
  for (; i < len; i++)
    n += escape_extra[(guchar) str[i]];

  return n;
}

/* Writes @str as a JSON string at @dest, which has room for @length, its
 * symfonic_json_string_length(): quoted, with `"`, `\` and the control
 * characters escaped; text that needs no escape is copied at once.
 * Returns @dest + @length. */
char *
symfonic_json_write_string (char       *dest,
                            const char *str,
                            gsize       len,
                            gsize       length)
{
  static const char hex[] = "0123456789abcdef";

  *dest++ = '"';
  if (length == len + 2)
    {
      memcpy (dest, str, len);
      dest += len;
    }
  else
    {
      for (gsize i = 0; i < len; i++)
        {
          guchar c = (guchar) str[i];

          if (escape_extra[c] == 0)
            {
              *dest++ = (char) c;
              continue;
            }

          *dest++ = '\\';
          if (short_escape[c] != '\0')
            {
              *dest++ = short_escape[c];
            }
          else
            {
              memcpy (dest, "u00", 3);
              dest[3] = hex[c >> 4];
              dest[4] = hex[c & 0xf];
              dest += 5;
            }
        }
    }
  *dest++ = '"';

  return dest;
}

/**
 * symfonic_json_append_string:
 * @out: the text to append to
 * @str: a UTF-8 string
 * @len: its length in bytes, or -1 if it ends with a NUL
 *
 * Appends @str to @out as a JSON string, quoted and escaped as
 * symfonic_json_write() writes strings.
 */
void
symfonic_json_append_string (GString    *out,
                             const char *str,
                             gssize      len)
{
  /* Text deltas are the bulk of every stream; writing them through a
   * JsonGenerator would build a node tree per event just to throw it
   * away. The string goes in with one resize and, mostly, one copy. */
  gsize length;

  if (len < 0)
    len = strlen (str);

  length = symfonic_json_string_length (str, len);
  symfonic_string_commit (out, symfonic_json_write_string (symfonic_string_reserve (out, length),
                                                           str, len, length));
}

/* Writes @value in decimal at @dest, which has room for
 * SYMFONIC_JSON_UINT_MAX bytes, without printf's format parsing: frame ids
 * go out once per frame. Returns the end of what was written. */
char *
symfonic_json_write_uint (char    *dest,
                          guint64  value)
{
  char digits[SYMFONIC_JSON_UINT_MAX];
  guint n = 0;

  do
    {
      digits[n++] = (char) ('0' + value % 10);
      value /= 10;
    }
  while (value > 0);
  while (n > 0)
    *dest++ = digits[--n];

  return dest;
}

/* The shortest text that reads back as the same double: json-glib writes
 * %.17g, which turns a transcript's 0.91 into 0.91000000000000003. */
void
symfonic_json_append_double (GString *out,
                             double   value)
{
  static const char * const formats[] = { "%.15g", "%.16g", "%.17g" };
  char buffer[G_ASCII_DTOSTR_BUF_SIZE];

  for (guint i = 0; i < G_N_ELEMENTS (formats); i++)
    {
      g_ascii_formatd (buffer, sizeof buffer, formats[i], value);
      if (g_ascii_strtod (buffer, NULL) == value)
        break;
    }
  g_string_append (out, buffer);
  /* keep it a JSON number that reads back as a double */
  if (strpbrk (buffer, ".eE") == NULL)
    g_string_append (out, ".0");
}

void
symfonic_json_append_int (GString *out,
                          gint64   value)
{
  char *p = symfonic_string_reserve (out, SYMFONIC_JSON_UINT_MAX + 1);

  if (value < 0)
    *p++ = '-';
  /* the magnitude of G_MININT64 does not fit in a gint64 */
  symfonic_string_commit (out, symfonic_json_write_uint (p, value < 0 ? -(guint64) value : (guint64) value));
}

/* `"name":value` for each member of @object, comma-separated, in the
 * order they were written, walked without copying the list of their
 * names; a comma goes first too if @after_another. */
void
symfonic_json_append_members (GString    *out,
                              JsonObject *object,
                              gboolean    after_another)
{
  JsonObjectIter iter;
  const char *name;
  JsonNode *member;

  json_object_iter_init_ordered (&iter, object);
  while (json_object_iter_next_ordered (&iter, &name, &member))
    {
      if (after_another)
        g_string_append_c (out, ',');
      after_another = TRUE;
      symfonic_json_append_string (out, name, -1);
      g_string_append_c (out, ':');
      symfonic_json_append_node (out, member);
    }
}

/**
 * symfonic_json_append_node:
 * @out: the text to append to
 * @node: (nullable): a JSON node, as symfonic_json_parse() makes them
 *
 * Appends @node to @out as symfonic_json_write() writes it; %NULL is
 * written as `null`. A request body written straight into one buffer
 * builds no tree for the members around the nodes it carries.
 */
void
symfonic_json_append_node (GString  *out,
                           JsonNode *node)
{
  if (node == NULL)
    {
      symfonic_string_append_literal (out, "null");
      return;
    }

  switch (json_node_get_node_type (node))
    {
    case JSON_NODE_OBJECT:
      g_string_append_c (out, '{');
      symfonic_json_append_members (out, json_node_get_object (node), FALSE);
      g_string_append_c (out, '}');
      break;

    case JSON_NODE_ARRAY:
      {
        JsonArray *array = json_node_get_array (node);
        guint n = json_array_get_length (array);

        g_string_append_c (out, '[');
        for (guint i = 0; i < n; i++)
          {
            if (i > 0)
              g_string_append_c (out, ',');
            symfonic_json_append_node (out, json_array_get_element (array, i));
          }
        g_string_append_c (out, ']');
      }
      break;

    case JSON_NODE_NULL:
      symfonic_string_append_literal (out, "null");
      break;

    case JSON_NODE_VALUE:
    default:
      switch (json_node_get_value_type (node))
        {
        case G_TYPE_STRING:
          symfonic_json_append_string (out, json_node_get_string (node), -1);
          break;
        case G_TYPE_BOOLEAN:
          if (json_node_get_boolean (node))
            symfonic_string_append_literal (out, "true");
          else
            symfonic_string_append_literal (out, "false");
          break;
        case G_TYPE_DOUBLE:
          symfonic_json_append_double (out, json_node_get_double (node));
          break;
        case G_TYPE_INT64:
        default:
          symfonic_json_append_int (out, json_node_get_int (node));
          break;
        }
      break;
    }
}

/* @array, or @absent (literal JSON) when there is none. */
void
symfonic_json_append_array (GString    *out,
                            JsonArray  *array,
                            const char *absent)
{
  g_autoptr(JsonNode) node = NULL;

  if (array == NULL)
    {
      g_string_append (out, absent);
      return;
    }

  node = json_node_new (JSON_NODE_ARRAY);
  json_node_set_array (node, array);
  symfonic_json_append_node (out, node);
}

/* json_node_copy() shares containers; events must own what they carry. */
JsonNode *
symfonic_json_node_deep_copy (JsonNode *node)
{
  JsonNode *copy;

  switch (json_node_get_node_type (node))
    {
    case JSON_NODE_OBJECT:
      {
        JsonObject *src = json_node_get_object (node);
        g_autoptr(JsonObject) dst = json_object_new ();
        g_autoptr(GList) members = json_object_get_members (src);

        /* in the order they were written */
        for (GList *l = members; l != NULL; l = l->next)
          json_object_set_member (dst, l->data, symfonic_json_node_deep_copy (json_object_get_member (src, l->data)));

        copy = json_node_new (JSON_NODE_OBJECT);
        json_node_set_object (copy, dst);
        return copy;
      }

    case JSON_NODE_ARRAY:
      {
        JsonArray *src = json_node_get_array (node);
        guint n = json_array_get_length (src);
        g_autoptr(JsonArray) dst = json_array_sized_new (n);

        for (guint i = 0; i < n; i++)
          json_array_add_element (dst, symfonic_json_node_deep_copy (json_array_get_element (src, i)));

        copy = json_node_new (JSON_NODE_ARRAY);
        json_node_set_array (copy, dst);
        return copy;
      }

    case JSON_NODE_NULL:
      return json_node_new (JSON_NODE_NULL);

    case JSON_NODE_VALUE:
    default:
      {
        /* json_node_copy() would share the value itself */
        GValue value = G_VALUE_INIT;

        json_node_get_value (node, &value);
        copy = json_node_init (json_node_alloc (), JSON_NODE_VALUE);
        json_node_set_value (copy, &value);
        g_value_unset (&value);
        return copy;
      }
    }
}
