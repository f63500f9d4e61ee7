/* symfonic-json-lexer-private.h: the tokens of strict JSON
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <string.h>

#include <glib.h>

#include "symfonic-json-string-private.h"
#include "symfonic-string-private.h"

G_BEGIN_DECLS

/* The library reads JSON in two ways: the strict reader, which builds a
 * tree or reads a few shapes without one (symfonic-json.c), and the scan
 * that reads a few members of a provider's frame and remembers the last
 * (symfonic-json-scan.c). Each walks the grammar its own way, but both
 * take their tokens from here, so that what one accepts the other cannot
 * refuse: whitespace, the bracket that opens a container and the depth it
 * reaches, strings with their escapes, numbers and the three literals.
 *
 * Everything here is header-only and static, as each reader's own copy
 * was: the compiler inlines and specializes it into each reader's loop
 * (a scan that only checks a string passes no text to decode into). With
 * the run of a string called out of line, the openai route took 0.6 %
 * more instructions per request (tests/bench/instructions); as it is,
 * both routes are within 0.1 % of what the two copies cost. */

/* Why a token was refused: the strict reader words each for its caller, a
 * scan only gives up. */
typedef enum
{
  SYMFONIC_JSON_LEX_OK,
  SYMFONIC_JSON_LEX_EXPECTED_VALUE,
  SYMFONIC_JSON_LEX_END_WHERE_VALUE,
  SYMFONIC_JSON_LEX_END_IN_STRING,
  SYMFONIC_JSON_LEX_CONTROL_CHARACTER,
  SYMFONIC_JSON_LEX_INVALID_ESCAPE,
  SYMFONIC_JSON_LEX_NUL_CHARACTER,
  SYMFONIC_JSON_LEX_UNPAIRED_SURROGATE,
  SYMFONIC_JSON_LEX_INVALID_UTF8,
  SYMFONIC_JSON_LEX_LEADING_ZERO,
  SYMFONIC_JSON_LEX_INVALID_NUMBER,
  SYMFONIC_JSON_LEX_TOO_DEEP,
} SymfonicJsonLexError;

typedef struct
{
  const guchar         *data;
  gsize                 length;
  gsize                 pos;
  /* arrays and objects open around pos, and how many may be */
  guint                 depth;
  guint                 max_depth;
  /* what a function that returned FALSE refused, and at which byte: set
   * only then */
  SymfonicJsonLexError  error;
  gsize                 error_at;
} SymfonicJsonLexer;

typedef enum
{
  SYMFONIC_JSON_TOKEN_STRING,
  SYMFONIC_JSON_TOKEN_NUMBER,
  SYMFONIC_JSON_TOKEN_TRUE,
  SYMFONIC_JSON_TOKEN_FALSE,
  SYMFONIC_JSON_TOKEN_NULL,
} SymfonicJsonTokenKind;

/* What a number has besides digits: the readers that do not convert it
 * (a scan, a count) decide from this alone whether they can take it. */
typedef enum
{
  SYMFONIC_JSON_NUMBER_NEGATIVE = 1 << 0,
  SYMFONIC_JSON_NUMBER_FRACTION = 1 << 1,
  SYMFONIC_JSON_NUMBER_EXPONENT = 1 << 2,
} SymfonicJsonNumberShape;

/* A scalar token: it lies in the input from @start to the lexer's pos. */
typedef struct
{
  SymfonicJsonTokenKind kind;
  /* numbers: SymfonicJsonNumberShape */
  guint                 shape;
  gsize                 start;
} SymfonicJsonToken;

/* Reads @data from its start, with up to @max_depth containers open at
 * once. A lexer over the first @length bytes of a longer text never looks
 * past them. */
static inline void
symfonic_json_lexer_init (SymfonicJsonLexer *lex,
                          const char        *data,
                          gsize              length,
                          guint              max_depth)
{
  lex->data = (const guchar *) data;
  lex->length = length;
  lex->pos = 0;
  lex->depth = 0;
  lex->max_depth = max_depth;
}

static inline gboolean
symfonic_json_lexer_fail (SymfonicJsonLexer    *lex,
                          SymfonicJsonLexError  error,
                          gsize                 at)
{
  lex->error = error;
  lex->error_at = at;
  return FALSE;
}

G_GNUC_UNUSED static void
symfonic_json_lexer_skip_space (SymfonicJsonLexer *lex)
{
  while (lex->pos < lex->length)
    {
      guchar c = lex->data[lex->pos];

      if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
        break;
      lex->pos++;
    }
}

/* The next byte after whitespace, or 0 at the end: a raw NUL is never
 * valid there, so the callers need no separate end check. */
static inline guchar
symfonic_json_lexer_peek (SymfonicJsonLexer *lex)
{
  /* compact JSON, as upstreams and providers write it, has no whitespace
   * to skip: the next byte is usually the one */
  if (G_LIKELY (lex->pos < lex->length && lex->data[lex->pos] > ' '))
    return lex->data[lex->pos];
  symfonic_json_lexer_skip_space (lex);
  return lex->pos < lex->length ? lex->data[lex->pos] : 0;
}

/* Steps over @c if it is the next byte after whitespace. */
G_GNUC_UNUSED static gboolean
symfonic_json_lexer_skip_char (SymfonicJsonLexer *lex,
                               guchar             c)
{
  if (symfonic_json_lexer_peek (lex) != c)
    return FALSE;
  lex->pos++;
  return TRUE;
}

/* Whether only whitespace is left: one document and no other after it. */
G_GNUC_UNUSED static gboolean
symfonic_json_lexer_at_end (SymfonicJsonLexer *lex)
{
  symfonic_json_lexer_skip_space (lex);
  return lex->pos == lex->length;
}

/* Steps over the `[` or `{` at lex->pos, which the caller has peeked,
 * unless it would nest deeper than the bound: refused before anything
 * inside it is read, so that no reader recurses or builds past it. */
G_GNUC_UNUSED static gboolean
symfonic_json_lexer_open (SymfonicJsonLexer *lex)
{
  if (lex->depth == lex->max_depth)
    return symfonic_json_lexer_fail (lex, SYMFONIC_JSON_LEX_TOO_DEEP, lex->pos);
  lex->depth++;
  lex->pos++;
  return TRUE;
}

/* Steps over @c, the bracket that closes the innermost open container, if
 * it is next. */
G_GNUC_UNUSED static gboolean
symfonic_json_lexer_close (SymfonicJsonLexer *lex,
                           guchar             c)
{
  if (!symfonic_json_lexer_skip_char (lex, c))
    return FALSE;
  lex->depth--;
  return TRUE;
}

/* Steps over `"@name"` (of @length bytes) if it stands next, unescaped,
 * as upstreams write member names: compared where it lies, without
 * decoding it. FALSE says nothing about what stands there instead. */
G_GNUC_UNUSED static gboolean
symfonic_json_lexer_skip_name (SymfonicJsonLexer *lex,
                               const char        *name,
                               gsize              length)
{
  if (symfonic_json_lexer_peek (lex) != '"' || lex->length - lex->pos < length + 2 ||
      memcmp (lex->data + lex->pos + 1, name, length) != 0 || lex->data[lex->pos + 1 + length] != '"')
    return FALSE;
  lex->pos += length + 2;
  return TRUE;
}

/* Reads the four hex digits of a \u escape that starts at lex->pos. */
G_GNUC_UNUSED static gboolean
symfonic_json_lexer_read_hex4 (SymfonicJsonLexer *lex,
                               gunichar          *out)
{
  gunichar value = 0;

  if (lex->length - lex->pos < 6 || lex->data[lex->pos] != '\\' || lex->data[lex->pos + 1] != 'u')
    return FALSE;
  for (guint i = 2; i < 6; i++)
    {
      int digit = g_ascii_xdigit_value (lex->data[lex->pos + i]);

      if (digit < 0)
        return FALSE;
      value = value << 4 | digit;
    }
  *out = value;
  lex->pos += 6;
  return TRUE;
}

/* A \u escape, a surrogate pair as one character, appended to @out unless
 * it is NULL. NUL is refused: json-glib's strings end at it. */
G_GNUC_UNUSED static gboolean
symfonic_json_lexer_read_unicode_escape (SymfonicJsonLexer *lex,
                                         GString           *out)
{
  gsize start = lex->pos;
  gunichar c;
  gunichar low;

  if (!symfonic_json_lexer_read_hex4 (lex, &c))
    return symfonic_json_lexer_fail (lex, SYMFONIC_JSON_LEX_INVALID_ESCAPE, start);
  if (c == 0)
    return symfonic_json_lexer_fail (lex, SYMFONIC_JSON_LEX_NUL_CHARACTER, start);
  if (c >= 0xDC00 && c <= 0xDFFF)
    return symfonic_json_lexer_fail (lex, SYMFONIC_JSON_LEX_UNPAIRED_SURROGATE, start);
  if (c >= 0xD800 && c <= 0xDBFF)
    {
      if (!symfonic_json_lexer_read_hex4 (lex, &low) || low < 0xDC00 || low > 0xDFFF)
        return symfonic_json_lexer_fail (lex, SYMFONIC_JSON_LEX_UNPAIRED_SURROGATE, start);
      c = 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00);
    }
  if (out != NULL)
    g_string_append_unichar (out, c);
  return TRUE;
}

/* The character a short escape's letter stands for, or 0. */
static inline char
symfonic_json_lexer_short_escape (guchar c)
{
  switch (c)
    {
    case '"': return '"';
    case '\\': return '\\';
    case '/': return '/';
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    default: return 0;
    }
}

/* Most strings, a token of text or a name, end within this many bytes. */
#define SYMFONIC_JSON_LEXER_LEAD_BYTES 16

/* Whether @data[@start, @end) is valid UTF-8, which the lexer's error
 * says otherwise. Out of line: text past ASCII is the rarer case, and its
 * bookkeeping inlined cost every string a stack slot. */
G_GNUC_UNUSED static G_GNUC_NO_INLINE gboolean
symfonic_json_lexer_validate (SymfonicJsonLexer *lex,
                              gsize              start,
                              gsize              end)
{
  const char *text = (const char *) lex->data;
  const char *invalid;

  if (g_utf8_validate_len (text + start, end - start, &invalid))
    return TRUE;
  return symfonic_json_lexer_fail (lex, SYMFONIC_JSON_LEX_INVALID_UTF8, invalid - text);
}

typedef struct
{
  gsize    end;
  gboolean ascii;
} SymfonicJsonLexerRun;

/* The rest of a run past its lead, a word at a time. Out of line, and
 * returned by value: inlined, or through a pointer, its state cost every
 * short string two stores. */
G_GNUC_UNUSED static G_GNUC_NO_INLINE SymfonicJsonLexerRun
symfonic_json_lexer_long_run (const guchar *data,
                              gsize         pos,
                              gsize         length)
{
  guint64 high = 0;
  gboolean ascii;

  pos = symfonic_json_plain_words (data, pos, length, &high);
  pos = symfonic_json_string_run (data, pos, length, &ascii);

  return (SymfonicJsonLexerRun) { pos, ascii && (high & G_GUINT64_CONSTANT (0x8080808080808080)) == 0 };
}

/* Where the run of plain bytes from @start ends, as
 * symfonic_json_string_run() finds it: its first LEAD_BYTES a byte at a
 * time, and what goes on past them, such as a terminal's whole text, a
 * word at a time. FALSE, with the lexer's error, when the run is not
 * valid UTF-8. The callers keep the position in a register of their own:
 * the lexer's copy is reloaded after every store that may alias it. */
static inline gboolean
symfonic_json_lexer_run (SymfonicJsonLexer *lex,
                         const guchar      *data,
                         gsize              start,
                         gsize              length,
                         gsize             *end)
{
  /* @length is the size of an object in memory: far from overflowing */
  gsize lead = MIN (start + SYMFONIC_JSON_LEXER_LEAD_BYTES, length);
  gboolean ascii;
  gsize pos;

  pos = symfonic_json_string_run (data, start, lead, &ascii);
  if (pos == lead && pos < length)
    {
      SymfonicJsonLexerRun rest = symfonic_json_lexer_long_run (data, pos, length);

      pos = rest.end;
      ascii = ascii && rest.ascii;
    }
  *end = pos;

  return ascii || symfonic_json_lexer_validate (lex, start, pos);
}

/* Reads the string at lex->pos (on its quote), appending it decoded to
 * @out, or only checking it when @out is NULL. */
G_GNUC_UNUSED static gboolean
symfonic_json_lexer_read_string (SymfonicJsonLexer *lex,
                                 GString           *out)
{
  const guchar *data = lex->data;
  gsize length = lex->length;
  gsize pos = lex->pos + 1;

  for (;;)
    {
      gsize start = pos;
      guchar c;
      char escaped;

      /* '"', '\\' and control characters never split a UTF-8 sequence */
      if (!symfonic_json_lexer_run (lex, data, start, length, &pos))
        return FALSE;
      if (out != NULL)
        symfonic_string_append_len (out, (const char *) data + start, pos - start);

      if (pos == length)
        return symfonic_json_lexer_fail (lex, SYMFONIC_JSON_LEX_END_IN_STRING, pos);
      c = data[pos];
      if (c == '"')
        {
          lex->pos = pos + 1;
          return TRUE;
        }
      if (c < 0x20)
        return symfonic_json_lexer_fail (lex, SYMFONIC_JSON_LEX_CONTROL_CHARACTER, pos);

      /* a backslash, and what follows it within the input */
      c = pos + 1 < length ? data[pos + 1] : 0;
      if (c == 'u')
        {
          lex->pos = pos;
          if (!symfonic_json_lexer_read_unicode_escape (lex, out))
            return FALSE;
          pos = lex->pos;
          continue;
        }
      escaped = symfonic_json_lexer_short_escape (c);
      if (escaped == 0)
        return symfonic_json_lexer_fail (lex, SYMFONIC_JSON_LEX_INVALID_ESCAPE, pos);
      if (out != NULL)
        g_string_append_c (out, escaped);
      pos += 2;
    }
}

/* Reads the string at lex->pos (on its quote) when it has no escape, and
 * tells where its text lies in the input, which is what it decodes to: a
 * member name, as providers write them, compared without a copy. FALSE
 * where it is not such a string, valid or not. */
G_GNUC_UNUSED static gboolean
symfonic_json_lexer_read_plain_string (SymfonicJsonLexer *lex,
                                       gsize             *start,
                                       gsize             *length)
{
  gsize end;

  *start = lex->pos + 1;
  if (!symfonic_json_lexer_run (lex, lex->data, *start, lex->length, &end) || end == lex->length ||
      lex->data[end] != '"')
    return FALSE;
  *length = end - *start;
  lex->pos = end + 1;
  return TRUE;
}

G_GNUC_UNUSED static gsize
symfonic_json_lexer_skip_digits (SymfonicJsonLexer *lex)
{
  gsize start = lex->pos;

  while (lex->pos < lex->length && g_ascii_isdigit (lex->data[lex->pos]))
    lex->pos++;
  return lex->pos - start;
}

/* Steps over the number at lex->pos (RFC 8259 §6), telling in @shape what
 * it has besides its digits. */
G_GNUC_UNUSED static gboolean
symfonic_json_lexer_read_number (SymfonicJsonLexer *lex,
                                 guint             *shape)
{
  *shape = 0;
  if (lex->data[lex->pos] == '-')
    {
      *shape |= SYMFONIC_JSON_NUMBER_NEGATIVE;
      lex->pos++;
    }
  if (lex->pos < lex->length && lex->data[lex->pos] == '0')
    {
      lex->pos++;
      if (lex->pos < lex->length && g_ascii_isdigit (lex->data[lex->pos]))
        return symfonic_json_lexer_fail (lex, SYMFONIC_JSON_LEX_LEADING_ZERO, lex->pos);
    }
  else if (symfonic_json_lexer_skip_digits (lex) == 0)
    {
      return symfonic_json_lexer_fail (lex, SYMFONIC_JSON_LEX_INVALID_NUMBER, lex->pos);
    }

  if (lex->pos < lex->length && lex->data[lex->pos] == '.')
    {
      *shape |= SYMFONIC_JSON_NUMBER_FRACTION;
      lex->pos++;
      if (symfonic_json_lexer_skip_digits (lex) == 0)
        return symfonic_json_lexer_fail (lex, SYMFONIC_JSON_LEX_INVALID_NUMBER, lex->pos);
    }
  if (lex->pos < lex->length && (lex->data[lex->pos] == 'e' || lex->data[lex->pos] == 'E'))
    {
      *shape |= SYMFONIC_JSON_NUMBER_EXPONENT;
      lex->pos++;
      if (lex->pos < lex->length && (lex->data[lex->pos] == '+' || lex->data[lex->pos] == '-'))
        lex->pos++;
      if (symfonic_json_lexer_skip_digits (lex) == 0)
        return symfonic_json_lexer_fail (lex, SYMFONIC_JSON_LEX_INVALID_NUMBER, lex->pos);
    }

  return TRUE;
}

G_GNUC_UNUSED static gboolean
symfonic_json_lexer_read_literal (SymfonicJsonLexer *lex,
                                  const char        *word,
                                  gsize              length)
{
  if (lex->length - lex->pos < length || memcmp (lex->data + lex->pos, word, length) != 0)
    return symfonic_json_lexer_fail (lex, SYMFONIC_JSON_LEX_EXPECTED_VALUE, lex->pos);
  lex->pos += length;
  return TRUE;
}

/* One value that is not an array or an object, after whitespace, into
 * @token; a string is decoded into @out, or only checked when @out is
 * NULL. An array or object is refused as no value: each reader opens
 * those itself. */
G_GNUC_UNUSED static gboolean
symfonic_json_lexer_read_scalar (SymfonicJsonLexer *lex,
                                 GString           *out,
                                 SymfonicJsonToken *token)
{
  guchar c = symfonic_json_lexer_peek (lex);

  token->start = lex->pos;
  switch (c)
    {
    case '"':
      token->kind = SYMFONIC_JSON_TOKEN_STRING;
      return symfonic_json_lexer_read_string (lex, out);
    case 't':
      token->kind = SYMFONIC_JSON_TOKEN_TRUE;
      return symfonic_json_lexer_read_literal (lex, "true", 4);
    case 'f':
      token->kind = SYMFONIC_JSON_TOKEN_FALSE;
      return symfonic_json_lexer_read_literal (lex, "false", 5);
    case 'n':
      token->kind = SYMFONIC_JSON_TOKEN_NULL;
      return symfonic_json_lexer_read_literal (lex, "null", 4);
    case '-':
    case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
      token->kind = SYMFONIC_JSON_TOKEN_NUMBER;
      return symfonic_json_lexer_read_number (lex, &token->shape);
    default:
      return symfonic_json_lexer_fail (lex, lex->pos == lex->length ? SYMFONIC_JSON_LEX_END_WHERE_VALUE
                                                                      : SYMFONIC_JSON_LEX_EXPECTED_VALUE,
                                       lex->pos);
    }
}

G_END_DECLS
