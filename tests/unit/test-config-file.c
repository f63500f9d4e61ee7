/* test-config-file.c: the line-numbered configuration file reader
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <symfonic.h>

typedef struct
{
  const char *name;
  const char *text;
  /* the whole message, literally */
  const char *message;
} RefusedCase;

static const RefusedCase refused_cases[] = {
  { "repeated-group", "[a]\nk=1\n\n[b]\n[a]\n", "t.ini:5: [a]: expected each group once, found it already on line 1" },
  { "repeated-key", "[a]\nk=1\n# note\n k = 2\n", "t.ini:4: [a] k: expected each key once in a group, found it already on line 2" },
  { "malformed-line", "[a]\njust words\n", "t.ini:2: expected “key=value”, a [group] or a # comment, found “just words”" },
  { "empty-key", "[a]\n=1\n", "t.ini:2: expected “key=value”, a [group] or a # comment, found “=1”" },
  { "unclosed-header", "[a\nk=1\n", "t.ini:1: expected a group header “[NAME]”, found “[a”" },
  { "text-after-header", "[a] x\n", "t.ini:1: expected a group header “[NAME]”, found “[a] x”" },
  { "empty-header", "[]\n", "t.ini:1: expected a group header “[NAME]”, found “[]”" },
  { "key-outside-group", "# head\nk=1\n[a]\n", "t.ini:2: k: expected a key inside a [group], found it before any" },
  { "not-utf8", "[a]\nk=\xff\n", "t.ini:2: expected UTF-8 text, found the byte 0xff" },
  /* every line that is wrong, by line; the keys under a malformed header
   * are not blamed for it */
  { "several", "k=0\n[a\nj=1\n[b]\nj=1\nj=2\nno equals\n[b]\n",
    "t.ini:1: k: expected a key inside a [group], found it before any\n"
    "t.ini:2: expected a group header “[NAME]”, found “[a”\n"
    "t.ini:6: [b] j: expected each key once in a group, found it already on line 5\n"
    "t.ini:7: expected “key=value”, a [group] or a # comment, found “no equals”\n"
    "t.ini:8: [b]: expected each group once, found it already on line 4" },
};

static void
test_config_file_refused (gconstpointer data)
{
  const RefusedCase *c = data;
  g_autoptr(SymfonicConfigFile) config = NULL;
  g_autoptr(GError) error = NULL;

  config = symfonic_config_file_new_from_data (c->text, -1, "t.ini", &error);
  g_assert_null (config);
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==, c->message);
}

static const char accepted_text[] =
  "# a comment\n"              /* 1 */
  "\n"                         /* 2 */
  "[first]\n"                  /* 3 */
  "  colour = red\n"           /* 4 */
  "size=3\n"                   /* 5 */
  "[second]\n"                 /* 6 */
  "# colour=blue\n"            /* 7 */
  "colour=green";              /* 8: no final newline */

typedef struct
{
  const char *group;
  const char *key;
  guint       line;
} LineCase;

static const LineCase line_cases[] = {
  { "first", NULL, 3 },
  { "first", "colour", 4 },
  { "first", "size", 5 },
  { "second", NULL, 6 },
  { "second", "colour", 8 },
  { "second", "size", 0 },
  { "third", NULL, 0 },
};

static void
test_config_file_lines (void)
{
  g_autoptr(SymfonicConfigFile) config = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *colour = NULL;

  config = symfonic_config_file_new_from_data (accepted_text, -1, "t.ini", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (symfonic_config_file_get_name (config), ==, "t.ini");

  for (guint i = 0; i < G_N_ELEMENTS (line_cases); i++)
    {
      const LineCase *c = &line_cases[i];

      g_test_message ("[%s] %s", c->group, c->key);
      g_assert_cmpuint (symfonic_config_file_get_line (config, c->group, c->key), ==, c->line);
    }

  colour = g_key_file_get_string (symfonic_config_file_get_key_file (config), "second", "colour", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (colour, ==, "green");
}

typedef struct
{
  const char *group;
  const char *key;
  const char *message;
} ErrorCase;

static const ErrorCase error_cases[] = {
  /* a key's own line */
  { "first", "size", "t.ini:5: [first] size: wrong" },
  /* a missing key is named at its group's line */
  { "second", "size", "t.ini:6: [second] size: wrong" },
  { "second", NULL, "t.ini:6: [second]: wrong" },
  /* a group the file does not have has no line */
  { "third", "size", "t.ini: [third] size: wrong" },
  { NULL, NULL, "t.ini: wrong" },
};

static void
test_config_file_errors (void)
{
  g_autoptr(SymfonicConfigFile) config = NULL;
  g_autoptr(GError) error = NULL;

  config = symfonic_config_file_new_from_data (accepted_text, -1, "t.ini", &error);
  g_assert_no_error (error);

  for (guint i = 0; i < G_N_ELEMENTS (error_cases); i++)
    {
      const ErrorCase *c = &error_cases[i];
      g_autoptr(GError) literal = NULL;
      g_autoptr(GError) formatted = NULL;

      g_assert_false (symfonic_config_file_set_error_literal (config, c->group, c->key, "wrong", &literal));
      g_assert_error (literal, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
      g_assert_cmpstr (literal->message, ==, c->message);

      g_assert_false (symfonic_config_file_set_error (config, &formatted, c->group, c->key, "%s%s", "wr", "ong"));
      g_assert_cmpstr (formatted->message, ==, c->message);
    }
}

static void
test_config_file_check_keys (void)
{
  static const char * const known[] = { "colour", "size", NULL };
  static const char * const colour_only[] = { "colour", NULL };
  g_autoptr(SymfonicConfigFile) config = NULL;
  g_autoptr(GError) error = NULL;

  config = symfonic_config_file_new_from_data (accepted_text, -1, "t.ini", &error);
  g_assert_no_error (error);

  g_assert_true (symfonic_config_file_check_keys (config, "first", known, &error));
  g_assert_no_error (error);
  g_assert_false (symfonic_config_file_check_keys (config, "first", colour_only, &error));
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==, "t.ini:5: [first] size: expected one of colour, found an unknown key");
}

/* A reader that goes on past its problems: the parse's own and those it
 * records, in any order, come out in one list, by line, what concerns
 * the whole file last. */
static void
test_config_file_collect (void)
{
  static const char text[] =
    "[a]\n"                 /* 1 */
    "size=big\n"            /* 2 */
    "size=3\n"              /* 3: repeated */
    "no equals\n"           /* 4: malformed */
    "[b]\n"                 /* 5 */
    "colour=blue\n";        /* 6 */
  g_autoptr(SymfonicConfigFile) config = NULL;
  g_autoptr(GError) error = NULL;

  config = symfonic_config_file_new_from_data_full (text, -1, "t.ini", SYMFONIC_CONFIG_FILE_COLLECT_ERRORS, &error);
  g_assert_no_error (error);
  g_assert_nonnull (config);
  g_assert_cmpuint (symfonic_config_file_get_n_errors (config), ==, 2);

  /* the lines that were skipped are not in the key file; the others are */
  g_assert_cmpuint (symfonic_config_file_get_line (config, "b", "colour"), ==, 6);
  g_assert_true (g_key_file_has_key (symfonic_config_file_get_key_file (config), "b", "colour", NULL));

  g_assert_false (symfonic_config_file_add_error (config, NULL, NULL, "expected a [c], found none"));
  g_assert_false (symfonic_config_file_add_error_literal (config, "b", "colour", "expected red, found “blue”"));
  g_assert_false (symfonic_config_file_add_error (config, "a", "size", "expected a number, found “%s”", "big"));
  g_assert_false (symfonic_config_file_add_error (config, "b", "shape", "expected a key “shape”, found none"));
  g_assert_cmpuint (symfonic_config_file_get_n_errors (config), ==, 6);

  g_assert_false (symfonic_config_file_check_errors (config, &error));
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==,
                   "t.ini:2: [a] size: expected a number, found “big”\n"
                   "t.ini:3: [a] size: expected each key once in a group, found it already on line 2\n"
                   "t.ini:4: expected “key=value”, a [group] or a # comment, found “no equals”\n"
                   "t.ini:5: [b] shape: expected a key “shape”, found none\n"
                   "t.ini:6: [b] colour: expected red, found “blue”\n"
                   "t.ini: expected a [c], found none");
}

/* Without the flag, and without problems, nothing to list. */
static void
test_config_file_no_errors (void)
{
  g_autoptr(SymfonicConfigFile) config = NULL;
  g_autoptr(GError) error = NULL;

  config = symfonic_config_file_new_from_data_full (accepted_text, -1, "t.ini", SYMFONIC_CONFIG_FILE_COLLECT_ERRORS,
                                                    &error);
  g_assert_no_error (error);
  g_assert_cmpuint (symfonic_config_file_get_n_errors (config), ==, 0);
  g_assert_true (symfonic_config_file_check_errors (config, &error));
  g_assert_no_error (error);
}

static void
test_config_file_for_file (void)
{
  g_autofree char *path = g_build_filename (g_get_user_cache_dir (), "reader.ini", NULL);
  g_autofree char *directory = g_build_filename (g_get_user_cache_dir (), "a-folder", NULL);
  g_autofree char *expected = NULL;
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GFile) folder = g_file_new_for_path (directory);
  g_autoptr(SymfonicConfigFile) config = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (g_mkdir_with_parents (directory, 0700), ==, 0);
  g_assert_true (g_file_set_contents (path, "[a]\nk=1\nk=2\n", -1, &error));
  g_assert_no_error (error);

  config = symfonic_config_file_new_for_file (file, &error);
  g_assert_null (config);
  expected = g_strdup_printf ("%s:3: [a] k: expected each key once in a group, found it already on line 2", path);
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==, expected);
  g_clear_error (&error);
  g_clear_pointer (&expected, g_free);

  config = symfonic_config_file_new_for_file (folder, &error);
  g_assert_null (config);
  expected = g_strdup_printf ("%s: expected a regular file, found a folder", directory);
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==, expected);
}

typedef struct
{
  const char *name;
  /* in the test's folder, or absolute */
  const char *path;
  gboolean    folder;
  /* what the error says after the name; NULL: the check passes */
  const char *what;
} CheckCase;

static const CheckCase check_cases[] = {
  { "file", "file.ini", FALSE, NULL },
  { "file-missing", "no-such.ini", FALSE, "expected a file, found nothing: it is missing" },
  { "file-is-folder", "folder", FALSE, "expected a regular file, found a folder" },
  { "file-is-fifo", "fifo", FALSE, "expected a regular file, found a FIFO" },
  { "file-is-device", "/dev/zero", FALSE, "expected a regular file, found a device" },
  { "file-oversized", "oversized.ini", FALSE, "expected at most 16777216 bytes, found 16777217" },
  { "folder", "folder", TRUE, NULL },
  { "folder-missing", "no-such-folder", TRUE, "expected a folder, found nothing: it is missing" },
  { "folder-is-file", "file.ini", TRUE, "expected a folder, found a regular file" },
  { "folder-is-fifo", "fifo", TRUE, "expected a folder, found a FIFO" },
  { "folder-is-device", "/dev/zero", TRUE, "expected a folder, found a device" },
};

/* What the loader checks a key's file or folder with, before anything
 * reads it: a FIFO or a device is refused without blocking, and a file
 * over the cap without reading it. */
static void
test_config_file_check (gconstpointer data)
{
  const CheckCase *c = data;
  g_autofree char *dir = g_build_filename (g_get_user_cache_dir (), "check", NULL);
  g_autofree char *file = g_build_filename (dir, "file.ini", NULL);
  g_autofree char *folder = g_build_filename (dir, "folder", NULL);
  g_autofree char *fifo = g_build_filename (dir, "fifo", NULL);
  g_autofree char *oversized = g_build_filename (dir, "oversized.ini", NULL);
  g_autofree char *path = g_path_is_absolute (c->path) ? g_strdup (c->path) : g_build_filename (dir, c->path, NULL);
  g_autoptr(GFile) checked = g_file_new_for_path (path);
  g_autoptr(GError) error = NULL;
  g_autofree char *expected = NULL;
  gboolean ok;
  int fd;

  g_assert_cmpint (g_mkdir_with_parents (folder, 0700), ==, 0);
  g_assert_true (g_file_set_contents (file, "[a]\nk=1\n", -1, &error));
  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  /* sparse: over the cap without writing it */
  fd = g_open (oversized, O_WRONLY | O_CREAT, 0600);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (ftruncate (fd, SYMFONIC_CONFIG_FILE_MAX_SIZE + 1), ==, 0);
  close (fd);

  ok = c->folder ? symfonic_config_file_check_folder (checked, &error)
                 : symfonic_config_file_check (checked, SYMFONIC_CONFIG_FILE_MAX_SIZE, &error);
  if (c->what == NULL)
    {
      g_assert_no_error (error);
      g_assert_true (ok);
      return;
    }

  expected = g_strdup_printf ("%s: %s", path, c->what);
  g_assert_false (ok);
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==, expected);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (refused_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/config-file/refused/%s", refused_cases[i].name);

      g_test_add_data_func (path, &refused_cases[i], test_config_file_refused);
    }
  g_test_add_func ("/config-file/lines", test_config_file_lines);
  g_test_add_func ("/config-file/errors", test_config_file_errors);
  g_test_add_func ("/config-file/check-keys", test_config_file_check_keys);
  g_test_add_func ("/config-file/for-file", test_config_file_for_file);
  g_test_add_func ("/config-file/collect", test_config_file_collect);
  g_test_add_func ("/config-file/no-errors", test_config_file_no_errors);
  for (guint i = 0; i < G_N_ELEMENTS (check_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/config-file/check/%s", check_cases[i].name);

      g_test_add_data_func (path, &check_cases[i], test_config_file_check);
    }

  return g_test_run ();
}
