/* symfonic-json.h: strict, depth-bounded JSON reading, and compact writing
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/**
 * SYMFONIC_JSON_MAX_DEPTH:
 *
 * The nesting limit of every JSON document the gateway reads from outside:
 * request bodies, upstream events, transcripts, tokens.
 */
#define SYMFONIC_JSON_MAX_DEPTH 64

JsonNode *symfonic_json_parse (const char  *data,
                               gsize        length,
                               guint        max_depth,
                               GError     **error);
char     *symfonic_json_write (JsonNode    *node,
                               gsize       *length);
void      symfonic_json_append_node   (GString    *out,
                                       JsonNode   *node);
void      symfonic_json_append_string (GString    *out,
                                       const char *str,
                                       gssize      len);

G_END_DECLS
