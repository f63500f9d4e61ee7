/* symfonic-builtin-private.h: the types built into the library
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-plugin.h"

G_BEGIN_DECLS

/* The registry registers the library's own types as one plugin, when it
 * scans. They live in folders after this one (gateway/providers/), which
 * define this: the registry reaches them through it without including
 * their headers, as GObject's type system reaches the init functions of
 * its fundamental types. */
G_GNUC_INTERNAL
extern const SymfonicPluginInfo symfonic_builtin_plugin_info;

G_END_DECLS
