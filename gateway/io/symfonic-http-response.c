/* symfonic-http-response.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-http-response-private.h"
#include "symfonic-request-framing-private.h"

/* What an upstream answers, parsed byte by byte as reads bring it: every
 * byte is hostile, so the head, its header count, chunk-size lines and
 * trailers are bounded, numbers are checked for overflow, and nothing
 * recurses. Errors carry texts of this file only, for logs. */

#define MAX_HEAD_BYTES (32 * 1024)
#define MAX_TRAILER_BYTES (32 * 1024)

/* Digits only, no sign, no overflow. */
static gboolean
parse_decimal (const char *text,
               guint64    *value)
{
  guint64 result = 0;

  if (*text == '\0')
    return FALSE;
  for (; *text != '\0'; text++)
    {
      if (!g_ascii_isdigit (*text) || result > (G_MAXUINT64 - 9) / 10)
        return FALSE;
      result = result * 10 + (guint64) (*text - '0');
    }
  *value = result;

  return TRUE;
}

static gboolean
has_token (const char *list,
           const char *token)
{
  g_auto(GStrv) items = g_strsplit (list, ",", 16);

  for (guint i = 0; items[i] != NULL; i++)
    {
      if (g_ascii_strcasecmp (g_strstrip (items[i]), token) == 0)
        return TRUE;
    }

  return FALSE;
}

static const char *
header_at (SymfonicHttpResponse    *resp,
           guint                    i,
           const char             **value)
{
  *value = resp->head->str + resp->headers[i].value;
  return resp->head->str + resp->headers[i].name;
}

/* The body's framing and whether the connection outlives the response,
 * from the final head. */
static gboolean
decide_framing (SymfonicHttpResponse     *resp,
                GError                  **error)
{
  const char *length = NULL;
  guint n_encodings = 0;
  gboolean chunked = FALSE;

  for (guint i = 0; i < resp->n_headers; i++)
    {
      const char *value;
      const char *name = header_at (resp, i, &value);

      if (g_ascii_strcasecmp (name, "Connection") == 0 && has_token (value, "close"))
        resp->keep_alive = FALSE;
      else if (g_ascii_strcasecmp (name, "Transfer-Encoding") == 0)
        {
          n_encodings++;
          chunked = g_ascii_strcasecmp (value, "chunked") == 0;
        }
      else if (g_ascii_strcasecmp (name, "Content-Length") == 0)
        {
          if (length != NULL && strcmp (length, value) != 0)
            {
              g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "conflicting Content-Length");
              return FALSE;
            }
          length = value;
        }
    }

  if (resp->status == 204 || resp->status == 304)
    resp->framing = SYMFONIC_HTTP_FRAMING_NONE;
  else if (n_encodings > 0)
    {
      /* chunked alone: anything else would need a decoder, and a length
       * beside it is how requests get smuggled */
      if (n_encodings > 1 || !chunked || length != NULL)
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "unsupported Transfer-Encoding");
          return FALSE;
        }
      resp->framing = SYMFONIC_HTTP_FRAMING_CHUNKED;
      resp->chunk = SYMFONIC_HTTP_CHUNK_SIZE;
    }
  else if (length != NULL)
    {
      if (!parse_decimal (length, &resp->remaining))
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "invalid Content-Length");
          return FALSE;
        }
      resp->framing = resp->remaining > 0 ? SYMFONIC_HTTP_FRAMING_LENGTH : SYMFONIC_HTTP_FRAMING_NONE;
    }
  else
    {
      resp->framing = SYMFONIC_HTTP_FRAMING_CLOSE;
      resp->keep_alive = FALSE;
    }

  return TRUE;
}

/* Splits the head in resp->head in place into the status and headers. */
static gboolean
parse_head (SymfonicHttpResponse     *resp,
            GError                  **error)
{
  char *text = resp->head->str;
  char *line_end;
  char *line;

  if (memchr (text, '\0', resp->head->len) != NULL)
    goto invalid;

  line_end = strchr (text, '\n');
  *line_end = '\0';
  if (line_end > text && line_end[-1] == '\r')
    line_end[-1] = '\0';
  /* HTTP/1.x SP 3DIGIT [SP reason] */
  if (strncmp (text, "HTTP/1.", 7) != 0 || (text[7] != '0' && text[7] != '1') || text[8] != ' ' ||
      !g_ascii_isdigit (text[9]) || !g_ascii_isdigit (text[10]) || !g_ascii_isdigit (text[11]) ||
      (text[12] != ' ' && text[12] != '\0') || text[9] == '0')
    goto invalid;
  resp->status = (text[9] - '0') * 100 + (text[10] - '0') * 10 + (text[11] - '0');
  resp->keep_alive = text[7] == '1';
  resp->n_headers = 0;
  if (resp->headers == NULL)
    resp->headers = g_new (SymfonicHttpHeader, SYMFONIC_HTTP_MAX_HEADERS);

  for (line = line_end + 1; *line != '\0' && *line != '\r' && *line != '\n'; line = line_end + 1)
    {
      char *colon;
      char *value;
      char *end;

      line_end = strchr (line, '\n');
      *line_end = '\0';
      if (line_end > line && line_end[-1] == '\r')
        line_end[-1] = '\0';
      /* obsolete line folding: refused, as RFC 9112 allows */
      if (*line == ' ' || *line == '\t')
        goto invalid;
      colon = strchr (line, ':');
      if (colon == NULL || !symfonic_http_is_token (line, colon - line))
        goto invalid;
      if (resp->n_headers == SYMFONIC_HTTP_MAX_HEADERS)
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "too many headers");
          return FALSE;
        }
      *colon = '\0';
      for (value = colon + 1; *value == ' ' || *value == '\t'; value++)
        ;
      for (end = value + strlen (value); end > value && (end[-1] == ' ' || end[-1] == '\t'); end--)
        ;
      *end = '\0';
      resp->headers[resp->n_headers].name = line - text;
      resp->headers[resp->n_headers].value = value - text;
      resp->n_headers++;
    }
  /* the terminator found is the first empty line */
  if (*line == '\r' && line[1] != '\n')
    goto invalid;

  return TRUE;

invalid:
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "malformed response head");
  return FALSE;
}

/* The byte @back places before @data[@i], in @head when it is not in
 * @data, or 0 before the start. */
static guchar
byte_before (GString      *head,
             const guint8 *data,
             gsize         i,
             gsize         back)
{
  if (i >= back)
    return data[i - back];
  back -= i;

  return head->len >= back ? head->str[head->len - back] : 0;
}

/* How many of @data's @length bytes belong to the head that @head began:
 * up to its blank line (CRLF or bare LF), or 0 when it does not end in
 * them. */
static gsize
head_end (GString      *head,
          const guint8 *data,
          gsize         length)
{
  const guint8 *p = data;

  while ((p = memchr (p, '\n', data + length - p)) != NULL)
    {
      gsize i = p - data;
      guchar prev = byte_before (head, data, i, 1);

      if (prev == '\n' || (prev == '\r' && byte_before (head, data, i, 2) == '\n'))
        return i + 1;
      p++;
    }

  return 0;
}

/* Takes head bytes from @data until the head ends (interim 1xx heads are
 * skipped). Sets *@used to the bytes taken; head_done is set once the
 * final head is parsed. */
gboolean
symfonic_http_response_read_head (SymfonicHttpResponse     *resp,
                                  const guint8             *data,
                                  gsize                     length,
                                  gsize                    *used,
                                  GError                  **error)
{
  *used = 0;

  while (*used < length && !resp->head_done)
    {
      gsize before = resp->head->len;
      gsize take = MIN (length - *used, MAX_HEAD_BYTES + 1 - before);
      gsize end = head_end (resp->head, data + *used, take);

      /* only the head is copied: the body that came with it is not */
      g_string_append_len (resp->head, (const char *) data + *used, end != 0 ? end : take);
      if (end == 0)
        {
          *used += take;
          if (resp->head->len > MAX_HEAD_BYTES)
            {
              g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "response head too large");
              return FALSE;
            }
          continue;
        }

      *used += end;
      if (!parse_head (resp, error))
        return FALSE;

      if (resp->status == 101)
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "unrequested protocol switch");
          return FALSE;
        }
      if (resp->status < 200)
        {
          g_string_truncate (resp->head, 0);
          continue;
        }
      if (!decide_framing (resp, error))
        return FALSE;
      resp->head_done = TRUE;
    }

  return TRUE;
}

/* One line of the chunked framing, across reads. Returns TRUE, and once
 * the line ended sets *@line to it (stripped of its CRLF, valid until
 * @data or @resp changes) and *@line_length; else *@line is NULL. */
static gboolean
take_line (SymfonicHttpResponse     *resp,
           const guint8             *data,
           gsize                     length,
           gsize                    *in,
           const char              **line,
           gsize                    *line_length,
           GError                  **error)
{
  const char *start = (const char *) data + *in;
  const char *nl = memchr (start, '\n', length - *in);
  gsize n = nl != NULL ? (gsize) (nl - start) + 1 : length - *in;

  if (resp->line_length + n > SYMFONIC_HTTP_MAX_LINE_BYTES)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "chunk line too long");
      return FALSE;
    }
  *in += n;
  *line = NULL;
  if (nl != NULL && resp->line_length == 0)
    {
      *line = start;
      *line_length = n - 1;
    }
  else
    {
      if (resp->line == NULL)
        resp->line = g_malloc (SYMFONIC_HTTP_MAX_LINE_BYTES);
      memcpy (resp->line + resp->line_length, start, n);
      resp->line_length += n;
      if (nl == NULL)
        return TRUE;
      *line = resp->line;
      *line_length = resp->line_length - 1;
      resp->line_length = 0;
    }
  if (*line_length > 0 && (*line)[*line_length - 1] == '\r')
    (*line_length)--;

  return TRUE;
}

static gboolean
parse_chunk_size (const char  *line,
                  gsize        length,
                  guint64     *size)
{
  guint64 value = 0;
  gsize i = 0;

  for (; i < length && g_ascii_isxdigit (line[i]); i++)
    {
      if (value > (G_MAXUINT64 >> 4))
        return FALSE;
      value = (value << 4) | (guint64) g_ascii_xdigit_value (line[i]);
    }
  if (i == 0)
    return FALSE;
  for (; i < length && (line[i] == ' ' || line[i] == '\t'); i++)
    ;
  /* chunk extensions mean nothing here */
  if (i < length && line[i] != ';')
    return FALSE;
  *size = value;

  return TRUE;
}

static gboolean
chunk_line (SymfonicHttpResponse     *resp,
            const char               *line,
            gsize                     length,
            gboolean                 *complete,
            GError                  **error)
{
  switch (resp->chunk)
    {
    case SYMFONIC_HTTP_CHUNK_SIZE:
      if (!parse_chunk_size (line, length, &resp->remaining))
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "invalid chunk size");
          return FALSE;
        }
      resp->chunk = resp->remaining > 0 ? SYMFONIC_HTTP_CHUNK_DATA : SYMFONIC_HTTP_CHUNK_TRAILER;
      return TRUE;
    case SYMFONIC_HTTP_CHUNK_DATA_END:
      if (length != 0)
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "chunk longer than its size");
          return FALSE;
        }
      resp->chunk = SYMFONIC_HTTP_CHUNK_SIZE;
      return TRUE;
    case SYMFONIC_HTTP_CHUNK_TRAILER:
      resp->trailer_bytes += length;
      if (resp->trailer_bytes > MAX_TRAILER_BYTES)
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "trailer too large");
          return FALSE;
        }
      *complete = length == 0;
      return TRUE;
    case SYMFONIC_HTTP_CHUNK_DATA:
    default:
      g_assert_not_reached ();
    }
}

/* Body bytes of @data (from *@in) move down to @data + *@out, de-chunked,
 * so the whole read reaches the handler in one call; bytes already in
 * place stay. Sets *@complete when the body ended. */
gboolean
symfonic_http_response_read_body (SymfonicHttpResponse     *resp,
                                  guint8                   *data,
                                  gsize                     length,
                                  gsize                    *in,
                                  gsize                    *out,
                                  gboolean                 *complete,
                                  GError                  **error)
{
  while (*in < length && !*complete)
    {
      gsize n;

      if (resp->framing == SYMFONIC_HTTP_FRAMING_CHUNKED && resp->chunk != SYMFONIC_HTTP_CHUNK_DATA)
        {
          const char *line;
          gsize line_length;

          /* parsed before any body byte moves down over it */
          if (!take_line (resp, data, length, in, &line, &line_length, error))
            return FALSE;
          if (line != NULL && !chunk_line (resp, line, line_length, complete, error))
            return FALSE;
          continue;
        }

      n = length - *in;
      if (resp->framing != SYMFONIC_HTTP_FRAMING_CLOSE)
        n = MIN (n, resp->remaining);
      if (*out != *in)
        memmove (data + *out, data + *in, n);
      *in += n;
      *out += n;
      if (resp->framing == SYMFONIC_HTTP_FRAMING_CLOSE)
        continue;
      resp->remaining -= n;
      if (resp->remaining > 0)
        continue;
      if (resp->framing == SYMFONIC_HTTP_FRAMING_LENGTH)
        *complete = TRUE;
      else
        resp->chunk = SYMFONIC_HTTP_CHUNK_DATA_END;
    }

  return TRUE;
}

/* The first value of the header @name, in any case, once the head was
 * read; else NULL. */
const char *
symfonic_http_response_get_header (SymfonicHttpResponse *resp,
                                   const char           *name)
{
  if (!resp->head_done)
    return NULL;

  for (guint i = 0; i < resp->n_headers; i++)
    {
      const char *value;

      if (g_ascii_strcasecmp (header_at (resp, i, &value), name) == 0)
        return value;
    }

  return NULL;
}

/* The @index-th header of the head read, in the order it came, or FALSE
 * past the last. */
gboolean
symfonic_http_response_get_header_at (SymfonicHttpResponse  *resp,
                                      guint                  index,
                                      const char           **name,
                                      const char           **value)
{
  if (!resp->head_done || index >= resp->n_headers)
    return FALSE;
  *name = header_at (resp, index, value);

  return TRUE;
}

/* Lets go of the head and its table: symfonic_http_response_get_header()
 * finds nothing after this. Safe to call more than once. */
void
symfonic_http_response_forget_head (SymfonicHttpResponse *resp)
{
  resp->n_headers = 0;
  g_clear_pointer (&resp->headers, g_free);
  if (resp->head != NULL)
    g_string_free (g_steal_pointer (&resp->head), TRUE);
}

/* Lets go of all that @resp holds. */
void
symfonic_http_response_clear (SymfonicHttpResponse *resp)
{
  symfonic_http_response_forget_head (resp);
  g_clear_pointer (&resp->line, g_free);
}
