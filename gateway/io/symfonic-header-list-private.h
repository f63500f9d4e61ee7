/* symfonic-header-list-private.h: a few HTTP headers, in order, by name
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A GPtrArray of name, value, name, value...: a response carries one or
 * two extra headers, so a table would cost more than it saves. */
G_GNUC_INTERNAL
GPtrArray   *symfonic_header_list_new   (void);
G_GNUC_INTERNAL
void         symfonic_header_list_set   (GPtrArray  *list,
                                         const char *name,
                                         const char *value);
G_GNUC_INTERNAL
const char  *symfonic_header_list_get   (GPtrArray  *list,
                                         const char *name);
G_GNUC_INTERNAL
char       **symfonic_header_list_names (GPtrArray  *list);

G_END_DECLS
