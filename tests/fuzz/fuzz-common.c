/* fuzz-common.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdlib.h>

#include <glib/gstdio.h>

#include "fuzz-common.h"

void
fuzz_split_init (FuzzSplit    *split,
                 const guint8 *data,
                 gsize         size)
{
  gsize n = size > 0 ? MIN (data[0] % 16u, size - 1) : 0;

  split->lengths = data + 1;
  split->n_lengths = n;
  split->payload = size > 0 ? data + 1 + n : data;
  split->payload_size = size > 0 ? size - 1 - n : 0;
  split->offset = 0;
  split->next_length = 0;
}

/* Returns FALSE when the payload is all given out. */
gboolean
fuzz_split_next (FuzzSplit     *split,
                 const guint8 **piece,
                 gsize         *length)
{
  gsize left = split->payload_size - split->offset;
  gsize want = left;

  if (left == 0)
    return FALSE;

  if (split->n_lengths > 0)
    {
      want = (gsize) split->lengths[split->next_length] + 1;
      split->next_length = (split->next_length + 1) % split->n_lengths;
    }

  *piece = split->payload + split->offset;
  *length = MIN (want, left);
  split->offset += *length;

  return TRUE;
}

/* A critical is a broken precondition inside the code under test: as much
 * a finding as a crash. GLib's own handler stops on a fatal message with
 * SIGTRAP, which libFuzzer does not catch; abort() makes it save the input. */
static void
log_handler (const char     *domain,
             GLogLevelFlags  level,
             const char     *message,
             gpointer        user_data)
{
  if (level & (G_LOG_FLAG_FATAL | G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL))
    {
      g_printerr ("%s: %s\n", domain != NULL ? domain : "", message);
      abort ();
    }
  g_log_default_handler (domain, level, message, user_data);
}

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  g_log_set_default_handler (log_handler, NULL);
  return 0;
}

/* The workspace is a temporary folder laid out like data/: pipelines/ for
 * the fuzzed files, beside copies of the demo tokens and the error table,
 * so the default pipeline's relative paths resolve. Its transcripts folder
 * holds only the unit tests' one short transcript, which keeps a load
 * cheap (the replay source reads every transcript as a pipeline loads).
 * It is a fresh folder per process, so parallel jobs never share it. */
static char *workspace;
static GFile *pipelines_dir;

static void
remove_tree (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);

      if (g_file_test (child, G_FILE_TEST_IS_DIR))
        remove_tree (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

static void
remove_workspace (void)
{
  remove_tree (workspace);
}

static void
copy_into_workspace (const char *from_dir,
                     const char *relative)
{
  g_autofree char *from_path = g_build_filename (from_dir, relative, NULL);
  g_autofree char *to_path = g_build_filename (workspace, relative, NULL);
  g_autoptr(GFile) from = g_file_new_for_path (from_path);
  g_autoptr(GFile) to = g_file_new_for_path (to_path);
  g_autoptr(GError) error = NULL;

  if (!g_file_copy (from, to, G_FILE_COPY_NONE, NULL, NULL, NULL, &error))
    g_error ("Cannot set up the fuzzing workspace: %s", error->message);
}

static void
make_workspace (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *pipelines_path = NULL;
  g_autofree char *transcripts_path = NULL;

  workspace = g_dir_make_tmp ("symfonic-fuzz-XXXXXX", &error);
  if (workspace == NULL)
    g_error ("Cannot create the fuzzing workspace: %s", error->message);
  atexit (remove_workspace);

  pipelines_path = g_build_filename (workspace, "pipelines", NULL);
  transcripts_path = g_build_filename (workspace, "transcripts", NULL);
  g_mkdir (pipelines_path, 0700);
  g_mkdir (transcripts_path, 0700);
  pipelines_dir = g_file_new_for_path (pipelines_path);

  copy_into_workspace (SYMFONIC_TEST_DATA_DIR, "demo-tokens.ini");
  copy_into_workspace (SYMFONIC_TEST_DATA_DIR, "error-map.ini");
  copy_into_workspace (FUZZ_FIXTURES_DIR, "transcripts/plain.jsonl");

  if (!symfonic_registry_scan (symfonic_registry_get_default (), &error))
    g_error ("Cannot load the plugins: %s", error->message);
}

/**
 * fuzz_get_pipelines_dir:
 *
 * Returns: (transfer none): the workspace's folder for pipeline files,
 *   made on first use, with the registry's plugins loaded
 */
GFile *
fuzz_get_pipelines_dir (void)
{
  if (workspace == NULL)
    make_workspace ();

  return pipelines_dir;
}

/**
 * fuzz_write_file:
 * @name: a file name in the workspace's pipelines folder
 * @data: the content
 * @size: its length
 *
 * Returns: (transfer full): the file, written whole
 */
GFile *
fuzz_write_file (const char   *name,
                 const guint8 *data,
                 gsize         size)
{
  GFile *file = g_file_get_child (fuzz_get_pipelines_dir (), name);
  g_autofree char *path = g_file_get_path (file);
  g_autoptr(GError) error = NULL;

  if (!g_file_set_contents (path, (const char *) data, size, &error))
    g_error ("Cannot write %s: %s", path, error->message);

  return file;
}

/**
 * fuzz_load_with_table:
 * @stage_settings: the lines of a stage reading `table.ini`, such as
 *   `type=auth\ntokens-file=table.ini`
 * @data: the table's content
 * @size: its length
 * @error: return location for an error
 *
 * Writes the table and loads a one-route pipeline that uses the stage, the
 * way the gateway reads its configuration files.
 *
 * Returns: (transfer full) (nullable): the pipeline
 */
SymfonicPipeline *
fuzz_load_with_table (const char    *stage_settings,
                      const guint8  *data,
                      gsize          size,
                      GError       **error)
{
  g_autofree char *text = g_strdup_printf ("[route:r]\n"
                                           "path=/r\n"
                                           "source=s\n"
                                           "stages=x\n"
                                           "\n"
                                           "[source:s]\n"
                                           "type=replay\n"
                                           "transcripts=../transcripts\n"
                                           "\n"
                                           "[stage:x]\n"
                                           "%s\n",
                                           stage_settings);

  g_object_unref (fuzz_write_file ("table.ini", data, size));

  return symfonic_pipeline_new_from_data (symfonic_registry_get_default (), text, -1,
                                          fuzz_get_pipelines_dir (), "fuzz.pipeline", error);
}
