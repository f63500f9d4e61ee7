/* symfonic-model-listing.c: `GET …/models` of a provider route
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-error.h"
#include "symfonic-route-private.h"

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
  /* `…/models/{id}`: the one model asked for, or NULL for the list */
  char              *model_id;
} Listing;

static void
listing_free (Listing *self)
{
  g_object_unref (self->message);
  g_object_unref (self->route);
  g_object_unref (self->stream);
  g_free (self->model_id);
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

/* One model in the route's API: OpenAI's `model` object, or Anthropic's
 * `ModelInfo`. */
static void
append_model (GString       *out,
              SymfonicRoute *route,
              const char    *model)
{
  if (symfonic_route_get_kind (route) == SYMFONIC_ROUTE_KIND_ANTHROPIC)
    {
      g_string_append (out, "{\"type\":\"model\",\"id\":");
      symfonic_json_append_string (out, model, -1);
      g_string_append (out, ",\"display_name\":");
      symfonic_json_append_string (out, model, -1);
      g_string_append (out, ",\"created_at\":\"1970-01-01T00:00:00Z\"}");
      return;
    }

  g_string_append (out, "{\"id\":");
  symfonic_json_append_string (out, model, -1);
  g_string_append (out, ",\"object\":\"model\",\"created\":0,\"owned_by\":\"symfonic-gateway\"}");
}

static void
answer (Listing      *self,
        const GError *error)
{
  g_auto(GValue) value = G_VALUE_INIT;
  g_autoptr(GString) body = g_string_new (NULL);
  g_autoptr(GError) unknown = NULL;
  const char *model;

  symfonic_exchange_set_request_id (self->message, self->route,
                                    symfonic_invocation_get_run_id (symfonic_stream_get_invocation (self->stream)));
  if (error == NULL)
    {
      model = model_of (self->route, &value);
      if (self->model_id != NULL && strcmp (self->model_id, model) != 0)
        error = unknown = g_error_new_literal (SYMFONIC_ERROR, SYMFONIC_ERROR_NOT_FOUND, "No such model");
    }
  if (error != NULL)
    {
      g_autoptr(SymfonicErrorFrame) frame = symfonic_route_map_error (self->route, error);

      symfonic_exchange_respond_error (self->message, self->route, frame);
      return;
    }

  if (self->model_id != NULL)
    append_model (body, self->route, model);
  else if (symfonic_route_get_kind (self->route) == SYMFONIC_ROUTE_KIND_ANTHROPIC)
    {
      g_string_append (body, "{\"data\":[");
      append_model (body, self->route, model);
      g_string_append (body, "],\"has_more\":false,\"first_id\":");
      symfonic_json_append_string (body, model, -1);
      g_string_append (body, ",\"last_id\":");
      symfonic_json_append_string (body, model, -1);
      g_string_append_c (body, '}');
    }
  else
    {
      g_string_append (body, "{\"object\":\"list\",\"data\":[");
      append_model (body, self->route, model);
      g_string_append (body, "]}");
    }
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
                                SymfonicRoute     *route,
                                const char        *path)
{
  g_autoptr(SymfonicInvocation) invocation = symfonic_exchange_new_invocation (message);
  g_autoptr(Listing) self = g_new0 (Listing, 1);
  g_autoptr(GError) error = NULL;
  const char *rest;

  self->message = g_object_ref (message);
  self->route = g_object_ref (route);
  self->stream = symfonic_stream_new (route, invocation);
  /* `{root}/models/{id}`, the id as the client named it */
  if (symfonic_route_get_endpoint (route, path) == SYMFONIC_ENDPOINT_MODEL &&
      symfonic_route_serves_under (route, path, &rest))
    self->model_id = g_uri_unescape_string (rest + strlen ("/models/"), NULL);

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
