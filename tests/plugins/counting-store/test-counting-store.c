/* test-counting-store.c: a store from outside the library, which answers
 * every call later, as a networked store does, counts what it is asked,
 * and admits only the first few arrivals
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <symfonic.h>

/* what a refusal tells the client to wait, so a test can tell this store's
 * answers from the memory store's */
#define TEST_COUNTING_STORE_ADMITS 2
#define TEST_COUNTING_STORE_RETRY_US (3 * G_USEC_PER_SEC)

#define TEST_TYPE_COUNTING_STORE (test_counting_store_get_type ())

G_DECLARE_FINAL_TYPE (TestCountingStore, test_counting_store, TEST, COUNTING_STORE, GObject)

/* What the store counts; workers call in parallel. */
typedef enum {
  COUNT_CALLS,
  COUNT_ARRIVALS,
  COUNT_RESERVES,
  COUNT_CHARGES,
  COUNT_RENEWS,
  COUNT_SETTLES,
  COUNT_ACQUIRES,
  COUNT_RELEASES,
  N_COUNTS
} Count;

static const char * const count_names[] = {
  "calls", "arrivals", "reserves", "charges", "renews", "settles", "acquires", "releases",
};

G_STATIC_ASSERT (G_N_ELEMENTS (count_names) == N_COUNTS);

struct _TestCountingStore
{
  GObject  parent_instance;

  guint    admits;
  guint    lease_ttl_ms;
  gboolean reachable;
  guint    counts[N_COUNTS];
};

enum {
  PROP_0,
  PROP_ADMITS,
  PROP_LEASE_TTL_MS,
  PROP_REACHABLE,
  PROP_FIRST_COUNT,
  N_PROPS = PROP_FIRST_COUNT + N_COUNTS
};

static GParamSpec *properties[N_PROPS];

static void test_counting_store_store_init (SymfonicStoreInterface *iface);
static void test_counting_store_meter_store_init (SymfonicMeterStoreInterface *iface);
static void test_counting_store_cap_store_init (SymfonicStreamCapStoreInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (TestCountingStore, test_counting_store, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_STORE, test_counting_store_store_init)
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_METER_STORE,
                                                      test_counting_store_meter_store_init)
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_STREAM_CAP_STORE,
                                                      test_counting_store_cap_store_init))

static guint
count (TestCountingStore *self,
       Count              what)
{
  g_atomic_int_inc (&self->counts[COUNT_CALLS]);

  return (guint) g_atomic_int_add (&self->counts[what], 1) + 1;
}

/* Answers through a GTask, as a networked store would: for an arrival
 * (an admission, a reservation, a stream slot), its number among the
 * arrivals (1-based), which is also its lease id. */
static void
answer (TestCountingStore   *self,
        Count                what,
        GAsyncReadyCallback  callback,
        gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (self, NULL, callback, user_data);
  guint arrival = 0;

  count (self, what);
  if (what == COUNT_ARRIVALS || what == COUNT_RESERVES || what == COUNT_ACQUIRES)
    arrival = (guint) g_atomic_int_add (&self->counts[COUNT_ARRIVALS], 1) + 1;
  g_task_return_int (task, arrival);
}

static gssize
arrival_of (GAsyncResult  *result,
            GError       **error)
{
  return g_task_propagate_int (G_TASK (result), error);
}

static void
test_counting_store_take_async (SymfonicMeterStore  *store,
                                const char          *key,
                                gint64               emission_interval_us,
                                gint64               burst_tolerance_us,
                                gint64               now_us,
                                GCancellable        *cancellable,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data)
{
  TestCountingStore *self = TEST_COUNTING_STORE (store);
  g_autoptr(GTask) task = g_task_new (self, NULL, callback, user_data);

  g_atomic_int_inc (&self->counts[COUNT_CALLS]);
  g_task_return_int (task, (guint) g_atomic_int_add (&self->counts[COUNT_ARRIVALS], 1) + 1);
}

static gboolean
test_counting_store_take_finish (SymfonicMeterStore  *store,
                                 GAsyncResult        *result,
                                 gboolean            *allowed,
                                 gint64              *retry_after_us,
                                 GError             **error)
{
  gssize arrival = arrival_of (result, error);

  if (arrival < 0)
    return FALSE;

  *allowed = arrival <= TEST_COUNTING_STORE (store)->admits;
  *retry_after_us = TEST_COUNTING_STORE_RETRY_US;
  return TRUE;
}

static void
test_counting_store_reserve_async (SymfonicMeterStore        *store,
                                   const SymfonicMeterScope  *scopes,
                                   guint                      n_scopes,
                                   guint64                    amount,
                                   gint64                     now_us,
                                   GCancellable              *cancellable,
                                   GAsyncReadyCallback        callback,
                                   gpointer                   user_data)
{
  answer (TEST_COUNTING_STORE (store), COUNT_RESERVES, callback, user_data);
}

static gboolean
test_counting_store_reserve_finish (SymfonicMeterStore  *store,
                                    GAsyncResult        *result,
                                    gboolean            *reserved,
                                    guint64             *lease_id,
                                    gint64              *retry_after_us,
                                    guint64             *allowance,
                                    GError             **error)
{
  gssize arrival = arrival_of (result, error);

  if (arrival < 0)
    return FALSE;

  *reserved = arrival <= TEST_COUNTING_STORE (store)->admits;
  *lease_id = arrival;
  *retry_after_us = TEST_COUNTING_STORE_RETRY_US;
  *allowance = G_MAXUINT32;
  return TRUE;
}

static void
test_counting_store_charge_async (SymfonicMeterStore        *store,
                                  guint64                    lease_id,
                                  const SymfonicMeterScope  *scopes,
                                  guint                      n_scopes,
                                  guint64                    used,
                                  gint64                     now_us,
                                  GCancellable              *cancellable,
                                  GAsyncReadyCallback        callback,
                                  gpointer                   user_data)
{
  answer (TEST_COUNTING_STORE (store), COUNT_CHARGES, callback, user_data);
}

static gboolean
test_counting_store_charge_finish (SymfonicMeterStore  *store,
                                   GAsyncResult        *result,
                                   gboolean            *exhausted,
                                   guint64             *allowance,
                                   GError             **error)
{
  if (arrival_of (result, error) < 0)
    return FALSE;

  *exhausted = FALSE;
  *allowance = G_MAXUINT32;
  return TRUE;
}

static void
test_counting_store_renew_async (SymfonicMeterStore        *store,
                                 guint64                    lease_id,
                                 const SymfonicMeterScope  *scopes,
                                 guint                      n_scopes,
                                 gint64                     now_us,
                                 GCancellable              *cancellable,
                                 GAsyncReadyCallback        callback,
                                 gpointer                   user_data)
{
  answer (TEST_COUNTING_STORE (store), COUNT_RENEWS, callback, user_data);
}

static gboolean
test_counting_store_renew_finish (SymfonicMeterStore  *store,
                                  GAsyncResult        *result,
                                  gboolean            *renewed,
                                  GError             **error)
{
  if (arrival_of (result, error) < 0)
    return FALSE;

  *renewed = TRUE;
  return TRUE;
}

static void
test_counting_store_settle_async (SymfonicMeterStore        *store,
                                  guint64                    lease_id,
                                  const SymfonicMeterScope  *scopes,
                                  guint                      n_scopes,
                                  guint64                    actual,
                                  gint64                     now_us,
                                  GCancellable              *cancellable,
                                  GAsyncReadyCallback        callback,
                                  gpointer                   user_data)
{
  answer (TEST_COUNTING_STORE (store), COUNT_SETTLES, callback, user_data);
}

static gboolean
test_counting_store_settle_finish (SymfonicMeterStore  *store,
                                   GAsyncResult        *result,
                                   GError             **error)
{
  return arrival_of (result, error) >= 0;
}

static void
test_counting_store_meter_store_init (SymfonicMeterStoreInterface *iface)
{
  iface->take_async = test_counting_store_take_async;
  iface->take_finish = test_counting_store_take_finish;
  iface->reserve_async = test_counting_store_reserve_async;
  iface->reserve_finish = test_counting_store_reserve_finish;
  iface->charge_async = test_counting_store_charge_async;
  iface->charge_finish = test_counting_store_charge_finish;
  iface->renew_async = test_counting_store_renew_async;
  iface->renew_finish = test_counting_store_renew_finish;
  iface->settle_async = test_counting_store_settle_async;
  iface->settle_finish = test_counting_store_settle_finish;
}

static void
test_counting_store_acquire_async (SymfonicStreamCapStore        *store,
                                   const SymfonicStreamCapScope  *scopes,
                                   guint                          n_scopes,
                                   gint64                         now_us,
                                   GCancellable                  *cancellable,
                                   GAsyncReadyCallback            callback,
                                   gpointer                       user_data)
{
  answer (TEST_COUNTING_STORE (store), COUNT_ACQUIRES, callback, user_data);
}

static gboolean
test_counting_store_acquire_finish (SymfonicStreamCapStore  *store,
                                    GAsyncResult            *result,
                                    gboolean                *acquired,
                                    guint                   *refused_scope,
                                    guint64                 *lease_id,
                                    GError                 **error)
{
  gssize arrival = arrival_of (result, error);

  if (arrival < 0)
    return FALSE;

  *acquired = arrival <= TEST_COUNTING_STORE (store)->admits;
  *refused_scope = 0;
  *lease_id = arrival;
  return TRUE;
}

static void
test_counting_store_cap_renew_async (SymfonicStreamCapStore        *store,
                                     guint64                        lease_id,
                                     const SymfonicStreamCapScope  *scopes,
                                     guint                          n_scopes,
                                     gint64                         now_us,
                                     GCancellable                  *cancellable,
                                     GAsyncReadyCallback            callback,
                                     gpointer                       user_data)
{
  answer (TEST_COUNTING_STORE (store), COUNT_RENEWS, callback, user_data);
}

static gboolean
test_counting_store_cap_renew_finish (SymfonicStreamCapStore  *store,
                                      GAsyncResult            *result,
                                      gboolean                *renewed,
                                      GError                 **error)
{
  if (arrival_of (result, error) < 0)
    return FALSE;

  *renewed = TRUE;
  return TRUE;
}

static void
test_counting_store_release_async (SymfonicStreamCapStore        *store,
                                   guint64                        lease_id,
                                   const SymfonicStreamCapScope  *scopes,
                                   guint                          n_scopes,
                                   gint64                         now_us,
                                   GCancellable                  *cancellable,
                                   GAsyncReadyCallback            callback,
                                   gpointer                       user_data)
{
  answer (TEST_COUNTING_STORE (store), COUNT_RELEASES, callback, user_data);
}

static gboolean
test_counting_store_release_finish (SymfonicStreamCapStore  *store,
                                    GAsyncResult            *result,
                                    GError                 **error)
{
  return arrival_of (result, error) >= 0;
}

static void
test_counting_store_cap_store_init (SymfonicStreamCapStoreInterface *iface)
{
  iface->acquire_async = test_counting_store_acquire_async;
  iface->acquire_finish = test_counting_store_acquire_finish;
  iface->renew_async = test_counting_store_cap_renew_async;
  iface->renew_finish = test_counting_store_cap_renew_finish;
  iface->release_async = test_counting_store_release_async;
  iface->release_finish = test_counting_store_release_finish;
}

static gint64
test_counting_store_get_lease_ttl (SymfonicStore *store)
{
  return (gint64) TEST_COUNTING_STORE (store)->lease_ttl_ms * 1000;
}

/* As a networked store that cannot be reached fails its check. */
static void
test_counting_store_check_async (SymfonicStore       *store,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  TestCountingStore *self = TEST_COUNTING_STORE (store);
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);

  if (self->reachable)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED, "the counting store is unreachable");
}

static gboolean
test_counting_store_check_finish (SymfonicStore  *store,
                                  GAsyncResult   *result,
                                  GError        **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
test_counting_store_store_init (SymfonicStoreInterface *iface)
{
  iface->get_lease_ttl = test_counting_store_get_lease_ttl;
  iface->check_async = test_counting_store_check_async;
  iface->check_finish = test_counting_store_check_finish;
}

static void
test_counting_store_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  TestCountingStore *self = TEST_COUNTING_STORE (object);

  switch (prop_id)
    {
    case PROP_ADMITS:
      g_value_set_uint (value, self->admits);
      break;
    case PROP_LEASE_TTL_MS:
      g_value_set_uint (value, self->lease_ttl_ms);
      break;
    case PROP_REACHABLE:
      g_value_set_boolean (value, self->reachable);
      break;
    default:
      if (prop_id >= PROP_FIRST_COUNT && prop_id < N_PROPS)
        g_value_set_uint (value, (guint) g_atomic_int_get (&self->counts[prop_id - PROP_FIRST_COUNT]));
      else
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
test_counting_store_set_property (GObject      *object,
                                  guint         prop_id,
                                  const GValue *value,
                                  GParamSpec   *pspec)
{
  TestCountingStore *self = TEST_COUNTING_STORE (object);

  switch (prop_id)
    {
    case PROP_ADMITS:
      self->admits = g_value_get_uint (value);
      break;
    case PROP_LEASE_TTL_MS:
      self->lease_ttl_ms = g_value_get_uint (value);
      break;
    case PROP_REACHABLE:
      self->reachable = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
test_counting_store_class_init (TestCountingStoreClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = test_counting_store_get_property;
  object_class->set_property = test_counting_store_set_property;

  properties[PROP_ADMITS] =
    g_param_spec_uint ("admits", "Admits", "How many arrivals the store admits",
                       0, G_MAXUINT, TEST_COUNTING_STORE_ADMITS,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_LEASE_TTL_MS] =
    g_param_spec_uint ("lease-ttl-ms", "Lease TTL (ms)", "How long its leases live unless renewed",
                       0, G_MAXUINT, SYMFONIC_STORE_DEFAULT_LEASE_TTL_MS,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_REACHABLE] =
    g_param_spec_boolean ("reachable", "Reachable", "Whether its check succeeds",
                          TRUE,
                          G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  for (guint i = 0; i < N_COUNTS; i++)
    properties[PROP_FIRST_COUNT + i] =
      g_param_spec_uint (count_names[i], count_names[i], "How many such operations the store was asked for",
                         0, G_MAXUINT, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
test_counting_store_init (TestCountingStore *self)
{
}

static gboolean
test_counting_store_plugin_init (SymfonicPlugin  *plugin,
                                 GError         **error)
{
  return symfonic_plugin_register_type (plugin, TEST_TYPE_COUNTING_STORE, "test-counting", error);
}

SYMFONIC_PLUGIN_DEFINE ("test-counting-store", "1.0", "LGPL-2.1-or-later", "A store that counts its calls",
                        test_counting_store_plugin_init);
