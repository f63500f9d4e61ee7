/* symfonic-auth-stage.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

G_BEGIN_DECLS

#define SYMFONIC_TYPE_AUTH_STAGE (symfonic_auth_stage_get_type ())

G_DECLARE_FINAL_TYPE (SymfonicAuthStage, symfonic_auth_stage, SYMFONIC, AUTH_STAGE, GObject)

G_END_DECLS
