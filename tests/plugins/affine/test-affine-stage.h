/* test-affine-stage.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

G_BEGIN_DECLS

#define TEST_TYPE_AFFINE_STAGE (test_affine_stage_get_type ())

G_DECLARE_FINAL_TYPE (TestAffineStage, test_affine_stage, TEST, AFFINE_STAGE, GObject)

void test_affine_stage_set_thread (GThread *thread);

G_END_DECLS
