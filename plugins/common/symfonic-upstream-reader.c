/* symfonic-upstream-reader.c: one event stream read from an HTTP upstream
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>

#include "symfonic-upstream-reader.h"

/* The reading every HTTP source does alike: bytes from the worker's read
 * buffer into the SSE parser, frames to the source, events to the stream
 * as far as the client keeps up (the upstream is paused otherwise, so a
 * slow client slows it down), and one end of the stream whatever happens:
 * the upstream's end, a failure, or the client leaving. */

/* Sets the reader up on @stream; the source sends the request next, then
 * calls symfonic_upstream_reader_watch(). */
void
symfonic_upstream_reader_init (SymfonicUpstreamReader             *self,
                               const SymfonicUpstreamReaderVTable *vtable,
                               SymfonicStream                     *stream,
                               GCancellable                       *cancellable,
                               gsize                               max_event_bytes)
{
  self->vtable = vtable;
  self->stream = g_object_ref (stream);
  self->parser = symfonic_sse_parser_new (max_event_bytes);
  self->stream_cancellable = cancellable != NULL ? g_object_ref (cancellable) : g_cancellable_new ();
}

static void
reader_free (SymfonicUpstreamReader *self)
{
  symfonic_stream_set_ready_func (self->stream, NULL, NULL, NULL);
  g_cancellable_disconnect (self->stream_cancellable, self->cancelled_id);
  g_object_unref (self->stream_cancellable);
  symfonic_upstream_request_free (self->upstream);
  g_clear_error (&self->parse_error);
  g_object_unref (self->parser);
  g_object_unref (self->stream);
  self->vtable->free (self);
}

/* Ends the reader, then the stream, exactly once. A failed request's
 * connection is closed, which is how the upstream learns to stop; after a
 * completed one the rest of the body is read so the connection is
 * reused. */
void
symfonic_upstream_reader_finish (SymfonicUpstreamReader *self,
                                 GError                 *error)
{
  g_autoptr(SymfonicStream) stream = g_object_ref (self->stream);
  g_autoptr(GError) owned_error = error;

  if (self->vtable->finish != NULL)
    self->vtable->finish (self);
  if (owned_error != NULL)
    symfonic_upstream_request_cancel (self->upstream);
  reader_free (self);

  symfonic_stream_push_end (stream, owned_error);
}

void
symfonic_upstream_reader_push (SymfonicUpstreamReader *self,
                               SymfonicEvent          *event)
{
  self->answered = TRUE;
  if (symfonic_stream_push (self->stream, event) == SYMFONIC_FLOW_WAIT)
    self->waiting = TRUE;
}

static GError *
stream_over (void)
{
  return g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                              _("The stream ended while the upstream was still talking"));
}

/* Hands every complete frame to the source. Returns TRUE to read on, or
 * FALSE when the reading is over: completed, or with @error set. */
static gboolean
drain (SymfonicUpstreamReader  *self,
       GError                 **error)
{
  const char *event;
  const char *data;
  gsize data_length;

  while (!self->waiting)
    {
      /* valid until the parser is next called */
      if (!symfonic_sse_parser_next_borrowed (self->parser, &event, &data, &data_length, NULL))
        return TRUE;
      if (!self->vtable->frame (self, event, data, data_length, error))
        return FALSE;
      if (self->completed)
        return FALSE;
      /* a stage failed the stream (which cancelled it): stop reading */
      if (symfonic_stream_is_over (self->stream))
        {
          g_propagate_error (error, stream_over ());
          return FALSE;
        }
    }

  return TRUE;
}

static void
pump (SymfonicUpstreamReader *self)
{
  GError *error = NULL;

  if (!drain (self, &error))
    {
      symfonic_upstream_reader_finish (self, error);
      return;
    }
  if (self->waiting)
    {
      /* the upstream's writes now block in its kernel buffers; a quiet
       * upstream is not at fault while the client holds it back */
      symfonic_upstream_request_pause (self->upstream);
      return;
    }
  if (self->parse_error != NULL)
    {
      symfonic_upstream_reader_finish (self, g_steal_pointer (&self->parse_error));
      return;
    }
  if (self->upstream_ended)
    {
      symfonic_upstream_reader_finish (self, self->vtable->truncated (self));
      return;
    }
  symfonic_upstream_request_resume (self->upstream);
}

/* The client caught up: the frames already read go first, then the
 * upstream is read again. */
static void
on_stream_ready (SymfonicStream *stream,
                 gpointer        data)
{
  SymfonicUpstreamReader *self = data;

  self->waiting = FALSE;
  /* the client went away, or a stage ended the stream */
  if (symfonic_stream_is_over (stream))
    {
      symfonic_upstream_reader_finish (self, stream_over ());
      return;
    }
  pump (self);
}

/* The reading ends from the main loop with G_IO_ERROR_CANCELLED: not
 * from inside the stream's cancellation. */
static void
on_stream_cancelled (GCancellable *stream_cancellable,
                     gpointer      data)
{
  SymfonicUpstreamReader *self = data;

  if (self->vtable->cancelled != NULL)
    self->vtable->cancelled (self);
  symfonic_upstream_request_cancel (self->upstream);
}

/* The request is out: the reader follows the stream's back-pressure and
 * cancellation from now on (at once if the client is already gone). */
void
symfonic_upstream_reader_watch (SymfonicUpstreamReader *self)
{
  symfonic_stream_set_ready_func (self->stream, on_stream_ready, self, NULL);
  self->cancelled_id = g_cancellable_connect (self->stream_cancellable, G_CALLBACK (on_stream_cancelled),
                                              self, NULL);
}

static void
on_head (SymfonicUpstreamRequest *upstream,
         guint                    status,
         gpointer                 data)
{
  SymfonicUpstreamReader *self = data;

  self->vtable->head (self, status);
}

/* A read is parsed a slice at a time, each slice's events handed on before
 * the next is parsed, so the first events of a large read (a whole answer
 * at once) leave without waiting for the parsing of the rest. Once the
 * stream waits, the rest is parsed whole and its events kept. Events
 * parsed before a failure go on first either way. */
#define PARSE_SLICE 1024

static void
on_body (SymfonicUpstreamRequest *upstream,
         const guint8            *data,
         gsize                    length,
         gpointer                 user_data)
{
  SymfonicUpstreamReader *self = user_data;
  GError *error = NULL;

  while (length > PARSE_SLICE && !self->waiting)
    {
      if (!symfonic_sse_parser_feed (self->parser, data, PARSE_SLICE, &self->parse_error))
        {
          pump (self);
          return;
        }
      if (!drain (self, &error))
        {
          symfonic_upstream_reader_finish (self, error);
          return;
        }
      data += PARSE_SLICE;
      length -= PARSE_SLICE;
    }

  symfonic_sse_parser_feed (self->parser, data, length, &self->parse_error);
  pump (self);
}

static void
on_done (SymfonicUpstreamRequest *upstream,
         const GError            *error,
         gpointer                 data)
{
  SymfonicUpstreamReader *self = data;

  if (error != NULL)
    {
      if (g_cancellable_is_cancelled (self->stream_cancellable))
        symfonic_upstream_reader_finish (self, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                                                    _("The client went away")));
      else
        symfonic_upstream_reader_finish (self, self->vtable->transport_failure (self, error));
      return;
    }

  self->upstream_ended = TRUE;
  /* a parser that failed takes nothing more */
  if (self->parse_error == NULL)
    symfonic_sse_parser_end (self->parser);
  pump (self);
}

const SymfonicUpstreamHandlers symfonic_upstream_reader_handlers = {
  .head = on_head,
  .body = on_body,
  .done = on_done,
};
