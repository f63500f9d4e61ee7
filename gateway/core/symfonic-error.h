/* symfonic-error.h: the library's error domain
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <glib.h>

G_BEGIN_DECLS

#define SYMFONIC_ERROR (symfonic_error_quark ())

/**
 * SymfonicError:
 * @SYMFONIC_ERROR_FAILED: an unclassified failure; maps to 500 with an opaque detail
 * @SYMFONIC_ERROR_BAD_REQUEST: the request body is malformed or incomplete
 * @SYMFONIC_ERROR_UNAUTHORIZED: no or invalid credentials
 * @SYMFONIC_ERROR_FORBIDDEN: the principal may not act for the tenant
 * @SYMFONIC_ERROR_NOT_FOUND: no route or no such resource
 * @SYMFONIC_ERROR_METHOD_NOT_ALLOWED: the route exists but not for this method
 * @SYMFONIC_ERROR_PAYLOAD_TOO_LARGE: the request body exceeds the limit
 * @SYMFONIC_ERROR_UNSUPPORTED_MEDIA_TYPE: the request body is not JSON
 * @SYMFONIC_ERROR_RATE_LIMITED: the caller exceeded its admission rate
 * @SYMFONIC_ERROR_BUDGET_EXCEEDED: the tenant's token budget is spent
 * @SYMFONIC_ERROR_CONFLICT: the request conflicts with the state of a run
 * @SYMFONIC_ERROR_UPSTREAM: the upstream failed or broke its protocol
 * @SYMFONIC_ERROR_UPSTREAM_UNAVAILABLE: the upstream could not be reached
 * @SYMFONIC_ERROR_UPSTREAM_TIMEOUT: the upstream did not answer in time
 * @SYMFONIC_ERROR_CONFIG: a pipeline file or setting is invalid
 * @SYMFONIC_ERROR_PLUGIN: a plugin could not be loaded or registered
 * @SYMFONIC_ERROR_OVERLOADED: the gateway is at a capacity limit; the
 *   client may retry later
 * @SYMFONIC_ERROR_SLOW_CLIENT: the client reads a stream too slowly: it
 *   took nothing for the route's stall timeout, or fell behind by more
 *   than the connection may hold
 * @SYMFONIC_ERROR_SHUTTING_DOWN: the gateway is stopping and ended the
 *   stream before it finished
 * @SYMFONIC_ERROR_GONE: what was asked for existed and is no longer kept
 *   (frames of a resumable run past its buffer)
 * @SYMFONIC_ERROR_STORE_UNAVAILABLE: a shared store (Redis) could not be
 *   reached, or its connection broke before it answered; whether a
 *   command sent ran is unknown. An internal fault: carries no code
 * @SYMFONIC_ERROR_STORE_TIMEOUT: a shared store did not answer by the
 *   command's deadline; whether the command ran is unknown. An internal
 *   fault: carries no code
 * @SYMFONIC_ERROR_UPSTREAM_REFUSED: the upstream refused the gateway's own
 *   credentials (a provider's 401 or 403): nothing a retry changes
 *
 * Error codes in the %SYMFONIC_ERROR domain. Each carries the machine
 * readable code published in error frames, see symfonic_error_code_name().
 */
typedef enum {
  SYMFONIC_ERROR_FAILED,
  SYMFONIC_ERROR_BAD_REQUEST,
  SYMFONIC_ERROR_UNAUTHORIZED,
  SYMFONIC_ERROR_FORBIDDEN,
  SYMFONIC_ERROR_NOT_FOUND,
  SYMFONIC_ERROR_METHOD_NOT_ALLOWED,
  SYMFONIC_ERROR_PAYLOAD_TOO_LARGE,
  SYMFONIC_ERROR_UNSUPPORTED_MEDIA_TYPE,
  SYMFONIC_ERROR_RATE_LIMITED,
  SYMFONIC_ERROR_BUDGET_EXCEEDED,
  SYMFONIC_ERROR_CONFLICT,
  SYMFONIC_ERROR_UPSTREAM,
  SYMFONIC_ERROR_UPSTREAM_UNAVAILABLE,
  SYMFONIC_ERROR_UPSTREAM_TIMEOUT,
  SYMFONIC_ERROR_CONFIG,
  SYMFONIC_ERROR_PLUGIN,
  SYMFONIC_ERROR_OVERLOADED,
  SYMFONIC_ERROR_SLOW_CLIENT,
  SYMFONIC_ERROR_SHUTTING_DOWN,
  SYMFONIC_ERROR_GONE,
  SYMFONIC_ERROR_STORE_UNAVAILABLE,
  SYMFONIC_ERROR_STORE_TIMEOUT,
  SYMFONIC_ERROR_UPSTREAM_REFUSED,
} SymfonicError;

GQuark       symfonic_error_quark     (void);
const char  *symfonic_error_code_name (SymfonicError code);

G_END_DECLS
