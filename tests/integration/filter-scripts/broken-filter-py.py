# A Python script plugin for the loader tests: a Symfonic.FilterStage whose
# filter upper-cases the text, and whose before_filter hook fails on a
# delta that says "boom" (in any case) with an exception that is not a
# GLib.Error, as a bug would.
from gi.repository import Symfonic


class UpperFilter(Symfonic.TextFilter):
    def do_filter(self, channel, text, length, out):
        out.append(bytes(text).decode('utf-8').upper())


class BrokenFilterStage(Symfonic.FilterStage):
    __gtype_name__ = 'TestPyBrokenFilterStage'

    def do_create_filter(self, stream, use):
        return UpperFilter()

    def do_before_filter(self, stream, delta):
        text, _ = delta.get_text()
        if 'boom' in text.lower():
            raise ValueError('the filter stage was told to fail')
        return True


Symfonic.register_stage_type(BrokenFilterStage.__gtype__, 'py-broken-filter')
