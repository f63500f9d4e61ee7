/* symfonic-jwt-verifier.h: signed bearer tokens (RFC 7519)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* What the stage's jwt-* properties configure, borrowed for the call to
 * symfonic_jwt_verifier_new(), which copies what it keeps. */
typedef struct
{
  GFile              *hs256_secret_file;
  GFile              *public_key_file;
  const char * const *algorithms;
  guint               leeway;
  const char         *principal_claim;
  const char         *tenants_claim;
  const char         *admin_claim;
  const char         *issuer;
  const char         *audience;
} SymfonicJwtSettings;

typedef struct
{
  char     *principal;
  GStrv     tenants;
  gboolean  admin;
} SymfonicJwtIdentity;

typedef struct _SymfonicJwtVerifier SymfonicJwtVerifier;

SymfonicJwtVerifier *symfonic_jwt_verifier_new      (const SymfonicJwtSettings  *settings,
                                                     GError                    **error);
void                 symfonic_jwt_verifier_free     (SymfonicJwtVerifier        *self);
SymfonicJwtIdentity *symfonic_jwt_verifier_verify   (SymfonicJwtVerifier        *self,
                                                     const char                 *token,
                                                     gint64                      now,
                                                     GError                    **error);
void                 symfonic_jwt_identity_free     (SymfonicJwtIdentity        *identity);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicJwtVerifier, symfonic_jwt_verifier_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicJwtIdentity, symfonic_jwt_identity_free)

G_END_DECLS
