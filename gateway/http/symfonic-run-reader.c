/* symfonic-run-reader.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-encoder-private.h"
#include "symfonic-error.h"
#include "symfonic-error-frame.h"
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
 * the wait's callback runs on this one. A store in the process answers
 * reads at once; a store across the network (Redis) may answer later, and
 * the reader then waits for the answer before it reads on. The reader
 * cannot count on a store to withdraw a wait or a read when it goes, so
 * their callbacks hold a token that outlives the reader and is cleared
 * when the reader goes; its cancellable tells the store the answer is no
 * longer wanted.
 *
 * A run whose producer stopped before its end (its gateway instance died)
 * gives the frames it kept, then its one error frame, written here: 503,
 * `upstream_unavailable`, with the id after the last frame's. */

/* the longest Last-Event-ID worth reading: 20 digits hold any guint64 */
#define MAX_ID_DIGITS 20

typedef struct
{
  SymfonicRunReader *reader;
} Token;

struct _SymfonicRunReader
{
  SymfonicRunStore  *store;
  GCancellable      *cancellable;
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
  gboolean           reading;
  /* @pending is a read's answer that read_on() has not looked at */
  gboolean           fresh;
  /* the store said the run will have no more frames: its producer died */
  gboolean           abandoned;
  /* the store was told this reader follows the run */
  gboolean           following;
  Token             *token;
  SymfonicRunReaderOpened opened;
  gpointer           opened_data;
  SymfonicSseWriter *writer;
  GDestroyNotify     finished;
  gpointer           data;
};

static void read_on (SymfonicRunReader *self);

/* The run's first read succeeded: a reader came back, which a detached
 * run's clock hears of (symfonic_run_store_note_reader()). */
static void
follow (SymfonicRunReader *self)
{
  self->following = TRUE;
  symfonic_run_store_note_reader (self->store, self->run_id, self->principal_id, self->tenant_id, TRUE);
}

/* `{route_path}/{run_id}/stream`, with a run id the gateway could have
 * given (a UUID): anything else is a malformed request. */
char *
symfonic_run_reader_parse_run_id (const char *path,
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
                       "The path must be {path}/{run_id}/stream with the run id the gateway gave");
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
                           "Last-Event-ID must be the id of a frame of the run");
      return FALSE;
    }

  return TRUE;
}

/* What a read answered: the frames, or why there are none. A run whose
 * producer died has nothing more to give; any other failure ends the
 * reading. */
static gboolean
take_read (SymfonicRunReader  *self,
           GPtrArray          *frames,
           gboolean            ended,
           GError             *error,
           GError            **out_error)
{
  g_clear_pointer (&self->pending, g_ptr_array_unref);
  self->next = 0;
  if (frames == NULL && g_error_matches (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM_UNAVAILABLE))
    {
      g_debug ("Run %s: its producer stopped before its end", self->run_id);
      g_error_free (error);
      self->abandoned = TRUE;
      self->pending = g_ptr_array_new ();
      self->fresh = TRUE;
      return TRUE;
    }
  if (frames == NULL)
    {
      g_propagate_error (out_error, error);
      return FALSE;
    }
  self->pending = frames;
  self->ended = ended;
  self->fresh = TRUE;

  return TRUE;
}

/* Reads at once if the store can: %FALSE with %G_IO_ERROR_WOULD_BLOCK
 * when it must be asked asynchronously. */
static gboolean
read_frames (SymfonicRunReader  *self,
             GError            **error)
{
  GError *local_error = NULL;
  gboolean ended = FALSE;
  GPtrArray *frames = symfonic_run_store_try_read (self->store, self->run_id, self->principal_id, self->tenant_id,
                                                   self->seq, &ended, &local_error);

  if (frames == NULL && g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }

  return take_read (self, frames, ended, local_error, error);
}

static void read_cb (GObject      *object,
                     GAsyncResult *result,
                     gpointer      user_data);

static void
read_later (SymfonicRunReader *self)
{
  if (self->token == NULL)
    {
      self->token = g_rc_box_new0 (Token);
      self->token->reader = self;
    }
  self->reading = TRUE;
  symfonic_run_store_read_async (self->store, self->run_id, self->principal_id, self->tenant_id, self->seq,
                                 self->cancellable, read_cb, g_rc_box_acquire (self->token));
}

/* Checks the request: a malformed one is 400. What the run keeps is read
 * by symfonic_run_reader_open(). */
SymfonicRunReader *
symfonic_run_reader_new (SymfonicRunStore   *store,
                         SoupServerMessage  *message,
                         const char         *route_path,
                         SymfonicInvocation *invocation,
                         GError            **error)
{
  g_autofree char *run_id = NULL;
  guint64 after;

  run_id = symfonic_run_reader_parse_run_id (g_uri_get_path (soup_server_message_get_uri (message)), route_path, error);
  if (run_id == NULL || !parse_last_event_id (message, &after, error))
    return NULL;

  return symfonic_run_reader_new_for_run (store, run_id, after, invocation);
}

/* The frames of @run_id after the one of id @after, for the principal and
 * tenant of @invocation: a background response read again from the
 * sequence number its client names. */
SymfonicRunReader *
symfonic_run_reader_new_for_run (SymfonicRunStore    *store,
                                 const char          *run_id,
                                 guint64              after,
                                 SymfonicInvocation  *invocation)
{
  SymfonicRunReader *self;

  self = g_new0 (SymfonicRunReader, 1);
  self->store = g_object_ref (store);
  self->cancellable = g_cancellable_new ();
  self->run_id = g_strdup (run_id);
  self->principal_id = g_strdup (symfonic_invocation_get_principal_id (invocation));
  self->tenant_id = g_strdup (symfonic_invocation_get_tenant_id (invocation));
  self->seq = after;

  return self;
}

/* Reads what the run keeps, before any byte of the response: a
 * Last-Event-ID past the run's last frame is 400, a run that is not the
 * asker's (or none) 404, frames no longer kept 410. A store in the
 * process answers here; otherwise @opened is called with the answer,
 * unless the reader was freed first. */
SymfonicRunReaderOpen
symfonic_run_reader_open (SymfonicRunReader        *self,
                          SymfonicRunReaderOpened   opened,
                          gpointer                  data,
                          GError                  **error)
{
  g_autoptr(GError) local_error = NULL;

  if (read_frames (self, &local_error))
    {
      follow (self);
      return SYMFONIC_RUN_READER_READY;
    }
  if (!g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return SYMFONIC_RUN_READER_REFUSED;
    }

  self->opened = opened;
  self->opened_data = data;
  read_later (self);

  return SYMFONIC_RUN_READER_PENDING;
}

const char *
symfonic_run_reader_get_run_id (SymfonicRunReader *self)
{
  return self->run_id;
}

/* Whether the first read found the run ended with nothing after the
 * frame the reader named: it has every frame, the terminal included. */
gboolean
symfonic_run_reader_has_all (SymfonicRunReader *self)
{
  return self->ended && !self->abandoned && self->pending != NULL && self->pending->len == 0;
}

static void
wait_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  Token *token = user_data;
  SymfonicRunReader *self = token->reader;

  g_rc_box_release (token);
  /* an answer nobody waits for goes with its result */
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
  symfonic_run_store_wait_async (self->store, self->run_id, self->principal_id, self->tenant_id, self->seq,
                                 self->cancellable, wait_cb, g_rc_box_acquire (self->token));
}

static void
read_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  Token *token = user_data;
  SymfonicRunReader *self = token->reader;
  GError *error = NULL;
  g_autoptr(GError) failure = NULL;
  gboolean ended = FALSE;
  GPtrArray *frames;
  SymfonicRunReaderOpened opened;

  g_rc_box_release (token);
  if (self == NULL)
    return;
  frames = symfonic_run_store_read_finish (self->store, result, &ended, &error);

  self->reading = FALSE;
  opened = g_steal_pointer (&self->opened);
  if (opened != NULL)
    {
      g_autoptr(GError) refusal = NULL;

      /* the first read: the caller answers */
      if (take_read (self, frames, ended, error, &refusal))
        follow (self);
      opened (refusal, self->opened_data);
      return;
    }

  if (!take_read (self, frames, ended, error, &failure))
    {
      g_debug ("Run %s can no longer be read: %s", self->run_id, failure->message);
      symfonic_sse_writer_close (self->writer);
      return;
    }
  read_on (self);
}

/* The run's producer died before its end: the run has no terminal of its
 * own, so it gets one, as every reader of it does, with the same bytes. */
static void
write_abandoned (SymfonicRunReader *self)
{
  g_autoptr(SymfonicErrorFrame) frame = symfonic_error_frame_new (503, SYMFONIC_OPAQUE_DETAIL,
                                                                  symfonic_error_code_name (SYMFONIC_ERROR_UPSTREAM_UNAVAILABLE));
  GString *out = symfonic_sse_writer_begin_frame (self->writer);

  g_string_append_printf (out, "id: %" G_GUINT64_FORMAT "\nevent: error\ndata: ", self->seq + 1);
  symfonic_encoder_error_body (SYMFONIC_ROUTE_KIND_TYPED, frame, out);
  g_string_append (out, "\n\n");
  self->seq++;
  symfonic_sse_writer_close (self->writer);
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

  if (self->waiting || self->reading)
    return;

  for (;;)
    {
      if (queue_pending (self))
        return;
      /* the writer is full: writer_drained() comes back here */
      if (self->next < self->pending->len)
        return;
      if (self->abandoned)
        {
          write_abandoned (self);
          return;
        }
      /* the last read found nothing new: the run ended, or is to wait on */
      if (self->fresh && self->pending->len == 0)
        {
          self->fresh = FALSE;
          /* the run appends its terminal, then ends: a read between the
           * two queued the terminal as a frame like the others */
          if (self->ended)
            symfonic_sse_writer_close (self->writer);
          else
            wait_for_more (self);
          return;
        }
      self->fresh = FALSE;
      if (!read_frames (self, &error))
        {
          if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
            {
              read_later (self);
              return;
            }
          /* the run was forgotten or its frames went while the client
           * read: what it got is all it gets */
          g_debug ("Run %s can no longer be read: %s", self->run_id, error->message);
          symfonic_sse_writer_close (self->writer);
          return;
        }
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
  if (self->token == NULL)
    {
      self->token = g_rc_box_new0 (Token);
      self->token->reader = self;
    }
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
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  if (self->following)
    symfonic_run_store_note_reader (self->store, self->run_id, self->principal_id, self->tenant_id, FALSE);
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
