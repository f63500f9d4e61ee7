// SPDX-License-Identifier: LGPL-2.1-or-later
//
// A stage written in JavaScript, served from a gjs program: every hook,
// the admission phase it declares included, runs on the thread of the
// default main context, the only one gjs runs code on, while the server's
// worker threads serve its streams. Exits 0 when every check holds.
//
// Needs GI_TYPELIB_PATH and LD_LIBRARY_PATH on the build's gateway folder
// and SYMFONIC_TEST_DATA_DIR on the source's data folder.

import GLib from 'gi://GLib?version=2.0';
import GObject from 'gi://GObject?version=2.0';
import Gio from 'gi://Gio?version=2.0';
import Soup from 'gi://Soup?version=3.0';
import Symfonic from 'gi://Symfonic?version=1.0';
import System from 'system';

const QUERY = 'Why is the sky blue?';
const REFUSED = 'Whose tenant is this?';

// Declares the body phase, which it needs to read the query, and answers
// in a header with the query it saw and in the deltas with their length;
// refuses the query REFUSED as a GLib.Error.
const QueryStage = GObject.registerClass({
    GTypeName: 'SymfonicTestJsQueryStage',
    Implements: [Symfonic.Stage],
}, class QueryStage extends GObject.Object {
    vfunc_get_admission_phase() {
        return Symfonic.AdmissionPhase.BODY;
    }

    vfunc_admit(stream) {
        if (stream.get_invocation().get_query() === REFUSED)
            throw new GLib.Error(Symfonic.error_quark(), Symfonic.Error.FORBIDDEN, 'not yours');
        stream.set_response_header('X-Query', String(stream.get_invocation().get_query()));
        return true;
    }

    vfunc_process(stream, event) {
        if (event.get_kind() === Symfonic.EventKind.TEXT_DELTA)
            event = Symfonic.Event.new_text_delta(`[${event.get_text()[0].length}]`);
        stream.emit(event);
        return true;
    }
});

// The same, told to run on the stream's thread (it declares none of its
// own): JavaScript cannot, and it inherits its parent's, so it still runs
// on the default main context.
const PinnedQueryStage = GObject.registerClass({
    GTypeName: 'SymfonicTestJsPinnedQueryStage',
}, class PinnedQueryStage extends QueryStage {});

const PIPELINE = `
[gateway]
listen=127.0.0.1:0
workers=2

[route:query]
path=/api/v1/stream/typed
kind=typed
source=replay
stages=query

[route:pinned]
path=/api/v1/stream/pinned
kind=typed
source=replay
stages=pinned

[source:replay]
type=replay
transcripts=${GLib.getenv('SYMFONIC_TEST_DATA_DIR')}/transcripts
default-transcript=plain
time-scale=0

[stage:query]
type=js-query

[stage:pinned]
type=js-query-pinned
`;

let failures = 0;
function check(what, actual, expected) {
    if (actual === expected)
        return;
    printerr(`FAIL: ${what}: ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
    failures++;
}

// the library knows no language: a program that defines a stage type in
// JavaScript declares where it runs
Symfonic.register_stage_type(QueryStage.$gtype, 'js-query');
Symfonic.stage_type_set_main_context(QueryStage.$gtype, GLib.MainContext.default());
Symfonic.register_stage_type(PinnedQueryStage.$gtype, 'js-query-pinned');
Symfonic.stage_type_set_main_context(PinnedQueryStage.$gtype, null);
// both run on the default one
GLib.MainContext.default().acquire();
for (const type of [QueryStage, PinnedQueryStage]) {
    check(`${type.$gtype.name} runs on the default main context`,
        Symfonic.stage_type_get_main_context(type.$gtype)?.is_owner(), true);
}
GLib.MainContext.default().release();

const registry = Symfonic.Registry.get_default();
registry.scan();
const pipeline = Symfonic.Pipeline.new_from_data(registry, PIPELINE, -1,
    Gio.File.new_for_path(GLib.get_current_dir()), 'js.pipeline');
const server = Symfonic.Server.new(pipeline);
server.start();

const loop = new GLib.MainLoop(null, false);
const session = new Soup.Session({timeout: 20});

// POSTs @query to @path; resolves to the message and its body
function post(path, query = QUERY) {
    const message = Soup.Message.new('POST', `http://127.0.0.1:${server.get_port()}${path}`);
    message.set_request_body_from_bytes('application/json',
        new GLib.Bytes(new TextEncoder().encode(JSON.stringify({query}))));
    // the stages run on this thread: the request must not block it
    return new Promise((resolve, reject) => {
        session.send_and_read_async(message, GLib.PRIORITY_DEFAULT, null, (source, result) => {
            try {
                resolve([message, new TextDecoder().decode(source.send_and_read_finish(result).toArray())]);
            } catch (error) {
                reject(error);
            }
        });
    });
}

async function checkRoute(path) {
    const [message, body] = await post(path);
    check(`${path}: status`, message.get_status(), 200);
    check(`${path}: query the admission hook saw`,
        message.get_response_headers().get_one('X-Query'), QUERY);
    const frames = body.split('\n\n').filter(block => block.startsWith('id: '));
    const deltas = frames.filter(block => block.includes('\nevent: TextDeltaEvent\n'))
        .map(block => JSON.parse(block.split('\ndata: ')[1]).text);
    check(`${path}: deltas`, JSON.stringify(deltas), JSON.stringify(['[18]', '[22]', '[26]', '[33]']));
    check(`${path}: terminal`, frames.at(-1)?.includes('\nevent: ResponseCompleteEvent\n'), true);
}

async function checkRefusal(path) {
    const [message, body] = await post(path, REFUSED);
    check(`${path}: refusal status`, message.get_status(), 403);
    check(`${path}: refusal`, body, '{"detail":"not yours","status":403,"code":"forbidden"}');
}

checkRoute('/api/v1/stream/typed')
    .then(() => checkRoute('/api/v1/stream/pinned'))
    .then(() => checkRefusal('/api/v1/stream/typed'))
    .catch(error => {
        printerr(`FAIL: ${error.message}`);
        failures++;
    })
    .finally(() => loop.quit());
loop.run();
server.stop();

System.exit(failures === 0 ? 0 : 1);
