/* symfonic-http-source-private.h: what the HTTP source's two halves, and
 * the library's own HTTP sources, share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-http-source.h"
#include "symfonic-recorder-private.h"
#include "symfonic-sse-parser.h"
#include "symfonic-upstream-private.h"
#include "symfonic-usage-private.h"

G_BEGIN_DECLS

/* One stream's request, from its first byte sent to the stream's end.
 * It lives on the stream's thread; bindings may keep a reference past the
 * end, when it only answers that it is over. */
struct _SymfonicHttpRequest
{
  grefcount                 ref_count;
  SymfonicHttpSource       *source;
  /* looked up once: every frame goes through it */
  SymfonicHttpSourceClass  *klass;
  SymfonicStream           *stream;
  SymfonicUpstreamRequest  *upstream;
  SymfonicSseParser        *parser;
  GCancellable             *stream_cancellable;
  gulong                    cancelled_id;

  /* what is sent again on a redirect, and where it went last */
  GBytes                   *payload;
  GUri                     *uri;
  guint                     redirects;
  /* the connection slot taken at admission, or NULL */
  gpointer                  connection;
  /* what answers in place of the upstream, or NULL, and its pace */
  SymfonicRecording        *playback;
  double                    playback_scale;
  /* the run's recording while the source records it, or NULL */
  SymfonicCapture          *capture;

  gpointer                  data;
  GDestroyNotify            data_destroy;

  /* monotonic time by which the first event must go out, or 0 */
  gint64                    deadline;
  /* the running totals of usage reported so far */
  guint64                   input_tokens;
  guint64                   output_tokens;

  /* the parser failed: the stream ends with this once the whole frames
   * parsed before it went on */
  GError                   *parse_error;

  /* the upstream sent its end: the stream ends successfully */
  guint                     completed : 1;
  /* the stream cannot take more now (the client is behind, or other work
   * goes first): nothing more is read until the stream is ready */
  guint                     waiting : 1;
  /* an event went to the stream */
  guint                     answered : 1;
  /* the first event went out and the deadline above no longer applies */
  guint                     answering : 1;
  /* the head arrived: idle-timeout applies from then on */
  guint                     head_in : 1;
  /* the upstream's body ended; frames may still wait in the parser */
  guint                     upstream_ended : 1;
  /* a usage report gave a count */
  guint                     usage_seen : 1;
  /* the close vfunc ran */
  guint                     closed : 1;
  /* the stream was ended: nothing is read or pushed any more */
  guint                     over : 1;
};

/* --- between the class and its requests --------------------------------- */

G_GNUC_INTERNAL
SymfonicUpstream    *symfonic_http_source_get_upstream   (SymfonicHttpSource  *self);
G_GNUC_INTERNAL
const char          *symfonic_http_source_get_header_lines (SymfonicHttpSource *self);
G_GNUC_INTERNAL
gboolean             symfonic_http_source_get_follow_redirects (SymfonicHttpSource *self);
G_GNUC_INTERNAL
guint                symfonic_http_source_get_timeout_seconds (SymfonicHttpSource *self);
G_GNUC_INTERNAL
guint                symfonic_http_source_get_idle_seconds (SymfonicHttpSource  *self);
G_GNUC_INTERNAL
gsize                symfonic_http_source_get_event_bytes (SymfonicHttpSource  *self);
G_GNUC_INTERNAL
gboolean             symfonic_http_source_get_holds_head  (SymfonicHttpSource  *self);
G_GNUC_INTERNAL
void                 symfonic_http_source_release_connection (gpointer          slot);
G_GNUC_INTERNAL
SymfonicRecorder    *symfonic_http_source_get_recorder    (SymfonicHttpSource  *self);

G_GNUC_INTERNAL
void                 symfonic_http_request_start          (SymfonicHttpSource  *source,
                                                           SymfonicStream      *stream,
                                                           GCancellable        *cancellable,
                                                           gpointer             connection,
                                                           SymfonicRecording   *playback,
                                                           double               playback_scale);

/* --- for the library's own sources --------------------------------------- */

G_GNUC_INTERNAL
gboolean             symfonic_http_is_event_stream        (const char          *content_type);
G_GNUC_INTERNAL
const char          *symfonic_http_source_get_url_key     (SymfonicHttpSource  *self);
G_GNUC_INTERNAL
GError              *symfonic_http_request_new_failure_valist (SymfonicHttpRequest *request,
                                                           SymfonicError        code,
                                                           const char          *public_text,
                                                           const char          *format,
                                                           va_list              args) G_GNUC_PRINTF (4, 0);
G_GNUC_INTERNAL
gboolean             symfonic_http_request_update_usage_counts (SymfonicHttpRequest       *request,
                                                           const SymfonicUsageCounts *counts,
                                                           GError                   **error);

G_END_DECLS
