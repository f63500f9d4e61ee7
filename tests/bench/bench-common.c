/* bench-common.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include "bench-common.h"

/* Plugins are found by the library itself: the benchmarks live in the
 * build tree, so the build's plugin folder is searched. */
void
bench_init (void)
{
  g_autoptr(GError) error = NULL;

  if (!symfonic_registry_scan (symfonic_registry_get_default (), &error))
    g_error ("Cannot load the plugins: %s", error->message);
  if (symfonic_registry_lookup (symfonic_registry_get_default (), "replay") == G_TYPE_INVALID)
    g_error ("The replay plugin was not found: build the whole project first");
}

/* --- transcripts and the server ------------------------------------------ */

char *
bench_make_dir (void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp ("symfonic-bench-XXXXXX", &error);

  if (dir == NULL)
    g_error ("Cannot make a temporary folder: %s", error->message);

  return dir;
}

void
bench_remove_dir (const char *dir)
{
  g_autoptr(GDir) children = g_dir_open (dir, 0, NULL);
  const char *name;

  while (children != NULL && (name = g_dir_read_name (children)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);

      g_unlink (path);
    }
  g_rmdir (dir);
}

/* Writes NAME.jsonl: @n_deltas TextDeltaEvents of @text_length ASCII bytes
 * each. Every @tag_every-th delta (0: none) carries a citation tag, so that
 * a citation stage has something to remove; every @pause_every-th (0: none)
 * comes 1 ms after the one before, so that a source at time-scale=1 plays
 * the transcript in bursts over several main-loop iterations. Returns the
 * length of the whole answer, which the terminal must carry. */
gsize
bench_write_transcript (const char *dir,
                        const char *name,
                        guint       n_deltas,
                        guint       text_length,
                        guint       tag_every,
                        guint       pause_every)
{
  g_autofree char *file = g_strconcat (name, ".jsonl", NULL);
  g_autofree char *path = g_build_filename (dir, file, NULL);
  g_autoptr(GString) out = g_string_sized_new ((gsize) n_deltas * (text_length + 60));
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) text = g_string_new (NULL);
  gsize total = 0;

  for (guint i = 0; i < n_deltas; i++)
    {
      g_string_printf (text, "t%u", i);
      if (tag_every > 0 && i % tag_every == tag_every - 1)
        g_string_append (text, " [semantic]");
      while (text->len + 1 < text_length)
        g_string_append_c (text, 'x');
      g_string_append_c (text, ' ');
      total += text->len;
      g_string_append_printf (out, "{\"event\":\"TextDeltaEvent\",\"data\":{\"text\":\"%s\"}%s}\n", text->str,
                              pause_every > 0 && i % pause_every == 0 ? ",\"delay_ms\":1" : "");
    }

  if (!g_file_set_contents (path, out->str, out->len, &error))
    g_error ("Cannot write %s: %s", path, error->message);

  return total;
}

/* One typed route at /typed, served from a replay source that plays as
 * fast as it can. Callers may append groups of their own. */
char *
bench_replay_pipeline (const char *transcripts,
                       const char *default_transcript)
{
  return g_strdup_printf ("[gateway]\n"
                          "listen=127.0.0.1:8080\n"
                          "workers=1\n"
                          "\n"
                          "[route:typed]\n"
                          "path=/typed\n"
                          "kind=typed\n"
                          "source=replay\n"
                          "\n"
                          "[source:replay]\n"
                          "type=replay\n"
                          "transcripts=%s\n"
                          "default-transcript=%s\n"
                          "transcript-header=X-Symfonic-Transcript\n"
                          "time-scale=0\n"
                          "\n",
                          transcripts, default_transcript);
}

SymfonicServer *
bench_server_new (const char *pipeline_text,
                  const char *base_dir,
                  guint       workers)
{
  g_autoptr(GFile) base = g_file_new_for_path (base_dir);
  g_autoptr(SymfonicPipeline) pipeline = NULL;
  g_autoptr(SymfonicServer) server = NULL;
  g_autoptr(GError) error = NULL;

  pipeline = symfonic_pipeline_new_from_data (symfonic_registry_get_default (),
                                              pipeline_text, -1, base,
                                              "bench.pipeline", &error);
  if (pipeline == NULL)
    g_error ("Cannot load the pipeline: %s", error->message);

  server = symfonic_server_new (pipeline);
  symfonic_server_set_listen (server, "127.0.0.1:0");
  symfonic_server_set_workers (server, workers);
  if (!symfonic_server_start (server, &error))
    g_error ("Cannot start the server: %s", error->message);

  return g_steal_pointer (&server);
}

/* --- the process ------------------------------------------------------------ */

/* A field of /proc/self/status in kB (VmRSS, VmHWM), 0 if unreadable. */
guint64
bench_status_kb (const char *field)
{
  g_autofree char *contents = NULL;
  g_autofree char *key = g_strconcat ("\n", field, ":", NULL);
  const char *found;

  if (!g_file_get_contents ("/proc/self/status", &contents, NULL, NULL))
    return 0;
  found = strstr (contents, key);
  if (found == NULL)
    return 0;

  return g_ascii_strtoull (found + strlen (key), NULL, 10);
}

/* VmHWM is the peak over the whole process life: to see the peak of one
 * phase it must be reset to the current RSS first (Linux >= 4.0). Freed
 * heap is given back first, or a phase would grow into the pages an
 * earlier one left and look free. */
void
bench_reset_peak_rss (void)
{
  malloc_trim (0);
  g_file_set_contents ("/proc/self/clear_refs", "5", 1, NULL);
}

/* CPU time (user + system) of the live threads whose name starts with
 * @thread_prefix, or with %NULL of the whole process, exited threads
 * included: whether the server or the client had the cores. */
double
bench_cpu_seconds (const char *thread_prefix)
{
  g_autoptr(GDir) tasks = NULL;
  const char *tid;
  double ticks = 0;

  if (thread_prefix == NULL)
    {
      struct rusage usage;

      getrusage (RUSAGE_SELF, &usage);
      return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 +
             usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
    }

  tasks = g_dir_open ("/proc/self/task", 0, NULL);
  while (tasks != NULL && (tid = g_dir_read_name (tasks)) != NULL)
    {
      g_autofree char *path = g_build_filename ("/proc/self/task", tid, "stat", NULL);
      g_autofree char *stat = NULL;
      g_auto(GStrv) fields = NULL;
      const char *open;
      const char *close;

      /* "tid (comm) state ppid ...": comm may hold spaces, so split after
       * its closing parenthesis; utime and stime are fields 14 and 15 */
      if (!g_file_get_contents (path, &stat, NULL, NULL) ||
          (open = strchr (stat, '(')) == NULL || (close = strrchr (stat, ')')) == NULL ||
          strncmp (open + 1, thread_prefix, strlen (thread_prefix)) != 0)
        continue;
      fields = g_strsplit (close + 2, " ", 0);
      if (g_strv_length (fields) > 12)
        ticks += g_ascii_strtod (fields[11], NULL) + g_ascii_strtod (fields[12], NULL);
    }

  return ticks / sysconf (_SC_CLK_TCK);
}

static int
compare_doubles (gconstpointer a,
                 gconstpointer b)
{
  double x = *(const double *) a;
  double y = *(const double *) b;

  return (x > y) - (x < y);
}

/* Nearest-rank percentile; sorts @values. */
double
bench_percentile (GArray *values,
                  double  fraction)
{
  guint rank;

  if (values->len == 0)
    return 0;

  g_array_sort (values, compare_doubles);
  rank = (guint) (fraction * values->len + 0.999999);
  rank = CLAMP (rank, 1, values->len);

  return g_array_index (values, double, rank - 1);
}

/* --- HTTP ------------------------------------------------------------------ */

/* What a frame is, by its first line. */
enum
{
  FRAME_OTHER,
  FRAME_DELTA,
  FRAME_TERMINAL,
  FRAME_ERROR,
};

/* Where the scan of the terminal's data is: looking for the "text" member,
 * inside its string, after a backslash, in a \uXXXX escape, past it. */
enum
{
  SCAN_SEEK,
  SCAN_STRING,
  SCAN_ESCAPE,
  SCAN_UNICODE,
  SCAN_DONE,
};

static const char text_member[] = "\"text\":\"";

void
bench_response_init (BenchResponse *self)
{
  memset (self, 0, sizeof *self);
  self->line = g_string_new (NULL);
  self->body = g_string_new (NULL);
  self->head = g_string_new (NULL);
  self->terminal_text_length = -1;
}

/* Ready for the next response on a kept-alive connection. */
void
bench_response_reset (BenchResponse *self)
{
  GString *line = self->line;
  GString *body = self->body;
  GString *head = self->head;
  gboolean keep_body = self->keep_body;

  g_string_truncate (line, 0);
  g_string_truncate (body, 0);
  g_string_truncate (head, 0);
  memset (self, 0, sizeof *self);
  self->line = line;
  self->body = body;
  self->head = head;
  self->keep_body = keep_body;
  self->terminal_text_length = -1;
}

void
bench_response_clear (BenchResponse *self)
{
  g_string_free (self->line, TRUE);
  g_string_free (self->body, TRUE);
  g_string_free (self->head, TRUE);
}

gboolean
bench_response_is_done (BenchResponse *self)
{
  return self->state == BENCH_STATE_DONE;
}

/* Counts the bytes of the terminal's "text" once JSON-unescaped, without
 * keeping it: the terminal of a long answer is megabytes. */
static void
scan_terminal (BenchResponse *self,
               const char    *data,
               gsize          length)
{
  for (gsize i = 0; i < length && self->scan != SCAN_DONE; i++)
    {
      char c = data[i];

      switch (self->scan)
        {
        case SCAN_SEEK:
          if (c == text_member[self->matched])
            self->matched++;
          else
            self->matched = c == text_member[0] ? 1 : 0;
          if (text_member[self->matched] == '\0')
            self->scan = SCAN_STRING;
          break;

        case SCAN_STRING:
          if (c == '"')
            self->scan = SCAN_DONE;
          else if (c == '\\')
            self->scan = SCAN_ESCAPE;
          else
            self->text_length++;
          break;

        case SCAN_ESCAPE:
          if (c == 'u')
            {
              self->scan = SCAN_UNICODE;
              self->unicode_digits = 0;
              self->unicode = 0;
            }
          else
            {
              self->text_length++;
              self->scan = SCAN_STRING;
            }
          break;

        case SCAN_UNICODE:
          self->unicode = self->unicode * 16 + g_ascii_xdigit_value (c);
          if (++self->unicode_digits == 4)
            {
              /* a surrogate pair is 4 bytes in all, 2 per half */
              if (self->unicode >= 0xd800 && self->unicode < 0xe000)
                self->text_length += 2;
              else
                self->text_length += g_unichar_to_utf8 (self->unicode, NULL);
              self->scan = SCAN_STRING;
            }
          break;

        case SCAN_DONE:
        default:
          break;
        }
    }
}

/* Whether the frame's head has the line @line: a frame may start with its
 * `id:` line before its `event:`. */
static gboolean
head_has_line (const char *head,
               const char *line)
{
  gsize length = strlen (line);
  const char *found = head;

  while ((found = strstr (found, line)) != NULL)
    {
      if ((found == head || found[-1] == '\n') && found[length] == '\n')
        return TRUE;
      found += length;
    }

  return FALSE;
}

static void
begin_frame_body (BenchResponse *self)
{
  const char *head = self->head->str;

  if (head_has_line (head, "event: TextDeltaEvent"))
    self->kind = FRAME_DELTA;
  else if (head_has_line (head, "event: ResponseCompleteEvent"))
    self->kind = FRAME_TERMINAL;
  else if (head_has_line (head, "event: error"))
    self->kind = FRAME_ERROR;
  else
    self->kind = FRAME_OTHER;

  self->scan = SCAN_SEEK;
  self->matched = 0;
  self->text_length = 0;
  self->in_body = TRUE;
}

static void
end_frame (BenchResponse *self)
{
  self->frames++;
  if (self->kind == FRAME_DELTA)
    self->delta_frames++;
  else if (self->kind == FRAME_TERMINAL)
    self->terminal_text_length = self->scan == SCAN_DONE ? self->text_length : -1;
  else if (self->kind == FRAME_ERROR)
    self->failed = TRUE;

  g_string_truncate (self->head, 0);
  self->in_body = FALSE;
}

static gboolean
last_line_is_id (GString *head)
{
  const char *newline = g_strrstr_len (head->str, head->len - 1, "\n");

  return g_str_has_prefix (newline != NULL ? newline + 1 : head->str, "id:");
}

/* The gateway writes frames with LF line ends and JSON data on one line, so
 * a frame ends at the first empty line. */
static void
feed_body (BenchResponse *self,
           const char    *data,
           gsize          length)
{
  const char *end = data + length;

  self->body_bytes += length;
  if (self->keep_body)
    g_string_append_len (self->body, data, length);

  while (data < end)
    {
      const char *newline = memchr (data, '\n', end - data);
      const char *stop = newline != NULL ? newline + 1 : end;

      if (!self->in_body)
        {
          if (self->head->len < 256)
            g_string_append_len (self->head, data, MIN ((gsize) (stop - data), 256 - self->head->len));
          data = stop;
          if (newline == NULL)
            break;
          /* a blank line between frames dispatches nothing */
          if (self->head->len == 1)
            g_string_truncate (self->head, 0);
          /* the frame's `event:` line follows its `id:` */
          else if (!last_line_is_id (self->head))
            {
              begin_frame_body (self);
              self->previous = '\n';
            }
          continue;
        }

      if (self->kind == FRAME_TERMINAL)
        scan_terminal (self, data, stop - data);
      if (newline == NULL)
        {
          self->previous = end[-1];
          break;
        }
      if ((newline == data ? self->previous : newline[-1]) == '\n')
        end_frame (self);
      self->previous = '\n';
      data = stop;
    }
}

static void
parse_header (BenchResponse *self,
              const char    *line)
{
  const char *colon = strchr (line, ':');
  g_autofree char *name = NULL;
  const char *value;

  if (colon == NULL)
    return;
  name = g_strndup (line, colon - line);
  value = colon + 1;
  while (*value == ' ')
    value++;

  if (g_ascii_strcasecmp (name, "Transfer-Encoding") == 0)
    self->chunked = g_ascii_strncasecmp (value, "chunked", 7) == 0;
  else if (g_ascii_strcasecmp (name, "Content-Length") == 0)
    self->remaining = g_ascii_strtoull (value, NULL, 10);
}

/* One complete CRLF-ended line of the head or of the chunk framing. */
static void
handle_line (BenchResponse *self)
{
  char *line = self->line->str;

  if (self->line->len > 0 && line[self->line->len - 1] == '\r')
    g_string_truncate (self->line, self->line->len - 1);

  switch (self->state)
    {
    case BENCH_STATE_STATUS:
      if (g_str_has_prefix (line, "HTTP/1.1 ") || g_str_has_prefix (line, "HTTP/1.0 "))
        self->status = (guint) g_ascii_strtoull (line + 9, NULL, 10);
      self->state = BENCH_STATE_HEADERS;
      break;

    case BENCH_STATE_HEADERS:
      if (*line != '\0')
        {
          parse_header (self, line);
          break;
        }
      self->headers_us = self->now_us;
      if (self->chunked)
        self->state = BENCH_STATE_CHUNK_SIZE;
      else
        self->state = self->remaining > 0 ? BENCH_STATE_LENGTH_BODY : BENCH_STATE_DONE;
      break;

    case BENCH_STATE_CHUNK_SIZE:
      self->remaining = g_ascii_strtoull (line, NULL, 16);
      self->state = self->remaining > 0 ? BENCH_STATE_CHUNK_DATA : BENCH_STATE_TRAILER;
      break;

    case BENCH_STATE_CHUNK_END:
      self->state = BENCH_STATE_CHUNK_SIZE;
      break;

    case BENCH_STATE_TRAILER:
      if (*line == '\0')
        self->state = BENCH_STATE_DONE;
      break;

    case BENCH_STATE_CHUNK_DATA:
    case BENCH_STATE_LENGTH_BODY:
    case BENCH_STATE_DONE:
    default:
      g_assert_not_reached ();
    }

  g_string_truncate (self->line, 0);
}

/* Consumes what belongs to this response and returns how much that was;
 * @now_us stamps the frames completed by these bytes. */
gsize
bench_response_feed (BenchResponse *self,
                     const char    *data,
                     gsize          length,
                     gint64         now_us)
{
  guint64 frames_before = self->frames;
  gsize used = 0;

  self->now_us = now_us;

  while (used < length && self->state != BENCH_STATE_DONE)
    {
      if (self->state == BENCH_STATE_CHUNK_DATA || self->state == BENCH_STATE_LENGTH_BODY)
        {
          gsize n = MIN (self->remaining, length - used);

          feed_body (self, data + used, n);
          used += n;
          self->remaining -= n;
          if (self->remaining == 0)
            self->state = self->state == BENCH_STATE_CHUNK_DATA ? BENCH_STATE_CHUNK_END : BENCH_STATE_DONE;
        }
      else
        {
          const char *newline = memchr (data + used, '\n', length - used);
          gsize n = newline != NULL ? (gsize) (newline - (data + used)) : length - used;

          g_string_append_len (self->line, data + used, n);
          used += n;
          if (newline != NULL)
            {
              used++;
              handle_line (self);
            }
        }
    }

  if (self->frames > frames_before)
    {
      if (self->first_frame_us == 0)
        self->first_frame_us = now_us;
      self->last_frame_us = now_us;
    }

  return used;
}

/* The byte length of the terminal's "text", or -1 without a success
 * terminal. */
gssize
bench_response_terminal_text_length (BenchResponse *self)
{
  return self->failed ? -1 : self->terminal_text_length;
}

/* A blocking loopback connection. A @receive_buffer > 0 is set before
 * connecting, which also turns off the kernel's autotuning: a slow reader
 * then really holds back the server instead of the kernel absorbing
 * megabytes for it. */
GSocket *
bench_connect (guint16  port,
               int      receive_buffer,
               GError **error)
{
  g_autoptr(GSocket) socket = NULL;
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) address = g_inet_socket_address_new (loopback, port);

  socket = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, error);
  if (socket == NULL)
    return NULL;
  if (receive_buffer > 0 &&
      !g_socket_set_option (socket, SOL_SOCKET, SO_RCVBUF, receive_buffer, error))
    return NULL;
  g_socket_set_timeout (socket, BENCH_SOCKET_TIMEOUT_S);
  if (!g_socket_connect (socket, address, NULL, error))
    return NULL;
  g_socket_set_option (socket, IPPROTO_TCP, TCP_NODELAY, 1, NULL);

  return g_steal_pointer (&socket);
}

char *
bench_post_request (const char *path,
                    const char *transcript)
{
  static const char body[] = "{\"query\":\"benchmark\"}";

  return g_strdup_printf ("POST %s HTTP/1.1\r\n"
                          "Host: 127.0.0.1\r\n"
                          "Content-Type: application/json\r\n"
                          "X-Symfonic-Transcript: %s\r\n"
                          "Content-Length: %zu\r\n"
                          "\r\n"
                          "%s",
                          path, transcript, strlen (body), body);
}

gboolean
bench_send_all (GSocket    *socket,
                const char *data,
                gsize       length,
                GError    **error)
{
  while (length > 0)
    {
      gssize n = g_socket_send (socket, data, length, NULL, error);

      if (n < 0)
        return FALSE;
      data += n;
      length -= n;
    }

  return TRUE;
}

/* Reads one whole response, as fast as the socket gives it. */
gboolean
bench_read_response (GSocket       *socket,
                     BenchResponse *response,
                     GError       **error)
{
  char buffer[65536];

  while (!bench_response_is_done (response))
    {
      gssize n = g_socket_receive (socket, buffer, sizeof buffer, NULL, error);

      if (n < 0)
        return FALSE;
      if (n == 0)
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED,
                               "The server closed the connection mid-response");
          return FALSE;
        }
      bench_response_feed (response, buffer, n, g_get_monotonic_time ());
    }

  return TRUE;
}

/* A counter of /metrics, or -1 when it cannot be read. */
double
bench_fetch_metric (guint16     port,
                    const char *name)
{
  static const char request[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  g_autoptr(GSocket) socket = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) lines = NULL;
  BenchResponse response;
  double value = -1;

  socket = bench_connect (port, 0, &error);
  if (socket == NULL || !bench_send_all (socket, request, strlen (request), &error))
    {
      g_printerr ("metrics: %s\n", error->message);
      return -1;
    }

  bench_response_init (&response);
  response.keep_body = TRUE;
  if (!bench_read_response (socket, &response, &error))
    g_printerr ("metrics: %s\n", error->message);
  else
    {
      lines = g_strsplit (response.body->str, "\n", -1);
      for (guint i = 0; lines[i] != NULL; i++)
        {
          if (g_str_has_prefix (lines[i], name) && lines[i][strlen (name)] == ' ')
            value = g_ascii_strtod (lines[i] + strlen (name) + 1, NULL);
        }
    }
  bench_response_clear (&response);

  return value;
}
