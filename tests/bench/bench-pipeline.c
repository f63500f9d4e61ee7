/* bench-pipeline.c: what the C stages cost per event
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The executor's sink is private, so the stage chain cannot be driven
 * alone; instead one pipeline serves the same replay source on four typed
 * routes, with no stage, with extraction, with citation and with both, and
 * the same stream is timed on each through HTTP. Everything but the stages
 * is common to the four, so the difference per event is what the stages
 * add on the worker's per-event path (DESIGN 8: C stages run inline, no
 * hop, no locks).
 *
 * The stream has 50,000 deltas of 16 bytes, one in ten carrying a
 * [semantic] tag for citation to remove: about 3 MB of frames, under the
 * writer's 8 MiB bound, so nothing is shed and every route writes every
 * frame (checked with symfonic_frames_shed_total). Rounds alternate the
 * routes so that drift hits all of them alike; the median of 7 is printed,
 * with the per-event time and the difference to the route without stages.
 */
#include "bench-common.h"

#define N_DELTAS 50000
#define DELTA_TEXT_LENGTH 16
#define TAG_EVERY 10
#define ROUNDS 7

typedef struct
{
  const char *path;
  const char *stages;
  GArray     *seconds;
  guint64     frames;
  gssize      text_length;
} Route;

static double
time_stream (GSocket    *socket,
             const char *request,
             Route      *route)
{
  g_autoptr(GError) error = NULL;
  BenchResponse response;
  gint64 start;
  double seconds;

  bench_response_init (&response);
  start = g_get_monotonic_time ();
  if (!bench_send_all (socket, request, strlen (request), &error) ||
      !bench_read_response (socket, &response, &error))
    g_error ("%s: %s", route->path, error->message);
  seconds = (response.last_frame_us - start) / 1e6;
  route->frames = response.frames;
  route->text_length = bench_response_terminal_text_length (&response);
  bench_response_clear (&response);

  return seconds;
}

int
main (int    argc,
      char **argv)
{
  Route routes[] = {
    { "/typed", "(none)", NULL, 0, 0 },
    { "/extraction", "extraction", NULL, 0, 0 },
    { "/citation", "citation", NULL, 0, 0 },
    { "/both", "extraction;citation", NULL, 0, 0 },
  };
  g_autofree char *dir = NULL;
  g_autofree char *base = NULL;
  g_autoptr(GString) pipeline = NULL;
  g_autoptr(SymfonicServer) server = NULL;
  g_autoptr(GSocket) socket = NULL;
  g_autoptr(GError) error = NULL;
  double shed_before;
  double shed_after;
  double baseline = 0;
  gsize text_length;
  guint16 port;

  bench_init ();
  dir = bench_make_dir ();
  text_length = bench_write_transcript (dir, "cited", N_DELTAS, DELTA_TEXT_LENGTH, TAG_EVERY, 0);
  base = bench_replay_pipeline (dir, "cited");
  pipeline = g_string_new (base);
  for (guint i = 1; i < G_N_ELEMENTS (routes); i++)
    g_string_append_printf (pipeline,
                            "[route:r%u]\n"
                            "path=%s\n"
                            "kind=typed\n"
                            "source=replay\n"
                            "stages=%s\n"
                            "\n",
                            i, routes[i].path, routes[i].stages);
  g_string_append (pipeline,
                   "[stage:extraction]\n"
                   "type=extraction\n"
                   "\n"
                   "[stage:citation]\n"
                   "type=citation\n");

  /* one worker, one connection: the runs never overlap */
  server = bench_server_new (pipeline->str, dir, 1);
  port = symfonic_server_get_port (server);
  socket = bench_connect (port, 0, &error);
  if (socket == NULL)
    g_error ("connect: %s", error->message);

  shed_before = bench_fetch_metric (port, "symfonic_frames_shed_total");
  for (guint round = 0; round <= ROUNDS; round++)
    {
      for (guint i = 0; i < G_N_ELEMENTS (routes); i++)
        {
          g_autofree char *request = bench_post_request (routes[i].path, "cited");
          double seconds;

          if (routes[i].seconds == NULL)
            routes[i].seconds = g_array_new (FALSE, FALSE, sizeof (double));
          seconds = time_stream (socket, request, &routes[i]);
          /* round 0 warms caches and the allocator up */
          if (round > 0)
            g_array_append_val (routes[i].seconds, seconds);
        }
    }
  g_usleep (200 * 1000);
  shed_after = bench_fetch_metric (port, "symfonic_frames_shed_total");

  for (guint i = 0; i < G_N_ELEMENTS (routes); i++)
    {
      double median = bench_percentile (routes[i].seconds, 0.5);
      double per_event = median * 1e6 / N_DELTAS;

      if (i == 0)
        baseline = per_event;
      g_print ("pipeline: stages %-19s %u deltas, %" G_GUINT64_FORMAT " frames: median %.1f ms "
               "(min %.1f, max %.1f) = %.3f us/event, stages add %+.3f us/event; terminal text %" G_GSSIZE_FORMAT " B\n",
               routes[i].stages, N_DELTAS, routes[i].frames, median * 1e3,
               g_array_index (routes[i].seconds, double, 0) * 1e3,
               g_array_index (routes[i].seconds, double, routes[i].seconds->len - 1) * 1e3,
               per_event, per_event - baseline, routes[i].text_length);
      g_array_unref (routes[i].seconds);
    }
  g_print ("pipeline: answer %zu B before citation removes its tags; frames shed in all runs: %.0f\n",
           text_length, shed_after - shed_before);

  g_clear_object (&socket);
  symfonic_server_stop (server);
  bench_remove_dir (dir);

  return 0;
}
