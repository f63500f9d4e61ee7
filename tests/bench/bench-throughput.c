/* bench-throughput.c: how fast one long stream, and many at once, reach
 * readers that keep up
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The replay source plays a generated transcript at time-scale=0, so the
 * upstream is never the bottleneck: what is measured is the gateway's own
 * path (stream, typed encoder, SSE writer, libsoup, the socket) and a raw
 * client on the same machine that only parses chunks and counts frames.
 * The deltas are token-sized (8 bytes), as a model's are.
 *
 * Printed per case, over 5 runs (a run is short): frames delivered per
 * second and decoded body MB/s (10^6 bytes) from the request to the last
 * frame, by the median run; the frames the writer shed per run
 * (symfonic_frames_shed_total, before and after); whether the terminal
 * carried the whole answer; the process's peak RSS (VmHWM, reset before
 * the case) against its RSS before; and how much CPU the server's worker
 * threads and the clients used while running.
 *
 * DESIGN 8 and PLATFORM-NOTES set the expectation: coalescing frames into
 * one chunk per main-loop iteration reached ~465k frames/s for one stream
 * of libsoup on this machine; memory must stay within the writer's bounds
 * (8 MiB queued per connection).
 */
#include "bench-common.h"

#define DELTA_TEXT_LENGTH 8
#define RUNS 5

typedef struct
{
  guint16        port;
  const char    *transcript;
  BenchResponse  response;
  gint64         start_us;
  gint64         end_us;
  GError        *error;
} Client;

static gpointer
client_thread (gpointer data)
{
  Client *client = data;
  g_autofree char *request = bench_post_request ("/typed", client->transcript);
  g_autoptr(GSocket) socket = NULL;

  socket = bench_connect (client->port, 0, &client->error);
  if (socket == NULL)
    return NULL;

  client->start_us = g_get_monotonic_time ();
  if (bench_send_all (socket, request, strlen (request), &client->error))
    bench_read_response (socket, &client->response, &client->error);
  client->end_us = g_get_monotonic_time ();

  return NULL;
}

/* One run: @n_streams clients at once; returns the seconds from the first
 * request to the last frame, and adds up what the clients got. */
static double
run_once (guint16     port,
          guint       n_streams,
          const char *transcript,
          gsize       text_length,
          guint64    *frames,
          guint64    *deltas,
          guint64    *bytes,
          guint      *complete)
{
  g_autofree Client *clients = g_new0 (Client, n_streams);
  g_autofree GThread **threads = g_new0 (GThread *, n_streams);
  gint64 start = G_MAXINT64;
  gint64 end = 0;

  for (guint i = 0; i < n_streams; i++)
    {
      clients[i].port = port;
      clients[i].transcript = transcript;
      bench_response_init (&clients[i].response);
      threads[i] = g_thread_new ("bench-client", client_thread, &clients[i]);
    }

  *frames = *deltas = *bytes = 0;
  for (guint i = 0; i < n_streams; i++)
    {
      Client *client = &clients[i];

      g_thread_join (threads[i]);
      if (client->error != NULL)
        {
          g_printerr ("stream %u: %s\n", i, client->error->message);
          g_clear_error (&client->error);
        }
      start = MIN (start, client->start_us);
      end = MAX (end, client->end_us);
      *frames += client->response.frames;
      *deltas += client->response.delta_frames;
      *bytes += client->response.body_bytes;
      if (bench_response_terminal_text_length (&client->response) == (gssize) text_length)
        (*complete)++;
      bench_response_clear (&client->response);
    }

  return (end - start) / 1e6;
}

static void
run_case (guint16     port,
          guint       n_streams,
          const char *transcript,
          guint       n_deltas,
          gsize       text_length)
{
  g_autoptr(GArray) seconds = g_array_new (FALSE, FALSE, sizeof (double));
  const char *plural = n_streams == 1 ? "" : "s";
  double shed_before;
  double shed_after;
  double cpu_start;
  double workers_start;
  double cpu;
  double workers_cpu;
  double total = 0;
  double median;
  guint64 rss_before;
  guint64 peak;
  guint64 frames = 0;
  guint64 deltas = 0;
  guint64 bytes = 0;
  guint complete = 0;

  shed_before = bench_fetch_metric (port, "symfonic_frames_shed_total");
  bench_reset_peak_rss ();
  rss_before = bench_status_kb ("VmRSS");
  cpu_start = bench_cpu_seconds (NULL);
  workers_start = bench_cpu_seconds ("worker");

  for (guint run = 0; run < RUNS; run++)
    {
      double elapsed = run_once (port, n_streams, transcript, text_length,
                                 &frames, &deltas, &bytes, &complete);

      g_array_append_val (seconds, elapsed);
      total += elapsed;
    }

  peak = bench_status_kb ("VmHWM");
  cpu = bench_cpu_seconds (NULL) - cpu_start;
  workers_cpu = bench_cpu_seconds ("worker") - workers_start;

  /* the writer adds its counts when libsoup finishes the message, which can
   * be a moment after the client read the last chunk */
  g_usleep (200 * 1000);
  shed_after = bench_fetch_metric (port, "symfonic_frames_shed_total");

  median = bench_percentile (seconds, 0.5);
  g_print ("throughput: %u stream%s x %u deltas: %" G_GUINT64_FORMAT " frames in %.3f s (median of %d, "
           "%.3f-%.3f) = %.0fk frames/s, %.1f MB/s; deltas delivered %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT
           ", shed %.0f per run\n",
           n_streams, plural, n_deltas, frames, median, RUNS,
           g_array_index (seconds, double, 0), g_array_index (seconds, double, RUNS - 1),
           frames / median / 1e3, bytes / median / 1e6,
           deltas, (guint64) n_streams * n_deltas, (shed_after - shed_before) / RUNS);
  g_print ("throughput: %u stream%s x %u deltas: terminal with the whole text (%zu B) in %u/%u; "
           "RSS %.1f MB before, peak %.1f MB (+%.1f MB); CPU: server workers %.2f cores, clients %.2f cores\n",
           n_streams, plural, n_deltas, text_length, complete, n_streams * RUNS,
           rss_before / 1024.0, peak / 1024.0, ((double) peak - rss_before) / 1024.0,
           workers_cpu / total, (cpu - workers_cpu) / total);
}

int
main (int    argc,
      char **argv)
{
  g_autofree char *dir = NULL;
  g_autofree char *pipeline = NULL;
  g_autoptr(SymfonicServer) server = NULL;
  gsize long_text;
  gsize short_text;
  guint16 port;

  bench_init ();
  dir = bench_make_dir ();
  long_text = bench_write_transcript (dir, "long", 200000, DELTA_TEXT_LENGTH, 0, 0);
  short_text = bench_write_transcript (dir, "short", 20000, DELTA_TEXT_LENGTH, 0, 0);
  pipeline = bench_replay_pipeline (dir, "short");

  /* one worker per core: the 20 streams spread over both */
  server = bench_server_new (pipeline, dir, 2);
  port = symfonic_server_get_port (server);

  run_case (port, 1, "long", 200000, long_text);
  run_case (port, 20, "short", 20000, short_text);

  symfonic_server_stop (server);
  bench_remove_dir (dir);

  return 0;
}
