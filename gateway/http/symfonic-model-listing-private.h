/* symfonic-model-listing-private.h: `GET …/models` of an `openai` route
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <libsoup/soup.h>

#include "symfonic-route.h"

G_BEGIN_DECLS

G_GNUC_INTERNAL
void symfonic_model_listing_respond (SoupServerMessage *message,
                                     SymfonicRoute     *route,
                                     const char        *path);

G_END_DECLS
