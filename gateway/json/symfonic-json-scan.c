/* symfonic-json-scan.c: reading a few members of a JSON object without a tree
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-json.h"
#include "symfonic-json-lexer-private.h"
#include "symfonic-json-scan-private.h"
#include "symfonic-string-private.h"

/* A provider sends hundreds of small frames per answer, nearly all of one
 * shape; building a json-glib tree for each costs more than everything
 * else the gateway does with them. A scan reads such a frame in one pass
 * into a few strings, and accepts only what symfonic_json_parse() accepts
 * too, giving the same strings it would: whatever it is not sure of (a
 * nested value it was not told about, an escaped member name, an exponent,
 * more members than it tracks) makes it give up, and the caller reads the
 * frame the general way, which also says what is wrong with a bad one.
 * Its tokens are the strict reader's own (symfonic-json-lexer-private.h):
 * the scan only walks the object differently, stopping at the members it
 * was told about, and through a memo, at the one string that changed
 * since the stream's last frame. */

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
  SymfonicJsonLexer lex;
  GString          *text;
  Slot              slots[SYMFONIC_JSON_SCAN_SLOTS];
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

/* A count's digits, into @out; numbers that are not such a count are
 * refused, for the caller to read the general way. */
static gboolean
read_count (Scan    *s,
            GString *out)
{
  SymfonicJsonToken token;
  gsize digits;

  if (!symfonic_json_lexer_read_scalar (&s->lex, NULL, &token) || token.kind != SYMFONIC_JSON_TOKEN_NUMBER ||
      token.shape != 0)
    return FALSE;
  digits = s->lex.pos - token.start;
  if (digits > SYMFONIC_JSON_SCAN_COUNT_DIGITS)
    return FALSE;
  symfonic_string_append_len (out, (const char *) s->lex.data + token.start, digits);

  return TRUE;
}

/* A value that is not an array or object, checked and forgotten. Only
 * numbers the strict reader takes for certain are taken: without an
 * exponent and of bounded length, so that they cannot overflow a double. */
static gboolean
skip_scalar (Scan *s)
{
  SymfonicJsonToken token;

  if (!symfonic_json_lexer_read_scalar (&s->lex, NULL, &token))
    return FALSE;

  return token.kind != SYMFONIC_JSON_TOKEN_NUMBER ||
         ((token.shape & SYMFONIC_JSON_NUMBER_EXPONENT) == 0 && s->lex.pos - token.start <= MAX_NUMBER_BYTES);
}

/* A member name as it is written, which is what it decodes to when it has
 * no escape: names with one are left to the general reader. */
static gboolean
read_name (Scan   *s,
           gsize  *start,
           gsize  *length)
{
  return symfonic_json_lexer_peek (&s->lex) == '"' && symfonic_json_lexer_read_plain_string (&s->lex, start, length);
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
  SymfonicJsonLexer *lex = &s->lex;

  if (!symfonic_json_lexer_open (lex))
    return FALSE;
  if (symfonic_json_lexer_close (lex, ']'))
    return TRUE;
  if (symfonic_json_lexer_peek (lex) != '{' || !read_object (s, members))
    return FALSE;

  return symfonic_json_lexer_close (lex, ']');
}

/* A member's value; a nested value of a member not described as one is
 * refused by skip_scalar(). */
static gboolean
read_member (Scan                         *s,
             const SymfonicJsonScanMember *member)
{
  SymfonicJsonScanKind kind = member != NULL ? member->kind : SYMFONIC_JSON_SCAN_REFUSE;
  guchar c = symfonic_json_lexer_peek (&s->lex);

  /* a count's null is no count; any other value that is not one is
   * refused, for the general reader to judge */
  if ((kind == SYMFONIC_JSON_SCAN_STRING && c == '"') ||
      (kind == SYMFONIC_JSON_SCAN_COUNT && c != 'n'))
    {
      Slot *slot = &s->slots[member->slot];

      slot->text = s->text->len;
      slot->start = s->lex.pos;
      if (!(kind == SYMFONIC_JSON_SCAN_STRING ? symfonic_json_lexer_read_string (&s->lex, s->text)
                                              : read_count (s, s->text)))
        return FALSE;
      slot->end = s->lex.pos;
      g_string_append_c (s->text, '\0');
      return TRUE;
    }
  if (kind == SYMFONIC_JSON_SCAN_OBJECT && c == '{')
    return read_object (s, member->members);
  if (kind == SYMFONIC_JSON_SCAN_FIRST && c == '[')
    return read_first (s, member->members);

  return skip_scalar (s);
}

/* The object at the lexer's pos (on its brace); a repeated name is
 * refused, as the strict reader refuses it. */
static gboolean
read_object (Scan                         *s,
             const SymfonicJsonScanMember *members)
{
  SymfonicJsonLexer *lex = &s->lex;
  gsize starts[MAX_MEMBERS];
  gsize lengths[MAX_MEMBERS];
  guint n = 0;

  if (!symfonic_json_lexer_open (lex))
    return FALSE;
  if (symfonic_json_lexer_close (lex, '}'))
    return TRUE;

  for (;;)
    {
      const SymfonicJsonScanMember *member;

      if (n == MAX_MEMBERS || !read_name (s, &starts[n], &lengths[n]))
        return FALSE;
      for (guint i = 0; i < n; i++)
        {
          if (lengths[i] == lengths[n] && memcmp (lex->data + starts[i], lex->data + starts[n], lengths[n]) == 0)
            return FALSE;
        }
      member = find_member (members, lex->data + starts[n], lengths[n]);
      if (member != NULL && member->kind == SYMFONIC_JSON_SCAN_REFUSE)
        return FALSE;
      n++;
      if (!symfonic_json_lexer_skip_char (lex, ':') || !read_member (s, member))
        return FALSE;
      if (symfonic_json_lexer_close (lex, '}'))
        return TRUE;
      if (!symfonic_json_lexer_skip_char (lex, ','))
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
       * old one did before the same rest: the lexer is given only them,
       * so that an escape cannot reach into the rest (its slots are not
       * used: they are not cleared either) */
      symfonic_json_lexer_init (&scan.lex, data, length - tail, SYMFONIC_JSON_MAX_DEPTH);
      scan.lex.pos = old->start;
      symfonic_string_clear (text);
      if (data[old->start] != '"' || !symfonic_json_lexer_read_string (&scan.lex, text) ||
          scan.lex.pos != length - tail)
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
              slot->start = slot->start - old->end + scan.lex.pos;
              slot->end = slot->end - old->end + scan.lex.pos;
            }
        }
      slots[i].text = 0;
      slots[i].end = scan.lex.pos;
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
      symfonic_json_lexer_init (&scan.lex, data, length, SYMFONIC_JSON_MAX_DEPTH);
      scan.text = text;
      for (guint i = 0; i < SYMFONIC_JSON_SCAN_SLOTS; i++)
        scan.slots[i].text = -1;
      symfonic_string_clear (text);
      if (symfonic_json_lexer_peek (&scan.lex) != '{' || !read_object (&scan, members) ||
          !symfonic_json_lexer_at_end (&scan.lex))
        return FALSE;
    }
  if (memo != NULL)
    remember (memo, members, data, length, text, scan.slots, changed);

  for (guint i = 0; i < SYMFONIC_JSON_SCAN_SLOTS; i++)
    slots[i] = scan.slots[i].text >= 0 ? text->str + scan.slots[i].text : NULL;

  return TRUE;
}
