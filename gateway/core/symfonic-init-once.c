/* symfonic-init-once.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-init-once.h"

/**
 * symfonic_init_once: (skip)
 * @once: the instance's #SymfonicInitOnce
 * @init: what initialises @initable
 * @initable: the object being initialised
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Runs @init the first time only, and answers every call as the first
 * did: #GInitable wants a second `init` to give the first one's answer,
 * and a stage or source that read its files must not read them again
 * (they may have changed since, or a failed read may have left its state
 * half made). Call it from the #GInitableIface.init implementation:
 *
 * |[<!-- language="C" -->
 * static gboolean
 * my_stage_initable_init (GInitable     *initable,
 *                         GCancellable  *cancellable,
 *                         GError       **error)
 * {
 *   return symfonic_init_once (&MY_STAGE (initable)->init, load, initable, cancellable, error);
 * }
 * ]|
 *
 * and free what it keeps with symfonic_init_once_clear() when the object
 * is finalized. Calls must not race, as for any #GInitable.
 *
 * Returns: what @init returned the first time, with a copy of its error
 */
gboolean
symfonic_init_once (SymfonicInitOnce  *once,
                    SymfonicInitFunc   init,
                    GInitable         *initable,
                    GCancellable      *cancellable,
                    GError           **error)
{
  g_return_val_if_fail (once != NULL, FALSE);
  g_return_val_if_fail (init != NULL, FALSE);
  g_return_val_if_fail (G_IS_INITABLE (initable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!once->done)
    {
      once->done = TRUE;
      init (initable, cancellable, &once->error);
    }

  if (once->error != NULL)
    {
      g_propagate_error (error, g_error_copy (once->error));
      return FALSE;
    }

  return TRUE;
}

/**
 * symfonic_init_once_is_done: (skip)
 * @once: a #SymfonicInitOnce
 *
 * Gets whether a #GInitable already initialised, successfully or not.
 *
 * Returns: whether symfonic_init_once() ran, however it ended: an object
 *   takes no more settings from then on
 */
gboolean
symfonic_init_once_is_done (const SymfonicInitOnce *once)
{
  g_return_val_if_fail (once != NULL, FALSE);

  return once->done;
}

/**
 * symfonic_init_once_clear: (skip)
 * @once: a #SymfonicInitOnce
 *
 * Frees what @once keeps, from the object's finalize.
 */
void
symfonic_init_once_clear (SymfonicInitOnce *once)
{
  g_return_if_fail (once != NULL);

  g_clear_error (&once->error);
}
