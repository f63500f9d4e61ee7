/* symfonic-config-file.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <inttypes.h>
#include <errno.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gi18n-lib.h>

#include "symfonic-config-file-private.h"
#include "symfonic-error.h"

/* Why @display could not be opened or read, in the words an operator
 * acts on: a missing file says it is missing. */
static gboolean
set_errno_error (GError     **error,
                 const char  *display,
                 gboolean     folder,
                 int          errsv)
{
  if (errsv == ENOENT)
    g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                 folder ? _("%s: expected a folder, found nothing: it is missing")
                        : _("%s: expected a file, found nothing: it is missing"), display);
  else if (errsv == EACCES)
    g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                 folder ? _("%s: expected a folder the gateway may read, found one it may not (permission denied)")
                        : _("%s: expected a file the gateway may read, found one it may not (permission denied)"),
                 display);
  else
    g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                 folder ? _("%s: expected a folder the gateway can open, found: %s")
                        : _("%s: expected a file the gateway can read, found: %s"),
                 display, g_strerror (errsv));
  return FALSE;
}

/* What stands where a file or folder was expected. */
static const char *
describe_mode (mode_t mode)
{
  if (S_ISDIR (mode))
    return _("a folder");
  if (S_ISREG (mode))
    return _("a regular file");
  if (S_ISFIFO (mode))
    return _("a FIFO");
  if (S_ISCHR (mode) || S_ISBLK (mode))
    return _("a device");
  if (S_ISSOCK (mode))
    return _("a socket");
  return _("something else");
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
        return set_errno_error (error, display, FALSE, errno);
      if (n == 0)
        break;
      if ((gsize) n > max_size - buffer->len)
        {
          g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                       _("%s: expected at most %zu bytes, found more"), display, max_size);
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
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("%s: expected a local file, found a location elsewhere"), display);
      return -1;
    }

  fd = open (path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    {
      set_errno_error (error, display, folder, errno);
      return -1;
    }

  if (fstat (fd, st) != 0)
    {
      int errsv = errno;

      close (fd);
      set_errno_error (error, display, folder, errsv);
      return -1;
    }

  if (folder ? !S_ISDIR (st->st_mode) : !S_ISREG (st->st_mode))
    {
      close (fd);
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   folder ? _("%s: expected a folder, found %s") : _("%s: expected a regular file, found %s"),
                   display, describe_mode (st->st_mode));
      return -1;
    }

  if (!folder && (guint64) st->st_size > max_size)
    {
      close (fd);
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("%s: expected at most %zu bytes, found %" PRIu64),
                   display, max_size, (guint64) st->st_size);
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
 *
 * A reader that checks a whole file before it gives up, so that one run
 * lists every mistake, opens it with %SYMFONIC_CONFIG_FILE_COLLECT_ERRORS,
 * records each problem with symfonic_config_file_add_error() and goes on,
 * and ends with symfonic_config_file_check_errors(), whose error lists
 * them all, one per line, by line.
 */
struct _SymfonicConfigFile
{
  GObject     parent_instance;

  GKeyFile   *key_file;
  char       *name;
  /* "group" and "group\nkey" -> line number */
  GHashTable *lines;
  /* Problem, in the order recorded */
  GPtrArray  *problems;
};

/* One line of the list symfonic_config_file_check_errors() gives, and the
 * lines of the file it names that go below it. */
typedef struct
{
  guint  line;
  /* the order recorded, which one line's problems keep */
  guint  seq;
  char  *text;
  GStrv  below;
} Problem;

/**
 * SymfonicConfigFileClass:
 * @parent_class: the parent class
 *
 * The class of #SymfonicConfigFile, a final type: there is nothing to override.
 */
G_DEFINE_FINAL_TYPE (SymfonicConfigFile, symfonic_config_file, G_TYPE_OBJECT)

static void
problem_free (gpointer data)
{
  Problem *problem = data;

  g_free (problem->text);
  g_strfreev (problem->below);
  g_free (problem);
}

static void
symfonic_config_file_finalize (GObject *object)
{
  SymfonicConfigFile *self = SYMFONIC_CONFIG_FILE (object);

  g_key_file_unref (self->key_file);
  g_hash_table_unref (self->lines);
  g_ptr_array_unref (self->problems);
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
  self->problems = g_ptr_array_new_with_free_func (problem_free);
}

static char *
line_id (const char *group,
         const char *key)
{
  return key != NULL ? g_strconcat (group, "\n", key, NULL) : g_strdup (group);
}

static void
add_problem (SymfonicConfigFile *self,
             guint               line,
             char               *text,
             GStrv               below)
{
  Problem *problem = g_new0 (Problem, 1);

  problem->line = line;
  problem->seq = self->problems->len;
  problem->text = text;
  problem->below = below;
  g_ptr_array_add (self->problems, problem);
}

/* A problem of a line the scan skips, before any group or key is known. */
static void
add_line_problem (SymfonicConfigFile *self,
                  guint               lineno,
                  const char         *format,
                  ...) G_GNUC_PRINTF (3, 4);

static void
add_line_problem (SymfonicConfigFile *self,
                  guint               lineno,
                  const char         *format,
                  ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);

  add_problem (self, lineno, g_strdup_printf ("%s:%u: %s", self->name, lineno, message), NULL);
}

static gboolean
scan_group (SymfonicConfigFile  *self,
            char                *text,
            guint                lineno,
            char               **group)
{
  char *close = strchr (text, ']');

  if (close == NULL || close[1] != '\0' || close == text + 1)
    {
      add_line_problem (self, lineno, _("expected a group header “[NAME]”, found “%s”"), text);
      /* its keys would be reported as another group's */
      g_clear_pointer (group, g_free);
      return FALSE;
    }
  *close = '\0';
  g_free (*group);
  *group = g_strdup (text + 1);
  if (g_hash_table_contains (self->lines, *group))
    {
      add_line_problem (self, lineno, _("[%s]: expected each group once, found it already on line %u"), *group,
                        GPOINTER_TO_UINT (g_hash_table_lookup (self->lines, *group)));
      return TRUE;
    }
  g_hash_table_insert (self->lines, g_strdup (*group), GUINT_TO_POINTER (lineno));

  return TRUE;
}

static gboolean
scan_key (SymfonicConfigFile  *self,
          char                *text,
          guint                lineno,
          const char          *group,
          gboolean             group_valid)
{
  char *equals = strchr (text, '=');
  g_autofree char *id = NULL;
  const char *key;

  if (equals == NULL || equals == text)
    {
      add_line_problem (self, lineno, _("expected “key=value”, a [group] or a # comment, found “%s”"), text);
      return FALSE;
    }
  *equals = '\0';
  key = g_strstrip (text);
  if (group == NULL)
    {
      /* under a malformed header, that header is the problem */
      if (group_valid)
        add_line_problem (self, lineno, _("%s: expected a key inside a [group], found it before any"), key);
      return FALSE;
    }
  id = line_id (group, key);
  if (g_hash_table_contains (self->lines, id))
    {
      add_line_problem (self, lineno, _("[%s] %s: expected each key once in a group, found it already on line %u"),
                        group, key, GPOINTER_TO_UINT (g_hash_table_lookup (self->lines, id)));
      /* GKeyFile would list the key twice */
      return FALSE;
    }
  g_hash_table_insert (self->lines, g_steal_pointer (&id), GUINT_TO_POINTER (lineno));

  return TRUE;
}

/* Records a problem for every line that is not part of a key file, not
 * UTF-8, or repeats a group or a key, and returns the text GKeyFile may
 * read: each line skipped blanked, so that the line numbers stay. */
static GString *
scan (SymfonicConfigFile  *self,
      const char          *data,
      gsize                length)
{
  g_autofree char *group = NULL;
  const char *end = data + length;
  const char *line = data;
  GString *readable = g_string_sized_new (length + 1);
  gboolean group_valid = TRUE;
  guint lineno = 0;

  while (line < end)
    {
      const char *start = line;
      const char *eol = memchr (line, '\n', end - line);
      gsize size = (eol != NULL ? eol : end) - line;
      g_autofree char *text = g_strndup (line, size);
      const char *bad_byte = NULL;
      gboolean keep = TRUE;
      char *stripped;

      lineno++;
      line = eol != NULL ? eol + 1 : end;

      if (!g_utf8_validate_len (text, size, &bad_byte))
        {
          /* the NUL of a line is what g_strndup() stopped at */
          add_line_problem (self, lineno, _("expected UTF-8 text, found the byte 0x%02x"),
                            bad_byte < text + size ? (guchar) *bad_byte : 0);
          g_string_append_c (readable, '\n');
          continue;
        }

      stripped = g_strstrip (text);
      if (*stripped == '[')
        {
          keep = scan_group (self, stripped, lineno, &group);
          group_valid = keep;
        }
      else if (*stripped != '\0' && *stripped != '#')
        keep = scan_key (self, stripped, lineno, group, group_valid);

      if (keep)
        g_string_append_len (readable, start, size);
      g_string_append_c (readable, '\n');
    }

  return readable;
}

/**
 * symfonic_config_file_new_from_data_full:
 * @data: the file's text
 * @length: the length of @data, or -1 if it is nul-terminated
 * @name: how errors name the file, usually its path
 * @flags: how to treat the lines that are not part of a key file
 * @error: return location for a #GError
 *
 * Parses @data, refusing text that is not UTF-8, lines that are not part
 * of a key file, and repeated groups and keys, each naming the line.
 *
 * With %SYMFONIC_CONFIG_FILE_COLLECT_ERRORS these are recorded as
 * problems of the file (see symfonic_config_file_add_error()) instead,
 * and the lines skipped: the caller goes on checking the groups and keys,
 * and symfonic_config_file_check_errors() lists every problem.
 *
 * Returns: (transfer full): the parsed file, or %NULL with @error set to a
 *   %SYMFONIC_ERROR_CONFIG that lists every problem, one per line
 */
SymfonicConfigFile *
symfonic_config_file_new_from_data_full (const char               *data,
                                         gssize                    length,
                                         const char               *name,
                                         SymfonicConfigFileFlags   flags,
                                         GError                  **error)
{
  g_autoptr(SymfonicConfigFile) self = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GString) readable = NULL;
  gsize size;

  g_return_val_if_fail (data != NULL || length == 0, NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  size = length < 0 ? strlen (data) : (gsize) length;
  self = g_object_new (SYMFONIC_TYPE_CONFIG_FILE, NULL);
  self->name = g_strdup (name);

  readable = scan (self, data, size);
  if (!(flags & SYMFONIC_CONFIG_FILE_COLLECT_ERRORS) && !symfonic_config_file_check_errors (self, error))
    return NULL;

  /* what the scan let through, GKeyFile takes */
  if (!g_key_file_load_from_data (self->key_file, readable->str, readable->len, G_KEY_FILE_NONE, &local_error))
    {
      symfonic_config_file_add_error (self, NULL, NULL, "%s", local_error->message);
      symfonic_config_file_check_errors (self, error);
      return NULL;
    }

  return g_steal_pointer (&self);
}

/**
 * symfonic_config_file_new_from_data:
 * @data: the file's text
 * @length: the length of @data, or -1 if it is nul-terminated
 * @name: how errors name the file, usually its path
 * @error: return location for a #GError
 *
 * Parses @data, refusing text that is not UTF-8, lines that are not part
 * of a key file, and repeated groups and keys, each naming the line: as
 * symfonic_config_file_new_from_data_full() without flags.
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
  return symfonic_config_file_new_from_data_full (data, length, name, SYMFONIC_CONFIG_FILE_NONE, error);
}

/**
 * symfonic_config_file_new_for_file_full:
 * @file: a local configuration file
 * @flags: how to treat the lines that are not part of a key file
 * @error: return location for a #GError
 *
 * Reads @file as symfonic_config_file_load() does, capped at
 * %SYMFONIC_CONFIG_FILE_MAX_SIZE, and parses it as
 * symfonic_config_file_new_from_data_full() does; errors name the file by
 * its parse name. A file that cannot be read fails whatever @flags say.
 *
 * Returns: (transfer full): the parsed file, or %NULL with @error set to a
 *   %SYMFONIC_ERROR_CONFIG
 */
SymfonicConfigFile *
symfonic_config_file_new_for_file_full (GFile                    *file,
                                        SymfonicConfigFileFlags   flags,
                                        GError                  **error)
{
  g_autofree char *contents = NULL;
  g_autofree char *name = NULL;
  gsize length;

  g_return_val_if_fail (G_IS_FILE (file), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!symfonic_config_file_load (file, SYMFONIC_CONFIG_FILE_MAX_SIZE, &contents, &length, error))
    return NULL;

  name = g_file_get_parse_name (file);
  return symfonic_config_file_new_from_data_full (contents, length, name, flags, error);
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
  return symfonic_config_file_new_for_file_full (file, SYMFONIC_CONFIG_FILE_NONE, error);
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

          return symfonic_config_file_set_error (self, error, group, keys[i], _("expected one of %s, found an unknown key"),
                                                 list);
        }
    }

  return TRUE;
}

/* `FILE:LINE: [group] key: message`, and the line it names (0: none). */
static char *
format_problem (SymfonicConfigFile *self,
                const char         *group,
                const char         *key,
                const char         *message,
                guint              *line)
{
  g_autofree char *where = NULL;

  *line = 0;
  if (group == NULL)
    return g_strdup_printf ("%s: %s", self->name, message);

  if (key != NULL)
    *line = symfonic_config_file_get_line (self, group, key);
  if (*line == 0)
    *line = symfonic_config_file_get_line (self, group, NULL);
  where = *line > 0 ? g_strdup_printf ("%s:%u", self->name, *line) : g_strdup (self->name);

  if (key != NULL)
    return g_strdup_printf ("%s: [%s] %s: %s", where, group, key, message);
  return g_strdup_printf ("%s: [%s]: %s", where, group, message);
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
  g_autofree char *text = NULL;
  guint line;

  g_return_val_if_fail (SYMFONIC_IS_CONFIG_FILE (self), FALSE);
  g_return_val_if_fail (group != NULL || key == NULL, FALSE);
  g_return_val_if_fail (message != NULL, FALSE);

  text = format_problem (self, group, key, message, &line);
  g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, text);

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

/**
 * symfonic_config_file_add_error_literal:
 * @self: a #SymfonicConfigFile
 * @group: (nullable): the group the problem is in, or %NULL for the whole file
 * @key: (nullable): the key of @group the problem is with, or %NULL
 * @message: what is wrong: what was expected, and what was found
 *
 * Records a problem of the file, worded as
 * symfonic_config_file_set_error_literal() words it, and lets the reader
 * go on to the next key or group: symfonic_config_file_check_errors()
 * then lists every problem recorded.
 *
 * Returns: %FALSE, so a check can `return` it
 */
gboolean
symfonic_config_file_add_error_literal (SymfonicConfigFile *self,
                                        const char         *group,
                                        const char         *key,
                                        const char         *message)
{
  guint line;
  char *text;

  g_return_val_if_fail (SYMFONIC_IS_CONFIG_FILE (self), FALSE);
  g_return_val_if_fail (group != NULL || key == NULL, FALSE);
  g_return_val_if_fail (message != NULL, FALSE);

  text = format_problem (self, group, key, message, &line);
  add_problem (self, line, text, NULL);

  return FALSE;
}

/**
 * symfonic_config_file_add_error: (skip)
 * @self: a #SymfonicConfigFile
 * @group: (nullable): the group the problem is in, or %NULL for the whole file
 * @key: (nullable): the key of @group the problem is with, or %NULL
 * @format: printf()-style format of what is wrong
 * @...: arguments for @format
 *
 * As symfonic_config_file_add_error_literal(), with a formatted message.
 *
 * Returns: %FALSE, so a check can `return` it
 */
gboolean
symfonic_config_file_add_error (SymfonicConfigFile *self,
                                const char         *group,
                                const char         *key,
                                const char         *format,
                                ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);

  return symfonic_config_file_add_error_literal (self, group, key, message);
}

/* A problem whose details are the lines of another file's own list,
 * which go right below it, in their order: the file a key names. */
void
symfonic_config_file_add_error_with_lines (SymfonicConfigFile  *self,
                                           const char          *group,
                                           const char          *key,
                                           const char          *message,
                                           const char * const  *below)
{
  guint line;
  char *text;

  g_return_if_fail (SYMFONIC_IS_CONFIG_FILE (self));
  g_return_if_fail (group != NULL || key == NULL);
  g_return_if_fail (message != NULL);

  text = format_problem (self, group, key, message, &line);
  add_problem (self, line, text, g_strdupv ((GStrv) below));
}

/**
 * symfonic_config_file_get_n_errors:
 * @self: a #SymfonicConfigFile
 *
 * How many problems were recorded: by the parse, with
 * %SYMFONIC_CONFIG_FILE_COLLECT_ERRORS, and with
 * symfonic_config_file_add_error().
 *
 * Returns: the number of problems recorded so far
 */
guint
symfonic_config_file_get_n_errors (SymfonicConfigFile *self)
{
  g_return_val_if_fail (SYMFONIC_IS_CONFIG_FILE (self), 0);

  return self->problems->len;
}

/* By line, a problem of the whole file after those of its lines; in the
 * order recorded within a line. */
static int
compare_problems (gconstpointer a,
                  gconstpointer b)
{
  const Problem *pa = *(const Problem * const *) a;
  const Problem *pb = *(const Problem * const *) b;
  guint la = pa->line > 0 ? pa->line : G_MAXUINT;
  guint lb = pb->line > 0 ? pb->line : G_MAXUINT;

  if (la != lb)
    return la < lb ? -1 : 1;
  return pa->seq < pb->seq ? -1 : pa->seq > pb->seq;
}

/**
 * symfonic_config_file_check_errors:
 * @self: a #SymfonicConfigFile
 * @error: return location for a #GError
 *
 * Ends a check that went on past its problems: when any was recorded,
 * sets @error to one %SYMFONIC_ERROR_CONFIG whose message lists them all,
 * one per line (`FILE:LINE: [group] key: message`), sorted by line, a
 * problem with the whole file last.
 *
 * Returns: %TRUE if no problem was recorded
 */
gboolean
symfonic_config_file_check_errors (SymfonicConfigFile  *self,
                                   GError             **error)
{
  g_autoptr(GPtrArray) sorted = NULL;
  g_autoptr(GString) list = NULL;

  g_return_val_if_fail (SYMFONIC_IS_CONFIG_FILE (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->problems->len == 0)
    return TRUE;

  /* a copy would free the problems with it */
  sorted = g_ptr_array_sized_new (self->problems->len);
  for (guint i = 0; i < self->problems->len; i++)
    g_ptr_array_add (sorted, g_ptr_array_index (self->problems, i));
  g_ptr_array_sort (sorted, compare_problems);

  list = g_string_new (NULL);
  for (guint i = 0; i < sorted->len; i++)
    {
      const Problem *problem = g_ptr_array_index (sorted, i);

      g_string_append_printf (list, "%s%s", list->len > 0 ? "\n" : "", problem->text);
      for (guint j = 0; problem->below != NULL && problem->below[j] != NULL; j++)
        g_string_append_printf (list, "\n%s", problem->below[j]);
    }
  g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, list->str);

  return FALSE;
}

