/* symfonic-token-table.h: opaque bearer tokens, stored as SHA-256 digests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define SYMFONIC_TOKEN_DIGEST_LENGTH 32

typedef struct
{
  char     *name;
  GStrv     tenants;
  gboolean  admin;
  gboolean  demo;
  guint8    digest[SYMFONIC_TOKEN_DIGEST_LENGTH];
} SymfonicTokenPrincipal;

typedef struct _SymfonicTokenTable SymfonicTokenTable;

SymfonicTokenTable           *symfonic_token_table_new_from_file (GFile              *file,
                                                                  GError            **error);
void                          symfonic_token_table_free          (SymfonicTokenTable *self);
const SymfonicTokenPrincipal *symfonic_token_table_lookup        (SymfonicTokenTable *self,
                                                                  const char         *token);
gboolean                      symfonic_token_table_has_demo      (SymfonicTokenTable *self);

gboolean                      symfonic_auth_is_tenant_name       (const char         *text);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicTokenTable, symfonic_token_table_free)

G_END_DECLS
