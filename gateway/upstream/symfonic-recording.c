/* symfonic-recording.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-enums.h"
#include "symfonic-error.h"
#include "symfonic-json.h"
#include "symfonic-json-private.h"
#include "symfonic-recording-private.h"

/**
 * SymfonicRecording:
 *
 * What an HTTP upstream really sent for one run, byte for byte and read
 * by read, as a [class@Symfonic.HttpSource] with `record=` set captured
 * it: the request as sent (its secrets removed), the response's status
 * and headers, each read of the body with the microseconds after the
 * request at which it arrived, and how the run ended.
 *
 * ## The file
 *
 * JSON lines, UTF-8. The first line is the header:
 *
 * ```
 * {"symfonic_recording":1,"source":"openai","wire":"openai-chat-completions","model":"gpt-4o-mini",
 *  "run_id":"…","recorded_at":"2025-06-01T12:00:00Z",
 *  "request":{"method":"POST","target":"/v1/chat/completions","headers":[["Host","…"],["Authorization","[redacted]"],…],"body":"{…}"},
 *  "response":{"status":200,"head_us":5120,"headers":[["Content-Type","text/event-stream"],…]},
 *  "end":"complete","transport":"stopped","error_code":null,"truncated":false,"redactions":1,
 *  "chunks":14,"bytes":2911,"duration_us":40233}
 * ```
 *
 * (one line in the file). `source` is the source type that recorded it,
 * which also plays it; `wire` names its format (`symfonic-typed-sse`,
 * `openai-chat-completions`, `anthropic-messages`); `end` is one of
 * `complete`, `cut`, `error`, `cancelled` (#SymfonicRecordingEnd);
 * `transport` how the bytes stopped (#SymfonicRecordingTransport);
 * `error_code` the failure's code when the run failed; `truncated` says
 * that bytes are missing (the run passed `record-max-bytes`, or its client
 * went away). Every other line is one read of the body, in order:
 *
 * ```
 * {"offset_us":5400,"text":"data: {\"choices\":[…]}\n\n"}
 * {"offset_us":5710,"base64":"4oCm"}
 * ```
 *
 * A read whose bytes are UTF-8 without a NUL is `text`, a JSON string, so
 * that a recording reads and diffs as the stream it is; any other read (a
 * multi-byte character cut between two reads, binary) is `base64`. Either
 * way the bytes come back exactly. `chunks` and `bytes` in the header must
 * match the lines, so a file cut short is refused rather than played.
 */

G_DEFINE_BOXED_TYPE (SymfonicRecording, symfonic_recording, symfonic_recording_ref, symfonic_recording_unref)

/* a recording is a bug report, not an archive */
#define MAX_FILE_BYTES (64 * 1024 * 1024)
#define MAX_HEADERS 200

SymfonicRecording *
symfonic_recording_new (void)
{
  SymfonicRecording *self = g_new0 (SymfonicRecording, 1);

  g_atomic_ref_count_init (&self->ref_count);
  self->method = g_strdup ("POST");
  self->request_headers = g_ptr_array_new_with_free_func (g_free);
  self->response_headers = g_ptr_array_new_with_free_func (g_free);
  self->chunks = g_array_new (FALSE, FALSE, sizeof (SymfonicRecordingChunk));
  self->body = g_bytes_new (NULL, 0);
  self->transport = SYMFONIC_RECORDING_TRANSPORT_STOPPED;

  return self;
}

/**
 * symfonic_recording_ref:
 * @self: a #SymfonicRecording
 *
 * Takes a reference. A recording never changes once made, so any thread
 * may read it.
 *
 * Returns: (transfer full): @self
 */
SymfonicRecording *
symfonic_recording_ref (SymfonicRecording *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  g_atomic_ref_count_inc (&self->ref_count);

  return self;
}

/**
 * symfonic_recording_unref:
 * @self: (transfer full): a #SymfonicRecording
 *
 * Drops a reference.
 */
void
symfonic_recording_unref (SymfonicRecording *self)
{
  g_return_if_fail (self != NULL);

  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;

  g_free (self->source_type);
  g_free (self->wire_format);
  g_free (self->model);
  g_free (self->run_id);
  g_free (self->recorded_at);
  g_free (self->method);
  g_free (self->target);
  g_ptr_array_unref (self->request_headers);
  g_free (self->request_body);
  g_ptr_array_unref (self->response_headers);
  g_free (self->error_code);
  g_bytes_unref (self->body);
  g_array_unref (self->chunks);
  g_free (self);
}

/* --- names ----------------------------------------------------------------- */

static const char *
enum_nick (GType type,
           int   value)
{
  /* kept: the nick outlives the call, and a static type's class is the
   * type system's for good once made */
  GEnumClass *klass = g_type_class_ref (type);
  GEnumValue *found = g_enum_get_value (klass, value);

  return found != NULL ? found->value_nick : NULL;
}

static gboolean
enum_from_nick (GType       type,
                const char *nick,
                int        *value)
{
  GEnumClass *klass = g_type_class_ref (type);
  GEnumValue *found = nick != NULL ? g_enum_get_value_by_nick (klass, nick) : NULL;

  if (found == NULL)
    return FALSE;
  *value = found->value;

  return TRUE;
}

const char *
symfonic_recording_end_to_string (SymfonicRecordingEnd end)
{
  return enum_nick (SYMFONIC_TYPE_RECORDING_END, end);
}

const char *
symfonic_recording_transport_to_string (SymfonicRecordingTransport transport)
{
  return enum_nick (SYMFONIC_TYPE_RECORDING_TRANSPORT, transport);
}

/* --- reading --------------------------------------------------------------- */

static gboolean
invalid (GError     **error,
         guint        line,
         const char  *why)
{
  g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, "line %u: %s", line, why);

  return FALSE;
}

/* A member that must be a string, or may be absent or null when
 * @optional. */
static gboolean
read_string (JsonObject  *object,
             const char  *name,
             gboolean     optional,
             char       **out)
{
  JsonNode *node = json_object_get_member (object, name);

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return optional;
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return FALSE;
  *out = json_node_dup_string (node);

  return TRUE;
}

static gboolean
read_int (JsonObject *object,
          const char *name,
          gint64      min,
          gint64      max,
          gint64     *out)
{
  JsonNode *node = json_object_get_member (object, name);
  gint64 value;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64)
    return FALSE;
  value = json_node_get_int (node);
  if (value < min || value > max)
    return FALSE;
  *out = value;

  return TRUE;
}

/* [["Name","value"],…] into @headers, names and values one after the
 * other. */
static gboolean
read_headers (JsonObject *object,
              GPtrArray  *headers)
{
  JsonNode *node = json_object_get_member (object, "headers");
  JsonArray *array;

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_ARRAY (node))
    return FALSE;
  array = json_node_get_array (node);
  if (json_array_get_length (array) > MAX_HEADERS)
    return FALSE;
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *pair = json_array_get_element (array, i);
      JsonArray *items;
      const char *name;
      const char *value;

      if (!JSON_NODE_HOLDS_ARRAY (pair) || json_array_get_length (items = json_node_get_array (pair)) != 2)
        return FALSE;
      name = json_array_get_string_element (items, 0);
      value = json_array_get_string_element (items, 1);
      if (name == NULL || value == NULL || *name == '\0')
        return FALSE;
      g_ptr_array_add (headers, g_strdup (name));
      g_ptr_array_add (headers, g_strdup (value));
    }

  return TRUE;
}

static gboolean
read_header_line (SymfonicRecording  *self,
                  JsonObject         *header,
                  gint64             *chunks,
                  gint64             *bytes,
                  GError            **error)
{
  JsonNode *request_node = json_object_get_member (header, "request");
  JsonNode *response_node = json_object_get_member (header, "response");
  g_autofree char *end = NULL;
  g_autofree char *transport = NULL;
  gint64 version = 0;
  gint64 number = 0;
  int value;

  if (!read_int (header, "symfonic_recording", 1, G_MAXINT, &version))
    return invalid (error, 1, "the first line is not a recording’s header");
  if (version > SYMFONIC_RECORDING_FORMAT_VERSION)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   "line 1: recording format %" G_GINT64_FORMAT " is newer than this gateway reads (%d)",
                   version, SYMFONIC_RECORDING_FORMAT_VERSION);
      return FALSE;
    }

  if (!read_string (header, "source", FALSE, &self->source_type) || *self->source_type == '\0' ||
      !read_string (header, "wire", TRUE, &self->wire_format) ||
      !read_string (header, "model", TRUE, &self->model) ||
      !read_string (header, "run_id", TRUE, &self->run_id) ||
      !read_string (header, "recorded_at", TRUE, &self->recorded_at))
    return invalid (error, 1, "“source” must name a source type; “wire”, “model”, “run_id” and “recorded_at” are strings");

  if (request_node != NULL && !JSON_NODE_HOLDS_NULL (request_node))
    {
      JsonObject *request;

      if (!JSON_NODE_HOLDS_OBJECT (request_node))
        return invalid (error, 1, "“request” must be an object");
      request = json_node_get_object (request_node);
      g_clear_pointer (&self->method, g_free);
      if (!read_string (request, "method", TRUE, &self->method) ||
          !read_string (request, "target", TRUE, &self->target) ||
          !read_string (request, "body", TRUE, &self->request_body) ||
          !read_headers (request, self->request_headers))
        return invalid (error, 1, "“request” has a member of the wrong kind");
      if (self->method == NULL)
        self->method = g_strdup ("POST");
    }

  if (response_node != NULL && !JSON_NODE_HOLDS_NULL (response_node))
    {
      JsonObject *response;

      if (!JSON_NODE_HOLDS_OBJECT (response_node))
        return invalid (error, 1, "“response” must be an object");
      response = json_node_get_object (response_node);
      if (!read_int (response, "status", 0, 999, &number))
        return invalid (error, 1, "“response” needs a “status” from 0 to 999");
      self->status = number;
      if (json_object_has_member (response, "head_us") &&
          !read_int (response, "head_us", 0, G_MAXINT64, &self->head_us))
        return invalid (error, 1, "“head_us” must be a non-negative integer");
      if (!read_headers (response, self->response_headers))
        return invalid (error, 1, "“response” has headers of the wrong kind");
    }

  if (!read_string (header, "end", FALSE, &end) ||
      !enum_from_nick (SYMFONIC_TYPE_RECORDING_END, end, &value))
    return invalid (error, 1, "“end” must be complete, cut, error or cancelled");
  self->end = value;
  if (!read_string (header, "transport", TRUE, &transport) ||
      (transport != NULL && !enum_from_nick (SYMFONIC_TYPE_RECORDING_TRANSPORT, transport, &value)))
    return invalid (error, 1, "“transport” must be eof, closed, timeout, refused, failed or stopped");
  self->transport = transport != NULL ? (SymfonicRecordingTransport) value : SYMFONIC_RECORDING_TRANSPORT_EOF;
  if (!read_string (header, "error_code", TRUE, &self->error_code))
    return invalid (error, 1, "“error_code” must be a string");
  if (json_object_has_member (header, "truncated"))
    {
      JsonNode *node = json_object_get_member (header, "truncated");

      if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_BOOLEAN)
        return invalid (error, 1, "“truncated” must be true or false");
      self->truncated = json_node_get_boolean (node);
    }
  if (json_object_has_member (header, "redactions"))
    {
      if (!read_int (header, "redactions", 0, G_MAXUINT, &number))
        return invalid (error, 1, "“redactions” must be a count");
      self->redactions = number;
    }
  if (!read_int (header, "chunks", 0, G_MAXUINT, chunks) || !read_int (header, "bytes", 0, G_MAXINT64, bytes))
    return invalid (error, 1, "“chunks” and “bytes” must count the lines that follow");
  if (!read_int (header, "duration_us", 0, G_MAXINT64, &self->duration_us))
    return invalid (error, 1, "“duration_us” must be a non-negative integer");

  return TRUE;
}

static gboolean
read_chunk_line (JsonObject  *object,
                 guint        line,
                 GByteArray  *body,
                 GArray      *chunks,
                 GError     **error)
{
  SymfonicRecordingChunk chunk;
  const char *text = json_object_get_string_member_with_default (object, "text", NULL);
  const char *encoded = json_object_get_string_member_with_default (object, "base64", NULL);
  gint64 previous = chunks->len > 0 ? g_array_index (chunks, SymfonicRecordingChunk, chunks->len - 1).offset_us : 0;

  if (!read_int (object, "offset_us", previous, G_MAXINT64, &chunk.offset_us))
    return invalid (error, line, "“offset_us” must be an integer no smaller than the line before’s");
  if ((text == NULL) == (encoded == NULL))
    return invalid (error, line, "a read has its bytes in either “text” or “base64”");

  if (text != NULL)
    g_byte_array_append (body, (const guint8 *) text, strlen (text));
  else
    {
      gsize length = 0;
      g_autofree guint8 *bytes = NULL;

      for (const char *p = encoded; *p != '\0'; p++)
        {
          if (!g_ascii_isalnum (*p) && *p != '+' && *p != '/' && *p != '=')
            return invalid (error, line, "“base64” is not base64");
        }
      bytes = g_base64_decode (encoded, &length);
      g_byte_array_append (body, bytes, length);
    }
  chunk.end = body->len;
  g_array_append_val (chunks, chunk);

  return TRUE;
}

/**
 * symfonic_recording_data_is_recording:
 * @data: (array length=length) (element-type guint8): a file's contents
 * @length: the bytes of @data
 *
 * Whether @data starts like a recording: its first line a JSON object
 * with a `symfonic_recording` member. A typed transcript of the `replay`
 * source (one event per line) does not.
 *
 * Returns: %TRUE when @data looks like a recording
 */
gboolean
symfonic_recording_data_is_recording (const char *data,
                                      gsize       length)
{
  const char *newline;
  g_autoptr(JsonNode) root = NULL;
  gsize first;

  g_return_val_if_fail (data != NULL || length == 0, FALSE);

  newline = memchr (data, '\n', length);
  first = newline != NULL ? (gsize) (newline - data) : length;
  root = symfonic_json_parse (data, first, SYMFONIC_JSON_MAX_DEPTH, NULL);

  return root != NULL && JSON_NODE_HOLDS_OBJECT (root) &&
         json_object_has_member (json_node_get_object (root), "symfonic_recording");
}

/**
 * symfonic_recording_new_from_data:
 * @data: (array length=length) (element-type guint8): a recording file's
 *   contents
 * @length: the bytes of @data
 * @error: return location for a #GError
 *
 * Reads a recording (see [struct@Symfonic.Recording] for the format).
 * Every line is strict JSON nested at most 64 deep; the header's counts
 * must match the lines, so that a file cut short is refused. An error
 * names the line, never what it holds.
 *
 * Returns: (transfer full): the recording, or %NULL with @error set
 */
SymfonicRecording *
symfonic_recording_new_from_data (const char  *data,
                                  gsize        length,
                                  GError     **error)
{
  g_autoptr(SymfonicRecording) self = symfonic_recording_new ();
  g_autoptr(GByteArray) body = g_byte_array_new ();
  const char *line = data;
  const char *end = data + length;
  gint64 chunks = 0;
  gint64 bytes = 0;
  guint number = 0;
  gboolean header_read = FALSE;

  g_return_val_if_fail (data != NULL || length == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  while (line < end)
    {
      const char *newline = memchr (line, '\n', end - line);
      gsize line_length = (newline != NULL ? newline : end) - line;
      g_autoptr(JsonNode) root = NULL;
      g_autoptr(GError) local_error = NULL;

      number++;
      if (line_length == 0 || (line_length == 1 && *line == '\r'))
        {
          line = newline != NULL ? newline + 1 : end;
          continue;
        }
      root = symfonic_json_parse (line, line_length, SYMFONIC_JSON_MAX_DEPTH, &local_error);
      if (root == NULL)
        {
          g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, "line %u: %s", number, local_error->message);
          return NULL;
        }
      if (!JSON_NODE_HOLDS_OBJECT (root))
        {
          invalid (error, number, "a line must be a JSON object");
          return NULL;
        }
      if (!header_read)
        {
          if (number != 1)
            {
              invalid (error, number, "the header must be the first line");
              return NULL;
            }
          if (!read_header_line (self, json_node_get_object (root), &chunks, &bytes, error))
            return NULL;
          header_read = TRUE;
        }
      else if (!read_chunk_line (json_node_get_object (root), number, body, self->chunks, error))
        return NULL;
      line = newline != NULL ? newline + 1 : end;
    }

  if (!header_read)
    {
      invalid (error, 1, "the first line is not a recording’s header");
      return NULL;
    }
  if ((gint64) self->chunks->len != chunks || (gint64) body->len != bytes)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   "the header counts %" G_GINT64_FORMAT " reads of %" G_GINT64_FORMAT
                     " bytes, the file holds %u of %u: it was cut short or changed",
                   chunks, bytes, self->chunks->len, body->len);
      return NULL;
    }
  if (self->chunks->len > 0 &&
      g_array_index (self->chunks, SymfonicRecordingChunk, self->chunks->len - 1).offset_us > self->duration_us)
    {
      invalid (error, 1, "“duration_us” is before the last read");
      return NULL;
    }

  g_bytes_unref (self->body);
  self->body = g_byte_array_free_to_bytes (g_steal_pointer (&body));

  return g_steal_pointer (&self);
}

/**
 * symfonic_recording_new_from_file:
 * @file: a recording file
 * @error: return location for a #GError
 *
 * Reads a recording from a regular file of at most 64 MiB, as
 * symfonic_recording_new_from_data() does; an error names the file.
 *
 * Returns: (transfer full): the recording, or %NULL with @error set
 */
SymfonicRecording *
symfonic_recording_new_from_file (GFile   *file,
                                  GError **error)
{
  g_autoptr(GFileInfo) info = NULL;
  g_autofree char *display = NULL;
  g_autofree char *contents = NULL;
  g_autoptr(GError) local_error = NULL;
  SymfonicRecording *self;
  gsize length;

  g_return_val_if_fail (G_IS_FILE (file), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  display = g_file_get_parse_name (file);
  /* a FIFO or a device would block or never end */
  info = g_file_query_info (file, G_FILE_ATTRIBUTE_STANDARD_TYPE "," G_FILE_ATTRIBUTE_STANDARD_SIZE,
                            G_FILE_QUERY_INFO_NONE, NULL, &local_error);
  if (info == NULL)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, "%s: %s", display, local_error->message);
      return NULL;
    }
  if (g_file_info_get_file_type (info) != G_FILE_TYPE_REGULAR || g_file_info_get_size (info) > MAX_FILE_BYTES)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   "%s: not a regular file of at most %d MiB", display, MAX_FILE_BYTES / (1024 * 1024));
      return NULL;
    }
  if (!g_file_load_contents (file, NULL, &contents, &length, NULL, &local_error))
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, "%s: %s", display, local_error->message);
      return NULL;
    }

  self = symfonic_recording_new_from_data (contents, length, &local_error);
  if (self == NULL)
    g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, "%s: %s", display, local_error->message);

  return self;
}

/* --- writing --------------------------------------------------------------- */

static void
append_member (GString    *out,
               const char *name,
               const char *value)
{
  g_string_append_c (out, ',');
  symfonic_json_append_string (out, name, -1);
  g_string_append_c (out, ':');
  if (value == NULL)
    g_string_append (out, "null");
  else
    symfonic_json_append_string (out, value, -1);
}

static void
append_int_member (GString    *out,
                   const char *name,
                   gint64      value)
{
  g_string_append_c (out, ',');
  symfonic_json_append_string (out, name, -1);
  g_string_append_c (out, ':');
  symfonic_json_append_int (out, value);
}

static void
append_headers (GString   *out,
                GPtrArray *headers)
{
  g_string_append (out, ",\"headers\":[");
  for (guint i = 0; i + 1 < headers->len; i += 2)
    {
      if (i > 0)
        g_string_append_c (out, ',');
      g_string_append_c (out, '[');
      symfonic_json_append_string (out, g_ptr_array_index (headers, i), -1);
      g_string_append_c (out, ',');
      symfonic_json_append_string (out, g_ptr_array_index (headers, i + 1), -1);
      g_string_append_c (out, ']');
    }
  g_string_append_c (out, ']');
}

/* A string that is text, not a JSON reader's trap: UTF-8 without NUL
 * (json-glib ends a string at \u0000). */
static gboolean
is_plain_text (const char *data,
               gsize       length)
{
  return memchr (data, '\0', length) == NULL && g_utf8_validate_len (data, length, NULL);
}

/**
 * symfonic_recording_to_data:
 * @self: a #SymfonicRecording
 * @length: (out) (optional): the bytes returned, without the closing NUL
 *
 * The recording as a file holds it (see [struct@Symfonic.Recording]),
 * which symfonic_recording_new_from_data() reads back to an equal
 * recording.
 *
 * Returns: (transfer full): the file's contents
 */
char *
symfonic_recording_to_data (SymfonicRecording *self,
                            gsize             *length)
{
  gsize body_length;
  const char *body = g_bytes_get_data (self->body, &body_length);
  GString *out = g_string_sized_new (1024 + body_length + body_length / 4 + self->chunks->len * 32);
  gsize start = 0;

  g_return_val_if_fail (self != NULL, NULL);

  g_string_append (out, "{\"symfonic_recording\":");
  symfonic_json_append_int (out, SYMFONIC_RECORDING_FORMAT_VERSION);
  append_member (out, "source", self->source_type);
  append_member (out, "wire", self->wire_format);
  append_member (out, "model", self->model);
  append_member (out, "run_id", self->run_id);
  append_member (out, "recorded_at", self->recorded_at);

  g_string_append (out, ",\"request\":{\"method\":");
  symfonic_json_append_string (out, self->method != NULL ? self->method : "POST", -1);
  append_member (out, "target", self->target);
  append_headers (out, self->request_headers);
  append_member (out, "body", self->request_body);
  g_string_append_c (out, '}');

  g_string_append (out, ",\"response\":{\"status\":");
  symfonic_json_append_int (out, self->status);
  append_int_member (out, "head_us", self->head_us);
  append_headers (out, self->response_headers);
  g_string_append_c (out, '}');

  append_member (out, "end", symfonic_recording_end_to_string (self->end));
  append_member (out, "transport", symfonic_recording_transport_to_string (self->transport));
  append_member (out, "error_code", self->error_code);
  g_string_append (out, self->truncated ? ",\"truncated\":true" : ",\"truncated\":false");
  append_int_member (out, "redactions", self->redactions);
  append_int_member (out, "chunks", self->chunks->len);
  append_int_member (out, "bytes", body_length);
  append_int_member (out, "duration_us", self->duration_us);
  g_string_append (out, "}\n");

  for (guint i = 0; i < self->chunks->len; i++)
    {
      const SymfonicRecordingChunk *chunk = &g_array_index (self->chunks, SymfonicRecordingChunk, i);
      const char *data = body + start;
      gsize size = chunk->end - start;

      g_string_append (out, "{\"offset_us\":");
      symfonic_json_append_int (out, chunk->offset_us);
      if (is_plain_text (data, size))
        {
          g_string_append (out, ",\"text\":");
          symfonic_json_append_string (out, data, size);
        }
      else
        {
          g_autofree char *encoded = g_base64_encode ((const guchar *) data, size);

          g_string_append (out, ",\"base64\":\"");
          g_string_append (out, encoded);
          g_string_append_c (out, '"');
        }
      g_string_append (out, "}\n");
      start = chunk->end;
    }

  if (length != NULL)
    *length = out->len;

  return g_string_free (out, FALSE);
}

/* --- what it holds --------------------------------------------------------- */

/**
 * symfonic_recording_get_source_type:
 * @self: a #SymfonicRecording
 *
 * The type of the source that recorded it (`runtime`, `openai`,
 * `anthropic`, or a plugin's), whose reading plays it back.
 *
 * Returns: the source type's name
 */
const char *
symfonic_recording_get_source_type (SymfonicRecording *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->source_type;
}

/**
 * symfonic_recording_get_wire_format:
 * @self: a #SymfonicRecording
 *
 * The name of the upstream's wire format: `symfonic-typed-sse`,
 * `openai-chat-completions`, `anthropic-messages`, or what a plugin's
 * source calls its own.
 *
 * Returns: (nullable): the format's name
 */
const char *
symfonic_recording_get_wire_format (SymfonicRecording *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->wire_format;
}

/**
 * symfonic_recording_get_model:
 * @self: a #SymfonicRecording
 *
 * The model the recording source asked for, for a provider's source.
 *
 * Returns: (nullable): the model, or %NULL
 */
const char *
symfonic_recording_get_model (SymfonicRecording *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->model;
}

/**
 * symfonic_recording_get_run_id:
 * @self: a #SymfonicRecording
 *
 * The run it recorded, as in `X-Symfonic-Run-ID`.
 *
 * Returns: (nullable): the run id
 */
const char *
symfonic_recording_get_run_id (SymfonicRecording *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->run_id;
}

/**
 * symfonic_recording_get_request_target:
 * @self: a #SymfonicRecording
 *
 * The path and query the request went to, its secrets removed.
 *
 * Returns: (nullable): the request's target
 */
const char *
symfonic_recording_get_request_target (SymfonicRecording *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->target;
}

/**
 * symfonic_recording_get_request_body:
 * @self: a #SymfonicRecording
 *
 * The request's body as sent, its secrets removed.
 *
 * Returns: (nullable): the request body
 */
const char *
symfonic_recording_get_request_body (SymfonicRecording *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->request_body;
}

/**
 * symfonic_recording_get_status:
 * @self: a #SymfonicRecording
 *
 * The response's status.
 *
 * Returns: the status, or 0 when no response head arrived
 */
guint
symfonic_recording_get_status (SymfonicRecording *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->status;
}

/**
 * symfonic_recording_get_response_header:
 * @self: a #SymfonicRecording
 * @name: a header's name, in any case
 *
 * A header of the recorded response (those that carry secrets, cookies
 * above all, are not kept).
 *
 * Returns: (nullable): the header's first value, or %NULL
 */
const char *
symfonic_recording_get_response_header (SymfonicRecording *self,
                                        const char        *name)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (name != NULL, NULL);

  for (guint i = 0; i + 1 < self->response_headers->len; i += 2)
    {
      if (g_ascii_strcasecmp (g_ptr_array_index (self->response_headers, i), name) == 0)
        return g_ptr_array_index (self->response_headers, i + 1);
    }

  return NULL;
}

/**
 * symfonic_recording_get_end:
 * @self: a #SymfonicRecording
 *
 * How the run ended.
 *
 * Returns: how the run ended
 */
SymfonicRecordingEnd
symfonic_recording_get_end (SymfonicRecording *self)
{
  g_return_val_if_fail (self != NULL, SYMFONIC_RECORDING_END_ERROR);

  return self->end;
}

/**
 * symfonic_recording_get_transport:
 * @self: a #SymfonicRecording
 *
 * How the upstream's bytes stopped.
 *
 * Returns: how the bytes stopped
 */
SymfonicRecordingTransport
symfonic_recording_get_transport (SymfonicRecording *self)
{
  g_return_val_if_fail (self != NULL, SYMFONIC_RECORDING_TRANSPORT_FAILED);

  return self->transport;
}

/**
 * symfonic_recording_get_error_code:
 * @self: a #SymfonicRecording
 *
 * The code of the failure that ended the run (`upstream_error`,
 * `upstream_timeout`, …), as the error map names codes.
 *
 * Returns: (nullable): the code, or %NULL when the run did not fail
 */
const char *
symfonic_recording_get_error_code (SymfonicRecording *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->error_code;
}

/**
 * symfonic_recording_get_truncated:
 * @self: a #SymfonicRecording
 *
 * Whether bytes the upstream sent are missing: the run passed the
 * source's `record-max-bytes`, or its client went away.
 *
 * Returns: %TRUE for a truncated recording
 */
gboolean
symfonic_recording_get_truncated (SymfonicRecording *self)
{
  g_return_val_if_fail (self != NULL, FALSE);

  return self->truncated;
}

/**
 * symfonic_recording_get_redactions:
 * @self: a #SymfonicRecording
 *
 * How many secrets the recorder took out of the request and the body.
 *
 * Returns: the count
 */
guint
symfonic_recording_get_redactions (SymfonicRecording *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->redactions;
}

/**
 * symfonic_recording_get_head_us:
 * @self: a #SymfonicRecording
 *
 * When the response head arrived, in microseconds after the request.
 *
 * Returns: the head's offset
 */
gint64
symfonic_recording_get_head_us (SymfonicRecording *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->head_us;
}

/**
 * symfonic_recording_get_duration_us:
 * @self: a #SymfonicRecording
 *
 * When the run ended, in microseconds after the request.
 *
 * Returns: the run's duration
 */
gint64
symfonic_recording_get_duration_us (SymfonicRecording *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->duration_us;
}

/**
 * symfonic_recording_get_n_chunks:
 * @self: a #SymfonicRecording
 *
 * How many reads of the body it holds.
 *
 * Returns: the number of reads
 */
guint
symfonic_recording_get_n_chunks (SymfonicRecording *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->chunks->len;
}

/**
 * symfonic_recording_get_chunk:
 * @self: a #SymfonicRecording
 * @index: a read, from 0
 * @offset_us: (out) (optional): when it arrived, in microseconds after the
 *   request
 *
 * The bytes of one read of the body.
 *
 * Returns: (transfer full): the read's bytes
 */
GBytes *
symfonic_recording_get_chunk (SymfonicRecording *self,
                              guint              index,
                              gint64            *offset_us)
{
  const SymfonicRecordingChunk *chunk;
  gsize start;

  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (index < self->chunks->len, NULL);

  chunk = &g_array_index (self->chunks, SymfonicRecordingChunk, index);
  start = index > 0 ? g_array_index (self->chunks, SymfonicRecordingChunk, index - 1).end : 0;
  if (offset_us != NULL)
    *offset_us = chunk->offset_us;

  return g_bytes_new_from_bytes (self->body, start, chunk->end - start);
}

/**
 * symfonic_recording_get_body:
 * @self: a #SymfonicRecording
 *
 * Every read's bytes, one after the other: the body as received.
 *
 * Returns: (transfer none): the body
 */
GBytes *
symfonic_recording_get_body (SymfonicRecording *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->body;
}

/* --- other cuts of the same bytes ------------------------------------------ */

/* The same recording but for its reads. */
static SymfonicRecording *
copy_without_chunks (SymfonicRecording *self)
{
  SymfonicRecording *copy = symfonic_recording_new ();

  copy->source_type = g_strdup (self->source_type);
  copy->wire_format = g_strdup (self->wire_format);
  copy->model = g_strdup (self->model);
  copy->run_id = g_strdup (self->run_id);
  copy->recorded_at = g_strdup (self->recorded_at);
  g_free (copy->method);
  copy->method = g_strdup (self->method);
  copy->target = g_strdup (self->target);
  for (guint i = 0; i < self->request_headers->len; i++)
    g_ptr_array_add (copy->request_headers, g_strdup (g_ptr_array_index (self->request_headers, i)));
  copy->request_body = g_strdup (self->request_body);
  copy->status = self->status;
  copy->head_us = self->head_us;
  for (guint i = 0; i < self->response_headers->len; i++)
    g_ptr_array_add (copy->response_headers, g_strdup (g_ptr_array_index (self->response_headers, i)));
  copy->end = self->end;
  copy->transport = self->transport;
  copy->error_code = g_strdup (self->error_code);
  copy->truncated = self->truncated;
  copy->redactions = self->redactions;
  copy->duration_us = self->duration_us;
  g_bytes_unref (copy->body);
  copy->body = g_bytes_ref (self->body);

  return copy;
}

/* A byte cannot be read before it arrived: a new read that ends at @end
 * arrives with the original read that held its last byte. */
static gint64
arrival_of (SymfonicRecording *self,
            gsize              end,
            guint             *hint)
{
  while (*hint + 1 < self->chunks->len &&
         g_array_index (self->chunks, SymfonicRecordingChunk, *hint).end < end)
    (*hint)++;

  return self->chunks->len > 0 ? g_array_index (self->chunks, SymfonicRecordingChunk, *hint).offset_us : 0;
}

static int
compare_sizes (gconstpointer a,
               gconstpointer b)
{
  gsize x = *(const gsize *) a;
  gsize y = *(const gsize *) b;

  return x < y ? -1 : x > y;
}

/**
 * symfonic_recording_rechunk_at:
 * @self: a #SymfonicRecording
 * @cuts: (array length=n_cuts): byte offsets into the body, in any order
 * @n_cuts: how many
 *
 * The same bytes read at other boundaries: a read ends at each of @cuts
 * (offsets outside the body, and repeats, are ignored) and at the body's
 * end, and nowhere else. Each read arrives when the last of its bytes
 * did. symfonic_recording_rechunk_at (recording, &k, 1) splits the body in
 * two at byte k: a frame, a UTF-8 character or a JSON string cut there.
 *
 * Returns: (transfer full): a new recording
 */
SymfonicRecording *
symfonic_recording_rechunk_at (SymfonicRecording *self,
                               const gsize       *cuts,
                               gsize              n_cuts)
{
  g_autoptr(GArray) sorted = g_array_sized_new (FALSE, FALSE, sizeof (gsize), n_cuts + 1);
  SymfonicRecording *copy;
  gsize body_length;
  gsize previous = 0;
  guint hint = 0;

  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (cuts != NULL || n_cuts == 0, NULL);

  body_length = g_bytes_get_size (self->body);
  copy = copy_without_chunks (self);
  for (gsize i = 0; i < n_cuts; i++)
    {
      if (cuts[i] > 0 && cuts[i] < body_length)
        g_array_append_val (sorted, cuts[i]);
    }
  g_array_sort (sorted, compare_sizes);
  if (body_length > 0)
    g_array_append_val (sorted, body_length);

  for (guint i = 0; i < sorted->len; i++)
    {
      SymfonicRecordingChunk chunk;

      chunk.end = g_array_index (sorted, gsize, i);
      if (chunk.end == previous)
        continue;
      chunk.offset_us = arrival_of (self, chunk.end, &hint);
      g_array_append_val (copy->chunks, chunk);
      previous = chunk.end;
    }

  return copy;
}

/**
 * symfonic_recording_rechunk:
 * @self: a #SymfonicRecording
 * @seed: the seed of the cuts: the same seed cuts the same way
 * @max_chunk_bytes: the longest read, at least 1
 *
 * The same bytes read at random boundaries: reads of 1 to
 * @max_chunk_bytes bytes, drawn from @seed, each arriving when the last of
 * its bytes did (see symfonic_recording_rechunk_at()).
 *
 * Returns: (transfer full): a new recording
 */
SymfonicRecording *
symfonic_recording_rechunk (SymfonicRecording *self,
                            guint64            seed,
                            gsize              max_chunk_bytes)
{
  g_autoptr(GArray) cuts = g_array_new (FALSE, FALSE, sizeof (gsize));
  g_autoptr(GRand) rand = NULL;
  guint32 seed_words[2];
  gsize body_length;
  gsize at = 0;

  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (max_chunk_bytes >= 1, NULL);

  seed_words[0] = (guint32) seed;
  seed_words[1] = (guint32) (seed >> 32);
  rand = g_rand_new_with_seed_array (seed_words, 2);
  body_length = g_bytes_get_size (self->body);
  max_chunk_bytes = MIN (max_chunk_bytes, (gsize) G_MAXINT32 - 1);
  while (at < body_length)
    {
      at += (gsize) g_rand_int_range (rand, 1, (gint32) max_chunk_bytes + 1);
      if (at < body_length)
        g_array_append_val (cuts, at);
    }

  return symfonic_recording_rechunk_at (self, (const gsize *) cuts->data, cuts->len);
}
