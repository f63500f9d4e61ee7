/* symfonic-property.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <glib/gi18n-lib.h>

#include "symfonic-config-file.h"
#include "symfonic-error.h"
#include "symfonic-param-spec.h"
#include "symfonic-property-private.h"

static gboolean
fail (GError     **error,
      const char  *format,
      ...) G_GNUC_PRINTF (2, 3);

static gboolean
fail (GError     **error,
      const char  *format,
      ...)
{
  va_list args;

  va_start (args, format);
  g_propagate_error (error, g_error_new_valist (SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, format, args));
  va_end (args);

  return FALSE;
}

static gboolean
parse_boolean (const char *text,
               gboolean   *out)
{
  static const char * const yes[] = { "true", "yes", "on", "1", NULL };
  static const char * const no[] = { "false", "no", "off", "0", NULL };

  for (guint i = 0; yes[i] != NULL; i++)
    {
      if (g_ascii_strcasecmp (text, yes[i]) == 0)
        return (*out = TRUE);
      if (g_ascii_strcasecmp (text, no[i]) == 0)
        return (*out = FALSE, TRUE);
    }

  return FALSE;
}

static char *
list_nicks (GEnumClass *klass)
{
  g_autoptr(GString) nicks = g_string_new (NULL);

  for (guint i = 0; i < klass->n_values; i++)
    g_string_append_printf (nicks, "%s%s", i > 0 ? ", " : "", klass->values[i].value_nick);

  return g_string_free (g_steal_pointer (&nicks), FALSE);
}

static char *
list_flag_nicks (GFlagsClass *klass)
{
  g_autoptr(GString) nicks = g_string_new (NULL);

  for (guint i = 0; i < klass->n_values; i++)
    g_string_append_printf (nicks, "%s%s", i > 0 ? ", " : "", klass->values[i].value_nick);

  return g_string_free (g_steal_pointer (&nicks), FALSE);
}

static gboolean
parse_signed (const char  *text,
              gint64       min,
              gint64       max,
              gint64      *out,
              GError     **error)
{
  g_autoptr(GError) local_error = NULL;

  if (!g_ascii_string_to_signed (text, 10, min, max, (gint64 *) out, &local_error))
    return fail (error, _("expected a whole number from %" PRId64 " to %" PRId64 ", found “%s”"),
                 min, max, text);
  return TRUE;
}

static gboolean
parse_unsigned (const char  *text,
                guint64      min,
                guint64      max,
                guint64     *out,
                GError     **error)
{
  g_autoptr(GError) local_error = NULL;

  if (!g_ascii_string_to_unsigned (text, 10, min, max, out, &local_error))
    return fail (error, _("expected a whole number from %" PRIu64 " to %" PRIu64 ", found “%s”"),
                 min, max, text);
  return TRUE;
}

static gboolean
parse_double (const char  *text,
              double       min,
              double       max,
              double      *out,
              GError     **error)
{
  char *end = NULL;
  double d;

  errno = 0;
  d = g_ascii_strtod (text, &end);
  if (*text == '\0' || end == NULL || *end != '\0' || errno != 0 || !isfinite (d) || d < min || d > max)
    return fail (error, _("expected a number from %g to %g, found “%s”"), min, max, text);

  *out = d;
  return TRUE;
}

/* A file-valued key may name a folder the environment says, as a service
 * manager sets one: `${CREDENTIALS_DIRECTORY}/openai-api-key`, the file
 * systemd hands a service with LoadCredential=. Each `${NAME}` (a letter
 * or underscore, then letters, digits and underscores) is replaced by the
 * variable's value; one that is unset or empty is an error, never an empty
 * folder, which would make the path the pipeline file's or the root's.
 * A `$` not followed by `{` is itself. Returns the expanded path, or NULL
 * with @error set. */
char *
symfonic_property_expand_path (const char  *text,
                               GError     **error)
{
  g_autoptr(GString) path = g_string_new (NULL);
  const char *p = text;

  while (*p != '\0')
    {
      const char *dollar = strstr (p, "${");
      g_autofree char *name = NULL;
      const char *end;
      const char *value;

      if (dollar == NULL)
        {
          g_string_append (path, p);
          break;
        }
      g_string_append_len (path, p, dollar - p);
      end = strchr (dollar + 2, '}');
      if (end != NULL)
        name = g_strndup (dollar + 2, end - dollar - 2);
      if (name == NULL || name[0] == '\0' || g_ascii_isdigit (name[0]) ||
          strspn (name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") != strlen (name))
        {
          g_autofree char *written = end != NULL ? g_strndup (dollar, end - dollar + 1) : g_strdup (dollar);

          fail (error, _("“%s” is not a variable: write ${NAME}, NAME of letters, digits and _"), written);
          return NULL;
        }
      value = g_getenv (name);
      if (value == NULL || value[0] == '\0')
        {
          if (g_str_equal (name, "CREDENTIALS_DIRECTORY"))
            fail (error, _("${CREDENTIALS_DIRECTORY} is not set: systemd sets it for a service with "
                           "LoadCredential=; elsewhere set it to the folder of the files"));
          else
            fail (error, _("${%s} is not set"), name);
          return NULL;
        }
      g_string_append (path, value);
      p = end + 1;
    }

  return g_string_free (g_steal_pointer (&path), FALSE);
}

/* Converts the text of @key into @value by @pspec's type: strings, numbers
 * (range checked), booleans, enums and flags by nick, string lists (a;b;c)
 * and files (resolved against @base_dir, the pipeline file's folder; see
 * symfonic_property_check_file()). */
gboolean
symfonic_property_parse (GParamSpec  *pspec,
                         GKeyFile    *key_file,
                         const char  *group,
                         const char  *key,
                         GFile       *base_dir,
                         GValue      *value,
                         GError     **error)
{
  GType type = G_PARAM_SPEC_VALUE_TYPE (pspec);
  g_autofree char *text = NULL;
  g_autoptr(GError) local_error = NULL;

  if (type == G_TYPE_STRV)
    {
      g_auto(GStrv) list = g_key_file_get_string_list (key_file, group, key, NULL, &local_error);

      if (local_error != NULL)
        return fail (error, _("expected a list a;b;c, found text it cannot read: %s"), local_error->message);
      g_value_init (value, G_TYPE_STRV);
      g_value_take_boxed (value, g_steal_pointer (&list));
      return TRUE;
    }

  /* GKeyFile returns the raw text *and* an error for a bad escape */
  text = g_key_file_get_string (key_file, group, key, &local_error);
  if (local_error != NULL)
    return fail (error, _("expected a value, found text it cannot read: %s"), local_error->message);

  g_value_init (value, type);

  if (type == G_TYPE_STRING)
    {
      g_value_take_string (value, g_steal_pointer (&text));
    }
  else if (type == G_TYPE_BOOLEAN)
    {
      gboolean b;

      if (!parse_boolean (text, &b))
        return fail (error, _("expected true or false, found “%s”"), text);
      g_value_set_boolean (value, b);
    }
  else if (G_IS_PARAM_SPEC_INT (pspec))
    {
      GParamSpecInt *spec = G_PARAM_SPEC_INT (pspec);
      gint64 n;

      if (!parse_signed (text, spec->minimum, spec->maximum, &n, error))
        return FALSE;
      g_value_set_int (value, n);
    }
  else if (G_IS_PARAM_SPEC_INT64 (pspec))
    {
      GParamSpecInt64 *spec = G_PARAM_SPEC_INT64 (pspec);
      gint64 n;

      if (!parse_signed (text, spec->minimum, spec->maximum, &n, error))
        return FALSE;
      g_value_set_int64 (value, n);
    }
  else if (G_IS_PARAM_SPEC_LONG (pspec))
    {
      GParamSpecLong *spec = G_PARAM_SPEC_LONG (pspec);
      gint64 n;

      if (!parse_signed (text, spec->minimum, spec->maximum, &n, error))
        return FALSE;
      g_value_set_long (value, n);
    }
  else if (G_IS_PARAM_SPEC_UINT (pspec))
    {
      GParamSpecUInt *spec = G_PARAM_SPEC_UINT (pspec);
      guint64 n;

      if (!parse_unsigned (text, spec->minimum, spec->maximum, &n, error))
        return FALSE;
      g_value_set_uint (value, n);
    }
  else if (G_IS_PARAM_SPEC_UINT64 (pspec))
    {
      GParamSpecUInt64 *spec = G_PARAM_SPEC_UINT64 (pspec);
      guint64 n;

      if (!parse_unsigned (text, spec->minimum, spec->maximum, &n, error))
        return FALSE;
      g_value_set_uint64 (value, n);
    }
  else if (G_IS_PARAM_SPEC_ULONG (pspec))
    {
      GParamSpecULong *spec = G_PARAM_SPEC_ULONG (pspec);
      guint64 n;

      if (!parse_unsigned (text, spec->minimum, spec->maximum, &n, error))
        return FALSE;
      g_value_set_ulong (value, n);
    }
  else if (G_IS_PARAM_SPEC_DOUBLE (pspec))
    {
      GParamSpecDouble *spec = G_PARAM_SPEC_DOUBLE (pspec);
      double d;

      if (!parse_double (text, spec->minimum, spec->maximum, &d, error))
        return FALSE;
      g_value_set_double (value, d);
    }
  else if (G_IS_PARAM_SPEC_FLOAT (pspec))
    {
      GParamSpecFloat *spec = G_PARAM_SPEC_FLOAT (pspec);
      double d;

      if (!parse_double (text, spec->minimum, spec->maximum, &d, error))
        return FALSE;
      g_value_set_float (value, d);
    }
  else if (G_TYPE_IS_ENUM (type))
    {
      g_autoptr(GEnumClass) klass = g_type_class_ref (type);
      GEnumValue *ev = g_enum_get_value_by_nick (klass, text);

      if (ev == NULL)
        ev = g_enum_get_value_by_name (klass, text);
      if (ev == NULL)
        {
          g_autofree char *nicks = list_nicks (klass);

          return fail (error, _("expected one of %s, found “%s”"), nicks, text);
        }
      g_value_set_enum (value, ev->value);
    }
  else if (G_TYPE_IS_FLAGS (type))
    {
      g_autoptr(GFlagsClass) klass = g_type_class_ref (type);
      g_auto(GStrv) parts = g_strsplit_set (text, "|,", -1);
      guint flags = 0;

      for (guint i = 0; parts[i] != NULL; i++)
        {
          const char *part = g_strstrip (parts[i]);
          GFlagsValue *fv;

          if (*part == '\0')
            continue;
          fv = g_flags_get_value_by_nick (klass, part);
          if (fv == NULL)
            fv = g_flags_get_value_by_name (klass, part);
          if (fv == NULL)
            {
              g_autofree char *nicks = list_flag_nicks (klass);

              return fail (error, _("expected flags among %s, found “%s”"), nicks, part);
            }
          flags |= fv->value;
        }
      g_value_set_flags (value, flags);
    }
  else if (type == G_TYPE_FILE)
    {
      g_autofree char *path = NULL;

      if (*text == '\0')
        return fail (error, _("expected a path, found an empty value"));
      path = symfonic_property_expand_path (text, error);
      if (path == NULL)
        return FALSE;
      g_value_take_object (value, g_file_resolve_relative_path (base_dir, path));
    }
  else
    {
      return fail (error, _("expected a key a pipeline file can set, found a property of type %s, which it cannot"),
                   g_type_name (type));
    }

  if (g_param_value_validate (pspec, value))
    return fail (error, _("expected a value in the range of the property, found “%s”, out of it"),
                 text != NULL ? text : key);

  return TRUE;
}

/* Checks the file a file property's @value names, as the object that
 * reads it will find it: a regular file within the size cap, or a
 * directory for a symfonic_param_spec_folder(). Checked by the loader,
 * where the key is still known, rather than left to the object: a missing
 * or special file is then reported at its key, as what it is, whichever
 * object names it. Any other @value passes. */
gboolean
symfonic_property_check_file (GParamSpec    *pspec,
                              const GValue  *value,
                              GError       **error)
{
  g_autoptr(GError) local_error = NULL;
  GFile *file;

  if (G_PARAM_SPEC_VALUE_TYPE (pspec) != G_TYPE_FILE || (file = g_value_get_object (value)) == NULL)
    return TRUE;

  if (symfonic_param_spec_is_folder (pspec)
      ? !symfonic_config_file_check_folder (file, &local_error)
      : !symfonic_config_file_check (file, SYMFONIC_CONFIG_FILE_MAX_SIZE, &local_error))
    return fail (error, "%s", local_error->message);

  return TRUE;
}
