/* symfonic-stage-order.h: what a stage type needs before it in a route
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <glib-object.h>

#include "symfonic-route.h"

G_BEGIN_DECLS

void                symfonic_stage_type_declare_order (GType                type,
                                                       const char * const  *provides,
                                                       const char * const  *needs,
                                                       const char * const  *after,
                                                       const char          *why);
const char * const *symfonic_stage_type_get_provides  (GType                type);
const char * const *symfonic_stage_type_get_needs     (GType                type);
const char * const *symfonic_stage_type_get_after     (GType                type);

const char * const *symfonic_route_kind_get_needs     (SymfonicRouteKind    kind);

G_END_DECLS
