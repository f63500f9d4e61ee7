/* test-binaries.c: symfonic-gateway and symfonic-inspect as a user runs them
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <glib/gstdio.h>
#include <gio/gunixsocketaddress.h>
#include <unistd.h>

#include "symfonic-test-support.h"

static const char *
binary (const char *variable)
{
  const char *path = g_getenv (variable);

  g_assert_nonnull (path);
  return path;
}

static int
run (char       **out,
     char       **err,
     const char  *first_arg,
     ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  const char *arg;
  va_list args;

  va_start (args, first_arg);
  for (arg = first_arg; arg != NULL; arg = va_arg (args, const char *))
    g_ptr_array_add (argv, (gpointer) arg);
  va_end (args);
  g_ptr_array_add (argv, NULL);

  process = g_subprocess_newv ((const char * const *) argv->pdata,
                               G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, out, err, &error);
  g_assert_no_error (error);

  return g_subprocess_get_exit_status (process);
}

static char *
write_pipeline (const char *name,
                const char *text)
{
  g_autoptr(GError) error = NULL;
  char *path = g_build_filename (g_get_user_cache_dir (), name, NULL);

  g_assert_cmpint (g_mkdir_with_parents (g_get_user_cache_dir (), 0700), ==, 0);
  g_assert_true (g_file_set_contents (path, text, -1, &error));
  g_assert_no_error (error);
  return path;
}

/* `--check FILE` on a broken file: exit 1, and the message names the file,
 * the line and the key, as an operator needs to fix it. */
static void
test_check_broken (void)
{
  g_autofree char *path = write_pipeline ("broken.pipeline",
                                          "[route:typed]\n"
                                          "path=/api/v1/stream/typed\n"
                                          "source=demo\n"
                                          "\n"
                                          "[source:demo]\n"
                                          "type=replay\n"
                                          "transcripts=/nonexistent\n"
                                          "time-scale=fast\n");
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *expected = g_strdup_printf ("%s:8: [source:demo] time-scale:", path);
  int status;

  status = run (&out, &err, binary ("SYMFONIC_GATEWAY"), "--check", path, NULL);
  g_test_message ("stderr: %s", err);
  g_assert_cmpint (status, ==, 1);
  g_assert_nonnull (strstr (err, expected));
  g_assert_nonnull (strstr (err, "“fast”"));
  g_assert_cmpstr (out, ==, "");
}

/* `--check` on a file with many mistakes, one of them in the tokens file
 * it names: one run lists them all, one per line as
 * `FILE:LINE: [group] key: message`, by line (a named file's own lines
 * right below the key naming it), and exits 1; a missing file says it is
 * missing. */
static void
test_check_every_error (void)
{
  g_autofree char *dir = g_build_filename (g_get_user_cache_dir (), "every-error", NULL);
  g_autofree char *tokens = g_build_filename (dir, "tokens.ini", NULL);
  g_autofree char *key = g_build_filename (dir, "missing.key", NULL);
  g_autofree char *path = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_auto(GStrv) lines = NULL;
  g_autoptr(GRegex) shape = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *previous_file = NULL;
  guint previous_line = 0;
  static const char * const expected[] = {
    ":2: [gateway] workers: expected a whole number from 0 to 256, found “many”",
    ":6: [route:typed] kind: expected one of typed, chunks, chat, resume, openai, anthropic, runs, found “typo”",
    ":12: [source:demo] time-scale: expected a number from 0 to 100, found “fast”",
    "missing.key: expected a file, found nothing: it is missing",
    ":20: [stage:auth] tokens-file: expected a file without errors, found 3 in “",
    "tokens.ini:2: [principal:alice] token-sha256: expected 64 hexadecimal digits",
    "tokens.ini:4: [principal:alice] admin: expected true or false, found “maybe”",
    "tokens.ini:7: [principal:bob] colour: expected one of token-sha256, tenants, admin, demo, found an unknown key",
    ":24: [stage:limit] rate: expected a number from 1e-06 to 1e+06, found “lots”",
    ":26: [stage:limit] bursts: expected a key of type “rate-limit” (",
  };

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_assert_true (g_file_set_contents (tokens,
                                      "[principal:alice]\n"
                                      "token-sha256=abc\n"
                                      "tenants=acme\n"
                                      "admin=maybe\n"
                                      "[principal:bob]\n"
                                      "token-sha256=0000000000000000000000000000000000000000000000000000000000000000\n"
                                      "colour=red\n"
                                      "tenants=acme\n", -1, &error));
  path = g_build_filename (dir, "every.pipeline", NULL);
  g_assert_true (g_file_set_contents (path,
                                      "[gateway]\n"                        /* 1 */
                                      "workers=many\n"                     /* 2 */
                                      "\n"                                 /* 3 */
                                      "[route:typed]\n"                    /* 4 */
                                      "path=/api/v1/stream/typed\n"        /* 5 */
                                      "kind=typo\n"                        /* 6 */
                                      "source=demo\n"                      /* 7 */
                                      "stages=auth;limit\n"                /* 8 */
                                      "\n"                                 /* 9 */
                                      "[source:demo]\n"                    /* 10 */
                                      "type=replay\n"                      /* 11 */
                                      "time-scale=fast\n"                  /* 12 */
                                      "\n"                                 /* 13 */
                                      "[source:up]\n"                      /* 14 */
                                      "type=openai\n"                      /* 15 */
                                      "model=m\n"                          /* 16 */
                                      "api-key-file=missing.key\n"         /* 17 */
                                      "[stage:auth]\n"                     /* 18 */
                                      "type=auth\n"                        /* 19 */
                                      "tokens-file=tokens.ini\n"           /* 20 */
                                      "\n"                                 /* 21 */
                                      "[stage:limit]\n"                    /* 22 */
                                      "type=rate-limit\n"                  /* 23 */
                                      "rate=lots\n"                        /* 24 */
                                      "burst=2\n"                          /* 25 */
                                      "bursts=3\n",                        /* 26 */
                                      -1, &error));
  g_assert_no_error (error);

  g_assert_cmpint (run (&out, &err, binary ("SYMFONIC_GATEWAY"), "--check", path, NULL), ==, 1);
  g_test_message ("stderr:\n%s", err);
  g_assert_cmpstr (out, ==, "");

  /* one run, every mistake, in the order given */
  lines = g_strsplit (g_strchomp (err), "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, G_N_ELEMENTS (expected));
  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    {
      if (strstr (lines[i], expected[i]) == NULL)
        g_error ("line %u, “%s”, does not say “%s”", i + 1, lines[i], expected[i]);
    }
  g_assert_nonnull (strstr (lines[3], "[source:up] api-key-file: "));
  g_assert_true (g_str_has_suffix (lines[4], "tokens.ini”, listed below"));

  /* one shape, each file's lines by line */
  shape = g_regex_new ("^(/[^:]+):([0-9]+): \\[[^]]+\\]( [a-z0-9-]+)?: \\S.*$", 0, 0, &error);
  g_assert_no_error (error);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr(GMatchInfo) match = NULL;
      g_autofree char *file = NULL;
      g_autofree char *number = NULL;
      guint line;

      if (!g_regex_match (shape, lines[i], 0, &match))
        g_error ("“%s” is not FILE:LINE: [group] key: message", lines[i]);
      file = g_match_info_fetch (match, 1);
      number = g_match_info_fetch (match, 2);
      line = (guint) g_ascii_strtoull (number, NULL, 10);
      g_assert_true (g_str_equal (file, path) || g_str_equal (file, tokens));
      if (g_strcmp0 (file, previous_file) == 0)
        g_assert_cmpuint (line, >, previous_line);
      g_free (previous_file);
      previous_file = g_steal_pointer (&file);
      previous_line = line;
    }
}

/* Runs `--check` on a typed route with @stages, the stage groups
 * @stage_groups, and expects it refused with @message on @line. */
static void
check_refused (const char *stages,
               const char *stage_groups,
               guint       line,
               const char *message)
{
  g_autofree char *transcripts = g_test_build_filename (G_TEST_DIST, "integration", "transcripts", NULL);
  g_autofree char *text = g_strdup_printf ("[route:typed]\n"
                                           "path=/api/v1/stream/typed\n"
                                           "source=demo\n"
                                           "stages=%s\n"
                                           "\n"
                                           "[source:demo]\n"
                                           "type=replay\n"
                                           "transcripts=%s\n"
                                           "default-transcript=typed\n"
                                           "%s", stages, transcripts, stage_groups);
  g_autofree char *path = write_pipeline ("refused.pipeline", text);
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *expected = g_strdup_printf ("%s:%u: %s", path, line, message);
  int status;

  status = run (&out, &err, binary ("SYMFONIC_GATEWAY"), "--check", path, NULL);
  g_test_message ("stderr: %s", err);
  g_assert_cmpint (status, ==, 1);
  g_assert_nonnull (strstr (err, expected));
  g_assert_cmpstr (out, ==, "");
}

/* A stage listed twice in a route would share one per-stream state with
 * itself (a budget reserving twice and settling once): refused at load. */
static void
test_check_repeated_stage (void)
{
  check_refused ("budget;budget", "\n[stage:budget]\ntype=budget\n",
                 4, "[route:typed] stages: expected each stage at most once, found “budget” listed twice");
}

/* The citation stage drops the memory blocks it meets: an extraction
 * stage after it would lose every op, so the order is refused. */
static void
test_check_citation_before_extraction (void)
{
  check_refused ("cite;extract", "\n[stage:cite]\ntype=citation\n\n[stage:extract]\ntype=extraction\n",
                 4, "[route:typed] stages: expected stage “extract” (extraction) before stage “cite” "
                    "(citation), which drops the memory blocks it meets, found it after");
}

/* A block tag the citation filter could confuse with a citation tag. */
static void
test_check_citation_block_tag (void)
{
  check_refused ("cite", "\n[stage:cite]\ntype=citation\nopen-tag=memory_ops\n",
                 13, "[stage:cite] open-tag: expected a tag that holds no “[” or space and starts with none "
                     "of a letter, a digit, “_.-:]” or a character of a kind, found “memory_ops”");
}

/* A FIFO in place of the pipeline file is refused at once, not waited on. */
static void
test_check_fifo (void)
{
  g_autofree char *path = g_build_filename (g_get_user_cache_dir (), "fifo.pipeline", NULL);
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *expected = g_strconcat (path, ": ", NULL);
  int status;

  g_assert_cmpint (g_mkdir_with_parents (g_get_user_cache_dir (), 0700), ==, 0);
  g_assert_cmpint (mkfifo (path, 0600), ==, 0);
  status = run (&out, &err, binary ("SYMFONIC_GATEWAY"), "--check", path, NULL);
  g_test_message ("stderr: %s", err);
  g_assert_cmpint (status, ==, 1);
  g_assert_nonnull (strstr (err, expected));
  g_assert_cmpstr (out, ==, "");
}

static void
test_check_default (void)
{
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  int status;

  status = run (&out, &err, binary ("SYMFONIC_GATEWAY"), "--check", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "default.pipeline: OK"));
}

static void
test_bad_usage (void)
{
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  g_assert_cmpint (run (&out, &err, binary ("SYMFONIC_GATEWAY"), "a", "b", NULL), ==, 2);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run (&out, &err, binary ("SYMFONIC_GATEWAY"), "--workers", "-3", NULL), ==, 2);
}

static void
test_inspect_lists (void)
{
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  g_assert_cmpint (run (&out, &err, binary ("SYMFONIC_INSPECT"), NULL), ==, 0);
  g_assert_nonnull (strstr (out, "    LGPL-2.1-or-later, "));
  g_assert_nonnull (strstr (out, "libsymfonic-replay.so"));
  g_assert_true (g_regex_match_simple ("^  replay +source +SymfonicReplaySource", out, G_REGEX_MULTILINE, 0));
}

static void
test_inspect_type (void)
{
  static const char * const expected[] = {
    "replay (source SymfonicReplaySource)",
    "  from plugin replay " SYMFONIC_VERSION " (LGPL-2.1-or-later): ",
    "  transcripts ",
    "  default-transcript ",
    "default: \"plain\"",
    "  transcript-header ",
    "default: \"X-Symfonic-Transcript\"",
    "  time-scale ",
    "values: 0 .. 100",
  };
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  g_assert_cmpint (run (&out, &err, binary ("SYMFONIC_INSPECT"), "replay", NULL), ==, 0);
  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    {
      g_test_message ("expecting “%s”", expected[i]);
      g_assert_nonnull (strstr (out, expected[i]));
    }

  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run (&out, &err, binary ("SYMFONIC_INSPECT"), "no-such-type", NULL), ==, 1);
  g_assert_nonnull (strstr (err, "no-such-type"));
}

/* The keys of the groups that configure no registered type are listed
 * from the properties they set, like a type's. */
static void
test_inspect_groups (void)
{
  static const char * const route_expected[] = {
    "[route:NAME] (pipeline file group)",
    "  path ",
    "  source ",
    "type: the NAME of a [source:NAME]",
    "  stages ",
    "type: string list (a;b;c)",
    "  max-usage-tokens ",
    "values: 1 .. 1000000000000",
  };
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  g_assert_cmpint (run (&out, &err, binary ("SYMFONIC_INSPECT"), NULL), ==, 0);
  g_assert_true (g_regex_match_simple ("^  \\[gateway\\] +listen, workers, ", out, G_REGEX_MULTILINE, 0));
  g_assert_true (g_regex_match_simple ("^  \\[route:NAME\\] +path, kind, source, stages, ", out, G_REGEX_MULTILINE, 0));
  g_assert_nonnull (strstr (out, " resume-token-seconds\n"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (run (&out, &err, binary ("SYMFONIC_INSPECT"), "route", NULL), ==, 0);
  for (guint i = 0; i < G_N_ELEMENTS (route_expected); i++)
    {
      g_test_message ("expecting “%s”", route_expected[i]);
      g_assert_nonnull (strstr (out, route_expected[i]));
    }
  /* the route's own name and release line are no keys of its group */
  g_assert_null (strstr (out, "  name "));
  g_assert_null (strstr (out, "  release-line "));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (run (&out, &err, binary ("SYMFONIC_INSPECT"), "gateway", NULL), ==, 0);
  g_assert_nonnull (strstr (out, "[gateway] (pipeline file group)"));
  g_assert_nonnull (strstr (out, "  drain-seconds "));
  g_assert_nonnull (strstr (out, "  plugin-path "));

  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run (&out, &err, binary ("SYMFONIC_INSPECT"), "replay", NULL), ==, 0);
  g_assert_nonnull (strstr (out, "type: path of a folder (relative to the pipeline file)"));
}

typedef struct
{
  char     *line;
  gboolean  done;
} LineRead;

static gboolean
line_read (gpointer data)
{
  return ((LineRead *) data)->done;
}

static void
read_line_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  LineRead *read = user_data;
  gsize length;

  read->line = g_data_input_stream_read_line_finish_utf8 (G_DATA_INPUT_STREAM (object), result, &length, NULL);
  read->done = TRUE;
}

static gboolean
is_set (gpointer data)
{
  return *(gboolean *) data;
}

static void
wait_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  g_subprocess_wait_finish (G_SUBPROCESS (object), result, NULL);
  *(gboolean *) user_data = TRUE;
}

/* The next line of @input, which must have one. */
static char *
read_line (GDataInputStream *input)
{
  LineRead read = { NULL, FALSE };

  g_data_input_stream_read_line_async (input, G_PRIORITY_DEFAULT, NULL, read_line_cb, &read);
  g_assert_true (symfonic_test_iterate_until (NULL, line_read, &read, SYMFONIC_TEST_WAIT_MS));
  g_assert_nonnull (read.line);
  return read.line;
}

/* Starts the gateway through @launcher (one with stdout piped) on an
 * ephemeral port with @workers threads, serving @pipeline (NULL: the
 * default one); @base_url is where it says it listens, from its banner,
 * ending in '/'. */
static GSubprocess *
start_gateway (GSubprocessLauncher  *launcher,
               const char           *pipeline,
               const char           *workers,
               char                **base_url)
{
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GDataInputStream) output = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *line = NULL;
  const char *at;

  process = g_subprocess_launcher_spawn (launcher, &error, binary ("SYMFONIC_GATEWAY"),
                                         "--listen", "127.0.0.1:0", "--workers", workers,
                                         pipeline, NULL);
  g_assert_no_error (error);
  output = g_data_input_stream_new (g_subprocess_get_stdout_pipe (process));
  g_object_set_data_full (G_OBJECT (process), "stdout", g_object_ref (output), g_object_unref);
  line = read_line (output);
  g_test_message ("banner: %s", line);
  at = strstr (line, " on http://");
  g_assert_nonnull (at);
  *base_url = g_strdup (at + strlen (" on "));

  return g_steal_pointer (&process);
}

/* The gateway's output @stream, "stdout" or "stderr", piped. */
static GDataInputStream *
output (GSubprocess *process,
        const char  *stream)
{
  GDataInputStream *input = g_object_get_data (G_OBJECT (process), stream);

  if (input == NULL)
    {
      input = g_data_input_stream_new (g_subprocess_get_stderr_pipe (process));
      g_object_set_data_full (G_OBJECT (process), stream, input, g_object_unref);
    }

  return input;
}

/* Reads the gateway's output @stream up to a line that matches the
 * regular expression @pattern, and returns that line. */
static char *
wait_line_matching (GSubprocess *process,
                    const char  *stream,
                    const char  *pattern)
{
  GDataInputStream *input = output (process, stream);

  for (;;)
    {
      char *line = read_line (input);

      g_test_message ("%s: %s", stream, line);
      if (g_regex_match_simple (pattern, line, 0, 0))
        return line;
      g_free (line);
    }
}

/* Reads the gateway's output @stream up to a line, not an empty one, that
 * starts with @prefix, and returns that line. */
static char *
wait_line (GSubprocess *process,
           const char  *stream,
           const char  *prefix)
{
  g_autofree char *escaped = g_regex_escape_string (prefix, -1);
  g_autofree char *pattern = g_strconcat ("^(?=.)", escaped, NULL);

  return wait_line_matching (process, stream, pattern);
}

/* What is left of the output @stream of the gateway, which exited. */
static char *
read_rest (GSubprocess *process,
           const char  *stream)
{
  GInputStream *input = G_INPUT_STREAM (output (process, stream));
  g_autoptr(GString) rest = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  char buffer[4096];
  gsize n;

  do
    {
      g_input_stream_read_all (input, buffer, sizeof buffer, &n, NULL, &error);
      g_assert_no_error (error);
      g_string_append_len (rest, buffer, n);
    }
  while (n == sizeof buffer);
  g_test_message ("%s: %s", stream, rest->str);

  return g_string_free (g_steal_pointer (&rest), FALSE);
}

/* The gateway exits 0 on its own. */
static void
wait_exit (GSubprocess *process)
{
  gboolean exited = FALSE;

  g_subprocess_wait_async (process, NULL, wait_cb, &exited);
  g_assert_true (symfonic_test_iterate_until (NULL, is_set, &exited, SYMFONIC_TEST_WAIT_MS));
  g_assert_true (g_subprocess_get_if_exited (process));
  g_assert_cmpint (g_subprocess_get_exit_status (process), ==, 0);
}

/* The gateway stops cleanly on @signum. */
static void
stop_gateway (GSubprocess *process,
              int          signum)
{
  g_subprocess_send_signal (process, signum);
  wait_exit (process);
}

/* The binary serves the default pipeline, answers, and stops cleanly on
 * SIGTERM and on SIGINT. */
static void
test_serve_and_stop (gconstpointer data)
{
  int signum = GPOINTER_TO_INT (data);
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestResponse) response = NULL;
  g_autofree char *base_url = NULL;
  g_autofree char *url = NULL;

  /* port 0: the banner says where it listens */
  process = start_gateway (launcher, NULL, "2", &base_url);
  url = g_strconcat (base_url, "healthz", NULL);

  response = symfonic_test_request (session, "GET", url, NULL, NULL, NULL);
  g_assert_cmpuint (response->status, ==, 200);
  g_assert_cmpstr (symfonic_test_response_get_text (response), ==, "{\"status\":\"ok\"}");

  stop_gateway (process, signum);
}

/* A second gateway on a port one already serves fails with "address in
 * use" and leaves the first one serving; the first one's own two workers
 * share the port. */
static void
test_second_on_same_port (void)
{
  g_autoptr(GSubprocess) second = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestResponse) response = NULL;
  g_autofree char *base_url = NULL;
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GSubprocess) process = start_gateway (launcher, NULL, "2", &base_url);
  g_autofree char *url = g_strconcat (base_url, "healthz", NULL);
  /* HOST:PORT, between "http://" and the closing "/" */
  g_autofree char *listen = g_strndup (base_url + strlen ("http://"), strlen (base_url) - strlen ("http:///"));
  g_autofree char *err = NULL;
  gboolean second_exited = FALSE;

  /* bounded: a second gateway that did bind would serve forever */
  second = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_PIPE, &error,
                             binary ("SYMFONIC_GATEWAY"), "--listen", listen, "--workers", "2", NULL);
  g_assert_no_error (error);
  g_subprocess_wait_async (second, NULL, wait_cb, &second_exited);
  if (!symfonic_test_iterate_until (NULL, is_set, &second_exited, SYMFONIC_TEST_WAIT_MS))
    {
      g_subprocess_force_exit (second);
      g_assert_true (symfonic_test_iterate_until (NULL, is_set, &second_exited, SYMFONIC_TEST_WAIT_MS));
      g_assert_not_reached ();
    }
  g_subprocess_communicate_utf8 (second, NULL, NULL, NULL, &err, &error);
  g_assert_no_error (error);
  g_test_message ("second gateway on %s: %s", listen, err);
  g_assert_true (g_subprocess_get_if_exited (second));
  g_assert_cmpint (g_subprocess_get_exit_status (second), !=, 0);
  g_assert_nonnull (strstr (err, "address in use"));

  response = symfonic_test_request (session, "GET", url, NULL, NULL, NULL);
  g_assert_cmpuint (response->status, ==, 200);

  stop_gateway (process, SIGTERM);
}

/* child setup: @user_data is the struct rlimit to start the gateway with */
static void
limit_descriptors (gpointer user_data)
{
  setrlimit (RLIMIT_NOFILE, user_data);
}

static guint64
cpu_ticks (GSubprocess *process)
{
  g_autofree char *path = g_strdup_printf ("/proc/%s/stat", g_subprocess_get_identifier (process));
  g_autofree char *stat = NULL;
  g_auto(GStrv) fields = NULL;

  g_assert_true (g_file_get_contents (path, &stat, NULL, NULL));
  /* after "pid (comm) ": utime and stime are the 12th and 13th fields */
  fields = g_strsplit (strrchr (stat, ')') + 2, " ", -1);
  return g_ascii_strtoull (fields[11], NULL, 10) + g_ascii_strtoull (fields[12], NULL, 10);
}

/* A gateway out of descriptors pauses accepting rather than spinning on a
 * listener that stays readable, and serves again once clients leave. */
static void
test_out_of_descriptors (void)
{
  static const struct rlimit few = { 48, 48 };
  g_autoptr(GSubprocessLauncher) launcher =
    g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_autoptr(GPtrArray) clients = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GSocketClient) client = g_socket_client_new ();
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestResponse) response = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autofree char *base_url = NULL;
  g_autofree char *url = NULL;
  guint64 before;
  guint64 spent;
  guint16 port;

  g_subprocess_launcher_set_child_setup (launcher, limit_descriptors, (gpointer) &few, NULL);
  process = start_gateway (launcher, NULL, "1", &base_url);
  url = g_strconcat (base_url, "healthz", NULL);
  port = g_ascii_strtoull (strrchr (base_url, ':') + 1, NULL, 10);

  g_socket_client_set_enable_proxy (client, FALSE);
  for (guint i = 0; i < 80; i++)
    {
      g_autoptr(GError) error = NULL;
      GSocketConnection *connection = g_socket_client_connect_to_host (client, "127.0.0.1", port, NULL, &error);

      g_assert_no_error (error);
      g_ptr_array_add (clients, connection);
    }

  g_usleep (500 * 1000);
  before = cpu_ticks (process);
  g_usleep (2 * G_USEC_PER_SEC);
  spent = cpu_ticks (process) - before;
  g_test_message ("%" G_GUINT64_FORMAT " ticks of CPU in 2 s out of descriptors", spent);
  /* spinning takes a whole core: 200 ticks on an idle machine */
  g_assert_cmpuint (spent, <, 50);

  g_ptr_array_set_size (clients, 0);
  response = symfonic_test_request (session, "GET", url, NULL, NULL, NULL);
  g_assert_cmpuint (response->status, ==, 200);

  stop_gateway (process, SIGTERM);
}

/* The soft open-file limit a service starts with (often 1,024) would cap
 * the streams the gateway holds: it raises it to the hard limit. */
static void
test_raises_descriptor_limit (void)
{
  static const struct rlimit soft_below_hard = { 256, 4096 };
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GSubprocess) process = NULL;
  g_autofree char *base_url = NULL;
  g_autofree char *path = NULL;
  g_autofree char *limits = NULL;
  g_autoptr(GRegex) regex = NULL;
  g_autoptr(GMatchInfo) match = NULL;
  g_autofree char *soft = NULL;
  g_autofree char *hard = NULL;

  g_subprocess_launcher_set_child_setup (launcher, limit_descriptors, (gpointer) &soft_below_hard, NULL);
  process = start_gateway (launcher, NULL, "1", &base_url);

  path = g_strdup_printf ("/proc/%s/limits", g_subprocess_get_identifier (process));
  g_assert_true (g_file_get_contents (path, &limits, NULL, NULL));
  regex = g_regex_new ("^Max open files +([0-9]+) +([0-9]+)", G_REGEX_MULTILINE, 0, NULL);
  g_assert_true (g_regex_match (regex, limits, 0, &match));
  soft = g_match_info_fetch (match, 1);
  hard = g_match_info_fetch (match, 2);
  g_assert_cmpstr (soft, ==, "4096");
  g_assert_cmpstr (hard, ==, "4096");

  stop_gateway (process, SIGTERM);
}

/* A pipeline whose typed route plays the reasoning transcript (0.9 s in
 * real time) @time_scale times slower, and whose drain lasts
 * @drain_seconds. */
static char *
write_drain_pipeline (const char *name,
                      guint       drain_seconds,
                      guint       time_scale)
{
  g_autofree char *transcripts = g_test_build_filename (G_TEST_DIST, "..", "data", "transcripts", NULL);
  g_autofree char *table = g_test_build_filename (G_TEST_DIST, "..", "data", "error-map.ini", NULL);
  g_autofree char *text = g_strdup_printf ("[gateway]\n"
                                           "drain-seconds=%u\n"
                                           "\n"
                                           "[route:typed]\n"
                                           "path=/api/v1/stream/typed\n"
                                           "kind=typed\n"
                                           "source=demo\n"
                                           "stages=errors\n"
                                           "\n"
                                           "[source:demo]\n"
                                           "type=replay\n"
                                           "transcripts=%s\n"
                                           "default-transcript=reasoning\n"
                                           "time-scale=%u\n"
                                           "\n"
                                           "[stage:errors]\n"
                                           "type=error-map\n"
                                           "table=%s\n",
                                           drain_seconds, transcripts, time_scale, table);

  return write_pipeline (name, text);
}

static SymfonicTestStream *
post_typed (SoupSession *session,
            const char  *base_url)
{
  g_autofree char *url = g_strconcat (base_url, "api/v1/stream/typed", NULL);

  return symfonic_test_stream_post (session, url, "{\"query\":\"why?\"}",
                                    "Authorization", "Bearer demo-token-alice", "X-Tenant-ID", "acme", NULL);
}

/* The stream's frames hold exactly one terminal frame, its last, of
 * @event. */
static SymfonicTestFrame *
assert_one_terminal (SymfonicTestStream *stream,
                     const char         *event)
{
  SymfonicTestFrame *last;
  guint n_terminal = 0;

  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->frames->len, >, 0);
  for (guint i = 0; i < stream->frames->len; i++)
    {
      SymfonicTestFrame *frame = g_ptr_array_index (stream->frames, i);

      n_terminal += g_str_equal (frame->event, "error") || g_str_equal (frame->event, "ResponseCompleteEvent");
    }
  last = g_ptr_array_index (stream->frames, stream->frames->len - 1);
  g_assert_cmpstr (last->event, ==, event);
  g_assert_cmpuint (n_terminal, ==, 1);

  return last;
}

static gboolean
refused (guint16 port)
{
  g_autoptr(GSocketClient) client = g_socket_client_new ();
  g_autoptr(GSocketConnection) connection = NULL;
  g_autoptr(GError) error = NULL;

  g_socket_client_set_enable_proxy (client, FALSE);
  connection = g_socket_client_connect_to_host (client, "127.0.0.1", port, NULL, &error);
  return g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED);
}

static guint16
port_of (const char *base_url)
{
  return g_ascii_strtoull (strrchr (base_url, ':') + 1, NULL, 10);
}

/* A kept-alive connection that answered one request and now waits. */
static GSocketConnection *
idle_connection (guint16 port)
{
  g_autoptr(GString) response = g_string_new (NULL);
  GSocketConnection *connection =
    symfonic_test_raw_request (port, "GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n", "{\"status\":\"ok\"}",
                               response);

  g_assert_true (g_str_has_prefix (response->str, "HTTP/1.1 200"));
  return connection;
}

/* SIGTERM drains: the port refuses new clients at once, an idle kept-alive
 * connection is closed at once, the stream in flight runs to its own end,
 * and the gateway exits 0. */
static void
test_drain_lets_streams_finish (void)
{
  g_autofree char *pipeline = write_drain_pipeline ("drain.pipeline", 60, 4);
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = NULL;
  g_autoptr(GSocketConnection) idle = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *base_url = NULL;
  g_autofree char *line = NULL;
  char byte;
  gssize n;

  process = start_gateway (launcher, pipeline, "2", &base_url);
  idle = idle_connection (port_of (base_url));
  stream = post_typed (session, base_url);
  symfonic_test_stream_wait_frames (stream, 1);

  g_subprocess_send_signal (process, SIGTERM);
  line = wait_line (process, "stdout", "symfonic-gateway: shutting down");

  /* the listener is closed by the time the workers took the message */
  for (guint i = 0; i < 100 && !refused (port_of (base_url)); i++)
    g_usleep (10 * 1000);
  g_assert_true (refused (port_of (base_url)));

  /* the idle connection ends (the sweep runs at least once a second)
   * while the stream still runs: it takes 3.6 s */
  n = g_input_stream_read (g_io_stream_get_input_stream (G_IO_STREAM (idle)), &byte, 1, NULL, &error);
  g_assert_cmpint (n, <=, 0);
  g_assert_false (stream->done);

  symfonic_test_stream_wait_done (stream);
  assert_one_terminal (stream, "ResponseCompleteEvent");
  wait_exit (process);
}

/* Streams still running when drain-seconds are over end with their one
 * terminal frame, a shutting_down error, and the gateway exits 0. */
static void
test_drain_time_over (void)
{
  g_autofree char *pipeline = write_drain_pipeline ("drain-over.pipeline", 1, 20);
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autofree char *base_url = NULL;
  SymfonicTestFrame *last;
  gint64 signalled;

  process = start_gateway (launcher, pipeline, "1", &base_url);
  stream = post_typed (session, base_url);
  symfonic_test_stream_wait_frames (stream, 1);

  signalled = g_get_monotonic_time ();
  g_subprocess_send_signal (process, SIGTERM);
  symfonic_test_stream_wait_done (stream);
  g_test_message ("the stream ended %" G_GINT64_FORMAT " ms after the signal",
                  (stream->end_us - signalled) / 1000);
  /* the transcript would take 18 s */
  g_assert_cmpint (stream->end_us - signalled, <, 10 * G_USEC_PER_SEC);
  g_assert_cmpint (stream->end_us - signalled, >=, G_USEC_PER_SEC);
  last = assert_one_terminal (stream, "error");
  g_assert_cmpstr (last->data, ==, "{\"detail\":\"The gateway is shutting down; retry later\",\"status\":503,"
                                   "\"code\":\"shutting_down\"}");
  wait_exit (process);
}

/* A second SIGTERM (or SIGINT) ends the streams of a drain at once, each
 * with its one error frame, and the gateway exits 0. */
static void
test_second_signal_ends_streams (gconstpointer data)
{
  int signum = GPOINTER_TO_INT (data);
  g_autofree char *pipeline = write_drain_pipeline ("second-signal.pipeline", 60, 20);
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autofree char *base_url = NULL;
  g_autofree char *line = NULL;
  SymfonicTestFrame *last;

  process = start_gateway (launcher, pipeline, "1", &base_url);
  stream = post_typed (session, base_url);
  symfonic_test_stream_wait_frames (stream, 1);

  g_subprocess_send_signal (process, signum);
  line = wait_line (process, "stdout", "symfonic-gateway: shutting down");
  g_subprocess_send_signal (process, signum);
  symfonic_test_stream_wait_done (stream);

  last = assert_one_terminal (stream, "error");
  g_assert_cmpstr (last->data, ==, "{\"detail\":\"The gateway is shutting down; retry later\",\"status\":503,"
                                   "\"code\":\"shutting_down\"}");
  wait_exit (process);
}

/* A pipeline whose typed route plays @transcript at @time_scale behind a
 * rate limit of three streams (and one in a thousand seconds more); the
 * route /open plays it without the limit. @gateway_keys go to [gateway]. */
static char *
reload_pipeline (const char *gateway_keys,
                 const char *transcript,
                 guint       time_scale)
{
  g_autofree char *transcripts = g_test_build_filename (G_TEST_DIST, "..", "data", "transcripts", NULL);
  g_autofree char *tokens = g_test_build_filename (G_TEST_DIST, "..", "data", "demo-tokens.ini", NULL);

  return g_strdup_printf ("[gateway]\n"
                          "%s"
                          "\n"
                          "[route:typed]\n"
                          "path=/api/v1/stream/typed\n"
                          "kind=typed\n"
                          "source=demo\n"
                          "stages=auth;limit\n"
                          "\n"
                          "[route:open]\n"
                          "path=/open\n"
                          "kind=typed\n"
                          "source=demo\n"
                          "\n"
                          "[source:demo]\n"
                          "type=replay\n"
                          "transcripts=%s\n"
                          "default-transcript=%s\n"
                          "time-scale=%u\n"
                          "\n"
                          "[stage:auth]\n"
                          "type=auth\n"
                          "tokens-file=%s\n"
                          "\n"
                          "[stage:limit]\n"
                          "type=rate-limit\n"
                          "rate=0.001\n"
                          "burst=3\n",
                          gateway_keys, transcripts, transcript, time_scale, tokens);
}

static const char *
final_text (SymfonicTestStream *stream)
{
  SymfonicTestFrame *last = assert_one_terminal (stream, "ResponseCompleteEvent");
  g_autoptr(JsonNode) node = symfonic_test_json_parse (last->data);

  /* kept alive by the frame's data for the caller */
  g_object_set_data_full (G_OBJECT (stream->message), "text",
                          g_strdup (json_object_get_string_member (json_node_get_object (node), "text")),
                          g_free);
  return g_object_get_data (G_OBJECT (stream->message), "text");
}

/* SIGHUP serves the file as it is now: new requests get the new source
 * setting, the stream in flight finishes on the pipeline it started with,
 * the unchanged rate-limit stage keeps its bucket, and a setting that needs
 * a restart says so. A file that does not load is refused with its file,
 * line and key, and the running pipeline serves on. */
static void
test_reload (void)
{
  g_autofree char *first = reload_pipeline ("", "reasoning", 8);
  g_autofree char *second = reload_pipeline ("keepalive-timeout=60\n", "plain", 0);
  g_autofree char *path = write_pipeline ("reload.pipeline", first);
  g_autoptr(GSubprocessLauncher) launcher =
    g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) old = NULL;
  g_autoptr(SymfonicTestStream) fresh = NULL;
  g_autoptr(SymfonicTestStream) last_admitted = NULL;
  g_autoptr(SymfonicTestStream) open = NULL;
  g_autoptr(SymfonicTestResponse) limited = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *base_url = NULL;
  g_autofree char *url = NULL;
  g_autofree char *open_url = NULL;
  g_autofree char *line = NULL;
  g_autofree char *warning = NULL;
  g_autofree char *refusal = NULL;
  g_autofree char *where = NULL;

  process = start_gateway (launcher, path, "2", &base_url);
  url = g_strconcat (base_url, "api/v1/stream/typed", NULL);
  open_url = g_strconcat (base_url, "open", NULL);
  old = post_typed (session, base_url);
  symfonic_test_stream_wait_frames (old, 1);

  g_file_set_contents (path, second, -1, &error);
  g_assert_no_error (error);
  g_subprocess_send_signal (process, SIGHUP);
  line = wait_line (process, "stdout", "symfonic-gateway: reloaded ");
  /* 7 s of reasoning: it was in flight during the reload */
  g_assert_false (old->done);
  warning = wait_line (process, "stderr", "");
  g_assert_nonnull (strstr (warning, "[gateway] keepalive-timeout changed; it takes effect only when the "
                                     "gateway is restarted"));

  fresh = post_typed (session, base_url);
  symfonic_test_stream_wait_done (fresh);
  g_assert_cmpstr (final_text (fresh), ==,
                   "The sky looks blue because air molecules scatter short wavelengths of sunlight more than "
                   "long ones.");

  /* the bucket of three went on counting: the old stream took one */
  last_admitted = post_typed (session, base_url);
  symfonic_test_stream_wait_done (last_admitted);
  assert_one_terminal (last_admitted, "ResponseCompleteEvent");
  limited = symfonic_test_request (session, "POST", url, "application/json", "{\"query\":\"why?\"}",
                                   "Authorization", "Bearer demo-token-alice", "X-Tenant-ID", "acme", NULL);
  g_assert_cmpuint (limited->status, ==, 429);

  symfonic_test_stream_wait_done (old);
  g_assert_true (g_str_has_prefix (final_text (old), "Bread goes stale mainly because its starch recrystallizes"));

  g_file_set_contents (path, "[route:typed]\npath=/x\nsource=demo\nkind=typed\n\n[source:demo]\ntype=replay\n"
                             "time-scale=fast\n", -1, &error);
  g_assert_no_error (error);
  g_subprocess_send_signal (process, SIGHUP);
  refusal = wait_line (process, "stderr", "symfonic-gateway: reload refused");
  where = g_strdup_printf ("%s:8: [source:demo] time-scale:", path);
  g_assert_nonnull (strstr (refusal, where));

  open = symfonic_test_stream_post (session, open_url, "{\"query\":\"why?\"}", NULL);
  symfonic_test_stream_wait_done (open);
  g_assert_cmpstr (final_text (open), ==,
                   "The sky looks blue because air molecules scatter short wavelengths of sunlight more than "
                   "long ones.");

  stop_gateway (process, SIGTERM);
}

/* The next message the gateway sent to its service manager. */
static char *
receive_notice (GSocket *notify)
{
  g_autoptr(GError) error = NULL;
  char buffer[256];
  gssize n;

  n = g_socket_receive (notify, buffer, sizeof buffer - 1, NULL, &error);
  g_assert_no_error (error);
  buffer[n] = '\0';
  g_test_message ("notified: %s", buffer);
  return g_strdup (buffer);
}

/* Started by systemd with the listening socket passed in (LISTEN_FDS,
 * LISTEN_PID) and a notification socket: the gateway serves on the passed
 * socket, not on its pipeline's listen address, says READY=1 once it
 * accepts, RELOADING=1 then READY=1 around a reload, and STOPPING=1. */
static void
test_socket_activation (void)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestResponse) response = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GDataInputStream) output = NULL;
  g_autoptr(GSocket) listener = NULL;
  g_autoptr(GSocket) notify = NULL;
  g_autoptr(GSocketAddress) notify_address = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *notify_path = g_build_filename (g_get_user_runtime_dir (), "notify", NULL);
  g_autofree char *banner = NULL;
  g_autofree char *expected = NULL;
  g_autofree char *url = NULL;
  g_autofree char *ready = NULL;
  g_autofree char *reloading = NULL;
  g_autofree char *ready_again = NULL;
  g_autofree char *stopping = NULL;
  guint16 port;

  listener = symfonic_test_loopback_socket (TRUE, &port);
  g_assert_cmpint (g_mkdir_with_parents (g_get_user_runtime_dir (), 0700), ==, 0);
  notify = g_socket_new (G_SOCKET_FAMILY_UNIX, G_SOCKET_TYPE_DATAGRAM, G_SOCKET_PROTOCOL_DEFAULT, &error);
  g_assert_no_error (error);
  notify_address = g_unix_socket_address_new (notify_path);
  g_socket_bind (notify, notify_address, FALSE, &error);
  g_assert_no_error (error);
  g_socket_set_timeout (notify, SYMFONIC_TEST_WAIT_MS / 1000);

  g_subprocess_launcher_take_fd (launcher, dup (g_socket_get_fd (listener)), 3);
  g_subprocess_launcher_setenv (launcher, "LISTEN_FDS", "1", TRUE);
  g_subprocess_launcher_setenv (launcher, "NOTIFY_SOCKET", notify_path, TRUE);
  /* LISTEN_PID names the process the socket is for: the shell's pid is
   * the gateway's once it execs it */
  process = g_subprocess_launcher_spawn (launcher, &error, "/bin/sh", "-c", "LISTEN_PID=$$ exec \"$0\" \"$@\"",
                                         binary ("SYMFONIC_GATEWAY"), "--workers", "2", NULL);
  g_assert_no_error (error);
  output = g_data_input_stream_new (g_subprocess_get_stdout_pipe (process));
  g_object_set_data_full (G_OBJECT (process), "stdout", g_object_ref (output), g_object_unref);

  banner = read_line (output);
  g_test_message ("banner: %s", banner);
  expected = g_strdup_printf (" on http://127.0.0.1:%u/", port);
  g_assert_true (g_str_has_suffix (banner, expected));
  ready = receive_notice (notify);
  g_assert_cmpstr (ready, ==, "READY=1");

  url = g_strdup_printf ("http://127.0.0.1:%u/healthz", port);
  response = symfonic_test_request (session, "GET", url, NULL, NULL, NULL);
  g_assert_cmpuint (response->status, ==, 200);

  g_subprocess_send_signal (process, SIGHUP);
  reloading = receive_notice (notify);
  g_assert_true (g_str_has_prefix (reloading, "RELOADING=1\nMONOTONIC_USEC="));
  ready_again = receive_notice (notify);
  g_assert_cmpstr (ready_again, ==, "READY=1");

  g_subprocess_send_signal (process, SIGTERM);
  stopping = receive_notice (notify);
  g_assert_cmpstr (stopping, ==, "STOPPING=1");
  wait_exit (process);
  g_unlink (notify_path);
}

/* Passed a socket that is bound but not listening, the gateway refuses to
 * start, with an error that says why, rather than spin on it. */
static void
test_socket_activation_not_listening (void)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE |
                                                                       G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GSocket) socket = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;
  gboolean exited = FALSE;
  guint16 port;

  socket = symfonic_test_loopback_socket (FALSE, &port);
  g_subprocess_launcher_take_fd (launcher, dup (g_socket_get_fd (socket)), 3);
  g_subprocess_launcher_setenv (launcher, "LISTEN_FDS", "1", TRUE);
  process = g_subprocess_launcher_spawn (launcher, &error, "/bin/sh", "-c", "LISTEN_PID=$$ exec \"$0\" \"$@\"",
                                         binary ("SYMFONIC_GATEWAY"), "--workers", "2", NULL);
  g_assert_no_error (error);
  g_subprocess_wait_async (process, NULL, wait_cb, &exited);
  if (!symfonic_test_iterate_until (NULL, is_set, &exited, SYMFONIC_TEST_WAIT_MS))
    {
      g_subprocess_force_exit (process);
      g_assert_true (symfonic_test_iterate_until (NULL, is_set, &exited, SYMFONIC_TEST_WAIT_MS));
      g_assert_not_reached ();
    }
  g_subprocess_communicate_utf8 (process, NULL, NULL, NULL, &err, &error);
  g_assert_no_error (error);
  g_test_message ("gateway: %s", err);
  g_assert_true (g_subprocess_get_if_exited (process));
  g_assert_cmpint (g_subprocess_get_exit_status (process), !=, 0);
  g_assert_nonnull (strstr (err, "The socket passed in is not listening"));
}

/* The runtime source's connections go direct: nothing looks up the
 * desktop's proxy settings, which would start a dconf thread. */
static void
test_runtime_starts_no_settings_thread (void)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autofree char *pipeline = NULL;
  g_autofree char *text = NULL;
  g_autofree char *base_url = NULL;
  g_autofree char *url = NULL;
  g_autofree char *tasks = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestResponse) response = NULL;
  g_autoptr(GDir) dir = NULL;
  g_autoptr(GError) error = NULL;
  const char *name;

  text = g_strdup_printf ("[route:chat]\npath=/chat\nkind=chat\nsource=up\n\n"
                          "[source:up]\ntype=runtime\nurl=http://127.0.0.1:%u/run\n",
                          symfonic_test_closed_port ());
  pipeline = write_pipeline ("runtime.pipeline", text);
  /* as an operator runs it: GIO picks its default proxy resolver */
  g_subprocess_launcher_unsetenv (launcher, "GIO_USE_PROXY_RESOLVER");
  process = start_gateway (launcher, pipeline, "1", &base_url);
  url = g_strconcat (base_url, "chat", NULL);

  response = symfonic_test_request (session, "POST", url, "application/json", "{\"query\":\"hi\"}", NULL);
  g_assert_cmpuint (response->status, ==, 500);

  tasks = g_strdup_printf ("/proc/%s/task", g_subprocess_get_identifier (process));
  dir = g_dir_open (tasks, 0, &error);
  g_assert_no_error (error);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (tasks, name, "comm", NULL);
      g_autofree char *comm = NULL;

      if (!g_file_get_contents (path, &comm, NULL, NULL))
        continue;
      g_test_message ("thread %s: %s", name, g_strstrip (comm));
      g_assert_cmpstr (comm, !=, "dconf worker");
    }

  stop_gateway (process, SIGTERM);
}

/* Junk on the plugin path (a text file named like a module, a module with
 * malformed info) is skipped with a warning naming it: symfonic-inspect
 * lists the rest and the gateway serves. */
static void
test_junk_on_plugin_path (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("symfonic-junk-XXXXXX", &error);
  g_autofree char *junk = g_build_filename (dir, "libjunk." G_MODULE_SUFFIX, NULL);
  g_autofree char *malformed = g_build_filename (dir, "libsymfonic-test-malformed." G_MODULE_SUFFIX, NULL);
  g_autoptr(GFile) malformed_source = g_file_new_for_path (TEST_PLUGIN_MALFORMED_DIR
                                                           "/libsymfonic-test-malformed." G_MODULE_SUFFIX);
  g_autoptr(GFile) malformed_copy = g_file_new_for_path (malformed);
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  g_assert_no_error (error);
  g_file_set_contents (junk, "not a shared object\n", -1, &error);
  g_assert_no_error (error);
  g_file_copy (malformed_source, malformed_copy, G_FILE_COPY_NONE, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_setenv ("SYMFONIC_PLUGIN_PATH", dir, TRUE);

  g_assert_cmpint (run (&out, &err, binary ("SYMFONIC_INSPECT"), NULL), ==, 0);
  g_test_message ("stderr: %s", err);
  g_assert_true (g_regex_match_simple ("^  replay +source +SymfonicReplaySource", out, G_REGEX_MULTILINE, 0));
  g_assert_nonnull (strstr (err, junk));
  g_assert_nonnull (strstr (err, malformed));

  test_serve_and_stop (GINT_TO_POINTER (SIGTERM));

  g_unsetenv ("SYMFONIC_PLUGIN_PATH");
  g_unlink (junk);
  g_unlink (malformed);
  g_rmdir (dir);
}

/* --- script plugins ----------------------------------------------------- */

/* A language's loader plugin is built only with its option and
 * introspection. */
static gboolean
loader_built (const char *module,
              const char *language)
{
  g_autofree char *name = g_strconcat (module, "." G_MODULE_SUFFIX, NULL);
  g_autofree char *path = g_test_build_filename (G_TEST_BUILT, "..", "plugins", name, NULL);
  g_autofree char *reason = NULL;

  if (g_file_test (path, G_FILE_TEST_EXISTS))
    return TRUE;
  reason = g_strdup_printf ("the %s loader is not built", language);
  g_test_skip (reason);
  return FALSE;
}

static gboolean
python_loader_built (void)
{
  return loader_built ("libsymfonic-python", "Python");
}

static gboolean
gjs_loader_built (void)
{
  return loader_built ("libsymfonic-gjs", "JavaScript");
}

/* A folder of script plugins first on the plugin path, then the C test
 * stage's. */
static char *
script_plugin_path (const char *folder)
{
  g_autofree char *scripts = g_test_build_filename (G_TEST_DIST, "integration", folder, NULL);

  return g_strjoin (G_SEARCHPATH_SEPARATOR_S, scripts, SYMFONIC_TEST_PLUGIN_DIR, NULL);
}

/* the script stages the route may use beside the C stage `upper` */
#define SUFFIX_GROUP "\n[stage:suffix]\ntype=py-suffix\nsuffix=!\n"
#define PREFIX_GROUP "\n[stage:prefix]\ntype=js-prefix\nprefix=>\n"

/* A route of @stages: upper, a C stage that upper-cases, then those of
 * @groups: suffix, a Python stage that appends "!", prefix, a JavaScript
 * stage that puts ">" first. @plugin_path is the [gateway] key's value, or
 * %NULL. */
static char *
write_stages_pipeline (const char *plugin_path,
                       const char *stages,
                       const char *groups)
{
  g_autofree char *transcripts = g_test_build_filename (G_TEST_DIST, "integration", "transcripts", NULL);
  g_autofree char *key = plugin_path != NULL ? g_strdup_printf ("plugin-path=%s\n", plugin_path) : g_strdup ("");
  g_autofree char *text = g_strdup_printf ("[gateway]\n"
                                           "%s"
                                           "listen=127.0.0.1:8080\n"
                                           "\n"
                                           "[route:typed]\n"
                                           "path=/api/v1/stream/typed\n"
                                           "kind=typed\n"
                                           "source=fixtures\n"
                                           "stages=%s\n"
                                           "\n"
                                           "[source:fixtures]\n"
                                           "type=replay\n"
                                           "transcripts=%s\n"
                                           "default-transcript=paced\n"
                                           "transcript-header=X-Symfonic-Transcript\n"
                                           "time-scale=0.1\n"
                                           "\n"
                                           "[stage:upper]\n"
                                           "type=test-upper\n"
                                           "%s",
                                           key, stages, transcripts, groups);

  return write_pipeline ("mixed.pipeline", text);
}

/* A C stage, then a Python stage. */
static char *
write_mixed_pipeline (const char *plugin_path)
{
  return write_stages_pipeline (plugin_path, "upper;suffix", SUFFIX_GROUP);
}

static void
assert_delta (SymfonicTestFrame *frame,
              const char        *data)
{
  g_assert_cmpstr (frame->event, ==, "TextDeltaEvent");
  g_assert_cmpstr (frame->data, ==, data);
}

/* A script that does not parse, or raises as it loads, stops the gateway
 * from starting with its file and line. */
static void
test_script_load_error (gconstpointer data)
{
  const char *const *expected = data;
  g_autofree char *plugin_path = NULL;
  g_autofree char *pipeline = NULL;
  g_autofree char *script = NULL;
  g_autofree char *message = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  int status;

  if (g_str_has_suffix (expected[1], ".js") ? !gjs_loader_built () : !python_loader_built ())
    return;

  plugin_path = g_test_build_filename (G_TEST_DIST, "integration", "broken-scripts", expected[0], NULL);
  pipeline = write_mixed_pipeline (NULL);
  g_setenv ("SYMFONIC_PLUGIN_PATH", plugin_path, TRUE);
  status = run (&out, &err, binary ("SYMFONIC_GATEWAY"), "--check", pipeline, NULL);
  g_unsetenv ("SYMFONIC_PLUGIN_PATH");

  script = g_test_build_filename (G_TEST_DIST, "integration", "broken-scripts", expected[0], expected[1], NULL);
  message = g_strdup_printf ("symfonic-gateway: Cannot load %s:%s\n", script, expected[2]);
  g_assert_cmpint (status, ==, 1);
  g_assert_true (g_str_has_suffix (err, message));
  /* what the exception said, in the log above */
  if (expected[3] != NULL)
    g_assert_nonnull (strstr (err, expected[3]));
}

/* Copies the file @source into @folder, made if need be, as @name; returns
 * the copy's path. */
static char *
copy_into_folder (const char *source,
                  const char *folder,
                  const char *name)
{
  g_autofree char *copy = g_build_filename (folder, name, NULL);
  g_autofree char *contents = NULL;
  gsize length;
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (g_mkdir_with_parents (folder, 0700), ==, 0);
  g_assert_true (g_file_get_contents (source, &contents, &length, &error));
  g_assert_true (g_file_set_contents (copy, contents, length, &error));
  g_assert_no_error (error);

  return g_steal_pointer (&copy);
}

/* `[gateway] plugin-path` loads the folders it lists, a relative one from
 * the pipeline's own folder; a folder that is not there is an error at its
 * line. */
static void
test_python_plugin_path_key (void)
{
  g_autofree char *script = g_test_build_filename (G_TEST_DIST, "integration", "scripts", "suffix.py", NULL);
  g_autofree char *folder = g_build_filename (g_get_user_cache_dir (), "script-plugins", NULL);
  g_autofree char *copy = NULL;
  g_autofree char *plugin_path = g_strjoin (";", "script-plugins", SYMFONIC_TEST_PLUGIN_DIR, NULL);
  g_autofree char *pipeline = NULL;
  g_autofree char *message = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  if (!python_loader_built ())
    return;

  copy = copy_into_folder (script, folder, "suffix.py");

  pipeline = write_mixed_pipeline (plugin_path);
  g_assert_cmpint (run (&out, &err, binary ("SYMFONIC_GATEWAY"), "--check", pipeline, NULL), ==, 0);
  g_assert_true (g_str_has_suffix (out, "mixed.pipeline: OK, 1 route\n"));
  g_clear_pointer (&pipeline, g_free);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  pipeline = write_mixed_pipeline ("no-such-folder");
  g_assert_cmpint (run (&out, &err, binary ("SYMFONIC_GATEWAY"), "--check", pipeline, NULL), ==, 1);
  message = g_strdup_printf ("%s:2: [gateway] plugin-path: %s%sno-such-folder: expected a folder, found nothing: "
                             "it is missing\n",
                             pipeline, g_get_user_cache_dir (), G_DIR_SEPARATOR_S);
  g_test_message ("stderr: %s", err);
  /* the first line; the types the folders would have registered follow */
  g_assert_true (g_str_has_prefix (err, message));
  g_assert_nonnull (strstr (err, "(a [gateway] plugin-path folder did not load)"));
}

/* --- Python stages whatever the shell ------------------------------------ */

/* A stage that imports a module only a virtualenv has. */
static const char venv_stage[] =
  "from gi.repository import GObject, Symfonic\n"
  "import venvsuffix\n"
  "\n"
  "class VenvSuffix(GObject.Object, Symfonic.Stage):\n"
  "    __gtype_name__ = 'TestVenvSuffixStage'\n"
  "\n"
  "    def do_process(self, stream, event):\n"
  "        if event.get_kind() == Symfonic.EventKind.TEXT_DELTA:\n"
  "            text, _ = event.get_text()\n"
  "            event = Symfonic.Event.new_text_delta(text + venvsuffix.SUFFIX)\n"
  "        stream.emit(event)\n"
  "        return True\n"
  "\n"
  "Symfonic.register_stage_type(VenvSuffix.__gtype__, 'venv-suffix')\n";

static char *
write_venv_pipeline (const char *dir,
                     gboolean    with_python_path,
                     const char *site_packages)
{
  g_autofree char *transcripts = g_test_build_filename (G_TEST_DIST, "integration", "transcripts", NULL);
  g_autofree char *key = with_python_path ? g_strdup_printf ("python-path=%s\n", site_packages) : g_strdup ("");
  g_autofree char *path = g_build_filename (dir, with_python_path ? "venv.pipeline" : "no-venv.pipeline", NULL);
  g_autofree char *text = g_strdup_printf ("[gateway]\n"
                                           "%s"
                                           "plugin-path=plugins\n"
                                           "\n"
                                           "[route:typed]\n"
                                           "path=/api/v1/stream/typed\n"
                                           "source=fixtures\n"
                                           "stages=venv\n"
                                           "\n"
                                           "[source:fixtures]\n"
                                           "type=replay\n"
                                           "transcripts=%s\n"
                                           "default-transcript=paced\n"
                                           "time-scale=0\n"
                                           "\n"
                                           "[stage:venv]\n"
                                           "type=venv-suffix\n",
                                           key, transcripts);
  g_autoptr(GError) error = NULL;

  g_assert_true (g_file_set_contents (path, text, -1, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&path);
}

/* The shells a Python stage must load in: a virtualenv without PyGObject
 * activated, another python3 first on PATH (whose prefix holds a standard
 * library of one stub module), PYTHONHOME and PYTHONPATH pointing there. */
static const char * const shells[] = { "venv", "other-python-first", "pythonhome" };

static void
set_shell (GSubprocessLauncher *launcher,
           const char          *shell,
           const char          *venv,
           const char          *other)
{
  g_autofree char *venv_bin = g_build_filename (venv, "bin", NULL);
  g_autofree char *other_bin = g_build_filename (other, "bin", NULL);
  g_autofree char *path = NULL;

  if (g_str_equal (shell, "venv"))
    path = g_strjoin (":", venv_bin, g_getenv ("PATH"), NULL);
  else
    path = g_strjoin (":", other_bin, venv_bin, g_getenv ("PATH"), NULL);
  g_subprocess_launcher_setenv (launcher, "PATH", path, TRUE);
  g_subprocess_launcher_setenv (launcher, "VIRTUAL_ENV", venv, TRUE);
  if (g_str_equal (shell, "pythonhome"))
    {
      g_subprocess_launcher_setenv (launcher, "PYTHONHOME", other, TRUE);
      g_subprocess_launcher_setenv (launcher, "PYTHONPATH", other, TRUE);
    }
}

/* The embedded interpreter is the one the loader was built against, with
 * its own prefix, whatever the shell: a `.py` plugin loads and serves with
 * a virtualenv without PyGObject activated and another python3 first on
 * PATH, and imports from the virtualenv only what `[gateway] python-path`
 * names; without it, the failure names the interpreter and the path it
 * searched. */
static void
test_python_whatever_the_shell (void)
{
  g_autofree char *dir = g_build_filename (g_get_user_cache_dir (), "python-shells", NULL);
  g_autofree char *venv = g_build_filename (dir, "venv", NULL);
  g_autofree char *other = g_build_filename (dir, "other", NULL);
  g_autofree char *plugins = g_build_filename (dir, "plugins", NULL);
  g_autofree char *stage = g_build_filename (plugins, "venv_suffix.py", NULL);
  g_autofree char *lib = g_build_filename (venv, "lib", NULL);
  g_autofree char *site_packages = NULL;
  g_autofree char *helper = NULL;
  g_autofree char *other_bin = g_build_filename (other, "bin", NULL);
  g_autofree char *other_python = NULL;
  g_autofree char *other_stdlib = NULL;
  g_autofree char *stub = NULL;
  g_autofree char *with_path = NULL;
  g_autofree char *without_path = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(GDir) versions = NULL;
  g_autoptr(GError) error = NULL;
  const char *version = NULL;
  const char *name;
  int status = 0;

  if (!python_loader_built ())
    return;

  /* a virtualenv of the system's Python, without PyGObject */
  g_assert_cmpint (g_mkdir_with_parents (plugins, 0700), ==, 0);
  g_spawn_sync (NULL, (char *[]) { "/usr/bin/python3", "-m", "venv", "--without-pip", venv, NULL }, NULL,
                G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error);
  g_assert_no_error (error);
  g_test_message ("venv: %s%s", out, err);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  versions = g_dir_open (lib, 0, &error);
  g_assert_no_error (error);
  while ((name = g_dir_read_name (versions)) != NULL)
    {
      if (g_str_has_prefix (name, "python3"))
        version = name;
    }
  g_assert_nonnull (version);
  site_packages = g_build_filename (lib, version, "site-packages", NULL);
  helper = g_build_filename (site_packages, "venvsuffix.py", NULL);
  g_assert_true (g_file_set_contents (helper, "SUFFIX = ' (venv)'\n", -1, &error));
  g_assert_true (g_file_set_contents (stage, venv_stage, -1, &error));

  /* another python3: the prefix Python would take from it has a standard
   * library of one stub module, enough to be taken for one */
  other_python = g_build_filename (other_bin, "python3", NULL);
  other_stdlib = g_build_filename (other, "lib", version, NULL);
  stub = g_build_filename (other_stdlib, "os.py", NULL);
  g_assert_cmpint (g_mkdir_with_parents (other_stdlib, 0700), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (other_bin, 0700), ==, 0);
  g_assert_true (g_file_set_contents (other_python, "#!/bin/sh\nexit 1\n", -1, &error));
  g_assert_cmpint (g_chmod (other_python, 0755), ==, 0);
  g_assert_true (g_file_set_contents (stub, "", -1, &error));
  g_assert_no_error (error);

  with_path = write_venv_pipeline (dir, TRUE, site_packages);
  without_path = write_venv_pipeline (dir, FALSE, site_packages);

  for (guint i = 0; i < G_N_ELEMENTS (shells); i++)
    {
      g_autoptr(GSubprocessLauncher) launcher =
        g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
      g_autoptr(GSubprocess) process = NULL;

      g_test_message ("shell: %s", shells[i]);
      set_shell (launcher, shells[i], venv, other);

      process = g_subprocess_launcher_spawn (launcher, &error, binary ("SYMFONIC_GATEWAY"), "--check", with_path,
                                             NULL);
      g_assert_no_error (error);
      g_subprocess_communicate_utf8 (process, NULL, NULL, &out, &err, &error);
      g_assert_no_error (error);
      g_test_message ("stdout: %s\nstderr: %s", out, err);
      g_assert_cmpint (g_subprocess_get_exit_status (process), ==, 0);
      g_assert_true (g_str_has_suffix (out, "venv.pipeline: OK, 1 route\n"));
      g_clear_pointer (&out, g_free);
      g_clear_pointer (&err, g_free);
      g_clear_object (&process);

      /* the virtualenv's own packages only when named */
      process = g_subprocess_launcher_spawn (launcher, &error, binary ("SYMFONIC_GATEWAY"), "--check", without_path,
                                             NULL);
      g_assert_no_error (error);
      g_subprocess_communicate_utf8 (process, NULL, NULL, &out, &err, &error);
      g_assert_no_error (error);
      g_test_message ("stderr: %s", err);
      g_assert_cmpint (g_subprocess_get_exit_status (process), ==, 1);
      g_assert_nonnull (strstr (err, "[gateway] plugin-path: Cannot load "));
      g_assert_nonnull (strstr (err, "venv_suffix.py:2: ModuleNotFoundError: No module named 'venvsuffix' "
                                     "(tried Python 3."));
      g_assert_nonnull (strstr (err, ", which searched /"));
      g_assert_null (strstr (err, site_packages));
      g_assert_null (strstr (err, other));
      g_clear_pointer (&out, g_free);
      g_clear_pointer (&err, g_free);
    }

  /* a PyGObject the interpreter cannot import is named with the
   * interpreter and the path it searched, python-path's folders first */
  {
    g_autofree char *shadow = g_build_filename (dir, "shadow", NULL);
    g_autofree char *shadow_gi = g_build_filename (shadow, "gi", NULL);
    g_autofree char *init = g_build_filename (shadow_gi, "__init__.py", NULL);
    g_autofree char *shadowed = write_venv_pipeline (dir, TRUE, shadow);

    g_assert_cmpint (g_mkdir_with_parents (shadow_gi, 0700), ==, 0);
    g_assert_true (g_file_set_contents (init, "raise ImportError('not this gi')\n", -1, &error));
    g_assert_no_error (error);
    g_assert_cmpint (run (&out, &err, binary ("SYMFONIC_GATEWAY"), "--check", shadowed, NULL), ==, 1);
    g_test_message ("stderr: %s", err);
    g_assert_nonnull (strstr (err, "[gateway] plugin-path: Cannot import PyGObject and the Symfonic typelib: "
                                   "ImportError: not this gi (tried Python 3."));
    g_assert_nonnull (strstr (err, shadow));
    g_clear_pointer (&out, g_free);
    g_clear_pointer (&err, g_free);
    /* the next pipeline names the virtualenv again */
    g_free (write_venv_pipeline (dir, TRUE, site_packages));
  }

  /* and it serves, in the worst of those shells */
  {
    g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
    g_autoptr(SoupSession) session = symfonic_test_session_new ();
    g_autoptr(SymfonicTestStream) stream = NULL;
    g_autoptr(GSubprocess) process = NULL;
    g_autofree char *base_url = NULL;
    g_autofree char *url = NULL;

    set_shell (launcher, "pythonhome", venv, other);
    process = start_gateway (launcher, with_path, "1", &base_url);
    url = g_strconcat (base_url, "api/v1/stream/typed", NULL);
    stream = symfonic_test_stream_post (session, url, "{\"query\":\"hi\"}", NULL);
    symfonic_test_stream_wait_done (stream);
    g_assert_cmpuint (stream->status, ==, 200);
    assert_delta (g_ptr_array_index (stream->frames, 0), "{\"text\":\"one  (venv)\"}");
    assert_one_terminal (stream, "ResponseCompleteEvent");
    stop_gateway (process, SIGTERM);
  }
}

/* A script plugin of the scripts folder, and how symfonic-inspect shows
 * it. */
typedef struct
{
  const char *loader;
  const char *language;
  const char *file;
  /* a route of the C stage and the script's */
  const char *stages;
  const char *groups;
  const char *type;
  /* its line in the list of plugins, above its file */
  const char *plugin_line;
  const char *type_line;
  const char *properties;
} ScriptPlugin;

static const ScriptPlugin python_plugin = {
  "libsymfonic-python", "Python", "suffix.py", "upper;suffix", SUFFIX_GROUP, "py-suffix",
  "  suffix                      Python stages\n",
  "  py-suffix        stage   TestPySuffixStage            suffix\n",
  "  suffix               Appended to every text delta\n"
  "                       type: gchararray\n"
  "                       default: \"\"\n",
};

static const ScriptPlugin js_plugin = {
  "libsymfonic-gjs", "JavaScript", "prefix.js", "upper;prefix", PREFIX_GROUP, "js-prefix",
  "  prefix                      JavaScript stages\n",
  "  js-prefix        stage   TestJsPrefixStage            prefix\n",
  "  prefix               Put before every text delta\n"
  "                       type: gchararray\n"
  "                       default: \"\"\n",
};

/* `--check` validates a pipeline using a script stage, and
 * symfonic-inspect lists the script, its language and its type, and shows
 * the type's properties. */
static void
test_script_check_and_inspect (gconstpointer data)
{
  const ScriptPlugin *plugin = data;
  g_autofree char *plugin_path = NULL;
  g_autofree char *pipeline = NULL;
  g_autofree char *script = NULL;
  g_autofree char *listed = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  if (!loader_built (plugin->loader, plugin->language))
    return;

  plugin_path = script_plugin_path ("scripts");
  pipeline = write_stages_pipeline (NULL, plugin->stages, plugin->groups);
  g_setenv ("SYMFONIC_PLUGIN_PATH", plugin_path, TRUE);

  g_assert_cmpint (run (&out, &err, binary ("SYMFONIC_GATEWAY"), "--check", pipeline, NULL), ==, 0);
  g_assert_true (g_str_has_suffix (out, "mixed.pipeline: OK, 1 route\n"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (run (&out, &err, binary ("SYMFONIC_INSPECT"), NULL), ==, 0);
  g_clear_pointer (&err, g_free);
  script = g_test_build_filename (G_TEST_DIST, "integration", "scripts", plugin->file, NULL);
  listed = g_strdup_printf ("%s    %s\n", plugin->plugin_line, script);
  g_assert_nonnull (strstr (out, listed));
  g_assert_nonnull (strstr (out, plugin->type_line));
  g_clear_pointer (&out, g_free);

  g_assert_cmpint (run (&out, &err, binary ("SYMFONIC_INSPECT"), plugin->type, NULL), ==, 0);
  g_unsetenv ("SYMFONIC_PLUGIN_PATH");
  g_assert_nonnull (strstr (out, plugin->properties));
}

/* A route mixing languages, and what its streams say. */
typedef struct
{
  const char *stages;
  const char *groups;
  /* the deltas of a whole stream, and the first of one that fails */
  const char *expected[7];
  const char *fine;
  /* what the script stage that throws logs: a line matching the regular
   * expression `thrown`, then, a few lines on, the innermost frame of its
   * stack, `frame` in the script folder */
  const char *thrown;
  const char *frame;
} MixedRoute;

static const MixedRoute c_and_python = {
  "upper;suffix", SUFFIX_GROUP,
  { "ONE !", "TWO !", "THREE !", "FOUR !", "FIVE !", "SIX !", "SEVEN!" }, "FINE !",
  "^\\(symfonic-gateway:[0-9]+\\): symfonic-python-WARNING \\*\\*: [0-9:.]+: "
  "TestPySuffixStage: the process hook raised an exception:$",
  "suffix.py\", line 16, in do_process",
};

static const MixedRoute three_languages = {
  "upper;prefix;suffix", PREFIX_GROUP SUFFIX_GROUP,
  { ">ONE !", ">TWO !", ">THREE !", ">FOUR !", ">FIVE !", ">SIX !", ">SEVEN!" }, ">FINE !",
  "^\\(symfonic-gateway:[0-9]+\\): symfonic-gjs-WARNING \\*\\*: [0-9:.]+: "
  "PrefixStage\\.vfunc_process: TypeError: the test stage was told to fail$", "prefix.js:19:",
};

/* A whole stream of @route: its deltas, then its terminal. */
static void
assert_route_answer (SymfonicTestStream *stream,
                     const MixedRoute   *route)
{
  SymfonicTestFrame *last;

  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, 200);
  g_assert_cmpuint (stream->frames->len, >=, G_N_ELEMENTS (route->expected) + 1);
  for (guint i = 0; i < G_N_ELEMENTS (route->expected); i++)
    {
      g_autofree char *delta = g_strdup_printf ("{\"text\":\"%s\"}", route->expected[i]);

      assert_delta (g_ptr_array_index (stream->frames, i), delta);
    }
  last = g_ptr_array_index (stream->frames, stream->frames->len - 1);
  g_assert_cmpstr (last->event, ==, "ResponseCompleteEvent");
}

/* The binary serves a route mixing a C stage and script stages, with the
 * example folder's scripts loaded beside them; a stream whose script stage
 * throws ends with one opaque error frame, the exception's stack in the
 * log and no critical, while a stream of the same route beside it
 * completes; after a reload the route serves as before. */
static void
test_serves_mixed_route (gconstpointer data)
{
  const MixedRoute *route = data;
  g_autoptr(GSubprocessLauncher) launcher =
    g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) good = NULL;
  g_autoptr(SymfonicTestStream) failing = NULL;
  g_autoptr(SymfonicTestStream) reloaded = NULL;
  g_autofree char *scripts = NULL;
  g_autofree char *examples = NULL;
  g_autofree char *plugin_path = NULL;
  g_autofree char *pipeline = NULL;
  g_autofree char *base_url = NULL;
  g_autofree char *url = NULL;
  g_autofree char *fine = NULL;
  g_autofree char *first = NULL;
  g_autofree char *script = NULL;
  g_autofree char *frame = NULL;
  g_autofree char *rest = NULL;
  SymfonicTestFrame *last;

  if (!python_loader_built () || (strstr (route->stages, "prefix") != NULL && !gjs_loader_built ()))
    return;

  scripts = script_plugin_path ("scripts");
  examples = g_test_build_filename (G_TEST_DIST, "..", "plugins", "examples", "redactor", NULL);
  plugin_path = g_strjoin (G_SEARCHPATH_SEPARATOR_S, scripts, examples, NULL);
  pipeline = write_stages_pipeline (NULL, route->stages, route->groups);
  g_subprocess_launcher_setenv (launcher, "SYMFONIC_PLUGIN_PATH", plugin_path, TRUE);
  process = start_gateway (launcher, pipeline, "2", &base_url);
  url = g_strconcat (base_url, "api/v1/stream/typed", NULL);

  good = symfonic_test_stream_post (session, url, "{\"query\":\"hi\"}", NULL);
  failing = symfonic_test_stream_post (session, url, "{\"query\":\"hi\"}",
                                       "X-Symfonic-Transcript", "boom", NULL);
  symfonic_test_stream_wait_done (failing);
  symfonic_test_stream_wait_done (good);

  g_assert_cmpuint (failing->status, ==, 200);
  g_assert_cmpuint (failing->frames->len, ==, 2);
  fine = g_strdup_printf ("{\"text\":\"%s\"}", route->fine);
  assert_delta (g_ptr_array_index (failing->frames, 0), fine);
  last = g_ptr_array_index (failing->frames, 1);
  g_assert_cmpstr (last->event, ==, "error");
  g_assert_cmpstr (last->data, ==, "{\"detail\":\"Internal server error\",\"status\":500}");

  assert_route_answer (good, route);

  script = g_test_build_filename (G_TEST_DIST, "integration", "scripts", route->frame, NULL);
  frame = g_regex_escape_string (script, -1);
  g_free (wait_line_matching (process, "stderr", route->thrown));
  g_free (wait_line_matching (process, "stderr", frame));

  g_subprocess_send_signal (process, SIGHUP);
  g_free (wait_line (process, "stdout", "symfonic-gateway: reloaded "));
  reloaded = symfonic_test_stream_post (session, url, "{\"query\":\"hi\"}", NULL);
  symfonic_test_stream_wait_done (reloaded);
  g_assert_cmpuint (reloaded->status, ==, 200);
  g_assert_cmpuint (reloaded->frames->len, >=, 1);
  first = g_strdup_printf ("{\"text\":\"%s\"}", route->expected[0]);
  assert_delta (g_ptr_array_index (reloaded->frames, 0), first);

  stop_gateway (process, SIGTERM);
  /* the loader made the exception a failure with an error */
  rest = read_rest (process, "stderr");
  g_assert_null (strstr (rest, "CRITICAL"));
}

/* A filter stage written in a script, and what its hooks log. */
typedef struct
{
  const char *type;
  gboolean    (*loader_built) (void);
  /* the line its failing before_filter hook logs, as a regular
   * expression, and the innermost frame of the stack after it */
  const char *thrown;
  const char *frame;
} ScriptFilterStage;

static const ScriptFilterStage python_filter_stage = {
  "py-broken-filter", python_loader_built,
  "^\\(symfonic-gateway:[0-9]+\\): symfonic-python-WARNING \\*\\*: [0-9:.]+: "
  "TestPyBrokenFilterStage: the before_filter hook raised an exception:$",
  "broken-filter-py.py\", line 22, in do_before_filter",
};

static const ScriptFilterStage js_filter_stage = {
  "js-broken-filter", gjs_loader_built,
  "^\\(symfonic-gateway:[0-9]+\\): symfonic-gjs-WARNING \\*\\*: [0-9:.]+: "
  "BrokenFilterStage\\.vfunc_before_filter: TypeError: the filter stage was told to fail$",
  "broken-filter-js.js:24:",
};

/* A Symfonic.FilterStage subclass in a script plugin filters a route's
 * text through its own filter, and the loader wraps the hooks it adds as
 * it wraps a stage's: an exception that is not a GLib.Error in
 * before_filter ends that stream with one opaque error frame, logged with
 * its stack, while a stream beside it completes. */
static void
test_script_filter_stage (gconstpointer data)
{
  const ScriptFilterStage *stage = data;
  g_autoptr(GSubprocessLauncher) launcher =
    g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) good = NULL;
  g_autoptr(SymfonicTestStream) failing = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autofree char *plugin_path = NULL;
  g_autofree char *groups = NULL;
  g_autofree char *pipeline = NULL;
  g_autofree char *base_url = NULL;
  g_autofree char *url = NULL;
  g_autofree char *script = NULL;
  g_autofree char *frame = NULL;
  g_autofree char *rest = NULL;
  static const char * const upper[] = { "ONE ", "TWO ", "THREE ", "FOUR ", "FIVE ", "SIX ", "SEVEN" };
  SymfonicTestFrame *last;

  if (!stage->loader_built ())
    return;

  plugin_path = script_plugin_path ("filter-scripts");
  groups = g_strdup_printf ("\n[stage:filter]\ntype=%s\n", stage->type);
  pipeline = write_stages_pipeline (NULL, "filter", groups);
  g_subprocess_launcher_setenv (launcher, "SYMFONIC_PLUGIN_PATH", plugin_path, TRUE);
  process = start_gateway (launcher, pipeline, "2", &base_url);
  url = g_strconcat (base_url, "api/v1/stream/typed", NULL);

  good = symfonic_test_stream_post (session, url, "{\"query\":\"hi\"}", NULL);
  failing = symfonic_test_stream_post (session, url, "{\"query\":\"hi\"}",
                                       "X-Symfonic-Transcript", "boom", NULL);
  symfonic_test_stream_wait_done (failing);
  symfonic_test_stream_wait_done (good);

  g_assert_cmpuint (failing->status, ==, 200);
  g_assert_cmpuint (failing->frames->len, ==, 2);
  assert_delta (g_ptr_array_index (failing->frames, 0), "{\"text\":\"FINE \"}");
  last = g_ptr_array_index (failing->frames, 1);
  g_assert_cmpstr (last->event, ==, "error");
  g_assert_cmpstr (last->data, ==, "{\"detail\":\"Internal server error\",\"status\":500}");

  g_assert_no_error (good->error);
  g_assert_cmpuint (good->status, ==, 200);
  g_assert_cmpuint (good->frames->len, >=, G_N_ELEMENTS (upper) + 1);
  for (guint i = 0; i < G_N_ELEMENTS (upper); i++)
    {
      g_autofree char *delta = g_strdup_printf ("{\"text\":\"%s\"}", upper[i]);

      assert_delta (g_ptr_array_index (good->frames, i), delta);
    }

  script = g_test_build_filename (G_TEST_DIST, "integration", "filter-scripts", stage->frame, NULL);
  frame = g_regex_escape_string (script, -1);
  g_free (wait_line_matching (process, "stderr", stage->thrown));
  g_free (wait_line_matching (process, "stderr", frame));

  stop_gateway (process, SIGTERM);
  rest = read_rest (process, "stderr");
  g_assert_null (strstr (rest, "CRITICAL"));
}

/* The body of the response to an HTTP/1.0 request posting @body to @path
 * of the gateway at @base_url, on a new connection: the response ends
 * when the connection does. */
static char *
post_body (const char *base_url,
           const char *path,
           const char *body)
{
  g_autofree char *request = g_strdup_printf ("POST %s HTTP/1.0\r\n"
                                              "Host: gateway\r\n"
                                              "Content-Type: application/json\r\n"
                                              "Content-Length: %zu\r\n"
                                              "\r\n"
                                              "%s",
                                              path, strlen (body), body);
  g_autoptr(GString) received = g_string_new (NULL);
  g_autoptr(GSocketConnection) connection =
    symfonic_test_raw_request (port_of (base_url), request, "\r\n\r\n", received);
  GInputStream *input = g_io_stream_get_input_stream (G_IO_STREAM (connection));
  g_autoptr(GError) error = NULL;
  char buffer[4096];
  gssize n;

  while ((n = g_input_stream_read (input, buffer, sizeof buffer, NULL, &error)) > 0)
    g_string_append_len (received, buffer, n);
  g_assert_no_error (error);
  g_test_message ("response: %s", received->str);
  g_assert_true (g_str_has_prefix (received->str, "HTTP/1.0 200 OK\r\n"));
  g_assert_nonnull (strstr (received->str, "\r\nContent-Type: text/event-stream\r\n"));

  return g_strdup (strstr (received->str, "\r\n\r\n") + strlen ("\r\n\r\n"));
}

/* A source written in Python, on the workers: `--check` and
 * symfonic-inspect see it; the gateway streams its words through a C
 * stage and a Python stage, and the source ends the stream, also when
 * the Python stage's hop made it wait for the stream to take more; a
 * start that raises ends its stream with one opaque error frame, and its
 * traceback goes to the log. */
static void
test_python_source (void)
{
  g_autoptr(GSubprocessLauncher) launcher =
    g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GSubprocess) process = NULL;
  g_autofree char *source_folder = g_test_build_filename (G_TEST_DIST, "integration", "python-source", NULL);
  g_autofree char *scripts = script_plugin_path ("scripts");
  g_autofree char *plugin_path = g_strjoin (G_SEARCHPATH_SEPARATOR_S, source_folder, scripts, NULL);
  g_autofree char *script = g_build_filename (source_folder, "words.py", NULL);
  g_autoptr(GString) words = g_string_new (NULL);
  g_autoptr(GString) expected = g_string_new (NULL);
  g_autoptr(GString) answer = g_string_new (NULL);
  g_autofree char *text = NULL;
  g_autofree char *pipeline = NULL;
  g_autofree char *listed = NULL;
  g_autofree char *base_url = NULL;
  g_autofree char *body = NULL;
  g_autofree char *frame = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  if (!python_loader_built ())
    return;

  /* more words than a stream holds while a batch is out on the Python
   * stage's thread */
  for (guint i = 1; i <= 100; i++)
    {
      g_string_append_printf (words, "%sw%u", i > 1 ? " " : "", i);
      g_string_append_printf (expected, "id: %u\nevent: TextDeltaEvent\ndata: {\"text\":\"%sW%u!\"}\n\n",
                              i, i > 1 ? " " : "", i);
      g_string_append_printf (answer, "%sW%u!", i > 1 ? " " : "", i);
    }
  g_string_append (expected, "id: 101\nevent: ConsolidationScheduledEvent\n"
                             "data: {\"report\":{},\"graph_mutations\":0}\n\n"
                             "id: 102\nevent: ResponseCompleteEvent\ndata: {\"text\":\"");
  g_string_append (expected, answer->str);
  g_string_append (expected, "\",\"duration_ms\":");

  text = g_strdup_printf ("[gateway]\n"
                          "listen=127.0.0.1:8080\n"
                          "\n"
                          "[route:typed]\n"
                          "path=/api/v1/stream/typed\n"
                          "kind=typed\n"
                          "source=words\n"
                          "stages=upper;suffix\n"
                          "\n"
                          "[route:long]\n"
                          "path=/api/v1/stream/long\n"
                          "kind=typed\n"
                          "source=long\n"
                          "stages=upper;suffix\n"
                          "\n"
                          "[source:words]\n"
                          "type=py-words\n"
                          "text=Hello from Python.\n"
                          "\n"
                          "[source:long]\n"
                          "type=py-words\n"
                          "text=%s\n"
                          "\n"
                          "[stage:upper]\n"
                          "type=test-upper\n"
                          SUFFIX_GROUP,
                          words->str);
  pipeline = write_pipeline ("python-source.pipeline", text);
  g_setenv ("SYMFONIC_PLUGIN_PATH", plugin_path, TRUE);
  g_assert_cmpint (run (&out, &err, binary ("SYMFONIC_GATEWAY"), "--check", pipeline, NULL), ==, 0);
  g_assert_true (g_str_has_suffix (out, "python-source.pipeline: OK, 2 routes\n"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (run (&out, &err, binary ("SYMFONIC_INSPECT"), NULL), ==, 0);
  listed = g_strdup_printf ("  words                       Python stages\n    %s\n", script);
  g_assert_nonnull (strstr (out, listed));
  g_assert_nonnull (strstr (out, "  py-words         source  TestPyWordsSource            words\n"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (run (&out, &err, binary ("SYMFONIC_INSPECT"), "py-words", NULL), ==, 0);
  g_assert_nonnull (strstr (out, "py-words (source TestPyWordsSource)\n"));
  g_assert_nonnull (strstr (out, "  text                 What the source answers, one word a delta\n"
                                 "                       type: gchararray\n"
                                 "                       default: \"Hello from Python.\"\n"));
  g_unsetenv ("SYMFONIC_PLUGIN_PATH");

  g_subprocess_launcher_setenv (launcher, "SYMFONIC_PLUGIN_PATH", plugin_path, TRUE);
  process = start_gateway (launcher, pipeline, "2", &base_url);

  body = post_body (base_url, "/api/v1/stream/typed", "{\"query\":\"hi\"}");
  /* the gateway times the response itself */
  g_assert_true (g_regex_match_simple ("^id: 1\nevent: TextDeltaEvent\ndata: {\"text\":\"HELLO!\"}\n\n"
                                       "id: 2\nevent: TextDeltaEvent\ndata: {\"text\":\" FROM!\"}\n\n"
                                       "id: 3\nevent: TextDeltaEvent\ndata: {\"text\":\" PYTHON\\.!\"}\n\n"
                                       "id: 4\nevent: ConsolidationScheduledEvent\n"
                                       "data: {\"report\":{},\"graph_mutations\":0}\n\n"
                                       "id: 5\nevent: ResponseCompleteEvent\n"
                                       "data: {\"text\":\"HELLO! FROM! PYTHON\\.!\",\"duration_ms\":[0-9]+,"
                                       "\"finish_reason\":\"stop\"}\n\n$",
                                       body, 0, 0));
  g_clear_pointer (&body, g_free);

  body = post_body (base_url, "/api/v1/stream/long", "{\"query\":\"hi\"}");
  g_assert_true (g_str_has_prefix (body, expected->str));
  g_assert_true (g_regex_match_simple ("^[0-9]+,\"finish_reason\":\"stop\"}\n\n$", body + expected->len, 0, 0));
  g_clear_pointer (&body, g_free);

  body = post_body (base_url, "/api/v1/stream/typed", "{\"query\":\"fail\"}");
  g_assert_cmpstr (body, ==, "id: 1\nevent: error\ndata: {\"detail\":\"Internal server error\",\"status\":500}\n\n");
  g_free (wait_line_matching (process, "stderr",
                              "^\\(symfonic-gateway:[0-9]+\\): symfonic-python-WARNING \\*\\*: [0-9:.]+: "
                              "TestPyWordsSource: the start hook raised an exception:$"));
  frame = g_regex_escape_string (script, -1);
  g_free (wait_line_matching (process, "stderr", frame));

  stop_gateway (process, SIGTERM);
}

/* How many plugins of @name symfonic-inspect's list of plugins in @out
 * has. */
static guint
count_plugins_named (const char *out,
                     const char *name)
{
  const char *types = strstr (out, "\nTypes:");
  g_autofree char *plugins = g_strndup (out, types != NULL ? (gsize) (types - out) : strlen (out));
  g_autofree char *escaped = g_regex_escape_string (name, -1);
  g_autofree char *pattern = g_strdup_printf ("^  %s ", escaped);
  g_autoptr(GRegex) regex = g_regex_new (pattern, G_REGEX_MULTILINE, 0, NULL);
  g_autoptr(GMatchInfo) match = NULL;
  guint n = 0;

  for (g_regex_match (regex, plugins, 0, &match); g_match_info_matches (match); g_match_info_next (match, NULL))
    n++;

  return n;
}

/* A pipeline of the three e-mail redactors, C, Python and JavaScript, one
 * route each; @plugin_path is the [gateway] key's value. */
static char *
write_redactors_pipeline (const char *plugin_path)
{
  g_autofree char *transcripts = g_test_build_filename (G_TEST_DIST, "integration", "transcripts", NULL);
  g_autoptr(GString) text = g_string_new (NULL);
  static const char *const types[] = { "email-redactor", "email-redactor-py", "email-redactor-js" };

  g_string_append_printf (text, "[gateway]\nplugin-path=%s\nlisten=127.0.0.1:8080\n", plugin_path);
  for (guint i = 0; i < G_N_ELEMENTS (types); i++)
    g_string_append_printf (text,
                            "\n[route:%s]\npath=/%s\nkind=typed\nsource=fixtures\nstages=%s\n"
                            "\n[stage:%s]\ntype=%s\n",
                            types[i], types[i], types[i], types[i], types[i]);
  g_string_append_printf (text, "\n[source:fixtures]\ntype=replay\ntranscripts=%s\ndefault-transcript=paced\n",
                          transcripts);

  return write_pipeline ("redactors.pipeline", text->str);
}

/* The e-mail redactor examples are three plugins of three names: listed
 * once each, whichever folder comes first, and a pipeline loads the
 * source folder's scripts and the build's module side by side. */
static void
test_example_plugin_names (void)
{
  static const char *const names[] = { "email-redactor", "email-redactor-py", "email-redactor-js" };
  g_autofree char *env_path = NULL;
  g_autofree char *key_path = NULL;
  g_autofree char *pipeline = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  if (!python_loader_built () || !gjs_loader_built ())
    return;

  env_path = g_strjoin (G_SEARCHPATH_SEPARATOR_S, EMAIL_REDACTOR_C_DIR, EMAIL_REDACTOR_SCRIPT_DIR, NULL);
  g_setenv ("SYMFONIC_PLUGIN_PATH", env_path, TRUE);
  g_assert_cmpint (run (&out, &err, binary ("SYMFONIC_INSPECT"), NULL), ==, 0);
  g_unsetenv ("SYMFONIC_PLUGIN_PATH");
  g_assert_null (strstr (err, "Not loading"));
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    g_assert_cmpuint (count_plugins_named (out, names[i]), ==, 1);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  key_path = g_strjoin (";", EMAIL_REDACTOR_SCRIPT_DIR, EMAIL_REDACTOR_C_DIR, NULL);
  pipeline = write_redactors_pipeline (key_path);
  g_assert_cmpint (run (&out, &err, binary ("SYMFONIC_GATEWAY"), "--check", pipeline, NULL), ==, 0);
  g_assert_true (g_str_has_suffix (out, "redactors.pipeline: OK, 3 routes\n"));
}

/* A script named like a C plugin is that plugin's twin, as a second C
 * module would be: `plugin-path` refuses it, naming both files, before
 * the script runs; a scan notes it and leaves it alone. */
static void
test_script_named_like_module (void)
{
  g_autofree char *script = g_test_build_filename (G_TEST_DIST, "integration", "scripts", "prefix.js", NULL);
  g_autofree char *folder = g_build_filename (g_get_user_cache_dir (), "twin", NULL);
  g_autofree char *twin = NULL;
  g_autofree char *module = g_build_filename (EMAIL_REDACTOR_C_DIR, "libexample-email-redactor." G_MODULE_SUFFIX,
                                              NULL);
  g_autofree char *key_path = NULL;
  g_autofree char *env_path = NULL;
  g_autofree char *pipeline = NULL;
  g_autofree char *message = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  if (!gjs_loader_built ())
    return;

  twin = copy_into_folder (script, folder, "email-redactor.js");

  key_path = g_strjoin (";", EMAIL_REDACTOR_C_DIR, folder, SYMFONIC_TEST_PLUGIN_DIR, NULL);
  pipeline = write_stages_pipeline (key_path, "upper", "");
  g_assert_cmpint (run (&out, &err, binary ("SYMFONIC_GATEWAY"), "--check", pipeline, NULL), ==, 1);
  message = g_strdup_printf ("Plugin “email-redactor” of %s is already loaded from %s\n", twin, module);
  g_test_message ("stderr: %s", err);
  g_assert_true (g_str_has_suffix (err, message));
  g_clear_pointer (&message, g_free);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  env_path = g_strjoin (G_SEARCHPATH_SEPARATOR_S, EMAIL_REDACTOR_C_DIR, folder, NULL);
  g_setenv ("SYMFONIC_PLUGIN_PATH", env_path, TRUE);
  g_assert_cmpint (run (&out, &err, binary ("SYMFONIC_INSPECT"), NULL), ==, 0);
  g_unsetenv ("SYMFONIC_PLUGIN_PATH");
  message = g_strdup_printf ("Not loading %s: plugin “email-redactor” is already loaded from %s\n", twin, module);
  g_assert_nonnull (strstr (err, message));
  g_assert_cmpuint (count_plugins_named (out, "email-redactor"), ==, 1);
  /* the script never ran */
  g_assert_null (strstr (out, "js-prefix"));
}

/* The binary run from the build folder finds the typelib its scripts
 * import by itself: a Python and a JavaScript stage serve with neither
 * GI_TYPELIB_PATH nor LD_LIBRARY_PATH set (meson test sets both for the
 * bindings), as after `ninja -C build`. */
static void
test_scripts_need_no_typelib_path (void)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = NULL;
  g_autofree char *plugin_path = NULL;
  g_autofree char *pipeline = NULL;
  g_autofree char *base_url = NULL;
  g_autofree char *url = NULL;

  if (!python_loader_built () || !gjs_loader_built ())
    return;

  plugin_path = script_plugin_path ("scripts");
  pipeline = write_stages_pipeline (NULL, three_languages.stages, three_languages.groups);
  g_subprocess_launcher_unsetenv (launcher, "GI_TYPELIB_PATH");
  g_subprocess_launcher_unsetenv (launcher, "LD_LIBRARY_PATH");
  g_subprocess_launcher_setenv (launcher, "SYMFONIC_PLUGIN_PATH", plugin_path, TRUE);
  process = start_gateway (launcher, pipeline, "2", &base_url);
  url = g_strconcat (base_url, "api/v1/stream/typed", NULL);

  stream = symfonic_test_stream_post (session, url, "{\"query\":\"hi\"}", NULL);
  symfonic_test_stream_wait_done (stream);
  assert_route_answer (stream, &three_languages);

  stop_gateway (process, SIGTERM);
}

/* the folder, the script, where and why its load fails, and what the log
 * says before, if the test looks */
static const char *const syntax_error[] = { "syntax", "syntax.py", "4: SyntaxError: invalid syntax", NULL };
static const char *const import_error[] = { "raising", "raising.py", "5: RuntimeError: this plugin refuses to load",
                                            NULL };
static const char *const js_syntax_error[] = { "js-syntax", "syntax.js", "6: SyntaxError: expected expression, got ')'",
                                               NULL };
static const char *const js_import_error[] = { "js-raising", "raising.js",
                                               "6: the module threw an exception (the stack is above)",
                                               "raising.js: Error: this plugin refuses to load\n" };
static const char *const js_source[] = { "js-source", "source.js",
                                         "11: the module threw an exception (the stack is above)",
                                         ("Error: js-source: a source cannot be written in JavaScript: it would run "
                                          "on the workers\n") };

/* A pipeline whose routes each run one stuck script stage behind auth:
 * py-stuck (never returns on "sleep" or "spin", 300 ms on "slow") on
 * /stuck, with a hook-timeout of one second, on /other with the default,
 * and on /slow with no hook-timeout but a max-duration of one second;
 * js-stuck (never returns on "spin") on /js, with no hook-timeout. The
 * drain lasts one second. */
static char *
write_stuck_pipeline (void)
{
  g_autofree char *transcripts = g_test_build_filename (G_TEST_DIST, "integration", "transcripts", NULL);
  g_autofree char *tokens = g_test_build_filename (G_TEST_DIST, "..", "data", "demo-tokens.ini", NULL);
  g_autofree char *text = g_strdup_printf ("[gateway]\n"
                                           "listen=127.0.0.1:8080\n"
                                           "drain-seconds=1\n"
                                           "\n"
                                           "[route:stuck]\n"
                                           "path=/stuck\n"
                                           "kind=typed\n"
                                           "source=fixtures\n"
                                           "stages=auth;py\n"
                                           "hook-timeout=1\n"
                                           "\n"
                                           "[route:other]\n"
                                           "path=/other\n"
                                           "kind=typed\n"
                                           "source=fixtures\n"
                                           "stages=auth;py\n"
                                           "\n"
                                           "[route:slow]\n"
                                           "path=/slow\n"
                                           "kind=typed\n"
                                           "source=fixtures\n"
                                           "stages=auth;py\n"
                                           "hook-timeout=0\n"
                                           "max-duration=1\n"
                                           "\n"
                                           "[route:js]\n"
                                           "path=/js\n"
                                           "kind=typed\n"
                                           "source=fixtures\n"
                                           "stages=auth;js\n"
                                           "hook-timeout=0\n"
                                           "\n"
                                           "[source:fixtures]\n"
                                           "type=replay\n"
                                           "transcripts=%s\n"
                                           "default-transcript=paced\n"
                                           "transcript-header=X-Symfonic-Transcript\n"
                                           "time-scale=0.1\n"
                                           "\n"
                                           "[stage:auth]\n"
                                           "type=auth\n"
                                           "tokens-file=%s\n"
                                           "\n"
                                           "[stage:py]\n"
                                           "type=py-stuck\n"
                                           "\n"
                                           "[stage:js]\n"
                                           "type=js-stuck\n",
                                           transcripts, tokens);

  return write_pipeline ("stuck.pipeline", text);
}

/* The stuck pipeline's gateway, with the stuck scripts on its plugin path. */
static GSubprocess *
start_stuck_gateway (GSubprocessLauncher  *launcher,
                     char                **base_url)
{
  g_autofree char *plugin_path = script_plugin_path ("stuck-scripts");
  g_autofree char *pipeline = write_stuck_pipeline ();

  g_subprocess_launcher_setenv (launcher, "SYMFONIC_PLUGIN_PATH", plugin_path, TRUE);
  return start_gateway (launcher, pipeline, "2", base_url);
}

/* A stream of the stuck pipeline's @path, as @token's principal in
 * @tenant, playing @transcript (NULL: the default one). */
static SymfonicTestStream *
post_stuck (SoupSession *session,
            const char  *base_url,
            const char  *path,
            const char  *token,
            const char  *tenant,
            const char  *transcript)
{
  g_autofree char *url = g_strconcat (base_url, path, NULL);
  g_autofree char *bearer = g_strconcat ("Bearer ", token, NULL);

  if (transcript == NULL)
    return symfonic_test_stream_post (session, url, "{\"query\":\"hi\"}", "Authorization", bearer,
                                      "X-Tenant-ID", tenant, NULL);
  return symfonic_test_stream_post (session, url, "{\"query\":\"hi\"}", "Authorization", bearer,
                                    "X-Tenant-ID", tenant, "X-Symfonic-Transcript", transcript, NULL);
}

/* Another tenant's stream on another Python-stage route: all seven
 * deltas, then its terminal. */
static void
assert_other_completes (SymfonicTestStream *other)
{
  SymfonicTestFrame *last;

  symfonic_test_stream_wait_done (other);
  g_test_message ("the other stream took %" G_GINT64_FORMAT " ms", (other->end_us - other->start_us) / 1000);
  last = assert_one_terminal (other, "ResponseCompleteEvent");
  /* seven deltas, the consolidation, the terminal */
  g_assert_cmpuint (other->frames->len, ==, 9);
  g_assert_true (g_str_has_prefix (last->data, "{\"text\":\"one two three four five six seven\","));
  /* the paced transcript takes 140 ms at this time scale */
  g_assert_cmpint (other->end_us - other->start_us, <, 3 * G_USEC_PER_SEC);
}

/* A Python stage's process hook that never returns (it sleeps, or it
 * loops) holds the one interpreter thread: past its route's hook-timeout
 * its stream ends with its one opaque error frame, the hook is
 * interrupted with its traceback in the log, and another tenant's stream
 * on another Python-stage route, queued behind it, completes. */
static void
test_python_stuck_stage (gconstpointer data)
{
  const char *transcript = data;
  g_autoptr(GSubprocessLauncher) launcher =
    g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stuck = NULL;
  g_autoptr(SymfonicTestStream) other = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autofree char *base_url = NULL;
  SymfonicTestFrame *last;

  if (!python_loader_built ())
    return;

  process = start_stuck_gateway (launcher, &base_url);
  stuck = post_stuck (session, base_url, "stuck", "demo-token-alice", "acme", transcript);
  symfonic_test_stream_wait_frames (stuck, 1);
  other = post_stuck (session, base_url, "other", "demo-token-bob", "globex", NULL);

  symfonic_test_stream_wait_done (stuck);
  g_test_message ("the stuck stream took %" G_GINT64_FORMAT " ms", (stuck->end_us - stuck->start_us) / 1000);
  g_assert_cmpuint (stuck->frames->len, ==, 2);
  assert_delta (g_ptr_array_index (stuck->frames, 0), "{\"text\":\"fine \"}");
  last = assert_one_terminal (stuck, "error");
  g_assert_cmpstr (last->data, ==, "{\"detail\":\"Internal server error\",\"status\":500,\"code\":\"upstream_timeout\"}");
  g_assert_cmpint (stuck->end_us - stuck->start_us, >=, G_USEC_PER_SEC);
  g_assert_cmpint (stuck->end_us - stuck->start_us, <, 3 * G_USEC_PER_SEC);

  assert_other_completes (other);
  g_free (wait_line_matching (process, "stderr", "^HookTimeout: the hook ran longer than its route allows$"));

  stop_gateway (process, SIGTERM);
}

/* A stream that ended (its max-duration) while its Python stage works
 * through a batch of its events gets none of them past the one the stage
 * has: the stage, 300 ms per event, would otherwise go on for 12 s, and
 * another tenant's stream on another Python-stage route would wait as
 * long. */
static void
test_python_ended_stream_drops_events (void)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) slow = NULL;
  g_autoptr(SymfonicTestStream) other = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autofree char *base_url = NULL;
  SymfonicTestFrame *last;

  if (!python_loader_built ())
    return;

  process = start_stuck_gateway (launcher, &base_url);
  slow = post_stuck (session, base_url, "slow", "demo-token-alice", "acme", "slow");
  symfonic_test_stream_wait_done (slow);
  last = assert_one_terminal (slow, "error");
  g_assert_cmpstr (last->data, ==, "{\"detail\":\"Internal server error\",\"status\":500,\"code\":\"upstream_timeout\"}");

  other = post_stuck (session, base_url, "other", "demo-token-bob", "globex", NULL);
  assert_other_completes (other);

  stop_gateway (process, SIGTERM);
}

/* A JavaScript stage's process hook that never returns holds the main
 * thread, and gjs cannot be interrupted: SIGTERM still closes the listener
 * at once, the stuck stream still ends with its one error frame, and the
 * gateway exits 0 within drain-seconds, the drain's grace and a margin. */
static void
test_js_stuck_stage_sigterm (void)
{
  g_autoptr(GSubprocessLauncher) launcher =
    g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stuck = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autofree char *base_url = NULL;
  SymfonicTestFrame *last;
  gboolean exited = FALSE;
  gint64 signalled;
  guint i;

  if (!python_loader_built () || !gjs_loader_built ())
    return;

  process = start_stuck_gateway (launcher, &base_url);
  stuck = post_stuck (session, base_url, "js", "demo-token-alice", "acme", "spin");
  symfonic_test_stream_wait_frames (stuck, 1);
  /* the stage has the event that makes it spin */
  g_usleep (200 * 1000);

  signalled = g_get_monotonic_time ();
  g_subprocess_send_signal (process, SIGTERM);
  for (i = 0; i < 50 && !refused (port_of (base_url)); i++)
    g_usleep (10 * 1000);
  g_test_message ("the listener closed within %u ms of the signal", i * 10);
  g_assert_true (refused (port_of (base_url)));

  symfonic_test_stream_wait_done (stuck);
  last = assert_one_terminal (stuck, "error");
  /* the route has no error-map stage: the 5xx detail is the opaque one */
  g_assert_cmpstr (last->data, ==, "{\"detail\":\"Internal server error\",\"status\":503,\"code\":\"shutting_down\"}");

  g_subprocess_wait_async (process, NULL, wait_cb, &exited);
  g_assert_true (symfonic_test_iterate_until (NULL, is_set, &exited, SYMFONIC_TEST_WAIT_MS));
  g_test_message ("the gateway exited %" G_GINT64_FORMAT " ms after the signal",
                  (g_get_monotonic_time () - signalled) / 1000);
  /* one second of drain, two of grace for the error frames */
  g_assert_cmpint (g_get_monotonic_time () - signalled, <, 5 * G_USEC_PER_SEC);
  g_assert_true (g_subprocess_get_if_exited (process));
  g_assert_cmpint (g_subprocess_get_exit_status (process), ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  symfonic_test_init (&argc, &argv);

  g_test_add_func ("/binaries/check-broken", test_check_broken);
  g_test_add_func ("/binaries/check-every-error", test_check_every_error);
  g_test_add_func ("/binaries/python-whatever-the-shell", test_python_whatever_the_shell);
  g_test_add_func ("/binaries/check-repeated-stage", test_check_repeated_stage);
  g_test_add_func ("/binaries/check-citation-before-extraction", test_check_citation_before_extraction);
  g_test_add_func ("/binaries/check-citation-block-tag", test_check_citation_block_tag);
  g_test_add_func ("/binaries/check-fifo", test_check_fifo);
  g_test_add_func ("/binaries/check-default", test_check_default);
  g_test_add_func ("/binaries/bad-usage", test_bad_usage);
  g_test_add_func ("/binaries/inspect-lists", test_inspect_lists);
  g_test_add_func ("/binaries/inspect-type", test_inspect_type);
  g_test_add_func ("/binaries/inspect-groups", test_inspect_groups);
  g_test_add_data_func ("/binaries/serve-sigterm", GINT_TO_POINTER (SIGTERM), test_serve_and_stop);
  g_test_add_data_func ("/binaries/serve-sigint", GINT_TO_POINTER (SIGINT), test_serve_and_stop);
  g_test_add_func ("/binaries/drain/lets-streams-finish", test_drain_lets_streams_finish);
  g_test_add_func ("/binaries/drain/time-over", test_drain_time_over);
  g_test_add_func ("/binaries/reload", test_reload);
  g_test_add_func ("/binaries/socket-activation", test_socket_activation);
  g_test_add_func ("/binaries/socket-activation-not-listening", test_socket_activation_not_listening);
  g_test_add_data_func ("/binaries/drain/second-sigterm", GINT_TO_POINTER (SIGTERM), test_second_signal_ends_streams);
  g_test_add_data_func ("/binaries/drain/second-sigint", GINT_TO_POINTER (SIGINT), test_second_signal_ends_streams);
  g_test_add_func ("/binaries/junk-on-plugin-path", test_junk_on_plugin_path);
  g_test_add_func ("/binaries/runtime-starts-no-settings-thread", test_runtime_starts_no_settings_thread);
  g_test_add_func ("/binaries/second-on-same-port", test_second_on_same_port);
  g_test_add_func ("/binaries/out-of-descriptors", test_out_of_descriptors);
  g_test_add_func ("/binaries/raises-descriptor-limit", test_raises_descriptor_limit);
  g_test_add_data_func ("/binaries/python-check-and-inspect", &python_plugin, test_script_check_and_inspect);
  g_test_add_data_func ("/binaries/python-serves-mixed-route", &c_and_python, test_serves_mixed_route);
  g_test_add_data_func ("/binaries/python-syntax-error", syntax_error, test_script_load_error);
  g_test_add_func ("/binaries/python-plugin-path-key", test_python_plugin_path_key);
  g_test_add_data_func ("/binaries/python-import-error", import_error, test_script_load_error);
  g_test_add_func ("/binaries/python-source", test_python_source);
  g_test_add_data_func ("/binaries/js-check-and-inspect", &js_plugin, test_script_check_and_inspect);
  g_test_add_data_func ("/binaries/three-languages-serve", &three_languages, test_serves_mixed_route);
  g_test_add_data_func ("/binaries/js-syntax-error", js_syntax_error, test_script_load_error);
  g_test_add_data_func ("/binaries/js-import-error", js_import_error, test_script_load_error);
  g_test_add_data_func ("/binaries/js-source-refused", js_source, test_script_load_error);
  g_test_add_func ("/binaries/scripts-need-no-typelib-path", test_scripts_need_no_typelib_path);
  g_test_add_func ("/binaries/example-plugin-names", test_example_plugin_names);
  g_test_add_func ("/binaries/script-named-like-module", test_script_named_like_module);
  g_test_add_data_func ("/binaries/python-stuck-stage/sleep", "sleep", test_python_stuck_stage);
  g_test_add_data_func ("/binaries/python-stuck-stage/spin", "spin", test_python_stuck_stage);
  g_test_add_func ("/binaries/python-ended-stream-drops-events", test_python_ended_stream_drops_events);
  g_test_add_func ("/binaries/js-stuck-stage-sigterm", test_js_stuck_stage_sigterm);
  g_test_add_data_func ("/binaries/python-filter-stage", &python_filter_stage, test_script_filter_stage);
  g_test_add_data_func ("/binaries/js-filter-stage", &js_filter_stage, test_script_filter_stage);

  return g_test_run ();
}
