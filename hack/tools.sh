#!/usr/bin/env bash
# tools.sh NAME MODULE_DIR "OUTPUTS" -- BUILD_CMD...
#
# Builds a tools module's binaries once per content and links them into
# $BIN. The binaries live in $TOOLS_CACHE/NAME-<key>/, outside the clone,
# where <key> hashes the module's go.mod, go.sum, Go sources and the build
# command: a fresh clone on a warm machine links in milliseconds instead of
# relinking kube-apiserver, and a changed go.mod builds a new set beside the
# old one. BUILD_CMD runs in MODULE_DIR with $OUT set to the directory to
# write into.
set -euo pipefail
name=$1 dir=$2 outs=$3
shift 3
[ "${1:-}" = -- ] && shift
: "${BIN:?BIN is not set}" "${TOOLS_CACHE:?TOOLS_CACHE is not set}"
key=$({ cat "$dir/go.mod" "$dir/go.sum"
        find "$dir" -name '*.go' -print0 | sort -z | xargs -0r cat
        echo "$*"; } | sha256sum | cut -c1-16)
OUT=$TOOLS_CACHE/$name-$key
ok=1
for o in $outs; do [ -x "$OUT/$o" ] || ok=0; done
if [ $ok = 0 ]; then
  echo "building $name ($outs) from the Go module proxy into $OUT" >&2
  start=$(date +%s)
  rm -rf "$OUT.tmp" && mkdir -p "$OUT.tmp"
  (cd "$dir" && OUT=$OUT.tmp "$@")
  rm -rf "$OUT" && mv "$OUT.tmp" "$OUT"
  echo "built $name in $(( $(date +%s) - start ))s" >&2
fi
mkdir -p "$BIN"
for o in $outs; do
  [ "$(readlink "$BIN/$o" 2>/dev/null)" = "$OUT/$o" ] || ln -sfn "$OUT/$o" "$BIN/$o"
done
