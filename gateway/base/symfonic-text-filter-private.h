/* symfonic-text-filter-private.h: what the library's own filtering stage
 * asks of a text filter
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-text-filter.h"

G_BEGIN_DECLS

G_GNUC_INTERNAL
gboolean symfonic_text_filter_take_delta (SymfonicTextFilter  *self,
                                          SymfonicStream      *stream,
                                          SymfonicEvent       *delta,
                                          SymfonicTextChannel  channel);

G_END_DECLS
