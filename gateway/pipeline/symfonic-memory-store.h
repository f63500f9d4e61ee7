/* symfonic-memory-store.h: the in-process store, for every role
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include "symfonic-meter-store.h"
#include "symfonic-run-store.h"
#include "symfonic-store.h"
#include "symfonic-stream-cap-store.h"

G_BEGIN_DECLS

/**
 * SYMFONIC_MEMORY_STORE_MIN_SWEEP:
 *
 * A table of cells, budgets or slot sets is swept of the entries that
 * carry no information any more once it has grown past this, and past
 * twice its size after the last sweep.
 */
#define SYMFONIC_MEMORY_STORE_MIN_SWEEP 1024

/**
 * SYMFONIC_METER_IN_FLIGHT_RETRY_US:
 *
 * How long a refused reservation is told to wait when only leases in
 * flight stand in its way: they are released whenever their streams end,
 * which nothing predicts.
 */
#define SYMFONIC_METER_IN_FLIGHT_RETRY_US (1 * G_USEC_PER_SEC)

/**
 * SymfonicMeterClockFunc:
 * @user_data: the data given with the clock
 *
 * The clock a #SymfonicMemoryStore decides by, in place of
 * g_get_monotonic_time(): a test moves it by hand.
 *
 * Returns: now, in microseconds
 */
typedef gint64 (*SymfonicMeterClockFunc) (gpointer user_data);

#define SYMFONIC_TYPE_MEMORY_STORE (symfonic_memory_store_get_type ())

G_DECLARE_FINAL_TYPE (SymfonicMemoryStore, symfonic_memory_store, SYMFONIC, MEMORY_STORE, GObject)

SymfonicMemoryStore *symfonic_memory_store_new          (guint                   lease_ttl_ms);
void                 symfonic_memory_store_set_clock    (SymfonicMemoryStore    *self,
                                                         SymfonicMeterClockFunc  clock,
                                                         gpointer                user_data);
guint                symfonic_memory_store_get_n_keys   (SymfonicMemoryStore    *self);
gboolean             symfonic_memory_store_peek_budget  (SymfonicMemoryStore    *self,
                                                         const char             *key,
                                                         guint64                *charged,
                                                         guint64                *outstanding);
guint                symfonic_memory_store_peek_slots   (SymfonicMemoryStore    *self,
                                                         const char             *key);

G_END_DECLS
