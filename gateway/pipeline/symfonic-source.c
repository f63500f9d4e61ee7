/* symfonic-source.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-error.h"

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
 * symfonic_source_admit:
 * @self: a #SymfonicSource
 * @stream: the stream about to start
 * @error: return location for a #GError
 *
 * Asks the source whether it can serve @stream, before the response
 * begins. A source without an admit hook admits every stream.
 *
 * Returns: %TRUE if the source can serve @stream, or %FALSE with @error
 *   set (an error of the %SYMFONIC_ERROR domain, mapped like an admission
 *   hook's refusal)
 */
gboolean
symfonic_source_admit (SymfonicSource  *self,
                       SymfonicStream  *stream,
                       GError         **error)
{
  SymfonicSourceInterface *iface;
  g_autoptr(GError) local_error = NULL;

  g_return_val_if_fail (SYMFONIC_IS_SOURCE (self), FALSE);
  g_return_val_if_fail (SYMFONIC_IS_STREAM (stream), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  iface = SYMFONIC_SOURCE_GET_IFACE (self);
  if (iface->admit == NULL || iface->admit (self, stream, &local_error))
    return TRUE;

  /* a binding's refusal without an error must still refuse, not crash */
  if (local_error == NULL)
    {
      g_critical ("%s: the admit hook failed without setting an error", G_OBJECT_TYPE_NAME (self));
      local_error = g_error_new (SYMFONIC_ERROR, SYMFONIC_ERROR_FAILED,
                                 "Source %s failed in admit", G_OBJECT_TYPE_NAME (self));
    }
  g_propagate_error (error, g_steal_pointer (&local_error));

  return FALSE;
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
