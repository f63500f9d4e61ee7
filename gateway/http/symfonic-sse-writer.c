/* symfonic-sse-writer.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/sockios.h>

#include "symfonic-connection-private.h"
#include "symfonic-json-private.h"
#include "symfonic-poller-private.h"
#include "symfonic-scratch-private.h"
#include "symfonic-sse-writer-private.h"
#include "symfonic-string-private.h"

/* A streaming response is written here, head and body, on the client's
 * connection, which is taken from libsoup once the stream is admitted:
 * libsoup spends three writes, signals and sources on every chunk, which
 * cost more than the frames, and it keeps a 16 KiB head buffer, the
 * message and a paused I/O source for every response until it finishes,
 * so that each held stream would cost a source in the worker's main
 * context and a multiple of its own memory. The frames of one
 * main-loop iteration are built straight into one buffer and leave as one
 * HTTP/1.1 chunk in one send(), from work the poller defers to the end of
 * the iteration, so everything one upstream read produced goes out
 * together. What the socket does not take waits for it to become writable
 * (through the poller, like the hang-up watch on the same descriptor). At
 * the end the last chunk goes out, and a connection that may be kept
 * alive goes back to the worker's server for the next request; any other
 * is closed (HTTP/1.0 has no chunks: the frames go raw and the end of the
 * connection ends them).
 *
 * What was queued and not yet sent is what the client is behind by.
 * Beyond the declared bounds droppable frames (deltas) are shed; a frame
 * that may not be shed overflows, and the stream ends with its terminal,
 * which is always queued. The terminal carries the whole text (seed 002:
 * text_reconstruction='terminal-only'), and the next frame queued after a
 * gap is preceded by a comment, `: shed N`, which SSE clients ignore, so a
 * client can still tell that N frames are missing there.
 *
 * A client is stalled when it took no byte for the stall timeout while
 * bytes waited for its socket: what counts is what it took, the bytes
 * sent less what the kernel still holds unacknowledged, read once per
 * check (a kernel buffer of megabytes drains for a long while before the
 * socket is writable again). A stalled client's frames that did not start
 * to go out are dropped, so that what it gets ends at a frame boundary and
 * its owner's error frame comes right after; the client then has the close
 * grace, renewed while it takes bytes, to read on before its connection is
 * closed.
 *
 * A stream quiet for the route's heartbeat gets a `: keepalive` comment,
 * which clients ignore and proxies take as life. It is appended by a
 * timer, which runs between two whole frames, never inside one; the
 * deadline moves when a chunk is sealed, once per iteration that queued
 * bytes, and the timer heap only looks at it when the old one is due. */

/* longest chunk-size line: 8 MiB and a terminal fit in 8 hex digits */
#define CHUNK_HEAD_MAX 16
/* sent bytes stay at the front of the buffer up to this much */
#define KEEP_ALLOCATED (64 * 1024)

#define LAST_CHUNK "0\r\n\r\n"
#define KEEPALIVE ": keepalive\n\n"

typedef enum {
  WRITER_OPEN,
  /* the terminal and the end of the body are queued: what is left goes
   * out, then the connection is let go */
  WRITER_CLOSING,
  /* the connection was handed back or closed */
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
  /* owned while the writer holds the connection */
  SymfonicConnection               *connection;
  int                               fd;
  gboolean                          chunked;
  /* the request and the response allow a next request on the connection */
  gboolean                          keepalive;
  WriterState                       state;

  SymfonicPoller                   *poller;
  SymfonicWatch                    *watch;
  SymfonicDeferred                  flush;
  /* the stall check while bytes wait, then the close grace */
  SymfonicTimer                    *timer;
  gint64                            stall_us;
  gboolean                          stalled;
  /* what the client had taken at the last check */
  guint64                           taken;
  SymfonicTimer                    *heartbeat;
  gint64                            heartbeat_us;

  /* [head, queued_end) is framed and unsent; [queued_end, len) holds the
   * frames of this iteration; @consumed bytes left before out->str */
  GString                          *out;
  gsize                             head;
  gsize                             queued_end;
  guint64                           consumed;
  gsize                             frame_start;
  guint                             pending_frames;

  /* chunks queued whose end was not sent yet (the head is one) */
  GArray                           *chunks;
  guint                             chunks_head;
  guint                             queued_frames;
  /* where the last chunk that went out whole ended */
  guint64                           sent_boundary;
  /* where the last chunk, with the terminal, starts; once it starts to
   * go out, it is the stream's end */
  guint64                           terminal_start;
  gboolean                          terminal_sent;

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

/* What the client took of the bytes sent: those the kernel no longer
 * holds for it. */
static guint64
taken_bytes (SymfonicSseWriter *self)
{
  int unacknowledged = 0;

  if (ioctl (self->fd, SIOCOUTQ, &unacknowledged) < 0)
    unacknowledged = 0;

  return self->consumed + self->head - (guint64) MAX (unacknowledged, 0);
}

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

/* The next keepalive is due one heartbeat after the latest bytes. */
static void
push_heartbeat (SymfonicSseWriter *self)
{
  if (self->heartbeat != NULL)
    symfonic_timer_set_deadline (self->heartbeat, g_get_monotonic_time () + self->heartbeat_us);
}

/* Lets the connection go: back to the server for the next request if
 * @reuse, else closed. Its descriptor leaves the poller first, as it may
 * be closed and reused at once. */
static void
release_connection (SymfonicSseWriter *self,
                    gboolean           reuse)
{
  g_autoptr(SymfonicConnection) connection = g_steal_pointer (&self->connection);

  self->state = WRITER_DONE;
  set_timer (self, -1);
  if (self->heartbeat != NULL)
    symfonic_timer_set_deadline (self->heartbeat, -1);
  g_clear_pointer (&self->watch, symfonic_watch_remove);
  symfonic_poller_cancel_deferred (self->poller, &self->flush);
  if (connection == NULL)
    return;
  if (reuse)
    symfonic_connection_hand_back (connection);
  else
    g_io_stream_close (G_IO_STREAM (connection), NULL, NULL);
}

/* The last thing the writer does: its owner may free it from finished(). */
static void
finish (SymfonicSseWriter *self,
        gboolean           reuse)
{
  if (self->state == WRITER_DONE)
    return;

  release_connection (self, reuse);
  self->callbacks->finished (self->data);
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
      self->sent_boundary = chunk->end;
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
  g_string_erase (self->out, 0, self->head);
  self->head = 0;
}

/* At the end of an iteration, not after the sends within one (the first
 * delta, a full batch): the frames still to come in the iteration would
 * need a large buffer again. */
static void
give_back_buffer (SymfonicSseWriter *self)
{
  /* a stream that waits for its upstream holds almost nothing, and what
   * it gives back is what its thread keeps for the next frames */
  if (self->out->len == 0 && self->out->allocated_len > SYMFONIC_SPARE_BUFFER_MIN)
    {
      symfonic_spare_buffer_give (self->out);
      self->out = g_string_new (NULL);
    }
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

  push_heartbeat (self);

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

  while (self->head < self->queued_end)
    {
      gsize end = self->queued_end;
      gssize n;

      /* the owner learns that the terminal goes out before the client can
       * see a byte of it */
      if (self->state == WRITER_CLOSING && !self->terminal_sent)
        {
          if (self->consumed + self->head < self->terminal_start)
            end = self->terminal_start - self->consumed;
          else
            {
              self->terminal_sent = TRUE;
              if (self->callbacks->ending != NULL)
                self->callbacks->ending (self->data);
            }
        }
      n = send (self->fd, self->out->str + self->head, end - self->head, MSG_NOSIGNAL | MSG_DONTWAIT);

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
    }

  forget_sent_chunks (self);
  if (self->head < self->queued_end)
    {
      /* from here the client has the stall timeout to take a byte; once
       * stalled, the timer holds its grace instead */
      if (!waiting)
        {
          symfonic_watch_set_events (self->watch, events | G_IO_OUT);
          if (!self->stalled && self->timer != NULL)
            {
              self->taken = taken_bytes (self);
              set_timer (self, g_get_monotonic_time () + self->stall_us);
            }
        }
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

  if (self->state == WRITER_DONE)
    return;

  seal_chunk (self);
  if (!send_queued (self))
    {
      finish (self, FALSE);
      return;
    }
  give_back_buffer (self);

  if (self->state == WRITER_CLOSING && held_bytes (self) == 0)
    {
      finish (self, self->keepalive && !self->stalled);
      return;
    }
  check_drained (self);
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
          finish (self, FALSE);
          return;
        case SYMFONIC_PEER_SENT:
          /* a pipelined request: the client is alive, and the server
           * reads it once the connection is handed back */
          symfonic_watch_set_events (self->watch, symfonic_watch_get_events (self->watch) & ~G_IO_IN);
          break;
        case SYMFONIC_PEER_QUIET:
          break;
        }
    }

  if (condition & G_IO_OUT)
    flush (self);
}

/* Drops what a stalled client did not start to take: the frames after the
 * chunk on its way out, unless the terminal started to go out. Returns
 * whether the body's end went with them, the writer then open for a
 * terminal. */
static gboolean
drop_unsent (SymfonicSseWriter *self)
{
  guint64 sent = self->consumed + self->head;
  guint kept = self->chunks_head;
  gsize keep = self->head;

  if (self->terminal_sent)
    return FALSE;
  /* the response head goes out whole, like any chunk */
  if (kept < self->chunks->len && (sent > self->sent_boundary || sent == 0))
    {
      keep = g_array_index (self->chunks, Chunk, kept).end - self->consumed;
      kept++;
    }

  g_array_set_size (self->chunks, kept);
  self->queued_frames = kept > self->chunks_head ? g_array_index (self->chunks, Chunk, self->chunks_head).frames : 0;
  self->pending_frames = 0;
  self->gap = 0;
  g_string_truncate (self->out, keep);
  self->queued_end = keep;
  self->frame_start = keep;
  self->state = WRITER_OPEN;

  return TRUE;
}

static void
on_timer (gpointer data)
{
  SymfonicSseWriter *self = data;
  guint64 taken = taken_bytes (self);

  if (taken > self->taken)
    {
      self->taken = taken;
      set_timer (self, g_get_monotonic_time () + (self->stalled ? SYMFONIC_SSE_CLOSE_GRACE_US : self->stall_us));
      return;
    }

  if (self->stalled)
    {
      /* the client took nothing in its grace: the connection goes */
      g_debug ("Closing a stalled client's connection");
      finish (self, FALSE);
      return;
    }

  self->stalled = TRUE;
  set_timer (self, g_get_monotonic_time () + SYMFONIC_SSE_CLOSE_GRACE_US);
  if (drop_unsent (self))
    self->callbacks->stalled (self->data);
}

static void
on_heartbeat (gpointer data)
{
  SymfonicSseWriter *self = data;

  if (self->state != WRITER_OPEN)
    return;
  /* a client with bytes still to take is not waiting on a quiet stream */
  if (held_bytes (self) > 0)
    {
      push_heartbeat (self);
      return;
    }

  g_string_append_len (self->out, KEEPALIVE, strlen (KEEPALIVE));
  symfonic_poller_defer (self->poller, &self->flush);
}

/* The status line and the headers the exchange set, as libsoup writes
 * them (it set Date and Server when the request head came in). */
static void
append_head (GString           *out,
             SoupServerMessage *message)
{
  const char *reason = soup_server_message_get_reason_phrase (message);
  SoupMessageHeadersIter iter;
  const char *name, *value;

  /* the head of every stream: appended, not formatted */
  symfonic_string_append_literal (out, "HTTP/1.");
  g_string_append_c (out, soup_server_message_get_http_version (message) == SOUP_HTTP_1_0 ? '0' : '1');
  g_string_append_c (out, ' ');
  symfonic_string_commit (out, symfonic_json_write_uint (symfonic_string_reserve (out, SYMFONIC_JSON_UINT_MAX),
                                                         soup_server_message_get_status (message)));
  g_string_append_c (out, ' ');
  if (reason != NULL)
    symfonic_string_append_len (out, reason, strlen (reason));
  symfonic_string_append_len (out, "\r\n", 2);
  soup_message_headers_iter_init (&iter, soup_server_message_get_response_headers (message));
  while (soup_message_headers_iter_next (&iter, &name, &value))
    {
      symfonic_string_append_len (out, name, strlen (name));
      symfonic_string_append_len (out, ": ", 2);
      symfonic_string_append_len (out, value, strlen (value));
      symfonic_string_append_len (out, "\r\n", 2);
    }
  symfonic_string_append_len (out, "\r\n", 2);
}

/* An HTTP/1.1 connection is kept unless either side says close (HTTP/1.0
 * streams end with the connection). */
static gboolean
asks_to_close (SoupMessageHeaders *headers)
{
  return soup_message_headers_header_contains (headers, "Connection", "close");
}

/* Takes the connection of @message, whose request was read whole and
 * whose response nothing was written of yet, from libsoup, and queues the
 * response head set on it. libsoup emits no finished for the message:
 * @callbacks' finished() says when the writer is done. @watch, if not
 * %NULL, is the thread's watch on the connection's descriptor, which the
 * writer takes over. */
SymfonicSseWriter *
symfonic_sse_writer_new (SoupServerMessage                *message,
                         SymfonicWatch                    *watch,
                         guint                             stall_seconds,
                         guint                             heartbeat_seconds,
                         const SymfonicSseWriterCallbacks *callbacks,
                         gpointer                          data)
{
  SymfonicSseWriter *self;
  SymfonicConnection *connection = symfonic_connection_for_message (message);
  GSocket *socket = symfonic_connection_get_message_socket (message);
  SoupMessageHeaders *headers = soup_server_message_get_response_headers (message);
  g_autoptr(GIOStream) stolen = NULL;
  Chunk head_chunk = { 0, 0 };

  if (G_UNLIKELY (connection == NULL || socket == NULL))
    {
      symfonic_watch_remove (watch);
      g_return_val_if_reached (NULL);
    }

  self = g_new0 (SymfonicSseWriter, 1);
  self->callbacks = callbacks;
  self->data = data;
  self->connection = g_object_ref (connection);
  self->fd = g_socket_get_fd (socket);
  self->chunked = soup_message_headers_get_encoding (headers) == SOUP_ENCODING_CHUNKED;
  self->keepalive = self->chunked && !asks_to_close (soup_server_message_get_request_headers (message)) &&
                    !asks_to_close (headers);
  self->stall_us = (gint64) stall_seconds * G_USEC_PER_SEC;
  self->out = symfonic_spare_buffer_new (1024);
  append_head (self->out, message);
  self->queued_end = self->out->len;
  self->chunks = g_array_new (FALSE, FALSE, sizeof (Chunk));
  head_chunk.end = self->out->len;
  g_array_append_val (self->chunks, head_chunk);
  self->poller = symfonic_poller_ref (symfonic_poller_get_thread_default ());
  self->flush.func = flush;
  self->flush.data = self;
  if (watch != NULL)
    {
      self->watch = watch;
      symfonic_watch_set_func (watch, on_socket, self);
      symfonic_watch_set_events (watch, G_IO_IN);
    }
  else
    self->watch = symfonic_poller_watch (self->poller, self->fd, G_IO_IN, on_socket, self);
  if (self->stall_us > 0)
    self->timer = symfonic_poller_timer (self->poller, on_timer, self);
  self->heartbeat_us = (gint64) heartbeat_seconds * G_USEC_PER_SEC;
  if (self->heartbeat_us > 0)
    self->heartbeat = symfonic_poller_timer (self->poller, on_heartbeat, self);
  push_heartbeat (self);

  /* libsoup's wrapper of the connection does not close it when it goes */
  stolen = soup_server_message_steal_connection (message);
  /* the head goes out now, before the upstream produced anything */
  symfonic_poller_defer (self->poller, &self->flush);

  return self;
}

/* Closes a connection the writer still holds. */
void
symfonic_sse_writer_free (SymfonicSseWriter *self)
{
  release_connection (self, FALSE);
  g_clear_pointer (&self->timer, symfonic_timer_remove);
  g_clear_pointer (&self->heartbeat, symfonic_timer_remove);
  symfonic_poller_unref (self->poller);
  symfonic_spare_buffer_give (self->out);
  g_array_unref (self->chunks);
  g_free (self);
}

/* Returns the buffer to append one whole frame to. */
GString *
symfonic_sse_writer_begin_frame (SymfonicSseWriter *self)
{
  /* the first frame of an iteration may be one of many */
  if (G_UNLIKELY (self->out->len == 0 && self->out->allocated_len < SYMFONIC_SPARE_BUFFER_MIN))
    symfonic_spare_buffer_take (&self->out);
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
symfonic_sse_writer_end_frame (SymfonicSseWriter     *self,
                               SymfonicSseFrameFlags  flags)
{
  gboolean droppable = (flags & SYMFONIC_SSE_FRAME_DROPPABLE) != 0;

  if (self->state != WRITER_OPEN || self->stalled)
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
   * time to the first delta is what a reader waits for (and the owner lets
   * other work go before that rest). So do the frames of an iteration that
   * reach the high-water mark: the source is then told to wait only by a
   * client that is behind, not by a socket not yet tried. A failed send is
   * left to the deferred flush, which ends the stream outside this push. */
  if ((flags & SYMFONIC_SSE_FRAME_DELTA) && !self->first_delta_sent)
    {
      self->first_delta_sent = TRUE;
      seal_chunk (self);
      send_queued (self);
      return SYMFONIC_SSE_FRAME_SENT;
    }
  if (self->pending_frames >= SYMFONIC_SSE_HIGH_WATER_FRAMES ||
      self->out->len - self->queued_end >= SYMFONIC_SSE_HIGH_WATER_BYTES)
    {
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

/* Queues the terminal, the frame appended since begin_frame() if any,
 * whatever the bounds (its room is reserved), and the end of the body
 * after it. */
void
symfonic_sse_writer_close (SymfonicSseWriter *self)
{
  if (self->state != WRITER_OPEN)
    {
      g_string_truncate (self->out, self->frame_start);
      return;
    }

  if (self->out->len > self->frame_start)
    queue_frame (self);
  else
    symfonic_poller_defer (self->poller, &self->flush);
  self->terminal_start = self->consumed + self->queued_end;
  seal_chunk (self);
  if (self->chunked)
    {
      g_string_append_len (self->out, LAST_CHUNK, strlen (LAST_CHUNK));
      self->queued_end = self->out->len;
    }
  self->state = WRITER_CLOSING;
}

/* Whether the client was found stalled. */
gboolean
symfonic_sse_writer_is_stalled (SymfonicSseWriter *self)
{
  return self->stalled;
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
