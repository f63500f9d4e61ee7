/* symfonic-stage.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-stage.h"
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
  if (SYMFONIC_STAGE_GET_IFACE (self)->admit (self, stream, &error))
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

static void
symfonic_stage_default_init (SymfonicStageInterface *iface)
{
  iface->admit = symfonic_stage_real_admit;
  iface->admit_async = symfonic_stage_real_admit_async;
  iface->admit_finish = symfonic_stage_real_admit_finish;
  iface->process = symfonic_stage_real_process;
  iface->finish = symfonic_stage_real_finish;
  iface->close = symfonic_stage_real_close;
}

/**
 * symfonic_stage_admit:
 * @self: a #SymfonicStage
 * @stream: the stream asking for admission
 * @error: return location for a #GError
 *
 * Runs the synchronous admission hook.
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

  return SYMFONIC_STAGE_GET_IFACE (self)->admit (self, stream, error);
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
  g_return_val_if_fail (SYMFONIC_IS_STAGE (self), FALSE);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return SYMFONIC_STAGE_GET_IFACE (self)->admit_finish (self, result, error);
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

  return SYMFONIC_STAGE_GET_IFACE (self)->process (self, stream, event, error);
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

  return SYMFONIC_STAGE_GET_IFACE (self)->finish (self, stream, error);
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
