/* bench-events.c: what one event costs from upstream bytes to frame bytes
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The per-event path without any socket: the reference answer as SSE text
 * goes through the SSE parser, the JSON reader and event decoding, a
 * SymfonicStream on a typed route with the default stages (built from a
 * pipeline file, as the gateway builds it), and the typed encoder. Time is
 * the thread's CPU time per upstream event, median of the rounds.
 *
 * The stream's sink and the encoder are internal to the library, so this
 * program is linked with the library's objects and the stage plugins'
 * sources instead of loading libsymfonic and the plugin modules; it uses a
 * registry of its own, which only knows the types registered here.
 *
 * Allocations are counted by defining malloc() and friends in this program:
 * the dynamic linker binds every library's calls to them, and they forward
 * to glibc's own entry points. GLib 2.74's slice allocator would hide
 * small blocks from the count, so G_SLICE=always-malloc is set before GLib
 * allocates (GLib 2.76 and later always use malloc). Sanitizers bring
 * their own malloc(), so sanitized builds time but do not count.
 *
 * The answer is the reference rig's: 3 activations, 200 text deltas of one
 * to three words with a citation tag every 25th, a <memory_ops> block split
 * over the last deltas, the consolidation and the terminal.
 */
#include "config.h"

#include <time.h>

#include "symfonic.h"
#include "symfonic-encoder-private.h"
#include "symfonic-json-private.h"
#include "symfonic-stream-private.h"

#include "symfonic-auth-stage.h"
#include "symfonic-budget-stage.h"
#include "symfonic-citation-stage.h"
#include "symfonic-error-map-stage.h"
#include "symfonic-extraction-stage.h"
#include "symfonic-rate-limit-stage.h"
#include "symfonic-release-line-stage.h"

#define N_DELTAS 200
#define ROUNDS 9
#define STREAMS_PER_ROUND 400
/* bytes per read from the upstream, as a socket would hand them over */
#define READ_BYTES 4096

/* --- counting allocations ------------------------------------------------ */

static guint64 n_allocations;

#ifdef BENCH_COUNT_ALLOCATIONS
extern void *__libc_malloc (size_t size);
extern void *__libc_calloc (size_t n, size_t size);
extern void *__libc_realloc (void *block, size_t size);
extern void *__libc_memalign (size_t alignment, size_t size);
extern void  __libc_free (void *block);

void *
malloc (size_t size)
{
  n_allocations++;
  return __libc_malloc (size);
}

void *
calloc (size_t n,
        size_t size)
{
  n_allocations++;
  return __libc_calloc (n, size);
}

/* a reallocation may move the block: it counts as one */
void *
realloc (void   *block,
         size_t  size)
{
  n_allocations++;
  return __libc_realloc (block, size);
}

int
posix_memalign (void   **out,
                size_t   alignment,
                size_t   size)
{
  void *block;

  n_allocations++;
  block = __libc_memalign (alignment, size);
  if (block == NULL)
    return ENOMEM;
  *out = block;
  return 0;
}

void
free (void *block)
{
  __libc_free (block);
}
#endif

/* --- the answer ------------------------------------------------------------ */

static void
append_frame (GString    *sse,
              const char *name,
              const char *data)
{
  g_string_append_printf (sse, "event: %s\ndata: %s\n\n", name, data);
}

static char *
build_answer (guint *n_events)
{
  static const char *words[] = {
    "the", "sky", "looks", "blue", "because", "air", "molecules", "scatter", "short",
    "wavelengths", "of", "sunlight", "more", "than", "long", "ones",
  };
  static const char memory[] = " <memory_ops>[{\"op\":\"add\",\"node\":\"user_pref\",\"value\":\"likes tea\"}]</memory_ops>";
  g_autoptr(GRand) rand = g_rand_new_with_seed (7);
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GString) piece = g_string_new (NULL);
  g_autoptr(GString) data = g_string_new (NULL);
  GString *sse = g_string_new (NULL);
  guint n_memory = (sizeof memory - 1 + 11) / 12;

  for (guint k = 0; k < 3; k++)
    {
      g_string_printf (data, "{\"node_id\":\"n%u\",\"node_label\":\"fact\",\"score\":0.5,"
                             "\"layer\":\"semantic\",\"source_node_id\":null}", k);
      append_frame (sse, "ActivationEvent", data->str);
    }
  for (guint i = 0; i < N_DELTAS; i++)
    {
      g_string_truncate (piece, 0);
      if (i < N_DELTAS - n_memory)
        {
          guint n_words = g_rand_int_range (rand, 1, 4);

          for (guint w = 0; w < n_words; w++)
            g_string_append_printf (piece, " %s", words[g_rand_int_range (rand, 0, G_N_ELEMENTS (words))]);
          if (i % 25 == 24)
            g_string_append_printf (piece, " [semantic:fact_%u]", i);
        }
      else
        {
          gsize start = (i - (N_DELTAS - n_memory)) * 12;

          g_string_append_len (piece, memory + start, MIN (12, sizeof memory - 1 - start));
        }
      g_string_append (text, piece->str);
      g_string_assign (data, "{\"text\":");
      symfonic_json_append_string (data, piece->str, -1);
      g_string_append_c (data, '}');
      append_frame (sse, "TextDeltaEvent", data->str);
    }
  append_frame (sse, "ConsolidationScheduledEvent",
                "{\"report\":{\"scheduled\":true,\"queue\":\"inline\"},\"graph_mutations\":0}");
  g_string_assign (data, "{\"text\":");
  symfonic_json_append_string (data, text->str, -1);
  g_string_append (data, ",\"duration_ms\":5}");
  append_frame (sse, "ResponseCompleteEvent", data->str);

  *n_events = 3 + N_DELTAS + 2;
  return g_string_free (sse, FALSE);
}

/* --- a source that the benchmark drives itself ---------------------------- */

#define BENCH_TYPE_SOURCE (bench_source_get_type ())
G_DECLARE_FINAL_TYPE (BenchSource, bench_source, BENCH, SOURCE, GObject)

struct _BenchSource
{
  GObject parent_instance;
};

static void
bench_source_start (SymfonicSource *source,
                    SymfonicStream *stream,
                    GCancellable   *cancellable)
{
}

static void
bench_source_iface_init (SymfonicSourceInterface *iface)
{
  iface->start = bench_source_start;
}

G_DEFINE_FINAL_TYPE_WITH_CODE (BenchSource, bench_source, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_SOURCE, bench_source_iface_init))

static void
bench_source_class_init (BenchSourceClass *klass)
{
}

static void
bench_source_init (BenchSource *self)
{
}

/* --- one stream ------------------------------------------------------------ */

typedef struct
{
  SymfonicEncoder *encoder;
  /* what would go to the socket; emptied as a writer would */
  GString         *out;
  guint64          bytes;
  gboolean         ended;
  gboolean         failed;
} Sink;

static SymfonicSinkResult
sink_event (gpointer       data,
            SymfonicEvent *event)
{
  Sink *sink = data;

  symfonic_encoder_event (sink->encoder, event, sink->out);
  sink->bytes += sink->out->len;
  g_string_truncate (sink->out, 0);

  return SYMFONIC_SINK_TAKEN;
}

static void
sink_end (gpointer      data,
          const GError *error)
{
  Sink *sink = data;

  if (error == NULL)
    symfonic_encoder_success (sink->encoder, 5, sink->out);
  sink->bytes += sink->out->len;
  sink->ended = TRUE;
  sink->failed = error != NULL;
}

static const SymfonicStreamSink sink_funcs = { sink_event, sink_end };

static void
push_frames (SymfonicSseParser *parser,
             SymfonicStream    *stream)
{
  const char *name;
  const char *data;

  while (symfonic_sse_parser_next_borrowed (parser, &name, &data, NULL, NULL))
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SymfonicEvent) event = symfonic_event_try_new_from_data (name, data, strlen (data));

      if (event == NULL)
        {
          g_autoptr(JsonNode) root = symfonic_json_parse (data, strlen (data), SYMFONIC_JSON_MAX_DEPTH, &error);

          if (root != NULL)
            event = symfonic_event_new_from_json (name, root, &error);
          if (event == NULL)
            g_error ("%s", error->message);
        }
      symfonic_stream_push (stream, event);
    }
}

static void
admitted (gpointer      data,
          const GError *error)
{
  gboolean *done = data;

  if (error != NULL)
    g_error ("admission: %s", error->message);
  *done = TRUE;
}

/* As the gateway admits: stages that decide at once do so in place. */
static void
admit (SymfonicStream         *stream,
       SymfonicAdmissionPhase  phase)
{
  g_autoptr(GError) error = NULL;
  gboolean done = FALSE;

  switch (symfonic_stream_admit (stream, phase, admitted, &done, &error))
    {
    case SYMFONIC_ADMIT_PASSED:
      break;
    case SYMFONIC_ADMIT_REFUSED:
      g_error ("admission: %s", error->message);
      break;
    case SYMFONIC_ADMIT_PENDING:
      while (!done)
        g_main_context_iteration (NULL, TRUE);
      break;
    }
}

/* Returns the bytes the client would have received. */
static guint64
run_stream (SymfonicRoute *route,
            const char    *answer,
            gsize          length)
{
  g_autoptr(SymfonicInvocation) invocation = symfonic_invocation_new ("why is the sky blue?");
  g_autoptr(SymfonicStream) stream = NULL;
  g_autoptr(SymfonicSseParser) parser = symfonic_sse_parser_new (1024 * 1024);
  g_autoptr(GError) error = NULL;
  Sink sink = { NULL, g_string_new (NULL), 0, FALSE, FALSE };

  symfonic_invocation_set_header (invocation, "Authorization", "Bearer demo-token-alice");
  symfonic_invocation_set_header (invocation, "X-Tenant-ID", "acme");
  stream = symfonic_stream_new (route, invocation);
  admit (stream, SYMFONIC_ADMISSION_PHASE_HEAD);
  admit (stream, SYMFONIC_ADMISSION_PHASE_BODY);

  sink.encoder = symfonic_encoder_new (SYMFONIC_ROUTE_KIND_TYPED, stream, SYMFONIC_ENCODER_FLAGS_NONE);
  symfonic_stream_set_sink (stream, &sink_funcs, &sink);
  symfonic_stream_start (stream);

  for (gsize offset = 0; offset < length; offset += READ_BYTES)
    {
      if (!symfonic_sse_parser_feed (parser, (const guint8 *) answer + offset,
                                     MIN (READ_BYTES, length - offset), &error))
        g_error ("%s", error->message);
      push_frames (parser, stream);
    }
  symfonic_sse_parser_end (parser);
  push_frames (parser, stream);
  symfonic_stream_push_end (stream, NULL);

  if (!sink.ended || sink.failed)
    g_error ("the stream did not end with success");
  symfonic_encoder_free (sink.encoder);
  g_string_free (sink.out, TRUE);

  return sink.bytes;
}

/* --- the pipeline ----------------------------------------------------------- */

static SymfonicPipeline *
load_pipeline (void)
{
  static const struct {
    const char *name;
    GType     (*get_type) (void);
  } types[] = {
    { "auth", symfonic_auth_stage_get_type },
    { "rate-limit", symfonic_rate_limit_stage_get_type },
    { "budget", symfonic_budget_stage_get_type },
    { "release-line", symfonic_release_line_stage_get_type },
    { "extraction", symfonic_extraction_stage_get_type },
    { "citation", symfonic_citation_stage_get_type },
    { "error-map", symfonic_error_map_stage_get_type },
    { "bench", bench_source_get_type },
  };
  g_autoptr(SymfonicRegistry) registry = symfonic_registry_new ();
  g_autoptr(GFile) base = g_file_new_for_path (BENCH_DATA_DIR);
  g_autoptr(GError) error = NULL;
  SymfonicPipeline *pipeline;
  /* the reference rig's stages, with the limits set out of the way */
  static const char text[] =
    "[route:typed]\n"
    "path=/typed\n"
    "kind=typed\n"
    "source=bench\n"
    "stages=auth;rate-limit;budget;release-line;extraction;citation;errors\n"
    "\n"
    "[source:bench]\n"
    "type=bench\n"
    "\n"
    "[stage:auth]\n"
    "type=auth\n"
    "tokens-file=demo-tokens.ini\n"
    "\n"
    "[stage:rate-limit]\n"
    "type=rate-limit\n"
    "key=tenant-principal\n"
    "rate=1000000\n"
    "burst=1000000\n"
    "\n"
    "[stage:budget]\n"
    "type=budget\n"
    "tokens-per-window=1000000000000\n"
    "window-seconds=60\n"
    "reserve-tokens=1000\n"
    "\n"
    "[stage:release-line]\n"
    "type=release-line\n"
    "\n"
    "[stage:extraction]\n"
    "type=extraction\n"
    "\n"
    "[stage:citation]\n"
    "type=citation\n"
    "\n"
    "[stage:errors]\n"
    "type=error-map\n"
    "table=error-map.ini\n";

  for (guint i = 0; i < G_N_ELEMENTS (types); i++)
    {
      if (!symfonic_registry_register_type (registry, types[i].get_type (), types[i].name, NULL, &error))
        g_error ("%s", error->message);
    }
  pipeline = symfonic_pipeline_new_from_data (registry, text, -1, base, "bench-events.pipeline", &error);
  if (pipeline == NULL)
    g_error ("%s", error->message);

  return pipeline;
}

static int
compare_doubles (gconstpointer a,
                 gconstpointer b)
{
  double x = *(const double *) a;
  double y = *(const double *) b;

  return (x > y) - (x < y);
}

static double
cpu_seconds (void)
{
  struct timespec now;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &now);
  return now.tv_sec + now.tv_nsec / 1e9;
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(GArray) seconds = g_array_new (FALSE, FALSE, sizeof (double));
  g_autofree char *answer = NULL;
  SymfonicRoute *route;
  guint64 allocations;
  guint64 bytes = 0;
  guint n_events;
  gsize length;
  double median;

  g_setenv ("G_SLICE", "always-malloc", TRUE);
  pipeline = load_pipeline ();
  route = symfonic_pipeline_get_route (pipeline, 0);
  answer = build_answer (&n_events);
  length = strlen (answer);

  /* round 0 warms caches and the allocator up */
  for (guint round = 0; round <= ROUNDS; round++)
    {
      double start = cpu_seconds ();
      double elapsed;

      for (guint i = 0; i < STREAMS_PER_ROUND; i++)
        bytes = run_stream (route, answer, length);
      elapsed = cpu_seconds () - start;
      if (round > 0)
        g_array_append_val (seconds, elapsed);
    }
  g_array_sort (seconds, compare_doubles);
  median = g_array_index (seconds, double, seconds->len / 2);

  allocations = n_allocations;
  run_stream (route, answer, length);
  allocations = n_allocations - allocations;

  g_print ("events: %u events (%u deltas), %" G_GSIZE_FORMAT " B in, %" G_GUINT64_FORMAT " B out per stream\n",
           n_events, N_DELTAS, length, bytes);
  g_print ("events: %.0f ns per event (median of %u rounds of %u streams, min %.0f, max %.0f)\n",
           median * 1e9 / STREAMS_PER_ROUND / n_events, ROUNDS, STREAMS_PER_ROUND,
           g_array_index (seconds, double, 0) * 1e9 / STREAMS_PER_ROUND / n_events,
           g_array_index (seconds, double, seconds->len - 1) * 1e9 / STREAMS_PER_ROUND / n_events);
#ifdef BENCH_COUNT_ALLOCATIONS
  g_print ("events: %.1f allocations per event (%" G_GUINT64_FORMAT " per stream, setup included)\n",
           (double) allocations / n_events, allocations);
#else
  g_print ("events: allocations not counted (sanitizers own malloc)\n");
#endif

  return 0;
}
