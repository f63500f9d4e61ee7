/* fuzz-sse-event.c: an upstream's Server-Sent Events, read as the runtime
 * source reads them
 *
 * The input is a FuzzSplit: the stream, cut into pieces as the network
 * might. Every complete frame's data is parsed as JSON, and a frame whose
 * event names a typed event is decoded into one and written back out.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "fuzz-common.h"

/* small, so the fuzzer reaches the limit with inputs of its usual size */
#define MAX_EVENT_BYTES 4096

/* The runtime parses every frame's data (errors and usage reports too) and
 * decodes the frames that name a typed event. The fast path (deltas,
 * terminals, flat structured events) must give exactly what the general
 * way gives, written the same, or nothing. */
static void
decode (const char *name,
        const char *data)
{
  g_autoptr(SymfonicEvent) event = NULL;
  g_autoptr(SymfonicEvent) fast = symfonic_event_try_new_from_data (name, data, strlen (data));
  g_autoptr(GString) out = NULL;
  g_autoptr(JsonNode) root = symfonic_json_parse (data, strlen (data), SYMFONIC_JSON_MAX_DEPTH, NULL);
  SymfonicEventKind kind;

  if (root == NULL || !symfonic_event_kind_from_name (name, &kind) || kind == SYMFONIC_EVENT_KIND_CHUNK)
    {
      if (fast != NULL)
        g_error ("The fast path took an event the general way refuses");
      return;
    }

  event = symfonic_event_new_from_json (name, root, NULL);
  if (event == NULL)
    {
      if (fast != NULL)
        g_error ("The fast path took an event the general way refuses");
      return;
    }
  out = g_string_new (NULL);
  symfonic_event_write_json (event, out);
  if (fast != NULL)
    {
      g_autofree char *fast_json = symfonic_event_to_json (fast);
      JsonObject *fast_payload = symfonic_event_get_payload (fast);
      JsonObject *payload = symfonic_event_get_payload (event);

      if (symfonic_event_get_kind (fast) != kind ||
          g_strcmp0 (symfonic_event_get_text (fast, NULL), symfonic_event_get_text (event, NULL)) != 0 ||
          symfonic_event_get_duration_ms (fast) != symfonic_event_get_duration_ms (event) ||
          strcmp (fast_json, out->str) != 0 ||
          (fast_payload == NULL) != (payload == NULL) ||
          /* only structured events have a payload the fast path takes */
          (payload != NULL && !json_node_equal (symfonic_event_get_data (fast), symfonic_event_get_data (event))))
        g_error ("The fast path decoded an event differently");
    }
}

static void
drain (SymfonicSseParser *parser)
{
  for (;;)
    {
      g_autofree char *name = NULL;
      g_autofree char *data = NULL;
      g_autofree char *id = NULL;

      if (!symfonic_sse_parser_next (parser, &name, &data, &id))
        return;
      decode (name, data);
    }
}

int
LLVMFuzzerTestOneInput (const guint8 *data,
                        size_t        size)
{
  g_autoptr(SymfonicSseParser) parser = symfonic_sse_parser_new (MAX_EVENT_BYTES);
  FuzzSplit split;
  const guint8 *piece;
  gsize length;

  fuzz_split_init (&split, data, size);
  while (fuzz_split_next (&split, &piece, &length))
    {
      /* an oversized frame fails the stream, as it does the runtime's */
      if (!symfonic_sse_parser_feed (parser, piece, length, NULL))
        return 0;
      drain (parser);
    }
  symfonic_sse_parser_end (parser);
  drain (parser);

  return 0;
}
