/* symfonic-service-private.h: what the gateway binary tells, and takes
 * from, the service manager that started it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

GSocket *symfonic_service_take_listen_socket (GError     **error);
void     symfonic_service_notify             (const char  *state);

G_END_DECLS
