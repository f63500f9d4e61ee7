/* symfonic-upstream-private.h: an HTTP/1.1 client for streaming upstreams
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

#include "symfonic-recording.h"

G_BEGIN_DECLS

/* The library's own: sources reach it through SymfonicHttpSource, so that
 * it can change with them. */

/*
 * SymfonicUpstreamRequest:
 *
 * One request in flight to an upstream, owned by whoever sent it until
 * symfonic_upstream_request_free().
 */
typedef struct _SymfonicUpstreamRequest SymfonicUpstreamRequest;

/*
 * SymfonicUpstreamHandlers:
 * @head: the response head arrived: its status, and its headers through
 *   symfonic_upstream_request_get_header() (during this call only)
 * @body: body bytes, de-chunked, valid during the call only
 * @done: the response ended, to its last byte when @error is %NULL;
 *   nothing is called after it
 *
 * What a request tells its sender, on the thread that sent it. Each
 * handler may pause, resume or free the request.
 */
typedef struct
{
  void (*head) (SymfonicUpstreamRequest *request,
                guint                    status,
                gpointer                 user_data);
  void (*body) (SymfonicUpstreamRequest *request,
                const guint8            *data,
                gsize                    length,
                gpointer                 user_data);
  void (*done) (SymfonicUpstreamRequest *request,
                const GError            *error,
                gpointer                 user_data);
} SymfonicUpstreamHandlers;

#define SYMFONIC_TYPE_UPSTREAM (symfonic_upstream_get_type ())

G_GNUC_INTERNAL
GType symfonic_upstream_get_type (void);
G_DECLARE_FINAL_TYPE (SymfonicUpstream, symfonic_upstream, SYMFONIC, UPSTREAM, GObject)

G_GNUC_INTERNAL
SymfonicUpstream        *symfonic_upstream_new                (const char                     *origin,
                                                               GError                        **error);
G_GNUC_INTERNAL
const char              *symfonic_upstream_get_origin         (SymfonicUpstream               *self);

G_GNUC_INTERNAL
SymfonicUpstreamRequest *symfonic_upstream_send               (SymfonicUpstream               *self,
                                                               const char                     *method,
                                                               const char                     *target,
                                                               const char                     *header_lines,
                                                               const char                     *content_type,
                                                               GBytes                         *body,
                                                               const SymfonicUpstreamHandlers *handlers,
                                                               gpointer                        user_data);
G_GNUC_INTERNAL
SymfonicUpstreamRequest *symfonic_upstream_play               (SymfonicRecording              *recording,
                                                               double                          time_scale,
                                                               const SymfonicUpstreamHandlers *handlers,
                                                               gpointer                        user_data);
G_GNUC_INTERNAL
const char              *symfonic_upstream_request_get_header (SymfonicUpstreamRequest        *request,
                                                               const char                     *name);
G_GNUC_INTERNAL
gboolean                 symfonic_upstream_request_get_header_at (SymfonicUpstreamRequest     *request,
                                                               guint                           index,
                                                               const char                    **name,
                                                               const char                    **value);
G_GNUC_INTERNAL
GBytes                  *symfonic_upstream_request_get_message (SymfonicUpstreamRequest       *request);
G_GNUC_INTERNAL
void                     symfonic_upstream_request_set_timeout (SymfonicUpstreamRequest       *request,
                                                               guint                           seconds);
G_GNUC_INTERNAL
void                     symfonic_upstream_request_set_deadline (SymfonicUpstreamRequest       *request,
                                                                 guint                          seconds);
G_GNUC_INTERNAL
void                     symfonic_upstream_request_pause      (SymfonicUpstreamRequest        *request);
G_GNUC_INTERNAL
void                     symfonic_upstream_request_resume     (SymfonicUpstreamRequest        *request);
G_GNUC_INTERNAL
void                     symfonic_upstream_request_cancel     (SymfonicUpstreamRequest        *request);
G_GNUC_INTERNAL
void                     symfonic_upstream_request_free       (SymfonicUpstreamRequest        *request);

G_GNUC_INTERNAL
void                     symfonic_upstream_request_set_deadline_at (SymfonicUpstreamRequest    *request,
                                                                    gint64                      deadline);

/* what /metrics counts */
G_GNUC_INTERNAL
guint64 symfonic_upstream_count_connections_opened (void);
G_GNUC_INTERNAL
guint64 symfonic_upstream_count_requests           (void);
G_GNUC_INTERNAL
guint64 symfonic_upstream_count_connections_open   (void);
G_GNUC_INTERNAL
guint64 symfonic_upstream_count_requests_reused    (void);

G_END_DECLS
