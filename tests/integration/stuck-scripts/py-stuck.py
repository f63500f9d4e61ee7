# A Python script plugin for the stuck-stage tests: passes every event on,
# but its process hook never returns on a text delta that says "sleep"
# (it sleeps) or "spin" (it loops), as a stage with a bug would, and takes
# 300 ms over one that says "slow".
import time

from gi.repository import GObject, Symfonic


class StuckStage(GObject.Object, Symfonic.Stage):
    __gtype_name__ = 'TestPyStuckStage'

    def do_process(self, stream, event):
        if event.get_kind() == Symfonic.EventKind.TEXT_DELTA:
            text, _ = event.get_text()
            if 'sleep' in text:
                time.sleep(120)
            elif 'spin' in text:
                while True:
                    pass
            elif 'slow' in text:
                time.sleep(0.3)
        stream.emit(event)
        return True


Symfonic.register_stage_type(StuckStage.__gtype__, 'py-stuck')
