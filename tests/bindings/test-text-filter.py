#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A text filter written in Python: the helper hands the subclass whole
# characters of each channel, whatever the split, as bytes of the given
# length (not NUL-terminated strings); the flush hands over a character
# the text ended in the middle of, as it stands.
#
# Needs GI_TYPELIB_PATH and LD_LIBRARY_PATH on the build's gateway folder
# (tests/meson.build sets both).

import unittest

import gi

gi.require_version('Symfonic', '1.0')
from gi.repository import GLib, Symfonic  # noqa: E402

ANSWER = Symfonic.TextChannel.ANSWER
THINKING = Symfonic.TextChannel.THINKING


class Upper(Symfonic.TextFilter):
    """Upper-cases the text, and keeps every piece it was given."""

    def __init__(self):
        super().__init__()
        self.pieces = []

    def do_filter(self, channel, text, length, out):
        piece = bytes(text)
        self.pieces.append((channel, piece))
        out.append(piece.decode('utf-8', errors='replace').upper())


class TextFilterTest(unittest.TestCase):
    def feed(self, text_filter, channel, data):
        out = GLib.String.new('')
        text_filter.feed(channel, data, out)
        return out.str

    def test_half_characters_are_withheld(self):
        upper = Upper()
        self.assertEqual(self.feed(upper, ANSWER, b'caf\xc3'), 'CAF')
        self.assertEqual(self.feed(upper, THINKING, b'\xe2\x9c'), '')
        self.assertEqual(self.feed(upper, ANSWER, b'\xa9 ok'), '\u00c9 OK')
        self.assertEqual(self.feed(upper, THINKING, b'\x93 yes'), '\u2713 YES')
        self.assertEqual(upper.pieces, [(ANSWER, b'caf'), (ANSWER, b'\xc3\xa9'), (ANSWER, b' ok'),
                                        (THINKING, b'\xe2\x9c\x93'), (THINKING, b' yes')])

    def test_flush_releases_the_rest(self):
        upper = Upper()
        self.assertEqual(self.feed(upper, ANSWER, b'ab\xf0\x9f\x98'), 'AB')
        out = GLib.String.new('')
        upper.flush(ANSWER, out)
        self.assertEqual(upper.pieces[-1], (ANSWER, b'\xf0\x9f\x98'))
        self.assertEqual(out.str, '\ufffd')


if __name__ == '__main__':
    unittest.main()
