/* symfonic-citation-stage.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

G_BEGIN_DECLS

#define SYMFONIC_TYPE_CITATION_STAGE (symfonic_citation_stage_get_type ())

G_DECLARE_FINAL_TYPE (SymfonicCitationStage, symfonic_citation_stage, SYMFONIC, CITATION_STAGE, SymfonicFilterStage)

G_END_DECLS
