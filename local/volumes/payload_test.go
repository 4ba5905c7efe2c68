package volumes

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// fakeSources are volume sources from maps; a token spells its request.
type fakeSources struct {
	configMaps, secrets map[string]map[string][]byte
}

func (f fakeSources) ConfigMap(_ context.Context, name string) (map[string][]byte, error) {
	if d, ok := f.configMaps[name]; ok {
		return d, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
}

func (f fakeSources) Secret(_ context.Context, name string) (map[string][]byte, error) {
	if d, ok := f.secrets[name]; ok {
		return d, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

func (f fakeSources) Token(_ context.Context, audience string, expirationSeconds int64) ([]byte, error) {
	return fmt.Appendf(nil, "token for %q lasting %ds", audience, expirationSeconds), nil
}

// files is a payload in comparable form: path → "mode content".
func files(p Payload) map[string]string {
	out := map[string]string{}
	for k, f := range p {
		out[k] = fmt.Sprintf("%#o %s", f.Mode, f.Data)
	}
	return out
}

func TestVolumePayload(t *testing.T) {
	src := fakeSources{
		configMaps: map[string]map[string][]byte{"cm": {"world": []byte("hello"), "other": []byte("text2")}},
		secrets:    map[string]map[string][]byte{"sec": {"world": []byte("secret"), "key": []byte("pem")}},
	}
	// The runtime answers fieldRefs and resourceFieldRefs as its
	// environment does (its TestDownwardAPIVolume); here, as it would
	// for this pod.
	pod := Pod{Labels: map[string]string{"b": "2", "a": `say "hi"`},
		Field: func(path string) (string, error) {
			if path == "metadata.name" {
				return "p-1", nil
			}
			return "", fmt.Errorf("fieldRef %q is not supported by knit dev", path)
		},
		Resource: func(c *corev1.Container, ref *corev1.ResourceFieldSelector) (string, bool, error) {
			if c.Name == "app" && ref.Resource == "requests.cpu" {
				return "0", true, nil
			}
			return "", false, nil
		},
	}
	spec := &corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}}
	for _, tc := range []struct {
		name    string
		source  corev1.VolumeSource
		want    map[string]string
		wantErr string
	}{{
		name:   "configMap: every key at its name, 0644",
		source: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}},
		want:   map[string]string{"world": "0644 hello", "other": "0644 text2"},
	}, {
		name: "configMap: items at their paths with their modes, else defaultMode",
		source: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, DefaultMode: ptr.To[int32](0o440),
			Items: []corev1.KeyToPath{{Key: "world", Path: "a/b/w", Mode: ptr.To[int32](0o400)}, {Key: "other", Path: "o"}},
		}},
		want: map[string]string{"a/b/w": "0400 hello", "o": "0440 text2"},
	}, {
		name: "configMap: an item naming a missing key fails the volume",
		source: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Items: []corev1.KeyToPath{{Key: "nope", Path: "n"}},
		}},
		wantErr: `configmap references non-existent key: nope`,
	}, {
		name: "configMap, optional: a missing key is left out",
		source: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Optional: ptr.To(true),
			Items: []corev1.KeyToPath{{Key: "nope", Path: "n"}, {Key: "world", Path: "w"}},
		}},
		want: map[string]string{"w": "0644 hello"},
	}, {
		name:   "configMap, optional and missing: empty",
		source: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}, Optional: ptr.To(true)}},
		want:   map[string]string{},
	}, {
		name:    "configMap, missing: fails naming it",
		source:  corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}, Optional: ptr.To(false)}},
		wantErr: `configmap "gone": configmaps "gone" not found`,
	}, {
		name: "secret: an item with its mode",
		source: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: "sec", Items: []corev1.KeyToPath{{Key: "key", Path: "tls.key", Mode: ptr.To[int32](0o600)}},
		}},
		want: map[string]string{"tls.key": "0600 pem"},
	}, {
		name:    "secret, missing: fails naming it",
		source:  corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "gone"}},
		wantErr: `secret "gone": secrets "gone" not found`,
	}, {
		name: "projected: later sources win at one path; defaultMode for all; missing optional skipped",
		source: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: ptr.To[int32](0o444), Sources: []corev1.VolumeProjection{
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}, Optional: ptr.To(true)}},
			{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "sec"}, Items: []corev1.KeyToPath{{Key: "world", Path: "world"}}}},
		}}},
		want: map[string]string{"world": "0444 secret", "other": "0444 text2"},
	}, {
		name: "projected: a service-account token with its audience and lifetime (default 1h)",
		source: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: "api", Path: "token"}},
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr.To[int64](600), Path: "t2"}},
		}}},
		want: map[string]string{"token": `0644 token for "api" lasting 3600s`, "t2": `0644 token for "" lasting 600s`},
	}, {
		name: "projected: a missing secret fails naming the source",
		source: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}}},
		}}},
		wantErr: `sources[0]: secret "gone": secrets "gone" not found`,
	}, {
		name: "downwardAPI: labels one a line, sorted and quoted; fields",
		source: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
			{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}, Mode: ptr.To[int32](0o400)},
			{Path: "cpu", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "app", Resource: "requests.cpu"}},
		}}},
		want: map[string]string{"labels": "0644 a=\"say \\\"hi\\\"\"\nb=\"2\"", "name": "0400 p-1", "cpu": "0644 0"},
	}, {
		name:   "emptyDir: no payload",
		source: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			v := &corev1.Volume{Name: "v", VolumeSource: tc.source}
			got, err := PayloadOf(context.Background(), src, pod, spec, v)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				if got != nil {
					t.Errorf("payload = %v, want none", files(got))
				}
				return
			}
			if diff := cmp.Diff(tc.want, files(got)); diff != "" {
				t.Errorf("payload (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckPath(t *testing.T) {
	for path, wantErr := range map[string]bool{
		"world": false, "a/b/c": false, "a/..b": false, "..data": true,
		"": true, "/etc/passwd": true, "..": true, "../x": true, "a/../../x": true, "a/..": true,
	} {
		if err := checkPath(path); (err != nil) != wantErr {
			t.Errorf("checkPath(%q) = %v, want error %v", path, err, wantErr)
		}
	}
}

func TestPayloadWrite(t *testing.T) {
	dir := t.TempDir()
	p := Payload{"a/b/key": {Data: []byte("k"), Mode: 0o400}, "world": {Data: []byte("w"), Mode: 0o666}}
	if err := p.write(dir); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]os.FileMode{"a/b/key": 0o400, "world": 0o666} { // exactly, whatever the umask
		if fi, err := os.Stat(dir + "/" + name); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want mode %v", name, fi.Mode(), err, want)
		}
	}
	if err := (Payload{"../escape": {}}).write(dir); err == nil {
		t.Error("a path out of the volume was written")
	}
}
