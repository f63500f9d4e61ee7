#!/bin/sh
# run-sdk-tests.sh NODE_DIR: installs the pinned SDKs into NODE_DIR (a
# folder of the build) and runs test-sdk.mjs against the gateway.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu

# The versions the tests were written against; each installs and runs on
# node 20: the official OpenAI and Anthropic SDKs, the Vercel AI SDK 6
# with its OpenAI, OpenAI-compatible and Anthropic providers, and
# LangChain JS's OpenAI and Anthropic chat models (zod for the schemas
# of structured output).
PACKAGES="openai@6.49.0 @anthropic-ai/sdk@0.122.0 ai@6.0.333 @ai-sdk/openai@3.0.141
@ai-sdk/openai-compatible@2.0.92 @ai-sdk/anthropic@3.0.140 @langchain/core@1.2.18 @langchain/openai@1.5.5
@langchain/anthropic@1.5.11 zod@4.1.13"

node_dir=$1
here=$(dirname "$0")

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "1..0 # SKIP node and npm are needed for the SDK tests (apt-get install nodejs npm)"
  exit 77
fi

installed () {
  name=${1%@*}
  version=${1##*@}
  node -e "process.exit(require('$node_dir/node_modules/$name/package.json').version === '$version' ? 0 : 1)" 2>/dev/null
}

missing=
for package in $PACKAGES; do
  installed "$package" || missing=yes
done
if [ -n "$missing" ]; then
  mkdir -p "$node_dir"
  # shellcheck disable=SC2086
  npm install --no-save --no-audit --no-fund --prefix "$node_dir" $PACKAGES >&2
fi

exec node "$here/test-sdk.mjs" "$node_dir"
