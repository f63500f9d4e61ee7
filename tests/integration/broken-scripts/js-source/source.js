// A source written in JavaScript: its hooks would run on the workers,
// where gjs answers nothing, so registering it fails at line 11.
import GObject from 'gi://GObject';
import Symfonic from 'gi://Symfonic';

const Source = GObject.registerClass({
    Implements: [Symfonic.Source],
}, class Source extends GObject.Object {
});

Symfonic.register_stage_type(Source.$gtype, 'js-source');
