/* bench-requests.c: many short streams over kept-alive connections
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The load of many agents asking short questions: 50 keep-alive clients
 * each POST a 200-frame typed stream (~20 kB, like the wrk table of
 * PLATFORM-NOTES) and send the next request as soon as the terminal
 * arrives, for 5 seconds, first with one worker, then with two. Clients
 * are multiplexed on two threads with poll(), like `wrk -t2 -c50`, so the
 * client spends little of the two cores the server needs.
 *
 * Printed per worker count: requests/s and frames/s completed within the
 * window, non-200 or broken responses, p50/p99 latency from sending a
 * request to its response headers, its first frame and its last frame
 * (the terminal), and the CPU the server's worker threads and the clients
 * used. The worker count shows whether SO_REUSEPORT spreads the load; on
 * 2 cores shared with the client, two workers can only win what the
 * client leaves free, which the CPU line tells.
 */
#include <errno.h>

#include "bench-common.h"

#define N_CLIENTS 50
#define N_THREADS 2
#define N_DELTAS 198
#define DELTA_TEXT_LENGTH 30
#define WINDOW_S 5

typedef struct
{
  GSocket       *socket;
  BenchResponse  response;
  gint64         sent_us;
  gboolean       busy;
} Connection;

typedef struct
{
  guint16   port;
  guint     n_connections;
  gint64    deadline_us;
  char     *request;

  /* results: completed within the window */
  guint64   requests;
  guint64   frames;
  guint64   bytes;
  guint64   failures;
  GArray   *headers_ms;
  GArray   *first_ms;
  GArray   *last_ms;
} Driver;

static gboolean
send_request (Driver     *driver,
              Connection *connection)
{
  g_autoptr(GError) error = NULL;

  bench_response_reset (&connection->response);
  connection->sent_us = g_get_monotonic_time ();
  /* a few hundred bytes always fit in an idle socket's buffer */
  if (!bench_send_all (connection->socket, driver->request, strlen (driver->request), &error))
    {
      g_printerr ("send: %s\n", error->message);
      return FALSE;
    }
  connection->busy = TRUE;

  return TRUE;
}

static void
drop_connection (Connection *connection,
                 GPollFD    *fd)
{
  connection->busy = FALSE;
  g_clear_object (&connection->socket);
  fd->fd = -1;
}

static void
response_done (Driver     *driver,
               Connection *connection,
               gint64      now)
{
  BenchResponse *response = &connection->response;
  double headers = (response->headers_us - connection->sent_us) / 1e3;
  double first = (response->first_frame_us - connection->sent_us) / 1e3;
  double last = (response->last_frame_us - connection->sent_us) / 1e3;

  connection->busy = FALSE;
  if (response->status != 200 || bench_response_terminal_text_length (response) < 0)
    {
      driver->failures++;
      return;
    }
  if (now > driver->deadline_us)
    return;

  driver->requests++;
  driver->frames += response->frames;
  driver->bytes += response->body_bytes;
  g_array_append_val (driver->headers_ms, headers);
  g_array_append_val (driver->first_ms, first);
  g_array_append_val (driver->last_ms, last);
}

static gpointer
driver_thread (gpointer data)
{
  Driver *driver = data;
  g_autofree Connection *connections = g_new0 (Connection, driver->n_connections);
  g_autofree GPollFD *fds = g_new0 (GPollFD, driver->n_connections);
  char buffer[65536];
  guint busy = 0;

  for (guint i = 0; i < driver->n_connections; i++)
    {
      g_autoptr(GError) error = NULL;

      bench_response_init (&connections[i].response);
      connections[i].socket = bench_connect (driver->port, 0, &error);
      if (connections[i].socket == NULL)
        g_error ("connect: %s", error->message);
      g_socket_set_blocking (connections[i].socket, FALSE);
      fds[i].fd = g_socket_get_fd (connections[i].socket);
      fds[i].events = G_IO_IN;
    }

  for (guint i = 0; i < driver->n_connections; i++)
    {
      if (send_request (driver, &connections[i]))
        busy++;
      else
        drop_connection (&connections[i], &fds[i]);
    }

  /* after the window, in-flight responses are read to their end (so the
   * server is idle for the next run), for at most as long again */
  while (busy > 0 && g_get_monotonic_time () < driver->deadline_us + WINDOW_S * G_USEC_PER_SEC)
    {
      if (g_poll (fds, driver->n_connections, 100) < 0 && errno != EINTR)
        g_error ("poll: %s", g_strerror (errno));

      for (guint i = 0; i < driver->n_connections; i++)
        {
          Connection *connection = &connections[i];
          g_autoptr(GError) error = NULL;
          gssize n;
          gsize used;
          gint64 now;

          if (fds[i].fd < 0 || (fds[i].revents & (G_IO_IN | G_IO_HUP | G_IO_ERR)) == 0)
            continue;
          fds[i].revents = 0;

          n = g_socket_receive (connection->socket, buffer, sizeof buffer, NULL, &error);
          if (n < 0 && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
            continue;
          now = g_get_monotonic_time ();
          if (n <= 0)
            {
              /* a connection the server closed is a failed request */
              driver->failures++;
              drop_connection (connection, &fds[i]);
              busy--;
              continue;
            }

          used = bench_response_feed (&connection->response, buffer, n, now);
          if (!bench_response_is_done (&connection->response))
            continue;

          response_done (driver, connection, now);
          if (used != (gsize) n)
            {
              g_printerr ("%" G_GSSIZE_FORMAT " bytes after the end of a response\n", n - used);
              driver->failures++;
              drop_connection (connection, &fds[i]);
              busy--;
            }
          else if (now >= driver->deadline_us || !send_request (driver, connection))
            {
              /* idle from now on: whatever it reads later is not ours */
              busy--;
              fds[i].fd = -1;
            }
        }
    }

  for (guint i = 0; i < driver->n_connections; i++)
    {
      g_clear_object (&connections[i].socket);
      bench_response_clear (&connections[i].response);
    }

  return NULL;
}

static void
run_case (const char *pipeline,
          const char *dir,
          guint       workers)
{
  g_autoptr(SymfonicServer) server = bench_server_new (pipeline, dir, workers);
  g_autoptr(GArray) headers_ms = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) first_ms = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) last_ms = g_array_new (FALSE, FALSE, sizeof (double));
  Driver drivers[N_THREADS] = { { 0 } };
  GThread *threads[N_THREADS];
  guint64 requests = 0;
  guint64 frames = 0;
  guint64 bytes = 0;
  guint64 failures = 0;
  gint64 deadline;
  gint64 start;
  gint64 end;
  double cpu_start;
  double workers_start;
  double cpu;
  double workers_cpu;
  double seconds;

  cpu_start = bench_cpu_seconds (NULL);
  workers_start = bench_cpu_seconds ("worker");
  start = g_get_monotonic_time ();
  deadline = start + WINDOW_S * G_USEC_PER_SEC;
  for (guint i = 0; i < N_THREADS; i++)
    {
      drivers[i].port = symfonic_server_get_port (server);
      drivers[i].n_connections = N_CLIENTS / N_THREADS;
      drivers[i].deadline_us = deadline;
      drivers[i].request = bench_post_request ("/typed", "short");
      drivers[i].headers_ms = g_array_new (FALSE, FALSE, sizeof (double));
      drivers[i].first_ms = g_array_new (FALSE, FALSE, sizeof (double));
      drivers[i].last_ms = g_array_new (FALSE, FALSE, sizeof (double));
      threads[i] = g_thread_new ("bench-driver", driver_thread, &drivers[i]);
    }

  for (guint i = 0; i < N_THREADS; i++)
    g_thread_join (threads[i]);
  end = g_get_monotonic_time ();
  seconds = (end - start) / 1e6;
  cpu = bench_cpu_seconds (NULL) - cpu_start;
  workers_cpu = bench_cpu_seconds ("worker") - workers_start;

  for (guint i = 0; i < N_THREADS; i++)
    {
      requests += drivers[i].requests;
      frames += drivers[i].frames;
      bytes += drivers[i].bytes;
      failures += drivers[i].failures;
      g_array_append_vals (headers_ms, drivers[i].headers_ms->data, drivers[i].headers_ms->len);
      g_array_append_vals (first_ms, drivers[i].first_ms->data, drivers[i].first_ms->len);
      g_array_append_vals (last_ms, drivers[i].last_ms->data, drivers[i].last_ms->len);
      g_array_unref (drivers[i].headers_ms);
      g_array_unref (drivers[i].first_ms);
      g_array_unref (drivers[i].last_ms);
      g_free (drivers[i].request);
    }

  g_print ("requests: workers=%u, %u keep-alive clients, %d s: %" G_GUINT64_FORMAT " requests = %.0f req/s, "
           "%.0fk frames/s, %.1f MB/s (%.0f frames, %.1f kB per response), failed %" G_GUINT64_FORMAT "\n",
           workers, N_CLIENTS, WINDOW_S, requests, (double) requests / WINDOW_S,
           frames / 1e3 / WINDOW_S, bytes / 1e6 / WINDOW_S,
           requests > 0 ? (double) frames / requests : 0.0,
           requests > 0 ? bytes / 1e3 / requests : 0.0, failures);
  g_print ("requests: workers=%u, time to headers p50 %.2f ms, p99 %.2f ms; to first frame p50 %.2f ms, "
           "p99 %.2f ms; to last frame p50 %.2f ms, p99 %.2f ms\n",
           workers, bench_percentile (headers_ms, 0.5), bench_percentile (headers_ms, 0.99),
           bench_percentile (first_ms, 0.5), bench_percentile (first_ms, 0.99),
           bench_percentile (last_ms, 0.5), bench_percentile (last_ms, 0.99));
  g_print ("requests: workers=%u, CPU over %.1f s: server workers %.2f cores, clients %.2f cores\n",
           workers, seconds, workers_cpu / seconds, (cpu - workers_cpu) / seconds);

  symfonic_server_stop (server);
}

int
main (int    argc,
      char **argv)
{
  g_autofree char *dir = NULL;
  g_autofree char *pipeline = NULL;

  bench_init ();
  dir = bench_make_dir ();
  bench_write_transcript (dir, "short", N_DELTAS, DELTA_TEXT_LENGTH, 0, 0);
  pipeline = bench_replay_pipeline (dir, "short");

  run_case (pipeline, dir, 1);
  run_case (pipeline, dir, 2);

  bench_remove_dir (dir);

  return 0;
}
