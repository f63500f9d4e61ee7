/* symfonic-release-line.h: which stream contract a release line publishes
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <glib.h>

G_BEGIN_DECLS

/**
 * SYMFONIC_TEXT_DELTA_CONTRACT_VERSION:
 *
 * The first release line that publishes the text-delta chunk contract. This
 * is the one definition; a test fails if any other copy disagrees.
 */
#define SYMFONIC_TEXT_DELTA_CONTRACT_VERSION "11.0"

char     *symfonic_numeric_release_line     (const char *version);
int       symfonic_compare_release_lines    (const char *a,
                                             const char *b);
gboolean  symfonic_publishes_text_deltas    (const char *version);

G_END_DECLS
