/* symfonic-test-upstream.c: a fake upstream for the integration tests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A SoupServer on 127.0.0.1, on its own thread and main context, so it
 * answers whatever the thread under test is doing (blocked in a wait, or
 * iterating a gateway's source). It records every request and answers
 * with a scripted body, written in pieces as the scenario says. Tests
 * read records from other threads, so everything a writer changes after a
 * record is published is guarded by the lock.
 */
#include <string.h>

#include "symfonic-test-support.h"
#include "symfonic-test-upstream.h"

/* the comment written between keepalives, and how often */
#define KEEPALIVE_LINE ": still here\n"
#define KEEPALIVE_MS 20
/* random writes are 1 to this many bytes minus one */
#define RANDOM_CHUNK_LIMIT 48

typedef struct
{
  guint              status;
  char              *content_type;
  GBytes            *body;
  SymfonicTestSplit  split;
  guint32            seed;
  guint              delay_ms;
  guint              hold_ms;
  gsize              pause_at;
  guint              pause_ms;
  SymfonicTestAfter  after;
  char              *location;
} Scenario;

struct _SymfonicTestUpstream
{
  GThread      *thread;
  GMainContext *context;
  GMainLoop    *loop;
  SoupServer   *server;
  guint         port;
  /* https with it, when set */
  GTlsCertificate *certificate;

  GMutex        lock;
  GCond         cond;
  gboolean      ready;
  /* "path" or "path\nquery" -> Scenario */
  GHashTable   *scenarios;
  GPtrArray    *records;
  /* responses still being written, touched on the upstream's thread only;
   * a stalled one never finishes */
  GPtrArray    *writers;
};

typedef struct
{
  SymfonicTestUpstream       *upstream;
  SoupServerMessage          *message;
  /* a reference: the test may replace the scenario while we write */
  Scenario                   *scenario;
  SymfonicTestUpstreamRecord *record;
  gsize                       offset;
  GRand                      *rand;
  GSource                    *timer;
  gboolean                    started;
  gboolean                    complete;
} Writer;

static Scenario *
scenario_copy (const SymfonicTestScenario *from)
{
  Scenario *scenario = g_atomic_rc_box_new0 (Scenario);

  scenario->status = from->status != 0 ? from->status : SOUP_STATUS_OK;
  scenario->content_type = g_strdup (from->content_type != NULL ? from->content_type : "text/event-stream");
  scenario->body = from->body != NULL ? g_bytes_ref (from->body) : g_bytes_new (NULL, 0);
  scenario->split = from->split;
  scenario->seed = from->seed;
  scenario->delay_ms = from->delay_ms;
  scenario->hold_ms = from->hold_ms;
  scenario->pause_at = from->pause_at;
  scenario->pause_ms = from->pause_ms;
  scenario->after = from->after;
  scenario->location = g_strdup (from->location);

  return scenario;
}

static void
scenario_clear (gpointer data)
{
  Scenario *scenario = data;

  g_free (scenario->content_type);
  g_free (scenario->location);
  g_bytes_unref (scenario->body);
}

static void
scenario_unref (gpointer data)
{
  g_atomic_rc_box_release_full (data, scenario_clear);
}

static void
record_free (gpointer data)
{
  SymfonicTestUpstreamRecord *record = data;

  g_free (record->path);
  g_free (record->query);
  g_clear_pointer (&record->body, json_node_unref);
  g_free (record->raw_body);
  soup_message_headers_unref (record->headers);
  g_free (record);
}

static void
writer_free (Writer *writer)
{
  if (writer->timer != NULL)
    {
      g_source_destroy (writer->timer);
      g_source_unref (writer->timer);
    }
  scenario_unref (writer->scenario);
  g_rand_free (writer->rand);
  g_free (writer);
}

static gboolean writer_step (gpointer data);

static void
writer_schedule (Writer *writer,
                 guint   delay_ms)
{
  if (writer->timer != NULL)
    {
      g_source_destroy (writer->timer);
      g_source_unref (writer->timer);
    }
  writer->timer = g_timeout_source_new (delay_ms);
  g_source_set_callback (writer->timer, writer_step, writer, NULL);
  g_source_attach (writer->timer, writer->upstream->context);
}

static void
writer_append (Writer     *writer,
               const void *data,
               gsize       length)
{
  SoupMessageBody *body = soup_server_message_get_response_body (writer->message);

  soup_message_body_append (body, SOUP_MEMORY_COPY, data, length);
  soup_server_message_unpause (writer->message);
}

/* The status line goes out with the first unpause: that is when the
 * upstream "responded". */
static void
writer_mark_started (Writer *writer)
{
  if (writer->started)
    return;
  writer->started = TRUE;

  g_mutex_lock (&writer->upstream->lock);
  writer->record->responded_us = g_get_monotonic_time ();
  g_cond_broadcast (&writer->upstream->cond);
  g_mutex_unlock (&writer->upstream->lock);
}

static gboolean
writer_step (gpointer data)
{
  Writer *writer = data;
  gsize length;
  const char *bytes = g_bytes_get_data (writer->scenario->body, &length);

  if (writer->offset < length)
    {
      gsize n = length - writer->offset;

      if (writer->scenario->split == SYMFONIC_TEST_SPLIT_ONE_BYTE)
        n = 1;
      else if (writer->scenario->split == SYMFONIC_TEST_SPLIT_RANDOM)
        {
          /* drawn once: MIN () would draw it twice */
          gsize chunk = g_rand_int_range (writer->rand, 1, RANDOM_CHUNK_LIMIT);

          n = MIN (n, chunk);
        }
      if (writer->offset < writer->scenario->pause_at)
        n = MIN (n, writer->scenario->pause_at - writer->offset);
      writer_mark_started (writer);
      writer_append (writer, bytes + writer->offset, n);
      writer->offset += n;
      writer_schedule (writer, writer->offset == writer->scenario->pause_at
                       ? writer->scenario->pause_ms : writer->scenario->delay_ms);
      return G_SOURCE_REMOVE;
    }

  switch (writer->scenario->after)
    {
    case SYMFONIC_TEST_AFTER_CLOSE:
      writer_mark_started (writer);
      writer->complete = TRUE;
      soup_message_body_complete (soup_server_message_get_response_body (writer->message));
      soup_server_message_unpause (writer->message);
      break;
    case SYMFONIC_TEST_AFTER_STALL:
      break;
    case SYMFONIC_TEST_AFTER_KEEPALIVE:
      writer_mark_started (writer);
      writer_append (writer, KEEPALIVE_LINE, strlen (KEEPALIVE_LINE));
      writer_schedule (writer, KEEPALIVE_MS);
      break;
    }

  return G_SOURCE_REMOVE;
}

static void
on_message_finished (SoupServerMessage *message,
                     gpointer           data)
{
  Writer *writer = data;
  SymfonicTestUpstream *upstream = writer->upstream;

  g_signal_handlers_disconnect_by_data (message, writer);
  g_ptr_array_remove_fast (upstream->writers, writer);
  g_mutex_lock (&upstream->lock);
  if (writer->complete)
    writer->record->completed = TRUE;
  else
    writer->record->closed_us = g_get_monotonic_time ();
  g_cond_broadcast (&upstream->cond);
  g_mutex_unlock (&upstream->lock);
  writer_free (writer);
}

static char *
scenario_key (const char *path,
              const char *query)
{
  return query != NULL ? g_strconcat (path, "\n", query, NULL) : g_strdup (path);
}

/* The scenario for a query at a path, else the path's. Called locked. */
static Scenario *
lookup_scenario (SymfonicTestUpstream *self,
                 const char           *path,
                 const char           *query)
{
  Scenario *scenario = NULL;

  if (query != NULL)
    {
      g_autofree char *key = scenario_key (path, query);

      scenario = g_hash_table_lookup (self->scenarios, key);
    }
  if (scenario == NULL)
    scenario = g_hash_table_lookup (self->scenarios, path);

  return scenario != NULL ? g_atomic_rc_box_acquire (scenario) : NULL;
}

static void
upstream_handler (SoupServer        *server,
                  SoupServerMessage *message,
                  const char        *path,
                  GHashTable        *query,
                  gpointer           data)
{
  SymfonicTestUpstream *self = data;
  SoupMessageBody *request_body = soup_server_message_get_request_body (message);
  g_autoptr(GBytes) flat = soup_message_body_flatten (request_body);
  SoupMessageHeaders *headers = soup_server_message_get_response_headers (message);
  SymfonicTestUpstreamRecord *record = g_new0 (SymfonicTestUpstreamRecord, 1);
  gsize length;
  const char *bytes = g_bytes_get_data (flat, &length);
  Scenario *scenario;
  Writer *writer;
  GSocketAddress *remote;

  record->path = g_strdup (path);
  record->raw_body = g_strndup (bytes != NULL ? bytes : "", length);
  record->body = json_from_string (record->raw_body, NULL);
  if (record->body != NULL && JSON_NODE_HOLDS_OBJECT (record->body))
    {
      JsonNode *member = json_object_get_member (json_node_get_object (record->body), "query");

      if (member != NULL && JSON_NODE_HOLDS_VALUE (member) &&
          json_node_get_value_type (member) == G_TYPE_STRING)
        record->query = g_strdup (json_node_get_string (member));
    }
  record->headers = soup_message_headers_ref (soup_server_message_get_request_headers (message));
  record->received_us = g_get_monotonic_time ();
  remote = soup_server_message_get_remote_address (message);
  if (G_IS_INET_SOCKET_ADDRESS (remote))
    record->client_port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (remote));

  g_mutex_lock (&self->lock);
  g_ptr_array_add (self->records, record);
  scenario = lookup_scenario (self, path, record->query);
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->lock);

  if (scenario == NULL)
    {
      soup_server_message_set_status (message, SOUP_STATUS_NOT_FOUND, NULL);
      return;
    }

  soup_server_message_set_status (message, scenario->status, NULL);
  soup_message_headers_set_content_type (headers, scenario->content_type, NULL);
  if (scenario->location != NULL)
    soup_message_headers_replace (headers, "Location", scenario->location);
  soup_message_headers_set_encoding (headers, SOUP_ENCODING_CHUNKED);
  soup_message_body_set_accumulate (soup_server_message_get_response_body (message), FALSE);

  writer = g_new0 (Writer, 1);
  writer->upstream = self;
  writer->message = message;
  writer->scenario = scenario;
  writer->record = record;
  writer->rand = g_rand_new_with_seed (scenario->seed);
  g_signal_connect (message, "finished", G_CALLBACK (on_message_finished), writer);
  g_ptr_array_add (self->writers, writer);

  /* nothing, not even the status line, goes out before the first step */
  soup_server_message_pause (message);
  writer_schedule (writer, scenario->hold_ms);
}

static gpointer
upstream_thread (gpointer data)
{
  SymfonicTestUpstream *self = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocket) socket = NULL;
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) any_port = g_inet_socket_address_new (loopback, 0);
  g_autoptr(GSocketAddress) bound = NULL;

  g_main_context_push_thread_default (self->context);

  /* Our own socket for its backlog: GSocket's default of 10 overflows
   * when a gateway opens dozens of upstream connections at once, and the
   * kernel then resets some of them, a failure no real runtime (nor the
   * gateway's own listener, at 1024) would show. */
  socket = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &error);
  g_assert_no_error (error);
  g_socket_bind (socket, any_port, FALSE, &error);
  g_assert_no_error (error);
  g_socket_set_listen_backlog (socket, 1024);
  g_socket_listen (socket, &error);
  g_assert_no_error (error);
  bound = g_socket_get_local_address (socket, &error);
  g_assert_no_error (error);

  self->server = soup_server_new ("tls-certificate", self->certificate, NULL);
  soup_server_add_handler (self->server, NULL, upstream_handler, self, NULL);
  soup_server_listen_socket (self->server, socket, self->certificate != NULL ? SOUP_SERVER_LISTEN_HTTPS : 0,
                             &error);
  g_assert_no_error (error);

  g_mutex_lock (&self->lock);
  self->port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
  self->ready = TRUE;
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->lock);

  g_main_loop_run (self->loop);

  /* whatever never finished goes with the server: first its writers, so
   * that no step of theirs runs on a message the server let go */
  while (self->writers->len > 0)
    {
      Writer *writer = g_ptr_array_steal_index_fast (self->writers, 0);

      g_signal_handlers_disconnect_by_data (writer->message, writer);
      writer_free (writer);
    }
  soup_server_disconnect (self->server);
  while (g_main_context_pending (self->context))
    g_main_context_iteration (self->context, FALSE);
  g_clear_object (&self->server);
  while (g_main_context_pending (self->context))
    g_main_context_iteration (self->context, FALSE);

  g_main_context_pop_thread_default (self->context);

  return NULL;
}

/**
 * symfonic_test_upstream_new:
 *
 * Starts an upstream on an ephemeral port of 127.0.0.1, in its own thread.
 * It answers 404 on a path without a scenario.
 *
 * Returns: (transfer full): the running upstream
 */
SymfonicTestUpstream *
symfonic_test_upstream_new (void)
{
  return symfonic_test_upstream_new_tls (NULL);
}

/**
 * symfonic_test_upstream_new_tls:
 * @certificate: (nullable): the server's certificate, with its key
 *
 * As symfonic_test_upstream_new(), over https when @certificate is set.
 *
 * Returns: (transfer full): the running upstream
 */
SymfonicTestUpstream *
symfonic_test_upstream_new_tls (GTlsCertificate *certificate)
{
  SymfonicTestUpstream *self = g_new0 (SymfonicTestUpstream, 1);

  self->certificate = certificate != NULL ? g_object_ref (certificate) : NULL;

  g_mutex_init (&self->lock);
  g_cond_init (&self->cond);
  self->context = g_main_context_new ();
  self->loop = g_main_loop_new (self->context, FALSE);
  self->scenarios = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, scenario_unref);
  self->records = g_ptr_array_new_with_free_func (record_free);
  self->writers = g_ptr_array_new ();
  self->thread = g_thread_new ("test-upstream", upstream_thread, self);

  g_mutex_lock (&self->lock);
  while (!self->ready)
    g_cond_wait (&self->cond, &self->lock);
  g_mutex_unlock (&self->lock);

  return self;
}

static gboolean
quit_cb (gpointer data)
{
  g_main_loop_quit (data);
  return G_SOURCE_REMOVE;
}

/**
 * symfonic_test_upstream_free:
 * @self: an upstream
 *
 * Stops it: open connections are closed, responses not finished are
 * abandoned, and its records go with it.
 */
void
symfonic_test_upstream_free (SymfonicTestUpstream *self)
{
  g_main_context_invoke (self->context, quit_cb, self->loop);
  g_thread_join (self->thread);
  g_main_loop_unref (self->loop);
  g_main_context_unref (self->context);
  g_hash_table_unref (self->scenarios);
  g_ptr_array_unref (self->records);
  g_ptr_array_unref (self->writers);
  g_clear_object (&self->certificate);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->cond);
  g_free (self);
}

guint
symfonic_test_upstream_get_port (SymfonicTestUpstream *self)
{
  return self->port;
}

char *
symfonic_test_upstream_dup_url (SymfonicTestUpstream *self,
                                const char           *path)
{
  return g_strdup_printf ("%s://127.0.0.1:%u%s", self->certificate != NULL ? "https" : "http", self->port, path);
}

/**
 * symfonic_test_upstream_add:
 * @self: an upstream
 * @path: the request path
 * @scenario: what to answer on it, copied
 *
 * Serves @scenario to every request on @path (replacing an earlier one)
 * that has no scenario of its own for its query.
 *
 * Returns: (transfer full): the URL of @path
 */
char *
symfonic_test_upstream_add (SymfonicTestUpstream       *self,
                            const char                 *path,
                            const SymfonicTestScenario *scenario)
{
  symfonic_test_upstream_add_for_query (self, path, NULL, scenario);

  return symfonic_test_upstream_dup_url (self, path);
}

/**
 * symfonic_test_upstream_add_for_query:
 * @self: an upstream
 * @path: the request path
 * @query: (nullable): the "query" member of the JSON request body that
 *   selects this scenario, or %NULL for any
 * @scenario: what to answer, copied
 *
 * A gateway's runtime source POSTs every invocation to one URL, but
 * forwards the client's query verbatim: keyed on it, one upstream serves
 * many scripted turns to one gateway, and concurrently.
 */
void
symfonic_test_upstream_add_for_query (SymfonicTestUpstream       *self,
                                      const char                 *path,
                                      const char                 *query,
                                      const SymfonicTestScenario *scenario)
{
  g_mutex_lock (&self->lock);
  g_hash_table_replace (self->scenarios, scenario_key (path, query), scenario_copy (scenario));
  g_mutex_unlock (&self->lock);
}

static gboolean
record_matches (SymfonicTestUpstreamRecord *record,
                const char                 *path,
                const char                 *query)
{
  return g_str_equal (record->path, path) &&
         (query == NULL || g_strcmp0 (record->query, query) == 0);
}

/* Called locked: the one record that matches, NULL when none does; two
 * fail the test. */
static SymfonicTestUpstreamRecord *
find_locked (SymfonicTestUpstream *self,
             const char           *path,
             const char           *query)
{
  SymfonicTestUpstreamRecord *found = NULL;

  for (guint i = 0; i < self->records->len; i++)
    {
      SymfonicTestUpstreamRecord *record = g_ptr_array_index (self->records, i);

      if (record_matches (record, path, query))
        {
          if (found != NULL)
            g_error ("More than one request for %s (query %s)", path, query != NULL ? query : "any");
          found = record;
        }
    }

  return found;
}

/**
 * symfonic_test_upstream_find_record:
 * @self: an upstream
 * @path: the request path
 * @query: (nullable): the request's query, or %NULL for any
 *
 * Does not wait, for a caller whose own main context must run for the
 * request to be made at all.
 *
 * Returns: (transfer none) (nullable): the one request received so far
 *   that matches; more than one fails the test
 */
SymfonicTestUpstreamRecord *
symfonic_test_upstream_find_record (SymfonicTestUpstream *self,
                                    const char           *path,
                                    const char           *query)
{
  SymfonicTestUpstreamRecord *found;

  g_mutex_lock (&self->lock);
  found = find_locked (self, path, query);
  g_mutex_unlock (&self->lock);

  return found;
}

/**
 * symfonic_test_upstream_wait_record:
 * @self: an upstream
 * @path: the request path
 * @query: (nullable): the request's query, or %NULL for any
 *
 * Waits (bounded) for the one request that matches; fails the test when
 * it does not come.
 *
 * Returns: (transfer none): the record, valid as long as @self
 */
SymfonicTestUpstreamRecord *
symfonic_test_upstream_wait_record (SymfonicTestUpstream *self,
                                    const char           *path,
                                    const char           *query)
{
  gint64 deadline = g_get_monotonic_time () + SYMFONIC_TEST_WAIT_MS * G_TIME_SPAN_MILLISECOND;
  SymfonicTestUpstreamRecord *found;

  g_mutex_lock (&self->lock);
  while ((found = find_locked (self, path, query)) == NULL &&
         g_cond_wait_until (&self->cond, &self->lock, deadline))
    ;
  if (found == NULL)
    found = find_locked (self, path, query);
  g_mutex_unlock (&self->lock);

  if (found == NULL)
    g_error ("No request for %s (query %s) came", path, query != NULL ? query : "any");

  return found;
}

guint
symfonic_test_upstream_count_records (SymfonicTestUpstream *self,
                                      const char           *path,
                                      const char           *query)
{
  guint n = 0;

  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->records->len; i++)
    n += record_matches (g_ptr_array_index (self->records, i), path, query) ? 1 : 0;
  g_mutex_unlock (&self->lock);

  return n;
}

/* How many connections the requests so far came on: one client port
 * each, since a closed connection's port stays taken for a while. */
guint
symfonic_test_upstream_count_connections (SymfonicTestUpstream *self)
{
  g_autoptr(GHashTable) ports = g_hash_table_new (NULL, NULL);

  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->records->len; i++)
    {
      SymfonicTestUpstreamRecord *record = g_ptr_array_index (self->records, i);

      g_hash_table_add (ports, GUINT_TO_POINTER (record->client_port));
    }
  g_mutex_unlock (&self->lock);

  return g_hash_table_size (ports);
}

/**
 * symfonic_test_upstream_describe_connections:
 * @self: an upstream
 *
 * For a failing test to explain itself: one line per connection, in the
 * order of their first request, with its requests, when the first and
 * the last came (ms after the upstream's first request), and how many
 * of its answers the client cut short.
 *
 * Returns: (transfer full): the description
 */
char *
symfonic_test_upstream_describe_connections (SymfonicTestUpstream *self)
{
  GString *text = g_string_new (NULL);
  g_autoptr(GArray) ports = g_array_new (FALSE, FALSE, sizeof (guint16));
  gint64 origin;

  g_mutex_lock (&self->lock);
  origin = self->records->len > 0
           ? ((SymfonicTestUpstreamRecord *) g_ptr_array_index (self->records, 0))->received_us : 0;
  for (guint i = 0; i < self->records->len; i++)
    {
      SymfonicTestUpstreamRecord *record = g_ptr_array_index (self->records, i);
      gboolean seen = FALSE;

      for (guint j = 0; j < ports->len && !seen; j++)
        seen = g_array_index (ports, guint16, j) == record->client_port;
      if (!seen)
        g_array_append_val (ports, record->client_port);
    }
  for (guint j = 0; j < ports->len; j++)
    {
      guint16 port = g_array_index (ports, guint16, j);
      guint requests = 0;
      guint cut = 0;
      gint64 first = -1;
      gint64 last = -1;

      for (guint i = 0; i < self->records->len; i++)
        {
          SymfonicTestUpstreamRecord *record = g_ptr_array_index (self->records, i);

          if (record->client_port != port)
            continue;
          requests++;
          cut += record->closed_us > 0 ? 1 : 0;
          if (first < 0)
            first = record->received_us - origin;
          last = record->received_us - origin;
        }
      g_string_append_printf (text, "connection %u: %u requests, first at %.1f ms, last at %.1f ms, "
                              "%u answers cut short\n", j + 1, requests, first / 1000.0, last / 1000.0, cut);
    }
  g_mutex_unlock (&self->lock);

  return g_string_free (text, FALSE);
}

/**
 * symfonic_test_upstream_wait_over:
 * @self: an upstream
 * @record: one of its records
 *
 * Waits (bounded) until the upstream finished writing @record's response
 * or saw its connection close.
 *
 * Returns: whether it finished writing
 */
gboolean
symfonic_test_upstream_wait_over (SymfonicTestUpstream       *self,
                                  SymfonicTestUpstreamRecord *record)
{
  gint64 deadline = g_get_monotonic_time () + SYMFONIC_TEST_WAIT_MS * G_TIME_SPAN_MILLISECOND;
  gboolean completed;

  g_mutex_lock (&self->lock);
  while (!record->completed && record->closed_us == 0 &&
         g_cond_wait_until (&self->cond, &self->lock, deadline))
    ;
  completed = record->completed;
  g_mutex_unlock (&self->lock);

  return completed;
}

/* When the status line of @record's response was released; 0 while it
 * was not. */
gint64
symfonic_test_upstream_get_responded_us (SymfonicTestUpstream       *self,
                                         SymfonicTestUpstreamRecord *record)
{
  gint64 value;

  g_mutex_lock (&self->lock);
  value = record->responded_us;
  g_mutex_unlock (&self->lock);

  return value;
}

/* When the upstream saw the connection close before it finished writing
 * @record's response; 0 if it did not (yet). */
gint64
symfonic_test_upstream_get_closed_us (SymfonicTestUpstream       *self,
                                      SymfonicTestUpstreamRecord *record)
{
  gint64 value;

  g_mutex_lock (&self->lock);
  value = record->closed_us;
  g_mutex_unlock (&self->lock);

  return value;
}

/* Whether the upstream wrote @record's response to its end. */
gboolean
symfonic_test_upstream_get_completed (SymfonicTestUpstream       *self,
                                      SymfonicTestUpstreamRecord *record)
{
  gboolean value;

  g_mutex_lock (&self->lock);
  value = record->completed;
  g_mutex_unlock (&self->lock);

  return value;
}

static gboolean
tick_cb (gpointer data)
{
  return G_SOURCE_CONTINUE;
}

/**
 * symfonic_test_upstream_time_hang_up:
 * @self: an upstream
 * @record: the request whose connection is watched
 * @stream: the client's stream, closed here
 * @session: (transfer full): the client's session, let go here: libsoup
 *   closes the socket of a half-read response only when its session goes
 *
 * Hangs the client up and waits, at most 5 seconds, for the upstream to
 * see its connection close, iterating this thread's main loop (where
 * libsoup closes the client's socket).
 *
 * Returns: microseconds from the hang-up to the close, or -1 when the
 *   upstream saw none
 */
gint64
symfonic_test_upstream_time_hang_up (SymfonicTestUpstream       *self,
                                     SymfonicTestUpstreamRecord *record,
                                     SymfonicTestStream         *stream,
                                     SoupSession                *session)
{
  GSource *tick = g_timeout_source_new (1);
  gint64 hung_up_us = g_get_monotonic_time ();
  gint64 deadline = hung_up_us + 5 * G_USEC_PER_SEC;
  gint64 closed_us;

  symfonic_test_stream_close (stream);
  soup_session_abort (session);
  g_object_unref (session);

  g_source_set_callback (tick, tick_cb, NULL, NULL);
  g_source_attach (tick, NULL);
  do
    {
      g_main_context_iteration (NULL, TRUE);
      closed_us = symfonic_test_upstream_get_closed_us (self, record);
    }
  while (closed_us == 0 && g_get_monotonic_time () < deadline);
  g_source_destroy (tick);
  g_source_unref (tick);

  return closed_us > 0 ? closed_us - hung_up_us : -1;
}
