/* record-transcripts.c: the shipped recordings, recorded
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * record-transcripts FOLDER
 *   records every scenario below into FOLDER, one NAME.jsonl each: the
 *   support library's fake upstreams answer in the shapes of OpenAI,
 *   Anthropic and an agent runtime, split into many writes, and a gateway
 *   whose runtime, openai and anthropic sources have record= set records
 *   what it read, as it would record a real upstream.
 * record-transcripts --check FOLDER
 *   records them again into a folder of its own and fails unless each of
 *   FOLDER's files holds what the upstream sends today (the same bytes,
 *   status and ending; the reads' boundaries and times are the network's):
 *   the shipped files stay real recordings of these scenarios.
 */
#include <string.h>

#include <glib/gstdio.h>

#include "symfonic-test-support.h"
#include "symfonic-test-upstream.h"

/* what the operator's key file holds: the recordings must not */
#define API_KEY "sk-recorder-demo-0123456789abcdef"
#define WAIT_US (20 * G_USEC_PER_SEC)

#define OPENAI_CHUNK(choice) \
  "data: {\"id\":\"chatcmpl-7\",\"object\":\"chat.completion.chunk\",\"created\":1750000000," \
  "\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[" choice "]}\n\n"
#define OPENAI_DELTA(delta) OPENAI_CHUNK ("{\"index\":0,\"delta\":" delta ",\"finish_reason\":null}")
#define OPENAI_FINISH(reason) OPENAI_CHUNK ("{\"index\":0,\"delta\":{},\"finish_reason\":\"" reason "\"}")
#define OPENAI_USAGE(in, out, total) \
  "data: {\"id\":\"chatcmpl-7\",\"object\":\"chat.completion.chunk\",\"created\":1750000000," \
  "\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[],\"usage\":{\"prompt_tokens\":" #in "," \
  "\"completion_tokens\":" #out ",\"total_tokens\":" #total "}}\n\n"
#define OPENAI_DONE "data: [DONE]\n\n"

#define ANTHROPIC_EVENT(name, data) "event: " name "\ndata: " data "\n\n"
#define ANTHROPIC_START(in) \
  ANTHROPIC_EVENT ("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_01\",\"type\":\"message\"," \
                   "\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5\",\"stop_reason\":null," \
                   "\"stop_sequence\":null,\"usage\":{\"input_tokens\":" #in ",\"output_tokens\":1}}}")
#define ANTHROPIC_BLOCK(index, block) \
  ANTHROPIC_EVENT ("content_block_start", "{\"type\":\"content_block_start\",\"index\":" #index \
                   ",\"content_block\":" block "}")
#define ANTHROPIC_DELTA(index, delta) \
  ANTHROPIC_EVENT ("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":" #index ",\"delta\":" delta "}")
#define ANTHROPIC_TEXT(index, text) ANTHROPIC_DELTA (index, "{\"type\":\"text_delta\",\"text\":\"" text "\"}")
#define ANTHROPIC_STOP(index) \
  ANTHROPIC_EVENT ("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":" #index "}")
#define ANTHROPIC_END(reason, out) \
  ANTHROPIC_EVENT ("message_delta", "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"" reason "\"," \
                   "\"stop_sequence\":null},\"usage\":{\"output_tokens\":" #out "}}") \
  ANTHROPIC_EVENT ("message_stop", "{\"type\":\"message_stop\"}")
#define ANTHROPIC_PING ANTHROPIC_EVENT ("ping", "{\"type\":\"ping\"}")

#define TYPED(name, data) "event: " name "\ndata: " data "\n\n"

/* The answers: a citation tag split across deltas, a memory block split
 * across deltas, multi-byte characters, as real answers have them. */
static const char openai_text[] =
  OPENAI_DELTA ("{\"role\":\"assistant\",\"content\":\"\"}")
  OPENAI_DELTA ("{\"content\":\"Bread goes stale \"}")
  OPENAI_DELTA ("{\"content\":\"as its starch [sem\"}")
  OPENAI_DELTA ("{\"content\":\"antic:n7] recrystallises<memory_\"}")
  OPENAI_DELTA ("{\"content\":\"ops>[{\\\"op\\\":\\\"add\\\",\\\"node\\\":\\\"bread\\\"}]</memory_ops>, \"}")
  OPENAI_DELTA ("{\"content\":\"not as it dries \xE2\x80\x94 caf\xC3\xA9 bread too.\"}")
  OPENAI_FINISH ("stop")
  OPENAI_USAGE (21, 19, 40)
  OPENAI_DONE;

static const char openai_reasoning[] =
  OPENAI_DELTA ("{\"role\":\"assistant\",\"content\":null,\"reasoning_content\":\"\"}")
  OPENAI_DELTA ("{\"reasoning_content\":\"The user asks about \"}")
  OPENAI_DELTA ("{\"reasoning_content\":\"bread [episodic:e2].\"}")
  OPENAI_DELTA ("{\"content\":\"Starch recrystallises.\"}")
  OPENAI_FINISH ("stop")
  OPENAI_USAGE (30, 41, 71)
  OPENAI_DONE;

static const char openai_tool_calls[] =
  OPENAI_DELTA ("{\"role\":\"assistant\",\"content\":null}")
  OPENAI_DELTA ("{\"tool_calls\":[{\"index\":0,\"id\":\"call_Ab1\",\"type\":\"function\","
                "\"function\":{\"name\":\"get_weather\",\"arguments\":\"\"}}]}")
  OPENAI_DELTA ("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"ci\"}}]}")
  OPENAI_DELTA ("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"ty\\\": \\\"Par\"}}]}")
  OPENAI_DELTA ("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"is\\\"}\"}}]}")
  OPENAI_DELTA ("{\"tool_calls\":[{\"index\":1,\"id\":\"call_Cd2\",\"type\":\"function\","
                "\"function\":{\"name\":\"get_time\",\"arguments\":\"{}\"}}]}")
  OPENAI_FINISH ("tool_calls")
  OPENAI_USAGE (52, 33, 85)
  OPENAI_DONE;

/* the usage-only chunk as its own read, a moment after the finish */
static const char openai_usage_only[] =
  OPENAI_DELTA ("{\"role\":\"assistant\",\"content\":\"Yes.\"}")
  OPENAI_FINISH ("stop")
  OPENAI_USAGE (8, 2, 10)
  OPENAI_DONE;

/* the connection closes in the middle of a frame, before [DONE] */
static const char openai_cut[] =
  OPENAI_DELTA ("{\"role\":\"assistant\",\"content\":\"\"}")
  OPENAI_DELTA ("{\"content\":\"The answer is \"}")
  OPENAI_DELTA ("{\"content\":\"cut [semantic:n1] short\"}")
  "data: {\"id\":\"chatcmpl-7\",\"object\":\"chat.completion.chunk\",\"created\":1750000000,\"model\":\"gpt-4o-mi";

/* an OpenAI-compatible server's error in the middle of the stream */
static const char openai_error[] =
  OPENAI_DELTA ("{\"role\":\"assistant\",\"content\":\"\"}")
  OPENAI_DELTA ("{\"content\":\"Half an\"}")
  "data: {\"error\":{\"message\":\"The server had an error while processing your request.\","
  "\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n";

/* a model that thinks for a second and a half in the middle of its answer */
static const char openai_pause[] =
  OPENAI_DELTA ("{\"role\":\"assistant\",\"content\":\"\"}")
  OPENAI_DELTA ("{\"content\":\"Let me think.\"}")
  OPENAI_DELTA ("{\"content\":\" Done.\"}")
  OPENAI_FINISH ("stop")
  OPENAI_USAGE (5, 6, 11)
  OPENAI_DONE;

static const char anthropic_text[] =
  ANTHROPIC_START (17)
  ANTHROPIC_BLOCK (0, "{\"type\":\"text\",\"text\":\"\"}")
  ANTHROPIC_PING
  ANTHROPIC_TEXT (0, "Bread goes stale as its starch [proce")
  ANTHROPIC_TEXT (0, "dural] recrystallises<memory_ops>[{\\\"op\\\":\\\"add\\\"}]</memo")
  ANTHROPIC_TEXT (0, "ry_ops> \xE2\x80\x94 caf\xC3\xA9 bread too.")
  ANTHROPIC_STOP (0)
  ANTHROPIC_END ("end_turn", 23);

static const char anthropic_thinking[] =
  ANTHROPIC_START (40)
  ANTHROPIC_BLOCK (0, "{\"type\":\"thinking\",\"thinking\":\"\"}")
  ANTHROPIC_DELTA (0, "{\"type\":\"thinking_delta\",\"thinking\":\"Starch [semantic]\"}")
  ANTHROPIC_DELTA (0, "{\"type\":\"thinking_delta\",\"thinking\":\" retrogrades.\"}")
  ANTHROPIC_DELTA (0, "{\"type\":\"signature_delta\",\"signature\":\"EqQBCgIYAhIM1gbcDa9GJwZA\"}")
  ANTHROPIC_STOP (0)
  ANTHROPIC_BLOCK (1, "{\"type\":\"text\",\"text\":\"\"}")
  ANTHROPIC_TEXT (1, "Starch recrystallises.")
  ANTHROPIC_STOP (1)
  ANTHROPIC_END ("end_turn", 58);

static const char anthropic_tool_use[] =
  ANTHROPIC_START (61)
  ANTHROPIC_BLOCK (0, "{\"type\":\"text\",\"text\":\"\"}")
  ANTHROPIC_TEXT (0, "Checking.")
  ANTHROPIC_STOP (0)
  ANTHROPIC_BLOCK (1, "{\"type\":\"tool_use\",\"id\":\"toolu_01\",\"name\":\"get_weather\",\"input\":{}}")
  ANTHROPIC_DELTA (1, "{\"type\":\"input_json_delta\",\"partial_json\":\"\"}")
  ANTHROPIC_DELTA (1, "{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"city\\\": \"}")
  ANTHROPIC_DELTA (1, "{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"Paris\\\"}\"}")
  ANTHROPIC_STOP (1)
  ANTHROPIC_END ("tool_use", 44);

/* the stream stops after a block, without message_delta or message_stop */
static const char anthropic_cut[] =
  ANTHROPIC_START (12)
  ANTHROPIC_BLOCK (0, "{\"type\":\"text\",\"text\":\"\"}")
  ANTHROPIC_TEXT (0, "Cut off [episodic:x1] here")
  ANTHROPIC_STOP (0);

static const char anthropic_error[] =
  ANTHROPIC_START (9)
  ANTHROPIC_BLOCK (0, "{\"type\":\"text\",\"text\":\"\"}")
  ANTHROPIC_TEXT (0, "Half")
  ANTHROPIC_EVENT ("error", "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}");

static const char runtime_typed[] =
  TYPED ("ActivationEvent", "{\"node_id\":\"n7\",\"node_label\":\"bread\",\"score\":0.82,\"layer\":1,\"source_node_id\":null}")
  TYPED ("ThinkingDeltaEvent", "{\"text\":\"Recall [semantic:n7] bread.\"}")
  TYPED ("TextDeltaEvent", "{\"text\":\"Bread goes stale \"}")
  TYPED ("TextDeltaEvent", "{\"text\":\"as starch [epi\"}")
  TYPED ("TextDeltaEvent", "{\"text\":\"sodic:e1] recrystallises.<memory_ops>[{\\\"op\\\":\\\"add\\\"\"}")
  TYPED ("TextDeltaEvent", "{\"text\":\",\\\"node\\\":\\\"n8\\\"}]</memory_ops> Caf\xC3\xA9.\"}")
  TYPED ("ToolCallStartEvent", "{\"tool_name\":\"lookup\",\"tool_call_id\":\"t1\"}")
  TYPED ("ToolResultEvent", "{\"tool_call_id\":\"t1\",\"result\":\"ok\"}")
  TYPED ("ConsolidationScheduledEvent", "{\"report\":{\"scheduled\":true},\"graph_mutations\":1}")
  TYPED ("GraphNodeCreatedEvent", "{\"node_id\":\"n8\",\"label\":\"stale bread\",\"layer\":1}")
  TYPED ("ResponseCompleteEvent", "{\"text\":\"Bread goes stale as starch recrystallises. Caf\xC3\xA9.\","
         "\"duration_ms\":240,\"usage\":{\"input_tokens\":14,\"output_tokens\":16}}");

static const char runtime_cut[] =
  TYPED ("TextDeltaEvent", "{\"text\":\"Going \"}")
  TYPED ("TextDeltaEvent", "{\"text\":\"fine until\"}")
  "event: TextDel";

typedef struct
{
  const char        *name;
  const char        *type;
  const char        *body;
  /* a pause after the write that ends at this byte, or 0 */
  gsize              pause_at;
  guint              pause_ms;
  SymfonicTestAfter  after;
} Scenario;

static const Scenario scenarios[] = {
  { "openai-text", "openai", openai_text, 0, 0, SYMFONIC_TEST_AFTER_CLOSE },
  { "openai-reasoning", "openai", openai_reasoning, 0, 0, SYMFONIC_TEST_AFTER_CLOSE },
  { "openai-tool-calls", "openai", openai_tool_calls, 0, 0, SYMFONIC_TEST_AFTER_CLOSE },
  { "openai-usage-only", "openai", openai_usage_only, sizeof (OPENAI_DELTA ("{\"role\":\"assistant\",\"content\":\"Yes.\"}")
                                                              OPENAI_FINISH ("stop")) - 1, 120,
    SYMFONIC_TEST_AFTER_CLOSE },
  { "openai-cut", "openai", openai_cut, 0, 0, SYMFONIC_TEST_AFTER_CLOSE },
  { "openai-error", "openai", openai_error, 0, 0, SYMFONIC_TEST_AFTER_STALL },
  { "openai-pause", "openai", openai_pause, sizeof (OPENAI_DELTA ("{\"role\":\"assistant\",\"content\":\"\"}")
                                                    OPENAI_DELTA ("{\"content\":\"Let me think.\"}")) - 1, 1500,
    SYMFONIC_TEST_AFTER_CLOSE },
  { "anthropic-text", "anthropic", anthropic_text, 0, 0, SYMFONIC_TEST_AFTER_CLOSE },
  { "anthropic-thinking", "anthropic", anthropic_thinking, 0, 0, SYMFONIC_TEST_AFTER_CLOSE },
  { "anthropic-tool-use", "anthropic", anthropic_tool_use, 0, 0, SYMFONIC_TEST_AFTER_CLOSE },
  { "anthropic-cut", "anthropic", anthropic_cut, 0, 0, SYMFONIC_TEST_AFTER_CLOSE },
  { "anthropic-error", "anthropic", anthropic_error, 0, 0, SYMFONIC_TEST_AFTER_STALL },
  { "runtime-typed", "runtime", runtime_typed, 0, 0, SYMFONIC_TEST_AFTER_CLOSE },
  { "runtime-cut", "runtime", runtime_cut, 0, 0, SYMFONIC_TEST_AFTER_CLOSE },
};

static char *
source_group (const Scenario *scenario,
              const char     *fake_url,
              const char     *key_file,
              const char     *folder)
{
  if (g_str_equal (scenario->type, "runtime"))
    return g_strdup_printf ("[source:%s]\ntype=runtime\nurl=%s/%s/run\nrecord=%s\n\n",
                            scenario->name, fake_url, scenario->name, folder);

  return g_strdup_printf ("[source:%s]\ntype=%s\nurl=%s/%s/v1\nmodel=%s\napi-key-file=%s\nrecord=%s\n\n",
                          scenario->name, scenario->type, fake_url, scenario->name,
                          g_str_equal (scenario->type, "openai") ? "gpt-4o-mini" : "claude-sonnet-4-5",
                          key_file, folder);
}

static char *
wait_file (const char *folder,
           const char *run_id)
{
  g_autofree char *name = g_strdup_printf ("%s.jsonl", run_id);
  char *path = g_build_filename (folder, name, NULL);
  gint64 deadline = g_get_monotonic_time () + WAIT_US;

  while (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      if (g_get_monotonic_time () > deadline)
        g_error ("run %s was not recorded", run_id);
      if (!g_main_context_iteration (NULL, FALSE))
        g_usleep (5000);
    }

  return path;
}

/* Records every scenario into @folder as NAME.jsonl. */
static void
record_all (const char *folder)
{
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autofree char *fake_url = NULL;
  g_autofree char *key_file = g_build_filename (symfonic_test_private_dir (), "recorder.key", NULL);
  g_autoptr(GString) pipeline = g_string_new ("[gateway]\nlisten=127.0.0.1:8080\nworkers=1\n\n");
  g_autoptr(SymfonicServer) server = NULL;
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(GError) error = NULL;

  g_file_set_contents (key_file, API_KEY "\n", -1, &error);
  g_assert_no_error (error);
  fake_url = symfonic_test_upstream_dup_url (fake, "");
  if (g_str_has_suffix (fake_url, "/"))
    fake_url[strlen (fake_url) - 1] = '\0';

  for (guint i = 0; i < G_N_ELEMENTS (scenarios); i++)
    {
      const Scenario *scenario = &scenarios[i];
      g_autoptr(GBytes) body = g_bytes_new_static (scenario->body, strlen (scenario->body));
      g_autofree char *path = g_strdup_printf ("/%s/%s", scenario->name,
                                               g_str_equal (scenario->type, "openai") ? "v1/chat/completions"
                                               : g_str_equal (scenario->type, "anthropic") ? "v1/messages" : "run");
      /* many writes, a millisecond apart: the reads a real upstream's
       * network makes, with its frames split anywhere */
      SymfonicTestScenario answer = {
        .body = body,
        .split = SYMFONIC_TEST_SPLIT_RANDOM,
        .seed = 1000 + i,
        .delay_ms = 2,
        .pause_at = scenario->pause_at,
        .pause_ms = scenario->pause_ms,
        .after = scenario->after,
      };
      g_autofree char *group = source_group (scenario, fake_url, key_file, folder);

      g_free (symfonic_test_upstream_add (fake, path, &answer));
      g_string_append_printf (pipeline, "[route:%s]\npath=/r/%s\nkind=typed\nsource=%s\n\n%s",
                              scenario->name, scenario->name, scenario->name, group);
    }
  server = symfonic_test_server_new (pipeline->str, symfonic_test_private_dir (), 1);

  for (guint i = 0; i < G_N_ELEMENTS (scenarios); i++)
    {
      g_autofree char *url_path = g_strdup_printf ("/r/%s", scenarios[i].name);
      g_autofree char *url = symfonic_test_server_dup_url (server, url_path);
      g_autoptr(SymfonicTestStream) stream =
        symfonic_test_stream_post (session, url, "{\"query\":\"Why does bread go stale?\"}", NULL);
      const char *run_id;
      g_autofree char *recorded = NULL;
      g_autofree char *target = NULL;
      g_autofree char *file_name = g_strdup_printf ("%s.jsonl", scenarios[i].name);

      symfonic_test_stream_wait_done (stream);
      g_assert_no_error (stream->error);
      run_id = soup_message_headers_get_one (soup_message_get_response_headers (stream->message),
                                             "X-Symfonic-Run-ID");
      g_assert_nonnull (run_id);
      recorded = wait_file (folder, run_id);
      target = g_build_filename (folder, file_name, NULL);
      g_assert_cmpint (g_rename (recorded, target), ==, 0);
      g_print ("recorded %s\n", target);
    }

  symfonic_server_stop (server);
}

static SymfonicRecording *
load (const char *folder,
      const char *name)
{
  g_autofree char *file_name = g_strdup_printf ("%s.jsonl", name);
  g_autofree char *path = g_build_filename (folder, file_name, NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GError) error = NULL;
  SymfonicRecording *recording = symfonic_recording_new_from_file (file, &error);

  g_assert_no_error (error);

  return recording;
}

/* Each shipped recording holds what its scenario's upstream sends now. */
static void
test_shipped_are_recordings (gconstpointer data)
{
  const char *shipped = data;
  g_autofree char *fresh = g_build_filename (symfonic_test_private_dir (), "fresh", NULL);

  g_assert_cmpint (g_mkdir_with_parents (fresh, 0700), ==, 0);
  record_all (fresh);
  for (guint i = 0; i < G_N_ELEMENTS (scenarios); i++)
    {
      g_autoptr(SymfonicRecording) old = load (shipped, scenarios[i].name);
      g_autoptr(SymfonicRecording) now = load (fresh, scenarios[i].name);

      g_test_message ("%s", scenarios[i].name);
      g_assert_true (g_bytes_equal (symfonic_recording_get_body (old), symfonic_recording_get_body (now)));
      g_assert_cmpstr (symfonic_recording_get_source_type (old), ==, symfonic_recording_get_source_type (now));
      g_assert_cmpstr (symfonic_recording_get_wire_format (old), ==, symfonic_recording_get_wire_format (now));
      g_assert_cmpstr (symfonic_recording_get_request_target (old), ==, symfonic_recording_get_request_target (now));
      g_assert_cmpuint (symfonic_recording_get_status (old), ==, symfonic_recording_get_status (now));
      g_assert_cmpint (symfonic_recording_get_end (old), ==, symfonic_recording_get_end (now));
      g_assert_cmpint (symfonic_recording_get_transport (old), ==, symfonic_recording_get_transport (now));
      g_assert_cmpstr (symfonic_recording_get_error_code (old), ==, symfonic_recording_get_error_code (now));
      g_assert_cmpuint (symfonic_recording_get_n_chunks (old), >, 1);
    }
}

int
main (int   argc,
      char *argv[])
{
  if (argc == 2 && argv[1][0] != '-')
    {
      g_autofree char *folder = g_canonicalize_filename (argv[1], NULL);

      /* no test harness: the recordings go where the caller says */
      g_assert_cmpint (g_mkdir_with_parents (folder, 0755), ==, 0);
      record_all (folder);
      return 0;
    }

  symfonic_test_init (&argc, &argv);
  if (argc != 3 || !g_str_equal (argv[1], "--check"))
    {
      g_printerr ("usage: record-transcripts FOLDER | record-transcripts --check FOLDER\n");
      return 2;
    }
  g_test_add_data_func ("/transcripts/shipped-are-recordings", argv[2], test_shipped_are_recordings);

  return g_test_run ();
}
