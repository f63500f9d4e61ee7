# The script-stage benchmark's Python stage: passes every event on as it
# came, so that what the benchmark measures is the cost of running a
# Python stage at all.
from gi.repository import GObject, Symfonic


class NoopStage(GObject.Object, Symfonic.Stage):
    __gtype_name__ = 'BenchNoopPyStage'

    def do_process(self, stream, event):
        stream.emit(event)
        return True


Symfonic.register_stage_type(NoopStage.__gtype__, 'noop-py')
