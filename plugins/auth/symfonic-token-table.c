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
 * file is checked strictly at load, naming the file, line and group of the
 * first problem: a typo that silently dropped a key (`admin`, say) would
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

G_GNUC_PRINTF (5, 6)
static void
set_error (GError     **error,
           const char  *display,
           guint        line,
           const char  *group,
           const char  *format,
           ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);

  if (line > 0)
    g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_PARSE,
                 "%s:%u: [%s]: %s", display, line, group, message);
  else
    g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_PARSE,
                 "%s: [%s]: %s", display, group, message);
}

static char *
key_id (const char *group,
        const char *key)
{
  return g_strconcat (group, "\n", key, NULL);
}

/* GKeyFile merges a repeated group and keeps the last of a repeated key
 * without a word, and does not tell where anything was. One pass over the
 * lines finds both, so the errors below can point at a line. */
static gboolean
scan_lines (const char  *contents,
            const char  *display,
            GHashTable  *group_lines,
            GHashTable  *key_lines,
            GError     **error)
{
  g_auto(GStrv) lines = g_strsplit (contents, "\n", -1);
  g_autofree char *group = NULL;

  for (guint i = 0; lines[i] != NULL; i++)
    {
      char *line = g_strstrip (lines[i]);
      guint number = i + 1;
      char *equals;

      if (*line == '\0' || *line == '#')
        continue;

      if (*line == '[')
        {
          char *end = strchr (line, ']');

          if (end == NULL)
            continue;
          g_free (group);
          group = g_strndup (line + 1, end - line - 1);
          if (g_hash_table_contains (group_lines, group))
            {
              set_error (error, display, number, group, _("the group is repeated (first on line %u)"),
                         GPOINTER_TO_UINT (g_hash_table_lookup (group_lines, group)));
              return FALSE;
            }
          g_hash_table_insert (group_lines, g_strdup (group), GUINT_TO_POINTER (number));
          continue;
        }

      equals = strchr (line, '=');
      if (group != NULL && equals != NULL)
        {
          g_autofree char *key = g_strstrip (g_strndup (line, equals - line));
          g_autofree char *id = key_id (group, key);

          if (g_hash_table_contains (key_lines, id))
            {
              set_error (error, display, number, group, _("key “%s” is repeated (first on line %u)"),
                         key, GPOINTER_TO_UINT (g_hash_table_lookup (key_lines, id)));
              return FALSE;
            }
          g_hash_table_insert (key_lines, g_steal_pointer (&id), GUINT_TO_POINTER (number));
        }
    }

  return TRUE;
}

static guint
line_of (GHashTable *key_lines,
         const char *group,
         const char *key)
{
  g_autofree char *id = key_id (group, key);

  return GPOINTER_TO_UINT (g_hash_table_lookup (key_lines, id));
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

static gboolean
get_flag (GKeyFile    *key_file,
          const char  *display,
          GHashTable  *key_lines,
          const char  *group,
          const char  *key,
          gboolean    *value,
          GError     **error)
{
  g_autoptr(GError) local_error = NULL;

  *value = FALSE;
  if (!g_key_file_has_key (key_file, group, key, NULL))
    return TRUE;

  *value = g_key_file_get_boolean (key_file, group, key, &local_error);
  if (local_error != NULL)
    {
      set_error (error, display, line_of (key_lines, group, key), group,
                 _("“%s” must be true or false"), key);
      return FALSE;
    }

  return TRUE;
}

static SymfonicTokenPrincipal *
load_principal (GKeyFile    *key_file,
                const char  *display,
                GHashTable  *group_lines,
                GHashTable  *key_lines,
                const char  *group,
                GError     **error)
{
  g_autoptr(GPtrArray) tenants = g_ptr_array_new_with_free_func (g_free);
  g_auto(GStrv) keys = g_key_file_get_keys (key_file, group, NULL, NULL);
  g_auto(GStrv) tenant_list = NULL;
  g_autofree char *hex = NULL;
  SymfonicTokenPrincipal *principal;
  guint group_line = GPOINTER_TO_UINT (g_hash_table_lookup (group_lines, group));
  guint8 digest[SYMFONIC_TOKEN_DIGEST_LENGTH];
  gboolean admin;
  gboolean demo;

  if (!g_str_has_prefix (group, GROUP_PREFIX) || group[strlen (GROUP_PREFIX)] == '\0')
    {
      set_error (error, display, group_line, group,
                 _("unknown group: a tokens file holds [principal:NAME] groups"));
      return NULL;
    }

  for (guint i = 0; keys != NULL && keys[i] != NULL; i++)
    {
      if (g_str_equal (keys[i], "token"))
        {
          set_error (error, display, line_of (key_lines, group, keys[i]), group,
                     _("tokens are never stored in clear: give their SHA-256 as “token-sha256”"));
          return NULL;
        }
      if (!g_strv_contains (known_keys, keys[i]))
        {
          set_error (error, display, line_of (key_lines, group, keys[i]), group,
                     _("unknown key “%s” (known: token-sha256, tenants, admin, demo)"), keys[i]);
          return NULL;
        }
    }

  hex = g_key_file_get_string (key_file, group, "token-sha256", NULL);
  if (hex == NULL)
    {
      set_error (error, display, group_line, group, _("missing key “token-sha256”"));
      return NULL;
    }
  if (!parse_digest (g_strstrip (hex), digest))
    {
      set_error (error, display, line_of (key_lines, group, "token-sha256"), group,
                 _("“token-sha256” must be 64 hexadecimal digits, the SHA-256 of the token"));
      return NULL;
    }

  tenant_list = g_key_file_get_string_list (key_file, group, "tenants", NULL, NULL);
  if (tenant_list == NULL)
    {
      set_error (error, display, group_line, group, _("missing key “tenants”"));
      return NULL;
    }
  for (guint i = 0; tenant_list[i] != NULL; i++)
    {
      const char *tenant = g_strstrip (tenant_list[i]);

      if (!symfonic_auth_is_tenant_name (tenant))
        {
          set_error (error, display, line_of (key_lines, group, "tenants"), group,
                     _("“tenants” must list tenant names without spaces or commas"));
          return NULL;
        }
      g_ptr_array_add (tenants, g_strdup (tenant));
    }
  if (tenants->len == 0)
    {
      set_error (error, display, line_of (key_lines, group, "tenants"), group,
                 _("“tenants” must name at least one tenant"));
      return NULL;
    }
  g_ptr_array_add (tenants, NULL);

  if (!get_flag (key_file, display, key_lines, group, "admin", &admin, error) ||
      !get_flag (key_file, display, key_lines, group, "demo", &demo, error))
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
 * Loads and checks @file. Errors name the file, the line and the group.
 *
 * Returns: (transfer full) (nullable): the table, or %NULL on error
 */
SymfonicTokenTable *
symfonic_token_table_new_from_file (GFile   *file,
                                    GError **error)
{
  g_autoptr(SymfonicTokenTable) self = g_new0 (SymfonicTokenTable, 1);
  g_autoptr(GHashTable) group_lines = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) key_lines = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GKeyFile) key_file = g_key_file_new ();
  g_autoptr(GError) local_error = NULL;
  g_autofree char *display = g_file_get_parse_name (file);
  g_autofree char *contents = NULL;
  g_auto(GStrv) groups = NULL;
  gsize length;

  self->principals = g_ptr_array_new_with_free_func (principal_free);

  if (!symfonic_config_file_load (file, SYMFONIC_CONFIG_FILE_MAX_SIZE, &contents, &length, error))
    return NULL;

  if (!scan_lines (contents, display, group_lines, key_lines, error))
    return NULL;

  if (!g_key_file_load_from_data (key_file, contents, length, G_KEY_FILE_NONE, &local_error))
    {
      g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_PARSE, "%s: %s", display, local_error->message);
      return NULL;
    }

  groups = g_key_file_get_groups (key_file, NULL);
  for (guint i = 0; groups[i] != NULL; i++)
    {
      SymfonicTokenPrincipal *principal =
        load_principal (key_file, display, group_lines, key_lines, groups[i], error);

      if (principal == NULL)
        return NULL;

      /* Two principals with one token would make who is authenticated
       * depend on file order. */
      for (guint j = 0; j < self->principals->len; j++)
        {
          const SymfonicTokenPrincipal *other = g_ptr_array_index (self->principals, j);

          if (memcmp (other->digest, principal->digest, sizeof principal->digest) == 0)
            {
              set_error (error, display, line_of (key_lines, groups[i], "token-sha256"), groups[i],
                         _("“token-sha256” is the same as in [%s%s]"), GROUP_PREFIX, other->name);
              principal_free (principal);
              return NULL;
            }
        }

      self->has_demo |= principal->demo;
      g_ptr_array_add (self->principals, principal);
    }

  if (self->principals->len == 0)
    {
      g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_PARSE,
                   _("%s: no [principal:NAME] groups"), display);
      return NULL;
    }

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
