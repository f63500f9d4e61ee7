/* symfonic-provider-request-private.h: the request bodies of the provider route kinds
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <json-glib/json-glib.h>

#include "symfonic-encoder-private.h"
#include "symfonic-invocation.h"
#include "symfonic-invocation-private.h"

G_BEGIN_DECLS

/* What a route's source is to be sent: a request in its model API, or
 * none for a source that is an agent, and the most tokens it produces
 * (0 for no cap). */
typedef struct
{
  SymfonicProviderApi api;
  guint64             max_tokens;
} SymfonicProviderTarget;

G_GNUC_INTERNAL
gboolean symfonic_openai_request_decode    (JsonNode                     *body,
                                            const SymfonicProviderTarget *target,
                                            SymfonicInvocation           *invocation,
                                            SymfonicEncoderFlags         *flags,
                                            GError                      **error);
G_GNUC_INTERNAL
gboolean symfonic_anthropic_request_decode (JsonNode                     *body,
                                            const SymfonicProviderTarget *target,
                                            SymfonicInvocation           *invocation,
                                            SymfonicEncoderFlags         *flags,
                                            GError                      **error);
G_GNUC_INTERNAL
gboolean symfonic_responses_request_decode (JsonNode                     *body,
                                            const SymfonicProviderTarget *target,
                                            SymfonicInvocation           *invocation,
                                            SymfonicEncoderFlags         *flags,
                                            GError                      **error);

G_END_DECLS
