#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Redis store next to the memory store, in one run: the same gateway,
the same pipeline but for the store group's type, the same clients.

  python3 tests/bench/redis-store-compare.py BUILD_DIR [--quick] [--runs] [--instructions]

Prints, for each store, and the Redis store's figure as a ratio of the
memory store's:
  - round trips per admission and per settlement (INFO commandstats:
    EVALSHA calls, counted by Redis itself), per metering stage;
  - round trips per second of a running stream (charges, renewals), and
    with its settlement;
  - time to the first delta, p50 and p99, and what Redis adds;
  - burst: short streams per second from 64 clients at once, and the CPU
    the gateway, redis-server and the clients spent per stream (on two
    cores the three share them);
  - CPU per delta (the gateway's time on a CPU, user and system, from
    /proc/PID/task/*/schedstat) on 400 paced streams.
  - resumed runs: time to the first replayed frame of a run read again
    (Last-Event-ID) on another instance through Redis, against the memory
    store read again on the instance that ran it, p50 and p99; and what
    Redis holds for a kept run (MEMORY USAGE of its stream and hash)
    against the bytes of its frames.
The gateway runs with one worker, so that its CPU time is one thread's.

--instructions counts instead, with callgrind, the gateway's user-space
instructions per delta on paced streams (the paced phase, smaller: 2 and
then 10 streams, the difference over the 8 more), for each store: unlike
CPU time, the count does not move with what else the machine runs.
"""
import asyncio
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'integration'))
import redis_cluster as rc  # noqa: E402

ROOT = os.path.normpath(os.path.join(HERE, '..', '..'))
BUILD = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 and not sys.argv[1].startswith('-') else \
    os.path.join(ROOT, 'build')
QUICK = '--quick' in sys.argv
# only the resumed runs' figures
RUNS_ONLY = '--runs' in sys.argv
INSTRUCTIONS = '--instructions' in sys.argv
GATEWAY = os.path.join(BUILD, 'gateway', 'symfonic-gateway')
TRANSCRIPTS = os.path.join(ROOT, 'tests', 'integration', 'transcripts')
DATA = os.path.join(ROOT, 'data')


def pipeline(store_group):
    return f"""[gateway]
listen=127.0.0.1:@PORT@
workers=1

[route:typed]
path=/api/v1/stream/typed
kind=typed
source=fixtures
stages=auth;rate-limit;budget

[route:budget]
path=/budget/typed
kind=typed
source=fixtures
stages=auth;budget

[route:rate]
path=/rate/typed
kind=typed
source=fixtures
stages=auth;rate-limit

[source:fixtures]
type=replay
transcripts={TRANSCRIPTS}
default-transcript=typed
transcript-header=X-Symfonic-Transcript
time-scale=@SCALE@

[stage:auth]
type=auth
tokens-file={DATA}/demo-tokens.ini

[stage:rate-limit]
type=rate-limit
rate=1000000
burst=1000000
store=s

[stage:budget]
type=budget
tokens-per-window=1000000000000
window-seconds=3600
reserve-tokens=100
store=s

{store_group}
"""


BODY = json.dumps({'query': 'count me'}).encode()


def request(path, transcript):
    return (f'POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer demo-token-alice\r\n'
            f'X-Tenant-ID: acme\r\nContent-Type: application/json\r\nX-Symfonic-Transcript: {transcript}\r\n'
            f'Connection: close\r\nContent-Length: {len(BODY)}\r\n\r\n').encode() + BODY


async def one_stream(port, path='/api/v1/stream/typed', transcript='typed'):
    """Time to the first delta and the deltas of one stream, read to its end."""
    start = time.perf_counter()
    reader, writer = await asyncio.open_connection('127.0.0.1', port)
    writer.write(request(path, transcript))
    first = None
    deltas = 0
    status = None
    buffer = b''
    while True:
        data = await reader.read(65536)
        if not data:
            break
        buffer += data
        if status is None and b'\r\n' in buffer:
            status = int(buffer.split(b' ', 2)[1])
        n = buffer.count(b'event: TextDeltaEvent')
        if n and first is None:
            first = time.perf_counter() - start
        deltas += n
        buffer = buffer[buffer.rfind(b'\n') + 1:] if b'event: TextDeltaEvent' in buffer else buffer[-64:]
    writer.close()
    return status, first, deltas


def cpu_seconds(pid):
    """Time the process's threads spent on a CPU, to the nanosecond (the
    clock ticks of /proc/PID/stat are 10 ms, a tenth of a paced run)."""
    total = 0
    for tid in os.listdir(f'/proc/{pid}/task'):
        try:
            with open(f'/proc/{pid}/task/{tid}/schedstat') as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total / 1e9


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def runs_pipeline(store_group):
    return f"""[gateway]
listen=127.0.0.1:@PORT@
workers=1
run-store=s

[route:typed]
path=/api/v1/stream/typed
kind=typed
source=fixtures
stages=auth
resume=true

[route:runs]
path=/api/v1/runs
kind=runs
source=fixtures
stages=auth

[source:fixtures]
type=replay
transcripts={TRANSCRIPTS}
default-transcript=typed
transcript-header=X-Symfonic-Transcript
time-scale=@SCALE@

[stage:auth]
type=auth
tokens-file={DATA}/demo-tokens.ini

{store_group}
"""


class Instance:
    def __init__(self, folder, name, group, scale, text=pipeline, wrapper=(), env=None, seconds=20):
        self.port = rc.free_port()
        path = os.path.join(folder, f'{name}.pipeline')
        with open(path, 'w') as f:
            f.write(text(group).replace('@PORT@', str(self.port)).replace('@SCALE@', str(scale)))
        self.log = open(os.path.join(folder, f'{name}.log'), 'w')
        self.process = subprocess.Popen([*wrapper, GATEWAY, path], stdout=self.log, stderr=subprocess.STDOUT,
                                        env=env)
        gw = rc.Gateway.__new__(rc.Gateway)
        gw.port = self.port
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                if gw.get('/healthz')[0] == 200:
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f'{name} did not start')

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait()
        self.log.close()


async def sequential(port, n, path):
    firsts = []
    for _ in range(n):
        status, first, _ = await one_stream(port, path)
        assert status == 200, status
        firsts.append(first)
    return firsts


async def burst(port, clients, seconds):
    done = 0
    stop_at = time.perf_counter() + seconds

    async def client():
        nonlocal done
        while time.perf_counter() < stop_at:
            status, _, _ = await one_stream(port)
            assert status == 200, status
            done += 1

    start = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    return done / (time.perf_counter() - start), done


async def paced(port, streams, transcript='long'):
    results = await asyncio.gather(*(one_stream(port, transcript=transcript) for _ in range(streams)))
    assert all(r[0] == 200 for r in results), [r[0] for r in results if r[0] != 200][:3]
    return sum(r[2] for r in results)


async def run_whole(port, transcript):
    """Runs one resumable stream to its end: its run id and its body."""
    reader, writer = await asyncio.open_connection('127.0.0.1', port)
    writer.write(request('/api/v1/stream/typed', transcript))
    data = await reader.read()
    writer.close()
    head, _, body = data.partition(b'\r\n\r\n')
    assert head.startswith(b"HTTP/1.1 200"), data[:300]
    run_id = [line.split(b': ', 1)[1].decode() for line in head.split(b'\r\n')
              if line.lower().startswith(b'x-symfonic-run-id:')][0]
    # the chunked body's frames, without the chunk lines
    frames = b''
    while body:
        size, _, body = body.partition(b'\r\n')
        n = int(size, 16)
        if n == 0:
            break
        frames += body[:n]
        body = body[n + 2:]
    return run_id, frames


async def first_replayed(port, run_id, after):
    """Time from the request to the first replayed frame of a run read again."""
    start = time.perf_counter()
    reader, writer = await asyncio.open_connection('127.0.0.1', port)
    writer.write((f'GET /api/v1/runs/{run_id}/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n'
                  f'Authorization: Bearer demo-token-alice\r\nX-Tenant-ID: acme\r\n'
                  f'Last-Event-ID: {after}\r\nConnection: close\r\n\r\n').encode())
    buffer = b''
    first = None
    while True:
        data = await reader.read(65536)
        if not data:
            break
        buffer += data
        if first is None and f'id: {after + 1}\n'.encode() in buffer:
            first = time.perf_counter() - start
    writer.close()
    assert buffer.startswith(b'HTTP/1.1 200'), buffer[:100]
    return first


def resumed_runs(folder, redis, groups, n_runs):
    """Runs on one instance, read again from their second frame: on the
    same instance from the memory store, on another through Redis."""
    firsts = {'memory': [], 'redis': []}
    # one principal's runs, more than a memory store keeps by default
    groups = dict(groups, memory=groups['memory'] + 'max-runs-per-principal=100000\nmax-runs-per-tenant=100000\n')
    memory = Instance(folder, 'memory-runs', groups['memory'], 0, runs_pipeline)
    producer = Instance(folder, 'redis-runs-a', groups['redis'], 0, runs_pipeline)
    resumer = Instance(folder, 'redis-runs-b', groups['redis'], 0, runs_pipeline)
    # taken in turns, one of each, so that what else the machine does
    # falls on both alike; the first twenty warm up
    for i in range(n_runs + 20):
        for kind, run_on, read_on in (('memory', memory, memory), ('redis', producer, resumer)):
            run_id, _ = asyncio.run(run_whole(run_on.port, 'long'))
            first = asyncio.run(first_replayed(read_on.port, run_id, 1))
            if i >= 20:
                firsts[kind].append(first * 1000)
    for instance in (memory, producer, resumer):
        instance.stop()
    for kind, values in firsts.items():
        where = 'another instance, through Redis' if kind == 'redis' else 'the same instance'
        print(f'{kind:6}: first replayed frame p50 {percentile(values, 50):.3f} ms p99 {percentile(values, 99):.3f} ms '
              f'({n_runs} runs read again on {where})')
    m, r = firsts['memory'], firsts['redis']
    print(f'resumed run, redis vs memory: first replayed frame {percentile(r, 50) - percentile(m, 50):+.3f} ms p50, '
          f'{percentile(r, 99) - percentile(m, 99):+.3f} ms p99 (target: at most +1 ms at p99)')

    # what a kept run costs Redis, by the size of its frames
    gw = Instance(folder, 'runs-memory', groups['redis'], 0, runs_pipeline)
    for transcript in ('typed', 'long', 'wordy'):
        ratios = []
        sizes = []
        for _ in range(10):
            run_id, frames = asyncio.run(run_whole(gw.port, transcript))
            time.sleep(0.05)
            used = sum(redis.call('MEMORY', 'USAGE', f'symfonic:{{acme}}:{kind}:{run_id}', 'SAMPLES', '0')
                       for kind in ('frames', 'run'))
            ratios.append(used / len(frames))
            sizes.append((len(frames), frames.count(b'\n\n'), used))
        size, count, used = sizes[-1]
        print(f'kept run ({transcript}.jsonl: {count} frames, {size} bytes): Redis holds {used} bytes, '
              f'{statistics.mean(ratios):.2f}x its frames (stream and hash, MEMORY USAGE; target: at most 1.5x)')
    gw.stop()


def evalsha(redis):
    stats = redis.commandstats()
    return stats.get('evalsha', 0) + stats.get('eval', 0)


def instructions(folder, kind, group, streams):
    """User-space instructions of a gateway under callgrind that served
    @streams paced streams, and the deltas it sent."""
    out = os.path.join(folder, f'callgrind.{kind}.{streams}.out')
    # as the gateway would set it itself, by restarting, which callgrind
    # cannot follow
    env = dict(os.environ, G_SLICE='always-malloc')
    gw = Instance(folder, f'{kind}-callgrind', group, 1,
                  wrapper=('valgrind', '--tool=callgrind', f'--callgrind-out-file={out}'), env=env, seconds=120)
    asyncio.run(sequential(gw.port, 3, '/api/v1/stream/typed'))
    deltas = asyncio.run(paced(gw.port, streams, transcript='long')) if streams else 0
    gw.stop()
    with open(out) as f:
        for line in f:
            if line.startswith(('summary:', 'totals:')):
                return int(line.split()[1]), deltas
    raise RuntimeError('callgrind wrote no total')


def count_instructions(folder, groups):
    if shutil.which('valgrind') is None:
        print('valgrind is not installed: no instructions to count (apt-get install valgrind)')
        return
    # under callgrind a command takes longer than the usual deadline
    groups = dict(groups, redis=groups['redis'].replace('timeout-ms=50', 'timeout-ms=2000'))
    per_delta = {}
    for kind, group in groups.items():
        few, few_deltas = instructions(folder, kind, group, 2)
        many, many_deltas = instructions(folder, kind, group, 10)
        per_delta[kind] = (many - few) / (many_deltas - few_deltas)
        print(f'{kind:6}: {per_delta[kind]:.0f} instructions per delta (callgrind, paced streams: 10 less 2)')
    print(f'redis vs memory: instructions per delta {per_delta["redis"] / per_delta["memory"]:.2f}x')


def main():
    if rc.REDIS_SERVER is None:
        print('redis-server is not installed: nothing to compare (apt-get install redis-server)')
        return 0
    folder = tempfile.mkdtemp(prefix='symfonic-bench-')
    redis = rc.Redis(folder)
    groups = {
        'memory': '[store:s]\ntype=memory\n',
        'redis': f'[store:s]\ntype=redis\nurl={redis.url}\ntimeout-ms=50\n',
    }
    n_seq = 100 if QUICK else 1000
    burst_seconds = 2 if QUICK else 5
    n_paced = 100 if QUICK else 400
    figures = {}
    try:
        if RUNS_ONLY:
            resumed_runs(folder, redis, groups, 100 if QUICK else 500)
            return 0
        if INSTRUCTIONS:
            count_instructions(folder, groups)
            return 0
        # round trips, counted by Redis
        gw = Instance(folder, 'rt', groups['redis'], 0)
        asyncio.run(sequential(gw.port, 5, '/api/v1/stream/typed'))
        rt = {}
        for path in ('/rate/typed', '/budget/typed'):
            before = evalsha(redis)
            asyncio.run(sequential(gw.port, 100, path))
            rt[path] = (evalsha(redis) - before) / 100
        gw.stop()
        # a paced stream's charges and renewals: long.jsonl is 5 s of
        # deltas, 100 ms apart
        gw = Instance(folder, 'paced-rt', groups['redis'].replace('timeout-ms=50', 'timeout-ms=50\nlease-ttl-ms=3000'),
                      1)
        before = evalsha(redis)
        started = time.perf_counter()
        asyncio.run(paced(gw.port, 10, transcript='long'))
        took = time.perf_counter() - started
        calls = evalsha(redis) - before
        gw.stop()
        # the rate limit's decision, the reservation and the settlement are
        # three of each stream's calls; the streams ran side by side
        mid = (calls - 3 * 10) / 10 / took
        settled = (calls - 2 * 10) / 10 / took
        print(f'round trips per admission: rate limit {rt["/rate/typed"]:.2f} (decision only), '
              f'budget {rt["/budget/typed"]:.2f} (reserve + settle: admission 1, settlement 1)')
        print(f'mid-stream metering: {mid:.2f} round trips per stream-second, {settled:.2f} with the settlement '
              f'(10 streams of 5 s side by side, lease TTL 3 s, {took:.2f} s run)')

        for kind, group in groups.items():
            gw = Instance(folder, f'{kind}-fast', group, 0)
            asyncio.run(sequential(gw.port, 20, '/api/v1/stream/typed'))
            firsts = asyncio.run(sequential(gw.port, n_seq, '/api/v1/stream/typed'))
            # what each stage's decision adds on its own: the rate limit's
            # and the budget's round trips are one after the other
            by_route = {path: percentile(asyncio.run(sequential(gw.port, n_seq // 2, path)), 50) * 1000
                        for path in ('/rate/typed', '/budget/typed')}
            gw_before, redis_before = cpu_seconds(gw.process.pid), cpu_seconds(redis.process.pid)
            client_before = time.process_time()
            rate, done = asyncio.run(burst(gw.port, 64, burst_seconds))
            gw_cpu = (cpu_seconds(gw.process.pid) - gw_before) / done * 1e6
            redis_cpu = (cpu_seconds(redis.process.pid) - redis_before) / done * 1e6
            client_cpu = (time.process_time() - client_before) / done * 1e6
            gw.stop()
            gw = Instance(folder, f'{kind}-paced', group, 1)
            cpu_before = cpu_seconds(gw.process.pid)
            deltas = asyncio.run(paced(gw.port, n_paced))
            cpu = cpu_seconds(gw.process.pid) - cpu_before
            gw.stop()
            figures[kind] = {
                'p50': percentile(firsts, 50) * 1000, 'p99': percentile(firsts, 99) * 1000,
                'burst': rate, 'cpu_us_per_delta': cpu / deltas * 1e6, 'deltas': deltas,
                'burst_gw_us': gw_cpu, 'burst_redis_us': redis_cpu, 'burst_client_us': client_cpu,
                'p50_rate': by_route['/rate/typed'], 'p50_budget': by_route['/budget/typed'],
            }
            f = figures[kind]
            print(f'{kind:6}: first delta p50 {f["p50"]:.3f} ms p99 {f["p99"]:.3f} ms ({n_seq} sequential, '
                  f'rate limit + budget); burst {f["burst"]:.0f} streams/s (64 clients; CPU per stream: gateway '
                  f'{f["burst_gw_us"]:.0f} us, redis-server {f["burst_redis_us"]:.0f} us, clients '
                  f'{f["burst_client_us"]:.0f} us); '
                  f'CPU {f["cpu_us_per_delta"]:.2f} us/delta ({n_paced} paced streams, {deltas} deltas)')
        for kind, f in figures.items():
            print(f'{kind:6}: first delta p50 by stages: rate limit {f["p50_rate"]:.3f} ms, budget '
                  f'{f["p50_budget"]:.3f} ms, both {f["p50"]:.3f} ms')
        resumed_runs(folder, redis, groups, 100 if QUICK else 500)

        m, r = figures['memory'], figures['redis']
        print(f'redis vs memory: first delta +{r["p50"] - m["p50"]:.3f} ms p50, +{r["p99"] - m["p99"]:.3f} ms p99; '
              f'burst {r["burst"] / m["burst"]:.2f}x; CPU per delta {r["cpu_us_per_delta"] / m["cpu_us_per_delta"]:.2f}x')
    finally:
        redis.stop()
        shutil.rmtree(folder, ignore_errors=True)
    return 0


sys.exit(main())
