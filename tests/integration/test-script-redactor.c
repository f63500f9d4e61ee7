/* test-script-redactor.c: the Python e-mail redactor, loaded as a script
 * plugin, whatever way the answer is split
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The text is played as two deltas split at every byte offset, through a
 * real route; the deltas the client gets must add up to the redacted
 * text, none of them empty, the last address flushed at finish.
 */
#include <string.h>

#include <glib/gstdio.h>

#include "symfonic-test-support.h"

#define TEXT "mail bob@example.org, or x.y@a-b.co.uk"
#define REDACTED "mail [email], or [email]"

/* Loads the plugins, then the example folder's scripts, into the default
 * registry; %FALSE when the Python loader is not built (the scripts are
 * then not plugins). */
static gboolean
load_redactor (void)
{
  g_autofree char *folder = g_test_build_filename (G_TEST_DIST, "..", "plugins", "examples", "redactor", NULL);
  SymfonicRegistry *registry = symfonic_registry_get_default ();
  g_autoptr(GError) error = NULL;

  g_assert_true (symfonic_registry_scan (registry, &error));
  g_assert_true (symfonic_registry_load_directory (registry, folder, &error));
  g_assert_no_error (error);

  return symfonic_registry_lookup (registry, "email-redactor-py") != G_TYPE_INVALID;
}

static char *
write_splits (void)
{
  g_autofree char *dir = g_build_filename (g_get_user_cache_dir (), "splits", NULL);
  gsize length = strlen (TEXT);

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  for (gsize k = 0; k <= length; k++)
    {
      g_autofree char *name = g_strdup_printf ("split-%" G_GSIZE_FORMAT ".jsonl", k);
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_autofree char *text = g_strdup_printf ("{\"event\":\"TextDeltaEvent\",\"data\":{\"text\":\"%.*s\"}}\n"
                                               "{\"event\":\"TextDeltaEvent\",\"data\":{\"text\":\"%s\"}}\n",
                                               (int) k, TEXT, &TEXT[k]);
      g_autoptr(GError) error = NULL;

      g_assert_true (g_file_set_contents (path, text, -1, &error));
      g_assert_no_error (error);
    }

  return g_steal_pointer (&dir);
}

static void
test_python_redactor_splits (void)
{
  g_autoptr(SymfonicServer) server = NULL;
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autofree char *transcripts = NULL;
  g_autofree char *pipeline_text = NULL;
  g_autofree char *url = NULL;

  if (!load_redactor ())
    {
      g_test_skip ("the Python loader is not built");
      return;
    }

  transcripts = write_splits ();
  pipeline_text = g_strdup_printf ("[gateway]\n"
                                   "listen=127.0.0.1:8080\n"
                                   "workers=2\n"
                                   "\n"
                                   "[route:typed]\n"
                                   "path=" SYMFONIC_TEST_TYPED_PATH "\n"
                                   "kind=typed\n"
                                   "source=fixtures\n"
                                   "stages=redactor\n"
                                   "\n"
                                   "[source:fixtures]\n"
                                   "type=replay\n"
                                   "transcripts=%s\n"
                                   "default-transcript=split-0\n"
                                   "transcript-header=X-Symfonic-Transcript\n"
                                   "time-scale=0\n"
                                   "\n"
                                   "[stage:redactor]\n"
                                   "type=email-redactor-py\n",
                                   transcripts);
  server = symfonic_test_server_new (pipeline_text, transcripts, 2);
  url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);

  for (gsize k = 0; k <= strlen (TEXT); k++)
    {
      g_autofree char *name = g_strdup_printf ("split-%" G_GSIZE_FORMAT, k);
      g_autoptr(SymfonicTestStream) stream = symfonic_test_stream_post (session, url, "{\"query\":\"hi\"}",
                                                                        "X-Symfonic-Transcript", name, NULL);
      g_autoptr(GString) joined = g_string_new (NULL);

      symfonic_test_stream_wait_done (stream);
      g_assert_cmpuint (stream->status, ==, 200);
      for (guint i = 0; i < stream->frames->len; i++)
        {
          SymfonicTestFrame *frame = g_ptr_array_index (stream->frames, i);
          g_autoptr(JsonNode) data = NULL;
          const char *text;

          if (g_strcmp0 (frame->event, "TextDeltaEvent") != 0)
            continue;
          data = symfonic_test_json_parse (frame->data);
          text = json_object_get_string_member (json_node_get_object (data), "text");
          g_assert_cmpstr (text, !=, "");
          g_string_append (joined, text);
        }
      g_test_message ("split at %" G_GSIZE_FORMAT ": %s", k, joined->str);
      g_assert_cmpstr (joined->str, ==, REDACTED);
    }
}

static gpointer
load_scripts_thread (gpointer data)
{
  GError *error = NULL;

  symfonic_registry_load_directory (symfonic_test_get_registry (), data, &error);

  return error;
}

/* A host that loads JavaScript plugins on a thread other than the one
 * running the default main context would have gjs answer nothing: the
 * load fails, and says why. */
static void
test_js_off_thread (void)
{
  g_autofree char *plugin = g_test_build_filename (G_TEST_BUILT, "..", "plugins", "libsymfonic-gjs." G_MODULE_SUFFIX,
                                                   NULL);
  g_autofree char *folder = g_test_build_filename (G_TEST_DIST, "integration", "scripts", NULL);
  GMainContext *context = g_main_context_default ();
  g_autoptr(GError) error = NULL;

  if (!g_file_test (plugin, G_FILE_TEST_EXISTS))
    {
      g_test_skip ("the JavaScript loader is not built");
      return;
    }

  symfonic_test_get_registry ();
  /* as a host's main loop does while it serves */
  g_assert_true (g_main_context_acquire (context));
  error = g_thread_join (g_thread_new ("loader", load_scripts_thread, folder));
  g_main_context_release (context);

  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN);
  g_assert_true (g_str_has_prefix (error->message, "JavaScript plugins must be loaded on the thread that "));
  g_assert_cmpuint (symfonic_registry_lookup (symfonic_test_get_registry (), "js-prefix"), ==, G_TYPE_INVALID);
}

int
main (int   argc,
      char *argv[])
{
  symfonic_test_init (&argc, &argv);

  g_test_add_func ("/script-redactor/js-off-thread", test_js_off_thread);
  g_test_add_func ("/script-redactor/python-splits", test_python_redactor_splits);

  return g_test_run ();
}
