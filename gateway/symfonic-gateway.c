/* symfonic-gateway.c: the server binary
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <locale.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>
#include <glib/gi18n.h>
#include <glib-unix.h>

#include <symfonic.h>

#include "symfonic-service-private.h"

typedef struct
{
  SymfonicServer *server;
  GMainLoop      *loop;
  const char     *display;
  /* cancelled at a second stop signal: the drain ends streams at once */
  GCancellable   *hurry;
  gboolean        stopping;
} Service;

static void
drained_cb (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  Service *service = user_data;

  symfonic_server_drain_finish (SYMFONIC_SERVER (object), result, NULL);
  g_main_loop_quit (service->loop);
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

  service->stopping = TRUE;
  symfonic_service_notify ("STOPPING=1");
  g_print (_("symfonic-gateway: shutting down\n"));
  symfonic_server_drain_async (service->server, service->hurry, drained_cb, service);
  return G_SOURCE_CONTINUE;
}

/* SIGHUP: serve the pipeline file as it is now, or keep the running one if
 * it does not load. */
static gboolean
on_reload_signal (gpointer data)
{
  Service *service = data;
  g_autoptr(GError) error = NULL;
  g_autofree char *reloading = NULL;

  if (service->stopping)
    return G_SOURCE_CONTINUE;

  reloading = g_strdup_printf ("RELOADING=1\nMONOTONIC_USEC=%" G_GINT64_FORMAT, g_get_monotonic_time ());
  symfonic_service_notify (reloading);
  if (symfonic_server_reload (service->server, symfonic_registry_get_default (), &error))
    g_print (_("symfonic-gateway: reloaded %s\n"), service->display);
  else
    g_printerr (_("symfonic-gateway: reload refused, still serving the previous pipeline: %s\n"),
                error->message);
  symfonic_service_notify ("READY=1");

  return G_SOURCE_CONTINUE;
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
 * G_SLICE before main() runs. The gateway starts itself again with the
 * allocator 2.76 and later always use, so memory goes back to the system
 * after a burst. If that fails it serves anyway. */
static void
prefer_malloc_slices (char *argv[])
{
  if (glib_check_version (2, 76, 0) == NULL || g_getenv ("G_SLICE") != NULL)
    return;

  g_setenv ("G_SLICE", "always-malloc", TRUE);
  execv ("/proc/self/exe", argv);
  g_warning ("Cannot restart with G_SLICE=always-malloc: %s", g_strerror (errno));
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
  g_autoptr(GSocket) passed = NULL;
  g_autoptr(GCancellable) hurry = NULL;
  Service service;
  g_autofree char *pipeline_path = NULL;
  g_autofree char *listen = NULL;
  g_autofree char *uri = NULL;
  g_autofree char *display = NULL;
  gboolean check = FALSE;
  gboolean allow_demo = FALSE;
  gboolean version = FALSE;
  int workers = 0;
  const GOptionEntry entries[] = {
    { "pipeline", 'p', 0, G_OPTION_ARG_FILENAME, &pipeline_path, N_("The pipeline file to serve (default: the installed default pipeline)"), N_("FILE") },
    { "listen", 'l', 0, G_OPTION_ARG_STRING, &listen, N_("Serve on HOST:PORT instead of the pipeline's [gateway] listen"), N_("ADDR:PORT") },
    { "workers", 'w', 0, G_OPTION_ARG_INT, &workers, N_("Worker threads instead of the pipeline's [gateway] workers"), N_("N") },
    { "check", 0, 0, G_OPTION_ARG_NONE, &check, N_("Load and validate the pipeline, then exit"), NULL },
    { "allow-demo-tokens", 0, 0, G_OPTION_ARG_NONE, &allow_demo, N_("Serve the published demo tokens on a non-loopback address too"), NULL },
    { "version", 0, 0, G_OPTION_ARG_NONE, &version, N_("Print the version and exit"), NULL },
    { NULL }
  };

  prefer_malloc_slices (argv);

  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);

  context = g_option_context_new (_("[FILE]"));
  g_option_context_set_summary (context, _("Streaming API gateway for LLM agents: serves the pipeline FILE\n"
                                           "(or --pipeline FILE; default: the installed default pipeline)."));
  g_option_context_add_main_entries (context, entries, GETTEXT_PACKAGE);
  if (!g_option_context_parse (context, &argc, &argv, &error))
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
      g_printerr ("symfonic-gateway: %s\n", error->message);
      return 1;
    }

  passed = symfonic_service_take_listen_socket (&error);
  if (error != NULL)
    {
      g_printerr ("symfonic-gateway: %s\n", error->message);
      return 1;
    }

  server = symfonic_server_new (pipeline);
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
      g_print (_("%s: OK, %u routes\n"), display, symfonic_pipeline_get_n_routes (pipeline));
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
  service = (Service) { server, loop, display, hurry, FALSE };
  g_unix_signal_add (SIGINT, on_stop_signal, &service);
  g_unix_signal_add (SIGTERM, on_stop_signal, &service);
  g_unix_signal_add (SIGHUP, on_reload_signal, &service);

  uri = symfonic_server_dup_uri (server);
  g_print (_("symfonic-gateway %s serving %s on %s\n"), SYMFONIC_VERSION, display, uri);
  symfonic_service_notify ("READY=1");
  g_main_loop_run (loop);

  symfonic_server_stop (server);

  return 0;
}
