#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The API reference documents every public symbol, and its namespace page
names the authors, the website and the source.

gi-docgen writes "No description available." for a type, function,
property, signal, virtual function or struct member without a doc comment;
the reference, built by the test's dependency, must have none. Each is
reported with its page and what it is about.
"""
import html
import os
import re
import sys

MISSING = 'No description available.'
TAG = re.compile(r'<[^>]+>')


def text_before(page, at):
    """What the page says just before @at, tags removed: the symbol."""
    before = html.unescape(TAG.sub(' ', page[max(0, at - 600):at]))
    return ' '.join(before.split())[-120:]


def main():
    reference = sys.argv[1]
    problems = []
    pages = sorted(name for name in os.listdir(reference) if name.endswith('.html'))
    if 'index.html' not in pages:
        sys.exit('%s: no index.html: the reference was not built' % reference)

    for name in pages:
        with open(os.path.join(reference, name), encoding='utf-8') as f:
            page = f.read()
        for found in re.finditer(re.escape(MISSING), page):
            problems.append('%s: undocumented: …%s' % (name, text_before(page, found.start())))

    with open(os.path.join(reference, 'index.html'), encoding='utf-8') as f:
        index = f.read()
    for field in ('Authors', 'Website', 'Source'):
        row = re.search(r'<td><em>%s</em></td><td>(.*?)</td>' % field, index, re.S)
        value = html.unescape(TAG.sub('', row.group(1))).strip() if row else ''
        if not value or value.startswith('Unknown'):
            problems.append('index.html: the namespace page names no %s' % field.lower())

    for problem in problems:
        print(problem)
    print('%d pages, %d problems' % (len(pages), len(problems)))
    sys.exit(1 if problems else 0)


if __name__ == '__main__':
    main()
