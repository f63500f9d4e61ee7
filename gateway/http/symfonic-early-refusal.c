/* symfonic-early-refusal.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-connection-private.h"
#include "symfonic-early-refusal-private.h"
#include "symfonic-poller-private.h"
#include "symfonic-status-private.h"

/* libsoup reads a request's whole body before it writes any response,
 * unless the client asked `Expect: 100-continue`. A body declared larger
 * than the limit must not be read at all, so the worker takes the
 * connection from libsoup, answers on it, and closes it. The peer is
 * still sending: closing with unread bytes would reset the connection and
 * could destroy the answer, so the write side is shut first and what
 * arrives is read and dropped for a short while. */

#define DRAIN_MS 2000
#define DRAIN_BYTES (1024 * 1024)

typedef struct
{
  GIOStream      *stream;
  GBytes         *response;
  GCancellable   *cancellable;
  /* the end of the drain, on the poller of the thread that answers */
  SymfonicPoller *poller;
  SymfonicTimer  *timeout;
  gsize           drained;
  char            buffer[16 * 1024];
} Refusal;

static void
refusal_free (Refusal *self)
{
  g_clear_pointer (&self->timeout, symfonic_timer_remove);
  g_clear_pointer (&self->poller, symfonic_poller_unref);
  g_io_stream_close (self->stream, NULL, NULL);
  g_object_unref (self->stream);
  g_bytes_unref (self->response);
  g_object_unref (self->cancellable);
  g_free (self);
}

static void
drain_over (gpointer data)
{
  Refusal *self = data;

  g_cancellable_cancel (self->cancellable);
}

static void drain (Refusal *self);

static void
drained_cb (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  Refusal *self = user_data;
  gssize n = g_input_stream_read_finish (G_INPUT_STREAM (object), result, NULL);

  if (n <= 0 || (self->drained += n) >= DRAIN_BYTES)
    {
      refusal_free (self);
      return;
    }
  drain (self);
}

static void
drain (Refusal *self)
{
  g_input_stream_read_async (g_io_stream_get_input_stream (self->stream), self->buffer, sizeof self->buffer,
                             G_PRIORITY_DEFAULT, self->cancellable, drained_cb, self);
}

static void
written_cb (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  Refusal *self = user_data;

  if (!g_output_stream_write_all_finish (G_OUTPUT_STREAM (object), result, NULL, NULL))
    {
      refusal_free (self);
      return;
    }

  if (G_IS_SOCKET_CONNECTION (self->stream))
    g_socket_shutdown (g_socket_connection_get_socket (G_SOCKET_CONNECTION (self->stream)), FALSE, TRUE, NULL);

  /* a refusal may outlive its worker's last iteration: it keeps the
   * poller its timer is on */
  self->poller = symfonic_poller_ref (symfonic_poller_get_thread_default ());
  self->timeout = symfonic_poller_timer (self->poller, drain_over, self);
  symfonic_timer_set_deadline (self->timeout, g_get_monotonic_time () + DRAIN_MS * 1000);
  drain (self);
}

/* Answers with @frame's status and headers and @json (the frame's own
 * JSON when %NULL) on @stream, which it then owns and closes, without
 * reading what the client still sends. */
void
symfonic_early_refusal_send_on (GIOStream          *stream,
                                SymfonicErrorFrame *frame,
                                const char         *body)
{
  g_autofree char *own = body == NULL ? symfonic_error_frame_to_json (frame) : NULL;
  const char *json = body != NULL ? body : own;
  g_auto(GStrv) names = symfonic_error_frame_list_headers (frame);
  guint status = symfonic_error_frame_get_status (frame);
  GString *response = g_string_new (NULL);
  Refusal *self = g_new0 (Refusal, 1);

  g_string_append_printf (response, "HTTP/1.1 %u %s\r\n", status, symfonic_status_get_phrase (status));
  g_string_append (response, "Content-Type: application/json\r\n");
  for (guint i = 0; names[i] != NULL; i++)
    g_string_append_printf (response, "%s: %s\r\n", names[i], symfonic_error_frame_get_header (frame, names[i]));
  g_string_append_printf (response, "Content-Length: %zu\r\nConnection: close\r\n\r\n%s", strlen (json), json);

  self->stream = g_object_ref (stream);
  self->response = g_string_free_to_bytes (response);
  self->cancellable = g_cancellable_new ();
  g_output_stream_write_all_async (g_io_stream_get_output_stream (self->stream),
                                   g_bytes_get_data (self->response, NULL), g_bytes_get_size (self->response),
                                   G_PRIORITY_DEFAULT, self->cancellable, written_cb, self);
}

/* Answers @message with @frame as the JSON @body on a connection it then
 * closes, without reading the request body. */
void
symfonic_early_refusal_send (SoupServerMessage  *message,
                             SymfonicErrorFrame *frame,
                             const char         *body)
{
  SymfonicConnection *connection = symfonic_connection_for_message (message);
  g_autoptr(GIOStream) stream = soup_server_message_steal_connection (message);
  g_autoptr(GIOStream) base = connection != NULL ? symfonic_connection_steal_base (connection) : NULL;

  if (base == NULL)
    {
      symfonic_early_refusal_send_on (stream, frame, body);
      return;
    }
  /* frees the connection's slot; the refusal owns the socket from here */
  g_io_stream_close (stream, NULL, NULL);
  symfonic_early_refusal_send_on (base, frame, body);
}
