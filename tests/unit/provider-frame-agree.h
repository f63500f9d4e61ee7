/* provider-frame-agree.h: a provider's frame read both ways, compared
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

#include "symfonic-provider-frame-private.h"

G_BEGIN_DECLS

typedef gboolean (*AgreeFunc) (SymfonicJsonScanMemo *memo,
                               const char           *data,
                               gsize                 length);

/* Whether the scan took @data, through @memo when not NULL; aborts when it
 * took what the tree reads otherwise, or what the strict reader refuses. */
gboolean provider_frame_openai_agrees    (SymfonicJsonScanMemo *memo,
                                          const char           *data,
                                          gsize                 length);
gboolean provider_frame_anthropic_agrees (SymfonicJsonScanMemo *memo,
                                          const char           *data,
                                          gsize                 length);

G_END_DECLS
