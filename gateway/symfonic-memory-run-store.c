/* symfonic-memory-run-store.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>

#include "symfonic-error.h"
#include "symfonic-memory-run-store.h"

/**
 * SymfonicMemoryRunStore:
 *
 * The #SymfonicRunStore of one process: runs in a table under one lock,
 * each with its recent frames in a queue. Runs that ended are forgotten
 * once their keep time is over, when a run is opened, at most once a
 * second or whenever the store is full. The number of
 * runs it holds, in all and per tenant, is bounded, so that clients that
 * start runs and leave cannot grow the process without end.
 */

typedef struct
{
  char    *principal_id;
  char    *tenant_id;
  guint    max_frames;
  /* the kept frames (GBytes), oldest first; the first has id first_seq */
  GQueue   frames;
  guint64  first_seq;
  gboolean ended;
  gint64   expires_us;
  /* GTasks of readers waiting for more */
  GSList  *waiters;
} Run;

struct _SymfonicMemoryRunStore
{
  GObject     parent_instance;

  GMutex      lock;
  /* run id -> Run */
  GHashTable *runs;
  /* tenant -> runs held, as a pointer-sized count */
  GHashTable *per_tenant;
  guint       max_runs;
  guint       max_runs_per_tenant;
  gint64      next_sweep_us;
};

static void symfonic_memory_run_store_iface_init (SymfonicRunStoreInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SymfonicMemoryRunStore, symfonic_memory_run_store, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_RUN_STORE,
                                                      symfonic_memory_run_store_iface_init))

enum {
  PROP_0,
  PROP_MAX_RUNS,
  PROP_MAX_RUNS_PER_TENANT,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

#define TENANT_KEY(tenant) ((tenant) != NULL ? (tenant) : "")

/* Readers that wait are told once, whatever happened to the run. */
static void
wake_waiters (GSList *waiters)
{
  for (GSList *l = waiters; l != NULL; l = l->next)
    {
      g_autoptr(GTask) task = l->data;

      g_task_return_boolean (task, TRUE);
    }
  g_slist_free (waiters);
}

static void
run_free (gpointer data)
{
  Run *run = data;

  g_queue_clear_full (&run->frames, (GDestroyNotify) g_bytes_unref);
  /* the store is going: its waiting readers are told (an expired run's
   * were taken by forget_expired()) */
  wake_waiters (g_steal_pointer (&run->waiters));
  g_free (run->principal_id);
  g_free (run->tenant_id);
  g_free (run);
}

static void
count_tenant (SymfonicMemoryRunStore *self,
              const char             *tenant_id,
              int                     delta)
{
  guint n = GPOINTER_TO_UINT (g_hash_table_lookup (self->per_tenant, TENANT_KEY (tenant_id))) + delta;

  if (n == 0)
    g_hash_table_remove (self->per_tenant, TENANT_KEY (tenant_id));
  else
    g_hash_table_insert (self->per_tenant, g_strdup (TENANT_KEY (tenant_id)), GUINT_TO_POINTER (n));
}

/* Forgets the runs that ended and whose keep time is over. Called with
 * the lock held: returns their waiting readers, to wake once it is let go
 * (a reader's callback may run at once, and read). */
static GSList *
forget_expired (SymfonicMemoryRunStore *self)
{
  GSList *waiters = NULL;
  gint64 now = g_get_monotonic_time ();
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, self->runs);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      Run *run = value;

      if (run->ended && run->expires_us <= now)
        {
          waiters = g_slist_concat (waiters, g_steal_pointer (&run->waiters));
          count_tenant (self, run->tenant_id, -1);
          g_hash_table_iter_remove (&iter);
        }
    }

  return waiters;
}

static gboolean
is_full (SymfonicMemoryRunStore *self,
         const char             *tenant_id)
{
  return g_hash_table_size (self->runs) >= self->max_runs ||
         GPOINTER_TO_UINT (g_hash_table_lookup (self->per_tenant, TENANT_KEY (tenant_id))) >= self->max_runs_per_tenant;
}

static gboolean
memory_open_run (SymfonicRunStore  *store,
                 const char        *run_id,
                 const char        *principal_id,
                 const char        *tenant_id,
                 guint              max_frames,
                 GError           **error)
{
  SymfonicMemoryRunStore *self = SYMFONIC_MEMORY_RUN_STORE (store);
  GSList *waiters = NULL;
  gboolean full;
  Run *run;

  g_mutex_lock (&self->lock);
  full = is_full (self, tenant_id);
  if (full || g_get_monotonic_time () >= self->next_sweep_us)
    {
      waiters = forget_expired (self);
      self->next_sweep_us = g_get_monotonic_time () + G_USEC_PER_SEC;
      full = is_full (self, tenant_id);
    }
  if (!full)
    {
      run = g_new0 (Run, 1);
      run->principal_id = g_strdup (principal_id);
      run->tenant_id = g_strdup (tenant_id);
      run->max_frames = max_frames;
      run->first_seq = 1;
      g_queue_init (&run->frames);
      g_hash_table_insert (self->runs, g_strdup (run_id), run);
      count_tenant (self, tenant_id, 1);
    }
  g_mutex_unlock (&self->lock);
  wake_waiters (waiters);

  if (full)
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_OVERLOADED,
                           _("The gateway keeps as many resumable runs as it may"));
      return FALSE;
    }

  return TRUE;
}

static void
memory_append (SymfonicRunStore *store,
               const char       *run_id,
               guint64           seq,
               GBytes           *frame)
{
  SymfonicMemoryRunStore *self = SYMFONIC_MEMORY_RUN_STORE (store);
  GSList *waiters = NULL;

  g_mutex_lock (&self->lock);
  {
    Run *run = g_hash_table_lookup (self->runs, run_id);

    if (run != NULL && !run->ended && seq == run->first_seq + run->frames.length)
      {
        g_queue_push_tail (&run->frames, g_bytes_ref (frame));
        if (run->frames.length > run->max_frames)
          {
            g_bytes_unref (g_queue_pop_head (&run->frames));
            run->first_seq++;
          }
        waiters = g_steal_pointer (&run->waiters);
      }
    else if (run != NULL)
      g_critical ("Run %s got frame %" G_GUINT64_FORMAT " out of order", run_id, seq);
  }
  g_mutex_unlock (&self->lock);

  wake_waiters (waiters);
}

static void
memory_close_run (SymfonicRunStore *store,
                  const char       *run_id,
                  guint             keep_seconds)
{
  SymfonicMemoryRunStore *self = SYMFONIC_MEMORY_RUN_STORE (store);
  GSList *waiters = NULL;

  g_mutex_lock (&self->lock);
  {
    Run *run = g_hash_table_lookup (self->runs, run_id);

    if (run != NULL && !run->ended)
      {
        run->ended = TRUE;
        run->expires_us = g_get_monotonic_time () + (gint64) keep_seconds * G_USEC_PER_SEC;
        waiters = g_steal_pointer (&run->waiters);
      }
  }
  g_mutex_unlock (&self->lock);

  wake_waiters (waiters);
}

/* A run another principal or tenant started is not there for the asker. */
static Run *
lookup_for (SymfonicMemoryRunStore *self,
            const char             *run_id,
            const char             *principal_id,
            const char             *tenant_id)
{
  Run *run = g_hash_table_lookup (self->runs, run_id);

  if (run == NULL || g_strcmp0 (run->principal_id, principal_id) != 0 ||
      g_strcmp0 (run->tenant_id, tenant_id) != 0)
    return NULL;
  if (run->ended && run->expires_us <= g_get_monotonic_time ())
    return NULL;

  return run;
}

static GPtrArray *
memory_read (SymfonicRunStore  *store,
             const char        *run_id,
             const char        *principal_id,
             const char        *tenant_id,
             guint64            after,
             gboolean          *ended,
             GError           **error)
{
  SymfonicMemoryRunStore *self = SYMFONIC_MEMORY_RUN_STORE (store);
  G_GNUC_UNUSED g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  Run *run = lookup_for (self, run_id, principal_id, tenant_id);
  GPtrArray *frames;
  guint64 last;
  GList *l;

  if (run == NULL)
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_NOT_FOUND, _("No such run"));
      return NULL;
    }
  last = run->first_seq + run->frames.length - 1;
  /* checked first: after + 1 wraps for the largest id */
  if (after > last)
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST, _("The run has no frame with that id"));
      return NULL;
    }
  if (after + 1 < run->first_seq)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_GONE,
                   _("The run keeps frames from %" G_GUINT64_FORMAT " on"), run->first_seq);
      return NULL;
    }

  /* the new frames are at the end: walk back to the first of them */
  frames = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  l = run->frames.tail;
  for (guint64 seq = last; l != NULL && seq > after + 1; seq--)
    l = l->prev;
  for (; l != NULL && after < last; l = l->next)
    g_ptr_array_add (frames, g_bytes_ref (l->data));
  *ended = run->ended && after + frames->len >= last;

  return frames;
}

static void
memory_wait_async (SymfonicRunStore    *store,
                   const char          *run_id,
                   guint64              after,
                   GCancellable        *cancellable,
                   GAsyncReadyCallback  callback,
                   gpointer             user_data)
{
  SymfonicMemoryRunStore *self = SYMFONIC_MEMORY_RUN_STORE (store);
  /* the task does not hold the store, which holds it while it waits */
  g_autoptr(GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  gboolean now = TRUE;

  g_task_set_source_tag (task, memory_wait_async);
  g_mutex_lock (&self->lock);
  {
    Run *run = g_hash_table_lookup (self->runs, run_id);

    if (run != NULL && !run->ended && run->first_seq + run->frames.length - 1 <= after)
      {
        run->waiters = g_slist_prepend (run->waiters, g_object_ref (task));
        now = FALSE;
      }
  }
  g_mutex_unlock (&self->lock);

  if (now)
    g_task_return_boolean (task, TRUE);
}

static gboolean
memory_wait_finish (SymfonicRunStore  *store,
                    GAsyncResult      *result,
                    GError           **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
symfonic_memory_run_store_iface_init (SymfonicRunStoreInterface *iface)
{
  iface->open_run = memory_open_run;
  iface->append = memory_append;
  iface->close_run = memory_close_run;
  iface->read = memory_read;
  iface->wait_async = memory_wait_async;
  iface->wait_finish = memory_wait_finish;
}

static void
symfonic_memory_run_store_finalize (GObject *object)
{
  SymfonicMemoryRunStore *self = (SymfonicMemoryRunStore *) object;

  g_hash_table_unref (self->runs);
  g_hash_table_unref (self->per_tenant);
  g_mutex_clear (&self->lock);

  G_OBJECT_CLASS (symfonic_memory_run_store_parent_class)->finalize (object);
}

static void
symfonic_memory_run_store_get_property (GObject    *object,
                                        guint       prop_id,
                                        GValue     *value,
                                        GParamSpec *pspec)
{
  SymfonicMemoryRunStore *self = SYMFONIC_MEMORY_RUN_STORE (object);

  switch (prop_id)
    {
    case PROP_MAX_RUNS:
      g_value_set_uint (value, self->max_runs);
      break;
    case PROP_MAX_RUNS_PER_TENANT:
      g_value_set_uint (value, self->max_runs_per_tenant);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_memory_run_store_set_property (GObject      *object,
                                        guint         prop_id,
                                        const GValue *value,
                                        GParamSpec   *pspec)
{
  SymfonicMemoryRunStore *self = SYMFONIC_MEMORY_RUN_STORE (object);

  switch (prop_id)
    {
    case PROP_MAX_RUNS:
      self->max_runs = g_value_get_uint (value);
      break;
    case PROP_MAX_RUNS_PER_TENANT:
      self->max_runs_per_tenant = g_value_get_uint (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_memory_run_store_class_init (SymfonicMemoryRunStoreClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = symfonic_memory_run_store_finalize;
  object_class->get_property = symfonic_memory_run_store_get_property;
  object_class->set_property = symfonic_memory_run_store_set_property;

  /**
   * SymfonicMemoryRunStore:max-runs:
   *
   * How many runs the store holds at once, running or ended and still
   * readable; a run past it is refused with %SYMFONIC_ERROR_OVERLOADED.
   */
  properties[PROP_MAX_RUNS] =
    g_param_spec_uint ("max-runs", "Maximum runs", "Resumable runs held at once",
                       1, G_MAXUINT, SYMFONIC_MEMORY_RUN_STORE_DEFAULT_MAX_RUNS,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicMemoryRunStore:max-runs-per-tenant:
   *
   * How many runs of one tenant the store holds at once.
   */
  properties[PROP_MAX_RUNS_PER_TENANT] =
    g_param_spec_uint ("max-runs-per-tenant", "Maximum runs per tenant", "Resumable runs of one tenant held at once",
                       1, G_MAXUINT, SYMFONIC_MEMORY_RUN_STORE_DEFAULT_MAX_RUNS_PER_TENANT,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
symfonic_memory_run_store_init (SymfonicMemoryRunStore *self)
{
  g_mutex_init (&self->lock);
  self->runs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, run_free);
  self->per_tenant = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}

/**
 * symfonic_memory_run_store_new:
 *
 * Creates an empty in-process store with the default bounds.
 *
 * Returns: (transfer full): a new #SymfonicMemoryRunStore
 */
SymfonicMemoryRunStore *
symfonic_memory_run_store_new (void)
{
  return g_object_new (SYMFONIC_TYPE_MEMORY_RUN_STORE, NULL);
}

/**
 * symfonic_memory_run_store_get_n_runs:
 * @self: a #SymfonicMemoryRunStore
 *
 * Returns: how many runs the store holds, running or ended
 */
guint
symfonic_memory_run_store_get_n_runs (SymfonicMemoryRunStore *self)
{
  g_autoptr(GMutexLocker) locker = NULL;

  g_return_val_if_fail (SYMFONIC_IS_MEMORY_RUN_STORE (self), 0);

  locker = g_mutex_locker_new (&self->lock);
  return g_hash_table_size (self->runs);
}
