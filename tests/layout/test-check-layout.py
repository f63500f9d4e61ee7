#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The layout check catches what it is there to catch.

Copies the library's and the plugins' sources into a temporary tree,
checks that the copy passes, then makes one mutation at a time (a plugin
that includes a private header or reaches into another folder, in a
source or in its build file; a room that includes from a later one) and
checks that each is refused with a message naming the file and line.
"""
import os
import shutil
import subprocess
import sys
import tempfile

SOURCE = sys.argv[1]
CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'check-layout.py')

# (file, line added at its top, what the complaint must say)
MUTATIONS = [
    ('plugins/citation/symfonic-citation-stage.c', '#include "symfonic-event-private.h"\n',
     'plugins/citation/symfonic-citation-stage.c:1: includes the private header "symfonic-event-private.h"'),
    ('plugins/metering/symfonic-budget-stage.c', '#include <symfonic-stream-private.h>\n',
     'plugins/metering/symfonic-budget-stage.c:1: includes the private header "symfonic-stream-private.h"'),
    ('plugins/auth/symfonic-auth-stage.h', '#include "../common/symfonic-usage.h"\n',
     'plugins/auth/symfonic-auth-stage.h:1: includes "../common/symfonic-usage.h", which reaches into another folder'),
    ('plugins/examples/redactor/email-redactor-stage.c', '#include "../../citation/symfonic-citation-filter.h"\n',
     'plugins/examples/redactor/email-redactor-stage.c:1: includes "../../citation/symfonic-citation-filter.h"'),
    ('plugins/extraction/meson.build', "extraction_helpers = files('../common/symfonic-usage.c')\n",
     'plugins/extraction/meson.build:1: builds from another folder with "../"'),
    ('gateway/model/symfonic-event.c', '#include "symfonic-stream-private.h"\n',
     'gateway/model/symfonic-event.c:1: includes pipeline/symfonic-stream-private.h, but pipeline/ comes after model/'),
    ('plugins/runtime/symfonic-runtime-source.c', '#include "symfonic-json-private.h"\n',
     'plugins/runtime/symfonic-runtime-source.c:1: includes the private header "symfonic-json-private.h"'),
]


def check(root):
    return subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True)


def copy_tree(target):
    for folder in ('gateway', 'plugins'):
        shutil.copytree(os.path.join(SOURCE, folder), os.path.join(target, folder))


def main():
    failures = 0
    with tempfile.TemporaryDirectory() as work:
        clean = os.path.join(work, 'clean')
        copy_tree(clean)
        result = check(clean)
        if result.returncode != 0:
            print(f'FAIL: the tree as it stands is refused:\n{result.stdout}')
            return 1

        for number, (path, line, complaint) in enumerate(MUTATIONS):
            root = os.path.join(work, f'mutant-{number}')
            copy_tree(root)
            target = os.path.join(root, path)
            with open(target, encoding='utf-8') as f:
                text = f.read()
            with open(target, 'w', encoding='utf-8') as f:
                f.write(line + text)
            result = check(root)
            if result.returncode == 0:
                print(f'FAIL: {path}: {line.strip()!r} passes the check')
                failures += 1
            elif complaint not in result.stdout:
                print(f'FAIL: {path}: the check says\n{result.stdout}\nnot\n{complaint}')
                failures += 1
            else:
                print(f'ok: {complaint}')
            shutil.rmtree(root)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
