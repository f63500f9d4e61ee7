/* symfonic-param-spec.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-param-spec.h"

/* A #GFile property names a regular file unless it carries this mark: the
 * pipeline loader checks each against what it must be while it can still
 * name the key, and only the property knows which it is. */
static GQuark
folder_mark_quark (void)
{
  return g_quark_from_static_string ("symfonic-param-spec-folder");
}

/**
 * symfonic_param_spec_folder:
 * @name: the property's name, which is also its key in a pipeline file
 * @nick: a short name for it
 * @blurb: what the folder holds
 * @flags: the property's flags
 *
 * Creates a #GFile property naming a folder rather than a file. A pipeline
 * file sets it as it sets any #GFile property, relative to the pipeline
 * file's folder, and the loader refuses a value that is not a directory
 * the gateway may read, naming the file, the line and the key; any other
 * #GFile property must name a regular file (see
 * symfonic_config_file_check()).
 *
 * Returns: (transfer floating): the property's #GParamSpec
 */
GParamSpec *
symfonic_param_spec_folder (const char  *name,
                            const char  *nick,
                            const char  *blurb,
                            GParamFlags  flags)
{
  GParamSpec *pspec;

  g_return_val_if_fail (name != NULL, NULL);

  pspec = g_param_spec_object (name, nick, blurb, G_TYPE_FILE, flags);
  g_param_spec_set_qdata (pspec, folder_mark_quark (), GINT_TO_POINTER (TRUE));

  return pspec;
}

/**
 * symfonic_param_spec_is_folder:
 * @pspec: a #GParamSpec
 *
 * Whether @pspec was made by symfonic_param_spec_folder().
 *
 * Returns: %TRUE if the property names a folder
 */
gboolean
symfonic_param_spec_is_folder (GParamSpec *pspec)
{
  g_return_val_if_fail (G_IS_PARAM_SPEC (pspec), FALSE);

  return g_param_spec_get_qdata (pspec, folder_mark_quark ()) != NULL;
}
