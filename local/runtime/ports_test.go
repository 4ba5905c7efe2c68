package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/knitops/knit/local/netns"
)

// sequentialPorts hands out 40000, 40001, … so tests know the mapping.
func sequentialPorts() func() (int32, error) {
	next := int32(40000)
	return func() (int32, error) { next++; return next - 1, nil }
}

// revisionPod is the pod of a knit revision: the app and the queue-proxy.
func revisionPod() *corev1.PodSpec {
	return &corev1.PodSpec{Containers: []corev1.Container{
		{Name: "user-container", Ports: []corev1.ContainerPort{{Name: "user-port", ContainerPort: 8080}}},
		{Name: "queue-proxy", Ports: []corev1.ContainerPort{
			{Name: "http", ContainerPort: 8012}, {Name: "http-autometric", ContainerPort: 9091},
		}},
	}}
}

func TestAllocatePorts(t *testing.T) {
	spec := revisionPod()
	spec.Containers[1].Ports = append(spec.Containers[1].Ports, corev1.ContainerPort{Name: "user-port", ContainerPort: 8080, Protocol: corev1.ProtocolUDP})
	m, err := allocatePorts(spec, sequentialPorts())
	if err != nil {
		t.Fatal(err)
	}
	want := portMap{
		byNumber: map[int32]int32{8080: 40000, 8012: 40001, 9091: 40002},
		byName:   map[string]int32{"user-port": 40000, "http": 40001, "http-autometric": 40002},
	}
	if diff := cmp.Diff(want, m, cmp.AllowUnexported(portMap{})); diff != "" {
		t.Errorf("ports (-want +got):\n%s", diff)
	}
}

// In a network of its own a replica listens where its pod would: PORT
// stays 8080, so an app hard-coding :8080 is reached, and an environment
// value naming a declared port is left as written.
func TestAllocatePortsIsolatedKeepsDeclared(t *testing.T) {
	m, err := allocatePorts(revisionPod(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := portMap{
		byNumber: map[int32]int32{8080: 8080, 8012: 8012, 9091: 9091},
		byName:   map[string]int32{"user-port": 8080, "http": 8012, "http-autometric": 9091},
	}
	if diff := cmp.Diff(want, m, cmp.AllowUnexported(portMap{})); diff != "" {
		t.Errorf("ports (-want +got):\n%s", diff)
	}
	if got := m.rewrite("8080"); got != "8080" {
		t.Errorf("rewrite(8080) = %s, want 8080", got)
	}
}

// The kernel may hand a released port out again: a replica's ports stay
// distinct whatever free returns, and a free that never finds another
// fails the replica's start instead of starting it on one port twice.
func TestAllocatePortsDistinctWhenFreeRepeats(t *testing.T) {
	repeating := func(ports ...int32) func() (int32, error) {
		return func() (int32, error) {
			p := ports[0]
			if len(ports) > 1 {
				ports = ports[1:]
			}
			return p, nil
		}
	}
	m, err := allocatePorts(revisionPod(), repeating(40000, 40000, 40000, 40001, 40001, 40002))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[int32]int32{8080: 40000, 8012: 40001, 9091: 40002}, m.byNumber); diff != "" {
		t.Errorf("ports (-want +got):\n%s", diff)
	}
	if _, err := allocatePorts(revisionPod(), repeating(40000)); err == nil || !strings.Contains(err.Error(), "distinct") {
		t.Errorf("a free that repeats one port: err = %v, want a refusal", err)
	}
}

// A port the kernel hands out again while a live replica holds it
// unbound (it was given, not yet listened on) is skipped: two replicas
// starting together once shared 36503.
func TestUnassignedPortSkipsLiveReplicas(t *testing.T) {
	live, _ := allocatePorts(revisionPod(), sequentialPorts()) // 40000, 40001, 40002
	deployments := map[types.NamespacedName]*deploymentState{
		{Namespace: "ns", Name: "a"}: {replicas: []*replica{{ports: live}}},
	}
	again := []int32{40001, 40002, 40003}
	free := func() (int32, error) { p := again[0]; again = again[1:]; return p, nil }
	got, err := distinctPort(free, assignedPorts(deployments))
	if err != nil || got != 40003 {
		t.Errorf("port = %d (%v), want 40003: 40001 and 40002 belong to a live replica", got, err)
	}
}

func TestPortResolveAndRewrite(t *testing.T) {
	m, _ := allocatePorts(revisionPod(), sequentialPorts())
	resolves := []struct {
		ref    intstr.IntOrString
		want   int32
		wantOK bool
	}{
		{intstr.FromInt32(8012), 40001, true},
		{intstr.FromString("http"), 40001, true},
		{intstr.FromString("user-port"), 40000, true},
		{intstr.FromInt32(7000), 7000, true}, // undeclared numbers pass through
		{intstr.FromString("nope"), 0, false},
		{intstr.FromInt32(0), 0, false},
	}
	for _, tc := range resolves {
		got, ok := m.resolve(tc.ref)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("resolve(%s) = %d, %v; want %d, %v", tc.ref.String(), got, ok, tc.want, tc.wantOK)
		}
	}
	rewrites := map[string]string{
		"8080": "40000", "8012": "40001", "9091": "40002",
		"8081": "8081", "08080": "08080", "+8080": "+8080", ":8080": ":8080", "hello": "hello", "": "",
	}
	for in, want := range rewrites {
		if got := m.rewrite(in); got != want {
			t.Errorf("rewrite(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExpand(t *testing.T) {
	vars := map[string]string{"PORT": "40000", "HOST": "127.0.0.1", "EMPTY": ""}
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	for in, want := range map[string]string{
		"":                     "",
		"plain":                "plain",
		"$(PORT)":              "40000",
		"$(HOST):$(PORT)":      "127.0.0.1:40000",
		"x$(EMPTY)y":           "xy",
		"$(MISSING)":           "$(MISSING)",
		"$$(PORT)":             "$(PORT)",
		"$$$(PORT)":            "$40000",
		"$(PORT":               "$(PORT",
		"$PORT":                "$PORT",
		"cost: 5$":             "cost: 5$",
		"--addr=:$(PORT) $(X)": "--addr=:40000 $(X)",
	} {
		if got := expand(in, lookup); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestContainerEnv(t *testing.T) {
	reader := fake.NewClientBuilder().WithObjects(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "settings"},
			Data: map[string]string{"MODE": "dev", "LISTEN": "8080"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "creds"},
			Data: map[string][]byte{"TOKEN": []byte("s3cret")}},
	).Build()
	pod := podIdentity{Name: "hello-00001-deployment-abc-x2x7z", Namespace: "ns", UID: "uid-1",
		Labels: map[string]string{"app": "hello"}, ServiceAccountName: "default", NodeName: "laptop"}
	ports, _ := allocatePorts(revisionPod(), sequentialPorts())

	c := &corev1.Container{
		Name: "queue-proxy",
		EnvFrom: []corev1.EnvFromSource{
			{Prefix: "CFG_", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}},
			{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}}},
			{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}, Optional: ptr.To(true)}},
		},
		Env: []corev1.EnvVar{
			{Name: "USER_PORT", Value: "8080"},
			{Name: "QUEUE_SERVING_PORT", Value: "8012"},
			{Name: "ADDR", Value: "$(SERVING_POD_IP):$(USER_PORT)"}, // not yet defined: stays
			{Name: "SERVING_POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
			{Name: "SERVING_POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "APP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['app']"}}},
			{Name: "URL", Value: "http://$(SERVING_POD_IP):$(USER_PORT)/$(CFG_MODE)"},
			{Name: "ESCAPED", Value: "$$(USER_PORT)"},
			{Name: "MODE_AGAIN", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "MODE"}}},
			{Name: "SKIPPED", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "NOPE", Optional: ptr.To(true)}}},
			{Name: "TOKEN", Value: "override-$(TOKEN)"},
		},
	}
	env, err := containerEnv(context.Background(), reader, pod, c, ports)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"CFG_LISTEN=40000", // envFrom values are rewritten too, but not expanded
		"CFG_MODE=dev",
		"TOKEN=override-s3cret",
		"USER_PORT=40000",
		"QUEUE_SERVING_PORT=40001",
		"ADDR=$(SERVING_POD_IP):40000",
		"SERVING_POD_IP=127.0.0.1",
		"SERVING_POD=hello-00001-deployment-abc-x2x7z",
		"APP=hello",
		"URL=http://127.0.0.1:40000/dev",
		"ESCAPED=$(USER_PORT)",
		"MODE_AGAIN=dev",
	}
	if diff := cmp.Diff(want, env.environ()); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}

	t.Setenv("PATH", "/usr/bin:/bin")
	t.Setenv("KUBECONFIG", "/secret/kubeconfig")
	got := processEnv([]string{"PATH", "KUBECONFIG_NOT_LISTED"}, pod, sharedNetwork, env)
	if got[0] != "PATH=/usr/bin:/bin" || got[1] != "HOSTNAME="+pod.Name || got[2] != "HOST=127.0.0.1" || len(got) != 3+len(want) {
		t.Errorf("process env = %q; want PATH, HOSTNAME, HOST (the shared network's bind hint), then the container's", got)
	}
	isolated := &podNetwork{ip: "169.254.64.2", host: "169.254.64.1", ns: &netns.Namespace{}}
	if got := processEnv(nil, pod, isolated, env); got[0] != "HOSTNAME="+pod.Name || len(got) != 1+len(want) {
		t.Errorf("isolated process env = %q; want HOSTNAME, then the container's: no HOST, the app may bind anything", got)
	}

	pod.IP, pod.HostIP = isolated.ip, isolated.host
	for path, want := range map[string]string{"status.podIP": "169.254.64.2", "status.podIPs": "169.254.64.2", "status.hostIP": "169.254.64.1"} {
		if got, err := podField(pod, path); err != nil || got != want {
			t.Errorf("isolated replica's %s = %q, %v; want %s", path, got, err, want)
		}
	}
}

func TestContainerEnvMissingSource(t *testing.T) {
	reader := fake.NewClientBuilder().Build()
	for name, c := range map[string]*corev1.Container{
		`envFrom: configmap "settings"`: {EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}}},
		`env TOKEN: secret "creds"`: {Env: []corev1.EnvVar{{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "TOKEN"}}}}},
	} {
		_, err := containerEnv(context.Background(), reader, podIdentity{Namespace: "ns"}, c, portMap{})
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("error = %v, want one starting %q", err, name)
		}
	}
}
