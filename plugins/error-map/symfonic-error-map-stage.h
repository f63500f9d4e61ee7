/* symfonic-error-map-stage.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

G_BEGIN_DECLS

#define SYMFONIC_TYPE_ERROR_MAP_STAGE (symfonic_error_map_stage_get_type ())

G_DECLARE_FINAL_TYPE (SymfonicErrorMapStage, symfonic_error_map_stage, SYMFONIC, ERROR_MAP_STAGE, GObject)

G_END_DECLS
