#!/bin/sh
# test-out-of-tree-plugin.sh: a third-party C plugin builds against the
# installed library alone, and the installed gateway loads it; so do the
# tree's own stage plugins
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Usage: test-out-of-tree-plugin.sh MESON PKG_CONFIG CC BUILD_ROOT PREFIX LIBDIR BINDIR DATADIR EXAMPLE_DIR PLUGINS_DIR
#
# Installs the build into a temporary root, compiles the e-mail redactor
# example with nothing but `pkg-config symfonic-1.0` (its prefix moved to
# that root), and has the installed symfonic-inspect and
# symfonic-gateway --check load it from a plugin folder of its own. Then
# compiles the stage plugins of PLUGINS_DIR the same way, each from its
# folder's sources alone (a config.h of one line stands for the tree's),
# and has the installed gateway check its default pipeline with them
# loaded in place of the installed ones.

set -eu

meson=$1 pkg_config=$2 cc=$3 build_root=$4 prefix=$5 libdir=$6 bindir=$7 datadir=$8 example=$9 plugins=${10}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root

fail () {
  echo "FAIL: $*" >&2
  exit 1
}

"$meson" install -C "$build_root" --no-rebuild --destdir "$root" --quiet >/dev/null

# the .pc as installed, but for its prefix, which is the temporary root's
mkdir "$work/pkgconfig"
pc=$root$prefix/$libdir/pkgconfig/symfonic-1.0.pc
[ -f "$pc" ] || fail "no symfonic-1.0.pc installed in $prefix/$libdir/pkgconfig"
sed "s|^prefix=.*|prefix=$root$prefix|" "$pc" > "$work/pkgconfig/symfonic-1.0.pc"
PKG_CONFIG_PATH=$work/pkgconfig
export PKG_CONFIG_PATH

plugindir=$("$pkg_config" --variable=plugindir symfonic-1.0)
[ "$plugindir" = "$root$prefix/$libdir/symfonic-1.0/plugins" ] || fail "plugindir is “$plugindir”"

mkdir "$work/plugins"
# shellcheck disable=SC2046 # pkg-config's words are separate arguments
"$cc" -Wall -Werror -shared -fPIC -o "$work/plugins/libexample-email-redactor.so" \
  "$example"/*.c $("$pkg_config" --cflags --libs symfonic-1.0)

LD_LIBRARY_PATH=$root$prefix/$libdir
SYMFONIC_PLUGIN_PATH=$work/plugins:$plugindir
export LD_LIBRARY_PATH SYMFONIC_PLUGIN_PATH

inspected=$("$root$prefix/$bindir/symfonic-inspect" email-redactor)
echo "$inspected" | grep -q "^email-redactor (stage ExampleEmailRedactorStage)" ||
  fail "symfonic-inspect does not list the stage: $inspected"
echo "$inspected" | grep -q "from plugin email-redactor .*: $work/plugins/libexample-email-redactor.so" ||
  fail "symfonic-inspect names another file: $inspected"
for property in replacement fail-marker refuse-tenant; do
  echo "$inspected" | grep -q "^  $property " || fail "no property $property: $inspected"
done

mkdir "$work/transcripts"
echo '{"event":"TextDeltaEvent","data":{"text":"Write to bob@example.com"},"delay_ms":0}' \
  > "$work/transcripts/plain.jsonl"
write_pipeline () {
  cat > "$work/redact.pipeline" <<PIPELINE
[gateway]
listen=127.0.0.1:8080
workers=1

[route:typed]
path=/api/v1/stream/typed
kind=typed
source=fixtures
stages=redactor

[source:fixtures]
type=replay
transcripts=transcripts
default-transcript=plain

[stage:redactor]
type=email-redactor
$1
PIPELINE
}

write_pipeline "replacement=[address]"
"$root$prefix/$bindir/symfonic-gateway" --check "$work/redact.pipeline" ||
  fail "--check refuses a pipeline with the plugin's stage"

# its properties are its keys: a misspelt one is refused with its line
write_pipeline "replacment=[address]"
if checked=$("$root$prefix/$bindir/symfonic-gateway" --check "$work/redact.pipeline" 2>&1); then
  fail "--check accepts an unknown key of the plugin's stage"
fi
echo "$checked" | grep -q "redact.pipeline:18: \[stage:redactor\] replacment: expected a key of type .* found an unknown one" ||
  fail "--check says: $checked"

# The tree's stage plugins, as a third party would build them: each
# folder's sources, the public headers and nothing else.
mkdir "$work/config" "$work/stage-plugins"
echo '#define GETTEXT_PACKAGE "symfonic-gateway"' > "$work/config/config.h"
for name in auth metering extraction citation release-line projection error-map; do
  extra=
  [ "$name" = auth ] && extra="libjwt libcrypto"
  # shellcheck disable=SC2046,SC2086 # pkg-config's words are separate arguments
  "$cc" -Wall -Werror -shared -fPIC -o "$work/stage-plugins/libsymfonic-$name.so" \
    -I"$work/config" -DG_LOG_DOMAIN="\"symfonic-$name\"" \
    "$plugins/$name"/*.c $("$pkg_config" --cflags --libs symfonic-1.0 $extra) ||
    fail "the $name plugin does not build against the installed library"
done

SYMFONIC_PLUGIN_PATH=$work/stage-plugins:$plugindir
export SYMFONIC_PLUGIN_PATH

for type in auth rate-limit budget extraction citation release-line projection error-map; do
  inspected=$("$root$prefix/$bindir/symfonic-inspect" "$type")
  echo "$inspected" | grep -q "from plugin .*: $work/stage-plugins/libsymfonic-.*\.so" ||
    fail "symfonic-inspect does not take $type from the plugin built here: $inspected"
done

pipeline=$root$prefix/$datadir/symfonic-gateway/pipelines/default.pipeline
[ -f "$pipeline" ] || fail "no default pipeline installed"
"$root$prefix/$bindir/symfonic-gateway" --check "$pipeline" ||
  fail "--check refuses the default pipeline with the plugins built here"

echo "ok"
