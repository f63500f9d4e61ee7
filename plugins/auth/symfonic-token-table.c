/* symfonic-token-table.c: opaque bearer tokens, stored as SHA-256 digests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include <symfonic.h>

#include "symfonic-token-table.h"

/* A tokens file holds one group per principal:
 *
 *   [principal:alice]
 *   token-sha256=<64 hex digits: SHA-256 of the token>
 *   tenants=acme;demo
 *   admin=false
 *   demo=true
 *
 * Only digests are stored, so a leaked file does not leak credentials. The
 * file is checked strictly at load, naming the file, line and group of
 * every problem: a typo that silently dropped a key (`admin`, say) would
 * otherwise change who may do what. */
struct _SymfonicTokenTable
{
  /* SymfonicTokenPrincipal, in file order */
  GPtrArray *principals;
  gboolean   has_demo;
};

#define GROUP_PREFIX "principal:"

static const char * const known_keys[] = { "token-sha256", "tenants", "admin", "demo", NULL };

static void
principal_free (gpointer data)
{
  SymfonicTokenPrincipal *principal = data;

  g_free (principal->name);
  g_strfreev (principal->tenants);
  g_free (principal);
}

void
symfonic_token_table_free (SymfonicTokenTable *self)
{
  g_ptr_array_unref (self->principals);
  g_free (self);
}

/* Tenants are compared byte for byte with the X-Tenant-ID header, and a
 * repeated header reaches us joined with ", ": a name with a comma or a
 * space could be matched by two headers that each name something else. */
gboolean
symfonic_auth_is_tenant_name (const char *text)
{
  if (text == NULL || *text == '\0' || strlen (text) > 256 || !g_utf8_validate (text, -1, NULL))
    return FALSE;

  for (const char *p = text; *p != '\0'; p++)
    {
      if (g_ascii_isspace (*p) || g_ascii_iscntrl (*p) || *p == ',')
        return FALSE;
    }

  return TRUE;
}

static gboolean
parse_digest (const char *text,
              guint8     *digest)
{
  if (strlen (text) != 2 * SYMFONIC_TOKEN_DIGEST_LENGTH)
    return FALSE;

  for (guint i = 0; i < SYMFONIC_TOKEN_DIGEST_LENGTH; i++)
    {
      int high = g_ascii_xdigit_value (text[2 * i]);
      int low = g_ascii_xdigit_value (text[2 * i + 1]);

      if (high < 0 || low < 0)
        return FALSE;
      digest[i] = (guint8) (high << 4 | low);
    }

  return TRUE;
}

/* Every problem of the file is recorded in @config, which lists them at
 * the end, so that one load names them all; a principal with a problem
 * is left out. */
static gboolean
get_flag (SymfonicConfigFile *config,
          const char         *group,
          const char         *key,
          gboolean           *value)
{
  GKeyFile *key_file = symfonic_config_file_get_key_file (config);
  g_autoptr(GError) local_error = NULL;
  g_autofree char *text = NULL;

  *value = FALSE;
  if (!g_key_file_has_key (key_file, group, key, NULL))
    return TRUE;

  *value = g_key_file_get_boolean (key_file, group, key, &local_error);
  if (local_error != NULL)
    {
      text = g_key_file_get_value (key_file, group, key, NULL);
      return symfonic_config_file_add_error (config, group, key, _("expected true or false, found “%s”"),
                                             text != NULL ? text : "");
    }

  return TRUE;
}

static SymfonicTokenPrincipal *
load_principal (SymfonicConfigFile *config,
                const char         *group)
{
  GKeyFile *key_file = symfonic_config_file_get_key_file (config);
  g_autoptr(GPtrArray) tenants = g_ptr_array_new_with_free_func (g_free);
  g_auto(GStrv) keys = NULL;
  g_auto(GStrv) tenant_list = NULL;
  g_autofree char *hex = NULL;
  SymfonicTokenPrincipal *principal;
  guint8 digest[SYMFONIC_TOKEN_DIGEST_LENGTH];
  gboolean admin;
  gboolean demo;
  gboolean ok = TRUE;

  if (!g_str_has_prefix (group, GROUP_PREFIX) || group[strlen (GROUP_PREFIX)] == '\0')
    {
      symfonic_config_file_add_error (config, group, NULL,
                                      _("expected a group [principal:NAME], found an unknown one"));
      return NULL;
    }

  keys = g_key_file_get_keys (key_file, group, NULL, NULL);
  for (guint i = 0; keys != NULL && keys[i] != NULL; i++)
    {
      /* the token itself is not repeated */
      if (g_str_equal (keys[i], "token"))
        ok = symfonic_config_file_add_error (config, group, "token",
                                             _("expected “token-sha256”, the token's SHA-256, found the token "
                                               "in clear: tokens are never stored in clear"));
      else if (!g_strv_contains (known_keys, keys[i]))
        ok = symfonic_config_file_add_error (config, group, keys[i],
                                             _("expected one of token-sha256, tenants, admin, demo, "
                                               "found an unknown key"));
    }

  hex = g_key_file_get_string (key_file, group, "token-sha256", NULL);
  if (hex == NULL)
    ok = symfonic_config_file_add_error (config, group, NULL,
                                         _("expected a key “token-sha256”, the SHA-256 of the token, found none"));
  else if (!parse_digest (g_strstrip (hex), digest))
    {
      /* not echoed: a token pasted here by mistake would go to the log */
      gsize length = strlen (hex);

      ok = symfonic_config_file_add_error (config, group, "token-sha256",
                                           length == 2 * SYMFONIC_TOKEN_DIGEST_LENGTH
                                           ? _("expected 64 hexadecimal digits, the SHA-256 of the token, "
                                               "found %zu characters, not all hexadecimal")
                                           : _("expected 64 hexadecimal digits, the SHA-256 of the token, "
                                               "found %zu characters"),
                                           length);
    }

  tenant_list = g_key_file_get_string_list (key_file, group, "tenants", NULL, NULL);
  if (tenant_list == NULL)
    ok = symfonic_config_file_add_error (config, group, NULL,
                                         _("expected a key “tenants”, the tenants the principal may act for, "
                                           "found none"));
  for (guint i = 0; tenant_list != NULL && tenant_list[i] != NULL; i++)
    {
      const char *tenant = g_strstrip (tenant_list[i]);

      if (!symfonic_auth_is_tenant_name (tenant))
        ok = symfonic_config_file_add_error (config, group, "tenants",
                                             _("expected tenant names without spaces or commas, found “%s”"),
                                             tenant);
      else
        g_ptr_array_add (tenants, g_strdup (tenant));
    }
  if (tenant_list != NULL && tenant_list[0] == NULL)
    ok = symfonic_config_file_add_error (config, group, "tenants",
                                         _("expected at least one tenant, found none"));
  g_ptr_array_add (tenants, NULL);

  if (!get_flag (config, group, "admin", &admin))
    ok = FALSE;
  if (!get_flag (config, group, "demo", &demo))
    ok = FALSE;

  if (!ok)
    return NULL;

  principal = g_new0 (SymfonicTokenPrincipal, 1);
  principal->name = g_strdup (group + strlen (GROUP_PREFIX));
  principal->tenants = (GStrv) g_ptr_array_free (g_steal_pointer (&tenants), FALSE);
  principal->admin = admin;
  principal->demo = demo;
  memcpy (principal->digest, digest, sizeof digest);

  return principal;
}

/**
 * symfonic_token_table_new_from_file:
 * @file: a tokens file
 * @error: return location for a #GError
 *
 * Loads and checks @file. The error lists every problem of the file, one
 * per line, each naming the file, the line and the group.
 *
 * Returns: (transfer full) (nullable): the table, or %NULL on error
 */
SymfonicTokenTable *
symfonic_token_table_new_from_file (GFile   *file,
                                    GError **error)
{
  g_autoptr(SymfonicTokenTable) self = g_new0 (SymfonicTokenTable, 1);
  g_autoptr(SymfonicConfigFile) config = NULL;
  g_auto(GStrv) groups = NULL;

  self->principals = g_ptr_array_new_with_free_func (principal_free);

  config = symfonic_config_file_new_for_file_full (file, SYMFONIC_CONFIG_FILE_COLLECT_ERRORS, error);
  if (config == NULL)
    return NULL;

  groups = g_key_file_get_groups (symfonic_config_file_get_key_file (config), NULL);
  for (guint i = 0; groups[i] != NULL; i++)
    {
      SymfonicTokenPrincipal *principal = load_principal (config, groups[i]);
      gboolean twin = FALSE;

      if (principal == NULL)
        continue;

      /* Two principals with one token would make who is authenticated
       * depend on file order. */
      for (guint j = 0; j < self->principals->len && !twin; j++)
        {
          const SymfonicTokenPrincipal *other = g_ptr_array_index (self->principals, j);

          if (memcmp (other->digest, principal->digest, sizeof principal->digest) == 0)
            {
              symfonic_config_file_add_error (config, groups[i], "token-sha256",
                                              _("expected a token of this principal's own, found the one of "
                                                "[%s%s]"), GROUP_PREFIX, other->name);
              twin = TRUE;
            }
        }
      if (twin)
        {
          principal_free (principal);
          continue;
        }

      self->has_demo |= principal->demo;
      g_ptr_array_add (self->principals, principal);
    }

  if (symfonic_config_file_get_n_errors (config) == 0 && self->principals->len == 0)
    symfonic_config_file_add_error (config, NULL, NULL, _("expected [principal:NAME] groups, found none"));

  if (!symfonic_config_file_check_errors (config, error))
    return NULL;

  return g_steal_pointer (&self);
}

/* Examines every byte whatever the first difference, so the time taken
 * says nothing about how much of a digest matched. */
static gboolean
digest_equal (const guint8 *a,
              const guint8 *b)
{
  volatile guint8 difference = 0;

  for (guint i = 0; i < SYMFONIC_TOKEN_DIGEST_LENGTH; i++)
    difference |= a[i] ^ b[i];

  return difference == 0;
}

/**
 * symfonic_token_table_lookup:
 * @self: a #SymfonicTokenTable
 * @token: a bearer token, as presented
 *
 * Returns: (nullable): the principal @token belongs to, owned by @self
 */
const SymfonicTokenPrincipal *
symfonic_token_table_lookup (SymfonicTokenTable *self,
                             const char         *token)
{
  g_autoptr(GChecksum) checksum = g_checksum_new (G_CHECKSUM_SHA256);
  const SymfonicTokenPrincipal *found = NULL;
  guint8 digest[SYMFONIC_TOKEN_DIGEST_LENGTH];
  gsize length = sizeof digest;

  g_checksum_update (checksum, (const guchar *) token, strlen (token));
  g_checksum_get_digest (checksum, digest, &length);

  /* Every principal is compared, also after a match: which one matched
   * must not show in the time a refusal takes either. */
  for (guint i = 0; i < self->principals->len; i++)
    {
      const SymfonicTokenPrincipal *principal = g_ptr_array_index (self->principals, i);

      if (digest_equal (digest, principal->digest))
        found = principal;
    }

  return found;
}

gboolean
symfonic_token_table_has_demo (SymfonicTokenTable *self)
{
  return self->has_demo;
}
