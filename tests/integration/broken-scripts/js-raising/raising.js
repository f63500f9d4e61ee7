// A script plugin that throws while it loads: its load names line 6.
import GObject from 'gi://GObject';
import Symfonic from 'gi://Symfonic';

function refuse() {
    throw new Error('this plugin refuses to load');
}

refuse();
