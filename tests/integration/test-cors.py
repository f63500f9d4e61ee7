#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Browsers, through the real binary: a route's cors-origins, resume
tokens and the 204 that stops an EventSource.

Over plain HTTP: a preflight from a listed origin is answered 204 with
what a page may send, from its head alone (no credentials, no body); from
another origin 403, with no CORS header; a route without the key still
answers 405. Answers to a listed origin, streams and refusals alike (an
early refusal, a 400, a 404, a 405), carry Access-Control-Allow-Origin and
expose the gateway's headers; answers to another origin carry none. `*`
serves any origin on a route without credentials, and is refused at load,
with the file, line and key, on a route that authenticates; so is a
secret file too short. A resumable run's answer carries a resume token in
the documented format, which reads the run on the runs route without the
headers; an altered, expired, other run's or other tenant's token gets the
same 404 as an unknown run. A reader that has the terminal gets 204.

In headless Chromium (skipped, saying so, without Debian's chromium and
chromium-driver): the README's browser page, served from another origin,
streams a slow run with fetch(), is cut in the middle, reads the rest with
EventSource and the token, and shows the terminal's text; its
EventSource then stops on the 204. Served from an origin the routes do
not list, the page gets no answer.
"""
import base64
import hashlib
import hmac
import http.client
import http.server
import json
import os
import re
import shutil
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redis_cluster as rc  # noqa: E402
from webdriver import Browser, CHROMEDRIVER, CHROMIUM  # noqa: E402

tap = rc.Tap()
DATA = os.environ.get('SYMFONIC_TEST_DATA_DIR', '')
README = os.path.join(rc.SOURCE_DIR, '..', 'README.md')
APP = 'https://app.example'
EVIL = 'https://evil.example'
AUTH = {'Authorization': f'Bearer {rc.TOKEN}', 'X-Tenant-ID': rc.TENANT}
WORDS = [f'word{i:02d} ' for i in range(1, 41)]


def pipeline(folder, page_origin):
    return f"""[gateway]
listen=127.0.0.1:@PORT@
workers=2
resume-token-secret-file={os.path.join(folder, 'secret')}

# slow: a page can cut it in the middle
[route:typed]
path=/api/v1/stream/typed
kind=typed
source=slow
stages=auth;errors
resume=true
cors-origins={page_origin}; {APP}

[route:quick]
path=/api/v1/quick/typed
kind=typed
source=quick
stages=auth;errors
resume=true
cors-origins={APP}

[route:brief]
path=/api/v1/brief/typed
kind=typed
source=quick
stages=auth;errors
resume=true
resume-token-seconds=1

[route:runs]
path=/api/v1/runs
kind=runs
stages=auth;errors
cors-origins={page_origin};{APP}

# no credentials: any page may call it
[route:open]
path=/api/v1/open/chat
kind=chat
source=quick
cors-origins=*

[route:plain]
path=/api/v1/chat
kind=chat
source=quick
stages=auth;errors

[source:slow]
type=replay
transcripts={folder}
default-transcript=slow

[source:quick]
type=replay
transcripts={os.path.join(DATA, 'transcripts')}
default-transcript=plain
time-scale=0

[stage:auth]
type=auth
tokens-file={os.path.join(DATA, 'demo-tokens.ini')}

[stage:errors]
type=error-map
table={os.path.join(DATA, 'error-map.ini')}
"""


def request(gateway, method, path, headers=None, body=None):
    c = gateway.connection(30)
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read().decode()
    finally:
        c.close()


def post(gateway, path, origin=None, headers=None, body='{"query":"hi"}'):
    h = {'Content-Type': 'application/json'}
    if origin is not None:
        h['Origin'] = origin
    h.update(headers if headers is not None else AUTH)
    return request(gateway, 'POST', path, h, body)


def frames(text):
    """(id, event, data) of each frame of an event stream."""
    out = []
    for block in text.split('\n\n'):
        fields = dict(line.split(': ', 1) for line in block.split('\n') if ': ' in line and not line.startswith(':'))
        if 'data' in fields:
            out.append((int(fields['id']), fields.get('event'), json.loads(fields['data'])))
    return out


def cors_headers(headers):
    return {k: v for k, v in headers.items() if k.startswith('access-control-')}


def mint(secret, run_id, tenant, principal, expires):
    """A resume token, as README says the gateway makes them."""
    def netstring(text):
        data = text.encode()
        return f'{len(data)}:'.encode() + data + b','

    def b64(data):
        return base64.urlsafe_b64encode(data).rstrip(b'=').decode()

    message = b'symfonic-resume-token/1' + b''.join(netstring(f) for f in (run_id, tenant, principal, str(expires)))
    mac = hmac.new(secret, message, hashlib.sha256).digest()
    return f'{expires}.{b64(tenant.encode())}.{b64(principal.encode())}.{b64(mac)}'


def test_preflights(gateway):
    ask = {'Origin': APP, 'Access-Control-Request-Method': 'POST',
           'Access-Control-Request-Headers': 'authorization,content-type,x-tenant-id'}
    status, headers, body = request(gateway, 'OPTIONS', '/api/v1/stream/typed', ask)
    tap.equal(status, 204, 'a preflight from a listed origin, without credentials')
    tap.equal(headers.get('access-control-allow-origin'), APP, 'allows that origin')
    tap.ok('Origin' in headers.get('vary', ''), 'says it varies by Origin', headers)
    tap.equal(headers.get('access-control-allow-methods'), 'POST', 'the route\'s method')
    allowed = [h.strip().lower() for h in headers.get('access-control-allow-headers', '').split(',')]
    tap.ok(all(h in allowed for h in ('authorization', 'x-tenant-id', 'content-type', 'last-event-id')),
           'the contract\'s request headers', allowed)
    tap.ok(headers.get('access-control-max-age', '').isdigit(), 'and a max age', headers)
    tap.equal(body, '', 'no body')

    status, headers, _ = request(gateway, 'OPTIONS', f'/api/v1/runs/{uuid.uuid4()}/stream',
                                 {'Origin': APP, 'Access-Control-Request-Method': 'GET',
                                  'Access-Control-Request-Headers': 'last-event-id'})
    tap.ok(status == 204 and headers.get('access-control-allow-methods') == 'GET',
           f'a preflight on the runs route: GET ({status})', headers)

    status, headers, body = request(gateway, 'OPTIONS', '/api/v1/stream/typed', dict(ask, Origin=EVIL))
    tap.equal(status, 403, 'a preflight from another origin')
    payload = json.loads(body)
    tap.ok(payload.get('status') == 403 and payload.get('code') == 'forbidden' and 'detail' in payload,
           'a JSON refusal as the error rules say', body)
    tap.equal(cors_headers(headers), {}, 'with no CORS header')
    tap.ok(EVIL not in json.dumps(headers) + body, 'and nothing of the client\'s origin')

    status, headers, _ = request(gateway, 'OPTIONS', '/api/v1/chat', ask)
    tap.ok(status == 405 and not cors_headers(headers), f'a route without cors-origins: 405 as before ({status})')

    # bounded like any request without credentials: it takes no body
    status, _, _ = request(gateway, 'OPTIONS', '/api/v1/stream/typed', dict(ask, **{'Content-Length': '4096'}),
                           'x' * 4096)
    tap.equal(status, 413, 'a preflight announcing a body is refused before it is read')

    status, headers, _ = request(gateway, 'OPTIONS', '/api/v1/open/chat',
                                 {'Origin': 'https://anyone.example', 'Access-Control-Request-Method': 'POST'})
    tap.ok(status == 204 and headers.get('access-control-allow-origin') == '*',
           f'a route with * answers any origin ({status})', headers)


def expect_cors(headers, name, origin=APP):
    exposed = [h.strip().lower() for h in headers.get('access-control-expose-headers', '').split(',')]
    tap.ok(headers.get('access-control-allow-origin') == origin and 'x-symfonic-run-id' in exposed and
           'x-symfonic-resume-token' in exposed and 'Origin' in headers.get('vary', ''),
           f'{name}: allowed and exposed', headers)


def test_answers(gateway):
    status, headers, body = post(gateway, '/api/v1/quick/typed', APP)
    tap.equal(status, 200, 'a stream to a listed origin')
    expect_cors(headers, 'the stream')
    tap.ok(headers.get('x-symfonic-resume-token'), 'with a resume token', headers)

    status, headers, body = post(gateway, '/api/v1/quick/typed', APP, headers={})
    tap.equal(status, 401, 'no credentials, a body announced')
    expect_cors(headers, 'the early refusal')

    status, headers, _ = post(gateway, '/api/v1/quick/typed', APP, body='{"query":')
    tap.equal(status, 400, 'a malformed body')
    expect_cors(headers, 'the 400')

    status, headers, _ = request(gateway, 'GET', f'/api/v1/runs/{uuid.uuid4()}/stream', dict(AUTH, Origin=APP))
    tap.equal(status, 404, 'an unknown run')
    expect_cors(headers, 'the 404')

    status, headers, _ = request(gateway, 'GET', '/api/v1/quick/typed', {'Origin': APP})
    tap.equal(status, 405, 'another method')
    expect_cors(headers, 'the 405')

    status, headers, _ = post(gateway, '/api/v1/quick/typed', EVIL)
    tap.ok(status == 200 and not cors_headers(headers) and 'Origin' in headers.get('vary', ''),
           f'a stream to another origin: no CORS header ({status})', headers)

    status, headers, body = post(gateway, '/api/v1/open/chat', 'https://anyone.example', headers={})
    tap.ok(status == 200 and headers.get('access-control-allow-origin') == '*' and 'vary' not in headers,
           f'an answer of a route with * ({status})', headers)


def check_refused(folder, name, text, group, key):
    """--check names the line of @key in [@group], and only that problem."""
    path = os.path.join(folder, f'{name}.pipeline')
    text = text.replace('@PORT@', str(rc.free_port()))
    with open(path, 'w') as f:
        f.write(text)
    lines = text.splitlines()
    start = lines.index(f'[{group}]')
    line = next(n for n, l in enumerate(lines[start:], start + 1) if l.startswith(f'{key}='))
    checked = subprocess.run([rc.GATEWAY, '--check', path], capture_output=True, text=True)
    tap.ok(checked.returncode == 1 and checked.stderr.startswith(f'{path}:{line}: [{group}] {key}:') and
           checked.stderr.count('\n') == 1, f'{name}: refused at load, at {path}:{line}', checked.stderr)
    return checked.stderr


def test_load(folder, page_origin):
    text = pipeline(folder, page_origin)
    starred = text.replace(f'cors-origins={APP}\n', 'cors-origins=*\n', 1)
    stderr = check_refused(folder, 'starred', starred, 'route:quick', 'cors-origins')
    tap.ok('authenticates' in stderr, '* on a route whose stages authenticate', stderr)
    check_refused(folder, 'not-an-origin', text.replace(f'cors-origins={APP}\n', f'cors-origins={APP}/\n', 1),
                  'route:quick', 'cors-origins')
    with open(os.path.join(folder, 'short'), 'w') as f:
        f.write('too short\n')
    check_refused(folder, 'short-secret', text.replace(os.path.join(folder, 'secret'), os.path.join(folder, 'short')),
                  'gateway', 'resume-token-secret-file')

    # the README's browser pipeline loads, beside the data it names
    with open(README) as f:
        readme = f.read()
    snippet = re.search(r'<!-- browser-pipeline -->\n```\n(.*?)```', readme, re.S).group(1)
    beside = os.path.join(folder, 'readme')
    os.mkdir(beside)
    os.symlink(DATA, os.path.join(beside, 'data'))
    with open(os.path.join(beside, 'resume-token.secret'), 'w') as f:
        f.write(base64.b64encode(os.urandom(32)).decode() + '\n')
    with open(os.path.join(beside, 'browser.pipeline'), 'w') as f:
        f.write(snippet)
    checked = subprocess.run([rc.GATEWAY, '--check', os.path.join(beside, 'browser.pipeline')], capture_output=True,
                             text=True)
    tap.ok(checked.returncode == 0, 'the README\'s browser pipeline loads', checked.stdout + checked.stderr)


def test_tokens(gateway, secret):
    status, headers, body = post(gateway, '/api/v1/quick/typed')
    run_id = headers['x-symfonic-run-id']
    token = headers.get('x-symfonic-resume-token', '')
    sent = frames(body)
    terminal = sent[-1]
    tap.equal(terminal[1], 'ResponseCompleteEvent', 'a resumable run to its end')
    expires = int(token.split('.')[0]) if token[:1].isdigit() else 0
    tap.ok(0 < expires - time.time() <= 900 + 5, f'its token expires in the route\'s resume-token-seconds ({token})')
    tap.equal(token, mint(secret, run_id, rc.TENANT, 'alice', expires), 'the token is as documented')
    tap.ok(rc.TOKEN not in base64.urlsafe_b64decode(token.split('.')[-1] + '==').decode('latin-1') and
           'demo-token' not in token, 'and holds no bearer token')

    stream_path = f'/api/v1/runs/{run_id}/stream'
    status, headers, body = request(gateway, 'GET', f'{stream_path}?token={token}', {'Origin': APP})
    tap.ok(status == 200 and frames(body) == sent, f'the token reads the run without the headers ({status})', body)
    expect_cors(headers, 'the run read with a token')

    status, _, body = request(gateway, 'GET', f'{stream_path}?token={token}',
                              {'Last-Event-ID': str(terminal[0] - 1)})
    tap.ok(status == 200 and frames(body) == [terminal], f'with Last-Event-ID, the rest ({status})', body)

    # every wrong token is the answer of a run that is not there
    _, _, nowhere = request(gateway, 'GET', f'/api/v1/runs/{uuid.uuid4()}/stream', AUTH)
    tap.equal(json.loads(nowhere), {'detail': 'No such run', 'status': 404, 'code': 'not_found'}, 'an unknown run')
    mac = token.split('.')[-1]
    altered = token[:-len(mac)] + ('A' if mac[0] != 'A' else 'B') + mac[1:]
    status, headers, _ = post(gateway, '/api/v1/quick/typed', headers=dict(AUTH, **{'X-Tenant-ID': 'demo'}))
    other_run_token = headers.get('x-symfonic-resume-token')
    wrong = {
        'an altered token': altered,
        'a token cut short': token[:-1],
        'garbage': 'x' * 5000,
        'an empty token': '',
        'another run\'s token': other_run_token,
        'a later expiry under the old MAC': str(expires + 1) + token[len(str(expires)):],
        'another tenant\'s token': mint(secret, run_id, 'globex', 'bob', expires),
        'a token for a tenant of alice\'s that is not the run\'s': mint(secret, run_id, 'demo', 'alice', expires),
        'another principal\'s token': mint(secret, run_id, rc.TENANT, 'admin', expires),
        'an expired token': mint(secret, run_id, rc.TENANT, 'alice', int(time.time()) - 1),
        'a token signed with another secret': mint(b'x' * 32, run_id, rc.TENANT, 'alice', expires),
    }
    for name, bad in wrong.items():
        status, headers, body = request(gateway, 'GET', f'{stream_path}?token={bad}')
        tap.ok(status == 404 and body == nowhere, f'{name}: 404 as an unknown run ({status})', body)

    # a token the gateway gave expires
    status, headers, _ = post(gateway, '/api/v1/brief/typed')
    brief_run, brief_token = headers['x-symfonic-run-id'], headers['x-symfonic-resume-token']
    status, _, _ = request(gateway, 'GET', f'/api/v1/runs/{brief_run}/stream?token={brief_token}')
    tap.equal(status, 200, 'a token of a route with resume-token-seconds=1, at once')
    time.sleep(2.2)
    status, _, body = request(gateway, 'GET', f'/api/v1/runs/{brief_run}/stream?token={brief_token}')
    tap.ok(status == 404 and body == nowhere, f'two seconds later: 404 ({status})', body)
    status, _, _ = request(gateway, 'GET', f'/api/v1/runs/{brief_run}/stream', AUTH)
    tap.equal(status, 200, 'while the headers still read the run')

    # the reader that has every frame
    status, headers, body = request(gateway, 'GET', stream_path, dict(AUTH, **{'Last-Event-ID': str(terminal[0])}))
    tap.ok(status == 204 and body == '' and headers.get('x-symfonic-run-id') == run_id,
           f'a reader with the terminal gets 204 ({status})', headers)
    status, headers, body = request(gateway, 'GET', f'{stream_path}?token={token}',
                                    {'Last-Event-ID': str(terminal[0]), 'Origin': APP})
    tap.ok(status == 204 and body == '', f'with the token too ({status})')
    expect_cors(headers, 'the 204')


# --- in a browser -----------------------------------------------------------

class PageServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def serve_page(page):
    """An HTTP server of its own origin that serves page['text'] as
    /page.html."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            body = page['text'].encode()
            self.send_response(200 if self.path == '/page.html' else 404)
            self.send_header('Content-Type', 'text/html; charset=utf-8')
            self.send_header('Content-Length', str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = PageServer(('127.0.0.1', 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def readme_page(gateway_url):
    with open(README) as f:
        readme = f.read()
    page = re.search(r'<!-- browser-page -->\n```html\n(.*?)```', readme, re.S).group(1)
    return page.replace("const GATEWAY = 'http://127.0.0.1:8080';", f"const GATEWAY = '{gateway_url}';")


def test_browser(folder, page_server, stranger, gateway):
    browser = Browser(folder)
    try:
        page_port = page_server.server_address[1]
        browser.open(f'http://127.0.0.1:{page_port}/page.html')
        browser.click('#send')
        browser.wait(lambda: browser.text('#answer').count('word') >= 8 and
                     not browser.js('return document.getElementById("cut").disabled;'), 'eight words')
        browser.click('#cut')
        shown_at_cut = browser.text('#answer')
        browser.wait(lambda: browser.state() in ('complete', 'failed', 'refused'), 'the run to end')
        tap.equal(browser.state(), 'complete', 'the page cut in the middle completes the run')
        answer = browser.text('#answer')
        tap.ok(len(shown_at_cut) < len(answer), 'it was cut before the end',
               f'at the cut {shown_at_cut!r}\nin the end {answer!r}')
        tap.ok(answer == browser.text('#terminal') == ''.join(WORDS),
               'the text received is the terminal\'s, every frame once',
               f'answer {answer!r}\nterminal {browser.text("#terminal")!r}')
        browser.wait(lambda: browser.js('return document.body.dataset.source;') == 'closed',
                     'the EventSource to stop', timeout=15)
        tap.ok(True, 'its EventSource stops on the 204 that answers its reconnect')

        # the same page from an origin no route lists
        browser.open(f'http://127.0.0.1:{stranger.server_address[1]}/page.html')
        browser.click('#send')
        browser.wait(lambda: browser.state() in ('complete', 'failed', 'refused'), 'the stranger\'s answer')
        tap.equal(browser.state(), 'failed', 'a page of an origin not listed gets no answer')
        tap.ok('Failed to fetch' in browser.status(), browser.status())
    finally:
        browser.close()


def main():
    folder = tempfile.mkdtemp(prefix='symfonic-cors-')
    secret = base64.b64encode(os.urandom(32))
    with open(os.path.join(folder, 'secret'), 'wb') as f:
        f.write(secret + b'\n')
    with open(os.path.join(folder, 'slow.jsonl'), 'w') as f:
        for word in WORDS:
            f.write(json.dumps({'event': 'TextDeltaEvent', 'data': {'text': word}, 'delay_ms': 80}) + '\n')
        f.write(json.dumps({'event': 'ResponseCompleteEvent', 'data': {'text': '', 'duration_ms': 1}}) + '\n')

    page = {'text': ''}
    page_server = serve_page(page)
    stranger = serve_page(page)
    page_origin = f'http://127.0.0.1:{page_server.server_address[1]}'
    gateway = None
    try:
        gateway = rc.Gateway(folder, 'cors', pipeline(folder, page_origin))
        page['text'] = readme_page(f'http://127.0.0.1:{gateway.port}')
        test_preflights(gateway)
        test_answers(gateway)
        test_load(folder, page_origin)
        test_tokens(gateway, secret)
        if CHROMIUM is None or CHROMEDRIVER is None:
            tap.ok(True, 'the README\'s page in a browser # SKIP Debian\'s chromium and chromium-driver are needed '
                         '(apt-get install chromium chromium-driver)')
        else:
            test_browser(folder, page_server, stranger, gateway)
    except Exception as e:  # noqa: BLE001 - a failed step fails the test, with its cause
        import traceback
        tap.ok(False, repr(e), traceback.format_exc())
    finally:
        if gateway is not None:
            gateway.stop()
        page_server.shutdown()
        stranger.shutdown()
        shutil.rmtree(folder, ignore_errors=True)
    tap.done()


main()
