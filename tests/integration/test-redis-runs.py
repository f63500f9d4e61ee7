#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Resumable runs in Redis, read on any instance: three symfonic-gateway
processes A, B, C on direct ports, one pipeline file with run-store=shared
([store:shared] type=redis), and a redis-server of the test's own.

  cuts     a run started on A, its client cut at 20 seeded random points
           and resumed on B and C in turn, with Last-Event-ID: every
           frame exactly once, the bytes those of the run read whole, and
           those of an uninterrupted run of the same transcript (its
           duration aside)
  kill     kill -9 of A mid-run while a reader follows it on B: the reader
           gets the frames A wrote, then exactly one error frame, within
           5 s of the kill
  owners   another tenant's and another principal's reader: 404, as for
           a run that never was
  trim     a run past resume-bytes: reading from before its first kept
           frame is 410; from within, the rest
  outage   Redis stopped mid-run: the run's client gets its whole stream;
           a reader afterwards gets the frames that reached Redis, then
           the run's one error frame
  clock    a run on A whose client left, resume-seconds 2: a reader on B
           and later one on C restart its clock, so it goes on past the
           2 s; nobody back for 2 s after the last one left, it ends with
           its error frame
  reader-dies  as clock, the reader on C killed (kill -9) while it
           follows the run: C no longer vouches for it, and the run ends
           with its error frame within seconds, not at its own end
"""
import json
import os
import random
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redis_cluster as rc  # noqa: E402

tap = rc.Tap()

ALICE = {'Authorization': 'Bearer demo-token-alice', 'X-Tenant-ID': 'acme'}
LEASE_TTL_MS = 2000
ERROR_FRAME = 'event: error\ndata: {"detail":"Internal server error","status":503,"code":"upstream_unavailable"}\n\n'
FRAME_ID = re.compile(rb'^id: (\d+)\n', re.M)


def pipeline(cluster, transcript, time_scale, resume_lines='', timeout_ms=200):
    groups = f"""[store:shared]
type=redis
url={cluster.redis.url}
timeout-ms={timeout_ms}
lease-ttl-ms={LEASE_TTL_MS}

[route:runs]
path=/api/v1/runs
kind=runs
source=fixtures
stages=auth
"""
    text = rc.replay_pipeline(transcript, time_scale, 'auth', groups, 'resume=true\n' + resume_lines)
    return text.replace('[gateway]\n', '[gateway]\nrun-store=shared\n', 1)


def frames_of(body):
    """The whole frames of a body, and the bytes past the last one."""
    frames = []
    start = 0
    while True:
        end = body.find(b'\n\n', start)
        if end < 0:
            return frames, body[start:]
        frames.append(body[start:end + 2])
        start = end + 2


def frame_id(frame):
    m = FRAME_ID.match(frame)
    return int(m.group(1)) if m else None


def start_run(gateway, transcript=None):
    c = gateway.connection()
    headers = dict(ALICE, **{'Content-Type': 'application/json'})
    if transcript:
        headers['X-Symfonic-Transcript'] = transcript
    c.request('POST', '/api/v1/stream/typed', body=json.dumps({'query': rc.QUERY}), headers=headers)
    r = c.getresponse()
    return c, r


def read_run(gateway, run_id, last_event_id=None, headers=None, limit=None, timeout=30):
    """GET the run's stream; reads all of it, or closes once past `limit`
    bytes. Returns (status, body bytes, closed_early)."""
    c = gateway.connection(timeout)
    h = dict(headers or ALICE)
    if last_event_id is not None:
        h['Last-Event-ID'] = str(last_event_id)
    try:
        c.request('GET', f'/api/v1/runs/{run_id}/stream', headers=h)
        r = c.getresponse()
        if r.status != 200:
            return r.status, r.read(), False
        body = b''
        while True:
            chunk = r.read1(65536)
            if not chunk:
                return 200, body, False
            body += chunk
            if limit is not None and len(body) >= limit:
                return 200, body, True
    finally:
        c.close()


def mask_duration(data):
    return re.sub(rb'"duration_ms":\d+', b'"duration_ms":0', data)


# --- cuts ----------------------------------------------------------------

CUTS = 20
SEED = 20240611


def test_cuts(cluster):
    # long.jsonl: fifty deltas 100 ms apart, run at half that pace
    a, b, c = cluster.start(3, pipeline(cluster, 'long', 0.5))
    rng = random.Random(SEED)

    # the reference: the same transcript read whole by its own client
    conn, r = start_run(a)
    reference = r.read()
    conn.close()
    ref_frames, rest = frames_of(reference)
    tap.ok(rest == b'' and len(ref_frames) > 50, f'an uninterrupted run: {len(ref_frames)} frames')

    # the cut points, in bytes of the run's whole body, seeded: each inside
    # a frame of its own, so that each leaves a frame half read
    offsets = [0]
    for f in ref_frames:
        offsets.append(offsets[-1] + len(f))
    points = [offsets[i] + rng.randrange(1, len(ref_frames[i]))
              for i in sorted(rng.sample(range(len(ref_frames) - 1), CUTS))]
    tap.note(f'cut points (seed {SEED}): {points}')

    conn, r = start_run(a)
    run_id = r.getheader('X-Symfonic-Run-ID')
    got = b''
    while len(got) < points[0]:
        chunk = r.read1(points[0] - len(got))
        if not chunk:
            break
        got += chunk
    conn.close()
    frames, _ = frames_of(got)
    received = list(frames)
    last = frame_id(frames[-1]) if frames else 0
    where = []
    for i, point in enumerate(points[1:] + [None]):
        gateway = (b, c)[i % 2]
        # what the client still needs before its next cut, whole frames
        want = None if point is None else max(point - sum(len(f) for f in received), 1)
        status, body, early = read_run(gateway, run_id, last_event_id=last or None, limit=want)
        # a cut right after the terminal: the reader has every frame, and
        # a 204 without a body says so
        if status == 204 and body == b'' and received and b'event: ResponseCompleteEvent\n' in received[-1]:
            where.append('BC'[i % 2])
            break
        if status != 200:
            tap.ok(False, f'resume {i + 1} on {"BC"[i % 2]}: {status} {body[:200]!r}')
            return
        frames, _ = frames_of(body)
        received += frames
        tap.note(f'resume {i + 1} on {"BC"[i % 2]} after {last}: {len(frames)} frames')
        if frames:
            last = frame_id(frames[-1])
        where.append('BC'[i % 2])
        if not early:
            break
    tap.note(f'resumed {len(where)} times on {"".join(where)}')
    tap.equal(len(where), CUTS, 'resumes, alternately on B and C')

    ids = [frame_id(f) for f in received]
    tap.equal(ids, list(range(1, len(ids) + 1)), 'every frame exactly once, in order')
    whole = b''.join(received)
    status, replay, _ = read_run(b, run_id)
    tap.ok(status == 200 and whole == replay, 'the bytes resumed are the bytes of the run read whole')
    tap.ok(mask_duration(whole) == mask_duration(reference),
           'the bytes resumed are those of an uninterrupted run (its duration aside)')


# --- kill ----------------------------------------------------------------

def test_kill(cluster):
    # paced at 100 ms a frame: A dies around frame 20 of 51
    a, b, _ = cluster.start(3, pipeline(cluster, 'long', 1))
    conn, r = start_run(a)
    run_id = r.getheader('X-Symfonic-Run-ID')
    r.read1(10)
    conn.close()
    time.sleep(0.3)

    result = {}

    def follow():
        status, body, _ = read_run(b, run_id, timeout=30)
        result['status'] = status
        result['body'] = body
        result['at'] = time.monotonic()

    import threading
    t = threading.Thread(target=follow)
    t.start()
    time.sleep(1.7)
    a.kill(signal.SIGKILL)
    killed = time.monotonic()
    t.join(30)
    took = result.get('at', killed + 99) - killed
    tap.equal(result.get('status'), 200, 'the reader on B')
    body = result.get('body', b'')
    frames, rest = frames_of(body)
    ids = [frame_id(f) for f in frames]
    tap.ok(len(ids) > 5 and ids == list(range(1, len(ids) + 1)),
           f'the frames A wrote, each once: 1..{ids[-1] if ids else 0}')
    errors = [f for f in frames if b'\nevent: error\n' in f]
    tap.equal(len(errors), 1, 'exactly one error frame')
    tap.ok(frames and frames[-1] == f'id: {len(frames)}\n{ERROR_FRAME}'.encode(),
           f'the error frame comes last, after the last frame: {frames[-1] if frames else None!r}')
    tap.ok(not any(b'ResponseCompleteEvent' in f for f in frames), 'no success terminal')
    tap.ok(took <= 5.0, f'the error frame came {took:.2f} s after the kill (lease {LEASE_TTL_MS} ms)')

    # a reader that comes back later gets the same end
    status, again, _ = read_run(b, run_id, last_event_id=ids[-3] if len(ids) > 2 else None)
    tap.ok(status == 200 and len(frames) > 2 and again == frames[-2] + frames[-1],
           'a later reader gets the same last frame and error frame')


# --- owners --------------------------------------------------------------

def test_owners(cluster):
    a, b, c = cluster.start(3, pipeline(cluster, 'typed', 0))
    conn, r = start_run(a)
    run_id = r.getheader('X-Symfonic-Run-ID')
    r.read()
    conn.close()
    status, body, _ = read_run(b, run_id)
    tap.equal(status, 200, "the owner's reader")
    for name, headers in [('another tenant of the same principal',
                           {'Authorization': 'Bearer demo-token-alice', 'X-Tenant-ID': 'demo'}),
                          ('another principal of the same tenant',
                           {'Authorization': 'Bearer demo-token-admin', 'X-Tenant-ID': 'acme'}),
                          ('another principal and tenant',
                           {'Authorization': 'Bearer demo-token-bob', 'X-Tenant-ID': 'globex'})]:
        status, body, _ = read_run(c, run_id, headers=headers)
        tap.equal(status, 404, name)
        tap.equal(json.loads(body).get('code'), 'not_found', f'{name}: code')
    status, body, _ = read_run(c, '00000000-0000-4000-8000-000000000000')
    tap.equal(status, 404, 'a run that never was')
    keys = cluster.redis.call('KEYS', '*')
    tap.ok(all('{acme}' in k for k in keys), f"the run's keys are under its tenant's tag: {keys}")


# --- trim ----------------------------------------------------------------

def test_trim(cluster):
    # 51 frames of about 50 bytes, the last 300: 1024 bytes keep the last dozen or so
    a, b, _ = cluster.start(3, pipeline(cluster, 'long', 0.05, 'resume-bytes=1024\n'))
    before = cluster.redis.commandstats()
    conn, r = start_run(a)
    run_id = r.getheader('X-Symfonic-Run-ID')
    whole = r.read()
    conn.close()
    frames, _ = frames_of(whole)
    time.sleep(0.2)
    after = cluster.redis.commandstats()
    calls = {k: after.get(k, 0) - before.get(k, 0) for k in ('xadd', 'xtrim', 'evalsha', 'eval', 'hset')}
    tap.note(f'Redis calls for a run of {len(frames)} frames: {calls}')
    tap.equal(calls['xadd'], len(frames) + 1, 'one XADD per frame, and one for the end')
    tap.ok(calls['xtrim'] >= 1, 'frames past resume-bytes trimmed (XTRIM MINID)')
    status, body, _ = read_run(b, run_id, last_event_id=1)
    tap.equal(status, 410, 'from before the first frame kept')
    tap.equal(json.loads(body).get('code'), 'gone', 'code')
    status, body, _ = read_run(b, run_id, last_event_id=len(frames) - 5)
    tap.equal(status, 200, 'from within the frames kept')
    tap.ok(body == b''.join(frames[-5:]), 'the last five frames, as sent')
    tap.ok(cluster.redis.call('XLEN', f'symfonic:{{acme}}:frames:{run_id}') <= 22,
           'Redis holds no more than the byte cap keeps (and the end)')
    status, body, _ = read_run(b, run_id, last_event_id=len(frames) + 1)
    tap.equal(status, 400, 'past the last frame')


# --- outage --------------------------------------------------------------

def test_outage(cluster):
    a, b, _ = cluster.start(3, pipeline(cluster, 'long', 0.6, timeout_ms=100))
    conn, r = start_run(a)
    run_id = r.getheader('X-Symfonic-Run-ID')
    got = r.read1(10)
    time.sleep(0.8)
    cluster.redis.signal(signal.SIGSTOP)
    try:
        time.sleep(1.0)
    finally:
        cluster.redis.signal(signal.SIGCONT)
    got += r.read()
    conn.close()
    frames, rest = frames_of(got)
    tap.ok(rest == b'' and len(frames) > 50 and b'ResponseCompleteEvent' in frames[-1],
           f"the run's client got its whole stream through the outage: {len(frames)} frames")
    time.sleep(0.5)
    status, body, _ = read_run(b, run_id)
    kept, _ = frames_of(body)
    tap.equal(status, 200, 'a reader afterwards')
    n = len(kept) - 1
    tap.ok(0 < n < len(frames) - 1 and kept[:n] == frames[:n], f'the frames that reached Redis, as sent: 1..{n}')
    tap.ok(kept and kept[-1] == f'id: {n + 1}\n{ERROR_FRAME}'.encode(), f'then one error frame: {kept[-1]!r}')


# --- clock ---------------------------------------------------------------

def read_for(gateway, run_id, last_event_id, until):
    """Reads the run's stream until `until` (monotonic), then leaves.
    Returns (status, body, ended)."""
    c = gateway.connection(10)
    h = dict(ALICE, **{'Last-Event-ID': str(last_event_id)})
    try:
        c.request('GET', f'/api/v1/runs/{run_id}/stream', headers=h)
        r = c.getresponse()
        if r.status != 200:
            return r.status, r.read(), True
        body = b''
        while time.monotonic() < until:
            chunk = r.read1(65536)
            if not chunk:
                return 200, body, True
            body += chunk
        return 200, body, False
    finally:
        c.close()


def sleep_until(t):
    time.sleep(max(0.0, t - time.monotonic()))


def test_clock(cluster):
    # long.jsonl at twice its pace: fifty deltas 200 ms apart, 10 s
    a, b, c = cluster.start(3, pipeline(cluster, 'long', 2, 'resume-seconds=2\n'))
    conn, r = start_run(a)
    run_id = r.getheader('X-Symfonic-Run-ID')
    got = b''
    while len(frames_of(got)[0]) < 2:
        got += r.read1(4096)
    conn.close()
    t0 = time.monotonic()
    last = frame_id(frames_of(got)[0][-1])

    # past the 2 s it had when its client left, on another instance
    sleep_until(t0 + 1.5)
    status, body, ended = read_for(b, run_id, last, t0 + 3.0)
    frames, _ = frames_of(body)
    tap.ok(status == 200 and not ended and frames and not any(b'\nevent: error\n' in f for f in frames),
           f'a reader on B from 1.5 s to 3 s: the run goes on ({len(frames)} frames)')
    last = frame_id(frames[-1]) if frames else last

    # 1.5 s after that reader left, on a third instance
    sleep_until(t0 + 4.5)
    status, body, ended = read_for(c, run_id, last, t0 + 5.0)
    frames, _ = frames_of(body)
    tap.ok(status == 200 and not ended and not any(b'\nevent: error\n' in f for f in frames),
           f'a reader on C from 4.5 s to 5 s: still going ({len(frames)} frames)')
    last = frame_id(frames[-1]) if frames else last

    # nobody for 2 s since: it ended, about 7 s after t0, cut before its
    # own end, and is kept 2 s more
    sleep_until(t0 + 8.0)
    status, body, _ = read_run(b, run_id, last_event_id=last)
    frames, rest = frames_of(body)
    tap.equal(status, 200, 'a late reader')
    end = frames[-1] if frames else b''
    tap.ok(len(frames) >= 3 and end.endswith(b'event: error\ndata: {"detail":"Nobody read the run for 2 seconds",'
                                              b'"status":408,"code":"slow_client"}\n\n'),
           f'it went on after the last reader left, then ended with its error frame: {end!r}')
    tap.ok(frame_id(end) is not None and frame_id(end) < 52, f'before its own end: frame {frame_id(end)}')


def test_reader_dies(cluster):
    # long.jsonl at twice its pace: fifty deltas 200 ms apart, 10 s
    a, b, c = cluster.start(3, pipeline(cluster, 'long', 2, 'resume-seconds=3\n'))
    conn, r = start_run(a)
    run_id = r.getheader('X-Symfonic-Run-ID')
    got = b''
    while len(frames_of(got)[0]) < 2:
        got += r.read1(4096)
    conn.close()
    t0 = time.monotonic()

    # a reader on C from 1 s, whose instance dies at 1.5 s while it follows
    sleep_until(t0 + 1.0)
    reader = c.connection(10)
    reader.request('GET', f'/api/v1/runs/{run_id}/stream', headers=dict(ALICE, **{'Last-Event-ID': '2'}))
    status = reader.getresponse().status
    sleep_until(t0 + 1.5)
    c.kill(signal.SIGKILL)
    reader.close()
    tap.equal(status, 200, 'a reader on C')

    # C vouched for its reader until 3 s after it last said so, by 4.5 s;
    # the run then had its 3 s and ended by about 7.5 s, its own end being
    # past 9.5 s; it is kept 3 s after
    sleep_until(t0 + 8.5)
    status, body, _ = read_run(b, run_id, last_event_id=2)
    frames, _ = frames_of(body)
    end = frames[-1] if frames else b''
    tap.ok(status == 200 and end.endswith(b'event: error\ndata: {"detail":"Nobody read the run for 3 seconds",'
                                          b'"status":408,"code":"slow_client"}\n\n'),
           f'it ended with its error frame: {status} {end!r}')
    tap.ok(frame_id(end) is not None and frame_id(end) < 52, f'before its own end: frame {frame_id(end)}')


PARTS = {'cuts': test_cuts, 'kill': test_kill, 'owners': test_owners, 'trim': test_trim, 'outage': test_outage,
         'clock': test_clock, 'reader-dies': test_reader_dies}


def main():
    if rc.REDIS_SERVER is None:
        tap.skip_all('redis-server is not installed')
    part = sys.argv[1]
    cluster = rc.Cluster()
    try:
        PARTS[part](cluster)
    finally:
        for g in cluster.gateways:
            g.log.flush()
            text = open(g.log.name).read()
            if 'CRITICAL' in text or 'WARNING' in text:
                tap.ok(False, f'{g.path}: nothing critical logged', text[-2000:])
        cluster.close()
    tap.done()


if __name__ == '__main__':
    main()
