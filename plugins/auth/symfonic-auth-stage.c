/* symfonic-auth-stage.c: bearer-token admission
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "symfonic-auth-stage.h"
#include "symfonic-jwt-verifier.h"
#include "symfonic-token-table.h"

/* Admits a request when `Authorization: Bearer <token>` (or, on the
 * provider route kinds only, `x-api-key: <token>`) names a principal
 * and `X-Tenant-ID` names a tenant that principal may act for, and records
 * that scope on the invocation. A token with two dots is a JWT, checked
 * against the jwt-* settings; any other token is looked up in the tokens
 * file by its SHA-256. Identity never comes from the body.
 *
 * Everything is loaded and checked at load (GInitable) and immutable after
 * that: one stage object admits the streams of every worker at once. */
struct _SymfonicAuthStage
{
  GObject              parent_instance;

  GFile               *tokens_file;
  GFile               *jwt_hs256_secret_file;
  GFile               *jwt_public_key_file;
  GStrv                jwt_algorithms;
  guint                jwt_leeway;
  char                *jwt_principal_claim;
  char                *jwt_tenants_claim;
  char                *jwt_admin_claim;
  char                *jwt_issuer;
  char                *jwt_audience;

  SymfonicTokenTable  *tokens;
  SymfonicJwtVerifier *jwt;

  /* what the first g_initable_init() said, which every later call says */
  SymfonicInitOnce     init;
};

static void symfonic_auth_stage_initable_init (GInitableIface *iface);
static void symfonic_auth_stage_stage_init (SymfonicStageInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SymfonicAuthStage, symfonic_auth_stage, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, symfonic_auth_stage_initable_init)
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_STAGE, symfonic_auth_stage_stage_init))

enum {
  PROP_0,
  PROP_TOKENS_FILE,
  PROP_JWT_HS256_SECRET_FILE,
  PROP_JWT_PUBLIC_KEY_FILE,
  PROP_JWT_ALGORITHMS,
  PROP_JWT_LEEWAY,
  PROP_JWT_PRINCIPAL_CLAIM,
  PROP_JWT_TENANTS_CLAIM,
  PROP_JWT_ADMIN_CLAIM,
  PROP_JWT_ISSUER,
  PROP_JWT_AUDIENCE,
  PROP_USES_DEMO_TOKENS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* Bounds the work one unauthenticated request can ask for. */
#define MAX_TOKEN_LENGTH 8192

/* RFC 6750 2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=" */
static gboolean
is_b64token (const char *token)
{
  const char *p = token;

  while (*p != '\0' && (g_ascii_isalnum (*p) || strchr ("-._~+/", *p) != NULL))
    p++;
  if (p == token)
    return FALSE;
  while (*p == '=')
    p++;

  return *p == '\0';
}

/* The token of `Bearer <token>` (the scheme is case-insensitive, RFC 7235
 * 2.1), or NULL. Two Authorization headers reach us joined with ", ",
 * which this refuses too. */
static const char *
bearer_token (const char *authorization)
{
  const char *token;

  if (g_ascii_strncasecmp (authorization, "Bearer ", strlen ("Bearer ")) != 0)
    return NULL;

  token = authorization + strlen ("Bearer ");
  while (*token == ' ')
    token++;

  if (strlen (token) > MAX_TOKEN_LENGTH || !is_b64token (token))
    return NULL;

  return token;
}

/* The provider route kinds take the key the way their SDKs send it:
 * Anthropic's as `x-api-key`, OpenAI's as a bearer token. Other routes
 * keep to Authorization, their published contract. */
static gboolean
accepts_api_key (SymfonicStream *stream)
{
  SymfonicRouteKind kind = symfonic_route_get_kind (symfonic_stream_get_route (stream));

  return kind == SYMFONIC_ROUTE_KIND_OPENAI || kind == SYMFONIC_ROUTE_KIND_ANTHROPIC;
}

/* The token of an `x-api-key` header, under the rules of a bearer token. */
static gboolean
api_key_token (const char  *api_key,
               const char **token,
               GError     **error)
{
  if (api_key == NULL)
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UNAUTHORIZED,
                           "Missing Authorization or x-api-key header");
      return FALSE;
    }
  if (strlen (api_key) > MAX_TOKEN_LENGTH || !is_b64token (api_key))
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UNAUTHORIZED,
                           "Invalid API key");
      return FALSE;
    }

  *token = api_key;
  return TRUE;
}

static gboolean
is_jwt (const char *token)
{
  guint dots = 0;

  for (const char *p = token; *p != '\0'; p++)
    dots += *p == '.';

  return dots == 2;
}

static gboolean
symfonic_auth_stage_admit (SymfonicStage   *stage,
                           SymfonicStream  *stream,
                           GError         **error)
{
  SymfonicAuthStage *self = SYMFONIC_AUTH_STAGE (stage);
  SymfonicInvocation *invocation = symfonic_stream_get_invocation (stream);
  g_autoptr(SymfonicJwtIdentity) identity = NULL;
  const char * const *tenants;
  const char *authorization;
  const char *principal;
  const char *tenant;
  const char *token;
  gboolean admin;

  authorization = symfonic_invocation_get_header (invocation, "Authorization");
  if (authorization == NULL && accepts_api_key (stream))
    {
      if (!api_key_token (symfonic_invocation_get_header (invocation, "x-api-key"), &token, error))
        return FALSE;
    }
  else if (authorization == NULL)
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UNAUTHORIZED,
                           "Missing Authorization header");
      return FALSE;
    }
  else if ((token = bearer_token (authorization)) == NULL)
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UNAUTHORIZED,
                           "The Authorization header must be “Bearer <token>”");
      return FALSE;
    }

  if (is_jwt (token))
    {
      g_autoptr(GError) local_error = NULL;

      if (self->jwt == NULL)
        {
          symfonic_log_stream (G_LOG_LEVEL_DEBUG, stream, "auth", NULL, "JWT refused: no jwt-* key is configured");
          g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UNAUTHORIZED,
                               "Invalid bearer token");
          return FALSE;
        }

      identity = symfonic_jwt_verifier_verify (self->jwt, token, g_get_real_time () / G_USEC_PER_SEC,
                                               &local_error);
      if (identity == NULL)
        {
          g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UNAUTHORIZED, local_error->message);
          return FALSE;
        }
      principal = identity->principal;
      tenants = (const char * const *) identity->tenants;
      admin = identity->admin;
    }
  else
    {
      const SymfonicTokenPrincipal *found = NULL;

      if (self->tokens != NULL)
        found = symfonic_token_table_lookup (self->tokens, token);
      if (found == NULL)
        {
          g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UNAUTHORIZED,
                               "Invalid bearer token");
          return FALSE;
        }
      principal = found->name;
      tenants = (const char * const *) found->tenants;
      admin = found->admin;
    }

  tenant = symfonic_invocation_get_header (invocation, "X-Tenant-ID");
  if (tenant == NULL || *tenant == '\0')
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UNAUTHORIZED,
                           "Missing X-Tenant-ID header");
      return FALSE;
    }
  if (!symfonic_auth_is_tenant_name (tenant))
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UNAUTHORIZED,
                           "X-Tenant-ID must name exactly one tenant");
      return FALSE;
    }

  /* One fixed detail, whatever the tenant: a refusal must not tell which
   * tenants exist or whom they belong to. */
  if (!g_strv_contains (tenants, tenant))
    {
      symfonic_log_stream (G_LOG_LEVEL_DEBUG, stream, "auth", NULL,
                           "principal %s refused for a tenant it is not a member of", principal);
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_FORBIDDEN,
                           "The principal may not act for this tenant");
      return FALSE;
    }

  symfonic_invocation_set_scope (invocation, tenant, principal, admin);
  return TRUE;
}

/* Identity is all in the headers: refusing there spares the gateway the
 * body of every unauthenticated client. */
static SymfonicAdmissionPhase
symfonic_auth_stage_get_admission_phase (SymfonicStage *stage)
{
  return SYMFONIC_ADMISSION_PHASE_HEAD;
}

static void
symfonic_auth_stage_stage_init (SymfonicStageInterface *iface)
{
  iface->admit = symfonic_auth_stage_admit;
  iface->get_admission_phase = symfonic_auth_stage_get_admission_phase;
}

static gboolean
load (GInitable     *initable,
      GCancellable  *cancellable,
      GError       **error)
{
  SymfonicAuthStage *self = SYMFONIC_AUTH_STAGE (initable);
  g_autoptr(GError) local_error = NULL;
  SymfonicJwtSettings settings = {
    .hs256_secret_file = self->jwt_hs256_secret_file,
    .public_key_file = self->jwt_public_key_file,
    .algorithms = (const char * const *) self->jwt_algorithms,
    .leeway = self->jwt_leeway,
    .principal_claim = self->jwt_principal_claim,
    .tenants_claim = self->jwt_tenants_claim,
    .admin_claim = self->jwt_admin_claim,
    .issuer = self->jwt_issuer,
    .audience = self->jwt_audience,
  };

  if (self->tokens_file == NULL && self->jwt_hs256_secret_file == NULL && self->jwt_public_key_file == NULL)
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                           _("expected tokens-file, jwt-hs256-secret-file or jwt-public-key-file, found none: "
                             "without them no token can be accepted"));
      return FALSE;
    }

  if (self->jwt_principal_claim == NULL || *self->jwt_principal_claim == '\0' ||
      self->jwt_tenants_claim == NULL || *self->jwt_tenants_claim == '\0' ||
      self->jwt_admin_claim == NULL || *self->jwt_admin_claim == '\0')
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                           _("expected claim names in jwt-principal-claim, jwt-tenants-claim and jwt-admin-claim, "
                             "found an empty one"));
      return FALSE;
    }

  if (self->tokens_file != NULL)
    {
      self->tokens = symfonic_token_table_new_from_file (self->tokens_file, &local_error);
      if (self->tokens == NULL)
        {
          g_propagate_prefixed_error (error, g_steal_pointer (&local_error), "tokens-file: ");
          return FALSE;
        }
    }

  self->jwt = symfonic_jwt_verifier_new (&settings, &local_error);
  if (local_error != NULL)
    {
      g_clear_pointer (&self->tokens, symfonic_token_table_free);
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }

  return TRUE;
}

static gboolean
symfonic_auth_stage_initable_init_impl (GInitable     *initable,
                                        GCancellable  *cancellable,
                                        GError       **error)
{
  /* the files may have changed since: reading them again could make a
   * stage that failed work, or one that works fail */
  return symfonic_init_once (&SYMFONIC_AUTH_STAGE (initable)->init, load, initable, cancellable, error);
}

static void
symfonic_auth_stage_initable_init (GInitableIface *iface)
{
  iface->init = symfonic_auth_stage_initable_init_impl;
}

static void
symfonic_auth_stage_finalize (GObject *object)
{
  SymfonicAuthStage *self = (SymfonicAuthStage *) object;

  g_clear_object (&self->tokens_file);
  g_clear_object (&self->jwt_hs256_secret_file);
  g_clear_object (&self->jwt_public_key_file);
  g_strfreev (self->jwt_algorithms);
  g_free (self->jwt_principal_claim);
  g_free (self->jwt_tenants_claim);
  g_free (self->jwt_admin_claim);
  g_free (self->jwt_issuer);
  g_free (self->jwt_audience);
  g_clear_pointer (&self->tokens, symfonic_token_table_free);
  g_clear_pointer (&self->jwt, symfonic_jwt_verifier_free);
  symfonic_init_once_clear (&self->init);

  G_OBJECT_CLASS (symfonic_auth_stage_parent_class)->finalize (object);
}

static void
symfonic_auth_stage_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  SymfonicAuthStage *self = SYMFONIC_AUTH_STAGE (object);

  switch (prop_id)
    {
    case PROP_TOKENS_FILE:
      g_value_set_object (value, self->tokens_file);
      break;
    case PROP_JWT_HS256_SECRET_FILE:
      g_value_set_object (value, self->jwt_hs256_secret_file);
      break;
    case PROP_JWT_PUBLIC_KEY_FILE:
      g_value_set_object (value, self->jwt_public_key_file);
      break;
    case PROP_JWT_ALGORITHMS:
      g_value_set_boxed (value, self->jwt_algorithms);
      break;
    case PROP_JWT_LEEWAY:
      g_value_set_uint (value, self->jwt_leeway);
      break;
    case PROP_JWT_PRINCIPAL_CLAIM:
      g_value_set_string (value, self->jwt_principal_claim);
      break;
    case PROP_JWT_TENANTS_CLAIM:
      g_value_set_string (value, self->jwt_tenants_claim);
      break;
    case PROP_JWT_ADMIN_CLAIM:
      g_value_set_string (value, self->jwt_admin_claim);
      break;
    case PROP_JWT_ISSUER:
      g_value_set_string (value, self->jwt_issuer);
      break;
    case PROP_JWT_AUDIENCE:
      g_value_set_string (value, self->jwt_audience);
      break;
    case PROP_USES_DEMO_TOKENS:
      g_value_set_boolean (value, self->tokens != NULL && symfonic_token_table_has_demo (self->tokens));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_auth_stage_set_property (GObject      *object,
                                  guint         prop_id,
                                  const GValue *value,
                                  GParamSpec   *pspec)
{
  SymfonicAuthStage *self = SYMFONIC_AUTH_STAGE (object);

  switch (prop_id)
    {
    case PROP_TOKENS_FILE:
      g_set_object (&self->tokens_file, g_value_get_object (value));
      break;
    case PROP_JWT_HS256_SECRET_FILE:
      g_set_object (&self->jwt_hs256_secret_file, g_value_get_object (value));
      break;
    case PROP_JWT_PUBLIC_KEY_FILE:
      g_set_object (&self->jwt_public_key_file, g_value_get_object (value));
      break;
    case PROP_JWT_ALGORITHMS:
      g_strfreev (self->jwt_algorithms);
      self->jwt_algorithms = g_value_dup_boxed (value);
      break;
    case PROP_JWT_LEEWAY:
      self->jwt_leeway = g_value_get_uint (value);
      break;
    case PROP_JWT_PRINCIPAL_CLAIM:
      g_free (self->jwt_principal_claim);
      self->jwt_principal_claim = g_value_dup_string (value);
      break;
    case PROP_JWT_TENANTS_CLAIM:
      g_free (self->jwt_tenants_claim);
      self->jwt_tenants_claim = g_value_dup_string (value);
      break;
    case PROP_JWT_ADMIN_CLAIM:
      g_free (self->jwt_admin_claim);
      self->jwt_admin_claim = g_value_dup_string (value);
      break;
    case PROP_JWT_ISSUER:
      g_free (self->jwt_issuer);
      self->jwt_issuer = g_value_dup_string (value);
      break;
    case PROP_JWT_AUDIENCE:
      g_free (self->jwt_audience);
      self->jwt_audience = g_value_dup_string (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_auth_stage_class_init (SymfonicAuthStageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS;

  object_class->finalize = symfonic_auth_stage_finalize;
  object_class->get_property = symfonic_auth_stage_get_property;
  object_class->set_property = symfonic_auth_stage_set_property;

  properties[PROP_TOKENS_FILE] =
    g_param_spec_object ("tokens-file", "Tokens file",
                         "Key file of [principal:NAME] groups: token-sha256 (SHA-256 hex of the token), "
                         "tenants, admin, demo",
                         G_TYPE_FILE, flags);
  properties[PROP_JWT_HS256_SECRET_FILE] =
    g_param_spec_object ("jwt-hs256-secret-file", "JWT HS256 secret file",
                         "File holding the shared secret HS256 tokens are signed with (at least 32 bytes; "
                         "a trailing newline is ignored)",
                         G_TYPE_FILE, flags);
  properties[PROP_JWT_PUBLIC_KEY_FILE] =
    g_param_spec_object ("jwt-public-key-file", "JWT public key file",
                         "PEM public key RS256 (RSA) or ES256 (P-256) tokens are verified with",
                         G_TYPE_FILE, flags);
  properties[PROP_JWT_ALGORITHMS] =
    g_param_spec_boxed ("jwt-algorithms", "JWT algorithms",
                        "Algorithms a JWT may be signed with, among HS256, RS256, ES256; "
                        "default: those the configured keys verify. Never none",
                        G_TYPE_STRV, flags);
  properties[PROP_JWT_LEEWAY] =
    g_param_spec_uint ("jwt-leeway", "JWT leeway",
                       "Seconds of clock skew allowed when checking exp and nbf",
                       0, 3600, 30, flags);
  properties[PROP_JWT_PRINCIPAL_CLAIM] =
    g_param_spec_string ("jwt-principal-claim", "JWT principal claim",
                         "Claim naming the principal (a string)",
                         "sub", flags);
  properties[PROP_JWT_TENANTS_CLAIM] =
    g_param_spec_string ("jwt-tenants-claim", "JWT tenants claim",
                         "Claim listing the tenants the principal may act for: a JSON array of strings, "
                         "or one string separated by spaces or commas",
                         "tenants", flags);
  properties[PROP_JWT_ADMIN_CLAIM] =
    g_param_spec_string ("jwt-admin-claim", "JWT admin claim",
                         "Boolean claim marking an administrator; absent means not one",
                         "admin", flags);
  properties[PROP_JWT_ISSUER] =
    g_param_spec_string ("jwt-issuer", "JWT issuer",
                         "When set, the iss claim must equal it",
                         NULL, flags);
  properties[PROP_JWT_AUDIENCE] =
    g_param_spec_string ("jwt-audience", "JWT audience",
                         "When set, the aud claim must be or contain it",
                         NULL, flags);
  properties[PROP_USES_DEMO_TOKENS] =
    g_param_spec_boolean ("uses-demo-tokens", "Uses demo tokens",
                          "Whether the tokens file holds a principal marked demo=true, whose token is public",
                          FALSE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* the metering stages count requests by this identity */
  symfonic_stage_type_declare_order (G_TYPE_FROM_CLASS (klass), (const char * const[]) { "principal", NULL },
                                     NULL, NULL, NULL);
}

static void
symfonic_auth_stage_init (SymfonicAuthStage *self)
{
  self->jwt_leeway = 30;
  self->jwt_principal_claim = g_strdup ("sub");
  self->jwt_tenants_claim = g_strdup ("tenants");
  self->jwt_admin_claim = g_strdup ("admin");
}
