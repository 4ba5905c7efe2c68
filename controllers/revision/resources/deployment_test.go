package resources

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
)

func testRevision(mutate ...func(*servingv1.Revision)) *servingv1.Revision {
	rev := &servingv1.Revision{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello-00001", UID: "uid-1", Labels: map[string]string{
			servingv1.ConfigurationLabelKey: "hello", servingv1.ServiceLabelKey: "hello",
		}},
	}
	rev.Spec.Containers = []corev1.Container{{Image: "ko://example.com/hello"}}
	for _, m := range mutate {
		m(rev)
	}
	return rev
}

func envMap(env []corev1.EnvVar) map[string]string {
	m := map[string]string{}
	for _, e := range env {
		m[e.Name] = e.Value
	}
	return m
}

func TestMakeDeploymentEnvContract(t *testing.T) {
	rev := testRevision(func(r *servingv1.Revision) {
		r.Labels["knit.dev/repository"] = "hello"
		r.Labels[RoutingStateLabelKey] = "active"
		r.Labels[servingv1.RouteLabelKey] = "hello"
		r.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "h2c", ContainerPort: 9000}}
		r.Spec.ContainerConcurrency = ptr.To[int64](5)
		r.Spec.TimeoutSeconds = ptr.To[int64](60)
	})
	d := MakeDeployment(rev, DeploymentConfig{QueueImage: "knit://queue", InitialReplicas: 2, ProgressDeadlineSeconds: 120,
		QueueEnv: []corev1.EnvVar{{Name: "QUEUE_LISTEN_HOST", Value: "127.0.0.1"}}})

	if l := d.Spec.Template.Labels; l["knit.dev/repository"] != "hello" || l[servingv1.RevisionLabelKey] != "hello-00001" || l[RoutingStateLabelKey] != "" || l[servingv1.RouteLabelKey] != "" {
		t.Errorf("pod labels = %v, want the revision's labels but its routing state", l)
	}
	if got := *d.Spec.Replicas; got != 2 {
		t.Errorf("replicas = %d, want the initial 2", got)
	}
	containers := d.Spec.Template.Spec.Containers
	if len(containers) != 2 || containers[1].Name != QueueContainerName {
		t.Fatalf("containers = %v, want the app then the queue-proxy", containers)
	}
	if q := containers[1]; q.Image != "knit://queue" || len(q.Command)+len(q.Args) > 0 {
		t.Errorf("queue-proxy image %q command %q args %q, want the queue image alone: its entrypoint is the queue-proxy", q.Image, q.Command, q.Args)
	}
	if p := containers[0].ImagePullPolicy; p != corev1.PullIfNotPresent {
		t.Errorf("app imagePullPolicy = %q, want IfNotPresent: a revision never re-pulls a moving tag", p)
	}
	user := envMap(containers[0].Env)
	wantUser := map[string]string{"PORT": "9000", "K_REVISION": "hello-00001", "K_CONFIGURATION": "hello", "K_SERVICE": "hello"}
	if diff := cmp.Diff(wantUser, user); diff != "" {
		t.Errorf("app env (-want +got):\n%s", diff)
	}
	queue := envMap(containers[1].Env)
	for k, want := range map[string]string{
		"USER_PORT": "9000", "USER_PORT_NAME": "h2c", "CONTAINER_CONCURRENCY": "5", "REVISION_TIMEOUT_SECONDS": "60",
		"QUEUE_SERVING_PORT": "8012", "SERVING_REVISION": "hello-00001", "QUEUE_LISTEN_HOST": "127.0.0.1",
	} {
		if queue[k] != want {
			t.Errorf("queue env %s = %q, want %q", k, queue[k], want)
		}
	}
	if h := containers[0].Lifecycle; h == nil || h.PreStop.HTTPGet.Path != "/wait-for-drain" || h.PreStop.HTTPGet.Port.IntVal != QueueAdminPort {
		t.Errorf("app lifecycle = %+v, want a preStop that waits for the queue-proxy to drain", h)
	}
	if got := *d.Spec.Template.Spec.TerminationGracePeriodSeconds; got != 60 {
		t.Errorf("grace period = %d, want the revision timeout 60", got)
	}
	if d.OwnerReferences[0].UID != "uid-1" || !*d.OwnerReferences[0].Controller {
		t.Errorf("owner = %+v, want the revision as controller", d.OwnerReferences)
	}
}

func TestServingProbe(t *testing.T) {
	tests := []struct {
		name  string
		port  int32
		probe *corev1.Probe
		want  string
	}{{
		name: "no probe",
		want: "",
	}, {
		name:  "tcp on the serving port becomes port 0, the queue's USER_PORT",
		port:  8080,
		probe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}},
		want:  `{"tcpSocket":{"port":0}}`,
	}, {
		name:  "http on the serving port keeps path and period",
		port:  9000,
		probe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(9000)}}, PeriodSeconds: 2},
		want:  `{"httpGet":{"path":"/healthz","port":0},"periodSeconds":2}`,
	}, {
		name:  "another port stays as written",
		port:  8080,
		probe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8081)}}},
		want:  `{"httpGet":{"path":"/ready","port":8081}}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rev := testRevision(func(r *servingv1.Revision) {
				r.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: tt.port}}
				r.Spec.Containers[0].ReadinessProbe = tt.probe
			})
			if got := queueReadinessProbes(rev, false); got != tt.want {
				t.Errorf("queueReadinessProbes = %s, want %s", got, tt.want)
			}
			d := MakeDeployment(rev, DeploymentConfig{})
			if d.Spec.Template.Spec.Containers[0].ReadinessProbe != nil {
				t.Error("the app keeps its readiness probe; the queue-proxy should probe it instead")
			}
		})
	}
}

func TestMakePodAutoscaler(t *testing.T) {
	tests := []struct {
		name         string
		routing      string
		portName     string
		reachability autoscalingv1alpha1.ReachabilityType
		protocol     autoscalingv1alpha1.ProtocolType
	}{
		{"routed", "active", "", autoscalingv1alpha1.ReachabilityReachable, autoscalingv1alpha1.ProtocolHTTP1},
		{"unrouted", "reserve", "", autoscalingv1alpha1.ReachabilityUnreachable, autoscalingv1alpha1.ProtocolHTTP1},
		{"not yet known, h2c", "", "h2c", autoscalingv1alpha1.ReachabilityUnknown, autoscalingv1alpha1.ProtocolH2C},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rev := testRevision(func(r *servingv1.Revision) {
				if tt.routing != "" {
					r.Labels[RoutingStateLabelKey] = tt.routing
				}
				r.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: tt.portName, ContainerPort: 8080}}
				r.Annotations = map[string]string{"autoscaling.knative.dev/min-scale": "1"}
			})
			pa := MakePodAutoscaler(rev)
			if pa.Spec.Reachability != tt.reachability || pa.Spec.ProtocolType != tt.protocol {
				t.Errorf("reachability, protocol = %s, %s; want %s, %s", pa.Spec.Reachability, pa.Spec.ProtocolType, tt.reachability, tt.protocol)
			}
			if pa.Annotations["autoscaling.knative.dev/min-scale"] != "1" || pa.Spec.ScaleTargetRef.Name != "hello-00001-deployment" {
				t.Errorf("pa = %+v, want the revision's annotations and its Deployment as target", pa)
			}
		})
	}
}

// The Route stamps serving.knative.dev/routingStateModified on a Revision
// when it routes to it: on the pod template that would roll out a second
// replica of every new Revision and drain the first, so it stays off, as
// the routing labels do; the PodAutoscaler has no use for it either.
func TestRoutingStateStaysOffPods(t *testing.T) {
	unrouted := testRevision(func(r *servingv1.Revision) {
		r.Annotations = map[string]string{"autoscaling.knative.dev/min-scale": "1"}
	})
	routed := testRevision(func(r *servingv1.Revision) {
		r.Labels[RoutingStateLabelKey], r.Labels[servingv1.RouteLabelKey] = "active", "hello"
		r.Annotations = map[string]string{"autoscaling.knative.dev/min-scale": "1", RoutingStateModifiedAnnotation: "2026-11-22T12:00:00Z"}
	})
	cfg := DeploymentConfig{QueueImage: "knit://queue", InitialReplicas: 1}
	if diff := cmp.Diff(MakeDeployment(unrouted, cfg).Spec.Template, MakeDeployment(routed, cfg).Spec.Template); diff != "" {
		t.Errorf("pod template changed with the routing state (-unrouted +routed):\n%s", diff)
	}
	if got := MakePodAutoscaler(routed).Annotations; !cmp.Equal(got, unrouted.Annotations) {
		t.Errorf("PodAutoscaler annotations = %v, want %v", got, unrouted.Annotations)
	}
}

// A Revision's Deployment, and the PodAutoscaler's target, are named as
// Knative names them: <revision>-deployment, shortened past 63
// characters, so a long Revision gets a Deployment the API accepts.
func TestDeploymentName(t *testing.T) {
	for _, tc := range []struct{ revision, want string }{
		{revision: "hello-00001", want: "hello-00001-deployment"},
		{revision: "revision-timeout-does-not-exceed-timeout--egnetwcn-00001", want: "revision-timeout-doe9494d713f937bc1d4735f41081d6d844-deployment"},
	} {
		rev := testRevision(func(r *servingv1.Revision) { r.Name = tc.revision })
		got := map[string]string{"name": DeploymentName(rev), "deployment": MakeDeployment(rev, DeploymentConfig{}).Name, "pa target": MakePodAutoscaler(rev).Spec.ScaleTargetRef.Name}
		want := map[string]string{"name": tc.want, "deployment": tc.want, "pa target": tc.want}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("names for %s (-want +got):\n%s", tc.revision, diff)
		}
	}
}

// A container runs the digest its Revision pinned; one the Revision left
// unresolved runs its image as written.
func TestDeploymentRunsPinnedDigests(t *testing.T) {
	const pinned = "registry.example.com/team/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	rev := testRevision(func(r *servingv1.Revision) {
		r.Spec.Containers = []corev1.Container{
			{Name: "app", Image: "registry.example.com/team/app:1.0", Ports: []corev1.ContainerPort{{ContainerPort: 8080}}},
			{Name: "side", Image: "kind.local/side:dev"},
		}
		r.Status.ContainerStatuses = []servingv1.ContainerStatus{{Name: "app", ImageDigest: pinned}, {Name: "side"}}
	})
	got := map[string]string{}
	for _, c := range MakeDeployment(rev, DeploymentConfig{QueueImage: "knit://queue"}).Spec.Template.Spec.Containers {
		got[c.Name] = c.Image
	}
	want := map[string]string{"app": pinned, "side": "kind.local/side:dev", QueueContainerName: "knit://queue"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("images (-want +got):\n%s", diff)
	}
}

// Under multi-container-probing the queue-proxy runs every sidecar's
// network readiness probe after the app's; an exec one stays with the
// kubelet, and without the flag the sidecars' probes are not its.
func TestSidecarReadinessProbes(t *testing.T) {
	rev := testRevision(func(r *servingv1.Revision) {
		r.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080}}
		r.Spec.Containers = append(r.Spec.Containers,
			corev1.Container{Name: "http", ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(8882)}}, SuccessThreshold: 1}},
			corev1.Container{Name: "exec", ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}},
			corev1.Container{Name: "grpc", ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 8883}}}},
			corev1.Container{Name: "none"})
	})
	want := `[{"tcpSocket":{"port":0}},{"httpGet":{"path":"/","port":8882},"successThreshold":1},{"grpc":{"port":8883,"service":null}}]`
	if got := queueReadinessProbes(rev, true); got != want {
		t.Errorf("with the flag:\n got %s\nwant %s", got, want)
	}
	if got := queueReadinessProbes(rev, false); got != "" {
		t.Errorf("without the flag = %s, want the app's probe alone (none here)", got)
	}
	d := MakeDeployment(rev, DeploymentConfig{MultiContainerProbing: true})
	for _, c := range d.Spec.Template.Spec.Containers[1:4] {
		if c.ReadinessProbe == nil {
			t.Errorf("sidecar %s lost its readiness probe: the kubelet runs it too", c.Name)
		}
	}
}

// The queue-proxy is sized by config-deployment, queueproxy.resource-defaults
// and the Revision's queue.sidecar annotations, as Knative sizes it; with
// none of them it asks for nothing, as Knative's.
func TestQueueProxyResources(t *testing.T) {
	queue := func(d *appsv1.Deployment) corev1.Container {
		cs := d.Spec.Template.Spec.Containers
		return cs[len(cs)-1]
	}
	plain := testRevision()
	if r := queue(MakeDeployment(plain, DeploymentConfig{})).Resources; len(r.Requests)+len(r.Limits) > 0 {
		t.Errorf("queue-proxy resources with nothing set = %v, want none", r)
	}
	annotated := testRevision(func(r *servingv1.Revision) {
		r.Annotations = map[string]string{"queue.sidecar.serving.knative.dev/memory-resource-limit": "64Mi"}
	})
	r := queue(MakeDeployment(annotated, DeploymentConfig{QueueResourceDefaults: true})).Resources
	if got := r.Limits.Memory().String(); got != "64Mi" {
		t.Errorf("memory limit = %s, want the annotation's 64Mi", got)
	}
	if got := r.Requests.Cpu().String(); got != "25m" {
		t.Errorf("cpu request = %s, want Knative's default 25m", got)
	}
}

// queueproxy.mount-podinfo gives the queue-proxy the pod's annotations as
// a file at /etc/podinfo/annotations; nothing is mounted otherwise.
func TestQueuePodInfo(t *testing.T) {
	rev := testRevision()
	d := MakeDeployment(rev, DeploymentConfig{QueuePodInfo: true})
	spec := d.Spec.Template.Spec
	q := spec.Containers[len(spec.Containers)-1]
	if len(q.VolumeMounts) != 1 || q.VolumeMounts[0].MountPath != "/etc/podinfo" || !q.VolumeMounts[0].ReadOnly {
		t.Fatalf("queue-proxy mounts %v, want the pod's info read-only at /etc/podinfo", q.VolumeMounts)
	}
	v := spec.Volumes[len(spec.Volumes)-1]
	if v.Name != q.VolumeMounts[0].Name || v.DownwardAPI == nil || v.DownwardAPI.Items[0].FieldRef.FieldPath != "metadata.annotations" {
		t.Errorf("volume %+v, want the downward API's metadata.annotations", v)
	}
	if d := MakeDeployment(rev, DeploymentConfig{}); len(d.Spec.Template.Spec.Volumes) != len(rev.Spec.Volumes) {
		t.Errorf("volumes without the flag = %v", d.Spec.Template.Spec.Volumes)
	}
}
