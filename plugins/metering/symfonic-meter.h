/* symfonic-meter.h: what the metering stages share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

G_BEGIN_DECLS

guint64  symfonic_meter_saturating_add       (guint64               a,
                                              guint64               b);
guint64  symfonic_meter_saturating_mul       (guint64               a,
                                              guint64               b);
guint64  symfonic_meter_retry_after_seconds  (gint64                retry_after_us);
void     symfonic_meter_set_retry_after      (SymfonicStream       *stream,
                                              gint64                retry_after_us);
const char *symfonic_meter_get_tenant        (SymfonicStream       *stream);
const char *symfonic_meter_get_principal     (SymfonicStream       *stream);
char    *symfonic_meter_dup_key              (SymfonicStream       *stream,
                                              gboolean              tenant,
                                              gboolean              principal);

GParamSpec *symfonic_meter_param_spec_store  (void);
void     symfonic_meter_ensure_store         (SymfonicMeterStore  **store);
gboolean symfonic_meter_check_store          (SymfonicStage        *stage,
                                              SymfonicMeterStore   *store,
                                              GError              **error);
gboolean symfonic_meter_admit_finish         (SymfonicStage        *stage,
                                              GAsyncResult         *result,
                                              GError              **error);

G_END_DECLS
