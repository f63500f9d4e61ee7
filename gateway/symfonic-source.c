/* symfonic-source.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-source.h"
#include "symfonic-stream.h"

/**
 * SymfonicSource:
 *
 * The interface of an upstream. See #SymfonicSourceInterface.
 */
G_DEFINE_INTERFACE (SymfonicSource, symfonic_source, G_TYPE_OBJECT)

static void
symfonic_source_default_init (SymfonicSourceInterface *iface)
{
}

/**
 * symfonic_source_start:
 * @self: a #SymfonicSource
 * @stream: the stream to feed
 * @cancellable: (nullable): cancelled when the client goes away
 *
 * Opens the upstream for @stream. Events arrive through
 * symfonic_stream_push(); the end, through symfonic_stream_push_end().
 */
void
symfonic_source_start (SymfonicSource *self,
                       SymfonicStream *stream,
                       GCancellable   *cancellable)
{
  SymfonicSourceInterface *iface;

  g_return_if_fail (SYMFONIC_IS_SOURCE (self));
  g_return_if_fail (SYMFONIC_IS_STREAM (stream));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  iface = SYMFONIC_SOURCE_GET_IFACE (self);
  g_return_if_fail (iface->start != NULL);

  iface->start (self, stream, cancellable);
}
