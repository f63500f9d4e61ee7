/* test-burst-source.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

G_BEGIN_DECLS

#define TEST_TYPE_BURST_SOURCE (test_burst_source_get_type ())

G_DECLARE_FINAL_TYPE (TestBurstSource, test_burst_source, TEST, BURST_SOURCE, GObject)

gboolean test_burst_source_is_pushing (void);

G_END_DECLS
