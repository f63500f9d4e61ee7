/* symfonic-scratch-private.h: a text buffer per thread, reused by every
 * event instead of allocated for each
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Each use has its own key, defined as
 * `static GPrivate key = G_PRIVATE_INIT (symfonic_scratch_free);` */
void     symfonic_scratch_free (gpointer  scratch);
GString *symfonic_scratch_get  (GPrivate *key);

G_END_DECLS
