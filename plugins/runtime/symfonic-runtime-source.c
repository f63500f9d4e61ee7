/* symfonic-runtime-source.c: an agent runtime behind HTTP
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-runtime-source.h"

/* POSTs each invocation as JSON to an agent runtime (or another gateway)
 * and reads the typed event stream back, so the runtime's events travel
 * through the pipeline as if they were produced here.
 *
 * Everything but the wire format is SymfonicHttpSource's: the settings,
 * the connections, timeouts, redirects, back-pressure and failures. The
 * source keeps nothing per stream: each frame is one event, decoded as it
 * comes. */
struct _SymfonicRuntimeSource
{
  SymfonicHttpSource parent_instance;
};

G_DEFINE_FINAL_TYPE (SymfonicRuntimeSource, symfonic_runtime_source, SYMFONIC_TYPE_HTTP_SOURCE)

/* The invocation as the runtime reads it, and on a resume route what it
 * is asked to do. */
static gboolean
symfonic_runtime_source_write_request (SymfonicHttpSource   *source,
                                       SymfonicHttpRequest  *request,
                                       GString              *path,
                                       GString              *body,
                                       GError              **error)
{
  SymfonicStream *stream = symfonic_http_request_get_stream (request);
  gsize length;
  g_autofree char *text = symfonic_invocation_to_data (symfonic_stream_get_invocation (stream), &length);

  if (symfonic_route_get_kind (symfonic_stream_get_route (stream)) == SYMFONIC_ROUTE_KIND_RESUME)
    {
      /* one more member before the object's closing brace */
      g_string_append_len (body, text, length - 1);
      g_string_append (body, ",\"resume\":true}");
    }
  else
    g_string_append_len (body, text, length);

  return TRUE;
}

/* Upstream text only ever reaches the log, and only a little of it. */
static char *
quote_upstream (const char *text)
{
  g_autofree char *cut = g_strndup (text, 64);

  return g_strescape (cut, NULL);
}

static JsonObject *
get_usage_member (JsonNode *data)
{
  JsonNode *usage;

  /* NULL for an event read without a tree, which has no usage member */
  if (data == NULL || !JSON_NODE_HOLDS_OBJECT (data))
    return NULL;
  usage = json_object_get_member (json_node_get_object (data), "usage");

  return usage != NULL && JSON_NODE_HOLDS_OBJECT (usage) ? json_node_get_object (usage) : NULL;
}

/* Strict and depth-bounded: an upstream's nesting must not exhaust the
 * worker's stack and end every stream it serves. */
static JsonNode *
parse_json (const char  *data,
            gsize        data_length,
            GError     **error)
{
  return symfonic_json_parse (data, data_length, SYMFONIC_JSON_MAX_DEPTH, error);
}

static JsonNode *
parse_data (const char  *event,
            const char  *data,
            gsize        data_length,
            GError     **error)
{
  g_autoptr(GError) parse_error = NULL;
  JsonNode *root = parse_json (data, data_length, &parse_error);

  if (root == NULL)
    g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM,
                 "The upstream sent a %s whose data is not JSON (%s)", event, parse_error->message);

  return root;
}

static gboolean
handle_error_frame (const char  *data,
                    gsize        data_length,
                    GError     **error)
{
  g_autoptr(JsonNode) root = parse_json (data, data_length, NULL);
  JsonNode *status = NULL;

  if (root != NULL && JSON_NODE_HOLDS_OBJECT (root))
    status = json_object_get_member (json_node_get_object (root), "status");

  /* the runtime's detail is its own business: only its status is kept */
  if (status != NULL && JSON_NODE_HOLDS_VALUE (status) && json_node_get_value_type (status) == G_TYPE_INT64)
    g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM,
                 "The upstream reported an error with status %" G_GINT64_FORMAT,
                 json_node_get_int (status));
  else
    g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM,
                         "The upstream reported an error");

  return FALSE;
}

/* A report that is not JSON says nothing and is ignored; one that gives
 * counts must give true ones. */
static gboolean
handle_usage_frame (SymfonicHttpRequest  *request,
                    const char           *data,
                    gsize                 data_length,
                    GError              **error)
{
  g_autoptr(JsonNode) root = parse_json (data, data_length, NULL);
  JsonObject *usage;

  if (root == NULL)
    {
      g_debug ("Ignoring a usage report that is not JSON");
      return TRUE;
    }
  usage = get_usage_member (root);
  if (usage == NULL && JSON_NODE_HOLDS_OBJECT (root))
    usage = json_node_get_object (root);

  return usage == NULL || symfonic_http_request_add_usage (request, usage, error);
}

/* One frame is one event of the typed stream, named as the stream names
 * it; `error` and `usage` frames are the runtime's own. */
static gboolean
symfonic_runtime_source_handle_frame (SymfonicHttpSource   *source,
                                      SymfonicHttpRequest  *request,
                                      const char           *event,
                                      const char           *data,
                                      gsize                 data_length,
                                      GError              **error)
{
  g_autoptr(SymfonicEvent) parsed = NULL;
  g_autoptr(JsonNode) root = NULL;

  /* most frames are deltas, read without a JSON tree, and their name is
   * looked up once, there */
  parsed = symfonic_event_try_new_from_data (event, data, data_length);
  if (parsed == NULL)
    {
      SymfonicEventKind kind;

      if (strcmp (event, "error") == 0)
        return handle_error_frame (data, data_length, error);
      if (strcmp (event, "usage") == 0)
        return handle_usage_frame (request, data, data_length, error);

      if (!symfonic_event_kind_from_name (event, &kind) || kind == SYMFONIC_EVENT_KIND_CHUNK)
        {
          g_autofree char *quoted = quote_upstream (event);

          g_propagate_error (error, symfonic_http_request_new_failure (request, SYMFONIC_ERROR_UPSTREAM,
                                                                       "The upstream sent an unknown event",
                                                                       "unknown event “%s”", quoted));
          return FALSE;
        }

      root = parse_data (event, data, data_length, error);
      if (root == NULL)
        return FALSE;

      /* sealed, the tree becomes the event's own instead of a copy */
      json_node_seal (root);
      parsed = symfonic_event_new_from_json (event, root, error);
      if (parsed == NULL)
        return FALSE;
    }

  if (symfonic_event_get_kind (parsed) == SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE)
    {
      JsonObject *usage = get_usage_member (root);

      /* before the push, so stages that see the terminal see the usage */
      if (usage != NULL && !symfonic_http_request_add_usage (request, usage, error))
        return FALSE;
      symfonic_http_request_complete (request);
    }

  symfonic_http_request_push (request, parsed);

  return TRUE;
}

static gboolean
symfonic_runtime_source_end (SymfonicHttpSource   *source,
                             SymfonicHttpRequest  *request,
                             GError              **error)
{
  g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM,
                       "The upstream closed the stream without a ResponseCompleteEvent");

  return FALSE;
}

static void
symfonic_runtime_source_class_init (SymfonicRuntimeSourceClass *klass)
{
  SymfonicHttpSourceClass *http_class = SYMFONIC_HTTP_SOURCE_CLASS (klass);

  http_class->write_request = symfonic_runtime_source_write_request;
  http_class->handle_frame = symfonic_runtime_source_handle_frame;
  http_class->end = symfonic_runtime_source_end;
}

/* The base class's defaults are the runtime's: no idle-timeout of its
 * own (timeout bounds every silence), the client's head goes out at once
 * and heartbeats hold it while the runtime thinks. */
static void
symfonic_runtime_source_init (SymfonicRuntimeSource *self)
{
}
