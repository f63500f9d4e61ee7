/* symfonic-upstream-config.h: settings every HTTP source checks alike
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

G_BEGIN_DECLS

GUri *symfonic_upstream_parse_url   (const char         *key,
                                     const char         *url,
                                     GError            **error);
char *symfonic_header_lines_parse   (const char         *key,
                                     const char * const *headers,
                                     const char * const *reserved,
                                     GError            **error);

G_END_DECLS
