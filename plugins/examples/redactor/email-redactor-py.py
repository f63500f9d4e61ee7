# email-redactor-py.py: replaces e-mail addresses in the answer, whatever way
# the upstream splits it into deltas
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A script plugin: put this file in a plugin folder and use
# `type=email-redactor-py` in a pipeline. The plugin is named after the
# file, so the name says the type it registers and differs from the C
# example's plugin (`email-redactor`), which a plugin path may hold too.
#
# The stage is a Symfonic.FilterStage: it supplies the filter, and the base
# class keeps one per stream, passes the deltas through it, releases what
# it withholds before the events that close the answer and at the end, and
# cleans the terminal's text with a filter of its own.

import re

from gi.repository import GLib, GObject, Symfonic

ADDRESS = re.compile(r'[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}')
# an address never holds anything else: text up to the last other
# character can be redacted at once
ADDRESS_CHARS = frozenset('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._%+@-')
# a run this long is not withheld any longer, so the stream keeps moving
MAX_WITHHELD_BYTES = 512


class EmailRedactorFilter(Symfonic.TextFilter):
    """Redacts the answer; withholds its trailing run of address
    characters, which the next delta may still turn into an address. The
    thinking passes as it is."""

    def __init__(self, replacement):
        super().__init__()
        self.replacement = replacement
        self.withheld = ''

    def _redact(self, text):
        return ADDRESS.sub(lambda match: self.replacement, text)

    def do_filter(self, channel, text, length, out):
        # whole characters, as bytes
        text = bytes(text).decode('utf-8')
        if channel != Symfonic.TextChannel.ANSWER:
            out.append(text)
            return
        text = self.withheld + text
        cut = len(text)
        while cut > 0 and text[cut - 1] in ADDRESS_CHARS:
            cut -= 1
        if len(text) - cut > MAX_WITHHELD_BYTES:
            cut = len(text)
        self.withheld = text[cut:]
        out.append(self._redact(text[:cut]))

    def do_flush(self, channel, out):
        if channel == Symfonic.TextChannel.ANSWER:
            out.append(self._redact(self.withheld))
            self.withheld = ''


class EmailRedactor(Symfonic.FilterStage):
    __gtype_name__ = 'SymfonicExampleEmailRedactorPy'

    replacement = GObject.Property(type=str, default='[email]', nick='Replacement',
                                   blurb='What every e-mail address is replaced with')
    fail_marker = GObject.Property(type=str, default='', nick='Fail marker',
                                   blurb='A text delta containing it fails the stream (empty: never)')
    refuse_tenant = GObject.Property(type=str, default='', nick='Refused tenant',
                                     blurb='A tenant refused at admission (empty: none)')

    def do_create_filter(self, stream, use):
        return EmailRedactorFilter(self.replacement)

    def do_before_filter(self, stream, delta):
        text, _ = delta.get_text()
        if self.fail_marker and delta.get_kind() == Symfonic.EventKind.TEXT_DELTA and self.fail_marker in text:
            raise GLib.Error.new_literal(Symfonic.error_quark(), 'The redactor met its fail marker',
                                         Symfonic.Error.FAILED)
        return True

    # Symfonic.Stage's own hooks, beside those of the base class
    def do_get_admission_phase(self):
        return Symfonic.AdmissionPhase.HEAD

    def do_admit(self, stream):
        tenant = stream.get_invocation().get_tenant_id()
        if self.refuse_tenant and tenant == self.refuse_tenant:
            raise GLib.Error.new_literal(Symfonic.error_quark(), 'This tenant may not use the route',
                                         Symfonic.Error.FORBIDDEN)
        return True


Symfonic.register_stage_type(EmailRedactor.__gtype__, 'email-redactor-py')
