/* symfonic-route.h: an HTTP path bound to a source and a chain of stages
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <glib-object.h>

#include "symfonic-error-frame.h"
#include "symfonic-source.h"
#include "symfonic-stage.h"
#include "symfonic-stream-cap-store.h"
#include "symfonic-types.h"

G_BEGIN_DECLS

/**
 * SymfonicRouteKind:
 * @SYMFONIC_ROUTE_KIND_TYPED: a typed Server-Sent-Events stream
 * @SYMFONIC_ROUTE_KIND_CHUNKS: an untyped stream of `StreamChunk`s
 * @SYMFONIC_ROUTE_KIND_CHAT: one JSON `AgentResponse`
 * @SYMFONIC_ROUTE_KIND_RESUME: one JSON `AgentResponse` for a paused run
 * @SYMFONIC_ROUTE_KIND_OPENAI: OpenAI's chat completions API: `POST
 *   {path}/chat/completions` (streamed or not) and `GET {path}/models`
 * @SYMFONIC_ROUTE_KIND_ANTHROPIC: Anthropic's messages API: `POST
 *   {path}/messages` (streamed or not)
 * @SYMFONIC_ROUTE_KIND_RUNS: `GET {path}/{run_id}/stream`: the frames of a
 *   resumable run, from the one after `Last-Event-ID`
 *
 * What a route answers with.
 */
typedef enum {
  SYMFONIC_ROUTE_KIND_TYPED,
  SYMFONIC_ROUTE_KIND_CHUNKS,
  SYMFONIC_ROUTE_KIND_CHAT,
  SYMFONIC_ROUTE_KIND_RESUME,
  SYMFONIC_ROUTE_KIND_OPENAI,
  SYMFONIC_ROUTE_KIND_ANTHROPIC,
  SYMFONIC_ROUTE_KIND_RUNS,
} SymfonicRouteKind;

/**
 * SYMFONIC_ROUTE_MAX_DURATION_LIMIT:
 *
 * The largest #SymfonicRoute:max-duration, in seconds (one week).
 */
#define SYMFONIC_ROUTE_MAX_DURATION_LIMIT (7 * 24 * 3600)

/**
 * SYMFONIC_ROUTE_DEFAULT_HOOK_TIMEOUT:
 *
 * The default #SymfonicRoute:hook-timeout, in seconds.
 */
#define SYMFONIC_ROUTE_DEFAULT_HOOK_TIMEOUT 10

/**
 * SYMFONIC_ROUTE_MAX_STREAMS_LIMIT:
 *
 * The largest #SymfonicRoute:max-streams and
 * #SymfonicRoute:max-streams-per-tenant.
 */
#define SYMFONIC_ROUTE_MAX_STREAMS_LIMIT 1000000

/**
 * SYMFONIC_ROUTE_DEFAULT_STALL_TIMEOUT:
 *
 * The default #SymfonicRoute:stall-timeout, in seconds.
 */
#define SYMFONIC_ROUTE_DEFAULT_STALL_TIMEOUT 30

/**
 * SYMFONIC_ROUTE_DEFAULT_MAX_USAGE_TOKENS:
 *
 * The default #SymfonicRoute:max-usage-tokens: above the largest context
 * windows models have, far below what would lock a budget for long.
 */
#define SYMFONIC_ROUTE_DEFAULT_MAX_USAGE_TOKENS G_GUINT64_CONSTANT (2000000)

/**
 * SYMFONIC_ROUTE_MAX_USAGE_TOKENS_LIMIT:
 *
 * The largest #SymfonicRoute:max-usage-tokens.
 */
#define SYMFONIC_ROUTE_MAX_USAGE_TOKENS_LIMIT G_GUINT64_CONSTANT (1000000000000)

/**
 * SYMFONIC_ROUTE_MAX_RESUME_FRAMES:
 *
 * The largest #SymfonicRoute:resume-frames.
 */
#define SYMFONIC_ROUTE_MAX_RESUME_FRAMES 1000000

/**
 * SYMFONIC_ROUTE_DEFAULT_RESUME_FRAMES:
 *
 * The default #SymfonicRoute:resume-frames.
 */
#define SYMFONIC_ROUTE_DEFAULT_RESUME_FRAMES 4096

/**
 * SYMFONIC_ROUTE_MIN_RESUME_BYTES:
 *
 * The smallest #SymfonicRoute:resume-bytes.
 */
#define SYMFONIC_ROUTE_MIN_RESUME_BYTES 1024

/**
 * SYMFONIC_ROUTE_MAX_RESUME_BYTES:
 *
 * The largest #SymfonicRoute:resume-bytes.
 */
#define SYMFONIC_ROUTE_MAX_RESUME_BYTES (1024 * 1024 * 1024)

/**
 * SYMFONIC_ROUTE_DEFAULT_RESUME_BYTES:
 *
 * The default #SymfonicRoute:resume-bytes.
 */
#define SYMFONIC_ROUTE_DEFAULT_RESUME_BYTES (4 * 1024 * 1024)

/**
 * SYMFONIC_ROUTE_DEFAULT_RESUME_SECONDS:
 *
 * The default #SymfonicRoute:resume-seconds.
 */
#define SYMFONIC_ROUTE_DEFAULT_RESUME_SECONDS 300

/**
 * SYMFONIC_ROUTE_DEFAULT_RESUME_TOKEN_SECONDS:
 *
 * The default #SymfonicRoute:resume-token-seconds: a run of the default
 * pipeline's longest (600 seconds) and its default resume-seconds.
 */
#define SYMFONIC_ROUTE_DEFAULT_RESUME_TOKEN_SECONDS 900

#define SYMFONIC_TYPE_ROUTE (symfonic_route_get_type ())

G_DECLARE_FINAL_TYPE (SymfonicRoute, symfonic_route, SYMFONIC, ROUTE, GObject)

SymfonicRoute     *symfonic_route_new          (const char         *name,
                                                const char         *path,
                                                SymfonicRouteKind   kind,
                                                SymfonicSource     *source);
void               symfonic_route_add_stage    (SymfonicRoute      *self,
                                                SymfonicStage      *stage);
const char        *symfonic_route_get_name     (SymfonicRoute      *self);
const char        *symfonic_route_get_path     (SymfonicRoute      *self);
const char        *symfonic_route_get_release_line (SymfonicRoute  *self);
void               symfonic_route_set_release_line (SymfonicRoute  *self,
                                                    const char     *release_line);
guint              symfonic_route_get_max_duration (SymfonicRoute  *self);
void               symfonic_route_set_max_duration (SymfonicRoute  *self,
                                                    guint           seconds);
guint              symfonic_route_get_hook_timeout (SymfonicRoute  *self);
void               symfonic_route_set_hook_timeout (SymfonicRoute  *self,
                                                    guint           seconds);
guint              symfonic_route_get_max_streams (SymfonicRoute   *self);
void               symfonic_route_set_max_streams (SymfonicRoute   *self,
                                                   guint            max_streams);
guint              symfonic_route_get_max_streams_per_tenant (SymfonicRoute *self);
void               symfonic_route_set_max_streams_per_tenant (SymfonicRoute *self,
                                                              guint          max_streams);
guint              symfonic_route_get_stall_timeout (SymfonicRoute *self);
void               symfonic_route_set_stall_timeout (SymfonicRoute *self,
                                                     guint          seconds);
guint64            symfonic_route_get_max_usage_tokens (SymfonicRoute *self);
SymfonicStreamCapStore *symfonic_route_get_cap_store (SymfonicRoute          *self);
void               symfonic_route_set_cap_store  (SymfonicRoute          *self,
                                                  SymfonicStreamCapStore *store);
void               symfonic_route_set_max_usage_tokens (SymfonicRoute *self,
                                                        guint64        tokens);
guint              symfonic_route_get_heartbeat_seconds (SymfonicRoute *self);
void               symfonic_route_set_heartbeat_seconds (SymfonicRoute *self,
                                                         guint          seconds);
gboolean           symfonic_route_get_resume        (SymfonicRoute *self);
void               symfonic_route_set_resume        (SymfonicRoute *self,
                                                     gboolean       resume);
guint              symfonic_route_get_resume_frames (SymfonicRoute *self);
void               symfonic_route_set_resume_frames (SymfonicRoute *self,
                                                     guint          frames);
guint              symfonic_route_get_resume_bytes  (SymfonicRoute *self);
void               symfonic_route_set_resume_bytes  (SymfonicRoute *self,
                                                     guint          bytes);
guint              symfonic_route_get_resume_seconds (SymfonicRoute *self);
void               symfonic_route_set_resume_seconds (SymfonicRoute *self,
                                                      guint          seconds);
const char * const *symfonic_route_get_cors_origins (SymfonicRoute     *self);
void               symfonic_route_set_cors_origins (SymfonicRoute      *self,
                                                    const char * const *origins);
guint              symfonic_route_get_resume_token_seconds (SymfonicRoute *self);
void               symfonic_route_set_resume_token_seconds (SymfonicRoute *self,
                                                            guint          seconds);
SymfonicRouteKind  symfonic_route_get_kind     (SymfonicRoute      *self);
SymfonicSource    *symfonic_route_get_source   (SymfonicRoute      *self);
guint              symfonic_route_get_n_stages (SymfonicRoute      *self);
SymfonicStage     *symfonic_route_get_stage    (SymfonicRoute      *self,
                                                guint               position);
SymfonicErrorMapper *symfonic_route_get_error_mapper (SymfonicRoute *self);
SymfonicErrorFrame *symfonic_route_map_error   (SymfonicRoute      *self,
                                                const GError       *error);

G_END_DECLS
