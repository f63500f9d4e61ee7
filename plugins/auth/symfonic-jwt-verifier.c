/* symfonic-jwt-verifier.c: signed bearer tokens (RFC 7519)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <glib/gi18n-lib.h>
#include <jwt.h>
#include <symfonic.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <symfonic.h>

#include "symfonic-jwt-verifier.h"
#include "symfonic-token-table.h"

/* libjwt 1.10 verifies a signature with whatever algorithm the token's own
 * header names, using the key it is handed: given an RSA public key and a
 * token that says HS256, it computes an HMAC keyed with the PEM text, which
 * anybody holding the public key can forge. So the header is read here
 * first, the algorithm must be on the allow-list and fit a configured key,
 * and libjwt only ever sees the key of that algorithm's family. It also
 * does not check any claim in this version: expiry, not-before, issuer and
 * audience are checked here, after the signature. */

typedef enum {
  ALGORITHM_HS256 = 1 << 0,
  ALGORITHM_RS256 = 1 << 1,
  ALGORITHM_ES256 = 1 << 2,
} Algorithm;

static const struct {
  const char *name;
  Algorithm   algorithm;
  jwt_alg_t   jwt_alg;
} algorithms[] = {
  { "HS256", ALGORITHM_HS256, JWT_ALG_HS256 },
  { "RS256", ALGORITHM_RS256, JWT_ALG_RS256 },
  { "ES256", ALGORITHM_ES256, JWT_ALG_ES256 },
};

/* RFC 7518 3.2: a key shorter than the hash output weakens HMAC. */
#define MIN_SECRET_LENGTH 32
#define MIN_RSA_BITS 2048

/* Immutable once built: shared by every stream on every worker. */
struct _SymfonicJwtVerifier
{
  GBytes    *secret;
  GBytes    *public_key;
  /* ALGORITHM_RS256 or ALGORITHM_ES256, from the key itself */
  Algorithm  public_key_algorithm;
  Algorithm  allowed;

  guint      leeway;
  char      *principal_claim;
  char      *tenants_claim;
  char      *admin_claim;
  char      *issuer;
  char      *audience;
};

void
symfonic_jwt_identity_free (SymfonicJwtIdentity *identity)
{
  g_free (identity->principal);
  g_strfreev (identity->tenants);
  g_free (identity);
}

void
symfonic_jwt_verifier_free (SymfonicJwtVerifier *self)
{
  g_clear_pointer (&self->secret, g_bytes_unref);
  g_clear_pointer (&self->public_key, g_bytes_unref);
  g_free (self->principal_claim);
  g_free (self->tenants_claim);
  g_free (self->admin_claim);
  g_free (self->issuer);
  g_free (self->audience);
  g_free (self);
}

static GBytes *
load_secret (GFile   *file,
             GError **error)
{
  g_autofree char *display = g_file_get_parse_name (file);
  g_autoptr(GError) local_error = NULL;
  g_autofree char *contents = NULL;
  gsize length;

  if (!symfonic_config_file_load (file, SYMFONIC_CONFIG_FILE_MAX_SIZE, &contents, &length, &local_error))
    {
      g_propagate_prefixed_error (error, g_steal_pointer (&local_error), "jwt-hs256-secret-file: ");
      return NULL;
    }

  /* The newline an editor or `echo` leaves is not part of the secret. */
  while (length > 0 && (contents[length - 1] == '\n' || contents[length - 1] == '\r'))
    length--;

  if (length >= 5 && memcmp (contents, "-----", 5) == 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   _("jwt-hs256-secret-file: expected a shared secret in %s, found a PEM key (public keys go in "
                     "jwt-public-key-file)"),
                   display);
      return NULL;
    }
  if (length < MIN_SECRET_LENGTH)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   _("jwt-hs256-secret-file: expected a secret of at least %u bytes in %s, found a shorter one"),
                   MIN_SECRET_LENGTH, display);
      return NULL;
    }

  return g_bytes_new (contents, length);
}

static GBytes *
load_public_key (GFile      *file,
                 Algorithm  *algorithm,
                 GError    **error)
{
  g_autofree char *display = g_file_get_parse_name (file);
  g_autoptr(GError) local_error = NULL;
  g_autofree char *contents = NULL;
  EVP_PKEY *key = NULL;
  BIO *bio;
  gsize length;
  int type;

  if (!symfonic_config_file_load (file, SYMFONIC_CONFIG_FILE_MAX_SIZE, &contents, &length, &local_error))
    {
      g_propagate_prefixed_error (error, g_steal_pointer (&local_error), "jwt-public-key-file: ");
      return NULL;
    }

  /* Parsed here with the same call libjwt uses, so a key libjwt could not
   * read fails at start instead of refusing every request. */
  bio = BIO_new_mem_buf (contents, (int) MIN (length, G_MAXINT));
  if (bio != NULL)
    key = PEM_read_bio_PUBKEY (bio, NULL, NULL, NULL);
  BIO_free (bio);
  if (key == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   _("jwt-public-key-file: expected a PEM public key (-----BEGIN PUBLIC KEY-----) in %s, found "
                     "none"),
                   display);
      return NULL;
    }

  type = EVP_PKEY_get_base_id (key);
  if (type == EVP_PKEY_RSA)
    {
      if (EVP_PKEY_get_bits (key) < MIN_RSA_BITS)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       _("jwt-public-key-file: expected an RSA key of at least %u bits in %s, found %d bits"),
                       MIN_RSA_BITS, display, EVP_PKEY_get_bits (key));
          EVP_PKEY_free (key);
          return NULL;
        }
      *algorithm = ALGORITHM_RS256;
    }
  else if (type == EVP_PKEY_EC)
    {
      char group[64] = "";
      size_t group_length = 0;

      if (!EVP_PKEY_get_group_name (key, group, sizeof group, &group_length) ||
          (strcmp (group, "prime256v1") != 0 && strcmp (group, "P-256") != 0))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       _("jwt-public-key-file: expected an EC key on curve P-256 (ES256) in %s, found one on %s"),
                       display, *group != '\0' ? group : _("another curve"));
          EVP_PKEY_free (key);
          return NULL;
        }
      *algorithm = ALGORITHM_ES256;
    }
  else
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   _("jwt-public-key-file: expected an RSA (RS256) or P-256 (ES256) key in %s, found another kind"),
                   display);
      EVP_PKEY_free (key);
      return NULL;
    }
  EVP_PKEY_free (key);

  return g_bytes_new (contents, length);
}

static gboolean
algorithm_from_name (const char *name,
                     Algorithm  *algorithm)
{
  for (guint i = 0; i < G_N_ELEMENTS (algorithms); i++)
    {
      if (g_strcmp0 (algorithms[i].name, name) == 0)
        {
          *algorithm = algorithms[i].algorithm;
          return TRUE;
        }
    }

  return FALSE;
}

static jwt_alg_t
jwt_alg_of (Algorithm algorithm)
{
  for (guint i = 0; i < G_N_ELEMENTS (algorithms); i++)
    {
      if (algorithms[i].algorithm == algorithm)
        return algorithms[i].jwt_alg;
    }

  return JWT_ALG_INVAL;
}

/* The algorithms the configured keys can verify: each one only with the
 * key of its own family. */
static Algorithm
usable_algorithms (SymfonicJwtVerifier *self)
{
  Algorithm usable = 0;

  if (self->secret != NULL)
    usable |= ALGORITHM_HS256;
  if (self->public_key != NULL)
    usable |= self->public_key_algorithm;

  return usable;
}

/**
 * symfonic_jwt_verifier_new:
 * @settings: the configuration
 * @error: return location for a #GError
 *
 * Loads and checks the keys. With no key configured there is nothing to
 * verify with, and the result is %NULL without an error.
 *
 * Returns: (transfer full) (nullable): a verifier
 */
SymfonicJwtVerifier *
symfonic_jwt_verifier_new (const SymfonicJwtSettings  *settings,
                           GError                    **error)
{
  g_autoptr(SymfonicJwtVerifier) self = g_new0 (SymfonicJwtVerifier, 1);
  gboolean listed = settings->algorithms != NULL && settings->algorithms[0] != NULL;

  if (settings->hs256_secret_file == NULL && settings->public_key_file == NULL)
    {
      if (listed)
        g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                             _("jwt-algorithms: expected jwt-hs256-secret-file or jwt-public-key-file to verify tokens "
                               "with, found neither"));
      return NULL;
    }

  if (settings->hs256_secret_file != NULL)
    {
      self->secret = load_secret (settings->hs256_secret_file, error);
      if (self->secret == NULL)
        return NULL;
    }
  if (settings->public_key_file != NULL)
    {
      self->public_key = load_public_key (settings->public_key_file, &self->public_key_algorithm, error);
      if (self->public_key == NULL)
        return NULL;
    }

  if (!listed)
    {
      self->allowed = usable_algorithms (self);
    }
  else
    {
      for (guint i = 0; settings->algorithms[i] != NULL; i++)
        {
          const char *name = settings->algorithms[i];
          Algorithm algorithm;

          if (!algorithm_from_name (name, &algorithm))
            {
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           _("jwt-algorithms: expected HS256, RS256 or ES256, found “%s”"), name);
              return NULL;
            }
          if ((usable_algorithms (self) & algorithm) == 0)
            {
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           algorithm == ALGORITHM_HS256
                           ? _("jwt-algorithms: expected jwt-hs256-secret-file for %s, found none")
                           : _("jwt-algorithms: expected a matching key in jwt-public-key-file for %s, found none"),
                           name);
              return NULL;
            }
          self->allowed |= algorithm;
        }
    }

  self->leeway = settings->leeway;
  self->principal_claim = g_strdup (settings->principal_claim);
  self->tenants_claim = g_strdup (settings->tenants_claim);
  self->admin_claim = g_strdup (settings->admin_claim);
  self->issuer = g_strdup (settings->issuer);
  self->audience = g_strdup (settings->audience);

  return g_steal_pointer (&self);
}

/* base64url without padding (RFC 7515 2), checked strictly: GLib's decoder
 * skips characters it does not know. */
static GBytes *
decode_segment (const char *segment,
                gsize       length)
{
  g_autoptr(GString) standard = g_string_sized_new (length + 3);
  gsize decoded_length;
  guchar *decoded;

  if (length == 0 || length % 4 == 1)
    return NULL;

  for (gsize i = 0; i < length; i++)
    {
      char c = segment[i];

      if (c == '-')
        c = '+';
      else if (c == '_')
        c = '/';
      else if (!g_ascii_isalnum (c))
        return NULL;
      g_string_append_c (standard, c);
    }
  while (standard->len % 4 != 0)
    g_string_append_c (standard, '=');

  decoded = g_base64_decode (standard->str, &decoded_length);
  return g_bytes_new_take (decoded, decoded_length);
}

static JsonObject *
parse_object (const char *text,
              gsize       length)
{
  /* the header is read before the signature is checked: strict, so a
   * repeated name is refused (RFC 7515 4), and bounded in depth */
  g_autoptr(JsonNode) root = symfonic_json_parse (text, length, SYMFONIC_JSON_MAX_DEPTH, NULL);

  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return NULL;

  return json_object_ref (json_node_get_object (root));
}

static gboolean
get_number (JsonObject *claims,
            const char *name,
            gboolean   *present,
            double     *value)
{
  JsonNode *node = json_object_get_member (claims, name);
  GType type;

  *present = node != NULL;
  if (node == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_VALUE (node))
    return FALSE;

  type = json_node_get_value_type (node);
  if (type != G_TYPE_INT64 && type != G_TYPE_DOUBLE)
    return FALSE;

  *value = json_node_get_double (node);
  return TRUE;
}

static const char *
get_string (JsonObject *claims,
            const char *name)
{
  JsonNode *node = json_object_get_member (claims, name);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;

  return json_node_get_string (node);
}

static gboolean
audience_matches (JsonObject *claims,
                  const char *audience)
{
  JsonNode *node = json_object_get_member (claims, "aud");
  JsonArray *array;

  if (node == NULL)
    return FALSE;
  if (JSON_NODE_HOLDS_VALUE (node))
    return g_strcmp0 (get_string (claims, "aud"), audience) == 0;
  if (!JSON_NODE_HOLDS_ARRAY (node))
    return FALSE;

  array = json_node_get_array (node);
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *element = json_array_get_element (array, i);

      if (JSON_NODE_HOLDS_VALUE (element) && json_node_get_value_type (element) == G_TYPE_STRING &&
          g_strcmp0 (json_node_get_string (element), audience) == 0)
        return TRUE;
    }

  return FALSE;
}

/* A JSON array of names, or one string of names separated by spaces or
 * commas (the OAuth `scope` habit). */
static GStrv
get_tenants (JsonObject *claims,
             const char *name)
{
  g_autoptr(GPtrArray) tenants = g_ptr_array_new_with_free_func (g_free);
  JsonNode *node = json_object_get_member (claims, name);

  if (node == NULL)
    return NULL;

  if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *array = json_node_get_array (node);

      for (guint i = 0; i < json_array_get_length (array); i++)
        {
          JsonNode *element = json_array_get_element (array, i);
          const char *tenant;

          if (!JSON_NODE_HOLDS_VALUE (element) || json_node_get_value_type (element) != G_TYPE_STRING)
            return NULL;
          tenant = json_node_get_string (element);
          if (!symfonic_auth_is_tenant_name (tenant))
            return NULL;
          g_ptr_array_add (tenants, g_strdup (tenant));
        }
    }
  else if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING)
    {
      g_auto(GStrv) parts = g_strsplit_set (json_node_get_string (node), " \t,", -1);

      for (guint i = 0; parts[i] != NULL; i++)
        {
          if (*parts[i] == '\0')
            continue;
          if (!symfonic_auth_is_tenant_name (parts[i]))
            return NULL;
          g_ptr_array_add (tenants, g_strdup (parts[i]));
        }
    }

  if (tenants->len == 0)
    return NULL;

  g_ptr_array_add (tenants, NULL);
  return (GStrv) g_ptr_array_free (g_steal_pointer (&tenants), FALSE);
}

/* The detail a client sees is one of three fixed sentences; why exactly a
 * token was refused goes to the debug log, without the token. */
static gpointer
refuse (GError     **error,
        const char  *detail,
        const char  *reason)
{
  g_debug ("JWT refused: %s", reason);
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED, detail);
  return NULL;
}

static SymfonicJwtIdentity *
check_claims (SymfonicJwtVerifier  *self,
              JsonObject           *claims,
              gint64                now,
              GError              **error)
{
  g_autoptr(SymfonicJwtIdentity) identity = g_new0 (SymfonicJwtIdentity, 1);
  const char *invalid = "Invalid bearer token";
  const char *principal;
  JsonNode *admin;
  gboolean present;
  double seconds;

  /* A token without an expiry would be good forever once leaked. */
  if (!get_number (claims, "exp", &present, &seconds) || !present)
    return refuse (error, invalid, "exp is missing or not a number");
  if ((double) now >= seconds + self->leeway)
    return refuse (error, "The bearer token has expired", "expired");

  if (!get_number (claims, "nbf", &present, &seconds))
    return refuse (error, invalid, "nbf is not a number");
  if (present && (double) now + self->leeway < seconds)
    return refuse (error, "The bearer token is not valid yet", "not valid yet");

  if (self->issuer != NULL && *self->issuer != '\0' &&
      g_strcmp0 (get_string (claims, "iss"), self->issuer) != 0)
    return refuse (error, invalid, "iss does not match jwt-issuer");
  if (self->audience != NULL && *self->audience != '\0' && !audience_matches (claims, self->audience))
    return refuse (error, invalid, "aud does not name jwt-audience");

  principal = get_string (claims, self->principal_claim);
  if (principal == NULL || *principal == '\0')
    return refuse (error, invalid, "the principal claim is missing or not a string");
  identity->principal = g_strdup (principal);

  identity->tenants = get_tenants (claims, self->tenants_claim);
  if (identity->tenants == NULL)
    return refuse (error, invalid, "the tenants claim is missing or malformed");

  admin = json_object_get_member (claims, self->admin_claim);
  if (admin != NULL)
    {
      if (!JSON_NODE_HOLDS_VALUE (admin) || json_node_get_value_type (admin) != G_TYPE_BOOLEAN)
        return refuse (error, invalid, "the admin claim is not a boolean");
      identity->admin = json_node_get_boolean (admin);
    }

  return g_steal_pointer (&identity);
}

/**
 * symfonic_jwt_verifier_verify:
 * @self: a #SymfonicJwtVerifier
 * @token: a compact JWS, as presented
 * @now: the current time, in seconds since the epoch
 * @error: return location for a #GError with a detail fit for the client
 *
 * Thread-safe: reads nothing but @self's immutable configuration.
 *
 * Returns: (transfer full) (nullable): who the token names
 */
SymfonicJwtIdentity *
symfonic_jwt_verifier_verify (SymfonicJwtVerifier  *self,
                              const char           *token,
                              gint64                now,
                              GError              **error)
{
  const char *invalid = "Invalid bearer token";
  g_autoptr(JsonObject) header = NULL;
  g_autoptr(JsonObject) claims = NULL;
  g_autoptr(GBytes) header_bytes = NULL;
  const char *dot = strchr (token, '.');
  const char *alg;
  Algorithm algorithm;
  GBytes *key;
  jwt_t *jwt = NULL;
  char *grants;
  int status;

  if (dot == NULL)
    return refuse (error, invalid, "not a compact JWS");

  header_bytes = decode_segment (token, dot - token);
  if (header_bytes != NULL)
    header = parse_object (g_bytes_get_data (header_bytes, NULL), g_bytes_get_size (header_bytes));
  if (header == NULL)
    return refuse (error, invalid, "the header is not a base64url JSON object");

  /* RFC 7515 4.1.11: extensions we do not know must not be ignored. */
  if (json_object_has_member (header, "crit"))
    return refuse (error, invalid, "the header has crit extensions");

  alg = get_string (header, "alg");
  if (alg == NULL || !algorithm_from_name (alg, &algorithm))
    return refuse (error, invalid, "alg is missing, none or not supported");
  if ((self->allowed & algorithm) == 0)
    return refuse (error, invalid, "alg is not in jwt-algorithms");

  /* Each algorithm gets only the key of its own family. */
  if (algorithm == ALGORITHM_HS256)
    key = self->secret;
  else if (self->public_key != NULL && algorithm == self->public_key_algorithm)
    key = self->public_key;
  else
    key = NULL;
  if (key == NULL)
    return refuse (error, invalid, "alg does not match the configured key");

  status = jwt_decode (&jwt, token, g_bytes_get_data (key, NULL), (int) g_bytes_get_size (key));
  if (status != 0 || jwt == NULL)
    {
      if (jwt != NULL)
        jwt_free (jwt);
      return refuse (error, invalid, "the signature does not verify");
    }

  /* libjwt parsed the header again; it must have come to the same
   * algorithm, or the key above was chosen for a different one. */
  if (jwt_get_alg (jwt) != jwt_alg_of (algorithm))
    {
      jwt_free (jwt);
      return refuse (error, invalid, "alg changed between readings");
    }

  grants = jwt_get_grants_json (jwt, NULL);
  jwt_free (jwt);
  if (grants != NULL)
    claims = parse_object (grants, strlen (grants));
  free (grants);
  if (claims == NULL)
    return refuse (error, invalid, "the claims are not a JSON object");

  return check_claims (self, claims, now, error);
}
