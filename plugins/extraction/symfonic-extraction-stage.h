/* symfonic-extraction-stage.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

G_BEGIN_DECLS

#define SYMFONIC_TYPE_EXTRACTION_STAGE (symfonic_extraction_stage_get_type ())

G_DECLARE_FINAL_TYPE (SymfonicExtractionStage, symfonic_extraction_stage, SYMFONIC, EXTRACTION_STAGE, SymfonicFilterStage)

G_END_DECLS
