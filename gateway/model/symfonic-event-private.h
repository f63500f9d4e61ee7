/* symfonic-event-private.h: what the library knows of an event beyond its API
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-event.h"

G_BEGIN_DECLS

/* Every delta passes a few of the gateway's own stages and encoders, each
 * asking its kind and text: they read the fields here without a call.
 * The layout is not API, so only code built with the library (its
 * in-tree plugins) reads it; only symfonic-event.c writes it. */
struct _SymfonicEvent
{
  gatomicrefcount    ref_count;
  SymfonicEventKind  kind;
  gint64             duration_ms;
  char              *text;
  gsize              text_len;
  JsonObject        *payload;
  JsonNode          *data;
  /* a structured event read from the wire without a tree: @text holds
   * its payload as compact JSON, which is what the encoders write, and
   * @data is made from it once, by whoever asks first, on any thread */
  gboolean           raw;
  /* made in a block of the thread-kept size, which may be kept for another */
  gboolean           small;
};

/* The kinds that close the answer (symfonic_event_kind_closes_answer()),
 * one bit each: the library's own filtering stages ask for every event. */
#define SYMFONIC_EVENT_KINDS_CLOSING_ANSWER \
  ((1u << SYMFONIC_EVENT_KIND_MEMORY_EXTRACTED) | (1u << SYMFONIC_EVENT_KIND_CONSOLIDATION_SCHEDULED) | \
   (1u << SYMFONIC_EVENT_KIND_GRAPH_NODE_CREATED) | (1u << SYMFONIC_EVENT_KIND_GRAPH_EDGE_CREATED) | \
   (1u << SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE))

static inline gboolean
symfonic_event_kind_peek_closes_answer (SymfonicEventKind kind)
{
  return (SYMFONIC_EVENT_KINDS_CLOSING_ANSWER >> kind) & 1u;
}

static inline SymfonicEventKind
symfonic_event_peek_kind (const SymfonicEvent *self)
{
  return self->kind;
}

/* The text of a delta or a terminal, and its length, kept since the event
 * was made; not for other kinds. */
static inline const char *
symfonic_event_peek_text (const SymfonicEvent *self,
                          gsize               *length)
{
  *length = self->text_len;
  return self->text;
}

G_GNUC_INTERNAL
SymfonicEvent *symfonic_event_new_response_complete_like (SymfonicEvent *terminal,
                                                          const char    *text);
G_GNUC_INTERNAL
SymfonicEvent *symfonic_event_new_raw (SymfonicEventKind  kind,
                                       const char        *json,
                                       gsize              length);

G_END_DECLS
