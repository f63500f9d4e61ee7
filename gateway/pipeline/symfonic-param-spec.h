/* symfonic-param-spec.h: properties a pipeline file sets in a special way
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <gio/gio.h>

G_BEGIN_DECLS

GParamSpec *symfonic_param_spec_folder    (const char  *name,
                                           const char  *nick,
                                           const char  *blurb,
                                           GParamFlags  flags);
gboolean    symfonic_param_spec_is_folder (GParamSpec  *pspec);

G_END_DECLS
