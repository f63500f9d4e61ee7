/* symfonic-pipeline.h: a pipeline file, loaded
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <gio/gio.h>

#include "symfonic-registry.h"
#include "symfonic-route.h"
#include "symfonic-run-store.h"

G_BEGIN_DECLS

/**
 * SYMFONIC_PIPELINE_MIN_RESUME_SECRET_BYTES:
 *
 * The shortest secret #SymfonicPipeline:resume-token-secret-file may
 * hold: the length of the HMAC-SHA256 key it is used as.
 */
#define SYMFONIC_PIPELINE_MIN_RESUME_SECRET_BYTES 32

#define SYMFONIC_TYPE_PIPELINE (symfonic_pipeline_get_type ())

G_DECLARE_FINAL_TYPE (SymfonicPipeline, symfonic_pipeline, SYMFONIC, PIPELINE, GObject)

SymfonicPipeline *symfonic_pipeline_new_from_file  (SymfonicRegistry  *registry,
                                                    GFile             *file,
                                                    GError           **error);
SymfonicPipeline *symfonic_pipeline_new_from_data  (SymfonicRegistry  *registry,
                                                    const char        *data,
                                                    gssize             length,
                                                    GFile             *base_dir,
                                                    const char        *display_name,
                                                    GError           **error);
SymfonicPipeline *symfonic_pipeline_reload         (SymfonicPipeline  *self,
                                                    SymfonicRegistry  *registry,
                                                    GError           **error);
GFile            *symfonic_pipeline_get_file       (SymfonicPipeline  *self);
const char       *symfonic_pipeline_get_listen     (SymfonicPipeline  *self);
guint             symfonic_pipeline_get_workers    (SymfonicPipeline  *self);
guint64           symfonic_pipeline_get_max_body_bytes (SymfonicPipeline *self);
const char       *symfonic_pipeline_get_release_line (SymfonicPipeline *self);
guint             symfonic_pipeline_get_n_routes   (SymfonicPipeline  *self);
SymfonicRoute    *symfonic_pipeline_get_route      (SymfonicPipeline  *self,
                                                    guint              position);
SymfonicRoute    *symfonic_pipeline_lookup_route   (SymfonicPipeline  *self,
                                                    const char        *path);
SymfonicStage    *symfonic_pipeline_get_stage      (SymfonicPipeline  *self,
                                                    const char        *name);
SymfonicSource   *symfonic_pipeline_get_source     (SymfonicPipeline  *self,
                                                    const char        *name);
GObject          *symfonic_pipeline_get_store      (SymfonicPipeline  *self,
                                                    const char        *name);
GStrv             symfonic_pipeline_dup_store_names (SymfonicPipeline *self);
SymfonicRunStore *symfonic_pipeline_get_run_store  (SymfonicPipeline  *self);
gboolean          symfonic_pipeline_check_stores   (SymfonicPipeline  *self,
                                                    GCancellable      *cancellable,
                                                    GError           **error);

gboolean          symfonic_pipeline_uses_demo_credentials (SymfonicPipeline *self);

GFile            *symfonic_pipeline_get_default_file (void);
GParamSpec      **symfonic_pipeline_list_keys      (const char        *group,
                                                    guint             *n_keys);

G_END_DECLS
