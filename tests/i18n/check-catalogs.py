#!/usr/bin/python3
# Every catalog in po/LINGUAS is complete for the messages the sources mark
# today: each .po is merged with a template extracted from po/POTFILES as
# the pot target does, then `msgfmt --check --statistics` must report no
# untranslated and no fuzzy message (and placeholders that match).
#
# usage: check-catalogs.py SOURCE_ROOT XGETTEXT MSGMERGE MSGFMT

import os
import re
import subprocess
import sys
import tempfile

# the keywords and flags of meson's glib preset
XGETTEXT_ARGS = [
    '--from-code=UTF-8', '--add-comments',
    '--keyword=_', '--keyword=N_', '--keyword=C_:1c,2', '--keyword=NC_:1c,2',
    '--keyword=g_dcgettext:2', '--keyword=g_dngettext:2,3', '--keyword=g_dpgettext2:2c,3',
    '--flag=N_:1:pass-c-format', '--flag=C_:2:pass-c-format', '--flag=NC_:2:pass-c-format',
    '--flag=g_dngettext:2:pass-c-format', '--flag=g_strdup_printf:1:c-format',
    '--flag=g_string_printf:2:c-format', '--flag=g_string_append_printf:2:c-format',
    '--flag=g_error_new:3:c-format', '--flag=g_set_error:4:c-format',
    '--flag=g_print:1:c-format', '--flag=g_printerr:1:c-format',
]


def untranslated_ids(po):
    """The msgids of the entries msgfmt counts as untranslated or fuzzy."""
    found = []
    for block in open(po, encoding='utf-8').read().split('\n\n'):
        if block.lstrip().startswith('#~'):
            continue
        fuzzy = re.search(r'^#,.*\bfuzzy\b', block, re.M) is not None
        strings = re.findall(r'^(msgid|msgstr(?:\[\d\])?) ((?:".*"\n?)+)', block + '\n', re.M)
        fields = {k: ''.join(re.findall(r'"(.*)"', v)) for k, v in strings}
        msgid = fields.get('msgid')
        if not msgid:
            continue
        empty = any(v == '' for k, v in fields.items() if k.startswith('msgstr'))
        if fuzzy or empty:
            found.append(('fuzzy' if fuzzy else 'untranslated', msgid))
    return found


def main():
    root, xgettext, msgmerge, msgfmt = sys.argv[1:5]
    po_dir = os.path.join(root, 'po')
    failed = False

    with open(os.path.join(po_dir, 'LINGUAS'), encoding='utf-8') as f:
        languages = [lang for line in f for lang in line.split('#')[0].split()]
    if not languages:
        print('po/LINGUAS names no language')
        return 1

    with tempfile.TemporaryDirectory() as tmp:
        pot = os.path.join(tmp, 'messages.pot')
        subprocess.run([xgettext, *XGETTEXT_ARGS, f'--files-from={os.path.join(po_dir, "POTFILES")}',
                        f'--directory={root}', f'--output={pot}'], check=True)

        for lang in languages:
            po = os.path.join(po_dir, lang + '.po')
            merged = os.path.join(tmp, lang + '.po')
            # the catalog as it is must compile, header and placeholders checked
            plain = subprocess.run([msgfmt, '--check', '--statistics', '-o', os.devnull, po],
                                   capture_output=True, text=True)
            if plain.returncode != 0:
                print(f'po/{lang}.po: msgfmt --check fails:\n{plain.stderr}', file=sys.stderr)
                failed = True
                continue
            subprocess.run([msgmerge, '--quiet', '--no-fuzzy-matching', '--output-file', merged, po, pot],
                           check=True)
            result = subprocess.run([msgfmt, '--check', '--statistics', '-o', os.devnull, merged],
                                    capture_output=True, text=True, env=dict(os.environ, LC_ALL='C'))
            statistics = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else ''
            print(f'po/{lang}.po: {statistics}')
            missing = untranslated_ids(merged)
            if result.returncode != 0 or 'untranslated' in statistics or 'fuzzy' in statistics or missing:
                failed = True
                print(f'po/{lang}.po is not complete for the sources (msgfmt: {result.stderr.strip()}); '
                      'run `meson compile -C build symfonic-gateway-update-po` and translate:', file=sys.stderr)
                for kind, msgid in missing:
                    print(f'  {kind}: "{msgid}"', file=sys.stderr)

    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
