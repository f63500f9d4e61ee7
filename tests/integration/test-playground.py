#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The playground, `[gateway] playground=true`, through the real binary.

Over plain HTTP: the page, its script and style with the headers that lock
it down (a Content-Security-Policy of `default-src 'none'` and exactly
what the page needs, from its own origin), the list of routes it picks
from, and a route that would sit under /playground refused at load.

In headless Chromium, driven through chromedriver (the W3C WebDriver
protocol, from the standard library): a test types a token, a tenant and
a query, sends, and reads what the page drew from a runtime that streams
every kind of typed event (activations, thinking, text, a tool call with
its arguments in fragments and its result, usage): the answer the page
rendered is the terminal's text, and the terminal shows its usage and
finish reason. "Drop and resume" cuts a slow run in the middle and reads
it again from the runs route with Last-Event-ID: the answer is still the
terminal's, every frame drawn once. An upstream that fails mid-way shows
its error with its status, and a wrong token the refusal's. The browser
console holds no Content-Security-Policy violation. Screenshots are kept
in the build folder (playground.png, playground-resumed.png).

The browser part is skipped, saying so, where Debian's chromium and
chromium-driver are not installed.
"""
import http.client
import http.server
import json
import os
import shutil
import signal
import socketserver
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redis_cluster as rc  # noqa: E402
from webdriver import Browser, CHROMEDRIVER, CHROMIUM  # noqa: E402

tap = rc.Tap()
DATA = os.environ.get('SYMFONIC_TEST_DATA_DIR', '')
ARTEFACTS = sys.argv[1] if len(sys.argv) > 1 else tempfile.gettempdir()

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


# --- a runtime that streams every kind of typed event -----------------------

def sse(event, data):
    return f'event: {event}\ndata: {json.dumps(data)}\n\n'.encode()


def turn(query):
    """The runtime's events for @query, with the seconds to wait before each."""
    if 'slow' in query:
        words = [f'word{i:02d} ' for i in range(1, 41)]
        events = [(0.08, 'TextDeltaEvent', {'text': w}) for w in words]
        events.append((0, 'usage', {'input_tokens': 5, 'output_tokens': 40}))
        events.append((0, 'ResponseCompleteEvent', {'text': ''.join(words), 'duration_ms': 1}))
        return events
    if 'fail' in query:
        return [(0.02, 'TextDeltaEvent', {'text': 'This will not '}),
                (0.02, 'error', {'detail': 'the runtime fell over', 'code': 'upstream_unavailable'})]
    return [
        (0.02, 'ActivationEvent', {'node_id': 'n1', 'node_label': 'Rayleigh scattering', 'score': 0.92,
                                   'layer': 1, 'source_node_id': None}),
        (0.02, 'ActivationEvent', {'node_id': 'n2', 'node_label': 'Sky colour', 'score': 0.71,
                                   'layer': 2, 'source_node_id': 'n1'}),
        (0.02, 'ThinkingDeltaEvent', {'text': 'The user asks about the sky. '}),
        (0.02, 'ThinkingDeltaEvent', {'text': 'Look up the weather first.'}),
        (0.02, 'TextDeltaEvent', {'text': 'Let me look '}),
        (0.02, 'TextDeltaEvent', {'text': 'outside. '}),
        (0.02, 'ToolCallStartEvent', {'tool_name': 'get_weather', 'tool_call_id': 'call_1', 'index': 0,
                                      'arguments': ''}),
        (0.02, 'ToolCallDeltaEvent', {'tool_call_id': 'call_1', 'index': 0, 'arguments': '{"city":'}),
        (0.02, 'ToolCallDeltaEvent', {'tool_call_id': 'call_1', 'index': 0, 'arguments': '"Lisbon"}'}),
        (0.02, 'ToolResultEvent', {'tool_call_id': 'call_1', 'result': {'sky': 'clear', 'temperature_c': 21}}),
        (0.02, 'TextDeltaEvent', {'text': 'The sky is clear: '}),
        (0.02, 'TextDeltaEvent', {'text': 'air scatters blue light <most>, “and” that is all.'}),
        (0, 'usage', {'input_tokens': 12, 'output_tokens': 34}),
        (0.02, 'ConsolidationScheduledEvent', {'report': {'scheduled': True}, 'graph_mutations': 1}),
        (0, 'ResponseCompleteEvent', {'text': 'ignored: the gateway sends the deltas\' own', 'duration_ms': 1}),
    ]


class Runtime(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers['Content-Length'])))
        self.send_response(200)
        self.send_header('Content-Type', 'text/event-stream')
        self.send_header('Connection', 'close')
        self.end_headers()
        try:
            for delay, event, data in turn(body.get('query', '')):
                time.sleep(delay)
                self.wfile.write(sse(event, data))
                self.wfile.flush()
        except OSError:
            pass
        self.close_connection = True


class ThreadingServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


# --- the gateway ------------------------------------------------------------

def pipeline(port, runtime_url, extra_route=''):
    return f"""[gateway]
listen=127.0.0.1:{port}
workers=2
playground=true

[route:typed]
path=/api/v1/stream/typed
kind=typed
source=agent
stages=auth;errors
resume=true

# a run read again: no source of its own
[route:runs]
path=/api/v1/runs
kind=runs
stages=auth;errors
{extra_route}
[source:agent]
type=runtime
url={runtime_url}

[stage:auth]
type=auth
tokens-file={os.path.join(DATA, 'demo-tokens.ini')}

[stage:errors]
type=error-map
table={os.path.join(DATA, 'error-map.ini')}
"""


class Gateway:
    def __init__(self, folder, text):
        self.path = os.path.join(folder, 'playground.pipeline')
        with open(self.path, 'w') as f:
            f.write(text)
        self.log = open(os.path.join(folder, 'gateway.log'), 'w+')
        self.process = subprocess.Popen([rc.GATEWAY, self.path], stdout=self.log, stderr=subprocess.STDOUT)

    def wait(self, port):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f'the gateway exited: {self.output()}')
            try:
                if get(port, '/healthz')[0] == 200:
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError('the gateway did not start')

    def output(self):
        self.log.flush()
        with open(self.log.name) as f:
            return f.read()

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


def get(port, path, method='GET'):
    c = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
    try:
        c.request(method, path)
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        c.close()


def test_http(port, folder, runtime_url):
    status, headers, body = get(port, '/playground')
    tap.equal(status, 200, 'GET /playground')
    tap.equal(headers.get('content-type'), 'text/html; charset=utf-8', 'an HTML page')
    tap.equal(headers.get('content-security-policy'), CSP, 'locked by its Content-Security-Policy')
    tap.equal(headers.get('x-content-type-options'), 'nosniff', 'X-Content-Type-Options')
    tap.equal(headers.get('referrer-policy'), 'no-referrer', 'Referrer-Policy')
    with open(os.path.join(DATA, 'playground', 'index.html'), 'rb') as f:
        tap.ok(body == f.read(), 'the page of the data folder, as it is')
    page = body.decode()
    tap.ok('<script>' not in page and 'style=' not in page and '<style' not in page and 'http' not in page,
           'with no inline script or style, and nothing from elsewhere')

    for name, kind in (('playground.js', 'text/javascript'), ('playground.css', 'text/css')):
        status, headers, body = get(port, f'/playground/{name}')
        tap.ok(status == 200 and headers.get('content-type', '').startswith(kind),
               f'its {name} ({status}, {headers.get("content-type")})')
    status, headers, body = get(port, '/playground/routes.json')
    tap.equal(json.loads(body) if status == 200 else status,
              {'typed': [{'name': 'typed', 'path': '/api/v1/stream/typed', 'resume': True}],
               'runs': ['/api/v1/runs']},
              'the routes it picks from')
    tap.equal(get(port, '/playground/nothing.js')[0], 404, 'nothing else under /playground')
    status, headers, _ = get(port, '/playground', 'DELETE')
    tap.ok(status == 405 and headers.get('allow') == 'GET, HEAD', f'another method is 405 ({status})')

    # a route where the playground is cannot be reached: refused at load
    text = pipeline(port, runtime_url, '\n[route:shadowed]\npath=/playground/api\nkind=chat\nsource=agent\n')
    path = os.path.join(folder, 'shadowed.pipeline')
    with open(path, 'w') as f:
        f.write(text)
    checked = subprocess.run([rc.GATEWAY, '--check', path], capture_output=True, text=True)
    tap.ok(checked.returncode == 1 and '[route:shadowed] path' in checked.stderr and 'playground' in checked.stderr,
           'a route under /playground is refused while it is served', checked.stderr)

    # the shipped pipeline that serves it, as the README runs it
    shipped = os.path.join(DATA, 'pipelines', 'playground.pipeline')
    checked = subprocess.run([rc.GATEWAY, '--check', shipped], capture_output=True, text=True)
    tap.ok(checked.returncode == 0, 'data/pipelines/playground.pipeline loads', checked.stdout + checked.stderr)


def ask(browser, port, query, token='demo-token-alice', tenant='acme'):
    browser.open(f'http://127.0.0.1:{port}/playground')
    browser.wait(lambda: browser.js('return document.querySelectorAll("#route option").length;'),
                 'the route list')
    browser.type('#token', token)
    browser.type('#tenant', tenant)
    browser.type('#query', query)
    browser.click('#send')


def finished(browser):
    return browser.state() in ('complete', 'failed', 'refused', 'stopped')


def test_browser(port, folder):
    browser = Browser(folder)
    try:
        # every kind of event, drawn as it arrives
        ask(browser, port, 'Why is the sky blue?')
        browser.wait(lambda: finished(browser), 'the run to end')
        tap.equal(browser.state(), 'complete', 'the run completes in the page')
        answer = browser.text('#answer')
        terminal = browser.text('#terminal-text')
        tap.ok(answer != '' and answer == terminal, 'the rendered answer is the terminal\'s text',
               f'answer {answer!r}\nterminal {terminal!r}')
        tap.equal(answer, 'Let me look outside. The sky is clear: air scatters blue light <most>, “and” that is all.',
                  'and the deltas\' text, markup as text')
        tap.equal(browser.text('#terminal-finish'), 'tool_calls', 'the terminal\'s finish reason')
        tap.equal(browser.text('#terminal-usage'), '12 in, 34 out', 'and its usage')
        tap.equal(browser.js('return [...document.querySelectorAll("#activations li")].length;'), 2,
                  'both activations')
        tap.ok('Rayleigh scattering' in browser.text('#activations'), 'with their labels')
        tap.equal(browser.text('#thinking'), 'The user asks about the sky. Look up the weather first.',
                  'the thinking')
        tap.equal(browser.text('.tool-name'), 'get_weather', 'the tool call')
        tap.equal(browser.text('.tool-arguments'), '{"city":"Lisbon"}', 'its arguments, fragments joined')
        tap.ok('"sky": "clear"' in browser.text('.tool-result'), 'its result', browser.text('.tool-result'))
        tap.ok('ConsolidationScheduledEvent' in browser.text('#other'), 'the consolidation')
        frames = browser.js('return [...document.querySelectorAll("#frames .frame-id")].map(e => e.textContent);')
        tap.equal(frames, [str(i) for i in range(1, len(frames) + 1)], 'every frame listed once, by id')
        shot = os.path.join(ARTEFACTS, 'playground.png')
        browser.screenshot(shot)
        tap.ok(os.path.getsize(shot) > 10000, f'a screenshot: {shot}')

        # cut in the middle, read again from the runs route
        ask(browser, port, 'Say it slowly')
        browser.wait(lambda: browser.js('return document.querySelectorAll("#frames .frame-TextDeltaEvent").length >= 8'
                                        ' && !document.getElementById("drop").disabled;'),
                     'eight deltas')
        browser.click('#drop')
        browser.wait(lambda: finished(browser), 'the resumed run to end')
        tap.equal(browser.state(), 'complete', 'the dropped run completes')
        resumed_after = browser.js('return document.body.dataset.resumedAfter;')
        tap.ok(resumed_after is not None and 8 <= int(resumed_after) < 41,
               f'it was read again after frame {resumed_after}')
        answer = browser.text('#answer')
        tap.ok(answer == browser.text('#terminal-text') and answer.startswith('word01 ') and answer.endswith('word40 '),
               'the rendered answer is still the terminal\'s text', answer)
        frames = browser.js('return [...document.querySelectorAll("#frames .frame-id")].map(e => e.textContent)'
                            '.filter(t => t !== "·");')
        tap.equal(frames, [str(i) for i in range(1, 43)], 'every frame drawn once across the drop')
        tap.ok('resumed after frame' in browser.text('#status'), 'the page says it resumed', browser.text('#status'))
        browser.screenshot(os.path.join(ARTEFACTS, 'playground-resumed.png'))

        # an upstream that fails mid-way: the error frame and its status
        ask(browser, port, 'Please fail')
        browser.wait(lambda: finished(browser), 'the failing run to end')
        tap.equal(browser.state(), 'failed', 'a failing run fails in the page')
        status = browser.text('#error-status')
        tap.ok(status.isdigit() and 500 <= int(status) < 600, f'with its status {status}')
        tap.ok(browser.text('#error-code') != '', f'and code {browser.text("#error-code")}')

        # a refusal before the stream: its JSON status and detail
        ask(browser, port, 'Why is the sky blue?', token='not-a-token')
        browser.wait(lambda: finished(browser), 'the refusal')
        tap.equal(browser.state(), 'refused', 'a wrong token is refused in the page')
        tap.equal(browser.text('#error-status'), '401', 'with 401')
        tap.equal(browser.text('#error-code'), 'unauthorized', 'and its code')

        console = browser.console()
        tap.note(f'{len(console)} console lines: ' + ' | '.join(e.get('message', '') for e in console)[:2000])
        violations = [entry.get('message', '') for entry in console
                      if 'Content Security Policy' in entry.get('message', '')
                      or 'Refused to' in entry.get('message', '')]
        tap.ok(not violations, 'the page breaks none of its Content-Security-Policy', '\n'.join(violations))
    finally:
        browser.close()


def main():
    folder = tempfile.mkdtemp(prefix='symfonic-playground-')
    runtime = ThreadingServer(('127.0.0.1', 0), Runtime)
    threading.Thread(target=runtime.serve_forever, daemon=True).start()
    runtime_url = f'http://127.0.0.1:{runtime.server_address[1]}/run'
    port = rc.free_port()
    gateway = Gateway(folder, pipeline(port, runtime_url))
    try:
        gateway.wait(port)
        test_http(port, folder, runtime_url)
        if CHROMIUM is None or CHROMEDRIVER is None:
            tap.ok(True, 'the page in a browser # SKIP Debian\'s chromium and chromium-driver are needed '
                         '(apt-get install chromium chromium-driver)')
        else:
            test_browser(port, folder)
    except Exception as e:  # noqa: BLE001 - a failed step fails the test, with its cause
        import traceback
        tap.ok(False, repr(e), traceback.format_exc() + '\n' + gateway.output()[-3000:])
    finally:
        gateway.stop()
        runtime.shutdown()
        shutil.rmtree(folder, ignore_errors=True)
    tap.done()


main()
