/* test-stream-caps.c: a route's max-streams and max-streams-per-tenant, end to end
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Two workers serve one route with `max-streams=3` and
 * `max-streams-per-tenant=2`, behind authentication, so the tenant is the
 * authenticated one. Held streams play a transcript that lasts minutes.
 * The request past a cap must get an immediate 503 with `Retry-After` and
 * the overloaded JSON body, never wait; the count spans both workers; a
 * place comes back when a stream ends, however it ends; and one tenant's
 * streams do not count against another's. The counts belong to the
 * server: the streams of a pipeline a reload replaced still count against
 * the route of the same name in the new one.
 */
#include <string.h>

#include <glib/gstdio.h>

#include "symfonic-test-support.h"

#define ALICE "Bearer demo-token-alice"
#define BOB "Bearer demo-token-bob"
#define ADMIN "Bearer demo-token-admin"
#define QUERY "{\"query\":\"Why is the sky blue?\"}"
#define OVERLOADED "{\"detail\":\"The gateway is busy; retry later\",\"status\":503,\"code\":\"overloaded\"}"
#define REFUSED_ROUTE "symfonic_streams_refused_total{route=\"typed\",cap=\"max-streams\"}"
#define REFUSED_TENANT "symfonic_streams_refused_total{route=\"typed\",cap=\"max-streams-per-tenant\"}"

typedef struct
{
  SymfonicServer *server;
  char           *base_url;
  char           *url;
  SoupSession    *session;
  /* refusals and metrics go over their own connections */
  SoupSession    *other_session;
  GPtrArray      *held;
  /* the pipeline file */
  char           *path;
} Fixture;

/* The pipeline of every test: a file, which a reload reads again, whose
 * route has a cap of @max_streams. */
static char *
pipeline_text (guint max_streams)
{
  g_autofree char *transcripts = g_test_build_filename (G_TEST_DIST, "integration", "transcripts", NULL);
  /* fifty deltas, 1 s apart: the held streams outlive every test */
  g_autofree char *base = symfonic_test_replay_pipeline (transcripts, "long", 10);
  g_autoptr(GString) text = g_string_new (base);
  g_autofree char *caps = g_strdup_printf ("source=fixtures\n"
                                           "stages=auth;errors\n"
                                           "max-streams=%u\n"
                                           "max-streams-per-tenant=2\n", max_streams);

  g_assert_cmpuint (g_string_replace (text, "workers=1\n", "workers=2\n", 1), ==, 1);
  g_assert_cmpuint (g_string_replace (text, "source=fixtures\n", caps, 1), ==, 1);
  g_string_append (text, "[stage:auth]\n"
                         "type=auth\n"
                         "tokens-file=" SYMFONIC_TEST_DATA_DIR "/demo-tokens.ini\n"
                         "\n"
                         "[stage:errors]\n"
                         "type=error-map\n"
                         "table=" SYMFONIC_TEST_DATA_DIR "/error-map.ini\n");

  return g_string_free (g_steal_pointer (&text), FALSE);
}

static void
write_pipeline (Fixture *fixture,
                guint    max_streams)
{
  g_autofree char *text = pipeline_text (max_streams);
  g_autoptr(GError) error = NULL;

  g_file_set_contents (fixture->path, text, -1, &error);
  g_assert_no_error (error);
}

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  fixture->path = g_build_filename (symfonic_test_private_dir (), "stream-caps.pipeline", NULL);
  write_pipeline (fixture, 3);
  fixture->server = symfonic_test_server_new_from_file (fixture->path, 2);
  fixture->base_url = g_strdup_printf ("http://127.0.0.1:%u", symfonic_server_get_port (fixture->server));
  fixture->url = g_strconcat (fixture->base_url, SYMFONIC_TEST_TYPED_PATH, NULL);
  fixture->session = symfonic_test_session_new ();
  fixture->other_session = symfonic_test_session_new ();
  fixture->held = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_test_stream_free);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  g_ptr_array_unref (fixture->held);
  symfonic_server_stop (fixture->server);
  g_object_unref (fixture->server);
  g_free (fixture->base_url);
  g_free (fixture->url);
  g_object_unref (fixture->session);
  g_object_unref (fixture->other_session);
  g_unlink (fixture->path);
  g_free (fixture->path);
}

/* Starts a stream that holds its place, and waits for its first delta. */
static SymfonicTestStream *
hold (Fixture    *fixture,
      const char *token,
      const char *tenant)
{
  SymfonicTestStream *stream = symfonic_test_stream_post (fixture->session, fixture->url, QUERY,
                                                          "Authorization", token,
                                                          "X-Tenant-ID", tenant,
                                                          NULL);

  symfonic_test_stream_wait_frames (stream, 1);
  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, 200);
  g_assert_cmpstr (((SymfonicTestFrame *) g_ptr_array_index (stream->frames, 0))->event, ==, "TextDeltaEvent");
  g_ptr_array_add (fixture->held, stream);

  return stream;
}

/* A stream that plays @transcript to its end, whatever that end is. */
static void
run_to_end (Fixture    *fixture,
            const char *transcript,
            const char *last_event)
{
  g_autoptr(SymfonicTestStream) stream = symfonic_test_stream_post (fixture->session, fixture->url, QUERY,
                                                                    "Authorization", ALICE,
                                                                    "X-Tenant-ID", "acme",
                                                                    "X-Symfonic-Transcript", transcript,
                                                                    NULL);
  SymfonicTestFrame *last;

  symfonic_test_stream_wait_done (stream);
  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, 200);
  last = g_ptr_array_index (stream->frames, stream->frames->len - 1);
  g_assert_cmpstr (last->event, ==, last_event);
}

/* The request past a cap: refused at once, before any stream starts. */
static void
assert_refused (Fixture    *fixture,
                const char *token,
                const char *tenant)
{
  g_autoptr(SymfonicTestResponse) response = NULL;
  gint64 start = g_get_monotonic_time ();

  response = symfonic_test_request (fixture->other_session, "POST", fixture->url, "application/json", QUERY,
                                    "Authorization", token,
                                    "X-Tenant-ID", tenant,
                                    NULL);
  g_assert_cmpuint (response->status, ==, 503);
  g_assert_cmpstr (soup_message_headers_get_one (response->headers, "Retry-After"), ==, "1");
  g_assert_cmpstr (soup_message_headers_get_content_type (response->headers, NULL), ==, "application/json");
  g_assert_cmpstr (symfonic_test_response_get_text (response), ==, OVERLOADED);
  /* not queued behind the held streams, which last minutes */
  g_assert_cmpint (g_get_monotonic_time () - start, <, 10 * G_USEC_PER_SEC);
}

static double
fetch (Fixture    *fixture,
       const char *name)
{
  return symfonic_test_fetch_metric (fixture->other_session, fixture->base_url, name);
}

typedef struct
{
  Fixture *fixture;
  double   active;
} ActiveWait;

static gboolean
active_is (gpointer data)
{
  ActiveWait *wait = data;

  return fetch (wait->fixture, "symfonic_streams_active") == wait->active;
}

/* A stream's place is given back before its connection finishes, and the
 * active gauge drops when it finishes: once the gauge is down, the place
 * is free. */
static void
wait_active (Fixture *fixture,
             double   active)
{
  ActiveWait wait = { fixture, active };

  g_assert_true (symfonic_test_iterate_until (NULL, active_is, &wait, SYMFONIC_TEST_WAIT_MS));
}

/* Three streams fill the route over both workers; the fourth, of a tenant
 * with no stream yet, is refused by the route's cap; a cancelled stream's
 * place serves the next request. */
static void
test_route_cap (Fixture       *fixture,
                gconstpointer  data)
{
  SymfonicTestStream *bob;

  hold (fixture, ALICE, "acme");
  hold (fixture, ALICE, "demo");
  bob = hold (fixture, BOB, "globex");
  wait_active (fixture, 3);

  assert_refused (fixture, ADMIN, "acme");
  assert_refused (fixture, ADMIN, "demo");
  g_assert_cmpfloat (fetch (fixture, REFUSED_ROUTE), ==, 2);
  g_assert_cmpfloat (fetch (fixture, REFUSED_TENANT), ==, 0);
  g_assert_cmpfloat (fetch (fixture, "symfonic_streams_started_total"), ==, 3);

  symfonic_test_stream_close (bob);
  wait_active (fixture, 2);
  g_assert_cmpfloat (fetch (fixture, "symfonic_streams_cancelled_total"), ==, 1);

  hold (fixture, ADMIN, "globex");
  assert_refused (fixture, BOB, "globex");
  g_assert_cmpfloat (fetch (fixture, REFUSED_ROUTE), ==, 3);
}

/* A tenant's third stream is refused while the route has room; other
 * tenants are not; and streams that complete or fail give their place
 * back. */
static void
test_tenant_cap (Fixture       *fixture,
                 gconstpointer  data)
{
  hold (fixture, ALICE, "acme");

  run_to_end (fixture, "typed", "ResponseCompleteEvent");
  run_to_end (fixture, "midstream-error", "error");
  run_to_end (fixture, "error-first", "error");
  wait_active (fixture, 1);

  hold (fixture, ALICE, "acme");
  assert_refused (fixture, ALICE, "acme");
  assert_refused (fixture, ADMIN, "acme");
  g_assert_cmpfloat (fetch (fixture, REFUSED_TENANT), ==, 2);
  g_assert_cmpfloat (fetch (fixture, REFUSED_ROUTE), ==, 0);

  /* the same principal for another tenant has a count of its own */
  hold (fixture, ALICE, "demo");
  assert_refused (fixture, BOB, "globex");
  g_assert_cmpfloat (fetch (fixture, REFUSED_ROUTE), ==, 1);
}

static void
reload (Fixture *fixture,
        guint    max_streams)
{
  g_autoptr(GError) error = NULL;

  write_pipeline (fixture, max_streams);
  g_assert_true (symfonic_server_reload (fixture->server, symfonic_registry_get_default (), &error));
  g_assert_no_error (error);
}

/* The streams of the pipeline a reload replaced hold their places in the
 * new one's route of the same name, under the new one's cap; a place
 * they give back serves the new pipeline's next request. */
static void
test_reload (Fixture       *fixture,
             gconstpointer  data)
{
  SymfonicTestStream *bob;

  hold (fixture, ALICE, "acme");
  hold (fixture, ALICE, "demo");
  bob = hold (fixture, BOB, "globex");
  wait_active (fixture, 3);

  /* the same file again: a new route, the same counts */
  reload (fixture, 3);
  assert_refused (fixture, ADMIN, "acme");
  g_assert_cmpfloat (fetch (fixture, REFUSED_ROUTE), ==, 1);

  /* a place the old pipeline's stream gives back is the new one's */
  symfonic_test_stream_close (bob);
  wait_active (fixture, 2);
  hold (fixture, ADMIN, "globex");
  assert_refused (fixture, BOB, "globex");

  /* a cap raised by a reload counts the streams already running */
  reload (fixture, 4);
  hold (fixture, BOB, "globex");
  assert_refused (fixture, ADMIN, "demo");
  g_assert_cmpfloat (fetch (fixture, "symfonic_streams_active"), ==, 4);

  /* and one lowered refuses until enough ended */
  reload (fixture, 2);
  g_ptr_array_set_size (fixture->held, 1);
  wait_active (fixture, 1);
  hold (fixture, BOB, "globex");
  assert_refused (fixture, ADMIN, "acme");
}

int
main (int   argc,
      char *argv[])
{
  symfonic_test_init (&argc, &argv);

  g_test_add ("/stream-caps/route", Fixture, NULL,
              fixture_set_up, test_route_cap, fixture_tear_down);
  g_test_add ("/stream-caps/tenant", Fixture, NULL,
              fixture_set_up, test_tenant_cap, fixture_tear_down);
  g_test_add ("/stream-caps/reload", Fixture, NULL,
              fixture_set_up, test_reload, fixture_tear_down);

  return g_test_run ();
}
