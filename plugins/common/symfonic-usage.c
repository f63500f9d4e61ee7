/* symfonic-usage.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-usage.h"

/* A token count: a non-negative JSON number, else not a count. */
gboolean
symfonic_usage_read_count (JsonObject *object,
                           const char *name,
                           guint64    *count)
{
  JsonNode *node = json_object_get_member (object, name);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node))
    return FALSE;

  switch (json_node_get_value_type (node))
    {
    case G_TYPE_INT64:
      if (json_node_get_int (node) < 0)
        return FALSE;
      *count = json_node_get_int (node);
      return TRUE;
    case G_TYPE_DOUBLE:
      if (!(json_node_get_double (node) >= 0 && json_node_get_double (node) < (double) G_MAXINT64))
        return FALSE;
      *count = json_node_get_double (node);
      return TRUE;
    default:
      return FALSE;
    }
}

/* The counts of a usage object, which may be NULL: Anthropic's names
 * (input/output) first, then OpenAI's (prompt/completion). */
void
symfonic_usage_read_counts (JsonObject          *usage,
                            SymfonicUsageCounts *counts)
{
  guint64 count;

  counts->input = counts->output = -1;
  if (usage == NULL)
    return;
  if (symfonic_usage_read_count (usage, "input_tokens", &count) ||
      symfonic_usage_read_count (usage, "prompt_tokens", &count))
    counts->input = count;
  if (symfonic_usage_read_count (usage, "output_tokens", &count) ||
      symfonic_usage_read_count (usage, "completion_tokens", &count))
    counts->output = count;
}
