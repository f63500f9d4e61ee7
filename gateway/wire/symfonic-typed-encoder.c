/* symfonic-typed-encoder.c: the typed event stream
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-event-private.h"
#include "symfonic-encoder-private.h"
#include "symfonic-json-private.h"
#include "symfonic-string-private.h"

/* The typed stream keeps its published order (seed 001): activations
 * first; thinking, text and tools; at most one MemoryExtractedEvent after
 * the last delta; exactly one ConsolidationScheduledEvent; graph events
 * after it. The encoder never re-orders or re-emits: an event that would
 * break the order is dropped and counted. */
typedef enum {
  PHASE_ACTIVATIONS,
  PHASE_ANSWER,
  PHASE_MEMORY,
  PHASE_CONSOLIDATED,
  PHASE_DONE,
} Phase;

typedef struct
{
  SymfonicEncoder  parent;
  /* the stream's position in the seed's order */
  Phase            phase;
  /* the stream sent its one ConsolidationScheduledEvent */
  gboolean         consolidated;
} TypedEncoder;

/* The phase an event belongs to, and whether it may repeat there. */
static Phase
phase_of (SymfonicEventKind  kind,
          gboolean          *repeats)
{
  *repeats = TRUE;
  switch (kind)
    {
    case SYMFONIC_EVENT_KIND_ACTIVATION:
      return PHASE_ACTIVATIONS;
    case SYMFONIC_EVENT_KIND_MEMORY_EXTRACTED:
      *repeats = FALSE;
      return PHASE_MEMORY;
    case SYMFONIC_EVENT_KIND_CONSOLIDATION_SCHEDULED:
      *repeats = FALSE;
      return PHASE_CONSOLIDATED;
    case SYMFONIC_EVENT_KIND_GRAPH_NODE_CREATED:
    case SYMFONIC_EVENT_KIND_GRAPH_EDGE_CREATED:
      return PHASE_CONSOLIDATED;
    case SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE:
    case SYMFONIC_EVENT_KIND_CHUNK:
      *repeats = FALSE;
      return PHASE_DONE;
    case SYMFONIC_EVENT_KIND_THINKING_DELTA:
    case SYMFONIC_EVENT_KIND_TEXT_DELTA:
    case SYMFONIC_EVENT_KIND_TOOL_CALL_START:
    case SYMFONIC_EVENT_KIND_TOOL_CALL_DELTA:
    case SYMFONIC_EVENT_KIND_TOOL_RESULT:
    default:
      return PHASE_ANSWER;
    }
}

/* Moves the stream to the event's phase, or says it would go back. Graph
 * events need the consolidation that opens their phase. */
static gboolean
advance (TypedEncoder      *self,
         SymfonicEventKind  kind)
{
  gboolean repeats;
  Phase phase = phase_of (kind, &repeats);

  if (phase < self->phase || (phase == self->phase && !repeats))
    return FALSE;
  if ((kind == SYMFONIC_EVENT_KIND_GRAPH_NODE_CREATED || kind == SYMFONIC_EVENT_KIND_GRAPH_EDGE_CREATED) &&
      self->phase != PHASE_CONSOLIDATED)
    return FALSE;

  self->phase = phase;
  if (kind == SYMFONIC_EVENT_KIND_CONSOLIDATION_SCHEDULED)
    self->consolidated = TRUE;
  return TRUE;
}

static void
append_frame (SymfonicEncoder *encoder,
              GString         *out,
              const char      *name,
              SymfonicEvent   *event)
{
  symfonic_encoder_begin_frame (encoder, out, name);
  symfonic_event_write_json (event, out);
  symfonic_string_append_len (out, "\n\n", 2);
}

static SymfonicFrameClass
typed_event (SymfonicEncoder *encoder,
             SymfonicEvent   *event,
             GString         *out)
{
  TypedEncoder *self = (TypedEncoder *) encoder;
  SymfonicEventKind kind = symfonic_event_peek_kind (event);

  /* chunks have no typed form */
  if (kind == SYMFONIC_EVENT_KIND_CHUNK || !advance (self, kind))
    {
      encoder->dropped++;
      return SYMFONIC_FRAME_NONE;
    }

  switch (kind)
    {
    case SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE:
      symfonic_encoder_keep_fallback (encoder, event);
      return SYMFONIC_FRAME_NONE;

    case SYMFONIC_EVENT_KIND_TEXT_DELTA:
      {
        gsize length;
        const char *text = symfonic_event_peek_text (event, &length);

        /* the frozen payload only: a provider's log probabilities are
         * for the OpenAI route */
        symfonic_encoder_keep_text (encoder, event);
        symfonic_encoder_begin_frame (encoder, out, "TextDeltaEvent");
        symfonic_string_append_literal (out, "{\"text\":");
        symfonic_json_append_string (out, text, length);
        symfonic_string_append_literal (out, "}\n\n");
      }
      return SYMFONIC_FRAME_DROPPABLE;

    case SYMFONIC_EVENT_KIND_THINKING_DELTA:
      {
        gsize length;
        const char *text = symfonic_event_peek_text (event, &length);

        /* the frozen payload only: an Anthropic upstream's signature,
         * which comes on an empty delta, is for the anthropic route */
        if (length == 0)
          return SYMFONIC_FRAME_NONE;
        symfonic_encoder_begin_frame (encoder, out, "ThinkingDeltaEvent");
        g_string_append (out, "{\"text\":");
        symfonic_json_append_string (out, text, length);
        g_string_append (out, "}\n\n");
      }
      return SYMFONIC_FRAME_DROPPABLE;

    /* as the source made them: a provider source's carry the provider's
     * index and the arguments, the start what came with it and each
     * delta the next fragment; none may be shed, the terminal does not
     * carry them */
    case SYMFONIC_EVENT_KIND_TOOL_CALL_START:
      encoder->n_tool_calls++;
      append_frame (encoder, out, "ToolCallStartEvent", event);
      return SYMFONIC_FRAME_KEPT;

    case SYMFONIC_EVENT_KIND_TOOL_CALL_DELTA:
      append_frame (encoder, out, "ToolCallDeltaEvent", event);
      return SYMFONIC_FRAME_KEPT;

    case SYMFONIC_EVENT_KIND_ACTIVATION:
    case SYMFONIC_EVENT_KIND_TOOL_RESULT:
    case SYMFONIC_EVENT_KIND_MEMORY_EXTRACTED:
    case SYMFONIC_EVENT_KIND_CONSOLIDATION_SCHEDULED:
    case SYMFONIC_EVENT_KIND_GRAPH_NODE_CREATED:
    case SYMFONIC_EVENT_KIND_GRAPH_EDGE_CREATED:
    case SYMFONIC_EVENT_KIND_CHUNK:
    default:
      append_frame (encoder, out, symfonic_event_get_name (event), event);
      return SYMFONIC_FRAME_KEPT;
    }
}

/* The tokens the upstream reported, as the stream metered them, when it
 * reported any: what a budget settled, and the reasoning part of the
 * output when the provider said. A stream without a report has none. */
static void
append_usage (SymfonicEncoder *encoder,
              GString         *out)
{
  SymfonicEncoderUsage usage;
  guint64 input, output;
  gboolean reported = FALSE;

  symfonic_stream_get_usage (encoder->stream, &input, &output, &reported);
  if (!reported)
    return;
  symfonic_encoder_get_usage (encoder, &usage);
  symfonic_string_append_literal (out, ",\"usage\":{\"input_tokens\":");
  symfonic_json_append_int (out, input);
  symfonic_string_append_literal (out, ",\"output_tokens\":");
  symfonic_json_append_int (out, output);
  if (usage.reasoning >= 0)
    {
      symfonic_string_append_literal (out, ",\"reasoning_tokens\":");
      symfonic_json_append_int (out, usage.reasoning);
    }
  g_string_append_c (out, '}');
}

static void
typed_success (SymfonicEncoder *encoder,
               gint64           duration_ms,
               GString         *out)
{
  TypedEncoder *self = (TypedEncoder *) encoder;
  const char *text = symfonic_encoder_final_text (encoder);

  /* exactly one consolidation per successful stream, even when the
   * upstream scheduled none (its terminal has moved the phase past it);
   * the fields have the upstream's JSON types, an object and a count */
  if (!self->consolidated)
    {
      symfonic_encoder_begin_frame (encoder, out, "ConsolidationScheduledEvent");
      g_string_append (out, "{\"report\":{},\"graph_mutations\":0}\n\n");
    }

  /* the whole answer, how long it took and why it ended */
  symfonic_encoder_begin_frame (encoder, out, "ResponseCompleteEvent");
  symfonic_string_append_literal (out, "{\"text\":");
  symfonic_json_append_string (out, text, -1);
  symfonic_string_append_literal (out, ",\"duration_ms\":");
  symfonic_json_append_int (out, MAX (duration_ms, 0));
  symfonic_string_append_literal (out, ",\"finish_reason\":\"");
  g_string_append (out, symfonic_encoder_finish_reason (encoder));
  symfonic_string_append_literal (out, "\"");
  append_usage (encoder, out);
  symfonic_string_append_literal (out, "}\n\n");
}

const SymfonicEncoderVTable symfonic_typed_encoder = {
  .instance_size = sizeof (TypedEncoder),
  .streaming = TRUE,
  .event = typed_event,
  .success = typed_success,
};
