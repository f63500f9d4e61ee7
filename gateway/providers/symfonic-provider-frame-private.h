/* symfonic-provider-frame-private.h: what a provider's frame says
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <json-glib/json-glib.h>

#include "symfonic-json-scan-private.h"
#include "symfonic-usage-private.h"

G_BEGIN_DECLS

G_GNUC_INTERNAL
JsonNode   *symfonic_provider_parse_json    (const char  *data,
                                            gsize        length,
                                            GError     **error);
G_GNUC_INTERNAL
const char *symfonic_provider_json_string  (JsonObject  *object,
                                            const char  *name);
G_GNUC_INTERNAL
JsonObject *symfonic_provider_json_object  (JsonObject  *object,
                                            const char  *name);
G_GNUC_INTERNAL
JsonArray  *symfonic_provider_json_array   (JsonObject  *object,
                                            const char  *name);

/* What an OpenAI chunk that is no error asks of the request, in the order
 * it is done; every pointer may be NULL. */
typedef struct
{
  const char            *model;
  SymfonicUsageCounts    usage;
  /* the usage's details, each -1 when not given */
  gint64                 cached_tokens;
  gint64                 reasoning_tokens;
  const char            *thinking;
  const char            *text;
  /* a refusal's text, which takes the place of the content */
  const char            *refusal;
  /* the choice's logprobs, when the client asked for them */
  JsonObject            *logprobs;
  JsonArray             *tool_calls;
  const char            *finish_reason;
} SymfonicOpenaiChunk;

G_GNUC_INTERNAL
gboolean symfonic_openai_chunk_scan    (const char           *data,
                                        gsize                 length,
                                        SymfonicJsonScanMemo *memo,
                                        GString              *text,
                                        SymfonicOpenaiChunk  *chunk);
G_GNUC_INTERNAL
gboolean symfonic_openai_chunk_read    (JsonObject          *object,
                                        SymfonicOpenaiChunk *chunk);

/* An Anthropic frame that is a text or thinking delta, or a ping, which
 * has neither. */
typedef struct
{
  const char *text;
  const char *thinking;
} SymfonicAnthropicDelta;

G_GNUC_INTERNAL
gboolean symfonic_anthropic_delta_scan (const char             *data,
                                        gsize                   length,
                                        SymfonicJsonScanMemo   *memo,
                                        GString                *text,
                                        SymfonicAnthropicDelta *delta);
G_GNUC_INTERNAL
gboolean symfonic_anthropic_delta_read (JsonObject             *frame,
                                        SymfonicAnthropicDelta *delta);

G_END_DECLS
