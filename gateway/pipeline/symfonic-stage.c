/* symfonic-stage.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-error.h"
#include "symfonic-stage-private.h"
#include "symfonic-stream.h"

/**
 * SymfonicStage:
 *
 * The interface of a pipeline stage. See #SymfonicStageInterface.
 *
 * Configuration is the stage's GObject properties: the pipeline file sets
 * them, `symfonic-inspect` lists them, and bindings see them as ordinary
 * properties. A stage that needs resources (a file, a socket) implements
 * #GInitable and opens them there, so a bad setting fails at load.
 */
G_DEFINE_INTERFACE (SymfonicStage, symfonic_stage, G_TYPE_OBJECT)

static G_DEFINE_QUARK (symfonic-stage-main-context, main_context)

/* A hook that fails must say why; one that does not (a C bug, or a Python
 * exception that is not a GLib.Error) still fails its stream, never
 * silently succeeds or hangs it. */
static gboolean
check_hook (SymfonicStage  *self,
            const char     *hook,
            gboolean        ok,
            GError         *local_error,
            GError        **error)
{
  if (ok)
    {
      /* a hook that succeeded and set an error anyway; tested first, as
       * this runs for every stage on every event */
      if (G_UNLIKELY (local_error != NULL))
        g_error_free (local_error);
      return TRUE;
    }

  if (local_error == NULL)
    {
      g_critical ("%s: the %s hook failed without setting an error", G_OBJECT_TYPE_NAME (self), hook);
      local_error = g_error_new (SYMFONIC_ERROR, SYMFONIC_ERROR_FAILED,
                                 "Stage %s failed in %s", G_OBJECT_TYPE_NAME (self), hook);
    }
  g_propagate_error (error, local_error);

  return FALSE;
}

/* Runs a hook that is given the stream alone (admit, begin, finish,
 * alarm), and checks what it says. */
static gboolean
run_stream_hook (SymfonicStage           *self,
                 const char              *hook,
                 SymfonicStageStreamFunc  func,
                 SymfonicStream          *stream,
                 GError                 **error)
{
  GError *local_error = NULL;
  gboolean ok = func (self, stream, &local_error);

  return check_hook (self, hook, ok, local_error, error);
}

static gboolean
symfonic_stage_real_admit (SymfonicStage   *self,
                           SymfonicStream  *stream,
                           GError         **error)
{
  return TRUE;
}

static void
symfonic_stage_real_admit_async (SymfonicStage       *self,
                                 SymfonicStream      *stream,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  GError *error = NULL;

  g_task_set_source_tag (task, symfonic_stage_real_admit_async);
  if (symfonic_stage_admit (self, stream, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static gboolean
symfonic_stage_real_admit_finish (SymfonicStage  *self,
                                  GAsyncResult   *result,
                                  GError        **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

static SymfonicAdmissionPhase
symfonic_stage_real_get_admission_phase (SymfonicStage *self)
{
  return SYMFONIC_ADMISSION_PHASE_BODY;
}

static gboolean
symfonic_stage_real_begin (SymfonicStage   *self,
                           SymfonicStream  *stream,
                           GError         **error)
{
  return TRUE;
}

static gboolean
symfonic_stage_real_process (SymfonicStage   *self,
                             SymfonicStream  *stream,
                             SymfonicEvent   *event,
                             GError         **error)
{
  symfonic_stream_emit (stream, event);
  return TRUE;
}

static gboolean
symfonic_stage_real_finish (SymfonicStage   *self,
                            SymfonicStream  *stream,
                            GError         **error)
{
  return TRUE;
}

static void
symfonic_stage_real_close (SymfonicStage  *self,
                           SymfonicStream *stream)
{
}

static gboolean
symfonic_stage_real_alarm (SymfonicStage   *self,
                           SymfonicStream  *stream,
                           GError         **error)
{
  return TRUE;
}

static void
symfonic_stage_default_init (SymfonicStageInterface *iface)
{
  iface->admit = symfonic_stage_real_admit;
  iface->admit_async = symfonic_stage_real_admit_async;
  iface->admit_finish = symfonic_stage_real_admit_finish;
  iface->get_admission_phase = symfonic_stage_real_get_admission_phase;
  iface->begin = symfonic_stage_real_begin;
  iface->process = symfonic_stage_real_process;
  iface->finish = symfonic_stage_real_finish;
  iface->close = symfonic_stage_real_close;
  iface->alarm = symfonic_stage_real_alarm;
}

/**
 * symfonic_stage_admit:
 * @self: a #SymfonicStage
 * @stream: the stream asking for admission
 * @error: return location for a #GError
 *
 * Runs the synchronous admission hook. It never blocks: a stage that
 * needs I/O to decide fails it with %G_IO_ERROR_WOULD_BLOCK, and
 * symfonic_stage_admit_async() then asks it.
 *
 * Returns: %TRUE if the stage admits the stream
 */
gboolean
symfonic_stage_admit (SymfonicStage   *self,
                      SymfonicStream  *stream,
                      GError         **error)
{
  g_return_val_if_fail (SYMFONIC_IS_STAGE (self), FALSE);
  g_return_val_if_fail (SYMFONIC_IS_STREAM (stream), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return run_stream_hook (self, "admit", SYMFONIC_STAGE_GET_IFACE (self)->admit, stream, error);
}

/**
 * symfonic_stage_admit_async:
 * @self: a #SymfonicStage
 * @stream: the stream asking for admission
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when the stage has decided
 * @user_data: data for @callback
 *
 * Runs the admission hook, before any byte of the response is written.
 */
void
symfonic_stage_admit_async (SymfonicStage       *self,
                            SymfonicStream      *stream,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  g_return_if_fail (SYMFONIC_IS_STAGE (self));
  g_return_if_fail (SYMFONIC_IS_STREAM (stream));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  SYMFONIC_STAGE_GET_IFACE (self)->admit_async (self, stream, cancellable, callback, user_data);
}

/* The admission hook the executor tries first, in place of the
 * asynchronous one, or %NULL when only that one decides: a stage with its
 * own admit_async and the default admit, which would accept everything.
 * The executor looks it up once per route rather than per request. */
SymfonicStageStreamFunc
symfonic_stage_get_admit_func (SymfonicStage *self)
{
  SymfonicStageInterface *iface;

  g_return_val_if_fail (SYMFONIC_IS_STAGE (self), NULL);

  iface = SYMFONIC_STAGE_GET_IFACE (self);
  if (iface->admit == symfonic_stage_real_admit && iface->admit_async != symfonic_stage_real_admit_async)
    return NULL;

  return iface->admit;
}

/* symfonic_stage_admit() through the hook symfonic_stage_get_admit_func()
 * returned, without the argument checks the executor made once. */
gboolean
symfonic_stage_run_admit (SymfonicStage            *self,
                          SymfonicStageStreamFunc   admit,
                          SymfonicStream           *stream,
                          GError                  **error)
{
  return run_stream_hook (self, "admit", admit, stream, error);
}

/**
 * symfonic_stage_admit_finish:
 * @self: a #SymfonicStage
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Completes symfonic_stage_admit_async().
 *
 * Returns: %TRUE if the stage admits the stream
 */
gboolean
symfonic_stage_admit_finish (SymfonicStage  *self,
                             GAsyncResult   *result,
                             GError        **error)
{
  GError *local_error = NULL;
  gboolean ok;

  g_return_val_if_fail (SYMFONIC_IS_STAGE (self), FALSE);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  ok = SYMFONIC_STAGE_GET_IFACE (self)->admit_finish (self, result, &local_error);

  return check_hook (self, "admit", ok, local_error, error);
}

/**
 * symfonic_stage_get_admission_phase:
 * @self: a #SymfonicStage
 *
 * When the stage's admission hooks run: on the request head (before the
 * body is read) or once the body is decoded.
 *
 * Returns: the stage's #SymfonicAdmissionPhase
 */
SymfonicAdmissionPhase
symfonic_stage_get_admission_phase (SymfonicStage *self)
{
  SymfonicAdmissionPhase phase;

  g_return_val_if_fail (SYMFONIC_IS_STAGE (self), SYMFONIC_ADMISSION_PHASE_BODY);

  phase = SYMFONIC_STAGE_GET_IFACE (self)->get_admission_phase (self);

  /* A binding can return any integer: the body phase is the safe one, as
   * it still runs before the stream and after authentication. */
  if (phase != SYMFONIC_ADMISSION_PHASE_HEAD && phase != SYMFONIC_ADMISSION_PHASE_BODY)
    {
      g_critical ("%s: get_admission_phase returned %d, not a SymfonicAdmissionPhase",
                  G_OBJECT_TYPE_NAME (self), phase);
      return SYMFONIC_ADMISSION_PHASE_BODY;
    }

  return phase;
}

/**
 * symfonic_stage_begin:
 * @self: a #SymfonicStage
 * @stream: the admitted stream
 * @error: return location for a #GError
 *
 * Runs the begin hook: after every stage admitted the stream and before its
 * upstream opens. What the stage emits passes the stages after it.
 *
 * Returns: %TRUE on success
 */
gboolean
symfonic_stage_begin (SymfonicStage   *self,
                      SymfonicStream  *stream,
                      GError         **error)
{
  g_return_val_if_fail (SYMFONIC_IS_STAGE (self), FALSE);
  g_return_val_if_fail (SYMFONIC_IS_STREAM (stream), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return run_stream_hook (self, "begin", SYMFONIC_STAGE_GET_IFACE (self)->begin, stream, error);
}

/**
 * symfonic_stage_process:
 * @self: a #SymfonicStage
 * @stream: the stream the event belongs to
 * @event: the event
 * @error: return location for a #GError
 *
 * Hands one event to the stage, which emits its output through
 * symfonic_stream_emit(). A failure ends the stream with one error frame.
 *
 * Returns: %TRUE on success
 */
gboolean
symfonic_stage_process (SymfonicStage   *self,
                        SymfonicStream  *stream,
                        SymfonicEvent   *event,
                        GError         **error)
{
  g_return_val_if_fail (SYMFONIC_IS_STAGE (self), FALSE);
  g_return_val_if_fail (SYMFONIC_IS_STREAM (stream), FALSE);
  g_return_val_if_fail (event != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return symfonic_stage_run_process (self, SYMFONIC_STAGE_GET_IFACE (self)->process, stream, event, error);
}

/* The stage's process hook, or %NULL when it keeps the default one, which
 * hands every event on unchanged and so can be left out of the event path.
 * The executor looks it up once per stream rather than per event. */
SymfonicStageProcessFunc
symfonic_stage_get_process_func (SymfonicStage *self)
{
  SymfonicStageProcessFunc process;

  g_return_val_if_fail (SYMFONIC_IS_STAGE (self), NULL);

  process = SYMFONIC_STAGE_GET_IFACE (self)->process;

  return process != symfonic_stage_real_process ? process : NULL;
}

/* Whether the stage decides anything at admission, or finishes: the
 * phases its metrics have. */
gboolean
symfonic_stage_admits (SymfonicStage *self)
{
  SymfonicStageInterface *iface = SYMFONIC_STAGE_GET_IFACE (self);

  return iface->admit != symfonic_stage_real_admit || iface->admit_async != symfonic_stage_real_admit_async;
}

gboolean
symfonic_stage_finishes (SymfonicStage *self)
{
  return SYMFONIC_STAGE_GET_IFACE (self)->finish != symfonic_stage_real_finish;
}

/* symfonic_stage_process() through the hook symfonic_stage_get_process_func()
 * returned, without the argument checks the executor made once. */
gboolean
symfonic_stage_run_process (SymfonicStage             *self,
                            SymfonicStageProcessFunc   process,
                            SymfonicStream            *stream,
                            SymfonicEvent             *event,
                            GError                   **error)
{
  GError *local_error = NULL;
  gboolean ok = process (self, stream, event, &local_error);

  return check_hook (self, "process", ok, local_error, error);
}

/**
 * symfonic_stage_finish:
 * @self: a #SymfonicStage
 * @stream: the stream whose upstream ended
 * @error: return location for a #GError
 *
 * Tells the stage the upstream ended successfully, so it emits what it
 * still withholds. The stages finish in order, and what one releases passes
 * through the stages after it before they finish.
 *
 * Returns: %TRUE on success
 */
gboolean
symfonic_stage_finish (SymfonicStage   *self,
                       SymfonicStream  *stream,
                       GError         **error)
{
  g_return_val_if_fail (SYMFONIC_IS_STAGE (self), FALSE);
  g_return_val_if_fail (SYMFONIC_IS_STREAM (stream), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return run_stream_hook (self, "finish", SYMFONIC_STAGE_GET_IFACE (self)->finish, stream, error);
}

/**
 * symfonic_stage_close:
 * @self: a #SymfonicStage
 * @stream: the stream that is over
 *
 * Tells the stage a stream it admitted is over, however it ended.
 */
void
symfonic_stage_close (SymfonicStage  *self,
                      SymfonicStream *stream)
{
  g_return_if_fail (SYMFONIC_IS_STAGE (self));
  g_return_if_fail (SYMFONIC_IS_STREAM (stream));

  SYMFONIC_STAGE_GET_IFACE (self)->close (self, stream);
}

/**
 * symfonic_stage_alarm:
 * @self: a #SymfonicStage
 * @stream: a running stream
 * @error: return location for a #GError
 *
 * Tells the stage the instant it set with symfonic_stream_set_alarm() came.
 *
 * Returns: %TRUE if the stream goes on, %FALSE with @error set to end it
 */
gboolean
symfonic_stage_alarm (SymfonicStage   *self,
                      SymfonicStream  *stream,
                      GError         **error)
{
  g_return_val_if_fail (SYMFONIC_IS_STAGE (self), FALSE);
  g_return_val_if_fail (SYMFONIC_IS_STREAM (stream), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return run_stream_hook (self, "alarm", SYMFONIC_STAGE_GET_IFACE (self)->alarm, stream, error);
}

/**
 * symfonic_stage_type_set_main_context:
 * @stage_type: a type implementing #SymfonicStage
 * @context: (nullable): the context every hook of the type's stages must
 *   run on, or %NULL to run them on the stream's own thread
 *
 * Declares the thread affinity of a stage type: an interpreter that may
 * only be called on one thread, or a stage that blocks and so runs on a
 * thread of its own. The executor then hands the stage each batch of a
 * stream's events (and its admission, begin, finish and close hooks) on
 * @context, whose thread must be iterating it, and goes on with the
 * stream when it answers; the worker never waits. Subtypes inherit the
 * affinity. Set it when the type is registered: a route reads it once,
 * when it takes a stage of the type.
 *
 * The core knows no language: the loader of a script plugin declares the
 * affinity of the stage types its scripts register (the gjs loader, the
 * global default main context, the only one gjs runs code on), and a
 * program that defines a stage type in such a language itself, a gjs
 * program say, declares it for that type.
 */
void
symfonic_stage_type_set_main_context (GType         stage_type,
                                      GMainContext *context)
{
  GMainContext *old;

  g_return_if_fail (g_type_is_a (stage_type, SYMFONIC_TYPE_STAGE));

  old = g_type_get_qdata (stage_type, main_context_quark ());
  /* types are never unloaded: the context they run on stays with them */
  g_type_set_qdata (stage_type, main_context_quark (),
                    context != NULL ? g_main_context_ref (context) : NULL);
  g_clear_pointer (&old, g_main_context_unref);
}

/**
 * symfonic_stage_type_get_main_context:
 * @stage_type: a type implementing #SymfonicStage
 *
 * The context the type's hooks run on, declared for it or for the nearest
 * parent type. See symfonic_stage_type_set_main_context().
 *
 * Returns: (transfer none) (nullable): the context, or %NULL when the
 *   stages run inline on the stream's thread
 */
GMainContext *
symfonic_stage_type_get_main_context (GType stage_type)
{
  g_return_val_if_fail (g_type_is_a (stage_type, SYMFONIC_TYPE_STAGE), NULL);

  for (GType type = stage_type; type != G_TYPE_INVALID; type = g_type_parent (type))
    {
      GMainContext *context = g_type_get_qdata (type, main_context_quark ());

      if (context != NULL)
        return context;
    }

  return NULL;
}
