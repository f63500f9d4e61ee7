/* symfonic-log-writer.c: the journal, JSON lines or text
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <glib/gi18n.h>

#include "symfonic-log-writer-private.h"

/* Every writer drops what GLib's default one drops (debug and info lines
 * unless G_MESSAGES_DEBUG names their domain), and aborts where it would
 * (G_DEBUG=fatal-warnings and the like): only where the lines go changes. */

typedef enum {
  FORMAT_JOURNAL,
  FORMAT_JSON,
  FORMAT_TEXT,
} Format;

/* what g_log_set_always_fatal() held when the writer was installed */
static GLogLevelFlags always_fatal;
/* one line at a time on stderr, whichever thread logs */
static GMutex write_lock;

static const char *
find_field (const GLogField *fields,
            gsize            n_fields,
            const char      *key)
{
  for (gsize i = 0; i < n_fields; i++)
    if (g_str_equal (fields[i].key, key))
      return fields[i].value;
  return NULL;
}

/* As g_log_writer_default(), which makes a structured line fatal when its
 * level is; a line of the old API (g_message() and the like) was made
 * fatal already, or not, by g_logv(). */
static void
abort_if_fatal (GLogLevelFlags   log_level,
                const GLogField *fields,
                gsize            n_fields)
{
  if ((log_level & G_LOG_FLAG_FATAL) ||
      ((log_level & always_fatal) && find_field (fields, n_fields, "GLIB_OLD_LOG_API") == NULL))
    abort ();
}

static gboolean
dropped (GLogLevelFlags   log_level,
         const GLogField *fields,
         gsize            n_fields)
{
  return g_log_writer_default_would_drop (log_level, find_field (fields, n_fields, "GLIB_DOMAIN"));
}

/* --- JSON lines ------------------------------------------------------------ */

/* Fields whose value is a number, written as one when it is. */
static const char * const numeric_fields[] = {
  "PRIORITY", "CODE_LINE", "SYMFONIC_STATUS", "SYMFONIC_DURATION_MS", "SYMFONIC_SUPPRESSED",
};

static gboolean
is_numeric (const char *key,
            const char *value,
            gssize      length)
{
  gsize n = length < 0 ? strlen (value) : (gsize) length;

  if (n == 0 || n > 18)
    return FALSE;
  for (gsize i = 0; i < n; i++)
    if (!g_ascii_isdigit (value[i]))
      return FALSE;
  for (gsize i = 0; i < G_N_ELEMENTS (numeric_fields); i++)
    if (g_str_equal (key, numeric_fields[i]))
      return TRUE;
  return FALSE;
}

/* A JSON string of @value, whatever its bytes: invalid UTF-8 becomes
 * U+FFFD, so that every line parses. */
static void
append_json_string (GString    *out,
                    const char *value,
                    gssize      length)
{
  g_autofree char *valid = NULL;
  const char *p;

  if (length < 0)
    length = strlen (value);
  if (!g_utf8_validate_len (value, length, NULL))
    {
      valid = g_utf8_make_valid (value, length);
      value = valid;
      length = strlen (valid);
    }

  g_string_append_c (out, '"');
  for (p = value; p < value + length; p++)
    {
      guchar c = *p;

      switch (c)
        {
        case '"':
          g_string_append (out, "\\\"");
          break;
        case '\\':
          g_string_append (out, "\\\\");
          break;
        case '\n':
          g_string_append (out, "\\n");
          break;
        case '\r':
          g_string_append (out, "\\r");
          break;
        case '\t':
          g_string_append (out, "\\t");
          break;
        default:
          if (c < 0x20 || c == 0x7f)
            g_string_append_printf (out, "\\u%04x", c);
          else
            g_string_append_c (out, c);
        }
    }
  g_string_append_c (out, '"');
}

char *
symfonic_log_writer_format_json (GLogLevelFlags   log_level,
                                 const GLogField *fields,
                                 gsize            n_fields,
                                 gint64           real_time_us)
{
  GString *out = g_string_sized_new (256);
  g_autoptr(GDateTime) time = g_date_time_new_from_unix_utc (real_time_us / G_USEC_PER_SEC);
  g_autofree char *stamp = g_date_time_format (time, "%Y-%m-%dT%H:%M:%S");

  g_string_append_printf (out, "{\"TIMESTAMP\":\"%s.%06dZ\"", stamp, (int) (real_time_us % G_USEC_PER_SEC));
  for (gsize i = 0; i < n_fields; i++)
    {
      const GLogField *field = &fields[i];
      gboolean repeated = FALSE;

      /* GLib's marker of the old API says nothing to a reader */
      if (field->value == NULL || g_str_equal (field->key, "GLIB_OLD_LOG_API") ||
          g_str_equal (field->key, "TIMESTAMP"))
        continue;
      /* JSON objects have each key once: the first value stands */
      for (gsize j = 0; j < i && !repeated; j++)
        repeated = g_str_equal (fields[j].key, field->key);
      if (repeated)
        continue;

      g_string_append_c (out, ',');
      append_json_string (out, field->key, -1);
      g_string_append_c (out, ':');
      if (is_numeric (field->key, field->value, field->length))
        g_string_append_len (out, field->value, field->length < 0 ? (gssize) strlen (field->value) : field->length);
      else
        append_json_string (out, field->value, field->length);
    }
  g_string_append_c (out, '}');

  return g_string_free (out, FALSE);
}

static void
write_line (const char *line,
            gsize       length)
{
  G_GNUC_UNUSED g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&write_lock);

  while (length > 0)
    {
      gssize written = write (STDERR_FILENO, line, length);

      if (written < 0 && errno == EINTR)
        continue;
      if (written <= 0)
        return;
      line += written;
      length -= written;
    }
}

static GLogWriterOutput
write_json (GLogLevelFlags   log_level,
            const GLogField *fields,
            gsize            n_fields,
            gpointer         user_data)
{
  g_autofree char *line = NULL;
  gsize length;

  if (dropped (log_level, fields, n_fields))
    return G_LOG_WRITER_HANDLED;

  line = symfonic_log_writer_format_json (log_level, fields, n_fields, g_get_real_time ());
  length = strlen (line);
  line = g_realloc (line, length + 2);
  line[length++] = '\n';
  line[length] = '\0';
  write_line (line, length);
  abort_if_fatal (log_level, fields, n_fields);

  return G_LOG_WRITER_HANDLED;
}

/* What the binary itself prints on stderr (a reload refused, say) is a
 * line of the log too: every line of stderr is JSON. */
static void
print_json (const char *text)
{
  g_autofree char *message = g_strdup (text);
  GLogField fields[] = {
    { "MESSAGE", message, -1 },
    { "PRIORITY", "4", -1 },
    { "GLIB_DOMAIN", "symfonic-gateway", -1 },
  };

  g_strchomp (message);
  write_json (G_LOG_LEVEL_WARNING, fields, G_N_ELEMENTS (fields), NULL);
}

/* --- the journal and text ------------------------------------------------- */

static GLogWriterOutput
write_journal (GLogLevelFlags   log_level,
               const GLogField *fields,
               gsize            n_fields,
               gpointer         user_data)
{
  if (dropped (log_level, fields, n_fields))
    return G_LOG_WRITER_HANDLED;

  /* no journal to take it: stderr, rather than nowhere */
  if (g_log_writer_journald (log_level, fields, n_fields, user_data) != G_LOG_WRITER_HANDLED)
    g_log_writer_standard_streams (log_level, fields, n_fields, user_data);
  abort_if_fatal (log_level, fields, n_fields);

  return G_LOG_WRITER_HANDLED;
}

/* GLib's default writer, but never the journal: asked for text, a gateway
 * under systemd writes text. */
static GLogWriterOutput
write_text (GLogLevelFlags   log_level,
            const GLogField *fields,
            gsize            n_fields,
            gpointer         user_data)
{
  if (dropped (log_level, fields, n_fields))
    return G_LOG_WRITER_HANDLED;

  g_log_writer_standard_streams (log_level, fields, n_fields, user_data);
  abort_if_fatal (log_level, fields, n_fields);

  return G_LOG_WRITER_HANDLED;
}

gboolean
symfonic_log_writer_install (const char  *format,
                             GError     **error)
{
  Format chosen;

  if (format == NULL)
    chosen = g_log_writer_is_journald (fileno (stderr)) ? FORMAT_JOURNAL : FORMAT_TEXT;
  else if (g_str_equal (format, "journal"))
    chosen = FORMAT_JOURNAL;
  else if (g_str_equal (format, "json"))
    chosen = FORMAT_JSON;
  else if (g_str_equal (format, "text"))
    chosen = FORMAT_TEXT;
  else
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   _("--log-format must be journal, json or text, not “%s”"), format);
      return FALSE;
    }

  /* read back, as GLib offers no getter */
  always_fatal = g_log_set_always_fatal (G_LOG_FATAL_MASK);
  g_log_set_always_fatal (always_fatal);

  switch (chosen)
    {
    case FORMAT_JOURNAL:
      g_log_set_writer_func (write_journal, NULL, NULL);
      break;
    case FORMAT_JSON:
      g_log_set_writer_func (write_json, NULL, NULL);
      g_set_printerr_handler (print_json);
      break;
    case FORMAT_TEXT:
      g_log_set_writer_func (write_text, NULL, NULL);
      break;
    }

  return TRUE;
}
