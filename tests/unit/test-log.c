/* test-log.c: structured lines about requests, and the limit on how often
 * one kind of failure is logged
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <gio/gio.h>

#include "symfonic-enums.h"
#include "symfonic-error.h"
#include "symfonic-log-private.h"

#define SEC ((gint64) G_USEC_PER_SEC)

/* The last line written, field by field, and its level. */
static GHashTable *last_line;
static GLogLevelFlags last_level;
static guint n_lines;

static GLogWriterOutput
keep_line (GLogLevelFlags   level,
           const GLogField *fields,
           gsize            n_fields,
           gpointer         user_data)
{
  g_clear_pointer (&last_line, g_hash_table_unref);
  last_line = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  for (gsize i = 0; i < n_fields; i++)
    g_hash_table_insert (last_line, g_strdup (fields[i].key),
                         fields[i].length < 0 ? g_strdup (fields[i].value)
                                              : g_strndup (fields[i].value, fields[i].length));
  last_level = level;
  n_lines++;

  return G_LOG_WRITER_HANDLED;
}

static const char *
field (const char *key)
{
  return last_line != NULL ? g_hash_table_lookup (last_line, key) : NULL;
}

/* The first line of a kind goes out; the others within the interval are
 * counted, and the first after it says how many and since when. */
static void
test_limit_interval (void)
{
  gint64 t0 = 1000 * SEC;
  guint64 suppressed = 99;
  gint64 since = 99;

  symfonic_log_limit_forget ();
  g_assert_true (symfonic_log_limit_take ("store down", t0, &suppressed, &since));
  g_assert_cmpuint (suppressed, ==, 0);
  g_assert_cmpint (since, ==, 0);

  for (guint i = 0; i < 1000; i++)
    g_assert_false (symfonic_log_limit_take ("store down", t0 + i * 1000, &suppressed, &since));
  g_assert_false (symfonic_log_limit_take ("store down", t0 + SYMFONIC_LOG_INTERVAL_US - 1, &suppressed, &since));

  g_assert_true (symfonic_log_limit_take ("store down", t0 + SYMFONIC_LOG_INTERVAL_US, &suppressed, &since));
  g_assert_cmpuint (suppressed, ==, 1001);
  g_assert_cmpint (since, ==, SYMFONIC_LOG_INTERVAL_US);

  /* the count starts again; a quiet kind logs at once, with nothing held */
  g_assert_false (symfonic_log_limit_take ("store down", t0 + SYMFONIC_LOG_INTERVAL_US + 1, &suppressed, &since));
  g_assert_true (symfonic_log_limit_take ("store down", t0 + 5 * SYMFONIC_LOG_INTERVAL_US, &suppressed, &since));
  g_assert_cmpuint (suppressed, ==, 1);
  g_assert_true (symfonic_log_limit_take ("store down", t0 + 7 * SYMFONIC_LOG_INTERVAL_US, &suppressed, &since));
  g_assert_cmpuint (suppressed, ==, 0);
}

/* Kinds are held apart. */
static void
test_limit_kinds (void)
{
  gint64 t0 = 1000 * SEC;
  guint64 suppressed;
  gint64 since;

  symfonic_log_limit_forget ();
  g_assert_true (symfonic_log_limit_take ("upstream a: 5", t0, &suppressed, &since));
  g_assert_true (symfonic_log_limit_take ("upstream b: 5", t0, &suppressed, &since));
  g_assert_false (symfonic_log_limit_take ("upstream a: 5", t0 + 1, &suppressed, &since));
  g_assert_true (symfonic_log_limit_take ("upstream a: 6", t0 + 1, &suppressed, &since));
}

/* Past the most kinds it keeps, the quiet ones are forgotten; a kind that
 * still finds no room is logged every time rather than lost, and what a
 * held kind counted is kept. */
static void
test_limit_bounded (void)
{
  gint64 t0 = 1000 * SEC;
  guint64 suppressed;
  gint64 since;

  symfonic_log_limit_forget ();
  g_assert_true (symfonic_log_limit_take ("held", t0, &suppressed, &since));
  g_assert_false (symfonic_log_limit_take ("held", t0 + 1, &suppressed, &since));
  for (guint i = 0; i < 5000; i++)
    {
      g_autofree char *kind = g_strdup_printf ("kind %u", i);

      g_assert_true (symfonic_log_limit_take (kind, t0 + 2, &suppressed, &since));
    }
  /* every room is taken by kinds within their interval */
  g_assert_true (symfonic_log_limit_take ("kind 4999", t0 + 3, &suppressed, &since));
  g_assert_true (symfonic_log_limit_take ("kind 4999", t0 + 4, &suppressed, &since));

  /* later the quiet ones make room */
  g_assert_true (symfonic_log_limit_take ("another", t0 + 2 * SYMFONIC_LOG_INTERVAL_US, &suppressed, &since));
  g_assert_false (symfonic_log_limit_take ("another", t0 + 2 * SYMFONIC_LOG_INTERVAL_US + 1, &suppressed, &since));
  g_assert_true (symfonic_log_limit_take ("held", t0 + 2 * SYMFONIC_LOG_INTERVAL_US, &suppressed, &since));
  g_assert_cmpuint (suppressed, ==, 1);
}

/* A line carries the request's fields and GLib's, and leaves out what it
 * does not know. */
static void
test_request_fields (void)
{
  SymfonicLogRequest request = SYMFONIC_LOG_REQUEST_INIT;

  symfonic_log_limit_forget ();
  request.route = "typed";
  request.tenant = "acme";
  request.run_id = "run-1";
  request.stage = "source";
  request.outcome = "failed";
  request.status = 502;
  request.duration_ms = 42;
  n_lines = 0;
  symfonic_log_request (G_LOG_LEVEL_MESSAGE, &request, "upstream x: 3", "Run %s failed: %s", "run-1", "boom");

  g_assert_cmpuint (n_lines, ==, 1);
  g_assert_cmpint (last_level & G_LOG_LEVEL_MASK, ==, G_LOG_LEVEL_MESSAGE);
  g_assert_cmpstr (field ("MESSAGE"), ==, "Run run-1 failed: boom");
  g_assert_cmpstr (field ("PRIORITY"), ==, "5");
  g_assert_cmpstr (field ("GLIB_DOMAIN"), ==, G_LOG_DOMAIN);
  g_assert_nonnull (strstr (field ("CODE_FILE"), "test-log.c"));
  g_assert_nonnull (field ("CODE_LINE"));
  g_assert_cmpstr (field ("CODE_FUNC"), ==, "test_request_fields");
  g_assert_cmpstr (field ("SYMFONIC_ROUTE"), ==, "typed");
  g_assert_cmpstr (field ("SYMFONIC_TENANT"), ==, "acme");
  g_assert_cmpstr (field ("SYMFONIC_RUN_ID"), ==, "run-1");
  g_assert_cmpstr (field ("SYMFONIC_STAGE"), ==, "source");
  g_assert_cmpstr (field ("SYMFONIC_OUTCOME"), ==, "failed");
  g_assert_cmpstr (field ("SYMFONIC_STATUS"), ==, "502");
  g_assert_cmpstr (field ("SYMFONIC_DURATION_MS"), ==, "42");
  g_assert_cmpstr (field ("SYMFONIC_KIND"), ==, "upstream x: 3");
  g_assert_null (field ("SYMFONIC_TRACE_ID"));
  g_assert_null (field ("SYMFONIC_SUPPRESSED"));

  /* nothing known of a request: GLib's fields alone */
  symfonic_log_request (G_LOG_LEVEL_WARNING, NULL, NULL, "plain");
  g_assert_cmpuint (n_lines, ==, 2);
  g_assert_cmpstr (field ("MESSAGE"), ==, "plain");
  g_assert_cmpstr (field ("PRIORITY"), ==, "4");
  g_assert_null (field ("SYMFONIC_ROUTE"));
  g_assert_null (field ("SYMFONIC_STATUS"));
  g_assert_null (field ("SYMFONIC_DURATION_MS"));
  g_assert_null (field ("SYMFONIC_KIND"));
}

/* The lines of a kind within its interval go to debug level, and are not
 * even made while debug lines are off; the next line at its own level
 * says how many there were. */
static void
test_request_limited (void)
{
  gint64 now = g_get_monotonic_time ();
  guint64 suppressed;
  gint64 since;

  symfonic_log_limit_forget ();
  /* the kind's last line was logged 11 s ago, and 3 were held since */
  g_assert_true (symfonic_log_limit_take ("budget: settle", now - 11 * SEC, &suppressed, &since));
  for (guint i = 0; i < 3; i++)
    g_assert_false (symfonic_log_limit_take ("budget: settle", now - 11 * SEC + 1, &suppressed, &since));

  n_lines = 0;
  symfonic_log_request (G_LOG_LEVEL_WARNING, NULL, "budget: settle", "Could not settle");
  g_assert_cmpuint (n_lines, ==, 1);
  g_assert_cmpint (last_level & G_LOG_LEVEL_MASK, ==, G_LOG_LEVEL_WARNING);
  g_assert_cmpstr (field ("MESSAGE"), ==, "Could not settle (and 3 more like it in the last 11 s)");
  g_assert_cmpstr (field ("SYMFONIC_SUPPRESSED"), ==, "3");

  /* held: debug lines are off for this domain */
  g_log_set_debug_enabled (FALSE);
  symfonic_log_request (G_LOG_LEVEL_WARNING, NULL, "budget: settle", "Could not settle");
  g_assert_cmpuint (n_lines, ==, 1);

  /* a debugging session sees each one */
  g_log_set_debug_enabled (TRUE);
  symfonic_log_request (G_LOG_LEVEL_WARNING, NULL, "budget: settle", "Could not settle %d", 2);
  g_log_set_debug_enabled (FALSE);
  g_assert_cmpuint (n_lines, ==, 2);
  g_assert_cmpint (last_level & G_LOG_LEVEL_MASK, ==, G_LOG_LEVEL_DEBUG);
  g_assert_cmpstr (field ("MESSAGE"), ==, "Could not settle 2");
  g_assert_cmpstr (field ("PRIORITY"), ==, "7");
  g_assert_cmpstr (field ("SYMFONIC_KIND"), ==, "budget: settle");
}

/* What a kind held back when the lines stop is logged, once. */
static void
test_limit_flush (void)
{
  gint64 now = g_get_monotonic_time ();
  guint64 suppressed;
  gint64 since;

  symfonic_log_limit_forget ();
  g_assert_true (symfonic_log_limit_take ("quiet", now, &suppressed, &since));
  g_assert_true (symfonic_log_limit_take ("busy", now, &suppressed, &since));
  for (guint i = 0; i < 7; i++)
    g_assert_false (symfonic_log_limit_take ("busy", now, &suppressed, &since));

  n_lines = 0;
  symfonic_log_limit_flush ();
  g_assert_cmpuint (n_lines, ==, 1);
  g_assert_cmpint (last_level & G_LOG_LEVEL_MASK, ==, G_LOG_LEVEL_MESSAGE);
  g_assert_cmpstr (field ("SYMFONIC_KIND"), ==, "busy");
  g_assert_cmpstr (field ("SYMFONIC_SUPPRESSED"), ==, "7");
  g_assert_cmpstr (field ("MESSAGE"), ==, "busy: 7 more like it were not logged in the last 0 s");

  /* counted once */
  symfonic_log_limit_flush ();
  g_assert_cmpuint (n_lines, ==, 1);
  g_assert_false (symfonic_log_limit_take ("busy", now + 1, &suppressed, &since));
  g_assert_true (symfonic_log_limit_take ("busy", now + SYMFONIC_LOG_INTERVAL_US, &suppressed, &since));
  g_assert_cmpuint (suppressed, ==, 1);
}

/* A kind names an error by its code, never by its message. */
static void
test_error_kind (void)
{
  g_autoptr(GError) ours = g_error_new_literal (SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM_UNAVAILABLE, "secret");
  g_autoptr(GError) theirs = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_TIMED_OUT, "secret");
  g_autofree char *ours_kind = symfonic_log_error_kind (ours);
  g_autofree char *theirs_kind = symfonic_log_error_kind (theirs);
  g_autofree char *expected = g_strdup_printf ("g-io-error-quark %d", G_IO_ERROR_TIMED_OUT);

  g_assert_cmpstr (ours_kind, ==, "upstream-unavailable");
  g_assert_cmpstr (theirs_kind, ==, expected);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_log_set_writer_func (keep_line, NULL, NULL);

  g_test_add_func ("/log/limit/interval", test_limit_interval);
  g_test_add_func ("/log/limit/kinds", test_limit_kinds);
  g_test_add_func ("/log/limit/bounded", test_limit_bounded);
  g_test_add_func ("/log/request/fields", test_request_fields);
  g_test_add_func ("/log/request/limited", test_request_limited);
  g_test_add_func ("/log/limit/flush", test_limit_flush);
  g_test_add_func ("/log/error-kind", test_error_kind);

  return g_test_run ();
}
