/* symfonic-citation-stage.c: removes citation tags from the answer
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "symfonic-citation-filter.h"
#include "symfonic-citation-stage.h"

/* The model cites the memories it used as `[semantic]`, `[episodic:n42]`
 * and so on, in its answer and in its thinking; clients must not see them.
 * The filter withholds what could still become a tag, and the base class
 * releases it when the answer closes. Being last, it also drops the
 * memory blocks that removing a tag forms. The stage object is shared by
 * every stream on every worker: its counters are added to and read
 * atomically. */

static const char * const default_kinds[] = { "semantic", "episodic", "procedural", NULL };
#define DEFAULT_OPEN_TAG "<memory_ops>"
#define DEFAULT_CLOSE_TAG "</memory_ops>"

struct _SymfonicCitationStage
{
  SymfonicFilterStage   parent_instance;

  GStrv                 kinds;
  char                 *open_tag;
  char                 *close_tag;
  /* made from the three above, which are construct-only, once they were
   * found valid */
  SymfonicCitationSpec *spec;

  guint64               tags_removed;
  guint64               blocks_dropped;
};

/* A stream's state beside its filter. */
typedef struct
{
  /* how much of the filter's counts was added to the stage's */
  guint64 removed_counted;
  guint64 dropped_counted;
} StreamState;

static void symfonic_citation_stage_initable_init (GInitableIface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SymfonicCitationStage, symfonic_citation_stage, SYMFONIC_TYPE_FILTER_STAGE,
                               G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, symfonic_citation_stage_initable_init))

enum {
  PROP_0,
  PROP_KINDS,
  PROP_OPEN_TAG,
  PROP_CLOSE_TAG,
  PROP_TAGS_REMOVED,
  PROP_BLOCKS_DROPPED,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static SymfonicTextFilter *
symfonic_citation_stage_create_filter (SymfonicFilterStage *stage,
                                       SymfonicStream      *stream,
                                       SymfonicFilterUse    use)
{
  SymfonicCitationStage *self = SYMFONIC_CITATION_STAGE (stage);

  /* a stage that was never initialised has nothing to share */
  if (self->spec == NULL)
    return SYMFONIC_TEXT_FILTER (symfonic_citation_filter_new ((const char * const *) self->kinds, self->open_tag,
                                                               self->close_tag));

  return SYMFONIC_TEXT_FILTER (symfonic_citation_filter_new_for_spec (self->spec));
}

/* After a delta the filter took, and when the answer closes. What the
 * terminal's filter removes is not counted: when deltas streamed, what
 * they held was counted here. */
static void
symfonic_citation_stage_after_filter (SymfonicFilterStage *stage,
                                      SymfonicStream      *stream,
                                      SymfonicTextFilter  *filter)
{
  SymfonicCitationStage *self = SYMFONIC_CITATION_STAGE (stage);
  StreamState *state = symfonic_filter_stage_get_stream_state (stage, stream);
  SymfonicCitationFilter *citation = SYMFONIC_CITATION_FILTER (filter);

  symfonic_filter_stage_add_count (&self->tags_removed, &state->removed_counted,
                                   symfonic_citation_filter_get_removed (citation));
  symfonic_filter_stage_add_count (&self->blocks_dropped, &state->dropped_counted,
                                   symfonic_citation_filter_get_blocks_dropped (citation));
}

/* A kind with brackets, a colon or blanks could never match the tag
 * grammar, and an empty one would match `[]`: refuse them at load. So is
 * a block tag whose start could be read as part of a citation tag. */
static gboolean
symfonic_citation_stage_initable_init_impl (GInitable     *initable,
                                            GCancellable  *cancellable,
                                            GError       **error)
{
  SymfonicCitationStage *self = SYMFONIC_CITATION_STAGE (initable);
  const struct {
    const char *key;
    const char *value;
  } block_tags[] = { { "open-tag", self->open_tag }, { "close-tag", self->close_tag } };

  for (guint i = 0; self->kinds[i] != NULL; i++)
    {
      const char *kind = self->kinds[i];

      if (*kind == '\0' || strpbrk (kind, "[]: \t\r\n") != NULL)
        {
          g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                       _("%s: expected citation kinds, words without “[”, “]”, “:” or a space, found “%s”"),
                       "kinds", kind);
          return FALSE;
        }
    }
  for (guint i = 0; i < G_N_ELEMENTS (block_tags); i++)
    {
      if (block_tags[i].value == NULL ||
          !symfonic_citation_filter_block_tag_is_valid (block_tags[i].value, (const char * const *) self->kinds))
        {
          g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                       _("%s: expected a tag that holds no “[” or space and starts with none of a letter, a digit, "
                         "“_.-:]” or a character of a kind, found “%s”"),
                       block_tags[i].key, block_tags[i].value != NULL ? block_tags[i].value : "");
          return FALSE;
        }
    }
  if (self->spec == NULL)
    self->spec = symfonic_citation_spec_new ((const char * const *) self->kinds, self->open_tag, self->close_tag);

  return TRUE;
}

static void
symfonic_citation_stage_initable_init (GInitableIface *iface)
{
  iface->init = symfonic_citation_stage_initable_init_impl;
}

static void
symfonic_citation_stage_finalize (GObject *object)
{
  SymfonicCitationStage *self = (SymfonicCitationStage *) object;

  g_strfreev (self->kinds);
  g_free (self->open_tag);
  g_free (self->close_tag);
  g_clear_pointer (&self->spec, symfonic_citation_spec_unref);

  G_OBJECT_CLASS (symfonic_citation_stage_parent_class)->finalize (object);
}

static void
symfonic_citation_stage_get_property (GObject    *object,
                                      guint       prop_id,
                                      GValue     *value,
                                      GParamSpec *pspec)
{
  SymfonicCitationStage *self = SYMFONIC_CITATION_STAGE (object);

  switch (prop_id)
    {
    case PROP_KINDS:
      g_value_set_boxed (value, self->kinds);
      break;
    case PROP_OPEN_TAG:
      g_value_set_string (value, self->open_tag);
      break;
    case PROP_CLOSE_TAG:
      g_value_set_string (value, self->close_tag);
      break;
    case PROP_TAGS_REMOVED:
      g_value_set_uint64 (value, __atomic_load_n (&self->tags_removed, __ATOMIC_RELAXED));
      break;
    case PROP_BLOCKS_DROPPED:
      g_value_set_uint64 (value, __atomic_load_n (&self->blocks_dropped, __ATOMIC_RELAXED));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_citation_stage_set_property (GObject      *object,
                                      guint         prop_id,
                                      const GValue *value,
                                      GParamSpec   *pspec)
{
  SymfonicCitationStage *self = SYMFONIC_CITATION_STAGE (object);
  const char * const *kinds;

  switch (prop_id)
    {
    case PROP_KINDS:
      /* NULL means the default; an empty list removes nothing */
      kinds = g_value_get_boxed (value);
      g_strfreev (self->kinds);
      self->kinds = g_strdupv ((char **) (kinds != NULL ? kinds : default_kinds));
      break;
    case PROP_OPEN_TAG:
      g_free (self->open_tag);
      self->open_tag = g_value_dup_string (value);
      break;
    case PROP_CLOSE_TAG:
      g_free (self->close_tag);
      self->close_tag = g_value_dup_string (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_citation_stage_class_init (SymfonicCitationStageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  SymfonicFilterStageClass *filter_stage_class = SYMFONIC_FILTER_STAGE_CLASS (klass);

  object_class->finalize = symfonic_citation_stage_finalize;
  object_class->get_property = symfonic_citation_stage_get_property;
  object_class->set_property = symfonic_citation_stage_set_property;
  filter_stage_class->create_filter = symfonic_citation_stage_create_filter;
  filter_stage_class->after_filter = symfonic_citation_stage_after_filter;
  symfonic_filter_stage_class_set_stream_state_size (filter_stage_class, sizeof (StreamState));

  properties[PROP_KINDS] =
    g_param_spec_boxed ("kinds", "Kinds",
                        "Citation tag words removed, in any ASCII case (default: semantic;episodic;procedural)",
                        G_TYPE_STRV,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_OPEN_TAG] =
    g_param_spec_string ("open-tag", "Open tag",
                         "The tag that opens a memory block; a block that tag removal forms is dropped",
                         DEFAULT_OPEN_TAG,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_CLOSE_TAG] =
    g_param_spec_string ("close-tag", "Close tag",
                         "The tag that closes a memory block",
                         DEFAULT_CLOSE_TAG,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_TAGS_REMOVED] =
    g_param_spec_uint64 ("tags-removed", "Tags removed",
                         "Citation tags removed so far, on all streams",
                         0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_BLOCKS_DROPPED] =
    g_param_spec_uint64 ("blocks-dropped", "Blocks dropped",
                         "Memory blocks dropped so far, on all streams, that reached this stage",
                         0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* It drops every memory block it meets, so that tag removal cannot form
   * one: an extraction stage after it would never see a block, and its ops
   * would be lost without a word. */
  symfonic_stage_type_declare_order (G_TYPE_FROM_CLASS (klass), NULL, NULL,
                                     (const char * const[]) { "extraction", NULL },
                                     _("drops the memory blocks it meets"));
}

static void
symfonic_citation_stage_init (SymfonicCitationStage *self)
{
  self->kinds = g_strdupv ((char **) default_kinds);
  self->open_tag = g_strdup (DEFAULT_OPEN_TAG);
  self->close_tag = g_strdup (DEFAULT_CLOSE_TAG);
}
