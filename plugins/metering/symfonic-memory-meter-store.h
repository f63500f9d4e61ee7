/* symfonic-memory-meter-store.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-meter.h"

G_BEGIN_DECLS

#define SYMFONIC_TYPE_MEMORY_METER_STORE (symfonic_memory_meter_store_get_type ())

G_DECLARE_FINAL_TYPE (SymfonicMemoryMeterStore, symfonic_memory_meter_store, SYMFONIC, MEMORY_METER_STORE, GObject)

/**
 * SymfonicMeterClockFunc:
 * @user_data: the data given with the clock
 *
 * Returns: now, in microseconds
 */
/* Keys are swept once a table has grown past this, and past twice its
 * size after the last sweep. */
#define SYMFONIC_MEMORY_METER_STORE_MIN_SWEEP 1024

typedef gint64 (*SymfonicMeterClockFunc) (gpointer user_data);

/* How long a refused reservation is told to wait when only reservations in
 * flight stand in its way: they are released whenever their streams end,
 * which nothing predicts. */
#define SYMFONIC_METER_IN_FLIGHT_RETRY_US (1 * G_USEC_PER_SEC)

SymfonicMemoryMeterStore *symfonic_memory_meter_store_new       (void);
void                      symfonic_memory_meter_store_set_clock (SymfonicMemoryMeterStore *self,
                                                                 SymfonicMeterClockFunc    clock,
                                                                 gpointer                  user_data);
guint                     symfonic_memory_meter_store_get_n_keys (SymfonicMemoryMeterStore *self);
gboolean                  symfonic_memory_meter_store_peek_budget (SymfonicMemoryMeterStore *self,
                                                                  const char               *key,
                                                                  guint64                  *charged,
                                                                  guint64                  *outstanding);

G_END_DECLS
