/* symfonic-paths.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#define _GNU_SOURCE
#include "config.h"

#include <dlfcn.h>

#ifdef HAVE_INTROSPECTION
#include <girepository.h>
#endif

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

/* Script plugins import the Symfonic typelib, which introspection looks
 * for only in $GI_TYPELIB_PATH and its own default folder (/usr/lib/...):
 * neither holds the build's, nor that of an install under another prefix
 * (/usr/local by default). The folder of the typelib that belongs to this
 * very library goes first, as its plugin folder does, so that a script in
 * a plugin folder loads with no variable set, and gets this library's
 * typelib even when $GI_TYPELIB_PATH names another copy's. Done once,
 * before any interpreter starts: the search path has no lock. */
void
symfonic_paths_prepend_typelib_dir (void)
{
#ifdef HAVE_INTROSPECTION
  static gsize prepended = 0;

  if (g_once_init_enter (&prepended))
    {
      g_irepository_prepend_search_path (symfonic_paths_is_uninstalled () ? SYMFONIC_BUILD_TYPELIB_DIR
                                                                          : SYMFONIC_TYPELIB_DIR);
      g_once_init_leave (&prepended, 1);
    }
#endif
}
