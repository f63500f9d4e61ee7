/* symfonic-resume-token.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-resume-token-private.h"

/* A browser's EventSource cannot send Authorization or X-Tenant-ID, so a
 * resumable run's answer gives its client a token that stands for them,
 * for that run alone and for a while:
 *
 *   EXPIRES "." base64url(TENANT) "." base64url(PRINCIPAL) "." base64url(MAC)
 *
 * EXPIRES is the Unix time past which it is no longer taken, and MAC the
 * HMAC-SHA256, keyed by the pipeline's secret, of the run id, the tenant,
 * the principal and EXPIRES, each as a netstring after a label of the
 * format: no two sets of fields sign alike, whatever they hold. The token
 * carries the tenant and principal because a run is found by them; it
 * holds no credential, only the proof that the gateway gave it. Every
 * part is URL-safe, so that it goes in a query as it is. */

#define MAC_LABEL "symfonic-resume-token/1"
#define MAC_LENGTH 32
/* Bounds the work a request without credentials can ask for: more than
 * any tenant and principal the gateway gives a token for. */
#define MAX_TOKEN_LENGTH 1024
#define MAX_EXPIRES_DIGITS 19

static void
append_base64url (GString      *out,
                  const guint8 *data,
                  gsize         length)
{
  g_autofree char *text = g_base64_encode (data, length);

  for (const char *p = text; *p != '\0' && *p != '='; p++)
    g_string_append_c (out, *p == '+' ? '-' : *p == '/' ? '_' : *p);
}

/* The bytes of one base64url part, or NULL for anything but the
 * alphabet without padding. */
static GBytes *
decode_base64url (const char *text,
                  gsize       length)
{
  g_autoptr(GString) standard = g_string_sized_new (length + 3);
  g_autofree guchar *data = NULL;
  gsize decoded;

  if (length == 0 || length % 4 == 1)
    return NULL;
  for (gsize i = 0; i < length; i++)
    {
      char c = text[i];

      if (!g_ascii_isalnum (c) && c != '-' && c != '_')
        return NULL;
      g_string_append_c (standard, c == '-' ? '+' : c == '_' ? '/' : c);
    }
  while (standard->len % 4 != 0)
    g_string_append_c (standard, '=');
  data = g_base64_decode (standard->str, &decoded);

  return g_bytes_new_take (g_steal_pointer (&data), decoded);
}

static void
update_field (GHmac      *hmac,
              const char *field,
              gsize       length)
{
  g_autofree char *prefix = g_strdup_printf ("%" G_GSIZE_FORMAT ":", length);

  g_hmac_update (hmac, (const guchar *) prefix, strlen (prefix));
  g_hmac_update (hmac, (const guchar *) field, length);
  g_hmac_update (hmac, (const guchar *) ",", 1);
}

static void
compute_mac (GBytes     *secret,
             const char *run_id,
             const char *tenant_id,
             gsize       tenant_length,
             const char *principal_id,
             gsize       principal_length,
             gint64      expires,
             guint8      mac[MAC_LENGTH])
{
  gsize key_length;
  const guchar *key = g_bytes_get_data (secret, &key_length);
  g_autoptr(GHmac) hmac = g_hmac_new (G_CHECKSUM_SHA256, key, key_length);
  g_autofree char *expires_text = g_strdup_printf ("%" G_GINT64_FORMAT, expires);
  gsize length = MAC_LENGTH;

  g_hmac_update (hmac, (const guchar *) MAC_LABEL, strlen (MAC_LABEL));
  update_field (hmac, run_id, strlen (run_id));
  update_field (hmac, tenant_id, tenant_length);
  update_field (hmac, principal_id, principal_length);
  update_field (hmac, expires_text, strlen (expires_text));
  g_hmac_get_digest (hmac, mac, &length);
}

/* The token for @run_id of @tenant_id and @principal_id, taken until
 * @expires (Unix time, in seconds). */
char *
symfonic_resume_token_new (GBytes     *secret,
                           const char *run_id,
                           const char *tenant_id,
                           const char *principal_id,
                           gint64      expires)
{
  GString *token = g_string_new (NULL);
  guint8 mac[MAC_LENGTH];

  compute_mac (secret, run_id, tenant_id, strlen (tenant_id), principal_id, strlen (principal_id), expires, mac);
  g_string_append_printf (token, "%" G_GINT64_FORMAT ".", expires);
  append_base64url (token, (const guint8 *) tenant_id, strlen (tenant_id));
  g_string_append_c (token, '.');
  append_base64url (token, (const guint8 *) principal_id, strlen (principal_id));
  g_string_append_c (token, '.');
  append_base64url (token, mac, MAC_LENGTH);

  return g_string_free (token, FALSE);
}

/* Every byte is compared whatever the first difference: how long the
 * comparison took tells nothing of the right MAC. */
static gboolean
equal_in_constant_time (const guint8 *a,
                        const guint8 *b,
                        gsize         length)
{
  guint8 difference = 0;

  for (gsize i = 0; i < length; i++)
    difference |= a[i] ^ b[i];

  return difference == 0;
}

/* Whether @token is one the gateway gave for @run_id, still valid at
 * @now (Unix time, in seconds); if so, the tenant and principal it
 * stands for. */
gboolean
symfonic_resume_token_check (GBytes      *secret,
                             const char  *token,
                             const char  *run_id,
                             gint64       now,
                             char       **tenant_id,
                             char       **principal_id)
{
  g_auto(GStrv) parts = NULL;
  g_autoptr(GBytes) tenant = NULL;
  g_autoptr(GBytes) principal = NULL;
  g_autoptr(GBytes) given = NULL;
  guint8 mac[MAC_LENGTH];
  guint64 expires;
  gsize tenant_length, principal_length;
  const char *tenant_data, *principal_data;

  if (strlen (token) > MAX_TOKEN_LENGTH)
    return FALSE;
  parts = g_strsplit (token, ".", 5);
  if (g_strv_length (parts) != 4)
    return FALSE;
  if (*parts[0] == '\0' || strlen (parts[0]) > MAX_EXPIRES_DIGITS || strspn (parts[0], "0123456789") != strlen (parts[0]) ||
      !g_ascii_string_to_unsigned (parts[0], 10, 0, G_MAXINT64, &expires, NULL))
    return FALSE;
  tenant = decode_base64url (parts[1], strlen (parts[1]));
  principal = decode_base64url (parts[2], strlen (parts[2]));
  given = decode_base64url (parts[3], strlen (parts[3]));
  if (tenant == NULL || principal == NULL || given == NULL || g_bytes_get_size (given) != MAC_LENGTH)
    return FALSE;

  tenant_data = g_bytes_get_data (tenant, &tenant_length);
  principal_data = g_bytes_get_data (principal, &principal_length);
  compute_mac (secret, run_id, tenant_data, tenant_length, principal_data, principal_length, (gint64) expires, mac);
  if (!equal_in_constant_time (mac, g_bytes_get_data (given, NULL), MAC_LENGTH) || (gint64) expires < now)
    return FALSE;
  /* a string cut at a NUL would be another tenant or principal */
  if (memchr (tenant_data, '\0', tenant_length) != NULL || memchr (principal_data, '\0', principal_length) != NULL)
    return FALSE;

  /* what the gateway signed: a tenant and a principal it authenticated */
  *tenant_id = g_strndup (tenant_data, tenant_length);
  *principal_id = g_strndup (principal_data, principal_length);
  return TRUE;
}
