/* symfonic-poller-private.h: one readiness source and one timer heap per worker
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

#include "symfonic-timer.h"

G_BEGIN_DECLS

typedef struct _SymfonicPoller   SymfonicPoller;
typedef struct _SymfonicWatch    SymfonicWatch;
typedef struct _SymfonicDeferred SymfonicDeferred;

/* @condition holds what the descriptor is ready for (G_IO_IN, G_IO_OUT)
 * and G_IO_HUP or G_IO_ERR, reported whatever was asked for. */
typedef void (*SymfonicWatchFunc)    (gpointer     data,
                                      GIOCondition condition);
typedef void (*SymfonicDeferredFunc) (gpointer     data);

/* Work to run once, after the I/O of the current main-loop iteration (the
 * writers' flushes). Embedded in its owner, so queueing it allocates
 * nothing; zero-initialise it and set func and data. */
struct _SymfonicDeferred
{
  SymfonicDeferredFunc func;
  gpointer             data;
  /*< private >*/
  GList                link;
  GQueue              *queue;
};

G_GNUC_INTERNAL
SymfonicPoller *symfonic_poller_get_thread_default (void);
G_GNUC_INTERNAL
SymfonicPoller *symfonic_poller_new                (GMainContext      *context);
G_GNUC_INTERNAL
SymfonicPoller *symfonic_poller_ref                (SymfonicPoller    *self);
G_GNUC_INTERNAL
void            symfonic_poller_unref              (SymfonicPoller    *self);
G_GNUC_INTERNAL
guint           symfonic_poller_get_n_watches      (SymfonicPoller    *self);

G_GNUC_INTERNAL
SymfonicWatch  *symfonic_poller_watch              (SymfonicPoller    *self,
                                                    int                fd,
                                                    GIOCondition       events,
                                                    SymfonicWatchFunc  func,
                                                    gpointer           data);
G_GNUC_INTERNAL
void            symfonic_watch_set_events          (SymfonicWatch     *watch,
                                                    GIOCondition       events);
G_GNUC_INTERNAL
GIOCondition    symfonic_watch_get_events          (SymfonicWatch     *watch);
G_GNUC_INTERNAL
void            symfonic_watch_set_func            (SymfonicWatch     *watch,
                                                    SymfonicWatchFunc  func,
                                                    gpointer           data);
G_GNUC_INTERNAL
void            symfonic_watch_remove              (SymfonicWatch     *watch);

/* symfonic_timer_set_deadline() and symfonic_timer_remove() are public */
G_GNUC_INTERNAL
SymfonicTimer  *symfonic_poller_timer              (SymfonicPoller    *self,
                                                    SymfonicTimerFunc  func,
                                                    gpointer           data);

G_GNUC_INTERNAL
void            symfonic_poller_defer              (SymfonicPoller    *self,
                                                    SymfonicDeferred  *deferred);
G_GNUC_INTERNAL
void            symfonic_poller_defer_after_poll   (SymfonicPoller    *self,
                                                    SymfonicDeferred  *deferred);
G_GNUC_INTERNAL
void            symfonic_poller_cancel_deferred    (SymfonicPoller    *self,
                                                    SymfonicDeferred  *deferred);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicPoller, symfonic_poller_unref)

G_END_DECLS
