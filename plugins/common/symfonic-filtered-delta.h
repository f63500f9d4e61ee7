/* symfonic-filtered-delta.h: passes on what a text filter made of a delta
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

G_BEGIN_DECLS

GString *symfonic_filtered_delta_scratch (void);
void     symfonic_filtered_delta_emit    (SymfonicStream *stream,
                                          SymfonicEvent  *delta,
                                          GString        *clean);

G_END_DECLS
