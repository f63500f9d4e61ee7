/* symfonic-usage.c: the token counts an upstream reports
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-usage-private.h"

typedef enum
{
  COUNT_ABSENT,
  COUNT_VALID,
  COUNT_INVALID,
} CountState;

/* A count is a non-negative JSON integer; null is no count at all, and
 * anything else (a negative, a fraction, a string, a number too large for
 * an integer) is not a count but a wrong one. */
static CountState
read_member (JsonObject *object,
             const char *name,
             guint64    *count)
{
  JsonNode *node = json_object_get_member (object, name);

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return COUNT_ABSENT;
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64 ||
      json_node_get_int (node) < 0)
    return COUNT_INVALID;

  *count = json_node_get_int (node);

  return COUNT_VALID;
}

/* TRUE with @count set when @object's @name is a token count; @object
 * may be NULL. */
gboolean
symfonic_usage_read_count (JsonObject *object,
                           const char *name,
                           guint64    *count)
{
  return object != NULL && read_member (object, name, count) == COUNT_VALID;
}

/* One side of a report, under Anthropic's name first, then OpenAI's. */
static CountState
read_side (JsonObject *usage,
           const char *name,
           const char *other_name,
           gint64     *side)
{
  guint64 count;
  CountState state = read_member (usage, name, &count);

  if (state == COUNT_ABSENT)
    state = read_member (usage, other_name, &count);
  *side = state == COUNT_VALID ? (gint64) count : -1;

  return state;
}

/* The counts of a usage object, which may be NULL: Anthropic's names
 * (input/output) first, then OpenAI's (prompt/completion). */
void
symfonic_usage_read_counts (JsonObject          *usage,
                            SymfonicUsageCounts *counts)
{
  counts->input = counts->output = -1;
  counts->invalid = FALSE;
  if (usage == NULL)
    return;
  counts->invalid |= read_side (usage, "input_tokens", "prompt_tokens", &counts->input) == COUNT_INVALID;
  counts->invalid |= read_side (usage, "output_tokens", "completion_tokens", &counts->output) == COUNT_INVALID;
}

/* --- what the upstream said of its answer ------------------------------- */

static GQuark upstream_facts_quark (void);
G_DEFINE_QUARK (symfonic-upstream-facts, upstream_facts)

static void
upstream_facts_free (gpointer data)
{
  SymfonicUpstreamFacts *facts = data;

  g_free (facts->model);
  g_free (facts);
}

/* NULL for a stream whose source told nothing (replay, runtime). */
SymfonicUpstreamFacts *
symfonic_upstream_facts_peek (SymfonicStream *stream)
{
  return g_object_get_qdata (G_OBJECT (stream), upstream_facts_quark ());
}

SymfonicUpstreamFacts *
symfonic_upstream_facts_ensure (SymfonicStream *stream)
{
  SymfonicUpstreamFacts *facts = symfonic_upstream_facts_peek (stream);

  if (facts == NULL)
    {
      facts = g_new0 (SymfonicUpstreamFacts, 1);
      facts->cache_read = facts->cache_creation = facts->reasoning = -1;
      g_object_set_qdata_full (G_OBJECT (stream), upstream_facts_quark (), facts, upstream_facts_free);
    }

  return facts;
}
