// A JavaScript script plugin for the stuck-stage tests: passes every event
// on, but its process hook never returns on a text delta that says "spin",
// as a stage with a bug would.
import GObject from 'gi://GObject';
import Symfonic from 'gi://Symfonic';

const StuckStage = GObject.registerClass({
    GTypeName: 'TestJsStuckStage',
    Implements: [Symfonic.Stage],
}, class StuckStage extends GObject.Object {
    vfunc_process(stream, event) {
        if (event.get_kind() === Symfonic.EventKind.TEXT_DELTA && event.get_text()[0].includes('spin')) {
            for (;;) {
                // never returns
            }
        }
        stream.emit(event);
        return true;
    }
});

Symfonic.register_stage_type(StuckStage.$gtype, 'js-stuck');
