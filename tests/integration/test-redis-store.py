#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Redis store across instances: separate symfonic-gateway processes on
one pipeline file with a [store:shared] type=redis group, and a
redis-server of the test's own.

  rate     3 instances, 64 concurrent clients each, one rate limit of L per
           window, 10 windows: exactly L admitted per window in all
  budget   200 concurrent requests across 3 instances against a budget
           that admits 20: exactly 20 reservations held; billed usage
           past the budget by at most one event per stream; Redis counts
           exactly what was billed
  kill     kill -9 of an instance mid-stream: its reservations and stream
           slots are free again within the lease TTL, and the counters
           then equal billed usage exactly
  outage   Redis stopped (SIGSTOP, then SIGKILL) under load: each
           on-failure policy as declared, no admission waits past the
           deadline, streams in flight finish, and once Redis is back the
           limits are exact again
"""
import os
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redis_cluster as rc  # noqa: E402

tap = rc.Tap()


def shared_group(extra=''):
    # a deadline that a burst of 200 requests on two cores cannot reach:
    # these parts count decisions, the outage part holds the deadline
    return f"""[store:shared]
type=redis
url=@REDIS@
timeout-ms=500
{extra}
"""


def pipeline(cluster, transcript, time_scale, stages, groups, route_lines=''):
    return rc.replay_pipeline(transcript, time_scale, stages, groups, route_lines).replace('@REDIS@',
                                                                                         cluster.redis.url)


# --- rate ----------------------------------------------------------------

# L admissions at once, one more a second: a window is L seconds, after
# which the limit is whole again; each window's wave of requests ends well
# within the second before the next admission would be due.
L = 5
WINDOWS = 10
CLIENTS_PER_INSTANCE = 64


def test_rate(cluster):
    groups = shared_group() + f"""
[stage:rate-limit]
type=rate-limit
rate=1
burst={L}
store=shared
"""
    gateways = cluster.start(3, pipeline(cluster, 'typed', 0, 'auth;rate-limit', groups))
    per_window = []
    window_start = time.monotonic()
    for w in range(WINDOWS):
        started = time.monotonic()
        results = rc.run_concurrently(3 * CLIENTS_PER_INSTANCE,
                                      lambda i: rc.stream(gateways[i % 3]))
        took = time.monotonic() - started
        admitted = sum(r.status == 200 for r in results)
        refused = sum(r.status == 429 for r in results)
        per_window.append(admitted)
        tap.equal(admitted, L, f'window {w}: admitted across 3 instances ({took:.2f} s for the wave)')
        tap.equal(refused, 3 * CLIENTS_PER_INSTANCE - L, f'window {w}: refused with 429')
        tap.ok(all(r.status != 429 or 'retry-after' in r.headers for r in results),
               f'window {w}: every refusal says Retry-After')
        if w == 0:
            # each connection's first call of a script may meet NOSCRIPT
            # and send it once: counted from the second window on
            before = cluster.redis.commandstats()
        window_start += L + 0.3
        time.sleep(max(window_start - time.monotonic(), 0))
    after = cluster.redis.commandstats()
    decisions = (WINDOWS - 1) * 3 * CLIENTS_PER_INSTANCE
    evals = after.get('evalsha', 0) - before.get('evalsha', 0) + after.get('eval', 0) - before.get('eval', 0)
    tap.note(f'admitted per window: {per_window}; {evals} EVALSHA/EVAL for {decisions} decisions')
    tap.equal(evals, decisions, 'one script call per rate-limit decision')


# --- budget --------------------------------------------------------------

BUDGET = 2000
RESERVE = 100
# wordy.jsonl: forty deltas of 100 bytes, 25 estimated tokens each
EVENT_TOKENS = 25


def budget_groups(extra=''):
    return shared_group(extra) + f"""
[stage:budget]
type=budget
tokens-per-window={BUDGET}
window-seconds=3600
reserve-tokens={RESERVE}
store=shared
"""


def test_budget(cluster):
    gateways = cluster.start(3, pipeline(cluster, 'wordy', 3, 'auth;budget', budget_groups()))
    heads = []
    heads_lock = threading.Lock()
    all_heads = threading.Event()
    n = 200

    def on_head(result):
        with heads_lock:
            heads.append(result.status)
            if len(heads) == n:
                all_heads.set()

    results = [None] * n
    runner = threading.Thread(target=lambda: results.__setitem__(
        slice(None), rc.run_concurrently(n, lambda i: rc.stream(gateways[i % 3], on_head=on_head))))
    runner.start()
    tap.ok(all_heads.wait(20), 'every request had its answer within 20 s')
    held = cluster.redis.call('HGET', rc.tenant_key('budget', 't:acme'), 'held')
    leases = cluster.redis.call('ZCARD', rc.tenant_key('leases', 't:acme'))
    tap.equal(heads.count(200), 20, 'admitted while the streams run')
    tap.equal(leases, 20, 'reservations held in Redis')
    tap.equal(int(held or 0), 20 * RESERVE, 'tokens held in Redis')
    runner.join()

    admitted = [r for r in results if r.status == 200]
    refused = [r for r in results if r.status == 429]
    tap.equal(len(admitted), 20, 'admitted in all')
    tap.equal(len(refused), 180, 'refused with 429 budget_exceeded')
    tap.ok(all('"code":"budget_exceeded"' in r.body.replace(' ', '') for r in refused), 'refusals are budget_exceeded')
    tap.ok(all(r.terminal in ('ResponseCompleteEvent', 'error') for r in admitted),
           'every admitted stream ended with one terminal')
    billed = sum(rc.billed(r) for r in admitted)
    tap.ok(billed <= BUDGET + 20 * EVENT_TOKENS,
           f'billed {billed} tokens: at most one event per stream past the budget of {BUDGET}')
    time.sleep(0.5)
    charged = int(cluster.redis.call('HGET', rc.tenant_key('budget', 't:acme'), 'charged') or 0)
    tap.equal(charged, min(billed, BUDGET), 'Redis counted what was billed (up to the window\'s limit)')
    tap.equal(int(cluster.redis.call('HGET', rc.tenant_key('budget', 't:acme'), 'held') or 0), 0,
              'nothing held once every stream settled')


# --- kill ----------------------------------------------------------------

TTL_MS = 1500


def budget_snapshot(cluster):
    """The budget's hash, read at once: its lease records and what it holds."""
    fields = cluster.redis.call('HGETALL', rc.tenant_key('budget', 't:acme')) or []
    records = dict(zip(fields[::2], fields[1::2]))
    leases = {k[2:]: tuple(int(x) for x in v.split()) for k, v in records.items() if k.startswith('l:')}
    return leases, int(records.get('held', 0))


def lease_records(cluster):
    return budget_snapshot(cluster)[0]


def test_kill(cluster):
    groups = budget_groups(f'lease-ttl-ms={TTL_MS}').replace(f'tokens-per-window={BUDGET}',
                                                              'tokens-per-window=100000')
    text = pipeline(cluster, 'long', 1, 'auth;budget', groups, 'max-streams=50\ncap-store=shared\n')
    gateways = cluster.start(2, text)
    a, b = gateways
    slots_key = 'symfonic:{route:typed}:slots:streams:typed'
    results = {}

    def run(name, gateway):
        results[name] = rc.stream(gateway)

    threads = [threading.Thread(target=run, args=(f'{g}{i}', gw))
               for g, gw in (('a', a), ('b', b)) for i in range(5)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    tap.equal(cluster.redis.call('ZCARD', slots_key), 10, 'stream slots held by both instances')
    tap.equal(len(lease_records(cluster)), 10, 'reservations held by both instances')

    a.kill(signal.SIGKILL)
    killed_at = time.monotonic()
    before = lease_records(cluster)
    # what a dead instance leaves is given back to the first script that
    # reads the budget or the set after its leases expired
    time.sleep(TTL_MS / 1000 + 0.2)
    probe = rc.stream(b, headers={'X-Symfonic-Transcript': 'typed'})
    reclaimed_after = time.monotonic() - killed_at
    after, held = budget_snapshot(cluster)
    dead = set(before) - set(after)
    tap.equal(probe.status, 200, 'a probe stream after the TTL')
    tap.equal(len(dead), 5, f'the dead instance\'s reservations reclaimed within {reclaimed_after:.2f} s')
    tap.ok(reclaimed_after < TTL_MS / 1000 + 1.0, 'within the TTL (and the probe)')
    # the probe's own slot is released just after its last byte reached
    # us, so give that command (slow under the sanitizers) a moment
    deadline = time.monotonic() + 2.0
    while cluster.redis.call('ZCARD', slots_key) > 5 and time.monotonic() < deadline:
        time.sleep(0.02)
    tap.equal(cluster.redis.call('ZCARD', slots_key), 5, 'the dead instance\'s stream slots are free again')
    tap.equal(len(set(after) & set(before)), 5, 'the live instance\'s reservations remain')
    # a lease holds what it reserved and has not used yet; the probe's,
    # settled, holds nothing
    tap.equal(held, sum(max(r - u, 0) for r, u in after.values()), 'only the live reservations are held')

    for t in threads:
        t.join()
    live = [results[f'b{i}'] for i in range(5)]
    tap.ok(all(r.terminal == 'ResponseCompleteEvent' for r in live), 'the live instance\'s streams completed')
    time.sleep(0.5)
    # the dead streams count what they had charged before the kill
    dead_used = sum(before[i][1] for i in dead)
    expected = dead_used + sum(rc.billed(r) for r in live) + rc.billed(probe)
    charged = int(cluster.redis.call('HGET', rc.tenant_key('budget', 't:acme'), 'charged'))
    tap.equal(charged, expected, 'charged equals billed usage exactly')
    tap.equal(int(cluster.redis.call('HGET', rc.tenant_key('budget', 't:acme'), 'held')), 0, 'nothing held at the end')
    tap.equal(cluster.redis.call('ZCARD', slots_key), 0, 'every slot released by id')


# --- outage --------------------------------------------------------------

def test_outage(cluster):
    groups = ''
    routes = ''
    for policy in ('deny', 'allow', 'local'):
        groups += f"""[store:{policy}]
type=redis
url=@REDIS@
timeout-ms=50
on-failure={policy}
instances=3
lease-ttl-ms=3000

[stage:rl-{policy}]
type=rate-limit
rate=0.01
burst=30
store={policy}

"""
        routes += f"""[route:{policy}]
path=/{policy}/typed
kind=typed
source=fixtures
stages=auth;rl-{policy}{';budget' if policy == 'allow' else ''}

"""
    groups += """[stage:budget]
type=budget
tokens-per-window=100000
window-seconds=3600
reserve-tokens=100
store=allow

"""
    text = pipeline(cluster, 'typed', 1, 'auth', groups, '') + routes
    gateways = cluster.start(3, text)

    # streams in flight when Redis stops, before their first charge is
    # due (250 ms): what they owe is all in their settlements
    in_flight = {}
    heads = threading.Semaphore(0)

    def run(policy):
        in_flight[policy] = rc.stream(gateways[0], path=f'/{policy}/typed', headers={'X-Symfonic-Transcript': 'long'},
                                      on_head=lambda r: heads.release())

    threads = [threading.Thread(target=run, args=(p,)) for p in ('deny', 'allow', 'local')]
    for t in threads:
        t.start()
    for _ in threads:
        heads.acquire(timeout=10)
    time.sleep(0.1)
    cluster.redis.signal(signal.SIGSTOP)
    stopped = time.monotonic()

    outcomes = {}
    slowest = 0.0
    for policy in ('deny', 'allow', 'local'):
        for g, gateway in enumerate(gateways):
            for i in range(15):
                r = rc.stream(gateway, path=f'/{policy}/typed')
                outcomes.setdefault((policy, g), []).append(r)
                slowest = max(slowest, r.head_after)
    deny = [r for g in range(3) for r in outcomes[('deny', g)]]
    allow = [r for g in range(3) for r in outcomes[('allow', g)]]
    tap.equal(sum(r.status == 429 for r in deny), 45, 'on-failure=deny: refused with 429')
    tap.ok(all(r.headers.get('retry-after') == '1' for r in deny), 'on-failure=deny: with Retry-After: 1')
    tap.ok(all('"status":429' in r.body.replace(' ', '') and 'redis' not in r.body.lower()
               and 'store' not in r.body.lower() for r in deny),
           'on-failure=deny: a JSON body without internals', deny[0].body)
    tap.equal(sum(r.status == 200 and r.terminal == 'ResponseCompleteEvent' for r in allow), 45,
              'on-failure=allow: admitted')
    for g in range(3):
        local = outcomes[('local', g)]
        tap.equal([r.status for r in local], [200] * 10 + [429] * 5,
                  f'on-failure=local: instance {g} enforces its share (30 ÷ 3)')
    # the deadline is 50 ms; what a loaded machine adds to an answer's
    # head is the slack
    tap.ok(slowest < 0.05 + 0.45, f'no admission waited past the deadline: slowest head {slowest * 1000:.0f} ms')
    time.sleep(max(0.0, 1.0 - (time.monotonic() - stopped)))
    cluster.redis.signal(signal.SIGKILL)
    cluster.redis.process.wait()

    for t in threads:
        t.join()
    for policy in ('deny', 'allow', 'local'):
        tap.equal(in_flight[policy].terminal, 'ResponseCompleteEvent', f'{policy}: the stream in flight finished')
    # the allow route's settlements wait for Redis: its 15 admissions on
    # each instance, and the stream that was in flight on the first
    for g, gateway in enumerate(gateways):
        tap.equal(gateway.metric('symfonic_store_backlog', 'store="allow"'), 16.0 if g == 0 else 15.0,
                  f'instance {g}: settlements wait for Redis')

    for g, gateway in enumerate(gateways):
        tap.ok(gateway.metric('symfonic_store_decisions_total', 'store="deny",outcome="denied_on_failure"') == 15,
               f'instance {g}: 15 decisions denied on failure')
        # a rate limit and a budget decided for each request
        tap.equal(gateway.metric('symfonic_store_decisions_total', 'store="allow",outcome="allowed_on_failure"'), 30.0,
                  f'instance {g}: decisions allowed on failure')
        failures = sum(gateway.metric('symfonic_store_errors_total', f'store="deny",kind="{k}"') or 0
                       for k in ('timeout', 'unavailable'))
        tap.ok(failures > 0, f'instance {g}: failures counted ({failures:.0f})')
        tap.equal(gateway.metric('symfonic_store_up', 'store="deny"'), 0.0, f'instance {g}: store down')

    cluster.redis.start()
    restarted = time.monotonic()
    deadline = restarted + 15
    while time.monotonic() < deadline:
        if all(g.metric('symfonic_store_up', 'store="deny"') == 1.0 for g in gateways):
            break
        # a command asked of a worker whose connection waits for its
        # back-off is refused at once; asking keeps every worker trying
        time.sleep(0.2)
    tap.ok(all(g.metric('symfonic_store_up', 'store="deny"') == 1.0 for g in gateways),
           f'every instance reconnected by itself, in {time.monotonic() - restarted:.1f} s')
    time.sleep(0.2)
    tap.ok(all(g.metric('symfonic_store_backlog', 'store="allow"') == 0.0 for g in gateways),
           'the settlements went once it was back')
    # the leases went with the old server: each settlement counts the
    # whole usage, none of which a charge had acknowledged
    charged = cluster.redis.call('HGET', rc.tenant_key('budget', 't:acme'), 'charged')
    tap.equal(int(charged or 0), rc.billed(in_flight['allow']) + sum(rc.billed(r) for r in allow),
              'and Redis counts what those streams were billed')
    results = rc.run_concurrently(45, lambda i: rc.stream(gateways[i % 3], path='/deny/typed'))
    tap.equal(sum(r.status == 200 for r in results), 30, 'once Redis is back the limit is exact again')


def main():
    if rc.REDIS_SERVER is None:
        tap.skip_all('redis-server is not installed')
    which = sys.argv[1] if len(sys.argv) > 1 else 'all'
    tests = {'rate': test_rate, 'budget': test_budget, 'kill': test_kill, 'outage': test_outage}
    for name, func in tests.items():
        if which not in ('all', name):
            continue
        cluster = rc.Cluster()
        try:
            func(cluster)
        except Exception as e:  # noqa: BLE001 - a failed step fails the test, with its cause
            import traceback
            tap.ok(False, f'{name}: {e!r}', traceback.format_exc())
        finally:
            cluster.close()
    tap.done()


main()
