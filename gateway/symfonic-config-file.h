/* symfonic-config-file.h: reading a file a pipeline names
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <gio/gio.h>

G_BEGIN_DECLS

/**
 * SYMFONIC_CONFIG_FILE_MAX_SIZE:
 *
 * The size cap for files a pipeline names (16 MiB): far above any table,
 * key or transcript, far below what would hurt the process.
 */
#define SYMFONIC_CONFIG_FILE_MAX_SIZE (16 * 1024 * 1024)

gboolean symfonic_config_file_load (GFile   *file,
                                    gsize    max_size,
                                    char   **contents,
                                    gsize   *length,
                                    GError **error);

G_END_DECLS
