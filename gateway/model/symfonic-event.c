/* symfonic-event.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-error.h"
#include "symfonic-event.h"
#include "symfonic-event-private.h"
#include "symfonic-json.h"
#include "symfonic-json-private.h"
#include "symfonic-scratch-private.h"
#include "symfonic-string-private.h"

/**
 * SymfonicEvent:
 *
 * One immutable event of a stream.
 *
 * Events are reference counted and never modified after construction, so a
 * stage may keep or forward the event it was given, and an event can be
 * handed to a stage running on another thread without copying. Text deltas
 * and the response terminal carry their text directly; every other kind
 * carries its payload as a sealed #JsonObject.
 */
G_DEFINE_BOXED_TYPE (SymfonicEvent, symfonic_event, symfonic_event_ref, symfonic_event_unref)

typedef struct
{
  const char *name;
  /* NULL-terminated; every listed field must be present in a payload */
  const char *fields[6];
} KindInfo;

/* The taxonomy of the typed stream (seed 001): wire name and payload fields. */
static const KindInfo kinds[] = {
  [SYMFONIC_EVENT_KIND_ACTIVATION] = { "ActivationEvent", { "node_id", "node_label", "score", "layer", "source_node_id", NULL } },
  [SYMFONIC_EVENT_KIND_THINKING_DELTA] = { "ThinkingDeltaEvent", { "text", NULL } },
  [SYMFONIC_EVENT_KIND_TEXT_DELTA] = { "TextDeltaEvent", { "text", NULL } },
  [SYMFONIC_EVENT_KIND_TOOL_CALL_START] = { "ToolCallStartEvent", { "tool_name", "tool_call_id", NULL } },
  [SYMFONIC_EVENT_KIND_TOOL_RESULT] = { "ToolResultEvent", { "tool_call_id", "result", NULL } },
  [SYMFONIC_EVENT_KIND_MEMORY_EXTRACTED] = { "MemoryExtractedEvent", { "ops", NULL } },
  [SYMFONIC_EVENT_KIND_CONSOLIDATION_SCHEDULED] = { "ConsolidationScheduledEvent", { "report", "graph_mutations", NULL } },
  [SYMFONIC_EVENT_KIND_GRAPH_NODE_CREATED] = { "GraphNodeCreatedEvent", { "node_id", "label", "layer", NULL } },
  [SYMFONIC_EVENT_KIND_GRAPH_EDGE_CREATED] = { "GraphEdgeCreatedEvent", { "source", "target", "relationship", NULL } },
  [SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE] = { "ResponseCompleteEvent", { "text", "duration_ms", NULL } },
  [SYMFONIC_EVENT_KIND_CHUNK] = { "StreamChunk", { "event_type", "data", NULL } },
  [SYMFONIC_EVENT_KIND_TOOL_CALL_DELTA] = { "ToolCallDeltaEvent", { "tool_call_id", "arguments", NULL } },
};

static inline gboolean
kind_is_valid (SymfonicEventKind kind)
{
  return (guint) kind < G_N_ELEMENTS (kinds);
}

static inline gboolean
kind_has_text (SymfonicEventKind kind)
{
  return kind == SYMFONIC_EVENT_KIND_TEXT_DELTA ||
         kind == SYMFONIC_EVENT_KIND_THINKING_DELTA ||
         kind == SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE;
}

/**
 * symfonic_event_kind_closes_answer:
 * @kind: a #SymfonicEventKind
 *
 * Whether an event of @kind closes the answer: no text may follow it, so
 * a stage that withholds text releases it before such an event. These are
 * the kinds the typed stream orders after the last delta
 * (`MemoryExtractedEvent`, `ConsolidationScheduledEvent`, the graph
 * events) and the terminal, `ResponseCompleteEvent`.
 *
 * Returns: %TRUE if no text may follow an event of @kind
 */
gboolean
symfonic_event_kind_closes_answer (SymfonicEventKind kind)
{
  g_return_val_if_fail (kind_is_valid (kind), FALSE);

  return symfonic_event_kind_peek_closes_answer (kind);
}

/**
 * symfonic_event_kind_to_name:
 * @kind: a #SymfonicEventKind
 *
 * The wire name of @kind, the `event:` field of the typed stream.
 *
 * Returns: the name, such as `"TextDeltaEvent"`
 */
const char *
symfonic_event_kind_to_name (SymfonicEventKind kind)
{
  g_return_val_if_fail (kind_is_valid (kind), NULL);

  return kinds[kind].name;
}

/**
 * symfonic_event_kind_from_name:
 * @name: a wire name such as `"TextDeltaEvent"`
 * @kind: (out) (optional): the kind
 *
 * Looks up the kind of a wire name.
 *
 * Returns: %TRUE if @name names an event kind
 */
gboolean
symfonic_event_kind_from_name (const char        *name,
                               SymfonicEventKind *kind)
{
  g_return_val_if_fail (name != NULL, FALSE);

  /* looked up for every event an upstream sends: most names differ in
   * their first two letters (Thinking, Text), which are compared before
   * the whole name; no kind's name is empty, so a first letter that
   * matches is not the end of @name */
  for (guint i = 0; i < G_N_ELEMENTS (kinds); i++)
    {
      if (kinds[i].name[0] == name[0] && kinds[i].name[1] == name[1] && strcmp (kinds[i].name, name) == 0)
        {
          if (kind != NULL)
            *kind = i;
          return TRUE;
        }
    }

  return FALSE;
}

/* Deltas are made and freed by the hundred per stream, each in one block:
 * a thread keeps the blocks of the small events it freed, a bounded number
 * of them, for its next events instead of a malloc() and a free() each. */
#define SMALL_BLOCK 128
#define KEPT_BLOCKS 64

typedef struct
{
  guint    n;
  gpointer blocks[KEPT_BLOCKS];
} KeptBlocks;

/* NULL once the thread let its blocks go, while it exits */
static _Thread_local KeptBlocks *kept_blocks;

static void
kept_blocks_free (gpointer data)
{
  KeptBlocks *kept = data;

  for (guint i = 0; i < kept->n; i++)
    g_free (kept->blocks[i]);
  g_free (kept);
  kept_blocks = NULL;
}

static GPrivate kept_blocks_key = G_PRIVATE_INIT (kept_blocks_free);

static gpointer
small_block_new (void)
{
  if (G_UNLIKELY (kept_blocks == NULL))
    {
      kept_blocks = g_new0 (KeptBlocks, 1);
      g_private_set (&kept_blocks_key, kept_blocks);
    }
  if (kept_blocks->n > 0)
    return kept_blocks->blocks[--kept_blocks->n];

  return g_malloc (SMALL_BLOCK);
}

static void
event_free (SymfonicEvent *self)
{
  if (SYMFONIC_KEEPS_FREED && self->small && kept_blocks != NULL && kept_blocks->n < KEPT_BLOCKS)
    kept_blocks->blocks[kept_blocks->n++] = self;
  else
    g_free (self);
}

/* The text is stored behind the struct: a delta costs one allocation.
 * @text is valid UTF-8 of @len bytes. */
static SymfonicEvent *
event_alloc_valid (SymfonicEventKind  kind,
                   const char        *text,
                   gsize              len)
{
  gboolean small = SYMFONIC_KEEPS_FREED && sizeof (SymfonicEvent) + len + 1 <= SMALL_BLOCK;
  SymfonicEvent *self = small ? small_block_new () : g_malloc (sizeof *self + len + 1);

  /* only the struct is cleared, not the text's room behind it */
  *self = (SymfonicEvent) { .kind = kind, .text = (char *) (self + 1), .text_len = len, .small = small };
  g_atomic_ref_count_init (&self->ref_count);
  memcpy (self->text, text, len);
  self->text[len] = '\0';

  return self;
}

/* Most text is ASCII, which is valid UTF-8 and is told eight bytes at a
 * time: a terminal carries the whole answer, and is made more than once. */
static gboolean
is_ascii (const char *text,
          gsize       length)
{
  guint64 bits = 0;
  gsize i = 0;

  for (; i + sizeof bits <= length; i += sizeof bits)
    {
      guint64 word;

      memcpy (&word, text + i, sizeof word);
      bits |= word;
    }
  for (; i < length; i++)
    bits |= (guchar) text[i];

  return (bits & G_GUINT64_CONSTANT (0x8080808080808080)) == 0;
}

static SymfonicEvent *
event_alloc (SymfonicEventKind  kind,
             const char        *text)
{
  g_autofree char *valid = NULL;
  gsize length = strlen (text);

  if (!is_ascii (text, length) && !g_utf8_validate_len (text, length, NULL))
    {
      text = valid = g_utf8_make_valid (text, length);
      length = strlen (text);
    }

  return event_alloc_valid (kind, text, length);
}

/**
 * symfonic_event_new_text_delta:
 * @text: a piece of the answer
 *
 * Creates a `TextDeltaEvent`. Invalid UTF-8 in @text is replaced, so the
 * event always encodes as valid JSON.
 *
 * Returns: (transfer full): a new event
 */
SymfonicEvent *
symfonic_event_new_text_delta (const char *text)
{
  g_return_val_if_fail (text != NULL, NULL);

  return event_alloc (SYMFONIC_EVENT_KIND_TEXT_DELTA, text);
}

/**
 * symfonic_event_new_thinking_delta:
 * @text: a piece of reasoning text
 *
 * Creates a `ThinkingDeltaEvent`.
 *
 * Returns: (transfer full): a new event
 */
SymfonicEvent *
symfonic_event_new_thinking_delta (const char *text)
{
  g_return_val_if_fail (text != NULL, NULL);

  return event_alloc (SYMFONIC_EVENT_KIND_THINKING_DELTA, text);
}

/**
 * symfonic_event_new_response_complete:
 * @text: the whole answer
 * @duration_ms: how long the request took, in milliseconds
 *
 * Creates the success terminal `ResponseCompleteEvent`.
 *
 * Returns: (transfer full): a new event
 */
SymfonicEvent *
symfonic_event_new_response_complete (const char *text,
                                      gint64      duration_ms)
{
  SymfonicEvent *self;

  g_return_val_if_fail (text != NULL, NULL);

  self = event_alloc (SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE, text);
  self->duration_ms = MAX (duration_ms, 0);

  return self;
}

/**
 * symfonic_event_new_chunk:
 * @event_type: the chunk's `event_type`, such as `"text_delta"`
 * @data: (nullable): the chunk's `data`; %NULL is JSON `null`
 *
 * Creates an untyped stream chunk. The untyped stream's encoder adds the
 * `run_id`.
 *
 * Returns: (transfer full): a new event
 */
SymfonicEvent *
symfonic_event_new_chunk (const char *event_type,
                          JsonNode   *data)
{
  SymfonicEvent *self;

  g_return_val_if_fail (event_type != NULL, NULL);

  self = event_alloc (SYMFONIC_EVENT_KIND_CHUNK, event_type);
  self->data = data != NULL ? symfonic_json_node_deep_copy (data) : json_node_new (JSON_NODE_NULL);
  json_node_seal (self->data);

  return self;
}

static gboolean
check_string_member (JsonObject  *payload,
                     const char  *kind_name,
                     const char  *member,
                     const char **out,
                     GError     **error)
{
  JsonNode *node = json_object_get_member (payload, member);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) ||
      json_node_get_value_type (node) != G_TYPE_STRING)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM,
                   "%s: “%s” must be a string", kind_name, member);
      return FALSE;
    }

  *out = json_node_get_string (node);
  return TRUE;
}

/* `graph_mutations` is a count on the wire, also when the gateway
 * schedules the consolidation itself (seed 001's transcripts); an upstream
 * that lists the mutations instead has them counted, so a client sees one
 * JSON type. */
static gboolean
check_mutation_count (JsonObject  *payload,
                      const char  *name,
                      gint64      *count,
                      GError     **error)
{
  JsonNode *node = json_object_get_member (payload, "graph_mutations");

  if (JSON_NODE_HOLDS_ARRAY (node))
    {
      *count = json_array_get_length (json_node_get_array (node));
      return TRUE;
    }
  if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_INT64 &&
      json_node_get_int (node) >= 0)
    return TRUE;

  g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM,
               "%s: “%s” must be a count or a list", name, "graph_mutations");
  return FALSE;
}

/* A text event's members beyond its kind's fields (a terminal's
 * finish_reason, a thinking delta's signature) travel with it, sealed;
 * the common delta has none and costs nothing more. */
static void
keep_extra_members (SymfonicEvent  *self,
                    JsonObject     *payload,
                    const KindInfo *info)
{
  g_autoptr(GList) members = NULL;
  JsonObject *extra = NULL;
  guint n_fields = 0;

  /* every field of the kind is there: no more members, nothing to keep */
  while (info->fields[n_fields] != NULL)
    n_fields++;
  if (json_object_get_size (payload) == n_fields)
    return;

  members = json_object_get_members (payload);
  for (GList *l = members; l != NULL; l = l->next)
    {
      gboolean listed = FALSE;

      for (guint i = 0; info->fields[i] != NULL && !listed; i++)
        listed = strcmp (l->data, info->fields[i]) == 0;
      if (listed)
        continue;
      if (extra == NULL)
        extra = json_object_new ();
      json_object_set_member (extra, l->data, symfonic_json_node_deep_copy (json_object_get_member (payload, l->data)));
    }

  if (extra != NULL)
    json_object_seal (extra);
  self->payload = extra;
}

/**
 * symfonic_event_new:
 * @kind: the kind of event
 * @payload: the event's payload, with the fields of its kind
 * @error: return location for a #GError
 *
 * Creates an event from its payload, checking that every field of the
 * kind's schema is present (text fields must be strings, `ops` a list,
 * `graph_mutations` a count or a list, which is replaced by its length).
 * A sealed @payload (json_object_seal()) is shared, since it cannot change;
 * any other is copied, so the caller keeps @payload.
 *
 * Returns: (transfer full): a new event, or %NULL with @error set
 */
SymfonicEvent *
symfonic_event_new (SymfonicEventKind   kind,
                    JsonObject         *payload,
                    GError            **error)
{
  const KindInfo *info;
  g_autoptr(JsonNode) wrapper = NULL;
  gint64 n_mutations = -1;
  SymfonicEvent *self;

  g_return_val_if_fail (kind_is_valid (kind), NULL);
  g_return_val_if_fail (payload != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  info = &kinds[kind];
  for (guint i = 0; info->fields[i] != NULL; i++)
    {
      if (!json_object_has_member (payload, info->fields[i]))
        {
          g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM,
                       "%s: missing field “%s”", info->name, info->fields[i]);
          return NULL;
        }
    }

  if (kind_has_text (kind) || kind == SYMFONIC_EVENT_KIND_CHUNK)
    {
      const char *text;

      if (!check_string_member (payload, info->name,
                                kind == SYMFONIC_EVENT_KIND_CHUNK ? "event_type" : "text",
                                &text, error))
        return NULL;

      if (kind == SYMFONIC_EVENT_KIND_CHUNK)
        return symfonic_event_new_chunk (text, json_object_get_member (payload, "data"));

      if (kind == SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE)
        {
          JsonNode *duration = json_object_get_member (payload, "duration_ms");

          if (!JSON_NODE_HOLDS_VALUE (duration) ||
              (json_node_get_value_type (duration) != G_TYPE_INT64 &&
               json_node_get_value_type (duration) != G_TYPE_DOUBLE))
            {
              g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM,
                           "%s: “%s” must be a number", info->name, "duration_ms");
              return NULL;
            }
          self = symfonic_event_new_response_complete (text, json_node_get_int (duration));
        }
      else
        self = event_alloc (kind, text);

      keep_extra_members (self, payload, info);
      return self;
    }

  if (kind == SYMFONIC_EVENT_KIND_MEMORY_EXTRACTED &&
      !JSON_NODE_HOLDS_ARRAY (json_object_get_member (payload, "ops")))
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM,
                   "%s: “%s” must be a list", info->name, "ops");
      return NULL;
    }

  if (kind == SYMFONIC_EVENT_KIND_CONSOLIDATION_SCHEDULED &&
      !check_mutation_count (payload, info->name, &n_mutations, error))
    return NULL;

  /* a fragment is text that clients concatenate */
  if (kind == SYMFONIC_EVENT_KIND_TOOL_CALL_DELTA)
    {
      const char *unused;

      if (!check_string_member (payload, info->name, "tool_call_id", &unused, error) ||
          !check_string_member (payload, info->name, "arguments", &unused, error))
        return NULL;
    }

  self = g_new0 (SymfonicEvent, 1);
  g_atomic_ref_count_init (&self->ref_count);
  self->kind = kind;
  if (json_object_is_immutable (payload) && n_mutations < 0)
    {
      /* nobody can change a sealed object: it is shared, as sources that
       * parse an upstream's events seal them to avoid the copy */
      self->data = json_node_new (JSON_NODE_OBJECT);
      json_node_set_object (self->data, payload);
    }
  else
    {
      /* a deep copy, sealed: the caller's object may change after this */
      wrapper = json_node_new (JSON_NODE_OBJECT);
      json_node_set_object (wrapper, payload);
      self->data = symfonic_json_node_deep_copy (wrapper);
      if (n_mutations >= 0)
        json_object_set_int_member (json_node_get_object (self->data), "graph_mutations", n_mutations);
    }
  json_node_seal (self->data);
  self->payload = json_node_dup_object (self->data);

  return self;
}

/**
 * symfonic_event_new_from_json:
 * @name: the wire name, such as `"TextDeltaEvent"`
 * @data: the payload as parsed from the wire
 * @error: return location for a #GError
 *
 * Creates an event from its wire form, as a source reads it from an
 * upstream or a transcript.
 *
 * Returns: (transfer full): a new event, or %NULL with @error set
 */
SymfonicEvent *
symfonic_event_new_from_json (const char  *name,
                              JsonNode    *data,
                              GError     **error)
{
  SymfonicEventKind kind;

  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (data != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!symfonic_event_kind_from_name (name, &kind) || kind == SYMFONIC_EVENT_KIND_CHUNK)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM,
                   "Unknown event “%s”", name);
      return NULL;
    }

  if (!JSON_NODE_HOLDS_OBJECT (data))
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM,
                   "%s: the payload must be an object", name);
      return NULL;
    }

  return symfonic_event_new (kind, json_node_get_object (data), error);
}

/* Where a thread decodes the text of the deltas it reads: per-event
 * decoding then allocates nothing but the event. */
SYMFONIC_SCRATCH_DEFINE (scratch);

/**
 * symfonic_event_try_new_from_data:
 * @name: the wire name, such as `"TextDeltaEvent"`
 * @data: (array length=length) (element-type guint8): the event's data as
 *   the upstream sent it
 * @length: the size of @data in bytes
 *
 * Decodes the commonest events of a stream without building a JSON tree:
 * text and thinking deltas whose data is `{"text":"..."}`, the terminal
 * whose data is `{"text":"...","duration_ms":N}`, and structured events
 * whose payload has only strings, numbers, booleans and nulls (an
 * activation), whose tree is then made when first asked for. For anything
 * else this returns %NULL, and the caller reads @data with
 * symfonic_json_parse() and symfonic_event_new_from_json(), which give the
 * same event for every input this function accepts, and say what is wrong
 * with an input that is not an event.
 *
 * Returns: (transfer full) (nullable): the event, or %NULL when @data must
 *   be read the general way
 */
SymfonicEvent *
symfonic_event_try_new_from_data (const char *name,
                                  const char *data,
                                  gsize       length)
{
  SymfonicEventKind kind;
  GString *text;

  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (data != NULL || length == 0, NULL);

  if (!symfonic_event_kind_from_name (name, &kind))
    return NULL;

  text = symfonic_scratch_get (scratch);
  switch (kind)
    {
    case SYMFONIC_EVENT_KIND_TEXT_DELTA:
    case SYMFONIC_EVENT_KIND_THINKING_DELTA:
      if (!symfonic_json_read_string_object (data, length, "text", strlen ("text"), text))
        return NULL;
      /* the reader refused invalid UTF-8 and NUL characters */
      return event_alloc_valid (kind, text->str, text->len);

    case SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE:
      {
        SymfonicEvent *self;
        gint64 duration_ms;

        if (!symfonic_json_read_string_int_object (data, length, "text", "duration_ms", text, &duration_ms))
          return NULL;
        self = event_alloc_valid (kind, text->str, text->len);
        self->duration_ms = MAX (duration_ms, 0);
        return self;
      }

    /* the kinds whose fields may all be scalars; a consolidation's count
     * and the extracted ops are read the general way */
    case SYMFONIC_EVENT_KIND_ACTIVATION:
    case SYMFONIC_EVENT_KIND_TOOL_CALL_START:
    case SYMFONIC_EVENT_KIND_TOOL_CALL_DELTA:
    case SYMFONIC_EVENT_KIND_TOOL_RESULT:
    case SYMFONIC_EVENT_KIND_GRAPH_NODE_CREATED:
    case SYMFONIC_EVENT_KIND_GRAPH_EDGE_CREATED:
      {
        SymfonicEvent *self;

        if (!symfonic_json_write_flat_object (data, length, kinds[kind].fields, text))
          return NULL;
        self = event_alloc_valid (kind, text->str, text->len);
        self->raw = TRUE;
        return self;
      }

    default:
      return NULL;
    }
}

/* @terminal with another @text, and the same duration and members besides
 * (a provider's finish reason and model): what a stage that cleans the
 * terminal's text makes of it. */
SymfonicEvent *
symfonic_event_new_response_complete_like (SymfonicEvent *terminal,
                                           const char    *text)
{
  SymfonicEvent *self;

  g_return_val_if_fail (terminal != NULL && terminal->kind == SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE, NULL);

  self = symfonic_event_new_response_complete (text, terminal->duration_ms);
  if (terminal->payload != NULL)
    self->payload = json_object_ref (terminal->payload);

  return self;
}

/* A structured event whose payload @json is already compact JSON, as the
 * library's writer makes it, of one flat object with every field of
 * @kind: a provider source's tool-call events, made without a tree. */
SymfonicEvent *
symfonic_event_new_raw (SymfonicEventKind  kind,
                        const char        *json,
                        gsize              length)
{
  SymfonicEvent *self;

  g_return_val_if_fail (kind_is_valid (kind) && !kind_has_text (kind) && kind != SYMFONIC_EVENT_KIND_CHUNK, NULL);

  self = event_alloc_valid (kind, json, length);
  self->raw = TRUE;
  return self;
}

/**
 * symfonic_event_ref:
 * @self: a #SymfonicEvent
 *
 * Acquires a reference. Safe from any thread.
 *
 * Returns: (transfer full): @self
 */
SymfonicEvent *
symfonic_event_ref (SymfonicEvent *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  g_atomic_ref_count_inc (&self->ref_count);

  return self;
}

/**
 * symfonic_event_unref:
 * @self: (transfer full): a #SymfonicEvent
 *
 * Releases a reference.
 */
void
symfonic_event_unref (SymfonicEvent *self)
{
  g_return_if_fail (self != NULL);

  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;

  g_clear_pointer (&self->payload, json_object_unref);
  g_clear_pointer (&self->data, json_node_unref);
  event_free (self);
}

/**
 * symfonic_event_get_kind:
 * @self: a #SymfonicEvent
 *
 * Gets what kind of event @self is, which says which of its getters apply.
 *
 * Returns: the kind of @self
 */
SymfonicEventKind
symfonic_event_get_kind (SymfonicEvent *self)
{
  g_return_val_if_fail (self != NULL, SYMFONIC_EVENT_KIND_TEXT_DELTA);

  return self->kind;
}

/**
 * symfonic_event_get_name:
 * @self: a #SymfonicEvent
 *
 * The wire name of the event's kind; for a chunk, its `event_type`.
 *
 * Returns: the name
 */
const char *
symfonic_event_get_name (SymfonicEvent *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  if (self->kind == SYMFONIC_EVENT_KIND_CHUNK)
    return self->text;

  return kinds[self->kind].name;
}

/**
 * symfonic_event_get_text:
 * @self: a #SymfonicEvent
 * @length: (out) (optional): return location for the length of the
 *   text in bytes, or %NULL; 0 for kinds without text
 *
 * The text of a text delta, thinking delta or response terminal. Its
 * length was kept when the event was made: asking for it costs nothing,
 * where strlen() would read the whole text again.
 *
 * Returns: (nullable): the text, or %NULL for other kinds
 */
const char *
symfonic_event_get_text (SymfonicEvent *self,
                         gsize         *length)
{
  g_return_val_if_fail (self != NULL, NULL);

  if (!kind_has_text (self->kind))
    {
      if (length != NULL)
        *length = 0;
      return NULL;
    }

  if (length != NULL)
    *length = self->text_len;
  return self->text;
}

/**
 * symfonic_event_get_duration_ms:
 * @self: a #SymfonicEvent
 *
 * Gets the `duration_ms` a response terminal
 * (%SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE) reports.
 *
 * Returns: the `duration_ms` of a response terminal, 0 for other kinds
 */
gint64
symfonic_event_get_duration_ms (SymfonicEvent *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->duration_ms;
}

/* The payload node, made from the compact text on the first demand when
 * the event was read without a tree. The text is the writer's own output
 * of what the strict reader took, so reading it back cannot fail. */
static JsonNode *
ensure_data (SymfonicEvent *self)
{
  if (self->raw && g_once_init_enter (&self->data))
    {
      JsonNode *data = symfonic_json_parse (self->text, self->text_len, SYMFONIC_JSON_MAX_DEPTH, NULL);

      g_assert (data != NULL);
      json_node_seal (data);
      g_once_init_leave (&self->data, data);
    }

  return self->data;
}

/**
 * symfonic_event_get_payload:
 * @self: a #SymfonicEvent
 *
 * The sealed payload of a structured event (activation, tool call, memory
 * ops, ...). For a text-bearing event, the members it was created with
 * beyond its text and duration (such as a terminal's `finish_reason` and
 * `model`, or a thinking delta's `signature`), if any. Chunks have none:
 * use symfonic_event_get_text(), symfonic_event_get_data() or
 * symfonic_event_to_json_node().
 *
 * Returns: (transfer none) (nullable): the payload
 */
JsonObject *
symfonic_event_get_payload (SymfonicEvent *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  if (self->raw)
    return json_node_get_object (ensure_data (self));

  return self->payload;
}

/**
 * symfonic_event_get_data:
 * @self: a #SymfonicEvent
 *
 * The `data` of a chunk, or the payload node of a structured event.
 *
 * Returns: (transfer none) (nullable): the sealed data node
 */
JsonNode *
symfonic_event_get_data (SymfonicEvent *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return ensure_data (self);
}

/**
 * symfonic_event_write_json:
 * @self: a #SymfonicEvent
 * @out: the string to append to
 *
 * Appends the event's payload as one line of compact JSON: no raw newline,
 * valid UTF-8, control characters escaped. For a chunk this is its `data`.
 */
void
symfonic_event_write_json (SymfonicEvent *self,
                           GString       *out)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (out != NULL);

  if (self->raw)
    {
      symfonic_string_append_len (out, self->text, self->text_len);
      return;
    }
  if (!kind_has_text (self->kind))
    {
      symfonic_json_append_node (out, self->data);
      return;
    }

  symfonic_string_append_literal (out, "{\"text\":");
  symfonic_json_append_string (out, self->text, self->text_len);
  if (self->kind == SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE)
    {
      symfonic_string_append_literal (out, ",\"duration_ms\":");
      symfonic_json_append_int (out, self->duration_ms);
    }
  if (self->payload != NULL)
    symfonic_json_append_members (out, self->payload, TRUE);
  g_string_append_c (out, '}');
}

/**
 * symfonic_event_to_json:
 * @self: a #SymfonicEvent
 *
 * The event's payload as compact JSON, see symfonic_event_write_json().
 *
 * Returns: (transfer full): the JSON text
 */
char *
symfonic_event_to_json (SymfonicEvent *self)
{
  GString *out;

  g_return_val_if_fail (self != NULL, NULL);

  out = g_string_new (NULL);
  symfonic_event_write_json (self, out);

  return g_string_free (out, FALSE);
}

/**
 * symfonic_event_to_json_node:
 * @self: a #SymfonicEvent
 *
 * The event's payload as a new, mutable JSON tree.
 *
 * Returns: (transfer full): the payload
 */
JsonNode *
symfonic_event_to_json_node (SymfonicEvent *self)
{
  g_autofree char *text = NULL;

  g_return_val_if_fail (self != NULL, NULL);

  if (!kind_has_text (self->kind))
    return symfonic_json_node_deep_copy (ensure_data (self));

  text = symfonic_event_to_json (self);
  return json_from_string (text, NULL);
}
