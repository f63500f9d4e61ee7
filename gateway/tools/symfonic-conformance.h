/* symfonic-conformance.h: transcripts through every route, checked
 * against the stream contract
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

G_BEGIN_DECLS

/* The route kinds a transcript is played through. */
typedef enum {
  SYMFONIC_CONFORMANCE_TYPED,
  SYMFONIC_CONFORMANCE_CHUNKS,
  SYMFONIC_CONFORMANCE_CHUNKS_10,
  SYMFONIC_CONFORMANCE_CHAT,
  SYMFONIC_CONFORMANCE_OPENAI,
  SYMFONIC_CONFORMANCE_ANTHROPIC,
  /* the typed route at the recorded pace, with heartbeats every second */
  SYMFONIC_CONFORMANCE_PACED,
  SYMFONIC_CONFORMANCE_N_ROUTES,
} SymfonicConformanceRoute;

/* What one run gave its client, reduced to what runs are compared by,
 * and what it broke of the contract. */
typedef struct
{
  char                     *transcript;
  SymfonicConformanceRoute  route;
  char                     *chunking;
  /* the success terminal (or a 200 answer), not an error */
  gboolean                  success;
  /* the answer as the client got it, and why it ended (typed routes) */
  char                     *text;
  char                     *finish_reason;
  /* the kinds of frames, in order: equal for equal streams */
  char                     *shape;
  /* the usage a provider route published, or -1 */
  gint64                    input_tokens;
  gint64                    output_tokens;
  guint                     heartbeats;
  /* each a sentence naming the rule broken */
  GPtrArray                *violations;
} SymfonicConformanceResult;

SymfonicConformanceResult *symfonic_conformance_result_new   (const char                *transcript,
                                                             SymfonicConformanceRoute   route,
                                                             const char                *chunking);
void                       symfonic_conformance_result_free  (SymfonicConformanceResult *result);
void                       symfonic_conformance_check_response (SymfonicConformanceResult *result,
                                                             guint                      status,
                                                             const char                *content_type,
                                                             const char                *body);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicConformanceResult, symfonic_conformance_result_free)

typedef struct _SymfonicConformance SymfonicConformance;

SymfonicConformance *symfonic_conformance_new            (SymfonicRegistry         *registry,
                                                          const char               *folder,
                                                          GError                  **error);
void                 symfonic_conformance_free           (SymfonicConformance      *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicConformance, symfonic_conformance_free)

const char * const  *symfonic_conformance_list           (SymfonicConformance      *self);
SymfonicRecording   *symfonic_conformance_get_recording  (SymfonicConformance      *self,
                                                          const char               *name);
const char          *symfonic_conformance_route_name     (SymfonicConformanceRoute  route);

void                 symfonic_conformance_add            (SymfonicConformance      *self,
                                                          const char               *name,
                                                          SymfonicConformanceRoute  route,
                                                          const char               *chunking);
GPtrArray           *symfonic_conformance_run            (SymfonicConformance      *self);

void                 symfonic_conformance_expect         (SymfonicConformance       *self,
                                                          SymfonicConformanceResult *result,
                                                          SymfonicConformanceResult *reference);

gboolean             symfonic_conformance_recorded_usage (SymfonicRecording        *recording,
                                                          gint64                   *input_tokens,
                                                          gint64                   *output_tokens);
gint64               symfonic_conformance_longest_pause  (SymfonicRecording        *recording);

G_END_DECLS
