/* symfonic-scratch-private.h: text buffers per thread, reused by every
 * event or stream instead of allocated for each
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Under AddressSanitizer the freed event blocks and output buffers that a
 * thread would keep for its next use go back to malloc instead, which then
 * still sees a freed one used. */
#if defined(__SANITIZE_ADDRESS__)
#define SYMFONIC_KEEPS_FREED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SYMFONIC_KEEPS_FREED 0
#endif
#endif
#ifndef SYMFONIC_KEEPS_FREED
#define SYMFONIC_KEEPS_FREED 1
#endif

/* Each use has its own key, defined as
 * `static GPrivate key = G_PRIVATE_INIT (symfonic_scratch_free);` */
G_GNUC_INTERNAL
void     symfonic_scratch_free (gpointer  scratch);
G_GNUC_INTERNAL
GString *symfonic_scratch_get  (GPrivate *key);

/* Smaller buffers are not kept: growing one to this costs little. */
#define SYMFONIC_SPARE_BUFFER_MIN 1024

G_GNUC_INTERNAL
GString *symfonic_spare_buffer_new  (gsize     size);
G_GNUC_INTERNAL
void     symfonic_spare_buffer_take (GString **buffer);
G_GNUC_INTERNAL
void     symfonic_spare_buffer_give (GString  *buffer);

G_END_DECLS
