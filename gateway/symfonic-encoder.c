/* symfonic-encoder.c: what every route shape shares
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-encoder-private.h"

SymfonicEncoder *
symfonic_encoder_new (SymfonicRouteKind   kind,
                      SymfonicInvocation *invocation)
{
  const SymfonicEncoderVTable *vtable;
  SymfonicEncoder *self;

  switch (kind)
    {
    case SYMFONIC_ROUTE_KIND_TYPED:
      vtable = &symfonic_typed_encoder;
      break;
    case SYMFONIC_ROUTE_KIND_CHUNKS:
      vtable = &symfonic_chunk_encoder;
      break;
    case SYMFONIC_ROUTE_KIND_CHAT:
    case SYMFONIC_ROUTE_KIND_RESUME:
    default:
      vtable = &symfonic_answer_encoder;
      break;
    }
  g_assert (vtable->instance_size >= sizeof (SymfonicEncoder));
  self = g_malloc0 (vtable->instance_size);
  self->vtable = vtable;
  self->invocation = g_object_ref (invocation);
  self->text = g_string_new (NULL);

  return self;
}

void
symfonic_encoder_free (SymfonicEncoder *self)
{
  if (self->vtable->clear != NULL)
    self->vtable->clear (self);
  g_object_unref (self->invocation);
  g_string_free (self->text, TRUE);
  g_free (self->fallback);
  g_free (self);
}

gboolean
symfonic_encoder_is_streaming (SymfonicEncoder *self)
{
  return self->vtable->streaming;
}

SymfonicFrameClass
symfonic_encoder_event (SymfonicEncoder *self,
                        SymfonicEvent   *event,
                        GString         *out)
{
  return self->vtable->event (self, event, out);
}

void
symfonic_encoder_success (SymfonicEncoder *self,
                          gint64           duration_ms,
                          GString         *out)
{
  self->vtable->success (self, duration_ms, out);
}

/* The same frame before the handshake is a JSON body, after it the one
 * `event: error` frame. */
void
symfonic_encoder_error (SymfonicEncoder    *self,
                        SymfonicErrorFrame *frame,
                        GString            *out)
{
  g_autofree char *json = symfonic_error_frame_to_json (frame);

  if (self->vtable->streaming)
    {
      symfonic_encoder_append_id (self, out);
      g_string_append (out, "event: error\ndata: ");
    }
  g_string_append (out, json);
  if (self->vtable->streaming)
    g_string_append (out, "\n\n");
}

/* Starts a frame with the next id of the run (DESIGN 7a): a client that
 * reconnects names the last one it got in Last-Event-ID. */
void
symfonic_encoder_append_id (SymfonicEncoder *self,
                            GString         *out)
{
  char line[32];
  int n = g_snprintf (line, sizeof line, "id: %" G_GUINT64_FORMAT "\n", ++self->seq);

  g_string_append_len (out, line, n);
}

guint64
symfonic_encoder_get_seq (SymfonicEncoder *self)
{
  return self->seq;
}

const char *
symfonic_encoder_final_text (SymfonicEncoder *self)
{
  if (self->text->len == 0 && self->fallback != NULL)
    return self->fallback;

  return self->text->str;
}

/* Only the first terminal counts: an upstream that sends two does not get
 * to change its mind. */
void
symfonic_encoder_keep_fallback (SymfonicEncoder *self,
                                SymfonicEvent   *terminal)
{
  if (self->fallback == NULL)
    self->fallback = g_strdup (symfonic_event_get_text (terminal));
}

guint64
symfonic_encoder_get_dropped (SymfonicEncoder *self)
{
  return self->dropped;
}
