/* symfonic-provider-source-private.h: what the LLM provider sources share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "symfonic-http-source.h"
#include "symfonic-invocation.h"
#include "symfonic-invocation-private.h"
#include "symfonic-provider-frame-private.h"
#include "symfonic-provider-request-private.h"

G_BEGIN_DECLS

/* One streamed completion, from the request to the stream's end. */
typedef struct _SymfonicProviderRequest SymfonicProviderRequest;

#define SYMFONIC_TYPE_PROVIDER_SOURCE (symfonic_provider_source_get_type ())

G_GNUC_INTERNAL
GType symfonic_provider_source_get_type (void);
G_DECLARE_DERIVABLE_TYPE (SymfonicProviderSource, symfonic_provider_source, SYMFONIC, PROVIDER_SOURCE,
                          SymfonicHttpSource)

/**
 * SymfonicProviderSourceClass:
 * @endpoint: the path under the URL that streams a completion
 * @api: the model API of the requests it sends
 * @add_headers: adds the request headers that carry the key, %NULL when
 *   there is none (and versions), with symfonic_http_source_add_request_header()
 * @write_body: appends the provider's request body for an invocation,
 *   a JSON object
 * @handle_frame: reads one event-stream frame of the provider's, whose
 *   data is @data_length bytes; returns %FALSE with @error set when the
 *   frame ends the stream in failure
 *
 * A provider's wire format; the transport, timeouts, failures and
 * back-pressure are the HTTP source's.
 */
struct _SymfonicProviderSourceClass
{
  SymfonicHttpSourceClass parent_class;

  const char *endpoint;
  /* the API its requests are in */
  SymfonicProviderApi api;

  void      (*add_headers)  (SymfonicProviderSource   *self,
                             const char               *api_key);
  void      (*write_body)   (SymfonicProviderSource   *self,
                             SymfonicInvocation       *invocation,
                             GString                  *out);
  gboolean  (*handle_frame) (SymfonicProviderSource   *self,
                             SymfonicProviderRequest  *request,
                             const char               *event,
                             const char               *data,
                             gsize                     data_length,
                             GError                  **error);
};

G_GNUC_INTERNAL
void        symfonic_provider_source_describe         (SymfonicSource         *source,
                                                       SymfonicProviderTarget *target);
/* A token count an Anthropic source asks its provider for. */
typedef struct _SymfonicTokenCount SymfonicTokenCount;
typedef void (*SymfonicTokenCountFunc) (gint64        input_tokens,
                                        const GError *error,
                                        gpointer      data);

G_GNUC_INTERNAL
SymfonicTokenCount *symfonic_provider_source_count_tokens (SymfonicSource         *source,
                                                           SymfonicInvocation     *invocation,
                                                           SymfonicTokenCountFunc  func,
                                                           gpointer                data);
G_GNUC_INTERNAL
void        symfonic_token_count_cancel               (SymfonicTokenCount     *count);

G_GNUC_INTERNAL
const char *symfonic_provider_source_get_model        (SymfonicProviderSource *self);
G_GNUC_INTERNAL
void        symfonic_provider_source_write_passthrough (SymfonicProviderSource *self,
                                                       SymfonicInvocation     *invocation,
                                                       JsonObject             *body,
                                                       GString                *out);
G_GNUC_INTERNAL
char       *symfonic_provider_source_dup_system       (SymfonicProviderSource *self,
                                                       SymfonicInvocation     *invocation);
G_GNUC_INTERNAL
guint       symfonic_provider_source_get_max_tokens   (SymfonicProviderSource *self,
                                                       SymfonicInvocation     *invocation);
G_GNUC_INTERNAL
void        symfonic_provider_source_write_elements   (GString                *out,
                                                       JsonArray              *array,
                                                       gboolean                after_another);
G_GNUC_INTERNAL
void        symfonic_provider_source_write_settings   (SymfonicProviderSource *self,
                                                       SymfonicInvocation     *invocation,
                                                       JsonArray              *tools,
                                                       const char             *stop_name,
                                                       GString                *out);

G_GNUC_INTERNAL
GString  *symfonic_provider_request_get_scratch      (SymfonicProviderRequest *self);
G_GNUC_INTERNAL
SymfonicJsonScanMemo *
          symfonic_provider_request_get_memo         (SymfonicProviderRequest *self);
G_GNUC_INTERNAL
void     symfonic_provider_request_text              (SymfonicProviderRequest *self,
                                                      const char              *text);
G_GNUC_INTERNAL
void     symfonic_provider_request_text_with_logprobs (SymfonicProviderRequest *self,
                                                       const char              *text,
                                                       JsonObject              *logprobs);
G_GNUC_INTERNAL
void     symfonic_provider_request_thinking          (SymfonicProviderRequest *self,
                                                      const char              *text,
                                                      const char              *signature);
G_GNUC_INTERNAL
gboolean symfonic_provider_request_tool_start        (SymfonicProviderRequest  *self,
                                                      gint64                    index,
                                                      const char               *id,
                                                      const char               *name,
                                                      const char               *arguments,
                                                      GError                  **error);
G_GNUC_INTERNAL
gboolean symfonic_provider_request_tool_arguments    (SymfonicProviderRequest  *self,
                                                      gint64                    index,
                                                      const char               *fragment,
                                                      GError                  **error);
G_GNUC_INTERNAL
void     symfonic_provider_request_set_finish_reason (SymfonicProviderRequest *self,
                                                      const char              *finish_reason,
                                                      const char              *stop_reason,
                                                      const char              *stop_sequence);
G_GNUC_INTERNAL
void     symfonic_provider_request_set_usage_details (SymfonicProviderRequest *self,
                                                      gint64                   cache_read,
                                                      gint64                   cache_creation,
                                                      gint64                   reasoning,
                                                      gboolean                 input_excludes_cache);
G_GNUC_INTERNAL
void     symfonic_provider_request_set_model         (SymfonicProviderRequest *self,
                                                      const char              *model);
G_GNUC_INTERNAL
gboolean symfonic_provider_request_set_usage         (SymfonicProviderRequest   *self,
                                                      const SymfonicUsageCounts *usage,
                                                      GError                   **error);
G_GNUC_INTERNAL
void     symfonic_provider_request_complete          (SymfonicProviderRequest *self);
G_GNUC_INTERNAL
GError  *symfonic_provider_request_failure           (SymfonicProviderRequest *self,
                                                      SymfonicError            code,
                                                      const char              *public_text,
                                                      const char              *format,
                                                      ...) G_GNUC_PRINTF (4, 5);

G_END_DECLS
