/* test-observability.c: /metrics and the OTLP spans of real requests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-test-support.h"
#include "symfonic-test-upstream.h"

#define API_KEY "sk-observability-test"

#define OPENAI_CHUNK(choice) \
  "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test-0613\"," \
  "\"choices\":[" choice "]}\n\n"
#define OPENAI_DELTA(delta) OPENAI_CHUNK ("{\"index\":0,\"delta\":" delta ",\"finish_reason\":null}")

static const char answer[] =
  OPENAI_DELTA ("{\"role\":\"assistant\",\"content\":\"\"}")
  OPENAI_DELTA ("{\"content\":\"Tea \"}")
  OPENAI_DELTA ("{\"content\":\"is calm.\"}")
  OPENAI_CHUNK ("{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}")
  "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test-0613\","
  "\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":34,\"total_tokens\":46,"
  "\"completion_tokens_details\":{\"reasoning_tokens\":5}}}\n\n"
  "data: [DONE]\n\n";

/* two deltas, then the provider holds the stream */
static const char held[] =
  OPENAI_DELTA ("{\"content\":\"Tea is calm.\"}")
  OPENAI_DELTA ("{\"content\":\" Really.\"}");

/* --- a loopback OTLP/HTTP receiver --------------------------------------- */

typedef struct
{
  SoupServer *server;
  guint16     port;
  /* every span received, as parsed */
  GPtrArray  *spans;
  GPtrArray  *bodies;
  char       *content_type;
} Sink;

static void
sink_handler (SoupServer        *server,
              SoupServerMessage *message,
              const char        *path,
              GHashTable        *query,
              gpointer           user_data)
{
  Sink *sink = user_data;
  SoupMessageBody *body = soup_server_message_get_request_body (message);
  g_autoptr(GBytes) bytes = soup_message_body_flatten (body);
  g_autoptr(JsonNode) root = NULL;
  JsonArray *resources;

  g_assert_cmpstr (path, ==, "/v1/traces");
  g_assert_cmpstr (soup_server_message_get_method (message), ==, "POST");
  g_free (sink->content_type);
  sink->content_type = g_strdup (soup_message_headers_get_content_type (soup_server_message_get_request_headers (message),
                                                                        NULL));
  root = json_from_string (g_bytes_get_data (bytes, NULL), NULL);
  g_assert_nonnull (root);
  g_ptr_array_add (sink->bodies, g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes)));
  resources = json_object_get_array_member (json_node_get_object (root), "resourceSpans");
  for (guint i = 0; i < json_array_get_length (resources); i++)
    {
      JsonObject *resource = json_array_get_object_element (resources, i);
      JsonArray *scopes = json_object_get_array_member (resource, "scopeSpans");

      for (guint j = 0; j < json_array_get_length (scopes); j++)
        {
          JsonArray *spans = json_object_get_array_member (json_array_get_object_element (scopes, j), "spans");

          for (guint k = 0; k < json_array_get_length (spans); k++)
            g_ptr_array_add (sink->spans, json_object_ref (json_array_get_object_element (spans, k)));
        }
    }

  soup_server_message_set_status (message, 200, NULL);
  soup_server_message_set_response (message, "application/json", SOUP_MEMORY_STATIC, "{}", 2);
}

static Sink *
sink_new (void)
{
  Sink *sink = g_new0 (Sink, 1);
  g_autoptr(GSocket) socket = symfonic_test_loopback_socket (TRUE, &sink->port);
  g_autoptr(GError) error = NULL;

  sink->spans = g_ptr_array_new_with_free_func ((GDestroyNotify) json_object_unref);
  sink->bodies = g_ptr_array_new_with_free_func (g_free);
  sink->server = soup_server_new (NULL, NULL);
  soup_server_add_handler (sink->server, "/", sink_handler, sink, NULL);
  soup_server_listen_socket (sink->server, socket, 0, &error);
  g_assert_no_error (error);

  return sink;
}

static void
sink_free (Sink *sink)
{
  soup_server_disconnect (sink->server);
  g_object_unref (sink->server);
  g_ptr_array_unref (sink->spans);
  g_ptr_array_unref (sink->bodies);
  g_free (sink->content_type);
  g_free (sink);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Sink, sink_free)

typedef struct
{
  Sink       *sink;
  const char *trace_id;
  guint       n_spans;
} SpanWait;

static guint
count_trace (Sink       *sink,
             const char *trace_id)
{
  guint n = 0;

  for (guint i = 0; i < sink->spans->len; i++)
    n += g_str_equal (json_object_get_string_member (g_ptr_array_index (sink->spans, i), "traceId"), trace_id);

  return n;
}

static gboolean
trace_arrived (gpointer data)
{
  SpanWait *wait = data;

  return count_trace (wait->sink, wait->trace_id) >= wait->n_spans;
}

/* The spans of @trace_id, once at least @n_spans came. */
static void
wait_trace (Sink       *sink,
            const char *trace_id,
            guint       n_spans)
{
  SpanWait wait = { sink, trace_id, n_spans };

  if (!symfonic_test_iterate_until (g_main_context_default (), trace_arrived, &wait, SYMFONIC_TEST_WAIT_MS))
    g_error ("trace %s: %u spans of %u arrived", trace_id, count_trace (sink, trace_id), n_spans);
}

static JsonObject *
find_span (Sink       *sink,
           const char *trace_id,
           const char *name)
{
  for (guint i = 0; i < sink->spans->len; i++)
    {
      JsonObject *span = g_ptr_array_index (sink->spans, i);

      if (g_str_equal (json_object_get_string_member (span, "traceId"), trace_id) &&
          g_str_equal (json_object_get_string_member (span, "name"), name))
        return span;
    }

  return NULL;
}

static JsonObject *
get_span (Sink       *sink,
          const char *trace_id,
          const char *name)
{
  JsonObject *span = find_span (sink, trace_id, name);

  if (span == NULL)
    g_error ("trace %s has no span named “%s”", trace_id, name);

  return span;
}

/* The value object of attribute @key, or NULL. */
static JsonObject *
attribute (JsonObject *span,
           const char *key)
{
  JsonArray *attributes = json_object_get_array_member (span, "attributes");

  for (guint i = 0; i < json_array_get_length (attributes); i++)
    {
      JsonObject *attribute = json_array_get_object_element (attributes, i);

      if (g_str_equal (json_object_get_string_member (attribute, "key"), key))
        return json_object_get_object_member (attribute, "value");
    }

  return NULL;
}

static void
assert_string_attr (JsonObject *span,
                    const char *key,
                    const char *expected)
{
  JsonObject *value = attribute (span, key);

  if (expected == NULL)
    {
      g_assert_null (value);
      return;
    }
  if (value == NULL)
    g_error ("span “%s” has no attribute %s", json_object_get_string_member (span, "name"), key);
  g_assert_cmpstr (json_object_get_string_member (value, "stringValue"), ==, expected);
}

static void
assert_int_attr (JsonObject *span,
                 const char *key,
                 gint64      expected)
{
  JsonObject *value = attribute (span, key);
  g_autofree char *text = g_strdup_printf ("%" G_GINT64_FORMAT, expected);

  if (value == NULL)
    g_error ("span “%s” has no attribute %s", json_object_get_string_member (span, "name"), key);
  g_assert_cmpstr (json_object_get_string_member (value, "intValue"), ==, text);
}

static void
assert_status (JsonObject *span,
               gint64      code)
{
  JsonObject *status = json_object_get_object_member (span, "status");

  g_assert_cmpint (json_object_get_int_member_with_default (status, "code", 0), ==, code);
}

static gint64
span_time (JsonObject *span,
           const char *member)
{
  return g_ascii_strtoll (json_object_get_string_member (span, member), NULL, 10);
}

/* --- the gateway ---------------------------------------------------------- */

static char *
write_file (const char *name,
            const char *contents)
{
  char *path = g_build_filename (symfonic_test_private_dir (), name, NULL);
  g_autoptr(GError) error = NULL;

  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);

  return path;
}

static SymfonicServer *
gateway_new (const char *base_url,
             const char *gateway_lines)
{
  g_autofree char *key_file = write_file ("provider.key", API_KEY "\n");
  g_autofree char *text = NULL;

  text = g_strdup_printf ("[gateway]\nlisten=127.0.0.1:0\nworkers=2\n%s\n\n"
                          "[route:typed]\npath=" SYMFONIC_TEST_TYPED_PATH "\nkind=typed\nsource=up\n"
                          "stages=auth;budget;extraction;citation;errors\n\n"
                          "[source:up]\ntype=openai\nbase-url=%s\nmodel=test-model\napi-key-file=%s\n"
                          "max-tokens=256\ntimeout=5\n\n"
                          "[stage:auth]\ntype=auth\ntokens-file=" SYMFONIC_TEST_DATA_DIR "/demo-tokens.ini\n\n"
                          "[stage:budget]\ntype=budget\ntokens-per-window=1000000\n\n"
                          "[stage:extraction]\ntype=extraction\n\n"
                          "[stage:citation]\ntype=citation\n\n"
                          "[stage:errors]\ntype=error-map\ntable=" SYMFONIC_TEST_DATA_DIR "/error-map.ini\n",
                          gateway_lines, base_url, key_file);

  return symfonic_test_server_new (text, symfonic_test_private_dir (), 2);
}

static char *
provider_add (SymfonicTestUpstream *fake,
              const char           *path,
              guint                 status,
              const char           *body,
              gboolean              stall)
{
  g_autoptr(GBytes) bytes = g_bytes_new (body, strlen (body));
  SymfonicTestScenario scenario = {
    .status = status,
    .content_type = status == 200 ? "text/event-stream" : "application/json",
    .body = bytes,
    .split = SYMFONIC_TEST_SPLIT_WHOLE,
    .after = stall ? SYMFONIC_TEST_AFTER_STALL : SYMFONIC_TEST_AFTER_CLOSE,
  };
  g_autofree char *url = symfonic_test_upstream_add (fake, path, &scenario);

  return g_strndup (url, strlen (url) - strlen ("/chat/completions"));
}

static const char *
promtool (void)
{
  static char *path;

  if (path == NULL)
    path = g_find_program_in_path ("promtool");

  return path;
}

/* The scrape passes `promtool check metrics`, as Prometheus reads it. */
static void
check_exposition (const char *text)
{
  g_autofree char *file = write_file ("scrape.prom", text);
  g_autofree char *command = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(GError) error = NULL;
  int status;

  if (promtool () == NULL)
    {
      g_test_message ("promtool is not installed (Debian's prometheus package): the exposition is not checked");
      return;
    }
  command = g_strdup_printf ("sh -c '%s check metrics < %s'", promtool (), file);
  g_spawn_command_line_sync (command, &out, &err, &status, &error);
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("promtool check metrics failed:\n%s%s", out, err);
}

static double
metric (const char *text,
        const char *series)
{
  double value = -1;

  if (!symfonic_test_metrics_lookup (text, series, &value))
    g_error ("no series %s in the scrape", series);

  return value;
}

#define GENAI_LABELS "route=\"typed\",source=\"up\",gen_ai_operation_name=\"chat\"," \
                     "gen_ai_provider_name=\"openai\",gen_ai_request_model=\"test-model\""

static SymfonicTestResponse *
get_metrics (SoupSession *session,
             const char  *url,
             const char  *token)
{
  g_autofree char *authorization = token != NULL ? g_strconcat ("Bearer ", token, NULL) : NULL;

  return symfonic_test_request (session, "GET", url, NULL, NULL,
                                authorization != NULL ? "Authorization" : NULL, authorization, NULL);
}

/* A streamed, a refused, a cut and a failed request, each with a
 * traceparent of the test's own, field by field in the spans and in the
 * metrics. */
static void
test_streams_traced (void)
{
  g_autoptr(Sink) sink = sink_new ();
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autofree char *ok_url = provider_add (fake, "/ok/chat/completions", 200, answer, FALSE);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autofree char *gateway_lines = NULL;
  g_autoptr(SymfonicServer) server = NULL;
  g_autofree char *url = NULL;
  g_autofree char *metrics_url = NULL;
  g_autoptr(SymfonicTestResponse) scrape = NULL;
  const char *text;
  SymfonicTestUpstreamRecord *record;
  JsonObject *root, *span;
  JsonArray *reasons;

  gateway_lines = g_strdup_printf ("otlp-endpoint=http://127.0.0.1:%u/v1/traces\ntrace-sample-ratio=0\n"
                                   "service-name=gateway-under-test\nmetrics-tenant-label=true\nmetrics-tenants=1",
                                   sink->port);
  server = gateway_new (ok_url, gateway_lines);
  url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);
  metrics_url = symfonic_test_server_dup_url (server, "/metrics");

  /* streamed: sampled by the client's flag, whatever the ratio */
  {
    g_autoptr(SymfonicTestStream) stream =
      symfonic_test_stream_post (session, url, "{\"query\":\"Why?\"}",
                                 "Authorization", "Bearer demo-token-alice", "X-Tenant-ID", "acme",
                                 "traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", NULL);

    symfonic_test_stream_wait_done (stream);
    g_assert_cmpuint (stream->status, ==, 200);
  }
  wait_trace (sink, "0af7651916cd43dd8448eb211c80319c", 7);
  g_assert_cmpstr (sink->content_type, ==, "application/json");

  root = get_span (sink, "0af7651916cd43dd8448eb211c80319c", "chat test-model");
  g_assert_cmpint (json_object_get_int_member (root, "kind"), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (root, "parentSpanId"), ==, "b7ad6b7169203331");
  g_assert_cmpuint (strlen (json_object_get_string_member (root, "spanId")), ==, 16);
  g_assert_cmpint (span_time (root, "endTimeUnixNano"), >=, span_time (root, "startTimeUnixNano"));
  assert_string_attr (root, "gen_ai.operation.name", "chat");
  assert_string_attr (root, "gen_ai.provider.name", "openai");
  assert_string_attr (root, "gen_ai.request.model", "test-model");
  assert_string_attr (root, "gen_ai.response.model", "gpt-test-0613");
  assert_int_attr (root, "gen_ai.usage.input_tokens", 12);
  assert_int_attr (root, "gen_ai.usage.output_tokens", 34);
  reasons = json_object_get_array_member (json_object_get_object_member (attribute (root, "gen_ai.response.finish_reasons"),
                                                                         "arrayValue"), "values");
  g_assert_cmpuint (json_array_get_length (reasons), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (reasons, 0), "stringValue"), ==, "stop");
  g_assert_true (json_object_get_boolean_member (attribute (root, "gen_ai.request.stream"), "boolValue"));
  g_assert_cmpfloat (json_object_get_double_member (attribute (root, "gen_ai.response.time_to_first_chunk"),
                                                    "doubleValue"), >, 0);
  assert_string_attr (root, "symfonic.tenant.id", "acme");
  assert_string_attr (root, "symfonic.route", "typed");
  assert_string_attr (root, "http.route", SYMFONIC_TEST_TYPED_PATH);
  assert_string_attr (root, "symfonic.outcome", "completed");
  assert_int_attr (root, "http.response.status_code", 200);
  assert_string_attr (root, "error.type", NULL);
  assert_status (root, 0);

  /* a span per stage phase, children of the request's */
  span = get_span (sink, "0af7651916cd43dd8448eb211c80319c", "stage auth head");
  g_assert_cmpint (json_object_get_int_member (span, "kind"), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (span, "parentSpanId"), ==, json_object_get_string_member (root, "spanId"));
  assert_string_attr (span, "symfonic.stage", "auth");
  assert_string_attr (span, "symfonic.stage.phase", "head");
  span = get_span (sink, "0af7651916cd43dd8448eb211c80319c", "stage budget body");
  assert_string_attr (span, "symfonic.stage.phase", "body");
  span = get_span (sink, "0af7651916cd43dd8448eb211c80319c", "stage extraction events");
  g_assert_cmpint (g_ascii_strtoll (json_object_get_string_member (attribute (span, "symfonic.stage.events"), "intValue"),
                                    NULL, 10), >=, 3);
  get_span (sink, "0af7651916cd43dd8448eb211c80319c", "stage extraction finish");
  get_span (sink, "0af7651916cd43dd8448eb211c80319c", "stage citation events");

  /* the upstream call, whose id the provider got in its traceparent */
  span = get_span (sink, "0af7651916cd43dd8448eb211c80319c", "upstream up");
  g_assert_cmpint (json_object_get_int_member (span, "kind"), ==, 3);
  g_assert_cmpstr (json_object_get_string_member (span, "parentSpanId"), ==, json_object_get_string_member (root, "spanId"));
  assert_string_attr (span, "gen_ai.provider.name", "openai");
  assert_string_attr (span, "symfonic.source", "up");
  record = symfonic_test_upstream_wait_record (fake, "/ok/chat/completions", NULL);
  {
    g_autofree char *expected = g_strdup_printf ("00-0af7651916cd43dd8448eb211c80319c-%s-01",
                                                 json_object_get_string_member (span, "spanId"));

    g_assert_cmpstr (soup_message_headers_get_one (record->headers, "traceparent"), ==, expected);
  }

  /* refused before its body: the request's span and its auth stage's,
   * no upstream; a 401 is not the server's error */
  {
    g_autoptr(SymfonicTestResponse) response =
      symfonic_test_request (session, "POST", url, "application/json", "{\"query\":\"Why?\"}",
                             "traceparent", "00-11111111111111111111111111111111-2222222222222222-01", NULL);

    g_assert_cmpuint (response->status, ==, 401);
  }
  wait_trace (sink, "11111111111111111111111111111111", 2);
  root = get_span (sink, "11111111111111111111111111111111", "chat test-model");
  assert_string_attr (root, "symfonic.outcome", "refused");
  assert_int_attr (root, "http.response.status_code", 401);
  assert_string_attr (root, "error.type", "unauthorized");
  assert_string_attr (root, "symfonic.tenant.id", NULL);
  assert_status (root, 0);
  get_span (sink, "11111111111111111111111111111111", "stage auth head");
  g_assert_null (find_span (sink, "11111111111111111111111111111111", "upstream up"));
  g_assert_null (attribute (root, "gen_ai.usage.input_tokens"));

  /* a request whose client sends no traceparent, at ratio 0: no trace */
  {
    g_autoptr(SymfonicTestStream) stream =
      symfonic_test_stream_post (session, url, "{\"query\":\"Why?\"}",
                                 "Authorization", "Bearer demo-token-alice", "X-Tenant-ID", "demo", NULL);

    symfonic_test_stream_wait_done (stream);
    g_assert_cmpuint (stream->status, ==, 200);
  }

  /* a stream is counted once its exchange is over, which may come just
   * after its client read the end: the counts settle before they are read */
  for (gint64 deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;;)
    {
      g_clear_pointer (&scrape, symfonic_test_response_free);
      scrape = get_metrics (session, metrics_url, NULL);
      g_assert_cmpuint (scrape->status, ==, 200);
      text = symfonic_test_response_get_text (scrape);
      if (metric (text, "gen_ai_server_request_duration_count{" GENAI_LABELS ",outcome=\"completed\"}") >= 2 ||
          g_get_monotonic_time () > deadline)
        break;
      g_usleep (10 * 1000);
    }
  check_exposition (text);
  g_assert_cmpfloat (metric (text, "gen_ai_client_token_usage_sum{" GENAI_LABELS ",gen_ai_token_type=\"input\"}"), ==, 24);
  g_assert_cmpfloat (metric (text, "gen_ai_client_token_usage_sum{" GENAI_LABELS ",gen_ai_token_type=\"output\"}"), ==, 68);
  g_assert_cmpfloat (metric (text, "gen_ai_client_token_usage_count{" GENAI_LABELS ",gen_ai_token_type=\"reasoning\"}"), ==, 2);
  g_assert_cmpfloat (metric (text, "gen_ai_server_time_to_first_token_count{" GENAI_LABELS "}"), ==, 2);
  g_assert_cmpfloat (metric (text, "gen_ai_server_time_per_output_token_count{" GENAI_LABELS "}"), ==, 2);
  g_assert_cmpfloat (metric (text, "gen_ai_server_request_duration_count{" GENAI_LABELS ",outcome=\"completed\"}"), ==, 2);
  g_assert_cmpfloat (metric (text, "symfonic_limiter_decisions_total{route=\"typed\",stage=\"budget\",outcome=\"admitted\"}"), ==, 2);
  g_assert_cmpfloat (metric (text, "symfonic_stage_duration_seconds_count{route=\"typed\",stage=\"auth\",phase=\"head\"}"), ==, 3);
  g_assert_cmpfloat (metric (text, "symfonic_stage_duration_seconds_count{route=\"typed\",stage=\"budget\",phase=\"body\"}"), ==, 2);
  /* one tenant by name, the next as other */
  g_assert_cmpfloat (metric (text, "symfonic_tenant_tokens_total{tenant=\"acme\",gen_ai_token_type=\"input\"}"), ==, 12);
  g_assert_cmpfloat (metric (text, "symfonic_tenant_tokens_total{tenant=\"other\",gen_ai_token_type=\"input\"}"), ==, 12);
  g_assert_null (strstr (text, "tenant=\"demo\""));
  g_assert_cmpfloat (metric (text, "symfonic_trace_spans_dropped_total"), ==, 0);
  g_assert_cmpfloat (metric (text, "symfonic_upstream_connections_open"), >=, 0);
}

/* A cut and a failed stream: traced and counted as what they were. */
static void
test_cut_and_failed (void)
{
  g_autoptr(Sink) sink = sink_new ();
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autofree char *held_url = provider_add (fake, "/held/chat/completions", 200, held, TRUE);
  g_autofree char *failing_url = provider_add (fake, "/failing/chat/completions", 500,
                                               "{\"error\":{\"message\":\"down\"}}", FALSE);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autofree char *lines = g_strdup_printf ("otlp-endpoint=http://127.0.0.1:%u/v1/traces", sink->port);
  g_autoptr(SymfonicServer) held_server = gateway_new (held_url, lines);
  g_autoptr(SymfonicServer) failing_server = gateway_new (failing_url, lines);
  g_autofree char *held_stream_url = symfonic_test_server_dup_url (held_server, SYMFONIC_TEST_TYPED_PATH);
  g_autofree char *failing_stream_url = symfonic_test_server_dup_url (failing_server, SYMFONIC_TEST_TYPED_PATH);
  g_autofree char *metrics_url = symfonic_test_server_dup_url (held_server, "/metrics");
  g_autofree char *failing_metrics_url = symfonic_test_server_dup_url (failing_server, "/metrics");
  g_autoptr(SymfonicTestResponse) scrape = NULL;
  JsonObject *root, *upstream;

  /* cut: the client leaves after the first delta */
  {
    g_autoptr(SymfonicTestStream) stream =
      symfonic_test_stream_post (session, held_stream_url, "{\"query\":\"Why?\"}",
                                 "Authorization", "Bearer demo-token-alice", "X-Tenant-ID", "acme",
                                 "traceparent", "00-33333333333333333333333333333333-4444444444444444-01", NULL);

    symfonic_test_stream_wait_frames (stream, 1);
    symfonic_test_stream_close (stream);
  }
  wait_trace (sink, "33333333333333333333333333333333", 3);
  root = get_span (sink, "33333333333333333333333333333333", "chat test-model");
  assert_string_attr (root, "symfonic.outcome", "cancelled");
  assert_int_attr (root, "http.response.status_code", 200);
  assert_string_attr (root, "error.type", NULL);
  assert_status (root, 0);
  g_assert_nonnull (attribute (root, "gen_ai.response.time_to_first_chunk"));
  upstream = get_span (sink, "33333333333333333333333333333333", "upstream up");
  assert_status (upstream, 0);

  /* failed: the provider's 500, before any token */
  {
    g_autoptr(SymfonicTestResponse) response =
      symfonic_test_request (session, "POST", failing_stream_url, "application/json", "{\"query\":\"Why?\"}",
                             "Authorization", "Bearer demo-token-alice", "X-Tenant-ID", "acme",
                             "traceparent", "00-55555555555555555555555555555555-6666666666666666-01", NULL);

    g_assert_cmpuint (response->status, ==, 502);
  }
  wait_trace (sink, "55555555555555555555555555555555", 3);
  root = get_span (sink, "55555555555555555555555555555555", "chat test-model");
  assert_string_attr (root, "symfonic.outcome", "failed");
  assert_int_attr (root, "http.response.status_code", 502);
  assert_string_attr (root, "error.type", "upstream_error");
  assert_status (root, 2);
  g_assert_null (attribute (root, "gen_ai.response.time_to_first_chunk"));
  g_assert_null (attribute (root, "gen_ai.usage.input_tokens"));
  upstream = get_span (sink, "55555555555555555555555555555555", "upstream up");
  assert_status (upstream, 2);

  scrape = get_metrics (session, metrics_url, NULL);
  check_exposition (symfonic_test_response_get_text (scrape));
  g_assert_cmpfloat (metric (symfonic_test_response_get_text (scrape),
                             "gen_ai_server_request_duration_count{" GENAI_LABELS ",outcome=\"cancelled\"}"), ==, 1);
  g_assert_cmpfloat (metric (symfonic_test_response_get_text (scrape),
                             "gen_ai_server_time_to_first_token_count{" GENAI_LABELS "}"), ==, 1);
  g_clear_pointer (&scrape, symfonic_test_response_free);
  scrape = get_metrics (session, failing_metrics_url, NULL);
  g_assert_cmpfloat (metric (symfonic_test_response_get_text (scrape),
                             "gen_ai_server_request_duration_count{" GENAI_LABELS ",outcome=\"failed\"}"), ==, 1);
  /* a histogram that observed nothing has no series yet */
  g_assert_null (strstr (symfonic_test_response_get_text (scrape), "gen_ai_server_time_to_first_token_count{"));
  g_assert_nonnull (strstr (symfonic_test_response_get_text (scrape), "# TYPE gen_ai_server_time_to_first_token histogram\n"));
}

/* /metrics on an address of its own, behind a token: the main address no
 * longer serves it. */
static void
test_metrics_apart (void)
{
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autofree char *ok_url = provider_add (fake, "/ok/chat/completions", 200, answer, FALSE);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autofree char *token_file = write_file ("metrics.token", "s3cret-token\n");
  guint port = symfonic_test_closed_port ();
  g_autofree char *lines = g_strdup_printf ("metrics-listen=127.0.0.1:%u\nmetrics-token-file=%s", port, token_file);
  g_autoptr(SymfonicServer) server = gateway_new (ok_url, lines);
  g_autofree char *main_metrics = symfonic_test_server_dup_url (server, "/metrics");
  g_autofree char *apart = g_strdup_printf ("http://127.0.0.1:%u/metrics", port);
  g_autoptr(SymfonicTestResponse) on_main = get_metrics (session, main_metrics, "s3cret-token");
  g_autoptr(SymfonicTestResponse) without = get_metrics (session, apart, NULL);
  g_autoptr(SymfonicTestResponse) wrong = get_metrics (session, apart, "s3cret-tokeN");
  g_autoptr(SymfonicTestResponse) with = get_metrics (session, apart, "s3cret-token");

  g_assert_cmpuint (on_main->status, ==, 404);
  g_assert_cmpuint (without->status, ==, 401);
  g_assert_cmpstr (soup_message_headers_get_one (without->headers, "WWW-Authenticate"), ==, "Bearer");
  g_assert_cmpuint (wrong->status, ==, 401);
  g_assert_cmpuint (with->status, ==, 200);
  g_assert_nonnull (strstr (symfonic_test_response_get_text (with), "# TYPE gen_ai_client_token_usage histogram\n"));
  check_exposition (symfonic_test_response_get_text (with));
}

/* Bad telemetry settings fail the start, naming what is wrong. */
static void
test_bad_settings (void)
{
  static const struct
  {
    const char *lines;
    const char *message;
  } cases[] = {
    { "otlp-endpoint=ftp://127.0.0.1/v1/traces", "otlp-endpoint “ftp://127.0.0.1/v1/traces” is not an http or https URL" },
    { "metrics-listen=nowhere", "Listen address “nowhere” is not HOST:PORT" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *text = g_strdup_printf ("[gateway]\nlisten=127.0.0.1:0\n%s\n\n"
                                               "[route:r]\npath=/r\nsource=s\n\n[source:s]\ntype=replay\n"
                                               "transcripts=" SYMFONIC_TEST_DATA_DIR "/transcripts\n", cases[i].lines);
      g_autoptr(GFile) base = g_file_new_for_path (symfonic_test_private_dir ());
      g_autoptr(GError) error = NULL;
      g_autoptr(SymfonicPipeline) pipeline =
        symfonic_pipeline_new_from_data (symfonic_test_get_registry (), text, -1, base, "t.pipeline", &error);
      g_autoptr(SymfonicServer) server = NULL;

      g_assert_no_error (error);
      server = symfonic_server_new (pipeline);
      g_assert_false (symfonic_server_check (server, &error));
      g_assert_cmpstr (error->message, ==, cases[i].message);
    }
}

/* The rate limit's decisions by outcome: the last admission of its burst
 * is near the limit, the next one refused. */
static void
test_limiter_outcomes (void)
{
  g_autofree char *text = g_strdup ("[gateway]\nlisten=127.0.0.1:0\n\n"
                                    "[route:typed]\npath=" SYMFONIC_TEST_TYPED_PATH "\nkind=typed\nsource=demo\n"
                                    "stages=auth;limit\n\n"
                                    "[source:demo]\ntype=replay\ntranscripts=" SYMFONIC_TEST_DATA_DIR "/transcripts\n"
                                    "time-scale=0\n\n"
                                    "[stage:auth]\ntype=auth\ntokens-file=" SYMFONIC_TEST_DATA_DIR "/demo-tokens.ini\n\n"
                                    "[stage:limit]\ntype=rate-limit\nrate=0.001\nburst=10\n");
  g_autoptr(SymfonicServer) server = symfonic_test_server_new (text, symfonic_test_private_dir (), 1);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autofree char *url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);
  g_autofree char *metrics_url = symfonic_test_server_dup_url (server, "/metrics");
  g_autoptr(SymfonicTestResponse) scrape = NULL;
  const char *scraped;

  for (guint i = 0; i < 11; i++)
    {
      g_autoptr(SymfonicTestResponse) response =
        symfonic_test_request (session, "POST", url, "application/json", "{\"query\":\"Why?\"}",
                               "Authorization", "Bearer demo-token-alice", "X-Tenant-ID", "acme", NULL);

      g_assert_cmpuint (response->status, ==, i < 10 ? 200 : 429);
    }

  scrape = get_metrics (session, metrics_url, NULL);
  scraped = symfonic_test_response_get_text (scrape);
  g_assert_cmpfloat (metric (scraped, "symfonic_limiter_decisions_total{route=\"typed\",stage=\"limit\",outcome=\"admitted\"}"), ==, 9);
  g_assert_cmpfloat (metric (scraped, "symfonic_limiter_decisions_total{route=\"typed\",stage=\"limit\",outcome=\"near_limit\"}"), ==, 1);
  g_assert_cmpfloat (metric (scraped, "symfonic_limiter_decisions_total{route=\"typed\",stage=\"limit\",outcome=\"refused\"}"), ==, 1);
  g_assert_cmpfloat (metric (scraped, "symfonic_limiter_decisions_total{route=\"typed\",stage=\"limit\",outcome=\"store_error\"}"), ==, 0);
  /* the replay source has no model: the label is there, empty */
  g_assert_nonnull (strstr (scraped, "gen_ai_server_request_duration_count{route=\"typed\",source=\"demo\","
                                     "gen_ai_operation_name=\"chat\",gen_ai_provider_name=\"replay\","
                                     "gen_ai_request_model=\"\",outcome=\"completed\"} 10\n"));
  check_exposition (scraped);
}

int
main (int    argc,
      char **argv)
{
  symfonic_test_init (&argc, &argv);

  g_test_add_func ("/observability/streams-traced", test_streams_traced);
  g_test_add_func ("/observability/cut-and-failed", test_cut_and_failed);
  g_test_add_func ("/observability/metrics-apart", test_metrics_apart);
  g_test_add_func ("/observability/bad-settings", test_bad_settings);
  g_test_add_func ("/observability/limiter-outcomes", test_limiter_outcomes);

  return g_test_run ();
}
