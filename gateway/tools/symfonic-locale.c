/* symfonic-locale.c: the binaries' language set-up
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <locale.h>
#include <glib/gi18n.h>

#include "symfonic-locale-private.h"

/* A binary run from the build tree speaks with the catalogs built next to
 * it (build/po/LANG/LC_MESSAGES/, the layout of a locale folder), as the
 * library there loads the build's plugins: a test or a developer sees the
 * translations of this very tree without installing them, and with no
 * variable an installed binary would also honour. */
static const char *
locale_dir (void)
{
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);

  if (self != NULL && g_str_has_prefix (self, SYMFONIC_BUILD_ROOT G_DIR_SEPARATOR_S))
    return SYMFONIC_BUILD_ROOT G_DIR_SEPARATOR_S "po";

  return LOCALEDIR;
}

/* The library's messages (the pipeline loader's among them) share the
 * binaries' text domain, so binding it here translates both. Messages a
 * client reads (HTTP error bodies) are never marked for translation.
 * Numbers keep the C locale's form: the pipeline file reads 0.5, not 0,5,
 * and what the gateway prints with printf() (metrics among it) is read by
 * machines. */
void
symfonic_locale_init (void)
{
  setlocale (LC_ALL, "");
  setlocale (LC_NUMERIC, "C");
  bindtextdomain (GETTEXT_PACKAGE, locale_dir ());
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
}
