/* redis-test-common.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "redis-test-common.h"

static GMutex logs_lock;
static GPtrArray *logs;

/* Every log line from a message up is kept (the client runs on other
 * threads in some tests), then written as usual. */
static GLogWriterOutput
keep_log (GLogLevelFlags   level,
          const GLogField *fields,
          gsize            n_fields,
          gpointer         user_data)
{
  if (level & (G_LOG_LEVEL_INFO | G_LOG_LEVEL_DEBUG))
    return g_log_writer_default (level, fields, n_fields, user_data);

  for (gsize i = 0; i < n_fields; i++)
    {
      if (g_str_equal (fields[i].key, "MESSAGE"))
        {
          const char *text = fields[i].value;
          gsize length = fields[i].length < 0 ? strlen (text) : (gsize) fields[i].length;

          g_mutex_lock (&logs_lock);
          g_ptr_array_add (logs, g_strndup (text, length));
          g_mutex_unlock (&logs_lock);
        }
    }
  /* GLib's test framework has shown it already, as a TAP comment */
  if (level & G_LOG_LEVEL_MESSAGE)
    return G_LOG_WRITER_HANDLED;

  return g_log_writer_default (level, fields, n_fields, user_data);
}

void
redis_test_init (int    *argc,
                 char ***argv)
{
  g_test_init (argc, argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  logs = g_ptr_array_new_with_free_func (g_free);
  g_log_set_writer_func (keep_log, NULL, NULL);
}

void
redis_test_logs_clear (void)
{
  g_mutex_lock (&logs_lock);
  g_ptr_array_set_size (logs, 0);
  g_mutex_unlock (&logs_lock);
}

GPtrArray *
redis_test_logs_dup (void)
{
  GPtrArray *copy = g_ptr_array_new_with_free_func (g_free);

  g_mutex_lock (&logs_lock);
  for (guint i = 0; i < logs->len; i++)
    g_ptr_array_add (copy, g_strdup (logs->pdata[i]));
  g_mutex_unlock (&logs_lock);

  return copy;
}

SymfonicRedisClient *
redis_test_client_new (const char *url,
                       guint       timeout_ms)
{
  SymfonicRedisAddress address;
  g_autoptr(GError) error = NULL;
  SymfonicRedisClient *client;

  symfonic_redis_address_parse (&address, url, &error);
  g_assert_no_error (error);
  client = symfonic_redis_client_new (&address);
  symfonic_redis_address_clear (&address);
  symfonic_redis_client_set_timeout (client, timeout_ms);

  return client;
}

static gboolean
set_flag (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Iterates the thread-default main context until @done says so or
 * @timeout_us passed; whether @done did. */
gboolean
redis_test_wait (gboolean (*done) (gpointer),
                 gpointer   data,
                 gint64     timeout_us)
{
  GMainContext *context = g_main_context_get_thread_default ();
  g_autoptr(GSource) limit = g_timeout_source_new ((guint) (timeout_us / 1000));
  gboolean expired = FALSE;

  if (context == NULL)
    context = g_main_context_default ();
  g_source_set_callback (limit, set_flag, &expired, NULL);
  g_source_attach (limit, context);
  while (!done (data) && !expired)
    g_main_context_iteration (context, TRUE);
  g_source_destroy (limit);

  return done (data);
}

static gboolean
client_is_up (gpointer data)
{
  return symfonic_redis_client_is_up (data);
}

void
redis_test_wait_up (SymfonicRedisClient *client)
{
  g_assert_true (redis_test_wait (client_is_up, client, REDIS_TEST_WAIT_US));
}

static void
format_into (GString                  *out,
             const SymfonicRedisReply *reply)
{
  const char *text;
  gsize length;

  switch (symfonic_redis_reply_get_kind (reply))
    {
    case SYMFONIC_REDIS_REPLY_INTEGER:
      g_string_append_printf (out, "%" G_GINT64_FORMAT, symfonic_redis_reply_get_integer (reply));
      break;
    case SYMFONIC_REDIS_REPLY_NIL:
      g_string_append (out, "nil");
      break;
    case SYMFONIC_REDIS_REPLY_STRING:
    case SYMFONIC_REDIS_REPLY_STATUS:
      text = symfonic_redis_reply_get_string (reply, &length);
      g_string_append_c (out, '"');
      g_string_append_len (out, text, length);
      g_string_append_c (out, '"');
      break;
    case SYMFONIC_REDIS_REPLY_ARRAY:
      g_string_append_c (out, '[');
      for (gsize i = 0; i < symfonic_redis_reply_get_n_elements (reply); i++)
        {
          if (i > 0)
            g_string_append_c (out, ',');
          format_into (out, symfonic_redis_reply_get_element (reply, i));
        }
      g_string_append_c (out, ']');
      break;
    case SYMFONIC_REDIS_REPLY_ERROR:
    default:
      g_assert_not_reached ();
    }
}

/* 3, "OK", nil, [1,0], ["a",[2]] */
char *
redis_test_format_reply (const SymfonicRedisReply *reply)
{
  GString *out = g_string_new (NULL);

  format_into (out, reply);
  return g_string_free (out, FALSE);
}

typedef struct
{
  gboolean  done;
  char     *reply;
  GError   *error;
} Call;

static void
on_call_reply (SymfonicRedisClient      *client,
               const SymfonicRedisReply *reply,
               const GError             *error,
               gpointer                  user_data)
{
  Call *call = user_data;

  g_assert_true ((reply == NULL) != (error == NULL));
  g_assert_false (call->done);
  call->done = TRUE;
  if (error != NULL)
    call->error = g_error_copy (error);
  else
    call->reply = redis_test_format_reply (reply);
}

static gboolean
call_done (gpointer data)
{
  return ((Call *) data)->done;
}

static char *
finish_call (Call     *call,
             GError  **error)
{
  g_assert_true (redis_test_wait (call_done, call, REDIS_TEST_WAIT_US));
  if (call->error != NULL)
    {
      g_propagate_error (error, call->error);
      return NULL;
    }

  return call->reply;
}

char *
redis_test_call (SymfonicRedisClient  *client,
                 GError              **error,
                 ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  Call call = { 0 };
  const char *arg;
  va_list args;

  va_start (args, error);
  while ((arg = va_arg (args, const char *)) != NULL)
    g_ptr_array_add (argv, (gpointer) arg);
  va_end (args);

  if (!symfonic_redis_client_command (client, argv->len, (const char * const *) argv->pdata, NULL, on_call_reply,
                                      &call, error))
    return NULL;

  return finish_call (&call, error);
}

char *
redis_test_eval (SymfonicRedisClient  *client,
                 SymfonicRedisScript  *script,
                 const char * const   *keys,
                 const char * const   *args,
                 GError              **error)
{
  Call call = { 0 };

  if (!symfonic_redis_client_eval (client, script, keys != NULL ? g_strv_length ((char **) keys) : 0, keys,
                                   args != NULL ? g_strv_length ((char **) args) : 0, args, on_call_reply, &call,
                                   error))
    return NULL;

  return finish_call (&call, error);
}
