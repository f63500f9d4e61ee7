/* symfonic-config-file.h: reading the configuration files a pipeline names
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

gboolean symfonic_config_file_load         (GFile   *file,
                                            gsize    max_size,
                                            char   **contents,
                                            gsize   *length,
                                            GError **error);
gboolean symfonic_config_file_check        (GFile   *file,
                                            gsize    max_size,
                                            GError **error);
gboolean symfonic_config_file_check_folder (GFile   *folder,
                                            GError **error);

/**
 * SymfonicConfigFileFlags:
 * @SYMFONIC_CONFIG_FILE_NONE: refuse a file with a line that is not part
 *   of a key file, or that repeats a group or a key
 * @SYMFONIC_CONFIG_FILE_COLLECT_ERRORS: record such lines as problems of
 *   the file and skip them, so that the reader can go on and list them
 *   with its own (see symfonic_config_file_check_errors())
 *
 * How symfonic_config_file_new_from_data_full() treats the lines it cannot
 * take.
 */
typedef enum /*< flags >*/
{
  SYMFONIC_CONFIG_FILE_NONE           = 0,
  SYMFONIC_CONFIG_FILE_COLLECT_ERRORS = 1 << 0,
} SymfonicConfigFileFlags;

#define SYMFONIC_TYPE_CONFIG_FILE (symfonic_config_file_get_type ())

G_DECLARE_FINAL_TYPE (SymfonicConfigFile, symfonic_config_file, SYMFONIC, CONFIG_FILE, GObject)

SymfonicConfigFile *symfonic_config_file_new_from_data     (const char          *data,
                                                            gssize               length,
                                                            const char          *name,
                                                            GError             **error);
SymfonicConfigFile *symfonic_config_file_new_for_file      (GFile               *file,
                                                            GError             **error);
SymfonicConfigFile *symfonic_config_file_new_from_data_full (const char              *data,
                                                             gssize                   length,
                                                             const char              *name,
                                                             SymfonicConfigFileFlags  flags,
                                                             GError                 **error);
SymfonicConfigFile *symfonic_config_file_new_for_file_full  (GFile                   *file,
                                                             SymfonicConfigFileFlags  flags,
                                                             GError                 **error);
const char         *symfonic_config_file_get_name          (SymfonicConfigFile  *self);
GKeyFile           *symfonic_config_file_get_key_file      (SymfonicConfigFile  *self);
guint               symfonic_config_file_get_line          (SymfonicConfigFile  *self,
                                                            const char          *group,
                                                            const char          *key);
gboolean            symfonic_config_file_check_keys        (SymfonicConfigFile  *self,
                                                            const char          *group,
                                                            const char * const  *known,
                                                            GError             **error);
gboolean            symfonic_config_file_set_error         (SymfonicConfigFile  *self,
                                                            GError             **error,
                                                            const char          *group,
                                                            const char          *key,
                                                            const char          *format,
                                                            ...) G_GNUC_PRINTF (5, 6);
gboolean            symfonic_config_file_set_error_literal (SymfonicConfigFile  *self,
                                                            const char          *group,
                                                            const char          *key,
                                                            const char          *message,
                                                            GError             **error);
gboolean            symfonic_config_file_add_error         (SymfonicConfigFile  *self,
                                                            const char          *group,
                                                            const char          *key,
                                                            const char          *format,
                                                            ...) G_GNUC_PRINTF (4, 5);
gboolean            symfonic_config_file_add_error_literal (SymfonicConfigFile  *self,
                                                            const char          *group,
                                                            const char          *key,
                                                            const char          *message);
guint               symfonic_config_file_get_n_errors      (SymfonicConfigFile  *self);
gboolean            symfonic_config_file_check_errors      (SymfonicConfigFile  *self,
                                                            GError             **error);

G_END_DECLS
