/* symfonic-python-plugin.c: runs `.py` script plugins in one Python
 * interpreter, on a thread of its own
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <glib/gi18n-lib.h>

#include <symfonic.h>

/* Every Python stage runs on the interpreter's thread: two threads taking
 * turns at the GIL cost far more than the hop. The thread holds the GIL
 * except while it waits for work, so that the events of a batch do not
 * take and drop it one by one; the interpreter starts with the first
 * script. A source's hooks are not hopped: they run on the stream's
 * worker, where the source must push its events, and PyGObject takes the
 * GIL there for each call, which this thread lets go of while it waits.
 *
 * In a Python program (a PyGObject host such as serve.py) the interpreter
 * is the program's: the thread joins it with a thread state of its own
 * rather than starting another, and it is never finalized here. Script
 * stages still run on this thread and not on the program's: the program's
 * main thread may be running anything (asyncio, a GLib loop on another
 * context, plain Python code), while this one is known to iterate the
 * context the stages declare, and a stage behaves alike under the gateway
 * and under a Python host. PyGObject lets go of the GIL around every call
 * into C, so the program's threads and this one take turns at it. */
typedef struct
{
  GMainContext *context;
  GMutex        lock;
  GCond         cond;
  gboolean      started;
  char         *start_error;
  PyObject     *load;
  /* the prelude's _add_path() and _describe() */
  PyObject     *add_path;
  PyObject     *describe;
  /* folders to import from that came before the interpreter could take
   * them; once it has, they go to it directly */
  GPtrArray    *pending_paths;
  gboolean      paths_taken;
  /* the thread, for the signal that interrupts a hook that overran */
  pthread_t     thread;
} Interpreter;

static Interpreter interpreter;

/* The helper's `_hook_failed (type_name, hook)`: words the error the
 * stream fails with, which must not repeat the exception: a 5xx frame
 * never echoes its cause, and the client does not need the script's
 * insides. (The helper logged the traceback, with the stream's fields.) */
static PyObject *
hook_failed (PyObject *module,
             PyObject *args)
{
  const char *type_name;
  const char *hook;
  g_autofree char *message = NULL;

  if (!PyArg_ParseTuple (args, "ss", &type_name, &hook))
    return NULL;

  message = g_strdup_printf ("%s failed in %s (the traceback is in the log)", type_name, hook);

  return PyUnicode_FromString (message);
}

static PyMethodDef hook_failed_def = {
  "_hook_failed", hook_failed, METH_VARARGS, NULL
};

/* The helper's `_hook_overdue ()`, from the signal's handler: whether the
 * hook it interrupted is the one that overran, not one that began since. */
static PyObject *
hook_overdue (PyObject *module,
              PyObject *args)
{
  return PyBool_FromLong (symfonic_stage_context_hook_overdue (interpreter.context));
}

static PyMethodDef hook_overdue_def = {
  "_hook_overdue", hook_overdue, METH_NOARGS, NULL
};

/* A hook that overran its route's hook-timeout holds this thread, and with
 * it every Python stage of every route: it is interrupted by a signal sent
 * to this thread alone. Its Python handler raises in the hook, through a
 * busy loop (at the next bytecode) and through time.sleep() (which the
 * signal cuts short) alike; Python runs signal handlers only on the thread
 * that started it, which is this one. The first real-time signal is used
 * by nothing else in the process. */
#define INTERRUPT_SIGNAL SIGRTMIN

static void
interrupt_hook (gpointer data)
{
  pthread_kill (interpreter.thread, INTERRUPT_SIGNAL);
}

/* What runs first, before anything is imported from the folders of
 * `[gateway] python-path`: how a failure names the interpreter and the
 * path it searched, and how a folder is added. A folder goes where an
 * activated virtualenv's own site-packages would, after the standard
 * library and before the interpreter's site-packages, and its .pth files
 * are read (site.addsitedir()). */
static const char prelude_source[] =
  "import site, sys\n"
  "def _describe():\n"
  "    return 'Python %s at %s with prefix %s, which searched %s' % (\n"
  "        sys.version.split()[0], sys.executable, sys.prefix, ', '.join(sys.path))\n"
  "def _add_path(folder):\n"
  "    if folder in sys.path:\n"
  "        return\n"
  "    before = list(sys.path)\n"
  "    site.addsitedir(folder)\n"
  "    added = [p for p in sys.path if p not in before]\n"
  "    for p in added:\n"
  "        sys.path.remove(p)\n"
  "    sites = set(site.getsitepackages())\n"
  "    at = next((i for i, p in enumerate(sys.path) if p in sites), len(sys.path))\n"
  "    sys.path[at:at] = added\n";

/* Runs one script as a module of its own; on failure, says where in the
 * script it broke and logs the traceback; a module it could not import
 * is named with the interpreter and the path searched.
 *
 * While a script runs, the hooks of every stage or source class it
 * defines are wrapped as the class is made, before PyGObject hooks them
 * up: an exception that is not a GLib.Error (a bug rather than a refusal
 * or a failure the stage meant) would otherwise reach C as a failure
 * without an error, and its traceback would be printed on its own. Such
 * an exception is logged with its traceback and the type's name, as a
 * line about the stream the hook was given (once per type and hook every
 * interval: a broken stage fails every request), and the hook fails with
 * an opaque error. A source's start has no error to
 * return: it ends the stream with the error instead, which would
 * otherwise never end. A stage's close has nothing left to fail. The
 * wrapper takes the hook's arguments as they are and, through `try`, costs
 * next to nothing while no exception is raised. The hooks a
 * Symfonic.FilterStage subclass adds are wrapped the same way; one whose
 * create_filter raised has made no filter, which fails the stream. (The
 * wrapper of FilterStage chains up to that of Symfonic.Stage, which comes
 * after it in a subclass's method order, so both kinds of hook are
 * wrapped.)
 *
 * PyGObject before 3.47 refuses None for a GError argument, nullable or
 * not, while leaving the argument out passes NULL: push_end(None), the
 * way a source ends a stream that completed, is made to do that. */
static const char helper_source[] =
  "import runpy, traceback\n"
  "import gi\n"
  "gi.require_version('Symfonic', '1.0')\n"
  "from gi.repository import GLib, Symfonic\n"
  "_scripts = []\n"
  "_loading = False\n"
  "class HookTimeout(BaseException):\n"
  "    pass\n"
  "def _interrupt_on(signum):\n"
  "    import signal\n"
  "    def interrupted(signum, frame):\n"
  "        if _hook_overdue():\n"
  "            raise HookTimeout('the hook ran longer than its route allows')\n"
  "    signal.signal(signum, interrupted)\n"
  "def _log(self, name, e, args):\n"
  "    text = ''.join(traceback.format_exception(type(e), e, e.__traceback__.tb_next)).rstrip()\n"
  "    type_name, hook = type(self).__gtype__.name, name[len('do_'):]\n"
  "    stream = next((a for a in args if isinstance(a, Symfonic.Stream)), None)\n"
  "    Symfonic.log_stream_message('symfonic-python', GLib.LogLevelFlags.LEVEL_WARNING, stream, type_name,\n"
  "                                '%s: %s raised' % (type_name, hook),\n"
  "                                '%s: the %s hook raised an exception:\\n%s' % (type_name, hook, text))\n"
  "    return _hook_failed(type_name, hook)\n"
  "def _failure(self, name, e, args):\n"
  "    return GLib.Error.new_literal(Symfonic.error_quark(), _log(self, name, e, args), Symfonic.Error.FAILED)\n"
  "def _throwing(name, hook):\n"
  "    def wrapper(self, *args):\n"
  "        try:\n"
  "            return hook(self, *args)\n"
  "        except GLib.Error:\n"
  "            raise\n"
  "        except BaseException as e:\n"
  "            raise _failure(self, name, e, args) from None\n"
  "    return wrapper\n"
  "def _closing(name, hook):\n"
  "    def wrapper(self, *args):\n"
  "        try:\n"
  "            hook(self, *args)\n"
  "        except BaseException as e:\n"
  "            _log(self, name, e, args)\n"
  "    return wrapper\n"
  "def _making(name, hook):\n"
  "    def wrapper(self, *args):\n"
  "        try:\n"
  "            return hook(self, *args)\n"
  "        except BaseException as e:\n"
  "            _log(self, name, e, args)\n"
  "            return None\n"
  "    return wrapper\n"
  "def _starting(name, hook):\n"
  "    def wrapper(self, stream, cancellable):\n"
  "        try:\n"
  "            hook(self, stream, cancellable)\n"
  "        except GLib.Error as e:\n"
  "            stream.push_end(e)\n"
  "        except BaseException as e:\n"
  "            stream.push_end(_failure(self, name, e, (stream,)))\n"
  "    return wrapper\n"
  "def _wrap_hooks(interface, wrappers):\n"
  "    def init_subclass(cls, **kwargs):\n"
  "        super(interface, cls).__init_subclass__(**kwargs)\n"
  "        if not _loading:\n"
  "            return\n"
  "        for name, wrap in wrappers.items():\n"
  "            hook = cls.__dict__.get(name)\n"
  "            if callable(hook):\n"
  "                setattr(cls, name, wrap(name, hook))\n"
  "    interface.__init_subclass__ = classmethod(init_subclass)\n"
  "_wrap_hooks(Symfonic.Stage, {'do_admit': _throwing, 'do_admit_finish': _throwing, 'do_begin': _throwing,\n"
  "                             'do_process': _throwing, 'do_finish': _throwing, 'do_close': _closing})\n"
  "_wrap_hooks(Symfonic.Source, {'do_admit': _throwing, 'do_start': _starting})\n"
  "_wrap_hooks(Symfonic.FilterStage, {'do_create_filter': _making, 'do_before_filter': _throwing,\n"
  "                                   'do_after_filter': _closing, 'do_close_answer': _throwing})\n"
  "if gi.version_info < (3, 47):\n"
  "    _push_end = Symfonic.Stream.push_end\n"
  "    def push_end(self, error=None):\n"
  "        if error is None:\n"
  "            _push_end(self)\n"
  "        else:\n"
  "            _push_end(self, error)\n"
  "    Symfonic.Stream.push_end = push_end\n"
  "def load(path):\n"
  "    global _loading\n"
  "    _loading = True\n"
  "    try:\n"
  "        _scripts.append(runpy.run_path(path, run_name='__symfonic_plugin__'))\n"
  "        return None\n"
  "    except SyntaxError as e:\n"
  "        return '%s:%d: %s: %s' % (path, e.lineno or 0, type(e).__name__, e.msg)\n"
  "    except BaseException as e:\n"
  "        traceback.print_exc()\n"
  "        line = 0\n"
  "        for frame in traceback.extract_tb(e.__traceback__):\n"
  "            if frame.filename == path:\n"
  "                line = frame.lineno\n"
  "        tried = ' (tried %s)' % _describe() if isinstance(e, ImportError) else ''\n"
  "        return '%s:%d: %s: %s%s' % (path, line, type(e).__name__, e, tried)\n"
  "    finally:\n"
  "        _loading = False\n";

/* Configures the interpreter this plugin was built against, whatever the
 * shell says: Python would otherwise take its prefix from the first
 * python3 on PATH (a pyenv build, an activated virtualenv, whose
 * pyvenv.cfg it reads) or from PYTHONHOME, and find another standard
 * library, or none, and no PyGObject. Isolated, it reads no PYTHON*
 * variable and no user site-packages either; a virtualenv's packages are
 * used when a pipeline names them (`[gateway] python-path`). */
static PyStatus
configure (PyConfig *config)
{
  PyStatus status;

  PyConfig_InitIsolatedConfig (config);
  /* the gateway owns SIGINT and SIGTERM */
  config->install_signal_handlers = 0;
  config->parse_argv = 0;
  status = PyConfig_SetBytesString (config, &config->home,
                                    g_str_equal (SYMFONIC_PYTHON_PREFIX, SYMFONIC_PYTHON_EXEC_PREFIX)
                                    ? SYMFONIC_PYTHON_PREFIX
                                    : SYMFONIC_PYTHON_PREFIX ":" SYMFONIC_PYTHON_EXEC_PREFIX);
  if (PyStatus_Exception (status))
    return status;
  status = PyConfig_SetBytesString (config, &config->program_name, SYMFONIC_PYTHON_EXECUTABLE);
  if (PyStatus_Exception (status))
    return status;
  return PyConfig_SetBytesString (config, &config->executable, SYMFONIC_PYTHON_EXECUTABLE);
}

/* `TypeName: message` of the exception being raised, which stays raised. */
static char *
describe_exception (void)
{
  PyObject *type;
  PyObject *value;
  PyObject *traceback;
  PyObject *text = NULL;
  char *description;

  PyErr_Fetch (&type, &value, &traceback);
  PyErr_NormalizeException (&type, &value, &traceback);
  if (value != NULL)
    text = PyObject_Str (value);
  description = g_strdup_printf ("%s: %s", type != NULL ? ((PyTypeObject *) type)->tp_name : "?",
                                 text != NULL ? PyUnicode_AsUTF8 (text) : "");
  if (text == NULL)
    PyErr_Clear ();
  Py_XDECREF (text);
  PyErr_Restore (type, value, traceback);

  return description;
}

/* What _describe() says: the interpreter and the path it searched. */
static char *
describe_interpreter (void)
{
  PyObject *result = interpreter.describe != NULL ? PyObject_CallNoArgs (interpreter.describe) : NULL;
  char *description;

  if (result == NULL)
    {
      PyErr_Clear ();
      return g_strdup_printf ("Python %s at %s with prefix %s", PY_VERSION, SYMFONIC_PYTHON_EXECUTABLE,
                              SYMFONIC_PYTHON_PREFIX);
    }
  description = g_strdup (PyUnicode_AsUTF8 (result));
  Py_DECREF (result);

  return description;
}

/* On the interpreter's thread, with the GIL. */
static void
add_path_now (const char *folder)
{
  PyObject *result = PyObject_CallFunction (interpreter.add_path, "s", folder);

  if (result == NULL)
    {
      g_warning ("Cannot add %s to the Python path:", folder);
      PyErr_Print ();
    }
  Py_XDECREF (result);
}

/* Runs @source in @globals; on failure says why, naming the
 * interpreter, with the traceback printed. */
static char *
run_helper (const char *source,
            PyObject   *globals,
            const char *what)
{
  PyObject *result = PyRun_String (source, Py_file_input, globals, globals);
  g_autofree char *exception = NULL;
  g_autofree char *description = NULL;

  if (result != NULL)
    {
      Py_DECREF (result);
      return NULL;
    }

  exception = describe_exception ();
  PyErr_Print ();
  description = describe_interpreter ();
  return g_strdup_printf (_("Cannot %s: %s (tried %s; the traceback is above)"), what, exception, description);
}

static PyObject *
take_function (PyObject   *globals,
               const char *name)
{
  PyObject *function = PyDict_GetItemString (globals, name);

  Py_XINCREF (function);
  return function;
}

/* Starts an interpreter, or joins the one of the Python program that
 * loads the pipelines, and runs the helper. The thread then holds the
 * GIL; when this fails, it lets go of it and runs no Python again. */
static char *
start_python (void)
{
  gboolean joined = Py_IsInitialized ();
  PyGILState_STATE gil = PyGILState_UNLOCKED;
  g_autoptr(GPtrArray) paths = NULL;
  PyObject *globals;
  PyObject *function;
  PyObject *result;
  char *failure;

  /* in a Python program the plugin's calls reach the program's
   * interpreter, even one linked into the executable (Debian's python3):
   * the symbols the executable exports come first */
  if (joined)
    {
      /* a state of this thread's own, for the thread's life: the
       * program's threads keep theirs */
      gil = PyGILState_Ensure ();
    }
  else
    {
      PyConfig config;
      PyStatus status;

      /* a plugin is opened with local symbols, which the extension
       * modules that `import gi` loads cannot see; a program's own
       * interpreter loaded them already */
      if (dlopen (SYMFONIC_LIBPYTHON, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD) == NULL)
        return g_strdup_printf (_("Cannot make %s global: %s"), SYMFONIC_LIBPYTHON, dlerror ());

      status = configure (&config);
      if (!PyStatus_Exception (status))
        status = Py_InitializeFromConfig (&config);
      PyConfig_Clear (&config);
      if (PyStatus_Exception (status))
        return g_strdup_printf (_("Cannot start Python %s at %s (prefix %s): %s"), PY_VERSION,
                                SYMFONIC_PYTHON_EXECUTABLE, SYMFONIC_PYTHON_PREFIX,
                                status.err_msg != NULL ? status.err_msg : "");
    }

  globals = PyDict_New ();
  PyDict_SetItemString (globals, "__builtins__", PyEval_GetBuiltins ());
  failure = run_helper (prelude_source, globals, _("prepare the Python loader"));
  if (failure == NULL)
    {
      interpreter.add_path = take_function (globals, "_add_path");
      interpreter.describe = take_function (globals, "_describe");

      /* the folders named so far, before anything imports from them */
      g_mutex_lock (&interpreter.lock);
      paths = g_steal_pointer (&interpreter.pending_paths);
      interpreter.paths_taken = TRUE;
      g_mutex_unlock (&interpreter.lock);
      for (guint i = 0; paths != NULL && i < paths->len; i++)
        add_path_now (g_ptr_array_index (paths, i));

      function = PyCFunction_New (&hook_failed_def, NULL);
      PyDict_SetItemString (globals, "_hook_failed", function);
      Py_DECREF (function);
      function = PyCFunction_New (&hook_overdue_def, NULL);
      PyDict_SetItemString (globals, "_hook_overdue", function);
      Py_DECREF (function);
      failure = run_helper (helper_source, globals, _("import PyGObject and the Symfonic typelib"));
    }
  if (failure != NULL)
    {
      Py_DECREF (globals);
      if (joined)
        PyGILState_Release (gil);
      else
        PyEval_SaveThread ();
      return failure;
    }
  interpreter.load = take_function (globals, "load");


  /* a program's interpreter runs signal handlers on the program's main
   * thread, not here: its hooks that overrun end their streams, but are
   * not interrupted */
  if (!joined)
    {
      result = PyObject_CallFunction (PyDict_GetItemString (globals, "_interrupt_on"), "i", INTERRUPT_SIGNAL);
      if (result == NULL)
        PyErr_Print ();
      else
        {
          interpreter.thread = pthread_self ();
          symfonic_stage_context_set_interrupt (interpreter.context, interrupt_hook, NULL);
        }
      Py_XDECREF (result);
    }
  Py_DECREF (globals);

  return NULL;
}

/* The interpreter's thread lets go of the GIL only while it waits, for
 * the threads that drop the last reference to a Python object. */
static gint
poll_without_gil (GPollFD *fds,
                  guint    n_fds,
                  gint     timeout)
{
  gint ready;

  Py_BEGIN_ALLOW_THREADS
  ready = g_poll (fds, n_fds, timeout);
  Py_END_ALLOW_THREADS

  return ready;
}

static gpointer
run_interpreter (gpointer data)
{
  g_autoptr(GMainLoop) loop = g_main_loop_new (interpreter.context, FALSE);
  char *error;

  g_main_context_push_thread_default (interpreter.context);
  error = start_python ();

  g_mutex_lock (&interpreter.lock);
  interpreter.started = TRUE;
  interpreter.start_error = error;
  g_cond_broadcast (&interpreter.cond);
  g_mutex_unlock (&interpreter.lock);

  if (error == NULL)
    {
      g_main_context_set_poll_func (interpreter.context, poll_without_gil);
      g_main_loop_run (loop);
    }

  return NULL;
}

/* Waits until the interpreter's thread sets @done. A caller holding the
 * GIL (a program embedding Python that calls in without letting go of it)
 * lets go meanwhile, or that thread could never run. */
static void
wait_for_interpreter (const gboolean *done)
{
  PyThreadState *state = NULL;

  if (Py_IsInitialized () && PyGILState_Check ())
    state = PyEval_SaveThread ();

  g_mutex_lock (&interpreter.lock);
  while (!*done)
    g_cond_wait (&interpreter.cond, &interpreter.lock);
  g_mutex_unlock (&interpreter.lock);

  if (state != NULL)
    PyEval_RestoreThread (state);
}

static gboolean
ensure_interpreter (GError **error)
{
  static gsize thread = 0;

  if (g_once_init_enter (&thread))
    g_once_init_leave (&thread, (gsize) g_thread_new ("symfonic-python", run_interpreter, NULL));

  wait_for_interpreter (&interpreter.started);

  if (interpreter.start_error != NULL)
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN, interpreter.start_error);
      return FALSE;
    }

  return TRUE;
}

typedef struct
{
  const char *filename;
  char       *failure;
  gboolean    done;
} ScriptLoad;

static gboolean
load_on_interpreter (gpointer data)
{
  ScriptLoad *load = data;
  PyGILState_STATE gil = PyGILState_Ensure ();
  PyObject *result = PyObject_CallFunction (interpreter.load, "s", load->filename);
  char *failure = NULL;

  if (result == NULL)
    {
      PyErr_Print ();
      failure = g_strdup_printf (_("%s: the Python loader failed (the traceback is above)"), load->filename);
    }
  else if (result != Py_None)
    failure = g_strdup (PyUnicode_AsUTF8 (result));
  Py_XDECREF (result);
  PyGILState_Release (gil);

  g_mutex_lock (&interpreter.lock);
  load->failure = failure;
  load->done = TRUE;
  g_cond_broadcast (&interpreter.cond);
  g_mutex_unlock (&interpreter.lock);

  return G_SOURCE_REMOVE;
}

/* The script runs on the interpreter's thread, the registry's caller
 * waiting for it. */
static gboolean
load_script (const char  *filename,
             gpointer     user_data,
             GError     **error)
{
  ScriptLoad load = { filename, NULL, FALSE };
  g_autoptr(GSource) source = NULL;

  if (!ensure_interpreter (error))
    return FALSE;

  source = g_idle_source_new ();
  g_source_set_callback (source, load_on_interpreter, &load, NULL);
  g_source_attach (source, interpreter.context);

  wait_for_interpreter (&load.done);

  if (load.failure != NULL)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PLUGIN, _("Cannot load %s"), load.failure);
      g_free (load.failure);
      return FALSE;
    }

  return TRUE;
}

typedef struct
{
  const char *folder;
  gboolean    done;
} PathAdd;

static gboolean
add_path_on_interpreter (gpointer data)
{
  PathAdd *add = data;
  PyGILState_STATE gil = PyGILState_Ensure ();

  add_path_now (add->folder);
  PyGILState_Release (gil);

  g_mutex_lock (&interpreter.lock);
  add->done = TRUE;
  g_cond_broadcast (&interpreter.cond);
  g_mutex_unlock (&interpreter.lock);

  return G_SOURCE_REMOVE;
}

/* `[gateway] python-path`: kept until the interpreter starts, which takes
 * them before it imports anything (PyGObject may come from one); once it
 * runs, added on its thread, before the caller loads any script. */
static gboolean
add_path (const char  *folder,
          gpointer     user_data,
          GError     **error)
{
  PathAdd add = { folder, FALSE };
  g_autoptr(GSource) source = NULL;

  g_mutex_lock (&interpreter.lock);
  if (!interpreter.paths_taken)
    {
      if (interpreter.pending_paths == NULL)
        interpreter.pending_paths = g_ptr_array_new_with_free_func (g_free);
      if (!g_ptr_array_find_with_equal_func (interpreter.pending_paths, folder, g_str_equal, NULL))
        g_ptr_array_add (interpreter.pending_paths, g_strdup (folder));
      g_mutex_unlock (&interpreter.lock);
      return TRUE;
    }
  g_mutex_unlock (&interpreter.lock);

  /* taken, but the interpreter may have failed since: its scripts say so */
  if (!ensure_interpreter (NULL))
    return TRUE;

  source = g_idle_source_new ();
  g_source_set_callback (source, add_path_on_interpreter, &add, NULL);
  g_source_attach (source, interpreter.context);
  wait_for_interpreter (&add.done);

  return TRUE;
}

/* A script's stages run on the interpreter's thread, its sources on the
 * workers (see the top of this file). */
static gboolean
adopt_type (GType        type,
            const char  *name,
            gpointer     user_data,
            GError     **error)
{
  if (g_type_is_a (type, SYMFONIC_TYPE_STAGE))
    symfonic_stage_type_set_main_context (type, interpreter.context);

  return TRUE;
}

static gboolean
symfonic_python_plugin_init (SymfonicPlugin  *plugin,
                             GError         **error)
{
  interpreter.context = g_main_context_new ();
  symfonic_plugin_add_script_loader (plugin, ".py", "Python", load_script, adopt_type, NULL);
  symfonic_plugin_set_script_path_func (plugin, ".py", add_path);

  return TRUE;
}

SYMFONIC_PLUGIN_DEFINE ("python", SYMFONIC_VERSION, "LGPL-2.1-or-later", "Runs .py script plugins", symfonic_python_plugin_init);
