/* fuzz-provider-frame.c: a provider's frame, read without a tree and as one
 *
 * The input is one frame's data, read as an OpenAI chunk and as an
 * Anthropic event both ways: whatever the scan takes must be exactly what
 * the tree gives, and valid JSON.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "fuzz-common.h"
#include "provider-frame-agree.h"

int
LLVMFuzzerTestOneInput (const guint8 *data,
                        size_t        size)
{
  provider_frame_openai_agrees ((const char *) data, size);
  provider_frame_anthropic_agrees ((const char *) data, size);

  return 0;
}
