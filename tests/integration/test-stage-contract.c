/* test-stage-contract.c: one stage behaviour, every language it is written in
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The e-mail redactor of plugins/examples/redactor/ exists once per
 * language a stage can be written in, and every implementation must pass
 * the same tests (the libpeas pattern): the table below has one row per
 * implementation, and every test function is registered once per row as
 * /stage-contract/<language>/<test>.
 *
 * Each row is loaded as a plugin from its folder, and served by a real
 * gateway from a real pipeline file whose routes configure it through its
 * properties; a replay source plays transcripts written here at test time;
 * every check is made on what an HTTP client reads. Expected texts are
 * literals, or what a reference written here makes of the whole text at
 * once, never the stage's own output.
 */
#include <string.h>

#include <glib/gstdio.h>

#include "symfonic-test-support.h"

typedef struct
{
  /* the second part of the test paths */
  const char *language;
  /* the folder the implementation is loaded from, as a plugin */
  const char *plugin_dir;
  /* the stage type it registers */
  const char *type;
  /* the loader plugin a script needs, NULL for C */
  const char *loader;
} Implementation;

/* A script implementation's row names the source folder, where its file
 * is the plugin, and its own type: email-redactor-py, email-redactor-js. */
static const Implementation implementations[] = {
  { "c", EMAIL_REDACTOR_C_DIR, "email-redactor", NULL },
  { "python", EMAIL_REDACTOR_SCRIPT_DIR, "email-redactor-py", "libsymfonic-python" },
  { "js", EMAIL_REDACTOR_SCRIPT_DIR, "email-redactor-js", "libsymfonic-gjs" },
};

/* A build without a language's loader plugin has no such row to run. */
static gboolean
has_loader (const Implementation *impl)
{
  g_autofree char *name = NULL;
  g_autofree char *path = NULL;

  if (impl->loader == NULL)
    return TRUE;
  name = g_strconcat (impl->loader, "." G_MODULE_SUFFIX, NULL);
  path = g_test_build_filename (G_TEST_BUILT, "..", "plugins", name, NULL);
  return g_file_test (path, G_FILE_TEST_EXISTS);
}

#define QUERY "{\"query\":\"Who do I write to?\"}"
#define ALICE "Bearer demo-token-alice"
#define FAIL_MARKER "BOOM"
#define REPLACEMENT "<address withheld>"

/* Addresses in the middle, at a comma, a semicolon and a full stop, and
 * things that are not addresses (no local part, one-letter top-level
 * domain, no domain); multi-byte characters next to them. */
#define ANSWER "Write to bob.smith@example.com, or ann+tea@mail.example.org; not a@b, x@y.z or " \
  "@example.com. Caf\xC3\xA9 \xE2\x9C\x93 zoe@ex-ample.io."
#define ANSWER_REDACTED "Write to [email], or [email]; not a@b, x@y.z or " \
  "@example.com. Caf\xC3\xA9 \xE2\x9C\x93 [email]."

/* the answer ends in an address, with no event after the text */
#define ENDING_ANSWER "Reach me at zoe@example.io"

static const char pipeline_format[] =
  "[gateway]\n"
  "listen=127.0.0.1:8080\n"
  "workers=2\n"
  "\n"
  "[route:plain]\n"
  "path=/plain\n"
  "kind=typed\n"
  "source=fixtures\n"
  "stages=redactor\n"
  "\n"
  "[route:replaced]\n"
  "path=/replaced\n"
  "kind=typed\n"
  "source=fixtures\n"
  "stages=replaced\n"
  "\n"
  "[route:failing]\n"
  "path=/failing\n"
  "kind=typed\n"
  "source=fixtures\n"
  "stages=failing\n"
  "\n"
  "[route:guarded]\n"
  "path=/guarded\n"
  "kind=typed\n"
  "source=fixtures\n"
  "stages=auth;guarded\n"
  "\n"
  "[source:fixtures]\n"
  "type=replay\n"
  "transcripts=%s\n"
  "default-transcript=whole\n"
  "transcript-header=X-Symfonic-Transcript\n"
  "time-scale=1\n"
  "\n"
  "[stage:auth]\n"
  "type=auth\n"
  "tokens-file=%s\n"
  "\n"
  "[stage:redactor]\n"
  "type=%s\n"
  "\n"
  "[stage:replaced]\n"
  "type=%s\n"
  "replacement=" REPLACEMENT "\n"
  "\n"
  "[stage:failing]\n"
  "type=%s\n"
  "fail-marker=" FAIL_MARKER "\n"
  "\n"
  "[stage:guarded]\n"
  "type=%s\n"
  "refuse-tenant=acme\n";

static char *transcripts_dir;
static SoupSession *session;
static SymfonicServer *servers[G_N_ELEMENTS (implementations)];

/* --- the reference ----------------------------------------------------- */

/* The spec's pattern applied to the whole text at once. */
static char *
reference_redact (const char *text,
                  const char *replacement)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GRegex) address =
    g_regex_new ("[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)*\\.[A-Za-z]{2,}", 0, 0, &error);
  char *redacted;

  g_assert_no_error (error);
  redacted = g_regex_replace_literal (address, text, -1, 0, replacement, 0, &error);
  g_assert_no_error (error);

  return redacted;
}

/* --- transcripts, written at test time ---------------------------------- */

static void
add_event (GString    *transcript,
           const char *name,
           const char *text,
           guint       delay_ms)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *line = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "event");
  json_builder_add_string_value (builder, name);
  json_builder_set_member_name (builder, "data");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "text");
  json_builder_add_string_value (builder, text);
  if (g_str_equal (name, "ResponseCompleteEvent"))
    {
      json_builder_set_member_name (builder, "duration_ms");
      json_builder_add_int_value (builder, 1);
    }
  json_builder_end_object (builder);
  json_builder_set_member_name (builder, "delay_ms");
  json_builder_add_int_value (builder, delay_ms);
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  line = json_to_string (root, FALSE);
  g_string_append_printf (transcript, "%s\n", line);
}

static void
write_transcript (const char *name,
                  GString    *transcript)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *file = g_strconcat (name, ".jsonl", NULL);
  g_autofree char *path = g_build_filename (transcripts_dir, file, NULL);

  g_file_set_contents (path, transcript->str, transcript->len, &error);
  g_assert_no_error (error);
}

/* The answer in deltas cut at @cuts, each after @delay_ms, then the
 * terminal with the whole answer, as upstreams send it. */
static void
write_split_transcript (const char  *name,
                        const char  *answer,
                        const gsize *cuts,
                        guint        n_cuts,
                        guint        delay_ms,
                        gboolean     terminal)
{
  g_autoptr(GString) transcript = g_string_new (NULL);
  gsize at = 0;

  for (guint i = 0; i <= n_cuts; i++)
    {
      gsize next = i < n_cuts ? cuts[i] : strlen (answer);
      g_autofree char *piece = g_strndup (answer + at, next - at);

      add_event (transcript, "TextDeltaEvent", piece, delay_ms);
      at = next;
    }
  if (terminal)
    add_event (transcript, "ResponseCompleteEvent", answer, 0);
  write_transcript (name, transcript);
}

/* A transcript's text must be JSON, that is whole characters: the answer
 * can be cut at every byte offset but those inside a character. */
static gboolean
is_cut_point (const char *text,
              gsize       offset)
{
  return ((guchar) text[offset] & 0xC0) != 0x80;
}

static void
write_transcripts (void)
{
  static const gsize whole_cuts[] = { 0 };
  static const gsize ending_cuts[] = { 16 };
  static const gsize failing_cuts[] = { 35, 39 };
  g_autoptr(GError) error = NULL;
  gsize len = strlen (ANSWER);

  transcripts_dir = g_dir_make_tmp ("stage-contract-XXXXXX", &error);
  g_assert_no_error (error);

  for (gsize cut = 0; cut <= len; cut++)
    {
      g_autofree char *name = g_strdup_printf ("split-%" G_GSIZE_FORMAT, cut);

      if (is_cut_point (ANSWER, cut))
        write_split_transcript (name, ANSWER, &cut, 1, 0, TRUE);
    }
  write_split_transcript ("whole", ANSWER, whole_cuts, 0, 0, TRUE);
  /* "Reach me at zoe@" and "example.io": the address is withheld until
   * the upstream ends */
  write_split_transcript ("ending", ENDING_ANSWER, ending_cuts, G_N_ELEMENTS (ending_cuts), 0, FALSE);
  /* the withheld address must go before the consolidation, which closes
   * the answer */
  {
    g_autoptr(GString) transcript = g_string_new (NULL);

    add_event (transcript, "TextDeltaEvent", "Reach me at zoe@", 0);
    add_event (transcript, "TextDeltaEvent", "example.io", 0);
    g_string_append (transcript, "{\"event\":\"ConsolidationScheduledEvent\","
                                 "\"data\":{\"report\":{},\"graph_mutations\":0},\"delay_ms\":0}\n");
    add_event (transcript, "ResponseCompleteEvent", ENDING_ANSWER, 0);
    write_transcript ("closing", transcript);
  }
  /* "ann@exa" is withheld when the marker comes, and never sent */
  write_split_transcript ("failing", "Write to bob@example.com or ann@exa" FAIL_MARKER " mple.org", failing_cuts,
                          G_N_ELEMENTS (failing_cuts), 0, TRUE);
  /* slow enough that the failing streams fail while it is under way */
  {
    static const gsize slow_cuts[] = { 12, 25, 40, 60, 80, 95 };

    write_split_transcript ("slow", ANSWER, slow_cuts, G_N_ELEMENTS (slow_cuts), 250, TRUE);
  }
}

static void
remove_transcripts (void)
{
  g_autoptr(GDir) dir = g_dir_open (transcripts_dir, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (transcripts_dir, name, NULL);

      g_remove (path);
    }
  g_rmdir (transcripts_dir);
}

/* --- the gateway, one per implementation -------------------------------- */

static SymfonicServer *
server_for (const Implementation *impl)
{
  guint row = impl - implementations;

  if (servers[row] == NULL)
    {
      g_autofree char *tokens = g_build_filename (SYMFONIC_TEST_DATA_DIR, "demo-tokens.ini", NULL);
      g_autofree char *pipeline = g_strdup_printf (pipeline_format, transcripts_dir, tokens, impl->type,
                                                   impl->type, impl->type, impl->type);

      servers[row] = symfonic_test_server_new (pipeline, transcripts_dir, 2);
    }

  return servers[row];
}

static SymfonicTestStream *
start_stream (const Implementation *impl,
              const char           *path,
              const char           *transcript)
{
  g_autofree char *url = symfonic_test_server_dup_url (server_for (impl), path);

  return symfonic_test_stream_post (session, url, QUERY, "X-Symfonic-Transcript", transcript, NULL);
}

static SymfonicTestStream *
run_stream (const Implementation *impl,
            const char           *path,
            const char           *transcript)
{
  SymfonicTestStream *stream = start_stream (impl, path, transcript);

  symfonic_test_stream_wait_done (stream);
  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, SOUP_STATUS_OK);

  return stream;
}

static JsonObject *
frame_object (SymfonicTestFrame *frame,
              JsonNode         **root)
{
  *root = symfonic_test_json_parse (frame->data);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (*root));

  return json_node_get_object (*root);
}

/* The text deltas a client read, joined; none may be empty. */
static char *
joined_deltas (SymfonicTestStream *stream)
{
  GString *text = g_string_new (NULL);

  for (guint i = 0; i < stream->frames->len; i++)
    {
      SymfonicTestFrame *frame = g_ptr_array_index (stream->frames, i);
      g_autoptr(JsonNode) root = NULL;
      const char *delta;

      if (!g_str_equal (frame->event, "TextDeltaEvent"))
        continue;
      delta = json_object_get_string_member (frame_object (frame, &root), "text");
      g_assert_cmpstr (delta, !=, "");
      g_string_append (text, delta);
    }

  return g_string_free (text, FALSE);
}

static guint
count_frames (SymfonicTestStream *stream,
              const char         *event)
{
  guint n = 0;

  for (guint i = 0; i < stream->frames->len; i++)
    n += g_str_equal (((SymfonicTestFrame *) g_ptr_array_index (stream->frames, i))->event, event);

  return n;
}

/* A successful stream: its deltas say @expected, and so does its one
 * terminal, last. */
static void
assert_answer (SymfonicTestStream *stream,
               const char         *expected)
{
  g_autofree char *text = joined_deltas (stream);
  g_autoptr(JsonNode) root = NULL;
  SymfonicTestFrame *last;

  g_assert_cmpstr (text, ==, expected);
  g_assert_cmpuint (count_frames (stream, "error"), ==, 0);
  g_assert_cmpuint (count_frames (stream, "ResponseCompleteEvent"), ==, 1);
  last = g_ptr_array_index (stream->frames, stream->frames->len - 1);
  g_assert_cmpstr (last->event, ==, "ResponseCompleteEvent");
  g_assert_cmpstr (json_object_get_string_member (frame_object (last, &root), "text"), ==, expected);
}

/* A stream that failed in the stage: exactly one error frame, last, with
 * status 500 and a detail that says nothing of the stage's own words. */
static void
assert_failed (SymfonicTestStream *stream)
{
  g_autoptr(JsonNode) root = NULL;
  SymfonicTestFrame *last;
  JsonObject *error;

  g_assert_cmpuint (count_frames (stream, "error"), ==, 1);
  g_assert_cmpuint (count_frames (stream, "ResponseCompleteEvent"), ==, 0);
  last = g_ptr_array_index (stream->frames, stream->frames->len - 1);
  g_assert_cmpstr (last->event, ==, "error");
  error = frame_object (last, &root);
  g_assert_cmpint (json_object_get_int_member (error, "status"), ==, 500);
  g_assert_null (strstr (last->data, FAIL_MARKER));
  g_assert_null (strstr (last->data, "marker"));
}

/* --- the contract ---------------------------------------------------------- */

/* The answer cut in two at every offset, one request each: the client
 * always reads the same redacted text. */
static void
test_every_split (gconstpointer data)
{
  const Implementation *impl = data;
  g_autofree char *reference = reference_redact (ANSWER, "[email]");
  gsize len = strlen (ANSWER);

  /* the reference is checked against a literal, so it cannot drift */
  g_assert_cmpstr (reference, ==, ANSWER_REDACTED);

  for (gsize cut = 0; cut <= len; cut++)
    {
      g_autofree char *transcript = g_strdup_printf ("split-%" G_GSIZE_FORMAT, cut);
      g_autoptr(SymfonicTestStream) stream = NULL;

      if (!is_cut_point (ANSWER, cut))
        continue;
      g_test_message ("cut at %" G_GSIZE_FORMAT, cut);
      stream = run_stream (impl, "/plain", transcript);
      assert_answer (stream, ANSWER_REDACTED);
    }
}

/* An address at the very end is withheld until the upstream ends, then
 * redacted, not released as it stands. */
static void
test_flush_at_finish (gconstpointer data)
{
  g_autoptr(SymfonicTestStream) stream = run_stream (data, "/plain", "ending");
  g_autofree char *text = joined_deltas (stream);

  g_assert_cmpstr (text, ==, "Reach me at [email]");
  g_assert_cmpuint (count_frames (stream, "error"), ==, 0);
  g_assert_null (strstr (stream->raw->str, "zoe@"));
}

/* What the stage withholds goes out before the first event that closes
 * the answer, not after it. */
static void
test_released_before_closing (gconstpointer data)
{
  g_autoptr(SymfonicTestStream) stream = run_stream (data, "/plain", "closing");
  g_autofree char *text = joined_deltas (stream);
  guint last_delta = 0;
  guint consolidation = 0;

  for (guint i = 0; i < stream->frames->len; i++)
    {
      SymfonicTestFrame *frame = g_ptr_array_index (stream->frames, i);

      if (g_str_equal (frame->event, "TextDeltaEvent"))
        last_delta = i;
      else if (g_str_equal (frame->event, "ConsolidationScheduledEvent"))
        consolidation = i;
    }
  assert_answer (stream, "Reach me at [email]");
  g_assert_cmpuint (count_frames (stream, "ConsolidationScheduledEvent"), ==, 1);
  g_assert_cmpuint (last_delta, <, consolidation);
  g_assert_cmpstr (text, ==, "Reach me at [email]");
}

/* `replacement` set in the pipeline file. */
static void
test_replacement_from_pipeline (gconstpointer data)
{
  g_autoptr(SymfonicTestStream) stream = run_stream (data, "/replaced", "whole");
  g_autofree char *reference = reference_redact (ANSWER, REPLACEMENT);

  g_assert_cmpstr (reference, ==, "Write to " REPLACEMENT ", or " REPLACEMENT "; not a@b, x@y.z or "
                                  "@example.com. Caf\xC3\xA9 \xE2\x9C\x93 " REPLACEMENT ".");
  assert_answer (stream, reference);
}

/* A delta holding `fail-marker` ends the stream with one error frame; what
 * came before it was sent redacted, and what was withheld is not sent. */
static void
test_fail_marker (gconstpointer data)
{
  g_autoptr(SymfonicTestStream) stream = run_stream (data, "/failing", "failing");
  g_autofree char *text = joined_deltas (stream);

  g_assert_cmpstr (text, ==, "Write to [email] or ");
  assert_failed (stream);
  g_assert_null (strstr (stream->raw->str, "@"));
}

/* `refuse-tenant` refuses that tenant with a 403 JSON body before any
 * stream starts; another tenant of the same principal streams. */
static void
test_refuse_tenant (gconstpointer data)
{
  const Implementation *impl = data;
  g_autofree char *url = symfonic_test_server_dup_url (server_for (impl), "/guarded");
  g_autoptr(SymfonicTestResponse) refused = NULL;
  g_autoptr(JsonNode) body = NULL;
  g_autoptr(SymfonicTestStream) stream = NULL;
  JsonObject *object;

  refused = symfonic_test_request (session, "POST", url, "application/json", QUERY,
                                   "Authorization", ALICE, "X-Tenant-ID", "acme", NULL);
  g_assert_cmpuint (refused->status, ==, 403);
  g_assert_cmpstr (soup_message_headers_get_content_type (refused->headers, NULL), ==, "application/json");
  body = symfonic_test_response_dup_json (refused);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (body));
  object = json_node_get_object (body);
  g_assert_cmpint (json_object_get_int_member (object, "status"), ==, 403);
  g_assert_cmpstr (json_object_get_string_member (object, "code"), ==, "forbidden");

  stream = symfonic_test_stream_post (session, url, QUERY, "Authorization", ALICE, "X-Tenant-ID", "demo",
                                      "X-Symfonic-Transcript", "whole", NULL);
  symfonic_test_stream_wait_done (stream);
  g_assert_cmpuint (stream->status, ==, SOUP_STATUS_OK);
  assert_answer (stream, ANSWER_REDACTED);
}

/* Streams that fail in the stage leave a stream of the same stage, under
 * way at the same time, whole. */
static void
test_other_streams_unaffected (gconstpointer data)
{
  const Implementation *impl = data;
  g_autoptr(SymfonicTestStream) slow = start_stream (impl, "/plain", "slow");
  g_autoptr(GPtrArray) failing = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_test_stream_free);

  symfonic_test_stream_wait_frames (slow, 1);
  for (guint i = 0; i < 6; i++)
    g_ptr_array_add (failing, start_stream (impl, "/failing", "failing"));
  for (guint i = 0; i < failing->len; i++)
    {
      SymfonicTestStream *stream = g_ptr_array_index (failing, i);

      symfonic_test_stream_wait_done (stream);
      assert_failed (stream);
    }
  /* they all failed while it was still under way */
  g_assert_false (slow->done);

  symfonic_test_stream_wait_done (slow);
  assert_answer (slow, ANSWER_REDACTED);
}

int
main (int   argc,
      char *argv[])
{
  static const struct {
    const char     *name;
    GTestDataFunc   func;
  } tests[] = {
    { "every-split", test_every_split },
    { "flush-at-finish", test_flush_at_finish },
    { "released-before-closing", test_released_before_closing },
    { "replacement-from-pipeline", test_replacement_from_pipeline },
    { "fail-marker", test_fail_marker },
    { "refuse-tenant", test_refuse_tenant },
    { "other-streams-unaffected", test_other_streams_unaffected },
  };
  g_autoptr(GPtrArray) plugin_dirs = g_ptr_array_new ();
  g_autofree char *plugin_path = NULL;
  int ret;

  symfonic_test_init (&argc, &argv);

  /* the plugins are loaded once per process, so every row's folder is on
   * the path before the first gateway starts */
  for (guint i = 0; i < G_N_ELEMENTS (implementations); i++)
    if (has_loader (&implementations[i]))
      g_ptr_array_add (plugin_dirs, (gpointer) implementations[i].plugin_dir);
  g_ptr_array_add (plugin_dirs, NULL);
  plugin_path = g_strjoinv (G_SEARCHPATH_SEPARATOR_S, (char **) plugin_dirs->pdata);
  g_setenv ("SYMFONIC_PLUGIN_PATH", plugin_path, TRUE);

  write_transcripts ();
  session = symfonic_test_session_new ();

  for (guint i = 0; i < G_N_ELEMENTS (implementations); i++)
    {
      if (!has_loader (&implementations[i]))
        {
          g_test_message ("no %s loader in this build: its row does not run", implementations[i].language);
          continue;
        }
      for (guint j = 0; j < G_N_ELEMENTS (tests); j++)
        {
          g_autofree char *path = g_strdup_printf ("/stage-contract/%s/%s", implementations[i].language,
                                                   tests[j].name);

          g_test_add_data_func (path, &implementations[i], tests[j].func);
        }
    }

  ret = g_test_run ();

  for (guint i = 0; i < G_N_ELEMENTS (servers); i++)
    {
      if (servers[i] != NULL)
        symfonic_server_stop (servers[i]);
      g_clear_object (&servers[i]);
    }
  g_clear_object (&session);
  remove_transcripts ();
  g_free (transcripts_dir);

  return ret;
}
