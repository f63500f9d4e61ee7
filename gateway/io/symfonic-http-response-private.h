/* symfonic-http-response-private.h: an HTTP/1.1 response, parsed as it arrives
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define SYMFONIC_HTTP_MAX_HEADERS 100
/* a chunk-size line (with its extensions) or one trailer line */
#define SYMFONIC_HTTP_MAX_LINE_BYTES 1024

typedef enum {
  SYMFONIC_HTTP_FRAMING_NONE,
  SYMFONIC_HTTP_FRAMING_LENGTH,
  SYMFONIC_HTTP_FRAMING_CHUNKED,
  SYMFONIC_HTTP_FRAMING_CLOSE,
} SymfonicHttpFraming;

typedef enum {
  SYMFONIC_HTTP_CHUNK_SIZE,
  SYMFONIC_HTTP_CHUNK_DATA,
  SYMFONIC_HTTP_CHUNK_DATA_END,
  SYMFONIC_HTTP_CHUNK_TRAILER,
} SymfonicHttpChunkState;

typedef struct { guint name, value; } SymfonicHttpHeader;

/* Embedded in its request: zero it and set head to an empty GString.
 * The head and its table are let go with
 * symfonic_http_response_forget_head() once read: a held stream keeps only
 * what its body needs; the rest goes with symfonic_http_response_clear(). */
typedef struct
{
  GString                *head;
  gboolean                head_done;
  guint                   status;
  /* the connection may carry another request after this response */
  gboolean                keep_alive;
  guint                   n_headers;
  /* SYMFONIC_HTTP_MAX_HEADERS of them, made with the first head */
  SymfonicHttpHeader     *headers;

  SymfonicHttpFraming     framing;
  guint64                 remaining;
  SymfonicHttpChunkState  chunk;
  /* the start of a framing line that a read split, made for the first
   * such line: a line within one read is parsed where it lies */
  char                   *line;
  gsize                   line_length;
  gsize                   trailer_bytes;
} SymfonicHttpResponse;

G_GNUC_INTERNAL
gboolean    symfonic_http_response_read_head  (SymfonicHttpResponse  *resp,
                                               const guint8          *data,
                                               gsize                  length,
                                               gsize                 *used,
                                               GError               **error);
G_GNUC_INTERNAL
gboolean    symfonic_http_response_read_body  (SymfonicHttpResponse  *resp,
                                               guint8                *data,
                                               gsize                  length,
                                               gsize                 *in,
                                               gsize                 *out,
                                               gboolean              *complete,
                                               GError               **error);
G_GNUC_INTERNAL
const char *symfonic_http_response_get_header (SymfonicHttpResponse  *resp,
                                               const char            *name);
G_GNUC_INTERNAL
gboolean    symfonic_http_response_get_header_at (SymfonicHttpResponse *resp,
                                                  guint                 index,
                                                  const char          **name,
                                                  const char          **value);
G_GNUC_INTERNAL
void        symfonic_http_response_forget_head (SymfonicHttpResponse *resp);
G_GNUC_INTERNAL
void        symfonic_http_response_clear       (SymfonicHttpResponse *resp);

G_END_DECLS
