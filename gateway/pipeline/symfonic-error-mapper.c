/* symfonic-error-mapper.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-error-mapper.h"

/**
 * SymfonicErrorMapper:
 *
 * The interface of the one mapper from failures to error frames. See
 * #SymfonicErrorMapperInterface.
 */
G_DEFINE_INTERFACE (SymfonicErrorMapper, symfonic_error_mapper, G_TYPE_OBJECT)

static void
symfonic_error_mapper_default_init (SymfonicErrorMapperInterface *iface)
{
}

/**
 * symfonic_error_mapper_map:
 * @self: a #SymfonicErrorMapper
 * @error: the failure
 * @route: the route it happened on
 *
 * Maps a failure of the route to the frame the client gets: its status, its
 * detail and code, and the headers it carries.
 *
 * Returns: (transfer full): the frame the client gets
 */
SymfonicErrorFrame *
symfonic_error_mapper_map (SymfonicErrorMapper *self,
                           const GError        *error,
                           SymfonicRoute       *route)
{
  SymfonicErrorMapperInterface *iface;
  SymfonicErrorFrame *frame;

  g_return_val_if_fail (SYMFONIC_IS_ERROR_MAPPER (self), NULL);
  g_return_val_if_fail (error != NULL, NULL);
  g_return_val_if_fail (SYMFONIC_IS_ROUTE (route), NULL);

  iface = SYMFONIC_ERROR_MAPPER_GET_IFACE (self);
  g_return_val_if_fail (iface->map != NULL, NULL);

  frame = iface->map (self, error, route);
  /* a mapper that maps nothing is a bug; the client still gets a frame */
  if (frame == NULL)
    {
      g_critical ("%s mapped an error to nothing", G_OBJECT_TYPE_NAME (self));
      frame = symfonic_error_frame_new_for_error (error);
    }

  return frame;
}
