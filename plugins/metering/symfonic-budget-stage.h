/* symfonic-budget-stage.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-meter.h"

G_BEGIN_DECLS

#define SYMFONIC_TYPE_BUDGET_STAGE (symfonic_budget_stage_get_type ())

G_DECLARE_FINAL_TYPE (SymfonicBudgetStage, symfonic_budget_stage, SYMFONIC, BUDGET_STAGE, GObject)

SymfonicMeterStore *symfonic_budget_stage_get_store (SymfonicBudgetStage *self);
char               *symfonic_budget_stage_dup_key   (SymfonicBudgetStage *self,
                                                     SymfonicStream      *stream);
guint64             symfonic_budget_estimate_tokens (guint64              n_bytes);

G_END_DECLS
