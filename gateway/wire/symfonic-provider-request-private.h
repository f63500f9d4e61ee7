/* symfonic-provider-request-private.h: the request bodies of the provider route kinds
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <json-glib/json-glib.h>

#include "symfonic-encoder-private.h"
#include "symfonic-invocation.h"

G_BEGIN_DECLS

G_GNUC_INTERNAL
gboolean symfonic_openai_request_decode    (JsonNode              *body,
                                            SymfonicInvocation    *invocation,
                                            SymfonicEncoderFlags  *flags,
                                            GError               **error);
G_GNUC_INTERNAL
gboolean symfonic_anthropic_request_decode (JsonNode              *body,
                                            SymfonicInvocation    *invocation,
                                            SymfonicEncoderFlags  *flags,
                                            GError               **error);

G_END_DECLS
