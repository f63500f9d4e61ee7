/* test-inspect.c: symfonic-inspect --transcript, the binary as an
 * operator runs it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <sys/wait.h>

#include <glib/gstdio.h>

static char *
shipped (const char *name)
{
  g_autofree char *file = g_strdup_printf ("%s.jsonl", name);

  return g_build_filename (SYMFONIC_RECORDED_TRANSCRIPTS, file, NULL);
}

/* Runs symfonic-inspect --transcript @path; its exit status. */
static int
inspect (const char  *path,
         char       **out,
         char       **err)
{
  const char *binary = g_getenv ("SYMFONIC_INSPECT");
  const char *argv[] = { binary, "--transcript", path, NULL };
  g_autoptr(GError) error = NULL;
  int status;

  g_assert_nonnull (binary);
  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, err, &status, &error);
  g_assert_no_error (error);
  g_test_message ("%s%s", *out, *err);

  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

static void
test_inspect_summary (void)
{
  g_autofree char *path = shipped ("openai-text");
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  g_assert_cmpint (inspect (path, &out, &err), ==, 0);
  g_assert_nonnull (strstr (out, "Source:        openai (openai-chat-completions)"));
  g_assert_nonnull (strstr (out, "Model:         gpt-4o-mini"));
  g_assert_nonnull (strstr (out, "Status:        200"));
  g_assert_nonnull (strstr (out, "Ended:         complete"));
  g_assert_nonnull (strstr (out, "Usage:         21 input, 19 output tokens"));
  g_assert_nonnull (strstr (out, "Finish reason: stop"));
  g_assert_nonnull (strstr (out, " reads, 1"));
  g_assert_nonnull (strstr (out, "kept:"));
}

static void
test_inspect_cut (void)
{
  g_autofree char *path = shipped ("anthropic-cut");
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  /* a cut that fails its client as a cut should keeps the contract */
  g_assert_cmpint (inspect (path, &out, &err), ==, 0);
  g_assert_nonnull (strstr (out, "Ended:         cut (transport: eof), upstream_error"));
  g_assert_nonnull (strstr (out, "Finish reason: none"));
}

/* A recording whose header says it ended complete, but whose body was
 * cut: the stream fails, and the check says which rule that breaks. */
static void
test_inspect_violation (void)
{
  g_autofree char *path = shipped ("openai-cut");
  g_autofree char *contents = NULL;
  g_autofree char *doctored = g_build_filename (g_get_tmp_dir (), "doctored.jsonl", NULL);
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_auto(GStrv) parts = NULL;
  g_autofree char *joined = NULL;

  g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
  parts = g_strsplit (contents, "\"end\":\"cut\"", 2);
  g_assert_cmpuint (g_strv_length (parts), ==, 2);
  joined = g_strjoinv ("\"end\":\"complete\"", parts);
  g_assert_true (g_file_set_contents (doctored, joined, -1, NULL));

  g_assert_cmpint (inspect (doctored, &out, &err), ==, 1);
  g_assert_nonnull (strstr (out, "typed, recorded: the recording ended complete, the client got a failure"));
  g_unlink (doctored);
}

static void
test_inspect_unreadable (void)
{
  g_autofree char *broken = g_build_filename (g_get_tmp_dir (), "broken.jsonl", NULL);
  g_autofree char *missing = g_build_filename (g_get_tmp_dir (), "missing.jsonl", NULL);
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  g_assert_true (g_file_set_contents (broken, "{\"symfonic_recording\":1,\"source\":\"openai\"}\n", -1, NULL));
  g_assert_cmpint (inspect (broken, &out, &err), ==, 1);
  g_assert_nonnull (strstr (err, "broken.jsonl: line 1:"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (inspect (missing, &out, &err), ==, 2);
  g_unlink (broken);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/inspect/summary", test_inspect_summary);
  g_test_add_func ("/inspect/cut", test_inspect_cut);
  g_test_add_func ("/inspect/violation", test_inspect_violation);
  g_test_add_func ("/inspect/unreadable", test_inspect_unreadable);

  return g_test_run ();
}
