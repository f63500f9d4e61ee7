/* symfonic-json-private.h: small JSON helpers for the hot path
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <json-glib/json-glib.h>

#include "symfonic-json.h"

G_BEGIN_DECLS

/* the longest decimal guint64 */
#define SYMFONIC_JSON_UINT_MAX 20

G_GNUC_INTERNAL
gsize symfonic_json_string_length (const char *str,
                                   gsize       len);
G_GNUC_INTERNAL
char *symfonic_json_write_string  (char       *dest,
                                   const char *str,
                                   gsize       len,
                                   gsize       length);
G_GNUC_INTERNAL
char *symfonic_json_write_uint    (char       *dest,
                                   guint64     value);
G_GNUC_INTERNAL
void symfonic_json_append_array  (GString    *out,
                                  JsonArray  *array,
                                  const char *absent);
G_GNUC_INTERNAL
void symfonic_json_append_members (GString    *out,
                                   JsonObject *object,
                                   gboolean    after_another);
G_GNUC_INTERNAL
void symfonic_json_append_int    (GString    *out,
                                  gint64      value);
G_GNUC_INTERNAL
void symfonic_json_append_double (GString    *out,
                                  double      value);

G_GNUC_INTERNAL
JsonNode *symfonic_json_node_deep_copy (JsonNode *node);

G_GNUC_INTERNAL
gboolean  symfonic_json_read_string_object (const char *data,
                                            gsize       length,
                                            const char *member,
                                            gsize       member_length,
                                            GString    *text);
G_GNUC_INTERNAL
gboolean  symfonic_json_read_string_int_object (const char *data,
                                                gsize       length,
                                                const char *string_member,
                                                const char *int_member,
                                                GString    *text,
                                                gint64     *value);

G_GNUC_INTERNAL
gboolean  symfonic_json_write_flat_object (const char         *data,
                                           gsize               length,
                                           const char * const *required,
                                           GString            *out);

G_END_DECLS
