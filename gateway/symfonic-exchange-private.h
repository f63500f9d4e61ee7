/* symfonic-exchange-private.h: one HTTP request to an invocation route
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <libsoup/soup.h>

#include "symfonic-error-frame.h"
#include "symfonic-metrics-private.h"
#include "symfonic-route.h"

G_BEGIN_DECLS

/* The request body limit until a route configures its own. */
#define SYMFONIC_DEFAULT_MAX_BODY (1024 * 1024)

G_GNUC_INTERNAL
void symfonic_exchange_run          (SoupServerMessage  *message,
                                     SymfonicRoute      *route,
                                     SymfonicMetrics    *metrics,
                                     GMainContext       *context);
G_GNUC_INTERNAL
void symfonic_exchange_respond_json (SoupServerMessage  *message,
                                     guint               status,
                                     const char         *body);
G_GNUC_INTERNAL
void symfonic_exchange_respond_error (SoupServerMessage *message,
                                      SymfonicErrorFrame *frame);

G_END_DECLS
