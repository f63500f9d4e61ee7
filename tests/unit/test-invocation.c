/* test-invocation.c: decoding an AgentRequest body
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <symfonic.h>

typedef struct
{
  const char *name;
  const char *body;
  /* the member the message must name, if any */
  const char *member;
} InvalidBody;

static const InvalidBody invalid_bodies[] = {
  { "array", "[{\"query\":\"hi\"}]", NULL },
  { "string", "\"hi\"", NULL },
  { "number", "42", NULL },
  { "null", "null", NULL },
  { "missing-query", "{\"session_id\":\"s\"}", "query" },
  { "query-number", "{\"query\":5}", "query" },
  { "query-null", "{\"query\":null}", "query" },
  { "query-list", "{\"query\":[\"hi\"]}", "query" },
  { "query-object", "{\"query\":{\"text\":\"hi\"}}", "query" },
  { "query-empty", "{\"query\":\"\"}", "query" },
  { "session-number", "{\"query\":\"hi\",\"session_id\":42}", "session_id" },
  { "session-object", "{\"query\":\"hi\",\"session_id\":{}}", "session_id" },
  { "session-bool", "{\"query\":\"hi\",\"session_id\":true}", "session_id" },
  { "attachments-string", "{\"query\":\"hi\",\"attachments\":\"file.txt\"}", "attachments" },
  { "attachments-object", "{\"query\":\"hi\",\"attachments\":{}}", "attachments" },
  { "attachments-number", "{\"query\":\"hi\",\"attachments\":3}", "attachments" },
};

static void
test_invocation_invalid (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (invalid_bodies); i++)
    {
      const InvalidBody *c = &invalid_bodies[i];
      g_autoptr(GError) error = NULL;
      g_autoptr(JsonNode) body = json_from_string (c->body, &error);
      g_autoptr(SymfonicInvocation) invocation = NULL;

      g_test_message ("case %s", c->name);
      g_assert_no_error (error);
      g_assert_nonnull (body);
      invocation = symfonic_invocation_new_from_json (body, &error);
      g_assert_null (invocation);
      g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST);
      if (c->member != NULL)
        g_assert_nonnull (strstr (error->message, c->member));
    }
}

/* A random UUID: version 4, RFC 4122 variant, lower-case hex. */
static void
assert_random_uuid (const char *id)
{
  g_assert_true (g_uuid_string_is_valid (id));
  g_assert_cmpuint (strlen (id), ==, 36);
  g_assert_cmpint (id[14], ==, '4');
  g_assert_nonnull (strchr ("89ab", id[19]));
  g_assert_cmpuint (strspn (id, "0123456789abcdef-"), ==, 36);
}

static void
test_invocation_valid (void)
{
  g_autoptr(JsonNode) body = json_from_string ("{"
                                               "\"query\":\"What colour is the sky?\","
                                               "\"session_id\":\"a:b:c 日本\","
                                               "\"attachments\":[{\"name\":\"a.txt\"}],"
                                               "\"tenant_id\":\"evil-corp\","
                                               "\"unknown\":{\"x\":1}"
                                               "}", NULL);
  g_autoptr(SymfonicInvocation) invocation = NULL;
  g_autoptr(SymfonicInvocation) other = NULL;
  g_autoptr(JsonNode) upstream = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *data = NULL;
  gsize length;
  JsonArray *attachments;
  JsonObject *object;

  invocation = symfonic_invocation_new_from_json (body, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (symfonic_invocation_get_query (invocation), ==, "What colour is the sky?");
  g_assert_cmpstr (symfonic_invocation_get_session_id (invocation), ==, "a:b:c 日本");
  /* identity never comes from the body */
  g_assert_null (symfonic_invocation_get_tenant_id (invocation));
  g_assert_null (symfonic_invocation_get_principal_id (invocation));
  g_assert_false (symfonic_invocation_get_is_admin (invocation));

  /* the body may change or go away: the invocation keeps its own copy */
  json_array_add_string_element (json_object_get_array_member (json_node_get_object (body), "attachments"), "late");
  attachments = symfonic_invocation_get_attachments (invocation);
  g_assert_cmpuint (json_array_get_length (attachments), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (attachments, 0), "name"), ==, "a.txt");

  upstream = symfonic_invocation_to_json (invocation);
  object = json_node_get_object (upstream);
  g_assert_cmpstr (json_object_get_string_member (object, "query"), ==, "What colour is the sky?");
  g_assert_cmpstr (json_object_get_string_member (object, "session_id"), ==, "a:b:c 日本");
  g_assert_true (json_object_get_null_member (object, "tenant_id"));
  g_assert_false (json_object_has_member (object, "unknown"));

  /* the text a source sends: the same members, compact, in that order */
  data = symfonic_invocation_to_data (invocation, &length);
  g_assert_cmpstr (data, ==, "{\"query\":\"What colour is the sky?\",\"session_id\":\"a:b:c 日本\","
                             "\"attachments\":[{\"name\":\"a.txt\"}],\"tenant_id\":null,\"principal_id\":null}");
  g_assert_cmpuint (length, ==, strlen (data));

  g_assert_nonnull (symfonic_invocation_get_run_id (invocation));
  other = symfonic_invocation_new ("again");
  g_assert_cmpstr (symfonic_invocation_get_run_id (other), !=, symfonic_invocation_get_run_id (invocation));
  assert_random_uuid (symfonic_invocation_get_run_id (invocation));
  assert_random_uuid (symfonic_invocation_get_run_id (other));
}

/* Changing a value of the body in place after decoding must not change
 * the invocation's attachments. In a child so a failure here does not stop
 * the other tests. */
static void
test_invocation_attachments_copied (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr(JsonNode) body = json_from_string ("{\"query\":\"hi\",\"attachments\":[{\"name\":\"a.txt\"},\"b.txt\"]}", NULL);
      g_autoptr(SymfonicInvocation) invocation = NULL;
      g_autoptr(GError) error = NULL;
      JsonArray *sent;
      JsonArray *kept;

      invocation = symfonic_invocation_new_from_json (body, &error);
      g_assert_no_error (error);

      sent = json_object_get_array_member (json_node_get_object (body), "attachments");
      json_node_set_string (json_object_get_member (json_array_get_object_element (sent, 0), "name"), "changed");
      json_node_set_string (json_array_get_element (sent, 1), "changed");

      kept = symfonic_invocation_get_attachments (invocation);
      g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (kept, 0), "name"), ==, "a.txt");
      g_assert_cmpstr (json_array_get_string_element (kept, 1), ==, "b.txt");
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  if (!g_test_trap_has_passed ())
    g_test_fail_printf ("the invocation's attachments share scalar values with the request body");
}

typedef struct
{
  const char *body;
  const char *session_id;
  gboolean    has_attachments;
} OptionalCase;

static void
test_invocation_optional (void)
{
  static const OptionalCase cases[] = {
    { "{\"query\":\"hi\"}", NULL, FALSE },
    { "{\"query\":\"hi\",\"session_id\":null,\"attachments\":null}", NULL, FALSE },
    { "{\"query\":\"hi\",\"session_id\":\"\",\"attachments\":[]}", "", TRUE },
    { "{\"query\":\"hi\",\"session_id\":\" padded \"}", " padded ", FALSE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(JsonNode) body = json_from_string (cases[i].body, NULL);
      g_autoptr(SymfonicInvocation) invocation = NULL;
      g_autoptr(GError) error = NULL;

      g_test_message ("body %s", cases[i].body);
      invocation = symfonic_invocation_new_from_json (body, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (symfonic_invocation_get_query (invocation), ==, "hi");
      g_assert_cmpstr (symfonic_invocation_get_session_id (invocation), ==, cases[i].session_id);
      g_assert_cmpint (symfonic_invocation_get_attachments (invocation) != NULL, ==, cases[i].has_attachments);
    }
}

static void
test_invocation_scope (void)
{
  g_autoptr(SymfonicInvocation) invocation = symfonic_invocation_new ("hi");

  symfonic_invocation_set_scope (invocation, "acme", "alice", TRUE);
  g_assert_cmpstr (symfonic_invocation_get_tenant_id (invocation), ==, "acme");
  g_assert_cmpstr (symfonic_invocation_get_principal_id (invocation), ==, "alice");
  g_assert_true (symfonic_invocation_get_is_admin (invocation));

  /* a nameless principal is its tenant */
  symfonic_invocation_set_scope (invocation, "demo", NULL, FALSE);
  g_assert_cmpstr (symfonic_invocation_get_principal_id (invocation), ==, "demo");
  g_assert_false (symfonic_invocation_get_is_admin (invocation));

  symfonic_invocation_set_header (invocation, "X-Tenant-ID", "acme");
  symfonic_invocation_set_header (invocation, "accept", "a");
  symfonic_invocation_set_header (invocation, "Accept", "b");
  g_assert_cmpstr (symfonic_invocation_get_header (invocation, "x-tenant-id"), ==, "acme");
  g_assert_cmpstr (symfonic_invocation_get_header (invocation, "ACCEPT"), ==, "a, b");
  g_assert_null (symfonic_invocation_get_header (invocation, "authorization"));
}

/* The server's order: identity from the head first, the body after; the
 * body never changes the identity, and a bad body changes nothing. */
static void
test_invocation_body_after_scope (void)
{
  g_autoptr(SymfonicInvocation) invocation = g_object_new (SYMFONIC_TYPE_INVOCATION, NULL);
  g_autoptr(JsonNode) bad = json_from_string ("{\"query\":\"\",\"session_id\":\"s1\"}", NULL);
  g_autoptr(JsonNode) good = json_from_string ("{\"query\":\"hi\",\"session_id\":\"s2\","
                                               "\"tenant_id\":\"evil\",\"attachments\":[1]}", NULL);
  g_autoptr(GError) error = NULL;

  g_assert_null (symfonic_invocation_get_query (invocation));
  symfonic_invocation_set_scope (invocation, "acme", "alice", FALSE);

  g_assert_false (symfonic_invocation_set_body (invocation, bad, &error));
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST);
  g_assert_null (symfonic_invocation_get_query (invocation));
  g_assert_null (symfonic_invocation_get_session_id (invocation));

  g_assert_true (symfonic_invocation_set_body (invocation, good, NULL));
  g_assert_cmpstr (symfonic_invocation_get_query (invocation), ==, "hi");
  g_assert_cmpstr (symfonic_invocation_get_session_id (invocation), ==, "s2");
  g_assert_cmpuint (json_array_get_length (symfonic_invocation_get_attachments (invocation)), ==, 1);
  g_assert_cmpstr (symfonic_invocation_get_tenant_id (invocation), ==, "acme");
  g_assert_cmpstr (symfonic_invocation_get_principal_id (invocation), ==, "alice");
}

/* An AgentRequest reads as one user message; a provider request keeps its
 * conversation and its last user text becomes the query. */
static void
test_invocation_conversation (void)
{
  g_autoptr(SymfonicInvocation) agent = symfonic_invocation_new ("why blue?");
  g_autoptr(SymfonicInvocation) provider = g_object_new (SYMFONIC_TYPE_INVOCATION, NULL);
  g_autoptr(JsonNode) messages = json_from_string ("[{\"role\":\"user\",\"content\":\"first\"},"
                                                   "{\"role\":\"assistant\",\"content\":\"ok\"},"
                                                   "{\"role\":\"user\",\"content\":"
                                                   "[{\"type\":\"text\",\"text\":\"se\"},"
                                                   "{\"type\":\"image_url\"},"
                                                   "{\"type\":\"text\",\"text\":\"cond\"}]},"
                                                   "{\"role\":\"tool\",\"content\":\"42\"}]", NULL);
  g_autoptr(JsonNode) tools = json_from_string ("[{\"type\":\"function\"}]", NULL);
  g_autoptr(JsonNode) parameters = json_from_string ("{\"max_tokens\":5}", NULL);
  g_autoptr(JsonNode) built = NULL;
  g_autofree char *text = NULL;
  JsonArray *got;

  got = symfonic_invocation_get_messages (agent);
  g_assert_nonnull (got);
  g_assert_true (got == symfonic_invocation_get_messages (agent));
  built = json_node_new (JSON_NODE_ARRAY);
  json_node_set_array (built, got);
  text = json_to_string (built, FALSE);
  g_assert_cmpstr (text, ==, "[{\"role\":\"user\",\"content\":\"why blue?\"}]");
  g_assert_null (symfonic_invocation_get_system (agent));
  g_assert_null (symfonic_invocation_get_tools (agent));
  g_assert_null (symfonic_invocation_get_parameters (agent));

  g_assert_null (symfonic_invocation_get_messages (provider));
  symfonic_invocation_set_conversation (provider, json_node_get_array (messages), "be brief",
                                        json_node_get_array (tools), json_node_get_object (parameters));
  g_assert_cmpstr (symfonic_invocation_get_query (provider), ==, "second");
  g_assert_true (symfonic_invocation_get_messages (provider) == json_node_get_array (messages));
  g_assert_cmpstr (symfonic_invocation_get_system (provider), ==, "be brief");
  g_assert_cmpuint (json_array_get_length (symfonic_invocation_get_tools (provider)), ==, 1);
  g_assert_cmpint (json_object_get_int_member (symfonic_invocation_get_parameters (provider), "max_tokens"), ==, 5);
}

/* Nulls, and text that must be escaped, in the text a source sends. */
static void
test_invocation_data_escaped (void)
{
  g_autoptr(SymfonicInvocation) invocation = symfonic_invocation_new ("say \"hi\"\n\t\\ \x01 é");
  g_autofree char *bare = NULL;
  g_autofree char *scoped = NULL;

  bare = symfonic_invocation_to_data (invocation, NULL);
  g_assert_cmpstr (bare, ==, "{\"query\":\"say \\\"hi\\\"\\n\\t\\\\ \\u0001 é\",\"session_id\":null,"
                             "\"attachments\":null,\"tenant_id\":null,\"principal_id\":null}");

  symfonic_invocation_set_scope (invocation, "acme", "alice", FALSE);
  symfonic_invocation_set_session_id (invocation, "s1");
  scoped = symfonic_invocation_to_data (invocation, NULL);
  g_assert_cmpstr (scoped, ==, "{\"query\":\"say \\\"hi\\\"\\n\\t\\\\ \\u0001 é\",\"session_id\":\"s1\","
                               "\"attachments\":null,\"tenant_id\":\"acme\",\"principal_id\":\"alice\"}");
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/invocation/invalid", test_invocation_invalid);
  g_test_add_func ("/invocation/valid", test_invocation_valid);
  g_test_add_func ("/invocation/data-escaped", test_invocation_data_escaped);
  g_test_add_func ("/invocation/conversation", test_invocation_conversation);
  g_test_add_func ("/invocation/attachments-copied", test_invocation_attachments_copied);
  g_test_add_func ("/invocation/optional", test_invocation_optional);
  g_test_add_func ("/invocation/scope", test_invocation_scope);
  g_test_add_func ("/invocation/body-after-scope", test_invocation_body_after_scope);

  return g_test_run ();
}
