/* test-affine-stage.c: a stage whose hooks must run on its own thread; it
 * counts every hook that does not, and can be slowed or held there
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "test-affine-stage.h"

struct _TestAffineStage
{
  GObject  parent_instance;

  guint    delay_ms;
  gboolean refuse;
  GMutex   lock;
  GCond    released;
  gboolean hold;
  guint    waiting;
  guint    processed;
  guint    closed;
  guint    off_thread;
  /* the dispatch of the stage's context that ran the last event, how many
   * events it ran, and the most one ran */
  guint    batch_source;
  guint    batch_size;
  guint    largest_batch;
};

static void test_affine_stage_stage_init (SymfonicStageInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (TestAffineStage, test_affine_stage, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_STAGE, test_affine_stage_stage_init))

enum {
  PROP_0,
  PROP_DELAY_MS,
  PROP_REFUSE,
  PROP_HOLD,
  PROP_WAITING,
  PROP_PROCESSED,
  PROP_CLOSED,
  PROP_OFF_THREAD,
  PROP_LARGEST_BATCH,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* the thread the plugin bound the type to */
static GThread *affine_thread;

void
test_affine_stage_set_thread (GThread *thread)
{
  affine_thread = thread;
}

static void
check_thread (TestAffineStage *self)
{
  if (g_thread_self () != affine_thread)
    g_atomic_int_inc (&self->off_thread);
}

static gboolean
test_affine_stage_admit (SymfonicStage   *stage,
                         SymfonicStream  *stream,
                         GError         **error)
{
  TestAffineStage *self = TEST_AFFINE_STAGE (stage);

  check_thread (self);
  if (g_atomic_int_get (&self->refuse))
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_FORBIDDEN, "refused on the stage's thread");
      return FALSE;
    }

  return TRUE;
}

static void
emit_text (SymfonicStream *stream,
           const char     *text)
{
  g_autoptr(SymfonicEvent) event = symfonic_event_new_text_delta (text);

  symfonic_stream_emit (stream, event);
}

static gboolean
test_affine_stage_begin (SymfonicStage   *stage,
                         SymfonicStream  *stream,
                         GError         **error)
{
  check_thread (TEST_AFFINE_STAGE (stage));
  emit_text (stream, "<");

  return TRUE;
}

/* A batch is the events one hop hands over: they run in one dispatch of
 * the stage's context. */
static void
count_batch (TestAffineStage *self)
{
  GSource *source = g_main_current_source ();
  guint id = source != NULL ? g_source_get_id (source) : 0;

  if (id != 0 && id == self->batch_source)
    self->batch_size++;
  else
    {
      self->batch_source = id;
      self->batch_size = 1;
    }
  if (self->batch_size > (guint) g_atomic_int_get (&self->largest_batch))
    g_atomic_int_set (&self->largest_batch, self->batch_size);
}

static gboolean
test_affine_stage_process (SymfonicStage   *stage,
                           SymfonicStream  *stream,
                           SymfonicEvent   *event,
                           GError         **error)
{
  TestAffineStage *self = TEST_AFFINE_STAGE (stage);
  guint delay_ms;

  check_thread (self);

  g_mutex_lock (&self->lock);
  self->waiting++;
  while (self->hold)
    g_cond_wait (&self->released, &self->lock);
  self->waiting--;
  delay_ms = self->delay_ms;
  g_mutex_unlock (&self->lock);

  if (delay_ms > 0)
    g_usleep (delay_ms * 1000);
  count_batch (self);
  g_atomic_int_inc (&self->processed);
  symfonic_stream_emit (stream, event);

  return TRUE;
}

static gboolean
test_affine_stage_finish (SymfonicStage   *stage,
                          SymfonicStream  *stream,
                          GError         **error)
{
  check_thread (TEST_AFFINE_STAGE (stage));
  emit_text (stream, ">");

  return TRUE;
}

static void
test_affine_stage_close (SymfonicStage  *stage,
                         SymfonicStream *stream)
{
  TestAffineStage *self = TEST_AFFINE_STAGE (stage);

  check_thread (self);
  g_atomic_int_inc (&self->closed);
}

static void
test_affine_stage_stage_init (SymfonicStageInterface *iface)
{
  iface->admit = test_affine_stage_admit;
  iface->begin = test_affine_stage_begin;
  iface->process = test_affine_stage_process;
  iface->finish = test_affine_stage_finish;
  iface->close = test_affine_stage_close;
}

static void
test_affine_stage_finalize (GObject *object)
{
  TestAffineStage *self = TEST_AFFINE_STAGE (object);

  g_mutex_clear (&self->lock);
  g_cond_clear (&self->released);

  G_OBJECT_CLASS (test_affine_stage_parent_class)->finalize (object);
}

static void
test_affine_stage_get_property (GObject    *object,
                                guint       prop_id,
                                GValue     *value,
                                GParamSpec *pspec)
{
  TestAffineStage *self = TEST_AFFINE_STAGE (object);

  g_mutex_lock (&self->lock);
  switch (prop_id)
    {
    case PROP_DELAY_MS:
      g_value_set_uint (value, self->delay_ms);
      break;
    case PROP_REFUSE:
      g_value_set_boolean (value, g_atomic_int_get (&self->refuse));
      break;
    case PROP_HOLD:
      g_value_set_boolean (value, self->hold);
      break;
    case PROP_WAITING:
      g_value_set_uint (value, self->waiting);
      break;
    case PROP_PROCESSED:
      g_value_set_uint (value, g_atomic_int_get (&self->processed));
      break;
    case PROP_CLOSED:
      g_value_set_uint (value, g_atomic_int_get (&self->closed));
      break;
    case PROP_OFF_THREAD:
      g_value_set_uint (value, g_atomic_int_get (&self->off_thread));
      break;

    case PROP_LARGEST_BATCH:
      g_value_set_uint (value, g_atomic_int_get (&self->largest_batch));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
  g_mutex_unlock (&self->lock);
}

static void
test_affine_stage_set_property (GObject      *object,
                                guint         prop_id,
                                const GValue *value,
                                GParamSpec   *pspec)
{
  TestAffineStage *self = TEST_AFFINE_STAGE (object);

  g_mutex_lock (&self->lock);
  switch (prop_id)
    {
    case PROP_DELAY_MS:
      self->delay_ms = g_value_get_uint (value);
      break;
    case PROP_REFUSE:
      g_atomic_int_set (&self->refuse, g_value_get_boolean (value));
      break;
    case PROP_HOLD:
      self->hold = g_value_get_boolean (value);
      g_cond_broadcast (&self->released);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
  g_mutex_unlock (&self->lock);
}

static void
test_affine_stage_class_init (TestAffineStageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = test_affine_stage_finalize;
  object_class->get_property = test_affine_stage_get_property;
  object_class->set_property = test_affine_stage_set_property;

  properties[PROP_DELAY_MS] =
    g_param_spec_uint ("delay-ms", "Delay", "How long each event takes, in milliseconds",
                       0, 10000, 0, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  properties[PROP_REFUSE] =
    g_param_spec_boolean ("refuse", "Refuse", "Refuse every request at admission",
                          FALSE, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  properties[PROP_HOLD] =
    g_param_spec_boolean ("hold", "Hold", "Keep every event on the stage's thread until cleared",
                          FALSE, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  properties[PROP_WAITING] =
    g_param_spec_uint ("waiting", "Waiting", "Events held on the stage's thread now",
                       0, G_MAXUINT, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_PROCESSED] =
    g_param_spec_uint ("processed", "Processed", "Events processed",
                       0, G_MAXUINT, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_CLOSED] =
    g_param_spec_uint ("closed", "Closed", "Streams closed",
                       0, G_MAXUINT, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_OFF_THREAD] =
    g_param_spec_uint ("off-thread", "Off thread", "Hooks that ran on another thread than the stage's",
                       0, G_MAXUINT, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_LARGEST_BATCH] =
    g_param_spec_uint ("largest-batch", "Largest batch", "The most events one hop handed over",
                       0, G_MAXUINT, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
test_affine_stage_init (TestAffineStage *self)
{
  g_mutex_init (&self->lock);
  g_cond_init (&self->released);
}
