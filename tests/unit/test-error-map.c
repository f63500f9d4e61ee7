/* test-error-map.c: the error-map stage and the shipped error table
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <symfonic.h>

/* A message no client may ever see on a 5xx. */
#define SECRET "dsn=postgres://admin:hunter2@10.0.0.7/prod"
#define OPAQUE "Internal server error"
#define FORBIDDEN_DETAIL "Not permitted to act for this tenant"

#define PIPELINES_DIR SYMFONIC_TEST_DATA_DIR "/pipelines"

/* One route per kind, all on the same stage: what differs between them is
 * the table's policy, nothing else. (A chunks route also needs its
 * projection stage.) */
#define ROUTES \
  "[route:typed]\npath=/typed\nkind=typed\nsource=s\nstages=errors\n" \
  "[route:chunks]\npath=/chunks\nkind=chunks\nsource=s\nstages=projection;errors\n" \
  "[stage:projection]\ntype=projection\n" \
  "[route:chat]\npath=/chat\nkind=chat\nsource=s\nstages=errors\n" \
  "[route:resume]\npath=/resume\nkind=resume\nsource=s\nstages=errors\n" \
  "[source:s]\ntype=replay\ntranscripts=" SYMFONIC_TEST_UNIT_DIR "/fixtures/transcripts\n"

static const char * const all_paths[] = { "/typed", "/chunks", "/chat", "/resume" };

static SymfonicRegistry *registry;

/* @table is the value of the `table` key, relative to data/pipelines as
 * if the text were a file there. */
static SymfonicPipeline *
load (const char  *table,
      gboolean     use_target_statuses,
      GError     **error)
{
  g_autoptr(GFile) base_dir = g_file_new_for_path (PIPELINES_DIR);
  g_autofree char *text = NULL;

  text = g_strconcat (ROUTES,
                      "[stage:errors]\ntype=error-map\n",
                      table != NULL ? "table=" : "", table != NULL ? table : "", table != NULL ? "\n" : "",
                      use_target_statuses ? "use-target-statuses=true\n" : "",
                      NULL);

  return symfonic_pipeline_new_from_data (registry, text, -1, base_dir, "t.pipeline", error);
}

/* The shipped table, as the default pipeline finds it. */
static SymfonicPipeline *
load_shipped (gboolean use_target_statuses)
{
  g_autoptr(GError) error = NULL;
  SymfonicPipeline *pipeline = load ("../error-map.ini", use_target_statuses, &error);

  g_assert_no_error (error);
  g_assert_nonnull (pipeline);
  return pipeline;
}

/* What the exchange does: the route's mapper, the last of its stages that
 * maps errors. */
static SymfonicErrorFrame *
map_on (SymfonicPipeline *pipeline,
        const char       *path,
        GQuark            domain,
        int               code,
        const char       *message)
{
  SymfonicRoute *route = symfonic_pipeline_lookup_route (pipeline, path);
  g_autoptr(GError) error = g_error_new_literal (domain, code, message);
  SymfonicErrorMapper *mapper = NULL;

  g_assert_nonnull (route);
  for (guint i = symfonic_route_get_n_stages (route); i > 0 && mapper == NULL; i--)
    {
      SymfonicStage *stage = symfonic_route_get_stage (route, i - 1);

      if (SYMFONIC_IS_ERROR_MAPPER (stage))
        mapper = SYMFONIC_ERROR_MAPPER (stage);
    }
  g_assert_nonnull (mapper);
  g_assert_true (symfonic_route_get_error_mapper (route) == mapper);

  return symfonic_route_map_error (route, error);
}

static void
assert_headers (SymfonicErrorFrame *frame,
                const char         *name,
                const char         *value)
{
  g_auto(GStrv) names = symfonic_error_frame_list_headers (frame);

  if (name == NULL)
    {
      g_assert_cmpstrv (names, ((const char * const[]) { NULL }));
      return;
    }
  g_assert_cmpstrv (names, ((const char * const[]) { name, NULL }));
  g_assert_cmpstr (symfonic_error_frame_get_header (frame, name), ==, value);
}

static void
test_error_map_stage (void)
{
  g_autoptr(SymfonicPipeline) pipeline = load_shipped (FALSE);
  SymfonicStage *stage = symfonic_pipeline_get_stage (pipeline, "errors");
  g_autoptr(GFile) table = NULL;
  gboolean use_target_statuses = TRUE;

  g_assert_cmpstr (G_OBJECT_TYPE_NAME (stage), ==, "SymfonicErrorMapStage");
  g_assert_true (SYMFONIC_IS_STAGE (stage));
  g_assert_true (SYMFONIC_IS_ERROR_MAPPER (stage));

  g_object_get (stage, "table", &table, "use-target-statuses", &use_target_statuses, NULL);
  /* resolved against the pipeline file's folder */
  g_assert_cmpstr (g_file_peek_path (table), ==, SYMFONIC_TEST_DATA_DIR "/error-map.ini");
  g_assert_false (use_target_statuses);
}

typedef struct
{
  SymfonicError  code;
  /* with use-target-statuses off, then on; NULL detail: the message */
  guint          status;
  const char    *detail;
  guint          target_status;
  const char    *target_detail;
  const char    *wire_code;
  const char    *header;
  const char    *header_value;
} RowCase;

/* DESIGN sections 3 and 6, written out rather than read back from the
 * table, so a changed row fails here. */
static const RowCase row_cases[] = {
  { SYMFONIC_ERROR_BAD_REQUEST, 400, NULL, 400, NULL, "bad_request", NULL, NULL },
  { SYMFONIC_ERROR_UNAUTHORIZED, 401, NULL, 401, NULL, "unauthorized", "WWW-Authenticate", "Bearer" },
  { SYMFONIC_ERROR_FORBIDDEN, 403, FORBIDDEN_DETAIL, 403, FORBIDDEN_DETAIL, "forbidden", NULL, NULL },
  { SYMFONIC_ERROR_NOT_FOUND, 404, NULL, 404, NULL, "not_found", NULL, NULL },
  { SYMFONIC_ERROR_METHOD_NOT_ALLOWED, 405, NULL, 405, NULL, "method_not_allowed", NULL, NULL },
  { SYMFONIC_ERROR_PAYLOAD_TOO_LARGE, 413, NULL, 413, NULL, "payload_too_large", NULL, NULL },
  { SYMFONIC_ERROR_UNSUPPORTED_MEDIA_TYPE, 415, NULL, 415, NULL, "unsupported_media_type", NULL, NULL },
  /* Retry-After comes from the limiter through the exchange, not the table */
  { SYMFONIC_ERROR_RATE_LIMITED, 429, NULL, 429, NULL, "rate_limited", NULL, NULL },
  { SYMFONIC_ERROR_BUDGET_EXCEEDED, 429, NULL, 429, NULL, "budget_exceeded", NULL, NULL },
  { SYMFONIC_ERROR_CONFLICT, 500, OPAQUE, 409, NULL, "conflict", NULL, NULL },
  { SYMFONIC_ERROR_UPSTREAM, 502, OPAQUE, 502, OPAQUE, "upstream_error", NULL, NULL },
  { SYMFONIC_ERROR_UPSTREAM_UNAVAILABLE, 500, OPAQUE, 503, OPAQUE, "upstream_unavailable", NULL, NULL },
  { SYMFONIC_ERROR_UPSTREAM_TIMEOUT, 500, OPAQUE, 504, OPAQUE, "upstream_timeout", NULL, NULL },
  /* internal faults publish no code and have no row: the fallback */
  { SYMFONIC_ERROR_FAILED, 500, OPAQUE, 500, OPAQUE, NULL, NULL, NULL },
  { SYMFONIC_ERROR_CONFIG, 500, OPAQUE, 500, OPAQUE, NULL, NULL, NULL },
  { SYMFONIC_ERROR_PLUGIN, 500, OPAQUE, 500, OPAQUE, NULL, NULL, NULL },
};

static void
check_rows (gboolean use_target_statuses)
{
  g_autoptr(SymfonicPipeline) pipeline = load_shipped (use_target_statuses);

  for (guint i = 0; i < G_N_ELEMENTS (row_cases); i++)
    {
      const RowCase *c = &row_cases[i];
      g_autofree char *message = g_strdup_printf ("the message of code %d", c->code);
      guint status = use_target_statuses ? c->target_status : c->status;
      const char *detail = use_target_statuses ? c->target_detail : c->detail;

      /* the three entry points other than /resume share one policy */
      for (guint j = 0; j < 3; j++)
        {
          g_autoptr(SymfonicErrorFrame) frame = map_on (pipeline, all_paths[j], SYMFONIC_ERROR, c->code, message);

          g_test_message ("%s code %d", all_paths[j], c->code);
          g_assert_cmpuint (symfonic_error_frame_get_status (frame), ==, status);
          g_assert_cmpstr (symfonic_error_frame_get_detail (frame), ==, detail != NULL ? detail : message);
          g_assert_cmpstr (symfonic_error_frame_get_code (frame), ==, c->wire_code);
          assert_headers (frame, c->header, c->header_value);
        }
    }
}

static void
test_error_map_rows (void)
{
  check_rows (FALSE);
}

static void
test_error_map_target_statuses (void)
{
  check_rows (TRUE);
}

/* The whole payload, as a client reads it. */
static void
test_error_map_payloads (void)
{
  g_autoptr(SymfonicPipeline) pipeline = load_shipped (FALSE);
  g_autoptr(SymfonicErrorFrame) unauthorized =
    map_on (pipeline, "/typed", SYMFONIC_ERROR, SYMFONIC_ERROR_UNAUTHORIZED, "Missing bearer token");
  g_autoptr(SymfonicErrorFrame) upstream =
    map_on (pipeline, "/chunks", SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM, SECRET);
  g_autoptr(SymfonicErrorFrame) foreign =
    map_on (pipeline, "/chat", G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED, SECRET);
  g_autofree char *unauthorized_json = symfonic_error_frame_to_json (unauthorized);
  g_autofree char *upstream_sse = symfonic_error_frame_to_sse (upstream);
  g_autofree char *foreign_json = symfonic_error_frame_to_json (foreign);

  g_assert_cmpstr (unauthorized_json, ==,
                   "{\"detail\":\"Missing bearer token\",\"status\":401,\"code\":\"unauthorized\"}");
  g_assert_cmpstr (upstream_sse, ==,
                   "event: error\ndata: {\"detail\":\"Internal server error\",\"status\":502,"
                   "\"code\":\"upstream_error\"}\n\n");
  g_assert_cmpstr (foreign_json, ==, "{\"detail\":\"Internal server error\",\"status\":500}");
}

typedef struct
{
  GQuark domain;
  int    code;
} ForeignCase;

/* Failures from the libraries underneath: never a code, never their text,
 * on every entry point (even /resume, whose collapse is for our own
 * errors only), with the switch on or off. */
static void
test_error_map_foreign (void)
{
  const ForeignCase cases[] = {
    { G_IO_ERROR, G_IO_ERROR_FAILED },
    { G_IO_ERROR, G_IO_ERROR_NOT_FOUND },
    { G_IO_ERROR, G_IO_ERROR_TIMED_OUT },
    { G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_PARSE },
    { G_RESOLVER_ERROR, G_RESOLVER_ERROR_NOT_FOUND },
    /* a code number that happens to be a SymfonicError one */
    { G_IO_ERROR, SYMFONIC_ERROR_BAD_REQUEST },
  };

  for (guint on = 0; on < 2; on++)
    {
      g_autoptr(SymfonicPipeline) pipeline = load_shipped (on);

      for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
        {
          for (guint j = 0; j < G_N_ELEMENTS (all_paths); j++)
            {
              g_autoptr(SymfonicErrorFrame) frame =
                map_on (pipeline, all_paths[j], cases[i].domain, cases[i].code, SECRET);

              g_assert_cmpuint (symfonic_error_frame_get_status (frame), ==, 500);
              g_assert_cmpstr (symfonic_error_frame_get_detail (frame), ==, OPAQUE);
              g_assert_null (symfonic_error_frame_get_code (frame));
              assert_headers (frame, NULL, NULL);
            }
        }
    }
}

/* Whatever the code, route or switch: a 5xx payload never carries the
 * error's own text. */
static void
test_error_map_server_errors_opaque (void)
{
  guint n_server_errors = 0;

  for (guint on = 0; on < 2; on++)
    {
      g_autoptr(SymfonicPipeline) pipeline = load_shipped (on);

      for (int code = SYMFONIC_ERROR_FAILED; code <= SYMFONIC_ERROR_PLUGIN; code++)
        {
          for (guint j = 0; j < G_N_ELEMENTS (all_paths); j++)
            {
              g_autoptr(SymfonicErrorFrame) frame = map_on (pipeline, all_paths[j], SYMFONIC_ERROR, code, SECRET);
              g_autofree char *json = symfonic_error_frame_to_json (frame);
              g_autofree char *sse = symfonic_error_frame_to_sse (frame);

              if (symfonic_error_frame_get_status (frame) < 500)
                continue;
              n_server_errors++;
              g_assert_cmpstr (symfonic_error_frame_get_detail (frame), ==, OPAQUE);
              g_assert_null (strstr (json, "hunter2"));
              g_assert_null (strstr (sse, "hunter2"));
            }
        }
    }

  /* the loop above really saw server errors: 7 codes on 3 routes with the
   * switch off, 6 with it on (conflict is a 409) */
  g_assert_cmpuint (n_server_errors, ==, 7 * 3 + 6 * 3);
}

typedef struct
{
  SymfonicError  code;
  guint          status;
  /* NULL: the message is echoed */
  const char    *detail;
  const char    *wire_code;
  const char    *header;
  const char    *header_value;
} ResumeCase;

/* Seed 002: on /resume "a server-side status becomes the entry point's 400
 * and the message is echoed", for rows whose detail is the message; the
 * upstream's rows are opaque, since their messages name hosts and quote
 * libraries. Client-side statuses are as everywhere. */
static void
test_error_map_resume (void)
{
  const ResumeCase off[] = {
    { SYMFONIC_ERROR_CONFLICT, 400, NULL, "conflict", NULL, NULL },
    { SYMFONIC_ERROR_UPSTREAM, 400, OPAQUE, "upstream_error", NULL, NULL },
    { SYMFONIC_ERROR_UPSTREAM_UNAVAILABLE, 400, OPAQUE, "upstream_unavailable", NULL, NULL },
    { SYMFONIC_ERROR_UPSTREAM_TIMEOUT, 400, OPAQUE, "upstream_timeout", NULL, NULL },
    /* no row: a server-side fault, which names files and internals */
    { SYMFONIC_ERROR_FAILED, 400, OPAQUE, NULL, NULL, NULL },
    { SYMFONIC_ERROR_CONFIG, 400, OPAQUE, NULL, NULL, NULL },
    { SYMFONIC_ERROR_BAD_REQUEST, 400, NULL, "bad_request", NULL, NULL },
    { SYMFONIC_ERROR_UNAUTHORIZED, 401, NULL, "unauthorized", "WWW-Authenticate", "Bearer" },
    { SYMFONIC_ERROR_FORBIDDEN, 403, FORBIDDEN_DETAIL, "forbidden", NULL, NULL },
    { SYMFONIC_ERROR_NOT_FOUND, 404, NULL, "not_found", NULL, NULL },
    { SYMFONIC_ERROR_RATE_LIMITED, 429, NULL, "rate_limited", NULL, NULL },
    { SYMFONIC_ERROR_BUDGET_EXCEEDED, 429, NULL, "budget_exceeded", NULL, NULL },
  };
  const ResumeCase on[] = {
    /* a target status below 500 is not a server error to collapse */
    { SYMFONIC_ERROR_CONFLICT, 409, NULL, "conflict", NULL, NULL },
    { SYMFONIC_ERROR_UPSTREAM_UNAVAILABLE, 400, OPAQUE, "upstream_unavailable", NULL, NULL },
    { SYMFONIC_ERROR_UPSTREAM_TIMEOUT, 400, OPAQUE, "upstream_timeout", NULL, NULL },
    { SYMFONIC_ERROR_UPSTREAM, 400, OPAQUE, "upstream_error", NULL, NULL },
  };
  const char *message = "run 42 is not paused";

  for (guint pass = 0; pass < 2; pass++)
    {
      g_autoptr(SymfonicPipeline) pipeline = load_shipped (pass == 1);
      const ResumeCase *cases = pass == 0 ? off : on;
      guint n_cases = pass == 0 ? G_N_ELEMENTS (off) : G_N_ELEMENTS (on);

      for (guint i = 0; i < n_cases; i++)
        {
          const ResumeCase *c = &cases[i];
          g_autoptr(SymfonicErrorFrame) frame = map_on (pipeline, "/resume", SYMFONIC_ERROR, c->code, message);

          g_test_message ("use-target-statuses=%u code %d", pass, c->code);
          g_assert_cmpuint (symfonic_error_frame_get_status (frame), ==, c->status);
          g_assert_cmpstr (symfonic_error_frame_get_detail (frame), ==, c->detail != NULL ? c->detail : message);
          g_assert_cmpstr (symfonic_error_frame_get_code (frame), ==, c->wire_code);
          assert_headers (frame, c->header, c->header_value);
        }
    }
}

/* Each kind takes the policy that lists it; every policy field shows. */
static void
test_error_map_policy_by_kind (void)
{
  static const char table[] =
    "[code:conflict]\nstatus=500\ntarget-status=409\n"
    "[code:bad_request]\nstatus=400\n"
    "[policy:stream]\nkinds=typed\nopaque-detail=Stream fault\n"
    "[policy:chunks]\nkinds=chunks\nfallback-status=503\nopaque-detail=Chunk fault\n"
    "[policy:chat]\nkinds=chat;runs\nfallback-status=422\n"
    "[policy:resume]\nkinds=resume\nfallback-status=409\ncollapse-server-errors=true\n"
    "[policy:providers]\nkinds=openai;anthropic\n";
  g_autofree char *path = g_build_filename (g_get_user_cache_dir (), "kinds.ini", NULL);
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(GError) error = NULL;
  struct {
    const char *path;
    int         code;
    guint       status;
    const char *detail;
    const char *wire_code;
  } cases[] = {
    /* a row: its status; a 5xx shows the policy's opaque detail */
    { "/typed", SYMFONIC_ERROR_CONFLICT, 500, "Stream fault", "conflict" },
    { "/chunks", SYMFONIC_ERROR_CONFLICT, 500, "Chunk fault", "conflict" },
    { "/chat", SYMFONIC_ERROR_CONFLICT, 500, OPAQUE, "conflict" },
    { "/resume", SYMFONIC_ERROR_CONFLICT, 409, SECRET, "conflict" },
    { "/typed", SYMFONIC_ERROR_BAD_REQUEST, 400, SECRET, "bad_request" },
    { "/resume", SYMFONIC_ERROR_BAD_REQUEST, 400, SECRET, "bad_request" },
    /* no row: the policy's fallback status */
    { "/typed", SYMFONIC_ERROR_RATE_LIMITED, 500, "Stream fault", "rate_limited" },
    { "/chunks", SYMFONIC_ERROR_RATE_LIMITED, 503, "Chunk fault", "rate_limited" },
    { "/chat", SYMFONIC_ERROR_RATE_LIMITED, 422, SECRET, "rate_limited" },
    /* ... and a server-side fault without a row never shows its message,
     * whatever status the fallback gives it */
    { "/chat", SYMFONIC_ERROR_FAILED, 422, OPAQUE, NULL },
    { "/resume", SYMFONIC_ERROR_FAILED, 409, OPAQUE, NULL },
    { "/resume", SYMFONIC_ERROR_UPSTREAM, 409, OPAQUE, "upstream_error" },
  };

  g_assert_cmpint (g_mkdir_with_parents (g_get_user_cache_dir (), 0700), ==, 0);
  g_assert_true (g_file_set_contents (path, table, -1, &error));
  g_assert_no_error (error);
  pipeline = load (path, FALSE, &error);
  g_assert_no_error (error);

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(SymfonicErrorFrame) frame = map_on (pipeline, cases[i].path, SYMFONIC_ERROR, cases[i].code, SECRET);

      g_test_message ("%s code %d", cases[i].path, cases[i].code);
      g_assert_cmpuint (symfonic_error_frame_get_status (frame), ==, cases[i].status);
      g_assert_cmpstr (symfonic_error_frame_get_detail (frame), ==, cases[i].detail);
      g_assert_cmpstr (symfonic_error_frame_get_code (frame), ==, cases[i].wire_code);
    }

  /* a foreign error is a 500 on every kind, with that kind's opaque detail */
  {
    g_autoptr(SymfonicErrorFrame) typed = map_on (pipeline, "/typed", G_IO_ERROR, G_IO_ERROR_FAILED, SECRET);
    g_autoptr(SymfonicErrorFrame) chunks = map_on (pipeline, "/chunks", G_IO_ERROR, G_IO_ERROR_FAILED, SECRET);
    g_autoptr(SymfonicErrorFrame) resume = map_on (pipeline, "/resume", G_IO_ERROR, G_IO_ERROR_FAILED, SECRET);

    g_assert_cmpuint (symfonic_error_frame_get_status (typed), ==, 500);
    g_assert_cmpstr (symfonic_error_frame_get_detail (typed), ==, "Stream fault");
    g_assert_cmpuint (symfonic_error_frame_get_status (chunks), ==, 500);
    g_assert_cmpstr (symfonic_error_frame_get_detail (chunks), ==, "Chunk fault");
    g_assert_cmpuint (symfonic_error_frame_get_status (resume), ==, 500);
    g_assert_cmpstr (symfonic_error_frame_get_detail (resume), ==, OPAQUE);
    g_assert_null (symfonic_error_frame_get_code (resume));
  }
}

/* Several headers on a row, in order, with the value's own colons kept. */
static void
test_error_map_headers (void)
{
  static const char table[] =
    "[code:unauthorized]\nstatus=401\n"
    "headers=WWW-Authenticate: Bearer realm=\"symfonic\";Link: <https://example.com/auth>; rel=help\n"
    "[policy:all]\nkinds=typed;chunks;chat;resume;openai;anthropic;runs\n";
  g_autofree char *path = g_build_filename (g_get_user_cache_dir (), "headers.ini", NULL);
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(SymfonicErrorFrame) frame = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) names = NULL;

  /* GKeyFile lists split at ';', so a ';' inside a value is escaped */
  g_assert_cmpint (g_mkdir_with_parents (g_get_user_cache_dir (), 0700), ==, 0);
  g_assert_true (g_file_set_contents (path, table, -1, &error));
  pipeline = load (path, FALSE, &error);
  g_assert_nonnull (error);
  g_clear_error (&error);

  {
    static const char escaped[] =
      "[code:unauthorized]\nstatus=401\n"
      "headers=WWW-Authenticate: Bearer realm=\"symfonic\";Link: <https://example.com/auth>\\; rel=help\n"
      "[policy:all]\nkinds=typed;chunks;chat;resume;openai;anthropic;runs\n";

    g_assert_true (g_file_set_contents (path, escaped, -1, &error));
    pipeline = load (path, FALSE, &error);
    g_assert_no_error (error);
  }

  frame = map_on (pipeline, "/chat", SYMFONIC_ERROR, SYMFONIC_ERROR_UNAUTHORIZED, "no token");
  names = symfonic_error_frame_list_headers (frame);
  g_assert_cmpstrv (names, ((const char * const[]) { "WWW-Authenticate", "Link", NULL }));
  g_assert_cmpstr (symfonic_error_frame_get_header (frame, "www-authenticate"), ==, "Bearer realm=\"symfonic\"");
  g_assert_cmpstr (symfonic_error_frame_get_header (frame, "Link"), ==, "<https://example.com/auth>; rel=help");
}

#define POLICY "[policy:all]\nkinds=typed;chunks;chat;resume;openai;anthropic;runs\n"

typedef struct
{
  const char *name;
  const char *table;
  /* the line the message must name, 0: none */
  guint       line;
  /* what the message must name besides the file */
  const char *mentions[3];
} BrokenCase;

static const BrokenCase broken_cases[] = {
  { "detail-mode", "[code:bad_request]\nstatus=400\ndetail=verbatim\n" POLICY,
    3, { "[code:bad_request]", "detail", "verbatim" } },
  { "status-too-high", "[code:bad_request]\nstatus=600\n" POLICY, 2, { "[code:bad_request]", "status", "600" } },
  { "status-too-low", "[code:not_found]\nstatus=399\n" POLICY, 2, { "[code:not_found]", "status", "399" } },
  { "status-success", "[code:not_found]\nstatus=200\n" POLICY, 2, { "[code:not_found]", "status", "200" } },
  { "status-not-a-number", "[code:not_found]\nstatus=four-oh-four\n" POLICY,
    2, { "[code:not_found]", "status", "four-oh-four" } },
  { "target-status", "[code:conflict]\nstatus=500\ntarget-status=302\n" POLICY,
    3, { "[code:conflict]", "target-status", "302" } },
  { "missing-status", "[code:not_found]\ndetail=message\n" POLICY, 1, { "[code:not_found]", "status" } },
  { "unknown-key", "[code:rate_limited]\nstatus=429\ncolour=red\n" POLICY, 3, { "[code:rate_limited]", "colour" } },
  { "header-no-colon", "[code:rate_limited]\nstatus=429\nheaders=Retry-After\n" POLICY,
    3, { "[code:rate_limited]", "headers", "Retry-After" } },
  { "header-bad-name", "[code:rate_limited]\nstatus=429\nheaders=Retry After: 5\n" POLICY,
    3, { "[code:rate_limited]", "headers", "Retry After: 5" } },
  { "header-empty-value", "[code:rate_limited]\nstatus=429\nheaders=Retry-After:\n" POLICY,
    3, { "[code:rate_limited]", "headers", "Retry-After:" } },
  { "header-line-break", "[code:rate_limited]\nstatus=429\nheaders=X-A: 1\\r\\nX-B: 2\n" POLICY,
    3, { "[code:rate_limited]", "headers" } },
  { "header-twice", "[code:unauthorized]\nstatus=401\nheaders=X-A: 1;x-a: 2\n" POLICY,
    3, { "[code:unauthorized]", "headers", "x-a" } },
  { "override-without-text", "[code:forbidden]\nstatus=403\ndetail=override\n" POLICY,
    1, { "[code:forbidden]", "detail-override" } },
  { "text-without-override", "[code:forbidden]\nstatus=403\ndetail-override=No.\n" POLICY,
    3, { "[code:forbidden]", "detail-override" } },
  { "unknown-code", "[code:teapot]\nstatus=418\n" POLICY, 1, { "[code:teapot]", "teapot" } },
  { "codeless-code", "[code:]\nstatus=500\n" POLICY, 1, { "[code:]" } },
  { "unknown-group", "[rule:bad_request]\nstatus=400\n" POLICY, 1, { "[rule:bad_request]" } },
  { "policy-unknown-kind", "[policy:p]\nkinds=typed;stream\n", 2, { "[policy:p]", "kinds", "stream" } },
  { "policy-kind-twice", POLICY "[policy:again]\nkinds=chat\n", 4, { "[policy:again]", "kinds", "[policy:all]" } },
  { "policy-kind-missing", "[policy:p]\nkinds=typed;chunks;chat;runs\n", 0, { "resume" } },
  { "policy-no-kinds", "[policy:p]\nfallback-status=500\n" POLICY, 1, { "[policy:p]", "kinds" } },
  { "policy-unknown-key", "[policy:p]\nkinds=typed;chunks;chat;resume;openai;anthropic;runs\nfallback=400\n", 3, { "[policy:p]", "fallback" } },
  { "policy-bad-boolean", "[policy:p]\nkinds=typed;chunks;chat;resume;openai;anthropic;runs\ncollapse-server-errors=maybe\n",
    3, { "[policy:p]", "collapse-server-errors", "maybe" } },
  { "policy-bad-fallback", "[policy:p]\nkinds=typed;chunks;chat;resume;openai;anthropic;runs\nfallback-status=1000\n",
    3, { "[policy:p]", "fallback-status", "1000" } },
  { "policy-collapse-to-5xx", "[policy:p]\nkinds=typed;chunks;chat;resume;openai;anthropic;runs\ncollapse-server-errors=true\n",
    1, { "[policy:p]", "fallback-status" } },
  { "policy-empty-opaque", "[policy:p]\nkinds=typed;chunks;chat;resume;openai;anthropic;runs\nopaque-detail=\n",
    3, { "[policy:p]", "opaque-detail" } },
  /* GKeyFile would merge these silently */
  { "duplicate-group", "[code:not_found]\nstatus=404\n" POLICY "[code:not_found]\nstatus=410\n",
    5, { "[code:not_found]", "line 1" } },
  { "duplicate-key", "[code:not_found]\nstatus=404\nstatus=410\n" POLICY, 3, { "[code:not_found]", "status", "line 2" } },
  { "not-a-key-file", "this is not a table\n", 0, { NULL } },
};

static void
test_error_map_broken (gconstpointer data)
{
  const BrokenCase *c = data;
  g_autofree char *name = g_strconcat (c->name, ".ini", NULL);
  g_autofree char *path = g_build_filename (g_get_user_cache_dir (), name, NULL);
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (g_mkdir_with_parents (g_get_user_cache_dir (), 0700), ==, 0);
  g_assert_true (g_file_set_contents (path, c->table, -1, &error));
  g_assert_no_error (error);

  pipeline = load (path, FALSE, &error);
  g_assert_null (pipeline);
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
  g_test_message ("%s", error->message);

  /* the pipeline names its own line and group, the table the rest */
  if (strstr (error->message, "t.pipeline:") == NULL)
    g_test_fail_printf ("“%s” does not name the pipeline file", error->message);
  if (strstr (error->message, "[stage:errors]") == NULL)
    g_test_fail_printf ("“%s” does not name the stage", error->message);
  if (strstr (error->message, path) == NULL)
    g_test_fail_printf ("“%s” does not name the table “%s”", error->message, path);
  if (c->line > 0)
    {
      g_autofree char *where = g_strdup_printf ("%s:%u: ", path, c->line);

      if (strstr (error->message, where) == NULL)
        g_test_fail_printf ("“%s” does not name line %u", error->message, c->line);
    }
  for (guint j = 0; j < G_N_ELEMENTS (c->mentions) && c->mentions[j] != NULL; j++)
    {
      if (strstr (error->message, c->mentions[j]) == NULL)
        g_test_fail_printf ("“%s” does not mention “%s”", error->message, c->mentions[j]);
    }
}

/* A mapper without a table maps nothing: the pipeline refuses to start. */
static void
test_error_map_table_required (void)
{
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(GError) error = NULL;

  pipeline = load (NULL, FALSE, &error);
  g_assert_null (pipeline);
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
  g_assert_nonnull (strstr (error->message, "[stage:errors]"));
  g_assert_nonnull (strstr (error->message, "table"));
  g_clear_error (&error);

  pipeline = load ("no-such-table.ini", FALSE, &error);
  g_assert_null (pipeline);
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
  g_assert_nonnull (strstr (error->message, PIPELINES_DIR "/no-such-table.ini"));
}

/* A route finds its mapper once, when its stages are added: the last of
 * them that maps errors, whatever follows it. A route without one maps by
 * the library's own rules. */
static void
test_error_map_route_mapper (void)
{
  static const char text[] =
    "[route:two]\npath=/two\nkind=typed\nsource=s\nstages=errors;target;plain\n"
    "[route:none]\npath=/none\nkind=typed\nsource=s\nstages=plain\n"
    "[source:s]\ntype=replay\ntranscripts=" SYMFONIC_TEST_UNIT_DIR "/fixtures/transcripts\n"
    "[stage:errors]\ntype=error-map\ntable=../error-map.ini\n"
    "[stage:target]\ntype=error-map\ntable=../error-map.ini\nuse-target-statuses=true\n"
    "[stage:plain]\ntype=release-line\n";
  g_autoptr(GFile) base_dir = g_file_new_for_path (PIPELINES_DIR);
  g_autoptr(GError) timeout = g_error_new_literal (SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM_TIMEOUT, SECRET);
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(SymfonicErrorFrame) frame = NULL;
  g_autoptr(SymfonicErrorFrame) builtin = NULL;
  g_autoptr(GError) error = NULL;
  SymfonicRoute *route;

  pipeline = symfonic_pipeline_new_from_data (registry, text, -1, base_dir, "t.pipeline", &error);
  g_assert_no_error (error);

  route = symfonic_pipeline_lookup_route (pipeline, "/two");
  g_assert_true (symfonic_route_get_error_mapper (route) ==
                 SYMFONIC_ERROR_MAPPER (symfonic_pipeline_get_stage (pipeline, "target")));
  frame = symfonic_route_map_error (route, timeout);
  g_assert_cmpuint (symfonic_error_frame_get_status (frame), ==, 504);
  g_assert_cmpstr (symfonic_error_frame_get_code (frame), ==, "upstream_timeout");
  g_assert_cmpstr (symfonic_error_frame_get_detail (frame), ==, OPAQUE);
  g_clear_pointer (&frame, symfonic_error_frame_unref);

  route = symfonic_pipeline_lookup_route (pipeline, "/none");
  g_assert_null (symfonic_route_get_error_mapper (route));
  frame = symfonic_route_map_error (route, timeout);
  builtin = symfonic_error_frame_new_for_error (timeout);
  g_assert_cmpuint (symfonic_error_frame_get_status (frame), ==, symfonic_error_frame_get_status (builtin));
  g_assert_cmpstr (symfonic_error_frame_get_code (frame), ==, symfonic_error_frame_get_code (builtin));
  g_assert_cmpstr (symfonic_error_frame_get_detail (frame), ==, symfonic_error_frame_get_detail (builtin));
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

  g_test_add_func ("/error-map/stage", test_error_map_stage);
  g_test_add_func ("/error-map/rows", test_error_map_rows);
  g_test_add_func ("/error-map/target-statuses", test_error_map_target_statuses);
  g_test_add_func ("/error-map/payloads", test_error_map_payloads);
  g_test_add_func ("/error-map/foreign", test_error_map_foreign);
  g_test_add_func ("/error-map/server-errors-opaque", test_error_map_server_errors_opaque);
  g_test_add_func ("/error-map/resume", test_error_map_resume);
  g_test_add_func ("/error-map/policy-by-kind", test_error_map_policy_by_kind);
  g_test_add_func ("/error-map/headers", test_error_map_headers);
  g_test_add_func ("/error-map/table-required", test_error_map_table_required);
  g_test_add_func ("/error-map/route-mapper", test_error_map_route_mapper);
  for (guint i = 0; i < G_N_ELEMENTS (broken_cases); i++)
    {
      g_autofree char *name = g_strconcat ("/error-map/broken/", broken_cases[i].name, NULL);

      g_test_add_data_func (name, &broken_cases[i], test_error_map_broken);
    }

  return g_test_run ();
}
