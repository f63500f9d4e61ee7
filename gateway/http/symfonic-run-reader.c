/* symfonic-run-reader.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <glib/gi18n-lib.h>

#include "symfonic-error.h"
#include "symfonic-run-reader-private.h"
#include "symfonic-sse-writer-private.h"

/* `GET {path}/{run_id}/stream` on a route of kind runs: the frames of a
 * resumable run after the one the client names in Last-Event-ID (all of
 * them without it), as they are kept in the run store, then the frames the
 * run goes on to produce, until its terminal. The frames are the bytes the
 * run's own client got, ids included, shared with the store.
 *
 * The reader writes what the client takes: it stops at the writer's
 * high-water mark and reads on when the writer drained. Caught up, it
 * waits on the store, which may wake it from another worker's thread;
 * the wait's callback runs on this one. The reader cannot withdraw a wait
 * from the store, so the callback holds a token that outlives the reader
 * and is cleared when the reader goes. */

/* the longest Last-Event-ID worth reading: 20 digits hold any guint64 */
#define MAX_ID_DIGITS 20

typedef struct
{
  SymfonicRunReader *reader;
} Token;

struct _SymfonicRunReader
{
  SymfonicRunStore  *store;
  char              *run_id;
  char              *principal_id;
  char              *tenant_id;
  /* the id of the last frame queued for the client */
  guint64            seq;
  /* frames read and not yet queued (the writer was full), from @next */
  GPtrArray         *pending;
  guint              next;
  gboolean           ended;
  gboolean           waiting;
  Token             *token;
  SymfonicSseWriter *writer;
  GDestroyNotify     finished;
  gpointer           data;
};

static void read_on (SymfonicRunReader *self);

/* `{route_path}/{run_id}/stream`, with a run id the gateway could have
 * given (a UUID): anything else is a malformed request. */
static char *
parse_run_id (const char *path,
              const char *route_path,
              GError    **error)
{
  gsize prefix = strlen (route_path);
  const char *id, *end;

  if (!g_str_has_prefix (path, route_path) || path[prefix] != '/' || !g_str_has_suffix (path, "/stream"))
    goto malformed;
  id = path + prefix + 1;
  end = path + strlen (path) - strlen ("/stream");
  if (end <= id || end - id > 36)
    goto malformed;
  {
    g_autofree char *run_id = g_strndup (id, end - id);

    if (!g_uuid_string_is_valid (run_id))
      goto malformed;
    return g_steal_pointer (&run_id);
  }

malformed:
  g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST,
                       _("The path must be {path}/{run_id}/stream with the run id the gateway gave"));
  return NULL;
}

/* Last-Event-ID: a frame id, digits only; none means from the start.
 * The header read as a list: sent twice, it is malformed instead of
 * whichever copy libsoup would pick. */
static gboolean
parse_last_event_id (SoupServerMessage  *message,
                     guint64            *after,
                     GError            **error)
{
  const char *value = soup_message_headers_get_list (soup_server_message_get_request_headers (message),
                                                     "Last-Event-ID");
  gsize length;

  *after = 0;
  if (value == NULL)
    return TRUE;

  length = strlen (value);
  if (length == 0 || length > MAX_ID_DIGITS || strspn (value, "0123456789") != length ||
      !g_ascii_string_to_unsigned (value, 10, 0, G_MAXUINT64, after, NULL))
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST,
                           _("Last-Event-ID must be the id of a frame of the run"));
      return FALSE;
    }

  return TRUE;
}

static gboolean
read_frames (SymfonicRunReader  *self,
             GError            **error)
{
  g_clear_pointer (&self->pending, g_ptr_array_unref);
  self->next = 0;
  self->pending = symfonic_run_store_read (self->store, self->run_id, self->principal_id, self->tenant_id,
                                           self->seq, &self->ended, error);

  return self->pending != NULL;
}

/* Checks the request and reads what the run keeps, before any byte of the
 * response: a malformed request, or a Last-Event-ID past the run's last
 * frame, is 400, a run that is not the asker's (or none) 404, frames no
 * longer kept 410. */
SymfonicRunReader *
symfonic_run_reader_new (SymfonicRunStore   *store,
                         SoupServerMessage  *message,
                         const char         *route_path,
                         SymfonicInvocation *invocation,
                         GError            **error)
{
  g_autofree char *run_id = NULL;
  guint64 after;

  run_id = parse_run_id (g_uri_get_path (soup_server_message_get_uri (message)), route_path, error);
  if (run_id == NULL || !parse_last_event_id (message, &after, error))
    return NULL;

  return symfonic_run_reader_new_for_run (store, run_id, after, invocation, error);
}

/* The frames of @run_id after the one of id @after, for the principal and
 * tenant of @invocation: a background response read again from the
 * sequence number its client names. */
SymfonicRunReader *
symfonic_run_reader_new_for_run (SymfonicRunStore    *store,
                                 const char          *run_id,
                                 guint64              after,
                                 SymfonicInvocation  *invocation,
                                 GError             **error)
{
  SymfonicRunReader *self;

  self = g_new0 (SymfonicRunReader, 1);
  self->store = g_object_ref (store);
  self->run_id = g_strdup (run_id);
  self->principal_id = g_strdup (symfonic_invocation_get_principal_id (invocation));
  self->tenant_id = g_strdup (symfonic_invocation_get_tenant_id (invocation));
  self->seq = after;
  if (!read_frames (self, error))
    {
      symfonic_run_reader_free (self);
      return NULL;
    }

  return self;
}

const char *
symfonic_run_reader_get_run_id (SymfonicRunReader *self)
{
  return self->run_id;
}

static void
wait_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  Token *token = user_data;
  SymfonicRunReader *self = token->reader;

  g_rc_box_release (token);
  if (self == NULL)
    return;

  symfonic_run_store_wait_finish (self->store, result, NULL);
  self->waiting = FALSE;
  read_on (self);
}

static void
wait_for_more (SymfonicRunReader *self)
{
  self->waiting = TRUE;
  symfonic_run_store_wait_async (self->store, self->run_id, self->seq, NULL, wait_cb, g_rc_box_acquire (self->token));
}

/* Queues what was read, up to the writer's high-water mark. Returns
 * %TRUE once the terminal is queued. */
static gboolean
queue_pending (SymfonicRunReader *self)
{
  while (self->next < self->pending->len && !symfonic_sse_writer_is_full (self->writer))
    {
      GBytes *frame = g_ptr_array_index (self->pending, self->next++);
      gsize length;
      const char *data = g_bytes_get_data (frame, &length);
      GString *out = symfonic_sse_writer_begin_frame (self->writer);
      gboolean last = self->ended && self->next == self->pending->len;

      g_string_append_len (out, data, length);
      self->seq++;
      if (last)
        {
          symfonic_sse_writer_close (self->writer);
          return TRUE;
        }
      /* kept frames are never shed: the high-water mark is far below the
       * bound, so this does not overflow */
      symfonic_sse_writer_end_frame (self->writer, SYMFONIC_SSE_FRAME_KEPT);
    }

  return FALSE;
}

static void
read_on (SymfonicRunReader *self)
{
  g_autoptr(GError) error = NULL;

  if (self->waiting)
    return;

  for (;;)
    {
      if (queue_pending (self))
        return;
      /* the writer is full: writer_drained() comes back here */
      if (self->next < self->pending->len)
        return;
      if (!read_frames (self, &error))
        {
          /* the run was forgotten or its frames went while the client
           * read: what it got is all it gets */
          g_debug ("Run %s can no longer be read: %s", self->run_id, error->message);
          symfonic_sse_writer_close (self->writer);
          return;
        }
      if (self->pending->len > 0)
        continue;
      /* the run appends its terminal, then ends: a read between the two
       * queued the terminal as a frame like the others */
      if (self->ended)
        symfonic_sse_writer_close (self->writer);
      else
        wait_for_more (self);
      return;
    }
}

static void
writer_drained (gpointer data)
{
  read_on (data);
}

static void
writer_stalled (gpointer data)
{
  SymfonicRunReader *self = data;

  /* the body ends at the frame boundary the writer cut at: the client
   * reads on from there with Last-Event-ID */
  symfonic_sse_writer_begin_frame (self->writer);
  symfonic_sse_writer_close (self->writer);
}

static void
writer_finished (gpointer data)
{
  SymfonicRunReader *self = data;

  self->finished (self->data);
}

/* a run read again was counted when it ran */
static const SymfonicSseWriterCallbacks writer_callbacks = {
  writer_drained,
  NULL,
  writer_stalled,
  writer_finished,
};

/* Takes the connection of @message, whose head is set, and streams the
 * run on it. @finished runs once the writer let the connection go. */
void
symfonic_run_reader_start (SymfonicRunReader *self,
                           SoupServerMessage *message,
                           guint              stall_seconds,
                           guint              heartbeat_seconds,
                           GDestroyNotify     finished,
                           gpointer           data)
{
  self->finished = finished;
  self->data = data;
  self->token = g_rc_box_new0 (Token);
  self->token->reader = self;
  self->writer = symfonic_sse_writer_new (message, NULL, stall_seconds, heartbeat_seconds, &writer_callbacks, self);
  read_on (self);
}

guint64
symfonic_run_reader_get_frames (SymfonicRunReader *self)
{
  return self->writer != NULL ? symfonic_sse_writer_get_frames (self->writer) : 0;
}

void
symfonic_run_reader_free (SymfonicRunReader *self)
{
  if (self->token != NULL)
    {
      self->token->reader = NULL;
      g_rc_box_release (self->token);
    }
  g_clear_pointer (&self->writer, symfonic_sse_writer_free);
  g_clear_pointer (&self->pending, g_ptr_array_unref);
  g_object_unref (self->store);
  g_free (self->run_id);
  g_free (self->principal_id);
  g_free (self->tenant_id);
  g_free (self);
}
