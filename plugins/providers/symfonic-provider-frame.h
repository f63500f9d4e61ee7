/* symfonic-provider-frame.h: what a provider's frame says
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

#include "symfonic-json-scan-private.h"
#include "../common/symfonic-usage.h"

G_BEGIN_DECLS

JsonNode   *symfonic_provider_parse_json    (const char  *data,
                                            gsize        length,
                                            GError     **error);
const char *symfonic_provider_json_string  (JsonObject  *object,
                                            const char  *name);
JsonObject *symfonic_provider_json_object  (JsonObject  *object,
                                            const char  *name);
JsonArray  *symfonic_provider_json_array   (JsonObject  *object,
                                            const char  *name);

/* What an OpenAI chunk that is no error asks of the request, in the order
 * it is done; every pointer may be NULL. */
typedef struct
{
  const char            *model;
  SymfonicUsageCounts    usage;
  const char            *thinking;
  const char            *text;
  JsonArray             *tool_calls;
  const char            *finish_reason;
} SymfonicOpenaiChunk;

gboolean symfonic_openai_chunk_scan    (const char           *data,
                                        gsize                 length,
                                        SymfonicJsonScanMemo *memo,
                                        GString              *text,
                                        SymfonicOpenaiChunk  *chunk);
gboolean symfonic_openai_chunk_read    (JsonObject          *object,
                                        SymfonicOpenaiChunk *chunk);

/* An Anthropic frame that is a text or thinking delta, or a ping, which
 * has neither. */
typedef struct
{
  const char *text;
  const char *thinking;
} SymfonicAnthropicDelta;

gboolean symfonic_anthropic_delta_scan (const char             *data,
                                        gsize                   length,
                                        SymfonicJsonScanMemo   *memo,
                                        GString                *text,
                                        SymfonicAnthropicDelta *delta);
gboolean symfonic_anthropic_delta_read (JsonObject             *frame,
                                        SymfonicAnthropicDelta *delta);

G_END_DECLS
