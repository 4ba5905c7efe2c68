#!/usr/bin/env bash
# build.sh [OUT_DIR] — build Knative Serving's queue-proxy (knative.dev/serving/cmd/queue,
# the release this module's go.mod pins) into OUT_DIR/knative-queue, for `make bench`.
# OUT_DIR defaults to $OUT, which is how hack/tools.sh calls it (cached per content of
# hack/knative, linked to ./bin/knative-queue).
#
# The module is vendored into a temporary copy of this directory and one vendored file,
# pkg/queue/sharedmain/servers.go, is replaced by loopback/servers.go: the same servers
# bound to 127.0.0.1 instead of every interface and fixed ports (see that file). The
# original's hash is checked first, so a version bump stops here until someone compares
# the two again. Built as knit builds its own images: static, -trimpath, -s -w.
# Cold (empty module and build caches): see README (make bench); warm: a few seconds.
set -euo pipefail
OUT=${1:-${OUT:?usage: build.sh OUT_DIR}}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
UPSTREAM_SHA256=a463760ef2c755d5bf91f5c8cab99d0ba17b1857c523f4d16b81b28af6e548a6
REPLACED=vendor/knative.dev/serving/pkg/queue/sharedmain/servers.go

SRC=$(mktemp -d "${TMPDIR:-/tmp}/knative-queue.XXXXXX")
trap 'rm -rf "$SRC"' EXIT
cp "$HERE/go.mod" "$HERE/go.sum" "$SRC/"
cd "$SRC"
go mod vendor
got=$(sha256sum "$REPLACED" | cut -d' ' -f1)
if [ "$got" != "$UPSTREAM_SHA256" ]; then
  echo "build.sh: $REPLACED is not the file loopback/servers.go was made from" >&2
  echo "build.sh: (sha256 $got, want $UPSTREAM_SHA256); redo the patch for this release" >&2
  exit 1
fi
cp "$HERE/loopback/servers.go" "$REPLACED"
CGO_ENABLED=0 go build -mod=vendor -trimpath -ldflags "-s -w" -o "$OUT/knative-queue" knative.dev/serving/cmd/queue
