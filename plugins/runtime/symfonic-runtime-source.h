/* symfonic-runtime-source.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

G_BEGIN_DECLS

#define SYMFONIC_TYPE_RUNTIME_SOURCE (symfonic_runtime_source_get_type ())

G_DECLARE_FINAL_TYPE (SymfonicRuntimeSource, symfonic_runtime_source, SYMFONIC, RUNTIME_SOURCE, SymfonicHttpSource)

G_END_DECLS
