/* symfonic-rate-limit-stage.c: admissions per second, per tenant or principal
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>

#include "symfonic-rate-limit-stage.h"

/* GCRA (the generic cell rate algorithm): one timestamp per key instead of
 * a token count plus a refill time, and one atomic step per admission,
 * which is what a shared store can do in a single round trip. `rate`
 * admissions per second on average, up to `burst` at once after a quiet
 * spell. Only admission is metered: the stage has no per-event work. */
struct _SymfonicRateLimitStage
{
  GObject               parent_instance;

  double                rate;
  guint                 burst;
  SymfonicRateLimitKey  key;

  SymfonicMeterStore   *store;
  gint64                emission_interval_us;
  gint64                burst_tolerance_us;
};

static void symfonic_rate_limit_stage_stage_init (SymfonicStageInterface *iface);
static void symfonic_rate_limit_stage_initable_init (GInitableIface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SymfonicRateLimitStage, symfonic_rate_limit_stage, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, symfonic_rate_limit_stage_initable_init)
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_STAGE, symfonic_rate_limit_stage_stage_init))

enum {
  PROP_0,
  PROP_RATE,
  PROP_BURST,
  PROP_KEY,
  PROP_STORE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

GType
symfonic_rate_limit_key_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    { SYMFONIC_RATE_LIMIT_KEY_TENANT, "SYMFONIC_RATE_LIMIT_KEY_TENANT", "tenant" },
    { SYMFONIC_RATE_LIMIT_KEY_PRINCIPAL, "SYMFONIC_RATE_LIMIT_KEY_PRINCIPAL", "principal" },
    { SYMFONIC_RATE_LIMIT_KEY_TENANT_PRINCIPAL, "SYMFONIC_RATE_LIMIT_KEY_TENANT_PRINCIPAL", "tenant-principal" },
    { 0, NULL, NULL },
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type, g_enum_register_static (g_intern_static_string ("SymfonicRateLimitKey"), values));

  return type;
}

/**
 * symfonic_rate_limit_stage_dup_key:
 * @self: a #SymfonicRateLimitStage
 * @stream: a stream
 *
 * Returns: (transfer full): the store key @stream is counted under, see
 *   symfonic_meter_dup_key()
 */
char *
symfonic_rate_limit_stage_dup_key (SymfonicRateLimitStage *self,
                                   SymfonicStream         *stream)
{
  g_return_val_if_fail (SYMFONIC_IS_RATE_LIMIT_STAGE (self), NULL);
  g_return_val_if_fail (SYMFONIC_IS_STREAM (stream), NULL);

  return symfonic_meter_dup_key (stream, self->key != SYMFONIC_RATE_LIMIT_KEY_PRINCIPAL,
                                 self->key != SYMFONIC_RATE_LIMIT_KEY_TENANT);
}

/* The store's verdict on @stream: %TRUE if it is allowed, otherwise
 * %FALSE with the refusal in @error. */
static gboolean
apply_verdict (SymfonicRateLimitStage  *self,
               SymfonicStream          *stream,
               gboolean                 allowed,
               gint64                   retry_after_us,
               GError                 **error)
{
  char rate[G_ASCII_DTOSTR_BUF_SIZE];

  if (allowed)
    {
      /* a store that says how much room is left: within the last tenth
       * of the burst (at least the last admission), the metrics count it
       * as near the limit */
      if (retry_after_us < 0 &&
          -1 - retry_after_us < MAX (self->emission_interval_us, (self->burst_tolerance_us + self->emission_interval_us) / 10))
        symfonic_stream_mark_near_limit (stream);
      return TRUE;
    }

  /* the header first: the refusal's response is built from the stream */
  symfonic_meter_set_retry_after (stream, retry_after_us);
  g_ascii_formatd (rate, sizeof rate, "%g", self->rate);
  g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_RATE_LIMITED,
               "Too many requests: the limit is %s per second with bursts of %u; "
               "retry after %" G_GUINT64_FORMAT " s",
               rate, self->burst, symfonic_meter_retry_after_seconds (retry_after_us));

  return FALSE;
}

static void
take_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  SymfonicRateLimitStage *self = g_task_get_source_object (task);
  SymfonicStream *stream = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  gint64 retry_after_us = 0;
  gboolean allowed = FALSE;

  if (!symfonic_meter_store_take_finish (SYMFONIC_METER_STORE (object), result, &allowed,
                                         &retry_after_us, &error) ||
      !apply_verdict (self, stream, allowed, retry_after_us, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  g_task_return_boolean (task, TRUE);
}

/* Decided at once when the store can (its state is in this process), so
 * that the request waits no main-loop turn for it; otherwise the store's
 * G_IO_ERROR_WOULD_BLOCK has the gateway call admit_async. */
static gboolean
symfonic_rate_limit_stage_admit (SymfonicStage   *stage,
                                 SymfonicStream  *stream,
                                 GError         **error)
{
  SymfonicRateLimitStage *self = SYMFONIC_RATE_LIMIT_STAGE (stage);
  g_autofree char *key = NULL;
  gint64 retry_after_us = 0;
  gboolean allowed = FALSE;

  if (!symfonic_meter_check_store (stage, self->store, error))
    return FALSE;

  key = symfonic_rate_limit_stage_dup_key (self, stream);
  if (!symfonic_meter_store_try_take (self->store, key, self->emission_interval_us, self->burst_tolerance_us,
                                      symfonic_meter_store_get_time (self->store), &allowed, &retry_after_us,
                                      error))
    return FALSE;

  return apply_verdict (self, stream, allowed, retry_after_us, error);
}

static void
symfonic_rate_limit_stage_admit_async (SymfonicStage       *stage,
                                       SymfonicStream      *stream,
                                       GCancellable        *cancellable,
                                       GAsyncReadyCallback  callback,
                                       gpointer             user_data)
{
  SymfonicRateLimitStage *self = SYMFONIC_RATE_LIMIT_STAGE (stage);
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  g_autofree char *key = NULL;
  GError *error = NULL;

  g_task_set_source_tag (task, symfonic_rate_limit_stage_admit_async);
  g_task_set_task_data (task, g_object_ref (stream), g_object_unref);
  if (!symfonic_meter_check_store (stage, self->store, &error))
    {
      g_task_return_error (task, error);
      return;
    }

  key = symfonic_rate_limit_stage_dup_key (self, stream);
  symfonic_meter_store_take_async (self->store, key, self->emission_interval_us, self->burst_tolerance_us,
                                   symfonic_meter_store_get_time (self->store), cancellable,
                                   take_cb, g_steal_pointer (&task));
}

static void
symfonic_rate_limit_stage_stage_init (SymfonicStageInterface *iface)
{
  iface->admit = symfonic_rate_limit_stage_admit;
  iface->admit_async = symfonic_rate_limit_stage_admit_async;
  iface->admit_finish = symfonic_meter_admit_finish;
}

static gboolean
symfonic_rate_limit_stage_initable_init_impl (GInitable     *initable,
                                              GCancellable  *cancellable,
                                              GError       **error)
{
  SymfonicRateLimitStage *self = SYMFONIC_RATE_LIMIT_STAGE (initable);
  double interval;

  symfonic_meter_ensure_store (&self->store);

  /* the property ranges keep both within a few hours of microseconds */
  interval = MAX (G_USEC_PER_SEC / self->rate + 0.5, 1.0);
  self->emission_interval_us = (gint64) interval;
  self->burst_tolerance_us = (gint64) (self->burst - 1) * self->emission_interval_us;

  return TRUE;
}

static void
symfonic_rate_limit_stage_initable_init (GInitableIface *iface)
{
  iface->init = symfonic_rate_limit_stage_initable_init_impl;
}

/**
 * symfonic_rate_limit_stage_get_store:
 * @self: a #SymfonicRateLimitStage
 *
 * Returns: (transfer none) (nullable): the stage's store, once initialized
 */
SymfonicMeterStore *
symfonic_rate_limit_stage_get_store (SymfonicRateLimitStage *self)
{
  g_return_val_if_fail (SYMFONIC_IS_RATE_LIMIT_STAGE (self), NULL);

  return self->store;
}

static void
symfonic_rate_limit_stage_finalize (GObject *object)
{
  SymfonicRateLimitStage *self = (SymfonicRateLimitStage *) object;

  g_clear_object (&self->store);

  G_OBJECT_CLASS (symfonic_rate_limit_stage_parent_class)->finalize (object);
}

static void
symfonic_rate_limit_stage_get_property (GObject    *object,
                                        guint       prop_id,
                                        GValue     *value,
                                        GParamSpec *pspec)
{
  SymfonicRateLimitStage *self = SYMFONIC_RATE_LIMIT_STAGE (object);

  switch (prop_id)
    {
    case PROP_RATE:
      g_value_set_double (value, self->rate);
      break;
    case PROP_BURST:
      g_value_set_uint (value, self->burst);
      break;
    case PROP_KEY:
      g_value_set_enum (value, self->key);
      break;
    case PROP_STORE:
      g_value_set_object (value, self->store);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_rate_limit_stage_set_property (GObject      *object,
                                        guint         prop_id,
                                        const GValue *value,
                                        GParamSpec   *pspec)
{
  SymfonicRateLimitStage *self = SYMFONIC_RATE_LIMIT_STAGE (object);

  switch (prop_id)
    {
    case PROP_RATE:
      self->rate = g_value_get_double (value);
      break;
    case PROP_BURST:
      self->burst = g_value_get_uint (value);
      break;
    case PROP_KEY:
      self->key = g_value_get_enum (value);
      break;
    case PROP_STORE:
      g_set_object (&self->store, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_rate_limit_stage_class_init (SymfonicRateLimitStageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = symfonic_rate_limit_stage_finalize;
  object_class->get_property = symfonic_rate_limit_stage_get_property;
  object_class->set_property = symfonic_rate_limit_stage_set_property;

  /* settings are construct-only: streams on every worker read them with
   * no lock, so they must not change under them */
  properties[PROP_RATE] =
    g_param_spec_double ("rate", "Rate",
                         "Admissions per second allowed on average, per key",
                         0.000001, 1000000.0, 10.0,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_BURST] =
    g_param_spec_uint ("burst", "Burst",
                       "Admissions allowed at once after a quiet spell, per key",
                       1, 1000000, 10,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_KEY] =
    g_param_spec_enum ("key", "Key",
                       "Whose admissions count together: tenant, principal or tenant-principal "
                       "(“anonymous” when no auth stage ran)",
                       SYMFONIC_TYPE_RATE_LIMIT_KEY, SYMFONIC_RATE_LIMIT_KEY_TENANT,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_STORE] = symfonic_meter_param_spec_store ();

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* without an authenticated principal every request would count as one
   * "anonymous" client */
  symfonic_stage_type_declare_order (G_TYPE_FROM_CLASS (klass), NULL, (const char * const[]) { "principal", NULL },
                                     NULL, _("counts requests by their authenticated tenant and principal"));
}

static void
symfonic_rate_limit_stage_init (SymfonicRateLimitStage *self)
{
}
