/* symfonic-event-private.h: what the library knows of an event beyond its API
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-event.h"

G_BEGIN_DECLS

G_GNUC_INTERNAL
gsize symfonic_event_get_text_length (SymfonicEvent *self);

G_END_DECLS
