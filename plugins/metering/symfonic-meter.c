/* symfonic-meter.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

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
