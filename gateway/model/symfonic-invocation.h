/* symfonic-invocation.h: one request to an agent
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <glib-object.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define SYMFONIC_TYPE_INVOCATION (symfonic_invocation_get_type ())

G_DECLARE_FINAL_TYPE (SymfonicInvocation, symfonic_invocation, SYMFONIC, INVOCATION, GObject)

SymfonicInvocation *symfonic_invocation_new              (const char          *query);
SymfonicInvocation *symfonic_invocation_new_from_json    (JsonNode            *body,
                                                          GError             **error);
gboolean            symfonic_invocation_set_body         (SymfonicInvocation  *self,
                                                          JsonNode            *body,
                                                          GError             **error);
const char         *symfonic_invocation_get_query        (SymfonicInvocation  *self);
const char         *symfonic_invocation_get_session_id   (SymfonicInvocation  *self);
void                symfonic_invocation_set_session_id   (SymfonicInvocation  *self,
                                                          const char          *session_id);
JsonArray          *symfonic_invocation_get_attachments  (SymfonicInvocation  *self);
const char         *symfonic_invocation_get_run_id       (SymfonicInvocation  *self);
const char         *symfonic_invocation_get_tenant_id    (SymfonicInvocation  *self);
const char         *symfonic_invocation_get_principal_id (SymfonicInvocation  *self);
gboolean            symfonic_invocation_get_is_admin     (SymfonicInvocation  *self);
void                symfonic_invocation_set_scope        (SymfonicInvocation  *self,
                                                          const char          *tenant_id,
                                                          const char          *principal_id,
                                                          gboolean             is_admin);
const char         *symfonic_invocation_get_header       (SymfonicInvocation  *self,
                                                          const char          *name);
void                symfonic_invocation_set_header       (SymfonicInvocation  *self,
                                                          const char          *name,
                                                          const char          *value);
JsonArray          *symfonic_invocation_get_messages     (SymfonicInvocation  *self);
const char         *symfonic_invocation_get_system       (SymfonicInvocation  *self);
JsonArray          *symfonic_invocation_get_tools        (SymfonicInvocation  *self);
JsonObject         *symfonic_invocation_get_parameters   (SymfonicInvocation  *self);
void                symfonic_invocation_set_conversation (SymfonicInvocation  *self,
                                                          JsonArray           *messages,
                                                          const char          *system,
                                                          JsonArray           *tools,
                                                          JsonObject          *parameters);
JsonNode           *symfonic_invocation_to_json          (SymfonicInvocation  *self);
char               *symfonic_invocation_to_data          (SymfonicInvocation  *self,
                                                          gsize               *length);

G_END_DECLS
