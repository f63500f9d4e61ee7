/* test-flood-source.c: a source that ignores back-pressure, for the tests
 * of what the gateway holds for a slow client
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <symfonic.h>

/* Pushes `events` events, `per-tick` of them every `interval-ms`, and goes
 * on whatever symfonic_stream_push() says until the stream is over: text
 * deltas that say their own number ("f00000 "), or, with `droppable`
 * false, tool calls whose id is their number ("t00000"), which may not be
 * shed. */
#define TEST_TYPE_FLOOD_SOURCE (test_flood_source_get_type ())

G_DECLARE_FINAL_TYPE (TestFloodSource, test_flood_source, TEST, FLOOD_SOURCE, GObject)

struct _TestFloodSource
{
  GObject  parent_instance;

  guint    events;
  guint    per_tick;
  guint    interval_ms;
  gboolean droppable;
};

static void test_flood_source_source_init (SymfonicSourceInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (TestFloodSource, test_flood_source, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_SOURCE, test_flood_source_source_init))

enum {
  PROP_0,
  PROP_EVENTS,
  PROP_PER_TICK,
  PROP_INTERVAL_MS,
  PROP_DROPPABLE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

typedef struct
{
  TestFloodSource *source;
  SymfonicStream  *stream;
  guint            next;
} Flood;

static void
flood_free (Flood *flood)
{
  g_object_unref (flood->source);
  g_object_unref (flood->stream);
  g_free (flood);
}

static SymfonicEvent *
flood_event (Flood *flood)
{
  g_autoptr(JsonObject) payload = NULL;
  g_autofree char *text = NULL;

  if (flood->source->droppable)
    {
      text = g_strdup_printf ("f%05u ", flood->next);
      return symfonic_event_new_text_delta (text);
    }

  payload = json_object_new ();
  text = g_strdup_printf ("t%05u", flood->next);
  json_object_set_string_member (payload, "tool_name", "flood");
  json_object_set_string_member (payload, "tool_call_id", text);

  return symfonic_event_new (SYMFONIC_EVENT_KIND_TOOL_CALL_START, payload, NULL);
}

static gboolean
flood_tick (gpointer data)
{
  Flood *flood = data;

  for (guint i = 0; i < flood->source->per_tick && flood->next < flood->source->events; i++)
    {
      g_autoptr(SymfonicEvent) event = flood_event (flood);

      flood->next++;
      if (symfonic_stream_push (flood->stream, event) == SYMFONIC_FLOW_OVER)
        return G_SOURCE_REMOVE;
    }

  if (flood->next < flood->source->events)
    return G_SOURCE_CONTINUE;

  symfonic_stream_push_end (flood->stream, NULL);
  return G_SOURCE_REMOVE;
}

static void
test_flood_source_start (SymfonicSource *source,
                         SymfonicStream *stream,
                         GCancellable   *cancellable)
{
  TestFloodSource *self = TEST_FLOOD_SOURCE (source);
  Flood *flood = g_new0 (Flood, 1);
  g_autoptr(GSource) timer = g_timeout_source_new (self->interval_ms);

  flood->source = g_object_ref (self);
  flood->stream = g_object_ref (stream);
  g_source_set_callback (timer, flood_tick, flood, (GDestroyNotify) flood_free);
  g_source_attach (timer, g_main_context_get_thread_default ());
}

static void
test_flood_source_source_init (SymfonicSourceInterface *iface)
{
  iface->start = test_flood_source_start;
}

static void
test_flood_source_get_property (GObject    *object,
                                guint       prop_id,
                                GValue     *value,
                                GParamSpec *pspec)
{
  TestFloodSource *self = TEST_FLOOD_SOURCE (object);

  switch (prop_id)
    {
    case PROP_EVENTS:
      g_value_set_uint (value, self->events);
      break;
    case PROP_PER_TICK:
      g_value_set_uint (value, self->per_tick);
      break;
    case PROP_INTERVAL_MS:
      g_value_set_uint (value, self->interval_ms);
      break;
    case PROP_DROPPABLE:
      g_value_set_boolean (value, self->droppable);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
test_flood_source_set_property (GObject      *object,
                                guint         prop_id,
                                const GValue *value,
                                GParamSpec   *pspec)
{
  TestFloodSource *self = TEST_FLOOD_SOURCE (object);

  switch (prop_id)
    {
    case PROP_EVENTS:
      self->events = g_value_get_uint (value);
      break;
    case PROP_PER_TICK:
      self->per_tick = g_value_get_uint (value);
      break;
    case PROP_INTERVAL_MS:
      self->interval_ms = g_value_get_uint (value);
      break;
    case PROP_DROPPABLE:
      self->droppable = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
test_flood_source_class_init (TestFloodSourceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = test_flood_source_get_property;
  object_class->set_property = test_flood_source_set_property;

  properties[PROP_EVENTS] =
    g_param_spec_uint ("events", "Events", "How many events a stream gets",
                       0, G_MAXUINT, 1000, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  properties[PROP_PER_TICK] =
    g_param_spec_uint ("per-tick", "Events per tick", "How many events are pushed at each tick",
                       1, G_MAXUINT, 10, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  properties[PROP_INTERVAL_MS] =
    g_param_spec_uint ("interval-ms", "Interval", "The time between ticks, in milliseconds",
                       0, G_MAXUINT, 1, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  properties[PROP_DROPPABLE] =
    g_param_spec_boolean ("droppable", "Droppable", "Push text deltas (TRUE) or tool calls, which may not be shed",
                          TRUE, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
test_flood_source_init (TestFloodSource *self)
{
  self->events = 1000;
  self->per_tick = 10;
  self->interval_ms = 1;
  self->droppable = TRUE;
}

static gboolean
test_flood_plugin_init (SymfonicPlugin  *plugin,
                        GError         **error)
{
  return symfonic_plugin_register_type (plugin, TEST_TYPE_FLOOD_SOURCE, "test-flood", error);
}

SYMFONIC_PLUGIN_DEFINE ("test-flood", "1.0", "LGPL-2.1-or-later", "A source that ignores back-pressure", test_flood_plugin_init);
