/* symfonic-service.c: systemd's socket activation and readiness protocols
 *
 * Both are small and stable (sd_listen_fds(3), sd_notify(3)), and speaking
 * them here keeps the gateway free of a dependency on libsystemd: without
 * systemd the environment variables are simply absent.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <glib/gi18n.h>

#include "symfonic-service-private.h"

/* the first descriptor systemd passes (SD_LISTEN_FDS_START) */
#define LISTEN_FDS_START 3

/* The listening socket systemd passed (LISTEN_FDS, for this process as
 * LISTEN_PID says), or NULL without an error when none was. Exactly one
 * socket is served: the workers share it. The variables are removed, so
 * that no child takes the socket for its own. */
GSocket *
symfonic_service_take_listen_socket (GError **error)
{
  const char *pid = g_getenv ("LISTEN_PID");
  const char *fds = g_getenv ("LISTEN_FDS");
  g_autoptr(GSocket) socket = NULL;
  guint64 number;
  gint listening;
  int flags;

  if (pid == NULL || fds == NULL ||
      !g_ascii_string_to_unsigned (pid, 10, 1, G_MAXINT, &number, NULL) || (pid_t) number != getpid ())
    return NULL;

  g_unsetenv ("LISTEN_PID");
  g_unsetenv ("LISTEN_FDS");
  g_unsetenv ("LISTEN_FDNAMES");

  if (!g_ascii_string_to_unsigned (fds, 10, 1, 1, &number, NULL))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   _("LISTEN_FDS is “%s”: exactly one listening socket can be served"), fds);
      return NULL;
    }

  flags = fcntl (LISTEN_FDS_START, F_GETFD);
  if (flags < 0 || fcntl (LISTEN_FDS_START, F_SETFD, flags | FD_CLOEXEC) < 0)
    {
      int saved = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   _("Cannot use the socket passed in: %s"), g_strerror (saved));
      return NULL;
    }

  socket = g_socket_new_from_fd (LISTEN_FDS_START, error);
  if (socket == NULL)
    return NULL;
  if (g_socket_get_socket_type (socket) != G_SOCKET_TYPE_STREAM)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           _("The socket passed in is not a stream socket"));
      return NULL;
    }
  /* one that does not listen is readable at once and for ever: accepting
   * from it fails each time and the workers would spin */
  if (!g_socket_get_option (socket, SOL_SOCKET, SO_ACCEPTCONN, &listening, error))
    return NULL;
  if (!listening)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           _("The socket passed in is not listening"));
      return NULL;
    }

  return g_steal_pointer (&socket);
}

/* Tells the service manager @state ("READY=1", "STOPPING=1" …) when it
 * asked to be told (NOTIFY_SOCKET). Failing to tell is logged, never
 * fatal: the gateway serves either way. */
void
symfonic_service_notify (const char *state)
{
  const char *path = g_getenv ("NOTIFY_SOCKET");
  struct sockaddr_un address = { .sun_family = AF_UNIX };
  gsize length;
  int fd;

  if (path == NULL || (path[0] != '/' && path[0] != '@'))
    return;

  length = strlen (path);
  if (length >= sizeof address.sun_path)
    {
      g_warning ("NOTIFY_SOCKET is too long");
      return;
    }
  memcpy (address.sun_path, path, length);
  /* '@' names a socket in the abstract namespace */
  if (path[0] == '@')
    address.sun_path[0] = '\0';

  fd = socket (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0 ||
      sendto (fd, state, strlen (state), MSG_NOSIGNAL, (struct sockaddr *) &address,
              offsetof (struct sockaddr_un, sun_path) + length) < 0)
    g_warning ("Cannot notify the service manager: %s", g_strerror (errno));
  if (fd >= 0)
    close (fd);
}
