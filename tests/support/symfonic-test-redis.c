/* symfonic-test-redis.c: a redis-server of the test's own
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib/gstdio.h>

#include "symfonic-test-redis.h"

/* Each test starts the server it needs: on a loopback port (or a unix
 * socket) of its own, in a folder of its own, keeping nothing on disk;
 * and stops it by its own pid at the end. Nothing listens on the usual
 * port, and two test runs side by side do not meet. */
struct _SymfonicTestRedis
{
  SymfonicTestRedisTransport  transport;
  char                       *password;
  char                       *dir;
  char                       *socket_path;
  guint16                     port;
  char                       *url;
  GSubprocess                *process;
  gboolean                    stopped;
};

#define READY_TIMEOUT_US (10 * G_USEC_PER_SEC)

/* Marks the test binary skipped (TAP's "1..0 # SKIP") when there is no
 * redis-server to start; %TRUE if the caller is to return at once. */
gboolean
symfonic_test_redis_skip_unless_available (void)
{
  g_autofree char *server = g_find_program_in_path ("redis-server");

  if (server != NULL)
    return FALSE;
  g_print ("1..0 # SKIP redis-server is not installed (Debian: apt-get install redis-server)\n");
  return TRUE;
}

static guint16
free_port (void)
{
  struct sockaddr_in address = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t length = sizeof address;
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (bind (fd, (struct sockaddr *) &address, sizeof address), ==, 0);
  g_assert_cmpint (getsockname (fd, (struct sockaddr *) &address, &length), ==, 0);
  close (fd);

  return ntohs (address.sin_port);
}

static redisContext *
connect_sync (SymfonicTestRedis *self)
{
  struct timeval timeout = { 1, 0 };
  redisContext *c;

  if (self->transport == SYMFONIC_TEST_REDIS_UNIX)
    c = redisConnectUnixWithTimeout (self->socket_path, timeout);
  else
    c = redisConnectWithTimeout ("127.0.0.1", self->port, timeout);
  if (c == NULL || c->err)
    {
      g_clear_pointer (&c, redisFree);
      return NULL;
    }
  redisSetTimeout (c, (struct timeval) { 5, 0 });
  if (self->password != NULL)
    {
      g_autoptr(redisReply) reply = redisCommand (c, "AUTH %s", self->password);

      if (reply == NULL || reply->type == REDIS_REPLY_ERROR)
        {
          redisFree (c);
          return NULL;
        }
    }

  return c;
}

static gboolean
answers (SymfonicTestRedis *self)
{
  redisContext *c = connect_sync (self);
  g_autoptr(redisReply) reply = NULL;
  gboolean ok;

  if (c == NULL)
    return FALSE;
  reply = redisCommand (c, "PING");
  ok = reply != NULL && reply->type == REDIS_REPLY_STATUS;
  redisFree (c);

  return ok;
}

/* A test that aborts leaves no server behind. */
static void
die_with_parent (gpointer data)
{
  prctl (PR_SET_PDEATHSIG, SIGKILL);
}

static gboolean
spawn (SymfonicTestRedis *self)
{
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;
  gint64 until;

  g_ptr_array_add (argv, g_strdup ("redis-server"));
  if (self->transport == SYMFONIC_TEST_REDIS_UNIX)
    {
      g_ptr_array_add (argv, g_strdup ("--port"));
      g_ptr_array_add (argv, g_strdup ("0"));
      g_ptr_array_add (argv, g_strdup ("--unixsocket"));
      g_ptr_array_add (argv, g_strdup (self->socket_path));
      g_ptr_array_add (argv, g_strdup ("--unixsocketperm"));
      g_ptr_array_add (argv, g_strdup ("700"));
    }
  else
    {
      g_ptr_array_add (argv, g_strdup ("--port"));
      g_ptr_array_add (argv, g_strdup_printf ("%u", self->port));
    }
  g_ptr_array_add (argv, g_strdup ("--bind"));
  g_ptr_array_add (argv, g_strdup ("127.0.0.1"));
  g_ptr_array_add (argv, g_strdup ("--save"));
  g_ptr_array_add (argv, g_strdup (""));
  g_ptr_array_add (argv, g_strdup ("--appendonly"));
  g_ptr_array_add (argv, g_strdup ("no"));
  g_ptr_array_add (argv, g_strdup ("--dir"));
  g_ptr_array_add (argv, g_strdup (self->dir));
  g_ptr_array_add (argv, g_strdup ("--logfile"));
  g_ptr_array_add (argv, g_build_filename (self->dir, "redis.log", NULL));
  if (self->password != NULL)
    {
      g_ptr_array_add (argv, g_strdup ("--requirepass"));
      g_ptr_array_add (argv, g_strdup (self->password));
    }
  g_ptr_array_add (argv, NULL);

  /* it logs to its file; it must not hold the test's output open either */
  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_subprocess_launcher_set_child_setup (launcher, die_with_parent, NULL, NULL);
  self->process = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  g_assert_no_error (error);
  self->stopped = FALSE;

  until = g_get_monotonic_time () + READY_TIMEOUT_US;
  while (g_get_monotonic_time () < until)
    {
      if (answers (self))
        return TRUE;
      /* it exited: the port was taken meanwhile, most likely */
      if (g_subprocess_get_identifier (self->process) == NULL)
        break;
      g_usleep (10 * 1000);
    }
  g_subprocess_force_exit (self->process);
  g_subprocess_wait (self->process, NULL, NULL);
  g_clear_object (&self->process);

  return FALSE;
}

/* A server on 127.0.0.1 (or a unix socket), requiring @password if not
 * %NULL, up and answering when this returns. */
SymfonicTestRedis *
symfonic_test_redis_start (SymfonicTestRedisTransport  transport,
                           const char                 *password)
{
  SymfonicTestRedis *self = g_new0 (SymfonicTestRedis, 1);
  g_autoptr(GError) error = NULL;

  self->transport = transport;
  self->password = g_strdup (password);
  self->dir = g_dir_make_tmp ("symfonic-redis-XXXXXX", &error);
  g_assert_no_error (error);
  self->socket_path = g_build_filename (self->dir, "redis.sock", NULL);

  for (guint attempt = 0; attempt < 5; attempt++)
    {
      if (transport == SYMFONIC_TEST_REDIS_TCP)
        self->port = free_port ();
      if (spawn (self))
        break;
    }
  g_assert_nonnull (self->process);

  if (transport == SYMFONIC_TEST_REDIS_UNIX)
    self->url = g_strdup_printf ("redis+unix://%s", self->socket_path);
  else
    self->url = g_strdup_printf ("redis://127.0.0.1:%u", self->port);

  return self;
}

/* At once: g_subprocess_send_signal() leaves the kill() to GLib's worker
 * thread, for later, and a test's next command could overtake it. */
static void
send_signal (SymfonicTestRedis *self,
             int                signum)
{
  const char *pid = g_subprocess_get_identifier (self->process);

  g_assert_nonnull (pid);
  g_assert_cmpint (kill ((pid_t) g_ascii_strtoll (pid, NULL, 10), signum), ==, 0);
}

/* Whether the kernel has the process stopped ('T' in /proc/PID/stat). */
static gboolean
is_stopped (SymfonicTestRedis *self)
{
  g_autofree char *path = g_strdup_printf ("/proc/%s/stat", g_subprocess_get_identifier (self->process));
  g_autofree char *stat = NULL;
  const char *state;

  if (!g_file_get_contents (path, &stat, NULL, NULL))
    return FALSE;
  /* "PID (comm) S ...": the name may hold spaces and parentheses */
  state = strrchr (stat, ')');

  return state != NULL && state[1] == ' ' && state[2] == 'T';
}

static void
stop (SymfonicTestRedis *self,
      int                signum)
{
  if (self->process == NULL)
    return;
  if (self->stopped)
    send_signal (self, SIGCONT);
  send_signal (self, signum);
  g_subprocess_wait (self->process, NULL, NULL);
  g_clear_object (&self->process);
}

void
symfonic_test_redis_free (SymfonicTestRedis *self)
{
  g_autofree char *log = NULL;

  stop (self, SIGTERM);
  log = g_build_filename (self->dir, "redis.log", NULL);
  g_unlink (log);
  g_unlink (self->socket_path);
  g_rmdir (self->dir);
  g_free (self->dir);
  g_free (self->socket_path);
  g_free (self->password);
  g_free (self->url);
  g_free (self);
}

const char *
symfonic_test_redis_get_url (SymfonicTestRedis *self)
{
  return self->url;
}

/* SIGSTOP freezes the server with its sockets open: connections still
 * complete (the kernel accepts them) and nothing answers. It has stopped
 * when this returns. */
void
symfonic_test_redis_signal (SymfonicTestRedis *self,
                            int                signum)
{
  g_assert_nonnull (self->process);
  send_signal (self, signum);
  if (signum == SIGSTOP)
    {
      gint64 until = g_get_monotonic_time () + READY_TIMEOUT_US;

      while (!is_stopped (self))
        {
          g_assert_cmpint (g_get_monotonic_time (), <, until);
          g_usleep (1000);
        }
      self->stopped = TRUE;
    }
  else if (signum == SIGCONT)
    {
      self->stopped = FALSE;
    }
}

void
symfonic_test_redis_kill (SymfonicTestRedis *self)
{
  stop (self, SIGKILL);
}

/* Starts the server again where it was (same port or socket), empty. */
void
symfonic_test_redis_restart (SymfonicTestRedis *self)
{
  g_assert_null (self->process);
  for (guint attempt = 0; attempt < 50; attempt++)
    {
      if (spawn (self))
        return;
      g_usleep (100 * 1000);
    }
  g_error ("redis-server did not start again on its port");
}

/* A command on a blocking connection of its own, for setting up and
 * looking at what the client under test did. */
redisReply *
symfonic_test_redis_call (SymfonicTestRedis *self,
                          const char        *format,
                          ...)
{
  redisContext *c = connect_sync (self);
  redisReply *reply;
  va_list args;

  g_assert_nonnull (c);
  va_start (args, format);
  reply = redisvCommand (c, format, args);
  va_end (args);
  g_assert_nonnull (reply);
  redisFree (c);

  return reply;
}

gint64
symfonic_test_redis_integer (SymfonicTestRedis *self,
                             const char        *format,
                             ...)
{
  redisContext *c = connect_sync (self);
  g_autoptr(redisReply) reply = NULL;
  va_list args;

  g_assert_nonnull (c);
  va_start (args, format);
  reply = redisvCommand (c, format, args);
  va_end (args);
  redisFree (c);
  g_assert_nonnull (reply);
  g_assert_cmpint (reply->type, ==, REDIS_REPLY_INTEGER);

  return reply->integer;
}

/* A string or status reply, or %NULL for nil. */
char *
symfonic_test_redis_string (SymfonicTestRedis *self,
                            const char        *format,
                            ...)
{
  redisContext *c = connect_sync (self);
  g_autoptr(redisReply) reply = NULL;
  va_list args;

  g_assert_nonnull (c);
  va_start (args, format);
  reply = redisvCommand (c, format, args);
  va_end (args);
  redisFree (c);
  g_assert_nonnull (reply);
  if (reply->type == REDIS_REPLY_NIL)
    return NULL;
  g_assert_true (reply->type == REDIS_REPLY_STRING || reply->type == REDIS_REPLY_STATUS);

  return g_strndup (reply->str, reply->len);
}
