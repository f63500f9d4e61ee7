/* symfonic-stage-lane.c: which hook runs on a stage context, so that one
 * that overran its deadline can be stopped and no other
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-stage.h"
#include "symfonic-stage-lane-private.h"

/* One for each context stages run on. The context's thread numbers each
 * hook it runs (never 0) and publishes the number of the one running; a
 * stream whose hook overran asks for its number to be interrupted. Lanes
 * live as long as the contexts of stage types, which are never unloaded. */
struct _SymfonicStageLane
{
  guint                       next;
  guint                       running;
  guint                       overdue;
  SymfonicStageInterruptFunc  interrupt;
  gpointer                    interrupt_data;
};

static GMutex lanes_lock;
static GHashTable *lanes;

/* The lane of @context, made on first use. Looked up when a stage joins a
 * route, and when an interpreter asks, never per event. */
SymfonicStageLane *
symfonic_stage_lane_get (GMainContext *context)
{
  SymfonicStageLane *lane;

  g_mutex_lock (&lanes_lock);
  if (lanes == NULL)
    lanes = g_hash_table_new (NULL, NULL);
  lane = g_hash_table_lookup (lanes, context);
  if (lane == NULL)
    {
      lane = g_new0 (SymfonicStageLane, 1);
      g_hash_table_insert (lanes, g_main_context_ref (context), lane);
    }
  g_mutex_unlock (&lanes_lock);

  return lane;
}

/* On the context's thread, before a hook: the hook's number. */
guint
symfonic_stage_lane_enter (SymfonicStageLane *lane)
{
  guint serial = (guint) g_atomic_int_add (&lane->next, 1) + 1;

  if (G_UNLIKELY (serial == 0))
    serial = (guint) g_atomic_int_add (&lane->next, 1) + 1;
  g_atomic_int_set (&lane->running, serial);

  return serial;
}

/* On the context's thread, once the hook returned. */
void
symfonic_stage_lane_leave (SymfonicStageLane *lane)
{
  g_atomic_int_set (&lane->running, 0);
}

/* From any thread: the hook numbered @serial overran. Only that one is
 * stopped: the interrupt function may take effect later, when the thread
 * runs another, which symfonic_stage_context_hook_overdue() then spares. */
void
symfonic_stage_lane_interrupt (SymfonicStageLane *lane,
                               guint              serial)
{
  SymfonicStageInterruptFunc interrupt;
  gpointer data;

  g_mutex_lock (&lanes_lock);
  interrupt = lane->interrupt;
  data = lane->interrupt_data;
  g_mutex_unlock (&lanes_lock);

  if (interrupt == NULL || serial == 0 || (guint) g_atomic_int_get (&lane->running) != serial)
    return;

  g_atomic_int_set (&lane->overdue, serial);
  interrupt (data);
}

/**
 * symfonic_stage_context_set_interrupt: (skip)
 * @context: a context stage types run on, see
 *   symfonic_stage_type_set_main_context()
 * @func: (nullable): asks the context's thread to stop the hook it runs
 * @user_data: data for @func
 *
 * Tells the executor how to stop a hook that overran its route's
 * #SymfonicRoute:hook-timeout on @context, so that the other streams whose
 * hooks wait behind it on the same thread go on. The stream whose hook
 * overran has ended already, with its one error frame.
 *
 * @func is called on another thread, and may be called once the hook it
 * was meant for has returned: what it does takes effect only after
 * symfonic_stage_context_hook_overdue(), on @context's thread, said that
 * the hook running then is the one that overran. An interpreter's loader
 * sets this; a stage written in C cannot be stopped from outside.
 */
void
symfonic_stage_context_set_interrupt (GMainContext               *context,
                                      SymfonicStageInterruptFunc  func,
                                      gpointer                    user_data)
{
  SymfonicStageLane *lane;

  g_return_if_fail (context != NULL);

  lane = symfonic_stage_lane_get (context);
  g_mutex_lock (&lanes_lock);
  lane->interrupt = func;
  lane->interrupt_data = user_data;
  g_mutex_unlock (&lanes_lock);
}

/**
 * symfonic_stage_context_hook_overdue:
 * @context: a context stage types run on
 *
 * On @context's thread, while a hook runs there: whether that hook overran
 * its deadline and should stop, see symfonic_stage_context_set_interrupt().
 *
 * Returns: %TRUE if the hook running on @context must stop
 */
gboolean
symfonic_stage_context_hook_overdue (GMainContext *context)
{
  SymfonicStageLane *lane;
  guint running;

  g_return_val_if_fail (context != NULL, FALSE);

  lane = symfonic_stage_lane_get (context);
  running = g_atomic_int_get (&lane->running);

  return running != 0 && running == (guint) g_atomic_int_get (&lane->overdue);
}
