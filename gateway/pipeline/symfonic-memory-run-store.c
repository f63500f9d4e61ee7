/* symfonic-memory-run-store.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-error.h"
#include "symfonic-memory-run-store-private.h"

/**
 * SymfonicMemoryRunStore:
 *
 * The #SymfonicRunStore of one process: runs in a table under one lock,
 * each with its recent frames in a ring. Runs that ended are forgotten
 * once their keep time is over, when a run is opened, at most once a
 * second or whenever the store is full. What it holds is bounded in runs
 * (in all, per tenant and per principal) and in bytes, so that clients
 * that start runs and leave cannot grow the process without end: a new
 * run is refused without room for its `max_bytes`, and a run that grows
 * while the store is full lets its own oldest frames go.
 */

/* One kept frame: its bytes behind an 8-byte header, in one allocation,
 * shared with the readers it was handed to (GRcBox's header is 32 bytes,
 * half an average frame). */
typedef struct
{
  gatomicrefcount ref_count;
  guint32         length;
  char            data[];
} Frame;

typedef struct
{
  char    *principal_id;
  char    *tenant_id;
  guint    max_frames;
  guint64  max_bytes;
  /* the kept frames, oldest first from @head, in a ring of @capacity
   * that grows to max_frames at most; the first has id first_seq */
  Frame  **frames;
  guint    capacity;
  guint    head;
  guint    length;
  guint64  bytes;
  guint64  first_seq;
  gboolean ended;
  gint64   expires_us;
  /* GTasks of readers waiting for more */
  GSList  *waiters;
  /* readers following the run now, and when the last one left (0: none
   * came back yet) */
  guint    readers;
  gint64   last_left_us;
} Run;

struct _SymfonicMemoryRunStore
{
  GObject            parent_instance;

  GMutex             lock;
  /* run id -> Run */
  GHashTable        *runs;
  /* tenant, principal -> runs held, as a pointer-sized count */
  GHashTable        *per_tenant;
  GHashTable        *per_principal;
  SymfonicRunBounds  bounds;
  /* the bytes of all the frames kept */
  guint64            bytes;
  gint64             next_sweep_us;
};

static void symfonic_memory_run_store_iface_init (SymfonicRunStoreInterface *iface);

/**
 * SymfonicMemoryRunStoreClass:
 * @parent_class: the parent class
 *
 * The class of #SymfonicMemoryRunStore, a final type: there is nothing to override.
 */
G_DEFINE_FINAL_TYPE_WITH_CODE (SymfonicMemoryRunStore, symfonic_memory_run_store, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_RUN_STORE,
                                                      symfonic_memory_run_store_iface_init))

enum {
  PROP_0,
  PROP_FIRST_BOUND,
  N_PROPS = PROP_FIRST_BOUND + SYMFONIC_RUN_N_BOUNDS
};

static GParamSpec *properties[N_PROPS];

/* runs without a tenant or principal count as one */
#define COUNT_KEY(id) ((id) != NULL ? (id) : "")

/* the ring's first size: most runs are short */
#define MIN_CAPACITY 16

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

static Frame *
frame_new (const char *data,
           gsize       length)
{
  Frame *frame = g_malloc (sizeof (Frame) + length);

  g_atomic_ref_count_init (&frame->ref_count);
  frame->length = length;
  memcpy (frame->data, data, length);

  return frame;
}

static Frame *
frame_ref (Frame *frame)
{
  g_atomic_ref_count_inc (&frame->ref_count);

  return frame;
}

static void
frame_unref (Frame *frame)
{
  if (g_atomic_ref_count_dec (&frame->ref_count))
    g_free (frame);
}

static Frame *
frame_at (Run   *run,
          guint  i)
{
  return run->frames[(run->head + i) % run->capacity];
}

/* Lets the oldest frame go. Called with the lock held. */
static void
drop_oldest (SymfonicMemoryRunStore *self,
             Run                    *run)
{
  Frame *frame = frame_at (run, 0);

  run->bytes -= frame->length;
  self->bytes -= frame->length;
  frame_unref (frame);
  run->head = (run->head + 1) % run->capacity;
  run->length--;
  run->first_seq++;
}

/* Adds a frame to a run with room for it. Called with the lock held. */
static void
push_frame (SymfonicMemoryRunStore *self,
            Run                    *run,
            Frame                  *frame)
{
  if (run->length == run->capacity)
    {
      /* grows by doubling, so a run reallocates a few times in its life,
       * and unrolls the ring into the new room */
      guint capacity = MIN (MAX (run->capacity * 2, MIN_CAPACITY), run->max_frames);
      Frame **frames = g_new (Frame *, capacity);

      for (guint i = 0; i < run->length; i++)
        frames[i] = frame_at (run, i);
      g_free (run->frames);
      run->frames = frames;
      run->capacity = capacity;
      run->head = 0;
    }
  run->frames[(run->head + run->length) % run->capacity] = frame;
  run->length++;
  run->bytes += frame->length;
  self->bytes += frame->length;
}

static void
run_free (gpointer data)
{
  Run *run = data;

  for (guint i = 0; i < run->length; i++)
    frame_unref (frame_at (run, i));
  g_free (run->frames);
  /* the store is going: its waiting readers are told (an expired run's
   * were taken by forget_expired()) */
  wake_waiters (g_steal_pointer (&run->waiters));
  g_free (run->principal_id);
  g_free (run->tenant_id);
  g_free (run);
}

static guint
count_of (GHashTable *counts,
          const char *id)
{
  return GPOINTER_TO_UINT (g_hash_table_lookup (counts, COUNT_KEY (id)));
}

static void
count (GHashTable *counts,
       const char *id,
       int         delta)
{
  guint n = count_of (counts, id) + delta;

  if (n == 0)
    g_hash_table_remove (counts, COUNT_KEY (id));
  else
    g_hash_table_insert (counts, g_strdup (COUNT_KEY (id)), GUINT_TO_POINTER (n));
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
          count (self->per_tenant, run->tenant_id, -1);
          count (self->per_principal, run->principal_id, -1);
          self->bytes -= run->bytes;
          g_hash_table_iter_remove (&iter);
        }
    }

  return waiters;
}

/* Full for a new run: at a bound in runs, or without room for all the
 * bytes the run may keep (a run that wants more than the store holds
 * needs it empty). */
static gboolean
is_full (SymfonicMemoryRunStore *self,
         const char             *principal_id,
         const char             *tenant_id,
         guint64                 max_bytes)
{
  const SymfonicRunBounds *bounds = &self->bounds;

  return g_hash_table_size (self->runs) >= bounds->max_runs ||
         count_of (self->per_tenant, tenant_id) >= bounds->max_runs_per_tenant ||
         count_of (self->per_principal, principal_id) >= bounds->max_runs_per_principal ||
         self->bytes > bounds->max_bytes - MIN (max_bytes, bounds->max_bytes);
}

static gboolean
memory_open_run (SymfonicRunStore  *store,
                 const char        *run_id,
                 const char        *principal_id,
                 const char        *tenant_id,
                 guint              max_frames,
                 guint64            max_bytes,
                 GError           **error)
{
  SymfonicMemoryRunStore *self = SYMFONIC_MEMORY_RUN_STORE (store);
  GSList *waiters = NULL;
  gboolean full;
  Run *run;

  g_mutex_lock (&self->lock);
  full = is_full (self, principal_id, tenant_id, max_bytes);
  if (full || g_get_monotonic_time () >= self->next_sweep_us)
    {
      waiters = forget_expired (self);
      self->next_sweep_us = g_get_monotonic_time () + G_USEC_PER_SEC;
      full = is_full (self, principal_id, tenant_id, max_bytes);
    }
  if (!full)
    {
      run = g_new0 (Run, 1);
      run->principal_id = g_strdup (principal_id);
      run->tenant_id = g_strdup (tenant_id);
      run->max_frames = max_frames;
      run->max_bytes = max_bytes;
      run->first_seq = 1;
      g_hash_table_insert (self->runs, g_strdup (run_id), run);
      count (self->per_tenant, tenant_id, 1);
      count (self->per_principal, principal_id, 1);
    }
  g_mutex_unlock (&self->lock);
  wake_waiters (waiters);

  if (full)
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_OVERLOADED,
                           "The gateway keeps as many resumable runs as it may");
      return FALSE;
    }

  return TRUE;
}

static void
memory_append (SymfonicRunStore *store,
               const char       *run_id,
               guint64           seq,
               const char       *data,
               gsize             length)
{
  SymfonicMemoryRunStore *self = SYMFONIC_MEMORY_RUN_STORE (store);
  GSList *waiters = NULL;
  /* copied before the lock is taken, which the store holds only
   * briefly, unless no run could keep it */
  Frame *frame = length <= MIN (self->bounds.max_bytes, G_MAXUINT32) ? frame_new (data, length) : NULL;

  g_mutex_lock (&self->lock);
  {
    Run *run = g_hash_table_lookup (self->runs, run_id);

    if (run != NULL && !run->ended && seq == run->first_seq + run->length)
      {
        /* the run pays for its own growth, never another run */
        while (run->length > 0 &&
               (run->length >= run->max_frames || run->bytes + length > run->max_bytes ||
                self->bytes + length > self->bounds.max_bytes))
          drop_oldest (self, run);
        if (frame != NULL && length <= run->max_bytes && self->bytes + length <= self->bounds.max_bytes)
          push_frame (self, run, g_steal_pointer (&frame));
        else
          /* too large to keep: readable again from the next frame */
          run->first_seq++;
        waiters = g_steal_pointer (&run->waiters);
      }
    else if (run != NULL)
      g_critical ("Run %s got frame %" G_GUINT64_FORMAT " out of order", run_id, seq);
  }
  g_mutex_unlock (&self->lock);

  g_clear_pointer (&frame, frame_unref);
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

  if (run == NULL)
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_NOT_FOUND, "No such run");
      return NULL;
    }
  last = run->first_seq + run->length - 1;
  /* checked first: after + 1 wraps for the largest id */
  if (after > last)
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST, "The run has no frame with that id");
      return NULL;
    }
  if (after + 1 < run->first_seq)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_GONE,
                   "The run keeps frames from %" G_GUINT64_FORMAT " on", run->first_seq);
      return NULL;
    }

  frames = g_ptr_array_new_full (last - after, (GDestroyNotify) g_bytes_unref);
  for (guint i = after + 1 - run->first_seq; i < run->length; i++)
    {
      Frame *frame = frame_at (run, i);

      g_ptr_array_add (frames, g_bytes_new_with_free_func (frame->data, frame->length, (GDestroyNotify) frame_unref,
                                                           frame_ref (frame)));
    }
  *ended = run->ended && after + frames->len >= last;

  return frames;
}

static void
memory_wait_async (SymfonicRunStore    *store,
                   const char          *run_id,
                   const char          *principal_id,
                   const char          *tenant_id,
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

    if (run != NULL && !run->ended && run->first_seq + run->length - 1 <= after)
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
memory_note_reader (SymfonicRunStore *store,
                    const char       *run_id,
                    const char       *principal_id,
                    const char       *tenant_id,
                    gboolean          following)
{
  SymfonicMemoryRunStore *self = SYMFONIC_MEMORY_RUN_STORE (store);
  G_GNUC_UNUSED g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  Run *run = lookup_for (self, run_id, principal_id, tenant_id);

  if (run == NULL)
    return;
  if (following)
    {
      run->readers++;
      return;
    }
  /* a leaving reader that was never counted is not one */
  if (run->readers == 0)
    return;
  run->readers--;
  run->last_left_us = g_get_monotonic_time ();
}

static void
memory_get_unread_async (SymfonicRunStore    *store,
                         const char          *run_id,
                         const char          *principal_id,
                         const char          *tenant_id,
                         GCancellable        *cancellable,
                         GAsyncReadyCallback  callback,
                         gpointer             user_data)
{
  SymfonicMemoryRunStore *self = SYMFONIC_MEMORY_RUN_STORE (store);
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  gint64 unread_ms = -1;

  g_task_set_source_tag (task, memory_get_unread_async);
  g_mutex_lock (&self->lock);
  {
    Run *run = lookup_for (self, run_id, principal_id, tenant_id);

    if (run != NULL && run->readers > 0)
      unread_ms = 0;
    else if (run != NULL && run->last_left_us > 0)
      unread_ms = (g_get_monotonic_time () - run->last_left_us) / 1000;
  }
  g_mutex_unlock (&self->lock);

  g_task_return_int (task, unread_ms);
}

static void
symfonic_memory_run_store_iface_init (SymfonicRunStoreInterface *iface)
{
  iface->try_open_run = memory_open_run;
  iface->append = memory_append;
  iface->close_run = memory_close_run;
  iface->try_read = memory_read;
  iface->wait_async = memory_wait_async;
  iface->wait_finish = memory_wait_finish;
  iface->note_reader = memory_note_reader;
  iface->get_unread_async = memory_get_unread_async;
}

/* --- bounds --------------------------------------------------------- */

/**
 * SymfonicMemoryRunStore:max-runs:
 *
 * How many runs the store holds at once, running or ended and still
 * readable; a run past it is refused with %SYMFONIC_ERROR_OVERLOADED.
 */
/**
 * SymfonicMemoryRunStore:max-runs-per-tenant:
 *
 * How many runs of one tenant the store holds at once.
 */
/**
 * SymfonicMemoryRunStore:max-runs-per-principal:
 *
 * How many runs of one principal the store holds at once, so that one
 * principal cannot take all of its tenant's runs. Runs without a
 * principal count as one principal's.
 */
/**
 * SymfonicMemoryRunStore:max-bytes:
 *
 * How many bytes of frames the store holds at once, for all its runs. A
 * new run is refused with %SYMFONIC_ERROR_OVERLOADED unless the store
 * has room for all the bytes the run may keep; a run that grows when
 * the store is full lets its own oldest frames go.
 */

/* Makes the properties of the bounds, in their order, into @pspecs. */
void
symfonic_run_bounds_param_specs (GParamSpec **pspecs)
{
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS;

  pspecs[SYMFONIC_RUN_BOUND_MAX_RUNS] =
    g_param_spec_uint ("max-runs", "Maximum runs", "Resumable runs held at once",
                       1, G_MAXUINT, SYMFONIC_MEMORY_RUN_STORE_DEFAULT_MAX_RUNS, flags);
  pspecs[SYMFONIC_RUN_BOUND_MAX_RUNS_PER_TENANT] =
    g_param_spec_uint ("max-runs-per-tenant", "Maximum runs per tenant", "Resumable runs of one tenant held at once",
                       1, G_MAXUINT, SYMFONIC_MEMORY_RUN_STORE_DEFAULT_MAX_RUNS_PER_TENANT, flags);
  pspecs[SYMFONIC_RUN_BOUND_MAX_RUNS_PER_PRINCIPAL] =
    g_param_spec_uint ("max-runs-per-principal", "Maximum runs per principal",
                       "Resumable runs of one principal held at once",
                       1, G_MAXUINT, SYMFONIC_MEMORY_RUN_STORE_DEFAULT_MAX_RUNS_PER_PRINCIPAL, flags);
  pspecs[SYMFONIC_RUN_BOUND_MAX_BYTES] =
    g_param_spec_uint64 ("max-bytes", "Maximum bytes", "Bytes of frames held at once, for all runs",
                         1, G_MAXUINT64, SYMFONIC_MEMORY_RUN_STORE_DEFAULT_MAX_BYTES, flags);
}

/* The value of the @bound'th property; FALSE if there is no such bound. */
gboolean
symfonic_run_bounds_get_property (const SymfonicRunBounds *bounds,
                                  SymfonicRunBound         bound,
                                  GValue                  *value)
{
  switch (bound)
    {
    case SYMFONIC_RUN_BOUND_MAX_RUNS:
      g_value_set_uint (value, bounds->max_runs);
      return TRUE;
    case SYMFONIC_RUN_BOUND_MAX_RUNS_PER_TENANT:
      g_value_set_uint (value, bounds->max_runs_per_tenant);
      return TRUE;
    case SYMFONIC_RUN_BOUND_MAX_RUNS_PER_PRINCIPAL:
      g_value_set_uint (value, bounds->max_runs_per_principal);
      return TRUE;
    case SYMFONIC_RUN_BOUND_MAX_BYTES:
      g_value_set_uint64 (value, bounds->max_bytes);
      return TRUE;
    default:
      return FALSE;
    }
}

gboolean
symfonic_run_bounds_set_property (SymfonicRunBounds *bounds,
                                  SymfonicRunBound   bound,
                                  const GValue      *value)
{
  switch (bound)
    {
    case SYMFONIC_RUN_BOUND_MAX_RUNS:
      bounds->max_runs = g_value_get_uint (value);
      return TRUE;
    case SYMFONIC_RUN_BOUND_MAX_RUNS_PER_TENANT:
      bounds->max_runs_per_tenant = g_value_get_uint (value);
      return TRUE;
    case SYMFONIC_RUN_BOUND_MAX_RUNS_PER_PRINCIPAL:
      bounds->max_runs_per_principal = g_value_get_uint (value);
      return TRUE;
    case SYMFONIC_RUN_BOUND_MAX_BYTES:
      bounds->max_bytes = g_value_get_uint64 (value);
      return TRUE;
    default:
      return FALSE;
    }
}

static void
symfonic_memory_run_store_finalize (GObject *object)
{
  SymfonicMemoryRunStore *self = (SymfonicMemoryRunStore *) object;

  g_hash_table_unref (self->runs);
  g_hash_table_unref (self->per_tenant);
  g_hash_table_unref (self->per_principal);
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

  if (!symfonic_run_bounds_get_property (&self->bounds, prop_id - PROP_FIRST_BOUND, value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
symfonic_memory_run_store_set_property (GObject      *object,
                                        guint         prop_id,
                                        const GValue *value,
                                        GParamSpec   *pspec)
{
  SymfonicMemoryRunStore *self = SYMFONIC_MEMORY_RUN_STORE (object);

  if (!symfonic_run_bounds_set_property (&self->bounds, prop_id - PROP_FIRST_BOUND, value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
symfonic_memory_run_store_class_init (SymfonicMemoryRunStoreClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = symfonic_memory_run_store_finalize;
  object_class->get_property = symfonic_memory_run_store_get_property;
  object_class->set_property = symfonic_memory_run_store_set_property;

  symfonic_run_bounds_param_specs (&properties[PROP_FIRST_BOUND]);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
symfonic_memory_run_store_init (SymfonicMemoryRunStore *self)
{
  g_mutex_init (&self->lock);
  self->runs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, run_free);
  self->per_tenant = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->per_principal = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
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
 * Gets how many runs the store holds, which its
 * #SymfonicMemoryRunStore:max-runs bounds.
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

/**
 * symfonic_memory_run_store_get_n_bytes:
 * @self: a #SymfonicMemoryRunStore
 *
 * Gets how much the store holds, which its #SymfonicMemoryRunStore:max-
 * bytes bounds.
 *
 * Returns: how many bytes of frames the store holds, for all its runs
 */
guint64
symfonic_memory_run_store_get_n_bytes (SymfonicMemoryRunStore *self)
{
  g_autoptr(GMutexLocker) locker = NULL;

  g_return_val_if_fail (SYMFONIC_IS_MEMORY_RUN_STORE (self), 0);

  locker = g_mutex_locker_new (&self->lock);
  return self->bytes;
}
