/* symfonic-provider-source.c: what the LLM provider sources share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <glib/gi18n-lib.h>
#include <libsoup/soup.h>

#include "../common/symfonic-upstream-config.h"
#include "symfonic-provider-source.h"
#include "../common/symfonic-upstream-failure.h"
#include "../common/symfonic-usage.h"
#include "../common/symfonic-upstream-reader.h"

/* Streams a completion from an LLM provider's HTTP API. The transport,
 * the timeouts, the failure mapping, back-pressure and usage are here;
 * the subclasses know their provider's wire format.
 *
 * The source object is shared by every worker thread: everything it holds
 * is set at construction and read-only afterwards. The API key is read
 * from its file at load and lives only in the head lines sent upstream,
 * never in a log line or an error. */
typedef struct
{
  char     *base_url;
  char     *model;
  GFile    *api_key_file;
  guint     timeout;
  guint     idle_timeout;
  guint     max_tokens;
  GFile    *system_prompt_file;
  char    **extra_headers;

  /* the system-prompt-file's text, or NULL */
  char     *system_prompt;
  /* base-url's path and the class's endpoint */
  char     *target;
  /* for the log: no user info or query */
  char     *display_url;
  char     *header_lines;
  SymfonicUpstream *upstream;
} SymfonicProviderSourcePrivate;

static void symfonic_provider_source_initable_init (GInitableIface *iface);
static void symfonic_provider_source_source_init (SymfonicSourceInterface *iface);

G_DEFINE_ABSTRACT_TYPE_WITH_CODE (SymfonicProviderSource, symfonic_provider_source, G_TYPE_OBJECT,
                                  G_ADD_PRIVATE (SymfonicProviderSource)
                                  G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, symfonic_provider_source_initable_init)
                                  G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_SOURCE, symfonic_provider_source_source_init))

enum {
  PROP_0,
  PROP_BASE_URL,
  PROP_MODEL,
  PROP_API_KEY_FILE,
  PROP_TIMEOUT,
  PROP_IDLE_TIMEOUT,
  PROP_MAX_TOKENS,
  PROP_SYSTEM_PROMPT_FILE,
  PROP_EXTRA_HEADERS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

#define DEFAULT_TIMEOUT 60
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

struct _SymfonicProviderRequest
{
  SymfonicUpstreamReader   reader;
  SymfonicProviderSource  *source;
  /* the head arrived: idle-timeout applies from then on */
  gboolean                 head_in;
  /* the first event went out: the client's head with it, and the deadline
   * below no longer applies */
  gboolean                 answering;
  /* monotonic time by which the first event must go out, or 0 */
  gint64                   deadline;

  /* the tool call whose arguments are still arriving; tool_id is NULL
   * when there is none */
  gint64                   tool_index;
  char                    *tool_id;
  char                    *tool_name;
  GString                 *tool_arguments;

  char                    *finish_reason;
  char                    *model;
  guint64                  input_tokens;
  guint64                  output_tokens;
  gboolean                 usage_seen;
  /* the absence of usage went to the log */
  gboolean                 usage_noted;

  /* where the frames read without a tree are decoded, and what the last
   * one was */
  GString                 *scratch;
  SymfonicJsonScanMemo    *memo;
};

static void
request_free (SymfonicUpstreamReader *reader)
{
  SymfonicProviderRequest *req = (SymfonicProviderRequest *) reader;

  g_free (req->tool_id);
  g_free (req->tool_name);
  g_string_free (req->tool_arguments, TRUE);
  g_string_free (req->scratch, TRUE);
  symfonic_json_scan_memo_free (req->memo);
  g_free (req->finish_reason);
  g_free (req->model);
  g_object_unref (req->source);
  g_free (req);
}

static const char *
run_id (SymfonicProviderRequest *req)
{
  return symfonic_invocation_get_run_id (symfonic_stream_get_invocation (req->reader.stream));
}

/* At the end, whichever it was: a stream whose budget settles on an
 * estimate says why. */
static void
note_usage (SymfonicUpstreamReader *reader)
{
  SymfonicProviderRequest *req = (SymfonicProviderRequest *) reader;

  if (req->usage_noted)
    return;
  req->usage_noted = TRUE;

  if (!req->usage_seen)
    g_message ("Run %s: the provider reported no usage; the budget settles on an estimate", run_id (req));
}

GError *
symfonic_provider_request_failure (SymfonicProviderRequest *self,
                                   SymfonicError            code,
                                   const char              *public_text,
                                   const char              *format,
                                   ...)
{
  SymfonicProviderSourcePrivate *priv = symfonic_provider_source_get_instance_private (self->source);
  GError *error;
  va_list args;

  va_start (args, format);
  error = symfonic_upstream_failure_new_valist (run_id (self), priv->display_url, code, public_text, format, args);
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
  symfonic_upstream_reader_push (&self->reader, event);
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
  symfonic_upstream_reader_push (&self->reader, event);
}

/* The pending tool call goes out whole: its arguments are complete. */
static void
flush_tool_call (SymfonicProviderRequest *req)
{
  g_autoptr(JsonObject) payload = NULL;
  g_autoptr(SymfonicEvent) event = NULL;

  if (req->tool_id == NULL)
    return;

  payload = json_object_new ();
  json_object_set_string_member (payload, "tool_name", req->tool_name != NULL ? req->tool_name : "");
  json_object_set_string_member (payload, "tool_call_id", req->tool_id);
  json_object_set_int_member (payload, "index", req->tool_index);
  json_object_set_string_member (payload, "arguments", req->tool_arguments->str);
  g_clear_pointer (&req->tool_id, g_free);
  g_clear_pointer (&req->tool_name, g_free);
  g_string_truncate (req->tool_arguments, 0);

  event = symfonic_event_new (SYMFONIC_EVENT_KIND_TOOL_CALL_START, payload, NULL);
  symfonic_upstream_reader_push (&req->reader, event);
}

/* Some OpenAI-compatible servers repeat a call's id on every fragment:
 * only a new index starts a new call. */
void
symfonic_provider_request_tool_start (SymfonicProviderRequest *self,
                                      gint64                   index,
                                      const char              *id,
                                      const char              *name)
{
  if (self->tool_id != NULL && index == self->tool_index)
    return;
  flush_tool_call (self);
  self->tool_index = index;
  self->tool_id = g_strdup (id);
  self->tool_name = g_strdup (name);
}

/* A fragment for a call that is not the pending one belongs to a call
 * already sent, or to none: the provider broke its own order. Arguments
 * past the bound fail the stream: cut short, they would go on as if
 * complete. */
gboolean
symfonic_provider_request_tool_arguments (SymfonicProviderRequest  *self,
                                          gint64                    index,
                                          const char               *fragment,
                                          GError                  **error)
{
  if (self->tool_id == NULL || index != self->tool_index)
    {
      g_debug ("Run %s: dropped arguments for tool call %" G_GINT64_FORMAT, run_id (self), index);
      return TRUE;
    }
  if (strlen (fragment) > MAX_TOOL_ARGUMENTS_BYTES - self->tool_arguments->len)
    {
      g_propagate_error (error,
                         symfonic_provider_request_failure (self, SYMFONIC_ERROR_UPSTREAM,
                                                            _("The upstream sent a tool call too large to pass on"),
                                                            "the arguments of tool call %" G_GINT64_FORMAT
                                                            " went past %u bytes",
                                                            index, MAX_TOOL_ARGUMENTS_BYTES));
      return FALSE;
    }
  g_string_append (self->tool_arguments, fragment);

  return TRUE;
}

void
symfonic_provider_request_tool_end (SymfonicProviderRequest *self,
                                    gint64                   index)
{
  if (self->tool_id != NULL && index == self->tool_index)
    flush_tool_call (self);
}

void
symfonic_provider_request_set_finish_reason (SymfonicProviderRequest *self,
                                             const char              *finish_reason)
{
  flush_tool_call (self);
  g_free (self->finish_reason);
  self->finish_reason = g_strdup (finish_reason);
}

void
symfonic_provider_request_set_model (SymfonicProviderRequest *self,
                                     const char              *model)
{
  if (self->model != NULL || model == NULL)
    return;
  self->model = g_strndup (model, 256);
}

/* Providers report running totals (Anthropic's message_delta) or one
 * final count (OpenAI's usage chunk): what a report adds to the stream is
 * its growth since the last, and a total that shrinks is a lie. */
gboolean
symfonic_provider_request_set_usage (SymfonicProviderRequest   *self,
                                     const SymfonicUsageCounts *usage,
                                     GError                   **error)
{
  SymfonicProviderSourcePrivate *priv = symfonic_provider_source_get_instance_private (self->source);
  SymfonicUsageCounts growth = { -1, -1, usage->invalid };

  if ((usage->input >= 0 && (guint64) usage->input < self->input_tokens) ||
      (usage->output >= 0 && (guint64) usage->output < self->output_tokens))
    {
      g_propagate_error (error, symfonic_usage_failure (self->reader.stream, priv->display_url,
                                                        "a running token total that went down"));
      return FALSE;
    }
  if (usage->input >= 0)
    {
      growth.input = usage->input - self->input_tokens;
      self->input_tokens = usage->input;
      self->usage_seen = TRUE;
    }
  if (usage->output >= 0)
    {
      growth.output = usage->output - self->output_tokens;
      self->output_tokens = usage->output;
      self->usage_seen = TRUE;
    }

  return symfonic_usage_add (self->reader.stream, priv->display_url, &growth, error);
}

/* The provider's end: the last tool call, the usage, then the terminal,
 * whose text the encoders take from the deltas they sent. */
void
symfonic_provider_request_complete (SymfonicProviderRequest *self)
{
  g_autoptr(JsonObject) payload = json_object_new ();
  g_autoptr(SymfonicEvent) terminal = NULL;
  gint64 elapsed = g_get_monotonic_time () - symfonic_stream_get_start_time (self->reader.stream);

  flush_tool_call (self);
  note_usage (&self->reader);

  json_object_set_string_member (payload, "text", "");
  json_object_set_int_member (payload, "duration_ms", elapsed / 1000);
  if (self->finish_reason != NULL)
    json_object_set_string_member (payload, "finish_reason", self->finish_reason);
  if (self->model != NULL)
    json_object_set_string_member (payload, "model", self->model);
  terminal = symfonic_event_new (SYMFONIC_EVENT_KIND_RESPONSE_COMPLETE, payload, NULL);

  self->reader.completed = TRUE;
  symfonic_upstream_reader_push (&self->reader, terminal);
}

static gboolean
read_frame (SymfonicUpstreamReader  *reader,
            const char              *event,
            const char              *data,
            gsize                    data_length,
            GError                 **error)
{
  SymfonicProviderRequest *req = (SymfonicProviderRequest *) reader;

  /* OpenAI's end, which no other frame resembles */
  if (data_length == strlen ("[DONE]") && memcmp (data, "[DONE]", data_length) == 0)
    {
      symfonic_provider_request_complete (req);
      return TRUE;
    }

  if (!SYMFONIC_PROVIDER_SOURCE_GET_CLASS (req->source)->handle_frame (req->source, req, event, data, data_length,
                                                                       error))
    return FALSE;

  /* the first event: the client's head goes out with it */
  if (G_UNLIKELY (!req->answering && reader->answered))
    {
      req->answering = TRUE;
      symfonic_upstream_request_set_deadline (reader->upstream, 0);
    }

  return TRUE;
}

static GError *
truncated (SymfonicUpstreamReader *reader)
{
  return symfonic_provider_request_failure ((SymfonicProviderRequest *) reader, SYMFONIC_ERROR_UPSTREAM,
                                            _("The upstream closed the stream early"),
                                            "the body ended before the stream's end");
}

static GError *
transport_failure (SymfonicUpstreamReader *reader,
                   const GError           *error)
{
  SymfonicProviderRequest *req = (SymfonicProviderRequest *) reader;
  SymfonicProviderSourcePrivate *priv = symfonic_provider_source_get_instance_private (req->source);

  gboolean first_event_late = !req->answering && req->deadline != 0 && g_get_monotonic_time () >= req->deadline;

  return symfonic_upstream_failure_for_transport (run_id (req), priv->display_url, error,
                                                  req->head_in && !first_event_late ? priv->idle_timeout
                                                                                    : priv->timeout);
}

/* A provider's Retry-After goes to the client only as delta-seconds: an
 * HTTP date or anything else is the provider's text, not ours to echo. */
static void
carry_retry_after (SymfonicProviderRequest *req)
{
  const char *value = symfonic_upstream_request_get_header (req->reader.upstream, "Retry-After");
  gsize length = value != NULL ? strlen (value) : 0;

  if (length == 0 || length > MAX_RETRY_AFTER_DIGITS || strspn (value, "0123456789") != length)
    return;
  symfonic_stream_set_response_header (req->reader.stream, "Retry-After", value);
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
                                                _("The upstream is rate limiting requests; retry later"),
                                                "answered HTTP 429");
    case SOUP_STATUS_UNAUTHORIZED:
    case SOUP_STATUS_FORBIDDEN:
      /* the gateway's own credentials: nothing the client can change */
      return symfonic_provider_request_failure (req, SYMFONIC_ERROR_UPSTREAM,
                                                _("The upstream refused the request"),
                                                "refused the gateway's key with HTTP %u; check api-key-file",
                                                status);
    default:
      /* the status's standard phrase: the provider's body stays out of
       * even the log */
      return symfonic_provider_request_failure (req, SYMFONIC_ERROR_UPSTREAM,
                                                _("The upstream refused the request"),
                                                "answered HTTP %u %s", status, soup_status_get_phrase (status));
    }
}

static void
read_head (SymfonicUpstreamReader *reader,
           guint                   status)
{
  SymfonicProviderRequest *req = (SymfonicProviderRequest *) reader;
  SymfonicProviderSourcePrivate *priv = symfonic_provider_source_get_instance_private (req->source);

  if (!SOUP_STATUS_IS_SUCCESSFUL (status))
    {
      symfonic_upstream_reader_finish (reader, status_failure (req, status));
      return;
    }

  if (!symfonic_upstream_is_event_stream (symfonic_upstream_request_get_header (reader->upstream, "Content-Type")))
    {
      symfonic_upstream_reader_finish (reader,
                                       symfonic_provider_request_failure (req, SYMFONIC_ERROR_UPSTREAM,
                                                                          _("The upstream did not answer with an event stream"),
                                                                          "answered something else than an event stream"));
      return;
    }


  /* the provider answers: from now on it may only pause between bytes,
   * and still has until `timeout` for its first event */
  req->head_in = TRUE;
  symfonic_upstream_request_set_timeout (reader->upstream, priv->idle_timeout);
}

static const SymfonicUpstreamReaderVTable reader_vtable = {
  .head = read_head,
  .frame = read_frame,
  .transport_failure = transport_failure,
  .truncated = truncated,
  .cancelled = note_usage,
  .finish = note_usage,
  .free = request_free,
};

/* The client's head waits for the provider's first event, so that a
 * refusal (429 and its Retry-After above all) is a real status. */
static gboolean
symfonic_provider_source_admit (SymfonicSource  *source,
                                SymfonicStream  *stream,
                                GError         **error)
{
  symfonic_stream_hold_head (stream);

  return TRUE;
}

static void
symfonic_provider_source_start (SymfonicSource *source,
                                SymfonicStream *stream,
                                GCancellable   *cancellable)
{
  SymfonicProviderSource *self = SYMFONIC_PROVIDER_SOURCE (source);
  SymfonicProviderSourcePrivate *priv = symfonic_provider_source_get_instance_private (self);
  GString *body = g_string_sized_new (512);
  g_autoptr(GBytes) payload = NULL;
  SymfonicProviderRequest *req;

  SYMFONIC_PROVIDER_SOURCE_GET_CLASS (self)->write_body (self, symfonic_stream_get_invocation (stream), body);
  payload = g_string_free_to_bytes (body);

  req = g_new0 (SymfonicProviderRequest, 1);
  req->source = g_object_ref (self);
  req->tool_arguments = g_string_new (NULL);
  req->scratch = g_string_new (NULL);
  req->memo = symfonic_json_scan_memo_new ();
  symfonic_upstream_reader_init (&req->reader, &reader_vtable, stream, cancellable, MAX_EVENT_BYTES);
  /* the provider was told to produce no more */
  symfonic_stream_limit_output_tokens (stream,
                                       symfonic_provider_source_get_max_tokens (self,
                                                                                symfonic_stream_get_invocation (stream)));
  req->reader.upstream = symfonic_upstream_send (priv->upstream, "POST", priv->target, priv->header_lines,
                                                 "application/json", payload,
                                                 &symfonic_upstream_reader_handlers, &req->reader);
  /* the client's head waits for the first event: pings, comments and
   * interim heads do not hold it past `timeout` */
  symfonic_upstream_request_set_timeout (req->reader.upstream, priv->timeout);
  symfonic_upstream_request_set_deadline (req->reader.upstream, priv->timeout);
  if (priv->timeout != 0)
    req->deadline = g_get_monotonic_time () + (gint64) priv->timeout * G_USEC_PER_SEC;
  symfonic_upstream_reader_watch (&req->reader);
}

static void
symfonic_provider_source_source_init (SymfonicSourceInterface *iface)
{
  iface->admit = symfonic_provider_source_admit;
  iface->start = symfonic_provider_source_start;
}

/* --- what the subclasses read ------------------------------------------ */

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

/* --- configuration ------------------------------------------------------- */

/* Headers the source sets itself, or that would break the message's
 * framing or carry the key if an operator overrode them. */
static const char * const reserved_headers[] = {
  "Accept", "Connection", "Content-Length", "Content-Type", "Host", "Keep-Alive", "TE", "Trailer",
  "Transfer-Encoding", "Upgrade", "Authorization", "x-api-key", "anthropic-version", NULL,
};

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
                   _("%s: “%s” is not UTF-8 text"), key, name);
      return NULL;
    }

  return g_strstrip (g_steal_pointer (&contents));
}

static gboolean
read_api_key (SymfonicProviderSource  *self,
              GString                 *lines,
              GError                 **error)
{
  SymfonicProviderSourcePrivate *priv = symfonic_provider_source_get_instance_private (self);
  g_autofree char *key = NULL;

  if (priv->api_key_file == NULL)
    {
      /* a local server (vLLM, llama.cpp) may need none */
      SYMFONIC_PROVIDER_SOURCE_GET_CLASS (self)->add_headers (self, NULL, lines);
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
                   _("api-key-file: “%s” must hold one key of printable ASCII"), name);
      return FALSE;
    }

  SYMFONIC_PROVIDER_SOURCE_GET_CLASS (self)->add_headers (self, key, lines);
  memset (key, 0, strlen (key));

  return TRUE;
}

static gboolean
symfonic_provider_source_initable_init_impl (GInitable     *initable,
                                             GCancellable  *cancellable,
                                             GError       **error)
{
  SymfonicProviderSource *self = SYMFONIC_PROVIDER_SOURCE (initable);
  SymfonicProviderSourcePrivate *priv = symfonic_provider_source_get_instance_private (self);
  g_autoptr(GUri) uri = NULL;
  g_autoptr(GString) lines = NULL;
  g_autofree char *extra = NULL;
  const char *path;
  gsize length;

  uri = symfonic_upstream_parse_url ("base-url", priv->base_url, error);
  if (uri == NULL)
    return FALSE;
  if (g_uri_get_query (uri) != NULL)
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                           _("base-url: the URL must not have a query"));
      return FALSE;
    }

  if (priv->model == NULL || *priv->model == '\0')
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                           _("model: the provider's model name is required"));
      return FALSE;
    }

  if (priv->system_prompt_file != NULL)
    {
      priv->system_prompt = read_setting_file ("system-prompt-file", priv->system_prompt_file,
                                               MAX_SYSTEM_PROMPT_BYTES, error);
      if (priv->system_prompt == NULL)
        return FALSE;
    }

  extra = symfonic_header_lines_parse ("extra-headers", (const char * const *) priv->extra_headers,
                                       reserved_headers, error);
  if (extra == NULL)
    return FALSE;

  lines = g_string_new (extra);
  if (!read_api_key (self, lines, error))
    return FALSE;
  g_string_append (lines, "Accept: text/event-stream\r\n");
  priv->header_lines = g_string_free (g_steal_pointer (&lines), FALSE);

  priv->upstream = symfonic_upstream_new (priv->base_url, error);
  if (priv->upstream == NULL)
    return FALSE;

  /* "…/v1/" and "…/v1" name the same base */
  path = g_uri_get_path (uri);
  length = strlen (path);
  if (length > 0 && path[length - 1] == '/')
    length--;
  priv->target = g_strdup_printf ("%.*s%s", (int) length, path, SYMFONIC_PROVIDER_SOURCE_GET_CLASS (self)->endpoint);

  priv->display_url = g_uri_to_string_partial (uri, G_URI_HIDE_USERINFO | G_URI_HIDE_QUERY | G_URI_HIDE_FRAGMENT);

  return TRUE;
}

static void
symfonic_provider_source_initable_init (GInitableIface *iface)
{
  iface->init = symfonic_provider_source_initable_init_impl;
}

static void
symfonic_provider_source_finalize (GObject *object)
{
  SymfonicProviderSourcePrivate *priv =
    symfonic_provider_source_get_instance_private (SYMFONIC_PROVIDER_SOURCE (object));

  g_free (priv->base_url);
  g_free (priv->model);
  g_clear_object (&priv->api_key_file);
  g_clear_object (&priv->system_prompt_file);
  g_strfreev (priv->extra_headers);
  g_free (priv->system_prompt);
  g_free (priv->target);
  g_free (priv->display_url);
  if (priv->header_lines != NULL)
    memset (priv->header_lines, 0, strlen (priv->header_lines));
  g_free (priv->header_lines);
  g_clear_object (&priv->upstream);

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
    case PROP_BASE_URL:
      g_value_set_string (value, priv->base_url);
      break;
    case PROP_MODEL:
      g_value_set_string (value, priv->model);
      break;
    case PROP_API_KEY_FILE:
      g_value_set_object (value, priv->api_key_file);
      break;
    case PROP_TIMEOUT:
      g_value_set_uint (value, priv->timeout);
      break;
    case PROP_IDLE_TIMEOUT:
      g_value_set_uint (value, priv->idle_timeout);
      break;
    case PROP_MAX_TOKENS:
      g_value_set_uint (value, priv->max_tokens);
      break;
    case PROP_SYSTEM_PROMPT_FILE:
      g_value_set_object (value, priv->system_prompt_file);
      break;
    case PROP_EXTRA_HEADERS:
      g_value_set_boxed (value, priv->extra_headers);
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
    case PROP_BASE_URL:
      g_free (priv->base_url);
      priv->base_url = g_value_dup_string (value);
      break;
    case PROP_MODEL:
      g_free (priv->model);
      priv->model = g_value_dup_string (value);
      break;
    case PROP_API_KEY_FILE:
      g_set_object (&priv->api_key_file, g_value_get_object (value));
      break;
    case PROP_TIMEOUT:
      priv->timeout = g_value_get_uint (value);
      break;
    case PROP_IDLE_TIMEOUT:
      priv->idle_timeout = g_value_get_uint (value);
      break;
    case PROP_MAX_TOKENS:
      priv->max_tokens = g_value_get_uint (value);
      break;
    case PROP_SYSTEM_PROMPT_FILE:
      g_set_object (&priv->system_prompt_file, g_value_get_object (value));
      break;
    case PROP_EXTRA_HEADERS:
      g_strfreev (priv->extra_headers);
      priv->extra_headers = g_value_dup_boxed (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_provider_source_class_init (SymfonicProviderSourceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = symfonic_provider_source_finalize;
  object_class->get_property = symfonic_provider_source_get_property;
  object_class->set_property = symfonic_provider_source_set_property;

  properties[PROP_BASE_URL] =
    g_param_spec_string ("base-url", "Base URL",
                         "The provider's API root, http or https, such as https://api.openai.com/v1",
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
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
  properties[PROP_TIMEOUT] =
    g_param_spec_uint ("timeout", "Timeout",
                       "Seconds the provider has for the first event of its answer (pings and "
                       "comments do not count); the client's response waits for it. 0 waits forever",
                       0, G_MAXUINT, DEFAULT_TIMEOUT,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_IDLE_TIMEOUT] =
    g_param_spec_uint ("idle-timeout", "Idle timeout",
                       "Seconds the provider may stay silent between bytes once it answers. "
                       "0 waits forever",
                       0, G_MAXUINT, DEFAULT_IDLE_TIMEOUT,
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
  properties[PROP_EXTRA_HEADERS] =
    g_param_spec_boxed ("extra-headers", "Extra headers",
                        "Headers sent to the provider besides its key, each as “Name: value”",
                        G_TYPE_STRV,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
symfonic_provider_source_init (SymfonicProviderSource *self)
{
  SymfonicProviderSourcePrivate *priv = symfonic_provider_source_get_instance_private (self);

  priv->timeout = DEFAULT_TIMEOUT;
  priv->idle_timeout = DEFAULT_IDLE_TIMEOUT;
  priv->max_tokens = DEFAULT_MAX_TOKENS;
}
