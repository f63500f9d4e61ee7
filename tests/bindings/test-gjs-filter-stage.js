// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Symfonic.FilterStage subclassed in JavaScript, served from a gjs
// program: the stage supplies a filter written in JavaScript
// (vfunc_create_filter), looks at deltas before they are filtered, counts
// what the filter did, adds its own event when the answer closes (and
// chains up), and overrides a Symfonic.Stage hook of its own; the base
// class does the rest, on the thread of the default main context, where
// gjs runs. Exits 0 when every check holds.
//
// Needs GI_TYPELIB_PATH and LD_LIBRARY_PATH on the build's gateway folder.

import GLib from 'gi://GLib?version=2.0';
import GObject from 'gi://GObject?version=2.0';
import Gio from 'gi://Gio?version=2.0';
import Json from 'gi://Json?version=1.0';
import Soup from 'gi://Soup?version=3.0';
import Symfonic from 'gi://Symfonic?version=1.0';
import System from 'system';

const TAG = 'secret';
const ANSWER = 'Keep this secret, and that secret too.';
const ANSWER_CLEAN = 'Keep this [x], and that [x] too.';

// Replaces TAG with [x] in split text, withholding what could still
// become TAG; keeps the stream's count, as a stage written in JavaScript
// keeps its per-stream state on its filter.
const SecretFilter = GObject.registerClass({
    GTypeName: 'SymfonicTestJsSecretFilter',
}, class SecretFilter extends Symfonic.TextFilter {
    _init() {
        super._init();
        this.withheld = ['', ''];
        this.replaced = 0;
        this.counted = 0;
        this.published = false;
    }

    // the text's length is the array's own in JavaScript
    vfunc_filter(channel, text, out) {
        let whole = this.withheld[channel] + new TextDecoder().decode(text);
        this.replaced += whole.split(TAG).length - 1;
        whole = whole.split(TAG).join('[x]');
        let keep = 0;
        for (let k = Math.min(TAG.length - 1, whole.length); k > 0; k--) {
            if (whole.endsWith(TAG.slice(0, k))) {
                keep = k;
                break;
            }
        }
        this.withheld[channel] = whole.slice(whole.length - keep);
        out.append(whole.slice(0, whole.length - keep));
    }

    vfunc_flush(channel, out) {
        out.append(this.withheld[channel]);
        this.withheld[channel] = '';
    }
});

// It overrides hooks of Symfonic.Stage too, which gjs allows a subclass
// only when it lists the interface again.
const SecretStage = GObject.registerClass({
    GTypeName: 'SymfonicTestJsSecretStage',
    Implements: [Symfonic.Stage],
}, class SecretStage extends Symfonic.FilterStage {
    _init(params) {
        super._init(params);
        this.uses = [];
        this.replaced = 0;
    }

    vfunc_get_admission_phase() {
        return Symfonic.AdmissionPhase.HEAD;
    }

    vfunc_admit(stream) {
        if (stream.get_invocation().get_header('X-Refuse') !== null)
            throw new GLib.Error(Symfonic.error_quark(), Symfonic.Error.FORBIDDEN, 'refused on the head');
        return true;
    }

    vfunc_create_filter(stream, use) {
        this.uses.push(use);
        return new SecretFilter();
    }

    vfunc_before_filter(stream, delta) {
        if (delta.get_text()[0].includes('BOOM'))
            throw new GLib.Error(Symfonic.error_quark(), Symfonic.Error.FAILED, 'the delta went BOOM');
        return true;
    }

    vfunc_after_filter(stream, filter) {
        if (filter !== this.get_filter(stream))
            throw new Error('after_filter was given another filter than the stream\'s');
        this.replaced += filter.replaced - filter.counted;
        filter.counted = filter.replaced;
    }

    vfunc_close_answer(stream, closing) {
        const filter = this.get_filter(stream);
        if (!filter.published) {
            filter.published = true;
            const parser = new Json.Parser();
            parser.load_from_data(JSON.stringify({ops: [{op: 'secrets', count: filter.replaced}]}), -1);
            stream.emit(Symfonic.Event.new(Symfonic.EventKind.MEMORY_EXTRACTED, parser.get_root().get_object()));
        }
        return super.vfunc_close_answer(stream, closing);
    }
});

function line(name, text) {
    const data = {text};
    if (name === 'ResponseCompleteEvent')
        data.duration_ms = 1;
    return JSON.stringify({event: name, data, delay_ms: 0});
}

const CONSOLIDATION = JSON.stringify({
    event: 'ConsolidationScheduledEvent', data: {report: {}, graph_mutations: 0}, delay_ms: 0,
});
const TRANSCRIPTS = {
    'closing': [line('TextDeltaEvent', 'tell no sec'), CONSOLIDATION, line('ResponseCompleteEvent', 'tell no secret')],
    'ending': [line('ThinkingDeltaEvent', 'my secret plan, my sec'), line('TextDeltaEvent', 'the secret and the secr')],
    'failing': [line('TextDeltaEvent', 'a secret then sec'), line('TextDeltaEvent', 'BOOM'), line('TextDeltaEvent', 'ret')],
    'empty-terminal': [line('TextDeltaEvent', 'no secret here'), line('ResponseCompleteEvent', '')],
};
for (let cut = 0; cut <= ANSWER.length; cut++) {
    TRANSCRIPTS[`split-${cut}`] = [line('TextDeltaEvent', ANSWER.slice(0, cut)),
        line('TextDeltaEvent', ANSWER.slice(cut)), CONSOLIDATION, line('ResponseCompleteEvent', ANSWER)];
}

const dir = GLib.dir_make_tmp('gjs-filter-stage-XXXXXX');
for (const [name, lines] of Object.entries(TRANSCRIPTS))
    GLib.file_set_contents(`${dir}/${name}.jsonl`, `${lines.join('\n')}\n`);

const PIPELINE = `
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
transcripts=${dir}
default-transcript=closing
time-scale=0

[stage:secret]
type=js-secret
`;

let failures = 0;
function check(what, actual, expected) {
    if (JSON.stringify(actual) === JSON.stringify(expected))
        return;
    printerr(`FAIL: ${what}: ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
    failures++;
}

Symfonic.register_stage_type(SecretStage.$gtype, 'js-secret');
// a program that defines a stage type in JavaScript declares where it runs
Symfonic.stage_type_set_main_context(SecretStage.$gtype, GLib.MainContext.default());
check('a FilterStage subclass is a stage', GObject.type_is_a(SecretStage.$gtype, Symfonic.Stage.$gtype), true);

const registry = Symfonic.Registry.get_default();
registry.scan();
const pipeline = Symfonic.Pipeline.new_from_data(registry, PIPELINE, -1, Gio.File.new_for_path(dir), 'js.pipeline');
const stage = pipeline.get_stage('secret');
const server = Symfonic.Server.new(pipeline);
server.start();

const loop = new GLib.MainLoop(null, false);
const session = new Soup.Session({timeout: 20});

// POSTs to the route with @transcript; resolves to the status and body.
// The stages run on this thread: the request must not block it.
function post(transcript, headers = {}) {
    const message = Soup.Message.new('POST', `http://127.0.0.1:${server.get_port()}/secret`);
    message.get_request_headers().append('X-Symfonic-Transcript', transcript);
    for (const [name, value] of Object.entries(headers))
        message.get_request_headers().append(name, value);
    message.set_request_body_from_bytes('application/json',
        new GLib.Bytes(new TextEncoder().encode('{"query":"What is the secret?"}')));
    return new Promise((resolve, reject) => {
        session.send_and_read_async(message, GLib.PRIORITY_DEFAULT, null, (source, result) => {
            try {
                resolve([message.get_status(), new TextDecoder().decode(source.send_and_read_finish(result).toArray())]);
            } catch (error) {
                reject(error);
            }
        });
    });
}

const LETTERS = {
    TextDeltaEvent: 't', ThinkingDeltaEvent: 'h', MemoryExtractedEvent: 'm',
    ConsolidationScheduledEvent: 's', ResponseCompleteEvent: 'r', error: 'e',
};

// the frames of a stream: [event, data]
function frames(body) {
    return body.split('\n\n').filter(block => block.includes('\nevent: ')).map(block => [
        block.split('\nevent: ')[1].split('\n')[0],
        JSON.parse(block.split('\ndata: ')[1]),
    ]);
}

const shape = list => list.map(([event]) => LETTERS[event] ?? '?').join('');
const joined = (list, name) => list.filter(([event]) => event === name).map(([, data]) => data.text).join('');
const counts = list => list.filter(([event]) => event === 'MemoryExtractedEvent').map(([, data]) => data.ops[0].count);

async function run() {
    const replaced = stage.replaced;
    for (let cut = 0; cut <= ANSWER.length; cut++) {
        const [status, body] = await post(`split-${cut}`);
        const list = frames(body);
        check(`split ${cut}: status`, status, 200);
        check(`split ${cut}: deltas`, joined(list, 'TextDeltaEvent'), ANSWER_CLEAN);
        check(`split ${cut}: no empty delta`, list.some(([event, data]) => event === 'TextDeltaEvent' && data.text === ''), false);
        check(`split ${cut}: shape`, /^t+msr$/.test(shape(list)), true);
        check(`split ${cut}: count`, counts(list), [2]);
        check(`split ${cut}: terminal`, list.at(-1)[1].text, ANSWER_CLEAN);
    }
    check('replacements counted', stage.replaced - replaced, 2 * (ANSWER.length + 1));

    let [, body] = await post('closing');
    check('closing: shape', shape(frames(body)), 'ttmsr');
    check('closing: deltas', joined(frames(body), 'TextDeltaEvent'), 'tell no sec');

    [, body] = await post('ending');
    check('ending: shape', shape(frames(body)), 'hthtmsr');
    check('ending: thinking', joined(frames(body), 'ThinkingDeltaEvent'), 'my [x] plan, my sec');
    check('ending: deltas', joined(frames(body), 'TextDeltaEvent'), 'the [x] and the secr');
    check('ending: count', counts(frames(body)), [2]);

    stage.uses = [];
    [, body] = await post('empty-terminal');
    check('empty terminal: deltas', joined(frames(body), 'TextDeltaEvent'), 'no [x] here');
    check('empty terminal: no terminal filter', stage.uses, [Symfonic.FilterUse.STREAM]);
    stage.uses = [];
    await post('closing');
    check('terminal with text: its own filter', stage.uses, [Symfonic.FilterUse.STREAM, Symfonic.FilterUse.TERMINAL]);

    let status;
    [status, body] = await post('failing');
    check('failing: status', status, 200);
    check('failing: frames', frames(body).map(([event]) => event), ['TextDeltaEvent', 'error']);
    check('failing: released before', frames(body)[0][1], {text: 'a [x] then '});
    check('failing: error status', frames(body)[1][1].status, 500);
    check('failing: nothing of the refused delta', body.includes('BOOM'), false);

    [status, body] = await post('closing', {'X-Refuse': '1'});
    check('refused: status', status, 403);
    check('refused: body', JSON.parse(body), {detail: 'refused on the head', status: 403, code: 'forbidden'});
}

run().catch(error => {
    printerr(`FAIL: ${error.message}\n${error.stack}`);
    failures++;
}).finally(() => loop.quit());
loop.run();
server.stop();
for (const name of Object.keys(TRANSCRIPTS))
    GLib.unlink(`${dir}/${name}.jsonl`);
GLib.rmdir(dir);

System.exit(failures === 0 ? 0 : 1);
