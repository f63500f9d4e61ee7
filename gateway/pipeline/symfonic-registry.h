/* symfonic-registry.h: stage and source types by name, and the plugins providing them
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <glib-object.h>

#include "symfonic-plugin.h"

G_BEGIN_DECLS

#define SYMFONIC_TYPE_REGISTRY (symfonic_registry_get_type ())

G_DECLARE_FINAL_TYPE (SymfonicRegistry, symfonic_registry, SYMFONIC, REGISTRY, GObject)

SymfonicRegistry  *symfonic_registry_new               (void);
SymfonicRegistry  *symfonic_registry_get_default       (void);
gboolean           symfonic_registry_scan              (SymfonicRegistry  *self,
                                                        GError           **error);
gboolean           symfonic_registry_load_directory    (SymfonicRegistry  *self,
                                                        const char        *directory,
                                                        GError           **error);
SymfonicPlugin    *symfonic_registry_load_plugin       (SymfonicRegistry  *self,
                                                        const char        *filename,
                                                        GError           **error);
gboolean           symfonic_registry_register_type     (SymfonicRegistry  *self,
                                                        GType              type,
                                                        const char        *name,
                                                        SymfonicPlugin    *plugin,
                                                        GError           **error);
GType              symfonic_registry_lookup            (SymfonicRegistry  *self,
                                                        const char        *name);
SymfonicPlugin    *symfonic_registry_get_type_plugin   (SymfonicRegistry  *self,
                                                        const char        *name);
char             **symfonic_registry_list_types        (SymfonicRegistry  *self);
const char * const *symfonic_registry_list_builtin_types (void);
GPtrArray         *symfonic_registry_list_plugins      (SymfonicRegistry  *self);

void               symfonic_registry_add_script_loader (SymfonicRegistry       *self,
                                                        const char             *suffix,
                                                        const char             *language,
                                                        SymfonicScriptLoadFunc  load,
                                                        SymfonicScriptTypeFunc  adopt,
                                                        gpointer                user_data);
void               symfonic_registry_set_script_path_func (SymfonicRegistry       *self,
                                                           const char             *suffix,
                                                           SymfonicScriptPathFunc  add_path);
gboolean           symfonic_registry_add_script_path   (SymfonicRegistry  *self,
                                                        const char        *suffix,
                                                        const char        *folder,
                                                        GError           **error);

gboolean           symfonic_register_stage_type        (GType              type,
                                                        const char        *name,
                                                        GError           **error);

G_END_DECLS
