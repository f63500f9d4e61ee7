/* symfonic-test-upstream.h: a fake upstream for the integration tests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <json-glib/json-glib.h>
#include <libsoup/soup.h>

#include "symfonic-test-support.h"

G_BEGIN_DECLS

/**
 * SymfonicTestSplit:
 * @SYMFONIC_TEST_SPLIT_WHOLE: the body in one write
 * @SYMFONIC_TEST_SPLIT_ONE_BYTE: one byte per write
 * @SYMFONIC_TEST_SPLIT_RANDOM: writes of 1 to 47 bytes, from the
 *   scenario's seed
 *
 * How the upstream splits a response body into HTTP chunks. Every write
 * is its own chunk and its own main-loop turn, so the gateway's reads see
 * the splits (TCP may still coalesce some).
 */
typedef enum {
  SYMFONIC_TEST_SPLIT_WHOLE,
  SYMFONIC_TEST_SPLIT_ONE_BYTE,
  SYMFONIC_TEST_SPLIT_RANDOM,
} SymfonicTestSplit;

/**
 * SymfonicTestAfter:
 * @SYMFONIC_TEST_AFTER_CLOSE: finish the body: the reader sees its end
 * @SYMFONIC_TEST_AFTER_STALL: write nothing more, keep the connection open
 * @SYMFONIC_TEST_AFTER_KEEPALIVE: write an SSE comment every 20 ms until
 *   the peer goes away
 *
 * What the upstream does once the scripted body is written.
 */
typedef enum {
  SYMFONIC_TEST_AFTER_CLOSE,
  SYMFONIC_TEST_AFTER_STALL,
  SYMFONIC_TEST_AFTER_KEEPALIVE,
} SymfonicTestAfter;

/**
 * SymfonicTestScenario:
 * @status: the HTTP status; 0 means 200
 * @content_type: the response's Content-Type; %NULL means text/event-stream
 * @body: the response body
 * @split: how the body is split into writes
 * @seed: the seed of %SYMFONIC_TEST_SPLIT_RANDOM, so a failure replays
 * @delay_ms: the pause after each write
 * @hold_ms: the pause before anything of the response (status line
 *   included) is written
 * @pause_at: a byte offset of @body where a write ends, followed by
 *   @pause_ms instead of @delay_ms; 0 for none
 * @pause_ms: the pause at @pause_at
 * @after: what happens once @body is written
 * @location: (nullable): a Location header, for a redirect
 *
 * What the upstream answers on a path. Copied when added.
 */
typedef struct
{
  guint              status;
  const char        *content_type;
  GBytes            *body;
  SymfonicTestSplit  split;
  guint32            seed;
  guint              delay_ms;
  guint              hold_ms;
  gsize              pause_at;
  guint              pause_ms;
  SymfonicTestAfter  after;
  const char        *location;
} SymfonicTestScenario;

/**
 * SymfonicTestUpstreamRecord:
 * @path: the request's path
 * @query: the "query" member of the request body when it was a string,
 *   else %NULL
 * @body: the request body as JSON, %NULL when it was not JSON
 * @raw_body: the request body's bytes, NUL-terminated
 * @headers: the request headers
 * @received_us: g_get_monotonic_time() when the request was read
 * @client_port: the port the request came from, which names its
 *   connection
 *
 * One request the upstream received. These fields are set before the
 * record is published and never change; what changes while the response
 * is written is read through the upstream's getters, under its lock.
 */
typedef struct
{
  char               *path;
  char               *query;
  JsonNode           *body;
  char               *raw_body;
  SoupMessageHeaders *headers;
  gint64              received_us;
  guint16             client_port;

  /*< private >*/
  gint64              responded_us;
  gint64              closed_us;
  gboolean            completed;
} SymfonicTestUpstreamRecord;

typedef struct _SymfonicTestUpstream SymfonicTestUpstream;

SymfonicTestUpstream       *symfonic_test_upstream_new            (void);
SymfonicTestUpstream       *symfonic_test_upstream_new_tls        (GTlsCertificate            *certificate);
void                        symfonic_test_upstream_free           (SymfonicTestUpstream       *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicTestUpstream, symfonic_test_upstream_free)

guint                       symfonic_test_upstream_get_port       (SymfonicTestUpstream       *self);
char                       *symfonic_test_upstream_dup_url        (SymfonicTestUpstream       *self,
                                                                   const char                 *path);
char                       *symfonic_test_upstream_add            (SymfonicTestUpstream       *self,
                                                                   const char                 *path,
                                                                   const SymfonicTestScenario *scenario);
void                        symfonic_test_upstream_add_for_query  (SymfonicTestUpstream       *self,
                                                                   const char                 *path,
                                                                   const char                 *query,
                                                                   const SymfonicTestScenario *scenario);

SymfonicTestUpstreamRecord *symfonic_test_upstream_find_record    (SymfonicTestUpstream       *self,
                                                                   const char                 *path,
                                                                   const char                 *query);
SymfonicTestUpstreamRecord *symfonic_test_upstream_wait_record    (SymfonicTestUpstream       *self,
                                                                   const char                 *path,
                                                                   const char                 *query);
guint                       symfonic_test_upstream_count_records  (SymfonicTestUpstream       *self,
                                                                   const char                 *path,
                                                                   const char                 *query);
guint                       symfonic_test_upstream_count_connections (SymfonicTestUpstream    *self);
char                       *symfonic_test_upstream_describe_connections
                                                                  (SymfonicTestUpstream       *self);
gboolean                    symfonic_test_upstream_wait_over      (SymfonicTestUpstream       *self,
                                                                   SymfonicTestUpstreamRecord *record);
gint64                      symfonic_test_upstream_get_responded_us
                                                                  (SymfonicTestUpstream       *self,
                                                                   SymfonicTestUpstreamRecord *record);
gint64                      symfonic_test_upstream_get_closed_us  (SymfonicTestUpstream       *self,
                                                                   SymfonicTestUpstreamRecord *record);
gint64                      symfonic_test_upstream_time_hang_up   (SymfonicTestUpstream       *self,
                                                                   SymfonicTestUpstreamRecord *record,
                                                                   SymfonicTestStream         *stream,
                                                                   SoupSession                *session);
gboolean                    symfonic_test_upstream_get_completed  (SymfonicTestUpstream       *self,
                                                                   SymfonicTestUpstreamRecord *record);

G_END_DECLS
