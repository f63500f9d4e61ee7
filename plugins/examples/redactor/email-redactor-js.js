// email-redactor-js.js: replaces e-mail addresses in the answer, whatever way
// the upstream splits it into deltas
//
// SPDX-License-Identifier: LGPL-2.1-or-later
//
// A script plugin: put this file in a plugin folder and use
// `type=email-redactor-js` in a pipeline. It is an ES module, run once by
// the gateway's gjs loader on the gateway's main thread, where every hook
// of its stages then runs. The plugin is named after the file, so the name
// says the type it registers and differs from the C example's plugin
// (`email-redactor`), which a plugin path may hold too.

import GLib from 'gi://GLib';
import GObject from 'gi://GObject';
import Symfonic from 'gi://Symfonic?version=1.0';

const ADDRESS = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
// an address never holds anything else: text up to the last other
// character can be redacted at once
const ADDRESS_CHAR = /[A-Za-z0-9._%+@-]/;
// a run this long is not withheld any longer, so the stream keeps moving
// (address characters are ASCII: the run's length is its size in bytes)
const MAX_WITHHELD_BYTES = 512;

// The trailing run of address characters a stream's last delta ended
// with, which the next delta may still turn into an address.
const StreamState = GObject.registerClass({
    GTypeName: 'SymfonicExampleEmailRedactorJsState',
}, class StreamState extends GObject.Object {
    _init() {
        super._init();
        this.withheld = '';
    }
});

const EmailRedactor = GObject.registerClass({
    GTypeName: 'SymfonicExampleEmailRedactorJs',
    Implements: [Symfonic.Stage],
    Properties: {
        'replacement': GObject.ParamSpec.string('replacement', 'Replacement',
            'What every e-mail address is replaced with',
            GObject.ParamFlags.READWRITE | GObject.ParamFlags.CONSTRUCT_ONLY, '[email]'),
        'fail-marker': GObject.ParamSpec.string('fail-marker', 'Fail marker',
            'A text delta containing it fails the stream (empty: never)',
            GObject.ParamFlags.READWRITE | GObject.ParamFlags.CONSTRUCT_ONLY, ''),
        'refuse-tenant': GObject.ParamSpec.string('refuse-tenant', 'Refused tenant',
            'A tenant refused at admission (empty: none)',
            GObject.ParamFlags.READWRITE | GObject.ParamFlags.CONSTRUCT_ONLY, ''),
    },
}, class EmailRedactor extends GObject.Object {
    _redact(text) {
        return text.replace(ADDRESS, () => this.replacement);
    }

    _state(stream) {
        let state = stream.get_stage_state(this);
        if (state === null) {
            state = new StreamState();
            stream.set_stage_state(this, state);
        }
        return state;
    }

    _emit(stream, text) {
        if (text.length > 0)
            stream.emit(Symfonic.Event.new_text_delta(this._redact(text)));
    }

    _flush(stream) {
        const state = this._state(stream);
        const withheld = state.withheld;
        state.withheld = '';
        this._emit(stream, withheld);
    }

    vfunc_get_admission_phase() {
        return Symfonic.AdmissionPhase.HEAD;
    }

    vfunc_admit(stream) {
        const tenant = stream.get_invocation().get_tenant_id();
        if (this.refuse_tenant && tenant === this.refuse_tenant) {
            throw new GLib.Error(Symfonic.error_quark(), Symfonic.Error.FORBIDDEN,
                'This tenant may not use the route');
        }
        return true;
    }

    vfunc_process(stream, event) {
        const kind = event.get_kind();
        if (kind === Symfonic.EventKind.TEXT_DELTA) {
            const [delta] = event.get_text();
            if (this.fail_marker && delta.includes(this.fail_marker)) {
                throw new GLib.Error(Symfonic.error_quark(), Symfonic.Error.FAILED,
                    'The redactor met its fail marker');
            }
            const state = this._state(stream);
            const text = state.withheld + delta;
            let cut = text.length;
            while (cut > 0 && ADDRESS_CHAR.test(text[cut - 1]))
                cut--;
            if (text.length - cut > MAX_WITHHELD_BYTES)
                cut = text.length;
            state.withheld = text.slice(cut);
            this._emit(stream, text.slice(0, cut));
        } else if (kind === Symfonic.EventKind.RESPONSE_COMPLETE) {
            // the terminal carries the whole text: what was withheld comes
            // before it, and its own text is redacted the same way
            this._flush(stream);
            stream.emit(Symfonic.Event.new_response_complete(this._redact(event.get_text()[0]),
                event.get_duration_ms()));
        } else {
            // no text may follow an event that closes the answer: the
            // withheld text goes first
            if (Symfonic.EventKind.closes_answer(kind))
                this._flush(stream);
            stream.emit(event);
        }
        return true;
    }

    vfunc_finish(stream) {
        this._flush(stream);
        return true;
    }
});

Symfonic.register_stage_type(EmailRedactor.$gtype, 'email-redactor-js');
