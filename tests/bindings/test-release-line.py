#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The text-delta contract version as the bindings see it: the one
# definition is SYMFONIC_TEXT_DELTA_CONTRACT_VERSION in
# symfonic-release-line.h, and this copy (the typelib's) must agree with it
# and with the predicate.
#
# Needs GI_TYPELIB_PATH and LD_LIBRARY_PATH on the build's gateway folder
# (tests/meson.build sets both); the header's path is the first argument.

import re
import sys
import unittest

import gi

gi.require_version('Symfonic', '1.0')
from gi.repository import Symfonic  # noqa: E402

HEADER = sys.argv.pop(1) if len(sys.argv) > 1 else None


class ContractVersionTest(unittest.TestCase):
    def test_matches_header(self):
        self.assertIsNotNone(HEADER, 'pass the path of symfonic-release-line.h')
        with open(HEADER, encoding='utf-8') as header:
            match = re.search(r'#define\s+SYMFONIC_TEXT_DELTA_CONTRACT_VERSION\s+"([^"]*)"',
                              header.read())
        self.assertIsNotNone(match)
        self.assertEqual(Symfonic.TEXT_DELTA_CONTRACT_VERSION, match.group(1))

    def test_predicate_agrees(self):
        version = Symfonic.TEXT_DELTA_CONTRACT_VERSION
        self.assertTrue(Symfonic.publishes_text_deltas(version))
        self.assertEqual(Symfonic.numeric_release_line('11.0.0.dev3+local'), '11.0.0')
        self.assertTrue(Symfonic.publishes_text_deltas('11.0rc1'))
        self.assertFalse(Symfonic.publishes_text_deltas('10.4.9'))


if __name__ == '__main__':
    sys.exit(unittest.main(verbosity=2))
