/* test-head-admission.c: a head-phase stage that takes its time
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A stage that admits on the request head may need I/O (a remote token
 * check): while it decides, libsoup must read nothing of the body, and the
 * request goes on, or is refused, when it answers. The gate below answers
 * after 200 ms: it opens for `X-Gate: open`, and refuses anything else.
 */
#include <string.h>

#include "symfonic-test-support.h"

#define GATE_DELAY_MS 200

#define TEST_TYPE_GATE_STAGE (test_gate_stage_get_type ())
G_DECLARE_FINAL_TYPE (TestGateStage, test_gate_stage, TEST, GATE_STAGE, GObject)

struct _TestGateStage
{
  GObject parent_instance;
};

static SymfonicAdmissionPhase
test_gate_stage_get_admission_phase (SymfonicStage *stage)
{
  return SYMFONIC_ADMISSION_PHASE_HEAD;
}

static gboolean
gate_decides (gpointer data)
{
  GTask *task = data;
  SymfonicStream *stream = g_task_get_task_data (task);
  SymfonicInvocation *invocation = symfonic_stream_get_invocation (stream);

  /* on the head: the body is not decoded yet */
  g_assert_null (symfonic_invocation_get_query (invocation));
  if (g_strcmp0 (symfonic_invocation_get_header (invocation, "X-Gate"), "open") == 0)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_new_error (task, SYMFONIC_ERROR, SYMFONIC_ERROR_UNAUTHORIZED, "The gate is closed");

  return G_SOURCE_REMOVE;
}

static void
test_gate_stage_admit_async (SymfonicStage       *stage,
                             SymfonicStream      *stream,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  GTask *task = g_task_new (stage, cancellable, callback, user_data);
  g_autoptr(GSource) source = g_timeout_source_new (GATE_DELAY_MS);

  g_task_set_task_data (task, g_object_ref (stream), g_object_unref);
  g_source_set_callback (source, gate_decides, task, g_object_unref);
  g_source_attach (source, g_main_context_get_thread_default ());
}

static gboolean
test_gate_stage_admit_finish (SymfonicStage  *stage,
                              GAsyncResult   *result,
                              GError        **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
test_gate_stage_stage_init (SymfonicStageInterface *iface)
{
  iface->get_admission_phase = test_gate_stage_get_admission_phase;
  iface->admit_async = test_gate_stage_admit_async;
  iface->admit_finish = test_gate_stage_admit_finish;
}

G_DEFINE_FINAL_TYPE_WITH_CODE (TestGateStage, test_gate_stage, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_STAGE, test_gate_stage_stage_init))

static void
test_gate_stage_class_init (TestGateStageClass *klass)
{
}

static void
test_gate_stage_init (TestGateStage *self)
{
}

static SymfonicServer *server;
static SoupSession *session;
static char *url;

static void
test_gate_open (void)
{
  g_autoptr(SymfonicTestResponse) admitted =
    symfonic_test_request (session, "POST", url, "application/json", "{\"query\":\"let me in\"}",
                           "X-Gate", "open", NULL);
  g_autoptr(SymfonicTestResponse) malformed =
    symfonic_test_request (session, "POST", url, "application/json", "{\"query\":",
                           "X-Gate", "open", NULL);

  g_assert_cmpuint (admitted->status, ==, 200);
  g_assert_nonnull (strstr (symfonic_test_response_get_text (admitted), "event: ResponseCompleteEvent"));
  /* past the gate, the body is what is wrong */
  g_assert_cmpuint (malformed->status, ==, 400);
}

static void
test_gate_closed (void)
{
  g_autoptr(SymfonicTestResponse) refused =
    symfonic_test_request (session, "POST", url, "application/json", "{\"query\":", NULL);
  g_autoptr(SymfonicTestResponse) after = NULL;

  g_assert_cmpuint (refused->status, ==, 401);
  g_assert_cmpstr (symfonic_test_response_get_text (refused), ==,
                   "{\"detail\":\"The gate is closed\",\"status\":401,\"code\":\"unauthorized\"}");
  /* a body was announced and not read: the connection does not stay */
  g_assert_cmpstr (soup_message_headers_get_one (refused->headers, "Connection"), ==, "close");

  after = symfonic_test_request (session, "POST", url, "application/json", "{\"query\":\"again\"}",
                                 "X-Gate", "open", NULL);
  g_assert_cmpuint (after->status, ==, 200);
}

/* A client that hangs up while the gate decides costs nothing but the
 * wait: the server serves on. */
static void
test_gate_client_gone (void)
{
  for (guint i = 0; i < 5; i++)
    {
      g_autoptr(GSocketClient) client = g_socket_client_new ();
      g_autoptr(GSocketConnection) connection = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *head = g_strdup_printf ("POST " SYMFONIC_TEST_TYPED_PATH " HTTP/1.1\r\n"
                                               "Host: 127.0.0.1\r\n"
                                               "Content-Type: application/json\r\n"
                                               "X-Gate: %s\r\n"
                                               "Content-Length: 20\r\n"
                                               "\r\n",
                                               i % 2 == 0 ? "open" : "shut");

      connection = g_socket_client_connect_to_host (client, "127.0.0.1", symfonic_server_get_port (server),
                                                    NULL, &error);
      g_assert_no_error (error);
      g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (connection)),
                                 head, strlen (head), NULL, NULL, &error);
      g_assert_no_error (error);
      g_io_stream_close (G_IO_STREAM (connection), NULL, NULL);
    }

  test_gate_open ();
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

  g_assert_true (symfonic_register_stage_type (TEST_TYPE_GATE_STAGE, "test-gate", &error));
  g_assert_no_error (error);

  base_dir = g_test_build_filename (G_TEST_DIST, "integration", NULL);
  base = symfonic_test_replay_pipeline ("transcripts", "typed", 0);
  text = g_string_new (base);
  g_assert_cmpuint (g_string_replace (text, "source=fixtures\n", "source=fixtures\nstages=gate\n", 1), ==, 1);
  g_string_append (text, "[stage:gate]\ntype=test-gate\n");
  server = symfonic_test_server_new (text->str, base_dir, 1);
  url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);
  session = symfonic_test_session_new ();

  g_test_add_func ("/head-admission/gate-open", test_gate_open);
  g_test_add_func ("/head-admission/gate-closed", test_gate_closed);
  g_test_add_func ("/head-admission/client-gone", test_gate_client_gone);

  ret = g_test_run ();

  g_clear_object (&session);
  symfonic_server_stop (server);
  g_clear_object (&server);
  g_free (url);

  return ret;
}
