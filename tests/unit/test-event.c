/* test-event.c: typed events, their validation and their wire encoding
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <symfonic.h>

static JsonObject *
object_from_string (const char *json)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = json_from_string (json, &error);

  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (node));

  return json_node_dup_object (node);
}

/* The payload of a typed frame must be one line of valid JSON whatever the
 * text, or a client's SSE parser splits or drops the event. */
static void
assert_one_line_json (const char *json)
{
  g_autofree char *frame = NULL;

  g_assert_true (g_utf8_validate (json, -1, NULL));
  for (const char *p = json; *p != '\0'; p++)
    g_assert_cmpint ((guchar) *p, >=, 0x20);

  frame = g_strconcat ("data: ", json, "\n\n", NULL);
  g_assert_cmpuint (strcspn (frame, "\r\n"), ==, strlen (frame) - 2);
}

typedef struct
{
  const char *name;
  const char *input;
  const char *expected;
} TextCase;

static const TextCase text_cases[] = {
  { "unicode", "naïve — 日本語 🎉", "naïve — 日本語 🎉" },
  { "newlines", "line one\nline two\n", "line one\nline two\n" },
  { "carriage-returns", "a\r\nb\rc", "a\r\nb\rc" },
  { "tabs", "\tindented\tcell", "\tindented\tcell" },
  { "quotes", "say \"hi\" and 'bye'", "say \"hi\" and 'bye'" },
  { "backslashes", "C:\\path\\n \\u0041 \\", "C:\\path\\n \\u0041 \\" },
  { "controls",
    "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"
    "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f",
    "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"
    "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f" },
  { "delete", "a\x7f" "b", "a\x7f" "b" },
  { "line-separators", "a\xe2\x80\xa8" "b\xe2\x80\xa9" "c", "a\xe2\x80\xa8" "b\xe2\x80\xa9" "c" },
  { "invalid-byte", "abc\xff def", "abc\xef\xbf\xbd def" },
  { "invalid-continuation", "\xc3(", "\xef\xbf\xbd(" },
  { "truncated-sequence", "x\xe6\x97", "x\xef\xbf\xbd\xef\xbf\xbd" },
  { "script", "</script><b>", "</script><b>" },
  { "empty", "", "" },
};

static void
test_event_text_encoding (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (text_cases); i++)
    {
      const TextCase *c = &text_cases[i];
      SymfonicEvent *(*constructors[]) (const char *) = {
        symfonic_event_new_text_delta,
        symfonic_event_new_thinking_delta,
      };

      g_test_message ("case %s", c->name);
      for (guint k = 0; k < G_N_ELEMENTS (constructors); k++)
        {
          g_autoptr(SymfonicEvent) event = constructors[k] (c->input);
          g_autofree char *json = symfonic_event_to_json (event);
          g_autoptr(JsonObject) parsed = NULL;
          g_autoptr(GString) appended = g_string_new ("data: ");

          g_assert_cmpstr (symfonic_event_get_text (event, NULL), ==, c->expected);
          assert_one_line_json (json);

          parsed = object_from_string (json);
          g_assert_cmpuint (json_object_get_size (parsed), ==, 1);
          g_assert_cmpstr (json_object_get_string_member (parsed, "text"), ==, c->expected);

          /* the streaming writer appends the same bytes */
          symfonic_event_write_json (event, appended);
          g_assert_cmpstr (appended->str + strlen ("data: "), ==, json);
        }
    }
}

/* The length comes with the text, for every way an event is made: by a
 * constructor, from JSON, from the wire's bytes; none for other kinds. */
static void
test_event_text_length (void)
{
  static const char text[] = "caf\xC3\xA9 \xE2\x9C\x93";
  g_autoptr(SymfonicEvent) delta = symfonic_event_new_text_delta (text);
  g_autoptr(SymfonicEvent) thinking = symfonic_event_new_thinking_delta ("");
  g_autoptr(SymfonicEvent) terminal = symfonic_event_new_response_complete ("done.", 7);
  static const char data[] = "{\"text\":\"a\\u00e9\"}";
  g_autoptr(SymfonicEvent) wire = symfonic_event_try_new_from_data ("TextDeltaEvent", data, sizeof data - 1);
  g_autoptr(JsonObject) payload = object_from_string ("{\"tool_name\":\"search\",\"tool_call_id\":\"c1\"}");
  g_autoptr(SymfonicEvent) tool = symfonic_event_new (SYMFONIC_EVENT_KIND_TOOL_CALL_START, payload, NULL);
  gsize length = 99;

  g_assert_cmpstr (symfonic_event_get_text (delta, &length), ==, text);
  g_assert_cmpuint (length, ==, strlen (text));
  g_assert_cmpstr (symfonic_event_get_text (thinking, &length), ==, "");
  g_assert_cmpuint (length, ==, 0);
  g_assert_cmpstr (symfonic_event_get_text (terminal, &length), ==, "done.");
  g_assert_cmpuint (length, ==, 5);
  g_assert_nonnull (wire);
  g_assert_cmpstr (symfonic_event_get_text (wire, &length), ==, "a\xC3\xA9");
  g_assert_cmpuint (length, ==, 3);

  length = 99;
  g_assert_null (symfonic_event_get_text (tool, &length));
  g_assert_cmpuint (length, ==, 0);
}

static void
test_event_exact_encoding (void)
{
  g_autoptr(SymfonicEvent) delta = symfonic_event_new_text_delta ("a\"b\\c\nd\x01" "e\tf");
  g_autoptr(SymfonicEvent) thinking = symfonic_event_new_thinking_delta ("hmm");
  g_autoptr(SymfonicEvent) complete = symfonic_event_new_response_complete ("Hello", 1234);
  g_autofree char *delta_json = symfonic_event_to_json (delta);
  g_autofree char *thinking_json = symfonic_event_to_json (thinking);
  g_autofree char *complete_json = symfonic_event_to_json (complete);

  g_assert_cmpstr (delta_json, ==, "{\"text\":\"a\\\"b\\\\c\\nd\\u0001e\\tf\"}");
  g_assert_cmpstr (thinking_json, ==, "{\"text\":\"hmm\"}");
  g_assert_cmpstr (complete_json, ==, "{\"text\":\"Hello\",\"duration_ms\":1234}");
}

typedef struct
{
  SymfonicEventKind  kind;
  const char        *name;
  const char        *payload;
} KindCase;

/* Section 4 of DESIGN.md: the typed names and a minimal valid payload. */
static const KindCase kind_cases[] = {
  { SYMFONIC_EVENT_KIND_ACTIVATION, "ActivationEvent",
    "{\"node_id\":\"n1\",\"node_label\":\"sky\",\"score\":0.5,\"layer\":2,\"source_node_id\":null}" },
  { SYMFONIC_EVENT_KIND_THINKING_DELTA, "ThinkingDeltaEvent", "{\"text\":\"hmm\"}" },
  { SYMFONIC_EVENT_KIND_TEXT_DELTA, "TextDeltaEvent", "{\"text\":\"Hel\"}" },
  { SYMFONIC_EVENT_KIND_TOOL_CALL_START, "ToolCallStartEvent", "{\"tool_name\":\"search\",\"tool_call_id\":\"c1\"}" },
  { SYMFONIC_EVENT_KIND_TOOL_RESULT, "ToolResultEvent", "{\"tool_call_id\":\"c1\",\"result\":{\"hits\":[1,2]}}" },
  { SYMFONIC_EVENT_KIND_MEMORY_EXTRACTED, "MemoryExtractedEvent", "{\"ops\":[{\"op\":\"add\",\"text\":\"likes tea\"}]}" },
  { SYMFONIC_EVENT_KIND_CONSOLIDATION_SCHEDULED, "ConsolidationScheduledEvent",
    "{\"report\":{\"scheduled\":true},\"graph_mutations\":0}" },
  { SYMFONIC_EVENT_KIND_GRAPH_NODE_CREATED, "GraphNodeCreatedEvent", "{\"node_id\":\"n2\",\"label\":\"tea\",\"layer\":1}" },
  { SYMFONIC_EVENT_KIND_GRAPH_EDGE_CREATED, "GraphEdgeCreatedEvent",
    "{\"source\":\"n1\",\"target\":\"n2\",\"relationship\":\"likes\"}" },
  { SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE, "ResponseCompleteEvent", "{\"text\":\"Hello\",\"duration_ms\":42}" },
  { SYMFONIC_EVENT_KIND_TOOL_CALL_DELTA, "ToolCallDeltaEvent", "{\"tool_call_id\":\"c1\",\"index\":0,\"arguments\":\"{\\\"q\\\"\"}" },
};

static void
test_event_kind_names (void)
{
  static const char * const unknown[] = {
    "error", "textdeltaevent", "TextDelta", "TextDeltaEvent ", "", "Event",
  };

  for (guint i = 0; i < G_N_ELEMENTS (kind_cases); i++)
    {
      SymfonicEventKind kind = SYMFONIC_EVENT_KIND_CHUNK;

      g_assert_cmpstr (symfonic_event_kind_to_name (kind_cases[i].kind), ==, kind_cases[i].name);
      g_assert_true (symfonic_event_kind_from_name (kind_cases[i].name, &kind));
      g_assert_cmpint (kind, ==, kind_cases[i].kind);
      g_assert_true (symfonic_event_kind_from_name (kind_cases[i].name, NULL));
    }

  for (guint i = 0; i < G_N_ELEMENTS (unknown); i++)
    {
      SymfonicEventKind kind = SYMFONIC_EVENT_KIND_CHUNK;

      g_test_message ("name “%s”", unknown[i]);
      g_assert_false (symfonic_event_kind_from_name (unknown[i], &kind));
      g_assert_cmpint (kind, ==, SYMFONIC_EVENT_KIND_CHUNK);
    }
}

/* Section 4's order: what comes after the last delta, and the terminal.
 * Every kind has its row, so that a kind added later must be placed. */
static const struct {
  SymfonicEventKind kind;
  gboolean          closes;
} closes_cases[] = {
  { SYMFONIC_EVENT_KIND_ACTIVATION, FALSE },
  { SYMFONIC_EVENT_KIND_THINKING_DELTA, FALSE },
  { SYMFONIC_EVENT_KIND_TEXT_DELTA, FALSE },
  { SYMFONIC_EVENT_KIND_TOOL_CALL_START, FALSE },
  { SYMFONIC_EVENT_KIND_TOOL_RESULT, FALSE },
  { SYMFONIC_EVENT_KIND_MEMORY_EXTRACTED, TRUE },
  { SYMFONIC_EVENT_KIND_CONSOLIDATION_SCHEDULED, TRUE },
  { SYMFONIC_EVENT_KIND_GRAPH_NODE_CREATED, TRUE },
  { SYMFONIC_EVENT_KIND_GRAPH_EDGE_CREATED, TRUE },
  { SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE, TRUE },
  { SYMFONIC_EVENT_KIND_CHUNK, FALSE },
  /* a fragment of a call's arguments: text may follow */
  { SYMFONIC_EVENT_KIND_TOOL_CALL_DELTA, FALSE },
};

static void
test_event_kind_closes_answer (void)
{
  g_autoptr(GEnumClass) kinds = g_type_class_ref (SYMFONIC_TYPE_EVENT_KIND);

  g_assert_cmpuint (G_N_ELEMENTS (closes_cases), ==, kinds->n_values);
  for (guint i = 0; i < kinds->n_values; i++)
    {
      gboolean found = FALSE;

      for (guint k = 0; k < G_N_ELEMENTS (closes_cases); k++)
        found |= closes_cases[k].kind == (SymfonicEventKind) kinds->values[i].value;
      g_test_message ("kind %s", kinds->values[i].value_nick);
      g_assert_true (found);
    }

  for (guint i = 0; i < G_N_ELEMENTS (closes_cases); i++)
    {
      g_test_message ("kind %d", closes_cases[i].kind);
      g_assert_cmpint (symfonic_event_kind_closes_answer (closes_cases[i].kind), ==, closes_cases[i].closes);
    }

  if (g_test_undefined ())
    {
      g_test_expect_message ("Symfonic", G_LOG_LEVEL_CRITICAL, "*kind_is_valid*");
      g_assert_false (symfonic_event_kind_closes_answer ((SymfonicEventKind) 99));
      g_test_assert_expected_messages ();
    }
}

static void
test_event_new_valid (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (kind_cases); i++)
    {
      g_autoptr(JsonObject) payload = object_from_string (kind_cases[i].payload);
      g_autoptr(GError) error = NULL;
      g_autoptr(SymfonicEvent) event = NULL;
      g_autoptr(JsonNode) expected = json_from_string (kind_cases[i].payload, NULL);
      g_autoptr(JsonNode) encoded = NULL;
      g_autofree char *json = NULL;

      g_test_message ("kind %s", kind_cases[i].name);
      event = symfonic_event_new (kind_cases[i].kind, payload, &error);
      g_assert_no_error (error);
      g_assert_cmpint (symfonic_event_get_kind (event), ==, kind_cases[i].kind);
      g_assert_cmpstr (symfonic_event_get_name (event), ==, kind_cases[i].name);

      json = symfonic_event_to_json (event);
      assert_one_line_json (json);
      encoded = json_from_string (json, &error);
      g_assert_no_error (error);
      g_assert_true (json_node_equal (encoded, expected));
    }
}

typedef struct
{
  const char        *name;
  SymfonicEventKind  kind;
  const char        *payload;
  const char        *field;
} InvalidEventCase;

static const InvalidEventCase invalid_event_cases[] = {
  { "activation-no-score", SYMFONIC_EVENT_KIND_ACTIVATION,
    "{\"node_id\":\"n1\",\"node_label\":\"sky\",\"layer\":2,\"source_node_id\":null}", "score" },
  { "activation-empty", SYMFONIC_EVENT_KIND_ACTIVATION, "{}", "node_id" },
  { "text-missing", SYMFONIC_EVENT_KIND_TEXT_DELTA, "{}", "text" },
  { "text-number", SYMFONIC_EVENT_KIND_TEXT_DELTA, "{\"text\":5}", "text" },
  { "text-null", SYMFONIC_EVENT_KIND_TEXT_DELTA, "{\"text\":null}", "text" },
  { "thinking-object", SYMFONIC_EVENT_KIND_THINKING_DELTA, "{\"text\":{}}", "text" },
  { "tool-call-no-id", SYMFONIC_EVENT_KIND_TOOL_CALL_START, "{\"tool_name\":\"search\"}", "tool_call_id" },
  { "tool-result-no-result", SYMFONIC_EVENT_KIND_TOOL_RESULT, "{\"tool_call_id\":\"c1\"}", "result" },
  { "memory-no-ops", SYMFONIC_EVENT_KIND_MEMORY_EXTRACTED, "{}", "ops" },
  { "memory-ops-object", SYMFONIC_EVENT_KIND_MEMORY_EXTRACTED, "{\"ops\":{}}", "ops" },
  { "memory-ops-string", SYMFONIC_EVENT_KIND_MEMORY_EXTRACTED, "{\"ops\":\"add\"}", "ops" },
  { "memory-ops-null", SYMFONIC_EVENT_KIND_MEMORY_EXTRACTED, "{\"ops\":null}", "ops" },
  { "consolidation-no-mutations", SYMFONIC_EVENT_KIND_CONSOLIDATION_SCHEDULED, "{\"report\":{}}", "graph_mutations" },
  { "consolidation-mutations-string", SYMFONIC_EVENT_KIND_CONSOLIDATION_SCHEDULED,
    "{\"report\":{},\"graph_mutations\":\"2\"}", "graph_mutations" },
  { "consolidation-mutations-negative", SYMFONIC_EVENT_KIND_CONSOLIDATION_SCHEDULED,
    "{\"report\":{},\"graph_mutations\":-1}", "graph_mutations" },
  { "consolidation-mutations-fraction", SYMFONIC_EVENT_KIND_CONSOLIDATION_SCHEDULED,
    "{\"report\":{},\"graph_mutations\":1.5}", "graph_mutations" },
  { "node-no-layer", SYMFONIC_EVENT_KIND_GRAPH_NODE_CREATED, "{\"node_id\":\"n\",\"label\":\"l\"}", "layer" },
  { "edge-no-relationship", SYMFONIC_EVENT_KIND_GRAPH_EDGE_CREATED,
    "{\"source\":\"a\",\"target\":\"b\"}", "relationship" },
  { "complete-no-duration", SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE, "{\"text\":\"x\"}", "duration_ms" },
  { "complete-no-text", SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE, "{\"duration_ms\":1}", "text" },
  { "chunk-no-event-type", SYMFONIC_EVENT_KIND_CHUNK, "{\"data\":null}", "event_type" },
};

static void
test_event_new_invalid (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (invalid_event_cases); i++)
    {
      const InvalidEventCase *c = &invalid_event_cases[i];
      g_autoptr(JsonObject) payload = object_from_string (c->payload);
      g_autoptr(GError) error = NULL;
      g_autoptr(SymfonicEvent) event = NULL;

      g_test_message ("case %s", c->name);
      event = symfonic_event_new (c->kind, payload, &error);
      g_assert_null (event);
      g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM);
      g_assert_nonnull (strstr (error->message, c->field));
    }
}

/* A duration that is not a number must be refused like any malformed
 * field. Run in a child: json-glib criticals on some of these inputs, and
 * that must not stop the rest of this file. */
static void
test_event_duration_not_a_number (void)
{
  static const char * const payloads[] = {
    "{\"text\":\"x\",\"duration_ms\":\"soon\"}",
    "{\"text\":\"x\",\"duration_ms\":[12]}",
    "{\"text\":\"x\",\"duration_ms\":{}}",
  };

  if (g_test_subprocess ())
    {
      for (guint i = 0; i < G_N_ELEMENTS (payloads); i++)
        {
          g_autoptr(JsonObject) payload = object_from_string (payloads[i]);
          g_autoptr(GError) error = NULL;
          g_autoptr(SymfonicEvent) event = NULL;

          g_test_message ("payload %s", payloads[i]);
          event = symfonic_event_new (SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE, payload, &error);
          g_assert_null (event);
          g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM);
          g_assert_nonnull (strstr (error->message, "duration_ms"));
        }
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  if (!g_test_trap_has_passed ())
    g_test_fail_printf ("a ResponseCompleteEvent with a non-numeric duration_ms was not refused cleanly");
}

static void
test_event_deep_copy (void)
{
  g_autoptr(JsonObject) payload = object_from_string ("{\"tool_call_id\":\"c1\",\"result\":{\"rows\":[1,2]}}");
  g_autoptr(GError) error = NULL;
  g_autoptr(SymfonicEvent) event = NULL;
  g_autofree char *json = NULL;
  JsonObject *result;

  event = symfonic_event_new (SYMFONIC_EVENT_KIND_TOOL_RESULT, payload, &error);
  g_assert_no_error (error);

  /* change the caller's object, at the top and deep inside */
  json_object_set_string_member (payload, "tool_call_id", "changed");
  json_object_set_int_member (payload, "extra", 1);
  result = json_object_get_object_member (payload, "result");
  json_array_add_int_element (json_object_get_array_member (result, "rows"), 3);
  json_object_set_null_member (result, "added");

  json = symfonic_event_to_json (event);
  g_assert_cmpstr (json, ==, "{\"tool_call_id\":\"c1\",\"result\":{\"rows\":[1,2]}}");
  g_assert_cmpstr (json_object_get_string_member (symfonic_event_get_payload (event), "tool_call_id"), ==, "c1");
  /* shared between threads without copying: sealed */
  g_assert_true (json_object_is_immutable (symfonic_event_get_payload (event)));
  g_assert_true (json_node_is_immutable (symfonic_event_get_data (event)));
}

/* The caller keeps its JSON and may change a scalar in place after the
 * event copied it: the event must not change, and sealing the event's copy
 * must not seal the caller's node. In a child, because json-glib criticals
 * when a sealed value is set. */
static void
test_event_deep_copy_scalars (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr(JsonNode) text = json_node_new (JSON_NODE_VALUE);
      g_autoptr(JsonObject) payload = object_from_string ("{\"tool_call_id\":\"c1\",\"result\":7}");
      g_autoptr(SymfonicEvent) chunk = NULL;
      g_autoptr(SymfonicEvent) event = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *chunk_json = NULL;
      g_autofree char *event_json = NULL;

      json_node_set_string (text, "Hel");
      chunk = symfonic_event_new_chunk ("text_delta", text);
      g_assert_false (json_node_is_immutable (text));
      json_node_set_string (text, "changed");
      g_assert_cmpstr (json_node_get_string (text), ==, "changed");
      chunk_json = symfonic_event_to_json (chunk);
      g_assert_cmpstr (chunk_json, ==, "\"Hel\"");

      event = symfonic_event_new (SYMFONIC_EVENT_KIND_TOOL_RESULT, payload, &error);
      g_assert_no_error (error);
      json_node_set_int (json_object_get_member (payload, "result"), 8);
      event_json = symfonic_event_to_json (event);
      g_assert_cmpstr (event_json, ==, "{\"tool_call_id\":\"c1\",\"result\":7}");
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  if (!g_test_trap_has_passed ())
    g_test_fail_printf ("an event's copy of its JSON shares scalar values with the caller's");
}

static void
test_event_structured_one_line (void)
{
  g_autoptr(JsonObject) payload = object_from_string (
    "{\"tool_call_id\":\"c1\",\"result\":\"line one\\nline two\\r\\u0001 \\u2028 end\"}");
  g_autoptr(GError) error = NULL;
  g_autoptr(SymfonicEvent) event = NULL;
  g_autofree char *json = NULL;
  g_autoptr(JsonObject) parsed = NULL;

  event = symfonic_event_new (SYMFONIC_EVENT_KIND_TOOL_RESULT, payload, &error);
  g_assert_no_error (error);
  json = symfonic_event_to_json (event);
  assert_one_line_json (json);
  parsed = object_from_string (json);
  g_assert_cmpstr (json_object_get_string_member (parsed, "result"), ==,
                   "line one\nline two\r\x01 \xe2\x80\xa8 end");
}

static void
test_event_chunks (void)
{
  g_autoptr(JsonNode) text = json_node_new (JSON_NODE_VALUE);
  g_autoptr(JsonNode) done = json_from_string ("{\"final_response\":\"Hi\\nthere\"}", NULL);
  g_autoptr(SymfonicEvent) delta = NULL;
  g_autoptr(SymfonicEvent) thinking = NULL;
  g_autoptr(SymfonicEvent) terminal = NULL;
  g_autoptr(SymfonicEvent) update = NULL;
  g_autoptr(JsonObject) payload = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *delta_json = NULL;
  g_autofree char *thinking_json = NULL;
  g_autofree char *terminal_json = NULL;
  g_autofree char *update_json = NULL;

  json_node_set_string (text, "Hel");
  delta = symfonic_event_new_chunk ("text_delta", text);
  g_assert_cmpint (symfonic_event_get_kind (delta), ==, SYMFONIC_EVENT_KIND_CHUNK);
  g_assert_cmpstr (symfonic_event_get_name (delta), ==, "text_delta");
  g_assert_null (symfonic_event_get_text (delta, NULL));
  g_assert_null (symfonic_event_get_payload (delta));
  delta_json = symfonic_event_to_json (delta);
  g_assert_cmpstr (delta_json, ==, "\"Hel\"");

  thinking = symfonic_event_new_chunk ("thinking", NULL);
  g_assert_true (JSON_NODE_HOLDS_NULL (symfonic_event_get_data (thinking)));
  thinking_json = symfonic_event_to_json (thinking);
  g_assert_cmpstr (thinking_json, ==, "null");

  terminal = symfonic_event_new_chunk ("done", done);
  json_object_set_string_member (json_node_get_object (done), "final_response", "changed");
  terminal_json = symfonic_event_to_json (terminal);
  assert_one_line_json (terminal_json);
  g_assert_cmpstr (terminal_json, ==, "{\"final_response\":\"Hi\\nthere\"}");

  payload = object_from_string ("{\"event_type\":\"update\",\"data\":{\"agent\":{\"messages\":[]}}}");
  update = symfonic_event_new (SYMFONIC_EVENT_KIND_CHUNK, payload, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (symfonic_event_get_name (update), ==, "update");
  update_json = symfonic_event_to_json (update);
  g_assert_cmpstr (update_json, ==, "{\"agent\":{\"messages\":[]}}");
}

static void
test_event_response_complete (void)
{
  g_autoptr(SymfonicEvent) direct = symfonic_event_new_response_complete ("Hello world", 1500);
  g_autoptr(JsonObject) payload = object_from_string ("{\"text\":\"ab\",\"duration_ms\":50}");
  g_autoptr(SymfonicEvent) parsed = NULL;
  g_autoptr(SymfonicEvent) delta = symfonic_event_new_text_delta ("x");
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (symfonic_event_get_kind (direct), ==, SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE);
  g_assert_cmpstr (symfonic_event_get_name (direct), ==, "ResponseCompleteEvent");
  g_assert_cmpstr (symfonic_event_get_text (direct, NULL), ==, "Hello world");
  g_assert_cmpint (symfonic_event_get_duration_ms (direct), ==, 1500);

  parsed = symfonic_event_new (SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE, payload, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (symfonic_event_get_text (parsed, NULL), ==, "ab");
  g_assert_cmpint (symfonic_event_get_duration_ms (parsed), ==, 50);

  node = symfonic_event_to_json_node (direct);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (node), "text"), ==, "Hello world");
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (node), "duration_ms"), ==, 1500);

  g_assert_cmpint (symfonic_event_get_duration_ms (delta), ==, 0);
}

typedef struct
{
  const char *name;
  const char *data;
} WireCase;

static void
test_event_from_json (void)
{
  static const WireCase invalid[] = {
    { "Bogus", "{\"text\":\"x\"}" },
    { "error", "{\"detail\":\"x\",\"status\":500}" },
    { "StreamChunk", "{\"event_type\":\"x\",\"data\":null}" },
    { "TextDeltaEvent", "[\"x\"]" },
    { "TextDeltaEvent", "\"x\"" },
  };
  g_autoptr(JsonNode) data = json_from_string ("{\"text\":\"Hel\",\"ignored\":1}", NULL);
  g_autoptr(SymfonicEvent) event = NULL;
  g_autoptr(GError) error = NULL;

  event = symfonic_event_new_from_json ("TextDeltaEvent", data, &error);
  g_assert_no_error (error);
  g_assert_cmpint (symfonic_event_get_kind (event), ==, SYMFONIC_EVENT_KIND_TEXT_DELTA);
  g_assert_cmpstr (symfonic_event_get_text (event, NULL), ==, "Hel");

  for (guint i = 0; i < G_N_ELEMENTS (invalid); i++)
    {
      g_autoptr(JsonNode) node = json_from_string (invalid[i].data, NULL);
      g_autoptr(SymfonicEvent) refused = NULL;
      g_autoptr(GError) local_error = NULL;

      g_test_message ("%s %s", invalid[i].name, invalid[i].data);
      refused = symfonic_event_new_from_json (invalid[i].name, node, &local_error);
      g_assert_null (refused);
      g_assert_error (local_error, SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM);
    }
}

/* What the general way makes of @data: the event, or NULL. */
static SymfonicEvent *
decode_general (const char *name,
                const char *data,
                gsize       length)
{
  g_autoptr(JsonNode) root = symfonic_json_parse (data, length, SYMFONIC_JSON_MAX_DEPTH, NULL);

  return root != NULL ? symfonic_event_new_from_json (name, root, NULL) : NULL;
}

static gboolean
payloads_agree (JsonObject *a,
                JsonObject *b)
{
  g_autoptr(JsonNode) node_a = NULL;
  g_autoptr(JsonNode) node_b = NULL;

  if (a == NULL || b == NULL)
    return a == b;

  node_a = json_node_init_object (json_node_alloc (), a);
  node_b = json_node_init_object (json_node_alloc (), b);
  return json_node_equal (node_a, node_b);
}

/* The fast path takes @data only when the general way gives the same
 * event, written the same and with an equal payload; returns whether it
 * took it. */
static gboolean
assert_fast_agrees (const char *name,
                    const char *data,
                    gsize       length)
{
  g_autoptr(SymfonicEvent) fast = symfonic_event_try_new_from_data (name, data, length);
  g_autoptr(SymfonicEvent) general = NULL;
  g_autofree char *fast_json = NULL;
  g_autofree char *general_json = NULL;

  if (fast == NULL)
    return FALSE;

  general = decode_general (name, data, length);
  fast_json = symfonic_event_to_json (fast);
  if (general != NULL)
    general_json = symfonic_event_to_json (general);
  if (general == NULL ||
      symfonic_event_get_kind (fast) != symfonic_event_get_kind (general) ||
      g_strcmp0 (symfonic_event_get_text (fast, NULL), symfonic_event_get_text (general, NULL)) != 0 ||
      symfonic_event_get_duration_ms (fast) != symfonic_event_get_duration_ms (general) ||
      strcmp (fast_json, general_json) != 0 ||
      !payloads_agree (symfonic_event_get_payload (fast), symfonic_event_get_payload (general)))
    {
      g_autofree char *escaped = g_strescape (data, NULL);

      g_test_message ("%s %s", name, escaped);
      g_assert_not_reached ();
    }

  return TRUE;
}

static void
test_event_fast_path (void)
{
  static const struct {
    const char *name;
    const char *data;
    const char *text;
  } taken[] = {
    { "TextDeltaEvent", "{\"text\":\"Hel\"}", "Hel" },
    { "ThinkingDeltaEvent", "{\"text\":\"hmm\"}", "hmm" },
    { "TextDeltaEvent", " { \"text\" : \"a\\\"b\\n\" } \n", "a\"b\n" },
    { "TextDeltaEvent", "{\"text\":\"80 \\u00b0C \\ud83d\\ude00\"}", "80 \u00b0C \U0001F600" },
    { "TextDeltaEvent", "{\"text\":\"\"}", "" },
    /* the member's name is a JSON string like any other */
    { "TextDeltaEvent", "{\"te\\u0078t\":\"x\"}", "x" },
    /* the terminal, its members in either order */
    { "ResponseCompleteEvent", "{\"text\":\"Hello <b>\\\"w\\\"\",\"duration_ms\":1234}", "Hello <b>\"w\"" },
    { "ResponseCompleteEvent", " {\"duration_ms\" : 0 , \"text\" : \"\"}\n", "" },
    { "ResponseCompleteEvent", "{\"duration_ms\":-5,\"text\":\"caf\\u00e9\"}", "caf\u00e9" },
    { "ResponseCompleteEvent", "{\"text\":\"x\",\"duration_ms\":999999999999999999}", "x" },
  };
  static const struct {
    const char *name;
    const char *data;
    const char *json;
  } structured[] = {
    { "ActivationEvent",
      "{\"node_id\":\"n0\",\"node_label\":\"fact\",\"score\":0.5,\"layer\":\"semantic\",\"source_node_id\":null}",
      "{\"node_id\":\"n0\",\"node_label\":\"fact\",\"score\":0.5,\"layer\":\"semantic\",\"source_node_id\":null}" },
    /* written as the tree would be: spaces gone, escapes and numbers in
     * the writer's form, members in their order, unknown ones kept */
    { "ActivationEvent",
      " { \"layer\" : \"e\\u0070isodic\" , \"score\" : 1E0, \"node_id\":\"a\\/b\", \"node_label\":\"\\u00e9\",\n"
      "\"source_node_id\":\"n1\", \"extra\": [] }",
      NULL },
    { "ActivationEvent",
      " { \"layer\" : \"e\\u0070isodic\" , \"score\" : 1E0, \"node_id\":\"a\\/b\", \"node_label\":\"\\u00e9\",\n"
      "\"source_node_id\":\"n1\", \"weight\": -0.0, \"hops\": 3, \"seen\": true } ",
      "{\"layer\":\"episodic\",\"score\":1.0,\"node_id\":\"a/b\",\"node_label\":\"\u00e9\","
      "\"source_node_id\":\"n1\",\"weight\":-0.0,\"hops\":3,\"seen\":true}" },
    { "GraphEdgeCreatedEvent", "{\"source\":\"a\",\"target\":\"b\",\"relationship\":\"knows\"}",
      "{\"source\":\"a\",\"target\":\"b\",\"relationship\":\"knows\"}" },
    { "ToolCallStartEvent", "{\"tool_name\":\"search\",\"tool_call_id\":\"c1\"}",
      "{\"tool_name\":\"search\",\"tool_call_id\":\"c1\"}" },
  };
  static const struct {
    const char *data;
    gint64      duration_ms;
  } durations[] = {
    { "{\"text\":\"Hello <b>\\\"w\\\"\",\"duration_ms\":1234}", 1234 },
    /* a negative duration is no duration */
    { "{\"duration_ms\":-5,\"text\":\"caf\\u00e9\"}", 0 },
    { "{\"text\":\"x\",\"duration_ms\":999999999999999999}", G_GINT64_CONSTANT (999999999999999999) },
  };
  static const WireCase refused[] = {
    /* not the common shape: the general way decides */
    { "TextDeltaEvent", "{\"text\":\"x\",\"ignored\":1}" },
    { "TextDeltaEvent", "{\"text\":1}" },
    { "ResponseCompleteEvent", "{\"text\":\"x\"}" },
    { "ResponseCompleteEvent", "{\"text\":\"x\",\"duration_ms\":1.5}" },
    { "ResponseCompleteEvent", "{\"text\":\"x\",\"duration_ms\":1e3}" },
    { "ResponseCompleteEvent", "{\"text\":\"x\",\"duration_ms\":1234567890123456789}" },
    { "ResponseCompleteEvent", "{\"text\":\"x\",\"duration_ms\":012}" },
    { "ResponseCompleteEvent", "{\"text\":\"x\",\"duration_ms\":\"5\"}" },
    { "ResponseCompleteEvent", "{\"text\":\"x\",\"duration_ms\":5,\"usage\":{}}" },
    { "ResponseCompleteEvent", "{\"text\":\"x\",\"text\":\"y\"}" },
    { "ResponseCompleteEvent", "{\"text\":\"x\",\"duration_ms\":5,\"duration_ms\":6}" },
    { "ResponseCompleteEvent", "{\"text\":\"x\",\"duration_ms\":-}" },
    { "ResponseCompleteEvent", "{\"text\":\"x\",\"duration_ms\":5} 1" },
    { "ActivationEvent", "{\"text\":\"x\"}" },
    /* structured: nested values, a field missing, a name twice */
    { "ActivationEvent", "{\"node_id\":\"n0\",\"node_label\":\"f\",\"score\":{},\"layer\":\"s\",\"source_node_id\":null}" },
    { "ActivationEvent", "{\"node_id\":\"n0\",\"node_label\":\"f\",\"score\":0.5,\"layer\":\"s\"}" },
    { "ActivationEvent", "{\"node_id\":\"n0\",\"node_id\":\"n1\",\"node_label\":\"f\",\"score\":0.5,\"layer\":\"s\",\"source_node_id\":null}" },
    { "ActivationEvent", "{\"node_id\":\"n0\",\"node_label\":\"f\",\"score\":1e400,\"layer\":\"s\",\"source_node_id\":null}" },
    { "ConsolidationScheduledEvent", "{\"report\":\"r\",\"graph_mutations\":0}" },
    { "MemoryExtractedEvent", "{\"ops\":1}" },
    { "StreamChunk", "{\"event_type\":\"x\",\"data\":1}" },
    { "Bogus", "{\"text\":\"x\"}" },
    /* not JSON, or not what json-glib can hold */
    { "TextDeltaEvent", "{\"text\":\"x\"} {}" },
    { "TextDeltaEvent", "{\"text\":\"x\"" },
    { "TextDeltaEvent", "{'text':'x'}" },
    { "TextDeltaEvent", "{\"text\":\"a\\u0000b\"}" },
    { "TextDeltaEvent", "{\"text\":\"\\udc00\"}" },
    { "TextDeltaEvent", "{\"text\":\"\\ud800x\"}" },
    { "TextDeltaEvent", "{\"text\":\"\xc3\x28\"}" },
    { "TextDeltaEvent", "{\"text\":\"tab\there\"}" },
    { "TextDeltaEvent", "{\"text\":\"\\x\"}" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (taken); i++)
    {
      g_autoptr(SymfonicEvent) event = symfonic_event_try_new_from_data (taken[i].name, taken[i].data,
                                                                          strlen (taken[i].data));

      g_test_message ("%s %s", taken[i].name, taken[i].data);
      g_assert_nonnull (event);
      g_assert_cmpstr (symfonic_event_get_name (event), ==, taken[i].name);
      g_assert_cmpstr (symfonic_event_get_text (event, NULL), ==, taken[i].text);
      g_assert_true (assert_fast_agrees (taken[i].name, taken[i].data, strlen (taken[i].data)));
    }

  for (guint i = 0; i < G_N_ELEMENTS (structured); i++)
    {
      g_autoptr(SymfonicEvent) event = symfonic_event_try_new_from_data (structured[i].name, structured[i].data,
                                                                          strlen (structured[i].data));
      g_autofree char *json = NULL;

      g_test_message ("%s %s", structured[i].name, structured[i].data);
      if (structured[i].json == NULL)
        {
          g_assert_null (event);
          continue;
        }
      g_assert_nonnull (event);
      json = symfonic_event_to_json (event);
      g_assert_cmpstr (json, ==, structured[i].json);
      g_assert_null (symfonic_event_get_text (event, NULL));
      /* the tree, made on demand, is the one the general way makes */
      g_assert_true (assert_fast_agrees (structured[i].name, structured[i].data, strlen (structured[i].data)));
      g_assert_true (symfonic_event_get_payload (event) == json_node_get_object (symfonic_event_get_data (event)));
      g_assert_true (json_object_is_immutable (symfonic_event_get_payload (event)));
    }

  for (guint i = 0; i < G_N_ELEMENTS (durations); i++)
    {
      g_autoptr(SymfonicEvent) event = symfonic_event_try_new_from_data ("ResponseCompleteEvent", durations[i].data,
                                                                          strlen (durations[i].data));

      g_assert_nonnull (event);
      g_assert_cmpint (symfonic_event_get_duration_ms (event), ==, durations[i].duration_ms);
      g_assert_null (symfonic_event_get_payload (event));
    }

  for (guint i = 0; i < G_N_ELEMENTS (refused); i++)
    {
      g_autoptr(SymfonicEvent) event = symfonic_event_try_new_from_data (refused[i].name, refused[i].data,
                                                                          strlen (refused[i].data));

      g_test_message ("%s %s", refused[i].name, refused[i].data);
      g_assert_null (event);
    }

  /* a length that stops short of the NUL is honoured */
  g_assert_null (symfonic_event_try_new_from_data ("TextDeltaEvent", "{\"text\":\"x\"}", 10));
}

/* A structured event's numbers go out in the writer's one form, whether
 * the upstream's text is already that form (then it is kept as it came)
 * or not; the general way, through a tree and the double, must agree. */
static void
test_event_fast_path_numbers (void)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (15);
  static const struct {
    const char *score;
    const char *written;
  } numbers[] = {
    { "0.5", "0.5" },
    { "-0.5", "-0.5" },
    { "0.91", "0.91" },
    { "123.25", "123.25" },
    { "100.5", "100.5" },
    { "0.0001", "0.0001" },
    { "0.00012", "0.00012" },
    { "0.123456789012345", "0.123456789012345" },
    { "0.000123456789012345", "0.000123456789012345" },
    { "12345678901234.5", "12345678901234.5" },
    { "1.00000000000001", "1.00000000000001" },
    /* not the written form: a zero too many or too few, an exponent */
    { "0.50", "0.5" },
    { "1.10", "1.1" },
    { "1.0", "1.0" },
    { "-0.0", "-0.0" },
    { "0.00001", "1e-05" },
    { "0.1234567890123456", "0.1234567890123456" },
    /* sixteen digits need not come back as they were */
    { "584.0110704341925", "584.0110704341924" },
    { "123456789012345.6", "123456789012345.6" },
    { "1e2", "100.0" },
    { "1E0", "1.0" },
    { "2.5e-3", "0.0025" },
    { "2", "2" },
    { "-7", "-7" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (numbers); i++)
    {
      g_autofree char *data = g_strdup_printf ("{\"node_id\":\"n\",\"node_label\":\"f\",\"score\":%s,"
                                               "\"layer\":\"s\",\"source_node_id\":null}", numbers[i].score);
      g_autofree char *expected = g_strdup_printf ("{\"node_id\":\"n\",\"node_label\":\"f\",\"score\":%s,"
                                                   "\"layer\":\"s\",\"source_node_id\":null}", numbers[i].written);
      g_autoptr(SymfonicEvent) event = symfonic_event_try_new_from_data ("ActivationEvent", data, strlen (data));
      g_autofree char *json = NULL;

      g_test_message ("score %s", numbers[i].score);
      g_assert_nonnull (event);
      json = symfonic_event_to_json (event);
      g_assert_cmpstr (json, ==, expected);
      g_assert_true (assert_fast_agrees ("ActivationEvent", data, strlen (data)));
    }

  /* decimals of every length and scale around the bounds */
  for (guint i = 0; i < 4000; i++)
    {
      g_autoptr(GString) score = g_string_new (g_rand_boolean (rand) ? "-" : "");
      guint digits = g_rand_int_range (rand, 1, 19);
      guint point = g_rand_int_range (rand, 1, digits + 1);
      g_autofree char *data = NULL;

      for (guint d = 0; d < digits; d++)
        {
          if (d == point)
            g_string_append_c (score, '.');
          /* a leading zero only as the whole integer part, and zeros often after the point */
          if (d == 0)
            g_string_append_c (score, point == 1 && g_rand_boolean (rand) ? '0' : (char) ('1' + g_rand_int_range (rand, 0, 9)));
          else
            g_string_append_c (score, g_rand_int_range (rand, 0, 3) == 0 ? '0' : (char) ('0' + g_rand_int_range (rand, 0, 10)));
        }
      if (point == digits)
        g_string_append (score, ".5");
      data = g_strdup_printf ("{\"node_id\":\"n\",\"node_label\":\"f\",\"score\":%s,"
                              "\"layer\":\"s\",\"source_node_id\":null}", score->str);
      g_assert_true (assert_fast_agrees ("ActivationEvent", data, strlen (data)));
    }
}

/* Deltas mutated at random, with the bytes that matter to a JSON reader:
 * whatever the fast path takes, the general way must decode the same. */
static void
test_event_fast_path_differential (void)
{
  static const char *seeds[] = {
    "{\"text\":\"Hello, world\"}",
    "{\"text\":\" a \\\"quoted\\\" \\\\ \\/ \\b\\f\\n\\r\\t word\"}",
    "{\"text\":\"caf\\u00e9 \\ud83d\\ude00 caf\xc3\xa9 \xf0\x9f\x98\x80\"}",
    " {\"text\" :\"x\"}\r\n",
    "{\"text\":\"<memory_ops>[{\\\"op\\\":\\\"add\\\"}]</memory_ops>\"}",
    "{\"text\":\"Hello\",\"duration_ms\":120}",
    "{\"node_id\":\"n0\",\"node_label\":\"f\",\"score\":0.5,\"layer\":\"s\",\"source_node_id\":null,\"n\":-12}",
    "{\"tool_name\":\"t\\u00e9\",\"tool_call_id\":\"c\",\"ok\":false,\"x\":1.5e3}",
    "{\"duration_ms\":-0,\"text\":\"x \\u00e9\"}",
  };
  static const char alphabet[] = "{}[]\":,\\ u0aAdDfF9\t\n\x01\x7f\xc3\xa9\xed\xa0\x80\xf0\x9f-.eEtrnl";
  g_autoptr(GRand) rand = g_rand_new_with_seed (8);
  g_autoptr(GString) data = g_string_new (NULL);
  guint taken = 0;
  guint taken_terminals = 0;
  guint taken_structured = 0;
  guint n = g_test_thorough () ? 1000000 : 100000;

  for (guint i = 0; i < n; i++)
    {
      guint seed = g_rand_int_range (rand, 0, G_N_ELEMENTS (seeds));
      /* the terminal's seeds are read as terminals, the deltas' as deltas */
      const char *name = strstr (seeds[seed], "duration_ms") != NULL ? "ResponseCompleteEvent"
                         : strstr (seeds[seed], "node_id") != NULL ? "ActivationEvent"
                         : strstr (seeds[seed], "tool_name") != NULL ? "ToolCallStartEvent"
                         : g_rand_boolean (rand) ? "TextDeltaEvent" : "ThinkingDeltaEvent";
      guint n_edits = g_rand_int_range (rand, 0, 4);

      g_string_assign (data, seeds[seed]);
      for (guint e = 0; e < n_edits; e++)
        {
          guint at = g_rand_int_range (rand, 0, data->len + 1);
          char c = alphabet[g_rand_int_range (rand, 0, sizeof alphabet - 1)];

          switch (g_rand_int_range (rand, 0, 3))
            {
            case 0:
              g_string_insert_c (data, at, c);
              break;
            case 1:
              if (at < data->len)
                g_string_erase (data, at, 1);
              break;
            default:
              if (at < data->len)
                data->str[at] = c;
              break;
            }
        }
      if (assert_fast_agrees (name, data->str, data->len))
        {
          taken++;
          taken_terminals += name[0] == 'R';
          taken_structured += name[0] == 'A' || name[1] == 'o';
        }
    }

  /* the sweep is only worth something if both ways were taken often */
  g_test_message ("fast path took %u of %u inputs, %u of them terminals and %u structured",
                  taken, n, taken_terminals, taken_structured);
  g_assert_cmpuint (taken, >, n / 10);
  g_assert_cmpuint (taken_terminals, >, n / 100);
  g_assert_cmpuint (taken_structured, >, n / 100);
  g_assert_cmpuint (taken, <, n - n / 10);
}

static void
test_event_ref (void)
{
  SymfonicEvent *event = symfonic_event_new_text_delta ("kept");
  SymfonicEvent *copy;

  g_assert_true (symfonic_event_ref (event) == event);
  symfonic_event_unref (event);
  g_assert_cmpstr (symfonic_event_get_text (event, NULL), ==, "kept");

  /* the boxed copy is a reference, not a new event */
  copy = g_boxed_copy (SYMFONIC_TYPE_EVENT, event);
  g_assert_true (copy == event);
  g_boxed_free (SYMFONIC_TYPE_EVENT, copy);
  g_assert_cmpstr (symfonic_event_get_text (event, NULL), ==, "kept");

  symfonic_event_unref (event);
}

/* A terminal's finish_reason and model, and a thinking delta's signature,
 * travel with the event and are written after its own fields; a delta
 * without them is written as before. */
static void
test_event_extra_members (void)
{
  g_autoptr(JsonNode) terminal_data =
    json_from_string ("{\"text\":\"hi\",\"duration_ms\":5,\"finish_reason\":\"tool_calls\",\"model\":\"m-1\"}", NULL);
  g_autoptr(JsonNode) thinking_data = json_from_string ("{\"text\":\"\",\"signature\":\"c2ln\"}", NULL);
  g_autoptr(JsonNode) plain_data = json_from_string ("{\"text\":\"x\"}", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(SymfonicEvent) terminal = NULL;
  g_autoptr(SymfonicEvent) thinking = NULL;
  g_autoptr(SymfonicEvent) plain = NULL;
  g_autofree char *terminal_json = NULL;
  g_autofree char *thinking_json = NULL;
  g_autofree char *plain_json = NULL;

  terminal = symfonic_event_new (SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE, json_node_get_object (terminal_data), &error);
  g_assert_no_error (error);
  thinking = symfonic_event_new (SYMFONIC_EVENT_KIND_THINKING_DELTA, json_node_get_object (thinking_data), &error);
  g_assert_no_error (error);
  plain = symfonic_event_new (SYMFONIC_EVENT_KIND_TEXT_DELTA, json_node_get_object (plain_data), &error);
  g_assert_no_error (error);

  terminal_json = symfonic_event_to_json (terminal);
  g_assert_cmpstr (terminal_json, ==, "{\"text\":\"hi\",\"duration_ms\":5,\"finish_reason\":\"tool_calls\",\"model\":\"m-1\"}");
  g_assert_cmpstr (symfonic_event_get_text (terminal, NULL), ==, "hi");
  g_assert_cmpstr (json_object_get_string_member (symfonic_event_get_payload (terminal), "finish_reason"), ==, "tool_calls");
  g_assert_true (json_object_is_immutable (symfonic_event_get_payload (terminal)));

  thinking_json = symfonic_event_to_json (thinking);
  g_assert_cmpstr (thinking_json, ==, "{\"text\":\"\",\"signature\":\"c2ln\"}");

  plain_json = symfonic_event_to_json (plain);
  g_assert_cmpstr (plain_json, ==, "{\"text\":\"x\"}");
  g_assert_null (symfonic_event_get_payload (plain));
}

/* Deltas of every small length, made and freed over and over and across
 * threads, each with exactly its own text: a block one event left behind
 * holds nothing of it for the next. */
static gpointer
free_events (gpointer data)
{
  g_ptr_array_unref (data);
  return NULL;
}

static void
test_event_blocks_reused (void)
{
  static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghijklmnopqrstuvwxyz";

  for (guint round = 0; round < 4; round++)
    {
      g_autoptr(GPtrArray) events = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_event_unref);
      GThread *thread;

      for (gsize len = 0; len < sizeof letters; len++)
        {
          g_autofree char *text = g_strndup (round % 2 ? letters : letters + len, sizeof letters - 1 - len);

          g_ptr_array_add (events, symfonic_event_new_text_delta (text));
        }
      for (gsize len = 0; len < sizeof letters; len++)
        {
          SymfonicEvent *event = g_ptr_array_index (events, len);
          const char *expected = round % 2 ? letters : letters + len;

          g_assert_cmpuint (strlen (symfonic_event_get_text (event, NULL)), ==, sizeof letters - 1 - len);
          g_assert_cmpint (strncmp (symfonic_event_get_text (event, NULL), expected, sizeof letters - 1 - len), ==, 0);
        }

      /* every other round, another thread lets them go, and exits */
      if (round % 2 == 0)
        {
          thread = g_thread_new ("free-events", free_events, g_steal_pointer (&events));
          g_thread_join (thread);
        }
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/event/text-encoding", test_event_text_encoding);
  g_test_add_func ("/event/text-length", test_event_text_length);
  g_test_add_func ("/event/exact-encoding", test_event_exact_encoding);
  g_test_add_func ("/event/kind-names", test_event_kind_names);
  g_test_add_func ("/event/kind-closes-answer", test_event_kind_closes_answer);
  g_test_add_func ("/event/new/valid", test_event_new_valid);
  g_test_add_func ("/event/new/invalid", test_event_new_invalid);
  g_test_add_func ("/event/new/duration-not-a-number", test_event_duration_not_a_number);
  g_test_add_func ("/event/deep-copy", test_event_deep_copy);
  g_test_add_func ("/event/deep-copy/scalars", test_event_deep_copy_scalars);
  g_test_add_func ("/event/structured-one-line", test_event_structured_one_line);
  g_test_add_func ("/event/chunks", test_event_chunks);
  g_test_add_func ("/event/response-complete", test_event_response_complete);
  g_test_add_func ("/event/extra-members", test_event_extra_members);
  g_test_add_func ("/event/from-json", test_event_from_json);
  g_test_add_func ("/event/ref", test_event_ref);
  g_test_add_func ("/event/blocks-reused", test_event_blocks_reused);
  g_test_add_func ("/event/fast-path", test_event_fast_path);
  g_test_add_func ("/event/fast-path/numbers", test_event_fast_path_numbers);
  g_test_add_func ("/event/fast-path/differential", test_event_fast_path_differential);

  return g_test_run ();
}
