#!/usr/bin/env bash
# build.sh [OUT_DIR] — build a self-contained Gitea binary, OUT_DIR/gitea, from the Go
# module proxy alone: no cgo, no npm, no prebuilt download. OUT_DIR defaults to $OUT, which
# is how hack/tools.sh calls it (`make gitea` caches the result per content of hack/gitea).
#
# The forge for knit's e2e tests (internal/gitea starts it). Only the API, git over HTTP and
# webhooks matter there, so the web UI's JS/CSS is not built (pages still answer, unstyled).
# Cold (empty module and build caches): ~4 min on 2 idle cores, up to ~10 under load, 1.5 GB
# peak RSS, 1.4 GB of modules into GOMODCACHE and 1.4 GB of GOCACHE; with warm Go caches ~11 s.
# Needs go >= 1.26.4 (Gitea's go.mod says so). Env: GITEA_VERSION (default below).
set -euo pipefail
VER=${GITEA_VERSION:-1.27.3}
OUT=${1:-${OUT:?usage: build.sh OUT_DIR}}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
SRC=$(mktemp -d "${TMPDIR:-/tmp}/gitea-src.XXXXXX")
trap 'rm -rf "$SRC"' EXIT
export CGO_ENABLED=0 GOFLAGS=-mod=mod
# The two alias modules below are not in the checksum database; check_alias compares their
# content with Gitea's own go.sum instead.
export GONOSUMDB=${GONOSUMDB:+$GONOSUMDB,}code.gitea.io/sdk,code.gitea.io/actions-proto-go
t0=$(date +%s)

# 1. Source: the module zip of code.gitea.io/gitea, built as the main module. Its go.mod says
#    "module gitea.dev" since 1.27 and carries replace directives, so neither
#    `go install code.gitea.io/gitea@vX` nor a tools module can build it; and bindata is
#    generated into the source tree, which the read-only module cache cannot take.
dir=$(go mod download -json "code.gitea.io/gitea@v$VER" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$dir" ] || { echo "build.sh: go mod download code.gitea.io/gitea@v$VER gave no Dir" >&2; exit 1; }
cp -r "$dir/." "$SRC"; chmod -R u+w "$SRC"; cd "$SRC"

# 2. What the Go module proxy lacks:
#    gitea.dev/* is not a host the proxy serves -> the same bytes published as code.gitea.io/*
#    (their go.mod already says gitea.dev/...); gitlab client-go/v2 v2.42.0 is not on the
#    proxy -> v2.43.0, the nearest newer one (only Gitea's GitLab migrator uses it).
go mod edit \
  -replace gitea.dev/sdk@v1.1.0=code.gitea.io/sdk@v1.1.0 \
  -replace gitea.dev/actions-proto-go@v0.6.0=code.gitea.io/actions-proto-go@v0.6.0 \
  -replace gitlab.com/gitlab-org/api/client-go/v2@v2.42.0=gitlab.com/gitlab-org/api/client-go/v2@v2.43.0

check_alias() { # ALIAS VERSION REQUIRED: the alias's zip must hash, under REQUIRED, to go.sum's h1
  local zip want got
  zip=$(go mod download -json "$1@$2" | sed -n 's/^[[:space:]]*"Zip": "\(.*\)",$/\1/p')
  want=$(awk -v m="$3" -v v="$2" '$1==m && $2==v {print $3}' go.sum)
  got=$(cd "$HERE" && go run ./aliashash "$zip" "$1@$2" "$3@$2")
  [ -n "$want" ] && [ "$got" = "$want" ] ||
    { echo "build.sh: $1@$2 is not what Gitea's go.sum pins for $3 ($got != $want)" >&2; exit 1; }
  echo "build.sh: $1@$2 has the bytes of $3@$2 ($got)" >&2
}
check_alias code.gitea.io/sdk v1.1.0 gitea.dev/sdk
check_alias code.gitea.io/actions-proto-go v0.6.0 gitea.dev/actions-proto-go

# 3. Embed templates, options, public files and migrations (bindata): the binary then needs no
#    source tree at run time.
for d in options public templates migration; do
  (cd "modules/$d" && go generate -tags bindata .)
done

# 4. Build. Pure-Go modernc sqlite is Gitea's default driver since 1.27: no cgo, no sqlite tags.
go build -trimpath -tags bindata \
  -ldflags "-s -w -X \"main.Version=$VER\" -X \"main.Tags=bindata\"" -o "$OUT/gitea.new" .
mv "$OUT/gitea.new" "$OUT/gitea"
echo "build.sh: built $OUT/gitea (Gitea $VER) in $(( $(date +%s) - t0 ))s" >&2
