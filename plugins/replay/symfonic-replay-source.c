/* symfonic-replay-source.c: the embedded upstream
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <glib/gi18n-lib.h>

#include "symfonic-replay-source.h"
#include "symfonic-transcript.h"

/* Plays JSON-lines transcripts from a folder, with their recorded pauses,
 * so the gateway streams with no external service at all. A request picks
 * a transcript by name with the header named by `transcript-header`;
 * without it, `default-transcript` plays. Transcripts are read and checked
 * at load, and shared read-only by every stream on every worker.
 *
 * A transcript is either typed events, played here, or a recording of an
 * HTTP source's upstream (SymfonicRecording, told apart by its first
 * line), which a source of the type that recorded it plays through its
 * own reading, as if its upstream sent those bytes again: the frames it
 * decodes are the ones it decoded then. Those sources are made here, one
 * per type and model, with nothing to connect to. */
struct _SymfonicReplaySource
{
  GObject     parent_instance;

  GFile      *transcripts;
  char       *default_transcript;
  char       *transcript_header;
  double      time_scale;
  gint64      rechunk_seed;
  guint       rechunk_max_bytes;
  char       *chunking_header;

  /* name -> Entry */
  GHashTable *by_name;
  /* "type model" -> the SymfonicHttpSource playing such recordings */
  GHashTable *players;

  /* what the first g_initable_init() said, which every later call says */
  SymfonicInitOnce init;
};

static void symfonic_replay_source_initable_init (GInitableIface *iface);
static void symfonic_replay_source_source_init (SymfonicSourceInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SymfonicReplaySource, symfonic_replay_source, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, symfonic_replay_source_initable_init)
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_SOURCE, symfonic_replay_source_source_init))

enum {
  PROP_0,
  PROP_TRANSCRIPTS,
  PROP_DEFAULT_TRANSCRIPT,
  PROP_TRANSCRIPT_HEADER,
  PROP_TIME_SCALE,
  PROP_RECHUNK_SEED,
  PROP_RECHUNK_MAX_BYTES,
  PROP_CHUNKING_HEADER,
  N_PROPS
};

#define DEFAULT_RECHUNK_MAX_BYTES 64

/* One transcript: typed events, or a recording and the source that plays
 * it. */
typedef struct
{
  SymfonicTranscript *transcript;
  SymfonicRecording  *recording;
  SymfonicSource     *player;
} Entry;

static void
entry_free (gpointer data)
{
  Entry *entry = data;

  g_clear_pointer (&entry->transcript, symfonic_transcript_free);
  g_clear_pointer (&entry->recording, symfonic_recording_unref);
  g_free (entry);
}

static GParamSpec *properties[N_PROPS];

/* One playback: lives until the transcript ends or the stream is cancelled. */
typedef struct
{
  SymfonicReplaySource *source;
  SymfonicStream       *stream;
  SymfonicTranscript   *transcript;
  guint                 position;
  /* the next step, on the stream's thread: a timer rather than a GSource,
   * which every stream a worker holds would add to each of its
   * iterations */
  SymfonicTimer        *timer;
  GSource              *cancelled;
} Playback;

static void
playback_free (Playback *playback)
{
  symfonic_stream_set_ready_func (playback->stream, NULL, NULL, NULL);
  g_clear_pointer (&playback->timer, symfonic_timer_remove);
  if (playback->cancelled != NULL)
    {
      g_source_destroy (playback->cancelled);
      g_source_unref (playback->cancelled);
    }
  g_object_unref (playback->stream);
  g_object_unref (playback->source);
  g_free (playback);
}

static void
playback_end (Playback     *playback,
              const GError *error)
{
  SymfonicStream *stream = g_object_ref (playback->stream);

  playback_free (playback);
  symfonic_stream_push_end (stream, error);
  g_object_unref (stream);
}

static void playback_step (gpointer data);

static void
schedule (Playback *playback,
          guint     delay_ms)
{
  if (playback->timer == NULL)
    playback->timer = symfonic_timer_new (playback_step, playback);
  /* one step pending at a time, whoever asks for the next; a timer due
   * now runs after this iteration's I/O, so what was played goes out
   * before more is */
  symfonic_timer_set_deadline (playback->timer, g_get_monotonic_time () + (gint64) delay_ms * 1000);
}

static guint
scaled_delay (Playback *playback,
              guint     delay_ms)
{
  return (guint) (delay_ms * playback->source->time_scale + 0.5);
}

/* At most this many events are played per main-loop iteration, about what
 * one read of a network upstream yields: the connection writes between
 * batches instead of queueing a whole transcript at once. */
#define EVENTS_PER_ITERATION 256

/* Plays every event that is due, then sleeps until the next one. */
static void
playback_step (gpointer data)
{
  Playback *playback = data;
  guint length = symfonic_transcript_get_length (playback->transcript);
  guint played = 0;

  while (playback->position < length)
    {
      const SymfonicTranscriptEntry *entry =
        symfonic_transcript_get_entry (playback->transcript, playback->position);
      guint delay = scaled_delay (playback, entry->delay_ms);

      if (played > 0 && (delay > 0 || played == EVENTS_PER_ITERATION))
        {
          schedule (playback, played == EVENTS_PER_ITERATION ? 0 : delay);
          return;
        }
      played++;
      playback->position++;

      if (entry->error != NULL)
        {
          playback_end (playback, entry->error);
          return;
        }

      switch (symfonic_stream_push (playback->stream, entry->event))
        {
        case SYMFONIC_FLOW_OK:
          break;
        case SYMFONIC_FLOW_WAIT:
          /* on_ready() plays on once the client caught up */
          return;
        case SYMFONIC_FLOW_OVER:
        default:
          playback_end (playback, NULL);
          return;
        }
    }

  playback_end (playback, NULL);
}

static void
on_ready (SymfonicStream *stream,
          gpointer        data)
{
  Playback *playback = data;
  guint delay = 0;

  /* an ended stream also cancelled the playback, which ends it */
  if (symfonic_stream_is_over (stream))
    return;

  /* the next event keeps its delay: a stage on another thread makes every
   * push wait, and the transcript's pace must not vanish with it */
  if (playback->position < symfonic_transcript_get_length (playback->transcript))
    delay = scaled_delay (playback,
                          symfonic_transcript_get_entry (playback->transcript, playback->position)->delay_ms);
  schedule (playback, delay);
}

static gboolean
on_cancelled (GCancellable *cancellable,
              gpointer      data)
{
  Playback *playback = data;
  g_autoptr(GError) error = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                                 "The client went away");

  playback_end (playback, error);
  return G_SOURCE_REMOVE;
}

/* The transcript the request asks for. The name is the client's, as long
 * as a request header may be: the refusal does not repeat it. */
static Entry *
find_entry (SymfonicReplaySource  *self,
            SymfonicStream        *stream,
            GError               **error)
{
  SymfonicInvocation *invocation = symfonic_stream_get_invocation (stream);
  Entry *entry;
  const char *name = NULL;

  if (self->transcript_header != NULL && *self->transcript_header != '\0')
    name = symfonic_invocation_get_header (invocation, self->transcript_header);
  if (name == NULL)
    name = self->default_transcript;

  entry = g_hash_table_lookup (self->by_name, name);
  if (entry == NULL)
    g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_NOT_FOUND,
                         "No transcript of that name");

  return entry;
}

static gboolean
parse_count (const char *text,
             guint64     max,
             guint64    *value)
{
  return text != NULL && *text != '\0' && g_ascii_string_to_unsigned (text, 10, 0, max, value, NULL);
}

/* What a chunking names, as the chunking header or the properties give
 * it: `recorded` (as it came), `whole` (one read), `bytes=N` (reads of N
 * bytes), `split=K` (two reads, cut at byte K) or `seed=N[,max=M]` (reads
 * of 1 to M bytes drawn from seed N). NULL and an error for anything
 * else. */
static SymfonicRecording *
rechunk (SymfonicReplaySource  *self,
         SymfonicRecording     *recording,
         const char            *chunking,
         GError               **error)
{
  g_auto(GStrv) parts = g_strsplit (chunking, ",", 3);
  gsize length = g_bytes_get_size (symfonic_recording_get_body (recording));
  guint64 n = 0;
  guint64 max = self->rechunk_max_bytes;

  if (g_str_equal (chunking, "recorded"))
    return symfonic_recording_ref (recording);
  if (g_str_equal (chunking, "whole"))
    return symfonic_recording_rechunk_at (recording, NULL, 0);
  if (g_str_has_prefix (chunking, "split=") && parse_count (chunking + 6, G_MAXSIZE, &n))
    {
      gsize cut = n;

      return symfonic_recording_rechunk_at (recording, &cut, 1);
    }
  if (g_str_has_prefix (chunking, "bytes=") && parse_count (chunking + 6, G_MAXINT32, &n) && n > 0)
    {
      g_autoptr(GArray) cuts = g_array_new (FALSE, FALSE, sizeof (gsize));

      for (gsize at = n; at < length; at += n)
        g_array_append_val (cuts, at);
      return symfonic_recording_rechunk_at (recording, (const gsize *) cuts->data, cuts->len);
    }
  if (g_str_has_prefix (parts[0], "seed=") && parse_count (parts[0] + 5, G_MAXUINT64, &n) &&
      (parts[1] == NULL ||
       (parts[2] == NULL && g_str_has_prefix (parts[1], "max=") && parse_count (parts[1] + 4, G_MAXINT32, &max) &&
        max > 0)))
    return symfonic_recording_rechunk (recording, n, max);

  g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_BAD_REQUEST,
                       "The chunking must be recorded, whole, bytes=N, split=K or seed=N[,max=M]");
  return NULL;
}

/* The recording as this stream plays it: re-cut as its request's chunking
 * header asks, or as the source's rechunk-seed says. */
static SymfonicRecording *
recording_for (SymfonicReplaySource  *self,
               Entry                 *entry,
               SymfonicStream        *stream,
               GError               **error)
{
  const char *chunking = NULL;

  if (self->chunking_header != NULL && *self->chunking_header != '\0')
    chunking = symfonic_invocation_get_header (symfonic_stream_get_invocation (stream), self->chunking_header);
  if (chunking != NULL)
    return rechunk (self, entry->recording, chunking, error);
  if (self->rechunk_seed >= 0)
    return symfonic_recording_rechunk (entry->recording, (guint64) self->rechunk_seed, self->rechunk_max_bytes);

  return symfonic_recording_ref (entry->recording);
}

/* An unknown transcript is the client's mistake: a 404 before the
 * response begins, not an error frame after a 200; so is a chunking that
 * means nothing. A recording's player admits the stream as it admits its
 * own (its cap on connections, a head held for the first event). */
static gboolean
symfonic_replay_source_admit (SymfonicSource  *source,
                              SymfonicStream  *stream,
                              GError         **error)
{
  SymfonicReplaySource *self = SYMFONIC_REPLAY_SOURCE (source);
  g_autoptr(SymfonicRecording) recording = NULL;
  Entry *entry = find_entry (self, stream, error);

  if (entry == NULL)
    return FALSE;
  if (entry->recording == NULL)
    return TRUE;

  recording = recording_for (self, entry, stream, error);

  return recording != NULL && symfonic_source_admit (entry->player, stream, error);
}

static void
symfonic_replay_source_start (SymfonicSource *source,
                              SymfonicStream *stream,
                              GCancellable   *cancellable)
{
  SymfonicReplaySource *self = SYMFONIC_REPLAY_SOURCE (source);
  g_autoptr(GError) error = NULL;
  SymfonicTranscript *transcript;
  Playback *playback;
  guint first_delay;
  Entry *entry;

  /* a recording has no paused run to continue */
  if (symfonic_route_get_kind (symfonic_stream_get_route (stream)) == SYMFONIC_ROUTE_KIND_RESUME)
    {
      g_autoptr(GError) error = g_error_new_literal (SYMFONIC_ERROR, SYMFONIC_ERROR_CONFLICT,
                                                     "The replay source cannot resume a run");

      symfonic_stream_push_end (stream, error);
      return;
    }

  /* admitted streams always find theirs; a caller that skipped admission
   * gets the same refusal as the end of the stream */
  entry = find_entry (self, stream, &error);
  if (entry == NULL)
    {
      symfonic_stream_push_end (stream, error);
      return;
    }
  if (entry->recording != NULL)
    {
      g_autoptr(SymfonicRecording) recording = recording_for (self, entry, stream, &error);

      if (recording == NULL)
        symfonic_stream_push_end (stream, error);
      else
        symfonic_http_source_play (SYMFONIC_HTTP_SOURCE (entry->player), stream, cancellable, recording,
                                   self->time_scale);
      return;
    }
  transcript = entry->transcript;

  playback = g_new0 (Playback, 1);
  playback->source = g_object_ref (self);
  playback->stream = g_object_ref (stream);
  playback->transcript = transcript;
  symfonic_stream_set_ready_func (stream, on_ready, playback, NULL);

  if (cancellable != NULL)
    {
      playback->cancelled = g_cancellable_source_new (cancellable);
      g_source_set_callback (playback->cancelled, G_SOURCE_FUNC (on_cancelled), playback, NULL);
      g_source_attach (playback->cancelled, g_main_context_get_thread_default ());
    }

  first_delay = symfonic_transcript_get_length (transcript) > 0
    ? scaled_delay (playback, symfonic_transcript_get_entry (transcript, 0)->delay_ms)
    : 0;
  schedule (playback, first_delay);
}

static void
symfonic_replay_source_source_init (SymfonicSourceInterface *iface)
{
  iface->admit = symfonic_replay_source_admit;
  iface->start = symfonic_replay_source_start;
}

static int
compare_files (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* The source that plays recordings of @recording's type and model: made
 * once, as a pipeline would make one, pointed at no host, since it only
 * ever reads recordings. */
static SymfonicSource *
get_player (SymfonicReplaySource  *self,
            SymfonicRecording     *recording,
            const char            *shown,
            GCancellable          *cancellable,
            GError               **error)
{
  const char *type_name = symfonic_recording_get_source_type (recording);
  const char *model = symfonic_recording_get_model (recording);
  g_autofree char *key = g_strdup_printf ("%s %s", type_name, model != NULL ? model : "");
  GObject *made = g_hash_table_lookup (self->players, key);
  g_autoptr(GObject) player = NULL;
  GObjectClass *klass;
  GType type;

  if (made != NULL)
    return SYMFONIC_SOURCE (made);

  type = symfonic_registry_lookup (symfonic_registry_get_default (), type_name);
  if (!g_type_is_a (type, SYMFONIC_TYPE_HTTP_SOURCE) || G_TYPE_IS_ABSTRACT (type))
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("transcripts: %s: recorded by a “%s” source, which is no HTTP source type here"),
                   shown, type_name);
      return NULL;
    }

  klass = g_type_class_ref (type);
  {
    const char *names[3] = { "url", NULL, NULL };
    GValue values[3] = { G_VALUE_INIT, G_VALUE_INIT, G_VALUE_INIT };
    guint n = 1;

    g_value_init (&values[0], G_TYPE_STRING);
    g_value_set_static_string (&values[0], "http://recording.invalid/");
    /* a provider's model, and no cap of its own on the usage it reports:
     * the recording's source had its own */
    if (g_object_class_find_property (klass, "model") != NULL)
      {
        names[n] = "model";
        g_value_init (&values[n], G_TYPE_STRING);
        g_value_set_string (&values[n], model != NULL ? model : "recorded");
        n++;
      }
    if (g_object_class_find_property (klass, "max-tokens") != NULL)
      {
        names[n] = "max-tokens";
        g_value_init (&values[n], G_TYPE_UINT);
        g_value_set_uint (&values[n], G_MAXINT);
        n++;
      }
    player = g_object_new_with_properties (type, n, names, values);
    for (guint i = 0; i < n; i++)
      g_value_unset (&values[i]);
  }
  g_type_class_unref (klass);
  if (!g_initable_init (G_INITABLE (player), cancellable, error))
    {
      g_prefix_error (error, "transcripts: %s: ", shown);
      return NULL;
    }
  made = g_steal_pointer (&player);
  g_hash_table_insert (self->players, g_steal_pointer (&key), made);

  return SYMFONIC_SOURCE (made);
}

static gboolean
load (GInitable     *initable,
      GCancellable  *cancellable,
      GError       **error)
{
  SymfonicReplaySource *self = SYMFONIC_REPLAY_SOURCE (initable);
  g_autoptr(GFileEnumerator) children = NULL;
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) local_error = NULL;
  g_autofree char *display = NULL;
  GFileInfo *info;

  if (self->transcripts == NULL)
    {
      g_set_error_literal (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                           _("transcripts: expected a folder of .jsonl transcripts, found none"));
      return FALSE;
    }

  display = g_file_get_parse_name (self->transcripts);
  children = g_file_enumerate_children (self->transcripts, G_FILE_ATTRIBUTE_STANDARD_NAME,
                                        G_FILE_QUERY_INFO_NONE, cancellable, &local_error);
  if (children == NULL)
    {
      g_propagate_prefixed_error (error, g_steal_pointer (&local_error), "transcripts: ");
      return FALSE;
    }

  while ((info = g_file_enumerator_next_file (children, cancellable, &local_error)) != NULL)
    {
      const char *name = g_file_info_get_name (info);

      if (g_str_has_suffix (name, ".jsonl"))
        g_ptr_array_add (names, g_strdup (name));
      g_object_unref (info);
    }
  if (local_error != NULL)
    {
      g_propagate_prefixed_error (error, g_steal_pointer (&local_error), "transcripts: ");
      return FALSE;
    }
  g_ptr_array_sort (names, compare_files);

  for (guint i = 0; i < names->len; i++)
    {
      const char *file_name = g_ptr_array_index (names, i);
      g_autoptr(GFile) file = g_file_get_child (self->transcripts, file_name);
      g_autofree char *name = g_strndup (file_name, strlen (file_name) - strlen (".jsonl"));
      g_autofree char *contents = NULL;
      g_autofree char *shown = g_file_get_parse_name (file);
      Entry *entry = g_new0 (Entry, 1);
      gsize length;

      g_hash_table_insert (self->by_name, g_strdup (name), entry);
      if (!symfonic_config_file_load (file, SYMFONIC_CONFIG_FILE_MAX_SIZE, &contents, &length, error))
        {
          g_prefix_error (error, "transcripts: ");
          return FALSE;
        }
      if (symfonic_recording_data_is_recording (contents, length))
        {
          entry->recording = symfonic_recording_new_from_data (contents, length, &local_error);
          if (entry->recording == NULL)
            {
              g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, "transcripts: %s: %s", shown,
                           local_error->message);
              return FALSE;
            }
          entry->player = get_player (self, entry->recording, shown, cancellable, error);
          if (entry->player == NULL)
            return FALSE;
        }
      else
        {
          entry->transcript = symfonic_transcript_new_from_data (name, shown, contents, error);
          if (entry->transcript == NULL)
            {
              g_prefix_error (error, "transcripts: ");
              return FALSE;
            }
        }
    }

  if (!g_hash_table_contains (self->by_name, self->default_transcript))
    {
      g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                   _("default-transcript: expected %s.jsonl in %s, found none"), self->default_transcript, display);
      return FALSE;
    }

  return TRUE;
}

static gboolean
symfonic_replay_source_initable_init_impl (GInitable     *initable,
                                           GCancellable  *cancellable,
                                           GError       **error)
{
  /* reading the folder again would replace transcripts that streams may
   * be playing, and could find it changed */
  return symfonic_init_once (&SYMFONIC_REPLAY_SOURCE (initable)->init, load, initable, cancellable, error);
}

static void
symfonic_replay_source_initable_init (GInitableIface *iface)
{
  iface->init = symfonic_replay_source_initable_init_impl;
}

static void
symfonic_replay_source_finalize (GObject *object)
{
  SymfonicReplaySource *self = (SymfonicReplaySource *) object;

  g_clear_object (&self->transcripts);
  g_free (self->default_transcript);
  g_free (self->transcript_header);
  g_free (self->chunking_header);
  g_hash_table_unref (self->by_name);
  g_hash_table_unref (self->players);
  symfonic_init_once_clear (&self->init);

  G_OBJECT_CLASS (symfonic_replay_source_parent_class)->finalize (object);
}

static void
symfonic_replay_source_get_property (GObject    *object,
                                     guint       prop_id,
                                     GValue     *value,
                                     GParamSpec *pspec)
{
  SymfonicReplaySource *self = SYMFONIC_REPLAY_SOURCE (object);

  switch (prop_id)
    {
    case PROP_TRANSCRIPTS:
      g_value_set_object (value, self->transcripts);
      break;
    case PROP_DEFAULT_TRANSCRIPT:
      g_value_set_string (value, self->default_transcript);
      break;
    case PROP_TRANSCRIPT_HEADER:
      g_value_set_string (value, self->transcript_header);
      break;
    case PROP_TIME_SCALE:
      g_value_set_double (value, self->time_scale);
      break;
    case PROP_RECHUNK_SEED:
      g_value_set_int64 (value, self->rechunk_seed);
      break;
    case PROP_RECHUNK_MAX_BYTES:
      g_value_set_uint (value, self->rechunk_max_bytes);
      break;
    case PROP_CHUNKING_HEADER:
      g_value_set_string (value, self->chunking_header);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_replay_source_set_property (GObject      *object,
                                     guint         prop_id,
                                     const GValue *value,
                                     GParamSpec   *pspec)
{
  SymfonicReplaySource *self = SYMFONIC_REPLAY_SOURCE (object);

  switch (prop_id)
    {
    case PROP_TRANSCRIPTS:
      g_set_object (&self->transcripts, g_value_get_object (value));
      break;
    case PROP_DEFAULT_TRANSCRIPT:
      g_free (self->default_transcript);
      self->default_transcript = g_value_dup_string (value);
      break;
    case PROP_TRANSCRIPT_HEADER:
      g_free (self->transcript_header);
      self->transcript_header = g_value_dup_string (value);
      break;
    case PROP_TIME_SCALE:
      self->time_scale = g_value_get_double (value);
      break;
    case PROP_RECHUNK_SEED:
      self->rechunk_seed = g_value_get_int64 (value);
      break;
    case PROP_RECHUNK_MAX_BYTES:
      self->rechunk_max_bytes = g_value_get_uint (value);
      break;
    case PROP_CHUNKING_HEADER:
      g_free (self->chunking_header);
      self->chunking_header = g_value_dup_string (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_replay_source_class_init (SymfonicReplaySourceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = symfonic_replay_source_finalize;
  object_class->get_property = symfonic_replay_source_get_property;
  object_class->set_property = symfonic_replay_source_set_property;

  properties[PROP_TRANSCRIPTS] =
    symfonic_param_spec_folder ("transcripts", "Transcripts",
                                "Folder of NAME.jsonl transcripts: typed events, one per line, or recordings of an "
                                "HTTP source's upstream",
                                G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_DEFAULT_TRANSCRIPT] =
    g_param_spec_string ("default-transcript", "Default transcript",
                         "The transcript played when a request names none",
                         "plain",
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_TRANSCRIPT_HEADER] =
    g_param_spec_string ("transcript-header", "Transcript header",
                         "Request header naming the transcript to play; empty to always play the default",
                         "X-Symfonic-Transcript",
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_TIME_SCALE] =
    g_param_spec_double ("time-scale", "Time scale",
                         "Multiplies every recorded pause: 1 plays in real time, 0 as fast as possible",
                         0.0, 100.0, 1.0,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_RECHUNK_SEED] =
    g_param_spec_int64 ("rechunk-seed", "Rechunk seed",
                        "Plays each recording's bytes cut at random boundaries drawn from this seed (reads of 1 "
                        "to rechunk-max-bytes bytes) instead of as they came; -1 plays them as they came",
                        -1, G_MAXINT64, -1,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_RECHUNK_MAX_BYTES] =
    g_param_spec_uint ("rechunk-max-bytes", "Rechunk max bytes",
                       "The longest read of a recording cut at random boundaries",
                       1, 1024 * 1024, DEFAULT_RECHUNK_MAX_BYTES,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_CHUNKING_HEADER] =
    g_param_spec_string ("chunking-header", "Chunking header",
                         "Request header a client may name a recording's chunking with: recorded, whole, "
                         "bytes=N, split=K or seed=N[,max=M]; empty (the default) lets no client choose",
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
symfonic_replay_source_init (SymfonicReplaySource *self)
{
  self->by_name = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, entry_free);
  self->players = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  self->rechunk_seed = -1;
  self->rechunk_max_bytes = DEFAULT_RECHUNK_MAX_BYTES;
}
