/* symfonic-connection-private.h: one accepted client connection, as
 * libsoup reads and writes it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <libsoup/soup.h>

G_BEGIN_DECLS

#define SYMFONIC_TYPE_CONNECTION (symfonic_connection_get_type ())

G_GNUC_INTERNAL
G_DECLARE_FINAL_TYPE (SymfonicConnection, symfonic_connection, SYMFONIC, CONNECTION, GIOStream)

/* How long each phase of a request may take, in microseconds. */
typedef struct
{
  gint64 header;
  gint64 body;
  gint64 keepalive;
} SymfonicConnectionTimeouts;

/* What a client whose socket turned readable during a response did. */
typedef enum {
  SYMFONIC_PEER_QUIET,
  SYMFONIC_PEER_LEFT,
  /* it sent more: a pipelined request, so it is alive */
  SYMFONIC_PEER_SENT,
} SymfonicPeerState;

typedef void (*SymfonicConnectionClosedFunc) (SymfonicConnection *connection,
                                              gpointer            user_data);

G_GNUC_INTERNAL
SymfonicConnection *symfonic_connection_new           (GSocketConnection                *base,
                                                       const SymfonicConnectionTimeouts *timeouts,
                                                       SymfonicConnectionClosedFunc      closed,
                                                       gpointer                          user_data);
G_GNUC_INTERNAL
void                symfonic_connection_serve         (SymfonicConnection *self,
                                                       SoupServer         *server,
                                                       GSocketAddress     *local);
G_GNUC_INTERNAL
void                symfonic_connection_hand_back     (SymfonicConnection *self);
G_GNUC_INTERNAL
GIOStream          *symfonic_connection_steal_base    (SymfonicConnection *self);
G_GNUC_INTERNAL
GSocketAddress     *symfonic_connection_get_remote_address (SymfonicConnection *self);
G_GNUC_INTERNAL
void                symfonic_connection_expire        (SymfonicConnection *self);
G_GNUC_INTERNAL
void                symfonic_connection_close_when_idle (SymfonicConnection *self);
G_GNUC_INTERNAL
void                symfonic_connection_response_done (SymfonicConnection *self);
G_GNUC_INTERNAL
SymfonicConnection *symfonic_connection_for_message   (SoupServerMessage  *message);
G_GNUC_INTERNAL
GSocket            *symfonic_connection_get_message_socket (SoupServerMessage *message);

G_GNUC_INTERNAL
SymfonicPeerState   symfonic_connection_peek_peer     (int                 fd);

G_END_DECLS
