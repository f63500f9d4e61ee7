/* symfonic-types.h: forward declarations shared by the public headers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <glib-object.h>

G_BEGIN_DECLS

typedef struct _SymfonicStage  SymfonicStage;
typedef struct _SymfonicSource SymfonicSource;
typedef struct _SymfonicStream SymfonicStream;
typedef struct _SymfonicRoute  SymfonicRoute;
typedef struct _SymfonicErrorMapper SymfonicErrorMapper;

G_END_DECLS
