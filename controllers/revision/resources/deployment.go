package resources

import (
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/knitops/knit/api/serving/queuesidecar"
	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// DeploymentConfig is what the Deployment depends on besides the Revision.
type DeploymentConfig struct {
	// QueueImage runs the queue-proxy with no arguments, Knative's
	// environment only: "knit://queue" in knit dev, on a cluster an image
	// whose entrypoint is knit-queue (cmd/knit-queue).
	QueueImage string
	// ProgressDeadlineSeconds bounds how long the Revision may take to
	// become ready before it is marked failed.
	ProgressDeadlineSeconds int32
	// InitialReplicas is the replica count on creation; afterwards the
	// PodAutoscaler owns the count.
	InitialReplicas int32
	// QueueEnv is added to the queue-proxy's environment: knit dev binds
	// it to loopback and shortens its drain.
	QueueEnv []corev1.EnvVar
	// MultiContainerProbing is config-features multi-container-probing
	// Enabled: the queue-proxy runs the sidecars' readiness probes too.
	MultiContainerProbing bool
	// QueueSidecar sizes every queue-proxy (config-deployment's
	// queue-sidecar-* keys); the Revision's annotations override it.
	QueueSidecar queuesidecar.Settings
	// QueueResourceDefaults is config-features queueproxy.resource-defaults
	// Enabled: Knative's requests and limits where nothing else says.
	QueueResourceDefaults bool
	// QueuePodInfo mounts the pod's annotations into the queue-proxy at
	// /etc/podinfo (config-features queueproxy.mount-podinfo, Enabled or
	// Allowed and asked for by the Revision).
	QueuePodInfo bool
	// AutodetectHTTP2 is config-features autodetect-http2 Enabled: the
	// queue-proxy's HTTP probe offers the app an h2c upgrade first.
	AutodetectHTTP2 bool
}

// MakeDeployment builds the Deployment that runs a Revision's replicas:
// the app with Knative's env contract and the queue-proxy in front of it.
func MakeDeployment(rev *servingv1.Revision, cfg DeploymentConfig) *appsv1.Deployment {
	labels := podLabels(rev)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name:            DeploymentName(rev),
			Namespace:       rev.Namespace,
			Labels:          labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rev, servingv1.GroupVersion.WithKind("Revision"))},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas:                ptr.To(cfg.InitialReplicas),
			Selector:                &metav1.LabelSelector{MatchLabels: map[string]string{servingv1.RevisionLabelKey: rev.Name}},
			ProgressDeadlineSeconds: ptr.To(cfg.ProgressDeadlineSeconds),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxUnavailable: ptr.To(intstr.FromInt32(0)), MaxSurge: ptr.To(intstr.FromString("25%")),
			}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: podAnnotations(rev)},
				Spec:       makePodSpec(rev, cfg),
			},
		},
	}
}

// drainFirst is Knative's preStop hook on the app: it returns once the
// queue-proxy has drained, so the app gets SIGTERM only after the requests
// the queue-proxy still holds are answered.
var drainFirst = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{
	Port: intstr.FromInt32(QueueAdminPort), Path: "/wait-for-drain",
}}}

// routingLabels change as traffic moves; on pods they would restart the
// replicas, so they stay on the Revision.
var routingLabels = map[string]bool{RoutingStateLabelKey: true, servingv1.RouteLabelKey: true}

// routingAnnotations change as traffic moves, like routingLabels: on the
// pod template the Route's first "active" would roll out a second replica
// of every new Revision and drain the first (Knative filters them too).
var routingAnnotations = map[string]bool{RoutingStateModifiedAnnotation: true}

// podAnnotations are the Revision's annotations without routingAnnotations.
func podAnnotations(rev *servingv1.Revision) map[string]string {
	if len(rev.Annotations) == 0 {
		return nil
	}
	out := make(map[string]string, len(rev.Annotations))
	for k, v := range rev.Annotations {
		if !routingAnnotations[k] {
			out[k] = v
		}
	}
	return out
}

// podLabels are the Revision's labels, as Knative gives them to its pods
// (knit.dev/repository tells the local runtime which checkout to build),
// plus the revision label the selector uses, without routingLabels.
func podLabels(rev *servingv1.Revision) map[string]string {
	labels := make(map[string]string, len(rev.Labels)+1)
	for k, v := range rev.Labels {
		if !routingLabels[k] {
			labels[k] = v
		}
	}
	labels[servingv1.RevisionLabelKey] = rev.Name
	return labels
}

// pinnedDigest is the digest the Revision pinned a container named name
// to (one of statuses: status.containerStatuses or
// initContainerStatuses), "" when it runs the image as written.
func pinnedDigest(statuses []servingv1.ContainerStatus, name string) string {
	for _, cs := range statuses {
		if cs.Name == name {
			return cs.ImageDigest
		}
	}
	return ""
}

// runnable is a copy of c as the pod runs it: the digest pinned in
// statuses, and IfNotPresent unless c names a pull policy.
func runnable(c corev1.Container, statuses []servingv1.ContainerStatus) corev1.Container {
	c = *c.DeepCopy()
	if d := pinnedDigest(statuses, c.Name); d != "" {
		c.Image = d
	}
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = corev1.PullIfNotPresent
	}
	return c
}

// makePodSpec is the Revision's pod. A container runs the digest its
// Revision pinned, so no replica runs what a tag pushed again names. Containers that name no pull policy
// get IfNotPresent even for a :latest tag: a Revision is an immutable
// snapshot, and re-pulling a moving tag would let two replicas of one
// Revision run different code (Knative pins a digest for the same reason).
func makePodSpec(rev *servingv1.Revision, cfg DeploymentConfig) corev1.PodSpec {
	s := rev.Spec.PodSpec
	containers := make([]corev1.Container, 0, len(s.Containers)+1)
	serving := ServingContainer(rev)
	for i := range s.Containers {
		c := runnable(s.Containers[i], rev.Status.ContainerStatuses)
		if i == serving {
			c.Env = append(c.Env, userEnv(rev, UserPort(rev))...)
			c.ReadinessProbe = kubeletReadinessProbe(c.ReadinessProbe) // the queue-proxy runs the others (probes.go)
			c.LivenessProbe = livenessProbe(c.LivenessProbe, UserPort(rev))
			c.Lifecycle = drainFirst
		}
		containers = append(containers, c)
	}
	containers = append(containers, queueContainer(rev, cfg))
	var inits []corev1.Container
	for i := range s.InitContainers {
		inits = append(inits, runnable(s.InitContainers[i], rev.Status.InitContainerStatuses))
	}
	volumes := s.Volumes
	if cfg.QueuePodInfo {
		volumes = append(slices.Clone(volumes), podInfoVolume)
	}
	return corev1.PodSpec{
		InitContainers:                inits,
		Containers:                    containers,
		Volumes:                       volumes,
		ServiceAccountName:            s.ServiceAccountName,
		ImagePullSecrets:              s.ImagePullSecrets,
		EnableServiceLinks:            ptr.To(s.EnableServiceLinks != nil && *s.EnableServiceLinks),
		AutomountServiceAccountToken:  s.AutomountServiceAccountToken,
		NodeSelector:                  s.NodeSelector,
		Tolerations:                   s.Tolerations,
		RuntimeClassName:              s.RuntimeClassName,
		SecurityContext:               s.SecurityContext,
		Affinity:                      s.Affinity,
		TopologySpreadConstraints:     s.TopologySpreadConstraints,
		HostAliases:                   s.HostAliases,
		ShareProcessNamespace:         s.ShareProcessNamespace,
		PriorityClassName:             s.PriorityClassName,
		SchedulerName:                 s.SchedulerName,
		DNSPolicy:                     s.DNSPolicy,
		DNSConfig:                     s.DNSConfig,
		TerminationGracePeriodSeconds: ptr.To(timeoutSeconds(rev)),
	}
}

// ServingContainer is the index of the container that receives traffic:
// the one with a port, else the first.
func ServingContainer(rev *servingv1.Revision) int {
	for i, c := range rev.Spec.Containers {
		if len(c.Ports) > 0 {
			return i
		}
	}
	return 0
}

// UserPort is the port the app listens on.
func UserPort(rev *servingv1.Revision) int32 {
	c := rev.Spec.Containers[ServingContainer(rev)]
	if len(c.Ports) > 0 && c.Ports[0].ContainerPort != 0 {
		return c.Ports[0].ContainerPort
	}
	return DefaultUserPort
}

// IsH2C reports whether the app speaks HTTP/2 cleartext (port named h2c).
func IsH2C(rev *servingv1.Revision) bool {
	c := rev.Spec.Containers[ServingContainer(rev)]
	return len(c.Ports) > 0 && c.Ports[0].Name == "h2c"
}

// userEnv is Knative's runtime contract for the app.
func userEnv(rev *servingv1.Revision, port int32) []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: "PORT", Value: strconv.Itoa(int(port))},
		{Name: "K_REVISION", Value: rev.Name},
		{Name: "K_CONFIGURATION", Value: rev.Labels[servingv1.ConfigurationLabelKey]},
		{Name: "K_SERVICE", Value: rev.Labels[servingv1.ServiceLabelKey]},
	}
}

func queueContainer(rev *servingv1.Revision, cfg DeploymentConfig) corev1.Container {
	c := corev1.Container{
		Name:            QueueContainerName,
		Image:           cfg.QueueImage,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Ports: []corev1.ContainerPort{
			{Name: QueueHTTPPortName, ContainerPort: QueueHTTPPort},
			{Name: QueueMetricsPortName, ContainerPort: QueueMetricsPort},
			{Name: QueueAdminPortName, ContainerPort: QueueAdminPort},
		},
		Env:             append(queueEnv(rev, cfg), cfg.QueueEnv...),
		SecurityContext: queueSecurityContext(cfg.QueueImage),
		Resources: queuesidecar.Resources(rev.Annotations, &rev.Spec.Containers[ServingContainer(rev)],
			cfg.QueueSidecar, cfg.QueueResourceDefaults),
		ReadinessProbe: &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Port:        intstr.FromInt32(QueueHTTPPort),
				HTTPHeaders: []corev1.HTTPHeader{{Name: "K-Network-Probe", Value: "queue"}},
			}},
			PeriodSeconds:    1,
			FailureThreshold: 3,
			SuccessThreshold: 1,
			TimeoutSeconds:   1,
		},
	}
	if cfg.QueuePodInfo {
		c.VolumeMounts = []corev1.VolumeMount{{Name: podInfoVolume.Name, MountPath: "/etc/podinfo", ReadOnly: true}}
	}
	return c
}

// podInfoVolume is the pod's annotations as a file, for the queue-proxy
// under queueproxy.mount-podinfo, as Knative mounts them (its
// extensions read the pod's annotations there, not from the API).
var podInfoVolume = corev1.Volume{
	Name: "pod-info",
	VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
		Items: []corev1.DownwardAPIVolumeFile{{Path: "annotations", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations"}}},
	}},
}

// localQueueScheme prefixes the queue images knit dev's local runtime runs
// as knit's own binary rather than from an image ("knit://queue").
const localQueueScheme = "knit://"

// queueSecurityContext is Knative's for its queue-proxy: the sidecar runs
// in any namespace enforcing the restricted Pod Security Standard, and a
// compromised queue-proxy has no capability, no writable root and no way
// to gain privileges. The image's USER (65532, hack/images) makes
// runAsNonRoot hold without a runAsUser. knit dev's local queue has no
// image: it runs as 65532 where the local runtime confines its processes
// (root with mount namespaces), which then holds it to the capabilities
// and no_new_privs here, but as knit dev itself elsewhere (root in a CI
// container without them), so runAsNonRoot is not asked there: the local
// runtime would refuse to start it.
func queueSecurityContext(image string) *corev1.SecurityContext {
	sc := &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		RunAsNonRoot:             ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	if strings.HasPrefix(image, localQueueScheme) {
		sc.RunAsNonRoot = nil
	}
	return sc
}

func queueEnv(rev *servingv1.Revision, cfg DeploymentConfig) []corev1.EnvVar {
	env := []corev1.EnvVar{
		{Name: "SERVING_NAMESPACE", Value: rev.Namespace},
		{Name: "SERVING_SERVICE", Value: rev.Labels[servingv1.ServiceLabelKey]},
		{Name: "SERVING_CONFIGURATION", Value: rev.Labels[servingv1.ConfigurationLabelKey]},
		{Name: "SERVING_REVISION", Value: rev.Name},
		{Name: "QUEUE_SERVING_PORT", Value: strconv.Itoa(QueueHTTPPort)},
		{Name: "QUEUE_METRICS_PORT", Value: strconv.Itoa(QueueMetricsPort)},
		{Name: "QUEUE_ADMIN_PORT", Value: strconv.Itoa(QueueAdminPort)},
		{Name: "USER_PORT", Value: strconv.Itoa(int(UserPort(rev)))},
		{Name: "CONTAINER_CONCURRENCY", Value: strconv.FormatInt(ptr.Deref(rev.Spec.ContainerConcurrency, 0), 10)},
		{Name: "REVISION_TIMEOUT_SECONDS", Value: strconv.FormatInt(timeoutSeconds(rev), 10)},
		{Name: "REVISION_RESPONSE_START_TIMEOUT_SECONDS", Value: strconv.FormatInt(ptr.Deref(rev.Spec.ResponseStartTimeoutSeconds, 0), 10)},
		{Name: "REVISION_IDLE_TIMEOUT_SECONDS", Value: strconv.FormatInt(ptr.Deref(rev.Spec.IdleTimeoutSeconds, 0), 10)},
	}
	if p := queueReadinessProbes(rev, cfg.MultiContainerProbing); p != "" {
		env = append(env, corev1.EnvVar{Name: "SERVING_READINESS_PROBE", Value: p})
	}
	if IsH2C(rev) {
		env = append(env, corev1.EnvVar{Name: "USER_PORT_NAME", Value: "h2c"})
	}
	if cfg.AutodetectHTTP2 {
		env = append(env, corev1.EnvVar{Name: "ENABLE_HTTP2_AUTO_DETECTION", Value: "true"})
	}
	return env
}

func timeoutSeconds(rev *servingv1.Revision) int64 {
	return ptr.Deref(rev.Spec.TimeoutSeconds, 300)
}
