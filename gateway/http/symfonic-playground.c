/* symfonic-playground.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <glib/gi18n-lib.h>

#include "symfonic-config-file.h"
#include "symfonic-error.h"
#include "symfonic-exchange-private.h"
#include "symfonic-paths-private.h"
#include "symfonic-playground-private.h"
#include "symfonic-route.h"

/* `[gateway] playground=true` serves one static page, its script and its
 * style, from the `playground` folder of the data (the source tree's from
 * a build, the installed one after `meson install`), and a list of the
 * pipeline's typed and runs routes for its route picker. The page talks
 * to the gateway's own routes with fetch(), as any client does: it holds
 * no secret and gets no privilege. The files are read once per process,
 * when a server first checks a pipeline that asks for them, and served
 * from memory. */

#define PLAYGROUND_PATH "/playground"
#define ROUTES_PATH PLAYGROUND_PATH "/routes.json"

/* What the page needs and nothing more, from its own origin only: its
 * script, its style, and fetch() to the routes. No inline script or style,
 * no frame around it, no form that leaves. */
#define CONTENT_SECURITY_POLICY \
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " \
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

typedef struct
{
  const char *name;
  const char *content_type;
} PlaygroundFile;

static const PlaygroundFile files[] = {
  { "index.html", "text/html; charset=utf-8" },
  { "playground.js", "text/javascript; charset=utf-8" },
  { "playground.css", "text/css; charset=utf-8" },
};

/* set once, all together, and read without a lock from then on */
static GBytes *contents[G_N_ELEMENTS (files)];

/* Reads the page's files once per process. A missing or unreadable file
 * (a broken install) is an error, so that a gateway told to serve the
 * playground refuses to start rather than answer 404 later. */
gboolean
symfonic_playground_load (GError **error)
{
  static GMutex lock;
  GBytes *loaded[G_N_ELEMENTS (files)] = { NULL, };
  G_GNUC_UNUSED g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&lock);

  if (g_atomic_pointer_get (&contents[0]) != NULL)
    return TRUE;

  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *path = g_build_filename (symfonic_paths_data_dir (), "playground", files[i].name, NULL);
      g_autoptr(GFile) file = g_file_new_for_path (path);
      g_autoptr(GError) local_error = NULL;
      char *data = NULL;
      gsize length;

      if (!symfonic_config_file_load (file, SYMFONIC_CONFIG_FILE_MAX_SIZE, &data, &length, &local_error))
        {
          g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                       _("[gateway] playground: the page cannot be served: %s"), local_error->message);
          for (guint j = 0; j < i; j++)
            g_bytes_unref (loaded[j]);
          return FALSE;
        }
      loaded[i] = g_bytes_new_take (data, length);
    }

  /* the first last: a reader that sees it sees the others */
  for (guint i = G_N_ELEMENTS (files); i > 0; i--)
    g_atomic_pointer_set (&contents[i - 1], loaded[i - 1]);

  return TRUE;
}

/* Whether @path is the playground's, on a pipeline that serves it. */
gboolean
symfonic_playground_serves (SymfonicPipeline *pipeline,
                            const char       *path)
{
  gboolean playground = FALSE;

  if (!g_str_has_prefix (path, PLAYGROUND_PATH) ||
      (path[strlen (PLAYGROUND_PATH)] != '\0' && path[strlen (PLAYGROUND_PATH)] != '/'))
    return FALSE;

  g_object_get (pipeline, "playground", &playground, NULL);
  return playground;
}

static void
respond_error (SoupServerMessage *message,
               SymfonicError      code,
               const char        *detail)
{
  g_autoptr(GError) error = g_error_new_literal (SYMFONIC_ERROR, code, detail);
  g_autoptr(SymfonicErrorFrame) frame = symfonic_error_frame_new_for_error (error);

  symfonic_exchange_respond_error (message, NULL, frame);
}

/* The routes the page may stream from: the typed ones, and whether each
 * keeps its runs, and the runs routes a dropped run is read again from. */
static GBytes *
list_routes (SymfonicPipeline *pipeline)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  gsize length;
  char *text;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "typed");
  json_builder_begin_array (builder);
  for (guint i = 0; i < symfonic_pipeline_get_n_routes (pipeline); i++)
    {
      SymfonicRoute *route = symfonic_pipeline_get_route (pipeline, i);

      if (symfonic_route_get_kind (route) != SYMFONIC_ROUTE_KIND_TYPED)
        continue;
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "name");
      json_builder_add_string_value (builder, symfonic_route_get_name (route));
      json_builder_set_member_name (builder, "path");
      json_builder_add_string_value (builder, symfonic_route_get_path (route));
      json_builder_set_member_name (builder, "resume");
      json_builder_add_boolean_value (builder, symfonic_route_get_resume (route));
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_set_member_name (builder, "runs");
  json_builder_begin_array (builder);
  for (guint i = 0; i < symfonic_pipeline_get_n_routes (pipeline); i++)
    {
      SymfonicRoute *route = symfonic_pipeline_get_route (pipeline, i);

      if (symfonic_route_get_kind (route) == SYMFONIC_ROUTE_KIND_RUNS)
        json_builder_add_string_value (builder, symfonic_route_get_path (route));
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  text = json_generator_to_data (generator, &length);

  return g_bytes_new_take (text, length);
}

/* Answers a GET or HEAD of the playground's paths on a pipeline that
 * serves it (symfonic_playground_serves()). */
void
symfonic_playground_respond (SoupServerMessage *message,
                             SymfonicPipeline  *pipeline,
                             const char        *path)
{
  const char *method = soup_server_message_get_method (message);
  SoupMessageHeaders *headers = soup_server_message_get_response_headers (message);
  g_autoptr(GBytes) body = NULL;
  const char *content_type = NULL;
  const char *name = NULL;

  if (method != SOUP_METHOD_GET && method != SOUP_METHOD_HEAD)
    {
      soup_message_headers_replace (headers, "Allow", "GET, HEAD");
      respond_error (message, SYMFONIC_ERROR_METHOD_NOT_ALLOWED, "Use GET");
      return;
    }

  if (g_str_equal (path, ROUTES_PATH))
    {
      body = list_routes (pipeline);
      content_type = "application/json";
    }
  else
    {
      if (g_str_equal (path, PLAYGROUND_PATH) || g_str_equal (path, PLAYGROUND_PATH "/"))
        name = "index.html";
      else
        name = path + strlen (PLAYGROUND_PATH "/");

      for (guint i = 0; i < G_N_ELEMENTS (files); i++)
        {
          GBytes *bytes = g_atomic_pointer_get (&contents[i]);

          if (bytes != NULL && g_str_equal (name, files[i].name))
            {
              body = g_bytes_ref (bytes);
              content_type = files[i].content_type;
            }
        }
    }

  if (body == NULL)
    {
      respond_error (message, SYMFONIC_ERROR_NOT_FOUND, "No route serves this path");
      return;
    }

  soup_message_headers_replace (headers, "Content-Security-Policy", CONTENT_SECURITY_POLICY);
  soup_message_headers_replace (headers, "X-Content-Type-Options", "nosniff");
  soup_message_headers_replace (headers, "Referrer-Policy", "no-referrer");
  soup_message_headers_replace (headers, "Cache-Control", "no-cache");
  soup_message_headers_replace (headers, "Content-Type", content_type);
  soup_server_message_set_status (message, SOUP_STATUS_OK, NULL);
  soup_message_body_append_bytes (soup_server_message_get_response_body (message), body);
}
