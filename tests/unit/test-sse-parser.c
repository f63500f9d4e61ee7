/* test-sse-parser.c: the library's event-stream reader, split anywhere
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Sources read upstream bytes as the network delivers them, so every input
 * here is fed whole, one byte at a time, and in two pieces split at every
 * offset, and must give the same frames each time.
 */
#include "config.h"

#include <string.h>

#include <symfonic.h>

typedef struct
{
  const char *event;
  /* NULL ends the list */
  const char *data;
  const char *id;
} ExpectedFrame;

typedef struct
{
  const char    *name;
  const char    *input;
  /* 0: strlen (input); for inputs with a NUL byte */
  gsize          length;
  ExpectedFrame  frames[6];
  /* the parser's state after the end */
  const char    *last_id;
  gint64         retry;
} Case;

#define NO_RETRY -1
#define ID_WITH_NUL "id: 5\ndata: a\n\nid: x\0y\ndata: b\n\n"

static const Case cases[] = {
  { "lf", "event: A\ndata: 1\n\n", 0,
    { { "A", "1", NULL } }, NULL, NO_RETRY },
  { "crlf", "event: A\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n", 0,
    { { "A", "1", NULL }, { "message", "2", NULL } }, NULL, NO_RETRY },
  /* a lone CR ends a line; a split between CR and LF must not make a
   * blank line out of the LF */
  { "cr", "event: A\rdata: 1\r\rdata: 2\r\r", 0,
    { { "A", "1", NULL }, { "message", "2", NULL } }, NULL, NO_RETRY },
  { "mixed-line-ends", "data: a\r\n\ndata: b\r\rdata: c\n\r\ndata: d\r\n\r", 0,
    { { "message", "a", NULL }, { "message", "b", NULL }, { "message", "c", NULL },
      { "message", "d", NULL } }, NULL, NO_RETRY },
  { "cr-then-lf-is-one-line-end", "data: a\r\ndata: b\r\n\r\n", 0,
    { { "message", "a\nb", NULL } }, NULL, NO_RETRY },
  { "comments", ": hello\r\ndata: x\n:\n: mid\rdata: y\n\n: bye\n", 0,
    { { "message", "x\ny", NULL } }, NULL, NO_RETRY },
  { "multi-line-data", "data: one\ndata: two\ndata:\ndata: four\n\n", 0,
    { { "message", "one\ntwo\n\nfour", NULL } }, NULL, NO_RETRY },
  { "data-without-colon", "data\n\ndata\ndata\n\ndata\ndata: x\n\n", 0,
    { { "message", "", NULL }, { "message", "\n", NULL }, { "message", "\nx", NULL } }, NULL, NO_RETRY },
  { "one-space-stripped", "event:  B\ndata:  two\ndata:none\ndata: \tt\n\n", 0,
    { { " B", " two\nnone\n\tt", NULL } }, NULL, NO_RETRY },
  { "field-with-space-before-colon-ignored", "data : x\nevent : y\ndata: z\n\n", 0,
    { { "message", "z", NULL } }, NULL, NO_RETRY },
  { "unknown-fields-ignored", "foo: bar\nDATA: no\ndata: ok\nEvent: no\n\n", 0,
    { { "message", "ok", NULL } }, NULL, NO_RETRY },
  { "id-remembered", "id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\nid\ndata: d\n\n", 0,
    { { "message", "a", "1" }, { "message", "b", "1" }, { "message", "c", "2" },
      { "message", "d", "" } }, "", NO_RETRY },
  { "id-set-by-frame-without-data", "id: 7\n\ndata: a\n\n", 0,
    { { "message", "a", "7" } }, "7", NO_RETRY },
  /* an id with a NUL byte is ignored */
  { "id-with-nul-ignored", ID_WITH_NUL, sizeof (ID_WITH_NUL) - 1,
    { { "message", "a", "5" }, { "message", "b", "5" } }, "5", NO_RETRY },
  { "retry-digits", "retry: 1500\ndata: a\n\n", 0,
    { { "message", "a", NULL } }, NULL, 1500 },
  { "retry-not-digits-ignored",
    "retry: 200\nretry: 15x\nretry: -5\nretry: +5\nretry:\nretry:  20\nretry: 1.5\n"
    "retry: 99999999999999999999999\ndata: a\n\n", 0,
    { { "message", "a", NULL } }, NULL, 200 },
  { "retry-alone-is-not-a-frame", "retry: 10\n\n", 0,
    { { NULL } }, NULL, 10 },
  { "event-reset-after-dispatch", "event: A\ndata: 1\n\ndata: 2\n\n", 0,
    { { "A", "1", NULL }, { "message", "2", NULL } }, NULL, NO_RETRY },
  { "event-reset-by-frame-without-data", "event: X\n\ndata: 3\n\n", 0,
    { { "message", "3", NULL } }, NULL, NO_RETRY },
  { "last-event-field-wins", "event: A\nevent: B\ndata: 1\n\n", 0,
    { { "B", "1", NULL } }, NULL, NO_RETRY },
  { "bom", "\xEF\xBB\xBF" "data: bom\n\n", 0,
    { { "message", "bom", NULL } }, NULL, NO_RETRY },
  { "bom-then-cr", "\xEF\xBB\xBF\rdata: x\r\r", 0,
    { { "message", "x", NULL } }, NULL, NO_RETRY },
  /* only at the very start: later it is part of a field name */
  { "second-bom-not-stripped", "\xEF\xBB\xBF" "data: a\n\n\xEF\xBB\xBF" "data: b\n\n", 0,
    { { "message", "a", NULL } }, NULL, NO_RETRY },
  { "partial-bom-is-text", "\xEF\xBB" "data: x\n\ndata: y\n\n", 0,
    { { "message", "y", NULL } }, NULL, NO_RETRY },
  { "missing-final-blank-line", "data: a\n\nevent: E\ndata: b", 0,
    { { "message", "a", NULL }, { "E", "b", NULL } }, NULL, NO_RETRY },
  { "missing-final-blank-line-after-lf", "data: a\ndata: b\n", 0,
    { { "message", "a\nb", NULL } }, NULL, NO_RETRY },
  { "missing-final-blank-line-after-cr", "event: E\r\ndata: z\r", 0,
    { { "E", "z", NULL } }, NULL, NO_RETRY },
  { "frames-without-data-not-dispatched", "event: A\n\nid: 3\n\n: c\n\nevent: B\nid: 4\n", 0,
    { { NULL } }, "4", NO_RETRY },
  { "empty", "", 0,
    { { NULL } }, NULL, NO_RETRY },
  { "utf8-data", "event: TextDeltaEvent\ndata: {\"text\":\"h\xC3\xA9llo \xE2\x82\xAC\"}\n\n", 0,
    { { "TextDeltaEvent", "{\"text\":\"h\xC3\xA9llo \xE2\x82\xAC\"}", NULL } }, NULL, NO_RETRY },
};

static gsize
case_length (const Case *c)
{
  return c->length > 0 ? c->length : strlen (c->input);
}

/* Appends every complete frame to @frames, taken the owning way or the
 * borrowing way (whose strings are copied before the next call). */
static void
take_frames (SymfonicSseParser *parser,
             gboolean           borrowed,
             GPtrArray         *frames)
{
  for (;;)
    {
      char *event, *data, *id;

      if (borrowed)
        {
          const char *e, *d, *i;
          gsize n;

          if (!symfonic_sse_parser_next_borrowed (parser, &e, &d, &n, &i))
            return;
          /* no case has a NUL in its data */
          g_assert_cmpuint (n, ==, strlen (d));
          event = g_strdup (e);
          data = g_strdup (d);
          id = g_strdup (i);
        }
      else if (!symfonic_sse_parser_next (parser, &event, &data, &id))
        return;

      g_ptr_array_add (frames, event);
      g_ptr_array_add (frames, data);
      g_ptr_array_add (frames, id);
    }
}

/* Feeds @input in the pieces that start at each offset of @cuts (sorted,
 * the first 0), then ends the stream; returns every frame in order. */
static GPtrArray *
parse_pieces (const char  *input,
              gsize        length,
              const gsize *cuts,
              guint        n_cuts,
              gboolean     borrowed,
              gsize        max_event_bytes,
              GError     **error,
              char       **last_id,
              gint64      *retry)
{
  g_autoptr(SymfonicSseParser) parser = symfonic_sse_parser_new (max_event_bytes);
  g_autoptr(GPtrArray) frames = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; i < n_cuts; i++)
    {
      gsize start = cuts[i];
      gsize end = i + 1 < n_cuts ? cuts[i + 1] : length;

      if (!symfonic_sse_parser_feed (parser, (const guint8 *) input + start, end - start, error))
        return NULL;
      take_frames (parser, borrowed, frames);
    }

  symfonic_sse_parser_end (parser);
  take_frames (parser, borrowed, frames);

  if (last_id != NULL)
    *last_id = g_strdup (symfonic_sse_parser_get_last_event_id (parser));
  if (retry != NULL)
    *retry = symfonic_sse_parser_get_retry (parser);

  return g_steal_pointer (&frames);
}

static void
check_frames (const Case  *c,
              const gsize *cuts,
              guint        n_cuts)
{
  guint n = 0;

  while (n < G_N_ELEMENTS (c->frames) && c->frames[n].data != NULL)
    n++;

  /* both ways of taking a frame give the same frames */
  for (guint borrowed = 0; borrowed <= 1; borrowed++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *last_id = NULL;
      g_autoptr(GPtrArray) frames = NULL;
      /* no case expects it: a parse that never set it fails below */
      gint64 retry = G_MININT64;

      frames = parse_pieces (c->input, case_length (c), cuts, n_cuts, borrowed, 0, &error, &last_id, &retry);
      g_assert_no_error (error);

      g_assert_cmpuint (frames->len, ==, 3 * n);
      for (guint i = 0; i < n; i++)
        {
          g_assert_cmpstr (g_ptr_array_index (frames, 3 * i), ==, c->frames[i].event);
          g_assert_cmpstr (g_ptr_array_index (frames, 3 * i + 1), ==, c->frames[i].data);
          g_assert_cmpstr (g_ptr_array_index (frames, 3 * i + 2), ==, c->frames[i].id);
        }
      g_assert_cmpstr (last_id, ==, c->last_id);
      g_assert_cmpint (retry, ==, c->retry);
    }
}

static void
test_sse_parser_splits (gconstpointer data)
{
  const Case *c = data;
  gsize length = case_length (c);
  g_autofree gsize *bytes = g_new (gsize, length + 1);
  GRand *rand = g_rand_new_with_seed (g_test_rand_int ());

  /* whole */
  {
    gsize cut = 0;

    check_frames (c, &cut, 1);
  }

  /* two pieces, split at every offset (including empty pieces) */
  for (gsize split = 0; split <= length; split++)
    {
      gsize cuts[2] = { 0, split };

      check_frames (c, cuts, 2);
    }

  /* one byte at a time */
  for (gsize i = 0; i < length; i++)
    bytes[i] = i;
  if (length > 0)
    check_frames (c, bytes, length);

  /* random pieces */
  for (guint round = 0; round < 50 && length > 1; round++)
    {
      guint n_cuts = 1;

      bytes[0] = 0;
      for (gsize i = 1; i < length; i++)
        {
          if (g_rand_boolean (rand))
            bytes[n_cuts++] = i;
        }
      check_frames (c, bytes, n_cuts);
    }

  g_rand_free (rand);
}

/* Frames are handed out as soon as their blank line arrives, not at the
 * end of the stream. */
static void
test_sse_parser_incremental (void)
{
  static const char *pieces[] = { "data: a\n", "\n", "event: E\r", "data: b\r", "\r", "data: c" };
  static const guint available[] = { 0, 1, 0, 0, 1, 0 };
  g_autoptr(SymfonicSseParser) parser = symfonic_sse_parser_new (0);
  g_autoptr(GError) error = NULL;
  g_autofree char *event = NULL;
  g_autofree char *data = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (pieces); i++)
    {
      guint n = 0;

      symfonic_sse_parser_feed (parser, (const guint8 *) pieces[i], strlen (pieces[i]), &error);
      g_assert_no_error (error);
      for (;;)
        {
          g_autofree char *e = NULL;

          if (!symfonic_sse_parser_next (parser, &e, NULL, NULL))
            break;
          n++;
        }
      g_assert_cmpuint (n, ==, available[i]);
    }

  /* the last frame, unterminated, comes at the end */
  symfonic_sse_parser_end (parser);
  g_assert_true (symfonic_sse_parser_next (parser, &event, &data, NULL));
  g_assert_cmpstr (event, ==, "message");
  g_assert_cmpstr (data, ==, "c");
  g_assert_false (symfonic_sse_parser_next (parser, NULL, NULL, NULL));

  /* ending twice is harmless */
  symfonic_sse_parser_end (parser);
  g_assert_false (symfonic_sse_parser_next (parser, NULL, NULL, NULL));
}

/* The borrowed data's length counts what strlen() would stop at: a NUL
 * an upstream put in a data line is the reader's to refuse, not to cut
 * the frame short at. */
static void
test_sse_parser_borrowed_length (void)
{
  static const char input[] = "data: a\0b\ndata: c\n\nevent: E\ndata: xyz\n\n";
  g_autoptr(SymfonicSseParser) parser = symfonic_sse_parser_new (0);
  g_autoptr(GError) error = NULL;
  const char *event;
  const char *data;
  gsize length;

  g_assert_true (symfonic_sse_parser_feed (parser, (const guint8 *) input, sizeof input - 1, &error));
  g_assert_no_error (error);

  g_assert_true (symfonic_sse_parser_next_borrowed (parser, &event, &data, &length, NULL));
  g_assert_cmpstr (event, ==, "message");
  g_assert_cmpuint (length, ==, 5);
  g_assert_cmpmem (data, length, "a\0b\nc", 5);

  g_assert_true (symfonic_sse_parser_next_borrowed (parser, &event, &data, &length, NULL));
  g_assert_cmpstr (event, ==, "E");
  g_assert_cmpuint (length, ==, 3);
  g_assert_cmpstr (data, ==, "xyz");

  g_assert_false (symfonic_sse_parser_next_borrowed (parser, &event, &data, &length, NULL));
}

static void
test_sse_parser_max_event_bytes (void)
{
  static const struct {
    const char *name;
    const char *input;
    gboolean    fits;
  } inputs[] = {
    /* the limit is 32 bytes */
    { "small", "event: TextDeltaEvent\ndata: {\"text\":\"hi\"}\n\n", TRUE },
    { "long-line", "data: 0123456789012345678901234567890123456789\n\n", FALSE },
    { "many-lines", "data: 0123456789\ndata: 0123456789\ndata: 0123456789\n\n", FALSE },
    { "unterminated", "data: 0123456789012345678901234567890123456789", FALSE },
    { "long-comment", ": 0123456789012345678901234567890123456789\ndata: x\n\n", FALSE },
    /* the limit is per event: many small events are fine */
    { "many-small-events", "data: 0123456789\n\ndata: 0123456789\n\ndata: 0123456789\n\n", TRUE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (inputs); i++)
    {
      gsize length = strlen (inputs[i].input);

      g_test_message ("input %s", inputs[i].name);
      for (gsize split = 0; split <= length; split++)
        {
          gsize cuts[2] = { 0, split };
          g_autoptr(GError) error = NULL;
          g_autoptr(GPtrArray) frames = parse_pieces (inputs[i].input, length, cuts, 2, FALSE, 32,
                                                      &error, NULL, NULL);

          if (inputs[i].fits)
            {
              g_assert_no_error (error);
              g_assert_nonnull (frames);
            }
          else
            {
              g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM);
              g_assert_null (frames);
            }
        }
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/sse-parser/splits/%s", cases[i].name);

      g_test_add_data_func (path, &cases[i], test_sse_parser_splits);
    }
  g_test_add_func ("/sse-parser/incremental", test_sse_parser_incremental);
  g_test_add_func ("/sse-parser/max-event-bytes", test_sse_parser_max_event_bytes);
  g_test_add_func ("/sse-parser/borrowed-length", test_sse_parser_borrowed_length);

  return g_test_run ();
}
