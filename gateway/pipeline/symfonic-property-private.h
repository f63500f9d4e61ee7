/* symfonic-property-private.h: setting a GObject property from configuration text
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

G_GNUC_INTERNAL
gboolean symfonic_property_parse (GParamSpec   *pspec,
                                  GKeyFile     *key_file,
                                  const char   *group,
                                  const char   *key,
                                  GFile        *base_dir,
                                  GValue       *value,
                                  GError      **error);
G_GNUC_INTERNAL
char    *symfonic_property_expand_path (const char   *text,
                                        GError      **error);
G_GNUC_INTERNAL
gboolean symfonic_property_check_file (GParamSpec    *pspec,
                                       const GValue  *value,
                                       GError       **error);

G_END_DECLS
