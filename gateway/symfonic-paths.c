/* symfonic-paths.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#define _GNU_SOURCE
#include "config.h"

#include <dlfcn.h>

#include "symfonic-paths-private.h"

/* The library itself knows whether it was loaded from the build tree, so
 * every host (the binaries, tests, a Python interpreter) finds the plugins
 * and data that belong to the same build without being told. */
gboolean
symfonic_paths_is_uninstalled (void)
{
  static gsize initialized = 0;
  static gboolean uninstalled = FALSE;

  if (g_once_init_enter (&initialized))
    {
      Dl_info info;

      if (dladdr ((const void *) symfonic_paths_is_uninstalled, &info) != 0 &&
          info.dli_fname != NULL)
        {
          g_autofree char *canonical = g_canonicalize_filename (info.dli_fname, NULL);

          uninstalled = g_str_has_prefix (canonical, SYMFONIC_BUILD_ROOT G_DIR_SEPARATOR_S);
        }
      g_once_init_leave (&initialized, 1);
    }

  return uninstalled;
}

const char *
symfonic_paths_plugin_dir (void)
{
  return symfonic_paths_is_uninstalled () ? SYMFONIC_BUILD_PLUGIN_DIR : SYMFONIC_PLUGIN_DIR;
}

const char *
symfonic_paths_data_dir (void)
{
  return symfonic_paths_is_uninstalled () ? SYMFONIC_SOURCE_DATA_DIR : SYMFONIC_DATA_DIR;
}
