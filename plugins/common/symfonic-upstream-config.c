/* symfonic-upstream-config.c: settings every HTTP source checks alike
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <glib/gi18n-lib.h>
#include <libsoup/soup.h>

#include "symfonic-upstream-config.h"

/* An absolute http or https URL with a host, or a config error naming
 * @key. */
GUri *
symfonic_upstream_parse_url (const char  *key,
                             const char  *url,
                             GError     **error)
{
  g_autoptr(GUri) uri = NULL;
  const char *scheme;
  const char *host;

  if (url == NULL || *url == '\0')
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("%s: an http or https URL is required"), key);
      return NULL;
    }

  /* a URL may carry a password: an error shows none of it */
  uri = g_uri_parse (url, SOUP_HTTP_URI_FLAGS, NULL);
  if (uri == NULL)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, _("%s: the value is not a URL"), key);
      return NULL;
    }
  scheme = g_uri_get_scheme (uri);
  host = g_uri_get_host (uri);
  if ((g_ascii_strcasecmp (scheme, "http") != 0 && g_ascii_strcasecmp (scheme, "https") != 0) ||
      host == NULL || *host == '\0')
    {
      g_autofree char *shown = g_uri_to_string_partial (uri, G_URI_HIDE_USERINFO | G_URI_HIDE_QUERY |
                                                        G_URI_HIDE_FRAGMENT);

      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("%s: “%s” is not an http or https URL"), key, shown);
      return NULL;
    }

  return g_steal_pointer (&uri);
}

static gboolean
is_token (const char *text,
          gsize       length)
{
  if (length == 0)
    return FALSE;

  for (gsize i = 0; i < length; i++)
    {
      if (!g_ascii_isalnum (text[i]) && strchr ("!#$%&'*+-.^_`|~", text[i]) == NULL)
        return FALSE;
    }

  return TRUE;
}

static gboolean
is_reserved (const char         *name,
             const char * const *reserved)
{
  for (guint i = 0; reserved[i] != NULL; i++)
    {
      if (g_ascii_strcasecmp (name, reserved[i]) == 0)
        return TRUE;
    }

  return FALSE;
}

/* "Name: value" settings as head lines, each ending in CRLF; names in
 * @reserved are the source's own. Returns NULL with a config error naming
 * @key. */
char *
symfonic_header_lines_parse (const char         *key,
                             const char * const *headers,
                             const char * const *reserved,
                             GError            **error)
{
  g_autoptr(GString) lines = g_string_new (NULL);

  for (guint i = 0; headers != NULL && headers[i] != NULL; i++)
    {
      const char *line = headers[i];
      const char *colon = strchr (line, ':');
      g_autofree char *name = NULL;
      g_autofree char *value = NULL;

      /* the line may hold a secret: only its place is named */
      if (colon == NULL || !is_token (line, colon - line))
        {
          g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                       _("%s: entry %u is not “Name: value”"), key, i + 1);
          return NULL;
        }

      name = g_strndup (line, colon - line);
      value = g_strstrip (g_strdup (colon + 1));
      for (const char *p = value; *p != '\0'; p++)
        {
          if (g_ascii_iscntrl (*p) && *p != '\t')
            {
              g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                           _("%s: the value of “%s” has a control character"), key, name);
              return NULL;
            }
        }
      if (is_reserved (name, reserved))
        {
          g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                       _("%s: “%s” is set by the source itself"), key, name);
          return NULL;
        }

      g_string_append_printf (lines, "%s: %s\r\n", name, value);
    }

  return g_string_free (g_steal_pointer (&lines), FALSE);
}
