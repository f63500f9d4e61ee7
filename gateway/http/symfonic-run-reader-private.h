/* symfonic-run-reader-private.h: a client reading a resumable run again
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <libsoup/soup.h>

#include "symfonic-invocation.h"
#include "symfonic-run-store.h"

G_BEGIN_DECLS

typedef struct _SymfonicRunReader SymfonicRunReader;

typedef enum {
  /* the first frames are read: the stream may start */
  SYMFONIC_RUN_READER_READY,
  /* refused, with the error to answer */
  SYMFONIC_RUN_READER_REFUSED,
  /* the store answers later, through the opened callback */
  SYMFONIC_RUN_READER_PENDING,
} SymfonicRunReaderOpen;

/* The first read's answer: %NULL, or the refusal. */
typedef void (*SymfonicRunReaderOpened) (const GError *error,
                                         gpointer      data);

G_GNUC_INTERNAL
char              *symfonic_run_reader_parse_run_id (const char  *path,
                                                     const char  *route_path,
                                                     GError     **error);
G_GNUC_INTERNAL
SymfonicRunReader *symfonic_run_reader_new    (SymfonicRunStore   *store,
                                               SoupServerMessage  *message,
                                               const char         *route_path,
                                               SymfonicInvocation *invocation,
                                               GError            **error);
G_GNUC_INTERNAL
SymfonicRunReader *symfonic_run_reader_new_for_run (SymfonicRunStore    *store,
                                                    const char          *run_id,
                                                    guint64              after,
                                                    SymfonicInvocation  *invocation);
G_GNUC_INTERNAL
SymfonicRunReaderOpen symfonic_run_reader_open (SymfonicRunReader        *self,
                                                SymfonicRunReaderOpened   opened,
                                                gpointer                  data,
                                                GError                  **error);
G_GNUC_INTERNAL
const char        *symfonic_run_reader_get_run_id (SymfonicRunReader *self);
G_GNUC_INTERNAL
gboolean           symfonic_run_reader_has_all (SymfonicRunReader *self);
G_GNUC_INTERNAL
void               symfonic_run_reader_start  (SymfonicRunReader  *self,
                                               SoupServerMessage  *message,
                                               guint               stall_seconds,
                                               guint               heartbeat_seconds,
                                               GDestroyNotify      finished,
                                               gpointer            data);
G_GNUC_INTERNAL
guint64            symfonic_run_reader_get_frames (SymfonicRunReader *self);
G_GNUC_INTERNAL
void               symfonic_run_reader_free   (SymfonicRunReader  *self);

G_END_DECLS
