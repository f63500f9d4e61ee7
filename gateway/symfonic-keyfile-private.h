/* symfonic-keyfile-private.h: a GKeyFile that remembers where things are
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* GKeyFile parses values but forgets line numbers and merges repeated
 * groups and keys; a pipeline error must name file, line and key, and a
 * repeated key is a mistake to report, not to resolve silently. */
typedef struct _SymfonicKeyFile SymfonicKeyFile;

G_GNUC_INTERNAL
SymfonicKeyFile *symfonic_key_file_new_from_data (const char       *data,
                                                  gsize             length,
                                                  const char       *display_name,
                                                  GError          **error);
G_GNUC_INTERNAL
void             symfonic_key_file_free          (SymfonicKeyFile  *self);
G_GNUC_INTERNAL
GKeyFile        *symfonic_key_file_get_key_file  (SymfonicKeyFile  *self);
G_GNUC_INTERNAL
const char      *symfonic_key_file_get_name      (SymfonicKeyFile  *self);
G_GNUC_INTERNAL
guint            symfonic_key_file_get_line      (SymfonicKeyFile  *self,
                                                  const char       *group,
                                                  const char       *key);
G_GNUC_INTERNAL
void             symfonic_key_file_set_error     (SymfonicKeyFile  *self,
                                                  GError          **error,
                                                  const char       *group,
                                                  const char       *key,
                                                  const char       *format,
                                                  ...) G_GNUC_PRINTF (5, 6);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicKeyFile, symfonic_key_file_free)

G_END_DECLS
