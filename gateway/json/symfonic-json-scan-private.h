/* symfonic-json-scan-private.h: reading a few members of a JSON object without a tree
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* What a member named in a scan is; a member not named may hold only a
 * string, number, boolean or null, which is stepped over. */
typedef enum
{
  /* a string is kept in the member's slot; any other scalar is as if absent */
  SYMFONIC_JSON_SCAN_STRING,
  /* an object is read with the member's own list; a scalar is as if absent */
  SYMFONIC_JSON_SCAN_OBJECT,
  /* an array of no element or of one object, read with the member's own
   * list; a scalar is as if absent */
  SYMFONIC_JSON_SCAN_FIRST,
  /* present at all: the scan gives up */
  SYMFONIC_JSON_SCAN_REFUSE,
  /* a whole number of at most SYMFONIC_JSON_SCAN_COUNT_DIGITS digits, with
   * no sign, fraction or exponent, has its digits kept in the member's
   * slot; null is as if absent; any other value makes the scan give up */
  SYMFONIC_JSON_SCAN_COUNT,
} SymfonicJsonScanKind;

typedef struct _SymfonicJsonScanMember SymfonicJsonScanMember;

/* Lists end with a member whose name is NULL. */
struct _SymfonicJsonScanMember
{
  const char                   *name;
  SymfonicJsonScanKind          kind;
  guint                         slot;
  const SymfonicJsonScanMember *members;
};

#define SYMFONIC_JSON_SCAN_SLOTS 6
/* any such count fits a gint64 */
#define SYMFONIC_JSON_SCAN_COUNT_DIGITS 18

/* What one stream's last scanned frame was, so that the next frame, which
 * mostly differs from it only in one string, costs only that string. */
typedef struct _SymfonicJsonScanMemo SymfonicJsonScanMemo;

G_GNUC_INTERNAL
SymfonicJsonScanMemo *symfonic_json_scan_memo_new  (void);
G_GNUC_INTERNAL
void                  symfonic_json_scan_memo_free (SymfonicJsonScanMemo *memo);

G_GNUC_INTERNAL
gboolean symfonic_json_scan (const char                   *data,
                             gsize                         length,
                             const SymfonicJsonScanMember *members,
                             SymfonicJsonScanMemo         *memo,
                             GString                      *text,
                             const char                   *slots[SYMFONIC_JSON_SCAN_SLOTS]);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SymfonicJsonScanMemo, symfonic_json_scan_memo_free)

G_END_DECLS
