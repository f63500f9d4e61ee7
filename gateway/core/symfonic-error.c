/* symfonic-error.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-error.h"

/**
 * symfonic_error_quark:
 *
 * The error domain of the gateway's own failures, with the codes of
 * #SymfonicError: what a stage, a source or the loader fails with, and
 * what the error map turns into a status and a wire code.
 *
 * Returns: the #GQuark of the domain
 */
G_DEFINE_QUARK (symfonic-error-quark, symfonic_error)

/* The published wire codes. They are contract (clients branch on them), so
 * they live in one table rather than being derived from enum nicks. */
static const char * const code_names[] = {
  [SYMFONIC_ERROR_FAILED] = NULL,
  [SYMFONIC_ERROR_BAD_REQUEST] = "bad_request",
  [SYMFONIC_ERROR_UNAUTHORIZED] = "unauthorized",
  [SYMFONIC_ERROR_FORBIDDEN] = "forbidden",
  [SYMFONIC_ERROR_NOT_FOUND] = "not_found",
  [SYMFONIC_ERROR_METHOD_NOT_ALLOWED] = "method_not_allowed",
  [SYMFONIC_ERROR_PAYLOAD_TOO_LARGE] = "payload_too_large",
  [SYMFONIC_ERROR_UNSUPPORTED_MEDIA_TYPE] = "unsupported_media_type",
  [SYMFONIC_ERROR_RATE_LIMITED] = "rate_limited",
  [SYMFONIC_ERROR_BUDGET_EXCEEDED] = "budget_exceeded",
  [SYMFONIC_ERROR_CONFLICT] = "conflict",
  [SYMFONIC_ERROR_UPSTREAM] = "upstream_error",
  [SYMFONIC_ERROR_UPSTREAM_UNAVAILABLE] = "upstream_unavailable",
  [SYMFONIC_ERROR_UPSTREAM_TIMEOUT] = "upstream_timeout",
  [SYMFONIC_ERROR_CONFIG] = NULL,
  [SYMFONIC_ERROR_PLUGIN] = NULL,
  [SYMFONIC_ERROR_OVERLOADED] = "overloaded",
  [SYMFONIC_ERROR_SLOW_CLIENT] = "slow_client",
  [SYMFONIC_ERROR_SHUTTING_DOWN] = "shutting_down",
  [SYMFONIC_ERROR_GONE] = "gone",
  /* what a client sees of a store failure is the store's on-failure
   * policy's business (a refusal, or admission as if it had answered) */
  [SYMFONIC_ERROR_STORE_UNAVAILABLE] = NULL,
  [SYMFONIC_ERROR_STORE_TIMEOUT] = NULL,
  [SYMFONIC_ERROR_UPSTREAM_REFUSED] = "upstream_refused",
};

/**
 * symfonic_error_code_name:
 * @code: a #SymfonicError
 *
 * The machine-readable code that error frames carry for @code, such as
 * `"rate_limited"`. Internal faults (%SYMFONIC_ERROR_FAILED,
 * %SYMFONIC_ERROR_CONFIG, %SYMFONIC_ERROR_PLUGIN and the store failures)
 * carry none.
 *
 * Returns: (nullable): the code, or %NULL when @code publishes none
 */
const char *
symfonic_error_code_name (SymfonicError code)
{
  g_return_val_if_fail ((guint) code < G_N_ELEMENTS (code_names), NULL);

  return code_names[code];
}
