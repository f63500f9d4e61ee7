/* symfonic-source.h: the interface of an upstream
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <gio/gio.h>

#include "symfonic-types.h"

G_BEGIN_DECLS

#define SYMFONIC_TYPE_SOURCE (symfonic_source_get_type ())

G_DECLARE_INTERFACE (SymfonicSource, symfonic_source, SYMFONIC, SOURCE, GObject)

/**
 * SymfonicSourceInterface:
 * @parent_iface: the parent interface
 * @start: opens the upstream for the stream's invocation. Runs on the
 *   stream's thread with its main context as thread default; the source
 *   pushes each event with symfonic_stream_push() from that context (and
 *   stops reading its upstream while that returns %SYMFONIC_FLOW_WAIT,
 *   until the stream's ready function runs) and
 *   ends exactly once with symfonic_stream_push_end(), also after
 *   @cancellable was cancelled (the client went away).
 * @admit: optional; refuses, before any byte of the response, a stream
 *   the source already knows it cannot serve (no such recording, no free
 *   upstream connection), so the client gets a plain JSON status rather
 *   than an error frame after the event-stream headers. Runs once every
 *   stage admitted the stream, on the stream's thread; what it reserves
 *   for the stream it ties to the stream's lifetime, since @start may
 *   never follow (the client can go away first).
 *
 * An upstream: an agent runtime, an LLM provider, or a recorded transcript.
 * Like stages, a source object serves every stream of its routes at once.
 */
struct _SymfonicSourceInterface
{
  GTypeInterface parent_iface;

  void (*start) (SymfonicSource *self,
                 SymfonicStream *stream,
                 GCancellable   *cancellable);
  gboolean (*admit) (SymfonicSource  *self,
                     SymfonicStream  *stream,
                     GError         **error);
};

gboolean symfonic_source_admit (SymfonicSource  *self,
                                SymfonicStream  *stream,
                                GError         **error);
void     symfonic_source_start (SymfonicSource  *self,
                                SymfonicStream  *stream,
                                GCancellable    *cancellable);

G_END_DECLS
