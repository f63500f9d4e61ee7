/* test-pipeline.c: the pipeline file loader
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

/* a small transcripts folder: the replay source reads all of it at load */
#define FIXTURES_DIR SYMFONIC_TEST_UNIT_DIR "/fixtures"
#define PIPELINES_DIR FIXTURES_DIR "/pipelines"

/* Building blocks of the texts below, with the lines they occupy when
 * they open a file in this order. */
#define ROUTE  "[route:r]\npath=/r\nsource=s\nstages=u\n"                /* 1-4 */
#define SOURCE "[source:s]\ntype=replay\ntranscripts=../transcripts\n"  /* 5-7 */
#define STAGE  "[stage:u]\ntype=test-upper\n"                            /* 8-9 */

static SymfonicRegistry *registry;

static SymfonicPipeline *
load_in (const char  *text,
         GFile       *base_dir,
         GError     **error)
{
  return symfonic_pipeline_new_from_data (registry, text, -1, base_dir, "t.pipeline", error);
}

static SymfonicPipeline *
load (const char  *text,
      GError     **error)
{
  g_autoptr(GFile) base_dir = g_file_new_for_path (PIPELINES_DIR);

  return load_in (text, base_dir, error);
}

typedef struct
{
  const char *name;
  const char *text;
  /* 0: the error is about the whole file */
  guint       line;
  const char *mentions[4];
} InvalidCase;

static const InvalidCase invalid_cases[] = {
  { "unknown-type", ROUTE SOURCE "[stage:u]\ntype=no-such-type\n", 9, { "[stage:u]", "type", "no-such-type" } },
  { "unknown-key", ROUTE SOURCE STAGE "colour=red\n", 10, { "[stage:u]", "colour" } },
  { "unknown-key-gateway", "[gateway]\nport=80\n" ROUTE SOURCE, 2, { "[gateway]", "port" } },
  { "gateway-listen-no-port", "[gateway]\nlisten=localhost\n" ROUTE SOURCE, 2, { "[gateway] listen", "HOST:PORT", "“localhost”" } },
  { "gateway-listen-bad-port", "[gateway]\nlisten=127.0.0.1:80800\n" ROUTE SOURCE, 2, { "[gateway] listen", "“127.0.0.1:80800”" } },
  { "int-not-a-number", ROUTE SOURCE STAGE "level=twelve\n", 10, { "level", "twelve" } },
  { "int-too-high", ROUTE SOURCE STAGE "level=6\n", 10, { "level" } },
  { "int-too-low", ROUTE SOURCE STAGE "level=-6\n", 10, { "level" } },
  { "uint-negative", ROUTE SOURCE STAGE "repeat=-1\n", 10, { "repeat", "-1" } },
  { "uint-not-a-number", ROUTE SOURCE STAGE "repeat=many\n", 10, { "repeat", "many" } },
  { "uint-too-high", ROUTE SOURCE STAGE "repeat=11\n", 10, { "repeat" } },
  { "uint-below-minimum", ROUTE SOURCE STAGE "repeat=0\n", 10, { "repeat" } },
  { "uint-overflow", ROUTE SOURCE STAGE "repeat=99999999999999999999\n", 10, { "repeat" } },
  { "uint-fraction", ROUTE SOURCE STAGE "repeat=2.5\n", 10, { "repeat", "2.5" } },
  { "double-not-a-number", ROUTE SOURCE STAGE "ratio=half\n", 10, { "ratio", "half" } },
  { "double-too-high", ROUTE SOURCE STAGE "ratio=1.5\n", 10, { "ratio", "1.5" } },
  { "double-nan", ROUTE SOURCE STAGE "ratio=nan\n", 10, { "ratio" } },
  { "double-trailing-garbage", ROUTE SOURCE STAGE "ratio=0.5x\n", 10, { "ratio" } },
  { "boolean", ROUTE SOURCE STAGE "enabled=maybe\n", 10, { "enabled", "maybe" } },
  { "enum", ROUTE SOURCE STAGE "mode=sideways\n", 10, { "mode", "sideways" } },
  { "file-empty", ROUTE SOURCE STAGE "data-file=\n", 10, { "data-file" } },
  { "string-bad-escape", ROUTE SOURCE STAGE "prefix=a\\qb\n", 10, { "prefix" } },
  { "workers-too-high", "[gateway]\nworkers=1000\n" ROUTE SOURCE, 2, { "[gateway]", "workers" } },
  { "header-timeout-zero", "[gateway]\nheader-timeout=0\n" ROUTE SOURCE, 2, { "[gateway]", "header-timeout" } },
  { "body-timeout-not-a-number", "[gateway]\nbody-timeout=30s\n" ROUTE SOURCE, 2,
    { "[gateway]", "body-timeout", "30s" } },
  { "keepalive-timeout-too-high", "[gateway]\nkeepalive-timeout=86400\n" ROUTE SOURCE, 2,
    { "[gateway]", "keepalive-timeout" } },
  { "max-connections-negative", "[gateway]\nworkers=1\nmax-connections=-5\n" ROUTE SOURCE, 3,
    { "[gateway]", "max-connections" } },
  { "missing-type", ROUTE SOURCE "[stage:u]\nprefix=x\n", 8, { "[stage:u]", "type" } },
  { "missing-source", "[route:r]\npath=/r\nsource=nowhere\n" SOURCE, 3, { "[route:r]", "source", "nowhere" } },
  { "missing-stage", "[route:r]\npath=/r\nsource=s\nstages=u;ghost\n" SOURCE STAGE, 4, { "[route:r]", "stages", "ghost" } },
  { "repeated-stage", "[route:r]\npath=/r\nsource=s\nstages=u; v ;u\n" SOURCE STAGE "[stage:v]\ntype=test-upper\n", 4,
    { "[route:r]", "stages", "“u”" } },
  { "duplicate-path",
    "[route:a]\npath=/same\nsource=s\n[route:b]\npath=/same\nsource=s\n" SOURCE, 5,
    { "[route:b]", "path", "[route:a]", "line 2" } },
  /* a provider kind serves its API's paths under its own */
  { "duplicate-provider-path",
    "[route:a]\npath=/v1\nkind=openai\nsource=s\n[route:b]\npath=/v1/models\nsource=s\n" SOURCE, 6,
    { "[route:b]", "path", "[route:a]", "line 2" } },
  { "unknown-kind", "[route:r]\npath=/r\nkind=gemini\nsource=s\n" SOURCE, 3,
    { "[route:r]", "kind", "gemini", "anthropic" } },
  { "duplicate-key", ROUTE SOURCE STAGE "prefix=a\nprefix=b\n", 11, { "[stage:u]", "prefix", "line 10" } },
  { "duplicate-group", ROUTE SOURCE "[source:s]\ntype=replay\n", 8, { "[source:s]", "line 5" } },
  { "unknown-group", ROUTE SOURCE "[filter:x]\ntype=test-upper\n", 8, { "[filter:x]" } },
  { "group-without-name", ROUTE SOURCE "[stage:]\ntype=test-upper\n", 8, { "[stage:]" } },
  { "malformed-line", ROUTE SOURCE "just some words\n", 8, { "just some words" } },
  { "malformed-header", ROUTE SOURCE "[stage:u\ntype=test-upper\n", 8, { "[stage:u" } },
  { "key-outside-group", "path=/r\n" ROUTE SOURCE, 1, { "path" } },
  { "stage-type-as-source", "[route:r]\npath=/r\nsource=s\n[source:s]\ntype=test-upper\n", 5,
    { "[source:s]", "type", "test-upper" } },
  { "source-type-as-stage", ROUTE SOURCE "[stage:u]\ntype=replay\n", 9, { "[stage:u]", "type", "replay" } },
  /* a file a key names is checked at the key, before the object reads it */
  { "initable-stage", ROUTE SOURCE STAGE "data-file=missing-file.txt\n", 10,
    { "[stage:u]", "data-file", PIPELINES_DIR "/missing-file.txt" } },
  { "initable-source", ROUTE "[source:s]\ntype=replay\ntranscripts=no-such-folder\n" STAGE, 7,
    { "[source:s]", "transcripts", PIPELINES_DIR "/no-such-folder" } },
  /* a value the text gets wrong comes first, wherever it is */
  { "file-checked-after-values", ROUTE SOURCE STAGE "data-file=missing-file.txt\nrepeat=many\n", 11,
    { "[stage:u]", "repeat", "many" } },
  /* what the object itself refuses at load is the group's */
  { "initable-stage-refuses", ROUTE SOURCE STAGE "[stage:b]\ntype=budget\ntokens-per-window=10\nreserve-tokens=20\n", 13,
    { "[stage:b]", "reserve-tokens" } },
  { "initable-source-refuses", ROUTE "[source:s]\ntype=replay\ntranscripts=../transcripts\ndefault-transcript=nope\n" STAGE, 8,
    { "[source:s]", "default-transcript", "nope.jsonl" } },
  { "route-missing-path", "[route:r]\nsource=s\n" SOURCE, 1, { "[route:r]", "path" } },
  { "route-missing-source", "[route:r]\npath=/r\n" SOURCE, 1, { "[route:r]", "source" } },
  { "route-relative-path", "[route:r]\npath=api/v1\nsource=s\n" SOURCE, 2, { "[route:r]", "path", "api/v1" } },
  { "route-bad-kind", "[route:r]\npath=/r\nkind=stream\nsource=s\n" SOURCE, 3, { "[route:r]", "kind", "stream" } },
  { "route-unknown-key", "[route:r]\npath=/r\nsource=s\nmethod=GET\n" SOURCE, 4, { "[route:r]", "method" } },
  /* properties of the route that its group does not set */
  { "route-name-key", "[route:r]\npath=/r\nsource=s\nname=other\n" SOURCE, 4, { "[route:r]", "name", "max-usage-tokens" } },
  { "route-release-line-key", "[route:r]\npath=/r\nsource=s\nrelease-line=10.4\n" SOURCE, 4,
    { "[route:r]", "release-line", "stages" } },
  { "route-max-duration-not-a-number", "[route:r]\npath=/r\nsource=s\nmax-duration=10m\n" SOURCE, 4,
    { "[route:r]", "max-duration", "10m" } },
  { "route-max-duration-negative", "[route:r]\npath=/r\nsource=s\nmax-duration=-1\n" SOURCE, 4,
    { "[route:r]", "max-duration", "-1" } },
  { "route-max-duration-too-high", "[route:r]\npath=/r\nsource=s\nmax-duration=604801\n" SOURCE, 4,
    { "[route:r]", "max-duration" } },
  { "route-max-streams-not-a-number", "[route:r]\npath=/r\nsource=s\nmax-streams=many\n" SOURCE, 4,
    { "[route:r]", "max-streams", "many" } },
  { "route-max-streams-negative", "[route:r]\npath=/r\nsource=s\nmax-streams=-1\n" SOURCE, 4,
    { "[route:r]", "max-streams", "-1" } },
  { "route-max-streams-too-high", "[route:r]\npath=/r\nsource=s\nmax-streams=1000001\n" SOURCE, 4,
    { "[route:r]", "max-streams" } },
  { "route-max-streams-per-tenant-not-a-number", "[route:r]\npath=/r\nsource=s\n\nmax-streams-per-tenant=2.5\n" SOURCE, 5,
    { "[route:r]", "max-streams-per-tenant", "2.5" } },
  { "route-max-streams-per-tenant-too-high", "[route:r]\npath=/r\nsource=s\nmax-streams-per-tenant=1000001\n" SOURCE, 4,
    { "[route:r]", "max-streams-per-tenant" } },
  { "route-stall-timeout-not-a-number", "[route:r]\npath=/r\nsource=s\nstall-timeout=30s\n" SOURCE, 4,
    { "[route:r]", "stall-timeout", "30s" } },
  { "route-stall-timeout-negative", "[route:r]\npath=/r\nsource=s\nstall-timeout=-5\n" SOURCE, 4,
    { "[route:r]", "stall-timeout", "-5" } },
  { "route-stall-timeout-too-high", "[route:r]\npath=/r\nsource=s\nstall-timeout=604801\n" SOURCE, 4,
    { "[route:r]", "stall-timeout" } },
  /* the playground's paths are its own while it is served */
  { "route-under-playground", "[gateway]\nplayground=true\n[route:r]\npath=/playground/x\nsource=s\n" SOURCE, 4,
    { "[route:r]", "path", "/playground/x", "playground" } },
  { "no-route", SOURCE STAGE, 0, { "route" } },
  { "invalid-utf8", ROUTE SOURCE STAGE "prefix=\xff\n", 0, { "UTF-8" } },
};

/* Reports every mismatch of a case, not just the first. */
static void
test_pipeline_invalid (gconstpointer data)
{
  const InvalidCase *c = data;
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *where = NULL;

  pipeline = load (c->text, &error);
  if (pipeline != NULL || error == NULL)
    {
      g_test_fail_printf ("loaded without an error");
      return;
    }
  if (!g_error_matches (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG))
    g_test_fail_printf ("error %s:%d “%s”, expected SYMFONIC_ERROR_CONFIG",
                        g_quark_to_string (error->domain), error->code, error->message);

  where = c->line > 0 ? g_strdup_printf ("t.pipeline:%u:", c->line) : g_strdup ("t.pipeline:");
  if (strstr (error->message, where) == NULL)
    g_test_fail_printf ("“%s” does not contain “%s”", error->message, where);

  for (guint j = 0; j < G_N_ELEMENTS (c->mentions) && c->mentions[j] != NULL; j++)
    {
      if (strstr (error->message, c->mentions[j]) == NULL)
        g_test_fail_printf ("“%s” does not mention “%s”", error->message, c->mentions[j]);
    }
}

/* --- the order stages declare they need ---------------------------------- */

#define ORDER_AUTH "[stage:a]\ntype=auth\ntokens-file=" SYMFONIC_TEST_DATA_DIR "/demo-tokens.ini\n"
#define ORDER_STAGES                                              \
  SOURCE ORDER_AUTH                                               \
  "[stage:m]\ntype=rate-limit\n"                                  \
  "[stage:b]\ntype=budget\n"                                      \
  "[stage:e]\ntype=extraction\n"                                  \
  "[stage:c]\ntype=citation\n"                                    \
  "[stage:p]\ntype=projection\n"

typedef struct
{
  const char *name;
  /* the route's stages= */
  const char *stages;
  const char *kind;
  /* NULL: the pipeline loads */
  const char *message;
} OrderCase;

static const OrderCase order_cases[] = {
  { "meter-without-auth", "m", "typed",
    "t.pipeline:5: [route:r] stages: expected a stage that provides “principal” before stage “m” (rate-limit), "
    "which counts requests by their authenticated tenant and principal, found none on the route" },
  { "budget-without-auth", "e;c;b", "chat",
    "t.pipeline:5: [route:r] stages: expected a stage that provides “principal” before stage “b” (budget), "
    "which keeps a budget per authenticated tenant, found none on the route" },
  { "citation-before-extraction", "a;m;c;e", "typed",
    "t.pipeline:5: [route:r] stages: expected stage “e” (extraction) before stage “c” (citation), "
    "which drops the memory blocks it meets, found it after" },
  { "chunks-without-projection", "a;e;c", "chunks",
    "t.pipeline:5: [route:r] stages: expected a stage that provides “projection” on a “chunks” route, "
    "found none among its stages" },
  { "chunks-without-stages", "", "chunks",
    "t.pipeline:5: [route:r] stages: expected a stage that provides “projection” on a “chunks” route, "
    "found none among its stages" },
  { "meter-after-auth", "a;m;b", "typed", NULL },
  /* auth admits on the request head, before any meter whatever the list says */
  { "meter-listed-before-auth", "m;b;a", "typed", NULL },
  { "extraction-then-citation", "e;c", "typed", NULL },
  { "citation-alone", "c", "chat", NULL },
  { "chunks-with-projection", "e;c;p", "chunks", NULL },
};

static void
test_pipeline_order (gconstpointer data)
{
  const OrderCase *c = data;
  g_autofree char *text = g_strdup_printf ("[route:r]\npath=/r\nkind=%s\nsource=s\nstages=%s\n" ORDER_STAGES,
                                           c->kind, c->stages);
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(GError) error = NULL;

  pipeline = load (text, &error);
  if (c->message == NULL)
    {
      g_assert_no_error (error);
      g_assert_nonnull (pipeline);
      return;
    }
  g_assert_null (pipeline);
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==, c->message);
}

static void
test_pipeline_properties (void)
{
  static const char text[] =
    "[route:r]\n"
    "path=/r\n"
    "kind=chunks\n"
    "source=s\n"
    "stages=u;p\n"
    "max-duration=90\n"
    "max-streams=500\n"
    "max-streams-per-tenant=20\n"
    "stall-timeout=7\n"
    SOURCE
    "[stage:u]\n"
    "type=test-upper\n"
    "prefix=>>\n"
    "repeat=10\n"
    "mode=first\n"
    "words=a;b;c\n"
    "enabled=false\n"
    "ratio=0.25\n"
    "level=-5\n"
    /* what a chunks route needs */
    "[stage:p]\n"
    "type=projection\n";
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GEnumClass) modes = NULL;
  g_autofree char *prefix = NULL;
  g_auto(GStrv) words = NULL;
  g_autoptr(GFile) data_file = NULL;
  SymfonicStage *stage;
  SymfonicRoute *route;
  guint repeat;
  int mode;
  gboolean enabled;
  double ratio;
  int level;

  pipeline = load (text, &error);
  g_assert_no_error (error);

  stage = symfonic_pipeline_get_stage (pipeline, "u");
  g_assert_nonnull (stage);
  g_assert_cmpstr (G_OBJECT_TYPE_NAME (stage), ==, "TestUpperStage");
  g_object_get (stage,
                "prefix", &prefix,
                "repeat", &repeat,
                "mode", &mode,
                "words", &words,
                "enabled", &enabled,
                "ratio", &ratio,
                "level", &level,
                "data-file", &data_file,
                NULL);
  g_assert_cmpstr (prefix, ==, ">>");
  g_assert_cmpuint (repeat, ==, 10);
  modes = g_type_class_ref (g_type_from_name ("TestUpperMode"));
  g_assert_cmpstr (g_enum_get_value (modes, mode)->value_nick, ==, "first");
  g_assert_cmpstrv (words, ((const char * const[]) { "a", "b", "c", NULL }));
  g_assert_false (enabled);
  g_assert_cmpfloat_with_epsilon (ratio, 0.25, 1e-12);
  g_assert_cmpint (level, ==, -5);
  g_assert_null (data_file);

  route = symfonic_pipeline_lookup_route (pipeline, "/r");
  g_assert_nonnull (route);
  g_assert_cmpstr (symfonic_route_get_name (route), ==, "r");
  g_assert_cmpint (symfonic_route_get_kind (route), ==, SYMFONIC_ROUTE_KIND_CHUNKS);
  g_assert_cmpuint (symfonic_route_get_max_duration (route), ==, 90);
  g_assert_cmpuint (symfonic_route_get_max_streams (route), ==, 500);
  g_assert_cmpuint (symfonic_route_get_max_streams_per_tenant (route), ==, 20);
  g_assert_cmpuint (symfonic_route_get_stall_timeout (route), ==, 7);
  g_assert_true (symfonic_route_get_source (route) == symfonic_pipeline_get_source (pipeline, "s"));
  g_assert_cmpstr (G_OBJECT_TYPE_NAME (symfonic_route_get_source (route)), ==, "SymfonicReplaySource");
}

static void
test_pipeline_defaults (void)
{
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GEnumClass) modes = NULL;
  g_autofree char *prefix = NULL;
  g_auto(GStrv) words = NULL;
  g_autoptr(GFile) data_file = NULL;
  guint header_timeout, body_timeout, keepalive_timeout, max_connections;
  guint repeat;
  int mode;
  gboolean enabled;
  double ratio;

  pipeline = load (ROUTE SOURCE STAGE, &error);
  g_assert_no_error (error);

  g_object_get (symfonic_pipeline_get_stage (pipeline, "u"),
                "prefix", &prefix,
                "repeat", &repeat,
                "mode", &mode,
                "words", &words,
                "enabled", &enabled,
                "ratio", &ratio,
                "data-file", &data_file,
                NULL);
  g_assert_null (prefix);
  g_assert_cmpuint (repeat, ==, 1);
  modes = g_type_class_ref (g_type_from_name ("TestUpperMode"));
  g_assert_cmpstr (g_enum_get_value (modes, mode)->value_nick, ==, "all");
  g_assert_null (words);
  g_assert_true (enabled);
  g_assert_cmpfloat (ratio, ==, 1.0);
  g_assert_null (data_file);

  /* no [gateway]: its defaults */
  g_assert_cmpstr (symfonic_pipeline_get_listen (pipeline), ==, "127.0.0.1:8080");
  g_assert_cmpstr (symfonic_pipeline_get_release_line (pipeline), ==, SYMFONIC_VERSION);
  g_assert_cmpuint (symfonic_pipeline_get_workers (pipeline), >=, 1);
  /* a stream may run for ever unless the file says otherwise */
  g_assert_cmpuint (symfonic_route_get_max_duration (symfonic_pipeline_lookup_route (pipeline, "/r")), ==, 0);
  g_assert_cmpuint (symfonic_route_get_stall_timeout (symfonic_pipeline_lookup_route (pipeline, "/r")), ==, 30);
  g_object_get (pipeline,
                "header-timeout", &header_timeout,
                "body-timeout", &body_timeout,
                "keepalive-timeout", &keepalive_timeout,
                "max-connections", &max_connections,
                NULL);
  g_assert_cmpuint (header_timeout, ==, 10);
  g_assert_cmpuint (body_timeout, ==, 30);
  g_assert_cmpuint (keepalive_timeout, ==, 75);
  /* derived from the open-file limit when the workers start */
  g_assert_cmpuint (max_connections, ==, 0);
  g_assert_cmpint (symfonic_route_get_kind (symfonic_pipeline_get_route (pipeline, 0)), ==,
                   SYMFONIC_ROUTE_KIND_TYPED);
}

typedef struct
{
  const char *text;
  gboolean    expected;
} BooleanCase;

static void
test_pipeline_booleans (void)
{
  static const BooleanCase cases[] = {
    { "true", TRUE }, { "false", FALSE },
    { "yes", TRUE }, { "no", FALSE },
    { "on", TRUE }, { "off", FALSE },
    { "1", TRUE }, { "0", FALSE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *text = g_strconcat (ROUTE SOURCE STAGE "enabled=", cases[i].text, "\n", NULL);
      g_autoptr(SymfonicPipeline) pipeline = NULL;
      g_autoptr(GError) error = NULL;
      gboolean enabled;

      g_test_message ("enabled=%s", cases[i].text);
      pipeline = load (text, &error);
      g_assert_no_error (error);
      g_object_get (symfonic_pipeline_get_stage (pipeline, "u"), "enabled", &enabled, NULL);
      g_assert_cmpint (enabled, ==, cases[i].expected);
    }
}

typedef struct
{
  const char *value;
  const char *path;
} FileCase;

static void
test_pipeline_relative_file (void)
{
  static const FileCase cases[] = {
    { "notes.txt", PIPELINES_DIR "/notes.txt" },
    { "../transcripts/plain.jsonl", FIXTURES_DIR "/transcripts/plain.jsonl" },
    { SYMFONIC_TEST_DATA_DIR "/transcripts/plain.jsonl", SYMFONIC_TEST_DATA_DIR "/transcripts/plain.jsonl" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *text = g_strconcat (ROUTE SOURCE STAGE "data-file=", cases[i].value, "\n", NULL);
      g_autoptr(SymfonicPipeline) pipeline = NULL;
      g_autoptr(GError) error = NULL;
      g_autoptr(GFile) data_file = NULL;

      g_test_message ("data-file=%s", cases[i].value);
      pipeline = load (text, &error);
      g_assert_no_error (error);
      g_object_get (symfonic_pipeline_get_stage (pipeline, "u"), "data-file", &data_file, NULL);
      g_assert_nonnull (data_file);
      g_assert_cmpstr (g_file_peek_path (data_file), ==, cases[i].path);
    }
}

/* base_dir is what relative paths resolve against, whatever the file's text. */
static void
test_pipeline_base_dir (void)
{
  g_autoptr(GError) error = NULL;
  /* G_TEST_OPTION_ISOLATE_DIRS removes it after the test */
  g_autofree char *tmp = g_build_filename (g_get_user_cache_dir (), "base", NULL);
  g_autofree char *notes = NULL;
  g_autofree char *text = NULL;
  g_autoptr(GFile) base_dir = NULL;
  g_autoptr(GFile) data_file = NULL;
  g_autoptr(SymfonicPipeline) pipeline = NULL;

  g_assert_cmpint (g_mkdir_with_parents (tmp, 0700), ==, 0);
  notes = g_build_filename (tmp, "notes.txt", NULL);
  g_assert_true (g_file_set_contents (notes, "x", -1, &error));

  text = g_strconcat ("[route:r]\npath=/r\nsource=s\nstages=u\n"
                      "[source:s]\ntype=replay\ntranscripts=" FIXTURES_DIR "/transcripts\n"
                      "[stage:u]\ntype=test-upper\ndata-file=notes.txt\n", NULL);
  base_dir = g_file_new_for_path (tmp);
  pipeline = load_in (text, base_dir, &error);
  g_assert_no_error (error);
  g_object_get (symfonic_pipeline_get_stage (pipeline, "u"), "data-file", &data_file, NULL);
  g_assert_cmpstr (g_file_peek_path (data_file), ==, notes);
}

/* A transcript line is strict, depth-bounded JSON: the pipeline does not
 * load, and the error names the file, the line and the byte. */
static void
test_pipeline_transcript_strict_json (void)
{
  static const char good[] = "{\"event\":\"TextDeltaEvent\",\"data\":{\"text\":\"a\"}}\n";
  static const struct
  {
    const char *line;
    const char *error;
  } cases[] = {
    { "{\"event\":\"TextDeltaEvent\",\"data\":{\"text\":\"a\"},\"data\":{\"text\":\"b\"}}",
      "Invalid JSON at byte 46: duplicate member name" },
    { "{'event':'TextDeltaEvent','data':{'text':'a'}}", "Invalid JSON at byte 1: expected a member name" },
    { "{\"event\":\"TextDeltaEvent\",\"data\":{\"text\":\"a\\u0000b\"}}",
      "Invalid JSON at byte 43: NUL character in a string" },
    { "{\"event\":\"TextDeltaEvent\",\"data\":{\"text\":\"a\"}} // c", "Invalid JSON at byte 47: text after the document" },
    { NULL, "Invalid JSON at byte 96: nesting deeper than 64 levels" },
  };
  g_autofree char *dir = g_build_filename (g_get_user_cache_dir (), "transcripts", NULL);
  g_autofree char *file = g_build_filename (dir, "plain.jsonl", NULL);
  g_autofree char *text = g_strconcat ("[route:r]\npath=/r\nsource=s\n"
                                       "[source:s]\ntype=replay\ntranscripts=", dir, "\n", NULL);
  GString *deep = g_string_new ("{\"event\":\"TextDeltaEvent\",\"data\":");
  g_autofree char *deep_line = NULL;

  for (guint i = 0; i < 200000; i++)
    g_string_append_c (deep, '[');
  for (guint i = 0; i < 200000; i++)
    g_string_append_c (deep, ']');
  g_string_append_c (deep, '}');
  deep_line = g_string_free (deep, FALSE);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *contents = g_strconcat (good, cases[i].line != NULL ? cases[i].line : deep_line, "\n", NULL);
      g_autofree char *expected = g_strdup_printf ("t.pipeline:6: [source:s] transcripts: %s:2: %s", file, cases[i].error);
      g_autoptr(SymfonicPipeline) pipeline = NULL;
      g_autoptr(GError) error = NULL;

      g_test_message ("case %u", i);
      g_assert_true (g_file_set_contents (file, contents, -1, &error));
      pipeline = load (text, &error);
      g_assert_null (pipeline);
      g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
      g_assert_cmpstr (error->message, ==, expected);
    }
}

static void
test_pipeline_gateway (void)
{
  static const char text[] =
    "[gateway]\n"
    "listen=0.0.0.0:9090\n"
    "workers=3\n"
    "release-line=10.4.9\n"
    ROUTE SOURCE STAGE;
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(GError) error = NULL;

  pipeline = load (text, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (symfonic_pipeline_get_listen (pipeline), ==, "0.0.0.0:9090");
  g_assert_cmpuint (symfonic_pipeline_get_workers (pipeline), ==, 3);
  g_assert_cmpstr (symfonic_pipeline_get_release_line (pipeline), ==, "10.4.9");
  /* from data, not from a file */
  g_assert_null (symfonic_pipeline_get_file (pipeline));
}

static void
test_pipeline_stage_order (void)
{
  static const char text[] =
    "[route:first]\n"
    "path=/first\n"
    "source=s\n"
    "stages=w;u;v\n"
    "[route:second]\n"
    "path=/second\n"
    "kind=chat\n"
    "source=s\n"
    "stages= v ;; u ;\n"
    "[route:bare]\n"
    "path=/bare\n"
    "kind=resume\n"
    "source=s\n"
    SOURCE
    "[stage:u]\ntype=test-upper\n"
    "[stage:v]\ntype=test-upper\n"
    "[stage:w]\ntype=test-upper\n";
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(GError) error = NULL;
  SymfonicStage *u;
  SymfonicStage *v;
  SymfonicStage *w;
  SymfonicRoute *route;

  pipeline = load (text, &error);
  g_assert_no_error (error);
  u = symfonic_pipeline_get_stage (pipeline, "u");
  v = symfonic_pipeline_get_stage (pipeline, "v");
  w = symfonic_pipeline_get_stage (pipeline, "w");
  g_assert_true (u != v && v != w && u != w);

  /* routes in file order */
  g_assert_cmpuint (symfonic_pipeline_get_n_routes (pipeline), ==, 3);
  g_assert_cmpstr (symfonic_route_get_name (symfonic_pipeline_get_route (pipeline, 0)), ==, "first");
  g_assert_cmpstr (symfonic_route_get_name (symfonic_pipeline_get_route (pipeline, 1)), ==, "second");
  g_assert_cmpstr (symfonic_route_get_name (symfonic_pipeline_get_route (pipeline, 2)), ==, "bare");

  route = symfonic_pipeline_lookup_route (pipeline, "/first");
  g_assert_cmpuint (symfonic_route_get_n_stages (route), ==, 3);
  g_assert_true (symfonic_route_get_stage (route, 0) == w);
  g_assert_true (symfonic_route_get_stage (route, 1) == u);
  g_assert_true (symfonic_route_get_stage (route, 2) == v);

  route = symfonic_pipeline_lookup_route (pipeline, "/second");
  g_assert_cmpint (symfonic_route_get_kind (route), ==, SYMFONIC_ROUTE_KIND_CHAT);
  g_assert_cmpuint (symfonic_route_get_n_stages (route), ==, 2);
  g_assert_true (symfonic_route_get_stage (route, 0) == v);
  g_assert_true (symfonic_route_get_stage (route, 1) == u);

  route = symfonic_pipeline_lookup_route (pipeline, "/bare");
  g_assert_cmpint (symfonic_route_get_kind (route), ==, SYMFONIC_ROUTE_KIND_RESUME);
  g_assert_cmpuint (symfonic_route_get_n_stages (route), ==, 0);

  g_assert_null (symfonic_pipeline_lookup_route (pipeline, "/third"));
  g_assert_null (symfonic_pipeline_get_stage (pipeline, "x"));
  g_assert_null (symfonic_pipeline_get_source (pipeline, "x"));
}

static void
test_pipeline_comments (void)
{
  static const char text[] =
    "# a pipeline\n"
    "\n"
    "   # an indented comment\n"
    "[route:r]\n"
    "# between keys\n"
    "path=/r\n"
    "\n"
    "source=s\n"
    "stages=u\n"
    "\n\n"
    SOURCE
    "[stage:u]\n"
    "type=test-upper\n"
    "# prefix=commented out\n"
    "prefix=a # not a comment\n"
    "# trailing comment\n";
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *prefix = NULL;

  pipeline = load (text, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (symfonic_pipeline_get_n_routes (pipeline), ==, 1);
  g_object_get (symfonic_pipeline_get_stage (pipeline, "u"), "prefix", &prefix, NULL);
  g_assert_cmpstr (prefix, ==, "a # not a comment");
}

static void
test_pipeline_crlf (void)
{
  static const char text[] =
    "[route:r]\r\npath=/r\r\nsource=s\r\nstages=u\r\n"
    "[source:s]\r\ntype=replay\r\ntranscripts=../transcripts\r\n"
    "[stage:u]\r\ntype=test-upper\r\nprefix=p\r\n";
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *prefix = NULL;

  pipeline = load (text, &error);
  g_assert_no_error (error);
  g_assert_nonnull (symfonic_pipeline_lookup_route (pipeline, "/r"));
  g_object_get (symfonic_pipeline_get_stage (pipeline, "u"), "prefix", &prefix, NULL);
  g_assert_cmpstr (prefix, ==, "p");
}

static void
test_pipeline_default_file (void)
{
  static const struct
  {
    const char        *path;
    SymfonicRouteKind  kind;
    const char        *stages;
  } routes[] = {
    { "/api/v1/stream/typed", SYMFONIC_ROUTE_KIND_TYPED,
      "auth;rate-limit;budget;release-line;extraction;citation;errors" },
    { "/api/v1/stream", SYMFONIC_ROUTE_KIND_CHUNKS,
      "auth;rate-limit;budget;release-line;extraction;citation;projection;errors" },
    { "/api/v1/chat", SYMFONIC_ROUTE_KIND_CHAT,
      "auth;rate-limit;budget;release-line;extraction;citation;errors" },
    { "/api/v1/resume", SYMFONIC_ROUTE_KIND_RESUME,
      "auth;rate-limit;budget;release-line;extraction;citation;errors" },
    { "/v1/chat/completions", SYMFONIC_ROUTE_KIND_OPENAI,
      "auth;rate-limit;budget;extraction;citation;errors" },
    { "/anthropic/v1/messages", SYMFONIC_ROUTE_KIND_ANTHROPIC,
      "auth;rate-limit;budget;extraction;citation;errors" },
    { "/api/v1/runs", SYMFONIC_ROUTE_KIND_RUNS, "auth;errors" },
  };
  g_autoptr(GFile) file = g_file_new_for_path (SYMFONIC_TEST_DATA_DIR "/pipelines/default.pipeline");
  g_autoptr(GFile) default_file = symfonic_pipeline_get_default_file ();
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(GError) error = NULL;
  SymfonicRoute *route;

  /* run from the build tree: the source tree's data */
  g_assert_cmpstr (g_file_peek_path (default_file), ==, SYMFONIC_TEST_DATA_DIR "/pipelines/default.pipeline");

  pipeline = symfonic_pipeline_new_from_file (registry, file, &error);
  g_assert_no_error (error);
  g_assert_true (g_file_equal (symfonic_pipeline_get_file (pipeline), file));
  g_assert_cmpstr (symfonic_pipeline_get_listen (pipeline), ==, "127.0.0.1:8080");
  g_assert_cmpuint (symfonic_pipeline_get_workers (pipeline), >=, 1);

  /* every endpoint of DESIGN section 3, in file order */
  g_assert_cmpuint (symfonic_pipeline_get_n_routes (pipeline), ==, G_N_ELEMENTS (routes));
  for (guint i = 0; i < G_N_ELEMENTS (routes); i++)
    {
      g_auto(GStrv) stages = g_strsplit (routes[i].stages, ";", -1);

      route = symfonic_pipeline_get_route (pipeline, i);
      g_test_message ("route %s", routes[i].path);
      g_assert_true (symfonic_pipeline_lookup_route (pipeline, routes[i].path) == route);
      g_assert_cmpint (symfonic_route_get_kind (route), ==, routes[i].kind);
      /* a runs route reads what other routes' runs produced */
      g_assert_cmpuint (symfonic_route_get_max_duration (route), ==, routes[i].kind == SYMFONIC_ROUTE_KIND_RUNS ? 0 : 600);
      /* the streams say they are alive every 15 s */
      g_assert_cmpuint (symfonic_route_get_heartbeat_seconds (route), ==,
                        routes[i].kind == SYMFONIC_ROUTE_KIND_TYPED || routes[i].kind == SYMFONIC_ROUTE_KIND_CHUNKS ? 15 : 0);
      /* a runs route reads the run store, not an upstream */
      if (routes[i].kind == SYMFONIC_ROUTE_KIND_RUNS)
        g_assert_null (symfonic_route_get_source (route));
      else
        {
          g_assert_true (symfonic_route_get_source (route) == symfonic_pipeline_get_source (pipeline, "demo"));
          g_assert_cmpstr (G_OBJECT_TYPE_NAME (symfonic_route_get_source (route)), ==, "SymfonicReplaySource");
        }
      g_assert_cmpuint (symfonic_route_get_n_stages (route), ==, g_strv_length (stages));
      for (guint j = 0; stages[j] != NULL; j++)
        g_assert_true (symfonic_route_get_stage (route, j) == symfonic_pipeline_get_stage (pipeline, stages[j]));
    }
}

static void
test_pipeline_missing_file (void)
{
  g_autoptr(GFile) file = g_file_new_for_path (SYMFONIC_TEST_DATA_DIR "/pipelines/no-such.pipeline");
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(GError) error = NULL;

  pipeline = symfonic_pipeline_new_from_file (registry, file, &error);
  g_assert_null (pipeline);
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
  g_assert_nonnull (strstr (error->message, SYMFONIC_TEST_DATA_DIR "/pipelines/no-such.pipeline"));
}

/* Files a pipeline names must be regular files of a bounded size: a device
 * would be read for ever (/dev/zero overflowed a buffer inside GLib after
 * 4 GiB), a FIFO would block the load. Each case runs in a child so that a
 * hang or a crash fails the case, not the whole binary. */
typedef struct
{
  const char *name;
  /* the group naming the file, before its key */
  const char *group;
  const char *key;
} ResourceKey;

static const ResourceKey resource_keys[] = {
  { "tokens-file", "[stage:a]\ntype=auth", "tokens-file" },
  { "jwt-secret", "[stage:a]\ntype=auth", "jwt-hs256-secret-file" },
  { "jwt-public-key", "[stage:a]\ntype=auth", "jwt-public-key-file" },
  { "error-table", "[stage:a]\ntype=error-map", "table" },
  /* the folder holds a transcript of that kind */
  { "transcript", "[source:t]\ntype=replay", "transcripts" },
};

static const char * const resource_kinds[] = { "device", "fifo", "directory", "oversized" };

/* Builds a folder with one file of each kind, and one folder per kind
 * holding such a file as `plain.jsonl`. */
static char *
make_resource_dir (void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp ("symfonic-resources-XXXXXX", &error);

  g_assert_no_error (error);
  for (guint i = 0; i < G_N_ELEMENTS (resource_kinds); i++)
    {
      g_autofree char *folder = g_build_filename (dir, resource_kinds[i], NULL);
      g_autofree char *inner = g_build_filename (folder, "plain.jsonl", NULL);
      g_autofree char *file = g_strconcat (dir, "/", resource_kinds[i], ".file", NULL);
      const char * const paths[] = { inner, file };

      g_assert_cmpint (g_mkdir (folder, 0700), ==, 0);
      for (guint j = 0; j < G_N_ELEMENTS (paths); j++)
        {
          if (g_str_equal (resource_kinds[i], "device"))
            g_assert_cmpint (symlink ("/dev/zero", paths[j]), ==, 0);
          else if (g_str_equal (resource_kinds[i], "fifo"))
            g_assert_cmpint (mkfifo (paths[j], 0600), ==, 0);
          else if (g_str_equal (resource_kinds[i], "directory"))
            g_assert_cmpint (g_mkdir (paths[j], 0700), ==, 0);
          else
            {
              /* sparse: over the cap without writing it */
              int fd = g_open (paths[j], O_WRONLY | O_CREAT, 0600);

              g_assert_cmpint (fd, >=, 0);
              g_assert_cmpint (ftruncate (fd, SYMFONIC_CONFIG_FILE_MAX_SIZE + 1), ==, 0);
              close (fd);
            }
        }
    }

  return dir;
}

static void
remove_resource_dir (const char *dir)
{
  for (guint i = 0; i < G_N_ELEMENTS (resource_kinds); i++)
    {
      g_autofree char *folder = g_build_filename (dir, resource_kinds[i], NULL);
      g_autofree char *inner = g_build_filename (folder, "plain.jsonl", NULL);
      g_autofree char *file = g_strconcat (dir, "/", resource_kinds[i], ".file", NULL);

      /* g_remove() removes an empty folder too, and never follows a link */
      g_remove (inner);
      g_remove (folder);
      g_remove (file);
    }
  g_rmdir (dir);
}

/* Runs the current test in a child that finds the files in
 * $TEST_RESOURCE_DIR. */
static void
trap_with_resource_dir (void)
{
  g_autofree char *dir = make_resource_dir ();

  g_setenv ("TEST_RESOURCE_DIR", dir, TRUE);
  /* refusals are immediate: ten seconds leave room for a loaded machine */
  g_test_trap_subprocess (NULL, 10 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_unsetenv ("TEST_RESOURCE_DIR");
  remove_resource_dir (dir);
  g_test_trap_assert_passed ();
}

static void
test_pipeline_resource_files (void)
{
  if (g_test_subprocess ())
    {
      const char *base = g_getenv ("TEST_RESOURCE_DIR");

      g_assert_nonnull (base);
      for (guint i = 0; i < G_N_ELEMENTS (resource_keys); i++)
        for (guint j = 0; j < G_N_ELEMENTS (resource_kinds); j++)
          {
            const ResourceKey *key = &resource_keys[i];
            gboolean folder = g_str_equal (key->key, "transcripts");
            g_autofree char *named = folder
              ? g_build_filename (base, resource_kinds[j], NULL)
              : g_strconcat (base, "/", resource_kinds[j], ".file", NULL);
            g_autofree char *shown = folder ? g_build_filename (named, "plain.jsonl", NULL) : g_strdup (named);
            g_autofree char *group = g_strdup_printf ("%s\n%s=%s\n", key->group, key->key, named);
            g_autofree char *text = g_strconcat ("[route:r]\npath=/r\nsource=s\n", SOURCE, group, NULL);
            g_autoptr(SymfonicPipeline) pipeline = NULL;
            g_autoptr(GError) error = NULL;
            /* A file is checked at its key; a folder is, but what it
             * holds is its reader's to check. */
            g_autofree char *where = folder
              ? g_strdup_printf ("t.pipeline:9: [source:t] %s: %s: ", key->key, shown)
              : g_strdup_printf ("t.pipeline:9: [stage:a] %s: %s: ", key->key, shown);

            g_test_message ("%s naming a %s", key->name, resource_kinds[j]);
            pipeline = load (text, &error);
            g_assert_null (pipeline);
            g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
            g_test_message ("%s", error->message);
            if (strstr (error->message, where) == NULL)
              g_error ("“%s” does not contain “%s”", error->message, where);
          }

      return;
    }

  trap_with_resource_dir ();
}

/* The pipeline file itself: a FIFO or a device instead of a file. */
static void
test_pipeline_file_not_regular (void)
{
  if (g_test_subprocess ())
    {
      const char *base = g_getenv ("TEST_RESOURCE_DIR");

      for (guint j = 0; j < G_N_ELEMENTS (resource_kinds); j++)
        {
          g_autofree char *path = g_strconcat (base, "/", resource_kinds[j], ".file", NULL);
          g_autoptr(GFile) file = g_file_new_for_path (path);
          g_autoptr(SymfonicPipeline) pipeline = NULL;
          g_autoptr(GError) error = NULL;
          g_autofree char *expected = g_strconcat (path, ": ", NULL);

          pipeline = symfonic_pipeline_new_from_file (registry, file, &error);
          g_assert_null (pipeline);
          g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
          g_assert_true (g_str_has_prefix (error->message, expected));
        }
      return;
    }

  trap_with_resource_dir ();
}

/* --- every problem at once --------------------------------------------------- */

/* One load lists every problem of the file and of the files it names, by
 * line, each as `FILE:LINE: [group] key: message`: a file with nine
 * mistakes takes one run to fix, not nine. What names a group that did
 * not load is not blamed for it. */
static void
test_pipeline_every_error (void)
{
  static const char pipeline_text[] =
    "[gateway]\n"                              /* 1 */
    "workers=many\n"                           /* 2 */
    "colour=blue\n"                            /* 3 */
    "[route:r]\n"                              /* 4 */
    "path=r\n"                                 /* 5 */
    "kind=typo\n"                              /* 6 */
    "source=s\n"                               /* 7 */
    "stages=auth;u;nothere\n"                  /* 8 */
    "[source:s]\n"                             /* 9 */
    "type=replay\n"                            /* 10 */
    "transcripts=no-such-transcripts\n"        /* 11 */
    "time-scale=fast\n"                        /* 12 */
    "[stage:auth]\n"                           /* 13 */
    "type=auth\n"                              /* 14 */
    "tokens-file=tokens.ini\n"                 /* 15 */
    "[stage:u]\n"                              /* 16 */
    "type=test-upper\n"                        /* 17 */
    "level=twelve\n"                           /* 18 */
    "repeat=2\n"                               /* 19 */
    "repeat=3\n"                               /* 20 */
    "this is no key\n"                         /* 21 */
    "[stage:x]\n"                              /* 22 */
    "type=no-such-type\n";                     /* 23 */
  static const char tokens_text[] =
    "[principal:a]\n"                          /* 1 */
    "token-sha256=abc\n"                       /* 2 */
    "tenants=t\n"                              /* 3 */
    "admin=maybe\n"                            /* 4 */
    "[principal:b]\n"                          /* 5 */
    "tenants=a b\n"                            /* 6 */
    "[user:c]\n";                              /* 7 */
  g_autofree char *dir = g_build_filename (g_get_user_cache_dir (), "every-error", NULL);
  g_autofree char *tokens = g_build_filename (dir, "tokens.ini", NULL);
  g_autofree char *transcripts = g_build_filename (dir, "no-such-transcripts", NULL);
  g_autoptr(GFile) base_dir = g_file_new_for_path (dir);
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *expected = NULL;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_assert_true (g_file_set_contents (tokens, tokens_text, -1, &error));
  g_assert_no_error (error);

  expected = g_strdup_printf (
    "t.pipeline:2: [gateway] workers: expected a whole number from 0 to 256, found “many”\n"
    "t.pipeline:3: [gateway] colour: expected a key of [gateway] (listen, workers, max-body-bytes, release-line, "
    "header-timeout, body-timeout, keepalive-timeout, max-connections, drain-seconds, run-store, metrics-listen, "
    "metrics-token-file, metrics-tenant-label, metrics-tenants, otlp-endpoint, trace-sample-ratio, service-name, "
    "python-path, playground, resume-token-secret-file, plugin-path), "
    "found an unknown one\n"
    "t.pipeline:5: [route:r] path: expected a path starting with /, found “r”\n"
    "t.pipeline:6: [route:r] kind: expected one of typed, chunks, chat, resume, openai, anthropic, runs, "
    "found “typo”\n"
    "t.pipeline:8: [route:r] stages: expected the NAMEs of [stage:NAME]s of this file, found “nothere”\n"
    "t.pipeline:11: [source:s] transcripts: %s: expected a folder, found nothing: it is missing\n"
    "t.pipeline:12: [source:s] time-scale: expected a number from 0 to 100, found “fast”\n"
    "t.pipeline:15: [stage:auth] tokens-file: expected a file without errors, found 5 in “%s”, listed below\n"
    "%s:2: [principal:a] token-sha256: expected 64 hexadecimal digits, the SHA-256 of the token, found 3 characters\n"
    "%s:4: [principal:a] admin: expected true or false, found “maybe”\n"
    "%s:5: [principal:b]: expected a key “token-sha256”, the SHA-256 of the token, found none\n"
    "%s:6: [principal:b] tenants: expected tenant names without spaces or commas, found “a b”\n"
    "%s:7: [user:c]: expected a group [principal:NAME], found an unknown one\n"
    "t.pipeline:18: [stage:u] level: expected a whole number from -5 to 5, found “twelve”\n"
    "t.pipeline:20: [stage:u] repeat: expected each key once in a group, found it already on line 19\n"
    "t.pipeline:21: expected “key=value”, a [group] or a # comment, found “this is no key”\n"
    "t.pipeline:23: [stage:x] type: expected a registered stage type (symfonic-inspect lists them), "
    "found “no-such-type”",
    transcripts, tokens, tokens, tokens, tokens, tokens, tokens);

  pipeline = load_in (pipeline_text, base_dir, &error);
  g_assert_null (pipeline);
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==, expected);
}

#define FIXTURE_SOURCE "[source:s]\ntype=replay\ntranscripts=" FIXTURES_DIR "/transcripts\n"

/* `[gateway] python-path` names folders relative to the file, each checked
 * at the key; the pipeline keeps them resolved. Without the Python loader
 * in the registry, the key says so. */
static void
test_pipeline_python_path (void)
{
  g_autofree char *dir = g_build_filename (g_get_user_cache_dir (), "python-path", NULL);
  g_autofree char *site = g_build_filename (dir, "site-packages", NULL);
  g_autofree char *missing = g_build_filename (dir, "no-such-folder", NULL);
  g_autoptr(GFile) base_dir = g_file_new_for_path (dir);
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *expected = NULL;

  g_assert_cmpint (g_mkdir_with_parents (site, 0700), ==, 0);

  pipeline = load_in ("[gateway]\npython-path=no-such-folder\n" ROUTE FIXTURE_SOURCE STAGE, base_dir, &error);
  g_assert_null (pipeline);
  expected = g_strdup_printf ("t.pipeline:2: [gateway] python-path: %s: expected a folder, found nothing: "
                              "it is missing", missing);
  g_assert_cmpstr (error->message, ==, expected);
  g_clear_error (&error);

  pipeline = load_in ("[gateway]\npython-path=site-packages\n" ROUTE FIXTURE_SOURCE STAGE, base_dir, &error);
  if (symfonic_registry_add_script_path (registry, ".py", site, NULL))
    {
      g_auto(GStrv) paths = NULL;

      g_assert_no_error (error);
      g_object_get (pipeline, "python-path", &paths, NULL);
      g_assert_cmpstrv (paths, ((const char * const[]) { site, NULL }));
    }
  else
    {
      /* built without the Python loader */
      g_assert_null (pipeline);
      g_assert_cmpstr (error->message, ==, "t.pipeline:2: [gateway] python-path: expected a loader of .py scripts "
                                           "that takes folders to import from, found none");
    }
}

/* --- files the keys name, checked at the key ------------------------------ */

typedef struct
{
  const char *name;
  /* the group naming the file, before its key */
  const char *group;
  const char *key;
  /* relative to the folder the pipeline file is in, or absolute */
  const char *value;
  /* the errno that stands in the way, when root is not stopped by it */
  int         errsv;
  /* what the error says after the file's name; NULL: the pipeline loads */
  const char *what;
} FileKeyCase;

#define FILE_KEY_AUTH "[stage:a]\ntype=auth"
#define FILE_KEY_UPPER "[stage:a]\ntype=test-upper"
#define FILE_KEY_REPLAY "[source:a]\ntype=replay"
#define FILE_KEY_ERRORS "[stage:a]\ntype=error-map"

#define MISSING_FILE "expected a file, found nothing: it is missing"
#define MISSING_FOLDER "expected a folder, found nothing: it is missing"

static const FileKeyCase file_key_cases[] = {
  { "tokens-file-missing", FILE_KEY_AUTH, "tokens-file", "no-such-tokens.ini", 0, MISSING_FILE },
  { "tokens-file-fifo", FILE_KEY_AUTH, "tokens-file", "fifo", 0, "expected a regular file, found a FIFO" },
  { "tokens-file-device", FILE_KEY_AUTH, "tokens-file", "/dev/zero", 0, "expected a regular file, found a device" },
  { "tokens-file-directory", FILE_KEY_AUTH, "tokens-file", "folder", 0, "expected a regular file, found a folder" },
  { "tokens-file-unreadable", FILE_KEY_AUTH, "tokens-file", "unreadable.ini", EACCES,
    "expected a file the gateway may read, found one it may not (permission denied)" },
  { "tokens-file-in-subfolder", FILE_KEY_AUTH, "tokens-file", "sub/tokens.ini", 0, NULL },
  { "tokens-file-in-missing-subfolder", FILE_KEY_AUTH, "tokens-file", "nowhere/tokens.ini", 0, MISSING_FILE },
  { "jwt-secret-missing", FILE_KEY_AUTH, "jwt-hs256-secret-file", "keys/secret", 0, MISSING_FILE },
  { "jwt-public-key-missing", FILE_KEY_AUTH, "jwt-public-key-file", "keys/rsa.pub", 0, MISSING_FILE },
  { "table-missing", FILE_KEY_ERRORS, "table", "no-such-table.ini", 0, MISSING_FILE },
  { "table-directory", FILE_KEY_ERRORS, "table", "sub", 0, "expected a regular file, found a folder" },
  { "transcripts-missing", FILE_KEY_REPLAY, "transcripts", "no-such-folder", 0, MISSING_FOLDER },
  { "transcripts-regular-file", FILE_KEY_REPLAY, "transcripts", "sub/tokens.ini", 0,
    "expected a folder, found a regular file" },
  { "transcripts-fifo", FILE_KEY_REPLAY, "transcripts", "fifo", 0, "expected a folder, found a FIFO" },
  { "transcripts-device", FILE_KEY_REPLAY, "transcripts", "/dev/zero", 0, "expected a folder, found a device" },
  { "transcripts-in-subfolder", FILE_KEY_REPLAY, "transcripts", "sub/transcripts", 0, NULL },
  /* a plugin's own file property, which the loader knows nothing about */
  { "plugin-file-missing", FILE_KEY_UPPER, "data-file", "sub/no-such.txt", 0, MISSING_FILE },
  { "plugin-file-fifo", FILE_KEY_UPPER, "data-file", "fifo", 0, "expected a regular file, found a FIFO" },
  { "plugin-file-in-subfolder", FILE_KEY_UPPER, "data-file", "sub/tokens.ini", 0, NULL },
};

/* The folder a pipeline file of the cases is in. */
static char *
make_file_key_dir (void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_build_filename (g_get_user_cache_dir (), "file-keys", NULL);
  g_autofree char *tokens = NULL;
  g_autofree char *transcript = NULL;
  g_autofree char *sub_tokens = g_build_filename (dir, "sub", "tokens.ini", NULL);
  g_autofree char *sub_transcript = g_build_filename (dir, "sub", "transcripts", "plain.jsonl", NULL);
  g_autofree char *sub_transcripts = g_path_get_dirname (sub_transcript);
  g_autofree char *folder = g_build_filename (dir, "folder", NULL);
  g_autofree char *fifo = g_build_filename (dir, "fifo", NULL);
  g_autofree char *unreadable = g_build_filename (dir, "unreadable.ini", NULL);

  g_assert_true (g_file_get_contents (SYMFONIC_TEST_DATA_DIR "/demo-tokens.ini", &tokens, NULL, &error));
  g_assert_true (g_file_get_contents (FIXTURES_DIR "/transcripts/plain.jsonl", &transcript, NULL, &error));
  g_assert_cmpint (g_mkdir_with_parents (sub_transcripts, 0700), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (folder, 0700), ==, 0);
  g_assert_true (g_file_set_contents (sub_tokens, tokens, -1, &error));
  g_assert_true (g_file_set_contents (sub_transcript, transcript, -1, &error));
  g_assert_true (g_file_set_contents (unreadable, tokens, -1, &error));
  g_assert_cmpint (g_chmod (unreadable, 0), ==, 0);
  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);

  return dir;
}

/* Every file a key names is checked where the loader still knows the key:
 * the error names the file, the key's line and the key, and says what is
 * wrong with the file, not what its reader made of it. A relative name is
 * the pipeline file's folder's. */
static void
test_pipeline_file_key (gconstpointer data)
{
  const FileKeyCase *c = data;
  g_autofree char *dir = make_file_key_dir ();
  g_autoptr(GFile) base_dir = g_file_new_for_path (dir);
  g_autoptr(GFile) named = g_file_resolve_relative_path (base_dir, c->value);
  g_autofree char *text = g_strdup_printf ("[route:r]\npath=/r\nsource=s\n"
                                           "[source:s]\ntype=replay\ntranscripts=" FIXTURES_DIR "/transcripts\n"
                                           "%s\n%s=%s\n", c->group, c->key, c->value);
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *group = NULL;
  g_autofree char *expected = NULL;
  g_autoptr(GFile) value = NULL;
  GObject *object;

  if (c->errsv == EACCES && geteuid () == 0)
    {
      g_test_skip ("root reads any file");
      return;
    }

  pipeline = load_in (text, base_dir, &error);
  group = g_strndup (c->group, strchr (c->group, '\n') - c->group);
  if (c->what != NULL)
    {
      expected = g_strdup_printf ("t.pipeline:9: %s %s: %s: %s", group, c->key, g_file_peek_path (named), c->what);
      g_assert_null (pipeline);
      g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
      g_assert_cmpstr (error->message, ==, expected);
      return;
    }

  g_assert_no_error (error);
  object = g_str_has_prefix (group, "[source:") ? G_OBJECT (symfonic_pipeline_get_source (pipeline, "a"))
                                                : G_OBJECT (symfonic_pipeline_get_stage (pipeline, "a"));
  g_object_get (object, c->key, &value, NULL);
  g_assert_cmpstr (g_file_peek_path (value), ==, g_file_peek_path (named));
}

/* --- the keys of [route:NAME] and [gateway] -------------------------------- */

static char *
join_key_names (const char *group)
{
  g_autofree GParamSpec **keys = NULL;
  GString *names = g_string_new (NULL);
  guint n_keys;

  keys = symfonic_pipeline_list_keys (group, &n_keys);
  g_assert_null (keys[n_keys]);
  for (guint i = 0; i < n_keys; i++)
    g_string_append_printf (names, "%s%s", i > 0 ? ";" : "", g_param_spec_get_name (keys[i]));

  return g_string_free (names, FALSE);
}

/* The keys are the classes' properties, but for the route's name and
 * release line (another group's), and for the two the loader reads
 * itself. */
static void
test_pipeline_keys (void)
{
  g_autofree char *route = join_key_names ("route");
  g_autofree char *gateway = join_key_names ("gateway");

  g_assert_cmpstr (route, ==,
                   "path;kind;source;stages;max-duration;hook-timeout;max-streams;max-streams-per-tenant;"
                   "cap-store;stall-timeout;heartbeat-seconds;resume;resume-frames;resume-bytes;resume-seconds;"
                   "max-usage-tokens;cors-origins;resume-token-seconds");
  g_assert_cmpstr (gateway, ==,
                   "listen;workers;max-body-bytes;release-line;header-timeout;body-timeout;keepalive-timeout;"
                   "max-connections;drain-seconds;run-store;metrics-listen;metrics-token-file;"
                   "metrics-tenant-label;metrics-tenants;otlp-endpoint;trace-sample-ratio;service-name;python-path;playground;"
                   "resume-token-secret-file;plugin-path");
}

/* A property a route gains is a key of its group, with nothing else to
 * change: here one added to the class at run time, in a child so that the
 * other tests keep the class as it is. */
#define ADDED_PROP_ID 1000

static GObjectSetPropertyFunc route_set_property;
static GObjectGetPropertyFunc route_get_property;
static guint added_value;

static void
added_set_property (GObject      *object,
                    guint         prop_id,
                    const GValue *value,
                    GParamSpec   *pspec)
{
  if (prop_id == ADDED_PROP_ID)
    added_value = g_value_get_uint (value);
  else
    route_set_property (object, prop_id, value, pspec);
}

static void
added_get_property (GObject    *object,
                    guint       prop_id,
                    GValue     *value,
                    GParamSpec *pspec)
{
  if (prop_id == ADDED_PROP_ID)
    g_value_set_uint (value, added_value);
  else
    route_get_property (object, prop_id, value, pspec);
}

typedef struct
{
  const char *value;
  /* NULL: the pipeline loads */
  const char *mentions[3];
} VariableCase;

/* A file-valued key may name a folder the environment holds, as systemd's
 * ${CREDENTIALS_DIRECTORY}: set, it is the variable's value; unset, empty
 * or malformed, an error at the key that says which. */
static void
test_pipeline_path_variables (void)
{
  static const VariableCase cases[] = {
    { "${SYMFONIC_TEST_FOLDER}/transcripts", { NULL } },
    { "${SYMFONIC_TEST_FOLDER}${SYMFONIC_TEST_SUFFIX}", { NULL } },
    { "${CREDENTIALS_DIRECTORY}/transcripts", { "${CREDENTIALS_DIRECTORY} is not set", "LoadCredential=" } },
    { "${SYMFONIC_TEST_EMPTY}/transcripts", { "${SYMFONIC_TEST_EMPTY} is not set" } },
    { "${SYMFONIC_TEST_FOLDER/transcripts", { "not a variable" } },
    { "${}/transcripts", { "“${}” is not a variable" } },
    { "${1FOLDER}/transcripts", { "“${1FOLDER}” is not a variable" } },
    { "${SYMFONIC TEST}/transcripts", { "“${SYMFONIC TEST}” is not a variable" } },
    /* only ${NAME} is a variable: the rest is the path's */
    { "$SYMFONIC_TEST_FOLDER/transcripts", { "$SYMFONIC_TEST_FOLDER/transcripts" } },
  };

  g_setenv ("SYMFONIC_TEST_FOLDER", FIXTURES_DIR, TRUE);
  g_setenv ("SYMFONIC_TEST_SUFFIX", "/transcripts", TRUE);
  g_setenv ("SYMFONIC_TEST_EMPTY", "", TRUE);
  g_unsetenv ("CREDENTIALS_DIRECTORY");

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *text = g_strdup_printf ("[route:r]\npath=/r\nsource=s\n"
                                               "[source:s]\ntype=replay\ntranscripts=%s\n", cases[i].value);
      g_autoptr(SymfonicPipeline) pipeline = NULL;
      g_autoptr(GError) error = NULL;

      g_test_message ("transcripts=%s", cases[i].value);
      pipeline = load (text, &error);
      if (cases[i].mentions[0] == NULL)
        {
          g_assert_no_error (error);
          g_assert_nonnull (pipeline);
          continue;
        }
      g_assert_null (pipeline);
      g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
      g_assert_nonnull (strstr (error->message, "t.pipeline:6: [source:s] transcripts"));
      for (guint j = 0; j < G_N_ELEMENTS (cases[i].mentions) && cases[i].mentions[j] != NULL; j++)
        {
          if (strstr (error->message, cases[i].mentions[j]) == NULL)
            g_test_fail_printf ("“%s” does not mention “%s”", error->message, cases[i].mentions[j]);
        }
    }

  g_unsetenv ("SYMFONIC_TEST_FOLDER");
  g_unsetenv ("SYMFONIC_TEST_SUFFIX");
  g_unsetenv ("SYMFONIC_TEST_EMPTY");
}

/* A runs route reads runs from the run store: it needs no source, and one
 * it names must still exist. */
static void
test_pipeline_runs_without_source (void)
{
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(SymfonicPipeline) named = NULL;
  g_autoptr(GError) error = NULL;
  SymfonicRoute *runs;

  pipeline = load ("[route:t]\npath=/t\nsource=s\nresume=true\n"
                   "[route:runs]\npath=/runs\nkind=runs\n" SOURCE, &error);
  g_assert_no_error (error);
  runs = symfonic_pipeline_lookup_route (pipeline, "/runs");
  g_assert_nonnull (runs);
  g_assert_cmpint (symfonic_route_get_kind (runs), ==, SYMFONIC_ROUTE_KIND_RUNS);
  g_assert_null (symfonic_route_get_source (runs));

  named = load ("[route:runs]\npath=/runs\nkind=runs\nsource=nowhere\n" SOURCE, &error);
  g_assert_null (named);
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
  g_assert_nonnull (strstr (error->message, "t.pipeline:4:"));
  g_assert_nonnull (strstr (error->message, "nowhere"));
}

static void
test_pipeline_route_key_added (void)
{
  if (g_test_subprocess ())
    {
      GObjectClass *klass = g_type_class_ref (SYMFONIC_TYPE_ROUTE);
      g_autoptr(SymfonicPipeline) pipeline = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *keys = NULL;

      route_set_property = klass->set_property;
      route_get_property = klass->get_property;
      klass->set_property = added_set_property;
      klass->get_property = added_get_property;
      g_object_class_install_property (klass, ADDED_PROP_ID,
                                       g_param_spec_uint ("added-key", "Added key", "A key new to the loader",
                                                          0, 100, 0, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

      keys = join_key_names ("route");
      g_assert_true (g_str_has_suffix (keys, ";resume-token-seconds;added-key"));

      pipeline = load ("[route:r]\npath=/r\nsource=s\nadded-key=42\n" SOURCE, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (added_value, ==, 42);

      /* and converted and checked like any other */
      g_clear_object (&pipeline);
      pipeline = load ("[route:r]\npath=/r\nsource=s\nadded-key=420\n" SOURCE, &error);
      g_assert_null (pipeline);
      g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
      g_assert_nonnull (strstr (error->message, "t.pipeline:4: [route:r] added-key: "));
      g_type_class_unref (klass);
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;
  int ret;

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  /* the test plugin and the build's replay plugin, nothing else */
  g_unsetenv ("SYMFONIC_PLUGIN_PATH");
  registry = symfonic_registry_new ();
  symfonic_registry_load_directory (registry, TEST_PLUGIN_GOOD_DIR, &error);
  g_assert_no_error (error);
  symfonic_registry_scan (registry, &error);
  g_assert_no_error (error);

  for (guint i = 0; i < G_N_ELEMENTS (invalid_cases); i++)
    {
      g_autofree char *path = g_strconcat ("/pipeline/invalid/", invalid_cases[i].name, NULL);

      g_test_add_data_func (path, &invalid_cases[i], test_pipeline_invalid);
    }
  for (guint i = 0; i < G_N_ELEMENTS (order_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/pipeline/order/%s", order_cases[i].name);

      g_test_add_data_func (path, &order_cases[i], test_pipeline_order);
    }
  g_test_add_func ("/pipeline/properties", test_pipeline_properties);
  g_test_add_func ("/pipeline/defaults", test_pipeline_defaults);
  g_test_add_func ("/pipeline/booleans", test_pipeline_booleans);
  g_test_add_func ("/pipeline/relative-file", test_pipeline_relative_file);
  g_test_add_func ("/pipeline/base-dir", test_pipeline_base_dir);
  g_test_add_func ("/pipeline/gateway", test_pipeline_gateway);
  g_test_add_func ("/pipeline/transcript-strict-json", test_pipeline_transcript_strict_json);
  g_test_add_func ("/pipeline/stage-order", test_pipeline_stage_order);
  g_test_add_func ("/pipeline/comments", test_pipeline_comments);
  g_test_add_func ("/pipeline/crlf", test_pipeline_crlf);
  g_test_add_func ("/pipeline/default-file", test_pipeline_default_file);
  g_test_add_func ("/pipeline/missing-file", test_pipeline_missing_file);
  g_test_add_func ("/pipeline/file-not-regular", test_pipeline_file_not_regular);
  g_test_add_func ("/pipeline/resource-files", test_pipeline_resource_files);
  for (guint i = 0; i < G_N_ELEMENTS (file_key_cases); i++)
    {
      g_autofree char *path = g_strconcat ("/pipeline/file-key/", file_key_cases[i].name, NULL);

      g_test_add_data_func (path, &file_key_cases[i], test_pipeline_file_key);
    }
  g_test_add_func ("/pipeline/keys", test_pipeline_keys);
  g_test_add_func ("/pipeline/every-error", test_pipeline_every_error);
  g_test_add_func ("/pipeline/python-path", test_pipeline_python_path);
  g_test_add_func ("/pipeline/route-key-added", test_pipeline_route_key_added);
  g_test_add_func ("/pipeline/runs-without-source", test_pipeline_runs_without_source);
  g_test_add_func ("/pipeline/path-variables", test_pipeline_path_variables);

  ret = g_test_run ();
  g_object_unref (registry);

  return ret;
}
