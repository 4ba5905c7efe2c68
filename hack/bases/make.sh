#!/usr/bin/env bash
# make.sh: `make base-images`. Builds the python and node bases (hack/bases:
# made from Debian's packages, since no base image may come from a
# registry outside) once per content into $TOOLS_CACHE/bases-<key>,
# outside the clone, and links $BIN/bases to it; the .debs stay in
# $TOOLS_CACHE/debs for the next build. The key hashes hack/bases's
# sources and the exact package versions apt would pick, so a Debian
# security update builds a new set beside the old one, and a warm run
# only asks apt (offline, a few seconds). apt-get update runs only when
# apt knows no python3 at all. Needs Debian (apt-get, dpkg-deb); as root it
# also runs each base's interpreter and shell in a chroot of it.
set -euo pipefail
: "${BIN:?BIN is not set}" "${TOOLS_CACHE:?TOOLS_CACHE is not set}"
if [ "$(uname -s)" != Linux ] || ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then
  echo "base-images: needs Debian (apt-get, dpkg-deb); skipped" >&2
  exit 0
fi
cd "$(dirname "$0")/../.."
bases="python node buildkit"
if ! LC_ALL=C apt-cache policy python3 2>/dev/null | grep -q 'Candidate: [0-9]'; then
  [ "$(id -u)" = 0 ] || { echo "base-images: apt knows no python3: run apt-get update as root" >&2; exit 1; }
  apt-get update -qq
fi
debs=$TOOLS_CACHE/debs
versions=$(go run ./hack/bases -cache "$debs" -versions $bases)
key=$({ find hack/bases -type f \( -name '*.go' -o -name '*.sh' \) ! -name '*_test.go' -print0 | sort -z | xargs -0 cat
        echo "$versions"; } | sha256sum | cut -c1-16)
out=$TOOLS_CACHE/bases-$key
ok=1
for b in $bases; do [ -f "$out/$b/index.json" ] || ok=0; done
if [ $ok = 0 ]; then
  echo "building the base images ($bases) from Debian's packages into $out" >&2
  start=$(date +%s)
  rm -rf "$out.tmp"
  go run ./hack/bases -cache "$debs" -out "$out.tmp" $([ "$(id -u)" = 0 ] && echo -check) $bases
  rm -rf "$out" && mv "$out.tmp" "$out"
  echo "built the base images in $(( $(date +%s) - start ))s" >&2
fi
mkdir -p "$BIN"
[ "$(readlink "$BIN/bases" 2>/dev/null)" = "$out" ] || ln -sfn "$out" "$BIN/bases"
