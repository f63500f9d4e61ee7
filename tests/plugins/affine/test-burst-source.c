/* test-burst-source.c: a source with its whole answer at hand, which
 * pushes as fast as the stream takes it and counts the times it is told
 * to wait
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "test-burst-source.h"

/* Pushes `events` text deltas, "b1 " … "bN ", in one go, stopping only
 * when symfonic_stream_push() says to wait and going on when the stream's
 * ready function runs: like a network upstream whose whole answer already
 * sits in the socket, it is held back by nothing but the stream. */
struct _TestBurstSource
{
  GObject parent_instance;

  guint   events;
  guint   waits;
};

static void test_burst_source_source_init (SymfonicSourceInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (TestBurstSource, test_burst_source, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_SOURCE, test_burst_source_source_init))

enum {
  PROP_0,
  PROP_EVENTS,
  PROP_WAITS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* Set on a thread while its burst is inside symfonic_stream_push(), so
 * that a stage can tell it ran right there, with no hop. */
static GPrivate pushing;

gboolean
test_burst_source_is_pushing (void)
{
  return g_private_get (&pushing) != NULL;
}

typedef struct
{
  TestBurstSource *source;
  SymfonicStream  *stream;
  guint            next;
} Burst;

static void
burst_end (Burst *burst)
{
  g_autoptr(SymfonicStream) stream = burst->stream;

  symfonic_stream_set_ready_func (stream, NULL, NULL, NULL);
  g_object_unref (burst->source);
  g_free (burst);
  symfonic_stream_push_end (stream, NULL);
}

/* Pushes until the stream says to wait, and ends the burst once the
 * answer is out or the stream is over. */
static void
burst_run (Burst *burst)
{
  while (burst->next < burst->source->events)
    {
      g_autofree char *text = g_strdup_printf ("b%u ", burst->next + 1);
      g_autoptr(SymfonicEvent) event = symfonic_event_new_text_delta (text);
      SymfonicFlowReturn flow;

      burst->next++;
      g_private_set (&pushing, GINT_TO_POINTER (TRUE));
      flow = symfonic_stream_push (burst->stream, event);
      g_private_set (&pushing, NULL);

      if (flow == SYMFONIC_FLOW_OVER)
        break;
      if (flow == SYMFONIC_FLOW_WAIT)
        {
          g_atomic_int_inc (&burst->source->waits);
          return;
        }
    }

  burst_end (burst);
}

static void
on_ready (SymfonicStream *stream,
          gpointer        data)
{
  burst_run (data);
}

static gboolean
burst_start (gpointer data)
{
  burst_run (data);

  return G_SOURCE_REMOVE;
}

static void
test_burst_source_start (SymfonicSource *source,
                         SymfonicStream *stream,
                         GCancellable   *cancellable)
{
  g_autoptr(GSource) idle = g_idle_source_new ();
  Burst *burst = g_new0 (Burst, 1);

  burst->source = g_object_ref (TEST_BURST_SOURCE (source));
  burst->stream = g_object_ref (stream);
  /* the stream calls it once more if it ends while the burst waits, so
   * the burst always gets to end */
  symfonic_stream_set_ready_func (stream, on_ready, burst, NULL);
  g_source_set_callback (idle, burst_start, burst, NULL);
  g_source_attach (idle, g_main_context_get_thread_default ());
}

static void
test_burst_source_source_init (SymfonicSourceInterface *iface)
{
  iface->start = test_burst_source_start;
}

static void
test_burst_source_get_property (GObject    *object,
                                guint       prop_id,
                                GValue     *value,
                                GParamSpec *pspec)
{
  TestBurstSource *self = TEST_BURST_SOURCE (object);

  switch (prop_id)
    {
    case PROP_EVENTS:
      g_value_set_uint (value, self->events);
      break;
    case PROP_WAITS:
      g_value_set_uint (value, g_atomic_int_get (&self->waits));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
test_burst_source_set_property (GObject      *object,
                                guint         prop_id,
                                const GValue *value,
                                GParamSpec   *pspec)
{
  TestBurstSource *self = TEST_BURST_SOURCE (object);

  switch (prop_id)
    {
    case PROP_EVENTS:
      self->events = g_value_get_uint (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
test_burst_source_class_init (TestBurstSourceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = test_burst_source_get_property;
  object_class->set_property = test_burst_source_set_property;

  properties[PROP_EVENTS] =
    g_param_spec_uint ("events", "Events", "How many text deltas a stream gets",
                       0, G_MAXUINT, 500, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  properties[PROP_WAITS] =
    g_param_spec_uint ("waits", "Waits", "How many times a push was told to wait, over all streams",
                       0, G_MAXUINT, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
test_burst_source_init (TestBurstSource *self)
{
  self->events = 500;
}
