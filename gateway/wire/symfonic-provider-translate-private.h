/* symfonic-provider-translate-private.h: one model API's request in another's words
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Each takes a request body its route already checked and returns the
 * same request in the other API, or refuses, naming the field, what has
 * no faithful counterpart there. The streaming members (`stream`,
 * `stream_options`) are the gateway's and are left out. */
G_GNUC_INTERNAL
JsonObject *symfonic_provider_translate_chat_to_anthropic (JsonObject  *chat,
                                                           GError     **error);
G_GNUC_INTERNAL
JsonObject *symfonic_provider_translate_anthropic_to_chat (JsonObject  *anthropic,
                                                           GError     **error);
G_GNUC_INTERNAL
JsonObject *symfonic_provider_translate_responses_to_chat (JsonObject  *responses,
                                                           GError     **error);

G_END_DECLS
