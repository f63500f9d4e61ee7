#!/bin/sh
# test-installed-scripts.sh: after `meson install`, a .py and a .js file in
# the installed plugin folder are plugins, with no GI_TYPELIB_PATH set, and
# the shipped systemd unit's command loads them as it is; the pipeline it
# serves, installed in the configuration folder, serves nothing until
# edited, refuses the demo tokens, and takes its tokens file from the
# credentials folder systemd hands the service
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Usage: test-installed-scripts.sh MESON SOURCE_ROOT LIBDIR BINDIR SCRIPTS_DIR
#
# Where a typelib is looked for is compiled in, and `meson install
# --destdir` leaves it pointing at the real prefix, so this configures the
# tree afresh for a temporary prefix and installs it there for real. The
# installed programs then run in an environment as bare as systemd gives a
# service, plus LD_LIBRARY_PATH on the prefix's library folder: the dynamic
# linker knows /usr/local's (after ldconfig) but not a temporary one, and
# that is where the library is, not where its typelib is.

set -eu

meson=$1 source_root=$2 libdir=$3 bindir=$4 scripts=$5

work=$(mktemp -d)
gateway_pid=
cleanup () {
  if [ -n "$gateway_pid" ]; then
    kill "$gateway_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
prefix=$work/prefix
plugins=$prefix/$libdir/symfonic-1.0/plugins

fail () {
  echo "FAIL: $*" >&2
  exit 1
}

# nothing of the test environment's build may leak into the one made here
unset GI_TYPELIB_PATH LD_LIBRARY_PATH SYMFONIC_PLUGIN_PATH MALLOC_CHECK_ MALLOC_PERTURB_

if ! { "$meson" setup "$work/build" "$source_root" --prefix "$prefix" --libdir "$libdir" --bindir "$bindir" \
         -Dbuildtype=debug -Dtests=false -Dfuzzing=disabled \
         -Dintrospection=enabled -Dpython=enabled -Dgjs=enabled &&
       "$meson" install -C "$work/build" --quiet; } > "$work/build.log" 2>&1; then
  cat "$work/build.log" >&2
  fail "cannot build and install into $prefix"
fi

cp "$scripts/suffix.py" "$scripts/prefix.js" "$plugins/"

clean_env () {
  env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="$prefix/$libdir" "$@"
}

inspected=$(clean_env "$prefix/$bindir/symfonic-inspect") || fail "symfonic-inspect fails: $inspected"
for script in suffix.py prefix.js; do
  echo "$inspected" | grep -q "^    $plugins/$script\$" || fail "symfonic-inspect does not list $script: $inspected"
done

mkdir "$work/transcripts"
echo '{"event":"TextDeltaEvent","data":{"text":"one"},"delay_ms":0}' > "$work/transcripts/one.jsonl"
cat > "$work/scripts.pipeline" <<PIPELINE
[gateway]
listen=127.0.0.1:8080
workers=1

[route:typed]
path=/api/v1/stream/typed
kind=typed
source=fixtures
stages=prefix;suffix

[source:fixtures]
type=replay
transcripts=transcripts
default-transcript=one

[stage:prefix]
type=js-prefix
prefix=>

[stage:suffix]
type=py-suffix
suffix=!
PIPELINE

# in a subshell that becomes the gateway, so that $! is the gateway's
(exec env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="$prefix/$libdir" \
   "$prefix/$bindir/symfonic-gateway" --listen 127.0.0.1:0 "$work/scripts.pipeline" \
   > "$work/gateway.out" 2> "$work/gateway.err") &
gateway_pid=$!
url=
for _ in $(seq 200); do
  url=$(sed -n 's|.* on \(http://[^ ]*\).*|\1|p' "$work/gateway.out")
  [ -n "$url" ] && break
  kill -0 "$gateway_pid" 2>/dev/null || fail "the gateway exited: $(cat "$work/gateway.err")"
  sleep 0.1
done
[ -n "$url" ] || fail "the gateway does not say where it listens: $(cat "$work/gateway.out" "$work/gateway.err")"

answer=$("$CURL" -sS -N -X POST -H 'Content-Type: application/json' -d '{"query":"hi"}' "${url}api/v1/stream/typed")
echo "$answer" | grep -qx 'data: {"text":">one!"}' || fail "the script stages did not serve: $answer"
echo "$answer" | grep -qx 'event: ResponseCompleteEvent' || fail "no terminal frame: $answer"
kill -TERM "$gateway_pid"
wait "$gateway_pid" || fail "the gateway did not stop cleanly: $(cat "$work/gateway.err")"
gateway_pid=

# The unit sets no environment of its own: its command, as it stands,
# serves the installed configuration folder's pipeline, which the install
# put there as an example that serves nothing until edited. Checking it
# loads every plugin of the installed folder, the scripts too, first: the
# one complaint is the missing route.
unit=$(find "$prefix" -name symfonic-gateway.service)
[ -n "$unit" ] || fail "no symfonic-gateway.service installed under $prefix"
if grep -q '^Environment' "$unit"; then
  fail "the unit sets an environment: $(grep '^Environment' "$unit")"
fi
pipeline=$prefix/etc/symfonic/gateway.pipeline
[ -f "$pipeline" ] || fail "the install put no $pipeline in place"
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
[ "$exec_start" = "$prefix/$bindir/symfonic-gateway $pipeline" ] || fail "the unit runs “$exec_start”"
# shellcheck disable=SC2086 # the unit's command line, split as systemd does
if checked=$(clean_env $exec_start --check 2>&1); then
  fail "the example pipeline serves as installed: $checked"
fi
case $checked in
  *": expected at least one [route:NAME], found none") ;;
  *) fail "the unit's command does not load the scripts, or the example is not the only fault: $checked" ;;
esac

# Edited to serve the installed demo tokens, it refuses to, though it
# would serve on loopback; the same file elsewhere may.
share=$(dirname "$(find "$prefix" -name demo-tokens.ini)")
cat > "$pipeline" <<PIPELINE
[route:typed]
path=/api/v1/stream/typed
kind=typed
source=demo
stages=auth

[source:demo]
type=replay
transcripts=$share/transcripts

[stage:auth]
type=auth
tokens-file=$share/demo-tokens.ini
PIPELINE
# shellcheck disable=SC2086
if refused=$(clean_env $exec_start --check 2>&1); then
  fail "a pipeline in the configuration folder serves the demo tokens: $refused"
fi
echo "$refused" | grep -q 'Refusing to serve the demo tokens.*\[stage:auth\]' ||
  fail "the refusal does not say why: $refused"
cp "$pipeline" "$work/demo.pipeline"
allowed=$(clean_env "$prefix/$bindir/symfonic-gateway" --check "$work/demo.pipeline" 2>&1) ||
  fail "the demo pipeline outside the configuration folder does not load: $allowed"

# With a tokens file of its own, from the folder systemd hands the
# service its credentials in, it serves.
mkdir "$work/credentials"
printf '[principal:app]\ntoken-sha256=%s\ntenants=acme\n' \
  "$(printf %s "a-token-of-our-own" | sha256sum | cut -d' ' -f1)" > "$work/credentials/symfonic.tokens"
sed -i 's|^tokens-file=.*|tokens-file=${CREDENTIALS_DIRECTORY}/symfonic.tokens|' "$pipeline"
# shellcheck disable=SC2086
served=$(clean_env env CREDENTIALS_DIRECTORY="$work/credentials" $exec_start --check 2>&1) ||
  fail "the pipeline with its credentials does not load: $served"

echo "ok"
