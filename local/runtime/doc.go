// Package runtime is the local runtime of `knit dev`: the one seam between
// knit's controllers and where replicas run. On a cluster, Kubernetes runs
// the Deployments knit creates and publishes their EndpointSlices; in knit
// dev there is no kubelet, no Docker and no kube-controller-manager, so
// this package reconciles the same Deployment objects into processes on
// loopback and publishes the EndpointSlices the rest of knit reads, and a
// Pod for each replica, for users and tools. The controllers cannot tell
// the difference.
//
// # What it manages
//
// Deployments labelled serving.knative.dev/revision; all others are left
// alone. Each gets spec.replicas replicas of its pod template; a replica is
// one process per container, after one per init container (see Init
// containers). A template change rolls replicas the way a
// RollingUpdate with maxUnavailable 0 does: replicas of the old template
// keep running until enough new ones are ready. Volumes are mounted, and
// persistent volume claims provisioned and bound (see Volumes), a
// securityContext's user and groups applied (see Users and the
// container's view) and resources too (see Resources); nodeSelector,
// required node affinity and tolerations decide whether a replica is
// placed (see Admission and room); hostAliases, dnsPolicy, dnsConfig,
// runtimeClassName and shareProcessNamespace are applied as the kubelet
// applies them (see Pod sandbox). Startup probes and the rest of a
// securityContext are not; preferred affinity, topology spread,
// priorityClassName (beyond admission) and schedulerName decide nothing
// on one node and are left alone.
//
// # Where the mechanisms live
//
// This package is the orchestration: replicas, their pods and containers,
// placement, supervision and status. The mechanisms it drives are
// packages of their own, each behind a small API: package images (pulling
// and keeping images), package engine (the OCI spec and runc), package
// cgroups (the cgroup tree, limits and OOM kills: see Resources), package
// netns (isolated replicas' network namespaces and veth pairs: see
// Networks), package claims (the PersistentVolumeClaim binder: see
// Volumes), package probes (readiness and liveness probes run as the
// kubelet runs them: see Readiness, crashes, stopping; probe.go and
// liveness.go here run exec commands in the container and act on what
// the probes find), package kobuild (building ko:// images and their
// cache: see Images), package nodefit (whether a pod may go to this
// machine as a node and fits there: see Admission and room; capacity.go
// here keeps which replicas are placed), package etcfiles (what a pod's
// /etc/hosts and resolv.conf say: see Pod sandbox; etcfiles.go here
// writes and binds them) and package volumes (the files of volumes of
// API data, their atomic layout and fsGroup ownership: see Volumes;
// podvolumes.go and volumesync.go here decide when a replica's are
// written, resynced and removed) and package view (the container's view
// of ko:// and knit:// processes: the mount namespace, its bind mounts
// and mirrors, /dev, /proc read-only, the hostname, the state dir's
// cover, the capability bounding set and no_new_privs, entering a
// running container's view, and the shared PID namespace's holder: see
// Users and the container's view; view.go here decides from the pod what
// a container's view holds and as whom it runs, mountsFor which volumes
// it mounts, processPrivileges what it may hold).
//
// # Images
//
//   - ko://<import path> is built with `go build` in Options.ModuleDir
//     (ko://./dir is relative to it); an import path outside the main module
//     is installed with `GOBIN=<cache> go install <path>@latest` instead.
//     Binaries are cached in <state>/builds under a key computed from
//     `go list -deps` and the hashes of local sources (package kobuild
//     says what goes in the key and why), so a rebuild when nothing
//     changed costs one go list; concurrent builds of one key run once.
//     Each pod template pins the binary its first replica got, so its
//     later replicas start at once.
//   - knit://<subcommand> runs knit's subcommand, the container's args as
//     its flags: knit://queue is the lean knit-queue binary when it lies
//     beside Options.Executable (it starts in a few milliseconds, and the
//     queue-proxy is on every cold start's path), else
//     `<Options.Executable> queue`.
//   - Any other image is a container image, run as a kubelet runs it
//     (Options.OCI, from OpenOCI: root on Linux, with runc; without it the
//     Deployment says ImageNotRunnable and what it takes). It is pulled
//     into the image store (package images: the pod's and its
//     ServiceAccount's imagePullSecrets, then knit dev's user's Docker
//     config; imagePullPolicy honoured; ErrImagePull and ImagePullBackOff
//     with the registry's words), and each run of the container is an
//     OCI bundle (ocirun.go): a snapshot of the image mounted as its root,
//     the user from the securityContext or the image's USER looked up in
//     the image's own /etc/passwd, the volumes, /etc/hosts and resolv.conf
//     (see Pod sandbox) bound in, capabilities, no_new_privs, a read-only root and seccomp
//     as containerd's CRI plugin writes them (package engine), and `runc
//     run` started in the replica's network and the container's cgroup.
//     A command and args apply inside the image; nothing of this machine
//     is visible but what is mounted. Exec probes and hooks run through
//     `runc exec`; the Pod reports the image's digest as imageID. The
//     root filesystem of an image's next run is made ahead, once the
//     image has run (ocispare.go): a scale from zero takes it rather than
//     wait for the snapshotter's metadata commit and the mount.
//
// command and args replace the image's entrypoint and arguments as in
// Kubernetes, with $(VAR) expanded; workingDir is honoured (default for
// ko:// and knit://: the module dir; for an image, its WORKDIR, else /).
// A command, exec probe or exec hook of a ko:// container whose first
// word is /ko-app/<base name of the import path>, where ko puts the
// binary in the image, runs the binary built for the image (koapp.go):
// this machine has no /ko-app.
//
// # Networks
//
// Options.Network says where a replica's processes listen. In
// NetworkShared (the default) they run in this machine's own network and
// every replica's address is 127.0.0.1: an app is told only PORT, and one
// that binds every interface is reachable from the network; nothing but
// root can choose another process's bind address, so replicas get
// HOST=127.0.0.1, which some frameworks bind to. In NetworkIsolated (root on
// Linux; CheckIsolation) each replica gets a network namespace of its own,
// as a pod does: its containers share a loopback no one else sees, and a
// veth pair on a /30 of 169.254.64.0/18 (host end .1, replica end .2, the
// replica's default route through the host's) is the only way in. Its
// address is the .2: EndpointSlices, HTTP and TCP probes and preStop hooks
// (run from knit dev, as the kubelet probes a pod's IP) and the downward
// API's status.podIP use it; exec probes and hooks run inside. So an app
// that binds every interface is reachable through knit, and from this
// machine at the replica's address as a pod is from its node, but neither
// from the network nor on this machine's 127.0.0.1. Its egress is this
// machine's addresses other than loopback, nothing further. Each process
// is forked from a thread that stepped into the namespace; the namespace
// and the veth pair go when the replica's last process does (with knit
// dev, whatever kills it). The namespaces, veth pairs and addresses are
// package netns's, whose pool keeps one network made ahead of need so a
// cold start does not wait for the kernel; this package decides which
// replica gets one and what listens where.
//
// # Ports and environment
//
// Every containerPort declared in the pod template is remapped per
// replica to a free loopback port (in the shared network replicas share
// 127.0.0.1). Environment values that are exactly a declared port number
// (PORT=8080, USER_PORT, QUEUE_SERVING_PORT=8012) become the mapped port,
// and readiness probe and Service targetPorts (number or name) resolve the
// same way. An app that ignores PORT and listens on a port of its own
// (:8080 hard-coded) is not reached in the shared network; when its
// replica's readiness failure is reported (usually the queue-proxy's, which
// probes the app), the runtime reads the TCP ports the container's process
// group listens on (Linux: /proc/<pid>/fd and /proc/<pid>/net/tcp, tcp6)
// and the failure names them, its PORT and the fix (misbound.go); in an
// isolated network the declared ports are the real ones. The
// environment is what the kubelet gives: envFrom ConfigMaps
// and Secrets, then env with $(VAR) expansion and valueFrom (ConfigMap and
// Secret keys, the downward API with the replica's address as its IP),
// plus HOSTNAME (the replica's pod name) and a few of knit dev's own
// variables standing in for an image's ENV (Options.HostEnv: PATH, HOME,
// …).
//
// # Readiness, crashes, stopping
//
// Each container's readinessProbe (httpGet with headers, tcpSocket, exec,
// grpc: the app's grpc.health.v1 service, as the kubelet asks it)
// runs on its periodSeconds with its thresholds, an HTTP or TCP one every
// 50ms until it first succeeds (package probes); a container without
// one is ready while it runs, and a replica is ready when all its
// containers are. A livenessProbe (httpGet, tcpSocket, exec, grpc) runs as the
// kubelet runs it: after initialDelaySeconds, every periodSeconds, and
// failureThreshold failures in a row kill the container (preStop hook,
// SIGTERM, SIGKILL after the grace period) and restart it like a crash,
// reported as CrashLoopBackOff with "Liveness probe failed: …" and the
// restart count. A process that exits is
// restarted with exponential backoff (Options.Backoff: 500ms doubling to
// 30s, reset after 60s of running). Stopping a replica sends SIGTERM to each
// process group, waits terminationGracePeriodSeconds (cut
// short only by knit dev's own shutdown: Options.ShutdownGracePeriod) and sends
// SIGKILL. Every process has its own
// process group and, on Linux, dies with knit dev (Pdeathsig SIGKILL).
// Shutdown stops everything; so does the manager stopping.
//
// # Init containers
//
// A replica placed on this machine runs its init containers before any
// container, the app's and the queue-proxy's alike, as the kubelet runs
// them in a new pod sandbox: one at a time, in order, each until it
// exits 0. Each starts as a container does (runContainer) — its image
// pulled or built, its environment, volumes (mountsFor: a claim's
// directory is the one every container of the replica mounts), user,
// securityContext and resources, its own cgroup below the pod's, the
// replica's network, /etc/hosts, resolv.conf and shared PID namespace
// (see Pod sandbox) — so an emptyDir or a claim an init container writes
// is what the app reads. One that
// exits otherwise is run again with the containers' backoff and reported
// as CrashLoopBackOff ("init container <name> exited with code …"),
// and nothing after it starts meanwhile. They run once in a replica's
// life: a container that crashes later restarts alone, and a replica a
// scale-up adds runs them afresh. An init container's restartPolicy (a
// native sidecar) is not honoured: it too must complete.
//
// # Deployment status
//
// Written through the status subresource as Kubernetes' deployment
// controller would: observedGeneration, replicas, updatedReplicas,
// readyReplicas, availableReplicas, unavailableReplicas; conditions
// Available (MinimumReplicasAvailable when availableReplicas ≥ spec.replicas),
// Progressing (NewReplicaSetAvailable when done, ProgressDeadlineExceeded
// after spec.progressDeadlineSeconds without getting there) and, while
// replicas of the current template fail, ReplicaFailure with a stable,
// actionable reason: BuildFailed, ImageNotRunnable, VolumesUnsupported,
// SecurityContextUnsupported, PodSpecUnsupported, FailedCreatePodSandBox,
// CreateContainerConfigError, FailedMount, RunContainerError,
// CrashLoopBackOff or ReadinessProbeFailed (the Reason constants) — or
// FailedCreate, the ReplicaSet controller's reason, while its Pods are
// refused (see Admission and room).
//
// # Admission and room
//
// A replica runs only what its node would: before any process starts,
// its Pod goes to the API server as the ReplicaSet controller's create
// would, as a dry run (every admission plugin and webhook runs, nothing
// is stored: ResourceQuota, LimitRange, PodSecurity), made while the
// replica's network is, so a cold start waits for whichever is slower —
// unless nothing could refuse or change it (a namespace not being
// deleted, without quota, LimitRange or enforced PodSecurity level, no
// webhook or policy on pods; mayRefuse, from the cache), where the dry
// run's few milliseconds are saved and a refusal of the real create (a
// quota made meanwhile) stops the replica, and every later replica of
// the template asks first. A pod naming a RuntimeClass or a PriorityClass
// always asks first (classesNamed): the API server's RuntimeClass and
// Priority plugins refuse one that does not exist ("pod rejected:
// RuntimeClass "x" not found", "no PriorityClass with name x was
// found") and set the class's overhead, node selector, tolerations and
// priority, which the replica takes. A refusal ends the replica before it runs
// anything; the Deployment says ReplicaFailure FailedCreate with the API
// server's words and starts no replica of that template for 1 s, doubling
// to 30 s, until one is admitted (a new template starts afresh). An admitted Pod's containers
// get the requests and limits admission settled on (a LimitRange's
// defaults), and the Pod is published. Then the replica is placed on this
// machine as the scheduler places a pod on a node (admitAndPlace), its
// Pod Pending with PodScheduled False, Unschedulable, in the scheduler's
// words, meanwhile, with nothing started and nothing of the machine
// taken. First the volume binding check: each persistent volume claim
// the pod names must exist and be bound (see Volumes). Then the node's
// taints and labels (package nodefit): knit dev schedules nothing through
// a Node object (it is the node; docs/design.md says why; the Node it
// registers is for `kubectl logs` and shows these), so this machine is a
// node as a kubelet registers one — named by its hostname, lowered, labelled
// kubernetes.io/hostname, kubernetes.io/os, kubernetes.io/arch and their
// beta. forms, plus Options.NodeLabels — untainted unless
// Options.NodeTaints says otherwise. A NoSchedule or NoExecute taint the
// pod does not tolerate ("0/1 nodes are available: 1 node(s) had
// untolerated taint(s).") or a nodeSelector or required node affinity
// (nodeSelectorTerms ORed, their matchExpressions and matchFields on
// metadata.name ANDed) the node does not match ("0/1 nodes are
// available: 1 node(s) didn't match Pod's node affinity/selector.") keeps
// it Pending until its template changes: the node's labels and taints do
// not. Last, room: its containers' requests (a limit stands for an unset
// request) summed with those of the replicas placed, against
// Options.Allocatable (every CPU and all memory by default). One that
// does not fit waits ("0/1 nodes are available: 1 Insufficient cpu.")
// and starts when a replica leaves and it fits. knit dev's
// kube-controller-manager runs the resourcequota controller, which
// counts the usage quotas are checked against.
//
// # Pod sandbox
//
// Once placed, a replica gets what the kubelet makes for a pod before
// any container (sandbox.go, etcfiles.go and package etcfiles, package
// view's PIDNamespace):
//
//   - runtimeClassName: knit dev has one runtime handler, runc, as
//     containerd's default configuration has. A pod whose RuntimeClass's
//     handler is runc runs as any other (images with runc, ko:// and
//     knit:// as processes); one whose handler is another, or whose
//     RuntimeClass was deleted after admission, gets no sandbox: every
//     container waits, the Pod Pending, the Deployment ReplicaFailure
//     FailedCreatePodSandBox with the kubelet's and containerd's words
//     ("Failed to create pod sandbox: rpc error: code = Unknown desc =
//     unable to get OCI runtime for sandbox …: no runtime for "kata" is
//     configured", "… runtimeclass.node.k8s.io "x" not found"), tried
//     again with the containers' backoff.
//   - /etc/hosts as the kubelet writes it: its header, localhost and the
//     IPv6 entries, the replica's address under the pod's hostname, then
//     the pod's hostAliases under "# Entries added by HostAliases.", one
//     line per IP. A ko:// or knit:// process in the shared network is
//     in this machine's network, as a hostNetwork pod is, and gets what
//     the kubelet gives one: this machine's /etc/hosts under "#
//     Kubernetes-managed hosts file (host network).", then the aliases.
//   - /etc/resolv.conf as the kubelet builds it and containerd writes it.
//     knit dev has no cluster DNS, so ClusterFirst (the default) is
//     Default, as the kubelet falls back without one: this machine's
//     resolv.conf. None is the dnsConfig alone. A dnsConfig is merged as
//     the kubelet merges it — nameservers and searches appended once
//     each, options by name, the pod's winning — and cut to its limits (3
//     nameservers; 32 search paths, none over 253 characters, 2048 in
//     all), with its warning logged. The kubelet orders merged options
//     at random (a map); knit keeps the order they came in.
//   - An image's container gets both files in its bundle, always. A
//     ko:// or knit:// process reads this machine's, unless the pod makes
//     them its own (hostAliases; dnsPolicy None or a dnsConfig): then the
//     replica's are written to its own directory and bound over them in
//     the container's view (root on Linux; elsewhere such a container
//     fails, PodSpecUnsupported, rather than resolve names otherwise than
//     its pod says).
//   - shareProcessNamespace: the containers of images share one PID
//     namespace, whose PID 1 is a pause process of the replica's own, as
//     the pause container is on a node: knit dev's own binary re-executed
//     (/proc/self/exe, recognised in this package's init), reaping the
//     orphans it inherits, dying with the replica or with knit dev. Each
//     run of such a container joins it through the OCI spec's PID
//     namespace path, so a container that exits takes no other's
//     processes with it. ko:// and knit:// processes do not join it: they
//     run in this machine's PID namespace, where they already see every
//     process, the replica's images' included; their /proc is this
//     machine's, which would number their processes otherwise than their
//     getpid in a namespace of their own. So an image's container does
//     not see them.
//
// # EndpointSlices
//
// For every Service in the Deployment's namespace whose selector matches a
// replica's labels: one EndpointSlice per replica, <service>-<replica id>,
// labelled kubernetes.io/service-name and
// endpointslice.kubernetes.io/managed-by=knit-local-runtime, owned by the
// Service, with one endpoint at the replica's address whose ready/serving/terminating
// conditions follow the replica and whose ports are the Service's, their
// targetPort resolved to that replica's port. Slices of gone replicas and
// deleted Services are deleted. The address type is FQDN, not IPv4: the
// API server refuses loopback and link-local IPs in IP slices, and
// "127.0.0.1" as a name dials the same (EndpointAddressType).
//
// ForgetEarlierEndpoints deletes every slice a runtime published, for a
// knit dev starting where an earlier one's replicas died with it.
//
// # Pods
//
// Each replica is published as the Pod its ReplicaSet would have made,
// so `kubectl get pods`, `kubectl describe pod` and whatever lists a
// Revision's pods by label read what runs: named as the replica's
// HOSTNAME (<deployment>-<template hash>-<id>), in its namespace, with
// the template's labels (plus pod-template-hash) and annotations and its
// spec, controlled by the Deployment (there is no ReplicaSet), so the
// garbage collector and a namespace's deletion remove it. spec.nodeName
// is this machine's node name: the API server sends `kubectl logs` to the
// kubelet of a Pod's node, and knit dev serves the kubelet's log endpoint
// for its Node (package podlogs; ContainerLog answers it). A bound Pod's
// deletion is graceful: the API server sets its deletion timestamp and
// waits for the kubelet to confirm. So the runtime does: it stops the
// replica when a deletion begins and deletes the Pod with no grace period
// left once the replica is gone, as it deletes its own Pods. The ServiceAccount admission plugin is
// off (see package controlplane), so the spec is the template's, with no
// token volume added that no process mounts, and the service account
// need not exist.
//
// Its status is written through pods/status as the kubelet would write
// it: phase (Pending until its init containers have completed and its
// containers started), podIP and hostIP (the replica's addresses),
// startTime, conditions PodScheduled, Initialized (False,
// ContainersNotInitialized, until every init container has completed),
// ContainersReady and Ready (only PodScheduled, False, while it is not
// placed: claims, node affinity and taints, room), and per container and init container its image, ready,
// started, restartCount and state — running; waiting with the runtime's
// own reason and message, the Deployment's ReplicaFailure words
// (BuildFailed, CrashLoopBackOff with the exit and output, …), or
// ContainerCreating (PodInitializing in a pod with init containers);
// terminated while the replica stops, and for good once an init
// container has completed — and lastState.terminated with the exit code, reason
// (Error, Completed, OOMKilled) and, under FallbackToLogsOnError, the
// end of the output. imageID is the pulled image's repository@digest and
// containerID runc://<run>, for an image; for ko:// and knit:// both stay
// empty, since a Revision's digests must not come from a ko build. The
// runtime keeps what it wrote and writes only a status that differs; a
// replica's changes are queued by Pod, and those that come while it
// waits or is written are one write (podWorkers), so a replica's start
// costs a create and one or two status writes. A Pod's metadata.uid is
// the API server's; the downward API's is the replica's own, fixed
// before the Pod is created, which is not on a cold start's path.
//
// Deleting a Pod (kubectl delete pod) stops its replica, and the
// Deployment gets a new one; a replica whose processes are gone deletes
// its Pod. Pods a killed knit dev left (owned straight by a Deployment,
// which no Kubernetes controller does) are deleted when the manager
// starts, before any is created; so are those a clean stop left, which
// no one saw: the API server stops with knit dev.
//
// # Volumes
//
// configMap, secret, projected (ConfigMaps, Secrets, the downward API and
// service-account tokens), downwardAPI and emptyDir volumes are written
// as the kubelet writes them (package volumes) — every key or the items
// asked, at their paths, with defaultMode or each item's mode (0644
// unless set), a missing optional source or key left out — under
// <state>/volumes/<namespace>/<pod>/<volume> when the replica's first
// container that mounts one is set up, and removed when the replica's
// last process is gone (and at start, for a knit dev that was killed). A
// service-account token is the API server's TokenRequest for the pod's
// service account with the audience and expirationSeconds asked, not bound
// to the replica's Pod (not yet created when the volume is written); a
// namespace's "default" ServiceAccount is
// created when missing, as kube-controller-manager would have. An emptyDir
// is a directory of the replica's (0777), shared by its containers; its
// medium and sizeLimit are not applied. With the pod's fsGroup (as root)
// every volume is given to that group as the kubelet gives it: group-owned,
// group read (and write, for an emptyDir) added, directories setgid.
// The files are laid out as the kubelet's AtomicWriter lays them out (a
// timestamped directory, ..data pointing to it, each name a link through
// ..data) and kept current while the replica runs: every
// VolumeSyncPeriod (10s) each volume of API data is read again and, when
// it changed, swapped in with one rename, so an app sees an edited
// ConfigMap or Secret whole, and a token is requested again at 80% of its
// lifetime (or after 24 hours), as the kubelet rotates it. A mount by
// subPath keeps the file it bound, and a source that can no longer be read
// (a deleted ConfigMap) leaves the last files in place, as on Kubernetes.
//
// A persistentVolumeClaim is a directory of this machine that outlives
// replicas and Revisions. knit dev is the cluster's provisioner, PV
// controller and pvc- and pv-protection controllers (package claims's
// Binder, which the runtime's SetupWithManager starts with the runtime's
// controllers and answers which claims replicas use; claims.go here is
// what a replica waits for and mounts): every Pending claim in the API server gets a
// directory, <state>/claims/<namespace>/<claim>-<uid> (0777, as
// local-path provisioners make theirs), and a PersistentVolume
// pvc-<uid> — hostPath to it, the claim's request as capacity (recorded,
// not enforced), its access modes and class, reclaim policy Delete,
// claimRef to the claim — and the two are bound as the PV controller binds
// them: the volume's claimRef and phase Bound, the claim's volumeName,
// phase Bound, capacity and access modes. A claim naming a volume, or
// named by one, is bound to it instead; one with a selector, a data
// source or volumeMode Block stays Pending. A claim bound to a hostPath
// or local volume is used as it is. A replica whose pod names a claim
// waits before it is placed, as the scheduler's volume binding check
// holds a pod back, until each exists and is bound: its Pod Pending,
// PodScheduled False, in the scheduler's words ("0/1 nodes are available:
// persistentvolumeclaim "data" not found."), looking again every
// claimPoll, with no crash loop, none of its containers started (the
// queue-proxy, which mounts no claim, included) and none of this
// machine's room taken. The claims' directories are resolved once per
// replica; every container and init container that mounts one binds it
// in at its mount path (mountsFor), read-only when the volume or the
// mount says so, shared by every replica of every Revision that names
// it. A claim that goes after placement is a FailedMount, retried with
// backoff, as the kubelet retries a mount. The pod's
// fsGroup is given to it as to an emptyDir (OnRootMismatch honoured),
// but not to a read-only volume nor to a hostPath knit dev did not
// provision, which the kubelet leaves alone too. A deleted claim keeps
// its pvc-protection finalizer while a replica uses it; once it is gone
// its volume is Released and, when no replica uses the directory any
// longer, the directory and then the volume are deleted. The binder
// passes over the cached claims and volumes every second.
//
// Each container sees the volumes it mounts at their absolute mountPath,
// with subPath and subPathExpr, read-only when asked and always for API
// data, as in a pod; no other process does, knit dev included. Every
// start of such a container forks from a thread that unshared a mount
// namespace of its own, made every mount private and bound the volumes
// in; the thread dies with the process (as a thread stepping into an
// isolated network does). A mount path that does not exist is not created
// on this machine: its nearest existing directory is mirrored on a tmpfs
// (bind mounts of each entry plus the missing path) in that namespace
// alone, chrooted into when it is / (view.Plan.Enter says why this rather
// than an overlay or a re-executed shim). Mount namespaces need root on
// Linux; elsewhere a replica that mounts a volume fails with
// VolumesUnsupported naming the volume and what it takes, instead of
// running without it.
//
// # Users and the container's view
//
// As root on Linux every container, volumes or not, starts in a mount and
// a UTS namespace of its own (containerView, about 0.3 ms a start:
// package view's BenchmarkContainerView), which give it, besides its
// volumes and its cgroup, what a container runtime gives a container: a /dev of its own on
// a tmpfs (null, zero, full, random, urandom, tty, a devpts instance with
// /dev/ptmx, a 64 MiB /dev/shm, the fd, stdin, stdout and stderr links;
// no console, no mqueue), /proc's bus, fs, irq, sys and sysrq-trigger
// read-only, and the pod's name (cut to 63 characters, as the kubelet
// cuts it) as hostname and HOSTNAME; the pod's /etc/hosts and
// resolv.conf where the pod makes them its own (see Pod sandbox); and
// knit dev's state dir (the
// admin kubeconfig, etcd's keys, the Git token) covered by an empty
// read-only tmpfs, with only its builds bound back read-only, so no
// container reads it, root or not. Exec probes and hooks run inside that
// view, as nsenter enters it (view.Join), as the container's user and
// with its limits (below). Elsewhere containers run in knit dev's own
// view.
//
// This section is about ko:// and knit:// containers, which run as
// processes of this machine; an image's container gets all of it from
// the engine instead (see Images). Such a container runs as the
// runAsUser, runAsGroup (container over pod) and supplementalGroups plus
// fsGroup its securityContext asks (containerCredential); without
// runAsUser, as root, it runs as ko's nonroot user 65532:65532, the USER
// of the image ko would build (HOME /: this machine has no
// /home/nonroot), and root only when runAsUser 0 asks for it; not root,
// as knit dev's user. A runAsUser without runAsGroup gets the user's
// group in /etc/passwd, else 0, and HOME its home, else /, as containerd
// has them. runAsNonRoot is checked with the kubelet's messages
// (CreateContainerConfigError). A user other than knit dev's needs
// root: knit dev not root fails such a container
// (SecurityContextUnsupported) rather than run it as the wrong user. A
// binary knit dev built (ko://, knit://) that the user cannot reach where
// it lies (a state dir under /root) is bound where ko puts it,
// /ko-app/<name>, and run there; a command of the container's own or a
// workingDir out of the user's reach fails naming the directory that
// stops it; the default working directory is /, ko's image's.
//
// Every such process is forked from a thread that set its limits, which
// it inherits and cannot undo (processPrivileges,
// view.Privileges.Apply): the capability bounding set is containerd's default set adjusted by the
// securityContext's capabilities (all of knit dev's when privileged),
// less CAP_SYS_CHROOT when its root is a mirror of / (root could chroot
// out of it), the inheritable and ambient sets empty, so a process not
// running as root holds no capability and root no more than a container
// would; and no_new_privs unless allowPrivilegeEscalation is true or it
// is privileged. That no_new_privs is knit's default, where the kubelet
// sets it only when asked: this machine has setuid programs an image
// built by ko would not. Not applied: seccomp and readOnlyRootFilesystem
// (the root is this machine's, read-only to a user that is not root);
// and a root container that adds CAP_SYS_PTRACE, or a privileged one,
// can reach knit dev's own view through /proc/<pid>/root.
//
// # Resources
//
// Each container runs in a cgroup of its own below knit dev's, as the
// kubelet's below kubepods: <own>/knit-<instance>/pod<uid>/<container>, in
// cgroup v1's memory and cpu hierarchies or in v2's unified one (knit
// dev's own processes move to <own>/init so the controllers can be
// delegated). Limits are written as the kubelet writes them: the memory
// limit (with no swap beyond it), a CFS quota of limits.cpu per 100ms,
// shares (v2: weight) from requests.cpu, which defaults to the limit; the
// tree's root weighs 1024 shares per allocatable CPU, so replicas as one
// compete with the rest of the machine for what they were given, and
// each pod's own level keeps the kernel's default. A process is born in its cgroup (v2:
// CLONE_INTO_CGROUP; v1: forked from a thread that joined it), and where
// containers get mount namespaces (root) it sees its own cgroup,
// read-only, at /sys/fs/cgroup. A run the kernel OOM-kills is reported as
// "was OOMKilled: exit code 137, over its memory limit of …" in the
// CrashLoopBackOff message. Whatever a container's process leaves in its
// cgroup dies with it, and the cgroups go with the replica. Without
// cgroups (not root, a controller not delegated, not Linux) replicas run
// unlimited and knit dev warns once, when a container that asks for
// limits starts. The tree, the kubelet's arithmetic and the files are
// package cgroups's; this package makes a container's cgroup when the
// container starts, starts its processes in it and reports its OOM kills.
//
// # Logs
//
// Each process's stdout and stderr go to
// <state>/logs/<namespace>/<deployment>/<replica>-<container>.log, each
// line prefixed with the time it was written (podlogs.Stream, as the
// kubelet's CRI log files), with a bounded tail kept in memory for
// condition messages. Every run of a container appends to the file; the
// runtime keeps where each run began, so `kubectl logs` reads the current
// run and --previous the one before (ContainerLog); builds log to
// <state>/builds/<key>/build.log. The runtime itself logs through the
// manager's logger, named "local-runtime".
package runtime
