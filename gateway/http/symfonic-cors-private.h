/* symfonic-cors-private.h: what a route's cors-origins let pages of other origins do
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <libsoup/soup.h>

#include "symfonic-error-frame.h"
#include "symfonic-route.h"

G_BEGIN_DECLS

G_GNUC_INTERNAL
void     symfonic_cors_apply             (SoupServerMessage  *message,
                                          SymfonicRoute      *route);
G_GNUC_INTERNAL
void     symfonic_cors_add_to_frame      (SoupServerMessage  *message,
                                          SymfonicRoute      *route,
                                          SymfonicErrorFrame *frame);
G_GNUC_INTERNAL
gboolean symfonic_cors_answer_preflight  (SoupServerMessage  *message,
                                          SymfonicRoute      *route,
                                          const char         *method);

G_END_DECLS
