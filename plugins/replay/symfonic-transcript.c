/* symfonic-transcript.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <inttypes.h>
#include <string.h>
#include <glib/gi18n-lib.h>

#include "symfonic-transcript.h"

/* One line per upstream event:
 *   {"event":"TextDeltaEvent","data":{"text":"Hel"},"delay_ms":20}
 * `delay_ms` (optional) is the pause before the event. A recorded failure is
 *   {"event":"error","data":{"detail":"...","code":"upstream_unavailable"}}
 * and ends the playback there. Blank lines and lines starting with # are
 * skipped. */
struct _SymfonicTranscript
{
  char   *name;
  GArray *entries;
};

static void
clear_entry (gpointer data)
{
  SymfonicTranscriptEntry *entry = data;

  g_clear_pointer (&entry->event, symfonic_event_unref);
  g_clear_error (&entry->error);
}

void
symfonic_transcript_free (SymfonicTranscript *self)
{
  g_array_unref (self->entries);
  g_free (self->name);
  g_free (self);
}

static SymfonicError
error_code_from_name (const char *code)
{
  for (SymfonicError i = SYMFONIC_ERROR_BAD_REQUEST; i <= SYMFONIC_ERROR_UPSTREAM_TIMEOUT; i++)
    {
      if (g_strcmp0 (symfonic_error_code_name (i), code) == 0)
        return i;
    }

  return SYMFONIC_ERROR_UPSTREAM;
}

static gboolean
parse_line (const char               *line,
            SymfonicTranscriptEntry  *entry,
            GError                  **error)
{
  g_autoptr(JsonNode) root = NULL;
  JsonObject *object;
  JsonNode *data;
  const char *name;
  gint64 delay;

  root = symfonic_json_parse (line, strlen (line), SYMFONIC_JSON_MAX_DEPTH, error);
  if (root == NULL)
    return FALSE;

  if (!JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                           _("expected a JSON object, found another JSON value"));
      return FALSE;
    }

  object = json_node_get_object (root);
  name = json_object_get_string_member_with_default (object, "event", NULL);
  data = json_object_get_member (object, "data");
  delay = json_object_get_int_member_with_default (object, "delay_ms", 0);
  if (name == NULL || data == NULL)
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                           _("expected “event” (a string) and “data”, found an object without them"));
      return FALSE;
    }
  if (delay < 0 || delay > 600000)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("expected “delay_ms” from 0 to 600000, found %" PRId64), delay);
      return FALSE;
    }
  entry->delay_ms = delay;

  if (g_str_equal (name, "error"))
    {
      const char *detail = NULL;
      const char *code = NULL;

      if (JSON_NODE_HOLDS_OBJECT (data))
        {
          detail = json_object_get_string_member_with_default (json_node_get_object (data), "detail", NULL);
          code = json_object_get_string_member_with_default (json_node_get_object (data), "code", NULL);
        }
      entry->error = g_error_new_literal (SYMFONIC_ERROR, error_code_from_name (code),
                                          detail != NULL ? detail : "The upstream failed");
      return TRUE;
    }

  entry->event = symfonic_event_new_from_json (name, data, error);
  return entry->event != NULL;
}

/* @contents is a file's, @display its name for errors; @name what
 * requests call it. */
SymfonicTranscript *
symfonic_transcript_new_from_data (const char  *name,
                                   const char  *display,
                                   const char  *contents,
                                   GError     **error)
{
  g_autoptr(SymfonicTranscript) self = g_new0 (SymfonicTranscript, 1);
  g_auto(GStrv) lines = NULL;

  self->entries = g_array_new (FALSE, TRUE, sizeof (SymfonicTranscriptEntry));
  g_array_set_clear_func (self->entries, clear_entry);
  self->name = g_strdup (name);

  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      SymfonicTranscriptEntry entry = { NULL, NULL, 0 };
      g_autoptr(GError) local_error = NULL;
      const char *line = g_strstrip (lines[i]);

      if (*line == '\0' || *line == '#')
        continue;

      if (!parse_line (line, &entry, &local_error))
        {
          g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                       "%s:%u: %s", display, i + 1, local_error->message);
          return NULL;
        }
      g_array_append_val (self->entries, entry);
    }

  return g_steal_pointer (&self);
}

const char *
symfonic_transcript_get_name (SymfonicTranscript *self)
{
  return self->name;
}

guint
symfonic_transcript_get_length (SymfonicTranscript *self)
{
  return self->entries->len;
}

const SymfonicTranscriptEntry *
symfonic_transcript_get_entry (SymfonicTranscript *self,
                               guint               position)
{
  return &g_array_index (self->entries, SymfonicTranscriptEntry, position);
}
