/* symfonic-provider-frame.c: what a provider's frame says
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-error.h"
#include "symfonic-json.h"
#include "symfonic-provider-frame-private.h"

/* A frame is read in one of two ways that give the same answer: the
 * commonest shapes, text and thinking deltas, by a scan that builds no
 * tree; every frame the scan gives up on as a json-glib tree. */

JsonNode *
symfonic_provider_parse_json (const char  *data,
                              gsize        length,
                              GError     **error)
{
  g_autoptr(GError) parse_error = NULL;
  JsonNode *root = symfonic_json_parse (data, length, SYMFONIC_JSON_MAX_DEPTH, &parse_error);

  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_clear_pointer (&root, json_node_unref);
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM,
                           "The provider sent a frame that is not a JSON object");
    }

  return root;
}

/* Members of a provider's JSON, or NULL when missing or of another type:
 * a provider may leave out what it has nothing to say about. */
const char *
symfonic_provider_json_string (JsonObject *object,
                               const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;

  return json_node_get_string (node);
}

JsonObject *
symfonic_provider_json_object (JsonObject *object,
                               const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;

  return node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

JsonArray *
symfonic_provider_json_array (JsonObject *object,
                              const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;

  return node != NULL && JSON_NODE_HOLDS_ARRAY (node) ? json_node_get_array (node) : NULL;
}

/* --- OpenAI ------------------------------------------------------------ */

enum { OPENAI_MODEL, OPENAI_THINKING, OPENAI_TEXT, OPENAI_FINISH_REASON, OPENAI_PROMPT_TOKENS,
       OPENAI_COMPLETION_TOKENS };

/* a refusal, rare, is read the general way */
static const SymfonicJsonScanMember openai_delta[] = {
  { "content", SYMFONIC_JSON_SCAN_STRING, OPENAI_TEXT, NULL },
  { "reasoning_content", SYMFONIC_JSON_SCAN_STRING, OPENAI_THINKING, NULL },
  { "refusal", SYMFONIC_JSON_SCAN_REFUSE, 0, NULL },
  { NULL },
};

static const SymfonicJsonScanMember openai_choice[] = {
  { "delta", SYMFONIC_JSON_SCAN_OBJECT, 0, openai_delta },
  { "finish_reason", SYMFONIC_JSON_SCAN_STRING, OPENAI_FINISH_REASON, NULL },
  { NULL },
};

/* the details the routes publish are read the general way, once a
 * stream: only details without them are scanned */
static const SymfonicJsonScanMember openai_usage_details[] = {
  { "cached_tokens", SYMFONIC_JSON_SCAN_REFUSE, 0, NULL },
  { "reasoning_tokens", SYMFONIC_JSON_SCAN_REFUSE, 0, NULL },
  { NULL },
};

/* Anthropic's names, which symfonic_usage_read_counts() takes first, are
 * left to the general way. */
static const SymfonicJsonScanMember openai_usage[] = {
  { "prompt_tokens", SYMFONIC_JSON_SCAN_COUNT, OPENAI_PROMPT_TOKENS, NULL },
  { "completion_tokens", SYMFONIC_JSON_SCAN_COUNT, OPENAI_COMPLETION_TOKENS, NULL },
  { "input_tokens", SYMFONIC_JSON_SCAN_REFUSE, 0, NULL },
  { "output_tokens", SYMFONIC_JSON_SCAN_REFUSE, 0, NULL },
  { "prompt_tokens_details", SYMFONIC_JSON_SCAN_OBJECT, 0, openai_usage_details },
  { "completion_tokens_details", SYMFONIC_JSON_SCAN_OBJECT, 0, openai_usage_details },
  { NULL },
};

/* tool calls, not named, are taken as null or make the scan give up */
static const SymfonicJsonScanMember openai_chunk[] = {
  { "error", SYMFONIC_JSON_SCAN_REFUSE, 0, NULL },
  { "model", SYMFONIC_JSON_SCAN_STRING, OPENAI_MODEL, NULL },
  { "choices", SYMFONIC_JSON_SCAN_FIRST, 0, openai_choice },
  { "usage", SYMFONIC_JSON_SCAN_OBJECT, 0, openai_usage },
  { NULL },
};

/* A count slot's digits, which the scan bounded to fit. */
static gint64
scanned_count (const char *digits)
{
  return digits != NULL ? (gint64) g_ascii_strtoull (digits, NULL, 10) : -1;
}

/* TRUE when @data is a chunk without tool calls or an error, with at most
 * one choice and plain usage counts: @chunk's strings then point into
 * @text. FALSE when it must be read with symfonic_openai_chunk_read(). */
gboolean
symfonic_openai_chunk_scan (const char           *data,
                            gsize                 length,
                            SymfonicJsonScanMemo *memo,
                            GString              *text,
                            SymfonicOpenaiChunk  *chunk)
{
  const char *slots[SYMFONIC_JSON_SCAN_SLOTS];

  if (!symfonic_json_scan (data, length, openai_chunk, memo, text, slots))
    return FALSE;

  *chunk = (SymfonicOpenaiChunk) {
    .cached_tokens = -1,
    .reasoning_tokens = -1,
    .model = slots[OPENAI_MODEL],
    .thinking = slots[OPENAI_THINKING],
    .text = slots[OPENAI_TEXT],
    .finish_reason = slots[OPENAI_FINISH_REASON],
    .usage = { scanned_count (slots[OPENAI_PROMPT_TOKENS]), scanned_count (slots[OPENAI_COMPLETION_TOKENS]) },
  };

  return TRUE;
}

/* FALSE for a chunk with an `error` member: an error after the head. One
 * completion is asked for, so its choice is the first. */
gboolean
symfonic_openai_chunk_read (JsonObject          *object,
                            SymfonicOpenaiChunk *chunk)
{
  JsonArray *choices = symfonic_provider_json_array (object, "choices");
  JsonObject *choice = NULL;
  JsonObject *delta;

  JsonObject *usage = symfonic_provider_json_object (object, "usage");
  guint64 count;

  *chunk = (SymfonicOpenaiChunk) { .cached_tokens = -1, .reasoning_tokens = -1 };
  if (json_object_has_member (object, "error"))
    return FALSE;

  chunk->model = symfonic_provider_json_string (object, "model");
  symfonic_usage_read_counts (usage, &chunk->usage);
  if (symfonic_usage_read_count (symfonic_provider_json_object (usage, "prompt_tokens_details"), "cached_tokens", &count))
    chunk->cached_tokens = count;
  if (symfonic_usage_read_count (symfonic_provider_json_object (usage, "completion_tokens_details"), "reasoning_tokens",
                                 &count))
    chunk->reasoning_tokens = count;
  if (choices != NULL && json_array_get_length (choices) > 0 &&
      JSON_NODE_HOLDS_OBJECT (json_array_get_element (choices, 0)))
    choice = json_array_get_object_element (choices, 0);
  if (choice == NULL)
    return TRUE;

  delta = symfonic_provider_json_object (choice, "delta");
  chunk->thinking = symfonic_provider_json_string (delta, "reasoning_content");
  chunk->text = symfonic_provider_json_string (delta, "content");
  chunk->refusal = symfonic_provider_json_string (delta, "refusal");
  chunk->logprobs = symfonic_provider_json_object (choice, "logprobs");
  chunk->tool_calls = symfonic_provider_json_array (delta, "tool_calls");
  chunk->finish_reason = symfonic_provider_json_string (choice, "finish_reason");

  return TRUE;
}

/* --- Anthropic --------------------------------------------------------- */

enum { ANTHROPIC_TYPE, ANTHROPIC_DELTA_TYPE, ANTHROPIC_TEXT, ANTHROPIC_THINKING };

static const SymfonicJsonScanMember anthropic_delta[] = {
  { "type", SYMFONIC_JSON_SCAN_STRING, ANTHROPIC_DELTA_TYPE, NULL },
  { "text", SYMFONIC_JSON_SCAN_STRING, ANTHROPIC_TEXT, NULL },
  { "thinking", SYMFONIC_JSON_SCAN_STRING, ANTHROPIC_THINKING, NULL },
  { NULL },
};

static const SymfonicJsonScanMember anthropic_frame[] = {
  { "type", SYMFONIC_JSON_SCAN_STRING, ANTHROPIC_TYPE, NULL },
  { "delta", SYMFONIC_JSON_SCAN_OBJECT, 0, anthropic_delta },
  { NULL },
};

/* What both readers decide from the same four strings. */
static gboolean
anthropic_delta_from (const char             *type,
                      const char             *delta_type,
                      const char             *text,
                      const char             *thinking,
                      SymfonicAnthropicDelta *delta)
{
  *delta = (SymfonicAnthropicDelta) { NULL };
  if (g_strcmp0 (type, "ping") == 0)
    return TRUE;
  if (g_strcmp0 (type, "content_block_delta") != 0)
    return FALSE;
  if (g_strcmp0 (delta_type, "text_delta") == 0)
    delta->text = text;
  else if (g_strcmp0 (delta_type, "thinking_delta") == 0)
    delta->thinking = thinking;
  else
    return FALSE;

  return TRUE;
}

/* TRUE when @data is a ping or a text or thinking delta whose every other
 * member is a scalar: @delta's strings then point into @text. */
gboolean
symfonic_anthropic_delta_scan (const char             *data,
                               gsize                   length,
                               SymfonicJsonScanMemo   *memo,
                               GString                *text,
                               SymfonicAnthropicDelta *delta)
{
  const char *slots[SYMFONIC_JSON_SCAN_SLOTS];

  return symfonic_json_scan (data, length, anthropic_frame, memo, text, slots) &&
         anthropic_delta_from (slots[ANTHROPIC_TYPE], slots[ANTHROPIC_DELTA_TYPE], slots[ANTHROPIC_TEXT],
                               slots[ANTHROPIC_THINKING], delta);
}

/* TRUE when @frame is a ping or a text or thinking delta; FALSE for every
 * other frame. */
gboolean
symfonic_anthropic_delta_read (JsonObject             *frame,
                               SymfonicAnthropicDelta *delta)
{
  JsonObject *block_delta = symfonic_provider_json_object (frame, "delta");

  return anthropic_delta_from (symfonic_provider_json_string (frame, "type"),
                               symfonic_provider_json_string (block_delta, "type"),
                               symfonic_provider_json_string (block_delta, "text"),
                               symfonic_provider_json_string (block_delta, "thinking"),
                               delta);
}
