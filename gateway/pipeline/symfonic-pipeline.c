/* symfonic-pipeline.c: the pipeline file loader
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <glib/gi18n-lib.h>

#include "symfonic-enums.h"
#include "symfonic-config-file-private.h"
#include "symfonic-error.h"
#include "symfonic-paths-private.h"
#include "symfonic-pipeline-private.h"
#include "symfonic-property-private.h"
#include "symfonic-route-private.h"
#include "symfonic-stage-order-private.h"
#include "symfonic-store.h"
#include "symfonic-version.h"

/* A secret is a key, not a document: far more than any key needs. */
#define RESUME_SECRET_MAX_BYTES 4096

/**
 * SymfonicPipeline:
 *
 * The routes, stages and sources a pipeline file declares, configured and
 * ready to serve.
 *
 * The file is a #GKeyFile. `[gateway]` sets the pipeline's own properties
 * (#SymfonicPipeline:listen, #SymfonicPipeline:workers,
 * #SymfonicPipeline:release-line, the connection limits, the
 * #SymfonicPipeline:run-store). Each `[stage:NAME]`, `[source:NAME]` and
 * `[store:NAME]` group creates one object of the registered `type`, every
 * other key setting the property of that name. A store is shared by every
 * stage and route that names it in a store key (a metering stage's
 * `store`, a route's `cap-store`, the gateway's `run-store`), which may
 * also name a registered store type, to have a store of its own made;
 * `[route:NAME]` binds a `path` to a
 * `source` and a list of `stages`, its other keys setting the properties
 * of the #SymfonicRoute (symfonic_pipeline_list_keys() lists the keys of
 * both groups). Loading is strict: anything unknown or
 * unconvertible is an error naming the file, the line and the key, and
 * objects that need resources open them while loading.
 */
struct _SymfonicPipeline
{
  GObject     parent_instance;

  GFile      *file;
  char       *listen;
  guint       workers;
  guint64     max_body_bytes;
  char       *release_line;
  guint       header_timeout;
  guint       body_timeout;
  guint       keepalive_timeout;
  guint       max_connections;
  guint       drain_seconds;
  GStrv       python_path;

  SymfonicRunStore *run_store;

  char       *metrics_listen;
  GFile      *metrics_token_file;
  gboolean    metrics_tenant_label;
  guint       metrics_tenants;
  char       *otlp_endpoint;
  double      trace_sample_ratio;
  char       *service_name;
  gboolean    playground;
  GFile      *resume_token_secret_file;
  /* what that file holds, read when the pipeline loads */
  GBytes     *resume_secret;

  GHashTable *stages;
  /* stage name -> what its group said (see stage_settings()) */
  GHashTable *stage_settings;
  /* [store:NAME] name -> store, and what its group said */
  GHashTable *stores;
  GHashTable *store_settings;
  /* every store the file made, a group's or one a key named by type, and
   * how to name it in a message */
  GPtrArray  *all_stores;
  GPtrArray  *store_labels;
  GHashTable *sources;
  GPtrArray  *routes;
  GHashTable *routes_by_path;
};

/**
 * SymfonicPipelineClass:
 * @parent_class: the parent class
 *
 * The class of #SymfonicPipeline, a final type: there is nothing to override.
 */
G_DEFINE_FINAL_TYPE (SymfonicPipeline, symfonic_pipeline, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_LISTEN,
  PROP_WORKERS,
  PROP_MAX_BODY_BYTES,
  PROP_RELEASE_LINE,
  PROP_HEADER_TIMEOUT,
  PROP_BODY_TIMEOUT,
  PROP_KEEPALIVE_TIMEOUT,
  PROP_MAX_CONNECTIONS,
  PROP_DRAIN_SECONDS,
  PROP_RUN_STORE,
  PROP_METRICS_LISTEN,
  PROP_METRICS_TOKEN_FILE,
  PROP_METRICS_TENANT_LABEL,
  PROP_METRICS_TENANTS,
  PROP_OTLP_ENDPOINT,
  PROP_TRACE_SAMPLE_RATIO,
  PROP_SERVICE_NAME,
  PROP_PYTHON_PATH,
  PROP_PLAYGROUND,
  PROP_RESUME_TOKEN_SECRET_FILE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
symfonic_pipeline_finalize (GObject *object)
{
  SymfonicPipeline *self = (SymfonicPipeline *) object;

  g_clear_object (&self->file);
  g_free (self->listen);
  g_free (self->release_line);
  g_free (self->metrics_listen);
  g_clear_object (&self->metrics_token_file);
  g_clear_object (&self->resume_token_secret_file);
  g_clear_pointer (&self->resume_secret, g_bytes_unref);
  g_free (self->otlp_endpoint);
  g_free (self->service_name);
  g_strfreev (self->python_path);
  g_hash_table_unref (self->stages);
  g_hash_table_unref (self->stage_settings);
  g_hash_table_unref (self->stores);
  g_hash_table_unref (self->store_settings);
  g_ptr_array_unref (self->all_stores);
  g_ptr_array_unref (self->store_labels);
  g_clear_object (&self->run_store);
  g_hash_table_unref (self->sources);
  g_ptr_array_unref (self->routes);
  g_hash_table_unref (self->routes_by_path);

  G_OBJECT_CLASS (symfonic_pipeline_parent_class)->finalize (object);
}

static void
symfonic_pipeline_get_property (GObject    *object,
                                guint       prop_id,
                                GValue     *value,
                                GParamSpec *pspec)
{
  SymfonicPipeline *self = SYMFONIC_PIPELINE (object);

  switch (prop_id)
    {
    case PROP_LISTEN:
      g_value_set_string (value, self->listen);
      break;
    case PROP_WORKERS:
      g_value_set_uint (value, self->workers);
      break;
    case PROP_MAX_BODY_BYTES:
      g_value_set_uint64 (value, self->max_body_bytes);
      break;
    case PROP_RELEASE_LINE:
      g_value_set_string (value, self->release_line);
      break;
    case PROP_HEADER_TIMEOUT:
      g_value_set_uint (value, self->header_timeout);
      break;
    case PROP_BODY_TIMEOUT:
      g_value_set_uint (value, self->body_timeout);
      break;
    case PROP_KEEPALIVE_TIMEOUT:
      g_value_set_uint (value, self->keepalive_timeout);
      break;
    case PROP_MAX_CONNECTIONS:
      g_value_set_uint (value, self->max_connections);
      break;
    case PROP_DRAIN_SECONDS:
      g_value_set_uint (value, self->drain_seconds);
      break;
    case PROP_RUN_STORE:
      g_value_set_object (value, self->run_store);
      break;
    case PROP_METRICS_LISTEN:
      g_value_set_string (value, self->metrics_listen);
      break;
    case PROP_METRICS_TOKEN_FILE:
      g_value_set_object (value, self->metrics_token_file);
      break;
    case PROP_RESUME_TOKEN_SECRET_FILE:
      g_value_set_object (value, self->resume_token_secret_file);
      break;
    case PROP_METRICS_TENANT_LABEL:
      g_value_set_boolean (value, self->metrics_tenant_label);
      break;
    case PROP_METRICS_TENANTS:
      g_value_set_uint (value, self->metrics_tenants);
      break;
    case PROP_OTLP_ENDPOINT:
      g_value_set_string (value, self->otlp_endpoint);
      break;
    case PROP_TRACE_SAMPLE_RATIO:
      g_value_set_double (value, self->trace_sample_ratio);
      break;
    case PROP_SERVICE_NAME:
      g_value_set_string (value, self->service_name);
      break;
    case PROP_PYTHON_PATH:
      g_value_set_boxed (value, self->python_path);
      break;
    case PROP_PLAYGROUND:
      g_value_set_boolean (value, self->playground);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_pipeline_set_property (GObject      *object,
                                guint         prop_id,
                                const GValue *value,
                                GParamSpec   *pspec)
{
  SymfonicPipeline *self = SYMFONIC_PIPELINE (object);

  switch (prop_id)
    {
    case PROP_LISTEN:
      g_free (self->listen);
      self->listen = g_value_dup_string (value);
      break;
    case PROP_WORKERS:
      self->workers = g_value_get_uint (value);
      break;
    case PROP_MAX_BODY_BYTES:
      self->max_body_bytes = g_value_get_uint64 (value);
      break;
    case PROP_RELEASE_LINE:
      g_free (self->release_line);
      self->release_line = g_value_dup_string (value);
      break;
    case PROP_HEADER_TIMEOUT:
      self->header_timeout = g_value_get_uint (value);
      break;
    case PROP_BODY_TIMEOUT:
      self->body_timeout = g_value_get_uint (value);
      break;
    case PROP_KEEPALIVE_TIMEOUT:
      self->keepalive_timeout = g_value_get_uint (value);
      break;
    case PROP_MAX_CONNECTIONS:
      self->max_connections = g_value_get_uint (value);
      break;
    case PROP_DRAIN_SECONDS:
      self->drain_seconds = g_value_get_uint (value);
      break;
    case PROP_RUN_STORE:
      g_set_object (&self->run_store, g_value_get_object (value));
      break;
    case PROP_METRICS_LISTEN:
      g_free (self->metrics_listen);
      self->metrics_listen = g_value_dup_string (value);
      break;
    case PROP_METRICS_TOKEN_FILE:
      g_set_object (&self->metrics_token_file, g_value_get_object (value));
      break;
    case PROP_RESUME_TOKEN_SECRET_FILE:
      g_set_object (&self->resume_token_secret_file, g_value_get_object (value));
      break;
    case PROP_METRICS_TENANT_LABEL:
      self->metrics_tenant_label = g_value_get_boolean (value);
      break;
    case PROP_METRICS_TENANTS:
      self->metrics_tenants = g_value_get_uint (value);
      break;
    case PROP_OTLP_ENDPOINT:
      g_free (self->otlp_endpoint);
      self->otlp_endpoint = g_value_dup_string (value);
      break;
    case PROP_TRACE_SAMPLE_RATIO:
      self->trace_sample_ratio = g_value_get_double (value);
      break;
    case PROP_SERVICE_NAME:
      g_free (self->service_name);
      self->service_name = g_value_dup_string (value);
      break;
    case PROP_PYTHON_PATH:
      g_strfreev (self->python_path);
      self->python_path = g_value_dup_boxed (value);
      break;
    case PROP_PLAYGROUND:
      self->playground = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
symfonic_pipeline_class_init (SymfonicPipelineClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = symfonic_pipeline_finalize;
  object_class->get_property = symfonic_pipeline_get_property;
  object_class->set_property = symfonic_pipeline_set_property;

  /**
   * SymfonicPipeline:listen:
   *
   * The address and port to serve on, `HOST:PORT` (`[::1]:8080` for IPv6).
   */
  properties[PROP_LISTEN] =
    g_param_spec_string ("listen", "Listen", "The address and port to serve on, HOST:PORT",
                         "127.0.0.1:8080",
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicPipeline:workers:
   *
   * Worker threads, each with its own main loop and listening socket.
   * 0 means one per processor.
   */
  properties[PROP_WORKERS] =
    g_param_spec_uint ("workers", "Workers", "Worker threads, each with its own main loop and socket; 0 = one per processor",
                       0, 256, 0,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicPipeline:max-body-bytes:
   *
   * The largest request body accepted; a larger one is refused with 413
   * without being read into memory.
   */
  properties[PROP_MAX_BODY_BYTES] =
    g_param_spec_uint64 ("max-body-bytes", "Maximum body bytes", "The largest request body accepted; larger ones get 413",
                         64, G_MAXUINT32, 1024 * 1024,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicPipeline:release-line:
   *
   * The release line whose stream contract the gateway publishes.
   */
  properties[PROP_RELEASE_LINE] =
    g_param_spec_string ("release-line", "Release line", "The release line whose stream contract is published",
                         SYMFONIC_VERSION,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicPipeline:header-timeout:
   *
   * Seconds a client has to send a whole request head, counted from the
   * connection (first request) or from its first byte (later requests).
   */
  properties[PROP_HEADER_TIMEOUT] =
    g_param_spec_uint ("header-timeout", "Header timeout", "Seconds a client has to send a whole request head",
                       1, 3600, 10,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicPipeline:body-timeout:
   *
   * Seconds a client has to send a whole request body once its head is in.
   */
  properties[PROP_BODY_TIMEOUT] =
    g_param_spec_uint ("body-timeout", "Body timeout", "Seconds a client has to send a whole request body",
                       1, 3600, 30,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicPipeline:keepalive-timeout:
   *
   * Seconds a kept-alive connection may stay idle between requests.
   */
  properties[PROP_KEEPALIVE_TIMEOUT] =
    g_param_spec_uint ("keepalive-timeout", "Keep-alive timeout", "Seconds a connection may stay idle between requests",
                       1, 3600, 75,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicPipeline:max-connections:
   *
   * Open client connections per worker; a connection past it is closed as
   * soon as it is accepted. 0: as many as the process's open-file limit
   * leaves once the gateway's own descriptors are set aside, so that no
   * cap but the descriptors themselves applies.
   */
  properties[PROP_MAX_CONNECTIONS] =
    g_param_spec_uint ("max-connections", "Maximum connections",
                       "Open client connections per worker, more are closed at once; 0 for what the open-file limit allows",
                       0, 1000000, 0,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicPipeline:drain-seconds:
   *
   * Seconds a stopping gateway lets the streams in flight run on once it
   * stopped accepting; those still running then end with their error
   * frame. 0 ends them at once.
   */
  properties[PROP_DRAIN_SECONDS] =
    g_param_spec_uint ("drain-seconds", "Drain seconds",
                       "Seconds streams in flight may run on once the gateway stops accepting",
                       0, 3600, 30,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);

  /**
   * SymfonicPipeline:run-store:
   *
   * Where routes with #SymfonicRoute:resume keep their runs: in a pipeline
   * file, a `[store:NAME]` group or a registered store type. Unset, the
   * server's own store (#SymfonicServer:run-store) keeps them.
   */
  properties[PROP_RUN_STORE] =
    g_param_spec_object ("run-store", "Run store",
                         "Where resumable runs keep their frames: a [store:NAME] or a registered store type; "
                         "the server's own when unset",
                         SYMFONIC_TYPE_RUN_STORE,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);

  /**
   * SymfonicPipeline:metrics-listen:
   *
   * `HOST:PORT` of a listener of its own for `GET /metrics` (and
   * `/healthz`), served on a thread of its own; the main listen address
   * then no longer serves `/metrics`. Unset, `/metrics` is served on the
   * main address.
   */
  properties[PROP_METRICS_LISTEN] =
    g_param_spec_string ("metrics-listen", "Metrics listen",
                         "HOST:PORT that serves /metrics apart from the main address; unset: the main address",
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicPipeline:metrics-token-file:
   *
   * A file holding the bearer token a scrape of `/metrics` must send
   * (`Authorization: Bearer TOKEN`), its first line; unset, `/metrics`
   * asks for none.
   */
  properties[PROP_METRICS_TOKEN_FILE] =
    g_param_spec_object ("metrics-token-file", "Metrics token file",
                         "File whose first line is the bearer token a scrape of /metrics must send; unset: none",
                         G_TYPE_FILE,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicPipeline:metrics-tenant-label:
   *
   * Whether `/metrics` counts tokens per tenant
   * (`symfonic_tenant_tokens_total`), for at most
   * #SymfonicPipeline:metrics-tenants tenants.
   */
  properties[PROP_METRICS_TENANT_LABEL] =
    g_param_spec_boolean ("metrics-tenant-label", "Metrics tenant label",
                          "Count tokens per tenant in /metrics, for at most metrics-tenants tenants",
                          FALSE,
                          G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicPipeline:metrics-tenants:
   *
   * The most tenants that get a label of their own in the per-tenant
   * token counts: the first seen since the start; the others count as
   * `other`.
   */
  properties[PROP_METRICS_TENANTS] =
    g_param_spec_uint ("metrics-tenants", "Metrics tenants",
                       "Tenants labelled by name in the per-tenant token counts; the rest count as other",
                       1, 10000, 100,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicPipeline:otlp-endpoint:
   *
   * The OTLP/HTTP traces URL (such as `http://127.0.0.1:4318/v1/traces`)
   * the gateway posts its spans to, as JSON, from a thread of its own;
   * unset, nothing is traced.
   */
  properties[PROP_OTLP_ENDPOINT] =
    g_param_spec_string ("otlp-endpoint", "OTLP endpoint",
                         "OTLP/HTTP URL the spans are posted to as JSON (…/v1/traces); unset: no tracing",
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicPipeline:trace-sample-ratio:
   *
   * The share of requests traced, decided once per request; a request
   * whose client sent a `traceparent` follows its sampled flag instead.
   */
  properties[PROP_TRACE_SAMPLE_RATIO] =
    g_param_spec_double ("trace-sample-ratio", "Trace sample ratio",
                         "Share of requests traced, 0-1; a client's traceparent decides for its request",
                         0.0, 1.0, 1.0,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicPipeline:service-name:
   *
   * The `service.name` of the spans' resource.
   */
  properties[PROP_SERVICE_NAME] =
    g_param_spec_string ("service-name", "Service name",
                         "The service.name the spans are reported under",
                         "symfonic-gateway",
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);
  /**
   * SymfonicPipeline:python-path:
   *
   * Folders the Python script plugins import from besides the
   * interpreter's own, such as a virtualenv's `site-packages`: the
   * embedded interpreter is the one the Python loader was built against,
   * with its own prefix, whatever `python3` is first on `PATH`, whatever
   * `PYTHONHOME`, `PYTHONPATH` or an active virtualenv say, so a
   * virtualenv's packages are used only when named here.
   *
   * In a pipeline file, relative to the file; each must be a folder. The
   * loader hands them to the Python loader before the scripts of
   * `plugin-path` load; they go before the interpreter's own
   * `site-packages` and stay on its path for the life of the process.
   * Set on a pipeline that is already loaded, it changes nothing.
   */
  properties[PROP_PYTHON_PATH] =
    g_param_spec_boxed ("python-path", "Python path",
                        "Folders Python script plugins import from besides the interpreter's own "
                        "(a virtualenv's site-packages), relative to the file",
                        G_TYPE_STRV,
                        G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);

  /**
   * SymfonicPipeline:playground:
   *
   * Whether the gateway serves `/playground`: one static page, from the
   * data folder, that streams the pipeline's typed routes in a browser,
   * with the token and tenant its user types in, and reads a dropped run
   * again from a runs route. The page has no privilege of its own; paths
   * under `/playground` are then no route's.
   */
  properties[PROP_PLAYGROUND] =
    g_param_spec_boolean ("playground", "Playground",
                          "Serve /playground, a page that streams the typed routes in a browser",
                          FALSE,
                          G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);

  /**
   * SymfonicPipeline:resume-token-secret-file:
   *
   * A file holding the secret (at least
   * %SYMFONIC_PIPELINE_MIN_RESUME_SECRET_BYTES bytes; a trailing newline
   * is not part of it) that resume tokens are signed with: a resumable
   * run's answer then carries `X-Symfonic-Resume-Token`, with which a
   * browser's `EventSource`, which cannot send headers, reads the run
   * from a `kind=runs` route (`?token=`). Read when the pipeline loads;
   * unset, no token is issued or accepted.
   */
  properties[PROP_RESUME_TOKEN_SECRET_FILE] =
    g_param_spec_object ("resume-token-secret-file", "Resume token secret file",
                         "File holding the secret (at least 32 bytes) resume tokens are signed with; unset: no "
                         "resume tokens",
                         G_TYPE_FILE,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
symfonic_pipeline_init (SymfonicPipeline *self)
{
  self->stores = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  self->store_settings = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->all_stores = g_ptr_array_new_with_free_func (g_object_unref);
  self->store_labels = g_ptr_array_new_with_free_func (g_free);
  self->stages = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  self->stage_settings = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->sources = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  self->routes = g_ptr_array_new_with_free_func (g_object_unref);
  self->routes_by_path = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}

typedef struct
{
  SymfonicPipeline   *self;
  SymfonicRegistry   *registry;
  SymfonicConfigFile *kf;
  GKeyFile           *key_file;
  GFile              *base_dir;
  /* the pipeline a reload replaces, whose unchanged stages it keeps */
  SymfonicPipeline   *previous;
  /* the groups that did not load: what names them is not reported again,
   * their own problems say what is wrong */
  GHashTable         *failed;
  /* a [gateway] plugin-path folder did not load */
  gboolean            plugins_failed;
} Loader;

/* Every problem is recorded in the file's list and loading goes on, so
 * that one run lists them all; a group with a problem makes no object,
 * and whatever names it is left at that. */
static gboolean
group_failed (Loader     *loader,
              const char *prefix,
              const char *name)
{
  g_autofree char *group = g_strconcat (prefix, name, NULL);

  return g_hash_table_contains (loader->failed, group);
}

/* A property holding an object other than a file (a metering stage's
 * `store`) is set by naming a registered type: the plugin that provides
 * the object is chosen in the pipeline file, like a stage's own type. */
static gboolean
names_registered_type (GParamSpec *pspec)
{
  return G_IS_PARAM_SPEC_OBJECT (pspec) && G_PARAM_SPEC_VALUE_TYPE (pspec) != G_TYPE_FILE;
}

/* The object the key @key of @group names: the store of a `[store:NAME]`
 * group, shared with every other key naming it, or a new object of a
 * registered type, for that one key. */
static gboolean
new_registered_object (Loader      *loader,
                       const char  *group,
                       const char  *key,
                       GType        required,
                       GValue      *value)
{
  g_autofree char *name = g_key_file_get_string (loader->key_file, group, key, NULL);
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GObject) object = NULL;
  GObject *store;
  GType type;

  if (name != NULL)
    g_strstrip (name);
  if (name != NULL && group_failed (loader, "store:", name))
    return FALSE;
  store = name != NULL ? g_hash_table_lookup (loader->self->stores, name) : NULL;
  if (store != NULL)
    {
      if (!g_type_is_a (G_OBJECT_TYPE (store), required))
        {
          g_autofree char *store_group = g_strconcat ("store:", name, NULL);
          g_autofree char *type_name = g_key_file_get_string (loader->key_file, store_group, "type", NULL);

          return symfonic_config_file_add_error (loader->kf, group, key,
                                                 _("expected a store that is a %s, found [store:%s] of type “%s”, "
                                                   "which is not"),
                                                 g_type_name (required), name, type_name != NULL ? type_name : "");
        }
      g_value_init (value, required);
      g_value_set_object (value, store);
      return TRUE;
    }

  type = name != NULL ? symfonic_registry_lookup (loader->registry, name) : G_TYPE_INVALID;
  if (type == G_TYPE_INVALID || !g_type_is_a (type, required))
    return symfonic_config_file_add_error (loader->kf, group, key,
                                           _("expected a [store:NAME] of this file or a registered %s type "
                                             "(symfonic-inspect lists them), found “%s”"),
                                           g_type_name (required), name != NULL ? name : "");

  object = g_object_new (type, NULL);
  if (G_IS_INITABLE (object) && !g_initable_init (G_INITABLE (object), NULL, &local_error))
    return symfonic_config_file_add_error (loader->kf, group, key, "%s", local_error->message);

  if (symfonic_store_type_plays_a_role (type))
    {
      g_ptr_array_add (loader->self->all_stores, g_object_ref (object));
      g_ptr_array_add (loader->self->store_labels, g_strdup_printf ("[%s] %s", group, key));
    }
  g_value_init (value, required);
  g_value_take_object (value, g_steal_pointer (&object));
  return TRUE;
}

/* The keys an object of @type takes, for a message about one it does not. */
static char *
list_settable_keys (GType              type,
                    const char *const *skip)
{
  g_autoptr(GTypeClass) klass = g_type_class_ref (type);
  g_autofree GParamSpec **pspecs = NULL;
  GString *list = g_string_new (NULL);
  guint n;

  pspecs = g_object_class_list_properties (G_OBJECT_CLASS (klass), &n);
  for (guint i = 0; i < n; i++)
    {
      if (!(pspecs[i]->flags & G_PARAM_WRITABLE) || pspecs[i]->owner_type == G_TYPE_OBJECT ||
          (skip != NULL && g_strv_contains (skip, pspecs[i]->name)))
        continue;
      g_string_append_printf (list, "%s%s", list->len > 0 ? ", " : "", pspecs[i]->name);
    }

  return g_string_free (list, FALSE);
}

/* Sets every key of @group except those in @skip as a property of @type;
 * fills @names and @values for g_object_new_with_properties(). Every key
 * that does not convert is recorded. */
static gboolean
collect_properties (Loader            *loader,
                    const char        *group,
                    GType              type,
                    const char        *type_name,
                    const char *const *skip,
                    GPtrArray         *names,
                    GArray            *values)
{
  g_autoptr(GTypeClass) klass = g_type_class_ref (type);
  g_auto(GStrv) keys = g_key_file_get_keys (loader->key_file, group, NULL, NULL);
  /* the property and the key, as the file spells it, of each value
   * appended */
  g_autoptr(GPtrArray) pspecs = g_ptr_array_new ();
  g_autoptr(GPtrArray) set = g_ptr_array_new ();
  guint first = values->len;
  gboolean ok = TRUE;

  for (guint i = 0; keys != NULL && keys[i] != NULL; i++)
    {
      g_autoptr(GError) local_error = NULL;
      GValue value = G_VALUE_INIT;
      GParamSpec *pspec;

      if (skip != NULL && g_strv_contains (skip, keys[i]))
        continue;

      pspec = g_object_class_find_property (G_OBJECT_CLASS (klass), keys[i]);
      if (pspec == NULL || !(pspec->flags & G_PARAM_WRITABLE) ||
          pspec->owner_type == G_TYPE_OBJECT)
        {
          g_autofree char *known = list_settable_keys (type, skip);

          ok = symfonic_config_file_add_error (loader->kf, group, keys[i],
                                               _("expected a key of type “%s” (%s), found an unknown one"),
                                               type_name, known);
          continue;
        }

      if (names_registered_type (pspec))
        {
          if (!new_registered_object (loader, group, keys[i], G_PARAM_SPEC_VALUE_TYPE (pspec), &value))
            {
              ok = FALSE;
              continue;
            }
        }
      else if (!symfonic_property_parse (pspec, loader->key_file, group, keys[i],
                                         loader->base_dir, &value, &local_error))
        {
          ok = symfonic_config_file_add_error (loader->kf, group, keys[i], "%s", local_error->message);
          continue;
        }

      g_ptr_array_add (names, (gpointer) g_param_spec_get_name (pspec));
      g_array_append_val (values, value);
      g_ptr_array_add (pspecs, pspec);
      g_ptr_array_add (set, keys[i]);
    }

  /* The files the values name are checked once every value converted, at
   * their keys, before any object reads them. */
  for (guint i = 0; i < set->len; i++)
    {
      g_autoptr(GError) local_error = NULL;

      if (!symfonic_property_check_file (g_ptr_array_index (pspecs, i), &g_array_index (values, GValue, first + i),
                                         &local_error))
        ok = symfonic_config_file_add_error (loader->kf, group, g_ptr_array_index (set, i),
                                             "%s", local_error->message);
    }

  return ok;
}

static void
clear_value (gpointer data)
{
  g_value_unset (data);
}

/* The file the key @key of @group names, if @type reads it as one, by the
 * name its own errors give it. */
static char *
named_file (Loader     *loader,
            const char *group,
            const char *key,
            GType       type)
{
  g_autoptr(GTypeClass) klass = g_type_class_ref (type);
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_CLASS (klass), key);
  g_autofree char *text = NULL;
  g_autoptr(GFile) file = NULL;

  if (pspec == NULL || G_PARAM_SPEC_VALUE_TYPE (pspec) != G_TYPE_FILE)
    return NULL;
  text = g_key_file_get_string (loader->key_file, group, key, NULL);
  if (text == NULL || *text == '\0')
    return NULL;
  file = g_file_resolve_relative_path (loader->base_dir, text);
  return g_file_get_parse_name (file);
}

/* What an object of @type refused to initialize with: its message is
 * one line or several. A line about a file a key of @group names (the
 * list a tokens file's reader gives) goes below that key's line, as the
 * file's own; any other line is the group's, at the key it starts with
 * when it names one (`api-key-file: ...`). */
static void
add_object_error (Loader       *loader,
                  const char   *group,
                  GType         type,
                  const GError *error)
{
  g_auto(GStrv) keys = g_key_file_get_keys (loader->key_file, group, NULL, NULL);
  g_auto(GStrv) lines = g_strsplit (error->message, "\n", -1);
  guint n_keys = keys != NULL ? g_strv_length (keys) : 0;
  g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) below = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);

  for (guint k = 0; k < n_keys; k++)
    {
      g_ptr_array_add (files, named_file (loader, group, keys[k], type));
      g_ptr_array_add (below, g_ptr_array_new ());
    }

  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *line = lines[i];
      const char *key = NULL;
      guint k;

      if (*line == '\0')
        continue;
      for (k = 0; k < n_keys; k++)
        {
          gsize length = strlen (keys[k]);

          if (strncmp (line, keys[k], length) == 0 && line[length] == ':' && line[length + 1] == ' ')
            {
              key = keys[k];
              line += length + 2;
              break;
            }
        }

      for (k = 0; k < n_keys; k++)
        {
          const char *file = g_ptr_array_index (files, k);

          if (file != NULL && g_str_has_prefix (line, file) && line[strlen (file)] == ':')
            break;
        }
      if (k < n_keys)
        g_ptr_array_add (g_ptr_array_index (below, k), (gpointer) line);
      else
        symfonic_config_file_add_error_literal (loader->kf, group, key, line);
    }

  for (guint k = 0; k < n_keys; k++)
    {
      GPtrArray *file_lines = g_ptr_array_index (below, k);
      g_autofree char *message = NULL;

      if (file_lines->len == 0)
        continue;
      message = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                              "expected a file without errors, found %u in “%s”, listed below",
                                              "expected a file without errors, found %u in “%s”, listed below",
                                              file_lines->len),
                                 file_lines->len, (const char *) g_ptr_array_index (files, k));
      g_ptr_array_add (file_lines, NULL);
      symfonic_config_file_add_error_with_lines (loader->kf, group, keys[k], message,
                                                 (const char * const *) file_lines->pdata);
    }
}

static GObject *
instantiate (Loader      *loader,
             const char  *group,
             GType        required,
             const char  *what)
{
  static const char * const skip[] = { "type", NULL };
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  g_autoptr(GArray) values = g_array_new (FALSE, TRUE, sizeof (GValue));
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GObject) object = NULL;
  g_autofree char *type_name = NULL;
  GType type;

  g_array_set_clear_func (values, clear_value);

  type_name = g_key_file_get_string (loader->key_file, group, "type", NULL);
  if (type_name == NULL)
    {
      symfonic_config_file_add_error (loader->kf, group, NULL,
                                      _("expected a key “type”, the registered type of the %s, found none"), what);
      return NULL;
    }

  type = symfonic_registry_lookup (loader->registry, type_name);
  if (type == G_TYPE_INVALID)
    {
      /* a folder that did not load may hold the type */
      symfonic_config_file_add_error (loader->kf, group, "type",
                                      loader->plugins_failed
                                      ? _("expected a registered %s type (symfonic-inspect lists them), found “%s” "
                                          "(a [gateway] plugin-path folder did not load)")
                                      : _("expected a registered %s type (symfonic-inspect lists them), found “%s”"),
                                      what, type_name);
      return NULL;
    }
  if (!g_type_is_a (type, required))
    {
      symfonic_config_file_add_error (loader->kf, group, "type",
                                      _("expected a %s type, found “%s”, which is not one"), what, type_name);
      return NULL;
    }

  if (!collect_properties (loader, group, type, type_name, skip, names, values))
    return NULL;

  object = g_object_new_with_properties (type, names->len, (const char **) names->pdata,
                                         (const GValue *) values->data);

  if (G_IS_INITABLE (object) && !g_initable_init (G_INITABLE (object), NULL, &local_error))
    {
      add_object_error (loader, group, type, local_error);
      return NULL;
    }

  return g_steal_pointer (&object);
}

/* What a stage group says: its keys and values in file order, and for a
 * value naming a file, that file's size and modification time, so that a
 * stage whose tokens or table file was edited counts as changed. */
static char *
stage_settings (Loader     *loader,
                const char *group)
{
  g_auto(GStrv) keys = g_key_file_get_keys (loader->key_file, group, NULL, NULL);
  GString *settings = g_string_new (NULL);

  for (guint i = 0; keys != NULL && keys[i] != NULL; i++)
    {
      g_autofree char *value = g_key_file_get_value (loader->key_file, group, keys[i], NULL);
      g_autoptr(GFile) named = NULL;
      g_autoptr(GFileInfo) info = NULL;

      g_string_append_printf (settings, "%s=%s\n", keys[i], value != NULL ? value : "");
      if (value == NULL || value[0] == '\0')
        continue;

      /* a store the stage shares is part of what the stage is: changed,
       * the stage is made anew, with the new store */
      if (g_hash_table_contains (loader->self->store_settings, g_strstrip (value)))
        g_string_append_printf (settings, "  [store:%s]\n%s", value,
                                (const char *) g_hash_table_lookup (loader->self->store_settings, value));

      /* a value naming ${CREDENTIALS_DIRECTORY}'s file is that file */
      {
        g_autofree char *path = symfonic_property_expand_path (value, NULL);

        named = g_file_resolve_relative_path (loader->base_dir, path != NULL ? path : value);
      }
      info = g_file_query_info (named, G_FILE_ATTRIBUTE_STANDARD_SIZE "," G_FILE_ATTRIBUTE_TIME_MODIFIED ","
                                G_FILE_ATTRIBUTE_TIME_MODIFIED_USEC,
                                G_FILE_QUERY_INFO_NONE, NULL, NULL);
      if (info != NULL && g_file_info_get_file_type (info) == G_FILE_TYPE_REGULAR)
        g_string_append_printf (settings, "  %" G_GOFFSET_FORMAT " bytes, modified %" G_GUINT64_FORMAT ".%06u\n",
                                g_file_info_get_size (info),
                                g_file_info_get_attribute_uint64 (info, G_FILE_ATTRIBUTE_TIME_MODIFIED),
                                g_file_info_get_attribute_uint32 (info, G_FILE_ATTRIBUTE_TIME_MODIFIED_USEC));
    }

  return g_string_free (settings, FALSE);
}

/* A store is kept across a reload, with the state it holds, when its
 * group kept its name and says the same (a file it names, such as a
 * password file, unmodified): the budgets and runs of a store in this
 * process outlive the reload, and a networked store keeps its
 * connection. */
static gboolean
load_store (Loader      *loader,
            const char  *group,
            const char  *name)
{
  g_autofree char *settings = stage_settings (loader, group);
  g_autofree char *type_name = g_key_file_get_string (loader->key_file, group, "type", NULL);
  GObject *object = NULL;
  GType type;

  if (type_name != NULL)
    {
      type = symfonic_registry_lookup (loader->registry, g_strstrip (type_name));
      if (type != G_TYPE_INVALID && !symfonic_store_type_plays_a_role (type))
        return symfonic_config_file_add_error (loader->kf, group, "type",
                                               _("expected a store type (one implementing SymfonicMeterStore, "
                                                 "SymfonicStreamCapStore or SymfonicRunStore), found “%s”, "
                                                 "which implements none"),
                                               type_name);
    }

  if (loader->previous != NULL &&
      g_strcmp0 (g_hash_table_lookup (loader->previous->store_settings, name), settings) == 0)
    object = g_object_ref (g_hash_table_lookup (loader->previous->stores, name));
  else
    object = instantiate (loader, group, G_TYPE_OBJECT, _("store"));
  if (object == NULL)
    return FALSE;

  g_hash_table_insert (loader->self->stores, g_strdup (name), object);
  g_hash_table_insert (loader->self->store_settings, g_strdup (name), g_steal_pointer (&settings));
  g_ptr_array_add (loader->self->all_stores, g_object_ref (object));
  g_ptr_array_add (loader->self->store_labels, g_strdup_printf ("[%s]", group));

  return TRUE;
}

/* A stage is kept across a reload, with the state it holds (rate-limit
 * buckets, budgets), when its group kept its name and says the same. */
static GObject *
load_stage (Loader      *loader,
            const char  *group,
            const char  *name)
{
  char *settings = stage_settings (loader, group);
  GObject *object = NULL;

  if (loader->previous != NULL &&
      g_strcmp0 (g_hash_table_lookup (loader->previous->stage_settings, name), settings) == 0)
    object = g_object_ref (g_hash_table_lookup (loader->previous->stages, name));
  else
    object = instantiate (loader, group, SYMFONIC_TYPE_STAGE, _("stage"));

  if (object == NULL)
    {
      g_free (settings);
      return NULL;
    }

  g_hash_table_insert (loader->self->stage_settings, g_strdup (name), settings);
  return object;
}

/* Whether @name is among the first @n entries of @names (already stripped). */
static gboolean
listed_before (char * const *names,
               guint         n,
               const char   *name)
{
  for (guint i = 0; i < n; i++)
    {
      if (g_str_equal (names[i], name))
        return TRUE;
    }

  return FALSE;
}

/* The registered type of the `[stage:NAME]` group @name. */
static char *
stage_type_name (Loader     *loader,
                 const char *name)
{
  g_autofree char *group = g_strconcat ("stage:", name, NULL);

  return g_key_file_get_string (loader->key_file, group, "type", NULL);
}

/* Records each key of @group that is not one of
 * symfonic_pipeline_list_keys() for @kind, listing those; returns the
 * keys not to set as properties: those of @loaded and the unknown ones. */
static GStrv
check_group_keys (Loader             *loader,
                  const char         *group,
                  const char         *kind,
                  const char * const *loaded,
                  gboolean           *ok)
{
  g_auto(GStrv) keys = g_key_file_get_keys (loader->key_file, group, NULL, NULL);
  g_autoptr(GStrvBuilder) skip = g_strv_builder_new ();
  g_autofree GParamSpec **known = NULL;
  g_autoptr(GString) listing = g_string_new (NULL);
  guint n_known;

  g_strv_builder_addv (skip, (const char **) loaded);
  known = symfonic_pipeline_list_keys (kind, &n_known);
  for (guint j = 0; j < n_known; j++)
    g_string_append_printf (listing, "%s%s", j > 0 ? ", " : "", known[j]->name);

  for (guint i = 0; keys != NULL && keys[i] != NULL; i++)
    {
      guint j;

      for (j = 0; j < n_known && !g_str_equal (known[j]->name, keys[i]); j++)
        ;
      if (j < n_known)
        continue;
      *ok = symfonic_config_file_add_error (loader->kf, group, keys[i],
                                            _("expected a key of [%s] (%s), found an unknown one"),
                                            g_str_equal (kind, "route") ? "route:NAME" : kind, listing->str);
      g_strv_builder_add (skip, keys[i]);
    }

  return g_strv_builder_end (skip);
}

/* An origin as a browser sends it in `Origin`: an http or https scheme,
 * a host and a port other than the scheme's own, in lower case, and
 * nothing else; any other spelling would never match. */
static gboolean
is_origin (const char *text)
{
  g_autofree char *scheme = NULL;
  g_autofree char *userinfo = NULL;
  g_autofree char *host = NULL;
  g_autofree char *path = NULL;
  g_autofree char *query = NULL;
  g_autofree char *fragment = NULL;
  gint port;

  for (const char *p = text; *p != '\0'; p++)
    {
      if (g_ascii_isupper (*p))
        return FALSE;
    }
  if (!g_uri_split (text, G_URI_FLAGS_NONE, &scheme, &userinfo, &host, &port, &path, &query, &fragment, NULL))
    return FALSE;

  return (g_strcmp0 (scheme, "http") == 0 || g_strcmp0 (scheme, "https") == 0) && userinfo == NULL &&
         host != NULL && *host != '\0' && *path == '\0' && query == NULL && fragment == NULL &&
         !(port == 80 && g_str_equal (scheme, "http")) && !(port == 443 && g_str_equal (scheme, "https"));
}

/* cors-origins lists origins, or is `*` alone; `*` would let any page
 * spend the credentials a user types into it, so a route that
 * authenticates names its origins. */
static gboolean
check_cors_origins (Loader        *loader,
                    const char    *group,
                    SymfonicRoute *route)
{
  const char * const *origins = symfonic_route_get_cors_origins (route);
  gboolean ok = TRUE;

  for (guint i = 0; origins != NULL && origins[i] != NULL; i++)
    {
      if (g_str_equal (origins[i], "*"))
        {
          if (i > 0 || origins[1] != NULL)
            ok = symfonic_config_file_add_error (loader->kf, group, "cors-origins",
                                                 _("expected “*” alone or a list of origins, found “*” in a list"));
          else if (symfonic_route_authenticates (route))
            ok = symfonic_config_file_add_error (loader->kf, group, "cors-origins",
                                                 _("expected the origins whose pages may call a route that "
                                                   "authenticates, found “*”, which only a route without "
                                                   "credentials may have"));
          continue;
        }
      if (!is_origin (origins[i]))
        ok = symfonic_config_file_add_error (loader->kf, group, "cors-origins",
                                             _("expected origins as browsers send them (scheme://host[:port], in "
                                               "lower case, without a path or the scheme’s own port), found “%s”"),
                                             origins[i]);
    }

  return ok;
}

static gboolean
load_route (Loader      *loader,
            const char  *group,
            const char  *name)
{
  /* the keys read before the route exists, to create it */
  static const char * const structural[] = { "path", "kind", "source", "stages", NULL };
  SymfonicPipeline *self = loader->self;
  g_auto(GStrv) stages = NULL;
  g_auto(GStrv) served = NULL;
  g_autofree char *path = NULL;
  g_autofree char *kind_text = NULL;
  g_autofree char *source_name = NULL;
  g_autoptr(SymfonicRoute) route = NULL;
  g_autoptr(GEnumClass) kinds = g_type_class_ref (SYMFONIC_TYPE_ROUTE_KIND);
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  g_autoptr(GArray) values = g_array_new (FALSE, TRUE, sizeof (GValue));
  /* the names in route order, for the order check's messages */
  g_autoptr(GPtrArray) stage_names = g_ptr_array_new ();
  g_autoptr(GPtrArray) type_names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) route_stages = g_ptr_array_new ();
  g_autoptr(GError) local_error = NULL;
  g_auto(GStrv) skip = NULL;
  SymfonicRouteKind kind = SYMFONIC_ROUTE_KIND_TYPED;
  SymfonicSource *source = NULL;
  /* a stage or the source did not load: the order is not checked */
  gboolean complete = TRUE;
  gboolean ok = TRUE;

  skip = check_group_keys (loader, group, "route", structural, &ok);

  path = g_key_file_get_string (loader->key_file, group, "path", NULL);
  if (path == NULL)
    ok = symfonic_config_file_add_error (loader->kf, group, NULL,
                                         _("expected a key “path”, the HTTP path the route serves, found none"));
  else if (path[0] != '/')
    ok = symfonic_config_file_add_error (loader->kf, group, "path", _("expected a path starting with /, found “%s”"),
                                         path);

  kind_text = g_key_file_get_string (loader->key_file, group, "kind", NULL);
  if (kind_text != NULL)
    {
      GEnumValue *ev = g_enum_get_value_by_nick (kinds, kind_text);

      if (ev == NULL)
        ok = symfonic_config_file_add_error (loader->kf, group, "kind",
                                             _("expected one of typed, chunks, chat, resume, openai, anthropic, "
                                               "runs, found “%s”"), kind_text);
      else
        kind = ev->value;
    }

  /* a provider kind serves its API's paths under its own */
  if (path != NULL && path[0] == '/')
    served = symfonic_route_kind_dup_paths (kind, path);
  for (guint i = 0; served != NULL && served[i] != NULL; i++)
    {
      SymfonicRoute *other = g_hash_table_lookup (self->routes_by_path, served[i]);

      if (other != NULL)
        {
          g_autofree char *other_group = g_strconcat ("route:", symfonic_route_get_name (other), NULL);

          ok = symfonic_config_file_add_error (loader->kf, group, "path",
                                               _("expected a path no other route serves, found “%s”, served by "
                                                 "[%s] on line %u"), served[i], other_group,
                                               symfonic_config_file_get_line (loader->kf, other_group, "path"));
        }
    }

  /* a runs route reads its runs from the run store: it needs no source,
   * and one it names is checked like any other and then not used */
  source_name = g_key_file_get_string (loader->key_file, group, "source", NULL);
  if (source_name == NULL)
    {
      if (kind != SYMFONIC_ROUTE_KIND_RUNS)
        ok = symfonic_config_file_add_error (loader->kf, group, NULL,
                                             _("expected a key “source”, the [source:NAME] the route streams "
                                               "from, found none"));
    }
  else if (group_failed (loader, "source:", source_name))
    ok = complete = FALSE;
  else if ((source = g_hash_table_lookup (self->sources, source_name)) == NULL)
    ok = symfonic_config_file_add_error (loader->kf, group, "source",
                                         _("expected the NAME of a [source:NAME] of this file, found “%s”"),
                                         source_name);

  g_array_set_clear_func (values, clear_value);
  if (!collect_properties (loader, group, SYMFONIC_TYPE_ROUTE, "route", (const char * const *) skip, names, values))
    ok = FALSE;

  if (g_key_file_has_key (loader->key_file, group, "stages", NULL))
    stages = g_key_file_get_string_list (loader->key_file, group, "stages", NULL, NULL);
  for (guint i = 0; stages != NULL && stages[i] != NULL; i++)
    {
      const char *stage_name = g_strstrip (stages[i]);
      SymfonicStage *stage;

      if (*stage_name == '\0')
        continue;
      /* A stream keeps one state per stage object: a stage listed twice
       * would share it (a budget reserving twice and settling once, a
       * filter fed its own output). Two [stage:…] groups of one type are
       * two objects and fine. */
      if (listed_before (stages, i, stage_name))
        {
          ok = symfonic_config_file_add_error (loader->kf, group, "stages",
                                               _("expected each stage at most once, found “%s” listed twice"),
                                               stage_name);
          continue;
        }
      if (group_failed (loader, "stage:", stage_name))
        {
          ok = complete = FALSE;
          continue;
        }
      stage = g_hash_table_lookup (self->stages, stage_name);
      if (stage == NULL)
        {
          ok = symfonic_config_file_add_error (loader->kf, group, "stages",
                                               _("expected the NAMEs of [stage:NAME]s of this file, found “%s”"),
                                               stage_name);
          continue;
        }
      g_ptr_array_add (route_stages, stage);
      g_ptr_array_add (stage_names, (gpointer) stage_name);
      g_ptr_array_add (type_names, stage_type_name (loader, stage_name));
    }
  g_ptr_array_add (stage_names, NULL);
  g_ptr_array_add (type_names, NULL);

  if (!complete || (source == NULL && kind != SYMFONIC_ROUTE_KIND_RUNS) || path == NULL || path[0] != '/')
    return FALSE;

  route = symfonic_route_new (name, path, kind, source);
  symfonic_route_set_release_line (route, self->release_line);
  g_object_setv (G_OBJECT (route), names->len, (const char **) names->pdata, (const GValue *) values->data);
  for (guint i = 0; i < route_stages->len; i++)
    symfonic_route_add_stage (route, g_ptr_array_index (route_stages, i));
  {
    g_autofree char *source_type = source_name != NULL ? g_strconcat ("source:", source_name, NULL) : NULL;
    g_autofree char *type_name = source_type != NULL ? g_key_file_get_string (loader->key_file, source_type,
                                                                              "type", NULL)
                                                     : NULL;

    symfonic_route_set_telemetry_names (route, (const char * const *) stage_names->pdata, source_name,
                                        type_name != NULL ? g_strstrip (type_name) : NULL);
  }

  if (!symfonic_stage_order_check (route, (const char * const *) stage_names->pdata,
                                   (const char * const *) type_names->pdata, &local_error))
    ok = symfonic_config_file_add_error (loader->kf, group, "stages", "%s", local_error->message);
  if (!check_cors_origins (loader, group, route))
    ok = FALSE;
  symfonic_route_set_resume_secret (route, self->resume_secret);

  if (!ok)
    return FALSE;

  for (guint i = 0; served[i] != NULL; i++)
    g_hash_table_insert (self->routes_by_path, g_strdup (served[i]), route);
  g_ptr_array_add (self->routes, g_steal_pointer (&route));

  return TRUE;
}

/* The folders of `[gateway] python-path`, relative to the file, reach the
 * Python loader before the scripts of plugin-path load. */
static gboolean
load_python_path (Loader *loader)
{
  g_auto(GStrv) folders = NULL;
  g_autoptr(GStrvBuilder) resolved = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GParamSpec) pspec = NULL;
  GValue value = G_VALUE_INIT;
  gboolean ok = TRUE;

  if (!g_key_file_has_key (loader->key_file, "gateway", "python-path", NULL))
    return TRUE;

  pspec = g_param_spec_ref (g_object_class_find_property (G_OBJECT_GET_CLASS (loader->self), "python-path"));
  if (!symfonic_property_parse (pspec, loader->key_file, "gateway", "python-path", loader->base_dir, &value,
                                &local_error))
    return symfonic_config_file_add_error (loader->kf, "gateway", "python-path", "%s", local_error->message);
  folders = g_value_dup_boxed (&value);
  g_value_unset (&value);

  resolved = g_strv_builder_new ();
  for (guint i = 0; folders != NULL && folders[i] != NULL; i++)
    {
      g_autoptr(GFile) folder = NULL;
      g_autofree char *path = NULL;

      g_strstrip (folders[i]);
      if (*folders[i] == '\0')
        continue;
      folder = g_file_resolve_relative_path (loader->base_dir, folders[i]);
      path = g_file_get_path (folder);
      g_clear_error (&local_error);
      if (!symfonic_config_file_check_folder (folder, &local_error) ||
          !symfonic_registry_add_script_path (loader->registry, ".py", path, &local_error))
        {
          ok = symfonic_config_file_add_error (loader->kf, "gateway", "python-path", "%s", local_error->message);
          continue;
        }
      g_strv_builder_add (resolved, path);
    }

  if (ok)
    {
      g_auto(GStrv) paths = g_strv_builder_end (resolved);

      g_object_set (loader->self, "python-path", paths, NULL);
    }

  return ok;
}

/* The folders of `[gateway] plugin-path`, relative to the file, load
 * before any group is read, so their types serve every group. */
static gboolean
load_plugin_path (Loader *loader)
{
  g_auto(GStrv) folders = g_key_file_get_string_list (loader->key_file, "gateway", "plugin-path", NULL, NULL);
  gboolean ok = TRUE;

  for (guint i = 0; folders != NULL && folders[i] != NULL; i++)
    {
      g_autoptr(GFile) folder = g_file_resolve_relative_path (loader->base_dir, g_strstrip (folders[i]));
      g_autofree char *path = g_file_get_path (folder);
      g_autoptr(GError) local_error = NULL;

      if (!symfonic_config_file_check_folder (folder, &local_error) ||
          !symfonic_registry_load_directory (loader->registry, path, &local_error))
        ok = symfonic_config_file_add_error (loader->kf, "gateway", "plugin-path", "%s", local_error->message);
    }

  return ok;
}

/* The shape of `listen`, checked where the key is known: the server
 * resolves the host when it starts. */
static gboolean
is_host_port (const char *listen)
{
  const char *colon = strrchr (listen, ':');

  return colon != NULL && colon != listen && g_ascii_string_to_unsigned (colon + 1, 10, 0, 65535, NULL, NULL) &&
         strpbrk (listen, " \t/") == NULL;
}

/* The secret resume tokens are signed with, read once, here: every route
 * signs and checks with it, and a file too short to be a key fails the
 * load rather than the first token. */
static gboolean
load_resume_secret (Loader     *loader,
                    const char *group,
                    GFile      *file)
{
  SymfonicPipeline *self = loader->self;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *contents = NULL;
  gsize length;

  if (!symfonic_config_file_load (file, RESUME_SECRET_MAX_BYTES, &contents, &length, &local_error))
    return symfonic_config_file_add_error (loader->kf, group, "resume-token-secret-file", "%s",
                                           local_error->message);

  /* the newline an editor or `echo` leaves is not part of the secret */
  while (length > 0 && (contents[length - 1] == '\n' || contents[length - 1] == '\r'))
    length--;
  if (length < SYMFONIC_PIPELINE_MIN_RESUME_SECRET_BYTES)
    {
      g_autofree char *display = g_file_get_parse_name (file);

      return symfonic_config_file_add_error (loader->kf, group, "resume-token-secret-file",
                                             _("expected a secret of at least %u bytes in %s, found a shorter one"),
                                             SYMFONIC_PIPELINE_MIN_RESUME_SECRET_BYTES, display);
    }
  self->resume_secret = g_bytes_new (contents, length);

  return TRUE;
}

static gboolean
load_gateway (Loader      *loader,
              const char  *group)
{
  static const char *const loaded_first[] = { "python-path", "plugin-path", NULL };
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  g_autoptr(GArray) values = g_array_new (FALSE, TRUE, sizeof (GValue));
  g_auto(GStrv) skip = NULL;
  gboolean ok = TRUE;

  g_array_set_clear_func (values, clear_value);
  skip = check_group_keys (loader, group, "gateway", loaded_first, &ok);
  if (!collect_properties (loader, group, SYMFONIC_TYPE_PIPELINE, "gateway", (const char * const *) skip, names, values))
    ok = FALSE;
  for (guint i = 0; i < names->len; i++)
    {
      const GValue *value = &g_array_index (values, GValue, i);

      if (g_str_equal (g_ptr_array_index (names, i), "listen") && !is_host_port (g_value_get_string (value)))
        ok = symfonic_config_file_add_error (loader->kf, group, "listen",
                                             _("expected HOST:PORT (such as 127.0.0.1:8080, [::1]:8080 or "
                                               "*:8080), found “%s”"), g_value_get_string (value));
      if (g_str_equal (g_ptr_array_index (names, i), "resume-token-secret-file") &&
          !load_resume_secret (loader, group, g_value_get_object (value)))
        ok = FALSE;
    }
  if (!ok)
    return FALSE;

  g_object_setv (G_OBJECT (loader->self), names->len, (const char **) names->pdata,
                 (const GValue *) values->data);

  return TRUE;
}

/* The playground's paths are its own while it is served: a route there
 * would never be reached. */
static void
check_playground_paths (Loader *loader)
{
  SymfonicPipeline *self = loader->self;

  if (!self->playground)
    return;

  for (guint i = 0; i < self->routes->len; i++)
    {
      SymfonicRoute *route = g_ptr_array_index (self->routes, i);
      const char *path = symfonic_route_get_path (route);
      g_autofree char *group = NULL;

      if (!g_str_equal (path, "/playground") && !g_str_has_prefix (path, "/playground/"))
        continue;
      group = g_strconcat ("route:", symfonic_route_get_name (route), NULL);
      symfonic_config_file_add_error (loader->kf, group, "path",
                                      _("expected a path outside /playground, which is the playground’s while "
                                        "[gateway] playground=true, found “%s”"), path);
    }
}

static gboolean
load (Loader  *loader,
      GError **error)
{
  SymfonicPipeline *self = loader->self;
  g_auto(GStrv) groups = g_key_file_get_groups (loader->key_file, NULL);
  gboolean any_route = FALSE;

  /* a script of plugin-path may import from python-path */
  loader->plugins_failed = !load_python_path (loader);
  loader->plugins_failed |= !load_plugin_path (loader);

  /* Pass 0: the stores, which the gateway, stages and routes name. */
  for (guint i = 0; groups[i] != NULL; i++)
    {
      if (g_str_has_prefix (groups[i], "store:") && groups[i][strlen ("store:")] != '\0' &&
          !load_store (loader, groups[i], groups[i] + strlen ("store:")))
        g_hash_table_add (loader->failed, g_strdup (groups[i]));
    }

  /* Pass 1: everything a route may refer to. */
  for (guint i = 0; groups[i] != NULL; i++)
    {
      const char *group = groups[i];
      const char *name = strchr (group, ':');
      GObject *object;

      if (g_strcmp0 (group, "gateway") == 0)
        {
          load_gateway (loader, group);
          continue;
        }

      if (name == NULL || name[1] == '\0' ||
          !(g_str_has_prefix (group, "stage:") || g_str_has_prefix (group, "source:") ||
            g_str_has_prefix (group, "route:") || g_str_has_prefix (group, "store:")))
        {
          symfonic_config_file_add_error (loader->kf, group, NULL,
                                          _("expected a group [gateway], [route:NAME], [stage:NAME], "
                                            "[source:NAME] or [store:NAME], found an unknown one"));
          continue;
        }
      name++;

      if (g_str_has_prefix (group, "stage:"))
        {
          object = load_stage (loader, group, name);
          if (object == NULL)
            g_hash_table_add (loader->failed, g_strdup (group));
          else
            g_hash_table_insert (self->stages, g_strdup (name), object);
        }
      else if (g_str_has_prefix (group, "source:"))
        {
          object = instantiate (loader, group, SYMFONIC_TYPE_SOURCE, _("source"));
          if (object == NULL)
            g_hash_table_add (loader->failed, g_strdup (group));
          else
            g_hash_table_insert (self->sources, g_strdup (name), object);
        }
    }

  /* Pass 2: routes, in file order. */
  for (guint i = 0; groups[i] != NULL; i++)
    {
      if (g_str_has_prefix (groups[i], "route:") && groups[i][strlen ("route:")] != '\0')
        {
          any_route = TRUE;
          load_route (loader, groups[i], groups[i] + strlen ("route:"));
        }
    }

  if (!any_route)
    symfonic_config_file_add_error (loader->kf, NULL, NULL, _("expected at least one [route:NAME], found none"));

  check_playground_paths (loader);

  return symfonic_config_file_check_errors (loader->kf, error);
}

static SymfonicPipeline *
load_data (SymfonicRegistry  *registry,
           const char        *data,
           gssize             length,
           GFile             *base_dir,
           const char        *display_name,
           SymfonicPipeline  *previous,
           GError           **error)
{
  g_autoptr(SymfonicPipeline) self = NULL;
  g_autoptr(SymfonicConfigFile) kf = NULL;
  g_autoptr(GHashTable) failed = NULL;
  Loader loader;

  kf = symfonic_config_file_new_from_data_full (data, length, display_name, SYMFONIC_CONFIG_FILE_COLLECT_ERRORS,
                                                error);
  if (kf == NULL)
    return NULL;

  failed = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self = g_object_new (SYMFONIC_TYPE_PIPELINE, NULL);
  loader = (Loader) {
    .self = self,
    .registry = registry,
    .kf = kf,
    .key_file = symfonic_config_file_get_key_file (kf),
    .base_dir = base_dir,
    .previous = previous,
    .failed = failed,
  };

  if (!load (&loader, error))
    return NULL;

  return g_steal_pointer (&self);
}

static SymfonicPipeline *
load_file (SymfonicRegistry  *registry,
           GFile             *file,
           SymfonicPipeline  *previous,
           GError           **error)
{
  g_autoptr(GFile) base_dir = NULL;
  g_autofree char *contents = NULL;
  g_autofree char *display_name = NULL;
  SymfonicPipeline *self;
  gsize length;

  display_name = g_file_get_parse_name (file);
  if (!symfonic_config_file_load (file, SYMFONIC_CONFIG_FILE_MAX_SIZE, &contents, &length, error))
    return NULL;

  base_dir = g_file_get_parent (file);
  self = load_data (registry, contents, length, base_dir, display_name, previous, error);
  if (self != NULL)
    self->file = g_object_ref (file);

  return self;
}

/**
 * symfonic_pipeline_new_from_data:
 * @registry: where `type=` names are resolved
 * @data: the pipeline file's text
 * @length: the length of @data, or -1 if it is nul-terminated
 * @base_dir: the folder relative paths resolve against
 * @display_name: how errors name the file
 * @error: return location for a #GError
 *
 * Loads a pipeline from text.
 *
 * Returns: (transfer full): the pipeline, or %NULL with @error set to a
 *   %SYMFONIC_ERROR_CONFIG naming the file, line and key
 */
SymfonicPipeline *
symfonic_pipeline_new_from_data (SymfonicRegistry  *registry,
                                 const char        *data,
                                 gssize             length,
                                 GFile             *base_dir,
                                 const char        *display_name,
                                 GError           **error)
{
  g_return_val_if_fail (SYMFONIC_IS_REGISTRY (registry), NULL);
  g_return_val_if_fail (data != NULL, NULL);
  g_return_val_if_fail (G_IS_FILE (base_dir), NULL);
  g_return_val_if_fail (display_name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return load_data (registry, data, length, base_dir, display_name, NULL, error);
}

/**
 * symfonic_pipeline_new_from_file:
 * @registry: where `type=` names are resolved
 * @file: a pipeline file
 * @error: return location for a #GError
 *
 * Loads a pipeline file; relative paths in it resolve against its folder.
 *
 * Returns: (transfer full): the pipeline, or %NULL with @error set
 */
SymfonicPipeline *
symfonic_pipeline_new_from_file (SymfonicRegistry  *registry,
                                 GFile             *file,
                                 GError           **error)
{
  g_return_val_if_fail (SYMFONIC_IS_REGISTRY (registry), NULL);
  g_return_val_if_fail (G_IS_FILE (file), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return load_file (registry, file, NULL, error);
}

/**
 * symfonic_pipeline_reload:
 * @self: a #SymfonicPipeline loaded from a file
 * @registry: where `type=` names are resolved
 * @error: return location for a #GError
 *
 * Loads the file @self was loaded from again, as it is now. A
 * `[stage:NAME]` group whose keys and values are the same as before, and
 * whose files (such as a tokens file) were not modified, keeps the stage
 * object of @self, and with it the state the stage shares between streams:
 * rate-limit buckets and budgets go on counting across a reload.
 * Everything else is new. @self is not changed.
 *
 * Returns: (transfer full): the new pipeline, or %NULL with @error set
 */
SymfonicPipeline *
symfonic_pipeline_reload (SymfonicPipeline  *self,
                          SymfonicRegistry  *registry,
                          GError           **error)
{
  g_return_val_if_fail (SYMFONIC_IS_PIPELINE (self), NULL);
  g_return_val_if_fail (self->file != NULL, NULL);
  g_return_val_if_fail (SYMFONIC_IS_REGISTRY (registry), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return load_file (registry, self->file, self, error);
}

/* A key the loader reads itself rather than setting a property with it:
 * a route's stages are objects named by other groups, and plugin folders
 * load before any group is read, since they register the types. Each
 * still has a #GParamSpec, so that it is listed like the others. */
static GParamSpec *
loader_key (GParamSpec **spec,
            const char  *name,
            const char  *nick,
            const char  *blurb)
{
  if (g_once_init_enter (spec))
    g_once_init_leave (spec, g_param_spec_ref_sink (g_param_spec_boxed (name, nick, blurb, G_TYPE_STRV,
                                                                        G_PARAM_WRITABLE | G_PARAM_STATIC_STRINGS)));

  return *spec;
}

/* Properties a route group does not set: the route's name is the group's,
 * its release line the [gateway]'s (a release-line stage picks another
 * per stream). */
static const char * const route_properties_not_keys[] = { "name", "release-line", NULL };

/**
 * symfonic_pipeline_list_keys:
 * @group: `gateway` for the `[gateway]` group, `route` for the
 *   `[route:NAME]` groups
 * @n_keys: (out) (optional): where to store how many keys there are
 *
 * Lists the keys the group may have, each as the #GParamSpec of what it
 * sets: the writable properties of #SymfonicPipeline, or of
 * #SymfonicRoute but its #SymfonicRoute:name and #SymfonicRoute:release-line.
 * The two keys the loader reads itself, `plugin-path` and a route's
 * `stages`, are listed by a #GParamSpec of their own that belongs to no
 * class. A property added to either class is a key of its group without
 * further ado; the loader refuses any other key.
 *
 * Returns: (array length=n_keys zero-terminated=1) (transfer container):
 *   the keys' #GParamSpecs, in the order their class installs them
 */
GParamSpec **
symfonic_pipeline_list_keys (const char *group,
                             guint      *n_keys)
{
  static GParamSpec *stages_spec;
  static GParamSpec *plugin_path_spec;
  g_autoptr(GTypeClass) klass = NULL;
  g_autofree GParamSpec **pspecs = NULL;
  GPtrArray *keys;
  gboolean route;
  guint n;

  g_return_val_if_fail (g_strcmp0 (group, "gateway") == 0 || g_strcmp0 (group, "route") == 0, NULL);

  route = g_str_equal (group, "route");
  klass = g_type_class_ref (route ? SYMFONIC_TYPE_ROUTE : SYMFONIC_TYPE_PIPELINE);
  pspecs = g_object_class_list_properties (G_OBJECT_CLASS (klass), &n);
  keys = g_ptr_array_sized_new (n + 2);
  for (guint i = 0; i < n; i++)
    {
      GParamSpec *pspec = pspecs[i];

      if (!(pspec->flags & G_PARAM_WRITABLE) || pspec->owner_type == G_TYPE_OBJECT ||
          (route && g_strv_contains (route_properties_not_keys, pspec->name)))
        continue;
      g_ptr_array_add (keys, pspec);
      /* beside the upstream, as a route is read */
      if (route && g_str_equal (pspec->name, "source"))
        g_ptr_array_add (keys, loader_key (&stages_spec, "stages", "Stages",
                                           "The [stage:NAME]s the route runs, in order, each at most once"));
    }
  if (!route)
    g_ptr_array_add (keys, loader_key (&plugin_path_spec, "plugin-path", "Plugin path",
                                       "Folders of plugins (C modules, Python and JavaScript scripts), "
                                       "relative to the file, loaded before any group is read"));

  if (n_keys != NULL)
    *n_keys = keys->len;
  g_ptr_array_add (keys, NULL);

  return (GParamSpec **) g_ptr_array_free (keys, FALSE);
}

/**
 * symfonic_pipeline_get_default_file:
 *
 * The pipeline served when none is named: `pipelines/default.pipeline` of
 * the source tree when running from a build, else of the installed data.
 *
 * Returns: (transfer full): the default pipeline file
 */
GFile *
symfonic_pipeline_get_default_file (void)
{
  g_autofree char *path = g_build_filename (symfonic_paths_data_dir (), "pipelines",
                                            "default.pipeline", NULL);

  return g_file_new_for_path (path);
}

static int compare_names (gconstpointer a,
                          gconstpointer b);

/**
 * symfonic_pipeline_uses_demo_credentials:
 * @self: a #SymfonicPipeline
 *
 * Whether a stage authenticates with the published demo credentials: a
 * stage says so through a boolean `uses-demo-tokens` property.
 *
 * Returns: %TRUE if anyone who read the README could get in
 */
gboolean
symfonic_pipeline_uses_demo_credentials (SymfonicPipeline *self)
{
  g_return_val_if_fail (SYMFONIC_IS_PIPELINE (self), FALSE);

  return symfonic_pipeline_find_demo_credentials (self) != NULL;
}

/* The name of the first `[stage:NAME]`, by name, that authenticates with
 * the published demo credentials, or NULL: what a refusal names. */
const char *
symfonic_pipeline_find_demo_credentials (SymfonicPipeline *self)
{
  g_autofree gpointer *names = NULL;
  guint n;

  names = g_hash_table_get_keys_as_array (self->stages, &n);
  qsort (names, n, sizeof (gpointer), compare_names);
  for (guint i = 0; i < n; i++)
    {
      GObject *stage = g_hash_table_lookup (self->stages, names[i]);
      GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (stage), "uses-demo-tokens");
      gboolean uses = FALSE;

      if (pspec == NULL || G_PARAM_SPEC_VALUE_TYPE (pspec) != G_TYPE_BOOLEAN)
        continue;
      g_object_get (stage, "uses-demo-tokens", &uses, NULL);
      if (uses)
        return names[i];
    }

  return NULL;
}

/**
 * symfonic_pipeline_get_file:
 * @self: a #SymfonicPipeline
 *
 * Gets the file the pipeline was loaded from, which
 * symfonic_pipeline_reload() loads again.
 *
 * Returns: (transfer none) (nullable): the file the pipeline came from
 */
GFile *
symfonic_pipeline_get_file (SymfonicPipeline *self)
{
  g_return_val_if_fail (SYMFONIC_IS_PIPELINE (self), NULL);

  return self->file;
}

/**
 * symfonic_pipeline_get_listen:
 * @self: a #SymfonicPipeline
 *
 * Gets the address the pipeline is served on, its #SymfonicPipeline:listen.
 *
 * Returns: the address to serve on, `HOST:PORT`
 */
const char *
symfonic_pipeline_get_listen (SymfonicPipeline *self)
{
  g_return_val_if_fail (SYMFONIC_IS_PIPELINE (self), NULL);

  return self->listen;
}

/**
 * symfonic_pipeline_get_workers:
 * @self: a #SymfonicPipeline
 *
 * Gets how many worker threads serve the pipeline: its
 * #SymfonicPipeline:workers, or one per processor when that is 0.
 *
 * Returns: how many worker threads serve, at least 1
 */
guint
symfonic_pipeline_get_workers (SymfonicPipeline *self)
{
  g_return_val_if_fail (SYMFONIC_IS_PIPELINE (self), 1);

  return self->workers > 0 ? self->workers : MAX (g_get_num_processors (), 1);
}

/**
 * symfonic_pipeline_get_max_body_bytes:
 * @self: a #SymfonicPipeline
 *
 * Gets the largest request body accepted, its #SymfonicPipeline:max-body-
 * bytes.
 *
 * Returns: the largest request body accepted, in bytes
 */
guint64
symfonic_pipeline_get_max_body_bytes (SymfonicPipeline *self)
{
  g_return_val_if_fail (SYMFONIC_IS_PIPELINE (self), 0);

  return self->max_body_bytes;
}

/**
 * symfonic_pipeline_get_release_line:
 * @self: a #SymfonicPipeline
 *
 * Gets the release line whose stream contract the pipeline publishes, its
 * #SymfonicPipeline:release-line.
 *
 * Returns: the release line to publish
 */
const char *
symfonic_pipeline_get_release_line (SymfonicPipeline *self)
{
  g_return_val_if_fail (SYMFONIC_IS_PIPELINE (self), NULL);

  return self->release_line;
}

/**
 * symfonic_pipeline_get_n_routes:
 * @self: a #SymfonicPipeline
 *
 * Gets how many routes the pipeline serves, for
 * symfonic_pipeline_get_route().
 *
 * Returns: how many routes the pipeline serves
 */
guint
symfonic_pipeline_get_n_routes (SymfonicPipeline *self)
{
  g_return_val_if_fail (SYMFONIC_IS_PIPELINE (self), 0);

  return self->routes->len;
}

/**
 * symfonic_pipeline_get_route:
 * @self: a #SymfonicPipeline
 * @position: a position in file order
 *
 * Gets one of the routes, in the order of their groups in the file.
 *
 * Returns: (transfer none): the route
 */
SymfonicRoute *
symfonic_pipeline_get_route (SymfonicPipeline *self,
                             guint             position)
{
  g_return_val_if_fail (SYMFONIC_IS_PIPELINE (self), NULL);
  g_return_val_if_fail (position < self->routes->len, NULL);

  return g_ptr_array_index (self->routes, position);
}

/**
 * symfonic_pipeline_lookup_route:
 * @self: a #SymfonicPipeline
 * @path: an HTTP path
 *
 * Finds the route that serves an HTTP path; a provider route serves the
 * paths of its API under its own.
 *
 * Returns: (transfer none) (nullable): the route serving @path
 */
SymfonicRoute *
symfonic_pipeline_lookup_route (SymfonicPipeline *self,
                                const char       *path)
{
  g_return_val_if_fail (SYMFONIC_IS_PIPELINE (self), NULL);
  g_return_val_if_fail (path != NULL, NULL);

  return g_hash_table_lookup (self->routes_by_path, path);
}

/**
 * symfonic_pipeline_get_stage:
 * @self: a #SymfonicPipeline
 * @name: the NAME of a `[stage:NAME]` group
 *
 * Gets the stage a `[stage:NAME]` group made.
 *
 * Returns: (transfer none) (nullable): the stage
 */
SymfonicStage *
symfonic_pipeline_get_stage (SymfonicPipeline *self,
                             const char       *name)
{
  g_return_val_if_fail (SYMFONIC_IS_PIPELINE (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);

  return g_hash_table_lookup (self->stages, name);
}

/**
 * symfonic_pipeline_get_source:
 * @self: a #SymfonicPipeline
 * @name: the NAME of a `[source:NAME]` group
 *
 * Gets the source a `[source:NAME]` group made.
 *
 * Returns: (transfer none) (nullable): the source
 */
SymfonicSource *
symfonic_pipeline_get_source (SymfonicPipeline *self,
                              const char       *name)
{
  g_return_val_if_fail (SYMFONIC_IS_PIPELINE (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);

  return g_hash_table_lookup (self->sources, name);
}

/**
 * symfonic_pipeline_get_store:
 * @self: a #SymfonicPipeline
 * @name: the NAME of a `[store:NAME]` group
 *
 * Gets the store a `[store:NAME]` group made, shared by every key that
 * names it.
 *
 * Returns: (transfer none) (nullable): the store, which plays one or more
 *   of the roles #SymfonicMeterStore, #SymfonicStreamCapStore and
 *   #SymfonicRunStore
 */
GObject *
symfonic_pipeline_get_store (SymfonicPipeline *self,
                             const char       *name)
{
  g_return_val_if_fail (SYMFONIC_IS_PIPELINE (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);

  return g_hash_table_lookup (self->stores, name);
}

/**
 * symfonic_pipeline_dup_store_names:
 * @self: a #SymfonicPipeline
 *
 * The metrics name each shared store by its group, in a stable order.
 *
 * Returns: (transfer full): the NAMEs of the `[store:NAME]` groups, sorted
 */
static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

GStrv
symfonic_pipeline_dup_store_names (SymfonicPipeline *self)
{
  GPtrArray *names;
  GHashTableIter iter;
  gpointer name;

  g_return_val_if_fail (SYMFONIC_IS_PIPELINE (self), NULL);

  names = g_ptr_array_new ();
  g_hash_table_iter_init (&iter, self->stores);
  while (g_hash_table_iter_next (&iter, &name, NULL))
    g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, compare_names);
  g_ptr_array_add (names, NULL);

  return (GStrv) g_ptr_array_free (names, FALSE);
}

/**
 * symfonic_pipeline_get_run_store:
 * @self: a #SymfonicPipeline
 *
 * Gets where the pipeline's resumable routes keep their runs.
 *
 * Returns: (transfer none) (nullable): the #SymfonicPipeline:run-store, or
 *   %NULL when the file names none
 */
SymfonicRunStore *
symfonic_pipeline_get_run_store (SymfonicPipeline *self)
{
  g_return_val_if_fail (SYMFONIC_IS_PIPELINE (self), NULL);

  return self->run_store;
}

typedef struct
{
  guint   waiting;
  GError *error;
} Checks;

static void
checked_cb (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  Checks *checks = user_data;
  g_autoptr(GError) error = NULL;

  checks->waiting--;
  if (!symfonic_store_check_finish (SYMFONIC_STORE (object), result, &error) && checks->error == NULL)
    checks->error = g_steal_pointer (&error);
}

/**
 * symfonic_pipeline_check_stores:
 * @self: a #SymfonicPipeline
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Asks every store the pipeline made (its `[store:NAME]` groups, and the
 * stores its keys named by type) whether it can serve, with
 * symfonic_store_check_async(), all at once, and waits for the answers
 * on a main context of its own. Loading a pipeline never connects to a
 * store; `symfonic-gateway --check --connect` calls this.
 *
 * Returns: %TRUE if every store can serve; %FALSE with @error set naming
 *   the first store that cannot, by its group, and why
 */
gboolean
symfonic_pipeline_check_stores (SymfonicPipeline  *self,
                                GCancellable      *cancellable,
                                GError           **error)
{
  g_autoptr(GMainContext) context = NULL;
  Checks *checks;
  gboolean ok;

  g_return_val_if_fail (SYMFONIC_IS_PIPELINE (self), FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  context = g_main_context_new ();
  g_main_context_push_thread_default (context);
  checks = g_new0 (Checks, self->all_stores->len + 1);
  for (guint i = 0; i < self->all_stores->len; i++)
    {
      GObject *store = g_ptr_array_index (self->all_stores, i);

      if (!SYMFONIC_IS_STORE (store))
        continue;
      checks[i].waiting = 1;
      symfonic_store_check_async (SYMFONIC_STORE (store), cancellable, checked_cb, &checks[i]);
    }
  for (guint i = 0; i < self->all_stores->len; i++)
    {
      while (checks[i].waiting > 0)
        g_main_context_iteration (context, TRUE);
    }
  g_main_context_pop_thread_default (context);

  ok = TRUE;
  for (guint i = 0; i < self->all_stores->len; i++)
    {
      if (checks[i].error == NULL)
        continue;
      if (ok)
        g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG, "%s: %s",
                     (const char *) g_ptr_array_index (self->store_labels, i), checks[i].error->message);
      ok = FALSE;
      g_clear_error (&checks[i].error);
    }
  g_free (checks);

  return ok;
}
