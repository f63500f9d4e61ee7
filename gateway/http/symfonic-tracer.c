/* symfonic-tracer.c: spans of requests, exported over OTLP/HTTP
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <libsoup/soup.h>
#include <glib/gi18n-lib.h>

#include "symfonic-error.h"
#include "symfonic-json.h"
#include "symfonic-tracer-private.h"
#include "symfonic-version.h"

/* Spans leave a worker once per request, never per event: the request's
 * thread writes them as OTLP JSON when it is over and puts them in its own
 * queue, a fixed ring with one writer and one reader, so handing them over
 * takes no lock and never waits: a full ring drops them, counted. The
 * exporter's thread, with a main context and a SoupSession of its own,
 * empties the rings every EXPORT_INTERVAL_MS and posts what it found in
 * one OTLP/HTTP request, one at a time. */

#define RING_SIZE 1024
#define EXPORT_INTERVAL_MS 100
/* spans in one export; the rest wait for the next */
#define MAX_BATCH_SPANS 2048
#define EXPORT_TIMEOUT_S 10
#define STOP_GRACE_MS 2000

typedef struct
{
  /* the reader's and the writer's positions, counted up forever */
  guint64              head;
  guint64              tail;
  SymfonicTraceRecord *items[RING_SIZE];
} Ring;

struct _SymfonicTracer
{
  char            *endpoint;
  char            *resource;
  double           ratio;
  SymfonicMetrics *metrics;

  Ring            *rings[SYMFONIC_TELEMETRY_MAX_SHARDS];
  /* the threads past the others share the last ring, one at a time */
  GMutex           shared_lock;

  GThread         *thread;
  GMainContext    *context;
  GMainLoop       *loop;
  SoupSession     *session;
  gboolean         in_flight;
  gboolean         stopping;
};

/* --- ids ------------------------------------------------------------------- */

static _Thread_local guint64 rng_state;

/* xorshift64*, seeded once per thread: ids need to be unique, not secret,
 * and g_random_*() takes a process-wide lock */
static guint64
next_random (void)
{
  if (G_UNLIKELY (rng_state == 0))
    rng_state = ((guint64) g_random_int () << 32 | g_random_int ()) | 1;
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;

  return rng_state * G_GUINT64_CONSTANT (2685821657736338717);
}

static void
random_bytes (guint8 *out,
              gsize   length)
{
  for (gsize i = 0; i < length; i += 8)
    {
      guint64 r = next_random ();

      memcpy (out + i, &r, MIN (8, length - i));
    }
}

void
symfonic_trace_new_span_id (guint8 id[8])
{
  random_bytes (id, 8);
}

static void
append_hex (GString      *out,
            const guint8 *bytes,
            gsize         length)
{
  static const char digits[] = "0123456789abcdef";

  for (gsize i = 0; i < length; i++)
    {
      g_string_append_c (out, digits[bytes[i] >> 4]);
      g_string_append_c (out, digits[bytes[i] & 15]);
    }
}

static gboolean
parse_hex (const char *text,
           guint8     *out,
           gsize       length)
{
  gboolean nonzero = FALSE;

  for (gsize i = 0; i < length; i++)
    {
      int high = g_ascii_xdigit_value (text[2 * i]);
      int low = g_ascii_xdigit_value (text[2 * i + 1]);

      if (high < 0 || low < 0 || g_ascii_isupper (text[2 * i]) || g_ascii_isupper (text[2 * i + 1]))
        return FALSE;
      out[i] = high << 4 | low;
      nonzero |= out[i] != 0;
    }

  return nonzero;
}

/* `00-TRACE-PARENT-FLAGS`, as W3C Trace Context version 00 writes it. */
static gboolean
parse_traceparent (const char *text,
                   guint8      trace_id[16],
                   guint8      parent_id[8],
                   guint8     *flags)
{
  if (text == NULL || strlen (text) != 55 || strncmp (text, "00-", 3) != 0 || text[35] != '-' || text[52] != '-')
    return FALSE;

  return parse_hex (text + 3, trace_id, 16) && parse_hex (text + 36, parent_id, 8) &&
         (parse_hex (text + 53, flags, 1) || (*flags = 0, text[53] == '0' && text[54] == '0'));
}

static void
write_traceparent (char          out[56],
                   const guint8  trace_id[16],
                   const guint8  span_id[8],
                   guint8        flags)
{
  g_autoptr(GString) text = g_string_new ("00-");

  append_hex (text, trace_id, 16);
  g_string_append_c (text, '-');
  append_hex (text, span_id, 8);
  g_string_append_c (text, '-');
  append_hex (text, &flags, 1);
  g_strlcpy (out, text->str, 56);
}

SymfonicTraceContext *
symfonic_tracer_start (SymfonicTracer *self,
                       const char     *traceparent,
                       char            forward[56])
{
  SymfonicTraceContext *context;
  guint8 trace_id[16], parent_id[8], flags = 0;
  gboolean has_parent = parse_traceparent (traceparent, trace_id, parent_id, &flags);
  gboolean sampled;

  forward[0] = '\0';
  if (has_parent)
    write_traceparent (forward, trace_id, parent_id, flags);
  if (self == NULL)
    return NULL;

  if (has_parent)
    sampled = (flags & 1) != 0;
  else
    sampled = self->ratio >= 1.0 || (self->ratio > 0.0 && (next_random () >> 11) * 0x1.0p-53 < self->ratio);
  if (!sampled)
    return NULL;

  context = g_new0 (SymfonicTraceContext, 1);
  if (has_parent)
    {
      memcpy (context->trace_id, trace_id, 16);
      memcpy (context->parent_id, parent_id, 8);
      context->has_parent = TRUE;
    }
  else
    random_bytes (context->trace_id, 16);
  random_bytes (context->span_id, 8);
  random_bytes (context->upstream_id, 8);
  context->start_us = g_get_monotonic_time ();
  context->clock_offset_us = g_get_real_time () - context->start_us;
  write_traceparent (forward, context->trace_id, context->upstream_id, 1);

  return context;
}

/* --- writing spans ----------------------------------------------------------- */

void
symfonic_trace_record_free (SymfonicTraceRecord *record)
{
  g_string_free (record->json, TRUE);
  g_free (record);
}

static void
append_nanos (GString *out,
              gint64   unix_us)
{
  g_string_append_printf (out, "\"%" G_GINT64_FORMAT "000\"", MAX (unix_us, 0));
}

void
symfonic_trace_span_begin (SymfonicTraceRecord        *record,
                           const SymfonicTraceContext *context,
                           const guint8               *span_id,
                           const guint8               *parent_id,
                           const char                 *name,
                           guint                       kind,
                           gint64                      start_us,
                           gint64                      end_us)
{
  GString *out = record->json;

  if (record->n_spans++ > 0)
    g_string_append_c (out, ',');
  g_string_append (out, "{\"traceId\":\"");
  append_hex (out, context->trace_id, 16);
  g_string_append (out, "\",\"spanId\":\"");
  append_hex (out, span_id, 8);
  g_string_append_c (out, '"');
  if (parent_id != NULL)
    {
      g_string_append (out, ",\"parentSpanId\":\"");
      append_hex (out, parent_id, 8);
      g_string_append_c (out, '"');
    }
  g_string_append (out, ",\"name\":");
  symfonic_json_append_string (out, name, -1);
  g_string_append_printf (out, ",\"kind\":%u,\"startTimeUnixNano\":", kind);
  append_nanos (out, start_us + context->clock_offset_us);
  g_string_append (out, ",\"endTimeUnixNano\":");
  append_nanos (out, MAX (end_us, start_us) + context->clock_offset_us);
  g_string_append (out, ",\"attributes\":[");
  record->n_attrs = 0;
}

static void
begin_attr (SymfonicTraceRecord *record,
            const char          *key)
{
  if (record->n_attrs++ > 0)
    g_string_append_c (record->json, ',');
  g_string_append (record->json, "{\"key\":");
  symfonic_json_append_string (record->json, key, -1);
  g_string_append (record->json, ",\"value\":");
}

void
symfonic_trace_attr_string (SymfonicTraceRecord *record,
                            const char          *key,
                            const char          *value)
{
  if (value == NULL)
    return;
  begin_attr (record, key);
  g_string_append (record->json, "{\"stringValue\":");
  symfonic_json_append_string (record->json, value, -1);
  g_string_append (record->json, "}}");
}

void
symfonic_trace_attr_int (SymfonicTraceRecord *record,
                         const char          *key,
                         gint64               value)
{
  begin_attr (record, key);
  g_string_append_printf (record->json, "{\"intValue\":\"%" G_GINT64_FORMAT "\"}}", value);
}

void
symfonic_trace_attr_double (SymfonicTraceRecord *record,
                            const char          *key,
                            double               value)
{
  char text[G_ASCII_DTOSTR_BUF_SIZE];

  begin_attr (record, key);
  g_string_append_printf (record->json, "{\"doubleValue\":%s}}",
                          g_ascii_formatd (text, sizeof text, "%.9g", value));
}

void
symfonic_trace_attr_bool (SymfonicTraceRecord *record,
                          const char          *key,
                          gboolean             value)
{
  begin_attr (record, key);
  g_string_append_printf (record->json, "{\"boolValue\":%s}}", value ? "true" : "false");
}

void
symfonic_trace_attr_strings (SymfonicTraceRecord *record,
                             const char          *key,
                             const char * const  *values)
{
  begin_attr (record, key);
  g_string_append (record->json, "{\"arrayValue\":{\"values\":[");
  for (guint i = 0; values[i] != NULL; i++)
    {
      if (i > 0)
        g_string_append_c (record->json, ',');
      g_string_append (record->json, "{\"stringValue\":");
      symfonic_json_append_string (record->json, values[i], -1);
      g_string_append_c (record->json, '}');
    }
  g_string_append (record->json, "]}}}");
}

void
symfonic_trace_span_end (SymfonicTraceRecord *record,
                         const char          *error_message)
{
  g_string_append (record->json, "],\"status\":");
  if (error_message == NULL)
    g_string_append (record->json, "{}}");
  else
    {
      g_string_append (record->json, "{\"code\":2,\"message\":");
      symfonic_json_append_string (record->json, error_message, -1);
      g_string_append (record->json, "}}");
    }
}

/* --- the queues ---------------------------------------------------------------- */

static Ring *
get_ring (SymfonicTracer *self,
          guint           index)
{
  Ring *ring = __atomic_load_n (&self->rings[index], __ATOMIC_ACQUIRE);
  Ring *expected = NULL;

  if (ring != NULL)
    return ring;
  ring = g_new0 (Ring, 1);
  if (!__atomic_compare_exchange_n (&self->rings[index], &expected, ring, FALSE, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    {
      g_free (ring);
      ring = expected;
    }

  return ring;
}

static gboolean
ring_push (Ring                *ring,
           SymfonicTraceRecord *record)
{
  guint64 tail = __atomic_load_n (&ring->tail, __ATOMIC_RELAXED);
  guint64 head = __atomic_load_n (&ring->head, __ATOMIC_ACQUIRE);

  if (tail - head >= RING_SIZE)
    return FALSE;
  ring->items[tail % RING_SIZE] = record;
  __atomic_store_n (&ring->tail, tail + 1, __ATOMIC_RELEASE);

  return TRUE;
}

static SymfonicTraceRecord *
ring_pop (Ring *ring)
{
  guint64 head = __atomic_load_n (&ring->head, __ATOMIC_RELAXED);
  guint64 tail = __atomic_load_n (&ring->tail, __ATOMIC_ACQUIRE);
  SymfonicTraceRecord *record;

  if (head == tail)
    return NULL;
  record = ring->items[head % RING_SIZE];
  __atomic_store_n (&ring->head, head + 1, __ATOMIC_RELEASE);

  return record;
}

void
symfonic_tracer_submit (SymfonicTracer      *self,
                        SymfonicTraceRecord *record)
{
  guint index = symfonic_telemetry_thread_shard ();
  Ring *ring = get_ring (self, index);
  gboolean taken;

  if (symfonic_telemetry_shard_is_shared (index))
    {
      g_mutex_lock (&self->shared_lock);
      taken = ring_push (ring, record);
      g_mutex_unlock (&self->shared_lock);
    }
  else
    taken = ring_push (ring, record);

  if (!taken)
    {
      symfonic_metrics_add (self->metrics, SYMFONIC_COUNTER_SPANS_DROPPED, record->n_spans);
      symfonic_trace_record_free (record);
    }
}

/* --- the exporter's thread ------------------------------------------------------- */

static void export_batch (SymfonicTracer *self);

static void
exported (GObject      *object,
          GAsyncResult *result,
          gpointer      data)
{
  SymfonicTracer *self = data;
  SoupMessage *message = soup_session_get_async_result_message (SOUP_SESSION (object), result);
  g_autoptr(GBytes) body = NULL;
  g_autoptr(GError) error = NULL;
  guint n_spans = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (message), "symfonic-spans"));
  guint status;

  body = soup_session_send_and_read_finish (SOUP_SESSION (object), result, &error);
  status = soup_message_get_status (message);
  self->in_flight = FALSE;
  if (body != NULL && SOUP_STATUS_IS_SUCCESSFUL (status))
    symfonic_metrics_add (self->metrics, SYMFONIC_COUNTER_SPANS_EXPORTED, n_spans);
  else
    {
      symfonic_metrics_add (self->metrics, SYMFONIC_COUNTER_EXPORTS_FAILED, 1);
      symfonic_metrics_add (self->metrics, SYMFONIC_COUNTER_SPANS_DROPPED, n_spans);
      g_debug ("Exporting %u spans to %s failed: %s", n_spans, self->endpoint,
               error != NULL ? error->message : soup_status_get_phrase (status));
    }
  g_object_unref (message);

  if (self->stopping)
    export_batch (self);
}

/* Posts what the rings hold, up to a batch; nothing while a post is on
 * its way. Once stopping, the loop quits when nothing is left. */
static void
export_batch (SymfonicTracer *self)
{
  g_autoptr(GString) body = NULL;
  g_autoptr(GBytes) bytes = NULL;
  SoupMessage *message;
  guint n_spans = 0;

  if (self->in_flight)
    return;

  for (guint i = 0; i < SYMFONIC_TELEMETRY_MAX_SHARDS && n_spans < MAX_BATCH_SPANS; i++)
    {
      Ring *ring = __atomic_load_n (&self->rings[i], __ATOMIC_ACQUIRE);
      SymfonicTraceRecord *record;

      while (ring != NULL && n_spans < MAX_BATCH_SPANS && (record = ring_pop (ring)) != NULL)
        {
          if (body == NULL)
            {
              body = g_string_new ("{\"resourceSpans\":[{\"resource\":");
              g_string_append (body, self->resource);
              g_string_append (body, ",\"scopeSpans\":[{\"scope\":{\"name\":\"symfonic-gateway\",\"version\":\""
                               SYMFONIC_VERSION "\"},\"spans\":[");
            }
          else
            g_string_append_c (body, ',');
          g_string_append_len (body, record->json->str, record->json->len);
          n_spans += record->n_spans;
          symfonic_trace_record_free (record);
        }
    }

  if (body == NULL)
    {
      if (self->stopping)
        g_main_loop_quit (self->loop);
      return;
    }

  g_string_append (body, "]}]}]}");
  bytes = g_string_free_to_bytes (g_steal_pointer (&body));
  message = soup_message_new (SOUP_METHOD_POST, self->endpoint);
  soup_message_set_request_body_from_bytes (message, "application/json", bytes);
  g_object_set_data (G_OBJECT (message), "symfonic-spans", GUINT_TO_POINTER (n_spans));
  self->in_flight = TRUE;
  soup_session_send_and_read_async (self->session, message, G_PRIORITY_DEFAULT, NULL, exported, self);
}

static gboolean
tick (gpointer data)
{
  export_batch (data);
  return G_SOURCE_CONTINUE;
}

static gboolean
stop_now (gpointer data)
{
  SymfonicTracer *self = data;

  g_main_loop_quit (self->loop);
  return G_SOURCE_REMOVE;
}

static gboolean
begin_stop (gpointer data)
{
  SymfonicTracer *self = data;
  GSource *grace = g_timeout_source_new (STOP_GRACE_MS);

  self->stopping = TRUE;
  g_source_set_callback (grace, stop_now, self, NULL);
  g_source_attach (grace, self->context);
  g_source_unref (grace);
  export_batch (self);

  return G_SOURCE_REMOVE;
}

static gpointer
exporter_thread (gpointer data)
{
  SymfonicTracer *self = data;
  g_autoptr(GProxyResolver) no_proxy = g_simple_proxy_resolver_new (NULL, NULL);
  GSource *timer;

  g_main_context_push_thread_default (self->context);
  /* an explicit resolver: the default one would start a settings reader */
  self->session = soup_session_new_with_options ("proxy-resolver", no_proxy,
                                                 "timeout", EXPORT_TIMEOUT_S,
                                                 "user-agent", "symfonic-gateway/" SYMFONIC_VERSION,
                                                 NULL);
  timer = g_timeout_source_new (EXPORT_INTERVAL_MS);
  g_source_set_callback (timer, tick, self, NULL);
  g_source_set_static_name (timer, "[symfonic] trace export");
  g_source_attach (timer, self->context);
  g_main_loop_run (self->loop);
  g_source_destroy (timer);
  g_source_unref (timer);
  soup_session_abort (self->session);
  while (g_main_context_pending (self->context))
    g_main_context_iteration (self->context, FALSE);
  g_clear_object (&self->session);
  g_main_context_pop_thread_default (self->context);

  return NULL;
}

SymfonicTracer *
symfonic_tracer_new (const char       *endpoint,
                     const char       *service_name,
                     double            ratio,
                     SymfonicMetrics  *metrics,
                     GError          **error)
{
  g_autoptr(GUri) uri = g_uri_parse (endpoint, SOUP_HTTP_URI_FLAGS, NULL);
  SymfonicTracer *self;
  GString *resource;

  if (uri == NULL || g_uri_get_host (uri) == NULL || *g_uri_get_host (uri) == '\0' ||
      (g_strcmp0 (g_uri_get_scheme (uri), "http") != 0 && g_strcmp0 (g_uri_get_scheme (uri), "https") != 0))
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("otlp-endpoint “%s” is not an http or https URL"), endpoint);
      return NULL;
    }

  self = g_new0 (SymfonicTracer, 1);
  self->endpoint = g_strdup (endpoint);
  self->ratio = ratio;
  self->metrics = metrics;
  g_mutex_init (&self->shared_lock);
  resource = g_string_new ("{\"attributes\":[{\"key\":\"service.name\",\"value\":{\"stringValue\":");
  symfonic_json_append_string (resource, service_name != NULL ? service_name : "symfonic-gateway", -1);
  g_string_append (resource, "}},{\"key\":\"service.version\",\"value\":{\"stringValue\":\"" SYMFONIC_VERSION "\"}}]}");
  self->resource = g_string_free (resource, FALSE);
  self->context = g_main_context_new ();
  self->loop = g_main_loop_new (self->context, FALSE);
  self->thread = g_thread_new ("trace-export", exporter_thread, self);

  return self;
}

/* Exports what is queued, for a moment at most, then stops the thread. */
void
symfonic_tracer_free (SymfonicTracer *self)
{
  g_main_context_invoke (self->context, begin_stop, self);
  g_thread_join (self->thread);

  for (guint i = 0; i < SYMFONIC_TELEMETRY_MAX_SHARDS; i++)
    {
      SymfonicTraceRecord *record;

      while (self->rings[i] != NULL && (record = ring_pop (self->rings[i])) != NULL)
        {
          symfonic_metrics_add (self->metrics, SYMFONIC_COUNTER_SPANS_DROPPED, record->n_spans);
          symfonic_trace_record_free (record);
        }
      g_free (self->rings[i]);
    }
  g_main_loop_unref (self->loop);
  g_main_context_unref (self->context);
  g_mutex_clear (&self->shared_lock);
  g_free (self->resource);
  g_free (self->endpoint);
  g_free (self);
}
