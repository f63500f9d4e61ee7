/* symfonic-keyfile.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>

#include "symfonic-error.h"
#include "symfonic-keyfile-private.h"

struct _SymfonicKeyFile
{
  GKeyFile   *key_file;
  char       *name;
  /* "group" and "group\nkey" -> line number */
  GHashTable *lines;
};

void
symfonic_key_file_free (SymfonicKeyFile *self)
{
  g_key_file_unref (self->key_file);
  g_hash_table_unref (self->lines);
  g_free (self->name);
  g_free (self);
}

static char *
line_key (const char *group,
          const char *key)
{
  return key != NULL ? g_strconcat (group, "\n", key, NULL) : g_strdup (group);
}

static gboolean
scan (SymfonicKeyFile  *self,
      const char       *data,
      gsize             length,
      GError          **error)
{
  g_autofree char *group = NULL;
  const char *end = data + length;
  const char *line = data;
  guint lineno = 0;

  while (line < end)
    {
      const char *eol = memchr (line, '\n', end - line);
      g_autofree char *text = g_strndup (line, (eol != NULL ? eol : end) - line);
      char *stripped;

      lineno++;
      line = eol != NULL ? eol + 1 : end;
      stripped = g_strstrip (text);

      if (*stripped == '\0' || *stripped == '#')
        continue;

      if (*stripped == '[')
        {
          char *close = strchr (stripped, ']');

          if (close == NULL || close[1] != '\0' || close == stripped + 1)
            {
              g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                           _("%s:%u: malformed group header “%s”"), self->name, lineno, stripped);
              return FALSE;
            }
          *close = '\0';
          g_free (group);
          group = g_strdup (stripped + 1);
          if (g_hash_table_contains (self->lines, group))
            {
              g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                           _("%s:%u: group [%s] already appears on line %u"), self->name, lineno, group,
                           GPOINTER_TO_UINT (g_hash_table_lookup (self->lines, group)));
              return FALSE;
            }
          g_hash_table_insert (self->lines, g_strdup (group), GUINT_TO_POINTER (lineno));
          continue;
        }

      {
        char *equals = strchr (stripped, '=');
        g_autofree char *id = NULL;

        if (equals == NULL || equals == stripped)
          {
            g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                         _("%s:%u: expected “key=value”, a [group] or a # comment, found “%s”"),
                         self->name, lineno, stripped);
            return FALSE;
          }
        *equals = '\0';
        if (group == NULL)
          {
            g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                         _("%s:%u: %s: key outside of any [group]"), self->name, lineno, g_strstrip (stripped));
            return FALSE;
          }
        id = line_key (group, g_strstrip (stripped));
        if (g_hash_table_contains (self->lines, id))
          {
            g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                         _("%s:%u: [%s] %s: key already set on line %u"), self->name, lineno,
                         group, stripped, GPOINTER_TO_UINT (g_hash_table_lookup (self->lines, id)));
            return FALSE;
          }
        g_hash_table_insert (self->lines, g_steal_pointer (&id), GUINT_TO_POINTER (lineno));
      }
    }

  return TRUE;
}

SymfonicKeyFile *
symfonic_key_file_new_from_data (const char  *data,
                                 gsize        length,
                                 const char  *display_name,
                                 GError     **error)
{
  g_autoptr(SymfonicKeyFile) self = g_new0 (SymfonicKeyFile, 1);
  g_autoptr(GError) local_error = NULL;

  self->key_file = g_key_file_new ();
  self->name = g_strdup (display_name);
  self->lines = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  if (!g_utf8_validate_len (data, length, NULL))
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("%s: not valid UTF-8 text"), display_name);
      return NULL;
    }

  if (!scan (self, data, length, error))
    return NULL;

  if (!g_key_file_load_from_data (self->key_file, data, length, G_KEY_FILE_NONE, &local_error))
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   "%s: %s", display_name, local_error->message);
      return NULL;
    }

  return g_steal_pointer (&self);
}

GKeyFile *
symfonic_key_file_get_key_file (SymfonicKeyFile *self)
{
  return self->key_file;
}

const char *
symfonic_key_file_get_name (SymfonicKeyFile *self)
{
  return self->name;
}

guint
symfonic_key_file_get_line (SymfonicKeyFile *self,
                            const char      *group,
                            const char      *key)
{
  g_autofree char *id = line_key (group, key);

  return GPOINTER_TO_UINT (g_hash_table_lookup (self->lines, id));
}

/* Every configuration error reads "FILE:LINE: [group] key: what is wrong";
 * without a key, the line is the group's. */
void
symfonic_key_file_set_error (SymfonicKeyFile  *self,
                             GError          **error,
                             const char       *group,
                             const char       *key,
                             const char       *format,
                             ...)
{
  g_autofree char *message = NULL;
  guint line = 0;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);

  if (key != NULL)
    line = symfonic_key_file_get_line (self, group, key);
  if (line == 0)
    {
      line = symfonic_key_file_get_line (self, group, NULL);
      key = NULL;
    }

  if (key != NULL)
    g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                 "%s:%u: [%s] %s: %s", self->name, line, group, key, message);
  else
    g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                 "%s:%u: [%s]: %s", self->name, line, group, message);
}
