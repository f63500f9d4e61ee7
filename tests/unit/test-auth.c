/* test-auth.c: the auth stage, through a loaded pipeline
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <glib/gstdio.h>
#include <symfonic.h>

/* Every case loads a real pipeline with an [stage:auth] group and calls the
 * stage's admission hook on a stream of that pipeline's route, as the
 * server does. Keys are made with the openssl CLI once per run; JWTs are
 * assembled here (HS256 with GHmac, RS256/ES256 signed by openssl) so that
 * the tests can also build the tokens a correct signer never would: alg
 * none, HS256 keyed with the public key's PEM text, and so on. */

#define FORBIDDEN_DETAIL "The principal may not act for this tenant"

/* Clear tokens of the test tokens file; the file holds their SHA-256. */
#define TOKEN_ALICE "alice-s3cret-token"
#define TOKEN_BOB   "bob-s3cret-token"
#define TOKEN_ROOT  "root-s3cret-token"

#define HS_SECRET       "a shared secret of more than thirty-two bytes"
#define HS_OTHER_SECRET "another secret, also longer than thirty-two bytes"

static char *tmp_dir;
static char *openssl;

static char *
tmp_path (const char *name)
{
  return g_build_filename (tmp_dir, name, NULL);
}

static void
write_file (const char *name,
            const char *contents)
{
  g_autofree char *path = tmp_path (name);
  g_autoptr(GError) error = NULL;

  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
}

static char *
read_file (const char *name)
{
  g_autofree char *path = tmp_path (name);
  g_autoptr(GError) error = NULL;
  char *contents = NULL;

  g_file_get_contents (path, &contents, NULL, &error);
  g_assert_no_error (error);
  return contents;
}

/* Runs `openssl ARGS...` in the temporary folder with @input on stdin. */
static GBytes *
run_openssl (GBytes     *input,
             const char *first_arg,
             ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GBytes) output = NULL;
  g_autoptr(GBytes) errors = NULL;
  g_autoptr(GBytes) empty = g_bytes_new_static ("", 0);
  g_autoptr(GError) error = NULL;
  const char *arg;
  va_list args;

  g_ptr_array_add (argv, openssl);
  va_start (args, first_arg);
  for (arg = first_arg; arg != NULL; arg = va_arg (args, const char *))
    g_ptr_array_add (argv, (gpointer) arg);
  va_end (args);
  g_ptr_array_add (argv, NULL);

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                        G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_set_cwd (launcher, tmp_dir);
  process = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_subprocess_communicate (process, input != NULL ? input : empty, NULL, &output, &errors, &error);
  g_assert_no_error (error);
  if (!g_subprocess_get_successful (process))
    g_error ("openssl %s failed: %.*s", first_arg, (int) g_bytes_get_size (errors),
             (const char *) g_bytes_get_data (errors, NULL));

  return g_steal_pointer (&output);
}

static void
make_keys (void)
{
  static const struct { const char *name; const char *algorithm; const char *option; } keys[] = {
    { "rsa", "RSA", "rsa_keygen_bits:2048" },
    { "rsa-other", "RSA", "rsa_keygen_bits:2048" },
    { "rsa-small", "RSA", "rsa_keygen_bits:1024" },
    { "ec", "EC", "ec_paramgen_curve:P-256" },
    { "ec-other", "EC", "ec_paramgen_curve:P-256" },
    { "ec-p384", "EC", "ec_paramgen_curve:P-384" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    {
      g_autofree char *private_key = g_strconcat (keys[i].name, ".pem", NULL);
      g_autofree char *public_key = g_strconcat (keys[i].name, ".pub", NULL);
      g_bytes_unref (run_openssl (NULL, "genpkey", "-algorithm", keys[i].algorithm,
                                  "-pkeyopt", keys[i].option, "-out", private_key, NULL));
      g_bytes_unref (run_openssl (NULL, "pkey", "-in", private_key, "-pubout", "-out", public_key, NULL));
    }
}

static char *
sha256_hex (const char *text)
{
  return g_compute_checksum_for_string (G_CHECKSUM_SHA256, text, -1);
}

/* --- JWTs --------------------------------------------------------------- */

static char *
base64url (const guint8 *data,
           gsize         length)
{
  g_autofree char *standard = g_base64_encode (data, length);
  GString *url = g_string_new (NULL);

  for (const char *p = standard; *p != '\0' && *p != '='; p++)
    g_string_append_c (url, *p == '+' ? '-' : *p == '/' ? '_' : *p);

  return g_string_free (url, FALSE);
}

static char *
base64url_text (const char *text)
{
  return base64url ((const guint8 *) text, strlen (text));
}

/* A DER ECDSA-Sig-Value (what openssl writes) to the JWS form, r || s
 * with 32 bytes each (RFC 7518 3.4). */
static GBytes *
ecdsa_der_to_jws (GBytes *der)
{
  gsize length;
  const guint8 *p = g_bytes_get_data (der, &length);
  const guint8 *end = p + length;
  guint8 out[64] = { 0 };

  g_assert_cmpuint (length, >, 8);
  g_assert_cmpuint (p[0], ==, 0x30);
  p += 2;
  for (guint n = 0; n < 2; n++)
    {
      guint size;

      g_assert_true (p + 2 <= end);
      g_assert_cmpuint (p[0], ==, 0x02);
      size = p[1];
      p += 2;
      g_assert_true (p + size <= end);
      while (size > 32 && *p == 0)
        {
          p++;
          size--;
        }
      g_assert_cmpuint (size, <=, 32);
      memcpy (out + 32 * n + (32 - size), p, size);
      p += size;
    }

  return g_bytes_new (out, sizeof out);
}

static char *
sign_hmac (const char *signing_input,
           const char *secret,
           gsize       secret_length)
{
  g_autoptr(GHmac) hmac = g_hmac_new (G_CHECKSUM_SHA256, (const guchar *) secret, secret_length);
  guint8 digest[32];
  gsize length = sizeof digest;

  g_hmac_update (hmac, (const guchar *) signing_input, -1);
  g_hmac_get_digest (hmac, digest, &length);
  return base64url (digest, length);
}

static char *
sign_pem (const char *signing_input,
          const char *private_key,
          gboolean    ecdsa)
{
  g_autoptr(GBytes) input = g_bytes_new (signing_input, strlen (signing_input));
  g_autoptr(GBytes) signature = run_openssl (input, "dgst", "-sha256", "-sign", private_key, NULL);

  if (ecdsa)
    {
      g_autoptr(GBytes) jws = ecdsa_der_to_jws (signature);

      return base64url (g_bytes_get_data (jws, NULL), g_bytes_get_size (jws));
    }

  return base64url (g_bytes_get_data (signature, NULL), g_bytes_get_size (signature));
}

/* @key: for HS256 the secret; for RS256/ES256 the private key file; for
 * none ignored. @header may be NULL for {"alg":ALG,"typ":"JWT"}. */
static char *
make_jwt (const char *alg,
          const char *header,
          const char *claims,
          const char *key)
{
  g_autofree char *default_header = g_strdup_printf ("{\"alg\":\"%s\",\"typ\":\"JWT\"}", alg);
  g_autofree char *encoded_header = base64url_text (header != NULL ? header : default_header);
  g_autofree char *encoded_claims = base64url_text (claims);
  g_autofree char *signing_input = g_strconcat (encoded_header, ".", encoded_claims, NULL);
  g_autofree char *signature = NULL;

  if (g_str_equal (alg, "HS256"))
    signature = sign_hmac (signing_input, key, strlen (key));
  else if (g_str_equal (alg, "RS256"))
    signature = sign_pem (signing_input, key, FALSE);
  else if (g_str_equal (alg, "ES256"))
    signature = sign_pem (signing_input, key, TRUE);
  else
    signature = g_strdup ("");

  return g_strconcat (signing_input, ".", signature, NULL);
}

static gint64
now (void)
{
  return g_get_real_time () / G_USEC_PER_SEC;
}

/* Claims for alice, valid for an hour, with @extra members appended. */
static char *
claims_with (const char *extra)
{
  return g_strdup_printf ("{\"sub\":\"alice\",\"tenants\":[\"acme\",\"demo\"],\"exp\":%" G_GINT64_FORMAT "%s%s}",
                          now () + 3600, extra != NULL ? "," : "", extra != NULL ? extra : "");
}

/* --- the pipeline --------------------------------------------------------- */

static SymfonicPipeline *
load_auth (const char  *settings,
           GError     **error)
{
  g_autoptr(GFile) base_dir = g_file_new_for_path (tmp_dir);
  g_autofree char *text = g_strdup_printf ("[route:r]\n"
                                           "path=/r\n"
                                           "source=s\n"
                                           "stages=auth\n"
                                           "\n"
                                           "[source:s]\n"
                                           "type=replay\n"
                                           "transcripts=%s/fixtures/transcripts\n"
                                           "\n"
                                           "[stage:auth]\n"
                                           "type=auth\n"
                                           "%s",
                                           SYMFONIC_TEST_UNIT_DIR, settings);

  return symfonic_pipeline_new_from_data (symfonic_registry_get_default (), text, -1, base_dir,
                                          "auth.pipeline", error);
}

static SymfonicPipeline *
load_ok (const char *settings)
{
  g_autoptr(GError) error = NULL;
  SymfonicPipeline *pipeline = load_auth (settings, &error);

  g_assert_no_error (error);
  g_assert_nonnull (pipeline);
  return pipeline;
}

static char *
load_fails (const char *settings)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SymfonicPipeline) pipeline = load_auth (settings, &error);

  g_assert_null (pipeline);
  g_assert_nonnull (error);
  g_test_message ("load error: %s", error->message);
  g_assert_nonnull (strstr (error->message, "[stage:auth]"));
  return g_strdup (error->message);
}

/* Admits a request with these headers (NULL: not sent) through the stage;
 * on success @scope_out receives the invocation. */
static gboolean
admit_full (SymfonicPipeline    *pipeline,
            SymfonicInvocation  *invocation,
            const char          *authorization,
            const char          *tenant,
            GError             **error)
{
  SymfonicRoute *route = symfonic_pipeline_lookup_route (pipeline, "/r");
  SymfonicStage *stage = symfonic_pipeline_get_stage (pipeline, "auth");
  g_autoptr(SymfonicStream) stream = NULL;

  g_assert_nonnull (route);
  g_assert_nonnull (stage);
  if (authorization != NULL)
    symfonic_invocation_set_header (invocation, "Authorization", authorization);
  if (tenant != NULL)
    symfonic_invocation_set_header (invocation, "X-Tenant-ID", tenant);

  stream = symfonic_stream_new (route, invocation);
  return symfonic_stage_admit (stage, stream, error);
}

static SymfonicInvocation *
admit_ok (SymfonicPipeline *pipeline,
          const char       *authorization,
          const char       *tenant)
{
  g_autoptr(SymfonicInvocation) invocation = symfonic_invocation_new ("hi");
  g_autoptr(GError) error = NULL;

  g_assert_true (admit_full (pipeline, invocation, authorization, tenant, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (symfonic_invocation_get_tenant_id (invocation), ==, tenant);
  return g_steal_pointer (&invocation);
}

/* Refused with @code; the detail never repeats what was presented. */
static void
admit_refused (SymfonicPipeline *pipeline,
               const char       *authorization,
               const char       *tenant,
               SymfonicError     code,
               const char       *detail)
{
  g_autoptr(SymfonicInvocation) invocation = symfonic_invocation_new ("hi");
  g_autoptr(GError) error = NULL;

  g_assert_false (admit_full (pipeline, invocation, authorization, tenant, &error));
  g_assert_error (error, SYMFONIC_ERROR, (int) code);
  g_test_message ("refused: %s", error->message);
  if (detail != NULL)
    g_assert_cmpstr (error->message, ==, detail);
  if (authorization != NULL && strlen (authorization) > strlen ("Bearer "))
    g_assert_null (strstr (error->message, authorization + strlen ("Bearer ")));
  g_assert_null (symfonic_invocation_get_tenant_id (invocation));
}

static void
admit_unauthorized (SymfonicPipeline *pipeline,
                    const char       *token,
                    const char       *tenant)
{
  g_autofree char *authorization = g_strconcat ("Bearer ", token, NULL);

  admit_refused (pipeline, authorization, tenant, SYMFONIC_ERROR_UNAUTHORIZED, NULL);
}

#define TOKENS_SETTINGS "tokens-file=tokens.ini\n"

static void
write_tokens_file (void)
{
  g_autofree char *alice = sha256_hex (TOKEN_ALICE);
  g_autofree char *bob = sha256_hex (TOKEN_BOB);
  g_autofree char *root = sha256_hex (TOKEN_ROOT);
  g_autofree char *root_upper = g_ascii_strup (root, -1);
  g_autofree char *text = g_strdup_printf ("# test principals\n"
                                           "[principal:alice]\n"
                                           "token-sha256=%s\n"
                                           "tenants=acme;demo\n"
                                           "admin=false\n"
                                           "\n"
                                           "[principal:bob]\n"
                                           "token-sha256=%s\n"
                                           "tenants=globex\n"
                                           "\n"
                                           "[principal:root]\n"
                                           "token-sha256=%s\n"
                                           "tenants=acme;globex\n"
                                           "admin=true\n",
                                           alice, bob, root_upper);

  write_file ("tokens.ini", text);
}

/* --- opaque tokens ---------------------------------------------------------- */

static void
test_auth_token_valid (void)
{
  g_autoptr(SymfonicPipeline) pipeline = load_ok (TOKENS_SETTINGS);
  g_autoptr(SymfonicInvocation) alice = admit_ok (pipeline, "Bearer " TOKEN_ALICE, "acme");
  g_autoptr(SymfonicInvocation) alice_demo = admit_ok (pipeline, "Bearer " TOKEN_ALICE, "demo");
  g_autoptr(SymfonicInvocation) bob = admit_ok (pipeline, "Bearer " TOKEN_BOB, "globex");
  /* the scheme is case-insensitive (RFC 7235) */
  g_autoptr(SymfonicInvocation) lower = admit_ok (pipeline, "bearer " TOKEN_ALICE, "acme");
  gboolean demo = TRUE;

  g_assert_cmpstr (symfonic_invocation_get_principal_id (alice), ==, "alice");
  g_assert_false (symfonic_invocation_get_is_admin (alice));
  g_assert_cmpstr (symfonic_invocation_get_tenant_id (alice_demo), ==, "demo");
  g_assert_cmpstr (symfonic_invocation_get_principal_id (bob), ==, "bob");
  g_assert_cmpstr (symfonic_invocation_get_principal_id (lower), ==, "alice");

  g_object_get (symfonic_pipeline_get_stage (pipeline, "auth"), "uses-demo-tokens", &demo, NULL);
  g_assert_false (demo);
}

static void
test_auth_admin (void)
{
  g_autoptr(SymfonicPipeline) pipeline = load_ok (TOKENS_SETTINGS);
  g_autoptr(SymfonicInvocation) root = admit_ok (pipeline, "Bearer " TOKEN_ROOT, "globex");
  g_autoptr(SymfonicInvocation) alice = admit_ok (pipeline, "Bearer " TOKEN_ALICE, "acme");

  /* the upper-case digest in the file matched too */
  g_assert_cmpstr (symfonic_invocation_get_principal_id (root), ==, "root");
  g_assert_true (symfonic_invocation_get_is_admin (root));
  g_assert_false (symfonic_invocation_get_is_admin (alice));
}

static void
test_auth_missing_header (void)
{
  g_autoptr(SymfonicPipeline) pipeline = load_ok (TOKENS_SETTINGS);

  admit_refused (pipeline, NULL, "acme", SYMFONIC_ERROR_UNAUTHORIZED, "Missing Authorization header");
}

static void
test_auth_malformed_header (void)
{
  static const char * const values[] = {
    "",
    "Bearer",
    "Bearer ",
    "Basic YWxpY2U6cGFzcw==",
    "Token " TOKEN_ALICE,
    TOKEN_ALICE,
    "Bearer" TOKEN_ALICE,
    "Bearer " TOKEN_ALICE " extra",
    "Bearer tok\"en",
    /* two Authorization headers, as the invocation joins them */
    "Bearer " TOKEN_ALICE ", Bearer " TOKEN_BOB,
  };
  g_autoptr(SymfonicPipeline) pipeline = load_ok (TOKENS_SETTINGS);

  for (guint i = 0; i < G_N_ELEMENTS (values); i++)
    {
      g_test_message ("Authorization: %s", values[i]);
      admit_refused (pipeline, values[i], "acme", SYMFONIC_ERROR_UNAUTHORIZED,
                     "The Authorization header must be “Bearer <token>”");
    }
}

static void
test_auth_wrong_token (void)
{
  g_autoptr(SymfonicPipeline) pipeline = load_ok (TOKENS_SETTINGS);
  g_autofree char *digest = sha256_hex (TOKEN_ALICE);

  admit_refused (pipeline, "Bearer not-a-known-token", "acme", SYMFONIC_ERROR_UNAUTHORIZED,
                 "Invalid bearer token");
  /* the stored digest is not itself a token */
  admit_unauthorized (pipeline, digest, "acme");
  /* one character off, and a prefix */
  admit_unauthorized (pipeline, TOKEN_ALICE "x", "acme");
  admit_unauthorized (pipeline, "alice-s3cret", "acme");
  /* with two dots it is a JWT, and no JWT key is configured */
  admit_unauthorized (pipeline, "a.b.c", "acme");
}

static void
test_auth_forged_tenant (void)
{
  g_autoptr(SymfonicPipeline) pipeline = load_ok (TOKENS_SETTINGS);

  /* an existing tenant of somebody else, and one nobody has: one detail */
  admit_refused (pipeline, "Bearer " TOKEN_ALICE, "globex", SYMFONIC_ERROR_FORBIDDEN, FORBIDDEN_DETAIL);
  admit_refused (pipeline, "Bearer " TOKEN_ALICE, "nowhere", SYMFONIC_ERROR_FORBIDDEN, FORBIDDEN_DETAIL);
  admit_refused (pipeline, "Bearer " TOKEN_BOB, "acme", SYMFONIC_ERROR_FORBIDDEN, FORBIDDEN_DETAIL);
  /* an admin is a member of its tenants only */
  admit_refused (pipeline, "Bearer " TOKEN_ROOT, "demo", SYMFONIC_ERROR_FORBIDDEN, FORBIDDEN_DETAIL);
  /* case matters */
  admit_refused (pipeline, "Bearer " TOKEN_ALICE, "ACME", SYMFONIC_ERROR_FORBIDDEN, FORBIDDEN_DETAIL);
}

static void
test_auth_tenant_header (void)
{
  g_autoptr(SymfonicPipeline) pipeline = load_ok (TOKENS_SETTINGS);

  admit_refused (pipeline, "Bearer " TOKEN_ALICE, NULL, SYMFONIC_ERROR_UNAUTHORIZED, "Missing X-Tenant-ID header");
  admit_refused (pipeline, "Bearer " TOKEN_ALICE, "", SYMFONIC_ERROR_UNAUTHORIZED, "Missing X-Tenant-ID header");
  /* two X-Tenant-ID headers arrive joined: neither is picked */
  admit_refused (pipeline, "Bearer " TOKEN_ALICE, "acme, demo", SYMFONIC_ERROR_UNAUTHORIZED,
                 "X-Tenant-ID must name exactly one tenant");
  /* an invalid token is refused as such, whatever the tenant */
  admit_refused (pipeline, "Bearer wrong", NULL, SYMFONIC_ERROR_UNAUTHORIZED, "Invalid bearer token");
}

static void
test_auth_body_tenant_ignored (void)
{
  g_autoptr(SymfonicPipeline) pipeline = load_ok (TOKENS_SETTINGS);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) body = json_from_string ("{\"query\":\"hi\",\"tenant_id\":\"globex\"}", &error);
  g_autoptr(SymfonicInvocation) invocation = symfonic_invocation_new_from_json (body, &error);
  g_autoptr(SymfonicInvocation) forged = NULL;

  g_assert_no_error (error);
  g_assert_true (admit_full (pipeline, invocation, "Bearer " TOKEN_ALICE, "acme", &error));
  g_assert_no_error (error);
  g_assert_cmpstr (symfonic_invocation_get_tenant_id (invocation), ==, "acme");

  /* and naming alice's tenant in the body does not help with another */
  forged = symfonic_invocation_new_from_json (body, &error);
  g_assert_false (admit_full (pipeline, forged, "Bearer " TOKEN_BOB, "acme", &error));
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_FORBIDDEN);
}

static void
test_auth_demo_tokens (void)
{
  g_autoptr(SymfonicPipeline) pipeline = load_ok ("tokens-file=" SYMFONIC_TEST_DATA_DIR "/demo-tokens.ini\n");
  g_autoptr(SymfonicInvocation) alice = admit_ok (pipeline, "Bearer demo-token-alice", "acme");
  g_autoptr(SymfonicInvocation) bob = admit_ok (pipeline, "Bearer demo-token-bob", "globex");
  g_autoptr(SymfonicInvocation) admin = admit_ok (pipeline, "Bearer demo-token-admin", "demo");
  gboolean demo = FALSE;

  g_assert_cmpstr (symfonic_invocation_get_principal_id (alice), ==, "alice");
  g_assert_false (symfonic_invocation_get_is_admin (alice));
  g_assert_cmpstr (symfonic_invocation_get_principal_id (bob), ==, "bob");
  g_assert_true (symfonic_invocation_get_is_admin (admin));
  admit_refused (pipeline, "Bearer demo-token-bob", "acme", SYMFONIC_ERROR_FORBIDDEN, FORBIDDEN_DETAIL);

  g_object_get (symfonic_pipeline_get_stage (pipeline, "auth"), "uses-demo-tokens", &demo, NULL);
  g_assert_true (demo);
}

/* --- the tokens file, refused at load -------------------------------------- */

typedef struct
{
  const char *name;
  const char *text;
  /* besides the file's name */
  const char *mentions[3];
} BadTokensFile;

#define DIGEST_A "1111111111111111111111111111111111111111111111111111111111111111"
#define DIGEST_B "2222222222222222222222222222222222222222222222222222222222222222"
#define DIGEST_C_LOWER "abababababababababababababababababababababababababababababababab"
#define DIGEST_C_UPPER "ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB"

static const BadTokensFile bad_tokens_files[] = {
  { "digest-short", "[principal:a]\ntoken-sha256=abc123\ntenants=t\n", { "[principal:a]", "token-sha256", ":2:" } },
  { "digest-not-hex", "[principal:a]\ntoken-sha256=" "zz" DIGEST_A "\n", { "[principal:a]", "token-sha256" } },
  { "digest-not-hex-same-length",
    "[principal:a]\ntoken-sha256=g111111111111111111111111111111111111111111111111111111111111111\ntenants=t\n",
    { "[principal:a]", "token-sha256" } },
  { "clear-token", "[principal:a]\ntoken=hunter2\ntenants=t\n", { "[principal:a]", "token-sha256", ":2:" } },
  { "unknown-key", "[principal:a]\ntoken-sha256=" DIGEST_A "\ntenants=t\nadmn=true\n", { "[principal:a]", "admn", ":4:" } },
  { "missing-digest", "[principal:a]\ntenants=t\n", { "[principal:a]", "token-sha256" } },
  { "missing-tenants", "[principal:a]\ntoken-sha256=" DIGEST_A "\n", { "[principal:a]", "tenants" } },
  { "empty-tenants", "[principal:a]\ntoken-sha256=" DIGEST_A "\ntenants=\n", { "[principal:a]", "tenants" } },
  { "tenant-with-comma", "[principal:a]\ntoken-sha256=" DIGEST_A "\ntenants=a,b\n", { "[principal:a]", "tenants" } },
  { "admin-not-boolean", "[principal:a]\ntoken-sha256=" DIGEST_A "\ntenants=t\nadmin=maybe\n",
    { "[principal:a]", "admin", ":4:" } },
  { "demo-not-boolean", "[principal:a]\ntoken-sha256=" DIGEST_A "\ntenants=t\ndemo=yes please\n",
    { "[principal:a]", "demo" } },
  { "duplicate-digest",
    "[principal:a]\ntoken-sha256=" DIGEST_A "\ntenants=t\n[principal:b]\ntoken-sha256=" DIGEST_A "\ntenants=u\n",
    { "[principal:b]", "[principal:a]", ":5:" } },
  { "duplicate-digest-case",
    "[principal:a]\ntoken-sha256=" DIGEST_C_LOWER "\ntenants=t\n"
    "[principal:b]\ntoken-sha256=" DIGEST_A "\ntenants=u\n"
    "[principal:c]\ntoken-sha256=" DIGEST_C_UPPER "\ntenants=u\n",
    { "[principal:c]", "[principal:a]" } },
  { "unknown-group", "[user:a]\ntoken-sha256=" DIGEST_A "\ntenants=t\n", { "[user:a]", ":1:" } },
  { "empty-name", "[principal:]\ntoken-sha256=" DIGEST_A "\ntenants=t\n", { "[principal:]" } },
  { "repeated-group",
    "[principal:a]\ntoken-sha256=" DIGEST_A "\ntenants=t\n[principal:a]\nadmin=true\n",
    { "[principal:a]", ":4:", "line 1" } },
  { "repeated-key", "[principal:a]\ntoken-sha256=" DIGEST_A "\ntenants=t\ntenants=u\n",
    { "[principal:a]", "tenants", ":4:" } },
  { "no-principals", "# nothing here\n", { "[principal:NAME]" } },
  { "not-a-key-file", "just words\n", { NULL } },
};

static void
test_auth_bad_tokens_file (gconstpointer data)
{
  const BadTokensFile *c = data;
  g_autofree char *path = tmp_path ("bad-tokens.ini");
  g_autofree char *message = NULL;

  write_file ("bad-tokens.ini", c->text);
  message = load_fails ("tokens-file=bad-tokens.ini\n");
  g_assert_nonnull (strstr (message, path));
  for (guint i = 0; i < G_N_ELEMENTS (c->mentions) && c->mentions[i] != NULL; i++)
    {
      if (strstr (message, c->mentions[i]) == NULL)
        g_error ("“%s” does not mention “%s”", message, c->mentions[i]);
    }
}

static void
test_auth_missing_tokens_file (void)
{
  g_autofree char *path = tmp_path ("no-such-tokens.ini");
  g_autofree char *message = load_fails ("tokens-file=no-such-tokens.ini\n");

  g_assert_nonnull (strstr (message, path));
}

/* --- settings refused at load ------------------------------------------------ */

typedef struct
{
  const char *name;
  const char *settings;
  const char *mention;
} BadSettings;

static const BadSettings bad_settings[] = {
  { "nothing-to-check-with", "", "tokens-file" },
  { "algorithms-without-keys", TOKENS_SETTINGS "jwt-algorithms=HS256\n", "jwt-algorithms" },
  { "algorithm-none", "jwt-hs256-secret-file=secret\njwt-algorithms=none\n", "none" },
  { "algorithm-unknown", "jwt-hs256-secret-file=secret\njwt-algorithms=HS256;PS256\n", "PS256" },
  { "algorithm-without-key", "jwt-public-key-file=rsa.pub\njwt-algorithms=RS256;HS256\n", "jwt-hs256-secret-file" },
  { "algorithm-wrong-key-type", "jwt-public-key-file=ec.pub\njwt-algorithms=RS256\n", "RS256" },
  { "rs-with-ec-key", "jwt-public-key-file=rsa.pub\njwt-algorithms=ES256\n", "ES256" },
  { "secret-short", "jwt-hs256-secret-file=short-secret\n", "at least 32 bytes" },
  { "secret-is-pem", "jwt-hs256-secret-file=rsa.pub\n", "PEM" },
  { "secret-missing", "jwt-hs256-secret-file=no-such-secret\n", "no-such-secret" },
  { "public-key-not-pem", "jwt-public-key-file=secret\n", "PEM public key" },
  { "public-key-private", "jwt-public-key-file=rsa.pem\n", "PEM public key" },
  { "public-key-rsa-small", "jwt-public-key-file=rsa-small.pub\n", "2048" },
  { "public-key-p384", "jwt-public-key-file=ec-p384.pub\n", "P-256" },
  { "public-key-missing", "jwt-public-key-file=no-such.pub\n", "no-such.pub" },
  { "empty-claim-name", "jwt-hs256-secret-file=secret\njwt-principal-claim=\n", "jwt-principal-claim" },
  { "leeway-too-long", "jwt-hs256-secret-file=secret\njwt-leeway=86400\n", "jwt-leeway" },
};

static void
test_auth_bad_settings (gconstpointer data)
{
  const BadSettings *c = data;
  g_autofree char *message = load_fails (c->settings);

  if (strstr (message, c->mention) == NULL)
    g_error ("“%s” does not mention “%s”", message, c->mention);
}

/* --- JWTs ----------------------------------------------------------------------- */

#define JWT_SETTINGS "jwt-hs256-secret-file=secret\njwt-public-key-file=rsa.pub\n"

static void
admit_jwt_ok (SymfonicPipeline *pipeline,
              const char       *token,
              const char       *tenant,
              const char       *principal,
              gboolean          admin)
{
  g_autofree char *authorization = g_strconcat ("Bearer ", token, NULL);
  g_autoptr(SymfonicInvocation) invocation = admit_ok (pipeline, authorization, tenant);

  g_assert_cmpstr (symfonic_invocation_get_principal_id (invocation), ==, principal);
  g_assert_cmpint (symfonic_invocation_get_is_admin (invocation), ==, admin);
}

static void
test_auth_jwt_valid (void)
{
  g_autoptr(SymfonicPipeline) pipeline = load_ok (JWT_SETTINGS);
  g_autofree char *claims = claims_with (NULL);
  g_autofree char *admin_claims = claims_with ("\"admin\":true");
  g_autofree char *string_claims = g_strdup_printf ("{\"sub\":\"carol\",\"tenants\":\"acme globex,demo\","
                                                    "\"exp\":%" G_GINT64_FORMAT ",\"admin\":false}",
                                                    now () + 60);
  g_autofree char *hs = make_jwt ("HS256", NULL, claims, HS_SECRET);
  g_autofree char *hs_admin = make_jwt ("HS256", NULL, admin_claims, HS_SECRET);
  g_autofree char *hs_string = make_jwt ("HS256", NULL, string_claims, HS_SECRET);
  g_autofree char *rs = make_jwt ("RS256", NULL, claims, "rsa.pem");
  g_autofree char *no_typ = make_jwt ("HS256", "{\"alg\":\"HS256\"}", claims, HS_SECRET);

  admit_jwt_ok (pipeline, hs, "acme", "alice", FALSE);
  admit_jwt_ok (pipeline, hs, "demo", "alice", FALSE);
  admit_jwt_ok (pipeline, hs_admin, "acme", "alice", TRUE);
  admit_jwt_ok (pipeline, hs_string, "globex", "carol", FALSE);
  admit_jwt_ok (pipeline, hs_string, "demo", "carol", FALSE);
  admit_jwt_ok (pipeline, rs, "acme", "alice", FALSE);
  admit_jwt_ok (pipeline, no_typ, "acme", "alice", FALSE);

  /* a tenant outside the claim: the fixed 403 */
  {
    g_autofree char *authorization = g_strconcat ("Bearer ", hs, NULL);

    admit_refused (pipeline, authorization, "globex", SYMFONIC_ERROR_FORBIDDEN, FORBIDDEN_DETAIL);
    admit_refused (pipeline, authorization, NULL, SYMFONIC_ERROR_UNAUTHORIZED, "Missing X-Tenant-ID header");
  }
}

static void
test_auth_jwt_es256 (void)
{
  g_autoptr(SymfonicPipeline) pipeline = load_ok ("jwt-public-key-file=ec.pub\n");
  g_autofree char *claims = claims_with (NULL);
  g_autofree char *es = make_jwt ("ES256", NULL, claims, "ec.pem");
  g_autofree char *es_other = make_jwt ("ES256", NULL, claims, "ec-other.pem");
  g_autofree char *ec_pem = read_file ("ec.pub");
  g_autofree char *confused = make_jwt ("HS256", NULL, claims, ec_pem);

  admit_jwt_ok (pipeline, es, "acme", "alice", FALSE);
  admit_unauthorized (pipeline, es_other, "acme");
  admit_unauthorized (pipeline, confused, "acme");
}

static void
test_auth_jwt_expiry (void)
{
  /* the default leeway: 30 seconds */
  g_autoptr(SymfonicPipeline) pipeline = load_ok (JWT_SETTINGS);
  g_autoptr(SymfonicPipeline) strict = load_ok (JWT_SETTINGS "jwt-leeway=0\n");
  g_autofree char *expired_claims = g_strdup_printf ("{\"sub\":\"alice\",\"tenants\":[\"acme\"],\"exp\":%" G_GINT64_FORMAT "}",
                                                     now () - 120);
  g_autofree char *skewed_claims = g_strdup_printf ("{\"sub\":\"alice\",\"tenants\":[\"acme\"],\"exp\":%" G_GINT64_FORMAT "}",
                                                    now () - 10);
  g_autofree char *expired = make_jwt ("HS256", NULL, expired_claims, HS_SECRET);
  g_autofree char *skewed = make_jwt ("HS256", NULL, skewed_claims, HS_SECRET);
  g_autofree char *expired_rs = make_jwt ("RS256", NULL, expired_claims, "rsa.pem");
  g_autofree char *authorization = g_strconcat ("Bearer ", expired, NULL);

  admit_refused (pipeline, authorization, "acme", SYMFONIC_ERROR_UNAUTHORIZED, "The bearer token has expired");
  admit_unauthorized (pipeline, expired_rs, "acme");
  /* ten seconds past exp is within the leeway ... */
  admit_jwt_ok (pipeline, skewed, "acme", "alice", FALSE);
  /* ... and not without one */
  admit_unauthorized (strict, skewed, "acme");
}

static void
test_auth_jwt_not_before (void)
{
  g_autoptr(SymfonicPipeline) pipeline = load_ok (JWT_SETTINGS);
  g_autoptr(SymfonicPipeline) strict = load_ok (JWT_SETTINGS "jwt-leeway=0\n");
  g_autofree char *early_claims = claims_with ("\"nbf\":9999999999");
  g_autofree char *future = g_strdup_printf ("\"nbf\":%" G_GINT64_FORMAT, now () + 120);
  g_autofree char *near = g_strdup_printf ("\"nbf\":%" G_GINT64_FORMAT, now () + 10);
  g_autofree char *past = g_strdup_printf ("\"nbf\":%" G_GINT64_FORMAT, now () - 10);
  g_autofree char *future_claims = claims_with (future);
  g_autofree char *near_claims = claims_with (near);
  g_autofree char *past_claims = claims_with (past);
  g_autofree char *early = make_jwt ("HS256", NULL, early_claims, HS_SECRET);
  g_autofree char *beyond = make_jwt ("HS256", NULL, future_claims, HS_SECRET);
  g_autofree char *within = make_jwt ("HS256", NULL, near_claims, HS_SECRET);
  g_autofree char *valid = make_jwt ("HS256", NULL, past_claims, HS_SECRET);
  g_autofree char *authorization = g_strconcat ("Bearer ", beyond, NULL);

  admit_refused (pipeline, authorization, "acme", SYMFONIC_ERROR_UNAUTHORIZED, "The bearer token is not valid yet");
  admit_unauthorized (pipeline, early, "acme");
  admit_jwt_ok (pipeline, within, "acme", "alice", FALSE);
  admit_unauthorized (strict, within, "acme");
  admit_jwt_ok (strict, valid, "acme", "alice", FALSE);
}

static void
test_auth_jwt_bad_signature (void)
{
  g_autoptr(SymfonicPipeline) pipeline = load_ok (JWT_SETTINGS);
  g_autofree char *claims = claims_with (NULL);
  g_autofree char *admin_claims = claims_with ("\"admin\":true");
  g_autofree char *other_secret = make_jwt ("HS256", NULL, claims, HS_OTHER_SECRET);
  g_autofree char *other_key = make_jwt ("RS256", NULL, claims, "rsa-other.pem");
  g_autofree char *valid = make_jwt ("HS256", NULL, claims, HS_SECRET);
  g_autofree char *admin = make_jwt ("HS256", NULL, admin_claims, HS_SECRET);
  g_auto(GStrv) valid_parts = g_strsplit (valid, ".", -1);
  g_auto(GStrv) admin_parts = g_strsplit (admin, ".", -1);
  /* alice's signature on claims that make her an admin */
  g_autofree char *tampered = g_strjoin (".", valid_parts[0], admin_parts[1], valid_parts[2], NULL);
  g_autofree char *unsigned_token = g_strjoin (".", valid_parts[0], valid_parts[1], "", NULL);
  g_autofree char *garbage_signature = g_strjoin (".", valid_parts[0], valid_parts[1], "AAAA", NULL);

  admit_unauthorized (pipeline, other_secret, "acme");
  admit_unauthorized (pipeline, other_key, "acme");
  admit_unauthorized (pipeline, tampered, "acme");
  admit_unauthorized (pipeline, unsigned_token, "acme");
  admit_unauthorized (pipeline, garbage_signature, "acme");
  admit_unauthorized (pipeline, "eyJhbGciOiJIUzI1NiJ9.not-json.sig", "acme");
  admit_unauthorized (pipeline, "a.b.c", "acme");
  admit_unauthorized (pipeline, "..", "acme");
}

static void
test_auth_jwt_alg_none (void)
{
  g_autoptr(SymfonicPipeline) pipeline = load_ok (JWT_SETTINGS);
  g_autofree char *claims = claims_with (NULL);
  g_autofree char *none = make_jwt ("none", NULL, claims, NULL);
  g_autofree char *none_upper = make_jwt ("none", "{\"alg\":\"NONE\",\"typ\":\"JWT\"}", claims, NULL);
  g_autofree char *no_alg = make_jwt ("none", "{\"typ\":\"JWT\"}", claims, NULL);
  g_autofree char *valid = make_jwt ("HS256", NULL, claims, HS_SECRET);
  g_auto(GStrv) parts = g_strsplit (valid, ".", -1);
  g_autofree char *none_header = base64url_text ("{\"alg\":\"none\",\"typ\":\"JWT\"}");
  /* a real signature behind a header that says none */
  g_autofree char *none_signed = g_strjoin (".", none_header, parts[1], parts[2], NULL);
  g_autofree char *crit = make_jwt ("HS256", "{\"alg\":\"HS256\",\"crit\":[\"x\"],\"x\":1}", claims, HS_SECRET);

  admit_unauthorized (pipeline, none, "acme");
  admit_unauthorized (pipeline, none_upper, "acme");
  admit_unauthorized (pipeline, no_alg, "acme");
  admit_unauthorized (pipeline, none_signed, "acme");
  admit_unauthorized (pipeline, crit, "acme");
}

/* The header is read before the signature is checked, so anyone can send
 * one: it must be strict JSON (RFC 7515 4: names are unique) and its
 * nesting bounded, or 200,000 arrays overflow the stack inside json-glib. */
static void
test_auth_jwt_strict_header (void)
{
  g_autoptr(SymfonicPipeline) pipeline = load_ok (JWT_SETTINGS);
  g_autofree char *claims = claims_with (NULL);
  g_autofree char *twice = make_jwt ("HS256", "{\"alg\":\"HS256\",\"typ\":\"JWT\",\"alg\":\"HS256\"}",
                                     claims, HS_SECRET);
  GString *deep = g_string_new (NULL);
  g_autofree char *deep_header = NULL;
  g_autofree char *encoded_deep = NULL;
  g_autofree char *deep_token = NULL;

  for (guint i = 0; i < 200000; i++)
    g_string_append_c (deep, '[');
  for (guint i = 0; i < 200000; i++)
    g_string_append_c (deep, ']');
  deep_header = g_string_free (deep, FALSE);
  encoded_deep = base64url_text (deep_header);
  deep_token = g_strconcat (encoded_deep, ".e30.sig", NULL);

  admit_unauthorized (pipeline, twice, "acme");
  admit_unauthorized (pipeline, deep_token, "acme");
}

static void
test_auth_jwt_confusion (void)
{
  g_autoptr(SymfonicPipeline) both = load_ok (JWT_SETTINGS);
  g_autoptr(SymfonicPipeline) rsa_only = load_ok ("jwt-public-key-file=rsa.pub\n");
  g_autoptr(SymfonicPipeline) hs_only = load_ok ("jwt-hs256-secret-file=secret\n");
  g_autoptr(SymfonicPipeline) rs_listed = load_ok (JWT_SETTINGS "jwt-algorithms=RS256\n");
  g_autoptr(SymfonicPipeline) hs_listed = load_ok (JWT_SETTINGS "jwt-algorithms=HS256\n");
  g_autofree char *claims = claims_with (NULL);
  g_autofree char *pem = read_file ("rsa.pub");
  g_autofree char *pem_trimmed = g_strstrip (g_strdup (pem));
  /* the classic forgery: HS256 keyed with the public key everyone has */
  g_autofree char *forged = make_jwt ("HS256", NULL, claims, pem);
  g_autofree char *forged_trimmed = make_jwt ("HS256", NULL, claims, pem_trimmed);
  /* and an HS256 token with the secret, relabelled RS256 */
  g_autofree char *hs = make_jwt ("HS256", NULL, claims, HS_SECRET);
  g_auto(GStrv) hs_parts = g_strsplit (hs, ".", -1);
  g_autofree char *rs_header = base64url_text ("{\"alg\":\"RS256\",\"typ\":\"JWT\"}");
  g_autofree char *relabelled = g_strjoin (".", rs_header, hs_parts[1], hs_parts[2], NULL);
  g_autofree char *rs = make_jwt ("RS256", NULL, claims, "rsa.pem");

  admit_unauthorized (both, forged, "acme");
  admit_unauthorized (both, forged_trimmed, "acme");
  admit_unauthorized (rsa_only, forged, "acme");
  admit_unauthorized (rsa_only, forged_trimmed, "acme");
  admit_unauthorized (both, relabelled, "acme");
  admit_unauthorized (hs_only, rs, "acme");
  admit_unauthorized (rsa_only, hs, "acme");

  /* the allow-list decides, also with both keys configured */
  admit_jwt_ok (rs_listed, rs, "acme", "alice", FALSE);
  admit_unauthorized (rs_listed, hs, "acme");
  admit_jwt_ok (hs_listed, hs, "acme", "alice", FALSE);
  admit_unauthorized (hs_listed, rs, "acme");
}

static void
test_auth_jwt_claims (void)
{
  g_autoptr(SymfonicPipeline) pipeline = load_ok (JWT_SETTINGS);
  g_autoptr(SymfonicPipeline) custom = load_ok (JWT_SETTINGS
                                                "jwt-principal-claim=email\n"
                                                "jwt-tenants-claim=orgs\n"
                                                "jwt-admin-claim=is_admin\n");
  gint64 exp = now () + 600;
  g_autofree char *exp_text = g_strdup_printf ("%" G_GINT64_FORMAT, exp);
  g_autofree char *custom_claims = g_strdup_printf ("{\"email\":\"dana@example.com\",\"sub\":\"x\","
                                                    "\"orgs\":[\"acme\"],\"tenants\":[\"globex\"],"
                                                    "\"is_admin\":true,\"admin\":false,"
                                                    "\"exp\":%" G_GINT64_FORMAT "}", exp);
  g_autofree char *custom_token = make_jwt ("HS256", NULL, custom_claims, HS_SECRET);
  const char *invalid[] = {
    "{\"tenants\":[\"acme\"],\"exp\":EXP}",
    "{\"sub\":\"\",\"tenants\":[\"acme\"],\"exp\":EXP}",
    "{\"sub\":42,\"tenants\":[\"acme\"],\"exp\":EXP}",
    "{\"sub\":\"alice\",\"exp\":EXP}",
    "{\"sub\":\"alice\",\"tenants\":[],\"exp\":EXP}",
    "{\"sub\":\"alice\",\"tenants\":\"\",\"exp\":EXP}",
    "{\"sub\":\"alice\",\"tenants\":[\"acme\",7],\"exp\":EXP}",
    "{\"sub\":\"alice\",\"tenants\":{\"acme\":true},\"exp\":EXP}",
    "{\"sub\":\"alice\",\"tenants\":[\"acme\"],\"admin\":\"true\",\"exp\":EXP}",
    "{\"sub\":\"alice\",\"tenants\":[\"acme\"],\"exp\":\"EXP\"}",
    "{\"sub\":\"alice\",\"tenants\":[\"acme\"],\"nbf\":\"0\",\"exp\":EXP}",
    /* no exp at all */
    "{\"sub\":\"alice\",\"tenants\":[\"acme\"]}",
  };

  admit_jwt_ok (custom, custom_token, "acme", "dana@example.com", TRUE);

  for (guint i = 0; i < G_N_ELEMENTS (invalid); i++)
    {
      g_autoptr(GString) claims = g_string_new (invalid[i]);
      g_autofree char *token = NULL;

      g_string_replace (claims, "EXP", exp_text, 0);
      token = make_jwt ("HS256", NULL, claims->str, HS_SECRET);

      g_test_message ("claims %s", claims->str);
      admit_unauthorized (pipeline, token, "acme");
    }
}

static void
test_auth_jwt_issuer_audience (void)
{
  g_autoptr(SymfonicPipeline) pipeline = load_ok (JWT_SETTINGS
                                                  "jwt-issuer=https://issuer.example\n"
                                                  "jwt-audience=symfonic\n");
  g_autofree char *good = claims_with ("\"iss\":\"https://issuer.example\",\"aud\":\"symfonic\"");
  g_autofree char *good_list = claims_with ("\"iss\":\"https://issuer.example\",\"aud\":[\"other\",\"symfonic\"]");
  g_autofree char *wrong_iss = claims_with ("\"iss\":\"https://evil.example\",\"aud\":\"symfonic\"");
  g_autofree char *no_iss = claims_with ("\"aud\":\"symfonic\"");
  g_autofree char *wrong_aud = claims_with ("\"iss\":\"https://issuer.example\",\"aud\":\"other\"");
  g_autofree char *wrong_aud_list = claims_with ("\"iss\":\"https://issuer.example\",\"aud\":[\"other\"]");
  g_autofree char *no_aud = claims_with ("\"iss\":\"https://issuer.example\"");
  const char *refused[] = { wrong_iss, no_iss, wrong_aud, wrong_aud_list, no_aud };
  g_autofree char *token = make_jwt ("HS256", NULL, good, HS_SECRET);
  g_autofree char *token_list = make_jwt ("RS256", NULL, good_list, "rsa.pem");

  admit_jwt_ok (pipeline, token, "acme", "alice", FALSE);
  admit_jwt_ok (pipeline, token_list, "acme", "alice", FALSE);
  for (guint i = 0; i < G_N_ELEMENTS (refused); i++)
    {
      g_autofree char *refused_token = make_jwt ("HS256", NULL, refused[i], HS_SECRET);

      g_test_message ("claims %s", refused[i]);
      admit_unauthorized (pipeline, refused_token, "acme");
    }
}

static void
test_auth_jwt_and_tokens (void)
{
  g_autoptr(SymfonicPipeline) pipeline = load_ok (TOKENS_SETTINGS JWT_SETTINGS);
  g_autofree char *claims = claims_with (NULL);
  g_autofree char *hs = make_jwt ("HS256", NULL, claims, HS_SECRET);
  g_autoptr(SymfonicInvocation) bob = admit_ok (pipeline, "Bearer " TOKEN_BOB, "globex");

  g_assert_cmpstr (symfonic_invocation_get_principal_id (bob), ==, "bob");
  admit_jwt_ok (pipeline, hs, "acme", "alice", FALSE);
  admit_unauthorized (pipeline, "unknown", "acme");
}

static void
remove_tmp_dir (void)
{
  g_autoptr(GDir) dir = g_dir_open (tmp_dir, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = tmp_path (name);

      g_unlink (path);
    }
  g_rmdir (tmp_dir);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;
  int ret;

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  openssl = g_find_program_in_path ("openssl");
  if (openssl == NULL)
    g_error ("test-auth needs the openssl command (package openssl) to make keys and sign tokens");

  g_unsetenv ("SYMFONIC_PLUGIN_PATH");
  symfonic_registry_scan (symfonic_registry_get_default (), &error);
  g_assert_no_error (error);

  tmp_dir = g_dir_make_tmp ("symfonic-test-auth-XXXXXX", &error);
  g_assert_no_error (error);
  make_keys ();
  write_tokens_file ();
  write_file ("secret", HS_SECRET "\n");
  write_file ("short-secret", "too short\n");

  g_test_add_func ("/auth/token/valid", test_auth_token_valid);
  g_test_add_func ("/auth/token/admin", test_auth_admin);
  g_test_add_func ("/auth/token/missing-header", test_auth_missing_header);
  g_test_add_func ("/auth/token/malformed-header", test_auth_malformed_header);
  g_test_add_func ("/auth/token/wrong-token", test_auth_wrong_token);
  g_test_add_func ("/auth/token/forged-tenant", test_auth_forged_tenant);
  g_test_add_func ("/auth/token/tenant-header", test_auth_tenant_header);
  g_test_add_func ("/auth/token/body-tenant-ignored", test_auth_body_tenant_ignored);
  g_test_add_func ("/auth/token/demo-tokens", test_auth_demo_tokens);
  for (guint i = 0; i < G_N_ELEMENTS (bad_tokens_files); i++)
    {
      g_autofree char *path = g_strconcat ("/auth/tokens-file/", bad_tokens_files[i].name, NULL);

      g_test_add_data_func (path, &bad_tokens_files[i], test_auth_bad_tokens_file);
    }
  g_test_add_func ("/auth/tokens-file/missing", test_auth_missing_tokens_file);
  for (guint i = 0; i < G_N_ELEMENTS (bad_settings); i++)
    {
      g_autofree char *path = g_strconcat ("/auth/settings/", bad_settings[i].name, NULL);

      g_test_add_data_func (path, &bad_settings[i], test_auth_bad_settings);
    }
  g_test_add_func ("/auth/jwt/valid", test_auth_jwt_valid);
  g_test_add_func ("/auth/jwt/es256", test_auth_jwt_es256);
  g_test_add_func ("/auth/jwt/expiry", test_auth_jwt_expiry);
  g_test_add_func ("/auth/jwt/not-before", test_auth_jwt_not_before);
  g_test_add_func ("/auth/jwt/bad-signature", test_auth_jwt_bad_signature);
  g_test_add_func ("/auth/jwt/alg-none", test_auth_jwt_alg_none);
  g_test_add_func ("/auth/jwt/strict-header", test_auth_jwt_strict_header);
  g_test_add_func ("/auth/jwt/confusion", test_auth_jwt_confusion);
  g_test_add_func ("/auth/jwt/claims", test_auth_jwt_claims);
  g_test_add_func ("/auth/jwt/issuer-audience", test_auth_jwt_issuer_audience);
  g_test_add_func ("/auth/jwt/with-tokens-file", test_auth_jwt_and_tokens);

  ret = g_test_run ();

  remove_tmp_dir ();
  g_free (tmp_dir);
  g_free (openssl);

  return ret;
}
