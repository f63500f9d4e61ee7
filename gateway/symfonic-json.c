/* symfonic-json.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-json-private.h"

/* Text deltas are the bulk of every stream; writing them through a
 * JsonGenerator would build a node tree per event just to throw it away. */
void
symfonic_json_append_string (GString    *out,
                             const char *str,
                             gssize      len)
{
  static const char hex[] = "0123456789abcdef";
  const char *p;
  const char *end;
  const char *run;

  if (len < 0)
    len = strlen (str);

  end = str + len;
  g_string_append_c (out, '"');
  for (p = run = str; p < end; p++)
    {
      guchar c = (guchar) *p;
      const char *escape = NULL;

      if (c >= 0x20 && c != '"' && c != '\\')
        continue;

      if (p > run)
        g_string_append_len (out, run, p - run);
      run = p + 1;

      switch (c)
        {
        case '"': escape = "\\\""; break;
        case '\\': escape = "\\\\"; break;
        case '\n': escape = "\\n"; break;
        case '\r': escape = "\\r"; break;
        case '\t': escape = "\\t"; break;
        case '\b': escape = "\\b"; break;
        case '\f': escape = "\\f"; break;
        default:
          break;
        }

      if (escape != NULL)
        {
          g_string_append (out, escape);
        }
      else
        {
          char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xf] };
          g_string_append_len (out, u, sizeof u);
        }
    }
  if (p > run)
    g_string_append_len (out, run, p - run);
  g_string_append_c (out, '"');
}

void
symfonic_json_append_node (GString  *out,
                           JsonNode *node)
{
  g_autofree char *text = NULL;

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    {
      g_string_append (out, "null");
      return;
    }

  if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING)
    {
      symfonic_json_append_string (out, json_node_get_string (node), -1);
      return;
    }

  text = json_to_string (node, FALSE);
  g_string_append (out, text);
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
        JsonObjectIter iter;
        const char *name;
        JsonNode *member;

        json_object_iter_init (&iter, src);
        while (json_object_iter_next (&iter, &name, &member))
          json_object_set_member (dst, name, symfonic_json_node_deep_copy (member));

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
