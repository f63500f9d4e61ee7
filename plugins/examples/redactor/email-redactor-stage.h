/* email-redactor-stage.h: a stage that replaces e-mail addresses in the answer
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

G_BEGIN_DECLS

#define EXAMPLE_TYPE_EMAIL_REDACTOR_STAGE (example_email_redactor_stage_get_type ())

G_DECLARE_FINAL_TYPE (ExampleEmailRedactorStage, example_email_redactor_stage,
                      EXAMPLE, EMAIL_REDACTOR_STAGE, SymfonicFilterStage)

G_END_DECLS
