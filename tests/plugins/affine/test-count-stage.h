/* test-count-stage.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

G_BEGIN_DECLS

#define TEST_TYPE_COUNT_STAGE (test_count_stage_get_type ())

G_DECLARE_FINAL_TYPE (TestCountStage, test_count_stage, TEST, COUNT_STAGE, GObject)

G_END_DECLS
