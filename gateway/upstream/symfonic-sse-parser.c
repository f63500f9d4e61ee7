/* symfonic-sse-parser.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-error.h"
#include "symfonic-scratch-private.h"
#include "symfonic-sse-parser.h"
#include "symfonic-string-private.h"

/**
 * SymfonicSseParser:
 *
 * An incremental reader of the `text/event-stream` format, as the HTML
 * standard defines it: bytes may arrive split anywhere; lines end in LF,
 * CRLF or a lone CR; `:` lines are comments; `data:` lines of one event are
 * joined with newlines; `id:` and `retry:` are remembered; a blank line
 * dispatches the event. At the end of input an event whose last line
 * arrived but whose blank line did not is still dispatched: upstreams that
 * close right after their last frame are common.
 */
/* A complete event waiting to be taken: where its strings start in
 * frame_bytes, each NUL-terminated; no id is -1. */
typedef struct
{
  gsize   event;
  gsize   data;
  gssize  id;
} Frame;

/* Buffers that grew past this for one large event are given back once the
 * event is taken, so a long stream keeps only what its usual events need. */
#define KEPT_BYTES (16 * 1024)

struct _SymfonicSseParser
{
  GObject   parent_instance;

  gsize     max_event_bytes;
  GString  *line;
  gboolean  after_cr;
  guint     bom_matched;
  gboolean  started;
  gboolean  ended;

  /* the event being read: its data lines are joined where the frame's
   * data will lie, at the end of frame_bytes from data_start on */
  gsize     data_start;
  GString  *event;
  gboolean  has_event;
  gboolean  has_data;

  char     *last_event_id;
  gint64    retry;

  /* complete events, oldest first from frames[taken], their strings in
   * frame_bytes: both are reused once every event was taken, so reading
   * an event allocates nothing */
  Frame    *frames;
  guint     n_frames;
  guint     frames_size;
  guint     taken;
  GString  *frame_bytes;
};

/**
 * SymfonicSseParserClass:
 * @parent_class: the parent class
 *
 * The class of #SymfonicSseParser, a final type: there is nothing to override.
 */
G_DEFINE_FINAL_TYPE (SymfonicSseParser, symfonic_sse_parser, G_TYPE_OBJECT)

static void
symfonic_sse_parser_finalize (GObject *object)
{
  SymfonicSseParser *self = (SymfonicSseParser *) object;

  g_string_free (self->line, TRUE);
  g_string_free (self->event, TRUE);
  g_free (self->last_event_id);
  g_free (self->frames);
  symfonic_spare_buffer_give (self->frame_bytes);

  G_OBJECT_CLASS (symfonic_sse_parser_parent_class)->finalize (object);
}

static void
symfonic_sse_parser_class_init (SymfonicSseParserClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = symfonic_sse_parser_finalize;
}

static void
symfonic_sse_parser_init (SymfonicSseParser *self)
{
  self->line = g_string_new (NULL);
  self->event = g_string_new (NULL);
  self->retry = -1;
  self->frame_bytes = g_string_new (NULL);
}

/**
 * symfonic_sse_parser_new:
 * @max_event_bytes: the largest event accepted, 0 for no limit
 *
 * Creates a parser of a `text/event-stream` body, fed with
 * symfonic_sse_parser_feed().
 *
 * Returns: (transfer full): a new parser
 */
SymfonicSseParser *
symfonic_sse_parser_new (gsize max_event_bytes)
{
  SymfonicSseParser *self = g_object_new (SYMFONIC_TYPE_SSE_PARSER, NULL);

  self->max_event_bytes = max_event_bytes;
  return self;
}

static gsize
keep_string (SymfonicSseParser *self,
             const char        *text,
             gsize              length)
{
  gsize start = self->frame_bytes->len;

  symfonic_string_append_len (self->frame_bytes, text, length + 1);

  return start;
}

static void
shrink (GString **text)
{
  if ((*text)->allocated_len <= KEPT_BYTES)
    return;

  symfonic_spare_buffer_give (*text);
  *text = g_string_new (NULL);
}

static gsize
data_length (SymfonicSseParser *self)
{
  return self->has_data ? self->frame_bytes->len - self->data_start : 0;
}

/* Once every event was taken, the strings handed out last are no longer
 * needed: the buffers start over, with the data of the event being read
 * moved to the front. */
static void
forget_taken (SymfonicSseParser *self)
{
  gsize partial;

  if (self->taken == 0 || self->taken < self->n_frames)
    return;

  self->n_frames = 0;
  self->taken = 0;
  partial = data_length (self);
  if (partial > 0)
    memmove (self->frame_bytes->str, self->frame_bytes->str + self->data_start, partial);
  g_string_truncate (self->frame_bytes, partial);
  self->data_start = 0;
  if (partial == 0)
    shrink (&self->frame_bytes);
}

static void
dispatch (SymfonicSseParser *self)
{
  Frame frame;

  if (!self->has_data)
    {
      self->has_event = FALSE;
      return;
    }

  frame.data = self->data_start;
  /* the event right after the data's NUL: next_borrowed() counts on it */
  g_string_append_c (self->frame_bytes, '\0');
  frame.event = self->has_event ? keep_string (self, self->event->str, self->event->len)
                                : keep_string (self, "message", strlen ("message"));
  frame.id = self->last_event_id != NULL
             ? (gssize) keep_string (self, self->last_event_id, strlen (self->last_event_id))
             : -1;
  /* one per event: appended in place, grown only when full */
  if (self->n_frames == self->frames_size)
    {
      self->frames_size = MAX (8, self->frames_size * 2);
      self->frames = g_renew (Frame, self->frames, self->frames_size);
    }
  self->frames[self->n_frames++] = frame;

  symfonic_string_clear (self->event);
  shrink (&self->event);
  self->has_event = FALSE;
  self->has_data = FALSE;
}

static void
add_data (SymfonicSseParser *self,
          const char        *value,
          gsize              value_len)
{
  if (self->has_data)
    g_string_append_c (self->frame_bytes, '\n');
  else
    self->data_start = self->frame_bytes->len;
  symfonic_string_append_len (self->frame_bytes, value, value_len);
  self->has_data = TRUE;
}

static void
set_event (SymfonicSseParser *self,
           const char        *value,
           gsize              value_len)
{
  symfonic_string_clear (self->event);
  symfonic_string_append_len (self->event, value, value_len);
  self->has_event = TRUE;
}

/* The value after a field's colon, without the one space that may open it. */
static inline const char *
field_value (const char *colon,
             const char *line_end,
             gsize      *value_len)
{
  const char *value = colon + 1;

  if (value < line_end && *value == ' ')
    value++;
  *value_len = line_end - value;

  return value;
}

static void
process_line (SymfonicSseParser *self,
              const char        *line,
              gsize              length)
{
  const char *end = line + length;
  const char *colon;
  const char *value = "";
  gsize name_len;
  gsize value_len = 0;

  if (length == 0)
    {
      dispatch (self);
      return;
    }
  if (line[0] == ':')
    return;

  /* nearly every line is data or an event name: those two are told by
   * their first bytes, the rest by where their first colon is */
  if (length >= 5 && memcmp (line, "data:", 5) == 0)
    {
      value = field_value (line + 4, end, &value_len);
      add_data (self, value, value_len);
      return;
    }
  if (length >= 6 && memcmp (line, "event:", 6) == 0)
    {
      value = field_value (line + 5, end, &value_len);
      set_event (self, value, value_len);
      return;
    }

  colon = memchr (line, ':', length);
  name_len = colon != NULL ? (gsize) (colon - line) : length;
  if (colon != NULL)
    value = field_value (colon, end, &value_len);

  if (name_len == 4 && memcmp (line, "data", 4) == 0)
    add_data (self, value, value_len);
  else if (name_len == 5 && memcmp (line, "event", 5) == 0)
    set_event (self, value, value_len);
  else if (name_len == 2 && memcmp (line, "id", 2) == 0)
    {
      if (memchr (value, '\0', value_len) == NULL)
        {
          g_free (self->last_event_id);
          self->last_event_id = g_strndup (value, value_len);
        }
    }
  else if (name_len == 5 && memcmp (line, "retry", 5) == 0)
    {
      guint64 retry;
      g_autofree char *text = g_strndup (value, value_len);

      if (g_ascii_string_to_unsigned (text, 10, 0, G_MAXINT64, &retry, NULL) &&
          value_len > 0 && g_ascii_isdigit (text[0]))
        self->retry = retry;
    }
  /* any other field is ignored, as the standard says */
}

/* Where the line from @p ends: its LF or CR, or @end. Lines end in LF
 * far more often than in CR, and both searches run over whole words; a
 * read that holds no CR at all needs only the first. */
static const char *
find_line_end (const char *p,
               const char *end,
               gboolean    has_cr)
{
  const char *lf = memchr (p, '\n', end - p);
  const char *limit = lf != NULL ? lf : end;
  const char *cr = has_cr ? memchr (p, '\r', limit - p) : NULL;

  return cr != NULL ? cr : limit;
}

/**
 * symfonic_sse_parser_feed:
 * @self: a #SymfonicSseParser
 * @data: (array length=length) (element-type guint8): the next bytes
 * @length: how many
 * @error: return location for a #GError
 *
 * Reads the next bytes of the stream; complete events become available to
 * symfonic_sse_parser_next().
 *
 * Returns: %TRUE, or %FALSE with %SYMFONIC_ERROR_UPSTREAM if one event
 *   grows past the limit
 */
gboolean
symfonic_sse_parser_feed (SymfonicSseParser  *self,
                          const guint8       *data,
                          gsize               length,
                          GError            **error)
{
  const char *p = (const char *) data;
  const char *end = p + length;
  /* one search over the whole read, instead of one per line */
  gboolean has_cr = memchr (data, '\r', length) != NULL;

  g_return_val_if_fail (SYMFONIC_IS_SSE_PARSER (self), FALSE);
  g_return_val_if_fail (data != NULL || length == 0, FALSE);
  g_return_val_if_fail (!self->ended, FALSE);

  forget_taken (self);
  /* the events of a read keep about as many bytes as it has: room for
   * them at once, where appending would grow the buffer by doublings;
   * a new stream's first large read finds a spare one of the thread's */
  if (self->frame_bytes->len == 0 && length >= SYMFONIC_SPARE_BUFFER_MIN)
    symfonic_spare_buffer_take (&self->frame_bytes);
  symfonic_string_reserve (self->frame_bytes, length);

  /* a byte-order mark may open the stream, split like anything else */
  while (!self->started && p < end)
    {
      static const char bom[] = "\xEF\xBB\xBF";

      if (*p == bom[self->bom_matched])
        {
          p++;
          self->started = ++self->bom_matched == 3;
          continue;
        }
      /* not a mark after all: what matched so far is text of the line */
      g_string_append_len (self->line, bom, self->bom_matched);
      self->started = TRUE;
    }

  while (p < end)
    {
      const char *stop;

      if (self->after_cr)
        {
          self->after_cr = FALSE;
          if (*p == '\n')
            {
              p++;
              continue;
            }
        }

      stop = find_line_end (p, end, has_cr);
      if (self->max_event_bytes > 0 &&
          self->line->len + (gsize) (stop - p) + data_length (self) > self->max_event_bytes)
        {
          g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_UPSTREAM,
                       "An upstream event is larger than %" G_GSIZE_FORMAT " bytes", self->max_event_bytes);
          return FALSE;
        }

      if (stop == end)
        {
          g_string_append_len (self->line, p, stop - p);
          break;
        }

      self->after_cr = *stop == '\r';
      /* a line that arrived whole is read where it lies */
      if (self->line->len == 0)
        {
          process_line (self, p, stop - p);
        }
      else
        {
          g_string_append_len (self->line, p, stop - p);
          process_line (self, self->line->str, self->line->len);
          g_string_truncate (self->line, 0);
        }
      p = stop + 1;
    }

  return TRUE;
}

/**
 * symfonic_sse_parser_end:
 * @self: a #SymfonicSseParser
 *
 * The stream ended. An unterminated last line still counts, and an event
 * that has data but no closing blank line is dispatched.
 */
void
symfonic_sse_parser_end (SymfonicSseParser *self)
{
  g_return_if_fail (SYMFONIC_IS_SSE_PARSER (self));

  if (self->ended)
    return;

  self->ended = TRUE;
  forget_taken (self);
  if (!self->started)
    g_string_append_len (self->line, "\xEF\xBB\xBF", self->bom_matched);
  if (self->line->len > 0)
    {
      process_line (self, self->line->str, self->line->len);
      g_string_truncate (self->line, 0);
    }
  dispatch (self);
}

/**
 * symfonic_sse_parser_next:
 * @self: a #SymfonicSseParser
 * @event: (out) (optional) (transfer full): the event name, `message` when
 *   the event named none
 * @data: (out) (optional) (transfer full): the data lines, joined with `\n`
 * @id: (out) (optional) (transfer full) (nullable): the last event id seen
 *
 * Takes the oldest complete event.
 *
 * Returns: %TRUE if there was one
 */
gboolean
symfonic_sse_parser_next (SymfonicSseParser  *self,
                          char              **event,
                          char              **data,
                          char              **id)
{
  const char *borrowed_event;
  const char *borrowed_data;
  const char *borrowed_id;

  g_return_val_if_fail (SYMFONIC_IS_SSE_PARSER (self), FALSE);

  if (!symfonic_sse_parser_next_borrowed (self, &borrowed_event, &borrowed_data, NULL, &borrowed_id))
    return FALSE;

  if (event != NULL)
    *event = g_strdup (borrowed_event);
  if (data != NULL)
    *data = g_strdup (borrowed_data);
  if (id != NULL)
    *id = g_strdup (borrowed_id);

  return TRUE;
}

/**
 * symfonic_sse_parser_next_borrowed:
 * @self: a #SymfonicSseParser
 * @event: (out) (optional) (transfer none): the event name, `message` when
 *   the event named none
 * @data: (out) (optional) (transfer none): the data lines, joined with `\n`
 * @data_length: (out) (optional): the bytes of @data, a NUL it holds
 *   included, so that a reader need not measure it again
 * @id: (out) (optional) (transfer none) (nullable): the last event id seen
 *
 * Takes the oldest complete event, as symfonic_sse_parser_next() does,
 * without copying it: the strings belong to @self and stay valid until the
 * next call of any function on @self.
 *
 * Returns: %TRUE if there was one
 */
gboolean
symfonic_sse_parser_next_borrowed (SymfonicSseParser  *self,
                                   const char        **event,
                                   const char        **data,
                                   gsize              *data_length,
                                   const char        **id)
{
  const Frame *frame;
  const char *bytes;

  g_return_val_if_fail (SYMFONIC_IS_SSE_PARSER (self), FALSE);

  forget_taken (self);
  if (self->taken == self->n_frames)
    return FALSE;

  frame = &self->frames[self->taken];
  self->taken++;
  bytes = self->frame_bytes->str;
  if (event != NULL)
    *event = bytes + frame->event;
  if (data != NULL)
    *data = bytes + frame->data;
  /* the event name is kept right after the data and its NUL */
  if (data_length != NULL)
    *data_length = frame->event - 1 - frame->data;
  if (id != NULL)
    *id = frame->id >= 0 ? bytes + frame->id : NULL;

  return TRUE;
}

/**
 * symfonic_sse_parser_get_last_event_id:
 * @self: a #SymfonicSseParser
 *
 * Gets the last event id the stream set, what a client sends back in `Last-
 * Event-ID`.
 *
 * Returns: (nullable): the last `id:` the stream set
 */
const char *
symfonic_sse_parser_get_last_event_id (SymfonicSseParser *self)
{
  g_return_val_if_fail (SYMFONIC_IS_SSE_PARSER (self), NULL);

  return self->last_event_id;
}

/**
 * symfonic_sse_parser_get_retry:
 * @self: a #SymfonicSseParser
 *
 * Gets the reconnection time the stream last asked for.
 *
 * Returns: the last `retry:` in milliseconds, or -1 if none
 */
gint64
symfonic_sse_parser_get_retry (SymfonicSseParser *self)
{
  g_return_val_if_fail (SYMFONIC_IS_SSE_PARSER (self), -1);

  return self->retry;
}
