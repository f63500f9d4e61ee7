/* symfonic-recorder-private.h: the HTTP sources' tee into recordings
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

#include "symfonic-recording.h"
#include "symfonic-upstream-private.h"

G_BEGIN_DECLS

/* One source's recording settings, made when the source is initialised
 * and read-only after: every worker's streams share it. */
typedef struct _SymfonicRecorder SymfonicRecorder;

/* One run being recorded: the stream's thread posts to it, the writer's
 * thread assembles and writes it. */
typedef struct _SymfonicCapture SymfonicCapture;

G_GNUC_INTERNAL
SymfonicRecorder *symfonic_recorder_new          (GFile             *folder,
                                                  double             ratio,
                                                  guint64            max_bytes,
                                                  const char * const *redact,
                                                  const char        *source_type,
                                                  const char        *wire_format,
                                                  const char        *model,
                                                  GError           **error);
G_GNUC_INTERNAL
void              symfonic_recorder_add_secret   (SymfonicRecorder  *self,
                                                  const char        *secret);
G_GNUC_INTERNAL
void              symfonic_recorder_add_header_secrets (SymfonicRecorder *self,
                                                  const char        *header_lines);
G_GNUC_INTERNAL
SymfonicRecorder *symfonic_recorder_ref          (SymfonicRecorder  *self);
G_GNUC_INTERNAL
void              symfonic_recorder_unref        (SymfonicRecorder  *self);

/* Whether the run is sampled; then its capture, which the caller ends
 * with symfonic_capture_finish(). @request is the request as it went
 * out, head and body. */
G_GNUC_INTERNAL
SymfonicCapture  *symfonic_recorder_start        (SymfonicRecorder  *self,
                                                  const char        *run_id,
                                                  GBytes            *request);
G_GNUC_INTERNAL
void              symfonic_capture_head          (SymfonicCapture   *self,
                                                  SymfonicUpstreamRequest *upstream,
                                                  guint              status);
G_GNUC_INTERNAL
void              symfonic_capture_chunk         (SymfonicCapture   *self,
                                                  const guint8      *data,
                                                  gsize              length);
G_GNUC_INTERNAL
void              symfonic_capture_transport_ended (SymfonicCapture *self,
                                                  const GError      *error);
G_GNUC_INTERNAL
void              symfonic_capture_finish        (SymfonicCapture   *self,
                                                  const GError      *error);

/* Waits, at most @timeout_us, until every run that ended before the call
 * is written; not from the writer's own thread. */
G_GNUC_INTERNAL
gboolean          symfonic_recorder_flush        (gint64             timeout_us);

/* Holds the writer back (TRUE) or lets it go: what a full queue does,
 * for the tests. */
G_GNUC_INTERNAL
void              symfonic_recorder_hold_writer  (gboolean           hold);

/* what /metrics counts */
G_GNUC_INTERNAL
guint64           symfonic_recorder_count_written (void);
G_GNUC_INTERNAL
guint64           symfonic_recorder_count_dropped (void);

/* For the tests of the redaction: masks @data in place, as the recorder
 * masks a body, and says how many secrets it found. */
G_GNUC_INTERNAL
guint             symfonic_recorder_redact       (SymfonicRecorder  *self,
                                                  char              *data,
                                                  gsize              length);

G_END_DECLS
