#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The man pages render, and they and the README say the same.

Each page built in data/man/ renders with groff without a warning. The
keys of [gateway] and [route:NAME] in symfonic.pipeline(5), which the
build takes from the properties that define them, are the keys the
README's table of pipeline file groups names, and the options of
symfonic-gateway(1), taken from its --help, are those of the README's
synopsis: a key or an option added, renamed or dropped on one side
fails here until the other says so too.

Usage: check-man.py GROFF README MAN_DIR
"""
import os
import re
import subprocess
import sys

PAGES = ('symfonic-gateway.1', 'symfonic-inspect.1', 'symfonic.pipeline.5')


def unescape(text):
    return re.sub(r'\\f[BIRP]', '', text).replace('\\-', '-').replace('\\e', '\\').replace('\\&', '')


def readme_group_keys(readme, header):
    """The keys a row of the README's table of groups names: the
    backquoted words outside parentheses."""
    row = next((line for line in readme.splitlines() if line.startswith('| `%s` |' % header)), None)
    if row is None:
        return None
    cell = row.split('|')[2]
    keys = []
    depth = 0
    i = 0
    while i < len(cell):
        if cell[i] == '`':
            end = cell.index('`', i + 1)
            if depth == 0:
                keys.append(cell[i + 1:end])
            i = end + 1
            continue
        depth += {'(': 1, ')': -1}.get(cell[i], 0)
        i += 1
    return keys


def man_section_terms(page, heading):
    """The terms of the tagged paragraphs of the page's section @heading."""
    section = re.search(r'^\.SH "%s"\n(.*?)(?=^\.SH |\Z)' % re.escape(heading), page, re.S | re.M)
    if section is None:
        return None
    return [unescape(term) for term in re.findall(r'^\.TP\n(.*)$', section.group(1), re.M)]


def readme_options(readme):
    """The long options of the README's synopsis of symfonic-gateway."""
    synopsis = next((line for line in readme.splitlines()
                     if line.startswith('symfonic-gateway [')), None)
    return None if synopsis is None else set(re.findall(r'--[a-z-]+', synopsis))


def compare(problems, what, readme_side, man_side):
    if readme_side is None or man_side is None:
        problems.append('%s: not found in %s' % (what, 'the README' if readme_side is None else 'the man page'))
        return
    for name in sorted(set(readme_side) - set(man_side)):
        problems.append('%s: the README names %s, the man page does not' % (what, name))
    for name in sorted(set(man_side) - set(readme_side)):
        problems.append('%s: the man page names %s, the README does not' % (what, name))


def main():
    groff, readme_path, man_dir = sys.argv[1:4]
    problems = []
    with open(readme_path, encoding='utf-8') as f:
        readme = f.read()
    pages = {}
    for name in PAGES:
        path = os.path.join(man_dir, name)
        with open(path, encoding='ascii') as f:
            pages[name] = f.read()
        rendered = subprocess.run([groff, '-man', '-Tutf8', '-ww', path], capture_output=True, text=True)
        if rendered.returncode != 0 or rendered.stderr:
            problems.append('%s: groff says: %s' % (name, rendered.stderr.strip()))
        if 'NAME' not in re.sub('.\b', '', rendered.stdout):
            problems.append('%s: renders without a NAME section' % name)

    pipeline = pages['symfonic.pipeline.5']
    for header, heading in (('[gateway]', 'THE [gateway] GROUP'), ('[route:NAME]', 'THE [route:NAME] GROUPS')):
        compare(problems, 'keys of %s' % header, readme_group_keys(readme, header),
                man_section_terms(pipeline, heading))

    options = man_section_terms(pages['symfonic-gateway.1'], 'OPTIONS')
    long_options = None if options is None else {
        option for term in options for option in re.findall(r'--[a-z-]+', term)} - {'--help', '--version'}
    compare(problems, 'options of symfonic-gateway', readme_options(readme), long_options)

    for problem in problems:
        print(problem)
    print('%d pages, %d problems' % (len(PAGES), len(problems)))
    sys.exit(1 if problems else 0)


if __name__ == '__main__':
    main()
