/* symfonic-extraction-stage.c: withholds and removes memory-extraction blocks
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "symfonic-extraction-filter.h"
#include "symfonic-extraction-stage.h"

/* The model writes the memory ops it wants applied inside the answer, as a
 * JSON list between two tags. This stage takes them out of the text deltas
 * (whatever the split), and publishes what it parsed as one
 * MemoryExtractedEvent after the last text delta.
 *
 * The typed stream wants that event before ConsolidationScheduledEvent, so
 * the first event that closes the answer (consolidation, graph, terminal,
 * or an upstream MemoryExtractedEvent, whose ops are merged into ours)
 * makes the base class release the withheld text, and the stage send its
 * event after it. Without such an event that happens when the upstream
 * finishes. The stage object is shared by every stream on every worker:
 * its counter is added to and read atomically. */

#define DEFAULT_OPEN_TAG "<memory_ops>"
#define DEFAULT_CLOSE_TAG "</memory_ops>"
#define DEFAULT_MAX_BLOCK_BYTES (64 * 1024)
#define MAX_MAX_BLOCK_BYTES (64 * 1024 * 1024)

struct _SymfonicExtractionStage
{
  SymfonicFilterStage     parent_instance;

  char                   *open_tag;
  char                   *close_tag;
  guint                   max_block_bytes;
  /* made from the tags, which are construct-only, once they were found
   * valid */
  SymfonicExtractionSpec *spec;

  guint64                 blocks_dropped;
};

/* A stream's state beside its filter. */
typedef struct
{
  /* how much of the filter's drop count was added to the stage's */
  guint64  dropped_counted;
  /* the answer was closed: our MemoryExtractedEvent's place has passed */
  gboolean closed;
} StreamState;

static void symfonic_extraction_stage_initable_init (GInitableIface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SymfonicExtractionStage, symfonic_extraction_stage, SYMFONIC_TYPE_FILTER_STAGE,
                               G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, symfonic_extraction_stage_initable_init))

enum {
  PROP_0,
  PROP_OPEN_TAG,
  PROP_CLOSE_TAG,
  PROP_MAX_BLOCK_BYTES,
  PROP_BLOCKS_DROPPED,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* A terminal's ops are not published, so not read: when deltas streamed
 * they are the same ops, and the terminal comes after the place of the
 * MemoryExtractedEvent anyway. */
static SymfonicTextFilter *
symfonic_extraction_stage_create_filter (SymfonicFilterStage *stage,
                                         SymfonicStream      *stream,
                                         SymfonicFilterUse    use)
{
  SymfonicExtractionStage *self = SYMFONIC_EXTRACTION_STAGE (stage);
  SymfonicExtractionFilter *filter;

  /* a stage that was never initialised has nothing to share */
  if (self->spec == NULL)
    filter = symfonic_extraction_filter_new (self->open_tag, self->close_tag, self->max_block_bytes);
  else
    filter = symfonic_extraction_filter_new_for_spec (self->spec, self->max_block_bytes);
  if (use == SYMFONIC_FILTER_USE_TERMINAL)
    symfonic_extraction_filter_set_reads_ops (filter, FALSE);

  return SYMFONIC_TEXT_FILTER (filter);
}

/* After a delta the filter took, and when the answer closes. */
static void
symfonic_extraction_stage_after_filter (SymfonicFilterStage *stage,
                                        SymfonicStream      *stream,
                                        SymfonicTextFilter  *filter)
{
  SymfonicExtractionStage *self = SYMFONIC_EXTRACTION_STAGE (stage);
  StreamState *state = symfonic_filter_stage_get_stream_state (stage, stream);

  symfonic_filter_stage_add_count (&self->blocks_dropped, &state->dropped_counted,
                                   symfonic_extraction_filter_get_dropped (SYMFONIC_EXTRACTION_FILTER (filter)));
}

/* Sends the one MemoryExtractedEvent, after the prose the base class
 * released, with @upstream's ops merged in when the upstream sent its
 * own. */
static gboolean
publish_ops (SymfonicExtractionStage  *self,
             SymfonicStream           *stream,
             SymfonicEvent            *upstream,
             GError                  **error)
{
  SymfonicFilterStage *stage = SYMFONIC_FILTER_STAGE (self);
  StreamState *state = symfonic_filter_stage_get_stream_state (stage, stream);
  SymfonicExtractionFilter *filter = SYMFONIC_EXTRACTION_FILTER (symfonic_filter_stage_get_filter (stage, stream));
  g_autoptr(JsonArray) ops = symfonic_extraction_filter_take_ops (filter);
  g_autoptr(JsonObject) payload = NULL;
  g_autoptr(SymfonicEvent) extracted = NULL;

  if (upstream != NULL)
    {
      JsonArray *theirs = json_object_get_array_member (symfonic_event_get_payload (upstream), "ops");
      guint n = json_array_get_length (theirs);

      for (guint i = 0; i < n; i++)
        json_array_add_element (ops, json_node_copy (json_array_get_element (theirs, i)));
    }

  if (state->closed)
    {
      /* text after the answer closed (an upstream out of order): its prose
       * is still released, but a second MemoryExtractedEvent would break
       * the at-most-one guarantee */
      if (json_array_get_length (ops) > 0)
        {
          g_debug ("Dropped %u memory ops parsed after the answer closed",
                   json_array_get_length (ops));
          __atomic_fetch_add (&self->blocks_dropped, 1, __ATOMIC_RELAXED);
        }
      return TRUE;
    }

  state->closed = TRUE;
  if (json_array_get_length (ops) == 0)
    return TRUE;

  payload = json_object_new ();
  json_object_set_array_member (payload, "ops", g_steal_pointer (&ops));
  /* sealed, it becomes the event's own instead of being copied */
  json_object_seal (payload);
  extracted = symfonic_event_new (SYMFONIC_EVENT_KIND_MEMORY_EXTRACTED, payload, error);
  if (extracted == NULL)
    return FALSE;
  symfonic_stream_emit (stream, extracted);

  return TRUE;
}

/* An upstream MemoryExtractedEvent that comes first has its ops merged into
 * ours; once ours is out, it passes (the typed encoder refuses a second
 * one). */
static gboolean
symfonic_extraction_stage_close_answer (SymfonicFilterStage  *stage,
                                        SymfonicStream       *stream,
                                        SymfonicEvent        *closing,
                                        GError              **error)
{
  SymfonicExtractionStage *self = SYMFONIC_EXTRACTION_STAGE (stage);
  StreamState *state = symfonic_filter_stage_get_stream_state (stage, stream);

  if (closing != NULL && symfonic_event_get_kind (closing) == SYMFONIC_EVENT_KIND_MEMORY_EXTRACTED &&
      !state->closed)
    return publish_ops (self, stream, closing, error);

  if (!publish_ops (self, stream, NULL, error))
    return FALSE;

  return SYMFONIC_FILTER_STAGE_CLASS (symfonic_extraction_stage_parent_class)->close_answer (stage, stream,
                                                                                            closing, error);
}

/* Empty tags would match everywhere: refuse them at load. */
static gboolean
symfonic_extraction_stage_initable_init_impl (GInitable     *initable,
                                              GCancellable  *cancellable,
                                              GError       **error)
{
  SymfonicExtractionStage *self = SYMFONIC_EXTRACTION_STAGE (initable);

  if (self->open_tag == NULL || *self->open_tag == '\0')
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("%s: expected a tag, found an empty value"), "open-tag");
      return FALSE;
    }
  if (self->close_tag == NULL || *self->close_tag == '\0')
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("%s: expected a tag, found an empty value"), "close-tag");
      return FALSE;
    }
  if (self->spec == NULL)
    self->spec = symfonic_extraction_spec_new (self->open_tag, self->close_tag);

  return TRUE;
}

static void
symfonic_extraction_stage_initable_init (GInitableIface *iface)
{
  iface->init = symfonic_extraction_stage_initable_init_impl;
}

static void
symfonic_extraction_stage_finalize (GObject *object)
{
  SymfonicExtractionStage *self = (SymfonicExtractionStage *) object;

  g_free (self->open_tag);
  g_free (self->close_tag);
  g_clear_pointer (&self->spec, symfonic_extraction_spec_unref);

  G_OBJECT_CLASS (symfonic_extraction_stage_parent_class)->finalize (object);
}

static void
symfonic_extraction_stage_get_property (GObject    *object,
                                        guint       prop_id,
                                        GValue     *value,
                                        GParamSpec *pspec)
{
  SymfonicExtractionStage *self = SYMFONIC_EXTRACTION_STAGE (object);

  switch (prop_id)
    {
    case PROP_OPEN_TAG:
      g_value_set_string (value, self->open_tag);
      break;
    case PROP_CLOSE_TAG:
      g_value_set_string (value, self->close_tag);
      break;
    case PROP_MAX_BLOCK_BYTES:
      g_value_set_uint (value, self->max_block_bytes);
      break;
    case PROP_BLOCKS_DROPPED:
      g_value_set_uint64 (value, __atomic_load_n (&self->blocks_dropped, __ATOMIC_RELAXED));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_extraction_stage_set_property (GObject      *object,
                                        guint         prop_id,
                                        const GValue *value,
                                        GParamSpec   *pspec)
{
  SymfonicExtractionStage *self = SYMFONIC_EXTRACTION_STAGE (object);

  switch (prop_id)
    {
    case PROP_OPEN_TAG:
      g_free (self->open_tag);
      self->open_tag = g_value_dup_string (value);
      break;
    case PROP_CLOSE_TAG:
      g_free (self->close_tag);
      self->close_tag = g_value_dup_string (value);
      break;
    case PROP_MAX_BLOCK_BYTES:
      self->max_block_bytes = g_value_get_uint (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_extraction_stage_class_init (SymfonicExtractionStageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  SymfonicFilterStageClass *filter_stage_class = SYMFONIC_FILTER_STAGE_CLASS (klass);
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS;

  object_class->finalize = symfonic_extraction_stage_finalize;
  object_class->get_property = symfonic_extraction_stage_get_property;
  object_class->set_property = symfonic_extraction_stage_set_property;
  filter_stage_class->create_filter = symfonic_extraction_stage_create_filter;
  filter_stage_class->after_filter = symfonic_extraction_stage_after_filter;
  filter_stage_class->close_answer = symfonic_extraction_stage_close_answer;
  symfonic_filter_stage_class_set_stream_state_size (filter_stage_class, sizeof (StreamState));

  properties[PROP_OPEN_TAG] =
    g_param_spec_string ("open-tag", "Open tag",
                         "The tag that opens a memory-extraction block",
                         DEFAULT_OPEN_TAG, flags);
  properties[PROP_CLOSE_TAG] =
    g_param_spec_string ("close-tag", "Close tag",
                         "The tag that closes a memory-extraction block",
                         DEFAULT_CLOSE_TAG, flags);
  properties[PROP_MAX_BLOCK_BYTES] =
    g_param_spec_uint ("max-block-bytes", "Maximum block bytes",
                       "The most bytes of content a block may have; a larger block is dropped",
                       1, MAX_MAX_BLOCK_BYTES, DEFAULT_MAX_BLOCK_BYTES, flags);
  properties[PROP_BLOCKS_DROPPED] =
    g_param_spec_uint64 ("blocks-dropped", "Blocks dropped",
                         "Blocks dropped so far: malformed, too large or unterminated, on all streams",
                         0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  symfonic_stage_type_declare_order (G_TYPE_FROM_CLASS (klass), (const char * const[]) { "extraction", NULL },
                                     NULL, NULL, NULL);
}

static void
symfonic_extraction_stage_init (SymfonicExtractionStage *self)
{
  self->open_tag = g_strdup (DEFAULT_OPEN_TAG);
  self->close_tag = g_strdup (DEFAULT_CLOSE_TAG);
  self->max_block_bytes = DEFAULT_MAX_BLOCK_BYTES;
}
