package runtime

import (
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

// volumeFile is one file of a volume as the kubelet writes it: content
// and permission bits.
type volumeFile struct {
	data []byte
	mode os.FileMode
}

// payload is a volume's files by path relative to the volume's root.
type payload map[string]volumeFile

// volumeSources fetches what a volume projects. In a replica it is the API
// server (apiVolumeSources); in table tests, a map. A missing object is an
// error apierrors.IsNotFound recognises, so that optional sources can be
// skipped as the kubelet skips them.
type volumeSources interface {
	configMap(ctx context.Context, name string) (map[string][]byte, error)
	secret(ctx context.Context, name string) (map[string][]byte, error)
	// token is a service-account token of the pod's service account for
	// audience ("" means the API server's own) lasting expirationSeconds.
	token(ctx context.Context, audience string, expirationSeconds int64) ([]byte, error)
}

// apiData is a volume type that projects the API's data (ConfigMaps,
// Secrets, tokens, the downward API): the kubelet always mounts those
// read-only, whatever the mount says, so an app cannot change what the
// next container restart reads.
func apiData(v *corev1.Volume) bool {
	return v.ConfigMap != nil || v.Secret != nil || v.Projected != nil || v.DownwardAPI != nil
}

// volumePayload is what the kubelet would write into a volume of type
// configMap, secret, projected or downwardAPI: every key, or the items
// asked with their paths and modes; later projected sources overwrite
// earlier ones at the same path, as on Kubernetes. A volume that holds no
// API data (emptyDir) has no payload.
func volumePayload(ctx context.Context, src volumeSources, pod podIdentity, spec *corev1.PodSpec, v *corev1.Volume) (payload, error) {
	switch {
	case v.ConfigMap != nil:
		s := v.ConfigMap
		return keyedSource(ctx, src.configMap, "configmap", s.Name, s.Items, ptr.Deref(s.DefaultMode, defaultVolumeMode), s.Optional)
	case v.Secret != nil:
		s := v.Secret
		return keyedSource(ctx, src.secret, "secret", s.SecretName, s.Items, ptr.Deref(s.DefaultMode, defaultVolumeMode), s.Optional)
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
	kind, name string, items []corev1.KeyToPath, mode int32, optional *bool) (payload, error) {
	data, err := get(ctx, name)
	if data, err = skipMissing(data, err, ptrTrue(optional)); err != nil {
		return nil, fmt.Errorf("%s %q: %w", kind, name, err)
	}
	return keyedPayload(kind, data, items, mode, ptrTrue(optional))
}

// skipMissing turns a missing optional object into no data, as the
// kubelet mounts an empty volume for it.
func skipMissing(data map[string][]byte, err error, optional bool) (map[string][]byte, error) {
	if apierrors.IsNotFound(err) && optional {
		return nil, nil
	}
	return data, err
}

func projectedPayload(ctx context.Context, src volumeSources, pod podIdentity, spec *corev1.PodSpec, p *corev1.ProjectedVolumeSource) (payload, error) {
	mode := ptr.Deref(p.DefaultMode, defaultVolumeMode)
	out := payload{}
	for i, s := range p.Sources {
		var part payload
		var err error
		switch {
		case s.ConfigMap != nil:
			part, err = keyedSource(ctx, src.configMap, "configmap", s.ConfigMap.Name, s.ConfigMap.Items, mode, s.ConfigMap.Optional)
		case s.Secret != nil:
			part, err = keyedSource(ctx, src.secret, "secret", s.Secret.Name, s.Secret.Items, mode, s.Secret.Optional)
		case s.DownwardAPI != nil:
			part, err = downwardPayload(pod, spec, s.DownwardAPI.Items, mode)
		case s.ServiceAccountToken != nil:
			t := s.ServiceAccountToken
			var token []byte
			if token, err = src.token(ctx, t.Audience, ptr.Deref(t.ExpirationSeconds, defaultTokenExpiration)); err == nil {
				part = payload{t.Path: {data: token, mode: os.FileMode(mode) & os.ModePerm}}
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
func keyedPayload(kind string, data map[string][]byte, items []corev1.KeyToPath, defaultMode int32, optional bool) (payload, error) {
	out := payload{}
	if len(items) == 0 {
		for k, v := range data {
			out[k] = volumeFile{data: v, mode: os.FileMode(defaultMode) & os.ModePerm}
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
		out[item.Path] = volumeFile{data: v, mode: os.FileMode(ptr.Deref(item.Mode, defaultMode)) & os.ModePerm}
	}
	return out, nil
}

// downwardPayload writes the downward API's fields as the kubelet does:
// labels and annotations one key="value" a line, sorted.
func downwardPayload(pod podIdentity, spec *corev1.PodSpec, items []corev1.DownwardAPIVolumeFile, defaultMode int32) (payload, error) {
	out := payload{}
	for _, item := range items {
		var value string
		var err error
		switch {
		case item.FieldRef != nil && item.FieldRef.FieldPath == "metadata.labels":
			value = formatMap(pod.Labels)
		case item.FieldRef != nil && item.FieldRef.FieldPath == "metadata.annotations":
			value = formatMap(pod.Annotations)
		case item.FieldRef != nil:
			value, err = podField(pod, item.FieldRef.FieldPath)
		case item.ResourceFieldRef != nil:
			value, err = volumeResourceField(spec, item.ResourceFieldRef)
		}
		if err != nil {
			return nil, fmt.Errorf("downwardAPI %s: %w", item.Path, err)
		}
		out[item.Path] = volumeFile{data: []byte(value), mode: os.FileMode(ptr.Deref(item.Mode, defaultMode)) & os.ModePerm}
	}
	return out, nil
}

func volumeResourceField(spec *corev1.PodSpec, ref *corev1.ResourceFieldSelector) (string, error) {
	i := slices.IndexFunc(spec.Containers, func(c corev1.Container) bool { return c.Name == ref.ContainerName })
	if i < 0 {
		return "", fmt.Errorf("resourceFieldRef: no container %q", ref.ContainerName)
	}
	v, ok, err := resourceField(&spec.Containers[i], ref)
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

// checkVolumePath refuses a file path that would land outside its volume:
// absolute, or with a ".." element. The API server validates items the
// same way; this is the kubelet's second look before writing as root.
func checkVolumePath(p string) error {
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
func (p payload) write(dir string) error {
	for _, name := range slices.Sorted(maps.Keys(p)) {
		if err := checkVolumePath(name); err != nil {
			return err
		}
		f := p[name]
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, f.data, f.mode); err != nil {
			return err
		}
		if err := os.Chmod(path, f.mode); err != nil {
			return err
		}
	}
	return nil
}
