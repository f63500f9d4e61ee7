/* symfonic-inspect.c: lists plugins, types and their properties
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <inttypes.h>
#include <string.h>
#include <glib/gi18n.h>

#include <glib/gstdio.h>
#include <symfonic.h>

#include "symfonic-conformance.h"
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

/* --- a transcript ----------------------------------------------------------- */

/* the cuts a transcript is tried with, besides the one it came with */
static const char * const inspect_chunkings[] = { "whole", "bytes=1", "seed=1", "seed=2", "seed=3,max=5" };
/* a recording slower than this is not played at its own pace as well */
#define PACED_LIMIT_US (30 * G_USEC_PER_SEC)

static char *
format_duration (gint64 us)
{
  if (us >= 10 * G_USEC_PER_SEC)
    return g_strdup_printf ("%.1f s", us / (double) G_USEC_PER_SEC);

  return g_strdup_printf ("%.1f ms", us / 1000.0);
}

static void
print_summary (SymfonicRecording *recording,
               const char        *finish_reason)
{
  g_autoptr(GEnumClass) ends = g_type_class_ref (SYMFONIC_TYPE_RECORDING_END);
  g_autoptr(GEnumClass) transports = g_type_class_ref (SYMFONIC_TYPE_RECORDING_TRANSPORT);
  g_autofree char *duration = format_duration (symfonic_recording_get_duration_us (recording));
  g_autofree char *head = format_duration (symfonic_recording_get_head_us (recording));
  gint64 input_tokens;
  gint64 output_tokens;

  g_print (_("Source:        %s (%s)\n"), symfonic_recording_get_source_type (recording),
           symfonic_recording_get_wire_format (recording) != NULL ? symfonic_recording_get_wire_format (recording) : "?");
  if (symfonic_recording_get_model (recording) != NULL)
    g_print (_("Model:         %s\n"), symfonic_recording_get_model (recording));
  if (symfonic_recording_get_run_id (recording) != NULL)
    g_print (_("Run:           %s\n"), symfonic_recording_get_run_id (recording));
  if (symfonic_recording_get_request_target (recording) != NULL)
    g_print (_("Request:       POST %s\n"), symfonic_recording_get_request_target (recording));
  if (symfonic_recording_get_status (recording) != 0)
    g_print (_("Status:        %u (head after %s)\n"), symfonic_recording_get_status (recording), head);
  else
    g_print (_("Status:        no response head\n"));
  g_print (_("Chunks:        %u reads, %zu bytes, over %s\n"),
           symfonic_recording_get_n_chunks (recording),
           g_bytes_get_size (symfonic_recording_get_body (recording)), duration);
  g_print (_("Ended:         %s (transport: %s)%s%s%s\n"),
           g_enum_get_value (ends, symfonic_recording_get_end (recording))->value_nick,
           g_enum_get_value (transports, symfonic_recording_get_transport (recording))->value_nick,
           symfonic_recording_get_error_code (recording) != NULL ? ", " : "",
           symfonic_recording_get_error_code (recording) != NULL ? symfonic_recording_get_error_code (recording) : "",
           symfonic_recording_get_truncated (recording) ? _(", truncated") : "");
  if (symfonic_conformance_recorded_usage (recording, &input_tokens, &output_tokens))
    g_print (_("Usage:         %" PRId64 " input, %" PRId64 " output tokens\n"),
             input_tokens, output_tokens);
  else
    g_print (_("Usage:         none reported\n"));
  g_print (_("Finish reason: %s\n"), finish_reason != NULL ? finish_reason : _("none (the stream did not succeed)"));
  g_print (_("Redactions:    %u secrets masked when recorded\n"), symfonic_recording_get_redactions (recording));
}

/* Prints what the transcript at @path holds and plays it through every
 * route kind, as recorded and cut other ways, checking what each client
 * gets against the contract. 1 names every rule broken. */
static int
inspect_transcript (SymfonicRegistry *registry,
                    const char       *path)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *contents = NULL;
  g_autofree char *folder = NULL;
  g_autofree char *copy = NULL;
  g_autoptr(SymfonicConformance) conformance = NULL;
  g_autoptr(GPtrArray) results = NULL;
  SymfonicConformanceResult *references[SYMFONIC_CONFORMANCE_N_ROUTES] = { NULL, };
  SymfonicRecording *recording;
  gsize length;
  guint broken = 0;
  guint runs = 0;

  if (!g_file_get_contents (path, &contents, &length, &error))
    {
      g_printerr ("symfonic-inspect: %s\n", error->message);
      return 2;
    }
  /* a broken recording is named as the operator named it */
  if (symfonic_recording_data_is_recording (contents, length))
    {
      g_autoptr(SymfonicRecording) checked = symfonic_recording_new_from_data (contents, length, &error);

      if (checked == NULL)
        {
          g_printerr ("symfonic-inspect: %s: %s\n", path, error->message);
          return 1;
        }
    }
  folder = g_dir_make_tmp ("symfonic-inspect-XXXXXX", &error);
  if (folder == NULL)
    {
      g_printerr ("symfonic-inspect: %s\n", error->message);
      return 2;
    }
  copy = g_build_filename (folder, "transcript.jsonl", NULL);
  if (!g_file_set_contents_full (copy, contents, length, G_FILE_SET_CONTENTS_NONE, 0600, &error) ||
      (conformance = symfonic_conformance_new (registry, folder, &error)) == NULL)
    {
      g_printerr ("symfonic-inspect: %s: %s\n", path, error->message);
      g_unlink (copy);
      g_rmdir (folder);
      return 1;
    }

  recording = symfonic_conformance_get_recording (conformance, "transcript");
  for (SymfonicConformanceRoute route = 0; route < SYMFONIC_CONFORMANCE_PACED; route++)
    {
      symfonic_conformance_add (conformance, "transcript", route, NULL);
      for (guint i = 0; recording != NULL && i < G_N_ELEMENTS (inspect_chunkings); i++)
        symfonic_conformance_add (conformance, "transcript", route, inspect_chunkings[i]);
    }
  if (recording != NULL && symfonic_recording_get_duration_us (recording) <= PACED_LIMIT_US)
    symfonic_conformance_add (conformance, "transcript", SYMFONIC_CONFORMANCE_PACED, NULL);
  results = symfonic_conformance_run (conformance);

  for (guint i = 0; i < results->len; i++)
    {
      SymfonicConformanceResult *result = g_ptr_array_index (results, i);

      if (g_str_equal (result->chunking, "recorded") && references[result->route] == NULL)
        references[result->route] = result;
    }
  for (guint i = 0; i < results->len; i++)
    {
      SymfonicConformanceResult *result = g_ptr_array_index (results, i);
      SymfonicConformanceResult *reference = references[result->route];

      symfonic_conformance_expect (conformance, result,
                                   reference != result && result->route != SYMFONIC_CONFORMANCE_PACED ? reference : NULL);
      runs++;
    }

  g_print ("%s\n", path);
  if (recording != NULL)
    print_summary (recording, references[SYMFONIC_CONFORMANCE_TYPED] != NULL
                              ? references[SYMFONIC_CONFORMANCE_TYPED]->finish_reason : NULL);
  else
    g_print (_("Typed events, played by the replay source (no recorded bytes to cut)\n"));

  g_print (_("\nContract, over %u runs (every route kind; as recorded, in one read, a byte per read, at random):\n"),
           runs);
  for (guint i = 0; i < results->len; i++)
    {
      SymfonicConformanceResult *result = g_ptr_array_index (results, i);

      for (guint v = 0; v < result->violations->len; v++)
        {
          g_print ("  %s, %s: %s\n", symfonic_conformance_route_name (result->route), result->chunking,
                   (const char *) g_ptr_array_index (result->violations, v));
          broken++;
        }
    }
  if (broken == 0)
    g_print (_("  kept: one terminal, the terminal text the deltas', no citation tag or memory block, the typed\n"
               "  order, each route's shape, the usage carried to the end, heartbeats between frames\n"));

  g_unlink (copy);
  g_rmdir (folder);

  return broken == 0 ? 0 : 1;
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *transcript = NULL;
  SymfonicRegistry *registry;
  const GOptionEntry entries[] = {
    { "transcript", 't', 0, G_OPTION_ARG_FILENAME, &transcript,
      N_("Prints a transcript’s summary and checks it against the stream contract on every route "
         "(exit status 1 names each rule broken)"), N_("FILE") },
    G_OPTION_ENTRY_NULL
  };

  /* what --transcript connects to is its own gateway on 127.0.0.1: no
   * proxy, and no GSettings read to look one up, which a container may
   * lack */
  g_setenv ("GIO_USE_PROXY_RESOLVER", "dummy", FALSE);
  symfonic_locale_init ();

  context = g_option_context_new (_("[TYPE]"));
  g_option_context_set_summary (context, _("Lists the plugins and the stage, source and store types they\n"
                                           "register; with TYPE, prints each of its properties, and with “gateway”\n"
                                           "or “route”, each key of that group of a pipeline file. With\n"
                                           "--transcript FILE, summarises a transcript or recording and checks it\n"
                                           "against the stream contract."));
  g_option_context_add_main_entries (context, entries, GETTEXT_PACKAGE);
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

  if (transcript != NULL)
    return inspect_transcript (registry, transcript);
  if (argc > 1)
    return inspect_type (registry, argv[1]);

  list_all (registry);
  return 0;
}
