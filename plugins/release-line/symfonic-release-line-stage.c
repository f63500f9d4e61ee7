/* symfonic-release-line-stage.c: chooses a stream's release line
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "symfonic-release-line-stage.h"

/* Which stream contract a request gets is decided once, at admission,
 * before anything is projected: the route's line (the gateway's
 * `release-line`, by default the build's version), this stage's
 * `release-line` when set, or, during a migration and only when the
 * operator allows it, the line the client pins with a header.
 *
 * A line that does not parse is refused rather than read as "0": that
 * would silently put the request on the pre-11.0 contract, the wrong
 * answer nobody notices. */

#define PIN_HEADER "X-Symfonic-Release-Line"

struct _SymfonicReleaseLineStage
{
  GObject   parent_instance;

  char     *release_line;
  gboolean  allow_client_pin;
};

static void symfonic_release_line_stage_stage_init (SymfonicStageInterface *iface);
static void symfonic_release_line_stage_initable_init (GInitableIface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SymfonicReleaseLineStage, symfonic_release_line_stage, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_STAGE, symfonic_release_line_stage_stage_init)
                               G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, symfonic_release_line_stage_initable_init))

enum {
  PROP_0,
  PROP_RELEASE_LINE,
  PROP_ALLOW_CLIENT_PIN,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* The numeric line of @version, or NULL when it has none. */
static char *
parse_line (const char *version)
{
  g_autofree char *line = symfonic_numeric_release_line (version);

  if (strcmp (line, "0") == 0)
    return NULL;

  return g_steal_pointer (&line);
}

static gboolean
symfonic_release_line_stage_admit (SymfonicStage   *stage,
                                   SymfonicStream  *stream,
                                   GError         **error)
{
  SymfonicReleaseLineStage *self = SYMFONIC_RELEASE_LINE_STAGE (stage);
  SymfonicInvocation *invocation = symfonic_stream_get_invocation (stream);
  const char *pin = NULL;

  if (self->allow_client_pin)
    pin = symfonic_invocation_get_header (invocation, PIN_HEADER);

  if (pin != NULL)
    {
      g_autofree char *line = parse_line (pin);

      if (line == NULL)
        {
          g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST,
                       "%s: “%s” is not a release line", PIN_HEADER, pin);
          return FALSE;
        }
      symfonic_stream_set_release_line (stream, line);
    }
  else if (self->release_line != NULL)
    {
      symfonic_stream_set_release_line (stream, self->release_line);
    }

  return TRUE;
}

static void
symfonic_release_line_stage_stage_init (SymfonicStageInterface *iface)
{
  iface->admit = symfonic_release_line_stage_admit;
}

static gboolean
symfonic_release_line_stage_initable_init_impl (GInitable     *initable,
                                                GCancellable  *cancellable,
                                                GError       **error)
{
  SymfonicReleaseLineStage *self = SYMFONIC_RELEASE_LINE_STAGE (initable);
  g_autofree char *line = NULL;

  if (self->release_line == NULL)
    return TRUE;

  line = parse_line (self->release_line);
  if (line == NULL)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("%s: expected a release line, such as 11.0.0, found “%s”"), "release-line", self->release_line);
      return FALSE;
    }

  return TRUE;
}

static void
symfonic_release_line_stage_initable_init (GInitableIface *iface)
{
  iface->init = symfonic_release_line_stage_initable_init_impl;
}

static void
symfonic_release_line_stage_finalize (GObject *object)
{
  SymfonicReleaseLineStage *self = (SymfonicReleaseLineStage *) object;

  g_free (self->release_line);

  G_OBJECT_CLASS (symfonic_release_line_stage_parent_class)->finalize (object);
}

static void
symfonic_release_line_stage_get_property (GObject    *object,
                                          guint       prop_id,
                                          GValue     *value,
                                          GParamSpec *pspec)
{
  SymfonicReleaseLineStage *self = SYMFONIC_RELEASE_LINE_STAGE (object);

  switch (prop_id)
    {
    case PROP_RELEASE_LINE:
      g_value_set_string (value, self->release_line);
      break;
    case PROP_ALLOW_CLIENT_PIN:
      g_value_set_boolean (value, self->allow_client_pin);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_release_line_stage_set_property (GObject      *object,
                                          guint         prop_id,
                                          const GValue *value,
                                          GParamSpec   *pspec)
{
  SymfonicReleaseLineStage *self = SYMFONIC_RELEASE_LINE_STAGE (object);

  switch (prop_id)
    {
    case PROP_RELEASE_LINE:
      g_free (self->release_line);
      self->release_line = g_value_dup_string (value);
      break;
    case PROP_ALLOW_CLIENT_PIN:
      self->allow_client_pin = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_release_line_stage_class_init (SymfonicReleaseLineStageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS;

  object_class->finalize = symfonic_release_line_stage_finalize;
  object_class->get_property = symfonic_release_line_stage_get_property;
  object_class->set_property = symfonic_release_line_stage_set_property;

  properties[PROP_RELEASE_LINE] =
    g_param_spec_string ("release-line", "Release line",
                         "The release line this route's streams publish; unset keeps the gateway's",
                         NULL, flags);
  properties[PROP_ALLOW_CLIENT_PIN] =
    g_param_spec_boolean ("allow-client-pin", "Allow client pin",
                          "Whether a client may pin a release line with the " PIN_HEADER " header, for a migration",
                          FALSE, flags);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
symfonic_release_line_stage_init (SymfonicReleaseLineStage *self)
{
}
