/* symfonic-recording.h: what an HTTP upstream really sent, as a file
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <gio/gio.h>

G_BEGIN_DECLS

/**
 * SYMFONIC_RECORDING_FORMAT_VERSION:
 *
 * The version of the recording format this library writes, and the
 * newest it reads: the `symfonic_recording` member of a recording's first
 * line.
 */
#define SYMFONIC_RECORDING_FORMAT_VERSION 1

/**
 * SymfonicRecordingEnd:
 * @SYMFONIC_RECORDING_END_COMPLETE: the upstream's answer ended with its
 *   terminal, and the stream succeeded
 * @SYMFONIC_RECORDING_END_CUT: the answer's head came, then its body
 *   ended or broke before the terminal
 * @SYMFONIC_RECORDING_END_ERROR: the stream failed for another reason: a
 *   refusal, an error event, something the source could not read, an
 *   upstream that could not be reached
 * @SYMFONIC_RECORDING_END_CANCELLED: the client went away first; such a
 *   recording is always marked truncated
 *
 * How the run a recording holds ended, as its source saw it.
 */
typedef enum {
  SYMFONIC_RECORDING_END_COMPLETE,
  SYMFONIC_RECORDING_END_CUT,
  SYMFONIC_RECORDING_END_ERROR,
  SYMFONIC_RECORDING_END_CANCELLED,
} SymfonicRecordingEnd;

/**
 * SymfonicRecordingTransport:
 * @SYMFONIC_RECORDING_TRANSPORT_EOF: the body ended where its framing
 *   said
 * @SYMFONIC_RECORDING_TRANSPORT_CLOSED: the connection closed or broke in
 *   the middle of the answer
 * @SYMFONIC_RECORDING_TRANSPORT_TIMEOUT: the upstream stayed silent past a
 *   timeout
 * @SYMFONIC_RECORDING_TRANSPORT_REFUSED: the upstream could not be
 *   reached
 * @SYMFONIC_RECORDING_TRANSPORT_FAILED: another failure of the connection
 * @SYMFONIC_RECORDING_TRANSPORT_STOPPED: the gateway stopped reading
 *   first: the source had what it needed, failed the stream, or its client
 *   went away
 *
 * How the bytes stopped coming, which a replay reproduces after the last
 * chunk.
 */
typedef enum {
  SYMFONIC_RECORDING_TRANSPORT_EOF,
  SYMFONIC_RECORDING_TRANSPORT_CLOSED,
  SYMFONIC_RECORDING_TRANSPORT_TIMEOUT,
  SYMFONIC_RECORDING_TRANSPORT_REFUSED,
  SYMFONIC_RECORDING_TRANSPORT_FAILED,
  SYMFONIC_RECORDING_TRANSPORT_STOPPED,
} SymfonicRecordingTransport;

#define SYMFONIC_TYPE_RECORDING (symfonic_recording_get_type ())

typedef struct _SymfonicRecording SymfonicRecording;

GType                      symfonic_recording_get_type           (void) G_GNUC_CONST;

gboolean                   symfonic_recording_data_is_recording  (const char          *data,
                                                                  gsize                length);
SymfonicRecording         *symfonic_recording_new_from_data      (const char          *data,
                                                                  gsize                length,
                                                                  GError             **error);
SymfonicRecording         *symfonic_recording_new_from_file      (GFile               *file,
                                                                  GError             **error);
char                      *symfonic_recording_to_data            (SymfonicRecording   *self,
                                                                  gsize               *length);

SymfonicRecording         *symfonic_recording_ref                (SymfonicRecording   *self);
void                       symfonic_recording_unref              (SymfonicRecording   *self);

const char                *symfonic_recording_get_source_type    (SymfonicRecording   *self);
const char                *symfonic_recording_get_wire_format    (SymfonicRecording   *self);
const char                *symfonic_recording_get_model          (SymfonicRecording   *self);
const char                *symfonic_recording_get_run_id         (SymfonicRecording   *self);
const char                *symfonic_recording_get_request_target (SymfonicRecording   *self);
const char                *symfonic_recording_get_request_body   (SymfonicRecording   *self);
guint                      symfonic_recording_get_status         (SymfonicRecording   *self);
const char                *symfonic_recording_get_response_header (SymfonicRecording  *self,
                                                                  const char          *name);
SymfonicRecordingEnd       symfonic_recording_get_end            (SymfonicRecording   *self);
SymfonicRecordingTransport symfonic_recording_get_transport      (SymfonicRecording   *self);
const char                *symfonic_recording_get_error_code     (SymfonicRecording   *self);
gboolean                   symfonic_recording_get_truncated      (SymfonicRecording   *self);
guint                      symfonic_recording_get_redactions     (SymfonicRecording   *self);
gint64                     symfonic_recording_get_head_us        (SymfonicRecording   *self);
gint64                     symfonic_recording_get_duration_us    (SymfonicRecording   *self);
guint                      symfonic_recording_get_n_chunks       (SymfonicRecording   *self);
GBytes                    *symfonic_recording_get_chunk          (SymfonicRecording   *self,
                                                                  guint                index,
                                                                  gint64              *offset_us);
GBytes                    *symfonic_recording_get_body           (SymfonicRecording   *self);

SymfonicRecording         *symfonic_recording_rechunk            (SymfonicRecording   *self,
                                                                  guint64              seed,
                                                                  gsize                max_chunk_bytes);
SymfonicRecording         *symfonic_recording_rechunk_at         (SymfonicRecording   *self,
                                                                  const gsize         *cuts,
                                                                  gsize                n_cuts);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicRecording, symfonic_recording_unref)

G_END_DECLS
