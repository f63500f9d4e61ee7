/* symfonic-gjs-plugin.c: runs `.js` script plugins, ES modules, in one
 * embedded gjs context on the thread of the default main context
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>
#include <gjs/gjs.h>

#include <symfonic.h>

/* gjs answers only on the thread that created its context: from any other
 * it logs a critical and returns NULL without an error, which would lose
 * a stream's events silently. The context is made on the first loading
 * thread, which takes the default main context for good, so that the
 * hops of JavaScript stages (whose main context the loader declares to be
 * the default one) run there and nowhere else. Every host loads its
 * pipelines on that thread and runs the default main context while it
 * serves.
 *
 * A gjs program that loads pipelines has its context already, and a
 * thread holds one at most: its scripts then run in the program's own
 * context, among the program's own globals, which the loader leaves as
 * they are. Only a context of the loader's own gets the prelude. */
static GjsContext *gjs;
static GThread *gjs_thread;

/* Run once in a context of the loader's own, before any script: nothing
 * but script plugins ever runs there.
 *
 * gjs turns an exception in a hook into a GError that carries the message
 * alone, which is all the engine logs. The hooks of stage classes are
 * wrapped, before gjs hooks them up, so that an exception that is not a
 * GLib.Error (a bug rather than a refusal or a failure the stage meant)
 * has its stack logged too, as a line about the stream the hook was given
 * (once per class and hook every interval: a broken stage fails every
 * request), and so are the hooks a Symfonic.FilterStage subclass adds. The wrapper takes the most arguments a stage hook has
 * rather than a rest array, so a call allocates nothing.
 *
 * GObject.registerClass is a program's own in a gjs program, which may
 * register classes of its own at any time: there the scripts' hooks stay
 * as written, and such an exception is logged by its message only. */
static const char prelude_source[] =
  "(function () {\n"
  "  const { GLib, GObject, Symfonic } = imports.gi;\n"
  "  const registerClass = GObject.registerClass;\n"
  "  const hooks = ['admit', 'admit_async', 'admit_finish', 'get_admission_phase', 'begin', 'process',\n"
  "                 'finish', 'close'].map(hook => `vfunc_${hook}`);\n"
  "  const filterHooks = ['create_filter', 'before_filter', 'after_filter', 'close_answer']\n"
  "    .map(hook => `vfunc_${hook}`);\n"
  "  GObject.registerClass = function (...args) {\n"
  "    const klass = args[args.length - 1];\n"
  "    const implemented = (args.length > 1 ? args[0].Implements : klass[GObject.interfaces]) ?? [];\n"
  "    const filterStage = klass.prototype instanceof Symfonic.FilterStage;\n"
  "    if (implemented.includes(Symfonic.Stage) || filterStage) {\n"
  "      for (const name of filterStage ? [...hooks, ...filterHooks] : hooks) {\n"
  "        const hook = Object.getOwnPropertyDescriptor(klass.prototype, name)?.value;\n"
  "        if (typeof hook !== 'function')\n"
  "          continue;\n"
  "        klass.prototype[name] = function (a, b, c) {\n"
  "          try {\n"
  "            return hook.call(this, a, b, c);\n"
  "          } catch (e) {\n"
  "            if (!(e instanceof GLib.Error)) {\n"
  "              const stream = [a, b, c].find(arg => arg instanceof Symfonic.Stream) ?? null;\n"
  "              Symfonic.log_stream_message('symfonic-gjs', GLib.LogLevelFlags.LEVEL_WARNING, stream, klass.name,\n"
  "                `${klass.name}.${name} threw`, `${klass.name}.${name}: ${e}\\n${e?.stack ?? ''}`.trimEnd());\n"
  "            }\n"
  "            throw e;\n"
  "          }\n"
  "        };\n"
  "      }\n"
  "    }\n"
  "    return registerClass.apply(this, args);\n"
  "  };\n"
  "})();\n";

static gboolean
ensure_context (GError **error)
{
  static char *failure;
  g_autoptr(GError) local_error = NULL;

  if (gjs_thread != NULL && g_thread_self () != gjs_thread)
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN,
                           _("JavaScript plugins must be loaded on the thread that loaded the first one"));
      return FALSE;
    }
  if (gjs_thread != NULL)
    {
      if (failure != NULL)
        g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN, failure);
      return failure == NULL;
    }

  if (!g_main_context_acquire (g_main_context_default ()))
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN,
                           _("JavaScript plugins must be loaded on the thread that runs the default main "
                             "context, and another thread owns it"));
      return FALSE;
    }

  gjs_thread = g_thread_self ();
  gjs = gjs_context_get_current ();
  if (gjs != NULL)
    {
      g_object_ref (gjs);
      return TRUE;
    }

  gjs = gjs_context_new ();
  if (!gjs_context_eval (gjs, prelude_source, -1, "<symfonic-loader>", NULL, &local_error))
    {
      failure = g_strdup_printf (_("Cannot prepare gjs for JavaScript plugins: %s"), local_error->message);
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN, failure);
      return FALSE;
    }

  return TRUE;
}

/* Imports one script, by the URI it is called with, and runs the default
 * main context until the import settled (a module that awaits at its top
 * level settles on a later iteration). Its value, which gjs_context_eval()
 * hands back, is 0 once the import succeeded, 1 + the line of the script
 * where it broke once it failed: a syntax error's own line (its message
 * comes from parsing the script), or the innermost frame of the script in
 * the exception's stack, which goes to the log. Everything it keeps is
 * its own, so a gjs program's globals are left as they were. */
static const char import_source[] =
  "(function (uri) {\n"
  "  const context = imports.gi.GLib.MainContext.default();\n"
  "  const load = { settled: false, line: -1 };\n"
  "  const lineOf = e => {\n"
  "    for (const frame of String(e?.stack ?? '').split('\\n')) {\n"
  "      const where = frame.slice(frame.lastIndexOf('@') + 1);\n"
  "      if (where.startsWith(uri + ':'))\n"
  "        return parseInt(where.slice(uri.length + 1));\n"
  "    }\n"
  "    return 0;\n"
  "  };\n"
  "  import(uri).then(() => { load.settled = true; }, e => {\n"
  "    if (e instanceof SyntaxError && e.fileName === uri) {\n"
  "      load.line = e.lineNumber;\n"
  "    } else {\n"
  "      printerr(`${uri}: ${e}\\n${e?.stack ?? ''}`);\n"
  "      load.line = lineOf(e);\n"
  "    }\n"
  "    load.settled = true;\n"
  "  });\n"
  "  while (!load.settled)\n"
  "    context.iteration(true);\n"
  "  return load.line + 1;\n"
  "})";

/* Runs the import of @uri to its end; FALSE with @error if the loader
 * itself failed, otherwise @outcome as import_source says. @uri needs no
 * quoting in JavaScript. */
static gboolean
run_import (const char  *uri,
            int         *outcome,
            GError     **error)
{
  g_autofree char *call = g_strconcat (import_source, "('", uri, "');\n", NULL);

  return gjs_context_eval (gjs, call, -1, "<symfonic-loader>", outcome, error);
}

/* The types a script registers are JavaScript's: its stages run on the
 * default main context, the only one gjs runs code on. A source's hooks
 * would run on the workers, where gjs answers nothing: the script's load
 * fails instead, where it registers one. */
static gboolean
adopt_type (GType        type,
            const char  *name,
            gpointer     user_data,
            GError     **error)
{
  if (g_type_is_a (type, SYMFONIC_TYPE_SOURCE))
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN,
                   _("%s: a source cannot be written in JavaScript: it would run on the workers"), name);
      return FALSE;
    }
  if (g_type_is_a (type, SYMFONIC_TYPE_STAGE))
    symfonic_stage_type_set_main_context (type, g_main_context_default ());

  return TRUE;
}

static gboolean
load_script (const char  *filename,
             gpointer     user_data,
             GError     **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GError) syntax_error = NULL;
  g_autofree char *escaped = NULL;
  g_autofree char *uri = NULL;
  gboolean parsed;
  int outcome = 0;

  if (!ensure_context (error))
    return FALSE;

  /* every character but letters, digits, "-._~/" escaped, so that the
   * URI can stand in a JavaScript string as it is */
  escaped = g_uri_escape_string (filename, "/", FALSE);
  uri = g_strconcat ("file://", escaped, NULL);

  /* parsing alone says what is wrong with a script that does not parse;
   * the import then says where */
  parsed = gjs_context_register_module (gjs, uri, uri, &syntax_error);

  if (!run_import (uri, &outcome, &local_error))
    g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN, _("Cannot load %s: %s"),
                 filename, local_error->message);
  else if (outcome == 0)
    return TRUE;
  else if (!parsed)
    {
      const char *text = strstr (syntax_error->message, "': ");

      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN, _("Cannot load %s:%d: %s"),
                   filename, outcome - 1, text != NULL ? text + 3 : syntax_error->message);
    }
  else
    g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN,
                 _("Cannot load %s:%d: the module threw an exception (the stack is above)"),
                 filename, outcome - 1);

  return FALSE;
}

static gboolean
symfonic_gjs_plugin_init (SymfonicPlugin  *plugin,
                          GError         **error)
{
  symfonic_plugin_add_script_loader (plugin, ".js", "JavaScript", load_script, adopt_type, NULL);

  return TRUE;
}

SYMFONIC_PLUGIN_DEFINE ("gjs", SYMFONIC_VERSION, "LGPL-2.1-or-later", "Runs .js script plugins", symfonic_gjs_plugin_init);
