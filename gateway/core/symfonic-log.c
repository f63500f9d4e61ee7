/* symfonic-log.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-enums.h"
#include "symfonic-error.h"
#include "symfonic-log-private.h"

/* Lines about requests go to whatever writer the process installed
 * (g_log_set_writer_func()): the gateway's binary picks the journal, JSON
 * lines or text; a Python or gjs host keeps its own. The library only
 * hands GLib its fields. */

/* Kinds are a code's words plus a route's or a source's name, so there are
 * few; past this many, the ones whose interval is over are forgotten, and
 * a kind that still finds no room is logged unlimited rather than lost. */
#define MAX_KINDS 1024

typedef struct
{
  gint64  logged_at;
  guint64 held;
} Limit;

static GMutex limits_lock;
static GHashTable *limits;

static void
prune (gint64 now_us)
{
  GHashTableIter iter;
  Limit *limit;

  g_hash_table_iter_init (&iter, limits);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &limit))
    if (now_us - limit->logged_at >= SYMFONIC_LOG_INTERVAL_US && limit->held == 0)
      g_hash_table_iter_remove (&iter);
}

/*
 * symfonic_log_limit_take:
 * @kind: the kind of line
 * @now_us: the monotonic time now
 * @suppressed: (out): how many lines of @kind were held back since the
 *   last one logged
 * @since_us: (out): how long ago that was, or 0
 *
 * Whether a line of @kind is logged now: TRUE for the first, and for the
 * first once SYMFONIC_LOG_INTERVAL_US passed since the last; the others
 * are counted. Thread-safe: workers and stage threads meet the same
 * failures.
 */
gboolean
symfonic_log_limit_take (const char *kind,
                         gint64      now_us,
                         guint64    *suppressed,
                         gint64     *since_us)
{
  G_GNUC_UNUSED g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&limits_lock);
  Limit *limit;

  *suppressed = 0;
  *since_us = 0;
  if (limits == NULL)
    limits = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);

  limit = g_hash_table_lookup (limits, kind);
  if (limit == NULL)
    {
      if (g_hash_table_size (limits) >= MAX_KINDS)
        prune (now_us);
      if (g_hash_table_size (limits) >= MAX_KINDS)
        return TRUE;
      limit = g_new (Limit, 1);
      limit->logged_at = now_us;
      limit->held = 0;
      g_hash_table_insert (limits, g_strdup (kind), limit);
      return TRUE;
    }

  if (now_us - limit->logged_at < SYMFONIC_LOG_INTERVAL_US)
    {
      limit->held++;
      return FALSE;
    }

  *suppressed = limit->held;
  *since_us = now_us - limit->logged_at;
  limit->held = 0;
  limit->logged_at = now_us;
  return TRUE;
}

typedef struct
{
  char    *kind;
  guint64  held;
  gint64   since_us;
} Held;

/*
 * symfonic_log_limit_flush:
 *
 * Logs, for every kind that held lines back since its last, how many: a
 * burst that ended is otherwise counted only when its kind comes back.
 * For when the lines stop, a server's stop.
 */
void
symfonic_log_limit_flush (void)
{
  g_autoptr(GArray) flushed = g_array_new (FALSE, FALSE, sizeof (Held));
  gint64 now = g_get_monotonic_time ();

  g_mutex_lock (&limits_lock);
  if (limits != NULL)
    {
      GHashTableIter iter;
      const char *kind;
      Limit *limit;

      g_hash_table_iter_init (&iter, limits);
      while (g_hash_table_iter_next (&iter, (gpointer *) &kind, (gpointer *) &limit))
        if (limit->held > 0)
          {
            Held held = { g_strdup (kind), limit->held, now - limit->logged_at };

            g_array_append_val (flushed, held);
            limit->held = 0;
          }
    }
  g_mutex_unlock (&limits_lock);

  /* logged outside the lock: a writer may log itself */
  for (guint i = 0; i < flushed->len; i++)
    {
      Held *held = &g_array_index (flushed, Held, i);
      char count[24];
      GLogField fields[] = {
        { "MESSAGE", NULL, -1 },
        { "PRIORITY", "5", -1 },
        { "GLIB_DOMAIN", G_LOG_DOMAIN, -1 },
        { SYMFONIC_LOG_FIELD_KIND, held->kind, -1 },
        { SYMFONIC_LOG_FIELD_SUPPRESSED, count, -1 },
      };
      g_autofree char *message = g_strdup_printf ("%s: %" G_GUINT64_FORMAT " more like it were not logged in the last %"
                                                  G_GINT64_FORMAT " s", held->kind, held->held,
                                                  (held->since_us + G_USEC_PER_SEC / 2) / G_USEC_PER_SEC);

      g_snprintf (count, sizeof count, "%" G_GUINT64_FORMAT, held->held);
      fields[0].value = message;
      g_log_structured_array (G_LOG_LEVEL_MESSAGE, fields, G_N_ELEMENTS (fields));
      g_free (held->kind);
    }
}

/* Every kind starts afresh: for tests, which meet the same failures in
 * one process. */
void
symfonic_log_limit_forget (void)
{
  G_GNUC_UNUSED g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&limits_lock);

  g_clear_pointer (&limits, g_hash_table_unref);
}

/* The kind of failure @error is, in words for a kind: a code of the
 * library's own by its nick (`upstream-unavailable`), another by its
 * domain and number. Never its message, which may name a request's
 * values. */
char *
symfonic_log_error_kind (const GError *error)
{
  if (error->domain == SYMFONIC_ERROR)
    {
      g_autoptr(GEnumClass) codes = g_type_class_ref (SYMFONIC_TYPE_ERROR);
      GEnumValue *value = g_enum_get_value (codes, error->code);

      if (value != NULL)
        return g_strdup (value->value_nick);
    }

  return g_strdup_printf ("%s %d", g_quark_to_string (error->domain), error->code);
}

/* As syslog's levels, which journald and GLib's own writers use. */
static const char *
priority_of (GLogLevelFlags log_level)
{
  if (log_level & G_LOG_LEVEL_ERROR)
    return "3";
  if (log_level & (G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING))
    return "4";
  if (log_level & G_LOG_LEVEL_MESSAGE)
    return "5";
  if (log_level & G_LOG_LEVEL_INFO)
    return "6";
  return "7";
}

static void
add_field (GLogField  *fields,
           gsize      *n_fields,
           const char *key,
           const char *value)
{
  if (value == NULL)
    return;
  fields[*n_fields] = (GLogField) { key, value, -1 };
  (*n_fields)++;
}

void
symfonic_log_request_valist (const char               *log_domain,
                             GLogLevelFlags            log_level,
                             const char               *file,
                             const char               *line,
                             const char               *func,
                             const SymfonicLogRequest *request,
                             const char               *kind,
                             const char               *format,
                             va_list                   args)
{
  static const SymfonicLogRequest nothing = SYMFONIC_LOG_REQUEST_INIT;
  GLogField fields[20];
  gsize n_fields = 0;
  g_autofree char *message = NULL;
  char status[16], duration[24], held[24];
  guint64 suppressed = 0;
  gint64 since_us = 0;

  if (request == NULL)
    request = &nothing;

  /* a kind logged a moment ago: the line is for a debugging session only */
  if (kind != NULL && !symfonic_log_limit_take (kind, g_get_monotonic_time (), &suppressed, &since_us))
    log_level = G_LOG_LEVEL_DEBUG;
  /* nothing is formatted for a line nobody reads */
  if ((log_level & (G_LOG_LEVEL_DEBUG | G_LOG_LEVEL_INFO)) && g_log_writer_default_would_drop (log_level, log_domain))
    return;

  message = g_strdup_vprintf (format, args);
  if (suppressed > 0)
    {
      char *whole = g_strdup_printf ("%s (and %" G_GUINT64_FORMAT " more like it in the last %" G_GINT64_FORMAT " s)",
                                     message, suppressed, (since_us + G_USEC_PER_SEC / 2) / G_USEC_PER_SEC);

      g_free (message);
      message = whole;
    }

  add_field (fields, &n_fields, "MESSAGE", message);
  add_field (fields, &n_fields, "PRIORITY", priority_of (log_level));
  add_field (fields, &n_fields, "GLIB_DOMAIN", log_domain);
  add_field (fields, &n_fields, "CODE_FILE", file);
  add_field (fields, &n_fields, "CODE_LINE", line);
  add_field (fields, &n_fields, "CODE_FUNC", func);
  add_field (fields, &n_fields, SYMFONIC_LOG_FIELD_ROUTE, request->route);
  add_field (fields, &n_fields, SYMFONIC_LOG_FIELD_TENANT, request->tenant);
  add_field (fields, &n_fields, SYMFONIC_LOG_FIELD_RUN_ID, request->run_id);
  add_field (fields, &n_fields, SYMFONIC_LOG_FIELD_TRACE_ID, request->trace_id);
  add_field (fields, &n_fields, SYMFONIC_LOG_FIELD_STAGE, request->stage);
  add_field (fields, &n_fields, SYMFONIC_LOG_FIELD_OUTCOME, request->outcome);
  if (request->status != 0)
    {
      g_snprintf (status, sizeof status, "%u", request->status);
      add_field (fields, &n_fields, SYMFONIC_LOG_FIELD_STATUS, status);
    }
  if (request->duration_ms >= 0)
    {
      g_snprintf (duration, sizeof duration, "%" G_GINT64_FORMAT, request->duration_ms);
      add_field (fields, &n_fields, SYMFONIC_LOG_FIELD_DURATION_MS, duration);
    }
  add_field (fields, &n_fields, SYMFONIC_LOG_FIELD_KIND, kind);
  if (suppressed > 0)
    {
      g_snprintf (held, sizeof held, "%" G_GUINT64_FORMAT, suppressed);
      add_field (fields, &n_fields, SYMFONIC_LOG_FIELD_SUPPRESSED, held);
    }

  g_log_structured_array (log_level, fields, n_fields);
}

void
symfonic_log_request_full (const char               *log_domain,
                           GLogLevelFlags            log_level,
                           const char               *file,
                           const char               *line,
                           const char               *func,
                           const SymfonicLogRequest *request,
                           const char               *kind,
                           const char               *format,
                           ...)
{
  va_list args;

  va_start (args, format);
  symfonic_log_request_valist (log_domain, log_level, file, line, func, request, kind, format, args);
  va_end (args);
}
