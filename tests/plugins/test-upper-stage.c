/* test-upper-stage.c: a stage plugin with one property of every kind a
 * pipeline file can set, for the registry and pipeline loader tests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <symfonic.h>

typedef enum {
  TEST_UPPER_MODE_ALL,
  TEST_UPPER_MODE_FIRST,
} TestUpperMode;

#define TEST_TYPE_UPPER_MODE (test_upper_mode_get_type ())

static GType
test_upper_mode_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    { TEST_UPPER_MODE_ALL, "TEST_UPPER_MODE_ALL", "all" },
    { TEST_UPPER_MODE_FIRST, "TEST_UPPER_MODE_FIRST", "first" },
    { 0, NULL, NULL },
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type, g_enum_register_static ("TestUpperMode", values));

  return type;
}

#define TEST_TYPE_UPPER_STAGE (test_upper_stage_get_type ())

G_DECLARE_FINAL_TYPE (TestUpperStage, test_upper_stage, TEST, UPPER_STAGE, GObject)

struct _TestUpperStage
{
  GObject        parent_instance;

  char          *prefix;
  guint          repeat;
  TestUpperMode  mode;
  char         **words;
  gboolean       enabled;
  double         ratio;
  int            level;
  GFile         *data_file;
};

static void test_upper_stage_stage_init (SymfonicStageInterface *iface);
static void test_upper_stage_initable_init (GInitableIface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (TestUpperStage, test_upper_stage, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_STAGE, test_upper_stage_stage_init)
                               G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, test_upper_stage_initable_init))

enum {
  PROP_0,
  PROP_PREFIX,
  PROP_REPEAT,
  PROP_MODE,
  PROP_WORDS,
  PROP_ENABLED,
  PROP_RATIO,
  PROP_LEVEL,
  PROP_DATA_FILE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static gboolean
test_upper_stage_process (SymfonicStage   *stage,
                          SymfonicStream  *stream,
                          SymfonicEvent   *event,
                          GError         **error)
{
  g_autoptr(SymfonicEvent) upper = NULL;
  g_autofree char *text = NULL;

  if (symfonic_event_get_kind (event) != SYMFONIC_EVENT_KIND_TEXT_DELTA)
    {
      symfonic_stream_emit (stream, event);
      return TRUE;
    }

  text = g_utf8_strup (symfonic_event_get_text (event, NULL), -1);
  upper = symfonic_event_new_text_delta (text);
  symfonic_stream_emit (stream, upper);

  return TRUE;
}

static void
test_upper_stage_stage_init (SymfonicStageInterface *iface)
{
  iface->process = test_upper_stage_process;
}

/* A missing resource must fail at load, not on the first request. */
static gboolean
test_upper_stage_initable_init_impl (GInitable     *initable,
                                     GCancellable  *cancellable,
                                     GError       **error)
{
  TestUpperStage *self = TEST_UPPER_STAGE (initable);

  if (self->data_file != NULL && !g_file_query_exists (self->data_file, cancellable))
    {
      g_autofree char *display = g_file_get_parse_name (self->data_file);

      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   "data-file: %s does not exist", display);
      return FALSE;
    }

  return TRUE;
}

static void
test_upper_stage_initable_init (GInitableIface *iface)
{
  iface->init = test_upper_stage_initable_init_impl;
}

static void
test_upper_stage_finalize (GObject *object)
{
  TestUpperStage *self = (TestUpperStage *) object;

  g_free (self->prefix);
  g_strfreev (self->words);
  g_clear_object (&self->data_file);

  G_OBJECT_CLASS (test_upper_stage_parent_class)->finalize (object);
}

static void
test_upper_stage_get_property (GObject    *object,
                               guint       prop_id,
                               GValue     *value,
                               GParamSpec *pspec)
{
  TestUpperStage *self = TEST_UPPER_STAGE (object);

  switch (prop_id)
    {
    case PROP_PREFIX:
      g_value_set_string (value, self->prefix);
      break;
    case PROP_REPEAT:
      g_value_set_uint (value, self->repeat);
      break;
    case PROP_MODE:
      g_value_set_enum (value, self->mode);
      break;
    case PROP_WORDS:
      g_value_set_boxed (value, self->words);
      break;
    case PROP_ENABLED:
      g_value_set_boolean (value, self->enabled);
      break;
    case PROP_RATIO:
      g_value_set_double (value, self->ratio);
      break;
    case PROP_LEVEL:
      g_value_set_int (value, self->level);
      break;
    case PROP_DATA_FILE:
      g_value_set_object (value, self->data_file);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
test_upper_stage_set_property (GObject      *object,
                               guint         prop_id,
                               const GValue *value,
                               GParamSpec   *pspec)
{
  TestUpperStage *self = TEST_UPPER_STAGE (object);

  switch (prop_id)
    {
    case PROP_PREFIX:
      g_free (self->prefix);
      self->prefix = g_value_dup_string (value);
      break;
    case PROP_REPEAT:
      self->repeat = g_value_get_uint (value);
      break;
    case PROP_MODE:
      self->mode = g_value_get_enum (value);
      break;
    case PROP_WORDS:
      g_strfreev (self->words);
      self->words = g_value_dup_boxed (value);
      break;
    case PROP_ENABLED:
      self->enabled = g_value_get_boolean (value);
      break;
    case PROP_RATIO:
      self->ratio = g_value_get_double (value);
      break;
    case PROP_LEVEL:
      self->level = g_value_get_int (value);
      break;
    case PROP_DATA_FILE:
      g_set_object (&self->data_file, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
test_upper_stage_class_init (TestUpperStageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS;

  object_class->finalize = test_upper_stage_finalize;
  object_class->get_property = test_upper_stage_get_property;
  object_class->set_property = test_upper_stage_set_property;

  properties[PROP_PREFIX] =
    g_param_spec_string ("prefix", "Prefix", "Text put before every delta",
                         NULL, flags);
  properties[PROP_REPEAT] =
    g_param_spec_uint ("repeat", "Repeat", "How many times each delta is sent",
                       1, 10, 1, flags);
  properties[PROP_MODE] =
    g_param_spec_enum ("mode", "Mode", "What is upper-cased",
                       TEST_TYPE_UPPER_MODE, TEST_UPPER_MODE_ALL, flags);
  properties[PROP_WORDS] =
    g_param_spec_boxed ("words", "Words", "Words left alone",
                        G_TYPE_STRV, flags);
  properties[PROP_ENABLED] =
    g_param_spec_boolean ("enabled", "Enabled", "Whether the stage changes anything",
                          TRUE, flags);
  properties[PROP_RATIO] =
    g_param_spec_double ("ratio", "Ratio", "Share of deltas changed",
                         0.0, 1.0, 1.0, flags);
  properties[PROP_LEVEL] =
    g_param_spec_int ("level", "Level", "A signed setting",
                      -5, 5, 0, flags);
  properties[PROP_DATA_FILE] =
    g_param_spec_object ("data-file", "Data file", "A file that must exist at load",
                         G_TYPE_FILE, flags);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
test_upper_stage_init (TestUpperStage *self)
{
}

static gboolean
test_stage_plugin_init (SymfonicPlugin  *plugin,
                        GError         **error)
{
  return symfonic_plugin_register_type (plugin, TEST_TYPE_UPPER_STAGE, "test-upper", error);
}

SYMFONIC_PLUGIN_DEFINE ("test-stage", "1.0", "LGPL-2.1-or-later", "Upper-cases text deltas, for the tests", test_stage_plugin_init);
