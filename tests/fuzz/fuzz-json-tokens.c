/* fuzz-json-tokens.c: any document, read by the strict reader and by a scan
 *
 * The strict reader and the provider-frame scan take their tokens from one
 * lexer. The input is read by both, the scan with a table that names
 * itself, so that it follows objects ("o") and arrays of one object ("a")
 * as deep as the input goes, keeping the last string "s" and count "n" it
 * meets. Whatever the scan takes, the strict reader must take too, with
 * the same string and count. An input with a newline is also two frames
 * of one stream, the second read through the memo of the first.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "fuzz-common.h"
#include "symfonic-json-scan-private.h"

enum { SLOT_S, SLOT_N };

static const SymfonicJsonScanMember nest[] = {
  { "o", SYMFONIC_JSON_SCAN_OBJECT, 0, nest },
  { "a", SYMFONIC_JSON_SCAN_FIRST, 0, nest },
  { "s", SYMFONIC_JSON_SCAN_STRING, SLOT_S, NULL },
  { "n", SYMFONIC_JSON_SCAN_COUNT, SLOT_N, NULL },
  { "r", SYMFONIC_JSON_SCAN_REFUSE, 0, NULL },
  { NULL },
};

/* What the scan keeps of the tree @object, member by member in document
 * order, as it meets them: a later "s" or "n" replaces an earlier one. */
static void
walk (JsonObject  *object,
      const char **s,
      GString     *n,
      gboolean    *have_n)
{
  g_autoptr(GList) names = json_object_get_members (object);

  for (GList *l = names; l != NULL; l = l->next)
    {
      const char *name = l->data;
      JsonNode *node = json_object_get_member (object, name);

      if (strcmp (name, "s") == 0 && JSON_NODE_HOLDS_VALUE (node) &&
          json_node_get_value_type (node) == G_TYPE_STRING)
        {
          *s = json_node_get_string (node);
        }
      else if (strcmp (name, "n") == 0 && JSON_NODE_HOLDS_VALUE (node))
        {
          g_string_printf (n, "%" G_GINT64_FORMAT, json_node_get_int (node));
          *have_n = TRUE;
        }
      else if (strcmp (name, "o") == 0 && JSON_NODE_HOLDS_OBJECT (node))
        {
          walk (json_node_get_object (node), s, n, have_n);
        }
      else if (strcmp (name, "a") == 0 && JSON_NODE_HOLDS_ARRAY (node) &&
               json_array_get_length (json_node_get_array (node)) == 1)
        {
          walk (json_array_get_object_element (json_node_get_array (node), 0), s, n, have_n);
        }
    }
}

static void
agrees (SymfonicJsonScanMemo *memo,
        const char           *data,
        gsize                 length)
{
  static GString *text;
  const char *slots[SYMFONIC_JSON_SCAN_SLOTS];
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GString) n = g_string_new (NULL);
  const char *s = NULL;
  gboolean have_n = FALSE;

  if (text == NULL)
    text = g_string_new (NULL);
  if (!symfonic_json_scan (data, length, nest, memo, text, slots))
    return;

  root = symfonic_json_parse (data, length, SYMFONIC_JSON_MAX_DEPTH, NULL);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    g_error ("the scan took what the strict reader refuses: %.*s", (int) length, data);
  walk (json_node_get_object (root), &s, n, &have_n);
  g_assert (g_strcmp0 (slots[SLOT_S], s) == 0);
  /* a count's digits are kept as they are written: no sign, no leading
   * zero, so the integer they make is written the same */
  g_assert ((slots[SLOT_N] != NULL) == have_n);
  g_assert (!have_n || strcmp (slots[SLOT_N], n->str) == 0);
}

int
LLVMFuzzerTestOneInput (const guint8 *data,
                        size_t        size)
{
  g_autoptr(SymfonicJsonScanMemo) memo = symfonic_json_scan_memo_new ();
  const char *text = (const char *) data;
  const char *newline = memchr (text, '\n', size);
  gsize first;

  agrees (NULL, text, size);
  if (newline == NULL)
    return 0;
  first = newline - text;
  agrees (memo, text, first);
  agrees (memo, newline + 1, size - first - 1);

  return 0;
}
