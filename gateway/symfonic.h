/* symfonic.h: the symfonic-gateway library
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#define SYMFONIC_INSIDE

#include "symfonic-version.h"
#include "symfonic-types.h"
#include "symfonic-enums.h"
#include "symfonic-config-file.h"
#include "symfonic-error.h"
#include "symfonic-error-frame.h"
#include "symfonic-error-mapper.h"
#include "symfonic-event.h"
#include "symfonic-init-once.h"
#include "symfonic-invocation.h"
#include "symfonic-json.h"
#include "symfonic-store.h"
#include "symfonic-meter-store.h"
#include "symfonic-stream-cap-store.h"
#include "symfonic-param-spec.h"
#include "symfonic-stage.h"
#include "symfonic-stage-order.h"
#include "symfonic-source.h"
#include "symfonic-stream.h"
#include "symfonic-stream-log.h"
#include "symfonic-tag-matcher.h"
#include "symfonic-text-filter.h"
#include "symfonic-filter-stage.h"
#include "symfonic-http-source.h"
#include "symfonic-timer.h"
#include "symfonic-route.h"
#include "symfonic-run-store.h"
#include "symfonic-memory-run-store.h"
#include "symfonic-memory-store.h"
#include "symfonic-plugin.h"
#include "symfonic-registry.h"
#include "symfonic-release-line.h"
#include "symfonic-recording.h"
#include "symfonic-sse-parser.h"
#include "symfonic-pipeline.h"
#include "symfonic-server.h"
#include "symfonic-utf8.h"

#undef SYMFONIC_INSIDE
