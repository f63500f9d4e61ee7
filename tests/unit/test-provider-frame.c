/* test-provider-frame.c: a provider's frames read without a tree and as one
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "provider-frame-agree.h"

/* The scan must give, for every input it takes, what the tree gives: the
 * frames the providers send, the same with every escape, order and spacing
 * JSON allows, and every truncation and byte change of those. The literal
 * cases also pin down which shapes the scan takes. */

/* @data read alone, and as the frame after @original through the memo of
 * it that @memo holds: a stream's next frame is mostly its last one with
 * one string changed, which the memo takes without scanning the rest
 * again. Both ways take the same inputs. The memo is left holding
 * @original again. */
static void
agrees_after_original (AgreeFunc             agrees,
                       SymfonicJsonScanMemo *memo,
                       const char           *original,
                       const char           *data,
                       gsize                 length)
{
  gboolean alone = agrees (NULL, data, length);

  g_assert_cmpint (agrees (memo, data, length), ==, alone);
  if (alone)
    agrees (memo, original, strlen (original));
}

/* Every prefix, every byte replaced by each byte JSON gives a meaning to
 * (and a few it refuses), and random insertions. */
static void
check_mutations (AgreeFunc   agrees,
                 const char *original)
{
  static const char replacements[] = "\"\\{}[],: \t0129-.eEuntfdD\x01\x7f\xc3\xff";
  gsize length = strlen (original);
  g_autofree char *copy = g_malloc (length + 8);
  g_autoptr(SymfonicJsonScanMemo) memo = symfonic_json_scan_memo_new ();

  agrees (memo, original, length);
  for (gsize cut = 0; cut <= length; cut++)
    agrees_after_original (agrees, memo, original, original, cut);

  for (gsize i = 0; i < length; i++)
    {
      memcpy (copy, original, length);
      for (gsize r = 0; r < sizeof replacements; r++)
        {
          copy[i] = replacements[r];
          agrees_after_original (agrees, memo, original, copy, length);
        }
    }

  for (guint round = 0; round < 2000; round++)
    {
      gsize at = g_test_rand_int_range (0, length + 1);
      gsize n = g_test_rand_int_range (1, 7);

      memcpy (copy, original, at);
      for (gsize k = 0; k < n; k++)
        copy[at + k] = replacements[g_test_rand_int_range (0, sizeof replacements)];
      memcpy (copy + at + n, original + at, length - at);
      agrees_after_original (agrees, memo, original, copy, length + n);
    }
}

/* --- OpenAI ------------------------------------------------------------ */

typedef struct
{
  const char *data;
  const char *model;
  const char *thinking;
  const char *text;
  const char *finish_reason;
  /* the usage counts, -1 where none is given */
  gint64      input;
  gint64      output;
} OpenaiCase;

#define HEAD "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"gpt-4o\","
static const OpenaiCase openai_taken[] = {
  { HEAD "\"system_fingerprint\":null,\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},"
    "\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}", "gpt-4o", NULL, "", NULL, -1, -1 },
  { HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\" Hello\"},\"finish_reason\":null}]}",
    "gpt-4o", NULL, " Hello", NULL, -1, -1 },
  { HEAD "\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"Let me think\"}}]}",
    "gpt-4o", "Let me think", NULL, NULL, -1, -1 },
  { HEAD "\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":null,\"content\":\"a\"}}]}",
    "gpt-4o", NULL, "a", NULL, -1, -1 },
  { HEAD "\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"stop\"}]}",
    "gpt-4o", NULL, NULL, "stop", -1, -1 },
  { HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"q\\\"b\\\\s\\/d\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\\u20AC\"}}]}",
    "gpt-4o", NULL, "q\"b\\s/d\b\f\n\r\t\xc3\xa9\xf0\x9f\x98\x80\xe2\x82\xac", NULL, -1, -1 },
  { HEAD "\"choices\":[{\"delta\":{\"content\":\"h\xc3\xa9llo \xe4\xb8\x96\xe7\x95\x8c\"}}]}",
    "gpt-4o", NULL, "h\xc3\xa9llo \xe4\xb8\x96\xe7\x95\x8c", NULL, -1, -1 },
  { " \r\n{ \"choices\" :\t[ { \"finish_reason\" : null , \"delta\" : { \"content\" : \"x\" } } ] , "
    "\"model\" : \"m\" }\n ", "m", NULL, "x", NULL, -1, -1 },
  { "{\"service_tier\":\"default\",\"obfuscation\":\"a\\\"b\",\"n\":-1.5,\"z\":0,\"t\":true,\"f\":false,"
    "\"choices\":[{\"delta\":{\"content\":\"y\"}}]}", NULL, NULL, "y", NULL, -1, -1 },
  { "{\"model\":5,\"choices\":[]}", NULL, NULL, NULL, NULL, -1, -1 },
  { "{\"choices\":\"none\",\"usage\":null}", NULL, NULL, NULL, NULL, -1, -1 },
  { "{\"choices\":[{\"delta\":null,\"finish_reason\":7}]}", NULL, NULL, NULL, NULL, -1, -1 },
  { "{\"choices\":[{\"delta\":{\"content\":1,\"tool_calls\":null}}]}", NULL, NULL, NULL, NULL, -1, -1 },
  { "{}", NULL, NULL, NULL, NULL, -1, -1 },
  /* a usage chunk whose details the routes do not publish */
  { HEAD "\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":200,\"total_tokens\":212,"
    "\"prompt_tokens_details\":{\"audio_tokens\":0},\"completion_tokens_details\":"
    "{\"audio_tokens\":0,\"accepted_prediction_tokens\":0,\"rejected_prediction_tokens\":0}}}",
    "gpt-4o", NULL, NULL, NULL, 12, 200 },
  { "{\"choices\":[],\"usage\":{\"prompt_tokens\":0,\"completion_tokens\":999999999999999999}}",
    NULL, NULL, NULL, NULL, 0, 999999999999999999 },
  /* a null count is as if not given, both ways */
  { "{\"usage\":{\"completion_tokens\":null}}", NULL, NULL, NULL, NULL, -1, -1 },
  { "{\"usage\":{\"total_tokens\":5,\"prompt_tokens_details\":null}}", NULL, NULL, NULL, NULL, -1, -1 },
  { "{\"usage\":{}}", NULL, NULL, NULL, NULL, -1, -1 },
  { "{\"usage\":7}", NULL, NULL, NULL, NULL, -1, -1 },
  { HEAD "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}],"
    "\"usage\":{\"completion_tokens\":3}}", "gpt-4o", NULL, NULL, "length", -1, 3 },
};

/* Shapes the scan leaves to the tree, valid or not. */
static const char * const openai_refused[] = {
  /* counts the general way reads differently, or not at all */
  "{\"usage\":{\"prompt_tokens\":-1}}",
  "{\"usage\":{\"prompt_tokens\":\"12\",\"completion_tokens\":null}}",
  "{\"usage\":{\"prompt_tokens\":true}}",
  "{\"usage\":{\"prompt_tokens\":12.0}}",
  "{\"usage\":{\"prompt_tokens\":1e3}}",
  "{\"usage\":{\"prompt_tokens\":012}}",
  "{\"usage\":{\"completion_tokens\":1000000000000000000}}",
  "{\"usage\":{\"completion_tokens\":[3]}}",
  "{\"usage\":{\"input_tokens\":3,\"prompt_tokens\":4}}",
  "{\"usage\":{\"output_tokens\":null}}",
  "{\"usage\":{\"prompt_tokens_details\":{\"cached\":{\"tokens\":1}}}}",
  /* the details the routes publish, and a refusal, once a stream: the
   * usage chunk as OpenAI sends it with stream_options.include_usage, and
   * the first delta, whose refusal is null */
  HEAD "\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":200,\"total_tokens\":212,"
  "\"prompt_tokens_details\":{\"cached_tokens\":0,\"audio_tokens\":0},\"completion_tokens_details\":"
  "{\"reasoning_tokens\":0,\"audio_tokens\":0,\"accepted_prediction_tokens\":0,\"rejected_prediction_tokens\":0}}}",
  "{\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null}}]}",
  "{\"choices\":[{\"delta\":{\"refusal\":\"I cannot\"}}]}",
  "{\"usage\":{\"prompt_tokens\":1,\"prompt_tokens\":2}}",
  ("{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"type\":\"function\","
   "\"function\":{\"name\":\"f\",\"arguments\":\"\"}}]}}]}"),
  "{\"error\":{\"message\":\"overloaded\"}}",
  "{\"error\":null}",
  "{\"choices\":[{\"delta\":{\"content\":\"a\"}},{\"delta\":{\"content\":\"b\"}}]}",
  "{\"choices\":[{\"delta\":{\"content\":\"a\",\"content\":\"b\"}}]}",
  "{\"choices\":[{\"delta\":{\"content\":\"a\",\"\\u0063ontent\":\"b\"}}]}",
  "{\"model\":\"a\",\"model\":\"a\"}",
  "{\"choices\":[{\"delta\":{\"content\":\"\\ud800\"}}]}",
  "{\"choices\":[{\"delta\":{\"content\":\"\\udc00\\ud800\"}}]}",
  "{\"choices\":[{\"delta\":{\"content\":\"\\u0000\"}}]}",
  "{\"choices\":[{\"delta\":{\"content\":\"\xff\"}}]}",
  "{\"choices\":[{\"delta\":{\"content\":\"\xc3\"}}]}",
  "{\"choices\":[{\"delta\":{\"content\":\"tab\there\"}}]}",
  "{\"choices\":[{\"delta\":{\"content\":\"\\x\"}}]}",
  "{\"choices\":[{\"delta\":{\"content\":\"a\"}}]",
  "{\"created\":1e5,\"choices\":[]}",
  "{\"created\":01,\"choices\":[]}",
  "{\"created\":1.,\"choices\":[]}",
  "{\"created\":-,\"choices\":[]}",
  "{\"choices\":[{\"delta\":{\"content\":\"a\"},\"logprobs\":{\"content\":[]}}]}",
  "{\"choices\":[1]}",
  "{\"choices\":[{},]}",
  "{\"a\":1,}",
  "{}x",
  "[]",
  "\"text\"",
  "{\"a\":nul}",
  "{\"a\" 1}",
};

static void
test_openai_taken (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (openai_taken); i++)
    {
      const OpenaiCase *c = &openai_taken[i];
      g_autoptr(GString) text = g_string_new (NULL);
      SymfonicOpenaiChunk chunk;

      g_assert_true (symfonic_openai_chunk_scan (c->data, strlen (c->data), NULL, text, &chunk));
      g_assert_cmpstr (chunk.model, ==, c->model);
      g_assert_cmpstr (chunk.thinking, ==, c->thinking);
      g_assert_cmpstr (chunk.text, ==, c->text);
      g_assert_cmpstr (chunk.finish_reason, ==, c->finish_reason);
      g_assert_cmpint (chunk.usage.input, ==, c->input);
      g_assert_cmpint (chunk.usage.output, ==, c->output);
      g_assert_true (provider_frame_openai_agrees (NULL, c->data, strlen (c->data)));
    }
}

static void
test_openai_refused (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (openai_refused); i++)
    {
      g_test_message ("case %u", i);
      g_assert_false (provider_frame_openai_agrees (NULL, openai_refused[i], strlen (openai_refused[i])));
    }
}

static void
test_openai_mutations (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (openai_taken); i++)
    check_mutations (provider_frame_openai_agrees, openai_taken[i].data);
  for (guint i = 0; i < G_N_ELEMENTS (openai_refused); i++)
    check_mutations (provider_frame_openai_agrees, openai_refused[i]);
}

/* A stream's frames through one memo, with literal expectations: the
 * content changes length, an escape and a member after it, and a frame
 * of another shape in between. */
static void
test_openai_memo (void)
{
  static const OpenaiCase stream[] = {
    { HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"},\"finish_reason\":null}]}",
      "gpt-4o", NULL, "Hel", NULL },
    { HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo, w\"},\"finish_reason\":null}]}",
      "gpt-4o", NULL, "lo, w", NULL },
    { HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\\u00e9\\\"\"},\"finish_reason\":null}]}",
      "gpt-4o", NULL, "\xc3\xa9\"", NULL },
    { HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"},\"finish_reason\":null}]}",
      "gpt-4o", NULL, "", NULL },
    /* the content's literal swallows what follows it: not one string */
    { HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\",\"x\":\"b\"},\"finish_reason\":null}]}",
      "gpt-4o", NULL, "a", NULL },
    { HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"c\"},\"finish_reason\":null}]}",
      "gpt-4o", NULL, "c", NULL },
    { HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"c\"},\"finish_reason\":\"stop\"}]}",
      "gpt-4o", NULL, "c", "stop" },
    { HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"d\"},\"finish_reason\":\"length\"}]}",
      "gpt-4o", NULL, "d", "length" },
    /* the literal that changes moves to the model, back to the content,
     * then to the finish reason */
    { "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"gpt-4o-mini\","
      "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"d\"},\"finish_reason\":\"length\"}]}",
      "gpt-4o-mini", NULL, "d", "length" },
    { "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"gpt-4o-mini\","
      "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ef\"},\"finish_reason\":\"length\"}]}",
      "gpt-4o-mini", NULL, "ef", "length" },
    { "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"gpt-4o-mini\","
      "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ef\"},\"finish_reason\":\"stop\"}]}",
      "gpt-4o-mini", NULL, "ef", "stop" },
  };
  static const char unpaired[] =
    HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\\ud800\"},\"finish_reason\":\"length\"}]}";
  g_autoptr(SymfonicJsonScanMemo) memo = symfonic_json_scan_memo_new ();
  g_autoptr(GString) text = g_string_new (NULL);

  for (guint i = 0; i < G_N_ELEMENTS (stream); i++)
    {
      const OpenaiCase *c = &stream[i];
      SymfonicOpenaiChunk chunk;

      g_test_message ("frame %u", i);
      g_assert_true (symfonic_openai_chunk_scan (c->data, strlen (c->data), memo, text, &chunk));
      g_assert_cmpstr (chunk.model, ==, c->model);
      g_assert_cmpstr (chunk.thinking, ==, c->thinking);
      g_assert_cmpstr (chunk.text, ==, c->text);
      g_assert_cmpstr (chunk.finish_reason, ==, c->finish_reason);
    }

  /* a frame that is the last one with its content's literal made invalid
   * is refused, as the strict reader refuses it */
  g_assert_false (provider_frame_openai_agrees (memo, unpaired, strlen (unpaired)));
}

/* --- Anthropic --------------------------------------------------------- */

typedef struct
{
  const char *data;
  const char *text;
  const char *thinking;
} AnthropicCase;

static const AnthropicCase anthropic_taken[] = {
  { "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}",
    "Hello", NULL },
  { "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Hmm\"}}",
    NULL, "Hmm" },
  { "{\"type\": \"ping\"}", NULL, NULL },
  { " { \"delta\" : { \"text\" : \"\\u00e9\\ud83d\\ude00\\n\" , \"type\" : \"text_delta\" } , "
    "\"index\" : 1 , \"type\" : \"content_block_delta\" } ", "\xc3\xa9\xf0\x9f\x98\x80\n", NULL },
  { "{\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":5,\"thinking\":\"t\"}}",
    NULL, NULL },
  { "{\"type\":\"content_block_delta\",\"delta\":{\"type\":\"thinking_delta\",\"text\":\"x\"}}", NULL, NULL },
};

static const char * const anthropic_refused[] = {
  "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"s\"}}",
  "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\"}}",
  "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}",
  "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":15}}",
  "{\"type\":\"message_stop\"}",
  "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
  "{\"type\":\"content_block_delta\",\"delta\":{\"text\":\"a\"}}",
  "{\"type\":\"content_block_delta\",\"delta\":null}",
  "{\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}",
  "{\"type\":\"content_block_delta\",\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}",
  "{\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"a\",\"text\":\"b\"}}",
  "{\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"\\ud83d\"}}",
  "{\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}",
  "{\"type\":\"ping\",\"extra\":[]}",
};

static void
test_anthropic_taken (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (anthropic_taken); i++)
    {
      const AnthropicCase *c = &anthropic_taken[i];
      g_autoptr(GString) text = g_string_new (NULL);
      SymfonicAnthropicDelta delta;

      g_assert_true (symfonic_anthropic_delta_scan (c->data, strlen (c->data), NULL, text, &delta));
      g_assert_cmpstr (delta.text, ==, c->text);
      g_assert_cmpstr (delta.thinking, ==, c->thinking);
      g_assert_true (provider_frame_anthropic_agrees (NULL, c->data, strlen (c->data)));
    }
}

static void
test_anthropic_refused (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (anthropic_refused); i++)
    {
      g_test_message ("case %u", i);
      g_assert_false (provider_frame_anthropic_agrees (NULL, anthropic_refused[i], strlen (anthropic_refused[i])));
    }
}

static void
test_anthropic_mutations (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (anthropic_taken); i++)
    check_mutations (provider_frame_anthropic_agrees, anthropic_taken[i].data);
  for (guint i = 0; i < G_N_ELEMENTS (anthropic_refused); i++)
    check_mutations (provider_frame_anthropic_agrees, anthropic_refused[i]);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/provider-frame/openai/memo", test_openai_memo);
  g_test_add_func ("/provider-frame/openai/taken", test_openai_taken);
  g_test_add_func ("/provider-frame/openai/refused", test_openai_refused);
  g_test_add_func ("/provider-frame/openai/mutations", test_openai_mutations);
  g_test_add_func ("/provider-frame/anthropic/taken", test_anthropic_taken);
  g_test_add_func ("/provider-frame/anthropic/refused", test_anthropic_refused);
  g_test_add_func ("/provider-frame/anthropic/mutations", test_anthropic_mutations);

  return g_test_run ();
}
