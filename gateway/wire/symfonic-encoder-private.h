/* symfonic-encoder-private.h: a route's wire shape
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-error-frame.h"
#include "symfonic-event.h"
#include "symfonic-invocation.h"
#include "symfonic-route.h"
#include "symfonic-stream.h"

G_BEGIN_DECLS

typedef enum {
  SYMFONIC_FRAME_NONE,
  SYMFONIC_FRAME_DROPPABLE,
  SYMFONIC_FRAME_KEPT,
} SymfonicFrameClass;

typedef enum {
  SYMFONIC_ENCODER_FLAGS_NONE = 0,
  /* a provider route's client asked for one JSON answer (`"stream": false`) */
  SYMFONIC_ENCODER_ANSWER = 1 << 0,
  /* an OpenAI client asked for the usage chunk (`stream_options.include_usage`) */
  SYMFONIC_ENCODER_INCLUDE_USAGE = 1 << 1,
} SymfonicEncoderFlags;

typedef struct _SymfonicEncoder SymfonicEncoder;

/* What a provider's format publishes of an event. */
typedef enum {
  SYMFONIC_PROVIDER_PART_NONE,
  SYMFONIC_PROVIDER_PART_TEXT,
  SYMFONIC_PROVIDER_PART_THINKING,
  /* an empty thinking delta carrying more (an Anthropic signature) */
  SYMFONIC_PROVIDER_PART_THINKING_EXTRAS,
  SYMFONIC_PROVIDER_PART_TOOL_CALL,
} SymfonicProviderPart;

/* A tool call as a ToolCallStartEvent carries it; the fields a provider
 * source adds (index, arguments) have defaults for sources without them. */
typedef struct
{
  const char *name;
  const char *id;
  /* complete arguments, a JSON text */
  const char *arguments;
  gint64      index;
} SymfonicToolCall;

/* One per route kind. A streaming encoder writes one SSE frame per call;
 * the others write nothing until the end, then the whole JSON body. Each
 * shape keeps its own state in its own instance struct, which embeds
 * SymfonicEncoder first and is @instance_size bytes; @clear (optional)
 * frees what that state holds; @error (optional) writes the error terminal
 * of a stream in the shape's own form instead of the `event: error` frame. */
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
  void               (*error)   (SymfonicEncoder    *self,
                                 SymfonicErrorFrame *frame,
                                 GString            *out);
} SymfonicEncoderVTable;

/* The state every shape needs: the text actually sent, so the success
 * terminal carries exactly the concatenation of the deltas (seed 000), and
 * the upstream's own final text, which stands in only when no delta
 * streamed at all. */
struct _SymfonicEncoder
{
  const SymfonicEncoderVTable *vtable;
  SymfonicRouteKind            kind;
  SymfonicEncoderFlags         flags;
  SymfonicStream              *stream;
  SymfonicInvocation          *invocation;
  /* tool calls seen, the index of one whose source gave none */
  guint                        n_tool_calls;
  GString                     *text;
  char                        *fallback;
  guint64                      dropped;
  /* the id of the latest frame written: frames are numbered from 1 */
  guint64                      seq;
};

G_GNUC_INTERNAL extern const SymfonicEncoderVTable symfonic_typed_encoder;
G_GNUC_INTERNAL extern const SymfonicEncoderVTable symfonic_chunk_encoder;
G_GNUC_INTERNAL extern const SymfonicEncoderVTable symfonic_answer_encoder;
G_GNUC_INTERNAL extern const SymfonicEncoderVTable symfonic_openai_stream_encoder;
G_GNUC_INTERNAL extern const SymfonicEncoderVTable symfonic_openai_answer_encoder;
G_GNUC_INTERNAL extern const SymfonicEncoderVTable symfonic_anthropic_stream_encoder;
G_GNUC_INTERNAL extern const SymfonicEncoderVTable symfonic_anthropic_answer_encoder;

G_GNUC_INTERNAL
void symfonic_openai_error_body    (SymfonicErrorFrame *frame,
                                    GString            *out);
G_GNUC_INTERNAL
void symfonic_anthropic_error_body (SymfonicErrorFrame *frame,
                                    GString            *out);

G_GNUC_INTERNAL
SymfonicEncoder   *symfonic_encoder_new          (SymfonicRouteKind    kind,
                                                  SymfonicStream      *stream,
                                                  SymfonicEncoderFlags flags);
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
void               symfonic_encoder_begin_frame  (SymfonicEncoder    *self,
                                                  GString            *out,
                                                  const char         *name);
G_GNUC_INTERNAL
guint64            symfonic_encoder_get_seq      (SymfonicEncoder    *self);
G_GNUC_INTERNAL
const char        *symfonic_encoder_final_text   (SymfonicEncoder    *self);
G_GNUC_INTERNAL
void               symfonic_encoder_keep_text    (SymfonicEncoder    *self,
                                                  SymfonicEvent      *delta);
G_GNUC_INTERNAL
void               symfonic_encoder_keep_fallback (SymfonicEncoder   *self,
                                                  SymfonicEvent      *terminal);
G_GNUC_INTERNAL
guint64            symfonic_encoder_get_dropped  (SymfonicEncoder    *self);
G_GNUC_INTERNAL
void               symfonic_encoder_error_body   (SymfonicRouteKind   kind,
                                                  SymfonicErrorFrame *frame,
                                                  GString            *out);
G_GNUC_INTERNAL
void               symfonic_encoder_read_tool_call (SymfonicEncoder  *self,
                                                  SymfonicEvent      *event,
                                                  SymfonicToolCall   *call);
G_GNUC_INTERNAL
SymfonicProviderPart symfonic_encoder_provider_part (SymfonicEncoder *self,
                                                  SymfonicEvent      *event,
                                                  SymfonicToolCall   *call);
G_GNUC_INTERNAL
const char        *symfonic_encoder_provider_error_type (SymfonicRouteKind kind,
                                                  guint               status);
G_GNUC_INTERNAL
const char        *symfonic_encoder_unstreamed_text (SymfonicEncoder *self);
G_GNUC_INTERNAL
const char        *symfonic_encoder_get_model    (SymfonicEncoder    *self);
G_GNUC_INTERNAL
void               symfonic_encoder_get_usage    (SymfonicEncoder    *self,
                                                  guint64            *input_tokens,
                                                  guint64            *output_tokens);

G_END_DECLS
