/* fuzz-table.c: a file a stage reads as a pipeline loads (the auth stage's
 * tokens file, the error-map stage's error table)
 *
 * The input is the file. FUZZ_TABLE_TYPE names the stage and
 * FUZZ_TABLE_KEY the property naming its file.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "fuzz-common.h"

int
LLVMFuzzerTestOneInput (const guint8 *data,
                        size_t        size)
{
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(GError) error = NULL;

  pipeline = fuzz_load_with_table ("type=" FUZZ_TABLE_TYPE "\n" FUZZ_TABLE_KEY "=table.ini", data, size, &error);
  g_assert ((pipeline == NULL) == (error != NULL));

  return 0;
}
