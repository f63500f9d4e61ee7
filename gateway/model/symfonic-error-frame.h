/* symfonic-error-frame.h: a failure as the client sees it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <glib-object.h>

G_BEGIN_DECLS

/**
 * SYMFONIC_OPAQUE_DETAIL:
 *
 * The detail every server-side fault shows the client: its real message
 * goes to the log, never to the socket.
 */
#define SYMFONIC_OPAQUE_DETAIL "Internal server error"

#define SYMFONIC_TYPE_ERROR_FRAME (symfonic_error_frame_get_type ())

typedef struct _SymfonicErrorFrame SymfonicErrorFrame;

GType               symfonic_error_frame_get_type       (void) G_GNUC_CONST;
SymfonicErrorFrame *symfonic_error_frame_new            (guint                status,
                                                         const char          *detail,
                                                         const char          *code);
SymfonicErrorFrame *symfonic_error_frame_new_for_error  (const GError        *error);
SymfonicErrorFrame *symfonic_error_frame_ref            (SymfonicErrorFrame  *self);
void                symfonic_error_frame_unref          (SymfonicErrorFrame  *self);
guint               symfonic_error_frame_get_status     (SymfonicErrorFrame  *self);
const char         *symfonic_error_frame_get_detail     (SymfonicErrorFrame  *self);
const char         *symfonic_error_frame_get_code       (SymfonicErrorFrame  *self);
void                symfonic_error_frame_set_header     (SymfonicErrorFrame  *self,
                                                         const char          *name,
                                                         const char          *value);
const char         *symfonic_error_frame_get_header     (SymfonicErrorFrame  *self,
                                                         const char          *name);
char              **symfonic_error_frame_list_headers   (SymfonicErrorFrame  *self);
char               *symfonic_error_frame_to_json        (SymfonicErrorFrame  *self);
char               *symfonic_error_frame_to_sse         (SymfonicErrorFrame  *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicErrorFrame, symfonic_error_frame_unref)

G_END_DECLS
