/* test-affinity.c: a stage bound to a thread of its own, through real
 * requests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * DESIGN 8, thread affinity: the executor hands such a stage its batches
 * on the stage's context and goes on when it answers. The test stage
 * counts every hook that ran on another thread; these tests check that
 * order holds across many streams, that a slow stage on its thread does
 * not slow a route without it, that the source waits while a batch is
 * out, that a source with a long answer at hand is told to wait once the
 * next batch is full and loses nothing, that a stage without affinity
 * runs inside the source's push with no hop, that a client that keeps up
 * never makes a source wait, and that a client leaving while a batch is
 * out is safe.
 */
#include <string.h>

#include "symfonic-test-support.h"

#define N_WORDS 50
#define N_STREAMS 64
/* the burst source's answer: several times what the stream holds for a
 * stage on another thread while a batch is out (64 events, PENDING_MAX in
 * symfonic-stream.c) */
#define N_BURST 500
#define PENDING_MAX 64

typedef struct
{
  const char *name;
  gpointer    object;
  guint       value;
} PropertyWait;

static gboolean
property_reached (gpointer data)
{
  PropertyWait *wait = data;
  guint value;

  g_object_get (wait->object, wait->name, &value, NULL);
  return value == wait->value;
}

static gboolean
tick (gpointer data)
{
  return G_SOURCE_CONTINUE;
}

/* Waits, dispatching the test's context, until @object's @name is
 * @value; fails the test if it never gets there. The stage changes it on
 * another thread, so the test's context is woken to look every 5 ms. */
static void
wait_property (gpointer    object,
               const char *name,
               guint       value)
{
  PropertyWait wait = { name, object, value };
  guint ticker = g_timeout_add (5, tick, NULL);

  g_assert_true (symfonic_test_iterate_until (NULL, property_reached, &wait, SYMFONIC_TEST_WAIT_MS));
  g_source_remove (ticker);
}

static guint
get_uint (gpointer    object,
          const char *name)
{
  guint value;

  g_object_get (object, name, &value, NULL);
  return value;
}

static gboolean
never (gpointer data)
{
  return FALSE;
}

static void
pause_ms (guint ms)
{
  symfonic_test_iterate_until (NULL, never, NULL, ms);
}

static SymfonicServer *
affine_server (guint workers,
               guint delay_ms)
{
  static gsize loaded = 0;
  g_autofree char *base_dir = g_test_build_filename (G_TEST_DIST, "integration", NULL);
  g_autofree char *pipeline_text = NULL;

  if (g_once_init_enter (&loaded))
    {
      g_autoptr(GError) error = NULL;

      symfonic_registry_load_directory (symfonic_registry_get_default (), TEST_PLUGIN_AFFINE_DIR, &error);
      g_assert_no_error (error);
      g_once_init_leave (&loaded, 1);
    }

  pipeline_text = g_strdup_printf ("[gateway]\n"
                                   "listen=127.0.0.1:8080\n"
                                   "workers=%u\n"
                                   "\n"
                                   "[route:affine]\n"
                                   "path=/affine\n"
                                   "kind=typed\n"
                                   "source=fixtures\n"
                                   "stages=count;affine\n"
                                   "\n"
                                   "[route:inline]\n"
                                   "path=/inline\n"
                                   "kind=typed\n"
                                   "source=fixtures\n"
                                   "\n"
                                   "[route:burst]\n"
                                   "path=/burst\n"
                                   "kind=typed\n"
                                   "source=burst\n"
                                   "stages=count;affine\n"
                                   "\n"
                                   "[route:burst-inline]\n"
                                   "path=/burst-inline\n"
                                   "kind=typed\n"
                                   "source=burst\n"
                                   "stages=count\n"
                                   "\n"
                                   "[source:burst]\n"
                                   "type=test-burst\n"
                                   "events=%u\n"
                                   "\n"
                                   "[source:fixtures]\n"
                                   "type=replay\n"
                                   "transcripts=transcripts\n"
                                   "default-transcript=long\n"
                                   "time-scale=0.01\n"
                                   "\n"
                                   "[stage:count]\n"
                                   "type=test-count\n"
                                   "\n"
                                   "[stage:affine]\n"
                                   "type=test-affine\n"
                                   "delay-ms=%u\n",
                                   workers, N_BURST, delay_ms);

  return symfonic_test_server_new (pipeline_text, base_dir, workers);
}

static SymfonicStage *
get_stage (SymfonicServer *server,
           const char     *name)
{
  return symfonic_pipeline_get_stage (symfonic_server_get_pipeline (server), name);
}

static SymfonicTestStream *
post (SoupSession    *session,
      SymfonicServer *server,
      const char     *path)
{
  g_autofree char *url = symfonic_test_server_dup_url (server, path);

  return symfonic_test_stream_post (session, url, "{\"query\":\"talk\"}", NULL);
}

/* The deltas "<", "w1 " … "w50 ", ">", each its own frame and in this
 * order: the affine stage's begin, every upstream delta, its finish. */
static void
assert_affine_deltas (SymfonicTestStream *stream)
{
  guint n_deltas = 0;

  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, 200);
  for (guint i = 0; i < stream->frames->len; i++)
    {
      SymfonicTestFrame *frame = g_ptr_array_index (stream->frames, i);
      g_autofree char *expected = NULL;

      if (g_strcmp0 (frame->event, "TextDeltaEvent") != 0)
        continue;
      if (n_deltas == 0)
        expected = g_strdup ("{\"text\":\"<\"}");
      else if (n_deltas == N_WORDS + 1)
        expected = g_strdup ("{\"text\":\">\"}");
      else
        expected = g_strdup_printf ("{\"text\":\"w%u \"}", n_deltas);
      g_assert_cmpstr (frame->data, ==, expected);
      n_deltas++;
    }
  g_assert_cmpuint (n_deltas, ==, N_WORDS + 2);
}

/* The burst source's answer, each delta its own frame, once and in order,
 * between the affine stage's "<" and ">" when @bracketed; then the
 * terminal, whose text is all of them. */
static void
assert_burst_deltas (SymfonicTestStream *stream,
                     gboolean            bracketed)
{
  g_autoptr(GPtrArray) expected = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(JsonNode) terminal = NULL;
  SymfonicTestFrame *last;
  guint n_deltas = 0;

  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, 200);
  if (bracketed)
    g_ptr_array_add (expected, g_strdup ("<"));
  for (guint i = 1; i <= N_BURST; i++)
    g_ptr_array_add (expected, g_strdup_printf ("b%u ", i));
  if (bracketed)
    g_ptr_array_add (expected, g_strdup (">"));

  for (guint i = 0; i < stream->frames->len; i++)
    {
      SymfonicTestFrame *frame = g_ptr_array_index (stream->frames, i);
      g_autoptr(JsonNode) data = NULL;
      const char *delta;

      if (g_strcmp0 (frame->event, "TextDeltaEvent") != 0)
        continue;
      g_assert_cmpuint (n_deltas, <, expected->len);
      data = symfonic_test_json_parse (frame->data);
      delta = json_object_get_string_member (json_node_get_object (data), "text");
      g_assert_cmpstr (delta, ==, g_ptr_array_index (expected, n_deltas));
      g_string_append (text, delta);
      n_deltas++;
    }
  g_assert_cmpuint (n_deltas, ==, expected->len);

  last = g_ptr_array_index (stream->frames, stream->frames->len - 1);
  g_assert_cmpstr (last->event, ==, "ResponseCompleteEvent");
  terminal = symfonic_test_json_parse (last->data);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (terminal), "text"), ==, text->str);
}

/* A stream of /affine whose first event the stage holds. */
static SymfonicTestStream *
post_held (SoupSession    *session,
           SymfonicServer *server,
           SymfonicStage  *affine)
{
  SymfonicTestStream *stream;

  g_object_set (affine, "hold", TRUE, NULL);
  stream = post (session, server, "/affine");
  wait_property (affine, "waiting", 1);

  return stream;
}

/* The stage lets go, and the held stream completes in order. */
static void
let_go (SymfonicStage      *affine,
        SymfonicTestStream *stream)
{
  g_object_set (affine, "hold", FALSE, NULL);
  symfonic_test_stream_wait_done (stream);
  assert_affine_deltas (stream);
}

static void
test_affinity_order_across_streams (void)
{
  g_autoptr(SymfonicServer) server = affine_server (2, 0);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  SymfonicStage *affine = get_stage (server, "affine");
  SymfonicTestStream *streams[N_STREAMS];

  for (guint i = 0; i < N_STREAMS; i++)
    streams[i] = post (session, server, "/affine");
  for (guint i = 0; i < N_STREAMS; i++)
    {
      symfonic_test_stream_wait_done (streams[i]);
      assert_affine_deltas (streams[i]);
      symfonic_test_stream_free (streams[i]);
    }

  wait_property (affine, "closed", N_STREAMS);
  g_assert_cmpuint (get_uint (affine, "processed"), ==, N_STREAMS * N_WORDS);
  g_assert_cmpuint (get_uint (affine, "off-thread"), ==, 0);
}

/* One worker: a stage that takes 200 ms an event on its own thread must
 * not hold back a stream of a route without it. */
static void
test_affinity_slow_stage_spares_other_routes (void)
{
  g_autoptr(SymfonicServer) server = affine_server (1, 200);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  SymfonicStage *affine = get_stage (server, "affine");
  g_autoptr(SymfonicTestStream) slow = post (session, server, "/affine");
  g_autoptr(SymfonicTestStream) fast = NULL;
  gint64 took;

  /* "<" and the first delta are through: the slow stage is busy */
  symfonic_test_stream_wait_frames (slow, 2);
  fast = post (session, server, "/inline");
  symfonic_test_stream_wait_done (fast);
  took = fast->end_us - fast->start_us;
  g_test_message ("the inline route's stream took %" G_GINT64_FORMAT " us next to the slow stage", took);

  g_assert_no_error (fast->error);
  g_assert_cmpuint (fast->status, ==, 200);
  /* 50 deltas 1 ms apart; the slow stream needs 10 s */
  g_assert_cmpint (took, <, 2 * G_USEC_PER_SEC);
  g_assert_false (slow->done);

  symfonic_test_stream_close (slow);
  wait_property (affine, "closed", 1);
  g_assert_cmpuint (get_uint (affine, "off-thread"), ==, 0);
}

/* While the stage holds a batch no stage before it sees more events, then
 * the stream completes in order once it lets go. */
static void
test_affinity_source_waits_for_batch (void)
{
  g_autoptr(SymfonicServer) server = affine_server (1, 0);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  SymfonicStage *affine = get_stage (server, "affine");
  SymfonicStage *count = get_stage (server, "count");
  g_autoptr(SymfonicTestStream) stream = NULL;

  stream = post_held (session, server, affine);
  /* the upstream would have pushed all 50 deltas in this time */
  pause_ms (300);
  g_assert_cmpuint (get_uint (count, "seen"), ==, 1);

  let_go (affine, stream);
  g_assert_cmpuint (get_uint (count, "seen"), ==, N_WORDS);
  wait_property (affine, "closed", 1);
  g_assert_cmpuint (get_uint (affine, "off-thread"), ==, 0);
}

/* While the stage holds a batch the source fills the next one, and that
 * one crosses in a single hop: a stage on another thread gets many events
 * per hop, not one. The answer's 49 remaining deltas are under the bound
 * of a batch. */
static void
test_affinity_next_batch_fills_while_out (void)
{
  g_autoptr(SymfonicServer) server = affine_server (1, 0);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  SymfonicStage *affine = get_stage (server, "affine");
  g_autoptr(SymfonicTestStream) stream = NULL;

  stream = post_held (session, server, affine);
  /* the upstream pushes its 49 other deltas in this time */
  pause_ms (300);

  let_go (affine, stream);
  g_assert_cmpuint (get_uint (affine, "largest-batch"), ==, N_WORDS - 1);
  wait_property (affine, "closed", 1);
  g_assert_cmpuint (get_uint (affine, "off-thread"), ==, 0);
}

/* A source with a long answer at hand, before a stage on another thread
 * that takes a millisecond an event: while a batch is out the source
 * fills the next one, is told to wait once it holds PENDING_MAX events,
 * and goes on when the batch comes back; every delta arrives once and in
 * order, and the terminal carries them all. */
static void
test_affinity_source_told_to_wait (void)
{
  g_autoptr(SymfonicServer) server = affine_server (1, 1);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  SymfonicStage *affine = get_stage (server, "affine");
  SymfonicStage *count = get_stage (server, "count");
  SymfonicSource *burst = symfonic_pipeline_get_source (symfonic_server_get_pipeline (server), "burst");
  g_autoptr(SymfonicTestStream) stream = post (session, server, "/burst");

  symfonic_test_stream_wait_done (stream);
  assert_burst_deltas (stream, TRUE);
  g_test_message ("the source was told to wait %u times", get_uint (burst, "waits"));

  g_assert_cmpuint (get_uint (burst, "waits"), >=, N_BURST / (PENDING_MAX + 1));
  /* the next batch was held to its bound, and filled it */
  g_assert_cmpuint (get_uint (affine, "largest-batch"), ==, PENDING_MAX);
  g_assert_cmpuint (get_uint (count, "seen"), ==, N_BURST);
  g_assert_cmpuint (get_uint (affine, "processed"), ==, N_BURST);
  wait_property (affine, "closed", 1);
  g_assert_cmpuint (get_uint (affine, "off-thread"), ==, 0);
}

/* A C stage without affinity runs on the worker, inside the source's
 * push: every event reached it there, on the thread that pushed it, none
 * by a hop. */
static void
test_affinity_inline_stage_does_not_hop (void)
{
  g_autoptr(SymfonicServer) server = affine_server (2, 0);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  SymfonicStage *count = get_stage (server, "count");
  g_autoptr(SymfonicTestStream) stream = post (session, server, "/burst-inline");

  symfonic_test_stream_wait_done (stream);
  assert_burst_deltas (stream, FALSE);

  g_assert_cmpuint (get_uint (count, "seen"), ==, N_BURST);
  g_assert_cmpuint (get_uint (count, "in-push"), ==, N_BURST);
}

/* A client that takes what it is sent never holds the source back, with
 * no stage on another thread: the frames of the burst's one iteration go
 * out each time they reach the writer's high-water mark (128 frames, a
 * quarter of the answer, some 10 KB a time), and the socket takes them.
 * The source waits once, right after the first delta went out, for the
 * worker to poll before the rest; only a client that is behind stops it
 * again. */
static void
test_affinity_fast_client_waits_once (void)
{
  g_autoptr(SymfonicServer) server = affine_server (1, 0);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  SymfonicSource *burst = symfonic_pipeline_get_source (symfonic_server_get_pipeline (server), "burst");
  g_autoptr(SymfonicTestStream) stream = post (session, server, "/burst-inline");

  symfonic_test_stream_wait_done (stream);
  assert_burst_deltas (stream, FALSE);
  g_assert_cmpuint (get_uint (burst, "waits"), ==, 1);
}

/* The client leaves while the stage holds a batch: the stream is
 * cancelled at once, the batch's answer is dropped when it comes, and the
 * stage closes the stream on its own thread. */
static void
test_affinity_disconnect_while_out (void)
{
  g_autoptr(SymfonicServer) server = affine_server (1, 0);
  g_autofree char *base_url = symfonic_test_server_dup_url (server, "");
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SoupSession) metrics_session = symfonic_test_session_new ();
  SymfonicStage *affine = get_stage (server, "affine");
  g_autoptr(SymfonicTestStream) stream = NULL;
  gint64 start = g_get_monotonic_time ();

  stream = post_held (session, server, affine);
  symfonic_test_stream_close (stream);
  soup_session_abort (session);

  while (symfonic_test_fetch_metric (metrics_session, base_url, "symfonic_streams_cancelled_total") < 1)
    {
      g_assert_cmpint (g_get_monotonic_time () - start, <, SYMFONIC_TEST_WAIT_MS * 1000);
      pause_ms (5);
    }
  g_assert_cmpfloat (symfonic_test_fetch_metric (metrics_session, base_url, "symfonic_streams_active"), ==, 0);
  g_assert_cmpuint (get_uint (affine, "closed"), ==, 0);

  g_object_set (affine, "hold", FALSE, NULL);
  wait_property (affine, "closed", 1);
  pause_ms (200);
  g_assert_cmpuint (get_uint (affine, "processed"), ==, 1);
  g_assert_cmpuint (get_uint (affine, "off-thread"), ==, 0);
  g_assert_cmpfloat (symfonic_test_fetch_metric (metrics_session, base_url, "symfonic_streams_completed_total"), ==, 0);
  g_assert_cmpfloat (symfonic_test_fetch_metric (metrics_session, base_url, "symfonic_streams_failed_total"), ==, 0);
}

/* The admission hook runs on the stage's thread too, and its refusal is
 * the client's 403. */
static void
test_affinity_admission_refused (void)
{
  g_autoptr(SymfonicServer) server = affine_server (1, 0);
  g_autofree char *url = symfonic_test_server_dup_url (server, "/affine");
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  SymfonicStage *affine = get_stage (server, "affine");
  g_autoptr(SymfonicTestResponse) response = NULL;

  g_object_set (affine, "refuse", TRUE, NULL);
  response = symfonic_test_request (session, "POST", url, "application/json", "{\"query\":\"talk\"}", NULL);

  g_assert_cmpuint (response->status, ==, 403);
  g_assert_cmpuint (get_uint (affine, "off-thread"), ==, 0);
  g_assert_cmpuint (get_uint (affine, "processed"), ==, 0);
  g_assert_cmpuint (get_uint (affine, "closed"), ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  symfonic_test_init (&argc, &argv);

  g_test_add_func ("/affinity/order-across-streams", test_affinity_order_across_streams);
  g_test_add_func ("/affinity/slow-stage-spares-other-routes", test_affinity_slow_stage_spares_other_routes);
  g_test_add_func ("/affinity/source-waits-for-batch", test_affinity_source_waits_for_batch);
  g_test_add_func ("/affinity/next-batch-fills-while-out", test_affinity_next_batch_fills_while_out);
  g_test_add_func ("/affinity/source-told-to-wait", test_affinity_source_told_to_wait);
  g_test_add_func ("/affinity/inline-stage-does-not-hop", test_affinity_inline_stage_does_not_hop);
  g_test_add_func ("/affinity/fast-client-waits-once", test_affinity_fast_client_waits_once);
  g_test_add_func ("/affinity/disconnect-while-out", test_affinity_disconnect_while_out);
  g_test_add_func ("/affinity/admission-refused", test_affinity_admission_refused);

  return g_test_run ();
}
