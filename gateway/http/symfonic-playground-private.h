/* symfonic-playground-private.h: the page that streams a typed route in a browser
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <libsoup/soup.h>

#include "symfonic-pipeline.h"

G_BEGIN_DECLS

G_GNUC_INTERNAL
gboolean symfonic_playground_load     (GError            **error);
G_GNUC_INTERNAL
gboolean symfonic_playground_serves   (SymfonicPipeline   *pipeline,
                                       const char         *path);
G_GNUC_INTERNAL
void     symfonic_playground_respond  (SoupServerMessage  *message,
                                       SymfonicPipeline   *pipeline,
                                       const char         *path);

G_END_DECLS
