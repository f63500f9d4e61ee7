/* symfonic-transcript.h: a recorded upstream, as JSON lines
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

G_BEGIN_DECLS

typedef struct
{
  /* NULL for a recorded failure */
  SymfonicEvent *event;
  GError        *error;
  guint          delay_ms;
} SymfonicTranscriptEntry;

typedef struct _SymfonicTranscript SymfonicTranscript;

SymfonicTranscript            *symfonic_transcript_new_from_data (const char          *name,
                                                                  const char          *display,
                                                                  const char          *contents,
                                                                  GError             **error);
void                           symfonic_transcript_free          (SymfonicTranscript  *self);
const char                    *symfonic_transcript_get_name      (SymfonicTranscript  *self);
guint                          symfonic_transcript_get_length    (SymfonicTranscript  *self);
const SymfonicTranscriptEntry *symfonic_transcript_get_entry     (SymfonicTranscript  *self,
                                                                  guint                position);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicTranscript, symfonic_transcript_free)

G_END_DECLS
