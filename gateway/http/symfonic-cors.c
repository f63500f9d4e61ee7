/* symfonic-cors.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>

#include "symfonic-cors-private.h"
#include "symfonic-error.h"
#include "symfonic-exchange-private.h"
#include "symfonic-route-private.h"

/* A page of another origin may call a route whose cors-origins name its
 * origin (Fetch standard, "CORS protocol"): its preflight is answered
 * from the route's settings alone, before anything else of the request
 * is looked at, and every answer of the route, refusals included, lets
 * the page read it. No answer repeats what the client sent: the origin
 * allowed is the route's own entry, the headers and methods fixed. No
 * credentials in the CORS sense (cookies) are ever allowed: the gateway
 * uses none, and a page sends its token in Authorization. */

/* how long a browser may keep a preflight's answer, in seconds: short
 * enough that a changed pipeline is seen soon */
#define PREFLIGHT_MAX_AGE "600"

/* The request headers of the gateway's contract a page may send. */
static const char *
allowed_headers (SymfonicRouteKind kind)
{
#define CONTRACT_HEADERS "Authorization, Content-Type, Last-Event-ID, X-Tenant-ID, X-Symfonic-Release-Line, " \
                         "traceparent, tracestate"
  switch (kind)
    {
    case SYMFONIC_ROUTE_KIND_ANTHROPIC:
      return CONTRACT_HEADERS ", x-api-key, anthropic-version, anthropic-beta";
    case SYMFONIC_ROUTE_KIND_TYPED:
    case SYMFONIC_ROUTE_KIND_CHUNKS:
    case SYMFONIC_ROUTE_KIND_CHAT:
    case SYMFONIC_ROUTE_KIND_RESUME:
    case SYMFONIC_ROUTE_KIND_OPENAI:
    case SYMFONIC_ROUTE_KIND_RUNS:
    default:
      return CONTRACT_HEADERS;
    }
#undef CONTRACT_HEADERS
}

/* The response headers of the gateway's a page may read: a browser hides
 * all but a few unless told. */
static const char *
exposed_headers (SymfonicRouteKind kind)
{
#define GATEWAY_HEADERS "X-Symfonic-Run-ID, X-Symfonic-Resume-Token, Retry-After, WWW-Authenticate"
  switch (kind)
    {
    case SYMFONIC_ROUTE_KIND_OPENAI:
      return GATEWAY_HEADERS ", x-request-id";
    case SYMFONIC_ROUTE_KIND_ANTHROPIC:
      return GATEWAY_HEADERS ", request-id, X-Symfonic-Token-Count";
    case SYMFONIC_ROUTE_KIND_TYPED:
    case SYMFONIC_ROUTE_KIND_CHUNKS:
    case SYMFONIC_ROUTE_KIND_CHAT:
    case SYMFONIC_ROUTE_KIND_RESUME:
    case SYMFONIC_ROUTE_KIND_RUNS:
    default:
      return GATEWAY_HEADERS;
    }
#undef GATEWAY_HEADERS
}

typedef void (*HeaderFunc) (const char *name,
                            const char *value,
                            gpointer    data);

/* The CORS headers of an answer of @route to @message, but those only a
 * preflight's answer has. */
static void
foreach_header (SoupServerMessage *message,
                SymfonicRoute     *route,
                gboolean           preflight,
                HeaderFunc         func,
                gpointer           data)
{
  const char * const *origins = symfonic_route_get_cors_origins (route);
  const char *origin = soup_message_headers_get_one (soup_server_message_get_request_headers (message), "Origin");
  const char *allowed;

  if (origins == NULL)
    return;
  /* the answer depends on the origin: a cache must not give one origin's
   * to another, whichever asked first */
  if (!g_str_equal (origins[0], "*"))
    func ("Vary", "Origin", data);
  allowed = symfonic_route_match_origin (route, origin);
  if (allowed == NULL)
    return;
  func ("Access-Control-Allow-Origin", allowed, data);
  if (!preflight)
    func ("Access-Control-Expose-Headers", exposed_headers (symfonic_route_get_kind (route)), data);
}

static void
set_response_header (const char *name,
                     const char *value,
                     gpointer    data)
{
  soup_message_headers_replace (data, name, value);
}

static void
set_frame_header (const char *name,
                  const char *value,
                  gpointer    data)
{
  symfonic_error_frame_set_header (data, name, value);
}

static gboolean
is_preflight (SoupServerMessage *message)
{
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (message);

  return soup_server_message_get_method (message) == SOUP_METHOD_OPTIONS &&
         soup_message_headers_get_one (headers, "Origin") != NULL &&
         soup_message_headers_get_one (headers, "Access-Control-Request-Method") != NULL;
}

/* Sets the CORS headers of @route's answer to @message, whatever the
 * answer turns out to be: set on the head, they go out with a refusal as
 * with a stream. */
void
symfonic_cors_apply (SoupServerMessage *message,
                     SymfonicRoute     *route)
{
  if (!is_preflight (message))
    foreach_header (message, route, FALSE, set_response_header, soup_server_message_get_response_headers (message));
}

/* An answer written without the message's headers (an early refusal)
 * carries them in its frame. */
void
symfonic_cors_add_to_frame (SoupServerMessage  *message,
                            SymfonicRoute      *route,
                            SymfonicErrorFrame *frame)
{
  foreach_header (message, route, FALSE, set_frame_header, frame);
}

/* Answers @message if it is a CORS preflight for @route, which takes
 * @method: 204 with what a page of an allowed origin may send, or a 403
 * refusal for any other origin. The preflight costs its head only: it
 * has no body and runs no stage. Returns %FALSE, having done nothing,
 * for any other request, and on a route without cors-origins, which
 * answers a preflight as any other OPTIONS request. */
gboolean
symfonic_cors_answer_preflight (SoupServerMessage *message,
                                SymfonicRoute     *route,
                                const char        *method)
{
  SoupMessageHeaders *headers = soup_server_message_get_response_headers (message);
  const char *origin;

  if (symfonic_route_get_cors_origins (route) == NULL || !is_preflight (message))
    return FALSE;

  foreach_header (message, route, TRUE, set_response_header, headers);
  origin = soup_message_headers_get_one (soup_server_message_get_request_headers (message), "Origin");
  if (symfonic_route_match_origin (route, origin) == NULL)
    {
      g_autoptr(GError) error = g_error_new_literal (SYMFONIC_ERROR, SYMFONIC_ERROR_FORBIDDEN,
                                                     "Pages of this origin may not call this route");
      g_autoptr(SymfonicErrorFrame) frame = symfonic_route_map_error (route, error);

      symfonic_exchange_respond_error (message, route, frame);
      return TRUE;
    }

  soup_message_headers_replace (headers, "Access-Control-Allow-Methods", method);
  soup_message_headers_replace (headers, "Access-Control-Allow-Headers",
                                allowed_headers (symfonic_route_get_kind (route)));
  soup_message_headers_replace (headers, "Access-Control-Max-Age", PREFLIGHT_MAX_AGE);
  soup_server_message_set_status (message, SOUP_STATUS_NO_CONTENT, NULL);

  return TRUE;
}
