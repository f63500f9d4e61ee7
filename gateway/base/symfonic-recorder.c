/* symfonic-recorder.c: the HTTP sources' tee into recordings
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* memmem() */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <glib/gi18n-lib.h>
#include <glib/gstdio.h>

#include "symfonic-error.h"
#include "symfonic-recorder-private.h"
#include "symfonic-recording-private.h"

/* What a source with `record=` adds to a stream: the stream's thread
 * copies each read of the upstream into a message on a bounded queue and
 * goes on; one writer thread, shared by every source of the process,
 * assembles each run, takes its secrets out and writes it. The stream
 * never waits for the writer: a message that finds the queue full drops
 * that run's recording, counted, and the stream does not notice.
 *
 * Secrets are removed by the recorder itself, before any byte reaches a
 * file, never by a later tool: the run's whole body is masked at once, so
 * that a key split between two reads is found like any other. Masking
 * keeps a secret's length (each of its bytes becomes `*`): every read
 * keeps its boundaries, and a frame its framing. Removed are the values
 * of credential headers (Authorization, x-api-key, cookies, and any header
 * named like a key, token, secret, password or session), every value the
 * source sends in such a header (its configured key) or read from its
 * `headers-file`, wherever it appears, the matches of `record-redact`, and
 * key-shaped strings: `sk-…` keys, bearer and basic credentials, JWTs,
 * AWS, Google, GitHub and Slack keys. */

/* a run posts its start, its head, a block per BLOCK_BYTES of reads, and
 * its end: a burst of 400 streams fills a few thousand cells */
#define RING_SIZE 16384
#define QUEUE_MAX_BYTES (64 * 1024 * 1024)
/* How often the writer looks at the queue while runs are recorded. The
 * streams never wake it for a read; the post that fills a quarter of the
 * queue's cells or bytes does, so that a fast upstream does not fill the
 * rest before it looks. Each look is a wake-up of its own thread: on a
 * loaded machine a tenth of a millisecond, too much to pay 200 times a
 * second. */
#define POLL_US (50 * 1000)
#define WAKE_CELLS (RING_SIZE / 4)
#define WAKE_BYTES (QUEUE_MAX_BYTES / 4)
/* a secret this short would mask ordinary text wherever it appears; it
 * is still removed from the header that carries it */
#define MIN_LITERAL_SECRET 6
#define REDACTED "[redacted]"
/* A stream gathers its reads into a block, posted when full: a read costs
 * it one copy, and a post, an allocation and their frees on the writer's
 * thread are each a block's, not a read's. Each read is its BlockRead
 * then its bytes, so that a read writes to one place: a stream's block is
 * out of the cache by its next read, and each place is a miss. */
#define BLOCK_BYTES (16 * 1024)

typedef enum {
  MESSAGE_START,
  MESSAGE_HEAD,
  MESSAGE_READS,
  MESSAGE_END,
} MessageKind;

/* copied in and out: a read's bytes leave the next one unaligned */
typedef struct
{
  gsize  length;
  gint64 offset_us;
} BlockRead;

typedef struct
{
  SymfonicCapture *capture;
  MessageKind      kind;
  gint64           offset_us;
  /* what the queue counts against its byte bound */
  gsize            size;
  union {
    GBytes *request;
    struct {
      guint      status;
      GPtrArray *headers;
    } head;
    struct {
      SymfonicRecordingEnd        end;
      SymfonicRecordingTransport  transport;
      const char                 *error_code;
      gboolean                    truncated;
    } end;
    /* the reads at data, each a BlockRead and its bytes */
    gsize used;
  } u;
  guint8           data[];
} Message;

struct _SymfonicRecorder
{
  gint        ref_count;
  char       *folder;
  double      ratio;
  guint64     max_bytes;
  char       *source_type;
  char       *wire_format;
  char       *model;
  /* literal secrets, each with its length */
  GPtrArray  *secrets;
  GPtrArray  *patterns;
};

struct _SymfonicCapture
{
  gint              ref_count;
  SymfonicRecorder *recorder;
  char             *run_id;
  gint64            start;

  /* the stream's thread's: the block being filled, not yet posted, and
   * how much of it is */
  Message          *block;
  gsize             block_used;
  gsize             block_capacity;
  guint64           posted;
  gboolean          head_in;
  gboolean          transport_set;
  SymfonicRecordingTransport transport;
  /* no more reads are posted: past max-bytes, or dropped */
  gboolean          stopped;
  gboolean          truncated;
  gboolean          dropped;

  /* the writer's: the recording, its body, and the credentials its
   * request and response heads carried, masked wherever they appear */
  SymfonicRecording *recording;
  GByteArray        *body;
  GPtrArray         *run_secrets;
};

/* --- the queue: many streams post, one writer takes -------------------- */

/* A bounded queue of Dmitry Vyukov's design: one compare-and-swap per
 * post, no lock, and a full queue is a failed post, never a wait. */
typedef struct
{
  gsize    sequence;
  Message *message;
} Cell;

static struct
{
  Cell     cells[RING_SIZE];
  gsize    enqueue_pos;
  gsize    dequeue_pos;
  gsize    queued_bytes;

  GMutex   lock;
  GCond    wake;
  GCond    idle;
  GThread *thread;
  guint    recorders;
  gint     sleeping;
  /* the writer waits for its next look at the queue */
  gint     polling;
  /* runs posted to and not yet ended */
  gint     live;
  /* the writer takes nothing: the tests of a full queue */
  gint     held;

  /* messages taken and done with: what a flush waits for */
  gsize    processed;

  guint64  written;
  guint64  dropped;
} writer;

static void
ring_init_once (void)
{
  static gsize done;

  if (g_once_init_enter (&done))
    {
      for (gsize i = 0; i < RING_SIZE; i++)
        writer.cells[i].sequence = i;
      g_once_init_leave (&done, 1);
    }
}

static void writer_wake (void);

/* A quarter of the queue is taken: the writer should not wait out its
 * poll. */
static gboolean
ring_is_filling (gsize queued_bytes,
                 gsize enqueue_pos)
{
  return queued_bytes >= WAKE_BYTES ||
         enqueue_pos - __atomic_load_n (&writer.dequeue_pos, __ATOMIC_SEQ_CST) >= WAKE_CELLS;
}

static gboolean
ring_push (Message *message)
{
  gsize pos = __atomic_load_n (&writer.enqueue_pos, __ATOMIC_RELAXED);
  gsize queued_bytes;
  Cell *cell;

  if ((queued_bytes = __atomic_add_fetch (&writer.queued_bytes, message->size, __ATOMIC_RELAXED)) > QUEUE_MAX_BYTES)
    {
      __atomic_sub_fetch (&writer.queued_bytes, message->size, __ATOMIC_RELAXED);
      return FALSE;
    }

  for (;;)
    {
      gssize difference;

      cell = &writer.cells[pos & (RING_SIZE - 1)];
      difference = (gssize) (__atomic_load_n (&cell->sequence, __ATOMIC_ACQUIRE) - pos);
      if (difference == 0)
        {
          if (__atomic_compare_exchange_n (&writer.enqueue_pos, &pos, pos + 1, TRUE,
                                           __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
            break;
        }
      else if (difference < 0)
        {
          __atomic_sub_fetch (&writer.queued_bytes, message->size, __ATOMIC_RELAXED);
          return FALSE;
        }
      else
        pos = __atomic_load_n (&writer.enqueue_pos, __ATOMIC_RELAXED);
    }

  cell->message = message;
  __atomic_store_n (&cell->sequence, pos + 1, __ATOMIC_RELEASE);

  /* the writer sets polling, then looks at the queue; this post is in
   * the queue, then looks at polling: one of the two sees the other */
  if (G_UNLIKELY (ring_is_filling (queued_bytes, pos + 1)))
    {
      __atomic_thread_fence (__ATOMIC_SEQ_CST);
      if (g_atomic_int_get (&writer.polling))
        writer_wake ();
    }

  return TRUE;
}

/* The writer's side: it alone moves dequeue_pos. */
static Message *
ring_pop (void)
{
  gsize pos = writer.dequeue_pos;
  Cell *cell = &writer.cells[pos & (RING_SIZE - 1)];
  Message *message;

  if (__atomic_load_n (&cell->sequence, __ATOMIC_ACQUIRE) != pos + 1)
    return NULL;
  message = cell->message;
  __atomic_store_n (&writer.dequeue_pos, pos + 1, __ATOMIC_RELEASE);
  __atomic_store_n (&cell->sequence, pos + RING_SIZE, __ATOMIC_RELEASE);
  __atomic_sub_fetch (&writer.queued_bytes, message->size, __ATOMIC_RELAXED);

  return message;
}

static gboolean
ring_is_empty (void)
{
  gsize pos = __atomic_load_n (&writer.dequeue_pos, __ATOMIC_ACQUIRE);

  return __atomic_load_n (&writer.cells[pos & (RING_SIZE - 1)].sequence, __ATOMIC_SEQ_CST) != pos + 1;
}

/* --- secrets ------------------------------------------------------------ */

static gboolean
is_key_char (guchar c)
{
  return g_ascii_isalnum (c) || c == '_' || c == '-';
}

/* the characters of a bearer or basic credential (RFC 6750's b64token) */
static gboolean
is_credential_char (guchar c)
{
  return g_ascii_isalnum (c) || strchr ("-._~+/=", c) != NULL;
}

static gsize
run_length (const char *data,
            gsize       length,
            gsize       at,
            gboolean  (*accept) (guchar c))
{
  gsize end = at;

  while (end < length && accept ((guchar) data[end]))
    end++;

  return end - at;
}

static gboolean
has_prefix (const char *data,
            gsize       length,
            gsize       at,
            const char *prefix)
{
  gsize n = strlen (prefix);

  return at + n <= length && memcmp (data + at, prefix, n) == 0;
}

static gboolean
has_prefix_ascii_nocase (const char *data,
                         gsize       length,
                         gsize       at,
                         const char *prefix)
{
  gsize n = strlen (prefix);

  return at + n <= length && g_ascii_strncasecmp (data + at, prefix, n) == 0;
}

static gboolean
is_upper_or_digit (guchar c)
{
  return g_ascii_isupper (c) || g_ascii_isdigit (c);
}

static gboolean
is_key_or_dot (guchar c)
{
  return is_key_char (c) || c == '.';
}

static gboolean
is_word_char (guchar c)
{
  return g_ascii_isalnum (c) || c == '_';
}

static void
mask (char  *data,
      gsize  start,
      gsize  end)
{
  memset (data + start, '*', end - start);
}

/* How long the key-shaped secret at @at is, or 0. Each shape has a fixed
 * prefix and a run of key characters long enough that prose does not
 * take its form. */
static gsize
key_shape_at (const char *data,
              gsize       length,
              gsize       at,
              gsize      *secret_start)
{
  gsize n;

  *secret_start = at;
  /* mask_key_shapes() passes only these cases' bytes */
  switch (data[at])
    {
    case 's':
      /* OpenAI's and Anthropic's keys: sk-…, sk-proj-…, sk-ant-… */
      if (has_prefix (data, length, at, "sk-") &&
          (n = run_length (data, length, at + 3, is_key_char)) >= 16)
        return 3 + n;
      break;
    case 'B': case 'b':
      /* a bearer or basic credential anywhere: a header echoed in a body,
       * a curl line in a prompt */
      if (has_prefix_ascii_nocase (data, length, at, "bearer") || has_prefix_ascii_nocase (data, length, at, "basic"))
        {
          gsize word = has_prefix_ascii_nocase (data, length, at, "bearer") ? 6 : 5;
          gsize spaces = 0;

          while (at + word + spaces < length && (data[at + word + spaces] == ' ' || data[at + word + spaces] == '\t'))
            spaces++;
          if (spaces > 0 && (n = run_length (data, length, at + word + spaces, is_credential_char)) >= 8)
            {
              *secret_start = at + word + spaces;
              return n;
            }
        }
      break;
    case 'e':
      /* a JWT: base64url of {" then two more parts */
      if (has_prefix (data, length, at, "eyJ") &&
          (n = run_length (data, length, at, is_key_char)) >= 10 &&
          at + n < length && data[at + n] == '.')
        return run_length (data, length, at, is_key_or_dot);
      break;
    case 'A':
      if ((has_prefix (data, length, at, "AKIA") || has_prefix (data, length, at, "ASIA")) &&
          run_length (data, length, at + 4, is_upper_or_digit) >= 16)
        return 4 + run_length (data, length, at + 4, is_upper_or_digit);
      if (has_prefix (data, length, at, "AIza") && (n = run_length (data, length, at + 4, is_key_char)) >= 30)
        return 4 + n;
      break;
    case 'g':
      if ((has_prefix (data, length, at, "ghp_") || has_prefix (data, length, at, "gho_") ||
           has_prefix (data, length, at, "ghu_") || has_prefix (data, length, at, "ghs_") ||
           has_prefix (data, length, at, "ghr_")) &&
          (n = run_length (data, length, at + 4, is_word_char)) >= 20)
        return 4 + n;
      if (has_prefix (data, length, at, "github_pat_") && (n = run_length (data, length, at + 11, is_word_char)) >= 20)
        return 11 + n;
      break;
    case 'x':
      if (has_prefix (data, length, at, "xox") && at + 4 < length && strchr ("abprs", data[at + 3]) != NULL &&
          data[at + 4] == '-' && (n = run_length (data, length, at + 5, is_key_char)) >= 10)
        return 5 + n;
      break;
    default:
      break;
    }

  return 0;
}

static guint
mask_key_shapes (char  *data,
                 gsize  length)
{
  guint found = 0;

  for (gsize at = 0; at < length; at++)
    {
      gsize start;
      gsize n;

      /* key_shape_at()'s cases: most bytes start no shape, and this
       * test is a bit's, where its switch is a jump */
      switch (data[at])
        {
        case 's': case 'B': case 'b': case 'e': case 'A': case 'g': case 'x':
          break;
        default:
          continue;
        }
      n = key_shape_at (data, length, at, &start);
      if (n == 0)
        continue;
      /* a shape starts a word */
      if (at > 0 && is_key_char ((guchar) data[at - 1]))
        continue;
      mask (data, start, start + n);
      found++;
      at = start + n - 1;
    }

  return found;
}

static guint
mask_literals (GPtrArray *secrets,
               char      *data,
               gsize      length)
{
  guint found = 0;

  for (guint i = 0; secrets != NULL && i < secrets->len; i++)
    {
      const char *secret = g_ptr_array_index (secrets, i);
      gsize n = strlen (secret);
      char *at = data;

      while ((gsize) (data + length - at) >= n &&
             (at = memmem (at, data + length - at, secret, n)) != NULL)
        {
          mask (data, at - data, at - data + n);
          at += n;
          found++;
        }
    }

  return found;
}

static guint
mask_patterns (SymfonicRecorder *self,
               char             *data,
               gsize             length)
{
  guint found = 0;

  for (guint i = 0; i < self->patterns->len; i++)
    {
      g_autoptr(GMatchInfo) match = NULL;

      if (!g_regex_match_full (g_ptr_array_index (self->patterns, i), data, length, 0, 0, &match, NULL))
        continue;
      while (g_match_info_matches (match))
        {
          int start;
          int end;

          if (g_match_info_fetch_pos (match, 0, &start, &end) && end > start)
            {
              mask (data, start, end);
              found++;
            }
          if (!g_match_info_next (match, NULL))
            break;
        }
    }

  return found;
}

/* @run_secrets: what the run's own heads carried, or NULL */
static guint
redact (SymfonicRecorder *self,
        GPtrArray        *run_secrets,
        char             *data,
        gsize             length)
{
  guint found;

  /* an empty body may have no buffer at all */
  if (length == 0)
    return 0;

  /* literals first: a configured key is found whole before a shape takes
   * part of it */
  found = mask_literals (self->secrets, data, length) + mask_literals (run_secrets, data, length);

  found += mask_key_shapes (data, length);
  found += mask_patterns (self, data, length);

  return found;
}

guint
symfonic_recorder_redact (SymfonicRecorder *self,
                          char             *data,
                          gsize             length)
{
  return redact (self, NULL, data, length);
}

/* A header or query name that says it carries a credential: one of its
 * words (split at - and _) is such a word. Rate-limit headers name their
 * token counts in the plural and stay. */
static gboolean
names_a_credential (const char *name,
                    gsize       length)
{
  static const char * const words[] = {
    "authorization", "auth", "cookie", "key", "apikey", "token", "secret", "password", "passwd",
    "session", "signature", "sig", "credential", "credentials", NULL,
  };
  gsize start = 0;

  for (gsize i = 0; i <= length; i++)
    {
      if (i < length && name[i] != '-' && name[i] != '_')
        continue;
      for (guint w = 0; words[w] != NULL; w++)
        {
          if (i - start == strlen (words[w]) && g_ascii_strncasecmp (name + start, words[w], i - start) == 0)
            return TRUE;
        }
      start = i + 1;
    }

  return FALSE;
}

/* --- the recorder ------------------------------------------------------- */

static void
secrets_add (GPtrArray  *secrets,
             const char *secret)
{
  g_autofree char *trimmed = g_strstrip (g_strdup (secret));

  if (strlen (trimmed) < MIN_LITERAL_SECRET)
    {
      memset (trimmed, 0, strlen (trimmed));
      return;
    }
  for (guint i = 0; i < secrets->len; i++)
    {
      if (strcmp (g_ptr_array_index (secrets, i), trimmed) == 0)
        {
          memset (trimmed, 0, strlen (trimmed));
          return;
        }
    }
  /* as a JSON writer may escape it */
  if (strchr (trimmed, '/') != NULL)
    {
      g_auto(GStrv) parts = g_strsplit (trimmed, "/", -1);

      g_ptr_array_add (secrets, g_strjoinv ("\\/", parts));
    }
  g_ptr_array_add (secrets, g_steal_pointer (&trimmed));
}

static void
secrets_free (GPtrArray *secrets)
{
  for (guint i = 0; i < secrets->len; i++)
    {
      char *secret = g_ptr_array_index (secrets, i);

      memset (secret, 0, strlen (secret));
    }
  g_ptr_array_unref (secrets);
}

void
symfonic_recorder_add_secret (SymfonicRecorder *self,
                              const char       *secret)
{
  secrets_add (self->secrets, secret);
}

/* A credential header's value, and what it carries: the token after an
 * authentication scheme, each value of a cookie's name=value pairs. */
static void
add_value_secrets (GPtrArray  *secrets,
                   const char *value)
{
  const char *space = strchr (value, ' ');
  g_auto(GStrv) parts = g_strsplit_set (value, ";,", -1);

  secrets_add (secrets, value);
  if (space != NULL)
    secrets_add (secrets, space + 1);
  for (guint i = 0; parts[i] != NULL; i++)
    {
      const char *equals = strchr (parts[i], '=');

      if (equals != NULL)
        secrets_add (secrets, equals + 1);
      memset (parts[i], 0, strlen (parts[i]));
    }
}

/* Each value of @header_lines ("Name: value\r\n"…) whose name names a
 * credential. */
void
symfonic_recorder_add_header_secrets (SymfonicRecorder *self,
                                      const char       *header_lines)
{
  g_auto(GStrv) lines = g_strsplit (header_lines != NULL ? header_lines : "", "\r\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *colon = strchr (lines[i], ':');
      const char *value;

      if (colon == NULL || !names_a_credential (lines[i], colon - lines[i]))
        continue;
      value = colon + 1;
      while (*value == ' ' || *value == '\t')
        value++;
      add_value_secrets (self->secrets, value);
    }
  for (guint i = 0; lines[i] != NULL; i++)
    memset (lines[i], 0, strlen (lines[i]));
}

static void writer_add_recorder    (void);
static void writer_remove_recorder (void);

SymfonicRecorder *
symfonic_recorder_new (GFile              *folder,
                       double              ratio,
                       guint64             max_bytes,
                       const char * const *redact,
                       const char         *source_type,
                       const char         *wire_format,
                       const char         *model,
                       GError            **error)
{
  SymfonicRecorder *self;
  g_autofree char *path = g_file_get_path (folder);

  if (path == NULL)
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                           _("record: the folder must be a local path"));
      return NULL;
    }
  /* the loader checked it can be read; the writer must also create files */
  if (g_access (path, W_OK | X_OK) != 0)
    {
      int saved_errno = errno;
      g_autofree char *display = g_file_get_parse_name (folder);

      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("record: cannot write into “%s”: %s"), display, g_strerror (saved_errno));
      return NULL;
    }

  writer_add_recorder ();
  self = g_new0 (SymfonicRecorder, 1);
  self->ref_count = 1;
  self->folder = g_steal_pointer (&path);
  self->ratio = ratio;
  self->max_bytes = max_bytes;
  self->source_type = g_strdup (source_type);
  self->wire_format = g_strdup (wire_format);
  self->model = g_strdup (model);
  self->secrets = g_ptr_array_new_with_free_func (g_free);
  self->patterns = g_ptr_array_new_with_free_func ((GDestroyNotify) g_regex_unref);

  for (guint i = 0; redact != NULL && redact[i] != NULL; i++)
    {
      g_autoptr(GError) local_error = NULL;
      GRegex *regex;

      if (*redact[i] == '\0')
        continue;
      /* bytes, not text: a body is matched whatever its encoding */
      regex = g_regex_new (redact[i], G_REGEX_RAW | G_REGEX_OPTIMIZE, 0, &local_error);
      if (regex == NULL)
        {
          g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                       _("record-redact: entry %u is not a regular expression: %s"), i + 1, local_error->message);
          symfonic_recorder_unref (self);
          return NULL;
        }
      g_ptr_array_add (self->patterns, regex);
    }

  return self;
}

SymfonicRecorder *
symfonic_recorder_ref (SymfonicRecorder *self)
{
  g_atomic_int_inc (&self->ref_count);

  return self;
}

void
symfonic_recorder_unref (SymfonicRecorder *self)
{
  if (!g_atomic_int_dec_and_test (&self->ref_count))
    return;

  g_free (self->folder);
  g_free (self->source_type);
  g_free (self->wire_format);
  g_free (self->model);
  secrets_free (self->secrets);
  g_ptr_array_unref (self->patterns);
  g_free (self);
  writer_remove_recorder ();
}

/* --- one run: the stream's side ------------------------------------------ */

static SymfonicCapture *
capture_ref (SymfonicCapture *self)
{
  g_atomic_int_inc (&self->ref_count);

  return self;
}

static void
capture_unref (SymfonicCapture *self)
{
  if (!g_atomic_int_dec_and_test (&self->ref_count))
    return;

  g_clear_pointer (&self->recording, symfonic_recording_unref);
  g_clear_pointer (&self->run_secrets, secrets_free);
  if (self->body != NULL)
    {
      memset (self->body->data, 0, self->body->len);
      g_byte_array_unref (self->body);
    }
  g_free (self->block);
  g_free (self->run_id);
  symfonic_recorder_unref (self->recorder);
  g_free (self);
}

static void
message_free (Message *message)
{
  switch (message->kind)
    {
    case MESSAGE_START:
      g_bytes_unref (message->u.request);
      break;
    case MESSAGE_HEAD:
      g_ptr_array_unref (message->u.head.headers);
      break;
    case MESSAGE_READS:
    case MESSAGE_END:
    default:
      break;
    }
  capture_unref (message->capture);
  g_free (message);
}

static Message *
message_new (SymfonicCapture *capture,
             MessageKind      kind,
             gsize            extra)
{
  Message *message = g_malloc (sizeof (Message) + extra);

  message->capture = capture_ref (capture);
  message->kind = kind;
  message->offset_us = g_get_monotonic_time () - capture->start;
  message->size = sizeof (Message) + extra;

  return message;
}

static void
writer_wake (void)
{
  g_mutex_lock (&writer.lock);
  g_cond_signal (&writer.wake);
  g_mutex_unlock (&writer.lock);
}

/* The run is no longer recorded; what was posted is freed as the writer
 * takes it. */
static void
capture_drop (SymfonicCapture *self)
{
  if (self->dropped)
    return;
  self->dropped = TRUE;
  self->stopped = TRUE;
  __atomic_add_fetch (&writer.dropped, 1, __ATOMIC_RELAXED);
  if (g_atomic_int_dec_and_test (&writer.live) && g_atomic_int_get (&writer.sleeping))
    writer_wake ();
}

static void
capture_post (SymfonicCapture *self,
              Message         *message)
{
  if (G_LIKELY (ring_push (message)))
    return;
  message_free (message);
  capture_drop (self);
}

/* A fair coin per run, from its id: the same run is always in or out,
 * whichever thread asks, and no generator is shared. */
static gboolean
sampled (double      ratio,
         const char *run_id)
{
  guint64 hash = G_GUINT64_CONSTANT (14695981039346656037);

  if (ratio >= 1.0)
    return TRUE;
  if (ratio <= 0.0)
    return FALSE;
  for (const char *p = run_id; *p != '\0'; p++)
    hash = (hash ^ (guchar) *p) * G_GUINT64_CONSTANT (1099511628211);
  hash ^= hash >> 33;
  hash *= G_GUINT64_CONSTANT (0xff51afd7ed558ccd);
  hash ^= hash >> 33;

  return (double) (hash >> 11) / (double) (G_GUINT64_CONSTANT (1) << 53) < ratio;
}

SymfonicCapture *
symfonic_recorder_start (SymfonicRecorder *self,
                         const char       *run_id,
                         GBytes           *request)
{
  SymfonicCapture *capture;
  Message *message;

  if (!sampled (self->ratio, run_id))
    return NULL;

  capture = g_new0 (SymfonicCapture, 1);
  capture->ref_count = 1;
  capture->recorder = symfonic_recorder_ref (self);
  capture->run_id = g_strdup (run_id);
  capture->start = g_get_monotonic_time ();

  g_atomic_int_inc (&writer.live);
  message = message_new (capture, MESSAGE_START, 0);
  message->u.request = request != NULL ? g_bytes_ref (request) : g_bytes_new (NULL, 0);
  message->size += g_bytes_get_size (message->u.request);
  capture_post (capture, message);
  if (g_atomic_int_get (&writer.sleeping))
    writer_wake ();

  return capture;
}

void
symfonic_capture_head (SymfonicCapture         *self,
                       SymfonicUpstreamRequest *upstream,
                       guint                    status)
{
  Message *message;
  const char *name;
  const char *value;

  if (self->dropped)
    return;

  self->head_in = TRUE;
  message = message_new (self, MESSAGE_HEAD, 0);
  message->u.head.status = status;
  message->u.head.headers = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; symfonic_upstream_request_get_header_at (upstream, i, &name, &value); i++)
    {
      g_ptr_array_add (message->u.head.headers, g_strdup (name));
      g_ptr_array_add (message->u.head.headers, g_strdup (value));
      message->size += strlen (name) + strlen (value) + 2;
    }
  capture_post (self, message);
}

/* Its capture is referenced once it is posted: a block the run never
 * posts is freed with the run. */
static void
block_new (SymfonicCapture *capture,
           gsize            length)
{
  gsize capacity = MAX (BLOCK_BYTES, sizeof (BlockRead) + length);
  Message *block = g_malloc (sizeof (Message) + capacity);

  block->capture = NULL;
  block->kind = MESSAGE_READS;
  block->offset_us = g_get_monotonic_time () - capture->start;
  block->size = sizeof (Message) + capacity;
  block->u.used = 0;
  capture->block = block;
  capture->block_used = 0;
  capture->block_capacity = capacity;
}

static void
capture_post_block (SymfonicCapture *self)
{
  Message *block = g_steal_pointer (&self->block);

  if (block == NULL)
    return;
  block->capture = capture_ref (self);
  block->u.used = self->block_used;
  capture_post (self, block);
}

/* The per-read cost of recording: a copy into the run's block. */
void
symfonic_capture_chunk (SymfonicCapture *self,
                        const guint8    *data,
                        gsize            length)
{
  BlockRead read;
  guint8 *at;

  if (self->stopped || length == 0)
    return;

  if (self->posted + length > self->recorder->max_bytes)
    {
      length = self->recorder->max_bytes - self->posted;
      self->truncated = TRUE;
      self->stopped = TRUE;
      if (length == 0)
        return;
    }
  self->posted += length;

  if (self->block != NULL && self->block_used + sizeof read + length > self->block_capacity)
    {
      capture_post_block (self);
      if (self->dropped)
        return;
    }
  if (self->block == NULL)
    block_new (self, length);

  read.length = length;
  read.offset_us = g_get_monotonic_time () - self->start;
  at = self->block->data + self->block_used;
  memcpy (at, &read, sizeof read);
  memcpy (at + sizeof read, data, length);
  self->block_used += sizeof read + length;
}

void
symfonic_capture_transport_ended (SymfonicCapture *self,
                                  const GError    *error)
{
  if (self->transport_set)
    return;
  self->transport_set = TRUE;

  if (error == NULL)
    self->transport = SYMFONIC_RECORDING_TRANSPORT_EOF;
  else if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
    self->transport = SYMFONIC_RECORDING_TRANSPORT_TIMEOUT;
  else if (error->domain == G_RESOLVER_ERROR ||
           g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED) ||
           g_error_matches (error, G_IO_ERROR, G_IO_ERROR_HOST_NOT_FOUND) ||
           g_error_matches (error, G_IO_ERROR, G_IO_ERROR_HOST_UNREACHABLE) ||
           g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE))
    self->transport = SYMFONIC_RECORDING_TRANSPORT_REFUSED;
  else if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    self->transport = SYMFONIC_RECORDING_TRANSPORT_STOPPED;
  else if (self->head_in || g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED))
    self->transport = SYMFONIC_RECORDING_TRANSPORT_CLOSED;
  else
    self->transport = SYMFONIC_RECORDING_TRANSPORT_FAILED;
}

/* How the run ended, from the error it ended with (none: complete) and
 * what the transport did. The capture is the caller's no more. */
void
symfonic_capture_finish (SymfonicCapture *self,
                         const GError    *error)
{
  Message *message;

  if (!self->dropped)
    capture_post_block (self);
  if (!self->dropped)
    {
      message = message_new (self, MESSAGE_END, 0);
      if (error == NULL)
        message->u.end.end = SYMFONIC_RECORDING_END_COMPLETE;
      else if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        message->u.end.end = SYMFONIC_RECORDING_END_CANCELLED;
      else if (self->head_in && self->transport_set && self->transport != SYMFONIC_RECORDING_TRANSPORT_STOPPED)
        message->u.end.end = SYMFONIC_RECORDING_END_CUT;
      else
        message->u.end.end = SYMFONIC_RECORDING_END_ERROR;
      message->u.end.transport = self->transport_set ? self->transport : SYMFONIC_RECORDING_TRANSPORT_STOPPED;
      /* codes are the library's own names, never the failure's text */
      message->u.end.error_code = error != NULL && error->domain == SYMFONIC_ERROR
                                  ? symfonic_error_code_name (error->code)
                                  : NULL;
      /* a client that left took the rest of the answer with it */
      message->u.end.truncated = self->truncated || message->u.end.end == SYMFONIC_RECORDING_END_CANCELLED;
      capture_post (self, message);
      if (!self->dropped && g_atomic_int_dec_and_test (&writer.live) && g_atomic_int_get (&writer.sleeping))
        writer_wake ();
    }

  capture_unref (self);
}

/* --- one run: the writer's side ------------------------------------------- */

/* A value as the recording keeps it: a credential header's whole value
 * goes, any other's secrets are masked. */
static char *
redact_value (SymfonicCapture *capture,
              const char      *name,
              const char      *value,
              gsize            value_length,
              guint           *found)
{
  char *copy = g_strndup (value, value_length);

  if (names_a_credential (name, strlen (name)) || g_ascii_strcasecmp (name, "Set-Cookie") == 0)
    {
      /* and wherever the run shows it again */
      add_value_secrets (capture->run_secrets, copy);
      memset (copy, 0, value_length);
      g_free (copy);
      (*found)++;
      return g_strdup (REDACTED);
    }
  *found += redact (capture->recorder, capture->run_secrets, copy, value_length);

  return copy;
}

/* The query's credential-named parameters lose their values; the rest of
 * the target is masked as any text is. */
static char *
redact_target (SymfonicCapture  *capture,
               const char       *target,
               gsize             length,
               guint            *found)
{
  const char *query = memchr (target, '?', length);
  GString *out = g_string_new_len (target, query != NULL ? (gssize) (query - target) : (gssize) length);

  if (query != NULL)
    {
      const char *end = target + length;
      const char *at = query + 1;

      g_string_append_c (out, '?');
      while (at <= end)
        {
          const char *amp = memchr (at, '&', end - at);
          const char *stop = amp != NULL ? amp : end;
          const char *equals = memchr (at, '=', stop - at);

          if (equals != NULL && names_a_credential (at, equals - at))
            {
              g_autofree char *value = g_strndup (equals + 1, stop - equals - 1);

              secrets_add (capture->run_secrets, value);
              g_string_append_len (out, at, equals - at + 1);
              g_string_append (out, "redacted");
              (*found)++;
            }
          else
            g_string_append_len (out, at, stop - at);
          if (amp == NULL)
            break;
          g_string_append_c (out, '&');
          at = amp + 1;
        }
    }
  *found += redact (capture->recorder, capture->run_secrets, out->str, out->len);

  return g_string_free (out, FALSE);
}

/* The request as it went out, its secrets removed, into @recording. */
static void
read_request (SymfonicCapture *capture,
              GBytes          *request)
{
  SymfonicRecording *recording = capture->recording;
  gsize length;
  const char *data = g_bytes_get_data (request, &length);
  const char *end = data + length;
  const char *head_end = g_strstr_len (data, length, "\r\n\r\n");
  const char *line;
  const char *line_end;
  const char *space;
  const char *target_end;
  guint found = 0;

  if (head_end == NULL)
    return;

  line_end = g_strstr_len (data, head_end - data + 2, "\r\n");
  space = memchr (data, ' ', line_end - data);
  if (space != NULL)
    {
      g_free (recording->method);
      recording->method = g_strndup (data, space - data);
      target_end = memchr (space + 1, ' ', line_end - space - 1);
      if (target_end == NULL)
        target_end = line_end;
      recording->target = redact_target (capture, space + 1, target_end - space - 1, &found);
    }

  for (line = line_end + 2; line < head_end + 2; line = line_end + 2)
    {
      const char *colon;
      const char *value;
      g_autofree char *name = NULL;

      line_end = g_strstr_len (line, head_end + 2 - line, "\r\n");
      if (line_end == NULL)
        break;
      colon = memchr (line, ':', line_end - line);
      if (colon == NULL)
        continue;
      value = colon + 1;
      while (value < line_end && (*value == ' ' || *value == '\t'))
        value++;
      name = g_strndup (line, colon - line);
      g_ptr_array_add (recording->request_headers, g_strdup (name));
      g_ptr_array_add (recording->request_headers, redact_value (capture, name, value, line_end - value, &found));
    }

  if (head_end + 4 <= end)
    {
      gsize body_length = end - (head_end + 4);
      char *body = g_strndup (head_end + 4, body_length);

      found += redact (capture->recorder, capture->run_secrets, body, body_length);
      if (!g_utf8_validate_len (body, body_length, NULL) || memchr (body, '\0', body_length) != NULL)
        {
          recording->request_body = g_utf8_make_valid (body, body_length);
          g_free (body);
        }
      else
        recording->request_body = body;
    }

  recording->redactions += found;
}

static void
take_head (SymfonicCapture *capture,
           Message         *message)
{
  SymfonicRecording *recording = capture->recording;
  GPtrArray *headers = message->u.head.headers;
  guint found = 0;

  /* a redirect's head, then the answer's: the last is the answer */
  g_ptr_array_set_size (recording->response_headers, 0);
  recording->status = message->u.head.status;
  recording->head_us = message->offset_us;
  for (guint i = 0; i + 1 < headers->len; i += 2)
    {
      const char *name = g_ptr_array_index (headers, i);
      const char *value = g_ptr_array_index (headers, i + 1);

      g_ptr_array_add (recording->response_headers, g_strdup (name));
      g_ptr_array_add (recording->response_headers,
                       redact_value (capture, name, value, strlen (value), &found));
    }
  recording->redactions += found;
}

static void
take_reads (SymfonicCapture *capture,
            Message         *message)
{
  gsize at = 0;

  while (at < message->u.used)
    {
      BlockRead read;
      SymfonicRecordingChunk chunk;

      memcpy (&read, message->data + at, sizeof read);
      at += sizeof read;
      /* the body holds the run's reads and nothing else */
      g_byte_array_append (capture->body, message->data + at, read.length);
      at += read.length;
      chunk.end = capture->body->len;
      chunk.offset_us = read.offset_us;
      g_array_append_val (capture->recording->chunks, chunk);
    }
}

/* The run's file name: its id, with nothing that could leave the folder. */
static char *
file_stem (const char *run_id)
{
  GString *stem = g_string_new (NULL);

  for (const char *p = run_id; *p != '\0' && stem->len < 128; p++)
    g_string_append_c (stem, g_ascii_isalnum (*p) || *p == '-' || *p == '_' ? *p : '_');
  if (stem->len == 0 || stem->str[0] == '.')
    g_string_prepend (stem, "run");

  return g_string_free (stem, FALSE);
}

static gboolean
write_all (int         fd,
           const char *data,
           gsize       length)
{
  while (length > 0)
    {
      gssize n = write (fd, data, length);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE;
      data += n;
      length -= n;
    }

  return TRUE;
}

/* Written whole or not at all: a temporary file beside it, renamed. */
static gboolean
write_recording (SymfonicRecorder  *recorder,
                 SymfonicRecording *recording,
                 const char        *run_id)
{
  g_autofree char *stem = file_stem (run_id);
  g_autofree char *target = g_strdup_printf ("%s/%s.jsonl", recorder->folder, stem);
  g_autofree char *temporary = g_strdup_printf ("%s/.%s.jsonl.XXXXXX", recorder->folder, stem);
  g_autofree char *data = NULL;
  gsize length;
  int fd;
  gboolean ok;

  data = symfonic_recording_to_data (recording, &length);
  fd = g_mkstemp_full (temporary, O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0)
    {
      g_warning ("Cannot record run %s into %s: %s", run_id, recorder->folder, g_strerror (errno));
      return FALSE;
    }
  ok = write_all (fd, data, length);
  ok = close (fd) == 0 && ok;
  if (!ok || g_rename (temporary, target) != 0)
    {
      g_warning ("Cannot record run %s into %s: %s", run_id, recorder->folder, g_strerror (errno));
      g_unlink (temporary);
      return FALSE;
    }

  return TRUE;
}

static void
take_end (SymfonicCapture *capture,
          Message         *message)
{
  SymfonicRecorder *recorder = capture->recorder;
  SymfonicRecording *recording = capture->recording;
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();

  recording->end = message->u.end.end;
  recording->transport = message->u.end.transport;
  recording->error_code = g_strdup (message->u.end.error_code);
  recording->truncated = message->u.end.truncated;
  recording->duration_us = message->offset_us;
  recording->recorded_at = g_date_time_format (now, "%Y-%m-%dT%H:%M:%SZ");

  /* the whole body at once, so that a secret split between reads is
   * found; a body cut at max-bytes may end in the first part of one,
   * which no shape recognises: the word it ends with goes too */
  recording->redactions += redact (recorder, capture->run_secrets, (char *) capture->body->data, capture->body->len);
  if (message->u.end.truncated && capture->body->len > 0)
    {
      gsize start = capture->body->len;

      while (start > 0 && is_credential_char (capture->body->data[start - 1]))
        start--;
      mask ((char *) capture->body->data, start, capture->body->len);
    }
  g_bytes_unref (recording->body);
  recording->body = g_byte_array_free_to_bytes (g_steal_pointer (&capture->body));

  if (write_recording (recorder, recording, capture->run_id))
    __atomic_add_fetch (&writer.written, 1, __ATOMIC_RELAXED);
  else
    __atomic_add_fetch (&writer.dropped, 1, __ATOMIC_RELAXED);
}

static void
take (Message *message)
{
  SymfonicCapture *capture = message->capture;

  switch (message->kind)
    {
    case MESSAGE_START:
      capture->recording = symfonic_recording_new ();
      capture->recording->source_type = g_strdup (capture->recorder->source_type);
      capture->recording->wire_format = g_strdup (capture->recorder->wire_format);
      capture->recording->model = g_strdup (capture->recorder->model);
      capture->recording->run_id = g_strdup (capture->run_id);
      capture->body = g_byte_array_new ();
      capture->run_secrets = g_ptr_array_new_with_free_func (g_free);
      read_request (capture, message->u.request);
      break;
    case MESSAGE_HEAD:
      take_head (capture, message);
      break;
    case MESSAGE_READS:
      take_reads (capture, message);
      break;
    case MESSAGE_END:
      take_end (capture, message);
      break;
    default:
      g_assert_not_reached ();
    }
}

/* --- the writer thread ----------------------------------------------------- */

static gpointer
writer_run (gpointer data)
{
  for (;;)
    {
      Message *message;

      /* a dropped run never posts its end: what it posted is let go with
       * its last message */
      while (!g_atomic_int_get (&writer.held) && (message = ring_pop ()) != NULL)
        {
          take (message);
          message_free (message);
          __atomic_add_fetch (&writer.processed, 1, __ATOMIC_RELEASE);
        }

      g_mutex_lock (&writer.lock);
      if (!ring_is_empty () && !g_atomic_int_get (&writer.held))
        {
          g_mutex_unlock (&writer.lock);
          continue;
        }
      g_cond_broadcast (&writer.idle);
      if (writer.recorders == 0)
        {
          /* the last source went: so does the thread, until the next */
          g_thread_unref (g_steal_pointer (&writer.thread));
          g_mutex_unlock (&writer.lock);
          return NULL;
        }
      if (g_atomic_int_get (&writer.live) == 0)
        {
          g_atomic_int_set (&writer.sleeping, 1);
          if (g_atomic_int_get (&writer.live) == 0 && ring_is_empty ())
            g_cond_wait_until (&writer.wake, &writer.lock, g_get_monotonic_time () + G_USEC_PER_SEC);
          g_atomic_int_set (&writer.sleeping, 0);
          g_mutex_unlock (&writer.lock);
          continue;
        }
      g_atomic_int_set (&writer.polling, 1);
      /* held, it has nothing to look at until it is let go */
      if (g_atomic_int_get (&writer.held) ||
          !ring_is_filling (__atomic_load_n (&writer.queued_bytes, __ATOMIC_SEQ_CST),
                            __atomic_load_n (&writer.enqueue_pos, __ATOMIC_SEQ_CST)))
        g_cond_wait_until (&writer.wake, &writer.lock, g_get_monotonic_time () + POLL_US);
      g_atomic_int_set (&writer.polling, 0);
      g_mutex_unlock (&writer.lock);
    }

  return NULL;
}

static void
writer_add_recorder (void)
{
  ring_init_once ();

  g_mutex_lock (&writer.lock);
  writer.recorders++;
  if (writer.thread == NULL)
    writer.thread = g_thread_new ("symfonic-recorder", writer_run, NULL);
  g_mutex_unlock (&writer.lock);
}

static void
writer_remove_recorder (void)
{
  g_mutex_lock (&writer.lock);
  writer.recorders--;
  g_cond_signal (&writer.wake);
  g_mutex_unlock (&writer.lock);
}

/* Waits, at most @timeout_us, until the writer has taken every message
 * posted before the call: the runs that ended by then are on disk. Not
 * from the writer's own thread. */
gboolean
symfonic_recorder_flush (gint64 timeout_us)
{
  gint64 deadline = g_get_monotonic_time () + timeout_us;
  gsize target = __atomic_load_n (&writer.enqueue_pos, __ATOMIC_SEQ_CST);
  gboolean done;

  g_mutex_lock (&writer.lock);
  while (!(done = __atomic_load_n (&writer.processed, __ATOMIC_ACQUIRE) >= target) &&
         g_get_monotonic_time () < deadline)
    {
      g_cond_signal (&writer.wake);
      g_cond_wait_until (&writer.idle, &writer.lock, MIN (deadline, g_get_monotonic_time () + 10 * 1000));
    }
  g_mutex_unlock (&writer.lock);

  return done;
}

void
symfonic_recorder_hold_writer (gboolean hold)
{
  g_atomic_int_set (&writer.held, hold);
  if (!hold)
    writer_wake ();
}

guint64
symfonic_recorder_count_written (void)
{
  return __atomic_load_n (&writer.written, __ATOMIC_RELAXED);
}

guint64
symfonic_recorder_count_dropped (void)
{
  return __atomic_load_n (&writer.dropped, __ATOMIC_RELAXED);
}
