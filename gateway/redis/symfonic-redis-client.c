/* symfonic-redis-client.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <gio/gio.h>
#include <hiredis/hiredis.h>
#include <hiredis/async.h>

#include "symfonic-error.h"
#include "symfonic-log-private.h"
#include "symfonic-poller-private.h"
#include "symfonic-redis-client-private.h"
#include "symfonic-redis-script-private.h"

/* One connection to Redis, owned by the thread whose poller drives it.
 *
 * hiredis parses and buffers; this file gives it a socket to drive through
 * the adapter hooks of its async API (addRead, delRead, addWrite,
 * delWrite, cleanup). The socket is one watch on the worker's poller,
 * never a GSource of its own: a worker's main context costs more per
 * iteration with every source it holds, and one client per worker is
 * multiplied by the stores that use it.
 *
 * A command is appended to hiredis' output buffer; the buffer goes out in
 * one write at the end of the main-loop iteration (deferred work of the
 * poller), whatever the number of commands queued meanwhile. G_IO_OUT is
 * asked for only when the kernel took less than the whole buffer. The
 * write is this file's, not hiredis': hiredis writes with write(), which
 * raises SIGPIPE on a connection the server closed, and the gateway
 * leaves SIGPIPE alone (everything else it writes goes with
 * MSG_NOSIGNAL).
 *
 * Replies come back in the order the commands went, so what the client
 * keeps per command sits in a ring in that order: no allocation, and the
 * head is always the command the next reply answers. Every command has a
 * deadline; one timer per connection fires at the earliest. A command
 * past its deadline cannot be failed alone: its reply may still come, and
 * would then be taken for the next command's. So the connection is
 * dropped, every command on it fails, and a new one is made after a
 * back-off. While there is no connection ready, commands fail at once:
 * queueing them would only make every caller wait for a deadline.
 *
 * Nothing the server says reaches an error message: its error replies
 * echo keys and arguments. Errors name the first word of an error reply
 * (its kind, NOSCRIPT, WRONGTYPE) and nothing else; the password never
 * leaves the AUTH command. */

#define DEFAULT_TIMEOUT_MS         50
#define DEFAULT_CONNECT_TIMEOUT_MS 1000
#define DEFAULT_BACKOFF_MIN_MS     25
#define DEFAULT_BACKOFF_MAX_MS     2000
#define INITIAL_RING    16
#define INITIAL_JOURNAL 4096
/* a journal grown past this by a burst is let go once it is empty */
#define KEPT_JOURNAL    (256 * 1024)

typedef enum {
  STATE_IDLE,
  /* resolving, connecting, or in the handshake */
  STATE_CONNECTING,
  STATE_UP,
  /* backing off before the next attempt */
  STATE_WAITING,
  STATE_CLOSED,
} State;

typedef enum {
  STEP_NONE,
  STEP_AUTH,
  STEP_SELECT,
  STEP_LOAD,
  STEP_PING,
} Step;

/* why the client itself let a connection go, which decides what its
 * commands in flight are told */
typedef enum {
  DROP_NONE,
  DROP_TIMEOUT,
  DROP_HANDSHAKE,
  DROP_CLOSE,
} Drop;

typedef struct
{
  SymfonicRedisReplyFunc  func;
  gpointer                user_data;
  gint64                  sent;
  gint64                  deadline;
  /* an EVALSHA: where its formatted command lies in the journal, and
   * its script, to send it once more as EVAL when the server does not
   * know the script */
  guint64                 journal_at;
  gsize                   journal_length;
  SymfonicRedisScript    *script;
  Step                    step;
  gboolean                retried;
} Pending;

struct _SymfonicRedisClient
{
  guint                   ref_count;
  SymfonicRedisAddress    address;
  char                   *display;
  char                   *username;
  char                   *password;
  gint64                  timeout_us;
  gint64                  connect_timeout_us;
  gint64                  backoff_min_us;
  gint64                  backoff_max_us;
  SymfonicRedisStats     *stats;
  SymfonicRedisStats      own_stats;
  SymfonicRedisStateFunc  state_func;
  gpointer                state_data;
  /* loaded on every connection, before any command */
  GPtrArray              *scripts;

  SymfonicPoller         *poller;
  State                   state;
  redisAsyncContext      *ac;
  SymfonicWatch          *watch;
  gboolean                want_read;
  /* the kernel took less than the whole buffer, or connect() is under
   * way: G_IO_OUT is watched for */
  gboolean                want_write;
  SymfonicDeferred        flush;
  Drop                    drop;
  GCancellable           *resolving;
  gint64                  connect_deadline;
  /* failed attempts since the last connection that came up */
  guint                   attempts;

  /* the command deadlines while connected, the back-off while waiting */
  SymfonicTimer          *timer;
  gint64                  timer_at;

  Pending                *ring;
  guint                   ring_size;
  guint                   ring_head;
  guint                   ring_length;

  /* The commands in flight, formatted, in the order they went, followed
   * by the one being built: kept for an EVALSHA to go again as EVAL, and
   * where commands are formatted in place. Positions are counted from
   * the journal's first byte ever (journal_base is the position of
   * journal[0]), so that compacting it moves no pending's record. */
  char                   *journal;
  gsize                   journal_size;
  guint64                 journal_base;
  /* indexes: the oldest byte a command in flight still needs, the end of
   * the commands sent, the end of the one being built */
  gsize                   journal_head;
  gsize                   journal_tail;
  gsize                   build_end;
  guint                   build_left;
  SymfonicRedisScript    *build_script;

  /* where the reply being read lies */
  struct _Chunk          *arena;
};

static void connect_now (SymfonicRedisClient *self);

/* --- addresses ----------------------------------------------------------- */

static gboolean
parse_db (const char *text,
          guint      *db)
{
  guint64 value;

  if (text == NULL || *text == '\0')
    {
      *db = 0;
      return TRUE;
    }
  if (!g_ascii_string_to_unsigned (text, 10, 0, G_MAXINT32, &value, NULL))
    return FALSE;
  *db = (guint) value;

  return TRUE;
}

/* Never echoes @url: a malformed one may hold a password the operator put
 * in it by mistake. */
gboolean
symfonic_redis_address_parse (SymfonicRedisAddress  *address,
                              const char            *url,
                              GError               **error)
{
  g_autoptr(GUri) uri = NULL;
  const char *scheme;
  const char *query;

  g_return_val_if_fail (address != NULL, FALSE);
  g_return_val_if_fail (url != NULL, FALSE);

  memset (address, 0, sizeof *address);
  uri = g_uri_parse (url, G_URI_FLAGS_NONE, NULL);
  if (uri == NULL)
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                           "not a Redis URL: redis://HOST[:PORT][/DB] or redis+unix:///PATH[?db=N]");
      return FALSE;
    }
  if (g_uri_get_userinfo (uri) != NULL)
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                           "a Redis URL carries no user or password: the password goes in a file of its own");
      return FALSE;
    }

  scheme = g_uri_get_scheme (uri);
  query = g_uri_get_query (uri);
  if (g_ascii_strcasecmp (scheme, "redis") == 0)
    {
      const char *host = g_uri_get_host (uri);
      const char *path = g_uri_get_path (uri);
      int port = g_uri_get_port (uri);

      if (host == NULL || *host == '\0' || query != NULL || g_uri_get_fragment (uri) != NULL ||
          port == 0 || !parse_db (path[0] == '/' ? path + 1 : path, &address->db))
        {
          g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                               "not a Redis URL: redis://HOST[:PORT][/DB], the database a number");
          return FALSE;
        }
      address->host = g_strdup (host);
      address->port = port > 0 ? (guint16) port : 6379;
      return TRUE;
    }
  if (g_ascii_strcasecmp (scheme, "redis+unix") == 0)
    {
      const char *host = g_uri_get_host (uri);
      const char *path = g_uri_get_path (uri);
      const char *db = NULL;

      if (query != NULL)
        db = g_str_has_prefix (query, "db=") ? query + 3 : "";
      if ((host != NULL && *host != '\0') || path[0] != '/' || g_uri_get_fragment (uri) != NULL ||
          (db != NULL && *db == '\0') || !parse_db (db, &address->db))
        {
          g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                               "not a Redis URL: redis+unix:///PATH[?db=N], the path absolute");
          return FALSE;
        }
      address->path = g_strdup (path);
      return TRUE;
    }

  g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                       "not a Redis URL: the scheme is redis or redis+unix");
  return FALSE;
}

void
symfonic_redis_address_clear (SymfonicRedisAddress *address)
{
  g_clear_pointer (&address->host, g_free);
  g_clear_pointer (&address->path, g_free);
}

/* What logs call the server. */
char *
symfonic_redis_address_dup_display (const SymfonicRedisAddress *address)
{
  if (address->path != NULL)
    return g_strdup (address->path);
  if (strchr (address->host, ':') != NULL)
    return g_strdup_printf ("[%s]:%u", address->host, address->port);

  return g_strdup_printf ("%s:%u", address->host, address->port);
}

/* --- counters and log lines ---------------------------------------------- */

static const gint64 latency_bounds[] = SYMFONIC_REDIS_LATENCY_BOUNDS_US;
G_STATIC_ASSERT (G_N_ELEMENTS (latency_bounds) + 1 == SYMFONIC_REDIS_N_LATENCY_BUCKETS);

static const char * const failure_names[SYMFONIC_REDIS_N_FAILURES] = {
  [SYMFONIC_REDIS_FAILURE_CONNECT] = "connect",
  [SYMFONIC_REDIS_FAILURE_AUTH] = "auth",
  [SYMFONIC_REDIS_FAILURE_DISCONNECT] = "disconnect",
  [SYMFONIC_REDIS_FAILURE_TIMEOUT] = "timeout",
  [SYMFONIC_REDIS_FAILURE_UNAVAILABLE] = "unavailable",
  [SYMFONIC_REDIS_FAILURE_REPLY] = "reply",
};

/* The label `symfonic_store_errors_total` gives @failure. */
const char *
symfonic_redis_failure_get_name (SymfonicRedisFailure failure)
{
  g_return_val_if_fail ((guint) failure < SYMFONIC_REDIS_N_FAILURES, NULL);

  return failure_names[failure];
}

/* The upper bound of latency bucket @bucket, µs, or -1 for the last. */
gint64
symfonic_redis_stats_get_bound (guint bucket)
{
  g_return_val_if_fail (bucket < SYMFONIC_REDIS_N_LATENCY_BUCKETS, -1);

  return bucket < G_N_ELEMENTS (latency_bounds) ? latency_bounds[bucket] : -1;
}

static guint64
load (const guint64 *counter)
{
  return __atomic_load_n (counter, __ATOMIC_RELAXED);
}

static void
add (guint64 *counter,
     guint64  amount)
{
  __atomic_fetch_add (counter, amount, __ATOMIC_RELAXED);
}

/* Adds what @stats holds now to @sum, which is the caller's alone: the
 * metrics of several workers' clients. */
void
symfonic_redis_stats_add (SymfonicRedisStats       *sum,
                          const SymfonicRedisStats *stats)
{
  sum->up += g_atomic_int_get (&stats->up);
  for (guint i = 0; i < SYMFONIC_REDIS_N_FAILURES; i++)
    sum->failures[i] += load (&stats->failures[i]);
  for (guint i = 0; i < SYMFONIC_REDIS_N_LATENCY_BUCKETS; i++)
    sum->latency[i] += load (&stats->latency[i]);
  sum->latency_sum_us += load (&stats->latency_sum_us);
  sum->commands += load (&stats->commands);
}

static void
count_latency (SymfonicRedisClient *self,
               gint64               sent)
{
  gint64 took = MAX (g_get_monotonic_time () - sent, 0);
  guint bucket = 0;

  while (bucket < G_N_ELEMENTS (latency_bounds) && took > latency_bounds[bucket])
    bucket++;
  add (&self->stats->latency[bucket], 1);
  add (&self->stats->latency_sum_us, (guint64) took);
}

static void
count_failure (SymfonicRedisClient  *self,
               SymfonicRedisFailure  failure)
{
  add (&self->stats->failures[failure], 1);
}

/* One line per server and kind of failure per interval, saying how many
 * were held back since the last: an outage seen by every worker and every
 * command is one line, not thousands. @what is this file's text, never
 * the server's. */
G_GNUC_PRINTF (3, 4)
static void
log_failure (SymfonicRedisClient  *self,
             SymfonicRedisFailure  failure,
             const char           *format,
             ...)
{
  SymfonicLogRequest request = SYMFONIC_LOG_REQUEST_INIT;
  g_autofree char *kind = g_strdup_printf ("redis %s: %s", self->display, failure_names[failure]);
  g_autofree char *what = NULL;
  va_list args;

  va_start (args, format);
  what = g_strdup_vprintf (format, args);
  va_end (args);
  request.stage = "store";
  symfonic_log_request (G_LOG_LEVEL_MESSAGE, &request, kind, "Redis at %s: %s", self->display, what);
}

/* The first word of an error reply, when it is one of Redis' error kinds
 * (upper-case letters only): the rest of the reply may echo data. */
static const char *
error_kind (const redisReply *reply,
            char             *buffer,
            gsize             size)
{
  gsize n = 0;

  while (n < reply->len && n + 1 < size && g_ascii_isupper (reply->str[n]))
    n++;
  if (n == 0 || (n < reply->len && reply->str[n] != ' '))
    return "unclassified";
  memcpy (buffer, reply->str, n);
  buffer[n] = '\0';

  return buffer;
}

static gboolean
error_is (const redisReply *reply,
          const char       *kind)
{
  gsize n = strlen (kind);

  return reply->len >= n && memcmp (reply->str, kind, n) == 0 && (reply->len == n || reply->str[n] == ' ');
}

/* --- replies ------------------------------------------------------------- */

/* A SymfonicRedisReply is hiredis' own redisReply, lent for the callback. */
#define REPLY(r) ((const redisReply *) (r))

SymfonicRedisReplyKind
symfonic_redis_reply_get_kind (const SymfonicRedisReply *reply)
{
  return (SymfonicRedisReplyKind) REPLY (reply)->type;
}

gint64
symfonic_redis_reply_get_integer (const SymfonicRedisReply *reply)
{
  g_return_val_if_fail (REPLY (reply)->type == REDIS_REPLY_INTEGER, 0);

  return REPLY (reply)->integer;
}

/* The bytes of a string or status reply, not nul-terminated for the
 * former when they hold a nul; %NULL for any other kind. */
const char *
symfonic_redis_reply_get_string (const SymfonicRedisReply *reply,
                                 gsize                    *length)
{
  const redisReply *r = REPLY (reply);

  if (r->type != REDIS_REPLY_STRING && r->type != REDIS_REPLY_STATUS)
    {
      if (length != NULL)
        *length = 0;
      return NULL;
    }
  if (length != NULL)
    *length = r->len;

  return r->str;
}

gsize
symfonic_redis_reply_get_n_elements (const SymfonicRedisReply *reply)
{
  return REPLY (reply)->type == REDIS_REPLY_ARRAY ? REPLY (reply)->elements : 0;
}

const SymfonicRedisReply *
symfonic_redis_reply_get_element (const SymfonicRedisReply *reply,
                                  gsize                     index)
{
  g_return_val_if_fail (index < symfonic_redis_reply_get_n_elements (reply), NULL);

  return (const SymfonicRedisReply *) REPLY (reply)->element[index];
}

/* Reads an array of exactly @n_values integers, what the stores' scripts
 * answer; %FALSE for any other shape. */
gboolean
symfonic_redis_reply_read_integers (const SymfonicRedisReply *reply,
                                    gint64                   *values,
                                    gsize                     n_values)
{
  const redisReply *r = REPLY (reply);

  if (r->type != REDIS_REPLY_ARRAY || r->elements != n_values)
    return FALSE;
  for (gsize i = 0; i < n_values; i++)
    {
      if (r->element[i]->type != REDIS_REPLY_INTEGER)
        return FALSE;
      values[i] = r->element[i]->integer;
    }

  return TRUE;
}

/* --- replies, read into an arena ------------------------------------------ */

/* hiredis' reader allocates every element of a reply, and frees each
 * once the reply was handed over: five allocations and frees for a
 * store's three-integer answer. This client's replies are lent to the
 * callback only, and the reader builds one at a time, so they are laid
 * out in an arena of the client's instead, emptied when the reply is
 * freed. Each object carries its client, since hiredis frees a reply
 * knowing nothing else of it. */

typedef struct _Chunk Chunk;

struct _Chunk
{
  Chunk   *next;
  gsize    size;
  gsize    used;
  guint64  data[];
};

typedef struct
{
  SymfonicRedisClient *client;
  redisReply           reply;
} ArenaReply;

/* what an arena keeps between replies */
#define ARENA_CHUNK (4 * 1024)
#define ARENA_KEPT  (64 * 1024)

static gpointer
arena_alloc (SymfonicRedisClient *self,
             gsize                size)
{
  Chunk *chunk = self->arena;
  gpointer p;

  size = (size + 7) & ~(gsize) 7;
  if (G_UNLIKELY (chunk == NULL || chunk->used + size > chunk->size))
    {
      gsize n = MAX (size, chunk != NULL ? chunk->size * 2 : ARENA_CHUNK);
      Chunk *fresh = g_malloc (sizeof (Chunk) + n);

      fresh->size = n;
      fresh->used = 0;
      fresh->next = chunk;
      self->arena = chunk = fresh;
    }
  p = (char *) chunk->data + chunk->used;
  chunk->used += size;

  return p;
}

static void
arena_clear (SymfonicRedisClient *self)
{
  Chunk *chunk = self->arena;

  if (chunk == NULL)
    return;
  /* the newest chunk is the largest: it stays, unless a burst grew it */
  while (chunk->next != NULL)
    {
      Chunk *older = chunk->next;

      chunk->next = older->next;
      g_free (older);
    }
  chunk->used = 0;
  if (chunk->size > ARENA_KEPT)
    {
      g_free (chunk);
      self->arena = NULL;
    }
}

static redisReply *
arena_reply (const redisReadTask *task,
             int                  type)
{
  SymfonicRedisClient *self = task->privdata;
  ArenaReply *made = arena_alloc (self, sizeof *made);

  made->client = self;
  memset (&made->reply, 0, sizeof made->reply);
  made->reply.type = type;
  if (task->parent != NULL)
    ((redisReply *) task->parent->obj)->element[task->idx] = &made->reply;

  return &made->reply;
}

static void *
arena_string (const redisReadTask *task,
              char                *str,
              size_t               len)
{
  redisReply *reply = arena_reply (task, task->type);
  char *copy = arena_alloc (task->privdata, len + 1);

  memcpy (copy, str, len);
  copy[len] = '\0';
  reply->str = copy;
  reply->len = len;

  return reply;
}

static void *
arena_array (const redisReadTask *task,
             int                  elements)
{
  redisReply *reply = arena_reply (task, REDIS_REPLY_ARRAY);

  if (elements > 0)
    {
      reply->element = arena_alloc (task->privdata, elements * sizeof (redisReply *));
      memset (reply->element, 0, elements * sizeof (redisReply *));
    }
  reply->elements = elements;

  return reply;
}

static void *
arena_integer (const redisReadTask *task,
               long long            value)
{
  redisReply *reply = arena_reply (task, REDIS_REPLY_INTEGER);

  reply->integer = value;

  return reply;
}

static void *
arena_nil (const redisReadTask *task)
{
  return arena_reply (task, REDIS_REPLY_NIL);
}

/* hiredis frees only whole replies, the reader's or the one it handed
 * over: nothing else is in the arena then */
static void
arena_free (void *object)
{
  ArenaReply *made = (ArenaReply *) ((char *) object - G_STRUCT_OFFSET (ArenaReply, reply));

  arena_clear (made->client);
}

static redisReplyObjectFunctions arena_functions = {
  .createString = arena_string,
  .createArray = arena_array,
  .createInteger = arena_integer,
  .createNil = arena_nil,
  .freeObject = arena_free,
};

/* --- the ring of commands in flight -------------------------------------- */

static Pending *
ring_at (SymfonicRedisClient *self,
         guint                i)
{
  return &self->ring[(self->ring_head + i) & (self->ring_size - 1)];
}

static Pending *
ring_push (SymfonicRedisClient *self)
{
  if (self->ring_length == self->ring_size)
    {
      Pending *ring = g_new (Pending, self->ring_size * 2);

      for (guint i = 0; i < self->ring_length; i++)
        ring[i] = *ring_at (self, i);
      g_free (self->ring);
      self->ring = ring;
      self->ring_head = 0;
      self->ring_size *= 2;
    }
  self->ring_length++;

  return ring_at (self, self->ring_length - 1);
}

static Pending
ring_pop (SymfonicRedisClient *self)
{
  Pending pending = *ring_at (self, 0);

  self->ring_head = (self->ring_head + 1) & (self->ring_size - 1);
  self->ring_length--;

  return pending;
}

static void
pending_clear (Pending *pending)
{
  g_clear_pointer (&pending->script, symfonic_redis_script_unref);
}

/* --- the journal: commands formatted in place ----------------------------- */

/* Room for @n more bytes after the command being built: the bytes no
 * command in flight needs any more go first, then the buffer grows. */
static char *
journal_room (SymfonicRedisClient *self,
              gsize                n)
{
  if (G_UNLIKELY (self->build_end + n > self->journal_size))
    {
      gsize head = self->journal_head;

      if (head > 0)
        {
          memmove (self->journal, self->journal + head, self->build_end - head);
          self->journal_base += head;
          self->journal_tail -= head;
          self->build_end -= head;
          self->journal_head = 0;
        }
      if (self->build_end + n > self->journal_size)
        {
          while (self->build_end + n > self->journal_size)
            self->journal_size *= 2;
          self->journal = g_realloc (self->journal, self->journal_size);
        }
    }

  return self->journal + self->build_end;
}

/* Decimal digits of @value, written backwards from @end: returns where
 * they start. */
static char *
format_uint (char    *end,
             guint64  value)
{
  do
    {
      *--end = (char) ('0' + value % 10);
      value /= 10;
    }
  while (value != 0);

  return end;
}

static void
journal_append_count (SymfonicRedisClient *self,
                      char                 kind,
                      guint64              count)
{
  char digits[24];
  char *start = format_uint (digits + sizeof digits, count);
  gsize n = digits + sizeof digits - start;
  char *p = journal_room (self, n + 3);

  *p++ = kind;
  memcpy (p, start, n);
  p += n;
  *p++ = '\r';
  *p++ = '\n';
  self->build_end = p - self->journal;
}

static void
journal_append_arg (SymfonicRedisClient *self,
                    const char          *arg,
                    gsize                length)
{
  char *p;

  journal_append_count (self, '$', length);
  p = journal_room (self, length + 2);
  memcpy (p, arg, length);
  p[length] = '\r';
  p[length + 1] = '\n';
  self->build_end += length + 2;
}

static void
build_begin (SymfonicRedisClient *self,
             guint                argc)
{
  /* a command built and not sent is dropped */
  self->build_end = self->journal_tail;
  self->build_script = NULL;
  journal_append_count (self, '*', argc);
  self->build_left = argc;
}

/* The bytes of @pending, answered, are not needed any more: those of
 * every command sent before it went with their answers. */
static void
journal_release (SymfonicRedisClient *self,
                 const Pending       *pending)
{
  if (self->ring_length == 0)
    {
      self->journal_head = self->journal_tail;
      if (self->journal_size > KEPT_JOURNAL && self->build_end == self->journal_tail)
        {
          self->journal_base += self->journal_tail;
          self->journal_head = self->journal_tail = self->build_end = 0;
          self->journal_size = INITIAL_JOURNAL;
          g_free (self->journal);
          self->journal = g_malloc (self->journal_size);
        }
      return;
    }
  if (pending->journal_length > 0)
    self->journal_head = MAX (self->journal_head,
                              pending->journal_at + pending->journal_length - self->journal_base);
}

/* --- timers -------------------------------------------------------------- */

/* The timer fires at the earliest deadline asked for since it last fired;
 * a later one is looked at then. Under steady traffic that is one wake-up
 * per timeout period, not one timer operation per command. */
static void
arm_timer (SymfonicRedisClient *self,
           gint64               deadline)
{
  if (self->timer_at >= 0 && self->timer_at <= deadline)
    return;
  self->timer_at = deadline;
  symfonic_timer_set_deadline (self->timer, deadline);
}

/* Fires the timer at @deadline and not before, whatever it was armed for
 * (-1: never). */
static void
reset_timer (SymfonicRedisClient *self,
             gint64               deadline)
{
  self->timer_at = deadline;
  symfonic_timer_set_deadline (self->timer, deadline);
}

static void
set_up (SymfonicRedisClient *self,
        gboolean             up)
{
  g_atomic_int_add (&self->stats->up, up ? 1 : -1);
  if (self->state_func != NULL)
    self->state_func (self, up, self->state_data);
}

/* Waits before the next attempt: exponentially longer after each failed
 * one, capped, and jittered so that the workers of every instance do not
 * come back to a restarted server in step. */
static void
back_off (SymfonicRedisClient *self)
{
  gint64 delay = self->backoff_min_us;

  self->state = STATE_WAITING;
  for (guint i = 1; i < self->attempts && delay < self->backoff_max_us; i++)
    delay *= 2;
  delay = MIN (delay, self->backoff_max_us);
  if (self->attempts < G_MAXUINT)
    self->attempts++;
  delay = delay / 2 + g_random_int_range (0, (gint32) MIN (delay / 2, G_MAXINT32) + 1);
  /* a deadline of the connection just lost must not cut the wait short */
  reset_timer (self, g_get_monotonic_time () + delay);
}

/* --- the connection ------------------------------------------------------ */

static void
update_watch (SymfonicRedisClient *self)
{
  if (self->watch != NULL)
    symfonic_watch_set_events (self->watch, (self->want_read ? G_IO_IN : 0) | (self->want_write ? G_IO_OUT : 0));
}

static void
ev_add_read (void *data)
{
  SymfonicRedisClient *self = data;

  self->want_read = TRUE;
  update_watch (self);
}

static void
ev_del_read (void *data)
{
  SymfonicRedisClient *self = data;

  self->want_read = FALSE;
  update_watch (self);
}

static void
ev_add_write (void *data)
{
  SymfonicRedisClient *self = data;

  /* while connecting, G_IO_OUT says that connect() is done */
  if (!(self->ac->c.flags & REDIS_CONNECTED))
    {
      self->want_write = TRUE;
      update_watch (self);
    }
  else if (!self->want_write)
    {
      symfonic_poller_defer (self->poller, &self->flush);
    }
}

static void
ev_del_write (void *data)
{
  SymfonicRedisClient *self = data;

  self->want_write = FALSE;
  update_watch (self);
}

/* hiredis is done with the connection: its commands were all answered or
 * failed, and the socket is about to be closed. */
static void
ev_cleanup (void *data)
{
  SymfonicRedisClient *self = data;
  gboolean was_up = self->state == STATE_UP;

  g_clear_pointer (&self->watch, symfonic_watch_remove);
  symfonic_poller_cancel_deferred (self->poller, &self->flush);
  self->ac = NULL;
  self->want_read = self->want_write = FALSE;
  g_warn_if_fail (self->ring_length == 0);

  if (self->drop == DROP_NONE)
    {
      /* hiredis let it go: the server closed it, or I/O failed */
      count_failure (self, was_up ? SYMFONIC_REDIS_FAILURE_DISCONNECT : SYMFONIC_REDIS_FAILURE_CONNECT);
      log_failure (self, was_up ? SYMFONIC_REDIS_FAILURE_DISCONNECT : SYMFONIC_REDIS_FAILURE_CONNECT,
                   was_up ? "the connection broke; reconnecting" : "cannot connect; retrying");
    }
  self->drop = DROP_NONE;

  if (self->state != STATE_CLOSED)
    back_off (self);
  if (was_up)
    set_up (self, FALSE);
}

/* Lets the connection go; hiredis then fails its commands (see on_reply)
 * and calls ev_cleanup(), at once or, from inside one of its callbacks,
 * once that returns. */
static void
drop_connection (SymfonicRedisClient *self,
                 Drop                 drop)
{
  if (self->ac == NULL || self->drop != DROP_NONE)
    return;
  self->drop = drop;
  redisAsyncFree (self->ac);
}

/* Hands hiredis' output buffer to the kernel, as redisAsyncHandleWrite()
 * would but with send (MSG_NOSIGNAL); a buffer kept (sdsclear) rather
 * than made anew after each write, as hiredis does, also spares an
 * allocation per flush. */
static void
write_out (SymfonicRedisClient *self)
{
  redisContext *c = &self->ac->c;
  gsize length = sdslen (c->obuf);
  gssize n;

  if (length > 0)
    {
      do
        n = send (c->fd, c->obuf, length, MSG_NOSIGNAL | MSG_DONTWAIT);
      while (n < 0 && errno == EINTR);

      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
        {
          /* hiredis, finding the error, tears the connection down as it
           * does after a failed write of its own */
          c->err = REDIS_ERR_IO;
          g_strlcpy (c->errstr, g_strerror (errno), sizeof c->errstr);
          redisAsyncHandleWrite (self->ac);
          return;
        }
      if (n == (gssize) length)
        sdsclear (c->obuf);
      else if (n > 0)
        sdsrange (c->obuf, n, -1);
    }

  self->want_write = sdslen (c->obuf) > 0;
  self->want_read = TRUE;
  update_watch (self);
}

static void
flush (gpointer data)
{
  SymfonicRedisClient *self = data;
  G_GNUC_UNUSED g_autoptr(SymfonicRedisClient) keep = NULL;

  if (self->ac == NULL || !(self->ac->c.flags & REDIS_CONNECTED))
    return;
  keep = symfonic_redis_client_ref (self);
  write_out (self);
}

static void
on_ready (gpointer     data,
          GIOCondition condition)
{
  SymfonicRedisClient *self = data;
  redisAsyncContext *ac = self->ac;
  G_GNUC_UNUSED g_autoptr(SymfonicRedisClient) keep = symfonic_redis_client_ref (self);

  /* hiredis frees the context when the connection fails: a new one is
   * made only by the timer, never from in here, so a context that is
   * still ours after a call is the same connection */
  if (!(ac->c.flags & REDIS_CONNECTED))
    {
      /* any event tells how connect() went; hiredis' read handler
       * finishes the connection (or gives it up) without writing */
      redisAsyncHandleRead (ac);
      if (self->ac == ac && (ac->c.flags & REDIS_CONNECTED))
        write_out (self);
      return;
    }

  if (condition & (G_IO_IN | G_IO_HUP | G_IO_ERR))
    redisAsyncHandleRead (ac);
  if ((condition & G_IO_OUT) && self->ac == ac)
    write_out (self);
}

static GError *
failure_error (SymfonicRedisClient *self,
               const Pending       *pending,
               gint64               now)
{
  switch (self->drop)
    {
    case DROP_CLOSE:
      return g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED, "The store client was closed");
    case DROP_TIMEOUT:
      if (pending->deadline <= now)
        {
          count_failure (self, SYMFONIC_REDIS_FAILURE_TIMEOUT);
          return g_error_new_literal (SYMFONIC_ERROR, SYMFONIC_ERROR_STORE_TIMEOUT,
                                      "The shared store did not answer in time");
        }
      G_GNUC_FALLTHROUGH;
    case DROP_NONE:
    case DROP_HANDSHAKE:
    default:
      count_failure (self, SYMFONIC_REDIS_FAILURE_UNAVAILABLE);
      return g_error_new_literal (SYMFONIC_ERROR, SYMFONIC_ERROR_STORE_UNAVAILABLE,
                                  "The connection to the shared store broke before it answered");
    }
}

static void
handshake_reply (SymfonicRedisClient *self,
                 const Pending       *pending,
                 const redisReply    *reply)
{
  if (reply == NULL || self->drop != DROP_NONE)
    return;

  if (reply->type == REDIS_REPLY_ERROR)
    {
      char kind[24];
      gboolean auth = pending->step == STEP_AUTH || error_is (reply, "NOAUTH") || error_is (reply, "WRONGPASS");
      SymfonicRedisFailure failure = auth ? SYMFONIC_REDIS_FAILURE_AUTH : SYMFONIC_REDIS_FAILURE_CONNECT;

      /* a script the server would not load goes whole with its EVALSHA
       * later, as after a SCRIPT FLUSH */
      if (pending->step == STEP_LOAD && !auth)
        return;

      count_failure (self, failure);
      if (auth)
        log_failure (self, failure, "the server refused the credentials (%s); retrying",
                     error_kind (reply, kind, sizeof kind));
      else
        log_failure (self, failure, "the server refused %s (%s); retrying",
                     pending->step == STEP_SELECT ? "SELECT" : "PING", error_kind (reply, kind, sizeof kind));
      drop_connection (self, DROP_HANDSHAKE);
      return;
    }

  if (pending->step == STEP_PING)
    {
      self->state = STATE_UP;
      self->attempts = 0;
      set_up (self, TRUE);
    }
}

static gboolean send_eval (SymfonicRedisClient *self,
                           Pending             *pending);

/* hiredis' callback for every command of this client, in the order they
 * were sent; @r is %NULL when the connection goes away first. */
static void
on_reply (redisAsyncContext *ac,
          void              *r,
          void              *privdata)
{
  SymfonicRedisClient *self = privdata;
  const redisReply *reply = r;
  g_autoptr(GError) error = NULL;
  Pending pending;

  g_return_if_fail (self->ring_length > 0);
  pending = ring_pop (self);

  if (pending.func == NULL)
    {
      handshake_reply (self, &pending, reply);
      pending_clear (&pending);
      journal_release (self, &pending);
      return;
    }

  if (reply == NULL)
    {
      error = failure_error (self, &pending, g_get_monotonic_time ());
    }
  else if (reply->type == REDIS_REPLY_ERROR)
    {
      char kind[24];

      /* The script cache is empty after a restart, a SCRIPT FLUSH or a
       * fail-over: the script goes once more, whole, and the server keeps
       * it for the EVALSHAs after it. */
      if (pending.script != NULL && !pending.retried && error_is (reply, "NOSCRIPT") &&
          send_eval (self, &pending))
        {
          journal_release (self, &pending);
          return;
        }
      count_failure (self, SYMFONIC_REDIS_FAILURE_REPLY);
      log_failure (self, SYMFONIC_REDIS_FAILURE_REPLY, "a command failed (%s)", error_kind (reply, kind, sizeof kind));
      error = g_error_new (SYMFONIC_ERROR, SYMFONIC_ERROR_FAILED, "The shared store answered with an error (%s)",
                           error_kind (reply, kind, sizeof kind));
    }
  else
    {
      count_latency (self, pending.sent);
    }

  pending_clear (&pending);
  journal_release (self, &pending);
  pending.func (self, error == NULL ? (const SymfonicRedisReply *) reply : NULL, error, pending.user_data);
}

/* Sends a command formatted by hiredis and records it; %FALSE (nothing
 * sent) when hiredis takes no more commands on this connection. */
static gboolean
send_formatted (SymfonicRedisClient *self,
                const char          *command,
                gsize                length,
                const Pending       *pending)
{
  if (redisAsyncFormattedCommand (self->ac, on_reply, self, command, length) != REDIS_OK)
    return FALSE;

  *ring_push (self) = *pending;
  arm_timer (self, pending->deadline);

  return TRUE;
}

/* EVALSHA's formatted command starts "*N\r\n$7\r\nEVALSHA\r\n$40\r\n<sha1>\r\n":
 * EVAL's is the same with EVAL and the source, the rest unchanged. */
static gboolean
send_eval (SymfonicRedisClient *self,
           Pending             *pending)
{
  static const char evalsha_head[] = "$7\r\nEVALSHA\r\n$40\r\n";
  const char *evalsha = self->journal + (pending->journal_at - self->journal_base);
  gsize formatted_length = pending->journal_length;
  const char *count_end = memchr (evalsha, '\n', formatted_length) + 1;
  const char *rest = count_end + (sizeof evalsha_head - 1) + 40 + 2;
  g_autoptr(GString) command = NULL;
  const char *source;
  gsize source_length;
  Pending retry;

  source = symfonic_redis_script_get_source (pending->script, &source_length);
  command = g_string_sized_new (formatted_length + source_length + 32);
  g_string_append_len (command, evalsha, count_end - evalsha);
  g_string_append_printf (command, "$4\r\nEVAL\r\n$%" G_GSIZE_FORMAT "\r\n", source_length);
  g_string_append_len (command, source, source_length);
  g_string_append (command, "\r\n");
  g_string_append_len (command, rest, formatted_length - (rest - evalsha));

  /* the EVAL is not in the journal: it is not retried */
  retry = *pending;
  retry.retried = TRUE;
  retry.journal_length = 0;
  if (!send_formatted (self, command->str, command->len, &retry))
    return FALSE;
  /* the retry holds the script now */
  pending->script = NULL;

  return TRUE;
}

static void
send_handshake (SymfonicRedisClient *self,
                Step                 step,
                int                  argc,
                const char         **argv)
{
  Pending pending = { 0 };
  char *command;
  int length;

  pending.step = step;
  pending.deadline = self->connect_deadline;
  length = redisFormatSdsCommandArgv (&command, argc, argv, NULL);
  if (length < 0)
    g_error ("Out of memory formatting a Redis command");
  if (!send_formatted (self, command, length, &pending))
    g_warn_if_reached ();
  /* the password is not left lying in freed memory */
  memset (command, 0, length);
  redisFreeSdsCommand (command);
}

static void
on_connected (const redisAsyncContext *ac,
              int                      status)
{
  /* a failed connect() is ev_cleanup()'s to count */
}

static void
connect_to (SymfonicRedisClient *self,
            const char          *ip)
{
  redisAsyncContext *ac;

  ac = ip != NULL ? redisAsyncConnect (ip, self->address.port) : redisAsyncConnectUnix (self->address.path);
  if (ac == NULL)
    g_error ("Out of memory making a Redis connection");
  if (ac->err)
    {
      /* hiredis' own text (strerror), not the server's */
      count_failure (self, SYMFONIC_REDIS_FAILURE_CONNECT);
      log_failure (self, SYMFONIC_REDIS_FAILURE_CONNECT, "cannot connect (%s); retrying", ac->errstr);
      redisAsyncFree (ac);
      back_off (self);
      return;
    }

  self->ac = ac;
  ac->data = self;
  ac->ev.data = self;
  ac->ev.addRead = ev_add_read;
  ac->ev.delRead = ev_del_read;
  ac->ev.addWrite = ev_add_write;
  ac->ev.delWrite = ev_del_write;
  ac->ev.cleanup = ev_cleanup;
  ac->c.reader->fn = &arena_functions;
  redisReaderSetPrivdata (ac->c.reader, self);
  self->watch = symfonic_poller_watch (self->poller, ac->c.fd, 0, on_ready, self);
  redisAsyncSetConnectCallback (ac, on_connected);

  /* sent with the connection, answered in one round trip */
  if (self->password != NULL)
    {
      const char *argv[] = { "AUTH", self->username, self->password };

      if (self->username != NULL)
        send_handshake (self, STEP_AUTH, 3, argv);
      else
        send_handshake (self, STEP_AUTH, 2, (const char *[]) { "AUTH", self->password });
    }
  if (self->address.db != 0)
    {
      char db[16];

      g_snprintf (db, sizeof db, "%u", self->address.db);
      send_handshake (self, STEP_SELECT, 2, (const char *[]) { "SELECT", db });
    }
  /* A restarted or new server knows no script: without this, every
   * command in flight of each script would come back NOSCRIPT and go
   * again, whole, one more round trip each. */
  for (guint i = 0; self->scripts != NULL && i < self->scripts->len; i++)
    send_handshake (self, STEP_LOAD, 3,
                    (const char *[]) { "SCRIPT", "LOAD",
                                       symfonic_redis_script_get_source (self->scripts->pdata[i], NULL) });
  send_handshake (self, STEP_PING, 1, (const char *[]) { "PING" });
}

static void
resolved (GObject      *object,
          GAsyncResult *result,
          gpointer      user_data)
{
  g_autoptr(SymfonicRedisClient) self = user_data;
  g_autoptr(GError) error = NULL;
  GList *addresses = g_resolver_lookup_by_name_finish (G_RESOLVER (object), result, &error);
  g_autofree char *ip = NULL;
  GInetAddress *chosen;

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) || self->state != STATE_CONNECTING)
    {
      g_resolver_free_addresses (addresses);
      return;
    }
  g_clear_object (&self->resolving);
  if (addresses == NULL)
    {
      count_failure (self, SYMFONIC_REDIS_FAILURE_CONNECT);
      log_failure (self, SYMFONIC_REDIS_FAILURE_CONNECT, "cannot resolve the host name (%s); retrying",
                   error->message);
      back_off (self);
      return;
    }
  /* IPv4 first, as hiredis does: a server bound to 127.0.0.1 is not
   * found at ::1, which "localhost" often names first */
  chosen = addresses->data;
  for (GList *l = addresses; l != NULL; l = l->next)
    {
      if (g_inet_address_get_family (l->data) == G_SOCKET_FAMILY_IPV4)
        {
          chosen = l->data;
          break;
        }
    }
  ip = g_inet_address_to_string (chosen);
  g_resolver_free_addresses (addresses);
  connect_to (self, ip);
}

static void
connect_now (SymfonicRedisClient *self)
{
  self->state = STATE_CONNECTING;
  self->drop = DROP_NONE;
  self->connect_deadline = g_get_monotonic_time () + self->connect_timeout_us;
  arm_timer (self, self->connect_deadline);

  /* hiredis would look a name up with getaddrinfo(), blocking the worker;
   * GLib's resolver does it on its own threads */
  if (self->address.host != NULL && !g_hostname_is_ip_address (self->address.host))
    {
      self->resolving = g_cancellable_new ();
      g_resolver_lookup_by_name_async (g_resolver_get_default (), self->address.host, self->resolving, resolved,
                                       symfonic_redis_client_ref (self));
      return;
    }
  connect_to (self, self->address.host);
}

static void
on_timer (gpointer data)
{
  SymfonicRedisClient *self = data;
  G_GNUC_UNUSED g_autoptr(SymfonicRedisClient) keep = symfonic_redis_client_ref (self);
  gint64 now = g_get_monotonic_time ();
  gint64 earliest = G_MAXINT64;

  self->timer_at = -1;
  switch (self->state)
    {
    case STATE_WAITING:
      connect_now (self);
      return;

    case STATE_CONNECTING:
      if (self->resolving != NULL && now >= self->connect_deadline)
        {
          g_cancellable_cancel (self->resolving);
          g_clear_object (&self->resolving);
          count_failure (self, SYMFONIC_REDIS_FAILURE_CONNECT);
          log_failure (self, SYMFONIC_REDIS_FAILURE_CONNECT, "resolving the host name timed out; retrying");
          back_off (self);
          return;
        }
      if (self->ac != NULL && now >= self->connect_deadline)
        {
          count_failure (self, SYMFONIC_REDIS_FAILURE_CONNECT);
          log_failure (self, SYMFONIC_REDIS_FAILURE_CONNECT, "connecting timed out; retrying");
          drop_connection (self, DROP_TIMEOUT);
          return;
        }
      arm_timer (self, self->connect_deadline);
      return;

    case STATE_UP:
      for (guint i = 0; i < self->ring_length; i++)
        earliest = MIN (earliest, ring_at (self, i)->deadline);
      if (earliest <= now)
        {
          log_failure (self, SYMFONIC_REDIS_FAILURE_TIMEOUT,
                       "a command had no answer in time; reconnecting");
          drop_connection (self, DROP_TIMEOUT);
        }
      else if (self->ring_length > 0)
        {
          arm_timer (self, earliest);
        }
      return;

    case STATE_IDLE:
    case STATE_CLOSED:
    default:
      return;
    }
}

/* --- the client ---------------------------------------------------------- */

/* A client of the server at @address, not connected before
 * symfonic_redis_client_start(). */
SymfonicRedisClient *
symfonic_redis_client_new (const SymfonicRedisAddress *address)
{
  SymfonicRedisClient *self;

  g_return_val_if_fail (address != NULL, NULL);
  g_return_val_if_fail ((address->host != NULL) != (address->path != NULL), NULL);

  self = g_new0 (SymfonicRedisClient, 1);
  self->ref_count = 1;
  self->address.host = g_strdup (address->host);
  self->address.port = address->port;
  self->address.path = g_strdup (address->path);
  self->address.db = address->db;
  self->display = symfonic_redis_address_dup_display (address);
  self->timeout_us = DEFAULT_TIMEOUT_MS * G_TIME_SPAN_MILLISECOND;
  self->connect_timeout_us = DEFAULT_CONNECT_TIMEOUT_MS * G_TIME_SPAN_MILLISECOND;
  self->backoff_min_us = DEFAULT_BACKOFF_MIN_MS * G_TIME_SPAN_MILLISECOND;
  self->backoff_max_us = DEFAULT_BACKOFF_MAX_MS * G_TIME_SPAN_MILLISECOND;
  self->stats = &self->own_stats;
  self->state = STATE_IDLE;
  self->timer_at = -1;
  self->flush.func = flush;
  self->flush.data = self;
  self->ring_size = INITIAL_RING;
  self->ring = g_new (Pending, self->ring_size);
  self->journal_size = INITIAL_JOURNAL;
  self->journal = g_malloc (self->journal_size);

  return self;
}

SymfonicRedisClient *
symfonic_redis_client_ref (SymfonicRedisClient *self)
{
  self->ref_count++;
  return self;
}

static void
wipe (char **secret)
{
  if (*secret == NULL)
    return;
  memset (*secret, 0, strlen (*secret));
  g_clear_pointer (secret, g_free);
}

/* Dropping the last reference closes the client (see
 * symfonic_redis_client_close()); a callback it runs may take a new one. */
void
symfonic_redis_client_unref (SymfonicRedisClient *self)
{
  if (--self->ref_count > 0)
    return;
  if (self->state != STATE_CLOSED && self->state != STATE_IDLE)
    {
      self->ref_count = 1;
      symfonic_redis_client_close (self);
      if (--self->ref_count > 0)
        return;
    }

  g_assert (self->ac == NULL);
  g_clear_pointer (&self->timer, symfonic_timer_remove);
  g_clear_pointer (&self->poller, symfonic_poller_unref);
  g_free (self->ring);
  g_clear_pointer (&self->scripts, g_ptr_array_unref);
  g_free (self->journal);
  arena_clear (self);
  g_clear_pointer (&self->arena, g_free);
  wipe (&self->password);
  g_free (self->username);
  g_free (self->display);
  symfonic_redis_address_clear (&self->address);
  g_free (self);
}

/* AUTH on every connection: with @username (Redis 6 ACL users) or
 * without. The client keeps its own copy, wiped when freed; it goes
 * nowhere but into the AUTH command. */
void
symfonic_redis_client_set_credentials (SymfonicRedisClient *self,
                                       const char          *username,
                                       const char          *password)
{
  g_return_if_fail (self->state == STATE_IDLE);
  g_return_if_fail (username == NULL || password != NULL);

  wipe (&self->password);
  g_free (self->username);
  self->username = g_strdup (username);
  self->password = g_strdup (password);
}

/* The deadline of every command (default 50 ms). */
void
symfonic_redis_client_set_timeout (SymfonicRedisClient *self,
                                   guint                timeout_ms)
{
  g_return_if_fail (timeout_ms > 0);

  self->timeout_us = (gint64) timeout_ms * G_TIME_SPAN_MILLISECOND;
}

/* The deadline of a connection attempt: name lookup, connect() and the
 * handshake (default 1 s). No command waits for it: they fail at once
 * until the connection is up. */
void
symfonic_redis_client_set_connect_timeout (SymfonicRedisClient *self,
                                           guint                timeout_ms)
{
  g_return_if_fail (timeout_ms > 0);

  self->connect_timeout_us = (gint64) timeout_ms * G_TIME_SPAN_MILLISECOND;
}

/* The wait before reconnecting: @min_ms after the first failure, doubled
 * after each one after it, at most @max_ms; each wait is drawn between
 * half of that and all of it (defaults 25 ms and 2 s). */
void
symfonic_redis_client_set_backoff (SymfonicRedisClient *self,
                                   guint                min_ms,
                                   guint                max_ms)
{
  g_return_if_fail (min_ms > 0 && min_ms <= max_ms);

  self->backoff_min_us = (gint64) min_ms * G_TIME_SPAN_MILLISECOND;
  self->backoff_max_us = (gint64) max_ms * G_TIME_SPAN_MILLISECOND;
}

/* Where the client counts (by default a struct of its own); @stats must
 * outlive it. */
void
symfonic_redis_client_set_stats (SymfonicRedisClient *self,
                                 SymfonicRedisStats  *stats)
{
  g_return_if_fail (self->state == STATE_IDLE);
  g_return_if_fail (stats != NULL);

  self->stats = stats;
}

/* Loads @script (SCRIPT LOAD) with every connection's handshake, before
 * any command goes: its EVALSHAs then find it however new the server. */
void
symfonic_redis_client_add_script (SymfonicRedisClient *self,
                                  SymfonicRedisScript *script)
{
  g_return_if_fail (self->state == STATE_IDLE);
  g_return_if_fail (script != NULL);

  if (self->scripts == NULL)
    self->scripts = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_redis_script_unref);
  g_ptr_array_add (self->scripts, symfonic_redis_script_ref (script));
}

void
symfonic_redis_client_set_state_func (SymfonicRedisClient    *self,
                                      SymfonicRedisStateFunc  func,
                                      gpointer                user_data)
{
  self->state_func = func;
  self->state_data = user_data;
}

/* Connects, on the poller of the calling thread's default main context:
 * the client belongs to that thread from now on, and every call on it is
 * made there. Commands fail until the connection is up (the state func
 * is told). */
void
symfonic_redis_client_start (SymfonicRedisClient *self)
{
  g_return_if_fail (self->state == STATE_IDLE);

  self->poller = symfonic_poller_ref (symfonic_poller_get_thread_default ());
  self->timer = symfonic_poller_timer (self->poller, on_timer, self);
  connect_now (self);
}

/* Closes the connection for good: every command in flight gets
 * %G_IO_ERROR_CANCELLED, before this returns or, when called from one of
 * the client's callbacks, right after that returns. */
void
symfonic_redis_client_close (SymfonicRedisClient *self)
{
  gboolean was_up = self->state == STATE_UP;

  if (self->state == STATE_CLOSED)
    return;

  /* the callbacks run now may drop what else holds the client */
  symfonic_redis_client_ref (self);
  self->state = STATE_CLOSED;
  if (self->timer != NULL)
    reset_timer (self, -1);
  if (self->resolving != NULL)
    {
      g_cancellable_cancel (self->resolving);
      g_clear_object (&self->resolving);
    }
  drop_connection (self, DROP_CLOSE);
  /* ev_cleanup() tells only of a connection that is up at its call */
  if (was_up)
    set_up (self, FALSE);
  symfonic_redis_client_unref (self);
}

gboolean
symfonic_redis_client_is_up (SymfonicRedisClient *self)
{
  return self->state == STATE_UP && self->drop == DROP_NONE;
}

/* Commands sent and not answered yet (the handshake's included). */
guint
symfonic_redis_client_get_n_pending (SymfonicRedisClient *self)
{
  return self->ring_length;
}

const char *
symfonic_redis_client_get_display (SymfonicRedisClient *self)
{
  return self->display;
}

static gboolean
unavailable (SymfonicRedisClient  *self,
             GError              **error)
{
  count_failure (self, SYMFONIC_REDIS_FAILURE_UNAVAILABLE);
  log_failure (self, SYMFONIC_REDIS_FAILURE_UNAVAILABLE, "commands fail: no connection is up");
  g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_STORE_UNAVAILABLE, "The shared store is unavailable");

  return FALSE;
}

/* Commands whose replies do not come one per command, which the ring of
 * commands in flight could not follow. */
static gboolean
is_push_command (const char *name,
                 gsize       length)
{
  static const char * const names[] = {
    "SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE", "UNSUBSCRIBE", "PUNSUBSCRIBE", "SUNSUBSCRIBE", "MONITOR",
  };

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      if (length == strlen (names[i]) && g_ascii_strncasecmp (name, names[i], length) == 0)
        return TRUE;
    }

  return FALSE;
}

/* Sends the command built, with the client's deadline and @extra_us
 * more; %FALSE with @error set when no connection is up. */
static gboolean
send_built (SymfonicRedisClient     *self,
            gint64                   extra_us,
            SymfonicRedisReplyFunc   func,
            gpointer                 user_data,
            GError                 **error)
{
  Pending pending = { 0 };
  gsize length;

  if (self->state != STATE_UP || self->drop != DROP_NONE)
    return unavailable (self, error);

  /* hiredis looks for the command's name with strchr(): it must end in a
   * NUL, which the next command built overwrites (hiredis has copied this
   * one by then). Making room may move what was built. */
  *journal_room (self, 1) = '\0';
  length = self->build_end - self->journal_tail;

  pending.func = func;
  pending.user_data = user_data;
  pending.sent = g_get_monotonic_time ();
  pending.deadline = pending.sent + self->timeout_us + extra_us;
  pending.journal_at = self->journal_base + self->journal_tail;
  pending.journal_length = length;
  if (self->build_script != NULL)
    pending.script = symfonic_redis_script_ref (self->build_script);
  if (!send_formatted (self, self->journal + self->journal_tail, length, &pending))
    {
      pending_clear (&pending);
      return unavailable (self, error);
    }
  self->journal_tail = self->build_end;
  self->build_script = NULL;
  add (&self->stats->commands, 1);

  return TRUE;
}

/* Commands built in place: symfonic_redis_client_build_eval() (or
 * _build_command()), then every argument, then
 * symfonic_redis_client_send_built(). The command is formatted straight
 * into the client's journal, which it needs anyway for an EVALSHA that
 * may have to go again as EVAL: no argument vector, no string per
 * argument, no allocation once the journal has grown to the traffic. */
void
symfonic_redis_client_build_command (SymfonicRedisClient *self,
                                     guint                argc)
{
  g_return_if_fail (argc > 0);

  build_begin (self, argc);
}

void
symfonic_redis_client_build_eval (SymfonicRedisClient *self,
                                  SymfonicRedisScript *script,
                                  guint                n_keys,
                                  guint                n_args)
{
  char digits[24];
  char *start = format_uint (digits + sizeof digits, n_keys);

  g_return_if_fail (script != NULL);

  build_begin (self, 3 + n_keys + n_args);
  journal_append_arg (self, "EVALSHA", 7);
  journal_append_arg (self, symfonic_redis_script_get_sha1 (script), 40);
  journal_append_arg (self, start, digits + sizeof digits - start);
  self->build_left = n_keys + n_args;
  self->build_script = script;
}

void
symfonic_redis_client_build_arg (SymfonicRedisClient *self,
                                 const char          *arg,
                                 gsize                length)
{
  g_return_if_fail (self->build_left > 0);

  journal_append_arg (self, arg, length);
  self->build_left--;
}

/* A number as an argument, "$N\r\nDIGITS\r\n", in one go: the stores'
 * commands are mostly numbers. */
static void
build_number (SymfonicRedisClient *self,
              guint64              magnitude,
              gboolean             negative)
{
  char digits[24];
  char *start = format_uint (digits + sizeof digits, magnitude);
  gsize n;
  char *p;

  g_return_if_fail (self->build_left > 0);

  if (negative)
    *--start = '-';
  n = digits + sizeof digits - start;
  /* at most 20 digits and a sign: the length has two digits at most */
  p = journal_room (self, n + 9);
  *p++ = '$';
  if (n >= 10)
    *p++ = (char) ('0' + n / 10);
  *p++ = (char) ('0' + n % 10);
  *p++ = '\r';
  *p++ = '\n';
  memcpy (p, start, n);
  p += n;
  *p++ = '\r';
  *p++ = '\n';
  self->build_end = p - self->journal;
  self->build_left--;
}

void
symfonic_redis_client_build_uint (SymfonicRedisClient *self,
                                  guint64              value)
{
  build_number (self, value, FALSE);
}

void
symfonic_redis_client_build_int (SymfonicRedisClient *self,
                                 gint64               value)
{
  build_number (self, value < 0 ? -(guint64) value : (guint64) value, value < 0);
}

/* Sends the command built; %FALSE, with @error set and @func never
 * called, when no connection is up. */
gboolean
symfonic_redis_client_send_built (SymfonicRedisClient     *self,
                                  SymfonicRedisReplyFunc   func,
                                  gpointer                 user_data,
                                  GError                 **error)
{
  g_return_val_if_fail (self->build_end > self->journal_tail, FALSE);
  g_return_val_if_fail (self->build_left == 0, FALSE);
  g_return_val_if_fail (func != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return send_built (self, 0, func, user_data, error);
}

/* Sends a command (binary-safe when @argv_len is given) with the client's
 * deadline. %FALSE, with @error set and @func never called, when no
 * connection is up. */
gboolean
symfonic_redis_client_command (SymfonicRedisClient     *self,
                               guint                    argc,
                               const char * const      *argv,
                               const gsize             *argv_len,
                               SymfonicRedisReplyFunc   func,
                               gpointer                 user_data,
                               GError                 **error)
{
  return symfonic_redis_client_command_full (self, argc, argv, argv_len, 0, func, user_data, error);
}

/* As symfonic_redis_client_command(), for a command the server may hold
 * on purpose (XREAD BLOCK): its deadline is @extra_us later. Such a
 * command holds up every command sent after it on the connection, so it
 * belongs on a client of its own. */
gboolean
symfonic_redis_client_command_full (SymfonicRedisClient     *self,
                                    guint                    argc,
                                    const char * const      *argv,
                                    const gsize             *argv_len,
                                    gint64                   extra_us,
                                    SymfonicRedisReplyFunc   func,
                                    gpointer                 user_data,
                                    GError                 **error)
{
  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (argc > 0 && argv != NULL, FALSE);
  g_return_val_if_fail (func != NULL, FALSE);
  g_return_val_if_fail (extra_us >= 0, FALSE);
  g_return_val_if_fail (!is_push_command (argv[0], argv_len != NULL ? argv_len[0] : strlen (argv[0])), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  build_begin (self, argc);
  for (guint i = 0; i < argc; i++)
    journal_append_arg (self, argv[i], argv_len != NULL ? argv_len[i] : strlen (argv[i]));
  self->build_left = 0;

  return send_built (self, extra_us, func, user_data, error);
}

/* Runs @script with EVALSHA. A server that does not know it (restarted,
 * flushed, failed over) gets it whole once, with EVAL, without the caller
 * noticing but for the time; the command's deadline stays the first. */
gboolean
symfonic_redis_client_eval (SymfonicRedisClient     *self,
                            SymfonicRedisScript     *script,
                            guint                    n_keys,
                            const char * const      *keys,
                            guint                    n_args,
                            const char * const      *args,
                            SymfonicRedisReplyFunc   func,
                            gpointer                 user_data,
                            GError                 **error)
{
  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (script != NULL, FALSE);
  g_return_val_if_fail (n_keys == 0 || keys != NULL, FALSE);
  g_return_val_if_fail (n_args == 0 || args != NULL, FALSE);
  g_return_val_if_fail (func != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  symfonic_redis_client_build_eval (self, script, n_keys, n_args);
  for (guint i = 0; i < n_keys; i++)
    symfonic_redis_client_build_arg (self, keys[i], strlen (keys[i]));
  for (guint i = 0; i < n_args; i++)
    symfonic_redis_client_build_arg (self, args[i], strlen (args[i]));

  return send_built (self, 0, func, user_data, error);
}

void
symfonic_redis_close_on (GMainContext *context,
                         GSourceFunc   close,
                         gpointer      data)
{
  /* @data may hold the only other reference to @context */
  g_autoptr(GMainContext) held = g_main_context_ref (context);

  if (g_main_context_acquire (held))
    {
      close (data);
      g_free (data);
      g_main_context_release (held);
      return;
    }
  g_main_context_invoke_full (held, G_PRIORITY_DEFAULT, close, data, g_free);
}
