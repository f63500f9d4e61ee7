#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The library's folders build on each other one way, and plugins see its
public API alone.

gateway/meson.build lists the folders of the library in order; a file may
include the headers of its own folder and of the folders before it, never
of one after it. The umbrella header, the generated headers and config.h
belong to no folder.

A plugin is built as a third party's would be: no file under plugins/
includes a private header (`-private.h`) or reaches into another folder
with `../`, in an include or in its build file.
"""
import os
import re
import sys


ROOT = sys.argv[1]
GATEWAY = os.path.join(ROOT, 'gateway')
PLUGINS = os.path.join(ROOT, 'plugins')
NEUTRAL = {'symfonic.h', 'symfonic-enums.h', 'symfonic-version.h', 'config.h'}
INCLUDE = re.compile(r'\s*#\s*include\s+["<]([^">]+)[">]')


def rooms():
    text = open(os.path.join(GATEWAY, 'meson.build')).read()
    listed = re.search(r"gateway_rooms = \[([^\]]*)\]", text)
    order = re.findall(r"'([^']+)'", listed.group(1))
    # the binaries build on every folder of the library
    return order + ['tools']


def plugin_problems():
    problems = []
    for folder, dirs, names in os.walk(PLUGINS):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, ROOT)
            if name.endswith(('.c', '.h')):
                for number, line in enumerate(open(path, encoding='utf-8'), 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    if m.group(1).endswith('-private.h'):
                        problems.append(f'{relative}:{number}: includes the private header "{m.group(1)}": '
                                        'plugins use the public API alone')
                    if '../' in m.group(1):
                        problems.append(f'{relative}:{number}: includes "{m.group(1)}", '
                                        'which reaches into another folder')
            elif name == 'meson.build':
                for number, line in enumerate(open(path, encoding='utf-8'), 1):
                    if re.search(r"""['"]\.\./""", line.split('#', 1)[0]):
                        problems.append(f'{relative}:{number}: builds from another folder with "../"')
    return problems


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
    problems += plugin_problems()
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
