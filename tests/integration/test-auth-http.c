/* test-auth-http.c: the auth stage's refusals and admissions over HTTP
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An in-process server whose typed route runs the auth stage with the
 * repository's demo tokens file over the replay source. Every refusal must
 * arrive before the SSE handshake, as JSON with the frozen shape.
 */
#include <string.h>

#include "symfonic-test-support.h"

#define QUERY "{\"query\":\"Why is the sky blue?\"}"
#define FORBIDDEN_DETAIL "The principal may not act for this tenant"

static const char pipeline_format[] =
  "[route:typed]\n"
  "path=" SYMFONIC_TEST_TYPED_PATH "\n"
  "kind=typed\n"
  "source=demo\n"
  "stages=auth\n"
  "\n"
  "[source:demo]\n"
  "type=replay\n"
  "transcripts=transcripts\n"
  "default-transcript=plain\n"
  "time-scale=0\n"
  "\n"
  "[stage:auth]\n"
  "type=auth\n"
  "tokens-file=demo-tokens.ini\n";

static SymfonicServer *server;
static SoupSession *session;
static char *url;

static const char *
data_dir (void)
{
  const char *dir = g_getenv ("SYMFONIC_TEST_DATA_DIR");

  return dir != NULL ? dir : SYMFONIC_TEST_DATA_DIR;
}

static SymfonicTestResponse *
post (const char *body,
      const char *authorization,
      const char *tenant)
{
  /* NULL ends the header list early, so a missing header is left out */
  if (authorization == NULL && tenant == NULL)
    return symfonic_test_request (session, "POST", url, "application/json", body, NULL);
  if (authorization == NULL)
    return symfonic_test_request (session, "POST", url, "application/json", body, "X-Tenant-ID", tenant, NULL);
  if (tenant == NULL)
    return symfonic_test_request (session, "POST", url, "application/json", body,
                                  "Authorization", authorization, NULL);
  return symfonic_test_request (session, "POST", url, "application/json", body,
                                "Authorization", authorization, "X-Tenant-ID", tenant, NULL);
}

/* The frozen refusal: JSON {"detail", "status", "code"}, never SSE. */
static JsonObject *
assert_refusal (SymfonicTestResponse *response,
                guint                 status,
                const char           *code)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) body = NULL;
  JsonObject *object;

  g_assert_cmpuint (response->status, ==, status);
  g_assert_cmpstr (soup_message_headers_get_content_type (response->headers, NULL), ==, "application/json");
  symfonic_test_json_is_strict (symfonic_test_response_get_text (response), -1, &error);
  g_assert_no_error (error);
  body = symfonic_test_response_dup_json (response);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (body));
  object = json_node_get_object (body);
  g_assert_cmpint (json_object_get_int_member_with_default (object, "status", -1), ==, status);
  g_assert_nonnull (json_object_get_string_member_with_default (object, "detail", NULL));
  g_assert_cmpstr (json_object_get_string_member_with_default (object, "code", NULL), ==, code);
  g_assert_null (strstr (symfonic_test_response_get_text (response), "event:"));

  return json_object_ref (object);
}

static void
assert_unauthorized (SymfonicTestResponse *response)
{
  json_object_unref (assert_refusal (response, 401, "unauthorized"));

  g_assert_cmpstr (soup_message_headers_get_one (response->headers, "WWW-Authenticate"), ==, "Bearer");
}

static void
assert_streamed (SymfonicTestResponse *response)
{
  const char *text = symfonic_test_response_get_text (response);

  g_assert_cmpuint (response->status, ==, 200);
  g_assert_cmpstr (soup_message_headers_get_content_type (response->headers, NULL), ==, "text/event-stream");
  g_assert_nonnull (strstr (text, "event: ResponseCompleteEvent\n"));
  g_assert_null (strstr (text, "event: error\n"));
}

static void
test_auth_http_missing_authorization (void)
{
  g_autoptr(SymfonicTestResponse) response = post (QUERY, NULL, "acme");

  assert_unauthorized (response);
}

static void
test_auth_http_bad_tokens (void)
{
  static const char * const values[] = {
    "Basic YWxpY2U6ZGVtbw==",
    "Bearer",
    "Bearer demo-token-mallory",
    "Bearer demo-token-alic",
    "Bearer 1159bf80f41ccf3d5efafda50135b734fe094f032809efd1a5d85455c5359b40",
    "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.",
  };

  for (guint i = 0; i < G_N_ELEMENTS (values); i++)
    {
      g_autoptr(SymfonicTestResponse) response = post (QUERY, values[i], "acme");

      g_test_message ("Authorization: %s", values[i]);
      assert_unauthorized (response);
      /* the detail never echoes what was presented */
      if (strlen (values[i]) > strlen ("Bearer "))
        g_assert_null (strstr (symfonic_test_response_get_text (response), values[i] + strlen ("Bearer ")));
    }
}

static void
test_auth_http_missing_tenant (void)
{
  g_autoptr(SymfonicTestResponse) response = post (QUERY, "Bearer demo-token-alice", NULL);

  assert_unauthorized (response);
}

static void
test_auth_http_forged_tenant (void)
{
  static const char * const tenants[] = { "globex", "no-such-tenant" };

  for (guint i = 0; i < G_N_ELEMENTS (tenants); i++)
    {
      g_autoptr(SymfonicTestResponse) response = post (QUERY, "Bearer demo-token-alice", tenants[i]);
      g_autoptr(JsonObject) object = assert_refusal (response, 403, "forbidden");

      /* one fixed detail, whether the tenant exists or not */
      g_assert_cmpstr (json_object_get_string_member (object, "detail"), ==, FORBIDDEN_DETAIL);
      g_assert_null (soup_message_headers_get_one (response->headers, "WWW-Authenticate"));
    }
}

static void
test_auth_http_body_tenant_ignored (void)
{
  /* bob names alice's tenant in the body: the header decides */
  g_autoptr(SymfonicTestResponse) forged =
    post ("{\"query\":\"hi\",\"tenant_id\":\"acme\"}", "Bearer demo-token-bob", "acme");
  g_autoptr(SymfonicTestResponse) own =
    post ("{\"query\":\"hi\",\"tenant_id\":\"acme\"}", "Bearer demo-token-bob", "globex");
  json_object_unref (assert_refusal (forged, 403, "forbidden"));

  assert_streamed (own);
}

static void
test_auth_http_valid (void)
{
  g_autoptr(SymfonicTestResponse) alice = post (QUERY, "Bearer demo-token-alice", "acme");
  g_autoptr(SymfonicTestResponse) admin = post (QUERY, "Bearer demo-token-admin", "globex");

  assert_streamed (alice);
  assert_streamed (admin);
}

int
main (int   argc,
      char *argv[])
{
  int ret;

  symfonic_test_init (&argc, &argv);

  /* relative paths resolve against the repository's data folder, where
   * the demo tokens file ships */
  server = symfonic_test_server_new (pipeline_format, data_dir (), 1);
  session = symfonic_test_session_new ();
  url = g_strdup_printf ("http://127.0.0.1:%u" SYMFONIC_TEST_TYPED_PATH, symfonic_server_get_port (server));

  g_test_add_func ("/auth-http/missing-authorization", test_auth_http_missing_authorization);
  g_test_add_func ("/auth-http/bad-tokens", test_auth_http_bad_tokens);
  g_test_add_func ("/auth-http/missing-tenant", test_auth_http_missing_tenant);
  g_test_add_func ("/auth-http/forged-tenant", test_auth_http_forged_tenant);
  g_test_add_func ("/auth-http/body-tenant-ignored", test_auth_http_body_tenant_ignored);
  g_test_add_func ("/auth-http/valid", test_auth_http_valid);

  ret = g_test_run ();

  g_clear_object (&session);
  symfonic_server_stop (server);
  g_clear_object (&server);
  g_free (url);

  return ret;
}
