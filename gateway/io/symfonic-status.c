/* symfonic-status.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <libsoup/soup.h>

#include "symfonic-status-private.h"

/* The registered statuses (RFC 9110, RFC 6585, RFC 7725, RFC 8470,
 * RFC 5842, RFC 2295) that libsoup 3.2.3 names "Unknown Error". An error
 * table may choose any status from 400 to 599, and a limiter answers 429.
 * The table is the gateway's own wording, used whatever libsoup knows, so
 * no version fences it. */
static const struct {
  guint       status;
  const char *phrase;
} missing_phrases[] = {
  { 421, "Misdirected Request" },
  { 425, "Too Early" },
  { 426, "Upgrade Required" },
  { 428, "Precondition Required" },
  { 429, "Too Many Requests" },
  { 431, "Request Header Fields Too Large" },
  { 451, "Unavailable For Legal Reasons" },
  { 506, "Variant Also Negotiates" },
  { 508, "Loop Detected" },
  { 511, "Network Authentication Required" },
};

/* The reason phrase of @status: libsoup's, or the registered one where
 * libsoup has none. */
const char *
symfonic_status_get_phrase (guint status)
{
  for (guint i = 0; i < G_N_ELEMENTS (missing_phrases); i++)
    {
      if (missing_phrases[i].status == status)
        return missing_phrases[i].phrase;
    }

  return soup_status_get_phrase (status);
}
