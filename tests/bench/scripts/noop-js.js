// The script-stage benchmark's JavaScript stage: passes every event on as
// it came, so that what the benchmark measures is the cost of running a
// JavaScript stage at all.
import GObject from 'gi://GObject';
import Symfonic from 'gi://Symfonic?version=1.0';

const NoopStage = GObject.registerClass({
    GTypeName: 'BenchNoopJsStage',
    Implements: [Symfonic.Stage],
}, class NoopStage extends GObject.Object {
    vfunc_process(stream, event) {
        stream.emit(event);
        return true;
    }
});

Symfonic.register_stage_type(NoopStage.$gtype, 'noop-js');
