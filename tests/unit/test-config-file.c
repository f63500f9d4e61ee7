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
  { "repeated-group", "[a]\nk=1\n\n[b]\n[a]\n", "t.ini:5: [a]: group already appears on line 1" },
  { "repeated-key", "[a]\nk=1\n# note\n k = 2\n", "t.ini:4: [a] k: key already set on line 2" },
  { "malformed-line", "[a]\njust words\n", "t.ini:2: expected “key=value”, a [group] or a # comment, found “just words”" },
  { "empty-key", "[a]\n=1\n", "t.ini:2: expected “key=value”, a [group] or a # comment, found “=1”" },
  { "unclosed-header", "[a\nk=1\n", "t.ini:1: malformed group header “[a”" },
  { "text-after-header", "[a] x\n", "t.ini:1: malformed group header “[a] x”" },
  { "empty-header", "[]\n", "t.ini:1: malformed group header “[]”" },
  { "key-outside-group", "# head\nk=1\n[a]\n", "t.ini:2: k: key outside of any [group]" },
  { "not-utf8", "[a]\nk=\xff\n", "t.ini: not valid UTF-8 text" },
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
  g_assert_cmpstr (error->message, ==, "t.ini:5: [first] size: unknown key (known: colour)");
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
  expected = g_strdup_printf ("%s:3: [a] k: key already set on line 2", path);
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==, expected);
  g_clear_error (&error);
  g_clear_pointer (&expected, g_free);

  config = symfonic_config_file_new_for_file (folder, &error);
  g_assert_null (config);
  expected = g_strdup_printf ("%s: not a regular file", directory);
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==, expected);
}

typedef struct
{
  const char *name;
  /* in the test's folder, or absolute */
  const char *path;
  gboolean    folder;
  /* what the error says after the name: the system's words for @errsv,
   * else @what; neither: the check passes */
  int         errsv;
  const char *what;
} CheckCase;

static const CheckCase check_cases[] = {
  { "file", "file.ini", FALSE, 0, NULL },
  { "file-missing", "no-such.ini", FALSE, ENOENT, NULL },
  { "file-is-folder", "folder", FALSE, 0, "not a regular file" },
  { "file-is-fifo", "fifo", FALSE, 0, "not a regular file" },
  { "file-is-device", "/dev/zero", FALSE, 0, "not a regular file" },
  { "file-oversized", "oversized.ini", FALSE, 0, "larger than 16777216 bytes" },
  { "folder", "folder", TRUE, 0, NULL },
  { "folder-missing", "no-such-folder", TRUE, ENOENT, NULL },
  { "folder-is-file", "file.ini", TRUE, 0, "not a folder" },
  { "folder-is-fifo", "fifo", TRUE, 0, "not a folder" },
  { "folder-is-device", "/dev/zero", TRUE, 0, "not a folder" },
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
  if (c->errsv == 0 && c->what == NULL)
    {
      g_assert_no_error (error);
      g_assert_true (ok);
      return;
    }

  expected = g_strdup_printf ("%s: %s", path, c->errsv != 0 ? g_strerror (c->errsv) : c->what);
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
  for (guint i = 0; i < G_N_ELEMENTS (check_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/config-file/check/%s", check_cases[i].name);

      g_test_add_data_func (path, &check_cases[i], test_config_file_check);
    }

  return g_test_run ();
}
