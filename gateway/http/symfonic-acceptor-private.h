/* symfonic-acceptor-private.h: a worker's side of the listening socket
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <libsoup/soup.h>

#include "symfonic-connection-private.h"

G_BEGIN_DECLS

typedef struct _SymfonicAcceptor SymfonicAcceptor;

typedef void (*SymfonicAcceptorReleasedFunc) (gpointer user_data);

G_GNUC_INTERNAL
SymfonicAcceptor *symfonic_acceptor_new  (SoupServer                       *server,
                                          GSocket                          *listener,
                                          const SymfonicConnectionTimeouts *timeouts,
                                          guint                             max_connections,
                                          SymfonicAcceptorReleasedFunc      released,
                                          gpointer                          released_data,
                                          GError                          **error);
G_GNUC_INTERNAL
void              symfonic_acceptor_drain (SymfonicAcceptor                 *self);
G_GNUC_INTERNAL
void              symfonic_acceptor_free (SymfonicAcceptor                 *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicAcceptor, symfonic_acceptor_free)

G_END_DECLS
