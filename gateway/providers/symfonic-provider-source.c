/* symfonic-provider-source.c: what the LLM provider sources share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <glib/gi18n-lib.h>
#include <libsoup/soup.h>

#include "symfonic-config-file.h"
#include "symfonic-event-private.h"
#include "symfonic-http-source-private.h"
#include "symfonic-json.h"
#include "symfonic-json-private.h"
#include "symfonic-provider-source-private.h"
#include "symfonic-stream.h"
#include "symfonic-stream-log.h"
#include "symfonic-upstream-private.h"

/* Streams a completion from an LLM provider's HTTP API. The transport,
 * timeouts, failures, back-pressure and usage are the HTTP source's; here
 * is what both providers do alike (the key, the model, the system prompt,
 * tool calls, the terminal), and the subclasses know their provider's
 * wire format.
 *
 * The source object is shared by every worker thread: everything it holds
 * is set at construction and read-only afterwards. The API key is read
 * from its file at load and lives only in the head lines sent upstream,
 * never in a log line or an error. */
typedef struct
{
  char     *model;
  GFile    *api_key_file;
  guint     max_tokens;
  GFile    *system_prompt_file;

  /* the system-prompt-file's text, or NULL */
  char     *system_prompt;
  /* the URL's path and the class's endpoint */
  char     *target;
} SymfonicProviderSourcePrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (SymfonicProviderSource, symfonic_provider_source, SYMFONIC_TYPE_HTTP_SOURCE)

enum {
  PROP_0,
  PROP_MODEL,
  PROP_API_KEY_FILE,
  PROP_MAX_TOKENS,
  PROP_SYSTEM_PROMPT_FILE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

#define DEFAULT_IDLE_TIMEOUT 30
#define DEFAULT_MAX_TOKENS 4096
/* a provider's largest frame is a tool call's argument fragment or a
 * usage report: far below this */
#define MAX_EVENT_BYTES (1024 * 1024)
/* a tool call's arguments, accumulated: one event's worth */
#define MAX_TOOL_ARGUMENTS_BYTES MAX_EVENT_BYTES
/* a key or a system prompt larger than this is a wrong file */
#define MAX_KEY_BYTES 4096
#define MAX_SYSTEM_PROMPT_BYTES (256 * 1024)
/* delta-seconds, no more than a few days */
#define MAX_RETRY_AFTER_DIGITS 6

/* --- one request ------------------------------------------------------- */

/* A tool call the provider started: its fragments find it by the
 * provider's index. */
typedef struct
{
  gint64  index;
  char   *id;
  /* the arguments passed on so far, bounded */
  gsize   bytes;
} ToolCall;

/* What a stream's request accumulates of the provider's answer. */
struct _SymfonicProviderRequest
{
  /* the base class's, which holds this */
  SymfonicHttpRequest         *request;
  /* looked up once: every frame goes through it */
  SymfonicProviderSourceClass *klass;

  /* the calls started, in order */
  GArray                  *tool_calls;
  /* where a tool-call event's payload is written */
  GString                 *event_json;

  /* why the answer ended, in the typed stream's words (OpenAI's own), and
   * an Anthropic upstream's own reason and the stop sequence it met */
  char                    *finish_reason;
  char                    *stop_reason;
  char                    *stop_sequence;
  char                    *model;
  /* the absence of usage went to the log */
  gboolean                 usage_noted;

  /* where the frames read without a tree are decoded, and what the last
   * one was */
  GString                 *scratch;
  SymfonicJsonScanMemo    *memo;
};

static void
tool_call_clear (gpointer data)
{
  g_free (((ToolCall *) data)->id);
}

static void
provider_request_free (gpointer data)
{
  SymfonicProviderRequest *req = data;

  g_array_unref (req->tool_calls);
  g_string_free (req->event_json, TRUE);
  g_string_free (req->scratch, TRUE);
  symfonic_json_scan_memo_free (req->memo);
  g_free (req->finish_reason);
  g_free (req->stop_reason);
  g_free (req->stop_sequence);
  g_free (req->model);
  g_free (req);
}

static const char *
run_id (SymfonicProviderRequest *req)
{
  return symfonic_invocation_get_run_id (symfonic_stream_get_invocation (req->request->stream));
}

/* At the end, whichever it was: a stream whose budget settles on an
 * estimate says why. */
static void
note_usage (SymfonicProviderRequest *req)
{
  if (req->usage_noted)
    return;
  req->usage_noted = TRUE;

  /* a provider that never reports usage does so for every stream */
  if (!symfonic_http_request_has_usage (req->request))
    {
      g_autofree char *kind = g_strdup_printf ("provider %s: no usage",
                                               symfonic_http_source_get_display_url (req->request->source));

      symfonic_log_stream (G_LOG_LEVEL_MESSAGE, req->request->stream, "source", kind,
                           "Run %s: the provider reported no usage; the budget settles on an estimate", run_id (req));
    }
}

GError *
symfonic_provider_request_failure (SymfonicProviderRequest *self,
                                   SymfonicError            code,
                                   const char              *public_text,
                                   const char              *format,
                                   ...)
{
  GError *error;
  va_list args;

  va_start (args, format);
  error = symfonic_http_request_new_failure_valist (self->request, code, public_text, format, args);
  va_end (args);

  return error;
}

/* Reused by every frame of the request: its strings last until the next
 * frame is read. */
GString *
symfonic_provider_request_get_scratch (SymfonicProviderRequest *self)
{
  return self->scratch;
}

/* The memo of the frame read last without a tree, for the next one. */
SymfonicJsonScanMemo *
symfonic_provider_request_get_memo (SymfonicProviderRequest *self)
{
  return self->memo;
}

void
symfonic_provider_request_text (SymfonicProviderRequest *self,
                                const char              *text)
{
  g_autoptr(SymfonicEvent) event = NULL;

  if (*text == '\0')
    return;
  event = symfonic_event_new_text_delta (text);
  symfonic_http_request_push (self->request, event);
}

/* A delta with the log probabilities of its tokens, which an OpenAI
 * client that asked for them gets with it; other routes publish the text
 * alone. */
void
symfonic_provider_request_text_with_logprobs (SymfonicProviderRequest *self,
                                              const char              *text,
                                              JsonObject              *logprobs)
{
  g_autoptr(JsonObject) payload = json_object_new ();
  g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), logprobs);
  g_autoptr(SymfonicEvent) event = NULL;

  json_object_set_string_member (payload, "text", text);
  json_object_set_member (payload, "logprobs", json_node_ref (node));
  event = symfonic_event_new (SYMFONIC_EVENT_KIND_TEXT_DELTA, payload, NULL);
  symfonic_http_request_push (self->request, event);
}

void
symfonic_provider_request_thinking (SymfonicProviderRequest *self,
                                    const char              *text,
                                    const char              *signature)
{
  g_autoptr(SymfonicEvent) event = NULL;

  if (signature == NULL)
    {
      if (*text == '\0')
        return;
      event = symfonic_event_new_thinking_delta (text);
    }
  else
    {
      g_autoptr(JsonObject) payload = json_object_new ();

      json_object_set_string_member (payload, "text", text);
      json_object_set_string_member (payload, "signature", signature);
      event = symfonic_event_new (SYMFONIC_EVENT_KIND_THINKING_DELTA, payload, NULL);
    }
  symfonic_http_request_push (self->request, event);
}

static ToolCall *
find_tool_call (SymfonicProviderRequest *req,
                gint64                   index)
{
  for (guint i = req->tool_calls->len; i > 0; i--)
    {
      ToolCall *call = &g_array_index (req->tool_calls, ToolCall, i - 1);

      if (call->index == index)
        return call;
    }

  return NULL;
}

/* Arguments past the bound fail the stream: cut short, they would go on
 * as if complete. */
static gboolean
count_arguments (SymfonicProviderRequest  *req,
                 ToolCall                 *call,
                 gsize                     length,
                 GError                  **error)
{
  if (length > MAX_TOOL_ARGUMENTS_BYTES - call->bytes)
    {
      g_propagate_error (error,
                         symfonic_provider_request_failure (req, SYMFONIC_ERROR_UPSTREAM,
                                                            "The upstream sent a tool call too large to pass on",
                                                            "the arguments of tool call %" G_GINT64_FORMAT
                                                            " went past %u bytes",
                                                            call->index, MAX_TOOL_ARGUMENTS_BYTES));
      return FALSE;
    }
  call->bytes += length;

  return TRUE;
}

/* The next fragment of a call's arguments goes out as it came. */
static gboolean
push_arguments (SymfonicProviderRequest  *req,
                ToolCall                 *call,
                const char               *fragment,
                GError                  **error)
{
  g_autoptr(SymfonicEvent) event = NULL;
  gsize length = strlen (fragment);

  if (length == 0)
    return TRUE;
  if (!count_arguments (req, call, length, error))
    return FALSE;

  g_string_assign (req->event_json, "{\"tool_call_id\":");
  symfonic_json_append_string (req->event_json, call->id, -1);
  g_string_append (req->event_json, ",\"index\":");
  symfonic_json_append_int (req->event_json, call->index);
  g_string_append (req->event_json, ",\"arguments\":");
  symfonic_json_append_string (req->event_json, fragment, length);
  g_string_append_c (req->event_json, '}');
  event = symfonic_event_new_raw (SYMFONIC_EVENT_KIND_TOOL_CALL_DELTA, req->event_json->str, req->event_json->len);
  symfonic_http_request_push (req->request, event);

  return TRUE;
}

/* A call goes out when it starts, with the arguments that came with its
 * start (often none yet); each later fragment follows as it comes. Some
 * OpenAI-compatible servers repeat a call's id on every fragment: only a
 * new index starts a new call. */
gboolean
symfonic_provider_request_tool_start (SymfonicProviderRequest  *self,
                                      gint64                    index,
                                      const char               *id,
                                      const char               *name,
                                      const char               *arguments,
                                      GError                  **error)
{
  g_autoptr(SymfonicEvent) event = NULL;
  ToolCall *call = find_tool_call (self, index);
  ToolCall fresh = { index, NULL, 0 };

  if (arguments == NULL)
    arguments = "";
  if (call != NULL)
    return push_arguments (self, call, arguments, error);

  fresh.id = g_strdup (id);
  g_array_append_val (self->tool_calls, fresh);
  call = &g_array_index (self->tool_calls, ToolCall, self->tool_calls->len - 1);
  if (!count_arguments (self, call, strlen (arguments), error))
    return FALSE;

  g_string_assign (self->event_json, "{\"tool_name\":");
  symfonic_json_append_string (self->event_json, name != NULL ? name : "", -1);
  g_string_append (self->event_json, ",\"tool_call_id\":");
  symfonic_json_append_string (self->event_json, id, -1);
  g_string_append (self->event_json, ",\"index\":");
  symfonic_json_append_int (self->event_json, index);
  g_string_append (self->event_json, ",\"arguments\":");
  symfonic_json_append_string (self->event_json, arguments, -1);
  g_string_append_c (self->event_json, '}');
  event = symfonic_event_new_raw (SYMFONIC_EVENT_KIND_TOOL_CALL_START, self->event_json->str, self->event_json->len);
  symfonic_http_request_push (self->request, event);

  return TRUE;
}

/* A fragment for no call started is the provider breaking its own order:
 * it is dropped. */
gboolean
symfonic_provider_request_tool_arguments (SymfonicProviderRequest  *self,
                                          gint64                    index,
                                          const char               *fragment,
                                          GError                  **error)
{
  ToolCall *call = find_tool_call (self, index);

  if (call == NULL)
    {
      symfonic_log_stream (G_LOG_LEVEL_DEBUG, self->request->stream, "source", NULL,
                           "Run %s: dropped arguments for tool call %" G_GINT64_FORMAT, run_id (self), index);
      return TRUE;
    }

  return push_arguments (self, call, fragment, error);
}

/* Why the answer ended: @finish_reason in the typed stream's words (an
 * OpenAI upstream's as it said it), and an Anthropic upstream's own
 * @stop_reason and the @stop_sequence it met, which its route publishes
 * as they came. Each is the provider's short token, bounded. */
void
symfonic_provider_request_set_finish_reason (SymfonicProviderRequest *self,
                                             const char              *finish_reason,
                                             const char              *stop_reason,
                                             const char              *stop_sequence)
{
  g_free (self->finish_reason);
  self->finish_reason = g_strndup (finish_reason, 64);
  g_free (self->stop_reason);
  self->stop_reason = stop_reason != NULL ? g_strndup (stop_reason, 64) : NULL;
  g_free (self->stop_sequence);
  self->stop_sequence = stop_sequence != NULL ? g_strndup (stop_sequence, 1024) : NULL;
}

/* The model that answers, as the provider names it: the routes publish it
 * from their first frame on. */
void
symfonic_provider_request_set_model (SymfonicProviderRequest *self,
                                     const char              *model)
{
  SymfonicUpstreamFacts *facts;

  if (self->model != NULL || model == NULL || *model == '\0')
    return;
  self->model = g_strndup (model, 256);
  facts = symfonic_upstream_facts_ensure (self->request->stream);
  g_free (facts->model);
  facts->model = g_strdup (self->model);
}

/* What the upstream says of its usage beyond the counts metering takes:
 * the cached and reasoning tokens, each -1 when it said nothing. */
void
symfonic_provider_request_set_usage_details (SymfonicProviderRequest *self,
                                             gint64                   cache_read,
                                             gint64                   cache_creation,
                                             gint64                   reasoning,
                                             gboolean                 input_excludes_cache)
{
  SymfonicUpstreamFacts *facts;

  if (cache_read < 0 && cache_creation < 0 && reasoning < 0 && !input_excludes_cache)
    return;
  facts = symfonic_upstream_facts_ensure (self->request->stream);
  if (cache_read >= 0)
    facts->cache_read = cache_read;
  if (cache_creation >= 0)
    facts->cache_creation = cache_creation;
  if (reasoning >= 0)
    facts->reasoning = reasoning;
  facts->input_excludes_cache |= input_excludes_cache;
}

/* Providers report running totals (Anthropic's message_delta) or one
 * final count (OpenAI's usage chunk): the base class adds their growth. */
gboolean
symfonic_provider_request_set_usage (SymfonicProviderRequest   *self,
                                     const SymfonicUsageCounts *usage,
                                     GError                   **error)
{
  return symfonic_http_request_update_usage_counts (self->request, usage, error);
}

/* The provider's end: the last tool call, the usage, then the terminal,
 * whose text the encoders take from the deltas they sent. */
void
symfonic_provider_request_complete (SymfonicProviderRequest *self)
{
  g_autoptr(JsonObject) payload = json_object_new ();
  g_autoptr(SymfonicEvent) terminal = NULL;
  gint64 elapsed = g_get_monotonic_time () - symfonic_stream_get_start_time (self->request->stream);

  note_usage (self);

  json_object_set_string_member (payload, "text", "");
  json_object_set_int_member (payload, "duration_ms", elapsed / 1000);
  if (self->finish_reason != NULL)
    json_object_set_string_member (payload, "finish_reason", self->finish_reason);
  if (self->stop_reason != NULL)
    json_object_set_string_member (payload, "stop_reason", self->stop_reason);
  if (self->stop_sequence != NULL)
    json_object_set_string_member (payload, "stop_sequence", self->stop_sequence);
  if (self->model != NULL)
    json_object_set_string_member (payload, "model", self->model);
  terminal = symfonic_event_new (SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE, payload, NULL);

  symfonic_http_request_complete (self->request);
  symfonic_http_request_push (self->request, terminal);
}


static gboolean
symfonic_provider_source_handle_frame (SymfonicHttpSource   *source,
                                       SymfonicHttpRequest  *request,
                                       const char           *event,
                                       const char           *data,
                                       gsize                 data_length,
                                       GError              **error)
{
  SymfonicProviderRequest *req = request->data;

  /* OpenAI's end, which no other frame resembles */
  if (data_length == strlen ("[DONE]") && memcmp (data, "[DONE]", data_length) == 0)
    {
      symfonic_provider_request_complete (req);
      return TRUE;
    }

  return req->klass->handle_frame ((SymfonicProviderSource *) source, req, event, data, data_length, error);
}

static void
symfonic_provider_source_close (SymfonicHttpSource  *source,
                                SymfonicHttpRequest *request)
{
  if (request->data != NULL)
    note_usage (request->data);
}

/* A provider's Retry-After goes to the client only as delta-seconds: an
 * HTTP date or anything else is the provider's text, not ours to echo. */
static void
carry_retry_after (SymfonicProviderRequest *req)
{
  const char *value = symfonic_http_request_get_response_header (req->request, "Retry-After");
  gsize length = value != NULL ? strlen (value) : 0;

  if (length == 0 || length > MAX_RETRY_AFTER_DIGITS || strspn (value, "0123456789") != length)
    return;
  symfonic_stream_set_response_header (req->request->stream, "Retry-After", value);
}

/* The rate-limit state the provider reports on every answer, which the
 * SDKs' own back-off and their users read. A provider sends a family
 * whole or not at all: its first member says whether to look for the
 * rest, so that a provider without them costs two lookups. */
static const char * const openai_rate_limits[] = {
  "x-ratelimit-limit-requests", "x-ratelimit-limit-tokens", "x-ratelimit-remaining-requests",
  "x-ratelimit-remaining-tokens", "x-ratelimit-reset-requests", "x-ratelimit-reset-tokens", NULL
};
static const char * const anthropic_rate_limits[] = {
  "anthropic-ratelimit-requests-limit", "anthropic-ratelimit-requests-remaining", "anthropic-ratelimit-requests-reset",
  "anthropic-ratelimit-tokens-limit", "anthropic-ratelimit-tokens-remaining", "anthropic-ratelimit-tokens-reset",
  "anthropic-ratelimit-input-tokens-limit", "anthropic-ratelimit-input-tokens-remaining",
  "anthropic-ratelimit-input-tokens-reset", "anthropic-ratelimit-output-tokens-limit",
  "anthropic-ratelimit-output-tokens-remaining", "anthropic-ratelimit-output-tokens-reset", NULL
};
/* a count, a duration (`6m0s`) or a date: short printable text */
#define MAX_RATE_LIMIT_VALUE 64

static void
carry_rate_limit_family (SymfonicProviderRequest *req,
                         const char * const      *names)
{
  for (guint i = 0; names[i] != NULL; i++)
    {
      const char *value = symfonic_http_request_get_response_header (req->request, names[i]);
      gboolean printable = value != NULL && *value != '\0' && strlen (value) <= MAX_RATE_LIMIT_VALUE;

      /* the whole family is missing, or the first of it */
      if (value == NULL && i == 0)
        return;
      for (const char *p = value; printable && *p != '\0'; p++)
        printable = (guchar) *p >= ' ' && (guchar) *p < 0x7f;
      if (printable)
        symfonic_stream_set_response_header (req->request->stream, names[i], value);
    }
}

static void
carry_rate_limits (SymfonicProviderRequest *req)
{
  carry_rate_limit_family (req, openai_rate_limits);
  carry_rate_limit_family (req, anthropic_rate_limits);
}

static GError *
status_failure (SymfonicProviderRequest *req,
                guint                    status)
{
  switch (status)
    {
    case 429:
      carry_retry_after (req);
      return symfonic_provider_request_failure (req, SYMFONIC_ERROR_RATE_LIMITED,
                                                "The upstream is rate limiting requests; retry later",
                                                "answered HTTP 429");
    case SOUP_STATUS_UNAUTHORIZED:
    case SOUP_STATUS_FORBIDDEN:
      /* the gateway's own credentials: nothing the client can change, nor
       * a retry; the SDKs are told not to, which spares the provider the
       * two retries each of them would send */
      return symfonic_provider_request_failure (req, SYMFONIC_ERROR_UPSTREAM_REFUSED,
                                                "The upstream refused the gateway's credentials",
                                                "refused the gateway's key with HTTP %u; check api-key-file",
                                                status);
    case SOUP_STATUS_BAD_REQUEST:
    case SOUP_STATUS_REQUEST_ENTITY_TOO_LARGE:
    case SOUP_STATUS_UNPROCESSABLE_ENTITY:
      /* the request as the client wrote it, passed on: the client's to
       * fix, and no retry helps (the provider's words stay in its body,
       * which is never read) */
      return symfonic_provider_request_failure (req, SYMFONIC_ERROR_BAD_REQUEST,
                                                "The upstream refused the request as invalid",
                                                "answered HTTP %u", status);
    case SOUP_STATUS_SERVICE_UNAVAILABLE:
    case 529:
      /* Anthropic's overloaded_error, which its route keeps as such */
      return symfonic_provider_request_failure (req, SYMFONIC_ERROR_UPSTREAM_UNAVAILABLE,
                                                "The upstream is overloaded",
                                                "answered HTTP %u", status);
    default:
      /* the status's standard phrase: the provider's body stays out of
       * even the log */
      return symfonic_provider_request_failure (req, SYMFONIC_ERROR_UPSTREAM,
                                                "The upstream refused the request",
                                                "answered HTTP %u %s", status, soup_status_get_phrase (status));
    }
}

static gboolean
symfonic_provider_source_check_head (SymfonicHttpSource   *source,
                                     SymfonicHttpRequest  *request,
                                     guint                 status,
                                     GError              **error)
{
  SymfonicProviderRequest *req = request->data;

  carry_rate_limits (req);
  if (!SOUP_STATUS_IS_SUCCESSFUL (status))
    {
      g_propagate_error (error, status_failure (req, status));
      return FALSE;
    }

  if (!symfonic_http_is_event_stream (symfonic_http_request_get_response_header (request, "Content-Type")))
    {
      g_propagate_error (error,
                         symfonic_provider_request_failure (req, SYMFONIC_ERROR_UPSTREAM,
                                                            "The upstream did not answer with an event stream",
                                                            "answered something else than an event stream"));
      return FALSE;
    }

  return TRUE;
}

static gboolean
symfonic_provider_source_write_request (SymfonicHttpSource   *source,
                                        SymfonicHttpRequest  *request,
                                        GString              *path,
                                        GString              *body,
                                        GError              **error)
{
  SymfonicProviderSource *self = SYMFONIC_PROVIDER_SOURCE (source);
  SymfonicProviderSourcePrivate *priv = symfonic_provider_source_get_instance_private (self);
  SymfonicInvocation *invocation = symfonic_stream_get_invocation (symfonic_http_request_get_stream (request));
  SymfonicProviderRequest *req = g_new0 (SymfonicProviderRequest, 1);

  req->request = request;
  req->klass = SYMFONIC_PROVIDER_SOURCE_GET_CLASS (self);
  req->tool_calls = g_array_new (FALSE, FALSE, sizeof (ToolCall));
  g_array_set_clear_func (req->tool_calls, tool_call_clear);
  req->event_json = g_string_new (NULL);
  req->scratch = g_string_new (NULL);
  req->memo = symfonic_json_scan_memo_new ();
  symfonic_http_request_set_data (request, req, provider_request_free);

  /* the provider was told to produce no more */
  symfonic_stream_limit_output_tokens (symfonic_http_request_get_stream (request),
                                       symfonic_provider_source_get_max_tokens (self, invocation));
  req->klass->write_body (self, invocation, body);
  symfonic_invocation_clear_provider_body (invocation);
  g_string_assign (path, priv->target);

  return TRUE;
}

/* --- what the subclasses read ------------------------------------------ */

/* What a provider route in front of @source readies its requests for:
 * the source's API and its token cap, or no API for a source that is no
 * provider (an agent takes the conversation, not a model's options). */
void
symfonic_provider_source_describe (SymfonicSource         *source,
                                   SymfonicProviderTarget *target)
{
  SymfonicProviderSourcePrivate *priv;

  *target = (SymfonicProviderTarget) { SYMFONIC_PROVIDER_API_NONE, 0 };
  if (source == NULL || !SYMFONIC_IS_PROVIDER_SOURCE (source))
    return;

  priv = symfonic_provider_source_get_instance_private (SYMFONIC_PROVIDER_SOURCE (source));
  target->api = SYMFONIC_PROVIDER_SOURCE_GET_CLASS (source)->api;
  target->max_tokens = priv->max_tokens;
}

static void
write_member (GString    *out,
              const char *name,
              JsonNode   *node);

/* The operator's system prompt before the client's own, in the shape the
 * client gave it: OpenAI's as a first system message (written by the
 * caller), Anthropic's `system` as a string or before its blocks. */
static void
write_anthropic_system (GString    *out,
                        const char *prompt,
                        JsonNode   *system)
{
  g_string_append (out, ",\"system\":");
  if (system == NULL || JSON_NODE_HOLDS_NULL (system))
    symfonic_json_append_string (out, prompt, -1);
  else if (JSON_NODE_HOLDS_ARRAY (system))
    {
      g_string_append (out, "[{\"type\":\"text\",\"text\":");
      symfonic_json_append_string (out, prompt, -1);
      g_string_append_c (out, '}');
      symfonic_provider_source_write_elements (out, json_node_get_array (system), TRUE);
      g_string_append_c (out, ']');
    }
  else
    {
      g_autofree char *joined = g_strconcat (prompt, "\n\n", json_node_get_string (system), NULL);

      symfonic_json_append_string (out, joined, -1);
    }
}

/* A request the route readied in this source's API (the client's own, or
 * its translation) goes as it is, member by member, but for what is the
 * source's: the model, the stream (with the usage OpenAI then sends), the
 * operator's system prompt and, when the request names none, the token
 * limit. */
void
symfonic_provider_source_write_passthrough (SymfonicProviderSource *self,
                                            SymfonicInvocation     *invocation,
                                            JsonObject             *body,
                                            GString                *out)
{
  SymfonicProviderSourcePrivate *priv = symfonic_provider_source_get_instance_private (self);
  gboolean openai = SYMFONIC_PROVIDER_SOURCE_GET_CLASS (self)->api == SYMFONIC_PROVIDER_API_OPENAI_CHAT;
  JsonObject *stream_options = NULL;
  gboolean limited = FALSE;
  JsonObjectIter iter;
  const char *name;
  JsonNode *node;

  g_string_append (out, "{\"model\":");
  symfonic_json_append_string (out, priv->model, -1);
  json_object_iter_init (&iter, body);
  while (json_object_iter_next (&iter, &name, &node))
    {
      if (strcmp (name, "model") == 0 || strcmp (name, "stream") == 0)
        continue;
      if (strcmp (name, "stream_options") == 0)
        {
          stream_options = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
          continue;
        }
      if (strcmp (name, "max_tokens") == 0 || strcmp (name, "max_completion_tokens") == 0)
        {
          /* a null limit is none: the source's goes instead */
          if (JSON_NODE_HOLDS_NULL (node))
            continue;
          limited = TRUE;
        }
      if (priv->system_prompt != NULL && openai && strcmp (name, "messages") == 0)
        {
          g_string_append (out, ",\"messages\":[{\"role\":\"system\",\"content\":");
          symfonic_json_append_string (out, priv->system_prompt, -1);
          g_string_append_c (out, '}');
          symfonic_provider_source_write_elements (out, json_node_get_array (node), TRUE);
          g_string_append_c (out, ']');
          continue;
        }
      if (priv->system_prompt != NULL && !openai && strcmp (name, "system") == 0)
        {
          write_anthropic_system (out, priv->system_prompt, node);
          continue;
        }
      write_member (out, name, node);
    }
  if (priv->system_prompt != NULL && !openai && !json_object_has_member (body, "system"))
    write_anthropic_system (out, priv->system_prompt, NULL);
  if (!limited)
    g_string_append_printf (out, ",\"max_tokens\":%u", priv->max_tokens);

  g_string_append (out, ",\"stream\":true");
  if (openai)
    {
      /* the last chunk then carries the usage, whatever the client asked */
      g_string_append (out, ",\"stream_options\":{");
      if (stream_options != NULL)
        {
          json_object_iter_init (&iter, stream_options);
          while (json_object_iter_next (&iter, &name, &node))
            {
              if (strcmp (name, "include_usage") == 0)
                continue;
              symfonic_json_append_string (out, name, -1);
              g_string_append_c (out, ':');
              symfonic_json_append_node (out, node);
              g_string_append_c (out, ',');
            }
        }
      g_string_append (out, "\"include_usage\":true}");
    }
  g_string_append_c (out, '}');
}

const char *
symfonic_provider_source_get_model (SymfonicProviderSource *self)
{
  SymfonicProviderSourcePrivate *priv = symfonic_provider_source_get_instance_private (self);

  return priv->model;
}

/* The operator's system prompt first, then the request's own. */
char *
symfonic_provider_source_dup_system (SymfonicProviderSource *self,
                                     SymfonicInvocation     *invocation)
{
  SymfonicProviderSourcePrivate *priv = symfonic_provider_source_get_instance_private (self);
  const char *requested = symfonic_invocation_get_system (invocation);

  if (priv->system_prompt != NULL && requested != NULL)
    return g_strconcat (priv->system_prompt, "\n\n", requested, NULL);

  return g_strdup (priv->system_prompt != NULL ? priv->system_prompt : requested);
}

/* max-tokens caps what a request may ask for, and is the default. */
guint
symfonic_provider_source_get_max_tokens (SymfonicProviderSource *self,
                                         SymfonicInvocation     *invocation)
{
  SymfonicProviderSourcePrivate *priv = symfonic_provider_source_get_instance_private (self);
  JsonObject *parameters = symfonic_invocation_get_parameters (invocation);
  guint64 requested = 0;

  if (parameters != NULL && symfonic_usage_read_count (parameters, "max_tokens", &requested) &&
      requested > 0 && requested < priv->max_tokens)
    return requested;

  return priv->max_tokens;
}

/* Each element of @array, comma-separated; a comma goes first too if
 * @after_another and there is one. */
void
symfonic_provider_source_write_elements (GString   *out,
                                         JsonArray *array,
                                         gboolean   after_another)
{
  guint n = array != NULL ? json_array_get_length (array) : 0;

  for (guint i = 0; i < n; i++)
    {
      if (after_another || i > 0)
        g_string_append_c (out, ',');
      symfonic_json_append_node (out, json_array_get_element (array, i));
    }
}

static void
write_member (GString    *out,
              const char *name,
              JsonNode   *node)
{
  g_string_append_c (out, ',');
  symfonic_json_append_string (out, name, -1);
  g_string_append_c (out, ':');
  symfonic_json_append_node (out, node);
}

/* What both providers' bodies carry after the messages, in their shape:
 * the tools if there are any, the token limit, and the sampling
 * parameters both name alike, the stop sequences under @stop_name. */
void
symfonic_provider_source_write_settings (SymfonicProviderSource *self,
                                         SymfonicInvocation     *invocation,
                                         JsonArray              *tools,
                                         const char             *stop_name,
                                         GString                *out)
{
  JsonObject *parameters = symfonic_invocation_get_parameters (invocation);
  static const char * const names[] = { "temperature", "top_p" };

  if (tools != NULL && json_array_get_length (tools) > 0)
    {
      g_string_append (out, ",\"tools\":[");
      symfonic_provider_source_write_elements (out, tools, FALSE);
      g_string_append_c (out, ']');
    }
  g_string_append_printf (out, ",\"max_tokens\":%u", symfonic_provider_source_get_max_tokens (self, invocation));
  if (parameters == NULL)
    return;
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      JsonNode *node = json_object_get_member (parameters, names[i]);

      if (node != NULL && JSON_NODE_HOLDS_VALUE (node))
        write_member (out, names[i], node);
    }
  if (json_object_has_member (parameters, "stop"))
    write_member (out, stop_name, json_object_get_member (parameters, "stop"));
}

/* --- counting tokens --------------------------------------------------- */

/* Anthropic's count_tokens answers one small object */
#define MAX_COUNT_BYTES (64 * 1024)

struct _SymfonicTokenCount
{
  SymfonicUpstreamRequest *upstream;
  SymfonicTokenCountFunc   func;
  gpointer                 data;
  guint                    status;
  GByteArray              *body;
};

static void
token_count_free (SymfonicTokenCount *count)
{
  if (count->upstream != NULL)
    symfonic_upstream_request_free (count->upstream);
  g_byte_array_unref (count->body);
  g_free (count);
}

/* Nothing is told after this. */
void
symfonic_token_count_cancel (SymfonicTokenCount *count)
{
  symfonic_upstream_request_cancel (count->upstream);
  token_count_free (count);
}

static void
count_head (SymfonicUpstreamRequest *upstream,
            guint                    status,
            gpointer                 data)
{
  ((SymfonicTokenCount *) data)->status = status;
}

static void
count_body (SymfonicUpstreamRequest *upstream,
            const guint8            *bytes,
            gsize                    length,
            gpointer                 data)
{
  SymfonicTokenCount *count = data;

  if (count->body->len + length <= MAX_COUNT_BYTES)
    g_byte_array_append (count->body, bytes, length);
}

/* What a count's failure is for the client, as for a streamed request:
 * the provider's words stay out. */
static GError *
count_failure (guint status)
{
  switch (status)
    {
    case 401:
    case 403:
      return g_error_new_literal (SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM_REFUSED,
                                  "The upstream refused the gateway's credentials");
    case 400:
    case 413:
    case 422:
      return g_error_new_literal (SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST, "The upstream refused the request as invalid");
    case 429:
      return g_error_new_literal (SYMFONIC_ERROR, SYMFONIC_ERROR_RATE_LIMITED,
                                  "The upstream is rate limiting requests; retry later");
    default:
      return g_error_new (SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM, "The upstream answered a token count with HTTP %u", status);
    }
}

static void
count_done (SymfonicUpstreamRequest *upstream,
            const GError            *error,
            gpointer                 data)
{
  SymfonicTokenCount *count = data;
  g_autoptr(GError) failure = NULL;
  g_autoptr(JsonNode) root = NULL;
  guint64 tokens = 0;

  if (error != NULL)
    failure = g_error_new (SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM_UNAVAILABLE, "The token count failed: %s",
                           error->message);
  else if (!SOUP_STATUS_IS_SUCCESSFUL (count->status))
    failure = count_failure (count->status);
  else if ((root = symfonic_json_parse ((const char *) count->body->data, count->body->len, SYMFONIC_JSON_MAX_DEPTH,
                                        NULL)) == NULL ||
           !JSON_NODE_HOLDS_OBJECT (root) ||
           !symfonic_usage_read_count (json_node_get_object (root), "input_tokens", &tokens))
    failure = g_error_new_literal (SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM, "The token count was not one");

  count->func (failure == NULL ? (gint64) tokens : -1, failure, count->data);
  token_count_free (count);
}

static const SymfonicUpstreamHandlers count_handlers = {
  .head = count_head,
  .body = count_body,
  .done = count_done,
};

/* Asks an Anthropic source's provider how many input tokens the request
 * readied for it holds (`POST {url}/messages/count_tokens`): what it would
 * read, the operator's system prompt included. @func hears the count, or
 * the failure, unless the count is cancelled first. */
SymfonicTokenCount *
symfonic_provider_source_count_tokens (SymfonicSource         *source,
                                       SymfonicInvocation     *invocation,
                                       SymfonicTokenCountFunc  func,
                                       gpointer                data)
{
  static const char * const counted[] = { "messages", "system", "tools", "tool_choice", "thinking", NULL };
  SymfonicProviderSource *self = SYMFONIC_PROVIDER_SOURCE (source);
  SymfonicProviderSourcePrivate *priv = symfonic_provider_source_get_instance_private (self);
  JsonObject *body = symfonic_invocation_get_provider_body (invocation, NULL);
  g_autoptr(GString) out = g_string_new ("{\"model\":");
  g_autoptr(GBytes) payload = NULL;
  g_autofree char *target = g_strconcat (priv->target, "/count_tokens", NULL);
  SymfonicTokenCount *count = g_new0 (SymfonicTokenCount, 1);

  symfonic_json_append_string (out, priv->model, -1);
  for (guint i = 0; counted[i] != NULL; i++)
    {
      JsonNode *node = json_object_get_member (body, counted[i]);

      if (g_str_equal (counted[i], "system") && priv->system_prompt != NULL)
        write_anthropic_system (out, priv->system_prompt, node);
      else if (node != NULL && !JSON_NODE_HOLDS_NULL (node))
        write_member (out, counted[i], node);
    }
  g_string_append_c (out, '}');
  payload = g_bytes_new (out->str, out->len);

  count->func = func;
  count->data = data;
  count->body = g_byte_array_new ();
  count->upstream = symfonic_upstream_send (symfonic_http_source_get_upstream (SYMFONIC_HTTP_SOURCE (source)), "POST",
                                            target, symfonic_http_source_get_header_lines (SYMFONIC_HTTP_SOURCE (source)),
                                            "application/json", payload, &count_handlers, count);
  symfonic_upstream_request_set_timeout (count->upstream,
                                         symfonic_http_source_get_timeout_seconds (SYMFONIC_HTTP_SOURCE (source)));

  return count;
}

/* --- configuration ------------------------------------------------------- */

/* Through the one checked loader: a device, a FIFO or a directory is
 * refused without reading or blocking. Errors name the file, never what
 * it holds. */
static char *
read_setting_file (const char  *key,
                   GFile       *file,
                   gsize        max_bytes,
                   GError     **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *contents = NULL;
  gsize length;

  if (!symfonic_config_file_load (file, max_bytes, &contents, &length, &local_error))
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, "%s: %s", key, local_error->message);
      return NULL;
    }
  if (!g_utf8_validate (contents, length, NULL) || memchr (contents, '\0', length) != NULL)
    {
      g_autofree char *name = g_file_get_parse_name (file);

      memset (contents, 0, length);
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("%s: expected UTF-8 text in “%s”, found other bytes"), key, name);
      return NULL;
    }

  return g_strstrip (g_steal_pointer (&contents));
}

static gboolean
read_api_key (SymfonicProviderSource  *self,
              GError                 **error)
{
  SymfonicProviderSourcePrivate *priv = symfonic_provider_source_get_instance_private (self);
  g_autofree char *key = NULL;

  if (priv->api_key_file == NULL)
    {
      /* a local server (vLLM, llama.cpp) may need none */
      SYMFONIC_PROVIDER_SOURCE_GET_CLASS (self)->add_headers (self, NULL);
      return TRUE;
    }

  key = read_setting_file ("api-key-file", priv->api_key_file, MAX_KEY_BYTES, error);
  if (key == NULL)
    return FALSE;
  /* one token: it goes on a header line as it is */
  for (const char *p = key; *p != '\0'; p++)
    {
      if ((guchar) *p <= ' ' || (guchar) *p >= 0x7f)
        *key = '\0';
    }
  if (*key == '\0')
    {
      g_autofree char *name = g_file_get_parse_name (priv->api_key_file);

      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("api-key-file: expected one key of printable ASCII in “%s”, found something else"), name);
      return FALSE;
    }

  SYMFONIC_PROVIDER_SOURCE_GET_CLASS (self)->add_headers (self, key);
  memset (key, 0, strlen (key));

  return TRUE;
}

/* What is the provider's own: the base class checked the URL, the
 * headers, the timeouts and the certificates. */
static gboolean
symfonic_provider_source_prepare (SymfonicHttpSource  *source,
                                  GCancellable        *cancellable,
                                  GError             **error)
{
  SymfonicProviderSource *self = SYMFONIC_PROVIDER_SOURCE (source);
  SymfonicProviderSourcePrivate *priv = symfonic_provider_source_get_instance_private (self);
  GUri *uri = symfonic_http_source_get_uri (source);
  const char *path;
  gsize length;

  if (g_uri_get_query (uri) != NULL)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("%s: expected a URL without a query, found one with"), symfonic_http_source_get_url_key (source));
      return FALSE;
    }

  if (priv->model == NULL || *priv->model == '\0')
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                           _("model: expected the provider's model name, found none"));
      return FALSE;
    }

  if (priv->system_prompt_file != NULL)
    {
      priv->system_prompt = read_setting_file ("system-prompt-file", priv->system_prompt_file,
                                               MAX_SYSTEM_PROMPT_BYTES, error);
      if (priv->system_prompt == NULL)
        return FALSE;
    }

  if (!read_api_key (self, error))
    return FALSE;

  /* "…/v1/" and "…/v1" name the same base */
  path = g_uri_get_path (uri);
  length = strlen (path);
  if (length > 0 && path[length - 1] == '/')
    length--;
  priv->target = g_strdup_printf ("%.*s%s", (int) length, path, SYMFONIC_PROVIDER_SOURCE_GET_CLASS (self)->endpoint);

  return TRUE;
}

static void
symfonic_provider_source_finalize (GObject *object)
{
  SymfonicProviderSourcePrivate *priv =
    symfonic_provider_source_get_instance_private (SYMFONIC_PROVIDER_SOURCE (object));

  g_free (priv->model);
  g_clear_object (&priv->api_key_file);
  g_clear_object (&priv->system_prompt_file);
  g_free (priv->system_prompt);
  g_free (priv->target);

  G_OBJECT_CLASS (symfonic_provider_source_parent_class)->finalize (object);
}

static void
symfonic_provider_source_get_property (GObject    *object,
                                       guint       prop_id,
                                       GValue     *value,
                                       GParamSpec *pspec)
{
  SymfonicProviderSourcePrivate *priv =
    symfonic_provider_source_get_instance_private (SYMFONIC_PROVIDER_SOURCE (object));

  switch (prop_id)
    {
    case PROP_MODEL:
      g_value_set_string (value, priv->model);
      break;
    case PROP_API_KEY_FILE:
      g_value_set_object (value, priv->api_key_file);
      break;
    case PROP_MAX_TOKENS:
      g_value_set_uint (value, priv->max_tokens);
      break;
    case PROP_SYSTEM_PROMPT_FILE:
      g_value_set_object (value, priv->system_prompt_file);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_provider_source_set_property (GObject      *object,
                                       guint         prop_id,
                                       const GValue *value,
                                       GParamSpec   *pspec)
{
  SymfonicProviderSourcePrivate *priv =
    symfonic_provider_source_get_instance_private (SYMFONIC_PROVIDER_SOURCE (object));

  switch (prop_id)
    {
    case PROP_MODEL:
      g_free (priv->model);
      priv->model = g_value_dup_string (value);
      break;
    case PROP_API_KEY_FILE:
      g_set_object (&priv->api_key_file, g_value_get_object (value));
      break;
    case PROP_MAX_TOKENS:
      priv->max_tokens = g_value_get_uint (value);
      break;
    case PROP_SYSTEM_PROMPT_FILE:
      g_set_object (&priv->system_prompt_file, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_provider_source_class_init (SymfonicProviderSourceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  SymfonicHttpSourceClass *http_class = SYMFONIC_HTTP_SOURCE_CLASS (klass);

  object_class->finalize = symfonic_provider_source_finalize;
  object_class->get_property = symfonic_provider_source_get_property;
  object_class->set_property = symfonic_provider_source_set_property;
  http_class->prepare = symfonic_provider_source_prepare;
  http_class->write_request = symfonic_provider_source_write_request;
  http_class->check_head = symfonic_provider_source_check_head;
  http_class->handle_frame = symfonic_provider_source_handle_frame;
  http_class->close = symfonic_provider_source_close;

  properties[PROP_MODEL] =
    g_param_spec_string ("model", "Model",
                         "The model every request asks the provider for",
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_API_KEY_FILE] =
    g_param_spec_object ("api-key-file", "API key file",
                         "A file holding the provider's API key, read at load; the key is never logged "
                         "or shown. Unset for a provider that needs none",
                         G_TYPE_FILE,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_MAX_TOKENS] =
    g_param_spec_uint ("max-tokens", "Maximum tokens",
                       "The most tokens a completion may produce: the default, and the cap on what a "
                       "request asks for",
                       1, G_MAXINT, DEFAULT_MAX_TOKENS,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_SYSTEM_PROMPT_FILE] =
    g_param_spec_object ("system-prompt-file", "System prompt file",
                         "A UTF-8 text file read at load: the system prompt, before the request's own",
                         G_TYPE_FILE,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
symfonic_provider_source_init (SymfonicProviderSource *self)
{
  SymfonicProviderSourcePrivate *priv = symfonic_provider_source_get_instance_private (self);

  SymfonicHttpSource *source = SYMFONIC_HTTP_SOURCE (self);

  priv->max_tokens = DEFAULT_MAX_TOKENS;
  /* the client's head waits for the first event, so that a refusal (429
   * and its Retry-After above all) is a real status */
  symfonic_http_source_set_holds_head (source, TRUE);
  symfonic_http_source_set_default_idle_timeout (source, DEFAULT_IDLE_TIMEOUT);
  symfonic_http_source_set_default_max_event_bytes (source, MAX_EVENT_BYTES);
  /* the key and the version are the source's own */
  symfonic_http_source_reserve_header (source, "Authorization");
  symfonic_http_source_reserve_header (source, "x-api-key");
  symfonic_http_source_reserve_header (source, "anthropic-version");
}
