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
 * @start: opens the upstream for the stream's invocation. Runs on the
 *   stream's thread with its main context as thread default; the source
 *   pushes each event with symfonic_stream_push() from that context and
 *   ends exactly once with symfonic_stream_push_end(), also after
 *   @cancellable was cancelled (the client went away).
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
};

void symfonic_source_start (SymfonicSource *self,
                            SymfonicStream *stream,
                            GCancellable   *cancellable);

G_END_DECLS
