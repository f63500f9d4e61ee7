/* email-redactor-stage.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "email-redactor-filter.h"
#include "email-redactor-stage.h"

/* An example of a third-party stage, built against the installed library
 * alone: it replaces every e-mail address in the answer's text deltas,
 * whatever the upstream's split, and lets every other event through. It
 * is the filter (email-redactor-filter.c) and the little a
 * SymfonicFilterStage leaves to a subclass: making that filter. The stage
 * object itself is shared by every stream and never changes after load.
 *
 * Two settings exist to show how a stage fails: `fail-marker` makes a
 * delta holding it end its stream with an error, and `refuse-tenant`
 * refuses a tenant's requests before the stream starts. */

#define DEFAULT_REPLACEMENT "[email]"

struct _ExampleEmailRedactorStage
{
  SymfonicFilterStage  parent_instance;

  char                *replacement;
  char                *fail_marker;
  char                *refuse_tenant;
  GRegex              *regex;
};

static void example_email_redactor_stage_stage_init (SymfonicStageInterface *iface);

/* Implementing SymfonicStage again keeps the base class's process and
 * finish hooks, and adds the admission ones. */
G_DEFINE_FINAL_TYPE_WITH_CODE (ExampleEmailRedactorStage, example_email_redactor_stage, SYMFONIC_TYPE_FILTER_STAGE,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_STAGE, example_email_redactor_stage_stage_init))

enum {
  PROP_0,
  PROP_REPLACEMENT,
  PROP_FAIL_MARKER,
  PROP_REFUSE_TENANT,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static SymfonicTextFilter *
example_email_redactor_stage_create_filter (SymfonicFilterStage *stage,
                                            SymfonicStream      *stream,
                                            SymfonicFilterUse    use)
{
  ExampleEmailRedactorStage *self = EXAMPLE_EMAIL_REDACTOR_STAGE (stage);

  return SYMFONIC_TEXT_FILTER (example_email_redactor_filter_new (self->regex, self->replacement));
}

static gboolean
example_email_redactor_stage_before_filter (SymfonicFilterStage  *stage,
                                            SymfonicStream       *stream,
                                            SymfonicEvent        *delta,
                                            GError              **error)
{
  ExampleEmailRedactorStage *self = EXAMPLE_EMAIL_REDACTOR_STAGE (stage);

  if (*self->fail_marker != '\0' && symfonic_event_get_kind (delta) == SYMFONIC_EVENT_KIND_TEXT_DELTA &&
      strstr (symfonic_event_get_text (delta, NULL), self->fail_marker) != NULL)
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_FAILED,
                           "A text delta holds the configured fail marker");
      return FALSE;
    }

  return TRUE;
}

static gboolean
example_email_redactor_stage_admit (SymfonicStage   *stage,
                                    SymfonicStream  *stream,
                                    GError         **error)
{
  ExampleEmailRedactorStage *self = EXAMPLE_EMAIL_REDACTOR_STAGE (stage);
  const char *tenant = symfonic_invocation_get_tenant_id (symfonic_stream_get_invocation (stream));

  if (*self->refuse_tenant != '\0' && g_strcmp0 (tenant, self->refuse_tenant) == 0)
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_FORBIDDEN,
                           "This tenant may not use this route");
      return FALSE;
    }

  return TRUE;
}

/* On the head, after an auth stage before it named the tenant: a refused
 * client never has its body read. */
static SymfonicAdmissionPhase
example_email_redactor_stage_get_admission_phase (SymfonicStage *stage)
{
  return SYMFONIC_ADMISSION_PHASE_HEAD;
}

static void
example_email_redactor_stage_stage_init (SymfonicStageInterface *iface)
{
  iface->admit = example_email_redactor_stage_admit;
  iface->get_admission_phase = example_email_redactor_stage_get_admission_phase;
}

static void
example_email_redactor_stage_finalize (GObject *object)
{
  ExampleEmailRedactorStage *self = EXAMPLE_EMAIL_REDACTOR_STAGE (object);

  g_free (self->replacement);
  g_free (self->fail_marker);
  g_free (self->refuse_tenant);
  g_regex_unref (self->regex);

  G_OBJECT_CLASS (example_email_redactor_stage_parent_class)->finalize (object);
}

static char **
string_field (ExampleEmailRedactorStage *self,
              guint                      prop_id)
{
  switch (prop_id)
    {
    case PROP_REPLACEMENT:
      return &self->replacement;
    case PROP_FAIL_MARKER:
      return &self->fail_marker;
    case PROP_REFUSE_TENANT:
      return &self->refuse_tenant;
    default:
      return NULL;
    }
}

static void
example_email_redactor_stage_get_property (GObject    *object,
                                           guint       prop_id,
                                           GValue     *value,
                                           GParamSpec *pspec)
{
  char **field = string_field (EXAMPLE_EMAIL_REDACTOR_STAGE (object), prop_id);

  if (field == NULL)
    {
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      return;
    }
  g_value_set_string (value, *field);
}

/* NULL reads as the default, so that every field is always a string. */
static void
example_email_redactor_stage_set_property (GObject      *object,
                                           guint         prop_id,
                                           const GValue *value,
                                           GParamSpec   *pspec)
{
  char **field = string_field (EXAMPLE_EMAIL_REDACTOR_STAGE (object), prop_id);
  const char *text = g_value_get_string (value);

  if (field == NULL)
    {
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      return;
    }
  g_free (*field);
  *field = g_strdup (text != NULL ? text : G_PARAM_SPEC_STRING (pspec)->default_value);
}

static void
example_email_redactor_stage_class_init (ExampleEmailRedactorStageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  SymfonicFilterStageClass *filter_stage_class = SYMFONIC_FILTER_STAGE_CLASS (klass);
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS;

  object_class->finalize = example_email_redactor_stage_finalize;
  object_class->get_property = example_email_redactor_stage_get_property;
  object_class->set_property = example_email_redactor_stage_set_property;
  filter_stage_class->create_filter = example_email_redactor_stage_create_filter;
  filter_stage_class->before_filter = example_email_redactor_stage_before_filter;

  properties[PROP_REPLACEMENT] =
    g_param_spec_string ("replacement", "Replacement",
                         "What every e-mail address in the answer is replaced with",
                         DEFAULT_REPLACEMENT, flags);
  properties[PROP_FAIL_MARKER] =
    g_param_spec_string ("fail-marker", "Fail marker",
                         "A text delta that holds it ends its stream with an error; empty for never",
                         "", flags);
  properties[PROP_REFUSE_TENANT] =
    g_param_spec_string ("refuse-tenant", "Refused tenant",
                         "Requests of this tenant are refused with 403 before the stream starts; "
                         "empty for none",
                         "", flags);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
example_email_redactor_stage_init (ExampleEmailRedactorStage *self)
{
  self->replacement = g_strdup (DEFAULT_REPLACEMENT);
  self->fail_marker = g_strdup ("");
  self->refuse_tenant = g_strdup ("");
  self->regex = example_email_redactor_filter_new_regex ();
}
