/* symfonic-citation-filter-private.h: what the filters of one stage share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-citation-filter.h"

G_BEGIN_DECLS

typedef struct _SymfonicCitationSpec SymfonicCitationSpec;

SymfonicCitationSpec   *symfonic_citation_spec_new             (const char * const   *kinds,
                                                                const char           *open_tag,
                                                                const char           *close_tag);
SymfonicCitationSpec   *symfonic_citation_spec_ref             (SymfonicCitationSpec *spec);
void                    symfonic_citation_spec_unref           (SymfonicCitationSpec *spec);
SymfonicCitationFilter *symfonic_citation_filter_new_for_spec  (SymfonicCitationSpec *spec);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicCitationSpec, symfonic_citation_spec_unref)

G_END_DECLS
