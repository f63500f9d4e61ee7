/* symfonic-error-map-stage.c: the one mapper from failures to error frames
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <glib/gi18n-lib.h>

#include "symfonic-error-map-stage.h"

/* Which status, detail, code and headers a failure gets is data (the table
 * file), so changing what clients see is a reviewed edit of that file, and
 * the rules that keep it safe (a 5xx never echoes its message, a foreign
 * error is an opaque 500 with no code) live here once for every entry
 * point. The table is read and checked at load and never changes after:
 * every worker thread maps with the same stage, without locks. */

typedef enum {
  DETAIL_MESSAGE,
  DETAIL_OPAQUE,
  DETAIL_OVERRIDE,
} DetailMode;

static const char * const detail_mode_names[] = {
  [DETAIL_MESSAGE] = "message",
  [DETAIL_OPAQUE] = "opaque",
  [DETAIL_OVERRIDE] = "override",
};

/* One [code:NAME] group. */
typedef struct
{
  guint       active;
  /* 0: the row has no target status */
  guint       target;
  DetailMode  detail_mode;
  char       *detail_override;
  /* name, value, name, value, ..., NULL */
  GStrv       headers;
} StatusRule;

/* One [policy:NAME] group: what differs between entry points. */
typedef struct
{
  char     *name;
  guint     fallback_status;
  char     *opaque_detail;
  gboolean  collapse_server_errors;
} ErrorPolicy;

struct _SymfonicErrorMapStage
{
  GObject       parent_instance;

  GFile        *table;
  gboolean      use_target_statuses;

  gboolean      loaded;
  /* what the first g_initable_init() said, which every later call says */
  SymfonicInitOnce init;
  /* indexed by SymfonicError code, n_codes long: the published code name
   * (borrowed, NULL for codes without one) and the row (NULL: none) */
  guint         n_codes;
  const char  **code_names;
  StatusRule  **rules;
  /* owns the ErrorPolicy structs */
  GPtrArray    *policies;
  /* indexed by SymfonicRouteKind, n_kinds long, borrowed from policies */
  guint         n_kinds;
  ErrorPolicy **by_kind;
};

static void symfonic_error_map_stage_initable_init (GInitableIface *iface);
static void symfonic_error_map_stage_stage_init (SymfonicStageInterface *iface);
static void symfonic_error_map_stage_error_mapper_init (SymfonicErrorMapperInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SymfonicErrorMapStage, symfonic_error_map_stage, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, symfonic_error_map_stage_initable_init)
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_STAGE, symfonic_error_map_stage_stage_init)
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_ERROR_MAPPER,
                                                      symfonic_error_map_stage_error_mapper_init))

enum {
  PROP_0,
  PROP_TABLE,
  PROP_USE_TARGET_STATUSES,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* Only for a route kind value outside the enum: the load checked that
 * every kind has a policy. */
static const ErrorPolicy builtin_policy = {
  (char *) "builtin", 500, (char *) SYMFONIC_OPAQUE_DETAIL, FALSE,
};

static void
status_rule_free (StatusRule *rule)
{
  g_free (rule->detail_override);
  g_strfreev (rule->headers);
  g_free (rule);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (StatusRule, status_rule_free)

static void
error_policy_free (ErrorPolicy *policy)
{
  g_free (policy->name);
  g_free (policy->opaque_detail);
  g_free (policy);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ErrorPolicy, error_policy_free)

/* ---- mapping ---------------------------------------------------------- */

static const ErrorPolicy *
policy_for (SymfonicErrorMapStage *self,
            SymfonicRoute         *route)
{
  guint kind = (guint) symfonic_route_get_kind (route);

  if (kind >= self->n_kinds || self->by_kind[kind] == NULL)
    return &builtin_policy;

  return self->by_kind[kind];
}

static SymfonicErrorFrame *
symfonic_error_map_stage_map (SymfonicErrorMapper *mapper,
                              const GError        *error,
                              SymfonicRoute       *route)
{
  SymfonicErrorMapStage *self = SYMFONIC_ERROR_MAP_STAGE (mapper);
  const ErrorPolicy *policy;
  const char *message = error->message != NULL ? error->message : "";
  const StatusRule *rule = NULL;
  const char *code = NULL;
  const char *detail;
  SymfonicErrorFrame *frame;
  guint status;

  /* created without g_initable_init(): no table, so the library's own
   * mapping rather than a guess */
  if (!self->loaded)
    return symfonic_error_frame_new_for_error (error);

  policy = policy_for (self, route);

  /* A failure from a library underneath (GIO, libsoup, json-glib) was not
   * written for clients: its text may name hosts and paths, and it has no
   * code a client could branch on. */
  if (error->domain != SYMFONIC_ERROR)
    return symfonic_error_frame_new (500, policy->opaque_detail, NULL);

  if (error->code >= 0 && (guint) error->code < self->n_codes)
    {
      code = self->code_names[error->code];
      rule = self->rules[error->code];
    }

  if (rule == NULL)
    {
      /* No row says how to show it. A fault of the gateway's or of an
       * upstream (a 5xx by the built-in mapping) keeps its text for the
       * log even where the policy's fallback is a 4xx. */
      g_autoptr(SymfonicErrorFrame) builtin = symfonic_error_frame_new_for_error (error);

      status = policy->fallback_status;
      detail = status >= 500 || symfonic_error_frame_get_status (builtin) >= 500 ? policy->opaque_detail : message;
      return symfonic_error_frame_new (status, detail, code);
    }

  status = rule->active;
  if (self->use_target_statuses && rule->target != 0)
    status = rule->target;

  switch (rule->detail_mode)
    {
    case DETAIL_OVERRIDE:
      detail = rule->detail_override;
      break;
    case DETAIL_OPAQUE:
      detail = policy->opaque_detail;
      break;
    case DETAIL_MESSAGE:
    default:
      /* the same row can be a 4xx or a 5xx depending on the switch, and
       * a 5xx's real message belongs in the log, not on the socket */
      detail = status >= 500 && !policy->collapse_server_errors ? policy->opaque_detail : message;
      break;
    }

  /* The shipped /resume behaviour (seed 002, EMAP-3): a server-side status
   * becomes the entry point's fallback and a message row's text is echoed.
   * An opaque row stays opaque: its errors (the upstream's) carry text
   * meant for the log, which a client must not read on any entry point. */
  if (status >= 500 && policy->collapse_server_errors)
    return symfonic_error_frame_new (policy->fallback_status, detail, code);

  frame = symfonic_error_frame_new (status, detail, code);
  for (guint i = 0; rule->headers[i] != NULL; i += 2)
    symfonic_error_frame_set_header (frame, rule->headers[i], rule->headers[i + 1]);

  return frame;
}

static void
symfonic_error_map_stage_error_mapper_init (SymfonicErrorMapperInterface *iface)
{
  iface->map = symfonic_error_map_stage_map;
}

/* Every hook keeps its default: the stage maps errors and does nothing to
 * the stream itself. */
static void
symfonic_error_map_stage_stage_init (SymfonicStageInterface *iface)
{
}

/* ---- loading the table ------------------------------------------------ */

/* Every problem of the table is recorded in it and loading goes on, so
 * that one load lists them all (symfonic_config_file_check_errors()). */

/* The value of @key, or %NULL with no problem when the key is absent. */
static gboolean
get_string (SymfonicConfigFile  *table,
            const char          *group,
            const char          *key,
            char               **out)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *text = NULL;

  *out = NULL;
  if (!g_key_file_has_key (symfonic_config_file_get_key_file (table), group, key, NULL))
    return TRUE;

  text = g_key_file_get_string (symfonic_config_file_get_key_file (table), group, key, &local_error);
  if (local_error != NULL)
    return symfonic_config_file_add_error (table, group, key, _("expected a value, found text it cannot read: %s"),
                                           local_error->message);

  *out = g_steal_pointer (&text);
  return TRUE;
}

static gboolean
get_status (SymfonicConfigFile *table,
            const char         *group,
            const char         *key,
            gboolean            required,
            guint              *out)
{
  g_autofree char *text = NULL;
  guint64 status;

  if (!get_string (table, group, key, &text))
    return FALSE;
  if (text == NULL)
    {
      if (required)
        return symfonic_config_file_add_error (table, group, NULL,
                                               _("expected a key “%s”, an HTTP error status, found none"), key);
      return TRUE;
    }

  g_strstrip (text);
  if (!g_ascii_string_to_unsigned (text, 10, 400, 599, &status, NULL))
    return symfonic_config_file_add_error (table, group, key,
                                           _("expected an HTTP error status, a whole number from 400 to 599, "
                                             "found “%s”"), text);

  *out = (guint) status;
  return TRUE;
}

/* Records every key of @group not in @known. */
static gboolean
check_keys (SymfonicConfigFile *table,
            const char         *group,
            const char * const *known)
{
  g_auto(GStrv) keys = g_key_file_get_keys (symfonic_config_file_get_key_file (table), group, NULL, NULL);
  g_autofree char *list = g_strjoinv (", ", (char **) known);
  gboolean ok = TRUE;

  for (guint i = 0; keys != NULL && keys[i] != NULL; i++)
    {
      if (!g_strv_contains (known, keys[i]))
        ok = symfonic_config_file_add_error (table, group, keys[i], _("expected one of %s, found an unknown key"),
                                             list);
    }

  return ok;
}

static gboolean
is_token_char (char c)
{
  return g_ascii_isalnum (c) || (c != '\0' && strchr ("!#$%&'*+-.^_`|~", c) != NULL);
}

/* "Name: value": a name of RFC 9110 token characters and a value without
 * control characters, which could split a response header. */
static gboolean
parse_header (const char  *line,
              char       **name,
              char       **value)
{
  const char *colon = strchr (line, ':');
  g_autofree char *n = NULL;
  g_autofree char *v = NULL;

  if (colon == NULL)
    return FALSE;

  n = g_strstrip (g_strndup (line, colon - line));
  v = g_strstrip (g_strdup (colon + 1));
  if (*n == '\0' || *v == '\0')
    return FALSE;
  for (const char *p = n; *p != '\0'; p++)
    {
      if (!is_token_char (*p))
        return FALSE;
    }
  for (const char *p = v; *p != '\0'; p++)
    {
      if ((guchar) *p < 0x20 && *p != '\t')
        return FALSE;
      if ((guchar) *p == 0x7f)
        return FALSE;
    }

  *name = g_steal_pointer (&n);
  *value = g_steal_pointer (&v);
  return TRUE;
}

static gboolean
get_headers (SymfonicConfigFile  *table,
             const char          *group,
             GStrv               *out)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) local_error = NULL;
  g_auto(GStrv) lines = NULL;
  gboolean ok = TRUE;

  if (g_key_file_has_key (symfonic_config_file_get_key_file (table), group, "headers", NULL))
    {
      lines = g_key_file_get_string_list (symfonic_config_file_get_key_file (table), group, "headers", NULL, &local_error);
      if (local_error != NULL)
        return symfonic_config_file_add_error (table, group, "headers",
                                               _("expected a list a;b;c, found text it cannot read: %s"),
                                               local_error->message);
    }

  for (guint i = 0; lines != NULL && lines[i] != NULL; i++)
    {
      g_autofree char *name = NULL;
      g_autofree char *value = NULL;
      gboolean twice = FALSE;

      if (!parse_header (lines[i], &name, &value))
        {
          g_autofree char *shown = g_strescape (lines[i], NULL);

          ok = symfonic_config_file_add_error (table, group, "headers",
                                               _("expected header lines “Name: value”, found “%s”"), shown);
          continue;
        }
      for (guint j = 0; j < names->len && !twice; j++)
        twice = g_ascii_strcasecmp (g_ptr_array_index (names, j), name) == 0;
      if (twice)
        {
          ok = symfonic_config_file_add_error (table, group, "headers",
                                               _("expected each header once, found “%s” twice"), name);
          continue;
        }

      g_strv_builder_add (builder, name);
      g_strv_builder_add (builder, value);
      g_ptr_array_add (names, g_steal_pointer (&name));
    }

  *out = g_strv_builder_end (builder);
  return ok;
}

static StatusRule *
load_rule (SymfonicConfigFile *table,
           const char         *group)
{
  static const char * const known[] = {
    "status", "target-status", "detail", "detail-override", "headers", NULL
  };
  g_autoptr(StatusRule) rule = g_new0 (StatusRule, 1);
  g_autofree char *mode = NULL;
  gboolean found = FALSE;
  gboolean ok;

  ok = check_keys (table, group, known);

  if (!get_status (table, group, "status", TRUE, &rule->active))
    ok = FALSE;
  if (!get_status (table, group, "target-status", FALSE, &rule->target))
    ok = FALSE;

  if (!get_string (table, group, "detail", &mode))
    ok = FALSE;
  rule->detail_mode = DETAIL_MESSAGE;
  if (mode != NULL)
    {
      g_strstrip (mode);
      for (guint i = 0; i < G_N_ELEMENTS (detail_mode_names); i++)
        {
          if (g_str_equal (mode, detail_mode_names[i]))
            {
              rule->detail_mode = (DetailMode) i;
              found = TRUE;
            }
        }
      if (!found)
        ok = symfonic_config_file_add_error (table, group, "detail",
                                             _("expected a detail mode, one of message, opaque, override, "
                                               "found “%s”"), mode);
    }

  if (!get_string (table, group, "detail-override", &rule->detail_override))
    ok = FALSE;
  if (found && rule->detail_mode == DETAIL_OVERRIDE &&
      (rule->detail_override == NULL || *rule->detail_override == '\0'))
    ok = symfonic_config_file_add_error (table, group, "detail-override",
                                         _("expected the text detail=override shows, found none"));
  /* a text that is never shown is a mistake waiting to be believed */
  if (rule->detail_mode != DETAIL_OVERRIDE && rule->detail_override != NULL)
    ok = symfonic_config_file_add_error (table, group, "detail-override",
                                         _("expected detail=override with a detail-override, found detail=%s"),
                                         detail_mode_names[rule->detail_mode]);

  if (!get_headers (table, group, &rule->headers))
    ok = FALSE;

  return ok ? g_steal_pointer (&rule) : NULL;
}

static gboolean
load_policy (SymfonicErrorMapStage  *self,
             SymfonicConfigFile     *table,
             const char             *group,
             const char             *name)
{
  static const char * const known[] = {
    "kinds", "fallback-status", "opaque-detail", "collapse-server-errors", NULL
  };
  g_autoptr(ErrorPolicy) owned = g_new0 (ErrorPolicy, 1);
  ErrorPolicy *policy = owned;
  g_autoptr(GEnumClass) kinds_class = g_type_class_ref (SYMFONIC_TYPE_ROUTE_KIND);
  g_autoptr(GError) local_error = NULL;
  g_auto(GStrv) kinds = NULL;
  g_autofree char *collapse = NULL;
  gboolean fallback_ok;
  gboolean ok;

  ok = check_keys (table, group, known);

  policy->name = g_strdup (name);
  policy->fallback_status = 500;
  fallback_ok = get_status (table, group, "fallback-status", FALSE, &policy->fallback_status);
  ok &= fallback_ok;

  if (!get_string (table, group, "opaque-detail", &policy->opaque_detail))
    ok = FALSE;
  else if (policy->opaque_detail == NULL)
    policy->opaque_detail = g_strdup (SYMFONIC_OPAQUE_DETAIL);
  else if (*policy->opaque_detail == '\0')
    ok = symfonic_config_file_add_error (table, group, "opaque-detail",
                                         _("expected the text a 5xx shows, found an empty value"));

  if (!get_string (table, group, "collapse-server-errors", &collapse))
    ok = FALSE;
  else if (collapse != NULL)
    {
      policy->collapse_server_errors = g_key_file_get_boolean (symfonic_config_file_get_key_file (table), group,
                                                               "collapse-server-errors", &local_error);
      if (local_error != NULL)
        ok = symfonic_config_file_add_error (table, group, "collapse-server-errors",
                                             _("expected true or false, found “%s”"), collapse);
    }
  /* collapsing a 5xx into another 5xx would only hide which fault it was */
  if (fallback_ok && policy->collapse_server_errors && policy->fallback_status >= 500)
    ok = symfonic_config_file_add_error (table, group, "fallback-status",
                                         _("expected a fallback-status below 500 with collapse-server-errors, "
                                           "found %u"), policy->fallback_status);

  if (!g_key_file_has_key (symfonic_config_file_get_key_file (table), group, "kinds", NULL))
    return symfonic_config_file_add_error (table, group, NULL,
                                           _("expected a key “kinds”, the route kinds the policy is for, "
                                             "found none"));
  g_clear_error (&local_error);
  kinds = g_key_file_get_string_list (symfonic_config_file_get_key_file (table), group, "kinds", NULL, &local_error);
  if (local_error != NULL)
    return symfonic_config_file_add_error (table, group, "kinds",
                                           _("expected a list a;b;c, found text it cannot read: %s"),
                                           local_error->message);

  /* owned by the stage from here on, so the kinds below never point at a
   * freed policy, even when a later kind fails */
  g_ptr_array_add (self->policies, g_steal_pointer (&owned));

  for (guint i = 0; kinds[i] != NULL; i++)
    {
      const char *nick = g_strstrip (kinds[i]);
      GEnumValue *kind;

      if (*nick == '\0')
        continue;
      kind = g_enum_get_value_by_nick (kinds_class, nick);
      if (kind == NULL || (guint) kind->value >= self->n_kinds)
        ok = symfonic_config_file_add_error (table, group, "kinds",
                                             _("expected route kinds, among typed, chunks, chat, resume, openai, "
                                               "anthropic, runs, found “%s”"), nick);
      else if (self->by_kind[kind->value] != NULL)
        ok = symfonic_config_file_add_error (table, group, "kinds",
                                             _("expected each route kind in one policy, found “%s” already in "
                                               "[policy:%s]"), nick, self->by_kind[kind->value]->name);
      else
        self->by_kind[kind->value] = policy;
    }

  return ok;
}

static gboolean
load_code (SymfonicErrorMapStage  *self,
           SymfonicConfigFile     *table,
           const char             *group,
           const char             *name)
{
  g_autoptr(GString) known = NULL;

  for (guint code = 0; code < self->n_codes; code++)
    {
      if (self->code_names[code] != NULL && g_str_equal (self->code_names[code], name))
        {
          self->rules[code] = load_rule (table, group);
          return self->rules[code] != NULL;
        }
    }

  known = g_string_new (NULL);
  for (guint code = 0; code < self->n_codes; code++)
    {
      if (self->code_names[code] != NULL)
        g_string_append_printf (known, "%s%s", known->len > 0 ? ", " : "", self->code_names[code]);
    }

  return symfonic_config_file_add_error (table, group, NULL,
                                         _("expected a published error code (%s), found “%s”"), known->str, name);
}

static gboolean
load (GInitable     *initable,
      GCancellable  *cancellable,
      GError       **error)
{
  SymfonicErrorMapStage *self = SYMFONIC_ERROR_MAP_STAGE (initable);
  g_autoptr(GEnumClass) codes_class = NULL;
  g_autoptr(GEnumClass) kinds_class = NULL;
  g_autoptr(SymfonicConfigFile) table = NULL;
  g_autoptr(GError) local_error = NULL;
  g_auto(GStrv) groups = NULL;
  gboolean policies_ok = TRUE;

  if (self->table == NULL)
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                           _("expected “table”, an error table file (the gateway ships error-map.ini), "
                             "found none"));
      return FALSE;
    }

  table = symfonic_config_file_new_for_file_full (self->table, SYMFONIC_CONFIG_FILE_COLLECT_ERRORS, &local_error);
  if (table == NULL)
    {
      g_propagate_prefixed_error (error, g_steal_pointer (&local_error), "table: ");
      return FALSE;
    }

  /* sized from the enums, so a code or kind added to the library later has
   * a slot (and maps by the fallback until the table names it) */
  codes_class = g_type_class_ref (SYMFONIC_TYPE_ERROR);
  kinds_class = g_type_class_ref (SYMFONIC_TYPE_ROUTE_KIND);
  self->n_codes = (guint) codes_class->maximum + 1;
  self->code_names = g_new0 (const char *, self->n_codes);
  self->rules = g_new0 (StatusRule *, self->n_codes);
  for (guint i = 0; i < codes_class->n_values; i++)
    {
      int code = codes_class->values[i].value;

      if (code >= 0)
        self->code_names[code] = symfonic_error_code_name ((SymfonicError) code);
    }
  self->n_kinds = (guint) kinds_class->maximum + 1;
  self->by_kind = g_new0 (ErrorPolicy *, self->n_kinds);

  groups = g_key_file_get_groups (symfonic_config_file_get_key_file (table), NULL);
  for (guint i = 0; groups[i] != NULL; i++)
    {
      const char *group = groups[i];
      const char *colon = strchr (group, ':');
      g_autofree char *prefix = colon != NULL ? g_strndup (group, colon - group) : g_strdup (group);
      const char *name = colon != NULL ? colon + 1 : "";

      if (!g_str_equal (prefix, "code") && !g_str_equal (prefix, "policy"))
        symfonic_config_file_add_error (table, group, NULL,
                                        _("expected a group [code:NAME] or [policy:NAME], found an unknown one"));
      else if (*name == '\0')
        symfonic_config_file_add_error (table, group, NULL,
                                        _("expected a NAME after the colon, found none"));
      else if (g_str_equal (prefix, "code"))
        load_code (self, table, group, name);
      else if (!load_policy (self, table, group, name))
        policies_ok = FALSE;
    }

  /* without this, an entry point would silently map by rules nobody wrote
   * down, such as /resume losing its collapse; a policy with a problem
   * may be the one that lists it */
  for (guint kind = 0; kind < self->n_kinds && policies_ok; kind++)
    {
      GEnumValue *value = g_enum_get_value (kinds_class, (int) kind);

      if (value != NULL && self->by_kind[kind] == NULL)
        symfonic_config_file_add_error (table, NULL, NULL,
                                        _("expected a [policy:NAME] for every route kind, found none that lists "
                                          "“%s” in its kinds"), value->value_nick);
    }

  if (!symfonic_config_file_check_errors (table, error))
    return FALSE;

  self->loaded = TRUE;
  return TRUE;
}

static gboolean
symfonic_error_map_stage_initable_init_impl (GInitable     *initable,
                                             GCancellable  *cancellable,
                                             GError       **error)
{
  /* loading again would fill the rows a failed load left half made, and
   * could read a table edited since */
  return symfonic_init_once (&SYMFONIC_ERROR_MAP_STAGE (initable)->init, load, initable, cancellable, error);
}

static void
symfonic_error_map_stage_initable_init (GInitableIface *iface)
{
  iface->init = symfonic_error_map_stage_initable_init_impl;
}

/* ---- GObject ---------------------------------------------------------- */

static void
symfonic_error_map_stage_finalize (GObject *object)
{
  SymfonicErrorMapStage *self = (SymfonicErrorMapStage *) object;

  g_clear_object (&self->table);
  for (guint i = 0; i < self->n_codes; i++)
    g_clear_pointer (&self->rules[i], status_rule_free);
  g_free (self->rules);
  g_free (self->code_names);
  g_free (self->by_kind);
  g_ptr_array_unref (self->policies);
  symfonic_init_once_clear (&self->init);

  G_OBJECT_CLASS (symfonic_error_map_stage_parent_class)->finalize (object);
}

static void
symfonic_error_map_stage_get_property (GObject    *object,
                                       guint       prop_id,
                                       GValue     *value,
                                       GParamSpec *pspec)
{
  SymfonicErrorMapStage *self = SYMFONIC_ERROR_MAP_STAGE (object);

  switch (prop_id)
    {
    case PROP_TABLE:
      g_value_set_object (value, self->table);
      break;
    case PROP_USE_TARGET_STATUSES:
      g_value_set_boolean (value, self->use_target_statuses);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_error_map_stage_set_property (GObject      *object,
                                       guint         prop_id,
                                       const GValue *value,
                                       GParamSpec   *pspec)
{
  SymfonicErrorMapStage *self = SYMFONIC_ERROR_MAP_STAGE (object);

  switch (prop_id)
    {
    case PROP_TABLE:
      g_set_object (&self->table, g_value_get_object (value));
      break;
    case PROP_USE_TARGET_STATUSES:
      self->use_target_statuses = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_error_map_stage_class_init (SymfonicErrorMapStageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = symfonic_error_map_stage_finalize;
  object_class->get_property = symfonic_error_map_stage_get_property;
  object_class->set_property = symfonic_error_map_stage_set_property;

  /* construct-only, like the table they select from: the stage is shared
   * by every worker thread and never changes after load */
  properties[PROP_TABLE] =
    g_param_spec_object ("table", "Table",
                         "Error table file: [code:NAME] rows and [policy:NAME] entry-point policies "
                         "(the gateway ships error-map.ini)",
                         G_TYPE_FILE,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_USE_TARGET_STATUSES] =
    g_param_spec_boolean ("use-target-statuses", "Use target statuses",
                          "Rows with a target-status use it instead of their active status "
                          "(conflict 409, upstream unavailable 503, upstream timeout 504): "
                          "a major behaviour change for clients",
                          FALSE,
                          G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
symfonic_error_map_stage_init (SymfonicErrorMapStage *self)
{
  self->policies = g_ptr_array_new_with_free_func ((GDestroyNotify) error_policy_free);
}
