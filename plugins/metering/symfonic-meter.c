/* symfonic-meter.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-meter.h"

/**
 * symfonic_meter_saturating_add:
 * @a: a count of tokens
 * @b: another
 *
 * Budgets add counts that a configuration or an upstream's report can make
 * huge; a sum that does not fit stays at the maximum rather than wrapping
 * round to a small number that would admit everything.
 *
 * Returns: @a + @b, or %G_MAXUINT64 if that overflows
 */
guint64
symfonic_meter_saturating_add (guint64 a,
                               guint64 b)
{
  return a > G_MAXUINT64 - b ? G_MAXUINT64 : a + b;
}

/**
 * symfonic_meter_saturating_mul:
 * @a: a count
 * @b: another
 *
 * Returns: @a × @b, or %G_MAXUINT64 if that overflows
 */
guint64
symfonic_meter_saturating_mul (guint64 a,
                               guint64 b)
{
  return b != 0 && a > G_MAXUINT64 / b ? G_MAXUINT64 : a * b;
}

/**
 * symfonic_meter_retry_after_seconds:
 * @retry_after_us: a wait, in microseconds
 *
 * Retry-After carries whole seconds; rounding up keeps the advice honest
 * (a client that waits that long succeeds), and a refusal never says 0.
 *
 * Returns: @retry_after_us in seconds, rounded up, at least 1
 */
guint64
symfonic_meter_retry_after_seconds (gint64 retry_after_us)
{
  if (retry_after_us <= G_USEC_PER_SEC)
    return 1;

  return ((guint64) retry_after_us + G_USEC_PER_SEC - 1) / G_USEC_PER_SEC;
}

/**
 * symfonic_meter_set_retry_after:
 * @stream: the refused stream
 * @retry_after_us: how long until a retry could succeed
 *
 * Sets `Retry-After` on the refusal about to be returned.
 */
void
symfonic_meter_set_retry_after (SymfonicStream *stream,
                                gint64          retry_after_us)
{
  char value[32];

  g_snprintf (value, sizeof value, "%" G_GUINT64_FORMAT,
              symfonic_meter_retry_after_seconds (retry_after_us));
  symfonic_stream_set_response_header (stream, "Retry-After", value);
}

/**
 * symfonic_meter_get_tenant:
 * @stream: a stream
 *
 * Returns: the tenant the auth stage set, or `"anonymous"` when no auth
 *   stage ran, so unauthenticated traffic shares one key instead of none
 */
const char *
symfonic_meter_get_tenant (SymfonicStream *stream)
{
  const char *tenant = symfonic_invocation_get_tenant_id (symfonic_stream_get_invocation (stream));

  return tenant != NULL ? tenant : "anonymous";
}

/**
 * symfonic_meter_get_principal:
 * @stream: a stream
 *
 * Returns: the principal the auth stage set, or `"anonymous"`
 */
const char *
symfonic_meter_get_principal (SymfonicStream *stream)
{
  const char *principal = symfonic_invocation_get_principal_id (symfonic_stream_get_invocation (stream));

  return principal != NULL ? principal : "anonymous";
}

/**
 * symfonic_meter_dup_key:
 * @stream: a stream
 * @tenant: whether the key holds the stream's tenant
 * @principal: whether the key holds its principal
 *
 * The store key @stream is counted under by a stage that counts by
 * tenant, by principal or by both. Tenant and principal ids are arbitrary
 * strings, so the pair carries the tenant's length: no choice of ids makes
 * two pairs collide.
 *
 * Returns: (transfer full): the key
 */
char *
symfonic_meter_dup_key (SymfonicStream *stream,
                        gboolean        tenant,
                        gboolean        principal)
{
  const char *tenant_id = symfonic_meter_get_tenant (stream);

  if (!principal)
    return g_strconcat ("t:", tenant_id, NULL);
  if (!tenant)
    return g_strconcat ("p:", symfonic_meter_get_principal (stream), NULL);

  return g_strdup_printf ("tp:%" G_GSIZE_FORMAT ":%s:%s", strlen (tenant_id), tenant_id,
                          symfonic_meter_get_principal (stream));
}

/**
 * symfonic_meter_ensure_store:
 * @store: (inout): a metering stage's store
 *
 * A stage that names no store counts in one of its own, in this process,
 * which lives and dies with its streams: its leases never expire.
 */
void
symfonic_meter_ensure_store (SymfonicMeterStore **store)
{
  if (*store == NULL)
    *store = SYMFONIC_METER_STORE (symfonic_memory_store_new (0));
}

/**
 * symfonic_meter_param_spec_store:
 *
 * Returns: (transfer floating): the spec of a metering stage's `store`
 *   property
 */
GParamSpec *
symfonic_meter_param_spec_store (void)
{
  return g_param_spec_object ("store", "Store",
                              "Where the stage keeps its counts: a [store:NAME] of the pipeline file, shared with "
                              "every stage naming it, or a registered store type; memory (this stage, this "
                              "process) when unset",
                              SYMFONIC_TYPE_METER_STORE,
                              G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
}

/**
 * symfonic_meter_check_store:
 * @stage: a metering stage
 * @store: (nullable): its store
 * @error: return location for a #GError
 *
 * A programming error: the pipeline loader always initializes a stage,
 * which gives it its store, before it admits anything.
 *
 * Returns: %TRUE if @stage has its store
 */
gboolean
symfonic_meter_check_store (SymfonicStage       *stage,
                            SymfonicMeterStore  *store,
                            GError             **error)
{
  if (G_LIKELY (store != NULL))
    return TRUE;

  g_critical ("%s: admitting before g_initable_init()", G_OBJECT_TYPE_NAME (stage));
  g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_FAILED, "The stage %s is not initialized",
               G_OBJECT_TYPE_NAME (stage));
  return FALSE;
}

/**
 * symfonic_meter_admit_finish:
 * @stage: a metering stage
 * @result: the #GAsyncResult of its admit_async hook
 * @error: return location for a #GError
 *
 * The metering stages' admit_finish hook: their admit_async hook returns
 * through a task whether the store's answer let the stream in.
 *
 * Returns: %TRUE if the stream is admitted
 */
gboolean
symfonic_meter_admit_finish (SymfonicStage  *stage,
                             GAsyncResult   *result,
                             GError        **error)
{
  g_return_val_if_fail (g_task_is_valid (result, stage), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}
