/* symfonic-stream-cap-private.h: a route's running streams, counted against its caps
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-stream-cap-store.h"
#include "symfonic-stream-private.h"

G_BEGIN_DECLS

typedef struct _SymfonicStreamCap SymfonicStreamCap;

typedef enum {
  SYMFONIC_STREAM_CAP_ROUTE,
  SYMFONIC_STREAM_CAP_TENANT,
  SYMFONIC_STREAM_CAP_N_KINDS
} SymfonicStreamCapKind;

/* The outcome of a claim its store answered later: @error is NULL if the
 * stream has its slot, or why it was refused (taken). Not called for a
 * stream that ended meanwhile. */
typedef void (*SymfonicStreamCapFunc) (SymfonicStream *stream,
                                       GError         *error);

G_GNUC_INTERNAL
SymfonicStreamCap *symfonic_stream_cap_new         (const char             *route_name);
G_GNUC_INTERNAL
void               symfonic_stream_cap_free        (SymfonicStreamCap      *self);
G_GNUC_INTERNAL
void               symfonic_stream_cap_set_limit   (SymfonicStreamCap      *self,
                                                    SymfonicStreamCapKind   kind,
                                                    guint                   limit);
G_GNUC_INTERNAL
guint              symfonic_stream_cap_get_limit   (SymfonicStreamCap      *self,
                                                    SymfonicStreamCapKind   kind);
G_GNUC_INTERNAL
void               symfonic_stream_cap_set_store   (SymfonicStreamCap      *self,
                                                    SymfonicStreamCapStore *store);
G_GNUC_INTERNAL
SymfonicStreamCapStore *symfonic_stream_cap_get_store (SymfonicStreamCap   *self);
G_GNUC_INTERNAL
void               symfonic_stream_cap_share_store (SymfonicStreamCap      *self,
                                                    SymfonicStreamCapStore *store);
G_GNUC_INTERNAL
SymfonicAdmitResult symfonic_stream_cap_claim      (SymfonicStreamCap      *self,
                                                    SymfonicStream         *stream,
                                                    SymfonicStreamCapFunc   func,
                                                    GError                **error);
G_GNUC_INTERNAL
void               symfonic_stream_cap_release     (SymfonicStream         *stream);
G_GNUC_INTERNAL
guint64            symfonic_stream_cap_get_refused (SymfonicStreamCap      *self,
                                                    SymfonicStreamCapKind   kind);

G_END_DECLS
