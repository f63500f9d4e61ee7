// A JavaScript script plugin for the loader tests: puts its `prefix`
// before every text delta, and throws on a delta that says "boom" (in any
// case), as a script's own bug would.
import GObject from 'gi://GObject';
import Symfonic from 'gi://Symfonic';

const PrefixStage = GObject.registerClass({
    GTypeName: 'TestJsPrefixStage',
    Implements: [Symfonic.Stage],
    Properties: {
        'prefix': GObject.ParamSpec.string('prefix', 'Prefix', 'Put before every text delta',
            GObject.ParamFlags.READWRITE | GObject.ParamFlags.CONSTRUCT_ONLY, ''),
    },
}, class PrefixStage extends GObject.Object {
    vfunc_process(stream, event) {
        if (event.get_kind() === Symfonic.EventKind.TEXT_DELTA) {
            const [text] = event.get_text();
            if (text.toLowerCase().includes('boom'))
                throw new TypeError('the test stage was told to fail');
            event = Symfonic.Event.new_text_delta(this.prefix + text);
        }
        stream.emit(event);
        return true;
    }
});

Symfonic.register_stage_type(PrefixStage.$gtype, 'js-prefix');
