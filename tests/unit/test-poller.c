/* test-poller.c: the worker's readiness source, timers and deferred work
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "symfonic-poller-private.h"

typedef struct
{
  GMainContext   *context;
  SymfonicPoller *poller;
  GString        *log;
} Fixture;

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  f->context = g_main_context_new ();
  g_main_context_push_thread_default (f->context);
  f->poller = symfonic_poller_ref (symfonic_poller_get_thread_default ());
  f->log = g_string_new (NULL);
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  symfonic_poller_unref (f->poller);
  g_main_context_pop_thread_default (f->context);
  while (g_main_context_iteration (f->context, FALSE))
    ;
  g_main_context_unref (f->context);
  g_string_free (f->log, TRUE);
}

static gboolean
set_flag (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Runs the context until @done is set, for at most five seconds. */
static void
run_until (Fixture  *f,
           gboolean *done)
{
  gboolean expired = FALSE;
  g_autoptr(GSource) limit = g_timeout_source_new_seconds (5);

  g_source_set_callback (limit, set_flag, &expired, NULL);
  g_source_attach (limit, f->context);
  while (!*done && !expired)
    g_main_context_iteration (f->context, TRUE);
  g_source_destroy (limit);
  g_assert_true (*done);
}

static void
socket_pair (int fds[2])
{
  g_assert_no_errno (socketpair (AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds));
}

/* Writes a byte to @fd and runs the context until a watcher sets @done. */
static void
poke (Fixture  *f,
      int       fd,
      gboolean *done)
{
  *done = FALSE;
  g_assert_cmpint (write (fd, "x", 1), ==, 1);
  run_until (f, done);
}

typedef struct
{
  Fixture       *f;
  const char    *name;
  int            fd;
  SymfonicWatch *watch;
  /* a watch this one removes when it runs */
  SymfonicWatch **victim;
  guint          calls;
  GIOCondition   last;
  gboolean      *done;
} Watcher;

static void
on_ready (gpointer     data,
          GIOCondition condition)
{
  Watcher *w = data;
  char buffer[64];

  w->calls++;
  w->last = condition;
  g_string_append_printf (w->f->log, "%s;", w->name);
  if (condition & G_IO_IN)
    while (read (w->fd, buffer, sizeof buffer) > 0)
      ;
  if (w->victim != NULL && *w->victim != NULL)
    {
      symfonic_watch_remove (*w->victim);
      *w->victim = NULL;
    }
  if (w->done != NULL)
    *w->done = TRUE;
}

static void
test_readable (Fixture       *f,
               gconstpointer  data)
{
  int fds[2];
  gboolean done = FALSE;
  Watcher w = { f, "a", 0, NULL, NULL, 0, 0, &done };

  socket_pair (fds);
  w.fd = fds[0];
  w.watch = symfonic_poller_watch (f->poller, fds[0], G_IO_IN, on_ready, &w);
  g_assert_cmpuint (symfonic_poller_get_n_watches (f->poller), ==, 1);

  /* nothing to read: nothing runs */
  while (g_main_context_iteration (f->context, FALSE))
    ;
  g_assert_cmpuint (w.calls, ==, 0);

  poke (f, fds[1], &done);
  g_assert_cmpuint (w.calls, ==, 1);
  g_assert_cmpint (w.last & G_IO_IN, ==, G_IO_IN);

  /* not watching for input: data waiting is not reported */
  symfonic_watch_set_events (w.watch, 0);
  g_assert_cmpint (write (fds[1], "y", 1), ==, 1);
  while (g_main_context_iteration (f->context, FALSE))
    ;
  g_assert_cmpuint (w.calls, ==, 1);

  /* a peer that hangs up is reported whatever was asked for */
  done = FALSE;
  close (fds[1]);
  run_until (f, &done);
  g_assert_cmpint (w.last & G_IO_HUP, ==, G_IO_HUP);

  symfonic_watch_remove (w.watch);
  g_assert_cmpuint (symfonic_poller_get_n_watches (f->poller), ==, 0);
  close (fds[0]);
}

/* A watch handed to another callback stays one registration, and its next
 * events go to the new callback only. */
static void
test_hand_over (Fixture       *f,
                gconstpointer  data)
{
  int fds[2];
  gboolean done = FALSE;
  Watcher first = { f, "first", 0, NULL, NULL, 0, 0, &done };
  Watcher second = { f, "second", 0, NULL, NULL, 0, 0, &done };

  socket_pair (fds);
  first.fd = second.fd = fds[0];
  first.watch = symfonic_poller_watch (f->poller, fds[0], G_IO_IN, on_ready, &first);
  poke (f, fds[1], &done);

  symfonic_watch_set_func (first.watch, on_ready, &second);
  g_assert_cmpuint (symfonic_poller_get_n_watches (f->poller), ==, 1);
  poke (f, fds[1], &done);
  poke (f, fds[1], &done);
  g_assert_cmpstr (f->log->str, ==, "first;second;second;");

  symfonic_watch_remove (first.watch);
  g_assert_cmpuint (symfonic_poller_get_n_watches (f->poller), ==, 0);
  close (fds[0]);
  close (fds[1]);
}

/* A callback removes a watch whose event came in the same batch: the
 * removed watch is not called, and nothing touches freed memory. */
static void
test_remove_in_callback (Fixture       *f,
                         gconstpointer  data)
{
  int a[2], b[2];
  gboolean done = FALSE;
  Watcher wa = { f, "a", 0 };
  Watcher wb = { f, "b", 0 };

  socket_pair (a);
  socket_pair (b);
  wa.fd = a[0];
  wb.fd = b[0];
  wa.watch = symfonic_poller_watch (f->poller, a[0], G_IO_IN, on_ready, &wa);
  wb.watch = symfonic_poller_watch (f->poller, b[0], G_IO_IN, on_ready, &wb);
  /* whichever runs first removes the other */
  wa.victim = &wb.watch;
  wb.victim = &wa.watch;
  wa.done = wb.done = &done;

  g_assert_cmpint (write (a[1], "x", 1), ==, 1);
  g_assert_cmpint (write (b[1], "x", 1), ==, 1);
  run_until (f, &done);
  while (g_main_context_iteration (f->context, FALSE))
    ;

  g_assert_cmpuint (wa.calls + wb.calls, ==, 1);
  g_assert_cmpuint (symfonic_poller_get_n_watches (f->poller), ==, 1);
  symfonic_watch_remove (wa.watch != NULL ? wa.watch : wb.watch);
  for (guint i = 0; i < 2; i++)
    {
      close (a[i]);
      close (b[i]);
    }
}

static guint polled_fds;
static GPollFunc default_poll;

static int
counting_poll (GPollFD *fds,
               guint    nfds,
               int      timeout)
{
  polled_fds = MAX (polled_fds, nfds);
  return default_poll (fds, nfds, timeout);
}

/* The point of the poller: however many sockets a worker watches, its
 * main context polls a constant handful of descriptors. */
static void
test_many_watches_one_source (Fixture       *f,
                              gconstpointer  data)
{
  struct rlimit limit;
  guint n = 3000;
  g_autofree int *fds = NULL;
  g_autofree Watcher *watchers = NULL;
  gboolean done = FALSE;

  g_assert_no_errno (getrlimit (RLIMIT_NOFILE, &limit));
  if (limit.rlim_cur < 2 * n + 64)
    {
      limit.rlim_cur = MIN (limit.rlim_max, 2 * n + 64);
      setrlimit (RLIMIT_NOFILE, &limit);
      g_assert_no_errno (getrlimit (RLIMIT_NOFILE, &limit));
      if (limit.rlim_cur < 2 * n + 64)
        n = (limit.rlim_cur - 64) / 2;
    }

  fds = g_new (int, 2 * n);
  watchers = g_new0 (Watcher, n);
  for (guint i = 0; i < n; i++)
    {
      socket_pair (&fds[2 * i]);
      watchers[i].f = f;
      watchers[i].name = "w";
      watchers[i].fd = fds[2 * i];
      watchers[i].watch = symfonic_poller_watch (f->poller, fds[2 * i], G_IO_IN, on_ready, &watchers[i]);
    }
  watchers[n - 1].done = &done;

  default_poll = g_main_context_get_poll_func (f->context);
  g_main_context_set_poll_func (f->context, counting_poll);
  g_assert_cmpint (write (fds[2 * (n - 1) + 1], "x", 1), ==, 1);
  run_until (f, &done);
  g_main_context_set_poll_func (f->context, default_poll);

  /* the context's wakeup descriptor and the poller's */
  g_assert_cmpuint (polled_fds, <=, 2);
  g_assert_cmpuint (watchers[n - 1].calls, ==, 1);
  for (guint i = 0; i + 1 < n; i++)
    g_assert_cmpuint (watchers[i].calls, ==, 0);

  for (guint i = 0; i < n; i++)
    {
      symfonic_watch_remove (watchers[i].watch);
      close (fds[2 * i]);
      close (fds[2 * i + 1]);
    }
}

typedef struct
{
  Fixture       *f;
  const char    *name;
  SymfonicTimer *timer;
  gint64         fired_at;
  gboolean      *done;
} Alarm;

static void
on_alarm (gpointer data)
{
  Alarm *a = data;

  a->fired_at = g_get_monotonic_time ();
  g_string_append_printf (a->f->log, "%s;", a->name);
  if (a->done != NULL)
    *a->done = TRUE;
}

static void
test_timers_order (Fixture       *f,
                   gconstpointer  data)
{
  gint64 start = g_get_monotonic_time ();
  gboolean done = FALSE;
  Alarm a = { f, "a" }, b = { f, "b" }, c = { f, "c" }, d = { f, "d" };

  a.timer = symfonic_poller_timer (f->poller, on_alarm, &a);
  b.timer = symfonic_poller_timer (f->poller, on_alarm, &b);
  c.timer = symfonic_poller_timer (f->poller, on_alarm, &c);
  d.timer = symfonic_poller_timer (f->poller, on_alarm, &d);
  c.done = &done;

  symfonic_timer_set_deadline (a.timer, start + 60 * 1000);
  symfonic_timer_set_deadline (b.timer, start + 20 * 1000);
  symfonic_timer_set_deadline (c.timer, start + 150 * 1000);
  symfonic_timer_set_deadline (d.timer, start + 10 * 1000);
  /* moved later (kept lazily), earlier, and disarmed */
  symfonic_timer_set_deadline (b.timer, start + 100 * 1000);
  symfonic_timer_set_deadline (a.timer, start + 40 * 1000);
  symfonic_timer_set_deadline (d.timer, -1);

  run_until (f, &done);
  g_assert_cmpstr (f->log->str, ==, "a;b;c;");
  g_assert_cmpint (a.fired_at - start, >=, 40 * 1000);
  g_assert_cmpint (b.fired_at - start, >=, 100 * 1000);
  g_assert_cmpint (c.fired_at - start, >=, 150 * 1000);
  g_assert_cmpint (d.fired_at, ==, 0);

  /* fired timers are disarmed, and may be armed again */
  done = FALSE;
  c.done = NULL;
  a.done = &done;
  symfonic_timer_set_deadline (a.timer, g_get_monotonic_time () + 5 * 1000);
  run_until (f, &done);
  g_assert_cmpstr (f->log->str, ==, "a;b;c;a;");

  symfonic_timer_remove (a.timer);
  symfonic_timer_remove (b.timer);
  symfonic_timer_remove (c.timer);
  symfonic_timer_remove (d.timer);
}

/* Many timers armed in random order and some removed while armed still
 * fire in deadline order: the heap stays a heap through removals. */
static void
test_timers_random (Fixture       *f,
                    gconstpointer  data)
{
  enum { N = 200 };
  Alarm alarms[N] = { { 0 } };
  char names[N][8];
  gint64 start = g_get_monotonic_time () + 20 * 1000;
  g_autoptr(GString) expected = g_string_new (NULL);
  gboolean done = FALSE;
  GRand *rand = g_rand_new_with_seed (7);
  guint order[N];

  for (guint i = 0; i < N; i++)
    order[i] = i;
  for (guint i = N - 1; i > 0; i--)
    {
      guint j = g_rand_int_range (rand, 0, i + 1);
      guint t = order[i];

      order[i] = order[j];
      order[j] = t;
    }

  /* alarm i fires at start + i ms; every third one is removed */
  for (guint k = 0; k < N; k++)
    {
      guint i = order[k];

      g_snprintf (names[i], sizeof names[i], "%u", i);
      alarms[i].f = f;
      alarms[i].name = names[i];
      alarms[i].timer = symfonic_poller_timer (f->poller, on_alarm, &alarms[i]);
      symfonic_timer_set_deadline (alarms[i].timer, start + i * 1000);
    }
  for (guint i = 0; i < N; i++)
    {
      if (i % 3 == 1)
        {
          symfonic_timer_remove (alarms[i].timer);
          alarms[i].timer = NULL;
        }
      else
        g_string_append_printf (expected, "%u;", i);
    }
  /* the last one kept */
  alarms[N - 2].done = &done;

  run_until (f, &done);
  g_assert_cmpstr (f->log->str, ==, expected->str);

  for (guint i = 0; i < N; i++)
    symfonic_timer_remove (alarms[i].timer);
  g_rand_free (rand);
}

/* A timer of the public API is one of the calling thread's poller. */
static void
test_timer_thread_default (Fixture       *f,
                           gconstpointer  data)
{
  gboolean done = FALSE;
  Alarm a = { f, "a", NULL, 0, &done };
  gint64 start = g_get_monotonic_time ();

  a.timer = symfonic_timer_new (on_alarm, &a);
  g_assert_cmpint (symfonic_timer_get_deadline (a.timer), ==, -1);
  symfonic_timer_set_deadline (a.timer, start + 10 * 1000);
  g_assert_cmpint (symfonic_timer_get_deadline (a.timer), ==, start + 10 * 1000);
  run_until (f, &done);
  g_assert_cmpstr (f->log->str, ==, "a;");
  g_assert_cmpint (a.fired_at - start, >=, 10 * 1000);
  /* fired: disarmed */
  g_assert_cmpint (symfonic_timer_get_deadline (a.timer), ==, -1);
  symfonic_timer_remove (a.timer);
}

typedef struct
{
  SymfonicTimer *timer;
  guint          runs;
} Rearming;

static void
on_rearm (gpointer data)
{
  Rearming *r = data;

  if (++r->runs < 3)
    symfonic_timer_set_deadline (r->timer, 0);
}

/* A timer that its own function arms again for a time already past runs
 * once per iteration: the context polls in between, and a timer that
 * re-arms at once cannot keep it from doing so. */
static void
test_timer_rearmed_in_past (Fixture       *f,
                            gconstpointer  data)
{
  Rearming r = { NULL, 0 };

  r.timer = symfonic_poller_timer (f->poller, on_rearm, &r);
  symfonic_timer_set_deadline (r.timer, g_get_monotonic_time () - 1);
  for (guint i = 1; i <= 3; i++)
    {
      g_assert_true (g_main_context_iteration (f->context, FALSE));
      g_assert_cmpuint (r.runs, ==, i);
    }
  g_assert_false (g_main_context_iteration (f->context, FALSE));
  g_assert_cmpuint (r.runs, ==, 3);
  symfonic_timer_remove (r.timer);
}

typedef struct
{
  Fixture          *f;
  SymfonicDeferred  deferred;
  guint             runs;
} Flusher;

static void
on_deferred (gpointer data)
{
  Flusher *flusher = data;

  flusher->runs++;
  g_string_append (flusher->f->log, "flush;");
}

typedef struct
{
  Watcher  watcher;
  Flusher *flusher;
} DeferringWatcher;

static void
on_ready_defer (gpointer     data,
                GIOCondition condition)
{
  DeferringWatcher *dw = data;

  on_ready (&dw->watcher, condition);
  /* twice: it runs once */
  symfonic_poller_defer (dw->flusher->f->poller, &dw->flusher->deferred);
  symfonic_poller_defer (dw->flusher->f->poller, &dw->flusher->deferred);
}

typedef void (*DeferFunc) (SymfonicPoller   *poller,
                           SymfonicDeferred *deferred);

/* Deferred by @defer outside any dispatch, @flusher runs: not if cancelled
 * before it ran, once if not. */
static void
assert_cancel_then_run (Fixture   *f,
                        Flusher   *flusher,
                        DeferFunc  defer)
{
  guint runs = flusher->runs;

  defer (f->poller, &flusher->deferred);
  symfonic_poller_cancel_deferred (f->poller, &flusher->deferred);
  while (g_main_context_iteration (f->context, FALSE))
    ;
  g_assert_cmpuint (flusher->runs, ==, runs);
  defer (f->poller, &flusher->deferred);
  while (g_main_context_iteration (f->context, FALSE))
    ;
  g_assert_cmpuint (flusher->runs, ==, runs + 1);
}

/* Work deferred by I/O callbacks runs once, after all of that I/O. */
static void
test_deferred (Fixture       *f,
               gconstpointer  data)
{
  int a[2], b[2];
  gboolean done = FALSE;
  Flusher flusher = { f, { on_deferred, &flusher }, 0 };
  DeferringWatcher wa = { { f, "a", 0 }, &flusher };
  DeferringWatcher wb = { { f, "b", 0 }, &flusher };

  socket_pair (a);
  socket_pair (b);
  wa.watcher.fd = a[0];
  wb.watcher.fd = b[0];
  wa.watcher.watch = symfonic_poller_watch (f->poller, a[0], G_IO_IN, on_ready_defer, &wa);
  wb.watcher.watch = symfonic_poller_watch (f->poller, b[0], G_IO_IN, on_ready_defer, &wb);
  g_assert_cmpint (write (a[1], "x", 1), ==, 1);
  g_assert_cmpint (write (b[1], "x", 1), ==, 1);
  /* both are ready before the context looks */
  wb.watcher.done = &done;
  run_until (f, &done);
  while (g_main_context_iteration (f->context, FALSE))
    ;

  g_assert_true (g_str_equal (f->log->str, "a;b;flush;") || g_str_equal (f->log->str, "b;a;flush;"));
  g_assert_cmpuint (flusher.runs, ==, 1);

  assert_cancel_then_run (f, &flusher, symfonic_poller_defer);
  g_assert_cmpuint (flusher.runs, ==, 2);

  symfonic_watch_remove (wa.watcher.watch);
  symfonic_watch_remove (wb.watcher.watch);
  for (guint i = 0; i < 2; i++)
    {
      close (a[i]);
      close (b[i]);
    }
}

typedef struct
{
  Watcher  watcher;
  Flusher *flusher;
  /* made readable by this watcher's callback */
  int      other;
} YieldingWatcher;

static void
on_ready_yield (gpointer     data,
                GIOCondition condition)
{
  YieldingWatcher *yw = data;

  on_ready (&yw->watcher, condition);
  /* twice, the second time as ordinary deferred work: it runs once, and
   * still after the poll */
  symfonic_poller_defer_after_poll (yw->flusher->f->poller, &yw->flusher->deferred);
  symfonic_poller_defer (yw->flusher->f->poller, &yw->flusher->deferred);
  g_assert_cmpint (write (yw->other, "x", 1), ==, 1);
}

/* Work deferred until after the next poll lets I/O that became ready
 * meanwhile go first; ordinary deferred work would have run before it. */
static void
test_deferred_after_poll (Fixture       *f,
                          gconstpointer  data)
{
  int a[2], b[2];
  gboolean done = FALSE;
  Flusher flusher = { f, { on_deferred, &flusher }, 0 };
  YieldingWatcher wa = { { f, "a", 0 }, &flusher, 0 };
  Watcher wb = { f, "b", 0 };

  socket_pair (a);
  socket_pair (b);
  wa.watcher.fd = a[0];
  wa.watcher.done = &done;
  wa.other = b[1];
  wb.fd = b[0];
  wa.watcher.watch = symfonic_poller_watch (f->poller, a[0], G_IO_IN, on_ready_yield, &wa);
  wb.watch = symfonic_poller_watch (f->poller, b[0], G_IO_IN, on_ready, &wb);
  poke (f, a[1], &done);
  while (g_main_context_iteration (f->context, FALSE))
    ;

  g_assert_cmpstr (f->log->str, ==, "a;b;flush;");
  g_assert_cmpuint (flusher.runs, ==, 1);

  /* cancelled while it waits for the poll, and run though queued outside
   * any dispatch */
  assert_cancel_then_run (f, &flusher, symfonic_poller_defer_after_poll);
  g_assert_cmpuint (flusher.runs, ==, 2);

  symfonic_watch_remove (wa.watcher.watch);
  symfonic_watch_remove (wb.watch);
  for (guint i = 0; i < 2; i++)
    {
      close (a[i]);
      close (b[i]);
    }
}

/* Every eventfd of the process (GLib's wake-up descriptors) with the
 * counter the kernel shows for it. */
static GHashTable *
eventfd_counters (void)
{
  GHashTable *counters = g_hash_table_new (NULL, NULL);
  g_autoptr(GDir) dir = g_dir_open ("/proc/self/fd", 0, NULL);
  const char *name;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *link = g_strdup_printf ("/proc/self/fd/%s", name);
      g_autofree char *info_path = g_strdup_printf ("/proc/self/fdinfo/%s", name);
      g_autofree char *target = g_file_read_link (link, NULL);
      g_autofree char *info = NULL;
      const char *count;

      if (target == NULL || !g_str_equal (target, "anon_inode:[eventfd]") ||
          !g_file_get_contents (info_path, &info, NULL, NULL))
        continue;
      count = strstr (info, "eventfd-count:");
      g_assert_nonnull (count);
      g_hash_table_insert (counters, GINT_TO_POINTER (atoi (name)),
                           GSIZE_TO_POINTER (g_ascii_strtoull (count + strlen ("eventfd-count:"), NULL, 16)));
    }

  return counters;
}

/* A dispatch of the poller wakes nobody: the worker's thread is the one
 * running it, so a write to the context's wake-up eventfd would only cost
 * that thread a poll and a read on its next iteration. */
static void
test_dispatch_wakes_nobody (Fixture       *f,
                            gconstpointer  data)
{
  int fds[2];
  gboolean done = FALSE;
  Watcher w = { f, "a", 0, NULL, NULL, 0, 0, &done };
  g_autoptr(GHashTable) before = NULL;
  g_autoptr(GHashTable) after = NULL;
  GHashTableIter iter;
  gpointer fd, count;

  socket_pair (fds);
  w.fd = fds[0];
  w.watch = symfonic_poller_watch (f->poller, fds[0], G_IO_IN, on_ready, &w);
  /* whatever woke the context before is read */
  while (g_main_context_iteration (f->context, FALSE))
    ;
  g_assert_cmpint (write (fds[1], "x", 1), ==, 1);

  before = eventfd_counters ();
  g_assert_true (g_main_context_iteration (f->context, TRUE));
  g_assert_cmpuint (w.calls, ==, 1);
  after = eventfd_counters ();

  g_assert_cmpuint (g_hash_table_size (after), >, 0);
  g_hash_table_iter_init (&iter, after);
  while (g_hash_table_iter_next (&iter, &fd, &count))
    g_assert_cmpuint (GPOINTER_TO_SIZE (count), <=, GPOINTER_TO_SIZE (g_hash_table_lookup (before, fd)));

  symfonic_watch_remove (w.watch);
  close (fds[0]);
  close (fds[1]);
}

/* A callback that iterates the context dispatches the poller again from
 * inside its dispatch: a watch removed there is not called by the outer
 * dispatch, nor freed under it. */
static void
on_ready_iterate (gpointer     data,
                  GIOCondition condition)
{
  Watcher *w = data;

  on_ready (data, condition);
  if (w->calls == 1)
    while (g_main_context_iteration (w->f->context, FALSE))
      ;
}

static void
test_recursion (Fixture       *f,
                gconstpointer  data)
{
  int a[2], b[2];
  Watcher wb = { f, "b", 0 };
  Watcher wa = { f, "a", 0, NULL, &wb.watch };

  socket_pair (a);
  socket_pair (b);
  wa.fd = a[0];
  wb.fd = b[0];
  wa.watch = symfonic_poller_watch (f->poller, a[0], G_IO_IN, on_ready_iterate, &wa);
  wb.watch = symfonic_poller_watch (f->poller, b[0], G_IO_IN, on_ready_iterate, &wb);
  g_assert_cmpint (write (a[1], "x", 1), ==, 1);
  g_assert_cmpint (write (b[1], "x", 1), ==, 1);

  while (g_main_context_iteration (f->context, FALSE))
    ;

  /* whichever ran first read its byte and went on: the other ran inside
   * it, or was removed by it */
  g_assert_cmpuint (wa.calls + wb.calls, >=, 1);
  if (wb.watch != NULL)
    symfonic_watch_remove (wb.watch);
  symfonic_watch_remove (wa.watch);
  g_assert_cmpuint (symfonic_poller_get_n_watches (f->poller), ==, 0);
  for (guint i = 0; i < 2; i++)
    {
      close (a[i]);
      close (b[i]);
    }
}

static gboolean
write_byte (gpointer data)
{
  Watcher *w = data;

  g_string_append (w->f->log, "write;");
  g_assert_cmpint (write (w->fd, "x", 1), ==, 1);

  return G_SOURCE_REMOVE;
}

/* A timer that is due runs after the input that came before it: bytes
 * that reached a socket after the context polled (written here by a
 * source that dispatches first; in a server, while the thread was held
 * up) are read first, so a stalled worker does not time out a peer that
 * did answer. */
static void
test_io_before_due_timers (void)
{
  Fixture f;
  int fds[2];
  Watcher reader = { &f, "read" };
  Watcher writer = { &f, "write" };
  Alarm alarm = { &f, "timer" };
  g_autoptr(GSource) idle = g_idle_source_new ();

  socket_pair (fds);
  reader.fd = fds[0];
  writer.fd = fds[1];
  f.context = g_main_context_new ();
  g_main_context_push_thread_default (f.context);
  f.log = g_string_new (NULL);
  /* of the poller's priority and attached before its source, so it
   * dispatches first in the same iteration */
  g_source_set_priority (idle, G_PRIORITY_DEFAULT);
  g_source_set_callback (idle, write_byte, &writer, NULL);
  g_source_attach (idle, f.context);
  f.poller = symfonic_poller_ref (symfonic_poller_get_thread_default ());

  reader.watch = symfonic_poller_watch (f.poller, fds[0], G_IO_IN, on_ready, &reader);
  alarm.timer = symfonic_poller_timer (f.poller, on_alarm, &alarm);
  symfonic_timer_set_deadline (alarm.timer, g_get_monotonic_time () - 1);

  g_main_context_iteration (f.context, FALSE);
  g_assert_cmpstr (f.log->str, ==, "write;read;timer;");
  g_assert_cmpuint (reader.calls, ==, 1);

  symfonic_watch_remove (reader.watch);
  symfonic_timer_remove (alarm.timer);
  close (fds[0]);
  close (fds[1]);
  fixture_tear_down (&f, NULL);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/poller/readable", Fixture, NULL, fixture_set_up, test_readable, fixture_tear_down);
  g_test_add ("/poller/hand-over", Fixture, NULL, fixture_set_up, test_hand_over, fixture_tear_down);
  g_test_add ("/poller/remove-in-callback", Fixture, NULL, fixture_set_up, test_remove_in_callback, fixture_tear_down);
  g_test_add ("/poller/many-watches-one-source", Fixture, NULL, fixture_set_up, test_many_watches_one_source, fixture_tear_down);
  g_test_add ("/poller/timers-order", Fixture, NULL, fixture_set_up, test_timers_order, fixture_tear_down);
  g_test_add_func ("/poller/io-before-due-timers", test_io_before_due_timers);
  g_test_add ("/poller/timers-random", Fixture, NULL, fixture_set_up, test_timers_random, fixture_tear_down);
  g_test_add ("/poller/timer-thread-default", Fixture, NULL, fixture_set_up, test_timer_thread_default,
              fixture_tear_down);
  g_test_add ("/poller/timer-rearmed-in-past", Fixture, NULL, fixture_set_up, test_timer_rearmed_in_past,
              fixture_tear_down);
  g_test_add ("/poller/deferred", Fixture, NULL, fixture_set_up, test_deferred, fixture_tear_down);
  g_test_add ("/poller/deferred-after-poll", Fixture, NULL, fixture_set_up, test_deferred_after_poll,
              fixture_tear_down);
  g_test_add ("/poller/dispatch-wakes-nobody", Fixture, NULL, fixture_set_up, test_dispatch_wakes_nobody,
              fixture_tear_down);
  g_test_add ("/poller/recursion", Fixture, NULL, fixture_set_up, test_recursion, fixture_tear_down);

  return g_test_run ();
}
