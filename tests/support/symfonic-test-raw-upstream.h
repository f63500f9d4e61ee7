/* symfonic-test-raw-upstream.h: an upstream that writes exact bytes
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _SymfonicTestRawUpstream SymfonicTestRawUpstream;

SymfonicTestRawUpstream *symfonic_test_raw_upstream_new          (void);
void                     symfonic_test_raw_upstream_free         (SymfonicTestRawUpstream *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicTestRawUpstream, symfonic_test_raw_upstream_free)

char                    *symfonic_test_raw_upstream_dup_url      (SymfonicTestRawUpstream *self);
void                     symfonic_test_raw_upstream_set_answer   (SymfonicTestRawUpstream *self,
                                                                  const char * const      *pieces,
                                                                  gboolean                 close_after);
void                     symfonic_test_raw_upstream_set_answer_bytes (SymfonicTestRawUpstream *self,
                                                                  GBytes                  *answer,
                                                                  gsize                    send_buffer);
void                     symfonic_test_raw_upstream_set_drop_reused (SymfonicTestRawUpstream *self,
                                                                  gboolean                 drop);
void                     symfonic_test_raw_upstream_close_idle   (SymfonicTestRawUpstream *self);
guint                    symfonic_test_raw_upstream_get_connections (SymfonicTestRawUpstream *self);
guint                    symfonic_test_raw_upstream_get_requests (SymfonicTestRawUpstream *self);
guint                    symfonic_test_raw_upstream_get_blocked_writes (SymfonicTestRawUpstream *self);
gboolean                 symfonic_test_raw_upstream_wait_written (SymfonicTestRawUpstream *self);

G_END_DECLS
