/* symfonic-provider-source.c: what the LLM provider sources share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <glib/gi18n-lib.h>
#include <libsoup/soup.h>

#include "symfonic-config-file.h"
#include "symfonic-http-source-private.h"
#include "symfonic-json.h"
#include "symfonic-provider-source-private.h"
#include "symfonic-stream.h"

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

/* What a stream's request accumulates of the provider's answer. */
struct _SymfonicProviderRequest
{
  /* the base class's, which holds this */
  SymfonicHttpRequest         *request;
  /* looked up once: every frame goes through it */
  SymfonicProviderSourceClass *klass;

  /* the tool call whose arguments are still arriving; tool_id is NULL
   * when there is none */
  gint64                   tool_index;
  char                    *tool_id;
  char                    *tool_name;
  GString                 *tool_arguments;

  char                    *finish_reason;
  char                    *model;
  /* the absence of usage went to the log */
  gboolean                 usage_noted;

  /* where the frames read without a tree are decoded, and what the last
   * one was */
  GString                 *scratch;
  SymfonicJsonScanMemo    *memo;
};

static void
provider_request_free (gpointer data)
{
  SymfonicProviderRequest *req = data;

  g_free (req->tool_id);
  g_free (req->tool_name);
  g_string_free (req->tool_arguments, TRUE);
  g_string_free (req->scratch, TRUE);
  symfonic_json_scan_memo_free (req->memo);
  g_free (req->finish_reason);
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

  if (!symfonic_http_request_has_usage (req->request))
    g_message ("Run %s: the provider reported no usage; the budget settles on an estimate", run_id (req));
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
  symfonic_http_request_push (req->request, event);
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

  flush_tool_call (self);
  note_usage (self);

  json_object_set_string_member (payload, "text", "");
  json_object_set_int_member (payload, "duration_ms", elapsed / 1000);
  if (self->finish_reason != NULL)
    json_object_set_string_member (payload, "finish_reason", self->finish_reason);
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

static gboolean
symfonic_provider_source_check_head (SymfonicHttpSource   *source,
                                     SymfonicHttpRequest  *request,
                                     guint                 status,
                                     GError              **error)
{
  SymfonicProviderRequest *req = request->data;

  if (!SOUP_STATUS_IS_SUCCESSFUL (status))
    {
      g_propagate_error (error, status_failure (req, status));
      return FALSE;
    }

  if (!symfonic_http_is_event_stream (symfonic_http_request_get_response_header (request, "Content-Type")))
    {
      g_propagate_error (error,
                         symfonic_provider_request_failure (req, SYMFONIC_ERROR_UPSTREAM,
                                                            _("The upstream did not answer with an event stream"),
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
  req->tool_arguments = g_string_new (NULL);
  req->scratch = g_string_new (NULL);
  req->memo = symfonic_json_scan_memo_new ();
  symfonic_http_request_set_data (request, req, provider_request_free);

  /* the provider was told to produce no more */
  symfonic_stream_limit_output_tokens (symfonic_http_request_get_stream (request),
                                       symfonic_provider_source_get_max_tokens (self, invocation));
  req->klass->write_body (self, invocation, body);
  g_string_assign (path, priv->target);

  return TRUE;
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
                   _("api-key-file: “%s” must hold one key of printable ASCII"), name);
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
                   _("%s: the URL must not have a query"), symfonic_http_source_get_url_key (source));
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
