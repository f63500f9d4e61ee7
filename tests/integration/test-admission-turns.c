/* test-admission-turns.c: admission costs main-loop turns only where it waits
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every turn of a worker's main loop between the request and its upstream
 * is time to first delta. A stage whose admission is asynchronous costs the
 * turn its answer takes; a stage that decides at once must cost none, even
 * behind an asynchronous one, and so must the metering stages on their
 * store in the process. The ledger stage below decides at once and notes
 * on which turn of its worker's loop it did.
 *
 * An admitted stream asks its upstream before its event stream's head is
 * written; a stream that a begin hook fails still answers with that head
 * and its one error frame.
 */
#include <string.h>

#include "symfonic-test-support.h"

/* turns of the worker's loop, counted by a source that prepares on each */
static guint turns;
static gboolean counting;
static GMutex lock;
/* the turn on which each ledger stage admitted a request, in order */
static GArray *admitted_on;

static gboolean
count_turn (GSource *source,
            int     *timeout)
{
  turns++;
  *timeout = -1;
  return FALSE;
}

static GSourceFuncs turn_counter_funcs = {
  .prepare = count_turn,
};

/* From the first admission on, the worker's turns are counted. */
static void
count_turns (void)
{
  g_autoptr(GSource) counter = NULL;

  if (counting)
    return;
  counting = TRUE;
  counter = g_source_new (&turn_counter_funcs, sizeof (GSource));
  g_source_attach (counter, g_main_context_get_thread_default ());
}

#define TEST_TYPE_ASYNC_STAGE (test_async_stage_get_type ())
G_DECLARE_FINAL_TYPE (TestAsyncStage, test_async_stage, TEST, ASYNC_STAGE, GObject)

struct _TestAsyncStage
{
  GObject parent_instance;
};

/* Asynchronous, and answers at once: its GTask completes on the next turn. */
static void
test_async_stage_admit_async (SymfonicStage       *stage,
                              SymfonicStream      *stream,
                              GCancellable        *cancellable,
                              GAsyncReadyCallback  callback,
                              gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (stage, cancellable, callback, user_data);

  count_turns ();
  g_task_return_boolean (task, TRUE);
}

static gboolean
test_async_stage_admit_finish (SymfonicStage  *stage,
                               GAsyncResult   *result,
                               GError        **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
test_async_stage_stage_init (SymfonicStageInterface *iface)
{
  iface->admit_async = test_async_stage_admit_async;
  iface->admit_finish = test_async_stage_admit_finish;
}

G_DEFINE_FINAL_TYPE_WITH_CODE (TestAsyncStage, test_async_stage, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_STAGE, test_async_stage_stage_init))

static void
test_async_stage_class_init (TestAsyncStageClass *klass)
{
}

static void
test_async_stage_init (TestAsyncStage *self)
{
}

#define TEST_TYPE_LEDGER_STAGE (test_ledger_stage_get_type ())
G_DECLARE_FINAL_TYPE (TestLedgerStage, test_ledger_stage, TEST, LEDGER_STAGE, GObject)

struct _TestLedgerStage
{
  GObject parent_instance;
};

static gboolean
test_ledger_stage_admit (SymfonicStage   *stage,
                         SymfonicStream  *stream,
                         GError         **error)
{
  count_turns ();
  g_mutex_lock (&lock);
  g_array_append_val (admitted_on, turns);
  g_mutex_unlock (&lock);

  return TRUE;
}

static void
test_ledger_stage_stage_init (SymfonicStageInterface *iface)
{
  iface->admit = test_ledger_stage_admit;
}

G_DEFINE_FINAL_TYPE_WITH_CODE (TestLedgerStage, test_ledger_stage, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_STAGE, test_ledger_stage_stage_init))

static void
test_ledger_stage_class_init (TestLedgerStageClass *klass)
{
}

static void
test_ledger_stage_init (TestLedgerStage *self)
{
}

#define TEST_TYPE_FAILING_STAGE (test_failing_stage_get_type ())
G_DECLARE_FINAL_TYPE (TestFailingStage, test_failing_stage, TEST, FAILING_STAGE, GObject)

struct _TestFailingStage
{
  GObject parent_instance;
};

static gboolean
test_failing_stage_begin (SymfonicStage   *stage,
                          SymfonicStream  *stream,
                          GError         **error)
{
  g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM, "The stage cannot begin");
  return FALSE;
}

static void
test_failing_stage_stage_init (SymfonicStageInterface *iface)
{
  iface->begin = test_failing_stage_begin;
}

G_DEFINE_FINAL_TYPE_WITH_CODE (TestFailingStage, test_failing_stage, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_STAGE, test_failing_stage_stage_init))

static void
test_failing_stage_class_init (TestFailingStageClass *klass)
{
}

static void
test_failing_stage_init (TestFailingStage *self)
{
}

static SymfonicServer *server;
static SoupSession *session;

/* Streams one request to @path: every ledger stage on its route decided
 * on the same turn of the worker's loop. */
static void
assert_admitted_on_one_turn (const char *path,
                             guint       n_ledgers)
{
  g_autofree char *url = symfonic_test_server_dup_url (server, path);
  g_autoptr(SymfonicTestResponse) response = NULL;

  g_mutex_lock (&lock);
  g_array_set_size (admitted_on, 0);
  g_mutex_unlock (&lock);

  response = symfonic_test_request (session, "POST", url, "application/json", "{\"query\":\"hello\"}",
                                    "Authorization", "Bearer demo-token-alice", "X-Tenant-ID", "acme", NULL);
  g_assert_cmpuint (response->status, ==, 200);
  g_assert_nonnull (strstr (symfonic_test_response_get_text (response), "event: ResponseCompleteEvent"));

  g_mutex_lock (&lock);
  g_assert_cmpuint (admitted_on->len, ==, n_ledgers);
  for (guint i = 1; i < n_ledgers; i++)
    g_assert_cmpuint (g_array_index (admitted_on, guint, i), ==, g_array_index (admitted_on, guint, 0));
  g_mutex_unlock (&lock);
}

/* Three stages that decide at once, behind one that answers on the next
 * turn: the three decide on that same turn, one after the other. */
static void
test_inline_behind_async (void)
{
  assert_admitted_on_one_turn (SYMFONIC_TEST_TYPED_PATH, 3);
}

/* The rate limit and the budget on the memory store decide at once: the
 * ledgers before and after them decide on the same turn. */
static void
test_metering_at_once (void)
{
  assert_admitted_on_one_turn ("/metered", 2);
}

/* A begin hook fails while the stream starts: the client still gets the
 * event stream, with its one error frame, not a JSON refusal. */
static void
test_begin_fails (void)
{
  g_autofree char *url = symfonic_test_server_dup_url (server, "/failing");
  g_autoptr(SymfonicTestResponse) response =
    symfonic_test_request (session, "POST", url, "application/json", "{\"query\":\"hello\"}", NULL);

  g_assert_cmpuint (response->status, ==, 200);
  g_assert_cmpstr (soup_message_headers_get_content_type (response->headers, NULL), ==, "text/event-stream");
  g_assert_cmpstr (symfonic_test_response_get_text (response), ==,
                   "id: 1\nevent: error\n"
                   "data: {\"detail\":\"Internal server error\",\"status\":502,\"code\":\"upstream_error\"}\n\n");
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *base_dir = NULL;
  g_autofree char *base = NULL;
  g_autoptr(GString) text = NULL;
  g_autoptr(GError) error = NULL;
  int ret;

  symfonic_test_init (&argc, &argv);

  g_assert_true (symfonic_register_stage_type (TEST_TYPE_ASYNC_STAGE, "test-async", &error));
  g_assert_no_error (error);
  g_assert_true (symfonic_register_stage_type (TEST_TYPE_LEDGER_STAGE, "test-ledger", &error));
  g_assert_no_error (error);
  g_assert_true (symfonic_register_stage_type (TEST_TYPE_FAILING_STAGE, "test-failing", &error));
  g_assert_no_error (error);
  admitted_on = g_array_new (FALSE, FALSE, sizeof (guint));

  base_dir = g_test_build_filename (G_TEST_DIST, "integration", NULL);
  base = symfonic_test_replay_pipeline ("transcripts", "typed", 0);
  text = g_string_new (base);
  g_assert_cmpuint (g_string_replace (text, "source=fixtures\n", "source=fixtures\nstages=async;a;b;c\n", 1), ==, 1);
  g_string_append (text,
                   "[stage:async]\ntype=test-async\n\n"
                   "[stage:a]\ntype=test-ledger\n\n"
                   "[stage:b]\ntype=test-ledger\n\n"
                   "[stage:c]\ntype=test-ledger\n\n"
                   "[route:metered]\npath=/metered\nkind=typed\nsource=fixtures\n"
                   "stages=auth;a;rate;budget;c\n\n"
                   "[stage:auth]\ntype=auth\ntokens-file=" SYMFONIC_TEST_DATA_DIR "/demo-tokens.ini\n\n"
                   "[stage:rate]\ntype=rate-limit\nrate=1000\nburst=1000\n\n"
                   "[stage:budget]\ntype=budget\ntokens-per-window=1000000\nwindow-seconds=60\n\n"
                   "[route:failing]\npath=/failing\nkind=typed\nsource=fixtures\nstages=failing\n\n"
                   "[stage:failing]\ntype=test-failing\n");
  server = symfonic_test_server_new (text->str, base_dir, 1);
  session = symfonic_test_session_new ();

  g_test_add_func ("/admission-turns/inline-behind-async", test_inline_behind_async);
  g_test_add_func ("/admission-turns/metering-at-once", test_metering_at_once);
  g_test_add_func ("/admission-turns/begin-fails", test_begin_fails);

  ret = g_test_run ();

  g_clear_object (&session);
  symfonic_server_stop (server);
  g_clear_object (&server);
  g_array_unref (admitted_on);

  return ret;
}
