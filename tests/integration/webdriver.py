# SPDX-License-Identifier: LGPL-2.1-or-later
"""Headless Chromium driven through chromedriver, with the W3C WebDriver
protocol, from the standard library: what the browser tests share.

A page under test says what it is doing in its body's `data-state` and,
for a person, in an element `#status`; a timed-out wait names both.
CHROMIUM and CHROMEDRIVER are None where Debian's chromium and
chromium-driver are not installed, and the tests skip, saying so."""
import base64
import json
import os
import shutil
import subprocess
import time
import urllib.error
import urllib.request

import redis_cluster as rc

CHROMIUM = shutil.which('chromium') or shutil.which('chromium-browser')
CHROMEDRIVER = shutil.which('chromedriver') or (
    '/usr/bin/chromedriver' if os.path.exists('/usr/bin/chromedriver') else None)

ELEMENT = 'element-6066-11e4-a52e-4f735466cecf'


class Browser:
    """Headless Chromium through chromedriver."""

    def __init__(self, folder):
        self.port = rc.free_port()
        self.log = open(os.path.join(folder, 'chromedriver.log'), 'w')
        self.driver = subprocess.Popen([CHROMEDRIVER, f'--port={self.port}'], stdout=self.log,
                                       stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while True:
            try:
                if self.call('GET', '/status')['ready']:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError('chromedriver did not start')
            time.sleep(0.1)
        profile = os.path.join(folder, 'profile')
        capabilities = {'capabilities': {'alwaysMatch': {
            'browserName': 'chrome',
            'goog:loggingPrefs': {'browser': 'ALL'},
            'goog:chromeOptions': {
                'binary': CHROMIUM,
                'args': ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
                         '--disable-component-update', '--disable-sync', '--no-first-run',
                         '--disable-dev-shm-usage', f'--user-data-dir={profile}', '--window-size=1280,1400'],
            },
        }}}
        self.session = self.call('POST', '/session', capabilities)['sessionId']

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f'http://127.0.0.1:{self.port}{path}', data=data, method=method,
                                         headers={'Content-Type': 'application/json'})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.loads(response.read())['value']
        except urllib.error.HTTPError as e:
            raise RuntimeError(f'{method} {path}: {e.read().decode()}') from None

    def do(self, method, path, body=None):
        return self.call(method, f'/session/{self.session}{path}', body)

    def open(self, url):
        self.do('POST', '/url', {'url': url})

    def find(self, css):
        return self.do('POST', '/element', {'using': 'css selector', 'value': css})[ELEMENT]

    def type(self, css, text):
        element = self.find(css)
        self.do('POST', f'/element/{element}/clear', {})
        self.do('POST', f'/element/{element}/value', {'text': text})

    def click(self, css):
        self.do('POST', f'/element/{self.find(css)}/click', {})

    def js(self, script, *args):
        return self.do('POST', '/execute/sync', {'script': script, 'args': list(args)})

    def text(self, css):
        return self.js('return document.querySelector(arguments[0]).textContent;', css)

    def state(self):
        """What the page says it is doing: its body's data-state."""
        return self.js('return document.body.dataset.state;')

    def status(self):
        """What the page shows in its #status, if it has one."""
        return self.js('const e = document.getElementById("status"); return e ? e.textContent : null;')

    def wait(self, condition, what, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = condition()
            if value:
                return value
            time.sleep(0.05)
        raise RuntimeError(f'timed out waiting for {what} (page: {self.state()}, {self.status()})')

    def screenshot(self, path):
        with open(path, 'wb') as f:
            f.write(base64.b64decode(self.do('GET', '/screenshot')))

    def console(self):
        try:
            return self.do('POST', '/se/log', {'type': 'browser'})
        except RuntimeError:
            return []

    def close(self):
        try:
            self.do('DELETE', '')
        except (RuntimeError, OSError):
            pass
        self.driver.terminate()
        try:
            self.driver.wait(10)
        except subprocess.TimeoutExpired:
            self.driver.kill()
            self.driver.wait()
        self.log.close()
