/* symfonic-config-file-private.h: what the pipeline loader adds to a file's list of problems
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-config-file.h"

G_BEGIN_DECLS

G_GNUC_INTERNAL
void symfonic_config_file_add_error_with_lines (SymfonicConfigFile  *self,
                                                const char          *group,
                                                const char          *key,
                                                const char          *message,
                                                const char * const  *below);

G_END_DECLS
