/* symfonic-upstream-reader.h: one event stream read from an HTTP upstream
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

G_BEGIN_DECLS

typedef struct _SymfonicUpstreamReader SymfonicUpstreamReader;

/**
 * SymfonicUpstreamReaderVTable:
 * @head: the response head arrived; fails the reader, or replaces its
 *   request, or does nothing to read on
 * @frame: one event-stream frame; %FALSE with @error set ends the stream
 *   in failure, and setting `completed` ends it successfully
 * @transport_failure: the failure a broken connection is for the client
 * @truncated: the failure of a body that ended before the source's end
 * @cancelled: (nullable): runs inside the stream's cancellation, before
 *   its stages close
 * @finish: (nullable): runs once before the stream ends, whatever the end
 * @free: the source's part of the reader
 *
 * What a source adds to the reading.
 */
typedef struct
{
  void      (*head)              (SymfonicUpstreamReader  *reader,
                                  guint                    status);
  gboolean  (*frame)             (SymfonicUpstreamReader  *reader,
                                  const char              *event,
                                  const char              *data,
                                  gsize                    data_length,
                                  GError                 **error);
  GError   *(*transport_failure) (SymfonicUpstreamReader  *reader,
                                  const GError            *error);
  GError   *(*truncated)         (SymfonicUpstreamReader  *reader);
  void      (*cancelled)         (SymfonicUpstreamReader  *reader);
  void      (*finish)            (SymfonicUpstreamReader  *reader);
  void      (*free)              (SymfonicUpstreamReader  *reader);
} SymfonicUpstreamReaderVTable;

/* A source's request embeds this first. */
struct _SymfonicUpstreamReader
{
  const SymfonicUpstreamReaderVTable *vtable;
  SymfonicStream          *stream;
  SymfonicUpstreamRequest *upstream;
  SymfonicSseParser       *parser;
  GCancellable            *stream_cancellable;
  gulong                   cancelled_id;
  /* the upstream sent its end: the stream ends successfully */
  gboolean                 completed;
  /* the stream cannot take more now (the client is behind, or other work
   * goes first): nothing more is read until the stream is ready */
  gboolean                 waiting;
  /* an event went to the stream */
  gboolean                 answered;
  /* the upstream's body ended; frames may still wait in the parser */
  gboolean                 upstream_ended;
  /* the parser failed: the stream ends with this once the whole frames
   * parsed before it went on */
  GError                  *parse_error;
};

extern const SymfonicUpstreamHandlers symfonic_upstream_reader_handlers;

void symfonic_upstream_reader_init   (SymfonicUpstreamReader             *self,
                                      const SymfonicUpstreamReaderVTable *vtable,
                                      SymfonicStream                     *stream,
                                      GCancellable                       *cancellable,
                                      gsize                               max_event_bytes);
void symfonic_upstream_reader_watch  (SymfonicUpstreamReader             *self);
void symfonic_upstream_reader_push   (SymfonicUpstreamReader             *self,
                                      SymfonicEvent                      *event);
void symfonic_upstream_reader_finish (SymfonicUpstreamReader             *self,
                                      GError                             *error);

G_END_DECLS
