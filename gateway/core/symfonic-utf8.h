/* symfonic-utf8.h: UTF-8 for text that arrives in pieces
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <glib.h>

G_BEGIN_DECLS

gsize symfonic_utf8_unfinished_suffix (const char *text,
                                       gsize       length);

G_END_DECLS
