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

// Redacts the answer; withholds its trailing run of address characters,
// which the next delta may still turn into an address. The thinking
// passes as it is.
const EmailRedactorFilter = GObject.registerClass({
    GTypeName: 'SymfonicExampleEmailRedactorJsFilter',
}, class EmailRedactorFilter extends Symfonic.TextFilter {
    _init(replacement) {
        super._init();
        this.replacement = replacement;
        this.withheld = '';
    }

    _redact(text) {
        return text.replace(ADDRESS, () => this.replacement);
    }

    // whole characters, as bytes (the array carries its length)
    vfunc_filter(channel, bytes, out) {
        const piece = new TextDecoder().decode(bytes);
        if (channel !== Symfonic.TextChannel.ANSWER) {
            out.append(piece);
            return;
        }
        const text = this.withheld + piece;
        let cut = text.length;
        while (cut > 0 && ADDRESS_CHAR.test(text[cut - 1]))
            cut--;
        if (text.length - cut > MAX_WITHHELD_BYTES)
            cut = text.length;
        this.withheld = text.slice(cut);
        out.append(this._redact(text.slice(0, cut)));
    }

    vfunc_flush(channel, out) {
        if (channel !== Symfonic.TextChannel.ANSWER)
            return;
        out.append(this._redact(this.withheld));
        this.withheld = '';
    }
});

// A Symfonic.FilterStage: it supplies the filter, and the base class keeps
// one per stream, passes the deltas through it, releases what it withholds
// before the events that close the answer and at the end, and cleans the
// terminal's text with a filter of its own. It lists Symfonic.Stage again
// because it overrides that interface's admission hooks too, which gjs
// allows a subclass only then.
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
}, class EmailRedactor extends Symfonic.FilterStage {
    vfunc_create_filter(stream, use) {
        return new EmailRedactorFilter(this.replacement);
    }

    vfunc_before_filter(stream, delta) {
        if (this.fail_marker && delta.get_kind() === Symfonic.EventKind.TEXT_DELTA &&
            delta.get_text()[0].includes(this.fail_marker)) {
            throw new GLib.Error(Symfonic.error_quark(), Symfonic.Error.FAILED,
                'The redactor met its fail marker');
        }
        return true;
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
});

Symfonic.register_stage_type(EmailRedactor.$gtype, 'email-redactor-js');
