/* test-initable.c: how the stage and source types initialise
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <glib/gstdio.h>
#include <symfonic.h>

#define TRANSCRIPTS_DIR SYMFONIC_TEST_UNIT_DIR "/fixtures/transcripts"
#define SHORT_TOKENS "[principal:a]\ntoken-sha256=abc123\ntenants=t\n"

static SymfonicRegistry *registry;

/* @name in the test's own folder, written with @contents. */
static GFile *
write_file (const char *name,
            const char *contents)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = g_build_filename (g_get_user_cache_dir (), name, NULL);
  g_autofree char *dir = g_path_get_dirname (path);

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_assert_true (g_file_set_contents (path, contents, -1, &error));
  g_assert_no_error (error);

  return g_file_new_for_path (path);
}

static GFile *
missing_file (const char *name)
{
  g_autofree char *path = g_build_filename (g_get_user_cache_dir (), name, NULL);

  return g_file_new_for_path (path);
}

/* An object of the registered type @name, not initialised. */
static GObject *
new_object (const char *name,
            const char *first_property,
            ...)
{
  GType type = symfonic_registry_lookup (registry, name);
  GObject *object;
  va_list args;

  g_assert_true (g_type_is_a (type, G_TYPE_INITABLE));
  va_start (args, first_property);
  object = g_object_new_valist (type, first_property, args);
  va_end (args);

  return object;
}

static GObject *
auth_demo_tokens (void)
{
  g_autoptr(GFile) tokens = g_file_new_for_path (SYMFONIC_TEST_DATA_DIR "/demo-tokens.ini");

  return new_object ("auth", "tokens-file", tokens, NULL);
}

static GObject *
auth_short_digest (void)
{
  g_autoptr(GFile) tokens = write_file ("tokens.ini", SHORT_TOKENS);

  return new_object ("auth", "tokens-file", tokens, NULL);
}

static GObject *
auth_missing_tokens (void)
{
  g_autoptr(GFile) tokens = missing_file ("no-such-tokens.ini");

  return new_object ("auth", "tokens-file", tokens, NULL);
}

static GObject *
auth_short_secret (void)
{
  g_autoptr(GFile) secret = write_file ("secret", "short\n");

  return new_object ("auth", "jwt-hs256-secret-file", secret, NULL);
}

static GObject *
error_map_shipped (void)
{
  g_autoptr(GFile) table = g_file_new_for_path (SYMFONIC_TEST_DATA_DIR "/error-map.ini");

  return new_object ("error-map", "table", table, NULL);
}

static GObject *
error_map_unknown_code (void)
{
  g_autoptr(GFile) table = write_file ("errors.ini", "[code:no_such_code]\nstatus=400\n");

  return new_object ("error-map", "table", table, NULL);
}

static GObject *
error_map_not_a_table (void)
{
  g_autoptr(GFile) table = write_file ("errors.ini", "[code:conflict]\njust words\n");

  return new_object ("error-map", "table", table, NULL);
}

static GObject *
replay_fixtures (void)
{
  g_autoptr(GFile) transcripts = g_file_new_for_path (TRANSCRIPTS_DIR);

  return new_object ("replay", "transcripts", transcripts, NULL);
}

static GObject *
replay_bad_transcript (void)
{
  g_autoptr(GFile) transcript = write_file ("transcripts/plain.jsonl", "{\"event\":\"TextDeltaEvent\",}\n");
  g_autoptr(GFile) transcripts = g_file_get_parent (transcript);

  return new_object ("replay", "transcripts", transcripts, NULL);
}

static GObject *
replay_missing_folder (void)
{
  g_autoptr(GFile) transcripts = missing_file ("no-such-transcripts");

  return new_object ("replay", "transcripts", transcripts, NULL);
}

static GObject *
release_line_valid (void)
{
  return new_object ("release-line", "release-line", "10.4.9", NULL);
}

static GObject *
release_line_invalid (void)
{
  return new_object ("release-line", "release-line", "abc", NULL);
}

static GObject *
extraction_default (void)
{
  return new_object ("extraction", NULL);
}

static GObject *
extraction_empty_tag (void)
{
  return new_object ("extraction", "open-tag", "", NULL);
}

static GObject *
citation_default (void)
{
  return new_object ("citation", NULL);
}

static GObject *
citation_bad_kind (void)
{
  const char * const kinds[] = { "semantic", "two words", NULL };

  return new_object ("citation", "kinds", kinds, NULL);
}

static GObject *
rate_limit_default (void)
{
  return new_object ("rate-limit", NULL);
}

static GObject *
budget_default (void)
{
  return new_object ("budget", NULL);
}

static GObject *
budget_reserve_too_large (void)
{
  return new_object ("budget", "tokens-per-window", (guint64) 10, "reserve-tokens", (guint64) 20, NULL);
}

typedef struct
{
  const char *name;
  GObject   *(*build) (void);
  /* NULL: the object initialises; else what its error must say */
  const char *cause;
  /* the domain and code of the error that caused the failure, passed on */
  GQuark     (*domain) (void);
  int         code;
} InitCase;

static const InitCase init_cases[] = {
  { "auth", auth_demo_tokens, NULL, NULL, 0 },
  /* the token table's own words: its file, line, group and key */
  { "auth-short-digest", auth_short_digest, "tokens.ini:2: [principal:a] token-sha256: ",
    symfonic_error_quark, SYMFONIC_ERROR_CONFIG },
  { "auth-missing-tokens", auth_missing_tokens, "tokens-file: ", symfonic_error_quark, SYMFONIC_ERROR_CONFIG },
  { "auth-short-secret", auth_short_secret, "expected a secret of at least 32 bytes", g_io_error_quark, G_IO_ERROR_INVALID_DATA },
  { "error-map", error_map_shipped, NULL, NULL, 0 },
  { "error-map-unknown-code", error_map_unknown_code, "errors.ini:1: [code:no_such_code]: expected a published error code (",
    symfonic_error_quark, SYMFONIC_ERROR_CONFIG },
  { "error-map-not-a-table", error_map_not_a_table, "errors.ini:2: expected “key=value”",
    symfonic_error_quark, SYMFONIC_ERROR_CONFIG },
  { "replay", replay_fixtures, NULL, NULL, 0 },
  { "replay-bad-transcript", replay_bad_transcript, "plain.jsonl:1: Invalid JSON at byte ",
    symfonic_error_quark, SYMFONIC_ERROR_CONFIG },
  /* what GIO said of the folder, not a word of our own */
  { "replay-missing-folder", replay_missing_folder, "no-such-transcripts", g_io_error_quark, G_IO_ERROR_NOT_FOUND },
  { "release-line", release_line_valid, NULL, NULL, 0 },
  { "release-line-invalid", release_line_invalid, "release-line: expected a release line, such as 11.0.0, found “abc”",
    symfonic_error_quark, SYMFONIC_ERROR_CONFIG },
  { "extraction", extraction_default, NULL, NULL, 0 },
  { "extraction-empty-tag", extraction_empty_tag, "open-tag", symfonic_error_quark, SYMFONIC_ERROR_CONFIG },
  { "citation", citation_default, NULL, NULL, 0 },
  { "citation-bad-kind", citation_bad_kind, "kinds: expected citation kinds, words without “[”, “]”, “:” or a space, found “two words”",
    symfonic_error_quark, SYMFONIC_ERROR_CONFIG },
  { "rate-limit", rate_limit_default, NULL, NULL, 0 },
  { "budget", budget_default, NULL, NULL, 0 },
  { "budget-reserve-too-large", budget_reserve_too_large, "reserve-tokens: expected at most tokens-per-window (10), found 20",
    symfonic_error_quark, SYMFONIC_ERROR_CONFIG },
};

/* GInitable's contract: a second call answers as the first did. A failure
 * says what went wrong underneath, in that error's domain and code. */
static void
test_init_twice (gconstpointer data)
{
  const InitCase *c = data;
  g_autoptr(GObject) object = c->build ();
  g_autoptr(GError) first = NULL;
  g_autoptr(GError) second = NULL;
  gboolean first_ok;
  gboolean second_ok;

  first_ok = g_initable_init (G_INITABLE (object), NULL, &first);
  second_ok = g_initable_init (G_INITABLE (object), NULL, &second);
  g_test_message ("%s", first != NULL ? first->message : "initialised");

  if (c->cause == NULL)
    {
      g_assert_no_error (first);
      g_assert_no_error (second);
      g_assert_true (first_ok && second_ok);
      return;
    }

  g_assert_false (first_ok);
  g_assert_false (second_ok);
  g_assert_error (first, c->domain (), c->code);
  g_assert_error (second, c->domain (), c->code);
  g_assert_cmpstr (second->message, ==, first->message);
  if (strstr (first->message, c->cause) == NULL)
    g_error ("“%s” does not say “%s”", first->message, c->cause);
}

typedef struct
{
  const char *name;
  const char *type;
  const char *key;
  /* the file written, relative to the test's folder; @key names it, or
   * its folder */
  const char *file;
  gboolean    folder;
  const char *good;
  const char *bad;
} ChangedFileCase;

static const ChangedFileCase changed_file_cases[] = {
  { "auth", "auth", "tokens-file", "tokens.ini", FALSE, NULL, SHORT_TOKENS },
  { "error-map", "error-map", "table", "errors.ini", FALSE, NULL, "[code:no_such_code]\nstatus=400\n" },
  { "replay", "replay", "transcripts", "transcripts/plain.jsonl", TRUE,
    "{\"event\":\"TextDeltaEvent\",\"data\":{\"text\":\"a\"}}\n", "not json\n" },
};

/* The contents a good file of @c starts as: the shipped one when the case
 * has none of its own. */
static char *
good_contents (const ChangedFileCase *c)
{
  const char *shipped = g_str_equal (c->type, "auth") ? SYMFONIC_TEST_DATA_DIR "/demo-tokens.ini"
                                                      : SYMFONIC_TEST_DATA_DIR "/error-map.ini";
  g_autoptr(GError) error = NULL;
  char *contents = NULL;

  if (c->good != NULL)
    return g_strdup (c->good);
  g_assert_true (g_file_get_contents (shipped, &contents, NULL, &error));

  return contents;
}

static GObject *
new_on_file (const ChangedFileCase *c,
             GFile                 *file)
{
  g_autoptr(GFile) parent = g_file_get_parent (file);

  return new_object (c->type, c->key, c->folder ? parent : file, NULL);
}

/* The first answer stands, whatever became of the files since: a second
 * call neither breaks a stage that works nor mends one that failed. */
static void
test_init_first_answer_stands (gconstpointer data)
{
  const ChangedFileCase *c = data;
  g_autofree char *good = good_contents (c);
  g_autoptr(GFile) file = write_file (c->file, good);
  g_autoptr(GObject) working = new_on_file (c, file);
  g_autoptr(GObject) failing = NULL;
  g_autoptr(GError) first = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (g_initable_init (G_INITABLE (working), NULL, &error));
  g_assert_no_error (error);
  g_clear_object (&file);
  file = write_file (c->file, c->bad);
  g_assert_true (g_initable_init (G_INITABLE (working), NULL, &error));
  g_assert_no_error (error);

  failing = new_on_file (c, file);
  g_assert_false (g_initable_init (G_INITABLE (failing), NULL, &first));
  g_assert_nonnull (first);
  g_clear_object (&file);
  file = write_file (c->file, good);
  g_assert_false (g_initable_init (G_INITABLE (failing), NULL, &error));
  g_assert_error (error, first->domain, first->code);
  g_assert_cmpstr (error->message, ==, first->message);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  registry = symfonic_registry_get_default ();
  if (!symfonic_registry_scan (registry, &error))
    g_error ("%s", error->message);

  for (guint i = 0; i < G_N_ELEMENTS (init_cases); i++)
    {
      g_autofree char *path = g_strconcat ("/initable/twice/", init_cases[i].name, NULL);

      g_test_add_data_func (path, &init_cases[i], test_init_twice);
    }
  for (guint i = 0; i < G_N_ELEMENTS (changed_file_cases); i++)
    {
      g_autofree char *path = g_strconcat ("/initable/first-answer-stands/", changed_file_cases[i].name, NULL);

      g_test_add_data_func (path, &changed_file_cases[i], test_init_first_answer_stands);
    }

  return g_test_run ();
}
