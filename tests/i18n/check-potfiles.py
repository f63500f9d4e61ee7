#!/usr/bin/python3
# po/POTFILES names exactly the files under gateway/ and plugins/ that mark
# messages for translation: a file missing from it keeps its messages out
# of every catalog, and a file it names that no longer exists breaks the
# pot target. The folders that only serve requests mark nothing: their
# messages reach clients, which parse them, in error bodies and events.
#
# usage: check-potfiles.py SOURCE_ROOT

import os
import re
import sys

# the keywords of meson's glib preset for xgettext
MARKER = re.compile(r'\b(?:_|N_|C_|NC_|Q_|g_dgettext|g_dcgettext|g_dngettext|g_dpgettext2?|'
                    r'd?c?n?gettext)\s*\(')
# xgettext cannot see through GLib's format macros: the message it takes
# ends at the macro, and the catalog never matches the one printed
SPLICED = re.compile(r'\b(?:_|N_|C_|NC_)\s*\((?:\s*"(?:[^"\\]|\\.)*")*\s*(G_G\w+_(?:FORMAT|MODIFIER))')
COMMENTS = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)
COMMENT_OR_TEXT = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'', re.S)
SCANNED = ('gateway', 'plugins')
# HTTP framing, JSON, the event model, the upstream client, wire formats
ENGLISH_ONLY = ('gateway/io/', 'gateway/json/', 'gateway/model/', 'gateway/upstream/', 'gateway/wire/')


def blank(match):
    text = match.group(0)
    # a string stays a string, so that _("...") still reads as a call
    return '""' if text.startswith('"') else ' '


def translates(path, name, problems):
    with open(path, encoding='utf-8') as f:
        source = f.read()
    for match in SPLICED.finditer(COMMENTS.sub(' ', source)):
        problems.append(f'{name}: a message marked for translation splices {match.group(1)}, '
                        'which xgettext cannot read: use PRId64/PRIu64 or %zu')
    return MARKER.search(COMMENT_OR_TEXT.sub(blank, source)) is not None


def main():
    root = sys.argv[1]
    problems = []

    with open(os.path.join(root, 'po', 'POTFILES'), encoding='utf-8') as f:
        listed = [line.strip() for line in f if line.strip() and not line.startswith('#')]

    marking = set()
    for top in SCANNED:
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(('.c', '.h')):
                    path = os.path.join(folder, name)
                    relative = os.path.relpath(path, root)
                    if translates(path, relative, problems):
                        marking.add(relative)
                        if relative.startswith(ENGLISH_ONLY):
                            problems.append(f'{relative} marks a message for translation, but what it says '
                                            'reaches clients, which parse it: keep it in English')

    seen = set()
    for name in listed:
        if name in seen:
            problems.append(f'po/POTFILES names {name} twice')
        seen.add(name)
        path = os.path.join(root, name)
        if not os.path.isfile(path):
            problems.append(f'po/POTFILES names {name}, which does not exist')
        elif name not in marking:
            problems.append(f'po/POTFILES names {name}, which marks no message for translation')

    for name in sorted(marking - seen):
        problems.append(f'{name} marks messages for translation but po/POTFILES does not name it')

    if listed != sorted(listed):
        problems.append('po/POTFILES is not sorted')

    with open(os.path.join(root, 'po', 'LINGUAS'), encoding='utf-8') as f:
        for line in f:
            for lang in line.split('#')[0].split():
                if not os.path.isfile(os.path.join(root, 'po', lang + '.po')):
                    problems.append(f'po/LINGUAS names {lang}, which has no po/{lang}.po')

    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return 1
    print(f'po/POTFILES names the {len(listed)} files that mark messages for translation')
    return 0


if __name__ == '__main__':
    sys.exit(main())
