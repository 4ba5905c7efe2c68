package runtime

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/local/view"
)

// loopback is every replica's IP in the shared network.
const loopback = "127.0.0.1"

// podIdentity is what a replica's environment may reveal about the pod it
// stands in for: HOSTNAME and the downward API.
type podIdentity struct {
	Name, Namespace     string
	UID                 types.UID
	Labels, Annotations map[string]string
	ServiceAccountName  string
	NodeName            string
	// IP is the replica's address, HostIP this machine's as the replica
	// reaches it: 127.0.0.1 both in the shared network.
	IP, HostIP string
}

// envList is an environment under construction: later values of a name
// replace earlier ones, in the place of the first.
type envList struct {
	names  []string
	values map[string]string
}

func (e *envList) set(name, value string) {
	if e.values == nil {
		e.values = map[string]string{}
	}
	if _, ok := e.values[name]; !ok {
		e.names = append(e.names, name)
	}
	e.values[name] = value
}

func (e *envList) lookup(name string) (string, bool) {
	v, ok := e.values[name]
	return v, ok
}

// environ is the list in exec's NAME=value form.
func (e *envList) environ() []string {
	out := make([]string, 0, len(e.names))
	for _, n := range e.names {
		out = append(out, n+"="+e.values[n])
	}
	return out
}

// containerEnv builds a container's environment as the kubelet does:
// envFrom sources in order, then env in order, each value's $(VAR)
// expanded against the variables before it. Values that are exactly a
// declared containerPort become the replica's loopback port. The result
// also serves to expand command and args.
func containerEnv(ctx context.Context, reader client.Reader, pod podIdentity, c *corev1.Container, ports portMap) (*envList, error) {
	env := &envList{}
	for _, from := range c.EnvFrom {
		data, err := envFromData(ctx, reader, pod.Namespace, from)
		if err != nil {
			return nil, err
		}
		for _, k := range slices.Sorted(maps.Keys(data)) {
			env.set(from.Prefix+k, ports.rewrite(data[k]))
		}
	}
	for _, v := range c.Env {
		value := v.Value
		if v.ValueFrom != nil {
			var ok bool
			var err error
			if value, ok, err = valueFrom(ctx, reader, pod, c, v.ValueFrom); err != nil {
				return nil, fmt.Errorf("env %s: %w", v.Name, err)
			} else if !ok {
				continue
			}
		}
		env.set(v.Name, expand(ports.rewrite(value), env.lookup))
	}
	return env, nil
}

// processEnv is what the process gets: knit dev's own variables named in
// host (standing in for the image's ENV), HOSTNAME, in the shared network
// HOST=127.0.0.1 (see NetworkShared), then the container's.
func processEnv(host []string, pod podIdentity, net *podNetwork, container *envList) []string {
	env := &envList{}
	for _, name := range host {
		if v, ok := os.LookupEnv(name); ok {
			env.set(name, v)
		}
	}
	env.set("HOSTNAME", view.Hostname(pod.Name))
	if net == nil || net.ns == nil {
		env.set("HOST", loopback)
	}
	for _, n := range container.names {
		env.set(n, container.values[n])
	}
	return env.environ()
}

func envFromData(ctx context.Context, reader client.Reader, ns string, from corev1.EnvFromSource) (map[string]string, error) {
	switch {
	case from.ConfigMapRef != nil:
		var cm corev1.ConfigMap
		err := reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: from.ConfigMapRef.Name}, &cm)
		if apierrors.IsNotFound(err) && ptrTrue(from.ConfigMapRef.Optional) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("envFrom: configmap %q: %w", from.ConfigMapRef.Name, err)
		}
		return cm.Data, nil
	case from.SecretRef != nil:
		var s corev1.Secret
		err := reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: from.SecretRef.Name}, &s)
		if apierrors.IsNotFound(err) && ptrTrue(from.SecretRef.Optional) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("envFrom: secret %q: %w", from.SecretRef.Name, err)
		}
		data := make(map[string]string, len(s.Data))
		for k, v := range s.Data {
			data[k] = string(v)
		}
		return data, nil
	}
	return nil, nil
}

// valueFrom resolves one env valueFrom; ok is false when an optional
// source is missing and the variable is left out, as Kubernetes does.
func valueFrom(ctx context.Context, reader client.Reader, pod podIdentity, c *corev1.Container, src *corev1.EnvVarSource) (string, bool, error) {
	switch {
	case src.FieldRef != nil:
		v, err := podField(pod, src.FieldRef.FieldPath)
		return v, err == nil, err
	case src.ResourceFieldRef != nil:
		return resourceField(c, src.ResourceFieldRef)
	case src.ConfigMapKeyRef != nil:
		ref := src.ConfigMapKeyRef
		var cm corev1.ConfigMap
		if err := reader.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: ref.Name}, &cm); err != nil {
			if apierrors.IsNotFound(err) && ptrTrue(ref.Optional) {
				return "", false, nil
			}
			return "", false, fmt.Errorf("configmap %q: %w", ref.Name, err)
		}
		v, ok := cm.Data[ref.Key]
		if !ok && !ptrTrue(ref.Optional) {
			return "", false, fmt.Errorf("couldn't find key %s in ConfigMap %s/%s", ref.Key, pod.Namespace, ref.Name)
		}
		return v, ok, nil
	case src.SecretKeyRef != nil:
		ref := src.SecretKeyRef
		var s corev1.Secret
		if err := reader.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: ref.Name}, &s); err != nil {
			if apierrors.IsNotFound(err) && ptrTrue(ref.Optional) {
				return "", false, nil
			}
			return "", false, fmt.Errorf("secret %q: %w", ref.Name, err)
		}
		v, ok := s.Data[ref.Key]
		if !ok && !ptrTrue(ref.Optional) {
			return "", false, fmt.Errorf("couldn't find key %s in Secret %s/%s", ref.Key, pod.Namespace, ref.Name)
		}
		return string(v), ok, nil
	}
	return "", false, fmt.Errorf("unsupported valueFrom")
}

// podField is the downward API's fieldRef for a replica: its own names
// and addresses (127.0.0.1 for every IP in the shared network).
func podField(pod podIdentity, path string) (string, error) {
	if key, ok := subscript(path, "metadata.labels"); ok {
		return pod.Labels[key], nil
	}
	if key, ok := subscript(path, "metadata.annotations"); ok {
		return pod.Annotations[key], nil
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.NodeName, nil
	case "spec.serviceAccountName":
		return pod.ServiceAccountName, nil
	case "status.podIP", "status.podIPs":
		return cmp.Or(pod.IP, loopback), nil
	case "status.hostIP", "status.hostIPs":
		return cmp.Or(pod.HostIP, loopback), nil
	}
	return "", fmt.Errorf("fieldRef %q is not supported by knit dev", path)
}

// subscript parses `prefix['key']`.
func subscript(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix+"['")
	if !ok || !strings.HasSuffix(rest, "']") {
		return "", false
	}
	return strings.TrimSuffix(rest, "']"), true
}

// resourceField is the downward API's resourceFieldRef. An unset CPU limit
// is this machine's CPU count (the node's allocatable, in Kubernetes); an
// unset memory or storage limit leaves the variable out, because there is
// no allocatable to report and 0 would read as "no memory".
func resourceField(c *corev1.Container, ref *corev1.ResourceFieldSelector) (string, bool, error) {
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if !ok || (kind != "limits" && kind != "requests") {
		return "", false, fmt.Errorf("resourceFieldRef %q is not supported", ref.Resource)
	}
	list := c.Resources.Limits
	if kind == "requests" {
		list = c.Resources.Requests
	}
	q, set := list[corev1.ResourceName(name)]
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	if name == string(corev1.ResourceCPU) {
		if !set && kind == "limits" {
			q = *resource.NewQuantity(int64(goruntime.NumCPU()), resource.DecimalSI)
		}
		return strconv.FormatInt(int64(math.Ceil(float64(q.MilliValue())/float64(divisor.MilliValue()))), 10), true, nil
	}
	if !set && kind == "limits" {
		return "", false, nil
	}
	return strconv.FormatInt(int64(math.Ceil(float64(q.Value())/float64(divisor.Value()))), 10), true, nil
}

func ptrTrue(b *bool) bool { return b != nil && *b }
