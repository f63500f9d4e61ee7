/* symfonic-config-file.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
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
  g_autofree char *path = NULL;
  g_autofree char *display = NULL;
  g_autoptr(GString) buffer = NULL;
  struct stat st;
  gboolean ok;
  int fd;

  g_return_val_if_fail (G_IS_FILE (file), FALSE);
  g_return_val_if_fail (contents != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  display = g_file_get_parse_name (file);
  path = g_file_get_path (file);
  if (path == NULL)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, _("%s: not a local file"), display);
      return FALSE;
    }

  fd = open (path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return set_errno_error (error, display, errno);

  if (fstat (fd, &st) != 0)
    {
      int errsv = errno;

      close (fd);
      return set_errno_error (error, display, errsv);
    }

  if (!S_ISREG (st.st_mode))
    {
      close (fd);
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, _("%s: not a regular file"), display);
      return FALSE;
    }

  if ((guint64) st.st_size > max_size)
    {
      close (fd);
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("%s: larger than %" G_GSIZE_FORMAT " bytes"), display, max_size);
      return FALSE;
    }

  ok = read_capped (fd, display, st.st_size, max_size, &buffer, error);
  close (fd);
  if (!ok)
    return FALSE;

  if (length != NULL)
    *length = buffer->len;
  *contents = g_string_free (g_steal_pointer (&buffer), FALSE);

  return TRUE;
}
