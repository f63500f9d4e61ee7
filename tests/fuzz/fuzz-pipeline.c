/* fuzz-pipeline.c: the pipeline loader, from a file
 *
 * The input is a pipeline file. It is written beside the demo tokens, the
 * error table and the transcripts, so paths such as the default pipeline's
 * reach real files and the stages they configure load them too.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "fuzz-common.h"

int
LLVMFuzzerTestOneInput (const guint8 *data,
                        size_t        size)
{
  g_autoptr(GFile) file = fuzz_write_file ("fuzz.pipeline", data, size);
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(GError) error = NULL;

  pipeline = symfonic_pipeline_new_from_file (symfonic_registry_get_default (), file, &error);
  g_assert ((pipeline == NULL) == (error != NULL));

  return 0;
}
