/* symfonic-builtin-private.h: the types built into the library
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

/* A type every pipeline file can name without loading a plugin. */
typedef struct
{
  const char *name;
  GType     (*get_type) (void);
} SymfonicBuiltinType;

/* The registry finds the library's own types by name in this table, ended
 * by a NULL name. Some of them live in folders after this one
 * (gateway/providers/), which defines the table: the registry reaches
 * them through it without including their headers, as GObject's type
 * system reaches the init functions of its fundamental types. */
G_GNUC_INTERNAL
extern const SymfonicBuiltinType symfonic_builtin_types[];

G_END_DECLS
