/* symfonic-scratch-private.h: text buffers per thread, reused by every
 * event or stream instead of allocated for each
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

#include "symfonic-string-private.h"

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

/* One rare large event or burst does not leave its size behind: a
 * thread's buffer or spare past this is let go. */
#define SYMFONIC_SCRATCH_KEPT_BYTES (64 * 1024)

/* Each use has its own buffer per thread, defined with
 * `SYMFONIC_SCRATCH_DEFINE (name);` and taken, empty, with
 * `symfonic_scratch_get (name)`: valid until the next take on this
 * thread, so what is written there is copied out before the hook returns.
 * A thread-local pointer makes the take one TLS lookup and a test, where
 * a GPrivate lookup went through GLib and pthread (it runs for every
 * event); the GPrivate frees the buffer when the thread ends, and forgets
 * it, so that a destructor running after it on that thread makes a new
 * one rather than take the freed one. */
#define SYMFONIC_SCRATCH_DEFINE(name) \
  static _Thread_local GString *name##_text; \
  static void \
  name##_free (gpointer text) \
  { \
    if (name##_text == text) \
      name##_text = NULL; \
    g_string_free (text, TRUE); \
  } \
  static GPrivate name##_key = G_PRIVATE_INIT (name##_free)
#define symfonic_scratch_get(name) symfonic_scratch_take (&name##_text, &name##_key)

G_GNUC_INTERNAL
GString *symfonic_scratch_renew (GString  **text,
                                 GPrivate  *key);

static inline GString *
symfonic_scratch_take (GString  **text,
                       GPrivate  *key)
{
  if (G_UNLIKELY (*text == NULL || (*text)->allocated_len > SYMFONIC_SCRATCH_KEPT_BYTES))
    return symfonic_scratch_renew (text, key);

  symfonic_string_clear (*text);

  return *text;
}

/* Smaller buffers are not kept: growing one to this costs little. */
#define SYMFONIC_SPARE_BUFFER_MIN 1024

G_GNUC_INTERNAL
GString *symfonic_spare_buffer_new  (gsize     size);
G_GNUC_INTERNAL
void     symfonic_spare_buffer_take (GString **buffer);
G_GNUC_INTERNAL
void     symfonic_spare_buffer_give (GString  *buffer);

G_END_DECLS
