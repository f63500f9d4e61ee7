/* symfonic-plugin-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-plugin.h"
#include "symfonic-registry.h"

G_BEGIN_DECLS

G_GNUC_INTERNAL
SymfonicPlugin *symfonic_plugin_new (SymfonicRegistry         *registry,
                                     const SymfonicPluginInfo *info,
                                     const char               *filename);

G_END_DECLS
