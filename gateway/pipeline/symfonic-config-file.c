/* symfonic-config-file.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gi18n-lib.h>

#include "symfonic-config-file.h"
#include "symfonic-error.h"

static gboolean
set_errno_error (GError     **error,
                 const char  *display,
                 int          errsv)
{
  g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, "%s: %s", display, g_strerror (errsv));
  return FALSE;
}

/* Reads to the end, refusing as soon as more than @max_size arrived: the
 * size fstat() gave may be stale, or 0 for files the kernel generates. */
static gboolean
read_capped (int          fd,
             const char  *display,
             gsize        size_hint,
             gsize        max_size,
             GString    **out,
             GError     **error)
{
  g_autoptr(GString) buffer = g_string_sized_new (size_hint + 1);
  char chunk[16384];

  for (;;)
    {
      gssize n = read (fd, chunk, sizeof chunk);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return set_errno_error (error, display, errno);
      if (n == 0)
        break;
      if ((gsize) n > max_size - buffer->len)
        {
          g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                       _("%s: larger than %" G_GSIZE_FORMAT " bytes"), display, max_size);
          return FALSE;
        }
      g_string_append_len (buffer, chunk, n);
    }

  *out = g_steal_pointer (&buffer);
  return TRUE;
}

/* Opens @file without blocking and checks what it is: for a @folder a
 * directory, else a regular file of at most @max_size bytes. A device
 * (`/dev/zero`) or a FIFO is refused from its fstat(), never read or
 * waited on. Returns the descriptor, or -1 with @error set. */
static int
open_checked (GFile       *file,
              gboolean     folder,
              gsize        max_size,
              struct stat *st,
              GError     **error)
{
  g_autofree char *path = NULL;
  g_autofree char *display = NULL;
  int fd;

  display = g_file_get_parse_name (file);
  path = g_file_get_path (file);
  if (path == NULL)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, _("%s: not a local file"), display);
      return -1;
    }

  fd = open (path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    {
      set_errno_error (error, display, errno);
      return -1;
    }

  if (fstat (fd, st) != 0)
    {
      int errsv = errno;

      close (fd);
      set_errno_error (error, display, errsv);
      return -1;
    }

  if (folder ? !S_ISDIR (st->st_mode) : !S_ISREG (st->st_mode))
    {
      close (fd);
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   folder ? _("%s: not a folder") : _("%s: not a regular file"), display);
      return -1;
    }

  if (!folder && (guint64) st->st_size > max_size)
    {
      close (fd);
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("%s: larger than %" G_GSIZE_FORMAT " bytes"), display, max_size);
      return -1;
    }

  return fd;
}

/**
 * symfonic_config_file_load:
 * @file: a local file a pipeline names
 * @max_size: the most bytes it may hold, usually
 *   %SYMFONIC_CONFIG_FILE_MAX_SIZE
 * @contents: (out) (array length=length) (element-type guint8) (transfer full):
 *   the file's bytes, followed by a NUL that @length does not count
 * @length: (out) (optional): how many bytes the file holds
 * @error: return location for a #GError
 *
 * Reads a configuration file safely: a device (`/dev/zero`), a FIFO or a
 * directory is refused at once without blocking or reading, and a file
 * over @max_size without reading past the cap. Opening never blocks and
 * never acquires a controlling terminal.
 *
 * Errors are %SYMFONIC_ERROR_CONFIG and begin with the file's name; the
 * caller adds the key that named it.
 *
 * Returns: %TRUE on success
 */
gboolean
symfonic_config_file_load (GFile   *file,
                           gsize    max_size,
                           char   **contents,
                           gsize   *length,
                           GError **error)
{
  g_autofree char *display = NULL;
  g_autoptr(GString) buffer = NULL;
  struct stat st;
  gboolean ok;
  int fd;

  g_return_val_if_fail (G_IS_FILE (file), FALSE);
  g_return_val_if_fail (contents != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  fd = open_checked (file, FALSE, max_size, &st, error);
  if (fd < 0)
    return FALSE;

  display = g_file_get_parse_name (file);
  ok = read_capped (fd, display, st.st_size, max_size, &buffer, error);
  close (fd);
  if (!ok)
    return FALSE;

  if (length != NULL)
    *length = buffer->len;
  *contents = g_string_free (g_steal_pointer (&buffer), FALSE);

  return TRUE;
}

/**
 * symfonic_config_file_check:
 * @file: a local file a pipeline names
 * @max_size: the most bytes it may hold, usually
 *   %SYMFONIC_CONFIG_FILE_MAX_SIZE
 * @error: return location for a #GError
 *
 * Checks, without reading it, that symfonic_config_file_load() would
 * accept @file: that it exists, is a regular file the process may open
 * for reading and holds at most @max_size bytes. The pipeline loader
 * checks every file a key names so, where it can still name the key.
 *
 * Errors are those of symfonic_config_file_load().
 *
 * Returns: %TRUE if @file can be loaded
 */
gboolean
symfonic_config_file_check (GFile   *file,
                            gsize    max_size,
                            GError **error)
{
  struct stat st;
  int fd;

  g_return_val_if_fail (G_IS_FILE (file), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  fd = open_checked (file, FALSE, max_size, &st, error);
  if (fd < 0)
    return FALSE;
  close (fd);

  return TRUE;
}

/**
 * symfonic_config_file_check_folder:
 * @folder: a local folder a pipeline names
 * @error: return location for a #GError
 *
 * Checks that @folder exists and is a directory the process may open for
 * reading, refusing a file, a device or a FIFO in its place without
 * blocking. What the folder holds is its reader's to check, each file
 * with symfonic_config_file_load().
 *
 * Errors are %SYMFONIC_ERROR_CONFIG and begin with the folder's name.
 *
 * Returns: %TRUE if @folder can be read
 */
gboolean
symfonic_config_file_check_folder (GFile   *folder,
                                   GError **error)
{
  struct stat st;
  int fd;

  g_return_val_if_fail (G_IS_FILE (folder), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  fd = open_checked (folder, TRUE, 0, &st, error);
  if (fd < 0)
    return FALSE;
  close (fd);

  return TRUE;
}

/**
 * SymfonicConfigFile:
 *
 * A configuration file in GKeyFile syntax that remembers where every group
 * and key is, so each complaint about it can name the file, the line, the
 * group and the key. Pipeline files are read with it, and so are the
 * tables stages load (tokens, error rules); a plugin reads its own files
 * with it and reports errors in the same shape.
 *
 * GKeyFile parses values but forgets line numbers and merges repeated
 * groups and keys; here a repeated group or key is refused, because it is
 * a row edited in one place and still in effect from another. Lines that
 * are neither a `[group]`, a `key=value` nor a whole-line `#` comment are
 * refused too, naming the line.
 *
 * Every error is %SYMFONIC_ERROR_CONFIG and reads
 * `FILE:LINE: [group] key: what is wrong` (without a key, the line is the
 * group's; without a group, the file alone is named).
 */
struct _SymfonicConfigFile
{
  GObject     parent_instance;

  GKeyFile   *key_file;
  char       *name;
  /* "group" and "group\nkey" -> line number */
  GHashTable *lines;
};

G_DEFINE_FINAL_TYPE (SymfonicConfigFile, symfonic_config_file, G_TYPE_OBJECT)

static void
symfonic_config_file_finalize (GObject *object)
{
  SymfonicConfigFile *self = SYMFONIC_CONFIG_FILE (object);

  g_key_file_unref (self->key_file);
  g_hash_table_unref (self->lines);
  g_free (self->name);

  G_OBJECT_CLASS (symfonic_config_file_parent_class)->finalize (object);
}

static void
symfonic_config_file_class_init (SymfonicConfigFileClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = symfonic_config_file_finalize;
}

static void
symfonic_config_file_init (SymfonicConfigFile *self)
{
  self->key_file = g_key_file_new ();
  self->lines = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}

static char *
line_id (const char *group,
         const char *key)
{
  return key != NULL ? g_strconcat (group, "\n", key, NULL) : g_strdup (group);
}

static gboolean
scan_group (SymfonicConfigFile  *self,
            char                *text,
            guint                lineno,
            char               **group,
            GError             **error)
{
  char *close = strchr (text, ']');

  if (close == NULL || close[1] != '\0' || close == text + 1)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("%s:%u: malformed group header “%s”"), self->name, lineno, text);
      return FALSE;
    }
  *close = '\0';
  g_free (*group);
  *group = g_strdup (text + 1);
  if (g_hash_table_contains (self->lines, *group))
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("%s:%u: [%s]: group already appears on line %u"), self->name, lineno, *group,
                   GPOINTER_TO_UINT (g_hash_table_lookup (self->lines, *group)));
      return FALSE;
    }
  g_hash_table_insert (self->lines, g_strdup (*group), GUINT_TO_POINTER (lineno));

  return TRUE;
}

static gboolean
scan_key (SymfonicConfigFile  *self,
          char                *text,
          guint                lineno,
          const char          *group,
          GError             **error)
{
  char *equals = strchr (text, '=');
  g_autofree char *id = NULL;
  const char *key;

  if (equals == NULL || equals == text)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("%s:%u: expected “key=value”, a [group] or a # comment, found “%s”"),
                   self->name, lineno, text);
      return FALSE;
    }
  *equals = '\0';
  key = g_strstrip (text);
  if (group == NULL)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("%s:%u: %s: key outside of any [group]"), self->name, lineno, key);
      return FALSE;
    }
  id = line_id (group, key);
  if (g_hash_table_contains (self->lines, id))
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("%s:%u: [%s] %s: key already set on line %u"), self->name, lineno,
                   group, key, GPOINTER_TO_UINT (g_hash_table_lookup (self->lines, id)));
      return FALSE;
    }
  g_hash_table_insert (self->lines, g_steal_pointer (&id), GUINT_TO_POINTER (lineno));

  return TRUE;
}

static gboolean
scan (SymfonicConfigFile  *self,
      const char          *data,
      gsize                length,
      GError             **error)
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

      if (*stripped == '[' ? !scan_group (self, stripped, lineno, &group, error)
                           : !scan_key (self, stripped, lineno, group, error))
        return FALSE;
    }

  return TRUE;
}

/**
 * symfonic_config_file_new_from_data:
 * @data: the file's text
 * @length: the length of @data, or -1 if it is nul-terminated
 * @name: how errors name the file, usually its path
 * @error: return location for a #GError
 *
 * Parses @data, refusing text that is not UTF-8, lines that are not part
 * of a key file, and repeated groups and keys, each naming the line.
 *
 * Returns: (transfer full): the parsed file, or %NULL with @error set to a
 *   %SYMFONIC_ERROR_CONFIG
 */
SymfonicConfigFile *
symfonic_config_file_new_from_data (const char  *data,
                                    gssize       length,
                                    const char  *name,
                                    GError     **error)
{
  g_autoptr(SymfonicConfigFile) self = NULL;
  g_autoptr(GError) local_error = NULL;
  gsize size;

  g_return_val_if_fail (data != NULL || length == 0, NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  size = length < 0 ? strlen (data) : (gsize) length;
  self = g_object_new (SYMFONIC_TYPE_CONFIG_FILE, NULL);
  self->name = g_strdup (name);

  if (!g_utf8_validate_len (data, size, NULL))
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, _("%s: not valid UTF-8 text"), name);
      return NULL;
    }

  if (!scan (self, data, size, error))
    return NULL;

  if (!g_key_file_load_from_data (self->key_file, data, size, G_KEY_FILE_NONE, &local_error))
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, "%s: %s", name, local_error->message);
      return NULL;
    }

  return g_steal_pointer (&self);
}

/**
 * symfonic_config_file_new_for_file:
 * @file: a local configuration file
 * @error: return location for a #GError
 *
 * Reads @file as symfonic_config_file_load() does, capped at
 * %SYMFONIC_CONFIG_FILE_MAX_SIZE, and parses it as
 * symfonic_config_file_new_from_data() does; errors name the file by its
 * parse name.
 *
 * Returns: (transfer full): the parsed file, or %NULL with @error set to a
 *   %SYMFONIC_ERROR_CONFIG
 */
SymfonicConfigFile *
symfonic_config_file_new_for_file (GFile   *file,
                                   GError **error)
{
  g_autofree char *contents = NULL;
  g_autofree char *name = NULL;
  gsize length;

  g_return_val_if_fail (G_IS_FILE (file), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!symfonic_config_file_load (file, SYMFONIC_CONFIG_FILE_MAX_SIZE, &contents, &length, error))
    return NULL;

  name = g_file_get_parse_name (file);
  return symfonic_config_file_new_from_data (contents, length, name, error);
}

/**
 * symfonic_config_file_get_name:
 * @self: a #SymfonicConfigFile
 *
 * Gets the name errors give the file.
 *
 * Returns: how errors name the file
 */
const char *
symfonic_config_file_get_name (SymfonicConfigFile *self)
{
  g_return_val_if_fail (SYMFONIC_IS_CONFIG_FILE (self), NULL);

  return self->name;
}

/**
 * symfonic_config_file_get_key_file:
 * @self: a #SymfonicConfigFile
 *
 * The parsed groups and values, to read with the #GKeyFile getters.
 *
 * Returns: (transfer none): the key file, owned by @self
 */
GKeyFile *
symfonic_config_file_get_key_file (SymfonicConfigFile *self)
{
  g_return_val_if_fail (SYMFONIC_IS_CONFIG_FILE (self), NULL);

  return self->key_file;
}

/**
 * symfonic_config_file_get_line:
 * @self: a #SymfonicConfigFile
 * @group: a group name, without brackets
 * @key: (nullable): a key of @group, or %NULL for the group's header
 *
 * Gets where @key, or the header of @group, is in the file.
 *
 * Returns: the 1-based line @key (or @group) is on, or 0 if the file does
 *   not have it
 */
guint
symfonic_config_file_get_line (SymfonicConfigFile *self,
                               const char         *group,
                               const char         *key)
{
  g_autofree char *id = NULL;

  g_return_val_if_fail (SYMFONIC_IS_CONFIG_FILE (self), 0);
  g_return_val_if_fail (group != NULL, 0);

  id = line_id (group, key);
  return GPOINTER_TO_UINT (g_hash_table_lookup (self->lines, id));
}

/**
 * symfonic_config_file_check_keys:
 * @self: a #SymfonicConfigFile
 * @group: a group of @self
 * @known: (array zero-terminated=1): the keys @group may have
 * @error: return location for a #GError
 *
 * Refuses the first key of @group that is not in @known, naming its line
 * and listing @known: a misspelt key would otherwise be silently ignored.
 *
 * Returns: %TRUE if every key of @group is known
 */
gboolean
symfonic_config_file_check_keys (SymfonicConfigFile  *self,
                                 const char          *group,
                                 const char * const  *known,
                                 GError             **error)
{
  g_auto(GStrv) keys = NULL;

  g_return_val_if_fail (SYMFONIC_IS_CONFIG_FILE (self), FALSE);
  g_return_val_if_fail (group != NULL, FALSE);
  g_return_val_if_fail (known != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  keys = g_key_file_get_keys (self->key_file, group, NULL, NULL);
  for (guint i = 0; keys != NULL && keys[i] != NULL; i++)
    {
      if (!g_strv_contains (known, keys[i]))
        {
          g_autofree char *list = g_strjoinv (", ", (char **) known);

          return symfonic_config_file_set_error (self, error, group, keys[i], _("unknown key (known: %s)"), list);
        }
    }

  return TRUE;
}

/**
 * symfonic_config_file_set_error_literal:
 * @self: a #SymfonicConfigFile
 * @group: (nullable): the group the problem is in, or %NULL for the whole file
 * @key: (nullable): the key of @group the problem is with, or %NULL
 * @message: what is wrong
 * @error: return location for a #GError
 *
 * Sets @error to a %SYMFONIC_ERROR_CONFIG reading
 * `FILE:LINE: [group] key: message`. The line is @key's, or the group's
 * when @key is %NULL or absent from the file (a missing key is named all
 * the same); without a group, or for a group the file does not have, the
 * line is left out.
 *
 * From a language binding this raises the error.
 *
 * Returns: %FALSE, so a loader can `return` it
 */
gboolean
symfonic_config_file_set_error_literal (SymfonicConfigFile  *self,
                                        const char          *group,
                                        const char          *key,
                                        const char          *message,
                                        GError             **error)
{
  g_autofree char *where = NULL;
  guint line = 0;

  g_return_val_if_fail (SYMFONIC_IS_CONFIG_FILE (self), FALSE);
  g_return_val_if_fail (group != NULL || key == NULL, FALSE);
  g_return_val_if_fail (message != NULL, FALSE);

  if (group == NULL)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, "%s: %s", self->name, message);
      return FALSE;
    }

  if (key != NULL)
    line = symfonic_config_file_get_line (self, group, key);
  if (line == 0)
    line = symfonic_config_file_get_line (self, group, NULL);
  where = line > 0 ? g_strdup_printf ("%s:%u", self->name, line) : g_strdup (self->name);

  if (key != NULL)
    g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, "%s: [%s] %s: %s", where, group, key, message);
  else
    g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, "%s: [%s]: %s", where, group, message);

  return FALSE;
}

/**
 * symfonic_config_file_set_error: (skip)
 * @self: a #SymfonicConfigFile
 * @error: return location for a #GError
 * @group: (nullable): the group the problem is in, or %NULL for the whole file
 * @key: (nullable): the key of @group the problem is with, or %NULL
 * @format: printf()-style format of what is wrong
 * @...: arguments for @format
 *
 * As symfonic_config_file_set_error_literal(), with a formatted message.
 *
 * Returns: %FALSE, so a loader can `return` it
 */
gboolean
symfonic_config_file_set_error (SymfonicConfigFile  *self,
                                GError             **error,
                                const char          *group,
                                const char          *key,
                                const char          *format,
                                ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);

  return symfonic_config_file_set_error_literal (self, group, key, message, error);
}
