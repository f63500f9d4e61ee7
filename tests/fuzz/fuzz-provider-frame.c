/* fuzz-provider-frame.c: a provider's frames, read without a tree and as one
 *
 * The input is one frame's data, read as an OpenAI chunk and as an
 * Anthropic event both ways: whatever the scan takes must be exactly what
 * the tree gives, and valid JSON. An input with a newline is also two
 * frames of one stream, the second read through the memo of the first, as
 * a provider source reads them.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "fuzz-common.h"
#include "provider-frame-agree.h"

static void
read_as_stream (AgreeFunc     agrees,
                const char   *data,
                gsize         size)
{
  g_autoptr(SymfonicJsonScanMemo) memo = symfonic_json_scan_memo_new ();
  const char *newline = memchr (data, '\n', size);
  gsize first;

  agrees (NULL, data, size);
  if (newline == NULL)
    return;
  first = newline - data;
  agrees (memo, data, first);
  agrees (memo, newline + 1, size - first - 1);
}

int
LLVMFuzzerTestOneInput (const guint8 *data,
                        size_t        size)
{
  read_as_stream (provider_frame_openai_agrees, (const char *) data, size);
  read_as_stream (provider_frame_anthropic_agrees, (const char *) data, size);

  return 0;
}
