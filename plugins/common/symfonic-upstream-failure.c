/* symfonic-upstream-failure.c: what an HTTP source tells of a failure
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <glib/gi18n-lib.h>

#include "symfonic-upstream-failure.h"

/* A failure whose message is @public_text, fixed text that a mapper may
 * show a client. Where the upstream is, and what it or a library said
 * (@format), goes to the log only: an error message can reach a client
 * (/resume echoes some), and the upstream's address is the operator's
 * business. */
GError *
symfonic_upstream_failure_new_valist (const char    *run_id,
                                      const char    *display_url,
                                      SymfonicError  code,
                                      const char    *public_text,
                                      const char    *format,
                                      va_list        args)
{
  g_autofree char *why = g_strdup_vprintf (format, args);

  g_message ("Run %s: the upstream %s failed: %s", run_id, display_url, why);

  return g_error_new_literal (SYMFONIC_ERROR, code, public_text);
}

GError *
symfonic_upstream_failure_new (const char    *run_id,
                               const char    *display_url,
                               SymfonicError  code,
                               const char    *public_text,
                               const char    *format,
                               ...)
{
  GError *error;
  va_list args;

  va_start (args, format);
  error = symfonic_upstream_failure_new_valist (run_id, display_url, code, public_text, format, args);
  va_end (args);

  return error;
}

/* The SYMFONIC_ERROR form of a transport failure; @timeout is the
 * silence, in seconds, that counts as one. */
GError *
symfonic_upstream_failure_for_transport (const char   *run_id,
                                         const char   *display_url,
                                         const GError *error,
                                         guint         timeout)
{
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
    return symfonic_upstream_failure_new (run_id, display_url, SYMFONIC_ERROR_UPSTREAM_TIMEOUT,
                                          _("The upstream did not answer in time"), "silent for %u s", timeout);

  if (error->domain == G_RESOLVER_ERROR ||
      g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED) ||
      g_error_matches (error, G_IO_ERROR, G_IO_ERROR_HOST_NOT_FOUND) ||
      g_error_matches (error, G_IO_ERROR, G_IO_ERROR_HOST_UNREACHABLE) ||
      g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE))
    return symfonic_upstream_failure_new (run_id, display_url, SYMFONIC_ERROR_UPSTREAM_UNAVAILABLE,
                                          _("The upstream cannot be reached"), "%s", error->message);

  return symfonic_upstream_failure_new (run_id, display_url, SYMFONIC_ERROR_UPSTREAM,
                                        _("The connection to the upstream failed"), "%s", error->message);
}

/* Whether a Content-Type names an event stream, whatever its parameters. */
gboolean
symfonic_upstream_is_event_stream (const char *content_type)
{
  gsize length;

  if (content_type == NULL)
    return FALSE;
  length = strcspn (content_type, ";");
  while (length > 0 && (content_type[length - 1] == ' ' || content_type[length - 1] == '\t'))
    length--;

  return length == strlen ("text/event-stream") &&
         g_ascii_strncasecmp (content_type, "text/event-stream", length) == 0;
}
