/* symfonic-redis-run-store.c: resumable runs in Redis, read from any instance
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-error.h"
#include "symfonic-poller-private.h"
#include "symfonic-redis-client-private.h"
#include "symfonic-redis-run-store-private.h"
#include "symfonic-redis-script-private.h"
#include "symfonic-run-store.h"
#include "symfonic-store-private.h"

/* The run role of the `redis` store type: a resumable run's frames in a
 * Redis Stream whose entry ids are the frame ids (frame N is the entry
 * N-0, its one field the frame's bytes as its client got them), and the
 * run's owner, state and producer's lease in a hash beside it (see
 * symfonic-run-note.lua). Both keys sit under the tenant's hash tag: a
 * reader names the run by its id alone, and its key is made from the
 * tenant the reader authenticated for, so a reader of another tenant
 * finds nothing to tell it from a run that never was.
 *
 * A frame that starts with its id line ("id: N\n", as every typed and
 * chunk frame does) is kept without it, in the field d; any other whole,
 * in the field f: the entry's id says it again.
 *
 * Writes. Each worker has a connection of its own for runs. A run's
 * frames are gathered during a main-loop iteration and sent after it, as
 * one XADD each (MAXLEN ~ resume-frames), an XTRIM MINID when the run's
 * bytes passed resume-bytes, and what the hash says of them (last frame,
 * bytes) in the same write: one round trip per iteration per run,
 * whatever the number of frames. Every third of the lease TTL, and after
 * the first frames (which give the stream its TTL), that is the note
 * script, which renews the producer's lease on Redis' clock; in between a
 * plain HSET. A run with no frame for a third of the TTL is renewed by
 * itself. The end writes
 * the entry N-1 after the last frame N, which tells a reader that follows
 * the run that it ended, and gives both keys resume-seconds to live.
 * A write that fails (Redis down, a deadline passed) ends the run's
 * writing: its client streams on, and readers get what reached Redis,
 * then the error frame of a run whose producer died, once its lease
 * expired (the run is marked lost at its end if Redis answers by then).
 *
 * Reads. A read is one script (symfonic-run-read.lua): the owner, the
 * bounds and the frames after the reader's id (XRANGE with an exclusive
 * start). Following a live run is one XREAD BLOCK per worker, on a second
 * connection that does nothing else, over every run a reader of that
 * worker waits on: when the set changes while the XREAD is held, CLIENT
 * UNBLOCK on the first connection sends it again with the new set. What
 * it brings is kept per run and handed to each reader from its own id on,
 * so readers of one run share the frames and each gets every frame once;
 * a reader woken reads them at once, with no round trip. A followed run
 * with nothing new for a second has its lease looked at: a producer
 * whose lease expired without the run's end wakes its readers, whose
 * read then says so.
 *
 * Readers. A worker counts the readers of its own that follow each run;
 * when the first comes it says so in the run's hash, under its name,
 * until when it vouches for them (symfonic-run-readers.lua, on Redis'
 * clock), renewed by the tick while any follows; when the last leaves,
 * it says when. A detached run's producer, on whichever instance, asks
 * how long the run has gone without a reader before it gives up on it.
 *
 * Every command has the store's deadline; the XREAD its block time more.
 * Nothing here blocks a worker. */

/* how long one XREAD holds, and how often a quiet followed run's lease is
 * looked at */
#define FOLLOW_BLOCK_MS   1000
#define CHECK_INTERVAL_US G_USEC_PER_SEC
/* frames a read or an XREAD brings at most, per run */
#define READ_COUNT        1024
/* frames kept per followed run for the readers that are behind */
#define CACHE_MAX         4096
/* how long the keys of a running run outlive its lease: a run whose
 * producer died stays readable, with its error frame, that long */
#define ORPHAN_KEEP_MS    (300 * 1000)
/* a followed run nobody waited on for that long is forgotten */
#define FOLLOW_IDLE_US    (5 * G_USEC_PER_SEC)
/* how long a worker vouches that its readers follow a run: it says so
 * again every CHECK_INTERVAL_US while they do, so this holds with room
 * for a late tick (symfonic-run-readers.lua) */
#define READER_LEASE_MS   3000

typedef struct _Worker Worker;

struct _SymfonicRedisRunStore
{
  GObject               parent_instance;

  SymfonicRedisAddress  address;
  char                 *password;
  char                 *key_prefix;
  guint                 timeout_ms;
  guint                 lease_ttl_ms;

  GMutex                lock;
  /* SymfonicPoller -> Worker */
  GHashTable           *workers;
  GPtrArray            *all_workers;
};

/* One run this worker produces. Held by its commands in flight. */
typedef struct
{
  gatomicrefcount   ref_count;
  Worker           *worker;
  char             *run_id;
  char             *keys[2];
  char             *principal_id;
  char             *tenant_id;
  guint             max_frames;
  guint64           max_bytes;
  /* the last frame's id; the first one the byte cap keeps, and the
   * sizes (oldest first) and bytes from it on */
  guint64           last;
  guint64           first;
  guint64           trimmed_to;
  GQueue            sizes;
  guint64           bytes;
  /* frames of this iteration, not sent yet: their bytes end to end */
  GString          *batch;
  GArray           *batch_lengths;
  guint64           batch_first;
  gboolean          opening;
  gboolean          note_due;
  /* the run ended: its end goes with its last frames */
  gboolean          end_due;
  guint64           keep_ms;
  gboolean          queued;
  gboolean          broken;
  gboolean          closed;
  gint64            noted_at;
  /* a note went after the stream's first frames: it has its TTL */
  gboolean          stream_expires;
} Writer;

/* One waiter on a followed run. */
typedef struct
{
  GTask   *task;
  guint64  after;
} Waiter;

typedef struct
{
  guint64  seq;
  GBytes  *frame;
} Entry;

/* A run that readers of this worker follow. */
typedef struct
{
  char     *keys[2];
  char     *principal_id;
  char     *tenant_id;
  /* the last frame seen, and the frames up to it the readers may still
   * want, contiguous, oldest first */
  guint64   seen;
  GQueue    cache;
  gboolean  ended;
  /* something went wrong or the producer may have died: readers read
   * from Redis, not from here */
  gboolean  suspect;
  gboolean  checking;
  guint     xread_round;
  GSList   *waiters;
  gint64    idle_since;
  gint64    waited_at;
} Followed;

struct _Worker
{
  SymfonicRedisRunStore *store;
  GMainContext          *context;
  SymfonicRedisClient   *client;
  SymfonicRedisClient   *blocker;
  SymfonicRedisStats     stats;
  SymfonicRedisStats     blocker_stats;
  gboolean               ever_up;
  gboolean               start_over;
  SymfonicTimer         *start_timer;
  /* run id -> Writer */
  GHashTable            *writers;
  /* writers with something to send after this iteration */
  GPtrArray             *dirty;
  SymfonicDeferred       flush;
  /* reads asked before the first connection was up */
  GQueue                 starting_reads;
  SymfonicTimer         *tick;
  /* stream key -> Followed */
  GHashTable            *followed;
  gint64                 blocker_id;
  gboolean               xread_in_flight;
  guint                  xread_round;
  gboolean               unblocking;
  SymfonicDeferred       arm;
  gboolean               warned;
  /* what this worker is called in a run's hash, and the runs its readers
   * follow: hash key -> how many readers */
  char                  *name;
  GHashTable            *reading;
};

static void symfonic_redis_run_store_iface_init (SymfonicRunStoreInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SymfonicRedisRunStore, symfonic_redis_run_store, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_RUN_STORE, symfonic_redis_run_store_iface_init))

static void worker_flush (gpointer data);
static void arm (gpointer data);
static void tick (gpointer data);
static void renew_quiet (Worker *worker);

/* --- helpers ------------------------------------------------------------- */

static char *
uint_text (guint64 value)
{
  return g_strdup_printf ("%" G_GUINT64_FORMAT, value);
}

static void
run_keys (SymfonicRedisRunStore *self,
          const char            *run_id,
          const char            *tenant_id,
          char                  *keys[2])
{
  g_autofree char *hash = g_strconcat ("run:", run_id, NULL);
  g_autofree char *stream = g_strconcat ("frames:", run_id, NULL);

  keys[0] = symfonic_redis_tenant_key (self->key_prefix, tenant_id != NULL ? tenant_id : "", hash);
  keys[1] = symfonic_redis_tenant_key (self->key_prefix, tenant_id != NULL ? tenant_id : "", stream);
}

/* "N-S": N, and whether S is 0 (a frame) */
static gboolean
parse_entry_id (const char *text,
                gsize       length,
                guint64    *seq,
                gboolean   *frame)
{
  char buffer[48];
  char *end;

  if (length == 0 || length >= sizeof buffer)
    return FALSE;
  memcpy (buffer, text, length);
  buffer[length] = '\0';
  *seq = g_ascii_strtoull (buffer, &end, 10);
  if (end == buffer || *end != '-')
    return FALSE;
  *frame = strcmp (end + 1, "0") == 0;

  return TRUE;
}

static GError *
store_failure (const GError *error)
{
  /* the reader may try again later: the run may be there */
  return g_error_new (SYMFONIC_ERROR, SYMFONIC_ERROR_OVERLOADED, "The run store does not answer: %s",
                      error->message);
}

/* --- workers ------------------------------------------------------------- */

static void send_read (Worker *worker,
                       GTask  *task);

static void
writer_unref (Writer *writer)
{
  if (!g_atomic_ref_count_dec (&writer->ref_count))
    return;
  g_queue_clear (&writer->sizes);
  g_string_free (writer->batch, TRUE);
  g_array_unref (writer->batch_lengths);
  g_free (writer->run_id);
  g_free (writer->keys[0]);
  g_free (writer->keys[1]);
  g_free (writer->principal_id);
  g_free (writer->tenant_id);
  g_free (writer);
}

static Writer *
writer_ref (Writer *writer)
{
  g_atomic_ref_count_inc (&writer->ref_count);
  return writer;
}

static void
waiter_wake (Waiter *waiter)
{
  g_task_return_boolean (waiter->task, TRUE);
  g_object_unref (waiter->task);
  g_free (waiter);
}

static void
followed_wake (Followed *f)
{
  GSList *waiters = g_steal_pointer (&f->waiters);

  for (GSList *l = waiters; l != NULL; l = l->next)
    waiter_wake (l->data);
  g_slist_free (waiters);
}

static void
entry_free (Entry *entry)
{
  g_bytes_unref (entry->frame);
  g_free (entry);
}

/* The frames every reader that waits has had go: a reader that did not
 * wait, and is behind them, reads from Redis. */
static void
followed_trim (Followed *f)
{
  guint64 oldest = G_MAXUINT64;
  Entry *head;

  for (GSList *l = f->waiters; l != NULL; l = l->next)
    oldest = MIN (oldest, ((Waiter *) l->data)->after);
  while ((head = g_queue_peek_head (&f->cache)) != NULL && head->seq <= oldest && head->seq < f->seen)
    entry_free (g_queue_pop_head (&f->cache));
}

static void
followed_free (Followed *f)
{
  followed_wake (f);
  g_queue_clear_full (&f->cache, (GDestroyNotify) entry_free);
  g_free (f->keys[0]);
  g_free (f->keys[1]);
  g_free (f->principal_id);
  g_free (f->tenant_id);
  g_free (f);
}

static void
worker_state (SymfonicRedisClient *client,
              gboolean             up,
              gpointer             user_data)
{
  Worker *worker = user_data;

  if (!up)
    return;

  worker->ever_up = TRUE;
  worker->start_over = TRUE;
  g_clear_pointer (&worker->start_timer, symfonic_timer_remove);
  while (worker->starting_reads.length > 0)
    {
      GTask *task = g_queue_pop_head (&worker->starting_reads);

      send_read (worker, task);
    }
  symfonic_poller_defer (symfonic_poller_get_thread_default (), &worker->flush);
}

static void
start_timeout (gpointer data)
{
  Worker *worker = data;

  worker->start_over = TRUE;
  g_clear_pointer (&worker->start_timer, symfonic_timer_remove);
  while (worker->starting_reads.length > 0)
    send_read (worker, g_queue_pop_head (&worker->starting_reads));
  worker_flush (worker);
}

static void
blocker_id_reply (SymfonicRedisClient      *client,
                  const SymfonicRedisReply *reply,
                  const GError             *error,
                  gpointer                  user_data)
{
  Worker *worker = user_data;

  if (error != NULL || symfonic_redis_reply_get_kind (reply) != SYMFONIC_REDIS_REPLY_INTEGER)
    return;
  worker->blocker_id = symfonic_redis_reply_get_integer (reply);
  arm (worker);
}

/* The blocking connection is up: what it is called, for CLIENT UNBLOCK,
 * then the XREAD of the runs followed. */
static void
blocker_state (SymfonicRedisClient *client,
               gboolean             up,
               gpointer             user_data)
{
  Worker *worker = user_data;
  const char *argv[] = { "CLIENT", "ID" };

  worker->blocker_id = 0;
  if (up)
    symfonic_redis_client_command (client, 2, argv, NULL, blocker_id_reply, worker, NULL);
}

static Worker *
get_worker (SymfonicRedisRunStore *self)
{
  SymfonicPoller *poller = symfonic_poller_get_thread_default ();
  G_GNUC_UNUSED g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  Worker *worker = g_hash_table_lookup (self->workers, poller);

  if (worker != NULL)
    return worker;

  worker = g_new0 (Worker, 1);
  worker->store = self;
  worker->context = g_main_context_ref_thread_default ();
  worker->writers = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) writer_unref);
  worker->dirty = g_ptr_array_new ();
  worker->flush.func = worker_flush;
  worker->flush.data = worker;
  worker->arm.func = arm;
  worker->arm.data = worker;
  worker->followed = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) followed_free);
  worker->name = g_uuid_string_random ();
  worker->reading = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_queue_init (&worker->starting_reads);

  worker->client = symfonic_redis_client_new (&self->address);
  worker->blocker = symfonic_redis_client_new (&self->address);
  if (self->password != NULL)
    {
      symfonic_redis_client_set_credentials (worker->client, NULL, self->password);
      symfonic_redis_client_set_credentials (worker->blocker, NULL, self->password);
    }
  symfonic_redis_client_set_timeout (worker->client, self->timeout_ms);
  symfonic_redis_client_set_timeout (worker->blocker, self->timeout_ms);
  symfonic_redis_client_set_stats (worker->client, &worker->stats);
  symfonic_redis_client_set_stats (worker->blocker, &worker->blocker_stats);
  symfonic_redis_client_set_state_func (worker->client, worker_state, worker);
  symfonic_redis_client_set_state_func (worker->blocker, blocker_state, worker);
  worker->start_timer = symfonic_poller_timer (poller, start_timeout, worker);
  symfonic_timer_set_deadline (worker->start_timer, g_get_monotonic_time () + (gint64) self->timeout_ms * 1000);
  worker->tick = symfonic_poller_timer (poller, tick, worker);
  symfonic_timer_set_deadline (worker->tick, g_get_monotonic_time () + CHECK_INTERVAL_US);
  g_hash_table_insert (self->workers, poller, worker);
  g_ptr_array_add (self->all_workers, worker);
  symfonic_redis_client_start (worker->client);
  symfonic_redis_client_start (worker->blocker);

  return worker;
}

/* Whether commands may go now; %FALSE while the first connection is
 * still being made, within the deadline. */
static gboolean
worker_can_send (Worker *worker)
{
  return worker->start_over || symfonic_redis_client_is_up (worker->client);
}

static void
worker_free (Worker *worker)
{
  g_clear_pointer (&worker->start_timer, symfonic_timer_remove);
  g_clear_pointer (&worker->tick, symfonic_timer_remove);
  symfonic_poller_cancel_deferred (symfonic_poller_get_thread_default (), &worker->flush);
  symfonic_poller_cancel_deferred (symfonic_poller_get_thread_default (), &worker->arm);
  while (worker->starting_reads.length > 0)
    {
      GTask *task = g_queue_pop_head (&worker->starting_reads);

      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "The run store is gone");
      g_object_unref (task);
    }
  for (guint i = 0; i < 2; i++)
    {
      SymfonicRedisClient *client = i == 0 ? worker->client : worker->blocker;

      symfonic_redis_client_set_state_func (client, NULL, NULL);
      symfonic_redis_client_close (client);
      symfonic_redis_client_unref (client);
    }
  for (guint i = 0; i < worker->dirty->len; i++)
    writer_unref (g_ptr_array_index (worker->dirty, i));
  g_ptr_array_unref (worker->dirty);
  g_hash_table_unref (worker->writers);
  g_hash_table_unref (worker->followed);
  g_hash_table_unref (worker->reading);
  g_free (worker->name);
  g_main_context_unref (worker->context);
}

static gboolean
worker_close_cb (gpointer data)
{
  worker_free (data);
  return G_SOURCE_REMOVE;
}

/* --- writes -------------------------------------------------------------- */

static void
write_reply (SymfonicRedisClient      *client,
             const SymfonicRedisReply *reply,
             const GError             *error,
             gpointer                  user_data)
{
  Writer *writer = user_data;

  if (error != NULL && !writer->broken)
    {
      /* what follows would leave a gap: the run is read up to here */
      writer->broken = TRUE;
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_debug ("Run %s: its frames no longer reach Redis: %s", writer->run_id, error->message);
    }
  writer_unref (writer);
}

static void
mark_dirty (Writer *writer)
{
  Worker *worker = writer->worker;

  if (writer->queued)
    return;
  writer->queued = TRUE;
  g_ptr_array_add (worker->dirty, writer_ref (writer));
  symfonic_poller_defer (symfonic_poller_get_thread_default (), &worker->flush);
}

static gboolean
send_command (Writer      *writer,
              guint        argc,
              const char **argv,
              const gsize *argv_len)
{
  g_autoptr(GError) error = NULL;

  if (writer->broken)
    return FALSE;
  if (!symfonic_redis_client_command (writer->worker->client, argc, argv, argv_len, write_reply, writer_ref (writer),
                                      &error))
    {
      writer_unref (writer);
      writer->broken = TRUE;
      g_debug ("Run %s: its frames do not reach Redis: %s", writer->run_id, error->message);
      return FALSE;
    }

  return TRUE;
}

/* The note: the run's state so far, and the producer's lease renewed;
 * @fields are more field, value pairs. */
static void
send_note (Writer      *writer,
           guint        lease_ms,
           guint64      keep_ms,
           const char **fields,
           guint        n_fields)
{
  Worker *worker = writer->worker;
  g_autofree char *lease = uint_text (lease_ms);
  g_autofree char *keep = uint_text (keep_ms);
  g_autofree char *last = uint_text (writer->last);
  g_autofree char *bytes = uint_text (writer->bytes);
  const char *args[32];
  guint n = 0;
  g_autoptr(GError) error = NULL;

  if (writer->broken)
    return;
  args[n++] = lease;
  args[n++] = keep;
  args[n++] = "last";
  args[n++] = last;
  args[n++] = "bytes";
  args[n++] = bytes;
  for (guint i = 0; i < n_fields && n < G_N_ELEMENTS (args); i++)
    args[n++] = fields[i];

  writer->noted_at = g_get_monotonic_time ();
  if (!symfonic_redis_client_eval (worker->client, symfonic_redis_script_get_builtin (SYMFONIC_REDIS_SCRIPT_RUN_NOTE),
                                   2, (const char * const *) writer->keys, n, args, write_reply, writer_ref (writer),
                                   &error))
    {
      writer_unref (writer);
      writer->broken = TRUE;
      g_debug ("Run %s: its frames do not reach Redis: %s", writer->run_id, error->message);
    }
}

/* What a run gathered this iteration goes out: its frames, a trim when
 * the byte cap let frames go, its note. */
static void
writer_send (Writer *writer)
{
  Worker *worker = writer->worker;
  g_autofree char *maxlen = uint_text (writer->max_frames);
  gsize offset = 0;

  if (writer->opening && !writer->broken)
    {
      const char *fields[] = {
        "principal", writer->principal_id != NULL ? writer->principal_id : "",
        "tenant", writer->tenant_id != NULL ? writer->tenant_id : "",
        "state", "running",
      };

      writer->opening = FALSE;
      send_note (writer, worker->store->lease_ttl_ms, (guint64) worker->store->lease_ttl_ms + ORPHAN_KEEP_MS, fields,
                 G_N_ELEMENTS (fields));
    }

  for (guint i = 0; i < writer->batch_lengths->len && !writer->broken; i++)
    {
      gsize length = g_array_index (writer->batch_lengths, gsize, i);
      guint64 seq = writer->batch_first + i;
      g_autofree char *id = g_strdup_printf ("%" G_GUINT64_FORMAT "-0", seq);
      char line[32];
      gsize line_length = g_snprintf (line, sizeof line, "id: %" G_GUINT64_FORMAT "\n", seq);
      const char *data = writer->batch->str + offset;
      gboolean bare = length > line_length && memcmp (data, line, line_length) == 0;
      const char *argv[] = { "XADD", writer->keys[1], "MAXLEN", "~", maxlen, id, bare ? "d" : "f",
                             bare ? data + line_length : data };
      gsize argv_len[] = { 4, strlen (writer->keys[1]), 6, 1, strlen (maxlen), strlen (id), 1,
                           bare ? length - line_length : length };

      offset += length;
      if (length == 0)
        continue;
      send_command (writer, G_N_ELEMENTS (argv), argv, argv_len);
    }
  g_string_truncate (writer->batch, 0);
  g_array_set_size (writer->batch_lengths, 0);

  if (writer->first > writer->trimmed_to && !writer->broken)
    {
      g_autofree char *minid = g_strdup_printf ("%" G_GUINT64_FORMAT "-0", writer->first);
      const char *argv[] = { "XTRIM", writer->keys[1], "MINID", minid };

      writer->trimmed_to = writer->first;
      send_command (writer, G_N_ELEMENTS (argv), argv, NULL);
    }

  if (writer->end_due)
    {
      writer->end_due = FALSE;
      writer->note_due = FALSE;
      if (!writer->broken)
        {
          g_autofree char *end = g_strdup_printf ("%" G_GUINT64_FORMAT "-1", writer->last);
          const char *argv[] = { "XADD", writer->keys[1], end, "e", "" };
          const char *fields[] = { "state", "ended" };

          send_command (writer, G_N_ELEMENTS (argv), argv, NULL);
          send_note (writer, 0, writer->keep_ms, fields, G_N_ELEMENTS (fields));
        }
      else if (!writer->opening && symfonic_redis_client_is_up (worker->client))
        {
          const char *fields[] = { "state", "lost" };

          /* readers learn at once that the rest never came */
          writer->broken = FALSE;
          send_note (writer, 0, writer->keep_ms, fields, G_N_ELEMENTS (fields));
          writer->broken = TRUE;
        }
    }
  else if (writer->note_due && !writer->broken)
    {
      gint64 third = (gint64) worker->store->lease_ttl_ms * 1000 / 3;

      writer->note_due = FALSE;
      if (!writer->stream_expires || g_get_monotonic_time () - writer->noted_at >= third)
        {
          /* the lease renewed, and the stream given its TTL once it is */
          writer->stream_expires = writer->last >= writer->first;
          send_note (writer, worker->store->lease_ttl_ms, (guint64) worker->store->lease_ttl_ms + ORPHAN_KEEP_MS,
                     NULL, 0);
        }
      else
        {
          /* the lease holds: the hash is told, no script runs */
          g_autofree char *last = uint_text (writer->last);
          g_autofree char *bytes = uint_text (writer->bytes);
          const char *argv[] = { "HSET", writer->keys[0], "last", last, "bytes", bytes };

          send_command (writer, G_N_ELEMENTS (argv), argv, NULL);
        }
    }
}

static void
worker_flush (gpointer data)
{
  Worker *worker = data;
  g_autoptr(GPtrArray) dirty = NULL;

  if (!worker_can_send (worker))
    return;

  dirty = g_steal_pointer (&worker->dirty);
  worker->dirty = g_ptr_array_new ();
  for (guint i = 0; i < dirty->len; i++)
    {
      Writer *writer = g_ptr_array_index (dirty, i);

      writer->queued = FALSE;
      writer_send (writer);
      writer_unref (writer);
    }
}

static gboolean
redis_try_open_run (SymfonicRunStore  *store,
                    const char        *run_id,
                    const char        *principal_id,
                    const char        *tenant_id,
                    guint              max_frames,
                    guint64            max_bytes,
                    GError           **error)
{
  SymfonicRedisRunStore *self = SYMFONIC_REDIS_RUN_STORE (store);
  Worker *worker = get_worker (self);
  Writer *writer;

  /* The run starts at once: its hash is written ahead of its first
   * frames, on the same connection, so no reader finds frames without an
   * owner. A run Redis does not take streams all the same, for its
   * client alone. */
  writer = g_new0 (Writer, 1);
  g_atomic_ref_count_init (&writer->ref_count);
  writer->worker = worker;
  writer->run_id = g_strdup (run_id);
  run_keys (self, run_id, tenant_id, writer->keys);
  writer->principal_id = g_strdup (principal_id);
  writer->tenant_id = g_strdup (tenant_id);
  writer->max_frames = max_frames;
  writer->max_bytes = max_bytes;
  writer->first = 1;
  writer->trimmed_to = 1;
  writer->batch = g_string_new (NULL);
  writer->batch_lengths = g_array_new (FALSE, FALSE, sizeof (gsize));
  writer->opening = TRUE;
  g_hash_table_replace (worker->writers, writer->run_id, writer);
  mark_dirty (writer);

  return TRUE;
}

static void
redis_append (SymfonicRunStore *store,
              const char       *run_id,
              guint64           seq,
              const char       *frame,
              gsize             length)
{
  Worker *worker = get_worker (SYMFONIC_REDIS_RUN_STORE (store));
  Writer *writer = g_hash_table_lookup (worker->writers, run_id);
  gsize kept = length;

  if (writer == NULL || writer->closed)
    return;
  if (seq != writer->last + 1)
    {
      g_critical ("Run %s got frame %" G_GUINT64_FORMAT " out of order", run_id, seq);
      return;
    }
  writer->last = seq;
  writer->note_due = TRUE;

  if (length > writer->max_bytes)
    {
      /* too large to keep: readable again from the next frame */
      g_queue_clear (&writer->sizes);
      writer->bytes = 0;
      writer->first = seq + 1;
      kept = 0;
    }
  else
    {
      g_queue_push_tail (&writer->sizes, GSIZE_TO_POINTER (length));
      writer->bytes += length;
      while (writer->bytes > writer->max_bytes || writer->sizes.length > writer->max_frames)
        {
          gsize oldest = GPOINTER_TO_SIZE (g_queue_pop_head (&writer->sizes));
          gboolean by_bytes = writer->bytes > writer->max_bytes;

          writer->bytes -= oldest;
          /* past resume-frames Redis trims by itself (MAXLEN ~) */
          if (by_bytes)
            writer->first = seq + 1 - writer->sizes.length;
        }
    }

  if (writer->batch_lengths->len == 0)
    writer->batch_first = seq;
  if (kept > 0)
    g_string_append_len (writer->batch, frame, length);
  g_array_append_val (writer->batch_lengths, kept);
  mark_dirty (writer);
}

static void
redis_close_run (SymfonicRunStore *store,
                 const char       *run_id,
                 guint             keep_seconds)
{
  Worker *worker = get_worker (SYMFONIC_REDIS_RUN_STORE (store));
  Writer *writer = g_hash_table_lookup (worker->writers, run_id);
  guint64 keep_ms = (guint64) keep_seconds * 1000;

  if (writer == NULL || writer->closed)
    return;

  writer->closed = TRUE;
  writer->end_due = TRUE;
  writer->keep_ms = keep_ms;
  /* its last frames and its end go out together, after this iteration */
  mark_dirty (writer);
  g_hash_table_remove (worker->writers, run_id);
}

/* --- reads --------------------------------------------------------------- */

typedef struct
{
  Worker   *worker;
  char     *keys[2];
  char     *principal_id;
  char     *tenant_id;
  guint64   after;
  guint     count;
} Read;

static void
read_free (Read *read)
{
  g_free (read->keys[0]);
  g_free (read->keys[1]);
  g_free (read->principal_id);
  g_free (read->tenant_id);
  g_free (read);
}

static Followed *
lookup_followed (Worker     *worker,
                 const char *stream_key,
                 const char *principal_id)
{
  Followed *f = g_hash_table_lookup (worker->followed, stream_key);

  if (f == NULL || g_strcmp0 (f->principal_id, principal_id != NULL ? principal_id : "") != 0)
    return NULL;

  return f;
}

static void
read_reply (SymfonicRedisClient      *client,
            const SymfonicRedisReply *reply,
            const GError             *error,
            gpointer                  user_data)
{
  GTask *task = user_data;
  Read *read = g_task_get_task_data (task);
  gint64 code, state;
  g_autoptr(GPtrArray) frames = NULL;
  gsize n;

  if (error != NULL)
    {
      g_task_return_error (task, store_failure (error));
      g_object_unref (task);
      return;
    }

  n = symfonic_redis_reply_get_n_elements (reply);
  if (n < 1 || symfonic_redis_reply_get_kind (symfonic_redis_reply_get_element (reply, 0)) != SYMFONIC_REDIS_REPLY_INTEGER)
    goto malformed;
  code = symfonic_redis_reply_get_integer (symfonic_redis_reply_get_element (reply, 0));
  switch (code)
    {
    case 0:
      g_task_return_new_error (task, SYMFONIC_ERROR, SYMFONIC_ERROR_NOT_FOUND, "No such run");
      g_object_unref (task);
      return;
    case 1:
      g_task_return_new_error (task, SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST, "The run has no frame with that id");
      g_object_unref (task);
      return;
    case 2:
      {
        gint64 first = n > 1 && symfonic_redis_reply_get_kind (symfonic_redis_reply_get_element (reply, 1)) ==
                                  SYMFONIC_REDIS_REPLY_INTEGER
                         ? symfonic_redis_reply_get_integer (symfonic_redis_reply_get_element (reply, 1)) : 0;

        g_task_return_new_error (task, SYMFONIC_ERROR, SYMFONIC_ERROR_GONE,
                                 "The run keeps frames from %" G_GINT64_FORMAT " on", first);
        g_object_unref (task);
        return;
      }
    case 3:
      break;
    default:
      goto malformed;
    }

  if (n < 3)
    goto malformed;
  state = symfonic_redis_reply_get_integer (symfonic_redis_reply_get_element (reply, 1));
  frames = g_ptr_array_new_full (n - 3, (GDestroyNotify) g_bytes_unref);
  for (gsize i = 3; i < n; i++)
    {
      gsize length;
      const char *data = symfonic_redis_reply_get_string (symfonic_redis_reply_get_element (reply, i), &length);

      if (data == NULL)
        goto malformed;
      g_ptr_array_add (frames, g_bytes_new (data, length));
    }

  /* what a follower of the run here knows now */
  {
    Followed *f = lookup_followed (read->worker, read->keys[1], read->principal_id);

    if (f != NULL)
      {
        f->suspect = state == 2;
        f->idle_since = g_get_monotonic_time ();
      }
  }

  if (state == 2 && frames->len == 0)
    {
      g_task_return_new_error (task, SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM_UNAVAILABLE,
                               "The run's gateway stopped before the run ended");
      g_object_unref (task);
      return;
    }
  symfonic_run_store_return_read (task, g_steal_pointer (&frames), state == 1);
  g_object_unref (task);
  return;

malformed:
  g_task_return_new_error (task, SYMFONIC_ERROR, SYMFONIC_ERROR_OVERLOADED,
                           "The run store answered in an unexpected shape");
  g_object_unref (task);
}

static void
send_read (Worker *worker,
           GTask  *task)
{
  Read *read = g_task_get_task_data (task);
  g_autofree char *after = uint_text (read->after);
  g_autofree char *count = uint_text (read->count);
  const char *args[] = { read->principal_id, read->tenant_id, after, count };
  g_autoptr(GError) error = NULL;

  if (!worker_can_send (worker))
    {
      g_queue_push_tail (&worker->starting_reads, task);
      return;
    }
  if (!symfonic_redis_client_eval (worker->client, symfonic_redis_script_get_builtin (SYMFONIC_REDIS_SCRIPT_RUN_READ),
                                   2, (const char * const *) read->keys, G_N_ELEMENTS (args), args, read_reply, task,
                                   &error))
    {
      g_task_return_error (task, store_failure (error));
      g_object_unref (task);
    }
}

static GTask *
read_task (SymfonicRedisRunStore *self,
           Worker                *worker,
           const char            *run_id,
           const char            *principal_id,
           const char            *tenant_id,
           guint64                after,
           guint                  count,
           GCancellable          *cancellable,
           GAsyncReadyCallback    callback,
           gpointer               user_data)
{
  GTask *task = g_task_new (self, cancellable, callback, user_data);
  Read *read = g_new0 (Read, 1);

  read->worker = worker;
  run_keys (self, run_id, tenant_id, read->keys);
  read->principal_id = g_strdup (principal_id != NULL ? principal_id : "");
  read->tenant_id = g_strdup (tenant_id != NULL ? tenant_id : "");
  read->after = after;
  read->count = count;
  g_task_set_task_data (task, read, (GDestroyNotify) read_free);

  return task;
}

/* From what this worker's follower brought, when it has all the reader
 * wants: the frames after @after up to the last one seen, or none when
 * the reader has them all. Anything else is read from Redis. */
static GPtrArray *
redis_try_read (SymfonicRunStore  *store,
                const char        *run_id,
                const char        *principal_id,
                const char        *tenant_id,
                guint64            after,
                gboolean          *ended,
                GError           **error)
{
  SymfonicRedisRunStore *self = SYMFONIC_REDIS_RUN_STORE (store);
  Worker *worker = get_worker (self);
  char *keys[2];
  GPtrArray *frames;
  Followed *f;
  Entry *head;

  run_keys (self, run_id, tenant_id, keys);
  f = lookup_followed (worker, keys[1], principal_id);
  g_free (keys[0]);
  g_free (keys[1]);
  if (f == NULL || f->suspect || after > f->seen ||
      (after < f->seen && ((head = g_queue_peek_head (&f->cache)) == NULL || head->seq > after + 1)))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK, "Asks Redis");
      return NULL;
    }

  frames = g_ptr_array_new_full (f->seen - after, (GDestroyNotify) g_bytes_unref);
  for (GList *l = f->cache.head; l != NULL; l = l->next)
    {
      Entry *entry = l->data;

      if (entry->seq > after)
        g_ptr_array_add (frames, g_bytes_ref (entry->frame));
    }
  *ended = f->ended;

  return frames;
}

static void
redis_read_async (SymfonicRunStore    *store,
                  const char          *run_id,
                  const char          *principal_id,
                  const char          *tenant_id,
                  guint64              after,
                  GCancellable        *cancellable,
                  GAsyncReadyCallback  callback,
                  gpointer             user_data)
{
  SymfonicRedisRunStore *self = SYMFONIC_REDIS_RUN_STORE (store);
  Worker *worker = get_worker (self);
  GTask *task = read_task (self, worker, run_id, principal_id, tenant_id, after, READ_COUNT, cancellable, callback,
                           user_data);

  g_task_set_source_tag (task, redis_read_async);
  send_read (worker, task);
}

/* --- readers ------------------------------------------------------------- */

static void
readers_reply (SymfonicRedisClient      *client,
               const SymfonicRedisReply *reply,
               const GError             *error,
               gpointer                  user_data)
{
  GTask *task = user_data;

  if (task == NULL)
    return;
  if (error != NULL)
    g_task_return_error (task, store_failure (error));
  else if (symfonic_redis_reply_get_kind (reply) != SYMFONIC_REDIS_REPLY_INTEGER)
    g_task_return_new_error (task, SYMFONIC_ERROR, SYMFONIC_ERROR_OVERLOADED,
                             "The run store answered in an unexpected shape");
  else
    g_task_return_int (task, MAX (symfonic_redis_reply_get_integer (reply), -1));
  g_object_unref (task);
}

/* One call of symfonic-run-readers.lua on the run hash @key. Whoever asks
 * for an answer (@task) gets it; what a worker says of its readers is
 * sent and forgotten: a store that is down loses it, and the producer
 * then gives up on the run as if nobody came. */
static void
send_readers (Worker     *worker,
              const char *key,
              const char *what,
              GTask      *task)
{
  g_autofree char *lease = uint_text (READER_LEASE_MS);
  const char *args[] = { what, worker->name, lease };
  const char *keys[] = { key };
  g_autoptr(GError) error = NULL;

  if (!worker_can_send (worker) ||
      !symfonic_redis_client_eval (worker->client, symfonic_redis_script_get_builtin (SYMFONIC_REDIS_SCRIPT_RUN_READERS),
                                   1, keys, G_N_ELEMENTS (args), args, readers_reply, task, &error))
    {
      if (task == NULL)
        return;
      if (error != NULL)
        g_task_return_error (task, store_failure (error));
      else
        g_task_return_new_error (task, SYMFONIC_ERROR, SYMFONIC_ERROR_OVERLOADED, "The run store does not answer");
      g_object_unref (task);
    }
}

static void
redis_note_reader (SymfonicRunStore *store,
                   const char       *run_id,
                   const char       *principal_id,
                   const char       *tenant_id,
                   gboolean          following)
{
  SymfonicRedisRunStore *self = SYMFONIC_REDIS_RUN_STORE (store);
  Worker *worker = get_worker (self);
  char *keys[2];
  guint n;

  /* only a reader whose read found the run comes here: its principal and
   * tenant are the run's */
  run_keys (self, run_id, tenant_id, keys);
  g_free (keys[1]);
  n = GPOINTER_TO_UINT (g_hash_table_lookup (worker->reading, keys[0]));
  if (following)
    {
      g_hash_table_replace (worker->reading, g_strdup (keys[0]), GUINT_TO_POINTER (n + 1));
      if (n == 0)
        send_readers (worker, keys[0], "follow", NULL);
    }
  else if (n > 1)
    g_hash_table_replace (worker->reading, g_strdup (keys[0]), GUINT_TO_POINTER (n - 1));
  else if (n == 1)
    {
      g_hash_table_remove (worker->reading, keys[0]);
      send_readers (worker, keys[0], "left", NULL);
    }
  g_free (keys[0]);
}

static void
redis_get_unread_async (SymfonicRunStore    *store,
                        const char          *run_id,
                        const char          *principal_id,
                        const char          *tenant_id,
                        GCancellable        *cancellable,
                        GAsyncReadyCallback  callback,
                        gpointer             user_data)
{
  SymfonicRedisRunStore *self = SYMFONIC_REDIS_RUN_STORE (store);
  GTask *task = g_task_new (self, cancellable, callback, user_data);
  char *keys[2];

  g_task_set_source_tag (task, redis_get_unread_async);
  run_keys (self, run_id, tenant_id, keys);
  send_readers (get_worker (self), keys[0], "unread", task);
  g_free (keys[0]);
  g_free (keys[1]);
}

/* --- following ----------------------------------------------------------- */

static void
drop_cancelled (Followed *f)
{
  GSList *kept = NULL;

  for (GSList *l = f->waiters; l != NULL; l = l->next)
    {
      Waiter *waiter = l->data;

      if (g_cancellable_is_cancelled (g_task_get_cancellable (waiter->task)))
        {
          g_task_return_error_if_cancelled (waiter->task);
          g_object_unref (waiter->task);
          g_free (waiter);
        }
      else
        kept = g_slist_prepend (kept, waiter);
    }
  g_slist_free (f->waiters);
  f->waiters = kept;
}

static void
unblock_reply (SymfonicRedisClient      *client,
               const SymfonicRedisReply *reply,
               const GError             *error,
               gpointer                  user_data)
{
  Worker *worker = user_data;

  worker->unblocking = FALSE;
  /* the XREAD had not reached Redis yet: once more, until it has */
  if (error == NULL && worker->xread_in_flight && symfonic_redis_reply_get_kind (reply) == SYMFONIC_REDIS_REPLY_INTEGER &&
      symfonic_redis_reply_get_integer (reply) == 0)
    symfonic_poller_defer_after_poll (symfonic_poller_get_thread_default (), &worker->arm);
}

static void
xread_reply (SymfonicRedisClient      *client,
             const SymfonicRedisReply *reply,
             const GError             *error,
             gpointer                  user_data)
{
  Worker *worker = user_data;
  gint64 now = g_get_monotonic_time ();

  worker->xread_in_flight = FALSE;
  if (error != NULL)
    {
      GHashTableIter iter;
      gpointer value;

      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;
      /* the readers read from Redis, and come back */
      g_hash_table_iter_init (&iter, worker->followed);
      while (g_hash_table_iter_next (&iter, NULL, &value))
        {
          Followed *f = value;

          f->suspect = TRUE;
          followed_wake (f);
        }
      return;
    }

  for (gsize i = 0; i < symfonic_redis_reply_get_n_elements (reply); i++)
    {
      const SymfonicRedisReply *stream = symfonic_redis_reply_get_element (reply, i);
      const SymfonicRedisReply *entries;
      g_autofree char *key = NULL;
      gsize length;
      const char *name;
      Followed *f;

      if (symfonic_redis_reply_get_n_elements (stream) != 2)
        continue;
      name = symfonic_redis_reply_get_string (symfonic_redis_reply_get_element (stream, 0), &length);
      if (name == NULL)
        continue;
      key = g_strndup (name, length);
      f = g_hash_table_lookup (worker->followed, key);
      if (f == NULL)
        continue;
      entries = symfonic_redis_reply_get_element (stream, 1);
      for (gsize j = 0; j < symfonic_redis_reply_get_n_elements (entries); j++)
        {
          const SymfonicRedisReply *entry = symfonic_redis_reply_get_element (entries, j);
          const SymfonicRedisReply *fields;
          const char *id, *data;
          gsize id_length, data_length;
          guint64 seq;
          gboolean frame;
          Entry *kept;

          if (symfonic_redis_reply_get_n_elements (entry) != 2)
            continue;
          id = symfonic_redis_reply_get_string (symfonic_redis_reply_get_element (entry, 0), &id_length);
          if (id == NULL || !parse_entry_id (id, id_length, &seq, &frame))
            continue;
          if (!frame)
            {
              if (seq == f->seen)
                f->ended = TRUE;
              continue;
            }
          /* a reader read past it already, or a gap: Redis knows better */
          if (seq <= f->seen)
            continue;
          fields = symfonic_redis_reply_get_element (entry, 1);
          if (seq != f->seen + 1 || symfonic_redis_reply_get_n_elements (fields) != 2)
            {
              f->suspect = TRUE;
              break;
            }
          data = symfonic_redis_reply_get_string (symfonic_redis_reply_get_element (fields, 1), &data_length);
          name = symfonic_redis_reply_get_string (symfonic_redis_reply_get_element (fields, 0), &length);
          if (data == NULL || name == NULL || length != 1)
            {
              f->suspect = TRUE;
              break;
            }
          kept = g_new (Entry, 1);
          kept->seq = seq;
          if (name[0] == 'd')
            {
              /* the id line goes back in front */
              char line[32];
              gsize line_length = g_snprintf (line, sizeof line, "id: %" G_GUINT64_FORMAT "\n", seq);
              char *whole = g_malloc (line_length + data_length);

              memcpy (whole, line, line_length);
              memcpy (whole + line_length, data, data_length);
              kept->frame = g_bytes_new_take (whole, line_length + data_length);
            }
          else
            kept->frame = g_bytes_new (data, data_length);
          g_queue_push_tail (&f->cache, kept);
          while (f->cache.length > CACHE_MAX)
            entry_free (g_queue_pop_head (&f->cache));
          f->seen = seq;
        }
      f->idle_since = now;
      followed_trim (f);
      followed_wake (f);
    }

  symfonic_poller_defer (symfonic_poller_get_thread_default (), &worker->arm);
}

/* One XREAD BLOCK over every run a reader of this worker waits on, from
 * the last frame seen of each. */
static void
arm (gpointer data)
{
  Worker *worker = data;
  g_autoptr(GPtrArray) argv = NULL;
  g_autoptr(GPtrArray) ids = NULL;
  g_autoptr(GError) error = NULL;
  GHashTableIter iter;
  gpointer value;
  g_autofree char *block = uint_text (FOLLOW_BLOCK_MS);
  g_autofree char *count = uint_text (READ_COUNT);

  if (worker->xread_in_flight)
    {
      const char *unblock[] = { "CLIENT", "UNBLOCK", NULL };
      g_autofree char *id = NULL;
      gboolean grew = FALSE;

      /* only when the set grew: one held from the same runs goes on */
      if (worker->unblocking || worker->blocker_id == 0)
        return;
      g_hash_table_iter_init (&iter, worker->followed);
      while (!grew && g_hash_table_iter_next (&iter, NULL, &value))
        {
          Followed *f = value;

          grew = f->waiters != NULL && !f->ended && !f->suspect && f->xread_round != worker->xread_round;
        }
      if (!grew)
        return;
      id = g_strdup_printf ("%" G_GINT64_FORMAT, worker->blocker_id);
      unblock[2] = id;
      if (symfonic_redis_client_command (worker->client, 3, unblock, NULL, unblock_reply, worker, NULL))
        worker->unblocking = TRUE;
      return;
    }
  if (!symfonic_redis_client_is_up (worker->blocker) || worker->blocker_id == 0)
    return;

  argv = g_ptr_array_new_with_free_func (NULL);
  ids = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (argv, "XREAD");
  g_ptr_array_add (argv, "COUNT");
  g_ptr_array_add (argv, count);
  g_ptr_array_add (argv, "BLOCK");
  g_ptr_array_add (argv, block);
  g_ptr_array_add (argv, "STREAMS");
  worker->xread_round++;
  g_hash_table_iter_init (&iter, worker->followed);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      Followed *f = value;

      drop_cancelled (f);
      if (f->waiters == NULL || f->ended || f->suspect)
        continue;
      f->xread_round = worker->xread_round;
      g_ptr_array_add (argv, f->keys[1]);
      g_ptr_array_add (ids, g_strdup_printf ("%" G_GUINT64_FORMAT "-0", f->seen));
    }
  if (ids->len == 0)
    return;
  for (guint i = 0; i < ids->len; i++)
    g_ptr_array_add (argv, g_ptr_array_index (ids, i));

  if (symfonic_redis_client_command_full (worker->blocker, argv->len, (const char * const *) argv->pdata, NULL,
                                          (gint64) FOLLOW_BLOCK_MS * 1000, xread_reply, worker, &error))
    worker->xread_in_flight = TRUE;
}

static void
check_reply (SymfonicRedisClient      *client,
             const SymfonicRedisReply *reply,
             const GError             *error,
             gpointer                  user_data)
{
  GTask *task = user_data;
  Read *read = g_task_get_task_data (task);
  Followed *f = g_hash_table_lookup (read->worker->followed, read->keys[1]);
  gboolean alive = FALSE;

  if (error == NULL && symfonic_redis_reply_get_n_elements (reply) >= 3)
    {
      gint64 code = symfonic_redis_reply_get_integer (symfonic_redis_reply_get_element (reply, 0));
      gint64 state = symfonic_redis_reply_get_integer (symfonic_redis_reply_get_element (reply, 1));

      alive = code == 3 && state == 0;
    }
  if (f != NULL)
    {
      f->checking = FALSE;
      f->idle_since = g_get_monotonic_time ();
      if (!alive)
        {
          /* its readers read from Redis, which tells them what became of it */
          f->suspect = TRUE;
          followed_wake (f);
        }
    }
  g_task_return_boolean (task, TRUE);
  g_object_unref (task);
}

/* Once a second: the lease of each quiet followed run is looked at, and
 * runs nobody follows any more are forgotten. */
static void
tick (gpointer data)
{
  Worker *worker = data;
  SymfonicRedisRunStore *self = worker->store;
  gint64 now = g_get_monotonic_time ();
  GHashTableIter iter;
  gpointer value;
  gboolean rearm = FALSE;

  symfonic_timer_set_deadline (worker->tick, now + CHECK_INTERVAL_US);
  if (self == NULL)
    return;
  renew_quiet (worker);

  /* the runs this worker's readers still follow, which their producers
   * hear of */
  g_hash_table_iter_init (&iter, worker->reading);
  while (g_hash_table_iter_next (&iter, &value, NULL))
    send_readers (worker, value, "follow", NULL);

  g_hash_table_iter_init (&iter, worker->followed);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      Followed *f = value;

      drop_cancelled (f);
      if (f->waiters == NULL)
        {
          if (!f->checking && now - f->waited_at > FOLLOW_IDLE_US)
            g_hash_table_iter_remove (&iter);
          continue;
        }
      if (f->suspect || f->ended)
        {
          followed_wake (f);
          continue;
        }
      if (!f->checking && now - f->idle_since >= CHECK_INTERVAL_US)
        {
          GTask *task = g_task_new (self, NULL, NULL, NULL);
          Read *read = g_new0 (Read, 1);
          g_autofree char *after = uint_text (f->seen);
          const char *args[] = { f->principal_id, f->tenant_id, after, "0" };

          read->worker = worker;
          read->keys[0] = g_strdup (f->keys[0]);
          read->keys[1] = g_strdup (f->keys[1]);
          g_task_set_task_data (task, read, (GDestroyNotify) read_free);
          if (symfonic_redis_client_eval (worker->client,
                                          symfonic_redis_script_get_builtin (SYMFONIC_REDIS_SCRIPT_RUN_READ), 2,
                                          (const char * const *) read->keys, G_N_ELEMENTS (args), args, check_reply,
                                          task, NULL))
            f->checking = TRUE;
          else
            {
              g_object_unref (task);
              f->suspect = TRUE;
              followed_wake (f);
            }
        }
      rearm = TRUE;
    }
  if (rearm && !worker->xread_in_flight)
    arm (worker);
}

static void
redis_wait_async (SymfonicRunStore    *store,
                  const char          *run_id,
                  const char          *principal_id,
                  const char          *tenant_id,
                  guint64              after,
                  GCancellable        *cancellable,
                  GAsyncReadyCallback  callback,
                  gpointer             user_data)
{
  SymfonicRedisRunStore *self = SYMFONIC_REDIS_RUN_STORE (store);
  Worker *worker = get_worker (self);
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  char *keys[2];
  Followed *f;
  Waiter *waiter;

  g_task_set_source_tag (task, redis_wait_async);
  run_keys (self, run_id, tenant_id, keys);
  f = g_hash_table_lookup (worker->followed, keys[1]);
  if (f != NULL && g_strcmp0 (f->principal_id, principal_id != NULL ? principal_id : "") != 0)
    {
      /* only a reader that read the run waits on it: another asker reads
       * on and is told there is no such run */
      g_free (keys[0]);
      g_free (keys[1]);
      g_task_return_boolean (task, TRUE);
      return;
    }
  if (f == NULL)
    {
      f = g_new0 (Followed, 1);
      f->keys[0] = keys[0];
      f->keys[1] = keys[1];
      f->principal_id = g_strdup (principal_id != NULL ? principal_id : "");
      f->tenant_id = g_strdup (tenant_id != NULL ? tenant_id : "");
      f->seen = after;
      f->idle_since = g_get_monotonic_time ();
      g_queue_init (&f->cache);
      g_hash_table_insert (worker->followed, f->keys[1], f);
    }
  else
    {
      g_free (keys[0]);
      g_free (keys[1]);
    }
  f->waited_at = g_get_monotonic_time ();

  if (f->ended || f->suspect || after < f->seen)
    {
      g_task_return_boolean (task, TRUE);
      return;
    }
  if (after > f->seen)
    {
      /* the reader read further in Redis than this follower saw */
      g_queue_clear_full (&f->cache, (GDestroyNotify) entry_free);
      f->seen = after;
      f->xread_round = 0;
    }

  waiter = g_new0 (Waiter, 1);
  waiter->task = g_steal_pointer (&task);
  waiter->after = after;
  f->waiters = g_slist_prepend (f->waiters, waiter);
  symfonic_poller_defer (symfonic_poller_get_thread_default (), &worker->arm);
}

static gboolean
redis_wait_finish (SymfonicRunStore  *store,
                   GAsyncResult      *result,
                   GError           **error)
{
  g_return_val_if_fail (g_task_is_valid (result, store), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
symfonic_redis_run_store_iface_init (SymfonicRunStoreInterface *iface)
{
  iface->try_open_run = redis_try_open_run;
  iface->append = redis_append;
  iface->close_run = redis_close_run;
  iface->try_read = redis_try_read;
  iface->read_async = redis_read_async;
  iface->wait_async = redis_wait_async;
  iface->wait_finish = redis_wait_finish;
  iface->note_reader = redis_note_reader;
  iface->get_unread_async = redis_get_unread_async;
}

/* --- the object ---------------------------------------------------------- */

/* Renews the leases of this worker's runs that sent nothing lately. */
static void
renew_quiet (Worker *worker)
{
  gint64 now = g_get_monotonic_time ();
  gint64 third = (gint64) worker->store->lease_ttl_ms * 1000 / 3;
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, worker->writers);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      Writer *writer = value;

      if (!writer->broken && !writer->queued && now - writer->noted_at >= third)
        {
          writer->note_due = TRUE;
          mark_dirty (writer);
        }
    }
}

void
symfonic_redis_run_store_add_stats (SymfonicRedisRunStore *self,
                                    SymfonicRedisStats    *sum,
                                    guint                 *n_conns)
{
  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->all_workers->len; i++)
    {
      Worker *worker = g_ptr_array_index (self->all_workers, i);

      symfonic_redis_stats_add (sum, &worker->stats);
      symfonic_redis_stats_add (sum, &worker->blocker_stats);
      *n_conns += 2;
    }
  g_mutex_unlock (&self->lock);
}

static void
symfonic_redis_run_store_finalize (GObject *object)
{
  SymfonicRedisRunStore *self = SYMFONIC_REDIS_RUN_STORE (object);

  /* as the store's own connections: closed on their worker's thread, or
   * here when the worker runs nothing any more */
  for (guint i = 0; i < self->all_workers->len; i++)
    {
      Worker *worker = g_ptr_array_index (self->all_workers, i);

      worker->store = NULL;
      symfonic_redis_close_on (worker->context, worker_close_cb, worker);
    }
  g_ptr_array_unref (self->all_workers);
  g_hash_table_unref (self->workers);
  g_mutex_clear (&self->lock);
  if (self->password != NULL)
    {
      memset (self->password, 0, strlen (self->password));
      g_free (self->password);
    }
  symfonic_redis_address_clear (&self->address);
  g_free (self->key_prefix);

  G_OBJECT_CLASS (symfonic_redis_run_store_parent_class)->finalize (object);
}

static void
symfonic_redis_run_store_class_init (SymfonicRedisRunStoreClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = symfonic_redis_run_store_finalize;
}

static void
symfonic_redis_run_store_init (SymfonicRedisRunStore *self)
{
  g_mutex_init (&self->lock);
  self->workers = g_hash_table_new (NULL, NULL);
  self->all_workers = g_ptr_array_new ();
}

SymfonicRedisRunStore *
symfonic_redis_run_store_new (const SymfonicRedisAddress *address,
                              const char                 *password,
                              const char                 *key_prefix,
                              guint                       timeout_ms,
                              guint                       lease_ttl_ms)
{
  SymfonicRedisRunStore *self = g_object_new (SYMFONIC_TYPE_REDIS_RUN_STORE, NULL);

  self->address.host = g_strdup (address->host);
  self->address.port = address->port;
  self->address.path = g_strdup (address->path);
  self->address.db = address->db;
  self->password = g_strdup (password);
  self->key_prefix = g_strdup (key_prefix);
  self->timeout_ms = timeout_ms;
  /* 0: leases never expire; a run's producer then vouches for a day */
  self->lease_ttl_ms = lease_ttl_ms > 0 ? lease_ttl_ms : 24 * 3600 * 1000;

  return self;
}
