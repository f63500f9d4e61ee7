/* symfonic-citation-filter.h: removes citation tags from a text stream
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

G_BEGIN_DECLS

#define SYMFONIC_TYPE_CITATION_FILTER (symfonic_citation_filter_get_type ())

G_DECLARE_FINAL_TYPE (SymfonicCitationFilter, symfonic_citation_filter, SYMFONIC, CITATION_FILTER, SymfonicTextFilter)

SymfonicCitationFilter *symfonic_citation_filter_new     (const char * const     *kinds,
                                                          const char             *open_tag,
                                                          const char             *close_tag);
void                    symfonic_citation_filter_free    (SymfonicCitationFilter *self);
void                    symfonic_citation_filter_feed    (SymfonicCitationFilter *self,
                                                          const char             *text,
                                                          gsize                   length,
                                                          GString                *out);
void                    symfonic_citation_filter_flush   (SymfonicCitationFilter *self,
                                                          GString                *out);
guint64                 symfonic_citation_filter_get_removed (SymfonicCitationFilter *self);
guint64                 symfonic_citation_filter_get_blocks_dropped (SymfonicCitationFilter *self);
gboolean                symfonic_citation_filter_block_tag_is_valid (const char         *tag,
                                                                     const char * const *kinds);

/* What the filters of one stage share: the tags, made once, so that a
 * stream's filter costs no copy of them. */
typedef struct _SymfonicCitationSpec SymfonicCitationSpec;

SymfonicCitationSpec   *symfonic_citation_spec_new             (const char * const   *kinds,
                                                                const char           *open_tag,
                                                                const char           *close_tag);
SymfonicCitationSpec   *symfonic_citation_spec_ref             (SymfonicCitationSpec *spec);
void                    symfonic_citation_spec_unref           (SymfonicCitationSpec *spec);
SymfonicCitationFilter *symfonic_citation_filter_new_for_spec  (SymfonicCitationSpec *spec);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicCitationSpec, symfonic_citation_spec_unref)

G_END_DECLS
