/* test-conformance.c: the contract checks of the transcripts suite, on
 * streams that keep and break each rule
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A suite that passes whatever it is shown proves nothing: each row is
 * what a client could get, and the rule it must be found to break (or
 * none).
 */
#include <string.h>

#include "symfonic-conformance.h"

#define F(id, event, data) "id: " #id "\nevent: " event "\ndata: " data "\n\n"
#define C(id, data) "id: " #id "\ndata: " data "\n\n"
#define RUN ",\"run_id\":\"r\""
#define O(data) "data: " data "\n\n"
#define OC(delta, finish) O ("{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":" \
                             delta ",\"finish_reason\":" finish "}]}")
#define OU O ("{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":3," \
              "\"completion_tokens\":4}}")
#define A(event, data) "event: " event "\ndata: {\"type\":\"" event "\"" data "}\n\n"
#define A_START A ("message_start", ",\"message\":{\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}")
#define A_TEXT(text) A ("content_block_delta", ",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" text "\"}")
#define A_END A ("message_delta", ",\"usage\":{\"output_tokens\":4}") A ("message_stop", "")

typedef struct
{
  const char               *name;
  SymfonicConformanceRoute  route;
  guint                     status;
  const char               *body;
  /* part of the violation expected, or NULL for none */
  const char               *broken;
} Row;

static const Row rows[] = {
  /* the typed stream */
  { "typed", SYMFONIC_CONFORMANCE_TYPED, 200,
    F (1, "ActivationEvent", "{\"node_id\":\"n\"}")
    F (2, "TextDeltaEvent", "{\"text\":\"Hi \"}")
    ": keepalive\n\n"
    F (3, "TextDeltaEvent", "{\"text\":\"there\"}")
    F (4, "MemoryExtractedEvent", "{\"ops\":[]}")
    F (5, "ConsolidationScheduledEvent", "{\"report\":{},\"graph_mutations\":0}")
    F (6, "GraphNodeCreatedEvent", "{\"node_id\":\"n\"}")
    F (7, "ResponseCompleteEvent", "{\"text\":\"Hi there\",\"duration_ms\":1}"), NULL },
  { "typed-error", SYMFONIC_CONFORMANCE_TYPED, 200,
    F (1, "TextDeltaEvent", "{\"text\":\"Hi\"}")
    F (2, "error", "{\"detail\":\"Cut\",\"status\":502,\"code\":\"upstream_error\"}"), NULL },
  { "typed-two-terminals", SYMFONIC_CONFORMANCE_TYPED, 200,
    F (1, "ConsolidationScheduledEvent", "{}")
    F (2, "ResponseCompleteEvent", "{\"text\":\"\"}")
    F (3, "error", "{\"detail\":\"x\",\"status\":500}"), "2 terminal frames" },
  { "typed-no-terminal", SYMFONIC_CONFORMANCE_TYPED, 200, F (1, "TextDeltaEvent", "{\"text\":\"Hi\"}"),
    "0 terminal frames" },
  { "typed-text-differs", SYMFONIC_CONFORMANCE_TYPED, 200,
    F (1, "TextDeltaEvent", "{\"text\":\"Hi\"}")
    F (2, "ConsolidationScheduledEvent", "{}")
    F (3, "ResponseCompleteEvent", "{\"text\":\"Hi!\"}"), "not the concatenation" },
  { "typed-tag", SYMFONIC_CONFORMANCE_TYPED, 200,
    F (1, "TextDeltaEvent", "{\"text\":\"Hi [Semantic:n-1]\"}")
    F (2, "error", "{\"detail\":\"x\",\"status\":500}"), "[Semantic:n-1]" },
  { "typed-thinking-block", SYMFONIC_CONFORMANCE_TYPED, 200,
    F (1, "ThinkingDeltaEvent", "{\"text\":\"<memory_ops>[]\"}")
    F (2, "error", "{\"detail\":\"x\",\"status\":500}"), "<memory_ops>" },
  { "typed-late-activation", SYMFONIC_CONFORMANCE_TYPED, 200,
    F (1, "TextDeltaEvent", "{\"text\":\"Hi\"}")
    F (2, "ActivationEvent", "{}")
    F (3, "error", "{\"detail\":\"x\",\"status\":500}"), "ActivationEvent after" },
  { "typed-early-memory", SYMFONIC_CONFORMANCE_TYPED, 200,
    F (1, "MemoryExtractedEvent", "{\"ops\":[]}")
    F (2, "TextDeltaEvent", "{\"text\":\"Hi\"}")
    F (3, "error", "{\"detail\":\"x\",\"status\":500}"), "before the last TextDeltaEvent" },
  { "typed-two-consolidations", SYMFONIC_CONFORMANCE_TYPED, 200,
    F (1, "ConsolidationScheduledEvent", "{}")
    F (2, "ConsolidationScheduledEvent", "{}")
    F (3, "ResponseCompleteEvent", "{\"text\":\"\"}"), "2 ConsolidationScheduledEvents" },
  { "typed-early-graph", SYMFONIC_CONFORMANCE_TYPED, 200,
    F (1, "GraphEdgeCreatedEvent", "{}")
    F (2, "ConsolidationScheduledEvent", "{}")
    F (3, "ResponseCompleteEvent", "{\"text\":\"\"}"), "graph event before" },
  { "typed-heartbeat-inside", SYMFONIC_CONFORMANCE_TYPED, 200,
    "id: 1\nevent: TextDeltaEvent\n: keepalive\ndata: {\"text\":\"Hi\"}\n\n"
    F (2, "error", "{\"detail\":\"x\",\"status\":500}"), "a comment" },
  { "typed-heartbeat-glued", SYMFONIC_CONFORMANCE_TYPED, 200,
    ": keepalive\nid: 1\nevent: error\ndata: {\"detail\":\"x\",\"status\":500}\n\n", "no blank line between" },
  { "typed-ids", SYMFONIC_CONFORMANCE_TYPED, 200,
    F (1, "TextDeltaEvent", "{\"text\":\"Hi\"}")
    F (3, "error", "{\"detail\":\"x\",\"status\":500}"), "has id" },
  { "typed-ends-in-frame", SYMFONIC_CONFORMANCE_TYPED, 200,
    F (1, "error", "{\"detail\":\"x\",\"status\":500}") "id: 2\nevent: TextDeltaEvent\n", "ends inside frame" },
  { "typed-frames-after-error", SYMFONIC_CONFORMANCE_TYPED, 200,
    F (1, "error", "{\"detail\":\"x\",\"status\":500}")
    F (2, "TextDeltaEvent", "{\"text\":\"Hi\"}"), "frames follow it" },
  { "typed-not-json", SYMFONIC_CONFORMANCE_TYPED, 200,
    F (1, "TextDeltaEvent", "{'text':'Hi'}")
    F (2, "error", "{\"detail\":\"x\",\"status\":500}"), "not strict JSON" },
  { "typed-unknown-event", SYMFONIC_CONFORMANCE_TYPED, 200,
    F (1, "TextEvent", "{\"text\":\"Hi\"}")
    F (2, "error", "{\"detail\":\"x\",\"status\":500}"), "no event of the typed stream" },
  { "typed-refused", SYMFONIC_CONFORMANCE_TYPED, 502, "{\"detail\":\"x\",\"status\":502}", NULL },
  { "typed-wrong-type", SYMFONIC_CONFORMANCE_TYPED, 200, "", "not text/event-stream" },

  /* the chunks of the 11.0 line */
  { "chunks", SYMFONIC_CONFORMANCE_CHUNKS, 200,
    C (1, "{\"event_type\":\"thinking\",\"data\":\"Hm\"" RUN "}")
    C (2, "{\"event_type\":\"text_delta\",\"data\":\"Hi\"" RUN "}")
    C (3, "{\"event_type\":\"done\",\"data\":{\"final_response\":\"Hi\"}" RUN "}"), NULL },
  { "chunks-final-differs", SYMFONIC_CONFORMANCE_CHUNKS, 200,
    C (1, "{\"event_type\":\"text_delta\",\"data\":\"Hi\"" RUN "}")
    C (2, "{\"event_type\":\"done\",\"data\":{\"final_response\":\"Hello\"}" RUN "}"), "final_response is not" },
  { "chunks-null-thinking", SYMFONIC_CONFORMANCE_CHUNKS, 200,
    C (1, "{\"event_type\":\"thinking\",\"data\":null" RUN "}")
    C (2, "{\"event_type\":\"done\",\"data\":{\"final_response\":\"\"}" RUN "}"), "not a string" },
  { "chunks-update", SYMFONIC_CONFORMANCE_CHUNKS, 200,
    C (1, "{\"event_type\":\"update\",\"data\":{}" RUN "}")
    C (2, "{\"event_type\":\"done\",\"data\":{\"final_response\":\"\"}" RUN "}"), "no chunk of the 11.0 line" },
  { "chunks-no-run-id", SYMFONIC_CONFORMANCE_CHUNKS, 200,
    C (1, "{\"event_type\":\"done\",\"data\":{\"final_response\":\"\"}}"), "not a StreamChunk" },
  { "chunks-error", SYMFONIC_CONFORMANCE_CHUNKS, 200,
    C (1, "{\"event_type\":\"text_delta\",\"data\":\"Hi\"" RUN "}")
    "id: 2\nevent: error\ndata: {\"detail\":\"x\",\"status\":502}\n\n", NULL },

  /* the chunks of the 10.x line */
  { "chunks-10", SYMFONIC_CONFORMANCE_CHUNKS_10, 200,
    C (1, "{\"event_type\":\"thinking\",\"data\":null" RUN "}")
    C (2, "{\"event_type\":\"update\",\"data\":{\"agent\":{\"messages\":[{\"type\":\"ai\",\"content\":\"Hi\"}]}}" RUN "}")
    C (3, "{\"event_type\":\"done\",\"data\":{\"final_response\":\"Hi\"}" RUN "}"), NULL },
  { "chunks-10-no-thinking", SYMFONIC_CONFORMANCE_CHUNKS_10, 200,
    C (1, "{\"event_type\":\"done\",\"data\":{\"final_response\":\"\"}" RUN "}"), "does not open" },
  { "chunks-10-tag", SYMFONIC_CONFORMANCE_CHUNKS_10, 200,
    C (1, "{\"event_type\":\"thinking\",\"data\":null" RUN "}")
    C (2, "{\"event_type\":\"update\",\"data\":{\"agent\":{\"messages\":[{\"content\":\"Hi [episodic]\"}]}}" RUN "}")
    C (3, "{\"event_type\":\"done\",\"data\":{\"final_response\":\"Hi [episodic]\"}" RUN "}"), "[episodic]" },

  /* one answer */
  { "chat", SYMFONIC_CONFORMANCE_CHAT, 200, "{\"response\":\"Hi\",\"run_id\":\"r\",\"memory_ops\":[]}", NULL },
  { "chat-tag", SYMFONIC_CONFORMANCE_CHAT, 200,
    "{\"response\":\"Hi [procedural:p]\",\"run_id\":\"r\",\"memory_ops\":[]}", "[procedural:p]" },
  { "chat-shape", SYMFONIC_CONFORMANCE_CHAT, 200, "{\"response\":\"Hi\"}", "not an AgentResponse" },
  { "chat-error", SYMFONIC_CONFORMANCE_CHAT, 502, "{\"detail\":\"x\",\"status\":502}", NULL },

  /* OpenAI's chunks */
  { "openai", SYMFONIC_CONFORMANCE_OPENAI, 200,
    OC ("{\"content\":\"Hi\"}", "null") OC ("{}", "\"stop\"") OU O ("[DONE]"), NULL },
  { "openai-two-done", SYMFONIC_CONFORMANCE_OPENAI, 200,
    OC ("{}", "\"stop\"") O ("[DONE]") O ("[DONE]"), "2 data: [DONE]" },
  { "openai-no-finish", SYMFONIC_CONFORMANCE_OPENAI, 200, OC ("{\"content\":\"Hi\"}", "null") O ("[DONE]"),
    "not exactly one terminal" },
  { "openai-usage-first", SYMFONIC_CONFORMANCE_OPENAI, 200, OU OC ("{}", "\"stop\"") O ("[DONE]"),
    "usage chunk comes before" },
  { "openai-tag", SYMFONIC_CONFORMANCE_OPENAI, 200,
    OC ("{\"content\":\"</memory_ops>\"}", "null") OC ("{}", "\"stop\"") O ("[DONE]"), "</memory_ops>" },
  { "openai-error", SYMFONIC_CONFORMANCE_OPENAI, 200,
    OC ("{\"content\":\"Hi\"}", "null") O ("{\"error\":{\"message\":\"x\"}}") O ("[DONE]"), NULL },

  /* Anthropic's events */
  { "anthropic", SYMFONIC_CONFORMANCE_ANTHROPIC, 200, A_START A_TEXT ("Hi") A_END, NULL },
  { "anthropic-no-stop", SYMFONIC_CONFORMANCE_ANTHROPIC, 200, A_START A_TEXT ("Hi"), "not exactly one terminal" },
  { "anthropic-no-start", SYMFONIC_CONFORMANCE_ANTHROPIC, 200, A_TEXT ("Hi") A_END, "does not open" },
  { "anthropic-tag", SYMFONIC_CONFORMANCE_ANTHROPIC, 200, A_START A_TEXT ("[semantic]") A_END, "[semantic]" },
  { "anthropic-after-stop", SYMFONIC_CONFORMANCE_ANTHROPIC, 200, A_START A_END A_TEXT ("Hi"), "events follow it" },
};

static void
test_row (gconstpointer data)
{
  const Row *row = data;
  g_autoptr(SymfonicConformanceResult) result = symfonic_conformance_result_new (row->name, row->route, NULL);
  const char *type = row->status == 200 && row->route != SYMFONIC_CONFORMANCE_CHAT && *row->body != '\0'
                     ? "text/event-stream" : "application/json";
  gboolean found = FALSE;

  symfonic_conformance_check_response (result, row->status, type, row->body);
  for (guint i = 0; i < result->violations->len; i++)
    {
      const char *violation = g_ptr_array_index (result->violations, i);

      g_test_message ("%s", violation);
      if (row->broken != NULL && strstr (violation, row->broken) != NULL)
        found = TRUE;
    }
  if (row->broken == NULL)
    g_assert_cmpuint (result->violations->len, ==, 0);
  else
    g_assert_true (found);
}

static void
test_texts (void)
{
  g_autoptr(SymfonicConformanceResult) typed =
    symfonic_conformance_result_new ("t", SYMFONIC_CONFORMANCE_TYPED, NULL);
  g_autoptr(SymfonicConformanceResult) openai =
    symfonic_conformance_result_new ("t", SYMFONIC_CONFORMANCE_OPENAI, NULL);
  g_autoptr(SymfonicConformanceResult) anthropic =
    symfonic_conformance_result_new ("t", SYMFONIC_CONFORMANCE_ANTHROPIC, NULL);

  symfonic_conformance_check_response (typed, 200, "text/event-stream", rows[0].body);
  g_assert_true (typed->success);
  g_assert_cmpstr (typed->text, ==, "Hi there");
  symfonic_conformance_check_response (openai, 200, "text/event-stream",
                                       OC ("{\"content\":\"Hi\"}", "null") OC ("{}", "\"stop\"") OU O ("[DONE]"));
  g_assert_true (openai->success);
  g_assert_cmpstr (openai->text, ==, "Hi");
  g_assert_cmpint (openai->input_tokens, ==, 3);
  g_assert_cmpint (openai->output_tokens, ==, 4);
  symfonic_conformance_check_response (anthropic, 200, "text/event-stream", A_START A_TEXT ("Hi") A_END);
  g_assert_true (anthropic->success);
  g_assert_cmpint (anthropic->input_tokens, ==, 3);
  g_assert_cmpint (anthropic->output_tokens, ==, 4);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autofree char *path = g_strdup_printf ("/conformance/%s", rows[i].name);

      g_test_add_data_func (path, &rows[i], test_row);
    }
  g_test_add_func ("/conformance/texts", test_texts);

  return g_test_run ();
}
