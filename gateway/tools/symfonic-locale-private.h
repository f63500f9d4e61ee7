/* symfonic-locale-private.h: the binaries' language set-up
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

void symfonic_locale_init (void);

G_END_DECLS
