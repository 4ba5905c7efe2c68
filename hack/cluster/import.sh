#!/usr/bin/env bash
# import.sh STATE_DIR TARBALL... — load docker save tarballs (make images,
# imgbuild) into the containerd of the test cluster that up.sh STATE_DIR
# runs, in the k8s.io namespace the kubelet's CRI reads, so pods use them
# with imagePullPolicy IfNotPresent or Never: the cluster has no registry.
#
# ctr runs inside the node's mount and network namespaces (containerd's
# socket is on a tmpfs only they see). A tarball whose content was imported
# before and whose image is still there is skipped: the images are
# reproducible, so an unchanged build is a no-op.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STATE=${1:?usage: import.sh STATE_DIR TARBALL...}
shift
NAME=${KNIT_K8S_NAME:-knitk8s}
BIN=${KNIT_K8S_BIN:-$HERE/../../bin}
BIN=$(cd "$BIN" && pwd)
STATE=$(cd "$STATE" 2>/dev/null && pwd) || { echo "import.sh: no cluster state at $1: run make cluster" >&2; exit 1; }
RUN=$STATE/run
[ "$(id -u)" = 0 ] || { echo "import.sh: run as root" >&2; exit 1; }

holder=$(cat "$RUN/holder.pid" 2>/dev/null) && [ -d "/proc/$holder" ] &&
  [ "$(stat -Lc %i "/proc/$holder/ns/net")" = "$(stat -Lc %i "/run/netns/$NAME" 2>/dev/null)" ] ||
  { echo "import.sh: the cluster at $STATE is not running: run make cluster" >&2; exit 1; }
# ctr warns on every call that cgroup v1 is deprecated: its error output is
# shown only when it fails.
ctr() {
  local err rc=0
  err=$(mktemp)
  nsenter -t "$holder" -m -n -- "$BIN/ctr" --address /run/containerd/containerd.sock -n k8s.io "$@" 2>"$err" || rc=$?
  [ $rc = 0 ] || cat "$err" >&2
  rm -f "$err"
  return $rc
}

mkdir -p "$RUN/imported"
present=$(ctr images ls -q)
for tarball in "$@"; do
  tarball=$(realpath "$tarball")   # nsenter -m resets the working directory
  ref=$(tar -xOf "$tarball" manifest.json | grep -o '"RepoTags":\["[^"]*"' | cut -d'"' -f4)
  [ -n "$ref" ] || { echo "import.sh: $tarball has no RepoTags in manifest.json" >&2; exit 1; }
  sum=$(sha256sum "$tarball" | cut -d' ' -f1)
  stamp=$RUN/imported/$(echo "$ref" | tr '/:' '__')
  if [ "$(cat "$stamp" 2>/dev/null)" = "$sum" ] && grep -qxF "$ref" <<<"$present"; then
    continue
  fi
  ctr images import "$tarball" >/dev/null
  echo "$sum" >"$stamp"
  echo "imported $ref ($(du -h "$tarball" | cut -f1)) from $tarball" >&2
done
