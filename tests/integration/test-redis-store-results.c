/* test-redis-store-results.c: the Redis store's answers keep GAsyncResult's contract
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "redis-test-common.h"
#include "symfonic-meter-store.h"
#include "symfonic-redis-store-private.h"

/* The store answers from a pool of results that go back once their
 * callback returned: a caller that keeps one and finishes it later, as
 * GAsyncResult allows, must still read its own answer, whatever the store
 * answered meanwhile; an answer known within the call comes in a later
 * main-loop iteration, never from inside the call. */

typedef struct
{
  GMainContext      *context;
  SymfonicTestRedis *server;
  GObject           *store;
} Fixture;

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  f->context = g_main_context_new ();
  g_main_context_push_thread_default (f->context);
  f->server = symfonic_test_redis_start (SYMFONIC_TEST_REDIS_TCP, NULL);
  f->store = g_initable_new (SYMFONIC_TYPE_REDIS_STORE, NULL, &error,
                             "url", symfonic_test_redis_get_url (f->server), "timeout-ms", 1000,
                             "lease-ttl-ms", 30000, NULL);
  g_assert_no_error (error);
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  g_clear_object (&f->store);
  g_clear_pointer (&f->server, symfonic_test_redis_free);
  g_main_context_pop_thread_default (f->context);
  while (g_main_context_iteration (f->context, FALSE))
    ;
  g_main_context_unref (f->context);
}

typedef struct
{
  GAsyncResult *kept;
  gboolean      answered;
  gboolean      inside_call;
  gboolean      allowed;
  gint64        retry_after_us;
  GObject      *source;
  gpointer      user_data;
  GError       *error;
} Answer;

static void
answer_clear (Answer *answer)
{
  g_clear_object (&answer->kept);
  g_clear_object (&answer->source);
  g_clear_error (&answer->error);
}

/* keeps the result, to be finished later */
static void
kept_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  Answer *answer = user_data;

  g_assert_false (answer->inside_call);
  answer->kept = g_object_ref (result);
  answer->source = g_async_result_get_source_object (result);
  answer->user_data = g_async_result_get_user_data (result);
  g_assert_false (g_async_result_is_tagged (result, kept_cb));
  answer->answered = TRUE;
}

/* finishes the result at once */
static void
take_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  Answer *answer = user_data;

  g_assert_false (answer->inside_call);
  g_assert_true (object == answer->source || answer->source == NULL);
  symfonic_meter_store_take_finish (SYMFONIC_METER_STORE (object), result, &answer->allowed,
                                    &answer->retry_after_us, &answer->error);
  answer->answered = TRUE;
}

static gboolean
answered (gpointer data)
{
  return ((Answer *) data)->answered;
}

static void
take (Fixture             *f,
      GAsyncReadyCallback  callback,
      Answer              *answer)
{
  SymfonicMeterStore *store = SYMFONIC_METER_STORE (f->store);

  answer->inside_call = TRUE;
  /* one a minute, no burst: the first is admitted, the next refused */
  symfonic_meter_store_take_async (store, "t:acme", 60 * G_USEC_PER_SEC, 0, symfonic_meter_store_get_time (store),
                                   NULL, callback, answer);
  answer->inside_call = FALSE;
  g_assert_true (redis_test_wait (answered, answer, REDIS_TEST_WAIT_US));
}

static void
test_kept (Fixture       *f,
           gconstpointer  data)
{
  Answer first = { 0 };
  Answer second = { 0 };
  Answer third = { 0 };
  gboolean allowed = FALSE;
  gint64 retry_after_us = -1;
  g_autoptr(GError) error = NULL;

  take (f, kept_cb, &first);
  g_assert_true (first.source == f->store);
  g_assert_true (first.user_data == &first);

  /* the store answers twice more meanwhile, refusing */
  take (f, take_cb, &second);
  g_assert_no_error (second.error);
  g_assert_false (second.allowed);
  g_assert_cmpint (second.retry_after_us, >, 0);
  take (f, take_cb, &third);
  g_assert_false (third.allowed);

  /* the kept result still holds the first answer */
  g_assert_true (symfonic_meter_store_take_finish (SYMFONIC_METER_STORE (f->store), first.kept, &allowed,
                                                   &retry_after_us, &error));
  g_assert_no_error (error);
  g_assert_true (allowed);
  g_assert_cmpint (retry_after_us, ==, 0);

  answer_clear (&first);
  answer_clear (&second);
  answer_clear (&third);
}

typedef struct
{
  gboolean  answered;
  gboolean  inside_call;
  gboolean  reserved;
  guint64   lease_id;
  GError   *error;
} Lease;

static void
reserve_cb (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  Lease *lease = user_data;
  gint64 retry_after_us = 0;
  guint64 allowance = 0;

  g_assert_false (lease->inside_call);
  symfonic_meter_store_reserve_finish (SYMFONIC_METER_STORE (object), result, &lease->reserved, &lease->lease_id,
                                       &retry_after_us, &allowance, &lease->error);
  lease->answered = TRUE;
}

static void
charge_cb (GObject      *object,
           GAsyncResult *result,
           gpointer      user_data)
{
  Lease *lease = user_data;
  gboolean exhausted = FALSE;
  guint64 allowance = 0;

  g_assert_false (lease->inside_call);
  g_assert_false (symfonic_meter_store_charge_finish (SYMFONIC_METER_STORE (object), result, &exhausted, &allowance,
                                                      &lease->error));
  lease->answered = TRUE;
}

static gboolean
lease_answered (gpointer data)
{
  return ((Lease *) data)->answered;
}

/* A charge's asker that cancelled hears so when it finishes, as from a
 * GTask that checks its cancellable. */
static void
test_cancelled_charge (Fixture       *f,
                       gconstpointer  data)
{
  SymfonicMeterStore *store = SYMFONIC_METER_STORE (f->store);
  const SymfonicMeterScope scope = { "t:acme", 1000, 60 * G_USEC_PER_SEC };
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  Lease lease = { 0 };

  lease.inside_call = TRUE;
  symfonic_meter_store_reserve_async (store, &scope, 1, 10, symfonic_meter_store_get_time (store), NULL, reserve_cb,
                                      &lease);
  lease.inside_call = FALSE;
  g_assert_true (redis_test_wait (lease_answered, &lease, REDIS_TEST_WAIT_US));
  g_assert_no_error (lease.error);
  g_assert_true (lease.reserved);

  lease.answered = FALSE;
  lease.inside_call = TRUE;
  symfonic_meter_store_charge_async (store, lease.lease_id, &scope, 1, 5, symfonic_meter_store_get_time (store),
                                     cancellable, charge_cb, &lease);
  g_cancellable_cancel (cancellable);
  lease.inside_call = FALSE;
  g_assert_true (redis_test_wait (lease_answered, &lease, REDIS_TEST_WAIT_US));
  g_assert_error (lease.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&lease.error);
}

/* Without a connection the answer is known at once (on-failure=deny),
 * and still comes after the call returned. */
static void
test_known_at_once (Fixture       *f,
                    gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GObject) down = g_initable_new (SYMFONIC_TYPE_REDIS_STORE, NULL, &error,
                                            "url", "redis://127.0.0.1:1/0", "timeout-ms", 20, NULL);
  Answer answer = { 0 };

  g_assert_no_error (error);
  g_set_object (&f->store, down);
  /* the first waits for the worker's first connection, a deadline long */
  take (f, take_cb, &answer);
  g_assert_no_error (answer.error);
  g_assert_false (answer.allowed);
  /* the next is refused within the call */
  answer = (Answer) { 0 };
  take (f, take_cb, &answer);
  g_assert_no_error (answer.error);
  g_assert_false (answer.allowed);
  g_assert_cmpint (answer.retry_after_us, >, 0);
  answer_clear (&answer);
}

int
main (int   argc,
      char *argv[])
{
  redis_test_init (&argc, &argv);
  if (symfonic_test_redis_skip_unless_available ())
    return 0;

  g_test_add ("/redis/store/result-kept", Fixture, NULL, fixture_set_up, test_kept, fixture_tear_down);
  g_test_add ("/redis/store/charge-cancelled", Fixture, NULL, fixture_set_up, test_cancelled_charge,
              fixture_tear_down);
  g_test_add ("/redis/store/known-at-once", Fixture, NULL, fixture_set_up, test_known_at_once, fixture_tear_down);

  return g_test_run ();
}
