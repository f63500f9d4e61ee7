#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Symfonic.FilterStage subclassed in Python: the stage supplies a filter
# written in Python (do_create_filter), may look at deltas before they are
# filtered, count what the filter did and add its own event when the answer
# closes, and overrides a Symfonic.Stage hook of its own; the base class
# does the rest. Served by a real server from a pipeline file, seen by an
# HTTP client, expected texts written as literals.
#
# Needs GI_TYPELIB_PATH and LD_LIBRARY_PATH on the build's gateway folder
# (tests/meson.build sets both).

import json
import os
import shutil
import tempfile
import threading
import unittest

import gi

gi.require_version('GLib', '2.0')
gi.require_version('Gio', '2.0')
gi.require_version('Json', '1.0')
gi.require_version('Soup', '3.0')
gi.require_version('Symfonic', '1.0')
from gi.repository import GLib, GObject, Gio, Json, Soup, Symfonic  # noqa: E402

TAG = 'secret'
ANSWER = 'Keep this secret, and that secret too.'
ANSWER_CLEAN = 'Keep this [x], and that [x] too.'


class SecretFilter(Symfonic.TextFilter):
    """Replaces TAG with [x] in split text; withholds what could still
    become TAG. Keeps the stream's count and whether it published it:
    a Python stage's per-stream state lives on its filter."""

    def __init__(self):
        super().__init__()
        self.withheld = ['', '']
        self.replaced = 0
        self.counted = 0
        self.published = False

    def do_filter(self, channel, text, length, out):
        text = self.withheld[channel] + bytes(text).decode('utf-8')
        self.replaced += text.count(TAG)
        text = text.replace(TAG, '[x]')
        keep = 0
        for k in range(min(len(TAG) - 1, len(text)), 0, -1):
            if text.endswith(TAG[:k]):
                keep = k
                break
        self.withheld[channel] = text[len(text) - keep:]
        out.append(text[:len(text) - keep])

    def do_flush(self, channel, out):
        out.append(self.withheld[channel])
        self.withheld[channel] = ''


class SecretStage(Symfonic.FilterStage):
    """Refuses a delta holding BOOM, counts its filters' replacements,
    publishes each stream's count before the event that closes its answer,
    and refuses requests with a header of its own on the request head."""

    __gtype_name__ = 'SymfonicTestPySecretStage'

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # the hooks run on the server's workers
        self.lock = threading.Lock()
        self.uses = []
        self.replaced = 0

    def do_get_admission_phase(self):
        return Symfonic.AdmissionPhase.HEAD

    def do_admit(self, stream):
        if stream.get_invocation().get_header('X-Refuse') is not None:
            raise GLib.Error.new_literal(Symfonic.error_quark(), 'refused on the head',
                                         Symfonic.Error.FORBIDDEN)
        return True

    def do_create_filter(self, stream, use):
        with self.lock:
            self.uses.append(use)
        return SecretFilter()

    def do_before_filter(self, stream, delta):
        text, _ = delta.get_text()
        if 'BOOM' in text:
            raise GLib.Error.new_literal(Symfonic.error_quark(), 'the delta went BOOM',
                                         Symfonic.Error.FAILED)
        return True

    def do_after_filter(self, stream, text_filter):
        assert text_filter is self.get_filter(stream)
        with self.lock:
            self.replaced += text_filter.replaced - text_filter.counted
        text_filter.counted = text_filter.replaced

    def do_close_answer(self, stream, closing):
        text_filter = self.get_filter(stream)
        if not text_filter.published:
            text_filter.published = True
            parser = Json.Parser()
            parser.load_from_data(json.dumps({'ops': [{'op': 'secrets', 'count': text_filter.replaced}]}), -1)
            stream.emit(Symfonic.Event.new(Symfonic.EventKind.MEMORY_EXTRACTED,
                                           parser.get_root().get_object()))
        return Symfonic.FilterStage.do_close_answer(self, stream, closing)


def delta(name, text):
    data = {'text': text}
    if name == 'ResponseCompleteEvent':
        data['duration_ms'] = 1
    return json.dumps({'event': name, 'data': data, 'delay_ms': 0})


CONSOLIDATION = json.dumps({'event': 'ConsolidationScheduledEvent',
                            'data': {'report': {}, 'graph_mutations': 0}, 'delay_ms': 0})
TRANSCRIPTS = {
    'closing': [delta('TextDeltaEvent', 'tell no sec'), CONSOLIDATION,
                delta('ResponseCompleteEvent', 'tell no secret')],
    'ending': [delta('ThinkingDeltaEvent', 'my secret plan, my sec'),
               delta('TextDeltaEvent', 'the secret and the secr')],
    'failing': [delta('TextDeltaEvent', 'a secret then sec'), delta('TextDeltaEvent', 'BOOM'),
                delta('TextDeltaEvent', 'ret')],
    'empty-terminal': [delta('TextDeltaEvent', 'no secret here'), delta('ResponseCompleteEvent', '')],
}
for cut in range(len(ANSWER) + 1):
    TRANSCRIPTS['split-%d' % cut] = [delta('TextDeltaEvent', ANSWER[:cut]), delta('TextDeltaEvent', ANSWER[cut:]),
                                     CONSOLIDATION, delta('ResponseCompleteEvent', ANSWER)]

PIPELINE = '''\
[gateway]
listen=127.0.0.1:0
workers=2

[route:secret]
path=/secret
kind=typed
source=replay
stages=secret

[source:replay]
type=replay
transcripts={transcripts}
default-transcript=closing
time-scale=0

[stage:secret]
type=py-secret
'''


def parse_sse(body):
    """(event, data) pairs of an SSE body, `data` decoded from JSON."""
    frames = []
    for block in body.split('\n\n'):
        name, data = None, None
        for line in block.split('\n'):
            if line.startswith('event: '):
                name = line[len('event: '):]
            elif line.startswith('data: '):
                data = json.loads(line[len('data: '):])
        if name is not None:
            frames.append((name, data))
    return frames


LETTERS = {'TextDeltaEvent': 't', 'ThinkingDeltaEvent': 'h', 'MemoryExtractedEvent': 'm',
           'ConsolidationScheduledEvent': 's', 'ResponseCompleteEvent': 'r', 'error': 'e'}


class FilterStageTestCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp()
        for name, lines in TRANSCRIPTS.items():
            with open(os.path.join(cls.dir, name + '.jsonl'), 'w', encoding='utf-8') as f:
                f.write('\n'.join(lines) + '\n')
        Symfonic.register_stage_type(SecretStage.__gtype__, 'py-secret')
        registry = Symfonic.Registry.get_default()
        registry.scan()
        cls.pipeline = Symfonic.Pipeline.new_from_data(registry, PIPELINE.format(transcripts=cls.dir), -1,
                                                       Gio.File.new_for_path(cls.dir), 'py.pipeline')
        cls.stage = cls.pipeline.get_stage('secret')
        cls.server = Symfonic.Server.new(cls.pipeline)
        cls.server.start()
        cls.base = 'http://127.0.0.1:%d' % cls.server.get_port()
        cls.session = Soup.Session(timeout=20)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        shutil.rmtree(cls.dir)

    def post(self, transcript, *headers):
        message = Soup.Message.new('POST', self.base + '/secret')
        message.get_request_headers().append('X-Symfonic-Transcript', transcript)
        for name, value in headers:
            message.get_request_headers().append(name, value)
        message.set_request_body_from_bytes('application/json', GLib.Bytes.new(b'{"query":"What is the secret?"}'))
        # send_and_read releases the GIL while it waits, so the workers can
        # run the Python hooks meanwhile
        body = self.session.send_and_read(message, None).get_data().decode('utf-8')
        return message.get_status(), body

    def stream(self, transcript):
        status, body = self.post(transcript)
        self.assertEqual(status, 200)
        frames = parse_sse(body)
        shape = ''.join(LETTERS.get(name, '?') for name, _ in frames)
        return frames, shape

    def joined(self, frames, name):
        texts = [data['text'] for event, data in frames if event == name]
        self.assertNotIn('', texts)
        return ''.join(texts)

    def count(self, frames):
        ops = [data['ops'] for event, data in frames if event == 'MemoryExtractedEvent']
        self.assertEqual(len(ops), 1)
        return ops[0][0]['count']

    def test_type_is_a_stage(self):
        self.assertTrue(GObject.type_is_a(SecretStage.__gtype__, Symfonic.Stage.__gtype__))
        self.assertIsInstance(self.stage, SecretStage)

    def test_every_split(self):
        replaced = self.stage.replaced
        for cut in range(len(ANSWER) + 1):
            with self.subTest(cut=cut):
                frames, shape = self.stream('split-%d' % cut)
                self.assertEqual(self.joined(frames, 'TextDeltaEvent'), ANSWER_CLEAN)
                self.assertRegex(shape, '^t+msr$')
                self.assertEqual(self.count(frames), 2)
                self.assertEqual(frames[-1], ('ResponseCompleteEvent',
                                              {'text': ANSWER_CLEAN, 'duration_ms': frames[-1][1]['duration_ms'],
                                               'finish_reason': 'stop'}))
        self.assertEqual(self.stage.replaced - replaced, 2 * (len(ANSWER) + 1))

    def test_released_before_closing(self):
        frames, shape = self.stream('closing')
        self.assertEqual(shape, 'ttmsr')
        self.assertEqual(self.joined(frames, 'TextDeltaEvent'), 'tell no sec')
        self.assertEqual(self.count(frames), 0)

    def test_released_at_finish(self):
        frames, shape = self.stream('ending')
        self.assertEqual(shape, 'hthtmsr')
        self.assertEqual(self.joined(frames, 'ThinkingDeltaEvent'), 'my [x] plan, my sec')
        self.assertEqual(self.joined(frames, 'TextDeltaEvent'), 'the [x] and the secr')
        self.assertEqual(self.count(frames), 2)

    def test_terminal_filter_only_for_text(self):
        with self.stage.lock:
            self.stage.uses.clear()
        frames, _ = self.stream('empty-terminal')
        self.assertEqual(self.joined(frames, 'TextDeltaEvent'), 'no [x] here')
        self.assertEqual(self.stage.uses, [Symfonic.FilterUse.STREAM])
        with self.stage.lock:
            self.stage.uses.clear()
        self.stream('closing')
        self.assertEqual(self.stage.uses, [Symfonic.FilterUse.STREAM, Symfonic.FilterUse.TERMINAL])

    def test_before_filter_raising_ends_the_stream(self):
        status, body = self.post('failing')
        self.assertEqual(status, 200)
        frames = parse_sse(body)
        self.assertEqual([name for name, _ in frames], ['TextDeltaEvent', 'error'])
        self.assertEqual(frames[0][1], {'text': 'a [x] then '})
        self.assertEqual(frames[1][1]['status'], 500)
        self.assertNotIn('BOOM', body)

    def test_stage_hook_of_its_own(self):
        status, body = self.post('closing', ('X-Refuse', '1'))
        self.assertEqual(status, 403)
        self.assertEqual(json.loads(body), {'detail': 'refused on the head', 'status': 403, 'code': 'forbidden'})


if __name__ == '__main__':
    unittest.main()
