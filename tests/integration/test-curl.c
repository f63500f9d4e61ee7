/* test-curl.c: frames reach a real client as they are produced
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The server runs in-process and plays a transcript of deltas 150-300 ms
 * apart in real time; an external client, curl, reads the stream and its
 * stdout is parsed as it arrives. A gateway that buffered the response
 * would deliver every frame at the end, in one burst.
 */
#include <string.h>

#include "symfonic-test-support.h"


typedef struct
{
  GInputStream          *stdout_pipe;
  SymfonicTestSseParser *parser;
  GPtrArray             *frames;
  GString               *raw;
  gboolean               done;
  GError                *error;
  char                   buffer[4096];
} CurlOutput;

static void read_next (CurlOutput *output);

static void
read_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  CurlOutput *output = user_data;
  gssize n = g_input_stream_read_finish (G_INPUT_STREAM (object), result, &output->error);

  if (n <= 0)
    {
      output->done = TRUE;
      return;
    }

  g_string_append_len (output->raw, output->buffer, n);
  symfonic_test_sse_parser_feed (output->parser, output->buffer, n, output->frames);
  read_next (output);
}

static void
read_next (CurlOutput *output)
{
  g_input_stream_read_async (output->stdout_pipe, output->buffer, sizeof output->buffer,
                             G_PRIORITY_DEFAULT, NULL, read_cb, output);
}

static gboolean
output_done (gpointer data)
{
  return ((CurlOutput *) data)->done;
}

typedef struct
{
  gboolean done;
  GError  *error;
} WaitState;

static void
wait_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  WaitState *state = user_data;

  g_subprocess_wait_check_finish (G_SUBPROCESS (object), result, &state->error);
  state->done = TRUE;
}

static gboolean
wait_done (gpointer data)
{
  return ((WaitState *) data)->done;
}

static void
test_curl_frames_not_buffered (void)
{
  g_autofree char *pipeline_text = NULL;
  g_autoptr(SymfonicServer) server = NULL;
  g_autofree char *base_dir = g_test_build_filename (G_TEST_DIST, "integration", NULL);
  g_autofree char *transcript = g_test_build_filename (G_TEST_DIST, "integration", "transcripts",
                                                       "paced.jsonl", NULL);
  g_autoptr(GPtrArray) entries = symfonic_test_load_transcript (transcript);
  g_autofree char *curl = NULL;
  g_autofree char *url = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(SymfonicTestSseParser) parser = symfonic_test_sse_parser_new ();
  g_autoptr(GPtrArray) frames = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_test_frame_free);
  g_autoptr(GString) raw = g_string_new (NULL);
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  CurlOutput output = { NULL, };
  WaitState wait = { FALSE, NULL };
  SymfonicTestFrame *first, *last;
  gint64 start_us, first_due_ms = -1, total_ms = 0, span_ms, first_after_ms, spread_ms;
  guint n_deltas = 0, n_spaced_gaps = 0;

  if (g_getenv ("CURL") != NULL)
    curl = g_strdup (g_getenv ("CURL"));
  else
    curl = g_find_program_in_path ("curl");
  if (curl == NULL)
    {
      g_test_skip ("curl is not available (set CURL)");
      return;
    }

  /* what the transcript promises, read independently of the server */
  for (guint i = 0; i < entries->len; i++)
    {
      JsonObject *entry = json_node_get_object (g_ptr_array_index (entries, i));
      gint64 delay = json_object_get_int_member_with_default (entry, "delay_ms", 0);

      total_ms += delay;
      if (first_due_ms < 0)
        first_due_ms = delay;
      g_assert_cmpstr (json_object_get_string_member (entry, "event"), ==, "TextDeltaEvent");
      g_string_append (text, json_object_get_string_member (json_object_get_object_member (entry, "data"), "text"));
      n_deltas++;
    }
  /* from the first event to the last */
  span_ms = total_ms - first_due_ms;
  g_assert_cmpint (total_ms, >=, 1000);
  g_assert_cmpuint (n_deltas, >=, 5);

  pipeline_text = symfonic_test_replay_pipeline ("transcripts", "paced", 1);
  server = symfonic_test_server_new (pipeline_text, base_dir, 2);
  url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);

  start_us = g_get_monotonic_time ();
  process = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                              curl, "-sS", "-N", "-X", "POST",
                              "-H", "Content-Type: application/json",
                              "-H", "Accept: text/event-stream",
                              "-H", "X-Symfonic-Transcript: paced",
                              "--data", "{\"query\":\"count to seven\"}",
                              url, NULL);
  g_assert_no_error (error);

  output.stdout_pipe = g_subprocess_get_stdout_pipe (process);
  output.parser = parser;
  output.frames = frames;
  output.raw = raw;
  read_next (&output);

  g_assert_true (symfonic_test_iterate_until (NULL, output_done, &output, SYMFONIC_TEST_WAIT_MS));
  g_assert_no_error (output.error);
  g_subprocess_wait_check_async (process, NULL, wait_cb, &wait);
  g_assert_true (symfonic_test_iterate_until (NULL, wait_done, &wait, SYMFONIC_TEST_WAIT_MS));
  g_assert_no_error (wait.error);

  /* the stream itself is complete and right */
  g_assert_true (symfonic_test_sse_parser_is_between_frames (parser));
  /* the deltas, the consolidation the gateway schedules for an upstream
   * that did not, and the terminal */
  g_assert_cmpuint (frames->len, ==, n_deltas + 2);
  for (guint i = 0; i < n_deltas; i++)
    g_assert_cmpstr (((SymfonicTestFrame *) g_ptr_array_index (frames, i))->event, ==, "TextDeltaEvent");
  g_assert_cmpstr (((SymfonicTestFrame *) g_ptr_array_index (frames, n_deltas))->event, ==,
                   "ConsolidationScheduledEvent");
  last = g_ptr_array_index (frames, frames->len - 1);
  g_assert_cmpstr (last->event, ==, "ResponseCompleteEvent");
  {
    g_autoptr(JsonNode) terminal = symfonic_test_json_parse (last->data);

    g_assert_cmpstr (json_object_get_string_member (json_node_get_object (terminal), "text"), ==, text->str);
  }

  first = g_ptr_array_index (frames, 0);
  first_after_ms = (first->time_us - start_us) / 1000;
  spread_ms = (last->time_us - first->time_us) / 1000;
  for (guint i = 1; i < n_deltas; i++)
    {
      SymfonicTestFrame *a = g_ptr_array_index (frames, i - 1);
      SymfonicTestFrame *b = g_ptr_array_index (frames, i);

      n_spaced_gaps += (b->time_us - a->time_us) >= 75000;
    }

  g_test_message ("transcript: first event due at %" G_GINT64_FORMAT " ms, last at %" G_GINT64_FORMAT
                  " ms; curl got the first frame after %" G_GINT64_FORMAT " ms, the last %" G_GINT64_FORMAT
                  " ms after the first; %u of %u gaps >= 75 ms",
                  first_due_ms, total_ms, first_after_ms, spread_ms, n_spaced_gaps, n_deltas - 1);

  /* the first frame came long before the last event was even due */
  g_assert_cmpint (first_after_ms, <, total_ms / 2);
  /* and the frames came spread out as recorded, not in one burst */
  g_assert_cmpint (spread_ms * 10, >=, span_ms * 6);
  g_assert_cmpuint (n_spaced_gaps * 2, >=, n_deltas - 1);
}

int
main (int   argc,
      char *argv[])
{
  symfonic_test_init (&argc, &argv);

  g_test_add_func ("/curl/frames-not-buffered", test_curl_frames_not_buffered);

  return g_test_run ();
}
