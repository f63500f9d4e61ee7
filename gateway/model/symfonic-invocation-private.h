/* symfonic-invocation-private.h: what the library keeps of a provider request
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-invocation.h"

G_BEGIN_DECLS

/* The model APIs whose requests the provider routes take and whose
 * bodies the provider sources send. */
typedef enum {
  /* no model API: a source that is an agent (replay, runtime) */
  SYMFONIC_PROVIDER_API_NONE,
  SYMFONIC_PROVIDER_API_OPENAI_CHAT,
  SYMFONIC_PROVIDER_API_ANTHROPIC,
  /* OpenAI's Responses API, which routes take and no source speaks */
  SYMFONIC_PROVIDER_API_OPENAI_RESPONSES,
} SymfonicProviderApi;

G_GNUC_INTERNAL
void        symfonic_invocation_set_provider_body (SymfonicInvocation  *self,
                                                   SymfonicProviderApi  api,
                                                   JsonObject          *body);
G_GNUC_INTERNAL
void        symfonic_invocation_clear_provider_body (SymfonicInvocation *self);
G_GNUC_INTERNAL
JsonObject *symfonic_invocation_get_provider_body (SymfonicInvocation  *self,
                                                   SymfonicProviderApi *api);

G_END_DECLS
