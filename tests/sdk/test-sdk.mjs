// test-sdk.mjs: the SDKs clients use, against the gateway's provider routes
//
// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Starts a loopback fake provider that records every request it gets and
// answers in OpenAI's or Anthropic's streaming wire, and the gateway
// binary with the openai and anthropic sources in front of it (and a
// replay source for the gateway's own failures). Each test drives one SDK
// (the official openai and @anthropic-ai/sdk packages, the Vercel AI SDK
// with @ai-sdk/openai, @ai-sdk/openai-compatible and @ai-sdk/anthropic,
// LangChain's ChatOpenAI and ChatAnthropic) and asserts both what the SDK
// returned and what the provider received. Expected values are written
// from the providers' API references, not read from the gateway. Prints TAP.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';

const here = dirname(fileURLToPath(import.meta.url));
const data = resolve(here, '..', '..', 'data');
const require = createRequire(join(resolve(process.argv[2]), 'node_modules', 'index.js'));
const load = async (name) => import(require.resolve(name));
const { default: OpenAI } = await load('openai');
const { zodResponseFormat } = await load('openai/helpers/zod');
const { default: Anthropic } = await load('@anthropic-ai/sdk');
const ai = await load('ai');
const { createOpenAI } = await load('@ai-sdk/openai');
const { createOpenAICompatible } = await load('@ai-sdk/openai-compatible');
const { createAnthropic } = await load('@ai-sdk/anthropic');
const { ChatOpenAI } = await load('@langchain/openai');
const { ChatAnthropic } = await load('@langchain/anthropic');
const { z } = await load('zod');

const KEY = 'demo-token-alice';
const TENANT = { 'X-Tenant-ID': 'acme' };
const OPAQUE = 'Internal server error';
const OPENAI_MODEL = 'gpt-4o-mini-2024-07-18';
const ANTHROPIC_MODEL = 'claude-sonnet-4-5-20250929';
const CAP = 8192;
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

// --- the fake provider -------------------------------------------------

const openaiChunk = (choices, extra = {}) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: OPENAI_MODEL, choices, ...extra })}\n\n`;
const openaiDelta = (delta, finish = null) => openaiChunk([{ index: 0, delta, logprobs: null, finish_reason: finish }]);

// An OpenAI streamed completion: reasoning, text, tool calls (each call's
// arguments in fragments), the finish reason, and the usage chunk.
function openaiTurn ({ reasoning, text, toolCalls = [], finish = 'stop', usage = {} }) {
  const events = [openaiDelta({ role: 'assistant', content: '', refusal: null })];
  if (reasoning) events.push(openaiDelta({ reasoning_content: reasoning }));
  for (const piece of text ? text.match(/.{1,5}/gs) : []) events.push(openaiDelta({ content: piece }));
  toolCalls.forEach((call, index) => {
    const args = JSON.stringify(call.arguments);
    events.push(openaiDelta({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    for (const piece of args.match(/.{1,4}/gs)) events.push(openaiDelta({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  events.push(openaiDelta({}, finish));
  events.push(openaiChunk([], {
    usage: {
      prompt_tokens: 21, completion_tokens: usage.completion ?? 9, total_tokens: 21 + (usage.completion ?? 9),
      prompt_tokens_details: { cached_tokens: usage.cached ?? 0 },
      completion_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
    },
  }));
  events.push('data: [DONE]\n\n');
  return events;
}

const anthropicEvent = (type, payload) => `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;

// An Anthropic streamed message: thinking with its signature, text,
// tool_use blocks (input in fragments), the stop reason and the usage.
function anthropicTurn ({ thinking, signature, text, toolUses = [], stop = 'end_turn', usage = {} }) {
  const events = [anthropicEvent('message_start', {
    message: {
      id: 'msg_up', type: 'message', role: 'assistant', content: [], model: ANTHROPIC_MODEL, stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 17, cache_creation_input_tokens: usage.creation ?? 0, cache_read_input_tokens: usage.read ?? 0, output_tokens: 1 },
    },
  })];
  let index = 0;
  if (thinking) {
    events.push(anthropicEvent('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }));
    events.push(anthropicEvent('content_block_delta', { index, delta: { type: 'thinking_delta', thinking } }));
    events.push(anthropicEvent('content_block_delta', { index, delta: { type: 'signature_delta', signature } }));
    events.push(anthropicEvent('content_block_stop', { index }));
    index++;
  }
  if (text) {
    events.push(anthropicEvent('content_block_start', { index, content_block: { type: 'text', text: '' } }));
    for (const piece of text.match(/.{1,5}/gs)) events.push(anthropicEvent('content_block_delta', { index, delta: { type: 'text_delta', text: piece } }));
    events.push(anthropicEvent('content_block_stop', { index }));
    index++;
  }
  for (const use of toolUses) {
    events.push(anthropicEvent('content_block_start', { index, content_block: { type: 'tool_use', id: use.id, name: use.name, input: {} } }));
    for (const piece of JSON.stringify(use.input).match(/.{1,4}/gs)) {
      events.push(anthropicEvent('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } }));
    }
    events.push(anthropicEvent('content_block_stop', { index }));
    index++;
  }
  events.push(anthropicEvent('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: usage.output ?? 12 } }));
  events.push(anthropicEvent('message_stop', {}));
  return events;
}

class FakeProvider {
  constructor () {
    this.requests = [];
    this.handlers = {};
  }

  async start () {
    this.server = http.createServer((req, res) => {
      const chunks = [];
      req.on('data', (chunk) => chunks.push(chunk));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        const record = { method: req.method, path: req.url, headers: req.headers, body: text ? JSON.parse(text) : null };
        this.requests.push(record);
        const handler = this.handlers[req.url] ?? (() => { res.writeHead(404); res.end(); });
        Promise.resolve(handler(record, res)).catch(() => res.destroy());
      });
    });
    await new Promise((done) => this.server.listen(0, '127.0.0.1', done));
    this.url = `http://127.0.0.1:${this.server.address().port}/v1`;
  }

  received (path) {
    return this.requests.filter((request) => request.path === path);
  }

  only (path) {
    const requests = this.received(path);
    assert.equal(requests.length, 1, `${path} was asked ${requests.length} times`);
    return requests[0].body;
  }

  reset () {
    this.requests = [];
    this.handlers = {};
  }
}

async function streamEvents (res, events, { delayMs = 0, headers = {} } = {}) {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', ...headers });
  for (const event of events) {
    if (res.destroyed) return;
    res.write(event);
    if (delayMs) await sleep(delayMs);
  }
  res.end();
}

const CHAT = '/v1/chat/completions';
const MESSAGES = '/v1/messages';
const COUNT = '/v1/messages/count_tokens';

// --- the gateway -----------------------------------------------------------

function writePipeline (providerUrl) {
  const dir = mkdtempSync(join(tmpdir(), 'symfonic-sdk-'));
  const key = join(dir, 'provider.key');
  writeFileSync(key, 'sk-provider-key\n');
  const pipeline = join(dir, 'sdk.pipeline');
  writeFileSync(pipeline, `[gateway]
listen=127.0.0.1:0
workers=1

[route:openai]
path=/v1
kind=openai
source=openai
stages=auth;errors

[route:anthropic]
path=/anthropic/v1
kind=anthropic
source=anthropic
stages=auth;errors

[route:replay-openai]
path=/replay/v1
kind=openai
source=replay
stages=auth;extraction;citation;errors

[route:replay-anthropic]
path=/replay/anthropic/v1
kind=anthropic
source=replay
stages=auth;extraction;citation;errors

[source:openai]
type=openai
base-url=${providerUrl}
model=${OPENAI_MODEL}
api-key-file=${key}
max-tokens=${CAP}

[source:anthropic]
type=anthropic
base-url=${providerUrl}
model=${ANTHROPIC_MODEL}
api-key-file=${key}
max-tokens=${CAP}

[source:replay]
type=replay
transcripts=${resolve(here, '..', 'integration', 'transcripts')}
default-transcript=provider-text
transcript-header=X-Symfonic-Transcript
time-scale=0

[stage:auth]
type=auth
tokens-file=${join(data, 'demo-tokens.ini')}

[stage:extraction]
type=extraction

[stage:citation]
type=citation

[stage:errors]
type=error-map
table=${join(data, 'error-map.ini')}
`);
  return pipeline;
}

function startGateway (pipeline) {
  const gateway = spawn(process.env.SYMFONIC_GATEWAY, ['--listen', '127.0.0.1:0', '--workers', '1', pipeline],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((done, fail) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error('the gateway did not start')), 20000);
    gateway.on('exit', (code) => fail(new Error(`the gateway exited with ${code}`)));
    gateway.stdout.on('data', (chunk) => {
      out += chunk;
      const match = out.match(/ on (http:\/\/\S+?)\/?\s/);
      if (match) {
        clearTimeout(timer);
        done({ gateway, url: match[1] });
      }
    });
  });
}

// --- the clients ---------------------------------------------------------

const messages = [{ role: 'user', content: 'Hi' }];
const openaiClient = (url, options = {}) =>
  new OpenAI({ apiKey: KEY, baseURL: `${url}/v1`, defaultHeaders: TENANT, maxRetries: 0, ...options });
const anthropicClient = (url, options = {}) =>
  new Anthropic({ apiKey: KEY, baseURL: `${url}/anthropic`, defaultHeaders: TENANT, maxRetries: 0, ...options });
const aiOpenai = (url) => createOpenAI({ apiKey: KEY, baseURL: `${url}/v1`, headers: TENANT });
const aiCompatible = (url) => createOpenAICompatible({
  name: 'gateway', apiKey: KEY, baseURL: `${url}/v1`, headers: TENANT, supportsStructuredOutputs: true, includeUsage: true,
});
const aiAnthropic = (url) => createAnthropic({ apiKey: KEY, baseURL: `${url}/anthropic/v1`, headers: TENANT });
const langchainOpenai = (url, options = {}) => new ChatOpenAI({
  model: OPENAI_MODEL, apiKey: KEY, maxRetries: 0, configuration: { baseURL: `${url}/v1`, defaultHeaders: TENANT }, ...options,
});
// its default max_tokens for this model is over the route's cap
const langchainAnthropic = (url, options = {}) => new ChatAnthropic({
  model: ANTHROPIC_MODEL, apiKey: KEY, maxRetries: 0, maxTokens: 1024, anthropicApiUrl: `${url}/anthropic`,
  clientOptions: { defaultHeaders: TENANT }, ...options,
});

const weather = z.object({ city: z.string(), celsius: z.number() });
const WEATHER = { city: 'Lisbon', celsius: 21 };

// The provider answers structured output as asked: JSON text for a
// response format, the forced tool's call for a forced tool choice.
function structuredOpenai (record, res) {
  const forced = record.body.tool_choice?.function?.name;
  if (forced) return streamEvents(res, openaiTurn({ toolCalls: [{ id: 'call_w', name: forced, arguments: WEATHER }], finish: 'stop' }));
  return streamEvents(res, openaiTurn({ text: JSON.stringify(WEATHER) }));
}

function structuredAnthropic (record, res) {
  const forced = record.body.tool_choice?.name;
  if (forced) return streamEvents(res, anthropicTurn({ toolUses: [{ id: 'toolu_w', name: forced, input: WEATHER }], stop: 'tool_use' }));
  return streamEvents(res, anthropicTurn({ text: JSON.stringify(WEATHER) }));
}

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

// --- the official OpenAI SDK --------------------------------------------------

test('openai: reasoning, text and usage with its details stream through, with the real model', async ({ url, fake }) => {
  fake.handlers[CHAT] = (record, res) => streamEvents(res, openaiTurn({
    reasoning: 'Let me think.', text: 'Hello world!', usage: { cached: 8, reasoning: 4 },
  }));
  const stream = await openaiClient(url).chat.completions.create(
    { model: 'any', messages, stream: true, stream_options: { include_usage: true }, user: 'u-1', seed: 7 });
  let content = ''; let reasoning = ''; let finish = null; let usage = null; let model = null;
  for await (const chunk of stream) {
    model = chunk.model;
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      content += choice.delta.content ?? '';
      reasoning += choice.delta.reasoning_content ?? '';
      finish = choice.finish_reason ?? finish;
    }
  }
  assert.equal(content, 'Hello world!');
  assert.equal(reasoning, 'Let me think.');
  assert.equal(finish, 'stop');
  assert.equal(model, OPENAI_MODEL);
  assert.deepEqual(usage, {
    prompt_tokens: 21, completion_tokens: 9, total_tokens: 30,
    prompt_tokens_details: { cached_tokens: 8 }, completion_tokens_details: { reasoning_tokens: 4 },
  });
  const sent = fake.only(CHAT);
  assert.equal(sent.model, OPENAI_MODEL);
  assert.equal(sent.user, 'u-1');
  assert.equal(sent.seed, 7);
  assert.equal(fake.received(CHAT)[0].headers.authorization, 'Bearer sk-provider-key');
});

test('openai: structured output with parse() reaches the model as its JSON schema', async ({ url, fake }) => {
  fake.handlers[CHAT] = structuredOpenai;
  const completion = await openaiClient(url).chat.completions.parse(
    { model: 'any', messages, response_format: zodResponseFormat(weather, 'weather') });
  assert.deepEqual(completion.choices[0].message.parsed, WEATHER);
  const sent = fake.only(CHAT);
  assert.equal(sent.response_format.type, 'json_schema');
  assert.equal(sent.response_format.json_schema.name, 'weather');
  assert.equal(sent.response_format.json_schema.strict, true);
  assert.deepEqual(sent.response_format.json_schema.schema.required, ['city', 'celsius']);
});

test('openai: a forced tool choice reaches the model, the arguments stream in fragments', async ({ url, fake }) => {
  fake.handlers[CHAT] = (record, res) => streamEvents(res, openaiTurn({
    text: 'Checking.', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Lisbon' } }], finish: 'tool_calls',
  }));
  const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
  const runner = openaiClient(url).chat.completions.stream({
    model: 'any', messages, tools, tool_choice: { type: 'function', function: { name: 'get_weather' } }, parallel_tool_calls: false,
  });
  const fragments = [];
  runner.on('tool_calls.function.arguments.delta', (event) => fragments.push(event.arguments_delta));
  const completion = await runner.finalChatCompletion();
  const call = completion.choices[0].message.tool_calls[0];
  assert.equal(completion.choices[0].finish_reason, 'tool_calls');
  assert.deepEqual([call.id, call.function.name, JSON.parse(call.function.arguments)], ['call_1', 'get_weather', { city: 'Lisbon' }]);
  assert.ok(fragments.filter((piece) => piece !== '').length > 1, `arguments came in ${fragments.length} pieces`);
  const sent = fake.only(CHAT);
  assert.deepEqual(sent.tool_choice, { type: 'function', function: { name: 'get_weather' } });
  assert.equal(sent.parallel_tool_calls, false);
  assert.deepEqual(sent.tools, tools);
});

test('openai: a truncated answer finishes with length, a limit over the cap is refused', async ({ url, fake }) => {
  fake.handlers[CHAT] = (record, res) => streamEvents(res, openaiTurn({ text: 'Once upon a', finish: 'length', usage: { completion: 3 } }));
  const client = openaiClient(url);
  const completion = await client.chat.completions.create({ model: 'any', messages, max_completion_tokens: 3 });
  assert.equal(completion.choices[0].finish_reason, 'length');
  assert.equal(completion.choices[0].message.content, 'Once upon a');
  assert.equal(fake.only(CHAT).max_completion_tokens, 3);
  await assert.rejects(client.chat.completions.create({ model: 'any', messages, max_tokens: CAP + 1 }),
    (error) => error instanceof OpenAI.BadRequestError && error.message.includes(`at most ${CAP}`));
});

test('openai: the request id is the run id', async ({ url, fake }) => {
  fake.handlers[CHAT] = (record, res) => streamEvents(res, openaiTurn({ text: 'Hi.' }));
  const { data, response, request_id: requestId } = await openaiClient(url).chat.completions
    .create({ model: 'any', messages }).withResponse();
  assert.equal(data.choices[0].message.content, 'Hi.');
  assert.equal(requestId, response.headers.get('x-symfonic-run-id'));
  assert.equal(data._request_id, requestId);
});

test('openai: a refused provider key is PermissionDeniedError, and not retried', async ({ url, fake }) => {
  fake.handlers[CHAT] = (record, res) => { res.writeHead(401, { 'Content-Type': 'application/json' }); res.end('{"error":{"message":"bad key"}}'); };
  // the SDK's default: two retries of a retryable status
  await assert.rejects(openaiClient(url, { maxRetries: 2 }).chat.completions.create({ model: 'any', messages }),
    (error) => error instanceof OpenAI.PermissionDeniedError && error.code === 'upstream_refused' &&
      !error.message.includes('bad key'));
  assert.equal(fake.received(CHAT).length, 1);
});

test('openai: a rate-limited provider is RateLimitError with its code and Retry-After', async ({ url, fake }) => {
  fake.handlers[CHAT] = (record, res) => {
    res.writeHead(429, {
      'Content-Type': 'application/json', 'Retry-After': '7', 'x-ratelimit-limit-requests': '60', 'x-ratelimit-remaining-requests': '0',
    });
    res.end('{"error":{"message":"slow down"}}');
  };
  await assert.rejects(openaiClient(url).chat.completions.create({ model: 'any', messages }),
    (error) => error instanceof OpenAI.RateLimitError && error.code === 'rate_limit_exceeded' &&
      error.headers.get('retry-after') === '7' && error.headers.get('x-ratelimit-remaining-requests') === '0' &&
      typeof error.requestID === 'string');
});

test('openai: the gateway\'s 404 and 400 come with a body the SDK reads', async ({ url }) => {
  const client = openaiClient(url);
  await assert.rejects(client.embeddings.create({ model: 'any', input: 'x' }),
    (error) => error instanceof OpenAI.NotFoundError && error.message.includes('No route serves this path'));
  await assert.rejects(client.chat.completions.create({ model: 'any', messages, n: 2 }),
    (error) => error instanceof OpenAI.BadRequestError && error.message.includes('“n”'));
});

test('openai: the Responses API streams its typed events, reasoning summary and function call', async ({ url, fake }) => {
  fake.handlers[CHAT] = (record, res) => streamEvents(res, openaiTurn({
    reasoning: 'Hmm.', text: 'Sunny.', toolCalls: [{ id: 'call_r', name: 'lookup', arguments: { q: 'sky' } }], finish: 'tool_calls',
  }));
  const stream = openaiClient(url).responses.stream({
    model: 'any', input: 'Weather?', instructions: 'Be brief.', max_output_tokens: 100,
    tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } }, strict: false }],
  });
  const types = new Set();
  let summary = '';
  let argumentsDelta = '';
  stream.on('event', (event) => types.add(event.type));
  stream.on('response.reasoning_summary_text.delta', (event) => { summary += event.delta; });
  stream.on('response.function_call_arguments.delta', (event) => { argumentsDelta += event.delta; });
  const response = await stream.finalResponse();
  assert.equal(response.status, 'completed');
  assert.equal(response.output_text, 'Sunny.');
  assert.equal(summary, 'Hmm.');
  assert.equal(argumentsDelta, '{"q":"sky"}');
  const call = response.output.find((item) => item.type === 'function_call');
  assert.deepEqual([call.call_id, call.name, JSON.parse(call.arguments)], ['call_r', 'lookup', { q: 'sky' }]);
  for (const type of ['response.created', 'response.output_text.delta', 'response.reasoning_summary_text.delta',
    'response.function_call_arguments.delta', 'response.completed']) assert.ok(types.has(type), type);
  assert.deepEqual(response.usage, {
    input_tokens: 21, input_tokens_details: { cached_tokens: 0 }, output_tokens: 9,
    output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 30,
  });
  const sent = fake.only(CHAT);
  assert.deepEqual(sent.messages.slice(0, 2), [{ role: 'developer', content: 'Be brief.' }, { role: 'user', content: 'Weather?' }]);
  assert.equal(sent.max_completion_tokens, 100);
  assert.equal(sent.tools[0].function.name, 'lookup');
});

test('openai: a background response, its stream cut, resumed from the last event read', async ({ url, fake }) => {
  const text = 'one two three four five six seven eight nine ten';
  fake.handlers[CHAT] = (record, res) => streamEvents(res, openaiTurn({ text }), { delayMs: 30 });
  const client = openaiClient(url);
  const first = await client.responses.create({ model: 'any', input: 'Count', background: true, stream: true });
  let id = null;
  let last = 0;
  let got = '';
  for await (const event of first) {
    id ??= event.response?.id;
    last = event.sequence_number;
    if (event.type === 'response.output_text.delta') got += event.delta;
    if (got.length >= 10) break;
  }
  assert.ok(id.startsWith('resp_'));
  // the run went on without its client
  const resumed = await client.responses.retrieve(id, { stream: true, starting_after: last });
  let final = null;
  for await (const event of resumed) {
    assert.ok(event.sequence_number > last);
    last = event.sequence_number;
    if (event.type === 'response.output_text.delta') got += event.delta;
    if (event.type === 'response.completed') final = event.response;
  }
  assert.equal(got, text);
  assert.equal(final.output_text ?? final.output[0].content[0].text, text);
  const again = await client.responses.retrieve(id);
  assert.equal(again.status, 'completed');
  assert.equal(again.output_text, text);
  assert.equal(fake.received(CHAT).length, 1);
});

// --- the official Anthropic SDK -------------------------------------------------

test('anthropic: extended thinking reaches the model, its signature comes back', async ({ url, fake }) => {
  fake.handlers[MESSAGES] = (record, res) => streamEvents(res, anthropicTurn({
    thinking: 'Let me think.', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA', text: 'Hello world!',
  }));
  const message = await anthropicClient(url).messages.stream({
    model: 'any', max_tokens: 2048, messages, thinking: { type: 'enabled', budget_tokens: 1024 },
  }).finalMessage();
  assert.deepEqual(message.content, [
    { type: 'thinking', thinking: 'Let me think.', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA' },
    { type: 'text', text: 'Hello world!' },
  ]);
  assert.equal(message.model, ANTHROPIC_MODEL);
  const sent = fake.only(MESSAGES);
  assert.deepEqual(sent.thinking, { type: 'enabled', budget_tokens: 1024 });
  assert.equal(sent.model, ANTHROPIC_MODEL);
  assert.equal(fake.received(MESSAGES)[0].headers['x-api-key'], 'sk-provider-key');
});

test('anthropic: prompt caching fields reach the model, the cache usage comes back', async ({ url, fake }) => {
  fake.handlers[MESSAGES] = (record, res) => streamEvents(res, anthropicTurn({ text: 'Cached.', usage: { read: 1200, creation: 30 } }));
  const system = [{ type: 'text', text: 'A long system prompt.', cache_control: { type: 'ephemeral' } }];
  const stream = anthropicClient(url).messages.stream({ model: 'any', max_tokens: 100, system, messages, top_k: 5, metadata: { user_id: 'u-1' } });
  let startUsage = null;
  stream.on('streamEvent', (event) => { if (event.type === 'message_start') startUsage = structuredClone(event.message.usage); });
  const message = await stream.finalMessage();
  assert.deepEqual(startUsage, { input_tokens: 17, cache_creation_input_tokens: 30, cache_read_input_tokens: 1200, output_tokens: 0 });
  assert.equal(message.usage.cache_read_input_tokens, 1200);
  assert.equal(message.usage.output_tokens, 12);
  const sent = fake.only(MESSAGES);
  assert.deepEqual(sent.system, system);
  assert.equal(sent.top_k, 5);
  assert.deepEqual(sent.metadata, { user_id: 'u-1' });
});

test('anthropic: images (base64 and URL) and documents reach the model as sent', async ({ url, fake }) => {
  fake.handlers[MESSAGES] = (record, res) => streamEvents(res, anthropicTurn({ text: 'A cat.' }));
  const content = [
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
    { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
    { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x' }, cache_control: { type: 'ephemeral' } },
    { type: 'text', text: 'What is this?' },
  ];
  const message = await anthropicClient(url).messages.create({ model: 'any', max_tokens: 100, messages: [{ role: 'user', content }] });
  assert.equal(message.content[0].text, 'A cat.');
  assert.deepEqual(fake.only(MESSAGES).messages, [{ role: 'user', content }]);
});

test('anthropic: a truncated answer stops with max_tokens, a forced tool reaches the model', async ({ url, fake }) => {
  fake.handlers[MESSAGES] = (record, res) => streamEvents(res, anthropicTurn({ text: 'Once upon a', stop: 'max_tokens', usage: { output: 3 } }));
  const message = await anthropicClient(url).messages.create({
    model: 'any', max_tokens: 3, messages, tools: [{ name: 'f', input_schema: { type: 'object' } }],
    tool_choice: { type: 'tool', name: 'f', disable_parallel_tool_use: true },
  });
  assert.equal(message.stop_reason, 'max_tokens');
  assert.deepEqual(fake.only(MESSAGES).tool_choice, { type: 'tool', name: 'f', disable_parallel_tool_use: true });
});

test('anthropic: request id, models and count_tokens', async ({ url, fake }) => {
  fake.handlers[MESSAGES] = (record, res) => streamEvents(res, anthropicTurn({ text: 'Hi.' }));
  fake.handlers[COUNT] = (record, res) => { res.writeHead(200, { 'Content-Type': 'application/json' }); res.end('{"input_tokens":33}'); };
  const client = anthropicClient(url);
  const { data, response, request_id: requestId } = await client.messages.create({ model: 'any', max_tokens: 100, messages }).withResponse();
  assert.equal(requestId, response.headers.get('x-symfonic-run-id'));
  assert.equal(data._request_id, requestId);
  const models = [];
  for await (const model of client.models.list()) models.push(model.id);
  assert.deepEqual(models, [ANTHROPIC_MODEL]);
  assert.equal((await client.models.retrieve(ANTHROPIC_MODEL)).id, ANTHROPIC_MODEL);
  const count = await client.messages.countTokens({ model: 'any', messages, system: 'Be brief.' });
  assert.equal(count.input_tokens, 33);
  assert.deepEqual(fake.only(COUNT), { model: ANTHROPIC_MODEL, messages, system: 'Be brief.' });
});

test('anthropic: an overloaded provider stays overloaded_error, a refused key is not retried', async ({ url, fake }) => {
  fake.handlers[MESSAGES] = (record, res) => { res.writeHead(529, { 'Content-Type': 'application/json' }); res.end('{}'); };
  await assert.rejects(anthropicClient(url).messages.create({ model: 'any', max_tokens: 10, messages }),
    (error) => error instanceof Anthropic.InternalServerError && error.error?.error?.type === 'overloaded_error');
  fake.reset();
  fake.handlers[MESSAGES] = (record, res) => { res.writeHead(403, { 'Content-Type': 'application/json' }); res.end('{}'); };
  await assert.rejects(anthropicClient(url, { maxRetries: 2 }).messages.create({ model: 'any', max_tokens: 10, messages }),
    (error) => error instanceof Anthropic.PermissionDeniedError && typeof error.requestID === 'string');
  assert.equal(fake.received(MESSAGES).length, 1);
});

// --- the Vercel AI SDK ---------------------------------------------------------

test('ai: generateObject with openai(model), over the Responses API', async ({ url, fake }) => {
  fake.handlers[CHAT] = structuredOpenai;
  const { object, finishReason } = await ai.generateObject({ model: aiOpenai(url)('gpt-4o-mini'), schema: weather, prompt: 'Weather?' });
  assert.deepEqual(object, WEATHER);
  assert.equal(finishReason, 'stop');
  const sent = fake.only(CHAT);
  assert.equal(sent.response_format.type, 'json_schema');
  assert.deepEqual(sent.response_format.json_schema.schema.required, ['city', 'celsius']);
});

test('ai: generateObject with the OpenAI-compatible provider', async ({ url, fake }) => {
  fake.handlers[CHAT] = structuredOpenai;
  const { object, usage } = await ai.generateObject({ model: aiCompatible(url)('any'), schema: weather, prompt: 'Weather?' });
  assert.deepEqual(object, WEATHER);
  assert.equal(usage.inputTokens, 21);
  assert.equal(fake.only(CHAT).response_format.type, 'json_schema');
});

test('ai: a forced toolChoice, the call whole', async ({ url, fake }) => {
  fake.handlers[CHAT] = structuredOpenai;
  const { toolCalls } = await ai.generateText({
    model: aiOpenai(url).chat('gpt-4o-mini'), prompt: 'Weather?',
    tools: { get_weather: ai.tool({ description: 'the weather', inputSchema: weather }) },
    toolChoice: { type: 'tool', toolName: 'get_weather' },
  });
  assert.deepEqual(toolCalls.map((call) => [call.toolName, call.input]), [['get_weather', WEATHER]]);
  assert.deepEqual(fake.only(CHAT).tool_choice, { type: 'function', function: { name: 'get_weather' } });
});

test('ai: Anthropic reasoning with its signature, the cache usage and a truncation', async ({ url, fake }) => {
  fake.handlers[MESSAGES] = (record, res) => streamEvents(res, anthropicTurn({
    thinking: 'Hmm.', signature: 'sig-1', text: 'Once upon a', stop: 'max_tokens', usage: { read: 500 },
  }));
  const result = ai.streamText({
    model: aiAnthropic(url)('claude-sonnet-4-5'), prompt: 'Story?', maxOutputTokens: 4000,
    providerOptions: { anthropic: { thinking: { type: 'enabled', budgetTokens: 2000 } } },
  });
  let text = '';
  for await (const delta of result.textStream) text += delta;
  assert.equal(text, 'Once upon a');
  assert.equal(await result.reasoningText, 'Hmm.');
  assert.equal(await result.finishReason, 'length');
  const usage = await result.usage;
  assert.equal(usage.outputTokens, 12);
  assert.equal(usage.inputTokenDetails?.cacheReadTokens ?? usage.cachedInputTokens, 500);
  assert.deepEqual(fake.only(MESSAGES).thinking, { type: 'enabled', budget_tokens: 2000 });
});

// --- LangChain ---------------------------------------------------------------

test('langchain: ChatOpenAI withStructuredOutput', async ({ url, fake }) => {
  fake.handlers[CHAT] = structuredOpenai;
  const result = await langchainOpenai(url).withStructuredOutput(weather, { name: 'weather', method: 'jsonSchema' }).invoke('Weather?');
  assert.deepEqual(result, WEATHER);
  const sent = fake.only(CHAT);
  assert.equal(sent.response_format.type, 'json_schema');
  assert.equal(sent.response_format.json_schema.name, 'weather');
});

test('langchain: ChatAnthropic withStructuredOutput forces its tool', async ({ url, fake }) => {
  fake.handlers[MESSAGES] = structuredAnthropic;
  const result = await langchainAnthropic(url).withStructuredOutput(weather, { name: 'weather' }).invoke('Weather?');
  assert.deepEqual(result, WEATHER);
  assert.deepEqual(fake.only(MESSAGES).tool_choice, { type: 'tool', name: 'weather' });
});

test('langchain: ChatAnthropic streamed usage counts the input the provider reported', async ({ url, fake }) => {
  fake.handlers[MESSAGES] = (record, res) => streamEvents(res, anthropicTurn({ text: 'Hello world!', usage: { read: 100 } }));
  let final = null;
  for await (const chunk of await langchainAnthropic(url).stream('Hi')) final = final === null ? chunk : final.concat(chunk);
  assert.equal(final.content.map?.((part) => part.text ?? '').join('') ?? final.content, 'Hello world!');
  assert.equal(final.usage_metadata.input_tokens, 117);
  assert.equal(final.usage_metadata.output_tokens, 12);
  assert.equal(final.usage_metadata.input_token_details.cache_read, 100);
});

test('langchain: ChatOpenAI sees a truncation as length, with usage details', async ({ url, fake }) => {
  fake.handlers[CHAT] = (record, res) => streamEvents(res, openaiTurn({ text: 'Once upon a', finish: 'length', usage: { cached: 3, reasoning: 2 } }));
  const message = await langchainOpenai(url).invoke('Story?');
  assert.equal(message.response_metadata.finish_reason, 'length');
  assert.equal(message.usage_metadata.input_tokens, 21);
  assert.equal(message.usage_metadata.input_token_details.cache_read, 3);
  assert.equal(message.usage_metadata.output_token_details.reasoning, 2);
});

test('langchain: ChatOpenAI over the Responses API', async ({ url, fake }) => {
  fake.handlers[CHAT] = (record, res) => streamEvents(res, openaiTurn({ text: 'Hello from Responses.' }));
  const message = await langchainOpenai(url, { useResponsesApi: true }).invoke('Hi');
  const text = typeof message.content === 'string' ? message.content : message.content.map((part) => part.text ?? '').join('');
  assert.equal(text, 'Hello from Responses.');
  assert.equal(message.usage_metadata.input_tokens, 21);
  assert.deepEqual(fake.only(CHAT).messages, [{ role: 'user', content: 'Hi' }]);
});

// --- the gateway's own failures, from recorded transcripts ------------------------

test('replay: the openai SDK raises a mid-stream error, opaque', async ({ url }) => {
  const client = new OpenAI({ apiKey: KEY, baseURL: `${url}/replay/v1`, defaultHeaders: TENANT, maxRetries: 0 });
  const stream = await client.chat.completions.create({ model: 'm', messages, stream: true },
    { headers: { 'X-Symfonic-Transcript': 'midstream-error' } });
  let content = '';
  await assert.rejects(async () => {
    for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? '';
  }, (error) => error instanceof OpenAI.APIError && error.message.includes(OPAQUE) && !error.message.includes('10.0.0.7'));
  assert.equal(content, 'Partial answer');
});

test('replay: the anthropic SDK raises a mid-stream error, overloaded_error kept', async ({ url }) => {
  const client = new Anthropic({ apiKey: KEY, baseURL: `${url}/replay/anthropic`, defaultHeaders: TENANT, maxRetries: 0 });
  const stream = await client.messages.create({ model: 'm', max_tokens: 64, messages, stream: true },
    { headers: { 'X-Symfonic-Transcript': 'midstream-error' } });
  await assert.rejects(async () => {
    for await (const event of stream) void event;
  }, (error) => error instanceof Anthropic.APIError && error.message.includes(OPAQUE) &&
    error.message.includes('overloaded_error') && !error.message.includes('10.0.0.7'));
});

test('replay: a wrong key is AuthenticationError in either SDK', async ({ url }) => {
  const openai = new OpenAI({ apiKey: 'not-a-key', baseURL: `${url}/replay/v1`, defaultHeaders: TENANT, maxRetries: 0 });
  const anthropic = new Anthropic({ apiKey: 'not-a-key', baseURL: `${url}/replay/anthropic`, defaultHeaders: TENANT, maxRetries: 0 });
  await assert.rejects(openai.chat.completions.create({ model: 'm', messages }),
    (error) => error instanceof OpenAI.AuthenticationError && error.code === 'unauthorized');
  await assert.rejects(anthropic.messages.create({ model: 'm', max_tokens: 64, messages }),
    (error) => error instanceof Anthropic.AuthenticationError && error.status === 401);
});

// --- the run --------------------------------------------------------------------

const fake = new FakeProvider();
await fake.start();
const { gateway, url } = await startGateway(writePipeline(fake.url));
let failed = 0;
console.log(`1..${tests.length}`);
for (const [i, { name, fn }] of tests.entries()) {
  fake.reset();
  try {
    await fn({ url, fake });
    console.log(`ok ${i + 1} ${name}`);
  } catch (error) {
    failed++;
    console.log(`not ok ${i + 1} ${name}`);
    console.log(String(error.stack ?? error).split('\n').map((line) => `# ${line}`).join('\n'));
    for (const request of fake.requests) console.log(`# provider got ${request.method} ${request.path} ${JSON.stringify(request.body)}`);
  }
}
gateway.removeAllListeners('exit');
gateway.kill('SIGTERM');
fake.server.close();
fake.server.closeAllConnections?.();
process.exitCode = failed > 0 ? 1 : 0;
