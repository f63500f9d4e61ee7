/* symfonic-stage-order-private.h: checking a route's stages against their declarations
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-route.h"

G_BEGIN_DECLS

G_GNUC_INTERNAL
gboolean symfonic_stage_order_check (SymfonicRoute       *route,
                                     const char * const  *names,
                                     const char * const  *type_names,
                                     GError             **error);

G_END_DECLS
