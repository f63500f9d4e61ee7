/* symfonic-budget-stage.c: a token budget per tenant and window
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include <glib/gi18n-lib.h>

#include "symfonic-budget-stage.h"

/* Reserve at admission, charge while running, settle at close. Admission
 * reserves the worst case (`reserve-tokens`, or the query's own estimate
 * when that is larger) as a lease in the store, and is refused unless
 * usage already charged to the window plus every lease still in flight
 * plus this one fit in `tokens-per-window`: however many requests race,
 * on however many workers and instances, the reservations the budget
 * admits never exceed it. A query whose estimate alone exceeds the window
 * can never be admitted and is refused as too large. When the stream is
 * over — completed, failed, or abandoned by its client — the close hook
 * settles what it really used, once, releasing the rest.
 *
 * While it runs, a stream may use what the budget had left when it was
 * last asked (its allowance: its lease plus the room nobody held). Its
 * usage is charged to its lease in batches, every 256 tokens or on a
 * 250 ms tick that all streams share, whichever comes first, so that the streams of every worker
 * and instance see it, and each answer brings the allowance up to date. The event that
 * carries its usage past the allowance ends it with a budget_exceeded
 * error frame, as does a charge the store answers with "exhausted": a
 * stream overruns a budget shared with others by one batch at most. The
 * lease is renewed every third of the store's lease TTL, so that an
 * instance that dies leaves nothing reserved past one TTL.
 *
 * What it used: the upstream's own report (input + output tokens) when it
 * made one; otherwise an estimate of about four bytes per token, the usual
 * figure for English text under BPE tokenizers: ceil (query bytes / 4)
 * input tokens plus ceil (bytes / 4) output tokens, counting the text of
 * every text and thinking delta that passed this stage. A stream that never
 * reached its upstream (a later stage refused it) used nothing.
 *
 * A stream that uses more than its reservation is charged all of it, up
 * to the window's limit: the window is then spent, and the next one opens
 * with the whole budget. That only happens when `reserve-tokens` is below
 * the real worst case (the upstream's max_tokens plus the longest prompt),
 * or when streams admitted together overrun, and is logged. A stream this
 * stage cut is charged what it let through, at most its allowance; a
 * report the upstream could not have made true (see
 * symfonic_stream_add_usage()) leaves the stream to the estimate. */
struct _SymfonicBudgetStage
{
  GObject             parent_instance;

  guint64             tokens_per_window;
  guint               window_seconds;
  guint64             reserve_tokens;

  SymfonicMeterStore *store;
  /* the store's lease TTL, read once: 0 when its leases need no renewal */
  gint64              lease_ttl_us;
};

/* A batch of usage charged while a stream runs: whichever comes first. */
#define CHARGE_BATCH_TOKENS 256
#define CHARGE_BATCH_US (250 * G_TIME_SPAN_MILLISECOND)

/* The timer's batches go on a tick every CHARGE_BATCH_US of the monotonic
 * clock, which every stream shares: a worker's streams charge in the same
 * main-loop iteration, so a shared store gets them in one write and
 * answers them in one wake-up, where batches on each stream's own phase
 * cost a write and a wake-up each (400 paced streams: 1600 a second).
 * A stream's first tick is the first one at least a batch after it began:
 * it charges no more often than every 250 ms, however its life falls on
 * the ticks. */
static gint64
charge_tick_after (gint64 t)
{
  return (t / CHARGE_BATCH_US + 1) * CHARGE_BATCH_US;
}

/* per stream */
typedef struct
{
  char                *key;
  SymfonicMeterScope   scope;
  guint64              lease_id;
  guint64              reserved;
  guint64              allowance;
  guint64              query_tokens;
  /* the text bytes whose estimate, added to the query's, fills the
   * allowance: the per-event check is one comparison */
  guint64              text_bytes_allowed;
  /* of the deltas this stage let through */
  guint64              text_bytes;
  /* the usage last charged, and the measures at which the next batch is
   * due */
  guint64              charged;
  guint64              next_charge_bytes;
  guint64              next_charge_tokens;
  /* the text bytes and reported tokens at which an event needs more than
   * the per-event check (a batch due, the allowance passed): one
   * comparison each per event */
  guint64              text_check;
  guint64              token_check;
  /* the next tick's flush of usage not charged yet */
  gint64               flush_at;
  /* the next renewal of the lease, or 0 */
  gint64               renew_at;
  /* a charge is with a store that answers later */
  gboolean             charging;
  /* the store answers charges later: they are not tried at once */
  gboolean             charges_wait;
  /* the store said the budget is spent: the stream ends at the alarm */
  gboolean             exhausted;
  gboolean             begun;
  /* this stage ended the stream: the event that would have passed the
   * allowance was never let through */
  gboolean             cut;
  gboolean             settled;
} Reservation;

static void symfonic_budget_stage_stage_init (SymfonicStageInterface *iface);
static void symfonic_budget_stage_initable_init (GInitableIface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SymfonicBudgetStage, symfonic_budget_stage, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, symfonic_budget_stage_initable_init)
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_STAGE, symfonic_budget_stage_stage_init))

enum {
  PROP_0,
  PROP_TOKENS_PER_WINDOW,
  PROP_WINDOW_SECONDS,
  PROP_RESERVE_TOKENS,
  PROP_STORE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
reservation_free (Reservation *reservation)
{
  g_free (reservation->key);
  g_free (reservation);
}

/**
 * symfonic_budget_estimate_tokens:
 * @n_bytes: a length of UTF-8 text
 *
 * Returns: the tokens @n_bytes of text are estimated to hold: ceil (n / 4)
 */
guint64
symfonic_budget_estimate_tokens (guint64 n_bytes)
{
  return n_bytes / 4 + (n_bytes % 4 != 0);
}

/**
 * symfonic_budget_stage_dup_key:
 * @self: a #SymfonicBudgetStage
 * @stream: a stream
 *
 * Returns: (transfer full): the store key of @stream's tenant
 */
char *
symfonic_budget_stage_dup_key (SymfonicBudgetStage *self,
                               SymfonicStream      *stream)
{
  g_return_val_if_fail (SYMFONIC_IS_BUDGET_STAGE (self), NULL);
  g_return_val_if_fail (SYMFONIC_IS_STREAM (stream), NULL);

  return symfonic_meter_dup_key (stream, TRUE, FALSE);
}

/* The query's share of the usage: reserved at admission, charged when no
 * usage was reported. */
static guint64
query_estimate (SymfonicStream *stream)
{
  const char *query = symfonic_invocation_get_query (symfonic_stream_get_invocation (stream));

  return symfonic_budget_estimate_tokens (query != NULL ? strlen (query) : 0);
}

static gint64
window_us (SymfonicBudgetStage *self)
{
  return (gint64) self->window_seconds * G_USEC_PER_SEC;
}

/* Where the next event leaves the per-event check: past the allowance,
 * or at the next batch. */
static void
update_checks (Reservation *reservation)
{
  reservation->text_check = MIN (reservation->text_bytes_allowed + (reservation->text_bytes_allowed < G_MAXUINT64),
                                 reservation->next_charge_bytes);
  reservation->token_check = MIN (reservation->allowance + (reservation->allowance < G_MAXUINT64),
                                  reservation->next_charge_tokens);
}

/* What the stream may let through, from a store's answer. */
static void
set_allowance (Reservation *reservation,
               guint64      allowance)
{
  reservation->allowance = allowance;
  reservation->text_bytes_allowed =
    allowance > reservation->query_tokens
      ? symfonic_meter_saturating_mul (allowance - reservation->query_tokens, 4) : 0;
  update_checks (reservation);
}

typedef struct
{
  SymfonicStream *stream;
  char           *key;
  guint64         amount;
  guint64         query_tokens;
} Admission;

static void
admission_free (Admission *admission)
{
  g_object_unref (admission->stream);
  g_free (admission->key);
  g_free (admission);
}

/* The store's answer on @admission: %TRUE with the lease kept on the
 * stream, or %FALSE with the refusal in @error. */
static gboolean
apply_verdict (SymfonicBudgetStage  *self,
               Admission            *admission,
               gboolean              reserved,
               guint64               lease_id,
               gint64                retry_after_us,
               guint64               allowance,
               GError              **error)
{
  Reservation *reservation;

  if (!reserved)
    {
      /* the header first: the refusal's response is built from the stream */
      symfonic_meter_set_retry_after (admission->stream, retry_after_us);
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BUDGET_EXCEEDED,
                   "The token budget of %" G_GUINT64_FORMAT " tokens per %u s is spent; "
                   "retry after %" G_GUINT64_FORMAT " s",
                   self->tokens_per_window, self->window_seconds,
                   symfonic_meter_retry_after_seconds (retry_after_us));
      return FALSE;
    }

  reservation = g_new0 (Reservation, 1);
  reservation->key = g_steal_pointer (&admission->key);
  reservation->scope.key = reservation->key;
  reservation->scope.limit = self->tokens_per_window;
  reservation->scope.window_us = window_us (self);
  reservation->lease_id = lease_id;
  reservation->reserved = admission->amount;
  reservation->query_tokens = admission->query_tokens;
  reservation->next_charge_bytes = CHARGE_BATCH_TOKENS * 4;
  reservation->next_charge_tokens = CHARGE_BATCH_TOKENS;
  /* a store owes at least the reservation it granted */
  set_allowance (reservation, MAX (allowance, admission->amount));
  symfonic_stream_set_stage_data (admission->stream, SYMFONIC_STAGE (self), reservation,
                                  (GDestroyNotify) reservation_free);
  return TRUE;
}

static void
reserve_cb (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  SymfonicBudgetStage *self = g_task_get_source_object (task);
  Admission *admission = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  gint64 retry_after_us = 0;
  guint64 allowance = 0;
  guint64 lease_id = 0;
  gboolean reserved = FALSE;

  if (!symfonic_meter_store_reserve_finish (SYMFONIC_METER_STORE (object), result, &reserved, &lease_id,
                                            &retry_after_us, &allowance, &error) ||
      !apply_verdict (self, admission, reserved, lease_id, retry_after_us, allowance, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  g_task_return_boolean (task, TRUE);
}

/* What @stream asks the store for, or %NULL with the refusal in @error:
 * a query no wait would ever let in is refused before the store is asked,
 * rather than advised to retry. */
static Admission *
admission_new (SymfonicBudgetStage  *self,
               SymfonicStream       *stream,
               GError              **error)
{
  guint64 query_tokens = query_estimate (stream);
  Admission *admission;

  if (!symfonic_meter_check_store (SYMFONIC_STAGE (self), self->store, error))
    return NULL;
  if (query_tokens > self->tokens_per_window)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_PAYLOAD_TOO_LARGE,
                   "The query is estimated at %" G_GUINT64_FORMAT " tokens, more than the "
                   "token budget of %" G_GUINT64_FORMAT " tokens per %u s",
                   query_tokens, self->tokens_per_window, self->window_seconds);
      return NULL;
    }

  admission = g_new0 (Admission, 1);
  admission->stream = g_object_ref (stream);
  admission->key = symfonic_budget_stage_dup_key (self, stream);
  admission->amount = MAX (self->reserve_tokens, query_tokens);
  admission->query_tokens = query_tokens;

  return admission;
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Admission, admission_free)

/* The one scope this stage meters: its tenant's budget. */
static SymfonicMeterScope
admission_scope (SymfonicBudgetStage *self,
                 Admission           *admission)
{
  return (SymfonicMeterScope) { admission->key, self->tokens_per_window, window_us (self) };
}

static void
symfonic_budget_stage_admit_async (SymfonicStage       *stage,
                                   SymfonicStream      *stream,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  SymfonicBudgetStage *self = SYMFONIC_BUDGET_STAGE (stage);
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  GError *error = NULL;
  SymfonicMeterScope scope;
  Admission *admission;

  g_task_set_source_tag (task, symfonic_budget_stage_admit_async);
  /* once the store granted the lease, the stream must count this stage
   * as admitted even if its client left meanwhile: only then is the close
   * hook called to give the lease back */
  g_task_set_check_cancellable (task, FALSE);
  admission = admission_new (self, stream, &error);
  if (admission == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  g_task_set_task_data (task, admission, (GDestroyNotify) admission_free);

  scope = admission_scope (self, admission);
  symfonic_meter_store_reserve_async (self->store, &scope, 1, admission->amount,
                                      symfonic_meter_store_get_time (self->store), cancellable,
                                      reserve_cb, g_steal_pointer (&task));
}

/* Decided at once when the store can (its state is in this process), so
 * that the request waits no main-loop turn for it; otherwise the store's
 * G_IO_ERROR_WOULD_BLOCK has the gateway call admit_async. */
static gboolean
symfonic_budget_stage_admit (SymfonicStage   *stage,
                             SymfonicStream  *stream,
                             GError         **error)
{
  SymfonicBudgetStage *self = SYMFONIC_BUDGET_STAGE (stage);
  g_autoptr(Admission) admission = NULL;
  SymfonicMeterScope scope;
  gint64 retry_after_us = 0;
  guint64 allowance = 0;
  guint64 lease_id = 0;
  gboolean reserved = FALSE;

  admission = admission_new (self, stream, error);
  if (admission == NULL)
    return FALSE;
  scope = admission_scope (self, admission);
  if (!symfonic_meter_store_try_reserve (self->store, &scope, 1, admission->amount,
                                         symfonic_meter_store_get_time (self->store),
                                         &reserved, &lease_id, &retry_after_us, &allowance, error))
    return FALSE;

  return apply_verdict (self, admission, reserved, lease_id, retry_after_us, allowance, error);
}

/* The stream's alarm rings for whichever comes first: the flush of
 * usage not charged yet, the renewal of the lease. */
static void
arm_alarm (SymfonicBudgetStage *self,
           SymfonicStream      *stream,
           Reservation         *reservation)
{
  gint64 at = reservation->flush_at;

  if (reservation->renew_at != 0 && (at == 0 || reservation->renew_at < at))
    at = reservation->renew_at;
  symfonic_stream_set_alarm (stream, SYMFONIC_STAGE (self), at != 0 ? at : -1);
}

static gboolean
symfonic_budget_stage_begin (SymfonicStage   *stage,
                             SymfonicStream  *stream,
                             GError         **error)
{
  SymfonicBudgetStage *self = SYMFONIC_BUDGET_STAGE (stage);
  Reservation *reservation = symfonic_stream_get_stage_data (stream, stage);
  gint64 now;

  if (reservation == NULL)
    return TRUE;

  reservation->begun = TRUE;
  now = g_get_monotonic_time ();
  /* one alarm for both, moved from flush to flush while the stream runs:
   * no event pays for arming it */
  reservation->flush_at = charge_tick_after (now + CHARGE_BATCH_US - 1);
  if (self->lease_ttl_us > 0)
    reservation->renew_at = now + self->lease_ttl_us / 3;
  arm_alarm (self, stream, reservation);

  return TRUE;
}

static void
set_exceeded (SymfonicBudgetStage  *self,
              Reservation          *reservation,
              GError              **error)
{
  /* the refused event is not counted: the stream is charged for what
   * reached its client */
  reservation->cut = TRUE;
  g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BUDGET_EXCEEDED,
               "The token budget of %" G_GUINT64_FORMAT " tokens per %u s ran out "
               "during this answer",
               self->tokens_per_window, self->window_seconds);
}

/* A store's answer to a charge: the allowance it brings applies to the
 * next event; exhausted, the stream ends. */
static void
apply_charge (Reservation *reservation,
              gboolean     exhausted,
              guint64      allowance)
{
  set_allowance (reservation, allowance);
  if (exhausted)
    reservation->exhausted = TRUE;
}

typedef struct
{
  SymfonicBudgetStage *stage;
  SymfonicStream      *stream;
} Charge;

static void
charge_cb (GObject      *object,
           GAsyncResult *result,
           gpointer      user_data)
{
  Charge *charge = user_data;
  Reservation *reservation = NULL;
  g_autoptr(GError) error = NULL;
  gboolean exhausted = FALSE;
  guint64 allowance = 0;

  if (!symfonic_stream_is_over (charge->stream))
    reservation = symfonic_stream_get_stage_data (charge->stream, SYMFONIC_STAGE (charge->stage));
  if (reservation != NULL)
    reservation->charging = FALSE;

  if (!symfonic_meter_store_charge_finish (SYMFONIC_METER_STORE (object), result, &exhausted, &allowance, &error))
    symfonic_log_stream (G_LOG_LEVEL_DEBUG, charge->stream, "budget", NULL, "Could not charge a stream's usage: %s",
                         error->message);
  else if (reservation != NULL && !reservation->settled)
    {
      apply_charge (reservation, exhausted, allowance);
      /* the stream may have nothing more to send: it ends now */
      if (exhausted)
        symfonic_stream_set_alarm (charge->stream, SYMFONIC_STAGE (charge->stage), 0);
    }

  g_object_unref (charge->stream);
  g_object_unref (charge->stage);
  g_free (charge);
}

/* Charges the usage so far to the lease, as a batch: at once when the
 * store can, otherwise with the answer applied when it comes (one charge
 * in flight at a time: the next batch waits for it). */
static void
charge_batch (SymfonicBudgetStage *self,
              SymfonicStream      *stream,
              Reservation         *reservation,
              guint64              text_bytes)
{
  g_autoptr(GError) error = NULL;
  guint64 input = 0, output = 0;
  gboolean reported = FALSE;
  gboolean exhausted = FALSE;
  guint64 allowance = 0;
  guint64 tokens;
  guint64 used;
  Charge *charge;

  symfonic_stream_get_usage (stream, &input, &output, &reported);
  tokens = symfonic_meter_saturating_add (input, output);
  used = reported ? tokens
                  : symfonic_meter_saturating_add (reservation->query_tokens,
                                                   symfonic_budget_estimate_tokens (text_bytes));
  reservation->next_charge_bytes = symfonic_meter_saturating_add (text_bytes, CHARGE_BATCH_TOKENS * 4);
  reservation->next_charge_tokens = symfonic_meter_saturating_add (tokens, CHARGE_BATCH_TOKENS);
  update_checks (reservation);
  if (used <= reservation->charged || reservation->charging)
    return;
  reservation->charged = used;

  if (!reservation->charges_wait)
    {
      if (symfonic_meter_store_try_charge (self->store, reservation->lease_id, &reservation->scope, 1, used,
                                           symfonic_meter_store_get_time (self->store), &exhausted, &allowance,
                                           &error))
        {
          apply_charge (reservation, exhausted, allowance);
          return;
        }
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
        {
          symfonic_log_stream (G_LOG_LEVEL_DEBUG, stream, "budget", NULL, "Could not charge a stream's usage: %s",
                               error->message);
          return;
        }
      /* a store that cannot charge a lease at once will not for its next
       * batch either: the stream's later batches skip the try and its
       * error */
      reservation->charges_wait = TRUE;
    }

  reservation->charging = TRUE;
  charge = g_new (Charge, 1);
  charge->stage = g_object_ref (self);
  charge->stream = g_object_ref (stream);
  symfonic_meter_store_charge_async (self->store, reservation->lease_id, &reservation->scope, 1, used,
                                     symfonic_meter_store_get_time (self->store), NULL, charge_cb, charge);
}

/* An event the per-event check could not pass on its own: a batch is due,
 * or the usage may be past the allowance. */
static gboolean
check_usage (SymfonicBudgetStage  *self,
             SymfonicStream       *stream,
             Reservation          *reservation,
             guint64               text_bytes,
             guint64               tokens,
             GError              **error)
{
  gboolean used = text_bytes > reservation->text_bytes;

  if (text_bytes >= reservation->next_charge_bytes || tokens >= reservation->next_charge_tokens)
    charge_batch (self, stream, reservation, text_bytes);

  if (text_bytes > reservation->text_bytes_allowed || tokens > reservation->allowance ||
      (reservation->exhausted && used))
    {
      set_exceeded (self, reservation, error);
      return FALSE;
    }
  reservation->text_bytes = text_bytes;
  update_checks (reservation);

  return TRUE;
}

/* Per event: a pointer lookup, an addition and two comparisons, on state
 * only this stream touches; the store hears of the usage once a batch.
 * The usage so far (the estimate, the upstream's report) must stay in the
 * allowance; the event that passes it is not forwarded. */
static gboolean
symfonic_budget_stage_process (SymfonicStage   *stage,
                               SymfonicStream  *stream,
                               SymfonicEvent   *event,
                               GError         **error)
{
  SymfonicBudgetStage *self = SYMFONIC_BUDGET_STAGE (stage);
  SymfonicEventKind kind = symfonic_event_get_kind (event);
  Reservation *reservation = symfonic_stream_get_stage_data (stream, stage);
  guint64 input = 0, output = 0;

  if (reservation != NULL)
    {
      guint64 text_bytes = reservation->text_bytes;
      guint64 tokens;

      if (kind == SYMFONIC_EVENT_KIND_TEXT_DELTA || kind == SYMFONIC_EVENT_KIND_THINKING_DELTA)
        {
          gsize length;

          /* a delta's length was kept when it was made */
          symfonic_event_get_text (event, &length);
          text_bytes = symfonic_meter_saturating_add (text_bytes, length);
        }
      symfonic_stream_get_usage (stream, &input, &output, NULL);
      tokens = symfonic_meter_saturating_add (input, output);

      if (G_UNLIKELY (text_bytes >= reservation->text_check || tokens >= reservation->token_check))
        {
          if (!check_usage (self, stream, reservation, text_bytes, tokens, error))
            return FALSE;
        }
      else
        {
          reservation->text_bytes = text_bytes;
        }
    }

  symfonic_stream_emit (stream, event);

  return TRUE;
}

static gboolean
store_failed (const GError *error)
{
  return g_error_matches (error, SYMFONIC_ERROR, SYMFONIC_ERROR_STORE_UNAVAILABLE) ||
         g_error_matches (error, SYMFONIC_ERROR, SYMFONIC_ERROR_STORE_TIMEOUT);
}

static void
renewed_cb (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(SymfonicStream) stream = user_data;
  g_autoptr(GError) error = NULL;
  gboolean renewed = FALSE;

  /* a shared store that does not answer logs that itself, once per
   * kind of failure; what is left is once per kind every interval too:
   * under load every stream meets it, and wrote a line each */
  if (!symfonic_meter_store_renew_finish (SYMFONIC_METER_STORE (object), result, &renewed, &error))
    {
      if (store_failed (error))
        symfonic_log_stream (G_LOG_LEVEL_DEBUG, stream, "budget", NULL, "Could not renew a token reservation: %s",
                             error->message);
      else
        symfonic_log_stream (G_LOG_LEVEL_WARNING, stream, "budget", "budget: renewal failed",
                             "Could not renew a token reservation: %s", error->message);
    }
  else if (!renewed)
    symfonic_log_stream (G_LOG_LEVEL_WARNING, stream, "budget", "budget: reservation expired",
                         "A token reservation expired before its stream ended: the budget may admit too much");
}

/* The flush of the usage not charged yet, the renewal of the lease, or the
 * end of a stream whose budget a store said is spent. */
static gboolean
symfonic_budget_stage_alarm (SymfonicStage   *stage,
                             SymfonicStream  *stream,
                             GError         **error)
{
  SymfonicBudgetStage *self = SYMFONIC_BUDGET_STAGE (stage);
  Reservation *reservation = symfonic_stream_get_stage_data (stream, stage);
  gint64 now = g_get_monotonic_time ();

  if (reservation == NULL || reservation->settled)
    return TRUE;

  /* usage not charged yet goes to the store by the next tick */
  if (reservation->flush_at != 0 && now >= reservation->flush_at)
    {
      charge_batch (self, stream, reservation, reservation->text_bytes);
      reservation->flush_at = charge_tick_after (now);
    }
  if (reservation->exhausted)
    {
      set_exceeded (self, reservation, error);
      return FALSE;
    }
  if (reservation->renew_at != 0 && now >= reservation->renew_at)
    {
      symfonic_meter_store_renew_async (self->store, reservation->lease_id, &reservation->scope, 1,
                                        symfonic_meter_store_get_time (self->store), NULL, renewed_cb,
                                        g_object_ref (stream));
      reservation->renew_at = now + self->lease_ttl_us / 3;
    }
  arm_alarm (self, stream, reservation);

  return TRUE;
}

/* An operator who set reserve-tokens too low hears about it, but a busy
 * gateway does not write a line per stream. */
static void
notice_over_reservation (SymfonicStream *stream,
                         Reservation    *reservation,
                         guint64         actual)
{
  symfonic_log_stream (G_LOG_LEVEL_MESSAGE, stream, "budget", "budget: over reservation",
                       "A stream of %s used %" G_GUINT64_FORMAT " tokens, more than the %" G_GUINT64_FORMAT
                       " reserved: raise reserve-tokens to the real worst case", reservation->key, actual,
                       reservation->reserved);
}

/* The settlement may wait for a store that is down (its backlog): it holds
 * no stream, only the run id its line names. */
static void
settle_cb (GObject      *object,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autofree char *run_id = user_data;
  g_autoptr(GError) error = NULL;

  if (!symfonic_meter_store_settle_finish (SYMFONIC_METER_STORE (object), result, &error))
    {
      if (store_failed (error))
        symfonic_log_stream (G_LOG_LEVEL_DEBUG, NULL, "budget", NULL,
                             "Run %s: could not settle a token reservation: %s", run_id, error->message);
      else
        symfonic_log_stream (G_LOG_LEVEL_WARNING, NULL, "budget", "budget: settlement failed",
                             "Run %s: could not settle a token reservation: %s", run_id, error->message);
    }
}

static void
symfonic_budget_stage_close (SymfonicStage  *stage,
                             SymfonicStream *stream)
{
  SymfonicBudgetStage *self = SYMFONIC_BUDGET_STAGE (stage);
  Reservation *reservation = symfonic_stream_get_stage_data (stream, stage);
  guint64 input = 0, output = 0;
  gboolean reported = FALSE;
  guint64 actual;

  if (reservation == NULL || reservation->settled)
    return;
  reservation->settled = TRUE;

  symfonic_stream_get_usage (stream, &input, &output, &reported);
  if (reported)
    {
      actual = symfonic_meter_saturating_add (input, output);
    }
  else if (reservation->begun)
    {
      actual = symfonic_meter_saturating_add (reservation->query_tokens,
                                              symfonic_budget_estimate_tokens (reservation->text_bytes));
    }
  else
    {
      actual = 0;
    }
  /* a stream cut here let through no more than its allowance; a report
   * past it came with the event that was refused */
  if (reservation->cut)
    actual = MIN (actual, reservation->allowance);

  if (actual > reservation->reserved)
    notice_over_reservation (stream, reservation, actual);

  /* no cancellable: the stream's is cancelled by now, and the settlement
   * must happen whatever became of the stream */
  symfonic_meter_store_settle_async (self->store, reservation->lease_id, &reservation->scope, 1, actual,
                                     symfonic_meter_store_get_time (self->store), NULL, settle_cb,
                                     g_strdup (symfonic_invocation_get_run_id (symfonic_stream_get_invocation (stream))));
}

static void
symfonic_budget_stage_stage_init (SymfonicStageInterface *iface)
{
  iface->admit = symfonic_budget_stage_admit;
  iface->admit_async = symfonic_budget_stage_admit_async;
  iface->admit_finish = symfonic_meter_admit_finish;
  iface->begin = symfonic_budget_stage_begin;
  iface->process = symfonic_budget_stage_process;
  iface->close = symfonic_budget_stage_close;
  iface->alarm = symfonic_budget_stage_alarm;
}

static gboolean
symfonic_budget_stage_initable_init_impl (GInitable     *initable,
                                          GCancellable  *cancellable,
                                          GError       **error)
{
  SymfonicBudgetStage *self = SYMFONIC_BUDGET_STAGE (initable);

  if (self->reserve_tokens > self->tokens_per_window)
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("reserve-tokens: expected at most tokens-per-window (%" PRIu64 "), found %"
                     PRIu64 ": no request could ever be admitted"),
                   self->tokens_per_window, self->reserve_tokens);
      return FALSE;
    }

  symfonic_meter_ensure_store (&self->store);
  self->lease_ttl_us = symfonic_store_lease_ttl_of (G_OBJECT (self->store));

  return TRUE;
}

static void
symfonic_budget_stage_initable_init (GInitableIface *iface)
{
  iface->init = symfonic_budget_stage_initable_init_impl;
}

/**
 * symfonic_budget_stage_get_store:
 * @self: a #SymfonicBudgetStage
 *
 * Returns: (transfer none) (nullable): the stage's store, once initialized
 */
SymfonicMeterStore *
symfonic_budget_stage_get_store (SymfonicBudgetStage *self)
{
  g_return_val_if_fail (SYMFONIC_IS_BUDGET_STAGE (self), NULL);

  return self->store;
}

static void
symfonic_budget_stage_finalize (GObject *object)
{
  SymfonicBudgetStage *self = (SymfonicBudgetStage *) object;

  g_clear_object (&self->store);
  G_OBJECT_CLASS (symfonic_budget_stage_parent_class)->finalize (object);
}

static void
symfonic_budget_stage_get_property (GObject    *object,
                                    guint       prop_id,
                                    GValue     *value,
                                    GParamSpec *pspec)
{
  SymfonicBudgetStage *self = SYMFONIC_BUDGET_STAGE (object);

  switch (prop_id)
    {
    case PROP_TOKENS_PER_WINDOW:
      g_value_set_uint64 (value, self->tokens_per_window);
      break;
    case PROP_WINDOW_SECONDS:
      g_value_set_uint (value, self->window_seconds);
      break;
    case PROP_RESERVE_TOKENS:
      g_value_set_uint64 (value, self->reserve_tokens);
      break;
    case PROP_STORE:
      g_value_set_object (value, self->store);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_budget_stage_set_property (GObject      *object,
                                    guint         prop_id,
                                    const GValue *value,
                                    GParamSpec   *pspec)
{
  SymfonicBudgetStage *self = SYMFONIC_BUDGET_STAGE (object);

  switch (prop_id)
    {
    case PROP_TOKENS_PER_WINDOW:
      self->tokens_per_window = g_value_get_uint64 (value);
      break;
    case PROP_WINDOW_SECONDS:
      self->window_seconds = g_value_get_uint (value);
      break;
    case PROP_RESERVE_TOKENS:
      self->reserve_tokens = g_value_get_uint64 (value);
      break;
    case PROP_STORE:
      g_set_object (&self->store, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_budget_stage_class_init (SymfonicBudgetStageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = symfonic_budget_stage_finalize;
  object_class->get_property = symfonic_budget_stage_get_property;
  object_class->set_property = symfonic_budget_stage_set_property;

  /* settings are construct-only: streams on every worker read them with
   * no lock, so they must not change under them */
  properties[PROP_TOKENS_PER_WINDOW] =
    g_param_spec_uint64 ("tokens-per-window", "Tokens per window",
                         "Input plus output tokens a tenant may use per window",
                         1, G_MAXINT64, 1000000,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_WINDOW_SECONDS] =
    g_param_spec_uint ("window-seconds", "Window seconds",
                       "Length of a budget window; a tenant's window opens at its first "
                       "request after the previous one closed",
                       1, 366 * 24 * 3600, 3600,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_RESERVE_TOKENS] =
    g_param_spec_uint64 ("reserve-tokens", "Reserve tokens",
                         "Tokens reserved when a request is admitted, or its query's estimate "
                         "when larger: its worst case, at most tokens-per-window; the real usage "
                         "is settled when it ends",
                         1, G_MAXINT64, 4096,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_STORE] = symfonic_meter_param_spec_store ();

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* without an authenticated principal every tenant would share one
   * "anonymous" budget */
  symfonic_stage_type_declare_order (G_TYPE_FROM_CLASS (klass), NULL, (const char * const[]) { "principal", NULL },
                                     NULL, _("keeps a budget per authenticated tenant"));
}

static void
symfonic_budget_stage_init (SymfonicBudgetStage *self)
{
}
