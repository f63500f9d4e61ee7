/* symfonic-encoder-private.h: a route's wire shape
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-error-frame.h"
#include "symfonic-event.h"
#include "symfonic-invocation.h"
#include "symfonic-route.h"

G_BEGIN_DECLS

typedef enum {
  SYMFONIC_FRAME_NONE,
  SYMFONIC_FRAME_DROPPABLE,
  SYMFONIC_FRAME_KEPT,
} SymfonicFrameClass;

typedef struct _SymfonicEncoder SymfonicEncoder;

/* One per route kind. A streaming encoder writes one SSE frame per call;
 * the others write nothing until the end, then the whole JSON body. Each
 * shape keeps its own state in its own instance struct, which embeds
 * SymfonicEncoder first and is @instance_size bytes; @clear (optional)
 * frees what that state holds. */
typedef struct
{
  gsize              instance_size;
  gboolean           streaming;
  SymfonicFrameClass (*event)   (SymfonicEncoder    *self,
                                 SymfonicEvent      *event,
                                 GString            *out);
  void               (*success) (SymfonicEncoder    *self,
                                 gint64              duration_ms,
                                 GString            *out);
  void               (*clear)   (SymfonicEncoder    *self);
} SymfonicEncoderVTable;

/* The state every shape needs: the text actually sent, so the success
 * terminal carries exactly the concatenation of the deltas (seed 000), and
 * the upstream's own final text, which stands in only when no delta
 * streamed at all. */
struct _SymfonicEncoder
{
  const SymfonicEncoderVTable *vtable;
  SymfonicInvocation          *invocation;
  GString                     *text;
  char                        *fallback;
  guint64                      dropped;
  /* the id of the latest frame written: frames are numbered from 1 */
  guint64                      seq;
};

G_GNUC_INTERNAL extern const SymfonicEncoderVTable symfonic_typed_encoder;
G_GNUC_INTERNAL extern const SymfonicEncoderVTable symfonic_chunk_encoder;
G_GNUC_INTERNAL extern const SymfonicEncoderVTable symfonic_answer_encoder;

G_GNUC_INTERNAL
SymfonicEncoder   *symfonic_encoder_new          (SymfonicRouteKind   kind,
                                                  SymfonicInvocation *invocation);
G_GNUC_INTERNAL
void               symfonic_encoder_free         (SymfonicEncoder    *self);
G_GNUC_INTERNAL
gboolean           symfonic_encoder_is_streaming (SymfonicEncoder    *self);
G_GNUC_INTERNAL
SymfonicFrameClass symfonic_encoder_event        (SymfonicEncoder    *self,
                                                  SymfonicEvent      *event,
                                                  GString            *out);
G_GNUC_INTERNAL
void               symfonic_encoder_success      (SymfonicEncoder    *self,
                                                  gint64              duration_ms,
                                                  GString            *out);
G_GNUC_INTERNAL
void               symfonic_encoder_error        (SymfonicEncoder    *self,
                                                  SymfonicErrorFrame *frame,
                                                  GString            *out);
G_GNUC_INTERNAL
void               symfonic_encoder_append_id    (SymfonicEncoder    *self,
                                                  GString            *out);
G_GNUC_INTERNAL
guint64            symfonic_encoder_get_seq      (SymfonicEncoder    *self);
G_GNUC_INTERNAL
const char        *symfonic_encoder_final_text   (SymfonicEncoder    *self);
G_GNUC_INTERNAL
void               symfonic_encoder_keep_fallback (SymfonicEncoder   *self,
                                                  SymfonicEvent      *terminal);
G_GNUC_INTERNAL
guint64            symfonic_encoder_get_dropped  (SymfonicEncoder    *self);

G_END_DECLS
