/* fuzz-common.h: what the libFuzzer targets share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

G_BEGIN_DECLS

/* libFuzzer's entry points, declared here because no system header does;
 * fuzz-common.c defines the first for every target */
int LLVMFuzzerInitialize   (int           *argc,
                            char        ***argv);
int LLVMFuzzerTestOneInput (const guint8  *data,
                            size_t         size);

/* A streamed input: a split, then the payload. The first byte, modulo 16,
 * counts the split bytes that follow; each is the length of one piece less
 * one, and they are used in turn, cycling. With none, the payload comes in
 * one piece. So the fuzzer mutates where a stream is cut as freely as what
 * it carries. */
typedef struct
{
  const guint8 *lengths;
  gsize         n_lengths;
  const guint8 *payload;
  gsize         payload_size;
  gsize         offset;
  gsize         next_length;
} FuzzSplit;

void              fuzz_split_init        (FuzzSplit     *split,
                                          const guint8  *data,
                                          gsize          size);
gboolean          fuzz_split_next        (FuzzSplit     *split,
                                          const guint8 **piece,
                                          gsize         *length);

GFile            *fuzz_get_pipelines_dir (void);
GFile            *fuzz_write_file        (const char    *name,
                                          const guint8  *data,
                                          gsize          size);
SymfonicPipeline *fuzz_load_with_table   (const char    *stage_settings,
                                          const guint8  *data,
                                          gsize          size,
                                          GError       **error);

G_END_DECLS
