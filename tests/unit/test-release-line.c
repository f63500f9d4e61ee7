/* test-release-line.c: the release-line predicate, the one contract
 * version, and the release-line stage
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <symfonic.h>

#define RELEASE_LINE_PLUGIN SYMFONIC_BUILD_PLUGIN_DIR "/libsymfonic-release-line." G_MODULE_SUFFIX
#define README SYMFONIC_TEST_UNIT_DIR "/../../README.md"
#define GIR SYMFONIC_BUILD_ROOT "/gateway/Symfonic-1.0.gir"
#define README_PHRASE "publishes the text-delta contract from release line"

static void
test_numeric_release_line (void)
{
  const struct {
    const char *version;
    const char *line;
  } cases[] = {
    { "11.0.0.dev3+local", "11.0.0" },
    { "11.0rc1", "11.0" },
    { "9.13.0.dev0", "9.13.0" },
    { "10.4", "10.4" },
    { "10.4.9", "10.4.9" },
    { "11", "11" },
    { "12.0", "12.0" },
    { "11.0.0", "11.0.0" },
    { "11.0.0+local", "11.0.0" },
    { "11.0-beta", "11.0" },
    { "11a.5", "11" },
    { "1.2.3.4.5", "1.2.3.4.5" },
    { "007.010", "007.010" },
    { "abc", "0" },
    { "", "0" },
    { ".5", "0" },
    { "v11.0", "0" },
    { " 11.0", "0" },
    { "11..0", "11" },
    { "11.0.", "11.0" },
    { "11.", "11" },
    { "12345678901234567890123456789.98765432109876543210", "12345678901234567890123456789.98765432109876543210" },
    { "99999999999999999999.0rc2", "99999999999999999999.0" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *line = symfonic_numeric_release_line (cases[i].version);

      g_test_message ("“%s” → “%s”", cases[i].version, line);
      g_assert_cmpstr (line, ==, cases[i].line);
    }
}

static void
test_publishes_text_deltas (void)
{
  const struct {
    const char *version;
    gboolean    publishes;
  } cases[] = {
    { "11", TRUE },
    { "11.0", TRUE },
    { "11.0.0", TRUE },
    { "11.1", TRUE },
    { "12.0", TRUE },
    { "11.0.0rc1", TRUE },
    { "11.0.0.dev3+local", TRUE },
    { "11rc1", TRUE },
    { "011.0", TRUE },
    { "11.0.0.0.0", TRUE },
    { "100", TRUE },
    { "99999999999999999999999999", TRUE },
    { "10.4.9", FALSE },
    { "10.99999999999999999999", FALSE },
    { "10", FALSE },
    { "9.13", FALSE },
    { "9.13.0.dev0", FALSE },
    { "abc", FALSE },
    { "", FALSE },
    { ".11", FALSE },
    { "0", FALSE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_test_message ("“%s”", cases[i].version);
      g_assert_cmpint (symfonic_publishes_text_deltas (cases[i].version), ==, cases[i].publishes);
    }
}

static void
test_compare_release_lines (void)
{
  g_assert_cmpint (symfonic_compare_release_lines ("11", "11.0.0"), ==, 0);
  g_assert_cmpint (symfonic_compare_release_lines ("11.0.0rc1", "11"), ==, 0);
  g_assert_cmpint (symfonic_compare_release_lines ("011", "11.0"), ==, 0);
  g_assert_cmpint (symfonic_compare_release_lines ("10.4.9", "11"), <, 0);
  g_assert_cmpint (symfonic_compare_release_lines ("11", "10.4.9"), >, 0);
  g_assert_cmpint (symfonic_compare_release_lines ("9.13", "10.4"), <, 0);
  g_assert_cmpint (symfonic_compare_release_lines ("10.10", "10.9"), >, 0);
  g_assert_cmpint (symfonic_compare_release_lines ("abc", "0"), ==, 0);
}

/* Every copy of the contract version outside symfonic-release-line.h must
 * agree with it: the README's statement and what the bindings see. */
static void
test_readme_agrees (void)
{
  g_autofree char *text = NULL;
  g_autofree char *flat = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GRegex) blanks = NULL;
  g_autoptr(GRegex) phrase = NULL;
  g_autoptr(GMatchInfo) match = NULL;
  guint found = 0;

  g_assert_true (g_file_get_contents (README, &text, NULL, &error));
  g_assert_no_error (error);

  /* Markdown may wrap the sentence anywhere */
  blanks = g_regex_new ("\\s+", 0, 0, NULL);
  flat = g_regex_replace_literal (blanks, text, -1, 0, " ", 0, NULL);
  phrase = g_regex_new (README_PHRASE " `?([0-9]+(\\.[0-9]+)*)", 0, 0, NULL);

  g_regex_match (phrase, flat, 0, &match);
  while (g_match_info_matches (match))
    {
      g_autofree char *version = g_match_info_fetch (match, 1);

      g_test_message ("README: %s %s", README_PHRASE, version);
      g_assert_cmpstr (version, ==, SYMFONIC_TEXT_DELTA_CONTRACT_VERSION);
      found++;
      g_match_info_next (match, NULL);
    }

  if (found == 0)
    g_test_message ("README.md does not say “" README_PHRASE " X”");
  g_assert_cmpuint (found, >, 0);
}

static void
test_gir_agrees (void)
{
  g_autofree char *text = NULL;
  g_autoptr(GRegex) constant = NULL;
  g_autoptr(GMatchInfo) match = NULL;
  g_autofree char *value = NULL;

  if (!g_file_get_contents (GIR, &text, NULL, NULL))
    {
      g_test_skip ("built without introspection");
      return;
    }

  constant = g_regex_new ("<constant name=\"TEXT_DELTA_CONTRACT_VERSION\"\\s+value=\"([^\"]*)\"", 0, 0, NULL);
  g_assert_true (g_regex_match (constant, text, 0, &match));
  value = g_match_info_fetch (match, 1);
  g_assert_cmpstr (value, ==, SYMFONIC_TEXT_DELTA_CONTRACT_VERSION);
}

/* The release-line stage, through its admission hook. */

#define TEST_TYPE_NULL_SOURCE (test_null_source_get_type ())
G_DECLARE_FINAL_TYPE (TestNullSource, test_null_source, TEST, NULL_SOURCE, GObject)

struct _TestNullSource
{
  GObject parent_instance;
};

static void
test_null_source_start (SymfonicSource *source,
                        SymfonicStream *stream,
                        GCancellable   *cancellable)
{
  symfonic_stream_push_end (stream, NULL);
}

static void
test_null_source_source_init (SymfonicSourceInterface *iface)
{
  iface->start = test_null_source_start;
}

G_DEFINE_FINAL_TYPE_WITH_CODE (TestNullSource, test_null_source, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_SOURCE, test_null_source_source_init))

static void
test_null_source_class_init (TestNullSourceClass *klass)
{
}

static void
test_null_source_init (TestNullSource *self)
{
}

static GType
release_line_stage_type (void)
{
  static SymfonicRegistry *registry;
  g_autoptr(GError) error = NULL;

  if (registry == NULL)
    {
      registry = symfonic_registry_new ();
      g_assert_nonnull (symfonic_registry_load_plugin (registry, RELEASE_LINE_PLUGIN, &error));
      g_assert_no_error (error);
    }

  return symfonic_registry_lookup (registry, "release-line");
}

/* Admits a request with @pin (or no header) on a route whose line is
 * 10.4.2; returns the stream's line, or NULL with @error set. */
static char *
admit (const char  *release_line,
       gboolean     allow_client_pin,
       const char  *pin,
       GError     **error)
{
  g_autoptr(GObject) stage = NULL;
  g_autoptr(SymfonicSource) source = g_object_new (TEST_TYPE_NULL_SOURCE, NULL);
  g_autoptr(SymfonicRoute) route = NULL;
  g_autoptr(SymfonicInvocation) invocation = symfonic_invocation_new ("hello");
  g_autoptr(SymfonicStream) stream = NULL;
  g_autoptr(GError) local_error = NULL;

  stage = g_initable_new (release_line_stage_type (), NULL, &local_error,
                          "release-line", release_line,
                          "allow-client-pin", allow_client_pin,
                          NULL);
  g_assert_no_error (local_error);

  route = symfonic_route_new ("chunks", "/api/v1/stream", SYMFONIC_ROUTE_KIND_CHUNKS, source);
  symfonic_route_set_release_line (route, "10.4.2");
  symfonic_route_add_stage (route, SYMFONIC_STAGE (stage));
  if (pin != NULL)
    symfonic_invocation_set_header (invocation, "X-Symfonic-Release-Line", pin);
  stream = symfonic_stream_new (route, invocation);

  if (!symfonic_stage_admit (SYMFONIC_STAGE (stage), stream, error))
    return NULL;

  return g_strdup (symfonic_stream_get_release_line (stream));
}

static void
test_stage_choice (void)
{
  const struct {
    const char *release_line;
    gboolean    allow_client_pin;
    const char *pin;
    const char *chosen;
  } cases[] = {
    /* the route's line stands when the stage says nothing */
    { NULL, FALSE, NULL, "10.4.2" },
    { "11.0.0", FALSE, NULL, "11.0.0" },
    { "9.13.0.dev0", FALSE, NULL, "9.13.0.dev0" },
    /* pins only count when allowed */
    { "11.0.0", FALSE, "10.4", "11.0.0" },
    { NULL, FALSE, "abc", "10.4.2" },
    { "11.0.0", TRUE, NULL, "11.0.0" },
    { "11.0.0", TRUE, "10.4", "10.4" },
    { NULL, TRUE, "12.1", "12.1" },
    /* a pin is kept as its numeric line: nothing else of the header */
    { "11.0.0", TRUE, "10.4.9rc1; junk", "10.4.9" },
    { NULL, TRUE, "11.0.0.dev3+local", "11.0.0" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *chosen = admit (cases[i].release_line, cases[i].allow_client_pin, cases[i].pin, &error);

      g_assert_no_error (error);
      g_assert_cmpstr (chosen, ==, cases[i].chosen);
    }
}

static void
test_stage_refuses_bad_pin (void)
{
  const char *pins[] = { "abc", "", "v10", ".5", " 10.4" };

  for (guint i = 0; i < G_N_ELEMENTS (pins); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *chosen = admit ("11.0.0", TRUE, pins[i], &error);

      g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST);
      g_assert_null (chosen);
    }
}

static void
test_stage_refuses_bad_setting (void)
{
  const char *lines[] = { "abc", "", "v11" };

  for (guint i = 0; i < G_N_ELEMENTS (lines); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GObject) stage = g_initable_new (release_line_stage_type (), NULL, &error,
                                                 "release-line", lines[i], NULL);

      g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
      g_assert_null (stage);
    }
}

static void
test_stage_properties (void)
{
  g_autoptr(GTypeClass) klass = g_type_class_ref (release_line_stage_type ());
  g_autoptr(GObject) stage = g_object_new (release_line_stage_type (), NULL);
  const char *names[] = { "release-line", "allow-client-pin" };
  g_autofree char *line = NULL;
  gboolean allow = TRUE;

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      GParamSpec *pspec = g_object_class_find_property (G_OBJECT_CLASS (klass), names[i]);

      g_assert_nonnull (pspec);
      g_assert_nonnull (g_param_spec_get_nick (pspec));
      g_assert_cmpstr (g_param_spec_get_nick (pspec), !=, names[i]);
      g_assert_nonnull (g_param_spec_get_blurb (pspec));
      g_assert_cmpstr (g_param_spec_get_blurb (pspec), !=, names[i]);
    }

  g_object_get (stage, "release-line", &line, "allow-client-pin", &allow, NULL);
  g_assert_null (line);
  g_assert_false (allow);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/release-line/numeric", test_numeric_release_line);
  g_test_add_func ("/release-line/publishes", test_publishes_text_deltas);
  g_test_add_func ("/release-line/compare", test_compare_release_lines);
  g_test_add_func ("/release-line/marker/readme", test_readme_agrees);
  g_test_add_func ("/release-line/marker/gir", test_gir_agrees);
  g_test_add_func ("/release-line/stage/choice", test_stage_choice);
  g_test_add_func ("/release-line/stage/bad-pin", test_stage_refuses_bad_pin);
  g_test_add_func ("/release-line/stage/bad-setting", test_stage_refuses_bad_setting);
  g_test_add_func ("/release-line/stage/properties", test_stage_properties);

  return g_test_run ();
}
