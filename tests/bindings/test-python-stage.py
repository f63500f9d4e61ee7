#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The library from Python, through GObject Introspection: a stage written in
# Python (a GObject implementing Symfonic.Stage) runs inside a real server,
# receives its configuration from a pipeline file, transforms events, and
# refuses or fails requests with GLib.Error; and the plain library calls
# (events, invocations, error frames) behave from Python as they do from C.
#
# Needs GI_TYPELIB_PATH and LD_LIBRARY_PATH on the build's gateway folder and
# SYMFONIC_TEST_DATA_DIR on the source's data folder (tests/meson.build sets
# all three).

import json
import os
import sys
import unittest

import gi

gi.require_version('GLib', '2.0')
gi.require_version('Gio', '2.0')
gi.require_version('Json', '1.0')
gi.require_version('Soup', '3.0')
gi.require_version('Symfonic', '1.0')
from gi.repository import GLib, GObject, Gio, Json, Soup, Symfonic  # noqa: E402

DATA_DIR = os.environ.get('SYMFONIC_TEST_DATA_DIR')
TRANSCRIPT = 'plain'
SUFFIX = 'from the pipeline file'


def read_transcript(name):
    """The transcript's entries, as the replay source will play them."""
    path = os.path.join(DATA_DIR, 'transcripts', name + '.jsonl')
    entries = []
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith('#'):
                entries.append(json.loads(line))
    return entries


def parse_sse(body):
    """(event, data) pairs of an SSE body; `data` decoded from JSON."""
    frames = []
    for block in body.split('\n\n'):
        if not block.strip():
            continue
        name = None
        data = []
        for line in block.split('\n'):
            if line.startswith(':'):
                continue
            field, _, value = line.partition(':')
            if value.startswith(' '):
                value = value[1:]
            if field == 'event':
                name = value
            elif field == 'data':
                data.append(value)
        frames.append((name, json.loads('\n'.join(data)) if data else None))
    return frames


def json_node(text):
    parser = Json.Parser()
    parser.load_from_data(text, -1)
    return parser.get_root()


# The stages. A stage object is shared by every stream of its route and its
# hooks run on the server's worker thread, so they keep no per-stream state.

class PyUpperStage(GObject.Object, Symfonic.Stage):
    """Upper-cases the answer; every other event passes unchanged."""

    __gtype_name__ = 'SymfonicTestPyUpperStage'

    suffix = GObject.Property(type=str, default=None,
                              nick='Suffix', blurb='Set by the pipeline file')

    # every instance, so the test can reach the one the pipeline created
    instances = []

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        PyUpperStage.instances.append(self)
        self.processed = 0

    def do_process(self, stream, event):
        self.processed += 1
        if event.get_kind() == Symfonic.EventKind.TEXT_DELTA:
            text, _ = event.get_text()
            stream.emit(Symfonic.Event.new_text_delta(text.upper()))
        else:
            stream.emit(event)
        return True


class _DeltaCount(GObject.Object):
    """Per-stream state of PyBoomStage: it travels with the stream."""

    def __init__(self):
        super().__init__()
        self.deltas = 0


class PyBoomStage(GObject.Object, Symfonic.Stage):
    """Fails on the second text delta, after the stream has started."""

    __gtype_name__ = 'SymfonicTestPyBoomStage'

    def do_process(self, stream, event):
        if event.get_kind() == Symfonic.EventKind.TEXT_DELTA:
            state = stream.get_stage_state(self)
            if state is None:
                state = _DeltaCount()
                stream.set_stage_state(self, state)
            state.deltas += 1
            if state.deltas == 2:
                raise GLib.Error.new_literal(Symfonic.error_quark(), 'boom',
                                             Symfonic.Error.UPSTREAM)
        stream.emit(event)
        return True


class PyForbidStage(GObject.Object, Symfonic.Stage):
    """Refuses every request at admission."""

    __gtype_name__ = 'SymfonicTestPyForbidStage'

    def do_admit(self, stream):
        raise GLib.Error.new_literal(Symfonic.error_quark(),
                                     'tenant is not yours',
                                     Symfonic.Error.FORBIDDEN)


class PyFalseStage(GObject.Object, Symfonic.Stage):
    """A buggy stage: an uncaught non-GLib exception in do_process.

    PyGObject prints the traceback and hands C a FALSE return with no
    GError set (the same happens when do_process forgets to return True)."""

    __gtype_name__ = 'SymfonicTestPyFalseStage'

    def do_process(self, stream, event):
        if event.get_kind() == Symfonic.EventKind.TEXT_DELTA:
            raise ValueError('a bug in the stage, not a GLib.Error')
        stream.emit(event)
        return True


class PyAdmitFalseStage(GObject.Object, Symfonic.Stage):
    """A buggy stage: do_admit refuses without saying why (FALSE, no GError)."""

    __gtype_name__ = 'SymfonicTestPyAdmitFalseStage'

    def do_admit(self, stream):
        return False


class PyHeadStage(GObject.Object, Symfonic.Stage):
    """Admits on the request head, like auth, and refuses every request,
    saying whether the body was already decoded."""

    __gtype_name__ = 'SymfonicTestPyHeadStage'

    def do_get_admission_phase(self):
        return Symfonic.AdmissionPhase.HEAD

    def do_admit(self, stream):
        query = stream.get_invocation().get_query()
        raise GLib.Error.new_literal(Symfonic.error_quark(),
                                     'refused on the head' if query is None else 'refused after the body',
                                     Symfonic.Error.UNAUTHORIZED)


PIPELINE = '''\
[gateway]
listen=127.0.0.1:0
workers=1

[route:upper]
path=/api/v1/stream/typed
kind=typed
source=replay
stages=upper

[route:boom]
path=/api/v1/stream/boom
kind=typed
source=replay
stages=boom

[route:forbid]
path=/api/v1/stream/forbid
kind=typed
source=replay
stages=forbid

[route:upper-paced]
path=/api/v1/stream/upper-paced
kind=typed
source=paced
stages=upper

[route:raw-paced]
path=/api/v1/stream/raw-paced
kind=typed
source=paced

[route:false]
path=/api/v1/stream/false
kind=typed
source=replay
stages=false

[route:admit-false]
path=/api/v1/stream/admit-false
kind=typed
source=replay
stages=admit-false

[route:head]
path=/api/v1/stream/head
kind=typed
source=replay
stages=upper;head

[source:replay]
type=replay
transcripts=../transcripts
default-transcript={transcript}
time-scale=0

# plays the recorded pauses, as a real upstream would pace its deltas
[source:paced]
type=replay
transcripts=../transcripts
default-transcript={transcript}

[stage:upper]
type=py-upper
suffix={suffix}

[stage:boom]
type=py-boom

[stage:forbid]
type=py-forbid

[stage:false]
type=py-false

[stage:admit-false]
type=py-admit-false

[stage:head]
type=py-head
'''.format(transcript=TRANSCRIPT, suffix=SUFFIX)


class PyNeedsPrincipalStage(GObject.Object, Symfonic.Stage):
    """Declares, as a metering stage does, that it needs a principal."""


class ServerTestCase(unittest.TestCase):
    """One server for the class, on a free port, one worker thread."""

    @classmethod
    def setUpClass(cls):
        for gtype, name in ((PyUpperStage.__gtype__, 'py-upper'),
                            (PyBoomStage.__gtype__, 'py-boom'),
                            (PyForbidStage.__gtype__, 'py-forbid'),
                            (PyFalseStage.__gtype__, 'py-false'),
                            (PyAdmitFalseStage.__gtype__, 'py-admit-false'),
                            (PyHeadStage.__gtype__, 'py-head')):
            Symfonic.register_stage_type(gtype, name)
        Symfonic.register_stage_type(PyNeedsPrincipalStage.__gtype__, 'py-needs-principal')
        Symfonic.stage_type_declare_order(PyNeedsPrincipalStage.__gtype__, None, ['principal'], None,
                                          'counts by principal')

        cls.registry = Symfonic.Registry.get_default()
        cls.registry.scan()
        cls.pipeline = Symfonic.Pipeline.new_from_data(
            cls.registry, PIPELINE, -1,
            Gio.File.new_for_path(os.path.join(DATA_DIR, 'pipelines')),
            'py.pipeline')
        cls.server = Symfonic.Server.new(cls.pipeline)
        cls.server.set_listen('127.0.0.1:0')
        cls.server.set_workers(1)
        cls.server.start()
        cls.base = 'http://127.0.0.1:%d' % cls.server.get_port()
        cls.session = Soup.Session(timeout=20)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def post(self, path, body=None, session=None, transcript=None):
        message = Soup.Message.new('POST', self.base + path)
        if transcript is not None:
            message.get_request_headers().append('X-Symfonic-Transcript', transcript)
        if body is None:
            body = json.dumps({'query': 'Why is the sky blue?'})
        message.set_request_body_from_bytes('application/json',
                                            GLib.Bytes.new(body.encode()))
        # send_and_read releases the GIL while it waits, so the worker
        # thread can run the Python stage meanwhile
        data = (session or self.session).send_and_read(message, None).get_data()
        content_type = message.get_response_headers().get_content_type()[0]
        return message.get_status(), content_type, data.decode('utf-8')

    # -- a Python stage in the pipeline ------------------------------------

    def test_stage_type_is_registered(self):
        self.assertEqual(self.registry.lookup('py-upper'), PyUpperStage.__gtype__)
        self.assertIn('py-upper', self.registry.list_types())
        self.assertIn('replay', self.registry.list_types())

    def test_property_from_pipeline_file(self):
        stage = self.pipeline.get_stage('upper')
        self.assertIsInstance(stage, PyUpperStage)
        self.assertIn(stage, PyUpperStage.instances)
        self.assertEqual(stage.props.suffix, SUFFIX)
        self.assertEqual(stage.get_property('suffix'), SUFFIX)

    def test_pipeline_checks_python_stage_keys(self):
        # a Python stage's properties are checked like a C stage's: an
        # unknown key is a config error naming the file, the line and the key
        text = PIPELINE.replace('suffix={}\n'.format(SUFFIX),
                                'suffix=x\nno-such-key=1\n')
        self.assertNotEqual(text, PIPELINE)
        with self.assertRaises(GLib.Error) as caught:
            Symfonic.Pipeline.new_from_data(
                self.registry, text, -1,
                Gio.File.new_for_path(os.path.join(DATA_DIR, 'pipelines')),
                'bad.pipeline')
        self.assertTrue(caught.exception.matches(Symfonic.error_quark(),
                                                 Symfonic.Error.CONFIG),
                        caught.exception)
        self.assertIn('bad.pipeline', caught.exception.message)
        self.assertIn('no-such-key', caught.exception.message)

    def test_python_stage_order_is_checked(self):
        # the order a Python stage declares is checked like a C stage's
        route = '[route:r]\npath=/r\nsource=s\nstages={}\n'
        groups = ('[source:s]\ntype=replay\ntranscripts=../transcripts\n'
                  '[stage:needy]\ntype=py-needs-principal\n'
                  '[stage:auth]\ntype=auth\ntokens-file=../demo-tokens.ini\n')
        base = Gio.File.new_for_path(os.path.join(DATA_DIR, 'pipelines'))
        with self.assertRaises(GLib.Error) as caught:
            Symfonic.Pipeline.new_from_data(self.registry, route.format('needy') + groups, -1,
                                            base, 'order.pipeline')
        self.assertEqual(caught.exception.message,
                         'order.pipeline:4: [route:r] stages: expected a stage that provides '
                         '“principal” before stage “needy” (py-needs-principal), which counts by '
                         'principal, found none on the route')
        pipeline = Symfonic.Pipeline.new_from_data(self.registry, route.format('auth;needy') + groups,
                                                   -1, base, 'order.pipeline')
        self.assertEqual(pipeline.get_n_routes(), 1)

    def test_text_deltas_are_upper_cased(self):
        entries = read_transcript(TRANSCRIPT)
        recorded = [e['data']['text'] for e in entries
                    if e['event'] == 'TextDeltaEvent']
        others = [(e['event'], e['data']) for e in entries
                  if e['event'] not in ('TextDeltaEvent', 'ResponseCompleteEvent')]
        self.assertTrue(recorded)
        # the test means something only if upper-casing changes the text
        self.assertNotEqual(recorded, [t.upper() for t in recorded])

        status, content_type, body = self.post('/api/v1/stream/typed')
        self.assertEqual(status, 200, body)
        self.assertEqual(content_type, 'text/event-stream')
        frames = parse_sse(body)

        deltas = [data['text'] for name, data in frames if name == 'TextDeltaEvent']
        self.assertEqual(deltas, [t.upper() for t in recorded])

        # everything else passed through unchanged, in order
        self.assertEqual([(n, d) for n, d in frames
                          if n not in ('TextDeltaEvent', 'ResponseCompleteEvent')],
                         others)

        # one success terminal, last, carrying exactly the deltas that were sent
        self.assertEqual(frames[-1][0], 'ResponseCompleteEvent')
        self.assertEqual([n for n, _ in frames].count('ResponseCompleteEvent'), 1)
        self.assertNotIn('error', [n for n, _ in frames])
        self.assertEqual(frames[-1][1]['text'], ''.join(deltas))
        self.assertEqual(frames[-1][1]['text'],
                         ''.join(recorded).upper())
        self.assertIsInstance(frames[-1][1]['duration_ms'], int)

        stage = self.pipeline.get_stage('upper')
        self.assertGreaterEqual(stage.processed, len(recorded))

    def test_process_raising_ends_with_one_error_frame(self):
        status, content_type, body = self.post('/api/v1/stream/boom')
        self.assertEqual(status, 200, body)
        self.assertEqual(content_type, 'text/event-stream')
        frames = parse_sse(body)
        names = [n for n, _ in frames]

        # the first delta went out before the stage failed
        self.assertEqual(names[0], 'TextDeltaEvent')
        self.assertEqual(names.count('error'), 1)
        self.assertEqual(names[-1], 'error')
        self.assertNotIn('ResponseCompleteEvent', names)
        # the first delta went out, the second one failed and nothing after it
        self.assertEqual(names.count('TextDeltaEvent'), 1)
        # the raised GLib.Error reached C intact: the frame is the library's
        # mapping of that very error (server side: opaque detail, with code)
        expected = Symfonic.ErrorFrame.new_for_error(
            GLib.Error.new_literal(Symfonic.error_quark(), 'boom', Symfonic.Error.UPSTREAM))
        self.assertEqual(frames[-1][1], json.loads(expected.to_json()))
        self.assertGreaterEqual(frames[-1][1]['status'], 500)
        self.assertEqual(frames[-1][1]['code'], 'upstream_error')
        self.assertEqual(frames[-1][1]['detail'], Symfonic.OPAQUE_DETAIL)

    def test_admit_raising_forbidden_is_403_json(self):
        status, content_type, body = self.post('/api/v1/stream/forbid')
        self.assertEqual(status, 403, body)
        self.assertEqual(content_type, 'application/json')
        self.assertNotIn('event:', body)
        payload = json.loads(body)
        self.assertEqual(payload['status'], 403)
        self.assertEqual(payload['code'], 'forbidden')
        # the GLib.Error raised in Python reached C with domain, code and
        # message: the body is the library's own mapping of that error
        expected = Symfonic.ErrorFrame.new_for_error(GLib.Error.new_literal(
            Symfonic.error_quark(), 'tenant is not yours', Symfonic.Error.FORBIDDEN))
        self.assertEqual(payload, json.loads(expected.to_json()))

    def test_head_phase_stage_admits_before_the_body(self):
        # listed last, it still runs first, before the body is read: a
        # body that is not even JSON gets its refusal, not a 400
        for body in ('{"query":', json.dumps({'query': 'hi'})):
            status, content_type, text = self.post('/api/v1/stream/head', body=body)
            self.assertEqual(status, 401, text)
            self.assertEqual(content_type, 'application/json')
            self.assertEqual(json.loads(text)['detail'], 'refused on the head')

    def test_server_still_serves_after_failures(self):
        # a raising Python hook must not have wedged the worker
        self.post('/api/v1/stream/boom')
        self.post('/api/v1/stream/forbid')
        status, _, body = self.post('/api/v1/stream/typed')
        self.assertEqual(status, 200)
        self.assertEqual(parse_sse(body)[-1][0], 'ResponseCompleteEvent')

    def test_long_transcript_through_python(self):
        # 2,000+ events, each a call into Python from the worker thread
        recorded = [e['data']['text'] for e in read_transcript('long')
                    if e['event'] == 'TextDeltaEvent']
        self.assertGreaterEqual(len(recorded), 2000)
        status, _, body = self.post('/api/v1/stream/upper-paced', transcript='long')
        self.assertEqual(status, 200)
        frames = parse_sse(body)
        deltas = [d['text'] for n, d in frames if n == 'TextDeltaEvent']
        self.assertEqual(deltas, [t.upper() for t in recorded])
        self.assertEqual(frames[-1][0], 'ResponseCompleteEvent')
        self.assertEqual(frames[-1][1]['text'], ''.join(recorded).upper())

    def test_long_burst_reaches_a_fast_client_whole(self):
        # time-scale=0 pushes the whole transcript in one main-loop
        # iteration; the SSE writer's 256-frame bound counts only frames the
        # socket has not taken yet, so a client that keeps up loses nothing.
        recorded = [e['data']['text'].upper() for e in read_transcript('long')
                    if e['event'] == 'TextDeltaEvent']
        status, _, body = self.post('/api/v1/stream/typed', transcript='long')
        self.assertEqual(status, 200)
        frames = parse_sse(body)
        names = [n for n, _ in frames]
        self.assertEqual(names[-1], 'ResponseCompleteEvent')
        self.assertEqual(names.count('ResponseCompleteEvent'), 1)
        self.assertNotIn('error', names)
        self.assertEqual(names.count('ConsolidationScheduledEvent'), 1)
        self.assertEqual(frames[-1][1]['text'], ''.join(recorded))
        self.assertEqual([d['text'] for n, d in frames if n == 'TextDeltaEvent'], recorded)

    def test_every_transcript_keeps_the_seed_order(self):
        names = sorted(f[:-len('.jsonl')]
                       for f in os.listdir(os.path.join(DATA_DIR, 'transcripts'))
                       if f.endswith('.jsonl'))
        self.assertIn('plain', names)
        for name in names:
            with self.subTest(transcript=name):
                status, content_type, body = self.post('/api/v1/stream/raw-paced',
                                                       transcript=name)
                self.assertEqual(status, 200, body)
                self.assertEqual(content_type, 'text/event-stream')
                self.check_order(name, parse_sse(body))

    def check_order(self, name, frames):
        names = [n for n, _ in frames]
        terminals = [n for n in names if n in ('ResponseCompleteEvent', 'error')]
        # exactly one terminal, last
        self.assertEqual(len(terminals), 1, names)
        self.assertIn(names[-1], terminals)
        recorded = read_transcript(name)
        deltas = [d['text'] for n, d in frames if n == 'TextDeltaEvent']
        self.assertEqual(deltas, [e['data']['text'] for e in recorded
                                  if e['event'] == 'TextDeltaEvent'][:len(deltas)])
        if names[-1] == 'error':
            self.assertEqual(recorded[-1]['event'], 'error')
            self.assertNotIn('ConsolidationScheduledEvent', names)
            return

        def first(kind):
            return names.index(kind) if kind in names else None

        def last(kind):
            return len(names) - 1 - names[::-1].index(kind) if kind in names else None

        text_first, text_last = first('TextDeltaEvent'), last('TextDeltaEvent')
        self.assertIsNotNone(text_first, names)
        if 'ActivationEvent' in names:
            self.assertLess(last('ActivationEvent'), text_first)
        self.assertLessEqual(names.count('MemoryExtractedEvent'), 1)
        self.assertEqual(names.count('ConsolidationScheduledEvent'), 1)
        consolidation = first('ConsolidationScheduledEvent')
        self.assertLess(text_last, consolidation)
        if 'MemoryExtractedEvent' in names:
            self.assertLess(text_last, first('MemoryExtractedEvent'))
            self.assertLess(first('MemoryExtractedEvent'), consolidation)
        for graph in ('GraphNodeCreatedEvent', 'GraphEdgeCreatedEvent'):
            if graph in names:
                self.assertGreater(first(graph), consolidation)
        for kind in ('ThinkingDeltaEvent', 'ToolCallStartEvent', 'ToolResultEvent'):
            if kind in names:
                self.assertLess(last(kind), consolidation)
        self.assertEqual(frames[-1][1]['text'], ''.join(deltas))
        # the file's own terminal agrees with its deltas
        self.assertEqual(recorded[-1]['event'], 'ResponseCompleteEvent')
        self.assertEqual(recorded[-1]['data']['text'], ''.join(deltas))

    # A hook that returns FALSE without setting a GError (from Python: an
    # uncaught exception that is not a GLib.Error, or a missing `return True`)
    # must still fail its stream, never end it as a success or hang it.

    def test_process_false_without_error_is_an_error_frame(self):
        status, content_type, body = self.post('/api/v1/stream/false')
        self.assertEqual(status, 200, body)
        frames = parse_sse(body)
        names = [n for n, _ in frames]
        self.assertEqual(names.count('error'), 1, body)
        self.assertEqual(names[-1], 'error', body)
        self.assertNotIn('ResponseCompleteEvent', names, body)

    def test_admit_false_without_error_is_refused(self):
        session = Soup.Session(timeout=3)
        status, content_type, body = self.post('/api/v1/stream/admit-false',
                                                session=session)
        self.assertGreaterEqual(status, 400, body)
        self.assertEqual(content_type, 'application/json')
        self.assertNotIn('event:', body)


class LibraryTestCase(unittest.TestCase):
    """Plain library calls from Python."""

    def test_event_from_json(self):
        event = Symfonic.Event.new_from_json('TextDeltaEvent', json_node('{"text":"Hel"}'))
        self.assertEqual(event.get_kind(), Symfonic.EventKind.TEXT_DELTA)
        self.assertEqual(event.get_name(), 'TextDeltaEvent')
        self.assertEqual(event.get_text(), ('Hel', 3))
        self.assertEqual(json.loads(event.to_json()), {'text': 'Hel'})

        event = Symfonic.Event.new_from_json(
            'ToolCallStartEvent',
            json_node('{"tool_name":"get_weather","tool_call_id":"call_1"}'))
        self.assertEqual(event.get_kind(), Symfonic.EventKind.TOOL_CALL_START)
        self.assertEqual(event.get_text(), (None, 0))
        self.assertEqual(event.get_payload().get_string_member('tool_name'), 'get_weather')
        self.assertEqual(json.loads(event.to_json()),
                         {'tool_name': 'get_weather', 'tool_call_id': 'call_1'})

    def test_config_file_reader(self):
        with self.assertRaises(GLib.Error) as caught:
            Symfonic.ConfigFile.new_from_data('[a]\nk=1\nk=2\n', -1, 't.ini')
        self.assertEqual(caught.exception.message,
                         't.ini:3: [a] k: expected each key once in a group, found it already on line 2')

        config = Symfonic.ConfigFile.new_from_data('[a]\n\nk=1\n', -1, 't.ini')
        self.assertEqual(config.get_line('a', 'k'), 3)
        self.assertEqual(config.get_key_file().get_string('a', 'k'), '1')
        with self.assertRaises(GLib.Error) as caught:
            config.set_error_literal('a', 'k', 'too small')
        self.assertTrue(caught.exception.matches(Symfonic.error_quark(), Symfonic.Error.CONFIG))
        self.assertEqual(caught.exception.message, 't.ini:3: [a] k: too small')

    def test_event_from_json_rejects(self):
        cases = [
            ('NoSuchEvent', '{"text":"x"}'),
            ('TextDeltaEvent', '{}'),
            ('TextDeltaEvent', '{"text":3}'),
            ('TextDeltaEvent', '["text"]'),
            ('MemoryExtractedEvent', '{"ops":{}}'),
            ('ActivationEvent', '{"node_id":"n1"}'),
        ]
        for name, data in cases:
            with self.subTest(name=name, data=data):
                with self.assertRaises(GLib.Error) as caught:
                    Symfonic.Event.new_from_json(name, json_node(data))
                self.assertTrue(caught.exception.matches(Symfonic.error_quark(),
                                                         Symfonic.Error.UPSTREAM))

    def test_event_constructors(self):
        event = Symfonic.Event.new_response_complete('done', 12)
        self.assertEqual(event.get_kind(), Symfonic.EventKind.RESPONSE_COMPLETE)
        self.assertEqual(event.get_duration_ms(), 12)
        self.assertEqual(json.loads(event.to_json()), {'text': 'done', 'duration_ms': 12})
        self.assertEqual(Symfonic.event_kind_to_name(Symfonic.EventKind.THINKING_DELTA),
                         'ThinkingDeltaEvent')

    def test_invocation_from_json(self):
        invocation = Symfonic.Invocation.new_from_json(json_node(
            '{"query":"hi","session_id":"s:1:2","tenant_id":"ignored","extra":1}'))
        self.assertEqual(invocation.get_query(), 'hi')
        self.assertEqual(invocation.get_session_id(), 's:1:2')
        # identity never comes from the body
        self.assertNotEqual(invocation.get_tenant_id(), 'ignored')

    def test_invocation_rejects_empty_query(self):
        for body in ('{"query":""}', '{}', '{"query":null}', '{"query":3}', '[]'):
            with self.subTest(body=body):
                with self.assertRaises(GLib.Error) as caught:
                    Symfonic.Invocation.new_from_json(json_node(body))
                self.assertTrue(caught.exception.matches(Symfonic.error_quark(),
                                                         Symfonic.Error.BAD_REQUEST),
                                caught.exception)

    def test_error_frame_json(self):
        frame = Symfonic.ErrorFrame.new(429, 'slow down', 'rate_limited')
        frame.set_header('Retry-After', '3')
        self.assertEqual(frame.get_status(), 429)
        self.assertEqual(frame.get_code(), 'rate_limited')
        self.assertEqual(frame.get_header('Retry-After'), '3')
        self.assertEqual(json.loads(frame.to_json()),
                         {'detail': 'slow down', 'status': 429, 'code': 'rate_limited'})
        sse = frame.to_sse()
        self.assertTrue(sse.startswith('event: error\ndata: '), sse)
        self.assertTrue(sse.endswith('\n\n'), sse)
        self.assertEqual(parse_sse(sse), [('error', json.loads(frame.to_json()))])

        # no code: no "code" member
        frame = Symfonic.ErrorFrame.new(400, 'bad', None)
        self.assertEqual(json.loads(frame.to_json()), {'detail': 'bad', 'status': 400})

    def test_error_frame_for_error(self):
        error = GLib.Error.new_literal(Symfonic.error_quark(), 'not yours',
                                       Symfonic.Error.FORBIDDEN)
        frame = Symfonic.ErrorFrame.new_for_error(error)
        self.assertEqual(json.loads(frame.to_json()),
                         {'detail': 'not yours', 'status': 403, 'code': 'forbidden'})

        # server-side: opaque detail, never the message
        error = GLib.Error.new_literal(Symfonic.error_quark(), 'secret path /etc/x',
                                       Symfonic.Error.FAILED)
        payload = json.loads(Symfonic.ErrorFrame.new_for_error(error).to_json())
        self.assertEqual(payload['status'], 500)
        self.assertNotIn('secret', payload['detail'])
        self.assertNotIn('code', payload)


if __name__ == '__main__':
    if not DATA_DIR:
        sys.exit('SYMFONIC_TEST_DATA_DIR is not set')
    unittest.main(verbosity=2)
