/* symfonic-recording-private.h: a recording's parts, for the library
 * that writes and plays them
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-recording.h"

G_BEGIN_DECLS

/* One read of the body: it ends at @end bytes into the body and arrived
 * @offset_us after the request went out. */
typedef struct
{
  gsize  end;
  gint64 offset_us;
} SymfonicRecordingChunk;

struct _SymfonicRecording
{
  /* a replay source's recording is played by every worker's streams at
   * once, each taking and dropping references on its own thread */
  gatomicrefcount             ref_count;

  char                       *source_type;
  char                       *wire_format;
  char                       *model;
  char                       *run_id;
  char                       *recorded_at;

  char                       *method;
  char                       *target;
  /* names and values, one after the other */
  GPtrArray                  *request_headers;
  char                       *request_body;

  /* 0 when no head arrived */
  guint                       status;
  gint64                      head_us;
  GPtrArray                  *response_headers;

  SymfonicRecordingEnd        end;
  SymfonicRecordingTransport  transport;
  char                       *error_code;
  gboolean                    truncated;
  guint                       redactions;
  /* when the run ended, after the request went out */
  gint64                      duration_us;

  GBytes                     *body;
  GArray                     *chunks;
};

G_GNUC_INTERNAL
SymfonicRecording *symfonic_recording_new          (void);
G_GNUC_INTERNAL
const char        *symfonic_recording_end_to_string (SymfonicRecordingEnd end);
G_GNUC_INTERNAL
const char        *symfonic_recording_transport_to_string (SymfonicRecordingTransport transport);

G_END_DECLS
