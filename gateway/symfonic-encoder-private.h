/* symfonic-encoder-private.h: a route's wire shape
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-error-frame.h"
#include "symfonic-event.h"
#include "symfonic-route.h"

G_BEGIN_DECLS

typedef enum {
  SYMFONIC_FRAME_NONE,
  SYMFONIC_FRAME_DROPPABLE,
  SYMFONIC_FRAME_KEPT,
} SymfonicFrameClass;

typedef struct _SymfonicEncoder SymfonicEncoder;

G_GNUC_INTERNAL
gboolean           symfonic_encoder_supports (SymfonicRouteKind   kind);
G_GNUC_INTERNAL
SymfonicEncoder   *symfonic_encoder_new      (SymfonicRouteKind   kind);
G_GNUC_INTERNAL
void               symfonic_encoder_free     (SymfonicEncoder    *self);
G_GNUC_INTERNAL
SymfonicFrameClass symfonic_encoder_event    (SymfonicEncoder    *self,
                                              SymfonicEvent      *event,
                                              GString            *out);
G_GNUC_INTERNAL
void               symfonic_encoder_success  (SymfonicEncoder    *self,
                                              gint64              duration_ms,
                                              GString            *out);
G_GNUC_INTERNAL
void               symfonic_encoder_error    (SymfonicEncoder    *self,
                                              SymfonicErrorFrame *frame,
                                              GString            *out);
G_GNUC_INTERNAL
guint64            symfonic_encoder_get_dropped (SymfonicEncoder *self);

G_END_DECLS
