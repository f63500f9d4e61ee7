// SPDX-License-Identifier: LGPL-2.1-or-later
//
// A gjs program that loads JavaScript plugins, as the gjs loader sees it:
// the library knows no language, so a stage type the program defines and
// registers itself declares no thread of its own, while the stage type a
// script plugin registers runs on the default main context because its
// loader said so; loading the plugins leaves the program's own globals,
// and the modules it shares with them, as they were; and a script that
// registers a source is refused at the line where it does.
//
// Usage: gjs -m test-gjs-loader.js SCRIPTS_FOLDER JS_SOURCE_FOLDER

import GLib from 'gi://GLib?version=2.0';
import GObject from 'gi://GObject?version=2.0';
import Symfonic from 'gi://Symfonic?version=1.0';
import System from 'system';

const [scripts, sourceScripts] = System.programArgs;

let failures = 0;
function check(what, actual, expected) {
    if (actual === expected)
        return;
    printerr(`FAIL: ${what}: ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
    failures++;
}

function globalNames() {
    return new Set([...Object.getOwnPropertyNames(globalThis),
        ...Object.getOwnPropertySymbols(globalThis).map(symbol => symbol.toString())]);
}

// whether @type's stages run on the default main context
function runsOnDefault(type) {
    const context = Symfonic.stage_type_get_main_context(type);
    if (context === null)
        return false;
    const main = GLib.MainContext.default();
    if (!main.acquire())
        throw new Error('the test must own the default main context');
    const owned = context.is_owner();
    main.release();
    return owned;
}

const globals = globalNames();
const registerClass = GObject.registerClass;
const registerStageType = Symfonic.register_stage_type;

const HostStage = GObject.registerClass({
    GTypeName: 'SymfonicTestJsHostStage',
    Implements: [Symfonic.Stage],
}, class HostStage extends GObject.Object {});
Symfonic.register_stage_type(HostStage.$gtype, 'js-host-stage');

const registry = Symfonic.Registry.get_default();
registry.scan();
registry.load_directory(scripts);

// GType 0, G_TYPE_INVALID, reads as null
const loaded = registry.lookup('js-prefix');
check('the script registered js-prefix', loaded !== null, true);
check('the loader put js-prefix on the default main context', runsOnDefault(loaded), true);
check('the library guessed no affinity for the program\'s own JavaScript type',
    Symfonic.stage_type_get_main_context(HostStage.$gtype), null);

let refusal = null;
try {
    registry.load_directory(sourceScripts);
} catch (error) {
    refusal = error.message;
}
check('a JavaScript source is refused where it registers',
    refusal !== null && refusal.includes('source.js:11: the module threw an exception'), true);
check('and not registered', registry.lookup('js-source'), null);

check('GObject.registerClass is the program\'s', GObject.registerClass === registerClass, true);
check('Symfonic.register_stage_type is the program\'s',
    Symfonic.register_stage_type === registerStageType, true);
const now = globalNames();
check('globals added', [...now].filter(name => !globals.has(name)).join(', '), '');
check('globals removed', [...globals].filter(name => !now.has(name)).join(', '), '');

// the program's own classes are registered as it wrote them
const Later = GObject.registerClass({
    GTypeName: 'SymfonicTestJsLaterStage',
    Implements: [Symfonic.Stage],
}, class Later extends GObject.Object {
    vfunc_process(stream, event) {
        throw new TypeError('not wrapped');
    }
});
check('a class registered after the load keeps its own hooks',
    Object.getOwnPropertyDescriptor(Later.prototype, 'vfunc_process').value.toString().includes('not wrapped'),
    true);

System.exit(failures === 0 ? 0 : 1);
