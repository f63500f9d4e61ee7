/* symfonic-test-support.h: what the integration tests share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <json-glib/json-glib.h>
#include <libsoup/soup.h>

#include "symfonic.h"

G_BEGIN_DECLS

/* Every wait in the tests is bounded: a hung server fails the test instead
 * of running into meson's timeout. */
#define SYMFONIC_TEST_WAIT_MS 20000

void            symfonic_test_init                (int            *argc,
                                                   char         ***argv);

/* --- the server, in-process ------------------------------------------- */

#define SYMFONIC_TEST_TYPED_PATH "/api/v1/stream/typed"

SymfonicRegistry *symfonic_test_get_registry       (void);
char           *symfonic_test_replay_pipeline     (const char     *transcripts,
                                                   const char     *default_transcript,
                                                   double          time_scale);

/* Stages whose affinity is the default main context (JavaScript ones) run
 * while the main thread iterates it, as the waits below do there: make the
 * server, and wait for its streams, on the main thread. */
SymfonicServer *symfonic_test_server_new          (const char     *pipeline_text,
                                                   const char     *base_dir,
                                                   guint           workers);
SymfonicServer *symfonic_test_server_new_from_file (const char     *path,
                                                    guint           workers);
char           *symfonic_test_server_dup_url      (SymfonicServer *server,
                                                   const char     *path);

void            symfonic_test_check_source_config (SymfonicRegistry *registry,
                                                   const char     *source_lines,
                                                   const char     *error_key);

/* --- SSE, parsed incrementally ----------------------------------------- */

/**
 * SymfonicTestFrame:
 * @event: the event name; "message" when the frame named none
 * @data: the data lines joined with "\n"
 * @id: the id field of this frame, or %NULL when it had none
 * @n_data_lines: how many data lines the frame had
 * @time_us: g_get_monotonic_time() when the frame was complete
 */
typedef struct
{
  char   *event;
  char   *data;
  char   *id;
  guint   n_data_lines;
  gint64  time_us;
} SymfonicTestFrame;

void symfonic_test_frame_free (SymfonicTestFrame *frame);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicTestFrame, symfonic_test_frame_free)

typedef struct _SymfonicTestSseParser SymfonicTestSseParser;

SymfonicTestSseParser *symfonic_test_sse_parser_new          (void);
void                   symfonic_test_sse_parser_free         (SymfonicTestSseParser *self);
void                   symfonic_test_sse_parser_feed         (SymfonicTestSseParser *self,
                                                              const char            *data,
                                                              gsize                  length,
                                                              GPtrArray             *frames);
guint                  symfonic_test_sse_parser_get_comments (SymfonicTestSseParser *self);
gboolean               symfonic_test_sse_parser_is_between_frames (SymfonicTestSseParser *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicTestSseParser, symfonic_test_sse_parser_free)

/* --- HTTP clients -------------------------------------------------------- */

SoupSession *symfonic_test_session_new (void);

GSocketConnection *symfonic_test_raw_request (guint16     port,
                                              const char *request,
                                              const char *until,
                                              GString    *received);

/* A socket bound to a free loopback port, listening or not; @port is the
 * port it got. */
GSocket *symfonic_test_loopback_socket (gboolean  listen,
                                        guint16  *port);
/* A loopback port where connecting is refused. */
guint    symfonic_test_closed_port     (void);
const char *symfonic_test_private_dir (void);

/* --- memory of this process (which is also the in-process server's) ---- */

/* AddressSanitizer's quarantine keeps freed memory resident, so a memory
 * figure says nothing about what the server keeps: tests that bound growth
 * skip that check under it (gcc and clang say so differently). */
#if defined(__SANITIZE_ADDRESS__)
# define SYMFONIC_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define SYMFONIC_TEST_UNDER_ASAN 1
# endif
#endif

gsize symfonic_test_memory_bytes (const char *field);

/* descriptors open in this process (which are also the server's) */
guint    symfonic_test_count_fds   (void);
gboolean symfonic_test_fds_at_most (gpointer data);

gboolean symfonic_test_iterate_until (GMainContext *context,
                                      gboolean    (*done) (gpointer data),
                                      gpointer      data,
                                      guint         timeout_ms);

/* A streaming POST: frames are collected as they are parsed. */
typedef struct
{
  SoupMessage           *message;
  GCancellable          *cancellable;
  GInputStream          *body;
  GMainContext          *context;
  SymfonicTestSseParser *parser;
  GPtrArray             *frames;
  GString               *raw;
  guint                  status;
  gint64                 start_us;
  gint64                 headers_us;
  gint64                 end_us;
  gboolean               got_headers;
  gboolean               done;
  gboolean               pending;
  GError                *error;
  char                   buffer[4096];
} SymfonicTestStream;

SymfonicTestStream *symfonic_test_stream_post        (SoupSession        *session,
                                                      const char         *url,
                                                      const char         *json_body,
                                                      const char         *first_header_name,
                                                      ...);
void                symfonic_test_stream_wait_headers (SymfonicTestStream *self);
void                symfonic_test_stream_wait_frames (SymfonicTestStream *self,
                                                      guint               n_frames);
void                symfonic_test_stream_wait_done   (SymfonicTestStream *self);
void                symfonic_test_stream_close       (SymfonicTestStream *self);
void                symfonic_test_stream_free        (SymfonicTestStream *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicTestStream, symfonic_test_stream_free)

/* A plain request, whole body. */
typedef struct
{
  guint               status;
  SoupMessageHeaders *headers;
  GBytes             *body;
} SymfonicTestResponse;

SymfonicTestResponse *symfonic_test_request            (SoupSession          *session,
                                                        const char           *method,
                                                        const char           *url,
                                                        const char           *content_type,
                                                        const char           *body,
                                                        const char           *first_header_name,
                                                        ...);
const char           *symfonic_test_response_get_text  (SymfonicTestResponse *self);
JsonNode             *symfonic_test_response_dup_json  (SymfonicTestResponse *self);
void                  symfonic_test_response_free      (SymfonicTestResponse *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicTestResponse, symfonic_test_response_free)

/* --- metrics, JSON, transcripts ----------------------------------------- */

gboolean   symfonic_test_metrics_lookup    (const char  *text,
                                            const char  *name,
                                            double      *value);
double     symfonic_test_fetch_metric      (SoupSession *session,
                                            const char  *base_url,
                                            const char  *name);

gboolean   symfonic_test_json_is_strict    (const char  *text,
                                            gssize       length,
                                            GError     **error);
JsonNode  *symfonic_test_json_parse        (const char  *text);

GPtrArray *symfonic_test_load_transcript   (const char  *path);

G_END_DECLS
