/* symfonic-pipeline-private.h: what the server asks of a pipeline besides its public API
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-pipeline.h"

G_BEGIN_DECLS

G_GNUC_INTERNAL
const char *symfonic_pipeline_find_demo_credentials (SymfonicPipeline *self);

G_END_DECLS
