/* fuzz-chunked-body.c: a chunked request body and its trailer section, read
 * as a client connection reads them
 *
 * The input is a FuzzSplit: the bytes after a request head that said
 * `Transfer-Encoding: chunked`, cut into pieces as the network might. The
 * body is scanned piece by piece, then its trailer section gathered piece
 * by piece as the connection gathers it, and both must decide exactly what
 * they decide on the whole input in one piece: where the chunks end,
 * whether the framing broke, where the trailer section ends and whether it
 * is refused.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "fuzz-common.h"
#include "symfonic-request-framing-private.h"

/* What the connection makes of a trailer section it has @length bytes of:
 * its length once complete and the status it is refused with (0 if none),
 * or both 0 while it waits for more. */
static void
decide_trailers (const guint8 *data,
                 gsize         length,
                 gsize        *end,
                 guint        *status)
{
  const char *detail = NULL;

  *end = symfonic_request_trailers_end (data, length);
  if (*end == 0)
    *status = symfonic_request_trailers_incomplete_status (length, &detail);
  else
    {
      if (*end > length || data[*end - 1] != '\n')
        g_error ("A trailer section does not end in a line end");
      *status = symfonic_request_trailers_check (data, *end, &detail);
    }
  if (*status != 0 && detail == NULL)
    g_error ("A trailer section was refused without a detail");
}

static SymfonicBodyFraming
chunked (void)
{
  SymfonicBodyFraming framing = { .kind = SYMFONIC_BODY_CHUNKED };

  return framing;
}

static gboolean
finished (const SymfonicBodyFraming *framing)
{
  return framing->done || framing->trailers || framing->invalid;
}

int
LLVMFuzzerTestOneInput (const guint8 *data,
                        size_t        size)
{
  SymfonicBodyFraming whole = chunked ();
  SymfonicBodyFraming pieces = chunked ();
  g_autoptr(GByteArray) gathered = g_byte_array_new ();
  gsize whole_body;
  gsize whole_end = 0;
  guint whole_status = 0;
  gsize body = 0;
  gsize end = 0;
  guint status = 0;
  const guint8 *piece;
  gsize length;
  FuzzSplit split;

  fuzz_split_init (&split, data, size);
  whole_body = symfonic_body_framing_scan (&whole, split.payload, split.payload_size);
  if (whole_body > split.payload_size || (!finished (&whole) && whole_body != split.payload_size))
    g_error ("The scanner took more or fewer bytes than it was given");
  /* a chunked body ends at its trailer section, never before */
  if (whole.done)
    g_error ("The scanner ended a chunked body without its trailer section");
  if (whole.trailers)
    decide_trailers (split.payload + whole_body, split.payload_size - whole_body, &whole_end, &whole_status);

  while (fuzz_split_next (&split, &piece, &length))
    {
      gsize taken = 0;

      if (!finished (&pieces))
        {
          taken = symfonic_body_framing_scan (&pieces, piece, length);
          if (taken > length || (!finished (&pieces) && taken != length))
            g_error ("The scanner took more or fewer bytes than it was given");
          body += taken;
        }
      if (!pieces.trailers || end != 0 || status != 0)
        continue;

      /* the connection looks again each time more arrived */
      g_byte_array_append (gathered, piece + taken, length - taken);
      decide_trailers (gathered->data, gathered->len, &end, &status);
    }

  if (body != whole_body || pieces.trailers != whole.trailers || pieces.invalid != whole.invalid)
    g_error ("The body scanned in pieces ended elsewhere than in one piece");
  if (end != whole_end || status != whole_status)
    g_error ("The trailer section gathered in pieces was decided otherwise than in one piece");

  return 0;
}
