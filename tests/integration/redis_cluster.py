# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the Redis-store tests share: a redis-server of their own, gateway
instances as separate processes on one pipeline file, and plain HTTP
clients. Standard library only."""
import hashlib
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

SOURCE_DIR = os.environ.get('G_TEST_SRCDIR', os.path.join(os.path.dirname(__file__), '..'))
TRANSCRIPTS = os.path.join(SOURCE_DIR, 'integration', 'transcripts')
GATEWAY = os.environ.get('SYMFONIC_GATEWAY', 'symfonic-gateway')
REDIS_SERVER = shutil.which('redis-server')
REDIS_CLI = shutil.which('redis-cli')

TOKEN = 'demo-token-alice'
TENANT = 'acme'
QUERY = 'count me'
# "count me": 8 bytes, 2 estimated tokens
QUERY_TOKENS = 2


class Tap:
    """TAP for meson: one line per check, a plan at the end."""

    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, condition, name, detail=''):
        self.n += 1
        if condition:
            print(f'ok {self.n} - {name}', flush=True)
        else:
            self.failed += 1
            print(f'not ok {self.n} - {name}', flush=True)
            if detail:
                for line in str(detail).splitlines():
                    print(f'# {line}', flush=True)
        return condition

    def equal(self, got, want, name):
        return self.ok(got == want, f'{name}: {got!r}', f'expected {want!r}, got {got!r}')

    def note(self, text):
        print(f'# {text}', flush=True)

    def skip_all(self, why):
        print(f'1..0 # SKIP {why}', flush=True)
        sys.exit(0)

    def done(self):
        print(f'1..{self.n}', flush=True)
        sys.exit(1 if self.failed else 0)


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def estimate_tokens(n_bytes):
    return n_bytes // 4 + (n_bytes % 4 != 0)


class Redis:
    """A redis-server on a loopback port of its own, in a folder of its own."""

    def __init__(self, folder):
        self.folder = folder
        self.port = free_port()
        self.process = None
        self.start()

    def start(self):
        self.process = subprocess.Popen(
            [REDIS_SERVER, '--port', str(self.port), '--bind', '127.0.0.1', '--save', '',
             '--appendonly', 'no', '--dir', self.folder, '--logfile', os.path.join(self.folder, 'redis.log')],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if self.call('PING') == 'PONG':
                    return
            except OSError:
                pass
            time.sleep(0.02)
        raise RuntimeError('redis-server did not start')

    @property
    def url(self):
        return f'redis://127.0.0.1:{self.port}/0'

    def call(self, *args):
        """One command over RESP2, on a connection of its own."""
        with socket.create_connection(('127.0.0.1', self.port), timeout=5) as s:
            out = f'*{len(args)}\r\n'.encode()
            for a in args:
                a = str(a).encode()
                out += b'$%d\r\n%s\r\n' % (len(a), a)
            s.sendall(out)
            f = s.makefile('rb')
            return self._read(f)

    def _read(self, f):
        line = f.readline()
        kind, rest = line[:1], line[1:-2]
        if kind == b'+':
            return rest.decode()
        if kind == b'-':
            raise RuntimeError(rest.decode())
        if kind == b':':
            return int(rest)
        if kind == b'$':
            n = int(rest)
            if n < 0:
                return None
            data = f.read(n + 2)[:-2]
            return data.decode('utf-8', 'replace')
        if kind == b'*':
            n = int(rest)
            return None if n < 0 else [self._read(f) for _ in range(n)]
        raise RuntimeError(f'unexpected reply {line!r}')

    def commandstats(self):
        stats = {}
        for line in self.call('INFO', 'commandstats').splitlines():
            if line.startswith('cmdstat_'):
                name, fields = line[len('cmdstat_'):].split(':', 1)
                stats[name] = int(dict(f.split('=') for f in fields.split(','))['calls'])
        return stats

    def signal(self, signum):
        self.process.send_signal(signum)

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.kill()
            self.process.wait()
        self.process = None


class Gateway:
    """One symfonic-gateway process on a pipeline file, on a port of its own."""

    def __init__(self, folder, name, text):
        self.port = free_port()
        self.path = os.path.join(folder, f'{name}.pipeline')
        with open(self.path, 'w') as f:
            f.write(text.replace('@PORT@', str(self.port)))
        self.log = open(os.path.join(folder, f'{name}.log'), 'w')
        self.process = subprocess.Popen([GATEWAY, self.path], stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f'{name} exited: {open(self.log.name).read()}')
            try:
                if self.get('/healthz')[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f'{name} did not start')

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

    def metric(self, name, labels):
        """The value of one sample of /metrics, or None."""
        _, text = self.get('/metrics')
        want = name + '{' + labels + '}'
        for line in text.splitlines():
            if line.startswith(want + ' '):
                return float(line.split()[-1])
        return None

    def kill(self, signum=signal.SIGKILL):
        if self.process.poll() is None:
            self.process.send_signal(signum)
            self.process.wait()

    def stop(self):
        self.kill(signal.SIGTERM)
        self.log.close()


class Result:
    def __init__(self):
        self.status = None
        self.headers = {}
        self.body = ''
        self.text = ''
        self.text_bytes = 0
        self.terminal = None
        self.error = None
        self.head_after = None
        self.frames = []


def stream(gateway, path='/api/v1/stream/typed', headers=None, query=QUERY, timeout=60, on_head=None):
    """POSTs one query and reads the typed stream to its end; the text of
    every delta and the terminal frame's kind."""
    result = Result()
    c = gateway.connection(timeout)
    h = {'Authorization': f'Bearer {TOKEN}', 'X-Tenant-ID': TENANT, 'Content-Type': 'application/json'}
    h.update(headers or {})
    start = time.monotonic()
    try:
        c.request('POST', path, body=json.dumps({'query': query}), headers=h)
        r = c.getresponse()
        result.head_after = time.monotonic() - start
        result.status = r.status
        result.headers = {k.lower(): v for k, v in r.getheaders()}
        if on_head is not None:
            on_head(result)
        if r.status != 200:
            result.body = r.read().decode()
            return result
        event = None
        for raw in r:
            line = raw.decode().rstrip('\n')
            if line.startswith('event: '):
                event = line[7:]
            elif line.startswith('data: '):
                data = json.loads(line[6:])
                result.frames.append((event, data))
                if event in ('TextDeltaEvent', 'ThinkingDeltaEvent'):
                    result.text += data['text']
                    result.text_bytes += len(data['text'].encode())
                elif event in ('ResponseCompleteEvent', 'error'):
                    result.terminal = event
            elif line == '':
                event = None
    except Exception as e:  # noqa: BLE001 - a broken stream is a result
        result.error = e
    finally:
        c.close()
    return result


def run_concurrently(n, func):
    """Runs func(i) on n threads at once; their results, in order."""
    results = [None] * n
    barrier = threading.Barrier(n)

    def body(i):
        try:
            barrier.wait(30)
        except threading.BrokenBarrierError:
            pass
        results[i] = func(i)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def billed(result):
    """What the budget stage bills a stream it let begin: the query's
    estimate plus the estimate of the text that reached its client."""
    return QUERY_TOKENS + estimate_tokens(result.text_bytes)


def replay_pipeline(transcript, time_scale, stages, groups, route_lines=''):
    return f"""[gateway]
listen=127.0.0.1:@PORT@
workers=2

[route:typed]
path=/api/v1/stream/typed
kind=typed
source=fixtures
stages={stages}
{route_lines}
[source:fixtures]
type=replay
transcripts={TRANSCRIPTS}
default-transcript={transcript}
transcript-header=X-Symfonic-Transcript
time-scale={time_scale}

[stage:auth]
type=auth
tokens-file={os.path.join(os.environ.get('SYMFONIC_TEST_DATA_DIR', ''), 'demo-tokens.ini')}

{groups}
"""


class Cluster:
    """A redis-server and the gateways of one test, stopped at its end."""

    def __init__(self):
        self.folder = tempfile.mkdtemp(prefix='symfonic-redis-')
        self.redis = Redis(self.folder)
        self.gateways = []

    def start(self, n, text):
        self.gateways = [Gateway(self.folder, f'gw{i}', text) for i in range(n)]
        return self.gateways

    def close(self):
        for g in self.gateways:
            g.stop()
        self.redis.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


def tenant_key(kind, key, prefix='symfonic:'):
    """The Redis key the store keeps a stage's TENANT key under."""
    return f'{prefix}{{{TENANT}}}:{kind}:{key}'


def sha256_hex(text):
    return hashlib.sha256(text.encode()).hexdigest()
