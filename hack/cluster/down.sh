#!/usr/bin/env bash
# down.sh STATE_DIR [--keep|--purge] — stop knit's test cluster that
# up.sh STATE_DIR started and remove what it added to the machine: every
# process in the cgroup /$NAME (daemons, shims, containers; found by pid,
# nothing by name), the cgroups, the network namespace with its veth,
# bridge and routes, and the empty mount-point directories up.sh had to
# create. `make cluster-down` runs it.
#   default  also deletes the cluster's state (etcd, kubelet, containerd,
#            pki, logs, volumes), so the next up.sh starts a fresh cluster
#   --keep   keeps all state (logs to read, or a restart with the same objects)
#   --purge  deletes STATE_DIR entirely
# The binaries live in ./bin and the build cache; none of this touches them.
set -uo pipefail

STATE=${1:?usage: down.sh STATE_DIR [--keep|--purge]}
MODE=${2:-}
case "$MODE" in ""|--keep|--purge) ;; *) echo "usage: down.sh STATE_DIR [--keep|--purge]" >&2; exit 2 ;; esac
NAME=${KNIT_K8S_NAME:-knitk8s}
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 1; }
[ -d "$STATE" ] && STATE=$(cd "$STATE" && pwd)
RUN=$STATE/run
CG=/sys/fs/cgroup
log() { printf '%s down.sh: %s\n' "$(date +%T)" "$*" >&2; }

# 1. Stop the daemons in stages, each with a grace period: the node and the
#    controllers, then the pods (killed: nothing in a test cluster's pods is
#    worth a graceful stop, and their open watches would hold the API
#    server's shutdown for its full 60 s), then the API server, then etcd.
stop() { # stop SECONDS DAEMON...
  local secs=$1 d p left; shift
  for d in "$@"; do
    p=$(cat "$RUN/$d.pid" 2>/dev/null) || continue
    [ -d "/proc/$p" ] && kill -TERM "$p" 2>/dev/null && log "TERM $d ($p)"
  done
  for _ in $(seq $((secs * 5))); do
    left=
    for d in "$@"; do
      p=$(cat "$RUN/$d.pid" 2>/dev/null) || continue
      [ -d "/proc/$p" ] && left+=" $d ($p)"
    done
    [ -z "$left" ] && return 0
    sleep 0.2
  done
  log "did not stop within $secs s, killed below:$left"
}
stop 5 kube-proxy kubelet kube-scheduler kube-controller-manager containerd registry
pods=$(find "$CG/pids/$NAME/kubepods" -name cgroup.procs -exec cat {} + 2>/dev/null)
[ -n "$pods" ] && kill -KILL $pods 2>/dev/null && log "KILL the pods' $(echo $pods | wc -w) processes"
stop 10 kube-apiserver
stop 5 etcd

# 2. Kill whatever is still in the cluster's cgroup: containers, shims, the
#    namespace holder, any daemon that ignored TERM.
procs() { find "$CG/pids/$NAME" -name cgroup.procs -exec cat {} + 2>/dev/null; }
for _ in $(seq 50); do
  pids=$(procs)
  [ -z "$pids" ] && break
  kill -KILL $pids 2>/dev/null
  sleep 0.1
done
[ -n "$(procs)" ] && log "WARNING: processes left in $CG/pids/$NAME: $(procs | tr '\n' ' ')"

# 3. Remove the cgroups, deepest first, in every hierarchy.
for h in "$CG"/*/; do
  [ -d "$h$NAME" ] || continue
  find "$h$NAME" -depth -type d -exec rmdir {} \; 2>/dev/null
  [ -d "$h$NAME" ] && log "WARNING: could not remove $h$NAME"
done

# 4. The network namespace: its veth (and so the host end, with its routes),
#    the bridge and the pods' veths go with it.
if [ -e "/run/netns/$NAME" ]; then
  ip netns del "$NAME" && log "deleted netns $NAME"
fi
ip link del "$NAME-h" 2>/dev/null

# 5. Mount-point directories up.sh created on the host (only if still empty).
if [ -f "$RUN/created-dirs" ]; then
  while read -r d; do rmdir "$d" 2>/dev/null; done <"$RUN/created-dirs"
  rm -f "$RUN/created-dirs"
fi
rm -f "$RUN"/*.pid

# 6. State. Nothing of the cluster is mounted on the host (its mounts lived in
#    the private mount namespace, gone with its last process), so plain rm works.
[ -d "$STATE" ] || exit 0
if grep -q " $STATE/" /proc/self/mountinfo; then
  log "WARNING: mounts under $STATE remain; not deleting state"; exit 1
fi
case "$MODE" in
  --keep) log "kept the cluster's state in $STATE" ;;
  --purge) rm -rf "$STATE" && log "removed $STATE" ;;
  *) rm -rf "$STATE"/{etcd,kubelet,containerd,containerd-opt,cni-ipam,pod-logs,container-logs,kubelet-plugins,cdi,pki,config,logs,run,images,volumes,registry,kubeconfig}
     rmdir "$STATE" 2>/dev/null
     log "removed the cluster's state under $STATE" ;;
esac
exit 0
