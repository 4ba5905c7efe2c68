package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestDisallowedFields(t *testing.T) {
	tests := []struct {
		name    string
		v       any
		allowed []string
		want    []string
	}{{
		name:    "only allowed fields set",
		v:       corev1.ContainerPort{Name: "h2c", ContainerPort: 8080},
		allowed: []string{"name", "containerPort", "protocol"},
	}, {
		name:    "set fields outside the list, in declaration order, by JSON name",
		v:       corev1.ContainerPort{HostIP: "0.0.0.0", HostPort: 80, ContainerPort: 8080},
		allowed: []string{"name", "containerPort", "protocol"},
		want:    []string{"hostPort", "hostIP"},
	}, {
		name: "inlined structs are not fields of their own",
		v:    corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		want: []string{"name"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, disallowedFields(tc.v, tc.allowed...)); diff != "" {
				t.Errorf("disallowedFields (-want +got):\n%s", diff)
			}
		})
	}
}
