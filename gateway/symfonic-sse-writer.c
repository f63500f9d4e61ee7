/* symfonic-sse-writer.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-sse-writer-private.h"

/* Frames are built straight into a pending buffer and handed to libsoup
 * once per main-loop iteration, as one chunk: libsoup spends three writes
 * on every chunk, so a chunk per frame would cost more than the frames.
 *
 * Back-pressure comes from libsoup's `wrote-body-data`: what was appended
 * but not yet written is still queued for the client. Beyond the declared
 * bounds droppable frames (deltas) are shed; everything else, and the
 * terminal above all, is always queued. The terminal carries the whole
 * text (seed 002: text_reconstruction='terminal-only'), and the next frame
 * queued after a gap is preceded by a comment, `: shed N`, which SSE
 * clients ignore, so a client can still tell that N frames are missing
 * there. */

typedef struct
{
  guint64 end;
  guint   frames;
} Chunk;

struct _SymfonicSseWriter
{
  SoupServerMessage *message;
  GMainContext      *context;
  GSource           *flush_source;

  GString           *pending;
  guint              pending_frames;
  gsize              frame_start;

  /* chunks handed to libsoup whose end was not written yet */
  GArray            *chunks;
  guint              chunks_head;
  guint64            appended;
  guint64            written;
  guint              queued_frames;

  guint64            frames;
  guint64            shed;
  /* frames shed since the last one queued */
  guint64            gap;
  gulong             wrote_id;
  gboolean           closed;

  /* over the high-water mark: drained() runs once below the low one */
  gboolean           full;
  SymfonicSseWriterDrainedFunc drained;
  gpointer           drained_data;
};

static void
on_wrote_body_data (SoupServerMessage *message,
                    guint              size,
                    gpointer           user_data)
{
  SymfonicSseWriter *self = user_data;

  self->written += size;
  while (self->chunks_head < self->chunks->len)
    {
      Chunk *chunk = &g_array_index (self->chunks, Chunk, self->chunks_head);

      if (chunk->end > self->written)
        break;
      self->queued_frames -= chunk->frames;
      self->chunks_head++;
    }
  if (self->chunks_head == self->chunks->len)
    {
      g_array_set_size (self->chunks, 0);
      self->chunks_head = 0;
    }

  if (self->full &&
      self->queued_frames + self->pending_frames <= SYMFONIC_SSE_LOW_WATER_FRAMES &&
      self->appended - self->written + self->pending->len <= SYMFONIC_SSE_LOW_WATER_BYTES)
    {
      self->full = FALSE;
      self->drained (self->drained_data);
    }
}

static void
flush (SymfonicSseWriter *self)
{
  SoupMessageBody *body;
  Chunk chunk;
  gsize length;

  if (self->pending->len == 0 || self->message == NULL)
    return;

  length = self->pending->len;
  body = soup_server_message_get_response_body (self->message);
  soup_message_body_append (body, SOUP_MEMORY_TAKE, g_string_free (self->pending, FALSE), length);
  self->pending = g_string_sized_new (4096);

  self->appended += length;
  chunk.end = self->appended;
  chunk.frames = self->pending_frames;
  g_array_append_val (self->chunks, chunk);
  self->queued_frames += self->pending_frames;
  self->pending_frames = 0;

  soup_server_message_unpause (self->message);
}

static gboolean
flush_cb (gpointer user_data)
{
  SymfonicSseWriter *self = user_data;

  g_clear_pointer (&self->flush_source, g_source_unref);
  flush (self);

  return G_SOURCE_REMOVE;
}

SymfonicSseWriter *
symfonic_sse_writer_new (SoupServerMessage            *message,
                         GMainContext                 *context,
                         SymfonicSseWriterDrainedFunc  drained,
                         gpointer                      drained_data)
{
  SymfonicSseWriter *self = g_new0 (SymfonicSseWriter, 1);

  self->drained = drained;
  self->drained_data = drained_data;
  self->message = g_object_ref (message);
  self->context = g_main_context_ref (context);
  self->pending = g_string_sized_new (4096);
  self->chunks = g_array_new (FALSE, FALSE, sizeof (Chunk));
  self->wrote_id = g_signal_connect (message, "wrote-body-data", G_CALLBACK (on_wrote_body_data), self);
  soup_message_body_set_accumulate (soup_server_message_get_response_body (message), FALSE);

  return self;
}

/* Stops touching the message: it finished, or the client went away. */
void
symfonic_sse_writer_detach (SymfonicSseWriter *self)
{
  if (self->flush_source != NULL)
    {
      g_source_destroy (self->flush_source);
      g_clear_pointer (&self->flush_source, g_source_unref);
    }
  if (self->message != NULL)
    {
      g_clear_signal_handler (&self->wrote_id, self->message);
      g_clear_object (&self->message);
    }
}

void
symfonic_sse_writer_free (SymfonicSseWriter *self)
{
  symfonic_sse_writer_detach (self);
  g_string_free (self->pending, TRUE);
  g_array_unref (self->chunks);
  g_main_context_unref (self->context);
  g_free (self);
}

/* Returns the buffer to append one whole frame to. */
GString *
symfonic_sse_writer_begin_frame (SymfonicSseWriter *self)
{
  self->frame_start = self->pending->len;
  return self->pending;
}

/* Queues the frame appended since begin_frame(), or sheds it. Returns
 * whether it was queued. */
gboolean
symfonic_sse_writer_end_frame (SymfonicSseWriter *self,
                               gboolean           droppable)
{
  gsize queued_bytes = self->appended - self->written + self->pending->len;

  /* Frames of this iteration have not met the socket yet, so only those
   * libsoup still holds count towards the frame bound; bytes count all. */
  if (self->closed || self->message == NULL ||
      (droppable && (self->queued_frames >= SYMFONIC_SSE_MAX_FRAMES ||
                     queued_bytes > SYMFONIC_SSE_MAX_BYTES)))
    {
      g_string_truncate (self->pending, self->frame_start);
      if (!self->closed)
        {
          self->shed++;
          self->gap++;
        }
      return FALSE;
    }

  if (self->gap > 0)
    {
      char mark[32];

      g_snprintf (mark, sizeof mark, ": shed %" G_GUINT64_FORMAT "\n", self->gap);
      g_string_insert (self->pending, self->frame_start, mark);
      self->gap = 0;
    }
  self->pending_frames++;
  self->frames++;

  if (self->flush_source == NULL)
    {
      self->flush_source = g_idle_source_new ();
      g_source_set_priority (self->flush_source, G_PRIORITY_DEFAULT);
      g_source_set_callback (self->flush_source, flush_cb, self, NULL);
      g_source_set_static_name (self->flush_source, "[symfonic] sse flush");
      g_source_attach (self->flush_source, self->context);
    }

  return TRUE;
}

/* Whether the frames held for the client passed the high-water mark;
 * once they did, the drained function runs when they are back below the
 * low-water mark. */
gboolean
symfonic_sse_writer_is_full (SymfonicSseWriter *self)
{
  if (!self->full &&
      (self->queued_frames + self->pending_frames >= SYMFONIC_SSE_HIGH_WATER_FRAMES ||
       self->appended - self->written + self->pending->len >= SYMFONIC_SSE_HIGH_WATER_BYTES))
    self->full = TRUE;

  return self->full;
}

/* Writes what is pending and ends the body: the terminal is never held
 * back for the next iteration. */
void
symfonic_sse_writer_close (SymfonicSseWriter *self)
{
  if (self->closed)
    return;

  self->closed = TRUE;
  if (self->flush_source != NULL)
    {
      g_source_destroy (self->flush_source);
      g_clear_pointer (&self->flush_source, g_source_unref);
    }
  flush (self);
  if (self->message != NULL)
    {
      soup_message_body_complete (soup_server_message_get_response_body (self->message));
      soup_server_message_unpause (self->message);
    }
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
  return self->appended;
}
