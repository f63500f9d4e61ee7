// A script plugin that does not parse: its load names line 6.
import GObject from 'gi://GObject';
import Symfonic from 'gi://Symfonic';

function broken() {
    return );
}
