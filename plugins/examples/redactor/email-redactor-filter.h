/* email-redactor-filter.h: replaces e-mail addresses in a text that
 * arrives in pieces
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <symfonic.h>

G_BEGIN_DECLS

#define EXAMPLE_TYPE_EMAIL_REDACTOR_FILTER (example_email_redactor_filter_get_type ())

G_DECLARE_FINAL_TYPE (ExampleEmailRedactorFilter, example_email_redactor_filter,
                      EXAMPLE, EMAIL_REDACTOR_FILTER, SymfonicTextFilter)

GRegex                     *example_email_redactor_filter_new_regex (void);
ExampleEmailRedactorFilter *example_email_redactor_filter_new       (GRegex     *regex,
                                                                     const char *replacement);

G_END_DECLS
