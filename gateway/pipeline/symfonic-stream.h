/* symfonic-stream.h: one request's journey through a pipeline
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <gio/gio.h>

#include "symfonic-event.h"
#include "symfonic-invocation.h"
#include "symfonic-types.h"

G_BEGIN_DECLS

/**
 * SymfonicFlowReturn:
 * @SYMFONIC_FLOW_OK: push on
 * @SYMFONIC_FLOW_WAIT: the client is behind, or its first delta just went
 *   out and the worker lets other work go first: stop reading the upstream
 *   until the stream's ready function runs (the event was taken)
 * @SYMFONIC_FLOW_OVER: the stream is over: push nothing more, and end the
 *   upstream with symfonic_stream_push_end()
 *
 * What symfonic_stream_push() tells a source, so that a slow client slows
 * its upstream down instead of piling events up in the gateway.
 */
typedef enum {
  SYMFONIC_FLOW_OK,
  SYMFONIC_FLOW_WAIT,
  SYMFONIC_FLOW_OVER,
} SymfonicFlowReturn;

/**
 * SymfonicStreamReadyFunc:
 * @stream: the stream that can take events again
 * @user_data: the data given to symfonic_stream_set_ready_func()
 *
 * Called once after symfonic_stream_push() returned %SYMFONIC_FLOW_WAIT,
 * when the stream can take events again or ended (symfonic_stream_is_over()
 * tells which), on the stream's thread.
 */
typedef void (*SymfonicStreamReadyFunc) (SymfonicStream *stream,
                                         gpointer        user_data);

#define SYMFONIC_TYPE_STREAM (symfonic_stream_get_type ())

G_DECLARE_FINAL_TYPE (SymfonicStream, symfonic_stream, SYMFONIC, STREAM, GObject)

SymfonicStream     *symfonic_stream_new             (SymfonicRoute        *route,
                                                     SymfonicInvocation   *invocation);
SymfonicRoute      *symfonic_stream_get_route       (SymfonicStream       *self);
SymfonicInvocation *symfonic_stream_get_invocation  (SymfonicStream       *self);
GCancellable       *symfonic_stream_get_cancellable (SymfonicStream       *self);
gint64              symfonic_stream_get_start_time  (SymfonicStream       *self);
gboolean            symfonic_stream_is_over         (SymfonicStream       *self);
const char         *symfonic_stream_get_release_line (SymfonicStream      *self);
void                symfonic_stream_set_release_line (SymfonicStream      *self,
                                                     const char           *release_line);
void                symfonic_stream_hold_head       (SymfonicStream       *self);
gboolean            symfonic_stream_get_holds_head  (SymfonicStream       *self);
void                symfonic_stream_mark_near_limit (SymfonicStream       *self);
void                symfonic_stream_set_response_header (SymfonicStream   *self,
                                                     const char           *name,
                                                     const char           *value);
const char         *symfonic_stream_get_response_header (SymfonicStream   *self,
                                                     const char           *name);
char              **symfonic_stream_list_response_headers (SymfonicStream *self);
void                symfonic_stream_limit_output_tokens (SymfonicStream   *self,
                                                     guint64               max_tokens);
void                symfonic_stream_discard_usage   (SymfonicStream       *self);
gboolean            symfonic_stream_add_usage       (SymfonicStream       *self,
                                                     guint64               input_tokens,
                                                     guint64               output_tokens,
                                                     GError              **error);
void                symfonic_stream_get_usage       (SymfonicStream       *self,
                                                     guint64              *input_tokens,
                                                     guint64              *output_tokens,
                                                     gboolean             *reported);

void                symfonic_stream_emit            (SymfonicStream       *self,
                                                     SymfonicEvent        *event);

SymfonicFlowReturn  symfonic_stream_push            (SymfonicStream       *self,
                                                     SymfonicEvent        *event);
void                symfonic_stream_set_ready_func  (SymfonicStream       *self,
                                                     SymfonicStreamReadyFunc func,
                                                     gpointer              user_data,
                                                     GDestroyNotify        destroy);
void                symfonic_stream_push_end        (SymfonicStream       *self,
                                                     const GError         *error);

gpointer            symfonic_stream_get_stage_data  (SymfonicStream       *self,
                                                     SymfonicStage        *stage);
void                symfonic_stream_set_stage_data  (SymfonicStream       *self,
                                                     SymfonicStage        *stage,
                                                     gpointer              data,
                                                     GDestroyNotify        destroy);
void                symfonic_stream_set_alarm       (SymfonicStream       *self,
                                                     SymfonicStage        *stage,
                                                     gint64                deadline_us);
GObject            *symfonic_stream_get_stage_state (SymfonicStream       *self,
                                                     SymfonicStage        *stage);
void                symfonic_stream_set_stage_state (SymfonicStream       *self,
                                                     SymfonicStage        *stage,
                                                     GObject              *state);

G_END_DECLS
