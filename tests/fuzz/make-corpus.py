#!/usr/bin/env python3
# Builds a fuzz target's seed corpus from the test fixtures.
#
#   make-corpus.py FORMAT OUTDIR FIXTURE...
#
# FORMAT is how a target reads its input (see fuzz-common.h for the split):
#   file  each fixture as it is (pipelines, tables)
#   sse   each transcript as the SSE stream an upstream would send, whole
#         and cut into small pieces
#   text  the answer and thinking text of each transcript, cut where the
#         transcript cut its deltas
#   split each fixture as it is, whole and cut into small pieces (network
#         input such as request bodies)
import hashlib
import json
import os
import shutil
import sys


def split_header(lengths):
    lengths = [min(max(n, 1), 256) - 1 for n in lengths[:15]]
    return bytes([len(lengths)] + lengths)


def events(path):
    # as the replay source reads transcripts: blank and # lines are skipped
    with open(path, encoding='utf-8') as f:
        for line in f:
            if line.strip() and not line.startswith('#'):
                yield json.loads(line)


def sse_seeds(path):
    stream = ''.join('event: {}\ndata: {}\n\n'.format(e.get('event', 'message'), json.dumps(e.get('data', {})))
                     for e in events(path)).encode()
    yield split_header([]) + stream
    yield split_header([1, 7, 41]) + stream


def text_seeds(path):
    deltas = [e['data']['text'].encode() for e in events(path)
              if e.get('event') in ('TextDeltaEvent', 'ThinkingDeltaEvent')
              and isinstance(e.get('data'), dict) and isinstance(e['data'].get('text'), str)]
    if deltas:
        yield split_header([len(d) for d in deltas]) + b''.join(deltas)


def split_seeds(path):
    with open(path, 'rb') as f:
        data = f.read()
    yield split_header([]) + data
    yield split_header([1, 2, 3, 5]) + data


def file_seeds(path):
    with open(path, 'rb') as f:
        yield f.read()


def main():
    fmt, outdir, fixtures = sys.argv[1], sys.argv[2], sys.argv[3:]
    seeds = {'file': file_seeds, 'sse': sse_seeds, 'text': text_seeds, 'split': split_seeds}[fmt]
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    for fixture in fixtures:
        for seed in seeds(fixture):
            name = hashlib.sha1(seed).hexdigest()
            with open(os.path.join(outdir, name), 'wb') as f:
                f.write(seed)


if __name__ == '__main__':
    main()
