/* bench-recorder.c: what the recorder costs per read, both sides
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * bench-recorder [--runs N] [--reads N] [--bytes N] [--folder DIR]
 *
 * Records N runs of N reads of N bytes each (by default 2,000 runs of 200
 * reads of 70 bytes: the paced benchmark's typed answer) as streams would,
 * from this thread, and prints the CPU time of the whole process (the
 * writer thread included) per read: the stream's copy, and the writer's
 * assembling, masking, encoding and writing of each run, its file's
 * creation included.
 */
#include "config.h"

#include <string.h>
#include <sys/resource.h>

#include <glib/gstdio.h>

#include "symfonic-recorder-private.h"

static double
cpu_seconds (void)
{
  struct rusage usage;

  getrusage (RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

int
main (int   argc,
      char *argv[])
{
  gint runs = 2000, reads = 200, bytes = 70;
  g_autofree char *folder = NULL;
  GOptionEntry entries[] = {
    { "runs", 0, 0, G_OPTION_ARG_INT, &runs, "Runs recorded", "N" },
    { "reads", 0, 0, G_OPTION_ARG_INT, &reads, "Reads per run", "N" },
    { "bytes", 0, 0, G_OPTION_ARG_INT, &bytes, "Bytes per read", "N" },
    { "folder", 0, 0, G_OPTION_ARG_FILENAME, &folder, "Where the recordings go (default: a temporary folder)", "DIR" },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr(GOptionContext) context = g_option_context_new (NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *made = NULL;
  g_autoptr(GFile) file = NULL;
  g_autofree guint8 *read = NULL;
  g_autoptr(GBytes) request = g_bytes_new_static ("POST /run HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}", 51);
  SymfonicRecorder *recorder;
  double start;
  double took;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("%s\n", error->message);
      return 2;
    }
  made = g_dir_make_tmp ("bench-recorder-XXXXXX", NULL);
  file = g_file_new_for_path (folder != NULL ? folder : made);
  recorder = symfonic_recorder_new (file, 1.0, G_MAXUINT32, NULL, "runtime", "symfonic-typed-sse", NULL, &error);
  g_assert_no_error (error);
  read = g_malloc (bytes);
  for (gint i = 0; i < bytes; i++)
    read[i] = "event: TextDeltaEvent\ndata: {\"text\":\"word \"}\n\n"[i % 47];

  start = cpu_seconds ();
  for (gint run = 0; run < runs; run++)
    {
      g_autofree char *id = g_strdup_printf ("bench-%d", run);
      SymfonicCapture *capture = symfonic_recorder_start (recorder, id, request);

      for (gint i = 0; i < reads; i++)
        symfonic_capture_chunk (capture, read, bytes);
      symfonic_capture_finish (capture, NULL);
    }
  g_assert_true (symfonic_recorder_flush (600 * G_USEC_PER_SEC));
  took = cpu_seconds () - start;

  g_print ("recorder: %d runs of %d reads of %d bytes: %.3f us of CPU per read (both threads), "
           "%.1f us per run; %" G_GUINT64_FORMAT " written, %" G_GUINT64_FORMAT " dropped\n",
           runs, reads, bytes, took / ((double) runs * reads) * 1e6, took / runs * 1e6,
           symfonic_recorder_count_written (), symfonic_recorder_count_dropped ());

  /* a dropped run skipped the writer's work: the figure would flatter */
  if (symfonic_recorder_count_dropped () > 0)
    g_printerr ("recorder: runs were dropped, the figure is not the recorder's cost\n");

  symfonic_recorder_unref (recorder);
  if (folder == NULL)
    {
      g_autoptr(GDir) dir = g_dir_open (made, 0, NULL);
      const char *name;

      while ((name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *path = g_build_filename (made, name, NULL);

          g_unlink (path);
        }
      g_rmdir (made);
    }

  return symfonic_recorder_count_dropped () > 0 ? 1 : 0;
}
