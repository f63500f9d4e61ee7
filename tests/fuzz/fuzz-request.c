/* fuzz-request.c: a request body, decoded as the exchange decodes it
 *
 * The input is the body of a POST to an invocation route: read as strict
 * JSON nested at most SYMFONIC_JSON_MAX_DEPTH deep, then turned into the
 * invocation's query, session and attachments. Either step may refuse;
 * neither may crash, leak, or answer without saying why.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "fuzz-common.h"

int
LLVMFuzzerTestOneInput (const guint8 *data,
                        size_t        size)
{
  g_autoptr(SymfonicInvocation) invocation = g_object_new (SYMFONIC_TYPE_INVOCATION, NULL);
  g_autoptr(JsonNode) body = NULL;
  g_autoptr(GError) error = NULL;
  gboolean decoded;

  body = symfonic_json_parse ((const char *) data, size, SYMFONIC_JSON_MAX_DEPTH, &error);
  g_assert ((body == NULL) == (error != NULL));
  if (body == NULL)
    return 0;

  decoded = symfonic_invocation_set_body (invocation, body, &error);
  g_assert (decoded == (error == NULL));
  if (decoded)
    g_assert (symfonic_invocation_get_query (invocation) != NULL);

  return 0;
}
