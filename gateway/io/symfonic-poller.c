/* symfonic-poller.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "symfonic-poller-private.h"

/* A GMainContext prepares, queries, polls and checks every one of its
 * sources on every iteration, so a source per connection makes each event
 * cost more the more streams a worker holds. A worker's sockets and
 * deadlines live here instead: one epoll descriptor and one timer heap
 * behind a single GSource, so the context sees one source whatever the
 * number of streams, and an event costs the same with ten thousand idle
 * streams as with none.
 *
 * Watches are level-triggered: a callback that leaves data unread is
 * called again next time. Timers keep their heap position lazily: moving
 * a deadline later (the common case: an idle timeout pushed forward on
 * every read) only stores it, and the heap catches up when the stale
 * entry comes to the top. */

/* events taken from the kernel per dispatch: the rest wait for the next
 * iteration, so other sources still get their turn */
#define MAX_EVENTS 128
#define NOT_IN_HEAP G_MAXUINT

struct _SymfonicWatch
{
  SymfonicPoller    *poller;
  int                fd;
  GIOCondition       events;
  SymfonicWatchFunc  func;
  gpointer           data;
  gboolean           removed;
};

struct _SymfonicTimer
{
  SymfonicPoller    *poller;
  /* when it fires, or -1; the heap orders by key, which may be earlier */
  gint64             deadline;
  gint64             key;
  guint              index;
  SymfonicTimerFunc  func;
  gpointer           data;
};

typedef struct
{
  GSource         source;
  SymfonicPoller *poller;
} PollerSource;

struct _SymfonicPoller
{
  gatomicrefcount  ref_count;
  int              epoll_fd;
  GSource         *source;
  gpointer         tag;
  guint            n_watches;
  /* dispatches under way: more than one only if a callback iterates the
   * context (the source may recurse) */
  guint            dispatching;
  /* watches removed while a dispatch may still hold them */
  GPtrArray       *graveyard;
  GPtrArray       *heap;
  /* the time the timers being dispatched were due by, or 0 */
  gint64           timers_now;
  GQueue           deferred;
  /* deferred work that waits for the context to poll first */
  GQueue           after_poll;
};

static guint32
to_epoll (GIOCondition events)
{
  return ((events & G_IO_IN) ? EPOLLIN : 0) | ((events & G_IO_OUT) ? EPOLLOUT : 0);
}

static GIOCondition
from_epoll (guint32 events)
{
  return ((events & EPOLLIN) ? G_IO_IN : 0) | ((events & EPOLLOUT) ? G_IO_OUT : 0) |
         ((events & EPOLLHUP) ? G_IO_HUP : 0) | ((events & EPOLLERR) ? G_IO_ERR : 0);
}

/* --- the timer heap ------------------------------------------------------ */

static SymfonicTimer *
heap_at (SymfonicPoller *self,
         guint           index)
{
  return g_ptr_array_index (self->heap, index);
}

static void
heap_place (SymfonicPoller *self,
            SymfonicTimer  *timer,
            guint           index)
{
  self->heap->pdata[index] = timer;
  timer->index = index;
}

static void
heap_sift_up (SymfonicPoller *self,
              guint           index)
{
  SymfonicTimer *timer = heap_at (self, index);

  while (index > 0)
    {
      guint parent = (index - 1) / 2;

      if (heap_at (self, parent)->key <= timer->key)
        break;
      heap_place (self, heap_at (self, parent), index);
      index = parent;
    }
  heap_place (self, timer, index);
}

static void
heap_sift_down (SymfonicPoller *self,
                guint           index)
{
  SymfonicTimer *timer = heap_at (self, index);
  guint len = self->heap->len;

  for (;;)
    {
      guint child = 2 * index + 1;

      if (child >= len)
        break;
      if (child + 1 < len && heap_at (self, child + 1)->key < heap_at (self, child)->key)
        child++;
      if (timer->key <= heap_at (self, child)->key)
        break;
      heap_place (self, heap_at (self, child), index);
      index = child;
    }
  heap_place (self, timer, index);
}

static void
heap_remove (SymfonicPoller *self,
             SymfonicTimer  *timer)
{
  guint index = timer->index;
  SymfonicTimer *last = g_ptr_array_steal_index (self->heap, self->heap->len - 1);

  timer->index = NOT_IN_HEAP;
  if (last == timer)
    return;
  heap_place (self, last, index);
  heap_sift_up (self, index);
  heap_sift_down (self, last->index);
}

/* Whether the poller has work before any descriptor is ready, and how
 * many milliseconds until it will, or -1. Asked from prepare() on every
 * iteration rather than told through g_source_set_ready_time(), which
 * writes to the context's wake-up eventfd on every call: the poller runs
 * on its context's own thread, so it is never asleep when work is queued. */
static gboolean
due (SymfonicPoller *self,
     gint64          now,
     int            *timeout)
{
  gint64 first;

  if (self->deferred.length > 0 || self->after_poll.length > 0)
    {
      *timeout = 0;
      return TRUE;
    }
  if (self->heap->len == 0)
    {
      *timeout = -1;
      return FALSE;
    }

  first = heap_at (self, 0)->key;
  if (first <= now)
    {
      *timeout = 0;
      return TRUE;
    }
  /* rounded up: waking early would only find nothing due */
  *timeout = (int) MIN ((first - now + 999) / 1000, G_MAXINT);
  return FALSE;
}

/* --- dispatch ------------------------------------------------------------ */

static void
dispatch_io (SymfonicPoller *self)
{
  struct epoll_event events[MAX_EVENTS];
  int n;

  do
    n = epoll_wait (self->epoll_fd, events, MAX_EVENTS, 0);
  while (n < 0 && errno == EINTR);

  for (int i = 0; i < n; i++)
    {
      SymfonicWatch *watch = events[i].data.ptr;

      if (!watch->removed)
        watch->func (watch->data, from_epoll (events[i].events));
    }
}

static void
dispatch_timers (SymfonicPoller *self)
{
  gint64 now = g_source_get_time (self->source);
  /* a callback may iterate the context */
  gint64 outer = self->timers_now;

  self->timers_now = now;
  while (self->heap->len > 0 && heap_at (self, 0)->key <= now)
    {
      SymfonicTimer *timer = heap_at (self, 0);

      if (timer->deadline > now)
        {
          /* it was moved later since it was placed */
          timer->key = timer->deadline;
          heap_sift_down (self, 0);
          continue;
        }

      heap_remove (self, timer);
      if (timer->deadline < 0)
        continue;
      timer->deadline = -1;
      /* the callback may re-arm or remove the timer */
      timer->func (timer->data);
    }
  self->timers_now = outer;
}

static void
dispatch_deferred (SymfonicPoller *self)
{
  /* only what was queued before: work deferred by deferred work waits for
   * the next iteration */
  guint n = self->deferred.length;

  /* a dispatch that recursed may have run some of it already */
  while (n-- > 0 && self->deferred.length > 0)
    {
      GList *link = g_queue_pop_head_link (&self->deferred);
      SymfonicDeferred *deferred = link->data;

      link->data = NULL;
      deferred->func (deferred->data);
    }
}

static gboolean
poller_source_prepare (GSource *source,
                       int     *timeout)
{
  SymfonicPoller *self = ((PollerSource *) source)->poller;

  return due (self, g_source_get_time (source), timeout);
}

static gboolean
poller_source_check (GSource *source)
{
  SymfonicPoller *self = ((PollerSource *) source)->poller;
  int timeout;

  return due (self, g_source_get_time (source), &timeout) ||
         (g_source_query_unix_fd (source, self->tag) & G_IO_IN) != 0;
}

static gboolean
poller_source_dispatch (GSource     *source,
                        GSourceFunc  callback,
                        gpointer     user_data)
{
  SymfonicPoller *self = ((PollerSource *) source)->poller;
  G_GNUC_UNUSED g_autoptr(SymfonicPoller) keep = symfonic_poller_ref (self);

  self->dispatching++;
  /* Before a timer that is due, its descriptors are asked again: bytes
   * may have come since the context polled (the thread was held up), and
   * a peer that answered in time is not to be timed out. */
  if ((g_source_query_unix_fd (source, self->tag) & G_IO_IN) ||
      (self->heap->len > 0 && heap_at (self, 0)->key <= g_source_get_time (source)))
    dispatch_io (self);
  dispatch_timers (self);
  dispatch_deferred (self);
  /* the next iteration runs it, after the context polled */
  while (self->after_poll.length > 0)
    {
      GList *link = g_queue_pop_head_link (&self->after_poll);

      ((SymfonicDeferred *) link->data)->queue = &self->deferred;
      g_queue_push_tail_link (&self->deferred, link);
    }
  /* an outer dispatch may still hold a removed watch */
  if (--self->dispatching == 0)
    g_ptr_array_set_size (self->graveyard, 0);

  return G_SOURCE_CONTINUE;
}

static GSourceFuncs poller_source_funcs = {
  .prepare = poller_source_prepare,
  .check = poller_source_check,
  .dispatch = poller_source_dispatch,
};

/* --- the poller ---------------------------------------------------------- */

static void
free_watch (gpointer data)
{
  g_free (data);
}

SymfonicPoller *
symfonic_poller_new (GMainContext *context)
{
  SymfonicPoller *self = g_new0 (SymfonicPoller, 1);

  g_atomic_ref_count_init (&self->ref_count);
  self->epoll_fd = epoll_create1 (EPOLL_CLOEXEC);
  if (self->epoll_fd < 0)
    g_error ("Cannot create an epoll descriptor: %s", g_strerror (errno));
  self->graveyard = g_ptr_array_new_with_free_func (free_watch);
  self->heap = g_ptr_array_new ();
  g_queue_init (&self->deferred);
  g_queue_init (&self->after_poll);

  self->source = g_source_new (&poller_source_funcs, sizeof (PollerSource));
  ((PollerSource *) self->source)->poller = self;
  self->tag = g_source_add_unix_fd (self->source, self->epoll_fd, G_IO_IN);
  g_source_set_static_name (self->source, "[symfonic] poller");
  /* GLib blocks a source that may not recurse while it dispatches, and
   * unblocking it adds its descriptor back to the context, which signals
   * the context's wake-up eventfd: one write, then a poll and a read, for
   * nothing, on every wake-up of the worker. A recursing dispatch is safe
   * here (see dispatching). */
  g_source_set_can_recurse (self->source, TRUE);
  g_source_attach (self->source, context);

  return self;
}

SymfonicPoller *
symfonic_poller_ref (SymfonicPoller *self)
{
  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

void
symfonic_poller_unref (SymfonicPoller *self)
{
  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;

  /* whoever still holds a watch or timer outlived its worker: a bug */
  if (self->n_watches > 0 || self->heap->len > 0)
    g_critical ("A poller was freed with %u watches and %u timers", self->n_watches, self->heap->len);
  g_source_destroy (self->source);
  g_source_unref (self->source);
  close (self->epoll_fd);
  g_ptr_array_unref (self->graveyard);
  g_ptr_array_unref (self->heap);
  g_free (self);
}

typedef struct
{
  GMainContext   *context;
  SymfonicPoller *poller;
} ThreadPoller;

static void
thread_poller_free (gpointer data)
{
  ThreadPoller *tp = data;

  symfonic_poller_unref (tp->poller);
  g_main_context_unref (tp->context);
  g_free (tp);
}

static GPrivate thread_poller = G_PRIVATE_INIT (thread_poller_free);

/* The poller of the calling thread's default main context: a worker's, or
 * the global default context's in tests and embedders. */
SymfonicPoller *
symfonic_poller_get_thread_default (void)
{
  ThreadPoller *tp = g_private_get (&thread_poller);
  GMainContext *context = g_main_context_get_thread_default ();

  if (context == NULL)
    context = g_main_context_default ();
  if (tp != NULL && tp->context == context)
    return tp->poller;

  tp = g_new0 (ThreadPoller, 1);
  tp->context = g_main_context_ref (context);
  tp->poller = symfonic_poller_new (context);
  g_private_replace (&thread_poller, tp);

  return tp->poller;
}

guint
symfonic_poller_get_n_watches (SymfonicPoller *self)
{
  return self->n_watches;
}

/* --- watches ------------------------------------------------------------- */

/* Watches @fd for @events (G_IO_IN, G_IO_OUT or both; 0 watches only for
 * G_IO_HUP and G_IO_ERR). The watch must be removed before @fd is closed. */
SymfonicWatch *
symfonic_poller_watch (SymfonicPoller    *self,
                       int                fd,
                       GIOCondition       events,
                       SymfonicWatchFunc  func,
                       gpointer           data)
{
  SymfonicWatch *watch;
  struct epoll_event event = { 0 };

  g_return_val_if_fail (fd >= 0, NULL);
  g_return_val_if_fail (func != NULL, NULL);

  watch = g_new0 (SymfonicWatch, 1);
  watch->poller = self;
  watch->fd = fd;
  watch->events = events;
  watch->func = func;
  watch->data = data;

  event.events = to_epoll (events);
  event.data.ptr = watch;
  if (epoll_ctl (self->epoll_fd, EPOLL_CTL_ADD, fd, &event) != 0)
    g_error ("Cannot watch descriptor %d: %s", fd, g_strerror (errno));
  self->n_watches++;

  return watch;
}

void
symfonic_watch_set_events (SymfonicWatch *watch,
                           GIOCondition   events)
{
  struct epoll_event event = { 0 };

  g_return_if_fail (!watch->removed);

  if (watch->events == events)
    return;
  watch->events = events;
  event.events = to_epoll (events);
  event.data.ptr = watch;
  if (epoll_ctl (watch->poller->epoll_fd, EPOLL_CTL_MOD, watch->fd, &event) != 0)
    g_error ("Cannot change the watch on descriptor %d: %s", watch->fd, g_strerror (errno));
}

GIOCondition
symfonic_watch_get_events (SymfonicWatch *watch)
{
  return watch->events;
}

/* Hands @watch to another callback, which gets the descriptor's next
 * events: a descriptor passed from one owner to the next stays in the
 * epoll set, where removing and adding it again costs two syscalls. */
void
symfonic_watch_set_func (SymfonicWatch     *watch,
                         SymfonicWatchFunc  func,
                         gpointer           data)
{
  g_return_if_fail (!watch->removed);
  g_return_if_fail (func != NULL);

  watch->func = func;
  watch->data = data;
}

/* Safe from any callback, including the watch's own. */
void
symfonic_watch_remove (SymfonicWatch *watch)
{
  SymfonicPoller *self;

  if (watch == NULL)
    return;

  self = watch->poller;
  g_return_if_fail (!watch->removed);

  /* EBADF or ENOENT: the descriptor was closed first, which already took
   * it out of the set */
  epoll_ctl (self->epoll_fd, EPOLL_CTL_DEL, watch->fd, NULL);
  watch->removed = TRUE;
  self->n_watches--;
  if (self->dispatching)
    g_ptr_array_add (self->graveyard, watch);
  else
    g_free (watch);
}

/* --- timers -------------------------------------------------------------- */

/**
 * SymfonicTimer: (skip)
 *
 * A deadline on the main loop of the thread that made it, that costs no
 * #GSource.
 *
 * A main context looks at each of its sources on every iteration, so a
 * source per stream makes every event of a worker dearer the more streams
 * it holds. A timer is an entry in a heap behind one source per thread
 * instead, where the worker's own deadlines are too: armed, moved later,
 * or waiting, it costs nothing, and ten thousand of them cost no more
 * wake-ups than their deadlines. Sources and stages written in C use one
 * for their per-stream deadlines (a transcript's next event, say). Not
 * for scripts: an interpreter has timers of its own, on its own thread.
 */

/**
 * symfonic_timer_new: (skip)
 * @func: called when the deadline passed
 * @user_data: data for @func
 *
 * Makes a disarmed timer on the thread-default main context of the calling
 * thread, or on the global default one; symfonic_timer_set_deadline() arms
 * it. The timer belongs to that thread: arm it and remove it there, before
 * the context goes. A stage or source runs on its stream's thread, whose
 * loop serves the stream as long as it runs.
 *
 * Returns: (transfer full): the timer, for symfonic_timer_remove()
 */
SymfonicTimer *
symfonic_timer_new (SymfonicTimerFunc func,
                    gpointer          user_data)
{
  g_return_val_if_fail (func != NULL, NULL);

  return symfonic_poller_timer (symfonic_poller_get_thread_default (), func, user_data);
}

/* A timer, disarmed: symfonic_timer_set_deadline() arms it. It fires once
 * per arming. */
SymfonicTimer *
symfonic_poller_timer (SymfonicPoller    *self,
                       SymfonicTimerFunc  func,
                       gpointer           data)
{
  SymfonicTimer *timer;

  g_return_val_if_fail (func != NULL, NULL);

  timer = g_new0 (SymfonicTimer, 1);
  timer->poller = self;
  timer->deadline = -1;
  timer->index = NOT_IN_HEAP;
  timer->func = func;
  timer->data = data;

  return timer;
}

/**
 * symfonic_timer_set_deadline: (skip)
 * @timer: a #SymfonicTimer
 * @deadline: when to call the timer's function, in g_get_monotonic_time()
 *   microseconds; one already past is due at once (armed from a timer's
 *   own function, in the next iteration); -1 disarms it
 *
 * Arms @timer for @deadline, in place of any deadline it had. Moving a
 * deadline later, the common case of an idle timeout pushed forward on
 * every read, is a store.
 */
void
symfonic_timer_set_deadline (SymfonicTimer *timer,
                             gint64         deadline)
{
  SymfonicPoller *self;

  g_return_if_fail (timer != NULL);

  self = timer->poller;

  /* Armed from a timer's function for a time already past: it runs in the
   * next iteration, after the context polled, not again in this one, so
   * that work a timer re-arms at once (a batch at a time) lets the I/O
   * that became ready meanwhile go between, and cannot spin. */
  if (deadline >= 0 && deadline <= self->timers_now)
    deadline = self->timers_now + 1;

  timer->deadline = deadline < 0 ? -1 : deadline;
  if (timer->deadline < 0)
    return;

  if (timer->index == NOT_IN_HEAP)
    {
      timer->key = timer->deadline;
      g_ptr_array_add (self->heap, timer);
      timer->index = self->heap->len - 1;
      heap_sift_up (self, timer->index);
    }
  else if (timer->deadline < timer->key)
    {
      timer->key = timer->deadline;
      heap_sift_up (self, timer->index);
    }

}

/**
 * symfonic_timer_get_deadline: (skip)
 * @timer: a #SymfonicTimer
 *
 * Gets when @timer is due.
 *
 * Returns: when the timer's function will be called, in
 *   g_get_monotonic_time() microseconds, or -1 while it is disarmed (as
 *   it is from when its function is called)
 */
gint64
symfonic_timer_get_deadline (SymfonicTimer *timer)
{
  g_return_val_if_fail (timer != NULL, -1);

  return timer->deadline;
}

/**
 * symfonic_timer_remove: (skip)
 * @timer: (nullable): a #SymfonicTimer
 *
 * Disarms and frees @timer, from any code on its thread, its own function
 * included.
 */
void
symfonic_timer_remove (SymfonicTimer *timer)
{
  if (timer == NULL)
    return;

  if (timer->index != NOT_IN_HEAP)
    heap_remove (timer->poller, timer);
  g_free (timer);
}

/* --- deferred work ------------------------------------------------------- */

static void
enqueue (SymfonicDeferred *deferred,
         GQueue           *queue)
{
  if (deferred->link.data != NULL)
    return;

  deferred->link.data = deferred;
  deferred->queue = queue;
  g_queue_push_tail_link (queue, &deferred->link);
}

/* Runs @deferred once, after the I/O of this iteration; queueing it again
 * before it ran does nothing. */
void
symfonic_poller_defer (SymfonicPoller   *self,
                       SymfonicDeferred *deferred)
{
  enqueue (deferred, &self->deferred);
}

/* Runs @deferred once, in the next iteration, after the context polled:
 * work that lets what became ready meanwhile, a new connection or another
 * stream's bytes, go first. Queueing it again before it ran does nothing. */
void
symfonic_poller_defer_after_poll (SymfonicPoller   *self,
                                  SymfonicDeferred *deferred)
{
  enqueue (deferred, &self->after_poll);
}

void
symfonic_poller_cancel_deferred (SymfonicPoller   *self,
                                 SymfonicDeferred *deferred)
{
  if (deferred->link.data == NULL)
    return;

  g_queue_unlink (deferred->queue, &deferred->link);
  deferred->link.data = NULL;
}
