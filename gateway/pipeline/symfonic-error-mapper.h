/* symfonic-error-mapper.h: turns failures into what clients see
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <glib-object.h>

#include "symfonic-error-frame.h"
#include "symfonic-route.h"

G_BEGIN_DECLS

#define SYMFONIC_TYPE_ERROR_MAPPER (symfonic_error_mapper_get_type ())

G_DECLARE_INTERFACE (SymfonicErrorMapper, symfonic_error_mapper, SYMFONIC, ERROR_MAPPER, GObject)

/**
 * SymfonicErrorMapperInterface:
 * @parent_iface: the parent interface
 * @map: maps @error, raised on @route, to a frame. Pure: no I/O, no
 *   logging (the server logs server-side faults once).
 *
 * Implemented by a stage (the `error-map` stage) that decides, for every
 * entry point, what a failure becomes. A route whose chain has no mapper
 * uses symfonic_error_frame_new_for_error().
 */
struct _SymfonicErrorMapperInterface
{
  GTypeInterface parent_iface;

  SymfonicErrorFrame *(*map) (SymfonicErrorMapper *self,
                              const GError        *error,
                              SymfonicRoute       *route);
};

SymfonicErrorFrame *symfonic_error_mapper_map (SymfonicErrorMapper *self,
                                               const GError        *error,
                                               SymfonicRoute       *route);

G_END_DECLS
