/* symfonic-conformance.c: transcripts through every route, checked
 * against the stream contract
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <glib/gi18n.h>
#include <libsoup/soup.h>

#include "symfonic-conformance.h"

/* An in-process gateway on a loopback port serves a folder of transcripts
 * through a replay source on a route of every kind, with the stages that
 * clean the answer; runs go through real HTTP, many at once, and what
 * each client got is checked here with rules written out literally,
 * never with the gateway's own code: the SSE framing and heartbeats, one
 * terminal, the terminal text against the deltas, no citation tag or
 * memory block in any text, the typed order of seed 001, each route's
 * published shape, and the usage a provider route ends with. */

#define MAX_IN_FLIGHT 32
#define REQUEST_TIMEOUT_S 60
#define CHUNKING_HEADER "X-Symfonic-Chunking"
#define TRANSCRIPT_HEADER "X-Symfonic-Transcript"
#define QUERY "Say what the transcript says."

static const struct {
  const char *name;
  const char *path;
} routes[SYMFONIC_CONFORMANCE_N_ROUTES] = {
  [SYMFONIC_CONFORMANCE_TYPED] = { "typed", "/typed" },
  [SYMFONIC_CONFORMANCE_CHUNKS] = { "chunks 11.0", "/chunks" },
  [SYMFONIC_CONFORMANCE_CHUNKS_10] = { "chunks 10.x", "/chunks10" },
  [SYMFONIC_CONFORMANCE_CHAT] = { "chat", "/chat" },
  [SYMFONIC_CONFORMANCE_OPENAI] = { "openai", "/openai/chat/completions" },
  [SYMFONIC_CONFORMANCE_ANTHROPIC] = { "anthropic", "/anthropic/messages" },
  [SYMFONIC_CONFORMANCE_PACED] = { "typed, paced", "/paced" },
};

struct _SymfonicConformance
{
  char           *folder;
  GStrv           names;
  /* name -> SymfonicRecording, for the transcripts that are recordings */
  GHashTable     *recordings;
  SymfonicServer *server;
  SoupSession    *session;
  GMainContext   *context;

  /* the runs added and not yet run */
  GPtrArray      *queued;
};

typedef struct
{
  SymfonicConformance       *conformance;
  SymfonicConformanceResult *result;
  SoupMessage               *message;
  GOutputStream             *body;
  GError                    *error;
  gboolean                   done;
} Run;

const char *
symfonic_conformance_route_name (SymfonicConformanceRoute route)
{
  return routes[route].name;
}

/**
 * symfonic_conformance_result_new:
 * @transcript: the transcript's name
 * @route: the route it goes through
 * @chunking: (nullable): how its bytes are cut; %NULL as recorded
 *
 * Returns: (transfer full): a result with nothing checked yet
 */
SymfonicConformanceResult *
symfonic_conformance_result_new (const char               *transcript,
                                 SymfonicConformanceRoute  route,
                                 const char               *chunking)
{
  SymfonicConformanceResult *result = g_new0 (SymfonicConformanceResult, 1);

  result->transcript = g_strdup (transcript);
  result->route = route;
  result->chunking = g_strdup (chunking != NULL ? chunking : "recorded");
  result->input_tokens = -1;
  result->output_tokens = -1;
  result->violations = g_ptr_array_new_with_free_func (g_free);

  return result;
}

void
symfonic_conformance_result_free (SymfonicConformanceResult *result)
{
  g_free (result->transcript);
  g_free (result->chunking);
  g_free (result->text);
  g_free (result->finish_reason);
  g_free (result->shape);
  g_ptr_array_unref (result->violations);
  g_free (result);
}

static void
violation (SymfonicConformanceResult *result,
           const char                *format,
           ...) G_GNUC_PRINTF (2, 3);

static void
violation (SymfonicConformanceResult *result,
           const char                *format,
           ...)
{
  va_list args;

  va_start (args, format);
  g_ptr_array_add (result->violations, g_strdup_vprintf (format, args));
  va_end (args);
}

/* --- the gateway ------------------------------------------------------- */

static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

static gboolean
list_transcripts (SymfonicConformance  *self,
                  GError              **error)
{
  g_autoptr(GDir) dir = g_dir_open (self->folder, 0, error);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *entry;

  if (dir == NULL)
    return FALSE;
  while ((entry = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = NULL;
      g_autofree char *contents = NULL;
      gsize length;

      if (!g_str_has_suffix (entry, ".jsonl") || entry[0] == '.')
        continue;
      path = g_build_filename (self->folder, entry, NULL);
      if (!g_file_get_contents (path, &contents, &length, error))
        return FALSE;
      if (symfonic_recording_data_is_recording (contents, length))
        {
          SymfonicRecording *recording = symfonic_recording_new_from_data (contents, length, error);

          if (recording == NULL)
            {
              g_prefix_error (error, "%s: ", path);
              return FALSE;
            }
          g_hash_table_insert (self->recordings, g_strndup (entry, strlen (entry) - strlen (".jsonl")), recording);
        }
      g_ptr_array_add (names, g_strndup (entry, strlen (entry) - strlen (".jsonl")));
    }
  if (names->len == 0)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, _("%s holds no .jsonl transcript"), self->folder);
      return FALSE;
    }
  g_ptr_array_sort (names, compare_names);
  g_ptr_array_add (names, NULL);
  self->names = (GStrv) g_ptr_array_free (g_steal_pointer (&names), FALSE);

  return TRUE;
}

static char *
pipeline_text (SymfonicConformance *self)
{
  /* a key file's escapes: a folder's name is the operator's */
  g_autoptr(GString) folder = g_string_new (NULL);

  for (const char *p = self->folder; *p != '\0'; p++)
    {
      if (*p == '\\')
        g_string_append (folder, "\\\\");
      else
        g_string_append_c (folder, *p);
    }

  return g_strdup_printf (
    "[gateway]\nlisten=127.0.0.1:0\nworkers=2\n\n"
    "[route:typed]\npath=/typed\nkind=typed\nsource=recorded\nstages=extraction;citation\n\n"
    "[route:chunks]\npath=/chunks\nkind=chunks\nsource=recorded\nstages=line11;extraction;citation;projection\n\n"
    "[route:chunks10]\npath=/chunks10\nkind=chunks\nsource=recorded\nstages=line10;extraction;citation;projection\n\n"
    "[route:chat]\npath=/chat\nkind=chat\nsource=recorded\nstages=extraction;citation\n\n"
    "[route:openai]\npath=/openai\nkind=openai\nsource=recorded\nstages=extraction;citation\n\n"
    "[route:anthropic]\npath=/anthropic\nkind=anthropic\nsource=recorded\nstages=extraction;citation\n\n"
    "[route:paced]\npath=/paced\nkind=typed\nsource=paced\nstages=extraction;citation\nheartbeat-seconds=1\n\n"
    "[source:recorded]\ntype=replay\ntranscripts=%s\ndefault-transcript=%s\ntime-scale=0\n"
    "chunking-header=" CHUNKING_HEADER "\n\n"
    "[source:paced]\ntype=replay\ntranscripts=%s\ndefault-transcript=%s\ntime-scale=1\n\n"
    "[stage:extraction]\ntype=extraction\n\n"
    "[stage:citation]\ntype=citation\n\n"
    "[stage:projection]\ntype=projection\n\n"
    "[stage:line11]\ntype=release-line\nrelease-line=11.0\n\n"
    "[stage:line10]\ntype=release-line\nrelease-line=10.4.9\n",
    folder->str, self->names[0], folder->str, self->names[0]);
}

/**
 * symfonic_conformance_new:
 * @registry: where the replay source and the stages come from
 * @folder: a folder of `.jsonl` transcripts
 * @error: return location for a #GError
 *
 * Starts a gateway for the transcripts of @folder on a loopback port.
 *
 * Returns: the gateway, or %NULL with @error set
 */
SymfonicConformance *
symfonic_conformance_new (SymfonicRegistry  *registry,
                          const char        *folder,
                          GError           **error)
{
  g_autoptr(SymfonicConformance) self = g_new0 (SymfonicConformance, 1);
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(GProxyResolver) direct = NULL;
  g_autoptr(GFile) base = NULL;
  g_autofree char *text = NULL;

  self->folder = g_canonicalize_filename (folder, NULL);
  self->recordings = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                            (GDestroyNotify) symfonic_recording_unref);
  self->queued = g_ptr_array_new ();
  self->context = g_main_context_ref_thread_default ();
  if (!list_transcripts (self, error))
    return NULL;

  base = g_file_new_for_path (self->folder);
  text = pipeline_text (self);
  pipeline = symfonic_pipeline_new_from_data (registry, text, -1, base, "conformance.pipeline", error);
  if (pipeline == NULL)
    return NULL;
  self->server = symfonic_server_new (pipeline);
  symfonic_server_set_workers (self->server, 2);
  if (!symfonic_server_start (self->server, error))
    return NULL;

  /* no proxy between this and 127.0.0.1: the default resolver would read
   * GSettings, which a test's or a container's environment may lack */
  direct = g_simple_proxy_resolver_new (NULL, NULL);
  self->session = soup_session_new_with_options ("max-conns", MAX_IN_FLIGHT * 2,
                                                 "max-conns-per-host", MAX_IN_FLIGHT * 2,
                                                 "timeout", REQUEST_TIMEOUT_S,
                                                 "proxy-resolver", direct,
                                                 NULL);

  return g_steal_pointer (&self);
}

void
symfonic_conformance_free (SymfonicConformance *self)
{
  if (self->server != NULL)
    symfonic_server_stop (self->server);
  g_clear_object (&self->server);
  g_clear_object (&self->session);
  g_strfreev (self->names);
  g_hash_table_unref (self->recordings);
  g_ptr_array_unref (self->queued);
  g_main_context_unref (self->context);
  g_free (self->folder);
  g_free (self);
}

/**
 * symfonic_conformance_list:
 * @self: a #SymfonicConformance
 *
 * Returns: (transfer none): the transcripts' names, sorted
 */
const char * const *
symfonic_conformance_list (SymfonicConformance *self)
{
  return (const char * const *) self->names;
}

/**
 * symfonic_conformance_get_recording:
 * @self: a #SymfonicConformance
 * @name: a transcript's name
 *
 * Returns: (transfer none) (nullable): the transcript's recording, or
 *   %NULL for a transcript of typed events
 */
SymfonicRecording *
symfonic_conformance_get_recording (SymfonicConformance *self,
                                    const char          *name)
{
  return g_hash_table_lookup (self->recordings, name);
}

/* --- reading what a client got ---------------------------------------------- */

typedef struct
{
  char *event;
  char *data;
  char *id;
} Frame;

static void
frame_free (gpointer data)
{
  Frame *frame = data;

  g_free (frame->event);
  g_free (frame->data);
  g_free (frame->id);
  g_free (frame);
}

/* Server-Sent Events, read by the letter: frames end at a blank line;
 * a comment is a heartbeat only as a block of its own between frames. */
static GPtrArray *
parse_sse (SymfonicConformanceResult *result,
           const char                *raw)
{
  GPtrArray *frames = g_ptr_array_new_with_free_func (frame_free);
  g_auto(GStrv) lines = g_strsplit (raw, "\n", -1);
  Frame *frame = NULL;
  g_autoptr(GString) data = NULL;
  gboolean in_comment_block = FALSE;
  guint n_lines = g_strv_length (lines);

  /* the text after the last line break is what follows the stream's end */
  for (guint i = 0; i + 1 < n_lines || (i < n_lines && *lines[i] != '\0'); i++)
    {
      char *line = lines[i];
      gsize length = strlen (line);
      const char *colon;
      const char *value;

      if (i + 1 == n_lines)
        {
          violation (result, "the stream ends in the middle of a line");
          break;
        }
      if (length > 0 && line[length - 1] == '\r')
        line[--length] = '\0';
      if (length == 0)
        {
          if (frame != NULL)
            {
              frame->data = data != NULL ? g_string_free (g_steal_pointer (&data), FALSE) : NULL;
              if (frame->event == NULL)
                frame->event = g_strdup ("message");
              g_ptr_array_add (frames, g_steal_pointer (&frame));
            }
          in_comment_block = FALSE;
          continue;
        }
      if (line[0] == ':')
        {
          if (frame != NULL)
            violation (result, "a comment (“%s”) inside frame %u", line, frames->len + 1);
          else
            {
              if (g_str_has_prefix (line, ": keepalive"))
                result->heartbeats++;
              in_comment_block = TRUE;
            }
          continue;
        }
      if (in_comment_block)
        violation (result, "a frame starts right after a comment, with no blank line between");
      in_comment_block = FALSE;
      if (frame == NULL)
        frame = g_new0 (Frame, 1);
      colon = strchr (line, ':');
      value = colon != NULL ? colon + 1 : "";
      if (*value == ' ')
        value++;
      if (colon == NULL)
        colon = line + length;
      if ((gsize) (colon - line) == strlen ("data") && strncmp (line, "data", 4) == 0)
        {
          if (data == NULL)
            data = g_string_new (value);
          else
            g_string_append_printf (data, "\n%s", value);
        }
      else if ((gsize) (colon - line) == strlen ("event") && strncmp (line, "event", 5) == 0)
        {
          g_free (frame->event);
          frame->event = g_strdup (value);
        }
      else if ((gsize) (colon - line) == strlen ("id") && strncmp (line, "id", 2) == 0)
        {
          g_free (frame->id);
          frame->id = g_strdup (value);
        }
      else
        violation (result, "an unknown field in frame %u: “%.*s”", frames->len + 1, (int) (colon - line), line);
    }
  if (frame != NULL)
    {
      violation (result, "the stream ends inside frame %u, without its blank line", frames->len + 1);
      frame_free (frame);
    }

  return frames;
}

static JsonNode *
parse_json (SymfonicConformanceResult *result,
            const char                *what,
            const char                *text)
{
  g_autoptr(GError) error = NULL;
  JsonNode *node = symfonic_json_parse (text != NULL ? text : "", text != NULL ? strlen (text) : 0,
                                        SYMFONIC_JSON_MAX_DEPTH, &error);

  if (node == NULL)
    violation (result, "%s is not strict JSON: %s", what, error->message);

  return node;
}

static GRegex *
leak_regex (void)
{
  static GRegex *regex;

  if (g_once_init_enter (&regex))
    {
      /* what the citation stage removes, written out here, and the
       * extraction stage's block tags */
      GRegex *made = g_regex_new ("\\[(semantic|episodic|procedural)(:[A-Za-z0-9_.-]{1,64})?\\]|</?memory_ops>",
                                  G_REGEX_CASELESS | G_REGEX_OPTIMIZE, 0, NULL);

      g_once_init_leave (&regex, made);
    }

  return regex;
}

static void
check_clean (SymfonicConformanceResult *result,
             const char                *what,
             const char                *text)
{
  g_autoptr(GMatchInfo) match = NULL;

  if (text == NULL)
    return;
  if (g_regex_match (leak_regex (), text, 0, &match))
    {
      g_autofree char *found = g_match_info_fetch (match, 0);

      violation (result, "%s holds “%s”, which the citation and extraction stages remove", what, found);
    }
}

static const char *
string_member (JsonNode   *node,
               const char *name)
{
  JsonNode *member;

  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return NULL;
  member = json_object_get_member (json_node_get_object (node), name);
  if (member == NULL || !JSON_NODE_HOLDS_VALUE (member) || json_node_get_value_type (member) != G_TYPE_STRING)
    return NULL;

  return json_node_get_string (member);
}

static JsonNode *
member (JsonNode   *node,
        const char *name)
{
  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return NULL;

  return json_object_get_member (json_node_get_object (node), name);
}

static gint64
int_member (JsonNode   *node,
            const char *name)
{
  JsonNode *found = member (node, name);

  if (found == NULL || !JSON_NODE_HOLDS_VALUE (found) || json_node_get_value_type (found) != G_TYPE_INT64)
    return -1;

  return json_node_get_int (found);
}

/* Every frame of a typed or chunk stream has `id: N`, 1, 2, 3 … */
static void
check_ids (SymfonicConformanceResult *result,
           GPtrArray                 *frames)
{
  for (guint i = 0; i < frames->len; i++)
    {
      Frame *frame = g_ptr_array_index (frames, i);
      g_autofree char *expected = g_strdup_printf ("%u", i + 1);

      if (g_strcmp0 (frame->id, expected) != 0)
        {
          violation (result, "frame %u has id “%s”, not %s", i + 1, frame->id != NULL ? frame->id : "(none)",
                     expected);
          return;
        }
    }
}

static void
check_error_payload (SymfonicConformanceResult *result,
                     JsonNode                  *node)
{
  if (string_member (node, "detail") == NULL || int_member (node, "status") < 400)
    violation (result, "the error frame has no detail or no status of 400 or more");
}

static gboolean
is_typed_event (const char *name)
{
  static const char * const names[] = {
    "ActivationEvent", "ThinkingDeltaEvent", "TextDeltaEvent", "ToolCallStartEvent", "ToolCallDeltaEvent",
    "ToolResultEvent", "MemoryExtractedEvent", "ConsolidationScheduledEvent", "GraphNodeCreatedEvent",
    "GraphEdgeCreatedEvent", "ResponseCompleteEvent", "error", NULL,
  };

  return g_strv_contains (names, name);
}

static void
check_typed (SymfonicConformanceResult *result,
             GPtrArray                 *frames)
{
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GString) shape = g_string_new (NULL);
  int first_text = -1, last_text = -1, last_activation = -1, memory = -1, consolidation = -1;
  int first_graph = -1, terminals = 0;
  guint n_memory = 0, n_consolidation = 0;

  check_ids (result, frames);
  for (guint i = 0; i < frames->len; i++)
    {
      Frame *frame = g_ptr_array_index (frames, i);
      g_autofree char *what = g_strdup_printf ("frame %u (%s)", i + 1, frame->event);
      g_autoptr(JsonNode) data = parse_json (result, what, frame->data);

      g_string_append_printf (shape, "%s ", frame->event);
      if (!is_typed_event (frame->event))
        violation (result, "%s is no event of the typed stream", what);
      if (data == NULL || !JSON_NODE_HOLDS_OBJECT (data))
        continue;

      if (g_str_equal (frame->event, "TextDeltaEvent"))
        {
          const char *delta = string_member (data, "text");

          if (delta == NULL)
            violation (result, "%s has no text", what);
          check_clean (result, what, delta);
          g_string_append (text, delta != NULL ? delta : "");
          if (first_text < 0)
            first_text = i;
          last_text = i;
        }
      else if (g_str_equal (frame->event, "ThinkingDeltaEvent"))
        check_clean (result, what, string_member (data, "text"));
      else if (g_str_equal (frame->event, "ActivationEvent"))
        last_activation = i;
      else if (g_str_equal (frame->event, "MemoryExtractedEvent"))
        {
          memory = i;
          n_memory++;
        }
      else if (g_str_equal (frame->event, "ConsolidationScheduledEvent"))
        {
          consolidation = i;
          n_consolidation++;
        }
      else if (g_str_has_prefix (frame->event, "Graph") && first_graph < 0)
        first_graph = i;
      else if (g_str_equal (frame->event, "ResponseCompleteEvent") || g_str_equal (frame->event, "error"))
        {
          terminals++;
          if (i + 1 != frames->len)
            violation (result, "%s is a terminal, but frames follow it", what);
          if (g_str_equal (frame->event, "error"))
            check_error_payload (result, data);
          else
            {
              const char *final = string_member (data, "text");

              result->success = TRUE;
              result->finish_reason = g_strdup (string_member (data, "finish_reason"));
              check_clean (result, what, final);
              if (g_strcmp0 (final, text->str) != 0)
                violation (result, "the terminal's text is not the concatenation of the text deltas");
            }
        }
    }

  if (terminals != 1)
    violation (result, "%d terminal frames, not exactly one", terminals);
  if (last_activation >= 0 && first_text >= 0 && last_activation > first_text)
    violation (result, "an ActivationEvent after the first TextDeltaEvent");
  if (n_memory > 1)
    violation (result, "%u MemoryExtractedEvents, at most one", n_memory);
  if (memory >= 0 && memory < last_text)
    violation (result, "the MemoryExtractedEvent comes before the last TextDeltaEvent");
  if (memory >= 0 && consolidation >= 0 && memory > consolidation)
    violation (result, "the MemoryExtractedEvent comes after the ConsolidationScheduledEvent");
  if (result->success && n_consolidation != 1)
    violation (result, "%u ConsolidationScheduledEvents on success, not exactly one", n_consolidation);
  if (first_graph >= 0 && (consolidation < 0 || first_graph < consolidation))
    violation (result, "a graph event before the ConsolidationScheduledEvent");

  result->text = g_string_free (g_steal_pointer (&text), FALSE);
  result->shape = g_string_free (g_steal_pointer (&shape), FALSE);
}

static void
check_chunks (SymfonicConformanceResult *result,
              GPtrArray                 *frames,
              gboolean                   old_line)
{
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GString) shape = g_string_new (NULL);
  g_autofree char *update_text = NULL;
  int terminals = 0;

  check_ids (result, frames);
  for (guint i = 0; i < frames->len; i++)
    {
      Frame *frame = g_ptr_array_index (frames, i);
      g_autofree char *what = g_strdup_printf ("chunk %u", i + 1);
      g_autoptr(JsonNode) node = parse_json (result, what, frame->data);
      const char *kind;
      JsonNode *data;

      if (node == NULL)
        continue;
      if (g_str_equal (frame->event, "error"))
        {
          g_string_append (shape, "error ");
          terminals++;
          check_error_payload (result, node);
          if (i + 1 != frames->len)
            violation (result, "%s is an error frame, but frames follow it", what);
          continue;
        }
      kind = string_member (node, "event_type");
      data = member (node, "data");
      if (!g_str_equal (frame->event, "message") || kind == NULL || data == NULL ||
          string_member (node, "run_id") == NULL)
        {
          violation (result, "%s is not a StreamChunk", what);
          continue;
        }
      g_string_append_printf (shape, "%s ", kind);
      if (old_line && i == 0 && !(g_str_equal (kind, "thinking") && JSON_NODE_HOLDS_NULL (data)))
        violation (result, "the 10.x stream does not open with the thinking chunk of null data");

      if (g_str_equal (kind, "done"))
        {
          const char *final = string_member (data, "final_response");

          terminals++;
          result->success = TRUE;
          if (i + 1 != frames->len)
            violation (result, "%s is done, but chunks follow it", what);
          check_clean (result, what, final);
          if (!old_line && g_strcmp0 (final, text->str) != 0 && text->len > 0)
            violation (result, "final_response is not the concatenation of the text_delta chunks");
          if (old_line && update_text != NULL && g_strcmp0 (final, update_text) != 0)
            violation (result, "final_response is not the agent's update");
          g_string_assign (text, final != NULL ? final : "");
        }
      else if (old_line)
        {
          if (g_str_equal (kind, "thinking") && i > 0)
            violation (result, "%s: a thinking chunk after the first on the 10.x line", what);
          else if (g_str_equal (kind, "update"))
            {
              JsonNode *agent = member (data, "agent");
              JsonNode *messages = member (agent, "messages");

              if (messages != NULL && JSON_NODE_HOLDS_ARRAY (messages) &&
                  json_array_get_length (json_node_get_array (messages)) > 0)
                {
                  JsonNode *message = json_array_get_element (json_node_get_array (messages), 0);

                  check_clean (result, what, string_member (message, "content"));
                  g_free (update_text);
                  update_text = g_strdup (string_member (message, "content"));
                }
            }
          else if (!g_str_equal (kind, "thinking") && !g_str_equal (kind, "spreading_activation") &&
                   !g_str_equal (kind, "consolidating"))
            violation (result, "%s: “%s” is no chunk of the 10.x line", what, kind);
        }
      else
        {
          if (g_str_equal (kind, "text_delta") || g_str_equal (kind, "thinking"))
            {
              if (!JSON_NODE_HOLDS_VALUE (data) || json_node_get_value_type (data) != G_TYPE_STRING)
                violation (result, "%s: a %s chunk whose data is not a string", what, kind);
              else
                {
                  check_clean (result, what, json_node_get_string (data));
                  if (g_str_equal (kind, "text_delta"))
                    g_string_append (text, json_node_get_string (data));
                }
            }
          else if (!g_str_equal (kind, "tool_call") && !g_str_equal (kind, "tool_result") &&
                   !g_str_equal (kind, "consolidating"))
            violation (result, "%s: “%s” is no chunk of the 11.0 line", what, kind);
        }
    }

  if (terminals != 1)
    violation (result, "%d terminal frames, not exactly one", terminals);
  result->text = g_string_free (g_steal_pointer (&text), FALSE);
  result->shape = g_string_free (g_steal_pointer (&shape), FALSE);
}

static void
check_chat (SymfonicConformanceResult *result,
            guint                      status,
            const char                *body)
{
  g_autoptr(JsonNode) node = parse_json (result, "the answer", body);
  JsonNode *ops = member (node, "memory_ops");

  if (node == NULL)
    return;
  result->shape = g_strdup_printf ("%u", status);
  if (status != 200)
    {
      check_error_payload (result, node);
      return;
    }
  result->success = TRUE;
  if (string_member (node, "response") == NULL || string_member (node, "run_id") == NULL ||
      ops == NULL || !JSON_NODE_HOLDS_ARRAY (ops))
    violation (result, "the answer is not an AgentResponse");
  check_clean (result, "the answer's response", string_member (node, "response"));
  result->text = g_strdup (string_member (node, "response"));
}

static void
check_openai (SymfonicConformanceResult *result,
              GPtrArray                 *frames)
{
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GString) shape = g_string_new (NULL);
  guint finishes = 0, errors = 0, done = 0;
  int finish_at = -1;

  for (guint i = 0; i < frames->len; i++)
    {
      Frame *frame = g_ptr_array_index (frames, i);
      g_autofree char *what = g_strdup_printf ("chunk %u", i + 1);
      g_autoptr(JsonNode) node = NULL;
      JsonNode *choices;
      JsonNode *usage;

      if (g_strcmp0 (frame->data, "[DONE]") == 0)
        {
          done++;
          if (i + 1 != frames->len)
            violation (result, "data: [DONE] is not the last frame");
          continue;
        }
      node = parse_json (result, what, frame->data);
      if (node == NULL)
        continue;
      if (member (node, "error") != NULL)
        {
          errors++;
          g_string_append (shape, "error ");
          continue;
        }
      if (g_strcmp0 (string_member (node, "object"), "chat.completion.chunk") != 0)
        violation (result, "%s is not a chat.completion.chunk", what);
      choices = member (node, "choices");
      usage = member (node, "usage");
      if (choices != NULL && JSON_NODE_HOLDS_ARRAY (choices) && json_array_get_length (json_node_get_array (choices)) > 0)
        {
          JsonNode *choice = json_array_get_element (json_node_get_array (choices), 0);
          JsonNode *delta = member (choice, "delta");
          const char *content = string_member (delta, "content");

          check_clean (result, what, content);
          check_clean (result, what, string_member (delta, "reasoning_content"));
          if (content != NULL)
            g_string_append (text, content);
          if (string_member (choice, "finish_reason") != NULL)
            {
              finishes++;
              finish_at = i;
              g_string_append_printf (shape, "finish:%s ", string_member (choice, "finish_reason"));
            }
          else
            g_string_append (shape, content != NULL ? "content " : "delta ");
        }
      else if (usage != NULL && JSON_NODE_HOLDS_OBJECT (usage))
        {
          g_string_append (shape, "usage ");
          if (finish_at < 0)
            violation (result, "the usage chunk comes before the chunk with finish_reason");
          result->input_tokens = int_member (usage, "prompt_tokens");
          result->output_tokens = int_member (usage, "completion_tokens");
        }
    }

  if (done != 1)
    violation (result, "%u data: [DONE], not exactly one", done);
  if (finishes + errors != 1)
    violation (result, "%u chunks with a finish_reason and %u with an error: not exactly one terminal",
               finishes, errors);
  result->success = finishes == 1 && errors == 0;
  result->text = g_string_free (g_steal_pointer (&text), FALSE);
  result->shape = g_string_free (g_steal_pointer (&shape), FALSE);
}

static void
check_anthropic (SymfonicConformanceResult *result,
                 GPtrArray                 *frames)
{
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GString) shape = g_string_new (NULL);
  guint stops = 0, errors = 0;

  for (guint i = 0; i < frames->len; i++)
    {
      Frame *frame = g_ptr_array_index (frames, i);
      g_autofree char *what = g_strdup_printf ("event %u (%s)", i + 1, frame->event);
      g_autoptr(JsonNode) node = parse_json (result, what, frame->data);

      if (node == NULL)
        continue;
      if (g_strcmp0 (string_member (node, "type"), frame->event) != 0)
        violation (result, "%s names another type in its data", what);
      if (!g_str_equal (frame->event, "ping"))
        g_string_append_printf (shape, "%s ", frame->event);
      if (i == 0 && !g_str_equal (frame->event, "message_start") && !g_str_equal (frame->event, "error"))
        violation (result, "the stream does not open with message_start");
      if (g_str_equal (frame->event, "content_block_delta"))
        {
          JsonNode *delta = member (node, "delta");
          const char *type = string_member (delta, "type");

          if (g_strcmp0 (type, "text_delta") == 0)
            {
              check_clean (result, what, string_member (delta, "text"));
              g_string_append (text, string_member (delta, "text") != NULL ? string_member (delta, "text") : "");
            }
          else if (g_strcmp0 (type, "thinking_delta") == 0)
            check_clean (result, what, string_member (delta, "thinking"));
        }
      else if (g_str_equal (frame->event, "message_start"))
        result->input_tokens = int_member (member (member (node, "message"), "usage"), "input_tokens");
      else if (g_str_equal (frame->event, "message_delta"))
        {
          JsonNode *usage = member (node, "usage");

          result->output_tokens = int_member (usage, "output_tokens");
          if (int_member (usage, "input_tokens") >= 0)
            result->input_tokens = int_member (usage, "input_tokens");
        }
      else if (g_str_equal (frame->event, "message_stop") || g_str_equal (frame->event, "error"))
        {
          if (g_str_equal (frame->event, "error"))
            errors++;
          else
            stops++;
          if (i + 1 != frames->len)
            violation (result, "%s is a terminal, but events follow it", what);
        }
    }

  if (stops + errors != 1)
    violation (result, "%u message_stop and %u error events: not exactly one terminal", stops, errors);
  result->success = stops == 1 && errors == 0;
  result->text = g_string_free (g_steal_pointer (&text), FALSE);
  result->shape = g_string_free (g_steal_pointer (&shape), FALSE);
}

/**
 * symfonic_conformance_check_response:
 * @result: the run's result, its route set
 * @status: the response's status
 * @content_type: (nullable): its media type, without parameters
 * @body: its body
 *
 * Checks what a client of @result's route got, adding what it broke to
 * @result's violations and filling in its text, shape and usage.
 */
void
symfonic_conformance_check_response (SymfonicConformanceResult *result,
                                     guint                      status,
                                     const char                *content_type,
                                     const char                *body)
{
  g_autoptr(GPtrArray) frames = NULL;

  if (result->route == SYMFONIC_CONFORMANCE_CHAT)
    {
      check_chat (result, status, body);
      return;
    }

  /* a stream that failed before its head is a JSON status */
  if (status != 200)
    {
      g_autoptr(JsonNode) node = parse_json (result, "the refusal", body);

      result->shape = g_strdup_printf ("%u", status);
      if (status < 400)
        violation (result, "the stream was answered with status %u", status);
      if (g_strcmp0 (content_type, "application/json") != 0)
        violation (result, "a refusal that is not JSON");
      return;
    }
  if (g_strcmp0 (content_type, "text/event-stream") != 0)
    {
      violation (result, "a stream of type “%s”, not text/event-stream", content_type != NULL ? content_type : "");
      return;
    }

  frames = parse_sse (result, body);
  switch (result->route)
    {
    case SYMFONIC_CONFORMANCE_TYPED:
    case SYMFONIC_CONFORMANCE_PACED:
      check_typed (result, frames);
      break;
    case SYMFONIC_CONFORMANCE_CHUNKS:
      check_chunks (result, frames, FALSE);
      break;
    case SYMFONIC_CONFORMANCE_CHUNKS_10:
      check_chunks (result, frames, TRUE);
      break;
    case SYMFONIC_CONFORMANCE_OPENAI:
      check_openai (result, frames);
      break;
    case SYMFONIC_CONFORMANCE_ANTHROPIC:
      check_anthropic (result, frames);
      break;
    case SYMFONIC_CONFORMANCE_CHAT:
    case SYMFONIC_CONFORMANCE_N_ROUTES:
    default:
      g_assert_not_reached ();
    }
}

static void
check_run (Run        *run,
           const char *body)
{
  if (run->error != NULL)
    {
      violation (run->result, "the request failed: %s", run->error->message);
      return;
    }

  symfonic_conformance_check_response (run->result, soup_message_get_status (run->message),
                                       soup_message_headers_get_content_type (soup_message_get_response_headers (run->message), NULL),
                                       body);
}

/* --- running ----------------------------------------------------------------- */

/**
 * symfonic_conformance_add:
 * @self: a #SymfonicConformance
 * @name: a transcript's name
 * @route: the route it goes through
 * @chunking: (nullable): how a recording's bytes are cut: `whole`,
 *   `bytes=N`, `split=K`, `seed=N[,max=M]`; %NULL as recorded
 *
 * Queues one run for symfonic_conformance_run().
 */
void
symfonic_conformance_add (SymfonicConformance      *self,
                          const char               *name,
                          SymfonicConformanceRoute  route,
                          const char               *chunking)
{
  g_ptr_array_add (self->queued, symfonic_conformance_result_new (name, route, chunking));
}

static void
run_free (Run *run)
{
  g_clear_object (&run->message);
  g_clear_object (&run->body);
  g_clear_error (&run->error);
  g_free (run);
}

static void
spliced (GObject      *object,
         GAsyncResult *async_result,
         gpointer      data)
{
  Run *run = data;
  g_autoptr(GBytes) bytes = NULL;
  g_autofree char *body = NULL;

  g_output_stream_splice_finish (G_OUTPUT_STREAM (object), async_result, &run->error);
  bytes = g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (run->body));
  body = g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
  check_run (run, body);
  run->done = TRUE;
}

static void
sent (GObject      *object,
      GAsyncResult *async_result,
      gpointer      data)
{
  Run *run = data;
  g_autoptr(GInputStream) input = soup_session_send_finish (SOUP_SESSION (object), async_result, &run->error);

  if (input == NULL)
    {
      check_run (run, "");
      run->done = TRUE;
      return;
    }
  run->body = g_memory_output_stream_new_resizable ();
  g_output_stream_splice_async (run->body, input,
                                G_OUTPUT_STREAM_SPLICE_CLOSE_SOURCE | G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET,
                                G_PRIORITY_DEFAULT, NULL, spliced, run);
}

static const char *
request_body (SymfonicConformanceRoute route)
{
  switch (route)
    {
    case SYMFONIC_CONFORMANCE_OPENAI:
      return "{\"model\":\"conformance\",\"stream\":true,\"stream_options\":{\"include_usage\":true},"
             "\"messages\":[{\"role\":\"user\",\"content\":\"" QUERY "\"}]}";
    case SYMFONIC_CONFORMANCE_ANTHROPIC:
      return "{\"model\":\"conformance\",\"max_tokens\":1024,\"stream\":true,"
             "\"messages\":[{\"role\":\"user\",\"content\":\"" QUERY "\"}]}";
    case SYMFONIC_CONFORMANCE_TYPED:
    case SYMFONIC_CONFORMANCE_CHUNKS:
    case SYMFONIC_CONFORMANCE_CHUNKS_10:
    case SYMFONIC_CONFORMANCE_CHAT:
    case SYMFONIC_CONFORMANCE_PACED:
    case SYMFONIC_CONFORMANCE_N_ROUTES:
    default:
      return "{\"query\":\"" QUERY "\"}";
    }
}

static Run *
run_start (SymfonicConformance       *self,
           SymfonicConformanceResult *result)
{
  Run *run = g_new0 (Run, 1);
  g_autofree char *url = g_strdup_printf ("http://127.0.0.1:%u%s", symfonic_server_get_port (self->server),
                                          routes[result->route].path);
  const char *body = request_body (result->route);
  g_autoptr(GBytes) bytes = g_bytes_new_static (body, strlen (body));
  SoupMessageHeaders *headers;

  run->conformance = self;
  run->result = result;
  run->message = soup_message_new (SOUP_METHOD_POST, url);
  soup_message_set_request_body_from_bytes (run->message, "application/json", bytes);
  headers = soup_message_get_request_headers (run->message);
  soup_message_headers_replace (headers, TRANSCRIPT_HEADER, result->transcript);
  if (!g_str_equal (result->chunking, "recorded"))
    soup_message_headers_replace (headers, CHUNKING_HEADER, result->chunking);
  soup_session_send_async (self->session, run->message, G_PRIORITY_DEFAULT, NULL, sent, run);

  return run;
}

/**
 * symfonic_conformance_run:
 * @self: a #SymfonicConformance
 *
 * Runs every queued run, at most 32 at once, iterating the calling
 * thread's main context, and checks what each client got.
 *
 * Returns: (transfer full) (element-type SymfonicConformanceResult): the
 *   results, in the order the runs were added
 */
GPtrArray *
symfonic_conformance_run (SymfonicConformance *self)
{
  GPtrArray *results = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_conformance_result_free);
  g_autoptr(GPtrArray) running = g_ptr_array_new ();
  guint next = 0;

  while (next < self->queued->len || running->len > 0)
    {
      while (next < self->queued->len && running->len < MAX_IN_FLIGHT)
        g_ptr_array_add (running, run_start (self, g_ptr_array_index (self->queued, next++)));

      g_main_context_iteration (self->context, TRUE);

      for (guint i = 0; i < running->len;)
        {
          Run *run = g_ptr_array_index (running, i);

          if (run->done)
            {
              g_ptr_array_remove_index (running, i);
              run_free (run);
            }
          else
            i++;
        }
    }

  for (guint i = 0; i < self->queued->len; i++)
    g_ptr_array_add (results, g_ptr_array_index (self->queued, i));
  g_ptr_array_set_size (self->queued, 0);

  return results;
}

/* --- what the transcript says should come out ----------------------------------- */

/* The usage the recorded upstream reported, read from its bytes here, by
 * the letter of each wire: OpenAI's usage chunk, Anthropic's
 * message_start and message_delta, a runtime's usage frame or terminal. */
gboolean
symfonic_conformance_recorded_usage (SymfonicRecording *recording,
                                     gint64            *input_tokens,
                                     gint64            *output_tokens)
{
  gsize length;
  const char *data = g_bytes_get_data (symfonic_recording_get_body (recording), &length);
  g_autofree char *body = g_strndup (data, length);
  g_autoptr(SymfonicConformanceResult) scratch = symfonic_conformance_result_new ("", SYMFONIC_CONFORMANCE_TYPED, NULL);
  g_autoptr(GPtrArray) frames = NULL;
  const char *wire = symfonic_recording_get_wire_format (recording);

  *input_tokens = -1;
  *output_tokens = -1;
  frames = parse_sse (scratch, body);
  for (guint i = 0; i < frames->len; i++)
    {
      Frame *frame = g_ptr_array_index (frames, i);
      g_autoptr(JsonNode) node = symfonic_json_parse (frame->data != NULL ? frame->data : "",
                                                      frame->data != NULL ? strlen (frame->data) : 0,
                                                      SYMFONIC_JSON_MAX_DEPTH, NULL);
      JsonNode *usage = NULL;

      if (node == NULL)
        continue;
      if (g_strcmp0 (wire, "openai-chat-completions") == 0)
        {
          usage = member (node, "usage");
          if (usage != NULL && JSON_NODE_HOLDS_OBJECT (usage))
            {
              *input_tokens = int_member (usage, "prompt_tokens");
              *output_tokens = int_member (usage, "completion_tokens");
            }
        }
      else if (g_strcmp0 (wire, "anthropic-messages") == 0)
        {
          if (g_str_equal (frame->event, "message_start"))
            usage = member (member (node, "message"), "usage");
          else if (g_str_equal (frame->event, "message_delta"))
            usage = member (node, "usage");
          if (int_member (usage, "input_tokens") >= 0)
            *input_tokens = int_member (usage, "input_tokens");
          if (int_member (usage, "output_tokens") >= 0)
            *output_tokens = int_member (usage, "output_tokens");
        }
      else
        {
          if (g_str_equal (frame->event, "usage"))
            usage = member (node, "usage") != NULL ? member (node, "usage") : node;
          else if (g_str_equal (frame->event, "ResponseCompleteEvent"))
            usage = member (node, "usage");
          if (int_member (usage, "input_tokens") >= 0)
            *input_tokens = int_member (usage, "input_tokens");
          if (int_member (usage, "output_tokens") >= 0)
            *output_tokens = int_member (usage, "output_tokens");
        }
    }

  return *output_tokens >= 0;
}

/* The longest silence of the recorded upstream, in microseconds. */
gint64
symfonic_conformance_longest_pause (SymfonicRecording *recording)
{
  gint64 previous = symfonic_recording_get_head_us (recording);
  gint64 longest = 0;

  for (guint i = 0; i < symfonic_recording_get_n_chunks (recording); i++)
    {
      gint64 offset;
      g_autoptr(GBytes) chunk = symfonic_recording_get_chunk (recording, i, &offset);

      longest = MAX (longest, offset - previous);
      previous = offset;
    }

  return longest;
}

/**
 * symfonic_conformance_expect:
 * @self: a #SymfonicConformance
 * @result: a run's result
 * @reference: (nullable): the same transcript on the same route, as
 *   recorded, that @result must equal
 *
 * Adds to @result's violations what the transcript itself says of it: a
 * recording that ended complete succeeds on every route and any other
 * fails, with the recorded usage at the end of a provider route; and a
 * run cut another way gives what the reference gave.
 */
void
symfonic_conformance_expect (SymfonicConformance       *self,
                             SymfonicConformanceResult *result,
                             SymfonicConformanceResult *reference)
{
  SymfonicRecording *recording = symfonic_conformance_get_recording (self, result->transcript);
  gint64 input_tokens;
  gint64 output_tokens;

  if (recording != NULL)
    {
      gboolean complete = symfonic_recording_get_end (recording) == SYMFONIC_RECORDING_END_COMPLETE;

      if (result->success != complete)
        violation (result, "the recording ended %s, the client got %s",
                   complete ? "complete" : "without its end", result->success ? "a success" : "a failure");
      if (complete && result->success && symfonic_conformance_recorded_usage (recording, &input_tokens, &output_tokens) &&
          (result->route == SYMFONIC_CONFORMANCE_OPENAI || result->route == SYMFONIC_CONFORMANCE_ANTHROPIC))
        {
          if (result->output_tokens != output_tokens)
            violation (result, "the route ends with %" G_GINT64_FORMAT " output tokens; the upstream reported %"
                       G_GINT64_FORMAT, result->output_tokens, output_tokens);
          if (input_tokens >= 0 && result->input_tokens != input_tokens)
            violation (result, "the route ends with %" G_GINT64_FORMAT " input tokens; the upstream reported %"
                       G_GINT64_FORMAT, result->input_tokens, input_tokens);
        }
    }

  if (reference == NULL)
    return;
  if (result->success != reference->success)
    violation (result, "cut %s, the run %s; as recorded it %s", result->chunking,
               result->success ? "succeeded" : "failed", reference->success ? "succeeded" : "failed");
  if (g_strcmp0 (result->text, reference->text) != 0)
    violation (result, "cut %s, the client's text differs from the recorded cut's", result->chunking);
  if (g_strcmp0 (result->shape, reference->shape) != 0)
    violation (result, "cut %s, the frames differ from the recorded cut's (%s instead of %s)", result->chunking,
               result->shape != NULL ? result->shape : "", reference->shape != NULL ? reference->shape : "");
}
