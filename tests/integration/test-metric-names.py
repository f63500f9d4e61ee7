#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What /metrics exposes is what the README lists and the dashboard uses.

Starts the gateway binary on the default pipeline, streams one answer,
scrapes /metrics, and checks: the exposition with promtool (skipped, saying
so, without Debian's prometheus package); that the families it declares are
exactly those of README.md's metrics list; and that every metric name a
query of data/grafana-dashboard.json uses is one of them.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GATEWAY = os.environ['SYMFONIC_GATEWAY']
results = []


def check(ok, name, detail=''):
    results.append((ok, name, detail))


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def get(url, body=None, headers=None):
    request = urllib.request.Request(url, data=body, headers=headers or {})
    with urllib.request.urlopen(request, timeout=20) as response:
        return response.read().decode()


def readme_names():
    text = open(os.path.join(SOURCE, 'README.md'), encoding='utf-8').read()
    block = text.split('<!-- metrics-list -->', 1)[1].split('<!-- /metrics-list -->', 1)[0]
    return {m.group(1) for m in re.finditer(r'^\| `([a-z_:][a-z0-9_:]*)` \|', block, re.M)}


def dashboard_names(exposed):
    dashboard = json.load(open(os.path.join(SOURCE, 'data', 'grafana-dashboard.json'), encoding='utf-8'))
    exprs = [target['expr'] for panel in dashboard['panels'] for target in panel.get('targets', [])]
    exprs += [v['query']['query'] for v in dashboard['templating']['list'] if isinstance(v.get('query'), dict)]
    names = set()
    for expr in exprs:
        # drop label matchers, strings and ranges, then take the identifiers
        # that are neither functions nor keywords
        bare = re.sub(r'\{[^}]*\}|"[^"]*"|\[[^\]]*\]', ' ', expr)
        for m in re.finditer(r'[a-zA-Z_:][a-zA-Z0-9_:]*', bare):
            word = m.group(0)
            after = bare[m.end():].lstrip()
            if after.startswith('(') or word in ('by', 'without', 'on', 'ignoring', 'le', 'offset'):
                continue
            # an aggregation written `sum by (…) (…)`
            if re.match(r'(by|without)\b', after):
                continue
            if re.fullmatch(r'[a-z_]+', word) and word in ('route', 'stage', 'phase', 'source', 'tenant', 'store',
                                                            'status', 'outcome', 'gen_ai_request_model',
                                                            'gen_ai_token_type'):
                continue
            names.add(word)
    return names


def family_of(name, exposed):
    for suffix in ('_bucket', '_sum', '_count'):
        if name.endswith(suffix) and name[:-len(suffix)] in exposed:
            return name[:-len(suffix)]
    return name


def main():
    port = free_port()
    base = f'http://127.0.0.1:{port}'
    pipeline = os.path.join(SOURCE, 'data', 'pipelines', 'default.pipeline')
    gateway = subprocess.Popen([GATEWAY, '--pipeline', pipeline, '--listen', f'127.0.0.1:{port}', '--workers', '2'],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                get(base + '/healthz')
                break
            except OSError:
                if time.monotonic() > deadline or gateway.poll() is not None:
                    print('Bail out! the gateway did not start')
                    return 1
                time.sleep(0.05)
        answer = get(base + '/api/v1/stream/typed', b'{"query":"Why is the sky blue?"}',
                     {'Content-Type': 'application/json', 'Authorization': 'Bearer demo-token-alice',
                      'X-Tenant-ID': 'acme'})
        check('ResponseCompleteEvent' in answer, 'a typed stream completes')
        scrape = get(base + '/metrics')
    finally:
        gateway.terminate()
        gateway.wait(timeout=30)

    exposed = set(re.findall(r'^# TYPE (\S+) \S+$', scrape, re.M))
    sampled = {family_of(m.group(1), exposed) for m in re.finditer(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]', scrape, re.M)}
    check(sampled <= exposed, 'every sample belongs to a declared family', ' '.join(sorted(sampled - exposed)))

    promtool = shutil.which('promtool')
    if promtool is None:
        print('# promtool is not installed (Debian package prometheus): the exposition format is not checked')
        results.append((None, 'promtool check metrics', 'skipped'))
    else:
        with tempfile.TemporaryFile('w+') as f:
            f.write(scrape)
            f.seek(0)
            run = subprocess.run([promtool, 'check', 'metrics'], stdin=f, capture_output=True, text=True)
        check(run.returncode == 0, 'promtool check metrics', run.stdout + run.stderr)

    listed = readme_names()
    check(listed == exposed, "README's metrics list is what /metrics exposes",
          f'listed only: {sorted(listed - exposed)}; exposed only: {sorted(exposed - listed)}')

    used = {family_of(n, exposed) for n in dashboard_names(exposed)}
    check(used and used <= exposed, 'the dashboard uses only names /metrics exposes', ' '.join(sorted(used - exposed)))

    print(f'1..{len(results)}')
    failed = 0
    for i, (ok, name, detail) in enumerate(results, 1):
        if ok is None:
            print(f'ok {i} {name} # SKIP promtool is not installed')
        elif ok:
            print(f'ok {i} {name}')
        else:
            failed += 1
            print(f'not ok {i} {name}')
            for line in detail.splitlines():
                print(f'# {line}')
    return 1 if failed else 0


sys.exit(main())
