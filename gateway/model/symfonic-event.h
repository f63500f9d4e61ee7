/* symfonic-event.h: the typed stream events
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <glib-object.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/**
 * SymfonicEventKind:
 * @SYMFONIC_EVENT_KIND_ACTIVATION: `ActivationEvent`, a memory node activated before the answer
 * @SYMFONIC_EVENT_KIND_THINKING_DELTA: `ThinkingDeltaEvent`, a piece of reasoning text
 * @SYMFONIC_EVENT_KIND_TEXT_DELTA: `TextDeltaEvent`, a piece of the answer
 * @SYMFONIC_EVENT_KIND_TOOL_CALL_START: `ToolCallStartEvent`, the model calls a tool: its
 *   `tool_name` and `tool_call_id`, and from a provider source the provider's `index` and the
 *   `arguments` text that came with the call's start
 * @SYMFONIC_EVENT_KIND_TOOL_RESULT: `ToolResultEvent`, a tool returned
 * @SYMFONIC_EVENT_KIND_MEMORY_EXTRACTED: `MemoryExtractedEvent`, the memory ops parsed from the answer
 * @SYMFONIC_EVENT_KIND_CONSOLIDATION_SCHEDULED: `ConsolidationScheduledEvent`
 * @SYMFONIC_EVENT_KIND_GRAPH_NODE_CREATED: `GraphNodeCreatedEvent`
 * @SYMFONIC_EVENT_KIND_GRAPH_EDGE_CREATED: `GraphEdgeCreatedEvent`
 * @SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE: `ResponseCompleteEvent`, the success terminal
 * @SYMFONIC_EVENT_KIND_CHUNK: an untyped `StreamChunk` (`event_type` and `data`), as
 *   projected for the untyped stream
 * @SYMFONIC_EVENT_KIND_TOOL_CALL_DELTA: `ToolCallDeltaEvent`, the next fragment of a tool
 *   call's `arguments` text, for the call of `tool_call_id` (and the provider's `index`),
 *   as the model streams it
 *
 * The kinds of event that travel through a pipeline.
 */
typedef enum {
  SYMFONIC_EVENT_KIND_ACTIVATION,
  SYMFONIC_EVENT_KIND_THINKING_DELTA,
  SYMFONIC_EVENT_KIND_TEXT_DELTA,
  SYMFONIC_EVENT_KIND_TOOL_CALL_START,
  SYMFONIC_EVENT_KIND_TOOL_RESULT,
  SYMFONIC_EVENT_KIND_MEMORY_EXTRACTED,
  SYMFONIC_EVENT_KIND_CONSOLIDATION_SCHEDULED,
  SYMFONIC_EVENT_KIND_GRAPH_NODE_CREATED,
  SYMFONIC_EVENT_KIND_GRAPH_EDGE_CREATED,
  SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE,
  SYMFONIC_EVENT_KIND_CHUNK,
  SYMFONIC_EVENT_KIND_TOOL_CALL_DELTA,
} SymfonicEventKind;

#define SYMFONIC_TYPE_EVENT (symfonic_event_get_type ())

typedef struct _SymfonicEvent SymfonicEvent;

GType              symfonic_event_get_type          (void) G_GNUC_CONST;

const char        *symfonic_event_kind_to_name      (SymfonicEventKind  kind);
gboolean           symfonic_event_kind_from_name    (const char        *name,
                                                     SymfonicEventKind *kind);
gboolean           symfonic_event_kind_closes_answer (SymfonicEventKind kind);

SymfonicEvent     *symfonic_event_new_text_delta    (const char        *text);
SymfonicEvent     *symfonic_event_new_thinking_delta (const char       *text);
SymfonicEvent     *symfonic_event_new_response_complete (const char    *text,
                                                     gint64             duration_ms);
SymfonicEvent     *symfonic_event_new_chunk         (const char        *event_type,
                                                     JsonNode          *data);
SymfonicEvent     *symfonic_event_new               (SymfonicEventKind  kind,
                                                     JsonObject        *payload,
                                                     GError           **error);
SymfonicEvent     *symfonic_event_new_from_json     (const char        *name,
                                                     JsonNode          *data,
                                                     GError           **error);
SymfonicEvent     *symfonic_event_try_new_from_data (const char        *name,
                                                     const char        *data,
                                                     gsize              length);

SymfonicEvent     *symfonic_event_ref               (SymfonicEvent     *self);
void               symfonic_event_unref             (SymfonicEvent     *self);

SymfonicEventKind  symfonic_event_get_kind          (SymfonicEvent     *self);
const char        *symfonic_event_get_name          (SymfonicEvent     *self);
const char        *symfonic_event_get_text          (SymfonicEvent     *self,
                                                     gsize             *length);
gint64             symfonic_event_get_duration_ms   (SymfonicEvent     *self);
JsonObject        *symfonic_event_get_payload       (SymfonicEvent     *self);
JsonNode          *symfonic_event_get_data          (SymfonicEvent     *self);
JsonNode          *symfonic_event_to_json_node      (SymfonicEvent     *self);
char              *symfonic_event_to_json           (SymfonicEvent     *self);
void               symfonic_event_write_json        (SymfonicEvent     *self,
                                                     GString           *out);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicEvent, symfonic_event_unref)

G_END_DECLS
