/* symfonic-redis-client-private.h: one Redis connection, driven by a worker's poller
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _SymfonicRedisClient SymfonicRedisClient;
typedef struct _SymfonicRedisReply  SymfonicRedisReply;
typedef struct _SymfonicRedisScript SymfonicRedisScript;

/* --- where the server is ------------------------------------------------- */

/**
 * SymfonicRedisAddress:
 * @host: a host name or IP literal, for TCP; %NULL for a unix socket
 * @port: the TCP port
 * @path: the unix socket's path; %NULL for TCP
 * @db: the database SELECTed on connect
 *
 * What `redis://host[:port][/db]` or `redis+unix:///path[?db=N]` names.
 * A URL never carries a password: it is logged and shown, the password
 * is read from a file of its own.
 */
typedef struct
{
  char    *host;
  guint16  port;
  char    *path;
  guint    db;
} SymfonicRedisAddress;

G_GNUC_INTERNAL
gboolean symfonic_redis_address_parse (SymfonicRedisAddress        *address,
                                       const char                  *url,
                                       GError                     **error);
G_GNUC_INTERNAL
void     symfonic_redis_address_clear (SymfonicRedisAddress        *address);
G_GNUC_INTERNAL
char    *symfonic_redis_address_dup_display (const SymfonicRedisAddress *address);

/* --- counters ------------------------------------------------------------ */

/**
 * SymfonicRedisFailure:
 * @SYMFONIC_REDIS_FAILURE_CONNECT: a connection could not be made, or its
 *   handshake (AUTH, SELECT, PING) failed; one per attempt
 * @SYMFONIC_REDIS_FAILURE_AUTH: the server refused the credentials; one
 *   per attempt, counted instead of a connect failure
 * @SYMFONIC_REDIS_FAILURE_DISCONNECT: an established connection broke
 *   (closed by the server, an I/O or protocol error)
 * @SYMFONIC_REDIS_FAILURE_TIMEOUT: a command had no answer by its
 *   deadline; one per command
 * @SYMFONIC_REDIS_FAILURE_UNAVAILABLE: a command was refused at once for
 *   want of a connection; one per command
 * @SYMFONIC_REDIS_FAILURE_REPLY: the server answered a command with an
 *   error; one per command
 *
 * What `symfonic_store_errors_total` counts, by kind; also the kinds of
 * the rate-limited log lines.
 */
typedef enum {
  SYMFONIC_REDIS_FAILURE_CONNECT,
  SYMFONIC_REDIS_FAILURE_AUTH,
  SYMFONIC_REDIS_FAILURE_DISCONNECT,
  SYMFONIC_REDIS_FAILURE_TIMEOUT,
  SYMFONIC_REDIS_FAILURE_UNAVAILABLE,
  SYMFONIC_REDIS_FAILURE_REPLY,
  SYMFONIC_REDIS_N_FAILURES
} SymfonicRedisFailure;

/* upper bounds of the latency buckets, µs; one more bucket takes the rest */
#define SYMFONIC_REDIS_LATENCY_BOUNDS_US \
  { 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 1000000 }
#define SYMFONIC_REDIS_N_LATENCY_BUCKETS 13

/**
 * SymfonicRedisStats:
 * @up: connections that are up (ready for commands)
 * @failures: counts by #SymfonicRedisFailure
 * @latency: answered commands by round-trip time: @latency[i] counts those
 *   of at most the i-th of %SYMFONIC_REDIS_LATENCY_BOUNDS_US and more than
 *   the one before (not cumulative); the last, those above every bound
 * @latency_sum_us: the round-trip times of those commands, added up
 * @commands: commands sent
 *
 * Counters a client adds to with relaxed atomics and anyone reads from any
 * thread without a lock. The caller owns the struct, which outlives the
 * clients counting into it: one per worker to be summed with
 * symfonic_redis_stats_add(), or one that several clients share.
 * Zero-initialise it.
 */
typedef struct
{
  gint    up;
  guint64 failures[SYMFONIC_REDIS_N_FAILURES];
  guint64 latency[SYMFONIC_REDIS_N_LATENCY_BUCKETS];
  guint64 latency_sum_us;
  guint64 commands;
} SymfonicRedisStats;

G_GNUC_INTERNAL
void    symfonic_redis_stats_add            (SymfonicRedisStats       *sum,
                                             const SymfonicRedisStats *stats);
G_GNUC_INTERNAL
gint64  symfonic_redis_stats_get_bound      (guint                     bucket);
G_GNUC_INTERNAL
const char *symfonic_redis_failure_get_name (SymfonicRedisFailure      failure);

/* --- replies ------------------------------------------------------------- */

/* The values are hiredis' own REDIS_REPLY_* */
typedef enum {
  SYMFONIC_REDIS_REPLY_STRING = 1,
  SYMFONIC_REDIS_REPLY_ARRAY = 2,
  SYMFONIC_REDIS_REPLY_INTEGER = 3,
  SYMFONIC_REDIS_REPLY_NIL = 4,
  SYMFONIC_REDIS_REPLY_STATUS = 5,
  SYMFONIC_REDIS_REPLY_ERROR = 6,
} SymfonicRedisReplyKind;

G_GNUC_INTERNAL
SymfonicRedisReplyKind    symfonic_redis_reply_get_kind       (const SymfonicRedisReply *reply);
G_GNUC_INTERNAL
gint64                    symfonic_redis_reply_get_integer    (const SymfonicRedisReply *reply);
G_GNUC_INTERNAL
const char               *symfonic_redis_reply_get_string     (const SymfonicRedisReply *reply,
                                                               gsize                    *length);
G_GNUC_INTERNAL
gsize                     symfonic_redis_reply_get_n_elements (const SymfonicRedisReply *reply);
G_GNUC_INTERNAL
const SymfonicRedisReply *symfonic_redis_reply_get_element    (const SymfonicRedisReply *reply,
                                                               gsize                     index);
G_GNUC_INTERNAL
gboolean                  symfonic_redis_reply_read_integers  (const SymfonicRedisReply *reply,
                                                               gint64                   *values,
                                                               gsize                     n_values);

/* --- the client ---------------------------------------------------------- */

/**
 * SymfonicRedisReplyFunc:
 * @client: the client
 * @reply: (nullable): the answer, valid only during the call; never an
 *   error reply (those come as @error)
 * @error: (nullable): why there is no answer: %SYMFONIC_ERROR_STORE_TIMEOUT,
 *   %SYMFONIC_ERROR_STORE_UNAVAILABLE (both: whether the command ran is
 *   unknown), %SYMFONIC_ERROR_FAILED (the server answered with an error),
 *   or %G_IO_ERROR_CANCELLED (the client was closed)
 * @user_data: the data given with the command
 *
 * Called exactly once per command accepted, with @reply or @error, on the
 * client's thread, never from inside the call that sent the command.
 */
typedef void (*SymfonicRedisReplyFunc) (SymfonicRedisClient      *client,
                                        const SymfonicRedisReply *reply,
                                        const GError             *error,
                                        gpointer                  user_data);

/* Told when the client comes up (ready for commands) or goes down. */
typedef void (*SymfonicRedisStateFunc) (SymfonicRedisClient *client,
                                        gboolean             up,
                                        gpointer             user_data);

G_GNUC_INTERNAL
SymfonicRedisClient *symfonic_redis_client_new              (const SymfonicRedisAddress *address);
G_GNUC_INTERNAL
SymfonicRedisClient *symfonic_redis_client_ref              (SymfonicRedisClient        *self);
G_GNUC_INTERNAL
void                 symfonic_redis_client_unref            (SymfonicRedisClient        *self);

G_GNUC_INTERNAL
void                 symfonic_redis_client_set_credentials  (SymfonicRedisClient        *self,
                                                             const char                 *username,
                                                             const char                 *password);
G_GNUC_INTERNAL
void                 symfonic_redis_client_set_timeout      (SymfonicRedisClient        *self,
                                                             guint                       timeout_ms);
G_GNUC_INTERNAL
void                 symfonic_redis_client_set_connect_timeout (SymfonicRedisClient     *self,
                                                                guint                    timeout_ms);
G_GNUC_INTERNAL
void                 symfonic_redis_client_set_backoff      (SymfonicRedisClient        *self,
                                                             guint                       min_ms,
                                                             guint                       max_ms);
G_GNUC_INTERNAL
void                 symfonic_redis_client_set_stats        (SymfonicRedisClient        *self,
                                                             SymfonicRedisStats         *stats);
G_GNUC_INTERNAL
void                 symfonic_redis_client_add_script       (SymfonicRedisClient        *self,
                                                             SymfonicRedisScript        *script);
G_GNUC_INTERNAL
void                 symfonic_redis_client_set_state_func   (SymfonicRedisClient        *self,
                                                             SymfonicRedisStateFunc      func,
                                                             gpointer                    user_data);

G_GNUC_INTERNAL
void                 symfonic_redis_client_start            (SymfonicRedisClient        *self);
G_GNUC_INTERNAL
void                 symfonic_redis_client_close            (SymfonicRedisClient        *self);
G_GNUC_INTERNAL
gboolean             symfonic_redis_client_is_up            (SymfonicRedisClient        *self);
G_GNUC_INTERNAL
guint                symfonic_redis_client_get_n_pending    (SymfonicRedisClient        *self);
G_GNUC_INTERNAL
const char          *symfonic_redis_client_get_display      (SymfonicRedisClient        *self);

G_GNUC_INTERNAL
gboolean             symfonic_redis_client_command          (SymfonicRedisClient        *self,
                                                             guint                       argc,
                                                             const char * const         *argv,
                                                             const gsize                *argv_len,
                                                             SymfonicRedisReplyFunc      func,
                                                             gpointer                    user_data,
                                                             GError                    **error);
G_GNUC_INTERNAL
gboolean             symfonic_redis_client_command_full     (SymfonicRedisClient        *self,
                                                             guint                       argc,
                                                             const char * const         *argv,
                                                             const gsize                *argv_len,
                                                             gint64                      extra_us,
                                                             SymfonicRedisReplyFunc      func,
                                                             gpointer                    user_data,
                                                             GError                    **error);
G_GNUC_INTERNAL
gboolean             symfonic_redis_client_eval             (SymfonicRedisClient        *self,
                                                             SymfonicRedisScript        *script,
                                                             guint                       n_keys,
                                                             const char * const         *keys,
                                                             guint                       n_args,
                                                             const char * const         *args,
                                                             SymfonicRedisReplyFunc      func,
                                                             gpointer                    user_data,
                                                             GError                    **error);

/* Commands formatted in place, see symfonic_redis_client_build_command() */
G_GNUC_INTERNAL
void                 symfonic_redis_client_build_command    (SymfonicRedisClient        *self,
                                                             guint                       argc);
G_GNUC_INTERNAL
void                 symfonic_redis_client_build_eval       (SymfonicRedisClient        *self,
                                                             SymfonicRedisScript        *script,
                                                             guint                       n_keys,
                                                             guint                       n_args);
G_GNUC_INTERNAL
void                 symfonic_redis_client_build_arg        (SymfonicRedisClient        *self,
                                                             const char                 *arg,
                                                             gsize                       length);
G_GNUC_INTERNAL
void                 symfonic_redis_client_build_int        (SymfonicRedisClient        *self,
                                                             gint64                      value);
G_GNUC_INTERNAL
void                 symfonic_redis_client_build_uint       (SymfonicRedisClient        *self,
                                                             guint64                     value);
G_GNUC_INTERNAL
gboolean             symfonic_redis_client_send_built       (SymfonicRedisClient        *self,
                                                             SymfonicRedisReplyFunc      func,
                                                             gpointer                    user_data,
                                                             GError                    **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicRedisClient, symfonic_redis_client_unref)

/* What a store keeps per worker (its connections) is closed on that
 * worker's thread: at once when no thread runs @context any more, else
 * by a call there. @close frees what @data holds; @data is g_free()d. */
G_GNUC_INTERNAL
void symfonic_redis_close_on (GMainContext *context,
                              GSourceFunc   close,
                              gpointer      data);

G_END_DECLS
