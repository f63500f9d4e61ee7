#!/usr/bin/env python3
# make-man.py: writes a man page in troff from its source in data/man/ and
# from what the binaries themselves say.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The options of a binary come from its --help-all, and the keys of a
# pipeline file's groups from symfonic-inspect, which lists them from the
# properties that define them: a page cannot drift from the code. The
# prose is the source file's. Needs the Python standard library alone.
#
# Usage: make-man.py SOURCE OUTPUT GATEWAY INSPECT [NAME=VALUE...]
#
# The source is a small markup:
#
#   % NAME SECTION "FOOTER" "HEADER"   the title line, first
#   # HEADING                          a section (.SH), in capitals
#   ## HEADING                         a subsection (.SS)
#   TEXT                               a paragraph: blank lines separate them
#   `TERM`                             a tagged paragraph (.TP): the term on
#   : TEXT                             one line, its text after ": "
#   - TEXT                             a bullet
#   ```  ...  ```                      a literal block
#   @options BINARY@                   the options of the binary (gateway
#                                      or inspect), from its --help-all
#   @keys GROUP@                       the keys of [gateway] or [route:NAME]
#   @types KIND@                       every registered type of a kind
#                                      (stage, source, store) and its keys
#   @NAME@                             the value given as NAME=VALUE
#
# In text, `code` is bold, *word* italic and **word** bold.

import os
import re
import subprocess
import sys

INLINE = re.compile(r'`([^`]+)`|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*')


def run(argv):
    env = dict(os.environ, LC_ALL='C', LANGUAGE='C')
    env.pop('SYMFONIC_PLUGIN_PATH', None)
    return subprocess.run(argv, env=env, check=True, capture_output=True, text=True).stdout


def escape(text):
    """Plain text for troff: backslashes, hyphens (minus signs, so that an
    option copied from the page works), and every non-ASCII character as
    a named Unicode escape, so the page needs no preprocessor."""
    out = []
    for char in text.replace('\\', '\\e').replace('-', '\\-'):
        out.append(char if ord(char) < 128 else '\\[u%04X]' % ord(char))
    text = ''.join(out)
    # a line must not start with a control character
    return '\\&' + text if text[:1] in ('.', "'") else text


def inline(text):
    """Text with its inline markup turned into fonts."""
    parts = []
    at = 0
    for match in INLINE.finditer(text):
        parts.append(escape(text[at:match.start()]))
        code, strong, emphasis = match.groups()
        if emphasis is not None:
            parts.append('\\fI%s\\fR' % escape(emphasis))
        else:
            parts.append('\\fB%s\\fR' % escape(code if code is not None else strong))
        at = match.end()
    parts.append(escape(text[at:]))
    line = ''.join(parts)
    return '\\&' + line if line[:1] in ('.', "'") else line


def quote(text):
    return '"%s"' % escape(text).replace('"', '\\(dq')


# --- what the binaries say ---------------------------------------------------

def options(binary):
    """[(switches, argument, description)] of @binary's options, its help
    options first."""
    found = []
    section = None
    for line in run([binary, '--help-all']).splitlines():
        if line and not line.startswith(' '):
            section = line
            continue
        match = re.match(r'^  (-\w, )?(--[\w-]+)(=(\S+))?\s{2,}(.*)$', line)
        if match and section is not None:
            switches = ((match.group(1) or '') + match.group(2)).strip()
            found.append((switches, match.group(4), match.group(5)))
    return found


def keys(inspect, name):
    """[(key, blurb, [(attribute, value)])] that symfonic-inspect NAME lists."""
    found = []
    for line in run([inspect, name]).splitlines():
        key = re.match(r'^  (\S+) +(.*)$', line)
        attribute = re.match(r'^ {23}(type|default|values): (.*)$', line)
        if attribute and found:
            found[-1][2].append((attribute.group(1), attribute.group(2)))
        elif key and not line.startswith('  from plugin') and not line.startswith('  built into') \
                and not line.startswith('  a store for'):
            found.append((key.group(1), key.group(2), []))
    return found


def types(inspect, kind):
    """[(name, GType name, where from)] of the registered types of @kind."""
    found = []
    listing = run([inspect])
    section = listing.split('\nTypes:\n', 1)[1].split('\n\n', 1)[0]
    for line in section.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[1] == kind:
            found.append((fields[0], fields[2], ' '.join(fields[3:])))
    return found


# --- troff ---------------------------------------------------------------------

# the words a pipeline file's author knows for the C types inspect names
TYPE_WORDS = {
    'gchararray': 'string',
    'gboolean': 'boolean (true or false)',
    'gint': 'whole number', 'guint': 'whole number', 'gint64': 'whole number', 'guint64': 'whole number',
    'glong': 'whole number', 'gulong': 'whole number',
    'gdouble': 'number', 'gfloat': 'number',
}


def key_entries(entries):
    lines = []
    for key, blurb, attributes in entries:
        lines += ['.TP', '\\fB%s\\fR' % escape(key), inline(blurb + ('' if blurb.endswith('.') else '.'))]
        details = ['%s: %s' % (attribute, TYPE_WORDS.get(value, value) if attribute == 'type' else value)
                   for attribute, value in attributes]
        if details:
            lines += ['.br', '\\fI%s\\fR' % escape('; '.join(details))]
    return lines


def directive(text, gateway, inspect):
    name, _, argument = text.partition(' ')
    if name == 'options':
        lines = []
        for switches, value, description in options({'gateway': gateway, 'inspect': inspect}[argument]):
            term = '\\fB%s\\fR' % escape(switches)
            if value is not None:
                term += '=\\fI%s\\fR' % escape(value)
            lines += ['.TP', term, inline(description + ('' if description.endswith('.') else '.'))]
        return lines
    if name == 'keys':
        return key_entries(keys(inspect, argument))
    if name == 'types':
        lines = []
        for type_name, gtype, origin in types(inspect, argument):
            entries = keys(inspect, type_name)
            from_where = 'built in' if origin == '(built in)' else 'plugin %s' % origin
            lines += ['.SS %s' % quote('type=%s' % type_name),
                      inline('A %s (`%s`, %s). Its keys:' % (argument, gtype, from_where))]
            lines += key_entries(entries) if entries else ['.PP', 'It has none.']
        return lines
    raise SystemExit('unknown directive @%s@' % text)


def convert(source, gateway, inspect, values):
    def substitute(match):
        return values[match.group(1)] if match.group(1) in values else match.group(0)

    lines = ['.\\" Generated by make-man.py from %s: edit that file.' % os.path.basename(source)]
    paragraph = []
    literal = None

    def flush():
        if paragraph:
            lines.extend(['.PP', inline(' '.join(paragraph))])
            paragraph.clear()

    with open(source, encoding='utf-8') as f:
        text = re.sub(r'@([A-Z_]+)@', substitute, f.read())

    rows = text.splitlines()
    i = 0
    while i < len(rows):
        row = rows[i]
        i += 1
        if literal is not None:
            if row.startswith('```'):
                lines += ['.PP', '.RS 4', '.nf'] + literal + ['.fi', '.RE']
                literal = None
            else:
                literal.append(escape(row) if row else '')
            continue
        if row.startswith('```'):
            flush()
            literal = []
        elif row.startswith('% '):
            name, section, footer, header = re.match(r'% (\S+) (\S+) "([^"]*)" "([^"]*)"', row).groups()
            lines.append('.TH %s %s "" %s %s' % (quote(name.upper()), section, quote(footer), quote(header)))
        elif row.startswith('## '):
            flush()
            lines.append('.SS %s' % quote(row[3:]))
        elif row.startswith('# '):
            flush()
            lines.append('.SH %s' % quote(row[2:]))
        elif re.match(r'^@[a-z]+ ?[a-z]*@$', row):
            flush()
            lines += directive(row.strip('@'), gateway, inspect)
        elif row.startswith('`') and i < len(rows) and rows[i].startswith(': '):
            flush()
            lines += ['.TP', inline(row), inline(rows[i][2:])]
            i += 1
            while i < len(rows) and rows[i].startswith('  ') and rows[i].strip():
                lines[-1] += ' ' + inline(rows[i].strip())
                i += 1
        elif row.startswith('- '):
            flush()
            lines += ['.IP \\(bu 2', inline(row[2:])]
            while i < len(rows) and rows[i].startswith('  ') and rows[i].strip():
                lines[-1] += ' ' + inline(rows[i].strip())
                i += 1
        elif not row.strip():
            flush()
        else:
            paragraph.append(row.strip())
    flush()
    if literal is not None:
        raise SystemExit('%s: a literal block is not closed' % source)
    return '\n'.join(lines) + '\n'


def main(argv):
    source, output, gateway, inspect = argv[1:5]
    values = dict(item.split('=', 1) for item in argv[5:])
    page = convert(source, gateway, inspect, values)
    with open(output, 'w', encoding='ascii') as f:
        f.write(page)


if __name__ == '__main__':
    main(sys.argv)
