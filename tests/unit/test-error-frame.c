/* test-error-frame.c: a failure as the client sees it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <symfonic.h>

#define SECRET "db password is hunter2"

static void
test_error_frame_shape (void)
{
  g_autoptr(SymfonicErrorFrame) with_code = symfonic_error_frame_new (400, "bad body", "bad_request");
  g_autoptr(SymfonicErrorFrame) without_code = symfonic_error_frame_new (404, "nope", NULL);
  g_autoptr(SymfonicErrorFrame) escaped = symfonic_error_frame_new (400, "line\n\"two\"\x01", "bad_request");
  g_autofree char *with_json = symfonic_error_frame_to_json (with_code);
  g_autofree char *without_json = symfonic_error_frame_to_json (without_code);
  g_autofree char *escaped_json = symfonic_error_frame_to_json (escaped);
  g_autofree char *sse = symfonic_error_frame_to_sse (without_code);
  g_auto(GStrv) headers = symfonic_error_frame_list_headers (with_code);

  g_assert_cmpstr (with_json, ==, "{\"detail\":\"bad body\",\"status\":400,\"code\":\"bad_request\"}");
  g_assert_cmpstr (without_json, ==, "{\"detail\":\"nope\",\"status\":404}");
  g_assert_cmpstr (escaped_json, ==, "{\"detail\":\"line\\n\\\"two\\\"\\u0001\",\"status\":400,\"code\":\"bad_request\"}");
  g_assert_cmpstr (sse, ==, "event: error\ndata: {\"detail\":\"nope\",\"status\":404}\n\n");
  g_assert_cmpstrv (headers, ((const char * const[]) { NULL }));
}

typedef struct
{
  const char *name;
  GQuark      domain;
  int         code;
  guint       status;
  const char *wire_code;
} ErrorCase;

/* DESIGN sections 3 and 6: default statuses and codes; conflict and the
 * upstream availability classes stay at an active 500 for now. */
static void
test_error_frame_for_error (void)
{
  const ErrorCase cases[] = {
    { "failed", SYMFONIC_ERROR, SYMFONIC_ERROR_FAILED, 500, NULL },
    { "foreign", G_IO_ERROR, G_IO_ERROR_FAILED, 500, NULL },
    { "config", SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, 500, NULL },
    { "upstream", SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM, 502, "upstream_error" },
    { "conflict", SYMFONIC_ERROR, SYMFONIC_ERROR_CONFLICT, 500, "conflict" },
    { "unavailable", SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM_UNAVAILABLE, 500, "upstream_unavailable" },
    { "timeout", SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM_TIMEOUT, 500, "upstream_timeout" },
    { "bad-request", SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST, 400, "bad_request" },
    { "unauthorized", SYMFONIC_ERROR, SYMFONIC_ERROR_UNAUTHORIZED, 401, "unauthorized" },
    { "forbidden", SYMFONIC_ERROR, SYMFONIC_ERROR_FORBIDDEN, 403, "forbidden" },
    { "too-large", SYMFONIC_ERROR, SYMFONIC_ERROR_PAYLOAD_TOO_LARGE, 413, "payload_too_large" },
    { "media-type", SYMFONIC_ERROR, SYMFONIC_ERROR_UNSUPPORTED_MEDIA_TYPE, 415, "unsupported_media_type" },
    { "rate-limited", SYMFONIC_ERROR, SYMFONIC_ERROR_RATE_LIMITED, 429, "rate_limited" },
    { "budget", SYMFONIC_ERROR, SYMFONIC_ERROR_BUDGET_EXCEEDED, 429, "budget_exceeded" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const ErrorCase *c = &cases[i];
      g_autoptr(GError) error = g_error_new_literal (c->domain, c->code, SECRET);
      g_autoptr(SymfonicErrorFrame) frame = symfonic_error_frame_new_for_error (error);
      g_autofree char *json = symfonic_error_frame_to_json (frame);
      g_autofree char *sse = symfonic_error_frame_to_sse (frame);
      g_autoptr(JsonNode) parsed = NULL;
      JsonObject *object;

      g_test_message ("case %s: %s", c->name, json);
      g_assert_cmpuint (symfonic_error_frame_get_status (frame), ==, c->status);
      g_assert_cmpstr (symfonic_error_frame_get_code (frame), ==, c->wire_code);

      parsed = json_from_string (json, NULL);
      object = json_node_get_object (parsed);
      g_assert_cmpint (json_object_get_int_member (object, "status"), ==, c->status);
      g_assert_cmpint (json_object_has_member (object, "code"), ==, c->wire_code != NULL);
      if (c->wire_code != NULL)
        g_assert_cmpstr (json_object_get_string_member (object, "code"), ==, c->wire_code);

      if (c->status >= 500)
        {
          /* a server-side fault never shows its own message */
          g_assert_cmpstr (json_object_get_string_member (object, "detail"), ==, "Internal server error");
          g_assert_null (strstr (json, "hunter2"));
          g_assert_null (strstr (sse, "hunter2"));
        }
      else
        {
          g_assert_cmpstr (json_object_get_string_member (object, "detail"), ==, SECRET);
        }

      if (c->status == 401)
        g_assert_cmpstr (symfonic_error_frame_get_header (frame, "www-authenticate"), ==, "Bearer");
      else
        g_assert_null (symfonic_error_frame_get_header (frame, "WWW-Authenticate"));
    }
}

static void
test_error_frame_headers (void)
{
  g_autoptr(SymfonicErrorFrame) frame = symfonic_error_frame_new (429, "slow down", "rate_limited");
  g_autoptr(SymfonicErrorFrame) ref = NULL;
  g_auto(GStrv) names = NULL;

  symfonic_error_frame_set_header (frame, "Retry-After", "30");
  symfonic_error_frame_set_header (frame, "X-Other", "1");
  symfonic_error_frame_set_header (frame, "retry-after", "60");

  g_assert_cmpstr (symfonic_error_frame_get_header (frame, "RETRY-AFTER"), ==, "60");
  names = symfonic_error_frame_list_headers (frame);
  g_assert_cmpstrv (names, ((const char * const[]) { "Retry-After", "X-Other", NULL }));

  ref = symfonic_error_frame_ref (frame);
  g_assert_true (ref == frame);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/error-frame/shape", test_error_frame_shape);
  g_test_add_func ("/error-frame/for-error", test_error_frame_for_error);
  g_test_add_func ("/error-frame/headers", test_error_frame_headers);

  return g_test_run ();
}
