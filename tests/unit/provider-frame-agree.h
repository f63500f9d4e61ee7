/* provider-frame-agree.h: a provider's frame read both ways, compared
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

#include "../../plugins/providers/symfonic-provider-frame.h"

G_BEGIN_DECLS

/* Whether the scan took @data; aborts when it took what the tree reads
 * otherwise, or what the strict reader refuses. */
gboolean provider_frame_openai_agrees    (const char *data,
                                          gsize       length);
gboolean provider_frame_anthropic_agrees (const char *data,
                                          gsize       length);

G_END_DECLS
