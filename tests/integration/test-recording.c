/* test-recording.c: record= on the HTTP sources, and recordings replayed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The runtime, openai and anthropic sources record what the support
 * library's test upstreams send (split at random byte boundaries) into a
 * folder; each file must hold exactly those bytes, read by read, with
 * how the run ended. The replay source then plays each file through a
 * source of the recording's type, and the client must get what it got
 * from the live upstream, frame for frame, however the bytes are cut.
 */
/* memmem() */
#define _GNU_SOURCE
#include <string.h>
#include <sys/stat.h>

#include <glib/gstdio.h>

#include "symfonic-test-raw-upstream.h"
#include "symfonic-test-support.h"
#include "symfonic-test-upstream.h"

#define API_KEY "sk-test-KEY-7f3a9cRECORDED0001"
#define CLIENT_BODY "{\"query\":\"hello there\"}"
#define WAIT_US (10 * G_USEC_PER_SEC)

/* --- upstream answers ---------------------------------------------------- */

#define OPENAI_CHUNK(choice) \
  "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test\"," \
  "\"choices\":[" choice "]}\n\n"
#define OPENAI_DELTA(delta) OPENAI_CHUNK ("{\"index\":0,\"delta\":" delta ",\"finish_reason\":null}")

static const char openai_turn[] =
  OPENAI_DELTA ("{\"role\":\"assistant\",\"content\":\"\"}")
  OPENAI_DELTA ("{\"reasoning_content\":\"Think\"}")
  OPENAI_DELTA ("{\"content\":\"Tea is calm [semantic:n1].\"}")
  OPENAI_DELTA ("{\"content\":\" Caf\\u00e9 \xE2\x98\x95.\"}")
  OPENAI_CHUNK ("{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}")
  "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test\","
  "\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":7,\"total_tokens\":19}}\n\n"
  "data: [DONE]\n\n";

#define ANTHROPIC_EVENT(name, data) "event: " name "\ndata: " data "\n\n"

static const char anthropic_turn[] =
  ANTHROPIC_EVENT ("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\","
                   "\"role\":\"assistant\",\"content\":[],\"model\":\"claude-test\",\"stop_reason\":null,"
                   "\"stop_sequence\":null,\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}")
  ANTHROPIC_EVENT ("content_block_start", "{\"type\":\"content_block_start\",\"index\":0,"
                   "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}")
  ANTHROPIC_EVENT ("ping", "{\"type\":\"ping\"}")
  ANTHROPIC_EVENT ("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,"
                   "\"delta\":{\"type\":\"text_delta\",\"text\":\"Tea is calm [episodic].\"}}")
  ANTHROPIC_EVENT ("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}")
  ANTHROPIC_EVENT ("message_delta", "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\","
                   "\"stop_sequence\":null},\"usage\":{\"output_tokens\":9}}")
  ANTHROPIC_EVENT ("message_stop", "{\"type\":\"message_stop\"}");

static const char runtime_turn[] =
  "event: TextDeltaEvent\ndata: {\"text\":\"Hello \"}\n\n"
  "event: TextDeltaEvent\ndata: {\"text\":\"world [procedural].\"}\n\n"
  "event: ConsolidationScheduledEvent\ndata: {\"report\":{},\"graph_mutations\":0}\n\n"
  "event: ResponseCompleteEvent\ndata: {\"text\":\"Hello world.\",\"duration_ms\":3}\n\n";

typedef struct
{
  const char *type;
  /* where the fake answers, and the part of it the source's url names */
  const char *path;
  const char *url_path;
  const char *wire;
  const char *turn;
  const char *text;
} Kind;

static const Kind kinds[] = {
  { "openai", "/v1/chat/completions", "/v1", "openai-chat-completions", openai_turn,
    "Tea is calm. Caf\xC3\xA9 \xE2\x98\x95." },
  { "anthropic", "/v1/messages", "/v1", "anthropic-messages", anthropic_turn, "Tea is calm." },
  { "runtime", "/run", "/run", "symfonic-typed-sse", runtime_turn, "Hello world." },
};

static const Kind *
kind_named (const char *type)
{
  for (guint i = 0; i < G_N_ELEMENTS (kinds); i++)
    {
      if (g_str_equal (kinds[i].type, type))
        return &kinds[i];
    }
  g_assert_not_reached ();
}

/* --- helpers -------------------------------------------------------------- */

static char *
write_file (const char *name,
            const char *contents)
{
  char *path = g_build_filename (symfonic_test_private_dir (), name, NULL);
  g_autoptr(GError) error = NULL;

  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);

  return path;
}

static char *
new_folder (const char *name)
{
  g_autofree char *template = g_strdup_printf ("%s-XXXXXX", name);
  char *path = g_build_filename (symfonic_test_private_dir (), template, NULL);

  g_assert_nonnull (g_mkdtemp_full (path, 0700));

  return path;
}

/* Serves @body (whole, or split at random) on the kind's path; returns
 * the source's url. */
static char *
upstream_add (SymfonicTestUpstream *fake,
              const Kind           *kind,
              guint                 status,
              const char           *body,
              SymfonicTestSplit     split,
              SymfonicTestAfter     after)
{
  g_autoptr(GBytes) bytes = g_bytes_new (body, strlen (body));
  SymfonicTestScenario scenario = {
    .status = status,
    .body = bytes,
    .split = split,
    .seed = g_test_rand_int (),
    .delay_ms = split == SYMFONIC_TEST_SPLIT_WHOLE ? 0 : 1,
    .after = after,
  };
  g_autofree char *url = symfonic_test_upstream_add (fake, kind->path, &scenario);

  g_test_message ("%s upstream split with seed %u", kind->type, scenario.seed);

  return g_strndup (url, strlen (url) - strlen (kind->path) + strlen (kind->url_path));
}

/* A typed route on a source of @kind that records into @folder. */
static SymfonicServer *
recording_gateway_new (const Kind *kind,
                       const char *url,
                       const char *folder,
                       const char *more_source_lines)
{
  g_autofree char *key_file = write_file ("recording.key", API_KEY "\n");
  g_autofree char *provider_lines = NULL;
  g_autofree char *text = NULL;

  if (!g_str_equal (kind->type, "runtime"))
    provider_lines = g_strdup_printf ("model=test-model\napi-key-file=%s\n", key_file);
  text = g_strdup_printf ("[gateway]\nlisten=127.0.0.1:8080\nworkers=2\n\n"
                          "[route:typed]\npath=" SYMFONIC_TEST_TYPED_PATH "\nkind=typed\nsource=up\n"
                          "stages=extraction;citation\n\n"
                          "[source:up]\ntype=%s\nurl=%s\nrecord=%s\n%s%s\n\n"
                          "[stage:extraction]\ntype=extraction\n\n"
                          "[stage:citation]\ntype=citation\n",
                          kind->type, url, folder, provider_lines != NULL ? provider_lines : "",
                          more_source_lines != NULL ? more_source_lines : "");

  return symfonic_test_server_new (text, symfonic_test_private_dir (), 2);
}

/* The typed route of a replay source on @folder, every pause played at
 * once, its chunking chosen per request. */
static SymfonicServer *
replay_gateway_new (const char *folder,
                    const char *default_transcript)
{
  g_autofree char *text =
    g_strdup_printf ("[gateway]\nlisten=127.0.0.1:8080\nworkers=2\n\n"
                     "[route:typed]\npath=" SYMFONIC_TEST_TYPED_PATH "\nkind=typed\nsource=replay\n"
                     "stages=extraction;citation\n\n"
                     "[source:replay]\ntype=replay\ntranscripts=%s\ndefault-transcript=%s\ntime-scale=0\n"
                     "chunking-header=X-Symfonic-Chunking\n\n"
                     "[stage:extraction]\ntype=extraction\n\n"
                     "[stage:citation]\ntype=citation\n",
                     folder, default_transcript);

  return symfonic_test_server_new (text, symfonic_test_private_dir (), 2);
}

static SymfonicTestStream *
post_typed (SymfonicServer *server,
            SoupSession    *session,
            const char     *chunking)
{
  g_autofree char *url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);

  return symfonic_test_stream_post (session, url, CLIENT_BODY,
                                    chunking != NULL ? "X-Symfonic-Chunking" : NULL, chunking, NULL);
}

static const char *
run_id_of (SymfonicTestStream *stream)
{
  const char *id = soup_message_headers_get_one (soup_message_get_response_headers (stream->message),
                                                 "X-Symfonic-Run-ID");

  g_assert_nonnull (id);
  return id;
}

/* The run's recording, once its file appeared (written whole, so its
 * presence means it is complete). */
static char *
wait_recording (const char *folder,
                const char *run_id)
{
  g_autofree char *name = g_strdup_printf ("%s.jsonl", run_id);
  char *path = g_build_filename (folder, name, NULL);
  gint64 deadline = g_get_monotonic_time () + WAIT_US;

  /* this thread's loop closes a client's socket that was let go */
  while (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      if (!g_main_context_iteration (NULL, FALSE))
        g_usleep (5000);
    }

  return path;
}

static guint
count_files (const char *folder)
{
  g_autoptr(GDir) dir = g_dir_open (folder, 0, NULL);
  guint n = 0;

  g_assert_nonnull (dir);
  while (g_dir_read_name (dir) != NULL)
    n++;

  return n;
}

static SymfonicRecording *
load_recording (const char *path)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GError) error = NULL;
  SymfonicRecording *recording = symfonic_recording_new_from_file (file, &error);

  g_assert_no_error (error);

  return recording;
}

static char *
body_text (SymfonicRecording *recording)
{
  gsize length;
  const char *data = g_bytes_get_data (symfonic_recording_get_body (recording), &length);

  return g_strndup (data, length);
}

/* What a client saw, comparable between runs: every frame's event and
 * data, but the terminal's duration, which is measured. */
static char *
frames_summary (SymfonicTestStream *stream)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < stream->frames->len; i++)
    {
      SymfonicTestFrame *frame = g_ptr_array_index (stream->frames, i);

      g_string_append_printf (out, "%s ", frame->event);
      if (g_str_equal (frame->event, "ResponseCompleteEvent"))
        {
          g_autoptr(JsonNode) node = symfonic_test_json_parse (frame->data);
          JsonObject *object = json_node_get_object (node);

          g_string_append_printf (out, "%s %s\n", json_object_get_string_member (object, "text"),
                                  json_object_get_string_member_with_default (object, "finish_reason", ""));
        }
      else
        g_string_append_printf (out, "%s\n", frame->data);
    }

  return g_string_free (out, FALSE);
}

typedef struct
{
  char *folder;
  char *path;
  char *live;
  SymfonicRecording *recording;
} Recorded;

static void
recorded_free (Recorded *recorded)
{
  g_free (recorded->folder);
  g_free (recorded->path);
  g_free (recorded->live);
  g_clear_pointer (&recorded->recording, symfonic_recording_unref);
  g_free (recorded);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Recorded, recorded_free)

/* One run of @kind's source on @body, recorded: what the client saw and
 * the file. */
static Recorded *
record_run (const Kind        *kind,
            guint              status,
            const char        *body,
            SymfonicTestSplit  split,
            SymfonicTestAfter  after,
            const char        *more_source_lines)
{
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autofree char *url = upstream_add (fake, kind, status, body, split, after);
  Recorded *recorded = g_new0 (Recorded, 1);
  g_autoptr(SymfonicServer) server = NULL;
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = NULL;

  recorded->folder = new_folder ("recorded");
  server = recording_gateway_new (kind, url, recorded->folder, more_source_lines);
  stream = post_typed (server, session, NULL);
  symfonic_test_stream_wait_done (stream);
  g_assert_no_error (stream->error);
  recorded->live = frames_summary (stream);
  recorded->path = wait_recording (recorded->folder, run_id_of (stream));
  recorded->recording = load_recording (recorded->path);
  symfonic_server_stop (server);

  return recorded;
}

/* What the replay source makes of @recorded's file, cut as @chunking says
 * (NULL: as recorded). */
static char *
replay_summary (Recorded   *recorded,
                const char *chunking)
{
  g_autofree char *folder = new_folder ("replayed");
  g_autofree char *target = g_build_filename (folder, "recorded.jsonl", NULL);
  g_autofree char *contents = NULL;
  gsize length;
  g_autoptr(GError) error = NULL;
  g_autoptr(SymfonicServer) server = NULL;
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = NULL;

  g_file_get_contents (recorded->path, &contents, &length, &error);
  g_assert_no_error (error);
  g_file_set_contents (target, contents, length, &error);
  g_assert_no_error (error);

  server = replay_gateway_new (folder, "recorded");
  stream = post_typed (server, session, chunking);
  symfonic_test_stream_wait_done (stream);
  g_assert_no_error (stream->error);
  symfonic_server_stop (server);

  return frames_summary (stream);
}

/* --- recording ------------------------------------------------------------ */

static void
test_record_turn (gconstpointer data)
{
  const Kind *kind = kind_named (data);
  g_autoptr(Recorded) recorded = record_run (kind, 200, kind->turn, SYMFONIC_TEST_SPLIT_RANDOM,
                                             SYMFONIC_TEST_AFTER_CLOSE, NULL);
  SymfonicRecording *recording = recorded->recording;
  g_autofree char *body = body_text (recording);
  g_autofree char *contents = NULL;
  GStatBuf info;
  gint64 previous = 0;

  g_assert_cmpstr (symfonic_recording_get_source_type (recording), ==, kind->type);
  g_assert_cmpstr (symfonic_recording_get_wire_format (recording), ==, kind->wire);
  g_assert_cmpuint (symfonic_recording_get_status (recording), ==, 200);
  g_assert_cmpint (symfonic_recording_get_end (recording), ==, SYMFONIC_RECORDING_END_COMPLETE);
  g_assert_false (symfonic_recording_get_truncated (recording));
  g_assert_null (symfonic_recording_get_error_code (recording));
  /* every byte the upstream sent, as it sent them */
  g_assert_cmpstr (body, ==, kind->turn);
  g_assert_cmpuint (symfonic_recording_get_n_chunks (recording), >, 1);
  for (guint i = 0; i < symfonic_recording_get_n_chunks (recording); i++)
    {
      gint64 offset;
      g_autoptr(GBytes) chunk = symfonic_recording_get_chunk (recording, i, &offset);

      g_assert_cmpuint (g_bytes_get_size (chunk), >, 0);
      g_assert_cmpint (offset, >=, previous);
      previous = offset;
    }
  g_assert_cmpint (symfonic_recording_get_duration_us (recording), >=, previous);
  g_assert_cmpint (symfonic_recording_get_head_us (recording), <=, symfonic_recording_get_duration_us (recording));
  g_assert_cmpstr (symfonic_recording_get_response_header (recording, "Content-Type"), ==, "text/event-stream");
  /* the request as sent */
  g_assert_nonnull (strstr (symfonic_recording_get_request_body (recording), "hello there"));
  g_assert_true (g_str_has_prefix (symfonic_recording_get_request_target (recording), kind->url_path));
  if (!g_str_equal (kind->type, "runtime"))
    g_assert_cmpstr (symfonic_recording_get_model (recording), ==, "test-model");

  /* the operator's only, and no key in it */
  g_assert_cmpint (g_stat (recorded->path, &info), ==, 0);
  g_assert_cmpint (info.st_mode & 0777, ==, 0600);
  g_assert_true (g_file_get_contents (recorded->path, &contents, NULL, NULL));
  g_assert_null (strstr (contents, API_KEY));
  g_assert_null (strstr (contents, "7f3a9cRECORDED"));
  /* no temporary file left beside it */
  g_assert_cmpuint (count_files (recorded->folder), ==, 1);
}

/* A body that ends without its terminal, a refusal, an error event, an
 * upstream that cannot be reached: each is written, saying how it ended. */
static void
test_record_cut (void)
{
  const Kind *kind = kind_named ("openai");
  g_autofree char *cut = g_strndup (openai_turn, strstr (openai_turn, "data: [DONE]") - openai_turn - 200);
  g_autoptr(Recorded) recorded = record_run (kind, 200, cut, SYMFONIC_TEST_SPLIT_RANDOM,
                                             SYMFONIC_TEST_AFTER_CLOSE, NULL);
  g_autofree char *body = body_text (recorded->recording);

  g_assert_cmpint (symfonic_recording_get_end (recorded->recording), ==, SYMFONIC_RECORDING_END_CUT);
  g_assert_cmpint (symfonic_recording_get_transport (recorded->recording), ==, SYMFONIC_RECORDING_TRANSPORT_EOF);
  g_assert_cmpstr (symfonic_recording_get_error_code (recorded->recording), ==, "upstream_error");
  g_assert_false (symfonic_recording_get_truncated (recorded->recording));
  g_assert_cmpstr (body, ==, cut);
}

static void
test_record_refused (void)
{
  const Kind *kind = kind_named ("anthropic");
  g_autoptr(Recorded) recorded = record_run (kind, 500, "{\"type\":\"error\"}", SYMFONIC_TEST_SPLIT_WHOLE,
                                             SYMFONIC_TEST_AFTER_CLOSE, NULL);

  g_assert_cmpuint (symfonic_recording_get_status (recorded->recording), ==, 500);
  g_assert_cmpint (symfonic_recording_get_end (recorded->recording), ==, SYMFONIC_RECORDING_END_ERROR);
  g_assert_cmpint (symfonic_recording_get_transport (recorded->recording), ==, SYMFONIC_RECORDING_TRANSPORT_STOPPED);
  g_assert_nonnull (symfonic_recording_get_error_code (recorded->recording));
}

static void
test_record_error_event (void)
{
  const Kind *kind = kind_named ("anthropic");
  g_autofree char *body = g_strconcat (ANTHROPIC_EVENT ("message_start", "{\"type\":\"message_start\",\"message\":"
                                                        "{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\","
                                                        "\"content\":[],\"model\":\"c\",\"usage\":{\"input_tokens\":3,"
                                                        "\"output_tokens\":1}}}")
                                       ANTHROPIC_EVENT ("error", "{\"type\":\"error\",\"error\":{\"type\":"
                                                        "\"overloaded_error\",\"message\":\"Overloaded\"}}"),
                                       NULL);
  g_autoptr(Recorded) recorded = record_run (kind, 200, body, SYMFONIC_TEST_SPLIT_WHOLE,
                                             SYMFONIC_TEST_AFTER_STALL, NULL);

  g_assert_cmpint (symfonic_recording_get_end (recorded->recording), ==, SYMFONIC_RECORDING_END_ERROR);
  g_assert_cmpstr (symfonic_recording_get_error_code (recorded->recording), ==, "upstream_unavailable");
}

static void
test_record_unreachable (void)
{
  g_autofree char *folder = new_folder ("unreachable");
  g_autofree char *url = g_strdup_printf ("http://127.0.0.1:%u/run", symfonic_test_closed_port ());
  g_autoptr(SymfonicServer) server = recording_gateway_new (kind_named ("runtime"), url, folder, NULL);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = post_typed (server, session, NULL);
  g_autofree char *path = NULL;
  g_autoptr(SymfonicRecording) recording = NULL;

  symfonic_test_stream_wait_done (stream);
  path = wait_recording (folder, run_id_of (stream));
  recording = load_recording (path);
  g_assert_cmpuint (symfonic_recording_get_status (recording), ==, 0);
  g_assert_cmpint (symfonic_recording_get_end (recording), ==, SYMFONIC_RECORDING_END_ERROR);
  g_assert_cmpint (symfonic_recording_get_transport (recording), ==, SYMFONIC_RECORDING_TRANSPORT_REFUSED);
  g_assert_cmpuint (symfonic_recording_get_n_chunks (recording), ==, 0);
  /* counted where operators look */
  {
    g_autofree char *base = symfonic_test_server_dup_url (server, "");

    g_assert_cmpfloat (symfonic_test_fetch_metric (session, base, "symfonic_recordings_written_total"), >=, 1);
    g_assert_cmpfloat (symfonic_test_fetch_metric (session, base, "symfonic_recordings_dropped_total"), >=, 0);
  }
  symfonic_server_stop (server);
}

/* Past record-max-bytes the file keeps what came before, marked. */
static void
test_record_max_bytes (void)
{
  const Kind *kind = kind_named ("runtime");
  g_autoptr(GString) long_turn = g_string_new (NULL);
  g_autoptr(Recorded) recorded = NULL;
  g_autofree char *body = NULL;

  for (guint i = 0; i < 200; i++)
    g_string_append (long_turn, "event: TextDeltaEvent\ndata: {\"text\":\"word \"}\n\n");
  g_string_append (long_turn, "event: ResponseCompleteEvent\ndata: {\"text\":\"\",\"duration_ms\":1}\n\n");
  recorded = record_run (kind, 200, long_turn->str, SYMFONIC_TEST_SPLIT_RANDOM, SYMFONIC_TEST_AFTER_CLOSE,
                         "record-max-bytes=1024\n");
  body = body_text (recorded->recording);

  g_assert_true (symfonic_recording_get_truncated (recorded->recording));
  g_assert_cmpint (symfonic_recording_get_end (recorded->recording), ==, SYMFONIC_RECORDING_END_COMPLETE);
  g_assert_cmpuint (strlen (body), ==, 1024);
  /* what is kept is what came, but the word it was cut in */
  g_assert_cmpint (strncmp (body, long_turn->str, 1000), ==, 0);
  /* the stream itself was untouched */
  g_assert_nonnull (strstr (recorded->live, "ResponseCompleteEvent"));
}

/* record-ratio picks runs by their id: 0 records none, and a client that
 * leaves gets its run written as truncated. */
static void
test_record_ratio_zero (void)
{
  const Kind *kind = kind_named ("runtime");
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autofree char *url = upstream_add (fake, kind, 200, kind->turn, SYMFONIC_TEST_SPLIT_WHOLE,
                                       SYMFONIC_TEST_AFTER_CLOSE);
  g_autofree char *folder = new_folder ("ratio");
  g_autoptr(SymfonicServer) server = recording_gateway_new (kind, url, folder, "record-ratio=0\n");
  g_autoptr(SoupSession) session = symfonic_test_session_new ();

  for (guint i = 0; i < 5; i++)
    {
      g_autoptr(SymfonicTestStream) stream = post_typed (server, session, NULL);

      symfonic_test_stream_wait_done (stream);
      g_assert_nonnull (strstr (stream->raw->str, "ResponseCompleteEvent"));
    }
  symfonic_server_stop (server);
  g_clear_object (&server);
  g_assert_cmpuint (count_files (folder), ==, 0);
}

static void
test_record_cancelled (void)
{
  const Kind *kind = kind_named ("runtime");
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autofree char *url = upstream_add (fake, kind, 200, "event: TextDeltaEvent\ndata: {\"text\":\"Hel\"}\n\n",
                                       SYMFONIC_TEST_SPLIT_WHOLE, SYMFONIC_TEST_AFTER_KEEPALIVE);
  g_autofree char *folder = new_folder ("cancelled");
  g_autoptr(SymfonicServer) server = recording_gateway_new (kind, url, folder, NULL);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = post_typed (server, session, NULL);
  g_autofree char *run_id = NULL;
  g_autofree char *path = NULL;
  g_autoptr(SymfonicRecording) recording = NULL;

  symfonic_test_stream_wait_frames (stream, 1);
  run_id = g_strdup (run_id_of (stream));
  /* libsoup closes a half-read response's socket only with its session */
  symfonic_test_stream_close (stream);
  soup_session_abort (session);
  g_clear_object (&session);
  path = wait_recording (folder, run_id);
  recording = load_recording (path);
  g_assert_cmpint (symfonic_recording_get_end (recording), ==, SYMFONIC_RECORDING_END_CANCELLED);
  g_assert_true (symfonic_recording_get_truncated (recording));
  symfonic_server_stop (server);
}

/* --- settings -------------------------------------------------------------- */

static void
test_record_config (void)
{
  SymfonicRegistry *registry = symfonic_test_get_registry ();
  g_autofree char *folder = new_folder ("config");
  g_autofree char *file = write_file ("not-a-folder.txt", "x");
  g_autofree char *lines = NULL;

  lines = g_strdup_printf ("type=runtime\nurl=http://127.0.0.1:1/run\nrecord=%s", folder);
  symfonic_test_check_source_config (registry, lines, NULL);
  g_free (lines);
  lines = g_strdup_printf ("type=runtime\nurl=http://127.0.0.1:1/run\nrecord=%s/missing", folder);
  symfonic_test_check_source_config (registry, lines, "record");
  g_free (lines);
  lines = g_strdup_printf ("type=runtime\nurl=http://127.0.0.1:1/run\nrecord=%s", file);
  symfonic_test_check_source_config (registry, lines, "record");
  g_free (lines);
  lines = g_strdup_printf ("type=openai\nurl=http://127.0.0.1:1/v1\nmodel=m\nrecord=%s\nrecord-redact=ok;(unclosed",
                           folder);
  symfonic_test_check_source_config (registry, lines, "record-redact");
  symfonic_test_check_source_config (registry, "type=anthropic\nurl=http://127.0.0.1:1/v1\nmodel=m\n"
                                     "record-ratio=1.5", "record-ratio");
  symfonic_test_check_source_config (registry, "type=runtime\nurl=http://127.0.0.1:1/run\n"
                                     "record-max-bytes=12", "record-max-bytes");

  /* a folder the gateway may read but not write into */
  if (geteuid () != 0)
    {
      g_autofree char *locked = new_folder ("locked");

      g_assert_cmpint (g_chmod (locked, 0500), ==, 0);
      g_free (lines);
      lines = g_strdup_printf ("type=runtime\nurl=http://127.0.0.1:1/run\nrecord=%s", locked);
      symfonic_test_check_source_config (registry, lines, "record");
      g_chmod (locked, 0700);
    }
}

/* --- replay -------------------------------------------------------------- */

/* The recording played back through a source of its type gives the
 * client what the live upstream gave it, frame for frame: as recorded, in
 * one read, a byte per read, cut at every offset and at random. */
static void
test_replay_turn (gconstpointer data)
{
  const Kind *kind = kind_named (data);
  g_autoptr(Recorded) recorded = record_run (kind, 200, kind->turn, SYMFONIC_TEST_SPLIT_RANDOM,
                                             SYMFONIC_TEST_AFTER_CLOSE, NULL);
  gsize length = g_bytes_get_size (symfonic_recording_get_body (recorded->recording));
  const char * const chunkings[] = { NULL, "recorded", "whole", "bytes=1", "seed=7", "seed=99,max=3" };

  g_assert_nonnull (strstr (recorded->live, kind->text));
  for (guint i = 0; i < G_N_ELEMENTS (chunkings); i++)
    {
      g_autofree char *replayed = replay_summary (recorded, chunkings[i]);

      g_assert_cmpstr (replayed, ==, recorded->live);
    }
  for (gsize cut = 1; cut < length; cut += 1 + g_test_rand_int_range (0, 40))
    {
      g_autofree char *chunking = g_strdup_printf ("split=%" G_GSIZE_FORMAT, cut);
      g_autofree char *replayed = replay_summary (recorded, chunking);

      g_assert_cmpstr (replayed, ==, recorded->live);
    }
}

/* A cut recording plays as the cut it was: the same single error frame. */
static void
test_replay_cut (void)
{
  const Kind *kind = kind_named ("anthropic");
  g_autofree char *cut = g_strndup (anthropic_turn, strstr (anthropic_turn, "event: message_delta") - anthropic_turn);
  g_autoptr(Recorded) recorded = record_run (kind, 200, cut, SYMFONIC_TEST_SPLIT_RANDOM, SYMFONIC_TEST_AFTER_CLOSE,
                                             NULL);
  g_autofree char *replayed = replay_summary (recorded, NULL);
  g_autofree char *one_read = replay_summary (recorded, "whole");

  g_assert_true (g_str_has_suffix (recorded->live, "}\n"));
  g_assert_nonnull (strstr (recorded->live, "error {"));
  g_assert_cmpstr (replayed, ==, recorded->live);
  g_assert_cmpstr (one_read, ==, recorded->live);
}

/* A chunking header that names no chunking is the client's mistake. */
static void
test_replay_bad_chunking (void)
{
  const Kind *kind = kind_named ("runtime");
  g_autoptr(Recorded) recorded = record_run (kind, 200, kind->turn, SYMFONIC_TEST_SPLIT_WHOLE,
                                             SYMFONIC_TEST_AFTER_CLOSE, NULL);
  g_autofree char *folder = new_folder ("bad-chunking");
  g_autofree char *target = g_build_filename (folder, "recorded.jsonl", NULL);
  g_autofree char *contents = NULL;
  g_autoptr(SymfonicServer) server = NULL;
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autofree char *url = NULL;
  const char * const bad[] = { "split=", "bytes=0", "seed=x", "seed=1,max=0", "seed=1,max=2,x", "chunks" };

  g_assert_true (g_file_get_contents (recorded->path, &contents, NULL, NULL));
  g_assert_true (g_file_set_contents (target, contents, -1, NULL));
  server = replay_gateway_new (folder, "recorded");
  url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(SymfonicTestResponse) response =
        symfonic_test_request (session, "POST", url, "application/json", CLIENT_BODY,
                               "X-Symfonic-Chunking", bad[i], NULL);

      g_assert_cmpuint (response->status, ==, 400);
    }
  symfonic_server_stop (server);
}

/* A recording that is not whole does not load. */
static void
test_replay_refuses_cut_file (void)
{
  const Kind *kind = kind_named ("runtime");
  g_autoptr(Recorded) recorded = record_run (kind, 200, kind->turn, SYMFONIC_TEST_SPLIT_RANDOM,
                                             SYMFONIC_TEST_AFTER_CLOSE, NULL);
  g_autofree char *folder = new_folder ("cut-file");
  g_autofree char *target = g_build_filename (folder, "recorded.jsonl", NULL);
  g_autofree char *contents = NULL;
  g_autofree char *text = NULL;
  g_autoptr(GFile) base = g_file_new_for_path (folder);
  g_autoptr(GError) error = NULL;
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  char *last_line;

  g_assert_true (g_file_get_contents (recorded->path, &contents, NULL, NULL));
  /* the last read is gone */
  contents[strlen (contents) - 1] = '\0';
  last_line = strrchr (contents, '\n');
  last_line[1] = '\0';
  g_assert_true (g_file_set_contents (target, contents, -1, NULL));
  text = g_strdup_printf ("[route:typed]\npath=/t\nkind=typed\nsource=replay\n\n"
                          "[source:replay]\ntype=replay\ntranscripts=%s\ndefault-transcript=recorded\n", folder);
  pipeline = symfonic_pipeline_new_from_data (symfonic_test_get_registry (), text, -1, base, "cut.pipeline", &error);
  g_assert_null (pipeline);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "cut short"));
}

/* --- canaries -------------------------------------------------------------- */

/* Each kind of secret the recorder removes, planted in the request (the
 * client's query, the source's headers and key), in the response's
 * headers and in the upstream's body, split across reads: no byte of a
 * recording may hold one, nor may its decoded reads. */
#define CANARY_KEY "sk-canary-KEY-0000111122223333"
#define CANARY_AUTH "runtime-canary-bearer-998877"
#define CANARY_FILE_CREDENTIAL "hf-canary-VALUE-5566"
#define CANARY_FILE_PLAIN "org-canary-hint-7788"
#define CANARY_COOKIE "cookie-canary-4455"
#define CANARY_SET_COOKIE "setcookie-canary-1122"
#define CANARY_CUSTOM "CUSTOM-12345678"
#define CANARY_OPENAI_SHAPE "sk-proj-CanaryShapeKey0123456789"
#define CANARY_BEARER "canaryBearerToken12345"
#define CANARY_JWT "eyJhbGciOiJIUzI1NiJ9.eyJjYW5hcnkiOjF9.Q2FuYXJ5U2lnbmF0dXJl"
#define CANARY_AWS "AKIACANARY0000000001"
#define CANARY_GITHUB "ghp_CanaryGithubToken0123456789"
#define CANARY_SLACK "xoxb-canary-slack-000111"

static const char * const canaries[] = {
  CANARY_KEY, CANARY_AUTH, CANARY_FILE_CREDENTIAL, CANARY_FILE_PLAIN, CANARY_COOKIE, CANARY_SET_COOKIE,
  CANARY_CUSTOM, CANARY_OPENAI_SHAPE, CANARY_BEARER, CANARY_JWT, CANARY_AWS, CANARY_GITHUB, CANARY_SLACK,
};

/* every canary, as text an upstream or a client could send, but the
 * cookie a response sets, which only the runtime's fake can */
#define CANARY_TEXT \
  "echo " CANARY_KEY " " CANARY_AUTH " " CANARY_FILE_CREDENTIAL " " CANARY_FILE_PLAIN " " CANARY_COOKIE " " \
  CANARY_CUSTOM " " CANARY_OPENAI_SHAPE " Bearer " CANARY_BEARER " " CANARY_JWT " " \
  CANARY_AWS " " CANARY_GITHUB " " CANARY_SLACK

static void
assert_no_canary (const char *what,
                  const char *data,
                  gsize       length)
{
  for (guint i = 0; i < G_N_ELEMENTS (canaries); i++)
    {
      if (data != NULL && memmem (data, length, canaries[i], strlen (canaries[i])) != NULL)
        g_error ("%s holds the secret %s", what, canaries[i]);
    }
}

static void
check_canaries (const char *path)
{
  g_autofree char *contents = NULL;
  gsize length;
  g_autoptr(SymfonicRecording) recording = load_recording (path);
  GBytes *body = symfonic_recording_get_body (recording);

  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  assert_no_canary ("the recording's file", contents, length);
  assert_no_canary ("the recording's reads", g_bytes_get_data (body, NULL), g_bytes_get_size (body));
  assert_no_canary ("the recorded request", symfonic_recording_get_request_body (recording),
                    strlen (symfonic_recording_get_request_body (recording)));
  /* what it took out is counted, and the rest is still there */
  g_assert_cmpuint (symfonic_recording_get_redactions (recording), >=, G_N_ELEMENTS (canaries) - 1);
  g_assert_nonnull (memmem (contents, length, "echo ", 5));
}

static char *
canary_files (void)
{
  g_autofree char *headers = write_file ("canary-headers.txt",
                                         "X-Custom-Credential: " CANARY_FILE_CREDENTIAL "\n"
                                         "X-Org-Hint: " CANARY_FILE_PLAIN "\n");

  return g_strdup_printf ("headers-file=%s\nrecord-redact=CUSTOM-[0-9]{8}\n", headers);
}

static void
test_canary_provider (gconstpointer data)
{
  const Kind *kind = kind_named (data);
  g_autofree char *body = NULL;
  g_autofree char *source_lines = canary_files ();
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autofree char *folder = new_folder ("canary");
  g_autofree char *key_file = write_file ("canary.key", CANARY_KEY "\n");
  g_autofree char *url = NULL;
  g_autofree char *text = NULL;
  g_autofree char *lines = NULL;
  g_autoptr(SymfonicServer) server = NULL;
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = NULL;
  g_autofree char *path = NULL;
  g_autofree char *stream_url = NULL;

  if (g_str_equal (kind->type, "openai"))
    body = g_strconcat (OPENAI_DELTA ("{\"content\":\"" CANARY_TEXT "\"}"), OPENAI_CHUNK ("{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}"),
                        "data: [DONE]\n\n", NULL);
  else
    body = g_strconcat (ANTHROPIC_EVENT ("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"m\","
                                         "\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"c\","
                                         "\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}")
                        ANTHROPIC_EVENT ("content_block_start", "{\"type\":\"content_block_start\",\"index\":0,"
                                         "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}")
                        ANTHROPIC_EVENT ("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,"
                                         "\"delta\":{\"type\":\"text_delta\",\"text\":\"" CANARY_TEXT "\"}}")
                        ANTHROPIC_EVENT ("message_delta", "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
                                         "\"end_turn\"},\"usage\":{\"output_tokens\":9}}")
                        ANTHROPIC_EVENT ("message_stop", "{\"type\":\"message_stop\"}"), NULL);
  /* a byte per write: every secret crosses reads */
  url = upstream_add (fake, kind, 200, body, SYMFONIC_TEST_SPLIT_ONE_BYTE, SYMFONIC_TEST_AFTER_CLOSE);
  lines = g_strdup_printf ("model=test-model\napi-key-file=%s\n%s", key_file, source_lines);
  text = g_strdup_printf ("[route:typed]\npath=" SYMFONIC_TEST_TYPED_PATH "\nkind=typed\nsource=up\n\n"
                          "[source:up]\ntype=%s\nurl=%s\nrecord=%s\nrequest-headers=Cookie: session=" CANARY_COOKIE
                          ";X-Auth-Token: " CANARY_AUTH "\n%s\n", kind->type, url, folder, lines);
  server = symfonic_test_server_new (text, symfonic_test_private_dir (), 1);
  stream_url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);
  stream = symfonic_test_stream_post (session, stream_url, "{\"query\":\"" CANARY_TEXT "\"}", NULL);
  symfonic_test_stream_wait_done (stream);
  g_assert_nonnull (strstr (stream->raw->str, "ResponseCompleteEvent"));
  path = wait_recording (folder, run_id_of (stream));
  check_canaries (path);
  symfonic_server_stop (server);
}

/* The runtime source: its credentials in request-headers, a response
 * head that sets a cookie and echoes a credential. */
static void
test_canary_runtime (void)
{
  g_autoptr(SymfonicTestRawUpstream) raw = symfonic_test_raw_upstream_new ();
  g_autofree char *url = symfonic_test_raw_upstream_dup_url (raw);
  g_autofree char *folder = new_folder ("canary");
  g_autofree char *source_lines = canary_files ();
  g_autofree char *text = NULL;
  g_autoptr(SymfonicServer) server = NULL;
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = NULL;
  g_autofree char *path = NULL;
  g_autofree char *stream_url = NULL;
  const char * const pieces[] = {
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nSet-Cookie: sid=" CANARY_SET_COOKIE "; HttpOnly\r\n"
    "X-Echo-Token: " CANARY_AUTH "\r\nX-Trace: " CANARY_KEY "\r\nConnection: close\r\n\r\n",
    "event: TextDeltaEvent\ndata: {\"text\":\"echo sk-canary-KEY-0000",
    "111122223333 " CANARY_AUTH " hf-canary-VAL",
    "UE-5566 " CANARY_FILE_PLAIN " " CANARY_COOKIE " " CANARY_SET_COOKIE " CUSTOM-1234",
    "5678 " CANARY_OPENAI_SHAPE " Bearer canaryBearer",
    "Token12345 " CANARY_JWT " " CANARY_AWS " " CANARY_GITHUB " " CANARY_SLACK "\"}\n\n",
    "event: ResponseCompleteEvent\ndata: {\"text\":\"\",\"duration_ms\":1}\n\n",
    NULL,
  };

  symfonic_test_raw_upstream_set_answer (raw, pieces, TRUE);
  text = g_strdup_printf ("[route:typed]\npath=" SYMFONIC_TEST_TYPED_PATH "\nkind=typed\nsource=up\n\n"
                          "[source:up]\ntype=runtime\nurl=%s?token=" CANARY_AUTH "\nrecord=%s\n"
                          "request-headers=Authorization: Bearer " CANARY_AUTH ";Cookie: session=" CANARY_COOKIE
                          "\n%s\n", url, folder, source_lines);
  server = symfonic_test_server_new (text, symfonic_test_private_dir (), 1);
  stream_url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);
  stream = symfonic_test_stream_post (session, stream_url, "{\"query\":\"" CANARY_TEXT "\"}", NULL);
  symfonic_test_stream_wait_done (stream);
  g_assert_nonnull (strstr (stream->raw->str, "ResponseCompleteEvent"));
  path = wait_recording (folder, run_id_of (stream));
  check_canaries (path);
  symfonic_server_stop (server);
}

int
main (int   argc,
      char *argv[])
{
  symfonic_test_init (&argc, &argv);

  for (guint i = 0; i < G_N_ELEMENTS (kinds); i++)
    {
      g_autofree char *record = g_strdup_printf ("/recording/record/%s", kinds[i].type);
      g_autofree char *replay = g_strdup_printf ("/recording/replay/%s", kinds[i].type);

      g_test_add_data_func (record, kinds[i].type, test_record_turn);
      g_test_add_data_func (replay, kinds[i].type, test_replay_turn);
    }
  g_test_add_func ("/recording/record/cut", test_record_cut);
  g_test_add_func ("/recording/record/refused", test_record_refused);
  g_test_add_func ("/recording/record/error-event", test_record_error_event);
  g_test_add_func ("/recording/record/unreachable", test_record_unreachable);
  g_test_add_func ("/recording/record/max-bytes", test_record_max_bytes);
  g_test_add_func ("/recording/record/ratio-zero", test_record_ratio_zero);
  g_test_add_func ("/recording/record/cancelled", test_record_cancelled);
  g_test_add_func ("/recording/record/config", test_record_config);
  g_test_add_func ("/recording/replay/cut", test_replay_cut);
  g_test_add_func ("/recording/replay/bad-chunking", test_replay_bad_chunking);
  g_test_add_func ("/recording/replay/refuses-cut-file", test_replay_refuses_cut_file);
  g_test_add_data_func ("/recording/canary/openai", "openai", test_canary_provider);
  g_test_add_data_func ("/recording/canary/anthropic", "anthropic", test_canary_provider);
  g_test_add_func ("/recording/canary/runtime", test_canary_runtime);

  return g_test_run ();
}
