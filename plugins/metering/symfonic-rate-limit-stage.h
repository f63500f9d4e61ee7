/* symfonic-rate-limit-stage.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-meter.h"

G_BEGIN_DECLS

/**
 * SymfonicRateLimitKey:
 * @SYMFONIC_RATE_LIMIT_KEY_TENANT: one limit per tenant
 * @SYMFONIC_RATE_LIMIT_KEY_PRINCIPAL: one limit per principal, across tenants
 * @SYMFONIC_RATE_LIMIT_KEY_TENANT_PRINCIPAL: one limit per principal and tenant
 *
 * Whose admissions a rate limit counts together.
 */
typedef enum {
  SYMFONIC_RATE_LIMIT_KEY_TENANT,
  SYMFONIC_RATE_LIMIT_KEY_PRINCIPAL,
  SYMFONIC_RATE_LIMIT_KEY_TENANT_PRINCIPAL,
} SymfonicRateLimitKey;

#define SYMFONIC_TYPE_RATE_LIMIT_KEY (symfonic_rate_limit_key_get_type ())
GType symfonic_rate_limit_key_get_type (void) G_GNUC_CONST;

#define SYMFONIC_TYPE_RATE_LIMIT_STAGE (symfonic_rate_limit_stage_get_type ())

G_DECLARE_FINAL_TYPE (SymfonicRateLimitStage, symfonic_rate_limit_stage, SYMFONIC, RATE_LIMIT_STAGE, GObject)

SymfonicMeterStore *symfonic_rate_limit_stage_get_store (SymfonicRateLimitStage *self);
char               *symfonic_rate_limit_stage_dup_key   (SymfonicRateLimitStage *self,
                                                         SymfonicStream         *stream);

G_END_DECLS
