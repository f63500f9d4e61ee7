/* symfonic-paths-private.h: where plugins and data live, built or installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

G_GNUC_INTERNAL
gboolean    symfonic_paths_is_uninstalled       (void);
G_GNUC_INTERNAL
const char *symfonic_paths_plugin_dir           (void);
G_GNUC_INTERNAL
const char *symfonic_paths_data_dir             (void);
G_GNUC_INTERNAL
void        symfonic_paths_prepend_typelib_dir  (void);

G_END_DECLS
