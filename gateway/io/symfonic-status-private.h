/* symfonic-status-private.h: HTTP reason phrases
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

G_GNUC_INTERNAL
const char *symfonic_status_get_phrase (guint status);

G_END_DECLS
