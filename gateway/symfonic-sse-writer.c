/* symfonic-sse-writer.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <sys/socket.h>

#include "symfonic-connection-private.h"
#include "symfonic-poller-private.h"
#include "symfonic-sse-writer-private.h"

/* libsoup writes the response head; the body is written here, on the
 * client's socket: libsoup spends three writes, signals and sources on
 * every chunk, which cost more than the frames. The frames of one
 * main-loop iteration are built straight into one buffer and leave as one
 * HTTP/1.1 chunk in one send(), from work the poller defers to the end of
 * the iteration, so everything one upstream read produced goes out
 * together. What the socket does not take waits for it to become writable
 * (through the poller, like the hang-up watch on the same descriptor). At
 * the end libsoup gets the message back with a complete, empty body: it
 * writes the last chunk after our bytes and keeps the connection for the
 * next request (HTTP/1.0 has no chunks: the frames go raw and libsoup
 * closes the connection).
 *
 * What was queued and not yet sent is what the client is behind by.
 * Beyond the declared bounds droppable frames (deltas) are shed; a frame
 * that may not be shed overflows, and the stream ends with its terminal,
 * which is always queued. The terminal carries the whole text (seed 002:
 * text_reconstruction='terminal-only'), and the next frame queued after a
 * gap is preceded by a comment, `: shed N`, which SSE clients ignore, so a
 * client can still tell that N frames are missing there. */

/* longest chunk-size line: 8 MiB and a terminal fit in 8 hex digits */
#define CHUNK_HEAD_MAX 16
/* sent bytes stay at the front of the buffer up to this much */
#define KEEP_ALLOCATED (64 * 1024)
/* an empty buffer larger than this is given back: a stream that waits
 * for its upstream holds almost nothing */
#define KEEP_IDLE 1024

/* Until libsoup wrote the head (wrote_headers_id is then 0) frames wait. */
typedef enum {
  WRITER_OPEN,
  /* the terminal is queued: what is left goes out, then libsoup ends */
  WRITER_CLOSING,
  /* the message is libsoup's again */
  WRITER_DONE,
} WriterState;

/* the frames queued in one iteration, up to an offset of the output */
typedef struct
{
  guint64 end;
  guint   frames;
} Chunk;

struct _SymfonicSseWriter
{
  SoupServerMessage                *message;
  SymfonicConnection               *connection;
  int                               fd;
  gboolean                          chunked;
  WriterState                       state;
  gulong                            wrote_headers_id;

  SymfonicPoller                   *poller;
  SymfonicWatch                    *watch;
  SymfonicDeferred                  flush;
  /* the stall deadline while bytes wait, then the close grace */
  SymfonicTimer                    *timer;
  gint64                            stall_us;
  gboolean                          stalled;

  /* [head, queued_end) is framed and unsent; [queued_end, len) holds the
   * frames of this iteration; @consumed bytes left before out->str */
  GString                          *out;
  gsize                             head;
  gsize                             queued_end;
  guint64                           consumed;
  gsize                             frame_start;
  guint                             pending_frames;

  /* chunks queued whose end was not sent yet */
  GArray                           *chunks;
  guint                             chunks_head;
  guint                             queued_frames;

  guint64                           frames;
  guint64                           shed;
  guint64                           payload_bytes;
  /* frames shed since the last one queued */
  guint64                           gap;

  gboolean                          first_delta_sent;

  /* over the high-water mark: drained() runs once below the low one */
  gboolean                          full;
  const SymfonicSseWriterCallbacks *callbacks;
  gpointer                          data;
};

static void flush (gpointer data);

static gsize
held_bytes (SymfonicSseWriter *self)
{
  return self->out->len - self->head;
}

static void
set_timer (SymfonicSseWriter *self,
           gint64             deadline)
{
  if (self->timer != NULL)
    symfonic_timer_set_deadline (self->timer, deadline);
}

/* Hands the message back to libsoup, which writes the last chunk and
 * finishes it. */
static void
finish_message (SymfonicSseWriter *self)
{
  self->state = WRITER_DONE;
  set_timer (self, -1);
  g_clear_pointer (&self->watch, symfonic_watch_remove);
  symfonic_poller_cancel_deferred (self->poller, &self->flush);
  soup_message_body_complete (soup_server_message_get_response_body (self->message));
  soup_server_message_unpause (self->message);
}

static void
client_gone (SymfonicSseWriter *self)
{
  if (self->state == WRITER_DONE)
    return;

  finish_message (self);
  self->callbacks->gone (self->data);
}

static void
forget_sent_chunks (SymfonicSseWriter *self)
{
  guint64 sent = self->consumed + self->head;

  while (self->chunks_head < self->chunks->len)
    {
      Chunk *chunk = &g_array_index (self->chunks, Chunk, self->chunks_head);

      if (chunk->end > sent)
        break;
      self->queued_frames -= chunk->frames;
      self->chunks_head++;
    }
  if (self->chunks_head == self->chunks->len)
    {
      g_array_set_size (self->chunks, 0);
      self->chunks_head = 0;
    }
}

/* Drops what was sent from the front of the buffer. */
static void
compact (SymfonicSseWriter *self)
{
  if (self->head == 0)
    return;
  if (self->head < self->out->len && (self->head < KEEP_ALLOCATED || self->head < self->out->len / 2))
    return;

  self->consumed += self->head;
  self->queued_end -= self->head;
  if (self->head == self->out->len && self->out->allocated_len > KEEP_IDLE)
    {
      g_string_free (self->out, TRUE);
      self->out = g_string_new (NULL);
    }
  else
    g_string_erase (self->out, 0, self->head);
  self->head = 0;
}

/* Wraps the frames of this iteration into one chunk. */
static void
seal_chunk (SymfonicSseWriter *self)
{
  gsize length = self->out->len - self->queued_end;
  Chunk chunk;

  if (length == 0)
    return;

  if (self->chunked)
    {
      char line[CHUNK_HEAD_MAX];
      int n = g_snprintf (line, sizeof line, "%" G_GSIZE_MODIFIER "x\r\n", length);

      g_string_insert_len (self->out, self->queued_end, line, n);
      g_string_append_len (self->out, "\r\n", 2);
    }

  chunk.end = self->consumed + self->out->len;
  chunk.frames = self->pending_frames;
  g_array_append_val (self->chunks, chunk);
  self->queued_frames += self->pending_frames;
  self->pending_frames = 0;
  self->queued_end = self->out->len;
}

/* Sends what is queued. Returns %FALSE if the client is gone. */
static gboolean
send_queued (SymfonicSseWriter *self)
{
  GIOCondition events = symfonic_watch_get_events (self->watch);
  gboolean waiting = (events & G_IO_OUT) != 0;
  gboolean progress = FALSE;

  while (self->head < self->queued_end)
    {
      gssize n = send (self->fd, self->out->str + self->head, self->queued_end - self->head,
                       MSG_NOSIGNAL | MSG_DONTWAIT);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        break;
      if (n < 0)
        {
          g_debug ("Writing to a client failed: %s", g_strerror (errno));
          return FALSE;
        }
      self->head += n;
      progress = TRUE;
    }

  forget_sent_chunks (self);
  if (self->head < self->queued_end)
    {
      if (!waiting)
        symfonic_watch_set_events (self->watch, events | G_IO_OUT);
      /* the client has the stall timeout to take a byte; once stalled,
       * the timer holds its grace instead */
      if (!self->stalled && (progress || !waiting))
        set_timer (self, g_get_monotonic_time () + self->stall_us);
    }
  else if (waiting)
    {
      symfonic_watch_set_events (self->watch, events & ~G_IO_OUT);
      if (!self->stalled)
        set_timer (self, -1);
    }
  compact (self);

  return TRUE;
}

static void
check_drained (SymfonicSseWriter *self)
{
  if (self->full &&
      self->queued_frames + self->pending_frames <= SYMFONIC_SSE_LOW_WATER_FRAMES &&
      held_bytes (self) <= SYMFONIC_SSE_LOW_WATER_BYTES)
    {
      self->full = FALSE;
      self->callbacks->drained (self->data);
    }
}

static void
flush (gpointer data)
{
  SymfonicSseWriter *self = data;

  /* until libsoup wrote the head, it holds the connection */
  if (self->wrote_headers_id != 0 || self->state == WRITER_DONE)
    return;

  seal_chunk (self);
  if (!send_queued (self))
    {
      client_gone (self);
      return;
    }

  if (self->state == WRITER_CLOSING && held_bytes (self) == 0)
    {
      finish_message (self);
      return;
    }
  check_drained (self);
}

static void
on_wrote_headers (SoupServerMessage *message,
                  gpointer           user_data)
{
  SymfonicSseWriter *self = user_data;

  g_clear_signal_handler (&self->wrote_headers_id, self->message);
  if (self->state != WRITER_DONE)
    symfonic_poller_defer (self->poller, &self->flush);
}

/* The client's socket: writable again, hung up, or sent the next request. */
static void
on_socket (gpointer     data,
           GIOCondition condition)
{
  SymfonicSseWriter *self = data;

  if (condition & (G_IO_IN | G_IO_HUP | G_IO_ERR))
    {
      switch (symfonic_connection_peek_peer (self->fd))
        {
        case SYMFONIC_PEER_LEFT:
          client_gone (self);
          return;
        case SYMFONIC_PEER_SENT:
          /* a pipelined request: the client is alive, and libsoup reads
           * it after this response */
          symfonic_watch_set_events (self->watch, symfonic_watch_get_events (self->watch) & ~G_IO_IN);
          break;
        case SYMFONIC_PEER_QUIET:
          break;
        }
    }

  if (condition & G_IO_OUT)
    flush (self);
}

static void
on_timer (gpointer data)
{
  SymfonicSseWriter *self = data;

  if (self->stalled)
    {
      /* the grace is over: the connection goes, with what it did not take */
      g_debug ("Closing a stalled client's connection");
      if (self->connection != NULL)
        symfonic_connection_expire (self->connection);
      else
        shutdown (self->fd, SHUT_RDWR);
      client_gone (self);
      return;
    }

  self->stalled = TRUE;
  set_timer (self, g_get_monotonic_time () + SYMFONIC_SSE_CLOSE_GRACE_US);
  self->callbacks->stalled (self->data);
}

SymfonicSseWriter *
symfonic_sse_writer_new (SoupServerMessage                *message,
                         guint                             stall_seconds,
                         const SymfonicSseWriterCallbacks *callbacks,
                         gpointer                          data)
{
  SymfonicSseWriter *self;
  GSocket *socket = symfonic_connection_get_message_socket (message);
  SoupMessageHeaders *headers = soup_server_message_get_response_headers (message);

  g_return_val_if_fail (socket != NULL, NULL);

  self = g_new0 (SymfonicSseWriter, 1);
  self->callbacks = callbacks;
  self->data = data;
  self->message = g_object_ref (message);
  self->connection = symfonic_connection_for_message (message);
  self->fd = g_socket_get_fd (socket);
  self->chunked = soup_message_headers_get_encoding (headers) == SOUP_ENCODING_CHUNKED;
  self->stall_us = (gint64) stall_seconds * G_USEC_PER_SEC;
  self->out = g_string_sized_new (4096);
  self->chunks = g_array_new (FALSE, FALSE, sizeof (Chunk));
  self->poller = symfonic_poller_ref (symfonic_poller_get_thread_default ());
  self->flush.func = flush;
  self->flush.data = self;
  self->watch = symfonic_poller_watch (self->poller, self->fd, G_IO_IN, on_socket, self);
  if (self->stall_us > 0)
    self->timer = symfonic_poller_timer (self->poller, on_timer, self);
  self->wrote_headers_id = g_signal_connect (message, "wrote-headers", G_CALLBACK (on_wrote_headers), self);
  soup_message_body_set_accumulate (soup_server_message_get_response_body (message), FALSE);

  return self;
}

/* Stops touching the message and the socket: libsoup finished it. */
void
symfonic_sse_writer_detach (SymfonicSseWriter *self)
{
  self->state = WRITER_DONE;
  g_clear_pointer (&self->watch, symfonic_watch_remove);
  g_clear_pointer (&self->timer, symfonic_timer_remove);
  symfonic_poller_cancel_deferred (self->poller, &self->flush);
  if (self->message != NULL)
    {
      g_clear_signal_handler (&self->wrote_headers_id, self->message);
      g_clear_object (&self->message);
    }
}

void
symfonic_sse_writer_free (SymfonicSseWriter *self)
{
  symfonic_sse_writer_detach (self);
  symfonic_poller_unref (self->poller);
  g_string_free (self->out, TRUE);
  g_array_unref (self->chunks);
  g_free (self);
}

/* Returns the buffer to append one whole frame to. */
GString *
symfonic_sse_writer_begin_frame (SymfonicSseWriter *self)
{
  self->frame_start = self->out->len;
  return self->out;
}

/* Frames of this iteration have not met the socket yet, so only those
 * queued before count towards the frame bound; bytes count all. */
static gboolean
over_bound (SymfonicSseWriter *self)
{
  return self->queued_frames >= SYMFONIC_SSE_MAX_FRAMES ||
         held_bytes (self) > SYMFONIC_SSE_MAX_BYTES;
}

static void
queue_frame (SymfonicSseWriter *self)
{
  if (self->gap > 0)
    {
      char mark[32];
      int n = g_snprintf (mark, sizeof mark, ": shed %" G_GUINT64_FORMAT "\n", self->gap);

      g_string_insert_len (self->out, self->frame_start, mark, n);
      self->gap = 0;
    }
  self->payload_bytes += self->out->len - self->frame_start;
  self->pending_frames++;
  self->frames++;
  symfonic_poller_defer (self->poller, &self->flush);
}

/* Queues the frame appended since begin_frame(), or takes it back. */
SymfonicSseFrameResult
symfonic_sse_writer_end_frame (SymfonicSseWriter *self,
                               gboolean           droppable)
{
  if (self->state != WRITER_OPEN)
    {
      g_string_truncate (self->out, self->frame_start);
      return SYMFONIC_SSE_FRAME_SHED;
    }

  if (over_bound (self))
    {
      g_string_truncate (self->out, self->frame_start);
      if (!droppable)
        return SYMFONIC_SSE_FRAME_OVERFLOW;
      self->shed++;
      self->gap++;
      return SYMFONIC_SSE_FRAME_SHED;
    }

  queue_frame (self);

  /* The first delta leaves at once, with what was queued before it, rather
   * than after the rest of its upstream read went through the stages: the
   * time to the first delta is what a reader waits for. A failed send is
   * left to the deferred flush, which ends the stream outside this push. */
  if (droppable && !self->first_delta_sent && self->wrote_headers_id == 0)
    {
      self->first_delta_sent = TRUE;
      seal_chunk (self);
      send_queued (self);
    }

  return SYMFONIC_SSE_FRAME_QUEUED;
}

/* Whether the frames held for the client passed the high-water mark;
 * once they did, the drained callback runs when they are back below the
 * low-water mark. */
gboolean
symfonic_sse_writer_is_full (SymfonicSseWriter *self)
{
  if (!self->full &&
      (self->queued_frames + self->pending_frames >= SYMFONIC_SSE_HIGH_WATER_FRAMES ||
       held_bytes (self) >= SYMFONIC_SSE_HIGH_WATER_BYTES))
    self->full = TRUE;

  return self->full;
}

/* Queues the terminal, the frame appended since begin_frame(), whatever
 * the bounds (its room is reserved), and ends the body after it. */
void
symfonic_sse_writer_close (SymfonicSseWriter *self)
{
  if (self->state != WRITER_OPEN)
    {
      g_string_truncate (self->out, self->frame_start);
      return;
    }

  queue_frame (self);
  self->state = WRITER_CLOSING;
}

guint64
symfonic_sse_writer_get_frames (SymfonicSseWriter *self)
{
  return self->frames;
}

guint64
symfonic_sse_writer_get_shed (SymfonicSseWriter *self)
{
  return self->shed;
}

guint64
symfonic_sse_writer_get_bytes (SymfonicSseWriter *self)
{
  return self->payload_bytes;
}
