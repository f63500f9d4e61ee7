/* test-filter-stage.c: what SymfonicFilterStage does for a subclass, seen
 * by an HTTP client
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The subclass here supplies a filter that replaces "secret" with "[x]"
 * (on split text, through a SymfonicTagMatcher), refuses a delta holding
 * "BOOM" before it is filtered, counts its replacements, and publishes
 * that count per stream as a MemoryExtractedEvent when the answer closes.
 * Everything else (the filter per stream, deltas through it, releasing the
 * withheld text before the first event that closes the answer and at the
 * end, the terminal's text cleaned by a fresh filter only when it has
 * text) is the base class's, and is what the checks look at: real routes,
 * a replay source playing transcripts written here, the frames a client
 * reads, and expected texts written as literals.
 */
#include <stdatomic.h>
#include <string.h>

#include <glib/gstdio.h>

#include "symfonic-test-support.h"

/* --- the filter ------------------------------------------------------------ */

#define TEST_TYPE_SECRET_FILTER (test_secret_filter_get_type ())
G_DECLARE_FINAL_TYPE (TestSecretFilter, test_secret_filter, TEST, SECRET_FILTER, SymfonicTextFilter)

struct _TestSecretFilter
{
  SymfonicTextFilter  parent_instance;

  SymfonicTagMatcher  tag;
  /* per channel, how much of the tag the text ended with: what is
   * withheld is always that prefix of the tag */
  gsize               matched[2];
  guint64             replaced;
};

G_DEFINE_FINAL_TYPE (TestSecretFilter, test_secret_filter, SYMFONIC_TYPE_TEXT_FILTER)

static void
test_secret_filter_filter (SymfonicTextFilter  *filter,
                           SymfonicTextChannel  channel,
                           const char          *text,
                           gsize                length,
                           GString             *out)
{
  TestSecretFilter *self = TEST_SECRET_FILTER (filter);

  for (gsize i = 0; i < length; i++)
    {
      gsize before = self->matched[channel];
      gsize after = symfonic_tag_matcher_advance (&self->tag, before, text[i]);
      /* what can no longer become the tag: the front of the withheld
       * prefix followed by this byte */
      gsize released = before + 1 - after;

      g_string_append_len (out, self->tag.text, MIN (released, before));
      if (released > before)
        g_string_append_c (out, text[i]);
      if (after == self->tag.len)
        {
          g_string_append (out, "[x]");
          self->replaced++;
          after = 0;
        }
      self->matched[channel] = after;
    }
}

static void
test_secret_filter_flush (SymfonicTextFilter  *filter,
                          SymfonicTextChannel  channel,
                          GString             *out)
{
  TestSecretFilter *self = TEST_SECRET_FILTER (filter);

  g_string_append_len (out, self->tag.text, self->matched[channel]);
  self->matched[channel] = 0;
}

static gboolean
test_secret_filter_passes (SymfonicTextFilter  *filter,
                           SymfonicTextChannel  channel,
                           const char          *text,
                           gsize                length)
{
  TestSecretFilter *self = TEST_SECRET_FILTER (filter);

  return self->matched[channel] == 0 && memchr (text, self->tag.text[0], length) == NULL;
}

static void
test_secret_filter_finalize (GObject *object)
{
  symfonic_tag_matcher_clear (&TEST_SECRET_FILTER (object)->tag);

  G_OBJECT_CLASS (test_secret_filter_parent_class)->finalize (object);
}

static void
test_secret_filter_class_init (TestSecretFilterClass *klass)
{
  SymfonicTextFilterClass *filter_class = SYMFONIC_TEXT_FILTER_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = test_secret_filter_finalize;
  filter_class->filter = test_secret_filter_filter;
  filter_class->flush = test_secret_filter_flush;
  filter_class->passes = test_secret_filter_passes;
}

static void
test_secret_filter_init (TestSecretFilter *self)
{
  symfonic_tag_matcher_init (&self->tag, "secret");
}

/* --- the stage ------------------------------------------------------------- */

#define TEST_TYPE_SECRET_STAGE (test_secret_stage_get_type ())
G_DECLARE_FINAL_TYPE (TestSecretStage, test_secret_stage, TEST, SECRET_STAGE, SymfonicFilterStage)

struct _TestSecretStage
{
  SymfonicFilterStage parent_instance;

  /* filters made, for streams and for terminals */
  _Atomic guint       stream_filters;
  _Atomic guint       terminal_filters;
  /* replacements on all streams */
  _Atomic guint64     replaced;
};

typedef struct
{
  /* how much of the filter's count was added to the stage's */
  guint64  counted;
  gboolean published;
} StreamState;

G_DEFINE_FINAL_TYPE (TestSecretStage, test_secret_stage, SYMFONIC_TYPE_FILTER_STAGE)

static SymfonicTextFilter *
test_secret_stage_create_filter (SymfonicFilterStage *stage,
                                 SymfonicStream      *stream,
                                 SymfonicFilterUse    use)
{
  TestSecretStage *self = TEST_SECRET_STAGE (stage);

  g_assert_true (SYMFONIC_IS_STREAM (stream));
  atomic_fetch_add (use == SYMFONIC_FILTER_USE_TERMINAL ? &self->terminal_filters : &self->stream_filters, 1);

  return g_object_new (TEST_TYPE_SECRET_FILTER, NULL);
}

static gboolean
test_secret_stage_before_filter (SymfonicFilterStage  *stage,
                                 SymfonicStream       *stream,
                                 SymfonicEvent        *delta,
                                 GError              **error)
{
  gsize length;
  const char *text = symfonic_event_get_text (delta, &length);

  if (g_strstr_len (text, length, "BOOM") != NULL)
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_FAILED, "the delta went BOOM");
      return FALSE;
    }

  return TRUE;
}

static void
test_secret_stage_after_filter (SymfonicFilterStage *stage,
                                SymfonicStream      *stream,
                                SymfonicTextFilter  *filter)
{
  TestSecretStage *self = TEST_SECRET_STAGE (stage);
  StreamState *state = symfonic_filter_stage_get_stream_state (stage, stream);
  guint64 replaced = TEST_SECRET_FILTER (filter)->replaced;

  g_assert_true (filter == symfonic_filter_stage_get_filter (stage, stream));
  atomic_fetch_add (&self->replaced, replaced - state->counted);
  state->counted = replaced;
}

/* The stream's count, once, after its last delta and before the event
 * that closed the answer, which the parent class then emits. */
static gboolean
test_secret_stage_close_answer (SymfonicFilterStage  *stage,
                                SymfonicStream       *stream,
                                SymfonicEvent        *closing,
                                GError              **error)
{
  StreamState *state = symfonic_filter_stage_get_stream_state (stage, stream);

  if (!state->published)
    {
      g_autofree char *data = g_strdup_printf ("{\"ops\":[{\"op\":\"secrets\",\"count\":%" G_GUINT64_FORMAT "}]}",
                                               state->counted);
      g_autoptr(JsonNode) node = json_from_string (data, NULL);
      g_autoptr(SymfonicEvent) count = symfonic_event_new (SYMFONIC_EVENT_KIND_MEMORY_EXTRACTED,
                                                           json_node_get_object (node), error);

      if (count == NULL)
        return FALSE;
      state->published = TRUE;
      symfonic_stream_emit (stream, count);
    }

  return SYMFONIC_FILTER_STAGE_CLASS (test_secret_stage_parent_class)->close_answer (stage, stream, closing, error);
}

static void
test_secret_stage_class_init (TestSecretStageClass *klass)
{
  SymfonicFilterStageClass *filter_stage_class = SYMFONIC_FILTER_STAGE_CLASS (klass);

  filter_stage_class->create_filter = test_secret_stage_create_filter;
  filter_stage_class->before_filter = test_secret_stage_before_filter;
  filter_stage_class->after_filter = test_secret_stage_after_filter;
  filter_stage_class->close_answer = test_secret_stage_close_answer;
  symfonic_filter_stage_class_set_stream_state_size (filter_stage_class, sizeof (StreamState));
}

static void
test_secret_stage_init (TestSecretStage *self)
{
}

/* A subclass that supplies the filter and nothing else. */
#define TEST_TYPE_PLAIN_SECRET_STAGE (test_plain_secret_stage_get_type ())
G_DECLARE_FINAL_TYPE (TestPlainSecretStage, test_plain_secret_stage, TEST, PLAIN_SECRET_STAGE, SymfonicFilterStage)

struct _TestPlainSecretStage
{
  SymfonicFilterStage parent_instance;
};

G_DEFINE_FINAL_TYPE (TestPlainSecretStage, test_plain_secret_stage, SYMFONIC_TYPE_FILTER_STAGE)

static SymfonicTextFilter *
test_plain_secret_stage_create_filter (SymfonicFilterStage *stage,
                                       SymfonicStream      *stream,
                                       SymfonicFilterUse    use)
{
  return g_object_new (TEST_TYPE_SECRET_FILTER, NULL);
}

static void
test_plain_secret_stage_class_init (TestPlainSecretStageClass *klass)
{
  SYMFONIC_FILTER_STAGE_CLASS (klass)->create_filter = test_plain_secret_stage_create_filter;
}

static void
test_plain_secret_stage_init (TestPlainSecretStage *self)
{
}

/* --- transcripts, written at test time ----------------------------------- */

#define ANSWER "Keep this secret, and that secret too."
#define ANSWER_CLEAN "Keep this [x], and that [x] too."
#define CONSOLIDATION "{\"event\":\"ConsolidationScheduledEvent\",\"data\":{\"report\":{},\"graph_mutations\":1}}\n"
#define GRAPH_NODE "{\"event\":\"GraphNodeCreatedEvent\",\"data\":{\"node_id\":\"n1\",\"label\":\"tea\",\"layer\":1}}\n"

static char *transcripts_dir;
static SymfonicServer *server;
static SoupSession *session;

static void
write_transcript (const char *name,
                  const char *lines)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *file = g_strconcat (name, ".jsonl", NULL);
  g_autofree char *path = g_build_filename (transcripts_dir, file, NULL);

  g_file_set_contents (path, lines, -1, &error);
  g_assert_no_error (error);
}

static char *
delta_line (const char *name,
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

  return g_strconcat (line, "\n", NULL);
}

static void
write_transcripts (void)
{
  g_autoptr(GError) error = NULL;
  gsize len = strlen (ANSWER);

  transcripts_dir = g_dir_make_tmp ("filter-stage-XXXXXX", &error);
  g_assert_no_error (error);

  /* the answer cut in two at every offset, then the consolidation and
   * the terminal with the whole answer, as upstreams send them */
  for (gsize cut = 0; cut <= len; cut++)
    {
      g_autofree char *name = g_strdup_printf ("split-%" G_GSIZE_FORMAT, cut);
      g_autofree char *head = g_strndup (ANSWER, cut);
      g_autofree char *first = delta_line ("TextDeltaEvent", head, 0);
      g_autofree char *second = delta_line ("TextDeltaEvent", ANSWER + cut, 0);
      g_autofree char *terminal = delta_line ("ResponseCompleteEvent", ANSWER, 0);
      g_autofree char *lines = g_strconcat (first, second, CONSOLIDATION, terminal, NULL);

      write_transcript (name, lines);
    }

  {
    /* "sec" could still become the tag when the consolidation comes */
    g_autofree char *delta = delta_line ("TextDeltaEvent", "tell no sec", 0);
    g_autofree char *terminal = delta_line ("ResponseCompleteEvent", "tell no sec", 0);
    g_autofree char *lines = g_strconcat (delta, CONSOLIDATION, GRAPH_NODE, terminal, NULL);

    write_transcript ("closing", lines);
  }
  {
    /* no event closes the answer: the upstream just ends */
    g_autofree char *first = delta_line ("TextDeltaEvent", "the secret and the secr", 0);
    g_autofree char *lines = g_strconcat (first, NULL);

    write_transcript ("ending", lines);
  }
  {
    /* a terminal with no text of its own, as the provider sources send */
    g_autofree char *delta = delta_line ("TextDeltaEvent", "no secret here", 0);
    g_autofree char *terminal = delta_line ("ResponseCompleteEvent", "", 0);
    g_autofree char *lines = g_strconcat (delta, terminal, NULL);

    write_transcript ("empty-terminal", lines);
  }
  {
    /* nothing streamed: the terminal's text is the answer, cleaned */
    g_autofree char *terminal = delta_line ("ResponseCompleteEvent", "only the secret terminal", 0);

    write_transcript ("terminal-only", terminal);
  }
  {
    /* thinking is filtered on its own channel; a tool call in the middle
     * of a tag passes as it is */
    g_autofree char *thinking = delta_line ("ThinkingDeltaEvent", "my secret plan, my sec", 0);
    g_autofree char *first = delta_line ("TextDeltaEvent", "a secr", 0);
    g_autofree char *second = delta_line ("TextDeltaEvent", "et call", 0);
    g_autofree char *lines =
      g_strconcat (thinking, first,
                   "{\"event\":\"ToolCallStartEvent\",\"data\":{\"tool_name\":\"search\",\"tool_call_id\":\"c1\"}}\n",
                   second, NULL);

    write_transcript ("channels", lines);
  }
  {
    /* "sec" is withheld when the refused delta comes, and never sent */
    g_autofree char *first = delta_line ("TextDeltaEvent", "a secret then sec", 0);
    g_autofree char *second = delta_line ("TextDeltaEvent", "BOOM", 0);
    g_autofree char *third = delta_line ("TextDeltaEvent", "ret", 0);
    g_autofree char *lines = g_strconcat (first, second, third, NULL);

    write_transcript ("failing", lines);
  }
  {
    /* slow, so that streams of the same stage overlap */
    g_autofree char *first = delta_line ("TextDeltaEvent", "one secret, ", 80);
    g_autofree char *second = delta_line ("TextDeltaEvent", "two secr", 80);
    g_autofree char *third = delta_line ("TextDeltaEvent", "ets, three secrets", 80);
    g_autofree char *lines = g_strconcat (first, second, third, NULL);

    write_transcript ("slow", lines);
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

/* --- streams ------------------------------------------------------------ */

static const char pipeline_format[] =
  "[gateway]\n"
  "listen=127.0.0.1:8080\n"
  "workers=2\n"
  "\n"
  "[route:secret]\n"
  "path=/secret\n"
  "kind=typed\n"
  "source=fixtures\n"
  "stages=secret\n"
  "\n"
  "[route:plain]\n"
  "path=/plain\n"
  "kind=typed\n"
  "source=fixtures\n"
  "stages=plain\n"
  "\n"
  "[source:fixtures]\n"
  "type=replay\n"
  "transcripts=%s\n"
  "default-transcript=closing\n"
  "transcript-header=X-Symfonic-Transcript\n"
  "time-scale=1\n"
  "\n"
  "[stage:secret]\n"
  "type=test-secret\n"
  "\n"
  "[stage:plain]\n"
  "type=test-plain-secret\n";

static TestSecretStage *
secret_stage (void)
{
  return TEST_SECRET_STAGE (symfonic_pipeline_get_stage (symfonic_server_get_pipeline (server), "secret"));
}

static SymfonicTestStream *
start_stream (const char *path,
              const char *transcript)
{
  g_autofree char *url = symfonic_test_server_dup_url (server, path);

  return symfonic_test_stream_post (session, url, "{\"query\":\"What is the secret?\"}",
                                    "X-Symfonic-Transcript", transcript, NULL);
}

static SymfonicTestStream *
run_stream (const char *path,
            const char *transcript)
{
  SymfonicTestStream *stream = start_stream (path, transcript);

  symfonic_test_stream_wait_done (stream);
  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, SOUP_STATUS_OK);

  return stream;
}

static SymfonicTestFrame *
frame_at (SymfonicTestStream *stream,
          guint               i)
{
  return g_ptr_array_index (stream->frames, i);
}

static char *
frame_string (SymfonicTestFrame *frame,
              const char        *member)
{
  g_autoptr(JsonNode) root = symfonic_test_json_parse (frame->data);

  g_assert_true (JSON_NODE_HOLDS_OBJECT (root));
  return g_strdup (json_object_get_string_member (json_node_get_object (root), member));
}

/* The texts of the frames of @event, joined; none may be empty. */
static char *
joined (SymfonicTestStream *stream,
        const char         *event)
{
  GString *text = g_string_new (NULL);

  for (guint i = 0; i < stream->frames->len; i++)
    {
      g_autofree char *delta = NULL;

      if (!g_str_equal (frame_at (stream, i)->event, event))
        continue;
      delta = frame_string (frame_at (stream, i), "text");
      g_assert_cmpstr (delta, !=, "");
      g_string_append (text, delta);
    }

  return g_string_free (text, FALSE);
}

/* The event names of the frames, one letter each, in order: `t` for a
 * text delta, `h` thinking, `c` tool call, `m` memory, `s` consolidation,
 * `g` graph, `r` the terminal, `e` an error. */
static char *
shape (SymfonicTestStream *stream)
{
  static const struct {
    const char *event;
    char        letter;
  } letters[] = {
    { "TextDeltaEvent", 't' }, { "ThinkingDeltaEvent", 'h' }, { "ToolCallStartEvent", 'c' },
    { "MemoryExtractedEvent", 'm' }, { "ConsolidationScheduledEvent", 's' },
    { "GraphNodeCreatedEvent", 'g' }, { "ResponseCompleteEvent", 'r' }, { "error", 'e' },
  };
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < stream->frames->len; i++)
    {
      char letter = '?';

      for (guint k = 0; k < G_N_ELEMENTS (letters); k++)
        {
          if (g_str_equal (frame_at (stream, i)->event, letters[k].event))
            letter = letters[k].letter;
        }
      g_string_append_c (out, letter);
    }

  return g_string_free (out, FALSE);
}

/* The count the stream's MemoryExtractedEvent published. */
static gint64
published_count (SymfonicTestStream *stream)
{
  for (guint i = 0; i < stream->frames->len; i++)
    {
      g_autoptr(JsonNode) root = NULL;
      JsonArray *ops;

      if (!g_str_equal (frame_at (stream, i)->event, "MemoryExtractedEvent"))
        continue;
      root = symfonic_test_json_parse (frame_at (stream, i)->data);
      ops = json_object_get_array_member (json_node_get_object (root), "ops");
      g_assert_cmpuint (json_array_get_length (ops), ==, 1);
      return json_object_get_int_member (json_array_get_object_element (ops, 0), "count");
    }

  g_assert_not_reached ();
}

static void
assert_terminal (SymfonicTestStream *stream,
                 const char         *expected)
{
  SymfonicTestFrame *last = frame_at (stream, stream->frames->len - 1);
  g_autofree char *text = frame_string (last, "text");

  g_assert_cmpstr (last->event, ==, "ResponseCompleteEvent");
  g_assert_cmpstr (text, ==, expected);
}

/* --- the tests ------------------------------------------------------------- */

/* Whatever the split, the client reads the cleaned answer, the count comes
 * after the last delta and before the consolidation, and the terminal
 * (cleaned by a filter of its own) says the same as the deltas. */
static void
test_every_split (void)
{
  TestSecretStage *stage = secret_stage ();
  guint64 replaced = atomic_load (&stage->replaced);
  guint terminals = atomic_load (&stage->terminal_filters);
  guint streams = atomic_load (&stage->stream_filters);
  gsize len = strlen (ANSWER);

  for (gsize cut = 0; cut <= len; cut++)
    {
      g_autofree char *transcript = g_strdup_printf ("split-%" G_GSIZE_FORMAT, cut);
      g_autoptr(SymfonicTestStream) stream = NULL;
      g_autofree char *text = NULL;
      g_autofree char *letters = NULL;

      g_test_message ("cut at %" G_GSIZE_FORMAT, cut);
      stream = run_stream ("/secret", transcript);
      text = joined (stream, "TextDeltaEvent");
      g_assert_cmpstr (text, ==, ANSWER_CLEAN);
      letters = shape (stream);
      g_assert_true (g_regex_match_simple ("^t+msr$", letters, 0, 0));
      g_assert_cmpint (published_count (stream), ==, 2);
      assert_terminal (stream, ANSWER_CLEAN);
    }

  g_assert_cmpuint (atomic_load (&stage->replaced) - replaced, ==, 2 * (len + 1));
  g_assert_cmpuint (atomic_load (&stage->stream_filters) - streams, ==, len + 1);
  g_assert_cmpuint (atomic_load (&stage->terminal_filters) - terminals, ==, len + 1);
}

/* What the filter withholds goes out before the first event that closes
 * the answer, not after it; the later closing events pass in order. */
static void
test_released_before_closing (void)
{
  g_autoptr(SymfonicTestStream) stream = run_stream ("/secret", "closing");
  g_autofree char *text = joined (stream, "TextDeltaEvent");
  g_autofree char *letters = shape (stream);

  g_assert_cmpstr (letters, ==, "ttmsgr");
  g_assert_cmpstr (text, ==, "tell no sec");
  g_assert_cmpint (published_count (stream), ==, 0);
  assert_terminal (stream, "tell no sec");
}

/* An upstream that ends without closing the answer: the finish hook
 * releases the rest. */
static void
test_released_at_finish (void)
{
  g_autoptr(SymfonicTestStream) stream = run_stream ("/secret", "ending");
  g_autofree char *text = joined (stream, "TextDeltaEvent");
  g_autofree char *letters = shape (stream);

  g_assert_cmpstr (text, ==, "the [x] and the secr");
  g_assert_cmpstr (letters, ==, "ttmsr");
  g_assert_cmpint (published_count (stream), ==, 1);
  assert_terminal (stream, "the [x] and the secr");
}

/* A terminal without text passes without a filter made for it; one with
 * text gets a filter of its own, also when no delta streamed. */
static void
test_terminal_filters (void)
{
  TestSecretStage *stage = secret_stage ();
  guint terminals = atomic_load (&stage->terminal_filters);
  g_autoptr(SymfonicTestStream) empty = run_stream ("/secret", "empty-terminal");
  g_autoptr(SymfonicTestStream) only = NULL;
  g_autofree char *text = joined (empty, "TextDeltaEvent");

  g_assert_cmpstr (text, ==, "no [x] here");
  assert_terminal (empty, "no [x] here");
  g_assert_cmpuint (atomic_load (&stage->terminal_filters), ==, terminals);

  only = run_stream ("/secret", "terminal-only");
  assert_terminal (only, "only the [x] terminal");
  g_assert_cmpuint (atomic_load (&stage->terminal_filters), ==, terminals + 1);
}

/* Thinking is filtered on its own channel, its withheld end released
 * before the text's; other events pass as they are, where they came. */
static void
test_channels (void)
{
  g_autoptr(SymfonicTestStream) stream = run_stream ("/secret", "channels");
  g_autofree char *thinking = joined (stream, "ThinkingDeltaEvent");
  g_autofree char *text = joined (stream, "TextDeltaEvent");
  g_autofree char *letters = shape (stream);
  g_autofree char *tool = NULL;

  g_assert_cmpstr (thinking, ==, "my [x] plan, my sec");
  g_assert_cmpstr (text, ==, "a [x] call");
  g_assert_cmpstr (letters, ==, "htcthmsr");
  for (guint i = 0; i < stream->frames->len; i++)
    {
      if (g_str_equal (frame_at (stream, i)->event, "ToolCallStartEvent"))
        tool = frame_string (frame_at (stream, i), "tool_call_id");
    }
  g_assert_cmpstr (tool, ==, "c1");
}

/* before_filter ends the stream with one error frame; what the filter
 * withheld is never sent. */
static void
test_before_filter_fails (void)
{
  g_autoptr(SymfonicTestStream) stream = run_stream ("/secret", "failing");
  g_autofree char *text = joined (stream, "TextDeltaEvent");
  g_autofree char *letters = shape (stream);
  g_autoptr(JsonNode) root = symfonic_test_json_parse (frame_at (stream, stream->frames->len - 1)->data);

  g_assert_cmpstr (text, ==, "a [x] then ");
  g_assert_cmpstr (letters, ==, "te");
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (root), "status"), ==, 500);
  g_assert_null (strstr (stream->raw->str, "sec\""));
  g_assert_null (strstr (stream->raw->str, "BOOM"));
}

/* Each stream has its own filter and state, however many of a stage's
 * streams run at once on its workers. */
static void
test_streams_apart (void)
{
  g_autoptr(GPtrArray) streams = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_test_stream_free);

  for (guint i = 0; i < 6; i++)
    g_ptr_array_add (streams, start_stream ("/secret", "slow"));
  for (guint i = 0; i < streams->len; i++)
    {
      SymfonicTestStream *stream = g_ptr_array_index (streams, i);
      g_autofree char *text = NULL;

      symfonic_test_stream_wait_done (stream);
      g_assert_cmpuint (stream->status, ==, SOUP_STATUS_OK);
      text = joined (stream, "TextDeltaEvent");
      g_assert_cmpstr (text, ==, "one [x], two [x]s, three [x]s");
      g_assert_cmpint (published_count (stream), ==, 3);
    }
}

/* A subclass that supplies the filter alone gets all of the above but
 * the count. */
static void
test_filter_alone (void)
{
  g_autoptr(SymfonicTestStream) split = run_stream ("/plain", "split-13");
  g_autoptr(SymfonicTestStream) closing = run_stream ("/plain", "closing");
  g_autoptr(SymfonicTestStream) ending = run_stream ("/plain", "ending");
  g_autofree char *split_text = joined (split, "TextDeltaEvent");
  g_autofree char *split_shape = shape (split);
  g_autofree char *closing_shape = shape (closing);
  g_autofree char *ending_text = joined (ending, "TextDeltaEvent");

  g_assert_cmpstr (split_text, ==, ANSWER_CLEAN);
  g_assert_true (g_regex_match_simple ("^t+sr$", split_shape, 0, 0));
  assert_terminal (split, ANSWER_CLEAN);
  g_assert_cmpstr (closing_shape, ==, "ttsgr");
  g_assert_cmpstr (ending_text, ==, "the [x] and the secr");
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;
  g_autofree char *pipeline = NULL;
  int ret;

  symfonic_test_init (&argc, &argv);

  g_assert_true (symfonic_register_stage_type (TEST_TYPE_SECRET_STAGE, "test-secret", &error));
  g_assert_no_error (error);
  g_assert_true (symfonic_register_stage_type (TEST_TYPE_PLAIN_SECRET_STAGE, "test-plain-secret", &error));
  g_assert_no_error (error);
  g_assert_true (g_type_is_a (TEST_TYPE_SECRET_STAGE, SYMFONIC_TYPE_STAGE));

  write_transcripts ();
  pipeline = g_strdup_printf (pipeline_format, transcripts_dir);
  server = symfonic_test_server_new (pipeline, transcripts_dir, 2);
  session = symfonic_test_session_new ();

  g_test_add_func ("/filter-stage/every-split", test_every_split);
  g_test_add_func ("/filter-stage/released-before-closing", test_released_before_closing);
  g_test_add_func ("/filter-stage/released-at-finish", test_released_at_finish);
  g_test_add_func ("/filter-stage/terminal-filters", test_terminal_filters);
  g_test_add_func ("/filter-stage/channels", test_channels);
  g_test_add_func ("/filter-stage/before-filter-fails", test_before_filter_fails);
  g_test_add_func ("/filter-stage/streams-apart", test_streams_apart);
  g_test_add_func ("/filter-stage/filter-alone", test_filter_alone);

  ret = g_test_run ();

  g_object_unref (session);
  symfonic_server_stop (server);
  g_object_unref (server);
  remove_transcripts ();

  return ret;
}
