/* symfonic-extraction-filter.h: lifts memory-extraction blocks out of a text stream
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

G_BEGIN_DECLS

#define SYMFONIC_TYPE_EXTRACTION_FILTER (symfonic_extraction_filter_get_type ())

G_DECLARE_FINAL_TYPE (SymfonicExtractionFilter, symfonic_extraction_filter, SYMFONIC, EXTRACTION_FILTER, SymfonicTextFilter)

SymfonicExtractionFilter *symfonic_extraction_filter_new         (const char               *open_tag,
                                                                  const char               *close_tag,
                                                                  gsize                     max_block);
void                      symfonic_extraction_filter_free        (SymfonicExtractionFilter *self);
void                      symfonic_extraction_filter_feed        (SymfonicExtractionFilter *self,
                                                                  const char               *text,
                                                                  gsize                     length,
                                                                  GString                  *out);
void                      symfonic_extraction_filter_flush       (SymfonicExtractionFilter *self,
                                                                  GString                  *out);
JsonArray                *symfonic_extraction_filter_get_ops     (SymfonicExtractionFilter *self);
JsonArray                *symfonic_extraction_filter_take_ops    (SymfonicExtractionFilter *self);
guint                     symfonic_extraction_filter_get_dropped (SymfonicExtractionFilter *self);
void                      symfonic_extraction_filter_set_reads_ops (SymfonicExtractionFilter *self,
                                                                    gboolean                  reads_ops);

/* What the filters of one stage share: the tags, made once, so that a
 * stream's filter costs no copy of them. */
typedef struct _SymfonicExtractionSpec SymfonicExtractionSpec;

SymfonicExtractionSpec   *symfonic_extraction_spec_new             (const char             *open_tag,
                                                                    const char             *close_tag);
SymfonicExtractionSpec   *symfonic_extraction_spec_ref             (SymfonicExtractionSpec *spec);
void                      symfonic_extraction_spec_unref           (SymfonicExtractionSpec *spec);
SymfonicExtractionFilter *symfonic_extraction_filter_new_for_spec  (SymfonicExtractionSpec *spec,
                                                                    gsize                   max_block);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicExtractionSpec, symfonic_extraction_spec_unref)

G_END_DECLS
