/* symfonic-encoder.c: the typed event stream's wire format
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-encoder-private.h"

/* The encoder owns the one piece of state a stream's contract needs for
 * its whole length: the text actually sent, so that the success terminal
 * carries exactly the concatenation of the deltas (seed 000). The
 * upstream's own terminal is never forwarded; its text only stands in when
 * no delta streamed at all.
 *
 * It also keeps the typed stream's published order (seed 001): activations
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

struct _SymfonicEncoder
{
  SymfonicRouteKind  kind;
  Phase              phase;
  GString           *text;
  char              *fallback;
  guint64            dropped;
};

/* The phase an event belongs to, and whether it may repeat there. */
static Phase
phase_of (SymfonicEventKind  kind,
          gboolean          *repeats)
{
  *repeats = TRUE;
  switch (kind)
    {
    case SYMFONIC_EVENT_ACTIVATION:
      return PHASE_ACTIVATIONS;
    case SYMFONIC_EVENT_MEMORY_EXTRACTED:
      *repeats = FALSE;
      return PHASE_MEMORY;
    case SYMFONIC_EVENT_CONSOLIDATION_SCHEDULED:
      *repeats = FALSE;
      return PHASE_CONSOLIDATED;
    case SYMFONIC_EVENT_GRAPH_NODE_CREATED:
    case SYMFONIC_EVENT_GRAPH_EDGE_CREATED:
      return PHASE_CONSOLIDATED;
    case SYMFONIC_EVENT_RESPONSE_COMPLETE:
    case SYMFONIC_EVENT_CHUNK:
      *repeats = FALSE;
      return PHASE_DONE;
    case SYMFONIC_EVENT_THINKING_DELTA:
    case SYMFONIC_EVENT_TEXT_DELTA:
    case SYMFONIC_EVENT_TOOL_CALL_START:
    case SYMFONIC_EVENT_TOOL_RESULT:
    default:
      return PHASE_ANSWER;
    }
}

/* Moves the stream to the event's phase, or says it would go back. Graph
 * events need the consolidation that opens their phase. */
static gboolean
advance (SymfonicEncoder   *self,
         SymfonicEventKind  kind)
{
  gboolean repeats;
  Phase phase = phase_of (kind, &repeats);

  if (phase < self->phase || (phase == self->phase && !repeats))
    return FALSE;
  if ((kind == SYMFONIC_EVENT_GRAPH_NODE_CREATED || kind == SYMFONIC_EVENT_GRAPH_EDGE_CREATED) &&
      self->phase != PHASE_CONSOLIDATED)
    return FALSE;

  self->phase = phase;
  return TRUE;
}

gboolean
symfonic_encoder_supports (SymfonicRouteKind kind)
{
  return kind == SYMFONIC_ROUTE_KIND_TYPED;
}

SymfonicEncoder *
symfonic_encoder_new (SymfonicRouteKind kind)
{
  SymfonicEncoder *self = g_new0 (SymfonicEncoder, 1);

  g_assert (symfonic_encoder_supports (kind));
  self->kind = kind;
  self->text = g_string_new (NULL);

  return self;
}

void
symfonic_encoder_free (SymfonicEncoder *self)
{
  g_string_free (self->text, TRUE);
  g_free (self->fallback);
  g_free (self);
}

static void
append_typed (GString       *out,
              const char    *name,
              SymfonicEvent *event)
{
  g_string_append (out, "event: ");
  g_string_append (out, name);
  g_string_append (out, "\ndata: ");
  symfonic_event_write_json (event, out);
  g_string_append (out, "\n\n");
}

SymfonicFrameClass
symfonic_encoder_event (SymfonicEncoder *self,
                        SymfonicEvent   *event,
                        GString         *out)
{
  SymfonicEventKind kind = symfonic_event_get_kind (event);

  /* chunks have no typed form */
  if (kind == SYMFONIC_EVENT_CHUNK || !advance (self, kind))
    {
      self->dropped++;
      return SYMFONIC_FRAME_NONE;
    }

  switch (kind)
    {
    case SYMFONIC_EVENT_RESPONSE_COMPLETE:
      g_free (self->fallback);
      self->fallback = g_strdup (symfonic_event_get_text (event));
      return SYMFONIC_FRAME_NONE;

    case SYMFONIC_EVENT_TEXT_DELTA:
      g_string_append (self->text, symfonic_event_get_text (event));
      append_typed (out, "TextDeltaEvent", event);
      return SYMFONIC_FRAME_DROPPABLE;

    case SYMFONIC_EVENT_THINKING_DELTA:
      append_typed (out, "ThinkingDeltaEvent", event);
      return SYMFONIC_FRAME_DROPPABLE;

    case SYMFONIC_EVENT_ACTIVATION:
    case SYMFONIC_EVENT_TOOL_CALL_START:
    case SYMFONIC_EVENT_TOOL_RESULT:
    case SYMFONIC_EVENT_MEMORY_EXTRACTED:
    case SYMFONIC_EVENT_CONSOLIDATION_SCHEDULED:
    case SYMFONIC_EVENT_GRAPH_NODE_CREATED:
    case SYMFONIC_EVENT_GRAPH_EDGE_CREATED:
    case SYMFONIC_EVENT_CHUNK:
    default:
      append_typed (out, symfonic_event_get_name (event), event);
      return SYMFONIC_FRAME_KEPT;
    }
}

void
symfonic_encoder_success (SymfonicEncoder *self,
                          gint64           duration_ms,
                          GString         *out)
{
  const char *text = self->text->len > 0 || self->fallback == NULL ? self->text->str : self->fallback;
  g_autoptr(SymfonicEvent) terminal = symfonic_event_new_response_complete (text, duration_ms);

  /* exactly one consolidation per successful stream, even when the
   * upstream scheduled none */
  if (self->phase < PHASE_CONSOLIDATED)
    g_string_append (out, "event: ConsolidationScheduledEvent\ndata: {\"report\":null,\"graph_mutations\":[]}\n\n");

  append_typed (out, "ResponseCompleteEvent", terminal);
}

void
symfonic_encoder_error (SymfonicEncoder    *self,
                        SymfonicErrorFrame *frame,
                        GString            *out)
{
  g_autofree char *json = symfonic_error_frame_to_json (frame);

  g_string_append (out, "event: error\ndata: ");
  g_string_append (out, json);
  g_string_append (out, "\n\n");
}

guint64
symfonic_encoder_get_dropped (SymfonicEncoder *self)
{
  return self->dropped;
}
