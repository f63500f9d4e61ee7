/* test-count-stage.c: an inline stage that counts the events reaching it,
 * so a test sees how far a source ran ahead, and those that reached it
 * inside a burst source's push, so a test sees it ran with no hop
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "test-burst-source.h"
#include "test-count-stage.h"

struct _TestCountStage
{
  GObject parent_instance;

  guint   seen;
  guint   in_push;
};

static void test_count_stage_stage_init (SymfonicStageInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (TestCountStage, test_count_stage, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_STAGE, test_count_stage_stage_init))

enum {
  PROP_0,
  PROP_SEEN,
  PROP_IN_PUSH,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static gboolean
test_count_stage_process (SymfonicStage   *stage,
                          SymfonicStream  *stream,
                          SymfonicEvent   *event,
                          GError         **error)
{
  TestCountStage *self = TEST_COUNT_STAGE (stage);

  g_atomic_int_inc (&self->seen);
  if (test_burst_source_is_pushing ())
    g_atomic_int_inc (&self->in_push);
  symfonic_stream_emit (stream, event);

  return TRUE;
}

static void
test_count_stage_stage_init (SymfonicStageInterface *iface)
{
  iface->process = test_count_stage_process;
}

static void
test_count_stage_get_property (GObject    *object,
                               guint       prop_id,
                               GValue     *value,
                               GParamSpec *pspec)
{
  TestCountStage *self = TEST_COUNT_STAGE (object);

  switch (prop_id)
    {
    case PROP_SEEN:
      g_value_set_uint (value, g_atomic_int_get (&self->seen));
      break;
    case PROP_IN_PUSH:
      g_value_set_uint (value, g_atomic_int_get (&self->in_push));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
test_count_stage_class_init (TestCountStageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = test_count_stage_get_property;

  properties[PROP_SEEN] =
    g_param_spec_uint ("seen", "Seen", "How many events reached the stage",
                       0, G_MAXUINT, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_IN_PUSH] =
    g_param_spec_uint ("in-push", "In push",
                       "How many events reached the stage inside a burst source's push, on the source's thread",
                       0, G_MAXUINT, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
test_count_stage_init (TestCountStage *self)
{
}
