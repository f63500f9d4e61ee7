/* symfonic-extraction-filter-private.h: what the filters of one stage share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-extraction-filter.h"

G_BEGIN_DECLS

typedef struct _SymfonicExtractionSpec SymfonicExtractionSpec;

SymfonicExtractionSpec   *symfonic_extraction_spec_new             (const char             *open_tag,
                                                                    const char             *close_tag);
SymfonicExtractionSpec   *symfonic_extraction_spec_ref             (SymfonicExtractionSpec *spec);
void                      symfonic_extraction_spec_unref           (SymfonicExtractionSpec *spec);
SymfonicExtractionFilter *symfonic_extraction_filter_new_for_spec  (SymfonicExtractionSpec *spec,
                                                                    gsize                   max_block);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicExtractionSpec, symfonic_extraction_spec_unref)

G_END_DECLS
