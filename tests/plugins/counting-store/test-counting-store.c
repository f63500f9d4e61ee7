/* test-counting-store.c: a meter store from outside the metering plugin,
 * which counts what it is asked and admits only the first two arrivals
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

struct _TestCountingStore
{
  GObject parent_instance;

  /* workers call in parallel */
  guint   calls;
};

enum {
  PROP_0,
  PROP_CALLS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void test_counting_store_meter_store_init (SymfonicMeterStoreInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (TestCountingStore, test_counting_store, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_METER_STORE,
                                                      test_counting_store_meter_store_init))

/* Answers through a GTask, as a networked store would, with the call's
 * number (1-based) as the result. */
static void
answer (TestCountingStore   *self,
        GCancellable        *cancellable,
        GAsyncReadyCallback  callback,
        gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  guint call = (guint) g_atomic_int_add (&self->calls, 1) + 1;

  g_task_return_int (task, call);
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
  answer (TEST_COUNTING_STORE (store), cancellable, callback, user_data);
}

static gboolean
test_counting_store_take_finish (SymfonicMeterStore  *store,
                                 GAsyncResult        *result,
                                 gboolean            *allowed,
                                 gint64              *retry_after_us,
                                 GError             **error)
{
  gssize call = g_task_propagate_int (G_TASK (result), error);

  if (call < 0)
    return FALSE;

  *allowed = call <= TEST_COUNTING_STORE_ADMITS;
  *retry_after_us = TEST_COUNTING_STORE_RETRY_US;
  return TRUE;
}

static void
test_counting_store_reserve_async (SymfonicMeterStore  *store,
                                   const char          *key,
                                   guint64              amount,
                                   guint64              limit,
                                   gint64               window_us,
                                   gint64               now_us,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  answer (TEST_COUNTING_STORE (store), cancellable, callback, user_data);
}

static gboolean
test_counting_store_reserve_finish (SymfonicMeterStore  *store,
                                    GAsyncResult        *result,
                                    gboolean            *reserved,
                                    gint64              *retry_after_us,
                                    guint64             *allowance,
                                    GError             **error)
{
  gssize call = g_task_propagate_int (G_TASK (result), error);

  if (call < 0)
    return FALSE;

  *reserved = call <= TEST_COUNTING_STORE_ADMITS;
  *retry_after_us = TEST_COUNTING_STORE_RETRY_US;
  *allowance = G_MAXUINT32;
  return TRUE;
}

static void
test_counting_store_settle_async (SymfonicMeterStore  *store,
                                  const char          *key,
                                  guint64              reserved,
                                  guint64              actual,
                                  gint64               now_us,
                                  GCancellable        *cancellable,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data)
{
  answer (TEST_COUNTING_STORE (store), cancellable, callback, user_data);
}

static gboolean
test_counting_store_settle_finish (SymfonicMeterStore  *store,
                                   GAsyncResult        *result,
                                   GError             **error)
{
  return g_task_propagate_int (G_TASK (result), error) >= 0;
}

static void
test_counting_store_meter_store_init (SymfonicMeterStoreInterface *iface)
{
  iface->take_async = test_counting_store_take_async;
  iface->take_finish = test_counting_store_take_finish;
  iface->reserve_async = test_counting_store_reserve_async;
  iface->reserve_finish = test_counting_store_reserve_finish;
  iface->settle_async = test_counting_store_settle_async;
  iface->settle_finish = test_counting_store_settle_finish;
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
    case PROP_CALLS:
      g_value_set_uint (value, (guint) g_atomic_int_get (&self->calls));
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

  properties[PROP_CALLS] =
    g_param_spec_uint ("calls", "Calls", "How many operations the store was asked for",
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

SYMFONIC_PLUGIN_DEFINE ("test-counting-store", "1.0", "LGPL-2.1-or-later", "A meter store that counts its calls",
                        test_counting_store_plugin_init);
