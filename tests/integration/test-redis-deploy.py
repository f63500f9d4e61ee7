#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The README's deployment example, as written: its pipeline file served by
two instances started as the template unit starts them, behind its nginx
configuration, on a redis-server of the test's own. Only the ports and
the install prefix are the test's. And the template unit passes
`systemd-analyze verify` where systemd is there to ask."""
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redis_cluster as rc  # noqa: E402

tap = rc.Tap()
ROOT = os.path.normpath(os.path.join(rc.SOURCE_DIR, '..'))
DATA = os.environ.get('SYMFONIC_TEST_DATA_DIR', os.path.join(ROOT, 'data'))
NGINX = shutil.which('nginx') or ('/usr/sbin/nginx' if os.path.exists('/usr/sbin/nginx') else None)
SYSTEMD_ANALYZE = shutil.which('systemd-analyze')


def readme_block(kind, after):
    """The first ```KIND block of the README after the line holding AFTER."""
    text = open(os.path.join(ROOT, 'README.md')).read()
    start = text.index(after)
    m = re.compile(r'```' + kind + r'\n(.*?)```', re.S).search(text, start)
    return m.group(1)


def unit_template():
    return open(os.path.join(DATA, 'symfonic-gateway@.service.in')).read()


def test_unit(folder):
    if SYSTEMD_ANALYZE is None:
        tap.ok(True, 'systemd-analyze verify # SKIP systemd-analyze is not installed')
        return
    bindir = os.path.dirname(rc.GATEWAY)
    path = os.path.join(folder, 'symfonic-gateway@8081.service')
    with open(path, 'w') as f:
        f.write(unit_template().replace('@bindir@', bindir).replace('@sysconfdir@', folder))
    p = subprocess.run([SYSTEMD_ANALYZE, 'verify', '--man=no', path], capture_output=True, text=True)
    # a machine without a running systemd still parses and checks units;
    # only what the unit itself says counts
    problems = [line for line in (p.stdout + p.stderr).splitlines() if 'symfonic-gateway@' in line]
    tap.ok(not problems, 'the template unit passes systemd-analyze verify', '\n'.join(problems))


def test_nginx(cluster):
    if NGINX is None:
        tap.ok(True, 'two instances behind nginx # SKIP nginx is not installed')
        return
    folder = cluster.folder
    ports = {8080: rc.free_port(), 8081: rc.free_port(), 8082: rc.free_port()}

    pipeline = readme_block('ini', '**Two instances behind nginx')
    pipeline = pipeline.replace('/usr/local/share/symfonic-gateway', DATA)
    pipeline = pipeline.replace('redis://127.0.0.1:6379/0', cluster.redis.url)
    pipeline_path = os.path.join(folder, 'gateway.pipeline')
    with open(pipeline_path, 'w') as f:
        f.write(pipeline)

    # the tokens file systemd hands each instance: here the demo tokens,
    # which a pipeline outside /etc may serve on loopback
    credentials = os.path.join(folder, 'credentials')
    os.makedirs(credentials, exist_ok=True)
    shutil.copy(os.path.join(DATA, 'demo-tokens.ini'), os.path.join(credentials, 'symfonic.tokens'))
    environment = dict(os.environ, CREDENTIALS_DIRECTORY=credentials)

    # each instance as the template unit starts it
    exec_start = re.search(r'^ExecStart=(.*)$', unit_template(), re.M).group(1)
    gateways = []
    for instance in (8081, 8082):
        command = exec_start.replace('@bindir@/symfonic-gateway', rc.GATEWAY)
        command = command.replace('%i', str(ports[instance]))
        command = command.replace('@sysconfdir@/symfonic/gateway.pipeline', pipeline_path)
        log = open(os.path.join(folder, f'gw{instance}.log'), 'w')
        gateways.append((subprocess.Popen(command.split(), stdout=log, stderr=subprocess.STDOUT, env=environment),
                         log))

    conf = readme_block('nginx', '**Two instances behind nginx')
    for port, mine in ports.items():
        conf = conf.replace(f':{port};', f':{mine};').replace(f'listen {port};', f'listen 127.0.0.1:{mine};')
    with open(os.path.join(folder, 'nginx.conf'), 'w') as f:
        f.write(f"""daemon off;
master_process off;
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/nginx-error.log;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {folder}/body;
    proxy_temp_path {folder}/proxy;
{conf}
}}
""")
    nginx = subprocess.Popen([NGINX, '-p', folder, '-c', os.path.join(folder, 'nginx.conf')],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        front = rc.Gateway.__new__(rc.Gateway)
        front.port = ports[8080]
        backs = []
        for instance in (8081, 8082):
            back = rc.Gateway.__new__(rc.Gateway)
            back.port = ports[instance]
            backs.append(back)
        deadline = time.monotonic() + 20
        ready = False
        while time.monotonic() < deadline and not ready:
            try:
                ready = all(g.get('/healthz')[0] == 200 for g in backs + [front])
            except OSError:
                time.sleep(0.1)
        tap.ok(ready, 'both instances and nginx serve')

        one = rc.stream(front, query='Why is the sky blue?')
        tap.equal(one.status, 200, 'a stream through nginx')
        tap.equal(one.terminal, 'ResponseCompleteEvent', 'it ends with its success terminal')
        tap.ok(one.headers.get('x-symfonic-run-id') is not None, 'with its run id')

        # the run read again from its second frame, on each instance
        # directly and through nginx: the same frames everywhere
        bodies = []
        for g in backs + [front]:
            c = g.connection(10)
            try:
                c.request('GET', f'/api/v1/runs/{one.headers.get("x-symfonic-run-id")}/stream',
                          headers={'Authorization': f'Bearer {rc.TOKEN}', 'X-Tenant-ID': rc.TENANT,
                                   'Last-Event-ID': '1'})
                r = c.getresponse()
                bodies.append((r.status, r.read()))
            finally:
                c.close()
        tap.equal([status for status, _ in bodies], [200, 200, 200], 'the run read again on each instance')
        tap.ok(bodies[0][1].startswith(b'id: 2\n') and b'ResponseCompleteEvent' in bodies[0][1] and
               all(body == bodies[0][1] for _, body in bodies), 'the same frames from the second on, to its terminal')

        # rate=5 burst=20, shared: a wave through nginx admits the burst
        # across both instances, plus what refilled while it ran
        started = time.monotonic()
        results = rc.run_concurrently(40, lambda i: rc.stream(front, query='Why is the sky blue?'))
        took = time.monotonic() - started
        admitted = sum(r.status == 200 for r in results)
        refilled = int(took * 5) + 1
        tap.ok(19 <= admitted <= 20 + refilled,
               f'the shared limit admitted {admitted} of 40 in {took:.2f} s (burst 20, one spent before)')
        tap.equal(sum(r.status == 429 for r in results), 40 - admitted, 'the rest refused with 429')
        served = [b.metric('symfonic_store_decisions_total', 'store="shared",outcome="admitted"') or 0
                  for b in backs]
        tap.ok(all(s > 0 for s in served), f'both instances served (admissions {served})')
    finally:
        nginx.terminate()
        nginx.wait()
        for process, log in gateways:
            process.terminate()
            process.wait()
            log.close()


def main():
    cluster = None
    try:
        folder = None
        if rc.REDIS_SERVER is None:
            import tempfile
            folder = tempfile.mkdtemp(prefix='symfonic-deploy-')
            test_unit(folder)
            tap.ok(True, 'two instances behind nginx # SKIP redis-server is not installed')
            shutil.rmtree(folder, ignore_errors=True)
        else:
            cluster = rc.Cluster()
            test_unit(cluster.folder)
            test_nginx(cluster)
    except Exception as e:  # noqa: BLE001 - a failed step fails the test, with its cause
        import traceback
        tap.ok(False, repr(e), traceback.format_exc())
    finally:
        if cluster is not None:
            cluster.close()
    tap.done()


main()
