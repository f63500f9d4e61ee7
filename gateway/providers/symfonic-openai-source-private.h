/* symfonic-openai-source-private.h: the `openai` source type
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-provider-source-private.h"

G_BEGIN_DECLS

#define SYMFONIC_TYPE_OPENAI_SOURCE (symfonic_openai_source_get_type ())

G_GNUC_INTERNAL
GType symfonic_openai_source_get_type (void);
G_DECLARE_FINAL_TYPE (SymfonicOpenaiSource, symfonic_openai_source, SYMFONIC, OPENAI_SOURCE, SymfonicProviderSource)

G_END_DECLS
