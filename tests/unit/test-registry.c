/* test-registry.c: plugin loading and type registration
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <sys/stat.h>

#include <glib/gstdio.h>
#include <unistd.h>
#include <symfonic.h>

#define GOOD_PLUGIN TEST_PLUGIN_GOOD_DIR "/libsymfonic-test-stage." G_MODULE_SUFFIX
#define BAD_API_PLUGIN TEST_PLUGIN_BAD_API_DIR "/libsymfonic-test-bad-api." G_MODULE_SUFFIX
#define OLD_API_PLUGIN TEST_PLUGIN_OLD_API_DIR "/libsymfonic-test-old-api." G_MODULE_SUFFIX
#define DUPLICATE_PLUGIN TEST_PLUGIN_DUPLICATE_DIR "/libsymfonic-test-duplicate." G_MODULE_SUFFIX
#define MALFORMED_PLUGIN TEST_PLUGIN_MALFORMED_DIR "/libsymfonic-test-malformed." G_MODULE_SUFFIX
#define REPLAY_PLUGIN SYMFONIC_BUILD_PLUGIN_DIR "/libsymfonic-replay." G_MODULE_SUFFIX

/* An application-defined stage, registered without any plugin. */
#define TEST_TYPE_APP_STAGE (test_app_stage_get_type ())
G_DECLARE_FINAL_TYPE (TestAppStage, test_app_stage, TEST, APP_STAGE, GObject)

struct _TestAppStage
{
  GObject parent_instance;
};

static void
test_app_stage_stage_init (SymfonicStageInterface *iface)
{
}

G_DEFINE_FINAL_TYPE_WITH_CODE (TestAppStage, test_app_stage, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_STAGE, test_app_stage_stage_init))

static void
test_app_stage_class_init (TestAppStageClass *klass)
{
}

static void
test_app_stage_init (TestAppStage *self)
{
}

/* A stage and a source as a script plugin would define them. */
#define TEST_TYPE_SCRIPT_STAGE (test_script_stage_get_type ())
G_DECLARE_FINAL_TYPE (TestScriptStage, test_script_stage, TEST, SCRIPT_STAGE, GObject)

struct _TestScriptStage
{
  GObject parent_instance;
};

G_DEFINE_FINAL_TYPE_WITH_CODE (TestScriptStage, test_script_stage, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_STAGE, test_app_stage_stage_init))

static void
test_script_stage_class_init (TestScriptStageClass *klass)
{
}

static void
test_script_stage_init (TestScriptStage *self)
{
}

#define TEST_TYPE_SCRIPT_SOURCE (test_script_source_get_type ())
G_DECLARE_FINAL_TYPE (TestScriptSource, test_script_source, TEST, SCRIPT_SOURCE, GObject)

struct _TestScriptSource
{
  GObject parent_instance;
};

static void
test_script_source_source_init (SymfonicSourceInterface *iface)
{
}

G_DEFINE_FINAL_TYPE_WITH_CODE (TestScriptSource, test_script_source, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_SOURCE, test_script_source_source_init))

static void
test_script_source_class_init (TestScriptSourceClass *klass)
{
}

static void
test_script_source_init (TestScriptSource *self)
{
}

/* Whether @number appears in @message as a number of its own, not as a
 * digit of a longer number or of a version in a path. */
static gboolean
mentions_number (const char *message,
                 guint       number)
{
  g_autofree char *pattern = g_strdup_printf ("(^|[^0-9.])%u([^0-9.]|$)", number);

  return g_regex_match_simple (pattern, message, 0, 0);
}

static void
test_registry_load_good (void)
{
  g_autoptr(SymfonicRegistry) registry = symfonic_registry_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) plugins = NULL;
  SymfonicPlugin *plugin;
  GType type;

  g_assert_true (symfonic_registry_load_directory (registry, TEST_PLUGIN_GOOD_DIR, &error));
  g_assert_no_error (error);

  type = symfonic_registry_lookup (registry, "test-upper");
  g_assert_cmpstr (g_type_name (type), ==, "TestUpperStage");
  g_assert_true (g_type_is_a (type, SYMFONIC_TYPE_STAGE));
  g_assert_true (g_type_is_a (type, G_TYPE_INITABLE));

  plugin = symfonic_registry_get_type_plugin (registry, "test-upper");
  g_assert_true (SYMFONIC_IS_PLUGIN (plugin));
  g_assert_cmpstr (symfonic_plugin_get_name (plugin), ==, "test-stage");
  g_assert_cmpstr (symfonic_plugin_get_filename (plugin), ==, GOOD_PLUGIN);
  /* the plugin's own version and license, not the gateway's */
  g_assert_cmpstr (symfonic_plugin_get_version (plugin), ==, "1.0");
  g_assert_cmpstr (symfonic_plugin_get_license (plugin), ==, "LGPL-2.1-or-later");
  g_assert_cmpstr (symfonic_plugin_get_description (plugin), ==, "Upper-cases text deltas, for the tests");

  plugins = symfonic_registry_list_plugins (registry);
  g_assert_cmpuint (plugins->len, ==, 1);
  g_assert_true (g_ptr_array_index (plugins, 0) == plugin);

  g_assert_cmpuint (symfonic_registry_lookup (registry, "no-such-type"), ==, G_TYPE_INVALID);
  g_assert_null (symfonic_registry_get_type_plugin (registry, "no-such-type"));
}

typedef struct
{
  const char *dir;
  const char *file;
  guint       api_version;
} ApiMismatchCase;

/* A plugin built for a later API, and one built for the API before this
 * one, whose stage interface had another layout. */
static const ApiMismatchCase api_mismatch_cases[] = {
  { TEST_PLUGIN_BAD_API_DIR, BAD_API_PLUGIN, SYMFONIC_PLUGIN_API_VERSION + 1 },
  { TEST_PLUGIN_OLD_API_DIR, OLD_API_PLUGIN, SYMFONIC_PLUGIN_API_VERSION - 1 },
};

static void
test_registry_api_mismatch (gconstpointer data)
{
  const ApiMismatchCase *c = data;
  g_autoptr(SymfonicRegistry) registry = symfonic_registry_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) plugins = NULL;
  g_auto(GStrv) types = NULL;
  g_autofree char *rest = NULL;
  const char *message;
  const char *at;

  /* The module's init calls g_error(): surviving this proves it never ran. */
  g_assert_false (symfonic_registry_load_directory (registry, c->dir, &error));
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN);

  message = error->message;
  at = strstr (message, c->file);
  g_assert_nonnull (at);
  /* the numbers are looked for outside the file name */
  rest = g_strdup_printf ("%.*s%s", (int) (at - message), message, at + strlen (c->file));
  g_assert_true (mentions_number (rest, c->api_version));
  g_assert_true (mentions_number (rest, SYMFONIC_PLUGIN_API_VERSION));

  plugins = symfonic_registry_list_plugins (registry);
  g_assert_cmpuint (plugins->len, ==, 0);
  types = symfonic_registry_list_types (registry);
  g_assert_cmpstrv (types, ((const char * const[]) { NULL }));

  /* loading the file itself is refused the same way, again without init */
  g_clear_error (&error);
  g_assert_null (symfonic_registry_load_plugin (registry, c->file, &error));
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN);
  g_assert_nonnull (strstr (error->message, c->file));
}

static void
test_registry_duplicate_type (void)
{
  g_autoptr(SymfonicRegistry) registry = symfonic_registry_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) plugins = NULL;
  SymfonicPlugin *owner;

  /* only the build's plugin folder: nothing from the caller's environment */
  g_unsetenv ("SYMFONIC_PLUGIN_PATH");
  g_assert_true (symfonic_registry_scan (registry, &error));
  g_assert_no_error (error);

  owner = symfonic_registry_get_type_plugin (registry, "replay");
  g_assert_nonnull (owner);
  g_assert_cmpstr (symfonic_plugin_get_filename (owner), ==, REPLAY_PLUGIN);

  g_assert_false (symfonic_registry_load_directory (registry, TEST_PLUGIN_DUPLICATE_DIR, &error));
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN);
  g_assert_nonnull (strstr (error->message, "replay"));
  g_assert_nonnull (strstr (error->message, DUPLICATE_PLUGIN));
  g_assert_nonnull (strstr (error->message, REPLAY_PLUGIN));

  /* the first owner keeps the name */
  owner = symfonic_registry_get_type_plugin (registry, "replay");
  g_assert_cmpstr (symfonic_plugin_get_filename (owner), ==, REPLAY_PLUGIN);
  g_assert_cmpstr (g_type_name (symfonic_registry_lookup (registry, "replay")), !=, "TestDuplicateSource");

  plugins = symfonic_registry_list_plugins (registry);
  for (guint i = 0; i < plugins->len; i++)
    g_assert_cmpstr (symfonic_plugin_get_name (g_ptr_array_index (plugins, i)), !=, "test-duplicate");
}

static void
test_registry_idempotent (void)
{
  g_autoptr(SymfonicRegistry) registry = symfonic_registry_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) plugins = NULL;
  g_auto(GStrv) types = NULL;
  SymfonicPlugin *first;
  SymfonicPlugin *second;
  SymfonicPlugin *third;

  first = symfonic_registry_load_plugin (registry, GOOD_PLUGIN, &error);
  g_assert_no_error (error);
  g_assert_nonnull (first);

  second = symfonic_registry_load_plugin (registry, GOOD_PLUGIN, &error);
  g_assert_no_error (error);
  g_assert_true (second == first);

  /* the same file spelled differently */
  third = symfonic_registry_load_plugin (registry, TEST_PLUGIN_GOOD_DIR "/./libsymfonic-test-stage." G_MODULE_SUFFIX, &error);
  g_assert_no_error (error);
  g_assert_true (third == first);

  g_assert_true (symfonic_registry_load_directory (registry, TEST_PLUGIN_GOOD_DIR, &error));
  g_assert_no_error (error);

  plugins = symfonic_registry_list_plugins (registry);
  g_assert_cmpuint (plugins->len, ==, 1);
  types = symfonic_registry_list_types (registry);
  g_assert_cmpstrv (types, ((const char * const[]) { "test-upper", NULL }));
}

/* A file or folder reached through a symbolic link is still the same
 * module: with a usrmerge'd /lib -> /usr/lib, SYMFONIC_PLUGIN_PATH may name
 * the installed plugin folder by its other spelling. The check runs in a
 * child so a failure does not stop the other tests; the links live outside
 * the isolated dirs, whose recursive removal would follow a link to a
 * folder and empty the build's plugin folder. */
static void
test_registry_symlink (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *tmp = NULL;
  g_autofree char *link = NULL;
  g_autofree char *link_dir = NULL;

  if (g_test_subprocess ())
    {
      g_autoptr(SymfonicRegistry) registry = symfonic_registry_new ();
      g_autoptr(SymfonicRegistry) scanned = symfonic_registry_new ();
      const char *dir = g_getenv ("TEST_SYMLINK_DIR");
      SymfonicPlugin *first;
      SymfonicPlugin *again;

      g_assert_nonnull (dir);
      link = g_build_filename (dir, "libsymfonic-test-stage." G_MODULE_SUFFIX, NULL);
      link_dir = g_build_filename (dir, "plugins", NULL);

      first = symfonic_registry_load_plugin (registry, GOOD_PLUGIN, &error);
      g_assert_no_error (error);
      again = symfonic_registry_load_plugin (registry, link, &error);
      g_assert_no_error (error);
      g_assert_true (again == first);

      g_setenv ("SYMFONIC_PLUGIN_PATH", link_dir, TRUE);
      g_assert_true (symfonic_registry_scan (scanned, &error));
      g_assert_no_error (error);
      g_assert_nonnull (symfonic_registry_get_type_plugin (scanned, "replay"));
      return;
    }

  tmp = g_dir_make_tmp ("symfonic-test-XXXXXX", &error);
  g_assert_no_error (error);
  link = g_build_filename (tmp, "libsymfonic-test-stage." G_MODULE_SUFFIX, NULL);
  link_dir = g_build_filename (tmp, "plugins", NULL);
  g_assert_cmpint (symlink (GOOD_PLUGIN, link), ==, 0);
  g_assert_cmpint (symlink (SYMFONIC_BUILD_PLUGIN_DIR, link_dir), ==, 0);

  g_setenv ("TEST_SYMLINK_DIR", tmp, TRUE);
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_unsetenv ("TEST_SYMLINK_DIR");

  /* the links themselves, never what they point to */
  g_unlink (link);
  g_unlink (link_dir);
  g_rmdir (tmp);

  if (!g_test_trap_has_passed ())
    g_test_fail_printf ("a plugin reached through a symbolic link is loaded a second time and refused");
}

/* A FIFO (or a device) named like a plugin in a plugin folder is skipped
 * with a warning: opened, it would block the scan until a writer came. The
 * scan runs in a child, so that a blocked one fails the test instead of
 * hanging it. */
static void
test_registry_special_files (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr(SymfonicRegistry) registry = symfonic_registry_new ();
      g_autoptr(GError) error = NULL;
      g_autofree char *dir = g_build_filename (g_get_user_cache_dir (), "special-plugins", NULL);
      g_autofree char *module = g_build_filename (dir, "libsymfonic-fifo." G_MODULE_SUFFIX, NULL);
      g_autofree char *script = g_build_filename (dir, "fifo.py", NULL);

      g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
      g_assert_cmpint (mkfifo (module, 0600), ==, 0);
      g_assert_cmpint (mkfifo (script, 0600), ==, 0);
      /* the warnings are what the parent checks */
      g_log_set_always_fatal (G_LOG_FATAL_MASK);
      g_setenv ("SYMFONIC_PLUGIN_PATH", dir, TRUE);
      g_assert_true (symfonic_registry_scan (registry, &error));
      g_assert_no_error (error);
      g_assert_nonnull (symfonic_registry_get_type_plugin (registry, "replay"));
      return;
    }

  g_test_trap_subprocess (NULL, 10 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr ("*libsymfonic-fifo." G_MODULE_SUFFIX ": not a regular file*");
}

/* A name that would forge a log line, a description that is not UTF-8:
 * refused before the entry point runs (it calls g_error()). */
static void
test_registry_malformed_info (void)
{
  g_autoptr(SymfonicRegistry) registry = symfonic_registry_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) plugins = NULL;

  g_assert_null (symfonic_registry_load_plugin (registry, MALFORMED_PLUGIN, &error));
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN);
  g_assert_nonnull (strstr (error->message, MALFORMED_PLUGIN));
  g_assert_null (strchr (error->message, '\n'));

  plugins = symfonic_registry_list_plugins (registry);
  g_assert_cmpuint (plugins->len, ==, 0);
}

/* The folders of a scan as a child test finds them. */
static char *
scan_dir (const char *name)
{
  const char *base = g_getenv ("TEST_SCAN_DIR");

  g_assert_nonnull (base);
  return g_build_filename (base, name, NULL);
}

/* Runs the current test in a child, with a scratch folder holding @files
 * (name, then what to put there: the path of a file to copy, or text),
 * and removes them afterwards. */
static void
trap_with_scan_dir (const char * const *files)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *tmp = g_dir_make_tmp ("symfonic-scan-XXXXXX", &error);
  g_autofree char *first = g_build_filename (tmp, "first", NULL);

  g_assert_no_error (error);
  g_assert_cmpint (g_mkdir (first, 0700), ==, 0);
  for (guint i = 0; files[i] != NULL; i += 2)
    {
      g_autofree char *path = g_build_filename (first, files[i], NULL);

      if (g_path_is_absolute (files[i + 1]))
        {
          g_autoptr(GFile) source = g_file_new_for_path (files[i + 1]);
          g_autoptr(GFile) target = g_file_new_for_path (path);

          g_file_copy (source, target, G_FILE_COPY_NONE, NULL, NULL, NULL, &error);
          g_assert_no_error (error);
        }
      else
        {
          g_file_set_contents (path, files[i + 1], -1, &error);
          g_assert_no_error (error);
        }
    }

  g_setenv ("TEST_SCAN_DIR", tmp, TRUE);
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_unsetenv ("TEST_SCAN_DIR");

  for (guint i = 0; files[i] != NULL; i += 2)
    {
      g_autofree char *path = g_build_filename (first, files[i], NULL);

      g_unlink (path);
    }
  g_rmdir (first);
  g_rmdir (tmp);
  g_test_trap_assert_passed ();
}

/* Junk on the plugin path (a text file named like a module, a module
 * with malformed info, one built for another API) is skipped with a
 * warning naming it, as GStreamer does; the rest still load. */
static void
test_registry_scan_skips_junk (void)
{
  static const char * const files[] = {
    "libjunk." G_MODULE_SUFFIX, "this is not a shared object\n",
    "libsymfonic-test-bad-api." G_MODULE_SUFFIX, BAD_API_PLUGIN,
    "libsymfonic-test-malformed." G_MODULE_SUFFIX, MALFORMED_PLUGIN,
    NULL
  };

  if (g_test_subprocess ())
    {
      g_autoptr(SymfonicRegistry) registry = symfonic_registry_new ();
      g_autoptr(GError) error = NULL;
      g_autoptr(GPtrArray) plugins = NULL;
      g_autofree char *first = scan_dir ("first");

      g_setenv ("SYMFONIC_PLUGIN_PATH", first, TRUE);
      g_test_expect_message ("Symfonic", G_LOG_LEVEL_WARNING, "Skipping plugin */first/libjunk.so: *");
      g_test_expect_message ("Symfonic", G_LOG_LEVEL_WARNING,
                             "Skipping plugin */first/libsymfonic-test-bad-api.so: *");
      g_test_expect_message ("Symfonic", G_LOG_LEVEL_WARNING,
                             "Skipping plugin */first/libsymfonic-test-malformed.so: *");
      g_assert_true (symfonic_registry_scan (registry, &error));
      g_assert_no_error (error);
      g_test_assert_expected_messages ();

      g_assert_cmpstr (symfonic_plugin_get_filename (symfonic_registry_get_type_plugin (registry, "replay")),
                       ==, REPLAY_PLUGIN);
      plugins = symfonic_registry_list_plugins (registry);
      for (guint i = 0; i < plugins->len; i++)
        g_assert_false (g_str_has_prefix (symfonic_plugin_get_name (g_ptr_array_index (plugins, i)), "test-"));
      return;
    }

  trap_with_scan_dir (files);
}

/* The same plugin in two folders of the path: the first one serves, the
 * other is noted and left alone. */
static void
test_registry_scan_first_wins (void)
{
  static const char * const files[] = {
    "libsymfonic-test-stage." G_MODULE_SUFFIX, GOOD_PLUGIN,
    NULL
  };

  if (g_test_subprocess ())
    {
      g_autoptr(SymfonicRegistry) registry = symfonic_registry_new ();
      g_autoptr(GError) error = NULL;
      g_autofree char *first = scan_dir ("first");
      g_autofree char *path = g_strconcat (first, G_SEARCHPATH_SEPARATOR_S, TEST_PLUGIN_GOOD_DIR, NULL);
      g_autofree char *note = g_strdup_printf ("Not loading %s: plugin “test-stage” is already loaded from */first/"
                                               "libsymfonic-test-stage.so", GOOD_PLUGIN);

      g_setenv ("SYMFONIC_PLUGIN_PATH", path, TRUE);
      g_test_expect_message ("Symfonic", G_LOG_LEVEL_MESSAGE, note);
      g_assert_true (symfonic_registry_scan (registry, &error));
      g_assert_no_error (error);
      g_test_assert_expected_messages ();

      g_assert_true (g_str_has_suffix (symfonic_plugin_get_filename (symfonic_registry_get_type_plugin (registry,
                                                                                                        "test-upper")),
                                       "/first/libsymfonic-test-stage." G_MODULE_SUFFIX));
      g_assert_nonnull (symfonic_registry_get_type_plugin (registry, "replay"));
      return;
    }

  trap_with_scan_dir (files);
}

static void
test_registry_missing_directory (void)
{
  g_autoptr(SymfonicRegistry) registry = symfonic_registry_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *missing = g_build_filename (g_get_tmp_dir (), "no-such-plugin-dir", NULL);
  g_auto(GStrv) types = NULL;

  g_assert_true (symfonic_registry_load_directory (registry, missing, &error));
  g_assert_no_error (error);
  types = symfonic_registry_list_types (registry);
  g_assert_cmpstrv (types, ((const char * const[]) { NULL }));
}

typedef struct
{
  const char *name;
  const char *filename;
} BadFile;

static void
test_registry_bad_files (void)
{
  static const BadFile cases[] = {
    { "missing", "/nonexistent/libsymfonic-nothing." G_MODULE_SUFFIX },
    { "not-a-plugin", SYMFONIC_BUILD_ROOT "/gateway/libsymfonic-1.0." G_MODULE_SUFFIX },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(SymfonicRegistry) registry = symfonic_registry_new ();
      g_autoptr(GError) error = NULL;

      g_test_message ("case %s", cases[i].name);
      g_assert_null (symfonic_registry_load_plugin (registry, cases[i].filename, &error));
      g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN);
      g_assert_nonnull (strstr (error->message, cases[i].filename));
    }
}

static void
test_registry_app_type (void)
{
  SymfonicRegistry *registry = symfonic_registry_get_default ();
  g_autoptr(SymfonicRegistry) other = symfonic_registry_new ();
  g_autoptr(GError) error = NULL;

  g_assert_true (symfonic_register_stage_type (TEST_TYPE_APP_STAGE, "test-app-stage", &error));
  g_assert_no_error (error);
  g_assert_cmpuint (symfonic_registry_lookup (registry, "test-app-stage"), ==, TEST_TYPE_APP_STAGE);
  /* an application type has no plugin */
  g_assert_null (symfonic_registry_get_type_plugin (registry, "test-app-stage"));

  g_assert_false (symfonic_register_stage_type (TEST_TYPE_APP_STAGE, "test-app-stage", &error));
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN);
  g_assert_nonnull (strstr (error->message, "test-app-stage"));
  g_clear_error (&error);

  /* a registry is its own namespace */
  g_assert_cmpuint (symfonic_registry_lookup (other, "test-app-stage"), ==, G_TYPE_INVALID);

  /* taking a plugin's name is refused, naming the plugin's file */
  g_assert_true (symfonic_registry_load_directory (other, TEST_PLUGIN_GOOD_DIR, &error));
  g_assert_no_error (error);
  g_assert_false (symfonic_registry_register_type (other, TEST_TYPE_APP_STAGE, "test-upper", NULL, &error));
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN);
  g_assert_nonnull (strstr (error->message, "test-upper"));
  g_assert_nonnull (strstr (error->message, GOOD_PLUGIN));
  g_assert_cmpstr (g_type_name (symfonic_registry_lookup (other, "test-upper")), ==, "TestUpperStage");
}

static void
test_registry_list_sorted (void)
{
  static const char * const names[] = { "zeta", "mid", "alpha", "mi", "test-app" };
  g_autoptr(SymfonicRegistry) registry = symfonic_registry_new ();
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) types = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_assert_true (symfonic_registry_register_type (registry, TEST_TYPE_APP_STAGE, names[i], NULL, &error));
      g_assert_no_error (error);
    }
  g_assert_true (symfonic_registry_load_directory (registry, TEST_PLUGIN_GOOD_DIR, &error));
  g_assert_no_error (error);

  types = symfonic_registry_list_types (registry);
  g_assert_cmpstrv (types, ((const char * const[]) {
    "alpha", "mi", "mid", "test-app", "test-upper", "zeta", NULL
  }));
}

/* A loader of `.fake` scripts, each naming the type it registers. */
typedef struct
{
  GMainContext *context;
  guint         adopted;
} FakeLoader;

static gboolean
load_fake (const char  *filename,
           gpointer     user_data,
           GError     **error)
{
  g_autofree char *contents = NULL;

  if (!g_file_get_contents (filename, &contents, NULL, error))
    return FALSE;
  if (g_str_equal (contents, "source"))
    return symfonic_register_stage_type (TEST_TYPE_SCRIPT_SOURCE, "fake-source", error);

  return symfonic_register_stage_type (TEST_TYPE_SCRIPT_STAGE, "fake-stage", error);
}

static gboolean
adopt_fake (GType        type,
            const char  *name,
            gpointer     user_data,
            GError     **error)
{
  FakeLoader *loader = user_data;

  loader->adopted++;
  if (g_type_is_a (type, SYMFONIC_TYPE_SOURCE))
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN, "%s: not in this language", name);
      return FALSE;
    }
  symfonic_stage_type_set_main_context (type, loader->context);

  return TRUE;
}

/* A folder of one script, @kind.fake, saying @kind; removed by
 * remove_fake_script_folder(). */
static char *
fake_script_folder (const char *kind)
{
  g_autoptr(GError) error = NULL;
  char *folder = g_dir_make_tmp ("fake-scripts-XXXXXX", &error);
  g_autofree char *name = g_strconcat (kind, ".fake", NULL);
  g_autofree char *script = NULL;

  g_assert_no_error (error);
  script = g_build_filename (folder, name, NULL);
  g_file_set_contents (script, kind, -1, &error);
  g_assert_no_error (error);

  return folder;
}

static void
remove_fake_script_folder (const char *folder,
                           const char *kind)
{
  g_autofree char *name = g_strconcat (kind, ".fake", NULL);
  g_autofree char *script = g_build_filename (folder, name, NULL);

  g_assert_no_errno (g_unlink (script));
  g_assert_no_errno (g_rmdir (folder));
}

/* The core knows no language: a script's loader is told of each type the
 * script registers, declares the affinity of its stages, and may refuse
 * one; a type the application registers itself is no script's, and gets
 * no affinity from any loader. */
static void
test_registry_script_loader_adopts (void)
{
  g_autoptr(SymfonicRegistry) registry = symfonic_registry_new ();
  g_autoptr(GMainContext) context = g_main_context_new ();
  FakeLoader loader = { context, 0 };
  g_autofree char *stages = fake_script_folder ("stage");
  g_autofree char *sources = fake_script_folder ("source");
  g_autoptr(GError) error = NULL;

  symfonic_registry_add_script_loader (registry, ".fake", "Fake", load_fake, adopt_fake, &loader);

  g_assert_true (symfonic_register_stage_type (TEST_TYPE_APP_STAGE, "app-stage-outside-scripts", &error));
  g_assert_no_error (error);
  g_assert_cmpuint (loader.adopted, ==, 0);
  g_assert_null (symfonic_stage_type_get_main_context (TEST_TYPE_APP_STAGE));

  g_assert_null (symfonic_stage_type_get_main_context (TEST_TYPE_SCRIPT_STAGE));
  g_assert_true (symfonic_registry_load_directory (registry, stages, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (loader.adopted, ==, 1);
  g_assert_true (symfonic_registry_lookup (registry, "fake-stage") == TEST_TYPE_SCRIPT_STAGE);
  g_assert_true (symfonic_stage_type_get_main_context (TEST_TYPE_SCRIPT_STAGE) == context);

  g_assert_false (symfonic_registry_load_directory (registry, sources, &error));
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN);
  g_assert_nonnull (strstr (error->message, "fake-source: not in this language"));
  g_assert_cmpuint (loader.adopted, ==, 2);
  g_assert_true (symfonic_registry_lookup (registry, "fake-source") == G_TYPE_INVALID);

  remove_fake_script_folder (stages, "stage");
  remove_fake_script_folder (sources, "source");
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/registry/load-good", test_registry_load_good);
  g_test_add_data_func ("/registry/api-mismatch", &api_mismatch_cases[0], test_registry_api_mismatch);
  g_test_add_data_func ("/registry/api-mismatch/previous", &api_mismatch_cases[1], test_registry_api_mismatch);
  g_test_add_func ("/registry/duplicate-type", test_registry_duplicate_type);
  g_test_add_func ("/registry/idempotent", test_registry_idempotent);
  g_test_add_func ("/registry/symlink", test_registry_symlink);
  g_test_add_func ("/registry/special-files", test_registry_special_files);
  g_test_add_func ("/registry/malformed-info", test_registry_malformed_info);
  g_test_add_func ("/registry/scan-skips-junk", test_registry_scan_skips_junk);
  g_test_add_func ("/registry/scan-first-wins", test_registry_scan_first_wins);
  g_test_add_func ("/registry/missing-directory", test_registry_missing_directory);
  g_test_add_func ("/registry/bad-files", test_registry_bad_files);
  g_test_add_func ("/registry/app-type", test_registry_app_type);
  g_test_add_func ("/registry/list-sorted", test_registry_list_sorted);
  g_test_add_func ("/registry/script-loader-adopts", test_registry_script_loader_adopts);

  return g_test_run ();
}
