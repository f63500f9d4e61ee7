// test-sdk.mjs: the official OpenAI and Anthropic SDKs against the gateway
//
// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Starts the gateway binary on sdk.pipeline and has each SDK stream a
// completion, a tool call and an error through the provider routes.
// Expected values are written from the transcripts, not read from the
// gateway. Prints TAP.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(resolve(process.argv[2]), 'node_modules', 'index.js'));
const OpenAI = require('openai');
const Anthropic = require('@anthropic-ai/sdk');

const CLEAN_TEXT = 'Hello world!';
const CLEAN_THINKING = 'Let me think.';
const OPAQUE = 'Internal server error';

function startGateway () {
  const gateway = spawn(process.env.SYMFONIC_GATEWAY,
    ['--listen', '127.0.0.1:0', '--workers', '1', join(here, 'sdk.pipeline')],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('the gateway did not start')), 20000);
    gateway.on('exit', (code) => reject(new Error(`the gateway exited with ${code}`)));
    gateway.stdout.on('data', (data) => {
      out += data;
      const match = out.match(/ on (http:\/\/\S+?)\/?\s/);
      if (match) {
        clearTimeout(timer);
        resolve({ gateway, url: match[1] });
      }
    });
  });
}

const transcript = (name) => ({ headers: { 'X-Symfonic-Transcript': name } });
const tenant = { 'X-Tenant-ID': 'acme' };
const messages = [{ role: 'user', content: 'Hi' }];

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

function clients (url, key = 'demo-token-alice') {
  return {
    openai: new OpenAI({ apiKey: key, baseURL: `${url}/v1`, defaultHeaders: tenant, maxRetries: 0 }),
    anthropic: new Anthropic({ apiKey: key, baseURL: `${url}/anthropic`, defaultHeaders: tenant, maxRetries: 0 }),
  };
}

test('openai streams a completion with reasoning and usage', async (url) => {
  const { openai } = clients(url);
  const stream = await openai.chat.completions.create(
    { model: 'gpt-test', messages, stream: true, stream_options: { include_usage: true } },
    transcript('provider-text'));
  let content = '';
  let reasoning = '';
  let finish = null;
  let usage = null;
  for await (const chunk of stream) {
    assert.equal(chunk.object, 'chat.completion.chunk');
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      content += choice.delta.content ?? '';
      reasoning += choice.delta.reasoning_content ?? '';
      finish = choice.finish_reason ?? finish;
    }
  }
  assert.equal(content, CLEAN_TEXT);
  assert.equal(reasoning, CLEAN_THINKING);
  assert.equal(finish, 'stop');
  assert.deepEqual(usage, { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
});

test('openai stream helper assembles the tool calls', async (url) => {
  const { openai } = clients(url);
  const runner = openai.chat.completions.stream({ model: 'gpt-test', messages }, transcript('provider-tools'));
  const completion = await runner.finalChatCompletion();
  const message = completion.choices[0].message;
  assert.equal(message.content, 'Checking.');
  assert.equal(completion.choices[0].finish_reason, 'tool_calls');
  assert.deepEqual(message.tool_calls.map((call) => [call.id, call.function.name, JSON.parse(call.function.arguments)]),
    [['call_1', 'get_weather', { city: 'Lisbon' }], ['call_2', 'get_time', { tz: 'WET' }]]);
});

test('openai non-streamed completion', async (url) => {
  const { openai } = clients(url);
  const completion = await openai.chat.completions.create({ model: 'gpt-test', messages }, transcript('provider-text'));
  assert.equal(completion.choices[0].message.content, CLEAN_TEXT);
});

test('openai raises the mid-stream error', async (url) => {
  const { openai } = clients(url);
  const stream = await openai.chat.completions.create({ model: 'gpt-test', messages, stream: true },
    transcript('midstream-error'));
  let content = '';
  await assert.rejects(async () => {
    for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? '';
  }, (error) => error instanceof OpenAI.APIError && error.message.includes(OPAQUE) && !error.message.includes('10.0.0.7'));
  assert.equal(content, 'Partial answer');
});

test('openai raises AuthenticationError for a wrong key', async (url) => {
  const { openai } = clients(url, 'not-a-key');
  await assert.rejects(openai.chat.completions.create({ model: 'gpt-test', messages, stream: true }),
    (error) => error instanceof OpenAI.AuthenticationError && error.status === 401 &&
      error.error?.code === 'unauthorized');
});

test('openai lists the route model', async (url) => {
  const { openai } = clients(url);
  const models = [];
  for await (const model of openai.models.list()) models.push(model.id);
  assert.deepEqual(models, ['openai']);
});

test('anthropic streams a message with thinking', async (url) => {
  const { anthropic } = clients(url);
  const stream = anthropic.messages.stream({ model: 'claude-test', max_tokens: 64, messages }, transcript('provider-text'));
  let text = '';
  stream.on('text', (delta) => { text += delta; });
  const message = await stream.finalMessage();
  assert.equal(text, CLEAN_TEXT);
  assert.equal(message.stop_reason, 'end_turn');
  assert.deepEqual(message.content.map((block) => block.type), ['thinking', 'text']);
  assert.equal(message.content[0].thinking, CLEAN_THINKING);
  assert.equal(message.content[1].text, CLEAN_TEXT);
});

test('anthropic streams tool_use blocks with their input', async (url) => {
  const { anthropic } = clients(url);
  const message = await anthropic.messages.stream({ model: 'claude-test', max_tokens: 64, messages },
    transcript('provider-tools')).finalMessage();
  assert.equal(message.stop_reason, 'tool_use');
  assert.deepEqual(message.content, [
    { type: 'text', text: 'Checking.' },
    { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Lisbon' } },
    { type: 'tool_use', id: 'call_2', name: 'get_time', input: { tz: 'WET' } },
  ]);
});

test('anthropic non-streamed message', async (url) => {
  const { anthropic } = clients(url);
  const message = await anthropic.messages.create({ model: 'claude-test', max_tokens: 64, messages },
    transcript('provider-tools'));
  assert.equal(message.content[2].input.tz, 'WET');
});

test('anthropic raises the mid-stream error', async (url) => {
  const { anthropic } = clients(url);
  const stream = await anthropic.messages.create({ model: 'claude-test', max_tokens: 64, messages, stream: true },
    transcript('midstream-error'));
  await assert.rejects(async () => {
    for await (const event of stream) void event;
  }, (error) => error instanceof Anthropic.APIError && error.message.includes(OPAQUE) &&
    error.message.includes('api_error') && !error.message.includes('10.0.0.7'));
});

test('anthropic raises AuthenticationError for a wrong key', async (url) => {
  const { anthropic } = clients(url, 'not-a-key');
  await assert.rejects(anthropic.messages.create({ model: 'claude-test', max_tokens: 64, messages }),
    (error) => error instanceof Anthropic.AuthenticationError && error.status === 401);
});

const { gateway, url } = await startGateway();
let failed = 0;
console.log(`1..${tests.length}`);
for (const [i, { name, fn }] of tests.entries()) {
  try {
    await fn(url);
    console.log(`ok ${i + 1} ${name}`);
  } catch (error) {
    failed++;
    console.log(`not ok ${i + 1} ${name}`);
    console.log(String(error.stack ?? error).split('\n').map((line) => `# ${line}`).join('\n'));
  }
}
gateway.removeAllListeners('exit');
gateway.kill('SIGTERM');
process.exitCode = failed > 0 ? 1 : 0;
