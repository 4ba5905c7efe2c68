package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

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

func TestSplitExisting(t *testing.T) {
	existing := map[string]bool{"/": true, "/var": true, "/var/run": true, "/etc": true, "/etc/hosts": true}
	exists := func(p string) (bool, error) {
		if p == "/broken" {
			return false, errors.New("permission denied")
		}
		return existing[p], nil
	}
	for _, tc := range []struct {
		target, ancestor string
		missing          []string
		wantErr          bool
	}{
		{target: "/hello/world", ancestor: "/", missing: []string{"hello", "world"}},
		{target: "/var/run/secrets/token", ancestor: "/var/run", missing: []string{"secrets", "token"}},
		{target: "/etc/hosts", ancestor: "/etc/hosts"},
		{target: "/etc//hosts/", ancestor: "/etc/hosts"},
		{target: "/", ancestor: "/"},
		{target: "/broken/x", wantErr: true},
		{target: "relative/path", wantErr: true},
	} {
		ancestor, missing, err := splitExisting(tc.target, exists)
		if (err != nil) != tc.wantErr || ancestor != tc.ancestor || !cmp.Equal(missing, tc.missing) {
			t.Errorf("splitExisting(%q) = %q, %q, %v; want %q, %q, error %v", tc.target, ancestor, missing, err, tc.ancestor, tc.missing, tc.wantErr)
		}
	}
}

func TestSortMounts(t *testing.T) {
	ms := []bindMount{{target: "/a/b/c"}, {target: "/x"}, {target: "/a/b"}, {target: "/a"}, {target: "/y"}}
	sortMounts(ms)
	var got []string
	for _, m := range ms {
		got = append(got, m.target)
	}
	if want := []string{"/x", "/a", "/y", "/a/b", "/a/b/c"}; !cmp.Equal(got, want) {
		t.Errorf("order = %v, want %v (parents first, stable)", got, want)
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
	notRoot := fmt.Errorf("%w (knit dev runs as uid 1000)", errMountsUnsupported)
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
	if !strings.Contains(errMountsUnsupported.Error(), "root on Linux") {
		t.Error("the refusal no longer says what it takes")
	}
}
