/* symfonic-meter.h: what the metering stages share besides their store
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

G_END_DECLS
