/* test-contract-routes.c: the stream contract end to end, on every route
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The acceptance test of DESIGN sections 3-5 through real HTTP. A runtime
 * source reads scripted turns from the support library's test upstream,
 * which splits its bytes adversarially (one byte per write, random
 * writes); the turns themselves split the answer into text deltas at
 * every point of a short answer and at random points of longer ones,
 * inside citation tags, inside the memory-extraction block and inside
 * multi-byte characters' neighbours. Every turn goes through the typed
 * route, the chunk routes of both release lines and /chat, and every
 * client byte is checked:
 *
 * - no extraction block (tags or content) and no citation tag ever
 *   reaches a client, while near-misses survive verbatim;
 * - the cleaned text equals what a plain, non-streaming reference makes
 *   of the whole answer (regular expressions written here, never the
 *   gateway's filters);
 * - each route publishes exactly its contract (typed order, the 11.0 and
 *   10.x chunk shapes, the AgentResponse), in strict JSON.
 *
 * The upstream keys its scenarios on the query the gateway forwards, so
 * one gateway and one upstream serve every turn, many at once.
 */
#include <string.h>

#include "symfonic-test-support.h"
#include "symfonic-test-upstream.h"

#define UPSTREAM_PATH "/run"
#define SESSION_ID "a:b:\xC3\xA7"
#define BLOCK "<memory_ops>[{\"op\":\"add\",\"node\":\"n1\",\"value\":\"v1\"}]</memory_ops>"
#define EXPECTED_OPS "[{\"op\":\"add\",\"node\":\"n1\",\"value\":\"v1\"}]"
/* the block's content: it reaches a client only as the op itself */
#define BLOCK_CONTENT "v1"
/* how many requests are in flight at once */
#define BATCH 48
#define RANDOM_SPLITS 100

/* --- the answers ------------------------------------------------------- */

/* Each has exactly one block and several tags. Non-ASCII on purpose: 2-,
 * 3- and 4-byte characters (some next to tags), which the filters must
 * never cut. */
static const char * const answers[] = {
  /* short: every split into two deltas is tried */
  "Tea \xF0\x9F\x8D\xB5 [semantic] helps" BLOCK " ok [Episodic:n42].",
  /* the tags, with and without ids, in every case, and near-misses that
   * must survive: a longer word, a blank inside, an empty id, a blank in
   * the id, an id of 65 characters */
  "Gru\xC3\x9F \xF0\x9F\x91\x8B\xF0\x9F\x8F\xBD aus Z\xC3\xBCrich [semantic]! You said [episodic:n42] "
  "that \xF0\x9D\x84\x9E music [PROCEDURAL] matters; [semantics] and [ semantic] stay, so do "
  "[episodic:] and [procedural:x y] and [semantic:"
  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx]."
  "\nLine two  [Semantic:a.b_c-d]" BLOCK "\tend [episodic:N_1.2-3]",
  /* tags first and last, and a space before the block that a tag after
   * it takes along */
  "[semantic]Start " BLOCK "[procedural] mid \xE2\x82\xAC [episodic:e1]",
  /* the block inside a tag: what is left once it is out is a tag; and
   * the answer ends on what might have become one */
  "Hmm [seman" BLOCK "tic] ok \xF0\x9F\x8E\x89 [SEMANTIC:x] [episodic",
};

/* Near-misses as they appear in the answers; each must come out intact. */
static const char * const near_misses[] = {
  "[semantics]",
  "[ semantic]",
  "[episodic:]",
  "[procedural:x y]",
  "[semantic:xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx]",
};

/* Thinking may cite memories too: its tags go as the answer's do. */
static const char * const thinking_texts[] = {
  "Thinking about \xF0\x9D\x84\x9E music [episodic:t1]\xE2\x80\xA6 ",
  "the user said \"tea\"<memory_ops>[{\"op\":\"add\",\"node\":\"t2\",\"value\":\"v1\"}]</memory_ops>\nand Z\xC3\xBCrich",
};

static const char * const activations[] = {
  "{\"node_id\":\"a1\",\"node_label\":\"Tea \xF0\x9F\x8D\xB5\",\"score\":0.75,\"layer\":1,\"source_node_id\":null}",
  "{\"node_id\":\"a2\",\"node_label\":\"Z\xC3\xBCrich\",\"score\":0.5,\"layer\":2,\"source_node_id\":\"a1\"}",
};

/* --- the reference ------------------------------------------------------ */

/* What the whole answer is once cleaned, computed on the whole text at
 * once: blocks out first (the extraction stage runs before the citation
 * stage), then each tag with at most one space before it. RAW keeps the
 * case-insensitivity to ASCII, like the tag grammar. */
static char *
reference_clean (const char *answer)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GRegex) block = g_regex_new ("<memory_ops>.*?</memory_ops>",
                                         G_REGEX_DOTALL | G_REGEX_RAW, 0, &error);
  g_autoptr(GRegex) tag = NULL;
  g_autofree char *without_block = NULL;
  char *clean;

  g_assert_no_error (error);
  tag = g_regex_new (" ?\\[(semantic|episodic|procedural)(:[A-Za-z0-9_.-]{1,64})?\\]",
                     G_REGEX_CASELESS | G_REGEX_RAW, 0, &error);
  g_assert_no_error (error);

  without_block = g_regex_replace_literal (block, answer, -1, 0, "", 0, &error);
  g_assert_no_error (error);
  clean = g_regex_replace_literal (tag, without_block, -1, 0, "", 0, &error);
  g_assert_no_error (error);

  return clean;
}

static GRegex *leak_regex;

static void
assert_no_leak (const char *what,
                const char *text)
{
  g_autoptr(GMatchInfo) match = NULL;

  if (strstr (text, "<memory_ops") != NULL || strstr (text, "memory_ops>") != NULL)
    g_error ("%s carries a piece of the extraction block: %s", what, text);
  if (g_regex_match (leak_regex, text, 0, &match))
    {
      g_autofree char *tag = g_match_info_fetch (match, 0);

      g_error ("%s carries the citation tag %s: %s", what, tag, text);
    }
}

static guint
count_occurrences (const char *haystack,
                   const char *needle)
{
  guint n = 0;

  for (const char *p = strstr (haystack, needle); p != NULL; p = strstr (p + 1, needle))
    n++;

  return n;
}

/* --- turns ------------------------------------------------------------------ */

typedef struct
{
  char      *name;
  guint      answer;
  char      *expected;
  /* the answer split into the texts of the TextDeltaEvents */
  GPtrArray *deltas;
  gboolean   thinking;
  /* a ThinkingDeltaEvent between the first two text deltas too */
  gboolean   thinking_between;
  /* one without text, on a turn without thinking: not real thinking */
  gboolean   empty_thinking;
  gboolean   activations;
  /* every non-ASCII character as \u escapes, 4-byte ones as surrogate
   * pairs */
  gboolean   escape_unicode;
  GBytes    *body;
} Turn;

static void
turn_free (Turn *turn)
{
  g_free (turn->name);
  g_free (turn->expected);
  g_ptr_array_unref (turn->deltas);
  g_clear_pointer (&turn->body, g_bytes_unref);
  g_free (turn);
}

static void
append_json_string (GString    *out,
                    const char *text,
                    gboolean    escape_unicode)
{
  g_string_append_c (out, '"');
  for (const char *p = text; *p != '\0'; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      if (c == '"' || c == '\\')
        g_string_append_printf (out, "\\%c", (char) c);
      else if (c == '\n')
        g_string_append (out, "\\n");
      else if (c == '\t')
        g_string_append (out, "\\t");
      else if (c < 0x20)
        g_string_append_printf (out, "\\u%04x", c);
      else if (c >= 0x80 && escape_unicode && c >= 0x10000)
        g_string_append_printf (out, "\\u%04X\\u%04X",
                                0xD800 + ((c - 0x10000) >> 10), 0xDC00 + ((c - 0x10000) & 0x3FF));
      else if (c >= 0x80 && escape_unicode)
        g_string_append_printf (out, "\\u%04x", c);
      else
        g_string_append_len (out, p, g_utf8_next_char (p) - p);
    }
  g_string_append_c (out, '"');
}

static void
append_text_event (GString    *out,
                   const char *event,
                   const char *text,
                   gboolean    escape_unicode)
{
  g_string_append_printf (out, "event: %s\ndata: {\"text\":", event);
  append_json_string (out, text, escape_unicode);
  g_string_append (out, "}\n\n");
}

/* A runtime's terminal, which carries the whole raw answer. */
static void
append_terminal (GString    *out,
                 const char *answer,
                 gboolean    escape_unicode)
{
  g_string_append (out, "event: ResponseCompleteEvent\ndata: {\"text\":");
  append_json_string (out, answer, escape_unicode);
  g_string_append (out, ",\"duration_ms\":7}\n\n");
}

/* The upstream's side of the turn, in the published order; its terminal
 * carries the raw answer, block and tags and all, as a runtime would. */
static GBytes *
turn_encode (Turn *turn)
{
  GString *out = g_string_new (": a scripted runtime turn\n\n");

  if (turn->activations)
    {
      for (guint i = 0; i < G_N_ELEMENTS (activations); i++)
        g_string_append_printf (out, "event: ActivationEvent\ndata: %s\n\n", activations[i]);
    }
  if (turn->thinking)
    append_text_event (out, "ThinkingDeltaEvent", thinking_texts[0], turn->escape_unicode);
  if (turn->empty_thinking)
    append_text_event (out, "ThinkingDeltaEvent", "", turn->escape_unicode);
  for (guint i = 0; i < turn->deltas->len; i++)
    {
      append_text_event (out, "TextDeltaEvent", g_ptr_array_index (turn->deltas, i), turn->escape_unicode);
      if (i == 0 && turn->thinking_between)
        append_text_event (out, "ThinkingDeltaEvent", thinking_texts[1], turn->escape_unicode);
    }
  g_string_append (out, "event: ConsolidationScheduledEvent\n"
                   "data: {\"report\":{\"scheduled\":true},\"graph_mutations\":[]}\n\n");
  append_terminal (out, answers[turn->answer], turn->escape_unicode);

  return g_string_free_to_bytes (out);
}

/* The byte offsets of every character boundary strictly inside @text. */
static GArray *
char_boundaries (const char *text)
{
  GArray *offsets = g_array_new (FALSE, FALSE, sizeof (guint));

  for (const char *p = g_utf8_next_char (text); *p != '\0'; p = g_utf8_next_char (p))
    {
      guint offset = p - text;

      g_array_append_val (offsets, offset);
    }

  return offsets;
}

static int
compare_uint (gconstpointer a,
              gconstpointer b)
{
  guint x = *(const guint *) a, y = *(const guint *) b;

  return x < y ? -1 : x > y ? 1 : 0;
}

/* Splits the answer at sorted byte offsets; equal offsets make empty
 * deltas, which a runtime may send too. */
static GPtrArray *
split_at (const char *text,
          GArray     *cuts)
{
  GPtrArray *pieces = g_ptr_array_new_with_free_func (g_free);
  guint from = 0;

  for (guint i = 0; i < cuts->len; i++)
    {
      guint to = g_array_index (cuts, guint, i);

      g_ptr_array_add (pieces, g_strndup (text + from, to - from));
      from = to;
    }
  g_ptr_array_add (pieces, g_strdup (text + from));

  return pieces;
}

static Turn *
turn_new (guint       index,
          guint       answer,
          GPtrArray  *deltas,
          const char *how)
{
  Turn *turn = g_new0 (Turn, 1);

  turn->name = g_strdup_printf ("turn %u (answer %u, %s, %u deltas)", index, answer, how, deltas->len);
  turn->answer = answer;
  turn->expected = reference_clean (answers[answer]);
  turn->deltas = deltas;
  /* the flags vary independently of the split */
  turn->thinking = index % 2 == 1;
  turn->thinking_between = turn->thinking && index % 4 == 1 && deltas->len > 1;
  turn->empty_thinking = index % 8 == 2;
  turn->activations = index % 4 != 3;
  turn->escape_unicode = index % 3 == 0;
  turn->body = turn_encode (turn);

  return turn;
}

/* Every two-way split of the short answer, each answer one character per
 * delta, and seeded random multi-way splits of every answer. */
static GPtrArray *
make_turns (void)
{
  GPtrArray *turns = g_ptr_array_new_with_free_func ((GDestroyNotify) turn_free);
  g_autoptr(GArray) boundaries = char_boundaries (answers[0]);
  guint32 seed = g_test_rand_int ();
  g_autoptr(GRand) rand = g_rand_new_with_seed (seed);

  g_test_message ("random splits from seed %u", seed);

  for (guint i = 0; i < boundaries->len; i++)
    {
      g_autoptr(GArray) cut = g_array_new (FALSE, FALSE, sizeof (guint));

      g_array_append_val (cut, g_array_index (boundaries, guint, i));
      g_ptr_array_add (turns, turn_new (turns->len, 0, split_at (answers[0], cut), "two-way"));
    }

  for (guint a = 0; a < G_N_ELEMENTS (answers); a++)
    {
      g_autoptr(GArray) every = char_boundaries (answers[a]);

      g_ptr_array_add (turns, turn_new (turns->len, a, split_at (answers[a], every), "per character"));
    }

  for (guint i = 0; i < RANDOM_SPLITS; i++)
    {
      guint a = i % G_N_ELEMENTS (answers);
      g_autoptr(GArray) all = char_boundaries (answers[a]);
      g_autoptr(GArray) cuts = g_array_new (FALSE, FALSE, sizeof (guint));
      guint n = g_rand_int_range (rand, 1, MIN (all->len, 40) + 1);

      for (guint j = 0; j < n; j++)
        {
          /* one in five turns may repeat a cut: an empty delta */
          guint pick = g_rand_int_range (rand, 0, all->len);
          guint offset = g_array_index (all, guint, pick);

          if (i % 5 != 0)
            g_array_remove_index_fast (all, pick);
          g_array_append_val (cuts, offset);
        }
      g_array_sort (cuts, compare_uint);
      g_ptr_array_add (turns, turn_new (turns->len, a, split_at (answers[a], cuts), "random"));
    }

  return turns;
}

/* --- the gateway ------------------------------------------------------------ */

typedef enum {
  ROUTE_TYPED,
  ROUTE_CHUNKS_11,
  ROUTE_CHUNKS_10,
  ROUTE_CHAT,
  N_ROUTES
} Route;

static const char * const route_paths[N_ROUTES] = { "/t", "/c11", "/c10", "/chat" };

/* release-line;extraction;citation(;projection) on every route, the
 * old line by a stage of its own; with @auth, auth first. */
static SymfonicServer *
gateway_new (const char *upstream_url,
             gboolean    auth)
{
  const char *first = auth ? "auth;" : "";
  g_autofree char *text = NULL;

  text = g_strdup_printf ("[gateway]\n"
                          "listen=127.0.0.1:8080\n"
                          "workers=2\n"
                          "release-line=11.0.0\n"
                          "\n"
                          "[route:typed]\npath=/t\nkind=typed\nsource=up\n"
                          "stages=%srelease-line;extraction;citation\n\n"
                          "[route:c11]\npath=/c11\nkind=chunks\nsource=up\n"
                          "stages=%srelease-line;extraction;citation;projection\n\n"
                          "[route:c10]\npath=/c10\nkind=chunks\nsource=up\n"
                          "stages=%sold-line;extraction;citation;projection\n\n"
                          "[route:chat]\npath=/chat\nkind=chat\nsource=up\n"
                          "stages=%srelease-line;extraction;citation\n\n"
                          "[source:up]\ntype=runtime\nurl=%s\ntimeout=15\n\n"
                          "[stage:release-line]\ntype=release-line\n\n"
                          "[stage:old-line]\ntype=release-line\nrelease-line=10.4.9\n\n"
                          "[stage:extraction]\ntype=extraction\n\n"
                          "[stage:citation]\ntype=citation\n\n"
                          "[stage:projection]\ntype=projection\n\n"
                          "%s",
                          first, first, first, first, upstream_url,
                          auth ? "[stage:auth]\ntype=auth\ntokens-file=demo-tokens.ini\n" : "");

  /* relative paths resolve against the data folder: the demo tokens */
  return symfonic_test_server_new (text, SYMFONIC_TEST_DATA_DIR, 2);
}

typedef struct
{
  const Turn         *turn;
  Route               route;
  char               *query;
  SymfonicTestStream *stream;
} Request;

static void
request_free (Request *request)
{
  g_free (request->query);
  g_clear_pointer (&request->stream, symfonic_test_stream_free);
  g_free (request);
}

static char *
client_body (const char *query)
{
  GString *body = g_string_new ("{\"query\":");

  append_json_string (body, query, FALSE);
  g_string_append (body, ",\"session_id\":\"" SESSION_ID "\",\"tenant_id\":\"evil\"}");

  return g_string_free (body, FALSE);
}

/* Scripts the turn for this one request (split its own way) and sends
 * it; /chat goes through the same streaming client, which keeps the
 * whole body in raw. */
static Request *
request_start (SymfonicTestUpstream *upstream,
               SoupSession          *session,
               SymfonicServer       *server,
               const Turn           *turn,
               guint                 index,
               Route                 route,
               gboolean              auth,
               guint                 hold_ms)
{
  Request *request = g_new0 (Request, 1);
  SymfonicTestScenario scenario = {
    .body = turn->body,
    .split = (SymfonicTestSplit) ((index + route) % 3),
    .seed = g_test_rand_int (),
    .hold_ms = hold_ms,
  };
  g_autofree char *url = symfonic_test_server_dup_url (server, route_paths[route]);
  g_autofree char *body = NULL;

  request->turn = turn;
  request->route = route;
  request->query = g_strdup_printf ("%s via %s", turn->name, route_paths[route]);
  symfonic_test_upstream_add_for_query (upstream, UPSTREAM_PATH, request->query, &scenario);

  body = client_body (request->query);
  if (auth)
    request->stream = symfonic_test_stream_post (session, url, body,
                                                 "Authorization", "Bearer demo-token-alice",
                                                 "X-Tenant-ID", "acme",
                                                 NULL);
  else
    request->stream = symfonic_test_stream_post (session, url, body, NULL);

  return request;
}

/* --- the checks --------------------------------------------------------------- */

static JsonNode *
strict_parse (const char *what,
              const char *text)
{
  g_autoptr(GError) error = NULL;

  if (!symfonic_test_json_is_strict (text, -1, &error))
    g_error ("%s: %s", what, error->message);

  return symfonic_test_json_parse (text);
}

static gboolean
json_equal_text (JsonNode   *node,
                 const char *expected)
{
  g_autoptr(JsonNode) e = json_from_string (expected, NULL);

  g_assert_nonnull (e);
  return node != NULL && json_node_equal (node, e);
}

static const char *
string_member (JsonObject *object,
               const char *name)
{
  JsonNode *node = json_object_get_member (object, name);

  g_assert_nonnull (node);
  g_assert_true (JSON_NODE_HOLDS_VALUE (node));
  g_assert_true (json_node_get_value_type (node) == G_TYPE_STRING);
  return json_node_get_string (node);
}

/* Cleaning may regroup the thinking deltas (a withheld space goes out
 * with the next piece): what counts is the text they make. */
static void
assert_thinking_texts (const Turn *turn,
                       GPtrArray  *texts)
{
  guint n = turn->thinking ? (turn->thinking_between ? 2 : 1) : 0;
  g_autoptr(GString) sent = g_string_new (NULL);
  g_autoptr(GString) recorded = g_string_new (NULL);
  g_autofree char *expected = NULL;

  for (guint i = 0; i < texts->len; i++)
    g_string_append (sent, g_ptr_array_index (texts, i));
  for (guint i = 0; i < n; i++)
    g_string_append (recorded, thinking_texts[i]);
  expected = reference_clean (recorded->str);

  g_assert_cmpuint (texts->len > 0, ==, n > 0);
  g_assert_cmpstr (sent->str, ==, expected);
}

/* What holds for any route: the text a client sees, and every byte. */
static void
check_cleaned (const Request *request,
               const char    *text)
{
  const Turn *turn = request->turn;

  assert_no_leak (request->query, text);
  g_assert_null (strstr (text, BLOCK_CONTENT));
  if (g_strcmp0 (text, turn->expected) != 0)
    g_error ("%s: the cleaned text differs\n  got      %s\n  expected %s\n  raw      %s",
             request->query, text, turn->expected, answers[turn->answer]);
  for (guint i = 0; i < G_N_ELEMENTS (near_misses); i++)
    {
      if (strstr (answers[turn->answer], near_misses[i]) != NULL)
        g_assert_nonnull (strstr (text, near_misses[i]));
    }
}

static void
check_stream_bytes (const Request *request)
{
  SymfonicTestStream *stream = request->stream;
  SoupMessageHeaders *headers = soup_message_get_response_headers (stream->message);

  g_assert_no_error (stream->error);
  g_assert_true (stream->done);
  g_assert_cmpuint (stream->status, ==, 200);
  g_assert_cmpstr (soup_message_headers_get_content_type (headers, NULL), ==, "text/event-stream");
  /* the body ended on a complete frame */
  g_assert_true (symfonic_test_sse_parser_is_between_frames (stream->parser));
  assert_no_leak (request->query, stream->raw->str);

  for (guint i = 0; i < stream->frames->len; i++)
    {
      SymfonicTestFrame *frame = g_ptr_array_index (stream->frames, i);
      g_autoptr(GError) error = NULL;

      g_assert_cmpuint (frame->n_data_lines, ==, 1);
      if (!symfonic_test_json_is_strict (frame->data, -1, &error))
        g_error ("%s: frame %u: %s", request->query, i, error->message);
      assert_no_leak (request->query, frame->data);
    }
}

static void
check_typed (const Request *request)
{
  const Turn *turn = request->turn;
  GPtrArray *frames = request->stream->frames;
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GPtrArray) thinking = g_ptr_array_new_with_free_func (g_free);
  gint first_text = -1, last_text = -1, memory = -1, consolidation = -1;
  guint n_activations = 0, n_memory = 0, n_consolidation = 0;
  SymfonicTestFrame *last;

  check_stream_bytes (request);
  /* the op is the only place the block's content may be */
  g_assert_cmpuint (count_occurrences (request->stream->raw->str, BLOCK_CONTENT), ==, 1);

  g_assert_cmpuint (frames->len, >=, 3);
  for (guint i = 0; i + 1 < frames->len; i++)
    {
      SymfonicTestFrame *frame = g_ptr_array_index (frames, i);
      g_autoptr(JsonNode) data = strict_parse (request->query, frame->data);
      JsonObject *object = json_node_get_object (data);

      if (g_str_equal (frame->event, "ActivationEvent"))
        {
          g_assert_cmpint (first_text, <, 0);
          g_assert_cmpuint (n_activations, <, G_N_ELEMENTS (activations));
          g_assert_true (json_equal_text (data, activations[n_activations]));
          n_activations++;
        }
      else if (g_str_equal (frame->event, "ThinkingDeltaEvent"))
        {
          const char *delta = string_member (object, "text");

          /* the typed stream relays what the upstream sent; an empty one
           * is not thinking anyone reads */
          if (*delta != '\0')
            g_ptr_array_add (thinking, g_strdup (delta));
        }
      else if (g_str_equal (frame->event, "TextDeltaEvent"))
        {
          const char *delta = string_member (object, "text");

          g_assert_cmpuint (json_object_get_size (object), ==, 1);
          assert_no_leak (request->query, delta);
          g_string_append (text, delta);
          if (first_text < 0)
            first_text = i;
          last_text = i;
        }
      else if (g_str_equal (frame->event, "MemoryExtractedEvent"))
        {
          g_assert_true (json_equal_text (json_object_get_member (object, "ops"), EXPECTED_OPS));
          memory = i;
          n_memory++;
        }
      else if (g_str_equal (frame->event, "ConsolidationScheduledEvent"))
        {
          consolidation = i;
          n_consolidation++;
        }
      else
        {
          g_error ("%s: unexpected typed event %s", request->query, frame->event);
        }
    }

  g_assert_cmpuint (n_activations, ==, turn->activations ? G_N_ELEMENTS (activations) : 0);
  assert_thinking_texts (turn, thinking);
  g_assert_cmpint (first_text, >=, 0);
  g_assert_cmpuint (n_memory, ==, 1);
  g_assert_cmpuint (n_consolidation, ==, 1);
  g_assert_cmpint (last_text, <, memory);
  g_assert_cmpint (memory, <, consolidation);

  last = g_ptr_array_index (frames, frames->len - 1);
  g_assert_cmpstr (last->event, ==, "ResponseCompleteEvent");
  {
    g_autoptr(JsonNode) data = strict_parse (request->query, last->data);

    g_assert_cmpstr (string_member (json_node_get_object (data), "text"), ==, text->str);
  }
  check_cleaned (request, text->str);
}

/* A StreamChunk: exactly event_type, data and run_id. Returns data. */
static JsonNode *
chunk_parse (const Request  *request,
             guint           i,
             const char    **event_type,
             char          **run_id)
{
  SymfonicTestFrame *frame = g_ptr_array_index (request->stream->frames, i);
  g_autoptr(JsonNode) root = strict_parse (request->query, frame->data);
  JsonObject *object;
  const char *id;

  g_assert_cmpstr (frame->event, ==, "message");
  g_assert_true (JSON_NODE_HOLDS_OBJECT (root));
  object = json_node_get_object (root);
  g_assert_cmpuint (json_object_get_size (object), ==, 3);
  g_assert_true (json_object_has_member (object, "data"));
  id = string_member (object, "run_id");
  g_assert_cmpstr (id, !=, "");
  if (*run_id == NULL)
    *run_id = g_strdup (id);
  g_assert_cmpstr (id, ==, *run_id);
  /* borrowed from the node, which lives in the frame's parse only */
  *event_type = g_intern_string (string_member (object, "event_type"));

  return json_node_copy (json_object_get_member (object, "data"));
}

static const char *
done_final_response (JsonNode *data)
{
  JsonObject *object;

  g_assert_true (JSON_NODE_HOLDS_OBJECT (data));
  object = json_node_get_object (data);
  g_assert_cmpuint (json_object_get_size (object), ==, 1);
  return string_member (object, "final_response");
}

static void
check_chunks_11 (const Request *request,
                 GHashTable    *run_ids)
{
  const Turn *turn = request->turn;
  GPtrArray *frames = request->stream->frames;
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GPtrArray) thinking = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GHashTable) kinds = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree char *run_id = NULL;
  gboolean done = FALSE;

  check_stream_bytes (request);
  g_assert_cmpuint (count_occurrences (request->stream->raw->str, BLOCK_CONTENT), ==, 0);

  for (guint i = 0; i < frames->len; i++)
    {
      const char *event_type;
      g_autoptr(JsonNode) data = chunk_parse (request, i, &event_type, &run_id);

      g_assert_false (done);
      g_hash_table_add (kinds, (gpointer) event_type);
      if (g_str_equal (event_type, "text_delta"))
        {
          g_assert_true (JSON_NODE_HOLDS_VALUE (data) && json_node_get_value_type (data) == G_TYPE_STRING);
          g_assert_cmpstr (json_node_get_string (data), !=, "");
          assert_no_leak (request->query, json_node_get_string (data));
          g_string_append (text, json_node_get_string (data));
        }
      else if (g_str_equal (event_type, "thinking"))
        {
          /* the thinking text: never null, never empty */
          g_assert_true (JSON_NODE_HOLDS_VALUE (data) && json_node_get_value_type (data) == G_TYPE_STRING);
          g_assert_cmpstr (json_node_get_string (data), !=, "");
          g_ptr_array_add (thinking, g_strdup (json_node_get_string (data)));
        }
      else if (g_str_equal (event_type, "done"))
        {
          g_assert_cmpstr (done_final_response (data), ==, text->str);
          done = TRUE;
        }
      else
        {
          g_error ("%s: the 11.0 stream has no %s chunk", request->query, event_type);
        }
    }

  g_assert_true (done);
  g_assert_cmpuint (g_hash_table_size (kinds), ==, turn->thinking ? 3 : 2);
  g_assert_true (g_hash_table_contains (kinds, "text_delta"));
  assert_thinking_texts (turn, thinking);
  check_cleaned (request, text->str);
  g_assert_true (g_hash_table_add (run_ids, g_steal_pointer (&run_id)));
}

static void
check_chunks_10 (const Request *request,
                 GHashTable    *run_ids)
{
  const Turn *turn = request->turn;
  GPtrArray *frames = request->stream->frames;
  g_autofree char *run_id = NULL;
  g_autofree char *content = NULL;
  guint n_activations = 0, n_updates = 0;
  gboolean done = FALSE;

  check_stream_bytes (request);
  g_assert_cmpuint (count_occurrences (request->stream->raw->str, BLOCK_CONTENT), ==, 0);
  g_assert_cmpuint (frames->len, >=, 3);

  for (guint i = 0; i < frames->len; i++)
    {
      const char *event_type;
      g_autoptr(JsonNode) data = chunk_parse (request, i, &event_type, &run_id);

      g_assert_false (done);
      if (i == 0)
        {
          /* unconditional, whether or not the model thinks */
          g_assert_cmpstr (event_type, ==, "thinking");
          g_assert_true (JSON_NODE_HOLDS_NULL (data));
        }
      else if (g_str_equal (event_type, "spreading_activation"))
        {
          g_assert_cmpuint (n_updates, ==, 0);
          g_assert_cmpuint (n_activations, <, G_N_ELEMENTS (activations));
          g_assert_true (json_equal_text (data, activations[n_activations]));
          n_activations++;
        }
      else if (g_str_equal (event_type, "update"))
        {
          g_autoptr(JsonBuilder) builder = json_builder_new ();
          g_autoptr(JsonNode) expected = NULL;
          JsonArray *messages;

          /* {"agent":{"messages":[{"type":"ai","content":...}]}} */
          g_assert_true (JSON_NODE_HOLDS_OBJECT (data));
          messages = json_object_get_array_member (json_object_get_object_member (json_node_get_object (data),
                                                                                  "agent"),
                                                   "messages");
          g_assert_cmpuint (json_array_get_length (messages), ==, 1);
          content = g_strdup (string_member (json_array_get_object_element (messages, 0), "content"));

          json_builder_begin_object (builder);
          json_builder_set_member_name (builder, "agent");
          json_builder_begin_object (builder);
          json_builder_set_member_name (builder, "messages");
          json_builder_begin_array (builder);
          json_builder_begin_object (builder);
          json_builder_set_member_name (builder, "type");
          json_builder_add_string_value (builder, "ai");
          json_builder_set_member_name (builder, "content");
          json_builder_add_string_value (builder, turn->expected);
          json_builder_end_object (builder);
          json_builder_end_array (builder);
          json_builder_end_object (builder);
          json_builder_end_object (builder);
          expected = json_builder_get_root (builder);
          if (!json_node_equal (data, expected))
            g_error ("%s: update is %s", request->query, json_to_string (data, FALSE));
          n_updates++;
        }
      else if (g_str_equal (event_type, "done"))
        {
          g_assert_cmpuint (n_updates, ==, 1);
          g_assert_cmpstr (done_final_response (data), ==, turn->expected);
          done = TRUE;
        }
      else
        {
          g_error ("%s: the 10.x stream has no %s chunk here", request->query, event_type);
        }
    }

  g_assert_true (done);
  g_assert_cmpuint (n_activations, ==, turn->activations ? G_N_ELEMENTS (activations) : 0);
  g_assert_cmpuint (n_updates, ==, 1);
  check_cleaned (request, content);
  g_assert_true (g_hash_table_add (run_ids, g_steal_pointer (&run_id)));
}

static void
check_chat (const Request *request,
            GHashTable    *run_ids)
{
  SymfonicTestStream *stream = request->stream;
  SoupMessageHeaders *headers = soup_message_get_response_headers (stream->message);
  g_autoptr(JsonNode) root = NULL;
  JsonObject *object;

  g_assert_no_error (stream->error);
  g_assert_true (stream->done);
  g_assert_cmpuint (stream->status, ==, 200);
  g_assert_cmpstr (soup_message_headers_get_content_type (headers, NULL), ==, "application/json");
  assert_no_leak (request->query, stream->raw->str);
  g_assert_cmpuint (count_occurrences (stream->raw->str, BLOCK_CONTENT), ==, 1);

  root = strict_parse (request->query, stream->raw->str);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (root));
  object = json_node_get_object (root);
  g_assert_cmpuint (json_object_get_size (object), ==, 4);
  check_cleaned (request, string_member (object, "response"));
  g_assert_cmpstr (string_member (object, "run_id"), !=, "");
  g_assert_true (g_hash_table_add (run_ids, g_strdup (string_member (object, "run_id"))));
  g_assert_cmpstr (string_member (object, "session_id"), ==, SESSION_ID);
  g_assert_true (json_equal_text (json_object_get_member (object, "memory_ops"), EXPECTED_OPS));
}

static void
check_request (const Request *request,
               GHashTable    *run_ids)
{
  switch (request->route)
    {
    case ROUTE_TYPED:
      check_typed (request);
      break;
    case ROUTE_CHUNKS_11:
      check_chunks_11 (request, run_ids);
      break;
    case ROUTE_CHUNKS_10:
      check_chunks_10 (request, run_ids);
      break;
    case ROUTE_CHAT:
    case N_ROUTES:
    default:
      check_chat (request, run_ids);
      break;
    }
}

/* What the gateway sent upstream: the client's query and session, and
 * identity from the credentials alone. */
static void
check_upstream_request (SymfonicTestUpstream *upstream,
                        const Request        *request,
                        gboolean              auth)
{
  SymfonicTestUpstreamRecord *record =
    symfonic_test_upstream_wait_record (upstream, UPSTREAM_PATH, request->query);
  JsonObject *sent;
  JsonNode *tenant, *principal;

  g_assert_nonnull (record->body);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (record->body));
  g_assert_null (strstr (record->raw_body, "evil"));
  sent = json_node_get_object (record->body);
  g_assert_cmpstr (string_member (sent, "session_id"), ==, SESSION_ID);
  tenant = json_object_get_member (sent, "tenant_id");
  principal = json_object_get_member (sent, "principal_id");
  if (auth)
    {
      g_assert_cmpstr (string_member (sent, "tenant_id"), ==, "acme");
      g_assert_cmpstr (string_member (sent, "principal_id"), ==, "alice");
    }
  else
    {
      g_assert_true (tenant == NULL || JSON_NODE_HOLDS_NULL (tenant));
      g_assert_true (principal == NULL || JSON_NODE_HOLDS_NULL (principal));
    }
}

/* --- the tests ---------------------------------------------------------------- */

/* Every turn on every route, BATCH requests in flight at a time. */
static void
run_turns (GPtrArray *turns,
           gboolean   auth)
{
  g_autoptr(SymfonicTestUpstream) upstream = symfonic_test_upstream_new ();
  g_autofree char *url = symfonic_test_upstream_dup_url (upstream, UPSTREAM_PATH);
  g_autoptr(SymfonicServer) server = gateway_new (url, auth);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(GHashTable) run_ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GPtrArray) flight = g_ptr_array_new_with_free_func ((GDestroyNotify) request_free);
  guint n_requests = turns->len * N_ROUTES;
  gint64 start = g_get_monotonic_time ();

  for (guint r = 0; r < n_requests; r++)
    {
      const Turn *turn = g_ptr_array_index (turns, r / N_ROUTES);

      g_ptr_array_add (flight, request_start (upstream, session, server, turn, r / N_ROUTES,
                                              (Route) (r % N_ROUTES), auth, 0));
      if (flight->len < BATCH && r + 1 < n_requests)
        continue;

      for (guint i = 0; i < flight->len; i++)
        {
          Request *request = g_ptr_array_index (flight, i);

          symfonic_test_stream_wait_done (request->stream);
          check_request (request, run_ids);
          check_upstream_request (upstream, request, auth);
        }
      g_ptr_array_set_size (flight, 0);
    }

  g_test_message ("%u turns, %u requests in %" G_GINT64_FORMAT " ms",
                  turns->len, n_requests, (g_get_monotonic_time () - start) / 1000);
  symfonic_server_stop (server);
}

static void
test_contract_reference (void)
{
  /* the reference itself, on what the README promises */
  static const struct { const char *raw; const char *clean; } cases[] = {
    { "blue [semantic].", "blue." },
    { "a  [episodic:n42]b", "a b" },
    { "x [SeMaNtIc:a.b_c-d] y", "x y" },
    { "keep [semantics] [ semantic] [episodic:]", "keep [semantics] [ semantic] [episodic:]" },
    { "a " BLOCK "[procedural] b", "a b" },
    { "[seman" BLOCK "tic]!", "!" },
    { "end [episodic", "end [episodic" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *clean = reference_clean (cases[i].raw);

      g_assert_cmpstr (clean, ==, cases[i].clean);
    }
  for (guint i = 0; i < G_N_ELEMENTS (answers); i++)
    {
      g_autofree char *clean = reference_clean (answers[i]);

      g_test_message ("answer %u cleaned: %s", i, clean);
      assert_no_leak ("the reference", clean);
      g_assert_null (strstr (clean, BLOCK_CONTENT));
      g_assert_true (g_utf8_validate (clean, -1, NULL));
    }
}

static void
test_contract_all_routes (void)
{
  g_autoptr(GPtrArray) turns = make_turns ();

  run_turns (turns, FALSE);
}

/* The identity the upstream hears comes from the credentials, on every
 * route, whatever the body says. */
static void
test_contract_with_auth (void)
{
  g_autoptr(GPtrArray) turns = g_ptr_array_new_with_free_func ((GDestroyNotify) turn_free);

  for (guint a = 0; a < G_N_ELEMENTS (answers); a++)
    {
      g_autoptr(GArray) every = char_boundaries (answers[a]);

      g_ptr_array_add (turns, turn_new (a, a, split_at (answers[a], every), "per character, with auth"));
    }
  run_turns (turns, TRUE);
}

/* 10.x sends its thinking/null before any upstream I/O: here the upstream
 * holds its response back, and the chunk is at the client before the
 * upstream said a word. */
static void
test_contract_old_line_thinks_first (void)
{
  g_autoptr(SymfonicTestUpstream) upstream = symfonic_test_upstream_new ();
  g_autofree char *url = symfonic_test_upstream_dup_url (upstream, UPSTREAM_PATH);
  g_autoptr(SymfonicServer) server = gateway_new (url, FALSE);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autoptr(GArray) cut = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr(GHashTable) run_ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  /* inside the first tag */
  guint offset = strlen ("Tea \xF0\x9F\x8D\xB5 [sem");
  Turn *turn;
  Request *request;
  SymfonicTestUpstreamRecord *record;
  SymfonicTestFrame *first;
  gint64 responded_us;

  g_array_append_val (cut, offset);
  turn = turn_new (0, 0, split_at (answers[0], cut), "held back");
  request = request_start (upstream, session, server, turn, 0, ROUTE_CHUNKS_10, FALSE, 500);

  symfonic_test_stream_wait_done (request->stream);
  check_chunks_10 (request, run_ids);

  record = symfonic_test_upstream_wait_record (upstream, UPSTREAM_PATH, request->query);
  responded_us = symfonic_test_upstream_get_responded_us (upstream, record);
  first = g_ptr_array_index (request->stream->frames, 0);
  g_test_message ("thinking/null %" G_GINT64_FORMAT " ms before the upstream answered",
                  (responded_us - first->time_us) / 1000);
  g_assert_cmpint (responded_us, >, 0);
  g_assert_cmpint (first->time_us, <, responded_us);

  request_free (request);
  turn_free (turn);
  symfonic_server_stop (server);
}

/* A runtime may stream no delta at all and put the whole answer in its
 * terminal: the clients then read the terminal's text, which is cleaned
 * like the deltas (by filters of its own: no delta ran through the
 * stream's). Every answer, every route, split adversarially. */
static void
test_contract_terminal_only (void)
{
  g_autoptr(SymfonicTestUpstream) upstream = symfonic_test_upstream_new ();
  g_autofree char *url = symfonic_test_upstream_dup_url (upstream, UPSTREAM_PATH);
  g_autoptr(SymfonicServer) server = gateway_new (url, FALSE);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();

  for (guint i = 0; i < G_N_ELEMENTS (answers); i++)
    {
      g_autofree char *expected = reference_clean (answers[i]);
      g_autoptr(GString) body = g_string_new (NULL);
      g_autoptr(GBytes) bytes = NULL;

      append_terminal (body, answers[i], FALSE);
      bytes = g_string_free_to_bytes (g_steal_pointer (&body));

      for (Route route = 0; route < N_ROUTES; route++)
        {
          g_autofree char *query = g_strdup_printf ("terminal only %u via %s", i, route_paths[route]);
          g_autofree char *route_url = symfonic_test_server_dup_url (server, route_paths[route]);
          g_autofree char *client = client_body (query);
          g_autoptr(SymfonicTestStream) stream = NULL;
          SymfonicTestScenario scenario = {
            .body = bytes,
            .split = (SymfonicTestSplit) ((i + route) % 3),
            .seed = g_test_rand_int (),
          };

          symfonic_test_upstream_add_for_query (upstream, UPSTREAM_PATH, query, &scenario);
          stream = symfonic_test_stream_post (session, route_url, client, NULL);
          symfonic_test_stream_wait_done (stream);
          g_assert_no_error (stream->error);
          g_assert_cmpuint (stream->status, ==, 200);
          assert_no_leak (query, stream->raw->str);
          g_assert_null (strstr (stream->raw->str, BLOCK_CONTENT));

          if (route == ROUTE_TYPED)
            {
              SymfonicTestFrame *last;
              g_autoptr(JsonNode) data = NULL;

              g_assert_cmpuint (stream->frames->len, >, 0);
              last = g_ptr_array_index (stream->frames, stream->frames->len - 1);
              g_assert_cmpstr (last->event, ==, "ResponseCompleteEvent");
              data = strict_parse (query, last->data);
              g_assert_cmpstr (string_member (json_node_get_object (data), "text"), ==, expected);
            }
        }
    }

  symfonic_server_stop (server);
}

/* What the filter stages count, read from their properties after real
 * streams, once with the answer whole and once one character per delta.
 * The answer has three citation tags; a block that tag removal forms
 * (citation drops it, and counts its tag); a block that is no JSON
 * (extraction drops it); and at its end one that tag removal forms and
 * one of extraction's own, neither closed, which are dropped only when
 * the answer closes. The terminal repeats the answer, tags and all; it is
 * cleaned but not counted, so each stream adds exactly these. */
#define COUNTED_ANSWER "A [semantic] b<memory[semantic]_ops>x</memory_ops> c " \
  "<memory_ops>not json</memory_ops> d [episodic:n42] [PROCEDURAL]. " \
  "<memory[episodic]_ops>tail <memory_ops>never closed"
#define COUNTED_TAGS 5
#define COUNTED_CITATION_BLOCKS 2
#define COUNTED_EXTRACTION_BLOCKS 2

static guint64
get_uint64 (SymfonicServer *server,
            const char     *stage,
            const char     *property)
{
  guint64 value = 0;

  g_object_get (symfonic_pipeline_get_stage (symfonic_server_get_pipeline (server), stage), property, &value, NULL);
  return value;
}

static void
test_contract_stage_counters (void)
{
  g_autoptr(SymfonicTestUpstream) upstream = symfonic_test_upstream_new ();
  g_autofree char *url = symfonic_test_upstream_dup_url (upstream, UPSTREAM_PATH);
  g_autoptr(SymfonicServer) server = gateway_new (url, FALSE);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  g_autofree char *route_url = symfonic_test_server_dup_url (server, route_paths[ROUTE_TYPED]);

  for (guint n = 1; n <= 2; n++)
    {
      g_autoptr(GArray) cuts = n == 1 ? g_array_new (FALSE, FALSE, sizeof (guint)) : char_boundaries (COUNTED_ANSWER);
      g_autoptr(GPtrArray) deltas = split_at (COUNTED_ANSWER, cuts);
      g_autoptr(GString) body = g_string_new (NULL);
      g_autoptr(GBytes) bytes = NULL;
      g_autofree char *query = g_strdup_printf ("counted %u", n);
      g_autofree char *client = client_body (query);
      g_autoptr(SymfonicTestStream) stream = NULL;
      SymfonicTestScenario scenario = { .split = SYMFONIC_TEST_SPLIT_ONE_BYTE };

      for (guint i = 0; i < deltas->len; i++)
        append_text_event (body, "TextDeltaEvent", g_ptr_array_index (deltas, i), FALSE);
      append_terminal (body, COUNTED_ANSWER, FALSE);
      scenario.body = bytes = g_string_free_to_bytes (g_steal_pointer (&body));

      symfonic_test_upstream_add_for_query (upstream, UPSTREAM_PATH, query, &scenario);
      stream = symfonic_test_stream_post (session, route_url, client, NULL);
      symfonic_test_stream_wait_done (stream);
      g_assert_no_error (stream->error);
      g_assert_cmpuint (stream->status, ==, 200);
      assert_no_leak (query, stream->raw->str);

      g_assert_cmpuint (get_uint64 (server, "citation", "tags-removed"), ==, n * COUNTED_TAGS);
      g_assert_cmpuint (get_uint64 (server, "citation", "blocks-dropped"), ==, n * COUNTED_CITATION_BLOCKS);
      g_assert_cmpuint (get_uint64 (server, "extraction", "blocks-dropped"), ==, n * COUNTED_EXTRACTION_BLOCKS);
    }

  symfonic_server_stop (server);
}

/* Even an upstream that refuses at once gets the 10.x client its
 * thinking/null first, then exactly one error frame. */
static void
test_contract_old_line_upstream_fails (void)
{
  g_autoptr(SymfonicTestUpstream) upstream = symfonic_test_upstream_new ();
  g_autofree char *url = symfonic_test_upstream_dup_url (upstream, UPSTREAM_PATH);
  g_autoptr(SymfonicServer) server = gateway_new (url, FALSE);
  g_autoptr(SoupSession) session = symfonic_test_session_new ();
  static const char refusal_text[] = "{\"detail\":\"runtime exploded\"}";
  g_autoptr(GBytes) refusal = g_bytes_new_static (refusal_text, strlen (refusal_text));
  g_autofree char *chunks_url = symfonic_test_server_dup_url (server, "/c10");
  g_autofree char *body = client_body ("fail at once");
  g_autoptr(SymfonicTestStream) stream = NULL;
  g_autoptr(JsonNode) first = NULL;
  g_autoptr(JsonNode) error = NULL;
  SymfonicTestScenario scenario = {
    .status = 500,
    .content_type = "application/json",
    .body = refusal,
  };
  SymfonicTestFrame *frame;
  JsonObject *object;

  symfonic_test_upstream_add_for_query (upstream, UPSTREAM_PATH, "fail at once", &scenario);
  stream = symfonic_test_stream_post (session, chunks_url, body, NULL);
  symfonic_test_stream_wait_done (stream);

  g_assert_no_error (stream->error);
  g_assert_cmpuint (stream->status, ==, 200);
  g_assert_true (symfonic_test_sse_parser_is_between_frames (stream->parser));
  g_assert_cmpuint (stream->frames->len, ==, 2);

  frame = g_ptr_array_index (stream->frames, 0);
  g_assert_cmpstr (frame->event, ==, "message");
  first = strict_parse ("thinking", frame->data);
  object = json_node_get_object (first);
  g_assert_cmpstr (string_member (object, "event_type"), ==, "thinking");
  g_assert_true (JSON_NODE_HOLDS_NULL (json_object_get_member (object, "data")));
  g_assert_cmpstr (string_member (object, "run_id"), !=, "");

  frame = g_ptr_array_index (stream->frames, 1);
  g_assert_cmpstr (frame->event, ==, "error");
  g_assert_cmpuint (frame->n_data_lines, ==, 1);
  error = strict_parse ("error", frame->data);
  object = json_node_get_object (error);
  g_assert_true (json_object_has_member (object, "status"));
  g_assert_true (json_object_has_member (object, "detail"));
  /* a server-side fault does not echo the upstream's words */
  g_assert_null (strstr (stream->raw->str, "exploded"));
  g_assert_cmpuint (symfonic_test_upstream_count_records (upstream, UPSTREAM_PATH, "fail at once"), ==, 1);

  symfonic_server_stop (server);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;
  int status;

  symfonic_test_init (&argc, &argv);

  leak_regex = g_regex_new ("\\[(semantic|episodic|procedural)(:[A-Za-z0-9_.-]{1,64})?\\]",
                            G_REGEX_CASELESS | G_REGEX_RAW, 0, &error);
  g_assert_no_error (error);

  g_test_add_func ("/contract/reference", test_contract_reference);
  g_test_add_func ("/contract/all-routes", test_contract_all_routes);
  g_test_add_func ("/contract/with-auth", test_contract_with_auth);
  g_test_add_func ("/contract/terminal-only", test_contract_terminal_only);
  g_test_add_func ("/contract/stage-counters", test_contract_stage_counters);
  g_test_add_func ("/contract/old-line/thinks-first", test_contract_old_line_thinks_first);
  g_test_add_func ("/contract/old-line/upstream-fails", test_contract_old_line_upstream_fails);

  status = g_test_run ();
  g_regex_unref (leak_regex);

  return status;
}
