/* bench-common.h: what the benchmarks share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An in-process server on an ephemeral loopback port, generated replay
 * transcripts, and a raw HTTP/1.1 client: a GSocket and an incremental
 * parser of chunked responses that counts SSE frames as they complete.
 * The client is deliberately cheap (no libsoup, no per-frame allocation
 * besides the frame being assembled), so that on a 2-core machine it takes
 * as little CPU as possible from the server it measures.
 */
#pragma once

#include "symfonic.h"

G_BEGIN_DECLS

/* Every blocking read is bounded: a hung server ends the benchmark with a
 * message instead of running into meson's timeout. */
#define BENCH_SOCKET_TIMEOUT_S 20

void             bench_init               (void);

/* --- transcripts and the server ------------------------------------------ */

char            *bench_make_dir           (void);
void             bench_remove_dir         (const char  *dir);
gsize            bench_write_transcript   (const char  *dir,
                                           const char  *name,
                                           guint        n_deltas,
                                           guint        text_length,
                                           guint        tag_every,
                                           guint        pause_every);
char            *bench_replay_pipeline    (const char  *transcripts,
                                           const char  *default_transcript);
SymfonicServer  *bench_server_new         (const char  *pipeline_text,
                                           const char  *base_dir,
                                           guint        workers);

/* --- the process ------------------------------------------------------------ */

guint64          bench_status_kb          (const char  *field);
double           bench_cpu_seconds        (const char  *thread_prefix);
void             bench_reset_peak_rss     (void);
double           bench_percentile         (GArray      *values,
                                           double       fraction);

/* --- HTTP ------------------------------------------------------------------ */

typedef enum
{
  BENCH_STATE_STATUS,
  BENCH_STATE_HEADERS,
  BENCH_STATE_CHUNK_SIZE,
  BENCH_STATE_CHUNK_DATA,
  BENCH_STATE_CHUNK_END,
  BENCH_STATE_TRAILER,
  BENCH_STATE_LENGTH_BODY,
  BENCH_STATE_DONE,
} BenchState;

typedef struct
{
  BenchState  state;
  GString    *line;
  guint       status;
  gboolean    chunked;
  guint64     remaining;

  /* the body, decoded; kept whole only when asked */
  gboolean    keep_body;
  GString    *body;
  guint64     body_bytes;
  gint64      headers_us;
  gint64      now_us;

  /* SSE frames, counted as their blank line arrives; of each only the
   * first line is kept, and the terminal's text is measured as it
   * streams, so that the client's memory stays out of the server's RSS */
  GString    *head;
  gboolean    in_body;
  char        previous;
  int         kind;
  guint64     frames;
  guint64     delta_frames;
  gint64      first_frame_us;
  gint64      last_frame_us;

  int         scan;
  guint       matched;
  guint       unicode_digits;
  gunichar    unicode;
  gssize      text_length;
  gssize      terminal_text_length;
  gboolean    failed;
} BenchResponse;

void      bench_response_init     (BenchResponse *self);
void      bench_response_reset    (BenchResponse *self);
void      bench_response_clear    (BenchResponse *self);
gsize     bench_response_feed     (BenchResponse *self,
                                   const char    *data,
                                   gsize          length,
                                   gint64         now_us);
gboolean  bench_response_is_done  (BenchResponse *self);
gssize    bench_response_terminal_text_length (BenchResponse *self);

GSocket  *bench_connect           (guint16        port,
                                   int            receive_buffer,
                                   GError       **error);
char     *bench_post_request      (const char    *path,
                                   const char    *transcript);
gboolean  bench_send_all          (GSocket       *socket,
                                   const char    *data,
                                   gsize          length,
                                   GError       **error);
gboolean  bench_read_response     (GSocket       *socket,
                                   BenchResponse *response,
                                   GError       **error);
double    bench_fetch_metric      (guint16        port,
                                   const char    *name);

G_END_DECLS
