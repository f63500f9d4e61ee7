/* symfonic-memory-run-store.h: the in-process store of resumable runs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include "symfonic-run-store.h"

G_BEGIN_DECLS

/**
 * SYMFONIC_MEMORY_RUN_STORE_DEFAULT_MAX_RUNS:
 *
 * The default #SymfonicMemoryRunStore:max-runs.
 */
#define SYMFONIC_MEMORY_RUN_STORE_DEFAULT_MAX_RUNS 10000

/**
 * SYMFONIC_MEMORY_RUN_STORE_DEFAULT_MAX_RUNS_PER_TENANT:
 *
 * The default #SymfonicMemoryRunStore:max-runs-per-tenant.
 */
#define SYMFONIC_MEMORY_RUN_STORE_DEFAULT_MAX_RUNS_PER_TENANT 1000

/**
 * SYMFONIC_MEMORY_RUN_STORE_DEFAULT_MAX_RUNS_PER_PRINCIPAL:
 *
 * The default #SymfonicMemoryRunStore:max-runs-per-principal.
 */
#define SYMFONIC_MEMORY_RUN_STORE_DEFAULT_MAX_RUNS_PER_PRINCIPAL 100

/**
 * SYMFONIC_MEMORY_RUN_STORE_DEFAULT_MAX_BYTES:
 *
 * The default #SymfonicMemoryRunStore:max-bytes: 256 MiB.
 */
#define SYMFONIC_MEMORY_RUN_STORE_DEFAULT_MAX_BYTES (G_GUINT64_CONSTANT (256) * 1024 * 1024)

#define SYMFONIC_TYPE_MEMORY_RUN_STORE (symfonic_memory_run_store_get_type ())

G_DECLARE_FINAL_TYPE (SymfonicMemoryRunStore, symfonic_memory_run_store, SYMFONIC, MEMORY_RUN_STORE, GObject)

SymfonicMemoryRunStore *symfonic_memory_run_store_new        (void);
guint                   symfonic_memory_run_store_get_n_runs  (SymfonicMemoryRunStore *self);
guint64                 symfonic_memory_run_store_get_n_bytes (SymfonicMemoryRunStore *self);

G_END_DECLS
