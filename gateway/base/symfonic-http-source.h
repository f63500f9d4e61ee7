/* symfonic-http-source.h: the base class of sources that stream from an
 * HTTP upstream
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "symfonic-error.h"
#include "symfonic-event.h"
#include "symfonic-recording.h"
#include "symfonic-types.h"

G_BEGIN_DECLS

#define SYMFONIC_TYPE_HTTP_REQUEST (symfonic_http_request_get_type ())

typedef struct _SymfonicHttpRequest SymfonicHttpRequest;

#define SYMFONIC_TYPE_HTTP_SOURCE (symfonic_http_source_get_type ())

/**
 * SymfonicHttpSourceClass::prepare:
 * @self: a #SymfonicHttpSource
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Checks the subclass's own settings and opens what it needs, once, when
 * the source is initialised, after the shared settings were checked.
 *
 * Returns: %TRUE on success
 */

/**
 * SymfonicHttpSourceClass::write_request:
 * @self: a #SymfonicHttpSource
 * @request: the request about to be sent for one stream
 * @path: the request target: holds the path and query of `url` and may
 *   be changed; it goes on the request line as it is, so it must be
 *   encoded already
 * @body: where the request body, a JSON document, is appended
 * @error: return location for a #GError
 *
 * Writes the request for @request's stream.
 *
 * Returns: %TRUE on success; %FALSE ends the stream with @error before
 *   anything is sent
 */

/**
 * SymfonicHttpSourceClass::check_head:
 * @self: a #SymfonicHttpSource
 * @request: the request whose response head arrived
 * @status: the response's status
 * @error: return location for a #GError
 *
 * Judges the response head; its headers are read with
 * symfonic_http_request_get_response_header() during this call.
 *
 * Returns: %TRUE to read the body as an event stream; %FALSE ends the
 *   stream with @error
 */

/**
 * SymfonicHttpSourceClass::handle_frame:
 * @self: a #SymfonicHttpSource
 * @request: the request the frame belongs to
 * @event: the frame's event name, `message` when it named none
 * @data: (array length=data_length) (element-type guint8): the frame's
 *   data lines joined with `\n`, followed by a NUL that @data_length does
 *   not count
 * @data_length: the bytes of @data
 * @error: return location for a #GError
 *
 * Turns one event-stream frame into events, pushed with
 * symfonic_http_request_push(). The strings are valid during the call only.
 *
 * Returns: %TRUE to read on; %FALSE ends the stream with @error
 */

/**
 * SymfonicHttpSourceClass::end:
 * @self: a #SymfonicHttpSource
 * @request: the request whose body ended
 * @error: return location for a #GError
 *
 * The upstream's body ended before the request was completed.
 *
 * Returns: %TRUE when the subclass completed the request here (its
 *   terminal pushed, symfonic_http_request_complete() called); %FALSE ends
 *   the stream with @error, what a cut-short stream is for the client
 */

/**
 * SymfonicHttpSourceClass::close:
 * @self: a #SymfonicHttpSource
 * @request: the request that is over
 *
 * The request is over for the source, however it ended; called once,
 * before the stream's end, or from inside the stream's cancellation when
 * its client went away (so it must not block).
 */

G_DECLARE_DERIVABLE_TYPE (SymfonicHttpSource, symfonic_http_source, SYMFONIC, HTTP_SOURCE, GObject)

/**
 * SymfonicHttpSourceClass:
 * @parent_class: the parent class
 * @prepare: optional: checks the subclass's settings at initialisation and
 *   adds the request headers it sets itself with
 *   symfonic_http_source_add_request_header()
 * @write_request: writes the request body of a stream, and may change the
 *   request's path; every request is a `POST` of `application/json`
 * @check_head: optional: judges the response head. The default wants a
 *   2xx status and a `text/event-stream` body, and fails the stream with
 *   %SYMFONIC_ERROR_UPSTREAM otherwise
 * @handle_frame: turns one event-stream frame into events
 * @end: optional: what the end of a body means before the request was
 *   completed. The default fails the stream with
 *   %SYMFONIC_ERROR_UPSTREAM: the upstream closed the stream early
 * @close: optional: the request is over, however it ended
 *
 * What a subclass implements: its own request and how to read its
 * upstream's answer. Everything else is the base class's.
 */
struct _SymfonicHttpSourceClass
{
  GObjectClass parent_class;

  gboolean (*prepare)       (SymfonicHttpSource   *self,
                             GCancellable         *cancellable,
                             GError              **error);
  gboolean (*write_request) (SymfonicHttpSource   *self,
                             SymfonicHttpRequest  *request,
                             GString              *path,
                             GString              *body,
                             GError              **error);
  gboolean (*check_head)    (SymfonicHttpSource   *self,
                             SymfonicHttpRequest  *request,
                             guint                 status,
                             GError              **error);
  gboolean (*handle_frame)  (SymfonicHttpSource   *self,
                             SymfonicHttpRequest  *request,
                             const char           *event,
                             const char           *data,
                             gsize                 data_length,
                             GError              **error);
  gboolean (*end)           (SymfonicHttpSource   *self,
                             SymfonicHttpRequest  *request,
                             GError              **error);
  void     (*close)         (SymfonicHttpSource   *self,
                             SymfonicHttpRequest  *request);

  /*< private >*/
  gpointer padding[10];
};

/* what a subclass's instance init may change */
void        symfonic_http_source_set_holds_head             (SymfonicHttpSource  *self,
                                                             gboolean             holds_head);
void        symfonic_http_source_set_default_idle_timeout   (SymfonicHttpSource  *self,
                                                             guint                seconds);
void        symfonic_http_source_set_default_max_event_bytes (SymfonicHttpSource *self,
                                                             guint                max_bytes);
void        symfonic_http_source_reserve_header             (SymfonicHttpSource  *self,
                                                             const char          *name);

/* what a subclass's prepare may do */
void        symfonic_http_source_add_request_header         (SymfonicHttpSource  *self,
                                                             const char          *name,
                                                             const char          *value);

/* what every HTTP source is configured with */
GUri       *symfonic_http_source_get_uri                    (SymfonicHttpSource  *self);
const char *symfonic_http_source_get_display_url            (SymfonicHttpSource  *self);

/* a stream served from what an upstream once sent */
void        symfonic_http_source_play                       (SymfonicHttpSource  *self,
                                                             SymfonicStream      *stream,
                                                             GCancellable        *cancellable,
                                                             SymfonicRecording   *recording,
                                                             double               time_scale);

GType                symfonic_http_request_get_type              (void) G_GNUC_CONST;
SymfonicHttpRequest *symfonic_http_request_ref                   (SymfonicHttpRequest  *request);
void                 symfonic_http_request_unref                 (SymfonicHttpRequest  *request);
SymfonicHttpSource  *symfonic_http_request_get_source            (SymfonicHttpRequest  *request);
SymfonicStream      *symfonic_http_request_get_stream            (SymfonicHttpRequest  *request);
gpointer             symfonic_http_request_get_data              (SymfonicHttpRequest  *request);
void                 symfonic_http_request_set_data              (SymfonicHttpRequest  *request,
                                                                  gpointer              data,
                                                                  GDestroyNotify        destroy);
const char          *symfonic_http_request_get_response_header   (SymfonicHttpRequest  *request,
                                                                  const char           *name);
void                 symfonic_http_request_push                  (SymfonicHttpRequest  *request,
                                                                  SymfonicEvent        *event);
void                 symfonic_http_request_complete              (SymfonicHttpRequest  *request);
gboolean             symfonic_http_request_add_usage             (SymfonicHttpRequest  *request,
                                                                  JsonObject           *usage,
                                                                  GError              **error);
gboolean             symfonic_http_request_update_usage          (SymfonicHttpRequest  *request,
                                                                  JsonObject           *usage,
                                                                  GError              **error);
gboolean             symfonic_http_request_has_usage             (SymfonicHttpRequest  *request);
GError              *symfonic_http_request_new_failure           (SymfonicHttpRequest  *request,
                                                                  SymfonicError         code,
                                                                  const char           *public_text,
                                                                  const char           *format,
                                                                  ...) G_GNUC_PRINTF (4, 5);
GError              *symfonic_http_request_new_failure_literal   (SymfonicHttpRequest  *request,
                                                                  SymfonicError         code,
                                                                  const char           *public_text,
                                                                  const char           *detail);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicHttpRequest, symfonic_http_request_unref)

G_END_DECLS
