/* test-stores.c: [store:NAME] groups, leases and mid-stream charging, over HTTP
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A store group is one store that every key naming it shares; a name that
 * is no group, a store type in a role it cannot play, a bad key, each
 * fails at its key. Budget reservations and stream slots are leases: one
 * nobody renews is reclaimed within its TTL, one whose stream runs is
 * renewed, each is given back exactly once however its stream ends. A
 * running stream charges its usage as it goes, so that it ends with its
 * one budget_exceeded frame when another holder spent the budget.
 */
#include <string.h>

#include <glib/gstdio.h>

#include "symfonic-test-support.h"

#define AUTH_GROUP "[stage:auth]\ntype=auth\ntokens-file=" SYMFONIC_TEST_DATA_DIR "/demo-tokens.ini\n\n"
#define ERRORS_GROUP "[stage:errors]\ntype=error-map\ntable=" SYMFONIC_TEST_DATA_DIR "/error-map.ini\n\n"
#define AUTH_HEADERS "Authorization", "Bearer demo-token-alice", "X-Tenant-ID", "acme"
#define QUERY "{\"query\":\"count me\"}"
/* "count me": 8 bytes, 2 tokens */
#define QUERY_TOKENS 2
#define SEC ((gint64) G_USEC_PER_SEC)

/* The one typed route over the replay source, running @stages, with
 * @route_lines more, and @groups after it. */
static char *
pipeline_text (const char *transcript,
               double      time_scale,
               const char *stages,
               const char *route_lines,
               const char *groups)
{
  g_autofree char *base = symfonic_test_replay_pipeline ("transcripts", transcript, time_scale);
  g_autofree char *lines = g_strdup_printf ("source=fixtures\nstages=%s\n%s", stages, route_lines);
  GString *text = g_string_new (base);

  g_assert_cmpuint (g_string_replace (text, "source=fixtures\n", lines, 1), ==, 1);
  g_string_append (text, groups);

  return g_string_free (text, FALSE);
}

static SymfonicServer *
server_new (const char *text,
            guint       workers)
{
  g_autofree char *base_dir = g_test_build_filename (G_TEST_DIST, "integration", NULL);

  return symfonic_test_server_new (text, base_dir, workers);
}

static GObject *
server_get_store (SymfonicServer *server,
                  const char     *name)
{
  GObject *store = symfonic_pipeline_get_store (symfonic_server_get_pipeline (server), name);

  g_assert_nonnull (store);
  return store;
}

static SymfonicTestResponse *
post (SoupSession *session,
      const char  *url,
      const char  *transcript)
{
  return symfonic_test_request (session, "POST", url, "application/json", QUERY,
                                AUTH_HEADERS, "X-Symfonic-Transcript", transcript, NULL);
}

static gboolean
never (gpointer data)
{
  return FALSE;
}

static void
sleep_ms (guint ms)
{
  symfonic_test_iterate_until (NULL, never, NULL, ms);
}

/* The JSON refusal's code and Retry-After */
static void
assert_refused (SymfonicTestResponse *response,
                guint                 status,
                const char           *code,
                const char           *retry_after)
{
  g_autoptr(JsonNode) node = NULL;

  g_assert_cmpuint (response->status, ==, status);
  g_assert_cmpstr (soup_message_headers_get_one (response->headers, "Retry-After"), ==, retry_after);
  node = symfonic_test_response_dup_json (response);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (node), "code"), ==, code);
}

/* --- loading ------------------------------------------------------------- */

/* The 1-based line of @text that starts with @line. */
static guint
line_of (const char *text,
         const char *line)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    {
      if (g_str_has_prefix (lines[i], line))
        return i + 1;
    }
  g_assert_not_reached ();
}

typedef struct
{
  const char *name;
  /* the route's extra lines, [gateway]'s (replacing its workers= line),
   * and the groups after the route */
  const char *route_lines;
  const char *gateway_lines;
  const char *groups;
  /* the line the error names, and the rest of the message after "FILE:N: " */
  const char *at_line;
  const char *message;
} BadCase;

static const BadCase bad_cases[] = {
  { "unknown-type", "", NULL,
    "[store:shared]\ntype=nosuch\n",
    "type=nosuch",
    "[store:shared] type: expected a registered store type (symfonic-inspect lists them), found “nosuch”" },
  { "not-a-store", "", NULL,
    "[store:shared]\ntype=auth\n",
    "type=auth",
    "[store:shared] type: expected a store type (one implementing SymfonicMeterStore, SymfonicStreamCapStore or "
    "SymfonicRunStore), found “auth”, which implements none" },
  { "unknown-key", "", NULL,
    "[store:shared]\ntype=memory\nurl=redis://127.0.0.1:6379/0\n",
    "url=",
    "[store:shared] url: expected a key of type “memory” (lease-ttl-ms, max-runs, max-runs-per-tenant, "
    "max-runs-per-principal, max-bytes), found an unknown one" },
  { "bad-value", "", NULL,
    "[store:shared]\ntype=memory\nlease-ttl-ms=soon\n",
    "lease-ttl-ms=",
    NULL },
  { "role-lacking", "", "workers=1\nrun-store=counted\n",
    "[store:counted]\ntype=test-counting\n",
    "run-store=",
    "[gateway] run-store: expected a store that is a SymfonicRunStore, found [store:counted] of type "
    "“test-counting”, which is not" },
  { "neither-group-nor-type", "cap-store=nowhere\nmax-streams=2\n", NULL,
    "[store:somewhere]\ntype=memory\n",
    "cap-store=",
    "[route:typed] cap-store: expected a [store:NAME] of this file or a registered SymfonicStreamCapStore type "
    "(symfonic-inspect lists them), found “nowhere”" },
  { "stage-store-unknown", "", NULL,
    "[stage:limit]\ntype=rate-limit\nstore=nowhere\n",
    "store=nowhere",
    "[stage:limit] store: expected a [store:NAME] of this file or a registered SymfonicMeterStore type "
    "(symfonic-inspect lists them), found “nowhere”" },
};

/* Each bad store setting fails the load at its file, line and key. */
static void
test_load_refused (gconstpointer data)
{
  const BadCase *c = data;
  g_autofree char *dir = g_dir_make_tmp ("symfonic-stores-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "stores.pipeline", NULL);
  g_autofree char *text = pipeline_text ("typed", 0, "", c->route_lines, c->groups);
  g_autoptr(GString) file_text = g_string_new (text);
  g_autoptr(GFile) file = NULL;
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *display = NULL;
  g_autofree char *prefix = NULL;
  g_autofree char *transcripts = g_test_build_filename (G_TEST_DIST, "integration", "transcripts", NULL);
  g_autofree char *transcripts_line = g_strdup_printf ("transcripts=%s\n", transcripts);

  g_assert_cmpuint (g_string_replace (file_text, "transcripts=transcripts\n", transcripts_line, 1), ==, 1);
  if (c->gateway_lines != NULL)
    g_assert_cmpuint (g_string_replace (file_text, "workers=1\n", c->gateway_lines, 1), ==, 1);
  g_assert_true (g_file_set_contents (path, file_text->str, -1, NULL));
  file = g_file_new_for_path (path);
  display = g_file_get_parse_name (file);

  pipeline = symfonic_pipeline_new_from_file (symfonic_test_get_registry (), file, &error);
  g_assert_null (pipeline);
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
  prefix = g_strdup_printf ("%s:%u: ", display, line_of (file_text->str, c->at_line));
  g_test_message ("%s", error->message);
  g_assert_true (g_str_has_prefix (error->message, prefix));
  if (c->message != NULL)
    g_assert_cmpstr (error->message + strlen (prefix), ==, c->message);
  else
    g_assert_true (g_str_has_prefix (error->message + strlen (prefix), "[store:shared] lease-ttl-ms: "));

  g_unlink (path);
  g_rmdir (dir);
}

/* Two rate-limit stages on two routes name one [store:shared]: one store,
 * one count, whichever route a request takes. */
static void
test_shared_rate_limit (void)
{
  g_autofree char *text = NULL;
  g_autoptr(GString) routes = NULL;
  g_autoptr(SymfonicServer) server = NULL;
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autofree char *url_a = NULL;
  g_autofree char *url_b = NULL;
  g_autoptr(GObject) store_a = NULL;
  g_autoptr(GObject) store_b = NULL;
  SymfonicPipeline *pipeline;

  text = pipeline_text ("typed", 0, "auth;limit-a;errors", "",
                        AUTH_GROUP ERRORS_GROUP
                        "[route:other]\npath=/other\nkind=typed\nsource=fixtures\nstages=auth;limit-b;errors\n\n"
                        "[stage:limit-a]\ntype=rate-limit\nrate=0.001\nburst=2\nstore=shared\n\n"
                        "[stage:limit-b]\ntype=rate-limit\nrate=0.001\nburst=2\nstore=shared\n\n"
                        "[store:shared]\ntype=memory\n");
  routes = g_string_new (text);
  server = server_new (routes->str, 2);
  pipeline = symfonic_server_get_pipeline (server);
  url_a = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);
  url_b = symfonic_test_server_dup_url (server, "/other");

  g_object_get (symfonic_pipeline_get_stage (pipeline, "limit-a"), "store", &store_a, NULL);
  g_object_get (symfonic_pipeline_get_stage (pipeline, "limit-b"), "store", &store_b, NULL);
  g_assert_true (store_a == symfonic_pipeline_get_store (pipeline, "shared"));
  g_assert_true (store_b == store_a);

  /* a burst of two, over both routes */
  {
    g_autoptr(SymfonicTestResponse) first = post (session, url_a, "typed");
    g_autoptr(SymfonicTestResponse) second = post (session, url_b, "typed");
    g_autoptr(SymfonicTestResponse) third = post (session, url_b, "typed");
    g_autoptr(SymfonicTestResponse) fourth = post (session, url_a, "typed");

    g_assert_cmpuint (first->status, ==, 200);
    g_assert_cmpuint (second->status, ==, 200);
    assert_refused (third, 429, "rate_limited", "1000");
    assert_refused (fourth, 429, "rate_limited", "1000");
  }

  symfonic_server_stop (server);
}

/* --check never connects; --check --connect asks each store. */
static void
test_check_connect (void)
{
  g_autofree char *dir = g_dir_make_tmp ("symfonic-stores-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "check.pipeline", NULL);
  g_autofree char *transcripts = g_test_build_filename (G_TEST_DIST, "integration", "transcripts", NULL);
  const char *gateway = g_getenv ("SYMFONIC_GATEWAY");
  static const struct {
    const char *store_group;
    gboolean    connects;
  } cases[] = {
    { "[store:shared]\ntype=memory\n", TRUE },
    { "[store:shared]\ntype=test-counting\nreachable=false\n", FALSE },
  };

  g_assert_nonnull (gateway);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *groups = g_strconcat (AUTH_GROUP,
                                             "[stage:limit]\ntype=rate-limit\nstore=shared\n\n",
                                             cases[i].store_group, NULL);
      g_autofree char *text = pipeline_text ("typed", 0, "auth;limit", "", groups);
      g_autofree char *with_plugins = NULL;
      g_autoptr(GString) full = g_string_new (text);
      g_autofree char *plugin_line = g_strdup_printf ("workers=1\nplugin-path=%s/counting-store\n",
                                                      g_getenv ("SYMFONIC_TEST_PLUGIN_DIR"));
      g_autofree char *transcripts_line = g_strdup_printf ("transcripts=%s\n", transcripts);

      g_string_replace (full, "workers=1\n", plugin_line, 1);
      g_string_replace (full, "transcripts=transcripts\n", transcripts_line, 1);
      g_assert_true (g_file_set_contents (path, full->str, -1, NULL));

      for (guint connect = 0; connect < 2; connect++)
        {
          g_autoptr(GSubprocess) process = NULL;
          g_autoptr(GError) error = NULL;
          g_autofree char *out = NULL;
          g_autofree char *err = NULL;
          gboolean ok = !connect || cases[i].connects;

          process = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE, &error,
                                      gateway, "--check", connect ? "--connect" : "--check", path, NULL);
          g_assert_no_error (error);
          g_subprocess_communicate_utf8 (process, NULL, NULL, &out, &err, &error);
          g_assert_no_error (error);
          g_test_message ("case %u, connect %u: %s%s", i, connect, out, err);
          g_assert_cmpint (g_subprocess_get_exit_status (process), ==, ok ? 0 : 1);
          if (ok)
            g_assert_nonnull (strstr (out, ": OK, 1 route"));
          else
            g_assert_nonnull (strstr (err, "[store:shared]: the counting store is unreachable"));
        }
    }

  g_unlink (path);
  g_rmdir (dir);
}

/* symfonic-inspect lists the built-in store type among the types, and
 * describes its roles and properties, and the keys that name a store. */
static void
test_inspect (void)
{
  const char *inspect = g_getenv ("SYMFONIC_INSPECT");
  static const struct {
    const char *argument;
    const char *expected;
  } cases[] = {
    { NULL, "\n  memory           store   SymfonicMemoryStore          (built in)\n" },
    { "memory", "memory (store SymfonicMemoryStore)\n  built into the library\n" },
    { "memory", "  a store for: meter (a metering stage’s store), stream caps (a route’s cap-store), "
                "resumable runs ([gateway] run-store) ([store:NAME] type=memory)\n" },
    { "memory", "\n  lease-ttl-ms         How long a reservation or stream slot lives unless renewed" },
    { "route", "  cap-store            " },
    { "route", "type: the NAME of a [store:NAME], or a store type name (SymfonicStreamCapStore)\n" },
    { "gateway", "type: the NAME of a [store:NAME], or a store type name (SymfonicRunStore)\n" },
    { "rate-limit", "type: the NAME of a [store:NAME], or a store type name (SymfonicMeterStore)\n" },
  };

  g_assert_nonnull (inspect);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GSubprocess) process = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *out = NULL;

      process = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error,
                                  inspect, cases[i].argument, NULL);
      g_assert_no_error (error);
      g_subprocess_communicate_utf8 (process, NULL, NULL, &out, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpint (g_subprocess_get_exit_status (process), ==, 0);
      g_test_message ("expecting “%s”", cases[i].expected);
      g_assert_nonnull (strstr (out, cases[i].expected));
    }
}

/* --- leases -------------------------------------------------------------- */

#define BUDGET_GROUPS(ttl_ms) \
  AUTH_GROUP ERRORS_GROUP \
  "[stage:budget]\ntype=budget\ntokens-per-window=100\nreserve-tokens=60\nwindow-seconds=60\nstore=shared\n\n" \
  "[store:shared]\ntype=memory\nlease-ttl-ms=" ttl_ms "\n"

/* The budget the stage keeps for alice's tenant, as another holder of the
 * shared store names it. */
static const SymfonicMeterScope acme_budget = { "t:acme", 100, 60 * SEC };

/* An instance that reserved and died never renews its lease: its
 * reservation stands in the way for one TTL, then is reclaimed. */
static void
test_lease_expires (void)
{
  g_autofree char *text = pipeline_text ("typed", 0, "auth;budget;errors", "", BUDGET_GROUPS ("300"));
  g_autoptr(SymfonicServer) server = server_new (text, 1);
  g_autofree char *url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  SymfonicMeterStore *store = SYMFONIC_METER_STORE (server_get_store (server, "shared"));
  gboolean reserved = FALSE;
  guint64 lease_id = 0;
  guint64 outstanding = 0;

  g_assert_cmpint (symfonic_store_get_lease_ttl (SYMFONIC_STORE (store)), ==, 300 * 1000);
  g_assert_true (symfonic_meter_store_try_reserve (store, &acme_budget, 1, 60, symfonic_meter_store_get_time (store),
                                                   &reserved, &lease_id, NULL, NULL, NULL));
  g_assert_true (reserved);

  {
    g_autoptr(SymfonicTestResponse) refused = post (session, url, "typed");

    assert_refused (refused, 429, "budget_exceeded", "1");
  }

  sleep_ms (400);
  {
    g_autoptr(SymfonicTestResponse) admitted = post (session, url, "typed");

    g_assert_cmpuint (admitted->status, ==, 200);
  }
  /* the dead lease is gone, and the stream that took its place settled */
  g_assert_true (symfonic_memory_store_peek_budget (SYMFONIC_MEMORY_STORE (store), "t:acme", NULL, &outstanding));
  g_assert_cmpuint (outstanding, ==, 0);

  symfonic_server_stop (server);
}

/* A stream that runs three times longer than its lease's TTL keeps its
 * reservation all along: its stage renews the lease. */
static void
test_lease_renewed (void)
{
  g_autofree char *text = pipeline_text ("long", 0.3, "auth;budget;errors", "", BUDGET_GROUPS ("300"));
  g_autoptr(SymfonicServer) server = server_new (text, 1);
  g_autofree char *url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);
  g_autoptr(SoupSession) stream_session = symfonic_test_session_new ();
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = NULL;
  SymfonicMemoryStore *store = SYMFONIC_MEMORY_STORE (server_get_store (server, "shared"));
  guint64 outstanding = 0;
  guint64 charged = 0;

  /* fifty deltas 30 ms apart: 1.5 s */
  stream = symfonic_test_stream_post (stream_session, url, QUERY, AUTH_HEADERS, "X-Symfonic-Transcript", "long",
                                      NULL);
  symfonic_test_stream_wait_frames (stream, 2);
  sleep_ms (900);
  g_assert_false (stream->done);

  /* three TTLs on, the lease still holds its 60 of 100 */
  {
    g_autoptr(SymfonicTestResponse) refused = post (session, url, "typed");

    assert_refused (refused, 429, "budget_exceeded", "1");
  }
  g_assert_true (symfonic_memory_store_peek_budget (store, "t:acme", NULL, &outstanding));
  g_assert_cmpuint (outstanding, ==, 60);

  symfonic_test_stream_wait_done (stream);
  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, 200);
  g_assert_true (symfonic_memory_store_peek_budget (store, "t:acme", &charged, &outstanding));
  g_assert_cmpuint (outstanding, ==, 0);
  g_assert_cmpuint (charged, >, QUERY_TOKENS);

  symfonic_server_stop (server);
}

/* --- exactly once -------------------------------------------------------- */

typedef enum {
  END_SUCCESS,
  END_ERROR,
  END_REFUSED_LATER,
  END_DISCONNECT,
} End;

typedef struct
{
  GObject    *store;
  const char *count;
  guint       expected;
} CountWait;

static gboolean
count_reached (gpointer data)
{
  CountWait *wait = data;
  guint n = 0;

  g_object_get (wait->store, wait->count, &n, NULL);
  return n >= wait->expected;
}

/* Waits for the store's @count to reach @expected, then a little more,
 * and checks that it stayed there. */
static void
assert_count (GObject    *store,
              const char *count,
              guint       expected)
{
  CountWait wait = { store, count, expected };
  guint n = 0;

  g_assert_true (symfonic_test_iterate_until (NULL, count_reached, &wait, SYMFONIC_TEST_WAIT_MS));
  sleep_ms (300);
  g_object_get (store, count, &n, NULL);
  g_test_message ("%s: %u", count, n);
  g_assert_cmpuint (n, ==, expected);
}

/* Ends one stream of a route that holds both a budget lease and a stream
 * slot in a store that answers later: however the stream ends, each
 * lease is given back exactly once. */
static void
test_exactly_once (gconstpointer data)
{
  End end = GPOINTER_TO_INT (data);
  /* the refusal comes from the max-streams-per-tenant of a second store,
   * after the budget and the first store admitted */
  const char *transcript = end == END_ERROR ? "midstream-error" : end == END_DISCONNECT ? "long" : "typed";
  g_autofree char *text = pipeline_text (transcript, 1, "auth;budget;errors", "cap-store=counted\nmax-streams=5\n",
                                         AUTH_GROUP ERRORS_GROUP
                                         "[stage:budget]\ntype=budget\ntokens-per-window=1000\nreserve-tokens=60\n"
                                         "store=counted\n\n"
                                         "[store:counted]\ntype=test-counting\nadmits=100\n");
  g_autoptr(SymfonicServer) server = NULL;
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autofree char *url = NULL;
  GObject *store;

  if (end == END_REFUSED_LATER)
    {
      g_autoptr(GString) refusing = g_string_new (text);

      /* the route's one slot in a store of its own: the second stream has
       * its budget lease when its slot is refused */
      g_assert_cmpuint (g_string_replace (refusing, "cap-store=counted\nmax-streams=5\n",
                                          "cap-store=caps\nmax-streams=1\n", 1), ==, 1);
      g_string_append (refusing, "\n[store:caps]\ntype=memory\n");
      g_free (text);
      text = g_strdup (refusing->str);
    }
  server = server_new (text, 2);
  url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);
  store = server_get_store (server, "counted");

  switch (end)
    {
    case END_SUCCESS:
    case END_ERROR:
      {
        g_autoptr(SymfonicTestStream) stream = NULL;
        SymfonicTestFrame *last;

        stream = symfonic_test_stream_post (session, url, QUERY, AUTH_HEADERS, NULL);
        symfonic_test_stream_wait_done (stream);
        g_assert_no_error (stream->error);
        g_assert_cmpuint (stream->status, ==, 200);
        last = g_ptr_array_index (stream->frames, stream->frames->len - 1);
        g_assert_cmpstr (last->event, ==, end == END_SUCCESS ? "ResponseCompleteEvent" : "error");
        assert_count (store, "reserves", 1);
        assert_count (store, "settles", 1);
        assert_count (store, "acquires", 1);
        assert_count (store, "releases", 1);
      }
      break;

    case END_REFUSED_LATER:
      {
        g_autoptr(SoupSession) stream_session = symfonic_test_session_new ();
        g_autoptr(SymfonicTestStream) held = NULL;
        g_autoptr(SymfonicTestResponse) refused = NULL;
        GObject *caps = server_get_store (server, "caps");

        held = symfonic_test_stream_post (stream_session, url, QUERY, AUTH_HEADERS,
                                          "X-Symfonic-Transcript", "long", NULL);
        symfonic_test_stream_wait_frames (held, 1);
        refused = post (session, url, "typed");
        assert_refused (refused, 503, "overloaded", "1");
        assert_count (store, "reserves", 2);
        assert_count (store, "settles", 1);
        g_assert_cmpuint (symfonic_memory_store_peek_slots (SYMFONIC_MEMORY_STORE (caps), "streams:typed"), ==, 1);

        symfonic_test_stream_close (held);
        soup_session_abort (stream_session);
        assert_count (store, "settles", 2);
        g_assert_cmpuint (symfonic_memory_store_peek_slots (SYMFONIC_MEMORY_STORE (caps), "streams:typed"), ==, 0);
      }
      break;

    case END_DISCONNECT:
      {
        g_autoptr(SoupSession) stream_session = symfonic_test_session_new ();
        g_autoptr(SymfonicTestStream) stream = NULL;

        stream = symfonic_test_stream_post (stream_session, url, QUERY, AUTH_HEADERS, NULL);
        symfonic_test_stream_wait_frames (stream, 2);
        g_assert_false (stream->done);
        symfonic_test_stream_close (stream);
        soup_session_abort (stream_session);
        assert_count (store, "reserves", 1);
        assert_count (store, "settles", 1);
        assert_count (store, "acquires", 1);
        assert_count (store, "releases", 1);
      }
      break;
    }

  symfonic_server_stop (server);
}

/* --- charging while running ---------------------------------------------- */

/* Another holder of the shared budget spends most of it while a stream
 * runs: the stream's next batch hears that the budget is exhausted, and
 * it ends with its one budget_exceeded frame, having let through no more
 * than what was left plus one batch; without charging it would have had
 * its whole admission-time allowance, and completed. */
static void
test_charged_while_running (void)
{
  g_autofree char *text = pipeline_text ("wordy", 1, "auth;budget;errors", "",
                                         AUTH_GROUP ERRORS_GROUP
                                         "[stage:budget]\ntype=budget\ntokens-per-window=1100\nreserve-tokens=10\n"
                                         "window-seconds=60\nstore=shared\n\n"
                                         "[store:shared]\ntype=memory\n");
  g_autoptr(SymfonicServer) server = server_new (text, 1);
  g_autofree char *url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = NULL;
  SymfonicMeterStore *store = SYMFONIC_METER_STORE (server_get_store (server, "shared"));
  const SymfonicMeterScope budget = { "t:acme", 1100, 60 * SEC };
  guint64 other_lease = 0;
  guint64 allowance = 0;
  guint64 charged = 0;
  guint64 outstanding = 0;
  guint64 delivered_bytes = 0;
  guint n_errors = 0;
  gboolean granted = FALSE;
  gboolean exhausted = TRUE;
  SymfonicTestFrame *last;
  g_autoptr(JsonNode) node = NULL;

  stream = symfonic_test_stream_post (session, url, QUERY, AUTH_HEADERS, "X-Symfonic-Transcript", "wordy", NULL);
  symfonic_test_stream_wait_frames (stream, 2);
  g_assert_false (stream->done);

  /* the other holder: its stream used 700 already */
  g_assert_true (symfonic_meter_store_try_reserve (store, &budget, 1, 10, symfonic_meter_store_get_time (store),
                                                   &granted, &other_lease, NULL, &allowance, NULL));
  g_assert_true (granted);
  g_assert_true (symfonic_meter_store_try_charge (store, other_lease, &budget, 1, 700,
                                                  symfonic_meter_store_get_time (store), &exhausted, &allowance,
                                                  NULL));
  g_assert_false (exhausted);

  symfonic_test_stream_wait_done (stream);
  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, 200);
  for (guint i = 0; i < stream->frames->len; i++)
    {
      SymfonicTestFrame *frame = g_ptr_array_index (stream->frames, i);

      if (g_str_equal (frame->event, "error"))
        n_errors++;
      else if (g_str_equal (frame->event, "TextDeltaEvent"))
        delivered_bytes += 100;
    }
  g_assert_cmpuint (n_errors, ==, 1);
  last = g_ptr_array_index (stream->frames, stream->frames->len - 1);
  g_assert_cmpstr (last->event, ==, "error");
  node = symfonic_test_json_parse (last->data);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (node), "code"), ==, "budget_exceeded");

  /* 400 was left when the other holder charged; one batch is 256 */
  g_test_message ("delivered %" G_GUINT64_FORMAT " bytes", delivered_bytes);
  g_assert_cmpuint (QUERY_TOKENS + delivered_bytes / 4, <=, 1100 - 700 + 256 + 25);
  g_assert_cmpuint (delivered_bytes, <, 40 * 100);

  /* what the store charged never passes the budget */
  g_assert_true (symfonic_memory_store_peek_budget (SYMFONIC_MEMORY_STORE (store), "t:acme", &charged, &outstanding));
  g_assert_cmpuint (charged + outstanding, <=, 1100);

  symfonic_server_stop (server);
}

/* --- stream slots -------------------------------------------------------- */

/* A slot an instance took and never gave back (it died) holds the route's
 * one place for one TTL, then is pruned; a slot is given back when its
 * stream ends. */
static void
test_slot_expires (void)
{
  g_autofree char *text = pipeline_text ("typed", 0, "auth;errors", "cap-store=caps\nmax-streams=1\n",
                                         AUTH_GROUP ERRORS_GROUP "[store:caps]\ntype=memory\nlease-ttl-ms=300\n");
  g_autoptr(SymfonicServer) server = server_new (text, 2);
  g_autofree char *url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  SymfonicStreamCapStore *store = SYMFONIC_STREAM_CAP_STORE (server_get_store (server, "caps"));
  const SymfonicStreamCapScope route = { "streams:typed", 1 };
  gboolean acquired = FALSE;
  guint64 lease_id = 0;

  g_assert_true (symfonic_route_get_cap_store (symfonic_pipeline_get_route (symfonic_server_get_pipeline (server), 0))
                 == store);
  g_assert_true (symfonic_stream_cap_store_try_acquire (store, &route, 1, symfonic_stream_cap_store_get_time (store),
                                                        &acquired, NULL, &lease_id, NULL));
  g_assert_true (acquired);

  {
    g_autoptr(SymfonicTestResponse) refused = post (session, url, "typed");

    assert_refused (refused, 503, "overloaded", "1");
  }

  sleep_ms (400);
  for (guint i = 0; i < 3; i++)
    {
      g_autoptr(SymfonicTestResponse) admitted = post (session, url, "typed");

      g_assert_cmpuint (admitted->status, ==, 200);
    }
  g_assert_cmpuint (symfonic_memory_store_peek_slots (SYMFONIC_MEMORY_STORE (store), "streams:typed"), ==, 0);

  symfonic_server_stop (server);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;

  symfonic_test_init (&argc, &argv);
  symfonic_registry_load_directory (symfonic_test_get_registry (), TEST_PLUGIN_COUNTING_STORE_DIR, &error);
  g_assert_no_error (error);

  for (guint i = 0; i < G_N_ELEMENTS (bad_cases); i++)
    {
      g_autofree char *path = g_strconcat ("/stores/load/refused/", bad_cases[i].name, NULL);

      g_test_add_data_func (path, &bad_cases[i], test_load_refused);
    }
  g_test_add_func ("/stores/shared/rate-limit", test_shared_rate_limit);
  g_test_add_func ("/stores/check-connect", test_check_connect);
  g_test_add_func ("/stores/inspect", test_inspect);
  g_test_add_func ("/stores/lease/expires", test_lease_expires);
  g_test_add_func ("/stores/lease/renewed", test_lease_renewed);
  g_test_add_data_func ("/stores/once/success", GINT_TO_POINTER (END_SUCCESS), test_exactly_once);
  g_test_add_data_func ("/stores/once/error", GINT_TO_POINTER (END_ERROR), test_exactly_once);
  g_test_add_data_func ("/stores/once/refused-later", GINT_TO_POINTER (END_REFUSED_LATER), test_exactly_once);
  g_test_add_data_func ("/stores/once/disconnect", GINT_TO_POINTER (END_DISCONNECT), test_exactly_once);
  g_test_add_func ("/stores/charged-while-running", test_charged_while_running);
  g_test_add_func ("/stores/slot/expires", test_slot_expires);

  return g_test_run ();
}
