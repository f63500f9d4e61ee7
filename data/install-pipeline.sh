#!/bin/sh
# install-pipeline.sh EXAMPLE PIPELINE: puts the installed EXAMPLE in
# place as PIPELINE, the file the service reads, unless PIPELINE exists:
# installing again never overwrites the operator's own. Both are absolute
# paths; DESTDIR, when set, is prepended to each.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu

example=${DESTDIR:-}$1
pipeline=${DESTDIR:-}$2

if [ -e "$pipeline" ]; then
  echo "Keeping $pipeline"
  exit 0
fi
mkdir -p "$(dirname "$pipeline")"
cp "$example" "$pipeline"
chmod 0644 "$pipeline"
echo "Installing $pipeline (it serves nothing until edited)"
