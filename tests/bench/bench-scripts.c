/* bench-scripts.c: what a script stage costs per event
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The gateway binary serves the default stages (auth, rate-limit, budget,
 * release-line, extraction, citation, error-map; the limits set so that
 * they never refuse) on several typed routes of one replay source: /c with
 * those stages only, /py with a no-op Python stage added (scripts/noop-py.py)
 * and /js with a no-op JavaScript stage (scripts/noop-js.js) when the
 * JavaScript loader is built. A no-op stage passes every event on as it
 * came, so what it adds is the price of running a script stage at all: the
 * hop to the interpreter's thread and back, and the call into the script.
 *
 * 64 clients at once each read a number of streams of a fixed answer of N
 * text deltas, one route at a time; rounds alternate the routes, so that
 * drift hits all of them alike. Printed, by the median round: the gateway
 * process's CPU time (all its threads, from /proc) per upstream event, the
 * difference to /c, which is what the script stage costs, and streams/s.
 * The mixed case runs /c and a script route at once, half the clients
 * each; the CPU that /c's events took is what is left of the process's
 * once the script route's events are charged at their own figure, and
 * must match /c alone within noise: C stages do not pay for a script
 * stage on another route. Its streams/s are /c's streams over the time its
 * own clients took.
 *
 * Every stream must be a 200 ending with a terminal that carries the same
 * text as a first stream of /c (citation removed the answer's tags), or
 * the round is not a figure and the benchmark fails.
 */
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>

#include <gio/gio.h>

#include "bench-common.h"

#define N_CLIENTS 64
#define DELTA_TEXT_LENGTH 12
#define TAG_EVERY 20

typedef struct
{
  guint events;
  guint streams_per_client;
  guint rounds;
} Settings;

typedef struct
{
  guint16        port;
  const char    *path;
  guint          n_streams;
  gsize          text_length;
  guint          complete;
  gint64         end_us;
  GError        *error;
} Client;

/* The figures of each round: CPU per event, streams per second. */
typedef struct
{
  const char *name;
  GArray     *cost;
  GArray     *rate;
} Case;

/* A script language, its no-op stage on a route of its own. */
typedef struct
{
  const char *path;
  const char *name;
  const char *loader;
  const char *stage;
  const char *beside_name;
  gboolean    built;
  Case        alone;
  /* /c, while this route runs beside it */
  Case        beside;
} Language;

static char *
post_request (const char *path)
{
  static const char body[] = "{\"query\":\"benchmark\"}";

  return g_strdup_printf ("POST %s HTTP/1.1\r\n"
                          "Host: 127.0.0.1\r\n"
                          "Authorization: Bearer demo-token-alice\r\n"
                          "X-Tenant-ID: acme\r\n"
                          "Content-Type: application/json\r\n"
                          "Content-Length: %zu\r\n"
                          "\r\n"
                          "%s",
                          path, strlen (body), body);
}

/* Reads its streams one after the other on one kept-alive connection. */
static gpointer
client_thread (gpointer data)
{
  Client *client = data;
  g_autofree char *request = post_request (client->path);
  g_autoptr(GSocket) socket = NULL;
  BenchResponse response;

  socket = bench_connect (client->port, 0, &client->error);
  if (socket == NULL)
    return NULL;

  bench_response_init (&response);
  for (guint i = 0; i < client->n_streams && client->error == NULL; i++)
    {
      bench_response_reset (&response);
      if (bench_send_all (socket, request, strlen (request), &client->error) &&
          bench_read_response (socket, &response, &client->error) &&
          response.status == 200 &&
          bench_response_terminal_text_length (&response) == (gssize) client->text_length)
        client->complete++;
    }
  bench_response_clear (&response);
  client->end_us = g_get_monotonic_time ();

  return NULL;
}

/* CPU time of process @pid, all its threads, in seconds: the sum of their
 * schedstat run times, which are nanoseconds where /proc's stat counts
 * ticks of 10 ms. */
static double
process_cpu_seconds (GPid pid)
{
  g_autofree char *tasks_path = g_strdup_printf ("/proc/%d/task", (int) pid);
  g_autoptr(GDir) tasks = g_dir_open (tasks_path, 0, NULL);
  const char *tid;
  double ns = 0;

  if (tasks == NULL)
    g_error ("Cannot read %s", tasks_path);
  while ((tid = g_dir_read_name (tasks)) != NULL)
    {
      g_autofree char *path = g_build_filename (tasks_path, tid, "schedstat", NULL);
      g_autofree char *schedstat = NULL;

      if (g_file_get_contents (path, &schedstat, NULL, NULL))
        ns += g_ascii_strtod (schedstat, NULL);
    }

  return ns / 1e9;
}

/* What a round cost the gateway, and of each route the streams and the
 * seconds until its last client was done. */
typedef struct
{
  double  cpu;
  double  seconds[2];
  guint   streams[2];
} RoundResult;

/* @n_paths routes at once, the clients shared evenly; fails the benchmark
 * if a stream did not end as it should. */
static RoundResult
run_round (GPid         pid,
           guint16      port,
           const char  *paths[],
           guint        n_paths,
           gsize        text_length,
           guint        streams_per_client)
{
  Client clients[N_CLIENTS] = { 0 };
  GThread *threads[N_CLIENTS];
  RoundResult result = { 0 };
  double cpu_start = process_cpu_seconds (pid);
  gint64 start = g_get_monotonic_time ();

  for (guint i = 0; i < N_CLIENTS; i++)
    {
      clients[i].port = port;
      clients[i].path = paths[i % n_paths];
      clients[i].n_streams = streams_per_client;
      clients[i].text_length = text_length;
      threads[i] = g_thread_new ("bench-client", client_thread, &clients[i]);
    }
  for (guint i = 0; i < N_CLIENTS; i++)
    {
      g_thread_join (threads[i]);
      if (clients[i].error != NULL)
        g_error ("%s: %s", clients[i].path, clients[i].error->message);
      if (clients[i].complete != streams_per_client)
        g_error ("%s: %u of %u streams did not end with the whole answer (%zu B)",
                 clients[i].path, streams_per_client - clients[i].complete, streams_per_client, text_length);
      result.streams[i % n_paths] += clients[i].complete;
      result.seconds[i % n_paths] = MAX (result.seconds[i % n_paths], (clients[i].end_us - start) / 1e6);
    }
  result.cpu = process_cpu_seconds (pid) - cpu_start;

  return result;
}

static double
per_event_us (double cpu,
              guint  streams,
              guint  events)
{
  return cpu * 1e6 / ((double) streams * events);
}

/* The length of the terminal's text of one stream of /c. */
static gsize
answer_length (guint16 port)
{
  g_autofree char *request = post_request ("/c");
  g_autoptr(GSocket) socket = NULL;
  g_autoptr(GError) error = NULL;
  BenchResponse response;
  gssize length;

  socket = bench_connect (port, 0, &error);
  bench_response_init (&response);
  if (socket == NULL || !bench_send_all (socket, request, strlen (request), &error) ||
      !bench_read_response (socket, &response, &error))
    g_error ("/c: %s", error->message);
  length = bench_response_terminal_text_length (&response);
  if (response.status != 200 || length <= 0)
    g_error ("/c: answered %u without a terminal", response.status);
  bench_response_clear (&response);

  return length;
}

static guint16
free_port (void)
{
  g_autoptr(GSocket) socket = NULL;
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) any = g_inet_socket_address_new (loopback, 0);
  g_autoptr(GSocketAddress) bound = NULL;
  g_autoptr(GError) error = NULL;

  socket = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &error);
  if (socket == NULL || !g_socket_bind (socket, any, FALSE, &error) ||
      (bound = g_socket_get_local_address (socket, &error)) == NULL)
    g_error ("Cannot pick a port: %s", error->message);

  return g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
}

static char *
write_pipeline (const char *dir,
                guint16     port,
                Language   *languages,
                guint       n_languages)
{
  static const char default_stages[] = "auth;rate-limit;budget;release-line;extraction;citation;";
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  char *path = g_build_filename (dir, "bench.pipeline", NULL);

  g_string_append_printf (text,
                          "[gateway]\n"
                          "listen=127.0.0.1:%u\n"
                          "workers=0\n"
                          "plugin-path=%s\n"
                          "\n[route:c]\n"
                          "path=/c\n"
                          "kind=typed\n"
                          "source=replay\n"
                          "stages=%serrors\n",
                          port, BENCH_SCRIPTS_DIR, default_stages);
  /* the script stage goes where a user's own would: after the stages
   * that shape the answer, before the error map */
  for (guint i = 0; i < n_languages; i++)
    {
      if (languages[i].built)
        g_string_append_printf (text,
                                "\n[route:%s]\n"
                                "path=%s\n"
                                "kind=typed\n"
                                "source=replay\n"
                                "stages=%s%s;errors\n"
                                "\n[stage:%s]\n"
                                "type=%s\n",
                                languages[i].stage, languages[i].path, default_stages,
                                languages[i].stage, languages[i].stage, languages[i].stage);
    }
  g_string_append_printf (text,
                          "\n[source:replay]\n"
                          "type=replay\n"
                          "transcripts=%s\n"
                          "default-transcript=answer\n"
                          "time-scale=0\n"
                          "\n[stage:auth]\n"
                          "type=auth\n"
                          "tokens-file=%s/demo-tokens.ini\n"
                          "\n# metering stays in the path but never refuses\n"
                          "[stage:rate-limit]\n"
                          "type=rate-limit\n"
                          "key=tenant-principal\n"
                          "rate=1000000\n"
                          "burst=1000000\n"
                          "\n[stage:budget]\n"
                          "type=budget\n"
                          "tokens-per-window=1000000000000000\n"
                          "window-seconds=60\n"
                          "reserve-tokens=100000\n"
                          "\n[stage:release-line]\n"
                          "type=release-line\n"
                          "\n[stage:extraction]\n"
                          "type=extraction\n"
                          "\n[stage:citation]\n"
                          "type=citation\n"
                          "\n[stage:errors]\n"
                          "type=error-map\n"
                          "table=%s/error-map.ini\n",
                          dir, BENCH_DATA_DIR, BENCH_DATA_DIR);

  if (!g_file_set_contents (path, text->str, text->len, &error))
    g_error ("Cannot write %s: %s", path, error->message);

  return path;
}

static void
end_with_parent (gpointer data)
{
  prctl (PR_SET_PDEATHSIG, SIGTERM);
}

/* The gateway of this build, with the typelib its scripts import. */
static GSubprocess *
spawn_gateway (const char *pipeline,
               guint16     port)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);
  const char *typelibs = g_getenv ("GI_TYPELIB_PATH");
  g_autofree char *search = NULL;
  g_autoptr(GSubprocess) gateway = NULL;
  g_autoptr(GError) error = NULL;

  search = typelibs != NULL ? g_strconcat (BENCH_BUILD_DIR "/gateway:", typelibs, NULL)
                            : g_strdup (BENCH_BUILD_DIR "/gateway");
  g_subprocess_launcher_setenv (launcher, "GI_TYPELIB_PATH", search, TRUE);
  /* a benchmark that fails ends its gateway too */
  g_subprocess_launcher_set_child_setup (launcher, end_with_parent, NULL, NULL);
  gateway = g_subprocess_launcher_spawn (launcher, &error,
                                         BENCH_BUILD_DIR "/gateway/symfonic-gateway",
                                         "--pipeline", pipeline, NULL);
  if (gateway == NULL)
    g_error ("Cannot start the gateway: %s", error->message);

  for (guint i = 0; i < 200; i++)
    {
      g_autoptr(GSocket) socket = bench_connect (port, 0, NULL);

      if (socket != NULL)
        return g_steal_pointer (&gateway);
      /* gone: GLib reaped it */
      if (g_subprocess_get_identifier (gateway) == NULL)
        break;
      g_usleep (50 * 1000);
    }
  g_subprocess_force_exit (gateway);
  g_error ("The gateway did not listen on port %u within 10 s", port);
}

static void
case_add (Case   *self,
          double  cost,
          double  rate)
{
  g_array_append_val (self->cost, cost);
  g_array_append_val (self->rate, rate);
}

/* The median round's figures, and their difference to /c's. */
static void
case_print (Case   *self,
            double  baseline)
{
  double cost = bench_percentile (self->cost, 0.5);

  g_print ("scripts: %-14s %6.2f us/event (rounds %.2f-%.2f), %+6.2f us/event over /c; %5.0f streams/s\n",
           self->name, cost,
           g_array_index (self->cost, double, 0),
           g_array_index (self->cost, double, self->cost->len - 1),
           cost - baseline, bench_percentile (self->rate, 0.5));
}

static void
case_init (Case       *self,
           const char *name)
{
  self->name = name;
  self->cost = g_array_new (FALSE, FALSE, sizeof (double));
  self->rate = g_array_new (FALSE, FALSE, sizeof (double));
}

static void
case_clear (Case *self)
{
  g_array_unref (self->cost);
  g_array_unref (self->rate);
}

/* One round of @language: its route alone, then beside /c. */
static void
run_language (Language    *language,
              GPid         pid,
              guint16      port,
              Settings    *settings,
              gsize        text_length,
              gboolean     warm_up)
{
  const char *alone_path[] = { language->path };
  const char *both[] = { "/c", language->path };
  RoundResult alone = run_round (pid, port, alone_path, 1, text_length, settings->streams_per_client);
  RoundResult together = run_round (pid, port, both, 2, text_length, settings->streams_per_client);
  double cost;
  double c_cpu;

  if (warm_up)
    return;

  cost = per_event_us (alone.cpu, alone.streams[0], settings->events);
  case_add (&language->alone, cost, alone.streams[0] / alone.seconds[0]);
  /* the script route's events are charged at the figure it just had
   * alone; what is left is /c's */
  c_cpu = together.cpu - cost / 1e6 * together.streams[1] * settings->events;
  case_add (&language->beside, per_event_us (c_cpu, together.streams[0], settings->events),
            together.streams[0] / together.seconds[0]);
}

int
main (int    argc,
      char **argv)
{
  Settings settings = { 200, 8, 5 };
  gboolean smoke = FALSE;
  GOptionEntry entries[] = {
    { "events", 0, 0, G_OPTION_ARG_INT, &settings.events, "Text deltas of the answer (default 200)", "N" },
    { "streams", 0, 0, G_OPTION_ARG_INT, &settings.streams_per_client,
      "Streams each of the 64 clients reads per round (default 8)", "N" },
    { "rounds", 0, 0, G_OPTION_ARG_INT, &settings.rounds, "Rounds (default 5)", "N" },
    { "smoke", 0, 0, G_OPTION_ARG_NONE, &smoke, "A run of seconds, to see that it works", NULL },
    G_OPTION_ENTRY_NULL
  };
  Language languages[] = {
    { "/py", "Python", "python", "noop-py", "/c beside /py" },
    { "/js", "JavaScript", "gjs", "noop-js", "/c beside /js" },
  };
  g_autoptr(GOptionContext) options = g_option_context_new ("- what a no-op script stage costs per event");
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) gateway = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *pipeline = NULL;
  Case c;
  double baseline;
  gsize text_length;
  GPid pid;
  guint16 port;

  g_option_context_add_main_entries (options, entries, NULL);
  if (!g_option_context_parse (options, &argc, &argv, &error))
    {
      g_printerr ("%s\n", error->message);
      return 2;
    }
  if (smoke)
    settings = (Settings) { 50, 2, 1 };
  if (settings.events == 0 || settings.streams_per_client == 0 || settings.rounds == 0)
    {
      g_printerr ("--events, --streams and --rounds must be at least 1\n");
      return 2;
    }

  case_init (&c, "/c");
  for (guint i = 0; i < G_N_ELEMENTS (languages); i++)
    {
      g_autofree char *file = g_strdup_printf ("libsymfonic-%s.so", languages[i].loader);
      g_autofree char *loader = g_build_filename (BENCH_BUILD_DIR, "plugins", file, NULL);

      languages[i].built = g_file_test (loader, G_FILE_TEST_EXISTS);
      if (!languages[i].built)
        g_print ("scripts: %s skipped: the %s loader (%s) is not built\n",
                 languages[i].path, languages[i].name, file);
      case_init (&languages[i].alone, languages[i].path);
      case_init (&languages[i].beside, languages[i].beside_name);
    }

  dir = bench_make_dir ();
  bench_write_transcript (dir, "answer", settings.events, DELTA_TEXT_LENGTH, TAG_EVERY, 0);
  port = free_port ();
  pipeline = write_pipeline (dir, port, languages, G_N_ELEMENTS (languages));
  gateway = spawn_gateway (pipeline, port);
  pid = (GPid) g_ascii_strtoll (g_subprocess_get_identifier (gateway), NULL, 10);
  text_length = answer_length (port);

  g_print ("scripts: %u clients at once, %u streams each per round, %u text deltas per stream, %u rounds\n",
           N_CLIENTS, settings.streams_per_client, settings.events, settings.rounds);

  /* round 0 warms up the interpreters, caches and allocators */
  for (guint round = 0; round <= settings.rounds; round++)
    {
      const char *c_path[] = { "/c" };
      RoundResult alone = run_round (pid, port, c_path, 1, text_length, settings.streams_per_client);

      if (round > 0)
        case_add (&c, per_event_us (alone.cpu, alone.streams[0], settings.events),
                  alone.streams[0] / alone.seconds[0]);
      for (guint i = 0; i < G_N_ELEMENTS (languages); i++)
        {
          if (languages[i].built)
            run_language (&languages[i], pid, port, &settings, text_length, round == 0);
        }
    }

  baseline = bench_percentile (c.cost, 0.5);
  case_print (&c, baseline);
  for (guint i = 0; i < G_N_ELEMENTS (languages); i++)
    {
      if (languages[i].built)
        {
          case_print (&languages[i].alone, baseline);
          case_print (&languages[i].beside, baseline);
        }
      case_clear (&languages[i].alone);
      case_clear (&languages[i].beside);
    }
  case_clear (&c);
  g_print ("scripts: targets: a Python stage adds <= 5 us/event, a JavaScript stage <= 15 us/event; "
           "/c beside a script route within noise of /c alone\n");

  g_subprocess_send_signal (gateway, SIGTERM);
  if (!g_subprocess_wait (gateway, NULL, &error))
    g_printerr ("gateway: %s\n", error->message);
  bench_remove_dir (dir);

  return 0;
}
