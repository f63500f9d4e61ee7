/* symfonic-server.h: the HTTP front of a pipeline
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <gio/gio.h>

#include "symfonic-pipeline.h"
#include "symfonic-registry.h"
#include "symfonic-run-store.h"

G_BEGIN_DECLS

#define SYMFONIC_TYPE_SERVER (symfonic_server_get_type ())

G_DECLARE_FINAL_TYPE (SymfonicServer, symfonic_server, SYMFONIC, SERVER, GObject)

SymfonicServer   *symfonic_server_new          (SymfonicPipeline  *pipeline);
SymfonicPipeline *symfonic_server_get_pipeline (SymfonicServer    *self);
void              symfonic_server_set_listen   (SymfonicServer    *self,
                                                const char        *listen);
void              symfonic_server_set_workers  (SymfonicServer    *self,
                                                guint              workers);
void              symfonic_server_set_allow_demo_credentials (SymfonicServer *self,
                                                gboolean           allow);
void              symfonic_server_set_listen_socket (SymfonicServer *self,
                                                GSocket           *socket);
SymfonicRunStore *symfonic_server_get_run_store (SymfonicServer  *self);
void              symfonic_server_set_run_store (SymfonicServer  *self,
                                                 SymfonicRunStore *store);
gboolean          symfonic_server_check        (SymfonicServer    *self,
                                                GError           **error);
gboolean          symfonic_server_start        (SymfonicServer    *self,
                                                GError           **error);
gboolean          symfonic_server_reload       (SymfonicServer    *self,
                                                SymfonicRegistry  *registry,
                                                GError           **error);
void              symfonic_server_drain_async  (SymfonicServer    *self,
                                                GCancellable      *cancellable,
                                                GAsyncReadyCallback callback,
                                                gpointer           user_data);
gboolean          symfonic_server_drain_finish (SymfonicServer    *self,
                                                GAsyncResult      *result,
                                                GError           **error);
void              symfonic_server_stop         (SymfonicServer    *self);
guint16           symfonic_server_get_port     (SymfonicServer    *self);
char             *symfonic_server_dup_uri      (SymfonicServer    *self);

G_END_DECLS
