/* symfonic-error-frame.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-error.h"
#include "symfonic-error-frame.h"
#include "symfonic-header-list-private.h"
#include "symfonic-json-private.h"

/**
 * SymfonicErrorFrame:
 *
 * A mapped failure: HTTP status, the detail a client may read, the
 * machine-readable code when the failure had one, and extra headers (such
 * as `Retry-After`).
 *
 * The same frame renders as a JSON body before the SSE handshake and as
 * the one `event: error` frame after it.
 */
struct _SymfonicErrorFrame
{
  gatomicrefcount  ref_count;
  guint            status;
  char            *detail;
  char            *code;
  /* name, value pairs in insertion order */
  GPtrArray       *headers;
};

G_DEFINE_BOXED_TYPE (SymfonicErrorFrame, symfonic_error_frame,
                     symfonic_error_frame_ref, symfonic_error_frame_unref)

/**
 * symfonic_error_frame_new:
 * @status: an HTTP status, 400 to 599
 * @detail: what the client may read
 * @code: (nullable): the machine-readable code
 *
 * Creates the frame a failure becomes, before or after the stream's
 * handshake: a JSON body or the SSE `error` frame, the same payload either
 * way.
 *
 * Returns: (transfer full): a new frame
 */
SymfonicErrorFrame *
symfonic_error_frame_new (guint       status,
                          const char *detail,
                          const char *code)
{
  SymfonicErrorFrame *self;

  g_return_val_if_fail (status >= 400 && status <= 599, NULL);
  g_return_val_if_fail (detail != NULL, NULL);

  self = g_new0 (SymfonicErrorFrame, 1);
  g_atomic_ref_count_init (&self->ref_count);
  self->status = status;
  self->detail = g_utf8_make_valid (detail, -1);
  self->code = g_strdup (code);
  self->headers = symfonic_header_list_new ();

  return self;
}

/* What each code means when no error table says otherwise. The three
 * classes with a target status stay 500 until the error map flips them. */
static const guint default_status[] = {
  [SYMFONIC_ERROR_FAILED] = 500,
  [SYMFONIC_ERROR_BAD_REQUEST] = 400,
  [SYMFONIC_ERROR_UNAUTHORIZED] = 401,
  [SYMFONIC_ERROR_FORBIDDEN] = 403,
  [SYMFONIC_ERROR_NOT_FOUND] = 404,
  [SYMFONIC_ERROR_METHOD_NOT_ALLOWED] = 405,
  [SYMFONIC_ERROR_PAYLOAD_TOO_LARGE] = 413,
  [SYMFONIC_ERROR_UNSUPPORTED_MEDIA_TYPE] = 415,
  [SYMFONIC_ERROR_RATE_LIMITED] = 429,
  [SYMFONIC_ERROR_BUDGET_EXCEEDED] = 429,
  [SYMFONIC_ERROR_CONFLICT] = 500,
  [SYMFONIC_ERROR_UPSTREAM] = 502,
  [SYMFONIC_ERROR_UPSTREAM_UNAVAILABLE] = 500,
  [SYMFONIC_ERROR_UPSTREAM_TIMEOUT] = 500,
  [SYMFONIC_ERROR_CONFIG] = 500,
  [SYMFONIC_ERROR_PLUGIN] = 500,
  [SYMFONIC_ERROR_OVERLOADED] = 503,
  [SYMFONIC_ERROR_SLOW_CLIENT] = 408,
  [SYMFONIC_ERROR_SHUTTING_DOWN] = 503,
  [SYMFONIC_ERROR_GONE] = 410,
  /* the gateway's own key: a status the SDKs do not retry */
  [SYMFONIC_ERROR_UPSTREAM_REFUSED] = 403,
};

/**
 * symfonic_error_frame_new_for_error:
 * @error: a failure
 *
 * The built-in mapping, used where no error-map stage decides: errors of
 * the %SYMFONIC_ERROR domain get their code's status; any other failure is
 * a 500 without a code. A 5xx frame never carries the error's message.
 * The message is shown as it is, so errors a request can meet keep their
 * messages in English whatever the gateway's locale: clients parse them.
 *
 * Returns: (transfer full): a new frame
 */
SymfonicErrorFrame *
symfonic_error_frame_new_for_error (const GError *error)
{
  SymfonicErrorFrame *self;
  guint status = 500;
  const char *code = NULL;

  g_return_val_if_fail (error != NULL, NULL);

  if (error->domain == SYMFONIC_ERROR && (guint) error->code < G_N_ELEMENTS (default_status))
    {
      status = default_status[error->code];
      code = symfonic_error_code_name (error->code);
    }

  self = symfonic_error_frame_new (status, status >= 500 ? SYMFONIC_OPAQUE_DETAIL : error->message, code);
  if (status == 401)
    symfonic_error_frame_set_header (self, "WWW-Authenticate", "Bearer");

  return self;
}

/**
 * symfonic_error_frame_ref:
 * @self: a #SymfonicErrorFrame
 *
 * Takes a reference on @self.
 *
 * Returns: (transfer full): @self
 */
SymfonicErrorFrame *
symfonic_error_frame_ref (SymfonicErrorFrame *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

/**
 * symfonic_error_frame_unref:
 * @self: (transfer full): a #SymfonicErrorFrame
 *
 * Releases a reference.
 */
void
symfonic_error_frame_unref (SymfonicErrorFrame *self)
{
  g_return_if_fail (self != NULL);

  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;

  g_free (self->detail);
  g_free (self->code);
  g_ptr_array_unref (self->headers);
  g_free (self);
}

/**
 * symfonic_error_frame_get_status:
 * @self: a #SymfonicErrorFrame
 *
 * Gets the HTTP status of the frame, also the `status` of its payload.
 *
 * Returns: the HTTP status
 */
guint
symfonic_error_frame_get_status (SymfonicErrorFrame *self)
{
  g_return_val_if_fail (self != NULL, 500);

  return self->status;
}

/**
 * symfonic_error_frame_get_detail:
 * @self: a #SymfonicErrorFrame
 *
 * Gets the human-readable detail of the frame, what the client may read.
 *
 * Returns: the detail the client reads
 */
const char *
symfonic_error_frame_get_detail (SymfonicErrorFrame *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->detail;
}

/**
 * symfonic_error_frame_get_code:
 * @self: a #SymfonicErrorFrame
 *
 * Gets the machine-readable code the frame carries (`"rate_limited"`),
 * which clients branch on; a frame without one, such as a server fault's,
 * has none.
 *
 * Returns: (nullable): the machine-readable code
 */
const char *
symfonic_error_frame_get_code (SymfonicErrorFrame *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->code;
}

/**
 * symfonic_error_frame_set_header:
 * @self: a #SymfonicErrorFrame
 * @name: a header name
 * @value: its value
 *
 * Sets a header sent with the frame when it is a JSON response, replacing
 * a header of the same name. Headers cannot follow an SSE handshake, so
 * after it they are not sent.
 */
void
symfonic_error_frame_set_header (SymfonicErrorFrame *self,
                                 const char         *name,
                                 const char         *value)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (name != NULL);
  g_return_if_fail (value != NULL);

  symfonic_header_list_set (self->headers, name, value);
}

/**
 * symfonic_error_frame_get_header:
 * @self: a #SymfonicErrorFrame
 * @name: a header name, in any case
 *
 * Gets the value of a response header the frame asks for, such as `Retry-
 * After`.
 *
 * Returns: (nullable): the header's value
 */
const char *
symfonic_error_frame_get_header (SymfonicErrorFrame *self,
                                 const char         *name)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (name != NULL, NULL);

  return symfonic_header_list_get (self->headers, name);
}

/**
 * symfonic_error_frame_list_headers:
 * @self: a #SymfonicErrorFrame
 *
 * Lists the names of the response headers the frame asks for, in the order
 * they were set.
 *
 * Returns: (transfer full) (array zero-terminated=1): the header names
 */
char **
symfonic_error_frame_list_headers (SymfonicErrorFrame *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return symfonic_header_list_names (self->headers);
}

/**
 * symfonic_error_frame_to_json:
 * @self: a #SymfonicErrorFrame
 *
 * The frame's payload, `{"detail":...,"status":N}` with `"code"` only when
 * the failure carried one.
 *
 * Returns: (transfer full): compact JSON on one line
 */
char *
symfonic_error_frame_to_json (SymfonicErrorFrame *self)
{
  GString *out;

  g_return_val_if_fail (self != NULL, NULL);

  out = g_string_new ("{\"detail\":");
  symfonic_json_append_string (out, self->detail, -1);
  g_string_append_printf (out, ",\"status\":%u", self->status);
  if (self->code != NULL)
    {
      g_string_append (out, ",\"code\":");
      symfonic_json_append_string (out, self->code, -1);
    }
  g_string_append_c (out, '}');

  return g_string_free (out, FALSE);
}

/**
 * symfonic_error_frame_to_sse:
 * @self: a #SymfonicErrorFrame
 *
 * The frame as the terminal of an event stream:
 * `event: error\ndata: {...}\n\n`.
 *
 * Returns: (transfer full): the SSE frame
 */
char *
symfonic_error_frame_to_sse (SymfonicErrorFrame *self)
{
  g_autofree char *json = NULL;

  g_return_val_if_fail (self != NULL, NULL);

  json = symfonic_error_frame_to_json (self);
  return g_strconcat ("event: error\ndata: ", json, "\n\n", NULL);
}
