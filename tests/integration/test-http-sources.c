/* test-http-sources.c: the settings every HTTP source shares
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The runtime, openai and anthropic sources are one HTTP source with
 * three wire formats: the same keys, the same meaning, the same checks at
 * load. Each case runs through a pipeline file (in a folder of its own
 * where paths matter) and real HTTP: the gateway in-process, the support
 * library's test upstreams as the runtime and the providers.
 */
#include <string.h>
#include <sys/stat.h>

#include <glib/gstdio.h>

#include "symfonic-test-support.h"
#include "symfonic-test-upstream.h"

#define CLIENT_BODY "{\"query\":\"hello there\"}"
/* in header settings and files: it must reach no error */
#define SECRET "HEADER-SECRET-5150"

/* The keys every HTTP source has, whatever its wire format. */
static const char * const shared_keys[] = {
  "url", "base-url", "request-headers", "extra-headers", "headers-file", "max-connections", "connect-timeout",
  "timeout", "idle-timeout", "follow-redirects", "tls-ca-file", "max-event-bytes",
};

static const char * const http_types[] = { "runtime", "openai", "anthropic" };

/* --- what each type's upstream answers ------------------------------------ */

typedef struct
{
  const char *type;
  /* where the upstream serves the turn, and what of it the URL names */
  const char *path;
  const char *url_path;
  const char *turn;
  /* what the source needs besides the URL */
  const char *lines;
} Upstream;

#define OPENAI_CHUNK(choice) \
  "data: {\"id\":\"c-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m-1\",\"choices\":[" choice "]}\n\n"

static const Upstream upstreams[] = {
  { "runtime", "/run", "/run",
    "event: TextDeltaEvent\ndata: {\"text\":\"Hi\"}\n\n"
    "event: ResponseCompleteEvent\ndata: {\"text\":\"Hi\",\"duration_ms\":1}\n\n",
    "" },
  { "openai", "/v1/chat/completions", "/v1",
    OPENAI_CHUNK ("{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":null}")
    OPENAI_CHUNK ("{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}")
    "data: [DONE]\n\n",
    "model=m\n" },
  { "anthropic", "/v1/messages", "/v1",
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m-1\","
    "\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n"
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
    "\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n"
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    "model=m\n" },
};

static const Upstream *
upstream_of (const char *type)
{
  for (guint i = 0; i < G_N_ELEMENTS (upstreams); i++)
    {
      if (g_str_equal (upstreams[i].type, type))
        return &upstreams[i];
    }
  g_assert_not_reached ();
}

/* Serves @upstream's turn, then @after; returns the URL its source names. */
static char *
serve (SymfonicTestUpstream *fake,
       const Upstream       *upstream,
       const char           *body,
       SymfonicTestAfter     after)
{
  g_autoptr(GBytes) bytes = g_bytes_new (body, strlen (body));
  SymfonicTestScenario scenario = { .body = bytes, .after = after };
  g_autofree char *url = symfonic_test_upstream_add (fake, upstream->path, &scenario);

  g_assert_true (g_str_has_suffix (url, upstream->path));

  return g_strdup_printf ("%.*s%s", (int) (strlen (url) - strlen (upstream->path)), url, upstream->url_path);
}

/* --- pipelines ------------------------------------------------------------ */

/* A typed route on a source of @type set by @lines, in the file @name of
 * the folder @dir; returns the file's path. */
static char *
write_pipeline (const char *dir,
                const char *name,
                const char *type,
                const char *lines)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autofree char *text = g_strdup_printf ("[gateway]\nlisten=127.0.0.1:8080\nworkers=2\n\n"
                                           "[route:typed]\npath=" SYMFONIC_TEST_TYPED_PATH "\nkind=typed\n"
                                           "source=up\nstages=errors\n\n"
                                           "[source:up]\ntype=%s\n%s\n"
                                           "[stage:errors]\ntype=error-map\n"
                                           "table=" SYMFONIC_TEST_DATA_DIR "/error-map.ini\n",
                                           type, lines);
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_file_set_contents (path, text, -1, &error);
  g_assert_no_error (error);

  return g_steal_pointer (&path);
}

/* A folder of the test's own, under the isolated temporary one. */
static char *
make_dir (const char *name)
{
  g_autofree char *dir = g_build_filename (g_get_user_cache_dir (), name, NULL);

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);

  return g_steal_pointer (&dir);
}

static void
write_file (const char *path,
            const char *contents)
{
  g_autoptr(GError) error = NULL;

  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
}

/* Where the source group starts in write_pipeline()'s files. */
#define SOURCE_GROUP_LINE 11

static SymfonicTestStream *
post_typed (SymfonicServer *server,
            SoupSession    *session)
{
  g_autofree char *url = symfonic_test_server_dup_url (server, SYMFONIC_TEST_TYPED_PATH);

  return symfonic_test_stream_post (session, url, CLIENT_BODY, NULL);
}

static SymfonicTestFrame *
frame_at (SymfonicTestStream *stream,
          guint               i)
{
  return g_ptr_array_index (stream->frames, i);
}

/* The turn reached the client whole: its one delta first, the terminal
 * last (the consolidation the gateway schedules between them). */
static void
assert_turn (SymfonicTestStream *stream)
{
  g_assert_no_error (stream->error);
  g_test_message ("HTTP %u: %s", stream->status, stream->raw->str);
  g_assert_cmpuint (stream->status, ==, 200);
  g_assert_cmpuint (stream->frames->len, >=, 2);
  g_assert_cmpstr (frame_at (stream, 0)->event, ==, "TextDeltaEvent");
  g_assert_cmpstr (frame_at (stream, stream->frames->len - 1)->event, ==, "ResponseCompleteEvent");
}

/* Streams one turn from a source of @upstream's type with @lines besides
 * its URL, and returns what the upstream received. */
static SymfonicTestUpstreamRecord *
stream_turn (SymfonicTestUpstream *fake,
             const Upstream       *upstream,
             const char           *url_key,
             const char           *lines,
             const char           *dir)
{
  g_autofree char *url = serve (fake, upstream, upstream->turn, SYMFONIC_TEST_AFTER_CLOSE);
  g_autofree char *source_lines = g_strdup_printf ("%s=%s\n%s%s", url_key, url, upstream->lines, lines);
  g_autofree char *file = write_pipeline (dir, "turn.pipeline", upstream->type, source_lines);
  g_autoptr(SymfonicServer) server = symfonic_test_server_new_from_file (file, 2);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = post_typed (server, session);
  SymfonicTestUpstreamRecord *record;

  symfonic_test_stream_wait_done (stream);
  assert_turn (stream);
  record = symfonic_test_upstream_wait_record (fake, upstream->path, NULL);
  symfonic_server_stop (server);

  return record;
}

/* Loads @lines as the source group of a pipeline in @dir and expects it
 * refused; returns the error's message. */
static char *
load_refused (const char *dir,
              const char *type,
              const char *lines)
{
  g_autofree char *file = write_pipeline (dir, "refused.pipeline", type, lines);
  g_autoptr(GFile) gfile = g_file_new_for_path (file);
  g_autoptr(GError) error = NULL;
  g_autoptr(SymfonicPipeline) pipeline = symfonic_pipeline_new_from_file (symfonic_test_get_registry (), gfile,
                                                                          &error);

  g_test_message ("%s: %s", type, error != NULL ? error->message : "loads");
  g_assert_null (pipeline);
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);

  return g_strdup (error->message);
}

/* --- the keys ------------------------------------------------------------- */

/* One set of keys, declared once for all three types, each described for
 * symfonic-inspect and the pipeline file's reader. */
static void
test_properties (void)
{
  SymfonicRegistry *registry = symfonic_test_get_registry ();

  for (guint t = 0; t < G_N_ELEMENTS (http_types); t++)
    {
      GType type = symfonic_registry_lookup (registry, http_types[t]);
      g_autoptr(GTypeClass) klass = NULL;

      g_test_message ("type %s", http_types[t]);
      g_assert_true (type != G_TYPE_INVALID);
      g_assert_true (g_type_is_a (type, SYMFONIC_TYPE_SOURCE));
      g_assert_true (g_type_is_a (type, G_TYPE_INITABLE));
      klass = g_type_class_ref (type);
      for (guint i = 0; i < G_N_ELEMENTS (shared_keys); i++)
        {
          GParamSpec *pspec = g_object_class_find_property (G_OBJECT_CLASS (klass), shared_keys[i]);

          g_test_message ("  key %s", shared_keys[i]);
          g_assert_nonnull (pspec);
          g_assert_true ((pspec->flags & G_PARAM_READWRITE) == G_PARAM_READWRITE);
          g_assert_nonnull (g_param_spec_get_nick (pspec));
          g_assert_nonnull (g_param_spec_get_blurb (pspec));
          g_assert_cmpstr (g_param_spec_get_blurb (pspec), !=, g_param_spec_get_nick (pspec));
          /* one implementation: the same declaration for every type */
          g_assert_cmpstr (g_type_name (pspec->owner_type), ==, "SymfonicHttpSource");
        }
      /* paths, so that a pipeline's are relative to its file */
      g_assert_true (G_PARAM_SPEC_VALUE_TYPE (g_object_class_find_property (G_OBJECT_CLASS (klass), "tls-ca-file"))
                     == G_TYPE_FILE);
      g_assert_true (G_PARAM_SPEC_VALUE_TYPE (g_object_class_find_property (G_OBJECT_CLASS (klass), "headers-file"))
                     == G_TYPE_FILE);
    }
}

typedef struct
{
  const char *type;
  const char *url_key;
  const char *headers_key;
} AliasCase;

/* Each type takes the other type's names of the URL and of the headers
 * (its own are in its own tests). */
static const AliasCase alias_cases[] = {
  { "runtime", "base-url", "extra-headers" },
  { "openai", "url", "request-headers" },
  { "anthropic", "url", "request-headers" },
};

static void
test_aliases (gconstpointer data)
{
  const AliasCase *c = data;
  const Upstream *upstream = upstream_of (c->type);
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autofree char *dir = make_dir (c->url_key);
  g_autofree char *lines = g_strdup_printf ("%s=X-Alias: a-1;X-Other:  two \n", c->headers_key);
  SymfonicTestUpstreamRecord *record = stream_turn (fake, upstream, c->url_key, lines, dir);

  g_assert_cmpstr (record->path, ==, upstream->path);
  g_assert_cmpstr (soup_message_headers_get_one (record->headers, "X-Alias"), ==, "a-1");
  g_assert_cmpstr (soup_message_headers_get_one (record->headers, "X-Other"), ==, "two");
}

/* Both names of one setting: which one was meant? */
static void
test_aliases_both (void)
{
  g_autofree char *dir = make_dir ("both");

  for (guint t = 0; t < G_N_ELEMENTS (http_types); t++)
    {
      const Upstream *upstream = upstream_of (http_types[t]);
      g_autofree char *urls = g_strdup_printf ("url=http://127.0.0.1:9/v1\nbase-url=http://127.0.0.1:9/v2\n%s",
                                               upstream->lines);
      g_autofree char *headers = g_strdup_printf ("url=http://127.0.0.1:9/v1\nrequest-headers=X-A: 1\n"
                                                  "extra-headers=X-B: 2\n%s", upstream->lines);
      g_autofree char *url_error = load_refused (dir, http_types[t], urls);
      g_autofree char *headers_error = load_refused (dir, http_types[t], headers);

      g_assert_nonnull (strstr (url_error, "base-url"));
      g_assert_nonnull (strstr (headers_error, "extra-headers"));
    }
}

/* --- headers-file --------------------------------------------------------- */

static void
test_headers_file (gconstpointer data)
{
  const Upstream *upstream = upstream_of (data);
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autofree char *dir = make_dir ("headers");
  g_autofree char *file = g_build_filename (dir, "upstream.headers", NULL);
  SymfonicTestUpstreamRecord *record;

  write_file (file, "# the upstream's credentials\n"
                    "X-From-File: f-1\n"
                    "\n"
                    "   X-Second:  two words \r\n"
                    "  # indented comment\n"
                    "X-Last: " SECRET);
  /* relative to the pipeline file, after the request headers */
  record = stream_turn (fake, upstream, "url", "request-headers=X-Setting: s-1\nheaders-file=upstream.headers\n",
                        dir);

  g_assert_cmpstr (soup_message_headers_get_one (record->headers, "X-Setting"), ==, "s-1");
  g_assert_cmpstr (soup_message_headers_get_one (record->headers, "X-From-File"), ==, "f-1");
  g_assert_cmpstr (soup_message_headers_get_one (record->headers, "X-Second"), ==, "two words");
  g_assert_cmpstr (soup_message_headers_get_one (record->headers, "X-Last"), ==, SECRET);
}

typedef struct
{
  const char *name;
  const char *type;
  const char *contents;
  /* what the error must say */
  const char *says;
} HeadersFileCase;

static const HeadersFileCase headers_file_refusals[] = {
  { "no-colon", "runtime", "X-Good: 1\nX-Key " SECRET "\n", "line 2" },
  { "bad-name", "openai", "\n\nX Key: " SECRET "\n", "line 3" },
  { "framing", "runtime", "Content-Length: 3\n", "Content-Length" },
  { "host", "anthropic", "# comment\nhost: elsewhere\n", "host" },
  /* the provider's own key and version */
  { "key", "openai", "Authorization: Bearer " SECRET "\n", "Authorization" },
  { "version", "anthropic", "anthropic-version: 1\n", "anthropic-version" },
  { "control", "runtime", "X-A: a\001" SECRET "\n", "X-A" },
  { "not-utf8", "runtime", "X-A: \xff\xfe\n", "UTF-8" },
};

/* A wrong line is refused at load, naming the key and where it is, never
 * the line: it may hold a credential. */
static void
test_headers_file_refused (void)
{
  g_autofree char *dir = make_dir ("headers-refused");
  g_autofree char *file = g_build_filename (dir, "bad.headers", NULL);

  for (guint i = 0; i < G_N_ELEMENTS (headers_file_refusals); i++)
    {
      const HeadersFileCase *c = &headers_file_refusals[i];
      g_autofree char *lines = g_strdup_printf ("url=http://127.0.0.1:9/v1\n%sheaders-file=bad.headers\n",
                                                upstream_of (c->type)->lines);
      g_autofree char *message = NULL;

      g_test_message ("case %s", c->name);
      write_file (file, c->contents);
      message = load_refused (dir, c->type, lines);
      g_assert_nonnull (strstr (message, "headers-file"));
      g_assert_nonnull (strstr (message, c->says));
      g_assert_null (strstr (message, SECRET));
    }
}

/* A device, a FIFO or a folder named as the headers file is refused at
 * once: read whole, /dev/zero grows the process without end, and a FIFO
 * blocks the load (and a reload, with it the signal thread) until a
 * writer comes. */
static void
test_headers_file_special (void)
{
  g_autofree char *dir = make_dir ("headers-special");
  g_autofree char *fifo = g_build_filename (dir, "headers.fifo", NULL);
  const char *paths[] = { "/dev/zero", fifo, dir };

  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  for (guint t = 0; t < G_N_ELEMENTS (http_types); t++)
    {
      for (guint i = 0; i < G_N_ELEMENTS (paths); i++)
        {
          g_autofree char *lines = g_strdup_printf ("url=http://127.0.0.1:9/v1\n%sheaders-file=%s\n",
                                                    upstream_of (http_types[t])->lines, paths[i]);
          gint64 start = g_get_monotonic_time ();
          g_autofree char *message = load_refused (dir, http_types[t], lines);

          g_assert_nonnull (strstr (message, "headers-file"));
          g_assert_nonnull (strstr (message, paths[i]));
          g_assert_cmpint (g_get_monotonic_time () - start, <, G_USEC_PER_SEC);
        }
    }
  g_assert_cmpint (g_unlink (fifo), ==, 0);
}

/* --- tls-ca-file ---------------------------------------------------------- */

/* A CA file named relative to a pipeline file in a folder of its own is
 * found there, whatever the working directory. */
static void
test_tls_ca_file_relative (gconstpointer data)
{
  const Upstream *upstream = upstream_of (data);
  g_autofree char *cert = g_test_build_filename (G_TEST_DIST, "integration", "tls", "upstream-cert.pem", NULL);
  g_autofree char *key = g_test_build_filename (G_TEST_DIST, "integration", "tls", "upstream-key.pem", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GTlsCertificate) certificate = g_tls_certificate_new_from_files (cert, key, &error);
  g_autoptr(SymfonicTestUpstream) fake = NULL;
  g_autofree char *dir = g_build_filename (g_get_user_cache_dir (), "tls", "pipelines", NULL);
  g_autofree char *ca = g_build_filename (dir, "upstream-ca.pem", NULL);
  g_autofree char *pem = NULL;

  g_assert_no_error (error);
  fake = symfonic_test_upstream_new_tls (certificate);
  g_file_get_contents (cert, &pem, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  write_file (ca, pem);

  stream_turn (fake, upstream, "url", "tls-ca-file=upstream-ca.pem\n", dir);
}

/* A CA file that is not there fails the load, not each request: the
 * error names the pipeline file, the key's line and the key, and the file
 * where the pipeline's folder has it. */
static void
test_tls_ca_file_missing (void)
{
  g_autofree char *dir = g_build_filename (g_get_user_cache_dir (), "tls-missing", "pipelines", NULL);
  g_autofree char *missing = g_build_filename (dir, "nope.pem", NULL);

  for (guint t = 0; t < G_N_ELEMENTS (http_types); t++)
    {
      /* http: the trust is checked all the same */
      g_autofree char *lines = g_strdup_printf ("url=http://127.0.0.1:9/v1\n%stls-ca-file=nope.pem\n",
                                                upstream_of (http_types[t])->lines);
      g_autofree char *message = load_refused (dir, http_types[t], lines);
      g_autofree char *file = g_build_filename (dir, "refused.pipeline", NULL);
      /* the key's own line: after the group's and its type's */
      guint key_line = SOURCE_GROUP_LINE + 2;
      g_autofree char *where = NULL;
      g_autofree char *out = NULL;
      g_autofree char *err = NULL;
      g_autoptr(GSubprocess) check = NULL;
      g_autoptr(GError) error = NULL;

      for (const char *c = lines; c < strstr (lines, "tls-ca-file="); c++)
        key_line += *c == '\n';
      where = g_strdup_printf ("%s:%u: [source:up] tls-ca-file: ", file, key_line);
      g_assert_true (g_str_has_prefix (message, where));
      g_assert_nonnull (strstr (message, missing));

      /* and so does `symfonic-gateway --check` */
      check = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE, &error,
                                g_getenv ("SYMFONIC_GATEWAY"), "--check", file, NULL);
      g_assert_no_error (error);
      g_subprocess_communicate_utf8 (check, NULL, NULL, &out, &err, &error);
      g_assert_no_error (error);
      g_test_message ("--check: %s", err);
      g_assert_cmpint (g_subprocess_get_exit_status (check), ==, 1);
      g_assert_nonnull (strstr (err, where));
      g_assert_nonnull (strstr (err, "tls-ca-file"));
      g_assert_nonnull (strstr (err, missing));
    }
}

/* A file that holds no certificate: the error says what the TLS library
 * found wrong with it, not a guess of ours. */
static void
test_tls_ca_file_not_pem (void)
{
  g_autofree char *dir = make_dir ("tls-not-pem");
  g_autofree char *file = g_build_filename (dir, "not.pem", NULL);
  g_autoptr(GError) inner = NULL;
  g_autoptr(GTlsDatabase) database = NULL;
  g_autofree char *lines = NULL;
  g_autofree char *message = NULL;

  write_file (file, "not a certificate\n");
  database = g_tls_file_database_new (file, &inner);
  g_assert_null (database);
  g_assert_nonnull (inner);

  lines = g_strdup_printf ("url=https://127.0.0.1:9/run\ntls-ca-file=%s\n", file);
  message = load_refused (dir, "runtime", lines);
  g_assert_nonnull (strstr (message, "tls-ca-file"));
  g_assert_nonnull (strstr (message, inner->message));
}

/* --- initialisation --------------------------------------------------------- */

/* GInitable: a second init gives the first one's answer, even when what
 * failed would succeed now. */
static void
test_init_once (void)
{
  g_autofree char *dir = make_dir ("init-once");
  g_autofree char *key_path = g_build_filename (dir, "provider.key", NULL);
  g_autoptr(GFile) key = g_file_new_for_path (key_path);
  GType type = symfonic_registry_lookup (symfonic_test_get_registry (), "openai");
  g_autoptr(GObject) source = g_object_new (type, "base-url", "http://127.0.0.1:9/v1", "model", "m",
                                            "api-key-file", key, NULL);
  g_autoptr(GError) first = NULL;
  g_autoptr(GError) second = NULL;

  g_assert_false (g_initable_init (G_INITABLE (source), NULL, &first));
  g_assert_nonnull (first);
  write_file (key_path, "sk-now-there\n");
  g_assert_false (g_initable_init (G_INITABLE (source), NULL, &second));
  g_assert_error (second, first->domain, first->code);
  g_assert_cmpstr (second->message, ==, first->message);
}

/* --- the connection cap on a provider ---------------------------------------- */

static gboolean
tick_cb (gpointer data)
{
  return G_SOURCE_CONTINUE;
}

/* The stream past max-connections is refused before it starts, as on the
 * runtime: 503, Retry-After, and the slot comes back once a stream ends. */
static void
test_max_connections_provider (gconstpointer data)
{
  const Upstream *upstream = upstream_of (data);
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  /* the turn's first event, then keep-alive comments: the stream stays */
  g_autofree char *body = g_strndup (upstream->turn, strstr (upstream->turn, "\n\n") + 2 - upstream->turn);
  g_autofree char *first_event = NULL;
  g_autofree char *url = NULL;
  g_autofree char *dir = make_dir ("cap");
  g_autofree char *lines = NULL;
  g_autofree char *file = NULL;
  g_autoptr(SymfonicServer) server = NULL;
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) held = NULL;
  g_autoptr(SymfonicTestStream) refused = NULL;
  g_autoptr(JsonNode) detail = NULL;
  gint64 deadline;
  guint status = 0;

  /* anthropic's first frame is message_start, which is no event yet */
  if (g_str_equal (upstream->type, "anthropic"))
    {
      const char *second = strstr (upstream->turn, "\n\n") + 2;

      first_event = g_strndup (upstream->turn, strstr (second, "\n\n") + 2 - upstream->turn);
      g_free (body);
      body = g_steal_pointer (&first_event);
    }
  url = serve (fake, upstream, body, SYMFONIC_TEST_AFTER_KEEPALIVE);
  lines = g_strdup_printf ("url=%s\n%smax-connections=1\n", url, upstream->lines);
  file = write_pipeline (dir, "cap.pipeline", upstream->type, lines);
  server = symfonic_test_server_new_from_file (file, 2);

  held = post_typed (server, session);
  symfonic_test_stream_wait_frames (held, 1);
  g_assert_cmpuint (held->status, ==, 200);

  refused = post_typed (server, session);
  symfonic_test_stream_wait_done (refused);
  g_test_message ("past the cap: HTTP %u %s", refused->status, refused->raw->str);
  g_assert_cmpuint (refused->status, ==, 503);
  g_assert_cmpstr (soup_message_headers_get_one (soup_message_get_response_headers (refused->message),
                                                 "Retry-After"), ==, "1");
  g_assert_cmpuint (refused->frames->len, ==, 0);
  detail = symfonic_test_json_parse (refused->raw->str);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (detail), "code"), ==, "overloaded");
  g_assert_cmpuint (symfonic_test_upstream_count_records (fake, upstream->path, NULL), ==, 1);

  /* the held stream's client leaves: its slot is free again */
  symfonic_test_stream_close (held);
  deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  while (status != 200 && g_get_monotonic_time () < deadline)
    {
      g_autoptr(SymfonicTestStream) next = post_typed (server, session);
      GSource *tick = g_timeout_source_new (50);

      symfonic_test_stream_wait_frames (next, 1);
      status = next->status;
      symfonic_test_stream_close (next);
      /* a moment for the worker to see the close */
      g_source_set_callback (tick, tick_cb, NULL, NULL);
      g_source_attach (tick, NULL);
      g_main_context_iteration (NULL, TRUE);
      g_source_destroy (tick);
      g_source_unref (tick);
    }
  g_assert_cmpuint (status, ==, 200);

  symfonic_server_stop (server);
}

/* --- idle-timeout on the runtime ---------------------------------------------- */

/* A runtime whose answer stalls after its first event ends the stream once
 * idle-timeout passes, though timeout would wait much longer. */
static void
test_idle_timeout_runtime (void)
{
  const Upstream *upstream = upstream_of ("runtime");
  g_autoptr(SymfonicTestUpstream) fake = symfonic_test_upstream_new ();
  g_autofree char *url = serve (fake, upstream, "event: TextDeltaEvent\ndata: {\"text\":\"Hi\"}\n\n",
                                SYMFONIC_TEST_AFTER_STALL);
  g_autofree char *dir = make_dir ("idle");
  g_autofree char *lines = g_strdup_printf ("url=%s\ntimeout=30\nidle-timeout=1\n", url);
  g_autofree char *file = write_pipeline (dir, "idle.pipeline", "runtime", lines);
  g_autoptr(SymfonicServer) server = symfonic_test_server_new_from_file (file, 2);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(SymfonicTestStream) stream = post_typed (server, session);
  g_autoptr(JsonNode) error = NULL;
  SymfonicTestFrame *last;
  gint64 took;

  symfonic_test_stream_wait_done (stream);
  took = stream->end_us - stream->headers_us;
  g_test_message ("stalled: error frame after %" G_GINT64_FORMAT " ms: %s", took / 1000, stream->raw->str);
  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, 200);
  g_assert_cmpuint (stream->frames->len, ==, 2);
  g_assert_cmpstr (frame_at (stream, 0)->event, ==, "TextDeltaEvent");
  last = frame_at (stream, 1);
  g_assert_cmpstr (last->event, ==, "error");
  error = symfonic_test_json_parse (last->data);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (error), "code"), ==, "upstream_timeout");
  g_assert_cmpint (took, >=, 900 * G_TIME_SPAN_MILLISECOND);
  g_assert_cmpint (took, <, 5 * G_USEC_PER_SEC);

  symfonic_server_stop (server);
}

int
main (int   argc,
      char *argv[])
{
  symfonic_test_init (&argc, &argv);

  g_test_add_func ("/http-sources/properties", test_properties);
  for (guint i = 0; i < G_N_ELEMENTS (alias_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/http-sources/aliases/%s/%s", alias_cases[i].type,
                                               alias_cases[i].url_key);

      g_test_add_data_func (path, &alias_cases[i], test_aliases);
    }
  g_test_add_func ("/http-sources/aliases/both", test_aliases_both);
  for (guint t = 0; t < G_N_ELEMENTS (http_types); t++)
    {
      g_autofree char *headers = g_strdup_printf ("/http-sources/headers-file/%s", http_types[t]);
      g_autofree char *tls = g_strdup_printf ("/http-sources/tls-ca-file/relative/%s", http_types[t]);

      g_test_add_data_func (headers, http_types[t], test_headers_file);
      g_test_add_data_func (tls, http_types[t], test_tls_ca_file_relative);
    }
  g_test_add_func ("/http-sources/headers-file/refused", test_headers_file_refused);
  g_test_add_func ("/http-sources/headers-file/special", test_headers_file_special);
  g_test_add_func ("/http-sources/tls-ca-file/missing", test_tls_ca_file_missing);
  g_test_add_func ("/http-sources/tls-ca-file/not-pem", test_tls_ca_file_not_pem);
  g_test_add_func ("/http-sources/init-once", test_init_once);
  g_test_add_data_func ("/http-sources/max-connections/openai", "openai", test_max_connections_provider);
  g_test_add_data_func ("/http-sources/max-connections/anthropic", "anthropic", test_max_connections_provider);
  g_test_add_func ("/http-sources/idle-timeout/runtime", test_idle_timeout_runtime);

  return g_test_run ();
}
