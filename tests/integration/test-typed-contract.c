/* test-typed-contract.c: an upstream that breaks the typed contract
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * DESIGN 4: "The gateway never re-orders or re-emits; an upstream event
 * that would break a published guarantee (an activation after text
 * started, a second terminal) is dropped and counted, not forwarded."
 * The expected frames are derived here from the transcript by those two
 * rules; the drop count is read from /metrics.
 */
#include <string.h>

#include "symfonic-test-support.h"


static void
test_contract_violations_dropped (void)
{
  g_autofree char *base_dir = g_test_build_filename (G_TEST_DIST, "integration", NULL);
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "integration", "transcripts",
                                                 "out-of-order.jsonl", NULL);
  g_autoptr(GPtrArray) entries = symfonic_test_load_transcript (path);
  g_autofree char *pipeline_text = symfonic_test_replay_pipeline ("transcripts", "out-of-order", 0);
  g_autoptr(SymfonicServer) server = symfonic_test_server_new (pipeline_text, base_dir, 2);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autofree char *base_url = g_strdup_printf ("http://127.0.0.1:%u", symfonic_server_get_port (server));
  g_autofree char *url = g_strconcat (base_url, SYMFONIC_TEST_TYPED_PATH, NULL);
  g_autoptr(SymfonicTestStream) stream = NULL;
  g_autoptr(GPtrArray) expected = g_ptr_array_new ();
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GString) received = g_string_new (NULL);
  g_autoptr(JsonNode) terminal = NULL;
  gboolean text_started = FALSE, terminated = FALSE;
  guint n_dropped = 0;
  double dropped = -1;
  gint64 deadline;
  SymfonicTestFrame *last;

  /* the rules of DESIGN 4, applied to the recording */
  for (guint i = 0; i < entries->len; i++)
    {
      JsonObject *entry = json_node_get_object (g_ptr_array_index (entries, i));
      const char *name = json_object_get_string_member (entry, "event");

      if (terminated || (text_started && g_str_equal (name, "ActivationEvent")))
        {
          n_dropped++;
          continue;
        }
      if (g_str_equal (name, "ResponseCompleteEvent"))
        {
          /* the upstream's terminal is replaced by the gateway's own */
          terminated = TRUE;
          continue;
        }
      if (g_str_equal (name, "TextDeltaEvent"))
        {
          text_started = TRUE;
          g_string_append (text, json_object_get_string_member (json_object_get_object_member (entry, "data"), "text"));
        }
      g_ptr_array_add (expected, entry);
    }
  g_assert_cmpuint (n_dropped, ==, 3);

  stream = symfonic_test_stream_post (session, url, "{\"query\":\"hi\"}", NULL);
  symfonic_test_stream_wait_done (stream);
  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, 200);
  g_assert_true (symfonic_test_sse_parser_is_between_frames (stream->parser));

  for (guint i = 0; i < stream->frames->len; i++)
    {
      SymfonicTestFrame *frame = g_ptr_array_index (stream->frames, i);

      g_string_append_printf (received, "%s%s", i > 0 ? ", " : "", frame->event);
    }
  g_test_message ("frames: %s", received->str);

  g_assert_cmpuint (stream->frames->len, ==, expected->len + 1);
  for (guint i = 0; i < expected->len; i++)
    {
      JsonObject *entry = g_ptr_array_index (expected, i);
      SymfonicTestFrame *frame = g_ptr_array_index (stream->frames, i);
      g_autoptr(JsonNode) data = symfonic_test_json_parse (frame->data);

      g_assert_cmpstr (frame->event, ==, json_object_get_string_member (entry, "event"));
      g_assert_true (json_node_equal (data, json_object_get_member (entry, "data")));
    }

  last = g_ptr_array_index (stream->frames, stream->frames->len - 1);
  g_assert_cmpstr (last->event, ==, "ResponseCompleteEvent");
  terminal = symfonic_test_json_parse (last->data);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (terminal), "text"), ==, text->str);

  /* counted once the connection closed: allow it a moment */
  deadline = g_get_monotonic_time () + G_USEC_PER_SEC;
  do
    {
      dropped = symfonic_test_fetch_metric (session, base_url, "symfonic_events_dropped_total");
      if (dropped >= n_dropped)
        break;
      g_usleep (10000);
    }
  while (g_get_monotonic_time () < deadline);
  g_assert_cmpfloat (dropped, ==, n_dropped);

  symfonic_server_stop (server);
}

int
main (int   argc,
      char *argv[])
{
  symfonic_test_init (&argc, &argv);

  g_test_add_func ("/typed-contract/violations-dropped", test_contract_violations_dropped);

  return g_test_run ();
}
