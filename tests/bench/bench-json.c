/* bench-json.c: what reading one JSON document costs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every upstream event is one JSON document, so reading it is per-event
 * cost. symfonic_json_parse() is timed against json-glib's own
 * json_parser_load_from_data() on a typical event's data (about 80 bytes)
 * and on a 10 KB object; both build the same tree, which is freed each
 * time. Rounds alternate the two readers so that drift hits both alike;
 * the median of 7 is printed per document. Times are the thread's CPU
 * time, so that other processes on a loaded machine do not count.
 */
#include <time.h>

#include "bench-common.h"

#define ROUNDS 7
#define TARGET_BYTES (64 * 1024 * 1024)

static const char event_data[] =
  "{\"node_id\":\"n-42\",\"node_label\":\"Paris\",\"score\":0.91,\"layer\":\"semantic\",\"source_node_id\":null}";

static double
cpu_seconds (void)
{
  struct timespec now;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &now);
  return now.tv_sec + now.tv_nsec / 1e9;
}

static char *
build_large_object (void)
{
  GString *text = g_string_new ("{");

  for (guint i = 0; text->len < 10 * 1024 - 120; i++)
    g_string_append_printf (text,
                            "%s\"member-%u\":{\"text\":\"caf\\u00e9 %u, \\\"quoted\\\"\",\"n\":%u,\"x\":%u.25,"
                            "\"ok\":true,\"tags\":[\"a\",\"b\",null]}",
                            i > 0 ? "," : "", i, i, i * 7, i);
  g_string_append_c (text, '}');

  return g_string_free (text, FALSE);
}

typedef void (*ReadFunc) (const char *text,
                          gsize       length);

static void
read_symfonic (const char *text,
               gsize       length)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = symfonic_json_parse (text, length, SYMFONIC_JSON_MAX_DEPTH, &error);

  if (node == NULL)
    g_error ("%s", error->message);
}

static void
read_json_glib (const char *text,
                gsize       length)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  if (!json_parser_load_from_data (parser, text, length, &error))
    g_error ("%s", error->message);
}

static void
time_round (ReadFunc    read,
            const char *text,
            gsize       length,
            guint       iterations,
            GArray     *seconds)
{
  double start = cpu_seconds ();
  double elapsed;

  for (guint i = 0; i < iterations; i++)
    read (text, length);
  elapsed = cpu_seconds () - start;
  g_array_append_val (seconds, elapsed);
}

static void
compare (const char *name,
         const char *text)
{
  gsize length = strlen (text);
  guint iterations = MAX (TARGET_BYTES / length / 8, 1);
  g_autoptr(GArray) ours = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) theirs = g_array_new (FALSE, FALSE, sizeof (double));
  double ours_ns;
  double theirs_ns;

  for (guint round = 0; round < ROUNDS; round++)
    {
      time_round (read_symfonic, text, length, iterations, ours);
      time_round (read_json_glib, text, length, iterations, theirs);
    }
  ours_ns = bench_percentile (ours, 0.5) / iterations * 1e9;
  theirs_ns = bench_percentile (theirs, 0.5) / iterations * 1e9;
  g_print ("%-12s %6" G_GSIZE_FORMAT " bytes  symfonic_json_parse %9.0f ns (%6.1f MB/s)  "
           "json_parser_load_from_data %9.0f ns (%6.1f MB/s)  ratio %.2f\n",
           name, length, ours_ns, length / ours_ns * 1e3, theirs_ns, length / theirs_ns * 1e3,
           ours_ns / theirs_ns);
}

int
main (int    argc,
      char **argv)
{
  g_autofree char *large = build_large_object ();

  compare ("event data", event_data);
  compare ("10 KB object", large);

  return 0;
}
