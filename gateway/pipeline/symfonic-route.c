/* symfonic-route.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-enums.h"
#include "symfonic-error-mapper.h"
#include "symfonic-route-private.h"
#include "symfonic-stream-cap-private.h"
#include "symfonic-version.h"

/**
 * SymfonicRoute:
 *
 * An HTTP path bound to a source and an ordered chain of stages. A route
 * of kind %SYMFONIC_ROUTE_KIND_RUNS reads runs from the run store and
 * needs no source.
 *
 * A route is assembled once, when its pipeline is loaded, and is only read
 * afterwards, by every worker thread at once; only the count of its
 * running streams changes, once when a stream is admitted and once when
 * it ends.
 */
struct _SymfonicRoute
{
  GObject            parent_instance;

  char              *name;
  char              *path;
  char              *release_line;
  SymfonicRouteKind  kind;
  SymfonicSource    *source;
  GPtrArray         *stages;
  /* a SymfonicRouteStage for each stage, read on the thread that built
   * the route: a stage with a thread affinity answers only on its own */
  GArray            *stage_infos;
  /* the stage of the chain that maps its failures (borrowed from
   * stages), found when it joined: a failure is no time to search */
  SymfonicErrorMapper *error_mapper;
  guint              max_duration;
  guint              hook_timeout;
  SymfonicStreamCap *cap;
  guint              stall_timeout;
  guint              heartbeat_seconds;
  gboolean           resume;
  guint              resume_frames;
  guint              resume_bytes;
  guint              resume_seconds;
  guint64            max_usage_tokens;
  GStrv              cors_origins;
  guint              resume_token_seconds;
  /* the key resume tokens are signed with: the pipeline's, shared by
   * its routes; NULL issues none and accepts none */
  GBytes            *resume_secret;

  /* what the metrics count for the route, made for its first stream once
   * its stages are known, and the names its labels take from the file */
  SymfonicRouteStats *stats;
  GPtrArray         *stage_names;
  char              *source_name;
  char              *provider_name;
  char              *model;
};

/**
 * SymfonicRouteClass:
 * @parent_class: the parent class
 *
 * The class of #SymfonicRoute, a final type: there is nothing to override.
 */
G_DEFINE_FINAL_TYPE (SymfonicRoute, symfonic_route, G_TYPE_OBJECT)

static void
stage_info_clear (gpointer data)
{
  SymfonicRouteStage *info = data;

  g_clear_pointer (&info->context, g_main_context_unref);
}

enum {
  PROP_0,
  PROP_NAME,
  PROP_PATH,
  PROP_RELEASE_LINE,
  PROP_KIND,
  PROP_SOURCE,
  PROP_MAX_DURATION,
  PROP_HOOK_TIMEOUT,
  PROP_MAX_STREAMS,
  PROP_MAX_STREAMS_PER_TENANT,
  PROP_CAP_STORE,
  PROP_STALL_TIMEOUT,
  PROP_HEARTBEAT_SECONDS,
  PROP_RESUME,
  PROP_RESUME_FRAMES,
  PROP_RESUME_BYTES,
  PROP_RESUME_SECONDS,
  PROP_MAX_USAGE_TOKENS,
  PROP_CORS_ORIGINS,
  PROP_RESUME_TOKEN_SECONDS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
symfonic_route_finalize (GObject *object)
{
  SymfonicRoute *self = (SymfonicRoute *) object;

  g_free (self->name);
  g_free (self->path);
  g_free (self->release_line);
  g_clear_object (&self->source);
  g_ptr_array_unref (self->stages);
  g_array_unref (self->stage_infos);
  symfonic_stream_cap_free (self->cap);
  g_clear_pointer (&self->stats, symfonic_route_stats_free);
  g_clear_pointer (&self->stage_names, g_ptr_array_unref);
  g_free (self->source_name);
  g_free (self->provider_name);
  g_free (self->model);
  g_strfreev (self->cors_origins);
  g_clear_pointer (&self->resume_secret, g_bytes_unref);

  G_OBJECT_CLASS (symfonic_route_parent_class)->finalize (object);
}

static void
symfonic_route_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  SymfonicRoute *self = SYMFONIC_ROUTE (object);

  switch (prop_id)
    {
    case PROP_NAME:
      g_value_set_string (value, self->name);
      break;
    case PROP_PATH:
      g_value_set_string (value, self->path);
      break;
    case PROP_RELEASE_LINE:
      g_value_set_string (value, self->release_line);
      break;
    case PROP_KIND:
      g_value_set_enum (value, self->kind);
      break;
    case PROP_SOURCE:
      g_value_set_object (value, self->source);
      break;
    case PROP_MAX_DURATION:
      g_value_set_uint (value, self->max_duration);
      break;
    case PROP_HOOK_TIMEOUT:
      g_value_set_uint (value, self->hook_timeout);
      break;
    case PROP_MAX_STREAMS:
      g_value_set_uint (value, symfonic_route_get_max_streams (self));
      break;
    case PROP_MAX_STREAMS_PER_TENANT:
      g_value_set_uint (value, symfonic_route_get_max_streams_per_tenant (self));
      break;
    case PROP_STALL_TIMEOUT:
      g_value_set_uint (value, self->stall_timeout);
      break;
    case PROP_HEARTBEAT_SECONDS:
      g_value_set_uint (value, self->heartbeat_seconds);
      break;
    case PROP_RESUME:
      g_value_set_boolean (value, self->resume);
      break;
    case PROP_RESUME_FRAMES:
      g_value_set_uint (value, self->resume_frames);
      break;
    case PROP_RESUME_BYTES:
      g_value_set_uint (value, self->resume_bytes);
      break;
    case PROP_RESUME_SECONDS:
      g_value_set_uint (value, self->resume_seconds);
      break;
    case PROP_MAX_USAGE_TOKENS:
      g_value_set_uint64 (value, self->max_usage_tokens);
      break;
    case PROP_CAP_STORE:
      g_value_set_object (value, symfonic_route_get_cap_store (self));
      break;
    case PROP_CORS_ORIGINS:
      g_value_set_boxed (value, self->cors_origins);
      break;
    case PROP_RESUME_TOKEN_SECONDS:
      g_value_set_uint (value, self->resume_token_seconds);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_route_set_property (GObject      *object,
                             guint         prop_id,
                             const GValue *value,
                             GParamSpec   *pspec)
{
  SymfonicRoute *self = SYMFONIC_ROUTE (object);

  switch (prop_id)
    {
    case PROP_NAME:
      self->name = g_value_dup_string (value);
      break;
    case PROP_PATH:
      self->path = g_value_dup_string (value);
      break;
    case PROP_RELEASE_LINE:
      symfonic_route_set_release_line (self, g_value_get_string (value));
      break;
    case PROP_KIND:
      self->kind = g_value_get_enum (value);
      break;
    case PROP_SOURCE:
      self->source = g_value_dup_object (value);
      break;
    case PROP_MAX_DURATION:
      symfonic_route_set_max_duration (self, g_value_get_uint (value));
      break;
    case PROP_HOOK_TIMEOUT:
      symfonic_route_set_hook_timeout (self, g_value_get_uint (value));
      break;
    case PROP_MAX_STREAMS:
      symfonic_route_set_max_streams (self, g_value_get_uint (value));
      break;
    case PROP_MAX_STREAMS_PER_TENANT:
      symfonic_route_set_max_streams_per_tenant (self, g_value_get_uint (value));
      break;
    case PROP_STALL_TIMEOUT:
      symfonic_route_set_stall_timeout (self, g_value_get_uint (value));
      break;
    case PROP_HEARTBEAT_SECONDS:
      symfonic_route_set_heartbeat_seconds (self, g_value_get_uint (value));
      break;
    case PROP_RESUME:
      symfonic_route_set_resume (self, g_value_get_boolean (value));
      break;
    case PROP_RESUME_FRAMES:
      symfonic_route_set_resume_frames (self, g_value_get_uint (value));
      break;
    case PROP_RESUME_BYTES:
      symfonic_route_set_resume_bytes (self, g_value_get_uint (value));
      break;
    case PROP_RESUME_SECONDS:
      symfonic_route_set_resume_seconds (self, g_value_get_uint (value));
      break;
    case PROP_MAX_USAGE_TOKENS:
      symfonic_route_set_max_usage_tokens (self, g_value_get_uint64 (value));
      break;
    case PROP_CAP_STORE:
      symfonic_route_set_cap_store (self, g_value_get_object (value));
      break;
    case PROP_CORS_ORIGINS:
      symfonic_route_set_cors_origins (self, g_value_get_boxed (value));
      break;
    case PROP_RESUME_TOKEN_SECONDS:
      symfonic_route_set_resume_token_seconds (self, g_value_get_uint (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

/* The caps count under the route's name, which a store shared by other
 * routes and instances needs: it is only known once constructed. */
static void
symfonic_route_constructed (GObject *object)
{
  SymfonicRoute *self = (SymfonicRoute *) object;

  G_OBJECT_CLASS (symfonic_route_parent_class)->constructed (object);

  self->cap = symfonic_stream_cap_new (self->name);
}

static void
symfonic_route_class_init (SymfonicRouteClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = symfonic_route_constructed;
  object_class->finalize = symfonic_route_finalize;
  object_class->get_property = symfonic_route_get_property;
  object_class->set_property = symfonic_route_set_property;

  /**
   * SymfonicRoute:name:
   *
   * The route's name: the NAME of its `[route:NAME]` group.
   */
  properties[PROP_NAME] =
    g_param_spec_string ("name", "Name", "The route's name in its pipeline file",
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicRoute:path:
   *
   * The HTTP path the route serves; a provider route serves its API's
   * paths under it (see symfonic_route_kind_dup_paths()).
   */
  properties[PROP_PATH] =
    g_param_spec_string ("path", "Path", "The HTTP path the route serves",
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicRoute:release-line:
   *
   * The release line the route's streams publish unless a stage (the
   * `release-line` stage) chooses another: the `[gateway]` release line.
   */
  properties[PROP_RELEASE_LINE] =
    g_param_spec_string ("release-line", "Release line", "The release line the route's streams publish by default",
                         SYMFONIC_VERSION,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicRoute:kind:
   *
   * What the route answers with: which wire format it publishes, and
   * which requests it takes.
   */
  properties[PROP_KIND] =
    g_param_spec_enum ("kind", "Kind", "What the route answers with",
                       SYMFONIC_TYPE_ROUTE_KIND, SYMFONIC_ROUTE_KIND_TYPED,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicRoute:source:
   *
   * The source the route's streams read their events from.
   */
  properties[PROP_SOURCE] =
    g_param_spec_object ("source", "Source", "The upstream the route reads; a runs route needs none",
                         SYMFONIC_TYPE_SOURCE,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicRoute:max-duration:
   *
   * The longest a stream of this route may run, in seconds, from the
   * moment it was admitted; past it the stream ends with its one error
   * frame (an upstream timeout) and the upstream is cancelled. 0: no
   * limit.
   */
  properties[PROP_MAX_DURATION] =
    g_param_spec_uint ("max-duration", "Maximum duration", "The longest a stream may run, in seconds; 0 for no limit",
                       0, SYMFONIC_ROUTE_MAX_DURATION_LIMIT, 0,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicRoute:hook-timeout:
   *
   * How long a stage that runs on a thread of its own (a Python or
   * JavaScript stage) may take to answer one call of its begin, process
   * or finish hook for a stream of this route, in seconds, counted from
   * when the stream handed the call over. Past it that stream ends with
   * its one error frame (an upstream timeout, opaque) and the hook is
   * interrupted where its interpreter allows, so that the streams behind
   * it on the same thread go on. 0: no limit.
   */
  properties[PROP_HOOK_TIMEOUT] =
    g_param_spec_uint ("hook-timeout", "Hook timeout",
                       "How long a script stage may take to answer one call of a stream, in seconds; 0 for no limit",
                       0, SYMFONIC_ROUTE_MAX_DURATION_LIMIT, SYMFONIC_ROUTE_DEFAULT_HOOK_TIMEOUT,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicRoute:max-streams:
   *
   * How many streams of this route may run at once, over all workers; the
   * request past it is refused at admission with 503 (`overloaded`) and
   * `Retry-After`. 0: no limit.
   */
  properties[PROP_MAX_STREAMS] =
    g_param_spec_uint ("max-streams", "Maximum streams", "Streams of the route running at once, over all workers; 0 for no limit",
                       0, SYMFONIC_ROUTE_MAX_STREAMS_LIMIT, 0,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicRoute:max-streams-per-tenant:
   *
   * How many streams of this route one tenant may run at once, over all
   * workers; requests without a tenant share one count. The request past
   * it is refused like one past #SymfonicRoute:max-streams. 0: no limit.
   */
  properties[PROP_MAX_STREAMS_PER_TENANT] =
    g_param_spec_uint ("max-streams-per-tenant", "Maximum streams per tenant",
                       "Streams of the route one tenant may run at once, over all workers; 0 for no limit",
                       0, SYMFONIC_ROUTE_MAX_STREAMS_LIMIT, 0,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicRoute:stall-timeout:
   *
   * How long a streaming client may take no byte at all while frames wait
   * for it, in seconds (what counts is what it took, not how often the
   * gateway could write); past it the stream ends with its one error frame
   * (`slow_client`) at a frame boundary, which the client gets a short
   * grace, renewed while it reads, to read before its connection is
   * closed. 0: no limit.
   */
  properties[PROP_STALL_TIMEOUT] =
    g_param_spec_uint ("stall-timeout", "Stall timeout",
                       "How long a client may read nothing while frames wait, in seconds; 0 for no limit",
                       0, SYMFONIC_ROUTE_MAX_DURATION_LIMIT, SYMFONIC_ROUTE_DEFAULT_STALL_TIMEOUT,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * SymfonicRoute:heartbeat-seconds:
   *
   * After this many seconds without a frame, a stream gets a `: keepalive`
   * comment, between two frames, so that proxies and clients do not take
   * a quiet upstream (a long first token, a stage holding text back) for
   * a dead connection. 0: none.
   */
  properties[PROP_HEARTBEAT_SECONDS] =
    g_param_spec_uint ("heartbeat-seconds", "Heartbeat seconds",
                       "Seconds without a frame before a keepalive comment; 0 for none",
                       0, SYMFONIC_ROUTE_MAX_DURATION_LIMIT, 0,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicRoute:resume:
   *
   * Whether the route's runs keep their recent frames in the server's
   * #SymfonicRunStore, so that a client whose connection broke reads on
   * from a `kind=runs` route with `Last-Event-ID`; a run whose client left
   * then goes on for #SymfonicRoute:resume-seconds instead of being
   * cancelled.
   */
  properties[PROP_RESUME] =
    g_param_spec_boolean ("resume", "Resume", "Whether a run outlives its client and can be read again",
                          FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicRoute:resume-frames:
   *
   * How many of a resumable run's most recent frames are kept.
   */
  properties[PROP_RESUME_FRAMES] =
    g_param_spec_uint ("resume-frames", "Resume frames", "How many recent frames a resumable run keeps",
                       1, SYMFONIC_ROUTE_MAX_RESUME_FRAMES, SYMFONIC_ROUTE_DEFAULT_RESUME_FRAMES,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicRoute:resume-bytes:
   *
   * How many bytes of a resumable run's most recent frames are kept: past
   * it the oldest go, as past #SymfonicRoute:resume-frames, and a frame
   * larger than it is sent but not kept. Reading the run from before the
   * frames kept is then %SYMFONIC_ERROR_GONE; the run's own client does
   * not notice.
   */
  properties[PROP_RESUME_BYTES] =
    g_param_spec_uint ("resume-bytes", "Resume bytes", "How many bytes of recent frames a resumable run keeps",
                       SYMFONIC_ROUTE_MIN_RESUME_BYTES, SYMFONIC_ROUTE_MAX_RESUME_BYTES,
                       SYMFONIC_ROUTE_DEFAULT_RESUME_BYTES,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicRoute:resume-seconds:
   *
   * How long a resumable run goes on without a client, in seconds, before
   * it is cancelled; also how long its frames stay readable after it
   * ended.
   */
  properties[PROP_RESUME_SECONDS] =
    g_param_spec_uint ("resume-seconds", "Resume seconds",
                       "How long a resumable run goes on, and stays readable, without a client, in seconds",
                       1, SYMFONIC_ROUTE_MAX_DURATION_LIMIT, SYMFONIC_ROUTE_DEFAULT_RESUME_SECONDS,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * SymfonicRoute:max-usage-tokens:
   *
   * The most tokens, input and output together, that the upstream of one
   * of the route's streams may report using. An upstream's usage report is
   * not trusted: one past this bound (or past the `max_tokens` a source
   * asked its upstream for) is a lie that ends the stream with its error
   * frame, and metering charges at most the bound.
   */
  properties[PROP_MAX_USAGE_TOKENS] =
    g_param_spec_uint64 ("max-usage-tokens", "Maximum usage tokens",
                         "The most input plus output tokens an upstream may report for one stream",
                         1, SYMFONIC_ROUTE_MAX_USAGE_TOKENS_LIMIT, SYMFONIC_ROUTE_DEFAULT_MAX_USAGE_TOKENS,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * SymfonicRoute:cap-store:
   *
   * Where #SymfonicRoute:max-streams and
   * #SymfonicRoute:max-streams-per-tenant count the route's running
   * streams. A store that several instances share makes the caps hold
   * for the whole cluster; in a pipeline file, `cap-store` names a
   * `[store:NAME]` group or a registered store type. Unset, the route
   * counts its streams in this process, alone.
   */
  properties[PROP_CAP_STORE] =
    g_param_spec_object ("cap-store", "Cap store",
                         "Where max-streams and max-streams-per-tenant count running streams: a [store:NAME] "
                         "or a registered store type; this process alone when unset",
                         SYMFONIC_TYPE_STREAM_CAP_STORE,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * SymfonicRoute:cors-origins:
   *
   * The web origins (`https://app.example.com`, as a browser sends them
   * in `Origin`) whose pages may call the route: their CORS preflights
   * are answered, and the route's answers, refusals included, carry
   * `Access-Control-Allow-Origin` for them and expose the gateway's own
   * headers. A preflight from any other origin is refused with 403, and
   * its answers carry no CORS header. `*` alone admits every origin, and
   * only on a route that authenticates no one: the pipeline loader
   * refuses it on a route with an authentication stage. Unset, the route
   * answers no preflight.
   */
  properties[PROP_CORS_ORIGINS] =
    g_param_spec_boxed ("cors-origins", "CORS origins",
                        "Origins (scheme://host[:port]) whose pages may call the route; * for all, only on a "
                        "route that authenticates no one",
                        G_TYPE_STRV,
                        G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicRoute:resume-token-seconds:
   *
   * How long the resume token of one of the route's resumable runs is
   * valid, in seconds from the run's start: a browser's `EventSource`
   * reads the run from a `kind=runs` route with it, and reconnects with
   * it, until then. Cover the run's #SymfonicRoute:max-duration and its
   * #SymfonicRoute:resume-seconds. A route issues tokens only when the
   * pipeline names a `resume-token-secret-file`.
   */
  properties[PROP_RESUME_TOKEN_SECONDS] =
    g_param_spec_uint ("resume-token-seconds", "Resume token seconds",
                       "How long a resumable run's resume token is valid, in seconds from the run's start",
                       1, SYMFONIC_ROUTE_MAX_DURATION_LIMIT, SYMFONIC_ROUTE_DEFAULT_RESUME_TOKEN_SECONDS,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
symfonic_route_init (SymfonicRoute *self)
{
  self->stages = g_ptr_array_new_with_free_func (g_object_unref);
  self->stage_infos = g_array_new (FALSE, FALSE, sizeof (SymfonicRouteStage));
  g_array_set_clear_func (self->stage_infos, stage_info_clear);
  self->stall_timeout = SYMFONIC_ROUTE_DEFAULT_STALL_TIMEOUT;
  self->hook_timeout = SYMFONIC_ROUTE_DEFAULT_HOOK_TIMEOUT;
  self->resume_frames = SYMFONIC_ROUTE_DEFAULT_RESUME_FRAMES;
  self->resume_bytes = SYMFONIC_ROUTE_DEFAULT_RESUME_BYTES;
  self->resume_seconds = SYMFONIC_ROUTE_DEFAULT_RESUME_SECONDS;
  self->max_usage_tokens = SYMFONIC_ROUTE_DEFAULT_MAX_USAGE_TOKENS;
  self->resume_token_seconds = SYMFONIC_ROUTE_DEFAULT_RESUME_TOKEN_SECONDS;
}

static void
update_uint (SymfonicRoute *self,
             guint         *field,
             guint          value,
             GParamSpec    *pspec)
{
  if (*field == value)
    return;

  *field = value;
  g_object_notify_by_pspec (G_OBJECT (self), pspec);
}

/**
 * symfonic_route_new:
 * @name: the route's name
 * @path: the HTTP path, starting with `/`
 * @kind: what the route answers with
 * @source: (nullable): the upstream; %NULL only for a route of kind
 *   %SYMFONIC_ROUTE_KIND_RUNS, which reads runs from the run store
 *
 * Creates a route with no stages.
 *
 * Returns: (transfer full): a new #SymfonicRoute
 */
SymfonicRoute *
symfonic_route_new (const char        *name,
                    const char        *path,
                    SymfonicRouteKind  kind,
                    SymfonicSource    *source)
{
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (path != NULL && path[0] == '/', NULL);
  g_return_val_if_fail (source != NULL ? SYMFONIC_IS_SOURCE (source) : kind == SYMFONIC_ROUTE_KIND_RUNS, NULL);

  return g_object_new (SYMFONIC_TYPE_ROUTE,
                       "name", name,
                       "path", path,
                       "kind", kind,
                       "source", source,
                       NULL);
}

/**
 * symfonic_route_add_stage:
 * @self: a #SymfonicRoute
 * @stage: the stage to append
 *
 * Appends @stage to the route's chain. Only while the route is assembled,
 * before it serves.
 */
void
symfonic_route_add_stage (SymfonicRoute *self,
                          SymfonicStage *stage)
{
  SymfonicRouteStage info;

  g_return_if_fail (SYMFONIC_IS_ROUTE (self));
  g_return_if_fail (SYMFONIC_IS_STAGE (stage));

  info.phase = symfonic_stage_get_admission_phase (stage);
  info.context = symfonic_stage_type_get_main_context (G_OBJECT_TYPE (stage));
  info.lane = NULL;
  if (info.context != NULL)
    {
      g_main_context_ref (info.context);
      info.lane = symfonic_stage_lane_get (info.context);
    }
  info.process = symfonic_stage_get_process_func (stage);
  info.admit = symfonic_stage_get_admit_func (stage);
  info.admits = symfonic_stage_admits (stage);
  info.finishes = symfonic_stage_finishes (stage);
  g_ptr_array_add (self->stages, g_object_ref (stage));
  g_array_append_val (self->stage_infos, info);

  /* the last one decides: it sees failures as the client will */
  if (SYMFONIC_IS_ERROR_MAPPER (stage))
    self->error_mapper = SYMFONIC_ERROR_MAPPER (stage);
}

/**
 * symfonic_route_get_name:
 * @self: a #SymfonicRoute
 *
 * Gets the route's name, the NAME of its `[route:NAME]` group.
 *
 * Returns: the route's name
 */
const char *
symfonic_route_get_name (SymfonicRoute *self)
{
  g_return_val_if_fail (SYMFONIC_IS_ROUTE (self), NULL);

  return self->name;
}

/**
 * symfonic_route_get_path:
 * @self: a #SymfonicRoute
 *
 * Gets the HTTP path the route serves.
 *
 * Returns: the HTTP path
 */
const char *
symfonic_route_get_path (SymfonicRoute *self)
{
  g_return_val_if_fail (SYMFONIC_IS_ROUTE (self), NULL);

  return self->path;
}

/**
 * symfonic_route_get_release_line:
 * @self: a #SymfonicRoute
 *
 * Gets the route's #SymfonicRoute:release-line.
 *
 * Returns: the release line the route's streams publish unless a stage
 *   chooses another
 */
const char *
symfonic_route_get_release_line (SymfonicRoute *self)
{
  g_return_val_if_fail (SYMFONIC_IS_ROUTE (self), NULL);

  return self->release_line;
}

/**
 * symfonic_route_set_release_line:
 * @self: a #SymfonicRoute
 * @release_line: (nullable): a release line; %NULL for the build's version
 *
 * Sets the route's default release line. Only while the route is
 * assembled, before it serves.
 */
void
symfonic_route_set_release_line (SymfonicRoute *self,
                                 const char    *release_line)
{
  g_return_if_fail (SYMFONIC_IS_ROUTE (self));

  if (release_line == NULL)
    release_line = SYMFONIC_VERSION;
  if (g_strcmp0 (self->release_line, release_line) == 0)
    return;

  g_free (self->release_line);
  self->release_line = g_strdup (release_line);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RELEASE_LINE]);
}

/**
 * symfonic_route_get_max_duration:
 * @self: a #SymfonicRoute
 *
 * Gets the route's #SymfonicRoute:max-duration.
 *
 * Returns: the longest a stream of this route may run, in seconds; 0 when
 *   there is no limit
 */
guint
symfonic_route_get_max_duration (SymfonicRoute *self)
{
  g_return_val_if_fail (SYMFONIC_IS_ROUTE (self), 0);

  return self->max_duration;
}

/**
 * symfonic_route_set_max_duration:
 * @self: a #SymfonicRoute
 * @seconds: the longest a stream may run, in seconds; 0 for no limit
 *
 * Bounds the duration of the route's streams. Only while the route is
 * assembled, before it serves.
 */
void
symfonic_route_set_max_duration (SymfonicRoute *self,
                                 guint          seconds)
{
  g_return_if_fail (SYMFONIC_IS_ROUTE (self));
  g_return_if_fail (seconds <= SYMFONIC_ROUTE_MAX_DURATION_LIMIT);

  if (self->max_duration == seconds)
    return;

  self->max_duration = seconds;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_DURATION]);
}

/**
 * symfonic_route_get_hook_timeout:
 * @self: a #SymfonicRoute
 *
 * Gets the route's #SymfonicRoute:hook-timeout.
 *
 * Returns: how long a stage on a thread of its own may take to answer one
 *   call, in seconds; 0 when there is no limit
 */
guint
symfonic_route_get_hook_timeout (SymfonicRoute *self)
{
  g_return_val_if_fail (SYMFONIC_IS_ROUTE (self), 0);

  return self->hook_timeout;
}

/**
 * symfonic_route_set_hook_timeout:
 * @self: a #SymfonicRoute
 * @seconds: how long a stage on a thread of its own may take to answer
 *   one call, in seconds; 0 for no limit
 *
 * Bounds each call of a stream's hooks on a stage's own thread, see
 * #SymfonicRoute:hook-timeout. Only while the route is assembled, before
 * it serves.
 */
void
symfonic_route_set_hook_timeout (SymfonicRoute *self,
                                 guint          seconds)
{
  g_return_if_fail (SYMFONIC_IS_ROUTE (self));
  g_return_if_fail (seconds <= SYMFONIC_ROUTE_MAX_DURATION_LIMIT);

  if (self->hook_timeout == seconds)
    return;

  self->hook_timeout = seconds;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_HOOK_TIMEOUT]);
}

static void
set_stream_limit (SymfonicRoute         *self,
                  SymfonicStreamCapKind  kind,
                  guint                  limit,
                  GParamSpec            *pspec)
{
  if (symfonic_stream_cap_get_limit (self->cap, kind) == limit)
    return;

  symfonic_stream_cap_set_limit (self->cap, kind, limit);
  g_object_notify_by_pspec (G_OBJECT (self), pspec);
}

/**
 * symfonic_route_get_max_streams:
 * @self: a #SymfonicRoute
 *
 * Gets the route's #SymfonicRoute:max-streams.
 *
 * Returns: how many streams of this route may run at once; 0 when there
 *   is no limit
 */
guint
symfonic_route_get_max_streams (SymfonicRoute *self)
{
  g_return_val_if_fail (SYMFONIC_IS_ROUTE (self), 0);

  return symfonic_stream_cap_get_limit (self->cap, SYMFONIC_STREAM_CAP_ROUTE);
}

/**
 * symfonic_route_set_max_streams:
 * @self: a #SymfonicRoute
 * @max_streams: streams that may run at once; 0 for no limit
 *
 * Bounds the route's running streams. Only while the route is assembled,
 * before it serves.
 */
void
symfonic_route_set_max_streams (SymfonicRoute *self,
                                guint          max_streams)
{
  g_return_if_fail (SYMFONIC_IS_ROUTE (self));
  g_return_if_fail (max_streams <= SYMFONIC_ROUTE_MAX_STREAMS_LIMIT);

  set_stream_limit (self, SYMFONIC_STREAM_CAP_ROUTE, max_streams, properties[PROP_MAX_STREAMS]);
}

/**
 * symfonic_route_get_max_streams_per_tenant:
 * @self: a #SymfonicRoute
 *
 * Gets the route's #SymfonicRoute:max-streams-per-tenant.
 *
 * Returns: how many streams of this route one tenant may run at once; 0
 *   when there is no limit
 */
guint
symfonic_route_get_max_streams_per_tenant (SymfonicRoute *self)
{
  g_return_val_if_fail (SYMFONIC_IS_ROUTE (self), 0);

  return symfonic_stream_cap_get_limit (self->cap, SYMFONIC_STREAM_CAP_TENANT);
}

/**
 * symfonic_route_set_max_streams_per_tenant:
 * @self: a #SymfonicRoute
 * @max_streams: streams one tenant may run at once; 0 for no limit
 *
 * Bounds each tenant's running streams on the route. Only while the route
 * is assembled, before it serves.
 */
void
symfonic_route_set_max_streams_per_tenant (SymfonicRoute *self,
                                           guint          max_streams)
{
  g_return_if_fail (SYMFONIC_IS_ROUTE (self));
  g_return_if_fail (max_streams <= SYMFONIC_ROUTE_MAX_STREAMS_LIMIT);

  set_stream_limit (self, SYMFONIC_STREAM_CAP_TENANT, max_streams, properties[PROP_MAX_STREAMS_PER_TENANT]);
}

#define OPENAI_INVOKE_SUFFIX "/chat/completions"
#define MODELS_SUFFIX "/models"
#define OPENAI_RESPONSES_SUFFIX "/responses"
#define ANTHROPIC_INVOKE_SUFFIX "/messages"
#define ANTHROPIC_COUNT_SUFFIX "/messages/count_tokens"

/* The HTTP paths a route of @kind at @path serves: a provider kind serves
 * its API's endpoints under @path, as the provider's SDKs expect with @path
 * as their base URL. */
char **
symfonic_route_kind_dup_paths (SymfonicRouteKind  kind,
                               const char        *path)
{
  /* "/" as the base keeps the endpoints at "/chat/completions", not "//…" */
  const char *base = g_str_equal (path, "/") ? "" : path;
  char **paths = g_new0 (char *, 4);

  switch (kind)
    {
    case SYMFONIC_ROUTE_KIND_OPENAI:
      paths[0] = g_strconcat (base, OPENAI_INVOKE_SUFFIX, NULL);
      paths[1] = g_strconcat (base, MODELS_SUFFIX, NULL);
      paths[2] = g_strconcat (base, OPENAI_RESPONSES_SUFFIX, NULL);
      break;
    case SYMFONIC_ROUTE_KIND_ANTHROPIC:
      paths[0] = g_strconcat (base, ANTHROPIC_INVOKE_SUFFIX, NULL);
      paths[1] = g_strconcat (base, MODELS_SUFFIX, NULL);
      paths[2] = g_strconcat (base, ANTHROPIC_COUNT_SUFFIX, NULL);
      break;
    case SYMFONIC_ROUTE_KIND_TYPED:
    case SYMFONIC_ROUTE_KIND_CHUNKS:
    case SYMFONIC_ROUTE_KIND_CHAT:
    case SYMFONIC_ROUTE_KIND_RESUME:
    default:
      paths[0] = g_strdup (path);
      break;
    }

  return paths;
}

/* Whether @path is under a provider route's base path, the API root its
 * clients' SDKs are given: @rest is then what follows the base, from its
 * slash. */
gboolean
symfonic_route_serves_under (SymfonicRoute  *self,
                             const char     *path,
                             const char    **rest)
{
  const char *base = g_str_equal (self->path, "/") ? "" : self->path;
  gsize length = strlen (base);

  if ((self->kind != SYMFONIC_ROUTE_KIND_OPENAI && self->kind != SYMFONIC_ROUTE_KIND_ANTHROPIC) ||
      strncmp (path, base, length) != 0 || path[length] != '/')
    return FALSE;

  *rest = path + length;
  return TRUE;
}

/* An item after @prefix in @rest: `/responses/{id}`, one segment, or
 * `/models/{id}`, whose id may have slashes (`org/model`). */
static gboolean
is_item_of (const char *rest,
            const char *prefix,
            gboolean    slashes)
{
  gsize length = strlen (prefix);

  return strncmp (rest, prefix, length) == 0 && rest[length] == '/' && rest[length + 1] != '\0' &&
         (slashes || strchr (rest + length + 1, '/') == NULL);
}

/* Which of the route's endpoints @path, one of its served paths or an item
 * under one, is. */
SymfonicEndpoint
symfonic_route_get_endpoint (SymfonicRoute *self,
                             const char    *path)
{
  const char *rest;

  if (!symfonic_route_serves_under (self, path, &rest))
    return SYMFONIC_ENDPOINT_INVOKE;
  if (g_str_equal (rest, MODELS_SUFFIX))
    return SYMFONIC_ENDPOINT_MODELS;
  if (is_item_of (rest, MODELS_SUFFIX, TRUE))
    return SYMFONIC_ENDPOINT_MODEL;
  if (self->kind == SYMFONIC_ROUTE_KIND_OPENAI && g_str_equal (rest, OPENAI_RESPONSES_SUFFIX))
    return SYMFONIC_ENDPOINT_RESPONSES;
  if (self->kind == SYMFONIC_ROUTE_KIND_OPENAI && is_item_of (rest, OPENAI_RESPONSES_SUFFIX, FALSE))
    return SYMFONIC_ENDPOINT_RESPONSE;
  if (self->kind == SYMFONIC_ROUTE_KIND_ANTHROPIC && g_str_equal (rest, ANTHROPIC_COUNT_SUFFIX))
    return SYMFONIC_ENDPOINT_COUNT_TOKENS;

  return SYMFONIC_ENDPOINT_INVOKE;
}

/* The method an endpoint takes. */
const char *
symfonic_route_endpoint_method (SymfonicRoute    *self,
                                SymfonicEndpoint  endpoint)
{
  switch (endpoint)
    {
    case SYMFONIC_ENDPOINT_MODELS:
    case SYMFONIC_ENDPOINT_MODEL:
    case SYMFONIC_ENDPOINT_RESPONSE:
      return "GET";
    case SYMFONIC_ENDPOINT_RESPONSES:
    case SYMFONIC_ENDPOINT_COUNT_TOKENS:
      return "POST";
    case SYMFONIC_ENDPOINT_INVOKE:
    default:
      return self->kind == SYMFONIC_ROUTE_KIND_RUNS ? "GET" : "POST";
    }
}

/**
 * symfonic_route_get_cap_store:
 * @self: a #SymfonicRoute
 *
 * Gets the store the route's stream caps count in.
 *
 * Returns: (transfer none) (nullable): where the route counts its running
 *   streams: its #SymfonicRoute:cap-store, or the store it keeps in this
 *   process; %NULL while it has no cap
 */
SymfonicStreamCapStore *
symfonic_route_get_cap_store (SymfonicRoute *self)
{
  g_return_val_if_fail (SYMFONIC_IS_ROUTE (self), NULL);

  return symfonic_stream_cap_get_store (self->cap);
}

/**
 * symfonic_route_set_cap_store:
 * @self: a #SymfonicRoute
 * @store: (nullable): where to count the route's running streams, or
 *   %NULL to count them in this process
 *
 * Sets #SymfonicRoute:cap-store. Only while the route is assembled,
 * before it serves.
 */
void
symfonic_route_set_cap_store (SymfonicRoute          *self,
                              SymfonicStreamCapStore *store)
{
  g_return_if_fail (SYMFONIC_IS_ROUTE (self));
  g_return_if_fail (store == NULL || SYMFONIC_IS_STREAM_CAP_STORE (store));

  if (store != NULL && symfonic_stream_cap_get_store (self->cap) == store)
    return;

  symfonic_stream_cap_set_store (self->cap, store != NULL ? g_object_ref (store) : NULL);
  /* back to a store of its own, if it has a cap */
  for (guint kind = 0; store == NULL && kind < SYMFONIC_STREAM_CAP_N_KINDS; kind++)
    symfonic_stream_cap_set_limit (self->cap, kind, symfonic_stream_cap_get_limit (self->cap, kind));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CAP_STORE]);
}

/* Only while the route is assembled: a capped route without a
 * cap-store counts its streams in @store, its server's (see
 * symfonic_stream_cap_share_store()). */
void
symfonic_route_share_cap_store (SymfonicRoute          *self,
                                SymfonicStreamCapStore *store)
{
  symfonic_stream_cap_share_store (self->cap, store);
}

/* Counts @stream against the route's caps, or refuses it; a store that
 * answers later tells @func. */
SymfonicAdmitResult
symfonic_route_claim_stream (SymfonicRoute          *self,
                             SymfonicStream         *stream,
                             SymfonicStreamCapFunc   func,
                             GError                **error)
{
  return symfonic_stream_cap_claim (self->cap, stream, func, error);
}

/* Gives back what symfonic_route_claim_stream() took, if anything. */
void
symfonic_route_release_stream (SymfonicRoute  *self,
                               SymfonicStream *stream)
{
  symfonic_stream_cap_release (stream);
}

/* Streams refused at max-streams (@per_tenant false) or at
 * max-streams-per-tenant since the route was loaded. */
guint64
symfonic_route_get_refused_streams (SymfonicRoute *self,
                                    gboolean       per_tenant)
{
  return symfonic_stream_cap_get_refused (self->cap, per_tenant ? SYMFONIC_STREAM_CAP_TENANT
                                                                : SYMFONIC_STREAM_CAP_ROUTE);
}

/**
 * symfonic_route_get_stall_timeout:
 * @self: a #SymfonicRoute
 *
 * Gets the route's #SymfonicRoute:stall-timeout.
 *
 * Returns: how long a streaming client may read nothing while frames wait,
 *   in seconds; 0 when there is no limit
 */
guint
symfonic_route_get_stall_timeout (SymfonicRoute *self)
{
  g_return_val_if_fail (SYMFONIC_IS_ROUTE (self), 0);

  return self->stall_timeout;
}

/**
 * symfonic_route_set_stall_timeout:
 * @self: a #SymfonicRoute
 * @seconds: how long a client may read nothing, in seconds; 0 for no limit
 *
 * Bounds how long a stream waits for a client that stopped reading. Only
 * while the route is assembled, before it serves.
 */
void
symfonic_route_set_stall_timeout (SymfonicRoute *self,
                                  guint          seconds)
{
  g_return_if_fail (SYMFONIC_IS_ROUTE (self));
  g_return_if_fail (seconds <= SYMFONIC_ROUTE_MAX_DURATION_LIMIT);

  if (self->stall_timeout == seconds)
    return;

  self->stall_timeout = seconds;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STALL_TIMEOUT]);
}

/**
 * symfonic_route_get_heartbeat_seconds:
 * @self: a #SymfonicRoute
 *
 * Gets the route's #SymfonicRoute:heartbeat-seconds.
 *
 * Returns: seconds without a frame before a stream gets a keepalive
 *   comment; 0 when it gets none
 */
guint
symfonic_route_get_heartbeat_seconds (SymfonicRoute *self)
{
  g_return_val_if_fail (SYMFONIC_IS_ROUTE (self), 0);

  return self->heartbeat_seconds;
}

/**
 * symfonic_route_set_heartbeat_seconds:
 * @self: a #SymfonicRoute
 * @seconds: seconds without a frame before a keepalive comment; 0 for none
 *
 * Sets the route's heartbeat. Only while the route is assembled, before
 * it serves.
 */
void
symfonic_route_set_heartbeat_seconds (SymfonicRoute *self,
                                      guint          seconds)
{
  g_return_if_fail (SYMFONIC_IS_ROUTE (self));
  g_return_if_fail (seconds <= SYMFONIC_ROUTE_MAX_DURATION_LIMIT);

  update_uint (self, &self->heartbeat_seconds, seconds, properties[PROP_HEARTBEAT_SECONDS]);
}

/**
 * symfonic_route_get_max_usage_tokens:
 * @self: a #SymfonicRoute
 *
 * Gets the route's #SymfonicRoute:max-usage-tokens.
 *
 * Returns: the most input plus output tokens an upstream may report for
 *   one of the route's streams
 */
guint64
symfonic_route_get_max_usage_tokens (SymfonicRoute *self)
{
  g_return_val_if_fail (SYMFONIC_IS_ROUTE (self), 0);

  return self->max_usage_tokens;
}

/**
 * symfonic_route_set_max_usage_tokens:
 * @self: a #SymfonicRoute
 * @tokens: the most input plus output tokens a stream's upstream may
 *   report, at least 1
 *
 * Bounds the usage an upstream may claim for one stream. Only while the
 * route is assembled, before it serves.
 */
void
symfonic_route_set_max_usage_tokens (SymfonicRoute *self,
                                     guint64        tokens)
{
  g_return_if_fail (SYMFONIC_IS_ROUTE (self));
  g_return_if_fail (tokens >= 1 && tokens <= SYMFONIC_ROUTE_MAX_USAGE_TOKENS_LIMIT);

  if (self->max_usage_tokens == tokens)
    return;

  self->max_usage_tokens = tokens;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_USAGE_TOKENS]);
}

/**
 * symfonic_route_get_resume:
 * @self: a #SymfonicRoute
 *
 * Gets the route's #SymfonicRoute:resume.
 *
 * Returns: whether the route's runs can be read again after their client
 *   left
 */
gboolean
symfonic_route_get_resume (SymfonicRoute *self)
{
  g_return_val_if_fail (SYMFONIC_IS_ROUTE (self), FALSE);

  return self->resume;
}

/**
 * symfonic_route_set_resume:
 * @self: a #SymfonicRoute
 * @resume: whether runs are kept for a client that comes back
 *
 * Makes the route's runs resumable. Only while the route is assembled,
 * before it serves.
 */
void
symfonic_route_set_resume (SymfonicRoute *self,
                           gboolean       resume)
{
  g_return_if_fail (SYMFONIC_IS_ROUTE (self));

  resume = !!resume;
  if (self->resume == resume)
    return;

  self->resume = resume;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RESUME]);
}

/**
 * symfonic_route_get_resume_frames:
 * @self: a #SymfonicRoute
 *
 * Gets the route's #SymfonicRoute:resume-frames.
 *
 * Returns: how many recent frames a resumable run keeps
 */
guint
symfonic_route_get_resume_frames (SymfonicRoute *self)
{
  g_return_val_if_fail (SYMFONIC_IS_ROUTE (self), 0);

  return self->resume_frames;
}

/**
 * symfonic_route_set_resume_frames:
 * @self: a #SymfonicRoute
 * @frames: how many recent frames a resumable run keeps, at least 1
 *
 * Bounds what a resumable run keeps. Only while the route is assembled,
 * before it serves.
 */
void
symfonic_route_set_resume_frames (SymfonicRoute *self,
                                  guint          frames)
{
  g_return_if_fail (SYMFONIC_IS_ROUTE (self));
  g_return_if_fail (frames >= 1 && frames <= SYMFONIC_ROUTE_MAX_RESUME_FRAMES);

  update_uint (self, &self->resume_frames, frames, properties[PROP_RESUME_FRAMES]);
}

/**
 * symfonic_route_get_resume_bytes:
 * @self: a #SymfonicRoute
 *
 * Gets the route's #SymfonicRoute:resume-bytes.
 *
 * Returns: how many bytes of recent frames a resumable run keeps
 */
guint
symfonic_route_get_resume_bytes (SymfonicRoute *self)
{
  g_return_val_if_fail (SYMFONIC_IS_ROUTE (self), 0);

  return self->resume_bytes;
}

/**
 * symfonic_route_set_resume_bytes:
 * @self: a #SymfonicRoute
 * @bytes: how many bytes of recent frames a resumable run keeps, from
 *   %SYMFONIC_ROUTE_MIN_RESUME_BYTES to %SYMFONIC_ROUTE_MAX_RESUME_BYTES
 *
 * Bounds what a resumable run keeps, in bytes. Only while the route is
 * assembled, before it serves.
 */
void
symfonic_route_set_resume_bytes (SymfonicRoute *self,
                                 guint          bytes)
{
  g_return_if_fail (SYMFONIC_IS_ROUTE (self));
  g_return_if_fail (bytes >= SYMFONIC_ROUTE_MIN_RESUME_BYTES && bytes <= SYMFONIC_ROUTE_MAX_RESUME_BYTES);

  update_uint (self, &self->resume_bytes, bytes, properties[PROP_RESUME_BYTES]);
}

/**
 * symfonic_route_get_resume_seconds:
 * @self: a #SymfonicRoute
 *
 * Gets the route's #SymfonicRoute:resume-seconds.
 *
 * Returns: how long a resumable run goes on, and stays readable, without
 *   a client, in seconds
 */
guint
symfonic_route_get_resume_seconds (SymfonicRoute *self)
{
  g_return_val_if_fail (SYMFONIC_IS_ROUTE (self), 0);

  return self->resume_seconds;
}

/**
 * symfonic_route_set_resume_seconds:
 * @self: a #SymfonicRoute
 * @seconds: how long a run goes on without a client, at least 1
 *
 * Bounds how long a resumable run waits for its client. Only while the
 * route is assembled, before it serves.
 */
void
symfonic_route_set_resume_seconds (SymfonicRoute *self,
                                   guint          seconds)
{
  g_return_if_fail (SYMFONIC_IS_ROUTE (self));
  g_return_if_fail (seconds >= 1 && seconds <= SYMFONIC_ROUTE_MAX_DURATION_LIMIT);

  update_uint (self, &self->resume_seconds, seconds, properties[PROP_RESUME_SECONDS]);
}

/**
 * symfonic_route_get_cors_origins:
 * @self: a #SymfonicRoute
 *
 * Gets the route's #SymfonicRoute:cors-origins.
 *
 * Returns: (transfer none) (nullable) (array zero-terminated=1): the
 *   origins whose pages may call the route, `*` for all; %NULL when no
 *   page of another origin may
 */
const char * const *
symfonic_route_get_cors_origins (SymfonicRoute *self)
{
  g_return_val_if_fail (SYMFONIC_IS_ROUTE (self), NULL);

  return (const char * const *) self->cors_origins;
}

/**
 * symfonic_route_set_cors_origins:
 * @self: a #SymfonicRoute
 * @origins: (nullable) (array zero-terminated=1): origins as browsers send
 *   them (`scheme://host[:port]`), or `*` alone; %NULL or empty for none
 *
 * Lets pages of @origins call the route; blanks around an origin and
 * empty entries are dropped. Only while the route is assembled, before
 * it serves.
 */
void
symfonic_route_set_cors_origins (SymfonicRoute      *self,
                                 const char * const *origins)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_auto(GStrv) kept = NULL;

  g_return_if_fail (SYMFONIC_IS_ROUTE (self));

  /* as a file lists them: `a; b;` */
  for (guint i = 0; origins != NULL && origins[i] != NULL; i++)
    {
      g_autofree char *origin = g_strstrip (g_strdup (origins[i]));

      if (*origin != '\0')
        g_strv_builder_add (builder, origin);
    }
  kept = g_strv_builder_end (builder);
  if (kept[0] == NULL)
    g_clear_pointer (&kept, g_strfreev);

  if (self->cors_origins == NULL && kept == NULL)
    return;
  if (self->cors_origins != NULL && kept != NULL &&
      g_strv_equal ((const char * const *) self->cors_origins, (const char * const *) kept))
    return;

  g_strfreev (self->cors_origins);
  self->cors_origins = g_steal_pointer (&kept);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CORS_ORIGINS]);
}

/**
 * symfonic_route_get_resume_token_seconds:
 * @self: a #SymfonicRoute
 *
 * Gets the route's #SymfonicRoute:resume-token-seconds.
 *
 * Returns: how long a resumable run's resume token is valid, in seconds
 *   from the run's start
 */
guint
symfonic_route_get_resume_token_seconds (SymfonicRoute *self)
{
  g_return_val_if_fail (SYMFONIC_IS_ROUTE (self), 0);

  return self->resume_token_seconds;
}

/**
 * symfonic_route_set_resume_token_seconds:
 * @self: a #SymfonicRoute
 * @seconds: how long a resume token is valid, at least 1
 *
 * Bounds the life of the resume tokens the route's runs are given. Only
 * while the route is assembled, before it serves.
 */
void
symfonic_route_set_resume_token_seconds (SymfonicRoute *self,
                                         guint          seconds)
{
  g_return_if_fail (SYMFONIC_IS_ROUTE (self));
  g_return_if_fail (seconds >= 1 && seconds <= SYMFONIC_ROUTE_MAX_DURATION_LIMIT);

  update_uint (self, &self->resume_token_seconds, seconds, properties[PROP_RESUME_TOKEN_SECONDS]);
}

/* The entry of cors-origins that admits @origin, as the file spells it
 * (so that an answer never repeats what the client sent), or NULL. */
const char *
symfonic_route_match_origin (SymfonicRoute *self,
                             const char    *origin)
{
  if (self->cors_origins == NULL || origin == NULL)
    return NULL;

  for (guint i = 0; self->cors_origins[i] != NULL; i++)
    {
      if (g_str_equal (self->cors_origins[i], "*") || g_str_equal (self->cors_origins[i], origin))
        return self->cors_origins[i];
    }

  return NULL;
}

/* A stage that admits on the request head is there to authenticate it
 * (SymfonicAdmissionPhase): such a route has credentials to protect. */
gboolean
symfonic_route_authenticates (SymfonicRoute *self)
{
  for (guint i = 0; i < self->stage_infos->len; i++)
    {
      const SymfonicRouteStage *info = &g_array_index (self->stage_infos, SymfonicRouteStage, i);

      if (info->admits && info->phase == SYMFONIC_ADMISSION_PHASE_HEAD)
        return TRUE;
    }

  return FALSE;
}

void
symfonic_route_set_resume_secret (SymfonicRoute *self,
                                  GBytes        *secret)
{
  g_clear_pointer (&self->resume_secret, g_bytes_unref);
  if (secret != NULL)
    self->resume_secret = g_bytes_ref (secret);
}

GBytes *
symfonic_route_get_resume_secret (SymfonicRoute *self)
{
  return self->resume_secret;
}

/**
 * symfonic_route_get_kind:
 * @self: a #SymfonicRoute
 *
 * Gets the route's kind: which wire format it publishes and which requests
 * it takes.
 *
 * Returns: what the route answers with
 */
SymfonicRouteKind
symfonic_route_get_kind (SymfonicRoute *self)
{
  g_return_val_if_fail (SYMFONIC_IS_ROUTE (self), SYMFONIC_ROUTE_KIND_TYPED);

  return self->kind;
}

/**
 * symfonic_route_get_source:
 * @self: a #SymfonicRoute
 *
 * Gets the source the route's streams read from.
 *
 * Returns: (transfer none) (nullable): the upstream, %NULL for a route of
 *   kind %SYMFONIC_ROUTE_KIND_RUNS made without one
 */
SymfonicSource *
symfonic_route_get_source (SymfonicRoute *self)
{
  g_return_val_if_fail (SYMFONIC_IS_ROUTE (self), NULL);

  return self->source;
}

/**
 * symfonic_route_get_n_stages:
 * @self: a #SymfonicRoute
 *
 * Gets how many stages the route's chain has, for
 * symfonic_route_get_stage().
 *
 * Returns: how many stages the chain has
 */
guint
symfonic_route_get_n_stages (SymfonicRoute *self)
{
  g_return_val_if_fail (SYMFONIC_IS_ROUTE (self), 0);

  return self->stages->len;
}

/**
 * symfonic_route_get_stage:
 * @self: a #SymfonicRoute
 * @position: a position in the chain
 *
 * Gets one stage of the route's chain, in the order it runs.
 *
 * Returns: (transfer none): the stage at @position
 */
SymfonicStage *
symfonic_route_get_stage (SymfonicRoute *self,
                          guint          position)
{
  g_return_val_if_fail (SYMFONIC_IS_ROUTE (self), NULL);
  g_return_val_if_fail (position < self->stages->len, NULL);

  return g_ptr_array_index (self->stages, position);
}

/* The stage at @position as it was when it joined the route. */
const SymfonicRouteStage *
symfonic_route_get_stage_info (SymfonicRoute *self,
                               guint          position)
{
  g_return_val_if_fail (SYMFONIC_IS_ROUTE (self), NULL);
  g_return_val_if_fail (position < self->stage_infos->len, NULL);

  return &g_array_index (self->stage_infos, SymfonicRouteStage, position);
}

/* The counts of the route's streams, on every thread. */
SymfonicRouteStats *
symfonic_route_get_stats (SymfonicRoute *self)
{
  SymfonicRouteStats *stats = __atomic_load_n (&self->stats, __ATOMIC_ACQUIRE);
  SymfonicRouteStats *expected = NULL;

  if (G_LIKELY (stats != NULL))
    return stats;

  stats = symfonic_route_stats_new (self->stages->len);
  if (!__atomic_compare_exchange_n (&self->stats, &expected, stats, FALSE, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    {
      symfonic_route_stats_free (stats);
      stats = expected;
    }

  return stats;
}

/* The names the metrics and traces label the route's stages and source
 * with: the groups of its pipeline file, and the source's type (the
 * provider) and the model it asks for, if it has a `model`. Set once, as
 * the route is assembled. */
void
symfonic_route_set_telemetry_names (SymfonicRoute     *self,
                                    const char *const *stage_names,
                                    const char        *source_name,
                                    const char        *source_type)
{
  GParamSpec *pspec;

  g_clear_pointer (&self->stage_names, g_ptr_array_unref);
  self->stage_names = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; stage_names != NULL && stage_names[i] != NULL; i++)
    g_ptr_array_add (self->stage_names, g_strdup (stage_names[i]));
  g_free (self->source_name);
  self->source_name = g_strdup (source_name);
  g_free (self->provider_name);
  self->provider_name = g_strdup (source_type);
  g_clear_pointer (&self->model, g_free);
  if (self->source == NULL)
    return;
  pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (self->source), "model");
  if (pspec != NULL && G_PARAM_SPEC_VALUE_TYPE (pspec) == G_TYPE_STRING)
    g_object_get (self->source, "model", &self->model, NULL);
}

/* A stage's name in the file, or its type's for a route made in code. */
const char *
symfonic_route_get_stage_name (SymfonicRoute *self,
                               guint          position)
{
  if (self->stage_names != NULL && position < self->stage_names->len)
    return g_ptr_array_index (self->stage_names, position);

  return G_OBJECT_TYPE_NAME (g_ptr_array_index (self->stages, position));
}

const char *
symfonic_route_get_source_name (SymfonicRoute *self)
{
  if (self->source_name != NULL)
    return self->source_name;

  return self->source != NULL ? G_OBJECT_TYPE_NAME (self->source) : "";
}

const char *
symfonic_route_get_provider_name (SymfonicRoute *self)
{
  if (self->provider_name != NULL)
    return self->provider_name;

  return self->source != NULL ? G_OBJECT_TYPE_NAME (self->source) : "";
}

/* The model the source asks its upstream for, or NULL. */
const char *
symfonic_route_get_model (SymfonicRoute *self)
{
  return self->model;
}

/**
 * symfonic_route_get_error_mapper:
 * @self: a #SymfonicRoute
 *
 * Gets the stage that maps the route's failures to error frames: the last
 * stage of the chain implementing #SymfonicErrorMapper.
 *
 * Returns: (transfer none) (nullable): the mapper, or %NULL when no stage
 *   of the route maps errors
 */
SymfonicErrorMapper *
symfonic_route_get_error_mapper (SymfonicRoute *self)
{
  g_return_val_if_fail (SYMFONIC_IS_ROUTE (self), NULL);

  return self->error_mapper;
}

/**
 * symfonic_route_map_error:
 * @self: a #SymfonicRoute
 * @error: a failure of one of the route's requests
 *
 * Maps @error to what the client gets, for every entry point of the route:
 * through the route's error mapper, or without one through
 * symfonic_error_frame_new_for_error().
 *
 * Returns: (transfer full): the frame the client gets
 */
SymfonicErrorFrame *
symfonic_route_map_error (SymfonicRoute *self,
                          const GError  *error)
{
  g_return_val_if_fail (SYMFONIC_IS_ROUTE (self), NULL);
  g_return_val_if_fail (error != NULL, NULL);

  if (self->error_mapper != NULL)
    return symfonic_error_mapper_map (self->error_mapper, error, self);

  return symfonic_error_frame_new_for_error (error);
}
