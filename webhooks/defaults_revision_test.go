package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

func TestDefaultRevisionSpec(t *testing.T) {
	httpProbe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz"}}}
	tests := []struct {
		name string
		in   servingv1.RevisionSpec
		want servingv1.RevisionSpec
	}{{
		name: "one bare container gets Knative's defaults and port 8080",
		in:   bareSpec(corev1.Container{Image: image}),
		want: defaultedSpec(),
	}, {
		name: "an already defaulted spec is left alone",
		in:   defaultedSpec(),
		want: defaultedSpec(),
	}, {
		name: "timeoutSeconds 0 counts as unset; explicit values stay",
		in: func() servingv1.RevisionSpec {
			s := bareSpec(corev1.Container{Name: "app", Image: image, Ports: []corev1.ContainerPort{{ContainerPort: 9000}}})
			s.TimeoutSeconds, s.ContainerConcurrency = ptr.To[int64](0), ptr.To[int64](10)
			return s
		}(),
		want: func() servingv1.RevisionSpec {
			s := defaultedSpec()
			s.Containers[0].Name, s.Containers[0].Ports[0].ContainerPort = "app", 9000
			s.ContainerConcurrency = ptr.To[int64](10)
			return s
		}(),
	}, {
		name: "a declared port numbered 0 becomes 8080",
		in:   bareSpec(corev1.Container{Image: image, Ports: []corev1.ContainerPort{{Name: "h2c"}}}),
		want: func() servingv1.RevisionSpec {
			s := defaultedSpec()
			s.Containers[0].Ports[0] = corev1.ContainerPort{Name: "h2c", ContainerPort: 8080}
			return s
		}(),
	}, {
		name: "a probe with a handler keeps it and gets successThreshold 1",
		in:   bareSpec(corev1.Container{Image: image, ReadinessProbe: httpProbe.DeepCopy()}),
		want: func() servingv1.RevisionSpec {
			s := defaultedSpec()
			s.Containers[0].ReadinessProbe = httpProbe.DeepCopy()
			s.Containers[0].ReadinessProbe.SuccessThreshold = 1
			return s
		}(),
	}, {
		name: "several containers are numbered and only the one with a port is probed",
		in: bareSpec(
			corev1.Container{Image: "sidecar"},
			corev1.Container{Image: image, Ports: []corev1.ContainerPort{{ContainerPort: 8888}}},
		),
		want: servingv1.RevisionSpec{
			PodSpec: servingv1.PodSpec{Containers: []corev1.Container{
				{Name: "user-container-0", Image: "sidecar"},
				{Name: "user-container-1", Image: image, Ports: []corev1.ContainerPort{{ContainerPort: 8888}}, ReadinessProbe: tcpProbe()},
			}},
			ContainerConcurrency: ptr.To[int64](0),
			TimeoutSeconds:       ptr.To[int64](300),
		},
	}, {
		name: "several containers without a port get no port and no probe",
		in:   bareSpec(corev1.Container{Image: "a"}, corev1.Container{Image: "b"}),
		want: servingv1.RevisionSpec{
			PodSpec:              servingv1.PodSpec{Containers: []corev1.Container{{Name: "user-container-0", Image: "a"}, {Name: "user-container-1", Image: "b"}}},
			ContainerConcurrency: ptr.To[int64](0),
			TimeoutSeconds:       ptr.To[int64](300),
		},
	}, {
		name: "mounts of secrets become read-only, emptyDir mounts stay writable",
		in: func() servingv1.RevisionSpec {
			s := bareSpec(corev1.Container{Image: image, VolumeMounts: []corev1.VolumeMount{
				{Name: "creds", MountPath: "/creds"}, {Name: "scratch", MountPath: "/tmp"},
			}})
			s.Volumes = []corev1.Volume{
				{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}},
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			}
			return s
		}(),
		want: func() servingv1.RevisionSpec {
			s := defaultedSpec()
			s.Containers[0].VolumeMounts = []corev1.VolumeMount{
				{Name: "creds", MountPath: "/creds", ReadOnly: true}, {Name: "scratch", MountPath: "/tmp"},
			}
			s.Volumes = []corev1.Volume{
				{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}},
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			}
			return s
		}(),
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := *tc.in.DeepCopy()
			defaultRevisionSpec(&got, DefaultConfig())
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("defaultRevisionSpec (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultProbePortMeansServingPort(t *testing.T) {
	s := bareSpec(corev1.Container{Image: image})
	defaultRevisionSpec(&s, DefaultConfig())
	if got := s.Containers[0].ReadinessProbe.TCPSocket.Port; got != intstr.FromInt32(0) {
		t.Errorf("default probe port = %v, want 0 (the serving port)", got)
	}
}

func TestDefaultRevisionSpecUsesConfiguredTimeout(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RevisionTimeoutSeconds = 42
	s := bareSpec(corev1.Container{Image: image})
	defaultRevisionSpec(&s, cfg)
	if diff := cmp.Diff(ptr.To[int64](42), s.TimeoutSeconds); diff != "" {
		t.Errorf("timeoutSeconds (-want +got):\n%s", diff)
	}
}
