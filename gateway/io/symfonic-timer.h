/* symfonic-timer.h: deadlines on the calling thread's main loop
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <glib.h>

G_BEGIN_DECLS

typedef struct _SymfonicTimer SymfonicTimer;

/**
 * SymfonicTimerFunc: (skip)
 * @user_data: the data given to symfonic_timer_new()
 *
 * Called once per arming of a #SymfonicTimer, when its deadline passed,
 * on the thread that made it. It may arm the timer again, or remove it.
 */
typedef void (*SymfonicTimerFunc) (gpointer user_data);

SymfonicTimer *symfonic_timer_new          (SymfonicTimerFunc  func,
                                            gpointer           user_data);
void           symfonic_timer_set_deadline (SymfonicTimer     *timer,
                                            gint64             deadline);
gint64         symfonic_timer_get_deadline (SymfonicTimer     *timer);
void           symfonic_timer_remove       (SymfonicTimer     *timer);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicTimer, symfonic_timer_remove)

G_END_DECLS
