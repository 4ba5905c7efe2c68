package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/knitops/knit/local/view"
	"github.com/knitops/knit/local/volumes"
)

// files is a payload in comparable form: path → "mode content".
func files(p volumes.Payload) map[string]string {
	out := map[string]string{}
	for k, f := range p {
		out[k] = fmt.Sprintf("%#o %s", f.Mode, f.Data)
	}
	return out
}

// The downward API of a volume reads the fields the environment's
// valueFrom reads (package volumes tests the other volume types).
func TestDownwardAPIVolume(t *testing.T) {
	pod := podIdentity{Name: "p-1", Namespace: "ns", Labels: map[string]string{"b": "2", "a": `say "hi"`}}
	spec := &corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}}
	v := &corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
		{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
		{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}, Mode: ptr.To[int32](0o400)},
		{Path: "cpu", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "app", Resource: "requests.cpu"}},
	}}}}
	got, err := volumes.PayloadOf(context.Background(), nil, downward(pod), spec, v)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"labels": "0644 a=\"say \\\"hi\\\"\"\nb=\"2\"", "name": "0400 p-1", "cpu": "0644 0"}
	if diff := cmp.Diff(want, files(got)); diff != "" {
		t.Errorf("payload (-want +got):\n%s", diff)
	}
}

func TestVolumeSupport(t *testing.T) {
	volumes := []corev1.Volume{
		{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}},
		{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "claim", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}},
		{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc"}}},
	}
	mount := func(names ...string) *corev1.Container {
		c := &corev1.Container{Name: "user-container"}
		for _, n := range names {
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: n, MountPath: "/mnt/" + n})
		}
		return c
	}
	notRoot := fmt.Errorf("%w (knit dev runs as uid 1000)", view.ErrUnsupported)
	for _, tc := range []struct {
		name      string
		container *corev1.Container
		mounts    error
		want      string // the message; "" for no failure
	}{
		{name: "supported", container: mount("cfg", "scratch")},
		{name: "nothing mounted needs nothing", container: mount(), mounts: notRoot},
		{name: "not root", container: mount("cfg"), mounts: notRoot,
			want: `container user-container cannot mount volume "cfg" at /mnt/cfg: knit dev mounts volumes at their paths in a mount namespace of each container's own, which needs root on Linux (knit dev runs as uid 1000)`},
		{name: "a claim", container: mount("scratch", "claim")},
		{name: "a hostPath", container: mount("claim", "host"),
			want: `container user-container cannot mount volume "host" at /mnt/host: knit dev supports configMap, secret, projected, downwardAPI, emptyDir and persistentVolumeClaim volumes only`},
		{name: "no such volume", container: mount("nope"), want: `container user-container cannot mount volume "nope" at /mnt/nope: the pod has no such volume`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := volumeSupport(tc.container, volumes, tc.mounts)
			switch {
			case tc.want == "" && f != nil:
				t.Errorf("failure %+v, want none", f)
			case tc.want != "" && (f == nil || f.Reason != ReasonVolumesUnsupported || f.Message != tc.want || !f.final()):
				t.Errorf("failure %+v, want final %s: %s", f, ReasonVolumesUnsupported, tc.want)
			}
		})
	}
	if !strings.Contains(view.ErrUnsupported.Error(), "root on Linux") {
		t.Error("the refusal no longer says what it takes")
	}
}
