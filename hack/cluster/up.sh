#!/usr/bin/env bash
# up.sh STATE_DIR — knit's test cluster: a real single-node Kubernetes on
# this machine (etcd, kube-apiserver with Node,RBAC, kube-controller-manager,
# kube-scheduler, containerd 2.x with Debian's runc and CNI plugins, kubelet,
# kube-proxy in iptables mode, CoreDNS as kube-dns), running real pods in
# real containers, so the Helm chart and cluster mode are tested against the
# real thing rather than a fake. `make cluster` runs it after building the
# binaries into ./bin (make cluster-tools); this script builds nothing.
#
# The node lives in its own network namespace ($NAME) and its own mount
# namespace; everything it starts sits in the cgroup /$NAME. The root
# namespace gets only a veth ($NAME-h, $HOST_IP) and two routes (pod and
# service CIDRs via the node), so the host reaches the API server, pod IPs
# and ClusterIPs while the machine's own network, iptables and kernel
# settings stay untouched. down.sh STATE_DIR removes all of it.
#
# For a Helm chart's StatefulSets it adds a default StorageClass `local`
# (no provisioner, WaitForFirstConsumer) and $VOLUMES hostPath
# PersistentVolumes under STATE_DIR/volumes.
#
# Idempotent: starts only what is not running, writes configs only when
# their content changes. Run as root. Every workaround below was needed on a
# 2-core Debian 12 VM with cgroup v1 and without CAP_SYS_RESOURCE; the
# comments say which.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
STATE=${1:?usage: up.sh STATE_DIR}
mkdir -p "$STATE"
STATE=$(cd "$STATE" && pwd)

# ---- knobs (environment) ----
NAME=${KNIT_K8S_NAME:-knitk8s}                    # netns, cgroup and veth name
NODE=${KNIT_K8S_NODE:-knit-node}                  # the Node's name
BIN=${KNIT_K8S_BIN:-$REPO/bin}                    # binaries (make cluster-tools)
HOST_IP=${KNIT_K8S_HOST_IP:-10.250.0.1}           # root-namespace end of the veth (/30)
NODE_IP=${KNIT_K8S_NODE_IP:-10.250.0.2}           # node end: InternalIP, API server address
POD_CIDR=${KNIT_K8S_POD_CIDR:-10.244.0.0/16}      # cluster CIDR
NODE_POD_CIDR=${KNIT_K8S_NODE_POD_CIDR:-10.244.0.0/24} # the node's share (first /24 of it)
BRIDGE_IP=${KNIT_K8S_BRIDGE_IP:-10.244.0.1}       # cni0, the pods' gateway
SVC_CIDR=${KNIT_K8S_SVC_CIDR:-10.96.0.0/16}
API_SVC_IP=${KNIT_K8S_API_SVC_IP:-10.96.0.1}
PROXY_MODE=${KNIT_K8S_PROXY_MODE:-iptables}       # iptables | nftables
DNS=${KNIT_K8S_DNS:-1}                            # 1: CoreDNS as kube-dns; 0: no cluster DNS
DNS_IP=${KNIT_K8S_DNS_IP:-10.96.0.10}
VOLUMES=${KNIT_K8S_VOLUMES:-4}                    # hostPath PersistentVolumes of 1Gi
REGISTRY=${KNIT_K8S_REGISTRY:-1}                  # 1: an OCI registry on $NODE_IP:$REGISTRY_PORT (plain HTTP)
REGISTRY_PORT=${KNIT_K8S_REGISTRY_PORT:-5000}
PAUSE_IMAGE=knit.local/pause:3.10
COREDNS_IMAGE=knit.local/coredns:1.15.0
CNI_BIN=/usr/lib/cni                              # Debian's containernetworking-plugins
RUNC=/usr/sbin/runc                               # Debian's runc
CTRD_SOCK=/run/containerd/containerd.sock

RUN=$STATE/run; LOGS=$STATE/logs; PKI=$STATE/pki; CFG=$STATE/config; IMAGES=$STATE/images
T0=$(date +%s.%N)
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}'; }
log() { printf '%s [%6ss] %s\n' "$(date +%T)" "$(since "$T0")" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# put FILE <content — write only when the content differs (kube-proxy exits
# as soon as its config file is rewritten, even with the same bytes).
put() { local t; t=$(mktemp "$RUN/put.XXXXXX"); cat >"$t"; if cmp -s "$t" "$1"; then rm -f "$t"; else mv "$t" "$1"; fi; }
[ "$(id -u)" = 0 ] || die "run as root"
mkdir -p "$RUN" "$LOGS" "$PKI" "$CFG" "$IMAGES"

# ---------------------------------------------------------------- binaries
NEED=(etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl
      containerd containerd-shim-runc-v2 ctr imgbuild pause)
[ "$DNS" = 1 ] && NEED+=(coredns)
[ "$REGISTRY" = 1 ] && NEED+=(registry)
for b in "${NEED[@]}"; do
  [ -x "$BIN/$b" ] || die "$BIN/$b is missing: run make cluster-tools (or make cluster)"
done
export PATH=$BIN:$PATH

# ---------------------------------------------------------------- packages
# Debian's runc and CNI plugins; iptables for kube-proxy. Installed only
# when missing.
PKGS=(runc containernetworking-plugins iptables openssl iproute2 util-linux curl)
[ "$PROXY_MODE" = nftables ] && PKGS+=(nftables)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  log "apt-get install ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# ---------------------------------------------------------------- node images
# The pause (sandbox) and CoreDNS images, packed from ./bin (there is no
# registry to pull them from); repacked only when the binary changed.
pack() { # pack NAME REF ARGS...
  local name=$1 ref=$2; shift 2
  [ "$IMAGES/$name.tar" -nt "$BIN/$name" ] && return 0
  imgbuild -ref "$ref" -out "$IMAGES/$name.tar" -file "$BIN/$name:/$name" -entrypoint "/$name" "$@" >/dev/null
}
pack pause "$PAUSE_IMAGE"
NODE_IMAGES=("$IMAGES/pause.tar")
if [ "$DNS" = 1 ]; then
  pack coredns "$COREDNS_IMAGE" -port 1053
  NODE_IMAGES+=("$IMAGES/coredns.tar")
fi

# ---------------------------------------------------------------- certificates
# One CA signs everything. Identities (CN/O) are the ones RBAC's bootstrap
# policy and the Node authorizer expect.
if [ ! -s "$PKI/ca.crt" ]; then
  log "certificates"
  (
    cd "$PKI"
    ec() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key" 2>/dev/null; }
    ec ca
    openssl req -x509 -new -key ca.key -subj "/CN=knit-k8s-ca" -days 3650 -out ca.crt \
      -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" 2>/dev/null
    cert() { # cert NAME SUBJECT EKU [SAN]
      ec "$1"
      openssl req -new -key "$1.key" -subj "$2" -out "$1.csr" 2>/dev/null
      { echo "basicConstraints=CA:FALSE"
        echo "keyUsage=critical,digitalSignature,keyEncipherment"
        echo "extendedKeyUsage=$3"
        [ -n "${4:-}" ] && echo "subjectAltName=$4"; } >"$1.ext"
      openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
        -extfile "$1.ext" -out "$1.crt" 2>/dev/null
      rm -f "$1.csr" "$1.ext"
    }
    cert apiserver "/CN=kube-apiserver" serverAuth \
      "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:127.0.0.1,IP:$NODE_IP,IP:$API_SVC_IP"
    cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
    cert admin "/O=system:masters/CN=kubernetes-admin" clientAuth
    cert controller-manager "/CN=system:kube-controller-manager" clientAuth
    cert scheduler "/CN=system:kube-scheduler" clientAuth
    cert kube-proxy "/CN=system:kube-proxy" clientAuth
    cert kubelet "/O=system:nodes/CN=system:node:$NODE" clientAuth
    cert kubelet-serving "/O=system:nodes/CN=system:node:$NODE" serverAuth "DNS:$NODE,IP:$NODE_IP"
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.key 2>/dev/null
    openssl pkey -in sa.key -pubout -out sa.pub
    chmod 600 ./*.key
  )
fi
kubeconfig() { # kubeconfig FILE SERVER CERTNAME
  put "$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: knit
  cluster: {server: "$2", certificate-authority: "$PKI/ca.crt"}
users:
- name: $3
  user: {client-certificate: "$PKI/$3.crt", client-key: "$PKI/$3.key"}
contexts:
- name: knit
  context: {cluster: knit, user: $3}
current-context: knit
EOF
}
kubeconfig "$STATE/kubeconfig" "https://$NODE_IP:6443" admin   # works from the host and the node
for c in controller-manager scheduler kube-proxy kubelet; do
  kubeconfig "$CFG/$c.kubeconfig" "https://127.0.0.1:6443" "$c"
done

# ---------------------------------------------------------------- network
# The node's network namespace: eth0 ($NODE_IP) is a veth to the root
# namespace; cni0 is the pods' bridge, made here so the node has its pod
# gateway address and a route for ClusterIPs before the first pod (the API
# server reaches webhook Services through ClusterIPs, and a ClusterIP
# without a route fails before iptables sees it). No default route: nothing
# in the node can reach anything but the host and its pods.
node_net() { nsenter --net="/run/netns/$NAME" -- "$@"; }
[ -e "/run/netns/$NAME" ] || ip netns add "$NAME"
if ! ip link show "$NAME-h" >/dev/null 2>&1; then
  ip link add "$NAME-h" type veth peer name eth0 netns "$NAME"
  ip addr add "$HOST_IP/30" dev "$NAME-h"
  ip link set "$NAME-h" up
fi
node_net ip link set lo up
node_net ip addr replace "$NODE_IP/30" dev eth0
node_net ip link set eth0 up
node_net ip link show cni0 >/dev/null 2>&1 || node_net ip link add cni0 type bridge
node_net ip addr replace "$BRIDGE_IP/${NODE_POD_CIDR#*/}" dev cni0
node_net ip link set cni0 up
node_net ip route replace "$SVC_CIDR" dev cni0 src "$BRIDGE_IP"
# /proc/sys/net is per network namespace: these touch only the node's.
node_net sh -c 'echo 1 >/proc/sys/net/ipv4/ip_forward
  f=/proc/sys/net/bridge/bridge-nf-call-iptables; if [ -e $f ]; then echo 1 >$f; fi'
ip route replace "$POD_CIDR" via "$NODE_IP" dev "$NAME-h"
ip route replace "$SVC_CIDR" via "$NODE_IP" dev "$NAME-h"

# ---------------------------------------------------------------- cgroups
# cgroup v1: the machine binds every controller to a v1 hierarchy (its
# cgroup2 mount has only hugetlb), so runc and kubelet run on v1. /$NAME in
# every hierarchy kubelet checks is kubelet's cgroupRoot (cpuset needs cpus
# and mems filled in); the daemons themselves go to /$NAME/daemons in the
# accounting ones, so down.sh finds every process of the cluster in
# /sys/fs/cgroup/pids/$NAME.
CG=/sys/fs/cgroup
for c in cpu cpuacct cpuset memory devices freezer blkio pids systemd; do
  [ -d "$CG/$c" ] || continue
  mkdir -p "$CG/$c/$NAME"
  if [ "$c" = cpuset ]; then
    [ -s "$CG/cpuset/$NAME/cpuset.cpus" ] || cat "$CG/cpuset/cpuset.cpus" >"$CG/cpuset/$NAME/cpuset.cpus"
    [ -s "$CG/cpuset/$NAME/cpuset.mems" ] || cat "$CG/cpuset/cpuset.mems" >"$CG/cpuset/$NAME/cpuset.mems"
  fi
done
DAEMON_CGS=()
for c in pids memory cpu cpuacct; do
  [ -d "$CG/$c" ] && mkdir -p "$CG/$c/$NAME/daemons" && DAEMON_CGS+=("$CG/$c/$NAME/daemons")
done
cgjoin() { local d; for d in "${DAEMON_CGS[@]}"; do echo "$BASHPID" >"$d/cgroup.procs"; done; }

# ---------------------------------------------------------------- mount namespace
# A holder process keeps a private (slave) mount namespace, entered by every
# daemon with `nsenter -t HOLDER -m -n` (never `ip netns exec`: it gives each
# command its own mount namespace and remounts /sys, hiding the cgroups, and
# kubelet and containerd must share one). Overlay, tmpfs and netns mounts of
# containerd and kubelet stay in it and vanish with it. In it: a tmpfs on
# /run/containerd (runc and shim sockets use that path whatever the config
# says), $STATE/container-logs on /var/log/containers (kubelet's fixed
# symlink dir), and kubelet's six kernel sysctls as files that already hold
# the values kubelet wants, so it does not rewrite vm.overcommit_memory,
# kernel.panic and kernel.panic_on_oops on the shared machine.
alive() { local p; p=$(cat "$RUN/$1.pid" 2>/dev/null) && [ -n "$p" ] && [ -d "/proc/$p" ] &&
  [ "$(stat -Lc %i "/proc/$p/ns/net" 2>/dev/null)" = "$(stat -Lc %i "/run/netns/$NAME")" ]; }
if ! alive holder; then
  for f in "$RUN"/*.pid; do
    [ -e "$f" ] || continue
    p=$(cat "$f"); [ -d "/proc/$p" ] && die "$(basename "$f" .pid) (pid $p) runs without its namespace holder: run down.sh $STATE first"
  done
  rm -f "$RUN"/*.pid
  for d in /run/containerd /var/log/containers; do
    [ -d "$d" ] || { mkdir -p "$d"; echo "$d" >>"$RUN/created-dirs"; }
  done
  mkdir -p "$STATE/container-logs" "$RUN/sysctl"
  ( cgjoin; exec nsenter --net="/run/netns/$NAME" -- unshare --mount --propagation slave -- sleep infinity ) \
    </dev/null >/dev/null 2>&1 &
  echo $! >"$RUN/holder.pid"
  for _ in $(seq 100); do
    [ "$(readlink "/proc/$(cat "$RUN/holder.pid")/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] && break
    sleep 0.05
  done
  HOLDER=$(cat "$RUN/holder.pid")
  nsenter -t "$HOLDER" -m -- mount -t tmpfs -o mode=0711 "$NAME-run" /run/containerd
  nsenter -t "$HOLDER" -m -- mount --bind "$STATE/container-logs" /var/log/containers
  for kv in vm/overcommit_memory=1 vm/panic_on_oom=0 kernel/panic=10 kernel/panic_on_oops=1 \
            kernel/keys/root_maxkeys=1000000 kernel/keys/root_maxbytes=25000000; do
    f=$RUN/sysctl/${kv%%=*}; mkdir -p "${f%/*}"; echo "${kv#*=}" >"$f"
    nsenter -t "$HOLDER" -m -- mount --bind "$f" "/proc/sys/${kv%%=*}"
  done
fi
HOLDER=$(cat "$RUN/holder.pid")
in_node() { nsenter -t "$HOLDER" -m -n -- "$@"; }

# start NAME CMD... — a daemon in the node's namespaces and cgroup, logging to
# $LOGS/NAME.log; skipped while it runs. Paths are absolute: nsenter -m
# resets the working directory.
start() {
  local name=$1; shift
  alive "$name" && return 0
  ( cgjoin; exec nsenter -t "$HOLDER" -m -n -- "$@" ) </dev/null >>"$LOGS/$name.log" 2>&1 &
  echo $! >"$RUN/$name.pid"
  log "started $name (pid $!)"
}
# wait_for WHAT SECONDS CMD... — poll CMD until it succeeds.
wait_for() {
  local what=$1 secs=$2 t; shift 2
  t=$(date +%s.%N)
  for _ in $(seq $((secs * 5))); do
    if "$@" >/dev/null 2>&1; then log "$what after $(since "$t")s"; return 0; fi
    sleep 0.2
  done
  die "$what: not within ${secs}s (logs in $LOGS)"
}
KUBECTL=(in_node kubectl --kubeconfig "$STATE/kubeconfig")

# ---------------------------------------------------------------- control plane
# Single node, test cluster: leader election off and etcd without fsync cut
# start-up time and disk load on a shared machine.
T_CP=$(date +%s.%N)
start etcd etcd --name knit --data-dir "$STATE/etcd" \
  --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
  --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
  --initial-cluster knit=http://127.0.0.1:2380 --unsafe-no-fsync --log-level warn
wait_for "etcd healthy" 60 in_node curl -sf http://127.0.0.1:2379/health

start kube-apiserver kube-apiserver \
  --etcd-servers=http://127.0.0.1:2379 \
  --bind-address=0.0.0.0 --secure-port=6443 --advertise-address="$NODE_IP" \
  --cert-dir="$PKI" --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
  --client-ca-file="$PKI/ca.crt" \
  --kubelet-client-certificate="$PKI/apiserver-kubelet-client.crt" \
  --kubelet-client-key="$PKI/apiserver-kubelet-client.key" \
  --kubelet-certificate-authority="$PKI/ca.crt" --kubelet-preferred-address-types=InternalIP \
  --service-cluster-ip-range="$SVC_CIDR" \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
  --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
  --allow-privileged=true --profiling=false
wait_for "kube-apiserver ready" 120 "${KUBECTL[@]}" get --raw /readyz

# --use-service-account-credentials: under RBAC the controller-manager's own
# identity may not create ReplicaSets or Pods. --root-ca-file makes the
# kube-root-ca.crt ConfigMap every pod's token volume needs.
start kube-controller-manager kube-controller-manager \
  --kubeconfig="$CFG/controller-manager.kubeconfig" \
  --authentication-kubeconfig="$CFG/controller-manager.kubeconfig" \
  --authorization-kubeconfig="$CFG/controller-manager.kubeconfig" \
  --bind-address=127.0.0.1 --leader-elect=false --use-service-account-credentials=true \
  --service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" \
  --cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" \
  --allocate-node-cidrs=true --cluster-cidr="$POD_CIDR" --node-cidr-mask-size="${NODE_POD_CIDR#*/}" \
  --service-cluster-ip-range="$SVC_CIDR" --flex-volume-plugin-dir="$STATE/kubelet-plugins" \
  --profiling=false
start kube-scheduler kube-scheduler \
  --kubeconfig="$CFG/scheduler.kubeconfig" \
  --authentication-kubeconfig="$CFG/scheduler.kubeconfig" \
  --authorization-kubeconfig="$CFG/scheduler.kubeconfig" \
  --bind-address=127.0.0.1 --leader-elect=false --profiling=false

# ---------------------------------------------------------------- container runtime
# Debian's CNI plugins live in /usr/lib/cni, not /opt/cni/bin.
mkdir -p "$CFG/cni"
put "$CFG/cni/10-knit-bridge.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "knit",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "$NODE_POD_CIDR", "gateway": "$BRIDGE_IP"}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": "$STATE/cni-ipam"
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
# Everything under STATE but the paths containerd hard-codes (shim sockets,
# runc root: /run/containerd, a tmpfs in the node's mount namespace). NRI
# is off (it would create /var/run/nri). The sandbox image is pinned here:
# kubelet 1.37 has no --pod-infra-container-image.
put "$CFG/containerd.toml" <<EOF
version = 3
root = "$STATE/containerd"
state = "/run/containerd"
disabled_plugins = ["io.containerd.nri.v1.nri", "io.containerd.internal.v1.tracing", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "$CTRD_SOCK"
[ttrpc]
  address = "/run/containerd/containerd.sock.ttrpc"
[debug]
  address = "/run/containerd/debug.sock"
[plugins.'io.containerd.internal.v1.opt']
  path = "$STATE/containerd-opt"
[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.registry]
    config_path = "$CFG/certs.d"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "$PAUSE_IMAGE"
[plugins.'io.containerd.cri.v1.runtime']
  # This machine's capability bounding set lacks CAP_SYS_RESOURCE, so nothing
  # can lower an oom_score_adj; kubelet asks -998 for every pause container
  # and runc would die with "can't get final child's PID from pipe".
  restrict_oom_score_adj = true
  cdi_spec_dirs = ["$STATE/cdi"]
  netns_mounts_under_state_dir = true
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["$CNI_BIN"]
    conf_dir = "$CFG/cni"
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = "$RUNC"
        SystemdCgroup = false
[plugins.'io.containerd.grpc.v1.cri']
  disable_tcp_service = true
  stream_server_address = "127.0.0.1"
EOF
# The test registry is plain HTTP: containerd is told so per host
# (hosts.toml under config_path), as a node pulling from an in-cluster
# registry would be configured.
mkdir -p "$CFG/certs.d/$NODE_IP:$REGISTRY_PORT"
put "$CFG/certs.d/$NODE_IP:$REGISTRY_PORT/hosts.toml" <<EOF
server = "http://$NODE_IP:$REGISTRY_PORT"
[host."http://$NODE_IP:$REGISTRY_PORT"]
  capabilities = ["pull", "resolve"]
EOF
# The shim is found on PATH; put ours first.
start containerd env PATH="$BIN:/usr/sbin:/usr/bin:/sbin:/bin" "$BIN/containerd" --config "$CFG/containerd.toml"
wait_for "containerd serving" 60 in_node "$BIN/ctr" --address "$CTRD_SOCK" version
# The sandbox image must be there before the first pod, or containerd tries
# to pull it.
KNIT_K8S_NAME=$NAME KNIT_K8S_BIN=$BIN "$HERE/import.sh" "$STATE" "${NODE_IMAGES[@]}"

# ---------------------------------------------------------------- node
# failCgroupV1: kubelet >= 1.35 refuses cgroup v1 without it. cgroupfs: no
# systemd here (and SystemdCgroup = false in containerd must agree).
# Image GC never deletes the imported images; eviction thresholds are low
# because the disk is shared with everything else on the machine.
put "$CFG/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /$NAME
containerRuntimeEndpoint: unix://$CTRD_SOCK
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$PKI/ca.crt"}
authorization: {mode: Webhook}
tlsCertFile: "$PKI/kubelet-serving.crt"
tlsPrivateKeyFile: "$PKI/kubelet-serving.key"
healthzBindAddress: 127.0.0.1
readOnlyPort: 0
clusterDomain: cluster.local
$([ "$DNS" = 1 ] && echo "clusterDNS: [$DNS_IP]")
resolvConf: ""                      # no host resolver in pods (there is no network to ask)
podLogsDir: "$STATE/pod-logs"
volumePluginDir: "$STATE/kubelet-plugins"
failSwapOn: false
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
EOF
T_NODE=$(date +%s.%N)
start kubelet kubelet --config="$CFG/kubelet.yaml" --kubeconfig="$CFG/kubelet.kubeconfig" \
  --root-dir="$STATE/kubelet" --hostname-override="$NODE" --node-ip="$NODE_IP"

# kube-proxy: no conntrack sysctls (the zeros), no route_localnet
# (localhostNodePorts off), clusterCIDR so off-cluster clients (the host)
# are masqueraded.
put "$CFG/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: "$CFG/kube-proxy.kubeconfig"}
hostnameOverride: $NODE
mode: $PROXY_MODE
clusterCIDR: $POD_CIDR
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: ["primary"]
iptables: {localhostNodePorts: false}
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
start kube-proxy kube-proxy --config="$CFG/kube-proxy.yaml"

node_ready() {
  [ "$("${KUBECTL[@]}" get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}
wait_for "node $NODE Ready" 180 node_ready
log "node Ready $(since "$T_CP")s after etcd start ($(since "$T_NODE")s after kubelet start)"

# ---------------------------------------------------------------- cluster DNS
# CoreDNS built from the module proxy (no registry to pull it from), without
# a forward upstream: names outside cluster.local fail fast.
if [ "$DNS" = 1 ]; then
  sed -e "s#@DNS_IP@#$DNS_IP#" -e "s#@IMAGE@#$COREDNS_IMAGE#" "$HERE/coredns.yaml" |
    "${KUBECTL[@]}" apply -f - >/dev/null
  wait_for "CoreDNS ready ($DNS_IP)" 120 "${KUBECTL[@]}" -n kube-system rollout status deploy/coredns --timeout=2s
fi

# ---------------------------------------------------------------- registry
# An OCI registry (CNCF Distribution, built from the module proxy by make
# cluster-tools) on the node's address: in-cluster builds (values build.*)
# push there over plain HTTP and the node pulls from it. Blobs under
# STATE/registry.
if [ "$REGISTRY" = 1 ]; then
  mkdir -p "$STATE/registry"
  put "$CFG/registry.yaml" <<EOF
version: 0.1
log: {level: warn, accesslog: {disabled: true}}
storage:
  filesystem: {rootdirectory: $STATE/registry}
  delete: {enabled: true}
http:
  addr: $NODE_IP:$REGISTRY_PORT
EOF
  start registry "$BIN/registry" serve "$CFG/registry.yaml"
  wait_for "registry on $NODE_IP:$REGISTRY_PORT" 30 in_node curl -sf "http://$NODE_IP:$REGISTRY_PORT/v2/"
fi

# ---------------------------------------------------------------- storage
# A default StorageClass without a provisioner and $VOLUMES hostPath
# volumes of 1Gi, pinned to the node, for StatefulSets' claims. The
# directories belong to the images' nonroot user 65532. Reclaim policy
# Retain (hostPath volumes cannot be deleted without a provisioner): a
# volume whose claim was deleted (Released) is emptied and made Available
# again here, as Delete would; down.sh removes the directories.
manifest=$(
  cat <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Retain
EOF
  for i in $(seq 0 $((VOLUMES - 1))); do
    cat <<EOF
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: local-pv$i
  labels: {knit.dev/test-cluster-volume: "true"}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: local
  volumeMode: Filesystem
  hostPath: {path: "$STATE/volumes/pv$i", type: Directory}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: kubernetes.io/hostname, operator: In, values: ["$NODE"]}
EOF
  done
)
for i in $(seq 0 $((VOLUMES - 1))); do
  mkdir -p "$STATE/volumes/pv$i"
  chown 65532:65532 "$STATE/volumes/pv$i"
  chmod 0770 "$STATE/volumes/pv$i"
done
echo "$manifest" | "${KUBECTL[@]}" apply -f - >/dev/null
released=$("${KUBECTL[@]}" get pv -l knit.dev/test-cluster-volume \
  -o jsonpath='{range .items[?(@.status.phase=="Released")]}{.metadata.name}{" "}{.spec.hostPath.path}{"\n"}{end}')
while read -r pv dir; do
  [ -n "$pv" ] || continue
  case "$dir" in "$STATE"/volumes/pv*) ;; *) die "volume $pv points outside $STATE/volumes: $dir" ;; esac
  find "$dir" -mindepth 1 -delete
  "${KUBECTL[@]}" patch pv "$pv" --type json -p '[{"op": "remove", "path": "/spec/claimRef"}]' >/dev/null
  log "volume $pv was Released: emptied, Available again"
done <<<"$released"

log "cluster up: $(since "$T_CP")s from etcd start; kubeconfig: $STATE/kubeconfig"
echo "export KUBECONFIG=$STATE/kubeconfig"
