# email-redactor-py.py: replaces e-mail addresses in the answer, whatever way
# the upstream splits it into deltas
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A script plugin: put this file in a plugin folder and use
# `type=email-redactor-py` in a pipeline. The plugin is named after the
# file, so the name says the type it registers and differs from the C
# example's plugin (`email-redactor`), which a plugin path may hold too.

import re

from gi.repository import GLib, GObject, Symfonic

ADDRESS = re.compile(r'[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}')
# an address never holds anything else: text up to the last other
# character can be redacted at once
ADDRESS_CHARS = frozenset('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._%+@-')
# a run this long is not withheld any longer, so the stream keeps moving
MAX_WITHHELD_BYTES = 512


class _StreamState(GObject.Object):
    """The trailing run of address characters a stream's last delta ended
    with, which the next delta may still turn into an address."""

    def __init__(self):
        super().__init__()
        self.withheld = ''


class EmailRedactor(GObject.Object, Symfonic.Stage):
    __gtype_name__ = 'SymfonicExampleEmailRedactorPy'

    replacement = GObject.Property(type=str, default='[email]', nick='Replacement',
                                   blurb='What every e-mail address is replaced with')
    fail_marker = GObject.Property(type=str, default='', nick='Fail marker',
                                   blurb='A text delta containing it fails the stream (empty: never)')
    refuse_tenant = GObject.Property(type=str, default='', nick='Refused tenant',
                                     blurb='A tenant refused at admission (empty: none)')

    def _redact(self, text):
        return ADDRESS.sub(lambda match: self.replacement, text)

    def _state(self, stream):
        state = stream.get_stage_state(self)
        if state is None:
            state = _StreamState()
            stream.set_stage_state(self, state)
        return state

    def _emit(self, stream, text):
        if text:
            stream.emit(Symfonic.Event.new_text_delta(self._redact(text)))

    def _flush(self, stream):
        state = self._state(stream)
        withheld, state.withheld = state.withheld, ''
        self._emit(stream, withheld)

    def do_get_admission_phase(self):
        return Symfonic.AdmissionPhase.HEAD

    def do_admit(self, stream):
        tenant = stream.get_invocation().get_tenant_id()
        if self.refuse_tenant and tenant == self.refuse_tenant:
            raise GLib.Error.new_literal(Symfonic.error_quark(), 'This tenant may not use the route',
                                         Symfonic.Error.FORBIDDEN)
        return True

    def do_process(self, stream, event):
        kind = event.get_kind()
        if kind == Symfonic.EventKind.TEXT_DELTA:
            delta, _ = event.get_text()
            if self.fail_marker and self.fail_marker in delta:
                raise GLib.Error.new_literal(Symfonic.error_quark(), 'The redactor met its fail marker',
                                             Symfonic.Error.FAILED)
            state = self._state(stream)
            text = state.withheld + delta
            cut = len(text)
            while cut > 0 and text[cut - 1] in ADDRESS_CHARS:
                cut -= 1
            if len(text) - cut > MAX_WITHHELD_BYTES:
                cut = len(text)
            state.withheld = text[cut:]
            self._emit(stream, text[:cut])
        elif kind == Symfonic.EventKind.RESPONSE_COMPLETE:
            # the terminal carries the whole text: what was withheld comes
            # before it, and its own text is redacted the same way
            self._flush(stream)
            stream.emit(Symfonic.Event.new_response_complete(self._redact(event.get_text()[0]),
                                                             event.get_duration_ms()))
        else:
            stream.emit(event)
        return True

    def do_finish(self, stream):
        self._flush(stream)
        return True


Symfonic.register_stage_type(EmailRedactor.__gtype__, 'email-redactor-py')
