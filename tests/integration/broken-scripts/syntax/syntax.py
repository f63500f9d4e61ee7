# A script plugin that does not parse: its load names line 4.
from gi.repository import GObject, Symfonic

def broken(:
    pass
