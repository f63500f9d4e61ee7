/* symfonic-anthropic-source-private.h: the `anthropic` source type
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-provider-source-private.h"

G_BEGIN_DECLS

#define SYMFONIC_TYPE_ANTHROPIC_SOURCE (symfonic_anthropic_source_get_type ())

G_GNUC_INTERNAL
GType symfonic_anthropic_source_get_type (void);
G_DECLARE_FINAL_TYPE (SymfonicAnthropicSource, symfonic_anthropic_source, SYMFONIC, ANTHROPIC_SOURCE, SymfonicProviderSource)

G_END_DECLS
