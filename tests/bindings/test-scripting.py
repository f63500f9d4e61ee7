#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The scripting examples (plugins/examples/scripting/): each script runs as
# a real process serving a real pipeline file on a free port, and its own
# `tenant-tally` stage works next to the built-in C stages of a route, and
# next to a `.py` plugin's stage, as real HTTP requests show; signals
# drain, reload and stop it.
#
#   test-scripting.py SCRIPT
#
# Needs GI_TYPELIB_PATH and LD_LIBRARY_PATH on the build's gateway folder
# and SYMFONIC_TEST_DATA_DIR on the source's data folder (tests/meson.build
# sets all three; tests/bindings/meson.build sets SYMFONIC_TEST_SCRIPT_PLUGIN
# on the `.py` plugin defining `py-suffix` where the Python loader is
# built). A gjs script is skipped where gjs is not installed.

import http.client
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import unittest

SCRIPT = None
SCRIPT_PLUGIN = os.environ.get('SYMFONIC_TEST_SCRIPT_PLUGIN')
DATA_DIR = os.environ.get('SYMFONIC_TEST_DATA_DIR')
# every wait is bounded, generously: the machine may be loaded
TIMEOUT = 30

ALICE = {'Authorization': 'Bearer demo-token-alice', 'X-Tenant-ID': 'acme'}

PIPELINE = '''\
[gateway]
listen=127.0.0.1:8080
workers=2

[route:typed]
path=/api/v1/stream/typed
kind=typed
source=demo
stages=auth;tally;extraction;citation;errors

[route:slow]
path=/api/v1/stream/slow
kind=typed
source=slow
stages=auth;tally;errors

[source:demo]
type=replay
transcripts={data}/transcripts
default-transcript=plain
time-scale=0

# the plain transcript's pauses thirty times over: 5.1 s
[source:slow]
type=replay
transcripts={data}/transcripts
default-transcript=plain
time-scale=30

[stage:auth]
type=auth
tokens-file={data}/demo-tokens.ini

[stage:tally]
type=tenant-tally
header={header}

[stage:extraction]
type=extraction

[stage:citation]
type=citation

[stage:errors]
type=error-map
table={data}/error-map.ini
'''

# the plain transcript, as the typed stream sends it
PLAIN_FRAMES = [
    ('TextDeltaEvent', {'text': 'The sky looks blue'}),
    ('TextDeltaEvent', {'text': ' because air molecules'}),
    ('TextDeltaEvent', {'text': ' scatter short wavelengths'}),
    ('TextDeltaEvent', {'text': ' of sunlight more than long ones.'}),
    ('ConsolidationScheduledEvent', {'report': {'scheduled': True, 'queue': 'inline'},
                                     'graph_mutations': 0}),
]
PLAIN_TEXT = 'The sky looks blue because air molecules scatter short wavelengths of sunlight more than long ones.'

# the plain transcript through the plugin's py-suffix stage
SUFFIXED_FRAMES = [
    ('TextDeltaEvent', {'text': 'The sky looks blue!'}),
    ('TextDeltaEvent', {'text': ' because air molecules!'}),
    ('TextDeltaEvent', {'text': ' scatter short wavelengths!'}),
    ('TextDeltaEvent', {'text': ' of sunlight more than long ones.!'}),
    ('ConsolidationScheduledEvent', {'report': {'scheduled': True, 'queue': 'inline'},
                                     'graph_mutations': 0}),
]
SUFFIXED_TEXT = ('The sky looks blue! because air molecules! scatter short wavelengths! '
                 'of sunlight more than long ones.!')

# the script's stage, then the plugin's
SCRIPT_PLUGIN_PIPELINE = '''\
[gateway]
listen=127.0.0.1:8080
workers=2
{plugin_path}

[route:typed]
path=/api/v1/stream/typed
kind=typed
source=demo
stages=auth;tally;suffix;errors

[source:demo]
type=replay
transcripts={data}/transcripts
default-transcript=plain
time-scale=0

[stage:auth]
type=auth
tokens-file={data}/demo-tokens.ini

[stage:tally]
type=tenant-tally

[stage:suffix]
type=py-suffix
suffix=!

[stage:errors]
type=error-map
table={data}/error-map.ini
'''


def parse_sse(body):
    """(event, data) pairs of an SSE body, `data` decoded from JSON."""
    frames = []
    for block in body.split('\n\n'):
        name, data = None, []
        for line in block.split('\n'):
            field, _, value = line.partition(': ')
            if field == 'event':
                name = value
            elif field == 'data':
                data.append(value)
        if name is not None:
            frames.append((name, json.loads('\n'.join(data))))
    return frames


class Script:
    """The script, serving @pipeline; its output lines are read as they come."""

    def __init__(self, pipeline, listen='127.0.0.1:0', env=None):
        args = [SCRIPT, pipeline] + (['--listen', listen] if listen else [])
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, env=env)
        self.lines = queue.Queue()
        self.error_lines = queue.Queue()
        # all of standard error, for the checks at the end
        self.stderr = []
        self.readers = [threading.Thread(target=self._read, args=(self.process.stdout, self.lines.put)),
                        threading.Thread(target=self._read, args=(self.process.stderr, self.stderr.append,
                                                                  self.error_lines.put))]
        for reader in self.readers:
            reader.start()

    @staticmethod
    def _read(stream, *puts):
        for line in stream:
            for put in puts:
                put(line.rstrip('\n'))

    def wait_line(self, pattern, lines=None):
        """The first line of standard output (or @lines) matching @pattern
        from here on."""
        while True:
            try:
                line = (lines or self.lines).get(timeout=TIMEOUT)
            except queue.Empty:
                raise AssertionError('no line matching %r; stderr: %s' % (pattern, self.stderr))
            match = re.fullmatch(pattern, line)
            if match:
                return match

    def wait(self):
        status = self.process.wait(timeout=TIMEOUT)
        for reader in self.readers:
            reader.join(TIMEOUT)
        self.process.stdout.close()
        self.process.stderr.close()
        return status

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
        self.wait()


class ServingTestCase(unittest.TestCase):
    """Talks to the script serving a pipeline file."""

    def serve(self, pipeline, env=None):
        self.script = Script(pipeline, env=env)
        self.addCleanup(self.script.kill)
        match = self.script.wait_line(r'%s: serving (.*) on http://127\.0\.0\.1:(\d+)/'
                                      % re.escape(os.path.basename(SCRIPT)))
        self.assertEqual(match.group(1), os.path.abspath(pipeline))
        self.port = int(match.group(2))

    def post(self, path, headers):
        connection = http.client.HTTPConnection('127.0.0.1', self.port, timeout=TIMEOUT)
        self.addCleanup(connection.close)
        connection.request('POST', path, body=json.dumps({'query': 'Why is the sky blue?'}),
                           headers=dict(headers, **{'Content-Type': 'application/json'}))
        return connection.getresponse()

    def stop(self, signum=signal.SIGTERM):
        self.script.process.send_signal(signum)
        self.script.wait_line(r'%s: shutting down' % re.escape(os.path.basename(SCRIPT)))
        status = self.script.wait()
        # nothing went wrong on the way: no warning, no refused callback
        self.assertEqual(self.script.stderr, [])
        return status



class ExamplePipelineTestCase(ServingTestCase):

    def test_example_pipeline(self):
        # the pipeline file next to the scripts, as the README runs them
        self.serve(os.path.join(os.path.dirname(SCRIPT), 'tally.pipeline'))
        response = self.post('/api/v1/stream/typed', ALICE)
        frames = parse_sse(response.read().decode())
        self.assertEqual(response.status, 200)
        self.assertEqual(response.getheader('X-Tenant-Streams'), '1')
        self.assertEqual(frames[:-1], PLAIN_FRAMES)
        self.assertEqual(frames[-1][0], 'ResponseCompleteEvent')
        self.assertEqual(frames[-1][1]['text'], PLAIN_TEXT)
        self.script.wait_line('tenant-tally: tenant acme, stream 1: 4 deltas, 99 characters')
        self.assertEqual(self.stop(), 0)


class ScriptTestCase(ServingTestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix='symfonic-scripting-')
        self.addCleanup(shutil.rmtree, self.dir)
        self.pipeline = self.write_pipeline('X-Tenant-Streams')
        self.serve(self.pipeline)

    def write_pipeline(self, header):
        path = os.path.join(self.dir, 'tally.pipeline')
        with open(path, 'w', encoding='utf-8') as f:
            f.write(PIPELINE.format(data=DATA_DIR, header=header))
        return path

    def test_typed_stream_runs_the_script_stage_among_c_stages(self):
        # auth (C) admits the tenant the script's stage numbers; the
        # deltas it counts are the replay source's (C), and the frames
        # passed it and the C text stages unchanged
        for number in ('1', '2'):
            response = self.post('/api/v1/stream/typed', ALICE)
            body = response.read().decode()
            self.assertEqual(response.status, 200, body)
            self.assertEqual(response.getheader('Content-Type'), 'text/event-stream')
            self.assertEqual(response.getheader('X-Tenant-Streams'), number)
            frames = parse_sse(body)
            self.assertEqual(frames[:-1], PLAIN_FRAMES)
            self.assertEqual(frames[-1][0], 'ResponseCompleteEvent')
            self.assertEqual(frames[-1][1]['text'], PLAIN_TEXT)
            self.script.wait_line('tenant-tally: tenant acme, stream %s: 4 deltas, 99 characters' % number)

        # each tenant has its own count
        response = self.post('/api/v1/stream/typed', {'Authorization': 'Bearer demo-token-admin',
                                                      'X-Tenant-ID': 'globex'})
        response.read()
        self.assertEqual(response.status, 200)
        self.assertEqual(response.getheader('X-Tenant-Streams'), '1')
        self.script.wait_line('tenant-tally: tenant globex, stream 1: 4 deltas, 99 characters')

        self.assertEqual(self.stop(), 0)

    def test_refusals_come_from_the_c_stages_before_it(self):
        response = self.post('/api/v1/stream/typed', {})
        self.assertEqual(response.status, 401)
        self.assertEqual(response.getheader('Content-Type'), 'application/json')
        self.assertIsNone(response.getheader('X-Tenant-Streams'))
        self.assertEqual(json.loads(response.read()),
                         {'detail': 'Missing Authorization header', 'status': 401, 'code': 'unauthorized'})

        # bob may not act for acme: the error table words the refusal
        response = self.post('/api/v1/stream/typed', {'Authorization': 'Bearer demo-token-bob',
                                                      'X-Tenant-ID': 'acme'})
        self.assertEqual(response.status, 403)
        self.assertIsNone(response.getheader('X-Tenant-Streams'))
        self.assertEqual(json.loads(response.read()),
                         {'detail': 'Not permitted to act for this tenant', 'status': 403,
                          'code': 'forbidden'})

        # the refused requests never reached the stage: acme's first stream is 1
        response = self.post('/api/v1/stream/typed', ALICE)
        response.read()
        self.assertEqual(response.getheader('X-Tenant-Streams'), '1')
        self.assertEqual(self.stop(), 0)

    def test_sigterm_drains_a_stream_in_flight(self):
        response = self.post('/api/v1/stream/slow', ALICE)
        self.assertEqual(response.status, 200)
        self.assertEqual(response.getheader('X-Tenant-Streams'), '1')
        first = response.readline()
        self.assertEqual(first, b'id: 1\n')

        self.script.process.send_signal(signal.SIGTERM)
        self.script.wait_line(r'%s: shutting down' % re.escape(os.path.basename(SCRIPT)))
        # the stream in flight still ends whole
        frames = parse_sse(response.read().decode())
        self.assertEqual([name for name, _ in frames][-2:],
                         ['ConsolidationScheduledEvent', 'ResponseCompleteEvent'])
        self.assertEqual(frames[-1][1]['text'], PLAIN_TEXT)
        self.script.wait_line('tenant-tally: tenant acme, stream 1: 4 deltas, 99 characters')
        self.assertEqual(self.script.wait(), 0)
        self.assertEqual(self.script.stderr, [])

    def test_second_signal_ends_the_stream_in_flight(self):
        response = self.post('/api/v1/stream/slow', ALICE)
        self.assertEqual(response.status, 200)
        self.assertEqual(response.readline(), b'id: 1\n')

        self.script.process.send_signal(signal.SIGINT)
        self.script.wait_line(r'%s: shutting down' % re.escape(os.path.basename(SCRIPT)))
        self.script.process.send_signal(signal.SIGINT)
        frames = parse_sse('id: 1\n' + response.read().decode())
        self.assertEqual(frames[0], PLAIN_FRAMES[0])
        self.assertEqual(frames[-1], ('error', {'detail': 'The gateway is shutting down; retry later',
                                                'status': 503, 'code': 'shutting_down'}))
        self.assertEqual([name for name, _ in frames].count('error'), 1)
        self.assertEqual(self.script.wait(), 0)
        # the library's one line about the stream it ended: drained, since
        # the stop ended it, not a failure
        self.assertEqual(len(self.script.stderr), 1, self.script.stderr)
        self.assertRegex(self.script.stderr[0],
                         r'^Symfonic-Message: [0-9:.]+: Route slow, run [0-9a-f-]+ drained: '
                         r'the gateway stopped before the stream ended$')

    def test_sigint_stops(self):
        self.assertEqual(self.stop(signal.SIGINT), 0)

    def test_sighup_reloads_the_file(self):
        response = self.post('/api/v1/stream/typed', ALICE)
        response.read()
        self.assertEqual(response.getheader('X-Tenant-Streams'), '1')

        self.write_pipeline('X-Acme-Streams')
        self.script.process.send_signal(signal.SIGHUP)
        self.script.wait_line(r'%s: reloaded %s' % (re.escape(os.path.basename(SCRIPT)),
                                                     re.escape(self.pipeline)))
        # the reloaded pipeline made a stage of its own, counting afresh
        response = self.post('/api/v1/stream/typed', ALICE)
        response.read()
        self.assertEqual(response.status, 200)
        self.assertIsNone(response.getheader('X-Tenant-Streams'))
        self.assertEqual(response.getheader('X-Acme-Streams'), '1')
        self.assertEqual(self.stop(), 0)


    def test_sighup_keeps_serving_when_the_file_does_not_load(self):
        with open(self.pipeline, 'a', encoding='utf-8') as f:
            f.write('[stage:late]\ntype=no-such-type\n')
        self.script.process.send_signal(signal.SIGHUP)
        self.script.wait_line(r'.*reload refused.*', self.script.error_lines)
        self.assertEqual(self.script.stderr,
                         ['%s: reload refused, still serving the previous pipeline: %s:48: '
                          '[stage:late] type: expected a registered stage type (symfonic-inspect lists '
                          'them), found “no-such-type”' % (os.path.basename(SCRIPT), self.pipeline)])
        response = self.post('/api/v1/stream/typed', ALICE)
        response.read()
        self.assertEqual(response.status, 200)
        self.assertEqual(response.getheader('X-Tenant-Streams'), '1')
        self.script.process.send_signal(signal.SIGTERM)
        self.assertEqual(self.script.wait(), 0)


class ScriptPluginTestCase(ServingTestCase):
    """The program loads a `.py` plugin beside its own stage: under Python,
    the plugin's interpreter is the program's."""

    def setUp(self):
        if SCRIPT_PLUGIN is None:
            self.skipTest('the Python loader is not built')
        self.dir = tempfile.mkdtemp(prefix='symfonic-scripting-')
        self.addCleanup(shutil.rmtree, self.dir)
        self.plugins = os.path.join(self.dir, 'plugins')
        os.mkdir(self.plugins)
        shutil.copy(SCRIPT_PLUGIN, self.plugins)

    def serve_plugin(self, plugin_path_key, env):
        pipeline = os.path.join(self.dir, 'suffixed.pipeline')
        with open(pipeline, 'w', encoding='utf-8') as f:
            f.write(SCRIPT_PLUGIN_PIPELINE.format(data=DATA_DIR, plugin_path=plugin_path_key))
        self.serve(pipeline, env)

        for number in ('1', '2'):
            response = self.post('/api/v1/stream/typed', ALICE)
            body = response.read().decode()
            self.assertEqual(response.status, 200, body)
            self.assertEqual(response.getheader('X-Tenant-Streams'), number)
            frames = parse_sse(body)
            self.assertEqual(frames[:-1], SUFFIXED_FRAMES)
            self.assertEqual(frames[-1][0], 'ResponseCompleteEvent')
            self.assertEqual(frames[-1][1]['text'], SUFFIXED_TEXT)
            # the program's stage ran before the plugin's
            self.script.wait_line('tenant-tally: tenant acme, stream %s: 4 deltas, 99 characters' % number)
        self.assertEqual(self.stop(), 0)

    def test_plugin_from_the_environment(self):
        self.serve_plugin('', dict(os.environ, SYMFONIC_PLUGIN_PATH=self.plugins))

    def test_plugin_from_the_pipeline(self):
        self.serve_plugin('plugin-path=plugins', None)


class BadPipelineTestCase(unittest.TestCase):

    def test_bad_pipeline_names_file_line_and_key(self):
        with tempfile.TemporaryDirectory(prefix='symfonic-scripting-') as directory:
            path = os.path.join(directory, 'bad.pipeline')
            text = PIPELINE.format(data=DATA_DIR, header='X-Tenant-Streams')
            text = text.replace('header=X-Tenant-Streams\n', 'header=X-Tenant-Streams\nno-such-key=1\n')
            with open(path, 'w', encoding='utf-8') as f:
                f.write(text)
            script = Script(path)
            status = script.wait()
        self.assertEqual(status, 1)
        # the type is named as the file names it, with the keys it takes
        self.assertEqual(len(script.stderr), 1, script.stderr)
        self.assertTrue(script.stderr[0].startswith(
            '%s: %s:37: [stage:tally] no-such-key: expected a key of type “tenant-tally” ('
            % (os.path.basename(SCRIPT), path)), script.stderr)
        self.assertTrue(script.stderr[0].endswith('), found an unknown one'), script.stderr)
        self.assertTrue(script.lines.empty())


if __name__ == '__main__':
    if len(sys.argv) < 2 or not DATA_DIR:
        sys.exit('usage: SYMFONIC_TEST_DATA_DIR=DIR test-scripting.py SCRIPT')
    SCRIPT = sys.argv.pop(1)
    if SCRIPT.endswith('.js') and shutil.which('gjs') is None:
        print('gjs is not installed: skipped')
        sys.exit(77)
    unittest.main(verbosity=2)
