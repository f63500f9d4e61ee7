/* symfonic-invocation.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "symfonic-error.h"
#include "symfonic-invocation.h"
#include "symfonic-invocation-private.h"
#include "symfonic-json-private.h"

/**
 * SymfonicInvocation:
 *
 * What a client asked for, and who asked.
 *
 * The body gives the query, `session_id` and attachments. Identity (tenant,
 * principal, admin) never comes from the body: it is set by the stage that
 * authenticated the request, with symfonic_invocation_set_scope(). An
 * invocation is built and admitted on one thread; from the moment its
 * stream starts it is only read.
 */
struct _SymfonicInvocation
{
  GObject     parent_instance;

  char       *query;
  char       *session_id;
  JsonArray  *attachments;
  char       *run_id;
  char       *tenant_id;
  char       *principal_id;
  gboolean    is_admin;
  /* header names folded to lower case */
  GHashTable *headers;
  /* the conversation of a provider-format request; for an AgentRequest,
   * messages is built from the query on first use, since only provider
   * sources need it and every held stream would pay for it otherwise */
  JsonArray  *messages;
  char       *system;
  JsonArray  *tools;
  JsonObject *parameters;
  /* a provider request as the route's source is to send it, in that
   * source's API: the client's own body, or its translation */
  SymfonicProviderApi provider_api;
  JsonObject *provider_body;
};

/**
 * SymfonicInvocationClass:
 * @parent_class: the parent class
 *
 * The class of #SymfonicInvocation, a final type: there is nothing to override.
 */
G_DEFINE_FINAL_TYPE (SymfonicInvocation, symfonic_invocation, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_QUERY,
  PROP_SESSION_ID,
  PROP_RUN_ID,
  PROP_TENANT_ID,
  PROP_PRINCIPAL_ID,
  PROP_IS_ADMIN,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static gboolean
replace_string (char       **slot,
                const char  *value)
{
  if (g_strcmp0 (*slot, value) == 0)
    return FALSE;

  g_free (*slot);
  *slot = g_strdup (value);
  return TRUE;
}

static void
symfonic_invocation_finalize (GObject *object)
{
  SymfonicInvocation *self = (SymfonicInvocation *) object;

  g_free (self->query);
  g_free (self->session_id);
  g_clear_pointer (&self->attachments, json_array_unref);
  g_free (self->run_id);
  g_free (self->tenant_id);
  g_free (self->principal_id);
  g_hash_table_unref (self->headers);
  g_clear_pointer (&self->messages, json_array_unref);
  g_free (self->system);
  g_clear_pointer (&self->tools, json_array_unref);
  g_clear_pointer (&self->parameters, json_object_unref);
  g_clear_pointer (&self->provider_body, json_object_unref);

  G_OBJECT_CLASS (symfonic_invocation_parent_class)->finalize (object);
}

static void
symfonic_invocation_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  SymfonicInvocation *self = SYMFONIC_INVOCATION (object);

  switch (prop_id)
    {
    case PROP_QUERY:
      g_value_set_string (value, self->query);
      break;
    case PROP_SESSION_ID:
      g_value_set_string (value, self->session_id);
      break;
    case PROP_RUN_ID:
      g_value_set_string (value, self->run_id);
      break;
    case PROP_TENANT_ID:
      g_value_set_string (value, self->tenant_id);
      break;
    case PROP_PRINCIPAL_ID:
      g_value_set_string (value, self->principal_id);
      break;
    case PROP_IS_ADMIN:
      g_value_set_boolean (value, self->is_admin);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_invocation_set_property (GObject      *object,
                                  guint         prop_id,
                                  const GValue *value,
                                  GParamSpec   *pspec)
{
  SymfonicInvocation *self = SYMFONIC_INVOCATION (object);

  switch (prop_id)
    {
    case PROP_QUERY:
      g_free (self->query);
      self->query = g_value_dup_string (value);
      break;
    case PROP_SESSION_ID:
      symfonic_invocation_set_session_id (self, g_value_get_string (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_invocation_class_init (SymfonicInvocationClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = symfonic_invocation_finalize;
  object_class->get_property = symfonic_invocation_get_property;
  object_class->set_property = symfonic_invocation_set_property;

  /**
   * SymfonicInvocation:query:
   *
   * The `query` of the request body: what the client asked.
   */
  properties[PROP_QUERY] =
    g_param_spec_string ("query", "Query", "What the client asked",
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicInvocation:session-id:
   *
   * The `session_id` of the request body, returned to the client exactly
   * as it sent it, colons and all.
   */
  properties[PROP_SESSION_ID] =
    g_param_spec_string ("session-id", "Session ID", "The client's session, verbatim",
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicInvocation:run-id:
   *
   * The identifier the gateway gave this run, unique per invocation and
   * hard to guess: it is what a client resumes the run by.
   */
  properties[PROP_RUN_ID] =
    g_param_spec_string ("run-id", "Run ID", "The identifier the gateway gave this run",
                         NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicInvocation:tenant-id:
   *
   * The tenant an authenticating stage admitted, from the `X-Tenant-ID`
   * header; a `tenant_id` in the body is ignored.
   */
  properties[PROP_TENANT_ID] =
    g_param_spec_string ("tenant-id", "Tenant ID", "The authenticated tenant",
                         NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicInvocation:principal-id:
   *
   * The principal an authenticating stage admitted.
   */
  properties[PROP_PRINCIPAL_ID] =
    g_param_spec_string ("principal-id", "Principal ID", "The authenticated principal",
                         NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicInvocation:is-admin:
   *
   * Whether the principal an authenticating stage admitted is an
   * administrator.
   */
  properties[PROP_IS_ADMIN] =
    g_param_spec_boolean ("is-admin", "Is admin", "Whether the authenticated principal is an administrator",
                          FALSE,
                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

/* Fills @buffer from the kernel's CSPRNG: a run id is what stands between
 * a run and a stranger guessing its URL. The pool is seeded once, early
 * in boot; until then GRND_NONBLOCK says EAGAIN, and waiting for it beats
 * an id someone can predict. */
static void
random_bytes (guint8 *buffer,
              gsize   length)
{
  unsigned int flags = GRND_NONBLOCK;
  gsize got = 0;

  while (got < length)
    {
      gssize n = getrandom (buffer + got, length - got, flags);

      if (n >= 0)
        got += n;
      else if (errno == EAGAIN)
        flags = 0;
      else if (errno != EINTR)
        g_error ("Cannot read random bytes for a run id: %s", g_strerror (errno));
    }
}

/* A random (version 4) UUID, as g_uuid_string_random() makes one, but
 * from the kernel's CSPRNG and written without printf: every request gets
 * one. */
static char *
new_run_id (void)
{
  static const char hex[] = "0123456789abcdef";
  guint8 bytes[16];
  char *id = g_malloc (37);
  char *p = id;

  random_bytes (bytes, sizeof bytes);
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  for (guint i = 0; i < sizeof bytes; i++)
    {
      if (i == 4 || i == 6 || i == 8 || i == 10)
        *p++ = '-';
      *p++ = hex[bytes[i] >> 4];
      *p++ = hex[bytes[i] & 0x0f];
    }
  *p = '\0';

  return id;
}

static void
symfonic_invocation_init (SymfonicInvocation *self)
{
  self->run_id = new_run_id ();
  self->headers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
}

/**
 * symfonic_invocation_new:
 * @query: what the client asked
 *
 * Creates an invocation with a fresh run identifier and no identity.
 *
 * Returns: (transfer full): a new #SymfonicInvocation
 */
SymfonicInvocation *
symfonic_invocation_new (const char *query)
{
  g_return_val_if_fail (query != NULL, NULL);

  return g_object_new (SYMFONIC_TYPE_INVOCATION, "query", query, NULL);
}

static gboolean
member_is_string_or_null (JsonObject *object,
                          const char *name)
{
  JsonNode *node = json_object_get_member (object, name);

  return node == NULL || JSON_NODE_HOLDS_NULL (node) ||
         (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING);
}

/**
 * symfonic_invocation_new_from_json:
 * @body: the parsed request body (an `AgentRequest`)
 * @error: return location for a #GError
 *
 * Decodes an `AgentRequest` into a new invocation; see
 * symfonic_invocation_set_body().
 *
 * Returns: (transfer full): a new #SymfonicInvocation, or %NULL with @error
 *   set to %SYMFONIC_ERROR_BAD_REQUEST
 */
SymfonicInvocation *
symfonic_invocation_new_from_json (JsonNode  *body,
                                   GError   **error)
{
  g_autoptr(SymfonicInvocation) self = NULL;

  g_return_val_if_fail (body != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  self = g_object_new (SYMFONIC_TYPE_INVOCATION, NULL);
  if (!symfonic_invocation_set_body (self, body, error))
    return NULL;

  return g_steal_pointer (&self);
}

/**
 * symfonic_invocation_set_body:
 * @self: a #SymfonicInvocation that has no query yet
 * @body: the parsed request body (an `AgentRequest`)
 * @error: return location for a #GError
 *
 * Fills the query, `session_id` and attachments from an `AgentRequest`:
 * `query` must be a non-empty string, `session_id` a string or null,
 * `attachments` a list or null. `tenant_id` and unknown fields are
 * ignored: identity never comes from the body, and what authentication
 * already set on @self stays. The server builds an invocation from the
 * request head, authenticates it, and only then reads the body into it.
 *
 * Returns: %TRUE on success; %FALSE with @error set to
 *   %SYMFONIC_ERROR_BAD_REQUEST, leaving @self unchanged
 */
gboolean
symfonic_invocation_set_body (SymfonicInvocation  *self,
                              JsonNode            *body,
                              GError             **error)
{
  JsonObject *object;
  JsonNode *query;
  JsonNode *attachments;

  g_return_val_if_fail (SYMFONIC_IS_INVOCATION (self), FALSE);
  g_return_val_if_fail (self->query == NULL, FALSE);
  g_return_val_if_fail (body != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!JSON_NODE_HOLDS_OBJECT (body))
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST,
                           "The request body must be a JSON object");
      return FALSE;
    }

  object = json_node_get_object (body);
  query = json_object_get_member (object, "query");
  if (query == NULL || !JSON_NODE_HOLDS_VALUE (query) ||
      json_node_get_value_type (query) != G_TYPE_STRING)
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST,
                           "“query” is required and must be a string");
      return FALSE;
    }
  if (*json_node_get_string (query) == '\0')
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST,
                           "“query” must not be empty");
      return FALSE;
    }
  if (!member_is_string_or_null (object, "session_id"))
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST,
                           "“session_id” must be a string or null");
      return FALSE;
    }
  attachments = json_object_get_member (object, "attachments");
  if (attachments != NULL && !JSON_NODE_HOLDS_NULL (attachments) &&
      !JSON_NODE_HOLDS_ARRAY (attachments))
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST,
                           "“attachments” must be a list or null");
      return FALSE;
    }

  self->query = g_strdup (json_node_get_string (query));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_QUERY]);
  if (json_object_has_member (object, "session_id"))
    symfonic_invocation_set_session_id (self, json_object_get_string_member (object, "session_id"));
  if (attachments != NULL && JSON_NODE_HOLDS_ARRAY (attachments))
    {
      g_autoptr(JsonNode) copy = symfonic_json_node_deep_copy (attachments);

      self->attachments = json_node_dup_array (copy);
    }

  return TRUE;
}

/**
 * symfonic_invocation_get_query:
 * @self: a #SymfonicInvocation
 *
 * Gets the `query` of the request body.
 *
 * Returns: (nullable): the query; %NULL only while the server has the
 *   request head and not yet the body (head-phase admission)
 */
const char *
symfonic_invocation_get_query (SymfonicInvocation *self)
{
  g_return_val_if_fail (SYMFONIC_IS_INVOCATION (self), NULL);

  return self->query;
}

/**
 * symfonic_invocation_get_session_id:
 * @self: a #SymfonicInvocation
 *
 * Gets the `session_id` of the request body, which round-trips verbatim.
 *
 * Returns: (nullable): the client's session, exactly as it sent it
 */
const char *
symfonic_invocation_get_session_id (SymfonicInvocation *self)
{
  g_return_val_if_fail (SYMFONIC_IS_INVOCATION (self), NULL);

  return self->session_id;
}

/**
 * symfonic_invocation_set_session_id:
 * @self: a #SymfonicInvocation
 * @session_id: (nullable): the session
 *
 * Sets the session the invocation belongs to.
 */
void
symfonic_invocation_set_session_id (SymfonicInvocation *self,
                                    const char         *session_id)
{
  g_return_if_fail (SYMFONIC_IS_INVOCATION (self));

  if (replace_string (&self->session_id, session_id))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SESSION_ID]);
}

/**
 * symfonic_invocation_get_attachments:
 * @self: a #SymfonicInvocation
 *
 * Gets the `attachments` of the request body, as the client sent them.
 *
 * Returns: (transfer none) (nullable): the attachments
 */
JsonArray *
symfonic_invocation_get_attachments (SymfonicInvocation *self)
{
  g_return_val_if_fail (SYMFONIC_IS_INVOCATION (self), NULL);

  return self->attachments;
}

/**
 * symfonic_invocation_get_run_id:
 * @self: a #SymfonicInvocation
 *
 * Gets the identifier of the run this invocation starts, which the response
 * carries in `X-Symfonic-Run-ID`.
 *
 * Returns: the run identifier, unique per invocation
 */
const char *
symfonic_invocation_get_run_id (SymfonicInvocation *self)
{
  g_return_val_if_fail (SYMFONIC_IS_INVOCATION (self), NULL);

  return self->run_id;
}

/**
 * symfonic_invocation_get_tenant_id:
 * @self: a #SymfonicInvocation
 *
 * Gets the tenant that authentication admitted, from the `X-Tenant-ID`
 * header, never from the body.
 *
 * Returns: (nullable): the authenticated tenant, %NULL before authentication
 */
const char *
symfonic_invocation_get_tenant_id (SymfonicInvocation *self)
{
  g_return_val_if_fail (SYMFONIC_IS_INVOCATION (self), NULL);

  return self->tenant_id;
}

/**
 * symfonic_invocation_get_principal_id:
 * @self: a #SymfonicInvocation
 *
 * Gets the principal that authentication admitted; %NULL before an
 * authenticating stage ran.
 *
 * Returns: (nullable): the authenticated principal
 */
const char *
symfonic_invocation_get_principal_id (SymfonicInvocation *self)
{
  g_return_val_if_fail (SYMFONIC_IS_INVOCATION (self), NULL);

  return self->principal_id;
}

/**
 * symfonic_invocation_get_is_admin:
 * @self: a #SymfonicInvocation
 *
 * Gets whether the principal that authentication admitted is an
 * administrator.
 *
 * Returns: whether the authenticated principal is an administrator
 */
gboolean
symfonic_invocation_get_is_admin (SymfonicInvocation *self)
{
  g_return_val_if_fail (SYMFONIC_IS_INVOCATION (self), FALSE);

  return self->is_admin;
}

/**
 * symfonic_invocation_set_scope:
 * @self: a #SymfonicInvocation
 * @tenant_id: the tenant the principal acts for
 * @principal_id: (nullable): the principal; %NULL uses the tenant
 * @is_admin: whether the principal is an administrator
 *
 * Records the identity an authentication stage established. Only admission
 * hooks may call this.
 */
void
symfonic_invocation_set_scope (SymfonicInvocation *self,
                               const char         *tenant_id,
                               const char         *principal_id,
                               gboolean            is_admin)
{
  g_return_if_fail (SYMFONIC_IS_INVOCATION (self));
  g_return_if_fail (tenant_id != NULL);

  replace_string (&self->tenant_id, tenant_id);
  /* the convention of the codec (seed 002): a nameless principal is its tenant */
  replace_string (&self->principal_id, principal_id != NULL ? principal_id : tenant_id);
  self->is_admin = !!is_admin;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TENANT_ID]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PRINCIPAL_ID]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_IS_ADMIN]);
}

/**
 * symfonic_invocation_get_header:
 * @self: a #SymfonicInvocation
 * @name: a header name, in any case
 *
 * A request header, as the client sent it.
 *
 * Returns: (nullable): the header's value
 */
const char *
symfonic_invocation_get_header (SymfonicInvocation *self,
                                const char         *name)
{
  g_autofree char *folded = NULL;

  g_return_val_if_fail (SYMFONIC_IS_INVOCATION (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);

  folded = g_ascii_strdown (name, -1);
  return g_hash_table_lookup (self->headers, folded);
}

/**
 * symfonic_invocation_set_header:
 * @self: a #SymfonicInvocation
 * @name: a header name
 * @value: its value
 *
 * Records a request header. The server records every header of the request;
 * a repeated header keeps its values joined with `", "`.
 */
void
symfonic_invocation_set_header (SymfonicInvocation *self,
                                const char         *name,
                                const char         *value)
{
  const char *previous;
  char *folded;

  g_return_if_fail (SYMFONIC_IS_INVOCATION (self));
  g_return_if_fail (name != NULL);
  g_return_if_fail (value != NULL);

  folded = g_ascii_strdown (name, -1);
  previous = g_hash_table_lookup (self->headers, folded);

  g_hash_table_insert (self->headers, folded,
                       previous != NULL ? g_strconcat (previous, ", ", value, NULL) : g_strdup (value));
}

static JsonArray *
messages_from_query (const char *query)
{
  JsonArray *messages = json_array_new ();
  JsonObject *message = json_object_new ();

  json_object_set_string_member (message, "role", "user");
  json_object_set_string_member (message, "content", query);
  json_array_add_object_element (messages, message);

  return messages;
}

/**
 * symfonic_invocation_get_messages:
 * @self: a #SymfonicInvocation
 *
 * The conversation, in the OpenAI chat shape whatever format the request
 * came in: objects with `role` (`user`, `assistant` or `tool`), `content`
 * (a string or a list of parts), and optionally `tool_calls` and
 * `tool_call_id`. System prompts are not in it; see
 * symfonic_invocation_get_system(). An `AgentRequest` gives one user
 * message holding the query.
 *
 * Safe to call from any thread once the stream started.
 *
 * Returns: (transfer none) (nullable): the messages; %NULL only while the
 *   body is not read yet
 */
JsonArray *
symfonic_invocation_get_messages (SymfonicInvocation *self)
{
  JsonArray *messages;

  g_return_val_if_fail (SYMFONIC_IS_INVOCATION (self), NULL);

  messages = g_atomic_pointer_get (&self->messages);
  if (messages != NULL || self->query == NULL)
    return messages;

  /* built lazily, and stages on other threads may race to build it */
  messages = messages_from_query (self->query);
  if (!g_atomic_pointer_compare_and_exchange (&self->messages, NULL, messages))
    {
      json_array_unref (messages);
      messages = g_atomic_pointer_get (&self->messages);
    }

  return messages;
}

/**
 * symfonic_invocation_get_system:
 * @self: a #SymfonicInvocation
 *
 * Gets the system prompt of a provider route's request (OpenAI `system`
 * messages, Anthropic `system`).
 *
 * Returns: (nullable): the request's system prompt, if it had one
 */
const char *
symfonic_invocation_get_system (SymfonicInvocation *self)
{
  g_return_val_if_fail (SYMFONIC_IS_INVOCATION (self), NULL);

  return self->system;
}

/**
 * symfonic_invocation_get_tools:
 * @self: a #SymfonicInvocation
 *
 * Gets the tools of a provider route's request, which an upstream may call.
 *
 * Returns: (transfer none) (nullable): the tools the model may call, in the
 *   OpenAI `tools` shape (`{"type":"function","function":{...}}`)
 */
JsonArray *
symfonic_invocation_get_tools (SymfonicInvocation *self)
{
  g_return_val_if_fail (SYMFONIC_IS_INVOCATION (self), NULL);

  return self->tools;
}

/**
 * symfonic_invocation_get_parameters:
 * @self: a #SymfonicInvocation
 *
 * The generation parameters the request asked for: `model`, `max_tokens`,
 * `temperature`, `top_p` and `stop` (a list of strings), each only when
 * given.
 *
 * Returns: (transfer none) (nullable): the parameters
 */
JsonObject *
symfonic_invocation_get_parameters (SymfonicInvocation *self)
{
  g_return_val_if_fail (SYMFONIC_IS_INVOCATION (self), NULL);

  return self->parameters;
}

static const char *
string_member (JsonObject *object,
               const char *name)
{
  JsonNode *node = json_object_get_member (object, name);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;

  return json_node_get_string (node);
}

static char *
dup_last_user_text (JsonArray *messages)
{
  for (guint i = json_array_get_length (messages); i > 0; i--)
    {
      JsonNode *node = json_array_get_element (messages, i - 1);
      JsonObject *message;
      JsonNode *content;
      const char *text;

      if (!JSON_NODE_HOLDS_OBJECT (node))
        continue;
      message = json_node_get_object (node);
      if (g_strcmp0 (string_member (message, "role"), "user") != 0)
        continue;

      text = string_member (message, "content");
      if (text != NULL)
        return g_strdup (text);

      content = json_object_get_member (message, "content");
      if (content != NULL && JSON_NODE_HOLDS_ARRAY (content))
        {
          JsonArray *parts = json_node_get_array (content);
          GString *text = g_string_new (NULL);

          for (guint j = 0; j < json_array_get_length (parts); j++)
            {
              JsonNode *part = json_array_get_element (parts, j);
              const char *piece;

              if (!JSON_NODE_HOLDS_OBJECT (part))
                continue;
              piece = string_member (json_node_get_object (part), "text");
              if (piece != NULL)
                g_string_append (text, piece);
            }

          return g_string_free (text, FALSE);
        }

      return g_strdup ("");
    }

  return g_strdup ("");
}

/**
 * symfonic_invocation_set_conversation:
 * @self: a #SymfonicInvocation whose body is not read yet
 * @messages: the conversation, in the shape symfonic_invocation_get_messages()
 *   describes, already validated by the caller
 * @system: (nullable): the system prompt
 * @tools: (nullable): the tools, in the OpenAI `tools` shape
 * @parameters: (nullable): the generation parameters
 *
 * Fills the invocation from a provider-format request (the `openai` and
 * `anthropic` route kinds decode their bodies into this shape). The query,
 * which metering estimates and agent runtimes receive, becomes the text of
 * the last user message. Takes a reference on each container.
 */
void
symfonic_invocation_set_conversation (SymfonicInvocation *self,
                                      JsonArray          *messages,
                                      const char         *system,
                                      JsonArray          *tools,
                                      JsonObject         *parameters)
{
  g_return_if_fail (SYMFONIC_IS_INVOCATION (self));
  g_return_if_fail (self->query == NULL);
  g_return_if_fail (messages != NULL);

  self->messages = json_array_ref (messages);
  self->system = g_strdup (system);
  self->tools = tools != NULL ? json_array_ref (tools) : NULL;
  self->parameters = parameters != NULL ? json_object_ref (parameters) : NULL;
  self->query = dup_last_user_text (messages);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_QUERY]);
}

static void
set_string_or_null (JsonObject *object,
                    const char *name,
                    const char *value)
{
  if (value != NULL)
    json_object_set_string_member (object, name, value);
  else
    json_object_set_null_member (object, name);
}

/**
 * symfonic_invocation_to_json:
 * @self: a #SymfonicInvocation
 *
 * The invocation as an upstream receives it: `query`, `session_id`,
 * `attachments`, `tenant_id` and `principal_id` (the authenticated ones).
 *
 * Returns: (transfer full): a JSON object node
 */
JsonNode *
symfonic_invocation_to_json (SymfonicInvocation *self)
{
  JsonObject *object;
  JsonNode *root;

  g_return_val_if_fail (SYMFONIC_IS_INVOCATION (self), NULL);

  /* built as a tree directly: a JsonBuilder's state machine costs more
   * than the five members, on every request to a runtime upstream */
  object = json_object_new ();
  json_object_set_string_member (object, "query", self->query);
  set_string_or_null (object, "session_id", self->session_id);
  if (self->attachments != NULL)
    {
      g_autoptr(JsonNode) node = json_node_new (JSON_NODE_ARRAY);

      json_node_set_array (node, self->attachments);
      json_object_set_member (object, "attachments", symfonic_json_node_deep_copy (node));
    }
  else
    {
      json_object_set_null_member (object, "attachments");
    }
  set_string_or_null (object, "tenant_id", self->tenant_id);
  set_string_or_null (object, "principal_id", self->principal_id);

  root = json_node_new (JSON_NODE_OBJECT);
  json_node_take_object (root, object);
  return root;
}

static void
append_string_or_null (GString    *out,
                       const char *name,
                       const char *value)
{
  g_string_append_c (out, ',');
  symfonic_json_append_string (out, name, -1);
  g_string_append_c (out, ':');
  if (value != NULL)
    symfonic_json_append_string (out, value, -1);
  else
    g_string_append (out, "null");
}

/**
 * symfonic_invocation_to_data:
 * @self: a #SymfonicInvocation
 * @length: (out) (optional): the length of the text
 *
 * The object of symfonic_invocation_to_json() as compact JSON text, its
 * members in the same order, written without a tree: a source sends it on
 * every request.
 *
 * Returns: (transfer full): the JSON text
 */
char *
symfonic_invocation_to_data (SymfonicInvocation *self,
                             gsize              *length)
{
  GString *out;

  g_return_val_if_fail (SYMFONIC_IS_INVOCATION (self), NULL);

  out = g_string_sized_new (128);
  g_string_append (out, "{\"query\":");
  symfonic_json_append_string (out, self->query, -1);
  append_string_or_null (out, "session_id", self->session_id);
  g_string_append (out, ",\"attachments\":");
  symfonic_json_append_array (out, self->attachments, "null");
  append_string_or_null (out, "tenant_id", self->tenant_id);
  append_string_or_null (out, "principal_id", self->principal_id);
  g_string_append_c (out, '}');

  if (length != NULL)
    *length = out->len;

  return g_string_free (out, FALSE);
}

/* The body a provider source of @api sends for this invocation, which the
 * route decoded and checked (and translated when its client spoke another
 * API). The source adds only what is its own: the model, the stream, the
 * operator's system prompt and the default token limit. Nobody changes
 * @body after this (sealing the client's whole body would cost a walk of
 * it on every request). */
void
symfonic_invocation_set_provider_body (SymfonicInvocation  *self,
                                       SymfonicProviderApi  api,
                                       JsonObject          *body)
{
  g_return_if_fail (SYMFONIC_IS_INVOCATION (self));
  g_return_if_fail (body != NULL);

  g_clear_pointer (&self->provider_body, json_object_unref);
  self->provider_body = json_object_ref (body);
  self->provider_api = api;
}

/* The source wrote it: it is not needed again, and the client's body,
 * which it may be, goes while the request's other memory does. */
void
symfonic_invocation_clear_provider_body (SymfonicInvocation *self)
{
  g_return_if_fail (SYMFONIC_IS_INVOCATION (self));

  g_clear_pointer (&self->provider_body, json_object_unref);
}

/* NULL unless the invocation came from a provider route whose source
 * speaks a model API; @api says which. */
JsonObject *
symfonic_invocation_get_provider_body (SymfonicInvocation  *self,
                                       SymfonicProviderApi *api)
{
  g_return_val_if_fail (SYMFONIC_IS_INVOCATION (self), NULL);

  if (api != NULL)
    *api = self->provider_api;
  return self->provider_body;
}
