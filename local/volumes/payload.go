package volumes

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
)

// defaultVolumeMode is the mode of a projected file when the volume sets
// no defaultMode and the item no mode: the API server's default for
// configMap, secret, projected and downwardAPI volumes (0644).
const defaultVolumeMode int32 = 0o644

// defaultTokenExpiration is a projected service-account token's lifetime
// when the projection sets none, the API server's default.
const defaultTokenExpiration int64 = 3600

// A File is one file of a volume as the kubelet writes it: content and
// permission bits.
type File struct {
	Data []byte
	Mode os.FileMode
}

// A Payload is a volume's files by path relative to the volume's root.
type Payload map[string]File

// Equal reports p and q holding the same files, with the same modes: a
// volume to leave alone on a resync.
func (p Payload) Equal(q Payload) bool {
	return maps.EqualFunc(p, q, func(x, y File) bool { return x.Mode == y.Mode && bytes.Equal(x.Data, y.Data) })
}

// Sources fetches what a volume projects: in knit dev the API server (the
// runtime's), in tests a map. A missing object is an error
// apierrors.IsNotFound recognises, so that optional sources can be
// skipped as the kubelet skips them.
type Sources interface {
	ConfigMap(ctx context.Context, name string) (map[string][]byte, error)
	Secret(ctx context.Context, name string) (map[string][]byte, error)
	// Token is a service-account token of the pod's service account for
	// audience ("" means the API server's own) lasting expirationSeconds.
	Token(ctx context.Context, audience string, expirationSeconds int64) ([]byte, error)
}

// Pod is what the downward API of a pod's volumes reads: its labels and
// annotations, written whole, and the fields its environment's valueFrom
// answers too, which are the runtime's to give.
type Pod struct {
	Labels, Annotations map[string]string
	// Field is the value of a fieldRef (metadata.name, status.podIP, …)
	// other than the whole labels and annotations.
	Field func(path string) (string, error)
	// Resource is the value of container c's resourceFieldRef; false
	// when c sets none and nothing stands in for it.
	Resource func(c *corev1.Container, ref *corev1.ResourceFieldSelector) (value string, ok bool, err error)
}

// APIData reports a volume type that projects the API's data (ConfigMaps,
// Secrets, tokens, the downward API): the kubelet always mounts those
// read-only, whatever the mount says, so an app cannot change what the
// next container restart reads, and keeps them current.
func APIData(v *corev1.Volume) bool {
	return v.ConfigMap != nil || v.Secret != nil || v.Projected != nil || v.DownwardAPI != nil
}

// PayloadOf is what the kubelet would write into volume v of a pod of
// spec, of type configMap, secret, projected or downwardAPI: every key,
// or the items asked with their paths and modes; later projected sources
// overwrite earlier ones at the same path, as on Kubernetes. A volume
// that holds no API data (emptyDir) has no payload.
func PayloadOf(ctx context.Context, src Sources, pod Pod, spec *corev1.PodSpec, v *corev1.Volume) (Payload, error) {
	switch {
	case v.ConfigMap != nil:
		s := v.ConfigMap
		return keyedSource(ctx, src.ConfigMap, "configmap", s.Name, s.Items, ptr.Deref(s.DefaultMode, defaultVolumeMode), s.Optional)
	case v.Secret != nil:
		s := v.Secret
		return keyedSource(ctx, src.Secret, "secret", s.SecretName, s.Items, ptr.Deref(s.DefaultMode, defaultVolumeMode), s.Optional)
	case v.DownwardAPI != nil:
		return downwardPayload(pod, spec, v.DownwardAPI.Items, ptr.Deref(v.DownwardAPI.DefaultMode, defaultVolumeMode))
	case v.Projected != nil:
		return projectedPayload(ctx, src, pod, spec, v.Projected)
	}
	return nil, nil
}

// keyedSource is the payload of a configMap or secret source: the object
// read with get, a missing optional one as no data.
func keyedSource(ctx context.Context, get func(context.Context, string) (map[string][]byte, error),
	kind, name string, items []corev1.KeyToPath, mode int32, optional *bool) (Payload, error) {
	data, err := get(ctx, name)
	if data, err = skipMissing(data, err, ptr.Deref(optional, false)); err != nil {
		return nil, fmt.Errorf("%s %q: %w", kind, name, err)
	}
	return keyedPayload(kind, data, items, mode, ptr.Deref(optional, false))
}

// skipMissing turns a missing optional object into no data, as the
// kubelet mounts an empty volume for it.
func skipMissing(data map[string][]byte, err error, optional bool) (map[string][]byte, error) {
	if apierrors.IsNotFound(err) && optional {
		return nil, nil
	}
	return data, err
}

func projectedPayload(ctx context.Context, src Sources, pod Pod, spec *corev1.PodSpec, p *corev1.ProjectedVolumeSource) (Payload, error) {
	mode := ptr.Deref(p.DefaultMode, defaultVolumeMode)
	out := Payload{}
	for i, s := range p.Sources {
		var part Payload
		var err error
		switch {
		case s.ConfigMap != nil:
			part, err = keyedSource(ctx, src.ConfigMap, "configmap", s.ConfigMap.Name, s.ConfigMap.Items, mode, s.ConfigMap.Optional)
		case s.Secret != nil:
			part, err = keyedSource(ctx, src.Secret, "secret", s.Secret.Name, s.Secret.Items, mode, s.Secret.Optional)
		case s.DownwardAPI != nil:
			part, err = downwardPayload(pod, spec, s.DownwardAPI.Items, mode)
		case s.ServiceAccountToken != nil:
			t := s.ServiceAccountToken
			var token []byte
			if token, err = src.Token(ctx, t.Audience, ptr.Deref(t.ExpirationSeconds, defaultTokenExpiration)); err == nil {
				part = Payload{t.Path: {Data: token, Mode: os.FileMode(mode) & os.ModePerm}}
			}
		default:
			err = fmt.Errorf("this projection (clusterTrustBundle?) is not supported by knit dev")
		}
		if err != nil {
			return nil, fmt.Errorf("sources[%d]: %w", i, err)
		}
		maps.Copy(out, part)
	}
	return out, nil
}

// keyedPayload is MakePayload of the kubelet's configmap and secret
// volumes: every key of data at its own name with defaultMode, or with
// items only those keys, each at its path with its mode; an item naming a
// missing key fails the volume unless the source is optional.
func keyedPayload(kind string, data map[string][]byte, items []corev1.KeyToPath, defaultMode int32, optional bool) (Payload, error) {
	out := Payload{}
	if len(items) == 0 {
		for k, v := range data {
			out[k] = File{Data: v, Mode: os.FileMode(defaultMode) & os.ModePerm}
		}
		return out, nil
	}
	for _, item := range items {
		v, ok := data[item.Key]
		if !ok {
			if optional {
				continue
			}
			return nil, fmt.Errorf("%s references non-existent key: %s", kind, item.Key)
		}
		out[item.Path] = File{Data: v, Mode: os.FileMode(ptr.Deref(item.Mode, defaultMode)) & os.ModePerm}
	}
	return out, nil
}

// downwardPayload writes the downward API's fields as the kubelet does:
// labels and annotations one key="value" a line, sorted.
func downwardPayload(pod Pod, spec *corev1.PodSpec, items []corev1.DownwardAPIVolumeFile, defaultMode int32) (Payload, error) {
	out := Payload{}
	for _, item := range items {
		var value string
		var err error
		switch {
		case item.FieldRef != nil && item.FieldRef.FieldPath == "metadata.labels":
			value = formatMap(pod.Labels)
		case item.FieldRef != nil && item.FieldRef.FieldPath == "metadata.annotations":
			value = formatMap(pod.Annotations)
		case item.FieldRef != nil:
			value, err = pod.Field(item.FieldRef.FieldPath)
		case item.ResourceFieldRef != nil:
			value, err = volumeResourceField(pod, spec, item.ResourceFieldRef)
		}
		if err != nil {
			return nil, fmt.Errorf("downwardAPI %s: %w", item.Path, err)
		}
		out[item.Path] = File{Data: []byte(value), Mode: os.FileMode(ptr.Deref(item.Mode, defaultMode)) & os.ModePerm}
	}
	return out, nil
}

func volumeResourceField(pod Pod, spec *corev1.PodSpec, ref *corev1.ResourceFieldSelector) (string, error) {
	i := slices.IndexFunc(spec.Containers, func(c corev1.Container) bool { return c.Name == ref.ContainerName })
	if i < 0 {
		return "", fmt.Errorf("resourceFieldRef: no container %q", ref.ContainerName)
	}
	v, ok, err := pod.Resource(&spec.Containers[i], ref)
	if err == nil && !ok {
		err = fmt.Errorf("resourceFieldRef %q: container %s sets none, and knit dev has no node allocatable to stand in", ref.Resource, ref.ContainerName)
	}
	return v, err
}

// formatMap is the kubelet's fieldpath.FormatMap.
func formatMap(m map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "%s=%q\n", k, m[k])
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// checkPath refuses a file path (an item's, a subPath) that would land
// outside its volume: absolute, or with a ".." element. The API server
// validates items the same way; this is the kubelet's second look before
// writing as root.
func checkPath(p string) error {
	if p == "" || filepath.IsAbs(p) {
		return fmt.Errorf("path %q must be relative", p)
	}
	if slices.Contains(strings.Split(filepath.ToSlash(p), "/"), "..") {
		return fmt.Errorf("path %q must not contain '..'", p)
	}
	if strings.HasPrefix(p, "..") {
		return fmt.Errorf("path %q must not start with '..': the volume's own entries do", p)
	}
	return nil
}

// write writes the files into dir, which exists: parents 0755, each file
// with its mode exactly (not masked by the umask).
func (p Payload) write(dir string) error {
	for _, name := range slices.Sorted(maps.Keys(p)) {
		if err := checkPath(name); err != nil {
			return err
		}
		f := p[name]
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, f.Data, f.Mode); err != nil {
			return err
		}
		if err := os.Chmod(path, f.Mode); err != nil {
			return err
		}
	}
	return nil
}
