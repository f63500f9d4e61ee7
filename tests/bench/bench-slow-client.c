/* bench-slow-client.c: a reader slower than the upstream
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The SSE writer declares its buffer (DESIGN 8): at most 256 frames and
 * 8 MiB queued per connection; beyond that droppable deltas are shed and
 * counted, and the terminal, which carries the whole text, is always
 * delivered. Without that bound a slow client piles the whole answer into
 * the server's memory (40 MB in the PLATFORM-NOTES prototype).
 *
 * A client with a small receive buffer (so the kernel cannot absorb the
 * stream for it) reads 1 KiB every 100 ms, about 10 KB/s, for 5 s, then
 * reads the rest as fast as it can, so the run stays short; its stream has
 * 100,000 deltas. Three cases:
 *   burst: time-scale=0, the whole transcript in one main-loop iteration,
 *          token-sized deltas (8 B): about 5.7 MB of frames, under the
 *          byte bound, so all of it may be queued;
 *   burst, 64 B deltas: the same with about 10.5 MB of frames, over it;
 *   paced: 8 B deltas in bursts of 100, 1 ms apart, over about a second,
 *          so the writer sees libsoup's queue while the stream is still
 *          being produced and the frame bound applies.
 *
 * Printed per case: the process's RSS growth while the client lags (the
 * server-side queue is the only thing that grows), the body bytes the
 * client finally read (what was queued for it, since shed frames are never
 * queued), deltas delivered, symfonic_frames_shed_total, and whether the
 * terminal carried the whole text. Expected: RSS growth under ~16 MB,
 * shed > 0 where the bounds are reached, terminal complete. The loopback
 * socket's kernel send buffer (up to net.ipv4.tcp_wmem's maximum) also
 * holds frames for a slow client; it is not in RSS, and shows as body
 * bytes beyond what the user-space bounds explain.
 */
#include "bench-common.h"

#define N_DELTAS 100000
#define DELTA_TEXT_LENGTH 8
#define SLOW_READ_BYTES 1024
#define SLOW_READ_INTERVAL_MS 100
#define SLOW_PHASE_S 5

static void
run_case (guint16     port,
          const char *name,
          const char *path,
          const char *transcript,
          gsize       text_length)
{
  g_autofree char *request = bench_post_request (path, transcript);
  g_autoptr(GSocket) socket = NULL;
  g_autoptr(GError) error = NULL;
  BenchResponse response;
  char buffer[SLOW_READ_BYTES];
  double shed_before;
  double shed_after;
  guint64 rss_before;
  guint64 rss_max;
  guint64 peak;
  guint64 slow_bytes;
  gint64 start;
  gint64 next;
  gint64 drain_start;
  gint64 end;

  shed_before = bench_fetch_metric (port, "symfonic_frames_shed_total");
  bench_response_init (&response);
  bench_reset_peak_rss ();
  rss_before = rss_max = bench_status_kb ("VmRSS");

  socket = bench_connect (port, 16 * 1024, &error);
  if (socket == NULL || !bench_send_all (socket, request, strlen (request), &error))
    g_error ("%s: %s", name, error->message);

  start = next = g_get_monotonic_time ();
  while (!bench_response_is_done (&response) && g_get_monotonic_time () < start + SLOW_PHASE_S * G_USEC_PER_SEC)
    {
      gssize n = g_socket_receive (socket, buffer, sizeof buffer, NULL, &error);

      if (n <= 0)
        g_error ("%s: %s", name, n < 0 ? error->message : "the server closed the connection");
      bench_response_feed (&response, buffer, n, g_get_monotonic_time ());
      rss_max = MAX (rss_max, bench_status_kb ("VmRSS"));

      next += SLOW_READ_INTERVAL_MS * 1000 * n / SLOW_READ_BYTES;
      if (next > g_get_monotonic_time ())
        g_usleep (next - g_get_monotonic_time ());
    }
  slow_bytes = response.body_bytes;
  peak = bench_status_kb ("VmHWM");

  drain_start = g_get_monotonic_time ();
  if (!bench_read_response (socket, &response, &error))
    g_error ("%s: %s", name, error->message);
  end = g_get_monotonic_time ();

  /* counts are added when libsoup finishes the message */
  g_usleep (200 * 1000);
  shed_after = bench_fetch_metric (port, "symfonic_frames_shed_total");

  g_print ("slow-client: %s, %u deltas, read at %.1f KB/s for %.1f s (%.1f kB): "
           "RSS %.1f MB before, +%.1f MB at most while lagging (VmHWM +%.1f MB)\n",
           name, N_DELTAS, slow_bytes / 1e3 / ((drain_start - start) / 1e6),
           (drain_start - start) / 1e6, slow_bytes / 1e3,
           rss_before / 1024.0, ((double) rss_max - rss_before) / 1024.0,
           ((double) peak - rss_before) / 1024.0);
  g_print ("slow-client: %s, then drained in %.2f s: body %.2f MB, deltas delivered %" G_GUINT64_FORMAT "/%u, "
           "shed %.0f, terminal text %" G_GSSIZE_FORMAT "/%zu B\n",
           name, (end - drain_start) / 1e6, response.body_bytes / 1e6,
           response.delta_frames, N_DELTAS, shed_after - shed_before,
           bench_response_terminal_text_length (&response), text_length);

  bench_response_clear (&response);
}

int
main (int    argc,
      char **argv)
{
  g_autofree char *dir = NULL;
  g_autofree char *base = NULL;
  g_autofree char *pipeline = NULL;
  g_autoptr(SymfonicServer) server = NULL;
  gsize text_length;
  gsize large_length;
  guint16 port;

  bench_init ();
  dir = bench_make_dir ();
  text_length = bench_write_transcript (dir, "slow", N_DELTAS, DELTA_TEXT_LENGTH, 0, 100);
  large_length = bench_write_transcript (dir, "slow-large", N_DELTAS, 64, 0, 0);

  /* the burst route ignores the pauses (time-scale=0); the paced one
   * plays them */
  base = bench_replay_pipeline (dir, "slow");
  pipeline = g_strdup_printf ("%s"
                              "[route:paced]\n"
                              "path=/paced\n"
                              "kind=typed\n"
                              "source=paced\n"
                              "\n"
                              "[source:paced]\n"
                              "type=replay\n"
                              "transcripts=%s\n"
                              "default-transcript=slow\n"
                              "time-scale=1\n",
                              base, dir);
  server = bench_server_new (pipeline, dir, 1);
  port = symfonic_server_get_port (server);

  run_case (port, "burst", "/typed", "slow", text_length);
  run_case (port, "burst, 64 B deltas", "/typed", "slow-large", large_length);
  run_case (port, "paced", "/paced", "slow", text_length);

  symfonic_server_stop (server);
  bench_remove_dir (dir);

  return 0;
}
