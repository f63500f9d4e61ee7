#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The binaries in German, from the build tree's catalog.

  check    `symfonic-gateway --check` on a broken file under
           LANG=de_DE.UTF-8 (LANGUAGE unset) prints the German messages,
           written here as they must read
  help     --help and a passing --check are German too, plural included
  inspect  symfonic-inspect is German, its numbers in the C form
  bodies   a gateway serving under that locale still answers clients in
           English: error bodies are parsed, never translated

The binary finds the catalogs of the build tree by itself (it runs from
there). The de_DE.UTF-8 locale comes from the system, or is compiled
into a temporary folder with localedef (LOCPATH) when the system has the
locale sources (Debian's `locales` package) but not that locale; without
either the test is skipped.
"""
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

GATEWAY = os.environ['SYMFONIC_GATEWAY']
DATA = os.environ['SYMFONIC_TEST_DATA_DIR']
LOCALE = 'de_DE.UTF-8'


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, condition, name, detail=''):
        self.n += 1
        print(f'{"ok" if condition else "not ok"} {self.n} - {name}')
        if not condition:
            self.failed += 1
            for line in str(detail).splitlines():
                print(f'# {line}')

    def equal(self, got, expected, name):
        self.ok(got == expected, name, f'expected: {expected!r}\ngot:      {got!r}')

    def done(self):
        print(f'1..{self.n}')
        return 1 if self.failed else 0


def has_locale(env):
    # setlocale() fails, and says so on stderr, for a locale it cannot load
    result = subprocess.run(['locale'], env=dict(env, LC_ALL=LOCALE), capture_output=True, text=True)
    return result.returncode == 0 and 'Cannot set' not in result.stderr


def german_environment(tmp):
    env = {k: v for k, v in os.environ.items()
           if k not in ('LANGUAGE', 'LANG', 'LOCPATH') and not k.startswith('LC_')}
    env['LANG'] = LOCALE
    if has_locale(env):
        return env, None

    folder = os.path.join(tmp, 'locales')
    os.mkdir(folder)
    try:
        built = subprocess.run(['localedef', '-i', 'de_DE', '-f', 'UTF-8', os.path.join(folder, LOCALE)],
                               capture_output=True, text=True)
    except FileNotFoundError:
        return None, 'localedef is missing'
    env['LOCPATH'] = folder
    if not has_locale(env):
        return None, (f'{LOCALE} is not installed and localedef cannot compile it '
                      f'({built.stderr.strip() or "no locale sources"}): install the locales package')
    return env, None


def run(env, *args):
    return subprocess.run([GATEWAY, *args], env=env, capture_output=True, text=True, timeout=60)


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def check_messages(tap, env, tmp):
    path = os.path.join(tmp, 'broken.pipeline')
    with open(path, 'w') as f:
        f.write('[gateway]\n'
                'playground=maybe\n'
                '\n'
                '[route:a]\n'
                'path=/a\n')
    result = run(env, '--check', path)
    tap.equal(result.returncode, 1, '--check fails on the broken file')
    tap.equal(result.stderr,
              f'{path}:2: [gateway] playground: true oder false erwartet, „maybe“ gefunden\n'
              f'{path}:4: [route:a]: einen Schlüssel „source“ erwartet, die [source:NAME], '
              'aus der die Route streamt, keinen gefunden\n',
              '--check says what is wrong in German')

    missing = os.path.join(tmp, 'missing.pipeline')
    with open(missing, 'w') as f:
        f.write('[route:a]\n'
                'path=/a\n'
                'source=demo\n'
                '\n'
                '[source:demo]\n'
                'type=replay\n'
                f'transcripts={tmp}/nowhere\n')
    result = run(env, '--check', missing)
    tap.equal(result.stderr,
              f'{missing}:7: [source:demo] transcripts: {tmp}/nowhere: '
              'einen Ordner erwartet, nichts gefunden: Er fehlt\n',
              'a missing folder is named as missing, in German')

    order = os.path.join(tmp, 'order.pipeline')
    with open(order, 'w') as f:
        f.write('[route:a]\n'
                'path=/a\n'
                'source=demo\n'
                'stages=c;e\n'
                '\n'
                '[source:demo]\n'
                'type=replay\n'
                f'transcripts={DATA}/transcripts\n'
                '\n'
                '[stage:c]\n'
                'type=citation\n'
                '\n'
                '[stage:e]\n'
                'type=extraction\n')
    result = run(env, '--check', order)
    tap.equal(result.stderr,
              f'{order}:4: [route:a] stages: Stufe „e“ (extraction) vor Stufe „c“ (citation), '
              'die die Speicherblöcke verwirft, auf die sie trifft, erwartet, sie aber danach gefunden\n',
              'a stage out of order is explained in German, with the reason its plugin gives')


def check_help(tap, env, tmp):
    result = run(env, '--help')
    tap.ok('  --check                            Die Pipeline laden und prüfen, dann beenden\n' in result.stdout,
           '--help describes the options in German', result.stdout)
    tap.ok('  -p, --pipeline=DATEI ' in result.stdout, 'and names their arguments in German', result.stdout)

    path = os.path.join(tmp, 'one.pipeline')
    with open(path, 'w') as f:
        f.write('[route:a]\n'
                'path=/a\n'
                'source=demo\n'
                '\n'
                '[source:demo]\n'
                'type=replay\n'
                f'transcripts={DATA}/transcripts\n')
    result = run(env, '--check', path)
    tap.equal(result.stdout, f'{path}: OK, 1 Route\n', 'a passing --check counts in the singular')


def check_inspect(tap, env):
    result = subprocess.run([os.environ['SYMFONIC_INSPECT'], 'rate-limit'], env=env, capture_output=True,
                            text=True, timeout=60)
    lines = result.stdout.splitlines()
    tap.ok('Eigenschaften:' in lines, 'symfonic-inspect lists a type in German', result.stdout)
    # rate's default: numbers keep the form a pipeline file reads, not 10,000000
    tap.ok('                       Vorgabe: 10.000000' in lines, 'and writes its numbers in the C form',
           result.stdout)


def check_bodies(tap, env, tmp):
    port = free_port()
    path = os.path.join(tmp, 'serve.pipeline')
    with open(path, 'w') as f:
        f.write('[gateway]\n'
                f'listen=127.0.0.1:{port}\n'
                '\n'
                '[route:typed]\n'
                'path=/api/v1/stream/typed\n'
                'kind=typed\n'
                'source=demo\n'
                'stages=auth\n'
                '\n'
                '[source:demo]\n'
                'type=replay\n'
                f'transcripts={DATA}/transcripts\n'
                'default-transcript=plain\n'
                '\n'
                '[stage:auth]\n'
                'type=auth\n'
                f'tokens-file={DATA}/demo-tokens.ini\n')
    with open(os.path.join(tmp, 'stdout'), 'w+') as out, open(os.path.join(tmp, 'stderr'), 'w+') as err:
        process = subprocess.Popen([GATEWAY, '--log-format=text', path], env=env, stdout=out, stderr=err)
        try:
            deadline = time.monotonic() + 20
            while 'symfonic-gateway' not in open(out.name).read():
                if process.poll() is not None or time.monotonic() > deadline:
                    tap.ok(False, 'the gateway starts', open(err.name).read())
                    return
                time.sleep(0.05)
            tap.ok(open(out.name).read().startswith('symfonic-gateway ') and ' bedient ' in open(out.name).read(),
                   'the start-up line is German', open(out.name).read())

            def request(method, target, body=None, headers=None):
                connection = http.client.HTTPConnection('127.0.0.1', port, timeout=30)
                connection.request(method, target, body=body, headers=headers or {})
                response = connection.getresponse()
                data = response.read()
                connection.close()
                return response.status, json.loads(data)

            status, body = request('POST', '/api/v1/stream/typed', json.dumps({'query': 'hi'}),
                                   {'Content-Type': 'application/json'})
            tap.equal((status, body.get('detail')), (401, 'Missing Authorization header'),
                      'a refused request is told so in English')
            status, body = request('POST', '/api/v1/stream/typed', '{"query": ',
                                   {'Content-Type': 'application/json',
                                    'Authorization': 'Bearer demo-token-alice', 'X-Tenant-ID': 'acme'})
            tap.ok(status == 400 and body.get('detail', '').startswith('The request body must be one strict JSON'),
                   'a malformed body is told so in English', (status, body))
            status, body = request('GET', '/nowhere')
            tap.equal((status, body.get('detail')), (404, 'No route serves this path'),
                      'an unknown path is told so in English')
        finally:
            process.terminate()
            process.wait(timeout=30)


def main():
    tap = Tap()
    with tempfile.TemporaryDirectory() as tmp:
        env, why = german_environment(tmp)
        if env is None:
            print(f'1..0 # SKIP {why}')
            return 0
        check_messages(tap, env, tmp)
        check_help(tap, env, tmp)
        check_inspect(tap, env)
        check_bodies(tap, env, tmp)
    return tap.done()


if __name__ == '__main__':
    sys.exit(main())
