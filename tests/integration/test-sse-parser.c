/* test-sse-parser.c: the test client's SSE parser, against the standard
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The other integration tests trust this parser to turn bytes into frames,
 * so it is checked on its own first: every input is fed whole, byte by
 * byte and split at every position, and must give the same frames.
 */
#include <string.h>

#include "symfonic-test-support.h"

typedef struct
{
  const char *event;
  const char *data;
  const char *id;
  guint       n_data_lines;
} Expected;

static GPtrArray *
parse_split (const char *input,
             gsize       length,
             gsize       split,
             guint      *comments)
{
  g_autoptr(SymfonicTestSseParser) parser = symfonic_test_sse_parser_new ();
  GPtrArray *frames = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_test_frame_free);

  if (split == 0)
    {
      /* byte by byte */
      for (gsize i = 0; i < length; i++)
        symfonic_test_sse_parser_feed (parser, input + i, 1, frames);
    }
  else
    {
      symfonic_test_sse_parser_feed (parser, input, split, frames);
      symfonic_test_sse_parser_feed (parser, input + split, length - split, frames);
    }
  *comments = symfonic_test_sse_parser_get_comments (parser);

  return frames;
}

static void
check (const char     *input,
       gsize           length,
       const Expected *expected,
       guint           n_expected,
       guint           n_comments)
{
  for (gsize split = 0; split <= length; split++)
    {
      guint comments = 0;
      g_autoptr(GPtrArray) frames = parse_split (input, length, split, &comments);

      g_assert_cmpuint (frames->len, ==, n_expected);
      g_assert_cmpuint (comments, ==, n_comments);
      for (guint i = 0; i < n_expected; i++)
        {
          SymfonicTestFrame *frame = g_ptr_array_index (frames, i);

          g_assert_cmpstr (frame->event, ==, expected[i].event);
          g_assert_cmpstr (frame->data, ==, expected[i].data);
          g_assert_cmpstr (frame->id, ==, expected[i].id);
          g_assert_cmpuint (frame->n_data_lines, ==, expected[i].n_data_lines);
          g_assert_cmpint (frame->time_us, >, 0);
        }
    }
}

static void
test_line_endings (void)
{
  static const Expected expected[] = {
    { "A", "{\"x\":1}", NULL, 1 },
    { "B", "two", NULL, 1 },
    { "C", "three", NULL, 1 },
    { "D", "mixed", NULL, 1 },
  };
  static const char input[] =
    "event: A\ndata: {\"x\":1}\n\n"
    "event: B\r\ndata: two\r\n\r\n"
    "event: C\rdata: three\r\r"
    "event: D\r\ndata: mixed\n\r";

  check (input, strlen (input), expected, G_N_ELEMENTS (expected), 0);
}

static void
test_fields (void)
{
  static const Expected expected[] = {
    { "message", "line one\nline two\n", NULL, 3 },
    { "E", " two spaces", "7", 1 },
    { "message", "", NULL, 1 },
    { "F", "no space:colon: inside", NULL, 1 },
  };
  static const char input[] =
    ": a comment\n"
    "data: line one\n"
    "data:line two\n"
    "data\n"
    "retry: 1000\n"
    "unknown: field\n"
    "\n"
    "event:E\nid: 7\ndata:  two spaces\n\n"
    ": only a comment, then a frame without data is not dispatched\n"
    "event: ignored\n\n"
    "data\n\n"
    "event: F\ndata:no space:colon: inside\n\n"
    "data: unterminated";

  check (input, strlen (input), expected, G_N_ELEMENTS (expected), 2);
}

static void
test_bom_and_state (void)
{
  static const Expected expected[] = {
    { "A", "x", NULL, 1 },
  };
  static const char input[] = "\xEF\xBB\xBF" "event: A\ndata: x\n\n";
  g_autoptr(SymfonicTestSseParser) parser = symfonic_test_sse_parser_new ();
  g_autoptr(GPtrArray) frames = g_ptr_array_new_with_free_func ((GDestroyNotify) symfonic_test_frame_free);

  check (input, strlen (input), expected, G_N_ELEMENTS (expected), 0);

  g_assert_true (symfonic_test_sse_parser_is_between_frames (parser));
  symfonic_test_sse_parser_feed (parser, "event: A\n", 9, frames);
  g_assert_false (symfonic_test_sse_parser_is_between_frames (parser));
  symfonic_test_sse_parser_feed (parser, "data: x\n\nda", 11, frames);
  g_assert_cmpuint (frames->len, ==, 1);
  g_assert_false (symfonic_test_sse_parser_is_between_frames (parser));
  symfonic_test_sse_parser_feed (parser, "ta: y\n\n", 7, frames);
  g_assert_cmpuint (frames->len, ==, 2);
  g_assert_true (symfonic_test_sse_parser_is_between_frames (parser));
}

static void
test_strict_json (void)
{
  static const char * const good[] = {
    "{}", "[]", "0", "-0.5e+3", "\"a\\u00e9\\ud83d\\ude00\\/\"", " {\"a\" : [true, false, null, 1.25]} ",
    "\"é 😀\"",
  };
  static const char * const bad[] = {
    "", "{", "{,}", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "+1", "'a'", "\"\t\"", "\"\\x\"",
    "\"\\ud83d\"", "\"\\ude00\"", "NaN", "Infinity", "{} {}", "{\"a\":1} x", "/* c */ 1",
    "{a:1}", "[1 2]", "\"unterminated", "\"\xff\"", "tru",
  };

  for (guint i = 0; i < G_N_ELEMENTS (good); i++)
    {
      g_autoptr(GError) error = NULL;

      symfonic_test_json_is_strict (good[i], -1, &error);
      g_assert_no_error (error);
    }

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *escaped = g_strescape (bad[i], NULL);

      g_test_message ("bad: %s", escaped);
      g_assert_false (symfonic_test_json_is_strict (bad[i], -1, &error));
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
    }

  /* a NUL byte inside is not JSON */
  g_assert_false (symfonic_test_json_is_strict ("\"a\0b\"", 5, NULL));
}

static void
test_metrics_lookup (void)
{
  static const char text[] =
    "# HELP x_total Things\n# TYPE x_total counter\nx_total 3\n"
    "x_total_more 9\ny{route=\"a\"} 4\ny 5\n";
  double value = -1;

  g_assert_true (symfonic_test_metrics_lookup (text, "x_total", &value));
  g_assert_cmpfloat (value, ==, 3);
  g_assert_true (symfonic_test_metrics_lookup (text, "y", &value));
  g_assert_cmpfloat (value, ==, 5);
  g_assert_false (symfonic_test_metrics_lookup (text, "x", &value));
}

int
main (int   argc,
      char *argv[])
{
  symfonic_test_init (&argc, &argv);

  g_test_add_func ("/sse-parser/line-endings", test_line_endings);
  g_test_add_func ("/sse-parser/fields", test_fields);
  g_test_add_func ("/sse-parser/bom-and-state", test_bom_and_state);
  g_test_add_func ("/support/strict-json", test_strict_json);
  g_test_add_func ("/support/metrics-lookup", test_metrics_lookup);

  return g_test_run ();
}
