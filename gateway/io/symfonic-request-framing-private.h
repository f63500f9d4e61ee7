/* symfonic-request-framing-private.h: checking a request head and finding
 * where its body ends, on the raw bytes
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The longest request line and the largest head the gateway reads. */
#define SYMFONIC_REQUEST_LINE_LIMIT (8 * 1024)
#define SYMFONIC_REQUEST_HEAD_LIMIT (32 * 1024)

typedef enum
{
  SYMFONIC_BODY_NONE,
  SYMFONIC_BODY_LENGTH,
  SYMFONIC_BODY_CHUNKED,
} SymfonicBodyKind;

/* Where a request's body ends, followed byte by byte. */
typedef struct
{
  SymfonicBodyKind kind;
  guint            state;
  guint64          left;
  gboolean         done;
  /* a chunked body reached its trailer section, not yet read */
  gboolean         trailers;
  gboolean         invalid;
} SymfonicBodyFraming;

G_GNUC_INTERNAL
gboolean symfonic_http_is_token     (const char          *text,
                                      gsize                length);
G_GNUC_INTERNAL
gsize    symfonic_request_head_end   (const guint8        *data,
                                      gsize                length);
G_GNUC_INTERNAL
guint    symfonic_request_head_incomplete_status (const guint8 *data,
                                                  gsize         length,
                                                  const char  **detail);
G_GNUC_INTERNAL
guint    symfonic_request_head_check (const guint8        *head,
                                      gsize                length,
                                      SymfonicBodyFraming *framing,
                                      const char         **detail);
G_GNUC_INTERNAL
gsize    symfonic_body_framing_scan  (SymfonicBodyFraming *self,
                                      const guint8        *data,
                                      gsize                length);
G_GNUC_INTERNAL
gsize    symfonic_request_trailers_end (const guint8      *data,
                                        gsize              length);
G_GNUC_INTERNAL
guint    symfonic_request_trailers_incomplete_status (gsize         length,
                                                      const char  **detail);
G_GNUC_INTERNAL
guint    symfonic_request_trailers_check (const guint8    *trailers,
                                          gsize            length,
                                          const char     **detail);

G_END_DECLS
