#!/bin/sh
# run-sdk-tests.sh NODE_DIR: installs the pinned official SDKs into NODE_DIR
# (a folder of the build) and runs test-sdk.mjs against the gateway.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu

# The versions the tests were written against; both run on node 20.
OPENAI_VERSION=5.23.2
ANTHROPIC_VERSION=0.60.0

node_dir=$1
here=$(dirname "$0")

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "1..0 # SKIP node and npm are needed for the SDK tests (apt-get install nodejs npm)"
  exit 77
fi

installed () {
  node -e "process.exit(require('$node_dir/node_modules/$1/package.json').version === '$2' ? 0 : 1)" 2>/dev/null
}

if ! installed openai "$OPENAI_VERSION" || ! installed @anthropic-ai/sdk "$ANTHROPIC_VERSION"; then
  mkdir -p "$node_dir"
  npm install --no-save --no-audit --no-fund --prefix "$node_dir" \
    "openai@$OPENAI_VERSION" "@anthropic-ai/sdk@$ANTHROPIC_VERSION" >&2
fi

exec node "$here/test-sdk.mjs" "$node_dir"
