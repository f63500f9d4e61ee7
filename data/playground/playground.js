// The playground's client: it posts a query to a typed route with fetch(),
// reads the event stream from the response's body as it arrives, and shows
// each frame where it belongs. "Drop and resume" aborts the request and
// reads the run again from the runs route, from the frame after the last
// one received (Last-Event-ID), as a client that lost its connection would.
//
// SPDX-License-Identifier: LGPL-2.1-or-later
'use strict';

const $ = (id) => document.getElementById(id);

// the pipeline's typed routes and runs routes, from the gateway
let routes = { typed: [], runs: [] };
// the run on screen: its request, where it is, what it drew
let run = null;

function element (tag, className, text) {
  const node = document.createElement(tag);
  if (className)
    node.className = className;
  if (text !== undefined && text !== null)
    node.textContent = text;
  return node;
}

function show (id) {
  $(id).hidden = false;
}

// state: idle, streaming, complete, failed, refused, stopped
function setStatus (text, state) {
  $('status').textContent = text;
  if (state)
    document.body.dataset.state = state;
}

function setBusy (busy) {
  $('send').disabled = busy;
  $('stop').disabled = !busy;
  $('drop').disabled = !busy || !canResume();
}

function canResume () {
  return run !== null && run.route.resume && routes.runs.length > 0 && run.runId !== null;
}

function json (value) {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

function clear () {
  for (const id of ['answer', 'thinking', 'tools', 'activations', 'other', 'frames',
                    'terminal-finish', 'terminal-duration', 'terminal-usage', 'terminal-text',
                    'error-status', 'error-code', 'error-detail'])
    $(id).replaceChildren();
  for (const id of ['thinking-section', 'tools-section', 'terminal-section', 'error-section',
                    'activations-section', 'other-section'])
    $(id).hidden = true;
  delete document.body.dataset.resumedAfter;
}

async function loadRoutes () {
  const select = $('route');

  try {
    const response = await fetch('/playground/routes.json', { cache: 'no-store' });
    routes = await response.json();
  } catch (error) {
    setStatus(`Cannot list the routes: ${error.message}`, 'failed');
    return;
  }
  for (const route of routes.typed) {
    const option = element('option', null, route.resume ? `${route.path} (resumable)` : route.path);
    option.value = route.path;
    select.append(option);
  }
  // drop and resume needs a route that keeps its runs
  const resumable = routes.typed.findIndex((route) => route.resume);
  if (resumable >= 0)
    select.selectedIndex = resumable;
  if (routes.typed.length === 0) {
    $('send').disabled = true;
    setStatus('This pipeline has no typed route', 'failed');
  }
}

// --- reading the event stream ----------------------------------------------

// Reads the SSE frames of @body, one call of @onFrame per frame and of
// @onComment per comment line, until the body ends; rejects when the
// request is aborted.
async function readEvents (body, onFrame, onComment) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let frame = { id: null, event: null, data: [] };

  for (;;) {
    const { value, done } = await reader.read();
    if (done)
      return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf('\n')) >= 0) {
      let line = buffer.slice(0, end);
      buffer = buffer.slice(end + 1);
      if (line.endsWith('\r'))
        line = line.slice(0, -1);
      if (line === '') {
        if (frame.event !== null || frame.data.length > 0)
          onFrame(frame);
        frame = { id: null, event: null, data: [] };
        continue;
      }
      if (line.startsWith(':')) {
        onComment(line.slice(1).trim());
        continue;
      }
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let text = colon < 0 ? '' : line.slice(colon + 1);
      if (text.startsWith(' '))
        text = text.slice(1);
      if (field === 'event')
        frame.event = text;
      else if (field === 'data')
        frame.data.push(text);
      else if (field === 'id')
        frame.id = text;
    }
  }
}

function logFrame (id, name, note) {
  const item = element('li', `frame frame-${name}`);
  item.append(element('span', 'frame-id', id === null ? '·' : String(id)),
              element('span', 'frame-event', name));
  if (note)
    item.append(element('span', 'frame-note', note));
  $('frames').append(item);
  item.scrollIntoView({ block: 'nearest' });
}

function onComment (comment) {
  // `: shed N` says N deltas went missing for a slow reader
  if (comment.startsWith('shed '))
    logFrame(null, 'shed', `${comment.slice(5)} deltas shed`);
}

function toolCard (callId) {
  let card = run.tools.get(callId);
  if (!card) {
    card = {
      node: element('article', 'tool'),
      name: element('h3', 'tool-name', '?'),
      arguments: element('pre', 'tool-arguments'),
      result: element('pre', 'tool-result'),
    };
    const id = element('p', 'tool-id', callId);
    const argumentsLabel = element('h4', null, 'Arguments');
    const resultLabel = element('h4', null, 'Result');
    card.node.append(card.name, id, argumentsLabel, card.arguments, resultLabel, card.result);
    card.node.dataset.toolCallId = callId;
    $('tools').append(card.node);
    run.tools.set(callId, card);
    show('tools-section');
  }
  return card;
}

function showTerminal (data) {
  const usage = data.usage;
  $('terminal-finish').textContent = data.finish_reason || '';
  $('terminal-duration').textContent = `${data.duration_ms} ms`;
  if (usage) {
    let text = `${usage.input_tokens} in, ${usage.output_tokens} out`;
    if (usage.reasoning_tokens !== undefined)
      text += `, ${usage.reasoning_tokens} reasoning`;
    $('terminal-usage').textContent = text;
  } else {
    $('terminal-usage').textContent = 'not reported';
  }
  $('terminal-text').textContent = data.text;
  show('terminal-section');
}

function showError (status, code, detail) {
  $('error-status').textContent = String(status);
  $('error-code').textContent = code || '';
  $('error-detail').textContent = detail || '';
  show('error-section');
}

function onFrame (frame) {
  const id = frame.id === null ? null : Number(frame.id);
  // a resumed run starts after the last frame received; never draw twice
  if (id !== null) {
    if (id <= run.lastId)
      return;
    run.lastId = id;
  }
  const name = frame.event || 'message';
  const text = frame.data.join('\n');
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    data = text;
  }
  logFrame(id, name);

  switch (name) {
  case 'ActivationEvent': {
    const item = element('li', 'activation', data.node_label || data.node_id);
    item.append(element('span', 'detail', `${data.node_id} · score ${data.score} · layer ${data.layer}`));
    $('activations').append(item);
    show('activations-section');
    break;
  }
  case 'ThinkingDeltaEvent':
    $('thinking').append(document.createTextNode(data.text));
    show('thinking-section');
    break;
  case 'TextDeltaEvent':
    $('answer').append(document.createTextNode(data.text));
    break;
  case 'ToolCallStartEvent': {
    const card = toolCard(data.tool_call_id);
    card.name.textContent = data.tool_name;
    if (typeof data.arguments === 'string')
      card.arguments.append(document.createTextNode(data.arguments));
    break;
  }
  case 'ToolCallDeltaEvent':
    toolCard(data.tool_call_id).arguments.append(document.createTextNode(data.arguments));
    break;
  case 'ToolResultEvent':
    toolCard(data.tool_call_id).result.textContent = json(data.result);
    break;
  case 'ResponseCompleteEvent':
    run.ended = true;
    showTerminal(data);
    setStatus(run.resumedAfter === null ? 'Complete' : `Complete, resumed after frame ${run.resumedAfter}`,
              'complete');
    break;
  case 'error':
    run.ended = true;
    showError(data.status, data.code, data.detail);
    setStatus(`Failed with ${data.status}`, 'failed');
    break;
  default: {
    // memory ops, the consolidation, graph events
    const item = element('li', 'other-event');
    item.append(element('span', 'frame-event', name), element('pre', null, json(data)));
    $('other').append(item);
    show('other-section');
  }
  }
}

// --- a run ------------------------------------------------------------------

function isEventStream (response) {
  return response.ok && (response.headers.get('Content-Type') || '').startsWith('text/event-stream');
}

// A refusal before the stream: a JSON body with its status.
async function showRefusal (response) {
  const body = await response.text();
  let detail = body;
  let code = null;
  try {
    const parsed = JSON.parse(body);
    detail = parsed.detail !== undefined ? parsed.detail : json(parsed);
    code = parsed.code;
  } catch {
    // not JSON: shown as it is
  }
  showError(response.status, code, detail);
  setStatus(`Refused with ${response.status}`, 'refused');
}

function finish () {
  setBusy(false);
}

async function consume (current, request) {
  let response;
  try {
    response = await request;
  } catch (error) {
    if (current.dropping)
      return resume(current);
    fail(current, error);
    return;
  }
  if (!isEventStream(response)) {
    await showRefusal(response);
    finish();
    return;
  }
  current.runId = response.headers.get('X-Symfonic-Run-ID') || current.runId;
  setBusy(true);
  if (current.resumedAfter === null)
    setStatus(`Streaming run ${current.runId}`, 'streaming');

  try {
    await readEvents(response.body, onFrame, onComment);
  } catch (error) {
    if (current.dropping)
      return resume(current);
    fail(current, error);
    return;
  }
  if (current.dropping && !current.ended)
    return resume(current);
  if (!current.ended)
    setStatus('The stream ended without its terminal frame', 'failed');
  finish();
}

function fail (current, error) {
  if (error.name === 'AbortError')
    setStatus('Stopped', 'stopped');
  else
    setStatus(`The request failed: ${error.message}`, 'failed');
  finish();
}

// Reads the run again from the frame after the last one received.
function resume (current) {
  current.dropping = false;
  current.resumedAfter = current.lastId;
  current.controller = new AbortController();
  document.body.dataset.resumedAfter = String(current.lastId);
  logFrame(null, 'resume', `dropped after frame ${current.lastId}; reading the run again`);
  setStatus(`Resuming run ${current.runId} after frame ${current.lastId}`, 'streaming');

  const headers = { ...current.headers, Accept: 'text/event-stream' };
  if (current.lastId > 0)
    headers['Last-Event-ID'] = String(current.lastId);
  const url = `${routes.runs[0]}/${encodeURIComponent(current.runId)}/stream`;
  return consume(current, fetch(url, { headers, signal: current.controller.signal, cache: 'no-store' }));
}

function send (event) {
  event.preventDefault();
  // one run at a time: the button is off while one streams
  if ($('send').disabled)
    return;
  const route = routes.typed.find((candidate) => candidate.path === $('route').value);
  if (!route)
    return;

  clear();
  run = {
    route,
    headers: { Authorization: `Bearer ${$('token').value.trim()}`, 'X-Tenant-ID': $('tenant').value.trim() },
    controller: new AbortController(),
    runId: null,
    lastId: 0,
    tools: new Map(),
    ended: false,
    dropping: false,
    resumedAfter: null,
  };
  setBusy(true);
  setStatus('Sending…', 'streaming');
  const request = fetch(route.path, {
    method: 'POST',
    headers: { ...run.headers, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    body: JSON.stringify({ query: $('query').value }),
    signal: run.controller.signal,
    cache: 'no-store',
  });
  consume(run, request);
}

// Cuts the connection mid-stream; the run goes on in the gateway, which
// keeps its frames, and is read again.
function drop () {
  if (run === null || run.ended || !canResume())
    return;
  run.dropping = true;
  $('drop').disabled = true;
  setStatus(`Dropping the connection after frame ${run.lastId}…`, 'streaming');
  run.controller.abort();
}

function stop () {
  if (run === null || run.ended)
    return;
  run.dropping = false;
  run.controller.abort();
}

document.addEventListener('DOMContentLoaded', () => {
  $('ask').addEventListener('submit', send);
  $('drop').addEventListener('click', drop);
  $('stop').addEventListener('click', stop);
  loadRoutes();
});
