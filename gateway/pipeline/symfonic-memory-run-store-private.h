/* symfonic-memory-run-store-private.h: the bounds of a memory run store,
 * which a memory store takes as well for the runs it keeps
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-memory-run-store.h"

G_BEGIN_DECLS

/* What a memory run store holds at most: its properties, in this order,
 * and those a memory store hands on to the run store it makes. */
typedef struct
{
  guint   max_runs;
  guint   max_runs_per_tenant;
  guint   max_runs_per_principal;
  guint64 max_bytes;
} SymfonicRunBounds;

typedef enum {
  SYMFONIC_RUN_BOUND_MAX_RUNS,
  SYMFONIC_RUN_BOUND_MAX_RUNS_PER_TENANT,
  SYMFONIC_RUN_BOUND_MAX_RUNS_PER_PRINCIPAL,
  SYMFONIC_RUN_BOUND_MAX_BYTES,
  SYMFONIC_RUN_N_BOUNDS
} SymfonicRunBound;

G_GNUC_INTERNAL
void     symfonic_run_bounds_param_specs  (GParamSpec              **pspecs);
G_GNUC_INTERNAL
gboolean symfonic_run_bounds_get_property (const SymfonicRunBounds  *bounds,
                                           SymfonicRunBound          bound,
                                           GValue                   *value);
G_GNUC_INTERNAL
gboolean symfonic_run_bounds_set_property (SymfonicRunBounds        *bounds,
                                           SymfonicRunBound          bound,
                                           const GValue             *value);

G_END_DECLS
