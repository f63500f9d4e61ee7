#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The packaged service: the systemd units, the pipeline they serve, and
the README's steps that set it up.

  units     symfonic-gateway.service, its socket and the template unit
            symfonic-gateway@.service, as meson configures them: each reads
            the configuration folder's symfonic/gateway.pipeline, takes its
            secrets with LoadCredential=, sets UMask=0077 and keeps its
            sandbox; `systemd-analyze verify` finds nothing to say about
            them, and `systemd-analyze security` rates them OK or better
            (both skipped, saying so, without systemd-analyze)
  example   the pipeline installed for them serves nothing until edited:
            it refuses to load for want of a route, and nothing else; the
            install script puts it in place once and never over an
            operator's file
  readme    the README's "As a service, step by step", run as written but
            for the install and systemctl: folders of the test's own in
            place of /etc and the data folder, a port of its own, and the
            gateway started as the unit starts it, with the credentials
            folder systemd would give it; the client's token streams, and
            without the credentials the pipeline names the missing variable
            at its key
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redis_cluster as rc  # noqa: E402

tap = rc.Tap()
ROOT = os.path.normpath(os.path.join(rc.SOURCE_DIR, '..'))
DATA = os.environ.get('SYMFONIC_TEST_DATA_DIR', os.path.join(ROOT, 'data'))
BUILD_DATA = sys.argv[1]
SYSTEMD_ANALYZE = shutil.which('systemd-analyze')
CREDENTIALS = ['symfonic.tokens', 'symfonic.openai-api-key', 'symfonic.anthropic-api-key',
               'symfonic.metrics-token', 'symfonic.redis-password']
# the sandbox the units keep
SANDBOX = {'DynamicUser': 'yes', 'NoNewPrivileges': 'yes', 'CapabilityBoundingSet': '', 'ProtectSystem': 'strict',
           'ProtectHome': 'read-only', 'PrivateTmp': 'yes', 'PrivateDevices': 'yes', 'RestrictNamespaces': 'yes',
           'RestrictSUIDSGID': 'yes', 'LockPersonality': 'yes', 'SystemCallArchitectures': 'native',
           'UMask': '0077'}


def render(name, etc):
    """The unit @name as meson configures it, for this build and @etc."""
    with open(os.path.join(DATA, name)) as f:
        text = f.read()
    return text.replace('@bindir@', os.path.dirname(rc.GATEWAY)).replace('@sysconfdir@', etc)


def settings(text):
    """Each key of a unit's [Service] section, with all its values."""
    values = {}
    section = None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        if line.startswith('['):
            section = line
            continue
        if section == '[Service]':
            key, _, value = line.partition('=')
            values.setdefault(key, []).append(value)
    return values


def test_units(folder):
    etc = os.path.join(folder, 'etc')
    units = os.path.join(folder, 'units')
    os.makedirs(units)
    service = render('symfonic-gateway.service.in', etc)
    template = render('symfonic-gateway@.service.in', etc)
    paths = {
        'symfonic-gateway.service': service,
        'symfonic-gateway.socket': open(os.path.join(DATA, 'symfonic-gateway.socket')).read(),
        'symfonic-gateway@8081.service': template,
    }
    for name, text in paths.items():
        with open(os.path.join(units, name), 'w') as f:
            f.write(text)

    pipeline = os.path.join(etc, 'symfonic', 'gateway.pipeline')
    for name, text in (('symfonic-gateway.service', service), ('symfonic-gateway@.service', template)):
        values = settings(text)
        exec_start = values.get('ExecStart', [''])[0].split()
        tap.ok(exec_start[:1] == [rc.GATEWAY] and exec_start[-1:] == [pipeline],
               f'{name} serves the configuration folder\'s symfonic/gateway.pipeline', ' '.join(exec_start))
        tap.equal(values.get('LoadCredential'), CREDENTIALS, f'{name} takes its secrets with LoadCredential=')
        kept = {key: values.get(key, [None])[-1] for key in SANDBOX}
        tap.equal(kept, SANDBOX, f'{name} keeps its sandbox, with UMask=0077')
        tap.ok('Environment' not in values and 'User' not in values, f'{name} sets no environment or user')

    if SYSTEMD_ANALYZE is None:
        tap.ok(True, 'systemd-analyze verify # SKIP systemd-analyze is not installed')
        tap.ok(True, 'systemd-analyze security # SKIP systemd-analyze is not installed')
        return
    for names in (['symfonic-gateway.service', 'symfonic-gateway.socket'], ['symfonic-gateway@8081.service']):
        p = subprocess.run([SYSTEMD_ANALYZE, 'verify', '--man=no', *[os.path.join(units, n) for n in names]],
                           capture_output=True, text=True)
        # a machine without a running systemd still parses and checks
        # units; only what our units say counts
        problems = [line for line in (p.stdout + p.stderr).splitlines() if 'symfonic-gateway' in line]
        tap.ok(not problems, f'{" and ".join(names)} pass systemd-analyze verify', '\n'.join(problems))

    for name in ('symfonic-gateway.service', 'symfonic-gateway@8081.service'):
        p = subprocess.run([SYSTEMD_ANALYZE, 'security', '--offline=yes', os.path.join(units, name)],
                           capture_output=True, text=True)
        m = re.search(r'Overall exposure level for \S+: ([0-9.]+) (\S+)', p.stdout + p.stderr)
        if m is None:
            tap.ok(True, f'systemd-analyze security {name} # SKIP this systemd cannot rate a unit offline')
            continue
        tap.ok(float(m.group(1)) <= 4.0, f'systemd-analyze security rates {name} {m.group(1)} {m.group(2)}')
        umask = [line for line in p.stdout.splitlines() if 'UMask=' in line]
        tap.ok(umask and umask[0].lstrip().startswith('✓'), 'its UMask= passes', '\n'.join(umask))


def test_example(folder):
    example = os.path.join(BUILD_DATA, 'gateway.pipeline.example')
    tap.ok(os.path.exists(example), 'the example pipeline is built')
    checked = subprocess.run([rc.GATEWAY, '--check', example], capture_output=True, text=True)
    tap.ok(checked.returncode == 1 and checked.stderr.strip().endswith('expected at least one [route:NAME], found none'),
           'as installed it serves nothing: it declares no route, and nothing else is wrong', checked.stderr)

    # put in place once, never over the operator's own
    pipeline = os.path.join(folder, 'etc', 'symfonic', 'gateway.pipeline')
    script = os.path.join(DATA, 'install-pipeline.sh')
    environment = dict(os.environ)
    environment.pop('DESTDIR', None)
    first = subprocess.run(['sh', script, example, pipeline], capture_output=True, text=True, env=environment)
    tap.ok(first.returncode == 0 and open(pipeline).read() == open(example).read(),
           'the install puts the example in place', first.stdout + first.stderr)
    tap.equal(oct(os.stat(pipeline).st_mode & 0o777), '0o644', 'readable by the service\'s dynamic user')
    with open(pipeline, 'a') as f:
        f.write('# the operator\'s\n')
    again = subprocess.run(['sh', script, example, pipeline], capture_output=True, text=True, env=environment)
    tap.ok(again.returncode == 0 and open(pipeline).read().endswith('# the operator\'s\n'),
           'installing again keeps the operator\'s file', again.stdout + again.stderr)
    # a staged install: the example was installed under DESTDIR too
    destdir = os.path.join(folder, 'destdir')
    os.makedirs(os.path.dirname(destdir + example))
    shutil.copy(example, destdir + example)
    staged = subprocess.run(['sh', script, example, pipeline], capture_output=True, text=True,
                            env=dict(environment, DESTDIR=destdir))
    tap.ok(staged.returncode == 0 and os.path.exists(destdir + pipeline), 'and honours DESTDIR',
           staged.stdout + staged.stderr)


def readme_steps():
    """The ```sh blocks of the README's "As a service, step by step"."""
    text = open(os.path.join(ROOT, 'README.md')).read()
    start = text.index('**As a service, step by step.**')
    end = text.index('\n#', start)
    return re.findall(r'```sh\n(.*?)```', text[start:end], re.S)


def test_readme(folder):
    steps = readme_steps()
    tap.equal(len(steps), 5, 'the README has five steps: install, token, pipeline, check and start, stream')
    if len(steps) != 5:
        return
    install, token, pipeline, start, stream = steps
    tap.ok('--sysconfdir=/etc' in install and 'meson install' in install and 'ldconfig' in install,
           'the install puts the configuration in /etc and tells the linker', install)

    port = rc.free_port()
    etc = os.path.join(folder, 'etc')
    credstore = os.path.join(folder, 'credstore')
    os.makedirs(os.path.join(etc, 'symfonic'), exist_ok=True)

    def ours(step):
        step = step.replace('/etc/credstore', credstore).replace('/etc/symfonic', os.path.join(etc, 'symfonic'))
        step = step.replace('/usr/local/share/symfonic-gateway', DATA)
        return step.replace('127.0.0.1:8080', f'127.0.0.1:{port}')

    check = [line for line in start.splitlines() if not line.startswith('systemctl ')]
    tap.ok(any(line.startswith('systemctl enable --now symfonic-gateway.socket') for line in start.splitlines()),
           'it starts the socket and the service')
    check = '\n'.join(check).replace('symfonic-gateway --check', f'{rc.GATEWAY} --check')
    exec_start = settings(render('symfonic-gateway.service.in', etc))['ExecStart'][0]
    # the unit's command as it stands, with the folder systemd gives it
    script = f"""set -eu
{ours(token)}
{ours(pipeline)}
{ours(check)}
CREDENTIALS_DIRECTORY={credstore} {exec_start} > {folder}/gateway.log 2>&1 &
gateway=$!
trap 'kill $gateway 2>/dev/null || true' EXIT
for _ in $(seq 200); do
  curl -sf http://127.0.0.1:{port}/healthz >/dev/null && break
  sleep 0.1
done
{ours(stream)}
"""
    run = subprocess.run(['bash', '-c', script], capture_output=True, text=True, timeout=60)
    out = run.stdout
    log = open(os.path.join(folder, 'gateway.log')).read() if os.path.exists(os.path.join(folder, 'gateway.log')) else ''
    tap.equal(run.returncode, 0, 'the steps run as written')
    tap.ok("the client's token: " in out, 'the token step says the token')
    tap.ok(': OK, 1 route' in out, 'the check passes with the credential store', out + run.stderr)
    tap.ok('event: ResponseCompleteEvent' in out, 'the client\'s token streams to the end',
           out[-2000:] + run.stderr + log)
    tap.equal(oct(os.stat(os.path.join(credstore, 'symfonic.tokens')).st_mode & 0o777), '0o600',
              'the tokens file is root\'s alone')

    environment = dict(os.environ)
    environment.pop('CREDENTIALS_DIRECTORY', None)
    alone = subprocess.run([rc.GATEWAY, '--check', os.path.join(etc, 'symfonic', 'gateway.pipeline')],
                           capture_output=True, text=True, env=environment)
    tap.ok(alone.returncode == 1 and '[stage:auth] tokens-file' in alone.stderr
           and '${CREDENTIALS_DIRECTORY} is not set' in alone.stderr,
           'without the credentials folder, the key names the missing variable', alone.stderr)


def main():
    which = sys.argv[2] if len(sys.argv) > 2 else 'all'
    tests = {'units': test_units, 'example': test_example, 'readme': test_readme}
    for name, func in tests.items():
        if which not in ('all', name):
            continue
        folder = tempfile.mkdtemp(prefix=f'symfonic-service-{name}-')
        try:
            func(folder)
        except Exception as e:  # noqa: BLE001 - a failed step fails the test, with its cause
            import traceback
            tap.ok(False, f'{name}: {e!r}', traceback.format_exc())
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    tap.done()


main()
