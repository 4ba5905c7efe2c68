package webhooks

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

const (
	// userContainerName is Knative's name for a Revision's container when
	// the user gives none; several unnamed containers get "-<index>" added.
	userContainerName = "user-container"
	// defaultUserPort is where Knative expects the app to listen when no
	// container declares a port.
	defaultUserPort int32 = 8080
)

// defaultRevisionSpec fills what Knative's RevisionSpec.SetDefaults fills,
// so the stored spec says what will run: the request timeout, the
// concurrency limit, container names, the serving port and the readiness
// probe the queue-proxy uses. timeoutSeconds 0 counts as unset, as in
// Knative. Unlike Knative, knit writes the serving port 8080 into the spec
// instead of assuming it, so every consumer reads it from one place.
func defaultRevisionSpec(rs *servingv1.RevisionSpec, cfg Config) {
	if rs.TimeoutSeconds == nil || *rs.TimeoutSeconds == 0 {
		rs.TimeoutSeconds = ptr.To(cfg.RevisionTimeoutSeconds)
	}
	if rs.ContainerConcurrency == nil {
		rs.ContainerConcurrency = ptr.To(cfg.ContainerConcurrency)
	}
	cs := rs.Containers
	for i := range cs {
		if cs[i].Name != "" {
			continue
		}
		cs[i].Name = userContainerName
		if len(cs) > 1 {
			cs[i].Name += "-" + strconv.Itoa(i)
		}
	}
	defaultInitContainerNames(rs)
	serving := servingContainer(cs)
	for i := range cs {
		switch {
		case i == serving:
			defaultServingPort(&cs[i])
			defaultReadinessProbe(&cs[i])
		case cs[i].ReadinessProbe != nil && cs[i].ReadinessProbe.SuccessThreshold == 0:
			// A sidecar's probe (multi-container-probing) is the
			// queue-proxy's too, which wants Kubernetes' default.
			cs[i].ReadinessProbe.SuccessThreshold = 1
		}
	}
	defaultReadOnlyMounts(rs)
	defaultSecureContexts(rs, cfg.Features)
}

// defaultInitContainerName is Knative's name for an init container the
// Revision leaves unnamed; several get "-0", "-1", … avoiding the names
// the Revision chose.
const defaultInitContainerName = "init-container"

func defaultInitContainerNames(rs *servingv1.RevisionSpec) {
	taken := map[string]bool{}
	for _, c := range append(append([]corev1.Container(nil), rs.Containers...), rs.InitContainers...) {
		taken[c.Name] = true
	}
	next := 0
	for i := range rs.InitContainers {
		c := &rs.InitContainers[i]
		if c.Name != "" {
			continue
		}
		name := defaultInitContainerName
		for len(rs.InitContainers) > 1 || taken[name] {
			name = defaultInitContainerName + "-" + strconv.Itoa(next)
			next++
			if !taken[name] {
				break
			}
		}
		c.Name, taken[name] = name, true
	}
}

// servingContainer is the index of the container that receives requests:
// the only one, or the first that declares a port; -1 when several
// containers declare none (validation reports that).
func servingContainer(cs []corev1.Container) int {
	if len(cs) == 1 {
		return 0
	}
	for i := range cs {
		if len(cs[i].Ports) > 0 {
			return i
		}
	}
	return -1
}

// defaultServingPort declares port 8080 when the container declares none,
// or sets it on a declared port whose number is 0 (Knative reads 0 as 8080).
func defaultServingPort(c *corev1.Container) {
	if len(c.Ports) == 0 {
		c.Ports = []corev1.ContainerPort{{ContainerPort: defaultUserPort}}
		return
	}
	if c.Ports[0].ContainerPort == 0 {
		c.Ports[0].ContainerPort = defaultUserPort
	}
}

// defaultReadinessProbe gives the serving container a TCP probe when it
// has no handler of its own. Port 0 means "the serving port" to the
// queue-proxy, as in Knative.
func defaultReadinessProbe(c *corev1.Container) {
	if c.ReadinessProbe == nil {
		c.ReadinessProbe = &corev1.Probe{}
	}
	h := &c.ReadinessProbe.ProbeHandler
	if h.TCPSocket == nil && h.HTTPGet == nil && h.Exec == nil && h.GRPC == nil {
		h.TCPSocket = &corev1.TCPSocketAction{}
	}
	if c.ReadinessProbe.SuccessThreshold == 0 {
		c.ReadinessProbe.SuccessThreshold = 1
	}
}

// defaultReadOnlyMounts makes mounts of secrets, config maps and projected
// volumes read-only, as Knative does; emptyDir and persistent volume
// claims stay writable.
func defaultReadOnlyMounts(rs *servingv1.RevisionSpec) {
	writable := map[string]bool{}
	for _, v := range rs.Volumes {
		if v.EmptyDir != nil || v.PersistentVolumeClaim != nil {
			writable[v.Name] = true
		}
	}
	for i := range rs.Containers {
		ms := rs.Containers[i].VolumeMounts
		for j := range ms {
			if !writable[ms[j].Name] {
				ms[j].ReadOnly = true
			}
		}
	}
}
