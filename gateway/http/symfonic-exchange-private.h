/* symfonic-exchange-private.h: one HTTP request to an invocation route
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <libsoup/soup.h>

#include "symfonic-error-frame.h"
#include "symfonic-invocation.h"
#include "symfonic-metrics-private.h"
#include "symfonic-route.h"
#include "symfonic-route-private.h"
#include "symfonic-run-store.h"

G_BEGIN_DECLS

G_GNUC_INTERNAL
SymfonicInvocation *symfonic_exchange_new_invocation (SoupServerMessage *message);
G_GNUC_INTERNAL
void                symfonic_exchange_open          (SoupServerMessage  *message,
                                                     SymfonicRoute      *route,
                                                     SymfonicEndpoint    endpoint,
                                                     guint64             max_body_bytes,
                                                     SymfonicMetrics    *metrics,
                                                     SymfonicRunStore   *run_store,
                                                     GHashTable         *live);
G_GNUC_INTERNAL
gboolean            symfonic_exchange_is_open       (SoupServerMessage  *message);
G_GNUC_INTERNAL
void                symfonic_exchange_run           (SoupServerMessage  *message);
G_GNUC_INTERNAL
void                symfonic_exchange_end_all       (GHashTable         *live);
G_GNUC_INTERNAL
void                symfonic_exchange_abandon_all   (GHashTable         *live);
G_GNUC_INTERNAL
void                symfonic_exchange_respond_json  (SoupServerMessage  *message,
                                                     guint               status,
                                                     const char         *body);
G_GNUC_INTERNAL
char               *symfonic_exchange_dup_error_body (SymfonicRoute     *route,
                                                     SymfonicErrorFrame *frame);
G_GNUC_INTERNAL
void                symfonic_exchange_set_request_id (SoupServerMessage *message,
                                                     SymfonicRoute      *route,
                                                     const char         *id);
G_GNUC_INTERNAL
void                symfonic_exchange_respond_error (SoupServerMessage  *message,
                                                     SymfonicRoute      *route,
                                                     SymfonicErrorFrame *frame);

G_END_DECLS
