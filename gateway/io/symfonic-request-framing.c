/* symfonic-request-framing.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-request-framing-private.h"

/* Heads are checked here, strictly, before libsoup parses them: one
 * framing header, one value, nothing it could read otherwise, so that a
 * proxy in front and the gateway cannot disagree on where a request ends.
 * That is the gateway's own bound against request smuggling, whatever
 * libsoup does, so no version fences it; libsoup 3.2.3 also keeps the
 * path of a request whose framing it refuses, and lets Transfer-Encoding
 * win over Content-Length. */

enum
{
  CHUNK_SIZE_FIRST,
  CHUNK_SIZE,
  CHUNK_EXTENSION,
  CHUNK_SIZE_LF,
  CHUNK_DATA,
  CHUNK_DATA_CR,
  CHUNK_DATA_LF,
};

/* Chunk sizes past this are refused rather than overflowing the count. */
#define CHUNK_SIZE_MAX (G_GUINT64_CONSTANT (1) << 56)

/* The length of the head at the start of @data, blank line included, or 0
 * while it is incomplete. Bare LF line ends are accepted as libsoup does. */
gsize
symfonic_request_head_end (const guint8 *data,
                           gsize         length)
{
  for (gsize i = 0; i + 1 < length; i++)
    {
      if (data[i] != '\n')
        continue;
      if (data[i + 1] == '\n')
        return i + 2;
      if (data[i + 1] == '\r' && i + 2 < length && data[i + 2] == '\n')
        return i + 3;
    }

  return 0;
}

static gboolean
is_token_char (guint8 c)
{
  return g_ascii_isalnum (c) || (c != 0 && strchr ("!#$%&'*+-.^_`|~", c) != NULL);
}

/* An RFC 9110 token (a header name): one or more token characters. Shared
 * with the upstream's response parser. */
gboolean
symfonic_http_is_token (const char *text,
                        gsize       length)
{
  if (length == 0)
    return FALSE;

  for (gsize i = 0; i < length; i++)
    {
      if (!is_token_char (text[i]))
        return FALSE;
    }

  return TRUE;
}

static gboolean
has_nul_escape (const guint8 *target,
                gsize         length)
{
  for (gsize i = 0; i + 2 < length; i++)
    if (target[i] == '%' && target[i + 1] == '0' && target[i + 2] == '0')
      return TRUE;

  return FALSE;
}

static guint
refuse (guint        status,
        const char  *why,
        const char **detail)
{
  *detail = why;
  return status;
}

static gboolean
is_hex_escape (const guint8 *at,
               const guint8 *end)
{
  return end - at >= 3 && g_ascii_isxdigit (at[1]) && g_ascii_isxdigit (at[2]);
}

/* A Host value (or an absolute target's authority) GLib's URI parser
 * takes, as libsoup parses it: a name or address, an optional port. */
static gboolean
is_host (const guint8 *host,
         gsize         length)
{
  const guint8 *end = host + length;
  const guint8 *close = length > 0 && host[0] == '[' ? memchr (host, ']', length) : NULL;

  for (const guint8 *at = host; at < end; at++)
    {
      if (*at == '[' || *at == ']')
        {
          /* an IP literal: [...] at the start, then only a port */
          if (close == NULL || (at != host && at != close))
            return FALSE;
          continue;
        }
      if (*at == '%' && !is_hex_escape (at, end))
        return FALSE;
      if (!g_ascii_isalnum (*at) && strchr ("-._~!$&'()*+,;=:%", *at) == NULL)
        return FALSE;
    }

  return close == NULL || close + 1 == end || close[1] == ':';
}

/* A request target libsoup can turn into a URI: an absolute path, or an
 * absolute http(s) URI, with visible characters and whole %-escapes. */
static gboolean
is_target (const guint8 *target,
           gsize         length)
{
  const guint8 *end = target + length;
  const guint8 *path = target;

  if (length > strlen ("http://") && g_ascii_strncasecmp ((const char *) target, "http://", 7) == 0)
    path = target + 7;
  else if (length > strlen ("https://") && g_ascii_strncasecmp ((const char *) target, "https://", 8) == 0)
    path = target + 8;
  if (path != target)
    {
      const guint8 *authority = path;

      while (path < end && *path != '/' && *path != '?' && *path != '#')
        path++;
      if (path == authority || !is_host (authority, path - authority))
        return FALSE;
    }
  else if (length == 0 || target[0] != '/')
    return FALSE;

  for (const guint8 *at = path; at < end; at++)
    {
      if (*at <= ' ' || *at == 0x7f || (*at == '%' && !is_hex_escape (at, end)))
        return FALSE;
    }

  return TRUE;
}

/* Checks the HTTP version at @version, up to the line end at @eol, and
 * says whether it is HTTP/1.0. libsoup answers any other version itself,
 * with an empty body. */
static guint
check_version (const guint8  *version,
               const guint8  *eol,
               gboolean      *http10,
               const char   **detail)
{
  gsize length = eol - version;

  if (length > 0 && version[length - 1] == '\r')
    length--;
  if (length == strlen ("HTTP/1.1") && memcmp (version, "HTTP/1.", 7) == 0 &&
      (version[7] == '0' || version[7] == '1'))
    {
      *http10 = version[7] == '0';
      return 0;
    }

  /* a well-formed version the gateway does not speak */
  if (length > strlen ("HTTP/") && memcmp (version, "HTTP/", 5) == 0)
    {
      const guint8 *end = version + length;
      const guint8 *at = version + strlen ("HTTP/");
      gsize major_digits = 0;
      gsize minor_digits = 0;

      while (at < end && g_ascii_isdigit (*at))
        at++, major_digits++;
      if (at < end && *at == '.')
        for (at++; at < end && g_ascii_isdigit (*at); at++)
          minor_digits++;
      if (major_digits > 0 && minor_digits > 0 && at == end)
        return refuse (505, "The request's HTTP version is not supported", detail);
    }

  return refuse (400, "The request line is malformed", detail);
}

static gboolean
is_field (const guint8 *name,
          gsize         length,
          const char   *wanted)
{
  return length == strlen (wanted) && g_ascii_strncasecmp ((const char *) name, wanted, length) == 0;
}

/* Trims optional whitespace around a header value. */
static void
trim (const guint8 **value,
      gsize         *length)
{
  while (*length > 0 && ((*value)[0] == ' ' || (*value)[0] == '\t'))
    (*value)++, (*length)--;
  while (*length > 0 && ((*value)[*length - 1] == ' ' || (*value)[*length - 1] == '\t' ||
                         (*value)[*length - 1] == '\r'))
    (*length)--;
}

static gboolean
parse_length (const guint8 *value,
              gsize         length,
              guint64      *out)
{
  guint64 number = 0;

  /* 18 digits cannot overflow; no body is that large anyway */
  if (length == 0 || length > 18)
    return FALSE;

  for (gsize i = 0; i < length; i++)
    {
      if (!g_ascii_isdigit (value[i]))
        return FALSE;
      number = number * 10 + (value[i] - '0');
    }

  *out = number;
  return TRUE;
}

/* Checks one field line, @line up to its LF at @eol, of a head or of a
 * trailer section, and sets the length of its name. */
static guint
check_field_line (const guint8  *line,
                  const guint8  *eol,
                  gsize         *name_length,
                  const char   **detail)
{
  const guint8 *colon;

  if (line[0] == ' ' || line[0] == '\t')
    return refuse (400, "Folded header lines are not accepted", detail);

  colon = memchr (line, ':', eol - line);
  if (colon == NULL || colon == line)
    return refuse (400, "A header line is malformed", detail);
  *name_length = colon - line;
  if (!symfonic_http_is_token ((const char *) line, *name_length))
    return refuse (400, "A header name is malformed", detail);

  return 0;
}

static gboolean
is_blank_line (const guint8 *line,
               const guint8 *eol)
{
  return eol == line || (eol == line + 1 && line[0] == '\r');
}

/* The status a head still incomplete after @length bytes must get now, or
 * 0 while it may still be fine. */
guint
symfonic_request_head_incomplete_status (const guint8  *data,
                                         gsize          length,
                                         const char   **detail)
{
  if (length > SYMFONIC_REQUEST_LINE_LIMIT && memchr (data, '\n', SYMFONIC_REQUEST_LINE_LIMIT) == NULL)
    return refuse (414, "The request URL is too long", detail);
  if (length >= SYMFONIC_REQUEST_HEAD_LIMIT)
    return refuse (431, "The request headers are too large", detail);

  return 0;
}

/* Checks the complete head @head (from symfonic_request_head_end()) and
 * sets how its body is framed. Returns 0 when the head may go to libsoup,
 * or the status to refuse it with and a fixed @detail. */
guint
symfonic_request_head_check (const guint8        *head,
                             gsize                length,
                             SymfonicBodyFraming *framing,
                             const char         **detail)
{
  const guint8 *end = head + length;
  const guint8 *line = head;
  const guint8 *eol = memchr (head, '\n', length);
  const guint8 *target;
  const guint8 *target_end;
  gboolean have_length = FALSE;
  gboolean chunked = FALSE;
  gboolean http10 = FALSE;
  guint hosts = 0;
  guint64 content_length = 0;
  guint status;

  memset (framing, 0, sizeof *framing);

  if (memchr (head, '\0', length) != NULL)
    return refuse (400, "The request contains a NUL byte", detail);
  if (eol - head > SYMFONIC_REQUEST_LINE_LIMIT)
    return refuse (414, "The request URL is too long", detail);
  if (length > SYMFONIC_REQUEST_HEAD_LIMIT)
    return refuse (431, "The request headers are too large", detail);

  target = memchr (head, ' ', eol - head);
  target_end = target != NULL ? memchr (target + 1, ' ', eol - target - 1) : NULL;
  if (target == NULL || target_end == NULL || !symfonic_http_is_token ((const char *) head, target - head))
    return refuse (400, "The request line is malformed", detail);
  status = check_version (target_end + 1, eol, &http10, detail);
  if (status != 0)
    return status;
  if (has_nul_escape (target + 1, target_end - target - 1))
    return refuse (400, "The request path contains a NUL byte", detail);
  if (!is_target (target + 1, target_end - target - 1))
    return refuse (400, "The request target is malformed", detail);

  for (line = eol + 1; line < end; line = eol + 1)
    {
      const guint8 *value;
      gsize name_length;
      gsize value_length;

      eol = memchr (line, '\n', end - line);
      if (is_blank_line (line, eol))
        break;
      status = check_field_line (line, eol, &name_length, detail);
      if (status != 0)
        return status;

      value = line + name_length + 1;
      value_length = eol - value;
      trim (&value, &value_length);

      if (is_field (line, name_length, "Content-Length"))
        {
          guint64 number;

          if (!parse_length (value, value_length, &number) ||
              (have_length && number != content_length))
            return refuse (400, "The request's Content-Length is invalid", detail);
          have_length = TRUE;
          content_length = number;
        }
      else if (is_field (line, name_length, "Transfer-Encoding"))
        {
          if (chunked || value_length != strlen ("chunked") ||
              g_ascii_strncasecmp ((const char *) value, "chunked", value_length) != 0)
            return refuse (400, "Only one Transfer-Encoding, chunked, is accepted", detail);
          chunked = TRUE;
        }
      else if (is_field (line, name_length, "Host"))
        {
          if (++hosts > 1 || !is_host (value, value_length))
            return refuse (400, "The request's Host header is invalid", detail);
        }
      else if (is_field (line, name_length, "Expect"))
        {
          if (!is_field (value, value_length, "100-continue"))
            return refuse (417, "Only Expect: 100-continue is accepted", detail);
        }
    }

  if (hosts == 0 && !http10)
    return refuse (400, "The request has no Host header", detail);

  if (have_length && chunked)
    return refuse (400, "A request may not have both Content-Length and Transfer-Encoding", detail);

  if (chunked)
    framing->kind = SYMFONIC_BODY_CHUNKED;
  else if (content_length > 0)
    {
      framing->kind = SYMFONIC_BODY_LENGTH;
      framing->left = content_length;
    }
  else
    framing->done = TRUE;

  return 0;
}

/* After the last chunk's size line comes the trailer section, which the
 * scanner leaves to symfonic_request_trailers_end(). */
static void
end_size_line (SymfonicBodyFraming *self)
{
  if (self->left > 0)
    self->state = CHUNK_DATA;
  else
    self->trailers = TRUE;
}

static gboolean
chunk_step (SymfonicBodyFraming *self,
            guint8               c)
{
  switch (self->state)
    {
    case CHUNK_SIZE_FIRST:
    case CHUNK_SIZE:
      if (g_ascii_isxdigit (c))
        {
          if (self->left >= CHUNK_SIZE_MAX)
            return FALSE;
          self->left = self->left * 16 + g_ascii_xdigit_value (c);
          self->state = CHUNK_SIZE;
          return TRUE;
        }
      if (self->state == CHUNK_SIZE_FIRST)
        return FALSE;
      if (c == ';')
        self->state = CHUNK_EXTENSION;
      else if (c == '\r')
        self->state = CHUNK_SIZE_LF;
      else if (c == '\n')
        end_size_line (self);
      else
        return FALSE;
      return TRUE;

    case CHUNK_EXTENSION:
    case CHUNK_SIZE_LF:
      if (c == '\n')
        end_size_line (self);
      else if (self->state == CHUNK_SIZE_LF)
        return FALSE;
      return TRUE;

    case CHUNK_DATA_CR:
      if (c == '\r')
        {
          self->state = CHUNK_DATA_LF;
          return TRUE;
        }
      G_GNUC_FALLTHROUGH;
    case CHUNK_DATA_LF:
      if (c != '\n')
        return FALSE;
      self->state = CHUNK_SIZE_FIRST;
      return TRUE;

    default:
      g_assert_not_reached ();
    }
}

/* Follows @length more body bytes and returns how many of them belong to
 * the body: fewer when it ended (done), reached its trailer section
 * (trailers) or broke its framing (invalid) inside @data. */
gsize
symfonic_body_framing_scan (SymfonicBodyFraming *self,
                            const guint8        *data,
                            gsize                length)
{
  gsize i = 0;

  while (i < length && !self->done && !self->trailers && !self->invalid)
    {
      if (self->kind == SYMFONIC_BODY_LENGTH || self->state == CHUNK_DATA)
        {
          gsize n = MIN (self->left, length - i);

          i += n;
          self->left -= n;
          if (self->left == 0)
            {
              if (self->kind == SYMFONIC_BODY_LENGTH)
                self->done = TRUE;
              else
                self->state = CHUNK_DATA_CR;
            }
          continue;
        }

      if (!chunk_step (self, data[i]))
        self->invalid = TRUE;
      else
        i++;
    }

  return i;
}

/* The length of the trailer section at the start of @data, its final
 * blank line included, or 0 while it is incomplete. */
gsize
symfonic_request_trailers_end (const guint8 *data,
                               gsize         length)
{
  if (length > 0 && data[0] == '\n')
    return 1;
  if (length > 1 && data[0] == '\r' && data[1] == '\n')
    return 2;

  return symfonic_request_head_end (data, length);
}

/* The status a trailer section still incomplete after @length bytes must
 * get now, or 0 while it may still be fine. */
guint
symfonic_request_trailers_incomplete_status (gsize         length,
                                             const char  **detail)
{
  if (length >= SYMFONIC_REQUEST_HEAD_LIMIT)
    return refuse (431, "The request trailers are too large", detail);

  return 0;
}

/* Checks the complete trailer section @trailers (from
 * symfonic_request_trailers_end()) as a head's field lines are checked.
 * Returns 0 when it is well formed, or the status to refuse it with and a
 * fixed @detail. */
guint
symfonic_request_trailers_check (const guint8  *trailers,
                                 gsize          length,
                                 const char   **detail)
{
  const guint8 *end = trailers + length;
  const guint8 *eol;

  if (length > SYMFONIC_REQUEST_HEAD_LIMIT)
    return refuse (431, "The request trailers are too large", detail);
  if (memchr (trailers, '\0', length) != NULL)
    return refuse (400, "The request contains a NUL byte", detail);

  for (const guint8 *line = trailers; line < end; line = eol + 1)
    {
      gsize name_length;
      guint status;

      eol = memchr (line, '\n', end - line);
      if (is_blank_line (line, eol))
        break;
      status = check_field_line (line, eol, &name_length, detail);
      if (status != 0)
        return status;
    }

  return 0;
}
