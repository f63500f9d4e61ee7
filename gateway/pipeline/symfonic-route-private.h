/* symfonic-route-private.h: what the server does with a route
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-route.h"
#include "symfonic-stage-lane-private.h"
#include "symfonic-stage-private.h"
#include "symfonic-stream.h"
#include "symfonic-stream-cap-private.h"
#include "symfonic-telemetry-private.h"

G_BEGIN_DECLS

/* What a request to one of a route's paths asks for. */
typedef enum {
  SYMFONIC_ENDPOINT_INVOKE,
  /* the model listing of an `openai` or `anthropic` route */
  SYMFONIC_ENDPOINT_MODELS,
  /* one model of that listing, `…/models/{id}` */
  SYMFONIC_ENDPOINT_MODEL,
  /* an `openai` route's Responses API: `POST …/responses` */
  SYMFONIC_ENDPOINT_RESPONSES,
  /* a background response read again: `GET …/responses/{id}` */
  SYMFONIC_ENDPOINT_RESPONSE,
  /* an `anthropic` route's `POST …/messages/count_tokens` */
  SYMFONIC_ENDPOINT_COUNT_TOKENS,
} SymfonicEndpoint;

/* What each stream needs to know of a stage of its route, read once when
 * the stage joined the route rather than for every request (the context
 * lookup takes GType's lock). */
typedef struct
{
  SymfonicAdmissionPhase    phase;
  /* the stage's own context (owned), or NULL when its hooks run inline */
  GMainContext             *context;
  /* the hooks running on that context, or NULL with it */
  SymfonicStageLane        *lane;
  /* its process hook, or NULL when it keeps the default one */
  SymfonicStageProcessFunc  process;
  /* the admission hook tried first, or NULL when it admits asynchronously
   * only */
  SymfonicStageStreamFunc   admit;
  /* it has an admission hook of its own, or a finish hook: the phases
   * its metrics have */
  gboolean                  admits;
  gboolean                  finishes;
} SymfonicRouteStage;

G_GNUC_INTERNAL
char   **symfonic_route_kind_dup_paths      (SymfonicRouteKind  kind,
                                             const char        *path);
G_GNUC_INTERNAL
SymfonicEndpoint symfonic_route_get_endpoint (SymfonicRoute    *self,
                                             const char        *path);
G_GNUC_INTERNAL
const char *symfonic_route_endpoint_method  (SymfonicRoute     *self,
                                             SymfonicEndpoint   endpoint);
G_GNUC_INTERNAL
gboolean symfonic_route_serves_under        (SymfonicRoute     *self,
                                             const char        *path,
                                             const char       **rest);
G_GNUC_INTERNAL
SymfonicAdmitResult symfonic_route_claim_stream (SymfonicRoute          *self,
                                                 SymfonicStream         *stream,
                                                 SymfonicStreamCapFunc   func,
                                                 GError                **error);
G_GNUC_INTERNAL
void     symfonic_route_release_stream      (SymfonicRoute   *self,
                                             SymfonicStream  *stream);
G_GNUC_INTERNAL
void     symfonic_route_share_cap_store     (SymfonicRoute          *self,
                                             SymfonicStreamCapStore *store);
G_GNUC_INTERNAL
guint64  symfonic_route_get_refused_streams (SymfonicRoute   *self,
                                             gboolean         per_tenant);
G_GNUC_INTERNAL
const SymfonicRouteStage *symfonic_route_get_stage_info (SymfonicRoute *self,
                                                         guint          position);

G_GNUC_INTERNAL
const char *symfonic_route_match_origin     (SymfonicRoute     *self,
                                             const char        *origin);
G_GNUC_INTERNAL
gboolean symfonic_route_authenticates       (SymfonicRoute     *self);
G_GNUC_INTERNAL
void     symfonic_route_set_resume_secret   (SymfonicRoute     *self,
                                             GBytes            *secret);
G_GNUC_INTERNAL
GBytes  *symfonic_route_get_resume_secret   (SymfonicRoute     *self);

G_GNUC_INTERNAL
SymfonicRouteStats *symfonic_route_get_stats (SymfonicRoute *self);
G_GNUC_INTERNAL
void        symfonic_route_set_telemetry_names (SymfonicRoute     *self,
                                                const char *const *stage_names,
                                                const char        *source_name,
                                                const char        *source_type);
G_GNUC_INTERNAL
const char *symfonic_route_get_stage_name     (SymfonicRoute   *self,
                                               guint            position);
G_GNUC_INTERNAL
const char *symfonic_route_get_source_name    (SymfonicRoute   *self);
G_GNUC_INTERNAL
const char *symfonic_route_get_provider_name  (SymfonicRoute   *self);
G_GNUC_INTERNAL
const char *symfonic_route_get_model          (SymfonicRoute   *self);

G_END_DECLS
