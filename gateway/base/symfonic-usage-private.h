/* symfonic-usage-private.h: the token counts an upstream reports
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <json-glib/json-glib.h>

#include "symfonic-stream.h"

G_BEGIN_DECLS

/* An upstream's token counts, each -1 where it did not give one; invalid
 * when a count was there but was not a count. */
typedef struct
{
  gint64   input;
  gint64   output;
  gboolean invalid;
} SymfonicUsageCounts;

G_GNUC_INTERNAL
gboolean symfonic_usage_read_count  (JsonObject          *object,
                                     const char          *name,
                                     guint64             *count);
G_GNUC_INTERNAL
void     symfonic_usage_read_counts (JsonObject          *usage,
                                     SymfonicUsageCounts *counts);

/* What a provider source learnt of its answer that the routes publish
 * and the events do not carry: the model that really answered and the
 * details of its usage, which the encoders read when they write the
 * message's first frame and its end. It hangs on the stream, which the
 * source and the encoder see; both run on the stream's worker. */
typedef struct
{
  /* the upstream's own name of its model, or NULL */
  char     *model;
  /* each -1 while the upstream said nothing of it */
  gint64    cache_read;
  gint64    cache_creation;
  gint64    reasoning;
  /* the stream's input count leaves the cached tokens out (Anthropic's
   * input_tokens), where OpenAI's prompt_tokens holds them */
  gboolean  input_excludes_cache;
} SymfonicUpstreamFacts;

G_GNUC_INTERNAL
SymfonicUpstreamFacts *symfonic_upstream_facts_peek   (SymfonicStream *stream);
G_GNUC_INTERNAL
SymfonicUpstreamFacts *symfonic_upstream_facts_ensure (SymfonicStream *stream);

G_END_DECLS
