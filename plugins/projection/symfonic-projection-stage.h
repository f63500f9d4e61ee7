/* symfonic-projection-stage.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

G_BEGIN_DECLS

#define SYMFONIC_TYPE_PROJECTION_STAGE (symfonic_projection_stage_get_type ())

G_DECLARE_FINAL_TYPE (SymfonicProjectionStage, symfonic_projection_stage, SYMFONIC, PROJECTION_STAGE, GObject)

G_END_DECLS
