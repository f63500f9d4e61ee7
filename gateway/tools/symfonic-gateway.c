/* symfonic-gateway.c: the server binary
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#ifdef __GLIBC__
# include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>
#include <glib/gi18n.h>
#include <glib-unix.h>

#include <symfonic.h>

#include "symfonic-locale-private.h"
#include "symfonic-log-writer-private.h"
#include "symfonic-service-private.h"

/* How long the main thread gets to come back once the drain is over: a
 * JavaScript hook that never returns holds it for good. */
#define MAIN_RETURN_GRACE_US (G_USEC_PER_SEC / 2)

/* The main thread runs the default main context, where JavaScript stages
 * run and pipelines (and their scripts) load: a stuck JavaScript hook
 * holds it. Stop signals are therefore taken on a thread of their own,
 * which drains and stops the server, so that the listener closes at once
 * and the process ends within drain-seconds whatever a stage does. A
 * reload loads scripts, so SIGHUP stays on the main thread; @lock keeps a
 * reload and the start of a drain apart. */
typedef struct
{
  SymfonicServer *server;
  GMainLoop      *loop;
  const char     *display;
  /* cancelled at a second stop signal: the drain ends streams at once */
  GCancellable   *hurry;
  gboolean        stopping;
  GMutex          lock;
  GCond           cond;
  /* the main thread's loop returned */
  gboolean        returned;
  GMainLoop      *stop_loop;
} Service;

/* On the stop thread: the server stops there, then the main thread is
 * asked to return; if it does not (a hook holds it), the process ends
 * without it. */
static void
drained_cb (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  Service *service = user_data;
  gint64 until = g_get_monotonic_time () + MAIN_RETURN_GRACE_US;
  gboolean returned;

  symfonic_server_drain_finish (SYMFONIC_SERVER (object), result, NULL);
  symfonic_server_stop (service->server);
  g_main_loop_quit (service->loop);

  g_mutex_lock (&service->lock);
  while (!service->returned && g_cond_wait_until (&service->cond, &service->lock, until))
    ;
  returned = service->returned;
  g_mutex_unlock (&service->lock);

  if (!returned)
    {
      g_printerr (_("symfonic-gateway: a stage still holds the main thread; exiting without it\n"));
      fflush (NULL);
      _exit (0);
    }
  g_main_loop_quit (service->stop_loop);
}

/* The first SIGTERM or SIGINT drains, the second ends the streams left. */
static gboolean
on_stop_signal (gpointer data)
{
  Service *service = data;

  if (service->stopping)
    {
      g_print (_("symfonic-gateway: ending the streams in flight\n"));
      g_cancellable_cancel (service->hurry);
      return G_SOURCE_CONTINUE;
    }

  /* a reload in progress ends first, and none starts after this */
  g_mutex_lock (&service->lock);
  service->stopping = TRUE;
  g_mutex_unlock (&service->lock);
  symfonic_service_notify ("STOPPING=1");
  g_print (_("symfonic-gateway: shutting down\n"));
  symfonic_server_drain_async (service->server, service->hurry, drained_cb, service);
  return G_SOURCE_CONTINUE;
}

static void
add_signal (int          signum,
            GSourceFunc  func,
            Service     *service)
{
  g_autoptr(GSource) source = g_unix_signal_source_new (signum);

  g_source_set_callback (source, func, service, NULL);
  g_source_attach (source, g_main_loop_get_context (service->stop_loop));
}

static gpointer
run_stop_thread (gpointer data)
{
  Service *service = data;

  g_main_context_push_thread_default (g_main_loop_get_context (service->stop_loop));
  g_main_loop_run (service->stop_loop);
  g_main_context_pop_thread_default (g_main_loop_get_context (service->stop_loop));

  return NULL;
}

/* SIGHUP: serve the pipeline file as it is now, or keep the running one if
 * it does not load. */
static gboolean
on_reload_signal (gpointer data)
{
  Service *service = data;
  g_autoptr(GError) error = NULL;
  g_autofree char *reloading = NULL;

  g_mutex_lock (&service->lock);
  if (service->stopping)
    {
      g_mutex_unlock (&service->lock);
      return G_SOURCE_CONTINUE;
    }

  reloading = g_strdup_printf ("RELOADING=1\nMONOTONIC_USEC=%" G_GINT64_FORMAT, g_get_monotonic_time ());
  symfonic_service_notify (reloading);
  if (symfonic_server_reload (service->server, symfonic_registry_get_default (), &error))
    g_print (_("symfonic-gateway: reloaded %s\n"), service->display);
  else
    g_printerr (_("symfonic-gateway: reload refused, still serving the previous pipeline: %s\n"),
                error->message);
  symfonic_service_notify ("READY=1");
  g_mutex_unlock (&service->lock);

  return G_SOURCE_CONTINUE;
}

/* glibc keeps what a burst of connections freed (in the arena of each
 * thread that allocated it) for reuse, so the process would stay at its
 * peak size long after the burst closed. The heap is this program's to
 * trim, not the library's: malloc_trim() gives every arena's free pages
 * back. It walks the heaps, and the server says so only after a large
 * drop, or seldom. */
static void
on_burst_closed (SymfonicServer *server,
                 gpointer        user_data)
{
#ifdef __GLIBC__
  malloc_trim (0);
#endif
}

/* Every stream holds a client's and an upstream's descriptor, and a soft
 * limit of 1,024 would cap the gateway far below what the hard limit
 * allows. Raised before the pipeline loads: sources size their connection
 * caps from it. */
static void
raise_descriptor_limit (void)
{
  struct rlimit limit;

  if (getrlimit (RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max)
    return;

  limit.rlim_cur = limit.rlim_max;
  if (setrlimit (RLIMIT_NOFILE, &limit) != 0)
    g_warning ("Cannot raise the open-file limit to %llu: %s",
               (unsigned long long) limit.rlim_max, g_strerror (errno));
}

/* GLib before 2.76 keeps what its slice allocator ever held in per-thread
 * magazines, about 15 KB for every stream of a past burst, and reads
 * G_SLICE before main() runs (fixed in 2.76, whose slices are always
 * malloc()'s). The gateway starts itself again with that allocator, so
 * memory goes back to the system after a burst; the process is the
 * binary's, so the library, whose host may be a Python or gjs program,
 * never does this. A build against 2.76 runs on 2.76 or later and leaves
 * this out; one against an older GLib asks the GLib it runs on. If the
 * restart fails it serves anyway. */
static void
prefer_malloc_slices (char *argv[])
{
#if !GLIB_CHECK_VERSION (2, 76, 0)
  if (glib_check_version (2, 76, 0) == NULL || g_getenv ("G_SLICE") != NULL)
    return;

  g_setenv ("G_SLICE", "always-malloc", TRUE);
  execv ("/proc/self/exe", argv);
  g_warning ("Cannot restart with G_SLICE=always-malloc: %s", g_strerror (errno));
#endif
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GFile) file = NULL;
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(SymfonicServer) server = NULL;
  g_autoptr(GMainLoop) loop = NULL;
  g_autoptr(GMainContext) stop_context = NULL;
  g_autoptr(GMainLoop) stop_loop = NULL;
  GThread *stop_thread;
  g_autoptr(GSocket) passed = NULL;
  g_autoptr(GCancellable) hurry = NULL;
  Service service;
  g_autofree char *pipeline_path = NULL;
  g_autofree char *listen = NULL;
  g_autofree char *uri = NULL;
  g_autofree char *display = NULL;
  g_autofree char *log_format = NULL;
  gboolean check = FALSE;
  gboolean connect = FALSE;
  gboolean allow_demo = FALSE;
  gboolean version = FALSE;
  int workers = 0;
  guint n_routes;
  const GOptionEntry entries[] = {
    { "pipeline", 'p', 0, G_OPTION_ARG_FILENAME, &pipeline_path, N_("The pipeline file to serve (default: the installed default pipeline)"), N_("FILE") },
    { "listen", 'l', 0, G_OPTION_ARG_STRING, &listen, N_("Serve on HOST:PORT instead of the pipeline's [gateway] listen"), N_("ADDR:PORT") },
    { "workers", 'w', 0, G_OPTION_ARG_INT, &workers, N_("Worker threads instead of the pipeline's [gateway] workers"), N_("N") },
    { "check", 0, 0, G_OPTION_ARG_NONE, &check, N_("Load and validate the pipeline, then exit"), NULL },
    { "connect", 0, 0, G_OPTION_ARG_NONE, &connect, N_("With --check: also ask each store whether it can serve (connects to a shared store)"), NULL },
    { "allow-demo-tokens", 0, 0, G_OPTION_ARG_NONE, &allow_demo, N_("Serve the published demo tokens on a non-loopback address too"), NULL },
    { "log-format", 0, 0, G_OPTION_ARG_STRING, &log_format, N_("Write the log to the journal, as JSON lines on stderr, or as text on stderr (default: the journal when stderr is the journal’s, text otherwise)"), N_("journal|json|text") },
    { "version", 0, 0, G_OPTION_ARG_NONE, &version, N_("Print the version and exit"), NULL },
    { NULL }
  };

  prefer_malloc_slices (argv);

  symfonic_locale_init ();

  context = g_option_context_new (_("[FILE]"));
  g_option_context_set_summary (context, _("Streaming API gateway for LLM agents: serves the pipeline FILE\n"
                                           "(or --pipeline FILE; default: the installed default pipeline)."));
  g_option_context_add_main_entries (context, entries, GETTEXT_PACKAGE);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("symfonic-gateway: %s\n", error->message);
      return 2;
    }

  /* first: from here on every line of stderr is in the chosen format */
  if (!symfonic_log_writer_install (log_format, &error))
    {
      g_printerr ("symfonic-gateway: %s\n", error->message);
      return 2;
    }

  /* `symfonic-gateway --check FILE`, as `nginx -t` users expect */
  if (argc == 2 && pipeline_path == NULL)
    pipeline_path = g_strdup (argv[1]);
  else if (argc > 1)
    {
      g_printerr ("symfonic-gateway: %s\n", _("give at most one pipeline file"));
      return 2;
    }

  if (version)
    {
      g_print ("symfonic-gateway %s\n", SYMFONIC_VERSION);
      return 0;
    }

  if (connect && !check)
    {
      g_printerr ("symfonic-gateway: %s\n", _("--connect goes with --check"));
      return 2;
    }

  if (workers < 0 || workers > 256)
    {
      g_printerr ("symfonic-gateway: %s\n", _("--workers must be between 1 and 256"));
      return 2;
    }

  raise_descriptor_limit ();

  if (!symfonic_registry_scan (symfonic_registry_get_default (), &error))
    {
      g_printerr ("symfonic-gateway: %s\n", error->message);
      return 1;
    }

  file = pipeline_path != NULL ? g_file_new_for_commandline_arg (pipeline_path)
                               : symfonic_pipeline_get_default_file ();
  display = g_file_get_parse_name (file);
  pipeline = symfonic_pipeline_new_from_file (symfonic_registry_get_default (), file, &error);
  if (pipeline == NULL)
    {
      /* every problem of the file and of the files it names, one per
       * line, each naming its file, line, group and key: the lines an
       * editor or a script reads as they are */
      g_printerr ("%s\n", error->message);
      return 1;
    }

  passed = symfonic_service_take_listen_socket (&error);
  if (error != NULL)
    {
      g_printerr ("symfonic-gateway: %s\n", error->message);
      return 1;
    }

  server = symfonic_server_new (pipeline);
  g_signal_connect (server, "burst-closed", G_CALLBACK (on_burst_closed), NULL);
  symfonic_server_set_listen_socket (server, passed);
  if (listen != NULL)
    symfonic_server_set_listen (server, listen);
  if (workers > 0)
    symfonic_server_set_workers (server, workers);
  symfonic_server_set_allow_demo_credentials (server, allow_demo);

  if (check)
    {
      if (!symfonic_server_check (server, &error))
        {
          g_printerr ("symfonic-gateway: %s: %s\n", display, error->message);
          return 1;
        }
      /* only when asked: --check validates a file on a machine that may
       * not reach the stores it names */
      if (connect && !symfonic_pipeline_check_stores (pipeline, NULL, &error))
        {
          g_printerr ("symfonic-gateway: %s: %s\n", display, error->message);
          return 1;
        }
      n_routes = symfonic_pipeline_get_n_routes (pipeline);
      g_print (ngettext ("%s: OK, %u route\n", "%s: OK, %u routes\n", n_routes), display, n_routes);
      return 0;
    }

  if (!symfonic_server_start (server, &error))
    {
      g_printerr ("symfonic-gateway: %s\n", error->message);
      return 1;
    }

  /* the handlers first: whoever reads the banner may signal at once */
  loop = g_main_loop_new (NULL, FALSE);
  hurry = g_cancellable_new ();
  stop_context = g_main_context_new ();
  stop_loop = g_main_loop_new (stop_context, FALSE);
  service = (Service) { server, loop, display, hurry, FALSE };
  g_mutex_init (&service.lock);
  g_cond_init (&service.cond);
  service.stop_loop = stop_loop;
  add_signal (SIGINT, on_stop_signal, &service);
  add_signal (SIGTERM, on_stop_signal, &service);
  g_unix_signal_add (SIGHUP, on_reload_signal, &service);
  stop_thread = g_thread_new ("symfonic-stop", run_stop_thread, &service);

  uri = symfonic_server_dup_uri (server);
  g_print (_("symfonic-gateway %s serving %s on %s\n"), SYMFONIC_VERSION, display, uri);
  symfonic_service_notify ("READY=1");
  g_main_loop_run (loop);

  g_mutex_lock (&service.lock);
  service.returned = TRUE;
  g_cond_signal (&service.cond);
  g_mutex_unlock (&service.lock);
  g_thread_join (stop_thread);
  g_mutex_clear (&service.lock);
  g_cond_clear (&service.cond);

  return 0;
}
