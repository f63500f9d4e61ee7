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
  /* an openai route's client speaks the Responses API */
  SYMFONIC_ENCODER_RESPONSES = 1 << 2,
  /* ... and asked for a background response, a run of the run store */
  SYMFONIC_ENCODER_BACKGROUND = 1 << 3,
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
  /* the next fragment of a tool call's arguments */
  SYMFONIC_PROVIDER_PART_TOOL_CALL_DELTA,
} SymfonicProviderPart;

/* A tool call as a ToolCallStartEvent carries it, or a fragment of its
 * arguments as a ToolCallDeltaEvent does; the fields a provider source
 * adds (index, arguments) have defaults for sources without them. */
typedef struct
{
  /* "" for a delta */
  const char *name;
  const char *id;
  /* the arguments text the start came with, or the delta's fragment;
   * NULL when a start came with none (a typed runtime's) */
  const char *arguments;
  /* the provider's index, or the call's ordinal when it gave none */
  gint64      index;
  /* the call's place among the stream's calls, from 0 */
  guint       ordinal;
} SymfonicToolCall;

/* The usage a provider format publishes, from the stream's metered counts
 * and what the upstream said besides. */
typedef struct
{
  /* every prompt token, the cached ones included (OpenAI's prompt_tokens) */
  guint64 input;
  guint64 output;
  /* each -1 when unknown */
  gint64  cache_read;
  gint64  cache_creation;
  gint64  reasoning;
} SymfonicEncoderUsage;

/* One per route kind. A streaming encoder writes one SSE frame per call;
 * the others write nothing until the end, then the whole JSON body. Each
 * shape keeps its own state in its own instance struct, which embeds
 * SymfonicEncoder first and is @instance_size bytes; @init (optional)
 * sets it up, @clear (optional) frees what that state holds; @error (optional) writes the error terminal
 * of a stream in the shape's own form instead of the `event: error` frame. */
typedef struct
{
  gsize              instance_size;
  gboolean           streaming;
  void               (*init)    (SymfonicEncoder    *self);
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
  /* their ids, by ordinal: a delta names its call by id */
  GPtrArray                   *tool_ids;
  /* the upstream's first terminal: its finish reason, and the text that
   * stands in when no delta streamed */
  SymfonicEvent               *terminal;
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
G_GNUC_INTERNAL extern const SymfonicEncoderVTable symfonic_responses_stream_encoder;
G_GNUC_INTERNAL extern const SymfonicEncoderVTable symfonic_responses_answer_encoder;

G_GNUC_INTERNAL
void symfonic_openai_error_body    (SymfonicErrorFrame *frame,
                                    GString            *out);
G_GNUC_INTERNAL
void symfonic_anthropic_error_body (SymfonicErrorFrame *frame,
                                    GString            *out);
G_GNUC_INTERNAL
void symfonic_openai_error_object  (SymfonicErrorFrame *frame,
                                    GString            *out);
G_GNUC_INTERNAL
char *symfonic_responses_id_for_run (const char        *run_id);
G_GNUC_INTERNAL
char *symfonic_responses_run_for_id (const char        *response_id);
G_GNUC_INTERNAL
void symfonic_responses_encoder_write_queued (SymfonicEncoder *encoder,
                                              GString         *out);

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
gboolean           symfonic_encoder_read_tool_delta (SymfonicEncoder *self,
                                                  SymfonicEvent      *event,
                                                  SymfonicToolCall   *call);
G_GNUC_INTERNAL
SymfonicProviderPart symfonic_encoder_provider_part (SymfonicEncoder *self,
                                                  SymfonicEvent      *event,
                                                  SymfonicToolCall   *call);
G_GNUC_INTERNAL
const char        *symfonic_encoder_provider_error_type (SymfonicRouteKind kind,
                                                  guint               status,
                                                  const char         *code);
G_GNUC_INTERNAL
const char        *symfonic_encoder_unstreamed_text (SymfonicEncoder *self);
G_GNUC_INTERNAL
const char        *symfonic_encoder_get_model    (SymfonicEncoder    *self);
G_GNUC_INTERNAL
void               symfonic_encoder_get_usage    (SymfonicEncoder    *self,
                                                  SymfonicEncoderUsage *usage);
G_GNUC_INTERNAL
const char        *symfonic_encoder_finish_reason (SymfonicEncoder   *self);
G_GNUC_INTERNAL
const char        *symfonic_encoder_terminal_string (SymfonicEncoder *self,
                                                  const char         *name);

G_END_DECLS
