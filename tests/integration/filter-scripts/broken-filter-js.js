// A JavaScript script plugin for the loader tests: a Symfonic.FilterStage
// whose filter upper-cases the text, and whose before_filter hook fails on
// a delta that says "boom" (in any case) with an exception that is not a
// GLib.Error, as a bug would.
import GObject from 'gi://GObject';
import Symfonic from 'gi://Symfonic?version=1.0';

const UpperFilter = GObject.registerClass(
class UpperFilter extends Symfonic.TextFilter {
    vfunc_filter(channel, bytes, out) {
        out.append(new TextDecoder().decode(bytes).toUpperCase());
    }
});

const BrokenFilterStage = GObject.registerClass({
    GTypeName: 'TestJsBrokenFilterStage',
}, class BrokenFilterStage extends Symfonic.FilterStage {
    vfunc_create_filter(stream, use) {
        return new UpperFilter();
    }

    vfunc_before_filter(stream, delta) {
        if (delta.get_text()[0].toLowerCase().includes('boom'))
            throw new TypeError('the filter stage was told to fail');
        return true;
    }
});

Symfonic.register_stage_type(BrokenFilterStage.$gtype, 'js-broken-filter');
