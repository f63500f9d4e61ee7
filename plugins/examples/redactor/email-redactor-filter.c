/* email-redactor-filter.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "email-redactor-filter.h"

/* An address holds only the characters of ADDRESS_CHARS, so none spans a
 * character outside them: everything up to the last such character can be
 * redacted and released, and only the trailing run of address characters
 * is withheld, since the next piece may make it an address. The output is
 * thus the redaction of the whole text, whatever the splits, except that a
 * run longer than MAX_WITHHELD is redacted and released as it stands, so
 * that a stream without a space is not withheld without end.
 *
 * Only the answer is redacted: the thinking passes as it is. */

#define ADDRESS_PATTERN "[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)*\\.[A-Za-z]{2,}"
#define MAX_WITHHELD 512

struct _ExampleEmailRedactorFilter
{
  SymfonicTextFilter  parent_instance;

  GRegex             *regex;
  char               *replacement;
  /* the answer's trailing run of address characters */
  GString            *withheld;
};

G_DEFINE_FINAL_TYPE (ExampleEmailRedactorFilter, example_email_redactor_filter, SYMFONIC_TYPE_TEXT_FILTER)

static inline gboolean
is_address_char (char c)
{
  return g_ascii_isalnum (c) || strchr ("._%+-@", c) != NULL;
}

/* Appends @s, @len bytes of whole runs, to @out with every address
 * replaced. Most text holds no '@' and is copied as it is. */
static void
redact (ExampleEmailRedactorFilter *self,
        const char                 *s,
        gsize                       len,
        GString                    *out)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *redacted = NULL;

  if (memchr (s, '@', len) == NULL)
    {
      g_string_append_len (out, s, len);
      return;
    }

  redacted = g_regex_replace_literal (self->regex, s, len, 0, self->replacement, 0, &error);
  if (redacted == NULL)
    {
      /* the engine gave up (its backtracking limit): fail closed */
      g_debug ("Redacted a whole run of %" G_GSIZE_FORMAT " bytes: %s", len, error->message);
      g_string_append (out, self->replacement);
      return;
    }
  g_string_append (out, redacted);
}

static void
example_email_redactor_filter_filter (SymfonicTextFilter  *filter,
                                      SymfonicTextChannel  channel,
                                      const char          *text,
                                      gsize                length,
                                      GString             *out)
{
  ExampleEmailRedactorFilter *self = (ExampleEmailRedactorFilter *) filter;
  GString *withheld = self->withheld;
  gsize tail = length;

  if (channel != SYMFONIC_TEXT_CHANNEL_ANSWER)
    {
      g_string_append_len (out, text, length);
      return;
    }

  while (tail > 0 && is_address_char (text[tail - 1]))
    tail--;

  if (tail > 0)
    {
      /* text[tail - 1] ends every run before it, the withheld one too */
      gsize first = 0;

      while (is_address_char (text[first]))
        first++;
      g_string_append_len (withheld, text, first);
      redact (self, withheld->str, withheld->len, out);
      g_string_truncate (withheld, 0);
      redact (self, text + first, tail - first, out);
    }

  g_string_append_len (withheld, text + tail, length - tail);
  if (withheld->len > MAX_WITHHELD)
    {
      redact (self, withheld->str, withheld->len, out);
      g_string_truncate (withheld, 0);
    }
}

static void
example_email_redactor_filter_flush (SymfonicTextFilter  *filter,
                                     SymfonicTextChannel  channel,
                                     GString             *out)
{
  ExampleEmailRedactorFilter *self = (ExampleEmailRedactorFilter *) filter;

  if (channel != SYMFONIC_TEXT_CHANNEL_ANSWER)
    return;
  redact (self, self->withheld->str, self->withheld->len, out);
  g_string_truncate (self->withheld, 0);
}

/* Most pieces hold no address and do not end in the middle of a run that
 * the next piece could make one: they go on as they are, uncopied. */
static gboolean
example_email_redactor_filter_passes (SymfonicTextFilter  *filter,
                                      SymfonicTextChannel  channel,
                                      const char          *text,
                                      gsize                length)
{
  ExampleEmailRedactorFilter *self = (ExampleEmailRedactorFilter *) filter;

  if (channel != SYMFONIC_TEXT_CHANNEL_ANSWER)
    return TRUE;

  return self->withheld->len == 0 && !is_address_char (text[length - 1]) && memchr (text, '@', length) == NULL;
}

static void
example_email_redactor_filter_finalize (GObject *object)
{
  ExampleEmailRedactorFilter *self = EXAMPLE_EMAIL_REDACTOR_FILTER (object);

  g_clear_pointer (&self->regex, g_regex_unref);
  g_free (self->replacement);
  g_string_free (self->withheld, TRUE);

  G_OBJECT_CLASS (example_email_redactor_filter_parent_class)->finalize (object);
}

static void
example_email_redactor_filter_class_init (ExampleEmailRedactorFilterClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  SymfonicTextFilterClass *filter_class = SYMFONIC_TEXT_FILTER_CLASS (klass);

  object_class->finalize = example_email_redactor_filter_finalize;
  filter_class->filter = example_email_redactor_filter_filter;
  filter_class->flush = example_email_redactor_filter_flush;
  filter_class->passes = example_email_redactor_filter_passes;
}

static void
example_email_redactor_filter_init (ExampleEmailRedactorFilter *self)
{
  self->withheld = g_string_new (NULL);
}

/* The address pattern, compiled once by the stage and shared by its
 * streams' filters (a GRegex is immutable). RAW: it takes the bytes, and
 * its classes are ASCII, so it matches what Python's `re` does on the
 * decoded text. */
GRegex *
example_email_redactor_filter_new_regex (void)
{
  g_autoptr(GError) error = NULL;
  GRegex *regex = g_regex_new (ADDRESS_PATTERN, G_REGEX_RAW | G_REGEX_OPTIMIZE, 0, &error);

  g_assert_no_error (error);

  return regex;
}

ExampleEmailRedactorFilter *
example_email_redactor_filter_new (GRegex     *regex,
                                   const char *replacement)
{
  ExampleEmailRedactorFilter *self;

  g_return_val_if_fail (regex != NULL, NULL);
  g_return_val_if_fail (replacement != NULL, NULL);

  self = g_object_new (EXAMPLE_TYPE_EMAIL_REDACTOR_FILTER, NULL);
  self->regex = g_regex_ref (regex);
  self->replacement = g_strdup (replacement);

  return self;
}
