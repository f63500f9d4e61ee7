/* symfonic-upstream-failure.h: what an HTTP source tells of a failure
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

G_BEGIN_DECLS

GError   *symfonic_upstream_failure_new           (const char    *run_id,
                                                   const char    *display_url,
                                                   SymfonicError  code,
                                                   const char    *public_text,
                                                   const char    *format,
                                                   ...) G_GNUC_PRINTF (5, 6);
GError   *symfonic_upstream_failure_new_valist    (const char    *run_id,
                                                   const char    *display_url,
                                                   SymfonicError  code,
                                                   const char    *public_text,
                                                   const char    *format,
                                                   va_list        args) G_GNUC_PRINTF (5, 0);
GError   *symfonic_upstream_failure_for_transport (const char    *run_id,
                                                   const char    *display_url,
                                                   const GError  *error,
                                                   guint          timeout);
gboolean  symfonic_upstream_is_event_stream       (const char    *content_type);

G_END_DECLS
