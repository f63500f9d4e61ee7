/* symfonic-sse-parser.h: reads a Server-Sent-Events stream
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <glib-object.h>

G_BEGIN_DECLS

#define SYMFONIC_TYPE_SSE_PARSER (symfonic_sse_parser_get_type ())

G_DECLARE_FINAL_TYPE (SymfonicSseParser, symfonic_sse_parser, SYMFONIC, SSE_PARSER, GObject)

SymfonicSseParser *symfonic_sse_parser_new               (gsize               max_event_bytes);
gboolean           symfonic_sse_parser_feed              (SymfonicSseParser  *self,
                                                          const guint8       *data,
                                                          gsize               length,
                                                          GError            **error);
void               symfonic_sse_parser_end               (SymfonicSseParser  *self);
gboolean           symfonic_sse_parser_next              (SymfonicSseParser  *self,
                                                          char              **event,
                                                          char              **data,
                                                          char              **id);
gboolean           symfonic_sse_parser_next_borrowed     (SymfonicSseParser  *self,
                                                          const char        **event,
                                                          const char        **data,
                                                          gsize              *data_length,
                                                          const char        **id);
const char        *symfonic_sse_parser_get_last_event_id (SymfonicSseParser  *self);
gint64             symfonic_sse_parser_get_retry         (SymfonicSseParser  *self);

G_END_DECLS
