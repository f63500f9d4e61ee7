/* symfonic-json-scan.c: reading a few members of a JSON object without a tree
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-json-scan-private.h"
#include "symfonic-json-string-private.h"
#include "symfonic-string-private.h"

/* A provider sends hundreds of small frames per answer, nearly all of one
 * shape; building a json-glib tree for each costs more than everything
 * else the gateway does with them. A scan reads such a frame in one pass
 * into a few strings, and accepts only what symfonic_json_parse() accepts
 * too, giving the same strings it would: whatever it is not sure of (a
 * nested value it was not told about, an escaped member name, an exponent,
 * more members than it tracks) makes it give up, and the caller reads the
 * frame the general way, which also says what is wrong with a bad one. */

/* members per object whose names are compared for repeats */
#define MAX_MEMBERS 24
/* digits enough for any gint64 and far from where a double overflows */
#define MAX_NUMBER_BYTES 64

/* Where a slot's string is: its offset in the decoded text, and the
 * bytes of its literal, quotes included, in the input. */
typedef struct
{
  gssize text;
  gsize  start;
  gsize  end;
} Slot;

typedef struct
{
  const guchar *data;
  gsize         length;
  gsize         pos;
  GString      *text;
  Slot          slots[SYMFONIC_JSON_SCAN_SLOTS];
} Scan;

struct _SymfonicJsonScanMemo
{
  /* what the last frame taken was read with, and its bytes; NULL members
   * before the first */
  const SymfonicJsonScanMember *members;
  GString                      *input;
  /* its slots' strings, each NUL-terminated, at the slots' text offsets */
  GString                      *text;
  Slot                          slots[SYMFONIC_JSON_SCAN_SLOTS];
  /* the slots that hold a string, the one whose literal changed last
   * first: a stream's frames mostly differ in the same one each time */
  guint                         held[SYMFONIC_JSON_SCAN_SLOTS];
  guint                         n_held;
};

/* The next byte after whitespace, or 0 at the end. Providers write their
 * frames without whitespace: the next byte is usually the one. */
static inline guchar
peek (Scan *s)
{
  if (G_LIKELY (s->pos < s->length && s->data[s->pos] > ' '))
    return s->data[s->pos];

  while (s->pos < s->length)
    {
      guchar c = s->data[s->pos];

      if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
        return c;
      s->pos++;
    }

  return 0;
}

static gboolean
skip_char (Scan   *s,
           guchar  c)
{
  if (peek (s) != c)
    return FALSE;
  s->pos++;
  return TRUE;
}

static gboolean
read_hex4 (Scan     *s,
           gunichar *out)
{
  gunichar value = 0;

  if (s->length - s->pos < 6 || s->data[s->pos] != '\\' || s->data[s->pos + 1] != 'u')
    return FALSE;
  for (guint i = 2; i < 6; i++)
    {
      int digit = g_ascii_xdigit_value (s->data[s->pos + i]);

      if (digit < 0)
        return FALSE;
      value = value << 4 | digit;
    }
  s->pos += 6;
  *out = value;

  return TRUE;
}

/* A \u escape, a surrogate pair as one character; NUL and unpaired
 * surrogates are refused, as the strict reader refuses them. */
static gboolean
read_unicode_escape (Scan    *s,
                     GString *out)
{
  gunichar c;
  gunichar low;

  if (!read_hex4 (s, &c) || c == 0 || (c >= 0xDC00 && c <= 0xDFFF))
    return FALSE;
  if (c >= 0xD800 && c <= 0xDBFF)
    {
      if (!read_hex4 (s, &low) || low < 0xDC00 || low > 0xDFFF)
        return FALSE;
      c = 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00);
    }
  if (out != NULL)
    g_string_append_unichar (out, c);

  return TRUE;
}

static char
simple_escape (guchar c)
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

/* Steps over a run of plain bytes from s->pos; FALSE if it is not valid
 * UTF-8. */
static gboolean
skip_run (Scan *s)
{
  gsize start = s->pos;
  gboolean ascii;

  s->pos = symfonic_json_string_run (s->data, s->pos, s->length, &ascii);

  return ascii || g_utf8_validate_len ((const char *) s->data + start, s->pos - start, NULL);
}

/* Reads the string at s->pos (on its quote), appending it decoded to
 * @out, or only checking it when @out is NULL. */
static gboolean
read_string (Scan    *s,
             GString *out)
{
  s->pos++;
  for (;;)
    {
      gsize start = s->pos;
      guchar c;
      char escaped;

      /* '"', '\\' and control characters never split a UTF-8 sequence */
      if (!skip_run (s) || s->pos == s->length)
        return FALSE;
      c = s->data[s->pos];
      if (c < 0x20)
        return FALSE;
      if (out != NULL)
        symfonic_string_append_len (out, (const char *) s->data + start, s->pos - start);

      if (c == '"')
        {
          s->pos++;
          return TRUE;
        }
      if (s->pos + 1 < s->length && s->data[s->pos + 1] == 'u')
        {
          if (!read_unicode_escape (s, out))
            return FALSE;
          continue;
        }
      escaped = s->pos + 1 < s->length ? simple_escape (s->data[s->pos + 1]) : 0;
      if (escaped == 0)
        return FALSE;
      if (out != NULL)
        g_string_append_c (out, escaped);
      s->pos += 2;
    }
}

static gsize
skip_digits (Scan *s)
{
  gsize start = s->pos;

  while (s->pos < s->length && g_ascii_isdigit (s->data[s->pos]))
    s->pos++;

  return s->pos - start;
}

/* RFC 8259 numbers without an exponent and of bounded length: those the
 * strict reader takes for certain. */
static gboolean
skip_number (Scan *s)
{
  gsize start = s->pos;

  if (s->data[s->pos] == '-')
    s->pos++;
  if (s->pos < s->length && s->data[s->pos] == '0')
    s->pos++;
  else if (skip_digits (s) == 0)
    return FALSE;
  if (s->pos < s->length && s->data[s->pos] == '.')
    {
      s->pos++;
      if (skip_digits (s) == 0)
        return FALSE;
    }
  /* a digit after a leading zero is refused by the caller, which finds
   * no comma or bracket there */
  if (s->pos < s->length && (s->data[s->pos] == 'e' || s->data[s->pos] == 'E'))
    return FALSE;

  return s->pos - start <= MAX_NUMBER_BYTES;
}

static gboolean
skip_literal (Scan       *s,
              const char *word)
{
  gsize length = strlen (word);

  if (s->length - s->pos < length || memcmp (s->data + s->pos, word, length) != 0)
    return FALSE;
  s->pos += length;

  return TRUE;
}

/* A count's digits, into @out; numbers that are not such a count are
 * refused, for the caller to read the general way. */
static gboolean
read_count (Scan    *s,
            GString *out)
{
  gsize start = s->pos;
  gsize digits = skip_digits (s);

  if (digits == 0 || digits > SYMFONIC_JSON_SCAN_COUNT_DIGITS || (digits > 1 && s->data[start] == '0') ||
      (s->pos < s->length && (s->data[s->pos] == '.' || s->data[s->pos] == 'e' || s->data[s->pos] == 'E')))
    return FALSE;
  symfonic_string_append_len (out, (const char *) s->data + start, digits);

  return TRUE;
}

/* A value that is not an array or object, checked and forgotten. */
static gboolean
skip_scalar (Scan *s)
{
  switch (peek (s))
    {
    case '"':
      return read_string (s, NULL);
    case 't':
      return skip_literal (s, "true");
    case 'f':
      return skip_literal (s, "false");
    case 'n':
      return skip_literal (s, "null");
    case '-':
    case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
      return skip_number (s);
    default:
      return FALSE;
    }
}

/* A member name as it is written, which is what it decodes to when it has
 * no escape: names with one are left to the general reader. */
static gboolean
read_name (Scan   *s,
           gsize  *start,
           gsize  *length)
{
  if (peek (s) != '"')
    return FALSE;
  *start = ++s->pos;
  if (!skip_run (s) || s->pos == s->length || s->data[s->pos] != '"')
    return FALSE;
  *length = s->pos - *start;
  s->pos++;

  return TRUE;
}

static const SymfonicJsonScanMember *
find_member (const SymfonicJsonScanMember *members,
             const guchar                 *name,
             gsize                         length)
{
  /* the first letter tells most names apart before a comparison */
  for (; members->name != NULL; members++)
    {
      if (length > 0 && (guchar) members->name[0] == name[0] &&
          strncmp (members->name, (const char *) name, length) == 0 && members->name[length] == '\0')
        return members;
    }

  return NULL;
}

static gboolean read_object (Scan                         *s,
                             const SymfonicJsonScanMember *members);

static gboolean
read_first (Scan                         *s,
            const SymfonicJsonScanMember *members)
{
  s->pos++;
  if (skip_char (s, ']'))
    return TRUE;
  if (peek (s) != '{' || !read_object (s, members))
    return FALSE;

  return skip_char (s, ']');
}

/* A member's value; a nested value of a member not described as one is
 * refused by skip_scalar(). */
static gboolean
read_member (Scan                         *s,
             const SymfonicJsonScanMember *member)
{
  SymfonicJsonScanKind kind = member != NULL ? member->kind : SYMFONIC_JSON_SCAN_REFUSE;
  guchar c = peek (s);

  /* a count's null is no count; any other value that is not one is
   * refused, for the general reader to judge */
  if ((kind == SYMFONIC_JSON_SCAN_STRING && c == '"') ||
      (kind == SYMFONIC_JSON_SCAN_COUNT && c != 'n'))
    {
      Slot *slot = &s->slots[member->slot];

      slot->text = s->text->len;
      slot->start = s->pos;
      if (!(kind == SYMFONIC_JSON_SCAN_STRING ? read_string (s, s->text) : read_count (s, s->text)))
        return FALSE;
      slot->end = s->pos;
      g_string_append_c (s->text, '\0');
      return TRUE;
    }
  if (kind == SYMFONIC_JSON_SCAN_OBJECT && c == '{')
    return read_object (s, member->members);
  if (kind == SYMFONIC_JSON_SCAN_FIRST && c == '[')
    return read_first (s, member->members);

  return skip_scalar (s);
}

/* The object at s->pos (on its brace); a repeated name is refused, as the
 * strict reader refuses it. */
static gboolean
read_object (Scan                         *s,
             const SymfonicJsonScanMember *members)
{
  gsize starts[MAX_MEMBERS];
  gsize lengths[MAX_MEMBERS];
  guint n = 0;

  s->pos++;
  if (skip_char (s, '}'))
    return TRUE;

  for (;;)
    {
      const SymfonicJsonScanMember *member;

      if (n == MAX_MEMBERS || !read_name (s, &starts[n], &lengths[n]))
        return FALSE;
      for (guint i = 0; i < n; i++)
        {
          if (lengths[i] == lengths[n] && memcmp (s->data + starts[i], s->data + starts[n], lengths[n]) == 0)
            return FALSE;
        }
      member = find_member (members, s->data + starts[n], lengths[n]);
      if (member != NULL && member->kind == SYMFONIC_JSON_SCAN_REFUSE)
        return FALSE;
      n++;
      if (!skip_char (s, ':') || !read_member (s, member))
        return FALSE;
      if (skip_char (s, '}'))
        return TRUE;
      if (!skip_char (s, ','))
        return FALSE;
    }
}

SymfonicJsonScanMemo *
symfonic_json_scan_memo_new (void)
{
  SymfonicJsonScanMemo *memo = g_new0 (SymfonicJsonScanMemo, 1);

  memo->input = g_string_new (NULL);
  memo->text = g_string_new (NULL);
  return memo;
}

void
symfonic_json_scan_memo_free (SymfonicJsonScanMemo *memo)
{
  g_string_free (memo->input, TRUE);
  g_string_free (memo->text, TRUE);
  g_free (memo);
}

/* Appends a kept string with its NUL; returns where it starts. */
static gssize
keep_string (GString    *to,
             const char *string)
{
  gssize start = to->len;

  symfonic_string_append_len (to, string, strlen (string) + 1);
  return start;
}

/* Keeps @data and all that its scan decoded into @text, so that @slots'
 * offsets hold in the copy; @changed is the slot whose literal alone was
 * new, or SYMFONIC_JSON_SCAN_SLOTS after a scan in full. */
static void
remember (SymfonicJsonScanMemo         *memo,
          const SymfonicJsonScanMember *members,
          const char                   *data,
          gsize                         length,
          const GString                *text,
          const Slot                   *slots,
          guint                         changed)
{
  memo->members = members;
  symfonic_string_clear (memo->input);
  symfonic_string_append_len (memo->input, data, length);
  symfonic_string_clear (memo->text);
  symfonic_string_append_len (memo->text, text->str, text->len);
  memcpy (memo->slots, slots, sizeof memo->slots);

  /* the same slots hold strings as last time: only the order moves */
  if (changed < SYMFONIC_JSON_SCAN_SLOTS)
    {
      guint at = 0;

      while (memo->held[at] != changed)
        at++;
      for (; at > 0; at--)
        memo->held[at] = memo->held[at - 1];
      memo->held[0] = changed;
      return;
    }

  memo->n_held = 0;
  for (guint i = 0; i < SYMFONIC_JSON_SCAN_SLOTS; i++)
    {
      if (slots[i].text >= 0)
        memo->held[memo->n_held++] = i;
    }
}

/* @data read through the memo: when it is the last frame taken with only
 * the literal of one string slot replaced by another string literal, the
 * scan's every step outside that literal is the one it took then, so only
 * the new string is read. Fills @text and @slots as a scan would, and
 * returns TRUE; FALSE when @data must be scanned in full. */
static gboolean
scan_again (SymfonicJsonScanMemo         *memo,
            const SymfonicJsonScanMember *members,
            const char                   *data,
            gsize                         length,
            GString                      *text,
            Slot                         *slots,
            guint                        *changed)
{
  if (memo->members != members)
    return FALSE;

  for (guint k = 0; k < memo->n_held; k++)
    {
      guint i = memo->held[k];
      const Slot *old = &memo->slots[i];
      gsize tail = memo->input->len - old->end;
      Scan scan;

      if (length < old->start + 2 + tail ||
          memcmp (data + length - tail, memo->input->str + old->end, tail) != 0 ||
          memcmp (data, memo->input->str, old->start) != 0)
        continue;

      /* the bytes between must be one string literal, ending where the
       * old one did before the same rest (its slots are not used: they
       * are not cleared either) */
      scan.data = (const guchar *) data;
      scan.length = length - tail;
      scan.pos = old->start;
      scan.text = text;
      symfonic_string_clear (text);
      if (data[old->start] != '"' || !read_string (&scan, text) || scan.pos != length - tail)
        return FALSE;
      g_string_append_c (text, '\0');

      memcpy (slots, memo->slots, sizeof memo->slots);
      for (guint h = 0; h < memo->n_held; h++)
        {
          Slot *slot = &slots[memo->held[h]];

          if (h == k)
            continue;
          slot->text = keep_string (text, memo->text->str + slot->text);
          /* a literal after the new one moved with the rest */
          if (slot->start >= old->end)
            {
              slot->start = slot->start - old->end + scan.pos;
              slot->end = slot->end - old->end + scan.pos;
            }
        }
      slots[i].text = 0;
      slots[i].end = scan.pos;
      *changed = i;

      return TRUE;
    }

  return FALSE;
}

/**
 * symfonic_json_scan:
 * @data: (array length=length): the text
 * @length: its size in bytes
 * @members: what the object's members are, the others being scalars
 * @memo: (nullable): the stream's memo of the frame it scanned last, or
 *   %NULL to scan @data in full
 * @text: where the kept strings are decoded to; it is emptied first
 * @slots: (out caller-allocates): each slot's string, pointing into @text,
 *   or %NULL when its member is absent or not a string
 *
 * Reads @data as one JSON object whose members are described by @members.
 *
 * Returns: %TRUE when @data is such an object; %FALSE when it must be read
 *   with symfonic_json_parse(), which may find it valid or not
 */
gboolean
symfonic_json_scan (const char                   *data,
                    gsize                         length,
                    const SymfonicJsonScanMember *members,
                    SymfonicJsonScanMemo         *memo,
                    GString                      *text,
                    const char                   *slots[SYMFONIC_JSON_SCAN_SLOTS])
{
  /* its slots are filled by one of the two ways below: not cleared here,
   * which would cost every frame as much again */
  Scan scan;
  guint changed = SYMFONIC_JSON_SCAN_SLOTS;

  g_return_val_if_fail (data != NULL || length == 0, FALSE);
  g_return_val_if_fail (members != NULL, FALSE);

  if (memo == NULL || !scan_again (memo, members, data, length, text, scan.slots, &changed))
    {
      scan.data = (const guchar *) data;
      scan.length = length;
      scan.pos = 0;
      scan.text = text;
      for (guint i = 0; i < SYMFONIC_JSON_SCAN_SLOTS; i++)
        scan.slots[i].text = -1;
      symfonic_string_clear (text);
      if (peek (&scan) != '{' || !read_object (&scan, members) || peek (&scan) != 0 || scan.pos != length)
        return FALSE;
    }
  if (memo != NULL)
    remember (memo, members, data, length, text, scan.slots, changed);

  for (guint i = 0; i < SYMFONIC_JSON_SCAN_SLOTS; i++)
    slots[i] = scan.slots[i].text >= 0 ? text->str + scan.slots[i].text : NULL;

  return TRUE;
}
