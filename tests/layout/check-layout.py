#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The library's folders build on each other one way.

gateway/meson.build lists the folders of the library in order; a file may
include the headers of its own folder and of the folders before it, never
of one after it. The umbrella header, the generated headers and config.h
belong to no folder.
"""
import os
import re
import sys

ROOT = sys.argv[1]
GATEWAY = os.path.join(ROOT, 'gateway')
NEUTRAL = {'symfonic.h', 'symfonic-enums.h', 'symfonic-version.h', 'config.h'}


def rooms():
    text = open(os.path.join(GATEWAY, 'meson.build')).read()
    listed = re.search(r"gateway_rooms = \[([^\]]*)\]", text)
    order = re.findall(r"'([^']+)'", listed.group(1))
    # the binaries build on every folder of the library
    return order + ['tools']


def main():
    order = rooms()
    where = {}
    for room in order:
        for name in os.listdir(os.path.join(GATEWAY, room)):
            if not name.endswith(('.c', '.h')):
                continue
            if name in where:
                print(f'{name} stands in gateway/{where[name]}/ and gateway/{room}/')
                return 1
            where[name] = room

    stray = [n for n in os.listdir(GATEWAY)
             if n.endswith(('.c', '.h')) and n not in NEUTRAL]
    problems = [f'gateway/{n} belongs in one of the folders' for n in stray]
    for name, room in sorted(where.items()):
        for number, line in enumerate(open(os.path.join(GATEWAY, room, name)), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m or m.group(1) in NEUTRAL:
                continue
            target = where.get(m.group(1))
            if target is None:
                problems.append(f'gateway/{room}/{name}:{number}: includes "{m.group(1)}", '
                                'which no folder of the library holds')
            elif order.index(target) > order.index(room):
                problems.append(f'gateway/{room}/{name}:{number}: includes {target}/{m.group(1)}, '
                                f'but {target}/ comes after {room}/')
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
