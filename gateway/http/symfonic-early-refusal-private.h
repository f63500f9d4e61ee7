/* symfonic-early-refusal-private.h: answering before the body is read
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <libsoup/soup.h>

#include "symfonic-error-frame.h"

G_BEGIN_DECLS

G_GNUC_INTERNAL
void symfonic_early_refusal_send_on (GIOStream          *stream,
                                     SymfonicErrorFrame *frame,
                                     const char         *body);
G_GNUC_INTERNAL
void symfonic_early_refusal_send (SoupServerMessage  *message,
                                  SymfonicErrorFrame *frame,
                                  const char         *body);

G_END_DECLS
