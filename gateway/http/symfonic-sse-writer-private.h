/* symfonic-sse-writer-private.h: one connection's frame adapter
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <libsoup/soup.h>

#include "symfonic-poller-private.h"

G_BEGIN_DECLS

/* The declared buffer of seed 002's AdapterDeclaration: frames held for one
 * client beyond these bounds shed droppable deltas, and end the stream
 * when they may not be shed. */
#define SYMFONIC_SSE_MAX_FRAMES 256
#define SYMFONIC_SSE_MAX_BYTES (8 * 1024 * 1024)

/* With frames past the high-water mark that the client did not take (an
 * iteration's frames are offered to its socket first, once they reach
 * the mark) the source is told to stop reading its upstream, so that a
 * slow client slows the upstream down long before anything is shed;
 * below the low-water mark it reads on. */
#define SYMFONIC_SSE_HIGH_WATER_FRAMES (SYMFONIC_SSE_MAX_FRAMES / 2)
#define SYMFONIC_SSE_HIGH_WATER_BYTES (256 * 1024)
#define SYMFONIC_SSE_LOW_WATER_FRAMES (SYMFONIC_SSE_MAX_FRAMES / 8)
#define SYMFONIC_SSE_LOW_WATER_BYTES (64 * 1024)

/* How long a client that stalled gets to take a byte of its terminal
 * frame, renewed while it does. */
#define SYMFONIC_SSE_CLOSE_GRACE_US (2 * G_USEC_PER_SEC)

/* What a frame is, for the writer. */
typedef enum {
  SYMFONIC_SSE_FRAME_KEPT = 0,
  /* may be shed when the client falls behind */
  SYMFONIC_SSE_FRAME_DROPPABLE = 1 << 0,
  /* a delta of text: the stream's first leaves at once */
  SYMFONIC_SSE_FRAME_DELTA = 1 << 1,
} SymfonicSseFrameFlags;

typedef enum {
  SYMFONIC_SSE_FRAME_QUEUED,
  /* queued and, being the stream's first delta, offered to the socket at
   * once with what was queued before it */
  SYMFONIC_SSE_FRAME_SENT,
  SYMFONIC_SSE_FRAME_SHED,
  /* a frame that may not be shed found the buffer full: it was not
   * queued, and the stream must end */
  SYMFONIC_SSE_FRAME_OVERFLOW,
} SymfonicSseFrameResult;

/* What the writer tells its owner, always from the poller's dispatch. */
typedef struct
{
  /* below the low-water mark again after being full */
  void (*drained) (gpointer data);
  /* the chunk with the terminal starts to go out: the stream ends with
   * it, unless the client leaves or stalls in it; may be %NULL */
  void (*ending)   (gpointer data);
  /* the client took no byte for the stall timeout while frames waited
   * (and the terminal had not started to go out): what it did not start
   * to take was dropped, the body's end with it, and the owner closes the
   * writer with the stream's terminal */
  void (*stalled)  (gpointer data);
  /* the writer let the connection go: the body went out whole, or the
   * client left or was dropped; the writer may be freed from here */
  void (*finished) (gpointer data);
} SymfonicSseWriterCallbacks;

typedef struct _SymfonicSseWriter SymfonicSseWriter;

G_GNUC_INTERNAL
SymfonicSseWriter     *symfonic_sse_writer_new         (SoupServerMessage                *message,
                                                        SymfonicWatch                    *watch,
                                                        guint                             stall_seconds,
                                                        guint                             heartbeat_seconds,
                                                        const SymfonicSseWriterCallbacks *callbacks,
                                                        gpointer                          data);
G_GNUC_INTERNAL
void                   symfonic_sse_writer_free        (SymfonicSseWriter *self);
G_GNUC_INTERNAL
GString               *symfonic_sse_writer_begin_frame (SymfonicSseWriter *self);
G_GNUC_INTERNAL
SymfonicSseFrameResult symfonic_sse_writer_end_frame   (SymfonicSseWriter     *self,
                                                        SymfonicSseFrameFlags  flags);
G_GNUC_INTERNAL
gboolean               symfonic_sse_writer_is_full     (SymfonicSseWriter *self);
G_GNUC_INTERNAL
void                   symfonic_sse_writer_close       (SymfonicSseWriter *self);
G_GNUC_INTERNAL
gboolean               symfonic_sse_writer_is_stalled  (SymfonicSseWriter *self);
G_GNUC_INTERNAL
guint64                symfonic_sse_writer_get_frames  (SymfonicSseWriter *self);
G_GNUC_INTERNAL
guint64                symfonic_sse_writer_get_shed    (SymfonicSseWriter *self);
G_GNUC_INTERNAL
guint64                symfonic_sse_writer_get_bytes   (SymfonicSseWriter *self);

G_END_DECLS
