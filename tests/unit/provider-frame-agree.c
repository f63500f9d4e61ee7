/* provider-frame-agree.c: a provider's frame read both ways, compared
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "provider-frame-agree.h"

/* The object the scan took @data for, which the strict reader must take
 * too. */
static JsonObject *
parse_taken (const char *data,
             gsize       length,
             JsonNode  **root)
{
  *root = symfonic_json_parse (data, length, SYMFONIC_JSON_MAX_DEPTH, NULL);
  if (*root == NULL || !JSON_NODE_HOLDS_OBJECT (*root))
    g_error ("the scan took what the strict reader refuses: %.*s", (int) length, data);

  return json_node_get_object (*root);
}

/* One buffer for every call: the callers make tens of thousands, and a
 * sanitized build pays dearly for each allocation. */
static GString *
scratch (void)
{
  static GString *text;

  if (text == NULL)
    text = g_string_new (NULL);
  return text;
}

gboolean
provider_frame_openai_agrees (SymfonicJsonScanMemo *memo,
                              const char           *data,
                              gsize                 length)
{
  GString *text = scratch ();
  g_autoptr(JsonNode) root = NULL;
  SymfonicOpenaiChunk fast;
  SymfonicOpenaiChunk tree;

  if (!symfonic_openai_chunk_scan (data, length, memo, text, &fast))
    return FALSE;

  g_assert_true (symfonic_openai_chunk_read (parse_taken (data, length, &root), &tree));
  g_assert_cmpstr (fast.model, ==, tree.model);
  g_assert_cmpstr (fast.thinking, ==, tree.thinking);
  g_assert_cmpstr (fast.text, ==, tree.text);
  g_assert_cmpstr (fast.finish_reason, ==, tree.finish_reason);
  g_assert_cmpint (fast.usage.input, ==, tree.usage.input);
  g_assert_cmpint (fast.usage.output, ==, tree.usage.output);
  g_assert_cmpint (fast.usage.invalid, ==, tree.usage.invalid);
  g_assert_cmpint (fast.cached_tokens, ==, tree.cached_tokens);
  g_assert_cmpint (fast.reasoning_tokens, ==, tree.reasoning_tokens);
  g_assert_cmpstr (fast.refusal, ==, tree.refusal);
  g_assert_null (fast.tool_calls);
  g_assert_null (tree.tool_calls);

  return TRUE;
}

gboolean
provider_frame_anthropic_agrees (SymfonicJsonScanMemo *memo,
                                 const char           *data,
                                 gsize                 length)
{
  GString *text = scratch ();
  g_autoptr(JsonNode) root = NULL;
  SymfonicAnthropicDelta fast;
  SymfonicAnthropicDelta tree;

  if (!symfonic_anthropic_delta_scan (data, length, memo, text, &fast))
    return FALSE;

  g_assert_true (symfonic_anthropic_delta_read (parse_taken (data, length, &root), &tree));
  g_assert_cmpstr (fast.text, ==, tree.text);
  g_assert_cmpstr (fast.thinking, ==, tree.thinking);

  return TRUE;
}
