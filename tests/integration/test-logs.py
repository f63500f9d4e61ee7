#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The gateway's log, as the binary writes it.

  json     --log-format=json: every line of stderr is one JSON object, a
           stream failure's line carries the stable fields, and what the
           binary itself prints there (a reload refused) is a line too;
           --log-format=text, =journal where there is no journal, and a
           bad value
  flood    1,000 identical stream failures in about a second are a handful
           of lines; the next line of the kind, once the interval passed,
           says how many were not logged, and so does a line at the stop
  drain    a stream still running when a drain ends is logged as drained,
           not failed, though its client gets its shutting_down frame
  canary   secrets planted wherever the gateway holds one (bearer tokens,
           valid and not, JWTs and their secret, a provider's API key
           file, a Redis password file, a base URL's password and query,
           upstream error bodies): requests that succeed, fail and are
           refused, with G_MESSAGES_DEBUG=all; no log line, no line of
           stdout and no /metrics sample holds any of them
"""
import base64
import hashlib
import hmac
import http.client
import http.server
import json
import os
import shutil
import signal
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redis_cluster as rc  # noqa: E402

tap = rc.Tap()
DATA = os.environ.get('SYMFONIC_TEST_DATA_DIR', '')
# the stable fields of a line about a request
REQUEST_FIELDS = ('MESSAGE', 'PRIORITY', 'GLIB_DOMAIN', 'CODE_FILE', 'CODE_LINE', 'CODE_FUNC',
                  'SYMFONIC_ROUTE', 'SYMFONIC_TENANT', 'SYMFONIC_RUN_ID', 'SYMFONIC_STAGE',
                  'SYMFONIC_OUTCOME', 'SYMFONIC_STATUS', 'SYMFONIC_DURATION_MS', 'SYMFONIC_KIND')


class Gateway:
    """symfonic-gateway on a pipeline file, stdout and stderr kept apart."""

    def __init__(self, folder, text, args=(), env=None):
        self.port = rc.free_port()
        self.folder = folder
        self.path = os.path.join(folder, 'gateway.pipeline')
        with open(self.path, 'w') as f:
            f.write(text.replace('@PORT@', str(self.port)))
        self.out = open(os.path.join(folder, 'stdout'), 'w+')
        self.err = open(os.path.join(folder, 'stderr'), 'w+')
        environment = dict(os.environ)
        environment.pop('G_MESSAGES_DEBUG', None)
        environment.update(env or {})
        self.process = subprocess.Popen([rc.GATEWAY, *args, self.path], stdout=self.out, stderr=self.err,
                                        env=environment)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f'the gateway exited: {self.stderr()}')
            try:
                if self.get('/healthz')[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError('the gateway did not start')

    def connection(self, timeout=30):
        return http.client.HTTPConnection('127.0.0.1', self.port, timeout=timeout)

    def get(self, path):
        c = self.connection(5)
        try:
            c.request('GET', path)
            r = c.getresponse()
            return r.status, r.read().decode()
        finally:
            c.close()

    def post(self, path, body, headers=None, connection=None):
        """One request; its status, headers and whole body."""
        c = connection or self.connection()
        h = {'Content-Type': 'application/json'}
        h.update(headers or {})
        try:
            c.request('POST', path, body=body if isinstance(body, str) else json.dumps(body), headers=h)
            r = c.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read().decode('utf-8', 'replace')
        finally:
            if connection is None:
                c.close()

    def stderr(self):
        with open(self.err.name) as f:
            return f.read()

    def stdout(self):
        with open(self.out.name) as f:
            return f.read()

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.out.close()
        self.err.close()


def replay_pipeline(extra=''):
    return f"""[gateway]
listen=127.0.0.1:@PORT@
workers=2

[route:typed]
path=/api/v1/stream/typed
kind=typed
source=fixtures
stages=auth;errors

[source:fixtures]
type=replay
transcripts={os.path.join(DATA, 'transcripts')}
default-transcript=plain
transcript-header=X-Symfonic-Transcript
time-scale=0

[stage:auth]
type=auth
tokens-file={os.path.join(DATA, 'demo-tokens.ini')}

[stage:errors]
type=error-map
table={os.path.join(DATA, 'error-map.ini')}
{extra}"""


DEMO = {'Authorization': 'Bearer demo-token-alice', 'X-Tenant-ID': 'acme'}
FAILING = dict(DEMO, **{'X-Symfonic-Transcript': 'upstream-failure'})
# a client's W3C trace context, whose trace id every line about its request names
TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'
TRACEPARENT = '00-' + TRACE_ID + '-00f067aa0ba902b7-01'


def json_lines(text):
    """Each line of @text parsed, or the first that does not parse."""
    lines = []
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            return None, line
        if not isinstance(value, dict):
            return None, line
        lines.append(value)
    return lines, None


# --- json ------------------------------------------------------------------

def test_json(folder):
    gw = Gateway(folder, replay_pipeline(), ['--log-format=json'])
    try:
        status, headers, body = gw.post('/api/v1/stream/typed', {'query': 'hi'},
                                        dict(FAILING, traceparent=TRACEPARENT))
        tap.equal(status, 200, 'a stream that fails mid-way')
        tap.ok('event: error' in body, 'ends with its error frame')
        run_id = headers.get('x-symfonic-run-id')

        # a reload the file refuses: the binary's own words on stderr
        with open(gw.path, 'a') as f:
            f.write('\n[stage:broken]\ntype=no-such-type\n')
        gw.process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while 'reload refused' not in gw.stderr() and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        gw.stop()

    lines, bad = json_lines(gw.stderr())
    tap.ok(lines is not None, 'every line of stderr is a JSON object', bad)
    lines = lines or []
    failed = [line for line in lines if line.get('SYMFONIC_RUN_ID') == run_id
              and line.get('SYMFONIC_OUTCOME') == 'failed']
    tap.equal(len(failed), 1, 'one line says the stream failed')
    line = failed[0] if failed else {}
    missing = [name for name in REQUEST_FIELDS if name not in line]
    tap.ok(not missing, f'it has the stable fields (missing: {missing})', json.dumps(line))
    tap.equal(line.get('SYMFONIC_ROUTE'), 'typed', 'SYMFONIC_ROUTE')
    tap.equal(line.get('SYMFONIC_TRACE_ID'), TRACE_ID, 'SYMFONIC_TRACE_ID, the client\'s trace')
    tap.equal(line.get('SYMFONIC_TENANT'), 'acme', 'SYMFONIC_TENANT')
    tap.equal(line.get('SYMFONIC_STAGE'), 'stream', 'SYMFONIC_STAGE')
    tap.equal(line.get('SYMFONIC_STATUS'), 500, 'SYMFONIC_STATUS, a number')
    tap.equal(line.get('PRIORITY'), 5, 'PRIORITY, a number (notice)')
    tap.equal(line.get('GLIB_DOMAIN'), 'Symfonic', 'GLIB_DOMAIN')
    tap.ok(isinstance(line.get('SYMFONIC_DURATION_MS'), int) and line['SYMFONIC_DURATION_MS'] >= 0,
           'SYMFONIC_DURATION_MS, a number')
    tap.ok(isinstance(line.get('CODE_LINE'), int), 'CODE_LINE, a number')
    tap.ok(run_id in line.get('MESSAGE', ''), 'the message names the run')
    tap.ok('Internal server error' not in line.get('MESSAGE', ''), 'and says the real failure, not the client\'s detail')
    tap.ok(str(line.get('TIMESTAMP', '')).endswith('Z'), 'a UTC TIMESTAMP')
    tap.ok(any('reload refused' in x.get('MESSAGE', '') for x in lines), 'the refused reload is a line of its own')
    tap.ok(not any(x.get('PRIORITY') == 7 for x in lines), 'no debug line without G_MESSAGES_DEBUG')

    # text, as before
    text_folder = os.path.join(folder, 'text')
    os.mkdir(text_folder)
    gw = Gateway(text_folder, replay_pipeline(), ['--log-format=text'])
    try:
        gw.post('/api/v1/stream/typed', {'query': 'hi'}, FAILING)
        time.sleep(0.2)
    finally:
        gw.stop()
    text = gw.stderr()
    tap.ok('Symfonic-Message' in text and 'failed' in text and not text.lstrip().startswith('{'),
           '--log-format=text writes GLib\'s text', text)

    # the journal, where there is none: its lines are not lost
    if not os.path.exists('/run/systemd/journal/socket'):
        journal_folder = os.path.join(folder, 'journal')
        os.mkdir(journal_folder)
        gw = Gateway(journal_folder, replay_pipeline(), ['--log-format=journal'])
        try:
            gw.post('/api/v1/stream/typed', {'query': 'hi'}, FAILING)
            time.sleep(0.2)
        finally:
            gw.stop()
        tap.ok('Symfonic-Message' in gw.stderr() and 'failed' in gw.stderr(),
               '--log-format=journal without a journal writes text on stderr', gw.stderr())
    else:
        tap.ok(True, '--log-format=journal without a journal # SKIP this machine has a journal')

    bad = subprocess.run([rc.GATEWAY, '--log-format=xml', '--check', gw.path], capture_output=True, text=True)
    tap.equal(bad.returncode, 2, 'an unknown --log-format is refused')
    tap.ok('journal, json or text' in bad.stderr, 'saying which are known', bad.stderr)


# --- flood -----------------------------------------------------------------

N_FAILURES = 1000
CLIENTS = 8


def fail_many(gw, n):
    """@n failing streams over CLIENTS kept-alive connections at once."""
    statuses = []
    lock = threading.Lock()

    def client(count):
        c = gw.connection()
        try:
            for _ in range(count):
                status, _, _ = gw.post('/api/v1/stream/typed', {'query': 'hi'}, FAILING, connection=c)
                with lock:
                    statuses.append(status)
        finally:
            c.close()

    threads = [threading.Thread(target=client, args=(n // CLIENTS + (i < n % CLIENTS),)) for i in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return statuses


def test_flood(folder):
    gw = Gateway(folder, replay_pipeline(), ['--log-format=json'])
    try:
        started = time.monotonic()
        statuses = fail_many(gw, N_FAILURES)
        took = time.monotonic() - started
        tap.equal(statuses.count(200), N_FAILURES, f'{N_FAILURES} streams failed in {took:.2f} s')
        time.sleep(0.3)
        lines, bad = json_lines(gw.stderr())
        lines = lines or []
        kind = [x for x in lines if x.get('SYMFONIC_OUTCOME') == 'failed']
        tap.ok(1 <= len(kind) <= 3, f'a handful of lines at most: {len(kind)}',
               '\n'.join(json.dumps(x) for x in kind[:5]))
        tap.ok(len(lines) <= 5, f'and of any kind: {len(lines)}')

        # the interval over, the next failure's line counts the rest
        time.sleep(max(0.0, 10.5 - (time.monotonic() - started)))
        fail_many(gw, 1)
        time.sleep(0.3)
        # held back again, then the gateway stops
        fail_many(gw, 5)
    finally:
        gw.stop()
    lines, bad = json_lines(gw.stderr())
    tap.ok(lines is not None, 'every line of stderr is JSON', bad)
    counted = [x for x in lines or [] if x.get('SYMFONIC_OUTCOME') == 'failed' and 'SYMFONIC_SUPPRESSED' in x]
    tap.equal(len(counted), 1, 'the next line of the kind says how many were not logged')
    if counted:
        logged = len([x for x in lines if x.get('SYMFONIC_OUTCOME') == 'failed']) - 1
        tap.equal(counted[0]['SYMFONIC_SUPPRESSED'] + logged, N_FAILURES,
                  'and those it counts are all that were not logged')
        tap.ok('more like it in the last' in counted[0]['MESSAGE'], 'its message says so too', counted[0]['MESSAGE'])
    flushed = [x for x in lines or [] if 'SYMFONIC_SUPPRESSED' in x and 'SYMFONIC_RUN_ID' not in x
               and x.get('SYMFONIC_KIND', '').startswith('route typed: failed')]
    tap.equal([x['SYMFONIC_SUPPRESSED'] for x in flushed], [5], 'at the stop, a line says how many were held since')


# --- drain -----------------------------------------------------------------

def test_drain(folder):
    # fifty deltas 100 ms apart, and a drain that ends them at once
    transcripts = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'transcripts')
    text = replay_pipeline().replace('workers=2\n', 'workers=2\ndrain-seconds=0\n')
    text = text.replace(f"transcripts={os.path.join(DATA, 'transcripts')}\n", f'transcripts={transcripts}\n')
    text = text.replace('default-transcript=plain\ntranscript-header=X-Symfonic-Transcript\ntime-scale=0\n',
                        'default-transcript=long\n')
    gw = Gateway(folder, text, ['--log-format=json'])
    c = gw.connection()
    try:
        c.request('POST', '/api/v1/stream/typed', body=json.dumps({'query': 'hi'}),
                  headers=dict(DEMO, **{'Content-Type': 'application/json'}))
        r = c.getresponse()
        tap.equal(r.status, 200, 'a long stream starts')
        run_id = r.getheader('X-Symfonic-Run-ID')
        first = r.readline()
        tap.ok(first.startswith(b'id: '), 'and sends its first frame')
        gw.process.send_signal(signal.SIGTERM)
        rest = r.read().decode('utf-8', 'replace')
        gw.process.wait(20)
    finally:
        c.close()
        gw.stop()
    tap.ok('"code":"shutting_down"' in rest, 'the drain ends it with its shutting_down frame', rest[-300:])
    tap.equal(gw.process.returncode, 0, 'the gateway exits 0')

    lines, bad = json_lines(gw.stderr())
    tap.ok(lines is not None, 'every line of stderr is JSON', bad)
    mine = [x for x in lines or [] if x.get('SYMFONIC_RUN_ID') == run_id]
    drained = [x for x in mine if x.get('SYMFONIC_OUTCOME') == 'drained']
    tap.ok(len(drained) == 1, f'one line says the stream was drained: {len(drained)}',
           '\n'.join(json.dumps(x) for x in mine))
    tap.ok(not any(x.get('SYMFONIC_OUTCOME') == 'failed' for x in mine), 'none says it failed')
    line = drained[0] if drained else {}
    tap.equal(line.get('SYMFONIC_STATUS'), 503, 'with the status its client got')
    tap.equal(line.get('SYMFONIC_ROUTE'), 'typed', 'and its route')
    tap.ok('drained' in line.get('MESSAGE', '') and 'failed' not in line.get('MESSAGE', ''),
           'its message says drained', line.get('MESSAGE'))


# --- canary ----------------------------------------------------------------

def canary(what):
    return f'CANARY-{what}-{os.urandom(6).hex()}'


TOKEN = canary('bearer')
BAD_TOKEN = canary('bad-bearer')
API_KEY = canary('api-key')
REDIS_PASSWORD = canary('redis-password')
REDIS_WRONG_PASSWORD = canary('redis-wrong-password')
JWT_SECRET = canary('jwt-secret') + '-' + 'x' * 32
JWT_WRONG_SECRET = canary('jwt-wrong-secret') + '-' + 'y' * 32
URL_PASSWORD = canary('url-password')
URL_QUERY = canary('url-query')
DOWN_PASSWORD = canary('down-url-password')
HEADER_SECRET = canary('header')
BODY = canary('upstream-body')


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b'=').decode()


def jwt(secret, claims):
    header = b64url(json.dumps({'alg': 'HS256', 'typ': 'JWT'}).encode())
    payload = b64url(json.dumps(claims).encode())
    signature = hmac.new(secret.encode(), f'{header}.{payload}'.encode(), hashlib.sha256).digest()
    return f'{header}.{payload}.{b64url(signature)}'


NOW = int(time.time())
JWT_GOOD = jwt(JWT_SECRET, {'sub': 'jwt-user', 'tenants': ['acme'], 'exp': NOW + 3600})
JWT_FORGED = jwt(JWT_WRONG_SECRET, {'sub': 'jwt-user', 'tenants': ['acme'], 'exp': NOW + 3600})
JWT_EXPIRED = jwt(JWT_SECRET, {'sub': 'jwt-user', 'tenants': ['acme'], 'exp': NOW - 3600})

CANARIES = {
    'bearer token': TOKEN, 'invalid bearer token': BAD_TOKEN, 'API key': API_KEY,
    'Redis password': REDIS_PASSWORD, 'wrong Redis password': REDIS_WRONG_PASSWORD,
    'JWT secret': JWT_SECRET, 'wrong JWT secret': JWT_WRONG_SECRET, 'valid JWT': JWT_GOOD,
    'forged JWT': JWT_FORGED, 'expired JWT': JWT_EXPIRED,
    'valid JWT signature': JWT_GOOD.rsplit('.', 1)[1], 'forged JWT signature': JWT_FORGED.rsplit('.', 1)[1],
    'base URL password': URL_PASSWORD, 'base URL query': URL_QUERY, 'unreachable URL password': DOWN_PASSWORD,
    'request header': HEADER_SECRET, 'upstream body': BODY,
}


class Upstream(socketserver.ThreadingMixIn, http.server.HTTPServer):
    """An OpenAI-compatible provider and a typed runtime, which fail as the
    query asks, every failure's body holding a canary."""
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self):
        self.seen_keys = []
        self.seen_headers = []
        super().__init__(('127.0.0.1', 0), UpstreamHandler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def port(self):
        return self.server_address[1]


class UpstreamHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *args):
        pass

    def send(self, status, content_type, body, close=False):
        data = body.encode()
        self.send_response(status)
        self.send_header('Content-Type', content_type)
        self.send_header('Content-Length', str(len(data)))
        if close:
            self.send_header('Connection', 'close')
        self.end_headers()
        self.wfile.write(data)

    def stream(self, frames, cut=False):
        self.send_response(200)
        self.send_header('Content-Type', 'text/event-stream')
        self.send_header('Connection', 'close')
        self.end_headers()
        for frame in frames:
            self.wfile.write(frame.encode())
            self.wfile.flush()
        self.close_connection = True

    def do_POST(self):
        length = int(self.headers.get('Content-Length', 0))
        body = json.loads(self.rfile.read(length) or b'{}')
        self.server.seen_keys.append(self.headers.get('Authorization'))
        self.server.seen_headers.append(self.headers.get('X-Upstream-Secret'))
        if self.path.startswith('/runtime'):
            return self.runtime(body.get('query', ''))
        messages = body.get('messages', [])
        query = messages[-1]['content'] if messages else ''
        if isinstance(query, list):
            query = ''.join(part.get('text', '') for part in query)
        self.openai(query)

    def openai(self, mode):
        error = json.dumps({'error': {'message': f'leaked {BODY}', 'type': 'server_error', 'key': API_KEY}})

        def chunk(delta, finish=None):
            return 'data: ' + json.dumps({'id': 'c1', 'object': 'chat.completion.chunk', 'created': 1,
                                          'model': 'm', 'choices': [{'index': 0, 'delta': delta,
                                                                     'finish_reason': finish}]}) + '\n\n'
        if mode == 'ok':
            usage = 'data: ' + json.dumps({'id': 'c1', 'object': 'chat.completion.chunk', 'created': 1, 'model': 'm',
                                           'choices': [], 'usage': {'prompt_tokens': 3, 'completion_tokens': 2,
                                                                    'total_tokens': 5}}) + '\n\n'
            return self.stream([chunk({'role': 'assistant', 'content': 'Hello'}), chunk({}, 'stop'), usage,
                                'data: [DONE]\n\n'])
        statuses = {'e500': 500, 'e401': 401, 'e400': 400, 'e429': 429, 'e503': 503}
        if mode in statuses:
            return self.send(statuses[mode], 'application/json', error)
        if mode == 'plain':
            return self.send(200, 'text/plain', f'not a stream {BODY}')
        if mode == 'midstream':
            return self.stream([chunk({'content': 'Hel'}), f'data: {error}\n\n'])
        if mode == 'badjson':
            return self.stream([chunk({'content': 'Hel'}), f'data: {{"choices": [{BODY}\n\n'])
        if mode == 'cut':
            return self.stream([chunk({'content': 'Hel'}), f'data: {{"partial": "{BODY}'])
        return self.send(404, 'text/plain', BODY)

    def runtime(self, mode):
        if mode == 'ok':
            return self.stream(['event: TextDeltaEvent\ndata: {"text":"Hi"}\n\n',
                                'event: ConsolidationScheduledEvent\ndata: {"report":null,"graph_mutations":[]}\n\n',
                                'event: ResponseCompleteEvent\ndata: {"text":"Hi","duration_ms":1}\n\n'])
        if mode == 'e500':
            return self.send(500, 'application/json', json.dumps({'detail': BODY}))
        if mode == 'error-event':
            return self.stream([f'event: error\ndata: {json.dumps({"detail": BODY, "status": 500})}\n\n'])
        if mode == 'garbage':
            return self.stream([f'event: TextDeltaEvent\ndata: {{"text": {BODY}\n\n'])
        return self.send(404, 'text/plain', BODY)


class SecretRedis:
    """A redis-server of the test's own that asks for a password."""

    def __init__(self, folder):
        self.port = rc.free_port()
        self.process = subprocess.Popen(
            [rc.REDIS_SERVER, '--port', str(self.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
             '--dir', folder, '--requirepass', REDIS_PASSWORD, '--logfile', os.path.join(folder, 'redis.log')],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(('127.0.0.1', self.port), timeout=1) as s:
                    auth = f'*2\r\n$4\r\nAUTH\r\n${len(REDIS_PASSWORD)}\r\n{REDIS_PASSWORD}\r\n'
                    s.sendall(auth.encode() + b'*1\r\n$4\r\nPING\r\n')
                    answer = b''
                    while b'PONG' not in answer and b'-' not in answer:
                        answer += s.recv(100)
                    if b'PONG' in answer:
                        return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError('redis-server did not start')

    def stop(self):
        self.process.kill()
        self.process.wait()


def write(folder, name, text):
    with open(os.path.join(folder, name), 'w') as f:
        f.write(text)


def canary_pipeline(folder, upstream, redis):
    write(folder, 'tokens.ini', f"""[principal:canary]
token-sha256={hashlib.sha256(TOKEN.encode()).hexdigest()}
tenants=acme
""")
    write(folder, 'api.key', API_KEY + '\n')
    write(folder, 'jwt.secret', JWT_SECRET + '\n')
    write(folder, 'redis.pass', REDIS_PASSWORD + '\n')
    write(folder, 'wrong.pass', REDIS_WRONG_PASSWORD + '\n')
    write(folder, 'upstream.headers', f'X-Upstream-Secret: {HEADER_SECRET}\n')
    base = f'http://user:{URL_PASSWORD}@127.0.0.1:{upstream.port}'
    stores = ''
    meter = ''
    if redis is not None:
        stores = f"""
[store:shared]
type=redis
url=redis://127.0.0.1:{redis.port}/0
password-file=redis.pass

[store:wrong]
type=redis
url=redis://127.0.0.1:{redis.port}/0
password-file=wrong.pass
timeout-ms=200
on-failure=deny
"""
        meter = 'store=shared\n'
    wrong_route = '' if redis is None else """
[route:wrong]
path=/wrong/typed
kind=typed
source=llm
stages=auth;rl-wrong;errors

[stage:rl-wrong]
type=rate-limit
rate=100
burst=100
store=wrong
"""
    return f"""[gateway]
listen=127.0.0.1:@PORT@
workers=2

[route:typed]
path=/api/v1/stream/typed
kind=typed
source=llm
stages=auth;rate;budget;errors

[route:openai]
path=/v1
kind=openai
source=llm
stages=auth;errors

[route:runtime]
path=/runtime/typed
kind=typed
source=rt
stages=auth;errors

[route:down]
path=/down/typed
kind=typed
source=down
stages=auth;errors

[route:jwt]
path=/jwt/typed
kind=typed
source=llm
stages=jwt;errors

[route:limited]
path=/limited/typed
kind=typed
source=llm
stages=auth;tight;errors

[route:broke]
path=/broke/typed
kind=typed
source=llm
stages=auth;poor;errors
{wrong_route}
[source:llm]
type=openai
base-url={base}/v1
model=m
api-key-file=api.key
headers-file=upstream.headers
timeout=5

[source:rt]
type=runtime
url={base}/runtime?key={URL_QUERY}
headers-file=upstream.headers
timeout=5

[source:down]
type=openai
base-url=http://user:{DOWN_PASSWORD}@127.0.0.1:{rc.free_port()}/v1
model=m
api-key-file=api.key
timeout=2
{stores}
[stage:auth]
type=auth
tokens-file=tokens.ini

[stage:jwt]
type=auth
jwt-hs256-secret-file=jwt.secret

[stage:rate]
type=rate-limit
rate=1000
burst=1000
{meter}
[stage:budget]
type=budget
tokens-per-window=1000000
window-seconds=3600
reserve-tokens=100
{meter}
[stage:tight]
type=rate-limit
rate=0.01
burst=1
{meter}
[stage:poor]
type=budget
tokens-per-window=10
window-seconds=3600
reserve-tokens=10
{meter}
[stage:errors]
type=error-map
table={os.path.join(DATA, 'error-map.ini')}
"""


def test_canary(folder):
    upstream = Upstream()
    redis = None
    if rc.REDIS_SERVER is not None:
        redis = SecretRedis(folder)
    else:
        tap.note('redis-server is not installed: the Redis password is not planted')
    gw = None
    try:
        gw = Gateway(folder, canary_pipeline(folder, upstream, redis), ['--log-format=json'],
                     {'G_MESSAGES_DEBUG': 'all'})
        auth = {'Authorization': f'Bearer {TOKEN}', 'X-Tenant-ID': 'acme'}
        typed = '/api/v1/stream/typed'
        outcomes = {}

        def ask(name, path, query, headers, raw_body=None):
            status, _, body = gw.post(path, raw_body if raw_body is not None else {'query': query}, headers)
            outcomes[name] = (status, body)
            return status, body

        status, body = ask('ok', typed, 'ok', auth)
        tap.ok(status == 200 and 'ResponseCompleteEvent' in body, 'a stream through the provider completes', body)
        for mode in ('e500', 'e401', 'e400', 'e429', 'e503', 'plain', 'midstream', 'badjson', 'cut'):
            status, body = ask(mode, typed, mode, auth)
            tap.ok(status >= 400 or 'event: error' in body, f'the provider\'s {mode} fails the stream ({status})')
            tap.ok(BODY not in body and API_KEY not in body, f'{mode}: the client sees no secret', body)
        status, body = ask('provider-ok', '/v1/chat/completions', None, auth,
                           {'model': 'm', 'messages': [{'role': 'user', 'content': 'ok'}], 'stream': True})
        tap.equal(status, 200, 'the provider route answers')
        status, body = ask('provider-e500', '/v1/chat/completions', None, auth,
                           {'model': 'm', 'messages': [{'role': 'user', 'content': 'e500'}]})
        tap.ok(status >= 400, f'and fails as the provider did ({status})')
        for mode in ('ok', 'e500', 'error-event', 'garbage'):
            status, body = ask(f'runtime-{mode}', '/runtime/typed', mode, auth)
            tap.ok(status == 200 if mode == 'ok' else (status >= 400 or 'event: error' in body),
                   f'the runtime\'s {mode} ({status})')
        status, body = ask('down', '/down/typed', 'ok', auth)
        tap.ok(status >= 500, f'an upstream that cannot be reached ({status})')

        # refusals
        refusals = [
            ('invalid token', typed, {'Authorization': f'Bearer {BAD_TOKEN}', 'X-Tenant-ID': 'acme'}, 401),
            ('token as Basic', typed, {'Authorization': f'Basic {BAD_TOKEN}', 'X-Tenant-ID': 'acme'}, 401),
            ('token with junk', typed, {'Authorization': f'Bearer {BAD_TOKEN} {TOKEN}', 'X-Tenant-ID': 'acme'}, 401),
            ('wrong tenant', typed, {'Authorization': f'Bearer {TOKEN}', 'X-Tenant-ID': 'globex'}, 403),
            ('no tenant', typed, {'Authorization': f'Bearer {TOKEN}'}, 401),
            ('valid JWT', '/jwt/typed', {'Authorization': f'Bearer {JWT_GOOD}', 'X-Tenant-ID': 'acme'}, 200),
            ('forged JWT', '/jwt/typed', {'Authorization': f'Bearer {JWT_FORGED}', 'X-Tenant-ID': 'acme'}, 401),
            ('expired JWT', '/jwt/typed', {'Authorization': f'Bearer {JWT_EXPIRED}', 'X-Tenant-ID': 'acme'}, 401),
            ('broken JWT', '/jwt/typed', {'Authorization': f'Bearer {JWT_GOOD[:-10]}.{TOKEN}',
                                          'X-Tenant-ID': 'acme'}, 401),
            ('rate limit', '/limited/typed', auth, 200),
            ('rate limited', '/limited/typed', auth, 429),
            ('over budget', '/broke/typed', auth, 429),
        ]
        for name, path, headers, expected in refusals:
            status, body = ask(name, path, 'ok', headers)
            tap.equal(status, expected, name)
        status, body = ask('bad body', typed, None, auth, f'{{"query": "{TOKEN}", ')
        tap.equal(status, 400, 'a malformed body')
        if redis is not None:
            status, body = ask('wrong Redis password', '/wrong/typed', 'ok', auth)
            tap.equal(status, 429, 'a store whose password Redis refuses denies')

        tap.ok(f'Bearer {API_KEY}' in upstream.seen_keys, 'the provider got the key from the key file')
        tap.ok(HEADER_SECRET in upstream.seen_headers, 'the upstreams got the header from the headers file')

        _, metrics = gw.get('/metrics')
        time.sleep(0.5)
    finally:
        if gw is not None:
            gw.stop()
        upstream.shutdown()
        if redis is not None:
            redis.stop()

    stderr = gw.stderr()
    lines, bad = json_lines(stderr)
    tap.ok(lines is not None, 'every line of stderr is JSON', bad)
    lines = lines or []
    tap.ok(any(x.get('PRIORITY') == 7 for x in lines), 'debug lines were written (G_MESSAGES_DEBUG=all)')
    tap.ok(any(x.get('SYMFONIC_STAGE') == 'source' and 'upstream' in x.get('MESSAGE', '') for x in lines),
           'upstream failures were logged')
    tap.ok(any(x.get('SYMFONIC_OUTCOME') == 'refused' for x in lines), 'refusals were logged')
    if redis is not None:
        tap.ok(any('Redis at' in x.get('MESSAGE', '') for x in lines), 'the refused Redis password was logged')
    tap.note(f'{len(lines)} log lines, {len(metrics.splitlines())} lines of /metrics scanned')

    sources = {'stderr': stderr.splitlines(), 'stdout': gw.stdout().splitlines(), '/metrics': metrics.splitlines()}
    for name, secret in CANARIES.items():
        hits = [f'{where}: {line}' for where, text in sources.items() for line in text if secret in line]
        tap.ok(not hits, f'the {name} appears nowhere', '\n'.join(hits[:5]))


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else 'all'
    tests = {'json': test_json, 'flood': test_flood, 'drain': test_drain, 'canary': test_canary}
    for name, func in tests.items():
        if which not in ('all', name):
            continue
        folder = tempfile.mkdtemp(prefix=f'symfonic-logs-{name}-')
        try:
            func(folder)
        except Exception as e:  # noqa: BLE001 - a failed step fails the test, with its cause
            import traceback
            tap.ok(False, f'{name}: {e!r}', traceback.format_exc())
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    tap.done()


main()
