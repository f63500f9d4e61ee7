/* test-transcripts.c: every transcript of a folder, through every route,
 * against the stream contract
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * test-transcripts [FOLDER]
 *
 * The folder is FOLDER, else $SYMFONIC_TRANSCRIPTS, else the recordings
 * the project ships (data/transcripts/recorded/). Each transcript plays
 * through a real gateway over real HTTP on the typed route, the chunk
 * routes of the 11.0 and 10.x lines, /chat, and the OpenAI and Anthropic
 * routes. A recording plays as recorded, in one read, a byte per read,
 * and cut in two at every byte offset when its body is short (at seeded
 * random boundaries when it is not); a recording with a pause of a
 * second or more also plays at its own pace behind a one-second
 * heartbeat. Each run must keep the contract, checked by the letter
 * (symfonic-conformance.c): one terminal; the terminal text the
 * concatenation of the deltas; no citation tag or memory block in any
 * text; the typed order; the route's own shape; the usage the upstream
 * reported at the end of the provider routes; heartbeats between frames.
 * Each cut must give the client what the recorded cut gave it, and a
 * recording that ended complete must succeed while any other fails.
 */
#include <string.h>

#include "symfonic-conformance.h"
#include "symfonic-test-support.h"

/* a body up to this long is cut at every offset */
#define SHORT_BYTES 2048
/* a longer one, at random boundaries drawn from this many seeds */
#define RANDOM_CUTS 64
/* a pause this long brings heartbeats; a recording this long is not
 * played at its pace */
#define HEARTBEAT_PAUSE_US (1200 * G_TIME_SPAN_MILLISECOND)
#define PACED_LIMIT_US (20 * G_USEC_PER_SEC)
/* how many broken rules a failing test lists */
#define SHOWN 20

static SymfonicConformance *conformance;

static const SymfonicConformanceRoute stream_routes[] = {
  SYMFONIC_CONFORMANCE_TYPED,
  SYMFONIC_CONFORMANCE_CHUNKS,
  SYMFONIC_CONFORMANCE_CHUNKS_10,
  SYMFONIC_CONFORMANCE_CHAT,
  SYMFONIC_CONFORMANCE_OPENAI,
  SYMFONIC_CONFORMANCE_ANTHROPIC,
};

/* Lists what @results broke, and fails the test when anything was. */
static void
assert_kept (GPtrArray *results)
{
  guint broken = 0;

  for (guint i = 0; i < results->len; i++)
    {
      SymfonicConformanceResult *result = g_ptr_array_index (results, i);

      for (guint v = 0; v < result->violations->len; v++)
        {
          if (broken++ < SHOWN)
            g_test_message ("%s on %s, cut %s: %s", result->transcript,
                            symfonic_conformance_route_name (result->route), result->chunking,
                            (const char *) g_ptr_array_index (result->violations, v));
        }
    }
  if (broken > 0)
    g_test_fail_printf ("%u rules of the stream contract broken (the first %u are listed above)",
                        broken, MIN (broken, SHOWN));
}


/* SYMFONIC_TRANSCRIPT_CUTS=none leaves the cuts out, for builds where
 * they take too long (the sanitizers') */
static gboolean
cuts_wanted (void)
{
  return g_strcmp0 (g_getenv ("SYMFONIC_TRANSCRIPT_CUTS"), "none") != 0;
}

static void
test_transcript (gconstpointer data)
{
  const char *name = data;
  SymfonicRecording *recording = symfonic_conformance_get_recording (conformance, name);
  SymfonicConformanceResult *references[SYMFONIC_CONFORMANCE_N_ROUTES] = { NULL, };
  g_autoptr(GPtrArray) recorded = NULL;
  g_autoptr(GPtrArray) chunkings = g_ptr_array_new_with_free_func (g_free);
  gsize length;
  guint runs;

  /* as recorded: the reference of every other cut */
  for (guint r = 0; r < G_N_ELEMENTS (stream_routes); r++)
    symfonic_conformance_add (conformance, name, stream_routes[r], NULL);
  recorded = symfonic_conformance_run (conformance);
  for (guint i = 0; i < recorded->len; i++)
    {
      SymfonicConformanceResult *result = g_ptr_array_index (recorded, i);

      symfonic_conformance_expect (conformance, result, NULL);
      references[result->route] = result;
    }
  assert_kept (recorded);
  if (recording == NULL)
    {
      g_test_message ("%s: typed events, played whole", name);
      return;
    }

  length = g_bytes_get_size (symfonic_recording_get_body (recording));
  g_ptr_array_add (chunkings, g_strdup ("whole"));
  g_ptr_array_add (chunkings, g_strdup ("bytes=1"));
  if (cuts_wanted () && length <= SHORT_BYTES)
    {
      for (gsize cut = 1; cut < length; cut++)
        g_ptr_array_add (chunkings, g_strdup_printf ("split=%" G_GSIZE_FORMAT, cut));
    }
  else if (cuts_wanted ())
    {
      for (guint seed = 1; seed <= RANDOM_CUTS; seed++)
        g_ptr_array_add (chunkings, g_strdup_printf ("seed=%u,max=%u", seed, 1 + seed % 97));
    }

  /* one cut at a time over every route, so that a failure names it */
  runs = recorded->len;
  for (guint c = 0; c < chunkings->len; c++)
    {
      g_autoptr(GPtrArray) results = NULL;

      for (guint r = 0; r < G_N_ELEMENTS (stream_routes); r++)
        symfonic_conformance_add (conformance, name, stream_routes[r], g_ptr_array_index (chunkings, c));
      results = symfonic_conformance_run (conformance);
      for (guint i = 0; i < results->len; i++)
        {
          SymfonicConformanceResult *result = g_ptr_array_index (results, i);

          symfonic_conformance_expect (conformance, result, references[result->route]);
        }
      runs += results->len;
      assert_kept (results);
      if (g_test_failed ())
        return;
    }

  /* at its own pace, where it paused long enough for a heartbeat */
  if (symfonic_conformance_longest_pause (recording) >= HEARTBEAT_PAUSE_US &&
      symfonic_recording_get_duration_us (recording) <= PACED_LIMIT_US)
    {
      g_autoptr(GPtrArray) paced = NULL;
      SymfonicConformanceResult *result;

      symfonic_conformance_add (conformance, name, SYMFONIC_CONFORMANCE_PACED, NULL);
      paced = symfonic_conformance_run (conformance);
      result = g_ptr_array_index (paced, 0);
      symfonic_conformance_expect (conformance, result, NULL);
      if (result->heartbeats == 0)
        g_ptr_array_add (result->violations, g_strdup ("no heartbeat during a pause of over a second"));
      if (g_strcmp0 (result->text, references[SYMFONIC_CONFORMANCE_TYPED]->text) != 0)
        g_ptr_array_add (result->violations, g_strdup ("at its pace, the text differs from the recorded cut's"));
      g_test_message ("%s at its own pace: %u heartbeats", name, result->heartbeats);
      assert_kept (paced);
      runs++;
    }

  g_test_message ("%s: %" G_GSIZE_FORMAT " bytes, %u runs", name, length, runs);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;
  const char *folder;
  int status;

  symfonic_test_init (&argc, &argv);

  folder = argc > 1 ? argv[1] : g_getenv ("SYMFONIC_TRANSCRIPTS");
  if (folder == NULL || *folder == '\0')
    folder = SYMFONIC_RECORDED_TRANSCRIPTS;
  conformance = symfonic_conformance_new (symfonic_test_get_registry (), folder, &error);
  if (conformance == NULL)
    {
      g_printerr ("test-transcripts: %s: %s\n", folder, error->message);
      return 1;
    }
  g_test_message ("transcripts of %s", folder);

  for (const char * const *name = symfonic_conformance_list (conformance); *name != NULL; name++)
    {
      g_autofree char *path = g_strdup_printf ("/transcripts/%s", *name);

      g_test_add_data_func (path, *name, test_transcript);
    }

  status = g_test_run ();
  symfonic_conformance_free (conformance);

  return status;
}
