package runtime

// Reasons of the ReplicaFailure condition the runtime sets on a Deployment.
// The serving reconciler maps them onto Revision conditions, so they are a
// stable contract: add new ones, never rename.
const (
	// ReasonBuildFailed: a ko:// image did not build. The message starts
	// with "go build ko://…:" and carries the first lines of the errors.
	ReasonBuildFailed = "BuildFailed"
	// ReasonImageNotRunnable: the image is neither ko:// nor knit:// and
	// the container sets no command, so there is nothing to run locally.
	ReasonImageNotRunnable = "ImageNotRunnable"
	// ReasonFailedCreatePodSandBox: the pod's sandbox could not be made
	// (the kubelet's event reason): its RuntimeClass is gone or names a
	// handler other than runc, knit dev's only one, or its shared PID
	// namespace could not be made. The message is the kubelet's, "Failed
	// to create pod sandbox: …". Retried with backoff: a RuntimeClass can
	// be made or mended while the replica waits.
	ReasonFailedCreatePodSandBox = "FailedCreatePodSandBox"
	// ReasonCreateContainerConfigError: the environment could not be made,
	// e.g. a ConfigMap or Secret it refers to is missing (the kubelet's reason).
	ReasonCreateContainerConfigError = "CreateContainerConfigError"
	// ReasonVolumesUnsupported: a container mounts a volume knit dev cannot
	// give it — not root on Linux (mounts need a mount namespace), or a
	// volume type it does not have (hostPath, nfs, …; Knative admits none
	// of them). The message names the container, the volume, its mount
	// path and what it takes.
	// Final for the pod template: nothing changes while knit dev runs.
	ReasonVolumesUnsupported = "VolumesUnsupported"
	// ReasonSecurityContextUnsupported: a container's securityContext asks
	// to run as a user or group other than knit dev's, which only knit
	// dev running as root can give. Final for the pod template.
	ReasonSecurityContextUnsupported = "SecurityContextUnsupported"
	// ReasonPodSpecUnsupported: the pod asks for what knit dev can give a
	// container of its own making (ko://, knit://) only through a mount
	// namespace, which needs root on Linux: hostAliases, or a dnsPolicy
	// None or dnsConfig, which replace its /etc/hosts or resolv.conf.
	// Final for the pod template.
	ReasonPodSpecUnsupported = "PodSpecUnsupported"
	// ReasonFailedMount: a volume could not be set up or mounted, e.g. the
	// ConfigMap it projects is missing (the kubelet's event reason); retried
	// with backoff.
	ReasonFailedMount = "FailedMount"
	// ReasonRunContainerError: the command could not be started, e.g. the
	// executable does not exist (the kubelet's reason).
	ReasonRunContainerError = "RunContainerError"
	// ReasonCrashLoopBackOff: a container exited, or an init container
	// exited with a code other than 0, and is restarted with backoff; the
	// message has its exit code, restart count and last output.
	ReasonCrashLoopBackOff = "CrashLoopBackOff"
	// ReasonReadinessProbeFailed: a container runs but its readiness probe
	// keeps failing. In the shared network, when a container listens on
	// none of its replica's ports, the message says where it listens
	// instead ("container user-container listens on :8080, not on its PORT
	// 41234: …").
	ReasonReadinessProbeFailed = "ReadinessProbeFailed"
)

// Reasons of the Available and Progressing conditions, Kubernetes' own
// (k8s.io/kubernetes/pkg/controller/deployment/util), so tooling that
// knows Deployments reads them unchanged.
const (
	ReasonMinimumReplicasAvailable   = "MinimumReplicasAvailable"
	ReasonMinimumReplicasUnavailable = "MinimumReplicasUnavailable"
	ReasonNewReplicaSetAvailable     = "NewReplicaSetAvailable"
	ReasonReplicaSetUpdated          = "ReplicaSetUpdated"
	ReasonProgressDeadlineExceeded   = "ProgressDeadlineExceeded"
)

// failurePriority orders failures when replicas fail differently: the one
// the user must fix first is reported.
var failurePriority = []string{
	ReasonBuildFailed,
	ReasonImageNotRunnable,
	ReasonVolumesUnsupported,
	ReasonSecurityContextUnsupported,
	ReasonPodSpecUnsupported,
	ReasonFailedCreatePodSandBox,
	ReasonCreateContainerConfigError,
	ReasonFailedMount,
	ReasonRunContainerError,
	ReasonCrashLoopBackOff,
	ReasonReadinessProbeFailed,
}

// failure is why a replica is not ready, when the user has to act on it.
type failure struct {
	Reason  string
	Message string
}

func (f *failure) rank() int {
	for i, r := range failurePriority {
		if r == f.Reason {
			return i
		}
	}
	return len(failurePriority)
}

// worse reports whether f should be reported rather than g.
func (f *failure) worse(g *failure) bool {
	if g == nil {
		return f != nil
	}
	return f != nil && f.rank() < g.rank()
}

// final reports a failure that retrying cannot mend while knit dev runs:
// the container waits for its pod template to change instead.
func (f *failure) final() bool {
	return f.Reason == ReasonImageNotRunnable || f.Reason == ReasonVolumesUnsupported || f.Reason == ReasonSecurityContextUnsupported ||
		f.Reason == ReasonPodSpecUnsupported
}
