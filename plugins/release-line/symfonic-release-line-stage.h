/* symfonic-release-line-stage.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

G_BEGIN_DECLS

#define SYMFONIC_TYPE_RELEASE_LINE_STAGE (symfonic_release_line_stage_get_type ())

G_DECLARE_FINAL_TYPE (SymfonicReleaseLineStage, symfonic_release_line_stage, SYMFONIC, RELEASE_LINE_STAGE, GObject)

G_END_DECLS
