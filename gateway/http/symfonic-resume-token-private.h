/* symfonic-resume-token-private.h: what lets a browser read a run again without headers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The response header a resumable run's token goes out in. */
#define SYMFONIC_RESUME_TOKEN_HEADER "X-Symfonic-Resume-Token"

G_GNUC_INTERNAL
char     *symfonic_resume_token_new   (GBytes      *secret,
                                       const char  *run_id,
                                       const char  *tenant_id,
                                       const char  *principal_id,
                                       gint64       expires);
G_GNUC_INTERNAL
gboolean  symfonic_resume_token_check (GBytes      *secret,
                                       const char  *token,
                                       const char  *run_id,
                                       gint64       now,
                                       char       **tenant_id,
                                       char       **principal_id);

G_END_DECLS
