#!/usr/bin/env python3
# complete-field-docs.py: puts the documentation of the virtual functions
# of class and interface structs back into the introspection data that
# the API reference is generated from.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# g-ir-scanner before 1.76 reads `@field: text` of a struct's doc comment
# but writes no <doc> for a field that is a function pointer, so gi-docgen
# would say "No description available." of every virtual function in the
# struct tables, however well documented. This copies those texts from
# the doc comments of the headers into the fields that lack one. Only the
# reference's copy is changed; the installed .gir is the scanner's.
#
# Usage: complete-field-docs.py OUTPUT.gir INPUT.gir HEADER...

import re
import sys
import xml.etree.ElementTree as ET

CORE = 'http://www.gtk.org/introspection/core/1.0'
C = 'http://www.gtk.org/introspection/c/1.0'
GLIB = 'http://www.gtk.org/introspection/glib/1.0'

BLOCK = re.compile(r'/\*\*\n \* (\w+):[^\n]*\n(.*?)\*/', re.S)
PARAM = re.compile(r'^ \* @(\w+): ?(.*)$')
CONTINUATION = re.compile(r'^ \*   +(.*)$')


def field_docs(headers):
    """{struct C type: {field: (text, header, line)}} from the doc comments
    of @headers."""
    docs = {}
    for header in headers:
        with open(header, encoding='utf-8') as f:
            text = f.read()
        for block in BLOCK.finditer(text):
            fields = docs.setdefault(block.group(1), {})
            first = text.count('\n', 0, block.start(2)) + 1
            current = None
            for number, line in enumerate(block.group(2).splitlines(), first):
                param = PARAM.match(line)
                more = CONTINUATION.match(line)
                if param:
                    current = param.group(1)
                    fields[current] = [param.group(2).strip(), header, number]
                elif more and current is not None:
                    fields[current][0] += ' ' + more.group(1).strip()
                else:
                    current = None
    return docs


def main(argv):
    target, source, headers = argv[1], argv[2], argv[3:]
    docs = field_docs(headers)
    for prefix, uri in (('', CORE), ('c', C), ('glib', GLIB)):
        ET.register_namespace(prefix, uri)
    tree = ET.parse(source)
    added = 0
    for record in tree.iter('{%s}record' % CORE):
        known = docs.get(record.get('{%s}type' % C), {})
        for field in record.findall('{%s}field' % CORE):
            if field.find('{%s}doc' % CORE) is not None or field.get('name') not in known:
                continue
            text, header, line = known[field.get('name')]
            doc = ET.Element('{%s}doc' % CORE, {'xml:space': 'preserve', 'filename': header, 'line': str(line)})
            doc.text = text
            field.insert(0, doc)
            added += 1
    tree.write(target, encoding='UTF-8', xml_declaration=True)
    print('%s: documented %d fields' % (target, added))


if __name__ == '__main__':
    main(sys.argv)
