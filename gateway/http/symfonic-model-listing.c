/* symfonic-model-listing.c: `GET …/models` of an `openai` route
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-exchange-private.h"
#include "symfonic-json-private.h"
#include "symfonic-model-listing-private.h"
#include "symfonic-stream-private.h"

/* The SDKs list models with the same key they stream with: the route's
 * head-phase stages (authentication) decide on the listing too, so that
 * who may not call the route does not learn what it serves. */
typedef struct
{
  SoupServerMessage *message;
  SymfonicRoute     *route;
  SymfonicStream    *stream;
} Listing;

static void
listing_free (Listing *self)
{
  g_object_unref (self->message);
  g_object_unref (self->route);
  g_object_unref (self->stream);
  g_free (self);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Listing, listing_free)

/* The model the route's source is configured with (the provider sources'
 * `model`); a source without one is listed under the route's name. */
static const char *
model_of (SymfonicRoute *route,
          GValue        *value)
{
  SymfonicSource *source = symfonic_route_get_source (route);
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (source), "model");
  const char *model = NULL;

  if (pspec != NULL && pspec->value_type == G_TYPE_STRING)
    {
      g_value_init (value, G_TYPE_STRING);
      g_object_get_property (G_OBJECT (source), "model", value);
      model = g_value_get_string (value);
    }

  return model != NULL && *model != '\0' ? model : symfonic_route_get_name (route);
}

static void
answer (Listing      *self,
        const GError *error)
{
  g_auto(GValue) value = G_VALUE_INIT;
  g_autoptr(GString) body = NULL;

  if (error != NULL)
    {
      g_autoptr(SymfonicErrorFrame) frame = symfonic_route_map_error (self->route, error);

      symfonic_exchange_respond_error (self->message, self->route, frame);
      return;
    }

  body = g_string_new ("{\"object\":\"list\",\"data\":[{\"id\":");
  symfonic_json_append_string (body, model_of (self->route, &value), -1);
  g_string_append (body, ",\"object\":\"model\",\"created\":0,\"owned_by\":\"symfonic-gateway\"}]}");
  symfonic_exchange_respond_json (self->message, SOUP_STATUS_OK, body->str);
}

/* The head-phase stages that the stream waited for decided. */
static void
decided (gpointer      data,
         const GError *error)
{
  g_autoptr(Listing) self = data;

  answer (self, error);
  soup_server_message_unpause (self->message);
}

void
symfonic_model_listing_respond (SoupServerMessage *message,
                                SymfonicRoute     *route)
{
  g_autoptr(SymfonicInvocation) invocation = symfonic_exchange_new_invocation (message);
  g_autoptr(Listing) self = g_new0 (Listing, 1);
  g_autoptr(GError) error = NULL;
  self->message = g_object_ref (message);
  self->route = g_object_ref (route);
  self->stream = symfonic_stream_new (route, invocation);

  switch (symfonic_stream_admit (self->stream, SYMFONIC_ADMISSION_PHASE_HEAD, decided, self, &error))
    {
    case SYMFONIC_ADMIT_PASSED:
    case SYMFONIC_ADMIT_REFUSED:
      answer (self, error);
      break;
    case SYMFONIC_ADMIT_PENDING:
      /* the listing is the callback's now */
      soup_server_message_pause (message);
      (void) g_steal_pointer (&self);
      break;
    }
}
