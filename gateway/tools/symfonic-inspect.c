/* symfonic-inspect.c: lists plugins, types and their properties
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <glib/gi18n.h>

#include <symfonic.h>

#include "symfonic-locale-private.h"

static const char *
kind_of (GType type)
{
  if (g_type_is_a (type, SYMFONIC_TYPE_SOURCE))
    return "source";
  if (symfonic_store_type_plays_a_role (type))
    return "store";

  return "stage";
}

/* The roles a store type can be named in. */
static char *
roles_of (GType type)
{
  GString *roles = g_string_new (NULL);

  if (g_type_is_a (type, SYMFONIC_TYPE_METER_STORE))
    g_string_append (roles, _("meter (a metering stage’s store), "));
  if (g_type_is_a (type, SYMFONIC_TYPE_STREAM_CAP_STORE))
    g_string_append (roles, _("stream caps (a route’s cap-store), "));
  if (g_type_is_a (type, SYMFONIC_TYPE_RUN_STORE))
    g_string_append (roles, _("resumable runs ([gateway] run-store), "));
  if (roles->len > 2)
    g_string_truncate (roles, roles->len - 2);

  return g_string_free (roles, FALSE);
}

/* The groups of a pipeline file whose keys are no type's properties. */
static const struct {
  const char *name;
  const char *header;
} groups[] = {
  { "gateway", "[gateway]" },
  { "route", "[route:NAME]" },
};

/* Prints the names of @pspecs after @column columns, wrapped to keep
 * within 80 columns. */
static void
print_names (GParamSpec **pspecs,
             guint        n_pspecs,
             guint        column)
{
  guint at = column;

  for (guint i = 0; i < n_pspecs; i++)
    {
      g_autofree char *token = g_strconcat (g_param_spec_get_name (pspecs[i]), i + 1 < n_pspecs ? "," : "", NULL);
      gsize width = strlen (token);

      if (i > 0 && at + 1 + width > 80)
        {
          g_print ("\n%*s", (int) column, "");
          at = column;
        }
      else if (i > 0)
        {
          g_print (" ");
          at++;
        }
      g_print ("%s", token);
      at += width;
    }
  g_print ("\n");
}

static void
list_all (SymfonicRegistry *registry)
{
  g_autoptr(GPtrArray) plugins = symfonic_registry_list_plugins (registry);
  g_auto(GStrv) types = symfonic_registry_list_types (registry);

  g_print (_("Plugins:\n"));
  for (guint i = 0; i < plugins->len; i++)
    {
      SymfonicPlugin *plugin = g_ptr_array_index (plugins, i);

      const char *license = symfonic_plugin_get_license (plugin);

      g_print ("  %-16s %-10s %s\n    %s%s%s\n", symfonic_plugin_get_name (plugin),
               symfonic_plugin_get_version (plugin), symfonic_plugin_get_description (plugin),
               license != NULL ? license : "", license != NULL ? ", " : "",
               symfonic_plugin_get_filename (plugin));
    }

  g_print (_("\nTypes:\n"));
  for (guint i = 0; types[i] != NULL; i++)
    {
      GType type = symfonic_registry_lookup (registry, types[i]);
      SymfonicPlugin *plugin = symfonic_registry_get_type_plugin (registry, types[i]);

      g_print ("  %-16s %-7s %-28s %s\n", types[i], kind_of (type), g_type_name (type),
               plugin != NULL ? symfonic_plugin_get_name (plugin) : "");
    }
  for (const char * const *builtin = symfonic_registry_list_builtin_types (); *builtin != NULL; builtin++)
    {
      GType type = symfonic_registry_lookup (registry, *builtin);

      g_print ("  %-16s %-7s %-28s %s\n", *builtin, kind_of (type), g_type_name (type), _("(built in)"));
    }

  g_print (_("\nGroups (“symfonic-inspect gateway” or “route” describes their keys):\n"));
  for (guint i = 0; i < G_N_ELEMENTS (groups); i++)
    {
      g_autofree GParamSpec **keys = NULL;
      guint n_keys;

      keys = symfonic_pipeline_list_keys (groups[i].name, &n_keys);
      g_print ("  %-16s", groups[i].header);
      print_names (keys, n_keys, 2 + 16);
    }
}

static char *
describe_type (GParamSpec *pspec)
{
  GType type = G_PARAM_SPEC_VALUE_TYPE (pspec);

  if (type == G_TYPE_STRV)
    return g_strdup (_("string list (a;b;c)"));
  if (type == G_TYPE_FILE && symfonic_param_spec_is_folder (pspec))
    return g_strdup (_("path of a folder (relative to the pipeline file)"));
  if (type == G_TYPE_FILE)
    return g_strdup (_("path (relative to the pipeline file)"));
  if (g_type_is_a (type, SYMFONIC_TYPE_SOURCE))
    return g_strdup (_("the NAME of a [source:NAME]"));
  if (G_TYPE_IS_ENUM (type))
    return g_strdup_printf (_("enum %s"), g_type_name (type));
  if (G_TYPE_IS_FLAGS (type))
    return g_strdup_printf (_("flags %s"), g_type_name (type));
  if (symfonic_store_type_plays_a_role (type))
    return g_strdup_printf (_("the NAME of a [store:NAME], or a store type name (%s)"), g_type_name (type));

  return g_strdup (g_type_name (type));
}

static char *
describe_range (GParamSpec *pspec)
{
  GType type = G_PARAM_SPEC_VALUE_TYPE (pspec);

  if (G_IS_PARAM_SPEC_INT (pspec))
    return g_strdup_printf ("%d .. %d", G_PARAM_SPEC_INT (pspec)->minimum, G_PARAM_SPEC_INT (pspec)->maximum);
  if (G_IS_PARAM_SPEC_UINT (pspec))
    return g_strdup_printf ("%u .. %u", G_PARAM_SPEC_UINT (pspec)->minimum, G_PARAM_SPEC_UINT (pspec)->maximum);
  if (G_IS_PARAM_SPEC_INT64 (pspec))
    return g_strdup_printf ("%" G_GINT64_FORMAT " .. %" G_GINT64_FORMAT,
                            G_PARAM_SPEC_INT64 (pspec)->minimum, G_PARAM_SPEC_INT64 (pspec)->maximum);
  if (G_IS_PARAM_SPEC_UINT64 (pspec))
    return g_strdup_printf ("%" G_GUINT64_FORMAT " .. %" G_GUINT64_FORMAT,
                            G_PARAM_SPEC_UINT64 (pspec)->minimum, G_PARAM_SPEC_UINT64 (pspec)->maximum);
  if (G_IS_PARAM_SPEC_DOUBLE (pspec))
    return g_strdup_printf ("%g .. %g", G_PARAM_SPEC_DOUBLE (pspec)->minimum, G_PARAM_SPEC_DOUBLE (pspec)->maximum);
  if (G_TYPE_IS_ENUM (type))
    {
      g_autoptr(GEnumClass) klass = g_type_class_ref (type);
      GString *nicks = g_string_new (NULL);

      for (guint i = 0; i < klass->n_values; i++)
        g_string_append_printf (nicks, "%s%s", i > 0 ? " | " : "", klass->values[i].value_nick);
      return g_string_free (nicks, FALSE);
    }

  return NULL;
}

/* @instance, when given, shows the defaults its type gives it as it is
 * made, which its class's specs do not hold. */
static void
print_properties (GObject     *instance,
                  GParamSpec **pspecs,
                  guint        n)
{
  for (guint i = 0; i < n; i++)
    {
      GParamSpec *pspec = pspecs[i];
      g_autofree char *type_text = NULL;
      g_autofree char *range = NULL;
      g_autofree char *default_text = NULL;
      g_auto(GValue) instance_value = G_VALUE_INIT;
      const GValue *default_value;

      if (pspec->owner_type == G_TYPE_OBJECT)
        continue;

      type_text = describe_type (pspec);
      range = describe_range (pspec);
      default_value = g_param_spec_get_default_value (pspec);
      if (instance != NULL && (pspec->flags & G_PARAM_READABLE))
        {
          g_value_init (&instance_value, G_PARAM_SPEC_VALUE_TYPE (pspec));
          g_object_get_property (instance, g_param_spec_get_name (pspec), &instance_value);
          default_value = &instance_value;
        }
      if (G_VALUE_HOLDS_OBJECT (default_value) || G_VALUE_HOLDS_BOXED (default_value) ||
          (G_VALUE_HOLDS_STRING (default_value) && g_value_get_string (default_value) == NULL))
        default_text = g_strdup (_("(none)"));
      else if (G_VALUE_HOLDS_ENUM (default_value))
        {
          /* as a pipeline file spells it */
          g_autoptr(GEnumClass) klass = g_type_class_ref (G_VALUE_TYPE (default_value));
          GEnumValue *nick = g_enum_get_value (klass, g_value_get_enum (default_value));

          default_text = g_strdup (nick != NULL ? nick->value_nick : "");
        }
      else
        default_text = g_strdup_value_contents (default_value);

      g_print ("  %-20s %s\n", g_param_spec_get_name (pspec), g_param_spec_get_blurb (pspec));
      g_print ("  %-20s %s: %s%s\n", "", _("type"), type_text,
               (pspec->flags & G_PARAM_WRITABLE) ? "" : _(" (read-only: a counter or state, not a setting)"));
      if (pspec->flags & G_PARAM_WRITABLE)
        g_print ("  %-20s %s: %s\n", "", _("default"), default_text);
      if (range != NULL)
        g_print ("  %-20s %s: %s\n", "", _("values"), range);
    }
}

/* A group of the pipeline file itself, if @name is one: its keys are
 * listed like a type's properties. */
static gboolean
inspect_group (const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (groups); i++)
    {
      g_autofree GParamSpec **keys = NULL;
      guint n_keys;

      if (!g_str_equal (name, groups[i].name))
        continue;

      keys = symfonic_pipeline_list_keys (groups[i].name, &n_keys);
      g_print (_("%s (pipeline file group)\n"), groups[i].header);
      g_print (_("\nKeys:\n"));
      print_properties (NULL, keys, n_keys);
      return TRUE;
    }

  return FALSE;
}

static int
inspect_type (SymfonicRegistry *registry,
              const char       *name)
{
  GType type = symfonic_registry_lookup (registry, name);
  g_autoptr(GTypeClass) klass = NULL;
  g_autofree GParamSpec **pspecs = NULL;
  g_autoptr(GObject) instance = NULL;
  SymfonicPlugin *plugin;
  guint n;

  if (type == G_TYPE_INVALID)
    {
      if (inspect_group (name))
        return 0;
      g_printerr (_("symfonic-inspect: no type named “%s”\n"), name);
      return 1;
    }

  plugin = symfonic_registry_get_type_plugin (registry, name);
  g_print ("%s (%s %s)\n", name, kind_of (type), g_type_name (type));
  if (plugin != NULL)
    g_print (_("  from plugin %s %s (%s): %s\n"), symfonic_plugin_get_name (plugin),
             symfonic_plugin_get_version (plugin) != NULL ? symfonic_plugin_get_version (plugin) : "",
             symfonic_plugin_get_license (plugin) != NULL ? symfonic_plugin_get_license (plugin) : "",
             symfonic_plugin_get_filename (plugin));
  else if (g_strv_contains (symfonic_registry_list_builtin_types (), name))
    g_print (_("  built into the library\n"));
  if (symfonic_store_type_plays_a_role (type))
    {
      g_autofree char *roles = roles_of (type);

      g_print (_("  a store for: %s ([store:NAME] type=%s)\n"), roles, name);
    }
  g_print (_("\nProperties:\n"));

  klass = g_type_class_ref (type);
  pspecs = g_object_class_list_properties (G_OBJECT_CLASS (klass), &n);
  /* The settings every HTTP source shares are declared once, by the base
   * class; a source type gives some its own defaults as its instances are
   * made, which only an instance shows. */
  if (g_type_is_a (type, SYMFONIC_TYPE_HTTP_SOURCE))
    instance = g_object_new (type, NULL);
  print_properties (instance, pspecs, n);

  return 0;
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  SymfonicRegistry *registry;

  symfonic_locale_init ();

  context = g_option_context_new (_("[TYPE]"));
  g_option_context_set_summary (context, _("Lists the plugins and the stage, source and store types they\n"
                                           "register; with TYPE, prints each of its properties, and with “gateway”\n"
                                           "or “route”, each key of that group of a pipeline file."));
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("symfonic-inspect: %s\n", error->message);
      return 2;
    }

  registry = symfonic_registry_get_default ();
  if (!symfonic_registry_scan (registry, &error))
    {
      g_printerr ("symfonic-inspect: %s\n", error->message);
      return 1;
    }

  if (argc > 1)
    return inspect_type (registry, argv[1]);

  list_all (registry);
  return 0;
}
