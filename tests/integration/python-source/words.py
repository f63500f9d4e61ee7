# A Python script plugin for the loader tests: a source that streams its
# `text` word by word, then the response's end, and fails to start on the
# query "fail". It keeps to the stream's pace: when a push says to wait,
# it goes on from the ready function, which it drops once it ended the
# stream (the stream would otherwise keep it, and what it holds, until
# the stream is freed).
from gi.repository import GObject, Symfonic


class _Playback:
    """One stream's words still to push."""

    def __init__(self, text):
        self.text = text
        words = text.split(' ')
        self.deltas = [words[0]] + [' ' + word for word in words[1:]]

    def play(self, stream):
        while self.deltas:
            flow = stream.push(Symfonic.Event.new_text_delta(self.deltas.pop(0)))
            if flow == Symfonic.FlowReturn.WAIT:
                stream.set_ready_func(self.on_ready)
                return
            if flow == Symfonic.FlowReturn.OVER:
                self.end(stream)
                return
        stream.push(Symfonic.Event.new_response_complete(self.text, 0))
        self.end(stream)

    def on_ready(self, stream):
        # an ended stream wants nothing more than its end
        if stream.is_over():
            self.end(stream)
        else:
            self.play(stream)

    def end(self, stream):
        stream.set_ready_func(None)
        stream.push_end(None)


class WordsSource(GObject.Object, Symfonic.Source):
    __gtype_name__ = 'TestPyWordsSource'

    text = GObject.Property(type=str, default='Hello from Python.', nick='Text',
                            blurb='What the source answers, one word a delta')

    def do_start(self, stream, cancellable):
        if stream.get_invocation().get_query() == 'fail':
            raise ValueError('the test source was told to fail')
        _Playback(self.text).play(stream)


Symfonic.register_stage_type(WordsSource.__gtype__, 'py-words')
