# A script plugin that raises while it loads: its load names line 5.
from gi.repository import Symfonic


raise RuntimeError('this plugin refuses to load')
