#!/usr/bin/env -S gjs -m
// serve.js: serves a pipeline file from JavaScript, with a stage of its own
//
// SPDX-License-Identifier: LGPL-2.1-or-later
//
//   serve.js PIPELINE [--listen HOST:PORT]
//
// Defines the `tenant-tally` stage, which pipelines use by `type=` next to
// the built-in stages: it numbers each tenant's streams in a response header
// and logs every stream's deltas when it finishes. SIGINT or SIGTERM drain
// the server (a second one ends the streams left), SIGHUP reloads the file.

import GLib from 'gi://GLib?version=2.0';
import GObject from 'gi://GObject?version=2.0';
import Gio from 'gi://Gio?version=2.0';
import Symfonic from 'gi://Symfonic?version=1.0';
import System from 'system';

const PROGRAM = 'serve.js';
const SIGHUP = 1, SIGINT = 2, SIGTERM = 15;
const DEFAULT_HEADER = 'X-Tenant-Streams';

// One stream's count, kept in the stream.
const Tally = GObject.registerClass({
    GTypeName: 'ServeTenantTallyStateJs',
}, class Tally extends GObject.Object {
    constructor(tenant, number) {
        super();
        this.tenant = tenant;
        this.number = number;
        this.deltas = 0;
        this.characters = 0;
    }
});

// Numbers each tenant's streams and logs what every stream answered. Its
// hooks run on the thread of the default main context, the only one gjs
// runs code on: the library runs a stage type defined in JavaScript there,
// and the workers hand it their streams.
const TenantTally = GObject.registerClass({
    GTypeName: 'ServeTenantTallyJs',
    Implements: [Symfonic.Stage],
    Properties: {
        'header': GObject.ParamSpec.string('header', 'Header',
            "Response header carrying the number of the tenant's stream",
            GObject.ParamFlags.READWRITE, DEFAULT_HEADER),
    },
}, class TenantTally extends GObject.Object {
    constructor(params = {}) {
        super(params);
        this._streams = new Map();
    }

    get header() {
        return this._header ?? DEFAULT_HEADER;
    }

    set header(value) {
        this._header = value;
        this.notify('header');
    }

    vfunc_admit(stream) {
        const tenant = stream.get_invocation().get_tenant_id() ?? '-';
        const number = (this._streams.get(tenant) ?? 0) + 1;
        this._streams.set(tenant, number);
        stream.set_stage_state(this, new Tally(tenant, number));
        stream.set_response_header(this.header, String(number));
        return true;
    }

    vfunc_process(stream, event) {
        if (event.get_kind() === Symfonic.EventKind.TEXT_DELTA) {
            const tally = stream.get_stage_state(this);
            tally.deltas++;
            const [text] = event.get_text();
            for (const _ of text)
                tally.characters++;
        }
        stream.emit(event);
        return true;
    }

    vfunc_finish(stream) {
        const tally = stream.get_stage_state(this);
        print(`tenant-tally: tenant ${tally.tenant}, stream ${tally.number}: ` +
              `${tally.deltas} deltas, ${tally.characters} characters`);
        return true;
    }
});

function parseArguments(args) {
    let pipeline = null, listen = null;
    for (let i = 0; i < args.length; i++) {
        if (args[i] === '--listen' && i + 1 < args.length)
            listen = args[++i];
        else if (args[i].startsWith('--listen='))
            listen = args[i].slice('--listen='.length);
        else if (pipeline === null && !args[i].startsWith('-'))
            pipeline = args[i];
        else
            return null;
    }
    return pipeline === null ? null : {pipeline, listen};
}

const args = parseArguments(System.programArgs);
if (args === null) {
    printerr(`usage: ${PROGRAM} PIPELINE [--listen HOST:PORT]`);
    System.exit(2);
}

Symfonic.register_stage_type(TenantTally.$gtype, 'tenant-tally');
// gjs runs JavaScript only on the thread of the default main context: the
// workers hand the stage its streams' events there
Symfonic.stage_type_set_main_context(TenantTally.$gtype, GLib.MainContext.default());
const registry = Symfonic.Registry.get_default();
const file = Gio.File.new_for_commandline_arg(args.pipeline);
const display = file.get_parse_name();
let server;
try {
    registry.scan();
    server = Symfonic.Server.new(Symfonic.Pipeline.new_from_file(registry, file));
    if (args.listen !== null)
        server.set_listen(args.listen);
    server.start();
} catch (error) {
    // a pipeline's error names its file, line and key
    printerr(`${PROGRAM}: ${error.message}`);
    System.exit(1);
}

const loop = new GLib.MainLoop(null, false);
// cancelled at a second stop signal: the drain ends streams at once
const hurry = new Gio.Cancellable();
let stopping = false;

function onStop() {
    if (stopping) {
        hurry.cancel();
        return GLib.SOURCE_CONTINUE;
    }
    stopping = true;
    print(`${PROGRAM}: shutting down`);
    server.drain_async(hurry, (source, result) => {
        source.drain_finish(result);
        loop.quit();
    });
    return GLib.SOURCE_CONTINUE;
}

function onReload() {
    if (stopping)
        return GLib.SOURCE_CONTINUE;
    try {
        server.reload(registry);
        print(`${PROGRAM}: reloaded ${display}`);
    } catch (error) {
        printerr(`${PROGRAM}: reload refused, still serving the previous pipeline: ${error.message}`);
    }
    return GLib.SOURCE_CONTINUE;
}

GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, SIGINT, onStop);
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, SIGTERM, onStop);
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, SIGHUP, onReload);
print(`${PROGRAM}: serving ${display} on ${server.dup_uri()}`);
loop.run();
server.stop();
