# A Python script plugin for the loader tests: appends its `suffix` to
# every text delta, and fails on a delta that says "boom" (in any case).
from gi.repository import GObject, Symfonic


class SuffixStage(GObject.Object, Symfonic.Stage):
    __gtype_name__ = 'TestPySuffixStage'

    suffix = GObject.Property(type=str, default='', nick='Suffix',
                              blurb='Appended to every text delta')

    def do_process(self, stream, event):
        if event.get_kind() == Symfonic.EventKind.TEXT_DELTA:
            text, _ = event.get_text()
            if 'boom' in text.lower():
                raise ValueError('the test stage was told to fail')
            event = Symfonic.Event.new_text_delta(text + self.suffix)
        stream.emit(event)
        return True


Symfonic.register_stage_type(SuffixStage.__gtype__, 'py-suffix')
